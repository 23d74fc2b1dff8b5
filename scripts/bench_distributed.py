"""Communication and step time of a compiled data-parallel training step.

For DistributedDataParallel (and FSDP2's ``fully_shard`` where torchlike.distributed.fsdp has
it) the script compiles one training step with torchlike.compile, reads the optimized HLO of
the program each process runs, and counts its all-reduces, reduce-scatters and all-gathers and
the bytes each moves, against the ideal:

- DDP: one all-reduce of the gradients' bytes (one bucket per 25 MB, as PyTorch fills them);
- FSDP: the parameters all-gathered for forward and again for backward, and the gradients
  reduce-scattered once (each all-gather and reduce-scatter moving a parameter's full bytes).

It then times the compiled step (median of ``--steps`` calls) with 2 processes against 1, each
process on its share of the same global batch.

Usage (on one machine it starts its own processes on 127.0.0.1)::

    python scripts/bench_distributed.py [--width 512] [--batch 256] [--steps 20]

On several hosts or GPUs, launch the worker with torchlike's torchrun (one process per GPU;
each host runs the same command with its --node-rank)::

    python -m torchlike.distributed.run --nnodes 2 --nproc-per-node 8 --node-rank 0 \\
        --master-addr HOST0 --master-port 29500 scripts/bench_distributed.py --worker

Rank 0 prints the table.
"""
import argparse
import json
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
# `%name = f32[10,20]{1,0} all-reduce(` or a tuple result `(f32[10]{0}, f32[3]{0}) all-reduce(`
_OP = re.compile(r"=\s*(\(.*?\)|\S+)\s+(all-reduce|reduce-scatter|all-gather)(?:-start)?\(")
_SHAPE = re.compile(r"([a-z]+\d*)\[([\d,]*)\]")


def collectives(hlo):
    """{kind: [bytes of each op's result]} of an HLO module's text."""
    found = {k: [] for k in KINDS}
    for result, kind in _OP.findall(hlo):
        total = 0
        for dtype, dims in _SHAPE.findall(result):
            n = 1
            for d in filter(None, dims.split(",")):
                n *= int(d)
            total += n * _BYTES.get(dtype, 4)
        found[kind].append(total)
    return found


def _model(torch, width):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.ReLU(),
                               torch.nn.Linear(width, width), torch.nn.ReLU(),
                               torch.nn.Linear(width, 10))


def _measure(torch, net, params, x, y, steps):
    opt = torch.optim.SGD(params, lr=0.01)

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
    """One process: the DDP row (and the FSDP row) as JSON lines on stdout from rank 0."""
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
    rows = []
    model = _model(torch, args.width)
    grad_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    net = torch.nn.parallel.DistributedDataParallel(model) if world > 1 else model
    seconds, found = _measure(torch, net, model.parameters(), x, y, args.steps)
    rows.append({"row": "DDP", "world": world, "seconds": seconds, "found": found,
                 "ideal": {"all-reduce": [grad_bytes] if world > 1 else []}})
    try:
        from torchlike.distributed.fsdp import fully_shard
    except ImportError:
        rows.append({"row": "FSDP", "world": world, "skipped": "torchlike.distributed.fsdp has "
                     "no fully_shard in this checkout"})
    else:
        model = _model(torch, args.width)
        if world > 1:
            for layer in model:
                if any(True for _ in layer.parameters()):
                    fully_shard(layer)
            fully_shard(model)
        try:
            seconds, found = _measure(torch, model, model.parameters(), x, y, args.steps)
            ideal = {"all-gather": [p.numel() * p.element_size() for p in
                                    _model(torch, args.width).parameters()] * 2,
                     "reduce-scatter": [p.numel() * p.element_size() for p in
                                        _model(torch, args.width).parameters()]}
            rows.append({"row": "FSDP", "world": world, "seconds": seconds, "found": found,
                         "ideal": ideal if world > 1 else {}})
        except Exception as e:   # a row that cannot run yet says why, the others still print
            rows.append({"row": "FSDP", "world": world,
                         "skipped": f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"})
    if rank == 0:
        for row in rows:
            print("ROW " + json.dumps(row), flush=True)
    if world > 1:
        dist.destroy_process_group()


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _launch(world, args, timeout):
    """Run ``world`` worker processes on 127.0.0.1; rank 0's rows."""
    port = str(_free_port())
    argv = [sys.executable, os.path.abspath(__file__), "--worker", "--width", str(args.width),
            "--batch", str(args.batch), "--steps", str(args.steps)]
    with tempfile.TemporaryDirectory() as tmp:
        procs = []
        for rank in range(world):
            env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=port, RANK=str(rank),
                       WORLD_SIZE=str(world), PYTHONPATH=ROOT + os.pathsep +
                       os.environ.get("PYTHONPATH", ""))
            procs.append(subprocess.Popen(argv, env=env, stdout=open(f"{tmp}/{rank}.log", "w"),
                                          stderr=subprocess.STDOUT, start_new_session=True))
        try:
            for p in procs:
                p.wait(timeout=timeout)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        out = open(f"{tmp}/0.log").read()
        if procs[0].returncode != 0:
            raise SystemExit(f"{world} processes failed:\n{out[-3000:]}")
    return [json.loads(line[4:]) for line in out.splitlines() if line.startswith("ROW ")]


def _summary(counts):
    return ", ".join(f"{k} {len(v)} x {sum(v) / 1e6:.3f} MB" for k, v in counts.items() if v) \
        or "none"


def report(rows_by_world):
    one = {r["row"]: r for r in rows_by_world[1]}
    print(f"{'step':<5} {'procs':>5} {'ms/step':>9} {'vs 1 proc':>9}  collectives in the program "
          "(found | ideal)")
    for row in rows_by_world[2]:
        if "skipped" in row:
            print(f"{row['row']:<5} skipped: {row['skipped']}")
            continue
        base = one.get(row["row"], {}).get("seconds")
        ratio = f"{row['seconds'] / base:.2f}x" if base else "-"
        print(f"{row['row']:<5} {row['world']:>5} {row['seconds'] * 1e3:>9.2f} {ratio:>9}  "
              f"{_summary(row['found'])} | {_summary(row['ideal'])}")
    for row in rows_by_world[1]:
        if "skipped" not in row:
            print(f"{row['row']:<5} {1:>5} {row['seconds'] * 1e3:>9.2f} {'1.00x':>9}  "
                  f"{_summary(row['found'])}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--timeout", type=int, default=600)
    parser.add_argument("--worker", action="store_true",
                        help="run as one rank (under a launcher that sets RANK, WORLD_SIZE)")
    args = parser.parse_args(argv)
    if args.worker:
        worker(args)
        return
    report({world: _launch(world, args, args.timeout) for world in (1, 2)})


if __name__ == "__main__":
    main()
