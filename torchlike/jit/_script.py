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
becomes part of that program.  A call without tensor arguments (a helper over ints, lists or
strings, common in TorchScript code) has nothing to compile: it runs as Python, silently.
"""
import warnings

from ..nn.modules.module import Module
from ._modules import RecursiveScriptModule, ScriptFunction, ScriptModule
from ._program import ScriptRunner


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
                  "`torch.export`.", DeprecationWarning)   # torch's line: hidden by default
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
                                 runner=_FrozenRunner(frozen))


class _FrozenRunner:
    """Runs a frozen module: ``mod``'s own (compiled) program under no_grad."""

    def __init__(self, frozen):
        self.frozen = frozen

    def __call__(self, args, kwargs):
        return self.frozen(*args, **kwargs)

    def for_copy(self, original):
        return _FrozenRunner(original)

    def exported_program(self):
        return self.frozen._mod._runner.exported_program()

    def text(self):
        return self.exported_program().mlir_module()


class _Frozen(Module):
    """The module a frozen ScriptModule runs: ``mod``'s forward with its parameters and
    buffers as constants (torch.jit.freeze inlines them): no parameters of its own, outputs
    that do not require grad; as torch's constants share the weights' storage, an in-place
    change of ``mod``'s weights shows."""

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
