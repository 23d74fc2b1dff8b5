"""Mirrors ``torch.distributed.fsdp``: FSDP2's ``fully_shard`` (NOTE [ fully_shard on global
arrays ] in _fully_shard.py)."""
from ._fully_shard import (FSDPModule as FSDPModule, MixedPrecisionPolicy as MixedPrecisionPolicy,
                           UnshardHandle as UnshardHandle, fully_shard as fully_shard)

for _cls in (FSDPModule, MixedPrecisionPolicy, UnshardHandle):   # reprs show the public path
    _cls.__module__ = __name__

__all__ = ["FSDPModule", "MixedPrecisionPolicy", "UnshardHandle", "fully_shard"]
