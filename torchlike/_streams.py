"""Streams and events: mirrors ``torch.Stream`` and ``torch.Event`` (``torch.cuda.Stream`` /
``Event`` are these for cuda devices).

NOTE [ streams on XLA ]
XLA runs each device's programs in the order they were queued, on one queue per device, so
every torchlike Stream of a device names that queue: ``current_stream()``, ``default_stream()``
and ``Stream()`` differ as objects (PyTorch's stream ids) but order work the same way, and a
program queued under ``with stream(s):`` runs where it would have without.  What PyTorch
programs ask of streams still holds: ``wait_stream`` / ``wait_event`` order work that XLA already
orders, so they return at once; ``synchronize`` and ``query`` wait for / look at everything
queued on the device.  An Event marks the device's queue when recorded: it queues a tiny program
there, done exactly when everything queued before it is.  ``synchronize`` waits for that mark,
``query`` looks at it, and with ``enable_timing`` a helper thread notes the time the mark
completes, so ``elapsed_time`` measures the device's time between two records without making
``record`` wait.  Its resolution is a thread's wake-up (tens of microseconds), not CUDA's.
"""
import concurrent.futures
import functools
import itertools
import time

import jax
import jax.numpy as jnp

from . import _device_runtime as R, _lazy
from ._device import device as _device_cls, from_jax_device

_ids = itertools.count(1)
_current = {}   # jax device -> the current Stream on it
_timer = []     # the one helper thread that notes when timed events complete


class Stream:
    """Mirrors ``torch.Stream``: a device's work queue (NOTE [ streams on XLA ])."""

    _type = None   # a device type the constructor requires (torch.cuda.Stream: 'cuda')

    def __init__(self, device=None, priority=0, **kwargs):
        self._jd = _resolve(self._type, device)
        self.device = from_jax_device(self._jd)
        self.priority = priority
        self.stream_id = kwargs.get("stream_id", 0 if self.device.type == "cpu" else next(_ids))

    @property
    def device_index(self):
        return -1 if self.device.index is None else self.device.index

    @property
    def device_type(self):
        return self.device.type

    def query(self):
        """Whether all work queued on the device is done."""
        return R.idle(self._jd)

    def synchronize(self):
        """Wait until all work queued on the device is done."""
        R.synchronize(self._jd)

    def wait_event(self, event):
        """Order later work after ``event``: XLA's queue already does."""

    def wait_stream(self, stream):
        """Order later work after ``stream``'s: XLA's queue already does."""

    def record_event(self, event=None):
        """Record ``event`` (a new Event if None) on this stream; returns it."""
        event = Event() if event is None else event
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream) and (self._jd, self.stream_id) == (other._jd,
                                                                            other.stream_id)

    def __hash__(self):
        return hash((self._jd, self.stream_id))

    def __enter__(self):
        self._previous = _current.get(self._jd)
        _current[self._jd] = self
        return self

    def __exit__(self, *exc):
        _current[self._jd] = self._previous

    def __repr__(self):
        return (f"torch.Stream device_type={self.device.type}, device_index={self.device_index}, "
                f"stream_id={self.stream_id}")


def _resolve(type, device):
    """The jax device of a stream's ``device`` argument (None: the current device of ``type``,
    or of the accelerator)."""
    from ._device import accelerator_type
    kind = type or accelerator_type() or "cpu"
    if device is None or isinstance(device, int):
        index = R.device_index(kind, device, optional=True)
        return R.jax_device(kind, index)
    d = _device_cls(device) if isinstance(device, str) else device
    if type is not None and d.type != type:
        raise ValueError(f"Expected a {type} device, but got: {d}")
    return R.jax_device(d.type, R.device_index(d.type, d, optional=True))


def current(jd, cls=Stream):
    """The current stream of jax device ``jd`` (its default one unless one was made current)."""
    s = _current.get(jd)
    return s if s is not None else default(jd, cls)


@functools.lru_cache(maxsize=None)
def default(jd, cls=Stream):
    """The default stream (id 0) of jax device ``jd``."""
    s = cls.__new__(cls)
    s._jd, s.device, s.priority, s.stream_id = jd, from_jax_device(jd), 0, 0
    return s


def set_current(stream):
    _current[stream._jd] = stream


# --- events -------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _mark_program(jd):
    return jax.jit(lambda: jnp.zeros((), jnp.int32),
                   out_shardings=jax.sharding.SingleDeviceSharding(jd))


def mark(jd):
    """A mark in jax device ``jd``'s queue: an array ready exactly when everything queued there
    before it is (ops recorded lazily and not run yet are queued first)."""
    _lazy.flush()
    return _mark_program(jd)()


def _completed_at(mark):
    mark.block_until_ready()
    return time.perf_counter()


class Event:
    """Mirrors ``torch.Event``: a mark in a device's queue (NOTE [ streams on XLA ])."""

    def __init__(self, device=None, *, enable_timing=False, blocking=False, interprocess=False):
        self.device = None if device is None else _device_cls(device)
        self.enable_timing = enable_timing
        self.blocking = blocking
        self.interprocess = interprocess
        self._mark = self._time = None

    def record(self, stream=None):
        """Mark the queue of ``stream``'s device (the current stream's if None)."""
        if stream is None:
            stream = self._current_stream()
        if stream.device.type == "cpu":
            raise RuntimeError("cpu backend doesn't support events.")
        self.device = stream.device
        self._mark = mark(stream._jd)
        self._time = None
        if self.enable_timing:
            if not _timer:
                _timer.append(concurrent.futures.ThreadPoolExecutor(1, "torchlike-events"))
            self._time = _timer[0].submit(_completed_at, self._mark)

    def _current_stream(self):
        from ._device import accelerator_type
        kind = self.device.type if self.device is not None else accelerator_type() or "cpu"
        return current(R.jax_device(kind, R.device_index(kind, self.device, optional=True)))

    def query(self):
        """Whether the work before the mark is done (True if never recorded, as PyTorch)."""
        return self._mark is None or self._mark.is_ready()

    def synchronize(self):
        """Wait for the work before the mark."""
        if self._mark is not None:
            self._mark.block_until_ready()

    def wait(self, stream=None):
        """Make ``stream`` wait for the mark: XLA's queue already orders it."""

    def elapsed_time(self, end_event):
        """Milliseconds between this event's mark and ``end_event``'s, both recorded with
        ``enable_timing=True``."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self._mark is None or end_event._mark is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return (end_event._time.result() - self._time.result()) * 1000.0

    def __repr__(self):
        d = self.device
        index = -1 if d is None or d.index is None else d.index
        return (f"torch.Event device_type={getattr(d, 'type', 'cpu')}, device_index={index}, "
                f"event_flag={int(self.enable_timing)}")
