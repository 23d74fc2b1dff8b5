"""Parity tests for torchlike.nn.functional pooling (torchlike/_ops/pool.py) against PyTorch.

Spec tables, one row per case: max/avg pooling (1-d, 2-d, 3-d; stride, padding, dilation,
ceil_mode, count_include_pad, divisor_override, return_indices, unbatched inputs, integer
inputs), adaptive avg/max pooling, lp pooling and max unpooling: values, indices, dtypes,
grad_fn and next_functions names and gradients (check_op), ties (the gradient goes to the first
maximum), finite differences in float64 (gradcheck), PyTorch's errors and messages, and the
traced (jax.jit) path.
"""
import jax
import numpy as np
import pytest
import torch

import torchlike as tl
from torchlike._ops import pool as pool_ops

from parity import A, both, cases, check_op

D = "float64"
X1, X2, X3 = (2, 3, 9), (2, 3, 7, 6), (1, 2, 5, 4, 5)


def F(T):
    return T.nn.functional


def top(T, name):
    """torch.<name>; torchlike's own function until the top-level name is wired."""
    return getattr(T, name) if hasattr(T, name) else getattr(pool_ops, name)


def tied(x):
    """x rounded to integers (many equal values) with x's gradient passing straight through."""
    return x - x.detach() + x.detach().round()


# ------------------------------------------------------------------------------------------------
# Max pooling
# ------------------------------------------------------------------------------------------------

POOL = [
    # name, fn(T, *tensors), inputs (float32 unless given); tuple results compare values only
    ("max_pool2d", lambda T, x: F(T).max_pool2d(x, 2), [A(X2)]),
    ("max_pool2d_all_args_f64", lambda T, x: F(T).max_pool2d(x, 3, 2, 1, 2, True), [A(X2, D)]),
    ("max_pool2d_ties", lambda T, x: F(T).max_pool2d(tied(x), 3, 2, 1, ceil_mode=True),
     [A(X2)]),
    ("max_pool2d_indices", lambda T, x: F(T).max_pool2d(x, 3, 2, 1, ceil_mode=True,
                                                        return_indices=True), [A(X2)]),
    ("max_pool2d_indices_ties_unbatched", lambda T, x: F(T).max_pool2d(
        tied(x), (2, 3), (1, 2), (1, 0), return_indices=True), [A((3, 5, 6))]),
    ("max_pool2d_tuples_unbatched", lambda T, x: F(T).max_pool2d(x, (2, 3), (1, 2), (1, 0)),
     [A((3, 5, 6))]),
    ("max_pool2d_with_indices", lambda T, x: F(T).max_pool2d_with_indices(x, 2, dilation=(1, 2)),
     [A(X2)]),
    ("max_pool2d_int64", lambda T, x: F(T).max_pool2d(x, 2, 1, 1, return_indices=True),
     [A((1, 2, 4, 4), "int64")]),
    ("torch.max_pool2d", lambda T, x: top(T, "max_pool2d")(x, 3, 2, 1, 1, True),
     [A(X2, grad=False)]),
    ("max_pool1d", lambda T, x: F(T).max_pool1d(x, 3, 2, 1, ceil_mode=True), [A(X1)]),
    ("max_pool1d_ties_f64", lambda T, x: F(T).max_pool1d(tied(x), 4, 1, 2, 1), [A(X1, D)]),
    ("max_pool1d_indices_unbatched", lambda T, x: F(T).max_pool1d(
        x, 2, padding=1, dilation=2, return_indices=True), [A((3, 9))]),
    ("torch.max_pool1d_with_indices", lambda T, x: top(T, "max_pool1d_with_indices")(x, 3),
     [A(X1)]),
    ("max_pool3d", lambda T, x: F(T).max_pool3d(x, 2, ceil_mode=True), [A(X3)]),
    ("max_pool3d_indices", lambda T, x: F(T).max_pool3d(
        x, (2, 1, 3), (1, 2, 2), (1, 0, 1), (1, 2, 1), return_indices=True), [A(X3)]),
    ("max_pool3d_with_indices_unbatched", lambda T, x: F(T).max_pool3d_with_indices(x, 2),
     [A(X3[1:])]),
    # --- average pooling
    ("avg_pool2d", lambda T, x: F(T).avg_pool2d(x, 3, 2, 1), [A(X2)]),
    ("avg_pool2d_ceil_exclude_pad_f64", lambda T, x: F(T).avg_pool2d(
        x, 3, 2, 1, ceil_mode=True, count_include_pad=False), [A(X2, D)]),
    ("avg_pool2d_ceil_include_pad", lambda T, x: F(T).avg_pool2d(
        x, (3, 2), (2, 3), (1, 1), True, True), [A(X2)]),
    ("avg_pool2d_divisor", lambda T, x: F(T).avg_pool2d(x, 2, 1, 1, divisor_override=3),
     [A(X2)]),
    ("avg_pool2d_int64", lambda T, x: F(T).avg_pool2d(x, 3, 2, 1, True, False),
     [A((1, 2, 5, 5), "int64")]),
    ("avg_pool1d", lambda T, x: F(T).avg_pool1d(x, 3, 2, 1, True, False), [A(X1)]),
    ("avg_pool1d_unbatched", lambda T, x: F(T).avg_pool1d(x, 4, padding=2), [A((3, 9))]),
    ("torch.avg_pool1d", lambda T, x: top(T, "avg_pool1d")(x, 2, 1, 1, False, False),
     [A(X1, grad=False)]),
    ("avg_pool3d", lambda T, x: F(T).avg_pool3d(x, 2, 2, 1, True, False), [A(X3)]),
    ("avg_pool3d_divisor_unbatched", lambda T, x: F(T).avg_pool3d(x, 3, divisor_override=5),
     [A((2, 4, 3, 5))]),
    # --- adaptive pooling
    ("adaptive_avg_pool2d_f64", lambda T, x: F(T).adaptive_avg_pool2d(x, (3, 4)), [A(X2, D)]),
    ("adaptive_avg_pool2d_larger", lambda T, x: F(T).adaptive_avg_pool2d(x, (9, None)),
     [A(X2)]),
    ("adaptive_avg_pool2d_one", lambda T, x: F(T).adaptive_avg_pool2d(x, 1), [A(X2)]),
    ("adaptive_avg_pool1d_unbatched", lambda T, x: F(T).adaptive_avg_pool1d(x, 4),
     [A((3, 9))]),
    ("adaptive_avg_pool1d_one", lambda T, x: F(T).adaptive_avg_pool1d(x, 1), [A(X1)]),
    ("torch.adaptive_avg_pool1d", lambda T, x: top(T, "adaptive_avg_pool1d")(x, 5),
     [A(X1, grad=False)]),
    ("adaptive_avg_pool3d", lambda T, x: F(T).adaptive_avg_pool3d(x, (2, 3, None)), [A(X3)]),
    ("adaptive_max_pool2d_ties", lambda T, x: F(T).adaptive_max_pool2d(tied(x), (3, 4)),
     [A(X2)]),
    ("adaptive_max_pool2d_indices", lambda T, x: F(T).adaptive_max_pool2d(
        x, (9, None), return_indices=True), [A(X2)]),
    ("adaptive_max_pool1d_f64", lambda T, x: F(T).adaptive_max_pool1d(x, 4), [A(X1, D)]),
    ("adaptive_max_pool1d_indices", lambda T, x: F(T).adaptive_max_pool1d_with_indices(x, 4),
     [A((3, 9))]),
    ("adaptive_max_pool3d_indices", lambda T, x: F(T).adaptive_max_pool3d(
        x, (2, 3, 1), return_indices=True), [A(X3)]),
    # --- lp pooling (PyTorch's composite)
    ("lp_pool1d", lambda T, x: F(T).lp_pool1d(x, 2, 3, 2), [A(X1, dom="pos")]),
    ("lp_pool2d_ceil", lambda T, x: F(T).lp_pool2d(x, 3, (2, 3), ceil_mode=True),
     [A(X2, dom="pos")]),
    ("lp_pool2d_p1_f64", lambda T, x: F(T).lp_pool2d(x, 1, 2), [A(X2, D, dom="nz")]),
    ("lp_pool3d", lambda T, x: F(T).lp_pool3d(x, 2.5, 2, 1), [A(X3, dom="pos")]),
    # --- max unpooling
    ("max_unpool2d", lambda T, x: F(T).max_unpool2d(*F(T).max_pool2d(
        x, 2, return_indices=True), 2), [A(X2)]),
    ("max_unpool2d_output_size", lambda T, x: F(T).max_unpool2d(*F(T).max_pool2d(
        x, 2, return_indices=True), 2, output_size=X2[2:]), [A(X2)]),
    ("max_unpool2d_overlapping_f64", lambda T, x: F(T).max_unpool2d(*F(T).max_pool2d(
        tied(x), 3, 1, 1, return_indices=True), 3, 1, 1), [A(X2, D)]),
    ("max_unpool2d_unbatched", lambda T, x: F(T).max_unpool2d(*F(T).max_pool2d(
        x, (2, 3), return_indices=True), (2, 3), output_size=(1, 3, 5, 6)), [A((3, 5, 6))]),
    ("max_unpool1d", lambda T, x: F(T).max_unpool1d(*F(T).max_pool1d(
        x, 2, return_indices=True), 2, output_size=(9,)), [A(X1)]),
    ("max_unpool3d", lambda T, x: F(T).max_unpool3d(*F(T).max_pool3d(
        x, 2, return_indices=True), 2, output_size=X3[2:]), [A(X3)]),
]


@pytest.mark.parametrize("name,fn,inputs", cases(POOL))
def test_pool(name, fn, inputs):
    check_op(name, fn, inputs)


INF, NAN = float("inf"), float("nan")
ROW = [[INF, 1.0, 2.0, NAN, 4.0, -INF, 0.5]]

VALUES = [
    # name, fn(T): no gradients; non-finite values, half precision, empty tensors
    ("max_pool1d_nan_inf", lambda T: F(T).max_pool1d(T.tensor([ROW]), 2, 1,
                                                     return_indices=True)),
    ("avg_pool1d_nan_inf", lambda T: F(T).avg_pool1d(T.tensor([ROW]), 2)),
    ("adaptive_avg_pool1d_nan_inf", lambda T: F(T).adaptive_avg_pool1d(T.tensor([ROW]), 3)),
    ("adaptive_max_pool1d_nan_inf", lambda T: F(T).adaptive_max_pool1d(T.tensor([ROW]), 3,
                                                                       True)),
    ("max_pool2d_float16", lambda T: F(T).max_pool2d(T.linspace(-2, 2, 50).reshape(
        1, 2, 5, 5).half(), 2, return_indices=True)),
    ("avg_pool2d_bfloat16", lambda T: F(T).avg_pool2d(T.linspace(-2, 2, 50).reshape(
        1, 2, 5, 5).bfloat16(), 3, 1, 1, count_include_pad=False)),
    ("adaptive_avg_pool2d_float16", lambda T: F(T).adaptive_avg_pool2d(T.linspace(
        -2, 2, 50).reshape(1, 2, 5, 5).half(), 3)),
    ("max_pool2d_empty_batch", lambda T: F(T).max_pool2d(T.ones(0, 2, 4, 4), 2,
                                                         return_indices=True)),
    ("avg_pool3d_empty_batch", lambda T: F(T).avg_pool3d(T.ones(0, 2, 4, 4, 4), 2)),
    ("adaptive_avg_pool2d_zero_output", lambda T: F(T).adaptive_avg_pool2d(T.ones(1, 2, 4, 4),
                                                                           (0, 2))),
    ("adaptive_max_pool2d_zero_output", lambda T: F(T).adaptive_max_pool2d(T.ones(1, 2, 4, 4),
                                                                           0, True)),
]


@pytest.mark.parametrize("name,fn", cases(VALUES))
def test_values(name, fn):
    both(fn)


# ------------------------------------------------------------------------------------------------
# Errors: PyTorch's exception types and messages
# ------------------------------------------------------------------------------------------------

def r(T, *shape, dtype=None):
    return T.ones(*shape, dtype=dtype)


def idx(T, *shape, value=0):
    return T.full(shape, value, dtype=T.int64)


ERRORS = [
    # name, fn(T), message pattern (None: the exception type only)
    ("max_pool2d_rank", lambda T: F(T).max_pool2d(r(T, 2, 3), 2),
     r"non-empty 3D or 4D \(batch mode\) tensor expected for input"),
    ("max_pool3d_rank", lambda T: F(T).max_pool3d(r(T, 2, 3, 3), 2),
     r"non-empty 4D or 5D \(batch mode\) tensor expected for input"),
    ("max_pool2d_pad", lambda T: F(T).max_pool2d(r(T, 1, 3, 8, 8), 2, padding=2),
     "pad should be at most half of effective kernel size, but got pad=2, kernel_size=2 and "
     "dilation=1"),
    ("max_pool2d_pad_dilated", lambda T: F(T).max_pool2d(r(T, 1, 3, 8, 8), 2, padding=2,
                                                         dilation=3),
     "pad should be smaller than or equal to half of kernel size, but got padW = 2, padH = 2, "
     "kW = 2, kH = 2"),
    ("max_pool3d_pad_dilated", lambda T: F(T).max_pool3d(r(T, 1, 2, 8, 8, 8), 2, padding=2,
                                                         dilation=3),
     "pad should be smaller than or equal to half of kernel size, but got kT: 2 kW: 2 kH: 2 "
     "padT: 2 padW: 2 padH: 2"),
    ("max_pool2d_too_small", lambda T: F(T).max_pool2d(r(T, 1, 3, 2, 2), 3),
     r"Given input size: \(3x2x2\). Calculated output size: \(3x0x0\). Output size is too "
     "small"),
    ("max_pool3d_too_small", lambda T: F(T).max_pool3d(r(T, 1, 2, 1, 8, 8), 2),
     r"Given input size: \(2x1x8x8\). Calculated output size: \(2x0x4x4\)"),
    ("max_pool2d_stride_zero", lambda T: F(T).max_pool2d(r(T, 1, 3, 8, 8), 2, stride=0),
     "stride should not be zero"),
    ("max_pool2d_kernel_zero", lambda T: F(T).max_pool2d(r(T, 1, 3, 8, 8), 0, 1),
     "kernel size should be greater than zero, but got kH: 0 kW: 0"),
    ("max_pool2d_negative_pad", lambda T: F(T).max_pool2d(r(T, 1, 3, 8, 8), 2, 2, -1),
     "pad must be non-negative, but got pad: -1"),
    ("max_pool2d_dilation_zero", lambda T: F(T).max_pool2d(r(T, 1, 3, 8, 8), 2, dilation=0),
     "dilation should be greater than zero, but got dilationH: 0 dilationW: 0"),
    ("max_pool3d_dilation_zero", lambda T: F(T).max_pool3d(r(T, 1, 2, 4, 4, 4), 2,
                                                           dilation=(1, 0, 1)),
     "dilation should be greater than zero, but got dilationT: 1 dilationH: 0 dilationW: 1"),
    ("max_pool2d_kernel_length", lambda T: F(T).max_pool2d(r(T, 1, 3, 8, 8), (2, 2, 2)),
     "max_pool2d: kernel_size must either be a single int, or a tuple of two ints"),
    ("max_pool3d_stride_length", lambda T: F(T).max_pool3d(r(T, 1, 2, 4, 4, 4), 2, (1, 1)),
     "max_pool3d: stride must either be omitted, a single int, or a tuple of three ints"),
    ("max_pool2d_empty_channels", lambda T: F(T).max_pool2d(r(T, 1, 0, 8, 8), 2),
     r"Expected 3D or 4D \(batch mode\) tensor with optional 0 dim batch size for input, but "
     r"got:\[1, 0, 8, 8\]"),
    ("max_pool3d_empty", lambda T: F(T).max_pool3d(r(T, 1, 2, 0, 8, 8), 2),
     r"Expected input's non-batch dimensions to have positive length, but input has a shape "
     r"of \[1, 2, 0, 8, 8\] and non-batch dimension 0 has length zero!"),
    ("max_pool2d_bool", lambda T: F(T).max_pool2d(r(T, 1, 2, 4, 4, dtype=T.bool), 2),
     "\"max_pool2d\" not implemented for 'Bool'"),
    ("max_pool1d_rank", lambda T: F(T).max_pool1d(r(T, 5), 2),
     r"max_pool1d: Expected 2D or 3D \(batch mode\) tensor with optional 0 dim batch size for "
     r"input, but got:\[5\]"),
    ("max_pool1d_indices_rank", lambda T: F(T).max_pool1d(r(T, 5), 2, return_indices=True),
     "Expected 2 to 3 dimensions, but got 1-dimensional tensor for argument #1 'self' "
     r"\(while checking arguments for max_pool1d\)"),
    ("max_pool1d_pad", lambda T: F(T).max_pool1d(r(T, 1, 2, 8), 3, 1, 2),
     "max_pool1d\\(\\) padding should be at most half of kernel size, but got padding=2 and "
     "kernel_size=3"),
    ("max_pool1d_indices_pad", lambda T: F(T).max_pool1d(r(T, 1, 2, 8), 3, 1, 2,
                                                         return_indices=True),
     "pad should be at most half of effective kernel size"),
    ("max_pool1d_too_small", lambda T: F(T).max_pool1d(r(T, 1, 2, 1), 2),
     r"max_pool1d\(\) Invalid computed output size: 0"),
    ("max_pool1d_kernel_zero", lambda T: F(T).max_pool1d(r(T, 1, 2, 8), 0),
     r"max_pool1d\(\) kernel_size must be greater than zero, but got 0"),
    ("max_pool1d_kernel_length", lambda T: F(T).max_pool1d(r(T, 1, 2, 8), (2, 2)),
     r"max_pool1d\(\) kernel_size must be an int, list of ints or tuple of ints of size 1 but "
     "got size 2"),
    ("max_pool1d_indices_kernel_length", lambda T: F(T).max_pool1d(
        r(T, 1, 2, 8), (2, 2), return_indices=True),
     r"max_pool1d\(\) argument 'kernel_size' should contain one int \(got 2\)"),
    ("max_pool1d_long", lambda T: F(T).max_pool1d(r(T, 1, 2, 8, dtype=T.int64), 2),
     "\"max_pool1d_impl\" not implemented for 'Long'"),
    ("avg_pool2d_rank", lambda T: F(T).avg_pool2d(r(T, 2, 3), 2), r"Dimension out of range"),
    ("avg_pool2d_rank5", lambda T: F(T).avg_pool2d(r(T, 1, 1, 2, 8, 8), 2),
     r"Expected 3D or 4D \(batch mode\) tensor with optional 0 dim batch size for input, but "
     r"got:\[1, 1, 2, 8, 8\]"),
    ("avg_pool1d_rank", lambda T: F(T).avg_pool1d(r(T, 3), 2),
     r"\(while checking arguments for avg_pool1d\)"),
    ("avg_pool2d_pad", lambda T: F(T).avg_pool2d(r(T, 1, 3, 8, 8), 2, padding=2),
     "pad should be at most half of effective kernel size, but got pad=2, kernel_size=2 and "
     "dilation=1"),
    ("avg_pool2d_too_small", lambda T: F(T).avg_pool2d(r(T, 1, 3, 2, 2), 3),
     r"Given input size: \(3x2x2\). Calculated output size: \(3x0x0\). Output size is too "
     "small"),
    ("avg_pool3d_too_small", lambda T: F(T).avg_pool3d(r(T, 1, 2, 1, 8, 8), 2, padding=1),
     r"input image \(T: 1 H: 8 W: 8\) smaller than kernel size \(kT: 2 kH: 2 kW: 2\)"),
    ("avg_pool2d_divisor_zero", lambda T: F(T).avg_pool2d(r(T, 1, 3, 8, 8), 2,
                                                          divisor_override=0),
     "divisor must be not zero"),
    ("avg_pool3d_kernel_length", lambda T: F(T).avg_pool3d(r(T, 1, 2, 4, 4, 4), (2, 2)),
     "avg_pool3d: kernel_size must be a single int, or a tuple of three ints"),
    ("avg_pool1d_kernel_length", lambda T: F(T).avg_pool1d(r(T, 1, 2, 8), (2, 2)),
     r"avg_pool1d\(\) argument 'kernel_size' should contain one int \(got 2\)"),
    ("avg_pool2d_bool", lambda T: F(T).avg_pool2d(r(T, 1, 2, 4, 4, dtype=T.bool), 2),
     "\"avg_pool2d\" not implemented for 'Bool'"),
    ("adaptive_avg_pool2d_rank", lambda T: F(T).adaptive_avg_pool2d(r(T, 2), 2),
     r"adaptive_avg_pool2d\(\): Expected 3D or 4D tensor, but got \[2\]"),
    ("adaptive_max_pool2d_rank", lambda T: F(T).adaptive_max_pool2d(r(T, 2), 2),
     r"adaptive_max_pool2d\(\): Expected 3D or 4D tensor, but got: \[2\]"),
    ("adaptive_avg_pool2d_output_length", lambda T: F(T).adaptive_avg_pool2d(
        r(T, 1, 2, 4, 4), (2, 2, 2)), "adaptive_avg_pool2d: output_size must be 2"),
    ("adaptive_avg_pool3d_negative", lambda T: F(T).adaptive_avg_pool3d(r(T, 1, 2, 4, 4, 4), -1),
     "adaptive_avg_pool3d: elements of output_size must be greater than or equal to 0 but "
     "received {-1, -1,-1}"),
    ("adaptive_max_pool2d_negative", lambda T: F(T).adaptive_max_pool2d(r(T, 1, 2, 4, 4), -1),
     r"Trying to create tensor with negative dimension -1: \[1, 2, -1, -1\]"),
    ("adaptive_avg_pool2d_empty", lambda T: F(T).adaptive_avg_pool2d(r(T, 1, 2, 0, 4), 2),
     r"adaptive_avg_pool2d\(\): Expected input to have non-zero size for non-batch dimensions, "
     r"but input has sizes \[1, 2, 0, 4\] with dimension 2 being empty"),
    ("adaptive_max_pool2d_empty_channels", lambda T: F(T).adaptive_max_pool2d(
        r(T, 1, 0, 4, 4), 2), r"with dimension 1 being empty"),
    ("adaptive_max_pool1d_empty", lambda T: F(T).adaptive_max_pool1d(r(T, 1, 2, 0), 2),
     r"adaptive_max_pool1d\(\): Expected input to have non-zero size for non-batch dimensions"),
    ("adaptive_avg_pool1d_output_length", lambda T: F(T).adaptive_avg_pool1d(
        r(T, 1, 2, 4), (2, 2)),
     r"adaptive_avg_pool1d\(\) argument 'output_size' should contain one int \(got 2\)"),
    ("adaptive_avg_pool2d_long", lambda T: F(T).adaptive_avg_pool2d(
        r(T, 1, 2, 4, 4, dtype=T.int64), 2), "\"adaptive_avg_pool2d\" not implemented for 'Long'"),
    ("adaptive_max_pool3d_long", lambda T: F(T).adaptive_max_pool3d(
        r(T, 1, 2, 4, 4, 4, dtype=T.int64), 2),
     "\"adaptive_max_pool3d_cpu\" not implemented for 'Long'"),
    ("max_unpool2d_output_size", lambda T: F(T).max_unpool2d(
        r(T, 1, 3, 4, 4), idx(T, 1, 3, 4, 4), 2, output_size=(10, 10)),
     r'invalid output_size "\(10, 10\)" \(dim 0 must be between 6 and 10\)'),
    ("max_unpool2d_output_size_length", lambda T: F(T).max_unpool2d(
        r(T, 1, 3, 4, 4), idx(T, 1, 3, 4, 4), 2, output_size=(9, 9, 9)),
     "output_size should be a sequence containing 2 or 4 elements, but it has a length of '3'"),
    ("max_unpool2d_invalid_index", lambda T: F(T).max_unpool2d(
        r(T, 1, 3, 4, 4), idx(T, 1, 3, 4, 4, value=64), 2),
     r"Found an invalid max index: 64 \(output volumes are of size 8x8\)"),
    ("max_unpool1d_invalid_index", lambda T: F(T).max_unpool1d(
        r(T, 1, 3, 4), idx(T, 1, 3, 4, value=-1), 2),
     r"Found an invalid max index: -1 \(output volumes are of size 8x1\)"),
    ("max_unpool2d_index_dtype", lambda T: F(T).max_unpool2d(
        r(T, 1, 3, 4, 4), r(T, 1, 3, 4, 4, dtype=T.int32), 2),
     "elements in indices should be type int64 but got: Int"),
    ("max_unpool2d_index_shape", lambda T: F(T).max_unpool2d(
        r(T, 1, 3, 4, 4), idx(T, 1, 3, 4, 3), 2),
     r"Expected shape of indices to be same as that of the input tensor \(\[1, 3, 4, 4\]\) but "
     r"got indices tensor with shape: \[1, 3, 4, 3\]"),
    ("max_unpool3d_rank", lambda T: F(T).max_unpool3d(r(T, 2, 2, 2), idx(T, 2, 2, 2), 2),
     "Input to max_unpooling3d should be a 4d or 5d Tensor, but got a tensor with 3 "
     "dimensions."),
    ("max_unpool1d_rank", lambda T: F(T).max_unpool1d(r(T, 4), idx(T, 4), 2),
     "Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor with 2 "
     "dimensions."),
    ("max_unpool2d_long", lambda T: F(T).max_unpool2d(
        r(T, 1, 2, 4, 4, dtype=T.int64), idx(T, 1, 2, 4, 4), 2),
     "\"max_unpool2d\" not implemented for 'Long'"),
    ("lp_pool2d_rank", lambda T: F(T).lp_pool2d(r(T, 4, 4), 2, 2), "Dimension out of range"),
]


@pytest.mark.parametrize("name,fn,match", cases(ERRORS))
def test_errors(name, fn, match):
    both(fn, match=match, raises=True)


# ------------------------------------------------------------------------------------------------
# Finite differences (float64), jax tracing, public surface
# ------------------------------------------------------------------------------------------------

def _rand(*shape, seed=0):
    return tl.tensor(np.random.default_rng(seed).uniform(-1, 1, shape), requires_grad=True)


def _pools(x):
    """max pool (ceil, padding) -> unpool, avg pool (ceil, excluded padding), adaptive max
    pooling of one (1, 2, 5, 5) input.  The max pool's windows do not overlap: where two
    windows pick the same element, PyTorch's unpool gradient (a gather at every index) counts
    it twice, which finite differences do not."""
    m, i = F(tl).max_pool2d(x, 2, 2, 1, ceil_mode=True, return_indices=True)
    return (F(tl).max_unpool2d(m, i, 2, 2, 1, output_size=(5, 5)),
            F(tl).avg_pool2d(x, 3, 2, 1, True, False), F(tl).adaptive_max_pool2d(x, (3, 2)))


def test_gradcheck():
    assert tl.autograd.gradcheck(_pools, (_rand(1, 2, 5, 5),))


def test_traced_matches_eager():
    """The pools and their gradient (backward inside the traced function) under jax.jit."""
    def program(x):
        loss = sum((p * p).sum() for p in _pools(x))
        return loss, tl.autograd.grad(loss, x)[0]

    def pure(a):
        return tuple(o._value() for o in program(tl.Tensor._wrap(a).requires_grad_()))
    x = _rand(1, 2, 5, 5)
    eager = program(x)
    traced = jax.jit(pure)(x._value())
    for e, t in zip(eager, traced):
        np.testing.assert_allclose(np.asarray(t), e.detach().numpy(), rtol=1e-12)


def test_public_names_exist_in_torch():
    for name in pool_ops.PUBLIC:
        assert hasattr(torch, name), name
