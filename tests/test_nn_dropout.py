"""Tests for dropout (torchlike/_ops/dropout.py): F.dropout, dropout1d/2d/3d, alpha_dropout,
feature_alpha_dropout and the top-level torch.dropout(input, p, train) family.

torchlike's random stream is not PyTorch's, so the masks are tested statistically (the fraction
dropped is near p, survivors are scaled by 1 / (1 - p), feature forms drop whole channels, the
gradient is the mask / (1 - p) the forward used), while everything deterministic is compared
with real torch: graphs (grad_fn and next_functions names), in-place identity and versions,
the identity cases (training=False, p == 0, empty input), p == 1, warnings and errors.
"""
import warnings

import jax
import numpy as np
import pytest
import torch

import torchlike as tl
from torchlike._ops import dropout as dmod
from torchlike.testing import to_jax_function

from parity import A, both, cases, check_op
from sample_stats import check_frequencies, check_moments


def F(T):
    return T.nn.functional


def top(T, name):
    """torch.<name> (the top-level dropout forms, wired from the module's TOP_LEVEL)."""
    return getattr(torch, name) if T is torch else dmod.TOP_LEVEL[name]


def _names(t):
    """grad_fn names, depth first, None for inputs that need no grad."""
    def walk(node):
        if node is None:
            return None
        return [type(node).__name__] + [walk(n) for n, _ in node.next_functions]
    return walk(t.grad_fn)


def _x(T, shape, dtype="float32", grad=True):
    v = np.random.default_rng(0).standard_normal(shape) + 3.0   # nonzero: a zero means dropped
    return T.tensor(v, dtype=getattr(T, dtype), requires_grad=grad)


# ------------------------------------------------------------------------------------------------
# p out of range: ValueError from F (checked even when not training), RuntimeError top-level
# ------------------------------------------------------------------------------------------------

P_ERRORS = [
    # name, fn(T, x), how PyTorch prints p
    ("dropout", lambda T, x: F(T).dropout(x, 1.5), "1.5"),
    ("dropout_neg", lambda T, x: F(T).dropout(x, -0.1), "-0.1"),
    ("dropout_int_p", lambda T, x: F(T).dropout(x, 2), "2"),
    ("dropout_eval", lambda T, x: F(T).dropout(x, 1.5, training=False), "1.5"),
    ("dropout1d", lambda T, x: F(T).dropout1d(x, 1.5), "1.5"),
    ("dropout2d", lambda T, x: F(T).dropout2d(x, 1.5), "1.5"),
    ("dropout3d", lambda T, x: F(T).dropout3d(x, -1.0), "-1.0"),
    ("alpha_dropout", lambda T, x: F(T).alpha_dropout(x, 1.5), "1.5"),
    ("feature_alpha_dropout", lambda T, x: F(T).feature_alpha_dropout(x, 1.5), "1.5"),
    ("torch.dropout", lambda T, x: top(T, "dropout")(x, 1.5, True), "1.5"),
    ("torch.dropout_eval", lambda T, x: top(T, "dropout")(x, -0.5, False), "-0.5"),
    ("torch.dropout_", lambda T, x: top(T, "dropout_")(x, 1.5, True), "1.5"),
    ("torch.feature_dropout", lambda T, x: top(T, "feature_dropout")(x, 1.5, True), "1.5"),
    ("torch.alpha_dropout", lambda T, x: top(T, "alpha_dropout")(x, 1.5, True), "1.5"),
    ("torch.feature_alpha_dropout_",
     lambda T, x: top(T, "feature_alpha_dropout_")(x, 1.5, True), "1.5"),
]


@pytest.mark.parametrize("name,fn,p", cases(P_ERRORS))
def test_p_out_of_range(name, fn, p):
    both(lambda T: fn(T, _x(T, (2, 3, 4))),
         match=r"^dropout probability has to be between 0 and 1, but got " + p + "$", raises=True)


# ------------------------------------------------------------------------------------------------
# Identity cases return the input itself; p == 1 multiplies by zero (MulBackward0)
# ------------------------------------------------------------------------------------------------

IDENTITY = [
    # name, fn(T, x)
    ("eval", lambda T, x: F(T).dropout(x, 0.5, training=False)),
    ("p0", lambda T, x: F(T).dropout(x, 0.0)),
    ("alpha_default_eval", lambda T, x: F(T).alpha_dropout(x)),
    ("feature_alpha_default_eval", lambda T, x: F(T).feature_alpha_dropout(x)),
    ("dropout2d_eval", lambda T, x: F(T).dropout2d(x, training=False)),
    ("dropout2d_p0", lambda T, x: F(T).dropout2d(x, 0.0)),
    ("inplace_eval", lambda T, x: F(T).dropout(x, training=False, inplace=True)),
    ("torch.dropout_eval", lambda T, x: top(T, "dropout")(x, 0.5, False)),
    ("torch.feature_dropout_p0", lambda T, x: top(T, "feature_dropout")(x, 0.0, True)),
]


@pytest.mark.parametrize("name,fn", cases(IDENTITY))
def test_identity_returns_input(name, fn):
    def go(T):
        x = _x(T, (2, 3, 2, 2))
        return fn(T, x) is x, x._version
    both(go)


def test_empty_input_returned_as_is():
    both(lambda T: (lambda x: F(T).dropout(x) is x)(T.ones(0, 3, requires_grad=True)))


P_ONE = [
    # name, fn(T, x): zeros, MulBackward0(input, None), zero gradient
    ("dropout", lambda T, x: F(T).dropout(x, 1.0)),
    ("dropout2d", lambda T, x: F(T).dropout2d(x.unsqueeze(0), 1.0)),
    ("dropout1d_unbatched", lambda T, x: F(T).dropout1d(x[0], 1.0)),
    ("alpha_dropout", lambda T, x: F(T).alpha_dropout(x, 1.0, True)),
    ("feature_alpha_dropout", lambda T, x: F(T).feature_alpha_dropout(x, 1.0, True)),
    ("inplace", lambda T, x: F(T).dropout(x * 1, 1.0, inplace=True)),
    ("torch.dropout", lambda T, x: top(T, "dropout")(x, 1.0, True)),
]


@pytest.mark.parametrize("name,fn", cases(P_ONE))
def test_p_one_zeros(name, fn):
    check_op(f"p1/{name}", fn, [A((2, 3, 4))])


INTS = [
    # name, fn(T, x): integer inputs are fine where nothing is drawn
    ("p0", lambda T, x: F(T).dropout(x, 0.0)),
    ("eval", lambda T, x: F(T).dropout(x, 0.7, False)),
    ("p1", lambda T, x: F(T).dropout(x, 1.0)),
]


@pytest.mark.parametrize("name,fn", cases(INTS))
def test_integer_inputs_without_draws(name, fn):
    check_op(f"int/{name}", fn, [A((2, 3), "int64")])


# ------------------------------------------------------------------------------------------------
# Graphs, dtypes, in-place identity and versions: compared with torch (values differ)
# ------------------------------------------------------------------------------------------------

GRAPHS = [
    # name, fn(T, x) with x of shape (2, 3, 4, 2), requiring grad
    ("dropout", lambda T, x: F(T).dropout(x)),
    ("dropout_f64", lambda T, x: F(T).dropout(x.double())),
    ("dropout_bf16", lambda T, x: F(T).dropout(x.bfloat16())),
    ("dropout_inplace", lambda T, x: F(T).dropout(x * 1, inplace=True)),
    ("dropout2d", lambda T, x: F(T).dropout2d(x)),
    ("dropout2d_inplace", lambda T, x: F(T).dropout2d(x * 1, inplace=True)),
    ("dropout1d", lambda T, x: F(T).dropout1d(x[:, :, :, 0])),
    ("dropout1d_unbatched", lambda T, x: F(T).dropout1d(x[0, :, :, 0])),
    ("dropout3d_batched", lambda T, x: F(T).dropout3d(x.unsqueeze(0))),
    ("dropout3d_unbatched", lambda T, x: F(T).dropout3d(x)),
    ("alpha_dropout", lambda T, x: F(T).alpha_dropout(x, 0.5, True)),
    ("alpha_dropout_inplace", lambda T, x: F(T).alpha_dropout(x * 1, 0.5, True, True)),
    ("feature_alpha_dropout", lambda T, x: F(T).feature_alpha_dropout(x, 0.5, True)),
    ("torch.dropout", lambda T, x: top(T, "dropout")(x, 0.5, True)),
    ("torch.dropout_", lambda T, x: top(T, "dropout_")(x * 1, 0.5, True)),
    ("torch.feature_dropout", lambda T, x: top(T, "feature_dropout")(x, 0.5, True)),
    ("torch.alpha_dropout_", lambda T, x: top(T, "alpha_dropout_")(x * 1, 0.5, True)),
]


@pytest.mark.parametrize("name,fn", cases(GRAPHS))
def test_graph_dtype_and_versions(name, fn):
    def go(T):
        x = _x(T, (2, 3, 4, 2))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = fn(T, x)
        return _names(y), y.dtype, tuple(y.shape), y._version
    both(go)


def test_inplace_returns_the_same_object():
    def go(T):
        y = _x(T, (2, 3, 4, 2)) * 1
        return [F(T).dropout(y, 0.5, inplace=True) is y, y._version,
                F(T).alpha_dropout(y, 0.5, True, inplace=True) is y, y._version,
                F(T).dropout2d(y, inplace=True) is y, y._version,
                F(T).feature_alpha_dropout(y, 0.5, True, True) is y, y._version]
    both(go)


def test_inplace_on_leaf_requiring_grad_raises():
    both(lambda T: F(T).dropout(_x(T, (3,)), inplace=True), match="leaf Variable", raises=True)


def test_backward_twice_raises():
    def go(T):
        y = F(T).dropout(_x(T, (3, 4)))
        y.sum().backward()
        y.sum().backward()
    both(go, match="second time", raises=True)


# ------------------------------------------------------------------------------------------------
# Warnings (PyTorch's, pointing at the caller) and errors
# ------------------------------------------------------------------------------------------------

WARNS = [
    # name, fn(T)
    ("dropout2d_2d", lambda T: F(T).dropout2d(T.ones(2, 3))),
    ("dropout2d_3d", lambda T: F(T).dropout2d(T.ones(2, 3, 4))),
    ("dropout2d_5d", lambda T: F(T).dropout2d(T.ones(1, 2, 1, 2, 1), training=False)),
    ("dropout2d_1d_p1", lambda T: F(T).dropout2d(T.ones(3), 1.0)),
    ("dropout2d_1d", lambda T: F(T).dropout2d(T.ones(3))),
    ("dropout3d_3d", lambda T: F(T).dropout3d(T.ones(2, 3, 4))),
    ("dropout3d_1d", lambda T: F(T).dropout3d(T.ones(3))),
    ("dropout3d_4d", lambda T: F(T).dropout3d(T.ones(2, 3, 1, 2))),
]


@pytest.mark.parametrize("name,fn", cases(WARNS))
def test_warnings(name, fn):
    def go(T):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                out = tuple(fn(T).shape)
            except RuntimeError as e:
                out = str(e)
        return out, [(str(w.message), w.category.__name__, w.filename) for w in caught]
    ref, got = both(go)
    assert all(w[2] == __file__ for w in got[1]), "warnings point at the caller"


ERRORS = [
    # name, fn(T), match
    ("int", lambda T: F(T).dropout(T.arange(4)),
     "result type Float can't be cast to the desired output type Long"),
    ("bool", lambda T: F(T).dropout(T.tensor([True, False])), "output type Bool"),
    ("int_alpha", lambda T: F(T).alpha_dropout(T.arange(4), 0.5, True), "output type Long"),
    ("complex", lambda T: F(T).dropout(T.ones(3, dtype=T.complex64)),
     "\"bernoulli_scalar_cpu_\" not implemented for 'ComplexFloat'"),
    ("feature_1d", lambda T: F(T).feature_alpha_dropout(T.ones(3), 0.5, True),
     "Feature dropout requires at least 2 dimensions in the input"),
    ("torch.feature_dropout_1d", lambda T: top(T, "feature_dropout")(T.ones(3), 0.5, True),
     "Feature dropout requires at least 2 dimensions in the input"),
    ("dropout1d_1d", lambda T: F(T).dropout1d(T.ones(3)),
     "dropout1d: Expected 2D or 3D input, but received a 1D input. Note that dropout1d exists"),
    ("dropout1d_4d", lambda T: F(T).dropout1d(T.ones(1, 2, 3, 4), training=False),
     "received a 4D input"),
    ("torch.dropout_missing_train", lambda T: top(T, "dropout")(T.ones(3), 0.5), None),
]


@pytest.mark.parametrize("name,fn,match", cases(ERRORS))
def test_errors(name, fn, match):
    both(fn, match=match, raises=True)


# ------------------------------------------------------------------------------------------------
# The masks, statistically: fraction dropped, scaling, whole channels, gradients
# ------------------------------------------------------------------------------------------------

def _run(fn, shape, dtype=tl.float32):
    x = tl.tensor(np.random.default_rng(1).standard_normal(shape) + 3.0, dtype=dtype,
                  requires_grad=True)
    g = tl.tensor(np.random.default_rng(2).standard_normal(shape), dtype=dtype)
    out = fn(x)
    out.backward(g)
    return x.detach().numpy(), out.detach().numpy(), g.numpy(), x.grad.numpy()


@pytest.mark.parametrize("p", [0.3])
def test_dropout_mask_scale_and_gradient(p):
    tl.manual_seed(0)
    x, out, g, grad = _run(lambda x: tl.nn.functional.dropout(x, p), (500, 400))
    kept = out != 0
    check_frequencies((~kept).mean(), p, kept.size, "dropped")
    scale = np.float32(1) / np.float32(1 - p)
    np.testing.assert_allclose(out[kept], x[kept] * scale, rtol=1e-6)
    np.testing.assert_allclose(grad, g * kept * scale, rtol=1e-6)


def test_dropout_float64_scale():
    tl.manual_seed(1)
    x, out, g, grad = _run(lambda x: tl.nn.functional.dropout(x, 0.3), (50, 40), tl.float64)
    kept = out != 0
    np.testing.assert_allclose(out[kept], x[kept] / 0.7, rtol=1e-14)
    np.testing.assert_allclose(grad, g * kept / 0.7, rtol=1e-14)


FEATURE = [
    # name, fn(x), input shape (2**15 channels), how many leading dims the mask varies over
    ("dropout2d", lambda x: tl.nn.functional.dropout2d(x, 0.5), (64, 512, 2, 3), 2),
    ("dropout2d_3d", lambda x: tl.nn.functional.dropout2d(x, 0.5), (64, 512, 3), 2),
    ("dropout1d", lambda x: tl.nn.functional.dropout1d(x, 0.5), (64, 512, 3), 2),
    ("dropout1d_unbatched", lambda x: tl.nn.functional.dropout1d(x, 0.5), (32768, 3), 1),
    ("dropout1d_unbatched_inplace",
     lambda x: tl.nn.functional.dropout1d(x * 1, 0.5, inplace=True), (32768, 3), 1),
    ("dropout3d", lambda x: tl.nn.functional.dropout3d(x, 0.5), (64, 512, 2, 1, 2), 2),
    ("dropout3d_unbatched", lambda x: tl.nn.functional.dropout3d(x, 0.5), (32768, 2, 1, 2), 1),
    ("torch.feature_dropout", lambda x: dmod.TOP_LEVEL["feature_dropout"](x, 0.5, True),
     (64, 512, 3), 2),
]


@pytest.mark.parametrize("name,fn,shape,dims", cases(FEATURE))
def test_feature_dropout_zeros_whole_channels(name, fn, shape, dims):
    tl.manual_seed(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x, out, g, grad = _run(fn, shape)
    channels = out.reshape(int(np.prod(shape[:dims])), -1)
    kept = (channels != 0).all(1)
    assert ((channels == 0).all(1) | kept).all(), "a channel is dropped whole"
    check_frequencies(kept.mean(), 0.5, kept.size, "channels kept")
    mask = np.broadcast_to(kept.reshape(shape[:dims] + (1,) * (len(shape) - dims)), shape)
    np.testing.assert_allclose(out, np.where(mask, x * 2, 0), rtol=1e-6)
    np.testing.assert_allclose(grad, g * mask * 2, rtol=1e-6)


_ALPHA = 1.7580993408473766


@pytest.mark.parametrize("feature", [False, True])
def test_alpha_dropout_values_gradient_and_moments(feature):
    p = 0.3
    a = 1 / np.sqrt((_ALPHA ** 2 * p + 1) * (1 - p))
    tl.manual_seed(4)
    shape = (500, 200, 2) if feature else (500, 400)
    fn = tl.nn.functional.feature_alpha_dropout if feature else tl.nn.functional.alpha_dropout
    x, out, g, grad = _run(lambda x: fn(x, p, True), shape, tl.float64)
    dropped_value = _ALPHA * a * (p - 1)
    dropped = np.isclose(out, dropped_value, rtol=1e-12)
    np.testing.assert_allclose(out[~dropped], x[~dropped] * a + _ALPHA * a * p, rtol=1e-12)
    np.testing.assert_allclose(grad, g * ~dropped * a, rtol=1e-12)
    if feature:
        assert (dropped.all(2) | ~dropped.any(2)).all(), "a channel is dropped whole"
        check_frequencies(dropped[..., 0].mean(), p, dropped[..., 0].size, "channels dropped")
    else:   # zero mean and unit variance in, the same out: kept a*z + b, dropped b - a*alpha
        check_frequencies(dropped.mean(), p, dropped.size, "dropped")
        z = np.random.default_rng(5).standard_normal(shape)
        y = fn(tl.tensor(z), p, True).numpy()
        b = _ALPHA * a * p
        mu4 = (1 - p) * (b ** 4 + 6 * b * b * a * a + 3 * a ** 4) + p * dropped_value ** 4
        check_moments(y, 0.0, 1.0, mu4, "alpha_dropout of N(0, 1)")


def test_same_seed_same_mask_and_the_generator_advances():
    x = tl.ones(200)
    tl.manual_seed(7)
    a = tl.nn.functional.dropout(x).numpy()
    b = tl.nn.functional.dropout(x).numpy()
    tl.manual_seed(7)
    np.testing.assert_array_equal(tl.nn.functional.dropout(x).numpy(), a)
    assert not np.array_equal(a, b)


def test_retained_graph_backward_regenerates_the_same_mask():
    x = tl.ones(300, requires_grad=True)
    y = tl.nn.functional.dropout(x, 0.5)
    y.sum().backward(retain_graph=True)
    first = x.grad.numpy().copy()
    np.testing.assert_array_equal(first, y.detach().numpy())
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * first)


def test_native_dropout_off_the_cpu(monkeypatch):
    """Off the CPU PyTorch runs native_dropout: one node, the input its only edge."""
    monkeypatch.setattr(dmod, "_fused", lambda input: True)
    x = tl.ones(100, requires_grad=True)
    y = tl.nn.functional.dropout(x, 0.5)
    assert _names(y) == ["NativeDropoutBackward0", ["AccumulateGrad"]]
    y.backward(tl.full((100,), 3.0))
    np.testing.assert_array_equal(x.grad.numpy(), 3 * y.detach().numpy())
    # in place and feature dropout stay a product, as PyTorch's
    assert _names(tl.nn.functional.dropout(x * 1, 0.5, inplace=True))[0] == "MulBackward0"


# ------------------------------------------------------------------------------------------------
# Traced (jax.jit): the generator state is carried in and out, as for the samplers
# ------------------------------------------------------------------------------------------------

def _program(x):
    Fn = tl.nn.functional
    return Fn.dropout(x, 0.5), Fn.dropout2d(x.view(1, 4, 6, 1), 0.5)


def test_traced_matches_eager_and_advances():
    g = tl.default_generator
    x = tl.tensor(np.random.default_rng(0).standard_normal((4, 6)) + 3.0, dtype=tl.float32)
    tl.manual_seed(12)
    start = tl.get_rng_state()
    eager = [o.numpy() for o in _program(x)]

    def step(state, x):
        g.set_state(state)
        outs = _program(x)
        return (g.get_state(),) + outs

    jitted = jax.jit(to_jax_function(step))
    try:
        state, *traced = jitted(start._value(), x._value())
        _, *again = jitted(state, x._value())
    finally:
        g.set_state(start)
    for e, t in zip(eager, traced):
        np.testing.assert_allclose(np.asarray(t), e, rtol=1e-6)
    assert not np.array_equal(np.asarray(traced[0]), np.asarray(again[0]))


def test_backward_under_jit():
    def grads(arr, state):
        tl.default_generator.set_state(tl.Tensor._wrap(state))
        x = tl.Tensor._wrap(arr).requires_grad_(True)
        y = tl.nn.functional.dropout(x, 0.5)
        y.sum().backward()
        return y._value(), x.grad._value()
    start = tl.get_rng_state()
    try:
        with jax.enable_x64(True):   # its JAX code reads 64-bit data
            y, gx = jax.jit(grads)(np.ones(64, np.float32), start._value())
    finally:
        tl.default_generator.set_state(start)
    np.testing.assert_array_equal(np.asarray(gx), np.asarray(y))
