"""Python's operators on a Tensor: ``x + y`` is ``torchlike.add(x, y)``, ``x @ y`` is
``torchlike.matmul(x, y)``, ``x += y`` is ``x.add_(y)``.  Indexing (``x[i]``, ``x[i] = v``) is
bound by index.py.
"""
from .._inplace import inplace_method
from .._tensor import Tensor
from . import linalg, pointwise as pw
from .pointwise import _SCALAR


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


def _pos(self):
    return self


PUBLIC = ()
TENSOR_METHODS = {
    "__add__": _operand(pw.add), "__radd__": _operand(pw.add), "__iadd__": inplace_method(pw.add),
    "__sub__": _operand(pw.sub), "__rsub__": _operand(pw.rsub), "__isub__": inplace_method(pw.sub),
    "__mul__": _operand(pw.mul), "__rmul__": _operand(pw.mul), "__imul__": inplace_method(pw.mul),
    "__truediv__": _operand(pw.div), "__rtruediv__": _operand(pw.rdiv),
    "__itruediv__": inplace_method(pw.div),
    "__floordiv__": _operand(pw.floor_divide),
    "__rfloordiv__": _operand(_reflected(pw.floor_divide)),
    "__ifloordiv__": inplace_method(pw.floor_divide),
    "__mod__": _operand(pw.remainder), "__rmod__": _operand(_reflected(pw.remainder)),
    "__imod__": inplace_method(pw.remainder),
    "__pow__": _operand(pw.pow), "__rpow__": _operand(_reflected(pw.pow)),
    "__ipow__": inplace_method(pw.pow),
    "__matmul__": linalg.matmul, "__rmatmul__": _reflected(linalg.matmul),
    "__imatmul__": inplace_method(linalg.matmul),
    "__neg__": pw.neg, "__pos__": _pos, "__abs__": pw.abs, "__invert__": pw.bitwise_not,
    "__and__": _operand(pw.bitwise_and), "__rand__": _operand(pw.bitwise_and),
    "__iand__": inplace_method(pw.bitwise_and),
    "__or__": _operand(pw.bitwise_or), "__ror__": _operand(pw.bitwise_or),
    "__ior__": inplace_method(pw.bitwise_or),
    "__xor__": _operand(pw.bitwise_xor), "__rxor__": _operand(pw.bitwise_xor),
    "__ixor__": inplace_method(pw.bitwise_xor),
    "__lshift__": _operand(pw.bitwise_left_shift), "__rshift__": _operand(pw.bitwise_right_shift),
    "__ilshift__": inplace_method(pw.bitwise_left_shift),
    "__irshift__": inplace_method(pw.bitwise_right_shift),
    "__eq__": _operand(pw.eq), "__ne__": _operand(pw.ne), "__lt__": _operand(pw.lt),
    "__le__": _operand(pw.le), "__gt__": _operand(pw.gt), "__ge__": _operand(pw.ge),
}
