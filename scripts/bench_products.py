"""Matrix products on XLA's CPU backend next to PyTorch's: the arithmetic under an eager step.

    python scripts/bench_products.py [--budget SECONDS] [--window N] [--json PATH]

The products the models of scripts/bench_train.py and scripts/bench_programs.py run (a forward
product; a backward's are the same sizes, transposed), each timed four ways:
  torchlike        torchlike.mm eagerly (dispatch and XLA's program)
  jax jit          jax.jit(x @ y): the program XLA's CPU backend compiles for the product alone
  torch            torch.mm with torch's threads (one per core by default)
  torch, 1 thread  torch.mm on one thread
The four take turns window by window, each window after one untimed product; a sample is a
window's time over its products, waiting for the last.  "cores" is the process's CPU time over
the wall time while XLA's program runs alone in a loop: how many of the machine's cores it keeps
busy.  The ratios say what part of an eager step's distance to PyTorch is XLA's arithmetic
rather than torchlike's dispatch.  Prints, never asserts.
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


def measure_in_turns(runners, budget_s, window, min_samples=15):
    """Time ``runners`` ({name: (fn, wait, before, after)}) in turns, window by window (each
    round in a new random order), each window after one untimed call, with ``before()`` and
    ``after()`` around it (torch's threads set for one runner).  Returns {name: median ms}."""
    samples = {name: [] for name in runners}
    order = np.random.default_rng(0)
    deadline = time.perf_counter() + budget_s
    while min(map(len, samples.values())) < min_samples or time.perf_counter() < deadline:
        for name in order.permutation(list(runners)):
            fn, wait, before, after = runners[name]
            before()
            wait(fn())
            t0 = time.perf_counter()
            for _ in range(window):
                out = fn()
            wait(out)
            samples[name].append((time.perf_counter() - t0) / window)
            after()
    return {name: float(np.median(s)) * 1e3 for name, s in samples.items()}


def run_product(shape, args):
    n, k, m = shape
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(s, dtype=np.float32) for s in ((n, k), (k, m)))
    program = jax.jit(lambda x, y: x @ y)
    ja, jb = jax.numpy.asarray(a), jax.numpy.asarray(b)
    la, lb = torchlike.tensor(a), torchlike.tensor(b)
    nothing = lambda: None   # noqa: E731
    runners = {"torchlike": (lambda: torchlike.mm(la, lb), wait_torchlike, nothing, nothing),
               "jax jit": (lambda: program(ja, jb), wait_jax, nothing, nothing)}
    if torch is not None:
        ta, tb = torch.tensor(a), torch.tensor(b)
        threads = torch.get_num_threads()
        runners["torch"] = (lambda: torch.mm(ta, tb), wait_torch, nothing, nothing)
        runners["torch, 1 thread"] = (lambda: torch.mm(ta, tb), wait_torch,
                                      lambda: torch.set_num_threads(1),
                                      lambda: torch.set_num_threads(threads))
    ms = measure_in_turns(runners, args.budget, args.window)
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
    print("\nmedian us per product, the four measured in turns (jax / torch: XLA's program against "
          "torch at its threads and on one thread)")
    print(f"{'product':<44} {'shape':<16} {'torchlike':>9} {'jax jit':>8} {'torch':>7} "
          f"{'torch 1t':>8} {'cores':>5} {'jax/torch':>9} {'jax/torch 1t':>12}")
    results = {}
    for name, shape in PRODUCTS:
        ms = run_product(shape, args)
        results[name] = {"shape": shape, **ms}
        us = {k: v * 1e3 for k, v in ms.items() if k != "cores"}
        torch_cols = ("-",) * 4 if torch is None else (
            f"{us['torch']:.0f}", f"{us['torch, 1 thread']:.0f}",
            f"{us['jax jit'] / us['torch']:.2f}", f"{us['jax jit'] / us['torch, 1 thread']:.2f}")
        print(f"{name:<44} {'x'.join(map(str, shape)):<16} {us['torchlike']:>9.0f} "
              f"{us['jax jit']:>8.0f} {torch_cols[0]:>7} {torch_cols[1]:>8} {ms['cores']:>5.2f} "
              f"{torch_cols[2]:>9} {torch_cols[3]:>12}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"env": env, "results": results}, indent=1))


if __name__ == "__main__":
    main()
