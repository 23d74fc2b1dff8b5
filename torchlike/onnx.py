"""torchlike.onnx: mirrors ``torch.onnx`` as far as programs touch it before exporting -- the
module, its enums and error type, ``is_in_onnx_export()`` -- and ``export``, which needs an ONNX
exporter torchlike does not have yet.

NOTE [ onnx export ]
``export`` raises what PyTorch raises on a machine without the exporter's backend:
``ModuleNotFoundError: No module named 'onnxscript'`` (the default, ``dynamo=True``) or
``OnnxExporterError: Module onnx is not installed!`` (``dynamo=False``), so a program that
guards its export for a missing backend behaves as it does with PyTorch.  Where the backend is
installed, torchlike still cannot translate to ONNX and says so with an ``OnnxExporterError``;
``torchlike.export`` writes a model's program as StableHLO instead.
"""
import contextlib
import enum
import importlib

__all__ = ["OnnxExporterError", "OperatorExportTypes", "TrainingMode", "export",
           "is_in_onnx_export", "producer_name", "producer_version",
           "select_model_mode_for_export"]

producer_name = "pytorch"
producer_version = "2.13.0"   # the PyTorch whose exporter torchlike's signature follows


class OnnxExporterError(RuntimeError):
    """Mirrors ``torch.onnx.OnnxExporterError``: errors raised by the ONNX exporter."""


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
    """Mirrors ``torch.onnx.is_in_onnx_export``: False (torchlike never runs a model to export
    it to ONNX)."""
    return False


def export(model, args=(), f=None, *, kwargs=None, verbose=None, input_names=None,
           output_names=None, opset_version=None, dynamo=True, external_data=True,
           dynamic_shapes=None, custom_translation_table=None, report=False, optimize=True,
           verify=False, profile=False, dump_exported_program=False, artifacts_dir=".",
           export_params=True, keep_initializers_as_inputs=False, dynamic_axes=None,
           training=TrainingMode.EVAL, operator_export_type=OperatorExportTypes.ONNX,
           do_constant_folding=True, custom_opsets=None, export_modules_as_functions=False,
           autograd_inlining=True):
    """Mirrors ``torch.onnx.export``'s signature; raises (NOTE [ onnx export ]).

    Raises:
        ModuleNotFoundError: ``dynamo=True`` and onnxscript is not installed (PyTorch's error).
        OnnxExporterError: ``dynamo=False`` and onnx is not installed (PyTorch's error), or the
            backend is installed: torchlike has no ONNX exporter.
    """
    backend = "onnxscript" if dynamo else "onnx"
    try:
        importlib.import_module(backend)
    except ImportError as e:
        if dynamo:
            raise
        raise OnnxExporterError("Module onnx is not installed!") from e
    raise OnnxExporterError(
        f"torchlike cannot export to ONNX: it has no ONNX exporter ({backend} is installed, "
        "but nothing translates torchlike's programs to it). torchlike.export writes the "
        "model's program as StableHLO.")


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
