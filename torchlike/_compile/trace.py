"""Tracing a step: the step as a pure function of its captured state (``pure_step``, which
jax.make_jaxpr traces once), what the trace found out (``Plan``), where the state it created is
bound, and the error a step that cannot be traced gets.
"""
import itertools
import os
import traceback

import jax
import jax.numpy as jnp

from .. import _trace_context, compiler
from .._device import CPU, to_jax_device
from .._random import Generator
from .._tensor import TRACED_VALUE_ERRORS, Tensor, first_device
from ..nn.modules.module import Module
from ..optim._lr_scheduler_base import LRScheduler
from ..optim.optimizer import Optimizer
from . import walk
from .walk import MISSING, is_leaf

_Tracer = jax.core.Tracer
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # torchlike's

TENSOR, NUMBER = object(), object()   # markers in Plan.out_static


class Plan:
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
        self.group = None         # the process group the step's collectives run over
        self.mesh = None          # the devices' Mesh of a step over several (DataParallel)
        self.one_tensor = False      # fn returns one Tensor (a loss), not in a container
        self.returns_graph = False   # fn returns Tensors that require grad...
        self.backward_ran = False    # ...and did (a training step) or did not run backward


_generations = itertools.count(1)


def fresh_gen():
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
        t._arr, t._gen = a, fresh_gen()
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
            t._arr, t._gen = arr, fresh_gen()
        for p, g in saved_grads:
            p._grad = g
        for group, k, v in saved_hypers:
            group[k] = v
        for g, arr, words in saved_gens:
            g._tensor._arr, g._words = arr, words
    return restore, live


def step_devices(arrays):
    """The jax device of each captured array, then the step's: that of the first one with
    dimensions, else the CPU (NOTE [ devices in a compiled step ])."""
    devices = [first_device(a) for a in arrays]
    devices.append(next((d for a, d in zip(arrays, devices) if a.ndim), None)
                   or to_jax_device(CPU))
    return devices


def step_placement(arrays, device):
    """Where a call puts what it moves in (hyper-parameters, generator states, moved
    arguments): the step's ``device``, or, when the first captured array with dimensions is
    laid out over a mesh (a DTensor's: NOTE [ DTensor as a global array ] in
    distributed/tensor/_api.py), the whole of that mesh, replicated, so the program is one SPMD
    program over the mesh."""
    first = next((a for a in arrays if a.ndim), None)
    sharding = getattr(first, "sharding", None)
    if isinstance(sharding, jax.sharding.NamedSharding) and len(sharding.device_set) > 1:
        return jax.sharding.NamedSharding(sharding.mesh, jax.sharding.PartitionSpec())
    return device


def pure_step(fn, args, kwargs, state, plan, devices=None, checks=False):
    """The step as a pure function of the captured values (traced once by make_jaxpr);
    ``devices``: the jax device of each captured tensor, the step's device last (NOTE [ devices
    in a compiled step ]; None for an export, which names no device); ``checks``: whether the
    program reports the checks the step's ops make (NOTE [ checks in a compiled step ])."""
    def program(arrays, grads, hypers, gens):
        before = walk.find_state(fn, args, kwargs, locate=True).where
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
            leaves, plan.out_tree = jax.tree_util.tree_flatten(out, is_leaf=is_leaf)
            for x in leaves:
                if isinstance(x, (Module, Optimizer, LRScheduler, Generator)):
                    raise TypeError(f"a compiled step cannot return a {type(x).__name__}")
            # Tensors come back as Tensors, traced numbers (a hyper-parameter) as Python
            # numbers, anything else as it was when traced
            plan.out_static = [(NUMBER if id(x) in trace.numbers else TENSOR)
                               if isinstance(x, Tensor) else x for x in leaves]
            plan.one_tensor = (plan.out_static == [TENSOR]
                               and jax.tree_util.treedef_is_leaf(plan.out_tree))
            outs = [x._value() for x in leaves if isinstance(x, Tensor)]
            plan.returns_graph = any(isinstance(x, Tensor) and x.requires_grad for x in leaves)
            plan.backward_ran = trace.backward_ran
            plan.group = trace.group
            plan.mesh = trace.mesh
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
            after = walk.find_state(fn, args, kwargs, locate=True)
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
            checked = ()   # (the program decides what a failed check keeps: Compiled)
            if trace.checks:
                plan.checks = tuple((error, message, len(values))
                                    for _, error, message, values in trace.checks)
                oks = jnp.stack([jnp.asarray(ok, bool) for ok, *_ in trace.checks])
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
    holds that input: binds_hold).  ``before`` / ``after``: the ``where`` maps of locating
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
        return MISSING


def bind_place(how, container, key, value):
    """Bind ``value`` to a place a locating walk recorded (State.where)."""
    if how == "item":
        container[key] = value
    elif how == "attr":
        setattr(container, key, value)
    else:
        container.cell_contents = value


def binds_hold(plan, state):
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


def is_graph_break(e):
    """Whether ``e`` is the error of reading a traced tensor's value in Python."""
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


def qualname(fn):
    """``fn``'s name as messages show it."""
    return getattr(fn, "__qualname__", type(fn).__name__)
