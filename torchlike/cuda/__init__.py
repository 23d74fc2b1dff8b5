"""torchlike.cuda: mirrors ``torch.cuda`` -- PyTorch's names for the GPUs jax sees.

``is_available()`` is True when jax has GPU devices (or, with ``TORCHLIKE_CPU_AS_CUDA=1``, CPU
devices presented as GPUs: NOTE [ devices ] in _device.py).  Without one, each function answers
as a CPU-only PyTorch build does: ``is_available()`` False, ``device_count()`` 0, memory queries
0, seeding a no-op, and the functions that need a device raise
``AssertionError("Torch not compiled with CUDA enabled")``.

The current device (``set_device``, ``with device(i)``) is the one ``"cuda"`` without an index
means everywhere, factories included.  Memory statistics: NOTE [ device memory statistics ] in
_device_runtime.py; streams and events: NOTE [ streams on XLA ] in _streams.py; random numbers:
NOTE [ a generator per device ] in _random.py.
"""
from .. import _device_runtime as R
from .._device import OutOfMemoryError, current_index, devices_of
from . import memory as memory, random as random, streams as streams
from ._tensor_types import (
    BFloat16Tensor as BFloat16Tensor, BoolTensor as BoolTensor, ByteTensor as ByteTensor,
    CharTensor as CharTensor, DoubleTensor as DoubleTensor, FloatTensor as FloatTensor,
    HalfTensor as HalfTensor, IntTensor as IntTensor, LongTensor as LongTensor,
    ShortTensor as ShortTensor)
from .memory import (
    empty_cache as empty_cache, max_memory_allocated as max_memory_allocated,
    max_memory_cached as max_memory_cached, max_memory_reserved as max_memory_reserved,
    mem_get_info as mem_get_info, memory_allocated as memory_allocated,
    memory_cached as memory_cached, memory_reserved as memory_reserved,
    memory_stats as memory_stats, memory_stats_as_nested_dict as memory_stats_as_nested_dict,
    memory_summary as memory_summary,
    reset_accumulated_memory_stats as reset_accumulated_memory_stats,
    reset_max_memory_allocated as reset_max_memory_allocated,
    reset_max_memory_cached as reset_max_memory_cached,
    reset_peak_memory_stats as reset_peak_memory_stats)
from .random import (
    get_rng_state as get_rng_state, get_rng_state_all as get_rng_state_all,
    initial_seed as initial_seed, manual_seed as manual_seed, manual_seed_all as manual_seed_all,
    seed as seed, seed_all as seed_all, set_rng_state as set_rng_state,
    set_rng_state_all as set_rng_state_all)
from .streams import Event as Event, Stream as Stream

_state = {"initialized": False}


def is_available():
    """Mirrors ``torch.cuda.is_available``: whether jax has GPU devices (or emulated ones)."""
    return bool(devices_of("cuda"))


def device_count():
    """Mirrors ``torch.cuda.device_count``."""
    return len(devices_of("cuda"))


def _lazy_init():
    """What PyTorch's lazy CUDA initialisation raises without a GPU; marks cuda initialised."""
    if not devices_of("cuda"):
        raise AssertionError("Torch not compiled with CUDA enabled")
    _state["initialized"] = True


def init():
    """Mirrors ``torch.cuda.init``: raises without a GPU; jax starts its devices on first use."""
    _lazy_init()


def is_initialized():
    """Mirrors ``torch.cuda.is_initialized``: whether a cuda function has needed the devices."""
    return _state["initialized"]


def _index(device, optional=True):
    return R.device_index("cuda", device, optional)


def _jax_device(device=None):
    """The jax device of a torch.cuda function's ``device`` argument (None: the current one)."""
    _lazy_init()
    return R.jax_device("cuda", _index(device))


def current_device():
    """Mirrors ``torch.cuda.current_device``: the index of the current cuda device."""
    _lazy_init()
    return current_index("cuda")


def set_device(device):
    """Mirrors ``torch.cuda.set_device``: make ``device`` (an index or ``cuda:N``) current; a
    negative index does nothing."""
    index = _index(device, optional=False)
    if index >= 0:
        _lazy_init()
        R.exchange("cuda", index)


class device:
    """Mirrors ``torch.cuda.device``: a context in which ``device`` is the current cuda device
    (None or a negative index: no change)."""

    def __init__(self, device):
        self.idx = -1 if device is None else _index(device)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx >= 0:
            _lazy_init()
            self.prev_idx = R.exchange("cuda", self.idx)

    def __exit__(self, *exc):
        if self.prev_idx >= 0:
            R.exchange("cuda", self.prev_idx)
        return False


class device_of(device):
    """Mirrors ``torch.cuda.device_of``: the device of tensor ``obj`` current in the block (a
    CPU tensor: no change)."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.is_cuda else -1)


def get_device_properties(device=None):
    """Mirrors ``torch.cuda.get_device_properties``: name, major, minor, total_memory and
    multi_processor_count as jax reports them (``DeviceProperties`` in _device_runtime.py says
    what an emulated device reports)."""
    _lazy_init()
    index = _index(device)
    if index < 0 or index >= device_count():
        raise AssertionError("Invalid device id")
    return R.DeviceProperties(R.jax_device("cuda", index))


def get_device_name(device=None):
    """Mirrors ``torch.cuda.get_device_name``."""
    return get_device_properties(device).name


def get_device_capability(device=None):
    """Mirrors ``torch.cuda.get_device_capability``: (major, minor); (0, 0) for an emulated
    device."""
    p = get_device_properties(device)
    return p.major, p.minor


def can_device_access_peer(device, peer_device):
    """Mirrors ``torch.cuda.can_device_access_peer``: XLA copies between any two devices."""
    _lazy_init()
    for index, what in ((_index(device), "device"), (_index(peer_device, False), "peer device")):
        if index < 0 or index >= device_count():
            raise AssertionError(f"Invalid {what} id")
    return True


def synchronize(device=None):
    """Mirrors ``torch.cuda.synchronize``: wait for the work queued on ``device`` (the current
    one by default) to finish (NOTE [ streams on XLA ])."""
    R.synchronize(_jax_device(device))


def get_arch_list():
    """Mirrors ``torch.cuda.get_arch_list``: XLA compiles for the devices present, so the
    architectures of those (``sm_90`` ...); empty without a GPU or for emulated ones."""
    archs = []
    for jd in devices_of("cuda"):
        major, minor = R.capability(jd)
        if major and f"sm_{major}{minor}" not in archs:
            archs.append(f"sm_{major}{minor}")
    return archs


def get_gencode_flags():
    """Mirrors ``torch.cuda.get_gencode_flags``, from ``get_arch_list``."""
    return " ".join(f"-gencode compute=compute_{a[3:]},code=sm_{a[3:]}" for a in get_arch_list())


def is_bf16_supported(including_emulation=True):
    """Mirrors ``torch.cuda.is_bf16_supported``: compute capability 8 or more, or (with
    ``including_emulation``) a device bfloat16 tensors can be made on (any XLA device)."""
    if not is_available():
        return False
    if get_device_capability()[0] >= 8:
        return True
    return bool(including_emulation)


def is_tf32_supported():
    """Mirrors ``torch.cuda.is_tf32_supported``: native bfloat16 support (Ampere or later)."""
    return is_bf16_supported(including_emulation=False)


def current_stream(device=None):
    """Mirrors ``torch.cuda.current_stream`` (NOTE [ streams on XLA ])."""
    from .._streams import current
    return current(_jax_device(device), Stream)


def default_stream(device=None):
    """Mirrors ``torch.cuda.default_stream``."""
    from .._streams import default
    return default(_jax_device(device), Stream)


def set_stream(stream):
    """Mirrors ``torch.cuda.set_stream`` (None: no change)."""
    from .._streams import set_current
    if stream is not None:
        set_current(stream)


class StreamContext:
    """Mirrors ``torch.cuda.StreamContext``: ``stream`` current on its device in the block
    (None: no change)."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        if self.stream is not None:
            self.stream.__enter__()
        return self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            self.stream.__exit__(*exc)
        return False


def stream(stream):
    """Mirrors ``torch.cuda.stream``: a StreamContext."""
    return StreamContext(stream)


def __getattr__(name):
    if name == "default_generators":   # made when asked: creating nothing at import
        return tuple(random._generators())
    raise AttributeError(f"module 'torchlike.cuda' has no attribute '{name}'")


__all__ = ["BFloat16Tensor", "BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor", "Event",
           "FloatTensor", "HalfTensor", "IntTensor", "LongTensor", "OutOfMemoryError",
           "ShortTensor", "Stream",
           "StreamContext", "can_device_access_peer", "current_device", "current_stream",
           "default_stream", "device", "device_count", "device_of", "empty_cache",
           "get_arch_list", "get_device_capability", "get_device_name", "get_device_properties",
           "get_gencode_flags", "get_rng_state", "get_rng_state_all", "init", "initial_seed",
           "is_available", "is_bf16_supported", "is_initialized", "is_tf32_supported",
           "manual_seed", "manual_seed_all", "max_memory_allocated", "max_memory_cached",
           "max_memory_reserved", "mem_get_info", "memory_allocated", "memory_cached",
           "memory_reserved", "memory_stats", "memory_stats_as_nested_dict", "memory_summary",
           "reset_accumulated_memory_stats", "reset_max_memory_allocated",
           "reset_max_memory_cached", "reset_peak_memory_stats", "seed", "seed_all",
           "set_device", "set_rng_state", "set_rng_state_all", "set_stream", "stream",
           "synchronize"]
