"""Argument normalisers shared by the layers (mirror ``torch.nn.modules.utils``)."""
import collections.abc
import itertools


def _ntuple(n, name="parse"):
    def parse(x):
        if isinstance(x, collections.abc.Iterable) and not isinstance(x, str):
            return tuple(x)
        return tuple(itertools.repeat(x, n))
    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n):
    """(a, b) -> (b, b, a, a) for n=2: F.pad's order (last dim first) from per-dim values."""
    return tuple(x for x in reversed(t) for _ in range(n))


def factory_kwargs(kwargs):
    """Mirrors ``torch.nn.factory_kwargs``: the ``device`` / ``dtype`` / ``memory_format``
    entries of ``kwargs`` as one dict for factory functions (``torch.empty(..., **r)``), merged
    with an explicit ``factory_kwargs`` entry; any other key is a TypeError, and so is a key
    given both ways."""
    if kwargs is None:
        return {}
    simple = {"device", "dtype", "memory_format"}
    expected = simple | {"factory_kwargs"}
    if not kwargs.keys() <= expected:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - expected}")
    result = dict(kwargs.get("factory_kwargs", {}))
    for key in simple:
        if key in kwargs:
            if key in result:
                raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
            result[key] = kwargs[key]
    return result


def assert_int_or_pair(arg, arg_name, message):
    """Mirrors ``torch.nn.functional.assert_int_or_pair``: AssertionError(``message`` formatted
    with ``arg_name``) unless ``arg`` is an int or has two elements."""
    if not (isinstance(arg, int) or len(arg) == 2):
        raise AssertionError(message.format(arg_name))
