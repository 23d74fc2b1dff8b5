"""Mirrors ``torch.backends.mkldnn``: PyTorch's oneDNN CPU kernels, which torchlike does not
use (XLA compiles its own), so ``is_available()`` is False and the switches (``enabled``,
``deterministic``, ``allow_tf32``, the ``fp32_precision`` settings) are kept and read back:
XLA's CPU backend computes float32 in float32 whatever they say."""
import contextlib
import sys

from .. import _precision
from ._switches import FP32Precision, module_with_switches, switch, unfrozen

__all__ = ["flags", "is_acl_available", "is_available", "set_flags"]

_flags = {"enabled": True, "deterministic": False, "allow_tf32": False}


def is_available():
    """Mirrors ``torch.backends.mkldnn.is_available``: False, torchlike has no oneDNN."""
    return False


def is_acl_available():
    """Mirrors ``torch.backends.mkldnn.is_acl_available``."""
    return False


def set_flags(_enabled=None, _deterministic=None, _allow_tf32=None, _fp32_precision="none"):
    """Mirrors ``torch.backends.mkldnn.set_flags``; returns the old switches."""
    old = (_flags["enabled"], _flags["deterministic"], _flags["allow_tf32"],
           _precision.fp32_precision("mkldnn", "all"))
    for name, value in (("enabled", _enabled), ("deterministic", _deterministic),
                        ("allow_tf32", _allow_tf32)):
        if value is not None:
            _flags[name] = bool(value)
    if _fp32_precision is not None:
        _precision.set_fp32_precision("mkldnn", "all", _fp32_precision)
    return old


@contextlib.contextmanager
def flags(enabled=False, deterministic=False, allow_tf32=True, fp32_precision="none"):
    """Mirrors ``torch.backends.mkldnn.flags``: the switches set in the block."""
    with unfrozen():
        old = set_flags(enabled, deterministic, allow_tf32, fp32_precision)
    try:
        yield
    finally:
        with unfrozen():
            set_flags(*old)


def _flag(name):
    return switch(lambda: _flags[name], lambda v: _flags.__setitem__(name, bool(v)))


matmul = FP32Precision("mkldnn", "matmul")
conv = FP32Precision("mkldnn", "conv")
rnn = FP32Precision("mkldnn", "rnn")
module_with_switches(
    sys.modules[__name__], enabled=_flag("enabled"), deterministic=_flag("deterministic"),
    allow_tf32=_flag("allow_tf32"),
    fp32_precision=switch(lambda: _precision.fp32_precision("mkldnn", "all"),
                          lambda v: _precision.set_fp32_precision("generic", "all", v)))
