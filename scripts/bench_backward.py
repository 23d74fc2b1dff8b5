"""What the fused backward costs and gains with the size of the graph: a recurrent loop.

    python scripts/bench_backward.py [--steps 5,10,25,50,100] [--uncapped-max 50] [--json PATH]

The model is the one of PyTorch's time-sequence-prediction example: two nn.LSTMCell (51 units)
and a linear layer in float64, batch 32, unrolled over T time steps, MSE loss, then backward.
For each T it runs, each in a fresh process (so that peak memory is the configuration's own):
  per-node   the per-node walk (torchlike.autograd.fused.enabled = False);
  fused      the per-node walk the first time a graph is seen, one compiled program from the
             second time on (fused.fuse_after = 2 and buy_after = 0 here, where by
             default a graph waits until its savings would repay the compile, so that the
             second step shows the compile), for graphs of up to fused.max_nodes nodes;
  uncapped   the fused backward with no size cap (only up to --uncapped-max time steps: the
             compile grows faster than the graph);
  torch      the same loop in PyTorch, for reference.
It prints the graph's node count, the first, second and later (median of 5) forward+backward
step times, and each process's peak resident memory; the ratios are to the per-node walk of the
same T.  NOTE [ fused backward ] in torchlike/autograd/fused.py says how the cap was chosen.
Timings are printed, never asserted.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BATCH, HIDDEN = 32, 51


def one(t_steps, mode):
    """Run one configuration in this process; return its measurements."""
    if mode == "torch":
        import torch as lib
    else:
        sys.path.insert(0, str(ROOT))
        import torchlike as lib
        from torchlike.autograd import fused
        fused.enabled = mode != "per-node"
        fused.fuse_after, fused.buy_after = 2, 0
        if mode == "uncapped":
            fused.max_nodes = 10 ** 9
    lib.manual_seed(0)
    cell1 = lib.nn.LSTMCell(1, HIDDEN).double()
    cell2 = lib.nn.LSTMCell(HIDDEN, HIDDEN).double()
    head = lib.nn.Linear(HIDDEN, 1).double()
    x = lib.randn(BATCH, t_steps, dtype=lib.float64)
    target = lib.randn(BATCH, t_steps, dtype=lib.float64)
    params = [*cell1.parameters(), *cell2.parameters(), *head.parameters()]

    def step():
        for p in params:
            p.grad = None
        h1 = c1 = h2 = c2 = lib.zeros(BATCH, HIDDEN, dtype=lib.float64)
        outs = []
        for t in range(t_steps):
            h1, c1 = cell1(x[:, t:t + 1], (h1, c1))
            h2, c2 = cell2(h1, (h2, c2))
            outs.append(head(h2))
        loss = lib.nn.functional.mse_loss(lib.cat(outs, 1), target)
        nodes = count_nodes(loss.grad_fn)
        loss.backward()
        float(params[0].grad.sum())   # wait for the result
        return nodes

    times = []
    for _ in range(7):
        t0 = time.perf_counter()
        nodes = step()
        times.append(time.perf_counter() - t0)
    later = sorted(times[2:])[len(times[2:]) // 2]
    return {"nodes": nodes, "first_s": times[0], "second_s": times[1], "later_s": later,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def count_nodes(fn):
    """How many nodes the graph below ``fn`` (a grad_fn) has (bench_growth.py uses it too)."""
    seen, stack = set(), [fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        stack.extend(child for child, _ in node.next_functions)
    return len(seen)


def run_child(t_steps, mode, timeout):
    cmd = [sys.executable, __file__, "--child", f"{t_steps},{mode}"]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=True)
    except subprocess.TimeoutExpired:
        return {"error": f"over {timeout} s"}
    except subprocess.CalledProcessError as e:
        return {"error": (e.stderr.strip().splitlines() or ["failed"])[-1][:120]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", default="5,10,25,50,100",
                        help="comma-separated numbers of time steps (default 5,10,25,50,100)")
    parser.add_argument("--uncapped-max", type=int, default=50,
                        help="run the uncapped fused backward only up to this many time steps")
    parser.add_argument("--timeout", type=float, default=900,
                        help="seconds one configuration may take (default 900)")
    parser.add_argument("--json", metavar="PATH", help="also write the numbers as JSON here")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        t_steps, mode = args.child.split(",")
        print(json.dumps(one(int(t_steps), mode)))
        return
    try:
        import torch  # noqa: F401
        modes = ["per-node", "fused", "uncapped", "torch"]
    except ImportError:
        modes = ["per-node", "fused", "uncapped"]
    results = {}
    print("| T | nodes | mode | first s | second s | later s | later / per-node | peak MB |")
    print("|---|---|---|---|---|---|---|---|")
    for t_steps in (int(s) for s in args.steps.split(",")):
        row = results[t_steps] = {}
        for mode in modes:
            if mode == "uncapped" and t_steps > args.uncapped_max:
                continue
            r = row[mode] = run_child(t_steps, mode, args.timeout)
            if "error" in r:
                print(f"| {t_steps} | | {mode} | {r['error']} | | | | |")
                continue
            base = row.get("per-node", {}).get("later_s")
            ratio = f"{r['later_s'] / base:.2f}" if base else "-"
            print(f"| {t_steps} | {r['nodes']} | {mode} | {r['first_s']:.3f} | "
                  f"{r['second_s']:.3f} | {r['later_s']:.4f} | {ratio} | "
                  f"{r['peak_rss_mb']:.0f} |", flush=True)
    print(f"\nmachine: {os.cpu_count()} cores, python {sys.version.split()[0]}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
