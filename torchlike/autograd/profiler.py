"""The host-side profiler, torchlike's dispatch timed op by op (mirrors torch.autograd.profiler).

NOTE [ profiler hook ]
While a profiler records, ``_dispatch._profiler`` holds its ``_Recorder``; otherwise it is None,
and that one comparison in ``_dispatch.call`` is all an op pays.  The recorder opens an event per
op (``aten::<op name>``: torchlike's ops are named as ATen's, so ``mm``, ``mul``, ``addmm``,
``log_softmax`` line up with PyTorch's table), per backward node the engine runs
(``autograd::engine::evaluate_function: MulBackward0`` around ``MulBackward0``, as PyTorch's
engine records them) and per ``record_function`` range (``Optimizer.step#SGD.step``,
``enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__``, ``ProfilerStep#3``, the user's
own).  Events nest by thread: an event opened while another is open on the same thread is its
child, so self time is the event's time less its children's, as PyTorch counts it.

What a profiled op means, where torchlike would not run it at once:
- Lazy mode (NOTE [ lazy segments ] in _lazy.py) defers ops into segments.  While a recorder is
  active every op runs eagerly (the recorder flushes the open segment when it starts and dispatch
  skips recording), so an op's event times that op, as in PyTorch, where nothing is deferred.
- The fused backward (NOTE [ fused backward ] in fused.py) runs a whole backward as one program;
  while a recorder is active the engine walks the graph node by node instead, so each node has
  its event.  Profiled steps therefore show the per-node path's times; the table's purpose is to
  say where eager time goes op by op.
- Under ``torchlike.compile`` / ``to_jax`` the ops are traced, not run: their events time the
  tracing (once per compile); each call of a compiled step is one ``Torch-Compiled Region``
  event (PyTorch's name), and what runs inside it is in the device trace.

NOTE [ profiled host times ]
jax dispatches asynchronously: an op returns once XLA has queued it.  PyTorch's CPU kernels are
synchronous, so torch's "CPU time" of a CPU op includes its arithmetic.  A profiled op whose
output lives on a CPU device therefore waits for its result (``block_until_ready``) before its
event closes, and its CPU time means what torch's means (tested against a matmul's measured time).
An output on an accelerator is not waited for: torch's CPU time of a CUDA op is its launch, and
the kernel's time is in the device trace (``ProfilerActivity.CUDA``: NOTE [ device trace ] in
torchlike/profiler/profiler.py).  A profiled step takes about twice an unprofiled one (README's
figures for bench_eager's MLP step); measured there, the waits are a small part of that: the
events themselves and the per-node backward walk are most of it.

NOTE [ profiler memory ]
With ``profile_memory=True`` an op's event is charged the bytes of the arrays it returned (CPU or
accelerator memory, by where they live), and a range the sum of what ran inside it.  That is
PyTorch's "CPU Mem" for the allocations; jax frees an array when its last reference goes, which
torchlike cannot attribute to an op without a finalizer per array, so frees are not subtracted
(PyTorch's column can go negative; torchlike's counts allocations only).
"""
import contextlib
import itertools
import os
import sys
import threading
import time
import warnings

import jax

from .. import _dispatch, _lazy
from .._tensor import ArrayImpl, Tensor
from .profiler_util import DeviceType, EventList, FunctionEvent, FunctionEventAvg

__all__ = ["profile", "record_function", "EventList", "FunctionEvent", "FunctionEventAvg",
           "DeviceType"]

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_FLOPS = {}   # (op, static, dt, operand avals) -> XLA's flop count of the op's program
_IDS = itertools.count(1)   # events' ids ("External id" in the trace)


def _shape(x):
    return list(x.shape) if isinstance(x, Tensor) else []


def _arrays(out):
    """The concrete jax arrays among an op's or a node's outputs (Tensors or arrays)."""
    found = []
    for o in out if isinstance(out, (tuple, list)) else (out,):
        if isinstance(o, Tensor):
            o = o._value()
        if type(o) is ArrayImpl:
            found.append(o)
    return found


_ON_CPU = {}   # sharding -> whether its devices are CPU ones


def _on_cpu(arr):
    where = arr.sharding
    cpu = _ON_CPU.get(where)
    if cpu is None:
        cpu = _ON_CPU[where] = all(d.platform == "cpu" for d in where.device_set)
    return cpu


def _python_stack():
    """The caller's Python frames outside torchlike, innermost first, as PyTorch writes them
    (``path(line): function``)."""
    frames, f = [], sys._getframe(2)
    while f is not None:
        path = f.f_code.co_filename
        if not path.startswith(_PACKAGE_DIR) and "contextlib" not in path:
            frames.append(f"{path}({f.f_lineno}): {f.f_code.co_name}")
        f = f.f_back
    return frames


class _Recorder:
    """The events of one profiling window (NOTE [ profiler hook ])."""

    def __init__(self, record_shapes=False, profile_memory=False, with_stack=False,
                 with_flops=False, use_device=None, origin=None):
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.use_device = use_device
        self.events = []
        self._open = {}   # thread id -> its open events, outermost first
        # times count from ``origin`` (perf_counter ns, wall-clock ns): a profile that keeps
        # its events across windows keeps one origin
        self._start_ns, self.base_ns = origin or (time.perf_counter_ns(), time.time_ns())

    def _now(self):
        return (time.perf_counter_ns() - self._start_ns) / 1000.0

    def begin(self, name, category="cpu_op", shapes=None):
        """Open an event on the calling thread (a child of the innermost open one)."""
        tid = threading.get_native_id()
        stack = self._open.get(tid)
        if stack is None:
            stack = self._open[tid] = []
        if shapes is None and self.record_shapes:
            shapes = []   # a range has no inputs: PyTorch lists none
        evt = FunctionEvent(next(_IDS), name, tid, 0.0, 0.0, shapes,
                            _python_stack() if self.with_stack else None,
                            is_user_annotation=category == "user_annotation",
                            use_device=self.use_device, category=category)
        if stack:
            parent = stack[-1]
            evt.cpu_parent = parent
            parent.cpu_children.append(evt)
        stack.append(evt)
        self.events.append(evt)
        evt.time_range.start = (time.perf_counter_ns() - self._start_ns) / 1000.0
        return evt

    def end(self, evt):
        """Close ``evt`` (and any event still open inside it, at the same time)."""
        now = (time.perf_counter_ns() - self._start_ns) / 1000.0
        stack = self._open.get(evt.thread, ())
        if stack and stack[-1] is evt:   # the usual case
            stack.pop()
            evt.time_range.end = now
            return
        if not any(e is evt for e in stack):
            return
        while True:
            e = stack.pop()
            e.time_range.end = now
            if e is evt:
                return

    def close_all(self):
        """Close every open event now (the window ends)."""
        now = self._now()
        for stack in self._open.values():
            for e in stack:
                e.time_range.end = now
            stack.clear()

    def op(self, op, args, static, run=None):
        """Run one op through dispatch inside its event (NOTE [ profiled host times ]); ``run``:
        what runs it instead of dispatch (an op that also updates its running statistics)."""
        evt = self.begin("aten::" + op.name,
                         shapes=[_shape(a) for a in args] if self.record_shapes else None)
        record, _dispatch._record = _dispatch._record, None   # NOTE [ profiler hook ]: eager
        try:
            out = _dispatch._call(op, args, static) if run is None else run()
            arrays = _arrays(out)
            self._finish(evt, arrays)
            if self.with_flops and arrays:
                evt.flops = self._flops(op, static, args)
        finally:
            _dispatch._record = record
            self.end(evt)
        return out

    def node(self, node, call, grads, create_graph):
        """Run one backward node as PyTorch's engine records it: (the ``evaluate_function``
        event, left open for the engine to close once the node's outputs are accumulated, and
        the node's outputs); the node's own event inside it."""
        name = node.name()
        outer = self.begin("autograd::engine::evaluate_function: " + name)
        inner = self.begin(name, shapes=[list(g.shape) if g is not None else [] for g in grads]
                           if self.record_shapes else None)
        try:
            outs = call(node, grads, create_graph)
            self._finish(inner, _arrays(outs))
        except BaseException:
            self.end(outer)
            raise
        self.end(inner)
        return outer, outs

    def accumulate(self, add, a, b):
        """Two gradients of one input summed by the engine (PyTorch's ``aten::add_``)."""
        evt = self.begin("aten::add_", shapes=[list(a.shape), list(b.shape)]
                         if self.record_shapes else None)
        try:
            out = add(a, b)
            self._finish(evt, _arrays(out))
        finally:
            self.end(evt)
        return out

    def program(self, fn, *args):
        """Run a ``torchlike.compile`` program inside its event (PyTorch's name for a compiled
        region's)."""
        evt = self.begin("Torch-Compiled Region")
        try:
            out = fn(*args)
            self._finish(evt, [a for a in jax.tree_util.tree_leaves(out)
                               if type(a) is ArrayImpl])
        finally:
            self.end(evt)
        return out

    def _finish(self, evt, arrays):
        """Wait for CPU results and charge the event their bytes (NOTEs [ profiled host
        times ], [ profiler memory ])."""
        for a in arrays:
            if _on_cpu(a):
                a.block_until_ready()
        if self.profile_memory:
            for a in arrays:
                nbytes = a.aval.size * a.aval.dtype.itemsize
                if _on_cpu(a):
                    evt._cpu_alloc += nbytes
                else:
                    evt._device_alloc += nbytes

    def _flops(self, op, static, args):
        """XLA's flop count of the op's program for these operands (cached)."""
        if op.dynamic or op.per_call or op.pieces is not None:
            return 0
        arrays = [a._value() if isinstance(a, Tensor) else a for a in args]
        avals = tuple((a.shape, a.dtype) if hasattr(a, "shape") else type(a) for a in arrays)
        dt = _dispatch.result_dtype(op.promote, *args) if op.promote else None
        key = (op, static, dt, avals)
        flops = _FLOPS.get(key)
        if flops is None:
            try:
                cost = _dispatch.forward_fn(op, static, dt).lower(*arrays).cost_analysis()
                cost = cost[0] if isinstance(cost, (list, tuple)) else cost
                flops = int(cost.get("flops", 0)) if cost else 0
            except Exception:   # a program XLA cannot cost (a custom call): count none
                flops = 0
            _dispatch.remember(_FLOPS, key, flops)
        return flops

    def event_list(self):
        """The window's events, ready for tables and traces."""
        meta = {"baseTimeNanoseconds": self.base_ns, "pid": os.getpid(),
                "record_shapes": int(self.record_shapes),
                "profile_memory": int(self.profile_memory)}
        return EventList(self.events, use_device=self.use_device,
                         profile_memory=self.profile_memory, with_flops=self.with_flops,
                         trace_meta=meta)


def _start(recorder):
    """Make ``recorder`` the active one (PyTorch allows one profiler per process at a time)."""
    if _dispatch._profiler is not None:
        raise RuntimeError("Profiler is already enabled on this thread")
    _lazy.flush()   # NOTE [ profiler hook ]: what was deferred runs before the window
    _dispatch._profiler = recorder


def _stop(recorder):
    if _dispatch._profiler is recorder:
        _dispatch._profiler = None
    recorder.close_all()


class record_function(contextlib.ContextDecorator):
    """Mirrors ``torch.autograd.profiler.record_function``: a named range in the profile (a
    context manager or a decorator); costs a check when no profiler records.

    Args:
        name (str): the range's name in the table and the trace.
        args (str, optional): ignored by the table (PyTorch attaches it to the event).

    Example::

        >>> with torchlike.profiler.profile() as prof:
        ...     with torchlike.profiler.record_function("my_block"):
        ...         y = torchlike.ones(3) * 2
    """

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._event = None
        self._recorder = None

    def __enter__(self):
        recorder = _dispatch._profiler
        if recorder is not None:
            self._recorder = recorder
            self._event = recorder.begin(self.name, "user_annotation")
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if self._event is not None:
            self._recorder.end(self._event)
            self._event = self._recorder = None
        return False


class profile:
    """Mirrors ``torch.autograd.profiler.profile`` (the legacy API): records torchlike's ops,
    backward nodes and ranges while the context is open.

    Args:
        enabled (bool): record at all.
        use_cuda (bool): deprecated; ``use_device="cuda"``.
        use_device (str, optional): the accelerator's name in the table's columns.
        record_shapes (bool): keep each op's input shapes.
        with_flops (bool): keep XLA's flop count of each op's program.
        profile_memory (bool): charge each op the bytes it returned (NOTE [ profiler memory ]).
        with_stack (bool): keep the Python stack of each event.

    Example::

        >>> with torchlike.autograd.profiler.profile() as prof:
        ...     torchlike.ones(3).mul(2)
        >>> print(prof.key_averages().table(sort_by="self_cpu_time_total"))
    """

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None):
        self.enabled = enabled
        self.acc_events = acc_events
        self.function_events = None
        if not enabled:
            return
        if use_cuda:
            warnings.warn("The attribute `use_cuda` will be deprecated soon, please use "
                          "``use_device = 'cuda'`` instead.", FutureWarning, stacklevel=2)
            use_device = "cuda"
        self.use_device = use_device
        self.use_cpu = use_cpu
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.entered = False
        self._recorder = None
        self._origin = None

    def _start(self):
        """Begin a recording window."""
        self._recorder = _Recorder(self.record_shapes, self.profile_memory, self.with_stack,
                                   self.with_flops, self.use_device, self._origin)
        self._origin = (self._recorder._start_ns, self._recorder.base_ns)
        _start(self._recorder)

    def _stop(self):
        """End the window: its events, after the earlier windows' ones with ``acc_events``."""
        _stop(self._recorder)
        events = self._recorder.event_list()
        self._recorder = None
        if self.acc_events and self.function_events is not None:
            self.function_events.extend(events)
        else:
            self.function_events = events

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        if self.use_cpu:
            self._start()
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if not self.enabled:
            return False
        if self._recorder is not None:
            self._stop()
        else:
            self.function_events = EventList(use_device=self.use_device)
        return False

    def _check_finish(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")

    def __repr__(self):
        if self.function_events is None:
            return "<unfinished torch.autograd.profile>"
        return repr(self.function_events)

    def __str__(self):
        if self.function_events is None:
            return "<unfinished torch.autograd.profile>"
        return str(self.function_events)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None):
        """Mirrors ``profile.table``: ``EventList.table`` of the recorded events."""
        self._check_finish()
        return self.function_events.table(
            sort_by=sort_by, row_limit=row_limit, max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width, header=header,
            top_level_events_only=top_level_events_only, time_unit=time_unit)

    def export_chrome_trace(self, path):
        """Mirrors ``profile.export_chrome_trace``: the events as a Perfetto / chrome://tracing
        JSON file (gzipped when ``path`` ends in ``.gz``)."""
        self._check_finish()
        return self.function_events.export_chrome_trace(path)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        """Mirrors ``profile.key_averages``: ``EventList.key_averages`` of the events."""
        self._check_finish()
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n,
                                                 group_by_overload_name)

    def total_average(self):
        """Mirrors ``profile.total_average``."""
        self._check_finish()
        return self.function_events.total_average()

    @property
    def self_cpu_time_total(self):
        """The sum of every event's self CPU time (µs)."""
        self._check_finish()
        return self.function_events.self_cpu_time_total
