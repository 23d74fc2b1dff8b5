"""The package's layering (docs/architecture.md §1.1), as scripts/import_graph.py reads it: no
module imports from a layer above its own except the references the design names there, and
the circles at import time are the known ones (a new one is an import-order accident waiting)."""
import importlib.util
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "import_graph.py"
spec = importlib.util.spec_from_file_location("import_graph", SCRIPT)
graph = importlib.util.module_from_spec(spec)
spec.loader.exec_module(graph)

# (importer, imported) without "torchlike.": the upward references docs/architecture.md §1.1 names
NAMED_UPWARD = {
    ("_tensor", "autograd"),                       # Tensor.backward calls autograd.backward
    ("_ops.attention", "backends.cuda"),           # the attention-backend switches
    ("_ops.einsum", "backends.opt_einsum"),        # the contraction-order switches
    ("_ops.control_flow", "func._bridge"),         # a traced cond / while_loop
}
KNOWN_CIRCLES = [
    {"_dispatch", "_tensor", "_views", "autograd.graph"},    # the core layer (§1.1)
    {"_ops.decomp", "_ops.einsum", "_ops.linalg"},
    {"autograd", "autograd.functional", "autograd.gradcheck"},
]


def _short(name):
    return name[len("torchlike."):] if name.startswith("torchlike.") else name


def test_upward_imports_are_the_named_ones():
    up = graph.upward(graph.imports(graph.modules()))
    assert {(_short(a), _short(b)) for a, b, _ in up} == NAMED_UPWARD


def test_circles_at_import_time_are_the_known_ones():
    mods = graph.modules()
    top = [(a, b) for a, b, lazy in graph.imports(mods) if not lazy]
    circles = [{_short(m) for m in c} for c in graph.circles(sorted(mods), top)]
    assert sorted(map(sorted, circles)) == sorted(map(sorted, KNOWN_CIRCLES))


def test_importing_starts_no_backend():
    """Importing torchlike runs no program and asks for no device (on a GPU machine that would
    claim the GPU): a program defined at import is made at its first call (``quick_program``,
    NOTE [ quick compiles ] in torchlike/_quick.py)."""
    code = ("import torchlike, torchlike.optim, torchlike.nn.utils, torchlike.amp\n"
            "from jax._src import xla_bridge\n"
            "print(xla_bridge.backends_are_initialized())")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert run.returncode == 0 and run.stdout.split() == ["False"], run.stdout + run.stderr
