"""torchlike.accelerator: mirrors ``torch.accelerator`` -- the device-generic API new PyTorch
programs use first (``torch.accelerator.current_accelerator()``...).

The accelerator is jax's: ``cuda`` when jax has GPUs (or TORCHLIKE_CPU_AS_CUDA's emulated ones),
``xla`` (torch_xla's name) when it has TPUs, else none, and then each function answers as
PyTorch does without one.  Streams: NOTE [ streams on XLA ] in _streams.py; memory: NOTE
[ device memory statistics ] in _device_runtime.py.
"""
import warnings

from . import _device_runtime as R, _streams
from ._device import accelerator_type, current_index, device as _device_cls
from ._dtype import (bfloat16, bool_, complex64, complex128, float16, float32, float64, int8,
                     int16, int32, int64, uint8, uint16, uint32, uint64)

__all__ = ["current_accelerator", "current_device_idx", "current_device_index",
           "current_stream", "device_count", "device_index", "empty_cache", "empty_host_cache",
           "get_device_capability", "get_memory_info", "is_available", "max_memory_allocated",
           "max_memory_reserved", "memory_allocated", "memory_reserved", "memory_stats",
           "reset_accumulated_memory_stats", "reset_peak_memory_stats", "set_device_idx",
           "set_device_index", "set_stream", "synchronize"]

_NONE = "Cannot access accelerator device when none is available."


def current_accelerator(check_available=False):
    """Mirrors ``torch.accelerator.current_accelerator``: ``torchlike.device('cuda')`` (or
    'xla'), without an index, or None."""
    acc = accelerator_type()
    return None if acc is None else _device_cls(acc)


def device_count():
    """Mirrors ``torch.accelerator.device_count``."""
    acc = accelerator_type()
    return 0 if acc is None else R.count(acc)


def is_available():
    """Mirrors ``torch.accelerator.is_available``."""
    return device_count() > 0


def _acc():
    acc = accelerator_type()
    if acc is None:
        raise RuntimeError(_NONE)
    return acc


def _index(device, optional):
    """PyTorch's ``torch.accelerator._utils._get_device_index``."""
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    if isinstance(device, str):
        device = _device_cls(device)
    index = None
    if isinstance(device, _device_cls):
        acc = current_accelerator()
        if acc is None:
            raise RuntimeError("Accelerator expected")
        if acc.type != device.type:
            raise ValueError(f"{device.type} doesn't match the current accelerator {acc}.")
        index = device.index
    if index is None:
        if not optional:
            raise ValueError(f"Expected a torch.device with a specified index or an integer, "
                             f"but got:{device}")
        return current_device_index()
    return index


def _jax_device(device):
    acc = _acc()
    return R.jax_device(acc, _index(device, optional=True))


def current_device_index():
    """Mirrors ``torch.accelerator.current_device_index``."""
    return current_index(_acc())


def current_device_idx():
    """Mirrors ``torch.accelerator.current_device_idx`` (deprecated for current_device_index)."""
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_index(device, /):
    """Mirrors ``torch.accelerator.set_device_index``; a negative index does nothing."""
    index = _index(device, optional=False)
    if index >= 0:
        R.exchange(_acc(), index)


def set_device_idx(device, /):
    """Mirrors ``torch.accelerator.set_device_idx`` (deprecated for set_device_index)."""
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    set_device_index(device)


class device_index:
    """Mirrors ``torch.accelerator.device_index``: the device ``device`` current in the block
    (None: no change)."""

    def __init__(self, device, /):
        self.idx = device
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None:
            self.prev_idx = R.exchange(_acc(), self.idx)

    def __exit__(self, *exc):
        if self.idx is not None:
            R.exchange(_acc(), self.prev_idx)


def synchronize(device=None, /):
    """Mirrors ``torch.accelerator.synchronize``: wait for the work queued on the device."""
    R.synchronize(_jax_device(device))


def current_stream(device=None, /):
    """Mirrors ``torch.accelerator.current_stream``."""
    return _streams.current(_jax_device(device))


def set_stream(stream):
    """Mirrors ``torch.accelerator.set_stream``: ``stream`` current, and its device too."""
    if not isinstance(stream, _streams.Stream):
        raise TypeError(f"set_stream(): argument 'stream' must be torch.Stream, not "
                        f"{type(stream).__name__}")
    R.exchange(stream.device.type, stream.device_index)
    _streams.set_current(stream)


_DTYPES = frozenset((bool_, uint8, uint16, uint32, uint64, int8, int16, int32, int64, float16,
                     bfloat16, float32, float64, complex64, complex128))


def get_device_capability(device=None, /):
    """Mirrors ``torch.accelerator.get_device_capability``: ``{"supported_dtypes": ...}``, every
    dtype torchlike has (XLA computes each on every device)."""
    _jax_device(device)
    return {"supported_dtypes": set(_DTYPES)}


# --- memory -------------------------------------------------------------------------------------

def memory_stats(device_index=None, /):
    """Mirrors ``torch.accelerator.memory_stats``."""
    return R.memory_stats(_jax_device(device_index))


def memory_allocated(device_index=None, /):
    """Mirrors ``torch.accelerator.memory_allocated``."""
    return memory_stats(device_index).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device_index=None, /):
    """Mirrors ``torch.accelerator.max_memory_allocated``."""
    return memory_stats(device_index).get("allocated_bytes.all.peak", 0)


def memory_reserved(device_index=None, /):
    """Mirrors ``torch.accelerator.memory_reserved``."""
    return memory_stats(device_index).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device_index=None, /):
    """Mirrors ``torch.accelerator.max_memory_reserved``."""
    return memory_stats(device_index).get("reserved_bytes.all.peak", 0)


def reset_peak_memory_stats(device_index=None, /):
    """Mirrors ``torch.accelerator.reset_peak_memory_stats``."""
    R.reset_peak(_jax_device(device_index))


def reset_accumulated_memory_stats(device_index=None, /):
    """Mirrors ``torch.accelerator.reset_accumulated_memory_stats``: torchlike keeps no
    accumulated statistics, so there is nothing to reset."""
    _jax_device(device_index)


def get_memory_info(device_index=None, /):
    """Mirrors ``torch.accelerator.get_memory_info``: (free, total) bytes."""
    return R.mem_get_info(_jax_device(device_index))


def empty_cache():
    """Mirrors ``torch.accelerator.empty_cache``: nothing to release (NOTE [ device memory
    statistics ])."""
    _acc()


def empty_host_cache():
    """Mirrors ``torch.accelerator.empty_host_cache``: torchlike keeps no host cache."""
    _acc()

