"""A variational autoencoder on scikit-learn's 8x8 digits: an ordinary PyTorch program.

    python examples/pytorch/vae_digits.py --epochs 10
    python -m torchlike examples/pytorch/vae_digits.py

The loss is the negative ELBO per image (Bernoulli reconstruction + KL to the unit Gaussian),
measured on held-out images before and after training.  The last line is machine-readable:
``initial_loss=<test loss before> final_loss=<test loss after> recon_error=<mean abs error>``.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch.utils.data import DataLoader, TensorDataset


class VAE(nn.Module):
    def __init__(self, in_features=64, hidden=128, latent=8):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(in_features, hidden), nn.ReLU())
        self.mu = nn.Linear(hidden, latent)
        self.logvar = nn.Linear(hidden, latent)
        self.decoder = nn.Sequential(
            nn.Linear(latent, hidden), nn.ReLU(), nn.Linear(hidden, in_features))

    def encode(self, x):
        h = self.encoder(x)
        return self.mu(h), self.logvar(h)

    def reparameterize(self, mu, logvar):
        if not self.training:
            return mu
        std = torch.exp(0.5 * logvar)
        return mu + torch.randn_like(std) * std

    def forward(self, x):
        mu, logvar = self.encode(x)
        return self.decoder(self.reparameterize(mu, logvar)), mu, logvar


def vae_loss(logits, x, mu, logvar):
    recon = F.binary_cross_entropy_with_logits(logits, x, reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return (recon + kld) / x.size(0)


@torch.no_grad()
def evaluate(model, x):
    model.eval()
    logits, mu, logvar = model(x)
    loss = vae_loss(logits, x, mu, logvar).item()
    error = (torch.sigmoid(logits) - x).abs().mean().item()
    return loss, error


def main():
    parser = argparse.ArgumentParser(description="VAE on sklearn's digits")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--steps", type=int, default=None, help="stop each epoch after N batches")
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"

    data = torch.from_numpy(load_digits().data).float() / 16.0    # (1797, 64) in [0, 1]
    train, test = data[:1500], data[1500:].to(device)
    loader = DataLoader(TensorDataset(train), batch_size=args.batch_size, shuffle=True)

    model = VAE().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.9)

    initial_loss, _ = evaluate(model, test)
    print(f"before training: test_loss={initial_loss:.3f}")
    for epoch in range(args.epochs):
        model.train()
        total, batches = 0.0, 0
        for step, (x,) in enumerate(loader):
            if args.steps is not None and step >= args.steps:
                break
            x = x.to(device)
            logits, mu, logvar = model(x)
            loss = vae_loss(logits, x, mu, logvar)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
            batches += 1
        scheduler.step()
        test_loss, error = evaluate(model, test)
        print(f"epoch {epoch + 1}: train_loss={total / batches:.3f} test_loss={test_loss:.3f}")

    print(f"initial_loss={initial_loss:.4f} final_loss={test_loss:.4f} recon_error={error:.4f}")


if __name__ == "__main__":
    main()
