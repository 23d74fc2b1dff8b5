"""Matrix products on XLA's CPU backend next to PyTorch's: the arithmetic under an eager step.

    python scripts/bench_products.py [--budget SECONDS] [--window N] [--json PATH]

The products the models of scripts/bench_train.py and scripts/bench_programs.py run (a forward
product; a backward's are the same sizes, transposed), each timed four ways:
  torchlike        torchlike.mm eagerly (dispatch and XLA's program)
  jax jit          jax.jit(x @ y): the program XLA's CPU backend compiles for the product alone
  torch            torch.mm with torch's threads (one per core by default)
  torch, 1 thread  torch.mm on one thread
The first three take turns window by window (bench_train's measure_together: each window after
one untimed product), then the program and torch on one thread in a second pass; a sample is a
window's time over its products, waiting for the last, and each ratio is taken within a pass.
"cores" is the process's CPU time over the wall time while XLA's program runs alone in a loop:
how many of the machine's cores it keeps busy.  The ratios say what part of an eager step's
distance to PyTorch is XLA's arithmetic rather than torchlike's dispatch.  Prints, never
asserts.
"""
import argparse
import json
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import jax  # noqa: E402

import torchlike  # noqa: E402
from bench_eager import print_environment, wait_jax, wait_torch, wait_torchlike  # noqa: E402
from bench_train import measure_together  # noqa: E402

try:
    import torch
except ImportError:   # the torch columns are left empty
    torch = None

# (where the product comes from, (rows, inner, columns))
PRODUCTS = [
    ("transformer_lm: attention's input projection", (1024, 32, 96)),
    ("transformer_lm: feed-forward in", (1024, 32, 128)),
    ("transformer_lm: feed-forward out", (1024, 128, 32)),
    ("transformer_lm: output head", (1024, 32, 92)),
    ("word_lstm: a recurrent step", (20, 128, 512)),
    ("word_lstm: input projections of a window", (700, 64, 512)),
    ("word_lstm: decoder", (700, 128, 2000)),
    ("bench_train mlp: first layer", (128, 784, 512)),
    ("bench_train mlp: second layer", (128, 512, 512)),
    ("square", (256, 256, 256)),
]


def cores_used(fn, seconds=0.3):
    """Process CPU time over wall time while ``fn`` (which waits for its result) runs in a loop."""
    start, r0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
    while time.perf_counter() - start < seconds:
        fn()
    r1, wall = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter() - start
    return (r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) / wall


def run_product(shape, args):
    n, k, m = shape
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(s, dtype=np.float32) for s in ((n, k), (k, m)))
    program = jax.jit(lambda x, y: x @ y)
    ja, jb = jax.numpy.asarray(a), jax.numpy.asarray(b)
    la, lb = torchlike.tensor(a), torchlike.tensor(b)
    runners = {"torchlike": (lambda: torchlike.mm(la, lb), wait_torchlike),
               "jax jit": (lambda: program(ja, jb), wait_jax)}
    if torch is not None:
        ta, tb = torch.tensor(a), torch.tensor(b)
        runners["torch"] = (lambda: torch.mm(ta, tb), wait_torch)
    ms = {name: s["median_ms"] for name, s in
          measure_together(runners, args.budget, args.window).items()}
    if torch is not None:   # a second pass, torch on one thread beside the program again
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            alone = measure_together({"jax jit": runners["jax jit"],
                                      "torch, 1 thread": runners["torch"]},
                                     args.budget, args.window)
        finally:
            torch.set_num_threads(threads)
        ms["torch, 1 thread"] = alone["torch, 1 thread"]["median_ms"]
        ms["jax jit, 1 thread pass"] = alone["jax jit"]["median_ms"]
    ms["cores"] = cores_used(lambda: jax.block_until_ready(program(ja, jb)))
    return ms


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=1.0,
                        help="seconds of timed windows per product and pass (default 1)")
    parser.add_argument("--window", type=int, default=10, help="products per window (default 10)")
    parser.add_argument("--json", metavar="PATH", help="also write the numbers as JSON here")
    args = parser.parse_args(argv)
    env = print_environment(args)
    print("\nmedian us per product (jax / torch: XLA's program against torch at its threads, and "
          "against torch on one thread in a second pass)")
    print(f"{'product':<44} {'shape':<16} {'torchlike':>9} {'jax jit':>8} {'torch':>7} "
          f"{'torch 1t':>8} {'cores':>5} {'jax/torch':>9} {'jax/torch 1t':>12}")
    results = {}
    for name, shape in PRODUCTS:
        ms = run_product(shape, args)
        results[name] = {"shape": shape, **ms}
        us = {k: v * 1e3 for k, v in ms.items() if k != "cores"}
        torch_cols = ("-",) * 4 if torch is None else (
            f"{us['torch']:.0f}", f"{us['torch, 1 thread']:.0f}",
            f"{us['jax jit'] / us['torch']:.2f}",
            f"{us['jax jit, 1 thread pass'] / us['torch, 1 thread']:.2f}")
        print(f"{name:<44} {'x'.join(map(str, shape)):<16} {us['torchlike']:>9.0f} "
              f"{us['jax jit']:>8.0f} {torch_cols[0]:>7} {torch_cols[1]:>8} {ms['cores']:>5.2f} "
              f"{torch_cols[2]:>9} {torch_cols[3]:>12}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"env": env, "results": results}, indent=1))


if __name__ == "__main__":
    main()
