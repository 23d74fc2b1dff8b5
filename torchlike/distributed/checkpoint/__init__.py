"""Mirrors ``torch.distributed.checkpoint``: its ``state_dict`` helpers, which give and take a
sharded model's state as DTensors or as full tensors."""
from . import state_dict as state_dict

__all__ = ["state_dict"]
