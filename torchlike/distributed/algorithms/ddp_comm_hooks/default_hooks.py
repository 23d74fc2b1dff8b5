"""Mirrors ``torch.distributed.algorithms.ddp_comm_hooks.default_hooks``: the communication
hooks ``DistributedDataParallel.register_comm_hook`` takes (NOTE [ DistributedDataParallel ]).
A hook gets ``(state, bucket)`` -- ``state`` is the process group (None: the default group) --
and returns a future of the bucket's gradients averaged across the group."""
from .... import distributed as dist
from ...._dtype import bfloat16, float16
from ....autograd.grad_mode import no_grad
from ....nn.parallel.distributed import _Future

__all__ = ["allreduce_hook", "bf16_compress_hook", "fp16_compress_hook"]


def _size(process_group):
    return dist.get_world_size(process_group)


def allreduce_hook(process_group, bucket):
    """The bucket's flattened gradients, divided by the group's size and all-reduced (what
    DistributedDataParallel does without a hook)."""
    with no_grad():
        buffer = bucket.buffer().div_(_size(process_group))
        dist.all_reduce(buffer, group=process_group)
    return _Future(buffer)


def _compressed(process_group, bucket, dtype):
    with no_grad():
        buffer = bucket.buffer()
        compressed = buffer.to(dtype).div_(_size(process_group))
        dist.all_reduce(compressed, group=process_group)
        buffer.copy_(compressed)
    return _Future(buffer)


def fp16_compress_hook(process_group, bucket):
    """Like ``allreduce_hook``, with the gradients sent as float16 (half the bytes) and
    written back in the bucket's dtype."""
    return _compressed(process_group, bucket, float16)


def bf16_compress_hook(process_group, bucket):
    """Like ``fp16_compress_hook``, in bfloat16."""
    return _compressed(process_group, bucket, bfloat16)
