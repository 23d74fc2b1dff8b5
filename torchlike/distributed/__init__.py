"""Mirrors ``torch.distributed``: process groups and collectives on JAX's own distributed runtime
(NOTE [ process groups on JAX ] in ``distributed_c10d.py``)."""
from .distributed_c10d import *  # noqa: F401,F403
from .distributed_c10d import __all__, RedOpType, default_pg_timeout  # noqa: F401
