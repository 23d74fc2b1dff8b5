"""One captured forward of ``torchlike.jit``: a module's forward or a function, captured once with
torchlike.export's capture and run as one compiled, differentiable op.

NOTE [ traced programs ]
``Program(fn, args, kwargs)`` builds ``export._capture.Capture`` on the example inputs and
traces it once (``Capture.trace``: which parameters, buffers, constants and generator states the
forward reads and writes).  A call runs ``Capture.pure`` -- the forward as a pure function of
those named arrays and the inputs -- as ONE torchlike op (``func._bridge.bridge_op``): the
forward is a cached ``jax.jit`` of it, and when an input or a parameter requires grad the op
records one node whose backward is ``jax.vjp`` of the same function.  So:
- the module's *live* Tensors are read at every call (a parameter an optimizer updated is seen
  by the next call, as torch's traced module shares its parameters with the original), and
  gradients reach them through the program's output (the node is ``FromJaxBackward``; torch
  shows the last traced op's node instead);
- what the forward writes (a BatchNorm's running statistics in train mode, the generator state
  dropout draws from) is written back into the same Tensors after the call;
- other input shapes: jit specialises the program per shape and dtype, as the eager op cache
  does, so a new batch size traces the Python forward again at that shape (torch's trace
  generalises one graph instead).  Python control flow is still frozen where it matters: while
  that happens the modules' ``training`` flags are those the program was captured with, and a
  branch on a tensor's *value* cannot be traced at all (see below).  Sizes read in Python
  (``x.size(0)``) follow the new shape, where torch's graph may have baked the example's.
- ``is_tracing()`` (``is_scripting()`` for a scripted program) is True while the Python forward
  runs inside a capture, as in torch.

A forward that needs a tensor's value in Python (``if x.sum() > 0:``, ``float(x)``, ``.item()``)
cannot be one program.  torch's tracer bakes the example's value in (a TracerWarning says so);
torchlike's capture has no concrete values, so such a forward raises ``NotCapturable`` here and
its caller runs it eagerly instead (jit.trace with torch's TracerWarning, jit.script with one
UserWarning naming the line).
"""
import contextlib
import os
import sys
import warnings

import jax
import jax.numpy as jnp

from .. import _compile, _trace_context, _x64
from .._compile.trace import _PACKAGE, _user_frame
from .._tensor import Tensor
from ..compiler import Unsupported
from ..export import _capture as cap
from ..func._bridge import bridge_op
from ..nn.modules.module import Module

flags = {"tracing": 0, "scripting": 0}


@contextlib.contextmanager
def flag(kind):
    """``is_tracing()`` / ``is_scripting()`` True inside."""
    flags[kind] += 1
    try:
        yield
    finally:
        flags[kind] -= 1


@contextlib.contextmanager
def modes(settings):
    """Each module of ``settings`` ((module, training) pairs) in that mode inside."""
    old = [(m, m.training) for m, _ in settings]
    try:
        for m, t in settings:
            object.__setattr__(m, "training", t)
        yield
    finally:
        for m, t in old:
            object.__setattr__(m, "training", t)


class NotCapturable(Exception):
    """The forward cannot be one program; ``reason`` is the error that says why, ``frame``
    (a traceback.FrameSummary or None) the user's line that needed a traced value;
    ``graph_break``: whether that is why (else the forward creates state or returns
    non-Tensors)."""

    def __init__(self, reason, frame=None, graph_break=True):
        super().__init__(str(reason))
        self.reason, self.frame, self.graph_break = reason, frame, graph_break


def warn(message, category):
    """``warnings.warn`` at the innermost calling line outside torchlike (the user's)."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame = frame.f_back
    if frame is None:
        warnings.warn(message, category, stacklevel=2)
        return
    warnings.warn_explicit(message, category, frame.f_code.co_filename, frame.f_lineno,
                           module=frame.f_globals.get("__name__"),
                           registry=frame.f_globals.setdefault("__warningregistry__", {}))


def qualname(fn):
    return type(fn).__name__ if isinstance(fn, Module) else cap._qualname(fn)


class Program:
    """``fn``'s forward captured on ``(args, kwargs)`` (NOTE [ traced programs ]).

    Args:
        fn: a Module or a function.
        args, kwargs: the example inputs; their Tensors are the program's inputs, other values
            are part of the program (a call must pass the same).
        kind: "tracing" or "scripting" (which of is_tracing / is_scripting is True inside).
        settings: (module, training) pairs the forward is captured and re-specialised with.
    """

    def __init__(self, fn, args, kwargs, kind, settings=()):
        self.fn, self.kind, self.settings = fn, kind, tuple(settings)
        try:
            with _x64.on(), flag(kind), modes(self.settings):
                self.capture = cap.Capture(fn, args, kwargs, with_grads=False,
                                           grad_mode=False)
                self.result = self.capture.trace()
        except Unsupported as e:   # a traced value needed in Python: the line that did
            inner = e.__context__ if e.__context__ is not None else e
            raise NotCapturable(inner, _user_frame(inner.__traceback__)) from e
        plan = self.result.plan
        if plan.created or plan.deferred:
            raise NotCapturable(RuntimeError(
                f"{qualname(fn)} creates state when it runs (a lazily initialized module, or "
                "an LR scheduler step); call it once before tracing it"), graph_break=False)
        if any(s is not _compile.TENSOR for s in plan.out_static):
            raise NotCapturable(RuntimeError(
                "Only tensors, lists, tuples of tensors, or dictionary of tensors can be output "
                "from traced functions"), graph_break=False)
        self.kept = self.capture.keep(self.result)
        self.op = bridge_op(self._pure, x64=True)
        self._exported = None

    # the call
    def _pure(self, values, inputs):
        it = iter(inputs)
        leaves = [next(it) if is_input else None for is_input in self.capture.leaf_is_input]
        args, kwargs = jax.tree_util.tree_unflatten(self.capture.tree, leaves)
        with flag(self.kind), modes(self.settings):
            return self.capture.pure(values, args, kwargs)

    def matches(self, leaves, tree):
        """Whether a call's flattened inputs have the example's structure and constants."""
        if tree != self.capture.tree:
            return False
        consts = iter(self.capture.constants)
        for x, is_input in zip(leaves, self.capture.leaf_is_input):
            if cap.is_array(x) != is_input:
                return False
            if not is_input:
                c = next(consts)
                if type(x) is not type(c) or not _same(x, c):
                    return False
        return True

    def _live(self, entry):
        kind, i = entry.where[0], entry.where[1]
        if kind == "tensor":
            return self.capture.state.tensors[i]
        return self.capture.state.generators[i]._state   # "rng": forward has no grads/hypers

    def __call__(self, leaves):
        inputs = [x if isinstance(x, Tensor) else Tensor._wrap(jnp.asarray(x))
                  for x in leaves if cap.is_array(x)]
        values = {}
        for e in self.kept:
            t = self._live(e)
            # what needs no gradient enters as a fresh Tensor: the op's node must not save
            # (and version-check) a buffer the program itself writes after the call
            values[e.name] = t if t.requires_grad else Tensor._wrap(t._value())
        outputs, updates = self.op(values, inputs)
        for e in self.kept:
            if e.name in updates:
                arr = updates[e.name]._value()
                if e.where[0] == "tensor":
                    self.capture.state.tensors[e.where[1]]._write(arr)
                else:
                    gen = self.capture.state.generators[e.where[1]]
                    gen._state._write(arr)
                    gen._reload()
        return outputs

    # the serialized program
    def exported(self):
        """The ExportedProgram of this capture, built once: dimension 0 of every input one
        symbolic ``batch`` dimension when the inputs share that size and the program lowers so
        (NOTE [ symbolic batch ] in export/_lower.py), else static shapes."""
        if self._exported is None:
            from .. import export
            from ..export import _from_capture
            inputs = self.capture.inputs
            sizes = {t.shape[0] for t in inputs if t.ndim}
            batch = [{0: export.Dim("batch")} if t.ndim else {} for t in inputs]
            with _x64.on(), flag(self.kind), modes(self.settings):
                if len(sizes) == 1 and all(t.ndim for t in inputs):
                    try:
                        self._exported = _from_capture(self.capture, self.result, batch, None)
                    except RuntimeError:
                        self._exported = None
                if self._exported is None:
                    self._exported = _from_capture(self.capture, self.result,
                                                   [{} for _ in inputs], None)
        return self._exported


def _same(a, b):
    try:
        return bool(a == b)
    except Exception:   # noqa: BLE001 -- values that do not compare: only identity counts
        return a is b


def flatten(args, kwargs):
    return cap.flatten_inputs(args, kwargs)


def _traced(leaves):
    return _trace_context.active or flags["tracing"] or flags["scripting"] or \
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

    def for_copy(self, original):
        """None: a copy of a scripted module scripts its copied original afresh."""
        return None

    def _run_eagerly(self, args, kwargs, settings):
        with modes(settings):
            return self.fn(*args, **kwargs)

    def __call__(self, args, kwargs):
        settings = tuple(self._settings())
        leaves, tree = flatten(args, kwargs)
        if self.eager is not None or _traced(leaves) or not any(map(cap.is_array, leaves)):
            return self._run_eagerly(args, kwargs, settings)   # (no tensor: nothing to compile)
        consts = tuple((type(x), x) for x in leaves if not cap.is_array(x))
        key = (tree, consts, tuple(t for _, t in settings))
        try:
            program = self.programs.get(key)
        except TypeError:   # an unhashable constant: this call runs as Python
            return self._run_eagerly(args, kwargs, settings)
        if program is None:
            try:
                program = Program(self.fn, args, kwargs, "scripting", settings)
            except Exception as e:   # noqa: BLE001 -- see the note: eager decides
                out = self._run_eagerly(args, kwargs, settings)
                self._fall_back(e)
                return out
            self.programs[key] = program
        self.last = program
        return program(leaves)

    def _fall_back(self, e):
        reason = e.reason if isinstance(e, NotCapturable) else e
        why = f"{type(reason).__name__}: {(str(reason) or ' ').splitlines()[0]}"
        if isinstance(e, NotCapturable) and e.graph_break:
            frame = e.frame
            where = (f"line {frame.lineno} of {frame.filename} (`{frame.line}`)"
                     if frame is not None else "a line of it")
            why = f"{where} needs the value of a traced tensor in Python ({why})"
        self.eager = why
        warn(f"torch.jit.script: torchlike cannot compile {qualname(self.fn)}: {why}. It runs "
             "eagerly (as Python) from now on.", UserWarning)

    def exported_program(self):
        if self.eager is not None:
            raise RuntimeError(f"{qualname(self.fn)} runs as Python (not compiled: "
                               f"{self.eager})")
        if self.last is None:
            raise RuntimeError(f"{qualname(self.fn)} has no program yet: torchlike "
                               "compiles a scripted function at its first call; call it once "
                               "with example inputs first")
        return self.last.exported()

    def text(self):
        return self.exported_program().mlir_module()
