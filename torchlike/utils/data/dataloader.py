"""DataLoader: mirrors ``torch.utils.data.dataloader``.

NOTE [ DataLoader worker start method ]
Worker processes start with the 'spawn' method unless ``multiprocessing_context`` names another.
JAX runs threads (XLA's CPU client starts its thread pools when torchlike is imported, because
the default Generator is created then), and a process forked after that holds copies of locks
that no thread will ever release: a forked worker hangs at its first JAX call.
- No context: 'spawn', whatever ``multiprocessing.set_start_method`` chose.  (PyTorch takes
  multiprocessing's default context, which is 'fork' on Linux; and a program that merely made a
  ``multiprocessing.Queue()`` has fixed that default, so it cannot tell a wish.)
- 'fork', as a name or a context object: workers start with 'spawn', and a warning says so.
  Raising instead would break every PyTorch script that asks for 'fork' (common, for speed),
  although nearly all of them run with spawn: torchlike's default already asks for what spawn
  needs.  A script spawn cannot run (an unpicklable dataset) fails at once with pickle's own
  error, after the warning that explains it.  No start
  method a user can pass makes a worker hang.
- 'forkserver': used as asked.  Its server is a fresh process, but by default it preloads
  ``__main__`` -- a script that imports torchlike -- so workers are forked from a process that
  started XLA.  It has worked in every run we made; spawn is the default because it is safe
  whatever the parent has imported.
Measured on the 2-core development machine (two workers started together, time until each had
imported torchlike; other jobs sharing the CPU): spawn 0.9-2.0 s, forkserver preloading only
jax and numpy 0.35-0.7 s.  The difference is the import of jax, which a safe forkserver could
save but torchlike's own import (which starts XLA) could not; ``persistent_workers=True`` pays
the start-up once, and NOTE [ DataLoader timeout ] keeps it out of ``timeout``.
As with spawn in PyTorch (macOS, Windows), datasets, collate_fn and worker_init_fn must be
picklable (defined at module level); a script without an ``if __name__ == "__main__":`` guard
runs as with fork (NOTE [ a main script without a guard ] in _worker.py).  Workers get
``JAX_PLATFORMS=cpu`` unless it is set already, so a worker never claims an accelerator.

NOTE [ DataLoader timeout ]
As in PyTorch, ``timeout`` bounds each wait for the next result from the workers (a batch, an
error, the end of a stream), and a wait that runs out raises "DataLoader timed out after
{timeout} seconds".  Unlike PyTorch, the clock runs only once every worker has said it is up.
A spawned worker spends 1-2 s (far more on a loaded machine) starting Python, importing
torchlike and unpickling the dataset, work that PyTorch's default forked workers never do; a
``timeout`` chosen for PyTorch would expire on start-up alone.  A worker says it is up when it
enters its loop; what it runs from there -- ``worker_init_fn``, ``iter()`` of an
IterableDataset, each fetch and collate -- counts, as in PyTorch.  A worker that dies while
starting still raises at once: liveness is checked throughout every wait.  The price: a
start-up that never ends (a dataset whose unpickling blocks) is not bounded by ``timeout``.

NOTE [ DataLoader worker lifecycle ]
Main process: one index queue per worker and one shared result queue.  At the start of an epoch
the main process hands ``prefetch_factor`` tasks to each worker (round robin); every batch it
takes hands out one more.  Results arrive in any order; they are kept until their turn (unless
``in_order=False``).  While waiting it polls the queue every ``_STATUS_CHECK_INTERVAL`` seconds
and checks that each worker is alive, so a worker that died raises at once instead of hanging.
Shutdown (epoch finished without persistent workers, iterator garbage-collected, error): set the
done event, send ``None`` to each worker, join with a timeout, terminate what is left.  Workers
are daemonic, so the interpreter's exit also terminates them; ``__del__`` does nothing once the
interpreter is exiting.  With ``persistent_workers`` the iterator (and its workers) lives on the
DataLoader; a new epoch sends ``_ResumeIteration`` to each worker and discards everything that
arrives before each worker's echo (leftovers from an epoch that was broken off).
"""
import atexit
import contextlib
import itertools
import multiprocessing
import multiprocessing.spawn
import os
import pickle
import queue
import signal
import sys
import time
import warnings
from typing import Generic, TypeVar


from ... import _dtype as D
from ..._creation import empty
from . import _worker
from ..._device import accelerator_type
from ...autograd.profiler import record_function
from ._collate import default_collate, default_convert, pin_memory
from ._fetch import _DatasetKind, _InfiniteConstantSampler
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]

get_worker_info = _worker.get_worker_info

T_co = TypeVar("T_co", covariant=True)

_DEFAULT_START_METHOD = "spawn"      # NOTE [ DataLoader worker start method ]
_STATUS_CHECK_INTERVAL = 0.1         # seconds between worker liveness checks while waiting
_JOIN_TIMEOUT = 5.0                  # seconds a worker gets to exit before it is terminated

_python_exiting = False


def _set_python_exiting():
    global _python_exiting
    _python_exiting = True


atexit.register(_set_python_exiting)


def _iterable_option_error(name, value):
    raise ValueError(f"DataLoader with IterableDataset: expected unspecified {name} option, "
                     f"but got {name}={value}")


class DataLoader(Generic[T_co]):
    """Mirrors ``torch.utils.data.DataLoader``: iterate a dataset in (shuffled) batches,
    optionally loading them in worker processes.

    Args:
        dataset: a map-style ``Dataset`` or an ``IterableDataset``.
        batch_size: samples per batch (default 1); ``None`` turns automatic batching off (each
            sample goes through ``default_convert`` instead of ``default_collate``).
        shuffle: a new random order every epoch (map-style datasets only).
        sampler, batch_sampler: where the indices come from, instead of ``shuffle`` /
            ``batch_size`` / ``drop_last``.
        num_workers: worker processes (0: load in the main process).
        collate_fn: merges a list of samples into a batch (default ``default_collate``).
        pin_memory: with an accelerator, batches come pinned (NOTE [ pinned memory ] in
            torchlike/_ops/convert.py); without one, PyTorch's warning.
        pin_memory_device: deprecated, as in PyTorch (its warning is given).
        drop_last: drop the last, incomplete batch.
        timeout: seconds to wait for a batch from the workers before raising (0: forever);
            the workers' start-up is not counted (NOTE [ DataLoader timeout ]).
        worker_init_fn: called as ``worker_init_fn(worker_id)`` in each worker after seeding.
        multiprocessing_context: a start method name or a ``multiprocessing`` context (default
            'spawn'; 'fork' is replaced by 'spawn' with a warning, see NOTE [ DataLoader worker
            start method ]).
        generator: the ``torchlike.Generator`` for ``RandomSampler`` and for the workers'
            base seed.
        prefetch_factor: batches each worker loads ahead (default 2 with workers).
        persistent_workers: keep the workers (and each one's copy of the dataset) between
            epochs.
        in_order: yield batches in sampler order; ``False`` yields each as soon as it is
            ready.

    Each worker seeds Python's ``random`` and torchlike's global generator with
    ``base_seed + worker_id`` (``base_seed`` is drawn from ``generator`` or the global RNG for
    every iterator) and numpy's global RNG as PyTorch does; ``get_worker_info()`` describes
    the worker.  Tensors come back from workers pickled as numpy arrays.

    Example:
        >>> ds = TensorDataset(torchlike.arange(10.))
        >>> [b[0].tolist() for b in DataLoader(ds, batch_size=4)]
        [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0]]
    """

    __initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set "
                             "prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            if shuffle not in (None, False):
                _iterable_option_error("shuffle", shuffle)
            if sampler is not None:
                _iterable_option_error("sampler", sampler)
            if batch_sampler is not None:
                _iterable_option_error("batch_sampler", batch_sampler)
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = _DatasetKind.Map

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")

        if sampler is None:
            if self._dataset_kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.__initialized = True
        self._IterableDataset_len_called = None
        self._iterator = None
        self.check_worker_number_rationality()

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context):
        if context is not None:
            if self.num_workers <= 0:
                raise ValueError("multiprocessing_context can only be used with multi-process "
                                 "loading (num_workers > 0), but got "
                                 f"num_workers={self.num_workers}")
            if isinstance(context, str):
                methods = multiprocessing.get_all_start_methods()
                if context not in methods:
                    raise ValueError("multiprocessing_context option should specify a valid "
                                     f"start method in {methods!r}, but got "
                                     f"multiprocessing_context={context!r}")
                context = multiprocessing.get_context(context)
            if not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError("multiprocessing_context option should be a valid context "
                                "object or a string specifying the start method, but got "
                                f"multiprocessing_context={context}")
        self.__multiprocessing_context = context

    def __setattr__(self, attr, val):
        if self.__initialized and attr in ("batch_size", "batch_sampler", "sampler",
                                           "drop_last", "dataset", "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self):
        if self._dataset_kind == _DatasetKind.Iterable:
            # An IterableDataset's __len__ is only what it claims; torch warns when more is read.
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                length = (length // self.batch_size if self.drop_last
                          else -(-length // self.batch_size))
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self):
        """Warn (as PyTorch does) when more workers are asked for than CPUs are usable."""
        if not self.num_workers:
            return
        cpuset = hasattr(os, "sched_getaffinity")
        suggest = len(os.sched_getaffinity(0)) if cpuset else os.cpu_count()
        if suggest is not None and self.num_workers <= suggest:
            return
        if suggest is None:
            why = ("DataLoader is not able to compute a suggested max number of worker in "
                   "current system.")
        else:
            why = (f"Our suggested max number of worker in current system is {suggest}"
                   f"{'' if cpuset else ' (`cpuset` is not taken into account)'}, which is "
                   "smaller than what this DataLoader is going to create.")
        warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in "
                      f"total. {why} Please be aware that excessive worker creation might get "
                      "DataLoader running slow or even freeze, lower the worker number to "
                      "avoid potential slowness/freeze if necessary.", stacklevel=2)


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn("pin_memory_device is deprecated, the current accelerator will be "
                          f"used as the device,ignore pin_memory_device="
                          f"'{loader.pin_memory_device}'.", stacklevel=3)
        self._pin_memory = loader.pin_memory and accelerator_type() is not None
        if loader.pin_memory and not self._pin_memory:
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=3)
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = int(empty((), dtype=D.int64).random_(generator=loader.generator)
                              .item())
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)

    def __next__(self):
        # the range PyTorch's profiler shows (NOTE [ profiler hook ] in autograd/profiler.py)
        with record_function(f"enumerate(DataLoader)#{type(self).__name__}.__next__"):
            data = self._next_data()
            if self._pin_memory:
                data = pin_memory(data)
        self._num_yielded += 1
        expected = self._IterableDataset_len_called
        if (self._dataset_kind == _DatasetKind.Iterable and expected is not None
                and self._num_yielded > expected):
            msg = (f"Length of IterableDataset {self._dataset} was reported to be {expected}"
                   f"(when accessing len(dataloader)), but {self._num_yielded} samples have "
                   "been fetched. ")
            if self._num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not properly "
                        "configuring the IterableDataset replica at each worker. Please see "
                        "https://pytorch.org/docs/stable/data.html#torch.utils.data."
                        "IterableDataset for examples.")
            warnings.warn(msg, stacklevel=2)
        return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        # PyTorch passes the name as a second argument (no format), so its message is a tuple
        raise NotImplementedError("{} cannot be pickled", self.__class__.__name__)


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        if self._timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        self._dataset_fetcher = _DatasetKind.create_fetcher(
            self._dataset_kind, self._dataset, self._auto_collation, self._collate_fn,
            self._drop_last)

    def _next_data(self):
        return self._dataset_fetcher.fetch(self._next_index())


@contextlib.contextmanager
def _worker_environment():
    """While the workers start: ``JAX_PLATFORMS=cpu`` in the environment they inherit, so that
    no worker claims an accelerator's memory (load data on the CPU; the main process moves it),
    and spawn's preparation data without the main module, which each worker re-runs itself
    (NOTE [ a main script without a guard ] in _worker.py)."""
    before = os.environ.get("JAX_PLATFORMS")
    os.environ["JAX_PLATFORMS"] = "cpu"
    preparation = multiprocessing.spawn.get_preparation_data

    def without_main(name):
        data = preparation(name)
        data.pop("init_main_from_name", None)
        data.pop("init_main_from_path", None)
        return data
    multiprocessing.spawn.get_preparation_data = without_main
    try:
        yield
    finally:
        multiprocessing.spawn.get_preparation_data = preparation
        if before is None:
            os.environ.pop("JAX_PLATFORMS", None)
        else:
            os.environ["JAX_PLATFORMS"] = before


def _worker_context(context):
    """The context to start workers with: ``context`` (the loader's), 'spawn' where it is
    None or 'fork' (NOTE [ DataLoader worker start method ])."""
    if context is not None and context.get_start_method() != "fork":
        return context
    if context is not None:
        warnings.warn("DataLoader workers cannot be started with 'fork': JAX runs threads in this "
                      "process, and a forked worker would hang at its first JAX call. They are "
                      "started with 'spawn' instead, which needs a picklable dataset, collate_fn "
                      "and worker_init_fn; pass "
                      "multiprocessing_context='spawn' to silence this warning.", stacklevel=5)
    return multiprocessing.get_context(_DEFAULT_START_METHOD)


def _start_worker(worker):
    """Start a worker process; where its arguments cannot be pickled, PyTorch's warning comes
    first (its advice to try 'fork' replaced: NOTE [ DataLoader worker start method ])."""
    try:
        worker.start()
    except (TypeError, AttributeError, pickle.PicklingError):
        warnings.warn("Got pickle error when attempting to start a worker Process. This might be "
                      "because the worker Process arguments are not picklable. torchlike starts "
                      "DataLoader workers with 'spawn' (a forked worker would hang on JAX's "
                      "threads), which requires the dataset, collate_fn and worker_init_fn to be "
                      "picklable: define them at module level.", stacklevel=5)
        raise


def _exit_description(worker):
    """What PyTorch's SIGCHLD handler says of a worker that died (None for exit code 0, which
    it does not report)."""
    code = worker.exitcode
    if code is not None and code < 0:
        try:
            name = signal.strsignal(-code) or f"signal {-code}"
        except ValueError:
            name = f"signal {-code}"
        return f"DataLoader worker (pid {worker.pid}) is killed by signal: {name}. "
    if code:
        return (f"DataLoader worker (pid {worker.pid}) exited unexpectedly with exit code {code}. "
                "Details are lost due to multiprocessing. Rerunning with num_workers=0 may give "
                "better error trace.")
    return None


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Loads batches in worker processes (NOTE [ DataLoader worker lifecycle ])."""

    _shutdown = True      # nothing to stop until __init__ has started workers

    def __init__(self, loader):
        if _worker._RERUNNING_MAIN:   # NOTE [ a main script without a guard ]
            raise _worker.MainStops
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        ctx = _worker_context(loader.multiprocessing_context)
        self._result_queue = ctx.Queue()
        self._done_event = ctx.Event()
        self._index_queues = []
        self._workers = []
        self._worker_active = []
        self._workers_starting = set(range(self._num_workers))   # NOTE [ DataLoader timeout ]
        self._shutdown = False
        main = _worker.MainModule(_worker.main_module_source(sys.modules["__main__"]))
        with _worker_environment():
            for worker_id in range(self._num_workers):
                index_queue = ctx.Queue()
                index_queue.cancel_join_thread()
                w = ctx.Process(
                    target=_worker._worker_loop,
                    args=(main, self._dataset_kind, self._dataset, index_queue,
                          self._result_queue, self._done_event, self._auto_collation,
                          self._collate_fn, self._drop_last, self._base_seed,
                          loader.worker_init_fn, worker_id, self._num_workers),
                    daemon=True)
                _start_worker(w)
                self._index_queues.append(index_queue)
                self._workers.append(w)
                self._worker_active.append(True)
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        n = self._num_workers
        self._send_idx = 0                # next task number to hand out
        self._rcvd_idx = 0                # next task number to yield (in order)
        self._task_worker = {}            # task number -> worker, until its result arrives
        self._results = {}                # task number -> (worker, payload) held for its turn
        self._outstanding = 0
        self._worker_active = [True] * n  # False once a worker's IterableDataset copy ended
        self._worker_tasks = [0] * n
        self._worker_cycle = itertools.cycle(range(n))
        if not first_iter:
            for q in self._index_queues:
                q.put(_worker._ResumeIteration())
            waiting = n
            while waiting:
                idx, _ = self._get_data()
                if isinstance(idx, _worker._ResumeIteration):
                    waiting -= 1
        for _ in range(self._prefetch_factor * n):
            self._try_put_index()

    def _try_put_index(self):
        max_tasks = self._prefetch_factor * self._num_workers
        assert self._outstanding < max_tasks
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            w = next(self._worker_cycle)
            if self._worker_active[w] and (
                    self._in_order
                    or self._worker_tasks[w] < max_tasks // sum(self._worker_active)):
                break
        else:
            return          # no worker left to take it (every IterableDataset copy ended)
        self._index_queues[w].put((self._send_idx, index))
        self._task_worker[self._send_idx] = w
        self._worker_tasks[w] += 1
        self._outstanding += 1
        self._send_idx += 1

    def _check_workers(self, empty):
        """Raise PyTorch's error if a worker died; ``empty`` is the wait's ``queue.Empty``, the
        cause where PyTorch has no description of the death."""
        dead = [w for i, w in enumerate(self._workers)
                if self._worker_active[i] and not w.is_alive()]
        if dead:
            for i, w in enumerate(self._workers):
                if w in dead:
                    self._stop_worker(i)
            pids = ", ".join(str(w.pid) for w in dead)
            why = next(filter(None, map(_exit_description, dead)), None)
            raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") \
                from (RuntimeError(why) if why else empty)

    def _get_data(self):
        """The next (task number, payload) from any worker, checking liveness while waiting;
        the timeout's clock starts once every worker is up (NOTE [ DataLoader timeout ])."""
        deadline = None
        while True:
            if deadline is None and self._timeout > 0 and not self._workers_starting:
                deadline = time.monotonic() + self._timeout
            wait = _STATUS_CHECK_INTERVAL
            if deadline is not None:
                wait = max(0.0, min(wait, deadline - time.monotonic()))
            try:
                idx, payload = self._result_queue.get(timeout=wait)
            except queue.Empty as empty:
                self._check_workers(empty)
                if deadline is not None and time.monotonic() >= deadline:
                    raise RuntimeError(
                        f"DataLoader timed out after {self._timeout} seconds") from None
                continue
            if isinstance(idx, _worker._WorkerStarted):
                self._workers_starting.discard(idx.worker_id)
                continue
            return idx, payload

    def _next_data(self):
        while True:
            # Skip tasks that will never come back: handed to a worker whose stream has ended,
            # or already yielded out of order.
            while self._rcvd_idx < self._send_idx:
                i = self._rcvd_idx
                if i in self._results:
                    break
                w = self._task_worker.get(i)
                if w is not None and self._worker_active[w]:
                    break
                self._task_worker.pop(i, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if self._rcvd_idx in self._results:
                w, payload = self._results.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(payload, w)

            assert not self._shutdown and self._outstanding > 0
            idx, payload = self._get_data()
            self._outstanding -= 1
            if isinstance(payload, _worker._IterableDatasetStopIteration):
                w = payload.worker_id
                if self._persistent_workers:
                    self._worker_active[w] = False
                else:
                    self._stop_worker(w)
                self._try_put_index()
                continue
            w = self._task_worker.pop(idx)
            if idx == self._rcvd_idx:
                self._rcvd_idx += 1
                return self._process_data(payload, w)
            if not self._in_order:
                return self._process_data(payload, w)
            self._results[idx] = (w, payload)

    def _process_data(self, payload, worker_id):
        self._worker_tasks[worker_id] -= 1
        self._try_put_index()
        data = pickle.loads(payload)
        if isinstance(data, _worker.ExceptionWrapper):
            data.reraise()
        return data

    def _stop_worker(self, worker_id):
        """Tell one worker to exit (it leaves the loop at ``None``); it takes no more tasks."""
        self._index_queues[worker_id].put(None)
        self._worker_active[worker_id] = False

    def _shutdown_workers(self):
        if _python_exiting or self._shutdown:
            return
        self._shutdown = True
        try:
            self._done_event.set()
            for i in range(len(self._workers)):
                if self._persistent_workers or self._worker_active[i]:
                    self._stop_worker(i)
            deadline = time.monotonic() + _JOIN_TIMEOUT
            for w in self._workers:
                w.join(timeout=max(0.0, deadline - time.monotonic()))
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join()

    def __del__(self):
        self._shutdown_workers()
