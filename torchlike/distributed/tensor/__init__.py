"""Mirrors ``torch.distributed.tensor``: DTensor, a tensor laid out over a DeviceMesh (NOTE [
DTensor as a global array ] in _api.py)."""
from ..device_mesh import DeviceMesh as DeviceMesh, init_device_mesh as init_device_mesh
from ._api import DTensor as DTensor, distribute_tensor as distribute_tensor
from .placement_types import Placement as Placement, Replicate as Replicate, Shard as Shard

for _cls in (DTensor, Placement, Replicate, Shard):   # reprs show the public path
    _cls.__module__ = __name__

__all__ = ["DTensor", "DeviceMesh", "Placement", "Replicate", "Shard", "distribute_tensor",
           "init_device_mesh"]
