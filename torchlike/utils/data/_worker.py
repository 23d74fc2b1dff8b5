"""What runs inside a DataLoader worker process, and what it sends back.

A worker says it is up (``_WorkerStarted``), then reads ``(task index, sampler output)`` from its
own index queue, fetches and collates that batch, and puts ``(task index, pickled result)`` on
the shared result queue.  A result is a batch, an ``ExceptionWrapper`` (the dataset raised) or
an ``_IterableDatasetStopIteration``.
Results are pickled here, in the worker's own thread, rather than by the queue's feeder thread:
a batch that cannot be pickled then comes back as an error instead of being dropped (which
would leave the main process waiting for it).  torchlike Tensors pickle as numpy arrays plus
their dtype and are rebuilt as Tensors when the main process unpickles them.

See NOTE [ DataLoader worker lifecycle ] in dataloader.py for how workers start and stop.
"""
import contextlib
import dataclasses
import importlib.util
import multiprocessing
import os
import pickle
import queue
import random
import sys
import traceback
import types

import numpy as np

from ... import _random
from ._fetch import _DatasetKind

# NOTE [ a main script without a guard ]
# PyTorch starts DataLoader workers by fork on Linux, so a script that iterates a loader with
# workers at its top level, with no ``if __name__ == "__main__":`` guard, runs there.  torchlike
# starts them by spawn (NOTE [ DataLoader worker start method ] in dataloader.py), whose children
# re-run the main module to find what the parent pickled by reference (a Dataset class defined in
# the script): unguarded, the child would reach the loader again and start workers of its own,
# which multiprocessing refuses, and the loader would wait for workers that died.  So spawn does
# not re-run the main module for a DataLoader worker (dataloader.py takes it out of the data the
# child reads first); the worker's first argument, a MainModule, re-runs it when the worker
# unpickles its arguments (after spawn has set up sys.path and the directory), as spawn would --
# as ``__mp_main__``, so a guarded script skips its guarded part -- with its printed output
# discarded, and stops it where it starts DataLoader workers (MainStops).  What the script defined
# before that point is there to unpickle the rest of the arguments; nothing after it runs.  A
# guarded script runs as before.  An unguarded script still runs its top level up to the loader
# once per worker (a fork would not): slow set-up there is paid again, as on macOS and Windows.

_RERUNNING_MAIN = []   # non-empty while this worker re-runs the main module


class MainStops(Exception):
    """Raised where the main module, re-run in a worker, starts DataLoader workers."""


def main_module_source(module):
    """Where the program's main ``module`` comes from, as spawn reads it: ('name', its module
    name) after ``python -m``, ('path', its file) for a script, None for an interactive
    session."""
    name = getattr(getattr(module, "__spec__", None), "name", None)
    if name is not None:
        return "name", name
    path = getattr(module, "__file__", None)
    return None if path is None else ("path", os.path.abspath(path))


class MainModule:
    """A worker's first argument: unpickled there, it re-runs the main module (NOTE [ a main
    script without a guard ])."""

    def __init__(self, source):
        self.source = source

    def __reduce__(self):
        return _rerun_main, (self.source,)


def _rerun_main(source):
    if source is None:
        return None
    kind, where = source
    module = types.ModuleType("__mp_main__")
    if kind == "name":
        spec = importlib.util.find_spec(where)
        code = spec.loader.get_code(where)
        module.__dict__.update(__file__=spec.origin, __spec__=spec, __loader__=spec.loader,
                               __package__=spec.parent)
    else:
        with open(where, "rb") as f:
            code = compile(f.read(), where, "exec")
        module.__file__ = where
    sys.modules["__main__"] = sys.modules["__mp_main__"] = module
    _RERUNNING_MAIN.append(True)
    try:
        with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
            exec(code, module.__dict__)
    except MainStops:
        pass
    finally:
        _RERUNNING_MAIN.clear()
    return None


# How often a waiting worker checks that the main process is still alive (seconds).
_POLL_INTERVAL = 1.0

_worker_info = None


@dataclasses.dataclass(frozen=True, slots=True)
class WorkerInfo:
    """Mirrors ``torch.utils.data._utils.worker.WorkerInfo``: what ``get_worker_info()``
    returns inside a worker (frozen).

    Attributes:
        id: this worker's id, ``0 .. num_workers - 1``.
        num_workers: how many workers the loader runs.
        seed: the seed this worker's ``random`` and torchlike RNGs were seeded with
            (``base_seed + id``).
        dataset: this worker's own copy of the dataset.
        rng: always None (PyTorch fills it only for thread workers).
        worker_method: ``"multiprocessing"``.
    """
    id: int
    num_workers: int
    seed: int
    dataset: object
    rng: object = None
    worker_method: str = "multiprocessing"


def get_worker_info():
    """Mirrors ``torch.utils.data.get_worker_info``: this worker's ``WorkerInfo`` inside a
    DataLoader worker process, ``None`` in the main process.

    Use it in ``IterableDataset.__iter__`` or in ``worker_init_fn`` to give each worker its own
    share of the data, or its ``seed`` to seed other libraries.
    """
    return _worker_info


@dataclasses.dataclass(frozen=True)
class _IterableDatasetStopIteration:
    """A worker's IterableDataset copy is exhausted."""
    worker_id: int


@dataclasses.dataclass(frozen=True)
class _WorkerStarted:
    """A worker is up and entering its loop; the timeout's clock may start (NOTE [ DataLoader
    timeout ] in dataloader.py)."""
    worker_id: int


@dataclasses.dataclass(frozen=True)
class _ResumeIteration:
    """Sent to persistent workers at the start of a new epoch; echoed back as an ack."""


class _KeyErrorMessage(str):
    """str(KeyError(msg)) is repr(msg); this keeps the multi-line message readable."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception caught in a worker, carried to the main process as its type and its
    formatted traceback, and re-raised there as the same type (as ``torch._utils``'s)."""

    def __init__(self, exc_info=None, where="in background"):
        exc_type, exc, tb = exc_info if exc_info is not None else sys.exc_info()
        self.exc_type = exc_type
        self.type_name = exc_type.__name__
        self.exc_msg = "".join(traceback.format_exception(exc_type, exc, tb))
        self.where = where

    def reraise(self):
        """Raise the worker's exception type with the worker named and its traceback text."""
        msg = f"Caught {self.type_name} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            # exceptions whose constructor takes the message as a keyword
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            # the type cannot be built from one message string
            raise RuntimeError(msg) from None
        raise exception


def _dumps(data, where):
    """Pickle a result; a result that cannot be pickled becomes the error that says why."""
    try:
        return pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        if isinstance(data, ExceptionWrapper):
            # the exception's class itself cannot be pickled (e.g. defined inside a function)
            data.exc_type = RuntimeError
        else:
            data = ExceptionWrapper(where=where)
        return pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL)


def _seed_worker(base_seed, worker_id):
    """Seed Python's ``random``, torchlike's global generator and numpy's global RNG.

    As in PyTorch: ``random`` and torchlike get ``base_seed + worker_id``; numpy gets four words
    from ``SeedSequence([worker_id, base_seed low 32 bits, high 32 bits, 0])`` (the same state
    PyTorch's workers give numpy, so that numpy's stream differs from ``random``'s).
    """
    seed = base_seed + worker_id
    random.seed(seed)
    _random.manual_seed(seed)
    words = [worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32, 0]
    np.random.seed(np.random.SeedSequence(words).generate_state(4))
    return seed


def _worker_loop(main, dataset_kind, dataset, index_queue, data_queue, done_event,
                 auto_collation, collate_fn, drop_last, base_seed, init_fn, worker_id,
                 num_workers):
    """The body of worker ``worker_id``: serve fetch requests until told to stop (``None``)
    or until the main process is gone.  ``main`` is what re-running the main module returned
    (NOTE [ a main script without a guard ])."""
    global _worker_info
    where = f"in DataLoader worker process {worker_id}"
    try:
        seed = _seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        data_queue.put((_WorkerStarted(worker_id), None))

        def new_fetcher():
            return _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation,
                                               collate_fn, drop_last)

        # An error in worker_init_fn or in iter(dataset) is reported as the first task's result;
        # the tasks after it fail as in PyTorch, on the fetcher that was never made
        # (UnboundLocalError), until a new epoch of persistent workers makes one.
        pending_error = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = new_fetcher()
        except Exception:
            pending_error = ExceptionWrapper(where=where)
        iteration_end = False
        parent = multiprocessing.parent_process()
        while parent is None or parent.is_alive():
            try:
                task = index_queue.get(timeout=_POLL_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(task, _ResumeIteration):
                # a new epoch with persistent workers: restart the IterableDataset's iterator
                iteration_end = False
                try:
                    fetcher = new_fetcher()
                except Exception:
                    pending_error = ExceptionWrapper(where=where)
                data_queue.put((task, None))
                continue
            if task is None:
                break
            if done_event.is_set() or iteration_end:
                continue      # shutting down, or nothing left: drain requests until None
            idx, index = task
            if pending_error is not None:
                data, pending_error = pending_error, None
            else:
                try:
                    data = fetcher.fetch(index)
                except StopIteration:
                    if dataset_kind != _DatasetKind.Iterable:
                        data = ExceptionWrapper(where=where)
                    else:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                except Exception:
                    data = ExceptionWrapper(where=where)
            if not isinstance(data, _IterableDatasetStopIteration):
                data = _dumps(data, where)
            data_queue.put((idx, data))
            del data, task, index
    except KeyboardInterrupt:
        pass      # the main process sees Ctrl-C too, and stops the workers
    if done_event.is_set():
        # results nobody will read must not keep this process alive at exit
        data_queue.cancel_join_thread()
        data_queue.close()
