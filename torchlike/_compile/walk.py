"""Finding a step's state: the one walk of the objects a call of a function reaches (NOTE
[ whole-step compile ] in __init__.py says through what), used by torchlike.compile on every call
it does not replay, by torchlike.export (which names the state by the walk's paths) and by
torchlike.func and utils.checkpoint (which lift what a function reaches into one op).
"""
import dis
import functools
import itertools
import operator
import types
import weakref

import jax

from .. import _trace_context
from .._random import Generator, default_generators
from .._tensor import Tensor
from ..nn.modules.module import Module
from ..optim._lr_scheduler_base import LRScheduler
from ..optim.optimizer import _NOT_HYPER, Optimizer

_PLAIN = (str, bytes, int, float, complex, bool, type(None), types.ModuleType, type,
          types.BuiltinFunctionType)
_SKIP = object()
_NAMED = (Tensor, Generator, Optimizer)   # the kinds a walk recording paths names
_CONSTANTS = frozenset((int, float, complex, bool, str, type(None)))
MISSING = object()   # an empty closure cell, an undefined global
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


def is_number(v):
    """Whether ``v`` is a Python number (not a bool) or a non-empty tuple or list of them."""
    if isinstance(v, (tuple, list)):
        return bool(v) and all(is_number(x) for x in v)
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def hyper_keys(opt, group):
    """The numeric hyper-parameters of a group that enter the program as traced scalars."""
    skip = _NOT_HYPER.union(opt._static)
    return tuple(k for k in opt.defaults if k not in skip and is_number(group.get(k)))


# What a probe reads again on a later call (NOTE [ replaying the last call ]).
def _cell_contents(cells):
    out = []
    for cell in cells:
        try:
            out.append(cell.cell_contents)
        except ValueError:   # an empty cell
            out.append(MISSING)
    return out


def _global_values(namespace, names):
    return [namespace.get(name, MISSING) for name in names]


def _attributes(obj, names):
    return [getattr(obj, name, MISSING) for name in names]


def _tensor_values(group):
    return [v for v in group.values() if isinstance(v, Tensor)]


def _state_values(opt):
    """The values of every per-parameter state dict of ``opt``, in one sequence."""
    return tuple(itertools.chain.from_iterable(map(dict.values, opt.state.values())))


def probes_hold(probes):
    """Whether every probe reads the same objects as when it was taken."""
    try:
        for read, then in probes:
            now = read()
            if len(now) != len(then) or not all(map(operator.is_, now, then)):
                return False
    except Exception:   # what a probe reads is gone or changed type
        return False
    return True


class State:
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
        self.arguments = ()    # how each Tensor argument is captured (see place_arguments)
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
        named = path is not None   # (paths are built only when recorded: this runs every call)
        self.probe(functools.partial(_attributes, opt, ("param_groups", "state")),
                   (opt.param_groups, opt.state))
        self.probe(opt.param_groups.copy, opt.param_groups)
        for g, group in enumerate(opt.param_groups):
            self.probe(functools.partial(_global_values, group, ("params",)), (group["params"],))
            self.probe(group["params"].copy, group["params"])
            for i, p in enumerate(group["params"]):
                self.walk(p, depth, None,
                          self._path(path, f"param_groups.{g}.params.{i}") if named else None)
            tensors = _tensor_values(group)   # hyper-parameters given as Tensors
            self.probe(functools.partial(_tensor_values, group), tensors)
            for k, v in group.items() if tensors else ():
                if isinstance(v, Tensor):
                    self.walk(v, depth, None,
                              self._path(path, f"param_groups.{g}.{k}") if named else None)
            self.groups.append((opt, group, hyper_keys(opt, group)))
        states = tuple(opt.state.values())
        if all(isinstance(s, dict) for s in states):   # as optimizers keep it: one probe
            self.probe(functools.partial(_state_values, opt), _state_values(opt))
            # a parameter's state is named by the parameter's number, as state_dict numbers it
            number = {} if not named else {id(p): i for i, p in enumerate(dict.fromkeys(
                p for group in opt.param_groups for p in group["params"]))}
            for p, s in opt.state.items():
                at = self._path(path, f"state.{number.get(id(p), f'unknown{len(number)}')}") \
                    if named else None
                for k, v in s.items():
                    self.walk(v, depth, self._at("item", s, k),
                              self._path(at, k) if named else None, "optimizer state")
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
            sub = State(self.where is not None, self.paths is not None)
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


def find_state(fn, args, kwargs, locate=False, names=None):
    """What a call ``fn(*args, **kwargs)`` captures (State); ``locate``: record where each
    Tensor is bound; ``names``: a name per leaf of ``(args, kwargs)``, and record the path of
    every object found (``State.paths``)."""
    state = State(locate, names is not None)
    if isinstance(fn, Module):
        state.walk(fn, 0, None, None if names is None else "")
    else:
        state.walk_function(fn, 0)
    state.leaves, state.tree = jax.tree_util.tree_flatten((args, kwargs), is_leaf=is_leaf)
    for i, x in enumerate(state.leaves):
        if not isinstance(x, Tensor):
            state.walk(x, 0, None, None if names is None else names[i])
    for g in default_generators():   # the CPU's and each accelerator's
        state.walk(g)
    state.fixed, state.fixed_params = len(state.tensors), len(state.params)
    fixed_at = {id(t): i for i, t in enumerate(state.tensors)}
    state.arguments, tensors, params, state.by_value = place_arguments(
        [x for x in state.leaves if isinstance(x, Tensor)], fixed_at, state.fixed)
    state.tensors += tensors
    state.params += params
    for t in state.tensors:   # their storage stays theirs (NOTE [ an alias does not keep a graph ])
        t._captured = True
    return state


def place_arguments(args, fixed_at, n_fixed):
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


def is_leaf(x):
    """What a walk takes as one leaf of a call's arguments (their pytree)."""
    return isinstance(x, (Tensor, Module, Optimizer, LRScheduler, Generator))


def _view_steps(chain):
    """A view's steps from its root, comparable between calls."""
    return tuple((id(op), repr(static)) for op, static in chain)
