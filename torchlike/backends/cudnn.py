"""Mirrors ``torch.backends.cudnn``: XLA runs its GPU convolutions through cuDNN.

``allow_tf32`` and ``conv.fp32_precision`` set the precision of float32 convolutions and
recurrent layers on cuda devices (NOTE [ matmul precision ] in _precision.py); ``deterministic``
is ``torch.use_deterministic_algorithms``'s companion (NOTE [ deterministic algorithms ] in
_settings.py); ``enabled``, ``benchmark`` (XLA autotunes its convolutions anyway),
``benchmark_limit`` and ``depthwise_kernel`` are kept and read back.
"""
import contextlib
import importlib
import sys

from .. import _precision, _settings
from ._switches import FP32Precision, module_with_switches, switch, unfrozen

__all__ = ["flags", "is_acceptable", "is_available", "set_flags", "version"]

_flags = {"enabled": True, "benchmark": False, "deterministic": False, "benchmark_limit": 10,
          "depthwise_kernel": "auto"}


def _real_gpus():
    from .._device import devices_of
    return [d for d in devices_of("cuda") if d.platform != "cpu"]


def is_available():
    """Mirrors ``torch.backends.cudnn.is_available``: whether a real GPU runs (XLA's GPU backend
    always has cuDNN; CPU devices presented as GPUs do not)."""
    return bool(_real_gpus())


def version():
    """Mirrors ``torch.backends.cudnn.version``: the cuDNN version jax's CUDA plugin loaded
    (e.g. 90100), None without a GPU."""
    if not is_available():
        return None
    for plugin in ("jax_cuda13_plugin", "jax_cuda12_plugin"):
        try:
            return importlib.import_module(f"{plugin}._versions").cudnn_get_version()
        except ImportError:
            continue
    return None


def is_acceptable(tensor):
    """Mirrors ``torch.backends.cudnn.is_acceptable``: cuDNN on, a cuda tensor of a dtype it
    takes, and cuDNN present."""
    from .. import _dtype as D
    return (_flags["enabled"] and tensor.device.type == "cuda"
            and tensor.dtype in (D.float16, D.float32, D.float64) and is_available())


def _set_deterministic(value):
    _flags["deterministic"] = bool(value)
    if value:
        _settings.gpu_determinism_warning()


def set_flags(_enabled=None, _benchmark=None, _benchmark_limit=None, _deterministic=None,
              _allow_tf32=None, _fp32_precision="none", _depthwise_kernel=None):
    """Mirrors ``torch.backends.cudnn.set_flags``: set the given switches; returns the old
    ones in this order."""
    old = (_flags["enabled"], _flags["benchmark"],
           _flags["benchmark_limit"] if is_available() else None, _flags["deterministic"],
           _precision.allow_tf32_cudnn(), _precision.fp32_precision("cuda", "all"),
           _flags["depthwise_kernel"])
    if _enabled is not None:
        _flags["enabled"] = bool(_enabled)
    if _benchmark is not None:
        _flags["benchmark"] = bool(_benchmark)
    if _benchmark_limit is not None and is_available():
        _flags["benchmark_limit"] = int(_benchmark_limit)
    if _deterministic is not None:
        _set_deterministic(_deterministic)
    if _allow_tf32 is not None:
        _precision.set_allow_tf32_cudnn(_allow_tf32)
    if _fp32_precision is not None:
        _precision.set_fp32_precision("cuda", "all", _fp32_precision)
    if _depthwise_kernel is not None:
        _flags["depthwise_kernel"] = _depthwise_kernel
    return old


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False,
          allow_tf32=True, fp32_precision="none", depthwise_kernel="auto"):
    """Mirrors ``torch.backends.cudnn.flags``: the switches set in the block (PyTorch's defaults,
    ``enabled=False`` among them)."""
    with unfrozen():
        old = set_flags(enabled, benchmark, benchmark_limit, deterministic, allow_tf32,
                        fp32_precision, depthwise_kernel)
    try:
        yield
    finally:
        with unfrozen():
            set_flags(*old)


def _flag(name, convert=bool):
    def set_(value):
        _flags[name] = convert(value)
    return switch(lambda: _flags[name], set_)


conv = FP32Precision("cuda", "conv")
module_with_switches(
    sys.modules[__name__],
    enabled=_flag("enabled"), benchmark=_flag("benchmark"),
    deterministic=switch(lambda: _flags["deterministic"], _set_deterministic),
    benchmark_limit=switch(lambda: _flags["benchmark_limit"] if is_available() else None,
                           lambda v: _flags.__setitem__("benchmark_limit", int(v))),
    depthwise_kernel=_flag("depthwise_kernel", str),
    allow_tf32=switch(_precision.allow_tf32_cudnn, _precision.set_allow_tf32_cudnn),
    fp32_precision=switch(lambda: _precision.fp32_precision("cuda", "all"),
                          lambda v: _precision.set_fp32_precision("cuda", "all", v)))
