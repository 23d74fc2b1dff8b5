"""When a compiled program may run again: the guards a call's state must match (NOTE [ whole-step
compile ] in __init__.py says what recompiles), and the cheaper check that replays the last
call (NOTE [ replaying the last call ]).
"""
import operator

import jax

from .. import _trace_context
from ..amp._policy import region_key
from .._tensor import Tensor
from ..autograd.grad_mode import _state as _grad_state
from .program import hyper_values
from .walk import MISSING, hyper_keys, is_leaf, place_arguments, probes_hold


def value_key(x):
    """What a guard compares of a Python value the step bakes in: a float or complex number by
    its repr (so -0.0 is not 0.0, and nan is nan), anything else itself."""
    return repr(x) if type(x) in (float, complex) else x


def _leaf_key(x):
    if isinstance(x, Tensor):
        return "T"
    try:
        hash(x)
        return (type(x), value_key(x))
    except TypeError:
        return (type(x), id(x))


def group_values(groups):
    """Every optimizer group's values of its optimizer's default keys, in one list: while each
    is the same object, hyper_keys and groups_key cannot have changed."""
    return [group.get(k, MISSING) for opt, group, _ in groups for k in opt.defaults]


def groups_key(groups):
    """What the program bakes in from the optimizers' groups: which hyper-parameters are traced
    (and their Python types), the values of flags."""
    return tuple((keys, tuple((k, group[k]) for k in opt._static),
                  tuple((k, group[k] != 0) for k in opt._switches),
                  tuple(type(group[k]) for k in keys))
                 for opt, group, keys in groups)


def guard_key(state):
    """What a program is filed under: what the trace of ``state``'s call baked in."""
    tensors = tuple((t._arr.shape, t._arr.dtype, t._requires_grad) for t in state.tensors)
    grads = tuple(None if p._grad is None else (p._grad._arr.shape, p._grad._arr.dtype)
                  for p in state.params)
    return (state.tree, tuple(_leaf_key(x) for x in state.leaves), state.arguments, tensors,
            grads, groups_key(state.groups), len(state.generators),
            tuple(m.training for m in state.modules), _grad_state.grad_enabled, region_key(),
            tuple(state.constants))   # last: the program is filed under the trace's too


class Replay:
    """The last call's state and program, reused while nothing the walk read has changed.

    NOTE [ replaying the last call ]
    Finding the state walks every object the step reaches (tens of microseconds for a small
    Transformer and its optimizer), and the guard key reads every captured tensor; a step
    called in a loop finds the same objects each time.  So a call first checks, for much
    less, that a walk would find what the last call's did and that the guards would match:
    - the structure epoch (_trace_context.structure: Module attributes and tables,
      requires_grad), grad mode and the autocast region around the call are unchanged;
    - every container the walk looked into outside cached modules (closure cells, the globals
      the step names, optimizers' param_groups, params lists and state, dicts, lists and
      plain objects' attributes) holds the same objects (the walk's probes);
    - the arguments have the same structure, the same non-Tensor values, and their Tensors
      take the same places (place_arguments);
    - the optimizers' flags and the types of their traced hyper-parameters are unchanged
      (rebuilt and compared only when a group's value is not the same object as last call's,
      as after a scheduler's step; then the hyper-parameters are put on the device again).
    Shapes and dtypes are left to jit: the program is called sealed, and inputs it was not
    compiled for make jit trace again, which raises Retrace before anything runs; the call
    then finds its state and program in full.  (The module subtree cache rests on the same
    epoch, and a captured Tensor's storage root never changes: NOTE [ an alias does not keep a
    graph ] in _tensor.py; ``.data = t`` on an alias, which gives it storage of its own, moves
    the epoch.)"""

    def __init__(self, seen, call):
        state = call.state
        self.seen = seen
        self.state = state
        self.program = call.program
        self.call = call   # NOTE [ the per-call plan ] in program.py
        self.fixed_at = {id(t): i for i, t in enumerate(state.tensors[:state.fixed])}
        self.groups = groups_key(state.groups)
        self.group_values = group_values(state.groups)
        self.hyper_arrays = None

    def hypers(self):
        """The hyper-parameters as device scalars (weakly typed, as the Python numbers are),
        put on the device again only after state_for saw a value set anew."""
        if self.hyper_arrays is None:
            self.hyper_arrays = jax.device_put(hyper_values(self.state), self.program.placement)
        return self.hyper_arrays

    @staticmethod
    def snapshot():
        """What a walk starting now depends on besides its probes."""
        return _trace_context.structure[0], _grad_state.grad_enabled, region_key()

    def state_for(self, args, kwargs):
        """The last call's state, with these arguments in it, if a walk would find it; else
        None."""
        state = self.state
        if self.snapshot() != self.seen or not probes_hold(state.probes):
            return None
        if args or kwargs or state.leaves:
            leaves, tree = jax.tree_util.tree_flatten((args, kwargs), is_leaf=is_leaf)
            if tree != state.tree:
                return None
            tensors = []
            for x, then in zip(leaves, state.leaves):
                if isinstance(x, Tensor):
                    tensors.append(x)
                elif x is not then and not (type(x) is type(then) and isinstance(x, _VALUES)
                                            and value_key(x) == value_key(then)):
                    return None
            how, new, params, _ = place_arguments(tensors, self.fixed_at, state.fixed)
            if how != state.arguments:
                return None
            state.tensors[state.fixed:] = new
            state.params[state.fixed_params:] = params
        values = group_values(state.groups)
        if len(values) != len(self.group_values) or \
                not all(map(operator.is_, values, self.group_values)):
            # a value set anew (a scheduler's lr): do the flags and traced keys still match?
            if any(hyper_keys(opt, group) != keys for opt, group, keys in state.groups) or \
                    groups_key(state.groups) != self.groups:
                return None
            self.group_values = values
            self.hyper_arrays = None
        return state


_VALUES = (str, bytes, int, float, complex, bool)
