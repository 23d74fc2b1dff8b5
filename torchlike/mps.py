"""torchlike.mps: mirrors ``torch.mps`` (Apple GPUs) where programs probe it.  Without a jax
METAL device it answers as PyTorch does without the MPS backend: ``is_available()`` False,
``device_count()`` 0, ``manual_seed`` a no-op, and the functions that need the device raise
``RuntimeError("Cannot execute ...() without MPS backend.")``.  With METAL devices that
torchlike presents as ``mps`` (NOTE [ devices ] in _device.py), they act on the first one."""
from . import _device_runtime as R, _random
from ._device import device as _device_cls, devices_of
from .backends import mps as _backend

__all__ = ["current_allocated_memory", "device_count", "driver_allocated_memory",
           "empty_cache", "get_rng_state", "is_available", "manual_seed",
           "recommended_max_memory", "seed", "set_rng_state", "synchronize"]


def is_available():
    """Mirrors ``torch.mps.is_available``: whether jax has a METAL device."""
    return _backend.is_available()


def device_count():
    """Mirrors ``torch.mps.device_count``."""
    return len(devices_of("mps"))


def _jax_device(what):
    devs = devices_of("mps")
    if not devs:
        raise RuntimeError(f"Cannot execute {what}() without MPS backend.")
    return devs[0]


def _generator():
    _jax_device("getDefaultGenerator")
    return _random.device_generator(_device_cls("mps", 0))


def manual_seed(seed):
    """Mirrors ``torch.mps.manual_seed`` (a no-op without the device, as in PyTorch)."""
    seed = int(seed)
    if devices_of("mps"):
        _generator().manual_seed(seed)


def seed():
    """Mirrors ``torch.mps.seed``."""
    _generator().seed()


def get_rng_state(device="mps"):
    """Mirrors ``torch.mps.get_rng_state``."""
    return _generator().get_state()


def set_rng_state(new_state, device="mps"):
    """Mirrors ``torch.mps.set_rng_state``."""
    _generator().set_state(new_state)


def synchronize():
    """Mirrors ``torch.mps.synchronize``."""
    R.synchronize(_jax_device("deviceSynchronize"))


def current_allocated_memory():
    """Mirrors ``torch.mps.current_allocated_memory`` (NOTE [ device memory statistics ])."""
    return R.memory_stats(_jax_device("getCurrentAllocatedMemory"))["allocated_bytes.all.current"]


def driver_allocated_memory():
    """Mirrors ``torch.mps.driver_allocated_memory``: what the allocator holds."""
    return R.memory_stats(_jax_device("getDriverAllocatedMemory"))["reserved_bytes.all.current"]


def recommended_max_memory():
    """Mirrors ``torch.mps.recommended_max_memory``: the allocator's limit."""
    return R.mem_get_info(_jax_device("getRecommendedMaxMemory"))[1]


def empty_cache():
    """Mirrors ``torch.mps.empty_cache``: nothing to release (NOTE [ device memory
    statistics ])."""
    _jax_device("emptyCache")
