"""Normalization functionals: batch_norm, instance_norm, layer_norm, group_norm, rms_norm,
local_response_norm, normalize.

Where PyTorch records one node (``NativeBatchNormBackward0``, ``NativeLayerNormBackward0``,
``NativeGroupNormBackward0``) the function is one Op: one jit forward, jax.vjp for backward.  Where
PyTorch composes (rms_norm, normalize, local_response_norm, instance_norm), the last node and its
inputs carry PyTorch's names; deeper PyTorch nodes may be fused into one (see each function).

NOTE [ running statistics ]
In training, batch_norm (and instance_norm with running stats) updates ``running_mean`` and
``running_var`` in place, with the unbiased batch variance.  The forward jit returns the output
together with the updated statistics (``_BN_UPDATE``), so the update costs no extra pass; the new
arrays are stored with ``Tensor._write`` (no autograd; it works on tracers, so a traced step
carries the write).  The recorded node is the output-only Op ``BATCH_NORM``.  Missing optional
tensors (weight, bias, running stats) are passed as the placeholder ``0.0``, with static flags
saying which are present, so the node keeps PyTorch's three graph inputs (input, weight, bias).
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import _dispatch, _dtype as D, _meta, _x64
from .._dispatch import Op, _raw_fn, call, forward_fn, is_traced, wrap_outputs
from .._host import in_buckets
from .._inplace import inplace_method
from .._tensor import Tensor, _wrap_dim
from ..autograd.grad_mode import _state
from .padded import normalized_rows
from .pointwise import _no_kernel

_REDUCED = ("float16", "bfloat16")
_ABSENT = 0.0   # placeholder operand for a missing optional tensor (NOTE [ running statistics ])


def _acc(dtype):
    """The dtype PyTorch computes a norm in: float32 for half and bfloat16 inputs."""
    return jnp.float32 if jnp.dtype(dtype).name in _REDUCED else dtype


def _opt(t):
    return _ABSENT if t is None else t


def _check_float(input, kernel):
    dt = input.dtype
    if not dt.is_floating_point:
        raise _no_kernel(kernel, dt)


def _check_mixed(input, *params):
    """PyTorch's CPU rule for parameters whose dtype differs from the input: they must agree with
    each other, be float32, and the input must be half or bfloat16."""
    defined = [p for p in params if p is not None]
    if not defined:
        return
    first = defined[0].dtype
    for p in defined[1:]:
        if p.dtype is not first:
            raise RuntimeError(f"expected scalar type {first._scalar_name} but found "
                               f"{p.dtype._scalar_name}")
    if first is input.dtype:
        return
    if first is not D.float32:
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    if input.dtype._np.name not in _REDUCED:
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")


@_x64.scoped
def _run_updating(op, update_op, args, targets, static):
    """Run ``update_op`` (returning the output, then new values for ``targets``) in one jit, store
    the new values into ``targets`` and record ``op`` (the output alone) as the backward node."""
    if _dispatch._profiler is not None:   # an event of its own, as a dispatched op has
        return _dispatch._profiler.op(op, args, static, run=lambda: _updating(
            op, update_op, args, targets, static))
    return _updating(op, update_op, args, targets, static)


def _updating(op, update_op, args, targets, static):
    arrays = [a._value() if isinstance(a, Tensor) else a for a in args]
    traced = is_traced(arrays)
    fn = _raw_fn(update_op, static, None) if traced else forward_fn(update_op, static, None)
    out, *new = _meta.run(fn, op.name, *arrays)
    for t, v in zip(targets, new):
        t._write(v)
    edges, mask = None, []
    if _state.grad_enabled:
        for i in range(op.inputs):
            a = args[i]
            if isinstance(a, Tensor) and (a._grad_fn is not None or a._requires_grad):
                if edges is None:
                    edges = [None] * op.inputs
                edges[i] = a._edge()
                mask.append(i)
    return wrap_outputs(op, static, None, out, args, arrays, edges, mask, strided=False)


# --- batch_norm -----------------------------------------------------------------------------------

def _bn_parts(x, w, b, rm, rv, eps, training, groups, present):
    """(output, batch mean, biased batch variance, values per channel) of a batch norm over dim 1.
    ``groups``: instance_norm's batch size (its running stats are per channel, tiled)."""
    acc = _acc(x.dtype)
    xf = x.astype(acc)
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    if training:
        mean = jnp.mean(xf, axes)
        var = jnp.mean(jnp.square(xf - mean.reshape(shape)), axes)
    else:
        mean, var = jnp.tile(rm.astype(acc), groups), jnp.tile(rv.astype(acc), groups)
    y = (xf - mean.reshape(shape)) * lax.rsqrt(var + eps).reshape(shape)
    has_w, has_b, _ = present
    if has_w:
        y = y * w.astype(acc).reshape(shape)
    if has_b:
        y = y + b.astype(acc).reshape(shape)
    n = x.size // max(x.shape[1], 1) if x.ndim > 1 else x.size
    return y.astype(x.dtype), mean, var, n


def _batch_norm(x, w, b, rm, rv, momentum, eps, training, groups, present):
    return _bn_parts(x, w, b, rm, rv, eps, training, groups, present)[0]


def _batch_norm_update(x, w, b, rm, rv, momentum, eps, training, groups, present):
    out, mean, var, n = _bn_parts(x, w, b, rm, rv, eps, training, groups, present)
    var = var * (n / (n - 1)) if n > 1 else var * jnp.inf
    mean, var = mean.reshape(groups, -1).mean(0), var.reshape(groups, -1).mean(0)
    new_rm = (1 - momentum) * rm.astype(mean.dtype) + momentum * mean
    new_rv = (1 - momentum) * rv.astype(var.dtype) + momentum * var
    return out, new_rm.astype(rm.dtype), new_rv.astype(rv.dtype)


# (a short batch runs a longer one's program: NOTE [ a short call in a longer one's program ])
BATCH_NORM = Op("batch_norm", _batch_norm, "NativeBatchNormBackward0", inputs=3,
                saves=(0, 1, 3, 4), bucket=normalized_rows)
_BN_UPDATE = Op("batch_norm", _batch_norm_update, None)


def _bn_checks(input, weight, bias, running_mean, running_var, training, groups):
    _check_float(input, "batch_norm")
    c = input.shape[1] if input.ndim > 1 else 0
    for name, t, k in (("weight", weight, 1), ("bias", bias, 1), ("running_mean", running_mean,
                       groups), ("running_var", running_var, groups)):
        if t is not None and t.numel() * k != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel() * k}")
    if not training:
        for name, t in (("running_mean", running_mean), ("running_var", running_var)):
            if t is None:
                raise RuntimeError(f"{name} must be defined in evaluation mode")
    _check_mixed(input, weight, bias, running_mean, running_var)


def _native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
                       groups=1):
    traced_momentum = isinstance(momentum, jax.core.Tracer)   # BatchNorm(momentum=None), traced
    if isinstance(momentum, bool) or not (isinstance(momentum, (int, float)) or traced_momentum):
        raise TypeError("batch_norm(): argument 'momentum' (position 7) must be float, not "
                        f"{type(momentum).__name__}")
    _bn_checks(input, weight, bias, running_mean, running_var, training, groups)
    training = bool(training)
    update = training and running_mean is not None and running_var is not None
    present = (weight is not None, bias is not None, running_mean is not None)
    static = (("eps", float(eps)), ("training", training), ("groups", groups),
              ("present", present))
    args = (input, _opt(weight), _opt(bias), _opt(running_mean), _opt(running_var),
            momentum if traced_momentum else float(momentum))
    if update:
        return _run_updating(BATCH_NORM, _BN_UPDATE, args, (running_mean, running_var), static)
    return call(BATCH_NORM, *args, static=static)


def _verify_batch_size(size):
    n = size[0]
    for s in size[2:]:
        n *= s
    if n == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"{size}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-05):
    """Mirrors ``torch.nn.functional.batch_norm``: normalize each channel (dim 1) by its batch
    statistics (training) or by ``running_mean`` / ``running_var`` (evaluation), then scale by
    ``weight`` and shift by ``bias``.  In training the running statistics, when given, are
    updated in place: ``running = (1 - momentum) * running + momentum * batch_stat``, with the
    unbiased batch variance.

    Example:
        >>> x = torchlike.randn(8, 3)
        >>> rm, rv = torchlike.zeros(3), torchlike.ones(3)
        >>> y = torchlike.nn.functional.batch_norm(x, rm, rv, training=True)
    """
    if training:
        _verify_batch_size(input.shape)
    return _native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                              eps)


def torch_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
                     cudnn_enabled):
    """Mirrors ``torch.batch_norm`` (ATen's argument order; ``cudnn_enabled`` is ignored)."""
    return _native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                              eps)


# --- instance_norm --------------------------------------------------------------------------------

def _instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                   eps):
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    shape = input.shape
    b, c = shape[0], shape[1]
    # PyTorch runs a batch norm of the (1, b * c, ...) view, its weight and bias repeated b times
    x = input.reshape(1, b * c, *shape[2:])
    w = None if weight is None else weight.repeat(b)
    bi = None if bias is None else bias.repeat(b)
    out = _native_batch_norm(x, w, bi, running_mean, running_var, use_input_stats, momentum, eps,
                             groups=b)
    return out.view(shape)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-05):
    """Mirrors ``torch.nn.functional.instance_norm``: normalize each channel of each sample over
    its spatial dims; with ``use_input_stats=False``, by the running statistics instead.  Given
    running statistics are updated in place with the batch average of the per-sample statistics.
    """
    if use_input_stats:
        n = 1
        for s in input.shape[2:]:
            n *= s
        if n == 1:
            raise ValueError("Expected more than 1 spatial element when training, got input size "
                             f"{input.shape}")
    return _instance_norm(input, weight, bias, running_mean, running_var, use_input_stats,
                          momentum, eps)


def torch_instance_norm(input, weight, bias, running_mean, running_var, use_input_stats,
                        momentum, eps, cudnn_enabled):
    """Mirrors ``torch.instance_norm`` (ATen's argument order; ``cudnn_enabled`` is ignored)."""
    return _instance_norm(input, weight, bias, running_mean, running_var, use_input_stats,
                          momentum, eps)


# --- layer_norm, group_norm -----------------------------------------------------------------------

def _layer_norm(x, w, b, eps, nd, present):
    acc = _acc(x.dtype)
    xf = x.astype(acc)
    axes = tuple(range(x.ndim - nd, x.ndim))
    mean = jnp.mean(xf, axes, keepdims=True)
    var = jnp.mean(jnp.square(xf - mean), axes, keepdims=True)
    y = (xf - mean) * lax.rsqrt(var + eps)
    if present[0]:
        y = y * w.astype(acc)
    if present[1]:
        y = y + b.astype(acc)
    return y.astype(x.dtype)


def _group_norm(x, w, b, eps, groups, present):
    acc = _acc(x.dtype)
    n, c = x.shape[0], x.shape[1]
    xg = x.astype(acc).reshape(n, groups, x.size // max(n * groups, 1))
    mean = jnp.mean(xg, -1, keepdims=True)
    var = jnp.mean(jnp.square(xg - mean), -1, keepdims=True)
    y = ((xg - mean) * lax.rsqrt(var + eps)).reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    if present[0]:
        y = y * w.astype(acc).reshape(shape)
    if present[1]:
        y = y + b.astype(acc).reshape(shape)
    return y.astype(x.dtype)


LAYER_NORM = Op("layer_norm", _layer_norm, "NativeLayerNormBackward0", inputs=3, saves=(0, 1, 2),
                cold=lambda arrays, static, dt: in_buckets(   # NOTE [ rows in buckets ] in _host.py
                    LAYER_NORM, static, dt, arrays, (arrays[0].ndim - dict(static)["nd"], None,
                                                     None)), bucket=normalized_rows)
GROUP_NORM = Op("group_norm", _group_norm, "NativeGroupNormBackward0", inputs=3, saves=(0, 1),
                bucket=normalized_rows)


def _normalized_shape(normalized_shape, fn):
    if isinstance(normalized_shape, int) or not isinstance(normalized_shape, (list, tuple)):
        raise TypeError(f"{fn}(): argument 'normalized_shape' (position 2) must be tuple of ints, "
                        f"not {type(normalized_shape).__name__}")
    shape = [int(s) for s in normalized_shape]
    if not shape:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    return shape


def _check_normalized(input, shape, params, sep):
    for name, t in params:
        if t is not None and list(t.shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got "
                               f"{name} of shape {list(t.shape)} and normalized_shape = {shape}")
    nd = len(shape)
    if input.ndim < nd or list(input.shape[input.ndim - nd:]) != shape:
        expected = ", ".join(str(s) for s in shape)
        raise RuntimeError(f"Given normalized_shape={shape}, expected input with shape "
                           f"[*{sep}{expected}], but got input of size{list(input.shape)}")


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    """Mirrors ``torch.nn.functional.layer_norm``: normalize over the last
    ``len(normalized_shape)`` dims (biased variance), then ``* weight + bias`` elementwise.

    Example:
        >>> torchlike.nn.functional.layer_norm(torchlike.randn(2, 4), (4,))
    """
    shape = _normalized_shape(normalized_shape, "layer_norm")
    _check_normalized(input, shape, (("weight", weight), ("bias", bias)), ", ")
    _check_float(input, "LayerNormKernelImpl")
    _check_mixed(input, weight, bias)
    static = (("eps", float(eps)), ("nd", len(shape)), ("present", (weight is not None,
                                                                    bias is not None)))
    return call(LAYER_NORM, input, _opt(weight), _opt(bias), static=static)


def torch_layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05,
                     cudnn_enable=True):
    """Mirrors ``torch.layer_norm`` (``cudnn_enable`` is ignored)."""
    return layer_norm(input, normalized_shape, weight, bias, eps)


def _group_norm_checks(input, num_groups, weight, bias):
    c = input.shape[1]
    if num_groups <= 0 or c % num_groups:
        raise RuntimeError("Expected number of channels in input to be divisible by num_groups, "
                           f"but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape {list(t.shape)} and "
                               f"input of shape {list(input.shape)}")
    _check_float(input, "GroupNormKernelImpl")
    _check_mixed(input, weight, bias)


def _native_group_norm(input, num_groups, weight, bias, eps):
    _group_norm_checks(input, num_groups, weight, bias)
    static = (("eps", float(eps)), ("groups", int(num_groups)),
              ("present", (weight is not None, bias is not None)))
    return call(GROUP_NORM, input, _opt(weight), _opt(bias), static=static)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    """Mirrors ``torch.nn.functional.group_norm``: split the channels (dim 1) into
    ``num_groups`` groups, normalize each group of each sample, then per-channel
    ``* weight + bias``."""
    if input.ndim < 2:
        raise RuntimeError("Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    _verify_batch_size([input.shape[0] * input.shape[1] // num_groups, num_groups]
                       + list(input.shape[2:]))
    return _native_group_norm(input, num_groups, weight, bias, eps)


def torch_group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    """Mirrors ``torch.group_norm`` (``cudnn_enabled`` is ignored)."""
    return _native_group_norm(input, num_groups, weight, bias, eps)


# --- rms_norm -------------------------------------------------------------------------------------

# NOTE: PyTorch's CPU rms_norm is the composite x * rsqrt(mean(x^2) + eps) [* weight]; its
# pow -> mean -> add -> rsqrt chain is fused here into one node under the last name
# (RsqrtBackward0), so the graph reads Mul(x, Rsqrt) [-> Mul(_, weight)] as in PyTorch.
RMS_RSQRT = Op("rsqrt", lambda x, dims, eps: lax.rsqrt(
    jnp.mean(jnp.square(x), dims, keepdims=True) + eps), "RsqrtBackward0")


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """Mirrors ``torch.nn.functional.rms_norm``: ``x / sqrt(mean(x^2) + eps) * weight`` over the
    last ``len(normalized_shape)`` dims; ``eps`` defaults to the machine epsilon of the compute
    dtype (float32 for half and bfloat16 inputs, which are upcast).  The result has the input's
    dtype."""
    shape = _normalized_shape(normalized_shape, "rms_norm")
    _check_normalized(input, shape, (("weight", weight),), "")
    _check_float(input, "rms_norm")
    dt = input.dtype
    acc = D.float32 if dt._np.name in _REDUCED else dt
    x = input if acc is dt else input.to(acc)
    if eps is None:
        eps = float(jnp.finfo(acc._np).eps)
    dims = tuple(range(input.ndim - len(shape), input.ndim))
    y = x * call(RMS_RSQRT, x, static=(("dims", dims), ("eps", float(eps))))
    if weight is not None:
        y = y * weight
    return y if y.dtype is dt else y.to(dt)


# --- local_response_norm, normalize ---------------------------------------------------------------

def _lrn_denominator(x, size, alpha, beta, k):
    pad = [(0, 0)] * x.ndim
    pad[1] = (size // 2, (size - 1) // 2)
    window = (1, size) + (1,) * (x.ndim - 2)
    sums = lax.reduce_window(jnp.pad(x * x, pad), np.zeros((), x.dtype), lax.add, window,
                             (1,) * x.ndim, "VALID")
    return (sums / size * alpha + k) ** beta


# NOTE: PyTorch builds the denominator from mul, pad, avg_pool, mul, add and pow; it is one node
# here under the last name (PowBackward0), so the graph reads Div(x, Pow) as in PyTorch.
LRN_DENOMINATOR = Op("local_response_norm", _lrn_denominator, "PowBackward0", promote="float")


def local_response_norm(input, size, alpha=0.0001, beta=0.75, k=1.0):
    """Mirrors ``torch.nn.functional.local_response_norm``: divide by
    ``(k + alpha / size * sum of squares over size neighbouring channels) ** beta``."""
    if input.ndim < 3:
        raise ValueError("Expected 3D or higher dimensionality                          input "
                         f"(got {input.ndim} dimensions)")
    if input.numel() == 0:
        return input
    static = (("size", int(size)), ("alpha", float(alpha)), ("beta", float(beta)),
              ("k", float(k)))
    return input / call(LRN_DENOMINATOR, input, static=static)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """Mirrors ``torch.nn.functional.normalize``: ``input / max(||input||_p, eps)`` along
    ``dim`` (PyTorch's graph: Div(input, Expand(ClampMin(LinalgVectorNorm))))."""
    from .norms import vector_norm
    from .pointwise import div
    denom = vector_norm(input, p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return div(input, denom, out=out)


def _renorm(x, p, dim, maxnorm):
    from .reduce import _vector_norm
    acc = jnp.float32 if x.dtype in (jnp.float16, jnp.bfloat16) else None
    norm = _vector_norm(x, p, tuple(d for d in range(x.ndim) if d != dim), True, acc)
    factor = jnp.where(norm > maxnorm, maxnorm / (norm + 1e-7), jnp.ones_like(norm))
    return x * factor.astype(x.dtype)


RENORM = Op("renorm", _renorm, "RenormBackward0", saves=(0,))


def renorm(input, p, dim, maxnorm, *, out=None):
    """Mirrors ``torch.renorm``: each sub-tensor along ``dim`` whose ``p``-norm exceeds
    ``maxnorm`` scaled down to norm ``maxnorm`` (divided by its norm + 1e-7, as PyTorch)."""
    from .._dispatch import with_out
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    if input.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} "
                           f"dimensions")
    dim = _wrap_dim(dim, input.ndim)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {input.dtype._scalar_name}")
    static = (("p", float(p)), ("dim", dim), ("maxnorm", float(maxnorm)))
    return with_out(call(RENORM, input, static=static), out)


PUBLIC = ("rms_norm", "renorm")
TENSOR_METHODS = {"renorm": renorm, "renorm_": inplace_method(renorm)}
# torch.<name> functions whose ATen signature differs from torch.nn.functional's
TOP_LEVEL = {"batch_norm": torch_batch_norm, "instance_norm": torch_instance_norm,
                  "layer_norm": torch_layer_norm, "group_norm": torch_group_norm}
