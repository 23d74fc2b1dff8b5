"""Whether cost grows with the work or with history: long loops, a long graph, many shapes.

    python scripts/bench_growth.py [--cases rnn,train,graph,batches,lengths] [--steps 1000]
                                   [--nodes 50000] [--shapes 300] [--lengths 100]
                                   [--passes 3] [--torch-threads 1] [--timeout 1800]
                                   [--no-torch] [--json PATH]

Five cases, each run in a fresh process per library (torchlike, then PyTorch on CPU), so that
resident memory, compile counts and cache sizes are the case's own:
  rnn:      a recurrent loop: nn.LSTMCell(32, 64) applied --steps times to its own hidden state
            (batch 16, float32, input t of a (steps, 16, 32) tensor at step t), the mean of the
            squared last hidden state as the loss, backward; three rounds.  Per round: one cell
            application's time over the first and over the last 100 steps (medians), the
            backward's time, the graph's node count, memory after the round, the compiles.
  train:    --steps training steps of MLP 32-64-64-4 (ReLU), batch 16 sliced from a dataset of
            100 batches (x[i*16:(i+1)*16]: the slice start varies), cross-entropy, SGD with
            momentum and an ExponentialLR schedule (the learning rate changes every step),
            loss.item() every step: the step time over the first and the last 100 steps
            (medians), resident memory every 100 steps, the compiles after step 100.
  graph:    --nodes chained small ops (y = y * 1.0001, then y = y + 0.0001, alternately, on 64
            floats that require grad; sum() is the last node), backward, three times: the time
            to record (and per op over the first and the last tenth of the chain), to run the
            backward and to free the graph, memory, and whether it finished (no RecursionError).
  batches:  the train case's model over --shapes distinct batch sizes (1, 2, ...), zero_grad,
            forward, backward and SGD step each, in --passes passes over the same sizes.
  lengths:  an embedding (64 tokens, 32 wide) and the rnn case's cell unrolled over --lengths
            distinct sequence lengths (1, 2, ...; batch 16), a linear head on the last hidden
            state, cross-entropy, backward and SGD step, in --passes passes.
            For both shape cases, per pass: its time, the compiles and their seconds, memory
            after it.  The first pass compiles each op once per new shape; a later pass should
            compile nothing, except that the fused backward (NOTE [ fused backward ] in
            torchlike/autograd/fused.py) compiles a graph the second time it sees it, so the
            second pass is where its programs come.

What each torchlike process counts:
  compiles    XLA compilations, from jax.monitoring's backend-compile events (their number and
              seconds), and jaxpr traces beside them;
  gc          collections of Python's cyclic garbage collector and their seconds (gc.callbacks;
              counted for torch too): torchlike's graph nodes and Tensors are Python objects,
              PyTorch's are C++ objects the collector never scans;
  caches      every container at module level in torchlike (dicts, sets, lists, weak
              containers, functools caches), the per-op caches (Op._fwd, Op._bwd,
              Op._specialised) summed over all Ops, and the live jax.jit functions with the
              executables their caches hold; the report lists the ones that grew between the
              case's first round (or pass, or 100 steps) and its end;
  live        graph nodes (autograd.graph.Node) and Tensors alive at the end, found by the
              garbage collector: a graph that backward freed and the program dropped leaves
              none behind.
Memory: "RSS" is /proc/self/statm's resident size; "live" is the same after gc.collect() and
glibc's malloc_trim(0), i.e. without freed heap that glibc keeps for reuse (the RSS of a
process that builds and frees large graphs creeps up while its live memory stays flat);
"peak" is getrusage's maximum.  Each process has --timeout seconds.

Times are from time.perf_counter around each step on this machine (for the train case after
loss.item(), so each step's work is finished); they are printed beside PyTorch's, never
asserted.  A number that grows with the steps, rounds or passes while the work per step stays
the same is what this script looks for.  PyTorch runs with --torch-threads threads (default 1:
on a machine that other work keeps busy, more threads wait on each other).
"""
import argparse
import ctypes
import functools
import gc
import json
import os
import platform
import resource
import subprocess
import sys
import time
import weakref
from pathlib import Path

import numpy as np

from bench_backward import count_nodes   # the scripts' directory is on sys.path when run

ROOT = Path(__file__).resolve().parents[1]
CASES = ("rnn", "train", "graph", "batches", "lengths")
BATCH, SIZES = 16, (32, 64, 64, 4)
RNN_IN, RNN_HIDDEN, VOCAB = 32, 64, 64
WINDOW = 100   # steps at the start and at the end of a loop whose median times are compared


# --- what a process measures about itself --------------------------------------------------------

def rss_mb():
    """The process's resident memory now, in MB."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20


def live_mb():
    """Resident memory after a garbage collection and glibc's malloc_trim, in MB (None where
    there is no glibc)."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        return None
    return rss_mb()


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def memory():
    return {"rss_mb": rss_mb(), "live_mb": live_mb()}


class Counters:
    """XLA compilations and jaxpr traces (jax.monitoring's events; in the torchlike process
    only) and the collections of Python's garbage collector, with their seconds."""

    def __init__(self, jax_events):
        self.counts = {"compiles": 0, "compile_s": 0.0, "traces": 0} if jax_events else {}
        self.counts.update(gc=0, gc_s=0.0)
        self._gc_start = None
        gc.callbacks.append(self._gc)
        if jax_events:
            from jax import monitoring
            from jax._src import dispatch
            self._compile = dispatch.BACKEND_COMPILE_EVENT
            self._trace = dispatch.JAXPR_TRACE_EVENT
            monitoring.register_event_duration_secs_listener(self._jax)

    def _jax(self, event, duration, **kwargs):
        if event == self._compile:
            self.counts["compiles"] += 1
            self.counts["compile_s"] += duration
        elif event == self._trace:
            self.counts["traces"] += 1

    def _gc(self, phase, info):
        if phase == "start":
            self._gc_start = time.perf_counter()
        elif self._gc_start is not None:
            self.counts["gc"] += 1
            self.counts["gc_s"] += time.perf_counter() - self._gc_start

    def now(self):
        return dict(self.counts)

    def since(self, before):
        return {k: v - before[k] for k, v in self.counts.items()}


_CONTAINERS = (dict, set, list, weakref.WeakKeyDictionary, weakref.WeakValueDictionary,
               weakref.WeakSet)


def cache_sizes():
    """{name: size} of every container at module level in torchlike, of the per-Op caches
    summed over all Ops, of the live jax.jit functions and the executables they hold, and of
    the graph nodes and Tensors alive."""
    sizes = {}
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "torchlike" or name.startswith("torchlike.")):
            continue
        for attr, value in list(vars(module).items()):
            if attr.startswith("__"):
                continue
            if isinstance(value, _CONTAINERS):
                sizes[f"{name}.{attr}"] = len(value)
            elif isinstance(value, functools._lru_cache_wrapper) and \
                    getattr(value, "__module__", None) == name:
                sizes[f"{name}.{attr}()"] = value.cache_info().currsize
    import jax
    from torchlike import Tensor
    from torchlike._dispatch import Op
    from torchlike.autograd.graph import Node
    jit_type = type(jax.jit(abs))
    ops = fns = executables = nodes = tensors = 0
    per_op = dict.fromkeys(("_fwd", "_bwd", "_specialised"), 0)
    for obj in gc.get_objects():
        t = type(obj)
        if t is Op:
            ops += 1
            for k in per_op:
                per_op[k] += len(getattr(obj, k))
        elif t is jit_type:
            fns += 1
            executables += obj._cache_size()
        elif isinstance(obj, Node):
            nodes += 1
        elif isinstance(obj, Tensor):
            tensors += 1
    sizes.update({f"Op.{k} (all {ops} Ops)": v for k, v in per_op.items()})
    sizes.update({"jax.jit functions alive": fns, "jax.jit executables cached": executables,
                  "live graph nodes": nodes, "live Tensors": tensors})
    return sizes


def median(xs):
    return float(np.median(xs)) if len(xs) else None


# --- the cases, written once for torchlike and torch ---------------------------------------------

def mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(SIZES[0], SIZES[1]), nn.ReLU(), nn.Linear(SIZES[1], SIZES[2]),
                         nn.ReLU(), nn.Linear(SIZES[2], SIZES[3]))


def case_rnn(lib, args, counter, mark):
    cell = lib.nn.LSTMCell(RNN_IN, RNN_HIDDEN)
    xs = lib.randn(args.steps, BATCH, RNN_IN)
    rounds = []
    for _ in range(3):
        before = counter.now()
        h = c = lib.zeros(BATCH, RNN_HIDDEN)
        times = []
        for t in range(args.steps):
            t0 = time.perf_counter()
            h, c = cell(xs[t], (h, c))
            times.append(time.perf_counter() - t0)
        loss = h.pow(2).mean()
        float(loss.detach())
        nodes = count_nodes(loss.grad_fn)
        t0 = time.perf_counter()
        loss.backward()
        float(cell.weight_hh.grad.sum())
        backward_s = time.perf_counter() - t0
        cell.zero_grad(set_to_none=True)
        del loss, h, c
        rounds.append({"first_us": median(times[:WINDOW]) * 1e6,
                       "last_us": median(times[-WINDOW:]) * 1e6, "backward_s": backward_s,
                       "nodes": nodes, **counter.since(before), **memory()})
        mark("round 1")
    return {"rounds": rounds}


def case_train(lib, args, counter, mark):
    lib.manual_seed(0)
    model = mlp(lib)
    opt = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    sched = lib.optim.lr_scheduler.ExponentialLR(opt, gamma=0.999)
    n_batches = 100
    rng = np.random.default_rng(0)
    data = lib.from_numpy(rng.standard_normal((n_batches * BATCH, SIZES[0]), dtype=np.float32))
    labels = lib.from_numpy(rng.integers(0, SIZES[-1], n_batches * BATCH))
    loss_fn = lib.nn.CrossEntropyLoss()
    times, rss, before = [], [], None
    for step in range(args.steps):
        t0 = time.perf_counter()
        i = step % n_batches
        x, y = data[i * BATCH:(i + 1) * BATCH], labels[i * BATCH:(i + 1) * BATCH]
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        sched.step()
        loss.item()
        times.append(time.perf_counter() - t0)
        if (step + 1) % 100 == 0:
            rss.append(rss_mb())
        if step + 1 == WINDOW:
            mark(f"first {WINDOW} steps")
            before = counter.now()
    return {"first_us": median(times[:WINDOW]) * 1e6, "last_us": median(times[-WINDOW:]) * 1e6,
            "rss_every_100": rss, "after_warm": counter.since(before), **memory()}


def case_graph(lib, args, counter, mark):
    runs = []
    x = lib.randn(64, requires_grad=True)
    tenth = max(1, args.nodes // 10)
    for _ in range(3):
        before = counter.now()
        t0 = time.perf_counter()
        y, marks = x, []
        for i in range(args.nodes - 1):
            if i % tenth == 0:
                marks.append(time.perf_counter())
            y = y * 1.0001 if i % 2 == 0 else y + 0.0001
        marks.append(time.perf_counter())
        loss = y.sum()
        float(loss.detach())
        record_s = time.perf_counter() - t0
        # NOTE: walking PyTorch 2.13's graph from Python (grad_fn.next_functions) at this depth
        # and freeing the graph afterwards crashes it (a segmentation fault), so the PyTorch
        # process takes the count from the construction
        nodes = count_nodes(loss.grad_fn) if lib.__name__ == "torchlike" else args.nodes
        t0 = time.perf_counter()
        error = None
        try:
            loss.backward()
            float(x.grad.sum())
        except RecursionError as e:
            error = f"RecursionError: {e}"
        backward_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        del loss, y
        free_s = time.perf_counter() - t0
        x.grad = None
        runs.append({"nodes": nodes, "record_s": record_s,
                     "first_tenth_us": (marks[1] - marks[0]) / tenth * 1e6,
                     "last_tenth_us": (marks[-1] - marks[-2]) / tenth * 1e6,
                     "backward_s": backward_s, "free_s": free_s, "error": error,
                     "peak_mb": peak_mb(), **counter.since(before), **memory()})
        mark("run 1")
    return {"runs": runs}


def shape_passes(step, batches, args, counter, mark):
    """Run ``step`` over every batch, --passes times; per pass its time, counts and memory."""
    passes = [{"s": 0.0, **memory()}]   # before the first pass
    for _ in range(args.passes):
        before = counter.now()
        t0 = time.perf_counter()
        for batch in batches:
            step(*batch)
        passes.append({"s": time.perf_counter() - t0, **counter.since(before), **memory()})
        mark("pass 1")
    return {"passes": passes, "shapes": len(batches)}


def case_batches(lib, args, counter, mark):
    lib.manual_seed(0)
    model = mlp(lib)
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = lib.nn.CrossEntropyLoss()
    rng = np.random.default_rng(0)   # numpy data: making it compiles nothing
    batches = [(lib.from_numpy(rng.standard_normal((b, SIZES[0]), dtype=np.float32)),
                lib.from_numpy(rng.integers(0, SIZES[-1], b))) for b in range(1, args.shapes + 1)]

    def step(x, y):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        loss.item()
    return shape_passes(step, batches, args, counter, mark)


def case_lengths(lib, args, counter, mark):
    lib.manual_seed(0)
    nn = lib.nn
    embed, cell, head = nn.Embedding(VOCAB, RNN_IN), nn.LSTMCell(RNN_IN, RNN_HIDDEN), \
        nn.Linear(RNN_HIDDEN, SIZES[-1])
    params = [*embed.parameters(), *cell.parameters(), *head.parameters()]
    opt = lib.optim.SGD(params, lr=0.01)
    rng = np.random.default_rng(0)
    batches = [(lib.from_numpy(rng.integers(0, VOCAB, (BATCH, t))),
                lib.from_numpy(rng.integers(0, SIZES[-1], BATCH)))
               for t in range(1, args.lengths + 1)]

    def step(tokens, y):
        opt.zero_grad()
        xs = embed(tokens)
        h = c = lib.zeros(BATCH, RNN_HIDDEN)
        for t in range(tokens.shape[1]):
            h, c = cell(xs[:, t], (h, c))
        loss = nn.functional.cross_entropy(head(h), y)
        loss.backward()
        opt.step()
        loss.item()
    return shape_passes(step, batches, args, counter, mark)


# --- one process per case and library ------------------------------------------------------------

def child(case, library, args):
    """Run ``case`` on ``library`` in this process; return its measurements."""
    if library == "torch":
        import torch as lib
        lib.set_num_threads(args.torch_threads)
        counter = Counters(jax_events=False)
    else:
        sys.path.insert(0, str(ROOT))
        counter = Counters(jax_events=True)
        import torchlike as lib
    lib.manual_seed(0)
    start, marked = live_mb(), {}

    def mark(label):
        """Note the caches' sizes at the first call (torchlike only)."""
        if library == "torchlike" and not marked:
            marked[label] = cache_sizes()
    result = globals()["case_" + case](lib, args, counter, mark)
    result.update(start_live_mb=start, end_live_mb=live_mb(), peak_mb=peak_mb(),
                  total=counter.now())
    if marked:
        (label, before), = marked.items()
        after = cache_sizes()
        result["grown_since"] = label
        result["grown"] = {k: [before.get(k, 0), v] for k, v in after.items()
                           if v > before.get(k, 0)}
        result["live"] = {k: after[k] for k in ("live graph nodes", "live Tensors")}
    return result


def run_child(case, library, args):
    cmd = [sys.executable, __file__, "--child", f"{case},{library}"]
    for name in ("steps", "nodes", "shapes", "lengths", "passes", "torch_threads"):
        cmd += ["--" + name.replace("_", "-"), str(getattr(args, name))]
    path = [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path))
    t0 = time.perf_counter()
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout,
                             check=True, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"over {args.timeout:.0f} s"}
    except subprocess.CalledProcessError as e:
        last = (e.stderr.strip().splitlines() or ["no output"])[-1][:200]
        return {"error": f"exit status {e.returncode}: {last}"}
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["process_s"] = time.perf_counter() - t0
    return result


# --- the report ----------------------------------------------------------------------------------

def fmt(v, digits=1):
    if v is None:
        return "-"
    return f"{v:.{digits}f}" if isinstance(v, float) else str(v)


def table(header, rows):
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")


def counts(row):
    return [fmt(row.get("compiles")), fmt(row.get("compile_s"), 2), fmt(row["gc_s"], 2)]


def report(case, results):
    print(f"\n### {case}")
    ok = {lib: r for lib, r in results.items() if "error" not in r}
    for lib, r in results.items():
        if "error" in r:
            print(f"{lib}: {r['error']}")
    mem = ["RSS MB", "live MB"]
    if case == "rnn":
        table(["round", "lib", "step us, first 100", "step us, last 100", "backward s", "nodes",
               "compiles", "compile s", "gc s", *mem],
              [[str(i), lib, fmt(row["first_us"]), fmt(row["last_us"]),
                fmt(row["backward_s"], 3), str(row["nodes"]), *counts(row),
                fmt(row["rss_mb"]), fmt(row["live_mb"])]
               for lib, r in ok.items() for i, row in enumerate(r["rounds"], 1)])
    elif case == "train":
        table(["lib", "step us, first 100", "step us, last 100", "last / first",
               "RSS MB every 100 steps", "compiles after step 100", "gc s", "live MB"],
              [[lib, fmt(r["first_us"]), fmt(r["last_us"]), f"{r['last_us'] / r['first_us']:.2f}",
                " ".join(f"{v:.0f}" for v in r["rss_every_100"]),
                fmt(r["after_warm"].get("compiles")), fmt(r["total"]["gc_s"], 2),
                fmt(r["live_mb"])] for lib, r in ok.items()])
    elif case == "graph":
        table(["run", "lib", "nodes", "record s", "us/op, first tenth", "us/op, last tenth",
               "backward s", "free s", "compiles", "compile s", "gc s", *mem, "peak MB",
               "error"],
              [[str(i), lib, str(row["nodes"]), fmt(row["record_s"], 2),
                fmt(row["first_tenth_us"]), fmt(row["last_tenth_us"]),
                fmt(row["backward_s"], 2), fmt(row["free_s"], 3), *counts(row),
                fmt(row["rss_mb"]), fmt(row["live_mb"]), fmt(row["peak_mb"]),
                row["error"] or ""]
               for lib, r in ok.items() for i, row in enumerate(r["runs"], 1)])
    else:
        rows = []
        for lib, r in ok.items():
            before, *passes = r["passes"]
            for i, row in enumerate(passes, 1):
                rows.append([str(i), lib, fmt(row["s"], 2),
                             fmt(row["s"] / r["shapes"] * 1e3), *counts(row),
                             fmt(row.get("traces")), fmt(row["rss_mb"]), fmt(row["live_mb"]),
                             fmt(row["live_mb"] - before["live_mb"])])
        table(["pass", "lib", "s", "ms per shape", "compiles", "compile s", "gc s", "traces",
               *mem, "live MB since start"], rows)
    for lib, r in ok.items():
        print(f"{lib}: live {fmt(r['start_live_mb'], 0)} MB at start, "
              f"{fmt(r['end_live_mb'], 0)} MB at end, peak RSS {r['peak_mb']:.0f} MB; "
              f"process {r['process_s']:.1f} s")
        if "grown" in r:
            print(f"  alive at the end: {r['live']}")
            print(f"  torchlike's caches that grew after {r['grown_since']} (then -> end):")
            for k, (a, b) in sorted(r["grown"].items()):
                print(f"    {k}: {a} -> {b}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=",".join(CASES),
                        help=f"comma-separated cases (default {','.join(CASES)})")
    parser.add_argument("--steps", type=int, default=1000,
                        help="steps of the rnn and train loops (default 1000)")
    parser.add_argument("--nodes", type=int, default=50000,
                        help="nodes of the graph case (default 50000)")
    parser.add_argument("--shapes", type=int, default=300,
                        help="distinct batch sizes of the batches case (default 300)")
    parser.add_argument("--lengths", type=int, default=100,
                        help="distinct sequence lengths of the lengths case (default 100)")
    parser.add_argument("--passes", type=int, default=3,
                        help="passes over the shapes in the shape cases (default 3)")
    parser.add_argument("--torch-threads", type=int, default=1,
                        help="torch.set_num_threads in the PyTorch processes (default 1)")
    parser.add_argument("--timeout", type=float, default=1800,
                        help="seconds one process may take (default 1800)")
    parser.add_argument("--no-torch", action="store_true", help="leave PyTorch out")
    parser.add_argument("--json", metavar="PATH", help="also write the numbers as JSON here")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        case, library = args.child.split(",")
        print(json.dumps(child(case, library, args)))
        return
    libraries = ["torchlike"]
    if not args.no_torch:
        try:
            import torch  # noqa: F401
            libraries.append("torch")
        except ImportError:
            print("PyTorch is not installed: torchlike alone")
    all_results = {}
    for case in args.cases.split(","):
        if case not in CASES:
            parser.error(f"unknown case {case!r} (cases: {', '.join(CASES)})")
        results = all_results[case] = {lib: run_child(case, lib, args) for lib in libraries}
        report(case, results)
    print(f"\nenv: python {platform.python_version()}, {os.cpu_count()} cores, "
          f"steps={args.steps}, nodes={args.nodes}, shapes={args.shapes}, "
          f"lengths={args.lengths}, passes={args.passes}, torch threads={args.torch_threads}")
    if args.json:
        Path(args.json).write_text(json.dumps(all_results, indent=2) + "\n")


if __name__ == "__main__":
    main()
