"""Parity tests for torchlike.nn.functional convolutions (torchlike/_ops/conv.py) against PyTorch.

Spec tables, one row per case: conv1d/2d/3d and conv_transpose1d/2d/3d over stride, padding
(ints, tuples, 'same' with odd and even kernels, 'valid'), dilation, groups, bias and unbatched
inputs; unfold/fold; float32 and float64 values, grad_fn and next_functions names and the
gradients of every input (check_op); finite differences in float64 (gradcheck); PyTorch's errors
with their messages; and the traced (jax.jit) path.
"""
import warnings

import jax
import numpy as np
import pytest
import torch

import torchlike as tl
from torchlike._ops import conv as conv_ops

from parity import A, both, cases, check_op

pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel")


def F(T):
    return T.nn.functional


# ------------------------------------------------------------------------------------------------
# Convolutions: values, grad_fn / next_functions, gradients of input, weight and bias
# ------------------------------------------------------------------------------------------------

X1, X2, X3 = (2, 4, 7), (2, 4, 6, 5), (1, 2, 4, 4, 3)
D = "float64"


def top(T, name):
    """torch.<name>; torchlike's own function until the top-level name is wired."""
    return getattr(T, name) if hasattr(T, name) else getattr(conv_ops, name)


CONV = [
    # name, fn(T, *tensors), inputs (float32 unless given; every input requires grad)
    ("conv1d", lambda T, x, w, b: F(T).conv1d(x, w, b), [A(X1), A((3, 4, 3)), A((3,))]),
    ("conv1d_stride_pad_f64", lambda T, x, w: F(T).conv1d(x, w, stride=2, padding=2),
     [A(X1, D), A((3, 4, 3), D)]),
    ("conv1d_dilation_groups", lambda T, x, w, b: F(T).conv1d(
        x, w, b, padding=(1,), dilation=2, groups=2), [A(X1), A((6, 2, 2)), A((6,))]),
    ("conv1d_same_even", lambda T, x, w: F(T).conv1d(x, w, padding="same"),
     [A(X1), A((3, 4, 4))]),
    ("conv1d_unbatched", lambda T, x, w, b: F(T).conv1d(x, w, b, padding="same"),
     [A((4, 7)), A((3, 4, 3)), A((3,))]),
    ("conv2d", lambda T, x, w, b: F(T).conv2d(x, w, b), [A(X2), A((3, 4, 3, 3)), A((3,))]),
    ("conv2d_f64", lambda T, x, w, b: F(T).conv2d(x, w, b, padding=1),
     [A(X2, D), A((3, 4, 3, 3), D), A((3,), D)]),
    ("conv2d_tuple_args", lambda T, x, w, b: T.nn.functional.conv2d(
        x, w, b, stride=(2, 1), padding=(1, 2), dilation=(1, 2)),
     [A(X2), A((3, 4, 3, 2)), A((3,))]),
    ("conv2d_list_args_no_grad", lambda T, x, w: F(T).conv2d(x, w, stride=[1, 2], padding=[0, 1]),
     [A(X2, grad=False), A((3, 4, 2, 2), grad=False)]),
    ("conv2d_groups_input_grad", lambda T, x, w: F(T).conv2d(x, w, groups=2, padding=1),
     [A(X2), A((6, 2, 3, 3), grad=False)]),
    ("conv2d_depthwise_f64", lambda T, x, w, b: F(T).conv2d(x, w, b, groups=4, padding=1),
     [A(X2, D), A((8, 1, 3, 3), D), A((8,), D)]),
    ("conv2d_same_even", lambda T, x, w, b: F(T).conv2d(x, w, b, padding="same"),
     [A(X2), A((3, 4, 2, 4)), A((3,))]),
    ("conv2d_same_dilated_no_grad", lambda T, x, w: F(T).conv2d(
        x, w, padding="same", dilation=(2, 1)), [A(X2, grad=False), A((3, 4, 2, 3), grad=False)]),
    ("conv2d_valid_no_grad", lambda T, x, w: F(T).conv2d(x, w, padding="valid", stride=2),
     [A(X2, grad=False), A((3, 4, 3, 3), grad=False)]),
    ("conv2d_unbatched_weight_grad", lambda T, x, w, b: F(T).conv2d(x, w, b, stride=2, padding=1),
     [A((4, 6, 5), grad=False), A((3, 4, 3, 3)), A((3,))]),
    ("torch.conv2d", lambda T, x, w, b: top(T, "conv2d")(x, w, b, 1, 1),
     [A(X2, grad=False), A((3, 4, 3, 3), grad=False), A((3,), grad=False)]),
    ("conv3d", lambda T, x, w, b: F(T).conv3d(x, w, b, padding=(1, 0, 1), stride=(1, 2, 1)),
     [A(X3), A((3, 2, 2, 2, 2)), A((3,))]),
    ("conv3d_unbatched_same_no_grad", lambda T, x, w: F(T).conv3d(x, w, padding="same"),
     [A((2, 4, 4, 3), grad=False), A((3, 2, 2, 3, 2), grad=False)]),
    ("conv_transpose1d", lambda T, x, w, b: F(T).conv_transpose1d(
        x, w, b, stride=3, padding=1, output_padding=2), [A(X1), A((4, 3, 3)), A((3,))]),
    ("conv_transpose1d_unbatched_no_grad", lambda T, x, w: F(T).conv_transpose1d(
        x, w, dilation=2), [A((4, 7), grad=False), A((4, 3, 3), grad=False)]),
    ("conv_transpose2d_f64", lambda T, x, w, b: F(T).conv_transpose2d(
        x, w, b, stride=2, padding=1, output_padding=1), [A(X2, D), A((4, 3, 3, 3), D),
                                                          A((3,), D)]),
    ("conv_transpose2d_all", lambda T, x, w, b: F(T).conv_transpose2d(
        x, w, b, stride=(2, 3), padding=(2, 1), output_padding=(1, 0), groups=2,
        dilation=(2, 1)), [A(X2), A((4, 3, 3, 2)), A((6,))]),
    ("conv_transpose2d_big_padding_no_grad", lambda T, x, w: F(T).conv_transpose2d(
        x, w, padding=2), [A(X2, grad=False), A((4, 2, 3, 3), grad=False)]),
    ("conv_transpose3d", lambda T, x, w, b: F(T).conv_transpose3d(x, w, b, stride=2),
     [A(X3), A((2, 3, 2, 2, 2)), A((3,))]),
    ("torch.conv_transpose2d", lambda T, x, w: top(T, "conv_transpose2d")(x, w, None, 2),
     [A(X2, grad=False), A((4, 3, 2, 2), grad=False)]),
]


@pytest.mark.parametrize("name,fn,inputs", cases(CONV))
def test_conv(name, fn, inputs):
    check_op(name, fn, inputs)


CONV_DTYPES = [
    # name, fn(T): integer and half-precision convolutions (no grad)
    ("conv2d_int64", lambda T: F(T).conv2d(T.arange(32).reshape(1, 2, 4, 4),
                                           T.arange(18).reshape(1, 2, 3, 3) - 9)),
    ("conv1d_int32", lambda T: F(T).conv1d(T.arange(8, dtype=T.int32).reshape(1, 2, 4),
                                           T.ones(3, 2, 2, dtype=T.int32), padding=1)),
    ("conv_transpose2d_int64", lambda T: F(T).conv_transpose2d(
        T.arange(8).reshape(1, 2, 2, 2), T.arange(8).reshape(2, 1, 2, 2), stride=2)),
    ("unfold_bool", lambda T: F(T).unfold(T.arange(18).reshape(1, 2, 3, 3) % 3 == 0, 2)),
    ("fold_bool", lambda T: F(T).fold(T.arange(16).reshape(1, 4, 4) % 3 == 0, 3, 2)),
    ("conv2d_float16", lambda T: F(T).conv2d(T.linspace(-1, 1, 32).reshape(1, 2, 4, 4).half(),
                                             T.linspace(0, 1, 18).reshape(1, 2, 3, 3).half())),
]


@pytest.mark.parametrize("name,fn", cases(CONV_DTYPES))
def test_conv_dtypes(name, fn):
    both(fn)


# ------------------------------------------------------------------------------------------------
# unfold (im2col) and fold (col2im)
# ------------------------------------------------------------------------------------------------

FOLD = [
    ("unfold", lambda T, x: F(T).unfold(x, 2), [A((2, 3, 4, 5))]),
    ("unfold_all_args_f64", lambda T, x: F(T).unfold(x, (2, 3), dilation=(1, 2), padding=1,
                                                     stride=(2, 1)), [A((2, 3, 5, 6), D)]),
    ("unfold_unbatched", lambda T, x: F(T).unfold(x, kernel_size=3, padding=1),
     [A((2, 4, 4))]),
    ("fold", lambda T, x: F(T).fold(x, (4, 5), 2), [A((2, 12, 12))]),
    ("fold_all_args_f64", lambda T, x: F(T).fold(x, (5, 6), (2, 3), dilation=(1, 2), padding=1,
                                                 stride=(2, 1)), [A((2, 18, 12), D)]),
    ("fold_unbatched", lambda T, x: F(T).fold(x, output_size=4, kernel_size=2, stride=2),
     [A((8, 4))]),
]


@pytest.mark.parametrize("name,fn,inputs", cases(FOLD))
def test_fold(name, fn, inputs):
    check_op(name, fn, inputs)


# ------------------------------------------------------------------------------------------------
# Errors: PyTorch's exception types and messages
# ------------------------------------------------------------------------------------------------

def r(T, *shape, dtype=None):
    return T.ones(*shape, dtype=dtype)


ERRORS = [
    # name, fn(T), message pattern
    ("conv2d_rank", lambda T: F(T).conv2d(r(T, 2, 3), r(T, 4, 3, 3, 3)),
     r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv2d, but got input of size: "
     r"\[2, 3\]"),
    ("conv1d_rank", lambda T: F(T).conv1d(r(T, 3), r(T, 4, 3, 3)),
     r"Expected 2D \(unbatched\) or 3D \(batched\) input to conv1d, but got input of size: \[3\]"),
    ("conv3d_rank", lambda T: F(T).conv3d(r(T, 1, 3, 4, 4, 4, 1), r(T, 4, 3, 3, 3, 3)),
     r"Expected 4D \(unbatched\) or 5D \(batched\) input to conv3d"),
    ("conv_transpose2d_rank", lambda T: F(T).conv_transpose2d(r(T, 3, 4), r(T, 3, 4, 3, 3)),
     r"input to conv_transpose2d, but got input of size: \[3, 4\]"),
    ("channels", lambda T: F(T).conv2d(r(T, 1, 5, 8, 8), r(T, 4, 3, 3, 3)),
     r"Given groups=1, weight of size \[4, 3, 3, 3\], expected input\[1, 5, 8, 8\] to have 3 "
     r"channels, but got 5 channels instead"),
    ("channels_unbatched", lambda T: F(T).conv2d(r(T, 5, 8, 8), r(T, 4, 3, 3, 3)),
     r"expected input\[1, 5, 8, 8\] to have 3 channels, but got 5 channels instead"),
    ("channels_groups", lambda T: F(T).conv2d(r(T, 1, 6, 8, 8), r(T, 4, 2, 3, 3), groups=2),
     r"Given groups=2, weight of size \[4, 2, 3, 3\], expected input\[1, 6, 8, 8\] to have 4 "
     "channels"),
    ("groups_divide_weight", lambda T: F(T).conv2d(r(T, 1, 6, 8, 8), r(T, 3, 2, 3, 3), groups=2),
     r"Given groups=2, expected weight to be divisible by 2 at dimension 0, but got weight of "
     r"size \[\[3, 2, 3, 3\]\] instead"),
    ("groups_zero", lambda T: F(T).conv2d(r(T, 1, 6, 8, 8), r(T, 4, 2, 3, 3), groups=0),
     "non-positive groups is not supported"),
    ("weight_empty", lambda T: F(T).conv2d(r(T, 1, 3, 4, 4), r(T, 0, 3, 3, 3)),
     r"expected weight to be at least 1 at dimension 0, but got weight of size \[0, 3, 3, 3\]"),
    ("weight_rank", lambda T: F(T).conv2d(r(T, 1, 3, 8, 8), r(T, 4, 3, 3)),
     r"expected stride to be a single integer value or a list of 1 values to match the "
     r"convolution dimensions, but got stride=\[1, 1\]"),
    ("weight_1d", lambda T: F(T).conv2d(r(T, 1, 3, 8, 8), r(T, 4)),
     "weight should have at least three dimensions"),
    ("stride_length", lambda T: F(T).conv2d(r(T, 1, 3, 8, 8), r(T, 4, 3, 3, 3), stride=(1, 1, 1)),
     r"a list of 2 values to match the convolution dimensions, but got stride=\[1, 1, 1\]"),
    ("padding_length", lambda T: F(T).conv2d(r(T, 1, 3, 8, 8), r(T, 4, 3, 3, 3),
                                             padding=(1, 1, 1)), r"but got padding=\[1, 1, 1\]"),
    ("kernel_too_big", lambda T: F(T).conv2d(r(T, 1, 3, 2, 2), r(T, 4, 3, 3, 3)),
     r"Calculated padded input size per channel: \(2 x 2\). Kernel size: \(3 x 3\). Kernel size "
     "can't be greater than actual input size"),
    ("kernel_too_big_dilated", lambda T: F(T).conv2d(r(T, 1, 3, 4, 4), r(T, 4, 3, 3, 3),
                                                     dilation=2), r"Kernel size: \(5 x 5\)"),
    ("same_strided", lambda T: F(T).conv2d(r(T, 1, 3, 8, 8), r(T, 4, 3, 3, 3), stride=2,
                                           padding="same"),
     "padding='same' is not supported for strided convolutions"),
    ("bad_padding_string", lambda T: F(T).conv1d(r(T, 1, 3, 8), r(T, 4, 3, 3), padding="full"),
     "Invalid padding string: 'full'"),
    ("negative_padding", lambda T: F(T).conv2d(r(T, 1, 3, 8, 8), r(T, 4, 3, 3, 3),
                                               padding=(1, -1)), "negative padding"),
    ("zero_stride", lambda T: F(T).conv2d(r(T, 1, 3, 8, 8), r(T, 4, 3, 3, 3), stride=0),
     "non-positive stride is not supported"),
    ("zero_dilation", lambda T: F(T).conv2d(r(T, 1, 3, 8, 8), r(T, 4, 3, 3, 3), dilation=0),
     r"dilation should be greater than zero, but got \[0, 0\]"),
    ("zero_dilation_1d", lambda T: F(T).conv1d(r(T, 1, 3, 8), r(T, 4, 3, 3), dilation=0),
     r"dilation should be greater than zero, but got \[1, 0\]"),
    ("bias_size", lambda T: F(T).conv2d(r(T, 1, 3, 8, 8), r(T, 4, 3, 3, 3), r(T, 3)),
     r"Given weight of size \[4, 3, 3, 3\], expected bias to be 1-dimensional with 4 elements, "
     r"but got bias of size \[3\] instead"),
    ("dtype_mismatch", lambda T: F(T).conv2d(r(T, 1, 3, 8, 8), r(T, 4, 3, 3, 3).double()),
     "expected scalar type Float but found Double"),
    ("dtype_mismatch_long", lambda T: F(T).conv2d(r(T, 1, 3, 8, 8), r(T, 4, 3, 3, 3).long()),
     "expected scalar type Float but found Long"),
    ("bias_dtype", lambda T: F(T).conv2d(r(T, 1, 3, 8, 8).double(), r(T, 4, 3, 3, 3).double(),
                                         r(T, 4)),
     r"Input type \(double\) and bias type \(float\) should be the same"),
    ("bool", lambda T: F(T).conv2d(r(T, 1, 3, 5, 5).bool(), r(T, 4, 3, 3, 3).bool()),
     "not implemented for 'Bool'"),
    ("padding_float", lambda T: F(T).conv2d(r(T, 1, 3, 5, 5), r(T, 4, 3, 3, 3), padding=1.0),
     None),
    ("transposed_channels", lambda T: F(T).conv_transpose2d(r(T, 1, 5, 4, 4), r(T, 3, 4, 3, 3)),
     r"Given transposed=1, weight of size \[3, 4, 3, 3\], expected input\[1, 5, 4, 4\] to have "
     r"3 channels, but got 5 channels instead"),
    ("transposed_output_padding", lambda T: F(T).conv_transpose2d(
        r(T, 1, 3, 4, 4), r(T, 3, 4, 3, 3), output_padding=1),
     "output padding must be smaller than either stride or dilation, but got "
     "output_padding_height: 1 output_padding_width: 1 stride_height: 1 stride_width: 1 "
     "dilation_height: 1 dilation_width: 1"),
    ("transposed_output_padding_1d", lambda T: F(T).conv_transpose1d(
        r(T, 1, 3, 4), r(T, 3, 4, 3), output_padding=1), "output_padding_height: 0 "
     "output_padding_width: 1 stride_height: 1 stride_width: 1"),
    ("transposed_negative_output_padding", lambda T: F(T).conv_transpose1d(
        r(T, 1, 3, 4), r(T, 3, 4, 3), output_padding=-1), "negative output_padding"),
    ("transposed_output_too_small", lambda T: F(T).conv_transpose2d(
        r(T, 1, 3, 1, 1), r(T, 3, 4, 1, 1), padding=2),
     r"Given input size per channel: \(1 x 1\). Calculated output size per channel: "
     r"\(-3 x -3\). Output size is too small"),
    ("transposed_bias", lambda T: F(T).conv_transpose2d(r(T, 1, 4, 4, 4), r(T, 4, 2, 3, 3),
                                                        r(T, 3)),
     r"Given transposed=1, weight of size \[4, 2, 3, 3\], expected bias to be 1-dimensional "
     "with 2 elements"),
    ("transposed_same", lambda T: F(T).conv_transpose2d(r(T, 1, 3, 4, 4), r(T, 3, 4, 3, 3),
                                                        padding="same"),
     "argument 'padding' must be tuple of ints, not str"),
    ("unfold_rank", lambda T: F(T).unfold(r(T, 3, 4), 2), None),
    ("unfold_5d", lambda T: F(T).unfold(r(T, 1, 3, 2, 2, 2), 1),
     r"Expected 3D or 4D \(batch mode\) tensor with possibly 0 batch size and other non-zero "
     r"dimensions for input, but got: \[1, 3, 2, 2, 2\]"),
    ("unfold_too_small", lambda T: F(T).unfold(r(T, 1, 3, 2, 2), 3),
     r"Given input with spatial size \(2, 2\), kernel_size=\(3, 3\), dilation=\(1, 1\), "
     r"padding=\(0, 0\), calculated shape of the array of sliding blocks as \(0, 0\), but its "
     "components must be at least one."),
    ("fold_blocks", lambda T: F(T).fold(r(T, 1, 12, 8), (4, 4), 2),
     r"expected size of input's dimension 2 to match the calculated number of sliding blocks "
     r"3 \* 3 = 9, but got input.size\(2\)=8."),
    ("fold_channels", lambda T: F(T).fold(r(T, 1, 10, 9), (4, 4), 2),
     r"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
     r"got input.size\(1\)=10 and kernel_size=\(2, 2\)."),
    ("unfold_kernel_length", lambda T: F(T).unfold(r(T, 1, 2, 4, 4), (2, 2, 2)),
     "It is expected kernel_size equals to 2, but got size 3"),
    ("unfold_long", lambda T: F(T).unfold(r(T, 1, 2, 4, 4, dtype=T.int64), 2),
     "\"im2col_out_cpu\" not implemented for 'Long'"),
    ("fold_no_blocks", lambda T: F(T).fold(r(T, 1, 4, 9), 1, 2),
     r"calculated number of sliding blocks 0 \* 0 = 0, but got input.size\(2\)=9."),
    ("fold_rank", lambda T: F(T).fold(r(T, 1, 12, 9, 1), (4, 4), 2),
     r"Expected 2D or 3D \(batch mode\) tensor for input with possibly 0 batch size and non-zero "
     r"dimensions for input, but got: \[1, 12, 9, 1\]"),
]


@pytest.mark.parametrize("name,fn,match", cases(ERRORS))
def test_errors(name, fn, match):
    both(fn, match=match, raises=True)


def test_same_even_kernel_warns():
    with pytest.warns(UserWarning, match="padding='same' with even kernel lengths"):
        F(tl).conv2d(tl.ones(1, 1, 4, 4), tl.ones(1, 1, 2, 2), padding="same")


# ------------------------------------------------------------------------------------------------
# Finite differences (float64), jax tracing, public surface
# ------------------------------------------------------------------------------------------------

def _rand(*shape, seed=0):
    return tl.tensor(np.random.default_rng(seed).uniform(-1, 1, shape), requires_grad=True)


def test_gradcheck():
    """conv2d (strided, grouped), conv_transpose2d (output_padding, dilation) and unfold in one
    float64 finite-difference check (each new shape compiles gradcheck's helpers again)."""
    def fn(x, w, b, wt):
        y = F(tl).conv2d(x, w, b, stride=2, padding=1, groups=2)
        t = F(tl).conv_transpose2d(y, wt, stride=2, padding=1, output_padding=1, dilation=2)
        return t, F(tl).unfold(t, 2, padding=1, stride=2)
    shapes = [(1, 2, 3, 3), (2, 1, 3, 3), (2,), (2, 1, 2, 2)]
    assert tl.autograd.gradcheck(fn, tuple(_rand(*s, seed=i) for i, s in enumerate(shapes)))


def _program(x, w, b):
    """conv2d ('same', even kernel) and conv_transpose2d; the loss and the gradients of x, w
    and b (backward inside the traced function)."""
    y = F(tl).conv2d(x, w, b, padding="same")
    loss = F(tl).conv_transpose2d(y, w, stride=2, output_padding=1).pow(2).sum()
    gx, gw, gb = tl.autograd.grad(loss, (x, w, b))
    return loss, gx, gw, gb


def test_traced_matches_eager():
    x, w, b = _rand(1, 2, 4, 4), _rand(2, 2, 2, 2, seed=1), _rand(2, seed=2)

    def pure(*arrays):
        out = _program(*[tl.Tensor._wrap(a).requires_grad_() for a in arrays])
        return tuple(o._value() for o in out)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eager = _program(x, w, b)
        traced = jax.jit(pure)(x._value(), w._value(), b._value())
    for e, t in zip(eager, traced):
        np.testing.assert_allclose(np.asarray(t), e.detach().numpy(), rtol=1e-12)


def test_double_backward():
    def go(T):
        x = T.tensor(np.linspace(-1, 1, 240).reshape(X2), requires_grad=True)
        w = T.tensor(np.linspace(-1, 1, 108).reshape(3, 4, 3, 3), requires_grad=True)
        g, = T.autograd.grad(F(T).conv2d(x, w, padding=1).pow(2).sum(), w, create_graph=True)
        g.pow(2).sum().backward()
        return g.detach(), x.grad, w.grad
    both(go)


def test_public_names_exist_in_torch():
    for name in conv_ops.PUBLIC:
        assert hasattr(torch, name), name
