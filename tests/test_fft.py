"""Parity tests for ``torchlike.fft`` (torchlike/_ops/fft.py) against PyTorch.

Spec tables, one row per case: values, dtypes, shapes, grad_fn names (FftR2CBackward0,
FftC2CBackward0, FftC2RBackward0 and PyTorch's ToCopy / Slice / ConstantPadNd / Conj steps
around them) and gradients against real torch with complex upstream gradients (check_op), the
arguments n / s / dim / norm, finite differences in float64 on real-valued wrappers (torchlike's
gradcheck takes real tensors only), fftfreq / rfftfreq / fftshift, errors, and jax.jit.
"""
import jax
import numpy as np
import pytest
import torch

import torchlike as tl
from torchlike.testing import assert_grads_match_jax, to_jax_function

from test_ops_complex import Z, cx
from parity import both, cases, check_op

NORMS = (None, "backward", "forward", "ortho")
# float32 transforms sum n terms: compare with an absolute tolerance that allows for it
ATOL = 2e-5


# ------------------------------------------------------------------------------------------------
# One-dimensional transforms
# ------------------------------------------------------------------------------------------------

ONE_DIM = [
    # name, fn(T, x), dtypes swept (each on a [3, 6] input)
    ("fft", lambda T, x: T.fft.fft(x), ("float32", "float64", "complex64", "complex128")),
    ("fft_n_pad", lambda T, x: T.fft.fft(x, n=8), ("float32", "complex128")),
    ("fft_n_trim", lambda T, x: T.fft.fft(x, 4), ("float64", "complex64")),
    ("fft_dim0", lambda T, x: T.fft.fft(x, dim=0), ("float32", "complex64")),
    ("fft_dim0_n", lambda T, x: T.fft.fft(x, 2, 0), ("float64", "complex128")),
    ("ifft", lambda T, x: T.fft.ifft(x), ("float32", "float64", "complex64", "complex128")),
    ("ifft_n_pad", lambda T, x: T.fft.ifft(x, n=9), ("float64", "complex64")),
    ("ifft_real_resolved", lambda T, x: T.fft.ifft(x).resolve_conj(), ("float32",)),
    ("rfft", lambda T, x: T.fft.rfft(x), ("float32", "float64")),
    ("rfft_n_pad", lambda T, x: T.fft.rfft(x, n=9), ("float32",)),
    ("rfft_n_trim", lambda T, x: T.fft.rfft(x, n=5, dim=-1), ("float64",)),
    ("rfft_dim0", lambda T, x: T.fft.rfft(x, dim=0), ("float32",)),
    ("irfft", lambda T, x: T.fft.irfft(x), ("float32", "complex64", "complex128")),
    ("irfft_n_even", lambda T, x: T.fft.irfft(x, n=8), ("complex64", "float64")),
    ("irfft_n_odd", lambda T, x: T.fft.irfft(x, n=7), ("complex128",)),
    ("irfft_n_small", lambda T, x: T.fft.irfft(x, n=3), ("complex64",)),
    ("irfft_n_pad", lambda T, x: T.fft.irfft(x, n=16), ("complex128",)),
    ("irfft_n1", lambda T, x: T.fft.irfft(x, n=1), ("complex64",)),
    ("irfft_dim0", lambda T, x: T.fft.irfft(x, dim=0), ("complex128",)),
    ("hfft", lambda T, x: T.fft.hfft(x), ("float32", "complex64", "complex128")),
    ("hfft_n", lambda T, x: T.fft.hfft(x, n=5), ("complex128",)),
    ("hfft_n_pad", lambda T, x: T.fft.hfft(x, n=14, dim=1), ("float64",)),
    ("ihfft", lambda T, x: T.fft.ihfft(x), ("float32", "float64")),
    ("ihfft_resolved", lambda T, x: T.fft.ihfft(x, n=9).resolve_conj(), ("float64",)),
    ("fft_int", lambda T, x: T.fft.fft(x), ("int64", "bool")),
    ("rfft_int", lambda T, x: T.fft.rfft(x), ("int64",)),
    ("irfft_int", lambda T, x: T.fft.irfft(x), ("int64",)),
    ("fft_then_abs", lambda T, x: T.fft.fft(x).abs(), ("float64",)),
    ("rfft_irfft", lambda T, x: T.fft.irfft(T.fft.rfft(x), n=6), ("float64",)),
    ("fft_ifft", lambda T, x: T.fft.ifft(T.fft.fft(x)), ("complex128",)),
    ("fft_method_chain", lambda T, x: T.fft.fft(x * 2)[1:].real, ("complex64",)),
]


def _sweep(table):
    return [pytest.param(name, fn, dt, id=f"{name}-{dt}") for name, fn, dts in table
            for dt in dts]


@pytest.mark.parametrize("name,fn,dtype", _sweep(ONE_DIM))
def test_one_dim(name, fn, dtype):
    check_op(f"{name}/{dtype}", cx(fn), [Z((3, 6), dtype)], atol=ATOL)


NORMED = [
    # name, fn(T, x, norm), dtype: every normalisation mode
    ("fft", lambda T, x, norm: T.fft.fft(x, norm=norm), "complex64"),
    ("fft_real", lambda T, x, norm: T.fft.fft(x, 8, norm=norm), "float64"),
    ("ifft", lambda T, x, norm: T.fft.ifft(x, norm=norm), "complex128"),
    ("ifft_real", lambda T, x, norm: T.fft.ifft(x, norm=norm).resolve_conj(), "float32"),
    ("rfft", lambda T, x, norm: T.fft.rfft(x, norm=norm), "float32"),
    ("irfft", lambda T, x, norm: T.fft.irfft(x, 9, norm=norm), "complex128"),
    ("hfft", lambda T, x, norm: T.fft.hfft(x, norm=norm), "complex64"),
    ("ihfft", lambda T, x, norm: T.fft.ihfft(x, norm=norm).resolve_conj(), "float64"),
    ("fftn", lambda T, x, norm: T.fft.fftn(x, s=(2, 8), norm=norm), "complex64"),
    ("ifft2", lambda T, x, norm: T.fft.ifft2(x, norm=norm), "float64"),
    ("rfftn", lambda T, x, norm: T.fft.rfftn(x, norm=norm), "float64"),
    ("irfft2", lambda T, x, norm: T.fft.irfft2(x, s=(4, 7), norm=norm), "complex64"),
    ("hfft2", lambda T, x, norm: T.fft.hfft2(x, norm=norm), "complex128"),
    ("ihfft2", lambda T, x, norm: T.fft.ihfft2(x, norm=norm), "float64"),
]


@pytest.mark.parametrize("norm", NORMS, ids=str)
@pytest.mark.parametrize("name,fn,dtype", cases(NORMED))
def test_norm(name, fn, dtype, norm):
    check_op(f"{name}/{norm}", cx(lambda T, x: fn(T, x, norm)), [Z((3, 6), dtype)], atol=ATOL)


# ------------------------------------------------------------------------------------------------
# N-dimensional transforms: s, dim and their defaults
# ------------------------------------------------------------------------------------------------

N_DIM = [
    # name, fn(T, x), dtypes swept (each on a [2, 3, 4] input)
    ("fft2", lambda T, x: T.fft.fft2(x), ("float32", "complex64", "complex128")),
    ("fft2_s", lambda T, x: T.fft.fft2(x, s=(2, 6)), ("complex64",)),
    ("fft2_dims", lambda T, x: T.fft.fft2(x, dim=(0, 2)), ("float64",)),
    ("ifft2", lambda T, x: T.fft.ifft2(x), ("float64", "complex64")),
    ("fftn", lambda T, x: T.fft.fftn(x), ("float32", "float64", "complex64", "complex128")),
    ("fftn_s_last", lambda T, x: T.fft.fftn(x, s=(5,)), ("complex64",)),
    ("fftn_s_minus1", lambda T, x: T.fft.fftn(x, s=(-1, 2)), ("complex128",)),
    ("fftn_s_int", lambda T, x: T.fft.fftn(x, s=3), ("float32",)),
    ("fftn_dim_int", lambda T, x: T.fft.fftn(x, dim=1), ("complex64",)),
    ("fftn_dim_neg", lambda T, x: T.fft.fftn(x, dim=(-1, 0)), ("complex64",)),
    ("fftn_s_dim", lambda T, x: T.fft.fftn(x, s=(4, 1), dim=(1, 0)), ("complex128",)),
    ("fftn_no_dims", lambda T, x: T.fft.fftn(x, dim=()), ("float32", "complex64")),
    ("ifftn", lambda T, x: T.fft.ifftn(x, s=(3, 3, 3)), ("float64", "complex128")),
    ("rfft2", lambda T, x: T.fft.rfft2(x), ("float32", "float64")),
    ("rfft2_s", lambda T, x: T.fft.rfft2(x, s=(4, 5)), ("float32",)),
    ("rfftn", lambda T, x: T.fft.rfftn(x), ("float32", "int64")),
    ("rfftn_dim_order", lambda T, x: T.fft.rfftn(x, dim=(2, 0)), ("float64",)),
    ("irfft2", lambda T, x: T.fft.irfft2(x), ("complex64", "complex128", "float32")),
    ("irfft2_s", lambda T, x: T.fft.irfft2(x, s=(4, 5)), ("complex128",)),
    ("irfftn", lambda T, x: T.fft.irfftn(x), ("complex64", "float64")),
    ("irfftn_s_last_default", lambda T, x: T.fft.irfftn(x, s=(3, -1)), ("complex128",)),
    ("irfftn_dims", lambda T, x: T.fft.irfftn(x, dim=(2, 1)), ("complex64",)),
    ("irfftn_one_dim", lambda T, x: T.fft.irfftn(x, s=(7,), dim=0), ("complex128",)),
    ("hfftn", lambda T, x: T.fft.hfftn(x), ("complex64", "float64")),
    ("hfft2_s", lambda T, x: T.fft.hfft2(x, s=(2, 5)), ("complex128",)),
    ("hfftn_one_dim", lambda T, x: T.fft.hfftn(x, dim=(1,)), ("complex128",)),
    ("ihfftn", lambda T, x: T.fft.ihfftn(x), ("float32", "float64")),
    ("ihfft2_s", lambda T, x: T.fft.ihfft2(x, s=(4, 6)), ("float64",)),
    ("ihfftn_one_dim", lambda T, x: T.fft.ihfftn(x, dim=(1,)).resolve_conj(), ("float64",)),
    ("fftn_roundtrip", lambda T, x: T.fft.ifftn(T.fft.fftn(x)), ("complex128",)),
]


@pytest.mark.parametrize("name,fn,dtype", _sweep(N_DIM))
def test_n_dim(name, fn, dtype):
    check_op(f"{name}/{dtype}", cx(fn), [Z((2, 3, 4), dtype)], atol=ATOL)


def _graph(fn):
    if fn is None:
        return ""
    kids = [_graph(n) for n, _ in fn.next_functions if n is not None]
    return type(fn).__name__ + (f"({','.join(kids)})" if kids else "")


GRAPHS = [
    # name, fn(T, x) on x real [4, 6] requiring grad: the whole grad_fn chain and conj bit
    ("fft_real", lambda T, x: T.fft.fft(x)),
    ("fft_pad", lambda T, x: T.fft.fft(x, 8)),
    ("fft_trim", lambda T, x: T.fft.fft(x, 3, 0)),
    ("ifft_real", lambda T, x: T.fft.ifft(x)),
    ("ifft_complex", lambda T, x: T.fft.ifft(x * 1j)),
    ("irfft_real", lambda T, x: T.fft.irfft(x)),
    ("irfft_n", lambda T, x: T.fft.irfft(x + 0j, 20)),
    ("hfft", lambda T, x: T.fft.hfft(x, 5)),
    ("ihfft", lambda T, x: T.fft.ihfft(x, 9)),
    ("fft2", lambda T, x: T.fft.fft2(x, s=(3, 8))),
    ("rfftn", lambda T, x: T.fft.rfftn(x, s=(3, 8))),
    ("irfftn", lambda T, x: T.fft.irfftn(x, s=(3, 8))),
    ("hfft2", lambda T, x: T.fft.hfft2(x)),
    ("ihfft2", lambda T, x: T.fft.ihfft2(x)),
    ("fftn_0d", lambda T, x: T.fft.fftn(x[0, 0])),
    ("fftshift", lambda T, x: T.fft.fftshift(x)),
    ("fft_double", lambda T, x: T.fft.fft(x.double())),
]


@pytest.mark.parametrize("name,fn", cases(GRAPHS))
def test_graphs(name, fn):
    x = np.random.default_rng(2).standard_normal((4, 6))

    def go(T):
        y = fn(T, T.tensor(x, dtype=T.float32, requires_grad=True))
        return _graph(y.grad_fn), y.is_conj(), y.dtype, y.shape
    both(go)


# ------------------------------------------------------------------------------------------------
# Sample frequencies and shifts
# ------------------------------------------------------------------------------------------------

FREQ = [
    # name, fn(T)
    ("fftfreq_5", lambda T: T.fft.fftfreq(5)),
    ("fftfreq_8", lambda T: T.fft.fftfreq(8)),
    ("fftfreq_d", lambda T: T.fft.fftfreq(7, 0.3)),
    ("fftfreq_d_kw", lambda T: T.fft.fftfreq(6, d=2)),
    ("fftfreq_d_tensor", lambda T: T.fft.fftfreq(4, d=T.tensor(2.0))),
    ("fftfreq_f64", lambda T: T.fft.fftfreq(11, 0.1, dtype=T.float64)),
    ("fftfreq_requires_grad", lambda T: T.fft.fftfreq(4, requires_grad=True)),
    ("fftfreq_device", lambda T: T.fft.fftfreq(4, device="cpu").device),
    ("fftfreq_0", lambda T: T.fft.fftfreq(0)),
    ("fftfreq_1", lambda T: T.fft.fftfreq(1)),
    ("fftfreq_numpy_n", lambda T: T.fft.fftfreq(np.int64(6))),
    ("rfftfreq_tensor_n", lambda T: T.fft.rfftfreq(T.tensor(5))),
    ("fftfreq_d0", lambda T: T.fft.fftfreq(4, d=0)),
    ("fftfreq_out", lambda T: (lambda o: (T.fft.fftfreq(4, out=o), o))(
        T.empty(4, dtype=T.float64))),
    ("rfftfreq_5", lambda T: T.fft.rfftfreq(5)),
    ("rfftfreq_6_d", lambda T: T.fft.rfftfreq(6, 2)),
    ("rfftfreq_f64", lambda T: T.fft.rfftfreq(9, 0.7, dtype=T.float64)),
    ("rfftfreq_0", lambda T: T.fft.rfftfreq(0)),
    ("rfftfreq_minus1", lambda T: T.fft.rfftfreq(-1)),
    ("rfftfreq_minus3", lambda T: T.fft.rfftfreq(-3)),
    ("rfftfreq_requires_grad", lambda T: T.fft.rfftfreq(3, requires_grad=True)),
    ("fftfreq_default_f64", lambda T: _with_default(T, T.float64, lambda: T.fft.fftfreq(5, 0.3))),
    ("fft_int_default_f64", lambda T: _with_default(T, T.float64,
                                                    lambda: T.fft.fft(T.arange(4)))),
    ("fftshift", lambda T: T.fft.fftshift(T.arange(10).reshape(2, 5))),
    ("fftshift_dim", lambda T: T.fft.fftshift(T.arange(10).reshape(2, 5), dim=1)),
    ("fftshift_dims", lambda T: T.fft.fftshift(T.arange(12.).reshape(3, 4), dim=(0, -1))),
    ("fftshift_freq", lambda T: T.fft.fftshift(T.fft.fftfreq(7))),
    ("ifftshift", lambda T: T.fft.ifftshift(T.arange(10).reshape(2, 5))),
    ("ifftshift_dim", lambda T: T.fft.ifftshift(T.arange(10).reshape(2, 5), -1)),
    ("shift_roundtrip", lambda T: T.fft.ifftshift(T.fft.fftshift(T.arange(7.)))),
    ("fftshift_complex", lambda T: T.fft.fftshift(T.tensor([1j, 2, 3 + 1j]))),
    ("fft_out", lambda T: (lambda o: (T.fft.fft(T.ones(4), out=o), o))(
        T.empty(4, dtype=T.complex64))),
    ("irfft2_out_resized", lambda T: (lambda o: (T.fft.irfft2(T.ones(2, 3) * 1j, out=o), o))(
        T.empty(0))),
]


def _with_default(T, dtype, fn):
    old = T.get_default_dtype()
    T.set_default_dtype(dtype)
    try:
        return fn()
    finally:
        T.set_default_dtype(old)


@pytest.mark.parametrize("name,fn", cases(FREQ))
def test_freq_and_shift(name, fn):
    both(fn, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("n, d", [(7, 0.3), (10, 0.1), (33, 1 / 3), (5, 1e-3)])
def test_frequencies_round_as_pytorch(dtype, n, d):
    """PyTorch multiplies by 1 / (n * d) rounded to the dtype first (float16: [3] of
    fftfreq(7, 0.3) is 1.4277, not the nearest 1.4287)."""
    both(lambda T: (T.fft.fftfreq(n, d, dtype=getattr(T, dtype)),
                    T.fft.rfftfreq(n, d, dtype=getattr(T, dtype))), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "int64", "bool"])
def test_shift_grads(dtype):
    check_op(f"shift/{dtype}", cx(lambda T, x: T.fft.fftshift(T.fft.ifftshift(x, 0) * 2, (1,))),
             [Z((3, 4), dtype)])


# ------------------------------------------------------------------------------------------------
# Errors
# ------------------------------------------------------------------------------------------------

_xr = lambda T: T.ones(4, 6)  # noqa: E731
_xc = lambda T: T.ones(4, 6, dtype=T.complex64)  # noqa: E731

ERRORS = [
    # name, fn(T), message regex
    ("n0", lambda T: T.fft.fft(_xr(T), n=0), r"Invalid number of data points \(0\) specified"),
    ("n_negative", lambda T: T.fft.rfft(_xr(T), n=-1), r"Invalid number of data points \(-1\)"),
    ("empty", lambda T: T.fft.fft(T.ones(0)), r"Invalid number of data points \(0\) specified"),
    ("fftn_empty", lambda T: T.fft.fftn(T.ones(3, 0)), r"Invalid number of data points \(0\)"),
    ("irfft_n0", lambda T: T.fft.irfft(_xc(T), n=0), r"Invalid number of data points \(0\)"),
    ("irfft_size1", lambda T: T.fft.irfft(T.ones(1)), r"Invalid number of data points \(0\)"),
    ("hfft_size1", lambda T: T.fft.hfft(T.ones(3, 1)), r"Invalid number of data points \(0\)"),
    ("dim_out_of_range", lambda T: T.fft.fft(_xr(T), dim=5),
     r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 5\)"),
    ("dim_0d", lambda T: T.fft.fft(T.tensor(1.0)),
     r"Dimension specified as -1 but tensor has no dimensions"),
    ("fftn_dim_0d", lambda T: T.fft.fftn(T.tensor(1.0), dim=0),
     r"Dimension specified as 0 but tensor has no dimensions"),
    ("fft2_1d", lambda T: T.fft.fft2(T.ones(5)), r"Dimension out of range"),
    ("norm_bad", lambda T: T.fft.fft(_xr(T), norm="bad"), r'Invalid normalization mode: "bad"'),
    ("norm_bad_nd", lambda T: T.fft.rfftn(_xr(T), norm="Ortho"), r"Invalid normalization mode"),
    ("norm_not_str", lambda T: T.fft.fft(_xr(T), norm=1),
     r"fft_fft\(\): argument 'norm' must be str, not int"),
    ("rfft_complex", lambda T: T.fft.rfft(_xc(T)),
     r"rfft expects a real input tensor, but got ComplexFloat"),
    ("ihfft_complex", lambda T: T.fft.ihfft(_xc(T)),
     r"ihfft expects a real input tensor, but got ComplexFloat"),
    ("rfft2_complex", lambda T: T.fft.rfft2(_xc(T)),
     r"rfftn expects a real-valued input tensor, but got ComplexFloat"),
    ("rfftn_complex", lambda T: T.fft.rfftn(T.ones(3, dtype=T.complex128)),
     r"rfftn expects a real-valued input tensor, but got ComplexDouble"),
    ("ihfft2_complex", lambda T: T.fft.ihfft2(_xc(T)),
     r"Only supports floating-point dtypes, but found: ComplexFloat"),
    ("half", lambda T: T.fft.fft(T.ones(4, dtype=T.half)), r"Unsupported dtype Half"),
    ("bf16", lambda T: T.fft.rfft(T.ones(4, dtype=T.bfloat16)), r"Unsupported dtype BFloat16"),
    ("half_nd", lambda T: T.fft.ihfftn(T.ones(3, 3, dtype=T.half)), r"Unsupported dtype Half"),
    ("dims_unique", lambda T: T.fft.fftn(_xc(T), dim=(0, 0)), r"FFT dims must be unique"),
    ("dims_unique_wrapped", lambda T: T.fft.fftn(_xc(T), dim=(1, -1)), r"FFT dims must be unique"),
    ("s_dim_lengths", lambda T: T.fft.fftn(_xc(T), s=(3,), dim=(0, 1)),
     r"When given, dim and shape arguments must have the same length"),
    ("fft2_s_3", lambda T: T.fft.fft2(_xc(T), s=(5, 2, 2)),
     r"When given, dim and shape arguments must have the same length"),
    ("s_too_long", lambda T: T.fft.fftn(_xc(T), s=(2, 2, 2)),
     r"Got shape with 3 values but input tensor only has 2 dimensions\."),
    ("s_negative", lambda T: T.fft.fftn(_xr(T), s=(-2, 3)),
     r"Invalid number of data points \(-2\)"),
    ("rfftn_no_dims", lambda T: T.fft.rfftn(_xr(T), dim=()), r"rfftn must transform at least one"),
    ("irfftn_no_dims", lambda T: T.fft.irfftn(_xc(T), dim=()), r"irfftn must transform at least"),
    ("hfftn_no_dims", lambda T: T.fft.hfftn(_xc(T), dim=()), r"hfftn must transform at least"),
    ("ihfftn_no_dims", lambda T: T.fft.ihfftn(_xr(T), dim=()), r"ihfftn must transform at least"),
    ("fftfreq_long", lambda T: T.fft.fftfreq(4, dtype=T.long),
     r"fftfreq requires a floating point or complex dtype"),
    ("rfftfreq_int", lambda T: T.fft.rfftfreq(6, dtype=T.int32),
     r"rfftfreq requires a floating point or complex dtype"),
    ("fftfreq_bool", lambda T: T.fft.fftfreq(4, dtype=T.bool), r"requires a floating point"),
    ("fftfreq_complex", lambda T: T.fft.fftfreq(4, dtype=T.complex64),
     r"\"arange_cpu\" not implemented for 'ComplexFloat'"),
    ("fftfreq_negative", lambda T: T.fft.fftfreq(-1),
     r"Trying to create tensor with negative dimension -1: \[-1\]"),
    ("rfftfreq_negative", lambda T: T.fft.rfftfreq(-5),
     r"Trying to create tensor with negative dimension -1: \[-1\]"),
    ("fftfreq_float_n", lambda T: T.fft.fftfreq(4.0),
     r"fft_fftfreq\(\): argument 'n' \(position 1\) must be int, not float"),
    ("fftfreq_bool_n", lambda T: T.fft.fftfreq(True), r"must be int, not bool"),
    ("fftfreq_tensor_n", lambda T: T.fft.fftfreq(T.tensor(2.0)), r"must be int, not Tensor"),
    ("fftshift_dim", lambda T: T.fft.fftshift(_xr(T), dim=5), r"Dimension out of range"),
    ("fftshift_0d", lambda T: T.fft.fftshift(T.tensor(1.0)), r"`shifts` required"),
    ("out_with_grad", lambda T: T.fft.fft(T.ones(3, requires_grad=True),
                                          out=T.empty(3, dtype=T.complex64)),
     r"functions with out=\.\.\. arguments don't support automatic differentiation"),
]


@pytest.mark.parametrize("name,fn,match", cases(ERRORS))
def test_errors(name, fn, match):
    both(fn, match=match, raises=True)


# ------------------------------------------------------------------------------------------------
# Finite differences (float64) on real-valued wrappers; jax.grad; jax.jit
# ------------------------------------------------------------------------------------------------

def _c(a, b):
    return tl.complex(a, b)


GRADCHECK = [
    # name, fn of real float64 tensors, shapes of the inputs
    ("fft_real", lambda x: tl.view_as_real(tl.fft.fft(x, n=7)), [(2, 5)]),
    ("fft_complex", lambda a, b: tl.view_as_real(tl.fft.fft(_c(a, b), 3, 0, "ortho")),
     [(4, 2), (4, 2)]),
    ("ifft_real", lambda x: tl.view_as_real(tl.fft.ifft(x).resolve_conj()), [(5,)]),
    ("rfft", lambda x: tl.view_as_real(tl.fft.rfft(x, norm="forward")), [(3, 6)]),
    ("irfft", lambda a, b: tl.fft.irfft(_c(a, b), n=7), [(2, 4), (2, 4)]),
    ("irfft_even", lambda a, b: tl.fft.irfft(_c(a, b)), [(5,), (5,)]),
    ("hfft", lambda a, b: tl.fft.hfft(_c(a, b), norm="ortho"), [(4,), (4,)]),
    ("ihfft", lambda x: tl.view_as_real(tl.fft.ihfft(x).resolve_conj()), [(6,)]),
    ("fftn", lambda a, b: tl.view_as_real(tl.fft.fftn(_c(a, b), s=(2, 4))), [(3, 3), (3, 3)]),
    ("ifft2", lambda x: tl.view_as_real(tl.fft.ifft2(x)), [(3, 4)]),
    ("rfftn", lambda x: tl.view_as_real(tl.fft.rfftn(x, dim=(1, 0))), [(4, 3)]),
    ("irfftn", lambda a, b: tl.fft.irfftn(_c(a, b), s=(3, 6)), [(3, 4), (3, 4)]),
    ("hfft2", lambda a, b: tl.fft.hfft2(_c(a, b)), [(2, 3), (2, 3)]),
    ("ihfft2", lambda x: tl.view_as_real(tl.fft.ihfft2(x)), [(3, 5)]),
    ("fftshift", lambda x: tl.fft.fftshift(x) * x, [(3, 5)]),
]


@pytest.mark.parametrize("name,fn,shapes", cases(GRADCHECK))
def test_gradcheck(name, fn, shapes):
    rng = np.random.default_rng(11)
    xs = [tl.tensor(rng.standard_normal(s), dtype=tl.float64, requires_grad=True)
          for s in shapes]
    assert tl.autograd.gradcheck(fn, tuple(xs))


def _spectral_loss(x, w):
    spec = tl.fft.rfft(x * w, n=10)
    y = tl.fft.irfft(spec * tl.fft.rfftfreq(10, dtype=tl.float64), n=10)
    z = tl.fft.fft2(tl.complex(x, w), s=(3, 4), norm="ortho")
    h = tl.fft.hfft(tl.fft.ihfft(y), n=10)
    return (y ** 2).sum() + z.abs().sum() + tl.fft.fftshift(h).sum() + \
        tl.fft.ifft(x).imag.sum()


def test_grads_match_jax():
    rng = np.random.default_rng(12)
    x, w = (tl.tensor(rng.standard_normal((3, 6))) for _ in range(2))
    assert_grads_match_jax(_spectral_loss, x, w)


def test_program_traces_under_jit():
    rng = np.random.default_rng(13)
    x, w = (tl.tensor(rng.standard_normal((3, 6))) for _ in range(2))
    eager = _spectral_loss(x, w)
    traced = jax.jit(to_jax_function(_spectral_loss))(x._value(), w._value())
    np.testing.assert_allclose(np.asarray(traced), eager.numpy(), rtol=1e-12)


def test_backward_under_jit():
    def grads(a, b):
        x, w = tl.Tensor._wrap(a).requires_grad_(), tl.Tensor._wrap(b).requires_grad_()
        _spectral_loss(x, w).backward()
        return x.grad._value(), w.grad._value()

    rng = np.random.default_rng(14)
    x, w = (tl.tensor(rng.standard_normal((3, 6)), requires_grad=True) for _ in range(2))
    _spectral_loss(x, w).backward()
    gx, gw = jax.jit(grads)(x.detach()._value(), w.detach()._value())
    np.testing.assert_allclose(np.asarray(gx), x.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(gw), w.grad.numpy(), rtol=1e-10, atol=1e-12)
