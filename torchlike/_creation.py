"""Tensor factories: tensor, as_tensor, from_numpy, zeros/ones/full/empty/arange/linspace/eye and
their ``_like`` forms, from_dlpack.  Data is placed on the requested device (default: cpu)."""
import math
import os
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from . import _dtype as D, _layout, _meta, _x64
from ._device import default_device, device as _device_cls, set_default_device, to_jax_device
from ._meta import META
from ._size import _INT64_MAX, int_arg, parse_size, type_name
from ._tensor import Tensor

def get_default_device():
    """Mirrors ``torch.get_default_device``."""
    return default_device()


def _place(arr, device):
    """Host values ``arr`` as an array on ``device`` (the default device when None); on meta,
    only their shape and dtype (NOTE [ the meta device ])."""
    return put(arr, to_jax_device(default_device() if device is None else device))


# NOTE [ placing host values ]
# ``jax.device_put`` of a numpy array spends about 30 µs in Python (2-core CPU, jax 0.10.2; a
# 32-element array) before the copy that its own implementation makes with
# ``pxla.batched_device_put`` (4-6 µs with the array's aval made), and a factory built on the
# host pays it every call: ``arange``, ``tensor``, ``from_numpy``, a batch's positions made
# each step (``torch.arange(T)`` in a model's forward).  So a numpy array placed on one device
# goes to that function directly, with the aval and the sharding device_put would have made
# (``shaped_abstractify`` in torchlike's 64-bit scope; one SingleDeviceSharding kept per
# device): ``torch.arange(32)`` took 41 µs and takes 13-14.  Anything else takes
# ``jax.device_put``: a jax array, a sharding, a jax without that function, and any call inside
# a trace (torchlike.compile's, a user's jax.jit), where device_put is staged into the program
# and returns the trace's value, not an array.
try:
    from jax._src.core import shaped_abstractify as _abstractify, trace_state_clean as _untraced
    from jax._src.interpreters.pxla import batched_device_put as _batched_put
except ImportError:   # (a jax that places otherwise)
    _batched_put = None
_SHARDINGS = {}   # jax device -> its SingleDeviceSharding


@_x64.scoped   # jax 0.11 on a GPU moved an int64 array outside the scope as an int32 buffer
def put(arr, jd):
    """Array ``arr`` (host values or a jax array) on jax device ``jd``; on meta, only its shape
    and dtype (NOTE [ the meta device ]; NOTE [ placing host values ])."""
    if jd is META:
        return _meta.array(arr.shape, arr.dtype)
    if type(arr) is np.ndarray and _batched_put is not None and isinstance(jd, jax.Device) \
            and _untraced():
        sharding = _SHARDINGS.get(jd)
        if sharding is None:
            sharding = _SHARDINGS[jd] = jax.sharding.SingleDeviceSharding(jd)
        return _batched_put(_abstractify(arr), sharding, [arr], [jd])
    return jax.device_put(arr, jd)


@_x64.scoped
def from_host(values, like, dtype=None):
    """A Tensor of host (numpy) ``values`` on ``like``'s device, committed there like every
    array torchlike makes, so jitted ops see one kind of argument and compile once."""
    arr = np.asarray(values, dtype)
    like = like._value() if isinstance(like, Tensor) else like
    return Tensor._wrap(jax.device_put(arr, getattr(like, "sharding", None)))


def _finish(arr, requires_grad):
    t = Tensor._wrap(arr)
    if requires_grad:
        t._set_requires_grad(True, "Only Tensors of floating point and complex dtype can require "
                                   "gradients")
    return t


def _infer_dtype(data):
    """PyTorch's dtype for nested Python data: bool < int64 < default float < default complex."""
    a = np.asarray(data)
    kind = a.dtype.kind
    if kind == "O":   # Python ints past int64 beside floats (NOTE [ Python ints in tensor() ])
        kinds = {type(v) for v in a.ravel()}
        if not kinds <= {bool, int, float, complex}:
            bad = next(v for v in a.ravel() if type(v) not in (bool, int, float, complex))
            raise RuntimeError(f"Could not infer dtype of {type(bad).__name__}")
        kind = "c" if complex in kinds else "f"
    if kind == "b":
        return D.bool_
    if kind in "iu":
        return D.int64
    if kind == "f":
        return D.get_default_dtype()
    if kind == "c":
        return D.default_complex()
    raise TypeError(f"Could not infer dtype of {a.dtype}")


def _check_nested(data):
    """PyTorch's errors for ragged or non-numeric nested data: sizes come from the first
    element at each depth, and every sequence must match them."""
    if isinstance(data, str):
        raise TypeError("new(): invalid data type 'str'")
    sizes, probe = [], data
    while isinstance(probe, (list, tuple, str)):
        if isinstance(probe, str):
            raise ValueError("too many dimensions 'str'")
        sizes.append(len(probe))
        if not probe:
            break
        probe = probe[0]

    def walk(seq, dim):
        if dim == len(sizes):
            if isinstance(seq, (list, tuple)):
                raise ValueError(f"expected sequence of length 0 at dim {dim - 1} (got "
                                 f"{len(seq)})" if not sizes[dim - 1] else "not a sequence")
            return
        if not isinstance(seq, (list, tuple)):
            raise TypeError("not a sequence")
        if len(seq) != sizes[dim]:
            raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} (got "
                             f"{len(seq)})")
        for item in seq:
            walk(item, dim + 1)
    walk(data, 0)


def _numpy_data(data):
    """Nested lists/tuples of scalars and tensors -> numpy array (tensors give their values)."""
    if isinstance(data, (list, tuple)):
        if any(isinstance(d, Tensor) for d in data):
            return np.stack([_numpy_data(d) for d in data]) if data else np.asarray(data)
        return np.asarray([_numpy_data(d) if isinstance(d, (list, tuple)) else d
                           for d in data]) if data else np.zeros((0,), np.float32)
    if isinstance(data, Tensor):
        return np.asarray(data._value())
    return data


def _native(arr):
    """``arr``, if its bytes are in this machine's order (PyTorch's ValueError if not)."""
    if not arr.dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte "
                         "order. Conversion between byte orders is currently not supported.")
    return arr


# NOTE [ Python ints in tensor() ]
# PyTorch reads each Python number as a C long long (ValueError "Overflow when unpacking long
# long" past int64, unless a float among the data or a float dtype makes it read doubles), then
# converts it to the dtype with a range check (RuntimeError "value cannot be converted to type
# uint8 without overflow"; unsigned dtypes let negatives down to -max wrap, as C does).  numpy
# would instead turn such ints into uint64, float64 or objects, or refuse them with its own
# OverflowError, so tensor() checks them first.  Only arrays whose dtype shows that something
# did not fit in int64 (uint64, object, or floats of magnitude 2**63 and more) are walked.

_INTEGRAL = (D.uint8, D.int8, D.int16, D.int32, D.int64, D.uint16, D.uint32)


def _leaves(data):
    if isinstance(data, (list, tuple)):
        for d in data:
            yield from _leaves(d)
    else:
        yield data


def _check_python_ints(data, np_data, dtype):
    """ValueError, as PyTorch's, for a Python int past int64 read as an integer (NOTE [ Python
    ints in tensor() ]); ``dtype`` is the one given, or None."""
    if isinstance(data, (np.ndarray, np.generic)) or (
            dtype is not None and (dtype.is_floating_point or dtype.is_complex or
                                   dtype in (D.bool_, D.uint64))):
        return
    kind = np.asarray(np_data).dtype.kind
    if kind == "f":
        a = np.asarray(np_data)
        if not (a.size and np.abs(a).max() >= 2.0 ** 63):
            return
    elif kind not in "uO":
        return
    leaves = list(_leaves(data))
    if dtype is None and any(isinstance(v, (float, complex)) for v in leaves):
        return
    if any(type(v) is int and not -_INT64_MAX - 1 <= v <= _INT64_MAX for v in leaves):
        raise ValueError("Overflow when unpacking long long")


def _fit_integers(values, dt):
    """``values`` (Python numbers) as an array of the integer dtype ``dt``, with PyTorch's range
    check (NOTE [ Python ints in tensor() ])."""
    a = np.asarray(values)
    if a.size and a.dtype.kind != "b":
        D.check_int_range(a.min(), a.max(), a.dtype.kind == "f", dt, dt._name)
    with np.errstate(invalid="ignore"):   # 2.0 ** 63 passes PyTorch's check and wraps
        return a.astype(dt._np)


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Mirrors ``torch.tensor``: always copies ``data``."""
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.detach().clone() or "
                      "sourceTensor.detach().clone().requires_grad_(True), rather than "
                      "torch.tensor(sourceTensor).", UserWarning, stacklevel=2)
        dt = D.to_dtype(dtype) if dtype is not None else data.dtype
        with _x64.on():
            arr = data._value().astype(dt._np)
        return _finish(_place(arr, device if device is not None else data.device), requires_grad)
    if isinstance(data, (jax.Array, np.ndarray, np.generic)):
        np_data = _native(np.asarray(data))
        dt = D.to_dtype(dtype) if dtype is not None else D.from_numpy_dtype(np_data.dtype)
    else:
        if isinstance(data, (list, tuple, str)):
            _check_nested(data)
        np_data = _numpy_data(data)
        given = D.to_dtype(dtype) if dtype is not None else None
        _check_python_ints(data, np_data, given)
        dt = given if given is not None else (
            _infer_dtype(np_data) if not isinstance(data, (list, tuple)) or len(data) else
            D.get_default_dtype())
    if dtype is not None and dt in _INTEGRAL and not isinstance(data, (np.ndarray, jax.Array)):
        arr = _fit_integers(np_data, dt)
    else:
        arr = np.array(np_data, dtype=dt._np)
    return _finish(_place(arr, device), requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Mirrors ``torch.as_tensor``: no copy when data already is a matching Tensor."""
    if isinstance(data, Tensor):
        dt = D.to_dtype(dtype) if dtype is not None else data.dtype
        dev = _device_cls(device) if device is not None else data.device
        if dt is data.dtype and dev == data.device:
            return data
        return data.to(device=dev, dtype=dt)
    return tensor(data, dtype=dtype, device=device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """Mirrors ``torch.asarray``."""
    t = as_tensor(obj, dtype=dtype, device=device) if not copy else tensor(obj, dtype=dtype,
                                                                            device=device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def from_numpy(ndarray):
    """Mirrors ``torch.from_numpy``, except that the tensor never shares ``ndarray``'s memory:
    it holds a copy taken at the call, so later writes to the array never show in the tensor
    (nor the tensor's in-place ops in the array).

    The copy is made on the host before the array reaches jax: ``jax.device_put`` of a numpy
    array aliases its buffer when the buffer happens to be 64-byte aligned, and otherwise copies
    it asynchronously, so without it a later write could show up in the tensor or not by
    chance."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    D.from_numpy_dtype(_native(ndarray).dtype)
    return _finish(_place(np.array(ndarray, order="C"), None), False)


@_x64.scoped
def from_dlpack(ext_tensor):
    """Mirrors ``torch.from_dlpack``: wrap any DLPack-capable tensor (torch, jax, numpy)."""
    return Tensor._wrap(jnp.from_dlpack(ext_tensor))


def scalar_tensor(value, *, dtype=None, device=None, requires_grad=False, layout=None,
                  pin_memory=False):
    """Mirrors ``torch.scalar_tensor``: a 0-dim tensor, of the default float dtype unless
    ``dtype`` says otherwise."""
    dt = D.to_dtype(dtype) if dtype is not None else D.get_default_dtype()
    return _finish(_place(np.asarray(value, dt._np), device), requires_grad)


# --- filled factories ---------------------------------------------------------------------------

def _size(fname, args, size=None):
    """A factory's size: spread over its positional ``args`` or given as ``size=``
    (NOTE [ size arguments ]); negative sizes raise PyTorch's RuntimeError."""
    if size is not None:
        if args:
            raise TypeError(f"{fname}() got multiple values for argument 'size'")
        out = parse_size(fname, (size,), keyword=True)
    else:
        out = parse_size(fname, args)
    check_nonnegative(fname, out)
    return out


def size_arg(fname, value, position):
    """A factory's size given as one argument that must be a sequence (``full``, ``randint``)."""
    size = parse_size(fname, (value,), position=position, varargs=False)
    check_nonnegative(fname, size)
    return size


def check_nonnegative(fname, size):
    for s in size:
        if s < 0:
            raise RuntimeError("zeros: Dimension size must be non-negative." if fname == "zeros"
                               else f"Trying to create tensor with negative dimension {s}: "
                               f"{list(size)}")


# NOTE [ allocation limits ]
# PyTorch's allocator refuses a tensor whose byte count overflows int64 ("Storage size
# calculation overflowed") or that the system cannot provide ("can't allocate memory"), each a
# RuntimeError.  numpy and XLA would raise MemoryError / ValueError / an XLA error instead, or
# start filling memory until the process is killed, so every factory checks the byte count
# first: an exact product of Python ints, and (past 1 GiB) the device's memory, read once.

_LIMITS = {}
_SMALL = 1 << 30


def _device_bytes(jax_device):
    limit = _LIMITS.get(jax_device)
    if limit is None:
        if jax_device.platform == "cpu":
            limit = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        else:
            limit = (jax_device.memory_stats() or {}).get("bytes_limit", 1 << 62)
        _LIMITS[jax_device] = limit
    return limit


def check_alloc(size, dtype, device=None):
    """RuntimeError, as PyTorch's, for a tensor of ``size`` and ``dtype`` too large to exist
    (NOTE [ allocation limits ]); ``device`` as ``_place`` takes it."""
    n, overflow = 1, False
    for s in size:
        n *= s
        overflow = overflow or n > _INT64_MAX
    nbytes = n * dtype.itemsize
    if overflow or nbytes > _INT64_MAX:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)}")
    if nbytes > _SMALL:
        jd = to_jax_device(default_device() if device is None else device)
        if jd is not META and nbytes > _device_bytes(jd):
            where = "DefaultCPUAllocator" if jd.platform == "cpu" else f"{jd.platform} allocator"
            raise RuntimeError(f"{where}: can't allocate memory: you tried to allocate {nbytes} "
                               "bytes. Error code 12 (Cannot allocate memory)")


def _fill(size, value, dtype, device, requires_grad):
    dt = D.to_dtype(dtype) if dtype is not None else (
        D.get_default_dtype() if value is None else D.scalar_dtype(value))
    if dtype is None and isinstance(value, bool):
        dt = D.bool_
    if value is not None:
        value = D.fit_scalar(value, dt)
    check_alloc(size, dt, device)
    if to_jax_device(default_device() if device is None else device) is META:
        return _finish(_meta.array(size, dt._np), requires_grad)   # nothing allocated
    arr = np.full(size, 0 if value is None else value, dtype=dt._np)
    return _finish(_place(arr, device), requires_grad)


def zeros(*args, size=None, dtype=None, device=None, requires_grad=False, out=None, layout=None,
          pin_memory=False):
    """Mirrors ``torch.zeros``."""
    return _fill(_size("zeros", args, size), 0, dtype or D.get_default_dtype(), device,
                 requires_grad)


def ones(*args, size=None, dtype=None, device=None, requires_grad=False, out=None, layout=None,
         pin_memory=False):
    """Mirrors ``torch.ones``."""
    return _fill(_size("ones", args, size), 1, dtype or D.get_default_dtype(), device,
                 requires_grad)


def empty(*args, size=None, dtype=None, device=None, requires_grad=False, layout=None,
          pin_memory=False, memory_format=None):
    """Mirrors ``torch.empty`` (XLA has no uninitialised memory: the values are zeros)."""
    return _fill(_size("empty", args, size), 0, dtype or D.get_default_dtype(), device,
                 requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None,
         pin_memory=False):
    """Mirrors ``torch.full``: the dtype follows fill_value when not given."""
    return _fill(size_arg("full", size, 1), fill_value, dtype, device, requires_grad)


def _like(input, fill_value, dtype, device, requires_grad, memory_format, fname):
    """A tensor shaped (and by default laid out) like ``input``, filled with fill_value."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type_name(input)}")
    t = _fill(tuple(input.shape), fill_value, dtype if dtype is not None else input.dtype,
              device if device is not None else input.device, requires_grad)
    t._strides = _layout.copy_strides(tuple(input.shape), input._strides, memory_format)
    return t


def zeros_like(input, *, dtype=None, device=None, requires_grad=False, layout=None,
               memory_format=None):
    """Mirrors ``torch.zeros_like``."""
    return _like(input, 0, dtype, device, requires_grad, memory_format, "zeros_like")


def ones_like(input, *, dtype=None, device=None, requires_grad=False, layout=None,
              memory_format=None):
    """Mirrors ``torch.ones_like``."""
    return _like(input, 1, dtype, device, requires_grad, memory_format, "ones_like")


def empty_like(input, *, dtype=None, device=None, requires_grad=False, layout=None,
               memory_format=None):
    """Mirrors ``torch.empty_like`` (the values are zeros)."""
    return _like(input, 0, dtype, device, requires_grad, memory_format, "empty_like")


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None,
              memory_format=None):
    """Mirrors ``torch.full_like``."""
    return _like(input, fill_value, dtype, device, requires_grad, memory_format, "full_like")


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False, out=None,
           layout=None, pin_memory=False):
    """Mirrors ``torch.arange``: int64 when every argument is an integer, else default float."""
    if end is None:
        start, end = 0, start
    args = [a.item() if isinstance(a, Tensor) else a for a in (start, end, step)]
    start, end, step = args
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is None:
        dtype = D.int64 if all(isinstance(a, int) for a in args) else D.get_default_dtype()
    dt = D.to_dtype(dtype)
    n = max(0, math.ceil((end - start) / step))
    check_alloc((n,), dt, device)
    # computed in float64/int64 then cast, as PyTorch does
    acc = np.float64 if not all(isinstance(a, int) for a in args) else np.int64
    arr = (start + np.arange(n, dtype=acc) * step).astype(dt._np)
    return _finish(_place(arr, device), requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False, out=None,
             layout=None):
    """Mirrors ``torch.linspace``."""
    steps = int_arg("linspace", "steps", 3, steps)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = D.to_dtype(dtype) if dtype is not None else D.get_default_dtype()
    check_alloc((steps,), dt, device)
    start, end = [a.item() if isinstance(a, Tensor) else a for a in (start, end)]
    if steps == 1:
        arr = np.asarray([start], np.float64)
    else:
        step = (end - start) / (steps - 1)
        i = np.arange(steps, dtype=np.float64)
        half = steps // 2
        # PyTorch fills the first half forward from start and the second half back from end
        arr = np.where(i < half, start + step * i, end - step * (steps - 1 - i))
    return _finish(_place(arr.astype(dt._np), device), requires_grad)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False,
             out=None, layout=None):
    """Mirrors ``torch.logspace``: ``base ** linspace(start, end, steps)``."""
    dt = D.to_dtype(dtype) if dtype is not None else D.get_default_dtype()
    exponents = linspace(start, end, steps, dtype=D.float64).numpy()
    values = np.power(float(base), exponents)
    if not (dt.is_floating_point or dt.is_complex):
        values = np.trunc(values)
    return _finish(_place(values.astype(dt._np), device), requires_grad)


def _triangle_indices(row, col, offset, lower, dtype, device):
    if row < 0 or col < 0:
        raise RuntimeError(f"row must be non-negative, got{row}" if row < 0 else
                           f"col must be non-negative, got{col}")
    dt = D.to_dtype(dtype) if dtype is not None else D.int64
    if dt not in (D.int32, D.int64):
        raise RuntimeError(f"\"{'tril' if lower else 'triu'}_indices\" not implemented for "
                           f"'{dt._name}'")
    check_alloc((row, col), D.bool_, device)   # numpy builds a row x col mask
    r, c = np.tril_indices(row, offset, col) if lower else np.triu_indices(row, offset, col)
    return _finish(_place(np.stack([r, c]).astype(dt._np), device), False)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """Mirrors ``torch.tril_indices``: the (row, col) coordinates of the lower triangle of a
    row x col matrix, as a 2 x N tensor (int64)."""
    return _triangle_indices(row, col, offset, True, dtype, device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """Mirrors ``torch.triu_indices``: the coordinates of the upper triangle."""
    return _triangle_indices(row, col, offset, False, dtype, device)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False, out=None, layout=None,
        pin_memory=False):
    """Mirrors ``torch.eye``."""
    n = int_arg("eye", "n", 1, n)
    m = None if m is None else int_arg("eye", "m", 2, m)
    for name, v in (("n", n), ("m", m)):
        if v is not None and v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    dt = D.to_dtype(dtype) if dtype is not None else D.get_default_dtype()
    check_alloc((n, n if m is None else m), dt, device)
    arr = np.eye(n, n if m is None else m, dtype=dt._np)
    return _finish(_place(arr, device), requires_grad)


# --- legacy constructor, pickling ---------------------------------------------------------------

def _legacy_new(cls, *args, **kwargs):
    """``torch.Tensor(data)`` / ``torch.Tensor(*sizes)``: float tensors of the default dtype."""
    if len(args) == 1 and isinstance(args[0], (list, tuple, np.ndarray)) and not all(
            isinstance(a, int) for a in args):
        t = tensor(args[0], dtype=D.get_default_dtype())
    elif len(args) == 1 and isinstance(args[0], Tensor):
        t = args[0].detach()
    else:
        t = zeros(*args, dtype=D.get_default_dtype())
    if cls is not Tensor:
        t.__class__ = cls
    return t


def _rebuild(values, dtype_name, requires_grad, device="cpu"):
    """A pickled Tensor (Tensor.__reduce_ex__), back on the device it was pickled from."""
    return _finish(_place(np.asarray(values, D.ALIASES[dtype_name]._np), device),
                   requires_grad)

