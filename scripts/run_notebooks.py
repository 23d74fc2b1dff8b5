"""Execute the notebooks in place, so they are committed with their outputs (plots, graphs).

    python scripts/run_notebooks.py [NOTEBOOK ...] [--timeout SECONDS] [--max-image-kb KB]

Runs every notebook in notebooks/ (or the ones named) top to bottom in a fresh ``python3``
Jupyter kernel with nbclient, from the repository root and with this checkout first on
PYTHONPATH, and writes each back with its outputs.  Needs the ``notebooks`` extra (nbclient,
nbformat, ipykernel, matplotlib, scikit-learn); Graphviz's ``dot`` draws the autograd graphs of
01_autograd_tour (without it the graph cells show their DOT text).

NOTE [ notebooks that diff cleanly ]
A rerun on an unchanged tree should change nothing, so a diff of the committed notebooks shows
only what the code changed:
- the notebooks seed their own generators (``torch.manual_seed``, ``random_state=``), and the
  kernel runs with ``PYTHONHASHSEED=0``;
- nothing volatile is written: no execution timings in the cells' metadata, consecutive
  writes to one stream in one output (the kernel splits them by timing), the kernel's
  ``language_info`` cut to the language's name (no Python version), cells without an id get
  ``cell-<n>`` (nbformat would draw random ones), and graphs are numbered by the walk, not by
  ``id()`` (NOTE [ drawing the autograd graph ] in torchlike/viz.py);
- a notebook that needs an environment of its own gets it here, the same one its test gives it
  (03 presents CPU devices as CUDA ones, as tests/test_jax_defaults.py runs it);
- figures stay small: an image output over ``--max-image-kb`` (default 200) fails the run, so
  the repository does not grow by megabytes per rerun.
The tests execute every notebook (tests/test_examples*.py, tests/test_jax_defaults.py) and check
that the committed ones carry their outputs (tests/test_viz.py); they do not run this script.
"""
import argparse
import base64
import os
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"

# Per-notebook environment, as its test runs it (NOTE [ notebooks that diff cleanly ]).
NOTEBOOK_ENV = {
    "03_torchlike_and_jax.ipynb": {
        "TORCHLIKE_CPU_AS_CUDA": "1",
        "XLA_FLAGS": "--xla_force_host_platform_device_count=3",
    },
}


def kernel_env(name):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["PYTHONHASHSEED"] = "0"
    for key, value in NOTEBOOK_ENV.get(name, {}).items():
        env[key] = " ".join(filter(None, [env.get(key), value])) if key == "XLA_FLAGS" else value
    return env


def strip_volatile(nb):
    """Drop what changes from run to run without the code changing."""
    nb.metadata["language_info"] = {"name": nb.metadata.get("language_info", {}).get(
        "name", "python")}
    for n, cell in enumerate(nb.cells):
        if not cell.get("id"):
            cell["id"] = f"cell-{n}"
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.metadata.pop("scrolled", None)
            cell.outputs = coalesce_streams(cell.outputs)


def coalesce_streams(outputs):
    """One stream output per run of writes to stdout (or stderr): how the kernel's writes were
    split into messages depends on timing."""
    merged = []
    for out in outputs:
        if (out.output_type == "stream" and merged and merged[-1].output_type == "stream"
                and merged[-1].name == out.name):
            merged[-1].text += out.text
        else:
            merged.append(out)
    return merged


def image_sizes(nb):
    """[(cell index, mime type, bytes)] of the image outputs."""
    sizes = []
    for n, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            for mime, data in out.get("data", {}).items():
                if mime.startswith("image/"):
                    text = "".join(data) if isinstance(data, list) else data
                    size = len(text.encode()) if mime == "image/svg+xml" else len(
                        base64.b64decode(text))
                    sizes.append((n, mime, size))
    return sizes


def run(path, timeout, max_image_kb):
    import nbclient
    import nbformat

    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=timeout,
                                     record_timing=False,
                                     resources={"metadata": {"path": str(ROOT)}})
    client.execute(env=kernel_env(path.name))
    strip_volatile(nb)
    big = [(n, mime, size) for n, mime, size in image_sizes(nb) if size > max_image_kb * 1024]
    if big:
        raise SystemExit(f"{path.name}: image outputs over {max_image_kb} KB (cell, type, "
                         f"bytes): {big}; make the figure smaller")
    nbformat.validate(nb)
    nbformat.write(nb, path)
    return nb


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("notebooks", nargs="*", type=pathlib.Path,
                        help="notebooks to run (default: every notebooks/*.ipynb)")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    parser.add_argument("--max-image-kb", type=int, default=200)
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted(NOTEBOOKS.glob("*.ipynb"))
    for path in paths:
        start = time.perf_counter()
        nb = run(path.resolve(), args.timeout, args.max_image_kb)
        outputs = sum(len(c.get("outputs", [])) for c in nb.cells)
        images = image_sizes(nb)
        print(f"{path.name}: {outputs} outputs, {len(images)} images "
              f"({sum(s for *_, s in images) // 1024} KB) in "
              f"{time.perf_counter() - start:.1f} s", flush=True)


if __name__ == "__main__":
    sys.exit(main())
