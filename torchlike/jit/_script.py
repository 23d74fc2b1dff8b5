"""``torchlike.jit.script``, ``freeze`` and ``optimize_for_inference``.

NOTE [ script as compile-where-it-can ]
TorchScript compiles Python source ahead of time.  torchlike has no such compiler, so
``script(obj)`` keeps the Python and compiles it lazily: decorating costs nothing (programs that
``@torch.jit.script`` functions at import time stay cheap), and the first call with a given input
structure, Python constants and training modes captures a program (NOTE [ traced programs ] in
_program.py) that later calls with that key run; each new shape is specialised by jit.  Unlike a
trace nothing is frozen: a new key captures the Python again, so control flow on Python values
and on sizes is followed.  ``is_scripting()`` is True while the program is captured.

A function the capture cannot turn into a program -- it branches on a tensor's value, calls
``.item()`` or ``print``, creates state lazily -- runs eagerly from then on, after ONE
UserWarning that names what failed (the line, where there is one).  If the eager call fails
too, its error is the user's and propagates without a warning.  Inside a program being traced
(torchlike.compile, another trace or script, to_jax) a scripted function runs as Python, so it
becomes part of that program.
"""
import warnings

import jax

from .. import _trace_context
from .._tensor import Tensor
from ..nn.modules.module import Module
from . import _program
from ._modules import RecursiveScriptModule, ScriptFunction, ScriptModule


def _traced(leaves):
    return _trace_context.active or _program.flags["tracing"] or _program.flags["scripting"] or \
        any(isinstance(x, Tensor) and isinstance(x._value(), jax.core.Tracer) for x in leaves)


class ScriptRunner:
    """A scripted forward: one Program per (input structure, constants, training modes), or the
    Python code once it could not be captured (NOTE [ script as compile-where-it-can ])."""

    def __init__(self, fn, settings=None):
        self.fn = fn
        self._settings = settings or (lambda: ())
        self.programs = {}
        self.last = None
        self.eager = None   # why it runs eagerly

    def _run_eagerly(self, args, kwargs, settings):
        with _program.modes(settings):
            return self.fn(*args, **kwargs)

    def __call__(self, args, kwargs):
        settings = tuple(self._settings())
        leaves, tree = _program.flatten(args, kwargs)
        if self.eager is not None or _traced(leaves):
            return self._run_eagerly(args, kwargs, settings)
        consts = tuple((type(x), x) for x in leaves if not _is_array(x))
        key = (tree, consts, tuple(t for _, t in settings))
        try:
            program = self.programs.get(key)
        except TypeError:   # an unhashable constant: this call runs as Python
            return self._run_eagerly(args, kwargs, settings)
        if program is None:
            try:
                program = _program.Program(self.fn, args, kwargs, "scripting", settings)
            except Exception as e:   # noqa: BLE001 -- see the note: eager decides
                out = self._run_eagerly(args, kwargs, settings)
                self._fall_back(e)
                return out
            self.programs[key] = program
        self.last = program
        return program(leaves)

    def _fall_back(self, e):
        name = _program.qualname(self.fn)
        if isinstance(e, _program.NotCapturable):
            frame = e.frame
            where = (f"line {frame.lineno} of {frame.filename} (`{frame.line}`) needs the "
                     "value of a traced tensor in Python" if frame is not None else
                     "it needs the value of a traced tensor in Python")
            why = f"{where} ({type(e.reason).__name__}: {str(e.reason).splitlines()[0]})"
        else:
            why = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        self.eager = why
        _program.warn(f"torch.jit.script: torchlike cannot compile {name}: {why}. It runs "
                      "eagerly (as Python) from now on.", UserWarning)

    def exported_program(self):
        if self.eager is not None:
            raise RuntimeError(f"{_program.qualname(self.fn)} runs as Python (not compiled: "
                               f"{self.eager})")
        if self.last is None:
            raise RuntimeError(f"{_program.qualname(self.fn)} has no program yet: torchlike "
                               "compiles a scripted function at its first call; call it once "
                               "with example inputs first")
        return self.last.exported()

    def text(self):
        return self.exported_program().mlir_module()


def _is_array(x):
    from ..export._capture import is_array
    return is_array(x)


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """Mirrors ``torch.jit.script``: ``obj`` compiled where it can be, run as Python where it
    cannot (NOTE [ script as compile-where-it-can ]).

    Args:
        obj: an ``nn.Module``, a function, or a class (returned as it is: its methods run as
            Python).
        optimize, _frames_up, _rcb, example_inputs: accepted (TorchScript's).

    Returns:
        For a Module, a ``RecursiveScriptModule`` sharing its parameters and buffers (so
        ``state_dict``, ``train()`` / ``eval()``, optimizers and gradients work as on the
        module); for a function, a ``ScriptFunction``.  Nothing is compiled until the first
        call.

    Example::

        >>> @torchlike.jit.script
        ... def gelu(x):
        ...     return x * 0.5 * (1.0 + torchlike.erf(x / 1.41421))
        >>> scripted = torchlike.jit.script(model)
        >>> scripted(x).sum().backward()          # gradients reach model's parameters
    """
    warnings.warn("`torch.jit.script` is deprecated. Please switch to `torch.compile` or "
                  "`torch.export`.", DeprecationWarning, stacklevel=2)
    if isinstance(obj, (ScriptModule, ScriptFunction)) or isinstance(obj, type):
        return obj
    if isinstance(obj, Module):
        return RecursiveScriptModule(obj)
    if not callable(obj):
        raise TypeError(f"{type(obj)} is a built-in class")
    return ScriptFunction(obj, ScriptRunner(obj))


def _frozen_from(mod, what):
    if not isinstance(mod, ScriptModule):
        raise RuntimeError(f"{what} expects a ScriptModule as input. Please use "
                           "torch.jit.script or torch.jit.trace to script your 'nn.Module'.")
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. "
                           "Please call .eval() on your module before freezing.")
    frozen = _Frozen(mod)
    return RecursiveScriptModule(frozen, name=getattr(mod, "original_name", None),
                                 runner=ScriptRunner(frozen))


class _Frozen(Module):
    """The module a frozen ScriptModule runs: ``mod``'s forward with its parameters and
    buffers turned into constants (torch.jit.freeze inlines them): no parameters of its own,
    and its outputs do not require grad."""

    def __init__(self, mod):
        super().__init__()
        object.__setattr__(self, "_mod", mod)
        object.__setattr__(self, "training", False)

    def forward(self, *args, **kwargs):
        from ..autograd.grad_mode import no_grad
        with no_grad():
            return self._mod(*args, **kwargs)


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """Mirrors ``torch.jit.freeze``: a ``RecursiveScriptModule`` that computes what ``mod`` (a
    traced or scripted module in eval mode) computes, with its parameters as constants (no
    ``parameters()``, outputs without gradient history).  ``preserved_attrs`` are still read
    from ``mod``; ``optimize_numerics`` is accepted (XLA optimises the program anyway)."""
    return _frozen_from(mod, "Freezing")


def optimize_for_inference(mod, other_methods=None):
    """Mirrors ``torch.jit.optimize_for_inference``: ``mod`` frozen (see :func:`freeze`), which
    XLA compiles for inference."""
    if isinstance(mod, RecursiveScriptModule) and isinstance(mod._original, _Frozen):
        return mod
    return _frozen_from(mod, "optimize_for_inference")
