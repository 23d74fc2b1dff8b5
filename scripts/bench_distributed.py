"""Communication and step time of a compiled data-parallel training step: DDP and FSDP2.

For each row the script compiles one SGD training step of the same MLP with torchlike.compile,
reads the optimized HLO of the program (``step.program_text()``), and counts its all-reduces,
reduce-scatters and all-gathers and the bytes each gathers or reduces, against the ideal:

- DDP: 2 processes (gloo on 127.0.0.1), each on its half of the global batch, against 1 process
  on the whole batch; ideal one all-reduce of the gradients' bytes (one bucket per 25 MB, as
  PyTorch fills them).
- FSDP: one process holding 8 forced CPU devices (a subprocess started with
  ``XLA_FLAGS=--xla_force_host_platform_device_count=8``), ``fully_shard`` on each layer and
  the root over a mesh of those devices, the step one SPMD program over global arrays (NOTE [
  fully_shard on global arrays ] in torchlike/distributed/fsdp/_fully_shard.py), against the
  same model on one device; ideal PyTorch's: every parameter all-gathered for forward and again
  for backward, every gradient reduce-scattered once.  The table is followed by what XLA does
  instead (on the CPU: each parameter gathered once and kept for backward; the gradients
  reduced by one combined all-reduce that each device slices, not by reduce-scatters).

The time of each row is the median of ``--steps`` compiled calls.  The forced CPU devices share
the machine's cores, so on a CPU the FSDP row measures the cost of the sharded program, not a
speed-up.

There is no FSDP row over several processes: with a process group of several processes a mesh
spans one device per rank, and ``distribute_tensor`` (so ``fully_shard``) lays the whole tensor
out by ``jax.device_put`` onto the mesh, which needs every device of the mesh to be this
process's (jax raises "device_put's second argument must be a Device or a Sharding which
represents addressable devices"); building the global array from each process's shard is not
built (docs/architecture.md §5.6).

Usage (on one machine it starts its own processes on 127.0.0.1)::

    python scripts/bench_distributed.py [--width 512] [--batch 256] [--steps 20] [--devices 8]

On several hosts or GPUs, launch the DDP worker with torchlike's torchrun (one process per GPU;
each host runs the same command with its --node-rank); rank 0 prints its row as JSON::

    python -m torchlike.distributed.run --nnodes 2 --nproc-per-node 8 --node-rank 0 \\
        --master-addr HOST0 --master-port 29500 scripts/bench_distributed.py --worker

The FSDP row always shards over forced CPU devices (a ``cpu`` mesh in one process).
"""
import argparse
import json
import math
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KINDS = ("all-reduce", "reduce-scatter", "all-gather")
_BYTES = {"f64": 8, "f32": 4, "bf16": 2, "f16": 2, "s64": 8, "s32": 4, "u32": 4, "s8": 1,
          "u8": 1, "pred": 1}
# `%name = f32[10,20]{1,0} all-reduce(%x), channel_id=1, replica_groups=...` or a tuple result
# `(f32[10]{0}, f32[3]{0}) all-reduce(%a, %b), ...`: the result, the kind and the rest of the line
_OP = re.compile(r"=\s*(\(.*?\)|\S+)\s+(all-reduce|reduce-scatter|all-gather)(?:-start)?"
                 r"\((.*)")
_SHAPE = re.compile(r"([a-z]+\d*)\[([\d,]*)\]")


def _bytes(result):
    """The bytes of the array shapes written in an HLO op's ``result``."""
    return sum(math.prod(int(d) for d in dims.split(",") if d) * _BYTES.get(dtype, 4)
               for dtype, dims in _SHAPE.findall(result))


def _group_size(rest):
    """How many devices an HLO collective's replica groups put in one group, from the rest of
    its line: ``{{0,1,2,3},...}``, the iota form ``[2,4]<=[8]``, or a mesh's named axes
    ``mesh['x'=2,'y'=4] {'y'}``; 1 when not written."""
    if m := re.search(r"replica_groups=\{\{([\d,]*)\}", rest):
        return len(m.group(1).split(","))
    if m := re.search(r"replica_groups=\[[\d,]*?(\d+)\]<=", rest):
        return int(m.group(1))
    if m := re.search(r"replica_groups=mesh\[([^\]]*)\]\s*\{([^}]*)\}", rest):
        sizes = dict(re.findall(r"'(\w+)'=(\d+)", m.group(1)))
        return math.prod(int(sizes[a]) for a in re.findall(r"'(\w+)'", m.group(2)))
    return 1


def collectives(hlo):
    """{kind: [bytes of each op]} of the all-reduces, reduce-scatters and all-gathers in an HLO
    module's text.  An op's bytes are the full (unsharded) bytes it reduces or gathers: its
    result's, and for a reduce-scatter its result's times the devices in a group, so a
    parameter counts the same whichever collective moves it."""
    found = {k: [] for k in KINDS}
    for result, kind, rest in _OP.findall(hlo):
        n = _bytes(result)
        found[kind].append(n * _group_size(rest) if kind == "reduce-scatter" else n)
    return found


def _model(torch, width):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.ReLU(),
                               torch.nn.Linear(width, width), torch.nn.ReLU(),
                               torch.nn.Linear(width, 10))


def _measure(torch, net, x, y, steps):
    """Median seconds of a compiled SGD step of ``net`` on (x, y), and its collectives."""
    opt = torch.optim.SGD(net.parameters(), lr=0.01)

    def step():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        return loss
    step = torch.compile(step, fullgraph=True)
    for _ in range(3):
        step().item()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step().item()
        times.append(time.perf_counter() - start)
    return statistics.median(times), collectives(step.program_text())


def worker(args):
    """One process of the DDP row: its result as a JSON line on stdout from rank 0."""
    import torchlike as torch
    import torchlike.distributed as dist
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1:
        dist.init_process_group("gloo")
    rank = dist.get_rank() if world > 1 else 0
    per = args.batch // world
    g = torch.Generator().manual_seed(1)
    x = torch.randn(args.batch, args.width, generator=g)[rank * per:(rank + 1) * per]
    y = torch.randint(0, 10, (args.batch,), generator=g)[rank * per:(rank + 1) * per]
    model = _model(torch, args.width)
    grad_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    net = torch.nn.parallel.DistributedDataParallel(model) if world > 1 else model
    seconds, found = _measure(torch, net, x, y, args.steps)
    if rank == 0:
        print("ROW " + json.dumps({"row": "DDP", "world": world, "seconds": seconds,
                                   "found": found,
                                   "ideal": {"all-reduce": [grad_bytes] if world > 1 else []}}),
              flush=True)
    if world > 1:
        dist.destroy_process_group()


def fsdp_worker(args):
    """The FSDP row, in a process with ``args.devices`` CPU devices: fully_shard over a mesh of
    them against the same model on one device, as JSON lines on stdout."""
    import torchlike as torch
    from torchlike.distributed.device_mesh import init_device_mesh
    from torchlike.distributed.fsdp import fully_shard
    from torchlike.distributed.tensor import Shard, distribute_tensor
    g = torch.Generator().manual_seed(1)
    x = torch.randn(args.batch, args.width, generator=g)
    y = torch.randint(0, 10, (args.batch,), generator=g)
    seconds, found = _measure(torch, _model(torch, args.width), x, y, args.steps)
    print("ROW " + json.dumps({"row": "FSDP", "world": 1, "seconds": seconds, "found": found}),
          flush=True)
    mesh = init_device_mesh("cpu", (args.devices,))
    model = _model(torch, args.width)
    for layer in model:
        if any(True for _ in layer.parameters()):
            fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    # the root lays x over the mesh itself; the targets the loss mixes in must be there too
    seconds, found = _measure(torch, model, x, distribute_tensor(y, mesh, [Shard(0)]),
                              args.steps)
    sizes = {"sharded": [], "whole": []}   # whole: dim 0 does not divide by the mesh size
    for p in model.parameters():
        sizes["sharded" if p.placements == (Shard(0),) else "whole"].append(
            p.numel() * p.element_size())
    full = sizes["sharded"] + sizes["whole"]   # PyTorch pads and shards every parameter
    print("ROW " + json.dumps({"row": "FSDP", "world": args.devices, "seconds": seconds,
                               "found": found, "sizes": sizes,
                               "ideal": {"all-gather": full * 2, "reduce-scatter": full}}),
          flush=True)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _launch(world, args, timeout, fsdp=False):
    """Run ``world`` DDP worker processes on 127.0.0.1 (or, with ``fsdp``, the one FSDP worker
    with ``args.devices`` forced CPU devices); rank 0's rows."""
    port = str(_free_port())
    argv = [sys.executable, os.path.abspath(__file__), "--fsdp-worker" if fsdp else "--worker",
            "--width", str(args.width), "--batch", str(args.batch), "--steps", str(args.steps),
            "--devices", str(args.devices)]
    with tempfile.TemporaryDirectory() as tmp:
        procs = []
        for rank in range(world):
            env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=port, RANK=str(rank),
                       WORLD_SIZE=str(world), PYTHONPATH=ROOT + os.pathsep +
                       os.environ.get("PYTHONPATH", ""))
            if fsdp:
                env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_force_host_platform_"
                                    f"device_count={args.devices}").strip()
            with open(f"{tmp}/{rank}.log", "w") as log:
                procs.append(subprocess.Popen(argv, env=env, stdout=log,
                                              stderr=subprocess.STDOUT, start_new_session=True))
        try:
            for p in procs:
                p.wait(timeout=timeout)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        with open(f"{tmp}/0.log") as log:
            out = log.read()
        if procs[0].returncode != 0:
            what = f"the FSDP process ({args.devices} devices)" if fsdp else \
                f"{world} processes"
            raise SystemExit(f"{what} failed:\n{out[-3000:]}")
    return [json.loads(line[4:]) for line in out.splitlines() if line.startswith("ROW ")]


def _summary(counts):
    return ", ".join(f"{k} {len(v)} x {sum(v) / 1e6:.3f} MB" for k, v in counts.items() if v) \
        or "none"


def report(ddp, fsdp):
    """Print the table: ``ddp`` and ``fsdp`` map a process (device) count to that run's row."""
    print(f"{'step':<5} {'procs':>5} {'devices':>7} {'ms/step':>9} {'vs 1':>6}  collectives in "
          "the program (found | ideal)")
    for name, rows, procs in (("DDP", ddp, lambda n: n), ("FSDP", fsdp, lambda n: 1)):
        for n in sorted(rows, reverse=True):
            row = rows[n]
            ratio = f"{row['seconds'] / rows[1]['seconds']:.2f}x"
            ideal = f" | {_summary(row['ideal'])}" if n > 1 else ""
            print(f"{name:<5} {procs(n):>5} {n:>7} {row['seconds'] * 1e3:>9.2f} {ratio:>6}  "
                  f"{_summary(row['found'])}{ideal}")
    row = fsdp[max(fsdp)]
    sizes, found = row["sizes"], row["found"]
    left = list(found["all-gather"])   # which all-gathers are the sharded parameters'
    gathered = [left.remove(n) or n for n in sizes["sharded"] if n in left]
    reduced = found["all-reduce"] + found["reduce-scatter"]
    once = (",\n  each gathered once: XLA keeps the gathered values for backward rather than "
            "gathering again;") if len(gathered) == len(sizes["sharded"]) else ";"
    how = "."
    if found["all-reduce"] and not found["reduce-scatter"]:
        how = (":\n  XLA (its CPU pipeline here) combines the gradients' reductions into one "
               "all-reduce of every\n  full gradient, whose result each device slices to its "
               f"shard, where PyTorch reduce-scatters\n  (1/{max(fsdp)} of the bytes arriving "
               "on each device).")
    print(f"""
DDP: {max(ddp)} processes, each on its half of the batch, against 1 on the whole batch.
FSDP: one process holding {max(fsdp)} forced CPU devices, fully_shard over a mesh of them (a
  compiled step is one SPMD program over global arrays), against the same model on one device.
  {len(sizes['sharded'])} parameters are sharded ({sum(sizes['sharded']) / 1e6:.3f} MB); \
{len(sizes['whole'])} whose dim 0 does not divide by {max(fsdp)}
  stay whole on every device ({sum(sizes['whole']) / 1e6:.3f} MB), where PyTorch pads and \
shards them.
  The ideal is PyTorch's: every parameter all-gathered for forward and again for backward, every
  gradient reduce-scattered once.  Bytes are the full bytes each op gathers or reduces.
  What XLA does here: {len(gathered)} of the {len(found['all-gather'])} all-gathers are the \
sharded parameters' \
({sum(gathered) / 1e6:.3f} MB){once}
  the others ({sum(left)} bytes) gather the targets and the loss's checks.
  The gradients are reduced by {len(found['reduce-scatter'])} reduce-scatters and \
{len(found['all-reduce'])} all-reduces ({sum(reduced) / 1e6:.3f} MB){how}
  The forced devices share this machine's {os.cpu_count()} cores, so the FSDP time is the cost
  of the sharded program here, not a speed-up.""")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--devices", type=int, default=8,
                        help="CPU devices the FSDP process forces and shards over")
    parser.add_argument("--timeout", type=int, default=600)
    parser.add_argument("--worker", action="store_true",
                        help="run as one DDP rank (under a launcher that sets RANK, WORLD_SIZE)")
    parser.add_argument("--fsdp-worker", action="store_true",
                        help="run the FSDP row in this process (XLA_FLAGS must force "
                             "--devices CPU devices)")
    args = parser.parse_args(argv)
    if args.worker:
        worker(args)
        return
    if args.fsdp_worker:
        fsdp_worker(args)
        return
    ddp = {world: _launch(world, args, args.timeout)[0] for world in (1, 2)}
    fsdp = {row["world"]: row for row in _launch(1, args, args.timeout, fsdp=True)}
    report(ddp, fsdp)


if __name__ == "__main__":
    main()
