"""torchlike.profiler and torchlike.autograd.profiler against real torch.profiler: the names and
counts of a small program's events, record_function ranges, the schedule's actions, the trace
handler's file names, the table's columns, the chrome trace against the Trace Event Format's
schema, the device trace from jax.profiler, and nothing recorded while no profiler runs."""
import collections
import gzip
import json
import os
import re
import socket
import time

import jax
import jsonschema
import numpy as np
import pytest
import torch

import torchlike as tl
from torchlike import _dispatch, _lazy


def _program(lib, prof_mod):
    """A forward under a range, its backward, an SGD step, zero_grad and a DataLoader pass:
    the events both profilers should record alike."""
    g = np.random.default_rng(0)
    x = lib.tensor(g.standard_normal((4, 4)).astype(np.float32), requires_grad=True)
    w = lib.tensor(g.standard_normal((4, 4)).astype(np.float32))
    opt = lib.optim.SGD([x], lr=0.1)
    loader = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(lib.zeros(6, 2)),
                                       batch_size=2)
    with prof_mod.record_function("my_range"):
        y = lib.mm(x, w)
        z = (y * y).sum()
    z.backward()
    opt.step()
    opt.zero_grad()
    for _ in loader:
        pass


def _profiled(lib, **options):
    with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU], **options) as p:
        _program(lib, lib.profiler)
    return p


@pytest.fixture(scope="module")
def runs():
    """The program profiled by torch and by torchlike (shapes and memory recorded): run once
    unprofiled first, so torchlike's times are not its compiles."""
    _program(tl, tl.profiler)
    return (_profiled(torch, record_shapes=True, profile_memory=True),
            _profiled(tl, record_shapes=True, profile_memory=True))


def _counts(events, keep):
    return collections.Counter(e.name for e in events if keep(e))


def _ours(e):
    """The events torchlike records of the program (torch adds ATen's internal calls inside
    these: aten::resolve_conj, aten::expand, aten::detach, ...; and the seed's ones_like)."""
    parent = e.cpu_parent.name if e.cpu_parent is not None else None
    return (parent == "my_range" or e.name.startswith("autograd::engine")
            or e.name.startswith(("Optimizer.", "enumerate(", "my_range"))
            or (parent or "").startswith("autograd::engine"))


def test_event_names_and_counts_match_torch(runs):
    ref, got = runs
    want = _counts(ref.events(), _ours)
    assert _counts(got.events(), _ours) == want
    assert want["enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"] == 4
    assert want["autograd::engine::evaluate_function: MmBackward0"] == 1
    averages = {a.key: a for a in got.key_averages()}
    assert averages["aten::mul"].count == 1 and averages["aten::mm"].count == 1


def test_input_shapes_and_memory_match_torch(runs):
    ref, got = runs

    def by_name(events, name):
        return next(e for e in events if e.name == name and e.cpu_parent is not None
                    and e.cpu_parent.name == "my_range")
    for name in ("aten::mm", "aten::mul"):
        r, g = by_name(ref.events(), name), by_name(got.events(), name)
        assert g.input_shapes == r.input_shapes == [[4, 4], [4, 4]]
        assert g.self_cpu_memory_usage == r.self_cpu_memory_usage == 64   # 4x4 float32
    rng = next(e for e in got.events() if e.name == "my_range")
    assert rng.cpu_memory_usage == sum(c.cpu_memory_usage for c in rng.cpu_children) > 0


def _header(table):
    lines = table.splitlines()
    return lines[0], lines[1]


def _us(text):
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", text).groups()
    return float(number) * {"us": 1, "ms": 1e3, "s": 1e6}[unit]


def test_table_columns_match_torch(runs):
    ref, got = runs
    for kwargs in ({}, {"group_by_input_shape": True}):
        want = ref.key_averages(**kwargs).table(sort_by="cpu_time_total", row_limit=5)
        table = got.key_averages(**kwargs).table(sort_by="cpu_time_total", row_limit=5)
        if kwargs:   # the shapes column is as wide as the longest shapes (torch has more)
            assert re.split(r"\s{2,}", _header(table)[1].strip()) == \
                re.split(r"\s{2,}", _header(want)[1].strip())
        else:
            assert _header(table) == _header(want)
        assert table.splitlines()[-1].startswith("Self CPU time total: ")
        assert len(table.splitlines()) == 3 + 5 + 2
        totals = [_us(re.split(r"\s{2,}", row.strip())[4]) for row in table.splitlines()[3:8]]
        assert totals == sorted(totals, reverse=True)   # sorted by CPU total
    assert "Input Shapes" in _header(table)[1] and "CPU Mem" in _header(table)[1]
    by_shape = got.key_averages(group_by_input_shape=True)
    assert any(a.key == "aten::mm" and a.input_shapes == [[4, 4], [4, 4]] for a in by_shape)


def _trace_schema():
    """The Trace Event Format (the JSON object form Perfetto and chrome://tracing open): the
    fields each event needs, complete events with a duration."""
    event = {
        "type": "object",
        "required": ["ph", "name", "pid", "tid", "ts"],
        "properties": {
            "ph": {"type": "string", "enum": ["X", "B", "E", "i", "I", "M", "s", "t", "f"]},
            "name": {"type": "string"}, "cat": {"type": "string"},
            "pid": {"type": ["integer", "string"]}, "tid": {"type": ["integer", "string"]},
            "ts": {"type": "number"}, "dur": {"type": "number", "minimum": 0},
            "args": {"type": "object"}},
        "allOf": [{"if": {"properties": {"ph": {"const": "X"}}},
                   "then": {"required": ["dur", "cat", "args"]}}]}
    return {"type": "object", "required": ["traceEvents"],
            "properties": {"traceEvents": {"type": "array", "items": event},
                           "displayTimeUnit": {"enum": ["ms", "ns"]}}}


def _check_nesting(events):
    """Complete events on one thread nest: each starts and ends inside the one open around it."""
    by_thread = collections.defaultdict(list)
    for e in events:
        if e["ph"] == "X":
            by_thread[(e["pid"], e["tid"])].append(e)
    for evs in by_thread.values():
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        open_ = []
        for e in evs:
            while open_ and e["ts"] >= open_[-1]["ts"] + open_[-1]["dur"]:
                open_.pop()
            if open_:
                assert e["ts"] + e["dur"] <= open_[-1]["ts"] + open_[-1]["dur"], (e, open_[-1])
            open_.append(e)


def test_chrome_trace_schema_and_nesting(runs, tmp_path):
    _, got = runs
    got.export_chrome_trace(str(tmp_path / "t.json"))
    trace = json.loads((tmp_path / "t.json").read_text())
    jsonschema.validate(trace, _trace_schema())
    _check_nesting(trace["traceEvents"])
    names = {e["name"] for e in trace["traceEvents"] if e["ph"] == "X"}
    assert {"my_range", "aten::mm", "Optimizer.step#SGD.step",
            "autograd::engine::evaluate_function: MulBackward0"} <= names
    rng = next(e for e in trace["traceEvents"] if e["name"] == "my_range")
    assert rng["cat"] == "user_annotation"
    mm = next(e for e in trace["traceEvents"] if e["name"] == "aten::mm")
    assert rng["ts"] <= mm["ts"] and mm["ts"] + mm["dur"] <= rng["ts"] + rng["dur"]
    assert mm["args"]["Input Dims"] == [[4, 4], [4, 4]]
    got.export_chrome_trace(str(tmp_path / "t.json.gz"))   # gzipped by its name, as torch's
    assert json.loads(gzip.decompress((tmp_path / "t.json.gz").read_bytes())) == trace


def test_record_function_nests_as_decorator_and_context():
    @tl.profiler.record_function("decorated")
    def inner(t):
        return t + 1

    x = tl.ones(3)
    with tl.profiler.profile(activities=[tl.profiler.ProfilerActivity.CPU]) as p:
        with tl.autograd.profiler.record_function("outer"):
            with tl.profiler.record_function("middle"):
                inner(x)
    ev = {e.name: e for e in p.events()}
    assert ev["decorated"].cpu_parent is ev["middle"]
    assert ev["middle"].cpu_parent is ev["outer"]
    assert ev["aten::add"].cpu_parent is ev["decorated"]
    assert ev["outer"].cpu_time_total >= ev["middle"].cpu_time_total >= \
        ev["decorated"].cpu_time_total >= ev["aten::add"].cpu_time_total
    assert ev["outer"].self_cpu_time_total == pytest.approx(
        ev["outer"].cpu_time_total - ev["middle"].cpu_time_total)
    table = p.key_averages().table()
    assert all(n in table for n in ("outer", "middle", "decorated", "aten::add"))


@pytest.mark.parametrize("kwargs", [dict(wait=1, warmup=1, active=2),
                                    dict(wait=0, warmup=2, active=1, repeat=2, skip_first=3),
                                    dict(wait=2, warmup=1, active=1, repeat=1,
                                         skip_first=2, skip_first_wait=1)])
def test_schedule_actions_match_torch(kwargs):
    ours, ref = tl.profiler.schedule(**kwargs), torch.profiler.schedule(**kwargs)
    assert [ours(i).name for i in range(20)] == [ref(i).name for i in range(20)]


def test_schedule_rejects_and_warns_as_torch():
    for bad in (dict(wait=-1, warmup=0, active=1), dict(wait=0, warmup=0, active=0)):
        with pytest.raises(AssertionError) as want:
            torch.profiler.schedule(**bad)
        with pytest.raises(AssertionError, match=re.escape(str(want.value))):
            tl.profiler.schedule(**bad)
    with pytest.warns(UserWarning, match="won't be using warmup"):
        tl.profiler.schedule(wait=1, warmup=0, active=1)


def _scheduled_steps(lib, path, steps=9):
    """For each on_trace_ready call: the steps its table counts, the muls, and the
    ProfilerStep#N ranges of its chrome trace."""
    ready = []

    def handler(p):
        names = collections.Counter(e.name for e in p.events())
        p.export_chrome_trace(path)
        with open(path) as f:
            traced = sorted(e["name"] for e in json.load(f)["traceEvents"]
                            if e["name"].startswith("ProfilerStep#"))
        ready.append((names["ProfilerStep*"], names["aten::mul"], traced))
    x = lib.ones(2)
    with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU],
                              schedule=lib.profiler.schedule(wait=1, warmup=1, active=2,
                                                             repeat=2),
                              on_trace_ready=handler) as p:
        for _ in range(steps):
            x * 2
            p.step()
    return ready


@pytest.mark.filterwarnings("ignore:Warning. Profiler clears events")   # both warn once
def test_profile_steps_follow_the_schedule_as_torch(tmp_path):
    want = _scheduled_steps(torch, str(tmp_path / "t.json"))
    assert want == [(2, 2, ["ProfilerStep#2", "ProfilerStep#3"]),
                    (2, 2, ["ProfilerStep#6", "ProfilerStep#7"])]
    assert _scheduled_steps(tl, str(tmp_path / "t.json")) == want


def test_acc_events_keeps_every_window():
    x = tl.ones(2)
    with tl.profiler.profile(activities=[tl.profiler.ProfilerActivity.CPU], acc_events=True,
                             schedule=tl.profiler.schedule(wait=0, warmup=1, active=1,
                                                           repeat=2)) as p:
        for _ in range(4):
            x * 2
            p.step()
    names = collections.Counter(e.name for e in p.events())
    assert names["aten::mul"] == 2 and names["ProfilerStep*"] == 2


def test_trace_handler_file_names(tmp_path):
    x = tl.ones(2)
    for name, gz in ((None, False), ("worker0", True)):
        handler = tl.profiler.tensorboard_trace_handler(str(tmp_path / "tb"), worker_name=name,
                                                        use_gzip=gz)
        with tl.profiler.profile(activities=[tl.profiler.ProfilerActivity.CPU],
                                 on_trace_ready=handler):
            x * 2
    files = sorted(os.listdir(tmp_path / "tb"))
    worker = re.escape(f"{socket.gethostname()}_{os.getpid()}")
    assert len(files) == 2
    assert any(re.fullmatch(worker + r"\.\d{19}\.pt\.trace\.json", f) for f in files)
    gz = next(f for f in files if f.startswith("worker0."))
    assert re.fullmatch(r"worker0\.\d{19}\.pt\.trace\.json\.gz", gz)
    jsonschema.validate(json.loads(gzip.decompress((tmp_path / "tb" / gz).read_bytes())),
                        _trace_schema())


def test_device_trace_from_jax_profiler(tmp_path):
    """A device activity asks jax.profiler for its trace, into the trace handler's directory
    (NOTE [ device trace ]); on this CPU machine it records the CPU client."""
    x = tl.ones(8, 8)
    act = tl.profiler.ProfilerActivity
    with tl.profiler.profile(activities=[act.CPU, act.CUDA],
                             on_trace_ready=tl.profiler.tensorboard_trace_handler(
                                 str(tmp_path))) as p:
        (x @ x).sum()
    assert p.device_trace_dir == str(tmp_path)
    found = [f for _, _, fs in os.walk(tmp_path / "plugins" / "profile") for f in fs]
    assert any(f.endswith(".xplane.pb") for f in found)
    assert any(f.endswith(".pt.trace.json") for f in os.listdir(tmp_path))
    jax.profiler.start_trace(str(tmp_path / "theirs"))   # a trace of the user's own: jax
    try:                                                  # refuses a second, nothing is left on
        with pytest.raises(RuntimeError):
            tl.profiler.profile(activities=[act.CPU, act.CUDA]).__enter__()
        assert _dispatch._profiler is None
    finally:
        jax.profiler.stop_trace()


def test_host_time_waits_for_the_result():
    """NOTE [ profiled host times ]: a CPU op's event lasts until its result is ready, as
    torch's synchronous CPU kernels do; an unwaited jax call returns in microseconds."""
    a = tl.randn(768, 768)
    (a @ a).numpy()
    best = min(_timed(lambda: jax.block_until_ready((a @ a)._value())) for _ in range(3))
    with tl.profiler.profile(activities=[tl.profiler.ProfilerActivity.CPU]) as p:
        a @ a
    mm = next(e for e in p.events() if e.name == "aten::mm")
    assert mm.cpu_time_total >= 0.5 * best * 1e6
    assert best > 2e-3   # the product takes milliseconds, the dispatch microseconds


def _timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def test_flops_and_stack(tmp_path):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                with_flops=True) as ref:
        torch.mm(torch.ones(4, 6), torch.ones(6, 5))
    with tl.profiler.profile(activities=[tl.profiler.ProfilerActivity.CPU], with_flops=True,
                             with_stack=True) as p:
        tl.mm(tl.ones(4, 6), tl.ones(6, 5))
    flops = {e.name: e.flops for e in ref.events()}
    mm = next(e for e in p.events() if e.name == "aten::mm")
    assert mm.flops == flops["aten::mm"] == 2 * 4 * 6 * 5
    assert "test_profiler.py" in mm.stack[0] and "test_flops_and_stack" in mm.stack[0]
    table = p.key_averages(group_by_stack_n=1).table()
    assert "Total FLOPs" in table and "Source Location" in table
    p.export_stacks(str(tmp_path / "stacks.txt"))
    lines = (tmp_path / "stacks.txt").read_text().splitlines()
    assert any(re.fullmatch(r".*test_flops_and_stack \d+", line) for line in lines), lines


def test_autograd_profiler_aliases_as_torch():
    """The objects torch.autograd.profiler and torch.profiler share are shared alike."""
    pairs = [("profiler.record_function", "autograd.profiler.record_function"),
             ("autograd.profiler.EventList", "autograd.profiler_util.EventList"),
             ("autograd.profiler.FunctionEvent", "autograd.profiler_util.FunctionEvent"),
             ("profiler.profile", "profiler.profiler.profile"),
             ("profiler.schedule", "profiler.profiler.schedule"),
             ("profiler.profile", "autograd.profiler.profile")]

    def get(root, path):
        for part in path.split("."):
            root = getattr(root, part)
        return root
    for a, b in pairs:
        assert (get(tl, a) is get(tl, b)) == (get(torch, a) is get(torch, b)), (a, b)
    assert issubclass(tl.profiler.profile, tl.profiler.profiler._KinetoProfile)
    assert [a.name for a in tl.profiler.ProfilerAction] == \
        [a.name for a in torch.profiler.ProfilerAction]
    assert tl.profiler.ProfilerActivity.CPU in tl.profiler.supported_activities()


def test_legacy_profile_and_errors():
    x = tl.ones(3)
    prof = tl.autograd.profiler.profile(record_shapes=True)
    with pytest.raises(RuntimeError, match="Profiler didn't finish running"):
        prof.key_averages()
    with prof:
        x * 3
        with pytest.raises(RuntimeError, match="already enabled"):
            tl.autograd.profiler.profile().__enter__()
    assert [e.name for e in prof.function_events] == ["aten::mul"]
    assert prof.self_cpu_time_total == prof.function_events[0].cpu_time_total > 0
    assert "aten::mul" in prof.table()


def test_nothing_recorded_while_inactive_and_lazy_runs_eagerly():
    x = tl.ones(3)
    with tl.profiler.profile(activities=[tl.profiler.ProfilerActivity.CPU]) as p:
        x * 2
    assert _dispatch._profiler is None
    n = len(p.events())
    x * 2
    with tl.profiler.record_function("outside"):
        x + 1
    assert len(p.events()) == n == 1
    _lazy.enable(True)
    try:
        record = _dispatch._record
        with tl.profiler.profile(activities=[tl.profiler.ProfilerActivity.CPU]) as p:
            y = (x * 2).sum()
            assert y._lazy is None   # ran, not recorded into a segment
        assert _dispatch._record is record
    finally:
        _lazy.enable(False)
    assert _counts(p.events(), lambda e: True) == {"aten::mul": 1, "aten::sum": 1}


def test_training_batch_norm_is_an_event_as_torch():
    """A BatchNorm in training mode (which also writes its running statistics) is one event
    under the module's forward, with its time, as torch's aten::batch_norm is."""
    found = []
    for lib in (torch, tl):
        bn = lib.nn.BatchNorm1d(3)
        with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU]) as p:
            bn(lib.ones(4, 3))
        found.append({a.key: a.count for a in p.key_averages()}.get("aten::batch_norm"))
    assert found[0] == found[1] == 1
