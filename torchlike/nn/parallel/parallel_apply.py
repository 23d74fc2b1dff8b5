"""Mirrors ``torch.nn.parallel.parallel_apply``."""
from ... import _device
from .scatter_gather import device_of

__all__ = ["parallel_apply"]


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None):
    """Mirrors ``torch.nn.parallel.parallel_apply``: ``modules[i](*inputs[i], **kwargs[i])``
    for each i, with ``devices[i]`` as the current device of its type (what ``"cuda"`` without
    an index means, as ``torch.cuda.device(i)`` sets it), results in order.  The calls are
    issued one after another from this thread: each device runs its work asynchronously (as
    jax dispatches it), so the devices compute at the same time, as PyTorch's threads make
    them.  An exception from a replica is raised as it is."""
    if len(modules) != len(inputs):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the "
                             f"number of inputs {len(inputs)}")
    kwargs_tup = kwargs_tup if kwargs_tup is not None else ({},) * len(modules)
    devices = devices if devices is not None else [None] * len(modules)
    outputs = []
    for module, args, kwargs, d in zip(modules, inputs, kwargs_tup, devices):
        args = args if isinstance(args, (list, tuple)) else (args,)
        d = None if d is None else device_of(d)
        if d is None or d.index is None:
            outputs.append(module(*args, **kwargs))
            continue
        previous = _device.current_index(d.type)
        _device.set_current_index(d.type, d.index)
        try:
            outputs.append(module(*args, **kwargs))
        finally:
            _device.set_current_index(d.type, previous)
    return outputs
