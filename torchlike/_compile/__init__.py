"""Mirrors ``torch.compile``: an unmodified eager step as one XLA program (DESIGN.md §5).

NOTE [ whole-step compile ]
``step = torchlike.compile(fn)``.  The first call runs ``fn`` eagerly: it creates what eager code
creates lazily (optimizer moments, ``.grad`` tensors), so what is traced is the step's steady
state.  A later call whose guards match no compiled program traces ``fn`` once (jax.make_jaxpr,
its Tensors holding tracers) and compiles the trace with jax.jit; calls with the same guards run
that program and write its results back.

Captured, found on every call by walking from ``fn``'s arguments, its closure, the globals it
names (and those of the functions it names) and the object of a bound method, through Modules,
Optimizers, LR schedulers, Generators, lists, tuples, dicts and plain objects' attributes, plus
every device's default generator:
- inputs: every Tensor found (parameters, buffers, each parameter's ``.grad``, optimizer state,
  Tensor hyper-parameters, Tensor arguments); the numeric hyper-parameters of every optimizer
  group (``lr``, ``momentum``, ``betas``, ...) as traced scalars, so a scheduler's changes do not
  recompile; the generators' states, so random ops draw fresh numbers on every call;
- outputs: what ``fn`` returns (as Tensors without history), every captured Tensor the step
  writes, each parameter's final ``.grad``, changed hyper-parameters, the generators' states,
  and Tensors the step creates that stay reachable.  They are written back into the same Tensor
  objects.  The old buffers of written Tensors and of the ``.grad`` Tensors are donated to the
  program (each one only when nothing else holds it; ``torchlike.compiler.config.donate_buffers``).
Baked in: Python values (non-Tensor arguments, shapes, module attributes such as ``training``
and a dropout's ``p``, numbers and strings in the globals and closure the step names, optimizer
flags such as ``nesterov`` and whether ``weight_decay`` is 0) and the structure of the state
(which ``.grad`` exist, optimizer state keys).
Recompiles: new shapes or dtypes of captured Tensors, new Python argument values, a module
switching between train and eval or changing a number attribute, a new value of such a global
or closure number, grad mode, a change of the state's structure or flags.  (A number the step
changes itself, a counter, keeps the value its trace left: later calls run no Python.)
``torchlike.compiler.counters`` counts programs and calls; past ``config.cache_size_limit``
programs for one function each new one warns, as torch._dynamo's cache limit does.
Python side effects of ``fn`` run only while it is traced (as with jax.jit), except LR scheduler
steps, which are recorded and replayed eagerly after every call: their new rates reach the next
call as inputs (code after ``sched.step()`` in the same step still sees the old rate).  Python
numbers the step returns are those of the trace (a warning says so).  A Tensor the walk cannot
reach is baked in as a constant.  A step that binds new Tensors into objects (``self.ema =
0.9 * self.ema + ...``, in an attribute, a dict or list slot, a closure cell or a global) is
compiled once: later calls bind the program's new value to the same places as a new Tensor
(without autograd history), as long as those places still hold the step's inputs (else it is
traced again); state created where a walk cannot rebind it (only a view of it reachable) makes
every call trace.
A step that needs a traced value in Python (``.item()``, ``if loss > 1:``, ``.numpy()``,
``nonzero()``) cannot be one program: ``fullgraph=True`` raises ``torchlike.compiler.Unsupported``
naming the line; otherwise the step runs eagerly from then on, with one warning.  The program's
outputs have no autograd history, so a function that returns a loss for its caller to
differentiate (without running backward itself) also runs eagerly, with a warning.

NOTE [ devices in a compiled step ]
A program runs on one device: the step's device is that of its first captured tensor with
dimensions (the model's parameters, usually).  Inside the trace ``.device`` is that device for
what the step computes and the real device for what it captured.  A move of a captured tensor to
the step's device (``x.to(device)`` of a CPU batch) is a copy in the trace, and each call moves
that argument before the program runs (an eager device_put, as the eager step made); a move to
another device raises.  Generators' states enter on the step's device and go back to their own
after the call (a copy, not a host read).  Any other tensor on another device gets PyTorch's
error, as the eager step gets it.
"""
import dis
import functools
import itertools
import operator
import os
import sys
import traceback
import types
import warnings
import weakref

import jax
import jax.numpy as jnp
import numpy as np

from .. import _trace_context, _x64, compiler
from .._device import CPU, from_jax_device, out_of_memory, to_jax_device
from .._random import Generator, default_generators
from .._tensor import TRACED_VALUE_ERRORS, Tensor, defer_check, on_host
from ..autograd.grad_mode import _state as _grad_state
from ..nn.modules.module import Module
from ..optim._lr_scheduler_base import LRScheduler
from ..optim.optimizer import _NOT_HYPER, Optimizer

__all__ = ["compile"]

_Tracer = jax.core.Tracer
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # torchlike's
_PLAIN = (str, bytes, int, float, complex, bool, type(None), types.ModuleType, type,
          types.BuiltinFunctionType)


# --- finding the state ----------------------------------------------------------------------------

_SKIP = object()
_NAMED = (Tensor, Generator, Optimizer)   # the kinds a walk recording paths names
_CONSTANTS = frozenset((int, float, complex, bool, str, type(None)))
_MISSING = object()   # an empty closure cell, an undefined global
_KINDS = {}   # type -> how walk treats its instances
# module -> (structure epoch, its sub-modules, tensors, ids of parameters, cacheable); weakly
# keyed, and the entry holds no reference to its own module, so a dropped model is freed
_SUBTREES = weakref.WeakKeyDictionary()


def _kind(obj):
    if isinstance(obj, _PLAIN):
        return _SKIP
    for kind in (Tensor, Module, Optimizer, LRScheduler, Generator, dict):
        if isinstance(obj, kind):
            return kind
    if isinstance(obj, (list, tuple, set, frozenset)):
        return list
    if isinstance(obj, (types.FunctionType, types.MethodType, functools.partial)):
        return types.FunctionType
    if hasattr(obj, "__dict__") and not callable(getattr(obj, "__get__", None)):
        return object
    return _SKIP


def _number(v):
    if isinstance(v, (tuple, list)):
        return bool(v) and all(_number(x) for x in v)
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _hyper_keys(opt, group):
    """The numeric hyper-parameters of a group that enter the program as traced scalars."""
    skip = _NOT_HYPER.union(opt._static)
    return tuple(k for k in opt.defaults if k not in skip and _number(group.get(k)))


# What a probe reads again on a later call (NOTE [ replaying the last call ]).
def _cell_contents(cells):
    out = []
    for cell in cells:
        try:
            out.append(cell.cell_contents)
        except ValueError:   # an empty cell
            out.append(_MISSING)
    return out


def _global_values(namespace, names):
    return [namespace.get(name, _MISSING) for name in names]


def _attributes(obj, names):
    return [getattr(obj, name, _MISSING) for name in names]


def _tensor_values(group):
    return [v for v in group.values() if isinstance(v, Tensor)]


def _state_values(opt):
    """The values of every per-parameter state dict of ``opt``, in one sequence."""
    return tuple(itertools.chain.from_iterable(map(dict.values, opt.state.values())))


def _probes_hold(probes):
    """Whether every probe reads the same objects as when it was taken."""
    try:
        for read, then in probes:
            now = read()
            if len(now) != len(then) or not all(map(operator.is_, now, then)):
                return False
    except Exception:   # what a probe reads is gone or changed type
        return False
    return True


class _State:
    """Everything one call captures, in a deterministic order: the one walk of the objects a
    step reaches (NOTE [ whole-step compile ] says through what).  With ``locate`` it records
    where each Tensor is bound, with ``paths`` how each object is reached (the names
    torchlike.export gives the state)."""

    def __init__(self, locate=False, paths=False):
        self.tensors = []      # storage roots (and argument views passed by value)
        self.params = []       # leaves that require grad: their .grad is captured
        self.groups = []       # (optimizer, group, hyper keys)
        self.generators = []
        self.modules = []
        self.probes = []       # (read, what it read): the containers the walk looked into
        self.constants = []    # Python numbers and strings the program bakes in (guarded)
        self._ids = set()
        self.tree = None       # the arguments' pytree structure and leaves
        self.leaves = ()
        self.fixed = 0         # tensors[:fixed] are found from fn; the rest are arguments
        self.fixed_params = 0  # likewise params[:fixed_params]
        self.arguments = ()    # how each Tensor argument is captured (see _place_arguments)
        self.by_value = frozenset()   # positions of argument views passed by value
        # with ``locate``: id(tensor) -> the places it is bound, (how, container, key) with how
        # "item" (container[key]), "attr" (an attribute) or "cell" (a closure cell)
        self.where = {} if locate else None
        # with ``paths``: id(obj) -> (rank, path, role) for each Tensor storage root, Generator
        # and Optimizer: its first path of the lowest rank, 0 for a module's parameter or buffer
        # and an optimizer's state (role "parameter", "buffer", "non-persistent buffer",
        # "optimizer state"), 1 for any other path (role None)
        self.paths = {} if paths else None

    def probe(self, read, then):
        self.probes.append((read, tuple(then)))

    def constant(self, v):
        """Record ``v`` if it is a Python number or string: the step's trace bakes in what it
        reads of those (a global scale, a dropout's p), so the guard compares them (by repr:
        nan and -0.0 compare as themselves)."""
        if type(v) in _CONSTANTS:
            self.constants.append((type(v), repr(v)))

    def _at(self, how, container, key):
        return (how, container, key) if self.where is not None else None

    def _path(self, path, key):
        """The path of ``key`` inside the object at ``path`` ("" or None: a root), when the walk
        records paths."""
        if self.paths is None:
            return None
        return f"{path}.{key}" if path else str(key)

    def name(self, key, path, role=None):
        """Record ``path`` for the object of id ``key`` unless it has a path of the same or a
        lower rank."""
        rank = 1 if role is None else 0
        found = self.paths.get(key)
        if found is None or rank < found[0]:
            self.paths[key] = (rank, path, role)

    def walk(self, obj, depth=0, at=None, path=None, role=None):
        kind = _KINDS.get(type(obj))
        if kind is None:
            kind = _KINDS[type(obj)] = _kind(obj)
        if at is not None and kind is Tensor:
            self.where.setdefault(id(obj), []).append(at)
        if path is not None and kind in _NAMED:
            if kind is Tensor:
                self.name(id(obj if obj._root is None else obj._root), path, role)
            else:
                self.name(id(obj), path)
        if kind is _SKIP or depth > 12 or id(obj) in self._ids:
            return
        self._ids.add(id(obj))
        depth += 1
        if kind is Tensor:
            root = obj if obj._root is None else obj._root
            if root is not obj:
                self.walk(root, depth)
            else:
                self.tensors.append(obj)
                if obj._requires_grad and obj._grad_fn is None:
                    self.params.append(obj)
        elif kind is Module:
            self.walk_module(obj, depth, path)
        elif kind is Optimizer:
            self.walk_optimizer(obj, depth, path)
        elif kind is LRScheduler:
            self.probe(functools.partial(_attributes, obj, ("optimizer",)), (obj.optimizer,))
            self.walk(obj.optimizer, depth, None, self._path(path, "optimizer"))
        elif kind is Generator:
            self.generators.append(obj)
        elif kind is dict:
            self.probe(obj.values, obj.values())
            for k, v in obj.items():
                self.walk(v, depth, self._at("item", obj, k), self._path(path, k))
        elif kind is list:
            mutable = isinstance(obj, list)
            if mutable or isinstance(obj, set):   # tuples and frozensets cannot change
                self.probe(functools.partial(tuple, obj), obj)
            for i, v in enumerate(obj):
                self.walk(v, depth, self._at("item", obj, i) if mutable else None,
                          self._path(path, i))
        elif kind is types.FunctionType:
            self.walk_function(obj, depth)
        else:   # a plain object: its attributes
            self.probe(obj.__dict__.values, obj.__dict__.values())
            for k, v in vars(obj).items():
                self.walk(v, depth, self._at("attr", obj, k), self._path(path, k))

    def walk_optimizer(self, opt, depth, path=None):
        self.probe(functools.partial(_attributes, opt, ("param_groups", "state")),
                   (opt.param_groups, opt.state))
        self.probe(opt.param_groups.copy, opt.param_groups)
        for g, group in enumerate(opt.param_groups):
            self.probe(functools.partial(_global_values, group, ("params",)), (group["params"],))
            self.probe(group["params"].copy, group["params"])
            for i, p in enumerate(group["params"]):
                self.walk(p, depth, None, self._path(path, f"param_groups.{g}.params.{i}"))
            # hyper-parameters given as Tensors
            self.probe(functools.partial(_tensor_values, group), _tensor_values(group))
            for k, v in group.items():
                if isinstance(v, Tensor):
                    self.walk(v, depth, None, self._path(path, f"param_groups.{g}.{k}"))
            self.groups.append((opt, group, _hyper_keys(opt, group)))
        # a parameter's state is named by the parameter's number, as Optimizer.state_dict
        # numbers them
        number = {} if self.paths is None else {id(p): i for i, p in enumerate(dict.fromkeys(
            p for group in opt.param_groups for p in group["params"]))}
        states = tuple(opt.state.values())
        if all(isinstance(s, dict) for s in states):   # as optimizers keep it: one probe
            self.probe(functools.partial(_state_values, opt), _state_values(opt))
            for p, s in opt.state.items():
                at = self._path(path, f"state.{number.get(id(p), f'unknown{len(number)}')}")
                for k, v in s.items():
                    self.walk(v, depth, self._at("item", s, k), self._path(at, k),
                              "optimizer state")
        else:
            self.probe(opt.state.values, states)
            for s in states:
                self.walk(s, depth)

    def walk_module(self, module, depth, path=None):
        """A module's parameters, buffers and sub-modules (and tensors kept as plain
        attributes), in a full walk's order; what was found is reused while the module
        structure is unchanged (_trace_context.structure) and the module holds no containers
        that could change unseen."""
        cached = _SUBTREES.get(module)
        if cached is None or cached[0] != _trace_context.structure[0] or \
                self.where is not None or self.paths is not None:   # a walk that records
            sub = _State(self.where is not None, self.paths is not None)
            sub._ids.add(id(module))
            cacheable = True
            hidden = module._non_persistent_buffers_set
            for table, role in ((module._parameters, "parameter"), (module._buffers, "buffer"),
                                (module._modules, None)):
                for k, v in table.items():
                    sub.walk(v, depth, sub._at("attr", module, k), sub._path(path, k),
                             "non-persistent buffer" if role == "buffer" and k in hidden
                             else role)
            for k, v in module.__dict__.items():   # tensors kept as plain attributes
                if k[0] != "_":
                    sub.constant(v)   # p, eps, momentum, ... (training is guarded as well)
                kind = _KINDS.get(type(v)) or _kind(v)
                if k[0] != "_" and kind in (Tensor, Module, list, dict):
                    sub.walk(v, depth, sub._at("attr", module, k), sub._path(path, k))
                    # a mutable container can change without the module knowing
                    cacheable = cacheable and not isinstance(v, (list, dict, set))
            cacheable = cacheable and not (sub.groups or sub.generators) and all(
                _SUBTREES.get(m, (None,) * 6)[4] for m in sub.modules)
            cached = (_trace_context.structure[0], sub.modules, sub.tensors,
                      set(map(id, sub.params)), cacheable, sub.constants)
            if self.where is not None:
                for key, places in sub.where.items():
                    self.where.setdefault(key, []).extend(places)
            if self.paths is not None:
                for key, (_, name, role) in sub.paths.items():
                    self.name(key, name, role)
            if cacheable:
                _SUBTREES[module] = cached
            else:
                self.groups.extend(sub.groups)
                self.generators.extend(g for g in sub.generators if id(g) not in self._ids)
                self._ids.update(map(id, sub.generators))
                self.probes.extend(sub.probes)
        _, modules, tensors, params, _, constants = cached
        self.constants.extend(constants)
        ids = self._ids
        self.modules.append(module)   # walk() has marked it seen
        for m in modules:
            if id(m) not in ids:
                ids.add(id(m))
                self.modules.append(m)
        for t in tensors:
            if id(t) not in ids:
                ids.add(id(t))
                self.tensors.append(t)
                if id(t) in params:
                    self.params.append(t)

    def walk_function(self, fn, depth):
        """A function's closure, the globals it names and a bound method's object; their paths
        are roots: the variable's name, ``self``."""
        root = None if self.paths is None else ""
        if isinstance(fn, types.MethodType):
            self.walk(fn.__self__, depth + 1, None, self._path(root, "self"))
            fn = fn.__func__
        if isinstance(fn, functools.partial):
            self.walk(fn.func, depth + 1)
            self.walk(fn.args, depth + 1, None, self._path(root, "args"))
            self.walk(fn.keywords, depth + 1, None, root)
            return
        if not isinstance(fn, types.FunctionType):
            return
        if fn.__closure__:
            contents = _cell_contents(fn.__closure__)
            self.probe(functools.partial(_cell_contents, fn.__closure__), contents)
            for name, cell, v in zip(fn.__code__.co_freevars, fn.__closure__, contents):
                self.constant(v)
                self.walk(v, depth + 1, self._at("cell", cell, None), self._path(root, name))
        names = _global_names(fn.__code__)
        if names:
            namespace = fn.__globals__
            values = _global_values(namespace, names)
            self.probe(functools.partial(_global_values, namespace, names), values)
            for name, v in zip(names, values):
                self.constant(v)
                self.walk(v, depth + 1, self._at("item", namespace, name),
                          self._path(root, name))


_GLOBAL_OPS = frozenset(("LOAD_GLOBAL", "LOAD_NAME", "STORE_GLOBAL", "STORE_NAME"))


@functools.lru_cache(maxsize=None)
def _global_names(code):
    """The global names ``code`` (and the functions defined in it) reads or binds, in order
    (attribute names, which co_names holds too, are not globals)."""
    names = {ins.argval: None for ins in dis.get_instructions(code)
             if ins.opname in _GLOBAL_OPS}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names.update(dict.fromkeys(_global_names(const)))
    return tuple(names)


def _find_state(fn, args, kwargs, locate=False, names=None):
    """What a call ``fn(*args, **kwargs)`` captures (_State); ``locate``: record where each
    Tensor is bound; ``names``: a name per leaf of ``(args, kwargs)``, and record the path of
    every object found (``_State.paths``)."""
    state = _State(locate, names is not None)
    if isinstance(fn, Module):
        state.walk(fn, 0, None, None if names is None else "")
    else:
        state.walk_function(fn, 0)
    state.leaves, state.tree = jax.tree_util.tree_flatten((args, kwargs), is_leaf=_is_leaf)
    for i, x in enumerate(state.leaves):
        if not isinstance(x, Tensor):
            state.walk(x, 0, None, None if names is None else names[i])
    for g in default_generators():   # the CPU's and each accelerator's
        state.walk(g)
    state.fixed, state.fixed_params = len(state.tensors), len(state.params)
    fixed_at = {id(t): i for i, t in enumerate(state.tensors)}
    state.arguments, tensors, params, state.by_value = _place_arguments(
        [x for x in state.leaves if isinstance(x, Tensor)], fixed_at, state.fixed)
    state.tensors += tensors
    state.params += params
    for t in state.tensors:   # their storage stays theirs (NOTE [ an alias does not keep a graph ])
        t._captured = True
    return state


def _place_arguments(args, fixed_at, n_fixed):
    """Where the Tensor arguments ``args`` enter the program, after the ``n_fixed`` tensors
    found from the function (``fixed_at``: their ids -> positions).  A view of a tensor that
    does not require grad and is neither captured nor an argument itself (``x[i:i + n]`` of a
    dataset) is passed by value, so a new slice is a new input, not a new program; any other
    argument enters as its storage root, a view with its view steps guarded.

    Returns (how, the new tensors in order, the new parameters among them, the positions
    passed by value); ``how`` is what the guard compares: per argument, its position,
    whether it requires grad, and the view steps of one entered by its root."""
    roots = {id(t) for t in args if t._root is None}
    at, how, tensors, params, by_value = {}, [], [], [], set()
    for t in args:
        root = t if t._root is None else t._root
        value = root is not t and not t.requires_grad and not root.requires_grad and \
            id(root) not in fixed_at and id(root) not in roots
        entry = t if value else root
        position = fixed_at.get(id(entry), at.get(id(entry)))
        if position is None:
            position = at[id(entry)] = n_fixed + len(tensors)
            tensors.append(entry)
            if value:
                by_value.add(position)
            elif entry._requires_grad and entry._grad_fn is None:
                params.append(entry)
        steps = _BY_VALUE if value else None if root is t else _view_steps(t._chain)
        how.append((position, t._requires_grad, steps))
    return tuple(how), tensors, params, frozenset(by_value)


_BY_VALUE = "by value"


def _view_steps(chain):
    """A view's steps from its root, comparable between calls."""
    return tuple((id(op), repr(static)) for op, static in chain)


# --- guards ---------------------------------------------------------------------------------------

def _value_key(x):
    """What a guard compares of a Python value the step bakes in: a float or complex number by
    its repr (so -0.0 is not 0.0, and nan is nan), anything else itself."""
    return repr(x) if type(x) in (float, complex) else x


def _leaf_key(x):
    if isinstance(x, Tensor):
        return "T"
    try:
        hash(x)
        return (type(x), _value_key(x))
    except TypeError:
        return (type(x), id(x))


def _is_leaf(x):
    return isinstance(x, (Tensor, Module, Optimizer, LRScheduler, Generator))


def _group_values(groups):
    """Every optimizer group's values of its optimizer's default keys, in one list: while each
    is the same object, _hyper_keys and _groups_key cannot have changed."""
    return [group.get(k, _MISSING) for opt, group, _ in groups for k in opt.defaults]


def _groups_key(groups):
    """What the program bakes in from the optimizers' groups: which hyper-parameters are traced
    (and their Python types), the values of flags."""
    return tuple((keys, tuple((k, group[k]) for k in opt._static),
                  tuple((k, group[k] != 0) for k in opt._switches),
                  tuple(type(group[k]) for k in keys))
                 for opt, group, keys in groups)


def _guard_key(state):
    tensors = tuple((t._arr.shape, t._arr.dtype, t._requires_grad) for t in state.tensors)
    grads = tuple(None if p._grad is None else (p._grad._arr.shape, p._grad._arr.dtype)
                  for p in state.params)
    return (state.tree, tuple(_leaf_key(x) for x in state.leaves), state.arguments, tensors,
            grads, _groups_key(state.groups), len(state.generators),
            tuple(m.training for m in state.modules), _grad_state.grad_enabled,
            tuple(state.constants))   # last: _compile files the program under the trace's too


# --- tracing --------------------------------------------------------------------------------------

_TENSOR, _NUMBER = object(), object()   # markers in _Plan.out_static


class _Plan:
    """What the trace found out: where each output goes."""

    def __init__(self):
        self.out_tree = None
        self.out_static = None    # fn's non-Tensor outputs (baked), by leaf position
        self.changed = ()         # positions in state.tensors of Tensors the step wrote
        self.grads = ()           # per parameter: whether it ends with a .grad
        self.replaced = ()        # parameters whose .grad the step replaces by a new Tensor
        self.hypers = ()          # (group position, key) of hyper-parameters the step changed
        self.gens = ()            # positions of the generators the step drew from
        self.moved = ()           # captured tensors the step moves to its device
        self.created = ()         # Tensors the step created that stay reachable
        self.bind = ()            # per created Tensor: where it is bound (see _bindings)
        self.constants = ()       # the constants as the trace left them
        self.deferred = ()        # (fn, args with Tensor positions) to replay
        self.checks = ()          # (error type, message, number of values) per check
        self.one_tensor = False      # fn returns one Tensor (a loss), not in a container
        self.returns_graph = False   # fn returns Tensors that require grad...
        self.backward_ran = False    # ...and did (a training step) or did not run backward


_generations = itertools.count(1)


def _fresh_gen():
    """A storage generation no view has seen (views re-derive their arrays from the root)."""
    return next(_generations) << 32


def _number_tensor(tracer):
    t = Tensor._wrap(tracer)
    t._number = int if jnp.issubdtype(tracer.dtype, jnp.integer) else float
    return t


def _swap_in(state, arrays, grads, hypers, gens, trace):
    """Put the traced values into the live objects; returns what restores them and, per
    captured tensor, the Tensor holding its traced value (a fresh one for an argument view
    passed by value: the step gets it in the view's place)."""
    saved, live = [], []
    for i, (t, a) in enumerate(zip(state.tensors, arrays)):
        if i in state.by_value:
            live.append(Tensor._wrap(a))
            continue
        live.append(t)
        saved.append((t, t._arr))
        t._arr, t._gen = a, _fresh_gen()
    saved_grads = [(p, p._grad) for p in state.params]
    for p, g in zip(state.params, grads):
        p._grad = None if g is None else Tensor._wrap(g)
    # a traced hyper-parameter is a 0-dim Tensor in the group while tracing, so the step's own
    # arithmetic with it (loss * group["lr"]) works; the optimizer reads its array
    saved_hypers, trace.numbers = [], {}
    for (opt, group, keys), values in zip(state.groups, hypers):
        for k, v in zip(keys, values):
            saved_hypers.append((group, k, group[k]))
            for tracer, value in zip(jax.tree_util.tree_leaves(v),
                                     jax.tree_util.tree_leaves(group[k])):
                trace.concrete[id(tracer)] = value
            group[k] = jax.tree_util.tree_map(_number_tensor, v)
            trace.numbers.update((id(t), t) for t in jax.tree_util.tree_leaves(
                group[k], is_leaf=lambda x: isinstance(x, Tensor)))
    saved_gens = []
    for g, a in zip(state.generators, gens):
        saved_gens.append((g, g._tensor._arr, g._words))
        g._tensor._arr = a
        g._words = None

    def restore():
        for t, arr in saved:
            t._arr, t._gen = arr, _fresh_gen()
        for p, g in saved_grads:
            p._grad = g
        for group, k, v in saved_hypers:
            group[k] = v
        for g, arr, words in saved_gens:
            g._tensor._arr, g._words = arr, words
    return restore, live


def _devices(arrays):
    """The jax device of each captured array, then the step's: that of the first one with
    dimensions, else the CPU (NOTE [ devices in a compiled step ])."""
    devices = [next(iter(a.devices())) for a in arrays]
    devices.append(next((d for a, d in zip(arrays, devices) if a.ndim), None)
                   or to_jax_device(CPU))
    return devices


def _program(fn, args, kwargs, state, plan, devices=None, checks=False):
    """The step as a pure function of the captured values (traced once by make_jaxpr);
    ``devices``: the jax device of each captured tensor, the step's device last (NOTE [ devices
    in a compiled step ]; None for an export, which names no device); ``checks``: whether the
    program reports the checks the step's ops make (NOTE [ checks in a compiled step ])."""
    def program(arrays, grads, hypers, gens):
        before = _find_state(fn, args, kwargs, locate=True).where
        leaves = jax.tree_util.tree_leaves((arrays, grads, hypers, gens))
        trace = _trace_context.Trace(checks, getattr(leaves[0], "_trace", None) if leaves
                                     else None)
        restore, live = _swap_in(state, arrays, grads, hypers, gens, trace)
        if devices is not None:
            trace.device = devices[-1]
            trace.devices = {id(t): d for t, d in zip(live, devices)}
        swapped_grads = [p._grad for p in state.params]
        cleared = ()
        _trace_context.active.append(trace)
        try:
            call_args, call_kwargs = args, kwargs
            if state.by_value:
                stand_in = {id(state.tensors[i]): live[i] for i in state.by_value}
                call_args, call_kwargs = jax.tree_util.tree_unflatten(
                    state.tree, [stand_in.get(id(x), x) for x in state.leaves])
            out = fn(*call_args, **call_kwargs)
            leaves, plan.out_tree = jax.tree_util.tree_flatten(out, is_leaf=_is_leaf)
            for x in leaves:
                if isinstance(x, (Module, Optimizer, LRScheduler, Generator)):
                    raise TypeError(f"a compiled step cannot return a {type(x).__name__}")
            # Tensors come back as Tensors, traced numbers (a hyper-parameter) as Python
            # numbers, anything else as it was when traced
            plan.out_static = [(_NUMBER if id(x) in trace.numbers else _TENSOR)
                               if isinstance(x, Tensor) else x for x in leaves]
            plan.one_tensor = (plan.out_static == [_TENSOR]
                               and jax.tree_util.treedef_is_leaf(plan.out_tree))
            outs = [x._value() for x in leaves if isinstance(x, Tensor)]
            plan.returns_graph = any(isinstance(x, Tensor) and x.requires_grad for x in leaves)
            plan.backward_ran = trace.backward_ran
            plan.changed = tuple(i for i, (t, a) in enumerate(zip(live, arrays))
                                 if t._arr is not a)
            plan.moved = tuple(i for i, t in enumerate(live) if id(t) in trace.moved)
            changed = [live[i]._arr for i in plan.changed]
            plan.grads = tuple(p._grad is not None for p in state.params)
            plan.replaced = tuple(i for i, (p, g) in enumerate(zip(state.params, swapped_grads))
                                  if g is not None and p._grad is not None and p._grad is not g)
            final_grads = [p._grad._value() for p in state.params if p._grad is not None]
            hyper_out, plan_hypers = [], []
            for g, ((opt, group, keys), values) in enumerate(zip(state.groups, hypers)):
                for k, v in zip(keys, values):
                    now = jax.tree_util.tree_map(lambda t: t._value() if isinstance(t, Tensor)
                                                 else t, group[k],
                                                 is_leaf=lambda x: isinstance(x, Tensor))
                    if jax.tree_util.tree_leaves(now) != jax.tree_util.tree_leaves(v):
                        plan_hypers.append((g, k))
                        hyper_out.append(now)
            plan.hypers = tuple(plan_hypers)
            plan.gens = tuple(i for i, (g, a) in enumerate(zip(state.generators, gens))
                              if g._tensor._arr is not a)   # generators that drew
            gens_out = [state.generators[i]._tensor._arr for i in plan.gens]
            after = _find_state(fn, args, kwargs, locate=True)
            known = {id(t) for t in state.tensors}
            plan.created = tuple(t for t in after.tensors if id(t) not in known
                                 and id(t) not in trace.numbers and isinstance(t._arr, _Tracer))
            plan.bind = _bindings(plan.created, state, before, after.where)
            plan.constants = tuple(after.constants)
            created = [t._arr for t in plan.created]
            deferred, deferred_arrays = [], []
            for f, f_args in trace.deferred:
                deferred.append((f, [a if not isinstance(a, Tensor) else None for a in f_args]))
                deferred_arrays.append([a._value() for a in f_args if isinstance(a, Tensor)])
            plan.deferred = tuple(deferred)
            checked = ()
            if trace.checks:
                plan.checks = tuple((error, message, len(values))
                                    for _, error, message, values in trace.checks)
                oks = jnp.stack([jnp.asarray(ok, bool) for ok, *_ in trace.checks])
                ok = jnp.all(oks)
                changed = [jnp.where(ok, a, arrays[i]) for i, a in zip(plan.changed, changed)]
                old = [g for g, has in zip(grads, plan.grads) if has]
                final_grads = [a if g is None else jnp.where(ok, a, g)
                               for a, g in zip(final_grads, old)]
                checked = (oks, [v for *_, values in trace.checks for v in values])
            # the written state first: jit gives a donated buffer to the first output of its
            # shape and dtype, so a returned loss ahead of the step counters would take the
            # first counter's buffer and shift every later one (a copy each, in XLA)
            return (changed, outs, final_grads, hyper_out, gens_out, created, deferred_arrays,
                    checked)
        except BaseException:
            # as in eager code, a .grad the step had set to None (zero_grad) stays None
            cleared = [p for p, g in zip(state.params, swapped_grads)
                       if g is not None and p._grad is None]
            raise
        finally:
            _trace_context.active.pop()
            restore()
            for p in cleared:
                p._grad = None
    return program


def _bindings(created, state, before, after):
    """Where each Tensor the step created is bound, so that a later call can bind its new
    value there as the step would (a new Tensor, as ``self.ema = 0.9 * self.ema + ...`` makes):
    per created Tensor, its places (how, container, key, position), ``position`` being that of
    the captured Tensor the place held before the call (a later call checks the place still
    holds that input: _binds_hold).  ``before`` / ``after``: the ``where`` maps of locating
    walks before and after the trace.  None where a created Tensor is bound nowhere a walk
    can rebind (only a view of it, say) or a place held no captured Tensor before."""
    position = {id(t): i for i, t in enumerate(state.tensors)}
    prior = {}
    for key, places in before.items():
        if key in position:
            for how, container, name in places:
                prior[how, id(container), name] = position[key]
    binds = []
    for t in created:
        places = tuple((how, container, name, prior.get((how, id(container), name)))
                       for how, container, name in after.get(id(t), ()))
        if not places or any(p is None for *_, p in places):
            return None
        binds.append(places)
    return tuple(binds)


def _read_place(how, container, key):
    try:
        if how == "item":
            return container[key]
        if how == "attr":
            return getattr(container, key)
        return container.cell_contents
    except (LookupError, AttributeError, ValueError):
        return _MISSING


def _bind_place(how, container, key, value):
    if how == "item":
        container[key] = value
    elif how == "attr":
        setattr(container, key, value)
    else:
        container.cell_contents = value


def _binds_hold(plan, state):
    """Whether each place a program binds created state to still holds the input it held
    when the program was traced (the same objects, one call on)."""
    tensors = state.tensors
    return all(p < len(tensors) and _read_place(how, c, k) is tensors[p]
               for places in plan.bind for how, c, k, p in places)


def _user_frame(tb):
    """The innermost frame of the traceback outside torchlike and jax (the user's line)."""
    found = None
    for frame in traceback.extract_tb(tb):
        path = os.path.abspath(frame.filename)
        if path.startswith(_PACKAGE) or f"{os.sep}jax{os.sep}" in path or \
                f"{os.sep}jaxlib{os.sep}" in path or path.startswith(os.path.dirname(
                    os.__file__)):
            continue
        found = frame
    return found


def _is_graph_break(e):
    return isinstance(e, TRACED_VALUE_ERRORS)


def unsupported(e, doing, advice):
    """torchlike.compiler.Unsupported for ``e``, a traced tensor's value read in Python while
    ``doing``, naming the user's line; ``advice`` says what to do instead."""
    frame = _user_frame(e.__traceback__)
    where = (f"line {frame.lineno} of {frame.filename} (`{frame.line}`)" if frame is not None
             else "a line of it")
    reason = str(e).splitlines()[0] if str(e) else type(e).__name__
    return compiler.Unsupported(
        f"{doing}: {where} needs the value of a traced tensor in Python "
        f"({type(e).__name__}: {reason}).\n{advice}")


def _qualname(fn):
    return getattr(fn, "__qualname__", type(fn).__name__)


# --- the compiled function ----------------------------------------------------------------------

class _Retrace(Exception):
    """A replayed call's inputs differ from the program's in shape, dtype or structure."""


class _Compiled:
    """One program: the jitted trace and the plan of where its outputs go."""

    def __init__(self, jaxpr, out_tree, plan, n_tensors, had_grads, device):
        self.plan = plan
        self.device = device   # the step's (NOTE [ devices in a compiled step ])
        consts = jaxpr.consts
        inner = jaxpr.jaxpr
        changed = set(plan.changed)
        self.donated = tuple(i for i in range(n_tensors) if i in changed)
        self.kept = tuple(i for i in range(n_tensors) if i not in changed)
        self.sealed = False   # a call that must not trace (jit traces again for new inputs)
        self.fresh = True     # not run yet

        def run(donated, kept, grads, hypers, gens):
            if self.sealed:
                raise _Retrace
            arrays, d, k = [], iter(donated), iter(kept)
            for i in range(n_tensors):
                arrays.append(next(d) if i in changed else next(k))
            flat = jax.tree_util.tree_leaves((arrays, grads, hypers, gens))
            return jax.tree_util.tree_unflatten(out_tree, jax.core.eval_jaxpr(inner, consts, *flat))
        # the written state; and the old gradients when each has a new one to take its buffer
        self.donate_grads = all(out for out, was in zip(plan.grads, had_grads) if was)
        donate = (0, 2) if self.donate_grads else (0,)
        self.fn = jax.jit(run, donate_argnums=donate if compiler.config.donate_buffers else (),
                          keep_unused=True)

    def __call__(self, arrays, grads, hypers, gens, sealed=False):
        """Run on the captured values; ``sealed``: raise _Retrace (before running anything)
        where the inputs are not those the program was compiled for."""
        donated = _owned(list(map(arrays.__getitem__, self.donated)))
        kept = list(map(arrays.__getitem__, self.kept))
        if self.donate_grads:
            grads = _owned(list(grads))
        self.sealed = sealed
        try:
            return self.fn(donated, kept, grads, hypers, gens)
        except ValueError as e:
            if "incompatible devices" not in str(e):
                raise
            found = list(dict.fromkeys(from_jax_device(next(iter(a.devices())))
                                       for a in jax.tree_util.tree_leaves((arrays, grads))))
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at "
                               f"least two devices, {found[0]} and {found[1]}!") from None
        except jax.errors.JaxRuntimeError as e:
            raise out_of_memory(e) or e
        finally:
            self.sealed = False


def _refcounts(arrays):
    return list(map(sys.getrefcount, arrays))


def _owned(arrays):
    """``arrays`` (a list made for the call from the list _inputs made; None allowed), each
    one that something besides its Tensor refers to replaced by a copy: a donated buffer is
    gone afterwards, so one that something else shares must not be given."""
    counts = _refcounts(arrays)
    if all(map(_SOLE_OWNER.__ge__, counts)):
        return arrays
    return [a if a is None or n <= _SOLE_OWNER else jnp.array(a, copy=True)
            for a, n in zip(arrays, counts)]


def _sole_owner_refs():
    """A count of _refcounts for an array only its Tensor holds: the Tensor, the list of
    _inputs, the list made for the call, and the counting's own.  (Counted with a numpy
    stand-in: making a jax array at import would start jax's backend, claiming a GPU.)"""
    t = Tensor._wrap(np.zeros(1))
    arrays = [t._arr]
    return _refcounts(list(arrays))[0]


class CompiledFunction:
    """What ``torchlike.compile(fn)`` returns: call it like ``fn`` (see NOTE [ whole-step
    compile ])."""

    def __init__(self, fn, fullgraph, dynamic, mode):
        functools.update_wrapper(self, fn, updated=())
        self._fn = fn
        self._fullgraph = fullgraph
        self.dynamic = dynamic
        self.mode = mode
        self._programs = {}
        self._last = None   # a _Replay of the last call
        self._warmed_up = False
        self._eager = False
        _all_compiled.add(self)

    def __call__(self, *args, **kwargs):
        if self._eager or not self._warmed_up or _trace_context.active:
            self._warmed_up = True
            compiler.counters["eager_calls"] += 1
            return self._fn(*args, **kwargs)
        with _x64.on():   # NOTE [ 64-bit types in torchlike's scope ] in _x64.py
            last = self._last
            if last is not None:
                state = last.state_for(args, kwargs)
                if state is not None:
                    try:
                        out = _run(last.program, state, sealed=True, hypers=last.hypers(),
                                   writes=last.writes)
                    except _Retrace:   # new shapes or dtypes: find the program as below
                        pass
                    else:
                        compiler.counters["calls"] += 1
                        return out
            self._last = None
            seen = _Replay.snapshot()
            state = _find_state(self._fn, args, kwargs)
            key = _guard_key(state)
            program = self._programs.get(key)
            if program is not None and program.plan.bind and not _binds_hold(program.plan, state):
                program = None   # the step's created state now lives elsewhere: trace it there
            if program is None:
                program = self._compile(state, args, kwargs, key)
                if program is None:   # fell back to eager
                    compiler.counters["eager_calls"] += 1
                    return self._fn(*args, **kwargs)
            compiler.counters["calls"] += 1
            out = _run(program, state)
            if self._programs.get(key) is program:
                self._last = _Replay(seen, state, program)
            return out

    def _compile(self, state, args, kwargs, key):
        plan = _Plan()
        inputs = _inputs(state)
        devices = _devices(inputs[0])
        try:
            program = _program(self._fn, args, kwargs, state, plan, devices,
                               checks=compiler.config.index_checks)
            jaxpr, shapes = jax.make_jaxpr(program, return_shape=True)(*inputs)
        except Exception as e:
            if not _is_graph_break(e):
                raise
            error = unsupported(
                e, f"torchlike.compile cannot make {_qualname(self._fn)} one program",
                "A compiled step cannot branch on tensor values or read them on the host: use "
                "torchlike.where or masks instead of `if` on a tensor, and move .item(), "
                ".tolist(), .numpy(), print() and nonzero() out of the compiled function; or "
                "pass fullgraph=False to run this step eagerly.")
            if self._fullgraph:
                raise error from None
            return self._fall_back(f"{error}\nRunning it eagerly from now on.")
        if plan.returns_graph and not plan.backward_ran:
            # a loss for the caller to differentiate: the program's outputs have no history
            name = _qualname(self._fn)
            return self._fall_back(
                f"torchlike.compile: {name} returns tensors that require grad without running "
                "backward itself; compiled outputs carry no autograd history, so it runs "
                "eagerly. Compile the whole training step (forward, backward and the optimizer "
                "step) instead.")
        numbers = [x for x in plan.out_static if _number(x)]
        if numbers:
            name = _qualname(self._fn)
            warnings.warn(f"torchlike.compile: {name} returns Python numbers {numbers}: they "
                          "are fixed when the step is traced (return Tensors to get every "
                          "call's values)", UserWarning, stacklevel=3)
        program = _Compiled(jaxpr, jax.tree_util.tree_structure(shapes), plan,
                            len(state.tensors), [g is not None for g in inputs[1]], devices[-1])
        compiler.counters["compiles"] += 1
        n = len(set(map(id, self._programs.values()))) + 1   # a program can be filed twice
        name = _qualname(self._fn)
        if compiler.config.log_compiles:
            print(f"torchlike.compile: compiling {name} (program {n})", file=sys.stderr)
        if n > compiler.config.cache_size_limit:
            warnings.warn(f"torchlike.compile: {name} has been recompiled {n - 1} times "
                          f"(config.cache_size_limit = {compiler.config.cache_size_limit}): "
                          "its arguments' shapes or Python values, or its state, keep "
                          "changing", UserWarning, stacklevel=3)
        if not plan.created or plan.bind:   # else traced again with what it created
            self._programs[key] = program
            # numbers the step itself changes (a counter it increments) keep the values the
            # trace left: later calls, which run no Python, find them so
            self._programs[key[:-1] + (plan.constants,)] = program
        return program


    def _fall_back(self, message):
        warnings.warn(message, UserWarning, stacklevel=4)
        compiler.counters["graph_breaks"] += 1
        self._eager = True
        return None


_all_compiled = weakref.WeakSet()


class _Replay:
    """The last call's state and program, reused while nothing the walk read has changed.

    NOTE [ replaying the last call ]
    Finding the state walks every object the step reaches (tens of microseconds for a small
    Transformer and its optimizer), and the guard key reads every captured tensor; a step
    called in a loop finds the same objects each time.  So a call first checks, for much
    less, that a walk would find what the last call's did and that the guards would match:
    - the structure epoch (_trace_context.structure: Module attributes and tables,
      requires_grad) and grad mode are unchanged;
    - every container the walk looked into outside cached modules (closure cells, the globals
      the step names, optimizers' param_groups, params lists and state, dicts, lists and
      plain objects' attributes) holds the same objects (the walk's probes);
    - the arguments have the same structure, the same non-Tensor values, and their Tensors
      take the same places (_place_arguments);
    - the optimizers' flags and the types of their traced hyper-parameters are unchanged
      (rebuilt and compared only when a group's value is not the same object as last call's,
      as after a scheduler's step; then the hyper-parameters are put on the device again).
    Shapes and dtypes are left to jit: the program is called sealed, and inputs it was not
    compiled for make jit trace again, which raises _Retrace before anything runs; the call
    then finds its state and program in full.  (The module subtree cache rests on the same
    epoch, and a captured Tensor's storage root never changes: NOTE [ an alias does not keep a
    graph ] in _tensor.py; ``.data = t`` on an alias, which gives it storage of its own, moves
    the epoch.)"""

    def __init__(self, seen, state, program):
        self.seen = seen
        self.state = state
        self.program = program
        self.fixed_at = {id(t): i for i, t in enumerate(state.tensors[:state.fixed])}
        self.groups = _groups_key(state.groups)
        self.group_values = _group_values(state.groups)
        self.hyper_arrays = None
        # where the outputs go, when every written Tensor is found from fn (argument Tensors
        # may be other objects on the next call)
        self.writes = (_Writes(program.plan, state)
                       if all(i < state.fixed for i in program.plan.changed) else None)

    def hypers(self):
        """The hyper-parameters as device scalars (weakly typed, as the Python numbers are),
        put on the device again only after state_for saw a value set anew."""
        if self.hyper_arrays is None:
            self.hyper_arrays = jax.device_put(_hypers(self.state), self.program.device)
        return self.hyper_arrays

    @staticmethod
    def snapshot():
        """What a walk starting now depends on besides its probes."""
        return _trace_context.structure[0], _grad_state.grad_enabled

    def state_for(self, args, kwargs):
        """The last call's state, with these arguments in it, if a walk would find it; else
        None."""
        state = self.state
        if self.snapshot() != self.seen or not _probes_hold(state.probes):
            return None
        if args or kwargs or state.leaves:
            leaves, tree = jax.tree_util.tree_flatten((args, kwargs), is_leaf=_is_leaf)
            if tree != state.tree:
                return None
            tensors = []
            for x, then in zip(leaves, state.leaves):
                if isinstance(x, Tensor):
                    tensors.append(x)
                elif x is not then and not (type(x) is type(then) and isinstance(x, _VALUES)
                                            and _value_key(x) == _value_key(then)):
                    return None
            how, new, params, _ = _place_arguments(tensors, self.fixed_at, state.fixed)
            if how != state.arguments:
                return None
            state.tensors[state.fixed:] = new
            state.params[state.fixed_params:] = params
        values = _group_values(state.groups)
        if len(values) != len(self.group_values) or \
                not all(map(operator.is_, values, self.group_values)):
            # a value set anew (a scheduler's lr): do the flags and traced keys still match?
            if any(_hyper_keys(opt, group) != keys for opt, group, keys in state.groups) or \
                    _groups_key(state.groups) != self.groups:
                return None
            self.group_values = values
            self.hyper_arrays = None
        return state


_VALUES = (str, bytes, int, float, complex, bool)


_GRAD = operator.attrgetter("_grad")


def _hypers(state):
    return [tuple(group[k] for k in keys) for _, group, keys in state.groups]


_ARR = operator.attrgetter("_arr")


def _inputs(state, hypers=None):
    arrays = list(map(_ARR, state.tensors))
    for i in state.by_value:
        arrays[i] = state.tensors[i]._value()
    grads = [None if g is None else g._arr if g._root is None else g._sync()
             for g in map(_GRAD, state.params)]
    gens = [g._state._arr for g in state.generators]
    return arrays, grads, _hypers(state) if hypers is None else hypers, gens


class _Writes:
    """Where a program's written outputs go in one state: the storage roots, with their
    version counters, and the rest (argument views, arguments passed by value), which take
    Tensor._write.  A replayed call reuses its state's (NOTE [ replaying the last call ])."""

    def __init__(self, plan, state):
        tensors, by_value = state.tensors, state.by_value
        self.roots, self.counters, self.at, self.others = [], [], [], []
        for k, i in enumerate(plan.changed):
            t = tensors[i]
            if t._root is None and i not in by_value:
                self.roots.append(t)
                self.counters.append(t._version_counter())
                self.at.append(k)
            else:
                self.others.append((k, t))

    def write(self, changed):
        values = changed if not self.others else map(changed.__getitem__, self.at)
        for t, counter, a in zip(self.roots, self.counters, values):
            t._arr = a   # Tensor._write for a storage root, inlined
            t._gen += 1
            counter[0] += 1
        for k, t in self.others:   # an argument view: into its root
            t._write(changed[k])


def _run(program, state, sealed=False, hypers=None, writes=None):
    plan = program.plan
    arrays, grads, hypers, gens = _inputs(state, hypers)
    here = program.device   # NOTE [ devices in a compiled step ]
    for i in plan.moved:
        arrays[i] = jax.device_put(arrays[i], here)
    gens = [a if here in a.devices() else jax.device_put(a, here) for a in gens]
    held = _held_grads(state.params, plan.replaced, grads, program.donate_grads)
    changed, outs, final_grads, hyper_out, gens_out, created, deferred, checked = program(
        arrays, grads, hypers, gens, sealed=sealed)
    writes = writes or _Writes(plan, state)
    if checked:
        if on_host(checked[0]):
            if not np.asarray(checked[0]).all():
                _restore_and_raise(plan, state, writes, changed, final_grads, checked)
        else:
            _defer_checks(plan, checked)
    writes.write(changed)
    for i in held:   # the step's new gradient goes into a new Tensor, as in eager
        state.params[i]._grad = None
    new_grads = iter(final_grads)
    for p, has in zip(state.params, plan.grads):
        g = p._grad
        if not has:
            p._grad = None
        elif g is None:
            p._grad = Tensor._wrap(next(new_grads))
        elif g._root is None:   # as above
            g._arr = next(new_grads)
            g._gen += 1
            (g._vc or g._version_counter())[0] += 1
        else:
            g._write(next(new_grads))
    for (g, k), v in zip(plan.hypers, hyper_out):
        group = state.groups[g][1]
        group[k] = jax.tree_util.tree_map(float, v)
    for i, a in zip(plan.gens, gens_out):
        g = state.generators[i]
        home = g._tensor._device()
        g._tensor._write(a if home in a.devices() else jax.device_put(a, home))
        g._reload()
    if program.fresh:   # the call that traced it: the created Tensors are bound already
        for t, a in zip(plan.created, created):
            t._arr, t._gen = a, _fresh_gen()
    else:
        for places, a in zip(plan.bind, created):
            t = Tensor._wrap(a)
            for how, container, key, _ in places:
                _bind_place(how, container, key, t)
    program.fresh = False
    for (f, f_args), arrays in zip(plan.deferred, deferred):
        it = iter(arrays)
        f(*[Tensor._wrap(next(it)) if a is None else a for a in f_args])
    if plan.one_tensor:
        return Tensor._wrap(outs[0])
    it = iter(outs)
    leaves = [Tensor._wrap(next(it)) if s is _TENSOR else next(it).item() if s is _NUMBER else s
              for s in plan.out_static]
    return jax.tree_util.tree_unflatten(plan.out_tree, leaves)


def _held_grads(params, replaced, grads, donated):
    """The parameters, among those whose ``.grad`` the step replaces by a new Tensor
    (``zero_grad()``, then backward), whose old ``.grad`` Tensor something else holds: it keeps
    its values, as in eager, so its buffer is not donated (a copy goes in instead).  The new
    gradient of any other one may go into the old Tensor: nothing else can see it."""
    held = [i for i in replaced if params[i]._grad is not None
            and sys.getrefcount(params[i]._grad) > _SOLE_GRAD_OWNER]
    if donated:
        for i in held:
            grads[i] = jnp.array(grads[i], copy=True)
    return held


# NOTE [ checks in a compiled step ]
# Eager ops check index values on the host (an embedding index past the table raises
# IndexError); while a step is traced the values are not known, and XLA would clamp such an
# index and train on the wrong row.  So an op that checks on the host records the same check as
# a traced boolean (_trace_context.check), and the program returns the checks' flags, with the
# values its message shows.  Every state output (written tensors, gradients that replace old
# ones) is selected: the new value where every check holds, else the old one.  The selects fuse
# into the kernels that compute the outputs, and the donated buffers then get their own values
# back.  On the CPU the flags are read after the call (no transfer); where one is False the
# state is written back unchanged and the check's error is raised, as eager code raises at an op
# of the forward: the parameters, the optimizer's state and accumulated gradients are as they
# were, and a ``.grad`` the step replaces (``zero_grad()``, then backward) is None, as zero_grad
# left it.  On an accelerator reading them would wait for the step every call, so they are
# queued as eager checks there are (NOTE [ checks on an accelerator ] in _tensor.py): the state
# keeps its old values as selected, and the error comes at the next read of values on the host.
# compiler.config.index_checks switches this off.
def _restore_and_raise(plan, state, writes, changed, final_grads, checked):
    """A check of the program failed (NOTE [ checks in a compiled step ]): its written state
    and gradients hold their old values, which take the place of the donated buffers; a .grad
    the step replaces is None; then raise as eager code would, with nothing else written back
    (the generators' states were not donated)."""
    writes.write(changed)
    old = iter(final_grads)
    for p, has in zip(state.params, plan.grads):
        if has:
            a = next(old)
            if p._grad is not None:
                p._grad._write(a)
    for i in plan.replaced:
        state.params[i]._grad = None
    oks, values = np.asarray(checked[0]), checked[1]
    k = int(np.argmin(oks))
    at = sum(n for _, _, n in plan.checks[:k])
    error, message, n = plan.checks[k]
    raise error(message.format(*(np.asarray(v).item() for v in values[at:at + n])))


def _defer_checks(plan, checked):
    """On an accelerator the checks' flags are not read after the call: each is queued (NOTE
    [ checks on an accelerator ] in _tensor.py); the state written holds its old values where
    one failed, as the program selected them."""
    oks, values = checked
    at = 0
    for k, (error, message, n) in enumerate(plan.checks):
        defer_check((oks[k], *values[at:at + n]), error, message)
        at += n


_MODES = (None, "default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs",
          "max-autotune")


def compile(model=None, *, fullgraph=False, dynamic=None, backend="xla", mode=None,
            options=None, disable=False):  # noqa: A001
    """Mirrors ``torch.compile``: ``fn`` (a training or inference step, or a Module) as one XLA
    program, written exactly as eager code; see NOTE [ whole-step compile ] for what is
    captured, what is baked in and what recompiles.

    Args:
        model: the function or Module; without it, ``compile`` returns a decorator.
        fullgraph: True raises ``torchlike.compiler.Unsupported`` when the step cannot be one
            program; False (default) warns once and runs it eagerly instead.
        dynamic: accepted; shapes are always static here (a new shape compiles a new program,
            which the recompile counter shows).
        backend: only ``"xla"`` (the default; ``"inductor"`` is accepted and means the same).
        mode: accepted (``"default"``, ``"reduce-overhead"``, ``"max-autotune"``...); XLA picks
            its own optimisations, so every mode compiles the same program.
        options: accepted and ignored.
        disable: return ``model`` unchanged.

    Returns:
        A callable with ``model``'s signature (for a Module, an ``OptimizedModule`` whose calls
        run its forward compiled).

    Example::

        >>> @torchlike.compile
        ... def train_step(x, y):
        ...     opt.zero_grad()
        ...     loss = F.cross_entropy(model(x), y)
        ...     loss.backward()
        ...     opt.step()
        ...     return loss
    """
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: "
                           + ", ".join(m for m in _MODES if m))
    if backend not in ("xla", "inductor", "eager", "aot_eager"):
        raise compiler.InvalidBackend(f"Invalid backend: {backend!r}, torchlike compiles with "
                                      "XLA ('xla'; 'inductor' means the same)")
    if model is None:
        return functools.partial(compile, fullgraph=fullgraph, dynamic=dynamic,
                                 backend=backend, mode=mode, options=options, disable=disable)
    if disable:
        return model
    if isinstance(model, Module):
        return OptimizedModule(model, CompiledFunction(model, fullgraph, dynamic, mode))
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    return CompiledFunction(model, fullgraph, dynamic, mode)


class OptimizedModule(Module):
    """Mirrors ``torch._dynamo.eval_frame.OptimizedModule``: ``module`` (registered as
    ``_orig_mod``) whose inference calls run its forward as one compiled program (outputs carry
    no autograd history).  A call that autograd must record (grad mode on and a parameter
    requiring grad) runs the module eagerly: to train compiled, compile the whole training step.
    Attributes it does not have are the module's."""

    def __init__(self, module, compiled):
        super().__init__()
        self._orig_mod = module
        self.training = module.training
        object.__setattr__(self, "_compiled", compiled)

    def forward(self, *args, **kwargs):
        module = self._orig_mod
        if _grad_state.grad_enabled and any(p.requires_grad for p in module.parameters()):
            return module(*args, **kwargs)
        return self._compiled(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._modules["_orig_mod"], name)

    def __len__(self):
        return len(self._orig_mod)


def reset():
    """Forget every compiled program (used by torchlike.compiler.reset)."""
    for f in list(_all_compiled):
        f._programs.clear()
        f._last = None
        f._eager = False


def _sole_grad_owner_refs():
    """sys.getrefcount of a ``.grad`` only its parameter holds, as _held_grads reads it."""
    p = Tensor._wrap(np.zeros(1))
    p._grad = Tensor._wrap(np.zeros(1))
    params = [p]
    return sys.getrefcount(params[0]._grad)


_SOLE_OWNER = _sole_owner_refs()
_SOLE_GRAD_OWNER = _sole_grad_owner_refs()
