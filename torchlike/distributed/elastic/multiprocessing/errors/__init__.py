"""Mirrors ``torch.distributed.elastic.multiprocessing.errors``: how a worker's failure reaches
the launcher's summary.

A worker whose entry point is decorated with ``@record`` writes the exception it dies of --
message, traceback, time -- as JSON to the file ``TORCHELASTIC_ERROR_FILE`` names (the launcher
gives each worker its own).  When a worker fails, the launcher reads that file into a
``ProcessFailure`` (a worker without ``@record``, or killed by a signal, leaves none: its exit
status and signal are all the summary shows) and raises ``ChildFailedError``, whose message is
torchrun's summary: every failed worker, and the first one to fail as the root cause.  The
launcher's own ``main`` is decorated too, so a launcher run by another launcher hands the root
cause on to the error file it was given.

Example::

    from torch.distributed.elastic.multiprocessing.errors import record

    @record
    def main():
        ...   # an exception raised here is shown in the launcher's summary

    if __name__ == "__main__":
        main()
"""
import faulthandler
import json
import os
import signal
import socket
import time
import traceback
import warnings
from datetime import datetime
from functools import wraps

from ...utils.logging import get_logger

__all__ = ["ProcessFailure", "ChildFailedError", "record", "ErrorHandler", "get_error_handler"]

logger = get_logger(__name__)

_NOT_AVAILABLE = "<N/A>"
_NO_TRACEBACK = "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"


class ProcessFailure:
    """Mirrors ``torch.distributed.elastic.multiprocessing.errors.ProcessFailure``: one failed
    worker, with what its error file says (``message``: the recorded error as a dict, or a
    line made from the exit status) and when it failed (``timestamp``, seconds)."""

    def __init__(self, local_rank, pid, exitcode, error_file):
        self.local_rank, self.pid, self.exitcode = local_rank, pid, exitcode
        self.error_file, self.error_file_data = error_file, {"message": "<NONE>"}
        self.message, self.timestamp = "", int(time.time())
        if os.path.isfile(error_file):
            with open(error_file) as f:
                self.error_file_data = json.load(f)
            self.message = self.error_file_data["message"]
            if isinstance(self.message, str):
                self.timestamp = int(self.error_file_data.get("timestamp", 0))
            else:
                self.timestamp = int(self.message["extraInfo"]["timestamp"])
        else:
            self.error_file = _NOT_AVAILABLE
        if not self.message:
            self.message = (f"Signal {-exitcode} ({self.signal_name()}) received by PID {pid}"
                            if exitcode < 0 else _NO_TRACEBACK)

    def __repr__(self):
        return (f"ProcessFailure(local_rank={self.local_rank}, pid={self.pid}, "
                f"exitcode={self.exitcode}, error_file={self.error_file!r})")

    def signal_name(self):
        """The name of the signal that ended the worker (``<N/A>`` if it exited)."""
        try:
            return signal.Signals(-self.exitcode).name if self.exitcode < 0 else _NOT_AVAILABLE
        except ValueError:
            return _NOT_AVAILABLE

    def timestamp_isoformat(self):
        return datetime.fromtimestamp(self.timestamp).isoformat(sep="_")


class ChildFailedError(Exception):
    """Mirrors ``torch.distributed.elastic.multiprocessing.errors.ChildFailedError``: workers of
    the entry point ``name`` failed; ``failures`` maps global rank to ``ProcessFailure``, and the
    message is torchrun's summary of them."""

    def __init__(self, name, failures):
        if not failures:
            raise AssertionError("ChildFailedError needs at least one failure")
        self.name, self.failures = name, failures
        super().__init__(self.format_msg())

    def get_first_failure(self):
        """``(global rank, ProcessFailure)`` of the earliest failure: the root cause."""
        rank = min(self.failures, key=lambda r: self.failures[r].timestamp)
        return rank, self.failures[rank]

    def format_msg(self, boarder_delim="=", section_delim="-"):
        title = f"{self.name} FAILED"
        root_rank, _ = self.get_first_failure()
        host = socket.getfqdn()
        blocks = {rank: _format_failure(i, rank, f, host)
                  for i, (rank, f) in enumerate(self.failures.items())}
        width = min(60, max([len(title)] + [len(line) for b in blocks.values()
                                            for line in b.split("\n")]))
        others = [b for rank, b in blocks.items() if rank != root_rank]
        return "\n".join(["", boarder_delim * width, title, section_delim * width, "Failures:",
                          "\n".join(others or ["  <NO_OTHER_FAILURES>"]),
                          section_delim * width, "Root Cause (first observed failure):",
                          blocks[root_rank], boarder_delim * width])


def _format_failure(idx, rank, failure, host):
    message = failure.message
    if isinstance(message, dict):   # a recorded exception: show its traceback
        message = message.get("extraInfo", {}).get("py_callstack",
                                                   message.get("message", _NOT_AVAILABLE))
        message = message.replace("\n", "\n  ")
    name = failure.signal_name()
    return "\n".join([
        f"[{idx}]:",
        f"  time      : {failure.timestamp_isoformat()}",
        f"  host      : {host}",
        f"  rank      : {rank} (local_rank: {failure.local_rank})",
        f"  exitcode  : {failure.exitcode} (pid: {failure.pid}) "
        + (f" ({name})" if name != _NOT_AVAILABLE else ""),
        f"  error_file: {failure.error_file}",
        f"  traceback : {message}"])


class ErrorHandler:
    """Mirrors ``torch.distributed.elastic.multiprocessing.errors.ErrorHandler``: writes an
    exception as JSON to the file ``TORCHELASTIC_ERROR_FILE`` names (nothing when unset)."""

    def _get_error_file_path(self):
        return os.environ.get("TORCHELASTIC_ERROR_FILE")

    def initialize(self):
        """Dump every thread's stack on a fatal signal (SIGSEGV, SIGABRT, ...)."""
        try:
            faulthandler.enable(all_threads=True)
        except Exception as e:   # stderr may be closed or not a file
            warnings.warn(f"Unable to enable fault handler. {type(e).__name__}: {e}",
                          stacklevel=2)

    def record_exception(self, e):
        """Write ``e`` (being handled now) with its traceback and the time."""
        path = self._get_error_file_path()
        if path:
            data = {"message": {"message": f"{type(e).__name__}: {e}",
                                "extraInfo": {"py_callstack": traceback.format_exc(),
                                              "timestamp": str(int(time.time()))}}}
            with open(path, "w") as f:
                json.dump(data, f)

    def dump_error_file(self, rootcause_error_file, error_code=0):
        """Copy a worker's error file to this process's, with the worker's exit status."""
        with open(rootcause_error_file) as f:
            error = json.load(f)
        if error_code and isinstance(error.get("message"), dict):
            error["message"]["errorCode"] = error_code
        path = self._get_error_file_path()
        if not path:
            logger.error("no error file defined for parent, to copy child error file (%s)",
                         rootcause_error_file)
            return
        if os.path.isfile(path):
            os.remove(path)
        with open(path, "w") as f:
            json.dump(error, f)


def get_error_handler():
    """Mirrors ``torch.distributed.elastic.multiprocessing.errors.get_error_handler``."""
    return ErrorHandler()


def record(fn, error_handler=None):
    """Mirrors ``torch.distributed.elastic.multiprocessing.errors.record``: ``fn``, recording
    an exception it raises in the error file before re-raising it (a ``ChildFailedError``
    hands on its root cause's file instead).  ``SystemExit(0)`` returns None.

    Args:
        fn: the process's top-level function (typically ``main``).
        error_handler: writes the file (default ``get_error_handler()``).
    """
    handler = error_handler or get_error_handler()

    @wraps(fn)
    def wrapper(*args, **kwargs):
        handler.initialize()
        try:
            return fn(*args, **kwargs)
        except SystemExit as e:
            if e.code == 0:
                return None
            raise
        except ChildFailedError as e:
            _, failure = e.get_first_failure()
            if failure.error_file != _NOT_AVAILABLE:
                handler.dump_error_file(failure.error_file, failure.exitcode)
            raise
        except Exception as e:
            handler.record_exception(e)
            raise

    return wrapper
