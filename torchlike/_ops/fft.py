"""Discrete Fourier transforms (``torchlike.fft``), fftfreq/rfftfreq and fftshift/ifftshift.

Every transform is built, as in PyTorch, from three primitives, each an Op over a tuple of dims
with the normalisation folded in:
  FFT_R2C  real -> complex (the full spectrum, or onesided: the last dim halved), FftR2CBackward0
  FFT_C2C  complex -> complex, forward or inverse,                                FftC2CBackward0
  FFT_C2R  Hermitian half spectrum -> real, given the last output size,           FftC2RBackward0
Around them the public functions do what PyTorch does, so grad_fn chains read the same: promote
to a supported dtype (ToCopyBackward0), trim (SliceBackward0) or zero-pad
(ConstantPadNdBackward0) to ``n`` / ``s``, and take lazy ``conj()`` views where PyTorch does (the
inverse of a real signal, hfft, ihfft: NOTE [ complex views ] in complex.py).  jax.vjp of each
primitive gives PyTorch's gradients (conjugate Wirtinger convention, see _dispatch._vjp_fn).
"""
import math
import operator

import jax.numpy as jnp
import numpy as np

from .. import _amp_hook
from .. import _creation
from .. import _dtype as D
from .._dispatch import Op, call, with_out as _out
from .._tensor import _wrap_dim
from . import complex as cplx, join, shape
from .spatial import CONSTANT_PAD as PAD


# --- the primitives -----------------------------------------------------------------------------

def _scaled(y, scale):
    return y if scale == 1.0 else y * scale


def _r2c(x, dims, onesided, scale):
    y = jnp.fft.rfftn(x, axes=dims) if onesided else jnp.fft.fftn(x, axes=dims)
    return _scaled(y, scale)


def _c2c(x, dims, forward, scale):
    if not dims:
        return _scaled(x, scale)
    # norm="forward" leaves the inverse transform unscaled; the scale is ours
    y = jnp.fft.fftn(x, axes=dims) if forward else jnp.fft.ifftn(x, axes=dims, norm="forward")
    return _scaled(y, scale)


def _c2r(x, dims, last_size, scale):
    sizes = [x.shape[d] for d in dims[:-1]] + [last_size]
    return _scaled(jnp.fft.irfftn(x, s=sizes, axes=dims, norm="forward"), scale)


FFT_R2C = Op("fft_r2c", _r2c, "FftR2CBackward0", saves=())
FFT_C2C = Op("fft_c2c", _c2c, "FftC2CBackward0", saves=())
FFT_C2R = Op("fft_c2r", _c2r, "FftC2RBackward0", saves=())


def r2c(x, dims, onesided, scale):
    return call(FFT_R2C, x, static=(("dims", dims), ("onesided", onesided), ("scale", scale)))


def c2c(x, dims, forward, scale):
    return call(FFT_C2C, x, static=(("dims", dims), ("forward", forward), ("scale", scale)))


def c2r(x, dims, last_size, scale):
    return call(FFT_C2R, x, static=(("dims", dims), ("last_size", last_size),
                                    ("scale", scale)))


# --- argument handling --------------------------------------------------------------------------

_NORMS = (None, "backward", "forward", "ortho")


def _scale(fname, norm, n, forward):
    """The factor PyTorch's ``norm`` puts on a transform of ``n`` points."""
    if norm is not None and not isinstance(norm, str):
        raise TypeError(f"fft_{fname}(): argument 'norm' must be str, not {type(norm).__name__}")
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    normalize = norm == "forward" if forward else norm in (None, "backward")
    return 1.0 / n if normalize else 1.0


def _promote(x, to_complex):
    """The dtype the transforms run in: integers take the default float dtype; float32 and
    float64 only (PyTorch's CPU kernels); complex when ``to_complex``."""
    dt = x.dtype
    if not dt.is_complex:
        if not dt.is_floating_point:
            dt = D.get_default_dtype()
        if dt not in (D.float32, D.float64):
            raise RuntimeError(f"Unsupported dtype {dt._scalar_name}")
        if to_complex:
            dt = dt.to_complex()
    return x if dt is x.dtype else x.to(dt)


def _wrap(dim, ndim):
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                         f"{ndim - 1}], but got {dim})")
    return dim % ndim


def _check_points(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _resize(x, dims, sizes):
    """Trim (a slice view) or zero-pad ``x`` so that ``x.shape[dims[i]] == sizes[i]``."""
    pads, padded = [(0, 0)] * x.ndim, False
    for d, size in zip(dims, sizes):
        have = x.shape[d]
        if have > size:
            x = shape.slice_dim(x, d, 0, size, 1)
        elif have < size:
            pads[d], padded = (0, size - have), True
    return call(PAD, x, static=(("pads", tuple(pads)),)) if padded else x


def _real_input(fname, input):
    if input.is_complex():
        raise RuntimeError(f"{fname} expects a real input tensor, but got "
                           f"{input.dtype._scalar_name}")


def _shape_and_dims(input, s, dim):
    """PyTorch's defaults for (s, dim): all dims, or the last len(s); -1 in s keeps a size."""
    ndim = input.ndim
    if dim is not None:
        dims = tuple(_wrap(d, ndim) for d in ((dim,) if isinstance(dim, int) else dim))
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = (s,) if isinstance(s, int) else tuple(s)
        if dim is not None and len(dims) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{ndim} dimensions.")
        if dim is None:
            dims = tuple(range(ndim - len(s), ndim))
        sizes = tuple(input.shape[d] if k == -1 else k for k, d in zip(s, dims))
    else:
        if dim is None:
            dims = tuple(range(ndim))
        sizes = tuple(input.shape[d] for d in dims)
    for k in sizes:
        _check_points(k)
    return sizes, dims


def _c2r_shape_and_dims(fname, input, s, dim):
    """As _shape_and_dims, plus the size of the real output's last transformed dim; the input
    is trimmed/padded to last // 2 + 1 there."""
    sizes, dims = _shape_and_dims(input, s, dim)
    if not dims:
        raise RuntimeError(f"{fname} must transform at least one axis")
    given = s is not None and ((s,) if isinstance(s, int) else tuple(s))[-1] != -1
    last = sizes[-1] if given else 2 * (input.shape[dims[-1]] - 1)
    _check_points(last)
    return sizes[:-1] + (last // 2 + 1,), dims, last


# --- one-dimensional transforms -----------------------------------------------------------------

def _one_dim(input, n, dim):
    d = _wrap(dim, input.ndim)
    size = input.shape[d] if n is None else n
    _check_points(size)
    return (d,), size


def _full(fname, input, n, dim, norm, forward):
    """fft / ifft: complex-to-complex, or the full spectrum of a real signal."""
    x = _promote(input, False)
    dims, size = _one_dim(x, n, dim)
    x = x if n is None else _resize(x, dims, (size,))
    scale = _scale(fname, norm, size, forward)
    if x.is_complex():
        return c2c(x, dims, forward, scale)
    y = r2c(x, dims, False, scale)
    return y if forward else cplx.conj(y)


def _onesided(fname, input, n, dim, norm, forward):
    """rfft / ihfft: the half spectrum of a real signal (conjugated for ihfft)."""
    _real_input(fname, input)
    x = _promote(input, False)
    dims, size = _one_dim(x, n, dim)
    x = x if n is None else _resize(x, dims, (size,))
    y = r2c(x, dims, True, _scale(fname, norm, size, forward))
    return y if forward else cplx.conj(y)


def _to_real(fname, input, n, dim, norm, forward):
    """irfft / hfft: a real signal from its half spectrum (conjugated first for hfft)."""
    x = _promote(input, True)
    d = _wrap(dim, x.ndim)
    last = 2 * (x.shape[d] - 1) if n is None else n
    _check_points(last)
    x = x if n is None else _resize(x, (d,), (last // 2 + 1,))
    if forward:
        x = cplx.conj(x)
    return c2r(x, (d,), last, _scale(fname, norm, last, forward))


@_amp_hook.entry("fft_fft")
def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """Mirrors ``torch.fft.fft``: the 1-D discrete Fourier transform along ``dim``, the signal
    trimmed or zero-padded to ``n`` points; ``norm`` is "backward" (none), "forward" (1/n) or
    "ortho" (1/sqrt(n)).  Real and integer inputs give the matching complex dtype."""
    return _out(_full("fft", input, n, dim, norm, True), out)


@_amp_hook.entry("fft_ifft")
def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """Mirrors ``torch.fft.ifft``: the inverse of :func:`fft` (``norm="backward"`` scales by
    1/n).  For a real input PyTorch returns a lazily conjugated view, as here."""
    return _out(_full("ifft", input, n, dim, norm, False), out)


@_amp_hook.entry("fft_rfft")
def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """Mirrors ``torch.fft.rfft``: the FFT of a real signal, keeping the n // 2 + 1
    non-negative frequencies."""
    return _out(_onesided("rfft", input, n, dim, norm, True), out)


@_amp_hook.entry("fft_ihfft")
def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """Mirrors ``torch.fft.ihfft``: the inverse of :func:`hfft`, the n // 2 + 1 non-negative
    frequencies of ifft of a real signal (a lazily conjugated view)."""
    return _out(_onesided("ihfft", input, n, dim, norm, False), out)


@_amp_hook.entry("fft_irfft")
def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """Mirrors ``torch.fft.irfft``: the inverse of :func:`rfft`, a real signal of ``n`` points
    (default 2 * (input.size(dim) - 1)) from its half spectrum."""
    return _out(_to_real("irfft", input, n, dim, norm, False), out)


@_amp_hook.entry("fft_hfft")
def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """Mirrors ``torch.fft.hfft``: the FFT of a signal with Hermitian symmetry given by its
    first half; a real result of ``n`` points (default 2 * (input.size(dim) - 1))."""
    return _out(_to_real("hfft", input, n, dim, norm, True), out)


# --- n-dimensional transforms -------------------------------------------------------------------

def _fftn(fname, input, s, dim, norm, forward):
    sizes, dims = _shape_and_dims(input, s, dim)
    x = _resize(_promote(input, True), dims, sizes)
    return c2c(x, dims, forward, _scale(fname, norm, math.prod(sizes), forward))


def _rfftn(fname, input, s, dim, norm):
    if input.is_complex():
        raise RuntimeError(f"{fname} expects a real-valued input tensor, but got "
                           f"{input.dtype._scalar_name}")
    sizes, dims = _shape_and_dims(input, s, dim)
    if not dims:
        raise RuntimeError(f"{fname} must transform at least one axis")
    x = _resize(_promote(input, False), dims, sizes)
    return r2c(x, dims, True, _scale(fname, norm, math.prod(sizes), True))


def _irfftn(fname, input, s, dim, norm):
    sizes, dims, last = _c2r_shape_and_dims(fname, input, s, dim)
    x = _resize(_promote(input, True), dims, sizes)
    return c2r(x, dims, last, _scale(fname, norm, math.prod(sizes[:-1]) * last, False))


def _hfftn(fname, input, s, dim, norm):
    """C2C over all but the last dim, then conj and C2R over the last (PyTorch's order)."""
    sizes, dims, last = _c2r_shape_and_dims(fname, input, s, dim)
    x = _resize(_promote(input, True), dims, sizes)
    if len(dims) > 1:
        x = c2c(x, dims[:-1], True, _scale(fname, norm, math.prod(sizes[:-1]), True))
    return c2r(cplx.conj(x), dims[-1:], last, _scale(fname, norm, last, True))


def _ihfftn(fname, input, s, dim, norm):
    """R2C over the last dim, conjugated, then an inverse C2C over the others."""
    if input.is_complex():
        raise RuntimeError(f"Only supports floating-point dtypes, but found: "
                           f"{input.dtype._scalar_name}")
    sizes, dims = _shape_and_dims(input, s, dim)
    if not dims:
        raise RuntimeError(f"{fname} must transform at least one axis")
    x = _resize(_promote(input, False), dims, sizes)
    y = r2c(x, dims[-1:], True, _scale(fname, norm, sizes[-1], False))
    if len(dims) == 1:
        return cplx.conj(y)
    y = cplx.conj_physical(y)
    return c2c(y, dims[:-1], False, _scale(fname, norm, math.prod(sizes[:-1]), False))


@_amp_hook.entry("fft_fftn")
def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """Mirrors ``torch.fft.fftn``: the N-D FFT over ``dim`` (default: all dims, or the last
    len(s)), each trimmed or zero-padded to ``s`` (-1 keeps a size)."""
    return _out(_fftn("fftn", input, s, dim, norm, True), out)


@_amp_hook.entry("fft_ifftn")
def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """Mirrors ``torch.fft.ifftn``: the inverse of :func:`fftn`."""
    return _out(_fftn("ifftn", input, s, dim, norm, False), out)


@_amp_hook.entry("fft_rfftn")
def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """Mirrors ``torch.fft.rfftn``: the N-D FFT of a real signal, the last of ``dim`` halved."""
    return _out(_rfftn("rfftn", input, s, dim, norm), out)


@_amp_hook.entry("fft_irfftn")
def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """Mirrors ``torch.fft.irfftn``: the inverse of :func:`rfftn`; the last output size is
    s[-1], or 2 * (input.size(dim[-1]) - 1)."""
    return _out(_irfftn("irfftn", input, s, dim, norm), out)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """Mirrors ``torch.fft.hfftn``: the N-D FFT of a Hermitian-symmetric signal given by its
    half (the last of ``dim``); a real result."""
    return _out(_hfftn("hfftn", input, s, dim, norm), out)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """Mirrors ``torch.fft.ihfftn``: the inverse of :func:`hfftn` for a real signal."""
    return _out(_ihfftn("ihfftn", input, s, dim, norm), out)


@_amp_hook.entry("fft_fft2")
def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Mirrors ``torch.fft.fft2``: :func:`fftn` over the last two dims."""
    return _out(_fftn("fft2", input, s, dim, norm, True), out)


@_amp_hook.entry("fft_ifft2")
def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Mirrors ``torch.fft.ifft2``: :func:`ifftn` over the last two dims."""
    return _out(_fftn("ifft2", input, s, dim, norm, False), out)


@_amp_hook.entry("fft_rfft2")
def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Mirrors ``torch.fft.rfft2``: :func:`rfftn` over the last two dims."""
    return _out(_rfftn("rfftn", input, s, dim, norm), out)


@_amp_hook.entry("fft_irfft2")
def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Mirrors ``torch.fft.irfft2``: :func:`irfftn` over the last two dims."""
    return _out(_irfftn("irfftn", input, s, dim, norm), out)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Mirrors ``torch.fft.hfft2``: :func:`hfftn` over the last two dims."""
    return _out(_hfftn("hfftn", input, s, dim, norm), out)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Mirrors ``torch.fft.ihfft2``: :func:`ihfftn` over the last two dims."""
    return _out(_ihfftn("ihfftn", input, s, dim, norm), out)


# --- sample frequencies and shifts --------------------------------------------------------------

def _frequencies(fname, n, d, size, ticks, out, dtype, device, requires_grad):
    """``ticks(size)`` / (n * d) as PyTorch computes it: the integer ticks times 1 / (n * d)
    (a scalar of the dtype, so float16 rounds it first) in the dtype's compute type."""
    dt = D.get_default_dtype() if dtype is None else D.to_dtype(dtype)
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{fname} requires a floating point or complex dtype")
    if dt.is_complex:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{dt._scalar_name}'")
    if size < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {size}: [{size}]")
    compute = np.float64 if dt is D.float64 else np.float32
    with np.errstate(divide="ignore", invalid="ignore"):
        step = compute(dt._np.type(np.float64(1.0) / np.float64(n * float(d))))
        values = (ticks(size).astype(compute) * step).astype(dt._np)
    result = _creation.tensor(values, dtype=dt, device=device, requires_grad=requires_grad)
    return _out(result, out)


def _need_int(fname, n):
    """``n`` as a Python int (numpy integers and integer 0-d tensors too, as PyTorch takes)."""
    if not isinstance(n, bool):
        try:
            return operator.index(n)
        except TypeError:
            pass
    raise TypeError(f"fft_{fname}(): argument 'n' (position 1) must be int, not "
                    f"{type(n).__name__}")


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
            pin_memory=False):
    """Mirrors ``torch.fft.fftfreq``: the sample frequencies of an FFT of ``n`` points spaced
    ``d`` apart: [0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n)."""
    n = _need_int("fftfreq", n)
    return _frequencies("fftfreq", n, d, n, _fft_ticks, out, dtype, device, requires_grad)


def _fft_ticks(n):
    return np.concatenate([np.arange((n + 1) // 2), np.arange(-(n // 2), 0)])


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    """Mirrors ``torch.fft.rfftfreq``: the n // 2 + 1 non-negative frequencies of
    :func:`fftfreq`."""
    n = _need_int("rfftfreq", n)
    size = (n // 2 if n >= 0 else -(-n // 2)) + 1   # C++ division truncates toward zero
    return _frequencies("rfftfreq", n, d, size, np.arange, out, dtype, device, requires_grad)


def _shift(input, dim, half):
    dims = range(input.ndim) if dim is None else ((dim,) if isinstance(dim, int) else dim)
    dims = tuple(_wrap_dim(d, input.ndim) for d in dims)
    return join.roll(input, tuple(half(input.shape[d]) for d in dims), dims)


def fftshift(input, dim=None):
    """Mirrors ``torch.fft.fftshift``: roll the zero frequency to the centre of ``dim`` (default:
    all dims)."""
    return _shift(input, dim, lambda size: size // 2)


def ifftshift(input, dim=None):
    """Mirrors ``torch.fft.ifftshift``: the inverse of :func:`fftshift`."""
    return _shift(input, dim, lambda size: (size + 1) // 2)
