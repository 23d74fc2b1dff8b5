"""Views and tensors given by explicit strides: as_strided (a view), as_strided_,
as_strided_scatter, empty_strided, empty_permuted and Tensor.new_empty_strided.

NOTE [ as_strided ]
PyTorch's strides address a tensor's storage.  torchlike's storage is its root's array (NOTE [ views
and in-place writes ] in _tensor.py), laid out by the root's strides, so an as_strided view is one
view step from the root: gather the storage (the root's elements at their positions) at
``offset + sum(i_k * stride_k)``.  Writes through the view scatter back through that step like
every view's; its gradient (AsStridedBackward0) is jax.vjp of the gather, which sums over
elements that several view positions share, as PyTorch's does.  Its Tensor methods join the
reduce family (reduce.py).
"""
import jax.numpy as jnp
import numpy as np

from .._creation import empty
from .._dispatch import Op, call
from .._inplace import check_inplace, inplace_view
from .._size import parse_size
from .._views import apply_chain_fn, stored_strides


def _positions(shape, strides):
    """Each element's position in a storage laid out by ``strides``."""
    pos = np.zeros(shape, np.int64)
    for d, (n, s) in enumerate(zip(shape, strides)):
        pos += (np.arange(n) * s).reshape([-1 if i == d else 1 for i in range(len(shape))])
    return pos


def _storage(root, root_strides):
    if root_strides is None:
        return root.reshape(-1)
    pos = _positions(root.shape, root_strides)
    return jnp.zeros(root.size, root.dtype).at[pos.reshape(-1)].set(root.reshape(-1))


def _as_strided(root, size, stride, offset, root_strides):
    return _storage(root, root_strides)[offset + _positions(size, stride)]


def _strides(parent, out, kw):
    return stored_strides(kw["stride"], out.shape)


AS_STRIDED = Op("as_strided", _as_strided, "AsStridedBackward0", saves=(), view=_strides)


def _as_strided_of_view(x, root, size, stride, offset, root_strides, chain):
    """as_strided of a view ``x`` of ``root``: the storage with x's elements in place, so the
    gradient reaches x (root is an operand, not a graph input)."""
    layout = root_strides or _contiguous(root.shape)
    where = apply_chain_fn(chain)(jnp.asarray(_positions(root.shape, layout)))
    storage = _storage(root, root_strides).at[where].set(x)
    return storage[offset + _positions(size, stride)]


def _contiguous(shape):
    from .._layout import contiguous_strides
    return contiguous_strides(shape)


AS_STRIDED_OF_VIEW = Op("as_strided", _as_strided_of_view, "AsStridedBackward0", saves=(),
                        inputs=1)
# as_strided_ (in place) records AsStridedBackward1
AS_STRIDED_ = Op("as_strided_", _as_strided, "AsStridedBackward1", saves=(), view=_strides)
AS_STRIDED_OF_VIEW_ = Op("as_strided_", _as_strided_of_view, "AsStridedBackward1", saves=(),
                         inputs=1)


def _place(fname, input, size, stride, storage_offset):
    """size, stride, offset and the root whose storage they address, after PyTorch's checks."""
    size = parse_size(fname, (size,), "size", 2, varargs=False)
    stride = parse_size(fname, (stride,), "stride", 3, varargs=False)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    root = input if input._root is None else input._root
    offset = input.storage_offset() if storage_offset is None else int(storage_offset)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    need = 0 if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    have = root.numel()
    if need > have:
        item = input.dtype.itemsize
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset}, and itemsize {item} requiring a storage size of "
                           f"{need * item} are out of bounds for storage of size {have * item}")
    return size, stride, offset, root


def as_strided(input, size, stride, storage_offset=None):
    """Mirrors ``torch.as_strided``: a view of ``input``'s storage with the given ``size``,
    ``stride`` and ``storage_offset`` (input's own by default), NOTE [ as_strided ]."""
    return _as_strided_view("as_strided", AS_STRIDED, AS_STRIDED_OF_VIEW, input, size, stride,
                            storage_offset)


def _as_strided_view(fname, op, op_of_view, input, size, stride, storage_offset):
    size, stride, offset, root = _place(fname, input, size, stride, storage_offset)
    static = (("size", tuple(size)), ("stride", tuple(stride)), ("offset", offset),
              ("root_strides", root._strides))
    if input is root:
        return call(op, root, static=static)
    out = call(op_of_view, input, root, static=static + (("chain", input._chain),))
    out._become_view(root, AS_STRIDED, static, out._grad_fn is not None)
    return out


def as_strided_(self, size, stride, storage_offset=None):
    """Mirrors ``Tensor.as_strided_``: this tensor becomes ``as_strided``'s view of its
    storage."""
    size, stride, offset, root = _place("as_strided_", self, size, stride, storage_offset)
    if root is not self:
        check_inplace(self)
        view = _as_strided_view("as_strided_", AS_STRIDED_, AS_STRIDED_OF_VIEW_, self, size,
                                stride, offset)
        self._arr, self._chain, self._strides = view._value(), view._chain, view._strides
        if view._grad_fn is not None:
            self._grad_fn, self._output_nr = view._grad_fn, 0
        self._version_counter()[0] += 1
        return self
    static = (("size", tuple(size)), ("stride", tuple(stride)), ("offset", offset),
              ("root_strides", root._strides))
    return inplace_view(self, AS_STRIDED_, static)


def _scatter_strided(x, src, size, stride, offset, x_strides):
    positions = _positions(x.shape, x_strides) if x_strides is not None else \
        np.arange(x.size).reshape(x.shape)
    storage = _storage(x, x_strides)
    storage = storage.at[offset + _positions(size, stride)].set(src.astype(x.dtype))
    return storage[positions]


# NOTE: PyTorch 2.13's derivative of as_strided_scatter in ``input`` is not the gradient with the
# scattered positions zeroed (it keeps only the storage up to the view's last position, and
# those scattered over too); this one is jax.vjp's, the derivative of the values above.
AS_STRIDED_SCATTER = Op("as_strided_scatter", _scatter_strided, "AsStridedScatterBackward0",
                        saves=())


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """Mirrors ``torch.as_strided_scatter``: a copy of ``input`` whose ``as_strided(size,
    stride, storage_offset)`` view holds ``src``."""
    size = parse_size("as_strided_scatter", (size,), "size", 3, varargs=False)
    stride = parse_size("as_strided_scatter", (stride,), "stride", 4, varargs=False)
    if tuple(src.shape) != tuple(size):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(size)}")
    offset = input.storage_offset() if storage_offset is None else int(storage_offset)
    static = (("size", tuple(size)), ("stride", tuple(stride)), ("offset", offset),
              ("x_strides", input._strides))
    return call(AS_STRIDED_SCATTER, input, src, static=static)


# --- empty tensors with given strides -----------------------------------------------------------

def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """Mirrors ``torch.empty_strided``: an uninitialised tensor (zeros: XLA has no
    uninitialised memory) that reports ``stride``."""
    size = parse_size("empty_strided", (size,), "size", 1, varargs=False)
    stride = parse_size("empty_strided", (stride,), "stride", 2, varargs=False)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    out = empty(*size, dtype=dtype, device=device, requires_grad=requires_grad)
    out._strides = stored_strides(stride, tuple(size))
    return out


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """Mirrors ``torch.empty_permuted``: an uninitialised tensor (zeros) whose dims are laid out
    in memory in the order ``physical_layout`` (outermost first)."""
    size = parse_size("empty_permuted", (size,), "size", 1, varargs=False)
    order = list(physical_layout)
    if sorted(order) != list(range(len(size))):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {len(size)} is not equal to "
                           f"len(physical_layout) = {len(order)}" if len(order) != len(size) else
                           f"Dimension {order} is not a permutation of the dims")
    stride, acc = [0] * len(size), 1
    for d in reversed(order):
        stride[d] = acc
        acc *= max(size[d], 1)
    return empty_strided(size, stride, dtype=dtype, device=device, requires_grad=requires_grad)


def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None,
                      requires_grad=False, pin_memory=False):
    """Mirrors ``Tensor.new_empty_strided``: ``empty_strided`` with this tensor's dtype and
    device by default."""
    return empty_strided(size, stride, dtype=self.dtype if dtype is None else dtype,
                         device=self.device if device is None else device,
                         requires_grad=requires_grad)


# --- layout, dim order --------------------------------------------------------------------------

def dim_order(self, *, ambiguity_check=False):
    """Mirrors ``Tensor.dim_order``: the dims from the outermost to the innermost in memory
    (by decreasing stride; ties keep the dims' order)."""
    if not isinstance(ambiguity_check, (bool, list)):
        raise TypeError("The ambiguity_check argument must be a bool or a list of memory formats.")
    if ambiguity_check is not False:
        from .. import _layout
        formats = [_layout.contiguous_format, _layout.channels_last,
                   _layout.channels_last_3d] if ambiguity_check is True else ambiguity_check
        matches = [f for f in formats if f._order is None or len(f._order) == self.ndim
                   if self.is_contiguous(memory_format=f)]
        if len(matches) != 1:
            raise RuntimeError("The tensor does not have unique dim order, or cannot map to "
                               "exact one of the given memory formats.")
    strides = self.stride()
    return tuple(sorted(range(self.ndim), key=lambda d: -strides[d]))


def _layout_of(self):
    from .. import _layout
    return _layout.strided


PUBLIC = ("as_strided", "as_strided_scatter", "empty_strided", "empty_permuted")
TENSOR_METHODS = {"as_strided": as_strided, "as_strided_": as_strided_,
                  "as_strided_scatter": as_strided_scatter,
                  "new_empty_strided": new_empty_strided, "dim_order": dim_order,
                  "layout": property(_layout_of, doc="Mirrors ``Tensor.layout``: "
                                     "``torchlike.strided``, the layout of dense tensors.")}
