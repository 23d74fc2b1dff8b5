"""``torchlike.jit.trace`` / ``trace_module``: a module's forward or a function captured once on
example inputs (NOTE [ traced programs ] in _program.py), and torch's trace check."""
import warnings

import numpy as np

from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..nn.modules.module import Module
from . import _program
from ._modules import ScriptFunction, ScriptModule, TopLevelTracedModule, tensors_only


class TracerWarning(Warning):
    """Mirrors ``torch.jit.TracerWarning``: the trace may not be what the Python code does
    for other inputs."""

    @staticmethod
    def ignore_lib_warnings():
        """Ignore TracerWarnings attributed to torchlike's own modules (torchlike.jit's
        excepted), as torch's does for its library."""
        warnings.filterwarnings("ignore", category=TracerWarning, module="torchlike.(?!jit)")


TracerWarning.__module__ = "torchlike.jit"


class TracingCheckError(Exception):
    """Mirrors ``torch.jit.TracingCheckError``: the trace check failed to run."""

    def __init__(self, graph_diff_error, tensor_compare_error, extra_msg=None):
        self.message = "Tracing failed sanity checks!\n"
        if extra_msg is not None:
            self.message += extra_msg + "\n"
        super().__init__(self.message)


TracingCheckError.__module__ = "torchlike.jit"

_CONVERTING = {"bool()": "a Python boolean", "float()": "a Python float",
               "int()": "a Python integer", "index()": "a Python index",
               "complex()": "a Python complex"}


def _tracer_warning(e):
    """torch's TracerWarning for the value ``e.reason`` needed, then what torchlike does."""
    reason, frame = e.reason, e.frame
    line = frame.line if frame is not None else ""
    what = next((v for k, v in _CONVERTING.items() if str(reason).startswith(k)), None)
    if what is None:
        what = ("a NumPy array" if ".numpy(" in (line or "") else
                "a Python list" if ".tolist(" in (line or "") else "a Python number")
    message = (f"Converting a tensor to {what} might cause the trace to be incorrect. We can't "
               "record the data flow of Python values, so this value will be treated as a "
               "constant in the future. This means that the trace might not generalize to other "
               "inputs!  (torchlike: a program cannot read a tensor's value in Python, so "
               "this trace runs the Python code eagerly at every call, and cannot be saved.)")
    if frame is not None:
        warnings.warn_explicit(message, TracerWarning, frame.filename, frame.lineno)
    else:
        _program.warn(message, TracerWarning)


class TraceRunner:
    """A traced forward: the Program, or (when it could not be captured) the Python code run
    eagerly with the modes it was traced in."""

    def __init__(self, fn, args, kwargs, settings):
        self.fn, self.settings = fn, settings
        self.program, self.reason = None, None
        try:
            self.program = _program.Program(fn, args, kwargs, "tracing", settings)
        except _program.NotCapturable as e:
            if not e.graph_break:
                raise e.reason from None
            self.reason = e
            _tracer_warning(e)

    def __call__(self, args, kwargs):
        if self.program is None:
            with _program.modes(self.settings):
                return self.fn(*args, **kwargs)
        leaves, tree = _program.flatten(args, kwargs)
        if not self.program.matches(leaves, tree):
            cap = self.program.capture
            raise RuntimeError(
                f"{_program.qualname(self.fn)} was traced with inputs of structure "
                f"{cap.tree} (constants {cap.constants}); it was called with {tree} "
                f"(constants {[x for x in leaves if not _is_array(x)]}): trace it again for "
                "these inputs")
        return self.program(leaves)

    def for_copy(self, original):
        """The runner of ``original``, a deep copy of this runner's module: traced again on the
        same example inputs, with the same modes."""
        copies = dict(zip(map(id, self.fn.modules()), original.modules()))
        settings = [(copies[id(m)], t) for m, t in self.settings]
        if self.program is None:
            runner = TraceRunner.__new__(TraceRunner)
            runner.fn, runner.settings, runner.program, runner.reason = \
                original, settings, None, self.reason
            return runner
        cap = self.program.capture
        return TraceRunner(original, cap.args, cap.kwargs, settings)

    def exported_program(self):
        if self.program is None:
            raise RuntimeError(f"{_program.qualname(self.fn)} was not captured as a program "
                               f"({self.reason.reason}); it runs as Python")
        return self.program.exported()

    def text(self):
        return self.exported_program().mlir_module()


def _is_array(x):
    from ..export._capture import is_array
    return is_array(x)


def _as_args(example_inputs):
    if isinstance(example_inputs, (Tensor, dict)) or not isinstance(example_inputs,
                                                                    (tuple, list)):
        return (example_inputs,)
    return tuple(example_inputs)


def _check_pair(inputs):
    """(args, kwargs) of one of check_inputs: a Tensor, a tuple, a dict of keyword inputs, or
    trace_module's {"forward": inputs}."""
    if isinstance(inputs, dict) and "forward" in inputs:
        inputs = inputs["forward"]
    if isinstance(inputs, dict):
        return (), inputs
    return _as_args(inputs), {}


def _clone(tree):
    import jax
    return jax.tree_util.tree_map(
        lambda x: x.clone().detach().requires_grad_(x.requires_grad)
        if isinstance(x, Tensor) else x, tree, is_leaf=lambda x: isinstance(x, Tensor))


def _check(fn, traced, runner, check_inputs, tolerance):
    """torch's check_trace: the traced program and the Python code agree on each of
    ``check_inputs`` ((args, kwargs) pairs)."""
    warned = [False]
    for args, kwargs in check_inputs:
        try:
            ours = tensors_only(traced(*_clone(args), **_clone(kwargs)))
        except Exception as e:
            raise TracingCheckError(None, None, "encountered an exception while running the "
                                    f"trace with test inputs.\nException:\n\t{e}") from e
        with _program.modes(runner.settings), no_grad():
            theirs = tensors_only(fn(*_clone(args), **_clone(kwargs)))
        for i, (a, b) in enumerate(zip(ours, theirs)):
            error = _not_close(a, b, tolerance)
            if error is None:
                continue
            if not warned[0] and any(e.kind == "RNG_STATE" for e in runner.program.kept):
                warned[0] = True
                _program.warn("Trace had nondeterministic nodes. Did you forget call .eval() on "
                              "your model? Nodes:\n\t(random number generator state)\nThis may "
                              "cause errors in trace checking. To disable trace checking, pass "
                              "check_trace=False to torch.jit.trace()", TracerWarning)
            _program.warn(f"Output nr {i + 1}. of the traced function does not match the "
                          "corresponding output of the Python function. Detailed error:\n"
                          f"{error}", TracerWarning)


def _not_close(a, b, rtol):
    """torch.testing.assert_close's message for Tensors ``a`` and ``b`` (compared in float64,
    with torch's default absolute tolerance for their dtypes), or None when they are close."""
    atol = max(_ATOL.get(str(t.dtype).replace("torch.", ""), 0.0) for t in (a, b))
    x = np.asarray(a.detach().double().numpy())
    y = np.asarray(b.detach().double().numpy())
    if x.shape != y.shape:
        return f"The values for attribute 'shape' do not match: {a.shape} != {b.shape}."
    bad = ~np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=True)
    if not bad.any():
        return None
    diff = np.abs(x - y)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(diff == 0, 0.0, diff / np.abs(y))
    ia = np.unravel_index(np.argmax(np.where(bad, diff, -1)), x.shape)
    ir = np.unravel_index(np.argmax(np.where(bad, rel, -1)), x.shape)
    n = int(bad.sum())
    return ("Tensor-likes are not close!\n\n"
            f"Mismatched elements: {n} / {x.size} ({100 * n / x.size:.1f}%)\n"
            f"Greatest absolute difference: {diff[ia]} at index {tuple(map(int, ia))} "
            f"(up to {atol} allowed)\n"
            f"Greatest relative difference: {rel[ir]} at index {tuple(map(int, ir))} "
            f"(up to {rtol} allowed)")


# torch.testing's default absolute tolerances
_ATOL = {"float16": 1e-5, "bfloat16": 1e-5, "float32": 1e-5, "float64": 1e-7,
         "complex64": 1e-5, "complex128": 1e-7}


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-05, strict=True, _force_outplace=False, _module_class=None,
          _compilation_unit=None, example_kwarg_inputs=None, _store_inputs=True):
    """Mirrors ``torch.jit.trace``: ``func`` (a Module or a function) captured once on
    ``example_inputs`` as one program (NOTE [ traced programs ] in _program.py).

    Args:
        func: an ``nn.Module`` (its forward is traced) or a function of Tensors.
        example_inputs: a Tensor or a tuple of the example positional inputs.
        check_trace: rerun the traced program and the Python code on the example inputs (or
            ``check_inputs``) and warn (TracerWarning) where they differ, as torch does.
        check_inputs: a list of input tuples for that check.
        check_tolerance: its relative tolerance.
        example_kwarg_inputs: a dict of example keyword inputs (instead of, or with,
            ``example_inputs``).
        optimize, strict, _force_outplace, _module_class, _compilation_unit, _store_inputs:
            accepted (TorchScript's).

    Returns:
        For a Module, a ``TopLevelTracedModule`` that shares its parameters; for a function, a
        ``ScriptFunction``.  Calls run the program compiled (specialised per input shape),
        gradients flow to the parameters, ``.code`` shows the StableHLO and ``.save(path)``
        writes a file :func:`torchlike.jit.load` runs without the model's code.  A forward
        that reads a tensor's value in Python warns (TracerWarning) and runs eagerly instead.

    Example::

        >>> traced = torchlike.jit.trace(model.eval(), torchlike.randn(4, 8))
        >>> traced(torchlike.randn(16, 8)).shape
        torch.Size([16, 3])
        >>> traced.save("model.pt")
    """
    warnings.warn("`torch.jit.trace` is deprecated. Please switch to `torch.compile` or "
                  "`torch.export`.", DeprecationWarning)   # torch's line: hidden by default
    if isinstance(func, (ScriptModule, ScriptFunction)):
        warnings.warn("The input to trace is already a ScriptModule, tracing it is a no-op. "
                      "Returning the object as is.", stacklevel=2)
        return func
    if not callable(func):
        raise RuntimeError("Could not get name of python class object")
    if example_inputs is None and example_kwarg_inputs is None:
        raise RuntimeError("example_kwarg_inputs should be a dict")
    if example_kwarg_inputs is not None and not isinstance(example_kwarg_inputs, dict):
        raise RuntimeError("example_kwarg_inputs should be a dict")
    args = () if example_inputs is None else _as_args(example_inputs)
    kwargs = dict(example_kwarg_inputs or {})
    if isinstance(func, Module):
        settings = [(m, m.training) for m in func.modules()]
        runner = TraceRunner(func, args, kwargs, settings)
        traced = TopLevelTracedModule(func, runner)
    else:
        runner = TraceRunner(func, args, kwargs, ())
        traced = ScriptFunction(func, runner)
    if check_trace and runner.program is not None:
        checks = [(args, kwargs)] if check_inputs is None else \
            [_check_pair(c) for c in check_inputs]
        _check(func, traced, runner, checks, check_tolerance)
    return traced


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None,
                 check_tolerance=1e-05, strict=True, _force_outplace=False, _module_class=None,
                 _compilation_unit=None, example_inputs_is_kwarg=False, _store_inputs=True):
    """Mirrors ``torch.jit.trace_module``: ``inputs`` is ``{method name: example inputs}``;
    torchlike traces ``forward`` (the one method a traced module runs as a program), so only
    that key is accepted.  Returns a ``TopLevelTracedModule`` (see :func:`trace`)."""
    if not isinstance(mod, Module):
        raise AttributeError("expected torch.nn.Module as the first argument")
    if not isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    other = [k for k in inputs if k != "forward"]
    if other:
        raise RuntimeError(f"torchlike.jit.trace_module traces `forward` only; it cannot trace "
                           f"{other} (call those methods on the original module)")
    example = inputs.get("forward", ())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        if example_inputs_is_kwarg:
            return trace(mod, None, check_trace=check_trace, check_inputs=check_inputs,
                         check_tolerance=check_tolerance, example_kwarg_inputs=example)
        return trace(mod, example, check_trace=check_trace, check_inputs=check_inputs,
                     check_tolerance=check_tolerance)

