"""torch-named dtypes mapped onto jax/numpy dtypes, and PyTorch's type promotion."""

import jax.numpy as jnp
import ml_dtypes
import numpy as np

__all__ = ["dtype"]


class dtype:
    """Mirrors ``torch.dtype``: an immutable, singleton description of an element type."""

    __slots__ = ("_name", "_np", "is_floating_point", "is_complex", "is_signed", "itemsize",
                 "_tensor_type", "_scalar_name")

    def __init__(self, name, np_dtype, tensor_type):
        self._name = name
        self._np = np.dtype(np_dtype)
        kind = self._np.kind
        self.is_floating_point = kind == "f" or np_dtype is ml_dtypes.bfloat16
        self.is_complex = kind == "c"
        self.is_signed = kind != "u" and kind != "b"
        self.itemsize = self._np.itemsize
        self._tensor_type = tensor_type                      # 'FloatTensor', as Tensor.type()
        self._scalar_name = tensor_type[:-len("Tensor")]     # 'Float', as in PyTorch's errors

    def __repr__(self):
        # Users write `import torchlike as torch`, so `torch.float32` is the public spelling.
        return "torch." + self._name

    __str__ = __repr__

    def __reduce__(self):
        return self._name

    def to_complex(self):
        return {float32: complex64, float64: complex128}.get(self, self)

    def to_real(self):
        return {complex64: float32, complex128: float64}.get(self, self)


bool_ = dtype("bool", np.bool_, "BoolTensor")
uint8 = dtype("uint8", np.uint8, "ByteTensor")
uint16 = dtype("uint16", np.uint16, "UInt16Tensor")
uint32 = dtype("uint32", np.uint32, "UInt32Tensor")
uint64 = dtype("uint64", np.uint64, "UInt64Tensor")
int8 = dtype("int8", np.int8, "CharTensor")
int16 = dtype("int16", np.int16, "ShortTensor")
int32 = dtype("int32", np.int32, "IntTensor")
int64 = dtype("int64", np.int64, "LongTensor")
float16 = dtype("float16", np.float16, "HalfTensor")
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, "BFloat16Tensor")
float32 = dtype("float32", np.float32, "FloatTensor")
float64 = dtype("float64", np.float64, "DoubleTensor")
complex64 = dtype("complex64", np.complex64, "ComplexFloatTensor")
complex128 = dtype("complex128", np.complex128, "ComplexDoubleTensor")

ALL = (bool_, uint8, uint16, uint32, uint64, int8, int16, int32, int64, float16, bfloat16,
       float32, float64, complex64, complex128)
# torch's aliases: torch.float is torch.float32, torch.long is torch.int64, ...
ALIASES = {"bool": bool_, "uint8": uint8, "uint16": uint16, "uint32": uint32, "uint64": uint64,
           "int8": int8, "int16": int16, "short": int16, "int32": int32, "int": int32,
           "int64": int64, "long": int64, "float16": float16, "half": float16,
           "bfloat16": bfloat16, "float32": float32, "float": float32, "float64": float64,
           "double": float64, "complex64": complex64, "cfloat": complex64,
           "complex128": complex128, "cdouble": complex128}

_FROM_NP = {d._np: d for d in ALL}


def from_numpy_dtype(np_dtype):
    """The torchlike dtype of a numpy/jax dtype; TypeError for one torch does not have."""
    try:
        return _FROM_NP[np_dtype]
    except KeyError:
        d = _FROM_NP.get(np.dtype(np_dtype))
        if d is None:
            raise TypeError(f"can't convert np.ndarray of type {np.dtype(np_dtype)}. The only "
                            "supported types are: float64, float32, float16, complex64, "
                            "complex128, int64, int32, int16, int8, uint8, and bool.") from None
        return d


def to_dtype(d):
    """Accept a torchlike dtype, a numpy/jax dtype or a Python type (as torch accepts)."""
    if isinstance(d, dtype):
        return d
    if d is float:
        return float64
    if d is int:
        return int64
    if d is bool:
        return bool_
    if d is complex:
        return complex128
    return from_numpy_dtype(d)


# --- defaults -----------------------------------------------------------------------------------

class _Defaults:
    """Process-wide, as torch.set_default_dtype is."""
    float = float32


_defaults = _Defaults()


def get_default_dtype():
    """Mirrors ``torch.get_default_dtype``."""
    return _defaults.float


def set_default_dtype(d):
    """Mirrors ``torch.set_default_dtype``: the dtype of Python floats and float factories."""
    d = to_dtype(d)
    if d not in (float16, bfloat16, float32, float64):
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _defaults.float = d


def default_complex():
    return complex128 if _defaults.float is float64 else complex64


# --- promotion (c10/core/ScalarType.h semantics) ------------------------------------------------

_PROMOTE = {}


def promote_types(a, b):
    """Mirrors ``torch.promote_types``."""
    key = (a, b)
    r = _PROMOTE.get(key)
    if r is None:
        if a is b:
            r = a
        elif {a, b} == {float16, bfloat16}:
            r = float32
        else:
            r = _FROM_NP[np.dtype(jnp.promote_types(a._np, b._np))]
        _PROMOTE[key] = r
    return r


def _combine(higher, lower):
    """Let a lower-priority operand (0-dim tensor, Python scalar) lift the result's category."""
    if higher is None:
        return lower
    if lower is None or higher.is_complex:
        return higher
    if lower.is_complex:
        return higher.to_complex() if higher.is_floating_point else lower
    if higher.is_floating_point:
        return higher
    if higher is bool_ or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


def scalar_dtype(value):
    """The dtype a Python scalar takes in a lone factory call (torch.tensor(2.0) -> float32)."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int64
    if isinstance(value, float):
        return _defaults.float
    if isinstance(value, complex):
        return default_complex()
    raise TypeError(f"not a Python scalar: {value!r}")


def result_type(dims, zeros, scalars):
    """PyTorch's result type from dimensioned tensors, 0-dim tensors and Python scalars
    (each a list of dtypes; scalars already mapped through ``scalar_dtype``)."""
    def fold(ds):
        r = None
        for d in ds:
            r = d if r is None else promote_types(r, d)
        return r
    return _combine(fold(dims), _combine(fold(zeros), fold(scalars)))


# --- Python numbers written into a tensor -------------------------------------------------------

_C_TYPES = {"uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t",
            "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
            "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
            "float64": "double", "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>"}
_INT_RANGES = {d: (int(np.iinfo(d._np).min), int(np.iinfo(d._np).max))
               for d in (uint8, uint16, uint32, uint64, int8, int16, int32, int64)}
# the largest finite value of each floating dtype narrower than float64 (complex64: its parts')
_FLOAT_MAX = {d: float(ml_dtypes.finfo(d._np if d is not complex64 else np.float32).max)
              for d in (float16, bfloat16, float32, complex64)}
_INF = float("inf")


def check_scalar(value, dt):
    """RuntimeError, as PyTorch's, where the Python number ``value`` written into a tensor of
    dtype ``dt`` (a fill, a masked or indexed write) does not fit it (``check_int_range``;
    a float dtype takes its finite range and the infinities, a real dtype no imaginary part).
    bool takes anything."""
    if isinstance(value, complex):
        if dt.is_complex:
            value = max(abs(value.real), abs(value.imag))
        elif dt is not bool_ and (value.imag != 0 or value.imag != value.imag):
            raise _overflow(_C_TYPES.get(dt._name))
        else:
            value = value.real
    elif type(value) is bool or not isinstance(value, (int, float)):
        return
    if dt in _INT_RANGES:
        check_int_range(value, value, isinstance(value, float), dt, _C_TYPES[dt._name])
    elif dt in _FLOAT_MAX and _FLOAT_MAX[dt] < abs(value) < _INF:
        raise _overflow(_C_TYPES[dt._name])


def fit_scalar(value, dt):
    """The Python number ``value`` as a tensor of dtype ``dt`` takes it: checked as
    check_scalar checks it, a negative int wrapped into an unsigned dtype as C converts it
    (-1 is 255 for uint8)."""
    check_scalar(value, dt)
    if type(value) is int and value < 0 and _INT_RANGES.get(dt, (None,))[0] == 0:
        return value % (_INT_RANGES[dt][1] + 1)
    return value


def read_scalar(value, dt):
    """The Python number ``value`` a fill writes into a tensor of dtype ``dt``, read as PyTorch
    reads a Scalar: an int from -2**63 up to 2**64 (OverflowError past it), checked and wrapped
    as ``fit_scalar`` does, and an int past int64 a float where ``dt`` is floating."""
    if type(value) is int:
        if not -2 ** 63 <= value < 2 ** 64:
            raise OverflowError("int too big to convert" if value > 0 else
                                "can't convert negative int to unsigned")
        if value >= 2 ** 63 and (dt.is_floating_point or dt.is_complex):
            check_scalar(value, dt)
            return float(value)
    return fit_scalar(value, dt)


def check_int_range(lowest, highest, floats, dt, name):
    """RuntimeError "value cannot be converted to type {name} without overflow" unless values
    from ``lowest`` to ``highest`` fit the integer dtype ``dt``: floats (nan never fits) in its
    range, ints too, where a negative int wraps into an unsigned dtype down to -max, as in C."""
    lo, hi = _INT_RANGES[dt]
    if lo == 0 and not floats:
        lo = -hi
    if not (lo <= lowest and highest <= hi):   # False for nan
        raise _overflow(name)


def _overflow(name):
    return RuntimeError(f"value cannot be converted to type {name} without overflow")
