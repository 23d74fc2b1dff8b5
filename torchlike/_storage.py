"""A tensor's storage as PyTorch reports it: ``data_ptr``, ``storage_offset``, ``nbytes``,
``itemsize``, ``untyped_storage()``, ``share_memory_`` / ``is_shared``.

NOTE [ data_ptr ]
A torchlike storage is its root tensor's jax array (NOTE [ views and in-place writes ]), and
XLA buffers are immutable and shared by value: ``clone()`` may return the very same buffer, and
every in-place write makes a new one.  So a buffer's address identifies no storage, and
``data_ptr()`` is not one: each storage root gets, when first asked, an address range of its
own size (64-byte aligned, never reused), and a tensor's ``data_ptr()`` is its root's address
plus ``storage_offset() * itemsize``.  What programs use ``data_ptr()`` for then holds as in
PyTorch: tensors that share storage at the same place have the same pointer (a view at its
offset from the base), distinct storages never overlap, and a pointer stays put across in-place
writes.  It cannot be dereferenced.
"""
import math

import numpy as np

from . import _layout, _x64

PUBLIC = ()

_ALIGN = 64
_next_address = [1 << 32]


def _root(t):
    return t if t._root is None else t._root


def _storage_nbytes(root):
    return root.numel() * root.dtype.itemsize


def _address(root):
    """The address range of ``root``'s storage (NOTE [ data_ptr ]); 0 for an empty one or a meta
    tensor's, which has none."""
    address = root.__dict__.get("_storage_address")
    if address is None:
        nbytes = _storage_nbytes(root)
        if not nbytes or root.is_meta:
            return 0
        address = root.__dict__["_storage_address"] = _next_address[0]
        _next_address[0] += (nbytes + 2 * _ALIGN - 1) // _ALIGN * _ALIGN
    return address


class UntypedStorage:
    """Mirrors the ``torch.UntypedStorage`` that ``Tensor.untyped_storage()`` returns: the
    bytes of a tensor's storage root (the whole base of a view)."""

    def __init__(self, root):
        self._tensor = root

    def nbytes(self):
        return _storage_nbytes(self._tensor)

    size = nbytes
    __len__ = nbytes

    def element_size(self):
        return 1

    def data_ptr(self):
        return _address(self._tensor)

    @property
    def device(self):
        return self._tensor.device

    def is_shared(self):
        return False   # NOTE [ tensors between processes ] in torchlike.multiprocessing

    def share_memory_(self):
        return self

    def __repr__(self):
        return f"<torchlike untyped storage of {self.nbytes()} bytes on {self.device}>"


@_x64.scoped
def _offset_in_root(t):
    """Where ``t``'s first element sits in its root's storage, in elements of ``t``'s dtype:
    its view steps run on the root's element positions (what storage layout the root has)."""
    root = t._root
    if root is None or not t._chain or not t.numel():
        return 0
    pos = _layout.storage_positions(tuple(root.shape), root.stride())
    size = root.dtype.itemsize   # of the elements ``pos`` counts in
    for op, static in t._chain:
        if op.name == "view_dtype":   # NOTE [ dtype views ] in _ops/shape.py
            new = np.dtype(dict(static)["dtype"]).itemsize
            pos, size = _positions_as(pos, size, new), new
            continue
        try:   # another step that reinterprets the bytes (a complex view's) ends the walk
            moved = np.asarray(op.fn(pos, **dict(static)))
        except (TypeError, ValueError):
            break
        if moved.dtype != np.int64:
            break
        pos = moved
    first = int(np.asarray(pos).reshape(-1)[0]) if np.size(pos) else 0
    return first * size // t.dtype.itemsize


def _positions_as(pos, size, new):
    """Storage positions ``pos`` of elements of ``size`` bytes as those of the elements of
    ``new`` bytes that a dtype view of them has (its last dimension scaled)."""
    if size == new or not pos.ndim:
        return pos * size // new
    if size > new:
        r = size // new
        return (pos[..., None] * r + np.arange(r)).reshape(pos.shape[:-1] + (-1,))
    r = new // size
    return pos.reshape(pos.shape[:-1] + (-1, r))[..., 0] // r


def data_ptr(self):
    """Mirrors ``Tensor.data_ptr`` (NOTE [ data_ptr ]): the storage's address plus this
    tensor's offset in it, in bytes; 0 for an empty storage."""
    base = _address(_root(self))
    return base + _offset_in_root(self) * self.dtype.itemsize if base else 0


def storage_offset(self):
    """Mirrors ``Tensor.storage_offset``: where this tensor starts in its storage, in
    elements (0 for a tensor that owns its storage; a view's offset in its base's)."""
    return _offset_in_root(self)


def untyped_storage(self):
    """Mirrors ``Tensor.untyped_storage``: the storage's bytes as an object with ``nbytes()``,
    ``size()``, ``data_ptr()``, ``element_size()`` and ``device``."""
    return UntypedStorage(_root(self))


def share_memory_(self):
    """Mirrors ``Tensor.share_memory_``: returns this tensor.  Its values stay in their XLA
    buffer: another process receives a copy (NOTE [ tensors between processes ] in
    torchlike.multiprocessing)."""
    return self


def is_shared(self):
    """Mirrors ``Tensor.is_shared``: False (no torchlike storage is shared between
    processes)."""
    return False


TENSOR_METHODS = {
    "data_ptr": data_ptr, "const_data_ptr": data_ptr, "storage_offset": storage_offset,
    "untyped_storage": untyped_storage,
    "share_memory_": share_memory_, "is_shared": is_shared,
    "nbytes": property(lambda self: math.prod(self.shape) * self.dtype.itemsize,
                       doc="Mirrors ``Tensor.nbytes``: numel() * itemsize."),
    "itemsize": property(lambda self: self.dtype.itemsize,
                         doc="Mirrors ``Tensor.itemsize``: bytes per element."),
}
