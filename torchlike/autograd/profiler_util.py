"""The profiler's events, their averages and their table (mirrors torch.autograd.profiler_util).

An event is one timed range on one thread: an op torchlike dispatched, a backward node the
engine ran, or a ``record_function`` range.  Times are microseconds (floats) from the
profiler's start; memory is bytes.  ``EventList`` is a list of events with PyTorch's
``table``, ``key_averages``, ``total_average`` and ``export_chrome_trace``.
"""
import enum
import gzip
import json
import os
from collections import defaultdict

__all__ = ["DeviceType", "EventList", "FunctionEvent", "FunctionEventAvg", "Interval"]

MEMORY_EVENT_NAME = "[memory]"


class DeviceType(enum.IntEnum):
    """Mirrors ``torch.autograd.DeviceType``: where an event ran (values as PyTorch's)."""
    CPU = 0
    CUDA = 1
    XLA = 9
    XPU = 12
    MPS = 13
    Meta = 14
    MTIA = 19
    PrivateUse1 = 20

    def __repr__(self):
        return f"<DeviceType.{self.name}: {self.value}>"

    def __str__(self):
        return f"DeviceType.{self.name}"


class Interval:
    """Mirrors ``torch.autograd.profiler_util.Interval``: a start and an end, in µs."""

    __slots__ = ("start", "end")

    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        """The length of the interval in microseconds."""
        return self.end - self.start


def _format_time(time_us):
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us, total_us):
    if total_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_us:.2f}%"


def _format_memory(nbytes):
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


class _Formatted:
    """The ``*_str`` views of an event's times, as PyTorch's FormattedTimesMixin gives them."""

    @property
    def cpu_time_str(self):
        return _format_time(self.cpu_time)

    @property
    def cpu_time_total_str(self):
        return _format_time(self.cpu_time_total)

    @property
    def self_cpu_time_total_str(self):
        return _format_time(self.self_cpu_time_total)

    @property
    def device_time(self):
        return 0.0 if self.count == 0 else self.device_time_total / self.count

    @property
    def device_time_str(self):
        return _format_time(self.device_time)

    @property
    def device_time_total_str(self):
        return _format_time(self.device_time_total)

    @property
    def self_device_time_total_str(self):
        return _format_time(self.self_device_time_total)


class FunctionEvent(_Formatted):
    """Mirrors ``torch.autograd.profiler_util.FunctionEvent``: one range on one thread.

    ``cpu_memory_usage`` is what the event and the events inside it allocated (the outputs
    torchlike's ops made: NOTE [ profiler memory ] in autograd/profiler.py), and
    ``self_cpu_memory_usage`` what it allocated itself; likewise ``device_memory_usage`` for
    outputs on an accelerator.
    """

    # what torchlike never varies, as class attributes: an event is made per profiled op
    node_id = -1
    overload_name = ""
    fwd_thread = None
    count = 1
    concrete_inputs = None
    scope = 0
    is_async = False
    is_remote = False
    device_index = 0
    is_legacy = False
    device_time_total = 0.0
    self_device_time_total = 0.0

    def __init__(self, id, name, thread, start_us, end_us, input_shapes=None, stack=None,
                 cpu_memory_usage=0, device_memory_usage=0, device_type=DeviceType.CPU,
                 flops=None, is_user_annotation=False, use_device=None, sequence_nr=-1,
                 category="cpu_op"):
        self.id = id
        # PyTorch's table counts every profiler step as one key; the trace keeps each number
        self.name = "ProfilerStep*" if name.startswith("ProfilerStep#") else name
        self.trace_name = name
        self.time_range = Interval(start_us, end_us)
        self.thread = thread
        self.kernels = []
        self.cpu_children = []
        self.cpu_parent = None
        self.input_shapes = input_shapes
        self.stack = stack
        self.use_device = use_device
        self._cpu_alloc = cpu_memory_usage
        self._device_alloc = device_memory_usage
        self.sequence_nr = sequence_nr
        self.device_type = device_type
        self.flops = flops
        self.is_user_annotation = is_user_annotation
        self.category = category

    def append_cpu_child(self, child):
        """Add an event that ran inside this one."""
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent):
        """Set the event this one ran inside."""
        self.cpu_parent = parent

    @property
    def key(self):
        return self.name

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us()

    @property
    def cpu_time(self):
        return self.cpu_time_total

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_memory_usage(self):
        return self._cpu_alloc + sum(c.cpu_memory_usage for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self):
        return self._cpu_alloc

    @property
    def device_memory_usage(self):
        return self._device_alloc + sum(c.device_memory_usage for c in self.cpu_children)

    @property
    def self_device_memory_usage(self):
        return self._device_alloc

    def __repr__(self):
        children = [c.id for c in self.cpu_children]
        return (f"<FunctionEvent id={self.id} name={self.name} "
                f"cpu_time={self.cpu_time_str} start_us={self.time_range.start:.3f} "
                f"end_us={self.time_range.end:.3f} cpu_children={children} "
                f"cpu_memory_usage={self.cpu_memory_usage} input_shapes={self.input_shapes}>")


class FunctionEventAvg(_Formatted):
    """Mirrors ``torch.autograd.profiler_util.FunctionEventAvg``: the sum of the events of one
    key (``count`` of them), as ``key_averages`` makes it."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.node_id = 0
        self.is_async = False
        self.is_remote = False
        self.use_device = None
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.device_time_total = 0.0
        self.self_device_time_total = 0.0
        self.input_shapes = None
        self.overload_name = None
        self.stack = None
        self.scope = None
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.device_memory_usage = 0
        self.self_device_memory_usage = 0
        self.cpu_children = None
        self.cpu_parent = None
        self.device_type = DeviceType.CPU
        self.is_legacy = False
        self.flops = 0

    def add(self, other):
        """Add an event (or another average) of the same key; returns self."""
        if self.key is None:
            self.key = other.key
            self.node_id = other.node_id
            self.is_async = other.is_async
            self.use_device = other.use_device
            self.cpu_parent = other.cpu_parent
            self.input_shapes = other.input_shapes
            self.overload_name = other.overload_name
            self.stack = other.stack
            self.scope = other.scope
            self.device_type = other.device_type
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.device_time_total += other.device_time_total
        self.self_device_time_total += other.self_device_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.device_memory_usage += other.device_memory_usage
        self.self_device_memory_usage += other.self_device_memory_usage
        self.count += other.count
        self.flops += other.flops or 0
        return self

    def __iadd__(self, other):
        return self.add(other)

    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class EventList(list):
    """Mirrors ``torch.autograd.profiler_util.EventList``: a list of events with the table,
    averages and chrome-trace export PyTorch gives it.

    Example::

        >>> with torchlike.profiler.profile() as prof:
        ...     torchlike.ones(3) * 2
        >>> print(prof.events().table(sort_by="cpu_time_total", row_limit=5))
    """

    def __init__(self, *args, use_device=None, profile_memory=False, with_flops=False,
                 trace_meta=None):
        super().__init__(*args)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._with_flops = with_flops
        self._trace_meta = trace_meta or {}

    def _like(self, events):
        return EventList(events, use_device=self._use_device,
                         profile_memory=self._profile_memory, with_flops=self._with_flops,
                         trace_meta=self._trace_meta)

    @property
    def self_cpu_time_total(self):
        """The sum of the events' self CPU times (µs)."""
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None):
        """Mirrors ``EventList.table``: the events as PyTorch's text table.

        Args:
            sort_by: an attribute to sort rows by, largest first (``"cpu_time_total"``,
                ``"self_cpu_time_total"``, ``"count"``, ``"cpu_memory_usage"``...); None keeps
                the list's order.
            row_limit: the most rows shown.
            header: a line printed above the table.
            top_level_events_only: only events no other event encloses.
            time_unit: ``"s"``, ``"ms"`` or ``"us"`` for every time (default: per value).

        Returns:
            str: the table.
        """
        return _build_table(self, sort_by=sort_by, header=header, row_limit=row_limit,
                            max_src_column_width=max_src_column_width,
                            max_name_column_width=max_name_column_width,
                            max_shapes_column_width=max_shapes_column_width,
                            with_flops=self._with_flops, profile_memory=self._profile_memory,
                            top_level_events_only=top_level_events_only, time_unit=time_unit)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        """Mirrors ``EventList.key_averages``: one ``FunctionEventAvg`` per event name (and
        input shapes / the innermost ``group_by_stack_n`` stack entries when asked), in the
        order each key first appears.

        Returns:
            EventList: of FunctionEventAvg.
        """
        stats = defaultdict(FunctionEventAvg)
        for evt in self:
            key = (evt.key, evt.node_id)
            if group_by_input_shape:
                key += (str(evt.input_shapes),)
            if group_by_stack_n > 0:
                key += tuple((evt.stack or [])[:group_by_stack_n])
            if group_by_overload_name:
                key += (evt.overload_name,)
            stats[key].add(evt)
        averages = self._like(stats.values())
        for avg in averages:
            avg.stack = avg.stack[:group_by_stack_n] if group_by_stack_n and avg.stack else []
            if not group_by_input_shape:
                avg.input_shapes = ""
            if not group_by_overload_name:
                avg.overload_name = ""
        return averages

    def total_average(self):
        """Mirrors ``EventList.total_average``: every event summed into one average."""
        total = FunctionEventAvg()
        for evt in self:
            total.add(evt)
        total.key = "Total"
        return total

    def supported_export_stacks_metrics(self):
        """The metrics ``export_stacks`` can write."""
        return ["self_cpu_time_total", "self_cuda_time_total", "self_xpu_time_total",
                "self_privateuse1_time_total"]

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Mirrors ``EventList.export_stacks``: one line per event that has a stack (profiled
        ``with_stack=True``), ``outermost;...;innermost <metric as an integer>``, the folded
        format flame-graph tools read.

        Args:
            path (str): the file to write.
            metric (str): one of ``supported_export_stacks_metrics()``.
        """
        if metric not in self.supported_export_stacks_metrics():
            raise ValueError("metric should be one of: "
                             + str(self.supported_export_stacks_metrics()))
        attr = metric.replace("cuda", "device").replace("xpu", "device").replace(
            "privateuse1", "device")
        with open(path, "w") as f:
            for evt in self:
                value = int(getattr(evt, attr))
                if evt.stack and value > 0:
                    f.write(";".join(reversed(evt.stack)) + f" {value}\n")

    def export_chrome_trace(self, path):
        """Mirrors ``EventList.export_chrome_trace``: write the events in the Trace Event
        Format (a JSON object with ``traceEvents``) that Perfetto and chrome://tracing open;
        gzipped when ``path`` ends in ``.gz``.

        Args:
            path (str): the file to write.
        """
        trace = _chrome_trace(self, self._trace_meta)
        data = json.dumps(trace).encode()
        if str(path).endswith(".gz"):
            data = gzip.compress(data)
        with open(path, "wb") as f:
            f.write(data)


def _chrome_trace(events, meta):
    """The Trace Event Format object of ``events``: a metadata event naming the process and
    each thread, then one complete ("X") event per range, parents before the ranges inside
    them (start order)."""
    pid = meta.get("pid", os.getpid())
    out = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "ts": 0,
            "args": {"name": "python"}},
           {"ph": "M", "name": "process_labels", "pid": pid, "tid": 0, "ts": 0,
            "args": {"labels": "CPU"}}]
    for tid in dict.fromkeys(e.thread for e in events):
        out.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "ts": 0,
                    "args": {"name": f"thread {tid} (python)"}})
    for evt in sorted(events, key=lambda e: (e.time_range.start, -e.time_range.end)):
        args = {"External id": evt.id}
        if evt.sequence_nr >= 0:
            args["Sequence number"] = evt.sequence_nr
        if evt.input_shapes:
            args["Input Dims"] = evt.input_shapes
        if evt.stack:
            args["Call stack"] = ";".join(evt.stack)
        if evt.flops:
            args["flops"] = evt.flops
        if evt._cpu_alloc or evt._device_alloc:
            args["Bytes allocated"] = evt._cpu_alloc + evt._device_alloc
        out.append({"ph": "X", "cat": evt.category, "name": evt.trace_name, "pid": pid,
                    "tid": evt.thread, "ts": evt.time_range.start,
                    "dur": evt.time_range.elapsed_us(), "args": args})
    trace = {"schemaVersion": 1, "deviceProperties": [], "displayTimeUnit": "ms"}
    trace.update({k: v for k, v in meta.items() if k != "pid"})
    trace["traceEvents"] = out
    return trace


def _build_table(events, sort_by=None, header=None, row_limit=100, max_src_column_width=75,
                 max_name_column_width=55, max_shapes_column_width=80, with_flops=False,
                 profile_memory=False, top_level_events_only=False, time_unit=None):
    """PyTorch's profiler table of ``events`` (FunctionEvents or FunctionEventAvgs): one row per
    event, the columns PyTorch shows for the numbers there are."""
    if not events:
        return ""
    use_device = events[0].use_device
    has_device_mem = use_device is not None and any(
        e.self_device_memory_usage > 0 for e in events)
    has_shapes = any(e.input_shapes for e in events)
    stacks = [e.stack for e in events if e.stack]
    if sort_by is not None:
        attr = sort_by.replace("cuda", "device").replace("xpu", "device")
        events = sorted(events, key=lambda e: getattr(e, attr), reverse=True)

    def time(us):
        if time_unit == "s":
            return f"{us / 1e6:.3f}s"
        if time_unit == "ms":
            return f"{us / 1e3:.3f}ms"
        if time_unit == "us":
            return f"{us:.3f}us"
        return _format_time(us)

    name_width = max(len(e.key) for e in events) + 4
    if max_name_column_width is not None:
        name_width = min(name_width, max_name_column_width)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
        if has_device_mem:
            dev = use_device.upper()
            headers += [f"{dev} Mem", f"Self {dev} Mem"]
    headers.append("# of Calls")
    widths = [name_width] + [12] * (len(headers) - 1)
    align = [">"] * len(headers)
    if has_shapes:
        shapes_width = max(len(str(e.input_shapes)) for e in events) + 4
        if max_shapes_column_width is not None:
            shapes_width = min(shapes_width, max_shapes_column_width)
        headers.append("Input Shapes")
        widths.append(shapes_width)
        align.append(">")
    if stacks:
        src_width = max(len(s) for stack in stacks for s in stack) + 4
        if max_src_column_width is not None:
            src_width = min(src_width, max_src_column_width)
        headers.append("Source Location")
        widths.append(src_width)
        align.append("<")
    flops_scale = None
    if with_flops:
        raw = [e.flops for e in events if e.flops and e.flops > 0]
        if raw:
            units = ("FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs")
            i = 0
            while i + 1 < len(units) and min(raw) >= 1000 ** (i + 1):
                i += 1
            flops_scale = 1000.0 ** -i
            headers.append(f"Total {units[i]}")
            widths.append(12)
            align.append(">")

    row_format = "".join(f"{{: {a}{w}}}  " for a, w in zip(align, widths))
    separator = "".join("-" * w + "  " for w in widths)
    line_length = sum(w + 2 for w in widths) - 2
    total_self = sum(e.self_cpu_time_total for e in events)

    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_events_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [separator, row_format.format(*headers), separator]

    def trim(path):
        if len(path) > src_width:
            path = path[len(path) - src_width:]
            if len(path) > 3:
                path = "..." + path[3:]
        return path

    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        row = [name, _format_time_share(e.self_cpu_time_total, total_self),
               time(e.self_cpu_time_total),
               _format_time_share(e.cpu_time_total, total_self), time(e.cpu_time_total),
               time(e.cpu_time)]
        if profile_memory:
            row += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
            if has_device_mem:
                row += [_format_memory(e.device_memory_usage),
                        _format_memory(e.self_device_memory_usage)]
        row.append(e.count)
        if has_shapes:
            row.append(str(e.input_shapes)[:shapes_width])
        if stacks:
            row.append(trim(e.stack[0]) if e.stack else "")
        if flops_scale is not None:
            row.append("--" if not e.flops or e.flops <= 0 else f"{e.flops * flops_scale:8.3f}")
        lines.append(row_format.format(*row))
        if stacks and e.stack:
            blank = [""] * (len(headers) - 1)
            for entry in e.stack[1:]:
                lines.append(row_format.format(*blank, trim(entry)))
            lines.append(row_format.format(*blank, ""))
    lines += [separator, f"Self CPU time total: {time(total_self)}"]
    return "\n".join(lines) + "\n"
