"""``ONNXProgram``: what ``torchlike.onnx.export`` returns (mirrors ``torch.onnx.ONNXProgram``)."""
import copy
import os
import textwrap

import jax.numpy as jnp
import numpy as np

from .. import _x64
from .._tensor import Tensor
from ..export import _capture as cap

_TWO_GB = 2 ** 31


def require_onnxruntime():
    try:
        import onnxruntime
    except ImportError as e:
        raise ModuleNotFoundError(
            "No module named 'onnxruntime'. Running an exported ONNX model needs onnxruntime: "
            "pip install onnxruntime", name="onnxruntime") from e
    return onnxruntime


class ONNXProgram:
    """Mirrors ``torch.onnx.ONNXProgram``: an exported ONNX model, callable with Tensors
    (through onnxruntime), with the torchlike ``ExportedProgram`` it was translated from.

    Attributes:
        model_proto: the ``onnx.ModelProto``.
        exported_program: the ``torchlike.export.ExportedProgram`` (StableHLO) of the same
            forward.

    Example::

        >>> onnx_program = torchlike.onnx.export(model, (x,), dynamo=True)
        >>> onnx_program.save("model.onnx")
        >>> onnx_program(x)[0]          # runs in onnxruntime
    """

    def __init__(self, model_proto, exported_program, user_inputs, weights):
        self._proto = model_proto
        self.exported_program = exported_program
        self._user_inputs = list(user_inputs)
        self._weights = list(weights)       # names of the initializers that are weights
        self._session = None

    @property
    def model_proto(self):
        """The ``onnx.ModelProto``."""
        return self._proto

    def save(self, destination, *, include_initializers=True, keep_initializers_as_inputs=False,
             external_data=None):
        """Mirrors ``ONNXProgram.save``: write the model to ``destination`` (a path or a binary
        file object).

        Args:
            include_initializers: False writes the graph without its weights.
            keep_initializers_as_inputs: also list the weights as graph inputs (legacy
                runtimes that feed weights as inputs).
            external_data: store the weights in ``<destination>.data`` beside the file; None:
                only when the model is over 2 GB (protobuf's limit).
        """
        import onnx
        proto = self._proto
        if not include_initializers or keep_initializers_as_inputs:
            proto = copy.deepcopy(proto)
            if keep_initializers_as_inputs:
                known = {i.name for i in proto.graph.input}
                tensors = {t.name: t for t in proto.graph.initializer}
                proto.graph.input.extend(
                    onnx.helper.make_tensor_value_info(n, tensors[n].data_type,
                                                       list(tensors[n].dims))
                    for n in self._weights if n in tensors and n not in known)
            if not include_initializers:
                del proto.graph.initializer[:]
        if hasattr(destination, "write"):
            destination.write(proto.SerializeToString())
            return
        destination = os.fspath(destination)
        if external_data is None:
            external_data = proto.ByteSize() > _TWO_GB
        if external_data:
            onnx.save_model(proto, destination, save_as_external_data=True,
                            all_tensors_to_one_file=True,
                            location=os.path.basename(destination) + ".data")
        else:
            onnx.save_model(proto, destination)

    def optimize(self):
        """Mirrors ``ONNXProgram.optimize``: simplify the model in place (NOTE [ onnx optimize ]):
        nodes computed from constants alone become initializers, and nodes and initializers
        no output depends on are removed.  The model computes the same values."""
        _fold_constants(self._proto.graph, list(self._proto.opset_import))
        _drop_unused(self._proto.graph)
        self._session = None

    def initialize_inference_session(self, initializer=None):
        """Mirrors ``ONNXProgram.initialize_inference_session``: open the onnxruntime session
        (``initializer(model_bytes)`` makes it, if given)."""
        data = self._proto.SerializeToString()
        if initializer is not None:
            self._session = initializer(data)
            return
        ort = require_onnxruntime()
        self._session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])

    def release(self):
        """Mirrors ``ONNXProgram.release``: drop the inference session."""
        self._session = None

    def _feeds(self, args, kwargs):
        leaves, _ = cap.flatten_inputs(args, kwargs)
        arrays = [np.asarray(x.detach().cpu().numpy() if isinstance(x, Tensor) else x)
                  for x in leaves if cap.is_array(x)]
        if len(arrays) != len(self._user_inputs):
            raise ValueError(f"The ONNX model takes {len(self._user_inputs)} inputs "
                             f"({', '.join(self._user_inputs)}), but {len(arrays)} Tensors "
                             "were given")
        return dict(zip(self._user_inputs, arrays))

    def __call__(self, *args, **kwargs):
        """Mirrors ``ONNXProgram.__call__``: run the model in onnxruntime on Tensors laid out as
        the exported forward took them; returns a tuple of Tensors."""
        if self._session is None:
            self.initialize_inference_session()
        outs = self._session.run(None, self._feeds(args, kwargs))
        return tuple(Tensor._wrap(_as_jax(o)) for o in outs)

    def call_reference(self, *args, **kwargs):
        """Mirrors ``ONNXProgram.call_reference``: run the model with ONNX's reference
        evaluator (``onnx.reference``)."""
        from onnx.reference import ReferenceEvaluator
        outs = ReferenceEvaluator(self._proto).run(None, self._feeds(args, kwargs))
        return tuple(Tensor._wrap(_as_jax(o)) for o in outs)

    def __repr__(self):
        import onnx
        text = onnx.printer.to_text(self._proto.graph)
        return ("ONNXProgram(\n    model=\n" + textwrap.indent(text, " " * 8) +
                "\n    ,\n    exported_program=\n" +
                textwrap.indent(str(self.exported_program), " " * 8) + "\n)\n")


def _as_jax(a):
    with _x64.on():
        return jnp.asarray(a)


# NOTE [ onnx optimize ]
# torch's ONNXProgram.optimize runs onnxscript's optimizer (constant folding, dead code
# elimination).  onnxscript is no dependency of torchlike, so optimize does both itself with the
# onnx package: each top-level node whose inputs are all initializers or Constant outputs (and
# that holds no subgraph and draws no random numbers) is evaluated once by onnx's reference
# evaluator and replaced by initializers -- unless an output would exceed _FOLD_LIMIT elements
# (folding must not inflate the file, as onnxscript's size limits also prevent) or the evaluator
# cannot run the op; then nodes whose outputs nothing reads (not a graph output, not a later
# node's or a subgraph's input) and unread initializers are dropped.  Graph nodes are in
# topological order (ONNX requires it), so one pass of each suffices.
_FOLD_LIMIT = 1 << 20
_NO_FOLD = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
            "Multinomial", "Bernoulli", "Loop", "If", "Scan"}


def _subgraphs(node):
    import onnx
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            yield a.g
        elif a.type == onnx.AttributeProto.GRAPHS:
            yield from a.graphs


def _reads(graph):
    """Every name the nodes of ``graph`` (and of their subgraphs) read."""
    names = set()
    for node in graph.node:
        names.update(node.input)
        for g in _subgraphs(node):
            names |= _reads(g)
    return names


def _fold_constants(graph, opsets):
    import onnx
    from onnx import numpy_helper
    from onnx.reference import ReferenceEvaluator
    inputs = {i.name for i in graph.input}
    known = {t.name: t for t in graph.initializer if t.name not in inputs}
    kept = []
    for node in graph.node:
        ins = [n for n in node.input if n]
        if (node.op_type == "Constant" and node.domain in ("", "ai.onnx")) or (
                ins and node.domain in ("", "ai.onnx") and node.op_type not in _NO_FOLD
                and all(n in known for n in ins) and not any(_subgraphs(node))):
            model = onnx.helper.make_model(
                onnx.helper.make_graph([node], "fold", [], [
                    onnx.helper.make_empty_tensor_value_info(o) for o in node.output],
                    initializer=[known[n] for n in ins]), opset_imports=opsets)
            try:
                values = ReferenceEvaluator(model).run(None, {})
            except Exception:   # noqa: BLE001 -- an op the reference evaluator lacks: kept
                values = None
            if values is not None and all(np.asarray(v).size <= _FOLD_LIMIT for v in values):
                for name, v in zip(node.output, values):
                    known[name] = numpy_helper.from_array(np.asarray(v), name)
                    graph.initializer.append(known[name])
                continue
        kept.append(node)
    del graph.node[:]
    graph.node.extend(kept)


def _drop_unused(graph):
    needed = {o.name for o in graph.output}
    kept = []
    for node in reversed(graph.node):
        sub = set()
        for g in _subgraphs(node):
            sub |= _reads(g)
        if any(o in needed for o in node.output if o):
            kept.append(node)
            needed.update(n for n in node.input if n)
            needed |= sub
    del graph.node[:]
    graph.node.extend(reversed(kept))
    unused = [t for t in graph.initializer if t.name not in needed]
    for t in unused:
        graph.initializer.remove(t)
