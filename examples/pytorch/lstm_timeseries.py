"""Fit an LSTM to sine waves with L-BFGS and let it continue them: an ordinary PyTorch program,
written as PyTorch's time_sequence_prediction example writes one.

Each series is a sine wave of period 20 samples, shifted by a fixed phase (no random numbers
in the data; only the initial weights are drawn).  The model is two ``nn.LSTMCell`` layers and a
linear read-out, stepped through time in a Python loop; it learns to predict each next sample
from the samples so far.  Training is ``torch.optim.LBFGS`` on the whole training set in float64
(the closure runs the full sequence forward and backward once per call).  The test waves are
held out: the model reads them and then continues each for ``--future`` samples on its own
predictions.

    python examples/pytorch/lstm_timeseries.py --steps 4
    python -m torchlike examples/pytorch/lstm_timeseries.py

The last line is machine-readable: ``initial_loss=<train mse before> final_loss=<train mse
after> test_loss=<held-out mse, continuation included> evals=<closure calls>``.
"""
import argparse
import math

import torch
import torch.nn as nn


def sine_waves(count, length, period, device):
    """(count, length) float64 waves, each shifted by a fixed fraction of the period."""
    t = torch.arange(length, dtype=torch.float64, device=device)
    shift = torch.arange(count, dtype=torch.float64, device=device) * (period * 0.618)
    return torch.sin((t + shift[:, None]) * (2 * math.pi / period))


class Sequence(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.hidden = hidden
        self.lstm1 = nn.LSTMCell(1, hidden)
        self.lstm2 = nn.LSTMCell(hidden, hidden)
        self.linear = nn.Linear(hidden, 1)

    def forward(self, series, future=0):
        """One prediction per input sample (of the next one), then ``future`` more, each made
        from the previous prediction."""
        batch = series.size(0)
        h1 = torch.zeros(batch, self.hidden, dtype=series.dtype, device=series.device)
        c1, h2, c2 = torch.zeros_like(h1), torch.zeros_like(h1), torch.zeros_like(h1)
        outputs = []
        for sample in series.split(1, dim=1):
            h1, c1 = self.lstm1(sample, (h1, c1))
            h2, c2 = self.lstm2(h1, (h2, c2))
            output = self.linear(h2)
            outputs.append(output)
        for _ in range(future):
            h1, c1 = self.lstm1(output, (h1, c1))
            h2, c2 = self.lstm2(h1, (h2, c2))
            output = self.linear(h2)
            outputs.append(output)
        return torch.cat(outputs, dim=1)


def main():
    parser = argparse.ArgumentParser(description="LSTM sine-wave fit with torch.optim.LBFGS")
    parser.add_argument("--steps", type=int, default=4, help="optimizer.step(closure) calls")
    parser.add_argument("--max-iter", type=int, default=10, help="L-BFGS iterations per step")
    parser.add_argument("--length", type=int, default=100, help="samples per series")
    parser.add_argument("--series", type=int, default=24, help="training series")
    parser.add_argument("--future", type=int, default=20, help="samples the model continues")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"

    data = sine_waves(args.series + 4, args.length + args.future + 1, 20.0, device)
    train, test = data[4:, :args.length + 1], data[:4]
    inputs, targets = train[:, :-1], train[:, 1:]
    model = Sequence().double().to(device)
    criterion = nn.MSELoss()
    optimizer = torch.optim.LBFGS(model.parameters(), lr=1.0, max_iter=args.max_iter,
                                  line_search_fn="strong_wolfe")
    evals = 0

    def closure():
        nonlocal evals
        evals += 1
        optimizer.zero_grad()
        loss = criterion(model(inputs), targets)
        loss.backward()
        return loss

    with torch.no_grad():
        initial = criterion(model(inputs), targets).item()
    print(f"{args.series} series of {args.length} samples, initial mse={initial:.4f}")
    for step in range(args.steps):
        loss = optimizer.step(closure)
        print(f"step {step + 1}: mse={loss.item():.3e} evals={evals}")

    with torch.no_grad():
        final = criterion(model(inputs), targets).item()
        prediction = model(test[:, :args.length], future=args.future)
        test_loss = criterion(prediction, test[:, 1:]).item()
    print(f"initial_loss={initial:.6f} final_loss={final:.6f} test_loss={test_loss:.6f} "
          f"evals={evals}")


if __name__ == "__main__":
    main()
