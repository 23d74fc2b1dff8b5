"""Mirrors ``torch.nn.parallel.data_parallel``: DataParallel and data_parallel.

NOTE [ DataParallel ]
As PyTorch's: without an accelerator DataParallel is a wrapper that calls its module
(``device_ids`` is empty); its parameters and buffers must live on ``device_ids[0]`` (the
accelerator's devices are torchlike's ``cuda`` devices: GPUs, or CPU devices presented as GPUs,
NOTE [ devices ] in _device.py), and each forward's output lands on ``output_device``.  With
one device the module is moved there once and called on the moved inputs.

With several, each forward is JAX's own one-process model rather than PyTorch's threads: the
batch becomes one jax array sharded along ``dim`` over the devices (a ``NamedSharding`` over a
one-axis ``Mesh``), the parameters and buffers are put on every device (replicated, as
PyTorch's ``replicate`` broadcasts them each forward), and the module runs once on these
global arrays: each eager op is one program that XLA's SPMD partitioner splits over the
devices, inserting the collectives the op needs (none for a row-wise layer; the all-reduce of
a parameter's gradient in backward).  The moves are recorded (ToCopyBackward0 back to the
array's own sharding), so gradients reach the module's own parameters on ``device_ids[0]``,
summed over the batch as one device would have them.  In a step torchlike.compile traces the
moves are sharding constraints and the step is one SPMD program over the devices (NOTE [ a
step over several devices ] in _compile/program.py).

A sharded dimension must divide evenly (XLA's shardings do), so a batch of ``n`` runs on the
first ``k`` devices, ``k`` the largest divisor of ``n`` not above ``len(device_ids)`` (PyTorch
too uses fewer devices than it has when a batch has fewer chunks: ``Tensor.chunk``).  The
replica path this replaced (scatter, a replica per device, parallel_apply, gather: the pieces
stay public) was measured against it on 3 CPU devices presented as GPUs (2 cores), a 3-layer
MLP of width 256, batch 64, forward and backward eagerly: 12.2 ms a step for the replicas,
13.9 ms sharded (the parameters' broadcast is a device_put per tensor per forward).  One path
was kept all the same: it records one graph instead of one per device, its arrays carry real
shardings, and under torchlike.compile it is one SPMD program, which the replicas could not be.

Where the module mixes the samples of a batch the two models differ: a BatchNorm in training
normalizes over the whole batch here (as SyncBatchNorm over PyTorch's replicas), where
PyTorch's replicas each normalize their own chunk; its running statistics take the whole
batch's (PyTorch's keep chunk 0's).  An output with no batch dimension (a loss the module
returns) is the whole batch's one value, where PyTorch gathers one per device into a vector.
TPUs are not ``cuda`` devices here, as they are not for PyTorch's DataParallel: it calls its
module there.
"""
from itertools import chain

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from ... import _device, _trace_context
from ..._tensor import Tensor
from ...autograd import graph
from ...autograd.grad_mode import _state as _grad_state, no_grad
from ..modules.module import Module
from ..utils.stateless import _functional_call
from .parallel_apply import parallel_apply
from .replicate import replicate
from .scatter_gather import device_of, gather, scatter_kwargs

__all__ = ["DataParallel", "data_parallel"]

_AXIS = "batch"


def _all_device_indices():
    n = len(_device.devices_of("cuda"))
    return list(range(n)) if n else None


def _device_index(d):
    """An index from an int, a device or a device string ('cuda' means the current one)."""
    if isinstance(d, int):
        return d
    d = _device.device(d)
    if d.type == "cpu":
        raise ValueError(f"Expected a non cpu device, but got: {d}")
    return _device.current_index(d.type) if d.index is None else d.index


def _check_home(module, src):
    for t in chain(module.parameters(), module.buffers()):
        if t.device != src:
            raise RuntimeError(f"module must have its parameters and buffers on device {src} "
                               f"(device_ids[0]) but found one of them on device: {t.device}")


def _put(t, where):
    """``t``'s values placed by ``where`` (a jax device or sharding), recorded for autograd:
    the gradient goes back to ``t``'s own placement (NOTE [ DataParallel ])."""
    arr = t._value()
    if isinstance(arr, jax.core.Tracer):   # one program: a constraint on its partitioning
        if isinstance(where, NamedSharding) and _trace_context.active:
            _trace_context.active[-1].mesh = where.mesh
            arr = jax.lax.with_sharding_constraint(arr, where)
        out = Tensor._wrap(arr)   # (to the step's device: the program puts its outputs there)
        source = _trace_context.device_of(t)
    else:
        out = Tensor._wrap(jax.device_put(arr, where))
        source = arr.sharding
    if _grad_state.grad_enabled and t.requires_grad:
        out._grad_fn = graph.ToCopyBackward0(t._edge(), source, _put)
    return out


def _each(obj, fn):
    """``obj`` with ``fn`` applied to every tensor in it (nested lists, tuples, named tuples
    and dicts; anything else as it is)."""
    if isinstance(obj, Tensor):
        return fn(obj)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(_each(v, fn) for v in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_each(v, fn) for v in obj)
    if isinstance(obj, dict):
        return type(obj)((k, _each(v, fn)) for k, v in obj.items())
    return obj


def _batch_size(obj, dim):
    if isinstance(obj, Tensor):
        return obj.shape[dim] if obj.ndim > dim else None
    items = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, (list, tuple)) \
        else ()
    return next((n for n in (_batch_size(v, dim) for v in items) if n is not None), None)


def _run_sharded(module, inputs, kwargs, device_ids, output_device, dim):
    """``module`` on ``inputs`` sharded along ``dim`` over ``device_ids``, parameters and
    buffers replicated; the outputs on ``output_device`` (NOTE [ DataParallel ])."""
    n = _batch_size((inputs, kwargs), dim)
    k = max(d for d in range(1, len(device_ids) + 1) if n is None or n % d == 0)
    jax_devices = [_device.to_jax_device(_device.device("cuda", i)) for i in device_ids[:k]]
    home = _device.to_jax_device(device_of(output_device))
    if k == 1:
        def there(t):
            return _put(t, jax_devices[0])
        return _each(module(*_each(inputs, there), **_each(kwargs, there)),
                     lambda t: _put(t, home))
    mesh = Mesh(np.array(jax_devices), (_AXIS,))
    everywhere = NamedSharding(mesh, PartitionSpec())
    along = NamedSharding(mesh, PartitionSpec(*[None] * dim, _AXIS))

    def split(t):
        return _put(t, along)
    state = {**dict(module.named_parameters()), **dict(module.named_buffers())}
    replicated = {name: _put(t.detach() if not _grad_state.grad_enabled else t, everywhere)
                  for name, t in state.items()}
    before = {name: t._arr for name, t in replicated.items()}
    out = _functional_call(module, replicated, _each(inputs, split), _each(kwargs, split))
    with no_grad():   # a buffer the forward wrote (running statistics) keeps the write
        for name, buffer in module.named_buffers():
            if replicated[name]._arr is not before[name]:
                value = replicated[name]
                buffer.copy_(value if isinstance(value._value(), jax.core.Tracer)
                             else _put(value, buffer._value().sharding))
    return _each(out, lambda t: _put(t, home))


class DataParallel(Module):
    """Mirrors ``torch.nn.DataParallel`` (NOTE [ DataParallel ]): ``module`` applied to the
    batch sharded along ``dim`` across ``device_ids`` (default: every accelerator device), the
    results on ``output_device`` (default: ``device_ids[0]``).

    Args:
        module: the module to run; its parameters and buffers live on ``device_ids[0]``.
        device_ids: accelerator device indices or devices (default: all).
        output_device: where the outputs go (default: ``device_ids[0]``).
        dim: the batch dimension of the inputs.

    Example::

        net = torchlike.nn.DataParallel(model.to("cuda"))
        out = net(x)          # x's batch split over every cuda device; out on cuda:0
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if not _device.devices_of("cuda"):
            self.module = module
            self.device_ids = []
            return
        if device_ids is None:
            device_ids = _all_device_indices()
        if output_device is None:
            output_device = device_ids[0]
        self.dim = dim
        self.module = module
        self.device_ids = [_device_index(d) for d in device_ids]
        self.output_device = _device_index(output_device)
        self.src_device_obj = _device.device("cuda", self.device_ids[0])
        if len(self.device_ids) == 1:
            self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        _check_home(self.module, self.src_device_obj)
        return _run_sharded(self.module, inputs, kwargs, self.device_ids, self.output_device,
                            self.dim)

    # PyTorch's pieces of the replica path, kept as its surface (a subclass may call them);
    # forward runs the sharded path (NOTE [ DataParallel ])
    def replicate(self, module, device_ids):
        return replicate(module, device_ids, not _grad_state.grad_enabled)

    def scatter(self, inputs, kwargs, device_ids):
        return scatter_kwargs(inputs, kwargs, device_ids, dim=self.dim)

    def parallel_apply(self, replicas, inputs, kwargs):
        return parallel_apply(replicas, inputs, kwargs, self.device_ids[:len(replicas)])

    def gather(self, outputs, output_device):
        return gather(outputs, output_device, dim=self.dim)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """Mirrors ``torch.nn.parallel.data_parallel``: DataParallel's forward as a function.

    Args:
        module: the module, with its parameters and buffers on ``device_ids[0]``.
        inputs: one tensor or a tuple of the module's positional inputs.
        device_ids, output_device, dim: as DataParallel's.
        module_kwargs: the module's keyword inputs.

    Returns:
        The module's outputs, on ``output_device``.
    """
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    if not _device.devices_of("cuda"):
        raise RuntimeError("device type could not be determined")
    if device_ids is None:
        device_ids = _all_device_indices()
    if output_device is None:
        output_device = device_ids[0]
    device_ids = [_device_index(d) for d in device_ids]
    _check_home(module, _device.device("cuda", device_ids[0]))
    return _run_sharded(module, inputs, module_kwargs or {}, device_ids,
                        _device_index(output_device), dim)
