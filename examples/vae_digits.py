"""A variational autoencoder on scikit-learn's 8x8 digits, written with torch.distributions.

An ordinary PyTorch program; only the import names torchlike.  The encoder maps an image x to
the approximate posterior q(z | x) = Normal(mu, sigma) over an 8-dimensional code z; the decoder
maps a code to the logits of the pixels' likelihood p(x | z): a Bernoulli per pixel (the images
binarized at half intensity), or with --likelihood continuous-bernoulli a ContinuousBernoulli per
pixel that models the grey levels themselves.  Training maximizes the evidence lower bound

    ELBO(x) = E_q[log p(x | z)] - KL(q(z | x) || Normal(0, 1))   <=   log p(x)

estimated with one reparameterized draw ``z = q.rsample()`` per image, so its gradient flows
through the sample into the encoder; the KL term is the closed form ``kl_divergence(q, prior)``.
The held-out ELBO (nats per image, averaged over --eval-samples draws) is printed before and
after training.  --compile runs the whole training step (forward, rsample, log_prob, KL,
backward, Adam) as one compiled program; --save-reconstructions writes a PNG of held-out digits,
their reconstructions and digits decoded from codes drawn from the prior.

    python examples/vae_digits.py                              # 40 epochs, ~10 s of training
    python examples/vae_digits.py --compile --save-reconstructions runs/vae.png
    python examples/vae_digits.py --likelihood continuous-bernoulli

The last line is machine-readable:
``initial_elbo=<held-out ELBO before> final_elbo=<after> kl=<its KL term after>
recon_error=<mean absolute pixel error of the reconstructions>``.
"""
import argparse
import time

from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

import torchlike as torch
import torchlike.nn as nn
import torchlike.nn.functional as F
from torchlike.distributions import Bernoulli, ContinuousBernoulli, Normal, kl_divergence
from torchlike.utils.data import DataLoader, TensorDataset

LIKELIHOODS = {"bernoulli": Bernoulli, "continuous-bernoulli": ContinuousBernoulli}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--epochs", type=int, default=40, help="passes over the training set")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-3, help="Adam's learning rate")
    p.add_argument("--latent", type=int, default=8, help="size of the code z")
    p.add_argument("--hidden", type=int, default=128, help="width of the hidden layers")
    p.add_argument("--likelihood", choices=sorted(LIKELIHOODS), default="bernoulli",
                   help="p(x | z) per pixel: Bernoulli on binarized images, or "
                        "ContinuousBernoulli on the grey levels")
    p.add_argument("--eval-samples", type=int, default=10,
                   help="draws of z per held-out image when estimating the ELBO")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cpu", help="'cpu', 'cuda', 'tpu', ...")
    p.add_argument("--compile", action="store_true",
                   help="run the whole training step as one compiled program (torch.compile)")
    p.add_argument("--save-reconstructions", metavar="PATH", default=None,
                   help="write a PNG: held-out digits, their reconstructions, and digits "
                        "decoded from the prior (needs matplotlib)")
    return p.parse_args(argv)


class VAE(nn.Module):
    """q(z | x) = Normal(mu(x), sigma(x)) and the logits of p(x | z), both two-layer MLPs."""

    def __init__(self, likelihood, pixels=64, hidden=128, latent=8):
        super().__init__()
        self.likelihood, self.latent = likelihood, latent
        self.encoder = nn.Sequential(nn.Linear(pixels, hidden), nn.ReLU(),
                                     nn.Linear(hidden, 2 * latent))
        self.decoder = nn.Sequential(nn.Linear(latent, hidden), nn.ReLU(),
                                     nn.Linear(hidden, pixels))

    def posterior(self, x):
        """q(z | x): a Normal with batch shape (batch, latent)."""
        mu, pre_scale = self.encoder(x).chunk(2, dim=-1)
        return Normal(mu, F.softplus(pre_scale) + 1e-4)

    def decode(self, z):
        """p(x | z): one Bernoulli (or ContinuousBernoulli) per pixel."""
        return self.likelihood(logits=self.decoder(z))

    def elbo(self, x, samples=1):
        """The ELBO of each image (nats), a Monte Carlo estimate over `samples` draws of z, and
        its KL term (exact)."""
        q = self.posterior(x)
        prior = Normal(torch.zeros_like(q.loc), torch.ones_like(q.scale))
        z = q.rsample((samples,))                          # (samples, batch, latent)
        log_lik = self.decode(z).log_prob(x).sum(-1)       # sum over pixels: (samples, batch)
        kl = kl_divergence(q, prior).sum(-1)               # sum over the code: (batch,)
        return log_lik.mean(0) - kl, kl


def make_data(likelihood):
    """The digits as (N, 64) pixels in [0, 1] (binarized for a Bernoulli), split 80/20."""
    digits = load_digits()
    x_train, x_test = train_test_split(digits.data / 16.0, test_size=0.2, random_state=0,
                                       stratify=digits.target)
    x_train, x_test = (torch.tensor(x, dtype=torch.float32) for x in (x_train, x_test))
    if likelihood == "bernoulli":   # a Bernoulli's support is {0, 1}
        x_train, x_test = (x_train >= 0.5).float(), (x_test >= 0.5).float()
    return x_train, x_test


@torch.no_grad()
def evaluate(model, x, samples):
    """(mean held-out ELBO, mean KL term, mean absolute error of the reconstructions)."""
    model.eval()
    elbo, kl = model.elbo(x, samples)
    recon = model.decode(model.posterior(x).mean).mean   # decode the posterior mean
    return elbo.mean().item(), kl.mean().item(), (recon - x).abs().mean().item()


def make_train_step(model, optimizer):
    """One step of gradient ascent on the ELBO, a function of the batch so that torch.compile
    can take all of it (the draw of z included: each call draws fresh noise)."""
    def train_step(x):
        optimizer.zero_grad()
        elbo, _ = model.elbo(x)
        loss = -elbo.mean()        # the negative ELBO, nats per image
        loss.backward()
        optimizer.step()
        return loss
    return train_step


def save_reconstructions(model, x, path, n=10):
    """A PNG of three rows: n held-out digits, their reconstructions, n digits from the prior."""
    import matplotlib
    matplotlib.use("Agg")   # write the file; no display needed
    import matplotlib.pyplot as plt

    model.eval()
    with torch.no_grad():
        recon = model.decode(model.posterior(x[:n]).mean).mean
        prior = Normal(torch.zeros(model.latent, device=x.device), 1.0)
        dreamt = model.decode(prior.sample((n,))).mean
    rows = [("held-out", x[:n]), ("reconstructed", recon), ("from the prior", dreamt)]
    fig, axes = plt.subplots(len(rows), n, figsize=(n, 1.15 * len(rows)))
    for (title, images), row in zip(rows, axes):
        row[0].set_title(title, loc="left", fontsize=9)
        for image, ax in zip(images.cpu().numpy(), row):
            ax.imshow(image.reshape(8, 8), cmap="gray_r", vmin=0, vmax=1)
            ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None):
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    x_train, x_test = make_data(args.likelihood)
    x_test = x_test.to(device)
    loader = DataLoader(TensorDataset(x_train), batch_size=args.batch_size, shuffle=True,
                        drop_last=True)   # one batch shape: one compiled program
    print(f"digits: {len(x_train)} training and {len(x_test)} held-out images, "
          f"{args.likelihood} likelihood, {args.latent}-dimensional code, device {device}")

    model = VAE(LIKELIHOODS[args.likelihood], hidden=args.hidden, latent=args.latent).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    train_step = make_train_step(model, optimizer)
    if args.compile:
        train_step = torch.compile(train_step)

    initial_elbo, _, _ = evaluate(model, x_test, args.eval_samples)
    print(f"held-out ELBO before training: {initial_elbo:.2f} nats per image")
    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        model.train()
        losses = [train_step(x.to(device)).item() for (x,) in loader]
        if epoch % max(1, args.epochs // 5) == 0 or epoch == args.epochs:
            final_elbo, kl, error = evaluate(model, x_test, args.eval_samples)
            print(f"epoch {epoch:3d}/{args.epochs}: train -ELBO {sum(losses) / len(losses):.2f}, "
                  f"held-out ELBO {final_elbo:.2f} (KL {kl:.2f}) nats per image")
    seconds = time.perf_counter() - start

    print(f"held-out ELBO after training:  {final_elbo:.2f} nats per image "
          f"({final_elbo - initial_elbo:+.2f}), KL term {kl:.2f}, reconstruction error "
          f"{error:.3f} per pixel; {args.epochs} epochs in {seconds:.1f} s"
          f"{' (compiled step)' if args.compile else ''}")
    if args.save_reconstructions:
        save_reconstructions(model, x_test, args.save_reconstructions)
        print(f"reconstructions: {args.save_reconstructions}")
    print(f"initial_elbo={initial_elbo:.4f} final_elbo={final_elbo:.4f} kl={kl:.4f} "
          f"recon_error={error:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
