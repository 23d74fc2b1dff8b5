"""The ONNX graph torchlike.onnx builds from a jaxpr: names, constants, symbolic sizes, and the
walk over a jaxpr's equations that calls one rule per primitive (the rules: _rules.py).

NOTE [ onnx translation ]
``torchlike.onnx.export`` traces the model with torchlike.export's capture (the pure function
of weights and inputs that jax.export lowers, with a symbolic batch dimension where one is
asked for) into a jaxpr, and translates that jaxpr equation by equation into ONNX nodes built
with ``onnx.helper``:

- a jaxpr variable is an ONNX value name; a literal or a closed-over array is a Constant node
  (``const_N``); the weights are initializers named as in ``state_dict`` (``0.weight``);
- ``jit`` / ``pjit``, ``custom_jvp_call``, ``custom_vjp_call``, ``closed_call``, ``remat`` are
  inlined: their inner jaxpr is translated in place (only the equations whose results are used:
  dead code such as max-pooling's unused indices is never emitted);
- ``scan`` (torchlike's recurrent layers) becomes an ONNX ``Loop`` whose body graph reads the
  step's slice of each scanned input and the enclosing graph's values (``Graph.subgraph``);
- a symbolic size (``batch``, or an expression such as ``7*batch``) is computed in the graph from
  the ``Shape`` of the input that carries it, so a reshape or broadcast that involves the batch
  works at any batch size; sizes known at export time are constants;
- an equation whose inputs are all constants and whose result is small is evaluated at export
  time (constant folding), so iotas and broadcast literals become initializers;
- a primitive without a rule raises ``UnsupportedOperatorError`` naming the primitive, the
  torchlike function it came from (the innermost named ``jit`` around it) and the source line.
"""
import contextlib
import linecache
import os

import numpy as np

import jax
import jaxlib
from jax._src import source_info_util

from .errors import UnsupportedOperatorError

try:
    from jax.extend.core import Literal
except ImportError:   # older jax
    from jax.core import Literal

_FOLD_LIMIT = 4096     # largest constant-folded result, in elements
# frames of these packages are not the model's code (jax, jaxlib, torchlike)
_LIBRARIES = tuple(os.path.dirname(os.path.abspath(p)) + os.sep for p in (
    jax.__file__, jaxlib.__file__, os.path.dirname(os.path.abspath(__file__))))


def _is_static(shape):
    return all(isinstance(d, (int, np.integer)) for d in shape)


class DimValue:
    """A symbolic size inside the graph: the name of a 1-element int64 tensor.  Supports the
    arithmetic jax's dimension expressions evaluate with (``+``, ``*``, ``divmod``)."""

    def __init__(self, graph, name):
        self.graph, self.name = graph, name

    def _other(self, v):
        return v.name if isinstance(v, DimValue) else self.graph.const(np.array([int(v)]))

    def _op(self, op, other, swap=False):
        a, b = self.name, self._other(other)
        return DimValue(self.graph, self.graph.node(op, [b, a] if swap else [a, b]))

    def __add__(self, v):
        return self._op("Add", v)

    def __radd__(self, v):
        return self._op("Add", v, swap=True)

    def __mul__(self, v):
        return self._op("Mul", v)

    def __rmul__(self, v):
        return self._op("Mul", v, swap=True)

    def __sub__(self, v):
        return self._op("Sub", v)

    def __rsub__(self, v):
        return self._op("Sub", v, swap=True)

    def __divmod__(self, v):   # sizes are positive: integer Div is floor division
        q = self._op("Div", v)
        return q, self - q * v

    def __rdivmod__(self, v):
        q = self._op("Div", v, swap=True)
        return q, DimValue(self.graph, self._other(v)) - q * self


class Graph:
    """An ONNX graph under construction (nodes, initializers, value names) and the translation
    of jaxprs into it (NOTE [ onnx translation ])."""

    def __init__(self, onnx, opset, rules):
        self.onnx, self.helper = onnx, onnx.helper
        self.opset, self.rules = opset, rules
        self.nodes, self.initializers, self.inputs = [], [], []
        self.constants = {}     # value name -> numpy array, for constant folding
        self.dims = {}          # symbol name (or expression text) -> DimValue
        self._count = 0
        self._const_cache = {}
        self.where = []         # names of the inlined calls around the current equation
        self.current = None     # the equation being translated

    # --- names and nodes ---------------------------------------------------------------------
    def fresh(self, hint="v"):
        self._count += 1
        return f"{hint}_{self._count}"

    def node(self, op, inputs, n_out=1, name_hint=None, **attrs):
        """Add a node; returns its output name (or the list of names if ``n_out != 1``)."""
        outs = [self.fresh(name_hint or op.lower()) for _ in range(n_out)]
        eqn = self.current
        where = "/".join([w for w in self.where if w] + ([eqn.primitive.name] if eqn else []))
        self.nodes.append(self.helper.make_node(op, list(inputs), outs,
                                                name=self.fresh(f"{where}/{op}"), **attrs))
        return outs[0] if n_out == 1 else outs

    def initializer(self, name, array):
        self.initializers.append(self.onnx.numpy_helper.from_array(np.asarray(array), name))
        return name

    def const(self, array, dtype=None):
        """A Constant node holding ``array`` (shared between identical small constants)."""
        a = np.asarray(array, dtype=dtype)
        key = (a.dtype.str, a.shape, a.tobytes()) if a.size <= 64 else None
        if key is not None and key in self._const_cache:
            return self._const_cache[key]
        name = self.fresh("const")
        self.nodes.append(self.helper.make_node(
            "Constant", [], [name], name=f"{name}/Constant",
            value=self.onnx.numpy_helper.from_array(a, name)))
        self.constants[name] = a
        if key is not None:
            self._const_cache[key] = name
        return name

    def ints(self, values):
        return self.const(np.asarray(list(values), dtype=np.int64).reshape(-1))

    def add_input(self, name, aval, dim_names):
        """A graph input; its symbolic sizes become available to :meth:`dim`."""
        shape = []
        for i, d in enumerate(aval.shape):
            if isinstance(d, (int, np.integer)):
                shape.append(int(d))
                continue
            symbol = str(d)
            shape.append(dim_names.get(symbol, symbol))
            if symbol not in self.dims:
                if self.opset >= 15:
                    size = self.node("Shape", [name], start=i, end=i + 1)
                else:
                    size = self.node("Slice", [self.node("Shape", [name]), self.ints([i]),
                                               self.ints([i + 1])])
                self.dims[symbol] = DimValue(self, size)
        self.inputs.append(self.helper.make_tensor_value_info(name, elem_type(aval.dtype),
                                                              shape))
        return name

    def used_nodes(self, outputs):
        """The nodes, less the constants no node reads (folding leaves some behind)."""
        read = set(outputs)
        stack = list(self.nodes)
        while stack:                # the nodes of loop bodies read outer values too
            n = stack.pop()
            read.update(n.input)
            for a in n.attribute:
                if a.type == self.onnx.AttributeProto.GRAPH:
                    read.update(o.name for o in a.g.output)
                    stack.extend(a.g.node)
        return [n for n in self.nodes if n.op_type != "Constant" or n.output[0] in read]

    @contextlib.contextmanager
    def subgraph(self):
        """Build a loop body: nodes made inside the block go to a graph of their own (yielded
        as a list to fill with the body's inputs and outputs: ``[nodes, inputs, outputs]``);
        values of the enclosing graph stay readable, and sizes and constants made inside do
        not leak out."""
        saved = self.nodes, self._const_cache, dict(self.dims)
        self.nodes, self._const_cache = [], {}
        body = [self.nodes, [], []]
        try:
            yield body
        finally:
            self.nodes, self._const_cache, self.dims = saved

    # --- sizes ---------------------------------------------------------------------------------
    def dim(self, d):
        """A size as a 1-element int64 tensor name."""
        if isinstance(d, (int, np.integer)):
            return self.ints([int(d)])
        key = str(d)
        if key not in self.dims:
            symbols = {k: v for k, v in self.dims.items()}
            try:
                value = d._evaluate(symbols)
            except Exception as e:   # noqa: BLE001 -- jax's own error types vary by version
                raise UnsupportedOperatorError.for_primitive(
                    "shape", self, detail=f"the size {key} cannot be computed in the graph "
                    f"({type(e).__name__}: {e})") from None
            self.dims[key] = value if isinstance(value, DimValue) else DimValue(
                self, self.ints([int(value)]))
        return self.dims[key].name

    def shape(self, dims, infer_one=False):
        """A 1-D int64 tensor of sizes; with ``infer_one`` a single symbolic size becomes -1
        (Reshape infers it)."""
        if _is_static(dims):
            return self.ints(dims)
        symbolic = [i for i, d in enumerate(dims) if not isinstance(d, (int, np.integer))]
        if infer_one and len(symbolic) == 1:
            return self.ints([-1 if i == symbolic[0] else d for i, d in enumerate(dims)])
        pieces, run = [], []
        for d in dims:
            if isinstance(d, (int, np.integer)):
                run.append(int(d))
                continue
            if run:
                pieces.append(self.ints(run))
                run = []
            pieces.append(self.dim(d))
        if run:
            pieces.append(self.ints(run))
        return self.node("Concat", pieces, axis=0)

    # --- translating jaxprs ----------------------------------------------------------------------
    def read(self, env, v):
        if isinstance(v, Literal):
            return self.const(np.asarray(v.val, dtype=v.aval.dtype))
        return env[v]

    def translate(self, jaxpr, consts, in_names, needed=None):
        """Translate ``jaxpr`` (an open jaxpr with ``consts``) applied to ``in_names``; returns
        the names of its outputs (None for outputs not ``needed``)."""
        env = {}
        for v, c in zip(jaxpr.constvars, consts):
            env[v] = self.const(np.asarray(c))
        for v, n in zip(jaxpr.invars, in_names):
            env[v] = n
        needed = [True] * len(jaxpr.outvars) if needed is None else needed
        live = _live_equations(jaxpr, needed)
        for eqn, used in zip(jaxpr.eqns, live):
            if used is None:
                continue
            ins = [self.read(env, v) for v in eqn.invars]
            outs = self.equation(eqn, ins, used)
            for v, n in zip(eqn.outvars, outs):
                env[v] = n
        return [self.read(env, v) if keep else None for v, keep in zip(jaxpr.outvars, needed)]

    def equation(self, eqn, ins, used):
        prim = eqn.primitive.name
        folded = self._fold(eqn, ins)
        if folded is not None:
            return folded
        outer, self.current = self.current, eqn
        rule = self.rules.get(prim)
        if rule is None:
            raise UnsupportedOperatorError.for_primitive(prim, self)
        outs = rule(self, eqn, ins, used)
        self.current = outer
        return outs if isinstance(outs, (list, tuple)) else [outs]

    def inline(self, eqn, ins, used, jaxpr, name=None):
        """Translate a call's inner jaxpr (closed or open) in place."""
        inner = getattr(jaxpr, "jaxpr", jaxpr)
        consts = getattr(jaxpr, "consts", ())
        if name:
            self.where.append(name)
        try:
            return self.translate(inner, consts, ins, used)
        finally:
            if name:
                self.where.pop()

    def _fold(self, eqn, ins):
        """Evaluate an equation of constants at export time (NOTE [ onnx translation ])."""
        if not ins or not all(n in self.constants for n in ins):
            return None
        avals = [v.aval for v in eqn.outvars]
        if not all(hasattr(a, "shape") and _is_static(a.shape)
                   and int(np.prod(a.shape)) <= _FOLD_LIMIT for a in avals):
            return None
        if eqn.primitive.name in ("scan", "while", "cond") or eqn.effects:
            return None
        try:
            with jax.ensure_compile_time_eval():
                out = eqn.primitive.bind(*[self.constants[n] for n in ins], **eqn.params)
        except Exception:   # noqa: BLE001 -- not foldable here: translate it instead
            return None
        out = out if eqn.primitive.multiple_results else [out]
        return [self.const(np.asarray(o)) for o in out]

    def context(self):
        """Where the current equation comes from: the innermost named call around it, and the
        first line of the traceback outside jax and torchlike (the model's own code) with its
        text, else jax's summary of the source."""
        fn = next((w for w in reversed(self.where) if w), None)
        eqn = self.current
        if eqn is None:
            return fn, None
        tb = getattr(eqn.source_info, "traceback", None)
        for frame in (tb.frames if tb is not None else ()):
            if frame.file_name.startswith(_LIBRARIES):
                continue
            line = linecache.getline(frame.file_name, frame.line_num).strip()
            return fn, (f"{frame.file_name}:{frame.line_num} ({frame.function_name})"
                        + (f": {line}" if line else ""))
        return fn, source_info_util.summarize(eqn.source_info)


def _live_equations(jaxpr, needed):
    """Per equation: None if none of its results is used, else a list saying which are."""
    wanted = {v for v, keep in zip(jaxpr.outvars, needed) if keep and not isinstance(v, Literal)}
    live = [None] * len(jaxpr.eqns)
    for i in range(len(jaxpr.eqns) - 1, -1, -1):
        eqn = jaxpr.eqns[i]
        used = [v in wanted for v in eqn.outvars]
        if not any(used) and not eqn.effects:
            continue
        live[i] = used
        wanted.update(v for v in eqn.invars if not isinstance(v, Literal))
    return live


def elem_type(dtype):
    """ONNX's element type for a numpy / jax dtype."""
    from onnx import helper
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
