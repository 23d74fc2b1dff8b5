"""torch.Size, and PyTorch's parsing of a size (``tuple of ints``) argument."""
import operator

from . import _dtype as D

_INT64_MAX = 2 ** 63 - 1
_HEAPTYPE = 1 << 9   # Py_TPFLAGS_HEAPTYPE: a class defined in Python


class Size(tuple):
    """Mirrors ``torch.Size``."""

    def __repr__(self):
        return f"torch.Size([{', '.join(str(int(s)) for s in self)}])"

    __str__ = __repr__

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item):
        r = super().__getitem__(item)
        return Size(r) if isinstance(item, slice) else r

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))

    def __reduce__(self):
        return (Size, (tuple(self),))


# NOTE [ size arguments ]
# Every factory (zeros, rand, new_ones, full, ...) and every view taking sizes (view, reshape,
# expand, repeat, permute, ...) reads its sizes through `parse_size`, which follows PyTorch's
# argument parser for a ``tuple of ints``:
# - varargs: `zeros(2, 3)` means `zeros((2, 3))`, but only when the first argument is an int;
#   otherwise a second positional argument is one too many (`zeros(2.5, 2)`).
# - "an int" is a Python or numpy integer, anything with `__index__` (a 0-dim integer numpy
#   array), or a one-element integer Tensor; never a bool, a float or a float Tensor.  The first
#   element decides whether the argument matches at all ("must be tuple of ints, but found
#   element of type float at pos 0"); a later one fails to unpack ("... at pos 2 ..."), where a
#   bool passes as 0 or 1, as it does in PyTorch.
# Nothing is truncated: `zeros(2.5)` raises PyTorch's TypeError instead of making 2 elements.

def type_name(value):
    """The name PyTorch's argument errors give ``value``'s type: C types keep their module
    (``numpy.float64``), Python classes and builtins do not (``Tensor``, ``float``)."""
    t = type(value)
    if t.__module__ == "builtins" or t.__flags__ & _HEAPTYPE:
        return t.__name__
    return f"{t.__module__}.{t.__qualname__}"


def _is_tensor(value):
    return isinstance(getattr(value, "dtype", None), D.dtype) and hasattr(value, "numel")


def _int_like(value):
    """Whether PyTorch's parser takes ``value`` as an int (the first element of a size)."""
    if type(value) is int:
        return True
    if isinstance(value, bool) or type(value).__name__ == "bool":   # bool, numpy.bool
        return False
    if _is_tensor(value):
        return value.numel() == 1 and not (value.dtype.is_floating_point or value.dtype.is_complex)
    try:
        operator.index(value)
    except TypeError:
        return False
    return True


def _unpack(fname, name, pos, value):
    """One element of a size as a Python int (pos counts from 1, as in PyTorch's message)."""
    def fail(why):
        return TypeError(f"{fname}(): argument '{name}' failed to unpack the object at pos {pos} "
                         f"with error \"{why}\"")
    if _is_tensor(value):
        dt = value.dtype
        if value.numel() != 1 or dt.is_floating_point or dt.is_complex:
            raise fail(f"type must be tuple of ints,but got {type_name(value)}")
        if dt is D.bool_:
            raise RuntimeError("Expected scalar.isIntegral( false) to be true, but got false.  "
                               "(Could this error message be improved?  If so, please report an "
                               "enhancement request to PyTorch.)")
        value = value.item()
    try:
        n = operator.index(value)
    except TypeError:
        raise fail(f"type must be tuple of ints,but got {type_name(value)}") from None
    if not -_INT64_MAX - 1 <= n <= _INT64_MAX:
        raise fail("Overflow when unpacking long long")
    return int(n)


def parse_size(fname, args, name="size", position=1, varargs=True, keyword=False):
    """PyTorch's reading of a ``tuple of ints`` argument (NOTE [ size arguments ]).

    ``args`` is the tuple of positional arguments the size may be spread over (``varargs``) or
    a one-tuple holding the argument; ``keyword`` when it was passed by name (PyTorch's message
    then gives no position, and a lone int is not a size).  Returns a tuple of Python ints."""
    first = args[0] if args else None
    if varargs and type(first) is int:
        seq = args
    elif len(args) == 1 and isinstance(first, (tuple, list)):
        seq = first
        if seq and not (type(seq[0]) is int or _int_like(seq[0])):
            raise TypeError(f"{fname}(): {_where(name, position, keyword)} must be tuple of "
                            "ints, " + (f"not {type_name(seq)}" if keyword else
                                        f"but found element of type {type_name(seq[0])} at pos 0"))
    elif varargs and not keyword and args and _int_like(first):
        seq = args
    elif len(args) > 1:
        raise TypeError(f"{fname}() takes 1 positional argument but {len(args)} were given")
    elif not args:
        raise TypeError(f"{fname}() missing 1 required positional arguments: \"{name}\"")
    else:
        raise TypeError(f"{fname}(): {_where(name, position, keyword)} must be tuple of ints, not "
                        f"{type_name(first)}")
    for s in seq:
        if type(s) is not int or not -_INT64_MAX - 1 <= s <= _INT64_MAX:
            return tuple(_unpack(fname, name, i + 1, s) for i, s in enumerate(seq))
    return tuple(seq)


def _where(name, position, keyword):
    return f"argument '{name}'" if keyword else f"argument '{name}' (position {position})"


def int_arg(fname, name, position, value):
    """An ``int`` argument as PyTorch's parser reads it: an integer (numpy's, or a one-element
    integer Tensor), never a bool or a float."""
    if type(value) is int:
        return value
    if _int_like(value):
        return int(value.item()) if _is_tensor(value) else operator.index(value)
    raise TypeError(f"{fname}(): argument '{name}' (position {position}) must be int, not "
                    f"{type_name(value)}")
