"""DataLoader faults, each checked against PyTorch: bad arguments, iterator misuse, a worker
whose dataset, worker_init_fn or collate_fn raises, one that stalls past ``timeout``, one killed
by a signal or exiting, a 'fork' start after JAX started, and ``timeout`` with slow start-up.

The worker scenarios are library-neutral functions (``run_*``) taking a DataLoader class: torch
runs them once in a fresh process (``torch_runs``), torchlike here, and the outcomes must be
equal.  Every test runs under a deadline that only guards against a hang, and leaves no worker
process behind, even when it fails (``_bounded_and_no_orphans``).
"""
import gc
import inspect
import json
import multiprocessing
import os
import pickle
import re
import signal
import subprocess
import sys
import time
import warnings

import pytest

import torchlike.utils.data as tld
from test_data import Count, both, deadline

# Spawned workers import this module to unpickle its datasets; they never run the tests, and
# importing torch there would add about a second to every start.
if multiprocessing.current_process().name == "MainProcess":
    import torch
    import torch.utils.data

_HANG = 120      # seconds after which a test is taken to hang (a guard, never a measurement)


@pytest.fixture(autouse=True)
def _bounded_and_no_orphans():
    """Fail (TimeoutError) instead of hanging, and kill any worker process the test left."""
    try:
        with deadline(_HANG):
            yield
    finally:
        left = multiprocessing.active_children()
        if left:
            gc.collect()      # a dropped iterator stops its workers
            left = multiprocessing.active_children()
        for p in left:
            p.kill()
            p.join()
    assert not left, f"worker processes left running: {left}"


# ------------------------------------------------------------------------------------------------
# bad arguments and iterator misuse (no worker process starts)
# ------------------------------------------------------------------------------------------------

ARG_ERRORS = [
    ("negative_workers", lambda T, D: D.DataLoader(range(3), num_workers=-1)),
    ("str_workers", lambda T, D: D.DataLoader(range(3), num_workers="2")),
    ("negative_timeout", lambda T, D: D.DataLoader(range(3), timeout=-1)),
    ("none_timeout", lambda T, D: D.DataLoader(range(3), timeout=None)),
    ("prefetch_no_workers", lambda T, D: D.DataLoader(range(3), prefetch_factor=2)),
    ("negative_prefetch", lambda T, D: D.DataLoader(range(3), num_workers=1,
                                                    prefetch_factor=-1)),
    ("persistent_no_workers", lambda T, D: D.DataLoader(range(3), persistent_workers=True)),
    ("sampler_and_shuffle", lambda T, D: D.DataLoader(range(3), sampler=[1], shuffle=True)),
    ("batch_sampler_and_batch_size", lambda T, D: D.DataLoader(range(3), batch_sampler=[[1]],
                                                               batch_size=2)),
    ("batch_sampler_and_drop_last", lambda T, D: D.DataLoader(range(3), batch_sampler=[[1]],
                                                              drop_last=True)),
    ("no_batch_size_drop_last", lambda T, D: D.DataLoader(range(3), batch_size=None,
                                                          drop_last=True)),
    ("batch_size_zero", lambda T, D: D.DataLoader(range(3), batch_size=0)),
    ("batch_size_negative", lambda T, D: D.DataLoader(range(3), batch_size=-1)),
    ("batch_size_float", lambda T, D: D.DataLoader(range(3), batch_size=2.0)),
    ("batch_size_bool", lambda T, D: D.DataLoader(range(3), batch_size=True)),
    ("drop_last_str", lambda T, D: D.DataLoader(range(3), drop_last="yes")),
    ("sampler_not_iterable", lambda T, D: list(D.DataLoader(range(3), sampler=3))),
    ("batch_sampler_not_iterable", lambda T, D: list(D.DataLoader(range(3), batch_sampler=3))),
    ("collate_fn_not_callable", lambda T, D: list(D.DataLoader(range(3), collate_fn=3))),
    ("dataset_without_len", lambda T, D: list(D.DataLoader(5))),
    ("context_without_workers", lambda T, D: D.DataLoader(range(3),
                                                          multiprocessing_context="spawn")),
    ("fork_context_without_workers", lambda T, D: D.DataLoader(
        range(3), multiprocessing_context=multiprocessing.get_context("fork"))),
    ("bad_context_name", lambda T, D: D.DataLoader(range(3), num_workers=1,
                                                   multiprocessing_context="bogus")),
    ("bad_context_type", lambda T, D: D.DataLoader(range(3), num_workers=1,
                                                   multiprocessing_context=3)),
    ("iterable_shuffle", lambda T, D: D.DataLoader(_count(D, 3), shuffle=True)),
    ("iterable_sampler", lambda T, D: D.DataLoader(_count(D, 3), sampler=[1])),
    ("iterable_batch_sampler", lambda T, D: D.DataLoader(_count(D, 3), batch_sampler=[[1]])),
    ("timeout_without_workers", lambda T, D: list(D.DataLoader(range(3), timeout=1))),
    ("too_many_workers", lambda T, D: len(D.DataLoader(range(3),
                                                       num_workers=len(os.sched_getaffinity(0))
                                                       + 1))),
]


def _count(D, n):
    """range(n) as an IterableDataset of the library ``D``."""
    if D is tld:
        return Count(n)

    class TorchCount(torch.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(n))
    return TorchCount()


@pytest.mark.parametrize("fn", [pytest.param(f, id=name) for name, f in ARG_ERRORS])
def test_loader_argument_checks(fn):
    both(fn)


def _exhausted_then_next(loader):
    it = iter(loader)
    return [list(it), next(it, "end"), next(it, "end")]


REUSE = [
    ("exhausted_then_next", lambda T, D: _exhausted_then_next(D.DataLoader(range(3)))),
    ("two_iterators_at_once", lambda T, D: list(zip(*[D.DataLoader(range(3))] * 2))),
    ("iter_of_iterator", lambda T, D: (lambda it: iter(it) is it)(iter(D.DataLoader(range(3))))),
    ("len_of_iterator", lambda T, D: len(iter(D.DataLoader(range(5), batch_size=2)))),
    ("next_of_loader", lambda T, D: next(D.DataLoader(range(3)))),
    ("pickle_iterator", lambda T, D: pickle.dumps(iter(D.DataLoader(range(3))))),
]


@pytest.mark.parametrize("fn", [pytest.param(f, id=name) for name, f in REUSE])
def test_iterator_reuse_single_process(fn):
    both(fn)


# ------------------------------------------------------------------------------------------------
# worker faults: library-neutral scenarios (their source is also torch's script)
# ------------------------------------------------------------------------------------------------

class TwoArgError(Exception):
    """An exception that cannot be rebuilt from one message (it comes back as RuntimeError)."""

    def __init__(self, a, b):
        super().__init__(a, b)


class Faults:
    """A map-style dataset whose sample i does what ``plan[i]`` says; no base class, so that
    torch's DataLoader and torchlike's both take it.  A "stall" lasts until the file
    ``release`` exists (a minute at most, so that nothing is left running)."""

    def __init__(self, plan, release=None):
        self.plan, self.release = plan, release

    def __len__(self):
        return len(self.plan)

    def __getitem__(self, i):
        kind = self.plan[i]
        if kind == "ValueError":
            raise ValueError(f"bad sample {i}")
        if kind == "TwoArgError":
            raise TwoArgError("a", "b")
        if kind == "KeyError":
            raise KeyError("missing")
        if kind == "stall":
            for _ in range(6000):
                if os.path.exists(self.release):
                    break
                time.sleep(0.01)
        if kind in ("killed", "exit"):
            time.sleep(2.0)    # torch's SIGCHLD handler raises where its main process is: in next()
            if kind == "killed":
                os.kill(os.getpid(), signal.SIGKILL)
            os._exit(3)
        return kind if kind == "uncollatable" else i


def checked_collate(sample):
    if sample == "uncollatable":
        raise TypeError(f"cannot collate {sample!r}")
    return sample


def failing_init(worker_id):
    raise OSError(f"no shard for worker {worker_id}")


def outcome(it):
    """What next(it) gives: ["ok", item], ["end"], or the exception as [type, its first two
    lines, its last line, its cause], with the workers' pids written PID and this module's
    name dropped (a traceback names an exception's module; torch runs these in __main__)."""
    try:
        return ["ok", next(it)]
    except StopIteration:
        return ["end"]
    except Exception as e:      # noqa: BLE001 - the exception is the outcome compared
        lines = str(e).rstrip("\n").split("\n")
        got = [type(e).__name__, lines[:2], lines[-1],
               None if e.__cause__ is None else [type(e.__cause__).__name__, str(e.__cause__)]]
        text = json.dumps(got).replace(f"{__name__}.", "")
        for w in it._workers:
            text = re.sub(rf"\b{w.pid}\b", "PID", text)
        return json.loads(text)


def run_faults(DataLoader, release):
    """Faults' samples in turn through one worker (prefetch_factor=1: a sample is asked for once
    the one before it came back) with timeout=3: three exceptions, one from collate_fn, a stall
    that times out and then arrives once released, and a worker killed by SIGKILL."""
    plan = ["ok", "ValueError", "TwoArgError", "KeyError", "uncollatable", "stall", "killed"]
    it = iter(DataLoader(Faults(plan, release), batch_size=None, num_workers=1, prefetch_factor=1,
                         timeout=3, collate_fn=checked_collate))
    got = [outcome(it) for _ in range(6)]
    open(release, "w").close()
    return got + [outcome(it) for _ in range(3)]


def run_exit(DataLoader):
    """A worker that exits with code 3."""
    it = iter(DataLoader(Faults(["exit"]), batch_size=None, num_workers=1))
    return [outcome(it) for _ in range(2)]


def run_init_error(DataLoader):
    """worker_init_fn raises: its error is the first result, and the worker, left without a
    fetcher, fails every task after it (torch's UnboundLocalError)."""
    it = iter(DataLoader(range(3), batch_size=None, num_workers=1, worker_init_fn=failing_init))
    return [outcome(it) for _ in range(4)]


def run_reuse(DataLoader, **kw):
    """One persistent worker: an epoch, next() after its end, iter() again (the same iterator,
    broken off after one batch), and a full epoch after that."""
    loader = DataLoader(range(6), batch_size=2, num_workers=1, persistent_workers=True, **kw)
    it = iter(loader)
    first = [b.tolist() for b in it]
    after_end = next(it, "end")
    again = iter(loader)
    broken_off = next(again).tolist()
    return [first, after_end, again is it, iter(it) is it, broken_off,
            [b.tolist() for b in iter(loader)]]


_SCENARIOS = (TwoArgError, Faults, checked_collate, failing_init, outcome, run_faults, run_exit,
              run_init_error, run_reuse)

_TORCH_SCRIPT = """
import json, os, re, signal, sys, time
from torch.utils.data import DataLoader
{scenarios}
if __name__ == "__main__":
    print(json.dumps({{"faults": run_faults(DataLoader, sys.argv[1]), "exit": run_exit(DataLoader),
                      "init_error": run_init_error(DataLoader),
                      "reuse": run_reuse(DataLoader, multiprocessing_context="fork")}}))
"""


class _TorchRuns:
    """torch's outcome of each scenario, computed in a fresh process (where its default 'fork'
    start is safe; this one runs JAX's threads) and read when first needed, so that torch runs
    while torchlike does."""

    def __init__(self, release):
        script = _TORCH_SCRIPT.format(
            scenarios="\n".join(inspect.getsource(f) for f in _SCENARIOS))
        self.process = subprocess.Popen([sys.executable, "-c", script, release],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.outcomes = None

    def __getitem__(self, name):
        if self.outcomes is None:
            out, err = self.process.communicate(timeout=_HANG)
            assert self.process.returncode == 0, err
            self.outcomes = json.loads(out)
        return self.outcomes[name]


@pytest.fixture(scope="module")
def torch_runs(tmp_path_factory):
    runs = _TorchRuns(str(tmp_path_factory.mktemp("torch") / "release"))
    yield runs
    runs.process.kill()
    runs.process.communicate()


def _same(got, ref):
    assert json.loads(json.dumps(got)) == ref


def test_worker_faults(torch_runs, tmp_path):
    """A dataset's and a collate_fn's exceptions come back with their type, the worker named
    and its traceback; a stalled sample raises torch's timeout error (and arrives later); a
    worker killed by a signal raises at once, with torch's message and cause."""
    _same(run_faults(tld.DataLoader, str(tmp_path / "release")), torch_runs["faults"])


def test_worker_exit(torch_runs):
    _same(run_exit(tld.DataLoader), torch_runs["exit"])


def test_worker_init_fn_raises(torch_runs):
    _same(run_init_error(tld.DataLoader), torch_runs["init_error"])


# ------------------------------------------------------------------------------------------------
# start method and start-up (NOTE [ DataLoader worker start method ], NOTE [ DataLoader timeout ])
# ------------------------------------------------------------------------------------------------

_FORK_WARNING = "DataLoader workers cannot be started with 'fork'"


def test_fork_falls_back_to_spawn(torch_runs):
    """'fork' after JAX started would hang the workers: they start with spawn, with a warning,
    and the script gives torch's results (iterator reuse with a persistent worker)."""
    with pytest.warns(UserWarning, match=_FORK_WARNING):
        got = run_reuse(tld.DataLoader, multiprocessing_context="fork")
    _same(got, torch_runs["reuse"])


class Unpicklable:
    def __init__(self):
        self.f = lambda: 0

    def __len__(self):
        return 2

    def __getitem__(self, i):
        return i


def _start_warnings_and_error(D, **kw):
    """The warnings and the error of starting workers over an Unpicklable dataset."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(Exception) as error:
            iter(D.DataLoader(Unpicklable(), num_workers=1, **kw))
    return [str(w.message) for w in caught], (type(error.value), str(error.value))


def test_fork_with_unpicklable_dataset_raises_spawns_error():
    """Where spawn cannot run a 'fork' script, it fails at once with torch-with-spawn's error
    and warning (its first two sentences; torchlike's advice differs), after the fork warning.
    Without a context, spawn is used silently, even where the program's start method is fork."""
    (ref_warning,), ref_error = _start_warnings_and_error(torch.utils.data,
                                                          multiprocessing_context="spawn")
    previous = multiprocessing.get_start_method(allow_none=True)
    multiprocessing.set_start_method("fork", force=True)
    try:
        for ctx in ("fork", multiprocessing.get_context("fork"), None):
            caught, error = _start_warnings_and_error(tld, multiprocessing_context=ctx)
            assert error == ref_error
            if ctx is not None:
                assert caught.pop(0).startswith(_FORK_WARNING)
            assert [w.split(". ")[:2] for w in caught] == [ref_warning.split(". ")[:2]]
    finally:
        multiprocessing.set_start_method(previous, force=True)


class SlowToUnpickle:
    """range(n) whose copy in a worker takes ``delay`` seconds to unpickle."""

    def __init__(self, n, delay):
        self.n, self.delay = n, delay

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return i

    def __setstate__(self, state):
        time.sleep(state["delay"])
        self.__dict__.update(state)


def test_timeout_does_not_count_worker_start_up():
    """Two workers that take more than ``timeout`` to start (torch's forked workers start in
    milliseconds) still deliver; an iterator dropped mid-epoch stops them."""
    ref = list(torch.utils.data.DataLoader(SlowToUnpickle(4, 2.0), batch_size=None))
    it = iter(tld.DataLoader(SlowToUnpickle(4, 2.0), batch_size=None, num_workers=2, timeout=1))
    assert [next(it), next(it)] == ref[:2]
    workers = it._workers
    del it
    gc.collect()
    assert all(w.exitcode is not None for w in workers)
