"""torchlike.onnx.errors: mirrors ``torch.onnx.errors`` -- the exporter's error types."""

__all__ = ["OnnxExporterError", "UnsupportedOperatorError"]


class OnnxExporterError(RuntimeError):
    """Mirrors ``torch.onnx.OnnxExporterError``: errors raised by the ONNX exporter."""


class UnsupportedOperatorError(OnnxExporterError):
    """Mirrors ``torch.onnx.errors.UnsupportedOperatorError``: an operator the exporter cannot
    translate.  ``UnsupportedOperatorError(name, version, supported_version)`` words the message
    as PyTorch does; torchlike's exporter raises it through :meth:`for_primitive`, naming the
    jax primitive, the torchlike function it came from and the source line."""

    def __init__(self, name, version, supported_version, *, detail=None):
        if detail is not None:
            msg = f"Exporting the operator '{name}' to ONNX opset version {version} is not " \
                  f"supported: {detail}"
            if supported_version is not None:
                msg += f". Try exporting with opset version {supported_version}"
        elif supported_version is not None:
            msg = (f"Exporting the operator '{name}' to ONNX opset version {version} is not "
                   f"supported. Support for this operator was added in version "
                   f"{supported_version}, try exporting with this version")
        elif name.startswith(("aten::", "prim::", "quantized::")):
            msg = f"Exporting the operator '{name}' to ONNX opset version {version} is not " \
                  "supported"
        else:
            msg = (f"ONNX export failed on an operator with unrecognized namespace {name}. If "
                   "you are trying to export a custom operator, make sure you registered it "
                   "with the right domain and version.")
        super().__init__(msg)
        self.name = name

    @classmethod
    def for_primitive(cls, primitive, graph, detail=None):
        """The error for a jax primitive of the traced program that has no ONNX translation
        (``graph``: the _graph.Graph being built, which knows where the primitive came
        from)."""
        fn, src = graph.context()
        where = []
        if fn:
            where.append(f"inside torchlike's '{fn}'")
        if src:
            where.append(f"at {src}")
        text = detail or "torchlike.onnx has no ONNX translation for this jax primitive"
        return cls(f"jax::{primitive}", graph.opset, None,
                   detail=f"{text}" + (f" ({', '.join(where)})" if where else "")
                   + ". torchlike.export can still export the model as StableHLO.")
