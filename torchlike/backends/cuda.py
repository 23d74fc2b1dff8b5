"""Mirrors ``torch.backends.cuda``: cuBLAS's switches (``matmul.allow_tf32`` ...) and the
scaled-dot-product-attention backends."""
import contextlib
import importlib.util
import warnings

from .. import _precision

__all__ = ["allow_fp16_bf16_reduction_math_sdp", "cudnn_sdp_enabled", "enable_cudnn_sdp",
           "enable_flash_sdp", "enable_math_sdp", "enable_mem_efficient_sdp",
           "flash_sdp_enabled", "fp16_bf16_reduction_math_sdp_allowed",
           "is_built", "is_flash_attention_available", "math_sdp_enabled", "matmul",
           "mem_efficient_sdp_enabled", "sdp_kernel"]


def is_built():
    """Mirrors ``torch.backends.cuda.is_built``: whether jax has its CUDA plugin installed
    (whether this process could run on an NVIDIA GPU, present or not)."""
    return any(importlib.util.find_spec(p) is not None
               for p in ("jax_cuda13_plugin", "jax_cuda12_plugin"))


def _bool(name, value):
    if not isinstance(value, bool):
        raise TypeError(f"{name} expects a bool, but got {type(value)!r}")
    return value


def _reduction(value, name):
    """PyTorch's parsing of allow_fp16/bf16_reduced_precision_reduction: a bool or a pair of
    bools (allow_reduced_precision, allow_splitk)."""
    if isinstance(value, bool):
        return value, True
    if isinstance(value, (list, tuple)):
        if not value:
            raise TypeError(f"{name} expects at least one boolean argument")
        if len(value) > 2:
            raise TypeError(f"{name} expects at most two boolean arguments")
        first = value[0]
        if not isinstance(first, bool):
            raise TypeError(f"{name} expects a bool for allow_reduced_precision, but got "
                            f"{type(first)!r}")
        if len(value) == 1:
            return first, True
        if not isinstance(value[1], bool):
            raise TypeError(f"{name} expects a bool for allow_splitk, but got {type(value[1])!r}")
        return first, value[1]
    raise TypeError(f"{name} expects a bool or a tuple/list of bools, but got {type(value)!r}")


# (allow_reduced_precision, allow_splitk) per half type, and allow_fp16_accumulation
_cublas = {"fp16": (True, True), "bf16": (True, True), "fp16_accumulation": False}


class cuBLASModule:
    """``torch.backends.cuda.matmul``: ``allow_tf32`` and ``fp32_precision`` set the float32
    matmul precision (NOTE [ matmul precision ]); the reduced-precision-reduction switches are
    kept and read back (XLA accumulates half-precision products in float32)."""

    def __getattr__(self, name):
        if name == "allow_tf32":
            return _precision.allow_tf32_cublas()
        if name == "fp32_precision":
            return _precision.fp32_precision("cuda", "matmul")
        for kind in ("fp16", "bf16"):
            if name == f"allow_{kind}_reduced_precision_reduction":
                return _cublas[kind][0]
            if name == f"allow_{kind}_reduced_precision_reduction_split_k":
                return _cublas[kind][1]
        if name == "allow_fp16_accumulation":
            return _cublas["fp16_accumulation"]
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name, value):
        if name == "allow_tf32":
            return _precision.set_allow_tf32_cublas(value)
        if name == "fp32_precision":
            return _precision.set_fp32_precision("cuda", "matmul", value)
        for kind in ("fp16", "bf16"):
            if name == f"allow_{kind}_reduced_precision_reduction":
                _cublas[kind] = _reduction(value, name)
                return None
        if name == "allow_fp16_accumulation":
            _cublas["fp16_accumulation"] = _bool("allow_fp16_accumulation", value)
            return None
        raise AttributeError("Unknown attribute " + name)


matmul = cuBLASModule()

# --- scaled_dot_product_attention backends (NOTE [ sdpa backends ] in _ops/attention.py) -----

_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True, "overrideable": True,
        "math_fp16_bf16_reduction": False}


def flash_sdp_enabled():
    """Mirrors ``torch.backends.cuda.flash_sdp_enabled``: whether sdpa may take its fused
    kernel."""
    return _sdp["flash"]


def enable_flash_sdp(enabled):
    """Mirrors ``torch.backends.cuda.enable_flash_sdp``."""
    _sdp["flash"] = bool(enabled)


def mem_efficient_sdp_enabled():
    """Mirrors ``torch.backends.cuda.mem_efficient_sdp_enabled``."""
    return _sdp["mem_efficient"]


def enable_mem_efficient_sdp(enabled):
    """Mirrors ``torch.backends.cuda.enable_mem_efficient_sdp`` (a cuda kernel: kept and read
    back)."""
    _sdp["mem_efficient"] = bool(enabled)


def math_sdp_enabled():
    """Mirrors ``torch.backends.cuda.math_sdp_enabled``: whether sdpa may take its math path."""
    return _sdp["math"]


def enable_math_sdp(enabled):
    """Mirrors ``torch.backends.cuda.enable_math_sdp``."""
    _sdp["math"] = bool(enabled)


def cudnn_sdp_enabled():
    """Mirrors ``torch.backends.cuda.cudnn_sdp_enabled``."""
    return _sdp["cudnn"]


def enable_cudnn_sdp(enabled):
    """Mirrors ``torch.backends.cuda.enable_cudnn_sdp`` (a cuda kernel: kept and read back)."""
    _sdp["cudnn"] = bool(enabled)


def fp16_bf16_reduction_math_sdp_allowed():
    """Mirrors ``torch.backends.cuda.fp16_bf16_reduction_math_sdp_allowed``."""
    return _sdp["math_fp16_bf16_reduction"]


def allow_fp16_bf16_reduction_math_sdp(enabled):
    """Mirrors ``torch.backends.cuda.allow_fp16_bf16_reduction_math_sdp`` (kept and read
    back)."""
    _sdp["math_fp16_bf16_reduction"] = bool(enabled)


def is_flash_attention_available():
    """Mirrors ``torch.backends.cuda.is_flash_attention_available``: torchlike has no CUDA
    FlashAttention kernel (its fused path is one XLA program)."""
    return False


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True,
               enable_cudnn=True):
    """Mirrors ``torch.backends.cuda.sdp_kernel`` (deprecated in PyTorch): the sdpa backend
    switches set in the block."""
    warnings.warn("`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context "
                  "manager will be removed. Please see `torch.nn.attention.sdpa_kernel()` for the "
                  "new context manager, with updated signature.", FutureWarning, stacklevel=3)
    before = dict(_sdp)
    _sdp.update(flash=enable_flash, math=enable_math, mem_efficient=enable_mem_efficient,
                cudnn=enable_cudnn)
    try:
        yield
    finally:
        _sdp.update(before)
