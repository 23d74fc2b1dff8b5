"""Mirrors ``torch.distributed.launcher``: the node agent behind ``python -m
torchlike.distributed.run``, callable from Python (api.py)."""
from .api import (
    LaunchConfig as LaunchConfig, elastic_launch as elastic_launch, launch_agent as launch_agent)
