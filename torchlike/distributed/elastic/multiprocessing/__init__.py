"""Mirrors ``torch.distributed.elastic.multiprocessing``: starting a node's workers as
processes, watching them and stopping them together (api.py, NOTE [ stopping workers ]), and
reporting a worker's failure (errors/)."""
from .api import (
    DefaultLogsSpecs as DefaultLogsSpecs, RunProcsResult as RunProcsResult,
    SignalException as SignalException, Std as Std, SubprocessContext as SubprocessContext,
    start_processes as start_processes)
from .errors import ProcessFailure as ProcessFailure, record as record
