"""torchlike.multiprocessing: mirrors ``torch.multiprocessing`` -- Python's multiprocessing
re-exported, with ``spawn`` / ``start_processes`` and the sharing-strategy functions.

NOTE [ tensors between processes ]
PyTorch moves a CPU tensor sent to another process into shared memory, so both processes see
one storage.  A torchlike tensor's values live in an XLA buffer, which cannot be shared: sent
through a Queue, a Pipe or as a Process argument, a tensor is pickled by value and the other
process gets a copy.  Results come back the same way (a Queue, ``spawn``'s processes writing
files, ...); a Hogwild-style program whose workers update a shared model in place trains only
the workers' copies.  The sharing strategy is recorded and read back (``file_descriptor`` or
``file_system``, as PyTorch's names), and decides nothing, since nothing is shared.
"""
import multiprocessing as multiprocessing
import sys
from multiprocessing import (  # Python's, as torch.multiprocessing re-exports them
    Array as Array, AuthenticationError as AuthenticationError, Barrier as Barrier,
    BoundedSemaphore as BoundedSemaphore, BufferTooShort as BufferTooShort,
    Condition as Condition, Event as Event, JoinableQueue as JoinableQueue, Lock as Lock,
    Manager as Manager, Pipe as Pipe, Pool as Pool, Process as Process,
    ProcessError as ProcessError, Queue as Queue, RLock as RLock, RawArray as RawArray,
    RawValue as RawValue, Semaphore as Semaphore, SimpleQueue as SimpleQueue,
    TimeoutError as TimeoutError, Value as Value, active_children as active_children,
    allow_connection_pickling as allow_connection_pickling, cpu_count as cpu_count,
    current_process as current_process, freeze_support as freeze_support,
    get_all_start_methods as get_all_start_methods, get_context as get_context,
    get_logger as get_logger, get_start_method as get_start_method,
    log_to_stderr as log_to_stderr, parent_process as parent_process, reducer as reducer,
    set_executable as set_executable, set_forkserver_preload as set_forkserver_preload,
    set_start_method as set_start_method)

from .spawn import (
    ENV_VAR_PARALLEL_START as ENV_VAR_PARALLEL_START, ProcessContext as ProcessContext,
    ProcessExitedException as ProcessExitedException,
    ProcessRaisedException as ProcessRaisedException, spawn as spawn,
    start_processes as start_processes)

_ALL_SHARING_STRATEGIES = ({"file_system"} if sys.platform == "darwin"
                           else {"file_descriptor", "file_system"})
_sharing = {"strategy": "file_system" if sys.platform == "darwin" else "file_descriptor"}


def set_sharing_strategy(new_strategy):
    """Mirrors ``torch.multiprocessing.set_sharing_strategy`` (NOTE [ tensors between
    processes ]: recorded, nothing is shared)."""
    assert new_strategy in _ALL_SHARING_STRATEGIES
    _sharing["strategy"] = new_strategy


def get_sharing_strategy():
    """Mirrors ``torch.multiprocessing.get_sharing_strategy``."""
    return _sharing["strategy"]


def get_all_sharing_strategies():
    """Mirrors ``torch.multiprocessing.get_all_sharing_strategies``."""
    return set(_ALL_SHARING_STRATEGIES)
