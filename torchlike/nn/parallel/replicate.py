"""Mirrors ``torch.nn.parallel.replicate``: a module's replicas on other devices."""
from ..modules.module import Module
from ..utils.stateless import _functional_call
from .scatter_gather import device_of

__all__ = ["replicate"]


class _Replica(Module):
    """``module`` run with its parameters and buffers moved to one device: the moves are
    recorded ops, so gradients reach the original parameters, as through PyTorch's replicas.
    (Writes a forward makes to its buffers land on the moved copies and are lost, as on
    PyTorch's replicas past the first.)"""

    def __init__(self, module, tensors):
        super().__init__()
        object.__setattr__(self, "_replicated", module)   # not a submodule: no double listing
        self._tensors = tensors

    def forward(self, *args, **kwargs):
        return _functional_call(self._replicated, self._tensors, args, kwargs)


def replicate(network, devices, detach=False):
    """Mirrors ``torch.nn.parallel.replicate``: one replica of ``network`` per device; the
    first device's replica is ``network`` itself when its tensors already live there (the
    replica PyTorch makes there shares their storage)."""
    replicas = []
    state = {**dict(network.named_parameters()), **dict(network.named_buffers())}
    for d in devices:
        d = device_of(d)
        if all(t.device == d for t in state.values()):
            replicas.append(network)
            continue
        moved = {k: (t.detach() if detach else t).to(d) for k, t in state.items()}
        replicas.append(_Replica(network, moved))
    return replicas
