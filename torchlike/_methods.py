"""Tensor methods, in-place variants and Python operators, bound from the functional ops.

A method is the function of the same name (``x.exp()`` is ``torchlike.exp(x)``); an in-place
method ``x.exp_()`` computes the out-of-place result and stores it (see _inplace.py).
"""
import jax

from . import _creation as C
from . import _dtype as D, _layout, _legacy, _meta, _storage, _trace_context
from ._device import accelerator_type, device as _device_cls, to_jax_device
from ._dispatch import Op, call
from ._inplace import inplace
from ._meta import META, NO_DATA, is_meta
from ._ops import binary, complex as cplx, index, join, linalg, pointwise as pw, reduce, scatter
from ._ops import activation, sampling, shape, sorting, unary
from ._ops import distance, host, index_reduce, lapack, normalization, signal, stats, strided
from ._tensor import Tensor
from .autograd import graph
from .autograd.grad_mode import _state

_SCALAR = (bool, int, float, complex)

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
    out = Tensor._wrap(_meta.array(arr.shape, arr.dtype) if jd is META else
                       jax.device_put(arr, jd))
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


# --- in-place -----------------------------------------------------------------------------------

def _inplace_method(fn):
    def method(self, *args, **kwargs):
        return inplace(self, lambda: fn(self, *args, **kwargs))
    method.__name__ = fn.__name__ + "_"
    return method


ZERO = Op("zero", jax.numpy.zeros_like, "ZeroBackward0", saves=())
FILL = Op("fill", lambda x, value: jax.numpy.full_like(x, value), "FillBackward2", saves=(),
          inputs=1)
FILL_T = Op("fill", lambda x, value: jax.numpy.full_like(x, value), "FillBackward3", saves=())


def zero_(self):
    """Mirrors ``Tensor.zero_``."""
    return inplace(self, lambda: call(ZERO, self), overlap_ok=True)


def fill_(self, value):
    """Mirrors ``Tensor.fill_``."""
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value.ndim} dimensions.")
        return inplace(self, lambda: call(FILL_T, self, value))
    return inplace(self, lambda: call(FILL, self, value), overlap_ok=True)


# --- operators ----------------------------------------------------------------------------------

def _reflected(fn):
    def method(self, other):
        return fn(other, self)
    return method


def _operand(fn):
    """Binary operator: NotImplemented for operands torch would not take (Python falls back)."""
    def method(self, other):
        if not isinstance(other, (Tensor,) + _SCALAR):
            return NotImplemented
        return fn(self, other)
    method.__name__ = fn.__name__
    return method


def _iop(fn):
    def method(self, other):
        return inplace(self, lambda: fn(self, other))
    return method


def _rtruediv(self, other):
    return pw.rdiv(self, other)


def _rpow(self, other):
    return pw.pow(other, self)


def _rmatmul(self, other):
    return linalg.matmul(other, self)


def _rsub(self, other):
    return pw.rsub(self, other)


def _pos(self):
    return self


_METHODS = {
    # conversions
    "to": to, "cpu": cpu, "cuda": cuda, "pin_memory": pin_memory, "is_pinned": is_pinned,
    "float": _cast(D.float32), "double": _cast(D.float64), "half": _cast(D.float16),
    "bfloat16": _cast(D.bfloat16), "long": _cast(D.int64), "int": _cast(D.int32),
    "short": _cast(D.int16), "char": _cast(D.int8), "byte": _cast(D.uint8),
    "bool": _cast(D.bool_), "cfloat": _cast(D.complex64), "cdouble": _cast(D.complex128),
    # pointwise
    "add": pw.add, "sub": pw.sub, "subtract": pw.sub, "mul": pw.mul, "multiply": pw.mul,
    "div": pw.div, "divide": pw.div, "true_divide": pw.true_divide, "pow": pw.pow,
    "remainder": pw.remainder, "floor_divide": pw.floor_divide, "neg": pw.neg,
    "negative": pw.neg, "abs": pw.abs, "absolute": pw.abs, "exp": pw.exp, "log": pw.log,
    "sqrt": pw.sqrt, "sin": pw.sin, "cos": pw.cos, "tanh": pw.tanh, "sigmoid": pw.sigmoid,
    "relu": pw.relu, "reciprocal": pw.reciprocal, "clamp": pw.clamp, "clip": pw.clamp,
    "clamp_min": pw.clamp_min, "clamp_max": pw.clamp_max, "maximum": pw.maximum,
    "minimum": pw.minimum, "eq": pw.eq, "ne": pw.ne, "lt": pw.lt, "le": pw.le, "gt": pw.gt,
    "ge": pw.ge, "greater": pw.gt, "less": pw.lt, "bitwise_and": pw.bitwise_and,
    "bitwise_or": pw.bitwise_or, "bitwise_xor": pw.bitwise_xor,
    "bitwise_not": pw.bitwise_not, "where": lambda self, cond, other: pw.where(cond, self, other),
    # reductions
    "sum": reduce.sum, "mean": reduce.mean,
    # products
    "matmul": linalg.matmul, "mm": linalg.mm, "bmm": linalg.bmm, "mv": linalg.mv,
    "dot": linalg.dot,
    # shape and views
    "view": shape.view, "view_as": shape.view_as, "reshape": shape.reshape,
    "reshape_as": shape.reshape_as, "transpose": shape.transpose, "t": shape.t,
    "permute": shape.permute, "unsqueeze": shape.unsqueeze, "squeeze": shape.squeeze,
    "expand": shape.expand, "expand_as": shape.expand_as, "flatten": shape.flatten,
    "select": shape.select, "unbind": shape.unbind, "clone": shape.clone,
    "contiguous": shape.contiguous,
    "nonzero": index.nonzero, "copy_": index.copy_,
    # factories on a tensor
    "new_zeros": _new(C.zeros), "new_ones": _new(C.ones), "new_empty": _new(C.empty),
    "new_full": _new(C.full), "new_tensor": new_tensor, "type_as": type_as,
    # in-place
    "zero_": zero_, "fill_": fill_,
    # operators
    "__add__": _operand(pw.add), "__radd__": _operand(pw.add), "__iadd__": _iop(pw.add),
    "__sub__": _operand(pw.sub), "__rsub__": _operand(_rsub), "__isub__": _iop(pw.sub),
    "__mul__": _operand(pw.mul), "__rmul__": _operand(pw.mul), "__imul__": _iop(pw.mul),
    "__truediv__": _operand(pw.div), "__rtruediv__": _operand(_rtruediv),
    "__itruediv__": _iop(pw.div),
    "__floordiv__": _operand(pw.floor_divide),
    "__rfloordiv__": _operand(_reflected(pw.floor_divide)), "__ifloordiv__": _iop(pw.floor_divide),
    "__mod__": _operand(pw.remainder), "__rmod__": _operand(_reflected(pw.remainder)),
    "__imod__": _iop(pw.remainder),
    "__pow__": _operand(pw.pow), "__rpow__": _operand(_rpow), "__ipow__": _iop(pw.pow),
    "__matmul__": linalg.matmul, "__rmatmul__": _rmatmul, "__imatmul__": _iop(linalg.matmul),
    "__neg__": pw.neg, "__pos__": _pos, "__abs__": pw.abs, "__invert__": pw.bitwise_not,
    "__and__": _operand(pw.bitwise_and), "__rand__": _operand(pw.bitwise_and),
    "__iand__": _iop(pw.bitwise_and),
    "__or__": _operand(pw.bitwise_or), "__ror__": _operand(pw.bitwise_or),
    "__ior__": _iop(pw.bitwise_or),
    "__xor__": _operand(pw.bitwise_xor), "__rxor__": _operand(pw.bitwise_xor),
    "__ixor__": _iop(pw.bitwise_xor),
    "__lshift__": _operand(pw.bitwise_left_shift), "__rshift__": _operand(pw.bitwise_right_shift),
    "__ilshift__": _iop(pw.bitwise_left_shift), "__irshift__": _iop(pw.bitwise_right_shift),
    "__eq__": _operand(pw.eq), "__ne__": _operand(pw.ne), "__lt__": _operand(pw.lt),
    "__le__": _operand(pw.le), "__gt__": _operand(pw.gt), "__ge__": _operand(pw.ge),
    "__getitem__": index.getitem, "__setitem__": index.setitem,
}

# x.add_(y) for each of these
_INPLACE = ("add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "pow",
            "remainder", "floor_divide", "neg", "negative", "abs", "absolute", "exp", "log",
            "sqrt", "sin", "cos", "tanh", "sigmoid", "relu", "reciprocal", "clamp", "clip",
            "clamp_min", "clamp_max", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
            "eq", "ne", "lt", "le", "gt", "ge")


def _properties():
    return {
        "T": property(lambda self: shape.permute(self, tuple(range(self.ndim - 1, -1, -1)))),
        "mT": property(lambda self: shape.transpose(self, -2, -1)),
    }


def install():
    for name, fn in _METHODS.items():
        setattr(Tensor, name, fn)
    # op families add their own methods (see TENSOR_METHODS in each _ops module)
    for family in (pw, unary, binary, reduce, scatter, sorting, shape, join, linalg, cplx,
                   sampling, activation, stats, distance, normalization, lapack, strided, host,
                   index_reduce, signal, _legacy, _storage):
        for name, fn in family.TENSOR_METHODS.items():
            setattr(Tensor, name, fn)
    for name in _INPLACE:
        setattr(Tensor, name + "_", _inplace_method(_METHODS[name]))
    for name, prop in _properties().items():
        setattr(Tensor, name, prop)
