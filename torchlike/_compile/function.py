"""``torchlike.compile`` itself: the callable it returns, which finds a call's state, picks or
traces its program and runs it (NOTE [ whole-step compile ] in __init__.py), and
``OptimizedModule`` for a compiled Module.
"""
import functools
import sys
import warnings
import weakref

import jax

from .. import _trace_context, _x64, compiler
from ..autograd.grad_mode import _state as _grad_state
from ..nn.modules.module import Module
from . import walk
from .guards import Replay, guard_key
from .program import Call, Compiled, Retrace, input_values, program_text
from .trace import (Plan, binds_hold, is_graph_break, pure_step, qualname, step_devices,
                    unsupported)
from .walk import is_number


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
        self._last = None   # a Replay of the last call
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
                        out = last.call(last.hypers(), sealed=True)
                    except Retrace:   # new shapes or dtypes: find the program as below
                        pass
                    else:
                        compiler.counters["calls"] += 1
                        return out
            self._last = None
            seen = Replay.snapshot()
            state = walk.find_state(self._fn, args, kwargs)
            key = guard_key(state)
            program = self._programs.get(key)
            if program is not None and program.plan.bind and not binds_hold(program.plan, state):
                program = None   # the step's created state now lives elsewhere: trace it there
            if program is None:
                program = self._compile(state, args, kwargs, key)
                if program is None:   # fell back to eager
                    compiler.counters["eager_calls"] += 1
                    return self._fn(*args, **kwargs)
            compiler.counters["calls"] += 1
            call = Call(program, state)
            out = call()
            if self._programs.get(key) is program:
                self._last = Replay(seen, call)
            return out

    def program_text(self):
        """torchlike's own (no torch counterpart): the optimized HLO text of the program the
        last compiled call ran, e.g. to read the collectives of a distributed step; None before
        a compiled call."""
        program = self._last.program if self._last is not None else None
        if program is None and self._programs:
            program = list(self._programs.values())[-1]
        if program is None:
            return None
        with _x64.on():   # as the program was traced
            return program_text(program)

    def _compile(self, state, args, kwargs, key):
        plan = Plan()
        inputs = input_values(state)
        devices = step_devices(inputs[0])
        try:
            program = pure_step(self._fn, args, kwargs, state, plan, devices,
                                checks=compiler.config.index_checks)
            jaxpr, shapes = jax.make_jaxpr(program, axis_env=_spmd_axes(),
                                           return_shape=True)(*inputs)
        except Exception as e:
            if not is_graph_break(e):
                raise
            error = unsupported(
                e, f"torchlike.compile cannot make {qualname(self._fn)} one program",
                "A compiled step cannot branch on tensor values or read them on the host: use "
                "torchlike.where or masks instead of `if` on a tensor, and move .item(), "
                ".tolist(), .numpy(), print() and nonzero() out of the compiled function; or "
                "pass fullgraph=False to run this step eagerly.")
            if self._fullgraph:
                raise error from None
            return self._fall_back(f"{error}\nRunning it eagerly from now on.")
        if plan.returns_graph and not plan.backward_ran:
            # a loss for the caller to differentiate: the program's outputs have no history
            name = qualname(self._fn)
            return self._fall_back(
                f"torchlike.compile: {name} returns tensors that require grad without running "
                "backward itself; compiled outputs carry no autograd history, so it runs "
                "eagerly. Compile the whole training step (forward, backward and the optimizer "
                "step) instead.")
        numbers = [x for x in plan.out_static if is_number(x)]
        if numbers:
            name = qualname(self._fn)
            warnings.warn(f"torchlike.compile: {name} returns Python numbers {numbers}: they "
                          "are fixed when the step is traced (return Tensors to get every "
                          "call's values)", UserWarning, stacklevel=3)
        program = Compiled(jaxpr, shapes, plan, state, devices[-1])
        compiler.counters["compiles"] += 1
        n = len(set(map(id, self._programs.values()))) + 1   # a program can be filed twice
        name = qualname(self._fn)
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


def _spmd_axes():
    """The named axis a step's collectives run over, bound while it is traced (NOTE
    [ collectives in a compiled step ] in distributed/distributed_c10d.py); none where this
    process has not imported torchlike.distributed, which then has no process group."""
    c10d = sys.modules.get("torchlike.distributed.distributed_c10d")
    return c10d.spmd_axes() if c10d is not None else None


_all_compiled = weakref.WeakSet()
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
