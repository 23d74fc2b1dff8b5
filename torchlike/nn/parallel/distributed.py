"""Mirrors ``torch.nn.parallel.distributed``: DistributedDataParallel, which needs a process
group (``torch.distributed.init_process_group``) before it can wrap a module."""
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
    """Mirrors ``torch.nn.parallel.DistributedDataParallel``'s constructor as it behaves
    without a process group: torchlike has no ``torch.distributed`` yet, so no default group
    can exist and every construction raises PyTorch's ValueError for that case."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, init_sync=True, process_group=None,
                 bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, **kwargs):
        super().__init__()
        raise ValueError("Default process group has not been initialized, please make sure to "
                         "call init_process_group.")
