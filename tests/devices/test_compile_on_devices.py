"""torchlike.compile keeps a step on its tensors' device (NOTE [ devices in a compiled step ])."""
import numpy as np
import pytest

import torchlike as tl
from torchlike import compiler, nn

DEVICE = "cuda:1"


def _setup():
    tl.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.Dropout(0.25), nn.ReLU(), nn.Linear(16, 3))
    model.to(DEVICE)
    opt = tl.optim.Adam(model.parameters(), lr=0.01)
    seen = []

    def step(x, y):
        x, y = x.to(DEVICE), y.to(DEVICE)   # a CPU batch, moved inside the step
        opt.zero_grad()
        out = model(x)
        seen.append((x.device, out.device))
        loss = nn.functional.cross_entropy(out, y)
        loss.backward()
        opt.step()
        return loss
    return model, step, seen


def test_a_step_on_a_gpu_compiles_and_equals_eager():
    tl.manual_seed(1)
    batches = [(tl.randn(8, 4), tl.randint(0, 3, (8,))) for _ in range(4)]
    runs = []
    for wrap in (lambda f: f, tl.compile):
        compiler.reset()
        model, step, seen = _setup()
        step = wrap(step)
        losses = [step(x, y) for x, y in batches]
        assert all(loss.device == tl.device(DEVICE) for loss in losses)
        assert all(p.device == tl.device(DEVICE) for p in model.parameters())
        assert set(seen) == {(tl.device(DEVICE), tl.device(DEVICE))}
        runs.append(([loss.item() for loss in losses],
                     [p.detach().cpu().numpy() for p in model.parameters()]))
    assert compiler.counters["compiles"] == 1 and compiler.counters["calls"] == 3
    np.testing.assert_allclose(runs[1][0], runs[0][0], rtol=1e-5)
    for eager, compiled in zip(runs[0][1], runs[1][1]):
        np.testing.assert_allclose(compiled, eager, rtol=1e-5, atol=1e-6)


def test_a_step_over_two_devices_raises_pytorchs_error():
    w = tl.ones(3, device=DEVICE)

    @tl.compile
    def step(x):
        return (w * x).sum()   # x stays on the CPU

    message = r"Expected all tensors to be on the same device, but found at least two devices"
    for _ in range(2):   # the eager first call, then the traced one
        with pytest.raises(RuntimeError, match=message):
            step(tl.ones(3))
