"""What ``torchlike.cuda``, ``accelerator``, ``xpu`` and ``mps`` share: PyTorch's rules for a
device argument, the current device of a type, waiting for a device, its properties, and its
memory statistics -- answered from jax's devices.

NOTE [ device memory statistics ]
Where the backend reports them (``jax.Device.memory_stats()``: GPUs and TPUs), the numbers are
XLA's allocator's: allocated = ``bytes_in_use``, reserved = ``pool_bytes`` (the pool XLA took
from the device; by default it preallocates most of the memory at its first use) or, without a
pool, ``bytes_reserved``; limit = ``bytes_limit``.  XLA's peak counters cannot be reset, so
after ``reset_peak_memory_stats`` the peak is XLA's peak when that has grown since the reset (the
new peak is then exactly it), else the largest value a memory query has seen since.  Where the
backend reports nothing (XLA's CPU devices, hence TORCHLIKE_CPU_AS_CUDA's emulated GPUs), the
allocated bytes are the sum of the live jax arrays' shards on the device (``jax.live_arrays()``),
reserved equals allocated (there is no pool), the peak is the largest value queries have seen,
and the limit is the host's physical memory.  ``empty_cache`` has nothing to release: XLA
returns an array's memory to its pool when the array dies, and keeps the pool.
"""
import collections
import math
import os

import jax

from . import _lazy
from ._device import (current_index, device as _device_cls, devices_of, set_current_index,
                      to_jax_device)

# --- device arguments ---------------------------------------------------------------------------


def device_index(type, device, optional=False):
    """PyTorch's ``_get_device_index`` for a ``type`` namespace (``torch.cuda``...): an int is an
    index, a device string or torch.device must be of ``type``; None (with ``optional``) or a
    device without an index means the current one."""
    if isinstance(device, str):
        device = _device_cls(device)
    index = None
    if isinstance(device, _device_cls):
        if device.type != type:
            raise ValueError(f"Expected a {type} device, but got: {device}")
        index = device.index
    elif isinstance(device, int) and not isinstance(device, bool):
        index = device
    elif device is not None and hasattr(device, "idx"):   # a torch.cuda.device context
        index = device.idx
    if index is None:
        if not optional:
            raise ValueError(f"Expected a torch.device with a specified index or an integer, "
                             f"but got:{device}")
        return current_index(type)
    return index


def jax_device(type, index):
    """The jax device behind ``type:index``."""
    return to_jax_device(_device_cls(type, index))


def count(type):
    return len(devices_of(type))


def exchange(type, index):
    """Make ``index`` current for ``type`` (a negative one changes nothing); returns the index
    that was current."""
    previous = current_index(type)
    if index >= 0:
        jax_device(type, index)   # PyTorch refuses an index past the devices
        set_current_index(type, index)
    return previous


def is_emulated(jd):
    """Whether jax device ``jd`` is a CPU presented as an accelerator (TORCHLIKE_CPU_AS_CUDA)."""
    return jd.platform == "cpu"


# --- waiting for a device -----------------------------------------------------------------------

def on_device(jd):
    """The live jax arrays with a shard on ``jd``."""
    return [a for a in jax.live_arrays() if jd in a.devices()]


def synchronize(jd):
    """Wait until the work queued on ``jd`` is done: XLA runs a device's programs in the order
    they were queued, so it is done when every live array on it is ready.  Ops recorded in
    lazy mode and not run yet are queued first (NOTE [ lazy segments ] in _lazy.py)."""
    _lazy.flush()
    for a in on_device(jd):
        a.block_until_ready()


def idle(jd):
    """Whether the work queued on ``jd`` is done (without waiting); ops recorded lazily are
    queued first."""
    _lazy.flush()
    return all(a.is_ready() for a in on_device(jd))


# --- properties ---------------------------------------------------------------------------------

def host_memory():
    """(available, total) bytes of the host's physical memory."""
    page = os.sysconf("SC_PAGE_SIZE")
    return os.sysconf("SC_AVPHYS_PAGES") * page, os.sysconf("SC_PHYS_PAGES") * page


def capability(jd):
    """(major, minor) of a GPU's compute capability as jax reports it; (0, 0) for an emulated
    device or one that reports none."""
    cc = getattr(jd, "compute_capability", None)
    if isinstance(cc, str) and "." in cc:
        major, minor = cc.split(".")[:2]
        return int(major), int(minor)
    if isinstance(cc, (tuple, list)) and len(cc) >= 2:
        return int(cc[0]), int(cc[1])
    return 0, 0


class DeviceProperties:
    """Mirrors ``torch.cuda._CudaDeviceProperties`` as far as jax's devices tell: ``name``
    (``device_kind``), ``major`` / ``minor`` (compute capability), ``total_memory`` (XLA's
    allocator limit, the host's memory for an emulated device), ``multi_processor_count`` (the
    GPU's ``core_count``; CPU cores for an emulated device)."""

    def __init__(self, jd):
        emulated = is_emulated(jd)
        self.name = f"{jd.device_kind} (TORCHLIKE_CPU_AS_CUDA)" if emulated else jd.device_kind
        self.major, self.minor = capability(jd)
        stats = None if emulated else jd.memory_stats()
        self.total_memory = (stats or {}).get("bytes_limit") or host_memory()[1]
        self.multi_processor_count = (os.cpu_count() if emulated
                                      else getattr(jd, "core_count", None) or 0)
        self.is_integrated = False
        self.is_multi_gpu_board = False

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // (1 << 20)}MB, "
                f"multi_processor_count={self.multi_processor_count})")


# --- memory (NOTE [ device memory statistics ]) -------------------------------------------------

_peaks = {}   # jax device -> {"allocated": seen peak, "reserved": ..., "xla_allocated": XLA's
#                                   peak at the last reset, "xla_reserved": ...}


def _bytes_on(jd):
    """Bytes of the live arrays' buffers on ``jd``, each buffer once (two jax Arrays can share
    one: a shard's ``.data``, an array and its donated alias)."""
    total, seen = 0, set()
    for a in jax.live_arrays():
        if a.is_deleted() or jd not in a.devices():
            continue
        if len(a.devices()) > 1:   # a shard of a sharded (or replicated) array
            total += math.prod(a.sharding.shard_shape(a.shape)) * a.dtype.itemsize
            continue
        pointer = a.unsafe_buffer_pointer()
        if pointer not in seen:
            seen.add(pointer)
            total += a.nbytes
    return total


def memory_stats(jd):
    """PyTorch's memory_stats keys (those XLA's numbers give) for jax device ``jd``."""
    stats = jd.memory_stats()
    peaks = _peaks.setdefault(jd, {"allocated": 0, "reserved": 0})
    out = {}
    if stats:
        allocated = stats.get("bytes_in_use", 0)
        reserved = stats.get("pool_bytes", stats.get("bytes_reserved", allocated)) or allocated
        peak_allocated = _peak(peaks, "allocated", allocated, stats.get("peak_bytes_in_use"))
        peak_reserved = _peak(peaks, "reserved", reserved,
                              stats.get("peak_pool_bytes", stats.get("peak_bytes_reserved")))
        if "num_allocs" in stats:
            out["allocation.all.allocated"] = stats["num_allocs"]
        if "largest_alloc_size" in stats:
            out["largest_alloc_size"] = stats["largest_alloc_size"]
    else:
        allocated = reserved = _bytes_on(jd)
        peak_allocated = _peak(peaks, "allocated", allocated, None)
        peak_reserved = _peak(peaks, "reserved", reserved, None)
    for key, current, peak in (("allocated_bytes", allocated, peak_allocated),
                               ("active_bytes", allocated, peak_allocated),
                               ("requested_bytes", allocated, peak_allocated),
                               ("reserved_bytes", reserved, peak_reserved)):
        out[f"{key}.all.current"] = current
        out[f"{key}.all.peak"] = peak
    return collections.OrderedDict(sorted(out.items()))


def _peak(peaks, name, current, xla_peak):
    seen = max(peaks[name], current)
    peaks[name] = seen
    base = peaks.get("xla_" + name)
    if xla_peak is None:
        return seen
    if base is None or xla_peak > base:   # never reset, or a new peak since: XLA's is exact
        return xla_peak
    return seen


def reset_peak(jd):
    stats = jd.memory_stats() or {}
    current = memory_stats(jd)
    _peaks[jd] = {"allocated": current["allocated_bytes.all.current"],
                  "reserved": current["reserved_bytes.all.current"],
                  "xla_allocated": stats.get("peak_bytes_in_use"),
                  "xla_reserved": stats.get("peak_pool_bytes", stats.get("peak_bytes_reserved"))}
    for k in ("xla_allocated", "xla_reserved"):
        if _peaks[jd][k] is None:
            del _peaks[jd][k]


def mem_get_info(jd):
    """(free, total) bytes: XLA's allocator limit and what it can still hand out, or the
    host's memory for a device that reports no statistics."""
    stats = jd.memory_stats()
    if stats and "bytes_limit" in stats:
        return stats["bytes_limit"] - stats.get("bytes_in_use", 0), stats["bytes_limit"]
    return host_memory()


def memory_summary(stats, device_label, abbreviated=False):
    """PyTorch's memory_summary table for the statistics torchlike has (current and peak)."""
    def size(n):
        for unit in ("B  ", "KiB", "MiB", "GiB", "TiB"):
            if abs(n) < 1024 or unit == "TiB":
                return f"{n:6d} {unit}" if unit == "B  " else f"{n:6.0f} {unit}"
            n /= 1024
    rule = "|" + "=" * 75 + "|"
    line = "|" + "-" * 75 + "|"
    rows = [rule,
            "|                  PyTorch CUDA memory summary, device ID "
            + f"{device_label:<18s}|",
            line,
            "|            CUDA OOMs: 0            |        cudaMalloc retries: 0         |",
            rule,
            "|        Metric         | Cur Usage  | Peak Usage |                         |",
            line]
    for title, key in (("Allocated memory", "allocated_bytes"), ("Active memory", "active_bytes"),
                       ("Requested memory", "requested_bytes"),
                       ("GPU reserved memory", "reserved_bytes")):
        cur, peak = stats[f"{key}.all.current"], stats[f"{key}.all.peak"]
        rows.append(f"| {title:<22s}| {size(cur)} | {size(peak)} |"
                    + " " * 25 + "|")
        if not abbreviated:
            rows.append(line)
    if abbreviated:
        rows.append(line)
    rows.append(rule)
    return "\n".join(rows) + "\n"
