"""Mirrors ``torch.cuda.memory``: the memory statistics of the cuda devices (NOTE [ device
memory statistics ] in _device_runtime.py).  Without a GPU, queries answer 0 or an empty dict
and the rest raise, as in a CPU-only PyTorch."""
import collections
import warnings

from .. import _device_runtime as R
from .._device import devices_of

__all__ = ["empty_cache", "max_memory_allocated", "max_memory_cached", "max_memory_reserved",
           "mem_get_info", "memory_allocated", "memory_cached", "memory_reserved",
           "memory_stats", "memory_stats_as_nested_dict", "memory_summary",
           "reset_accumulated_memory_stats", "reset_max_memory_allocated",
           "reset_max_memory_cached", "reset_peak_memory_stats"]


def _jax_device(device):
    if not devices_of("cuda"):
        raise AssertionError("Torch not compiled with CUDA enabled")
    return R.jax_device("cuda", R.device_index("cuda", device, optional=True))


def memory_stats(device=None):
    """Mirrors ``torch.cuda.memory_stats``: the PyTorch keys XLA's statistics give
    (``allocated_bytes.all.current`` / ``.peak``, ``reserved_bytes.all.*``, ...)."""
    if not devices_of("cuda"):
        return collections.OrderedDict()
    return R.memory_stats(_jax_device(device))


def memory_stats_as_nested_dict(device=None):
    """Mirrors ``torch.cuda.memory_stats_as_nested_dict``."""
    nested = {}
    for key, value in memory_stats(device).items():
        *path, last = key.split(".")
        d = nested
        for part in path:
            d = d.setdefault(part, {})
        d[last] = value
    return nested


def memory_allocated(device=None):
    """Mirrors ``torch.cuda.memory_allocated``: bytes held by arrays on ``device``."""
    return memory_stats(device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device=None):
    """Mirrors ``torch.cuda.max_memory_allocated``: the peak since the start or the last
    ``reset_peak_memory_stats``."""
    return memory_stats(device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device=None):
    """Mirrors ``torch.cuda.memory_reserved``: bytes XLA's allocator holds for ``device``."""
    return memory_stats(device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device=None):
    """Mirrors ``torch.cuda.max_memory_reserved``."""
    return memory_stats(device).get("reserved_bytes.all.peak", 0)


def memory_cached(device=None):
    """Mirrors ``torch.cuda.memory_cached`` (renamed memory_reserved)."""
    warnings.warn("`torch.cuda.memory_cached` has been renamed to `torch.cuda.memory_reserved`",
                  FutureWarning, stacklevel=2)
    return memory_reserved(device)


def max_memory_cached(device=None):
    """Mirrors ``torch.cuda.max_memory_cached`` (renamed max_memory_reserved)."""
    warnings.warn("`torch.cuda.max_memory_cached` has been renamed to "
                  "`torch.cuda.max_memory_reserved`", FutureWarning, stacklevel=2)
    return max_memory_reserved(device)


def reset_peak_memory_stats(device=None):
    """Mirrors ``torch.cuda.reset_peak_memory_stats``: peaks start again from the current
    values."""
    R.reset_peak(_jax_device(device))


def reset_max_memory_allocated(device=None):
    """Mirrors ``torch.cuda.reset_max_memory_allocated`` (now reset_peak_memory_stats)."""
    warnings.warn("torch.cuda.reset_max_memory_allocated now calls "
                  "torch.cuda.reset_peak_memory_stats, which resets /all/ peak memory stats.",
                  FutureWarning, stacklevel=2)
    reset_peak_memory_stats(device)


def reset_max_memory_cached(device=None):
    """Mirrors ``torch.cuda.reset_max_memory_cached`` (now reset_peak_memory_stats)."""
    warnings.warn("torch.cuda.reset_max_memory_cached now calls "
                  "torch.cuda.reset_peak_memory_stats, which resets /all/ peak memory stats.",
                  FutureWarning, stacklevel=2)
    reset_peak_memory_stats(device)


def reset_accumulated_memory_stats(device=None):
    """Mirrors ``torch.cuda.reset_accumulated_memory_stats``: torchlike keeps no accumulated
    (allocated / freed totals) statistics, so there is nothing to reset."""
    _jax_device(device)


def mem_get_info(device=None):
    """Mirrors ``torch.cuda.mem_get_info``: (free, total) bytes of XLA's allocator on
    ``device`` (the host's memory for an emulated device)."""
    return R.mem_get_info(_jax_device(device))


def memory_summary(device=None, abbreviated=False):
    """Mirrors ``torch.cuda.memory_summary``: a table of the statistics torchlike has."""
    stats = memory_stats(device)
    label = str(R.device_index("cuda", device, optional=True)) if devices_of("cuda") else ""
    return R.memory_summary(stats, label, abbreviated)


def empty_cache():
    """Mirrors ``torch.cuda.empty_cache``: XLA returns an array's memory to its pool when the
    array dies and releases the pool only with the process, so there is nothing to do."""
