"""``python -m torchlike.distributed.run``: torchrun's launcher for torchlike.  Oracle: real
torchrun (``python -m torch.distributed.run``), run side by side on the same scripts where a
test can (the environment the workers see, the failure summary, the errors of bad flags).

Every process start costs a second or two, so each test starts as few as it can; every
launcher runs under a timeout, and its workers die with it (NOTE [ stopping workers ]).
Ports are free ones on 127.0.0.1.
"""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import time

import pytest

from torchlike.distributed import run as tl_run

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=ROOT, JAX_PLATFORMS="cpu")
ENV.pop("OMP_NUM_THREADS", None)
TIMEOUT = 120
LAUNCHERS = ("torchlike.distributed.run", "torch.distributed.run")

try:
    import torch.distributed.run as torch_run
except ImportError:   # only the comparisons with torchrun need it
    torch_run = None
needs_torch = pytest.mark.skipif(torch_run is None, reason="real torch is not installed")

# a worker that records what it sees: its environment's launcher variables, argv, which torch
DUMP = '''
import json, os, sys
import torch
base = set(json.loads(os.environ["BASE_KEYS"]))
seen = {k: v for k, v in os.environ.items() if k not in base}
with open(os.path.join(os.environ["OUT_DIR"], "rank%s.json" % os.environ["RANK"]), "w") as f:
    json.dump({"env": seen, "argv": sys.argv, "torch": torch.__name__}, f)
'''

# rank 1 fails under @record; rank 0 would sleep far longer than any test's timeout
FAIL = '''
import os, sys, time
from torch.distributed.elastic.multiprocessing.errors import record

@record
def main():
    with open(os.path.join(os.environ["OUT_DIR"], "pid%s" % os.environ["RANK"]), "w") as f:
        f.write(str(os.getpid()))
    if os.environ["RANK"] == "1":
        time.sleep(1)
        raise ValueError("boom from rank 1")
    time.sleep(1000)

main()
'''


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(out_dir, **extra):
    """The launcher's environment: torchrun's temporary files go under ``out_dir`` too."""
    return dict(ENV, OUT_DIR=str(out_dir), TMPDIR=str(out_dir),
                BASE_KEYS=json.dumps([*ENV, "OUT_DIR", "BASE_KEYS", "TMPDIR"]), **extra)


def _launch(launcher, args, cwd, **extra):
    """Run ``python -m <launcher> args`` in ``cwd``; the CompletedProcess."""
    return _launch_all([(launcher, args, cwd)], **extra)[0]


def _launch_all(runs, **extra):
    """Run each ``(launcher, args, cwd)`` of ``runs`` at the same time (a launch is mostly
    waiting: imports, process starts); their CompletedProcesses, in order.  Every launcher
    still running at the timeout is killed with its workers (NOTE [ stopping workers ])."""
    procs = [subprocess.Popen([sys.executable, "-m", launcher, *args], cwd=cwd,
                              env=_env(cwd, **extra), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
             for launcher, args, cwd in runs]
    deadline = time.monotonic() + TIMEOUT
    try:
        outs = [p.communicate(timeout=max(1, deadline - time.monotonic())) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()
    return [subprocess.CompletedProcess(p.args, p.returncode, out, err)
            for p, (out, err) in zip(procs, outs)]


def _dirs(tmp_path, *names):
    """A fresh directory under ``tmp_path`` for each launch, so launches can run together."""
    for name in names:
        (tmp_path / name).mkdir()
    return [tmp_path / name for name in names]


def _script(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def _dumps(out_dir, n):
    return [json.loads((out_dir / f"rank{r}.json").read_text()) for r in range(n)]


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


# --- the workers' environment --------------------------------------------------------------

# what differs from torchrun by design: the free port and run id are random, the error file is
# in a fresh directory, and there is no agent store (NOTE [ static rendezvous ])
_RANDOM = {"MASTER_PORT", "TORCHELASTIC_RUN_ID", "TORCHELASTIC_ERROR_FILE",
           "TORCHELASTIC_USE_AGENT_STORE"}


@needs_torch
def test_two_workers_see_torchruns_environment(tmp_path):
    """Two workers of one node: every variable torchrun sets, with torchrun's values, argv as
    given, and torchlike answering ``import torch``."""
    dirs = _dirs(tmp_path, "ours", "theirs")
    for d in dirs:
        _script(d, "dump.py", DUMP)
    ours, theirs = _launch_all([(launcher, ["--nproc-per-node", "2", "dump.py", "a", "-b"], d)
                                for launcher, d in zip(LAUNCHERS, dirs)])
    assert ours.returncode == 0, ours.stderr
    assert "Setting OMP_NUM_THREADS environment variable for each process to be 1" in ours.stderr
    assert theirs.returncode == 0, theirs.stderr
    mine, real = _dumps(dirs[0], 2), _dumps(dirs[1], 2)
    for rank, (m, r) in enumerate(zip(mine, real)):
        assert sorted(m["env"]) == sorted(r["env"])
        assert {k: v for k, v in m["env"].items() if k not in _RANDOM} == \
            {k: v for k, v in r["env"].items() if k not in _RANDOM}
        assert m["env"]["RANK"] == str(rank) and m["env"]["WORLD_SIZE"] == "2"
        assert m["env"]["TORCHELASTIC_USE_AGENT_STORE"] == "False"
        assert m["env"]["TORCHELASTIC_ERROR_FILE"].endswith(f"attempt_0/{rank}/error.json")
        assert m["argv"] == r["argv"] == ["dump.py", "a", "-b"]
        assert (m["torch"], r["torch"]) == ("torchlike", "torch")
    assert mine[0]["env"]["MASTER_PORT"] == mine[1]["env"]["MASTER_PORT"]


def test_two_nodes_number_their_workers_by_node_rank(tmp_path):
    """Two launchers as two nodes (static rendezvous): global ranks follow --node-rank, and
    every worker is told the same master address and port."""
    _script(tmp_path, "dump.py", DUMP)
    port = str(_free_port())
    cmd = [sys.executable, "-m", "torchlike.distributed.run", "--nnodes", "2",
           "--nproc-per-node", "1", "--master-port", port, "--rdzv-id", "job"]
    nodes = [subprocess.Popen([*cmd, "--node-rank", str(n), "dump.py"], cwd=tmp_path,
                              env=_env(tmp_path), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for n in (1, 0)]
    try:
        for node in nodes:
            assert node.wait(TIMEOUT) == 0, node.stderr.read()
    finally:
        for node in nodes:
            node.kill()
            node.communicate()
    for rank, seen in enumerate(_dumps(tmp_path, 2)):
        env = seen["env"]
        assert (env["RANK"], env["GROUP_RANK"], env["LOCAL_RANK"]) == (str(rank), str(rank), "0")
        assert (env["WORLD_SIZE"], env["GROUP_WORLD_SIZE"], env["LOCAL_WORLD_SIZE"]) == \
            ("2", "2", "1")
        assert (env["MASTER_ADDR"], env["MASTER_PORT"]) == ("127.0.0.1", port)
        assert env["TORCHELASTIC_RUN_ID"] == "job" and "OMP_NUM_THREADS" not in env


def test_module_standalone_and_no_python(tmp_path):
    """``-m`` runs a module as ``python -m`` would (with torchlike as torch); --standalone
    picks a free local port; --no-python runs a command as it is."""
    module, command = _dirs(tmp_path, "module", "command")
    (module / "pkg").mkdir()
    (module / "pkg" / "__init__.py").write_text("")
    _script(module / "pkg", "dump.py", DUMP)
    res, sh = _launch_all([
        (LAUNCHERS[0], ["--standalone", "--nproc-per-node", "1", "-m", "pkg.dump", "x"], module),
        (LAUNCHERS[0], ["--nproc-per-node", "2", "--no-python", "sh", "-c",
                        'echo "$RANK $LOCAL_WORLD_SIZE" > "$OUT_DIR/sh$RANK"'], command)])
    assert res.returncode == 0, res.stderr
    (seen,) = _dumps(module, 1)
    assert seen["argv"] == [str(module / "pkg" / "dump.py"), "x"]
    assert seen["torch"] == "torchlike"
    assert seen["env"]["MASTER_ADDR"] == "localhost" and int(seen["env"]["MASTER_PORT"]) > 0
    assert sh.returncode == 0, sh.stderr
    assert [(command / f"sh{r}").read_text() for r in (0, 1)] == ["0 2\n", "1 2\n"]


def test_jax_workers_meet_at_the_master_port_and_a_failure_stops_them(tmp_path):
    """The address and port the launcher hands out are free for rank 0's JAX coordination
    service (NOTE [ static rendezvous ]): two workers initialise ``jax.distributed`` from the
    environment and all-gather over gloo.  Then rank 1 raises under @record while rank 0 waits
    in a second collective: rank 1 does not exit (JAX's shutdown waits for rank 0) and neither
    process heeds SIGTERM, yet the launcher stops both (SIGKILL after --shutdown-timeout) and
    reports rank 1's error (NOTE [ stopping workers ])."""
    _script(tmp_path, "gather.py", '''
        import os, jax
        from jax.experimental import multihost_utils
        from torch.distributed.elastic.multiprocessing.errors import record
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
        env = os.environ

        @record
        def main():
            with open(os.path.join(env["OUT_DIR"], "pid" + env["RANK"]), "w") as f:
                f.write(str(os.getpid()))
            jax.distributed.initialize(env["MASTER_ADDR"] + ":" + env["MASTER_PORT"],
                                       int(env["WORLD_SIZE"]), int(env["RANK"]))
            got = multihost_utils.process_allgather(jax.numpy.array([int(env["RANK"]) + 1.0]))
            with open(os.path.join(env["OUT_DIR"], "gathered" + env["RANK"]), "w") as f:
                f.write(str(got.ravel().tolist()))
            if env["RANK"] == "1":
                raise ValueError("rank 1 fails after a collective")
            multihost_utils.process_allgather(got)

        main()
    ''')
    res = _launch("torchlike.distributed.run", ["--nproc-per-node", "2", "--shutdown-timeout",
                                                "1", "gather.py"], tmp_path)
    assert [(tmp_path / f"gathered{r}").read_text() for r in (0, 1)] == ["[1.0, 2.0]"] * 2
    assert res.returncode == 1, res.stderr
    root = res.stderr[res.stderr.index("Root Cause"):]
    assert "rank      : 1 (local_rank: 1)" in root
    assert "ValueError: rank 1 fails after a collective" in root
    assert not any(_alive(int((tmp_path / f"pid{r}").read_text())) for r in (0, 1))


@needs_torch
def test_tee_redirects_and_rank_filter_as_torchrun(tmp_path):
    """--tee, --redirects, --local-ranks-filter and --log-dir together: the console shows
    what torchrun's shows, and the log files have torchrun's layout and contents."""
    _script(tmp_path, "talk.py", '''
        import os, sys
        print("out", os.environ["RANK"])
        print("err", os.environ["RANK"], file=sys.stderr)
    ''')
    dirs = _dirs(tmp_path, *LAUNCHERS)
    for d in dirs:
        (d / "talk.py").write_text((tmp_path / "talk.py").read_text())
    results = _launch_all([(launcher, ["--nproc-per-node", "2", "--tee", "1", "--redirects",
                                       "0:2", "--local-ranks-filter", "1", "--log-dir",
                                       str(d / "logs"), "talk.py"], d)
                           for launcher, d in zip(LAUNCHERS, dirs)], OMP_NUM_THREADS="1")
    seen = []
    for d, res in zip(dirs, results):
        logs = d / "logs"
        assert res.returncode == 0, res.stderr
        err = [line for line in res.stderr.splitlines() if not re.match(r"[IWE]\d{4} ", line)]
        (run_dir,) = logs.iterdir()   # <run id>_<random>
        files = {str(p.relative_to(run_dir)): p.read_text()
                 for p in sorted(run_dir.rglob("*")) if p.is_file()}
        seen.append((res.stdout, err, files))
    assert seen[0] == seen[1]
    assert seen[0][0] == "[default1]:out 1\n" and seen[0][1] == ["err 1"]


# --- failures -------------------------------------------------------------------------------

_SUMMARY_LINE = re.compile(r"^(\S+ FAILED|Failures:|Root Cause.*|\[\d+\]:|  (rank|exitcode|"
                           r"error_file) *:.*|  traceback : \S.*|  \w+Error: .*)$")


def _summary(stderr):
    """The lines of the ChildFailedError summary that do not vary between runs (pids, paths
    and times masked)."""
    text = stderr[stderr.index("ChildFailedError: "):]
    lines = [line for line in text.splitlines() if _SUMMARY_LINE.match(line)]
    lines = [re.sub(r"pid: \d+", "pid: N", re.sub(r"PID \d+", "PID N", line)) for line in lines]
    return [re.sub(r"error_file: /\S+", "error_file: FILE", line) for line in lines]


@needs_torch
def test_failing_worker_stops_its_sibling_with_torchruns_summary(tmp_path):
    """Rank 1 raises (under @record) while rank 0 sleeps: the launcher stops rank 0, prints
    the ChildFailedError summary torchrun prints (rank 1's traceback as the root cause, rank 0
    ended by SIGTERM) and exits with status 1; no worker outlives it."""
    dirs = _dirs(tmp_path, "ours", "theirs")
    for d in dirs:
        _script(d, "fail.py", FAIL)
    ours, theirs = _launch_all([(launcher, ["--nproc-per-node", "2", "fail.py"], d)
                                for launcher, d in zip(LAUNCHERS, dirs)])
    pids = [int((dirs[0] / f"pid{r}").read_text()) for r in (0, 1)]
    assert ours.returncode == 1, ours.stderr
    assert not any(_alive(p) for p in pids)
    assert "ValueError: boom from rank 1" in ours.stderr   # the worker's own traceback, too
    assert theirs.returncode == 1
    assert _summary(ours.stderr) == _summary(theirs.stderr)
    assert "  error_file: FILE" in _summary(ours.stderr)   # the root cause's recorded error
    assert "Sending process %d closing signal SIGTERM" % pids[0] in ours.stderr


def test_restarts_then_succeeds(tmp_path):
    """--max-restarts 1: a group whose worker fails in its first attempt is started again,
    with TORCHELASTIC_RESTART_COUNT 1, and the run succeeds."""
    _script(tmp_path, "flaky.py", '''
        import os, sys
        count = os.environ["TORCHELASTIC_RESTART_COUNT"]
        open(os.path.join(os.environ["OUT_DIR"], "attempt" + count), "w").close()
        sys.exit(3 if count == "0" else 0)
    ''')
    res = _launch("torchlike.distributed.run", ["--max-restarts", "1", "flaky.py"], tmp_path)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "attempt0").exists() and (tmp_path / "attempt1").exists()


def test_sigterm_to_the_launcher_ends_every_worker(tmp_path):
    """A signal to the launcher is passed to the workers; it exits non-zero, none survive."""
    _script(tmp_path, "fail.py", FAIL.replace('== "1"', '== "never"'))
    launcher = subprocess.Popen(
        [sys.executable, "-m", "torchlike.distributed.run", "--nproc-per-node", "2", "fail.py"],
        cwd=tmp_path, env=_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    try:
        deadline = time.monotonic() + TIMEOUT
        while not all((tmp_path / f"pid{r}").exists() for r in (0, 1)):
            assert launcher.poll() is None and time.monotonic() < deadline
            time.sleep(0.2)
        time.sleep(0.2)   # the pid files are written before they are closed
        pids = [int((tmp_path / f"pid{r}").read_text()) for r in (0, 1)]
        launcher.send_signal(signal.SIGTERM)
        _, err = launcher.communicate(timeout=TIMEOUT)
    finally:
        launcher.kill()
    assert launcher.returncode == 1
    assert "Received 15 death signal, shutting down workers" in err
    assert not any(_alive(p) for p in pids)


# --- bad command lines: torchrun's errors ---------------------------------------------------

BAD = [
    ["--nproc-per-node", "abc", "x.py"],
    ["--max-restarts", "-1", "x.py"],
    ["--nnodes", "0", "x.py"],
    ["--nnodes", "1:2:3", "x.py"],
    ["--no-python", "-m", "x.py"],
    ["--redirects", "7", "x.py"],
    ["--local-ranks-filter", "0,a", "x.py"],
    ["--rdzv-conf", "timeout", "x.py"],
]


@needs_torch
@pytest.mark.parametrize("argv", BAD, ids=" ".join)
def test_bad_values_raise_torchruns_errors(argv, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    errors = []
    for module in (tl_run, torch_run):
        with pytest.raises(Exception) as info:
            module.config_from_args(module.parse_args(argv))
        errors.append((type(info.value), str(info.value)))
    assert errors[0] == errors[1]


@needs_torch
@pytest.mark.parametrize("argv", [[], ["--bogus", "x.py"], ["--start-method", "bad", "x.py"]],
                         ids=["no script", "unknown flag", "bad choice"])
def test_bad_flags_exit_2_with_torchruns_message(argv, capsys):
    messages = []
    for module in (tl_run, torch_run):
        with pytest.raises(SystemExit) as info:
            module.parse_args(argv)
        assert info.value.code == 2
        messages.append(capsys.readouterr().err.splitlines()[-1])
    assert messages[0] == messages[1]


def test_unknown_rendezvous_backend_is_refused():
    args = tl_run.parse_args(["--rdzv-backend", "etcd", "--rdzv-endpoint", "h:1", "x.py"])
    with pytest.raises(ValueError, match="The rendezvous backend 'etcd' is not registered"):
        tl_run.run(args)
