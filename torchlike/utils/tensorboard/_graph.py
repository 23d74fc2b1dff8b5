"""``SummaryWriter.add_graph``: a model's forward as a TensorBoard ``GraphDef``.

NOTE [ the graph of a forward ]
torch traces the model with ``torch.jit.trace`` and writes one node per TorchScript op, named by
module scope (``Net/Linear[fc1]/input.1``).  torchlike traces it with export's capture
(``export._capture.Capture``, NOTE [ export capture ]): the forward, in eval mode and under
``no_grad``, as one jaxpr over (parameters, buffers, inputs).  While it is traced, a forward
pre-hook on every submodule opens a ``jax.named_scope`` with torch's scope label
(``Linear[fc1]``, the root: its class name) and a forward hook closes it, so every equation
carries its module path in its name stack.  The ``GraphDef`` then holds:

- an ``IO Node`` ``input/<argument name>`` per input and ``output/output.<k>`` per output, as
  torch's;
- a ``Parameter`` / ``Buffer`` node per piece of state the forward reads, under its module's
  scope (``Net/Linear[fc1]/weight``);
- one node per jaxpr equation, op the JAX primitive (``dot_general``, ``add``, ``conv_general_
  dilated``, ...; a nested jit: its function's name), named ``<scope>/<op>`` (``_<n>`` when
  taken), with its output shapes (``_output_shapes``, which the dashboard draws on the edges)
  and its parameters in the ``attr`` string.

So the dashboard shows the same module boxes as torch's, with XLA's ops inside them instead of
ATen's.  Inputs the forward never reads are left out (torch's ``omit_useless_nodes``).  A
forward that cannot be traced (a branch on a tensor's value) raises the capture's error, as
torch raises when its trace fails.
"""
import contextlib

import jax

from ...export._capture import Capture, unique_names
from ...nn.modules.module import Module

try:
    from jax.extend.core import ClosedJaxpr, Jaxpr, Literal
except ImportError:   # older jax
    from jax.core import ClosedJaxpr, Jaxpr, Literal


def _labels(model):
    """{id(module): torch's scope label}: the root by its class name, a child as
    ``Class[attribute]``."""
    labels = {}
    for path, module in model.named_modules(remove_duplicate=False):
        if id(module) not in labels:
            attr = path.rsplit(".", 1)[-1]
            labels[id(module)] = type(module).__name__ + (f"[{attr}]" if path else "")
    return labels


@contextlib.contextmanager
def _scopes(model):
    """Every module call inside a ``jax.named_scope`` of its label, while the forward traces."""
    labels = _labels(model)
    open_scopes, handles = [], []

    def enter(module, args):
        scope = jax.named_scope(labels[id(module)])
        scope.__enter__()
        open_scopes.append(scope)

    def leave(module, args, output):
        open_scopes.pop().__exit__(None, None, None)

    for module in {id(m): m for m in model.modules()}.values():
        handles.append(module.register_forward_pre_hook(enter))
        handles.append(module.register_forward_hook(leave))
    try:
        yield
    finally:
        for h in handles:
            h.remove()
        while open_scopes:          # a forward that raised
            open_scopes.pop().__exit__(None, None, None)


@contextlib.contextmanager
def _eval_mode(model):
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        yield
    finally:
        for m, training in modes:
            m.training = training


def _state_scopes(model):
    """{module path: its scope path} (``fc1`` -> ``Net/Linear[fc1]``)."""
    labels = _labels(model)
    scopes = {}
    for path, module in model.named_modules(remove_duplicate=False):
        parent = path.rsplit(".", 1)[0] if "." in path else ""
        scopes[path] = (scopes[parent] + "/" if path else "") + labels[id(module)]
    return scopes


def _param_text(value):
    if isinstance(value, (ClosedJaxpr, Jaxpr)):
        jaxpr = getattr(value, "jaxpr", value)
        return "[" + ", ".join(e.primitive.name for e in jaxpr.eqns) + "]"
    text = str(value)
    if callable(value) or "\n" in text:    # a function (a custom_jvp's rule): its name
        return getattr(value, "__name__", type(value).__name__)
    return text if len(text) <= 80 else text[:77] + "..."


def _attr_text(eqn):
    parts = [f"{k} : {_param_text(v)}" for k, v in sorted(eqn.params.items())]
    literals = [str(v.val) for v in eqn.invars if isinstance(v, Literal)]
    if literals:
        parts.append("literals : " + ", ".join(literals))
    return "{" + ", ".join(parts) + "}" if parts else "{}"


def _device_name(inputs):
    for t in inputs:
        d = t.device
        kind = {"cpu": "CPU", "cuda": "GPU"}.get(d.type, d.type.upper())
        return f"/device:{kind}:{d.index or 0}"
    return "/device:CPU:0"


def graph(model, args, verbose=False, use_strict_trace=True):
    """Mirrors ``torch.utils.tensorboard._pytorch_graph.graph``: ``(GraphDef, RunMetadata)`` of
    ``model``'s forward on ``args`` (NOTE [ the graph of a forward ]).

    Args:
        model: an ``nn.Module`` (or a function of Tensors).
        args: a Tensor, or a tuple / list of the forward's positional arguments.
        verbose: print the traced jaxpr.
        use_strict_trace: accepted for torch's signature (the capture takes any pytree).
    """
    from . import _proto
    pb = _proto.load()
    if args is None:
        args = ()
    elif not isinstance(args, (tuple, list)):
        args = (args,)
    args = tuple(args)
    is_module = isinstance(model, Module)
    root = type(model).__name__ if is_module else getattr(model, "__name__", "graph")
    with contextlib.ExitStack() as stack:
        if is_module:
            stack.enter_context(_eval_mode(model))
            stack.enter_context(_scopes(model))
        capture = Capture(model, args, {}, with_grads=False, grad_mode=False)
        try:
            result = capture.trace()
        except RuntimeError as e:
            print(e)
            print("Error occurs, No graph saved")
            raise
    closed = result.jaxpr
    if verbose:
        print(closed)
    jaxpr = closed.jaxpr
    inputs = capture.program_inputs({}, [t._arr for t in capture.inputs])
    names = jax.tree_util.tree_leaves(capture._names_tree(inputs))
    kinds = {e.name: e.kind for e in capture.entries}
    scopes = _state_scopes(model) if is_module else {"": root}

    nodes, producer, unique = [], {}, unique_names()

    def shapes_attr(avals, text):
        shapes = [pb.tensor_shape_pb2.TensorShapeProto(
            dim=[pb.tensor_shape_pb2.TensorShapeProto.Dim(size=int(d)) for d in a.shape])
            for a in avals]
        AttrValue = pb.attr_value_pb2.AttrValue
        return {"attr": AttrValue(s=text.encode("utf_8")),
                "_output_shapes": AttrValue(list=AttrValue.ListValue(shape=shapes))}

    def add(name, op, inputs, avals, text):
        nodes.append(pb.node_def_pb2.NodeDef(name=name, op=op, input=inputs,
                                             attr=shapes_attr(avals, text)))

    def ref(v):
        return producer.get(v)

    counts = [len(jax.tree_util.tree_leaves(s)) for s in result.shapes]
    outs = jaxpr.outvars[counts[0]:counts[0] + counts[1]]   # the forward's outputs
    read = {v for e in jaxpr.eqns for v in e.invars if not isinstance(v, Literal)}
    read |= {v for v in outs if not isinstance(v, Literal)}
    for name, var in zip(names, jaxpr.invars):
        if var not in read:
            continue
        if name.startswith("<input "):
            node = unique("input/" + capture.input_names[int(name[7:-1])])
            add(node, "IO Node", [], [var.aval], "")
        else:
            owner, _, attr = name.rpartition(".")
            scope = scopes.get(owner) if owner else root
            node = unique(f"{scope}/{attr}" if scope else f"{root}/{name}")
            kind = kinds.get(name, "State").capitalize().replace("_", " ")
            add(node, kind, [], [var.aval], f"{{ name : {name} }}")
        producer[var] = node
    for eqn in jaxpr.eqns:
        op = eqn.params.get("name") if isinstance(eqn.params.get("name"), str) else None
        op = op or eqn.primitive.name
        scope = str(eqn.source_info.name_stack) or root
        node = unique(f"{scope}/{op}")
        add(node, op, [ref(v) for v in eqn.invars if not isinstance(v, Literal) and ref(v)],
            [v.aval for v in eqn.outvars], _attr_text(eqn))
        for k, v in enumerate(eqn.outvars):
            producer[v] = node if k == 0 else f"{node}:{k}"
    for k, var in enumerate(outs):
        source = [] if isinstance(var, Literal) or ref(var) is None else [ref(var)]
        add(unique(f"output/output.{k + 1}"), "IO Node", source, [var.aval], "")
    graph_def = pb.graph_pb2.GraphDef(node=nodes, versions=pb.versions_pb2.VersionDef(producer=22))
    stats = pb.config_pb2.RunMetadata(step_stats=pb.step_stats_pb2.StepStats(
        dev_stats=[pb.step_stats_pb2.DeviceStepStats(device=_device_name(capture.inputs))]))
    return graph_def, stats
