"""The backward engine: one iterative walk over the graph (no recursion limit).

Order of work per node, as in PyTorch's engine: tensor hooks of its outputs, then retain_grad,
then the node's pre-hooks, the node itself, its post-hooks.  Ready nodes run latest-created
first; an AccumulateGrad runs as soon as it is ready.
"""
import heapq
import itertools
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dispatch, _lazy, _meta, _trace_context, _x64
from . import anomaly_mode, fused
from .._meta import is_meta
from .._lazy import Pending
from .._quick import quick_program
from .._tensor import ArrayImpl, Tensor
from .grad_mode import _state as _grad_state
from .graph import AccumulateGrad, OpNode, _add, at_primals, linear_chains, pads_a_fold, plain

_SEEDS = {}


def _seed(arr):
    """A cached ones(()) of arr's dtype: the implicit gradient of a scalar output (made afresh
    while tracing: a cached tracer would leak into later traces)."""
    if type(arr) is Pending:   # NOTE [ lazy segments ]: its device is its segment's
        key = (arr.dtype, next(iter(arr.devices())))   # (a sharding made for it costs more)
    elif type(arr) is not ArrayImpl:
        return _meta.array((), arr.dtype) if is_meta(arr) else jnp.ones((), arr.dtype)
    else:   # NOTE [ reading an array's shape and dtype ] in _dispatch.py
        key = (arr.aval.dtype, arr.sharding)
    s = _SEEDS.get(key)   # (device_put places on a device as on a sharding)
    if s is None:   # (numpy's one: jnp.ones would compile a program for it, 10-40 ms)
        s = _SEEDS[key] = jax.device_put(np.ones((), key[0]), key[1])
    return s


def _accumulate(a, b):
    if a is None:
        return b
    if _dispatch._profiler is not None:   # PyTorch's aten::add_ (NOTE [ profiler hook ])
        return _dispatch._profiler.accumulate(_sum, a, b)
    return _sum(a, b)


def _sum(a, b):
    if type(a) is ArrayImpl and type(b) is ArrayImpl:
        return _add(a, b)
    if isinstance(a, jax.Array) and isinstance(b, jax.Array):   # traced: added in the trace
        return jnp.add(a, b)
    return _as_tensor(a) + _as_tensor(b)   # a Tensor under create_graph, or a meta array


# NOTE [ gathered gradients ]
# A node's input that several nodes feed (a weight an unrolled recurrence uses at every step)
# gets one gradient from each, and PyTorch adds each to the sum as it arrives.  One jitted add
# per arrival is one XLA call each (6-8 us on the 2-core CPU): examples/pytorch/lstm_timeseries.py
# made 62,370 of them in 45 backward passes.  So the engine gathers the concrete gradients that
# arrive at one input (``_Parts``) and adds them in the same order, ``_CHUNK`` at a time in one
# program (a chain of adds: XLA rounds after each, so the sum is, bit for bit, the one adding
# each as it arrives gives), the rest one by one when the node runs.  At most ``_CHUNK`` + 1
# gradients of an input are alive at once.  Under create_graph (Tensors), a profiler (which
# times each add) or on other arrays (meta, tracers, pending values) each arrival is added at
# once, as before.  An LSTMCell unrolled 60 steps: 414 adds -> 190 adds and 56 chunks, its
# forward and backward 21.2 -> 20.4 ms (median of 8, interleaved).
_CHUNK = 4


class _Parts(list):
    """Gradients arrived at one input and not yet added (NOTE [ gathered gradients ])."""


def _add_chunk_fn(acc, *gs):
    for g in gs:
        acc = jnp.add(acc, g)
    return acc


_add_chunk = quick_program(_add_chunk_fn)


def _gather(a, b):
    """Gradient ``b`` arriving where ``a`` (None, one gradient or _Parts) is waiting."""
    if a is None:
        return b
    if type(b) is not ArrayImpl or _dispatch._profiler is not None:
        return _accumulate(_settled(a), b)
    if type(a) is _Parts:
        a.append(b)
        return _Parts([_add_chunk(*a)]) if len(a) > _CHUNK else a
    return _Parts((a, b)) if type(a) is ArrayImpl else _accumulate(a, b)


def _settled(g):
    """The sum of what ``g`` holds (NOTE [ gathered gradients ])."""
    if type(g) is not _Parts:
        return g
    acc = g[0]
    for x in g[1:]:
        acc = _add(acc, x)
    return acc


def _as_tensor(g):
    return g if g is None or isinstance(g, Tensor) else Tensor._wrap(g)


def _as_grad(g, create_graph):
    """Back to the engine's currency: Tensors under create_graph, arrays otherwise."""
    if g is None or not isinstance(g, Tensor):
        return g
    return g if create_graph else g._value()


def _call_tensor_hooks(fn_hooks, g, create_graph):
    for hook in tuple(fn_hooks.values()):
        r = hook(_as_tensor(g))
        if r is not None:
            if not isinstance(r, Tensor):
                raise TypeError(f"expected Variable, but hook returned '{type(r).__name__}'")
            if tuple(r.shape) != tuple(g.shape):
                name = getattr(hook, "__name__", type(hook).__name__)
                raise RuntimeError(f"hook '{name}' has changed the size of value")
            g = _as_grad(r, create_graph)
    return g


def _tensor_pre_hooks(node, buf, create_graph):
    """Hooks registered on the tensors this node produced, then retain_grad (always last)."""
    if isinstance(node, AccumulateGrad):
        hooks = node.variable.__dict__.get("_hooks")
        if hooks:
            buf[0] = _call_tensor_hooks(hooks, buf[0], create_graph)
        return buf
    if node._tensor_pre_hooks:
        for nr, hooks in node._tensor_pre_hooks.items():
            if hooks and buf[nr] is not None:
                buf[nr] = _call_tensor_hooks(hooks, buf[nr], create_graph)
    if node._retains_grad:
        for nr, ref in node._retains_grad.items():
            t = ref()
            if t is not None and buf[nr] is not None:
                g = _as_tensor(buf[nr])
                t._grad = g.detach().clone() if t._grad is None and not create_graph else (
                    g if t._grad is None else t._grad + g)
    return buf


def call_node(node, grads, create_graph=False):
    """Run one node with its pre- and post-hooks (also what ``grad_fn(*grads)`` does)."""
    grads = list(grads)
    if node._pre_hooks:
        for hook in tuple(node._pre_hooks.values()):
            r = hook(tuple(_as_tensor(g) for g in grads))
            if r is not None:
                grads = [_as_grad(g, create_graph) for g in r]
    if node._trace is not None:
        outs = _apply_with_trace(node, grads, create_graph)
    else:
        outs = node.apply(grads, create_graph)
    if node._post_hooks:
        for hook in tuple(node._post_hooks.values()):
            r = hook(tuple(_as_tensor(g) for g in outs), tuple(_as_tensor(g) for g in grads))
            if r is not None:
                outs = [_as_grad(g, create_graph) for g in r]
    return outs


def _apply_with_trace(node, grads, create_graph):
    """Anomaly mode: name the failing node and show the forward call that created it."""
    try:
        outs = node.apply(grads, create_graph)
        if anomaly_mode._state.check_nan:
            for i, o in enumerate(outs):
                if o is not None and bool(jnp.isnan(_as_grad(o, False)).any()):
                    raise RuntimeError(f"Function '{node.name()}' returned nan values in its "
                                       f"{i}th output.")
        return outs
    except Exception:
        warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused "
                      f"the error:\n{node._trace}", stacklevel=2)
        raise


# NOTE [ backward through folded views ]
# A linear layer's ``weight.t()``, its N-d input's ``view(-1, in)`` and its output's view back
# to N-d fold into its addmm's programs (NOTE [ folded views ] in _dispatch.py), and the graph
# keeps their nodes, as PyTorch's does: TBackward0 and two ViewBackward0 around
# AddmmBackward0.  Walked node by node, each ran a program of its own every step, a copy of a
# gradient: examples/pytorch/word_lstm.py's decoder (700 x 2000 logits) took 0.94 ms a step in
# its view nodes and 0.26 ms in its transpose's, beside 5.0 ms in AddmmBackward0 (torchlike's
# profiler, 2-core CPU), and transformer_lm's nine linear layers ran 27 such nodes a step, each
# compiled once per shape besides.  So where the walk reaches a folded output view's node whose
# op node has no other parent, it hands that node's gradient on as it is; and an op node whose
# folded views' nodes it alone feeds runs its VJP as its forward program runs, views inside
# (``OpNode.apply(through=True)``: the gradient in the output view's shape where the op has
# one, the cotangents those of the views' bases), and hands each base's cotangent to the edge
# below the view's node.  The skipped nodes count as run and are released as theirs would be.
# Only where every node involved is plain (no hooks, retain_grad, anomaly trace, capture), the
# walk neither creates a graph nor profiles, and the values are concrete; anything else walks
# every node.  The gradients are the same arithmetic (XLA may order a product's sums otherwise).
def _through(node, deps, buffers, capture_nodes):
    """Whether op node ``node`` may run its backward through its folded views (NOTE above):
    it and its folded views' nodes, each fed by it alone (one edge in, nothing delivered yet),
    are plain, and its primals concrete."""
    op = node._op
    if op.fold is None and op.view_out is None or node in capture_nodes or \
            not at_primals(node) or pads_a_fold(node):
        return False
    for i, (view, _) in (op.fold or {}).items():
        child = node.next_functions[i][0]
        if child is not None and not (isinstance(child, OpNode) and child._op is view and
                                      deps.get(child) == 1 and child not in buffers and
                                      child not in capture_nodes and plain(child)):
            return False
    return True


def _output_view(node, deps, buffers, capture_nodes):
    """The op node below ``node`` where ``node`` is a plain folded output view's node whose
    gradient that op node, fed by it alone, may take as it is (NOTE [ backward through folded
    views ]); else None."""
    if not node._placeholders or not plain(node):
        return None
    below = node.next_functions[0][0]
    if not isinstance(below, OpNode) or below._op.view_out is None or \
            below._op.view_out[0] is not node._op or deps.get(below) != 1 or \
            below in buffers or not _through(below, deps, buffers, capture_nodes):
        return None
    return below


def _dependencies(roots):
    """{node: number of edges into it} for every node reachable from the roots."""
    deps = dict.fromkeys(roots, 0)
    stack = list(deps)
    while stack:
        for child, _ in stack.pop().next_functions:
            if child is None:
                continue
            if child in deps:
                deps[child] += 1
            else:
                deps[child] = 1
                stack.append(child)
    return deps


def _discover(roots):
    """Every node reachable from the roots, parents before children (DFS post-order reversed)."""
    order, seen = [], set()
    stack = [(n, False) for n in roots]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if node in seen:
            continue
        seen.add(node)
        stack.append((node, True))
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                stack.append((child, False))
    order.reverse()
    return order


# NOTE [ backward through linear ops ]
# PyTorch's views cost it nothing, and their backward little: a transpose's gradient is a
# transposed view again.  Here each view's node (and a reshape's, a clone's, an expand's) ran a
# program of its own every step, a copy of a gradient: in examples/pytorch/transformer_lm.py's
# walk (2-core CPU, the step's 108 nodes) 29 of them a step, UnsafeViewBackward0,
# TransposeBackward0, PermuteBackward0 and ViewBackward0, took 2.0 ms of the walk's 4.7 (the
# host's time, a full queue of programs included), and CloneBackward0 and ExpandBackward0 0.4 ms
# more, each also compiled once per shape.  An op that saves nothing for its backward and has
# one operand is linear, and its VJP reads no values, only its operand's shape (as the node of
# a linear op released by a backward, which keeps only shapes, relies on): so where the walk
# runs a node whose operands come from such ops' nodes, each plain and fed by it alone (one
# edge in, nothing delivered yet), it runs their VJPs inside its own program, down the chain to
# the first node that is no such op (``graph.linear_chains``; XLA folds the transposes and
# reshapes into the arithmetic around them), and hands each cotangent to the edge below the
# chain.  The skipped nodes count as run and are released, as for the folded views (NOTE
# [ backward through folded views ] above).  Only where the node itself is one program of the op
# table at concrete primals and plain (``graph.takes_chains``), the walk neither creates a graph
# nor profiles, and outside a torchlike.compile trace; anything else runs every node.  A short
# call run in a longer one's program (NOTE [ a short call in a longer one's program ] in
# _ops/padded.py) so runs the longer call's program, chains included, below the operands it
# takes whole; below its padded rows, whose linear ops have the short call's shapes, none (its
# own backward then compiled ahead: NOTE [ backward programs compiled ahead ] in _ahead.py).  A
# linear layer's short batch over a reshaped bias compiled a backward program of its own before
# 2026-12-08, where its rent should compile nothing.  A linear op's own backward is not compiled
# ahead: the program of the node above it, which runs it, is (``OpNode.compile_ahead`` looks
# below it as the walk will).  transformer_lm's step,
# alternated in one process with and without it: the walk's host time 4.7 -> 2.3 ms, the
# backward until its last gradient is computed 7.8-8.3 -> 7.5-7.8 ms (the device's queue is
# then what it waits for), the step 16.4 -> 15.9 ms.


@_x64.scoped
def run_backward(roots, root_grads, keep_graph, create_graph, capture=None, exec_targets=None):
    """Propagate ``root_grads`` from the root edges.

    capture: list of edges whose incoming gradient is returned (autograd.grad); when given (or
    exec_targets is), only nodes on a path to a capture edge or an exec target run.
    Returns the captured gradients (None where nothing arrived)."""
    if _trace_context.active:   # torchlike.compile: the step differentiates itself
        _trace_context.active[-1].backward_ran = True
    if capture is None and exec_targets is None and not create_graph and \
            fused.try_run(roots, root_grads, keep_graph):
        return []
    _lazy.flush()   # the nodes' pending primals, at once (NOTE [ lazy segments ])
    root_nodes = [e[0] for e in roots]
    if capture is None and exec_targets is None:
        deps = _dependencies(root_nodes)
        needed, capture_nodes = deps.keys(), ()
    else:
        order = _discover(root_nodes)
        capture_nodes = {e[0] for e in capture or ()}
        targets = set(exec_targets or ()) | capture_nodes
        needed, reach = set(), set()
        for node in reversed(order):   # children first
            if node in targets or any(c in reach for c, _ in node.next_functions):
                reach.add(node)
                if node not in capture_nodes or node in (exec_targets or ()) or any(
                        c in reach for c, _ in node.next_functions):
                    needed.add(node)
        deps = dict.fromkeys(needed | capture_nodes, 0)
        for node in needed:
            for child, _ in node.next_functions:
                if child in deps:
                    deps[child] += 1

    buffers = {}
    for (node, nr), g in zip(roots, root_grads):
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * _num_outputs(node)
        buf[nr] = _accumulate(buf[nr], g)
    tie = itertools.count()
    ready = [(-n._seq, next(tie), n) for n in buffers if deps.get(n) == 0]
    heapq.heapify(ready)
    captured = {}

    profiler = _dispatch._profiler   # NOTE [ profiler hook ] in autograd/profiler.py
    # NOTE [ backward through folded views ]: the op nodes given their output view's gradient
    through, given = not create_graph and profiler is None and not _trace_context.active, set()

    def alone(node):   # (NOTE [ backward through linear ops ]: fed by the node that runs alone)
        return deps.get(node) == 1 and node not in buffers and node not in capture_nodes

    prev = _grad_state.grad_enabled
    _grad_state.grad_enabled = create_graph
    try:
        while ready:
            node = heapq.heappop(ready)[2]
            buf = [_settled(g) for g in buffers.pop(node)]
            if through and isinstance(node, OpNode) and node._placeholders and \
                    type(buf[0]) is ArrayImpl and node not in capture_nodes and \
                    (below := _output_view(node, deps, buffers, capture_nodes)) is not None:
                given.add(below)   # (its only parent: its buffer is this gradient alone)
                buffers[below] = [buf[0]] + [None] * (_num_outputs(below) - 1)
                deps[below] = 0
                heapq.heappush(ready, (-below._seq, next(tie), below))
                if not keep_graph:
                    node.release()
                continue
            if node in capture_nodes:
                # As PyTorch: a node that runs captures its gradient before its tensor hooks
                # (they run with the node); one that only captures runs the hooks first.
                if node not in needed:
                    buf = _tensor_pre_hooks(node, buf, create_graph)
                for nr, g in enumerate(buf):
                    captured[(node, nr)] = g
                if node not in needed:
                    continue
            buf = _tensor_pre_hooks(node, buf, create_graph)
            scope = None   # the node's range while a profiler records, closed after its outputs
            folds = None   # the folded operands whose cotangents are their bases'
            below = None   # {operand: the linear ops' nodes its cotangent went through}
            if any(g is not None for g in buf):
                folded, chains = False, None
                if through and isinstance(node, OpNode) and node not in capture_nodes:
                    folded = node in given or node._op.fold is not None and \
                        node._op.view_out is None and _through(node, deps, buffers,
                                                               capture_nodes)
                    chains = linear_chains(node, (folded and node._op.fold) or (), alone)
                    if (folded or chains is not None) and \
                            not all(type(g) is ArrayImpl for g in buf if g is not None):
                        folded, chains = False, None   # (a pending, traced or meta gradient)
                if folded or chains is not None:
                    outs = node.apply(buf, False, through=folded,
                                      chains=None if chains is None else chains[0])
                    folds = node._op.fold if folded else None
                    below = None if chains is None else chains[1]
                elif profiler is None:
                    outs = call_node(node, buf, create_graph)
                else:
                    scope, outs = profiler.node(node, call_node, buf, create_graph)
                if not keep_graph:
                    node.release()
            else:   # nothing flowed into this node: nothing flows out of it
                outs = ()
            for i, (child, nr) in enumerate(node.next_functions):
                if child not in deps:
                    continue
                if folds is not None and i in folds:   # the view's node counts as run
                    deps[child] = 0
                    if not keep_graph:
                        child.release()
                    child, nr = child.next_functions[0]
                    if child not in deps:
                        continue
                elif below is not None and i in below:   # so do the linear ops' nodes it ran
                    for skipped in below[i]:
                        deps[skipped] = 0
                        if not keep_graph:
                            skipped.release()
                    child, nr = below[i][-1].next_functions[0]
                    if child not in deps:
                        continue
                cbuf = buffers.get(child)
                if cbuf is None:
                    cbuf = buffers[child] = [None] * _num_outputs(child)
                g = outs[i] if i < len(outs) else None
                if g is not None:
                    cbuf[nr] = _gather(cbuf[nr], g)
                deps[child] -= 1
                if deps[child] == 0:
                    heapq.heappush(ready, (-child._seq, next(tie), child))
            if scope is not None:
                profiler.end(scope)
    finally:
        _grad_state.grad_enabled = prev
    return [captured.get(tuple(e)) for e in capture or ()]


def _num_outputs(node):
    return getattr(node, "num_outputs", 1)
