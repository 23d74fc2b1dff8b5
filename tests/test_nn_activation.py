"""Parity tests for the activations of torch.nn.functional (torchlike/_ops/activation.py)
against PyTorch.

Spec tables, one row per case: values, dtypes, grad_fn names (and next_functions names) and
gradients against real torch (check_op) in float32 and float64; the gradients at the kinks,
bounds, large values and nan (PyTorch's masks); the in-place forms (same object, version bump,
PyTorch's in-place node names); integer inputs; the softmax family's dims, dtypes and implicit-dim
warning; errors; finite differences in float64 (gradcheck); the random activations (rrelu in
training, gumbel_softmax) statistically; and the traced (jax.jit) path.
"""
import warnings

import jax
import numpy as np
import pytest
import torch

import torchlike as tl
from torchlike._ops import activation as act
from torchlike.testing import to_jax_function

from parity import A, both, cases, check_op
from sample_stats import check_frequencies, check_moments


def F(T):
    return T.nn.functional


class V(A):
    """An input with exactly these values (kinks, bounds, large values, nan)."""

    def __init__(self, values, dtype="float64", grad=True):
        super().__init__(np.shape(values), dtype, grad=grad)
        self.v = values

    def values(self, rng):
        return np.asarray(self.v, np.float64 if self.dtype == "float64" else np.float32)


# ------------------------------------------------------------------------------------------------
# Out of place: values, dtypes, grad_fn names, gradients; float32 and float64
# ------------------------------------------------------------------------------------------------

ELEMENTWISE = [
    # name, fn(T, x), domain
    ("relu", lambda T, x: F(T).relu(x), "nz"),
    ("relu6", lambda T, x: F(T).relu6(x * 4), "nz"),
    ("leaky_relu", lambda T, x: F(T).leaky_relu(x), "nz"),
    ("leaky_relu_slope", lambda T, x: F(T).leaky_relu(x, 0.2), "nz"),
    ("leaky_relu_neg_slope", lambda T, x: F(T).leaky_relu(x, negative_slope=-0.3), "nz"),
    ("elu", lambda T, x: F(T).elu(x), "any"),
    ("elu_alpha", lambda T, x: F(T).elu(x, alpha=0.5), "any"),
    ("selu", lambda T, x: F(T).selu(x), "any"),
    ("celu", lambda T, x: F(T).celu(x), "any"),
    ("celu_alpha", lambda T, x: F(T).celu(x, 2.0), "any"),
    ("gelu", lambda T, x: F(T).gelu(x), "any"),
    ("gelu_tanh", lambda T, x: F(T).gelu(x, approximate="tanh"), "any"),
    ("silu", lambda T, x: F(T).silu(x), "any"),
    ("mish", lambda T, x: F(T).mish(x), "any"),
    ("softplus", lambda T, x: F(T).softplus(x), "any"),
    ("softplus_beta", lambda T, x: F(T).softplus(x, beta=2, threshold=1.5), "any"),
    ("softplus_neg_beta", lambda T, x: F(T).softplus(x, -1.0), "any"),
    ("softsign", lambda T, x: F(T).softsign(x), "any"),
    ("hardtanh", lambda T, x: F(T).hardtanh(x), "any"),
    ("hardtanh_bounds", lambda T, x: F(T).hardtanh(x, -0.5, 1.5), "any"),
    ("hardsigmoid", lambda T, x: F(T).hardsigmoid(x * 2), "any"),
    ("hardswish", lambda T, x: F(T).hardswish(x * 2), "any"),
    ("tanhshrink", lambda T, x: F(T).tanhshrink(x), "any"),
    ("softshrink", lambda T, x: F(T).softshrink(x), "any"),
    ("softshrink_lambd", lambda T, x: F(T).softshrink(x, lambd=1.2), "any"),
    ("hardshrink", lambda T, x: F(T).hardshrink(x), "any"),
    ("hardshrink_neg_lambd", lambda T, x: F(T).hardshrink(x, -1.0), "any"),
    ("threshold", lambda T, x: F(T).threshold(x, 0.1, 20.0), "any"),
    ("threshold_int_args", lambda T, x: F(T).threshold(x, 1, -2), "any"),
    ("rrelu_eval", lambda T, x: F(T).rrelu(x), "nz"),
    ("rrelu_eval_bounds", lambda T, x: F(T).rrelu(x, 0.2, 0.6, False), "nz"),
    ("logsigmoid", lambda T, x: F(T).logsigmoid(x), "any"),
    ("sigmoid", lambda T, x: F(T).sigmoid(x), "any"),
    ("tanh", lambda T, x: F(T).tanh(x), "any"),
    ("glu", lambda T, x: F(T).glu(x), "any"),
    ("glu_dim0", lambda T, x: F(T).glu(x, 0), "any"),
    ("softmax", lambda T, x: F(T).softmax(x, 1), "any"),
    ("softmax_dim0", lambda T, x: F(T).softmax(x, dim=0), "any"),
    ("log_softmax", lambda T, x: F(T).log_softmax(x, -1), "any"),
    ("softmin", lambda T, x: F(T).softmin(x, 1), "any"),
]


# float64 for the rows the kink table below (float64) does not cover
FLOAT64 = {"softsign", "tanhshrink", "glu", "softmax", "log_softmax", "softmin", "gelu_tanh",
           "sigmoid", "hardtanh_bounds", "leaky_relu_neg_slope"}


@pytest.mark.parametrize("name,fn,dom,dtype", [
    pytest.param(*row, dtype, id=f"{row[0]}-{dtype}") for row in ELEMENTWISE
    for dtype in (("float32", "float64") if row[0] in FLOAT64 else ("float32",))])
def test_activation(name, fn, dom, dtype):
    check_op(f"{name}/{dtype}", fn, [A((2, 4), dtype, dom)])


OTHER_SHAPES = [
    # name, fn(T, x), input
    ("relu_0d", lambda T, x: F(T).relu(x), A((), dom="nz")),
    ("gelu_0d", lambda T, x: F(T).gelu(x), A(())),
    ("softmax_0d", lambda T, x: F(T).softmax(x, 0), A(())),
    ("log_softmax_3d", lambda T, x: F(T).log_softmax(x, 1), A((2, 3, 2))),
    ("glu_3d_mid", lambda T, x: F(T).glu(x, -2), A((2, 4, 3))),
    ("gelu_bf16", lambda T, x: F(T).gelu(x), A((2, 4), "bfloat16")),
    ("silu_f16", lambda T, x: F(T).silu(x), A((2, 4), "float16")),
    ("elu_bf16", lambda T, x: F(T).elu(x), A((2, 4), "bfloat16")),
    ("softplus_f16", lambda T, x: F(T).softplus(x), A((2, 4), "float16")),
    ("softmax_dtype", lambda T, x: F(T).softmax(x, 1, dtype=T.float64), A((2, 3))),
    ("log_softmax_dtype", lambda T, x: F(T).log_softmax(x, 0, dtype=T.float64), A((2, 3))),
    ("softmin_dtype", lambda T, x: F(T).softmin(x, 1, dtype=T.float64), A((2, 3))),
    ("softmax_positional_dtype", lambda T, x: F(T).softmax(x, 1, 3, T.float64), A((2, 3))),
    ("softmax_int_dtype", lambda T, x: F(T).softmax(x, 0, dtype=T.float32), A((3,), "int64")),
    ("sigmoid_int", lambda T, x: F(T).sigmoid(x), A((3,), "int64")),
    ("softsign_int", lambda T, x: F(T).softsign(x), A((3,), "int64")),
    ("tanhshrink_int", lambda T, x: F(T).tanhshrink(x), A((3,), "int64")),
    # integer inputs keep their dtype (bounds and values cast as PyTorch casts them)
    ("relu_int", lambda T, x: F(T).relu(x), A((2, 3), "int64")),
    ("relu6_int", lambda T, x: F(T).relu6(x * 2), A((2, 3), "int64")),
    ("hardtanh_int", lambda T, x: F(T).hardtanh(x, -1.5, 1.5), A((2, 3), "int64")),
    ("threshold_int", lambda T, x: F(T).threshold(x, 1.5, 2.7), A((2, 3), "int64")),
]


@pytest.mark.parametrize("name,fn,x", cases(OTHER_SHAPES))
def test_activation_shapes_and_dtypes(name, fn, x):
    check_op(name, fn, [x])


TWO_INPUTS = [
    # name, fn(T, x, w), x, weight
    ("prelu_channels", lambda T, x, w: F(T).prelu(x, w), A((2, 3, 2)), A((3,), dom="pos")),
    ("prelu_single", lambda T, x, w: F(T).prelu(x, w), A((2, 3)), A((1,), dom="pos")),
    ("prelu_0d_weight", lambda T, x, w: F(T).prelu(x, w), A((2, 3)), A(())),
    ("prelu_1d", lambda T, x, w: F(T).prelu(x, w), A((4,)), A((1,))),
    ("prelu_0d", lambda T, x, w: F(T).prelu(x, w), A(()), A((1,))),
    ("prelu_no_input_grad", lambda T, x, w: F(T).prelu(x, w), A((2, 3), grad=False), A((3,))),
    ("prelu_method", lambda T, x, w: _method(T, x, "prelu")(w), A((2, 3), "float64"),
     A((3,), "float64")),
]


@pytest.mark.parametrize("name,fn,x,w", cases(TWO_INPUTS))
def test_two_inputs(name, fn, x, w):
    check_op(name, fn, [x, w])


# ------------------------------------------------------------------------------------------------
# Kinks, bounds, large values and nan: PyTorch's gradient masks (float64, exact inputs)
# ------------------------------------------------------------------------------------------------

EDGES = [-100.0, -6.0, -3.0, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 6.0, 100.0, float("nan")]
KINKS = [
    # name, fn(T, x)
    ("relu6", lambda T, x: F(T).relu6(x)),
    ("hardtanh", lambda T, x: F(T).hardtanh(x)),
    ("hardtanh_2_3", lambda T, x: F(T).hardtanh(x, -2.0, 3.0)),
    ("hardsigmoid", lambda T, x: F(T).hardsigmoid(x)),
    ("hardswish", lambda T, x: F(T).hardswish(x)),
    ("softshrink", lambda T, x: F(T).softshrink(x, 1.0)),
    ("hardshrink", lambda T, x: F(T).hardshrink(x, 1.0)),
    ("threshold", lambda T, x: F(T).threshold(x, 0.5, -1.0)),
    ("leaky_relu", lambda T, x: F(T).leaky_relu(x)),
    ("rrelu_eval", lambda T, x: F(T).rrelu(x)),
    ("elu", lambda T, x: F(T).elu(x)),
    ("selu", lambda T, x: F(T).selu(x)),
    ("celu", lambda T, x: F(T).celu(x, 0.5)),
    ("softplus", lambda T, x: F(T).softplus(x)),
    ("softplus_beta", lambda T, x: F(T).softplus(x, 2, 1)),
    ("gelu", lambda T, x: F(T).gelu(x)),
    ("silu", lambda T, x: F(T).silu(x)),
    ("mish", lambda T, x: F(T).mish(x)),
    ("logsigmoid", lambda T, x: F(T).logsigmoid(x)),
    ("prelu", lambda T, x: F(T).prelu(x, T.tensor([0.25], dtype=T.float64))),
]


@pytest.mark.parametrize("name,fn", cases(KINKS))
def test_gradient_at_kinks(name, fn):
    check_op(f"kink/{name}", fn, [V(EDGES)])


def test_kinks_float32_large_values():
    """No overflow in an untaken branch: elu / softplus / mish at +-100 in float32."""
    for name, fn in [("elu", lambda T, x: F(T).elu(x)), ("softplus", lambda T, x: F(T).softplus(x)),
                     ("mish", lambda T, x: F(T).mish(x)), ("celu", lambda T, x: F(T).celu(x))]:
        check_op(f"f32big/{name}", fn, [V([-100.0, -50.0, 0.0, 50.0, 100.0], "float32")])


# ------------------------------------------------------------------------------------------------
# In place: PyTorch's node names (LeakyReluBackward1, EluBackward1, ...), same object, version
# ------------------------------------------------------------------------------------------------

INPLACE = [
    # name, fn(T, y) writing into y
    ("relu", lambda T, y: F(T).relu(y, inplace=True)),
    ("relu_", lambda T, y: F(T).relu_(y)),
    ("relu6", lambda T, y: F(T).relu6(y, inplace=True)),
    ("hardtanh", lambda T, y: F(T).hardtanh(y, -0.5, 0.5, inplace=True)),
    ("hardtanh_", lambda T, y: F(T).hardtanh_(y)),
    ("leaky_relu", lambda T, y: F(T).leaky_relu(y, 0.2, inplace=True)),
    ("leaky_relu_", lambda T, y: F(T).leaky_relu_(y)),
    ("elu", lambda T, y: F(T).elu(y, inplace=True)),
    ("elu_", lambda T, y: F(T).elu_(y, 0.5)),
    ("selu", lambda T, y: F(T).selu(y, inplace=True)),
    ("selu_", lambda T, y: F(T).selu_(y)),
    ("celu", lambda T, y: F(T).celu(y, inplace=True)),
    ("celu_", lambda T, y: F(T).celu_(y, 2.0)),
    ("silu", lambda T, y: F(T).silu(y, inplace=True)),
    ("mish", lambda T, y: F(T).mish(y, inplace=True)),
    ("hardsigmoid", lambda T, y: F(T).hardsigmoid(y, inplace=True)),
    ("hardswish", lambda T, y: F(T).hardswish(y, inplace=True)),
    ("threshold", lambda T, y: F(T).threshold(y, 0.1, 2.0, inplace=True)),
    ("threshold_", lambda T, y: F(T).threshold_(y, 0.1, 2.0)),
    ("rrelu_eval", lambda T, y: F(T).rrelu(y, inplace=True)),
    ("rrelu_", lambda T, y: F(T).rrelu_(y, 0.1, 0.3)),
    ("leaky_relu_zero_slope", lambda T, y: F(T).leaky_relu(y, 0.0, inplace=True)),
    ("elu_zero_alpha", lambda T, y: F(T).elu(y, 0.0, inplace=True)),
]


@pytest.mark.parametrize("name,fn", cases(INPLACE))
def test_inplace(name, fn):
    def go(T, x):
        y = x * 1
        v = y._version
        out = fn(T, y)
        assert out is y and y._version == v + 1
        return out
    check_op(f"inplace/{name}", go, [A((2, 4), "float64", "nz")])


NEGATIVE_SLOPE_INPLACE = [
    # name, fn(T, y): PyTorch's in-place backward cannot invert a negative slope
    ("leaky_relu", lambda T, y: F(T).leaky_relu(y, -0.1, inplace=True), "In-place leakyReLu"),
    ("rrelu_eval", lambda T, y: F(T).rrelu_(y, -0.2, -0.1), "In-place leakyReLu"),
    ("elu", lambda T, y: F(T).elu_(y, -1.0), "In-place elu backward"),
    ("celu", lambda T, y: F(T).celu(y, -1.0, inplace=True), "In-place elu backward"),
]


@pytest.mark.parametrize("name,fn,match", cases(NEGATIVE_SLOPE_INPLACE))
def test_inplace_negative_slope_backward_raises(name, fn, match):
    def go(T):
        x = T.tensor([-1.0, 0.5, 2.0], dtype=T.float64, requires_grad=True)
        out = fn(T, x * 1)
        names = type(out.grad_fn).__name__
        out.sum().backward()
        return names
    both(go, match=match, raises=True)


def test_inplace_without_grad_and_on_leaf():
    both(lambda T: F(T).relu6(T.tensor([-1.0, 7.0, 3.0]), inplace=True))
    both(lambda T: F(T).relu(T.tensor([-1, 2]), inplace=True))
    both(lambda T: F(T).elu_(T.tensor([-1.0], requires_grad=True)),
         match="leaf Variable", raises=True)


def test_inplace_result_saved_then_modified():
    """The in-place Backward1 nodes save their result: writing it again breaks backward."""
    def go(T):
        y = T.tensor([-1.0, 0.5], dtype=T.float64, requires_grad=True) * 1
        F(T).leaky_relu_(y)
        y.mul_(2)
        y.sum().backward()
    both(go, match="modified by an inplace operation", raises=True)


def test_inplace_through_a_view():
    def go(T):
        x = T.tensor([[-1.0, 2.0], [3.0, -4.0]], dtype=T.float64, requires_grad=True)
        y = x * 1
        F(T).hardtanh_(y[0])
        F(T).leaky_relu_(y[:, 1], 0.5)
        y.backward(T.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=T.float64))
        return y, x.grad
    both(go)


# ------------------------------------------------------------------------------------------------
# The softmax family: implicit dim (PyTorch's warning, at the caller's line)
# ------------------------------------------------------------------------------------------------

def _warned(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    return out, [(str(w.message), w.category.__name__, w.filename) for w in caught]


IMPLICIT_DIM = [
    # name, fn(T, x), input shape
    ("softmax_1d", lambda T, x: F(T).softmax(x), (3,)),
    ("softmax_2d", lambda T, x: F(T).softmax(x), (2, 3)),
    ("softmax_3d", lambda T, x: F(T).softmax(x), (2, 3, 2)),
    ("softmax_4d", lambda T, x: F(T).softmax(x, dtype=T.float64), (2, 3, 1, 2)),
    ("softmax_0d", lambda T, x: F(T).softmax(x), ()),
    ("log_softmax_2d", lambda T, x: F(T).log_softmax(x), (2, 3)),
    ("softmin_3d", lambda T, x: F(T).softmin(x), (2, 3, 2)),
]


@pytest.mark.parametrize("name,fn,shape", cases(IMPLICIT_DIM))
def test_softmax_implicit_dim(name, fn, shape):
    def go(T):
        x = T.tensor(np.random.default_rng(0).standard_normal(shape), dtype=T.float32)
        return _warned(lambda: fn(T, x))
    ref, got = both(go)
    assert got[1][0][2] == __file__, "the warning points at the caller"


# ------------------------------------------------------------------------------------------------
# Errors
# ------------------------------------------------------------------------------------------------

def _t(T, values, dtype="float32"):
    return T.tensor(values, dtype=getattr(T, dtype))


ERRORS = [
    # name, fn(T), match
    ("relu_bool", lambda T: F(T).relu(_t(T, [True], "bool")), "Boolean inputs not supported"),
    ("relu_complex", lambda T: F(T).relu(_t(T, [1j], "complex64")), "clamp is not supported"),
    ("relu6_bool", lambda T: F(T).relu6(_t(T, [True], "bool")), "Bool inputs not supported"),
    ("hardtanh_min_gt_max", lambda T: F(T).hardtanh(_t(T, [1.0]), 2.0, 1.0),
     "min_val cannot be greater than max_val"),
    ("leaky_relu_int", lambda T: F(T).leaky_relu(_t(T, [1], "int64")),
     '"leaky_relu_cpu" not implemented for \'Long\''),
    ("elu_int", lambda T: F(T).elu(_t(T, [1], "int64")), "elu_cpu"),
    ("selu_bool", lambda T: F(T).selu(_t(T, [True], "bool")), "elu_cpu"),
    ("celu_zero_alpha", lambda T: F(T).celu(_t(T, [1.0]), 0.0), "alpha cannot be 0 for CELU"),
    ("gelu_int", lambda T: F(T).gelu(_t(T, [1], "int64")), "GeluKernelImpl"),
    ("gelu_bad_approximate", lambda T: F(T).gelu(_t(T, [1.0]), approximate="foo"),
     "approximate argument must be either none or tanh"),
    ("gelu_approximate_none", lambda T: F(T).gelu(_t(T, [1.0]), approximate=None),
     "argument 'approximate' must be str"),
    ("silu_int", lambda T: F(T).silu(_t(T, [1], "int64")), "silu_cpu"),
    ("mish_int", lambda T: F(T).mish(_t(T, [1], "int64")), "mish_cpu"),
    ("softplus_int", lambda T: F(T).softplus(_t(T, [1], "int64")), "softplus_cpu"),
    ("softsign_bool", lambda T: F(T).softsign(_t(T, [True], "bool")), "abs_cpu"),
    ("hardsigmoid_int", lambda T: F(T).hardsigmoid(_t(T, [1], "int64")), "hardsigmoid_cpu"),
    ("hardswish_complex", lambda T: F(T).hardswish(_t(T, [1j], "complex64")),
     "hardswish_cpu"),
    ("softshrink_int", lambda T: F(T).softshrink(_t(T, [1], "int64")), "softshrink_check"),
    ("softshrink_neg_lambd", lambda T: F(T).softshrink(_t(T, [1.0]), -1.0),
     r"lambda must be in range \[0, 3.40282e\+38\] for input dtype Float, but found -1"),
    ("softshrink_neg_lambd_f64", lambda T: F(T).softshrink(_t(T, [1.0], "float64"), -0.5),
     r"lambda must be in range \[0, 1.79769e\+308\] for input dtype Double, but found -0.5"),
    ("hardshrink_int", lambda T: F(T).hardshrink(_t(T, [1], "int64")), "hardshrink_cpu"),
    ("threshold_bool", lambda T: F(T).threshold(_t(T, [True], "bool"), 0.0, 1.0),
     "threshold_cpu"),
    ("rrelu_bounds", lambda T: F(T).rrelu(_t(T, [1.0]), 0.5, 0.1),
     "Lower bound should be less than or equal to the upper bound"),
    ("rrelu_bounds_training", lambda T: F(T).rrelu(_t(T, [1.0]), 0.5, 0.1, True),
     "Lower bound should be less than or equal to the upper bound"),
    ("rrelu_int", lambda T: F(T).rrelu(_t(T, [1], "int64")), "leaky_relu_cpu"),
    ("rrelu_training_half", lambda T: F(T).rrelu(_t(T, [1.0], "float16"), training=True),
     "rrelu_with_noise_out_cpu"),
    ("logsigmoid_int", lambda T: F(T).logsigmoid(_t(T, [1], "int64")), "log_sigmoid_cpu"),
    ("prelu_int", lambda T: F(T).prelu(_t(T, [1, 2], "int64"), _t(T, [2], "int64")), "prelu_cpu"),
    ("gumbel_int", lambda T: F(T).gumbel_softmax(_t(T, [1, 2], "int64")),
     "Exponential distribution is a continuous probability distribution. dtype must be a "
     "floating point but you specified Long"),
    ("gumbel_complex", lambda T: F(T).gumbel_softmax(_t(T, [1j], "complex64")),
     "you specified ComplexFloat"),
    ("glu_scalar", lambda T: F(T).glu(_t(T, 1.0)),
     "glu does not support scalars because halving size must be even"),
    ("glu_odd", lambda T: F(T).glu(_t(T, [[1.0, 2.0, 3.0]])),
     "Halving dimension must be even, but dimension 1 is size 3"),
    ("glu_dim_range", lambda T: F(T).glu(_t(T, [[1.0, 2.0]]), 2), "Dimension out of range"),
    ("glu_int", lambda T: F(T).glu(_t(T, [1, 2], "int64")), "glu_cpu"),
    ("prelu_mismatch", lambda T: F(T).prelu(_t(T, [[1.0, 2.0, 3.0]]), _t(T, [0.1, 0.2])),
     "Mismatch of parameter numbers and input channel size. Found parameter numbers = 2 and "
     "channel size = 3."),
    ("prelu_1d_mismatch", lambda T: F(T).prelu(_t(T, [1.0, 2.0]), _t(T, [0.1, 0.2])),
     "channel size = 1"),
    ("prelu_2d_weight", lambda T: F(T).prelu(_t(T, [[1.0, 2.0]]), _t(T, [[0.1, 0.2]])),
     "Expected `weight` to be a scalar or 1D tensor, but got: ndim = 2"),
    ("prelu_promote", lambda T: F(T).prelu(_t(T, [1.0]), _t(T, [0.1], "float64")),
     "prelu: Type promoting not supported. Got Float and Double"),
    ("softmax_int", lambda T: F(T).softmax(_t(T, [[1, 2]], "int64"), 0), "softmax_kernel_impl"),
    ("softmax_bool", lambda T: F(T).softmax(_t(T, [True], "bool"), 0),
     "softmax_lastdim_kernel_impl"),
    ("log_softmax_complex", lambda T: F(T).log_softmax(_t(T, [1j], "complex64"), 0),
     "log_softmax_lastdim_kernel_impl"),
    ("softmin_bool", lambda T: F(T).softmin(_t(T, [True], "bool"), 0), "Negation"),
    ("softmax_dim_range", lambda T: F(T).softmax(_t(T, [1.0]), 1), "Dimension out of range"),
    ("tanhshrink_bool", lambda T: F(T).tanhshrink(_t(T, [True], "bool")), "Subtraction"),
]


@pytest.mark.parametrize("name,fn,match", cases(ERRORS))
def test_errors(name, fn, match):
    both(fn, match=match, raises=True)


# ------------------------------------------------------------------------------------------------
# Top-level torch names and Tensor methods (the module's PUBLIC / TOP_LEVEL / TENSOR_METHODS)
# ------------------------------------------------------------------------------------------------

def _top(T, name):
    if T is torch:
        return getattr(torch, name)
    return act.TOP_LEVEL.get(name) or getattr(act, name)


def _method(T, x, name):
    if T is torch:
        return getattr(x, name)
    return lambda *a, **k: act.TENSOR_METHODS[name](x, *a, **k)


TOP = [
    # name, fn(T, x)
    ("relu_", lambda T, x: _top(T, "relu_")(x * 1)),
    ("selu", lambda T, x: _top(T, "selu")(x)),
    ("selu_", lambda T, x: _top(T, "selu_")(x * 1)),
    ("celu", lambda T, x: _top(T, "celu")(x, 2.0)),
    ("celu_", lambda T, x: _top(T, "celu_")(x * 1, 0.5)),
    ("threshold", lambda T, x: _top(T, "threshold")(x, 0.1, 2.0)),
    ("threshold_", lambda T, x: _top(T, "threshold_")(x * 1, 0.1, 2.0)),
    ("rrelu_eval", lambda T, x: _top(T, "rrelu")(x, 0.1, 0.3, False)),
    ("rrelu_generator_kw", lambda T, x: _top(T, "rrelu")(x, generator=None)),
    ("rrelu_", lambda T, x: _top(T, "rrelu_")(x * 1, 0.1, 0.3)),
    ("prelu", lambda T, x: _top(T, "prelu")(x, T.tensor([0.25], dtype=x.dtype))),
    ("hardshrink", lambda T, x: _top(T, "hardshrink")(x, 0.3)),
    ("softmax", lambda T, x: _top(T, "softmax")(x, 0)),
    ("softmax_dtype_positional", lambda T, x: _top(T, "softmax")(x, 1, T.float64)),
    ("log_softmax_dtype_positional", lambda T, x: _top(T, "log_softmax")(x, 1, T.float64)),
    ("log_softmax_dtype_kw", lambda T, x: _top(T, "log_softmax")(x, -1, dtype=T.float64)),
    ("method_softmax", lambda T, x: _method(T, x, "softmax")(1)),
    ("method_softmax_dtype", lambda T, x: _method(T, x, "softmax")(0, T.float64)),
    ("method_log_softmax", lambda T, x: _method(T, x, "log_softmax")(dim=1)),
    ("method_hardshrink", lambda T, x: _method(T, x, "hardshrink")(0.4)),
    ("method_prelu", lambda T, x: _method(T, x, "prelu")(T.tensor([0.1, 0.2, 0.3]))),
]


@pytest.mark.parametrize("name,fn", cases(TOP))
def test_top_level_and_methods(name, fn):
    check_op(f"top/{name}", fn, [A((2, 3))])


def test_top_level_softmax_requires_dim():
    both(lambda T: _top(T, "softmax")(T.ones(3)), match="missing 1 required positional argument",
         raises=True)


F_NAMES = ("relu relu_ relu6 leaky_relu leaky_relu_ elu elu_ selu selu_ celu celu_ gelu silu mish "
           "softplus softsign hardtanh hardtanh_ hardsigmoid hardswish tanhshrink softshrink "
           "hardshrink threshold threshold_ prelu rrelu rrelu_ glu logsigmoid sigmoid tanh "
           "softmax log_softmax softmin gumbel_softmax dropout dropout1d dropout2d dropout3d "
           "alpha_dropout feature_alpha_dropout").split()


@pytest.mark.parametrize("name", F_NAMES)
def test_signature_matches_torch(name):
    """Parameter names and defaults of every F function PyTorch writes in Python."""
    import inspect
    try:
        ref = inspect.signature(getattr(torch.nn.functional, name))
    except ValueError:   # a C builtin: no signature to compare
        assert callable(getattr(tl.nn.functional, name))
        return
    got = inspect.signature(getattr(tl.nn.functional, name))
    assert [(p.name, p.default) for p in got.parameters.values()] == \
        [(p.name, p.default) for p in ref.parameters.values()]


def test_public_names_exist_in_torch():
    for name in act.PUBLIC + tuple(act.TOP_LEVEL):
        assert hasattr(torch, name), name
    for name in act.TENSOR_METHODS:
        assert hasattr(torch.Tensor, name), name


# ------------------------------------------------------------------------------------------------
# Finite differences (float64)
# ------------------------------------------------------------------------------------------------

GRADCHECK = [
    # name, fn(x, w), needs weight
    ("gelu", lambda x, w: tl.nn.functional.gelu(x)),
    ("gelu_tanh", lambda x, w: tl.nn.functional.gelu(x, approximate="tanh")),
    ("elu", lambda x, w: tl.nn.functional.elu(x, 0.7)),
    ("softplus", lambda x, w: tl.nn.functional.softplus(x, 2.0)),
    ("mish", lambda x, w: tl.nn.functional.mish(x)),
    ("glu", lambda x, w: tl.nn.functional.glu(x, 0)),
    ("hardswish", lambda x, w: tl.nn.functional.hardswish(x)),
    ("softmin", lambda x, w: tl.nn.functional.softmin(x, 1)),
    ("prelu", lambda x, w: tl.nn.functional.prelu(x, w)),
]


@pytest.mark.parametrize("name,fn", cases(GRADCHECK))
def test_gradcheck(name, fn):
    rng = np.random.default_rng(7)
    # away from the kinks (|x| >= 0.2 and not near +-3)
    x = rng.uniform(0.2, 2.0, (2, 4)) * rng.choice([-1.0, 1.0], (2, 4))
    x = tl.tensor(x, dtype=tl.float64, requires_grad=True)
    w = tl.tensor([0.3, -0.2, 0.5, 0.1], dtype=tl.float64, requires_grad=True)
    assert tl.autograd.gradcheck(fn, (x, w))


# ------------------------------------------------------------------------------------------------
# Random activations: rrelu in training, gumbel_softmax
# ------------------------------------------------------------------------------------------------

def test_rrelu_training_slopes_and_gradient():
    n = 400_000
    x = tl.tensor(np.linspace(-2.0, 2.0, n), dtype=tl.float64, requires_grad=True)
    tl.manual_seed(11)
    out = tl.nn.functional.rrelu(x, 0.1, 0.3, training=True)
    assert type(out.grad_fn).__name__ == "RreluWithNoiseBackward0"
    out.backward(tl.ones(n, dtype=tl.float64))
    xv, ov, gv = x.detach().numpy(), out.detach().numpy(), x.grad.numpy()
    neg = xv < 0
    slopes = ov[neg] / xv[neg]
    assert ((slopes >= 0.1) & (slopes <= 0.3)).all()
    assert len(np.unique(slopes)) > n // 4, "each element draws its own slope"
    check_moments(slopes, 0.2, 0.2 ** 2 / 12, 0.2 ** 4 / 80, "slopes ~ U(0.1, 0.3)")
    np.testing.assert_array_equal(ov[~neg], xv[~neg])
    np.testing.assert_allclose(gv[neg], slopes, rtol=1e-12)
    np.testing.assert_array_equal(gv[~neg], 1.0)
    tl.manual_seed(11)
    again = tl.nn.functional.rrelu(x.detach(), 0.1, 0.3, training=True)
    np.testing.assert_array_equal(again.numpy(), ov)
    other = tl.nn.functional.rrelu(x.detach(), 0.1, 0.3, training=True)
    assert not np.array_equal(other.numpy(), ov), "the generator advances"


def test_rrelu_training_inplace():
    def go(T):
        x = T.tensor([-1.0, 2.0, -3.0], dtype=T.float64, requires_grad=True)
        y = x * 1
        out = F(T).rrelu(y, 0.25, 0.25, training=True, inplace=True)
        assert out is y
        out.sum().backward()
        return out, x.grad, type(out.grad_fn).__name__, y._version
    both(go)


def test_rrelu_training_dtypes():
    def go(T):
        x = -T.ones(3, dtype=T.bfloat16)
        return F(T).rrelu(x, 0.5, 0.5, training=True), F(T).rrelu(x.double(), training=True).dtype
    both(go)


def _names(t):
    """grad_fn names, depth first, with None for inputs that need no grad."""
    def walk(node):
        if node is None:
            return None
        return [type(node).__name__] + [walk(n) for n, _ in node.next_functions]
    return walk(t.grad_fn)


@pytest.mark.parametrize("hard", [False, True])
def test_gumbel_softmax_graph_and_samples(hard):
    def go(T):
        x = T.tensor([[0.5, -1.0, 2.0], [0.0, 0.3, -0.2]], dtype=T.float64, requires_grad=True)
        y = F(T).gumbel_softmax(x, tau=0.5, hard=hard)
        y.backward(T.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]], dtype=T.float64))
        return _names(y), y.dtype, tuple(y.shape)
    both(go)
    x = tl.tensor([[0.5, -1.0, 2.0], [0.0, 0.3, -0.2]], dtype=tl.float64)
    tl.manual_seed(5)
    y = tl.nn.functional.gumbel_softmax(x, hard=hard, dim=1).numpy()
    np.testing.assert_allclose(y.sum(1), 1.0, rtol=1e-12)
    if hard:
        assert set(np.unique(y)) <= {0.0, 1.0}
    tl.manual_seed(5)
    np.testing.assert_array_equal(tl.nn.functional.gumbel_softmax(x, hard=hard, dim=1).numpy(), y)


def test_gumbel_softmax_distribution_and_straight_through():
    logits = tl.tensor(np.log([0.2, 0.3, 0.5]), dtype=tl.float32)
    tl.manual_seed(0)
    y = tl.nn.functional.gumbel_softmax(logits.expand(200_000, 3), hard=True)
    check_frequencies(y.numpy().mean(0), [0.2, 0.3, 0.5], 200_000, "categories")
    # the hard sample's gradient is the soft sample's
    x = tl.tensor([[0.1, 0.2, 0.3, 0.4]], requires_grad=True)
    g = tl.tensor([[1.0, -2.0, 0.5, 3.0]])
    tl.manual_seed(1)
    tl.nn.functional.gumbel_softmax(x, hard=True).backward(g)
    hard_grad = x.grad.numpy().copy()
    x.grad = None
    tl.manual_seed(1)
    tl.nn.functional.gumbel_softmax(x, hard=False).backward(g)
    np.testing.assert_allclose(hard_grad, x.grad.numpy(), rtol=1e-6)


def test_gumbel_softmax_eps_warning():
    def go(T):
        return _warned(lambda: F(T).gumbel_softmax(T.zeros(2), eps=1e-5).shape)
    ref, got = both(go)
    assert got[1][0][2] == __file__


# ------------------------------------------------------------------------------------------------
# Traced (jax.jit): the same code runs on tracers
# ------------------------------------------------------------------------------------------------

def _many(x):
    Fn = tl.nn.functional
    return (Fn.relu6(x) + Fn.leaky_relu(x, 0.2) + Fn.elu(x) + Fn.selu(x) + Fn.celu(x)
            + Fn.gelu(x) + Fn.silu(x) + Fn.mish(x) + Fn.softplus(x) + Fn.softsign(x)
            + Fn.hardsigmoid(x) + Fn.hardswish(x) + Fn.tanhshrink(x) + Fn.softshrink(x)
            + Fn.hardshrink(x) + Fn.threshold(x, 0.1, 2.0) + Fn.rrelu(x) + Fn.logsigmoid(x)
            + Fn.softmax(x, 1) + Fn.log_softmax(x, 0) + Fn.softmin(x, 1)
            + Fn.glu(x.repeat(1, 2), 1) + Fn.prelu(x, tl.tensor([0.1, 0.2, 0.3]))
            + Fn.hardtanh(x * 1, inplace=True))


def test_traced_matches_eager():
    x = tl.tensor(np.random.default_rng(3).standard_normal((2, 3)), dtype=tl.float32)
    eager = _many(x).numpy()
    traced = jax.jit(to_jax_function(_many))(x._value())
    np.testing.assert_allclose(np.asarray(traced), eager, rtol=1e-6, atol=1e-6)


def _few(x):
    Fn = tl.nn.functional
    return (Fn.gelu(x) * Fn.hardtanh(x, -0.5, 0.5) + Fn.leaky_relu(x * 1, 0.1, inplace=True)
            + Fn.log_softmax(x, 1) + Fn.prelu(x, tl.tensor([0.1, 0.2, 0.3])))


def test_backward_under_jit():
    def grads(arr):
        x = tl.Tensor._wrap(arr).requires_grad_(True)
        _few(x).sum().backward()
        return x.grad._value()
    x = np.random.default_rng(4).standard_normal((2, 3)).astype(np.float32)
    eager = grads(jax.numpy.asarray(x))
    np.testing.assert_allclose(np.asarray(jax.jit(grads)(x)), np.asarray(eager), rtol=1e-5,
                               atol=1e-6)
