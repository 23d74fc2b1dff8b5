"""Writing the pickle of a torch checkpoint without torch (the writing half of
``torchlike.save``).

NOTE [ torch globals without torch ]
torch's checkpoint pickle rebuilds tensors with ``torch._utils._rebuild_tensor_v2`` (storage,
storage_offset, size, stride, requires_grad, backward_hooks), where ``storage`` is a persistent
id ``('storage', torch.FloatStorage, key, location, numel)`` naming the archive record
``data/<key>`` that holds the raw bytes.  ``torch.load(weights_only=True)`` accepts only an
allow-list of such globals, so the pickle torchlike writes must name torch's globals, not
torchlike's, and must not need torchlike to load.  ``pickle`` refuses to write a global that it
cannot import and find (torch may be absent), so ``TorchGlobal`` stands in for one: the pickler
writes it as a bare ``GLOBAL 'module name'`` opcode.  That hook needs pickle's pure-Python
pickler (``pickle._Pickler``); checkpoint pickles are small, the tensor bytes live in the
archive's records.
"""
import collections
import pickle

import jax
import numpy as np

from .. import _dtype as D, _x64
from .._device import device as _device
from .._layout import contiguous_strides, storage_positions
from .._size import Size
from .._tensor import Tensor
from .._views import apply_chain_fn
from ._unpickler import STORAGE_VIEW


class TorchGlobal:
    """A torch global (``torch._utils._rebuild_tensor_v2``, ``torch.FloatStorage``) named by
    module and name; the checkpoint pickler writes it as ``GLOBAL 'module name'``."""

    __slots__ = ("module", "name")

    def __init__(self, module, name):
        self.module = module
        self.name = name

    def __call__(self, *args, **kwargs):   # pickle's save_reduce insists on a callable
        raise TypeError(f"{self!r} only names torch's global in a checkpoint; it cannot be "
                        "called")

    def __repr__(self):
        return f"<torch global {self.module}.{self.name}>"


_GLOBALS = {}


def torch_global(module, name):
    """The one ``TorchGlobal`` for ``module.name`` (one object, so the pickle memoizes it)."""
    key = (module, name)
    g = _GLOBALS.get(key)
    if g is None:
        g = _GLOBALS[key] = TorchGlobal(module, name)
    return g


REBUILD_TENSOR_V2 = torch_global("torch._utils", "_rebuild_tensor_v2")
REBUILD_TENSOR_V3 = torch_global("torch._utils", "_rebuild_tensor_v3")
REBUILD_PARAMETER = torch_global("torch._utils", "_rebuild_parameter")
REBUILD_PARAMETER_WITH_STATE = torch_global("torch._utils", "_rebuild_parameter_with_state")
REBUILD_FROM_TYPE_V2 = torch_global("torch._tensor", "_rebuild_from_type_v2")
TORCH_TENSOR = torch_global("torch", "Tensor")
TORCH_SIZE = torch_global("torch", "Size")
TORCH_DEVICE = torch_global("torch", "device")
UNTYPED_STORAGE = torch_global("torch.storage", "UntypedStorage")

# dtypes with a legacy typed storage class (torch.FloatStorage, ...); the others (uint16/32/64)
# are written as torch writes them: an UntypedStorage and _rebuild_tensor_v3 with the dtype.
LEGACY_STORAGE_DTYPES = (D.float32, D.float64, D.float16, D.bfloat16, D.int8, D.int16, D.int32,
                         D.int64, D.uint8, D.bool_, D.complex64, D.complex128)


def storage_name(dt):
    """'FloatStorage' for torch.float32, ... (the legacy storage class of a dtype)."""
    return dt._tensor_type[:-len("Tensor")] + "Storage"


class StorageRef:
    """One storage of the checkpoint: record ``data/<key>`` holding ``array`` (1-D)."""

    __slots__ = ("key", "array", "dtype", "location")

    def __init__(self, key, array, dtype, location):
        self.key, self.array, self.dtype, self.location = key, array, dtype, location

    def persistent_id(self, legacy):
        if self.dtype in LEGACY_STORAGE_DTYPES:
            kind, numel = torch_global("torch", storage_name(self.dtype)), self.array.size
        else:
            kind, numel = UNTYPED_STORAGE, self.array.nbytes
        pid = ("storage", kind, self.key, self.location, numel)
        return pid + (None,) if legacy else pid


class _Data:
    """``param.data`` inside a Parameter's pickle: the tensor without requires_grad."""

    __slots__ = ("tensor",)

    def __init__(self, tensor):
        self.tensor = tensor


def _same_bits(a, b):
    return a.shape == b.shape and np.array_equal(np.ascontiguousarray(a).view(np.uint8),
                                                 np.ascontiguousarray(b).view(np.uint8))


def _host(t):
    arr = t._value()
    if isinstance(arr, jax.core.Tracer):
        raise RuntimeError("Cannot save a Tensor that is being traced (inside torchlike.compile, "
                           "jax.jit or jax.grad): its values are not known yet. Save it outside "
                           "the traced function.")
    return np.asarray(arr)


def _layout(values, strides):
    """(1-D storage, strides) holding ``values`` laid out with ``strides``: contiguous when the
    strides are contiguous or cannot hold the values (negative, or overlapping differently)."""
    shape = values.shape
    contiguous = contiguous_strides(shape)
    strides = tuple(int(s) for s in strides)
    if values.size == 0 or strides == contiguous or min(strides, default=0) < 0:
        return np.ascontiguousarray(values).reshape(-1), contiguous
    pos = storage_positions(shape, strides)
    storage = np.zeros(int(pos.max()) + 1, values.dtype)
    storage[pos.ravel()] = values.ravel()
    if not _same_bits(storage[pos], values):
        return np.ascontiguousarray(values).reshape(-1), contiguous
    return storage, strides


class _Root:
    """The storage of one torchlike storage root (``array`` laid out with ``strides``), how its
    logical (row-major) element index maps to a position in it, and its StorageRef once a
    saved tensor uses it."""

    __slots__ = ("array", "strides", "shape", "ref", "_table")

    def __init__(self, array, strides, shape):
        self.array, self.strides, self.shape = array, strides, shape
        self.ref = self._table = None

    def position(self, flat):
        if self.strides == contiguous_strides(self.shape):
            return flat
        if self._table is None:
            self._table = storage_positions(self.shape, self.strides).ravel()
        return self._table[flat]


def _location(t):
    """torch's location tag for ``t``'s storage: 'cpu', 'cuda:0', ...  Other devices (a TPU's
    'xla:0') are tagged 'cpu', which every PyTorch can load (torch.load refuses a tag it has no
    backend for); their data is written from the host either way."""
    d = t.device
    return str(d) if d.type in ("cpu", "cuda") else "cpu"


class CheckpointPickler(pickle._Pickler):
    """Pickles ``obj`` as torch.save does, collecting the storages the pickle refers to.

    NOTE: storages follow torchlike's views: a view (``x.t()``, ``x[:, 1]``, a state_dict entry
    aliasing its Parameter) is saved as (its root's storage, storage_offset, stride), as torch
    saves views, when its reported strides place its values in that storage.  Tensors whose
    layout cannot be expressed that way (e.g. a lazily conjugated view, whose values differ
    from its storage's) get a storage of their own; they still load with the right values,
    shapes, dtypes and strides, but no longer alias the other tensors in the loaded result.
    """

    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file, protocol, legacy=False):
        super().__init__(file, protocol)
        self.legacy = legacy
        self.storages = []          # StorageRef, in key order
        self._roots = {}            # id(root tensor) -> _Root

    # --- storages ---------------------------------------------------------------------------

    def _new_storage(self, array, dtype, location):
        ref = StorageRef(str(len(self.storages)), array, dtype, location)
        self.storages.append(ref)
        return ref

    def _root(self, root):
        entry = self._roots.get(id(root))
        if entry is None:
            storage, strides = _layout(_host(root), root.stride())
            entry = self._roots[id(root)] = _Root(storage, strides, tuple(root.shape))
        return entry

    def _root_ref(self, root):
        """The StorageRef of ``root``'s storage, written to the archive once."""
        entry = self._root(root)
        if entry.ref is None:
            entry.ref = self._new_storage(entry.array, root.dtype, _location(root))
        return entry.ref

    @_x64.scoped
    def _view_in_root(self, t, values):
        """(storage, offset, strides) of the view ``t`` inside its root's storage, or None."""
        root = t._root
        if root.dtype is not t.dtype:
            return None
        entry = self._root(root)
        try:
            n = int(np.prod(entry.shape, dtype=np.int64))
            flat = np.asarray(apply_chain_fn(t._chain)(
                np.arange(n, dtype=np.int64).reshape(entry.shape)))
        except Exception:   # a view step that has no meaning on an index array
            return None
        strides = tuple(int(s) for s in t.stride())
        if flat.shape != values.shape or flat.dtype != np.int64:
            return None
        if values.size == 0:
            return self._root_ref(root), 0, strides
        pos = entry.position(flat)
        offset = int(pos.reshape(-1)[0])
        if min(strides, default=0) < 0 or not np.array_equal(
                pos, offset + storage_positions(values.shape, strides)):
            return None
        if not _same_bits(entry.array[pos], values):
            return None
        return self._root_ref(root), offset, strides

    def _loaded_window(self, t):
        """(storage, offset, strides) of a view ``torchlike.load`` made (one as_strided step
        from its root, NOTE [ loaded storages ]), read from the step without deriving the
        values: a loaded stride-0 tensor of 2**28 elements saves as its small storage again."""
        (op, static), = t._chain
        kw = dict(static)
        root = t._root
        if op is not STORAGE_VIEW or root.dtype is not t.dtype or tuple(t.stride()) != kw[
                "stride"] or self._root(root).strides != tuple(root.stride()):
            return None
        return self._root_ref(root), kw["offset"], kw["stride"]

    def storage_of(self, t):
        """(StorageRef, storage_offset, strides) for tensor ``t``."""
        if t._root is None or (not t._chain and t._root.dtype is t.dtype):
            # a root, or an alias of a whole root (detach(), .data, a state_dict entry)
            root = t if t._root is None else t._root
            return self._root_ref(root), 0, self._root(root).strides
        found = self._loaded_window(t) if len(t._chain) == 1 else None
        if found is not None:
            return found
        values = _host(t)
        found = self._view_in_root(t, values)
        if found is not None:
            return found
        storage, strides = _layout(values, t.stride())
        return self._new_storage(storage, t.dtype, _location(t)), 0, strides

    # --- the pickle -------------------------------------------------------------------------

    def persistent_id(self, obj):
        if type(obj) is StorageRef:
            return obj.persistent_id(self.legacy)
        return None

    def _tensor_args(self, t, requires_grad):
        ref, offset, strides = self.storage_of(t)
        args = (ref, offset, tuple(int(s) for s in t.shape), strides, requires_grad,
                collections.OrderedDict())
        if t.dtype in LEGACY_STORAGE_DTYPES:
            return REBUILD_TENSOR_V2, args
        return REBUILD_TENSOR_V3, args + (t.dtype,)

    def reducer_override(self, obj):
        if type(obj) is _Data:
            return self._tensor_args(obj.tensor, False)
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        if type(obj) is Size:
            return TORCH_SIZE, (tuple(obj),)
        if type(obj) is _device:
            return TORCH_DEVICE, (obj.type,) if obj.index is None else (obj.type, obj.index)
        return NotImplemented

    def _reduce_tensor(self, t):
        from ..nn.parameter import Buffer, Parameter
        # Python attributes a user set on the tensor (torchlike's own state is underscored;
        # Buffer's ``persistent`` is module bookkeeping, not tensor state)
        state = {k: v for k, v in t.__dict__.items()
                 if not k.startswith("_") and not (k == "persistent" and isinstance(t, Buffer))}
        if isinstance(t, Parameter):
            hooks = collections.OrderedDict()
            if state:
                return REBUILD_PARAMETER_WITH_STATE, (_Data(t), t.requires_grad, hooks, state)
            return REBUILD_PARAMETER, (_Data(t), t.requires_grad, hooks)
        func, args = self._tensor_args(t, t.requires_grad)
        cls = type(t)
        if cls is Tensor or cls is Buffer:
            if not state:
                return func, args
            cls = TORCH_TENSOR
        return REBUILD_FROM_TYPE_V2, (func, cls, args, state)

    def save_torch_global(self, obj):
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
        self.memoize(obj)

    dispatch[TorchGlobal] = save_torch_global

    def save_dtype(self, obj):
        self.save(torch_global("torch", obj._name))

    dispatch[D.dtype] = save_dtype


def pickler_class(pickle_module):
    """The checkpoint pickler for ``pickle_module`` (pickle, or a module such as dill whose
    Pickler extends pickle's pure-Python one)."""
    if pickle_module is pickle:
        return CheckpointPickler
    base = getattr(pickle_module, "Pickler", None)
    if not (isinstance(base, type) and issubclass(base, pickle._Pickler)):
        raise TypeError(f"torchlike.save needs a pickle_module whose Pickler extends pickle's "
                        f"pure-Python pickler (pickle._Pickler), got {pickle_module!r}")
    return type("CheckpointPickler", (CheckpointPickler, base),
                {"dispatch": {**base.dispatch, **CheckpointPickler.dispatch}})
