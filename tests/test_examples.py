"""The examples and notebooks run end to end and tell the story they claim to tell."""
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TOUR_SCRIPT = REPO / "examples" / "autograd_tour.py"
TOUR_NOTEBOOK = REPO / "notebooks" / "01_autograd_tour.ipynb"


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def run_side_by_side(commands, cwd, timeout, what, extra_env=None):
    """{label: (stdout, stderr)} of each command (a list of arguments after the interpreter)
    run at once, each on one thread, all within ``timeout`` seconds; a failed run or one past
    the deadline fails the test, and every process still running is killed."""
    procs = {}
    for label, args in commands.items():
        env = _env()
        env["OMP_NUM_THREADS"] = "1"    # the runs share the machine's cores
        env.update((extra_env or {}).get(label, {}))
        procs[label] = subprocess.Popen([sys.executable, *args], cwd=cwd, env=env, text=True,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline, results = time.monotonic() + timeout, {}
    try:
        for label, proc in procs.items():
            out, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
            assert proc.returncode == 0, (
                f"{label}: {' '.join(commands[label])} exited {proc.returncode}\n"
                f"--- stdout ---\n{out}\n--- stderr ---\n{err}")
            results[label] = out, err
    except subprocess.TimeoutExpired:
        pytest.fail(f"{what} ran past {timeout} s")
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    return results


def _run_tour(*args):
    proc = subprocess.run([sys.executable, str(TOUR_SCRIPT), *args], cwd=REPO, env=_env(),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, (
        f"{TOUR_SCRIPT.name} exited {proc.returncode}\n--- stdout ---\n{proc.stdout}"
        f"\n--- stderr ---\n{proc.stderr}")
    return proc.stdout


# Facts the tour must print, section by section (the same lines real PyTorch prints).
TOUR_FACTS = [
    # 1-2: leaves, grad_fn and the walked graph
    "a.is_leaf = True   a.grad_fn = None",
    "y.is_leaf = False   y.grad_fn = SumBackward0",
    "            MulBackward0\n"
    "                AccumulateGrad  -> leaf a (3,)\n"
    "                AccumulateGrad  -> leaf b ()\n"
    "        None  (input without grad)",
    "its .variable is a: True",
    # 3-4: accumulation, zeroing, retain_graph
    "after two backwards:  x.grad = tensor([ 4.,  8., 12.])",
    "after x.grad.zero_(): x.grad = tensor([0., 0., 0.])",
    "after x.grad = None:  x.grad = None",
    "Trying to backward through the graph a second time",
    # 5: hooks and retain_grad
    "hook on x saw grad tensor([3., 3., 3.])",
    "h.grad (kept by retain_grad) = tensor([1., 1., 1.])",
    "x.grad (hook scaled it by 10) = tensor([30., 30., 30.])",
    # 6: derivatives of x**3 at x = 1.5
    "dy/dx     = 3x^2 = 6.75",
    "d2y/dx2   = 6x   = 9.0",
    "d3y/dx3   = 6    = 6.0",
    # 7: the fitted line
    "fitted: w = 2.00, b = 1.00",
]


def test_autograd_tour_script(tmp_path):
    # --graph rides on the same run: the picture where Graphviz is installed, else the DOT text
    graph = tmp_path / ("graph.svg" if shutil.which("dot") else "graph.dot")
    out = _run_tour("--graph", str(graph))
    missing = [fact for fact in TOUR_FACTS if fact not in out]
    assert not missing, f"missing from the output: {missing}\n--- output ---\n{out}"
    drawn = graph.read_text()
    assert all(name in drawn for name in ("SumBackward0", "MulBackward0", "AccumulateGrad"))
    assert drawn.startswith("<?xml") if graph.suffix == ".svg" else drawn.startswith("digraph")


def _execute_notebook(path, timeout=120):
    """Run every cell of the notebook at `path` in a fresh python3 kernel (cwd: the repository)
    and return the executed notebook; a cell that raises fails the calling test."""
    try:
        import nbclient
        import nbformat
        from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
    except ImportError as err:
        pytest.fail(f"running notebooks needs nbclient, nbformat and ipykernel "
                    f"(`pip install -e .[test]`); this test installs nothing itself: {err}")

    try:
        KernelSpecManager().get_kernel_spec("python3")
    except NoSuchKernel:
        pytest.fail("no 'python3' Jupyter kernelspec is installed, so the notebook cannot run. "
                    "Install one first: `python -m pip install ipykernel && "
                    "python -m ipykernel install --user` (this test installs nothing itself).")

    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=timeout,
                                     resources={"metadata": {"path": str(REPO)}})
    try:
        client.execute(env=_env())
    except nbclient.exceptions.CellExecutionError as err:
        plain = re.sub(r"\x1b\[[0-9;]*m", "", str(err))  # drop the traceback's colours
        pytest.fail(f"{Path(path).name} raised in a cell:\n{plain}")
    return nb


def test_autograd_tour_notebook_executes():
    nb = _execute_notebook(TOUR_NOTEBOOK)
    errors = [out for cell in nb.cells if cell.cell_type == "code"
              for out in cell.outputs if out.output_type == "error"]
    assert not errors, errors
    text = "".join(out.get("text", "") for cell in nb.cells if cell.cell_type == "code"
                   for out in cell.outputs if out.output_type == "stream")
    assert "d3y/dx3   = 6    = 6.0" in text
    assert "fitted: w = 2.00, b = 1.00" in text
    # the graphs drawn inline: SVG where Graphviz is installed, the DOT text where not
    graphs = [out["data"].get("image/svg+xml") or out["data"]["text/plain"]
              for cell in nb.cells if cell.cell_type == "code" and "make_dot(" in cell.source
              for out in cell.outputs if out.output_type == "execute_result"]
    assert len(graphs) == 2 and "MulBackward0" in graphs[0] and "AddmmBackward0" in graphs[1]
    assert all(("<svg" in g) == bool(shutil.which("dot")) for g in graphs)
