"""Tensor methods that give a tensor another dtype or device (``to``, the dtype casts, ``cpu`` /
``cuda``, pinning) or make a new tensor with its dtype and device (``new_zeros`` and friends).
"""
import jax

from .. import _creation as C
from .. import _dtype as D, _layout, _trace_context
from .._device import accelerator_type, device as _device_cls, to_jax_device
from .._dispatch import Op, call
from .._meta import NO_DATA, is_meta
from .._tensor import Tensor
from ..autograd import graph
from ..autograd.grad_mode import _state

# --- conversions: to / type casts ----------------------------------------------------------------

TO_DTYPE = Op("to", lambda x, dtype: x.astype(dtype), "ToCopyBackward0", saves=())


# NOTE [ moving data ]
# A move is an eager ``jax.device_put`` of the tensor's array: inside a jitted program
# device_put is the identity (a program runs on one device), so a move never goes through the
# op table's jitted forward.  It is recorded as ToCopyBackward0, whose backward moves the
# gradient back.  In a traced step (torchlike.compile) the whole program runs on the step's
# device: a move to it is a copy there, and torchlike.compile moves the argument before the
# call (NOTE [ devices in a compiled step ] in _compile/__init__.py).

def move(t, jd):
    """``t``'s values on jax device ``jd``, recorded for autograd."""
    arr = t._value()
    if isinstance(arr, jax.core.Tracer):   # a copy, or nothing to do
        return call(TO_DTYPE, t, static=(("dtype", arr.dtype),)) if _trace_context.move(t, jd) \
            else t
    if is_meta(arr):
        raise NotImplementedError(NO_DATA)
    out = Tensor._wrap(C.put(arr, jd))
    if _state.grad_enabled and t.requires_grad:
        out._grad_fn = graph.ToCopyBackward0(t._edge(), next(iter(arr.devices())), move)
    return out


def _parse_to(args, kwargs):
    dtype, device = kwargs.pop("dtype", None), kwargs.pop("device", None)
    for a in args:
        if isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, D.dtype) or a in (float, int, bool, complex):
            dtype = a
        elif isinstance(a, (str, _device_cls, int)):
            device = a
        else:
            raise TypeError(f"to() received an invalid combination of arguments: {a!r}")
    return dtype, device


def to(self, *args, copy=False, non_blocking=False, memory_format=None, **kwargs):
    """Mirrors ``Tensor.to(dtype)``, ``.to(device)``, ``.to(device, dtype)``, ``.to(other)``:
    returns ``self`` when nothing changes (and copy is False)."""
    dtype, device = _parse_to(args, kwargs)
    out = self
    if device is not None:
        jd = to_jax_device(device)
        if jd != self._device():
            out = move(out, jd)
    if dtype is not None:
        dtype = D.to_dtype(dtype)
        if dtype is not out.dtype:
            out = call(TO_DTYPE, out, static=(("dtype", dtype._np),))
    strides = _layout.copy_strides(tuple(self.shape), self._strides, memory_format)
    if out is self and (copy or memory_format not in (None, _layout.preserve_format)
                        and strides != self._strides):
        out = call(TO_DTYPE, self, static=(("dtype", self.dtype._np),))
    if out is not self:
        out._strides = strides
    return out


def _cast(dtype):
    def method(self, memory_format=None):
        return to(self, dtype)
    method.__name__ = dtype._name
    return method


def cpu(self, memory_format=None):
    return to(self, "cpu")


def cuda(self, device=None, non_blocking=False, memory_format=None):
    return to(self, _device_cls("cuda", device if isinstance(device, int) else None)
              if not isinstance(device, (str, _device_cls)) else device)


# NOTE [ pinned memory ]
# PyTorch pins a CPU tensor (page-locked memory) so that copies to the GPU can run while the host
# works on.  JAX stages host-to-device copies itself and every device_put is already
# asynchronous, so a pinned tensor is an ordinary CPU copy that reads back as pinned; as in
# PyTorch, pinning needs an accelerator, and non_blocking=True is accepted everywhere.

def pin_memory(self, device=None):
    """Mirrors ``Tensor.pin_memory`` (NOTE [ pinned memory ])."""
    if accelerator_type() is None:
        raise RuntimeError("Cannot access accelerator device when none is available.")
    if self.device.type != "cpu":
        raise RuntimeError(f"cannot pin '{self.type()}' only dense CPU tensors can be pinned")
    if self._pinned:
        return self
    out = self.clone()
    out._pinned = True
    return out


def is_pinned(self, device=None):
    """Mirrors ``Tensor.is_pinned``."""
    return self._pinned


def type_as(self, other):
    """Mirrors ``Tensor.type_as``: this tensor cast to ``other``'s dtype."""
    return to(self, other.dtype)


def _new(factory):
    """``Tensor.new_zeros`` and friends: a factory whose dtype and device default to self's."""
    def method(self, *args, dtype=None, device=None, requires_grad=False, **kwargs):
        t = factory(*args, dtype=self.dtype if dtype is None else dtype,
                    device=self.device if device is None else device, **kwargs)
        return t.requires_grad_() if requires_grad else t
    method.__name__ = "new_" + factory.__name__
    return method


def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    """Mirrors ``Tensor.new_tensor``: a copy of ``data`` with self's dtype and device by
    default."""
    return C.tensor(data, dtype=self.dtype if dtype is None else dtype,
                    device=self.device if device is None else device,
                    requires_grad=requires_grad)


PUBLIC = ()
TENSOR_METHODS = {
    "to": to, "cpu": cpu, "cuda": cuda, "pin_memory": pin_memory, "is_pinned": is_pinned,
    "type_as": type_as, "float": _cast(D.float32), "double": _cast(D.float64),
    "half": _cast(D.float16), "bfloat16": _cast(D.bfloat16), "long": _cast(D.int64),
    "int": _cast(D.int32), "short": _cast(D.int16), "char": _cast(D.int8),
    "byte": _cast(D.uint8), "bool": _cast(D.bool_), "cfloat": _cast(D.complex64),
    "cdouble": _cast(D.complex128),
    "new_zeros": _new(C.zeros), "new_ones": _new(C.ones), "new_empty": _new(C.empty),
    "new_full": _new(C.full), "new_tensor": new_tensor,
}
