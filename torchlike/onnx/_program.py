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
