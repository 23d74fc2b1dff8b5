"""The deprecated ``torch.<device>.amp`` classes: ``torch.amp``'s with the device fixed.

``torchlike.cpu.amp`` and ``torchlike.cuda.amp`` subclass these and name their device and default
dtype; constructing one warns as PyTorch does (FutureWarning, pointing at ``torch.amp``).
"""
import warnings

from . import autocast_mode, grad_scaler


def _deprecated(device, name):
    warnings.warn(f"`torch.{device}.amp.{name}(args...)` is deprecated. Please use "
                  f"`torch.amp.{name}('{device}', args...)` instead.", FutureWarning,
                  stacklevel=3)


class DeviceAutocast(autocast_mode.autocast):
    """``torch.autocast(device, ...)`` for the subclass's ``device`` and default ``dtype``."""

    _device = _dtype = None

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        _deprecated(self._device, "autocast")
        super().__init__(self._device, enabled=enabled,
                         dtype=self._dtype if dtype is None else dtype,
                         cache_enabled=cache_enabled)


class DeviceGradScaler(grad_scaler.GradScaler):
    """``torch.amp.GradScaler(device, ...)`` for the subclass's ``device``."""

    _device = None

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        _deprecated(self._device, "GradScaler")
        super().__init__(self._device, init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)
