"""Reading the pickle of a torch checkpoint into torchlike objects (the reading half of
``torchlike.load``): torch's globals mapped onto torchlike's, the ``weights_only`` allow-list
(enforced by _weights_only.py), storages and the tensor rebuild functions.

NOTE [ loaded storages ]
A checkpoint holds each storage once, and its tensors are (offset, size, stride) windows on it;
``torch.load`` gives back tensors that share their storage (a write through one shows in the
others, tied weights stay tied) and a stride-0 (expanded) tensor costs no more than its storage.
torchlike keeps both with its own views (NOTE [ views and in-place writes ] in _tensor.py): the
first tensor that covers its storage densely becomes the storage's root, a plain tensor (the
common case, one tensor per storage, stops there); every other tensor of that storage is a view
of the root through one ``as_strided`` step over the storage, or an alias where it has the
root's layout; a storage that no tensor covers first gets a 1-D root of its own.  A view is not
derived at load: it holds only its shape, dtype and device until first used, so what a load
allocates is bounded by the storages in the file, whatever sizes and strides the pickle names.
Each loaded tensor keeps its own version counter (torch rebuilds each with ``set_``), and reports
its saved strides.
"""
import _compat_pickle
import collections
import functools
import importlib
import math
import threading
from _codecs import encode

import jax
import jax.numpy as jnp
import numpy as np
import pickle

from .. import _dtype as D, _x64
from .._device import device, to_jax_device
from .._dispatch import Op
from .._layout import _dense, contiguous_strides
from .._ops import complex as _complex
from .._size import Size
from .._tensor import Tensor

BLOCKED_MODULES = ("sys", "os", "posix", "nt")


class StorageType:
    """What ``torch.FloatStorage`` (and the other storage names) unpickle to: the dtype of the
    storage a persistent id refers to (None for ``torch.storage.UntypedStorage``: bytes)."""

    __slots__ = ("name", "dtype")

    def __init__(self, name, dtype):
        self.name, self.dtype = name, dtype

    def __repr__(self):
        return f"StorageType(dtype={self.dtype})" if self.dtype is not None else self.name


_TLS = threading.local()    # the Loader of the load in progress (for device-tensor rebuilds)


class Storage:
    """A loaded storage: raw bytes and the device its tensors go to.  A callable
    ``map_location(storage, location)`` receives one (on the CPU) and returns one, e.g.
    ``storage``, ``storage.cpu()``, ``storage.cuda(0)`` or ``storage.to('cuda:1')``.
    """

    def __init__(self, data, device_, dtype=None, swap=False, key=None, roots=None):
        self._data = data            # 1-D numpy uint8
        self.device = device_
        self.dtype = dtype           # None: untyped (the rebuild function names the dtype)
        self._swap = swap            # stored in the other byte order
        self._key = key              # its record in the checkpoint
        self._roots = _Roots() if roots is None else roots   # the load's (NOTE [ loaded storages ])

    def nbytes(self):
        return int(self._data.size)

    size = nbytes

    def __len__(self):
        return self.nbytes()

    def element_size(self):
        return 1

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def to(self, device=None, non_blocking=False):
        return Storage(self._data, _as_device(device), self.dtype, self._swap, self._key,
                       self._roots)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None, non_blocking=False):
        if device is None:
            return self.to("cuda")
        return self.to(f"cuda:{device}" if isinstance(device, int) else device)

    def _typed(self, dtype):
        return Storage(self._data, self.device, dtype, self._swap, self._key, self._roots)

    def __repr__(self):
        return f"<torchlike storage of {self.nbytes()} bytes on {self.device}>"

    def tensor(self, offset, size, stride, dtype, conj=False, neg=False, into=None):
        """The tensor viewing elements ``offset + sum(i * stride)`` of this storage as
        ``dtype`` (a layout already checked), with torch's lazy conjugate / negative bits;
        made in the Tensor ``into`` when given (NOTE [ loaded storages ])."""
        steps = ((_complex.CONJ, ()),) * conj + ((_complex.NEG_VIEW, ()),) * neg
        key = (self._key, dtype)
        root = self._roots.get(key)
        if root is None and not steps and offset == 0 and _dense(size, stride) \
                and math.prod(size) * dtype.itemsize == self.nbytes():
            return self._roots.add(key, _into(into, self._root(size, stride, dtype)))
        if root is None:
            n = self.nbytes() // dtype.itemsize
            root = self._roots.add(key, self._root((n,), (1,), dtype))
        chain = steps
        if (size, stride, offset) != (tuple(root.shape), root.stride(), 0):
            order = tuple(sorted(range(root.ndim), key=lambda d: -root.stride(d)))
            chain = ((STORAGE_VIEW, (("order", order), ("size", size), ("stride", stride),
                                     ("offset", offset))),) + chain
        t = _lazy_view(root, size, chain) if chain else root._alias(own_version=True)
        t._strides = _norm(stride, size)
        t._vc = [1]       # set_ wrote it: torch.load's tensors start at version 1
        return _into(into, t)

    @_x64.scoped
    def _root(self, size, stride, dtype):
        item = dtype.itemsize
        elems = self._data[:math.prod(size) * item].view(np.dtype(dtype._np))
        values = np.lib.stride_tricks.as_strided(
            elems, size, tuple(s * item for s in stride), writeable=False).copy()
        if self._swap:
            values = values.byteswap()
        t = Tensor._wrap(jax.device_put(values, jax_device(self.device)))
        t._strides = _norm(stride, size)
        t._vc = [1]
        return t


class _Roots:
    """The root tensor of each (storage record, dtype) one load has rebuilt tensors from
    (NOTE [ loaded storages ])."""

    def __init__(self):
        self._roots = {}
        self._key_of = {}     # id(root) -> its key

    def get(self, key):
        return self._roots.get(key)

    def add(self, key, root):
        self._roots[key] = root
        self._key_of[id(root)] = key
        return root

    def replace(self, old, new):
        """``new`` (a Parameter made from the root ``old``) becomes the root in its place."""
        key = self._key_of.pop(id(old), None)
        if key is not None:
            self.add(key, new)


def _into(into, t):
    """``t``, or the Tensor ``into`` made into ``t`` (the target of a legacy checkpoint's
    BUILD, which set_ fills in place)."""
    if into is None:
        return t
    into.__dict__.clear()
    into.__dict__.update(t.__dict__)
    return into


def _as_strided(x, order, size, stride, offset):
    """Elements ``offset + sum(i * stride)`` of the storage that ``x`` lays out densely, its
    dimensions ``order``ed outermost first: the step from a loaded view's root (NOTE [ loaded
    storages ])."""
    flat = (x if order == tuple(range(x.ndim)) else jnp.transpose(x, order)).reshape(-1)
    index = jnp.asarray(offset, jnp.int64)
    for d, s in enumerate(stride):
        index = index + jax.lax.broadcasted_iota(jnp.int64, size, d) * s
    return jnp.take(flat, index, mode="clip")


STORAGE_VIEW = Op("as_strided", _as_strided, "AsStridedBackward0", saves=(),
                  view=lambda parent, out, kw: _norm(kw["stride"], kw["size"]),
                  dynamic=("offset",))


class _Underived:
    """What a loaded view holds in place of its array until it is first used: the shape, dtype
    and device Tensor reads without deriving the values (NOTE [ loaded storages ])."""

    __slots__ = ("shape", "dtype", "_device")

    def __init__(self, shape, dtype, device_):
        self.shape, self.dtype, self._device = tuple(shape), dtype, device_

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)

    def devices(self):
        return {self._device}


def _lazy_view(root, size, chain):
    """A view of ``root`` through ``chain`` (its first step made with the view machinery, the
    rest conj / _neg_view, which keep shape and strides), derived on first use.  To the user it
    is a tensor of its own, as torch.load's are: no ``_base`` (Storage.tensor gives it its own
    version counter)."""
    (op, static), rest = chain[0], chain[1:]
    arr = root._arr
    t = Tensor._wrap(_Underived(size, arr.dtype, next(iter(arr.devices()))))
    t._become_view(root, op, static, track=False)
    t._chain += rest
    t._seen = root._gen - 1
    t._vbase = None
    t._no_grad_view = False
    return t


def _norm(stride, size):
    return None if tuple(stride) == contiguous_strides(size) else tuple(stride)


def _as_device(d):
    if isinstance(d, device):
        return d
    if isinstance(d, bytes):
        d = d.decode("ascii")
    return device(d if isinstance(d, str) else str(d))


def jax_device(dev):
    """The jax device for a restored storage, with torch's errors for a missing CUDA device."""
    try:
        return to_jax_device(dev)
    except RuntimeError:
        if dev.type != "cuda":
            raise
        from .._device import devices_of
        count = len(devices_of("cuda"))
        if count == 0:
            raise RuntimeError(
                "Attempting to deserialize object on a CUDA device but torchlike found no CUDA "
                "device (jax.devices('gpu') is empty). If you are running on a CPU-only machine, "
                "please use torchlike.load with map_location=torchlike.device('cpu') to map "
                "your storages to the CPU.") from None
        raise RuntimeError(
            f"Attempting to deserialize object on CUDA device {dev.index} but torchlike sees "
            f"{count} CUDA device(s). Please use torchlike.load with map_location to map your "
            "storages to an existing device.") from None


# --- tensor layouts: torch's set_ checks --------------------------------------------------------

_INT64 = (-2 ** 63, 2 ** 63)
_U64 = 2 ** 64


def _is_int(x):
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _int_list(value, name):
    """``value`` as a tuple of ints, or the TypeError of set_'s argument parser."""
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"set_(): argument '{name}' must be tuple of ints, not "
                        f"{type(value).__name__}")
    for i, v in enumerate(value):
        if not _is_int(v):
            raise TypeError(f"set_(): argument '{name}' must be tuple of ints, but found "
                            f"element of type {type(v).__name__} at pos {i}")
        if not _INT64[0] <= v < _INT64[1]:
            raise TypeError(f"set_(): argument '{name}' failed to unpack the object at pos {i} "
                            "with error \"Overflow when unpacking long long\"")
    return tuple(int(v) for v in value)


def _mul_u64(a, b):
    """(a * b mod 2**64, whether it overflowed), for a and b read as uint64 (C++'s
    c10::mul_overflows)."""
    p = (a % _U64) * (b % _U64)
    return p % _U64, p >= _U64


def check_layout(size, stride, offset, itemsize, nbytes):
    """torch's checks (in set_'s order, with its messages) that the window (offset, size,
    stride) of ``itemsize``-byte elements lies inside a storage of ``nbytes`` bytes."""
    if len(size) != len(stride):
        raise RuntimeError(f"unequal size length ({len(size)}) and stride length "
                           f"({len(stride)})")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    numel, overflow = 1, False
    for n in size:
        numel, o = _mul_u64(numel, n)
        overflow |= o
    if overflow or numel >= 2 ** 63:
        raise RuntimeError("numel: integer multiplication overflow")
    if any(n < 0 for n in size):   # torch lets (-1, 0) through, to a tensor nothing can use
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: "
                           f"{list(size)}")
    need, overflow = offset + 1, False
    for n, s in zip(size, stride):
        if n == 0:
            return
        step, o = _mul_u64(s, n - 1)
        total = need + step
        need, overflow = total % _U64, overflow or o or total >= _U64
    need, o = _mul_u64(need, itemsize)
    if overflow or o or need >= 2 ** 63:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    if need > nbytes:
        raise RuntimeError("Trying to resize storage that is not resizable")


# --- tensor rebuild functions (torch._utils._rebuild_*) -----------------------------------------

def tensor_from_storage(storage, storage_offset, size, stride, dtype, requires_grad,
                        metadata=None, into=None):
    """torch's ``empty(0, dtype).set_(storage, storage_offset, size, stride)``: the tensor
    viewing that window of ``storage`` (NOTE [ loaded storages ]).  ``metadata`` carries
    torch's lazy conjugate/negative bits ({'conj': True}, {'neg': True}), kept as conj /
    _neg_view steps."""
    nbytes = storage.nbytes()     # torch reads the storage first (AttributeError)
    if not isinstance(dtype, D.dtype):
        raise TypeError(f"empty(): argument 'dtype' must be torch.dtype, not "
                        f"{type(dtype).__name__}")
    if not _is_int(storage_offset):
        raise TypeError(f"set_(): argument 'storage_offset' must be int, not "
                        f"{type(storage_offset).__name__}")
    size = _int_list(size, "size")
    stride = contiguous_strides(size) if stride is None else _int_list(stride, "stride")
    offset = int(storage_offset)
    check_layout(size, stride, offset, dtype.itemsize, nbytes)
    metadata = metadata or {}
    t = storage.tensor(offset, size, stride, dtype, bool(metadata.get("conj")),
                       bool(metadata.get("neg")), into)
    if requires_grad:
        t._set_requires_grad(True)
    return t


def _rebuild_tensor(storage, storage_offset, size, stride):
    return tensor_from_storage(storage, storage_offset, size, stride, storage.dtype, False)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       metadata=None):
    return tensor_from_storage(storage, storage_offset, size, stride, storage.dtype,
                               requires_grad, metadata)


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       dtype, metadata=None):
    return tensor_from_storage(storage, storage_offset, size, stride, dtype, requires_grad,
                               metadata)


def set_(tensor, storage, storage_offset, size, stride=None):
    """torch's ``tensor.set_(storage, storage_offset, size, stride)``, as a legacy checkpoint's
    BUILD of a Tensor asks: ``tensor`` becomes that window of ``storage``."""
    if not isinstance(storage, Storage):
        raise TypeError(f"set_(): argument 'source' must be Storage, not "
                        f"{type(storage).__name__}")
    tensor_from_storage(storage, storage_offset, size, stride, storage.dtype, False,
                        into=tensor)


def tensor_setstate(tensor, state):
    """torch's legacy ``Tensor.__setstate__`` (a checkpoint's BUILD of a Parameter): a 4-tuple
    is set_'s arguments, a 5-tuple a Variable's (data, ..., requires_grad, hooks), a 3-tuple
    (requires_grad, _, hooks)."""
    if not tensor.is_leaf:
        raise RuntimeError("__setstate__ can be only called on leaf Tensors")
    if len(state) == 4:
        set_(tensor, *state)
        return
    if len(state) == 5:
        tensor.data = state[0]
        state = (state[3], state[4], state[2])
    tensor.requires_grad, _, _ = state


def _set_state(obj, state):
    """Attributes saved with a tensor: a dict, or torch's (dict, slots) pair."""
    if isinstance(state, tuple):
        if len(state) != 2:
            raise RuntimeError(f"Invalid serialized state: {state}")
        state, slots = state
    else:
        slots = None
    for part in (state, slots):
        for k, v in (part or {}).items():
            setattr(obj, k, v)
    return obj


def _rebuild_parameter(data, requires_grad, backward_hooks):
    from ..nn.parameter import Parameter
    param = Parameter(data, requires_grad)
    param._vc = data._version_counter()    # torch's Parameter shares its data's
    loader = getattr(_TLS, "loader", None)
    if loader is not None:
        loader.adopt(data, param)
    return param


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _set_state(_rebuild_parameter(data, requires_grad, backward_hooks), state)


def _rebuild_from_type_v2(func, new_type, args, state):
    ret = func(*args)
    if (isinstance(new_type, type) and issubclass(new_type, Tensor) and isinstance(ret, Tensor)
            and type(ret) is not new_type):
        ret.__class__ = new_type
    return _set_state(ret, state)


@_x64.scoped
def _device_tensor(values, dtype, device_, requires_grad):
    loader = getattr(_TLS, "loader", None)
    dev = _as_device(device_ if loader is None else loader.map_device(str(device_)))
    t = Tensor._wrap(jax.device_put(np.asarray(values, dtype._np), jax_device(dev)))
    if requires_grad:
        t._set_requires_grad(True)
    return t


def _rebuild_device_tensor_from_cpu_tensor(data, dtype, device_, requires_grad):
    return _device_tensor(np.asarray(data._value()), dtype, device_, requires_grad)


def _rebuild_device_tensor_from_numpy(data, dtype, device_, requires_grad):
    return _device_tensor(data, dtype, device_, requires_grad)


# --- torch's globals, mapped onto torchlike -----------------------------------------------------

def _torch_globals():
    from ..nn.parameter import Parameter
    g = {
        "collections.OrderedDict": collections.OrderedDict,
        "collections.Counter": collections.Counter,
        "_codecs.encode": encode,
        "builtins.bytearray": bytearray,
        "builtins.set": set,
        "builtins.complex": complex,
        "torch.Size": Size,
        "torch.Tensor": Tensor,
        "torch.device": device,
        "torch.nn.parameter.Parameter": Parameter,
        "torch.storage.UntypedStorage": StorageType("torch.storage.UntypedStorage", None),
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
    }
    for f in (_rebuild_tensor, _rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_parameter,
              _rebuild_parameter_with_state, _rebuild_device_tensor_from_cpu_tensor,
              _rebuild_device_tensor_from_numpy):
        g["torch._utils." + f.__name__] = f
    for dt in D.ALL:
        g["torch." + dt._name] = dt
        storage = dt._tensor_type[:-len("Tensor")] + "Storage"
        if dt not in (D.uint16, D.uint32, D.uint64):    # no legacy storage class in torch
            for module in ("torch", "torch.cuda"):
                g[f"{module}.{storage}"] = StorageType(f"{module}.{storage}", dt)
    return g


TORCH_GLOBALS = _torch_globals()

# Names torch.load(weights_only=True) accepts that torchlike cannot rebuild.
_NO_EQUIVALENT = (
    "torch._utils._rebuild_qtensor", "torch._utils._rebuild_sparse_tensor",
    "torch._utils._rebuild_nested_tensor", "torch._utils._rebuild_meta_tensor_no_storage",
    "torch._utils._rebuild_wrapper_subclass", "torch.storage.TypedStorage",
    "torch.serialization._get_layout", "torch.QInt8Storage", "torch.QUInt8Storage",
    "torch.QInt32Storage", "torch.QUInt4x2Storage", "torch.QUInt2x4Storage",
    "torch.complex32", "torch.float8_e4m3fn", "torch.float8_e4m3fnuz", "torch.float8_e5m2",
    "torch.float8_e5m2fnuz", "torch.float8_e8m0fnu", "torch.float4_e2m1fn_x2", "torch.qint8",
    "torch.quint8", "torch.qint32", "torch.quint4x2", "torch.quint2x4")


def no_equivalent(path):
    return RuntimeError(f"the checkpoint uses {path}, which torchlike has no equivalent of "
                        "(quantized, sparse, nested and meta tensors, and dtypes such as "
                        "float8, are not supported)")


# --- user-registered safe globals (torch.serialization.add_safe_globals) -----------------------

_safe_globals = set()


def user_globals():
    out = {}
    for entry in _safe_globals:
        if isinstance(entry, tuple):
            if len(entry) != 2:
                raise ValueError(f"Expected tuple of length 2 (global, str of callable full "
                                 f"path), but got tuple of length: {len(entry)}")
            if type(entry[1]) is not str:
                raise TypeError(f"Expected second item in tuple to be str of callable full "
                                f"path, but got: {type(entry[1])}")
            out[entry[1]] = entry[0]
        else:
            module = entry.__module__
            out[f"{module}.{entry.__qualname__}"] = entry
            if module == "torchlike" or module.startswith("torchlike."):
                # a torch checkpoint spells torchlike.nn.Linear as torch.nn...Linear
                out[f"torch{module[len('torchlike'):]}.{entry.__qualname__}"] = entry
    return out


def torchlike_equivalent(module, name):
    """torchlike's object for torch's ``module.name`` (``torch.nn.modules.linear.Linear`` ->
    ``torchlike.nn.modules.linear.Linear``), so a whole pickled torch object loads without
    torch; UnpicklingError when torchlike has no such object."""
    ours = "torchlike" + module[len("torch"):]
    try:
        return functools.reduce(getattr, name.split("."), importlib.import_module(ours))
    except (ImportError, AttributeError):
        raise pickle.UnpicklingError(
            f"the checkpoint names {module}.{name}, which has no torchlike equivalent "
            f"({ours}.{name} does not exist)") from None


# --- the unpickler ------------------------------------------------------------------------------

def _ascii(s):
    return s.decode("ascii") if isinstance(s, bytes) else s


class Loader:
    """One load's state: how to find a storage's bytes, where storages go (map_location), the
    storages loaded so far and the tensors' roots (NOTE [ loaded storages ])."""

    def __init__(self, read_storage, map_location, weights_only, swap=False, legacy=False):
        self.read_storage = read_storage       # (key, nbytes) -> numpy uint8
        self.map_location = map_location
        self.weights_only = weights_only
        self.swap = swap
        self.legacy = legacy                   # the pre-zip format (its ids carry a view)
        self.roots = _Roots()
        self._storages = {}

    def map_device(self, location):
        """The device ``map_location`` (None, str, device, dict) sends ``location`` to."""
        ml = self.map_location
        if ml is None or callable(ml) and not isinstance(ml, (str, device)):
            return location
        if isinstance(ml, dict):
            return ml.get(location, location)
        return ml

    def _restore(self, data, location, key):
        storage = Storage(data, device("cpu"), swap=self.swap, key=key, roots=self.roots)
        ml = self.map_location
        if callable(ml) and not isinstance(ml, (str, bytes, device, dict)):
            result = ml(storage, location)
            if result is None:
                result = storage.to(location)
            if not isinstance(result, Storage):
                raise TypeError(f"map_location should return a storage (the one it was given, "
                                f"or storage.cpu() / .cuda() / .to(device)) or None, but "
                                f"returned {type(result).__name__}")
        else:
            result = storage.to(self.map_device(location))
        jax_device(result.device)      # fail here, as torch does, for a missing device
        return result

    def persistent_load(self, pid):
        """torch's: ``('storage', storage type, key, location, numel)`` (the legacy format adds
        a view of the storage, and also has 'module' ids), with its checks and errors.  The
        first storage type a key is read with is the one it keeps, as in torch."""
        if not isinstance(pid, tuple):
            raise AssertionError(f"saved_id must be a tuple, got {type(pid).__name__}")
        typename, data = _ascii(pid[0]), pid[1:]
        if self.legacy and typename == "module":
            return data[0]
        if typename != "storage":
            raise AssertionError("Unknown typename for persistent_load, expected 'storage' but "
                                 f"got '{typename}'")
        if self.legacy:
            storage_type, key, location, numel, view = data
        else:
            (storage_type, key, location, numel), view = data, None
        dtype = storage_type.dtype
        dtype = D.uint8 if dtype is None else dtype
        key = _ascii(key)
        storage = self._storages.get(key)
        if storage is None:
            if not _is_int(numel):
                raise TypeError(f"the storage numel must be an int, got {type(numel).__name__}")
            data = self.read_storage(key, int(numel) * dtype.itemsize)
            storage = self._restore(data, _ascii(location), key)._typed(dtype)
            if storage.nbytes():
                self._storages[key] = storage
        if view is not None:          # legacy storage views: (view key, offset, size)
            view_key, start, count = view
            item = storage.dtype.itemsize
            storage = self._storages.setdefault(_ascii(view_key), Storage(
                storage._data[start * item:(start + count) * item], storage.device,
                storage.dtype, storage._swap, _ascii(view_key), self.roots))
        return storage

    def adopt(self, data, param):
        """``param``, a Parameter made from the loaded tensor ``data``, shares its storage
        with the tensors loaded after it (torch's Parameter shares ``data``'s)."""
        self.roots.replace(data, param)

    def find_class(self, module, name, fallback):
        """A trusted (``weights_only=False``) load's global: torch's names mapped onto
        torchlike (_weights_only.py answers a ``weights_only`` load's)."""
        module, name = python3_name(module, name)
        path = f"{module}.{name}"
        found = TORCH_GLOBALS.get(path)
        if found is not None:
            return found
        if path in _NO_EQUIVALENT:
            raise no_equivalent(path)
        if module == "torch" or module.startswith("torch."):
            return torchlike_equivalent(module, name)
        return fallback(module, name)

    def unpickler(self, file, base=pickle.Unpickler, **kwargs):
        loader = self

        class CheckpointUnpickler(base):
            def find_class(self, module, name):
                return loader.find_class(module, name, super().find_class)

            def persistent_load(self, pid):
                return loader.persistent_load(pid)

        return CheckpointUnpickler(file, **kwargs)

    def load(self, file, base=pickle.Unpickler, **kwargs):
        previous = getattr(_TLS, "loader", None)
        _TLS.loader = self
        try:
            return self.unpickler(file, base, **kwargs).load()
        finally:
            _TLS.loader = previous


def python3_name(module, name):
    """A global's Python 3 spelling (protocol 2 pickles write '__builtin__ set'; pickle's own
    find_class maps such names, an override must do it itself)."""
    return _compat_pickle.NAME_MAPPING.get(
        (module, name), (_compat_pickle.IMPORT_MAPPING.get(module, module), name))


class _Inert:
    """Stands in for every global while the legacy format's pickle is scanned for its storage
    ids (nothing the pickle names is imported or called)."""

    def __init__(self, *args, **kwargs):
        pass

    def __setstate__(self, state):
        pass

    def __setitem__(self, key, value):
        pass

    def append(self, item):
        pass

    def extend(self, items):
        pass


def scan_storage_ids(file):
    """{key: (dtype, numel)} of the persistent ids in the pickle at ``file``'s position, found
    without running anything it names; leaves ``file`` just past the pickle.  Each storage name
    unpickles to a fresh StorageType, so a BUILD in the pickle changes nothing shared."""
    found = {}

    class Scanner(pickle.Unpickler):
        def find_class(self, module, name):
            g = TORCH_GLOBALS.get(".".join(python3_name(module, name)))
            return StorageType(g.name, g.dtype) if isinstance(g, StorageType) else _Inert

        def persistent_load(self, pid):
            if type(pid) is tuple and len(pid) >= 5 and isinstance(pid[1], StorageType) \
                    and isinstance(pid[1].dtype, (D.dtype, type(None))) and _is_int(pid[4]):
                found.setdefault(_ascii(pid[2]), (pid[1].dtype or D.uint8, int(pid[4])))
            return _Inert()

    Scanner(file, encoding="latin1").load()
    return found
