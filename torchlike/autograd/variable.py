"""Mirrors ``torch.autograd.variable``: Variable, the wrapper of PyTorch before 0.4, which is
Tensor itself now."""
import warnings

from .._size import type_name
from .._tensor import Tensor

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """Mirrors ``torch.autograd.Variable``: every Tensor is a Variable, and
    ``Variable(t, requires_grad=False)`` is ``t.detach()`` (the same storage, no history) with
    ``requires_grad`` set; ``volatile`` only warns, as in PyTorch."""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with "
                          "torch.no_grad():` instead.", UserWarning, stacklevel=2)
        if data is None:
            from .._creation import empty
            return empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type_name(data)}")
        out = data.detach()
        if requires_grad:
            if not (out.dtype.is_floating_point or out.dtype.is_complex):
                raise RuntimeError("Only Tensors of floating point and complex dtype can "
                                   "require gradients")
            out.requires_grad = True
        return out
