"""Pictures of the autograd graph: ``make_dot``, as torchviz draws PyTorch's.

PyTorch has no drawing function of its own; its users draw the graph behind a tensor with
torchviz's ``make_dot(var, params=None, show_attrs=False, show_saved=False, max_attr_chars=50)``,
which walks ``grad_fn`` / ``next_functions`` and returns a ``graphviz.Digraph``.  This module is
the same function over torchlike's graph (``autograd/graph.py``), with its own small ``Digraph``
so that torchlike depends on nothing more: the DOT text (``.source``) needs nothing, and
``.render`` / ``.pipe`` / the inline notebook picture run Graphviz's ``dot`` program where it is
installed.

NOTE [ drawing the autograd graph ]
What is drawn, as torchviz draws it:
- one grey box per backward node, named as PyTorch names it (``type(node).__name__``:
  ``MulBackward0``, ``AddmmBackward0``, ``AccumulateGrad``); one edge per entry of a node's
  ``next_functions`` that is not ``None``, from the input's node to the node, so an op that reads
  the same tensor twice (``x * x``) has two edges from it;
- the leaf behind each ``AccumulateGrad`` in light blue, labelled with its name in ``params``
  and its shape; the tensors drawn from (the outputs) in green, with the base of an output that
  is a view in a darker green, joined by a dotted edge;
- ``show_saved``: what the node keeps for its backward, in orange, joined without an arrow.
  torchlike's node keeps the op's operands (NOTE [ dispatch ] in _dispatch.py) and records which of
  them PyTorch saves (the version check's list, read by ``Node._saved_shapes``); those are drawn,
  named ``result`` or ``input[i]`` (the i-th operand, the i-th entry of ``next_functions``) where
  PyTorch names them after its derivative formulas (``_saved_self``, ``_saved_mat1``).  A folded
  view (NOTE [ folded views ] in _dispatch.py) is drawn with the view's shape, which is what PyTorch
  saved.  Each saved value gets a box of its own (torchviz merges boxes of the same Python object,
  which PyTorch hands out afresh on each read).  A custom Function's ``saved_tensors`` are drawn
  always, as torchviz does.  After a backward without ``retain_graph`` nothing saved is left to
  draw;
- ``show_attrs``: a node's non-tensor arguments (the op's static arguments: ``dim``,
  ``keepdim``) and ``[saved tensor]`` for each saved tensor, in a table under its name.
Node names in the DOT text are numbered in the order the walk meets them (torchviz uses
``id()``), so the same graph gives the same text and the same picture on every run: notebooks
that show a graph diff cleanly when rerun.  The walk is iterative, so a graph of any depth (an
RNN unrolled over thousands of steps) draws without Python's recursion limit.
"""
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping

from ._tensor import Tensor
from .autograd.function import BackwardCFunction
from .autograd.graph import AccumulateGrad

__all__ = ["CalledProcessError", "Digraph", "ExecutableNotFound", "make_dot"]

_NODE_ATTR = (("style", "filled"), ("shape", "box"), ("align", "left"), ("fontsize", "10"),
              ("ranksep", "0.1"), ("height", "0.2"), ("fontname", "monospace"))
_LEAF, _OUTPUT, _VIEW_BASE, _SAVED = "lightblue", "darkolivegreen1", "darkolivegreen3", "orange"

_INSTALL_HINT = ("Graphviz is not installed (or its `dot` program is not on PATH); it draws the "
                 "picture, while the DOT text in `.source` needs nothing. Install it with "
                 "`apt-get install graphviz`, `brew install graphviz` or "
                 "`conda install -c conda-forge graphviz`.")


class ExecutableNotFound(RuntimeError):
    """Mirrors ``graphviz.ExecutableNotFound``: Graphviz's ``dot`` program is not on PATH."""

    def __init__(self, program="dot"):
        super().__init__(f"failed to execute {program!r}, make sure the Graphviz executables "
                         f"are on your systems' PATH. {_INSTALL_HINT}")


class CalledProcessError(subprocess.CalledProcessError):
    """Mirrors ``graphviz.CalledProcessError``: ``dot`` refused; its message is shown."""

    def __str__(self):
        return f"{super().__str__()}\n\n[stderr: {self.stderr!r}]"


def _quote(text):
    """A DOT string: double quotes, with quotes and backslashes escaped and each line break
    written as Graphviz's centred break ``\\n``."""
    text = str(text).replace("\\", "\\\\").replace('"', '\\"')
    return '"' + text.replace("\n", "\\n") + '"'


def _attr_list(pairs):
    return " ".join(f"{k}={_quote(v)}" for k, v in pairs)


class Digraph:
    """Mirrors the part of ``graphviz.Digraph`` that torchviz's ``make_dot`` users call.

    ``source`` is the DOT text; ``render`` and ``pipe`` run Graphviz's ``dot`` program;
    ``_repr_mimebundle_`` / ``_repr_svg_`` show the picture inline in Jupyter (the DOT text where
    Graphviz is missing).

    Args:
        format: the default output format of ``render`` and ``pipe`` (graphviz's default,
            ``"pdf"``); any format ``dot -T`` accepts (``"svg"``, ``"png"``).

    Example::

        >>> g = Digraph()
        >>> g.node("a", "x"); g.node("b", "y"); g.edge("a", "b")
        >>> g.source.splitlines()[-2].strip()
        'a -> b'
    """

    def __init__(self, format="pdf", graph_attr=None, node_attr=None):
        self.format = format
        self.graph_attr = dict(graph_attr or {})
        self.node_attr = dict(node_attr or {})
        self.body = []

    def node(self, name, label=None, **attrs):
        """Add a node ``name`` (shown as ``label``, default the name) with DOT attributes."""
        pairs = ([("label", label)] if label is not None else []) + sorted(attrs.items())
        self.body.append(f"\t{name} [{_attr_list(pairs)}]" if pairs else f"\t{name}")

    def edge(self, tail, head, **attrs):
        """Add an edge from node ``tail`` to node ``head`` with DOT attributes."""
        line = f"\t{tail} -> {head}"
        self.body.append(f"{line} [{_attr_list(sorted(attrs.items()))}]" if attrs else line)

    @property
    def source(self):
        """The graph as Graphviz DOT text."""
        lines = ["digraph {"]
        if self.graph_attr:
            lines.append(f"\tgraph [{_attr_list(self.graph_attr.items())}]")
        if self.node_attr:
            lines.append(f"\tnode [{_attr_list(self.node_attr.items())}]")
        return "\n".join(lines + self.body + ["}"]) + "\n"

    def __str__(self):
        return self.source

    def __repr__(self):
        nodes = sum(1 for line in self.body if "->" not in line)
        return f"<torchlike.viz.Digraph with {nodes} nodes, {len(self.body) - nodes} edges>"

    def pipe(self, format=None, encoding=None):
        """Mirrors ``graphviz.Digraph.pipe``: the graph drawn by ``dot`` in ``format``, as bytes
        (or text decoded with ``encoding``).

        Raises:
            ExecutableNotFound: Graphviz's ``dot`` is not on PATH.
            CalledProcessError: ``dot`` refused (an unknown format, say); its
                message is in ``stderr``.
        """
        fmt = format or self.format
        dot = shutil.which("dot")
        if dot is None:
            raise ExecutableNotFound("dot")
        proc = subprocess.run([dot, f"-T{fmt}"], input=self.source.encode(),
                              capture_output=True, timeout=120)
        if proc.returncode != 0:
            raise CalledProcessError(proc.returncode, [dot, f"-T{fmt}"],
                                                proc.stdout, proc.stderr.decode(errors="replace"))
        return proc.stdout.decode(encoding) if encoding else proc.stdout

    def render(self, filename="Digraph.gv", directory=None, view=False, cleanup=False,
               format=None):
        """Mirrors ``graphviz.Digraph.render``: write the DOT text to ``filename`` and the
        picture to ``filename + "." + format``; return the picture's path.

        Args:
            filename: where the DOT text goes (in ``directory``, when given).
            view: open the picture in the system's viewer (``xdg-open``, ``open``,
                ``os.startfile``), as graphviz does.
            cleanup: delete the DOT file once the picture is written.
            format: ``"svg"``, ``"png"``, ``"pdf"``, ... (default: ``self.format``).
        """
        path = os.path.join(directory, filename) if directory else str(filename)
        fmt = format or self.format
        picture = self.pipe(format=fmt)   # first, so nothing is written when dot is missing
        if directory:
            os.makedirs(directory, exist_ok=True)
        with open(path, "w") as f:
            f.write(self.source)
        out = f"{path}.{fmt}"
        with open(out, "wb") as f:
            f.write(picture)
        if cleanup:
            os.remove(path)
        if view:
            _view(out)
        return out

    def _repr_mimebundle_(self, include=None, exclude=None, **_):
        if shutil.which("dot") is None:
            return {"text/plain": self.source}
        return {"image/svg+xml": self.pipe(format="svg", encoding="utf-8")}

    def _repr_svg_(self):
        if shutil.which("dot") is None:
            return None
        return self.pipe(format="svg", encoding="utf-8")


def _view(path):
    """Open ``path`` in the system's viewer, without waiting for it."""
    if sys.platform == "win32":
        os.startfile(os.path.normpath(path))
        return
    opener = "open" if sys.platform == "darwin" else "xdg-open"
    if shutil.which(opener) is None:
        raise RuntimeError(f"cannot open {path}: no {opener!r} on PATH to open it with")
    subprocess.Popen([opener, path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _size_str(shape):
    return "(" + ", ".join(str(int(s)) for s in shape) + ")"


def _attrs_of(fn, saved):
    """{name: text} of the node's non-tensor arguments and its saved tensors (show_attrs)."""
    attrs = fn._arguments()
    for name, _ in saved:
        attrs[name] = "[saved tensor]"
    return attrs


def _node_label(fn, show_attrs, max_attr_chars, saved):
    name = type(fn).__name__
    attrs = _attrs_of(fn, saved) if show_attrs else {}
    if not attrs:
        return name
    width = max(max_attr_chars, 3)
    keys = max(len(k) for k in attrs)
    values = min(max(len(v) for v in attrs.values()), width)
    rows = [f"{k:<{keys}}: {v if len(v) <= values else v[:values - 3] + '...':>{values}}"
            for k, v in attrs.items()]
    return "\n".join([name, "-" * max(keys + values + 2, len(name))] + rows)


def _as_tensors(tensor_or_tensors):
    seq = tensor_or_tensors if isinstance(tensor_or_tensors, (tuple, list)) else (
        tensor_or_tensors,)
    for t in seq:
        if not isinstance(t, Tensor):
            raise TypeError("make_dot(): expected a Tensor or a tuple of Tensors, but got "
                            f"{type(t).__name__}")
    return seq


def _param_names(params):
    if params is None:
        return {}
    items = params.items() if isinstance(params, Mapping) else params
    names = {}
    for name, p in items:
        if not isinstance(p, Tensor):
            raise TypeError(f"make_dot(): params[{name!r}] must be a Tensor, but got "
                            f"{type(p).__name__}")
        names[id(p)] = name
    return names


def make_dot(tensor_or_tensors, params=None, show_attrs=False, show_saved=False,
             max_attr_chars=50):
    """Mirrors ``torchviz.make_dot``: a picture of the autograd graph behind a tensor.

    Walks ``grad_fn`` and ``next_functions`` from the given tensors back to the leaves and
    draws each backward node, each leaf (with its name in ``params``), each output and, when
    asked, what the nodes saved (NOTE [ drawing the autograd graph ]).

    Args:
        tensor_or_tensors: the output Tensor, or a tuple / list of them.
        params: names for the leaves: a dict ``{name: Tensor}`` such as
            ``dict(model.named_parameters())`` (or any iterable of (name, Tensor) pairs).
        show_attrs: list each node's non-tensor arguments under its name.
        show_saved: draw the tensors each node keeps for its backward, with their shapes.
        max_attr_chars: longest attribute value shown with ``show_attrs`` (longer ones end
            in ``...``).

    Returns:
        Digraph: ``.source`` is the DOT text; ``.render(filename, format="svg")`` and
        ``.pipe(format="png")`` draw it with Graphviz; in a notebook it shows itself.

    Example::

        >>> import torchlike as torch
        >>> from torchlike.viz import make_dot
        >>> model = torch.nn.Linear(3, 2)
        >>> g = make_dot(model(torch.randn(4, 3)).sum(), params=dict(model.named_parameters()))
        >>> "AddmmBackward0" in g.source and "weight" in g.source
        True
    """
    outputs = _as_tensors(tensor_or_tensors)
    names = _param_names(params)
    graph = Digraph(format="pdf", graph_attr={"size": "12,12"}, node_attr=dict(_NODE_ATTR))
    ids = {}   # id(object) -> DOT name, in the order the walk meets them
    keep = []  # the objects named, so no id is reused while drawing

    def name_of(obj):
        key = id(obj)
        if key not in ids:
            ids[key] = f"n{len(ids)}"
            keep.append(obj)
        return ids[key]

    def tensor_label(t):
        name = names.get(id(t), "")
        return f"{name}\n{_size_str(t.shape)}" if name else _size_str(t.shape)

    seen = set()
    pending = []   # nodes to draw, last first

    def draw_node(fn):
        me = name_of(fn)
        saved = fn._saved_shapes() if (show_saved or show_attrs
                                       or isinstance(fn, BackwardCFunction)) else []
        if show_saved or isinstance(fn, BackwardCFunction):
            for i, (label, shape) in enumerate(saved):
                box = f"{me}_s{i}"
                graph.node(box, f"{label}\n{_size_str(shape)}", fillcolor=_SAVED)
                graph.edge(me, box, dir="none")
        if isinstance(fn, AccumulateGrad):
            var = fn.variable
            graph.node(name_of(var), tensor_label(var), fillcolor=_LEAF)
            graph.edge(name_of(var), me)
        graph.node(me, _node_label(fn, show_attrs, max_attr_chars, saved))
        for nxt, _ in reversed(fn.next_functions):
            if nxt is not None:
                pending.append(nxt)
        for nxt, _ in fn.next_functions:
            if nxt is not None:
                graph.edge(name_of(nxt), me)

    def walk(fn):
        pending.append(fn)
        while pending:
            fn = pending.pop()
            if id(fn) not in seen:
                seen.add(id(fn))
                draw_node(fn)

    drawn = set()

    def draw_tensor(t, color):
        if id(t) in drawn:
            return
        drawn.add(id(t))
        graph.node(name_of(t), tensor_label(t), fillcolor=color)
        if t.grad_fn is not None:
            walk(t.grad_fn)
            graph.edge(name_of(t.grad_fn), name_of(t))
        if t._base is not None:   # an output that is a view: its base, joined by dots
            draw_tensor(t._base, _VIEW_BASE)
            graph.edge(name_of(t._base), name_of(t), style="dotted")

    for out in outputs:
        draw_tensor(out, _OUTPUT)
    size = max(12.0, round(0.15 * len(graph.body), 1))
    graph.graph_attr["size"] = f"{size},{size}"
    return graph
