"""Eager dispatch: turn an op of the op table into a Tensor result and record its autograd Node.

NOTE [ dispatch ]
Every op is one pure function of jax arrays (``Op.fn``) plus hashable static arguments.  Calling
an op in eager mode runs a cached ``jax.jit`` of that function on the input arrays (jax's C++ fast
path: positional arrays, nothing else).  When an input requires grad, the output gets an ``OpNode``
that keeps the op's primals (its input arrays); backward runs a cached ``jax.jit`` of
"the VJP of ``fn`` at those primals, applied to the incoming gradient", so XLA drops forward work the
VJP does not need.  When an input holds a jax tracer (whole-step compile, ``to_jax``), the caches are
skipped and ``fn`` / ``jax.vjp`` are called directly, so the same eager code traces.

Python scalars are passed to the jitted function as (weakly typed) arguments, not baked into the
cache key: a loop over many scalar values must not compile once per value.

NOTE [ reading an array's shape and dtype ]
A jax array's ``shape``, ``dtype`` and ``ndim`` are Python properties that cost 0.3-0.5 µs each
(measured on the 2-core CPU); its ``aval`` is 0.05 µs, and the aval's ``shape`` and ``dtype``
are plain attributes.  Code that runs per op or per node (dispatch, node creation, the fused
backward's signature) reads them through ``arr.aval`` (``_tensor.aval_of``; dispatch's operand
loop, which branches on the array's type anyway, reads it inline).

NOTE [ folded views ]
PyTorch's ``weight.t()`` is a zero-copy view, and its addmm hands BLAS the transposed operand; a
jax array has no strides, so running ``t`` as an op copies the weight on every forward (on the
2-core CPU, 0.7 ms of the 2.0 ms a recorded forward of an MLP 784-512-512-10 took, where the
same forward under no_grad, one fused ``linear`` op per layer, took 1.2 ms).  An op may
therefore fold a view into itself: ``Op(fold={i: view_op})`` takes the view's base at position
``i`` and applies ``view_op`` (a view without static arguments) inside its own programs, where
XLA folds the transpose into the dot.  The graph still reads as PyTorch's: dispatch records the
view's node between the base and the op (its forward never runs, and nobody else can read the
view's values), the op's backward differentiates with respect to the view (so the view's node
transposes the gradient back, which the fused backward cancels), and the version check names
the view as PyTorch saved it.  A view with static arguments folds as ``(view_op, name)``: the
op's static argument ``name`` holds the view's own (a tuple of (key, value) pairs), which the
op's function does not receive.  F.linear folds its N-d input's ``view(-1, in)`` so (recorded,
a 3-d linear was view -> addmm -> view: three dispatches and two programs more than under
no_grad, where it is one op).

The output's ``view(*rows, out)`` folds too (``Op(view_out=(view_op, name))``; the static
``name`` holds the view's statics and the base's shape): the op's programs return the view's
array, and dispatch makes the result a view of a base tensor that
holds no array until something reads it (``out._base``, a write through either: then one
reshape makes it, ``Tensor._derive``).  The op's node sits on the base and the view's node on
the view, as PyTorch records them; the view's node keeps only the base's shape (a placeholder,
as a released linear op keeps), and its backward program makes zeros of that shape inside
itself, which XLA drops.  Measured on the 2-core CPU: a recorded linear over (8, 32, 64)
inputs took 68 us against 37 us under no_grad, 55 us with the output's view folded (its own
program, a copy of the output, and its dispatch gone).
"""
import operator

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec, SingleDeviceSharding

from . import _ahead, _amp_hook, _dtype as D, _meta
from ._device import out_of_memory
from ._x64 import restore as _x64_restore, swap as _x64_swap
from ._layout import output_strides
from ._lazy import Pending
from ._meta import MetaArray, is_meta
from ._quick import inlined, quick_jit
from ._tensor import ArrayImpl, Tensor, aval_of
from .autograd import graph
from .autograd.grad_mode import INFERENCE_REGIONS, _state

_SCALARS = (bool, int, float, complex)


class Op:
    """One row of the op table: a pure jnp function, its PyTorch backward-node name, and the
    inputs (by position) or ``"result"`` that PyTorch saves for backward (version-checked)."""

    __slots__ = ("name", "fn", "node", "saves", "promote", "view", "inputs", "promote_args",
                 "no_grad_reason", "elementwise", "identity", "dynamic", "_fwd", "_bwd",
                 "per_call", "fold", "view_out", "_fold_names", "pieces", "grad_pieces",
                 "cold", "_hot", "_node_cls", "undoes", "host",
                 "_specialised", "residuals", "fusion", "_traces", "ahead", "bucket")

    def __init__(self, name, fn, node, saves=None, promote=None, view=None, inputs=None,
                 promote_args=None, no_grad_reason=None, elementwise=False, identity=False,
                 dynamic=(), per_call=False, fold=None, view_out=None, pieces=None,
                 grad_pieces=None, cold=None, residuals=False, fusion=False, ahead=True,
                 undoes=None, bucket=None):
        self.name = name
        self.fn = fn
        self.node = node
        # None: every tensor input is saved (the safe default); () marks a linear op; a dict
        # {input: inputs its gradient needs} saves only what the inputs requiring grad need.
        self.saves = saves
        # None: inputs keep their dtypes; "common": PyTorch promotion; "float": promotion then
        # integers become the default float dtype.
        self.promote = promote
        # For view ops: how the output's strides follow from the input's (see _ops/shape.py).
        self.view = view
        # How many leading positional operands are graph inputs (listed in next_functions); the
        # rest are extra traced scalars (add's alpha, rsub's scalar) that never require grad.
        self.inputs = inputs
        # How many leading operands take part in type promotion (None: all of them).
        self.promote_args = promote_args
        # PyTorch records such an op but has no derivative for it: backward raises this (a
        # message for a RuntimeError, or an (exception type, message) pair).
        self.no_grad_reason = no_grad_reason
        # Elementwise ops (PyTorch's TensorIterator ops) lay their result out like their inputs
        # (see _layout.py).
        self.elementwise = elementwise
        # The forward returns its one operand's values unchanged (clone): eagerly the result
        # shares the operand's jax array instead of running a jitted copy.  Safe because jax
        # arrays are immutable and every torchlike write rebinds a Tensor's array.
        self.identity = identity
        # Names of integer static arguments (an index, a slice start) that the eager jitted
        # functions take as traced operands once an op has seen a second value, so a new value
        # reuses the compiled program instead of compiling another: x[i] for every i of a
        # dataset is a few programs, not one per i.
        self.dynamic = dynamic
        # Made for one call (torchlike.func, checkpoint: NOTE [ lifted transforms ] in
        # func/_lift.py): its forward and backward run without jit and no cache keeps it, so
        # nothing is compiled per call.  Checked on cache misses only, off the hot path.
        self.per_call = per_call
        # {position: (view Op, name of the op's static argument holding the view's statics, or
        # None)} applied to that operand inside the op (NOTE [ folded views ]); a bare view Op
        # stands for (view Op, None)
        self.fold = None if fold is None else {
            i: v if isinstance(v, tuple) else (v, None) for i, v in fold.items()}
        # (view Op, name of the op's static argument holding (the view's statics, the base's
        # shape)): the op's programs return that view of their output, and dispatch makes it a
        # view of a base of that shape whose array is made when read (NOTE [ folded views ])
        assert view_out is None or not (residuals or pieces or identity or dynamic), name
        self.view_out = view_out
        names = [] if fold is None else [name for _, name in self.fold.values() if name]
        self._fold_names = tuple(names + [view_out[1]] if view_out else names)
        # Outside tracing, pieces(arrays, static) may give the op's outputs without a program
        # of its own for these shapes: a multi-output op's as slices of one array, one program
        # per piece size shared by every piece (NOTE [ many outputs ]), copy's source when it
        # already is the result, a causal encoder layer's from its program at a bucket's length
        # (NOTE [ causal encoder layers in buckets ]); grad_pieces(static, mask) may give its
        # backward so (g, *primals -> cotangents); each returns None to run the op's own
        # program instead.
        self.pieces = pieces
        self.grad_pieces = grad_pieces
        # Outside tracing, where the op's program has not run for its operands' avals (as
        # ``_hot``, keyed by the program and the avals, records), cold(arrays, static, dt) may give
        # its output without it (moved or bucketed on the host: NOTE [ new shapes moved on the
        # host ] in _host.py); None runs the program, and those avals are hot from then on (a
        # dropped program's id, reused by another, at worst spares a shape its rule)
        self.cold = cold
        self._hot = {}
        # A view op's step as numpy: host(values, **static) gives the view of a numpy array, so
        # a read on the host takes a view's values from its root's (NOTE [ views read on the
        # host ] in _views.py); None where it has none
        self.host = None
        # A view op that may undo a view: undoes(step, static) says whether it, with ``static``,
        # undoes the view ``step`` ((op, static) of a chain); applied to a view one such step
        # from its storage root, its values are the root's, and no program runs (NOTE [ a view
        # undone ] in _ops/shape.py)
        assert undoes is None or view is not None, name
        self.undoes = undoes
        # Recorded eagerly, the op keeps the residuals of its VJP for backward instead of
        # recomputing them from the primals (NOTE [ kept residuals ])
        assert not residuals or not (dynamic or per_call or pieces or identity), name
        self.residuals = residuals
        # Outside tracing, bucket(op, arrays, static, recorded) may give (the operands at the
        # shape of a program the op has run, a cut) to run that program instead of compiling one
        # for these shapes; the cut takes the program's outputs to the call's and, for the node,
        # which keeps the operands it ran on, the call's gradients to the program's and back
        # (NOTE [ a short call in a longer one's program ] in _ops/padded.py)
        # (a folded operand is never one a bucket pads: the node routes its edge through the
        # view's node of the base's array)
        assert bucket is None or not (view or view_out or pieces), name
        self.bucket = bucket
        # its programs compile with XLA's fusion emitters (NOTE [ quick compiles ] in
        # _quick.py), whose code the quick options' runs markedly slower: True for all (a
        # recurrence's loop: the rnn stacks), or the fewest elements of a program's largest
        # array that take them (a row-wise softmax)
        self.fusion = fusion
        # Its backward's program may be traced and compiled on a worker thread (NOTE [ backward
        # programs compiled ahead ] in _ahead.py): not for a function that is not torchlike's
        # own pure code (a user's jax function, whose tracing may touch state)
        self.ahead = ahead
        self._fwd = {}
        self._bwd = {}
        self._specialised = {}   # (fixed static, dt) -> programs specialised to dynamic values
        # traces of its programs (NOTE [ programs for ever new shapes ]), and the new shapes it
        # met: those traces and its calls run on the host instead (NOTE [ new shapes moved on the
        # host ] in _host.py)
        self._traces = [0, 0]
        self._node_cls = graph.node_class(node) if node else None

    def __repr__(self):
        return f"<op {self.name}>"


def elementwise_op(name, fn, node, broadcasts=True, **kwargs):
    """An elementwise Op: its result takes the layout of its inputs (_layout.py).  Where its
    operands ``broadcasts`` as numpy's do (not prelu's weight), a new shape may run flattened in
    a bucket (NOTE [ rows in buckets ] in _host.py)."""
    op = Op(name, fn, node, elementwise=True, **kwargs)
    if broadcasts:
        op.cold = elementwise_cold(op)
    return op


def elementwise_cold(op):
    """The ``cold`` rule of an op whose result is its operands broadcast, element by element
    (NOTE [ rows in buckets ] in _host.py)."""
    def cold(arrays, static, dt):
        from ._host import elementwise_in_buckets   # (_host builds on this module)
        return elementwise_in_buckets(op, static, dt, arrays)
    return cold


def defop(name, node, **kwargs):
    """Decorator: register a jnp function as an Op (keyword arguments as for ``Op``)."""
    def wrap(fn):
        return Op(name, fn, node, **kwargs)
    return wrap


# --- promotion ----------------------------------------------------------------------------------

_PROMOTIONS = {}


def promoted_dtype(kind, key):
    """The dtype PyTorch computes in, from a key of operand descriptions: (numpy dtype, is 0-dim)
    for a Tensor, the Python type for a scalar.  Cached: the hot path is one dict lookup."""
    cache_key = (kind, key, D._defaults.float)
    dt = _PROMOTIONS.get(cache_key)
    if dt is None:
        dims, zeros, scalars = [], [], []
        for k in key:
            if isinstance(k, tuple):
                (zeros if k[1] else dims).append(D.from_numpy_dtype(k[0]))
            elif k is not None:
                scalars.append(D.scalar_dtype(k(1)))
        dt = D.result_type(dims, zeros, scalars)
        if kind == "float" and not (dt.is_floating_point or dt.is_complex):
            dt = D.get_default_dtype()
        _PROMOTIONS[cache_key] = dt
    return dt


def operand_key(x):
    """How an operand takes part in promotion (see promoted_dtype)."""
    if isinstance(x, Tensor):
        if x._number is not None:
            return x._number
        aval = x._aval()
        return (aval.dtype, not aval.shape)
    return type(x) if isinstance(x, _SCALARS) else None


def result_dtype(kind, *operands):
    """PyTorch's result dtype for these Tensors / Python scalars ("common" or "float")."""
    return promoted_dtype(kind, tuple(operand_key(x) for x in operands))


def _cast_fn(fn, dt, static, n):
    """fn with its first ``n`` operands (None: all) converted to dt first, so promotion happens
    inside the jitted function."""
    npdt, kw = dt._np, dict(static)

    def cast(*xs):
        k = len(xs) if n is None else n
        return fn(*[jnp.asarray(x, npdt) for x in xs[:k]], *xs[k:], **kw)
    return cast


def _plain_fn(fn, static):
    if static:
        kw = dict(static)
        return lambda *xs: fn(*xs, **kw)
    return fn


def split_dynamic(names, static):
    """(``static`` without ``names``, the values of ``names``; ``static`` lists them in the
    order of ``names``)."""
    fixed, values = [], []
    for kv in static:
        if kv[0] in names:
            values.append(kv[1])
        else:
            fixed.append(kv)
    return tuple(fixed), values


def with_dynamic(names, fixed, values):
    """The static arguments again, from split_dynamic's parts (values may be traced)."""
    return fixed + tuple(zip(names, values))


def op_jit(op, fn, **kwargs):
    """``quick_jit`` (NOTE [ quick compiles ] in _quick.py), with ``op.fusion``."""
    return quick_jit(fn, fusion=op.fusion, traces=op._traces, **kwargs)


# NOTE [ bounded program caches ]
# An entry of a cache keyed by static arguments that can carry shapes (a view's sizes, a
# factory's size, a slice's bounds) keeps a jax.jit function alive, and with it every program
# compiled for it.  Each costs resident memory for as long as its function lives: with jax
# 0.10.2 on the CPU, 200 programs of ``x + 1`` (200 shapes) kept 286 MB while their jit functions
# stayed alive and 54 MB once each was dropped.  A loop over many shapes would add an entry per
# shape for as long as the process runs, so such a cache (an op's programs, a view chain's, a
# factory's) holds at most a fixed number of entries and drops the oldest first (no work on a
# hit; a dropped entry that is needed again compiles again).  The bounds are far above what one
# program's working set needs.  jax's own caches of compiled programs are bounded by jax.
_MAX_PROGRAMS = 256   # per cache of an op (_fwd, _bwd), and of _READS and _BACKWARD_OPS


def remember(cache, key, value, bound=None):
    """``cache[key] = value``, the oldest entry dropped first when ``cache`` holds ``bound``
    entries (default ``_MAX_PROGRAMS``; NOTE [ bounded program caches ]); returns ``value``."""
    while len(cache) >= (_MAX_PROGRAMS if bound is None else bound):
        del cache[next(iter(cache))]
    cache[key] = value
    return value


# programs per op and shape specialised to their dynamic values (see below): a traced start
# costs a call 2-3 µs more than a static one and a program ~40 ms to compile (2-core CPU), so a
# specialised program for a second value repays itself after ~15,000 calls of that value only
_SPECIALISED = 1


def _specialised_fn(op, static, fixed, dt):
    """A program specialised to this op's dynamic values (a static index is the cheapest to
    call), for the first _SPECIALISED values seen with these fixed arguments; None after that,
    when one program taking the values as operands serves every other value."""
    key = (fixed, dt)
    n = op._specialised.get(key, 0)
    if n >= _SPECIALISED:
        return None
    op._specialised[key] = n + 1
    return forward_fn(op, static, dt)


def dynamic_forward_fn(op, fixed, dt):
    """The cached, jitted forward of an op with ``dynamic`` arguments: f(*arrays, *values)."""
    key = (fixed, dt)
    f = op._fwd.get(key)
    if f is None:
        n = len(op.dynamic)

        def run(*xs):
            return _raw_fn(op, with_dynamic(op.dynamic, fixed, xs[-n:]), dt)(*xs[:-n])
        f = remember(op._fwd, key, op_jit(op, run, keep_unused=True))
    return f


def forward_fn(op, static, dt):
    """The cached, jitted forward of ``op`` for these static arguments and compute dtype."""
    key = (static, dt)
    f = op._fwd.get(key)
    if f is None:
        if op.per_call:
            return _raw_fn(op, static, dt)
        # keep_unused: an operand only read for its shape (x.uniform_(), zeros_like) still
        # places the result, which stays committed to that operand's device like every array
        # torchlike makes (jitted calls with committed and uncommitted arguments compile twice)
        f = remember(op._fwd, key, op_jit(op, _raw_fn(op, static, dt), keep_unused=True))
    return f


def _raw_fn(op, static, dt):
    f = _viewed_fn(op, static, dt)
    if op.view_out is not None:   # NOTE [ folded views ]
        view, name = op.view_out
        f = _then(f, _plain_fn(view.fn, fold_static(static, name)[0]))
    if op.fold is None:
        return f
    views = _fold_fns(op, static)
    return lambda *xs: f(*_apply_folds(views, xs))


def _then(f, g):
    return lambda *xs: g(f(*xs))


def _viewed_fn(op, static, dt):
    """``op``'s function of its operands as it sees them: folded views already applied."""
    if op._fold_names:
        static = tuple(kv for kv in static if kv[0] not in op._fold_names)
    if dt is None:
        return _plain_fn(op.fn, static)
    return _cast_fn(op.fn, dt, static, op.promote_args)


def fold_static(static, name):
    """The static arguments of a folded view: the op's static argument ``name`` (none for a
    view folded without any; NOTE [ folded views ])."""
    if name is not None:
        for k, v in static:
            if k == name:
                return v
    return ()


def _fold_fns(op, static):
    """{position: the folded view's function of the base's array} for these statics."""
    return {i: _plain_fn(view.fn, fold_static(static, name))
            for i, (view, name) in op.fold.items()}


def _apply_folds(views, xs):
    xs = list(xs)
    for i, fn in views.items():
        xs[i] = fn(xs[i])
    return xs


def _fold_edges(op, static, edges, arrays):
    """Route each folded operand's edge through a node of its view (NOTE [ folded views ]),
    recorded without running the view: its one primal is the base's array, and the base's
    array stands in for the view's output, whose dtype is all the node reads of it."""
    for i, (view, name) in op.fold.items():
        if edges[i] is not None:
            arr = arrays[i]
            node = view._node_cls(view, fold_static(static, name), None, (arr,), (edges[i],),
                                  (0,), (wrap_value(arr),))
            edges[i] = (node, 0)


def is_traced(arrays):
    """Whether any of ``arrays`` is a jax tracer (the code runs inside a JAX transform)."""
    for a in arrays:
        if type(a) is not ArrayImpl and isinstance(a, jax.core.Tracer):
            return True
    return False


# --- the eager entry point ----------------------------------------------------------------------

def call(op, *args, static=()):
    """Run ``op`` on Tensors / Python scalars ``args`` with hashable ``static`` kwargs (a tuple of
    (name, value) pairs).  Returns a Tensor (or a tuple of Tensors for multi-output ops)."""
    prev = _x64_swap(True)   # NOTE [ 64-bit types in torchlike's scope ]
    try:
        if _amp_hook.policy is not None:   # NOTE [ autocast hook ]: a region is active
            args = _amp_hook.policy.cast(op, args)
        if _profiler is not None:   # NOTE [ profiler hook ] in autograd/profiler.py
            return _profiler.op(op, args, static)
        return _call(op, args, static)
    finally:
        _x64_restore(prev)


def _call(op, args, static):
    n = len(args)
    n_in = n if op.inputs is None else op.inputs
    n_promote = n if op.promote_args is None else op.promote_args
    grad = _state.grad_enabled
    arrays, key, edges, mask, traced, strided, meta = [], [], None, [], False, False, False
    pending, residuals, numbers, cut = False, None, False, None
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            arr = a._lazy   # NOTE [ lazy segments ] in _lazy.py
            if arr is None or arr.value is not None:   # (run already: it takes the array)
                arr = a._arr if a._root is None else a._sync()
            elif a._root is not None and a._root._gen != a._seen:   # written since
                arr = a._sync()
            else:
                pending = True
            if a._strides is not None:
                strided = True
            if type(arr) is ArrayImpl:
                aval = arr.aval   # NOTE [ reading an array's shape and dtype ]
            else:
                aval = arr
                if isinstance(arr, jax.core.Tracer):
                    traced = True
                elif type(arr) is MetaArray:
                    meta = True
            if i < n_promote:
                key.append((aval.dtype, not aval.shape) if a._number is None else a._number)
            if grad and i < n_in and ((fn := a._grad_fn) is not None or a._requires_grad):
                if edges is None:
                    edges = [None] * n_in
                edges[i] = a._edge() if fn is None or a._stale else (fn, a._output_nr)
                mask.append(i)
        else:
            arr = a
            numbers = True
            if i < n_promote:
                key.append(operand_key(a))
        arrays.append(arr)
    # new shapes the op has met (NOTE [ backward programs compiled ahead ] in _ahead.py:
    # concrete operands, run now; a pending one outside lazy mode, a deferred cut's, is run
    # below before the op)
    traces = op._traces[1] if edges is not None and op.ahead and _record is None and \
        not traced else None
    dt = None
    if op.promote:
        dt = _PROMOTIONS.get((op.promote, tuple(key), D._defaults.float))
        if dt is None:
            dt = promoted_dtype(op.promote, tuple(key))
    if meta:   # NOTE [ the meta device ]
        if pending:
            arrays = [a.get() if type(a) is Pending else a for a in arrays]
        if edges is not None and op.fold is not None:
            _fold_edges(op, static, edges, arrays)
        return wrap_outputs(op, static, dt, _on_meta(op, static, dt, args, arrays), args, arrays,
                            edges, mask, strided)
    try:
        # (an op that keeps residuals for its backward runs now: NOTE [ kept residuals ])
        if not traced and _record is not None and not (op.residuals and edges is not None) \
                and (out := _lazy_forward(op, static, dt, arrays)) is not None:
            pass
        else:
            if pending:   # run: a traced op captures the value (NOTE [ lazy segments ])
                arrays = [a.get() if type(a) is Pending else a for a in arrays]
            if traced:
                out = _raw_fn(op, static, dt)(*arrays)
            else:
                # (NOTE [ a short call in a longer one's program ] in _ops/padded.py)
                if op.bucket is not None and \
                        (bucket := op.bucket(op, arrays, static, edges is not None)) is not None:
                    arrays, cut = bucket   # a recorded call's node keeps them
                if op.residuals and edges is not None:   # NOTE [ kept residuals ]
                    out, residuals = residual_forward_fn(op, static, dt, tuple(mask))(*arrays)
                elif op.undoes is None or (out := _undone(op, static, args[0])) is None:
                    out = eager_forward(op, static, dt, arrays, numbers)
                if cut is not None:
                    out = cut.outputs(out)
    except (TypeError, ValueError) as e:
        if "broadcast" in str(e):
            raise RuntimeError(_broadcast_message(arrays)) from None
        if "incompatible devices" in str(e):
            return call(op, *_one_device(args), static=static)
        raise
    except jax.errors.JaxRuntimeError as e:
        raise out_of_memory(e) or e
    except OverflowError:   # a Python int past int64: read it as PyTorch does, then again
        read = [_past_int64(a, dt) for a in args]
        if all(map(operator.is_, read, args)):   # it came from elsewhere
            raise
        return call(op, *read, static=static)
    if edges is None and op.view is None and op.view_out is None and not strided:
        t = _new_tensor(Tensor)   # the common no-grad case, kept short (Tensor._wrap inlined)
        if type(out) is ArrayImpl:
            t._arr = out
        elif type(out) is Pending:
            t._lazy = out
        else:
            return wrap_outputs(op, static, dt, out, args, arrays, edges, mask, strided)
        if INFERENCE_REGIONS[0] and _state.inference:
            t._inference = True
        return t
    if edges is not None and op.fold is not None:
        _fold_edges(op, static, edges, arrays)
    if ((kind := type(out)) is ArrayImpl or kind is Pending) and op._node_cls is not None and \
            op.view is None and op.view_out is None and not strided and cut is None:
        # one recorded output, the common case, kept short (wrap_outputs inlined)
        outs = _new_tensor(Tensor)
        if kind is ArrayImpl:
            outs._arr = out
        else:
            outs._lazy = out
        if INFERENCE_REGIONS[0] and _state.inference:
            outs._inference = True
        node = op._node_cls(op, static, dt, tuple(arrays), edges, tuple(mask), (outs,))
        if node.differentiable:
            if residuals is not None:
                node._residuals = residuals
            if op.saves != ():
                node.save_versions(args, (outs,))
            outs._grad_fn = node
    else:
        outs = wrap_outputs(op, static, dt, out, args, arrays, edges, mask, strided, residuals,
                            cut)
    if traces is not None and op._traces[1] != traces and _ahead.enabled:
        _compile_ahead(outs)   # (a program of op's was traced just now, or it ran on the host)
    return outs


def _undone(op, static, x):
    """The array of view op ``op`` of ``x`` where it undoes the one step that made ``x`` from its
    storage root: the root's (NOTE [ a view undone ] in _ops/shape.py); else None."""
    root = x._root
    if root is None or len(x._chain) != 1 or not op.undoes(x._chain[0], static):
        return None
    arr = root._value()
    return arr if type(arr) is ArrayImpl else None


def _compile_ahead(outs):
    """Hand the backward of the node that made ``outs`` (a Tensor or a tuple of them) to the
    worker thread: for an op with folded views, the program that runs through them, as the
    walk will (NOTE [ backward programs compiled ahead ] in _ahead.py; NOTE [ backward through
    folded views ] in autograd/engine.py); none for a linear op's node (a view's, a clone's),
    whose backward the walk runs inside the next one's (NOTE [ backward through linear ops ]
    there)."""
    outs = outs if type(outs) is tuple else (outs,)
    node = next((t._grad_fn for t in outs if t._grad_fn is not None), None)
    if not isinstance(node, graph.OpNode) or node._primals is None or \
            graph.linear_step(node) is not None:
        return
    arr = outs[0]._arr
    g = [_ahead.abstract(o._arr.shape, o._arr.dtype, arr)
         for nr, o in enumerate(outs) if node.out_diff[nr]]
    if node._placeholders:   # a folded output view's node: the op's is the base's
        node = node.next_functions[0][0]
        if not isinstance(node, graph.OpNode) or node._primals is None:
            return
    node.compile_ahead(g, through=node._op.fold is not None or node._op.view_out is not None)


_new_tensor = object.__new__
_record = None   # _lazy.record while lazy mode is on (NOTE [ lazy segments ] in _lazy.py)
_profiler = None   # the active recorder (NOTE [ profiler hook ] in autograd/profiler.py)


def eager_forward(op, static, dt, arrays, numbers=False):
    """Run ``op``'s forward on concrete arrays: its cached program (specialised or taking its
    dynamic arguments as operands), its shared slicing program, or nothing for an identity.
    ``numbers``: whether some of ``arrays`` may be Python numbers."""
    if op.identity:
        return arrays[0]
    if op.pieces is not None and (pieces := op.pieces(arrays, static)) is not None:
        return pieces
    fn = op._fwd.get((static, dt))
    operands = arrays
    if fn is None:
        if op.dynamic:
            fixed, values = split_dynamic(op.dynamic, static)
            fn = _specialised_fn(op, static, fixed, dt)
            if fn is None:
                fn = dynamic_forward_fn(op, fixed, dt)
                operands = (*arrays, *values)
        else:
            fn = forward_fn(op, static, dt)
    if op.cold is not None:   # (NOTE [ new shapes moved on the host ] in _host.py)
        key = _hot_key(fn, arrays)
        if key not in op._hot:
            out = op.cold(arrays, static, dt)
            if out is not None:
                return out
            remember(op._hot, key, True)
    if numbers or operands is not arrays:   # (the dynamic values are numbers too)
        operands = _device_numbers(operands)
    try:
        return fn(*operands)
    except ValueError as e:   # inside another trace (NOTE [ quick compiles ] in _quick.py)
        return inlined(e, fn, *operands)


# NOTE [ Python numbers as device scalars ]
# jax makes a device scalar of every Python number a jitted call takes, on every call: a 64x64
# ``x * 0.5`` took 21 µs against 15 for ``x * x``, and 17.4 with the number kept on the device
# (2-core CPU, jax 0.10.2).  So a number an eager program uses again and again (a learning rate
# times a gradient, an epsilon, a loop's indices x[i]) is kept as a device scalar once it has been
# an operand NUMBER_RENT times on a device, and passed in its place: weakly typed and
# uncommitted, as the scalar jax makes of the number is, so the call's signature, its program and
# its result are the same.  Making one costs a jitted call (about 15 µs), so a number seen a few
# times only (a learning rate a scheduler changes every step) stays a number and costs a lookup.
# Floats that compare equal but differ (0.0 and -0.0) or equal nothing (NaN) stay numbers too,
# as do numbers next to arrays spread over several devices.  At most _MAX_PROGRAMS numbers are
# counted or kept, the least recently added dropped first.
NUMBER_RENT = 8
_NUMBERS = {}   # (type, value, sharding) -> sightings so far, or the device scalar
_SCALAR = jax.jit(lambda x: x)


def _device_numbers(operands):
    """``operands`` with each Python number the device keeps (NOTE above) in its place."""
    for a in operands:
        if type(a) is ArrayImpl:
            where = a.sharding   # (equal for arrays on one device)
            if type(where) is not SingleDeviceSharding:
                return operands
            break
    else:
        return operands
    out = None
    for i, a in enumerate(operands):
        kind = type(a)
        if kind is float and a == a and a != 0.0 or kind is int and -2 ** 63 <= a < 2 ** 63:
            key = (kind, a, where)
            kept = _NUMBERS.get(key, 0)
            if type(kept) is int:   # its sightings so far
                if kept + 1 < NUMBER_RENT:
                    value = kept + 1
                else:
                    with jax.default_device(next(iter(where.device_set))):
                        value = _SCALAR(a)
                if kept:   # (an entry already: the cache does not grow)
                    _NUMBERS[key] = value
                else:
                    remember(_NUMBERS, key, value)
                if type(value) is int:
                    continue
                kept = value
            if out is None:
                out = list(operands)
            out[i] = kept
    return operands if out is None else out


def _hot_key(fn, arrays):
    """``Op._hot``'s key of a call of program ``fn``: its operands' avals (a Python number's
    type, whatever its value); one or two operands, the common cases, spelt out."""
    a = arrays[0]
    a = a.aval if type(a) is ArrayImpl else type(a)
    if len(arrays) == 1:
        return id(fn), a
    if len(arrays) == 2:
        b = arrays[1]
        return id(fn), a, b.aval if type(b) is ArrayImpl else type(b)
    return (id(fn), a, *[b.aval if type(b) is ArrayImpl else type(b) for b in arrays[1:]])


def _lazy_forward(op, static, dt, arrays):
    """``op`` recorded in the open segment: its Pending output(s), or None where it runs now
    (NOTE [ lazy segments ] in _lazy.py)."""
    if op.identity:
        return arrays[0] if type(arrays[0]) is Pending else None
    if op.per_call:
        return None
    if op.dynamic:   # the dynamic values as operands: x[i] for every i is one path
        fixed, values = split_dynamic(op.dynamic, static)
        return _record(op, fixed, dt, arrays + values, len(values))
    return _record(op, static, dt, arrays)


def traceable_fn(op, static, dt, n_dynamic=0):
    """``op``'s function of its operands, its ``n_dynamic`` dynamic values last (as recorded:
    NOTE [ lazy segments ] in _lazy.py)."""
    if not n_dynamic:
        return _raw_fn(op, static, dt)

    def run(*xs):
        return _raw_fn(op, with_dynamic(op.dynamic, static, xs[-n_dynamic:]), dt)(
            *xs[:-n_dynamic])
    return run


def recorded_forward(op, static, dt, arrays, n_dynamic=0):
    """``eager_forward`` of a record (its dynamic values last among ``arrays``), its Python
    numbers kept on the device as eagerly (NOTE [ Python numbers as device scalars ])."""
    if n_dynamic:
        static = with_dynamic(op.dynamic, static, arrays[-n_dynamic:])
        arrays = arrays[:-n_dynamic]
    return eager_forward(op, static, dt, arrays, any(type(a) in _SCALARS for a in arrays))


def _past_int64(x, dt):
    """A Python int operand as PyTorch reads one past int64: as a uint64 (so an integer op
    sees it wrapped around, a floating one its value), and not at all past that."""
    if type(x) is not int or -2 ** 63 <= x < 2 ** 63:
        return x
    if x >= 2 ** 64:
        raise OverflowError("int too big to convert")
    if x < 0:
        raise OverflowError("can't convert negative int to unsigned")
    return float(x) if dt is not None and (dt.is_floating_point or dt.is_complex) else x - 2 ** 64


def _one_device(args):
    """The operands of an op over tensors on several devices, where PyTorch allows that: a
    0-dim CPU tensor joins the device of the others (moved, and recorded for autograd).
    Anything else gets PyTorch's RuntimeError.  Reached only after jax refused the mix, so
    the common case costs nothing."""
    tensors = [a for a in args if isinstance(a, Tensor)]
    spread = next((a._value().sharding for a in tensors
                   if isinstance(a._value().sharding, NamedSharding)
                   and len(a._value().sharding.device_set) > 1), None)
    joining = [a for a in tensors if spread is not None and a._value().devices() <
               spread.device_set]
    if joining:   # NOTE [ tensors over several devices ]
        return [_replicate(a, spread) if any(a is j for j in joining) else a for a in args]
    anchored = list(dict.fromkeys(a.device for a in tensors if a.ndim or a.device.type != "cpu"))
    if len(anchored) != 1:
        found = anchored if anchored else list(dict.fromkeys(a.device for a in tensors))
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                           f"two devices, {found[0]} and {found[1]}!")
    return [a.to(anchored[0]) if isinstance(a, Tensor) and not a.ndim and a.device.type == "cpu"
            else a for a in args]


# NOTE [ tensors over several devices ]
# A tensor whose array spans several devices (DataParallel's sharded batch and replicated
# parameters, NOTE [ DataParallel ] in nn/parallel/data_parallel.py) reports its first device
# as its ``device``, so code that makes a tensor ``device=x.device`` makes it on one of them.
# Where such a tensor meets the spread one, it joins it replicated over the same devices (a
# recorded move, whose backward brings the gradient back), as it would live on each of
# PyTorch's replicas.  A tensor on a device outside them is still an error.
def _replicate(t, spread):
    """``t`` put on every device of the sharding ``spread``, recorded for autograd."""
    arr = t._value()
    where = NamedSharding(spread.mesh, PartitionSpec())
    out = Tensor._wrap(jax.device_put(arr, where))
    if _state.grad_enabled and t.requires_grad:
        out._grad_fn = graph.ToCopyBackward0(t._edge(), arr.sharding, _move_to)
    return out


def _move_to(t, where):
    return Tensor._wrap(jax.device_put(t._value(), where))


def _on_meta(op, static, dt, args, arrays):
    """The outputs of ``op`` over meta operands, as MetaArrays (a 0-dim CPU tensor joins them,
    as in PyTorch; any other tensor elsewhere is an error, which names the device of the first
    tensor that is not such a 0-dim one as the one expected)."""
    tensors = [(i, a) for i, a in enumerate(args) if isinstance(a, Tensor)]
    joins = {i for i, a in tensors if not is_meta(arrays[i]) and not a.ndim
             and a.device.type == "cpu"}
    expected = next(a.device for i, a in tensors if i not in joins)
    for i, a in tensors:
        if i in joins:
            arrays[i] = _meta.array((), arrays[i].dtype)
        elif a.device != expected:
            raise RuntimeError(f"Tensor on device {a.device} is not on the expected device "
                               f"{expected}!")
    return _meta.evaluate(forward_fn(op, static, dt), op.name, *arrays)   # its trace is cached


def _broadcast_message(arrays):
    """PyTorch's wording for the first pair of operand shapes that do not broadcast."""
    shapes = [a.shape for a in arrays if hasattr(a, "shape")]
    a = shapes[0]
    for b in shapes[1:]:
        n = max(len(a), len(b))
        pa, pb = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
        for d in range(n - 1, -1, -1):
            if pa[d] != pb[d] and pa[d] != 1 and pb[d] != 1:
                return (f"The size of tensor a ({pa[d]}) must match the size of tensor b "
                        f"({pb[d]}) at non-singleton dimension {d}")
    return f"shapes {[list(s) for s in shapes]} cannot be broadcast together"


def wrap_value(v):
    """A Tensor of an array, or pending on a recorded value (NOTE [ lazy segments ])."""
    if type(v) is not Pending:
        return Tensor._wrap(v)
    t = _new_tensor(Tensor)
    t._lazy = v
    if INFERENCE_REGIONS[0] and _state.inference:
        t._inference = True
    return t


def wrap_outputs(op, static, dt, out, args, arrays, edges, mask=None, strided=True,
                 residuals=None, cut=None):
    """Wrap raw outputs into Tensors and, when some input requires grad, attach an OpNode.
    ``strided=False`` says no input is laid out non-contiguously (call() knows already);
    ``residuals``: what the node keeps for its backward (NOTE [ kept residuals ]); ``cut``:
    the bucket's, where ``arrays`` are a bucket's (NOTE [ a short call in a longer one's
    program ] in _ops/padded.py)."""
    if edges is not None and mask is None:
        mask = [i for i, e in enumerate(edges) if e is not None]
    if op.view_out is not None:
        return _output_view(op, static, dt, out, args, arrays, edges, mask)
    multi = isinstance(out, (tuple, list))
    outs = tuple(wrap_value(o) for o in out) if multi else (wrap_value(out),)
    if edges is not None and op._node_cls is not None:
        node = op._node_cls(op, static, dt, tuple(arrays), edges, tuple(mask), outs, multi)
        if node.differentiable:
            if residuals is not None and all(node.out_diff):
                node._residuals = residuals
            if cut is not None:
                node._cut = cut
            if op.saves != ():
                node.save_versions(args, outs)
            if not multi:
                outs[0]._grad_fn = node   # output 0: _output_nr's default
            else:
                for nr, t in enumerate(outs):
                    if node.out_diff[nr]:
                        t._grad_fn = node
                        t._output_nr = nr
    if op.view is not None and not multi:
        outs[0]._become_view(args[0], op, static, edges is not None)
    elif op.elementwise and strided and not multi and any(
            isinstance(a, Tensor) and a._strides is not None for a in args):
        # a Python scalar is a 0-dim operand, as PyTorch wraps it
        outs[0]._strides = output_strides(out.shape, [
            (a.shape, a.stride()) if isinstance(a, Tensor) else ((), ()) for a in args
            if isinstance(a, (Tensor,) + _SCALARS)])
    return outs if multi else outs[0]


def _output_view(op, static, dt, out, args, arrays, edges, mask):
    """The result of an op that folds the view of its output (NOTE [ folded views ]): ``out``
    (the view's array) as a view of a base whose array is made from it when read, the op's node
    on the base and the view's node, which keeps only the base's shape, on the view."""
    view, name = op.view_out
    view_static, base_shape = fold_static(static, name)
    t = wrap_value(out)
    base = _new_tensor(Tensor)
    base._derive = (out, ((view, (("shape", base_shape),)),))
    if t._inference:
        base._inference = True
    if edges is not None and op._node_cls is not None:
        node = op._node_cls(op, static, dt, tuple(arrays), edges, tuple(mask), (t,))
        if node.differentiable:
            if op.saves != ():
                node.save_versions(args, (t,))
            base._grad_fn = node
    t._become_view(base, view, view_static, edges is not None)
    if base._grad_fn is not None:
        node = view._node_cls(view, view_static, None, ((base_shape, aval_of(out).dtype),),
                              ((base._grad_fn, 0),), (0,), (t,))
        node._placeholders, node._pending = True, False   # (nothing to resolve)
        t._grad_fn = node
    return t


# --- backward -----------------------------------------------------------------------------------

def _vjp_at(op, static, dt, mask, out_mask, through=False):
    """primals -> jax.vjp of ``op``'s outputs in ``out_mask`` (None: all) with respect to its
    operands in ``mask`` (positions that require grad; of the view, for a folded operand).
    ``through``: of the op as its forward program runs it, its folded views and output view
    inside (the folded operands' bases; the output view's values): NOTE [ backward through
    folded views ] in autograd/engine.py."""
    f = _viewed_fn(op, static, dt)
    views = None if op.fold is None else _fold_fns(op, static)
    if through and op.view_out is not None:
        view, name = op.view_out
        f = _then(f, _plain_fn(view.fn, fold_static(static, name)[0]))

    def vjp(primals):
        if views is not None and not through:
            primals = _apply_folds(views, primals)
        def f_diff(*d):
            full = list(primals)
            for i, v in zip(mask, d):
                full[i] = v
            if views is not None and through:
                full = _apply_folds(views, full)
            out = f(*full)
            if out_mask is None:
                return out
            return tuple(o for o, keep in zip(out, out_mask) if keep)
        return jax.vjp(f_diff, *[primals[i] for i in mask])
    return vjp


def _pull(pull, g, primals):
    """``pull(g)``, as PyTorch defines complex gradients: conjugate Wirtinger derivatives,
    where jax's vjp is the transpose of the plain Jacobian, so conjugated on the way in and
    out."""
    if not any(jnp.iscomplexobj(x) for x in jax.tree_util.tree_leaves((g, primals))):
        return pull(g)
    return tuple(jnp.conj(r) for r in pull(jax.tree_util.tree_map(jnp.conj, g)))


def _vjp_fn(op, static, dt, mask, out_mask, through=False):
    """g, *primals -> cotangents of the inputs in ``mask`` (positions that require grad; of
    the view, for a folded operand, unless ``through``: ``_vjp_at``)."""
    vjp = _vjp_at(op, static, dt, mask, out_mask, through)

    def bwd(g, *primals):
        return _pull(vjp(primals)[1], g, primals)
    return bwd


# NOTE [ kept residuals ]
# An op's backward is the VJP of its function at the saved primals (NOTE [ dispatch ]): XLA
# drops the forward work the VJP does not need, and computes again what it needs.  For most
# ops that is nothing, or one elementwise pass; for a recurrence it is the whole forward scan.
# An op marked ``residuals=True`` (the rnn stacks: NOTE [ rnn ops ] in _ops/rnn.py) therefore
# runs, when it is recorded eagerly, a forward that also returns the residuals of ``jax.vjp``
# (the pullback's leaves), which its node keeps beside the primals until backward.  Its
# backward, node by node and in the fused backward, puts the pullback back together from them:
# it traces the VJP at the primals only to learn the residuals' structure, so the forward is
# dead code there, which XLA drops.  Measured on the 2-core CPU, one LSTM layer of
# examples/pytorch/word_lstm.py (35 steps, batch 20, 64 -> 128; the op's own programs): forward
# 2.5-2.8 ms, backward at the primals 5.1-5.2 ms; forward keeping residuals 1.9-2.1 ms (4.9 MB of
# them), backward from them 3.4-4.2 ms; that program's whole eager step (2-layer LSTM, decoder,
# SGD) went from 32-34 to 26-27 ms (torch: 23 ms).  A hand-written reverse rule for the LSTM's
# scan (weight gradients as one product after the loop, as cuDNN forms them) measured the same
# as jax's reverse from these residuals and was not kept.  The primals are kept as for any op:
# create_graph differentiates the backward as a function of them, and a traced call and the
# meta device run the op as any other (with nothing kept).  Lazy mode runs such an op when it is
# recorded with a graph rather than record it (its pending operands first): a segment's
# program, forward and backward in one, computed the scan's forward twice (word_lstm lazily
# 11.3 s, eagerly 10.2 s; running it so, 10.4 s lazily).
def residual_forward_fn(op, static, dt, mask):
    """The cached, jitted forward of ``op`` that also returns the residuals of its VJP with
    respect to the operands in ``mask``: f(*arrays) -> (outputs, residuals)."""
    key = ("residuals", static, dt, mask)
    f = op._fwd.get(key)
    if f is None:
        vjp = _vjp_at(op, static, dt, mask, None)

        def run(*xs):
            out, pull = vjp(xs)
            return out, jax.tree_util.tree_leaves(pull)
        f = remember(op._fwd, key, op_jit(op, run, keep_unused=True))
    return f


def residual_vjp_fn(op, static, dt, mask):
    """g, primals, residuals -> the cotangents of the operands in ``mask``, from the residuals
    ``residual_forward_fn`` returned (NOTE [ kept residuals ]); un-jitted."""
    vjp = _vjp_at(op, static, dt, mask, None)

    def bwd(g, primals, residuals):
        _, pull = vjp(primals)   # (for the residuals' structure: dead code, dropped by XLA)
        pull = jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(pull), residuals)
        return _pull(pull, g, primals)
    return bwd


def residual_backward_fn(op, static, dt, mask):
    """The cached jit of ``residual_vjp_fn``."""
    key = ("residuals", static, dt, mask)
    f = op._bwd.get(key)
    if f is None:
        f = remember(op._bwd, key, op_jit(op, residual_vjp_fn(op, static, dt, mask)))
    return f


def backward_fn(op, static, dt, mask, out_mask, traced, through=False, chains=None):
    """g, *primals -> the cotangents of the inputs in ``mask``: a cached jit of ``_vjp_fn``,
    or ``_vjp_fn`` itself while tracing and for an op made per call; ``through``: of the op
    with its folded views inside (``_vjp_at``; an op of the table with folds, concrete
    values); ``chains``: taken on through the linear ops below its operands
    (``graph.linear_chains``' key: NOTE [ backward through linear ops ] in
    autograd/engine.py)."""
    if chains is not None:
        key = ("chains", through, static, dt, mask, out_mask, chains)
        f = op._bwd.get(key)
        if f is None:
            f = remember(op._bwd, key, op_jit(op, _through_linear(
                _vjp_fn(op, static, dt, mask, out_mask, through), chains)))
        return f
    if through:
        key = ("through", static, dt, mask, out_mask)
        f = op._bwd.get(key)
        if f is None:
            f = remember(op._bwd, key, op_jit(op, _vjp_fn(op, static, dt, mask, out_mask, True)))
        return f
    if traced:
        return _vjp_fn(op, static, dt, mask, out_mask)
    if op.grad_pieces is not None:
        f = op.grad_pieces(static, mask)
        if f is not None:
            return f
    if op.dynamic:
        fixed, values = split_dynamic(op.dynamic, static)
        key = (fixed, dt, mask, out_mask)
        f = op._bwd.get(key)
        if f is None:
            def run(g, values, *primals):
                return _vjp_fn(op, with_dynamic(op.dynamic, fixed, values), dt, mask,
                               out_mask)(g, *primals)
            f = remember(op._bwd, key, op_jit(op, run))
        return lambda g, *primals: f(g, values, *primals)
    key = (static, dt, mask, out_mask)
    f = op._bwd.get(key)
    if f is None:
        f = _vjp_fn(op, static, dt, mask, out_mask)
        if not op.per_call:
            f = remember(op._bwd, key, op_jit(op, f))
    return f


def _through_linear(bwd, chains):
    """``bwd`` (g, *primals -> the cotangents of the operands in its mask), each operand's taken
    on down through the linear ops ``chains`` has below it: each one's VJP at zeros of its
    operand's shape, of which it reads nothing (such an op saves nothing)."""
    pulls = [[(_vjp_fn(op, static, dt, (0,), None), (aval,)) for op, static, dt, aval in steps]
             for steps in chains if steps is not None]
    at = [k for k, steps in enumerate(chains) if steps is not None]

    def run(g, *primals):
        cts = list(bwd(g, *primals))
        for k, steps in zip(at, pulls):
            for pull, placeholders in steps:
                (cts[k],) = pull(cts[k], *placeholder_values(placeholders))
        return tuple(cts)
    return run


def placeholder_backward_fn(op, static, dt, mask, out_mask, placeholders):
    """g -> the cotangents of the inputs in ``mask`` of a node that keeps placeholders of its
    primals ((shape, dtype), or (a Python scalar,)): a linear op's backward, which reads no
    values, as a cached jit that makes zeros of those shapes inside itself."""
    key = ("placeholders", static, dt, mask, out_mask, placeholders)
    f = op._bwd.get(key)
    if f is None:
        vjp = _vjp_fn(op, static, dt, mask, out_mask)

        def run(g):
            return vjp(g, *placeholder_values(placeholders))
        f = remember(op._bwd, key, op_jit(op, run))
    return f


def placeholder_values(placeholders):
    """Primals standing in for a linear op's placeholders: zeros of each (shape, dtype), the
    Python scalar of each (scalar,)."""
    return tuple([jnp.zeros(*p) if len(p) == 2 else p[0] for p in placeholders])


_BACKWARD_OPS = {}


def backward_op(op, static, dt, mask, out_mask):
    """The backward of ``op`` as an Op of its own, so create_graph can record it and
    differentiate it again (docs/architecture.md §2.4).  Its inputs are (*grads, *primals).
    The backward of an op made per call is made per call too and not cached (``saves=()``: its
    arguments hold no Tensors to check, and the cache of saved positions would keep it)."""
    key = (op, static, dt, mask, out_mask)
    bop = _BACKWARD_OPS.get(key)
    if bop is None:
        vjp = _vjp_fn(op, static, dt, mask, out_mask)
        n_g = 1 if out_mask is None else sum(out_mask)

        def fn(*xs):
            g = xs[0] if out_mask is None else tuple(xs[:n_g])
            return tuple(vjp(g, *xs[n_g:]))
        bop = Op(op.name + "_backward", fn, op.node + "Backward",
                 saves=() if op.per_call else None, per_call=op.per_call)
        if not op.per_call:
            remember(_BACKWARD_OPS, key, bop)
    return bop


_READS = {}


def inputs_read(op, arrays):
    """For each positional input of ``op``, whether its outputs depend on it at all (jax's
    dead-code elimination of the traced function).  The graph of a graph links only these, so
    a derivative that is constant (x*x -> 2x -> 2) does not require grad, as in PyTorch.  An
    op made per call links every input (tracing it would cost as much as running it)."""
    if op.per_call:
        return (True,) * len(arrays)
    avals = tuple((a.shape, a.dtype) if hasattr(a, "shape") else type(a) for a in arrays)
    key = (op, avals)
    reads = _READS.get(key)
    if reads is None:
        specs = [jax.ShapeDtypeStruct(*a) if isinstance(a, tuple) else a(0) for a in avals]
        reads = remember(_READS, key, used_inputs(op.fn, specs))
    return reads


def used_inputs(fn, args):
    """For each argument of ``fn``, whether its outputs depend on it (jax's dead-code
    elimination of ``fn`` traced abstractly); all True where that private API is missing."""
    closed = jax.make_jaxpr(fn)(*args)
    try:
        from jax._src.interpreters import partial_eval as pe
        _, used = pe.dce_jaxpr(closed.jaxpr, [True] * len(closed.jaxpr.outvars))
    except (ImportError, AttributeError):   # private jax API moved: link every input
        return (True,) * len(args)
    return tuple(used)


def with_out(result, out):
    """Honour an op's ``out=`` keyword (a tuple of Tensors for an op returning a named tuple)."""
    if out is None:
        return result
    from ._inplace import copy_into_out
    if isinstance(result, tuple):
        return type(result)(*(copy_into_out(o, r) for o, r in zip(out, result)))
    return copy_into_out(out, result)
