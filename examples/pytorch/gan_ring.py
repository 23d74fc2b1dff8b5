"""A GAN that learns a ring of six 2-D Gaussians: an ordinary PyTorch program.

    python examples/pytorch/gan_ring.py --steps 400
    python -m torchlike examples/pytorch/gan_ring.py

Generator and discriminator are small MLPs trained with the non-saturating loss.  Every 100
steps the program draws samples from the generator and reports the share that lands near one of
the six modes (within three standard deviations), how many modes receive at least 2% of them and
how far the samples are from the ring on average (also measured before training).  The last line
is machine-readable: ``final_loss_d=... final_loss_g=... quality=<share> modes=<count>
initial_ring_error=<mean distance before> ring_error=<mean distance after>``.
"""
import argparse
import math

import torch
import torch.nn as nn

MODES = 6
RADIUS = 2.0
STD = 0.1


def ring_centers():
    angles = torch.arange(MODES, dtype=torch.float32) * (2 * math.pi / MODES)
    return RADIUS * torch.stack([torch.cos(angles), torch.sin(angles)], dim=1)


def sample_ring(n, device):
    centers = ring_centers().to(device)
    which = torch.randint(0, MODES, (n,), device=device)
    return centers[which] + STD * torch.randn(n, 2, device=device)


def mlp(in_features, out_features, hidden=64):
    return nn.Sequential(
        nn.Linear(in_features, hidden), nn.LeakyReLU(0.2),
        nn.Linear(hidden, hidden), nn.LeakyReLU(0.2),
        nn.Linear(hidden, out_features),
    )


@torch.no_grad()
def mode_stats(samples):
    """(fraction of samples within 3 std of their nearest mode, number of modes with >= 2% of
    the samples, mean distance of a sample from the ring)."""
    distances = torch.cdist(samples, ring_centers().to(samples.device))
    nearest, which = distances.min(dim=1)
    good = nearest < 3 * STD
    counts = torch.bincount(which[good], minlength=MODES)
    ring_error = (samples.norm(dim=1) - RADIUS).abs().mean().item()
    return good.float().mean().item(), int((counts >= 0.02 * len(samples)).sum().item()), ring_error


def main():
    parser = argparse.ArgumentParser(description="GAN on a ring of 2-D Gaussians")
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--latent", type=int, default=4)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    torch.cuda.manual_seed_all(args.seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"

    generator = mlp(args.latent, 2).to(device)
    discriminator = mlp(2, 1).to(device)
    opt_g = torch.optim.Adam(generator.parameters(), lr=args.lr, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(discriminator.parameters(), lr=args.lr, betas=(0.5, 0.999))
    criterion = nn.BCEWithLogitsLoss()
    real_label = torch.ones(args.batch_size, 1, device=device)
    fake_label = torch.zeros(args.batch_size, 1, device=device)

    def evaluate():
        generator.eval()
        with torch.no_grad():
            samples = generator(torch.randn(2000, args.latent, device=device))
        generator.train()
        return mode_stats(samples)

    _, _, initial_ring_error = evaluate()
    print(f"before training: ring_error={initial_ring_error:.3f}")
    for step in range(1, args.steps + 1):
        # Discriminator: real samples -> 1, generated samples -> 0.
        real = sample_ring(args.batch_size, device)
        fake = generator(torch.randn(args.batch_size, args.latent, device=device))
        loss_d = (criterion(discriminator(real), real_label)
                  + criterion(discriminator(fake.detach()), fake_label))
        opt_d.zero_grad()
        loss_d.backward()
        opt_d.step()

        # Generator: make the discriminator call its samples real.
        loss_g = criterion(discriminator(fake), real_label)
        opt_g.zero_grad()
        loss_g.backward()
        opt_g.step()

        if step % 100 == 0 or step == args.steps:
            quality, modes, ring_error = evaluate()
            print(f"step {step}: loss_d={loss_d.item():.3f} loss_g={loss_g.item():.3f} "
                  f"quality={quality:.3f} modes={modes} ring_error={ring_error:.3f}")

    print(f"final_loss_d={loss_d.item():.4f} final_loss_g={loss_g.item():.4f} "
          f"quality={quality:.4f} modes={modes} initial_ring_error={initial_ring_error:.4f} "
          f"ring_error={ring_error:.4f}")


if __name__ == "__main__":
    main()
