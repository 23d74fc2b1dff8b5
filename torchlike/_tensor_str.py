"""Tensor printing that matches PyTorch's ``repr(tensor)`` character for character.

Works on plain numpy arrays, so it knows nothing about Tensor objects: the Tensor class passes
its data, its torch dtype name, and the trailing ``name=value`` parts it wants shown. The global
print options mirror ``torch.set_printoptions``.

How a tensor is printed (see NOTE [ float formatting ] for the number rules):

* more than ``threshold`` elements: each dimension longer than ``2 * edgeitems`` shows only its
  first and last ``edgeitems`` entries, with ``...`` between; the formatter only looks at the
  entries that are shown;
* every element is right-aligned to one common width; a 1-d row wraps to at most ``linewidth``
  characters, and each level of nesting adds a blank line between blocks (``,\\n\\n``);
* trailing parts go on the same line while it stays within ``linewidth``, else on a new line
  indented by ``len(prefix)``.
"""

import math
from dataclasses import asdict, dataclass

import numpy as np


@dataclass
class PrintOptions:
    """The options ``torch.set_printoptions`` controls (same names, same defaults)."""

    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = PrintOptions()

_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Mirrors ``torch.set_printoptions``.

    Args:
        precision: digits after the decimal point (default 4).
        threshold: element count above which tensors are summarized (default 1000).
        edgeitems: entries shown at each end of a summarized dimension (default 3).
        linewidth: characters per line before wrapping (default 80).
        profile: ``'default'``, ``'short'`` or ``'full'``; applied first, then the other arguments.
        sci_mode: force scientific notation on (True) or off (False); None lets the data decide.
            As in torch, every call sets it, so omitting it resets it to None.

    Example:
        >>> set_printoptions(precision=2)
        >>> set_printoptions(profile="default")
    """
    # NOTE: like torch, an unknown profile is silently ignored.
    for name, value in _PROFILES.get(profile, {}).items():
        setattr(PRINT_OPTS, name, value)
    for name, value in dict(precision=precision, threshold=threshold, edgeitems=edgeitems,
                            linewidth=linewidth).items():
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    """Mirrors ``torch._tensor_str.get_printoptions``: the options as keyword arguments
    for ``set_printoptions``."""
    return asdict(PRINT_OPTS)


def _is_float(dtype: np.dtype) -> bool:
    # ml_dtypes' bfloat16 reports kind 'V', so it is recognised by name.
    return dtype.kind == "f" or dtype.name.startswith(("bfloat16", "float8"))


# NOTE [ float formatting ]
# One formatter serves the whole tensor (for complex: one for the real parts, one for the
# imaginary parts). It looks only at the finite nonzero values that will be shown:
# * none at all: every value prints as an integer ('0.', 'nan', '-inf'), whatever sci_mode says;
# * scientific notation when max|x| / min|x| > 1000, max|x| > 1e8 or min|x| < 1e-4, unless
#   PRINT_OPTS.sci_mode forces it on or off;
# * otherwise, if every value is a whole number, 'x.' (no digits after the point), else
#   ``precision`` fixed digits.
# The common width is the longest of those finite nonzero values (nan/inf do not count), at
# least 1. In the whole-number case it counts the trailing '.'.
class _Formatter:
    def __init__(self, values: np.ndarray):
        self.floating = _is_float(values.dtype)
        self.int_mode, self.sci_mode, self.width = True, False, 1
        if not self.floating:
            self.width = max((len(str(v)) for v in np.unique(values).tolist()), default=1)
            return
        values = values.astype(np.float64)
        shown = np.unique(values[np.isfinite(values) & (values != 0)])
        if shown.size == 0:
            return
        magnitude = np.abs(shown)
        low, high = magnitude.min(), magnitude.max()
        self.int_mode = bool(np.all(shown == np.ceil(shown)))
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = bool(high / low > 1000.0 or high > 1.0e8 or low < 1.0e-4)
        else:
            self.sci_mode = PRINT_OPTS.sci_mode
        if self.sci_mode:
            spec, extra = f".{PRINT_OPTS.precision}e", 0
        elif self.int_mode:
            spec, extra = ".0f", 1
        else:
            spec, extra = f".{PRINT_OPTS.precision}f", 0
        self.width = max(1, max(len(format(v, spec)) + extra for v in shown.tolist()))

    def format(self, value) -> str:
        """Formats one Python scalar (float, int or bool), right-aligned to the common width."""
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = format(value, f".{PRINT_OPTS.precision}e")
        elif self.int_mode:
            text = format(value, ".0f") + ("" if math.isinf(value) or math.isnan(value) else ".")
        else:
            text = format(value, f".{PRINT_OPTS.precision}f")
        return text.rjust(self.width)


class _ComplexFormatter:
    """Pairs a real-part and an imaginary-part formatter: ``a+bj`` / ``a-bj``."""

    def __init__(self, values: np.ndarray):
        self.real, self.imag = _Formatter(values.real), _Formatter(values.imag)
        self.width = self.real.width + 1 + self.imag.width  # the extra 1 is the 'j'

    def format(self, value: complex) -> str:
        imag = (self.imag.format(value.imag) + "j").lstrip()
        sign = "" if imag[0] in "+-" else "+"
        return self.real.format(value.real) + sign + imag


def _python_values(array: np.ndarray) -> list:
    """Elements as exact Python scalars (float16/bfloat16 widen to float without rounding)."""
    if _is_float(array.dtype):
        array = array.astype(np.float64)
    return array.reshape(-1).tolist()


def _summarized(array: np.ndarray) -> np.ndarray:
    """The flat values a summarized print shows, which are the only ones the formatter sees."""
    edge = PRINT_OPTS.edgeitems
    if array.ndim == 0:
        return array.reshape(-1)
    if array.ndim == 1:
        # NOTE: with edgeitems=0, array[-0:] is the whole array; torch keeps that quirk too.
        return np.concatenate([array[:edge], array[-edge:]]) if len(array) > 2 * edge else array
    if not edge:
        return array.reshape(-1)[:0]
    rows = [*array[:edge], *array[-edge:]] if len(array) > 2 * edge else list(array)
    return np.concatenate([_summarized(row) for row in rows])


def _shown_rows(length: int, summarize: bool) -> list:
    """Indices of the entries shown along one dimension, with None marking the '...'."""
    edge = PRINT_OPTS.edgeitems
    if summarize and length > 2 * edge:
        return [*range(edge), None, *range(length - edge, length)]
    return list(range(length))


def _vector_str(array, indent, summarize, formatter) -> str:
    per_line = max(1, (PRINT_OPTS.linewidth - indent) // (formatter.width + 2))
    if summarize and not PRINT_OPTS.edgeitems:
        items = ["..."]
    else:
        row = _python_values(array)
        items = [" ..." if i is None else formatter.format(row[i])
                 for i in _shown_rows(len(array), summarize)]
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(array, indent, summarize, formatter) -> str:
    if array.ndim == 0:
        return formatter.format(_python_values(array)[0])
    if array.ndim == 1:
        return _vector_str(array, indent, summarize, formatter)
    blocks = ["..." if i is None else _nested_str(array[i], indent + 1, summarize, formatter)
              for i in _shown_rows(len(array), summarize)]
    return "[" + ("," + "\n" * (array.ndim - 1) + " " * (indent + 1)).join(blocks) + "]"


def _data_str(array: np.ndarray, indent: int) -> str:
    summarize = array.size > PRINT_OPTS.threshold
    shown = _summarized(array) if summarize else array.reshape(-1)
    is_complex = array.dtype.kind == "c"
    formatter = _ComplexFormatter(shown) if is_complex else _Formatter(shown)
    return _nested_str(array, indent, summarize, formatter)


def _add_suffixes(text: str, suffixes: list, indent: int) -> str:
    # NOTE: the "+ 1" (and +2 without any newline) overcounts the last line; torch does the
    # same, and the wrap point of the suffixes depends on it.
    line_len = len(text) - text.rfind("\n") + 1
    parts = [text]
    for suffix in suffixes:
        if line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            line_len += len(suffix) + 2
    return "".join(parts) + ")"


def format_meta(shape, *, dtype_name, show_dtype, suffixes=(), prefix="tensor("):
    """Mirrors ``repr`` of a meta tensor: ``tensor(..., device='meta', size=(2, 3))``, with
    ``dtype=`` for any dtype but the default float one (``show_dtype``), then ``suffixes``."""
    parts = ["device='meta'", f"size={tuple(shape)}"]
    if show_dtype:
        parts.append(f"dtype={dtype_name}")
    parts += [f"{name}={value}" for name, value in suffixes]
    return _add_suffixes(prefix + "...", parts, len(prefix))


def format_tensor(values, *, dtype_name, show_dtype, suffixes=(), prefix="tensor(",
                  device_str=None) -> str:
    """Mirrors ``repr(torch.Tensor)`` for a dense tensor holding ``values``.

    Args:
        values: numpy array with the data (bool, uint8, int8/16/32/64, float16,
            ml_dtypes.bfloat16, float32, float64, complex64 or complex128).
        dtype_name: the torch spelling of the dtype, e.g. ``'torch.float16'``.
        show_dtype: whether torch prints ``dtype=`` for a non-empty tensor of this dtype, i.e.
            the dtype is not the default float dtype, its complex counterpart, int64 or bool.
            Empty tensors show every dtype except the default float one; this is inferred as
            "a real floating dtype with ``show_dtype=False``".
        suffixes: further ``(name, value_text)`` pairs, printed as ``name=value_text`` in the
            given order, e.g. ``[('grad_fn', '<SumBackward0>')]`` or ``[('requires_grad',
            'True')]``. Pass them in torch's order: layout, then grad_fn or requires_grad,
            then tangent.
        prefix: text before the data; its length is the indent of continuation lines.
        device_str: the device as ``str(device)`` (e.g. ``'cuda:0'``) when torch would show it
            (it differs from the default device); printed quoted, as ``device='cuda:0'``.

    Returns:
        The repr. Trailing parts come in torch's order: ``device=``, ``size=``, ``dtype=``,
        then ``suffixes``. ``size=`` appears for empty tensors that are not 1-d, and for every
        non-empty tensor while ``edgeitems`` is 0.

    Example:
        >>> format_tensor(np.array([1, 2], np.int32), dtype_name="torch.int32", show_dtype=True)
        'tensor([1, 2], dtype=torch.int32)'
    """
    array = np.asarray(values)
    indent = len(prefix)
    parts = [] if device_str is None else [f"device='{device_str}'"]
    size_part = f"size={tuple(array.shape)}"
    if array.size == 0:
        text = "[]"
        if array.ndim != 1:
            parts.append(size_part)
        is_default_float = _is_float(array.dtype) and not show_dtype
        show_dtype = not is_default_float
    else:
        text = _data_str(array, indent)
        if not PRINT_OPTS.edgeitems:
            parts.append(size_part)
    if show_dtype:
        parts.append(f"dtype={dtype_name}")
    parts += [f"{name}={value}" for name, value in suffixes]
    return _add_suffixes(prefix + text, parts, indent)
