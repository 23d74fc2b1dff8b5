"""Fit a damped oscillation to measurements with L-BFGS: an ordinary PyTorch program.

The data and the starting point are fixed (no random numbers anywhere), so every run takes
exactly the same path.  The model is ``y = a * exp(-d * t) * sin(w * t + p) + c``, fitted in
float64 with ``torch.optim.LBFGS`` and a strong-Wolfe line search.

    python examples/pytorch/lbfgs_fit.py --steps 5
    python -m torchlike examples/pytorch/lbfgs_fit.py

The last line is machine-readable: ``final_loss=<mean squared error> evals=<closure calls>
params=<a>,<d>,<w>,<p>,<c>`` with every number printed exactly (``repr`` of the float).
"""
import argparse

import torch
import torch.nn as nn


class DampedOscillation(nn.Module):
    def __init__(self):
        super().__init__()
        # A fixed starting guess, deliberately off: amplitude, damping, frequency, phase, offset.
        self.params = nn.Parameter(torch.tensor([1.0, 0.1, 2.5, 0.0, 0.0], dtype=torch.float64))

    def forward(self, t):
        a, d, w, p, c = self.params
        return a * torch.exp(-d * t) * torch.sin(w * t + p) + c


def measurements(device):
    """200 samples of a known oscillation plus a deterministic wiggle standing in for noise."""
    t = torch.linspace(0, 10, 200, dtype=torch.float64, device=device)
    clean = 2.0 * torch.exp(-0.3 * t) * torch.sin(3.0 * t + 0.5) + 0.2
    return t, clean + 0.05 * torch.sin(17.0 * t) * torch.cos(5.0 * t)


def main():
    parser = argparse.ArgumentParser(description="curve fit with torch.optim.LBFGS")
    parser.add_argument("--steps", type=int, default=5, help="optimizer.step(closure) calls")
    parser.add_argument("--max-iter", type=int, default=8, help="L-BFGS iterations per step")
    parser.add_argument("--seed", type=int, default=0, help="unused: the fit has no randomness")
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"

    t, y = measurements(device)
    model = DampedOscillation().to(device)
    print(f"parameters on {model.params.device}, data on {t.device}")
    optimizer = torch.optim.LBFGS(model.parameters(), lr=1.0, max_iter=args.max_iter,
                                  history_size=10, line_search_fn="strong_wolfe")
    evals = 0

    def closure():
        nonlocal evals
        evals += 1
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(t), y)
        loss.backward()
        return loss

    with torch.no_grad():
        print(f"initial mse={nn.functional.mse_loss(model(t), y).item():.6f}")
    for step in range(args.steps):
        loss = optimizer.step(closure)
        print(f"step {step + 1}: mse={loss.item():.3e} evals={evals}")

    with torch.no_grad():
        final = nn.functional.mse_loss(model(t), y).item()
    params = ",".join(repr(v) for v in model.params.tolist())
    print(f"final_loss={final!r} evals={evals} params={params}")


if __name__ == "__main__":
    main()
