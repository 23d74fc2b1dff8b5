"""``torch.cpu``: PyTorch's helpers for device-agnostic code on the CPU, and its ``amp`` aliases.

PyTorch's CPU ops have finished when they return, so PyTorch's ``torch.cpu.synchronize``,
streams and events do nothing.  torchlike's CPU programs are queued (NOTE [ asynchronous CPU
dispatch ] in _settings.py), so ``synchronize`` waits for the work queued on the CPU and an Event
marks that queue (as on a GPU, NOTE [ streams on XLA ] in _streams.py): a loop timed with
``torch.cpu.synchronize()`` measures its arithmetic, as a CUDA loop timed with
``torch.cuda.synchronize()`` does.  Not here: ``get_capabilities`` (the CPU's instruction sets,
caches and cores).
"""
from .. import _device_runtime as R
from .. import _streams
from .._device import devices_of
from ..cuda import StreamContext as _StreamContext
from . import amp as amp

__all__ = ["is_available", "is_initialized", "synchronize", "current_device", "current_stream",
           "stream", "set_device", "device_count", "Stream", "StreamContext", "Event"]


def _cpu():
    """The jax device of the current CPU device."""
    return R.jax_device("cpu", R.device_index("cpu", None, optional=True))


def is_available():
    """Mirrors ``torch.cpu.is_available``: always True."""
    return True


def is_initialized():
    """Mirrors ``torch.cpu.is_initialized``: always True."""
    return True


def device_count():
    """Mirrors ``torch.cpu.device_count``: one CPU device (not a count of cores)."""
    return 1


def current_device():
    """Mirrors ``torch.cpu.current_device``: always ``'cpu'``."""
    return "cpu"


def set_device(device):
    """Mirrors ``torch.cpu.set_device``: there is one CPU device, so nothing changes."""


def synchronize(device=None):
    """Mirrors ``torch.cpu.synchronize``: wait for the work queued on the CPU (``device`` is
    ignored, as PyTorch ignores it; with several jax CPU devices, on every one)."""
    for jd in devices_of("cpu"):
        R.synchronize(jd)


class Stream(_streams.Stream):
    """Mirrors ``torch.cpu.Stream``: the CPU's work queue (NOTE [ streams on XLA ])."""

    _type = "cpu"

    def __init__(self, priority=-1):
        super().__init__("cpu", priority)

    def record_event(self):
        """Mirrors ``torch.cpu.Stream.record_event``, which records nothing and returns None
        (``torch.cpu.Event().record()`` marks the queue)."""


class StreamContext(_StreamContext):
    """Mirrors ``torch.cpu.StreamContext``: ``stream`` current in the block (None: no
    change); ``with`` binds None, as PyTorch's does."""

    def __enter__(self):
        super().__enter__()


def current_stream(device=None):
    """Mirrors ``torch.cpu.current_stream`` (``device`` is ignored)."""
    return _streams.current(_cpu(), Stream)


def stream(stream):
    """Mirrors ``torch.cpu.stream``: a StreamContext."""
    return StreamContext(stream)


class Event(_streams.Event):
    """Mirrors ``torch.cpu.Event``: a mark in the CPU's queue, done when the work queued
    before it is (``query``, ``synchronize`` and ``wait`` as ``torch.Event``'s)."""

    def __init__(self):
        super().__init__("cpu")

    def record(self, stream=None):
        """Mark the CPU's queue (where ``torch.Event`` refuses a CPU stream)."""
        self._mark = _streams.mark(_cpu())
