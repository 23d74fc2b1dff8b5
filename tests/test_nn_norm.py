"""Parity tests for the normalization functionals (torchlike/_ops/normalization.py) against PyTorch.

Spec tables, one row per case: values, dtypes, grad_fn and next_functions names and gradients of
every float input (check_op); running statistics updated in place (train / eval, momentum,
instance_norm's per-channel averages); finite differences in float64 (gradcheck); PyTorch's
errors; and the traced (jax.jit) path, running-stat writes included.
"""
import jax
import numpy as np
import pytest
import torch

import torchlike as tl

from parity import A, both, cases, check_op


def F(T):
    return T.nn.functional


def stat(n, dtype="float32"):
    """A running statistic: positive, no grad."""
    return A((n,), dtype, "pos", grad=False)


X2, X3, X4, X5 = (4, 3), (2, 3, 4), (2, 3, 2, 3), (2, 3, 2, 1, 2)

# ------------------------------------------------------------------------------------------------
# batch_norm: output, grads of input / weight / bias
# ------------------------------------------------------------------------------------------------

BATCH_NORM = [
    # name, fn(T, x, w, b, rm, rv), input shape, dtype
    ("train_2d", lambda T, x, w, b, rm, rv: F(T).batch_norm(x, rm, rv, w, b, True), X2, "float32"),
    ("train_3d", lambda T, x, w, b, rm, rv: F(T).batch_norm(x, rm, rv, w, b, True), X3, "float32"),
    ("train_4d", lambda T, x, w, b, rm, rv: F(T).batch_norm(x, rm, rv, w, b, True, 0.3), X4,
     "float32"),
    ("train_5d", lambda T, x, w, b, rm, rv: F(T).batch_norm(x, rm, rv, w, b, True), X5, "float32"),
    ("train_f64", lambda T, x, w, b, rm, rv: F(T).batch_norm(x, rm, rv, w, b, True), X4,
     "float64"),
    ("train_no_affine", lambda T, x, w, b, rm, rv: F(T).batch_norm(x, rm, rv, training=True), X3,
     "float32"),
    ("train_weight_only", lambda T, x, w, b, rm, rv: F(T).batch_norm(x, rm, rv, w, None, True),
     X3, "float32"),
    ("train_bias_only", lambda T, x, w, b, rm, rv: F(T).batch_norm(x, rm, rv, None, b, True), X2,
     "float32"),
    ("train_no_stats", lambda T, x, w, b, rm, rv: F(T).batch_norm(x, None, None, w, b, True), X4,
     "float32"),
    ("train_no_stats_eps", lambda T, x, w, b, rm, rv: F(T).batch_norm(
        x, None, None, training=True, eps=0.5), X2, "float64"),
    ("eval_2d", lambda T, x, w, b, rm, rv: F(T).batch_norm(x, rm, rv, w, b), X2, "float32"),
    ("eval_4d", lambda T, x, w, b, rm, rv: F(T).batch_norm(x, rm, rv, w, b, False), X4,
     "float32"),
    ("eval_f64_no_affine", lambda T, x, w, b, rm, rv: F(T).batch_norm(x, rm, rv, eps=1e-3), X3,
     "float64"),
    ("eval_single_sample", lambda T, x, w, b, rm, rv: F(T).batch_norm(x[:1], rm, rv, w, b), X2,
     "float32"),
    ("torch_batch_norm", lambda T, x, w, b, rm, rv: T.batch_norm(
        x, w, b, rm, rv, True, 0.1, 1e-5, False), X3, "float32"),
]


@pytest.mark.parametrize("name,fn,shape,dtype", cases(BATCH_NORM))
def test_batch_norm(name, fn, shape, dtype):
    c = shape[1]
    check_op(f"bn/{name}", fn, [A(shape, dtype), A((c,), dtype), A((c,), dtype),
                                A((c,), dtype, grad=False), stat(c, dtype)])



def test_batch_norm_bfloat16_with_float_params():
    check_op("bn/bf16", lambda T, x, w, b, rm, rv: F(T).batch_norm(
        x.to(T.bfloat16), rm, rv, w, b, True).float(),
        [A(X3), A((3,)), A((3,)), A((3,), grad=False), stat(3)])


# ------------------------------------------------------------------------------------------------
# Running statistics: updated in place in training (unbiased variance), untouched in eval
# ------------------------------------------------------------------------------------------------

def _stats_after(call, shape, c, dtype="float64", seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    rm, rv = rng.standard_normal(c), rng.uniform(0.5, 2, c)

    def go(T):
        dt = getattr(T, dtype)
        running = T.tensor(rm, dtype=dt), T.tensor(rv, dtype=dt)
        out = call(T, T.tensor(x, dtype=dt), *running)
        return out, running[0], running[1]
    both(go)


RUNNING = [
    # name, call(T, x, rm, rv), input shape
    ("bn_train", lambda T, x, rm, rv: F(T).batch_norm(x, rm, rv, training=True), X4),
    ("bn_train_2d_momentum", lambda T, x, rm, rv: F(T).batch_norm(x, rm, rv, training=True,
                                                                  momentum=0.7), X2),
    ("bn_train_momentum_0", lambda T, x, rm, rv: F(T).batch_norm(x, rm, rv, None, None, True,
                                                                 0.0), X3),
    ("bn_train_momentum_1", lambda T, x, rm, rv: F(T).batch_norm(x, rm, rv, None, None, True,
                                                                 1.0), X5),
    ("bn_eval", lambda T, x, rm, rv: F(T).batch_norm(x, rm, rv), X3),
    ("in_train", lambda T, x, rm, rv: F(T).instance_norm(x, rm, rv), X3),
    ("in_train_4d_momentum", lambda T, x, rm, rv: F(T).instance_norm(x, rm, rv, momentum=0.4),
     X4),
    ("in_eval", lambda T, x, rm, rv: F(T).instance_norm(x, rm, rv, use_input_stats=False), X4),
]


@pytest.mark.parametrize("name,call,shape", cases(RUNNING))
def test_running_stats(name, call, shape):
    _stats_after(call, shape, shape[1])


def test_running_stats_float32_and_versions():
    _stats_after(lambda T, x, rm, rv: F(T).batch_norm(x, rm, rv, training=True), X3, 3,
                 "float32", seed=1)
    rm, rv = tl.zeros(3), tl.ones(3)
    F(tl).batch_norm(tl.randn(4, 3), rm, rv, training=True)
    assert rm._version == 1 and rv._version == 1   # PyTorch's kernel writes without a bump (0)
    F(tl).batch_norm(tl.randn(4, 3), rm, rv)
    assert rm._version == 1


def test_running_stats_through_a_view():
    both(lambda T: _bn_into_view(T))


def _bn_into_view(T):
    buf = T.zeros(2, 3, dtype=T.float64)
    buf[1] = 1
    x = T.tensor(np.arange(12.0).reshape(4, 3) ** 1.5, dtype=T.float64)
    F(T).batch_norm(x, buf[0], buf[1], training=True, momentum=0.25)
    return buf


# ------------------------------------------------------------------------------------------------
# instance_norm, layer_norm, group_norm, rms_norm, local_response_norm, normalize
# ------------------------------------------------------------------------------------------------

OTHERS = [
    # name, fn(T, *inputs), inputs
    ("in_basic", lambda T, x: F(T).instance_norm(x), [A(X3)]),
    ("in_affine_4d", lambda T, x, w, b: F(T).instance_norm(x, weight=w, bias=b), [
        A(X4), A((3,)), A((3,))]),
    ("in_running", lambda T, x, w, rm, rv: F(T).instance_norm(x, rm, rv, w, None), [
        A(X3), A((3,)), A((3,), grad=False), stat(3)]),
    ("in_eval", lambda T, x, w, b, rm, rv: F(T).instance_norm(x, rm, rv, w, b, False, eps=0.1), [
        A(X3, "float64"), A((3,), "float64"), A((3,), "float64"), A((3,), "float64", grad=False),
        stat(3, "float64")]),
    ("ln_last", lambda T, x: F(T).layer_norm(x, (4,)), [A(X3)]),
    ("ln_two_dims", lambda T, x, w, b: F(T).layer_norm(x, [3, 4], w, b), [
        A(X3), A((3, 4)), A((3, 4))]),
    ("ln_weight_only", lambda T, x, w: F(T).layer_norm(x, T.Size([4]), w, eps=1e-3), [
        A(X3), A((4,))]),
    ("ln_bias_only_f64", lambda T, x, b: F(T).layer_norm(x, (3,), None, b), [
        A(X2, "float64"), A((3,), "float64")]),
    ("ln_torch_layer_norm", lambda T, x, w: T.layer_norm(x, (4,), w, None, 1e-5, True), [
        A(X3), A((4,))]),
    ("gn_two_groups", lambda T, x: F(T).group_norm(x, 3), [A((2, 6, 2))]),
    ("gn_affine_4d", lambda T, x, w, b: F(T).group_norm(x, 2, w, b), [
        A((2, 4, 2, 2)), A((4,)), A((4,))]),
    ("gn_one_group", lambda T, x, w: F(T).group_norm(x, 1, w, eps=0.1), [A((2, 4, 3)), A((4,))]),
    ("gn_per_channel_f64", lambda T, x, w, b: F(T).group_norm(x, 3, w, b), [
        A((2, 3, 4), "float64"), A((3,), "float64"), A((3,), "float64")]),
    ("gn_2d", lambda T, x: F(T).group_norm(x, 2), [A((2, 8))]),
    ("gn_torch_group_norm", lambda T, x, w: T.group_norm(x, 2, w, None, 1e-5, True), [
        A((2, 4, 3)), A((4,))]),
    ("rms_last", lambda T, x: F(T).rms_norm(x, (4,)), [A(X3)]),
    ("rms_weight", lambda T, x, w: F(T).rms_norm(x, [4], w), [A(X3), A((4,))]),
    ("rms_two_dims_eps", lambda T, x, w: F(T).rms_norm(x, (3, 4), w, eps=0.5), [
        A(X3), A((3, 4))]),
    ("rms_f64", lambda T, x, w: F(T).rms_norm(x, (3,), w), [A(X2, "float64"), A((3,), "float64")]),
    ("rms_tiny_values", lambda T, x: F(T).rms_norm(x * 1e-4, (3,)), [A(X2)]),
    ("rms_tiny_values_f64", lambda T, x: F(T).rms_norm(x * 1e-8, (3,)), [A(X2, "float64")]),
    ("rms_weight_f64_on_f32", lambda T, x, w: F(T).rms_norm(x, (4,), w), [
        A(X3), A((4,), "float64", grad=False)]),
    ("rms_half", lambda T, x, w: F(T).rms_norm(x.half(), (4,), w).float(), [A(X3), A((4,))]),
    ("rms_torch_rms_norm", lambda T, x: T.rms_norm(x, [4], None, 1e-6), [A(X3)]),
    ("lrn_3d", lambda T, x: F(T).local_response_norm(x, 2), [A((2, 5, 3))]),
    ("lrn_4d_odd", lambda T, x: F(T).local_response_norm(x, 3, 0.5, 0.5, 2.0), [A((2, 4, 2, 2))]),
    ("lrn_5d_big", lambda T, x: F(T).local_response_norm(x, 5, alpha=0.3, k=0.5), [
        A((1, 3, 2, 2, 2), "float64")]),
    ("normalize", lambda T, x: F(T).normalize(x), [A(X3)]),
    ("normalize_p1_dim0", lambda T, x: F(T).normalize(x, 1, 0), [A(X2)]),
    ("normalize_last_eps", lambda T, x: F(T).normalize(x * 1e-3, dim=-1, eps=0.01), [A(X3)]),
    ("normalize_1d_f64", lambda T, x: F(T).normalize(x, p=3.0, dim=0), [A((5,), "float64")]),
    ("normalize_inf", lambda T, x: F(T).normalize(x, float("inf")), [A(X2)]),
]


@pytest.mark.filterwarnings("ignore:Mismatch dtype between input and weight")
@pytest.mark.parametrize("name,fn,inputs", cases(OTHERS))
def test_norms(name, fn, inputs):
    check_op(name, fn, inputs)


def test_instance_norm_graph():
    """PyTorch's instance_norm: View(NativeBatchNorm(View(x), Repeat(w), Repeat(b)))."""
    def go(T):
        x = T.ones(2, 3, 4, requires_grad=True)
        w, b = T.ones(3, requires_grad=True), T.zeros(3, requires_grad=True)
        node = F(T).instance_norm(x, weight=w, bias=b).grad_fn
        inner = node.next_functions[0][0]
        return [type(n).__name__ for n, _ in inner.next_functions]
    both(go)


def test_normalize_out():
    def go(T):
        out = T.empty(2, 3)
        r = F(T).normalize(T.tensor([[3.0, 4.0, 0.0], [1.0, 1.0, 1.0]]), dim=1, out=out)
        return r is out, out
    both(go)


def test_local_response_norm_empty_returns_input():
    x = tl.ones(0, 3, 4)
    assert F(tl).local_response_norm(x, 2) is x


# ------------------------------------------------------------------------------------------------
# Finite differences (float64)
# ------------------------------------------------------------------------------------------------

def _t(shape, seed, positive=False):
    v = np.random.default_rng(seed).uniform(0.5 if positive else -1.5, 1.5, shape)
    return tl.tensor(v, dtype=tl.float64, requires_grad=not positive)


GRADCHECK = [
    # name, fn(*tensors), tensors
    ("bn_train", lambda x, w, b: F(tl).batch_norm(x, None, None, w, b, True), [
        _t(X3, 1), _t((3,), 2), _t((3,), 3)]),
    ("bn_eval", lambda x, w: F(tl).batch_norm(x, _t((3,), 4).detach(), _t((3,), 5, True), w), [
        _t(X2, 6), _t((3,), 7)]),
    ("instance_norm", lambda x, w: F(tl).instance_norm(x, weight=w), [_t(X3, 8), _t((3,), 9)]),
    ("layer_norm", lambda x, w, b: F(tl).layer_norm(x, (4,), w, b), [
        _t(X3, 10), _t((4,), 11), _t((4,), 12)]),
    ("group_norm", lambda x, w, b: F(tl).group_norm(x, 2, w, b), [
        _t((2, 4, 2), 13), _t((4,), 14), _t((4,), 15)]),
    ("rms_norm", lambda x, w: F(tl).rms_norm(x, (3,), w), [_t(X2, 16), _t((3,), 17)]),
    ("local_response_norm", lambda x: F(tl).local_response_norm(x, 3, 0.5), [_t((1, 4, 2), 18)]),
    ("normalize", lambda x: F(tl).normalize(x, 3.0), [_t(X2, 19)]),
]


@pytest.mark.parametrize("name,fn,tensors", cases(GRADCHECK))
def test_gradcheck(name, fn, tensors):
    assert tl.autograd.gradcheck(fn, tuple(tensors), fast_mode=True)


def test_double_backward_layer_norm_without_affine():
    both(lambda T: _second_derivative(T, lambda x: F(T).layer_norm(x, (3,))))
    both(lambda T: _second_derivative(T, lambda x: F(T).batch_norm(x, None, None, training=True)))


def _second_derivative(T, f):
    x = T.tensor(np.linspace(-1, 2, 6).reshape(2, 3) ** 2, requires_grad=True)
    g, = T.autograd.grad((f(x) ** 3).sum(), x, create_graph=True)
    g.sum().backward()
    return g.detach(), x.grad   # (the graph-of-graph node names are the engine's, not compared)


# ------------------------------------------------------------------------------------------------
# Errors
# ------------------------------------------------------------------------------------------------

ERRORS = [
    # name, fn(T), match
    ("bn_one_value", lambda T: F(T).batch_norm(T.ones(1, 3), T.zeros(3), T.ones(3),
                                               training=True),
     r"Expected more than 1 value per channel when training, got input size torch.Size\(\[1, 3\]\)"),
    ("bn_one_value_3d", lambda T: F(T).batch_norm(T.ones(1, 3, 1), None, None, training=True),
     "Expected more than 1 value per channel"),
    ("bn_eval_no_stats", lambda T: F(T).batch_norm(T.ones(4, 3), None, None),
     "running_mean must be defined in evaluation mode"),
    ("bn_wrong_stats", lambda T: F(T).batch_norm(T.ones(4, 3), T.zeros(4), T.ones(4)),
     "running_mean should contain 3 elements not 4"),
    ("bn_wrong_weight", lambda T: F(T).batch_norm(T.ones(4, 3), None, None, T.ones(4),
                                                  training=True),
     "weight should contain 3 elements not 4"),
    ("bn_wrong_bias", lambda T: F(T).batch_norm(T.ones(4, 3), None, None, None, T.ones(2),
                                                training=True),
     "bias should contain 3 elements not 2"),
    ("bn_1d", lambda T: F(T).batch_norm(T.ones(3), T.zeros(3), T.ones(3)),
     "running_mean should contain 0 elements not 3"),
    ("bn_int", lambda T: F(T).batch_norm(T.ones(4, 3, dtype=T.long), None, None, training=True),
     "\"batch_norm\" not implemented for 'Long'"),
    ("bn_mixed", lambda T: F(T).batch_norm(T.ones(4, 3, dtype=T.float64), T.zeros(3), T.ones(3),
                                           training=True),
     r"mixed dtype \(CPU\): all inputs must share same datatype."),
    ("bn_param_f64", lambda T: F(T).batch_norm(T.ones(4, 3), None, None,
                                               T.ones(3, dtype=T.float64), training=True),
     "expect parameter to have scalar type of Float"),
    ("bn_momentum_none", lambda T: F(T).batch_norm(T.ones(4, 3), T.zeros(3), T.ones(3),
                                                   training=True, momentum=None),
     "argument 'momentum' \\(position 7\\) must be float, not NoneType"),
    ("in_one_spatial", lambda T: F(T).instance_norm(T.ones(2, 3, 1)),
     "Expected more than 1 spatial element when training, got input size"),
    ("in_2d", lambda T: F(T).instance_norm(T.ones(2, 3)), "Expected more than 1 spatial"),
    ("in_eval_no_stats", lambda T: F(T).instance_norm(T.ones(2, 3, 4), use_input_stats=False),
     "Expected running_mean and running_var to be defined when use_input_stats is false"),
    ("ln_shape", lambda T: F(T).layer_norm(T.ones(2, 3), [4]),
     r"Given normalized_shape=\[4\], expected input with shape \[\*, 4\], but got input of "
     r"size\[2, 3\]"),
    ("ln_shape_2", lambda T: F(T).layer_norm(T.ones(2, 3), (2, 4)),
     r"expected input with shape \[\*, 2, 4\]"),
    ("ln_weight", lambda T: F(T).layer_norm(T.ones(2, 3), (3,), T.ones(4)),
     r"Expected weight to be of same shape as normalized_shape, but got weight of shape \[4\] "
     r"and normalized_shape = \[3\]"),
    ("ln_bias", lambda T: F(T).layer_norm(T.ones(2, 3), (3,), None, T.ones(4)),
     "Expected bias to be of same shape"),
    ("ln_empty_shape", lambda T: F(T).layer_norm(T.ones(2, 3), ()),
     "Expected normalized_shape to be at least 1-dimensional"),
    ("ln_int_shape", lambda T: F(T).layer_norm(T.ones(2, 3), 3),
     "must be tuple of ints, not int"),
    ("ln_int", lambda T: F(T).layer_norm(T.ones(2, 3, dtype=T.long), (3,)),
     "\"LayerNormKernelImpl\" not implemented for 'Long'"),
    ("ln_mixed", lambda T: F(T).layer_norm(T.ones(2, 3), (3,), T.ones(3, dtype=T.float64)),
     "expect parameter to have scalar type of Float"),
    ("ln_mixed_params", lambda T: F(T).layer_norm(T.ones(2, 3).bfloat16(), (3,),
                                                  T.ones(3).bfloat16(), T.ones(3)),
     "expected scalar type BFloat16 but found Float"),
    ("gn_not_divisible", lambda T: F(T).group_norm(T.ones(2, 4, 3), 3),
     r"Expected number of channels in input to be divisible by num_groups, but got input of "
     r"shape \[2, 4, 3\] and num_groups=3"),
    ("gn_1d", lambda T: F(T).group_norm(T.ones(4), 2),
     "Expected at least 2 dimensions for input tensor but received 1"),
    ("gn_weight", lambda T: F(T).group_norm(T.ones(2, 4, 3), 2, T.ones(3)),
     r"Expected weight to be a vector of size equal to the number of channels in input, but got "
     r"weight of shape \[3\] and input of shape \[2, 4, 3\]"),
    ("gn_one_value", lambda T: F(T).group_norm(T.ones(1, 2), 2),
     r"Expected more than 1 value per channel when training, got input size \[1, 2\]"),
    ("rms_shape", lambda T: F(T).rms_norm(T.ones(2, 3), [4]),
     r"Given normalized_shape=\[4\], expected input with shape \[\*4\], but got input of "
     r"size\[2, 3\]"),
    ("rms_weight", lambda T: F(T).rms_norm(T.ones(2, 3), [3], T.ones(2, 2)),
     r"got weight of shape \[2, 2\] and normalized_shape = \[3\]"),
    ("rms_int", lambda T: F(T).rms_norm(T.ones(2, 3, dtype=T.long), [3]),
     "\"rms_norm\" not implemented for 'Long'"),
    ("lrn_2d", lambda T: F(T).local_response_norm(T.ones(2, 3), 2),
     r"Expected 3D or higher dimensionality\s+input \(got 2 dimensions\)"),
    ("normalize_int", lambda T: F(T).normalize(T.ones(2, 3, dtype=T.long)),
     "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long"),
]


@pytest.mark.parametrize("name,fn,match", cases(ERRORS))
def test_errors(name, fn, match):
    both(fn, match=match, raises=True)


# ------------------------------------------------------------------------------------------------
# Traced: a whole training step of batch_norm under jax.jit, running-stat writes included
# ------------------------------------------------------------------------------------------------

def _bn_step(x, w, b, rm, rv):
    y = F(tl).batch_norm(x, rm, rv, w, b, True, 0.2)
    (y ** 2).mean().backward()
    return y.detach(), w.grad, b.grad, rm, rv


def test_batch_norm_traced():
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal(X4), rng.standard_normal(3), rng.standard_normal(3)
    rm, rv = rng.standard_normal(3), rng.uniform(0.5, 2, 3)

    def step(*arrays):
        t = [tl.Tensor._wrap(a) for a in arrays]
        t[1].requires_grad_()
        t[2].requires_grad_()
        return tuple(o._value() for o in _bn_step(*t))

    arrays = [np.asarray(a, np.float32) for a in (x, w, b, rm, rv)]
    traced = jax.jit(step)(*arrays)
    eager = step(*[jax.numpy.asarray(a) for a in arrays])
    for t, e in zip(traced, eager):
        np.testing.assert_allclose(np.asarray(t), np.asarray(e), rtol=1e-5, atol=1e-6)
    assert not np.allclose(np.asarray(traced[3]), arrays[3])   # the running mean moved
