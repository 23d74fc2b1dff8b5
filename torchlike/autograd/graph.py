"""Autograd graph nodes: the ``grad_fn`` objects users see.

A Node is the backward of one forward op.  ``next_functions`` holds one ``(node, output_nr)`` edge
per forward input (``(None, 0)`` where the input needs no grad), exactly as PyTorch shows it.
"""
import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np

from . import anomaly_mode
from .. import _ahead, _dispatch, _dtype, _meta, _x64
from .._lazy import Pending
from .._quick import quick_program
from .._tensor import ArrayImpl, Tensor, aval_of

_seq = itertools.count()
# what a backward compiled ahead may take (NOTE [ backward programs compiled ahead ] in _ahead.py)
_CONCRETE = frozenset({ArrayImpl, np.ndarray, bool, int, float, complex})
_add = quick_program(jnp.add)

RELEASED_ERROR = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you "
    "call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved tensors after calling "
    "backward.")

INFERENCE_SAVED_ERROR = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`.")

_NODE_CLASSES = {}


def node_class(name, base=None, **attrs):
    """The subclass of ``base`` (default OpNode) named ``name`` (``MulBackward0``, a custom
    Function's ``MyFnBackward``) with class attributes ``attrs``, made once per name, base and
    attrs, so that ``type(t.grad_fn).__name__`` and reprs read as in PyTorch."""
    key = (name, base, *attrs.items())
    cls = _NODE_CLASSES.get(key)
    if cls is None:
        cls = _NODE_CLASSES[key] = type(name, (base or OpNode,),
                                        {"__module__": "torchlike.autograd", **attrs})
    return cls


def version_error(dtype, shape, now, expected, output_of=None):
    """PyTorch's error for a tensor saved for backward and modified in place since (it is at
    version ``now``, saved at ``expected``); ``output_of``: (output_nr, node name) of the op
    that made it, where the message names that op."""
    where = f"[torch.{dtype._tensor_type} {list(shape)}]"
    if output_of is not None:
        where += f", which is output {output_of[0]} of {_short(output_of[1])},"
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: {where} is at version {now}; expected version {expected} "
        "instead. Hint: enable anomaly detection to find the operation that failed to compute "
        "its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")


class RemovableHandle:
    """Mirrors ``torch.utils.hooks.RemovableHandle``."""

    _ids = itertools.count()

    def __init__(self, hooks_dict):
        self._hooks = hooks_dict
        self.id = next(RemovableHandle._ids)

    def remove(self):
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def add_hook(hooks, fn, prepend=False):
    """File ``fn`` in the dict ``hooks`` under a new handle's id, last (or first, with
    ``prepend``) in its order: how Tensors, Nodes, Modules and Optimizers register hooks."""
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    if prepend:   # the others are filed again after it
        for key in list(hooks)[:-1]:
            hooks[key] = hooks.pop(key)
    return handle


def plain(node):
    """Whether ``node`` runs as nothing but its backward: no hooks of its own or of its
    tensors, no retain_grad, no anomaly trace (the fused backward and the walk through folded
    views act on such nodes only)."""
    return not (node._pre_hooks or node._post_hooks or node._tensor_pre_hooks
                or node._retains_grad or node._trace is not None)


class Node:
    """Mirrors ``torch.autograd.graph.Node``."""

    next_functions = ()
    _pre_hooks = None        # register_prehook: fn(grad_outputs) -> new grad_outputs or None
    _post_hooks = None       # register_hook: fn(grad_inputs, grad_outputs) -> new grad_inputs
    _tensor_pre_hooks = None  # output_nr -> {id: fn(grad)}: hooks of non-leaf tensors
    _retains_grad = None     # output_nr -> weakref to the tensor that called retain_grad()
    _trace = None            # forward stack, kept in anomaly mode
    _metadata = None

    def name(self):
        return type(self).__name__

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    @property
    def metadata(self):
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) runs after this node; it may return new grad_inputs."""
        if self._post_hooks is None:
            self._post_hooks = {}
        return add_hook(self._post_hooks, fn)

    def register_prehook(self, fn):
        """fn(grad_outputs) runs before this node; it may return new grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = {}
        return add_hook(self._pre_hooks, fn)

    def _tensor_hooks(self, nr):
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = {}
        return self._tensor_pre_hooks.setdefault(nr, {})

    def release(self):
        """Free what this node saved for backward (nothing, by default)."""

    def _saved_shapes(self):
        """[(name, shape)] of the tensors kept for this node's backward (none, by default)."""
        return []

    def _arguments(self):
        """{name: text} of the node's non-tensor arguments (none, by default)."""
        return {}

    @_x64.scoped
    def __call__(self, *grads):
        from .engine import call_node
        return call_node(self, grads)


class AccumulateGrad(Node):
    """The edge into a leaf: adds the incoming gradient to ``variable.grad``."""

    _seq = math.inf   # runs as soon as it is ready, as in PyTorch
    num_outputs = 1

    def __init__(self, variable):
        self.variable = variable

    def name(self):
        return "torch::autograd::AccumulateGrad"

    def apply(self, grads, create_graph):
        var = self.variable
        g = grads[0]
        if g is None:
            return ()
        old = var._grad
        if old is None:
            var._grad = g.detach() if (isinstance(g, Tensor) and not create_graph) else (
                g if isinstance(g, Tensor) else Tensor._wrap(g))
        elif create_graph or old.requires_grad:
            var._grad = old + g
        else:   # in place, so the .grad tensor the user holds stays the same object
            old._write(_meta.run(_add, "add", old._value(),
                                 g._value() if isinstance(g, Tensor) else g))
        hooks = var.__dict__.get("_post_acc_hooks")
        if hooks:
            for fn in tuple(hooks.values()):
                fn(var)
        return ()


class ToCopyBackward0(Node):
    """The backward of a move between devices (``x.to("cuda")``): the gradient goes back to
    the device the input lives on.  A Node of its own, not a row of the op table: a jitted
    program cannot move data (NOTE [ moving data ] in _ops/convert.py)."""

    def __init__(self, edge, source, move):
        self._seq = next(_seq)
        self.next_functions = (edge,)
        self._source = source   # the input's jax device
        self._move = move       # Tensor, jax device -> Tensor (recorded under create_graph)

    def apply(self, grads, create_graph):
        g = grads[0]
        if g is None:
            return [None]
        if isinstance(g, Tensor):   # recorded only under create_graph (g requires grad)
            return [self._move(g, self._source)]
        return [self._move(Tensor._wrap(g), self._source)._value()]


_DIFF_KINDS = frozenset("fcV")   # float, complex, and ml_dtypes' bfloat16 ('V')


def _zeros(shape, dtype, sharding):
    """Zeros of ``shape`` and ``dtype`` on ``sharding`` (None: the default device): numpy's,
    placed there, up to 65,536 elements (jnp.zeros compiles a program for each shape and dtype,
    10-40 ms: an rnn stack's unused final states met it before their first backward); jax's
    past that, which make them on the device."""
    if sharding is None or math.prod(shape) > 1 << 16:
        return jnp.zeros(shape, dtype, device=sharding)
    return jax.device_put(np.zeros(shape, dtype), sharding)


class OpNode(Node):
    """The backward of one op (of the op table, or made per call): the VJP of ``op.fn`` at the
    saved primals, run as a cached jit or, under create_graph, recorded as an op again."""

    def __init__(self, op, static, dt, primals, edges, mask, outs, multi=False):
        self._seq = next(_seq)
        self._op = op
        self._static = static
        self._dt = dt
        self._primals = primals
        self.next_functions = tuple(edges) if None not in edges else \
            tuple([(None, 0) if e is None else e for e in edges])
        self._mask = mask
        # NOTE [ reading an array's shape and dtype ] in _dispatch.py
        pending = outs[0]._lazy
        if pending is not None:   # recorded lazily: primals may be pending too
            self._pending = True
        if not multi:   # one output: the class's defaults say it is differentiable
            arr = pending or outs[0]._arr
            if (arr.aval if type(arr) is ArrayImpl else arr).dtype.kind not in _DIFF_KINDS:
                self.out_diff, self.differentiable = (False,), False
        else:
            avals = [aval_of(o._lazy or o._arr) for o in outs]
            self.out_diff = tuple(a.dtype.kind in _DIFF_KINDS for a in avals)
            self._out_mask = self.out_diff
            self._out_meta = tuple((a.shape, a.dtype) for a in avals)
            self.differentiable = any(self.out_diff)
        if anomaly_mode._state.enabled:
            self._trace = anomaly_mode.forward_trace()

    out_diff = (True,)       # which outputs are differentiable (set where not this)
    differentiable = True    # whether any is
    _out_mask = None   # multi-output ops: which outputs are differentiable
    _out_meta = None   # multi-output ops: (shape, dtype) of each, for missing gradients
    _saved = ()

    @property
    def num_outputs(self):
        return len(self.out_diff)

    def save_versions(self, args, outs):
        """Remember the version of each tensor PyTorch would save, to detect in-place changes:
        (version counter, version, the tensor (None: the node's result), the result's aval (its
        shape and dtype, read if an error needs them), position or "result")."""
        saved = []
        for i in _saved_positions(self._op, self._mask, len(args)):
            if type(i) is str:   # "result"
                t = outs[0]
                saved.append((t._version_counter(), 0, None, aval_of(t._lazy or t._arr), i))
            elif isinstance(t := args[i], Tensor):
                if t._inference:
                    raise RuntimeError(INFERENCE_SAVED_ERROR)
                vc = t._vc or t._version_counter()
                saved.append((vc, vc[0], t, None, i))
        self._saved = tuple(saved)

    def _check_versions(self):
        for vc, version, t, aval, i in self._saved:
            if vc[0] != version:
                if t is None:   # the node's own result
                    raise version_error(_dtype.from_numpy_dtype(aval.dtype), aval.shape,
                                        vc[0], version, (0, self.name()))
                if self._op.fold is not None and i in self._op.fold:
                    # PyTorch saved the view of t; written since, the view's grad_fn is
                    # AsStridedBackward0 (None where t needs no grad)
                    raise version_error(t.dtype, self._saved_shape(i, t._arr), vc[0], version,
                                        (0, "AsStridedBackward0") if t.requires_grad else None)
                raise version_error(t.dtype, t.shape, vc[0], version, None if t._grad_fn is None
                                    else (t._output_nr, t._grad_fn.name()))

    def _saved_shape(self, i, arr):
        """The shape of what PyTorch saves of operand ``i`` (array ``arr``): a folded view's
        where the op folds one into it (NOTE [ folded views ] in _dispatch.py)."""
        aval = aval_of(arr)
        fold = self._op.fold
        if fold is None or i not in fold:
            return aval.shape if self._cut is None else self._cut.shape(i, aval.shape)
        view, name = fold[i]
        return jax.eval_shape(_dispatch._plain_fn(view.fn, _dispatch.fold_static(
            self._static, name)), jax.ShapeDtypeStruct(aval.shape, aval.dtype)).shape

    def _saved_shapes(self):
        """[(name, shape)] of what PyTorch saves for this node's backward, while it is kept:
        operands as ``input[i]``, the op's own output as ``result`` (torchviz's show_saved)."""
        if self._primals is None or self._placeholders:
            return []   # released by a backward
        saved, primals = [], self._primals
        for i in _saved_positions(self._op, self._mask, len(primals)):
            if i == "result":
                saved.extend(("result", e[3].shape) for e in self._saved if e[4] == "result")
            elif i < len(primals):
                arr = primals[i]
                shape = () if isinstance(arr, (bool, int, float, complex)) else \
                    self._saved_shape(i, arr)
                saved.append((f"input[{i}]", tuple(shape)))
        return saved

    def _arguments(self):
        """{name: text} of the op's non-tensor arguments (torchviz's show_attrs)."""
        folded = {name for _, name in (self._op.fold or {}).values() if name}
        return {key: str(value) for key, value in self._static if key not in folded}

    _placeholders = False
    _pending = False   # some primals are Pending (NOTE [ lazy segments ] in _lazy.py)
    _residuals = None   # NOTE [ kept residuals ] in _dispatch.py
    _cut = None   # its primals are a longer call's: NOTE [ a short call in a longer one's
    #               program ] in _ops/padded.py

    def _resolve(self):
        self._primals = tuple([p.get() if type(p) is Pending else p for p in self._primals])
        self._pending = False

    def release(self):
        """Free what was saved after a backward without retain_graph: the primals, and the
        tensors whose versions were recorded (they hold arrays too).  A linear op (one that
        PyTorch saves nothing for) keeps only shapes, so a second backward still works, as in
        PyTorch; an op made per call (saving its versions itself) is no linear op."""
        if self._primals is None or self._placeholders:
            return
        self._saved = ()
        self._residuals = None
        if self._op.saves == () and not self._op.per_call:
            self._primals = tuple([(a.aval.shape, a.aval.dtype) if type(a) is ArrayImpl else
                                   (a.shape, a.dtype) if isinstance(a, (jax.Array, Pending))
                                   else (a,) for a in self._primals])
            self._placeholders = True
        else:
            self._primals = None
        self._pending = False

    def _live_primals(self):
        primals = self._primals
        if primals is None:
            raise RuntimeError(RELEASED_ERROR)
        if self._pending:
            self._resolve()
            primals = self._primals
        if self._placeholders:   # a linear op's backward reads no values: zeros will do
            return _dispatch.placeholder_values(primals)
        return primals

    def _base_edges(self):
        """The edges of this op's operands as its backward op takes them: a folded operand is
        the view's base (NOTE [ folded views ] in _dispatch.py), whose edge is the view node's."""
        edges = self.next_functions
        if self._op.fold is None:
            return edges
        return [e[0].next_functions[0] if i in self._op.fold and e[0] is not None else e
                for i, e in enumerate(edges)]

    def _fill(self, grads):
        """Gradients (Tensors or arrays) for the differentiable outputs, zeros where none
        arrived: on the device of one that did, as the backward's program was compiled for
        (NOTE [ backward programs compiled ahead ] in _ahead.py)."""
        if self._out_mask is None:
            return [grads[0]]
        like = next((g for g in grads if type(g) is ArrayImpl), None)
        device = None if like is None else like.sharding
        return [_zeros(*self._out_meta[nr], device) if g is None else g
                for nr, g in enumerate(grads) if self.out_diff[nr]]

    def apply(self, grads, create_graph, through=False, chains=None):
        """The cotangents of the node's operands, by edge; ``through``: of its folded operands'
        bases, its gradient in its output view's shape (NOTE [ backward through folded views ]
        in engine.py: the engine asks it of a plain node only); ``chains``: of the operands of
        the linear ops below its own (``linear_chains``' key: NOTE [ backward through linear
        ops ])."""
        reason = self._op.no_grad_reason
        if reason:   # a message (RuntimeError), or an exception type and message
            exc, message = reason if isinstance(reason, tuple) else (RuntimeError, reason)
            raise exc(message)
        self._check_versions()
        gs = self._fill(grads)
        values = [g._value() if isinstance(g, Tensor) else g for g in gs]
        op, static, dt, mask = self._op, self._static, self._dt, self._mask
        if self._placeholders and not create_graph and not _dispatch.is_traced(values):
            # a linear op's backward reads no values: its program makes the zeros
            g = values[0] if self._out_mask is None else tuple(values)
            fn = _dispatch.placeholder_backward_fn(op, static, dt, mask, self._out_mask,
                                                   self._primals)
            return self._scatter(_meta.run(fn, self.name(), g))
        primals = self._live_primals()
        traced = _dispatch.is_traced(values) or _dispatch.is_traced(primals)
        cut = self._cut   # NOTE [ a short call in a longer one's program ] in _ops/padded.py
        if cut is not None and (create_graph or traced):   # the call's own operands and program
            primals, cut = cut.primals(primals), None
        # create_graph: the backward as a recorded op of (grads, primals), docs/architecture.md §2.4
        if create_graph:
            bop = _dispatch.backward_op(op, static, dt, mask, self._out_mask)
            arrays = tuple(values) + primals
            edges = [g._edge() if isinstance(g, Tensor) and g.requires_grad else None
                     for g in gs]
            edges += [e if e[0] is not None else None for e in self._base_edges()]
            edges += [None] * (len(primals) - len(self.next_functions))
            reads = _dispatch.inputs_read(bop, arrays)
            edges = [e if r else None for e, r in zip(edges, reads)]
            fn = _dispatch._raw_fn(bop, (), None) if traced else _dispatch.forward_fn(bop, (), None)
            out = _meta.run(fn, bop.name, *arrays)
            outs = _dispatch.wrap_outputs(bop, (), None, out, (), arrays,
                                          edges if any(edges) else None)
        else:
            g = values[0] if self._out_mask is None else tuple(values)
            fn, args = self._program(g if cut is None else cut.gradients(g), primals, traced,
                                     through, chains)
            if _ahead.waiting:   # NOTE [ backward programs compiled ahead ] in _ahead.py
                _ahead.claim(fn, args)
            outs = _meta.run(fn, self.name(), *args)
            if cut is not None:
                outs = cut.cotangents(outs, mask)
        return self._scatter(outs)

    def _program(self, g, primals, traced, through=False, chains=None):
        """(the backward's program, its arguments) for the incoming gradient(s) ``g``: the
        VJP at the primals (``through`` its folded views, ``chains`` on through the linear
        ops below its operands), or from the kept residuals (NOTE [ kept residuals ])."""
        op, static, dt, mask = self._op, self._static, self._dt, self._mask
        if self._residuals is not None and not traced:
            return _dispatch.residual_backward_fn(op, static, dt, mask), \
                (g, primals, self._residuals)
        return _dispatch.backward_fn(op, static, dt, mask, self._out_mask, traced, through,
                                     chains), (g, *primals)

    def compile_ahead(self, g, through=False):
        """Hand the program this node's backward will run to the worker thread, ``g`` being
        ShapeDtypeStructs of the gradients of its differentiable outputs (NOTE [ backward
        programs compiled ahead ] in _ahead.py), ``through`` its folded views (NOTE [ backward
        through folded views ] in engine.py) and on through the linear ops below its operands,
        as the walk will find them if nothing else needs those (NOTE [ backward through linear
        ops ]); nothing where a primal is not a concrete array or a Python number (a tracer, a
        pending value)."""
        g = g[0] if self._out_mask is None else tuple(g)
        cut = self._cut
        if cut is not None:   # a longer call's program, compiled for it, unless that one ran on
            edges = self.next_functions   # through linear ops below the rows now padded
            if not any(i < len(edges) and linear_step(edges[i][0]) for i, _, _ in cut.pads):
                return
            g = cut.gradient_avals(g)
            through = through and not pads_a_fold(self)
        if self._placeholders:   # a folded output view's node: its program makes the zeros
            fn, args = _dispatch.placeholder_backward_fn(
                self._op, self._static, self._dt, self._mask, self._out_mask,
                self._primals), (g,)
        elif self._pending or any(type(p) not in _CONCRETE for p in self._primals):
            return
        else:
            chains = linear_chains(self, (through and self._op.fold) or (), _unknown)
            fn, args = self._program(g, self._primals, False, through,
                                     None if chains is None else chains[0])
        if hasattr(fn, "lower"):   # (a jitted program, not pieces run one by one)
            _ahead.submit(fn, args)

    def _scatter(self, outs):
        """The cotangents ``outs`` of the operands in the mask, by edge."""
        result = [None] * len(self.next_functions)
        for i, o in zip(self._mask, outs):
            result[i] = o
        return result


def _unknown(node):   # (compiled ahead: what else will need a node is not known yet)
    return True


def at_primals(node):
    """Whether op node ``node``'s backward is its op's VJP at concrete primals it still holds
    (no kept residuals, no placeholders, a derivative to take), with nothing of its own to run
    (hooks, retain_grad, an anomaly trace): what the walk may run through views (NOTE
    [ backward through folded views ] and NOTE [ backward through linear ops ] in engine.py)."""
    return plain(node) and node._residuals is None and not node._placeholders and \
        node._primals is not None and not node._op.no_grad_reason and \
        all(type(p) in _CONCRETE for p in node._primals)


def pads_a_fold(node):
    """Whether op node ``node`` is a short call run in a longer one's program whose padded
    operands include one whose view its op folds: a padded operand is rows, never a folded view,
    so its backward does not run through its folded views (NOTE [ a short call in a longer one's
    program ] in _ops/padded.py)."""
    cut, fold = node._cut, node._op.fold
    return cut is not None and fold is not None and any(i in fold for i, _, _ in cut.pads)


def takes_chains(node):
    """Whether op node ``node``'s backward may go on through the linear ops below its operands
    (NOTE [ backward through linear ops ] in engine.py): ``at_primals``, and one program of the
    op table's (no dynamic arguments, pieces or a per-call op).  A short call run in a longer
    one's program may, below the operands it takes whole: the longer call's program, chains
    included, is its own (NOTE [ a short call in a longer one's program ] in _ops/padded.py)."""
    op = node._op
    return at_primals(node) and not op.dynamic and not op.per_call and op.grad_pieces is None


def linear_step(node):
    """(op, static, dt, its operand's (shape, dtype)) of the node of a linear op that a
    backward above it may run (NOTE [ backward through linear ops ] in engine.py): an op of
    the table with one operand that saves nothing (a view, a reshape, a clone, an expand: its
    backward reads no values), on a concrete array, and itself ``takes_chains``; else None."""
    if not isinstance(node, OpNode) or node._mask != (0,) or node._out_mask is not None:
        return None
    op, primals = node._op, node._primals
    if op.saves != () or op.fold is not None or op.view_out is not None or \
            node._cut is not None or not takes_chains(node) or len(primals) != 1 or \
            type(primals[0]) is not ArrayImpl:
        return None
    aval = primals[0].aval
    return op, node._static, node._dt, (aval.shape, aval.dtype)


def linear_chains(node, folded, usable):
    """The nodes of linear ops below the operands of op node ``node`` (where
    ``takes_chains``) that its backward may run as well (NOTE [ backward through linear ops ]
    in engine.py): (the program's key: for each operand in its mask, None or each linear op's
    ``linear_step``, top down; {operand position: those nodes}), or None where there are none.
    ``folded``: positions whose views the op folds itself; ``usable(node below)``: whether
    nothing else needs that node run."""
    edges = node.next_functions
    if not any(isinstance(c := edges[i][0], OpNode) and c._op.saves == () for i in node._mask) \
            or not takes_chains(node):
        return None   # (the common case, kept short)
    key, nodes = [], {}
    cut = node._cut   # (its padded operands' rows are the short call's: no chain below them)
    padded = () if cut is None else [i for i, _, _ in cut.pads]
    for i in node._mask:
        steps, below = [], []
        child = None if i in folded or i in padded else edges[i][0]
        while child is not None and (step := linear_step(child)) is not None and usable(child):
            steps.append(step)
            below.append(child)
            child = child.next_functions[0][0]
        key.append(tuple(steps) or None)
        if below:
            nodes[i] = below
    return (tuple(key), nodes) if nodes else None


_SAVED_POSITIONS = {}


def _saved_positions(op, mask, n_args):
    """Which operands (or "result") PyTorch saves for this op when ``mask`` require grad."""
    key = (op, mask, n_args)
    pos = _SAVED_POSITIONS.get(key)
    if pos is None:
        saves = op.saves
        if saves is None:
            pos = tuple(range(n_args))
        elif saves == "indices":   # the extra operands after the graph inputs
            pos = tuple(range(op.inputs, n_args))
        elif isinstance(saves, dict):   # what each input's gradient needs
            pos = tuple(sorted({j for i in mask for j in saves.get(i, ())}))
        else:
            pos = tuple(saves)
        _SAVED_POSITIONS[key] = pos
    return pos


def _short(name):
    """'ExpBackward0' -> 'Exp', as PyTorch names the op in its version-counter error."""
    for suffix in ("Backward0", "Backward1", "Backward"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name

