"""Mirrors ``torch.distributed.fsdp``: FSDP2's ``fully_shard`` (NOTE [ fully_shard on global
arrays ] in _fully_shard.py)."""
from ._fully_shard import FSDPModule as FSDPModule, fully_shard as fully_shard

FSDPModule.__module__ = __name__   # reprs show the public path

__all__ = ["FSDPModule", "fully_shard"]
