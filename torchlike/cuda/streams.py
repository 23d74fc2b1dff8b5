"""Mirrors ``torch.cuda.streams``: ``Stream`` and ``Event`` of cuda devices (NOTE [ streams on
XLA ] in _streams.py)."""
from .. import _streams
from .._device import devices_of

__all__ = ["Event", "Stream"]


class Stream(_streams.Stream):
    """Mirrors ``torch.cuda.Stream``: a cuda device's work queue (the current device's by
    default); ``priority`` is kept, XLA has one queue per device."""

    _type = "cuda"

    def __init__(self, device=None, priority=0, **kwargs):
        if not devices_of("cuda"):
            raise RuntimeError("torch.cuda.Stream requires CUDA support")
        super().__init__(device, priority, **kwargs)

    def __repr__(self):
        return f"<torch.cuda.Stream device={self.device} stream_id={self.stream_id}>"


class Event(_streams.Event):
    """Mirrors ``torch.cuda.Event``: a mark in a cuda device's queue."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        if not devices_of("cuda"):
            raise RuntimeError("Tried to instantiate dummy base class Event")
        super().__init__(enable_timing=enable_timing, blocking=blocking,
                         interprocess=interprocess)

    def __repr__(self):
        return f"<torch.cuda.Event {'recorded' if self._mark is not None else 'uninitialized'}>"
