"""Mirrors ``torch.distributed``: process groups and collectives on JAX's own distributed runtime
(NOTE [ process groups on JAX ] in ``distributed_c10d.py``), and device meshes (NOTE [ a mesh in
one process ] in ``device_mesh.py``)."""
from .distributed_c10d import *  # noqa: F401,F403
from .distributed_c10d import __all__, RedOpType, default_pg_timeout  # noqa: F401
from . import device_mesh as device_mesh
from .device_mesh import DeviceMesh as DeviceMesh, init_device_mesh as init_device_mesh
