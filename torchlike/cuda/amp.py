"""``torch.cuda.amp``: ``autocast``, ``GradScaler``, ``custom_fwd`` and ``custom_bwd`` with the
device fixed to ``"cuda"`` (deprecated in PyTorch in favour of ``torch.amp``, still common)."""

import warnings

from .. import _dtype as D
from ..amp import _aliases, autocast_mode

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]


class autocast(_aliases.DeviceAutocast):
    """Mirrors ``torch.cuda.amp.autocast``: ``torch.autocast("cuda", ...)``."""

    _device, _dtype = "cuda", D.float16


class GradScaler(_aliases.DeviceGradScaler):
    """Mirrors ``torch.cuda.amp.GradScaler``: ``torch.amp.GradScaler("cuda", ...)``."""

    _device = "cuda"


def custom_fwd(fwd=None, *, cast_inputs=None):
    """Mirrors ``torch.cuda.amp.custom_fwd``: ``torch.amp.custom_fwd(device_type="cuda")``."""
    warnings.warn("`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_fwd(args..., device_type='cuda')` instead.", FutureWarning,
                  stacklevel=2)
    return autocast_mode.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd=None):
    """Mirrors ``torch.cuda.amp.custom_bwd``: ``torch.amp.custom_bwd(device_type="cuda")``."""
    warnings.warn("`torch.cuda.amp.custom_bwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_bwd(args..., device_type='cuda')` instead.", FutureWarning,
                  stacklevel=2)
    return autocast_mode.custom_bwd(bwd, device_type="cuda")
