"""An ONNX model file as a TensorBoard ``GraphDef`` for ``SummaryWriter.add_onnx_graph``
(mirrors ``torch.utils.tensorboard._onnx_graph``; needs the ``onnx`` package, extra ``onnx``)."""
from . import _proto


def load_onnx_graph(fname):
    """The ``GraphDef`` of the ONNX model in the file ``fname``."""
    try:
        import onnx
    except ImportError as e:
        raise ModuleNotFoundError("No module named 'onnx': add_onnx_graph reads the model with "
                                  'it (pip install "torchlike[onnx]")', name="onnx") from e
    return parse(onnx.load(fname).graph)


def parse(graph):
    """A ``GraphDef`` of an ONNX ``GraphProto``: a ``Variable`` node (dtype, shape) per graph
    input and output, then a node per ONNX node, named by its first output, op its op type,
    its attributes' values in ``parameters`` (torch's layout; torch also prints each name)."""
    pb = _proto.load()
    AttrValue, NodeDef = pb.attr_value_pb2.AttrValue, pb.node_def_pb2.NodeDef
    Shape = pb.tensor_shape_pb2.TensorShapeProto
    nodes = []
    for value in list(graph.input) + list(graph.output):
        tensor_type = value.type.tensor_type
        shape = Shape(dim=[Shape.Dim(size=d.dim_value) for d in tensor_type.shape.dim])
        nodes.append(NodeDef(name=value.name, op="Variable", input=[], attr={
            "dtype": AttrValue(type=tensor_type.elem_type), "shape": AttrValue(shape=shape)}))
    for node in graph.node:
        parameters = ", ".join(" = ".join(str(field[1]) for field in a.ListFields())
                               for a in node.attribute)
        nodes.append(NodeDef(name=node.output[0], op=node.op_type, input=node.input,
                             attr={"parameters": AttrValue(s=parameters.encode("utf_8"))}))
    return pb.graph_pb2.GraphDef(node=nodes, versions=pb.versions_pb2.VersionDef(producer=22))
