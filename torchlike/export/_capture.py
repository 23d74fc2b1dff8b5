"""The state capture behind ``torchlike.export``: a forward or a training step as a pure function
of named state and inputs, built on torchlike.compile's capture (NOTE [ whole-step compile ] in
_compile/__init__.py).

NOTE [ export capture ]
``_Capture(fn, args, kwargs)`` gives every Tensor leaf of ``(args, kwargs)`` a fresh Tensor of its
own (the exported program's user inputs), finds ``fn``'s state with ``_compile.find_state``, whose
walk names every piece of it by how the step reaches it: ``model.0.weight`` (a module's parameter or
buffer), ``model.0.weight.grad``, ``opt.state.0.momentum_buffer`` (the optimizer's state of its
parameter number 0, numbered as ``Optimizer.state_dict`` numbers them), ``opt.param_groups.0.lr``
(a numeric hyper-parameter, a traced scalar), ``rng`` (the default generator's state).  A first
trace (``trace``: jax.make_jaxpr of ``_compile.pure_step``) tells which of them the program reads
and which it writes; only those enter the exported signature (``kept``), the others are baked in
or unused.  ``pure(values, args, kwargs) -> (outputs, updates)`` is then the function that
jax.export lowers: ``values`` maps the kept names to arrays, ``updates`` maps the names the program
writes to their new arrays.
"""
import inspect

import jax
import jax.numpy as jnp
import numpy as np

from .. import _compile
from .._random import default_generator
from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad, no_grad
from ..nn.modules.module import Module

try:
    from jax.extend.core import Literal
except ImportError:   # older jax
    from jax.core import Literal

# Kinds of state, as the graph signature shows them (torch.export's InputKind names where it has
# one).
PARAMETER, BUFFER, CONSTANT = "PARAMETER", "BUFFER", "CONSTANT_TENSOR"
GRADIENT, OPTIMIZER_STATE, HYPERPARAMETER = "GRADIENT", "OPTIMIZER_STATE", "HYPERPARAMETER"
RNG_STATE = "RNG_STATE"
# the kind of a Tensor by how the walk first reached it (_compile.walk.State.paths)
_KINDS = {"parameter": PARAMETER, "buffer": BUFFER, "non-persistent buffer": BUFFER,
          "optimizer state": OPTIMIZER_STATE}


def is_array(x):
    return isinstance(x, (Tensor, jax.Array, np.ndarray))


def _is_input_leaf(x):
    return is_array(x) or _compile.is_leaf(x)


def flatten_inputs(args, kwargs):
    """The leaves of ``(args, kwargs)`` (Tensors and arrays are leaves) and the tree."""
    return jax.tree_util.tree_flatten((args, kwargs), is_leaf=_is_input_leaf)


def as_array(x):
    if isinstance(x, Tensor):
        return x._value()
    return jnp.asarray(x)


# --- names ----------------------------------------------------------------------------------------

def _parameter_names(fn, args, kwargs):
    """Argument names of ``fn(*args, **kwargs)``, by position and by keyword."""
    target = fn.forward if isinstance(fn, Module) else fn
    try:
        bound = inspect.signature(target).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return [f"args_{i}" for i in range(len(args))]
    names = []
    for pname, value in bound.arguments.items():
        kind = bound.signature.parameters[pname].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            names.extend(f"{pname}_{i}" for i in range(len(value)))
        elif kind not in (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.KEYWORD_ONLY) and \
                pname not in kwargs:
            names.append(pname)
    return names[:len(args)] + [f"args_{i}" for i in range(len(names), len(args))]


def _key_name(key):
    for attr in ("key", "idx", "name"):
        if hasattr(key, attr):
            return str(getattr(key, attr))
    return str(key)


def input_names(fn, args, kwargs):
    """torch.export's names of the user inputs: the argument's name, ``_``-joined with the path
    inside a nested argument (``xs_0``); one per leaf of ``(args, kwargs)``."""
    positional = _parameter_names(fn, args, kwargs)
    paths, _ = jax.tree_util.tree_flatten_with_path((args, kwargs), is_leaf=_is_input_leaf)
    names = []
    for path, _ in paths:
        which, key, rest = path[0], path[1], path[2:]
        top = positional[key.idx] if which.idx == 0 else _key_name(key)
        names.append("_".join([top] + [_key_name(k) for k in rest]))
    return names


def unique_names():
    """A function that returns each name it is given, suffixed ``_1``, ``_2``... where it
    gave that name already."""
    taken = set()

    def unique(name):
        base, n = name, 1
        while name in taken:
            name, n = f"{base}_{n}", n + 1
        taken.add(name)
        return name
    return unique


def output_names(tree):
    """``output`` for a single Tensor, else ``output_<path>``."""
    paths, _ = jax.tree_util.tree_flatten_with_path(tree)
    return ["_".join(["output"] + [_key_name(k) for k in path]) for path, _ in paths]


# --- the capture ----------------------------------------------------------------------------------

class Entry:
    """One named piece of state: where it lives (``where``: ("tensor", i), ("grad", i),
    ("hyper", g, key, element or None), ("rng", i)), its kind and, for a buffer, persistence."""

    __slots__ = ("name", "kind", "where", "persistent", "python")

    def __init__(self, name, kind, where, persistent=True, python=None):
        self.name, self.kind, self.where = name, kind, where
        self.persistent, self.python = persistent, python


class TraceResult:
    """What the first trace found (see ``_Capture.trace``)."""

    def __init__(self, plan, used, changed, jaxpr, shapes):
        self.plan, self.used, self.changed = plan, used, changed
        self.jaxpr, self.shapes = jaxpr, shapes


class Capture:
    """``fn``'s state, named, as a pure function (NOTE [ export capture ]).

    Args:
        fn: a Module (its forward) or a step function.
        args, kwargs: example inputs; their Tensor leaves become the program's inputs.
        with_grads: capture the parameters' ``.grad`` (a training step) or hide it (a forward).
        grad_mode: True runs ``fn`` with grad mode on, False under ``no_grad``.
    """

    def __init__(self, fn, args, kwargs, *, with_grads, grad_mode):
        self.fn = fn
        self.with_grads = with_grads
        self.grad_mode = grad_mode
        leaves, self.tree = flatten_inputs(args, kwargs)
        fresh, self.inputs, self.constants = [], [], []
        for x in leaves:
            if is_array(x):
                t = Tensor._wrap(as_array(x))
                self.inputs.append(t)
                fresh.append(t)
            else:
                self.constants.append(x)
                fresh.append(x)
        self.leaf_is_input = [is_array(x) for x in leaves]
        self.args, self.kwargs = jax.tree_util.tree_unflatten(self.tree, fresh)
        self.input_names = input_names(fn, args, kwargs)
        self.find()

    # which objects, and their names
    def find(self):
        self.state = _compile.find_state(self.fn, self.args, self.kwargs,
                                         names=self.input_names)
        paths = self.state.paths   # id -> (rank, path, role); a module's path beats another

        def named(obj):
            return "rng" if obj is default_generator else paths.get(id(obj), (1, None))[1]

        input_ids = {id(t): j for j, t in enumerate(self.inputs)}
        self.input_of = {}          # position in state.tensors -> position in self.inputs
        self.entries = []
        unique = unique_names()

        self.tensor_names = [None] * len(self.state.tensors)
        for i, t in enumerate(self.state.tensors):
            if id(t) in input_ids:
                self.input_of[i] = input_ids[id(t)]
                continue
            name = unique(named(t) or f"tensor_{i}")
            role = paths.get(id(t), (1, None, None))[2]
            self.tensor_names[i] = name
            self.entries.append(Entry(name, _KINDS.get(role, CONSTANT), ("tensor", i),
                                      persistent=role != "non-persistent buffer"))
        self.param_names = []
        position = {id(t): i for i, t in enumerate(self.state.tensors)}
        for i, p in enumerate(self.state.params):
            name = self.tensor_names[position[id(p)]] if id(p) not in input_ids \
                else self.input_names[input_ids[id(p)]]
            self.param_names.append(name)
            if self.with_grads and p._grad is not None:
                self.entries.append(Entry(unique(f"{name}.grad"), GRADIENT, ("grad", i)))
        for g, (opt, group, keys) in enumerate(self.state.groups):
            prefix = named(opt) or "optimizer"
            gi = next(j for j, grp in enumerate(opt.param_groups) if grp is group)
            for k in keys:
                v = group[k]
                if isinstance(v, (tuple, list)):
                    for m, x in enumerate(v):
                        self.entries.append(Entry(unique(f"{prefix}.param_groups.{gi}.{k}.{m}"),
                                                  HYPERPARAMETER, ("hyper", g, k, m),
                                                  python=type(x).__name__))
                else:
                    self.entries.append(Entry(unique(f"{prefix}.param_groups.{gi}.{k}"),
                                              HYPERPARAMETER, ("hyper", g, k, None),
                                              python=type(v).__name__))
        for i, gen in enumerate(self.state.generators):
            self.entries.append(Entry(unique(named(gen) or f"generator_{i}"), RNG_STATE,
                                      ("rng", i)))
        self.by_where = {e.where: e for e in self.entries}

    # live values
    def live(self, entry):
        where = entry.where
        if where[0] == "tensor":
            return self.state.tensors[where[1]]._arr
        if where[0] == "grad":
            return self.state.params[where[1]]._grad._value()
        if where[0] == "hyper":
            v = self.state.groups[where[1]][1][where[2]]
            return v if where[3] is None else v[where[3]]
        return self.state.generators[where[1]]._state._arr

    def spec(self, entry):
        """The jax.ShapeDtypeStruct of an entry's current value (hyper-parameters: weakly
        typed scalars, as the Python numbers they are)."""
        v = self.live(entry)
        if entry.kind == HYPERPARAMETER:
            dt = jnp.float64 if isinstance(v, float) else jnp.int64
            return jax.ShapeDtypeStruct((), dt, weak_type=True)
        return jax.ShapeDtypeStruct(v.shape, v.dtype)

    def program_inputs(self, values, input_arrays):
        """``_compile.pure_step``'s (arrays, grads, hypers, gens), taking the named ``values``
        where given and the live state elsewhere."""
        st = self.state
        arrays = []
        for i, t in enumerate(st.tensors):
            if i in self.input_of:
                arrays.append(input_arrays[self.input_of[i]])
            else:
                arrays.append(values.get(self.tensor_names[i], t._arr))
        grads = []
        for i, p in enumerate(st.params):
            e = self.by_where.get(("grad", i))
            grads.append(None if e is None else values.get(e.name, self.live(e)))
        hypers = []
        for g, (opt, group, keys) in enumerate(st.groups):
            row = []
            for k in keys:
                v = group[k]
                if isinstance(v, (tuple, list)):
                    row.append(type(v)(values.get(self.by_where[("hyper", g, k, m)].name, x)
                                       for m, x in enumerate(v)))
                else:
                    row.append(values.get(self.by_where[("hyper", g, k, None)].name, v))
            hypers.append(tuple(row))
        gens = [values.get(self.by_where[("rng", i)].name, gen._state._arr)
                for i, gen in enumerate(st.generators)]
        return arrays, grads, hypers, gens

    def _names_tree(self, inputs):
        """Names in the pytree layout of ``program_inputs``'s result (for the jaxpr's invars)."""
        arrays, grads, hypers, gens = inputs
        a = [f"<input {self.input_of[i]}>" if i in self.input_of else self.tensor_names[i]
             for i in range(len(arrays))]
        gr = [None if g is None else self.by_where[("grad", i)].name for i, g in enumerate(grads)]
        hy = []
        for g, (opt, group, keys) in enumerate(self.state.groups):
            hy.append(tuple(
                type(group[k])(self.by_where[("hyper", g, k, m)].name
                               for m in range(len(group[k])))
                if isinstance(group[k], (tuple, list))
                else self.by_where[("hyper", g, k, None)].name for k in keys))
        gn = [self.by_where[("rng", i)].name for i in range(len(gens))]
        return a, gr, hy, gn

    def _context(self):
        return enable_grad() if self.grad_mode else no_grad()

    def trace(self):
        """Trace ``fn`` once on the live values: which entries it reads and writes."""
        plan = _compile.Plan()
        program = _compile.pure_step(self.fn, self.args, self.kwargs, self.state, plan)
        inputs = self.program_inputs({}, [t._arr for t in self.inputs])
        try:
            with self._context():
                jaxpr, shapes = jax.make_jaxpr(program, return_shape=True)(*inputs)
        except Exception as e:
            if not _compile.is_graph_break(e):
                raise
            raise _not_traceable(self.fn, e) from None
        flat_names = jax.tree_util.tree_leaves(self._names_tree(inputs))
        invars = jaxpr.jaxpr.invars
        outvars = jaxpr.jaxpr.outvars
        counts = [len(jax.tree_util.tree_leaves(s)) for s in shapes]
        gens_at = sum(counts[:4])
        gens_out = outvars[gens_at:gens_at + counts[4]]
        read = set()
        for eqn in jaxpr.jaxpr.eqns:
            read.update(v for v in eqn.invars if not isinstance(v, Literal))
        read.update(v for i, v in enumerate(outvars)
                    if not gens_at <= i < gens_at + counts[4] and not isinstance(v, Literal))
        used = {n for n, v in zip(flat_names, invars) if v in read}
        changed = set()
        for i in plan.changed:
            if i not in self.input_of:
                changed.add(self.tensor_names[i])
        for i, has in enumerate(plan.grads):
            if has:
                e = self.by_where.get(("grad", i))
                changed.add(e.name if e is not None else f"{self.param_names[i]}.grad")
        for g, k in plan.hypers:
            v = self.state.groups[g][1][k]
            if isinstance(v, (tuple, list)):
                changed.update(self.by_where[("hyper", g, k, m)].name for m in range(len(v)))
            else:
                changed.add(self.by_where[("hyper", g, k, None)].name)
        gen_names = [self.by_where[("rng", i)].name for i in range(len(self.state.generators))]
        gen_invars = [v for n, v in zip(flat_names, invars) if n in set(gen_names)]
        for name, vin, vout in zip(gen_names, gen_invars, gens_out):
            if vout is not vin:
                changed.add(name)
        return TraceResult(plan, used, changed, jaxpr, shapes)

    def warm_up(self, result):
        """Run the traced step once for real, as torchlike.compile does when a step creates
        state (_compile.run writes everything back, created state included)."""
        _compile.run(_compile.Compiled(result.jaxpr, result.shapes, result.plan, self.state),
                     self.state)

    def keep(self, result):
        """The entries the exported program takes: those it reads or writes."""
        wanted = result.used | result.changed
        self.kept = [e for e in self.entries if e.name in wanted]
        return self.kept

    def pure(self, values, args, kwargs):
        """The program: ``(values, args, kwargs) -> (outputs, updates)``; ``args`` and ``kwargs``
        hold arrays where the example held Tensors and None where it held other values."""
        input_arrays = jax.tree_util.tree_leaves((args, kwargs))
        plan = _compile.Plan()
        program = _compile.pure_step(self.fn, self.args, self.kwargs, self.state, plan)
        with self._context():
            changed, outs, final_grads, hyper_out, gens_out, created, deferred, _ = program(
                *self.program_inputs(values, input_arrays))
        leaves = iter(outs)
        out_leaves = []
        for s in plan.out_static:
            if s is not _compile.TENSOR:
                raise TypeError(f"torchlike.export: {_qualname(self.fn)} returns a "
                                f"{type(s).__name__} ({s!r}); an exported program can only "
                                "return Tensors (in tuples, lists and dicts)")
            out_leaves.append(next(leaves))
        outputs = jax.tree_util.tree_unflatten(plan.out_tree, out_leaves)
        kept = {e.name for e in self.kept}
        updates = {}
        for i, a in zip(plan.changed, changed):
            name = self.tensor_names[i]
            if name in kept:
                updates[name] = a
        grads = iter(final_grads)
        for i, has in enumerate(plan.grads):
            if has:
                e = self.by_where.get(("grad", i))
                a = next(grads)
                if e is not None and e.name in kept:
                    updates[e.name] = a
        for (g, k), v in zip(plan.hypers, hyper_out):
            if isinstance(v, (tuple, list)):
                for m, x in enumerate(v):
                    updates[self.by_where[("hyper", g, k, m)].name] = x
            else:
                updates[self.by_where[("hyper", g, k, None)].name] = v
        for i, a in enumerate(gens_out):
            name = self.by_where[("rng", i)].name
            if name in kept and a is not values.get(name):
                updates[name] = a
        return outputs, updates


def _qualname(fn):
    return getattr(fn, "__qualname__", type(fn).__name__)


def _not_traceable(fn, e):
    return _compile.unsupported(
        e, f"torchlike.export cannot export {_qualname(fn)}",
        "An exported program cannot branch on tensor values or read them on the host: use "
        "torchlike.where or masks instead of `if` on a tensor, and move .item(), .tolist(), "
        ".numpy() and print() out of the exported code.")
