"""``python -m torchlike.distributed.run``: torchrun for torchlike -- starts a node's worker
processes for a distributed job, with torchrun's flags, environment, messages and exit status
(PyTorch's torch/distributed/run.py is the specification).

    python -m torchlike.distributed.run --nproc-per-node 2 train.py --epochs 3
    python -m torchlike.distributed.run --standalone --nproc-per-node 4 -m package.train
    # two nodes: on each, with its own --node-rank
    python -m torchlike.distributed.run --nnodes 2 --node-rank 0 --nproc-per-node 8 \\
        --master-addr 10.0.0.1 --master-port 29500 train.py

Each worker sees RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, GROUP_WORLD_SIZE,
ROLE_RANK, ROLE_WORLD_SIZE, ROLE_NAME, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_RUN_ID,
TORCHELASTIC_RESTART_COUNT, TORCHELASTIC_MAX_RESTARTS, TORCHELASTIC_ERROR_FILE, ... as under
torchrun, and OMP_NUM_THREADS=1 (with torchrun's warning) when it runs several workers and the
variable is unset; ``torch.distributed.init_process_group()`` reads them.  When a worker exits
non-zero (or, decorated with ``torch.distributed.elastic.multiprocessing.errors.record``,
records an error and does not exit) the others are stopped (SIGTERM, SIGKILL after
``--shutdown-timeout`` seconds, 5 by default: NOTE [ stopping workers ]), the group restarts
while ``--max-restarts`` allow, and then the launcher raises ``ChildFailedError`` with
torchrun's summary (the worker's traceback when its main is decorated with ``record``) and
exits with status 1.  A signal to the launcher (Ctrl-C, SIGTERM, SIGHUP, SIGQUIT) is passed to
every worker.

NOTE [ worker command ]
A worker runs the program as torchrun would, with torchlike answering ``import torch``
(NOTE [ torch as an alias ]): ``python -u -m torchlike train.py ARGS``, or ``python -u -m
torchlike -m MODULE ARGS`` for ``-m``; ``--run-path`` runs the script with ``runpy.run_path``
under ``@record`` in the same way.  ``--no-python`` runs the command itself: a program that
starts Python must start it as ``python -m torchlike`` to get torchlike as ``torch``.

NOTE [ counting devices in a child ]
``--nproc-per-node gpu`` / ``auto`` / ``xpu`` count devices as torchrun does, but in a short
child process: asking JAX in the launcher would start its GPU backend there, holding every
GPU (and by default most of its memory) for the whole run, before the workers start.

Rendezvous: NOTE [ static rendezvous ] in torchlike/distributed/launcher/api.py.
"""
import json
import os
import subprocess
import sys
import uuid
from argparse import REMAINDER, Action, ArgumentParser

from .elastic.multiprocessing.api import DefaultLogsSpecs, Std
from .elastic.multiprocessing.errors import record
from .elastic.utils.logging import get_logger
from .launcher.api import LaunchConfig, elastic_launch

__all__ = ["get_args_parser", "parse_args", "parse_min_max_nnodes",
           "determine_local_world_size", "get_rdzv_endpoint", "config_from_args", "run", "main"]

logger = get_logger(__name__)

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# --run-path: the script in this interpreter via runpy, its errors recorded (as torchrun's
# run_script_path, which torchrun wraps in @record); argv is [-c, script, *args]
_RUN_PATH = ("import runpy, sys\n"
             "from torch.distributed.elastic.multiprocessing.errors import record\n"
             "sys.argv = sys.argv[1:]\n"
             "record(runpy.run_path)(sys.argv[0], run_name='__main__')\n")


class _env(Action):
    """An option whose default is read from ``PET_<DEST>`` (torch.distributed.argparse_util's
    ``env``)."""

    def __init__(self, dest, default=None, required=False, **kwargs):
        default = os.environ.get(f"PET_{dest.upper()}", default)
        super().__init__(dest=dest, default=default, required=required and not default,
                         **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)


class _check_env(Action):
    """A flag that ``PET_<DEST>=1`` also sets (torch.distributed.argparse_util's
    ``check_env``)."""

    def __init__(self, dest, default=False, **kwargs):
        default = bool(int(os.environ.get(f"PET_{dest.upper()}", "1" if default else "0")))
        super().__init__(dest=dest, const=True, default=default, nargs=0, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, self.const)


def _comma_separated_list(value):
    return [item.replace("\0", ",") for item in value.replace(",,", "\0").split(",")]


# (flags, argparse keywords, help); every option is torchrun's, in torchrun's order
_OPTIONS = [
    (("--nnodes",), dict(action=_env, type=str, default="1:1"),
     "Number of nodes, or the range of nodes in form <minimum_nodes>:<maximum_nodes>."),
    (("--nproc-per-node", "--nproc_per_node"), dict(action=_env, type=str, default="1"),
     "Number of workers per node; supported values: [auto, cpu, gpu, xpu, int]."),
    (("--rdzv-backend", "--rdzv_backend"), dict(action=_env, type=str, default="static"),
     "Rendezvous backend: static or c10d (NOTE [ static rendezvous ])."),
    (("--rdzv-endpoint", "--rdzv_endpoint"), dict(action=_env, type=str, default=""),
     "Rendezvous backend endpoint; usually in form <host>:<port>."),
    (("--rdzv-id", "--rdzv_id"), dict(action=_env, type=str, default="none"),
     "User-defined group id."),
    (("--rdzv-conf", "--rdzv_conf"), dict(action=_env, type=str, default=""),
     "Additional rendezvous configuration (<key1>=<value1>,<key2>=<value2>,...); unused."),
    (("--standalone",), dict(action=_check_env),
     "Single-node job on a free local port; --rdzv-backend, --rdzv-endpoint and --rdzv-id are "
     "auto-assigned and any explicitly set values are ignored."),
    (("--max-restarts", "--max_restarts"), dict(action=_env, type=int, default=0),
     "Maximum number of worker group restarts before failing."),
    (("--monitor-interval", "--monitor_interval"), dict(action=_env, type=float, default=0.1),
     "Interval, in seconds, to monitor the state of workers."),
    (("--start-method", "--start_method"),
     dict(action=_env, type=str, default="spawn", choices=["spawn", "fork", "forkserver"]),
     "Multiprocessing start method (accepted: workers are programs, started with exec)."),
    (("--event-log-handler", "--event_log_handler"),
     dict(action=_env, type=str, default="null"),
     "name of a registered event logging handler (only null: no events are logged)."),
    (("--role",), dict(action=_env, type=str, default="default"),
     "User-defined role for the workers."),
    (("-m", "--module"), dict(action=_check_env),
     "Change each process to interpret the launch script as a Python module, executing with "
     "the same behavior as 'python -m'."),
    (("--no-python", "--no_python"), dict(action=_check_env),
     "Skip prepending the training script with 'python -m torchlike' - just execute it "
     "directly. Useful when the script is not a Python script."),
    (("--run-path", "--run_path"), dict(action=_check_env),
     "Run the training script with runpy.run_path in the worker's interpreter. Takes "
     "precedence over --no-python."),
    (("--log-dir", "--log_dir"), dict(action=_env, type=str, default=None),
     "Base directory to use for log files (a unique job-level sub-directory is created with "
     "rdzv_id as the prefix)."),
    (("-r", "--redirects"), dict(action=_env, type=str, default="0"),
     "Redirect std streams into a log file in the log directory (e.g. [-r 3] redirects both "
     "stdout+stderr for all workers, [-r 0:1,1:2] redirects stdout for local rank 0 and "
     "stderr for local rank 1)."),
    (("-t", "--tee"), dict(action=_env, type=str, default="0"),
     "Tee std streams into a log file and also to console (see --redirects for format)."),
    (("--local-ranks-filter", "--local_ranks_filter"), dict(action=_env, type=str, default=""),
     "Only show logs from specified ranks in console (e.g. [--local_ranks_filter=0,1,2] will "
     "only show logs from rank 0, 1 and 2)."),
    (("--duplicate-stdout-filters", "--duplicate_stdout_filters"),
     dict(action=_env, type=_comma_separated_list, default=[]),
     "Duplicates logs streamed to stdout to another file (not supported: must be empty)."),
    (("--duplicate-stderr-filters", "--duplicate_stderr_filters"),
     dict(action=_env, type=_comma_separated_list, default=[]),
     "Duplicates logs streamed to stderr to another file (not supported: must be empty)."),
    (("--node-rank", "--node_rank"), dict(action=_env, type=int, default=None),
     "Rank of the node for multi-node distributed training (0 by default)."),
    (("--master-addr", "--master_addr"), dict(action=_env, type=str, default="127.0.0.1"),
     "Address of the master node (rank 0), only used for static rendezvous."),
    (("--master-port", "--master_port"), dict(action=_env, type=int, default=None),
     "Port on the master node (rank 0), only used for static rendezvous. Defaults to 29500."),
    (("--local-addr", "--local_addr"), dict(action=_env, type=str, default=None),
     "Address of the local node (accepted: there is no agent rendezvous to announce it to)."),
    (("--logs-specs", "--logs_specs"), dict(type=str, default=None),
     "torchrun.logs_specs group entrypoint name (not supported)."),
    (("--numa-binding", "--numa_binding"),
     dict(type=str, default=None, choices=["node", "socket", "exclusive", "core-complex"]),
     "Bind worker processes to CPUs near their GPUs (not supported)."),
    (("--signals-to-handle", "--signals_to_handle"),
     dict(action=_env, type=str, default="SIGTERM,SIGINT,SIGHUP,SIGQUIT"),
     "Comma-separated list of signals to handle and forward to subprocesses."),
    (("--shutdown-timeout", "--shutdown_timeout"), dict(action=_env, type=int, default=None),
     "Time in seconds to wait for graceful shutdown of worker processes before sending "
     "SIGKILL (default: TORCH_ELASTIC_SHUTDOWN_TIMEOUT or 5)."),
    (("--virtual-local-rank", "--virtual_local_rank"), dict(action=_check_env),
     "LOCAL_RANK=0 for all workers, CUDA_VISIBLE_DEVICES naming each worker's GPU."),
]


def get_args_parser():
    """Mirrors ``torch.distributed.run.get_args_parser``: torchrun's command line."""
    parser = ArgumentParser(description="Torch Distributed Elastic Training Launcher")
    for flags, kwargs, text in _OPTIONS:
        parser.add_argument(*flags, help=text, **kwargs)
    parser.add_argument("training_script", type=str, help=(
        "Full path to the (single GPU) training program/script to be launched in parallel, "
        "followed by all the arguments for the training script."))
    parser.add_argument("training_script_args", nargs=REMAINDER)
    return parser


def parse_args(args):
    return get_args_parser().parse_args(args)


def parse_min_max_nnodes(nnodes):
    """"2" -> (2, 2); "1:4" -> (1, 4)."""
    parts = nnodes.split(":")
    if len(parts) not in (1, 2):
        raise RuntimeError(f'nnodes={nnodes} is not in "MIN:MAX" format')
    return int(parts[0]), int(parts[-1])


def _count_devices(kind):
    """``(device type, count)`` of ``kind`` ("gpu", "xpu" or "auto"), asked of JAX in a child
    process (NOTE [ counting devices in a child ]); (None, 0) when there is none."""
    query = {"gpu": "['gpu', torchlike.cuda.device_count()]",
             "xpu": "['xpu', torchlike.xpu.device_count()]",
             "auto": "[getattr(torchlike.accelerator.current_accelerator(), 'type', None), "
                     "torchlike.accelerator.device_count()]"}[kind]
    env = dict(os.environ, XLA_PYTHON_CLIENT_PREALLOCATE="false",
               PYTHONPATH=os.pathsep.join(filter(None, [_ROOT, os.environ.get("PYTHONPATH")])))
    out = subprocess.run(
        [sys.executable, "-c", f"import json, torchlike; print(json.dumps({query}))"],
        env=env, capture_output=True, text=True, timeout=300, check=True)
    device_type, count = json.loads(out.stdout.strip().splitlines()[-1])
    return (device_type, count) if count else (None, 0)


def determine_local_world_size(nproc_per_node):
    """Mirrors ``torch.distributed.run.determine_local_world_size``: a number, or the count
    of CPUs ("cpu"), GPUs ("gpu"), XPUs ("xpu"), or accelerators else CPUs ("auto")."""
    logger.info("Using nproc_per_node=%s.", nproc_per_node)
    try:
        return int(nproc_per_node)
    except ValueError as e:
        if nproc_per_node not in ("cpu", "gpu", "xpu", "auto"):
            raise ValueError(f"Unsupported nproc_per_node value: {nproc_per_node}") from e
        device_type, num_proc = "cpu", None
        if nproc_per_node != "cpu":
            device_type, num_proc = _count_devices(nproc_per_node)
            if nproc_per_node == "gpu" and not num_proc:
                raise ValueError("Cuda is not available.") from e
            if nproc_per_node == "xpu" and not num_proc:
                raise ValueError("Xpu is not available.") from e
        if not num_proc:
            device_type = "cpu"
            num_proc = (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                        else os.cpu_count())
        logger.info("Using nproc_per_node=%s, setting nproc_per_node to %s since the instance "
                    "has %s %s", nproc_per_node, num_proc, num_proc, device_type)
        return num_proc


def get_rdzv_endpoint(args):
    if args.rdzv_backend == "static" and not args.rdzv_endpoint:
        return f"{args.master_addr}:{args.master_port}"
    return args.rdzv_endpoint


def _parse_rendezvous_config(text):
    """"k1=v1,k2=v2" -> {"k1": "v1", "k2": "v2"} (torchrun's checks and messages)."""
    config, text = {}, text.strip()
    for item in text.split(",") if text else ():
        key, sep, value = item.partition("=")
        if not key.strip():
            raise ValueError("The rendezvous configuration string must be in format "
                             "<key1>=<value1>,...,<keyN>=<valueN>.")
        if not value.strip():
            raise ValueError(f"The rendezvous configuration option '{key.strip()}' must have "
                             f"a value specified.")
        config[key.strip()] = value.strip()
    return config


def _unsupported(args):
    """torchrun options this launcher cannot honour, refused rather than ignored."""
    if args.logs_specs is not None:
        raise ValueError(f"Could not find entrypoint under "
                         f"'torchrun.logs_specs[{args.logs_specs}]' key")
    for flag, value in (("--numa-binding", args.numa_binding),
                        ("--duplicate-stdout-filters", args.duplicate_stdout_filters),
                        ("--duplicate-stderr-filters", args.duplicate_stderr_filters)):
        if value:
            raise ValueError(f"{flag} is not supported by torchlike's launcher")
    if args.event_log_handler != "null":
        raise ValueError(f"Unknown event log handler: {args.event_log_handler} (torchlike's "
                         f"launcher logs no events)")


def config_from_args(args):
    """Mirrors ``torch.distributed.run.config_from_args``: ``(LaunchConfig, command,
    command's arguments)``; sets OMP_NUM_THREADS=1 (with torchrun's warning) for several
    workers when it is unset."""
    min_nodes, max_nodes = parse_min_max_nnodes(args.nnodes)
    if not 0 < min_nodes <= max_nodes:
        raise AssertionError(f"min_nodes must be > 0 and <= max_nodes, got "
                             f"min_nodes={min_nodes}, max_nodes={max_nodes}")
    if args.max_restarts < 0:
        raise AssertionError("max_restarts must be >= 0")
    _unsupported(args)
    if args.rdzv_backend != "static" and not args.rdzv_endpoint:
        logger.warning("master_addr is only used for static rdzv_backend and when "
                       "rdzv_endpoint is not specified.")
    nproc_per_node = determine_local_world_size(args.nproc_per_node)
    if "OMP_NUM_THREADS" not in os.environ and nproc_per_node > 1:
        logger.warning(
            "\n*****************************************\n"
            "Setting OMP_NUM_THREADS environment variable for each process to be %s in "
            "default, to avoid your system being overloaded, please further tune the variable "
            "for optimal performance in your application as needed. \n"
            "*****************************************", 1)
        os.environ["OMP_NUM_THREADS"] = "1"   # the workers inherit it
    rdzv_configs = _parse_rendezvous_config(args.rdzv_conf)
    if args.rdzv_backend == "static" or args.node_rank is not None:
        rdzv_configs["rank"] = args.node_rank or 0
    ranks = None
    if args.local_ranks_filter:
        try:
            ranks = set(map(int, args.local_ranks_filter.split(",")))
        except ValueError as e:
            raise ValueError("--local_ranks_filter must be a comma-separated list of integers "
                             "e.g. --local_ranks_filter=0,1,2") from e
    config = LaunchConfig(
        min_nodes=min_nodes, max_nodes=max_nodes, nproc_per_node=nproc_per_node,
        run_id=args.rdzv_id, role=args.role, rdzv_endpoint=get_rdzv_endpoint(args),
        rdzv_backend=args.rdzv_backend, rdzv_configs=rdzv_configs,
        max_restarts=args.max_restarts, monitor_interval=args.monitor_interval,
        start_method=args.start_method, local_addr=args.local_addr,
        logs_specs=DefaultLogsSpecs(log_dir=args.log_dir, redirects=Std.from_str(args.redirects),
                                    tee=Std.from_str(args.tee), local_ranks_filter=ranks),
        signals_to_handle=args.signals_to_handle, virtual_local_rank=args.virtual_local_rank,
        shutdown_timeout=args.shutdown_timeout)
    python = [os.environ.get("PYTHON_EXEC", sys.executable), "-u", "-m", "torchlike"]
    if args.run_path:   # NOTE [ worker command ]
        cmd = [*python, "-c", _RUN_PATH, args.training_script]
    elif args.no_python:
        if args.module:
            raise ValueError("Don't use both the '--no-python' flag and the '--module' flag at "
                             "the same time.")
        cmd = [args.training_script]
    else:
        cmd = [*python, *(["-m"] if args.module else []), args.training_script]
    return config, cmd[0], [*cmd[1:], *args.training_script_args]


def run(args):
    """Mirrors ``torch.distributed.run.run``: launch this node's workers for ``args``."""
    if args.standalone:
        args.rdzv_backend, args.rdzv_endpoint = "c10d", "localhost:0"
        args.rdzv_id = str(uuid.uuid4())
        logger.info("\n**************************************\nRendezvous info:\n"
                    "--rdzv-backend=%s --rdzv-endpoint=%s --rdzv-id=%s\n"
                    "**************************************\n",
                    args.rdzv_backend, args.rdzv_endpoint, args.rdzv_id)
    elif (args.rdzv_backend == "static" and not args.rdzv_endpoint
          and args.master_port is None and parse_min_max_nnodes(args.nnodes)[1] == 1):
        args.rdzv_backend, args.rdzv_endpoint = "c10d", "localhost:0"
        args.rdzv_id = str(uuid.uuid4())
    if args.master_port is None:
        args.master_port = 29500
    config, cmd, cmd_args = config_from_args(args)
    elastic_launch(config=config, entrypoint=cmd)(*cmd_args)


@record
def main(args=None):
    """``python -m torchlike.distributed.run [options] script [args]``."""
    run(parse_args(args))


if __name__ == "__main__":
    main()
