"""Helpers shared by the tests/test_compile_*.py files: counters reset around each test, a
comparison of nested results to float32 rounding, and small seeded training steps."""
import numpy as np
import pytest

import torchlike as tl
import torchlike.nn as nn
from torchlike import compiler

# float32 rounding of a differently fused program, amplified a little by a few optimizer steps
RTOL, ATOL = 2e-4, 2e-5


@pytest.fixture(autouse=True)
def fresh_counters():
    """torchlike.compiler's counters and programs start empty in each test (autouse where
    imported)."""
    compiler.reset()
    yield
    compiler.reset()


def as_numpy(x):
    return x.detach().numpy() if isinstance(x, tl.Tensor) else np.asarray(x)


def assert_same(a, b, path="", rtol=RTOL, atol=ATOL):
    """Nested dicts / lists of Tensors and Python values are equal (Tensors to tolerance)."""
    if isinstance(a, tl.Tensor) or isinstance(b, tl.Tensor):
        assert isinstance(a, tl.Tensor) and isinstance(b, tl.Tensor), path
        assert a.shape == b.shape and a.dtype == b.dtype, (path, a.shape, b.shape, a.dtype, b.dtype)
        np.testing.assert_allclose(as_numpy(a), as_numpy(b), rtol=rtol, atol=atol, err_msg=path)
    elif isinstance(a, dict):
        assert list(a) == list(b), path
        for k in a:
            assert_same(a[k], b[k], f"{path}.{k}", rtol, atol)
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{path}[{i}]", rtol, atol)
    elif isinstance(a, float):
        assert b == pytest.approx(a, rel=1e-6, abs=1e-12, nan_ok=True), path
    else:
        assert a == b, path


def loop_setup():
    tl.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    return model, tl.optim.SGD(model.parameters(), lr=0.1, momentum=0.9), tl.randn(6, 4)


def plain_step(model, opt):
    def step(x):
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()
        return loss
    return step


def mlp_step(dropout=0.0, make_opt=lambda p: tl.optim.SGD(p, lr=0.1)):
    tl.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(dropout), nn.ReLU(), nn.Linear(8, 1))
    opt = make_opt(model.parameters())
    return model, opt, plain_step(model, opt)


class Holder:
    pass
