"""torchlike.viz.make_dot against real torch's grad_fn graph, walked the way torchviz walks it:
the same nodes and edges (names, multiplicities), leaves with their parameter names, saved
tensors with their shapes; the picture through Graphviz's `dot` (SVG parsed as XML, PNG), the
error without Graphviz; and the committed notebooks carrying their outputs."""
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import torch

import torchlike as tl
from torchlike.viz import Digraph, ExecutableNotFound, make_dot

REPO = Path(__file__).resolve().parents[1]
HAVE_DOT = shutil.which("dot") is not None
needs_dot = pytest.mark.skipif(not HAVE_DOT, reason="Graphviz's dot is not installed")


# --- the DOT text, read back ---------------------------------------------------------------

_NODE = re.compile(r'^\t(\w+) \[label="((?:[^"\\]|\\.)*)"(?: fillcolor="(\w+)")?\]$')
_EDGE = re.compile(r'^\t(\w+) -> (\w+)(?: \[(.*)\])?$')


def parse(source):
    """({dot name: (label, fillcolor)}, [(tail, head, attrs)]) of make_dot's DOT text."""
    nodes, edges = {}, []
    for line in source.splitlines():
        if m := _EDGE.match(line):
            edges.append(m.groups())
        elif m := _NODE.match(line):
            nodes[m.group(1)] = (m.group(2).replace("\\n", "\n"), m.group(3))
    return nodes, edges


def shape_str(shape):
    return "(" + ", ".join(str(s) for s in shape) + ")"


def summary_of_dot(graph):
    """The graph as multisets: node labels with their colours, arrows (tail label, head label),
    and for each backward node the shapes of its saved tensors (orange, joined without arrow)."""
    nodes, edges = parse(graph.source)
    labels = collections.Counter(nodes.values())
    arrows = collections.Counter((nodes[t][0], nodes[h][0]) for t, h, attrs in edges
                                 if not attrs or "dotted" in attrs)
    saved = collections.defaultdict(list)
    for t, h, attrs in edges:
        if attrs == 'dir="none"':
            saved[t].append(nodes[h][0].split("\n")[-1])
    saved = collections.Counter((nodes[t][0], tuple(sorted(v))) for t, v in saved.items())
    return labels, arrows, saved


def summary_of_torch(outputs, params):
    """The same multisets for real torch's graph, walked as torchviz walks it (the oracle)."""
    names = {id(p): n for n, p in params.items()}
    labels, arrows, saved = collections.Counter(), collections.Counter(), collections.Counter()

    def tensor(t, color):
        name = names.get(id(t), "")
        label = f"{name}\n{shape_str(t.shape)}" if name else shape_str(t.shape)
        return label, color

    seen = set()

    def walk(fn):
        stack = [fn]
        while stack:
            fn = stack.pop()
            if fn in seen:
                continue
            seen.add(fn)
            me = type(fn).__name__
            labels[me, None] += 1
            if hasattr(fn, "variable"):
                leaf = tensor(fn.variable, "lightblue")
                labels[leaf] += 1
                arrows[leaf[0], me] += 1
            shapes = [shape_str(getattr(fn, a).shape) for a in dir(fn)
                      if a.startswith("_saved_") and isinstance(getattr(fn, a), torch.Tensor)]
            if shapes:
                saved[me, tuple(sorted(shapes))] += 1
            for nxt, _ in fn.next_functions:
                if nxt is not None:
                    arrows[type(nxt).__name__, me] += 1
                    stack.append(nxt)

    drawn = set()

    def output(t, color):
        if id(t) in drawn:
            return
        drawn.add(id(t))
        label = tensor(t, color)
        labels[label] += 1
        if t.grad_fn is not None:
            walk(t.grad_fn)
            arrows[type(t.grad_fn).__name__, label[0]] += 1
        if t._is_view():
            output(t._base, "darkolivegreen3")
            arrows[tensor(t._base, "")[0], label[0]] += 1

    for t in outputs:
        output(t, "darkolivegreen1")
    return labels, arrows, saved


# --- the programs drawn in both libraries ----------------------------------------------------

def tour(T):
    a = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = T.tensor(0.5, requires_grad=True)
    c = T.tensor([10.0, 20.0, 30.0])
    return ((a * b).exp() + c).sum(), {"a": a, "b": b}


def square_twice(T):   # one leaf read twice by one op: two edges, as torch has them
    x = T.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = x * x
    return (y.tanh(), y.sigmoid() * x), {"x": x}


def view_output(T):    # an output that is a view: its base in darker green, dotted edge
    x = T.ones(2, 3, requires_grad=True)
    h = x * 2
    return h[1:], {"x": x}


def mlp(T):
    T.manual_seed(0)
    model = T.nn.Sequential(T.nn.Linear(4, 3), T.nn.ReLU(), T.nn.Linear(3, 2))
    x = T.linspace(-1.0, 1.0, 20).reshape(5, 4)
    loss = T.nn.functional.mse_loss(model(x), T.zeros(5, 2))
    return loss, dict(model.named_parameters())


def multi_output(T):   # a node with two outputs (max's values and indices)
    x = T.arange(6.0).reshape(2, 3).requires_grad_()
    values, _ = x.max(dim=1)
    return (values * values).mean(), {"x": x}


def cnn(T):
    T.manual_seed(0)
    conv, fc = T.nn.Conv2d(1, 2, 3), T.nn.Linear(8, 3)
    x = T.linspace(0.0, 1.0, 36).reshape(1, 1, 6, 6)
    h = T.nn.functional.max_pool2d(conv(x).relu(), 2).flatten(1)
    loss = T.nn.functional.cross_entropy(fc(h), T.tensor([2]))
    return loss, {**{"conv." + k: v for k, v in conv.named_parameters()},
                  **{"fc." + k: v for k, v in fc.named_parameters()}}


PROGRAMS = [tour, square_twice, view_output, mlp, multi_output, cnn]

# Nodes for which PyTorch saves, beside operands, outputs or intermediates of its kernel (max's
# indices, nll_loss's total_weight); torchlike keeps only the operands and recomputes the rest
# in the backward's VJP (NOTE [ drawing the autograd graph ] in torchlike/viz.py).
KEEPS_MORE = {"MaxBackward0", "MaxPool2DWithIndicesBackward0", "NllLossBackward0"}


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_graph_is_torchs(program):
    out_tl, params_tl = program(tl)
    out_t, params_t = program(torch)
    outs_t = out_t if isinstance(out_t, tuple) else (out_t,)
    labels, arrows, saved = summary_of_dot(
        make_dot(out_tl, params=params_tl, show_saved=True))
    want_labels, want_arrows, want_saved = summary_of_torch(outs_t, params_t)
    # saved boxes are orange nodes of their own; the rest is torch's graph node for node
    assert +collections.Counter({k: v for k, v in labels.items() if k[1] != "orange"}) \
        == want_labels
    assert arrows == want_arrows
    assert {k: v for k, v in saved.items() if k[0] not in KEEPS_MORE} == {
        k: v for k, v in want_saved.items() if k[0] not in KEEPS_MORE}
    for name, shapes in saved:   # what torchlike keeps is among torch's saves
        if name in KEEPS_MORE:
            assert any(theirs == name and not collections.Counter(shapes)
                       - collections.Counter(want) for theirs, want in want_saved), name


def test_parameter_names_and_shapes_on_leaves():
    out, params = mlp(tl)
    nodes, edges = parse(make_dot(out, params=params.items()).source)   # pairs work too
    leaves = sorted(label for label, color in nodes.values() if color == "lightblue")
    assert leaves == sorted(f"{n}\n{shape_str(p.shape)}" for n, p in params.items())
    unnamed = parse(make_dot(out).source)[0]
    assert sorted(lab for lab, c in unnamed.values() if c == "lightblue") == sorted(
        shape_str(p.shape) for p in params.values())


def test_custom_function_saved_tensors_always_drawn():
    class Cube(tl.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * x * g

    x = tl.ones(2, 2, requires_grad=True)
    nodes, edges = parse(make_dot(Cube.apply(x)).source)
    cube = next(k for k, (label, _) in nodes.items() if label == "CubeBackward")
    assert [nodes[h] for t, h, a in edges if t == cube and a == 'dir="none"'] == [
        ("saved_tensors[0]\n(2, 2)", "orange")]


def test_show_attrs_table_and_truncation():
    x = tl.ones(2, 3, requires_grad=True)
    y = x.sum(dim=1, keepdim=True)
    label = parse(make_dot(y, show_attrs=True, max_attr_chars=4).source)[0]
    table = next(lab for lab, _ in label.values() if lab.startswith("SumBackward"))
    name, rule, *rows = table.split("\n")
    assert name == "SumBackward1" == type(torch.ones(2, 3, requires_grad=True)
                                           .sum(dim=1, keepdim=True).grad_fn).__name__
    assert {r.split(":")[0].strip() for r in rows} == {"dims", "keepdim", "dtype"}
    widths = {len(r) for r in rows}
    assert len(widths) == 1 and set(rule) == {"-"} and len(rule) == max(widths.pop(), len(name))
    assert "keepdim: True" in rows and "dtype  : f..." in rows   # 'float32' cut to 4 chars


def test_saved_after_backward_and_deep_graphs():
    x = tl.ones(3, requires_grad=True)
    y = (x.exp() * x).sum()
    before = make_dot(y, show_saved=True).source
    y.backward()   # frees what the nodes saved, as in PyTorch: nothing left to draw
    after = make_dot(y, show_saved=True).source
    assert "orange" in before and "orange" not in after
    assert make_dot(y).source == make_dot(y).source   # numbered, not id(): reruns diff clean
    z = x
    for _ in range(3000):   # deeper than Python's recursion limit
        z = z + 1.0
    nodes, edges = parse(make_dot(z.sum()).source)
    assert len(nodes) == 3000 + 4 and len(edges) == 3000 + 3


def test_bad_input():
    with pytest.raises(TypeError, match="expected a Tensor or a tuple of Tensors, but got int"):
        make_dot(3)
    with pytest.raises(TypeError, match=r"params\['w'\] must be a Tensor, but got float"):
        make_dot(tl.ones(1), params={"w": 1.0})


@needs_dot
def test_svg_and_png_through_graphviz(tmp_path):
    out, params = mlp(tl)
    graph = make_dot(out, params=params, show_saved=True)
    svg = graph.pipe(format="svg", encoding="utf-8")
    assert svg == graph._repr_svg_() == graph._repr_mimebundle_()["image/svg+xml"]
    root = ET.fromstring(svg)
    texts = [el.text for el in root.iter("{http://www.w3.org/2000/svg}text")]
    for label, _ in parse(graph.source)[0].values():
        for line in label.split("\n"):
            assert line in texts, line
    path = graph.render("mlp", directory=tmp_path, format="png")
    assert path == str(tmp_path / "mlp.png")
    assert (tmp_path / "mlp.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "mlp").read_text() == graph.source
    with pytest.raises(subprocess.CalledProcessError, match="nonsense"):   # dot refused
        graph.pipe(format="nonsense")


@needs_dot
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks the xdg-open call")
def test_render_view_opens_the_picture(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"   # an xdg-open that notes what it was asked to open
    bin_dir.mkdir()
    opener = bin_dir / "xdg-open"
    opener.write_text(f"#!/bin/sh\necho \"$1\" > {tmp_path / 'part'} && "
                      f"mv {tmp_path / 'part'} {tmp_path / 'opened'}\n")
    opener.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    path = make_dot(tour(tl)[0]).render("g", directory=tmp_path, format="svg", cleanup=True,
                                         view=True)
    deadline = time.monotonic() + 10
    while not (tmp_path / "opened").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert (tmp_path / "opened").read_text().strip() == path
    assert not (tmp_path / "g").exists() and (tmp_path / "g.svg").exists()   # cleanup


def test_without_graphviz(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))   # no dot anywhere on PATH
    graph = make_dot(tour(tl)[0])
    with pytest.raises(ExecutableNotFound, match="make sure the Graphviz executables") as err:
        graph.render("g", directory=tmp_path, format="svg")
    assert isinstance(err.value, RuntimeError) and "apt-get install graphviz" in str(err.value)
    assert list(tmp_path.iterdir()) == []   # nothing half-written
    assert graph._repr_svg_() is None
    assert graph._repr_mimebundle_() == {"text/plain": graph.source}
    assert graph.source.startswith("digraph {") and "SumBackward0" in graph.source


def test_digraph_quotes_labels():
    g = Digraph()
    g.node("a", 'say "hi"\nback\\slash')
    assert g.source.splitlines()[1] == '\ta [label="say \\"hi\\"\\nback\\\\slash"]'


# --- the committed notebooks -----------------------------------------------------------------

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


def test_committed_notebooks_carry_outputs():
    """scripts/run_notebooks.py ran every notebook in place: each code cell has been executed
    in order, the outputs are there, and nothing volatile (timings) was kept."""
    assert len(NOTEBOOKS) >= 4
    for path in NOTEBOOKS:
        nb = json.loads(path.read_text())
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        assert [c["execution_count"] for c in code] == list(range(1, len(code) + 1)), path.name
        assert sum(len(c["outputs"]) for c in code) >= len(code) // 2, path.name
        assert not [o for c in code for o in c["outputs"] if o["output_type"] == "error"]
        assert all("execution" not in c["metadata"] for c in code), path.name
        assert nb["metadata"]["language_info"] == {"name": "python"}, path.name
        for c in code:   # one output per run of writes to a stream (run_notebooks.py)
            kinds = [(o["output_type"], o.get("name")) for o in c["outputs"]]
            assert all(a != b or a[0] != "stream" for a, b in zip(kinds, kinds[1:])), path.name
    tour_nb = json.loads((REPO / "notebooks" / "01_autograd_tour.ipynb").read_text())
    svgs = ["".join(o["data"]["image/svg+xml"]) for c in tour_nb["cells"]
            if c["cell_type"] == "code" for o in c["outputs"]
            if "image/svg+xml" in o.get("data", {})]
    assert svgs and all("AddmmBackward0" in s or "MulBackward0" in s for s in svgs)
