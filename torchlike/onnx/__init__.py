"""torchlike.onnx: mirrors ``torch.onnx`` -- ``export`` writes a real ONNX model (built with the
``onnx`` package, the optional extra ``torchlike[onnx]``) from the program torchlike traces, and
the module's enums, errors and helpers are PyTorch's.

    >>> torchlike.onnx.export(model.eval(), (x,), "model.onnx", input_names=["x"],
    ...                       output_names=["logits"], dynamic_axes={"x": {0: "batch"}})

How: the forward is captured as torchlike.export captures it (a pure function of the weights
and inputs, with a symbolic batch size where a dynamic axis is asked for), traced into a jaxpr,
and each jax primitive is translated into ONNX nodes (NOTE [ onnx translation ] in _graph.py).
The weights are initializers named as in ``state_dict``.  A primitive without a translation
raises ``torchlike.onnx.errors.UnsupportedOperatorError`` naming it.

NOTE [ onnx export ]
Why torchlike's own translator and not a converter: jax2onnx (0.17.1), the one maintained
jax-to-ONNX converter, pulls flax, optax, orbax and equinox (about 1 GB); given the same
jaxprs it converted the MLP, LSTM language model and Transformer encoder correctly (max abs
difference in onnxruntime 3e-8, 3e-8, 5e-7) but failed on the digits CNN's symbolic batch (its
``rem`` rule needs a constant size); jax2tf + tf2onnx needs TensorFlow.  The optional extra
may bring only ``onnx``.  The translator covers what torchlike's layers lower to (the four
models of tests/test_onnx.py: MLP, CNN, LSTM language model, Transformer encoder), with a
dynamic batch axis.

Differences from torch.onnx.export:
- ``dynamo=True`` (the default) and ``dynamo=False`` use the same translator; both need only
  ``onnx`` (not onnxscript).  ``dynamo=True`` returns an :class:`ONNXProgram`, ``dynamo=False``
  returns None and exports in ``training`` mode (TrainingMode.EVAL by default), as PyTorch's
  TorchScript exporter does.
- Default input names are the forward's argument names (``x``; nested inputs ``xs_0``), output
  names ``output`` (one output) or ``output_0``, ``output_1``... (``output_<key>`` for a dict,
  whose outputs come in sorted key order, jax's, where PyTorch keeps insertion order); the
  file's producer is "torchlike".
- A forward that draws random numbers (dropout in training mode) is refused with an
  OnnxExporterError saying to call ``model.eval()``.
- A recurrent layer becomes an ONNX Loop; its number of steps is the example's sequence
  length unless that axis is dynamic too (which torchlike.export supports only where the
  forward traces with a symbolic size).
- Opsets 13 to 23 are written directly (no version conversion); an op whose translation needs
  a newer opset raises UnsupportedOperatorError naming the opset to use.
- ``report``, ``profile``, ``dump_exported_program``, ``artifacts_dir``, ``optimize``,
  ``do_constant_folding`` (constants are always folded) and ``autograd_inlining`` are accepted
  and change nothing; ``custom_translation_table`` and ``custom_opsets`` are not supported.
"""
import contextlib
import contextvars
import enum
import re
import warnings

import jax
import numpy as np

from .. import _x64
from .._tensor import Tensor
from ..export import _capture as cap
from ..nn.modules.module import Module
from . import errors as errors
from ._program import ONNXProgram as ONNXProgram
from .errors import OnnxExporterError as OnnxExporterError

__all__ = ["ONNXProgram", "OnnxExporterError", "OperatorExportTypes", "TrainingMode", "errors",
           "export", "is_in_onnx_export", "producer_name", "producer_version",
           "select_model_mode_for_export"]

producer_name = "pytorch"
producer_version = "2.13.0"   # the PyTorch whose exporter torchlike's signature follows

_DEFAULT_OPSET = 20           # torch.onnx's default (ONNX_DEFAULT_OPSET)
_OPSETS = range(13, 24)       # what the translator writes (torch.onnx: up to 23)
_exporting = contextvars.ContextVar("torchlike_onnx_exporting", default=False)


class TrainingMode(enum.IntEnum):
    """Mirrors ``torch.onnx.TrainingMode``: the mode a model is exported in."""
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


class OperatorExportTypes(enum.IntEnum):
    """Mirrors ``torch.onnx.OperatorExportTypes``."""
    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


def is_in_onnx_export():
    """Mirrors ``torch.onnx.is_in_onnx_export``: True while ``export`` traces the model."""
    return _exporting.get()


def _require_onnx(dynamo):
    try:
        import onnx
    except ImportError as e:
        if not dynamo:
            raise OnnxExporterError("Module onnx is not installed!") from e
        raise ModuleNotFoundError(
            "No module named 'onnx'. torchlike.onnx.export writes ONNX with the onnx package: "
            'pip install "torchlike[onnx]"', name="onnx") from e
    return onnx


def export(model, args=(), f=None, *, kwargs=None, verbose=None, input_names=None,
           output_names=None, opset_version=None, dynamo=True, external_data=True,
           dynamic_shapes=None, custom_translation_table=None, report=False, optimize=True,
           verify=False, profile=False, dump_exported_program=False, artifacts_dir=".",
           export_params=True, keep_initializers_as_inputs=False, dynamic_axes=None,
           training=TrainingMode.EVAL, operator_export_type=OperatorExportTypes.ONNX,
           do_constant_folding=True, custom_opsets=None, export_modules_as_functions=False,
           autograd_inlining=True):
    """Mirrors ``torch.onnx.export``: ``model``'s forward on ``args`` as an ONNX model, written
    to ``f`` (NOTE [ onnx export ] lists the differences).

    Args:
        model: the ``nn.Module`` (its current train/eval mode is exported when ``dynamo``).
        args: example positional inputs (a tuple; a single Tensor is taken as ``(tensor,)``);
            ``kwargs``: keyword inputs.
        f: a path or a binary file object to write; None writes nothing.
        input_names, output_names: names of the graph's user inputs and outputs, in order.
        opset_version: the ONNX opset, 13 to 23 (default 20).
        dynamic_axes: ``{name: {axis: axis_name}}`` or ``{name: [axes]}`` for inputs and
            outputs; ``dynamic_shapes``: torch.export's form (``{"x": {0: Dim("batch")}}``).
        export_params: False leaves the weights out (they become graph inputs).
        keep_initializers_as_inputs: also list the weights as graph inputs.
        external_data: with a path ``f``, weights over 2 GB go to ``f + ".data"``.
        verify: run the file in onnxruntime on ``args`` and check it against the eager
            forward (OnnxExporterError on a mismatch).
        training: with ``dynamo=False``, the mode to export in (TrainingMode).

    Returns:
        An :class:`ONNXProgram` if ``dynamo`` is True, otherwise None.

    Raises:
        UnsupportedOperatorError: the forward uses an operation with no ONNX translation.
        ModuleNotFoundError: the onnx package is not installed (``dynamo=False``:
            OnnxExporterError, as PyTorch).

    Example::

        >>> prog = torchlike.onnx.export(net.eval(), (torchlike.randn(4, 8),),
        ...                              dynamic_axes={"x": {0: "batch"}})
        >>> prog.save("net.onnx")
    """
    onnx = _require_onnx(dynamo)
    if custom_translation_table or custom_opsets:
        raise OnnxExporterError("torchlike.onnx.export does not support "
                                "custom_translation_table or custom_opsets: its translations "
                                "are of jax primitives, not of torch operators")
    if not isinstance(model, Module):
        raise TypeError(f"torchlike.onnx.export exports an nn.Module, got "
                        f"{type(model).__name__}")
    args = args if isinstance(args, tuple) else (args,)
    kwargs = dict(kwargs or {})
    opset = _DEFAULT_OPSET if opset_version is None else int(opset_version)
    if opset not in _OPSETS:
        raise ValueError(f"Unsupported ONNX opset version: {opset}; torchlike.onnx writes "
                         f"opsets {_OPSETS[0]} to {_OPSETS[-1]}")
    mode = contextlib.nullcontext() if dynamo else select_model_mode_for_export(model, training)
    token = _exporting.set(True)
    try:
        with mode:
            proto, program, user_inputs, weights = _build(
                onnx, model, args, kwargs, input_names, output_names, opset, dynamic_axes,
                dynamic_shapes, export_params, keep_initializers_as_inputs)
    finally:
        _exporting.reset(token)
    onnx.checker.check_model(proto)
    result = ONNXProgram(proto, program, user_inputs, weights)
    if verbose:
        print(onnx.printer.to_text(proto.graph))
    if verify:
        _verify(result, model, args, kwargs)
    if f is not None:
        result.save(f, external_data=None if external_data else False)
    return result if dynamo else None


def _axis_names(dynamic_axes, name):
    """``dynamic_axes[name]`` as {axis: axis name}."""
    spec = dynamic_axes.get(name)
    if spec is None:
        return {}
    if isinstance(spec, dict):
        return {int(k): str(v) for k, v in spec.items()}
    return {int(k): f"{name}_dynamic_axes_{i + 1}" for i, k in enumerate(spec)}


def _identifier(name):
    name = re.sub(r"\W", "_", name)
    return name if name.isidentifier() else f"d_{name}"


def _dynamic_shapes(model, args, kwargs, names, dynamic_axes):
    """torch.export-style ``dynamic_shapes`` (one spec per top-level input) from
    ``dynamic_axes``, whose keys are input names."""
    from ..export import Dim
    leaves, tree = cap.flatten_inputs(args, kwargs)
    dims, specs, it = {}, [], iter(names)
    for x in leaves:
        if not cap.is_array(x):
            specs.append(None)
            continue
        axes = _axis_names(dynamic_axes, next(it))
        specs.append({a: dims.setdefault(n, Dim(_identifier(n))) for a, n in axes.items()}
                     or None)
    sub_args, sub_kwargs = jax.tree_util.tree_unflatten(tree, specs)
    return tuple(sub_args) + tuple(sub_kwargs[k] for k in kwargs)


def _build(onnx, model, args, kwargs, input_names, output_names, opset, dynamic_axes,
           dynamic_shapes, export_params, keep_initializers_as_inputs):
    from ..export import _export_program
    from ._graph import Graph
    from ._rules import RULES
    default_names = [n for n, x in zip(cap.input_names(model, args, kwargs),
                                       cap.flatten_inputs(args, kwargs)[0]) if cap.is_array(x)]
    names = list(input_names or []) + default_names[len(input_names or []):]
    if len(names) != len(default_names):
        raise ValueError(f"input_names has {len(input_names)} names, but the model takes "
                         f"{len(default_names)} inputs")
    dynamic_axes = dict(dynamic_axes or {})
    if dynamic_axes and dynamic_shapes is None:
        dynamic_shapes = _dynamic_shapes(model, args, kwargs, names, dynamic_axes)
    traced = []
    with _x64.on():
        program = _export_program(model, args, kwargs, dynamic_shapes, None, traced)
        if any(s["kind"] == cap.RNG_STATE and s["input"] for s in program._meta["state"]):
            raise OnnxExporterError(
                f"{type(model).__name__}'s forward draws random numbers (dropout or another "
                "random op in training mode), which torchlike.onnx cannot translate: call "
                "model.eval() before exporting, or export with dynamo=False (it exports in "
                "TrainingMode.EVAL)")
        fn, specs = traced
        closed = jax.make_jaxpr(fn)(*specs)
        values = program._values({**program.state_dict, **program.constants})
        value_paths = jax.tree_util.tree_flatten_with_path(specs[0])[0]
        arg_avals = jax.tree_util.tree_leaves(specs[1:])
        graph = Graph(onnx, opset, RULES)
        dim_names, user_in = {}, []
        for name, aval in zip(names, arg_avals):
            for axis, axis_name in _axis_names(dynamic_axes, name).items():
                if not isinstance(aval.shape[axis], (int, np.integer)):
                    dim_names.setdefault(str(aval.shape[axis]), axis_name)
            user_in.append(graph.add_input(name, aval, dim_names))
        # the weights, in state_dict order (after the user inputs, as PyTorch lists them)
        avals = {path[0].key: aval for path, aval in value_paths}
        weights = [k for k in [*program.state_dict, *program.constants] if k in avals]
        for name in weights:
            if export_params:
                graph.initializer(name, np.asarray(values[name]))
            if not export_params or keep_initializers_as_inputs:
                graph.add_input(name, avals[name], {})
        in_names = [path[0].key for path, _ in value_paths] + user_in
        n_out = len(program._meta["outputs"])
        needed = [True] * n_out + [False] * (len(closed.jaxpr.outvars) - n_out)
        outs = graph.translate(closed.jaxpr, closed.consts, in_names, needed)[:n_out]
    default_out = [o["name"] for o in program._meta["outputs"]]
    out_names = list(output_names or []) + default_out[len(output_names or []):]
    outputs = []
    for name, value, var in zip(out_names, outs, closed.jaxpr.outvars):
        graph.nodes.append(onnx.helper.make_node("Identity", [value], [name],
                                                 name=graph.fresh("node_output")))
        renamed = _axis_names(dynamic_axes, name)
        shape = [renamed.get(i, d if isinstance(d, (int, np.integer)) else
                             dim_names.get(str(d), str(d)))
                 for i, d in enumerate(var.aval.shape)]
        outputs.append(onnx.helper.make_tensor_value_info(name, _elem(var.aval.dtype), shape))
    known = set(names) | set(out_names)
    for key in dynamic_axes:
        if key not in known:
            warnings.warn(f"Provided key {key} for dynamic axes is not a valid input/output "
                          "name", stacklevel=3)
    gp = onnx.helper.make_graph(graph.used_nodes(out_names), "main_graph", graph.inputs,
                                outputs, graph.initializers)
    opsets = [onnx.helper.make_opsetid("", opset)]
    proto = onnx.helper.make_model(gp, opset_imports=opsets, producer_name="torchlike",
                                   producer_version=_torchlike_version())
    proto.ir_version = onnx.helper.find_min_ir_version_for(opsets)
    return proto, program, names, weights


def _elem(dtype):
    from ._graph import elem_type
    return elem_type(dtype)


def _torchlike_version():
    from ..version import __version__
    return str(__version__).partition("+torchlike.")[2] or str(__version__)


def _verify(program, model, args, kwargs):
    from ..autograd.grad_mode import no_grad
    with no_grad():
        want = model(*args, **kwargs)
    want = [np.asarray(t.detach().cpu().numpy()) for t in jax.tree_util.tree_leaves(
        want, is_leaf=lambda x: isinstance(x, Tensor))]
    got = [np.asarray(t.numpy()) for t in program(*args, **kwargs)]
    for i, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape or not np.allclose(g, w, rtol=1e-4, atol=1e-5):
            diff = np.abs(g - w).max() if g.shape == w.shape else f"shape {g.shape} vs {w.shape}"
            raise OnnxExporterError(f"verify: output {i} of the ONNX model differs from the "
                                    f"eager forward (max abs difference {diff})")


@contextlib.contextmanager
def select_model_mode_for_export(model, mode):
    """Mirrors ``torch.onnx.select_model_mode_for_export``: ``model`` in ``mode`` (a
    TrainingMode) inside the block, back in its own mode after it."""
    if not isinstance(mode, TrainingMode):
        raise TypeError(f"'mode' should be a torch.onnx.TrainingMode enum, but got "
                        f"'{type(mode)}'.")
    was_training = model.training
    if mode is not TrainingMode.PRESERVE:
        model.train(mode is TrainingMode.TRAINING)
    try:
        yield
    finally:
        if mode is not TrainingMode.PRESERVE:
            model.train(was_training)
