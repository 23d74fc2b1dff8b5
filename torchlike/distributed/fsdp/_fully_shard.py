"""Mirrors ``torch.distributed.fsdp._fully_shard``: FSDP2's ``fully_shard`` and FSDPModule.

NOTE [ fully_shard on global arrays ]
``fully_shard(module)`` replaces each parameter it manages by a DTensor sharded along dim 0 over
the mesh (``Shard(0)``; ``(Replicate(), Shard(0))`` on a 2-d mesh, HSDP), as PyTorch does.  A
forward pre-hook gathers them: each sharded parameter goes through ``Redistribute`` to the
replicated layout (an all-gather), and the module computes with those full parameters; the
gradient of that move takes the sharded layout again, so the gradient that reaches each
sharded parameter is itself sharded: a reduction across the mesh that XLA places (in a compiled
step, one SPMD program, XLA's CPU pipeline makes it one all-reduce of every gradient, which each
device slices to its shard, where PyTorch reduce-scatters; eagerly, the gradient program's
result is sliced to the shards).  The optimizer, made after ``fully_shard`` as in PyTorch,
steps the sharded parameters in one jitted update that keeps their layout.  A parameter two
modules share stays one sharded parameter.

The batch is one global array (NOTE [ a mesh in one process ] in device_mesh.py): the root's
forward lays tensors it is given over the mesh split along dim 0 (data parallel; whole on every
device when dim 0 does not divide), so the loss is the global batch's and the gradient is the
same as on one device -- where PyTorch averages the ranks' gradients of their local batches in
the reduce-scatter, which for a mean loss is the same number.  Tensors the step mixes with the
model's outputs (the targets) must be on the mesh too: ``distribute_tensor(y, mesh,
[Shard(0)])``.  Under ``torchlike.compile`` the step is one SPMD program over the mesh: a
batch on one device enters it whole on every device and the root's split is a sharding
constraint (NOTE [ devices in a compiled step ]).

Holding global arrays changes what some of PyTorch's knobs can do:
- A parameter whose dim 0 does not divide by the mesh size stays whole on every device
  (``Replicate()``): jax shards split evenly (PyTorch pads the last shard).
- The gathered parameters stay referenced by the autograd graph until backward, as any input
  of a recorded op is, so eagerly they are not freed after forward (``reshard_after_forward``
  only decides whether the module holds the sharded or the gathered ones between forwards); in
  a compiled step XLA decides what to keep.
- ``set_requires_gradient_sync(False)`` changes no value: every gradient is the global one.
"""
import dataclasses

import jax

from ..._tensor import Tensor
from ...nn.modules.module import Module
from ..device_mesh import DeviceMesh, _mesh_devices, init_device_mesh
from ..tensor._api import (DTensor, DTensorParameter, Redistribute, _np_dtype,
                           distribute_tensor, place, sharding_of)
from ..tensor.placement_types import Replicate, Shard

__all__ = ["FSDPModule", "MixedPrecisionPolicy", "UnshardHandle", "fully_shard"]


@dataclasses.dataclass(frozen=True)
class MixedPrecisionPolicy:
    """Mirrors ``torch.distributed.fsdp.MixedPrecisionPolicy``: the dtypes of a sharded
    module's computation.  The sharded parameters (and the optimizer's step) keep their dtype.

    Args:
        param_dtype: the gathered parameters' dtype, so the forward's and backward's (the
            gather casts before it moves; None: the parameters' own).
        reduce_dtype: the dtype gradients are reduced in (None: ``param_dtype``); they reach
            the sharded parameters in the parameters' dtype.
        output_dtype: floating outputs of the forward are cast to it (None: left as they are).
        cast_forward_inputs: cast the forward's floating inputs to ``param_dtype``.

    Example::

        >>> fully_shard(model, mp_policy=MixedPrecisionPolicy(param_dtype=torch.bfloat16,
        ...                                                   reduce_dtype=torch.float32))
    """

    param_dtype: object = None
    reduce_dtype: object = None
    output_dtype: object = None
    cast_forward_inputs: bool = True


class FSDPModule:
    """Mirrors ``torch.distributed.fsdp.FSDPModule``: what ``fully_shard`` adds to a module
    (its class becomes ``FSDP<Class>``, a subclass of both)."""

    def unshard(self, async_op=False):
        """Mirrors ``FSDPModule.unshard``: gather the managed parameters now; the module holds
        the full ones until ``reshard`` (not recursive).  With ``async_op`` it returns a
        handle whose ``wait()`` waits for the gathers (jax runs them asynchronously anyway)."""
        _gather(self)
        return UnshardHandle(self) if async_op else None

    def reshard(self):
        """Mirrors ``FSDPModule.reshard``: the module holds its sharded parameters again."""
        _release(self)

    def set_reshard_after_forward(self, reshard_after_forward, recurse=True):
        """Mirrors ``FSDPModule.set_reshard_after_forward``."""
        for m in _fsdp_modules(self, recurse):
            m._fsdp.reshard_after_forward = bool(reshard_after_forward)

    def set_requires_gradient_sync(self, requires_gradient_sync, *, recurse=True):
        """Mirrors ``FSDPModule.set_requires_gradient_sync`` (NOTE [ fully_shard on global
        arrays ]: the gradient is the global one either way, so this changes no value)."""
        for m in _fsdp_modules(self, recurse):
            m._fsdp.requires_gradient_sync = bool(requires_gradient_sync)


class UnshardHandle:
    """Mirrors ``torch.distributed.fsdp.UnshardHandle``: ``wait()`` returns once the gathered
    parameters of an ``unshard(async_op=True)`` are computed."""

    def __init__(self, module):
        self._module = module

    def wait(self):
        for owner, name, _ in self._module._fsdp.managed:
            jax.block_until_ready(owner._parameters[name]._value())


class _State:
    """What fully_shard keeps on a module: its mesh and the parameters it manages as
    (owner module, name, sharded parameter), and the gathered ones while it holds them."""

    def __init__(self, mesh, managed, reshard_after_forward, mp_policy):
        self.mesh = mesh
        self.mp_policy = mp_policy
        self.managed = managed
        self.reshard_after_forward = reshard_after_forward
        self.requires_gradient_sync = True
        self.gathered = False


_CLASSES = {}   # module class -> its FSDP subclass


def _fsdp_class(cls):
    if issubclass(cls, FSDPModule):
        return cls
    sub = _CLASSES.get(cls)
    if sub is None:
        sub = _CLASSES[cls] = type(f"FSDP{cls.__name__}", (FSDPModule, cls), {})
    return sub


def _fsdp_modules(module, recurse):
    if not recurse:
        return [module]
    return [m for m in module.modules() if isinstance(m, FSDPModule)]


def _default_mesh(module):
    device_type = next((p.device.type for p in module.parameters()), "cpu")
    return init_device_mesh(device_type, (len(_mesh_devices(device_type)),))


def _placements_for(mesh, param, shard_placement_fn):
    shard = shard_placement_fn(param) if shard_placement_fn is not None else None
    dim = 0 if shard is None else shard.dim % max(param.ndim, 1)
    whole = param.ndim == 0 or param.shape[dim] % mesh.size(mesh.ndim - 1)
    last = Replicate() if whole else Shard(dim)
    return [Replicate()] * (mesh.ndim - 1) + [last]


def fully_shard(module, *, mesh=None, reshard_after_forward=True, shard_placement_fn=None,
                mp_policy=MixedPrecisionPolicy(), ignored_params=None):
    """Mirrors ``torch.distributed.fsdp.fully_shard``: shard ``module``'s parameters along
    dim 0 over ``mesh``; each forward gathers them and backward reduce-scatters their
    gradients (NOTE [ fully_shard on global arrays ]).

    The parameters it manages are those of ``module`` and its submodules that an inner
    ``fully_shard`` (called first, as in PyTorch) does not manage.  Each becomes a
    DTensor-parameter (a new object: make the optimizer afterwards); buffers are put whole on
    every mesh device.

    Args:
        module: the module (or a list of modules, each sharded in turn).
        mesh: a 1-d DeviceMesh (FSDP), or 2-d (HSDP: replicated along the first dimension);
            default: every device of the parameters' type.
        reshard_after_forward: whether the module holds its sharded parameters after forward
            (True) or keeps the gathered ones until the next forward or ``reshard()``.
        shard_placement_fn: ``param -> Shard(dim) or None`` to shard another dim than 0.
        mp_policy: a MixedPrecisionPolicy (default: compute in the parameters' dtypes).
        ignored_params: parameters to leave as they are.

    Returns:
        ``module``, whose class is now ``FSDP<Class>`` (a subclass of FSDPModule and of its
        class).

    Example::

        >>> mesh = init_device_mesh("cpu", (8,))
        >>> for layer in model.layers:
        ...     fully_shard(layer, mesh=mesh)
        >>> fully_shard(model, mesh=mesh)
        >>> opt = torch.optim.Adam(model.parameters())
    """
    if isinstance(module, (list, tuple)):
        for m in module:
            fully_shard(m, mesh=mesh, reshard_after_forward=reshard_after_forward,
                        shard_placement_fn=shard_placement_fn, mp_policy=mp_policy,
                        ignored_params=ignored_params)
        return module
    if not isinstance(module, Module):
        raise ValueError(f"fully_shard does not support containers that do not implement "
                         f"forward: {module}")
    mesh = _default_mesh(module) if mesh is None else mesh
    if not isinstance(mesh, DeviceMesh) or mesh.ndim not in (1, 2):
        raise ValueError(f"fully_shard expects a 1D or 2D DeviceMesh but got {mesh}")
    if mesh.ndim == 2 and mesh.mesh_dim_names is None:
        raise AssertionError("Please init the 2D mesh for HSDP with mesh_dim_names specified")
    ignored = {id(p) for p in (ignored_params or ())}
    managed, made = [], {}   # made: id(parameter) -> its sharded one (a shared one stays so)
    for owner in _unmanaged_modules(module):
        for name, p in list(owner._parameters.items()):
            if p is None or id(p) in ignored or isinstance(p, DTensor):
                continue
            sharded = made.get(id(p))
            if sharded is None:
                placements = _placements_for(mesh, p, shard_placement_fn)
                sharded = made[id(p)] = DTensorParameter(
                    distribute_tensor(p.detach(), mesh, placements), requires_grad=p.requires_grad)
            owner._parameters[name] = sharded
            managed.append((owner, name, sharded))
        for name, b in list(owner._buffers.items()):
            if b is not None:
                owner._buffers[name] = Tensor._wrap(place(
                    b._value(), sharding_of(mesh, [Replicate()] * mesh.ndim, b.ndim)))
    module.__class__ = _fsdp_class(type(module))
    module.__dict__["_fsdp"] = _State(mesh, managed, reshard_after_forward, mp_policy)
    module.register_forward_pre_hook(_pre_forward, with_kwargs=True)
    module.register_forward_hook(_post_forward, always_call=True)
    return module


def _unmanaged_modules(module):
    """``module`` and its submodules that no inner fully_shard manages."""
    found, stack = [], [module]
    while stack:
        m = stack.pop()
        found.append(m)
        stack.extend(c for c in reversed(list(m.children())) if c is not None
                     and not isinstance(c, FSDPModule))
    return found


def _gather(module):
    """Hand ``module``'s computation the replicated parameters (NOTE [ fully_shard on global
    arrays ]): each a differentiable move of its sharded parameter."""
    state = module._fsdp
    policy = state.mp_policy
    dtype = _np_dtype(policy.param_dtype)
    grad_dtype = _np_dtype(policy.reduce_dtype or policy.param_dtype)
    for owner, name, sharded in state.managed:
        whole = sharding_of(state.mesh, [Replicate()] * state.mesh.ndim, sharded.ndim)
        back = sharding_of(state.mesh, sharded._placements, sharded.ndim)
        owner._parameters[name] = Redistribute.apply(
            sharded, whole, back, dtype if sharded.is_floating_point() else None, grad_dtype)
    state.gathered = True


def _release(module):
    state = module._fsdp
    for owner, name, sharded in state.managed:
        owner._parameters[name] = sharded
    state.gathered = False


def _on_mesh(arr, mesh):
    sharding = getattr(arr, "sharding", None)
    return sharding is not None and getattr(sharding, "mesh", None) == mesh._jax_mesh


def _lay_input(x, mesh):
    """A tensor given to the root's forward, on the mesh: split along dim 0 when it divides
    (data parallel), else whole on every device; differentiable.  In a compiled step the
    call has put it whole on the mesh (NOTE [ devices in a compiled step ]), and the split is
    a constraint whose gradient is left as XLA lays it out."""
    arr = x._value()
    if isinstance(x, DTensor) or _on_mesh(arr, mesh):
        return x
    split = x.ndim and x.shape[0] % mesh.size() == 0
    placements = ([Shard(0)] * mesh.ndim if split else [Replicate()] * mesh.ndim)
    traced = isinstance(arr, jax.core.Tracer)
    return Redistribute.apply(x, sharding_of(mesh, placements, x.ndim),
                              None if traced else arr.sharding)


def _cast(x, dtype):
    """Floating tensors in ``x`` (nested tuples, lists, dicts) cast to ``dtype``."""
    if isinstance(x, Tensor):
        return x.to(dtype) if x.is_floating_point() else x
    if isinstance(x, (tuple, list)):
        return type(x)(_cast(v, dtype) for v in x)
    if isinstance(x, dict):
        return {k: _cast(v, dtype) for k, v in x.items()}
    return x


_RUNNING = []   # the fully_shard modules whose forward is running, outermost first


def _pre_forward(module, args, kwargs):
    state = module._fsdp
    mesh, policy = state.mesh, state.mp_policy
    if not _RUNNING:   # the root: its inputs come from outside
        args = tuple(_lay_input(a, mesh) if isinstance(a, Tensor) else a for a in args)
        kwargs = {k: _lay_input(v, mesh) if isinstance(v, Tensor) else v
                  for k, v in kwargs.items()}
    _RUNNING.append(module)
    if policy.cast_forward_inputs and policy.param_dtype is not None:
        args, kwargs = _cast(args, policy.param_dtype), _cast(kwargs, policy.param_dtype)
    _gather(module)
    return args, kwargs


def _post_forward(module, args, output):
    if _RUNNING and _RUNNING[-1] is module:
        _RUNNING.pop()
    state = module._fsdp
    if state.reshard_after_forward:
        _release(module)
    if state.mp_policy.output_dtype is not None:
        return _cast(output, state.mp_policy.output_dtype)
    return None
