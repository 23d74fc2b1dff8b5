"""Memory layout of elementwise results: the strides PyTorch's TensorIterator gives an output.

jax arrays have no strides; torchlike reports PyTorch's so that ``stride()``, ``is_contiguous()``
and ``view()`` behave as they would in PyTorch.  An elementwise op on contiguous inputs gives a
contiguous result (stored as ``_strides = None``); with a permuted or sliced input PyTorch lays the
output out in the inputs' dimension order, which ``output_strides`` reproduces.

Copies (``clone``, ``to``, ``*_like``) take a ``memory_format``: ``preserve_format`` (the default)
keeps a dense input's strides, ``contiguous_format`` and ``channels_last(_3d)`` lay the copy out in
that order.
"""
import functools

import numpy as np


def contiguous_strides(shape):
    """The strides of a contiguous tensor of ``shape`` (read by every view op: cached)."""
    return _contiguous_strides(tuple(shape))


@functools.lru_cache(maxsize=1024)   # (bounded: NOTE [ bounded program caches ] in _dispatch.py)
def _contiguous_strides(shape):
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        # Python ints whatever the key held (equal keys share a result); a symbolic size
        # (jax.export's dimension, >= 1: export and onnx with dynamic axes) as it is, so the
        # strides are expressions in it
        acc *= max(int(s), 1) if isinstance(s, (int, np.integer)) else s
    return tuple(reversed(strides))


def storage_positions(shape, strides):
    """The storage position of every element of a (shape, strides) layout, as an int64 numpy
    array."""
    pos = np.zeros(shape, np.int64)
    for d, (n, s) in enumerate(zip(shape, strides)):
        pos += (np.arange(n, dtype=np.int64) * s).reshape((n,) + (1,) * (len(shape) - d - 1))
    return pos


class memory_format:
    """Mirrors ``torch.memory_format``."""

    def __init__(self, name, order=None):
        self._name = name
        self._order = order   # channels_last: the dimension order, fastest first

    def __repr__(self):
        return f"torch.{self._name}"


contiguous_format = legacy_contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last", (1, 3, 2, 0))
channels_last_3d = memory_format("channels_last_3d", (1, 4, 3, 2, 0))


class layout:
    """Mirrors ``torch.layout``: how a tensor's elements are stored.  torchlike's tensors are
    dense: ``torchlike.strided`` is the one layout."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"torch.{self._name}"

    def __reduce__(self):
        return self._name


strided = layout("strided")


def _order(fmt, ndim):
    if fmt._order is None:
        return tuple(range(ndim - 1, -1, -1))
    if len(fmt._order) != ndim:
        raise RuntimeError(f"required rank {len(fmt._order)} tensor to use {fmt._name} format")
    return fmt._order


def _in_order(shape, order):
    strides, acc = [0] * len(shape), 1
    for d in order:
        strides[d] = acc
        acc *= max(shape[d], 1)
    return tuple(strides)


def is_contiguous(shape, strides, fmt):
    """PyTorch's is_contiguous(memory_format): dense in fmt's order (size-1 dims: any stride)."""
    if strides is None and fmt._order is None:   # contiguous_format, preserve_format
        return True
    if fmt._order is not None and len(shape) != len(fmt._order):
        return False
    strides = strides or contiguous_strides(shape)
    if 0 in shape:
        return fmt._order is None
    need = 1
    for d in _order(fmt, len(shape)):
        if shape[d] != 1:
            if strides[d] != need:
                return False
            need *= shape[d]
    return True


def copy_strides(shape, strides, fmt=None):
    """Strides (None: contiguous) of a copy of a tensor laid out as (shape, strides) made with
    memory format ``fmt`` (default preserve_format), as ``clone``/``to``/``empty_like`` do."""
    fmt = preserve_format if fmt is None else fmt
    if fmt is preserve_format:
        # a dense layout is kept as it is; any other keeps its dimension order, densely
        return None if strides is None else output_strides(shape, [(shape, strides)])
    if fmt._order is None:
        return None
    return _in_order(shape, _order(fmt, len(shape)))


def _dense(shape, strides):
    """PyTorch's is_non_overlapping_and_dense."""
    if len(shape) == 1:
        return shape[0] < 2 or strides[0] == 1
    order = sorted(range(len(shape)), key=lambda d: (shape[d] < 2, strides[d] if shape[d] >= 2
                                                     else 0))
    need = 1
    for d in order:
        if shape[d] < 2:
            return True
        if strides[d] != need:
            return False
        need *= shape[d]
    return True


def output_strides(shape, operands):
    """Strides of an elementwise result of ``shape`` from its operands' (shape, strides), or None
    for contiguous.  Mirrors TensorIterator: operands of the output's shape that share one dense
    layout pass it on; otherwise dimensions are ordered by the operands' strides (broadcast
    dimensions do not vote) and the output is dense in that order."""
    shape = tuple(shape)
    n = len(shape)
    if n == 0:
        return None
    if all(tuple(s) == shape for s, _ in operands):
        first = tuple(operands[0][1])
        if all(tuple(st) == first for _, st in operands) and _dense(shape, first):
            return None if first == contiguous_strides(shape) else first
    aligned = []   # each operand's stride along every output dimension, 0 where broadcast
    for s, st in operands:
        pad = n - len(s)
        aligned.append([0 if d < pad or (s[d - pad] == 1 and shape[d] != 1) else st[d - pad]
                        for d in range(n)])

    def should_swap(d0, d1):
        for st in aligned:
            a, b = st[d0], st[d1]
            if a == 0 or b == 0:
                continue
            if a != b:
                return 1 if a > b else -1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = list(range(n - 1, -1, -1))   # perm[0] is the fastest-varying dimension
    for i in range(1, n):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    if perm == list(range(n - 1, -1, -1)):
        return None
    return _in_order(shape, perm)
