"""``torch.amp.autocast`` and the thread-local autocast switches (``torch.is_autocast_enabled``,
``get_autocast_dtype``, ``set_autocast_*``), ``custom_fwd`` / ``custom_bwd``.

The policy each region applies is NOTE [ autocast policy ] in ``_policy.py``.
"""
import functools
import warnings

from .. import _dtype as D
from . import _policy

_AVAILABLE = ("cpu", "cuda", "xla")
# PyTorch's device type names: an unknown one is refused with this list, as torch parses them
_DEVICE_TYPES = ("cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, "
                 "lazy, vulkan, mps, meta, hpu, mtia, privateuseone")


def _device_type(device_type):
    if device_type not in _DEVICE_TYPES.split(", "):
        raise RuntimeError(f"Expected one of {_DEVICE_TYPES} device type at start of device "
                           f"string: {device_type}")
    return device_type


def is_autocast_available(device_type):
    """Mirrors ``torch.amp.is_autocast_available``: whether autocast works for ``device_type``
    (``"cpu"``, ``"cuda"`` and ``"xla"`` in torchlike)."""
    return _device_type(device_type) in _AVAILABLE


def is_autocast_enabled(device_type=None):
    """Mirrors ``torch.is_autocast_enabled``: whether an autocast region for ``device_type``
    (default ``"cuda"``, as in PyTorch) is active in this thread."""
    return _policy.STATE.enabled.get(_device_type(device_type or "cuda"), False)


def set_autocast_enabled(device_type, enabled=None):
    """Mirrors ``torch.set_autocast_enabled(device_type, enabled)`` (``set_autocast_enabled(
    enabled)`` alone means ``"cuda"``)."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    _policy.set_enabled(_device_type(device_type), enabled)


def get_autocast_dtype(device_type):
    """Mirrors ``torch.get_autocast_dtype``: the dtype autocast regions of ``device_type`` use
    by default in this thread (bfloat16 on cpu and xla, float16 on cuda)."""
    _device_type(device_type)
    return _policy.STATE.dtype.get(device_type, D.float16)


def set_autocast_dtype(device_type, dtype):
    """Mirrors ``torch.set_autocast_dtype``."""
    _policy.STATE.dtype[_device_type(device_type)] = dtype


def is_autocast_cache_enabled():
    """Mirrors ``torch.is_autocast_cache_enabled``: whether lower-precision casts of weights
    are cached within a region (NOTE [ autocast policy ])."""
    return _policy.STATE.cache_enabled


def set_autocast_cache_enabled(enabled):
    """Mirrors ``torch.set_autocast_cache_enabled``."""
    _policy.STATE.cache_enabled = bool(enabled)


def clear_autocast_cache():
    """Mirrors ``torch.clear_autocast_cache``."""
    _policy.clear_cache()


def autocast_increment_nesting():
    """Mirrors ``torch.autocast_increment_nesting``: returns the new depth."""
    _policy.STATE.nesting += 1
    return _policy.STATE.nesting


def autocast_decrement_nesting():
    """Mirrors ``torch.autocast_decrement_nesting``: returns the new depth."""
    _policy.STATE.nesting -= 1
    return _policy.STATE.nesting


# the device-specific spellings PyTorch keeps (deprecated there, but still in use)
def is_autocast_cpu_enabled():
    """Mirrors ``torch.is_autocast_cpu_enabled``."""
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled):
    """Mirrors ``torch.set_autocast_cpu_enabled``."""
    set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype():
    """Mirrors ``torch.get_autocast_cpu_dtype``."""
    return get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype):
    """Mirrors ``torch.set_autocast_cpu_dtype``."""
    set_autocast_dtype("cpu", dtype)


def get_autocast_gpu_dtype():
    """Mirrors ``torch.get_autocast_gpu_dtype``."""
    return get_autocast_dtype("cuda")


def set_autocast_gpu_dtype(dtype):
    """Mirrors ``torch.set_autocast_gpu_dtype``."""
    set_autocast_dtype("cuda", dtype)


def is_autocast_xla_enabled():
    """Mirrors ``torch.is_autocast_xla_enabled``."""
    return is_autocast_enabled("xla")


def set_autocast_xla_enabled(enabled):
    """Mirrors ``torch.set_autocast_xla_enabled``."""
    set_autocast_enabled("xla", enabled)


def get_autocast_xla_dtype():
    """Mirrors ``torch.get_autocast_xla_dtype``."""
    return get_autocast_dtype("xla")


def set_autocast_xla_dtype(dtype):
    """Mirrors ``torch.set_autocast_xla_dtype``."""
    set_autocast_dtype("xla", dtype)


class autocast:
    """Mirrors ``torch.amp.autocast`` (also ``torch.autocast``): inside the region, ops PyTorch
    lists run in ``dtype`` (matmuls, convolutions, linear), in float32 (losses, reductions,
    linear algebra) or in the widest input dtype (cat, stack), per ``device_type``'s table
    (NOTE [ autocast policy ] in ``torchlike/amp/_policy.py``).  A context manager and a
    decorator; regions nest, and ``enabled=False`` inside one turns it off.

    Args:
        device_type: ``"cpu"``, ``"cuda"`` or ``"xla"``.
        dtype: ``torch.bfloat16`` or ``torch.float16``; default ``get_autocast_dtype(
            device_type)`` (bfloat16 on cpu, float16 on cuda).
        enabled: False makes the region a region without autocast.
        cache_enabled: reuse the lower-precision cast of a float32 weight within the region
            (default ``is_autocast_cache_enabled()``).

    Example::

        >>> with torch.autocast("cpu", dtype=torch.bfloat16):
        ...     y = model(x)            # linear layers run in bfloat16
        ...     loss = F.cross_entropy(y, t)   # in float32
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not is_autocast_available(self.device):
            raise RuntimeError(f"User specified an unsupported autocast device_type "
                               f"'{self.device}'")
        self._cache_enabled = (is_autocast_cache_enabled() if cache_enabled is None
                               else cache_enabled)
        if enabled and self.device == "cuda":
            from .. import cuda
            if not cuda.is_available():
                warnings.warn("CUDA is not available or torch_xla is imported. Disabling "
                              "autocast.", stacklevel=2)
                enabled = False
        elif enabled and self.fast_dtype not in (D.bfloat16, D.float16):
            name = self.device.upper()
            warnings.warn(f"In {name} autocast, but the target dtype is not supported. Disabling "
                          f"autocast.\n{name} Autocast only supports dtypes of torch.bfloat16, "
                          f"torch.float16 currently.", stacklevel=2)
            enabled = False
        self._enabled = enabled

    def __enter__(self):
        self.prev_cache_enabled = is_autocast_cache_enabled()
        self.prev = is_autocast_enabled(self.device)
        self.prev_fastdtype = get_autocast_dtype(self.device)
        set_autocast_enabled(self.device, self._enabled)
        set_autocast_dtype(self.device, self.fast_dtype)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if autocast_decrement_nesting() == 0:   # leaving every region: drop the weight casts
            clear_autocast_cache()
        set_autocast_enabled(self.device, self.prev)
        set_autocast_dtype(self.device, self.prev_fastdtype)
        set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return decorate_autocast


def _cast(value, device_type, dtype):
    """Floating Tensors (not float64) on ``device_type`` inside ``value`` cast to ``dtype``."""
    from .._tensor import Tensor
    if isinstance(value, Tensor):
        ok = (value.is_floating_point() and value.device.type == device_type
              and value.dtype is not D.float64)
        return value.to(dtype) if ok else value
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, dict):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Mirrors ``torch.amp.custom_fwd``: decorator for an ``autograd.Function``'s ``forward``.
    With ``cast_inputs``, inside an autocast region the floating inputs are cast to it and the
    forward runs with autocast off; without, the forward runs with the autocast state of the
    call, and ``custom_bwd`` gives backward the same state.

    Example::

        >>> class MyMM(torch.autograd.Function):
        ...     @staticmethod
        ...     @torch.amp.custom_fwd(device_type="cpu", cast_inputs=torch.float32)
        ...     def forward(ctx, a, b): ...
    """
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        autocast_context = is_autocast_enabled(device_type)
        args[0]._fwd_used_autocast = False
        if autocast_context:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs),
                           **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Mirrors ``torch.amp.custom_bwd``: decorator for an ``autograd.Function``'s ``backward``:
    it runs with the autocast state (and dtype) its forward ran with."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast,
                      dtype=args[0]._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd
