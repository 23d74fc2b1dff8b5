"""Mirrors ``torch.optim.optimizer``: the Optimizer base class and the global step hooks.

NOTE [ one update program per step ]
PyTorch keeps three copies of every algorithm (a loop over tensors, a ``foreach`` form and a fused
kernel).  Here an algorithm is one update rule for one parameter, ``_rule(p, g, state, h,
flags)``, written with jax.numpy; the base class maps it over every parameter of every group in
one ``jax.jit`` program, so a step is one call however many parameters there are, and XLA fuses
the arithmetic.  What the program sees:

- arrays: each parameter, its gradient and the Tensors of its state (step counters included);
- ``h``: the group's numeric hyper-parameters (the keys of ``defaults`` that are not flags),
  passed as traced scalars, so a scheduler changing ``lr`` or ``momentum`` reuses the program;
- ``flags``: the group's ``_static`` keys (booleans such as ``nesterov``) and, for each
  ``_switches`` key, whether it is nonzero (``weight_decay != 0`` decides whether decay is
  applied at all, as in PyTorch): these are baked into the program, and changing them compiles
  another.

The results are written back into the same Tensor objects (``Tensor._write``), so parameters and
state keep their identity: the user's references, ``state_dict()`` and a compiled step all see
the new values.  Complex parameters are updated as pairs of reals (PyTorch's view_as_real).
Where the Tensors alone hold the old arrays of the parameters and states (NOTE [ donated
buffers ] in _donate.py), the program takes their buffers and writes in place; where something
else holds one (a clone that shares an array, the copies a deepcopy made of a layer, until the
first step gives each its own), a program of its own that does not.  Both compile with XLA's
fusion emitters (NOTE [ quick compiles ] in _quick.py): the two compute the same bits (a run
resumed from a state_dict matches the uninterrupted one exactly), and the quick options' older
emitters copied donated buffers instead of writing in place (on the 2-core CPU, SGD with
momentum over the MLP 784-512-512-10: 268 us a step not donating, 441 us donating with the quick
options, 187 us with the fusion emitters; plain jax, minimum of 60 windows).
"""
import copy
import functools
import itertools
import warnings
from collections import OrderedDict, defaultdict

import jax
import jax.numpy as jnp
import numpy as np

from .. import _ahead, _lazy, _trace_context, _x64
from .._donate import copy_each, sole_owned
from .._quick import quick_jit
from .._tensor import ArrayImpl, Tensor
from ..autograd.grad_mode import enable_grad, no_grad
from ..autograd.graph import add_hook
from ..autograd.profiler import record_function

__all__ = ["Optimizer", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook",
           "required"]


class _RequiredParameter:
    """Marks a hyper-parameter that every parameter group must give (no default)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()

# group keys that never enter the update program
_NOT_HYPER = frozenset({"params", "param_names", "foreach", "fused", "differentiable",
                        "capturable"})

_global_step_hooks = {"pre": OrderedDict(), "post": OrderedDict()}


def register_optimizer_step_pre_hook(hook):
    """Mirrors ``torch.optim.optimizer.register_optimizer_step_pre_hook``: ``hook(optimizer,
    args, kwargs)`` runs before every optimizer's step and may return new ``(args, kwargs)``."""
    return add_hook(_global_step_hooks["pre"], hook)


def register_optimizer_step_post_hook(hook):
    """Mirrors ``torch.optim.optimizer.register_optimizer_step_post_hook``: ``hook(optimizer,
    args, kwargs)`` runs after every optimizer's step."""
    return add_hook(_global_step_hooks["post"], hook)


def _with_step_hooks(step):
    """Wrap an optimizer's ``step`` so that the global and per-optimizer hooks run around it."""

    @functools.wraps(step)
    def hooked_step(*args, **kwargs):
        self = args[0]
        # the range PyTorch's profiler shows (NOTE [ profiler hook ] in autograd/profiler.py)
        with record_function(f"Optimizer.step#{type(self).__name__}.step"):
            for hook in itertools.chain(_global_step_hooks["pre"].values(),
                                        self._hooks["step_pre"].values()):
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError(f"{step} must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {result}.")
                    args, kwargs = result
            out = step(*args, **kwargs)
            for hook in itertools.chain(self._hooks["step_post"].values(),
                                        _global_step_hooks["post"].values()):
                hook(self, args, kwargs)
            return out

    hooked_step._hooked = True
    return hooked_step


def _laid_out_like(param, state):
    """New state of a parameter laid out over several devices (a DTensor: NOTE [ DTensor as a
    global array ] in distributed/tensor/_api.py) takes its layout, as PyTorch's state of a
    DTensor is a DTensor: the parameter's sharding for state of its shape, whole on each of its
    devices for the rest (the step counter), so the update is one program over those devices."""
    arr = param._value()
    if not state or isinstance(arr, jax.core.Tracer):
        return state
    sharding = getattr(arr, "sharding", None)
    if not isinstance(sharding, jax.sharding.NamedSharding) or len(sharding.device_set) < 2:
        return state
    whole = jax.sharding.NamedSharding(sharding.mesh, jax.sharding.PartitionSpec())
    return {k: Tensor._wrap(jax.device_put(v._value(), sharding if v.shape == param.shape
                                           else whole))
            if isinstance(v, Tensor) and not isinstance(v._value(), jax.core.Tracer) else v
            for k, v in state.items()}


def _typename(obj):
    return obj.type() if isinstance(obj, Tensor) else type(obj).__name__


def _traced_value(v):
    """A hyper-parameter as the update program receives it: Tensors as their arrays."""
    if isinstance(v, Tensor):
        a = v._value()
        if v.device.type == "cpu" and not isinstance(a, jax.core.Tracer):
            a = np.asarray(a)   # a CPU tensor (lr=torch.tensor(0.01)) serves any device
        return a.reshape(()) if a.size == 1 else a  # PyTorch squeezes one-element hypers
    if isinstance(v, (tuple, list)):
        return tuple(_traced_value(x) for x in v)
    return v


class Optimizer:
    """Mirrors ``torch.optim.Optimizer``: parameter groups, per-parameter state, ``zero_grad``,
    ``step``, ``state_dict``/``load_state_dict`` in PyTorch's layout, and hooks.

    A subclass gives its defaults to ``__init__`` and writes one update rule (NOTE [ one update
    program per step ]):

    - ``_init_state(self, p, group)``: the state of a parameter at its first step, a dict of
      Tensors (default: empty);
    - ``_rule(p, g, state, h, flags)`` (a staticmethod, jax.numpy only): the new parameter and
      the new state dict, as arrays (``g`` is already negated when the group's ``maximize``
      is set);
    - ``_static`` / ``_switches``: the group keys baked into the program (see the note).

    Subclasses may instead override ``step`` entirely (LBFGS does); hooks still run around it.

    Args:
        params: an iterable of Tensors, of ``(name, Tensor)`` pairs, or of dicts (parameter
            groups, each with a ``'params'`` entry and optional per-group hyper-parameters).
        defaults: the default hyper-parameters of every group.
    """

    _static = ()
    _switches = ()
    _shared_before = False   # whether an update found arrays held elsewhere (see _donates)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_hooked", False):
            cls.step = _with_step_hooks(step)

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._hooks = {kind: OrderedDict() for kind in (
            "step_pre", "step_post", "state_dict_pre", "state_dict_post",
            "load_state_dict_pre", "load_state_dict_post")}
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {_typename(params)}")
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if not param_groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        if "_hooks" not in self.__dict__:
            self._hooks = {kind: OrderedDict() for kind in (
                "step_pre", "step_post", "state_dict_pre", "state_dict_post",
                "load_state_dict_pre", "load_state_dict_post")}

    def __repr__(self):
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    # --- groups ---------------------------------------------------------------------------------

    def add_param_group(self, param_group):
        """Mirrors ``Optimizer.add_param_group``: add a group (a dict with ``'params'``); keys it
        leaves out take the optimizer's defaults."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        params = [p[1] if isinstance(p, tuple) else p for p in params]
        param_group["params"] = params
        if names:
            if len(names) != len(params):
                raise ValueError("all optimizer params should be with/without names. "
                                 "Some param names are missing")
            param_group["param_names"] = names
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(p))
            if not self.defaults.get("differentiable", None) and not (p.is_leaf
                                                                     or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        if len({id(p) for p in params}) != len(params):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {'with' if names else 'without'} "
                                 f"names to the optimizer")
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        """Mirrors ``Optimizer.zero_grad``: drop every gradient (``set_to_none=True``) or zero
        it in place."""
        with record_function(f"Optimizer.zero_grad#{type(self).__name__}.zero_grad"):
            if not self._ahead_asked:
                self._compile_ahead()
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if set_to_none:
                        p.grad = None
                    else:
                        if p.grad.grad_fn is not None:
                            p.grad.detach_()
                        else:
                            p.grad.requires_grad_(False)
                        p.grad.zero_()

    # --- the update ---------------------------------------------------------------------------

    def step(self, closure=None):
        """Mirrors ``Optimizer.step``: one update of every parameter that has a gradient.

        Args:
            closure: optional; re-evaluates the model and returns the loss (run with grad
                enabled before the update).

        Returns:
            What ``closure`` returned, or None.
        """
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            self._update()
        return loss

    def _init_state(self, p, group):
        return {}

    @staticmethod
    def _rule(p, g, state, h, flags):
        raise NotImplementedError  # PyTorch's Optimizer.step is abstract too

    @_x64.scoped
    def _update(self):
        """Run ``_rule`` over every parameter with a gradient, in one program."""
        self._ahead_asked = True
        flags, args, tensors = self._operands()
        if not flags:
            return
        program = _program(type(self)._rule, flags, self._donates(args[0]))
        if _ahead.waiting:   # (the first step's program: _compile_ahead)
            _ahead.claim(program, args)
        # after a pending backward, one program with the forward and backward (NOTE
        # [ lazy segments ] in _lazy.py)
        results = _lazy.run_call(program, args)
        for (params, states), (new_params, new_states) in zip(tensors, results):
            for p, state, new_p, new_state in zip(params, states, new_params, new_states):
                p._write(new_p)
                for k, v in new_state.items():
                    if k in state:
                        state[k]._write(v)
                    else:
                        self.state[p][k] = Tensor._wrap(v)

    def _operands(self, ahead=False):
        """The update program's flags, its operands (written, read) and the Tensors it writes,
        [(params, states)], each by group: each parameter with a gradient, its state (made at
        its first step), the group's flags and hyper-parameters.  ``ahead``: as the first step
        will have them, before it (``_compile_ahead``): every parameter that requires grad, its
        gradient's array the parameter's own (one of the same shape, dtype and device), its
        state made and kept nowhere."""
        flags, written, read, tensors = [], [], [], []
        for group in self.param_groups:
            params = [p for p in group["params"] if (p.requires_grad if ahead else
                                                     p.grad is not None)]
            if not params:
                continue
            states = []
            for p in params:
                state = self.state.get(p)
                if not state:
                    state = _laid_out_like(p, self._init_state(p, group))
                    if state and not ahead:
                        self.state[p].update(state)
                states.append({k: v for k, v in state.items() if isinstance(v, Tensor)})
            flags.append(tuple((k, group[k]) for k in self._static) + tuple(
                (k, _nonzero(group[k])) for k in self._switches))
            hyper = {k: _traced_value(group[k]) for k in self.defaults
                     if k not in _NOT_HYPER and k not in self._static}
            written.append(([_lazy.read(p) for p in params],
                            [{k: _lazy.read(v) for k, v in s.items()} for s in states]))
            read.append(([_lazy.read(p if ahead else p.grad) for p in params], hyper))
            tensors.append((params, states))
        return tuple(flags), (written, read), tensors

    _ahead_asked = False   # whether the first step's program was handed over (or ran)

    @_x64.scoped
    def _compile_ahead(self):
        """Hand the program of the first ``step()`` to the worker thread that compiles
        backward programs (NOTE [ the first update compiled ahead ])."""
        self._ahead_asked = True
        if not _ahead.enabled or _lazy.enabled or _trace_context.active or \
                type(self).step is not Optimizer.step or type(self)._rule is Optimizer._rule:
            return
        if any(type(p._value()) is not ArrayImpl for group in self.param_groups
               for p in group["params"]):
            return   # (traced, meta or pending parameters)
        flags, args, _ = self._operands(ahead=True)
        if flags:
            _ahead.submit(_program(type(self)._rule, flags, not self._shared_before), args,
                          last=True)

    def _donates(self, written):
        """Whether the update program may take the old arrays of the parameters and states it
        writes, ``written`` (each group's list of parameters' arrays and list of states' dicts of
        arrays): concrete arrays their Tensors alone hold.  Where some are held elsewhere as
        well, the first time each is replaced in ``written`` by a copy and it may (a deep copy's
        arrays are shared until its first update), and from then on it may not (such sharing
        may last: a graph kept by retain_graph, a lazy segment's operands).  NOTE [ donated
        buffers ] in _donate.py."""
        held = [arrays for params, states in written for arrays in (params, *states)]
        values = [arrays.values() if isinstance(arrays, dict) else arrays for arrays in held]
        if any(type(a) is not ArrayImpl for arrays in values for a in arrays):
            return False
        if all(map(sole_owned, values)):
            return True
        if self._shared_before:
            return False
        self._shared_before = True
        for arrays in held:
            copy_each(arrays)
        return True

    # --- state_dict -----------------------------------------------------------------------------

    def state_dict(self):
        """Mirrors ``Optimizer.state_dict``: ``{'state': {index: {...}}, 'param_groups': [{...,
        'params': [indices]}]}``, parameters numbered in group order.  The state Tensors are the
        optimizer's own (not copies), as in PyTorch."""
        for hook in self._hooks["state_dict_pre"].values():
            hook(self)
        index = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {(index[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        state_dict = {"state": state, "param_groups": groups}
        for hook in self._hooks["state_dict_post"].values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict):
        """Mirrors ``Optimizer.load_state_dict``: take state and hyper-parameters from a
        ``state_dict()`` (of this optimizer, or of PyTorch's for the same parameters).  State
        Tensors take each parameter's floating dtype; ``step`` counters are kept as they are."""
        state_dict = state_dict.copy()
        for hook in self._hooks["load_state_dict_pre"].values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(itertools.chain.from_iterable(s["params"] for s in saved_groups),
                          itertools.chain.from_iterable(g["params"] for g in groups)))

        def cast(param, value, key=None):   # next to the parameter (NOTE in adam.scalar_state)
            if isinstance(value, Tensor):
                if key != "step" and param.is_floating_point():
                    return value.to(dtype=param.dtype, device=param.device)
                return value.to(device=param.device)
            if isinstance(value, dict):
                return {k: cast(param, v, key=k) for k, v in value.items()}
            if isinstance(value, list):
                return [cast(param, v) for v in value]
            return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                state[id_map[k]] = _laid_out_like(id_map[k], cast(id_map[k], v))
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        self.__setstate__({"state": state, "param_groups": [
            update_group(g, s) for g, s in zip(groups, saved_groups)]})
        for hook in self._hooks["load_state_dict_post"].values():
            hook(self)

    # --- hooks ----------------------------------------------------------------------------------

    def register_step_pre_hook(self, hook):
        """Mirrors ``Optimizer.register_step_pre_hook``: ``hook(optimizer, args, kwargs)`` runs
        before ``step`` and may return new ``(args, kwargs)``."""
        return add_hook(self._hooks["step_pre"], hook)

    def register_step_post_hook(self, hook):
        """Mirrors ``Optimizer.register_step_post_hook``: ``hook(optimizer, args, kwargs)``."""
        return add_hook(self._hooks["step_post"], hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """Mirrors ``Optimizer.register_state_dict_pre_hook``: ``hook(optimizer)``."""
        return add_hook(self._hooks["state_dict_pre"], hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """Mirrors ``Optimizer.register_state_dict_post_hook``: ``hook(optimizer, state_dict)``
        may return a new state_dict."""
        return add_hook(self._hooks["state_dict_post"], hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """Mirrors ``Optimizer.register_load_state_dict_pre_hook``: ``hook(optimizer,
        state_dict)`` may return a new state_dict to load."""
        return add_hook(self._hooks["load_state_dict_pre"], hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """Mirrors ``Optimizer.register_load_state_dict_post_hook``: ``hook(optimizer)``."""
        return add_hook(self._hooks["load_state_dict_post"], hook, prepend)


Optimizer.step = _with_step_hooks(Optimizer.step)


def check_fused(defaults):
    """PyTorch's checks of the ``fused`` flag (accepted: the update is always one program)."""
    if defaults.get("fused"):
        if defaults.get("differentiable"):
            raise RuntimeError("`fused` does not support `differentiable`")
        if defaults.get("foreach"):
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def _nonzero(v):
    if isinstance(v, Tensor):
        v = v._value()
    return bool(_trace_context.concrete(v) != 0)


def _as_real(x):
    return jnp.stack([x.real, x.imag], axis=-1) if jnp.iscomplexobj(x) else x


def _as_complex(x, like):
    return jax.lax.complex(x[..., 0], x[..., 1]) if jnp.iscomplexobj(like) else x


def _apply(updates, written, read):
    """The update program: each group's ``updates`` (its ``_update_one``) over every parameter
    of that group (see the note); ``written``: each group's parameters and states, ``read``:
    its gradients and hyper-parameters."""
    results = []
    for update, (params, states), (grads, hyper) in zip(updates, written, read):
        new_params, new_states = [], []
        for p, g, state in zip(params, grads, states):
            new_p, new_state = update(p, g, state, hyper)
            new_params.append(new_p)
            new_states.append(new_state)
        results.append((new_params, new_states))
    return results


def _update_one(rule, flags, p, g, state, hyper):
    """``rule`` for one parameter: its new value and state (complex ones as pairs of reals),
    traced with jax.numpy's own jitted functions run as plain Python (NOTE [ tracing the
    update program ])."""
    if flags.get("maximize"):   # every algorithm ascends by descending on -g
        g = -g
    with jax.disable_jit():
        new_p, new_state = rule(_as_real(p), _as_real(g),
                                {k: _as_real(v) for k, v in state.items()}, hyper, flags)
    # state the rule creates has the parameter's shape (and complex-ness)
    return _as_complex(new_p, p).astype(p.dtype), {
        k: _as_complex(v, state[k]).astype(state[k].dtype) if k in state else
        _as_complex(v, p) for k, v in new_state.items()}


# NOTE [ tracing the update program ]
# Tracing the update program was a third of an optimizer's first step: each jax.numpy call in a
# rule is a jitted function of jax's own, staged into the trace as a nested program and inlined,
# at some hundred microseconds each (Adam over scripts/bench_train.py's Transformer: 27
# parameters, 821 nested calls, 0.34-0.37 s of tracing before 0.6 s of compiling; 2-core CPU,
# jax 0.10.2).  Two things make it 0.05-0.09 s, the program unchanged (its optimized HLO, every
# algorithm of torch.optim checked, is the same instruction for instruction):
# - a rule runs under ``jax.disable_jit()`` while it is traced, so jax.numpy's functions emit
#   their primitives straight into the trace.  Rules hold no loops (a ``lax.scan`` would be
#   unrolled there) and no jitted functions of their own;
# - the rule for one parameter is a ``jax.jit(..., inline=True)``: traced once per shape and
#   dtype of its operands and inlined into the program for each parameter (a model's parameters
#   come in few shapes: the Transformer's 27 in 9), so a model of many layers alike traces each
#   kind once.
# The Transformer's Adam: its first ``step()`` 0.99, 1.01, 0.87 -> 0.83, 0.61, 0.66 s.

# NOTE [ the first update compiled ahead ]
# An optimizer's first ``step()`` compiles its update program on the step's thread (AdamW over
# examples/pytorch/transformer_lm.py's 28 parameters: 0.38-0.46 s of XLA's time, 0.5-0.7 s of
# the step; 2-core CPU, jax 0.10.2), when the worker that compiles backward programs ahead
# (NOTE [ backward programs compiled ahead ] in _ahead.py) has finished its jobs and a core is
# idle.  Everything that program is compiled for is known before the step: the parameters'
# shapes, dtypes and devices (their gradients have the same), the state ``_init_state`` will
# make, the groups' flags and hyper-parameters.  So the first ``zero_grad()`` (before a step
# has run) hands the program, for the operands the first step will gather (``_operands``, the
# state made and dropped, never kept: ``optimizer.state`` is empty until the step, as in
# PyTorch), to that worker, after the backward programs it has queued (``submit(..., last=
# True)``), and the step takes it as the backward's calls take theirs (``_ahead.claim``).  A
# parameter that then gets no gradient makes the step compile its own program, as before.  Not
# for an optimizer with a ``step`` of its own (LBFGS), in lazy mode, or while a step is traced.
# Measured from a fresh process to the end of the first step (six interleaved runs each,
# medians; on two cores the worker's compile mostly shares a core the step's thread and XLA's
# threads are using): transformer_lm 3.15 -> 3.06 s, char_lstm 2.07 -> 2.02 s, the update now
# compiled on the worker.

@functools.lru_cache(maxsize=None)
def _program(rule, flags, donate):
    """The update program; ``donate``: taking the buffers of what it writes (NOTE [ donated
    buffers ] in _donate.py), a program of its own, the same arithmetic."""
    updates = [jax.jit(functools.partial(_update_one, rule, dict(group_flags)), inline=True)
               for group_flags in flags]   # NOTE [ tracing the update program ]
    return quick_jit(functools.partial(_apply, updates), fusion=True,   # (the first NOTE)
                     donate_argnums=(0,) if donate else ())
