"""Mirrors ``torch.nn.parallel.scatter_gather``: split a batch across devices, and bring the
per-device results back to one device.  Both are differentiable (a chunk, a move and a cat
are recorded ops), as PyTorch's Scatter and Gather functions are."""
import warnings

from ... import _device
from ..._tensor import Tensor

__all__ = ["gather", "scatter", "scatter_kwargs"]


def _is_namedtuple(obj):
    return isinstance(obj, tuple) and hasattr(obj, "_asdict") and hasattr(obj, "_fields")


def device_of(d):
    """A torch.device for a DataParallel device id (an int is the accelerator's, -1 the CPU)."""
    if isinstance(d, int):
        return _device.device("cpu") if d == -1 else _device.device("cuda", d)
    return _device.device(d)


def scatter(inputs, target_gpus, dim=0):
    """Mirrors ``torch.nn.parallel.scatter``: each tensor chunked along ``dim`` (as
    ``Tensor.chunk``), chunk i moved to ``target_gpus[i]``; lists, tuples, dicts and named
    tuples are scattered item by item, other objects repeated for each device."""
    devices = [device_of(d) for d in target_gpus]

    def scatter_map(obj):
        if isinstance(obj, Tensor):
            return [c.to(d) for c, d in zip(obj.chunk(len(devices), dim), devices)]
        if _is_namedtuple(obj):
            return [type(obj)(*args) for args in zip(*map(scatter_map, obj))]
        if isinstance(obj, tuple) and obj:
            return list(zip(*map(scatter_map, obj)))
        if isinstance(obj, list) and obj:
            return [list(i) for i in zip(*map(scatter_map, obj))]
        if isinstance(obj, dict) and obj:
            return [type(obj)(i) for i in zip(*map(scatter_map, obj.items()))]
        return [obj for _ in devices]

    return scatter_map(inputs)


def scatter_kwargs(inputs, kwargs, target_gpus, dim=0):
    """Mirrors ``torch.nn.parallel.scatter_kwargs``: (per-device args, per-device kwargs), the
    shorter padded with empty ones."""
    scattered_inputs = scatter(inputs, target_gpus, dim) if inputs else []
    scattered_kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(scattered_inputs) < len(scattered_kwargs):
        scattered_inputs.extend(() for _ in range(len(scattered_kwargs) - len(scattered_inputs)))
    elif len(scattered_kwargs) < len(inputs):
        scattered_kwargs.extend({} for _ in range(len(scattered_inputs) - len(scattered_kwargs)))
    return tuple(scattered_inputs), tuple(scattered_kwargs)


def _gather_tensors(target, dim, tensors):
    if all(t.ndim == 0 for t in tensors):
        warnings.warn("Was asked to gather along dimension 0, but all input tensors were "
                      "scalars; will instead unsqueeze and return a vector.", stacklevel=2)
        tensors = [t.unsqueeze(0) for t in tensors]
        dim = 0
    from ..._ops.shape import cat
    return cat([t.to(target) for t in tensors], dim)


def gather(outputs, target_device, dim=0):
    """Mirrors ``torch.nn.parallel.gather``: the per-device ``outputs`` moved to
    ``target_device`` and concatenated along ``dim`` (structures gathered item by item)."""
    target = device_of(target_device)

    def gather_map(outputs):
        out = outputs[0]
        if isinstance(out, Tensor):
            return _gather_tensors(target, dim, outputs)
        if out is None:
            return None
        if isinstance(out, dict):
            if not all(len(out) == len(d) for d in outputs):
                raise ValueError("All dicts must have the same number of keys")
            return type(out)((k, gather_map([d[k] for d in outputs])) for k in out)
        if _is_namedtuple(out):
            return type(out)._make(map(gather_map, zip(*outputs)))
        return type(out)(map(gather_map, zip(*outputs)))

    return gather_map(outputs)
