"""Mirrors ``torch.nn.parallel.distributed``: DistributedDataParallel.

NOTE [ DistributedDataParallel ]
Each process holds a replica of the module and feeds it its own share of the batch.  At
construction the parameters and buffers are broadcast from rank 0 (``init_sync``); before each
forward the buffers are broadcast again (``broadcast_buffers``).  During backward a hook on each
parameter (``register_post_accumulate_grad_hook``) counts the gradients that are ready; when the
last one is, the gradients are averaged across the group in buckets: each bucket (parameters of
one dtype, in reverse registration order as PyTorch fills them, up to ``bucket_cap_mb``) is
flattened into one array, all-reduced as one collective (``torchlike.distributed``) and split
back into each ``.grad``.  ``no_sync()`` skips the reduction, so gradients accumulate locally
until a backward outside it.  With ``find_unused_parameters=True`` the forward walks the graph
from its outputs and counts the parameters it does not reach as ready (their gradient takes part
as zeros, as in PyTorch); without it a parameter that got no gradient leaves the reduction
unfinished, and the next forward raises PyTorch's error.  ``register_comm_hook`` replaces the
all-reduce of a bucket (the default and fp16/bf16-compress hooks are in
``torchlike.distributed.algorithms.ddp_comm_hooks.default_hooks``).
"""
import contextlib

from ... import distributed as dist
from ..._ops.shape import cat
from ...autograd.grad_mode import no_grad
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]


class _Bucket:
    """Mirrors ``torch.distributed.GradBucket``: what a comm hook gets for one bucket."""

    def __init__(self, index, params, buffer, last):
        self._index = index
        self._params = params
        self._buffer = buffer
        self._last = last

    def index(self):
        return self._index

    def buffer(self):
        return self._buffer

    def set_buffer(self, tensor):
        self._buffer = tensor

    def parameters(self):
        return list(self._params)

    def gradients(self):
        return [p.grad for p in self._params]

    def is_last(self):
        return self._last


class _Future:
    """Mirrors the completed ``torch.futures.Future`` a comm hook returns (torchlike's
    collectives have returned by the time a hook's value is read)."""

    def __init__(self, value):
        self._value = value

    def wait(self):
        return self._value

    def value(self):
        return self._value

    def then(self, callback):
        return _Future(callback(self))


class DistributedDataParallel(Module):
    """Mirrors ``torch.nn.parallel.DistributedDataParallel`` (NOTE [ DistributedDataParallel ]):
    ``module``'s gradients averaged across the processes of ``process_group`` (the default group
    when None) after each backward."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, init_sync=True, process_group=None,
                 bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, **kwargs):
        super().__init__()
        group = process_group if process_group is not None else dist.group.WORLD
        if group is None:
            raise ValueError("Default process group has not been initialized, please make sure "
                             "to call init_process_group.")
        if not any(p.requires_grad for p in module.parameters()):
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have "
                               "any parameter that requires a gradient.")
        self.module = module
        self.process_group = group
        self.device_ids = device_ids
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 ** 2)
        self.require_backward_grad_sync = True
        self._params = [p for p in module.parameters() if p.requires_grad]
        self._buckets = self._make_buckets()
        self._ready = set()
        self._pending = False      # a backward's reduction has started but not finished
        self._comm_hook = None
        self._hook_state = None
        if init_sync:
            self._broadcast([p for p in module.parameters()] + list(module.buffers()))
        for p in self._params:
            p.register_post_accumulate_grad_hook(self._grad_ready)

    def _make_buckets(self):
        """Parameters in reverse order (the order backward makes their gradients), grouped by
        dtype into buckets of at most ``bucket_bytes_cap`` bytes."""
        buckets, current = [], {}
        for p in reversed(self._params):
            size = p.numel() * p.element_size()
            bucket = current.get(p.dtype)
            if bucket is None or (bucket[1] + size > self.bucket_bytes_cap and bucket[0]):
                bucket = current[p.dtype] = [[], 0]
                buckets.append(bucket[0])
            bucket[0].append(p)
            bucket[1] += size
        return buckets

    def _broadcast(self, tensors):
        """Rank 0's values into ``tensors``: one broadcast per dtype, of them all flattened."""
        src = dist.get_global_rank(self.process_group, 0)
        by_dtype = {}
        for t in tensors:
            by_dtype.setdefault(t.dtype, []).append(t)
        with no_grad():
            for same in by_dtype.values():
                flat = cat([t.reshape(-1) for t in same])
                dist.broadcast(flat, src=src, group=self.process_group)
                _unflatten(flat, same, lambda t, piece: t.copy_(piece))

    @contextlib.contextmanager
    def no_sync(self):
        """Mirrors ``DistributedDataParallel.no_sync``: backward passes inside accumulate
        gradients locally; the first backward after it averages them."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous

    def forward(self, *inputs, **kwargs):
        if self._pending and self.require_backward_grad_sync:
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a "
                "new one. This error indicates that your module has parameters that were not "
                "used in producing loss. You can enable unused parameter detection by passing "
                "the keyword argument `find_unused_parameters=True` to "
                "`torch.nn.parallel.DistributedDataParallel`, and by making sure all `forward` "
                "function outputs participate in calculating loss.")
        if self.broadcast_buffers:
            buffers = list(self.module.buffers())
            if buffers:
                self._broadcast(buffers)
        out = self.module(*inputs, **kwargs)
        self._ready = set()
        if self.require_backward_grad_sync and self.find_unused_parameters:
            used = _reached(out)
            self._ready = {id(p) for p in self._params if id(p) not in used}
        return out

    def _grad_ready(self, param):
        if not self.require_backward_grad_sync:
            return
        self._pending = True
        self._ready.add(id(param))
        if len(self._ready) == len(self._params):
            self._reduce()

    def _reduce(self):
        with no_grad():
            for i, params in enumerate(self._buckets):
                flat = cat([(p.grad if p.grad is not None else p.new_zeros(p.shape)).reshape(-1)
                            for p in params])
                bucket = _Bucket(i, params, flat, i == len(self._buckets) - 1)
                if self._comm_hook is None:
                    dist.all_reduce(flat, group=self.process_group)
                    buffer = flat.div_(self.process_group.size())
                else:
                    buffer = self._comm_hook(self._hook_state, bucket).wait()
                _unflatten(buffer, params, _set_grad)
        self._pending = False
        self._ready = set()

    def register_comm_hook(self, state, hook):
        """Mirrors ``DistributedDataParallel.register_comm_hook``: ``hook(state, bucket)``
        returns a future of the bucket's reduced, averaged buffer."""
        if self._comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be "
                               "called once.")
        self._comm_hook = hook
        self._hook_state = state

    def _get_ddp_logging_data(self):
        return {"world_size": self.process_group.size(), "bucket_cap_bytes": self.bucket_bytes_cap,
                "find_unused_parameters": self.find_unused_parameters}


def _unflatten(flat, tensors, store):
    """``store(t, piece)`` for each of ``tensors`` and its piece of ``flat``, in order."""
    pieces = flat.split([t.numel() for t in tensors])
    for t, piece in zip(tensors, pieces):
        store(t, piece.view(t.shape))


def _set_grad(p, averaged):
    if p.grad is None:
        p.grad = averaged.clone()
    else:
        p.grad.copy_(averaged)


def _reached(out):
    """ids of the leaf tensors the autograd graph of ``out`` (tensors in any nesting of tuples,
    lists and dicts) reaches."""
    from ..._tensor import Tensor
    stack, seen, leaves = [], set(), set()

    def collect(x):
        if isinstance(x, Tensor):
            if x.grad_fn is not None:
                stack.append(x.grad_fn)
            elif x.requires_grad:
                leaves.add(id(x))
        elif isinstance(x, (list, tuple)):
            for v in x:
                collect(v)
        elif isinstance(x, dict):
            for v in x.values():
                collect(v)
    collect(out)
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        var = getattr(node, "variable", None)
        if var is not None:
            leaves.add(id(var))
        for nxt, _ in node.next_functions:
            if nxt is not None:
                stack.append(nxt)
    return leaves

