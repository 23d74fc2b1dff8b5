"""Convolutions: conv1d/2d/3d, conv_transpose1d/2d/3d, and the sliding-block pair unfold (im2col)
/ fold (col2im).

Every convolution, transposed or not, is ONE op, ``ConvolutionBackward0`` as in PyTorch, whose
function is one ``lax.conv_general_dilated``; its backward is jax.vjp of that (XLA's own
convolution gradients).  A transposed convolution is the ordinary convolution of the
stride-dilated input with the flipped, in/out-swapped kernel.  As in PyTorch, an unbatched input
is unsqueezed to a batch of one and squeezed back (``SqueezeBackward1`` -> ``ConvolutionBackward0``
-> ``UnsqueezeBackward0``), and ``padding='same'`` with an even effective kernel pads the input
on the right first (``ConstantPadNdBackward0``).

float32 convolutions run at the precision PyTorch's switches give them: cuDNN's TF32 switch on
a cuda device, the float32 matmul precision elsewhere (NOTE [ matmul precision ] in
_precision.py).
"""
import itertools
import warnings

import jax.numpy as jnp
from jax import lax

from .. import _amp_hook
from .. import _dtype as D, _precision
from .._dispatch import Op, call
from .._tensor import _c_type
from . import shape as _shape
from .padded import batch_rows
from .spatial import CONSTANT_PAD

_SPECS = {1: ("NCH", "OIH", "NCH"), 2: ("NCHW", "OIHW", "NCHW"), 3: ("NCDHW", "OIDHW", "NCDHW")}
_AXES = {1: ("width",), 2: ("height", "width"), 3: ("depth", "height", "width")}


# --- the op -------------------------------------------------------------------------------------

def _convolution(x, w, b, stride, padding, dilation, groups, transposed, output_padding,
                 precision, has_bias):
    n = w.ndim - 2
    if transposed:
        # (C_in, C_out/g, *k) -> (C_out, C_in/g, *k), kernel flipped: the adjoint of a conv
        cin, coutg, k = w.shape[0], w.shape[1], w.shape[2:]
        w = w.reshape((groups, cin // groups, coutg) + k).swapaxes(1, 2)
        w = jnp.flip(w.reshape((groups * coutg, cin // groups) + k), tuple(range(2, n + 2)))
        pads = [(d * (kk - 1) - p, d * (kk - 1) - p + op)
                for kk, d, (p, _), op in zip(k, dilation, padding, output_padding)]
        y = lax.conv_general_dilated(x, w, (1,) * n, pads, lhs_dilation=stride,
                                     rhs_dilation=dilation, dimension_numbers=_SPECS[n],
                                     feature_group_count=groups, precision=precision)
    else:
        y = lax.conv_general_dilated(x, w, stride, padding, rhs_dilation=dilation,
                                     dimension_numbers=_SPECS[n], feature_group_count=groups,
                                     precision=precision)
    if has_bias:
        y = y + b.reshape((-1,) + (1,) * n)
    return y


# (a short batch runs a longer one's program: NOTE [ a short call in a longer one's program ])
CONVOLUTION = Op("convolution", _convolution, "ConvolutionBackward0", saves=(0, 1),
                 bucket=batch_rows)


# --- argument checks (PyTorch's wording) --------------------------------------------------------

def _int_tuple(value, n, name, fn):
    """An int or a sequence of 1 or n ints, as n ints (PyTorch's IntArrayRef[n] binding)."""
    if isinstance(value, bool) or not isinstance(value, (int, tuple, list)) or (
            not isinstance(value, int) and not all(isinstance(v, int) for v in value)):
        raise TypeError(f"{fn}(): argument '{name}' must be tuple of ints, not "
                        f"{type(value).__name__}")
    if isinstance(value, int):
        return (value,) * n
    value = tuple(value)
    return value * n if len(value) == 1 else value


def _dims_match(name, value, n):
    if len(value) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} values "
                           f"to match the convolution dimensions, but got {name}={list(value)}")


def _check_conv(fn, x, w, b, stride, padding, dilation, groups, transposed, output_padding):
    """PyTorch's checks of a (batched) convolution, in PyTorch's order."""
    if w.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    n = w.ndim - 2
    for name, value in (("stride", stride), ("padding", padding), ("dilation", dilation)):
        _dims_match(name, value, n)
    if transposed:
        _dims_match("output_padding", output_padding, n)
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if transposed and any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        # NOTE: 1-d convolutions run as 2-d ones in PyTorch, so their message shows two values
        shown = [1] + list(dilation) if n == 1 else list(dilation)
        raise RuntimeError(f"dilation should be greater than zero, but got {shown}")
    ws, xs = list(w.shape), list(x.shape)
    if ws[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at "
                           f"dimension 0, but got weight of size {ws} instead")
    if ws[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{ws}] instead")
    if transposed:
        if xs[1] != ws[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {ws}, expected input{xs} to "
                               f"have {ws[0]} channels, but got {xs[1]} channels instead")
        out_channels = ws[1] * groups
        if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
            names = _AXES[max(n, 2)]
            pad = ([0] if n == 1 else []) + list(output_padding)
            st = ([1] if n == 1 else []) + list(stride)
            di = ([1] if n == 1 else []) + list(dilation)
            parts = [f"output_padding_{a}: {v}" for a, v in zip(names, pad)]
            parts += [f"stride_{a}: {v}" for a, v in zip(names, st)]
            parts += [f"dilation_{a}: {v}" for a, v in zip(names, di)]
            raise RuntimeError("output padding must be smaller than either stride or dilation, "
                               "but got " + " ".join(parts))
    else:
        if xs[1] != ws[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {ws}, expected input{xs} "
                               f"to have {ws[1] * groups} channels, but got {xs[1]} channels "
                               "instead")
        out_channels = ws[0]
        padded = [s + 2 * p for s, p in zip(xs[2:], padding)]
        kernel = [d * (k - 1) + 1 for k, d in zip(ws[2:], dilation)]
        if any(k > s for k, s in zip(kernel, padded)):
            raise RuntimeError(
                f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
                f"Kernel size: ({' x '.join(map(str, kernel))}). Kernel size can't be greater "
                "than actual input size")
    if b is not None and (b.ndim != 1 or b.shape[0] != out_channels):
        what = "Given transposed=1, weight" if transposed else "Given weight"
        raise RuntimeError(f"{what} of size {ws}, expected bias to be 1-dimensional with "
                           f"{out_channels} elements, but got bias of size {list(b.shape)} "
                           "instead")
    if transposed:
        sizes = [(i - 1) * s - 2 * p + d * (k - 1) + op + 1 for i, s, p, d, k, op in
                 zip(xs[2:], stride, padding, dilation, ws[2:], output_padding)]
        if any(o <= 0 for o in sizes):
            raise RuntimeError(
                f"Given input size per channel: ({' x '.join(map(str, xs[2:]))}). Calculated "
                f"output size per channel: ({' x '.join(map(str, sizes))}). Output size is too "
                "small")
    if x.dtype is not w.dtype:
        raise RuntimeError(f"expected scalar type {x.dtype._scalar_name} but found "
                           f"{w.dtype._scalar_name}")
    if b is not None and b.dtype is not x.dtype:
        raise RuntimeError(f"Input type ({_c_type(x.dtype)}) and bias type ({_c_type(b.dtype)}) "
                           "should be the same")
    if x.dtype is D.bool_:
        kernel = {1: "slow_conv2d_cpu", 2: "slow_conv2d_cpu", 3: "compute_columns3d"}[n]
        if transposed:
            kernel = f"slow_conv_transpose{max(n, 2)}d_out_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _conv(fn, n, input, weight, bias, stride, padding, dilation, groups, transposed=False,
          output_padding=0):
    """The shared body of conv{n}d / conv_transpose{n}d."""
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {fn}, "
                           f"but got input of size: {list(input.shape)}")
    if isinstance(groups, bool) or not isinstance(groups, int):
        raise TypeError(f"{fn}() received an invalid combination of arguments - got groups="
                        f"{type(groups).__name__}, but expected (int groups = 1)")
    stride = _int_tuple(stride, n, "stride", fn)
    dilation = _int_tuple(dilation, n, "dilation", fn)
    output_padding = _int_tuple(output_padding, n, "output_padding", fn)
    unbatched = input.ndim == n + 1
    x = _shape.unsqueeze(input, 0) if unbatched else input
    right = None   # 'same' with an even effective kernel: extra padding on the right
    if isinstance(padding, str):
        if transposed:
            raise TypeError(f"{fn}(): argument 'padding' must be tuple of ints, not str")
        if padding == "valid":
            pads = (0,) * n
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            if weight.ndim != n + 2:
                _dims_match("stride", stride, weight.ndim - 2)
            total = [d * (k - 1) for d, k in zip(dilation, weight.shape[2:])]
            pads = tuple(t // 2 for t in total)
            if any(t % 2 for t in total):
                warnings.warn("Using padding='same' with even kernel lengths and odd dilation may "
                              "require a zero-padded copy of the input be created", stacklevel=3)
                right = tuple(t % 2 for t in total)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        pads = _int_tuple(padding, n, "padding", fn)
    _check_conv(fn, x, weight, bias, stride, pads, dilation, groups,
                transposed, output_padding)
    if right is not None:
        pads_nd = ((0, 0), (0, 0)) + tuple((0, r) for r in right)
        x = call(CONSTANT_PAD, x, static=(("pads", pads_nd),))
    static = (("stride", stride), ("padding", tuple((p, p) for p in pads)),
              ("dilation", dilation), ("groups", groups), ("transposed", bool(transposed)),
              ("output_padding", output_padding),
              ("precision", _precision.conv(x.device.type)),
              ("has_bias", bias is not None))
    # NOTE: a missing bias is passed as the scalar 0, not None, so the node still lists it
    # ((None, 0) in next_functions, as PyTorch) and create_graph can trace the op's inputs.
    out = call(CONVOLUTION, x, weight, 0 if bias is None else bias, static=static)
    return _shape.squeeze(out, 0) if unbatched else out


# --- public functions ---------------------------------------------------------------------------

@_amp_hook.entry("conv1d")
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Mirrors ``torch.nn.functional.conv1d``: a 1-d convolution (cross-correlation) of
    ``input`` (N, C_in, L) or (C_in, L) with ``weight`` (C_out, C_in/groups, k).

    ``padding`` is an int, a 1-tuple, ``'valid'`` or ``'same'``.

    Example::

        >>> y = F.conv1d(torch.randn(2, 3, 8), torch.randn(4, 3, 3), padding="same")
    """
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


@_amp_hook.entry("conv2d")
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Mirrors ``torch.nn.functional.conv2d``: a 2-d convolution (cross-correlation) of
    ``input`` (N, C_in, H, W) or (C_in, H, W) with ``weight`` (C_out, C_in/groups, kH, kW).

    ``stride``, ``padding`` and ``dilation`` are ints or pairs; ``padding`` may also be
    ``'valid'`` or ``'same'`` (stride 1 only; an even kernel pads one more on the right).
    Its grad_fn is ``ConvolutionBackward0``.

    Example::

        >>> y = F.conv2d(torch.randn(1, 3, 8, 8), torch.randn(4, 3, 3, 3), stride=2, padding=1)
    """
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


@_amp_hook.entry("conv3d")
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Mirrors ``torch.nn.functional.conv3d``: a 3-d convolution of ``input`` (N, C_in, D, H, W)
    or (C_in, D, H, W) with ``weight`` (C_out, C_in/groups, kD, kH, kW)."""
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


@_amp_hook.entry("conv_transpose1d")
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Mirrors ``torch.nn.functional.conv_transpose1d``: the adjoint of conv1d ("deconvolution");
    ``weight`` is (C_in, C_out/groups, k) and the output length is
    ``(L - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1``."""
    return _conv("conv_transpose1d", 1, input, weight, bias, stride, padding, dilation, groups,
                 True, output_padding)


@_amp_hook.entry("conv_transpose2d")
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Mirrors ``torch.nn.functional.conv_transpose2d``: the adjoint of conv2d; ``weight`` is
    (C_in, C_out/groups, kH, kW).  Its grad_fn is ``ConvolutionBackward0``, as in PyTorch.

    Example::

        >>> y = F.conv_transpose2d(torch.randn(1, 4, 5, 5), torch.randn(4, 2, 3, 3), stride=2)
        >>> y.shape
        torch.Size([1, 2, 11, 11])
    """
    return _conv("conv_transpose2d", 2, input, weight, bias, stride, padding, dilation, groups,
                 True, output_padding)


@_amp_hook.entry("conv_transpose3d")
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Mirrors ``torch.nn.functional.conv_transpose3d``: the adjoint of conv3d; ``weight`` is
    (C_in, C_out/groups, kD, kH, kW)."""
    return _conv("conv_transpose3d", 3, input, weight, bias, stride, padding, dilation, groups,
                 True, output_padding)


# --- unfold (im2col) and fold (col2im) ----------------------------------------------------------

def windows(x, kernel, stride, dilation, pads, out, fill=0):
    """The sliding windows over the last ``len(kernel)`` dims of x: shape (..., K, *out) with
    K = prod(kernel), each window's elements in row-major kernel order.  ``pads`` are (low, high)
    pairs filled with ``fill``; ``out`` the number of windows along each dim."""
    lead = x.ndim - len(kernel)
    if any(lo or hi for lo, hi in pads):
        x = lax.pad(x, jnp.asarray(fill, x.dtype),
                    [(0, 0, 0)] * lead + [(lo, hi, 0) for lo, hi in pads])
    slices = []
    for offs in itertools.product(*(range(k) for k in kernel)):
        start = [o * d for o, d in zip(offs, dilation)]
        limit = [a + (o - 1) * st + 1 for a, o, st in zip(start, out, stride)]
        slices.append(lax.slice(x, (0,) * lead + tuple(start), x.shape[:lead] + tuple(limit),
                                (1,) * lead + tuple(stride)))
    return jnp.stack(slices, axis=lead) if slices else jnp.zeros(
        x.shape[:lead] + (0,) + tuple(out), x.dtype)


def _blocks(x, kernel, dilation, padding, stride):
    """The sliding blocks of unfold: (..., C, K, oh, ow)."""
    out = [(s + 2 * p - d * (k - 1) - 1) // st + 1
           for s, p, d, k, st in zip(x.shape[-2:], padding, dilation, kernel, stride)]
    return windows(x, kernel, stride, dilation, [(p, p) for p in padding], out)


def _im2col(x, kernel, dilation, padding, stride):
    b = _blocks(x, kernel, dilation, padding, stride)   # (..., C, K, oh, ow)
    return b.reshape(b.shape[:-4] + (b.shape[-4] * b.shape[-3], b.shape[-2] * b.shape[-1]))


def _col2im(x, output_size, kernel, dilation, padding, stride):
    k = kernel[0] * kernel[1]
    padded = [s + 2 * p for s, p in zip(output_size, padding)]
    out = [(s - d * (kk - 1) - 1) // st + 1
           for s, d, kk, st in zip(padded, dilation, kernel, stride)]
    blocks = x.reshape(x.shape[:-2] + (x.shape[-2] // k, k) + tuple(out))
    lead = blocks.ndim - 3
    zero = jnp.zeros((), x.dtype)
    total = None
    for i, offs in enumerate(itertools.product(*(range(kk) for kk in kernel))):
        config = [(0, 0, 0)] * lead
        for o, d, n, st, s in zip(offs, dilation, out, stride, padded):
            config.append((o * d, s - o * d - (n - 1) * st - 1, st - 1))
        placed = lax.pad(blocks[..., i, :, :], zero, config)
        total = placed if total is None else total + placed
    (ph, pw), (h, w) = padding, output_size
    return total[..., ph:ph + h, pw:pw + w]


IM2COL = Op("im2col", _im2col, "Im2ColBackward0", saves=())
COL2IM = Op("col2im", _col2im, "Col2ImBackward0", saves=())


def _pair(value, name, fn):
    if isinstance(value, int) and not isinstance(value, bool):
        return (value, value)
    value = tuple(value)
    if len(value) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(value)}")
    return value


def _check_fold_dtype(kernel, x):
    dt = x.dtype
    if not (dt.is_floating_point or dt.is_complex or dt is D.bool_):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{dt._scalar_name}'")


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Mirrors ``torch.nn.functional.unfold`` (im2col): the sliding ``kernel_size`` blocks of a
    (N, C, H, W) or (C, H, W) input as columns, shape (N, C * kH * kW, L).

    Example::

        >>> F.unfold(torch.randn(1, 3, 4, 4), 2).shape
        torch.Size([1, 12, 9])
    """
    kernel, dilation, padding, stride = (
        _pair(v, name, "unfold") for v, name in ((kernel_size, "kernel_size"),
                                                 (dilation, "dilation"), (padding, "padding"),
                                                 (stride, "stride")))
    shape = list(input.shape)
    if input.ndim < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(input.ndim, 1)}, {max(input.ndim, 1) - 1}], but got "
                         f"{input.ndim})")
    if input.ndim > 4 or any(s == 0 for s in shape[-3:]):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and "
                           f"other non-zero dimensions for input, but got: {shape}")
    _check_fold_args(kernel, dilation, padding, stride)
    blocks = [(s + 2 * p - d * (k - 1) - 1) // st + 1
              for s, p, d, k, st in zip(shape[-2:], padding, dilation, kernel, stride)]
    if any(b < 1 for b in blocks):
        raise RuntimeError(
            f"Given input with spatial size {tuple(shape[-2:])}, kernel_size={kernel}, "
            f"dilation={dilation}, padding={padding}, calculated shape of the array of sliding "
            f"blocks as {tuple(blocks)}, but its components must be at least one.")
    _check_fold_dtype("im2col_out_cpu", input)
    return call(IM2COL, input, static=(("kernel", kernel), ("dilation", dilation),
                                       ("padding", padding), ("stride", stride)))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Mirrors ``torch.nn.functional.fold`` (col2im): sums the columns of a
    (N, C * kH * kW, L) or (C * kH * kW, L) input back into (N, C, *output_size); overlapping
    blocks add up.  ``fold(unfold(x))`` multiplies each element by the number of blocks that
    hold it."""
    size, kernel, dilation, padding, stride = (
        _pair(v, name, "fold") for v, name in ((output_size, "output_size"),
                                               (kernel_size, "kernel_size"),
                                               (dilation, "dilation"), (padding, "padding"),
                                               (stride, "stride")))
    shape = list(input.shape)
    if input.ndim not in (2, 3) or any(s == 0 for s in shape[-2:]):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           f"batch size and non-zero dimensions for input, but got: {shape}")
    _check_fold_args(kernel, dilation, padding, stride)
    k = kernel[0] * kernel[1]
    if shape[-2] % k:
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={shape[-2]} and "
                           f"kernel_size={kernel}.")
    blocks = [(s + 2 * p - d * (kk - 1) - 1) // st + 1
              for s, p, d, kk, st in zip(size, padding, dilation, kernel, stride)]
    if blocks[0] * blocks[1] != shape[-1]:
        raise RuntimeError(
            f"Given output_size={size}, kernel_size={kernel}, dilation={dilation}, "
            f"padding={padding}, stride={stride}, expected size of input's dimension 2 to match "
            f"the calculated number of sliding blocks {blocks[0]} * {blocks[1]} = "
            f"{blocks[0] * blocks[1]}, but got input.size(2)={shape[-1]}.")
    if any(b < 1 for b in blocks):
        raise RuntimeError(
            f"Given output_size={size}, kernel_size={kernel}, dilation={dilation}, "
            f"padding={padding}, stride={stride}, calculated shape of the array of sliding blocks "
            f"as {tuple(blocks)}, but its components must be at least one.")
    _check_fold_dtype("col2im_out_cpu", input)
    return call(COL2IM, input, static=(("output_size", size), ("kernel", kernel),
                                       ("dilation", dilation), ("padding", padding),
                                       ("stride", stride)))


def _check_fold_args(kernel, dilation, padding, stride):
    if any(k <= 0 for k in kernel):
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: "
                           f"{kernel[0]} kernel_width: {kernel[1]}")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: "
                           f"{dilation[0]} dilation_width: {dilation[1]}")
    if any(p < 0 for p in padding):
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {padding[0]} "
                           f"pad_width: {padding[1]}")
    if any(s <= 0 for s in stride):
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: "
                           f"{stride[0]} stride_width: {stride[1]}")


PUBLIC = ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")
TENSOR_METHODS = {}
