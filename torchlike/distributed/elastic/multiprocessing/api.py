"""Mirrors ``torch.distributed.elastic.multiprocessing.api``: one node's worker processes --
started as commands, watched, and stopped together.

NOTE [ stopping workers ]
Each worker starts in a session of its own (so a Ctrl-C at the terminal reaches only the
launcher, which decides what the workers get) and, on Linux, with ``PR_SET_PDEATHSIG`` set to
SIGKILL, so even a launcher killed outright (SIGKILL, an OOM kill, a test's timeout) takes its
workers with it.  ``close(sig, timeout)`` sends ``sig`` to every live worker's process group
(the worker and whatever it started), waits up to ``timeout`` seconds for all of them, then
SIGKILLs the groups still alive; a signal the launcher itself receives while it waits (a second
Ctrl-C) skips the wait and SIGKILLs at once.  A worker that exits non-zero is noticed at the
next poll (every ``monitor_interval`` seconds) and the others are closed with SIGTERM, as
torchrun does.

Workers in a JAX distributed job need two departures from torchrun, both measured with two
workers on gloo, rank 1 raising while rank 0 waits in a collective:
- A process that called ``jax.distributed.initialize`` catches SIGTERM (JAX's preemption
  notifier records it for ``reached_preemption_sync_point`` and the process runs on), so only
  the SIGKILL after the grace stops it: the grace is what every failure costs.  It defaults to
  5 seconds here, not torchrun's 30 (``--shutdown-timeout`` / TORCH_ELASTIC_SHUTDOWN_TIMEOUT set
  it, e.g. to leave time for a checkpoint on preemption).
- A failing process does not exit: at exit JAX's distributed shutdown waits at a barrier for
  every other process (up to its ``shutdown_timeout_seconds``, 300 s), and rank 0 is blocked in
  a collective that will never complete, so torchrun's rule -- act when a worker exits -- waited
  past 190 s (then the test's timeout ended it).  A worker whose entry point is decorated with
  ``@record`` writes its error file before it starts to exit; a worker still alive
  ``_RECORDED_EXIT_GRACE`` seconds after its error file appeared counts as failed, and the group
  is stopped (its exit status is then the signal that ended it; its recorded traceback is still
  the root cause): the group is down about ten seconds after the error (tests/
  test_distributed_run.py runs this case).  A program without ``@record`` leaves no sign until
  it exits.
"""
import atexit
import ctypes
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from enum import IntFlag

from ..utils.logging import get_logger
from .errors import ProcessFailure

__all__ = ["Std", "SignalException", "DefaultLogsSpecs", "RunProcsResult",
           "SubprocessContext", "start_processes"]

logger = get_logger(__name__)


class SignalException(Exception):
    """Mirrors ``torch.distributed.elastic.multiprocessing.api.SignalException``: raised in
    the launcher by the handler of a death signal (SIGTERM, SIGINT, ...) it receives."""

    def __init__(self, msg, sigval):
        super().__init__(msg)
        self.sigval = sigval


def _terminate_process_handler(signum, frame):
    sigval = signal.Signals(signum)
    raise SignalException(f"Process {os.getpid()} got signal: {sigval}", sigval=sigval)


def handle_signals(names):
    """Install the launcher's handler for the signals named in ``names`` ("SIGTERM,SIGINT");
    returns the previous handlers, for ``signal.signal`` to put back."""
    previous = {}
    if threading.current_thread() is not threading.main_thread():
        logger.warning("signal handlers can only be installed in the main thread: a signal "
                       "to the launcher will not stop its workers")
        return previous
    for name in filter(None, (n.strip() for n in names.split(","))):
        sig = getattr(signal, name, None)
        if not isinstance(sig, signal.Signals):
            logger.warning("Unknown signal %s in signals to handle: ignored", name)
            continue
        previous[sig] = signal.signal(sig, _terminate_process_handler)
    return previous


class Std(IntFlag):
    """Mirrors ``torch.distributed.elastic.multiprocessing.Std``: which streams of a worker
    ``--redirects`` / ``--tee`` apply to."""
    NONE = 0
    OUT = 1
    ERR = 2
    ALL = 3

    @classmethod
    def from_str(cls, vm):
        """"3" -> Std.ALL for every local rank; "0:3,1:0" -> {0: Std.ALL, 1: Std.NONE}."""
        if re.match(_VALUE_REGEX, vm):
            return cls(int(vm))
        if re.match(_MAPPING_REGEX, vm):
            return {int(i): cls(int(v)) for i, v in (m.split(":") for m in vm.split(","))}
        raise ValueError(f"{vm} does not match: <{_VALUE_REGEX}> or <{_MAPPING_REGEX}>")


_VALUE_REGEX, _MAPPING_REGEX = r"^[0123]$", r"^(\d:[0123],)*(\d:[0123])$"


def _per_rank(value, nprocs):
    return (dict(value) if isinstance(value, dict)
            else {r: value for r in range(nprocs)})


class DefaultLogsSpecs:
    """Mirrors ``torch.distributed.elastic.multiprocessing.DefaultLogsSpecs``: where a
    worker's error file and redirected streams go --
    ``<log_dir>/<run_id>_<random>/attempt_<restart>/<local_rank>/{error.json,stdout.log,
    stderr.log}``, ``log_dir`` defaulting to a fresh ``torchelastic_*`` directory under the
    system's temporary directory (removed at the end of the run when it holds no logs).

    Args:
        log_dir: the base directory, reused across runs.
        redirects: streams written to the log files instead of the console (``Std`` or a
            ``{local_rank: Std}`` map).
        tee: streams written to the log files and to the console, each line prefixed with
            ``[<role><local_rank>]:``.
        local_ranks_filter: local ranks whose streams reach the console (default: all).
    """

    def __init__(self, log_dir=None, redirects=Std.NONE, tee=Std.NONE, local_ranks_filter=None):
        if log_dir is not None and os.path.isfile(log_dir):
            raise NotADirectoryError(f"log_dir: {log_dir} is a file")
        self._log_dir, self._made = log_dir, log_dir is None
        self._redirects, self._tee = redirects, tee
        self._local_ranks_filter = local_ranks_filter
        self._run_dir = None

    @property
    def root_log_dir(self):
        if self._log_dir is None:
            self._log_dir = tempfile.mkdtemp(prefix="torchelastic_")
            atexit.register(self.cleanup)   # after the summary and @record have read it
        return self._log_dir

    def reify(self, run_id, attempt, nprocs):
        """The files of attempt ``attempt``'s ``nprocs`` workers: a dict of per-rank dicts
        ``error_files``, ``stdouts`` / ``stderrs`` (a path where the stream is redirected or
        teed) and ``tee`` / ``console`` (the Std of streams copied to, or allowed on, the
        console)."""
        if self._run_dir is None:
            os.makedirs(self.root_log_dir, exist_ok=True)
            self._run_dir = tempfile.mkdtemp(prefix=f"{run_id}_", dir=self.root_log_dir)
        redirects, tee = _per_rank(self._redirects, nprocs), _per_rank(self._tee, nprocs)
        dest = {k: {} for k in ("error_files", "stdouts", "stderrs", "tee", "console")}
        for rank in range(nprocs):
            folder = os.path.join(self._run_dir, f"attempt_{attempt}", str(rank))
            os.makedirs(folder, exist_ok=True)
            to_file = redirects.get(rank, Std.NONE) | tee.get(rank, Std.NONE)
            dest["error_files"][rank] = os.path.join(folder, "error.json")
            dest["stdouts"][rank] = (os.path.join(folder, "stdout.log")
                                     if to_file & Std.OUT else None)
            dest["stderrs"][rank] = (os.path.join(folder, "stderr.log")
                                     if to_file & Std.ERR else None)
            shown = self._local_ranks_filter is None or rank in self._local_ranks_filter
            dest["tee"][rank] = tee.get(rank, Std.NONE) if shown else Std.NONE
            dest["console"][rank] = (Std.ALL & ~redirects.get(rank, Std.NONE)
                                     if shown else Std.NONE)
        return dest

    def cleanup(self):
        """Remove the temporary base directory this spec made, unless it holds logs."""
        if not self._made or self._log_dir is None:
            return
        for _, _, files in os.walk(self._log_dir):
            if any(f.endswith(".log") for f in files):
                return
        shutil.rmtree(self._log_dir, ignore_errors=True)


class RunProcsResult:
    """Mirrors ``torch.distributed.elastic.multiprocessing.api.RunProcsResult``: ``failures``
    maps local rank to ``ProcessFailure`` (first the workers that failed, then those stopped
    because of them); ``return_values`` is ``{local_rank: None}`` when every worker succeeded."""

    def __init__(self, failures, return_values=None):
        self.failures, self.return_values = failures, return_values or {}

    def is_failed(self):
        return bool(self.failures)


def _die_with_parent():
    """Runs in the forked child before exec: SIGKILL it when the launcher dies (Linux)."""
    _libc.prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG


_libc = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


def _copy_lines(pipe, file, console, prefix):
    """Tee: each line of ``pipe`` to ``file`` and, prefixed, to ``console`` (binary)."""
    with pipe, file:
        for line in iter(pipe.readline, b""):
            file.write(line)
            file.flush()
            if console is not None:
                console.write(prefix + line)
                console.flush()


# seconds a worker that recorded its error may take to exit by itself (NOTE [ stopping workers ])
_RECORDED_EXIT_GRACE = 5.0


class SubprocessContext:
    """Mirrors ``torch.distributed.elastic.multiprocessing.api.SubprocessContext``: the
    workers of one attempt, each the command ``[entrypoint, *args[local_rank]]`` with
    environment ``os.environ | envs[local_rank]``; ``logs`` is ``DefaultLogsSpecs.reify``'s
    result; ``shutdown_timeout``: the grace before SIGKILL when a failure stops the others.
    NOTE [ stopping workers ]."""

    def __init__(self, name, entrypoint, args, envs, logs, shutdown_timeout=30):
        self.name, self.entrypoint, self.args, self.envs = name, entrypoint, args, envs
        self.shutdown_timeout = shutdown_timeout
        self.nprocs, self.logs = len(args), logs
        self.error_files = logs["error_files"]
        self.procs, self._threads, self._files = {}, [], []
        self._failures, self._recorded_at = {}, {}

    def start(self):
        try:
            self._start()
        except BaseException:   # a command that cannot start: stop those that did
            self.close(timeout=self.shutdown_timeout)
            raise
        return self

    def _start(self):
        for rank in range(self.nprocs):
            if os.path.isfile(self.error_files[rank]):
                os.remove(self.error_files[rank])
            env = {**os.environ, **self.envs[rank],
                   "TORCHELASTIC_ERROR_FILE": self.error_files[rank]}
            out = self._stream(rank, "stdouts", Std.OUT, sys.stdout)
            err = self._stream(rank, "stderrs", Std.ERR, sys.stderr)
            try:
                proc = subprocess.Popen(
                    [self.entrypoint, *self.args[rank]], env=env, stdout=out[0],
                    stderr=err[0], start_new_session=True,
                    preexec_fn=_die_with_parent if _libc else None)
            except BaseException:
                for _, copy in (out, err):
                    if copy is not None:
                        copy[0].close()
                raise
            self.procs[rank] = proc
            for (_, copy), pipe in ((out, proc.stdout), (err, proc.stderr)):
                if copy is not None:
                    file, console = copy
                    thread = threading.Thread(target=_copy_lines, daemon=True, args=(
                        pipe, file, console, f"[{self.name}{rank}]:".encode()))
                    thread.start()
                    self._threads.append(thread)

    def _stream(self, rank, key, which, console):
        """``(Popen's stdout/stderr argument, (file, console) to tee into or None)``."""
        path = self.logs[key][rank]
        console = getattr(console, "buffer", console)
        if path is None:
            return (None if self.logs["console"][rank] & which else subprocess.DEVNULL), None
        file = open(path, "wb")
        if not self.logs["tee"][rank] & which:
            self._files.append(file)
            return file, None
        return subprocess.PIPE, (file, console)

    def pids(self):
        return {rank: proc.pid for rank, proc in self.procs.items()}

    def _capture_failures(self):
        done = set()
        for rank, proc in self.procs.items():
            code = proc.poll()
            if code is None:
                continue
            done.add(rank)
            if code != 0 and rank not in self._failures:
                self._failures[rank] = ProcessFailure(rank, proc.pid, code,
                                                      self.error_files[rank])
        return done

    def wait(self, timeout=-1, period=1):
        """Mirrors ``PContext.wait``: poll every ``period`` seconds until every worker
        succeeded or one failed (then the others are closed), or ``timeout`` seconds passed
        (None then; a negative timeout waits forever)."""
        expiry = None if timeout < 0 else time.monotonic() + timeout
        while True:
            result = self._poll()
            if result is not None or timeout == 0:
                return result
            if expiry is not None and time.monotonic() >= expiry:
                return None
            time.sleep(period)

    def _poll(self):
        """``RunProcsResult`` once every worker succeeded or one failed, else None."""
        done = self._capture_failures()
        if len(done) < self.nprocs and not self._failures and not self._stuck_after_error():
            return None
        self.close(timeout=self.shutdown_timeout)
        self._capture_failures()   # the workers stopped because of the failure
        if not self._failures:
            return RunProcsResult({}, dict.fromkeys(range(self.nprocs)))
        first = min(self._failures.values(), key=lambda f: f.timestamp)
        logger.error("failed (exitcode: %s) local_rank: %s (pid: %s) of binary: %s",
                     first.exitcode, first.local_rank, first.pid, self.entrypoint)
        return RunProcsResult(dict(self._failures))

    def _stuck_after_error(self):
        """Whether a live worker recorded its error ``_RECORDED_EXIT_GRACE`` seconds ago or more
        (NOTE [ stopping workers ])."""
        now = time.monotonic()
        for rank, proc in self.procs.items():
            if proc.poll() is None and os.path.isfile(self.error_files[rank]):
                since = self._recorded_at.setdefault(rank, now)
                if now - since >= _RECORDED_EXIT_GRACE:
                    logger.warning("local_rank %s (pid: %s) recorded an error and has not exited "
                                   "after %ss: stopping the workers", rank, proc.pid,
                                   _RECORDED_EXIT_GRACE)
                    return True
        return False

    def close(self, death_sig=signal.SIGTERM, timeout=30):
        """Stop every live worker: ``death_sig`` to its process group, SIGKILL after
        ``timeout`` seconds (NOTE [ stopping workers ])."""
        live = [p for p in self.procs.values() if p.poll() is None]
        for proc in live:
            logger.warning("Sending process %s closing signal %s", proc.pid, death_sig.name)
            _signal_group(proc, death_sig)
        try:
            end = time.monotonic() + timeout
            for proc in live:
                try:
                    proc.wait(max(0.0, end - time.monotonic()))
                except subprocess.TimeoutExpired:
                    pass
        finally:   # also when a signal to the launcher interrupts the wait
            for proc in self.procs.values():
                if proc.poll() is None:
                    logger.warning("Unable to shutdown process %s via %s, forcefully exiting "
                                   "via %s", proc.pid, death_sig, signal.SIGKILL)
                    _signal_group(proc, signal.SIGKILL)
                    try:
                        proc.wait(timeout)
                    except subprocess.TimeoutExpired:   # stuck in the kernel: nothing helps
                        logger.error("Process %s did not exit after SIGKILL within %ss",
                                     proc.pid, timeout)
            for thread in self._threads:
                thread.join(timeout=5)
            for file in self._files:
                file.close()


def _signal_group(proc, sig):
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):   # the group is gone already
        pass


def start_processes(name, entrypoint, args, envs, logs, shutdown_timeout=30):
    """Mirrors ``torch.distributed.elastic.multiprocessing.start_processes`` for commands:
    starts a ``SubprocessContext`` of these arguments and returns it."""
    return SubprocessContext(name, entrypoint, args, envs, logs, shutdown_timeout).start()
