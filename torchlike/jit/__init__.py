"""torchlike.jit: mirrors ``torch.jit`` over torchlike's programs -- what TorchScript's trace,
script, save and load give a PyTorch program, built on torchlike.export's capture and jax.jit.

NOTE [ jit in torchlike ]
TorchScript compiles a function or module to a graph that runs without Python.  torchlike has no
TorchScript; its programs are jax programs (``torchlike.compile``, ``torchlike.export``):
- ``trace(fn_or_module, example_inputs)`` captures the forward once with torchlike.export's
  capture and returns a ``TopLevelTracedModule`` / ``ScriptFunction`` whose calls run it as one
  compiled op, with the module's live parameters and gradients through it (NOTE [ traced
  programs ] in _program.py, NOTE [ jit modules mirror the original ] in _modules.py);
- ``script(obj)`` compiles lazily, at the first call per input structure, and runs eagerly
  with one warning where it cannot (NOTE [ script as compile-where-it-can ] in _script.py);
- ``save`` / ``load`` write and read torchlike.export's StableHLO file (NOTE [ jit files ] in
  _serialization.py);
- the decorators TorchScript reads (``ignore``, ``unused``, ``export``, ``interface``,
  ``script_if_tracing``) return what they decorate, ``annotate``, ``Final`` and ``Attribute``
  are PyTorch's eager meanings (so is ``isinstance``, checking typed containers), ``fork``
  runs its function at once and returns a completed ``Future`` (PyTorch's eager fallback), and
  ``is_tracing()`` / ``is_scripting()`` are True while torchlike captures a traced / scripted
  program.  An old-style ``ScriptModule`` subclass with ``@script_method`` methods runs as the
  Module it is.
"""
import builtins
import contextlib
import types
import typing
import warnings

from . import _program
from ._modules import (Attribute as Attribute, RecursiveScriptModule as RecursiveScriptModule,
                       ScriptFunction as ScriptFunction, ScriptModule as ScriptModule,
                       TopLevelTracedModule as TopLevelTracedModule,
                       TracedModule as TracedModule)
from ._script import (freeze as freeze, optimize_for_inference as optimize_for_inference,
                      script as script)
from ._serialization import load as load, save as save
from ._trace import (TracerWarning as TracerWarning, TracingCheckError as TracingCheckError,
                     trace as trace, trace_module as trace_module)

__all__ = ["Attribute", "Error", "Final", "Future", "RecursiveScriptModule", "ScriptFunction",
           "ScriptModule", "TopLevelTracedModule", "TracedModule", "TracerWarning",
           "TracingCheckError", "annotate", "export", "fork", "freeze", "ignore", "interface",
           "is_scripting", "is_tracing", "isinstance", "load", "optimize_for_inference", "save",
           "script", "script_if_tracing", "script_method", "trace", "trace_module", "unused",
           "wait",
           "enable_onednn_fusion", "fuser", "onednn_fusion_enabled", "optimized_execution",
           "set_fusion_strategy"]

Final = typing.Final


def unused(fn):
    """Mirrors ``torch.jit.unused``: returns ``fn`` (it runs as Python, as in eager PyTorch)."""
    return fn


def export(fn):
    """Mirrors ``torch.jit.export``: returns ``fn``, a method callable on the scripted module
    (as Python)."""
    return fn


def interface(obj):
    """Mirrors ``torch.jit.interface``: returns the class it decorates."""
    return obj


def script_if_tracing(fn):
    """Mirrors ``torch.jit.script_if_tracing``: returns ``fn``, which a trace captures as it
    captures any Python."""
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
    """Mirrors ``torch.jit.is_scripting``: True while torchlike captures a scripted program
    (NOTE [ script as compile-where-it-can ]), False when code runs as Python.

    Example::

        >>> if not torchlike.jit.is_scripting():
        ...     print("eager")
    """
    return _program.flags["scripting"] > 0


def is_tracing():
    """Mirrors ``torch.jit.is_tracing``: True while ``torchlike.jit.trace`` captures a program
    (the forward runs with traced values), False otherwise."""
    return _program.flags["tracing"] > 0


def annotate(the_type, the_value):
    """Mirrors ``torch.jit.annotate``: ``the_value`` (the type is TorchScript's to read)."""
    return the_value


_BARE = {dict: "dict", list: "list", tuple: "tuple", typing.Dict: "Dict", typing.List: "List",
         typing.Optional: "Optional", typing.Tuple: "Tuple"}


def _bare_check(target_type):
    name = _BARE.get(target_type) if builtins.isinstance(target_type, typing.Hashable) else None
    if name is None:
        return
    if name.endswith("ict"):
        raise RuntimeError(f"Attempted to use {name} without contained types. Please add "
                           f"contained type, e.g. {name}[int, int]")
    raise RuntimeError(f"Attempted to use {name} without a contained type. Please add a "
                       f"contained type, e.g. {name}[int]")


def _element_is(value, t):
    return _container_is(value, t) if typing.get_origin(t) else builtins.isinstance(value, t)


def _container_is(obj, target_type):
    origin, params = typing.get_origin(target_type), typing.get_args(target_type)
    _bare_check(target_type)
    if origin in (list, dict, tuple):
        if obj == [] or obj == {} or obj == ():
            warnings.warn("The inner type of a container is lost when calling "
                          "torch.jit.isinstance in eager mode. For example, List[int] would "
                          "become list and therefore falsely return True for List[float] or "
                          "List[str].", stacklevel=3)
        if not builtins.isinstance(obj, origin):
            return False
        if origin is list:
            return all(_element_is(v, params[0]) for v in obj)
        if origin is dict:
            return all(builtins.isinstance(k, params[0]) and _element_is(v, params[1])
                       for k, v in obj.items())
        return len(obj) == len(params) and all(map(_element_is, obj, params))
    if origin is typing.Union or origin is types.UnionType:   # Optional too
        if obj is None:
            return True
        for t in params:   # as torch's: the first container type among them decides
            if typing.get_origin(t):
                return _container_is(obj, t)
            if builtins.isinstance(obj, t):
                return True
    return False


def isinstance(obj, target_type):
    """Mirrors ``torch.jit.isinstance``: whether ``obj`` is of ``target_type``, a type, a typed
    container (``List[int]``, ``Dict[str, Tensor]``, ``Tuple[int, str]``, ``Optional[...]``,
    nested) checked element by element, or a tuple of those (any one matches).  An empty
    container matches any element type (with PyTorch's warning).

    Example::

        >>> torchlike.jit.isinstance([1, 2], typing.List[int])
        True
    """
    if builtins.isinstance(target_type, typing.Container):
        if not builtins.isinstance(target_type, tuple):
            raise RuntimeError("The second argument to `torch.jit.isinstance` must be a type or a "
                               "tuple of types")
        return any(isinstance(obj, t) for t in target_type)
    if typing.get_origin(target_type):
        return _container_is(obj, target_type)
    _bare_check(target_type)
    return builtins.isinstance(obj, target_type)


class Future:
    """Mirrors ``torch.jit.Future`` (``torch.futures.Future``) as ``fork`` returns it in eager
    PyTorch: a result that is already there (or the error that computing it raised)."""

    def __init__(self, *, devices=None):
        self._done, self._value, self._error, self._callbacks = False, None, None, []

    def done(self):
        """Whether the result (or an error) is set."""
        return self._done

    def wait(self):
        """The result; raises the error it was completed with."""
        if not self._done:
            raise RuntimeError("torchlike.jit.Future.wait: the future has no result yet (set "
                               "one with set_result); nothing runs in the background")
        if self._error is not None:
            raise self._error
        return self._value

    value = wait

    def set_result(self, result):
        if self._done:
            raise RuntimeError("Future can only be marked completed once.")
        self._done, self._value = True, result
        self._run_callbacks()

    def set_exception(self, result):
        if self._done:
            raise RuntimeError("Future can only be marked completed once.")
        self._done, self._error = True, result
        self._run_callbacks()

    def then(self, callback):
        """A Future of ``callback(self)``, run when this one completes."""
        out = Future()

        def run(fut):
            try:
                out.set_result(callback(fut))
            except Exception as e:   # noqa: BLE001 -- the new future carries it
                out.set_exception(e)
        self.add_done_callback(run)
        return out

    def add_done_callback(self, callback):
        if self._done:
            callback(self)
        else:
            self._callbacks.append(callback)

    def _run_callbacks(self):
        callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb(self)


def fork(func, *args, **kwargs):
    """Mirrors ``torch.jit.fork`` in eager PyTorch: runs ``func(*args, **kwargs)`` now and
    returns a completed :class:`Future` of its result (an error ``func`` raises propagates from
    ``fork``, as there).

    Example::

        >>> fut = torchlike.jit.fork(torchlike.add, x, 1)
        >>> torchlike.jit.wait(fut)
    """
    fut = Future()
    fut.set_result(func(*args, **kwargs))
    return fut


def wait(future):
    """Mirrors ``torch.jit.wait``: the result of a :class:`Future` from :func:`fork`."""
    return future.wait()


class Error(Exception):
    """Mirrors ``torch.jit.Error``: the error TorchScript code raises (torchlike's programs
    raise the Python code's own errors)."""


Error.__module__ = "torchlike.jit"


# --- TorchScript's fusion switches ----------------------------------------------------------------
# XLA decides what to fuse in every torchlike program, so these settings are kept (and returned)
# as torch keeps them, and change nothing that runs.

_fusion = {"strategy": [("STATIC", 2), ("DYNAMIC", 10)], "onednn": False}
_FUSERS = ("fuser0", "fuser1", "fuser2", "fuser3", "none")


def set_fusion_strategy(strategy):
    """Mirrors ``torch.jit.set_fusion_strategy``: records ``strategy`` (a list of ("STATIC" or
    "DYNAMIC", depth)) and returns the previous one; XLA fuses torchlike's programs itself."""
    for kind, _ in strategy:
        if kind not in ("STATIC", "DYNAMIC"):
            raise ValueError(f"FusionBehavior only supported 'STATIC' or 'DYNAMIC', got: {kind}")
    old, _fusion["strategy"] = _fusion["strategy"], list(strategy)
    return old


def enable_onednn_fusion(enabled):
    """Mirrors ``torch.jit.enable_onednn_fusion``: records the switch (XLA fuses)."""
    _fusion["onednn"] = bool(enabled)


def onednn_fusion_enabled():
    """Mirrors ``torch.jit.onednn_fusion_enabled``: the switch as last set."""
    return _fusion["onednn"]


@contextlib.contextmanager
def optimized_execution(should_optimize):
    """Mirrors ``torch.jit.optimized_execution``: a context manager (torchlike's programs are
    always XLA-optimised)."""
    yield


@contextlib.contextmanager
def fuser(name):
    """Mirrors ``torch.jit.fuser``: a context manager naming TorchScript's fuser (``"fuser0"``
    ... ``"fuser3"``, ``"none"``); XLA fuses torchlike's programs itself."""
    if name not in _FUSERS:
        raise Exception(f"unrecognized fuser option (name: {name})")   # noqa: TRY002 -- torch's
    yield
