"""Whole PyTorch programs end to end: wall time on torchlike next to real PyTorch.

    python scripts/bench_programs.py [--programs word_lstm,lstm_timeseries,...] [--repeats N]
                                     [--timeout SECONDS] [--cpus N] [--no-compile-log]
                                     [--by-op] [--by-op-rows N] [--profile] [--json PATH]

Programs (examples/pytorch/, run unmodified, with the arguments shown in PROGRAMS below):
  word_lstm        a word-level LSTM language model on pydoc_data.topics (embedding 64, 2-layer
                   nn.LSTM 128, 2,000 words), truncated back-propagation through time, SGD by
                   hand with gradient clipping, held-out loss after every epoch;
  lstm_timeseries  two nn.LSTMCell layers stepped through 100 samples of 24 sine waves in a Python
                   loop, fitted in float64 with torch.optim.LBFGS (40 closure calls, each the
                   whole sequence forward and backward), then continuing held-out waves;
  cnn_digits       a small CNN (conv, batch norm, max-pool, dropout) on scikit-learn's 8x8
                   digits, DataLoader batches of 64, Adam and StepLR, a checkpoint saved and
                   reloaded;
  char_lstm        a character-level nn.LSTM language model, Adam, cosine schedule, greedy
                   sampling one character at a time;
  lbfgs_fit        a five-parameter curve fit with LBFGS and a strong-Wolfe line search: little
                   arithmetic, so mostly start-up and per-op cost;
  transformer_lm   a character-level causal Transformer language model (nn.TransformerEncoder,
                   2 pre-norm layers of width 32), AdamW with warmup and cosine decay, gradient
                   clipping, then a 40-character greedy sample whose context grows a character
                   a step (every op meets a new shape each step until the context is full).
The first three are the kinds of program the eager-speed target names (a word-level LSTM
language model, an LSTM time-series fit with LBFGS, a small MNIST-style CNN).

Each program runs as its own process, twice per repeat: ``python examples/pytorch/X.py ARGS`` on
real PyTorch and ``python -m torchlike examples/pytorch/X.py ARGS`` on torchlike, both with this
checkout first on PYTHONPATH, whose modules are byte-compiled first, as ``pip install`` leaves an
installed package (``byte_compile_torchlike``).  The runs interleave (torch, torchlike, torch,
torchlike, ... for --repeats N), so a change in the machine's load falls on both.  Wall time is
time.perf_counter from just before the process starts to its exit: the interpreter's start, the
imports, loading the data, every XLA compilation, training and evaluation all count, as they do for
someone who runs the program.  CPU time (user + system, from the children's resource usage) is
printed beside it: on a machine other work keeps busy it moves less than the wall time does.
Reports the median of each over the repeats and the ratio of the medians, torchlike / torch.  The
target is torchlike <= 1.5x torch's wall time.  The script prints and never asserts.

--cpus N runs every process on N of the machine's cores (its CPU affinity, set before the
interpreter starts): torch sizes its thread pool by it and XLA its own, so both libraries get
the same cores; without it each uses its default over all of them (NOTE [ threads on a busy
machine ]).  Each process has --timeout seconds; one that runs past it is killed and reported
as "timeout", one that fails as "exit N" with the end of its stderr.

Unless --no-compile-log, the torchlike runs log jax's compilations (JAX_LOG_COMPILES=1: four
lines to stderr per compilation, about 2 ms under cProfile, against the 30-150 ms each
compilation takes on a 2-core CPU) and
the report counts them: the number of XLA compilations, the seconds XLA spent compiling, the
seconds of tracing and lowering to MLIR before it, and the jitted functions (by name: torchlike's
per-op forwards are mostly "<lambda>", per-node backwards "bwd", fused backwards "run") whose
compilations took longest.  --by-op then runs each program once more on torchlike (not timed)
and attributes each compilation to the torchlike op it compiled for (NOTE [ compiles by op ]).
--profile then runs each program once more on torchlike under
cProfile (not timed) and prints its 25 costliest functions by own time and by cumulative time.

The result line: every program ends with a machine-readable line of key=value pairs.  The two
runs "agree" when both finished and printed one with the same keys; the values are printed side
by side and need not match (torchlike's random streams are not torch's; lbfgs_fit draws none and
matches torch to the last digits).
"""
import argparse
import collections
import compileall
import importlib.metadata
import json
import os
import platform
import pstats
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "pytorch"
TARGET = 1.5

# name -> the program's arguments: its sizes, at which each took 5-14 s on PyTorch on one core
# of the 2-core machine this script was written on
PROGRAMS = {
    "word_lstm": ["--epochs", "3", "--words", "40000", "--vocab", "2000"],
    "lstm_timeseries": ["--steps", "4", "--max-iter", "10", "--length", "100", "--series", "24"],
    "cnn_digits": ["--epochs", "4"],
    "char_lstm": ["--steps", "300"],
    "lbfgs_fit": ["--steps", "5"],
    "transformer_lm": ["--steps", "300", "--sample-chars", "40"],
}
SIDES = ("torch", "torchlike")
RESULT = re.compile(r"(\w+)=(\S+)")
XLA_COMPILE = re.compile(r"Finished XLA compilation of (\S+) in ([\d.e+-]+) sec")
LOWERING = re.compile(r"Finished jaxpr to MLIR module conversion \S+ in ([\d.e+-]+) sec")
TRACING = re.compile(r"Finished tracing \S+ for \S+ in ([\d.e+-]+) sec")

# NOTE [ threads on a busy machine ]
# torch's CPU kernels split work over an OpenMP pool of one thread per core, and a parallel
# region ends only when every thread has finished its share.  When other processes keep a core
# busy, the threads wait on each other (and spin while they wait).  On the 2-core machine this
# script was written on, at a load average of 3-4 from other work, char_lstm took 316 s wall
# (69 s of CPU) on torch with its default two threads and 8.7 s (8.4 s of CPU) on one core;
# torchlike took 145 s and 21.8 s.  Wall-time ratios taken on a busy machine with the default
# threads therefore mostly measure the load.  --cpus 1 gives both libraries one core: it is the
# setting to compare on a shared machine, and the default the one to report on an idle one.

# NOTE [ compiles by op ]
# JAX_LOG_COMPILES names the jitted function, and torchlike's per-op programs are mostly
# "<lambda>", "cast" or "bwd".  --by-op runs the program in this script's own process
# (census_child) with a listener on jax's compile duration events (jax.monitoring: tracing,
# lowering to MLIR, XLA's backend compile), which jax calls in the thread that compiles, inside
# the call that needed the program.  The listener walks the Python stack outward to the first
# torchlike frame that names the work: dispatch's ``_call`` (an op's forward: "fwd <op>"), an
# OpNode's ``apply`` (its backward: "bwd <op>"), the fused backward, a view chain (_views.py),
# else the innermost torchlike function ("<file>:<function>").  Each compilation is also keyed
# by the op's static arguments and operand shapes, so "keys" counts the distinct ones: an op
# with as many keys as compilations compiles once per shape or per static value.


def command(side, name, profile_to=None):
    prefix = ["-m", "torchlike"] if side == "torchlike" else []
    if profile_to:
        prefix = ["-m", "cProfile", "-o", profile_to, *prefix]
    return [sys.executable, *prefix, str(EXAMPLES / f"{name}.py"), *PROGRAMS[name]]


def environment(side, log_compiles):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env.pop("JAX_LOG_COMPILES", None)
    if side == "torchlike" and log_compiles:
        env["JAX_LOG_COMPILES"] = "1"
    return env


def result_line(stdout):
    """{key: value} of the last line that has key=value pairs, or None."""
    for line in reversed(stdout.strip().splitlines()):
        pairs = RESULT.findall(line)
        if pairs:
            return dict(pairs)
    return None


def compile_log(stderr):
    """What JAX_LOG_COMPILES wrote: the compilations, their seconds, and the jitted functions
    (by name) that took the most compile time, as [name, compilations, seconds]."""
    compiles = [(name, float(s)) for name, s in XLA_COMPILE.findall(stderr)]
    by_name = collections.defaultdict(lambda: [0, 0.0])
    for name, s in compiles:
        by_name[name][0] += 1
        by_name[name][1] += s
    costliest = sorted(([n, c, s] for n, (c, s) in by_name.items()), key=lambda r: -r[2])
    return {"xla_compiles": len(compiles),
            "xla_compile_s": sum(s for _, s in compiles),
            "lowering_s": sum(float(s) for s in LOWERING.findall(stderr)),
            "tracing_s": sum(float(s) for s in TRACING.findall(stderr)),
            "costliest": costliest[:4]}


def run_once(side, name, args, profile_to=None):
    """One process start to exit: {"status", "wall_s", "cpu_s", "result", ...}; under cProfile
    (writing to ``profile_to``) without the compile log."""
    log = args.compile_log and not profile_to
    cpus = None
    if args.cpus:
        cpus = sorted(os.sched_getaffinity(0))[:args.cpus]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(command(side, name, profile_to), cwd=REPO,
                            env=environment(side, log),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True,
                            preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None)
    try:
        out, err = proc.communicate(timeout=args.timeout)
        status = "ok" if proc.returncode == 0 else f"exit {proc.returncode}"
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)    # the program and anything it started
        out, err = proc.communicate()
        status = "timeout"
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    run = {"status": status, "wall_s": wall, "cpu_s": cpu, "result": result_line(out)}
    if status == "ok" and run["result"] is None:
        run["status"] = "no result line"
    if run["status"] != "ok":
        run["stderr_tail"] = err.strip().splitlines()[-8:]
    if side == "torchlike" and log:
        run["compiles"] = compile_log(err)
    return run


_COMPILE_EVENTS = {"/jax/core/compile/jaxpr_trace_duration": "tracing_s",
                   "/jax/core/compile/jaxpr_to_mlir_module_duration": "lowering_s",
                   "/jax/core/compile/backend_compile_duration": "xla_s"}


def _compiled_for(frame):
    """(what a compilation is for, its key): the first torchlike frame outward from ``frame``
    that names it (NOTE [ compiles by op ])."""
    inner = None
    while frame is not None:
        code = frame.f_code
        path = code.co_filename
        if f"{os.sep}torchlike{os.sep}" in path:
            where = f"{os.path.basename(path)}:{code.co_name}"
            inner = inner or where
            local = frame.f_locals
            if code.co_name == "_call" and path.endswith("_dispatch.py"):
                shapes = [getattr(a, "shape", type(a).__name__) for a in local["arrays"]]
                return f"fwd {local['op'].name}", repr((local["static"], shapes))
            if code.co_name == "apply" and path.endswith("graph.py") and "op" in local:
                shapes = [getattr(a, "shape", None) for a in local.get("primals", ())]
                return f"bwd {local['op'].name}", repr((local["static"], local["mask"], shapes))
            if path.endswith("fused.py"):
                return "fused backward", ""
            if path.endswith("_views.py"):
                return f"view chain ({code.co_name})", ""
        frame = frame.f_back
    return inner or "the program itself", ""


def census_child(path, argv):
    """Run ``python -m torchlike argv`` in this process, write its compilations by op to
    ``path`` (JSON) and return its exit status."""
    import jax
    import torchlike.__main__
    records = []

    def listen(event, seconds, **kwargs):
        kind = _COMPILE_EVENTS.get(event)
        if kind:
            records.append((kind, seconds, *_compiled_for(sys._getframe(1))))

    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        return torchlike.__main__.main(argv)
    finally:
        with open(path, "w") as f:
            json.dump(records, f)


def by_op(records):
    """[[what, XLA compiles, XLA s, tracing + lowering s, distinct keys]], costliest first."""
    rows = collections.defaultdict(lambda: [0, 0.0, 0.0, set()])
    for kind, seconds, what, key in records:
        row = rows[what]
        if kind == "xla_s":
            row[0] += 1
            row[1] += seconds
        else:
            row[2] += seconds
        row[3].add(key)
    table = [[what, n, xla, other, len(keys)] for what, (n, xla, other, keys) in rows.items()]
    return sorted(table, key=lambda r: -(r[2] + r[3]))


def census(name, args):
    """Run ``name`` once more on torchlike and print its compilations by op."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, f"{name}.json")
        cmd = [sys.executable, __file__, "--census-child", path,
               str(EXAMPLES / f"{name}.py"), *PROGRAMS[name]]
        cpus = sorted(os.sched_getaffinity(0))[:args.cpus] if args.cpus else None
        proc = subprocess.run(cmd, cwd=REPO, env=environment("torchlike", False),
                              capture_output=True, text=True, timeout=args.timeout,
                              preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None)
        if proc.returncode != 0:
            print(f"\n{name}: census run failed (exit {proc.returncode})")
            return None
        with open(path) as f:
            table = by_op(json.load(f))
    print(f"\n{name} on torchlike, compilations by op (NOTE [ compiles by op ]; one run)")
    print("| compiled for | XLA compiles | XLA s | tracing + lowering s | keys |")
    print("|---|---|---|---|---|")
    total = [sum(r[i] for r in table) for i in (1, 2, 3)]
    print(f"| all | {total[0]} | {total[1]:.2f} | {total[2]:.2f} | |")
    for what, n, xla, other, keys in table[:args.by_op_rows]:
        print(f"| {what} | {n} | {xla:.2f} | {other:.2f} | {keys} |")
    return table


def profile(name, args):
    """Run ``name`` on torchlike under cProfile and print its costliest functions."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, f"{name}.prof")
        run = run_once("torchlike", name, args, profile_to=path)
        print(f"\n{name} on torchlike under cProfile: {run['status']}, {run['wall_s']:.2f} s wall")
        if run["status"] != "ok":
            return
        stats = pstats.Stats(path, stream=sys.stdout)
        for key in ("tottime", "cumulative"):
            stats.sort_stats(key).print_stats(25)


def summarize(runs):
    """Medians over the runs that finished, or the first failure's status."""
    done = [r for r in runs if r["status"] == "ok"]
    if len(done) < len(runs):
        return {"status": next(r["status"] for r in runs if r["status"] != "ok")}
    summary = {"status": "ok",
               "wall_s": statistics.median(r["wall_s"] for r in done),
               "cpu_s": statistics.median(r["cpu_s"] for r in done),
               "result": done[-1]["result"]}
    if "compiles" in done[-1]:
        logs = [r["compiles"] for r in done]
        summary["compiles"] = {key: statistics.median(log[key] for log in logs)
                               for key in ("xla_compiles", "xla_compile_s", "lowering_s",
                                           "tracing_s")}
        summary["compiles"]["costliest"] = logs[-1]["costliest"]
    return summary


def byte_compile_torchlike():
    """Byte-compile this checkout's torchlike, as ``pip install`` leaves an installed package:
    where PYTHONDONTWRITEBYTECODE is set (it is on the machine these scripts were written on)
    every process would otherwise compile its ~280 modules from source (about 0.4 s of each
    start), which no installed copy does; the torch it is compared with is installed."""
    compileall.compile_dir(REPO / "torchlike", quiet=1)


def print_environment(args):
    env = {"python": platform.python_version(), "jax": _version("jax"),
           "torch": _version("torch"), "cpu_count": os.cpu_count(),
           "cpus": args.cpus or "all", "repeats": args.repeats, "timeout_s": args.timeout,
           "load_average": " ".join(f"{x:.2f}" for x in os.getloadavg())}
    print("env:", ", ".join(f"{k}={v}" for k, v in env.items()))
    return env


def _version(package):
    """The installed version (the libraries themselves are imported only by the programs)."""
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def fmt_s(summary, key):
    return f"{summary[key]:.2f}" if summary["status"] == "ok" else summary["status"]


def report(results):
    print()
    print("seconds per process, start to exit (median over repeats; markdown)")
    print("| program | torch wall | torchlike wall | wall ratio | torch cpu | torchlike cpu "
          "| cpu ratio | result lines agree |")
    print("|---|---|---|---|---|---|---|---|")
    for name, res in results.items():
        t, tl = res["torch"], res["torchlike"]
        cells = [fmt_s(t, "wall_s"), fmt_s(tl, "wall_s"), fmt_ratio(res, "wall_s"),
                 fmt_s(t, "cpu_s"), fmt_s(tl, "cpu_s"), fmt_ratio(res, "cpu_s"),
                 "yes" if res["agree"] else "NO"]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print(f"target: torchlike wall <= {TARGET}x torch's")

    print()
    print("result lines, side by side")
    for name, res in results.items():
        print(f"  {name}:")
        for side in SIDES:
            line = res[side].get("result")
            shown = " ".join(f"{k}={v}" for k, v in line.items()) if line else res[side]["status"]
            print(f"    {side:<9} {shown}")

    logged = {name: res["torchlike"]["compiles"] for name, res in results.items()
              if "compiles" in res["torchlike"]}
    if logged:
        print()
        print("torchlike's jax compilations per process (JAX_LOG_COMPILES; medians)")
        print("| program | XLA compiles | XLA compile s | lowering s | tracing s "
              "| share of wall | costliest (function: compiles, s) |")
        print("|---|---|---|---|---|---|---|")
        for name, log in logged.items():
            spent = log["xla_compile_s"] + log["lowering_s"] + log["tracing_s"]
            share = spent / results[name]["torchlike"]["wall_s"]
            most = "; ".join(f"{fn}: {n}, {s:.2f}" for fn, n, s in log["costliest"])
            print(f"| {name} | {log['xla_compiles']:.0f} | {log['xla_compile_s']:.2f} "
                  f"| {log['lowering_s']:.2f} | {log['tracing_s']:.2f} | {share:.0%} | {most} |")

    for name, res in results.items():
        for side in SIDES:
            for i, run in enumerate(res["runs"][side]):
                if run["status"] != "ok":
                    print(f"\n{name} on {side}, run {i + 1}: {run['status']}")
                    for line in run.get("stderr_tail", []):
                        print(f"    {line}")


def fmt_ratio(res, key):
    return f"{res['ratios'][key]:.2f}x" if res["ratios"] else "n/a"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["--census-child"]:   # census's child process: PATH PROGRAM ARGS...
        return census_child(argv[1], argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", default=",".join(PROGRAMS),
                        help=f"comma-separated subset of {','.join(PROGRAMS)} (default: all)")
    parser.add_argument("--repeats", type=int, default=1,
                        help="runs of each program on each side, interleaved (default 1)")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="seconds one process may run before it is killed (default 600)")
    parser.add_argument("--cpus", type=int, default=None,
                        help="run every process on this many cores (default: all of them)")
    parser.add_argument("--no-compile-log", dest="compile_log", action="store_false",
                        help="do not log and count torchlike's jax compilations")
    parser.add_argument("--by-op", action="store_true",
                        help="then run each program on torchlike once more and print its "
                             "compilations by op")
    parser.add_argument("--by-op-rows", type=int, default=20,
                        help="rows of each --by-op table (default 20)")
    parser.add_argument("--profile", action="store_true",
                        help="then run each program on torchlike under cProfile and print it")
    parser.add_argument("--json", metavar="PATH", help="also write the numbers as JSON here")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.programs.split(",") if n.strip()]
    for n in names:
        if n not in PROGRAMS:
            parser.error(f"unknown program {n!r}; choose from {', '.join(PROGRAMS)}")
    if args.repeats < 1:
        parser.error(f"--repeats {args.repeats}: at least 1")
    if args.cpus is not None and not 1 <= args.cpus <= len(os.sched_getaffinity(0)):
        parser.error(f"--cpus {args.cpus}: this process may use "
                     f"{len(os.sched_getaffinity(0))} cores")

    env = print_environment(args)
    byte_compile_torchlike()
    if args.cpus is None and os.getloadavg()[0] >= 1.0:
        print("the machine is busy: torch's threads will wait on each other, and --cpus 1 "
              "compares the two more fairly (NOTE [ threads on a busy machine ])")
    results = {}
    for name in names:
        runs = {side: [] for side in SIDES}
        for i in range(args.repeats):
            for side in SIDES:
                run = run_once(side, name, args)
                runs[side].append(run)
                print(f"{name} on {side}, run {i + 1}: {run['status']}, "
                      f"{run['wall_s']:.2f} s wall, {run['cpu_s']:.2f} s cpu", flush=True)
        res = {"args": PROGRAMS[name], "runs": runs,
               **{side: summarize(runs[side]) for side in SIDES}}
        lines = [res[side].get("result") for side in SIDES]
        res["agree"] = all(lines) and lines[0].keys() == lines[1].keys()
        t, tl = res["torch"], res["torchlike"]
        res["ratios"] = ({key: tl[key] / t[key] for key in ("wall_s", "cpu_s")}
                         if t["status"] == tl["status"] == "ok" else {})
        results[name] = res
    report(results)
    if args.by_op:
        for name in names:
            results[name]["by_op"] = census(name, args)
    if args.profile:
        for name in names:
            profile(name, args)
    env["load_average_end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\nload average at the end: {env['load_average_end']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"env": env, "target": TARGET, "programs": results}, f, indent=2)
        print(f"wrote {args.json}")


if __name__ == "__main__":
    sys.exit(main())
