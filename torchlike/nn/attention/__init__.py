"""Mirrors ``torch.nn.attention``: which backends ``scaled_dot_product_attention`` may take
(NOTE [ sdpa backends ] in _ops/attention.py).  torchlike has two paths, PyTorch's CPU ones:
the fused kernel (FLASH_ATTENTION) and the math composite (MATH); the other backends' switches
are kept and read back."""
import contextlib
import enum

from ...backends import cuda as _switches

__all__ = ["SDPBackend", "WARN_FOR_UNFUSED_KERNELS", "sdpa_kernel"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.IntEnum):
    """Mirrors ``torch.nn.attention.SDPBackend``: the scaled-dot-product-attention backends."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __str__(self):
        return f"SDPBackend.{self.name}"


_NAMES = {SDPBackend.CUDNN_ATTENTION: "cudnn", SDPBackend.FLASH_ATTENTION: "flash",
          SDPBackend.EFFICIENT_ATTENTION: "mem_efficient", SDPBackend.MATH: "math",
          SDPBackend.OVERRIDEABLE: "overrideable"}


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Mirrors ``torch.nn.attention.sdpa_kernel``: only ``backends`` (one or a list) enabled in
    the block.  ``set_priority`` is accepted; torchlike's choice has no order to set (the fused
    path where it applies and is enabled, else the math path)."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError(f"Backend must be an instance of SDPBackend or a list of SDPBackend "
                             f"instances, got {type(backends).__name__}")
    backends = [backends] if isinstance(backends, SDPBackend) else backends
    before = dict(_switches._sdp)
    for backend, name in _NAMES.items():
        _switches._sdp[name] = backend in backends
    try:
        yield {}
    finally:
        _switches._sdp.update(before)
