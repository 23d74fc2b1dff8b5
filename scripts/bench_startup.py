"""Time to first step: a fresh process's import, model build and first training steps, torchlike
eager and torchlike.compile beside PyTorch, with JAX's persistent compilation cache off, cold
and warm.

    python scripts/bench_startup.py [--json PATH] [--rounds N] [--cases cnn,transformer]
                                    [--impls eager,compiled,torch] [--steps N]
                                    [--timeout SECONDS] [--torch-compile]

Workloads: the digits CNN (batch 64, Adam) and the 2-layer Transformer classifier (batch 8x32,
Adam) of scripts/bench_train.py, whose model, batch, optimizer and step this script imports from
there; each model starts from its library's own initialisation (seed 0).  Each is run as
  torchlike eager     the ordinary eager step;
  torchlike compiled  torchlike.compile(step): the first call runs eagerly, the second traces
                      and compiles the step's program, the third runs it;
  torch eager         the same step in PyTorch, for reference;
  torch compiled      torch.compile(step) (--torch-compile; inductor's first calls take tens of
                      seconds);
and torchlike's runs with JAX's persistent compilation cache (torchlike.compiler.config.cache_dir,
set here through TORCHLIKE_CACHE_DIR; NOTE [ persistent compilation cache ] in
torchlike/compiler.py)
  off    no cache, the default;
  cold   an empty directory: every program is compiled and written there;
  warm   a second process on the directory the cold one filled: every program is loaded.

Each run is a fresh Python process (this script with --child) that times, with
time.perf_counter: python (from the parent's launch to the child's first line: interpreter
start-up), import (``import torchlike`` or ``import torch``, JAX's import included), build (the
model, the optimizer and the batch, and torchlike.compile(step)), and each of the first --steps
steps, each waiting for its loss (``.item()``).  "first step" is launch to the end of step 1;
"ready" is launch to the end of step 3, by when eager (whose fused backward compiles at the
second step: NOTE [ fused backward ] in torchlike/autograd/fused.py) and compiled torchlike are
both in their steady state.  In torchlike's runs, jax.monitoring listeners count the XLA
programs each phase compiles and the seconds spent tracing them (to a jaxpr), lowering them (to
MLIR) and compiling them (XLA's backend, or loading the executable from the cache, which JAX
times as the same event), and the cache's hits and misses; "rest" is the phase's time outside
those (Python, running the programs).  The first step's XLA programs and their cost tell where
first-step time goes.

torchlike's modules are byte-compiled before the runs, as ``pip install`` leaves an installed
package (scripts/bench_programs.py's ``byte_compile_torchlike``).

Timing: the runs of a round go in a new random order (seeded), so a change in the machine's load
hits them all alike; a warm run follows its own cold run directly, as a restart would.  Every
child has a timeout (--timeout); a failed or timed-out run is reported and left out.  Reports
medians over --rounds rounds, in seconds, and the fastest round's first step and ready (other
work on the machine only adds time, and a start-up is one sample per process).  Timings are
printed, never asserted.
"""
import argparse
import importlib.metadata
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASES = ("cnn", "transformer")
MODES = ("off", "cold", "warm")
PHASES = ("import", "build", "step 1", "step 2", "step 3")
JAX_EVENTS = {"/jax/core/compile/jaxpr_trace_duration": "trace_s",
              "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower_s",
              "/jax/core/compile/backend_compile_duration": "xla_s"}


# --- the child: one fresh process, one workload ---------------------------------------------

def child(spec):
    """Run one workload in this fresh process and print its timings as one JSON line."""
    python_s = time.time() - spec["launched"]
    sys.path.insert(0, str(ROOT))
    lib_name = spec["impl"].split()[0]
    if lib_name == "torchlike":
        sys.modules["torch"] = None   # bench_train's torch columns stay empty: no torch here
    t0 = time.perf_counter()
    lib = __import__(lib_name)
    times = {"python": python_s, "import": time.perf_counter() - t0}

    xla = {}   # per phase: compiles, trace_s, lower_s, xla_s, cache hits and misses
    phase = "import"
    if lib_name == "torchlike":
        from jax import monitoring

        def on_duration(event, secs, **_):
            if event in JAX_EVENTS:
                counts = xla.setdefault(phase, {})
                counts[JAX_EVENTS[event]] = counts.get(JAX_EVENTS[event], 0.0) + secs
                if event.endswith("backend_compile_duration"):
                    counts["compiles"] = counts.get("compiles", 0) + 1

        def on_event(event, **_):
            name = event.rsplit("/", 1)[-1]
            if name in ("cache_hits", "cache_misses"):
                counts = xla.setdefault(phase, {})
                counts[name] = counts.get(name, 0) + 1
        monitoring.register_event_duration_secs_listener(on_duration)
        monitoring.register_event_listener(on_event)

    import bench_train   # scripts/ is on the path: this file's directory
    phase = "build"
    t0 = time.perf_counter()
    lib.manual_seed(0)
    step, _ = bench_train.torch_style_step(lib, spec["case"], None, 0.25)
    if spec["impl"].endswith("compiled"):
        step = lib.compile(step)
    times["build"] = time.perf_counter() - t0
    for i in range(spec["steps"]):
        phase = f"step {i + 1}"
        t0 = time.perf_counter()
        step().item()
        times[phase] = time.perf_counter() - t0
    print(json.dumps({"times": times, "xla": xla}))


# --- the parent: rounds of fresh processes ----------------------------------------------------

def run_child(case, impl, mode, cache_dir, args):
    """One fresh process: its record, or {"error": ...}."""
    env = {k: v for k, v in os.environ.items() if k != "TORCHLIKE_CACHE_DIR"}
    if mode != "off":
        env["TORCHLIKE_CACHE_DIR"] = cache_dir
    spec = {"case": case, "impl": impl, "steps": args.steps, "launched": time.time()}
    t0 = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)], env=env,
                              capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {args.timeout:.0f} s"}
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or ["(no output)"]
        return {"error": f"exit status {done.returncode}: {lines[-1][:200]}"}
    record = json.loads(done.stdout.strip().splitlines()[-1])
    record["wall_s"] = time.perf_counter() - t0
    return record


def disk_use(path):
    files = [p for p in Path(path).iterdir() if p.is_file()]
    return {"files": len(files), "bytes": sum(p.stat().st_size for p in files)}


IMPLS = {"eager": "torchlike eager", "compiled": "torchlike compiled", "torch": "torch eager"}


def units_for(cases, impls, args):
    """The runs of one round: (case, impl, modes); a (cold, warm) pair shares a directory."""
    units = []
    for case in cases:
        for impl in impls:
            if impl.startswith("torchlike"):
                units += [(case, impl, ("off",)), (case, impl, ("cold", "warm"))]
            else:
                units.append((case, impl, ("off",)))
        if args.torch_compile:
            units.append((case, "torch compiled", ("off",)))
    return units


def measure(cases, impls, args):
    """{(case, impl, mode): [record per round]}, and the cold runs' disk use."""
    records, disks = {}, {}
    order = random.Random(0)
    for r in range(args.rounds):
        units = units_for(cases, impls, args)
        order.shuffle(units)
        for case, impl, modes in units:
            cache_dir = tempfile.mkdtemp(prefix="bench_startup_") if modes != ("off",) else None
            try:
                for mode in modes:
                    rec = run_child(case, impl, mode, cache_dir, args)
                    records.setdefault((case, impl, mode), []).append(rec)
                    if "error" in rec:
                        print(f"  round {r + 1}: {case} {impl} {mode}: {rec['error']}")
                        break
                    if mode == "cold":
                        disks.setdefault((case, impl), []).append(disk_use(cache_dir))
            finally:
                if cache_dir is not None:
                    shutil.rmtree(cache_dir, ignore_errors=True)
        print(f"  round {r + 1} of {args.rounds} done")
    return records, disks


def summarise(recs, steps):
    """Medians over the rounds' good records: seconds per phase, first step, ready, and the
    XLA counts of each phase."""
    good = [r for r in recs if "error" not in r]
    if not good:
        return None
    med = lambda values: statistics.median(values)  # noqa: E731
    phases = ["python"] + [p for p in PHASES if p in good[0]["times"]]
    out = {"runs": len(good), "failed": len(recs) - len(good),
           "times": {p: med([r["times"][p] for r in good]) for p in phases}}
    ready_at = f"step {min(3, steps)}"
    cumulative = {"first_step": "step 1", "ready": ready_at}
    for key, last in cumulative.items():
        upto = phases[:phases.index(last) + 1]
        totals = [sum(r["times"][p] for p in upto) for r in good]
        out[key], out[key + "_best"] = med(totals), min(totals)
    xla = {}
    for p in phases:
        fields = {k for r in good for k in r["xla"].get(p, {})}
        if fields:
            xla[p] = {k: med([r["xla"].get(p, {}).get(k, 0) for r in good]) for k in fields}
    out["xla"] = xla
    return out


def fmt(v, digits=2):
    return "-" if v is None else f"{v:.{digits}f}"


def print_tables(cases, summary, disks, steps):
    phases = ["python"] + list(PHASES[:2 + steps])
    print("\nmedian seconds (markdown): python start-up, import, build, each step; first step ="
          " launch to the end of step 1, ready = launch to the end of step 3; best: the fastest"
          " round's (a busy machine only adds time)")
    cols = phases + ["first step", "ready", "best first step", "best ready", "step-1 programs",
                     "cache hits / misses"]
    for case in cases:
        print(f"\n{case}\n")
        print("| run | " + " | ".join(cols) + " |")
        print("|---" * (len(cols) + 1) + "|")
        for (c, impl, mode), s in summary.items():
            if c != case or s is None:
                continue
            x1 = s["xla"].get("step 1", {})
            allx = [v for v in s["xla"].values()]
            hits = sum(v.get("cache_hits", 0) for v in allx)
            misses = sum(v.get("cache_misses", 0) for v in allx)
            cells = [fmt(s["times"].get(p)) for p in phases]
            cells += [fmt(s["first_step"]), fmt(s["ready"]), fmt(s["first_step_best"]),
                      fmt(s["ready_best"]),
                      f"{x1.get('compiles', 0):.0f}" if impl.startswith("torchlike") else "-",
                      f"{hits:.0f} / {misses:.0f}" if mode != "off" else "-"]
            label = impl if impl.startswith("torch ") else f"{impl}, cache {mode}"
            print(f"| {label} | " + " | ".join(cells) + " |")
        for impl in ("torchlike eager", "torchlike compiled"):
            off, cold, warm = (summary.get((case, impl, m)) for m in MODES)
            if not (off and cold and warm):
                continue
            ratios = ", ".join(f"{label} warm / off {warm[key] / off[key]:.2f}x, cold / off "
                               f"{cold[key] / off[key]:.2f}x"
                               for label, key in (("first step", "first_step"),
                                                  ("ready", "ready")))
            d = disks.get((case, impl))
            if d:
                ratios += (f"; a cold run writes {statistics.median(x['files'] for x in d):.0f}"
                           f" files, {statistics.median(x['bytes'] for x in d) / 1e3:.0f} KB")
            print(f"  {impl}: {ratios}")
        torch_eager = summary.get((case, "torch eager", "off"))
        if torch_eager:
            for impl in ("torchlike eager", "torchlike compiled"):
                for mode in ("off", "warm"):
                    s = summary.get((case, impl, mode))
                    if s:
                        print(f"  {impl}, cache {mode}: first step "
                              f"{s['first_step'] / torch_eager['first_step']:.1f}x torch eager's")

    print("\nwhere each phase's time goes in torchlike (median seconds: XLA programs compiled "
          "or loaded, tracing, lowering, XLA compile or cache load, rest)")
    for (case, impl, mode), s in summary.items():
        if s is None or not impl.startswith("torchlike"):
            continue
        parts = []
        for p, x in s["xla"].items():
            if not x.get("compiles"):
                continue
            spent = x.get("trace_s", 0) + x.get("lower_s", 0) + x.get("xla_s", 0)
            parts.append(f"{p}: {x['compiles']:.0f} programs, trace {x.get('trace_s', 0):.2f} "
                         f"lower {x.get('lower_s', 0):.2f} xla {x.get('xla_s', 0):.2f} rest "
                         f"{s['times'][p] - spent:.2f}")
        print(f"  {case} {impl}, cache {mode}: " + "; ".join(parts))


def environment(args):
    def version(name):
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            return None
    env = {"python": platform.python_version(), "jax": version("jax"),
           "torch": version("torch"), "cpu_count": os.cpu_count(),
           "machine": platform.machine(), "rounds": args.rounds, "steps": args.steps,
           "XLA_FLAGS": os.environ.get("XLA_FLAGS")}
    print("\nenv:", ", ".join(f"{k}={v}" for k, v in env.items()))
    return env


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="PATH", help="also write the numbers as JSON here")
    parser.add_argument("--rounds", type=int, default=3,
                        help="fresh processes per run and mode (default 3; medians)")
    parser.add_argument("--cases", default=",".join(CASES),
                        help="comma-separated subset of cnn,transformer")
    parser.add_argument("--impls", default=",".join(IMPLS),
                        help="comma-separated subset of eager,compiled,torch (torchlike eager, "
                             "torchlike.compile, torch eager)")
    parser.add_argument("--steps", type=int, default=3, choices=(1, 2, 3),
                        help="training steps each process runs (default 3)")
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="seconds before a child process is stopped (default 300)")
    parser.add_argument("--torch-compile", action="store_true",
                        help="also run torch.compile(step) (tens of seconds per process)")
    parser.add_argument("--child", metavar="SPEC", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(json.loads(args.child))
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    for c in cases:
        if c not in CASES:
            parser.error(f"unknown case {c!r}; choose from {', '.join(CASES)}")
    impls = [i.strip() for i in args.impls.split(",") if i.strip()]
    for i in impls:
        if i not in IMPLS:
            parser.error(f"unknown implementation {i!r}; choose from {', '.join(IMPLS)}")
    impls = [IMPLS[i] for i in impls]

    # (imported here, not in the children: the scripts' directory is on sys.path)
    from bench_programs import byte_compile_torchlike
    byte_compile_torchlike()
    records, disks = measure(cases, impls, args)
    summary = {key: summarise(recs, args.steps) for key, recs in records.items()}
    summary = dict(sorted(summary.items(), key=lambda kv: (
        cases.index(kv[0][0]), kv[0][1].startswith("torch "), kv[0][1],
        MODES.index(kv[0][2]))))
    print_tables(cases, summary, disks, args.steps)
    env = environment(args)
    if args.json:
        out = {"env": env, "runs": {" / ".join(k): {"summary": summary[k], "records": v}
                                    for k, v in records.items()},
               "cold_cache_disk": {" / ".join(k): v for k, v in disks.items()}}
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
