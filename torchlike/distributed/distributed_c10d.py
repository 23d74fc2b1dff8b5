"""Mirrors ``torch.distributed.distributed_c10d``: process groups and collectives, on JAX's own
distributed runtime.

NOTE [ process groups on JAX ]
A torchlike process is a JAX process.  ``init_process_group`` meets the other ranks at
MASTER_ADDR:MASTER_PORT (a rendezvous in Python: rank 0 listens, and answers with the address of
JAX's coordinator, a free port of its host) and starts JAX's distributed runtime
(``jax.distributed.initialize``; between CPU processes XLA's collectives run over gloo, on GPUs
over NCCL, on TPUs over ICI); a world of one process needs no runtime.  Each rank computes on one device, its *rank device*: the
first device of its process (the one ``cpu`` and ``cuda`` name in that process).  A group is an
ordered list of global ranks and a ``Mesh`` of their rank devices along one axis.

A collective is one cached ``jax.jit`` over that mesh, run in torchlike's 64-bit scope (an int64
tensor stays int64).  Each rank contributes its tensor as its
shard of a global array ``[group size, *shape]`` sharded along the mesh axis; the program reduces,
selects or transposes along the first axis, and its output sharding (replicated, or sharded along
the axis again) says which result each rank's device holds.  The result is copied back into the
caller's tensors, which is how PyTorch's collectives return (in place).  Every rank of the group
runs the same program, so XLA places the communication; torchlike ships no collective of its own.

Ranks must agree on each collective's shapes and dtypes: a mismatch in one XLA collective reads
garbage on one rank and hangs another (measured with jax 0.10.2 over gloo; gloo itself refuses
such a message).  So a collective first all-gathers a fixed-size header (a fingerprint of the
collective, its shape, dtype and arguments) and raises a RuntimeError naming each rank's shape
where they differ.  Checking only a collective's first use is not enough: a rank that has met
the call before would skip its header while another sends one, the mismatch again.  The header
is a second, tiny collective per call.

JAX's runtime must start before JAX makes its first device.  A program that made tensors before
``init_process_group`` (a seed set at import, a constant) has already started JAX's runtime
alone: torchlike then restarts it in distributed mode (``jax.extend.backend.clear_backends``),
and the arrays made before stay valid on the devices they were made on.
"""
import datetime
import functools
import hashlib
import os
import pickle
import socket
import sys
import time
import urllib.parse
import warnings
from enum import Enum

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from .. import _device, _trace_context
from .._x64 import scoped
from .._tensor import Tensor

__all__ = [
    "Backend", "DistBackendError", "DistError", "DistNetworkError", "DistStoreError",
    "GroupMember", "ProcessGroup", "ReduceOp", "Work", "all_gather",
    "all_gather_into_tensor", "all_gather_object", "all_reduce", "all_to_all_single",
    "barrier", "broadcast", "broadcast_object_list", "destroy_process_group", "gather",
    "gather_object", "get_backend", "get_global_rank", "get_group_rank",
    "get_process_group_ranks", "get_rank", "get_world_size", "irecv", "isend", "group", "init_process_group", "is_available", "is_gloo_available",
    "is_initialized", "is_mpi_available", "is_nccl_available", "is_torchelastic_launched",
    "is_xla_available", "new_group", "recv", "reduce", "reduce_scatter",
    "reduce_scatter_tensor", "scatter", "send",
]

default_pg_timeout = datetime.timedelta(minutes=30)
_AXIS = "ranks"


def is_available():
    """Mirrors ``torch.distributed.is_available``: always, on JAX's runtime."""
    return True


def is_gloo_available():
    return True


def is_nccl_available():
    return bool(_device.devices_of("cuda"))


def is_xla_available():
    return True


def is_mpi_available():
    return False


def is_torchelastic_launched():
    """Mirrors ``torch.distributed.is_torchelastic_launched``: started by a torchrun-style
    launcher (``python -m torchlike.distributed.run``), which sets TORCHELASTIC_RUN_ID."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


class Backend(str):
    """Mirrors ``torch.distributed.Backend``: a backend's name, lower-cased and checked."""
    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    XLA = "xla"
    MPI = "mpi"
    backend_list = [UNDEFINED, GLOO, NCCL, XLA, MPI]

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: "
                             f"{type(name)}")
        value = name.lower()
        if value not in cls.backend_list and ":" not in value:
            raise ValueError(f"Unknown backend type {name}")
        return str.__new__(cls, value)


class DistError(RuntimeError):
    """Mirrors ``torch.distributed.DistError``."""


class DistBackendError(DistError):
    """Mirrors ``torch.distributed.DistBackendError``: a collective failed (a rank left)."""


class DistNetworkError(DistError):
    """Mirrors ``torch.distributed.DistNetworkError``: joining the group failed."""


class RedOpType(Enum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8
    UNUSED = 9

    def __repr__(self):
        return f"<RedOpType.{self.name}: {self.value}>"

    def __str__(self):
        return f"RedOpType.{self.name}"


class ReduceOp:
    """Mirrors ``torch.distributed.ReduceOp``: ``ReduceOp.SUM`` and the others are its
    ``RedOpType`` members, as PyTorch's are."""
    RedOpType = RedOpType
    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM
    UNUSED = RedOpType.UNUSED


_REDUCE = {
    RedOpType.SUM: lambda x: jnp.sum(x, axis=0, dtype=x.dtype),
    RedOpType.AVG: lambda x: (jnp.sum(x, axis=0, dtype=x.dtype) / x.shape[0]).astype(x.dtype),
    RedOpType.PRODUCT: lambda x: jnp.prod(x, axis=0, dtype=x.dtype),
    RedOpType.MIN: lambda x: jnp.min(x, axis=0),
    RedOpType.MAX: lambda x: jnp.max(x, axis=0),
    # XLA's CPU collectives reduce with arithmetic only: bitwise ops combine the gathered rows
    RedOpType.BAND: lambda x: functools.reduce(jnp.bitwise_and, list(x)),
    RedOpType.BOR: lambda x: functools.reduce(jnp.bitwise_or, list(x)),
    RedOpType.BXOR: lambda x: functools.reduce(jnp.bitwise_xor, list(x)),
}


class ProcessGroup:
    """Mirrors ``torch.distributed.ProcessGroup``: an ordered set of global ranks, and the mesh
    of their rank devices its collectives run on (NOTE [ process groups on JAX ])."""

    def __init__(self, ranks, backend, name, timeout):
        self._ranks = list(ranks)
        self._backend = backend
        self._name = name
        self._timeout = timeout
        me = _STATE.rank
        self._rank = self._ranks.index(me) if me in self._ranks else -1
        self._mesh = None

    def rank(self):
        return self._rank

    def size(self):
        return len(self._ranks)

    def name(self):
        return self._name

    @property
    def group_name(self):
        return self._name

    def _get_backend_name(self):
        return str(self._backend)

    def _mesh_of(self):
        if self._mesh is None:
            self._mesh = Mesh(np.array([_rank_device(r) for r in self._ranks]), (_AXIS,))
        return self._mesh

    def __repr__(self):
        return f"ProcessGroup(ranks={self._ranks}, backend={self._backend!r})"


class GroupMember:
    """Mirrors ``torch.distributed.GroupMember``: ``WORLD`` is the default group once it
    exists; ``NON_GROUP_MEMBER`` is what ``new_group`` gives a rank outside the group."""
    WORLD = None
    NON_GROUP_MEMBER = -100


group = GroupMember   # torch.distributed.group.WORLD


class Work:
    """Mirrors ``torch.distributed.Work``: an ``async_op=True`` collective's handle.  The
    results are already bound to the tensors (JAX computes them asynchronously where it can);
    ``wait`` blocks until they are ready."""

    def __init__(self, tensors):
        self._tensors = tensors

    def wait(self, timeout=None):
        for t in self._tensors:
            jax.block_until_ready(t._value())
        return True

    def is_completed(self):
        return all(t._value().is_ready() for t in self._tensors)

    def is_success(self):
        return self.is_completed()

    def result(self):
        return list(self._tensors)

    def exception(self):
        return None


class _State:
    rank = 0
    world_size = -1
    backend = None
    runtime = None           # (address, rank, world size) of JAX's runtime, once joined
    names = 0


_STATE = _State()


def _rank_device(rank):
    """The device rank ``rank`` computes on: its process's first device."""
    if _STATE.world_size == 1:
        return jax.local_devices()[0]
    for d in jax.devices():
        if d.process_index == rank:
            return d
    raise RuntimeError(f"no device of rank {rank} among jax.devices()")


# --- the default group ----------------------------------------------------------------------

def _env(name, method):
    value = os.environ.get(name)
    if value is None:
        raise ValueError(f"Error initializing torch.distributed using {method} rendezvous: "
                         f"environment variable {name} expected, but not set")
    return value


def _rendezvous(init_method, rank, world_size):
    """(coordinator address, rank, world size) from an init method, as PyTorch reads them."""
    parsed = urllib.parse.urlparse(init_method)
    query = dict(urllib.parse.parse_qsl(parsed.query))
    if "rank" in query:
        rank = int(query["rank"])
    if "world_size" in query:
        world_size = int(query["world_size"])
    if parsed.scheme == "env":
        if rank < 0:
            rank = int(_env("RANK", "env://"))
        if world_size < 0:
            world_size = int(_env("WORLD_SIZE", "env://"))
        addr = _env("MASTER_ADDR", "env://")
        port = _env("MASTER_PORT", "env://")
        return f"{addr}:{port}", rank, world_size
    if parsed.scheme == "tcp":
        if rank < 0:
            raise ValueError("Error initializing torch.distributed using tcp:// rendezvous: "
                             "rank parameter missing")
        if world_size < 0:
            raise ValueError("Error initializing torch.distributed using tcp:// rendezvous: "
                             "world size parameter missing")
        if parsed.hostname is None or parsed.port is None:
            raise ValueError(f"Error initializing torch.distributed using tcp:// rendezvous: "
                             f"port number missing in {init_method!r}")
        return f"{parsed.hostname}:{parsed.port}", rank, world_size
    raise RuntimeError(f"No rendezvous handler for {parsed.scheme}://")


class DistStoreError(DistError):
    """Mirrors ``torch.distributed.DistStoreError``: the rendezvous timed out."""


def _meet(address, rank, world_size, seconds):
    """The rendezvous before JAX's runtime starts: rank 0 listens at ``address`` until every
    other rank has said hello, then sends each the address of JAX's coordinator (a free port of
    its host).  JAX aborts the process when a peer never comes; this fails in Python instead,
    with PyTorch's errors, after ``seconds``."""
    host, port = address.rsplit(":", 1)
    deadline = time.monotonic() + seconds
    if rank == 0:
        with socket.create_server((host, int(port)), reuse_port=False) as server:
            peers = {}
            try:
                while len(peers) < world_size - 1:
                    server.settimeout(max(0.01, deadline - time.monotonic()))
                    try:
                        conn, _ = server.accept()
                    except socket.timeout:
                        raise DistStoreError(
                            f"Timed out after {seconds} seconds waiting for clients. "
                            f"{len(peers) + 1}/{world_size} clients joined.") from None
                    conn.settimeout(5)
                    peer = int(conn.recv(16).decode() or -1)
                    if not 0 < peer < world_size or peer in peers:
                        conn.close()
                        raise DistStoreError(f"rendezvous: rank {peer} joined a group of "
                                             f"{world_size} twice or out of range")
                    peers[peer] = conn
                with socket.socket() as probe:
                    probe.bind((host, 0))
                    coordinator = f"{host}:{probe.getsockname()[1]}"
                for conn in peers.values():
                    conn.sendall(coordinator.encode())
            finally:
                for conn in peers.values():
                    conn.close()
        return coordinator
    while True:
        try:
            with socket.create_connection((host, int(port)),
                                          timeout=max(0.01, deadline - time.monotonic())) as c:
                c.sendall(str(rank).encode())
                c.settimeout(max(0.01, deadline - time.monotonic()))
                coordinator = c.recv(256).decode()
                if coordinator:
                    return coordinator
        except OSError:
            pass
        if time.monotonic() >= deadline:
            raise DistNetworkError(f"The client socket has timed out after {seconds * 1000}ms "
                                   f"while trying to connect to ({host}, {port}).")
        time.sleep(0.05)


def _start_runtime(address, rank, world_size, timeout):
    """Start JAX's distributed runtime for this process (NOTE [ process groups on JAX ]).  A
    process joins it once: a later group must be the same world."""
    if _STATE.runtime:
        if _STATE.runtime != (address, rank, world_size):
            raise RuntimeError(f"init_process_group: this process already joined JAX's "
                               f"distributed runtime as rank {_STATE.runtime[1]} of "
                               f"{_STATE.runtime[2]} at {_STATE.runtime[0]}; a process joins it "
                               f"once")
        return
    from jax._src import xla_bridge
    from jax.extend.backend import clear_backends
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    seconds = max(1, int(timeout.total_seconds()))
    if xla_bridge.backends_are_initialized():
        clear_backends()
    # a rank that dies is noticed within the group's timeout (jax's default: 100 s, and 300 s
    # more at exit), so the others fail instead of waiting on it
    bound = min(seconds, 100)
    coordinator = _meet(address, rank, world_size, seconds)
    try:
        jax.distributed.initialize(coordinator_address=coordinator, num_processes=world_size,
                                   process_id=rank, initialization_timeout=seconds,
                                   heartbeat_timeout_seconds=max(bound, 5),
                                   shutdown_timeout_seconds=max(bound, 5))
    except Exception as e:   # jax's own errors name neither the rank nor the address
        raise DistNetworkError(f"init_process_group: rank {rank} of {world_size} could not "
                               f"join the group at {address} within {seconds} s: "
                               f"{str(e).splitlines()[0]}") from None
    _device.reset()
    _STATE.runtime = (address, rank, world_size)
    sys.excepthook = _exit_on_error(sys.excepthook)


def _exit_on_error(hook):
    """An uncaught exception ends the process at once, as it ends a PyTorch worker: JAX's exit
    would first wait for every other rank at its shutdown barrier (up to its timeout), while
    they wait on this rank in their next collective."""
    def excepthook(kind, value, tb):
        hook(kind, value, tb)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)
    return excepthook


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Mirrors ``torch.distributed.init_process_group``: join the default group of
    ``world_size`` processes as ``rank`` (NOTE [ process groups on JAX ]).

    ``backend`` is "gloo" (CPU), "nccl" (GPU), "xla", or PyTorch's "cpu:gloo,cuda:nccl" form;
    None picks by the devices.  ``init_method`` is "env://" (the default: RANK, WORLD_SIZE,
    MASTER_ADDR, MASTER_PORT) or "tcp://host:port" with ``rank`` and ``world_size``.  Joining
    waits at most ``timeout`` (a ``datetime.timedelta``, 30 minutes by default)."""
    if GroupMember.WORLD is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if store is not None:
        raise ValueError("torchlike.distributed has no Store: give init_method (env:// or "
                         "tcp://) instead of store")
    if timeout is None:
        timeout = default_pg_timeout
    elif not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got "
                        f"{type(timeout)}")
    if backend is None:
        backend = "nccl" if is_nccl_available() else "gloo"
    backend = Backend(backend)
    address, rank, world_size = _rendezvous(init_method or "env://", rank, world_size)
    if world_size < 1:
        raise ValueError(f"world_size must be positive, got {world_size}")
    if not 0 <= rank < world_size:
        raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, "
                         f"{world_size - 1}]")
    _STATE.rank, _STATE.world_size, _STATE.backend = rank, world_size, backend
    if world_size > 1:
        try:
            _start_runtime(address, rank, world_size, timeout)
        except BaseException:
            _STATE.world_size = -1
            raise
    GroupMember.WORLD = ProcessGroup(range(world_size), backend, group_name or "0", timeout)


def is_initialized():
    """Mirrors ``torch.distributed.is_initialized``."""
    return GroupMember.WORLD is not None


def _world():
    if GroupMember.WORLD is None:
        raise ValueError("Default process group has not been initialized, please make sure to "
                         "call init_process_group.")
    return GroupMember.WORLD


def _group(group):
    if group is None or group is GroupMember.WORLD:
        return _world()
    _world()
    if group == GroupMember.NON_GROUP_MEMBER:
        return group
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup, got {type(group).__name__}")
    return group


def destroy_process_group(group=None):
    """Mirrors ``torch.distributed.destroy_process_group``: without a group, end them all
    (JAX's runtime stays up: a process joins it once)."""
    if group is None or group is GroupMember.WORLD:
        _world()
        GroupMember.WORLD = None
        _PROGRAMS.clear()
        _PAIRS.clear()
    elif isinstance(group, ProcessGroup):
        for key in [k for k in _PROGRAMS if k[0] == group._name]:
            del _PROGRAMS[key]


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None, device_id=None):
    """Mirrors ``torch.distributed.new_group``: a group of the given global ranks (every rank
    calls it, as in PyTorch); a rank outside it gets ``GroupMember.NON_GROUP_MEMBER``."""
    world = _world()
    ranks = list(range(world.size())) if ranks is None else sorted(int(r) for r in ranks)
    for r in ranks:
        if not 0 <= r < world.size():
            raise ValueError(f"Invalid rank {r}, rank should be in the interval [0, "
                             f"{world.size() - 1}]")
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"new_group: duplicate ranks in {ranks}")
    _STATE.names += 1
    pg = ProcessGroup(ranks, Backend(backend) if backend else world._backend,
                      str(_STATE.names), timeout or world._timeout)
    if pg._rank < 0:
        return GroupMember.NON_GROUP_MEMBER
    return pg


def get_rank(group=None):
    """Mirrors ``torch.distributed.get_rank``: this process's rank in ``group`` (-1 outside)."""
    g = _group(group)
    return -1 if g == GroupMember.NON_GROUP_MEMBER else g.rank()


def get_world_size(group=None):
    """Mirrors ``torch.distributed.get_world_size`` (-1 for a group this rank is not in)."""
    g = _group(group)
    return -1 if g == GroupMember.NON_GROUP_MEMBER else g.size()


def get_backend(group=None):
    """Mirrors ``torch.distributed.get_backend``."""
    g = _group(group)
    if g == GroupMember.NON_GROUP_MEMBER:
        raise ValueError("Invalid process group specified")
    return g._get_backend_name()


def get_process_group_ranks(group):
    """Mirrors ``torch.distributed.get_process_group_ranks``: the group's global ranks."""
    return list(_group(group)._ranks)


def get_global_rank(group, group_rank):
    """Mirrors ``torch.distributed.get_global_rank``."""
    g = _group(group)
    if not 0 <= group_rank < g.size():
        raise ValueError(f"Group {g} does not contain rank {group_rank}")
    return g._ranks[group_rank]


def get_group_rank(group, global_rank):
    """Mirrors ``torch.distributed.get_group_rank``."""
    g = _group(group)
    if global_rank not in g._ranks:
        raise ValueError(f"Group {g} does not contain rank {global_rank}")
    return g._ranks.index(global_rank)


# --- running a collective -------------------------------------------------------------------

_PROGRAMS = {}


def _member(g, name):
    """The group to run on, or None (with PyTorch's warning) when this rank is not in it."""
    g = _group(g)
    if g == GroupMember.NON_GROUP_MEMBER:
        warnings.warn(f"Running {name} on global rank {_STATE.rank} which does not belong to "
                      "the given group.")
        return None
    return g


def _array(t, name):
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}(): argument 'tensor' must be Tensor, not {type(t).__name__}")
    return t._value()


def _run(g, kind, key, fn, out_spec, local, name=None):
    """Run the group's cached program for ``fn`` on every rank's ``local`` array stacked along a
    leading axis; this rank's shard of the result (NOTE [ process groups on JAX ]).  In a step
    torchlike.compile traces, the same as collectives of the step's program (NOTE [ collectives
    in a compiled step ])."""
    if isinstance(local, jax.core.Tracer):
        return _traced(g, kind, key, fn, out_spec, local, name)
    prog = _PROGRAMS.get((g._name, kind, key))
    if prog is None:
        prog = _PROGRAMS[(g._name, kind, key)] = jax.jit(
            fn, out_shardings=NamedSharding(g._mesh_of(), PartitionSpec(*out_spec)))
    try:
        return prog(_spread(g, local)).addressable_data(0)
    except (ValueError, jax.errors.JaxRuntimeError) as e:
        if "Gloo" not in str(e) and "UNAVAILABLE" not in str(e) and "NCCL" not in str(e):
            raise
        raise DistBackendError(f"{name or kind} failed on rank {_STATE.rank}: another rank of "
                               f"the group {g._ranks} left or failed: "
                               f"{str(e).splitlines()[0]}") from None


# NOTE [ collectives in a compiled step ]
# While torchlike.compile traces a step, a collective's tensors hold tracers, and the step's
# program is one per process: torchlike.compile runs it under ``shard_map`` over the default
# group's mesh (one device per rank, the axis ``_AXIS``), each process's captured state as its
# own shard (NOTE [ a step over the processes ] in _compile/program.py), and binds that axis
# while it traces (``spmd_axes``).  A collective is then the lax collective over the axis:
# all_reduce with SUM/AVG/MIN/MAX is ``psum``/``pmean``/``pmin``/``pmax`` (XLA's all-reduce
# inside the program, which it may overlap with the rest of backward); any other is an
# ``all_gather`` of every rank's array followed by the eager program's own function, and the
# rank's piece of a scattered result taken at ``axis_index``.  The header of ``_agree`` is not
# sent: shapes are static in a trace, and every process traces the same step.  Only a group of
# every process can run inside a step (its axis is the program's); a subgroup raises.  In a
# group of one the collective is its function on the one array, and the program stays local.
_LAX_REDUCE = {RedOpType.SUM: jax.lax.psum, RedOpType.AVG: jax.lax.pmean,
               RedOpType.MIN: jax.lax.pmin, RedOpType.MAX: jax.lax.pmax}


def spmd_axes():
    """``make_jaxpr``'s ``axis_env`` for a step torchlike.compile traces in this process: the
    default group's axis where it spans several processes, else none (NOTE [ collectives in a
    compiled step ])."""
    world = GroupMember.WORLD
    return [(_AXIS, world.size())] if world is not None and world.size() > 1 else []


def _traced(g, kind, key, fn, out_spec, local, name):
    if g.size() == 1:   # a world of one: no communication, the eager program's function
        return fn(local[None])
    trace = _trace_context.active[-1] if _trace_context.active else None
    if trace is None or not spmd_axes():
        raise RuntimeError(f"{name or kind}: a collective on traced values runs only inside a "
                           "step torchlike.compile traces in a process group of several "
                           "processes")
    if g.size() != GroupMember.WORLD.size():
        raise RuntimeError(f"{name or kind}: a compiled step runs collectives over every "
                           f"process of the default group, not over the group {g._ranks}: "
                           "run this one outside the compiled step")
    trace.group = GroupMember.WORLD
    if kind == "reduce" and key[0] in _LAX_REDUCE:
        return _LAX_REDUCE[key[0]](local, _AXIS)
    out = fn(jax.lax.all_gather(local, _AXIS))
    if out_spec:   # sharded along the axis: this rank's piece
        k = out.shape[0] // g.size()
        out = jax.lax.dynamic_slice_in_dim(out, jax.lax.axis_index(_AXIS) * k, k, 0)
    return out


def _spread(g, local):
    """This rank's array as its shard of the global ``[group size, *shape]`` array."""
    dev = _rank_device(_STATE.rank)
    piece = jax.device_put(local, dev)[None]
    return jax.make_array_from_single_device_arrays(
        (g.size(),) + piece.shape[1:], NamedSharding(g._mesh_of(), PartitionSpec(_AXIS)), [piece])


def _agree(g, kind, shape, dtype, extra=""):
    """Check that every rank of the group calls this collective with the same shapes, dtypes
    and arguments, by one all-gather of a fixed-size header (NOTE [ process groups on JAX ])."""
    if g.size() == 1 or _trace_context.active:   # (NOTE [ collectives in a compiled step ])
        return
    text = f"{kind}|{tuple(shape)}|{np.dtype(dtype).name}|{extra}"
    header = np.zeros(2 + _MAX_DIMS, np.int64)
    header[0] = np.frombuffer(hashlib.sha256(text.encode()).digest()[:8], np.int64)[0]
    header[1] = len(shape)
    header[2:2 + min(_MAX_DIMS, len(shape))] = list(shape)[:_MAX_DIMS]
    everyone = np.asarray(_run(g, "agree", (), lambda x: x, (), jnp.asarray(header), kind))
    if (everyone[:, 0] != header[0]).any():
        shapes = ", ".join(f"rank {g._ranks[i]} has {[int(v) for v in row[2:2 + row[1]]]}"
                           for i, row in enumerate(everyone))
        raise RuntimeError(f"{kind}: the ranks of the group called it with different tensor "
                           f"shapes, dtypes or arguments ({shapes}; this rank: {text})")


_MAX_DIMS = 8   # dims a mismatch message shows


def _store(t, value):
    """Write a collective's result into ``t``, in place (PyTorch's collectives return so)."""
    from ..autograd.grad_mode import no_grad
    with no_grad():
        t.copy_(Tensor._wrap(value))


def _finish(tensors, async_op):
    return Work(tensors) if async_op else None


def _check_op(op, arr):
    if op not in _REDUCE:
        raise ValueError(f"Unsupported reduce op {op}")
    if op in (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR) and \
            not (jnp.issubdtype(arr.dtype, jnp.integer) or arr.dtype == bool):
        raise RuntimeError(f"Cannot use ReduceOp.{op.name} with non-integral dtype")


def _src_rank(g, src, name, what="root"):
    if src not in g._ranks:
        raise RuntimeError(f"ProcessGroupGloo::{name}: invalid {what} rank: {src}")
    return g._ranks.index(src)


def _reduced(g, arr, op, kind):
    _check_op(op, arr)
    _agree(g, kind, arr.shape, arr.dtype, op.name)
    return _run(g, "reduce", (op, arr.shape, arr.dtype), _REDUCE[op], (), arr)


def _gathered(g, arr, kind):
    """Every rank's array, stacked: ``[group size, *shape]`` on this rank's device."""
    _agree(g, kind, arr.shape, arr.dtype)
    return _run(g, "gather", (arr.shape, arr.dtype), lambda x: x, (), arr)


@scoped
def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Mirrors ``torch.distributed.all_reduce``: every rank's ``tensor`` becomes the reduction
    of all of them."""
    g = _member(group, "all_reduce")
    if g is None:
        return None
    arr = _array(tensor, "all_reduce")
    _store(tensor, _reduced(g, arr, op, "all_reduce"))
    return _finish([tensor], async_op)


@scoped
def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Mirrors ``torch.distributed.reduce``: rank ``dst``'s ``tensor`` becomes the reduction;
    the others keep theirs."""
    g = _member(group, "reduce")
    if g is None:
        return None
    dst = _global_of(g, dst, group_dst)
    _src_rank(g, dst, "reduce")
    arr = _array(tensor, "reduce")
    out = _reduced(g, arr, op, "reduce")
    if _STATE.rank == dst:
        _store(tensor, out)
    return _finish([tensor], async_op)


def _global_of(g, rank, group_rank, default=None):
    """A root or peer as a global rank, given as one (``rank``) or by its rank in the group
    (``group_rank``); ``default`` where PyTorch has one (gather, scatter: rank 0)."""
    if group_rank is not None:
        if rank is not None:
            raise ValueError("Can't specify both group_rank and global_rank")
        return get_global_rank(g, group_rank)
    if rank is None:
        if default is None:
            raise ValueError("Must specify global_rank or group_rank")
        return default
    return rank


@scoped
def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Mirrors ``torch.distributed.broadcast``: every rank's ``tensor`` becomes rank ``src``'s."""
    g = _member(group, "broadcast")
    if g is None:
        return None
    src = _global_of(g, src, group_src)
    i = _src_rank(g, src, "broadcast")
    arr = _array(tensor, "broadcast")
    _agree(g, "broadcast", arr.shape, arr.dtype, str(src))
    _store(tensor, _run(g, "broadcast", (i, arr.shape, arr.dtype), lambda x: x[i], (), arr))
    return _finish([tensor], async_op)


def _check_list(tensors, n, name):
    if len(tensors) != n:
        raise RuntimeError(f"ProcessGroupGloo::{name}: invalid output tensor list at index 0 "
                           f"(expected length {n}, got {len(tensors)})")


def _check_size(t, shape, dtype, name, index=0):
    if tuple(t.shape) != tuple(shape):
        raise RuntimeError(f"ProcessGroupGloo::{name}: invalid tensor size at index {index} "
                           f"(expected ({', '.join(map(str, shape))}), got "
                           f"({', '.join(map(str, t.shape))}))")
    if t.dtype != dtype:
        raise RuntimeError(f"ProcessGroupGloo::{name}: invalid tensor type at index {index} "
                           f"(expected {dtype}, got {t.dtype})")


def _check_flat(g, whole, piece, name):
    """``whole`` must hold the group's ``piece``-shaped pieces, concatenated along dim 0 (or,
    except on gloo, stacked).  Gloo checks ``whole.chunk(group size)`` piece by piece, and
    PyTorch's message names the first piece that differs."""
    n, shape = g.size(), tuple(piece.shape)
    stacked = (n,) + shape
    concat = ((n * shape[0],) + shape[1:]) if shape else (n,)
    forms = (concat,) if g._backend == Backend.GLOO else (concat, stacked)
    if tuple(whole.shape) in forms and whole.dtype == piece.dtype:
        return
    rows = whole.shape[0] if whole.ndim else 1
    step = -(-rows // n)
    for i in range(n):
        got = (max(0, min(step, rows - i * step)),) + tuple(whole.shape[1:])
        if got != shape:
            raise RuntimeError(f"ProcessGroupGloo::{name}: invalid tensor size at index {i} "
                               f"(expected ({', '.join(map(str, shape))}), got "
                               f"({', '.join(map(str, got))}))")
    raise RuntimeError(f"ProcessGroupGloo::{name}: invalid tensor type (expected {piece.dtype}, "
                       f"got {whole.dtype})")


@scoped
def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Mirrors ``torch.distributed.all_gather``: ``tensor_list[i]`` becomes rank i's
    ``tensor``, on every rank."""
    g = _member(group, "all_gather")
    if g is None:
        return None
    arr = _array(tensor, "all_gather")
    _check_list(tensor_list, g.size(), "allgather")
    for i, t in enumerate(tensor_list):
        _check_size(t, tensor.shape, tensor.dtype, "allgather", i)
    out = _gathered(g, arr, "all_gather")
    for i, t in enumerate(tensor_list):
        _store(t, out[i])
    return _finish(list(tensor_list), async_op)


@scoped
def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Mirrors ``torch.distributed.all_gather_into_tensor``: the ranks' inputs concatenated
    along dim 0 (or stacked, when ``output_tensor`` has the extra leading dim)."""
    g = _member(group, "all_gather_into_tensor")
    if g is None:
        return None
    arr = _array(input_tensor, "all_gather_into_tensor")
    _check_flat(g, output_tensor, input_tensor, "allgather")
    out = _gathered(g, arr, "all_gather_into_tensor")
    _store(output_tensor, out.reshape(output_tensor.shape))
    return _finish([output_tensor], async_op)


@scoped
def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Mirrors ``torch.distributed.gather``: on rank ``dst``, ``gather_list[i]`` becomes rank
    i's ``tensor``; other ranks pass no list."""
    g = _member(group, "gather")
    if g is None:
        return None
    dst = _global_of(g, dst, group_dst, default=0)
    _src_rank(g, dst, "gather")
    arr = _array(tensor, "gather")
    if _STATE.rank == dst:
        if gather_list is None:
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
        _check_list(gather_list, g.size(), "gather")
        for i, t in enumerate(gather_list):
            _check_size(t, tensor.shape, tensor.dtype, "gather", i)
    elif gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination "
                         "ranks.")
    out = _gathered(g, arr, "gather")
    if _STATE.rank == dst:
        for i, t in enumerate(gather_list):
            _store(t, out[i])
        return _finish(list(gather_list), async_op)
    return _finish([tensor], async_op)


@scoped
def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Mirrors ``torch.distributed.scatter``: rank i's ``tensor`` becomes ``scatter_list[i]``
    of rank ``src``; other ranks pass no list."""
    g = _member(group, "scatter")
    if g is None:
        return None
    src = _global_of(g, src, group_src, default=0)
    i = _src_rank(g, src, "scatter")
    n = g.size()
    if _STATE.rank == src:
        if scatter_list is None:
            raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
        if len(scatter_list) != n:
            raise RuntimeError(f"ProcessGroupGloo::scatter: Incorrect input list size "
                               f"{len(scatter_list)}. Input list size should be {n}, same as "
                               f"size of the process group.")
        for k, t in enumerate(scatter_list):
            _check_size(t, tensor.shape, tensor.dtype, "scatter", k)
        pieces = jnp.stack([_array(t, "scatter") for t in scatter_list])
    else:
        if scatter_list:
            raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source "
                             "ranks.")
        arr = _array(tensor, "scatter")
        pieces = jnp.zeros((n,) + arr.shape, arr.dtype)
    _agree(g, "scatter", pieces.shape, pieces.dtype, str(src))
    _store(tensor, _run(g, "scatter", (i, pieces.shape, pieces.dtype), lambda x: x[i],
                        (_AXIS,), pieces)[0])
    return _finish([tensor], async_op)


def _scattered(g, stacked, op, kind):
    """Reduce ``[group size, group size, *shape]`` over ranks; this rank's piece of the
    result (``[*shape]``)."""
    _check_op(op, stacked)
    _agree(g, kind, stacked.shape, stacked.dtype, op.name)
    return _run(g, "reduce_scatter", (op, stacked.shape, stacked.dtype), _REDUCE[op],
                (_AXIS,), stacked)[0]


@scoped
def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Mirrors ``torch.distributed.reduce_scatter``: rank i's ``output`` becomes the reduction
    over ranks of their ``input_list[i]``."""
    g = _member(group, "reduce_scatter")
    if g is None:
        return None
    _check_list(input_list, g.size(), "reduce_scatter")
    for i, t in enumerate(input_list):
        _check_size(t, output.shape, output.dtype, "reduce_scatter", i)
    stacked = jnp.stack([_array(t, "reduce_scatter") for t in input_list])
    _store(output, _scattered(g, stacked, op, "reduce_scatter"))
    return _finish([output], async_op)


@scoped
def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Mirrors ``torch.distributed.reduce_scatter_tensor``: ``input`` is the ranks' pieces
    concatenated along dim 0 (or stacked); rank i's ``output`` becomes the reduction of
    piece i."""
    g = _member(group, "reduce_scatter_tensor")
    if g is None:
        return None
    _check_flat(g, input, output, "reduce_scatter_tensor")
    arr = _array(input, "reduce_scatter_tensor").reshape((g.size(),) + tuple(output.shape))
    _store(output, _scattered(g, arr, op, "reduce_scatter_tensor"))
    return _finish([output], async_op)


@scoped
def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op=False):
    """Mirrors ``torch.distributed.all_to_all_single``: rank i sends the j-th piece of its
    ``input`` (split along dim 0, evenly or by ``input_split_sizes``) to rank j, which puts the
    pieces in rank order into ``output``."""
    g = _member(group, "all_to_all_single")
    if g is None:
        return None
    n = g.size()
    arr = _array(input, "all_to_all_single")
    rows = arr.shape[0] if arr.ndim else 0
    sends = _splits(input_split_sizes, rows, n, "input")
    receives = _splits(output_split_sizes, output.shape[0] if output.ndim else 0, n, "output")
    # every rank's send sizes, so each knows the padded piece size and what it receives
    table = _gathered(g, jnp.asarray(np.array(sends, np.int64)), "all_to_all_single sizes")
    table = np.asarray(table)
    if list(table[:, g.rank()]) != receives:
        raise RuntimeError(f"all_to_all_single: output_split_sizes {receives} do not match what "
                           f"the ranks send to rank {g.rank()}: {list(table[:, g.rank()])}")
    width = int(table.max()) if table.size else 0
    starts = np.concatenate([[0], np.cumsum(sends)[:-1]]).astype(int)
    padded = jnp.stack([jnp.pad(arr[s:s + k], [(0, width - k)] + [(0, 0)] * (arr.ndim - 1))
                        for s, k in zip(starts, sends)])    # [n, width, *rest]
    _agree(g, "all_to_all_single", padded.shape, padded.dtype)
    mine = _run(g, "all_to_all", (padded.shape, padded.dtype),
                lambda x: jnp.swapaxes(x, 0, 1), (_AXIS,), padded)[0]   # [n, width, *rest]
    _store(output, jnp.concatenate([mine[j, :receives[j]] for j in range(n)]))
    return _finish([output], async_op)


def _splits(sizes, rows, n, which):
    if sizes is None or len(sizes) == 0:
        if rows % n:
            raise RuntimeError(f"Tensor's dim 0 does not divide equally across group size "
                               f"(size {rows}, group size {n})")
        return [rows // n] * n
    sizes = [int(s) for s in sizes]
    if len(sizes) != n or sum(sizes) != rows:
        raise RuntimeError(f"Split sizes doesn't match total dim 0 size ({which} split sizes "
                           f"{sizes}, dim 0 size {rows}, group size {n})")
    return sizes


_PAIRS = {}


def _pair(g, a, b, name):
    """The two-rank group point-to-point messages between global ranks ``a`` and ``b`` of
    ``g`` run on (a collective of two, NOTE [ process groups on JAX ])."""
    for r in (a, b):
        if r not in g._ranks:
            raise RuntimeError(f"ProcessGroupGloo::{name}: invalid peer rank: {r}")
    if a == b:
        raise RuntimeError(f"{name}: a rank cannot send to or receive from itself (rank {a})")
    key = (g._name, min(a, b), max(a, b))
    pair = _PAIRS.get(key)
    if pair is None:
        pair = _PAIRS[key] = ProcessGroup(key[1:], g._backend, f"{g._name}:{key[1]}-{key[2]}",
                                          g._timeout)
    return pair


def _p2p(tensor, peer, group_peer, group, sending, name):
    g = _member(group, name)
    if g is None:
        return None
    if peer is None and group_peer is None and not sending:
        raise RuntimeError(f"{name}: torchlike needs the source's rank (a receive from any "
                           f"source has no XLA collective to run on)")
    peer = _global_of(g, peer, group_peer)
    src = _STATE.rank if sending else peer
    pair = _pair(g, _STATE.rank, peer, name)
    arr = _array(tensor, name)
    _agree(pair, "send/recv", arr.shape, arr.dtype)
    i = pair._ranks.index(src)
    out = _run(pair, "p2p", (i, arr.shape, arr.dtype), lambda x: x[i], (), arr, name)
    if not sending:
        _store(tensor, out)
    return Work([tensor])


@scoped
def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Mirrors ``torch.distributed.send``: rank ``dst``'s matching ``recv`` gets ``tensor``."""
    _p2p(tensor, dst, group_dst, group, True, "send")


@scoped
def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Mirrors ``torch.distributed.recv``: ``tensor`` becomes what rank ``src`` sent; returns
    ``src``."""
    _p2p(tensor, src, group_src, group, False, "recv")
    return _global_of(_group(group), src, group_src)


@scoped
def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Mirrors ``torch.distributed.isend``: ``send`` returning a Work."""
    return _p2p(tensor, dst, group_dst, group, True, "isend")


@scoped
def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Mirrors ``torch.distributed.irecv``: ``recv`` returning a Work."""
    return _p2p(tensor, src, group_src, group, False, "irecv")


@scoped
def barrier(group=None, async_op=False, device_ids=None):
    """Mirrors ``torch.distributed.barrier``: returns once every rank of the group reached it."""
    g = _member(group, "barrier")
    if g is None:
        return None
    flag = jnp.ones((), jnp.int32)
    jax.block_until_ready(_reduced(g, flag, RedOpType.SUM, "barrier"))
    return Work([]) if async_op else None


# --- objects ----------------------------------------------------------------------------------

def _bytes_of(obj):
    return np.frombuffer(pickle.dumps(obj), np.uint8)


def _all_bytes(g, data):
    """Every rank's byte string (numpy uint8), gathered: two collectives (sizes, then the bytes
    padded to the longest)."""
    sizes = np.asarray(_gathered(g, jnp.asarray(np.int64(data.size)), "object sizes"))
    width = 1 << max(6, int(sizes.max() - 1).bit_length())   # a few programs, not one per size
    padded = np.zeros(width, np.uint8)
    padded[:data.size] = data
    rows = np.asarray(_gathered(g, jnp.asarray(padded), "object bytes"))
    return [rows[i, :sizes[i]].tobytes() for i in range(g.size())]


@scoped
def all_gather_object(object_list, obj, group=None):
    """Mirrors ``torch.distributed.all_gather_object``: ``object_list[i]`` becomes rank i's
    ``obj`` (pickled), on every rank."""
    g = _member(group, "all_gather_object")
    if g is None:
        return None
    if len(object_list) != g.size():
        raise RuntimeError(f"all_gather_object: object_list has length {len(object_list)}, "
                           f"expected the group size {g.size()}")
    for i, data in enumerate(_all_bytes(g, _bytes_of(obj))):
        object_list[i] = pickle.loads(data)


@scoped
def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """Mirrors ``torch.distributed.gather_object``."""
    g = _member(group, "gather_object")
    if g is None:
        return None
    dst = _global_of(g, dst, group_dst, default=0)
    _src_rank(g, dst, "gather_object")
    gathered = _all_bytes(g, _bytes_of(obj))
    if _STATE.rank == dst:
        if object_gather_list is None:
            raise ValueError("Argument ``object_gather_list`` must be specified on destination "
                             "rank.")
        for i, data in enumerate(gathered):
            object_gather_list[i] = pickle.loads(data)


@scoped
def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Mirrors ``torch.distributed.broadcast_object_list``: every rank's ``object_list``
    becomes rank ``src``'s (elements pickled)."""
    g = _member(group, "broadcast_object_list")
    if g is None:
        return None
    src = _global_of(g, src, group_src, default=0)
    i = _src_rank(g, src, "broadcast_object_list")
    mine = _bytes_of(list(object_list)) if _STATE.rank == src else np.zeros(0, np.uint8)
    objects = pickle.loads(_all_bytes(g, mine)[i])
    if len(objects) != len(object_list):
        raise RuntimeError(f"broadcast_object_list: rank {src} sent {len(objects)} objects, "
                           f"this rank's list has {len(object_list)}")
    object_list[:] = objects
