"""Reading the pickle of a torch checkpoint into torchlike objects (the reading half of
``torchlike.load``): torch's globals mapped onto torchlike's, the ``weights_only`` allow-list
(enforced by _serialization_weights_only.py), storages and the tensor rebuild functions.
"""
import _compat_pickle
import collections
import functools
import importlib
import threading
from _codecs import encode

import jax
import numpy as np
import pickle

from . import _dtype as D
from ._device import device, to_jax_device
from ._layout import _dense, contiguous_strides
from ._size import Size
from ._tensor import Tensor

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

    def __init__(self, data, device_, dtype=None, swap=False):
        self._data = data            # 1-D numpy uint8
        self.device = device_
        self.dtype = dtype           # None: untyped (the rebuild function names the dtype)
        self._swap = swap            # stored in the other byte order

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
        return Storage(self._data, _as_device(device), self.dtype, self._swap)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None, non_blocking=False):
        if device is None:
            return self.to("cuda")
        return self.to(f"cuda:{device}" if isinstance(device, int) else device)

    def _typed(self, dtype):
        return Storage(self._data, self.device, dtype, self._swap)

    def __repr__(self):
        return f"<torchlike storage of {self.nbytes()} bytes on {self.device}>"


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
        from ._device import _platform_devices
        count = len(_platform_devices("gpu"))
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


# --- tensor rebuild functions (torch._utils._rebuild_*) -----------------------------------------

def tensor_from_storage(storage, storage_offset, size, stride, dtype, requires_grad,
                        metadata=None):
    """A torchlike Tensor with the values torch's ``as_strided(storage, size, stride, offset)``
    would show (a copy: loaded tensors do not alias each other).  ``metadata`` carries torch's
    lazy conjugate/negative bits ({'conj': True}, {'neg': True}); they are applied to the
    values."""
    size = tuple(int(s) for s in size)
    stride = tuple(int(s) for s in stride)
    offset = int(storage_offset)
    np_dt = np.dtype(dtype._np)
    item = np_dt.itemsize
    data = storage._data
    if len(size) != len(stride) or min(size + stride + (offset,), default=0) < 0:
        raise RuntimeError(f"invalid tensor layout in checkpoint: size {list(size)}, stride "
                           f"{list(stride)}, storage offset {offset}")
    if 0 in size:
        values = np.zeros(size, np_dt)
    else:
        need = offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1
        if need * item > data.size:
            raise RuntimeError(
                f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
                f"{offset}, and itemsize {item} requiring a storage size of {need * item} are "
                f"out of bounds for storage of size {data.size}")
        elems = data[:need * item].view(np_dt)
        values = np.lib.stride_tricks.as_strided(
            elems[offset:], size, tuple(s * item for s in stride), writeable=False).copy()
    if storage._swap:
        values = values.byteswap()
    if metadata and metadata.get("conj"):
        values = np.conj(values)
    if metadata and metadata.get("neg"):
        values = -values
    t = Tensor._wrap(jax.device_put(values, jax_device(storage.device)))
    # A dense layout (e.g. a transpose) keeps its strides; a strided slice of a bigger storage
    # becomes contiguous, as the values were copied out of it.
    if stride != contiguous_strides(size) and len(size) and _dense(size, stride):
        t._strides = stride
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


def _into(into, t):
    """``t``, or the Tensor ``into`` made into ``t`` (the target of a legacy checkpoint's
    BUILD, which set_ fills in place)."""
    if into is None:
        return t
    into.__dict__.clear()
    into.__dict__.update(t.__dict__)
    return into


def set_(tensor, storage, storage_offset, size, stride=None):
    """torch's ``tensor.set_(storage, storage_offset, size, stride)``, as a legacy checkpoint's
    BUILD of a Tensor asks: ``tensor`` becomes that window of ``storage``."""
    if not isinstance(storage, Storage):
        raise TypeError(f"set_(): argument 'source' must be Storage, not "
                        f"{type(storage).__name__}")
    if stride is None:
        stride = contiguous_strides(size)
    _into(tensor, tensor_from_storage(storage, storage_offset, size, stride, storage.dtype,
                                      False))


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
    from .nn.parameter import Parameter
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _set_state(_rebuild_parameter(data, requires_grad, backward_hooks), state)


def _rebuild_from_type_v2(func, new_type, args, state):
    ret = func(*args)
    if (isinstance(new_type, type) and issubclass(new_type, Tensor) and isinstance(ret, Tensor)
            and type(ret) is not new_type):
        ret.__class__ = new_type
    return _set_state(ret, state)


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
    from .nn.parameter import Parameter
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
    storages loaded so far, and which globals the pickle may name."""

    def __init__(self, read_storage, map_location, weights_only, swap=False):
        self.read_storage = read_storage       # (key, StorageType, numel) -> numpy uint8
        self.map_location = map_location
        self.weights_only = weights_only
        self.swap = swap
        self._storages = {}

    def map_device(self, location):
        """The device ``map_location`` (None, str, device, dict) sends ``location`` to."""
        ml = self.map_location
        if ml is None or callable(ml) and not isinstance(ml, (str, device)):
            return location
        if isinstance(ml, dict):
            return ml.get(location, location)
        return ml

    def _restore(self, data, location):
        storage = Storage(data, device("cpu"), swap=self.swap)
        ml = self.map_location
        if callable(ml) and not isinstance(ml, (str, bytes, device, dict)):
            result = ml(storage, location)
            if result is None:
                result = Storage(data, _as_device(location), swap=self.swap)
            if not isinstance(result, Storage):
                raise TypeError(f"map_location should return a storage (the one it was given, "
                                f"or storage.cpu() / .cuda() / .to(device)) or None, but "
                                f"returned {type(result).__name__}")
        else:
            result = Storage(data, _as_device(self.map_device(location)), swap=self.swap)
        jax_device(result.device)      # fail here, as torch does, for a missing device
        return result

    def persistent_load(self, pid):
        if not (type(pid) is tuple and len(pid) in (5, 6) and _ascii(pid[0]) == "storage"
                and isinstance(pid[1], StorageType)):
            raise pickle.UnpicklingError(f"unsupported persistent id encountered: {pid!r}")
        storage_type, key, location, numel = pid[1], _ascii(pid[2]), _ascii(pid[3]), pid[4]
        storage = self._storages.get(key)
        if storage is None:
            data = self.read_storage(key, storage_type, numel)
            storage = self._storages[key] = self._restore(data, location)
        view = pid[5] if len(pid) == 6 else None
        if view is not None:          # legacy storage views: (view key, offset, size)
            item = storage_type.dtype.itemsize if storage_type.dtype is not None else 1
            _, start, count = view
            storage = Storage(storage._data[start * item:(start + count) * item],
                              storage.device, swap=storage._swap)
        return storage._typed(storage_type.dtype)

    def find_class(self, module, name, fallback):
        """A trusted (``weights_only=False``) load's global: torch's names mapped onto
        torchlike (_serialization_weights_only.py answers a ``weights_only`` load's)."""
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
    """{key: (StorageType, numel)} of the persistent ids in the pickle at ``file``'s position,
    found without running anything it names; leaves ``file`` just past the pickle.  Each storage
    name unpickles to a fresh StorageType, so a BUILD in the pickle changes nothing shared."""
    found = {}

    class Scanner(pickle.Unpickler):
        def find_class(self, module, name):
            g = TORCH_GLOBALS.get(".".join(python3_name(module, name)))
            return StorageType(g.name, g.dtype) if isinstance(g, StorageType) else _Inert

        def persistent_load(self, pid):
            if type(pid) is tuple and len(pid) >= 5 and isinstance(pid[1], StorageType):
                found.setdefault(_ascii(pid[2]), (pid[1], pid[4]))
            return _Inert()

    Scanner(file, encoding="latin1").load()
    return found
