"""Collation: mirrors ``torch.utils.data._utils.collate`` (``default_collate``,
``default_convert``, and the type-dispatched ``collate`` they are built from).

``collate(batch, collate_fn_map=...)`` looks the first sample's type up in ``collate_fn_map``
(exact type first, then ``isinstance`` in the map's order) and otherwise recurses into mappings,
named tuples and sequences, so a custom collate function can extend the default one by adding
entries to a copy of ``default_collate_fn_map``.
"""
import collections.abc
import copy
import re

import numpy as np

from ... import _dtype as D
from ..._creation import as_tensor, from_numpy, tensor
from ..._ops.shape import stack
from ..._tensor import Tensor

__all__ = ["collate", "default_collate", "default_collate_fn_map", "default_convert"]

# numpy dtypes (by their .str) of byte/unicode strings and Python objects: not convertible
_NP_STR_OBJ = re.compile(r"[SaUO]")

_ERR_FORMAT = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
               "lists; found {}")


def _rebuild_mapping(sample, values, convert):
    """A mapping like ``sample`` holding ``convert(values(key))`` for each key: a shallow copy
    updated in place where it is mutable (keeps extra state such as a defaultdict's factory),
    else built from a dict, else a plain dict."""
    new = {key: convert(values(key)) for key in sample}
    try:
        if isinstance(sample, collections.abc.MutableMapping):
            clone = copy.copy(sample)
            clone.update(new)
            return clone
        return type(sample)(new)
    except TypeError:
        return new


def _rebuild_sequence(sample, items):
    """A sequence like ``sample`` holding ``items``, by the same rules as _rebuild_mapping."""
    try:
        if isinstance(sample, collections.abc.MutableSequence):
            clone = copy.copy(sample)
            for i, item in enumerate(items):
                clone[i] = item
            return clone
        return type(sample)(items)
    except TypeError:
        return items


def collate(batch, *, collate_fn_map=None):
    """Mirrors ``torch.utils.data._utils.collate.collate``: merge a list of samples into a
    batch, dispatching on the first sample's type through ``collate_fn_map`` (each entry is
    called as ``fn(batch, collate_fn_map=collate_fn_map)``)."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for kind, fn in collate_fn_map.items():
            if isinstance(elem, kind):
                return fn(batch, collate_fn_map=collate_fn_map)

    def sub(samples):
        return collate(samples, collate_fn_map=collate_fn_map)

    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, lambda key: [d[key] for d in batch], sub)
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):      # a named tuple
        return elem_type(*(sub(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [sub(samples) for samples in zip(*batch)]   # tuples, as in PyTorch
        if isinstance(elem, tuple):
            return columns        # PyTorch returns tuples transposed as a list
        return _rebuild_sequence(elem, columns)
    raise TypeError(_ERR_FORMAT.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    """Tensors of one shape -> one tensor with a new leading batch dimension."""
    return stack(batch, 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    """numpy arrays -> tensors, then stacked (string and object arrays are refused)."""
    elem = batch[0]
    if _NP_STR_OBJ.search(elem.dtype.str) is not None:
        raise TypeError(_ERR_FORMAT.format(elem.dtype))
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    """numpy scalars -> a 1-d tensor of their numpy dtype (np.int32 stays int32)."""
    return from_numpy(np.asarray(batch))


def collate_float_fn(batch, *, collate_fn_map=None):
    """Python floats -> a float64 tensor (not the default dtype), as PyTorch does."""
    return tensor(batch, dtype=D.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    """Python ints -> int64 (bools -> bool; ints mixed with floats take the default dtype)."""
    return tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    """Strings and bytes are kept as they are: the batch itself."""
    return batch


# Order matters for the isinstance pass: numpy's float64 is also a Python float, and must take
# the numpy path (keeping its dtype) before the float entry.
default_collate_fn_map = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch):
    """Mirrors ``torch.utils.data.default_collate``: a list of samples -> one batch.

    =========================  ===================================================
    each sample is             the batch is
    =========================  ===================================================
    Tensor                     ``torchlike.stack(batch)``
    numpy array                the arrays as tensors, stacked
    numpy scalar               a 1-d tensor of that numpy dtype
    float / int / bool         a float64 / int64 / bool tensor
    str / bytes                the list as it is
    Mapping                    the same mapping type, each key collated
    named tuple                the same named tuple, each field collated
    tuple / other Sequence     a list / the same sequence type, collated by position
    =========================  ===================================================

    Example:
        >>> default_collate([(0, "a"), (1, "b")])
        [tensor([0, 1]), ('a', 'b')]
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)


def default_convert(data):
    """Mirrors ``torch.utils.data.default_convert``: the collate function when automatic
    batching is off (``batch_size=None``).  numpy arrays and scalars become tensors, inside
    mappings, named tuples and sequences too (tuples become lists); anything else is returned
    as it is."""
    if isinstance(data, Tensor):
        return data
    kind = type(data)
    if kind.__module__ == "numpy" and kind.__name__ not in ("str_", "string_"):
        if kind.__name__ == "ndarray" and _NP_STR_OBJ.search(data.dtype.str) is not None:
            return data
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, data.__getitem__, default_convert)
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return kind(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def pin_memory(data):
    """What a DataLoader with ``pin_memory=True`` yields: every Tensor pinned (NOTE [ pinned
    memory ] in torchlike/_ops/convert.py), inside mappings, named tuples and sequences too, and
    any object with a ``pin_memory()`` method asked to pin itself, as PyTorch's pin loop does."""
    if isinstance(data, Tensor):
        return data.pin_memory()
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, data.__getitem__, pin_memory)
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(pin_memory(d) for d in data))
    if isinstance(data, tuple):
        return [pin_memory(d) for d in data]
    if isinstance(data, collections.abc.Sequence):
        return _rebuild_sequence(data, [pin_memory(d) for d in data])
    if hasattr(data, "pin_memory"):
        return data.pin_memory()
    return data
