"""Signal processing: the window functions (hann, hamming, blackman, bartlett, kaiser) and the
short-time Fourier transform and its inverse (stft / istft).

The windows are factories: their values are computed on the host in the requested dtype, step by
step as ATen computes them (so float32 windows agree with PyTorch's to rounding), then placed on
the device.  stft and istft are composites of torchlike ops as in ATen (SpectralOps.cpp): frames,
window, one FFT primitive (fft.py), transposes; istft's overlap-add is ATen's
``unfold_backward`` (UnfoldBackwardBackward0).  Their Tensor methods join the complex family
(complex.py).
"""
import math

import jax.numpy as jnp
import numpy as np

from .. import _amp_hook
from .. import _dtype as D
from .._creation import _finish, _place, zeros
from .._dispatch import Op, call
from . import fft as _fft
from .pointwise import warn_once

# --- window functions ---------------------------------------------------------------------------

_C10 = {"float32": "float", "float64": "double", "float16": "c10::Half",
        "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int", "int16": "short int",
        "int8": "signed char", "uint8": "unsigned char", "bool": "bool",
        "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _window_dtype(name, length, dtype, device, requires_grad):
    """PyTorch's window_function_checks; the window's dtype."""
    if not isinstance(length, int) or isinstance(length, bool):
        raise TypeError(f"{name}(): argument 'window_length' (position 1) must be int, not "
                        f"{type(length).__name__}")
    if length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={length}")
    dt = D.get_default_dtype() if dtype is None else D.to_dtype(dtype)
    if not dt.is_floating_point:
        from .._device import device as _device
        where = str(_device("cpu" if device is None else device))
        raise RuntimeError(
            f"{name} expects floating point dtypes, got: TensorOptions(dtype={_C10[dt._name]}, "
            f"device={where}, layout=Strided (default), requires_grad="
            f"{'true' if requires_grad else 'false (default)'}, pinned_memory=false, "
            f"memory_format=(nullopt))")
    return dt


def _window(name, length, periodic, dtype, device, requires_grad, values):
    """A window of ``length`` points: ``values(n, dt)`` on the ``n`` points of the symmetric
    window (n = length + 1 when ``periodic``, whose last point is then dropped)."""
    dt = _window_dtype(name, length, dtype, device, requires_grad)
    if length <= 1:
        arr = np.ones(length, dt._np)
    else:
        n = length + 1 if periodic else length
        arr = values(n, dt._np)[:length]
    return _finish(_place(np.asarray(arr, dt._np), device), requires_grad)


def _cosine_sum(alpha, beta):
    """alpha - beta * cos(2 pi k / (n - 1)), as ATen's hamming_window."""
    def values(n, dt):
        k = np.arange(n, dtype=dt)
        return (np.cos(k * dt.type(2 * math.pi / (n - 1))) * dt.type(-beta)
                + dt.type(alpha)).astype(dt)
    return values


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, pin_memory=False, requires_grad=False):
    """Mirrors ``torch.hamming_window``: ``alpha - beta cos(2 pi n / (N - 1))``, where N is
    ``window_length`` (+ 1 when ``periodic``, the last point then dropped: a window for
    spectral analysis)."""
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum(alpha, beta))


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                pin_memory=False, requires_grad=False):
    """Mirrors ``torch.hann_window``: ``0.5 - 0.5 cos(2 pi n / (N - 1))`` (see
    ``hamming_window`` for ``periodic``)."""
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum(0.5, 0.5))


def _blackman(n, dt):
    k = np.arange(n, dtype=dt) * dt.type(math.pi / (n - 1))
    return (np.cos(k * dt.type(4)) * dt.type(0.08) - np.cos(k * dt.type(2)) * dt.type(0.5)
            + dt.type(0.42)).astype(dt)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    """Mirrors ``torch.blackman_window``: ``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n /
    (N - 1))`` (see ``hamming_window`` for ``periodic``)."""
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   _blackman)


def _bartlett(n, dt):
    w = np.arange(n, dtype=dt) * dt.type(2.0 / (n - 1))
    half = ((n - 1) >> 1) + 1
    w[half:] = w[half:] * dt.type(-1) + dt.type(2)
    return w


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    """Mirrors ``torch.bartlett_window``: the triangle ``1 - |2n / (N - 1) - 1|`` (see
    ``hamming_window`` for ``periodic``)."""
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   _bartlett)


def _kaiser(beta):
    def values(n, dt):
        # ATen's kernel computes in float64 for float64 and in float32 otherwise (opmath)
        op = np.float64 if dt == np.float64 else np.float32
        alpha = op((n - 1) / 2.0)
        k = np.arange(n, dtype=dt).astype(op)
        r = op(beta) * np.sqrt(np.abs(1 - ((k - alpha) / alpha) ** op(2)))
        return (np.i0(r.astype(np.float64)) / np.i0(float(beta))).astype(op).astype(dt)
    return values


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, pin_memory=False, requires_grad=False):
    """Mirrors ``torch.kaiser_window``: ``I0(beta sqrt(1 - ((n - N/2) / (N/2))**2)) / I0(beta)``
    with N = ``window_length - 1`` (see ``hamming_window`` for ``periodic``)."""
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad,
                   _kaiser(beta))


# --- stft / istft -------------------------------------------------------------------------------

def _flag(v):
    return "None" if v is None else str(int(bool(v)))


def _type(t):
    """How ATen's messages name a tensor's type: torch.FloatTensor, CPUComplexFloatType."""
    if t.dtype.is_complex:
        return f"{t.device.type.upper()}{t.dtype._scalar_name}Type"
    return t.type()


def _stft_repr(input, n_fft, hop, win, window, normalized, onesided, return_complex, align):
    w = "None" if window is None else f"{_type(window)}{{{list(window.shape)}}}"
    return (f"stft({_type(input)}{list(input.shape)}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={w}, normalized={int(bool(normalized))}, "
            f"onesided={_flag(onesided)}, return_complex={_flag(return_complex)}, "
            f"align_to_window={_flag(align)}) : ")


@_amp_hook.entry("stft")
def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    """Mirrors ``torch.stft``: the Fourier transforms of the (windowed) frames of ``n_fft``
    samples taken every ``hop_length`` (default ``n_fft // 4``) from a 1-D signal or a batch of
    them, as a (batch?, freq, frames) complex tensor (``return_complex=False``: its
    ``view_as_real``, deprecated).  ``center`` pads ``n_fft // 2`` samples on both sides with
    ``pad_mode``; a ``window`` shorter than ``n_fft`` is centred in it; ``onesided`` (default for
    real input) keeps the ``n_fft // 2 + 1`` non-negative frequencies; ``normalized`` scales by
    ``1 / sqrt(n_fft)``."""
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:
        from .spatial import pad
        ndim = input.ndim
        extended = [1] * (3 - ndim) + list(input.shape)
        input = pad(input.view(extended), [n_fft // 2, n_fft // 2], pad_mode)
        input = input.view(input.shape[-ndim:])
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    repr_ = _stft_repr(input, n_fft, hop, win, window, normalized, onesided, return_complex,
                       align_to_window)
    complex_out = return_complex if return_complex is not None else (
        input.dtype.is_complex or (window is not None and window.dtype.is_complex))
    if not complex_out:
        if return_complex is None:
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True in a "
                               "future PyTorch release.")
        warn_once("stft with return_complex=False is deprecated. In a future pytorch release, "
                  "stft will return complex tensors for all inputs, and return_complex=False "
                  "will raise an error.\nNote: you can still call torch.view_as_real on the "
                  "complex output to recover the old return format.",
                  stacklevel=_amp_hook.stacklevel(2) + 1)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(repr_ + "expected a tensor of floating point or complex values")
    if input.ndim not in (1, 2):
        raise RuntimeError(repr_ + "expected a 1D or 2D tensor")
    x = input.unsqueeze(0) if input.ndim == 1 else input
    length = x.shape[1]
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(repr_ + f"expected 0 < n_fft < {length}, but got n_fft={win}")
    if hop <= 0:
        raise RuntimeError(repr_ + f"expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise RuntimeError(repr_ + f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        raise RuntimeError(repr_ + f"expected a 1D window tensor of size equal to win_length="
                                   f"{win}, but got window with size {list(window.shape)}")
    if window is None:
        warn_once("A window was not provided. A rectangular window will be applied,which is known "
                  "to cause spectral leakage. Other windows such as torch.hann_window or "
                  "torch.hamming_window are recommended to reduce spectral leakage.To suppress "
                  "this warning and use a rectangular window, explicitly set `window=torch.ones("
                  "n_fft, device=<device>)`.", stacklevel=_amp_hook.stacklevel(2) + 1)
    window_ = window
    left = (n_fft - win) // 2
    if win < n_fft:   # the window centred in n_fft points
        window_ = zeros(n_fft, dtype=input.dtype, device=input.device)
        window_[left:left + win] = 1 if window is None else window
    if align_to_window:
        # NOTE: PyTorch pads ``left`` zeros on each side and takes the frames of the window's
        # span, 1 + (length - win_length) // hop of them; when n_fft - win_length is odd its
        # last frame can end past the padded signal, and it refuses with its storage error.
        frames = 1 + (length - win) // hop
        padded = length + 2 * left
        if (frames - 1) * hop + n_fft > padded:
            item = x.dtype.itemsize
            raise RuntimeError(
                f"setStorage: sizes [{x.shape[0]}, {frames}, {n_fft}], strides [{padded}, {hop},"
                f" 1], storage offset 0, and itemsize {item} requiring a storage size of "
                f"{((x.shape[0] - 1) * padded + (frames - 1) * hop + n_fft) * item} are out of "
                f"bounds for storage of size {x.shape[0] * padded * item}")
        from .spatial import pad
        x = pad(x, [left, left])[:, :(frames - 1) * hop + n_fft]
    frames = x.unfold(1, n_fft, hop)
    if window_ is not None:
        frames = frames * window_
    complex_fft = frames.dtype.is_complex
    side = (not complex_fft) if onesided is None else onesided
    scale = 1.0 / math.sqrt(n_fft) if normalized else 1.0
    if complex_fft:
        if side:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = _fft.c2c(frames, (2,), True, scale)
    else:
        out = _fft.r2c(frames, (2,), side, scale)
    out = out.transpose(1, 2)
    if input.ndim == 1:
        out = out.squeeze(0)
    if complex_out:
        return out
    from .complex import view_as_real
    return view_as_real(out)


def _overlap_add(y, length, size, step):
    """ATen's unfold_backward along dim 1: frames (B, n, size) summed into (B, length)."""
    idx = (np.arange(y.shape[1])[:, None] * step + np.arange(size)).ravel()
    out = jnp.zeros((y.shape[0], length), y.dtype)
    return out.at[:, idx].add(y.reshape(y.shape[0], -1))


OVERLAP_ADD = Op("unfold_backward", _overlap_add, "UnfoldBackwardBackward0", saves=())


def _istft_repr(input, n_fft, hop, win, window, center, normalized, onesided, length,
                return_complex):
    w = "None" if window is None else f"{_type(window)}{{{list(window.shape)}}}"
    return (f"istft({_type(input)}{list(input.shape)}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={w}, center={int(bool(center))}, "
            f"normalized={int(bool(normalized))}, onesided={_flag(onesided)}, "
            f"length={'None' if length is None else length}, "
            f"return_complex={int(bool(return_complex))}) ")


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """Mirrors ``torch.istft``: the signal whose ``stft`` (with the same arguments) is
    ``input``, by inverse FFTs of the frames and a windowed overlap-add divided by the summed
    squared window (which must not vanish anywhere: NOLA).  ``length`` trims or zero-pads the
    result."""
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    r = _istft_repr(input, n_fft, hop, win, window, center, normalized, onesided, length,
                    return_complex)
    if not input.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    if window is not None and window.device != input.device:
        raise RuntimeError(f"istft input and window must be on the same device but got self on "
                           f"{input.device} and window on {window.device}")
    ndim = input.ndim
    n_frames, fft_size = input.shape[-1], input.shape[-2]
    expected = n_fft + hop * (n_frames - 1)
    if input.numel() == 0:
        raise RuntimeError(r + ": input tensor cannot be empty.")
    if ndim not in (2, 3):
        # (PyTorch counts the dims of the input's view_as_real)
        raise RuntimeError(r + f": expected a tensor with 3 or 4 dimensions, but got {ndim + 1}")
    side = onesided if onesided is not None else fft_size != n_fft
    if side and n_fft // 2 + 1 != fft_size:
        raise RuntimeError(r + ": expected the frequency dimension (3rd to the last) of the input"
                               f" tensor to match n_fft / 2 + 1 when onesided=True, but got "
                               f"{fft_size}")
    if not side and n_fft != fft_size:
        raise RuntimeError(r + ": expected the frequency dimension (3rd to the last) of the input"
                               f" tensor to match n_fft when onesided=False, but got {fft_size}")
    if not 0 < hop <= win:
        raise RuntimeError(r + ": expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise RuntimeError(r + ": expected 0 < win_length <= n_fft")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        raise RuntimeError(r + ": Invalid window shape. window has to be 1D and length of "
                               "`win_length`")
    if window is None:
        warn_once("A window was not provided. A rectangular window will be applied.Please provide "
                  "the same window used by stft to make the inversion lossless.To suppress this "
                  "warning and use a rectangular window, explicitly set `window=torch.ones(n_fft, "
                  "device=<device>)`.")
    real_dt = input.dtype.to_real()
    window_ = window if window is not None else \
        _finish(_place(np.ones(win, real_dt._np), input.device), False)
    if win != n_fft:
        from .spatial import constant_pad_nd
        left = (n_fft - win) // 2
        window_ = constant_pad_nd(window_, [left, n_fft - win - left], 0)
    x = input.unsqueeze(0) if ndim == 2 else input
    x = x.transpose(1, 2)   # (channel, n_frames, fft_size)
    scale = 1.0 / math.sqrt(n_fft) if normalized else 1.0 / n_fft
    if return_complex:
        if side:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        x = _fft.c2c(x, (2,), False, scale)
    else:
        if window is not None and window.dtype.is_complex:
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not side:
            x = x.narrow(-1, 0, n_fft // 2 + 1)
        x = _fft.c2r(x, (2,), n_fft, scale)
    y_tmp = x * window_.view(1, 1, n_fft)
    static = (("length", expected), ("size", n_fft), ("step", hop))
    y = call(OVERLAP_ADD, y_tmp, static=static)
    envelope = call(OVERLAP_ADD, window_.pow(2).expand(1, n_frames, n_fft), static=static)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else -(n_fft // 2) if center else expected
    y = y[:, start:end]
    envelope = envelope[:, start:end]
    lowest = envelope.abs().min()
    if bool(lowest.lt(1e-11)):
        raise RuntimeError(r + "window overlap add min: 1\n[ CPUBoolType{} ]")
    y = y / envelope
    if ndim == 2:
        y = y.squeeze(0)
    if end > expected:
        warn_once("The length of signal is shorter than the length parameter. Result is being "
                  "padded with zeros in the tail. Please check your center and hop_length "
                  "settings.")
        from .spatial import constant_pad_nd
        y = constant_pad_nd(y, [0, end - expected], 0)
    return y


PUBLIC = ("hann_window", "hamming_window", "blackman_window", "bartlett_window",
          "kaiser_window", "stft", "istft")
TENSOR_METHODS = {"stft": stft, "istft": istft}
