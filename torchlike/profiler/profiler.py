"""torchlike.profiler.profile and its schedule (mirrors torch.profiler.profiler).

The host side (ops, backward nodes, ranges) is autograd.profiler's recorder (NOTE [ profiler
hook ] there); this module adds PyTorch's activities, step schedule, trace handler and the
device-side trace.

NOTE [ device trace ]
PyTorch's profiler asks Kineto for the accelerator's kernels when ``activities`` holds a device
activity (``ProfilerActivity.CUDA``, ``XPU``...).  torchlike asks ``jax.profiler`` instead: when
``activities`` holds any activity other than CPU (the default where jax has a GPU, as PyTorch's
default holds CUDA where CUDA is available), each recording window also runs
``jax.profiler.start_trace`` / ``stop_trace``, which writes XLA's own trace (``*.xplane.pb``,
``*.trace.json.gz``: every program's launches and the device's kernels) under
``<dir>/plugins/profile/<run>/``, the layout TensorBoard's profile plugin reads.  ``<dir>`` is
the ``tensorboard_trace_handler``'s directory when that is the ``on_trace_ready`` handler (so
TensorBoard shows both traces of a run), else a fresh temporary directory; either way
``prof.device_trace_dir`` names it.  On a CPU-only machine the trace still records the CPU
client's programs.  The table's device columns stay empty: the kernels' times are in that trace,
not attributed back to torchlike's ops.
"""
import enum
import os
import socket
import tempfile
import time
import warnings
from functools import partial

import jax

from ..autograd import profiler as prof
from ..autograd.profiler_util import EventList

__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler",
           "ProfilerAction", "ProfilerActivity", "kineto_available"]

PROFILER_STEP_NAME = "ProfilerStep"
_warned_clears = False   # PyTorch warns once per process that windows do not keep events


class ProfilerActivity(enum.Enum):
    """Mirrors ``torch.profiler.ProfilerActivity``: what a profile records (CPU: torchlike's
    ops and ranges; any other: jax's device trace, NOTE [ device trace ])."""
    CPU = 0
    XPU = 1
    CUDA = 2
    HPU = 3
    MTIA = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    """Mirrors ``torch.profiler.ProfilerAction``: what the profiler does at a step."""
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


def supported_activities():
    """Mirrors ``torch.profiler.supported_activities``: CPU, and CUDA where jax has a GPU.

    Returns:
        set of ProfilerActivity.
    """
    activities = {ProfilerActivity.CPU}
    if any(d.platform in ("gpu", "cuda", "rocm") for d in jax.devices()):
        activities.add(ProfilerActivity.CUDA)
    return activities


def kineto_available():
    """Mirrors ``torch.profiler.kineto_available``: True, the profiler API PyTorch builds on
    Kineto (``profile``, ``schedule``, traces) is available (over jax.profiler)."""
    return True


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """Mirrors ``torch.profiler.schedule``: a function from the step number to the action.

    After ``skip_first`` steps, cycles of ``wait`` steps doing nothing, ``warmup`` steps
    warming up and ``active`` steps recording (the last of them RECORD_AND_SAVE, when
    ``on_trace_ready`` runs), ``repeat`` cycles (0: forever).  ``skip_first_wait`` skips the
    first cycle's wait.

    Returns:
        callable: ``step -> ProfilerAction``.

    Example::

        >>> sched = torchlike.profiler.schedule(wait=1, warmup=1, active=2)
        >>> [sched(i).name for i in range(4)]
        ['NONE', 'WARMUP', 'RECORD', 'RECORD_AND_SAVE']
    """
    def schedule_fn(step):
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        cycle = wait + warmup + active
        if repeat > 0 and step / cycle >= repeat:
            return ProfilerAction.NONE
        at = step % cycle
        if at < wait:
            return ProfilerAction.NONE
        if at < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if at < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} "
            f"(need >= 0), active={active} (need > 0), repeat={repeat} (need >= 0), "
            f"skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=2)
    return schedule_fn


def _default_schedule_fn(_):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False,
                              use_python_export=False):
    """Mirrors ``torch.profiler.tensorboard_trace_handler``: an ``on_trace_ready`` handler that
    writes each window's chrome trace to ``dir_name/<worker_name>.<time_ns>.pt.trace.json``
    (``.gz`` with ``use_gzip``); ``worker_name`` defaults to ``<hostname>_<pid>``.  A device
    trace goes under the same directory (NOTE [ device trace ]).

    Returns:
        callable: ``handler(prof)``.
    """
    def handler_fn(p):
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{worker_name}.{time.time_ns()}.pt.trace.json"
        if use_gzip:
            file_name += ".gz"
        p.export_chrome_trace(os.path.join(dir_name, file_name))

    handler_fn._trace_dir = dir_name
    return handler_fn


class _KinetoProfile:
    """Mirrors ``torch.profiler._KinetoProfile``: the recording without a schedule
    (``start`` / ``stop``), the events, the table and the traces."""

    def __init__(self, *, activities=None, record_shapes=False, profile_memory=False,
                 with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False,
                 custom_trace_id_callback=None):
        self.activities = set(activities) if activities else supported_activities()
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.experimental_config = experimental_config
        self.execution_trace_observer = execution_trace_observer
        self.acc_events = acc_events
        self.custom_trace_id_callback = custom_trace_id_callback
        self.profiler = None
        self.device_trace_dir = None
        self._device_tracing = False
        device = [a for a in self.activities if a is not ProfilerActivity.CPU]
        self.use_device = "cuda" if ProfilerActivity.CUDA in device else (
            device[0].name.lower() if device else None)

    def start(self):
        """Start recording."""
        self.prepare_trace()
        self.start_trace()

    def stop(self):
        """Stop recording."""
        self.stop_trace()

    def prepare_trace(self):
        """A fresh recorder for the next window (PyTorch: Kineto's warm-up), or the same one
        with ``acc_events``, which keeps every window's events."""
        global _warned_clears
        if self.profiler is not None and not self.acc_events and not _warned_clears:
            _warned_clears = True
            warnings.warn("Warning: Profiler clears events at the end of each cycle. Only events "
                          "from the current cycle will be reported. To keep events across "
                          "cycles, set acc_events=True.", stacklevel=2)
        if self.profiler is None or not self.acc_events:
            self.profiler = prof.profile(
                use_device=self.use_device, record_shapes=self.record_shapes,
                with_flops=self.with_flops, profile_memory=self.profile_memory,
                with_stack=self.with_stack, with_modules=self.with_modules,
                use_cpu=ProfilerActivity.CPU in self.activities, acc_events=self.acc_events)

    def start_trace(self):
        """Begin the recording window (and the device trace: NOTE [ device trace ])."""
        if self.profiler is None:
            self.prepare_trace()
        if self.profiler.use_cpu:
            self.profiler._start()
        if self.use_device is not None:
            directory = getattr(getattr(self, "on_trace_ready", None), "_trace_dir", None)
            self.device_trace_dir = directory or tempfile.mkdtemp(prefix="torchlike_trace_")
            try:
                jax.profiler.start_trace(self.device_trace_dir)
            except BaseException:   # (a jax trace of the user's own is running): nothing kept
                if self.profiler._recorder is not None:
                    self.profiler._stop()
                raise
            self._device_tracing = True

    def stop_trace(self):
        """End the recording window."""
        if self._device_tracing:
            self._device_tracing = False
            jax.profiler.stop_trace()
        if self.profiler is not None and self.profiler._recorder is not None:
            self.profiler._stop()
        elif self.profiler is not None and self.profiler.function_events is None:
            self.profiler.function_events = EventList(use_device=self.use_device)

    def events(self):
        """Mirrors ``_KinetoProfile.events``: the recorded events (an EventList)."""
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before getting events")
        return self.profiler.function_events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        """Mirrors ``_KinetoProfile.key_averages``: the events averaged by name (and input
        shapes / stack when asked): ``.table(sort_by=, row_limit=)`` prints them."""
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before getting key averages")
        return self.profiler.key_averages(group_by_input_shape, group_by_stack_n,
                                          group_by_overload_name)

    def export_chrome_trace(self, path, use_python_export=False):
        """Mirrors ``_KinetoProfile.export_chrome_trace``: the recorded events as a Trace Event
        Format JSON file (Perfetto, chrome://tracing); gzipped when ``path`` ends in ``.gz``."""
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before exporting chrome trace")
        return self.profiler.export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Mirrors ``_KinetoProfile.export_stacks``: the events' stacks (``with_stack=True``)
        in the folded format flame-graph tools read."""
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before exporting stacks")
        return self.profiler.function_events.export_stacks(path, metric)

    def add_metadata(self, key, value):
        """Mirrors ``_KinetoProfile.add_metadata``: a key-value pair in the trace's top level."""
        self._metadata()[key] = value

    def add_metadata_json(self, key, value):
        """Mirrors ``_KinetoProfile.add_metadata_json``: ``value`` is JSON text."""
        import json
        self._metadata()[key] = json.loads(value)

    def _metadata(self):
        events = self.events()
        if events is None:
            raise RuntimeError("Profiler didn't finish running")
        return events._trace_meta


class profile(_KinetoProfile):
    """Mirrors ``torch.profiler.profile``: records torchlike's ops, backward nodes and ranges
    (and jax's device trace for device activities) over the steps its ``schedule`` selects.

    Args:
        activities: ProfilerActivity values (default: ``supported_activities()``); CPU records
            the host events, any other the device trace (NOTE [ device trace ]).
        schedule: ``step -> ProfilerAction`` (``torchlike.profiler.schedule``); default: record
            every step.
        on_trace_ready: called with the profiler at the end of each recording cycle.
        record_shapes, profile_memory, with_stack, with_flops: as the legacy
            ``torchlike.autograd.profiler.profile``.

    Example::

        >>> with torchlike.profiler.profile(record_shapes=True) as p:
        ...     torchlike.randn(8, 8) @ torchlike.randn(8, 8)
        >>> print(p.key_averages().table(sort_by="cpu_time_total", row_limit=10))
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, use_cuda=None, custom_trace_id_callback=None):
        activities_set = set(activities) if activities is not None else supported_activities()
        if use_cuda is not None:
            warnings.warn("`use_cuda` is deprecated, use `activities` argument instead",
                          FutureWarning, stacklevel=2)
            if use_cuda:
                activities_set.add(ProfilerActivity.CUDA)
            else:
                activities_set.discard(ProfilerActivity.CUDA)
        if not activities_set:
            raise AssertionError("No valid profiler activities found")
        self.on_trace_ready = on_trace_ready
        super().__init__(activities=activities_set, record_shapes=record_shapes,
                         profile_memory=profile_memory, with_stack=with_stack,
                         with_flops=with_flops, with_modules=with_modules,
                         experimental_config=experimental_config,
                         execution_trace_observer=execution_trace_observer,
                         acc_events=acc_events,
                         custom_trace_id_callback=custom_trace_id_callback)
        if schedule:
            self.schedule = schedule
            self.record_steps = True   # ProfilerStep#N ranges in the table and the trace
        else:
            self.schedule = _default_schedule_fn
            self.record_steps = False
        self.step_num = 0
        self.step_rec_fn = None
        self.current_action = self._scheduled(0)
        A = ProfilerAction
        self.action_map = {   # (previous action, current action) -> what to do, as PyTorch's
            (A.NONE, A.NONE): [],
            (A.NONE, A.WARMUP): [self.prepare_trace],
            (A.NONE, A.RECORD): [self.prepare_trace, self.start_trace],
            (A.NONE, A.RECORD_AND_SAVE): [self.prepare_trace, self.start_trace],
            (A.WARMUP, A.NONE): [partial(warnings.warn, "Incorrect schedule: WARMUP followed "
                                         "by NONE"), self.start_trace, self.stop_trace],
            (A.WARMUP, A.WARMUP): [],
            (A.WARMUP, A.RECORD): [self.start_trace],
            (A.WARMUP, A.RECORD_AND_SAVE): [self.start_trace],
            (A.RECORD, A.NONE): [partial(warnings.warn, "Incorrect schedule: RECORD followed "
                                         "by NONE"), self.stop_trace],
            (A.RECORD, A.WARMUP): [partial(warnings.warn, "Incorrect schedule: RECORD "
                                           "followed by WARMUP"), self.stop_trace],
            (A.RECORD, A.RECORD): [],
            (A.RECORD, A.RECORD_AND_SAVE): [],
            (A.RECORD_AND_SAVE, A.NONE): [self.stop_trace, self._trace_ready],
            (A.RECORD_AND_SAVE, A.WARMUP): [self.stop_trace, self._trace_ready,
                                            self.prepare_trace],
            (A.RECORD_AND_SAVE, A.RECORD): [self.stop_trace, self._trace_ready,
                                            self.prepare_trace, self.start_trace],
            (A.RECORD_AND_SAVE, A.RECORD_AND_SAVE): [self.stop_trace, self._trace_ready,
                                                     self.prepare_trace, self.start_trace],
            (A.WARMUP, None): [self.start_trace, self.stop_trace],
            (A.RECORD, None): [self.stop_trace, self._trace_ready],
            (A.RECORD_AND_SAVE, None): [self.stop_trace, self._trace_ready],
        }

    def _scheduled(self, step):
        action = self.schedule(step)
        if action == ProfilerAction.DEVICE_STOPPED:
            raise ValueError("ProfilerAction.DEVICE_STOPPED is set internally by the profiler "
                             "and must not be returned by a user-provided schedule")
        return action

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.stop()
        return False

    def start(self):
        """Begin profiling at the current step."""
        self._transit_action(ProfilerAction.NONE, self.current_action)
        if self.record_steps:
            self.step_rec_fn = prof.record_function(f"{PROFILER_STEP_NAME}#{self.step_num}")
            self.step_rec_fn.__enter__()

    def stop(self):
        """End profiling (closing the current step's window)."""
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        self._transit_action(self.current_action, None)

    def step(self):
        """Mirrors ``profile.step``: the next step begins (the schedule says what to do)."""
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        prev_action = self.current_action
        action = self._scheduled(self.step_num + 1)
        self.step_num += 1
        self.current_action = action
        self._transit_action(prev_action, action)
        if self.record_steps:
            self.step_rec_fn = prof.record_function(f"{PROFILER_STEP_NAME}#{self.step_num}")
            self.step_rec_fn.__enter__()

    def _trace_ready(self):
        if self.on_trace_ready:
            self.on_trace_ready(self)

    def _transit_action(self, prev_action, current_action):
        for action in self.action_map.get((prev_action, current_action), ()):
            action()

