"""Property tests: broadcasting of elementwise ops against NumPy (the oracle for shapes and
values), and the gradients broadcasting implies (each input's gradient is the output gradient
summed over the dimensions it was broadcast along)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import torchlike as tl

# name, torchlike function, numpy function, arity
OPS = [
    ("add", lambda a, b: a + b, np.add, 2),
    ("sub", tl.sub, np.subtract, 2),
    ("mul", lambda a, b: a * b, np.multiply, 2),
    ("maximum", tl.maximum, np.maximum, 2),
    ("atan2", tl.atan2, np.arctan2, 2),
    ("gt", lambda a, b: a > b, np.greater, 2),
    ("where", lambda a, b, c: tl.where(a > 0, b, c), lambda a, b, c: np.where(a > 0, b, c), 3),
    ("addcmul", tl.addcmul, lambda a, b, c: a + b * c, 3),
    ("lerp", tl.lerp, lambda a, b, w: a + w * (b - a), 3),
    ("clamp", lambda a, lo, hi: tl.clamp(a, lo, hi), lambda a, lo, hi: np.minimum(
        np.maximum(a, lo), hi), 3),
]

SETTINGS = settings(max_examples=25, deadline=None)


def _values(shape, seed):
    return np.random.default_rng(seed).uniform(-2, 2, shape).astype(np.float64)


@SETTINGS
@given(op=st.sampled_from(OPS), data=st.data())
def test_broadcast_values_and_shapes(op, data):
    name, fn, ref, arity = op
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=arity, max_dims=4,
                                                          max_side=3))
    arrays = [_values(s, i) for i, s in enumerate(shapes.input_shapes)]
    got = fn(*[tl.tensor(a) for a in arrays])
    want = ref(*arrays)
    assert tuple(got.shape) == want.shape == shapes.result_shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)


def _reduce_to(grad, shape):
    """The oracle for a broadcast input's gradient: sum over the dimensions broadcasting added
    or stretched."""
    lead = grad.ndim - len(shape)
    grad = grad.sum(axis=tuple(range(lead)))
    axes = tuple(d for d, n in enumerate(shape) if n == 1 and grad.shape[d] != 1)
    return grad.sum(axis=axes, keepdims=True).reshape(shape)


@SETTINGS
@given(data=st.data())
def test_broadcast_gradients(data):
    """d/da sum(w * (a * b + c)) = reduce(w * b) etc., with w a random upstream weight."""
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=4, max_side=3))
    a, b, c = [_values(s, i) for i, s in enumerate(shapes.input_shapes)]
    w = _values(shapes.result_shape, 7)
    ta, tb, tc = (tl.tensor(v, requires_grad=True) for v in (a, b, c))
    ((ta * tb + tc) * tl.tensor(w)).sum().backward()
    out = np.broadcast_shapes(a.shape, b.shape, c.shape)
    ones = np.ones(out)
    for t, want in ((ta, w * b * ones), (tb, w * a * ones), (tc, w * ones)):
        assert tuple(t.grad.shape) == t.shape
        np.testing.assert_allclose(t.grad.numpy(), _reduce_to(want, t.shape), rtol=1e-12,
                                   atol=1e-12)


def _incompatible(draw_shape):
    """Two shapes NumPy refuses to broadcast."""
    a, b = draw_shape
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        return True
    return False


@SETTINGS
@given(st.tuples(hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
                 hnp.array_shapes(min_dims=1, max_dims=3, max_side=4)).filter(_incompatible))
def test_incompatible_shapes_raise_pytorch_wording(shapes):
    a, b = (tl.zeros(s) for s in shapes)
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(\d+\) must match the size "
                                           r"of tensor b \(\d+\) at non-singleton dimension \d+"):
        a + b
