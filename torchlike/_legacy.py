"""The legacy tensor types (``torch.FloatTensor``, ``torch.LongTensor``, ...), ``Tensor.type``,
and the legacy in-place ops ``resize_``, ``resize_as_`` and ``fill_diagonal_``.

NOTE [ legacy tensor types ]
In PyTorch ``torch.FloatTensor`` is not a subclass of Tensor but a tensor type: a (dtype, device
type) pair with a class's face.  ``isinstance(t, torch.FloatTensor)`` asks whether ``t`` is a
float32 tensor on the CPU, and calling the type is the legacy constructor: sizes give a new
tensor (uninitialized in PyTorch; torchlike's ``empty``), a sequence or an array gives a tensor
of that data in the type's dtype, and a Tensor of the type's dtype is returned as it is.  The
same metaclass serves the types of another device type (``torchlike.cuda.FloatTensor`` and the
others: ``_device_type = "cuda"``, made on the current cuda device).
"""
import math
import re

import numpy as np

from . import _dtype as D, _x64
from ._device import device as _device
from ._size import Size, parse_size, type_name
from ._tensor import Tensor, _c_type

PUBLIC = ("BFloat16Tensor", "BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor",
          "FloatTensor", "HalfTensor", "IntTensor", "LongTensor", "ShortTensor")


class TensorType(type):
    """What the legacy tensor types are (PyTorch's ``torch.tensortype``): NOTE [ legacy tensor
    types ]."""

    def __instancecheck__(cls, obj):
        return (isinstance(obj, Tensor) and obj.dtype is cls.dtype
                and obj.device.type == cls._device_type)

    def __call__(cls, *args, device=None):
        return _legacy_new(cls, args, device)


_DTYPES = (("FloatTensor", D.float32), ("DoubleTensor", D.float64), ("HalfTensor", D.float16),
           ("BFloat16Tensor", D.bfloat16), ("LongTensor", D.int64), ("IntTensor", D.int32),
           ("ShortTensor", D.int16), ("CharTensor", D.int8), ("ByteTensor", D.uint8),
           ("BoolTensor", D.bool_))


def tensor_types(metaclass, device_type, module):
    """The ten legacy types of ``device_type`` (FloatTensor ... BoolTensor, in _DTYPES' order),
    made by ``metaclass`` and shown as classes of ``module`` (the public path in reprs)."""
    where = "the CPU" if device_type == "cpu" else f"a {device_type} device"
    mirrored = "torch" + module[len("torchlike"):]
    return tuple(metaclass(name, (), {
        "__module__": module, "__qualname__": name, "dtype": dtype,
        "is_cuda": device_type == "cuda", "is_sparse": False, "_device_type": device_type,
        "__doc__": f"Mirrors ``{mirrored}.{name}``: {dtype._name} on {where}."})
        for name, dtype in _DTYPES)


(FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor, ShortTensor,
 CharTensor, ByteTensor, BoolTensor) = tensor_types(TensorType, "cpu", "torchlike")


def _options(dtype, dev):
    return (f"TensorOptions(dtype={_c_type(dtype)}, device={dev}, layout=Strided, "
            "requires_grad=false (default), pinned_memory=false (default), "
            "memory_format=(nullopt))")


def _legacy_new(cls, args, device):
    """``torch.FloatTensor(...)``: PyTorch's legacy constructor for type ``cls``."""
    from ._creation import empty, tensor
    if device is not None and _device(device).type != cls._device_type:
        raise RuntimeError(f"legacy constructor expects device type: {cls._device_type} but "
                           f"device type: {_device(device).type} was passed")
    dev = _device(cls._device_type) if device is None else _device(device)
    if not args:
        return empty(0, dtype=cls.dtype, device=dev)
    first = args[0]
    if len(args) == 1 and isinstance(first, Tensor):
        if first.dtype is not cls.dtype or first.device.type != cls._device_type:
            raise TypeError(f"expected {_options(cls.dtype, dev)} (got "
                            f"{_options(first.dtype, first.device)})")
        return first
    if len(args) == 1 and not isinstance(first, (int, np.integer, Size)):
        if isinstance(first, str):
            raise TypeError("new(): invalid data type 'str'")
        if not isinstance(first, (list, tuple, np.ndarray)) and np.ndim(first) == 0:
            raise TypeError(f"new(): data must be a sequence (got {type_name(first)})")
        return tensor(first, dtype=cls.dtype, device=dev)
    for i, a in enumerate(args):
        if not isinstance(a, (int, np.integer, Size)) or isinstance(a, bool):
            raise TypeError(f"new(): argument 'size' failed to unpack the object at pos {i + 1} "
                            f"with error \"type must be tuple of ints,but got "
                            f"{type_name(a)}\"")
    return empty(parse_size("new", args), dtype=cls.dtype, device=dev)


# --- Tensor.type ---------------------------------------------------------------------------------

_BY_TENSOR_TYPE = {dt._tensor_type: dt for dt in D.ALIASES.values()}
_TYPE_STRING = re.compile(r"^torch\.(?:(cuda)\.)?(\w+Tensor)$")


def type_string(t):
    """'torch.FloatTensor', or 'torch.cuda.FloatTensor' past the CPU (``Tensor.type()``)."""
    kind = t.device.type
    prefix = "torch." if kind == "cpu" else f"torch.{kind}."
    return prefix + t.dtype._tensor_type


def _target(dtype):
    """(dtype, device type or None) that ``Tensor.type(dtype)`` asks for."""
    if isinstance(dtype, str):
        m = _TYPE_STRING.match(dtype)
        if m is None or m.group(2) not in _BY_TENSOR_TYPE:
            raise ValueError(f"invalid type: {dtype!r}")
        return _BY_TENSOR_TYPE[m.group(2)], m.group(1) or "cpu"
    legacy = getattr(dtype, "dtype", None) if isinstance(dtype, type) else None
    if isinstance(legacy, D.dtype):   # a legacy tensor type (this module's, torchlike.cuda's)
        return legacy, "cuda" if dtype.is_cuda else "cpu"
    if dtype is Tensor:   # the default tensor type
        return D.get_default_dtype(), "cpu"
    if isinstance(dtype, D.dtype) or isinstance(dtype, type):
        return D.to_dtype(dtype), None
    raise TypeError("dtype must be a type, str, or dtype object")


def type_(self, dtype=None, non_blocking=False, **kwargs):
    """Mirrors ``Tensor.type``: with no argument the type's name ('torch.FloatTensor'); with a
    legacy type, its name, a dtype or ``torch.Tensor``, this tensor as that type (itself when
    it already is)."""
    if dtype is None:
        return type_string(self)
    dt, kind = _target(dtype)
    if kind is None or kind == self.device.type:
        return self if dt is self.dtype else self.to(dt)
    return self.to(_device(kind), dt, non_blocking=non_blocking)


# --- resize_, resize_as_, fill_diagonal_ ---------------------------------------------------------

def _storage_order(t):
    """``t``'s values in the order its strides lay them out in memory, flattened."""
    arr = t._value()
    if t._strides is None:
        return arr.reshape(-1)
    order = sorted(range(arr.ndim), key=lambda d: -t._strides[d])
    return arr.transpose(order).reshape(-1)


@_x64.scoped
def resize_(self, *sizes, memory_format=None):
    """Mirrors ``Tensor.resize_``: this tensor in place as a contiguous (or ``memory_format``)
    tensor of ``sizes`` over its storage: the elements it keeps are the first in memory order,
    new ones are uninitialized (zeros here).  A view of another tensor's storage keeps its
    element count (torchlike cannot grow or shrink a storage another tensor reads)."""
    from . import _layout
    from ._inplace import check_inplace, inplace_view
    sizes = parse_size("resize_", sizes)
    if any(s < 0 for s in sizes):
        raise RuntimeError("numel: integer multiplication overflow")
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    fmt = _layout.contiguous_format if memory_format is None else memory_format
    strides = _layout.copy_strides(sizes, None, fmt)
    if sizes == tuple(self.shape) and memory_format is None:
        return self
    check_inplace(self, overlap_ok=True)
    n = math.prod(sizes)
    if self._root is not None:   # a view (or a detach()/.data alias) of another storage
        if n == self.numel() and strides is None and _layout._dense(self.shape, self.stride()):
            from ._ops import shape   # its elements in memory order, then the new sizes
            order = tuple(sorted(range(self.ndim), key=lambda d: -self.stride(d)))
            source = self if order == tuple(range(self.ndim)) else shape.permute(self, order)
            return inplace_view(self, shape.VIEW, (("shape", sizes),), source=source)
        raise RuntimeError(f"resize_(): torchlike cannot resize a view of another tensor's "
                           f"storage (from {list(self.shape)} to {list(sizes)}); resize a "
                           f"clone() of it")
    if n != self.numel() and self._viewed:
        raise RuntimeError(f"resize_(): torchlike cannot resize a tensor whose storage other "
                           f"tensors view (from {self.numel()} to {n} elements); resize a "
                           f"clone() of it")
    import jax.numpy as jnp
    flat = _storage_order(self)
    if n <= flat.size:
        flat = flat[:n]
    else:
        flat = jnp.concatenate([flat, jnp.zeros(n - flat.size, flat.dtype)])
    if strides is None:
        arr = flat.reshape(sizes)
    else:   # memory order -> logical order
        order = sorted(range(len(sizes)), key=lambda d: -strides[d])
        arr = flat.reshape([sizes[d] for d in order]).transpose(np.argsort(order))
    if n > self.numel():   # a bigger storage: a new place for it (NOTE [ data_ptr ])
        self.__dict__.pop("_storage_address", None)
    self._arr, self._strides = arr, strides
    self._gen += 1   # NOTE: as transpose_: views of this root read the new layout
    self._version_counter()[0] += 1
    return self


def resize_as_(self, the_template, memory_format=None):
    """Mirrors ``Tensor.resize_as_``: ``resize_(the_template.shape)``."""
    return resize_(self, tuple(the_template.shape), memory_format=memory_format)


def fill_diagonal_(self, fill_value, wrap=False):
    """Mirrors ``Tensor.fill_diagonal_``: ``fill_value`` written on the main diagonal (all
    indices equal) of a tensor with at least 2 dims, all of one length past 2-D; with ``wrap``,
    a tall matrix's diagonal restarts below it every ``width + 1`` rows.  Written through a
    view of the diagonal, so autograd records PyTorch's CopySlices.  (For a non-contiguous
    tall matrix with ``wrap``, the wrapped part follows the logical layout; PyTorch's follows
    the strides.)"""
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    height, width = self.shape[0], self.shape[1]
    if self.ndim > 2 and any(s != height for s in self.shape[1:]):
        raise RuntimeError("all dimensions of input must be of equal length")
    step = sum(math.prod(self.shape[d + 1:]) for d in range(self.ndim))   # (1, ..., 1) apart
    stop = self.numel() if wrap and self.ndim == 2 and height > width + 1 else (
        min(height, width) * step)
    if self.is_contiguous():
        self.view(-1)[:stop:step].fill_(fill_value)
    else:
        flat = np.arange(0, stop, step)
        self[tuple(np.unravel_index(flat, tuple(self.shape)))] = fill_value
    return self


TENSOR_METHODS = {"type": type_, "resize_": resize_, "resize_as_": resize_as_,
                  "fill_diagonal_": fill_diagonal_}
