"""Mirrors ``torch.multiprocessing.spawn``: run ``fn(i, *args)`` in ``nprocs`` new processes
and raise, in the parent, the first failure with the child's own traceback.

Children start with 'spawn' (a fresh interpreter that imports torchlike; forked children of a
process that started XLA can hang, NOTE [ DataLoader worker start method ]).  A program run
with ``python -m torchlike`` gets ``import torch`` answered by torchlike in its children too
(NOTE [ torch as an alias ])."""
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile
import time
import warnings

__all__ = ["ENV_VAR_PARALLEL_START", "ProcessContext", "ProcessException",
           "ProcessExitedException", "ProcessRaisedException", "spawn", "start_processes"]

ENV_VAR_PARALLEL_START = "TORCH_MP_PARALLEL_START"


class ProcessException(Exception):
    """Mirrors ``torch.multiprocessing.ProcessException``: a spawned process failed."""

    def __init__(self, msg, error_index, error_pid):
        super().__init__(msg)
        self.msg, self.error_index, self.error_pid = msg, error_index, error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """Mirrors ``torch.multiprocessing.ProcessRaisedException``: the process's code raised;
    the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """Mirrors ``torch.multiprocessing.ProcessExitedException``: the process died of a signal
    or exited with a non-zero status."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid, self.exit_code,
                            self.signal_name)


def _die_with_parent():
    """Linux: the child gets SIGINT when its parent dies (PyTorch sets the same)."""
    if sys.platform.startswith("linux"):
        import ctypes
        ctypes.CDLL(None).prctl(1, int(signal.SIGINT))   # 1: PR_SET_PDEATHSIG


def _wrap(fn, i, args, error_file):
    _die_with_parent()
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass   # the parent interrupted us
    except Exception:
        import traceback
        with open(error_file, "wb") as fh:
            pickle.dump(traceback.format_exc(), fh)
        sys.exit(1)


class ProcessContext:
    """Mirrors ``torch.multiprocessing.ProcessContext``: the processes ``start_processes``
    started; ``join()`` waits and raises the first failure."""

    def __init__(self, processes, error_files):
        self.error_files = error_files
        self.processes = processes
        self.sentinels = {process.sentinel: index for index, process in enumerate(processes)}

    def pids(self):
        return [int(process.pid) for process in self.processes]

    def _join_procs_with_timeout(self, timeout):
        end = time.monotonic() + timeout
        for process in self.processes:
            process.join(max(0, end - time.monotonic()))

    def join(self, timeout=None, grace_period=None):
        """Wait up to ``timeout`` seconds; True once every process has exited successfully.
        A process that failed makes the others stop (SIGTERM, after ``grace_period``, then
        SIGKILL) and raises ProcessRaisedException (its traceback) or
        ProcessExitedException."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(self.sentinels.keys(), timeout=timeout)
        error_index = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            process = self.processes[index]
            process.join()
            if process.exitcode != 0:
                error_index = index
                break
        if error_index is None:
            return not self.sentinels
        if grace_period is not None:
            self._join_procs_with_timeout(grace_period)
        for process in self.processes:
            if process.is_alive():
                process.terminate()
        self._join_procs_with_timeout(30 if grace_period is None else grace_period)
        for process in self.processes:
            if process.is_alive():
                process.kill()
            process.join()
        failed = self.processes[error_index]
        if not os.access(self.error_files[error_index], os.R_OK):
            code = failed.exitcode
            if code < 0:
                try:
                    name = signal.Signals(-code).name
                except ValueError:
                    name = f"<Unknown signal {-code}>"
                raise ProcessExitedException(f"process {error_index:d} terminated with signal "
                                             f"{name}", error_index=error_index,
                                             error_pid=failed.pid, exit_code=code,
                                             signal_name=name)
            raise ProcessExitedException(f"process {error_index:d} terminated with exit code "
                                         f"{code:d}", error_index=error_index,
                                         error_pid=failed.pid, exit_code=code)
        with open(self.error_files[error_index], "rb") as fh:
            original_trace = pickle.load(fh)
        msg = f"\n\n-- Process {error_index:d} terminated with the following error:\n"
        raise ProcessRaisedException(msg + original_trace, error_index, failed.pid)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Mirrors ``torch.multiprocessing.start_processes``: ``fn(i, *args)`` in process i of
    ``nprocs``, started with ``start_method``; joined (None) or returned as a ProcessContext
    (``join=False``)."""
    mp = multiprocessing.get_context(start_method)
    error_files, processes = [], []
    for i in range(nprocs):
        tf = tempfile.NamedTemporaryFile(prefix="pytorch-errorfile-", suffix=".pickle",
                                         delete=False)
        tf.close()
        os.unlink(tf.name)
        process = mp.Process(target=_wrap, args=(fn, i, args, tf.name), daemon=daemon)
        process.start()
        error_files.append(tf.name)
        processes.append(process)
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    while not context.join():
        pass


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Mirrors ``torch.multiprocessing.spawn``: ``nprocs`` processes running ``fn(i, *args)``
    (``fn`` defined at a module's top level, so it pickles).  If one fails, the others are
    stopped and the failure is raised here: ProcessRaisedException with the child's
    traceback, or ProcessExitedException.

    Returns:
        None if ``join``, else the ProcessContext.
    """
    if start_method != "spawn":
        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\n"
                      "To use a different start_method use:\n\t\t"
                      " torch.multiprocessing.start_processes(...)", FutureWarning, stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
