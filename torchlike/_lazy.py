"""Lazy eager mode: ops record into a segment, and a repeated segment runs as one program.

NOTE [ lazy segments ]
Per-op dispatch pays one XLA call per op (6-9 µs on the 2-core CPU for a small one) and never
fuses a forward; docs/architecture.md §2.6 measured the alternative.  With lazy mode on,
``_dispatch.call`` does not run an op: it appends a *record* (the op, its static arguments, its
compute dtype, and references to its operands: an array, a Python scalar, or an earlier record's
output) to the thread's open *segment* and returns a Tensor whose value is *pending*
(``Tensor._lazy`` holds a ``Pending``, and the Tensor has no ``_arr`` yet).  A pending value
knows its shape and dtype (jax.eval_shape of the op, cached by the op and its operands' avals),
so shapes, dtypes and broadcasting are checked at the op, as eagerly, and metadata reads run
nothing.

Anything that needs a value *flushes* the segment: reading ``_arr`` of a pending tensor
(``Tensor.__getattr__``, so every read outside dispatch is covered: ``item()``, printing, numpy,
an op that is not recorded), or a segment reaching ``max_records``.  The flush runs the records
and hands each pending value still referenced (by a tensor, a node, a caller: its refcount) its
array; a value nobody can read is not an output, so XLA may fuse it away.

What runs at the flush is a rent-or-buy choice, as for the fused backward (NOTE [ fused backward ]
in autograd/fused.py): each record steps through a trie of the segments seen before (the key of a
step is the op, its statics and dtype, and its operands' avals or record numbers), so the flush
finds the segment's node without hashing the whole segment.  A node first runs its records one
by one on the per-op programs (eager's cost plus the recording: the rent); once it has been
reached ``fuse_after`` times *and* the time its flushes spent so (measured) has reached what
compiling a segment costs (the buy: the mean compile time of the segments compiled so far,
``buy_after`` seconds where set), its records are traced once into one ``jax.jit`` and every
later flush is one call.  Paying the rent up to the buy's price costs at most twice the best
choice in hindsight, whatever the number of flushes to come.  A count alone (32, as the fused
backward waits) compiled the digits CNN's whole step in a 92-step program (3.0 s of compiling
for ~1 ms a step saved, on top of the fused backward and Adam's update compiled earlier); by
time, a step whose ops cost 5 ms compiles after 100-200 steps, a tiny one after thousands.
A segment of one record always runs per op, and an op that begins segments which always end
right after it (its result read at once, every time: ``print(x * 2)``, ``x[i].item()`` in a loop)
runs eagerly, unrecorded, once that has happened ``solo_after`` times: recording it and running
the segment at the read cost about 1.5x what the op costs eagerly (a 64x64 mul read at once:
16 us against 9.6), and there is no program to buy.  Only the segment's first op is so judged,
by its trie node (it never had a next record), so an op that begins a longer segment, as a
step's first op does, is recorded as before; where that op later begins longer ones, they begin
at its next op.

The autograd graph is recorded as eagerly: nodes are made at the op, holding Pending primals
that ``OpNode._live_primals`` resolves, so grad_fn names, hooks and version checks are unchanged.
A fused backward over a pending forward is itself recorded (``record_call``), and so is the
optimizer's update after it, which then flushes (``run_call``): a training step is one program.
In-place writes into a pending root and ``detach()`` of one stay pending.  Segments must line up
with steps to repeat: a second backward recorded in one segment (parameters updated by hand,
gradients accumulated) flushes it.  Ops made per call and ops on traced or meta values run
eagerly (their pending operands first), and a segment run because a trace reads it computes
concrete values (``jax.core.eval_context``), never the trace's tracers; an op's dynamic
statics (an index) are recorded as operands, so ``x[i]`` for every ``i`` is one path of the
trie.  Waiting for a device (``synchronize``, an Event's mark) runs the open segment first.

A segment runs on one device.  An op whose arrays are laid out over several (a sharded
parameter, a mesh's batch) runs eagerly, as do ops across devices: one program's outputs are laid
out as its compiler chooses (a gradient zeroed in place came out replicated, where the eager
op keeps its sharding), and a loss's gradient must start on the devices the loss will be on.
"""
import threading
from sys import getrefcount
from time import perf_counter

import jax
import numpy as np

from . import _x64
from ._quick import inlined

_SCALARS = (bool, int, float, complex)
_INT64 = 2 ** 63

enabled = False      # set by enable(); dispatch reads _dispatch._record
ever_enabled = False   # whether any value may be pending (one made while it was on)
fuse_after = 32      # flushes of one segment before it may be compiled into one program
solo_after = 8       # segments ended at their first op before that op runs unrecorded there
buy_after = None     # seconds of op-by-op flushes before a segment is compiled (None: learned)
_compiles = [1.0, 1]   # seconds spent compiling segments, and how many (a prior of one second)
max_records = 256    # a longer segment is flushed and a new one begun
max_trie = 100_000   # trie nodes kept before the trie (and its programs) is dropped

_AVALS = {}          # (op, static, dt, operand avals) -> output avals (a tuple)


class Pending:
    """A value recorded in a segment and not run yet: its aval, and, after the flush, its array.
    Stands in for the array where dispatch and autograd keep arrays (an operand, a primal)."""

    __slots__ = ("seg", "index", "aval", "shape", "dtype", "value")

    def __init__(self, seg, index, aval):
        self.seg = seg
        self.index = index
        self.aval = aval
        self.shape = aval.shape
        self.dtype = aval.dtype
        self.value = None

    def devices(self):
        return self.seg.devices

    def get(self):
        """The array, running the segment first if it has not run."""
        if self.value is None:
            self.seg.flush()
            if self.value is None:
                raise RuntimeError("the value of this tensor was lost: running the ops that "
                                   "compute it failed earlier (see that error)")
        return self.value

    def value_for(self, tensor):
        """The array, and ``tensor`` (pending on it) holding it from now on."""
        v = self.get()
        if tensor._lazy is self:
            tensor._arr = v
            del tensor._lazy
        return v


class _Trie:
    """A node of the trie of segments: reached by a segment whose records so far are the path
    to it.  Holds the outputs' avals of its last record, and how often a flush ended here (or,
    once compiled, the program)."""

    __slots__ = ("children", "avals", "flushes", "rent", "programs", "solo")

    def __init__(self, avals):
        self.children = {}
        self.avals = avals
        self.flushes = 0
        self.rent = 0.0        # seconds its flushes took, run op by op
        self.programs = None   # {the outputs still referenced: program}, once compiled
        self.solo = False      # a segment's first op, read at once every time: run eagerly


_root = _Trie(())
_trie_nodes = 0


class Segment:
    """The open records of one thread: operands in ``inputs``, records in ``records``
    (op, static, dt, refs, multi), their outputs in ``pendings``, and the trie node reached."""

    __slots__ = ("inputs", "records", "pendings", "node", "devices", "backwards")

    def __init__(self):
        self.inputs = []
        self.records = []
        self.pendings = []
        self.node = _root
        self.devices = None
        self.backwards = 0   # backward passes recorded

    def flush(self):
        """Run the records and give every pending value still referenced its array."""
        if getattr(_local, "seg", None) is self:
            _local.seg = Segment()
        records = self.records
        if not records:
            return
        pendings = self.pendings
        # NOTE: referenced by the list and getrefcount's argument only: nobody can read it
        live = tuple([i for i in range(len(pendings)) if getrefcount(pendings[i]) > 2])
        node = self.node
        prev = _x64.swap(True)
        # concrete values even where a trace reads them (torchlike.compile's, a user's jax.jit
        # over eager code): the records' inputs are concrete, and a value computed inside the
        # trace would be its tracer, leaking out of it.  (Not ensure_compile_time_eval: it
        # folds the constants of every program traced meanwhile, each one a program of its own.
        # Outside any trace it would change nothing, and entering it costs about 1.6 us.)
        evaluating = None if _top_level() else jax.core.eval_context()
        if evaluating is not None:
            evaluating.__enter__()
        try:
            program = None
            if len(records) > 1:
                if node.programs is None:
                    node.flushes += 1
                    if node.flushes >= fuse_after and node.rent >= _price():
                        node.programs = {}
                if node.programs is not None:
                    program = node.programs.get(live)
                    if program is None:
                        start = perf_counter()
                        program = node.programs[live] = _program(records, live)
                        values = program(*self.inputs)
                        _compiles[0] += perf_counter() - start
                        _compiles[1] += 1
                    else:
                        values = program(*self.inputs)
            if program is None:
                if len(records) == 1:   # (never compiled: its rent is not counted)
                    every = _per_op(records, self.inputs)
                    node.flushes += 1
                    if node.flushes >= solo_after and not node.children:
                        node.solo = True
                else:
                    start = perf_counter()
                    every = _per_op(records, self.inputs)
                    node.rent += perf_counter() - start
                values = [every[i] for i in live]
        finally:
            if evaluating is not None:
                evaluating.__exit__(None, None, None)
            _x64.restore(prev)
        for i, v in zip(live, values):
            pendings[i].value = v
        self.inputs = self.records = self.pendings = ()


_local = threading.local()
_local.seg = Segment()


def flush():
    """Run the calling thread's open segment, if it has records."""
    seg = getattr(_local, "seg", None)
    if seg is not None and seg.records:
        seg.flush()


def record(op, static, dt, arrays, n_dynamic=0):
    """Record ``op`` over ``arrays`` (arrays, Pendings, Python scalars; its ``n_dynamic``
    dynamic values last) in the thread's segment; returns its Pending output(s), or None where
    the op must run eagerly."""
    seg = getattr(_local, "seg", None)
    if seg is None:
        seg = _local.seg = Segment()
    elif len(seg.records) >= max_records:
        seg.flush()
        seg = _local.seg
    inputs = seg.inputs
    n_in = len(inputs)
    refs, key = [], []
    devices = seg.devices
    for a in arrays:
        t = type(a)
        if t is Pending:
            if a.seg is seg:
                refs.append(-1 - a.index)
                key.append(a.index)
                continue
            a = a.get()   # a flushed segment's (or another thread's) value
        elif t in _SCALARS:
            if t is int and not -_INT64 <= a < _INT64:   # read as PyTorch reads it, eagerly
                del inputs[n_in:]
                return None
            refs.append(len(inputs))
            inputs.append(a)
            key.append(t)
            continue
        if t is np.ndarray:   # a random op's key data, as eagerly (numpy, off the host)
            aval = _host_aval(a)
        else:
            aval = getattr(a, "aval", None)
            if aval is None:
                del inputs[n_in:]
                return None
            if devices is None:
                devices = a.devices()
                if _MANY_DEVICES is None:   # (asked here: its backend has started)
                    _count_devices()
                if _MANY_DEVICES and len(devices) > 1:   # laid out over several: eagerly
                    del inputs[n_in:]
                    return None
            elif _MANY_DEVICES and a.devices() != devices:
                del inputs[n_in:]
                return None
        refs.append(len(inputs))
        inputs.append(a)
        key.append(aval)
    if devices is None:   # nothing places the result (scalars, host data): run it eagerly
        del inputs[n_in:]
        return None
    step = (op, static, dt, tuple(key))
    node = seg.node.children.get(step)
    if node is None:
        try:
            node = _new_node(seg, step, arrays, n_dynamic)
        except BaseException:   # an error at the op (shapes, dtypes): nothing recorded
            del inputs[n_in:]
            raise
    if node.solo:   # (a first op: NOTE above; only a segment of one record sets it)
        del inputs[n_in:]
        return None
    seg.devices = devices
    seg.node = node
    multi, avals = node.avals
    pendings = seg.pendings
    first = len(pendings)
    seg.records.append((op, static, dt, tuple(refs), multi, n_dynamic))
    if not multi:
        p = Pending(seg, first, avals[0])
        pendings.append(p)
        return p
    outs = tuple([Pending(seg, first + k, a) for k, a in enumerate(avals)])
    pendings.extend(outs)
    return outs


def _new_node(seg, step, arrays, n_dynamic):
    """The trie node a segment reaches by ``step``, new: its outputs' avals from the cache, or
    from jax.eval_shape of the op."""
    global _trie_nodes
    op, static, dt, key = step
    akey = (op, static, dt, tuple([seg.pendings[k].aval if type(k) is int else k
                                   for k in key]))
    out = _AVALS.get(akey)
    if out is None:
        out = _AVALS[akey] = _out_avals(op, static, dt, arrays, n_dynamic)
    if _trie_nodes >= max_trie:
        _drop_trie()
    node = seg.node.children[step] = _Trie(out)
    _trie_nodes += 1
    return node


_CALLS = {}   # (fn, operand treedef) -> (the Op recording fn, the results' treedef)


def recorded_backward():
    """A backward pass joined the segment.  A second one means steps without an optimizer
    (parameters updated by hand, or gradients accumulated): flushed here, so that segments
    still line up with steps and repeat."""
    seg = getattr(_local, "seg", None)
    if seg is None:
        return
    seg.backwards += 1
    if seg.backwards > 1:
        seg.flush()


def record_call(fn, args):
    """Record ``fn(*args)`` (a jitted jax function over a pytree of arrays, Pendings and Python
    scalars) as one record: the pytree of its results with Pendings for arrays, or None where
    it must run now.  How the fused backward and an optimizer's update join a segment."""
    flat, tree = jax.tree_util.tree_flatten(args)
    entry = _CALLS.get((fn, tree))
    if entry is None:
        from . import _dispatch
        def flat_fn(*xs):
            args = jax.tree_util.tree_unflatten(tree, xs)
            try:
                out = fn(*args)
            except ValueError as e:   # in the segment's program (NOTE [ quick compiles ])
                out = inlined(e, fn, *args)
            return tuple(jax.tree_util.tree_leaves(out))
        out = fn.eval_shape(*jax.tree_util.tree_unflatten(tree, [_spec(x) for x in flat]))
        # per_call: run as it is where the segment runs op by op (``fn``'s own program, not a
        # jit of flat_fn compiling the same work again); the segment's program inlines it
        op = _dispatch.Op(getattr(fn, "__name__", "call"), flat_fn, None, per_call=True)
        entry = _dispatch.remember(_CALLS, (fn, tree), (op, jax.tree_util.tree_structure(out)))
    op, out_tree = entry
    outs = record(op, (), None, flat)
    return None if outs is None else jax.tree_util.tree_unflatten(out_tree, outs)


def run_call(fn, args):
    """``fn(*args)`` now: recorded and flushed with the open segment where ``args`` hold
    pending values (so it runs in the segment's program), else called on the values."""
    if not ever_enabled or not any(type(x) is Pending for x in jax.tree_util.tree_leaves(args)):
        try:   # (an optimizer's step: ~135 operands for Adam over 27 tensors, 40 us to scan)
            return fn(*args)
        except ValueError as e:   # inside another trace (NOTE [ quick compiles ])
            return inlined(e, fn, *args)
    if enabled:
        out = record_call(fn, args)
        if out is not None:
            flush()
            return jax.tree_util.tree_map(Pending.get, out)
    return fn(*jax.tree_util.tree_map(_concrete, args))


def read(tensor):
    """What to compute on from ``tensor``: its Pending where it is a pending storage root
    (nothing runs), else its array."""
    p = tensor._lazy
    return p if p is not None and tensor._root is None else tensor._value()


def _concrete(x):
    return x.get() if type(x) is Pending else x


def _spec(x):
    """What jax.eval_shape takes for an operand: a scalar itself, else its shape and dtype."""
    if type(x) in _SCALARS:
        return x
    a = getattr(x, "aval", x)   # a numpy array has none
    return jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=getattr(a, "weak_type", False))


_HOST_AVALS = {}


def _host_aval(a):
    k = (a.shape, a.dtype)
    aval = _HOST_AVALS.get(k)
    if aval is None:
        aval = _HOST_AVALS[k] = jax.core.ShapedArray(a.shape, a.dtype)
    return aval


def _out_avals(op, static, dt, arrays, n_dynamic):
    """(multi, avals of the outputs) of ``op`` over these operands, by jax.eval_shape."""
    from . import _dispatch
    specs = [_spec(a) for a in arrays]
    if n_dynamic or op.per_call:
        out = jax.eval_shape(_dispatch.traceable_fn(op, static, dt, n_dynamic), *specs)
    else:   # the op's own jitted forward, whose trace an op-by-op flush then reuses: one trace
        out = _dispatch.forward_fn(op, static, dt).eval_shape(*specs)
    multi = isinstance(out, (tuple, list))
    outs = out if multi else (out,)
    return multi, tuple(jax.core.ShapedArray(o.shape, o.dtype, weak_type=o.weak_type)
                        for o in outs)


def _drop_trie():
    """The trie grew past ``max_trie`` nodes (a program over ever new shapes): start again
    (NOTE [ bounded program caches ] in _dispatch.py)."""
    global _root, _trie_nodes
    _root = _Trie(())
    _trie_nodes = 0
    _AVALS.clear()   # (open segments finish on their old paths)


def _price():
    """What compiling a segment is expected to cost, in seconds (NOTE [ lazy segments ])."""
    return buy_after if buy_after is not None else _compiles[0] / _compiles[1]


def _operands(refs, inputs, values):
    return [inputs[r] if r >= 0 else values[-1 - r] for r in refs]


def _per_op(records, inputs):
    """Run the records one by one on the ops' own cached programs (the rent phase)."""
    values = []
    for op, static, dt, refs, multi, n_dynamic in records:
        out = _recorded_forward(op, static, dt, _operands(refs, inputs, values), n_dynamic)
        if multi:
            values.extend(out)
        else:
            values.append(out)
    return values


def _program(records, live):
    """One jitted program replaying ``records`` over the segment's inputs and returning the
    values at the positions ``live`` (the buy phase)."""
    from . import _dispatch
    steps = [(_dispatch.traceable_fn(op, static, dt, n_dynamic), refs, multi)
             for op, static, dt, refs, multi, n_dynamic in records]

    def replay(*inputs):
        values = []
        for fn, refs, multi in steps:
            out = fn(*_operands(refs, inputs, values))
            if multi:
                values.extend(out)
            else:
                values.append(out)
        return [values[i] for i in live]
    return jax.jit(replay)


_MANY_DEVICES = None   # whether this process has several devices (checked per operand)


def enable(on=True):
    """Switch lazy mode on (or off: the open segment is flushed first)."""
    global enabled, ever_enabled, _recorded_forward
    from . import _dispatch
    flush()
    enabled = bool(on)
    ever_enabled = ever_enabled or enabled
    _dispatch._record = record if enabled else None
    _recorded_forward = _dispatch.recorded_forward


_recorded_forward = None   # _dispatch's, bound by enable(): no record is made before it runs
try:   # whether no jax trace is active (a flush there needs no evaluation context)
    from jax._src.core import trace_state_clean as _top_level
except ImportError:   # (a jax without it: always enter one)
    def _top_level():
        return False


def _count_devices():
    """Whether this process has several devices, asked once an array exists (asking at
    import, as TORCHLIKE_LAZY=1 enables lazy mode, would start jax's backend: on a GPU machine,
    claiming the GPU)."""
    global _MANY_DEVICES
    _MANY_DEVICES = len(jax.local_devices()) > 1
