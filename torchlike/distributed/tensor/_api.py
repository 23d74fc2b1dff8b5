"""Mirrors ``torch.distributed.tensor._api``: DTensor, distribute_tensor.

NOTE [ DTensor as a global array ]
PyTorch's DTensor is each rank's local shard plus a spec (mesh, placements); the global tensor
exists only in aggregate.  torchlike's DTensor is a Tensor holding the *global* jax array, laid
out over the mesh by a ``NamedSharding``: placements map to a ``PartitionSpec`` (``Shard(d)`` on
mesh dimension ``i`` puts mesh axis ``i`` on tensor dimension ``d``; ``Replicate`` puts nothing),
so every op of torchlike runs on it as it is and XLA's SPMD partitioner propagates the shardings
and places the communication -- eagerly (each op's program) and in a compiled step alike.  Its
``shape`` is the global shape, as PyTorch's.

What follows from holding the global array:
- Results of ops on DTensors are plain Tensors holding sharded arrays (the layout XLA chose);
  ``DTensor.from_local`` / ``distribute_tensor`` / ``redistribute`` make DTensors.  PyTorch's
  results are DTensors.
- Pieces must be equal: a jax sharding splits a dimension into equal parts, so a ``Shard(d)``
  whose dimension does not divide by the mesh size raises (PyTorch pads the last ranks).
- No ``Partial`` placement: a global array holds reduced values only.
- The per-rank calls answer for this process's coordinate (NOTE [ a mesh in one process ] in
  device_mesh.py): ``to_local()`` is the shard on the mesh device at that coordinate (rank 0's
  when one process holds the whole mesh), on that device; ``from_local(t)`` takes ``t`` as
  every rank's local tensor (the SPMD program's value, the same on every rank), so the global
  tensor is ``t`` repeated along each sharded dimension.
- Gradients are the derivatives of these definitions: through ``redistribute`` the gradient
  takes the input's placements again (Replicate to Shard after a gather: a reduction across
  the mesh, which XLA's CPU pipeline makes an all-reduce each device slices), through
  ``to_local`` it is zero outside the local shard, and through ``from_local`` it is the sum
  over the repeats.  So ``grad_placements`` (PyTorch's hint of a gradient's layout) changes
  no value here.
- What PyTorch checks or chooses across ranks has one answer in one process: ``from_local``'s
  ``run_check`` (every rank passed the same tensor), ``distribute_tensor``'s
  ``src_data_rank`` (the one tensor given is every rank's data).
"""
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec

from ..._device import from_jax_device
from ..._tensor import ArrayImpl, Tensor
from ...autograd.function import Function
from ...autograd.grad_mode import no_grad
from ...nn.parameter import Parameter
from ..device_mesh import DeviceMesh, _current_mesh
from .placement_types import Placement, Replicate, Shard

__all__ = ["DTensor", "distribute_tensor"]


# --- placements -> shardings ---------------------------------------------------------------------

def normalize_placements(mesh, placements, shape, even=True):
    """``placements`` checked against ``mesh`` and a tensor of ``shape`` (PyTorch's errors),
    with Shard dims made non-negative; ``even``: check the shards are equal."""
    placements = tuple(placements)
    if len(placements) != mesh.ndim:
        raise ValueError(f"`placements` must have the same length as `device_mesh.ndim`! Found "
                         f"placements length: {len(placements)}, and device_mesh.ndim: "
                         f"{mesh.ndim}.")
    ndim = len(shape)
    out = []
    for i, p in enumerate(placements):
        if not isinstance(p, Placement):
            raise TypeError(f"placements must be Shard or Replicate, got {p!r}")
        if isinstance(p, Shard):
            if ndim == 0:
                raise AssertionError("Expected tensor.dim() > 0, got 0")
            if not -ndim <= p.dim < max(ndim, 1):
                raise IndexError(f"Dimension out of range (expected to be in range of "
                                 f"[{-max(ndim, 1)}, {max(ndim, 1) - 1}], but got {p.dim})")
            p = Shard(p.dim % ndim)
        out.append(p)
    parts = [1] * ndim
    for i, p in enumerate(out):
        if isinstance(p, Shard):
            parts[p.dim] *= mesh.size(i)
            if even and shape[p.dim] % parts[p.dim]:
                raise ValueError(f"Shard({p.dim}) splits dimension {p.dim} of size "
                                 f"{shape[p.dim]} into {parts[p.dim]} pieces: torchlike's "
                                 f"shards must be equal (NOTE [ DTensor as a global array ])")
    return tuple(out)


def sharding_of(mesh, placements, ndim):
    """The NamedSharding of (normalized) ``placements`` over ``mesh`` for ``ndim`` dims."""
    axes = [[] for _ in range(ndim)]
    names = mesh._jax_mesh.axis_names
    for i, p in enumerate(placements):
        if isinstance(p, Shard):
            axes[p.dim].append(names[i])
    spec = [None if not a else a[0] if len(a) == 1 else tuple(a) for a in axes]
    return NamedSharding(mesh._jax_mesh, PartitionSpec(*spec))


def place(arr, sharding):
    """``arr`` laid out by ``sharding``: a transfer eagerly, a constraint in a trace (where XLA
    chooses the collective)."""
    if isinstance(arr, jax.core.Tracer):
        return jax.lax.with_sharding_constraint(arr, sharding)
    if arr.sharding == sharding:
        return arr
    return jax.device_put(arr, sharding)


def _local_device(mesh):
    coordinate = mesh.get_coordinate()
    if coordinate is None:
        raise RuntimeError(f"this process holds no device of {mesh}")
    return mesh._devices[coordinate]


# --- the differentiable moves (named as PyTorch's autograd functions) -----------------------------

class Redistribute(Function):
    """The layout ``to`` (the values cast to ``dtype`` first, when given); its gradient takes
    the layout ``back`` again (None: as it comes; moved as ``grad_dtype`` when given) in the
    input's dtype."""

    @staticmethod
    def forward(ctx, x, to, back, dtype=None, grad_dtype=None):
        arr = x._value()
        ctx.back, ctx.dtype, ctx.grad_dtype = back, arr.dtype, grad_dtype
        return Tensor._wrap(place(arr if dtype is None else arr.astype(dtype), to))

    @staticmethod
    def backward(ctx, g):
        arr = g._value()
        if ctx.grad_dtype is not None:
            arr = arr.astype(ctx.grad_dtype)
        if ctx.back is not None:
            arr = place(arr, ctx.back)
        return Tensor._wrap(arr.astype(ctx.dtype)), None, None, None, None


class _ToTorchTensor(Function):
    """The shard at ``index`` (on ``device``) of a global array laid out by ``sharding``."""

    @staticmethod
    def forward(ctx, x, index, device, sharding):
        ctx.index, ctx.sharding, ctx.shape = index, sharding, tuple(x.shape)
        arr = x._value()
        if isinstance(arr, jax.core.Tracer):
            return Tensor._wrap(arr[index])
        return Tensor._wrap(next(s.data for s in arr.addressable_shards if s.device == device))

    @staticmethod
    def backward(ctx, g):
        arr = g._value()
        if tuple(arr.shape) != ctx.shape:
            arr = jnp.zeros(ctx.shape, arr.dtype).at[ctx.index].set(arr)
        return Tensor._wrap(place(arr, ctx.sharding)), None, None, None


class _FromTorchTensor(Function):
    """``x`` (every rank's local tensor) repeated ``reps`` times along each dimension, laid out
    by ``sharding``."""

    @staticmethod
    def forward(ctx, x, reps, sharding):
        arr = x._value()
        ctx.reps, ctx.shape = reps, tuple(arr.shape)
        ctx.device = None if isinstance(arr, jax.core.Tracer) else next(iter(arr.devices()))
        return Tensor._wrap(place(jnp.tile(arr, reps), sharding))

    @staticmethod
    def backward(ctx, g):
        split = [n for r, s in zip(ctx.reps, ctx.shape) for n in (r, s)]
        arr = g._value().reshape(split).sum(axis=tuple(range(0, len(split), 2)))
        if ctx.device is not None:
            arr = jax.device_put(arr, ctx.device)
        return Tensor._wrap(arr), None, None


# --- DTensor ----------------------------------------------------------------------------------

class DTensor(Tensor):
    """Mirrors ``torch.distributed.tensor.DTensor``: a Tensor laid out over a DeviceMesh by
    placements, holding the global jax array with a NamedSharding (NOTE [ DTensor as a global
    array ]).  Make one with ``distribute_tensor`` or ``DTensor.from_local``.

    Example::

        >>> mesh = init_device_mesh("cpu", (8,))
        >>> d = distribute_tensor(torch.arange(16.0).reshape(8, 2), mesh, [Shard(0)])
        >>> d.placements, d.to_local().shape, d.full_tensor().shape
        ((Shard(dim=0),), torch.Size([1, 2]), torch.Size([8, 2]))
    """

    _mesh = None
    _placements = ()

    def __new__(cls, *args, **kwargs):
        raise TypeError("DTensor is made by distribute_tensor(tensor, mesh, placements) or "
                        "DTensor.from_local(local_tensor, mesh, placements)")

    @property
    def device_mesh(self):
        """The DeviceMesh the tensor is laid out over."""
        return self._mesh

    @property
    def placements(self):
        """The placement along each mesh dimension (a tuple)."""
        return self._placements

    @property
    def grad(self):
        """The gradient, a DTensor of this tensor's layout (as PyTorch's)."""
        g = Tensor.grad.fget(self)
        if g is not None and not isinstance(g, DTensor) and g.shape == self.shape:
            _as_dtensor(g, self._mesh, self._placements)
        return g

    @grad.setter
    def grad(self, value):
        Tensor.grad.fset(self, value)

    @grad.deleter
    def grad(self):
        Tensor.grad.fdel(self)

    @property
    def device(self):
        """The device of the local shard (NOTE [ a mesh in one process ])."""
        return from_jax_device(_local_device(self._mesh))

    def __repr__(self):
        local = self.to_local().detach()
        return (f"DTensor(local_tensor={local}, device_mesh={self._mesh}, "
                f"placements={self._placements})")

    __str__ = __repr__

    def __reduce_ex__(self, protocol):   # saved as the full tensor's values, laid out again
        return (_rebuild, (self.full_tensor().detach(), self._mesh, self._placements,
                           self.requires_grad))

    def __deepcopy__(self, memo):
        new = Tensor.__deepcopy__(self, memo)
        new._mesh, new._placements = self._mesh, self._placements
        return new

    def _write(self, new_arr):
        """In-place writes keep the layout: a result XLA laid out otherwise (``zero_``'s zeros
        depend on no input, so come back replicated) is moved back to this tensor's."""
        old = self._arr
        if type(new_arr) is ArrayImpl and type(old) is ArrayImpl and \
                new_arr.sharding != old.sharding:
            new_arr = jax.device_put(new_arr, old.sharding)
        Tensor._write(self, new_arr)

    def detach(self):
        """Mirrors ``DTensor.detach``: a DTensor sharing the values, without history."""
        return _as_dtensor(Tensor.detach(self), self._mesh, self._placements)

    def copy_(self, src, non_blocking=False):
        """Mirrors ``Tensor.copy_`` on a DTensor: ``src`` (a DTensor, or a full tensor on any
        device) written in, keeping this tensor's layout."""
        from ..._inplace import inplace
        from ..._dispatch import call
        from ..._ops.index import COPY
        arr = src._value() if isinstance(src, Tensor) else jnp.asarray(src)
        laid = Tensor._wrap(place(arr, self._arr.sharding))
        return inplace(self, lambda: call(COPY, self, laid))

    def to_local(self, *, grad_placements=None):
        """Mirrors ``DTensor.to_local``: the shard of this process's mesh coordinate, on its
        device (NOTE [ DTensor as a global array ]); differentiable."""
        device = _local_device(self._mesh)
        sharding = self._arr.sharding if not isinstance(self._arr, jax.core.Tracer) else \
            sharding_of(self._mesh, self._placements, self.ndim)
        index = sharding.devices_indices_map(tuple(self.shape))[device]
        return _ToTorchTensor.apply(self, index, device, sharding)

    def full_tensor(self, *, grad_placements=None):
        """Mirrors ``DTensor.full_tensor``: the whole tensor, on this process's device (a
        gather of the shards); differentiable."""
        return self.redistribute(placements=[Replicate()] * self._mesh.ndim).to_local()

    def redistribute(self, device_mesh=None, placements=None, *, async_op=False,
                     forward_dtype=None, backward_dtype=None):
        """Mirrors ``DTensor.redistribute``: the same values with ``placements`` (on
        ``device_mesh``, this one by default); differentiable, its gradient redistributed
        back.

        Args:
            device_mesh: the target mesh (default: this tensor's).
            placements: the target placements.
            forward_dtype: cast the values to this dtype before the move (the result's dtype).
            backward_dtype: move the gradient in this dtype (it arrives in this tensor's).

        Returns:
            A DTensor.
        """
        mesh = self._mesh if device_mesh is None else device_mesh
        if placements is None:
            raise RuntimeError("placements is needed for redistribute!")
        placements = normalize_placements(mesh, placements, tuple(self.shape))
        to = sharding_of(mesh, placements, self.ndim)
        back = sharding_of(self._mesh, self._placements, self.ndim)
        out = Redistribute.apply(self, to, back, _np_dtype(forward_dtype),
                                 _np_dtype(backward_dtype))
        return _as_dtensor(out, mesh, placements)

    @staticmethod
    def from_local(local_tensor, device_mesh=None, placements=None, *, run_check=False,
                   shape=None, stride=None):
        """Mirrors ``DTensor.from_local``: the DTensor whose every rank holds ``local_tensor``
        (NOTE [ DTensor as a global array ]: the global tensor repeats it along each sharded
        dimension); differentiable.

        Args:
            local_tensor: this rank's shard (every rank's, in one process).
            device_mesh: the mesh (default: the one a ``with mesh:`` block set).
            placements: one per mesh dimension (default: all Replicate).
            shape: the global shape, checked when given (``stride``: the layout is XLA's).

        Returns:
            A DTensor.
        """
        mesh = _current_mesh() if device_mesh is None else device_mesh
        if placements is None:
            placements = [Replicate()] * mesh.ndim
        local_shape = tuple(local_tensor.shape)
        placements = normalize_placements(mesh, placements, local_shape, even=False)
        reps = [1] * len(local_shape)
        for i, p in enumerate(placements):
            if isinstance(p, Shard):
                reps[p.dim] *= mesh.size(i)
        global_shape = tuple(n * r for n, r in zip(local_shape, reps))
        if shape is not None and tuple(shape) != global_shape:
            raise ValueError(f"from_local: the local tensors of shape {local_shape} make a "
                             f"global tensor of shape {global_shape}, not {tuple(shape)} "
                             f"(NOTE [ DTensor as a global array ])")
        out = _FromTorchTensor.apply(local_tensor, tuple(reps),
                                     sharding_of(mesh, placements, len(local_shape)))
        return _as_dtensor(out, mesh, placements)


class DTensorParameter(DTensor, Parameter):
    """A DTensor that a Module files as a parameter (PyTorch's ``nn.Parameter(dtensor)``, a
    DTensor that is an ``nn.Parameter``): what ``fully_shard`` makes of each parameter."""

    def __new__(cls, data, requires_grad=True):
        t = object.__new__(cls)
        t._arr = data._value()
        t._mesh, t._placements = data._mesh, data._placements
        if requires_grad:
            t._set_requires_grad(True)
        return t

    __repr__ = DTensor.__repr__
    __str__ = DTensor.__str__
    __reduce_ex__ = DTensor.__reduce_ex__
    __deepcopy__ = DTensor.__deepcopy__


def _np_dtype(dtype):
    return None if dtype is None else dtype._np


def _as_dtensor(t, mesh, placements):
    """``t`` (a fresh Tensor holding the global array) as a DTensor."""
    t.__class__ = DTensor
    t._mesh, t._placements = mesh, tuple(placements)
    return t


def _rebuild(full, mesh, placements, requires_grad):
    return distribute_tensor(full, mesh, placements).requires_grad_(requires_grad)


def distribute_tensor(tensor, device_mesh=None, placements=None, *, src_data_rank=0):
    """Mirrors ``torch.distributed.tensor.distribute_tensor``: ``tensor`` laid out over
    ``device_mesh`` by ``placements`` (a leaf DTensor, requiring grad when ``tensor`` does).

    Args:
        tensor: the full tensor (in one process, that of every rank).
        device_mesh: the mesh (default: the one a ``with mesh:`` block set).
        placements: one per mesh dimension (default: all Replicate).

    Returns:
        A DTensor.

    Example::

        >>> d = distribute_tensor(torch.ones(8, 4), mesh, [Shard(0)])
        >>> d.to_local().shape
        torch.Size([1, 4])
    """
    mesh = _current_mesh() if device_mesh is None else device_mesh
    if not isinstance(mesh, DeviceMesh):
        raise TypeError(f"device_mesh must be a DeviceMesh, got {type(mesh).__name__}")
    if placements is None:
        placements = [Replicate()] * mesh.ndim
    placements = normalize_placements(mesh, placements, tuple(tensor.shape))
    if isinstance(tensor, DTensor):
        if tensor._mesh != mesh or tensor._placements != placements:
            raise ValueError(f"Cannot distribute a DTensor with device mesh {tensor._mesh} "
                             f"and placements {tensor._placements} to a different device mesh "
                             f"{mesh} and placements {placements}.")
        return tensor
    with no_grad():
        arr = place(tensor._value(), sharding_of(mesh, placements, tensor.ndim))
    out = _as_dtensor(Tensor._wrap(arr), mesh, placements)
    if tensor.requires_grad:
        out.requires_grad_(True)
    return out
