"""Mirrors ``torch.distributed.device_mesh``: a DeviceMesh is an n-d grid of devices, here a
``jax.sharding.Mesh`` whose axes carry the mesh's dimension names.

NOTE [ a mesh in one process ]
PyTorch needs one rank (process) per device: a mesh of 8 is 8 processes, each holding its own
shard and running the same program.  JAX's native model is one process holding several devices
and one program over global arrays, and torchlike follows JAX: without a process group of
several processes, a mesh spans this process's own devices of its type (``cpu``: every jax CPU
device of the process, ``XLA_FLAGS=--xla_force_host_platform_device_count=8`` gives 8; ``cuda``:
the devices ``cuda:N`` names), and the mesh may be as large as there are such devices.  With a
process group of several processes (``init_process_group``) a mesh spans the ranks' devices, one
per rank, as ``ProcessGroup`` does (NOTE [ process groups on JAX ] in distributed_c10d.py).

What is per rank in PyTorch is this process's view here: ``get_coordinate``, ``get_local_rank``
and a mesh sliced by name (``mesh["tp"]``: the row through this process's coordinate) answer as
the rank of this process's first mesh device would, which is rank 0 when one process holds the
whole mesh.  ``mesh`` (PyTorch's tensor of ranks) holds each device's index among the devices of
its type (``cpu:N`` / ``cuda:N``), which is the rank when there is one process per device.
"""
import math

import jax
import numpy as np
from jax.sharding import Mesh

from .. import _device
from .._creation import tensor as _tensor
from .._dtype import int32

__all__ = ["DeviceMesh", "init_device_mesh"]


def _mesh_devices(device_type):
    """The devices a mesh of ``device_type`` may span, in rank order (NOTE [ a mesh in one
    process ])."""
    from . import distributed_c10d as c10d
    if c10d.is_initialized() and c10d.get_world_size() > 1:
        return [c10d._rank_device(r) for r in range(c10d.get_world_size())]
    if device_type == "cpu":
        return _device._jax_devices("cpu")
    return list(_device.devices_of(device_type))


class DeviceMesh:
    """Mirrors ``torch.distributed.device_mesh.DeviceMesh``: devices laid out as an n-d array
    (NOTE [ a mesh in one process ]).

    Args:
        device_type: the devices' type (``"cpu"``, ``"cuda"``, ...), without an index.
        mesh: the layout, an n-d array (nested lists, numpy array or Tensor) of device ranks:
            indices into the devices of ``device_type`` (NOTE [ a mesh in one process ]).
        mesh_dim_names: a unique name for each dimension (optional).

    Example::

        >>> mesh = DeviceMesh("cpu", [[0, 1, 2, 3], [4, 5, 6, 7]], mesh_dim_names=("dp", "tp"))
        >>> mesh["tp"]
        DeviceMesh((tp=4), 'cpu', stride=(1,))
    """

    def __init__(self, device_type, mesh, *, mesh_dim_names=None, _devices=None,
                 _stride=None):
        ranks = np.asarray(mesh.tolist() if hasattr(mesh, "tolist") else mesh, dtype=np.int64)
        if _devices is None:
            available = _mesh_devices(device_type)
            if ranks.size > len(available):
                raise RuntimeError(f"Mesh should not be bigger than default world size "
                                   f"{len(available)}, but found {ranks.size} ranks!")
            _devices = np.empty(ranks.shape, dtype=object)
            for index, r in np.ndenumerate(ranks):
                _devices[index] = available[r]
        self._device_type = device_type
        self._ranks = ranks
        self._devices = _devices
        self._mesh_dim_names = None if mesh_dim_names is None else tuple(mesh_dim_names)
        if _stride is None:   # row-major strides of the layout, as PyTorch prints them
            _stride = tuple(math.prod(ranks.shape[i + 1:]) for i in range(ranks.ndim))
        self._stride = _stride
        axes = self._mesh_dim_names or tuple(f"dim_{i}" for i in range(ranks.ndim))
        self._jax_mesh = Mesh(_devices, axes)

    # --- what PyTorch shows ---------------------------------------------------------------------

    @property
    def device_type(self):
        """The type of the mesh's devices."""
        return self._device_type

    @property
    def mesh(self):
        """The layout as an int32 Tensor of ranks (NOTE [ a mesh in one process ])."""
        return _tensor(self._ranks.tolist(), dtype=int32)

    @property
    def mesh_dim_names(self):
        """The dimensions' names (None when not named)."""
        return self._mesh_dim_names

    @property
    def ndim(self):
        return self._ranks.ndim

    @property
    def shape(self):
        return tuple(self._ranks.shape)

    def size(self, mesh_dim=None):
        """Mirrors ``DeviceMesh.size``: the number of devices (along ``mesh_dim``)."""
        return self._ranks.size if mesh_dim is None else self._ranks.shape[mesh_dim]

    def get_rank(self):
        """Mirrors ``DeviceMesh.get_rank``: this process's global rank."""
        from . import distributed_c10d as c10d
        return c10d.get_rank() if c10d.is_initialized() else 0

    def get_coordinate(self):
        """Mirrors ``DeviceMesh.get_coordinate``: this process's position in the mesh (of its
        first device there), or None when it holds none of the mesh's devices."""
        mine = set(jax.local_devices())
        for index, d in np.ndenumerate(self._devices):
            if d in mine:
                return tuple(int(i) for i in index)
        return None

    def get_local_rank(self, mesh_dim=None):
        """Mirrors ``DeviceMesh.get_local_rank``: this process's coordinate along
        ``mesh_dim`` (an index or a name; needed when the mesh has several dimensions)."""
        if self.ndim > 1 and mesh_dim is None:
            raise RuntimeError(f"Found the DeviceMesh have {self.ndim} dimensions",
                               "Optional kwarg `mesh_dim` needs to be specified when "
                               "device_mesh.ndim > 1.")
        coordinate = self.get_coordinate()
        if coordinate is None:
            return -1
        return coordinate[self._dim(0 if mesh_dim is None else mesh_dim)]

    def _dim(self, mesh_dim):
        if isinstance(mesh_dim, str):
            if not self._mesh_dim_names:
                raise KeyError("No `mesh_dim_names` found.")
            if mesh_dim not in self._mesh_dim_names:
                raise KeyError(f"Mesh dimension '{mesh_dim}' does not exist.",
                               f"Available mesh dimensions are: "
                               f"mesh_dim_names={self._mesh_dim_names}")
            return self._mesh_dim_names.index(mesh_dim)
        return mesh_dim

    def __getitem__(self, mesh_dim_names):
        """Mirrors ``DeviceMesh.__getitem__``: the submesh of the named dimensions through this
        process's coordinate (NOTE [ a mesh in one process ])."""
        if not self._mesh_dim_names:
            raise RuntimeError("Cannot slice a DeviceMesh without mesh_dim_names!")
        names = (mesh_dim_names,) if isinstance(mesh_dim_names, str) else tuple(mesh_dim_names)
        if names == self._mesh_dim_names:
            return self
        if not names or any(n not in self._mesh_dim_names for n in names) or \
                len(set(names)) != len(names):
            raise KeyError(f"Invalid mesh_dim_names {names} specified. Valid mesh_dim_names "
                           f"are {list(self._mesh_dim_names)}.")
        kept = [self._mesh_dim_names.index(n) for n in names]
        if kept != sorted(kept):
            raise KeyError(f"Invalid mesh_dim_names {names} specified. Mesh dim indices should "
                           f"be in ascending order.")
        here = self.get_coordinate() or (0,) * self.ndim
        index = tuple(slice(None) if i in kept else here[i] for i in range(self.ndim))
        ranks, devices = self._ranks[index], self._devices[index]
        return DeviceMesh(self._device_type, ranks, mesh_dim_names=names, _devices=devices,
                          _stride=tuple(self._stride[k] for k in kept))

    def __reduce__(self):   # by its layout: the devices are this process's (or ranks') again
        return (_rebuild_mesh, (self._device_type, self._ranks.tolist(), self._mesh_dim_names,
                                self._stride))

    def __deepcopy__(self, memo):   # a mesh names devices: a copy of a model shares it
        return self

    def __copy__(self):
        return self

    def __enter__(self):
        """``with mesh:`` makes ``mesh`` the default of distribute_tensor and from_local."""
        _ACTIVE.append(self)
        return self

    def __exit__(self, *exc):
        _ACTIVE.pop()

    def __repr__(self):
        sizes = self.shape
        if self._mesh_dim_names:
            layout = f"({', '.join(f'{k}={v}' for k, v in zip(self._mesh_dim_names, sizes))})"
        else:
            layout = f"{sizes}"
        return f"DeviceMesh({layout}, '{self._device_type}', stride={self._stride})"

    def __eq__(self, other):
        if self is other:
            return True
        return (isinstance(other, DeviceMesh) and self._device_type == other._device_type
                and self._mesh_dim_names == other._mesh_dim_names
                and self._devices.shape == other._devices.shape
                and bool((self._devices == other._devices).all()))

    def __hash__(self):
        return hash((self._device_type, self._mesh_dim_names, self._devices.shape,
                     tuple(self._devices.flat)))


def _rebuild_mesh(device_type, ranks, mesh_dim_names, stride):
    return DeviceMesh(device_type, ranks, mesh_dim_names=mesh_dim_names, _stride=stride)


_ACTIVE = []   # the meshes of the enclosing ``with mesh:`` blocks, innermost last


def _current_mesh():
    if not _ACTIVE:
        raise RuntimeError("No device mesh is currently active!")
    return _ACTIVE[-1]


def init_device_mesh(device_type, mesh_shape, *, mesh_dim_names=None, backend_override=None):
    """Mirrors ``torch.distributed.device_mesh.init_device_mesh``: a mesh of ``mesh_shape``
    over the first ``prod(mesh_shape)`` devices of ``device_type`` (NOTE [ a mesh in one
    process ]; no process group is needed, and ``backend_override`` has nothing to choose).

    Args:
        device_type: ``"cpu"``, ``"cuda"``, ... (no index).
        mesh_shape: the mesh's size along each dimension.
        mesh_dim_names: a unique name per dimension (optional).

    Returns:
        A DeviceMesh.

    Example::

        >>> mesh = init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
        >>> mesh
        DeviceMesh((dp=2, tp=4), 'cpu', stride=(4, 1))
    """
    if mesh_dim_names is not None:
        if len(set(mesh_dim_names)) != len(mesh_dim_names):
            raise RuntimeError("Each mesh_dim_name must be unique. Found repeated "
                               f"mesh_dim_name in mesh_dim_names {mesh_dim_names}")
        if len(mesh_shape) != len(mesh_dim_names):
            raise RuntimeError("mesh_shape and mesh_dim_names should have same length! Found "
                               f"len(mesh_dim_names): {len(mesh_dim_names)} and "
                               f"len(mesh_shape):{len(mesh_shape)}.")
    if device_type and not device_type.isalpha():
        raise RuntimeError(f"Device type with index is not supported but got {device_type}. ",
                           "If you maintained a 'torch.device' object, it's recommended to "
                           "pass in 'device.type'.")
    ranks = np.arange(math.prod(mesh_shape)).reshape(tuple(mesh_shape))
    return DeviceMesh(device_type, ranks, mesh_dim_names=mesh_dim_names)
