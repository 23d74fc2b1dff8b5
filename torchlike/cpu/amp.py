"""``torch.cpu.amp``: ``autocast`` and ``GradScaler`` with the device fixed to ``"cpu"``."""

from .. import _dtype as D
from ..amp import _aliases

__all__ = ["autocast", "GradScaler"]


class autocast(_aliases.DeviceAutocast):
    """Mirrors ``torch.cpu.amp.autocast``: ``torch.autocast("cpu", ...)``."""

    _device, _dtype = "cpu", D.bfloat16


class GradScaler(_aliases.DeviceGradScaler):
    """Mirrors ``torch.cpu.amp.GradScaler``: ``torch.amp.GradScaler("cpu", ...)``."""

    _device = "cpu"
