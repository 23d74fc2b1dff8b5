"""torchlike.jit: mirrors the parts of ``torch.jit`` that eager programs use, where torchlike's
answer is the eager program itself.

NOTE [ jit in torchlike ]
TorchScript compiles a function or module to a graph that runs without Python.  torchlike has
no TorchScript; its compiler is ``torchlike.compile`` (a whole step as one XLA program) and its
serialized programs come from ``torchlike.export``.  What programs rely on from ``torch.jit``
in their first lines still holds:
- ``torch.jit.script(obj)`` (and ``@torch.jit.script``) returns ``obj`` itself, which computes
  what the scripted version computes; the decorators TorchScript reads (``ignore``, ``unused``,
  ``export``, ``interface``, ``script_if_tracing``) return what they decorate, and code inside a
  function can ask ``is_scripting()`` / ``is_tracing()`` (always False) and use ``annotate``,
  ``Final`` and ``Attribute`` as in eager PyTorch.  An old-style ``ScriptModule`` subclass with
  ``@script_method`` methods runs as the Module it is.
- ``trace``, ``trace_module``, ``save``, ``load`` and ``freeze`` need a TorchScript graph: they
  raise a RuntimeError that says what to use instead, until torchlike records traces.
"""
import typing

from .nn.modules.module import Module

__all__ = ["Attribute", "Final", "ScriptModule", "annotate", "export", "freeze", "ignore",
           "interface", "is_scripting", "is_tracing", "load", "save", "script",
           "script_if_tracing", "script_method", "trace", "trace_module", "unused"]

Final = typing.Final


class Attribute(typing.NamedTuple):
    """Mirrors ``torch.jit.Attribute``: a value with its TorchScript type; assigned on a
    ScriptModule, the module keeps the value."""
    value: typing.Any
    type: typing.Any


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """Mirrors ``torch.jit.script``: returns ``obj`` (a function, Module or class) itself,
    which computes what TorchScript's compiled version computes (NOTE [ jit in torchlike ])."""
    return obj


def unused(fn):
    """Mirrors ``torch.jit.unused``: returns ``fn`` (no TorchScript compiler reads the mark)."""
    return fn


def export(fn):
    """Mirrors ``torch.jit.export``: returns ``fn`` (no TorchScript compiler reads the mark)."""
    return fn


def interface(obj):
    """Mirrors ``torch.jit.interface``: returns the class it decorates."""
    return obj


def script_if_tracing(fn):
    """Mirrors ``torch.jit.script_if_tracing``: returns ``fn`` (nothing traces)."""
    return fn


def script_method(fn):
    """Mirrors ``torch.jit.script_method``: returns ``fn``, a method of a ScriptModule that runs
    as Python."""
    return fn


def ignore(drop=False, **kwargs):
    """Mirrors ``torch.jit.ignore``: ``@ignore`` and ``@ignore(drop=True)`` return the function
    they decorate."""
    if callable(drop):
        return drop
    return lambda fn: fn


def is_scripting():
    """Mirrors ``torch.jit.is_scripting``: False, code always runs as Python."""
    return False


def is_tracing():
    """Mirrors ``torch.jit.is_tracing``: False, nothing traces through torch.jit."""
    return False


def annotate(the_type, the_value):
    """Mirrors ``torch.jit.annotate``: ``the_value`` (the type is TorchScript's to read)."""
    return the_value


class ScriptModule(Module):
    """Mirrors ``torch.jit.ScriptModule`` as a base class: a Module whose ``@script_method``
    methods run as Python, and whose ``Attribute`` assignments keep their value."""

    def __setattr__(self, name, value):
        if isinstance(value, Attribute):
            value = value.value
        super().__setattr__(name, value)


_RUN_IT = ("call the function or module itself (eager), wrap a training step in "
           "torchlike.compile for one XLA program, or serialize a program with "
           "torchlike.export.export / export.save")


def _refuse(name, instead):
    raise RuntimeError(f"torch.jit.{name}: torchlike has no TorchScript; {instead} (NOTE "
                       "[ jit in torchlike ])")


def trace(func, example_inputs=None, *args, **kwargs):
    """Mirrors ``torch.jit.trace``'s name; raises a RuntimeError (NOTE [ jit in torchlike ])."""
    _refuse("trace", _RUN_IT)


def trace_module(mod, inputs, *args, **kwargs):
    """Mirrors ``torch.jit.trace_module``'s name; raises a RuntimeError (NOTE
    [ jit in torchlike ])."""
    _refuse("trace_module", _RUN_IT)


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """Mirrors ``torch.jit.freeze``'s name; raises a RuntimeError (NOTE [ jit in torchlike ])."""
    _refuse("freeze", _RUN_IT)


def save(m, f, _extra_files=None):
    """Mirrors ``torch.jit.save``'s name; raises a RuntimeError (NOTE [ jit in torchlike ])."""
    _refuse("save", "save the weights with torchlike.save(module.state_dict(), f), or a "
                    "program with torchlike.export.save")


def load(f, map_location=None, _extra_files=None):
    """Mirrors ``torch.jit.load``'s name; raises a RuntimeError (NOTE [ jit in torchlike ])."""
    _refuse("load", "load weights with torchlike.load, or a program saved by "
                    "torchlike.export.save with torchlike.export.load")
