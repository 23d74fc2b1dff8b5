"""Backward programs compiled on another core while the forward runs.

NOTE [ backward programs compiled ahead ]
An eager program's first steps are mostly XLA compiling, one program at a time on the thread
that runs the step: each recorded op's forward at a new shape, then, when ``backward()`` reaches
its node, that node's backward (scripts/bench_programs.py --by-op: cnn_digits compiled 15
backward programs in 0.62 s of XLA's time, word_lstm 19 in 1.04 s, transformer_lm 48 in 1.29 s,
each with tracing and lowering on top).  A per-op program compiles on about one core (20 small
programs: 0.76 s of wall time, 0.89 s of CPU time; 2-core CPU, jax 0.10.2), XLA's compile lets
go of the GIL, and two threads compiling 20 small programs take 0.44-0.51 s where one takes
0.69-0.86.  So where a recorded op's forward has just met a new shape (its program traced for
it, or run without one), the program its node's backward will run, for the avals it will be
called with (the outputs' for the incoming gradient, on their device; the primals; the kept
residuals), is handed to a worker thread that traces, lowers and compiles it while the forward
goes on.  jax's caches of traces, lowered modules and executables are the ones the later call
looks in, so that call finds it compiled; what a job keeps is avals (ShapeDtypeStructs), never
arrays.  A new shape is the signal: a trace of the op's forward program, or the first call of a
shape that runs without one, on the host (NOTE [ new shapes moved on the host ] in _host.py: an
embedding's gather, a view) or in a longer call's program
(NOTE [ a short call in a longer one's program ] in _ops/padded.py: its padded gradients'
program); a forward whose program was compiled already has, as a rule, its backward compiled
too, and asks nothing (on the recorded path: reading the op's count of new shapes twice).  In
lazy mode (NOTE [ lazy segments ] in _lazy.py) nothing is handed over: an op's outputs are
pending, and reading them to describe its backward would run the segment; an operand pending
outside it (a deferred cut: NOTE [ cuts gathered by stack ] in _ops/shape.py) is run before the
op, which then hands its backward over as any other (examples/pytorch/word_lstm.py's embedding
of each window it cuts from its corpus: 39 ms of the main thread's compiles in its first
backward).  An op under a folded output view hands in its own node's program and the view's;
folded operands' view nodes theirs (NOTE [ folded views ] in _dispatch.py).  The zeros that
stand for a missing gradient of a multi-output op are made on the device of one that arrived, as
the program was compiled for (an LSTM's h_n and c_n: jax compiles a program again for an
uncommitted operand).

Measured, one training step of scripts/bench_train.py's models in a fresh process (2-core CPU,
two runs each way, interleaved): the digits CNN's first step 1.77, 1.70 -> 1.47, 1.41 s (its
forward 0.53 -> 0.86 s: the worker's tracing takes the GIL and its compiles a core; its backward
0.84 -> 0.23 s; 26 programs compiled on the step's thread -> 14-15, 11-12 on the worker's), the
Transformer's 2.99, 3.40 -> 2.68, 2.42 s (55 -> 28 on the step's thread).

A node's backward that is still waiting when ``backward()`` reaches it is taken back and
compiled there as before (the worker takes jobs oldest first, the backward needs the newest
first, so the two meet in the middle); one the worker is compiling is waited for (never
compiled twice).  What the worker compiles that no backward runs (a forward recorded and never
differentiated) costs the other core's time once per shape.  Errors are left to the call that
needs the program, which raises them where the user's backward is.  Only the op table's own
functions are traced there (``Op.ahead``): a user's jax function (``from_jax``, a scripted
module's program) may touch state as it is traced, as torchlike.jit's capture swaps its module's
parameters.  Only with more than one core (``os.sched_getaffinity``), and not under
``TORCHLIKE_COMPILE_AHEAD=0`` (read at import; ``torchlike.compiler.config.compile_ahead``
switches it at run time).  The worker is a daemon thread started at the first job; at exit it
is stopped after its current compile, and a forked child starts with none.
"""
import atexit
import collections
import os
import threading

import jax
import numpy as np

from . import _x64

_MAX_JOBS = 256   # jobs waiting; the oldest are dropped first


def _cores():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


enabled = os.environ.get("TORCHLIKE_COMPILE_AHEAD", "1") != "0" and _cores() > 1
waiting = {}   # key -> None (queued) or a threading.Event (compiling): what a call must claim
_jobs = collections.OrderedDict()   # key -> (fn, args, 64-bit types), queued in order
_last = collections.OrderedDict()   # the same, taken when _jobs is empty
_lock = threading.Condition()
_worker = None
_stopping = False


def _aval(x):
    """What of ``x`` (a concrete array, a ShapeDtypeStruct, a Python number) its program is
    compiled for (NOTE [ reading an array's shape and dtype ] in _dispatch.py)."""
    if isinstance(x, jax.Array):
        a = x.aval
        return a.shape, a.dtype, a.weak_type
    if type(x) is jax.ShapeDtypeStruct:
        return x.shape, x.dtype, x.weak_type
    if type(x) is np.ndarray:
        return x.shape, x.dtype, False
    return type(x)   # (a Python number: its type, whatever its value)


def abstract(shape, dtype, like, weak_type=False):
    """What an array of this shape and dtype on the device of the array ``like`` is to a
    program: on that device where ``like`` is committed to one, as jax compiles for it."""
    return jax.ShapeDtypeStruct(shape, dtype, weak_type=weak_type,
                                sharding=like.sharding if like.committed else None)


def _abstract(x):
    """``x`` as the worker needs it: an array's ShapeDtypeStruct, so that a job holds no array
    alive."""
    if isinstance(x, jax.Array):
        return abstract(x.shape, x.dtype, x, x.aval.weak_type)
    if type(x) is np.ndarray:
        return jax.ShapeDtypeStruct(x.shape, x.dtype)
    return x


def _key(fn, args):
    return (id(fn), *[_aval(x) for x in jax.tree_util.tree_leaves(args)])


def submit(fn, args, last=False):
    """Compile ``fn`` (a jax.jit function) for ``args`` (concrete arrays, Python numbers and
    ShapeDtypeStructs, as it will be called) on the worker thread; ``last``: after every job
    not so marked (a program needed after the backward's: NOTE [ the first update compiled
    ahead ] in optim/optimizer.py)."""
    global _worker
    key = _key(fn, args)
    args = jax.tree_util.tree_map(_abstract, args)
    with _lock:
        if key in waiting or _stopping:
            return
        jobs = _last if last else _jobs
        while len(jobs) >= _MAX_JOBS:
            del waiting[jobs.popitem(last=False)[0]]
        jobs[key] = fn, args, _x64.enabled()   # (traced with the caller's 64-bit types)
        waiting[key] = None
        if _worker is None:
            _worker = threading.Thread(target=_work, name="torchlike-compile-ahead",
                                       daemon=True)
            _worker.start()
        _lock.notify()


def claim(fn, args):
    """Before ``fn(*args)`` runs: take its job back if the worker has not started it, or wait
    until the worker has compiled it."""
    key = _key(fn, args)
    with _lock:
        if key not in waiting:
            return
        done = waiting[key]
        if done is None:
            (_jobs if key in _jobs else _last).pop(key)
            del waiting[key]
            return
    done.wait()


def _work():
    while True:
        with _lock:
            while not (_jobs or _last) and not _stopping:
                _lock.wait()
            if _stopping:
                return
            key, (fn, args, x64) = (_jobs or _last).popitem(last=False)
            done = waiting[key] = threading.Event()
        prev = _x64.swap(x64)
        try:
            fn.lower(*args).compile()
        except Exception:   # (the call that needs the program raises it)
            pass
        finally:
            _x64.restore(prev)
            with _lock:
                del waiting[key]
            done.set()


def _stop():
    global _stopping
    with _lock:
        _stopping = True
        _jobs.clear()
        _last.clear()
        for key in [k for k, v in waiting.items() if v is None]:
            del waiting[key]
        _lock.notify_all()
    if _worker is not None:
        _worker.join(timeout=30)


def _forked():
    global _lock, _worker, _stopping
    _lock, _worker, _stopping = threading.Condition(), None, False
    _jobs.clear()
    _last.clear()
    waiting.clear()


atexit.register(_stop)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked)
