"""Fused backward: the whole backward pass of a plain graph as one XLA program.

NOTE [ fused backward ]
A training loop records the same graph every step.  Walking it node by node costs one jitted call
per node (measured on the 2-core CPU: a 32-64-64-4 MLP's backward took 340 µs as 17 calls; torch
takes ~100 µs); the same walk traced once into one ``jax.jit`` runs in one call.  So ``backward()``
computes a signature of the graph it is given (ops, static arguments, shapes, dtypes, edges) and,
once it has seen a signature ``fuse_after`` times, compiles the walk and runs it as one program
from then on.  Until then the graph runs node by node, so code whose graphs repeat a few times
(an evaluation pass, the last short batch of each epoch) compiles nothing extra.

When to compile is a rent-or-buy choice: the program costs one compile (0.1-3 s on the 2-core CPU
for the graphs of scripts/bench_train.py and examples/pytorch/) and then saves a fraction of a
millisecond to a few milliseconds per backward, so it pays for itself only after hundreds of
steps, and a graph seen a handful of times never repays it.  Fusing on the second sighting
compiled a program for every graph shape that occurred twice: 44-64% of the wall time of the
example programs was compiling (scripts/bench_programs.py), and switching the fused backward off
made word_lstm, char_lstm and cnn_digits 5-20% faster end to end.  Waiting for 32 sightings still
compiled cnn_digits' step at its 32nd of 84 backwards: 0.77 s of compiling, repaid by about 1 ms
on each of the 52 left (that program took 7.68 s with the fused backward, 6.82 s without, one
run each).

What fusing saves is the per-node walk's dispatch, not its arithmetic: measured in a training
step of each scripts/bench_train.py model (2-core CPU, fused against node by node, interleaved),
the program saved 0.72 ms of the MLP's 17 nodes, 0.40 ms of the CNN's 23 and 1.95 ms of the
Transformer's 94: 17-43 µs a node (``node_saving`` = 25 µs), while the example programs'
compiles took 31-35 ms a node.  So a signature is compiled once it has been seen ``fuse_after``
= 32 times *and* often enough that the savings would have paid for its compile: the seconds a
node of the programs compiled so far took to compile (a prior of one second for 32 nodes) over
the saving a node, about 1,200 sightings until a compile has been timed (``buy_after``
sightings where set).  The walk's own time does not tell the saving: an LSTM's walk is mostly
its arithmetic, which the program runs as well (word_lstm's walks took about 30 ms each; with
its program compiled at the 32nd of 156 backwards that program took 14.03 s end to end,
without 13.49 s, one run each).

A node that keeps placeholders of its primals (a linear op's, whose backward reads no values:
released, or a folded output view's, NOTE [ folded views ] in _dispatch.py) passes no operands;
the program makes zeros of their shapes, which XLA drops.

Only plain graphs are fused: nodes of the op table and AccumulateGrad, with no hooks,
retain_grad, anomaly traces or Python Functions, no create_graph, capture (autograd.grad) or
``inputs=``, concrete (not traced) values, and no node that ran a longer call's program (NOTE
[ a short call in a longer one's program ] in _ops/padded.py: a short batch met a few times).
Anything else runs node by node, which stays the reference: the two paths give the same
gradients (tests compare them).  Version counters are checked before the program runs and the
graph is released after, as the per-node walk does.

What one compile may cost: XLA's compile time grows much faster than the graph, and the program's
gain over the per-node walk does not.  scripts/bench_backward.py (two float64 LSTMCells unrolled
over T steps, 8 nodes a step, on the 2-core CPU) measured the compile at 1.5 s for 52 nodes, 3.5 s
for 92, 14 s for 212 and 100 s (1.4 GB) for 412, while the steps after it ran 0.6-1.3x as long as
the per-node walk's.  So a graph of more than ``max_nodes`` nodes runs node by node, and planning
stops counting there: a long graph costs what the per-node walk costs.  128 keeps every model of
scripts/bench_train.py fused (the Transformer's backward has 93 nodes, the MLP's 16).
"""
from time import perf_counter

import jax
import jax.numpy as jnp

from .. import _dispatch, _lazy
from .._lazy import Pending
from .._tensor import ArrayImpl
from . import anomaly_mode
from .graph import AccumulateGrad, OpNode, plain

_SEEN = {}          # signature -> sightings so far (an int) or the compiled program
_MAX_SIGNATURES = 256   # the least recently seen are dropped (NOTE [ bounded program caches ])
enabled = True      # tests switch it off to compare against the per-node walk
max_nodes = 128     # larger graphs run node by node (NOTE [ fused backward ]: a compile's cost)
fuse_after = 32     # the fewest sightings of a signature before its program is compiled
buy_after = None    # sightings before it is compiled, if more (None: learned; NOTE above)
node_saving = 25e-6   # seconds a compiled program saves a backward, a node (NOTE above)
_compiles = [1.0, 32]   # seconds spent compiling programs, and their nodes (a prior: 1 s for 32)


def _plan(roots, root_grads):
    """Signature and operands of the graph, and its nodes in the order found (the signature
    numbers them so), or None if it is not plain.  Runs on every backward, so it does only what
    the signature needs, in one pass (a node is numbered when first reached, so its edges are
    known when it is visited); the program orders the nodes once, when it is made."""
    index, found = {}, []
    for e in roots:
        if e[0] not in index:
            index[e[0]] = len(found)
            found.append(e[0])
    if len(found) > max_nodes:
        return None
    sig, operands, pending = [], [], False
    i = 0
    while i < len(found):
        node = found[i]
        i += 1
        if type(node) is AccumulateGrad:
            var = node.variable
            d = var.__dict__
            old = var._grad
            if not plain(node) or d.get("_hooks") or d.get("_post_acc_hooks") or (
                    old is not None and old._grad_fn is not None):
                return None
            sig.append(("leaf", old is not None))
            operands.append(None if old is None else old._value())
            continue
        if not isinstance(node, OpNode) or not plain(node) or node._primals is None or \
                node._op.no_grad_reason or node._cut is not None:
            return None
        edges = []
        for child, nr in node.next_functions:
            if child is None:
                edges.append((-1, 0))
                continue
            j = index.get(child)
            if j is None:
                if len(found) == max_nodes:
                    return None
                j = index[child] = len(found)
                found.append(child)
            edges.append((j, nr))
        kept = None
        if node._placeholders:   # (shape, dtype) or (a Python scalar,): NOTE above
            avals = [p if len(p) == 2 else type(p[0]) for p in node._primals]
            operand = tuple([None if len(p) == 2 else p[0] for p in node._primals])
        else:
            primals = node._primals
            avals = []
            for p in primals:
                if type(p) is ArrayImpl:   # NOTE [ reading an array's shape and dtype ]
                    a = p.aval
                    avals.append((a.shape, a.dtype))
                elif type(p) is Pending:
                    avals.append((p.shape, p.dtype))
                    pending = True
                elif isinstance(p, jax.Array):   # a tracer: leave it to the per-node walk
                    return None
                else:
                    avals.append(type(p))
            kept = node._residuals   # NOTE [ kept residuals ] in _dispatch.py
            operand = primals if kept is None else (primals, kept)
        sig.append((node._op, node._static, node._dt, node._mask, node._out_mask,
                    node._out_meta, tuple(avals), tuple(edges), kept is not None,
                    node._placeholders))
        operands.append(operand)
    root_sig = []
    for (n, nr), g in zip(roots, root_grads):
        if type(g) is not ArrayImpl:
            return None
        a = g.aval
        root_sig.append((index[n], nr, a.shape, a.dtype))
    root_sig = tuple(root_sig)
    return (tuple(sig), root_sig), found, operands, pending


def _topological(nodes):
    """The positions of ``nodes`` (a signature's) in an order that runs each node after every
    node with an edge into it."""
    deps = [0] * len(nodes)
    for d in nodes:
        if d[0] != "leaf":
            for j, _ in d[7]:
                if j >= 0:
                    deps[j] += 1
    ready, order = [i for i, n in enumerate(deps) if n == 0], []
    while ready:
        i = ready.pop()
        order.append(i)
        if nodes[i][0] != "leaf":
            for j, _ in nodes[i][7]:
                if j >= 0:
                    deps[j] -= 1
                    if deps[j] == 0:
                        ready.append(j)
    return order


def _program(signature):
    """The backward walk of ``signature`` as a function of (root grads, operands), returning the
    leaves' new gradients in the order of the signature."""
    nodes, roots = signature
    vjps = [None if d[0] == "leaf" else
            _dispatch.residual_vjp_fn(d[0], d[1], d[2], d[3]) if d[8] else
            _dispatch._vjp_fn(d[0], d[1], d[2], d[3], d[4]) for d in nodes]
    order = _topological(nodes)
    leaves = [i for i, d in enumerate(nodes) if d[0] == "leaf"]

    def run(root_grads, operands):
        bufs = [dict() for _ in nodes]
        for (i, nr, _, _), g in zip(roots, root_grads):
            bufs[i][nr] = bufs[i][nr] + g if nr in bufs[i] else g
        results = {}
        for i in order:
            d, buf = nodes[i], bufs[i]
            if d[0] == "leaf":
                g = buf.get(0)
                old = operands[i]
                results[i] = g if old is None or g is None else old + g
                continue
            if not buf:
                continue
            op, static, dt, mask, out_mask, out_meta, avals, edges, _, placeholders = d
            if out_mask is None:
                g = buf[0]
            else:
                g = tuple(buf[nr] if nr in buf else jnp.zeros(*out_meta[nr])
                          for nr, keep in enumerate(out_mask) if keep)
            primals = operands[i]
            if placeholders:   # a linear op's backward reads no values: zeros of the shapes
                primals = [jnp.zeros(*a) if type(a) is tuple else p
                           for p, a in zip(primals, avals)]
            outs = vjps[i](g, *primals)
            for pos, o in zip(mask, outs):
                j, nr = edges[pos]
                if j >= 0:
                    bufs[j][nr] = bufs[j][nr] + o if nr in bufs[j] else o
        return [results[i] for i in leaves]
    return jax.jit(run)


def try_run(roots, root_grads, keep_graph):
    """Run the backward as one program if this graph's signature has been seen often enough.
    Returns False (having done nothing) when the per-node walk should run instead."""
    if not enabled or anomaly_mode._state.enabled or _dispatch._profiler is not None:
        return False   # (a profiler times node by node: NOTE [ profiler hook ])
    plan = _plan(roots, root_grads)
    if plan is None:
        return False
    signature = _Signature(plan[0])
    program = _SEEN.pop(signature, 0)   # filed again last: the least recently seen go first
    start = None
    if type(program) is int:
        if program + 1 < max(fuse_after, _sightings_to_buy()):
            _dispatch.remember(_SEEN, signature, program + 1, _MAX_SIGNATURES)
            return False
        program, start = _program(signature.value), perf_counter()
    _dispatch.remember(_SEEN, signature, program, _MAX_SIGNATURES)
    if _run(program, plan, root_grads, keep_graph):
        # recorded into the lazy segment: the saved values ``plan`` holds must not count as
        # referenced if this flushes it (NOTE [ lazy segments ] in _lazy.py)
        del plan
        _lazy.recorded_backward()
    elif start is not None:   # its first run: the compile, timed
        _compiles[0] += perf_counter() - start
        _compiles[1] += len(signature.value[0])
    return True


class _Signature:
    """A graph's signature as the key of ``_SEEN``, hashed once: a backward looks it up and
    files it again, and hashing the Transformer's (91 nodes) took 14 us each time."""

    __slots__ = ("value", "_hash")

    def __init__(self, value):
        self.value = value
        self._hash = hash(value)

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        return self.value == other.value


def _sightings_to_buy():
    """How often a signature is seen before the backwards its program would speed up have paid
    for compiling it (NOTE [ fused backward ]): a compile and a saving are both per node."""
    if buy_after is not None:
        return buy_after
    return 1 + _compiles[0] / _compiles[1] / node_saving


def _run(program, plan, root_grads, keep_graph):
    """Run ``program`` over ``plan`` and store the leaves' gradients; True where it was
    recorded in the lazy segment (after a pending forward) rather than run."""
    _, nodes, operands, pending = plan
    for node in nodes:
        if type(node) is not AccumulateGrad:
            node._check_versions()
    args = (list(root_grads), operands)
    # after a pending forward, recorded into its segment: one program for both (NOTE
    # [ lazy segments ] in _lazy.py)
    recorded = _lazy.record_call(program, args) if pending and _lazy.enabled else None
    results = recorded if recorded is not None else \
        _lazy.run_call(program, args) if pending else program(*args)
    leaves = (n for n in nodes if type(n) is AccumulateGrad)
    for node, g in zip(leaves, results):
        if g is None:
            continue
        var = node.variable
        if var._grad is None:
            var._grad = _dispatch.wrap_value(g)
        else:
            var._grad._write(g)
    if not keep_graph:
        for node in nodes:
            node.release()
    return recorded is not None
