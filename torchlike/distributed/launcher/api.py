"""Mirrors ``torch.distributed.launcher.api``: ``LaunchConfig``, ``elastic_launch`` and
``launch_agent``, the node agent behind ``python -m torchlike.distributed.run``: it gives this
node's workers their ranks and environment, starts them, watches them, restarts the group
after a failure while restarts remain, and raises ``ChildFailedError`` when none remain.

NOTE [ static rendezvous ]
torchrun's agents meet in a rendezvous before starting workers: node 0's agent hosts a TCP
store on MASTER_PORT, every agent registers there, and the workers use that store too
(``TORCHELASTIC_USE_AGENT_STORE=True``).  Here the workers meet in JAX's coordination service
instead, which rank 0's ``init_process_group`` starts on MASTER_ADDR:MASTER_PORT
(``jax.distributed.initialize``), so the agent must leave that port free, and needs no store
of its own: with the same number of workers on every node, a worker's ranks follow from
``--node-rank`` alone (RANK = node_rank * nproc_per_node + local_rank).  So:
- ``static`` (the default): MASTER_ADDR:MASTER_PORT is ``--rdzv-endpoint`` or
  ``--master-addr:--master-port``; each node passes its ``--node-rank``.
- ``c10d`` (``--standalone`` and a single-node run without ``--master-port`` use it, as in
  torchrun): the endpoint ``host[:port]`` (port 29400 by default) becomes MASTER_ADDR and
  MASTER_PORT; port 0 picks a free port on ``host`` (a fresh one for each restart, since the
  old coordinator's port may linger).  Several nodes have no rendezvous to number them, so each
  passes ``--node-rank`` (torchrun would number them by arrival).
- Elastic membership (``--nnodes MIN:MAX`` with MIN < MAX) and other backends are refused.
Workers see ``TORCHELASTIC_USE_AGENT_STORE=False``: there is no agent store, rank 0 hosts.
A worker failing on one node stops the workers of that node only; those on other nodes learn
of it through their collectives (JAX's coordination service ends them), as with torchrun's
static rendezvous.
"""
import os
import signal
import socket
import sys
import uuid
from dataclasses import dataclass, field

from ..elastic.multiprocessing.api import (
    DefaultLogsSpecs, SignalException, handle_signals, start_processes)
from ..elastic.multiprocessing.errors import ChildFailedError
from ..elastic.utils.logging import get_logger

__all__ = ["LaunchConfig", "elastic_launch", "launch_agent"]

logger = get_logger(__name__)


@dataclass
class LaunchConfig:
    """Mirrors ``torch.distributed.launcher.api.LaunchConfig`` (the fields the launcher uses;
    NOTE [ static rendezvous ] for what the rendezvous fields mean here).

    Args:
        min_nodes, max_nodes: the number of nodes (equal: membership is static).
        nproc_per_node: workers on this node.
        logs_specs: where error files and logs go (default ``DefaultLogsSpecs()``).
        run_id: TORCHELASTIC_RUN_ID (a random one when empty).
        role: ROLE_NAME.
        rdzv_endpoint, rdzv_backend: ``host:port`` and ``"static"`` or ``"c10d"``.
        rdzv_configs: ``{"rank": node_rank}``; other keys are accepted and unused.
        max_restarts: restarts of the worker group after a failure.
        monitor_interval: seconds between polls of the workers.
        start_method: accepted for torchrun's sake (workers are commands, started with exec).
        local_addr: accepted (no agent rendezvous to announce it to).
        signals_to_handle: signals to the launcher that stop the workers.
        virtual_local_rank: LOCAL_RANK=0 for every worker, each seeing only its own GPU.
        shutdown_timeout: seconds between SIGTERM and SIGKILL when stopping workers
            (default ``TORCH_ELASTIC_SHUTDOWN_TIMEOUT`` or 5, NOTE [ stopping workers ]).
    """
    min_nodes: int
    max_nodes: int
    nproc_per_node: int
    logs_specs: DefaultLogsSpecs = None
    run_id: str = ""
    role: str = "default_role"
    rdzv_endpoint: str = ""
    rdzv_backend: str = "static"
    rdzv_configs: dict = field(default_factory=dict)
    max_restarts: int = 3
    monitor_interval: float = 0.1
    start_method: str = "spawn"
    local_addr: str = None
    signals_to_handle: str = "SIGTERM,SIGINT,SIGHUP,SIGQUIT"
    virtual_local_rank: bool = False
    shutdown_timeout: int = None

    def __post_init__(self):
        if self.logs_specs is None:
            self.logs_specs = DefaultLogsSpecs()
        if self.shutdown_timeout is None:
            # 5, not torchrun's 30: JAX's workers catch SIGTERM (NOTE [ stopping workers ])
            self.shutdown_timeout = int(os.environ.get("TORCH_ELASTIC_SHUTDOWN_TIMEOUT", "5"))
        elif self.shutdown_timeout < 0:
            raise ValueError(
                f"shutdown_timeout must be non-negative, got {self.shutdown_timeout}")


class elastic_launch:
    """Mirrors ``torch.distributed.launcher.api.elastic_launch``: ``elastic_launch(config,
    "python")("-u", "train.py")`` runs the command on this node's workers and returns
    ``{rank: None}`` when all succeed (raises ``ChildFailedError`` otherwise).  Only commands
    are launched: a function entrypoint would need the workers forked from this process."""

    def __init__(self, config, entrypoint):
        self._config, self._entrypoint = config, entrypoint

    def __call__(self, *args):
        return launch_agent(self._config, self._entrypoint, list(args))


def parse_rendezvous_endpoint(endpoint, default_port):
    """``"host:port"`` / ``"host"`` / ``"[::1]:port"`` -> ``(host, port)``."""
    endpoint = (endpoint or "").strip()
    if not endpoint:
        return "localhost", default_port
    host, sep, port = endpoint.rpartition(":")
    if not sep or host.endswith(":") or (endpoint.startswith("[") and endpoint.endswith("]")):
        host, port = endpoint, None   # no port (an IPv6 address in brackets is all host)
    host = host[1:-1] if len(host) > 1 and host[0] == "[" and host[-1] == "]" else host
    if port is None:
        return host, default_port
    if not port.isdigit() or int(port) >= 2 ** 16:
        raise ValueError(f"The port number of the rendezvous endpoint '{endpoint}' must be "
                         f"an integer between 0 and 65536.")
    return host, int(port)


def _free_port(host):
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class _Rendezvous:
    """This node's place in the job (NOTE [ static rendezvous ]): node rank, node count and
    the master address; ``master_port()`` is the port for the next attempt."""

    def __init__(self, config):
        backend = config.rdzv_backend
        if backend not in ("static", "c10d"):
            raise ValueError(f"The rendezvous backend '{backend}' is not registered. Did you "
                             f"forget to call `register`?")
        if config.min_nodes != config.max_nodes:
            raise ValueError(
                f"torchlike's launcher has a static rendezvous: --nnodes must be one number, "
                f"got {config.min_nodes}:{config.max_nodes}")
        self.nnodes = config.max_nodes
        if backend == "static":
            self.host, self.port = parse_rendezvous_endpoint(config.rdzv_endpoint, -1)
            if not config.rdzv_endpoint.strip():
                raise ValueError("Endpoint is missing in endpoint. Try to add --master-addr "
                                 "and --master-port")
            if self.port == -1:
                raise ValueError(f"port is missing in endpoint: {config.rdzv_endpoint}. Try "
                                 f"to specify --master-port")
        else:
            self.host, self.port = parse_rendezvous_endpoint(config.rdzv_endpoint, 29400)
        rank = config.rdzv_configs.get("rank")
        if rank is None and self.nnodes > 1:
            raise ValueError(
                f"torchlike's launcher has no dynamic rendezvous to number {self.nnodes} nodes:"
                f" give each node its --node-rank")
        if self.port == 0 and self.nnodes > 1:
            raise ValueError(f"the endpoint {config.rdzv_endpoint} asks for a free port, "
                             f"which only a single-node run can pick")
        self.node_rank = int(rank or 0)
        if not 0 <= self.node_rank < self.nnodes:
            raise ValueError(f"node_rank {self.node_rank} is not in [0, {self.nnodes}) "
                             f"(--nnodes {self.nnodes})")

    def master_port(self):
        return _free_port(self.host) if self.port == 0 else self.port


def _worker_envs(config, rdzv, master_port, restart_count):
    """Each local worker's environment, as torchrun's agent sets it."""
    nproc, envs = config.nproc_per_node, {}
    world = rdzv.nnodes * nproc
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    for local_rank in range(nproc):
        rank = rdzv.node_rank * nproc + local_rank
        env = {
            "RANK": str(rank), "GROUP_RANK": str(rdzv.node_rank), "ROLE_RANK": str(rank),
            "ROLE_NAME": config.role, "LOCAL_WORLD_SIZE": str(nproc), "WORLD_SIZE": str(world),
            "GROUP_WORLD_SIZE": str(rdzv.nnodes), "ROLE_WORLD_SIZE": str(world),
            "MASTER_ADDR": rdzv.host, "MASTER_PORT": str(master_port),
            "TORCHELASTIC_RESTART_COUNT": str(restart_count),
            "TORCHELASTIC_MAX_RESTARTS": str(config.max_restarts),
            "TORCHELASTIC_RUN_ID": config.run_id,
            "TORCHELASTIC_USE_AGENT_STORE": "False",   # NOTE [ static rendezvous ]
            "TORCH_NCCL_ASYNC_ERROR_HANDLING": os.environ.get(
                "TORCH_NCCL_ASYNC_ERROR_HANDLING", "1"),
            "LOCAL_RANK": str(local_rank),
        }
        if config.virtual_local_rank:
            gpus = visible.split(",") if visible is not None else None
            if gpus is not None and local_rank >= len(gpus):
                raise ValueError(f"local_rank {local_rank} exceeds available GPUs in "
                                 f"CUDA_VISIBLE_DEVICES={visible}")
            env["LOCAL_RANK"] = "0"
            env["CUDA_VISIBLE_DEVICES"] = gpus[local_rank].strip() if gpus else str(local_rank)
        if "OMP_NUM_THREADS" in os.environ:
            env["OMP_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"]
        envs[local_rank] = env
    return envs


def _entrypoint_name(entrypoint, args):
    """The name in the failure summary: the script or module a Python entrypoint runs
    (``python -u -m torchlike train.py`` -> train.py), else the command."""
    if entrypoint != os.environ.get("PYTHON_EXEC", sys.executable):
        return entrypoint
    rest = list(args)
    while rest and rest[0].startswith("-"):
        flag = rest.pop(0)
        if (flag == "-m" and rest[:1] == ["torchlike"]) or flag == "-c":
            rest.pop(0)   # the runner, or --run-path's command: the script follows
    return rest[0] if rest else ""


def launch_agent(config, entrypoint, args):
    """Mirrors ``torch.distributed.launcher.api.launch_agent``: run the command
    ``[entrypoint, *args]`` as this node's ``config.nproc_per_node`` workers (NOTE [ static
    rendezvous ], NOTE [ stopping workers ]) and return ``{global rank: None}`` once all of
    them succeeded.

    Raises:
        ChildFailedError: a worker failed and no restart remained; its message is the summary.
        SignalException: the launcher received a signal it handles; the workers got it too.
    """
    if not isinstance(entrypoint, str):
        raise TypeError(f"torchlike's launcher starts commands: the entrypoint must be a str, "
                        f"got {type(entrypoint).__name__}")
    if not config.run_id:
        config.run_id = str(uuid.uuid4().int)
        logger.warning("config has no run_id, generated a random run_id: %s", config.run_id)
    name = _entrypoint_name(entrypoint, args)
    rdzv = _Rendezvous(config)
    logger.info("Starting %s worker(s) of %s on node %s of %s (rdzv %s %s:%s, run_id %s)",
                config.nproc_per_node, name, rdzv.node_rank, rdzv.nnodes, config.rdzv_backend,
                rdzv.host, rdzv.port, config.run_id)
    os.environ["TORCHELASTIC_SIGNALS_TO_HANDLE"] = config.signals_to_handle
    previous = handle_signals(config.signals_to_handle)
    workers = None
    try:
        for attempt in range(config.max_restarts + 1):
            envs = _worker_envs(config, rdzv, rdzv.master_port(), attempt)
            logs = config.logs_specs.reify(config.run_id, attempt, config.nproc_per_node)
            workers = start_processes(config.role, entrypoint, dict.fromkeys(envs, tuple(args)),
                                      envs, logs, config.shutdown_timeout)
            try:
                result = workers.wait(period=config.monitor_interval)
            except SignalException as e:
                logger.warning("Received %s death signal, shutting down workers", e.sigval)
                workers.close(e.sigval, config.shutdown_timeout)
                raise
            if not result.is_failed():
                base = rdzv.node_rank * config.nproc_per_node
                return {base + r: v for r, v in result.return_values.items()}
            left = config.max_restarts - attempt
            if left:
                logger.info("[%s] Worker group FAILED. %s/%s attempts left; will restart "
                            "worker group", config.role, left, config.max_restarts)
        raise ChildFailedError(name, {rdzv.node_rank * config.nproc_per_node + r: f
                                      for r, f in result.failures.items()})
    finally:
        if workers is not None:
            workers.close(timeout=config.shutdown_timeout)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
