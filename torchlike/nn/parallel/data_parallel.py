"""Mirrors ``torch.nn.parallel.data_parallel``: DataParallel and data_parallel.

NOTE [ DataParallel ]
As PyTorch's: without an accelerator DataParallel is a wrapper that calls its module
(``device_ids`` is empty); on the accelerator's devices (torchlike's ``cuda`` devices: GPUs,
or CPU devices presented as GPUs, NOTE [ devices ] in _device.py) each forward splits the batch
along ``dim`` (scatter), runs the module on each part on its own device (replicate,
parallel_apply) and concatenates the results on ``output_device`` (gather).  With one device
the module is moved there once and called on the moved inputs.  The replicas are the module
called with its tensors moved to each device (replicate.py), so gradients flow back to the
module's own parameters, summed over the devices.  TPUs are not ``cuda`` devices here, as
they are not for PyTorch's DataParallel: there it calls its module.
"""
from itertools import chain

from ... import _device
from ..modules.module import Module
from .parallel_apply import parallel_apply
from .replicate import replicate
from .scatter_gather import device_of, gather, scatter_kwargs

__all__ = ["DataParallel", "data_parallel"]


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


class DataParallel(Module):
    """Mirrors ``torch.nn.DataParallel`` (NOTE [ DataParallel ]): ``module`` applied to the
    batch split along ``dim`` across ``device_ids`` (default: every accelerator device), the
    results gathered on ``output_device`` (default: ``device_ids[0]``).

    Example::

        net = torchlike.nn.DataParallel(model)   # no accelerator: calls model
        out = net(x)
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
        for t in chain(self.module.parameters(), self.module.buffers()):
            if t.device != self.src_device_obj:
                raise RuntimeError(f"module must have its parameters and buffers on device "
                                   f"{self.src_device_obj} (device_ids[0]) but found one of "
                                   f"them on device: {t.device}")
        inputs, module_kwargs = self.scatter(inputs, kwargs, self.device_ids)
        if not inputs and not module_kwargs:
            inputs, module_kwargs = ((),), ({},)
        if len(self.device_ids) == 1:
            return self.module(*inputs[0], **module_kwargs[0])
        replicas = self.replicate(self.module, self.device_ids[:len(inputs)])
        outputs = self.parallel_apply(replicas, inputs, module_kwargs)
        return self.gather(outputs, self.output_device)

    def replicate(self, module, device_ids):
        from ...autograd.grad_mode import is_grad_enabled
        return replicate(module, device_ids, not is_grad_enabled())

    def scatter(self, inputs, kwargs, device_ids):
        return scatter_kwargs(inputs, kwargs, device_ids, dim=self.dim)

    def parallel_apply(self, replicas, inputs, kwargs):
        return parallel_apply(replicas, inputs, kwargs, self.device_ids[:len(replicas)])

    def gather(self, outputs, output_device):
        return gather(outputs, output_device, dim=self.dim)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """Mirrors ``torch.nn.parallel.data_parallel``: DataParallel's forward as a function."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    if not _device.devices_of("cuda"):
        raise RuntimeError("device type could not be determined")
    if device_ids is None:
        device_ids = _all_device_indices()
    if output_device is None:
        output_device = device_ids[0]
    device_ids = [_device_index(d) for d in device_ids]
    output_device = _device_index(output_device)
    src = _device.device("cuda", device_ids[0])
    for t in chain(module.parameters(), module.buffers()):
        if t.device != src:
            raise RuntimeError(f"module must have its parameters and buffers on device {src} "
                               f"(device_ids[0]) but found one of them on device: {t.device}")
    inputs, module_kwargs = scatter_kwargs(inputs, module_kwargs, device_ids, dim)
    if not inputs and not module_kwargs:
        inputs, module_kwargs = ((),), ({},)
    if len(device_ids) == 1:
        return module(*inputs[0], **module_kwargs[0])
    used = device_ids[:len(inputs)]
    outputs = parallel_apply(replicate(module, used), inputs, module_kwargs, used)
    return gather(outputs, device_of(output_device), dim)
