"""torchlike.distributed: process groups and collectives (NOTE [ process groups on JAX ]).

Three processes on 127.0.0.1 run tests/dist_worker.py's scenarios once on torchlike and once
on real PyTorch (gloo), side by side; each scenario's results -- values, dtypes, warnings and
error messages, on every rank -- are compared with PyTorch's and checked against the
collective's definition.  Single-process checks (a world of one, argument errors) run in this
process; anything that starts JAX's distributed runtime runs in a subprocess, with a timeout,
and every process is killed on every path."""
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import torch as real_torch  # noqa: F401  (the oracle's group: NOTE [ torch is required ])

import torchlike as torch
import torchlike.distributed as dist

ROOT = Path(__file__).resolve().parents[1]
WORKER = ROOT / "tests" / "dist_worker.py"
WORLD = 3
TIMEOUT = 240


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_group(lib, out_dir, world=WORLD):
    port = str(free_port())
    procs = []
    for rank in range(world):
        env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=port, RANK=str(rank),
                   WORLD_SIZE=str(world), GLOO_SOCKET_IFNAME="lo", PYTHONPATH=str(ROOT),
                   DIST_WORKER_DUMP=str(TIMEOUT - 20))
        log = open(out_dir / f"{lib}-{rank}.log", "w")
        procs.append(subprocess.Popen([sys.executable, "-u", str(WORKER), lib,
                                       str(out_dir / f"{lib}-{rank}.json")],
                                      env=env, stdout=log, stderr=subprocess.STDOUT,
                                      start_new_session=True))
    return procs


def finish(procs, deadline):
    try:
        for p in procs:
            p.wait(timeout=max(1, deadline - time.monotonic()))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def load(out_dir, lib):
    results = []
    for rank in range(WORLD):
        path = out_dir / f"{lib}-{rank}.json"
        if not path.exists():
            log = (out_dir / f"{lib}-{rank}.log").read_text()[-3000:]
            pytest.fail(f"{lib} rank {rank} wrote no results:\n{log}")
        results.append(json.loads(path.read_text()))
    return results


@pytest.fixture(scope="module")
def runs(tmp_path_factory, failures):
    """{lib: [rank 0's results, rank 1's, rank 2's]} for torchlike and torch, the two groups
    running at the same time (and the failure scenarios with them)."""
    out_dir = tmp_path_factory.mktemp("dist")
    libs = ["torchlike", "torch"]
    groups = {lib: start_group(lib, out_dir) for lib in libs}
    deadline = time.monotonic() + TIMEOUT
    for procs in groups.values():
        finish(procs, deadline)
    return {lib: load(out_dir, lib) for lib in libs}


SCENARIOS = ["info", "all_reduce", "broadcast", "reduce", "all_gather",
             "all_gather_into_tensor", "reduce_scatter", "gather_scatter", "all_to_all",
             "objects", "subgroup", "point_to_point", "async_work", "barrier", "errors",
             "after destroy"]


def comparable(result):
    """A raised scenario compares by exception type and first line, not by traceback."""
    if isinstance(result, list) and result and result[0] == "raised":
        return result[:3]
    return result


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_same_as_pytorch(runs, scenario):
    for rank in range(WORLD):
        got = comparable(runs["torchlike"][rank][scenario])
        assert got == comparable(runs["torch"][rank][scenario]), (rank, got)


def values(result):
    return np.array(result["values"])


def test_definitions(runs):
    """Each collective against its definition, from the inputs dist_worker.py gives rank r:
    base(n) = [1..n] * (r + 1)."""
    res = runs["torchlike"]
    bases = [np.arange(1, 4) * (r + 1) for r in range(WORLD)]
    ints = [np.array([3, 5, 12]) + r for r in range(WORLD)]
    for r in range(WORLD):
        ar = res[r]["all_reduce"]
        np.testing.assert_allclose(values(ar["SUM"]), sum(bases))
        np.testing.assert_allclose(values(ar["AVG"]), sum(bases) / WORLD)
        np.testing.assert_allclose(values(ar["PRODUCT"]), np.prod(bases, axis=0))
        np.testing.assert_allclose(values(ar["MIN"]), np.min(bases, axis=0))
        np.testing.assert_allclose(values(ar["MAX"]), np.max(bases, axis=0))
        assert values(ar["int BAND"]).tolist() == (ints[0] & ints[1] & ints[2]).tolist()
        assert values(ar["int BOR"]).tolist() == (ints[0] | ints[1] | ints[2]).tolist()
        assert values(ar["int BXOR"]).tolist() == (ints[0] ^ ints[1] ^ ints[2]).tolist()
        assert ar["int SUM"]["dtype"] == "torch.int64"
        np.testing.assert_allclose(values(res[r]["broadcast"]), bases[1])
        gathered = [values(x) for x in res[r]["all_gather"]]
        np.testing.assert_allclose(gathered, [np.full((2, 2), float(i)) for i in range(WORLD)])
        np.testing.assert_allclose(values(res[r]["all_gather_into_tensor"]),
                                   np.concatenate([b[:2] for b in bases]))
        rs, rst = res[r]["reduce_scatter"]
        np.testing.assert_allclose(values(rs), [sum(q * 10 + r for q in range(WORLD))] * 2)
        np.testing.assert_allclose(values(rst), np.arange(2.0 * WORLD)[2 * r:2 * r + 2] + 2)
        even, uneven = res[r]["all_to_all"]
        np.testing.assert_allclose(values(even),
                                   [100 * q + 2 * r + k for q in range(WORLD) for k in range(2)])
        start = sum(range(1, r + 1))
        np.testing.assert_allclose(values(uneven), [100 * q + start + k for q in range(WORLD)
                                                    for k in range(r + 1)])
        assert res[r]["objects"][0] == [{"rank": q, "text": "x" * (q * 50)} for q in range(WORLD)]
    np.testing.assert_allclose(values(res[1]["reduce"]), np.max(bases, axis=0))
    assert res[0]["reduce"] == "not dst"
    np.testing.assert_allclose([values(x) for x in res[0]["gather_scatter"][0]],
                               [b[:2] for b in bases])
    for r in range(WORLD):
        np.testing.assert_allclose(values(res[r]["gather_scatter"][1]), [r + 0.5] * 2)
    assert res[2]["point_to_point"] == [0, {"values": (bases[0] * 10).tolist(),
                                            "dtype": "torch.float32"}]
    assert res[1]["point_to_point"] == [{"values": (bases[2] * 10).tolist(),
                                         "dtype": "torch.float32"}]
    sub = [res[r]["subgroup"] for r in range(WORLD)]
    np.testing.assert_allclose(values(sub[0][0]), bases[0] + bases[2])
    assert sub[1][1:4] == [True, -1, -1]   # rank 1 is not in the group: nothing happens


def test_shape_mismatch_is_an_error_on_every_rank(runs):
    """Ranks calling one collective with different shapes get an error, not garbage or a hang
    (a check gloo's transport makes for PyTorch; XLA's collectives need torchlike's)."""
    for rank in range(WORLD):
        assert runs["torchlike"][rank]["mismatch"] == (
            "all_reduce: the ranks of the group called it with different tensor shapes, dtypes "
            "or arguments")


# --- one process ------------------------------------------------------------------------------

@pytest.fixture
def world_of_one():
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{free_port()}", rank=0,
                            world_size=1)
    yield
    dist.destroy_process_group()


def test_not_initialized():
    assert dist.is_available() and not dist.is_initialized()
    message = ("Default process group has not been initialized, please make sure to call "
               "init_process_group.")
    for fn in (dist.get_rank, dist.get_world_size, dist.barrier,
               lambda: dist.all_reduce(torch.ones(2))):
        with pytest.raises(ValueError, match=message):
            fn()


def test_init_arguments(monkeypatch):
    for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValueError, match="env:// rendezvous: environment variable RANK "
                                         "expected, but not set"):
        dist.init_process_group("gloo")
    with pytest.raises(ValueError, match="tcp:// rendezvous: rank parameter missing"):
        dist.init_process_group("gloo", init_method="tcp://127.0.0.1:1234", world_size=2)
    with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval "
                                         r"\[0, 1\]"):
        dist.init_process_group("gloo", init_method="tcp://127.0.0.1:1234", rank=3,
                                world_size=2)
    with pytest.raises(ValueError, match="Unknown backend type foo"):
        dist.init_process_group("foo", init_method="tcp://127.0.0.1:1234", rank=0, world_size=1)
    with pytest.raises(RuntimeError, match="No rendezvous handler for udp://"):
        dist.init_process_group("gloo", init_method="udp://x:1", rank=0, world_size=1)
    with pytest.raises(TypeError, match="timedelta"):
        dist.init_process_group("gloo", init_method="tcp://127.0.0.1:1", rank=0, world_size=1,
                                timeout=5)
    assert not dist.is_initialized()


def test_world_of_one(world_of_one):
    assert (dist.get_rank(), dist.get_world_size(), dist.get_backend()) == (0, 1, "gloo")
    with pytest.raises(ValueError, match="trying to initialize the default process group "
                                         "twice!"):
        dist.init_process_group("gloo")
    t = torch.tensor([1.0, 2.0], requires_grad=True)
    dist.all_reduce(t, op=dist.ReduceOp.AVG)          # in place, past autograd, as PyTorch
    assert t.tolist() == [1.0, 2.0] and t.requires_grad and t.grad_fn is None
    out = [torch.zeros(2)]
    dist.all_gather(out, t)
    assert out[0].tolist() == [1.0, 2.0]
    objs = [None]
    dist.all_gather_object(objs, {"a": (1, "b")})
    assert objs == [{"a": (1, "b")}]
    assert dist.get_process_group_ranks(dist.group.WORLD) == [0]
    w = dist.all_reduce(torch.ones(3), async_op=True)
    assert w.wait() and w.is_completed()
    # a compiled DDP step in a world of one: its all-reduce is the identity, the program local
    torch.manual_seed(0)
    m = torch.nn.Linear(3, 2)
    ref = torch.nn.Linear(3, 2)
    ref.load_state_dict(m.state_dict())
    net = torch.nn.parallel.DistributedDataParallel(m)
    x = torch.randn(4, 3)

    def step(model, opt):
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
    compiled = torch.compile(step, fullgraph=True)
    opts = torch.optim.SGD(m.parameters(), lr=0.1), torch.optim.SGD(ref.parameters(), lr=0.1)
    for _ in range(3):
        compiled(net, opts[0])
        step(ref, opts[1])
    torch.testing.assert_close(m.weight, ref.weight, atol=1e-6, rtol=0)


# --- failures, in their own processes -----------------------------------------------------------

FAILING = r"""
import datetime, os, sys, time
import torchlike as torch, torchlike.distributed as dist
rank, port = int(sys.argv[1]), sys.argv[2]
try:
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=2, timeout=datetime.timedelta(seconds=8))
except (dist.DistNetworkError, dist.DistStoreError) as e:
    print(f"init failed: {type(e).__name__}: {e}", flush=True)
    os._exit(7)
t = torch.ones(3)
dist.all_reduce(t)
print("first", t.tolist(), flush=True)
if rank == 1:
    os._exit(3)                      # dies between two collectives
try:
    dist.all_reduce(t)
except dist.DistBackendError as e:
    print("second failed:", type(e).__name__, flush=True)
    os._exit(5)
"""


class Ranks:
    """FAILING's ranks ``ranks`` of one group, started now; ``result()`` waits for them (each
    under ``timeout``): their exit codes, outputs, and how long the slowest ran."""

    def __init__(self, ranks, timeout):
        port = str(free_port())
        env = dict(os.environ, PYTHONPATH=str(ROOT), GLOO_SOCKET_IFNAME="lo")
        self.start, self.timeout = time.monotonic(), timeout
        self.procs = [subprocess.Popen([sys.executable, "-c", FAILING, str(r), port], env=env,
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                       text=True, start_new_session=True) for r in ranks]
        self.ended = [None] * len(ranks)
        self.threads = [threading.Thread(target=self._wait, args=(i,), daemon=True)
                        for i in range(len(ranks))]
        for t in self.threads:
            t.start()

    def _wait(self, i):
        try:
            self.procs[i].wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            pass
        self.ended[i] = time.monotonic()

    def result(self):
        try:
            for t in self.threads:
                t.join(self.timeout + 5)
            outs = [p.stdout.read() if p.poll() is not None else "(still running)"
                    for p in self.procs]
        finally:
            self.kill()
        return ([p.returncode for p in self.procs], outs,
                max(e or time.monotonic() for e in self.ended) - self.start)

    def kill(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
            p.stdout.close()


@pytest.fixture(scope="module")
def failures():
    """The failure scenarios, started together at the start of the module's first test (they
    mostly wait for timeouts, so they overlap the groups of ``runs``): a pair whose rank 1
    dies between two collectives, and rank 1, then rank 0, alone."""
    started = {"dies": Ranks([0, 1], 90), 1: Ranks([1], 60), 0: Ranks([0], 60)}
    yield started
    for r in started.values():
        r.kill()


def test_a_rank_that_dies_fails_the_others(failures):
    codes, outs, took = failures["dies"].result()
    assert "first [2.0, 2.0, 2.0]" in outs[0] and "first [2.0, 2.0, 2.0]" in outs[1]
    assert codes[1] == 3
    assert "second failed: DistBackendError" in outs[0], outs[0][-2000:]
    assert took < 80


@pytest.mark.parametrize("rank, error", [(1, "DistNetworkError: The client socket has timed out"),
                                         (0, "DistStoreError: Timed out after 8 seconds waiting "
                                             "for clients. 1/2 clients joined.")])
def test_init_times_out_without_the_others(failures, rank, error):
    codes, outs, took = failures[rank].result()
    assert codes == [7] and "init failed: " + error in outs[0], outs[0][-2000:]
    assert took < 40


# --- DistributedDataParallel ------------------------------------------------------------------

@pytest.fixture(scope="module")
def ddp_runs(runs):
    """DDP over the torchlike group of ``runs`` (each rank on its 4 rows of a batch: tests/
    ddp_worker.py's scenarios, in the same launch), and the reference: the same training
    without DDP on the whole batch, in this process."""
    import ddp_worker
    out = {f"ddp-{r}": runs["torchlike"][r]["ddp"] for r in range(WORLD)}
    for r in range(WORLD):
        if "raised" in out[f"ddp-{r}"]:
            pytest.fail(f"rank {r}'s DDP scenarios raised:\n{out[f'ddp-{r}']['raised']}")
    out["reference"] = ddp_worker.reference(WORLD)
    return out


@pytest.mark.parametrize("case, tol", [("sgd", 1e-6), ("adam", 1e-6), ("accumulate", 1e-6),
                                       ("fp16", 1e-3)])
def test_ddp_equals_one_process_on_the_whole_batch(ddp_runs, case, tol):
    """Every parameter after each of 5 steps (SGD, Adam, gradient accumulation under no_sync,
    the fp16-compress comm hook), on every rank, equals one process training on the whole
    batch; the ranks start from different seeds, so construction's broadcast is checked too."""
    ref = ddp_runs["reference"]["sgd" if case == "fp16" else case]
    for rank in range(WORLD):
        got = ddp_runs[f"ddp-{rank}"][case]
        for step_got, step_ref in zip(got, ref):
            for a, b in zip(step_got, step_ref):
                np.testing.assert_allclose(a, b, atol=tol, rtol=0)


def test_compiled_ddp_is_one_program_with_the_all_reduce_inside(ddp_runs):
    """torchlike.compile of a DDP training step (NOTE [ collectives in a compiled step ]): one
    program per process, whose HLO holds the gradients' all-reduce (one bucket: one
    all-reduce), trains as one process on the whole batch does, on every rank, to 1e-6."""
    ref = ddp_runs["reference"]["sgd"]
    for rank in range(WORLD):
        run = ddp_runs[f"ddp-{rank}"]
        assert run["compiled all-reduces"] == 1
        for step_got, step_ref in zip(run["compiled"], ref, strict=True):
            for a, b in zip(step_got, step_ref):
                np.testing.assert_allclose(a, b, atol=1e-6, rtol=0)


def test_ddp_unused_parameters_and_names(ddp_runs):
    for rank in range(WORLD):
        run = ddp_runs[f"ddp-{rank}"]
        assert run["unused"]["False"] == ["raised", "Expected to have finished reduction in the "
                                          "prior iteration b"]
        assert run["unused"]["True"] == ["ok", True]
        assert run["keys"] == ["module.0.weight", "module.0.bias", "module.2.weight",
                               "module.2.bias"]


def test_sync_batch_norm_over_the_processes(ddp_runs):
    """SyncBatchNorm over the processes' shares of a batch equals BatchNorm1d on the whole
    batch: each share of the output and of the input gradient, the running statistics on every
    rank, and the affine gradients summed over the ranks."""
    ref = {k: np.array(v) for k, v in ddp_runs["reference"]["syncbn"].items()}
    ranks = [{k: np.array(v) for k, v in ddp_runs[f"ddp-{r}"]["syncbn"].items()}
             for r in range(WORLD)]
    for r, got in enumerate(ranks):
        for name in ("out", "x.grad"):
            np.testing.assert_allclose(got[name], ref[name][4 * r:4 * r + 4], atol=2e-5)
        for name in ("running_mean", "running_var"):
            np.testing.assert_allclose(got[name], ref[name], atol=2e-6)
    for name in ("weight.grad", "bias.grad"):
        np.testing.assert_allclose(sum(got[name] for got in ranks), ref[name], atol=2e-5)


def test_ddp_needs_a_group():
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2))


def test_train_ddp_example_under_the_launcher(tmp_path):
    """examples/train_ddp.py as the README launches it, shortened: two processes step together
    and learn (DDP's exactness is test_ddp_equals_one_process_on_the_whole_batch's)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    run = subprocess.run([sys.executable, "-m", "torchlike.distributed.run", "--standalone",
                          "--nproc-per-node", "2", str(ROOT / "examples" / "train_ddp.py"),
                          "--epochs", "3", "--limit", "600", "--out", str(tmp_path)],
                         env=env, capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "2 processes, 32 images per process per step" in run.stdout
    final = [line for line in run.stdout.splitlines() if line.startswith("final test accuracy")]
    assert len(final) == 1 and float(final[0].split()[-1].rstrip("%")) > 70
    assert (tmp_path / "model.pt").exists()
