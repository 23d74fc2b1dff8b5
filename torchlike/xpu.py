"""torchlike.xpu: mirrors ``torch.xpu`` (Intel GPUs) where programs probe it.  jax reaches no
XPU devices here, so it answers as a PyTorch build without XPU does: ``is_available()`` False,
``device_count()`` 0, seeding a no-op, memory queries 0, and the functions that need a device
raise ``AssertionError("Torch not compiled with XPU enabled")``.  Where a jax plugin presents
devices as ``xpu`` (NOTE [ devices ] in _device.py), the functions act on them as torchlike.cuda's
do on GPUs."""
import collections

from . import _device_runtime as R, _random
from ._device import current_index, device as _device_cls, devices_of

__all__ = ["current_device", "device_count", "empty_cache", "get_device_name",
           "get_device_properties", "get_rng_state", "init", "initial_seed", "is_available",
           "is_bf16_supported", "is_initialized", "manual_seed", "manual_seed_all",
           "max_memory_allocated", "max_memory_reserved", "mem_get_info", "memory_allocated",
           "memory_reserved", "memory_stats", "reset_peak_memory_stats", "seed", "seed_all",
           "set_device", "set_rng_state", "synchronize"]


def is_available():
    """Mirrors ``torch.xpu.is_available``."""
    return bool(devices_of("xpu"))


def device_count():
    """Mirrors ``torch.xpu.device_count``."""
    return len(devices_of("xpu"))


def is_initialized():
    """Mirrors ``torch.xpu.is_initialized``: whether there are xpu devices in use."""
    return is_available()


def _jax_device(device=None):
    if not devices_of("xpu"):
        raise AssertionError("Torch not compiled with XPU enabled")
    return R.jax_device("xpu", R.device_index("xpu", device, optional=True))


def init():
    """Mirrors ``torch.xpu.init``."""
    _jax_device()


def current_device():
    """Mirrors ``torch.xpu.current_device``."""
    _jax_device()
    return current_index("xpu")


def set_device(device):
    """Mirrors ``torch.xpu.set_device``."""
    _jax_device()
    R.exchange("xpu", R.device_index("xpu", device))


def get_device_properties(device=None):
    """Mirrors ``torch.xpu.get_device_properties``."""
    return R.DeviceProperties(_jax_device(device))


def get_device_name(device=None):
    """Mirrors ``torch.xpu.get_device_name``."""
    return get_device_properties(device).name


def is_bf16_supported(including_emulation=True):
    """Mirrors ``torch.xpu.is_bf16_supported``: every XLA device computes bfloat16."""
    return is_available()


def synchronize(device=None):
    """Mirrors ``torch.xpu.synchronize``."""
    R.synchronize(_jax_device(device))


def _generator(device=None):
    jd = _jax_device(device)
    return _random.device_generator(_device_cls("xpu", devices_of("xpu").index(jd)))


def manual_seed(seed):
    """Mirrors ``torch.xpu.manual_seed``: the current xpu device's generator."""
    seed = int(seed)
    if devices_of("xpu"):
        _generator().manual_seed(seed)


def manual_seed_all(seed):
    """Mirrors ``torch.xpu.manual_seed_all``."""
    _random.manual_seed_all("xpu", int(seed))


def seed():
    """Mirrors ``torch.xpu.seed``."""
    if devices_of("xpu"):
        _generator().seed()


def seed_all():
    """Mirrors ``torch.xpu.seed_all``."""
    if devices_of("xpu"):
        manual_seed_all(_generator().seed())


def initial_seed():
    """Mirrors ``torch.xpu.initial_seed``."""
    return _generator().initial_seed()


def get_rng_state(device="xpu"):
    """Mirrors ``torch.xpu.get_rng_state``."""
    return _generator(device).get_state()


def set_rng_state(new_state, device="xpu"):
    """Mirrors ``torch.xpu.set_rng_state``."""
    if devices_of("xpu"):
        _generator(device).set_state(new_state)


def memory_stats(device=None):
    """Mirrors ``torch.xpu.memory_stats`` (NOTE [ device memory statistics ])."""
    if not devices_of("xpu"):
        return collections.OrderedDict()
    return R.memory_stats(_jax_device(device))


def memory_allocated(device=None):
    """Mirrors ``torch.xpu.memory_allocated``."""
    return memory_stats(device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device=None):
    """Mirrors ``torch.xpu.max_memory_allocated``."""
    return memory_stats(device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device=None):
    """Mirrors ``torch.xpu.memory_reserved``."""
    return memory_stats(device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device=None):
    """Mirrors ``torch.xpu.max_memory_reserved``."""
    return memory_stats(device).get("reserved_bytes.all.peak", 0)


def reset_peak_memory_stats(device=None):
    """Mirrors ``torch.xpu.reset_peak_memory_stats``."""
    R.reset_peak(_jax_device(device))


def mem_get_info(device=None):
    """Mirrors ``torch.xpu.mem_get_info``."""
    return R.mem_get_info(_jax_device(device))


def empty_cache():
    """Mirrors ``torch.xpu.empty_cache``: nothing to release (NOTE [ device memory
    statistics ])."""
