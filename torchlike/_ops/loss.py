"""Losses: mirrors the regression, classification and likelihood losses of
``torch.nn.functional``.  The margin and embedding losses are in loss_margin.py, ``ctc_loss`` in
loss_ctc.py.

Where PyTorch records ONE backward node for a loss (``MseLossBackward0``, ``NllLossBackward0``,
``BinaryCrossEntropyBackward0``, ...) it is one Op here, its reduction included (one jit).  Where
PyTorch composes a loss from other ops (``l1_loss``, ``kl_div``, ``poisson_nll_loss``,
``gaussian_nll_loss``, ``cross_entropy`` = ``log_softmax`` + ``nll_loss``, and its
label-smoothing and class-probability forms) it is composed here from the same ops, so
``grad_fn`` and its ``next_functions`` read as PyTorch's.

Every reduction argument goes through :func:`reduction_of`: ``'none' | 'mean' | 'sum'``, the
deprecated ``size_average`` / ``reduce`` pair mapped onto it with PyTorch's warning.
"""
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _amp_hook
from .._creation import ones_like
from .._dispatch import Op, call, result_dtype
from .._tensor import Tensor, check_all, check_index_range, host_values
from ..autograd.grad_mode import _state, no_grad
from . import reduce as R, shape as S
from .binary import xlogy
from .join import broadcast_shapes, broadcast_tensors
from .padded import loss_rows
from .pointwise import (ADD_SCALAR, DIV_SCALAR, MUL_SCALAR, _no_kernel, add, div, eq, exp, le,
                        log, logical_not, mul, neg, pow, sub)
from .scatter import masked_fill
from .special import log_softmax

# --- reductions -----------------------------------------------------------------------------------

_REDUCTIONS = ("none", "mean", "sum")


def legacy_reduction(size_average, reduce):
    """PyTorch's mapping of the deprecated ``size_average`` / ``reduce`` flags, with its warning."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    name = "mean" if size_average and reduce else "sum" if reduce else "none"
    warnings.warn("size_average and reduce args will be deprecated, please use "
                  f"reduction='{name}' instead.", stacklevel=_amp_hook.stacklevel(4))
    return name


def reduction_of(reduction, size_average=None, reduce=None):
    """The reduction a loss applies: the legacy flags win when given, as in PyTorch."""
    if size_average is not None or reduce is not None:
        return legacy_reduction(size_average, reduce)
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' "
                      "instead.", stacklevel=_amp_hook.stacklevel(3))
        return "mean"
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def reduce_array(x, reduction):
    """Inside an Op: the reduction of the elementwise loss ``x``."""
    if reduction == "mean":
        return jnp.mean(x)
    if reduction == "sum":
        return jnp.sum(x)
    return x


def reduce_tensor(t, reduction):
    """For composite losses: ``t.mean()`` (MeanBackward0), ``t.sum()`` (SumBackward0) or ``t``."""
    if reduction == "mean":
        return R.mean(t)
    if reduction == "sum":
        return R.sum(t)
    return t


def check_not_differentiable(fn, arg, t):
    """PyTorch refuses a gradient for some arguments (class weights, ...)."""
    if t is not None and _state.grad_enabled and t.requires_grad:
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument "
                           f"'{arg}'. This input cannot have requires_grad True.")



def _size_warning(input, target):
    warnings.warn(f"Using a target size ({target.size()}) that is different to the input size "
                  f"({input.size()}). This will likely lead to incorrect results due to "
                  "broadcasting. Please ensure they have the same size.",
                  stacklevel=_amp_hook.stacklevel(4))


# --- mse_loss, smooth_l1_loss, huber_loss, l1_loss ------------------------------------------------


def _smooth_l1(x, y, beta):
    d = jnp.abs(x - y)
    return jnp.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)


def _huber(x, y, delta):
    d = jnp.abs(x - y)
    return jnp.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))


MSE_LOSS = Op("mse_loss", lambda x, y, reduction: reduce_array(jnp.square(x - y), reduction),
              "MseLossBackward0", promote="common")
SMOOTH_L1_LOSS = Op("smooth_l1_loss",
                    lambda x, y, reduction, beta: reduce_array(_smooth_l1(x, y, beta), reduction),
                    "SmoothL1LossBackward0", promote="common")
HUBER_LOSS = Op("huber_loss",
                lambda x, y, reduction, delta: reduce_array(_huber(x, y, delta), reduction),
                "HuberLossBackward0", promote="common")


def _broadcast_pair(input, target):
    if tuple(target.shape) != tuple(input.shape):
        _size_warning(input, target)
        return broadcast_tensors(input, target)
    return input, target


def _pointwise_loss(op, kernel, input, target, reduction, **params):
    dt = result_dtype("common", input, target)
    if not dt.is_floating_point:
        raise _no_kernel(kernel, dt)
    static = (("reduction", reduction),) + tuple(params.items())
    return call(op, input, target, static=static)


def _weighted(loss, weight, reduction):
    """PyTorch's weighted regression losses: the weighted sum, divided by the weights' sum for
    'mean'."""
    weighted = mul(loss, weight)
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return R.sum(weighted)
    if reduction == "mean":
        return div(R.sum(weighted), R.sum(weight))
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', "
                     "'sum'.")


def _check_weight(weight, input):
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")


@_amp_hook.entry("mse_loss")
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mirrors ``torch.nn.functional.mse_loss``: the (optionally weighted) squared error,
    ``(input - target) ** 2``, reduced.  One ``MseLossBackward0`` node without weights."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    input, target = _broadcast_pair(input, target)
    if weight is not None:
        _check_weight(weight, input)
        return _weighted(pow(sub(input, target), 2), weight, reduction)
    return _pointwise_loss(MSE_LOSS, "mse_cpu", input, target, reduction_of(reduction))


@_amp_hook.entry("l1_loss")
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mirrors ``torch.nn.functional.l1_loss``: the (optionally weighted) absolute error,
    reduced; composed as PyTorch composes it (``abs(input - target)`` then mean or sum)."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    input, target = _broadcast_pair(input, target)
    if weight is not None:
        _check_weight(weight, input)
        return _weighted(sub(input, target).abs(), weight, reduction)
    return reduce_tensor(sub(input, target).abs(), reduction_of(reduction))


@_amp_hook.entry("smooth_l1_loss")
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Mirrors ``torch.nn.functional.smooth_l1_loss``: ``0.5 d**2 / beta`` where
    ``|d| < beta``, else ``|d| - 0.5 beta``; ``beta == 0`` is :func:`l1_loss`."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    input, target = _broadcast_pair(input, target)
    reduction = reduction_of(reduction)
    if beta == 0.0:
        return l1_loss(input, target, reduction=reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    return _pointwise_loss(SMOOTH_L1_LOSS, "smooth_l1_cpu", input, target, reduction,
                           beta=float(beta))


@_amp_hook.entry("huber_loss")
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """Mirrors ``torch.nn.functional.huber_loss``: ``0.5 d**2`` where ``|d| < delta``, else
    ``delta (|d| - 0.5 delta)``; optional elementwise weights."""
    input, target = _broadcast_pair(input, target)
    if weight is not None:
        _check_weight(weight, input)
        return _weighted_huber(input, target, reduction, delta, weight)
    reduction = reduction_of(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    return _pointwise_loss(HUBER_LOSS, "huber_cpu", input, target, reduction,
                           delta=float(delta))


def _weighted_huber(input, target, reduction, delta, weight):
    loss = mul(huber_loss(input, target, "none", delta), weight)
    if reduction == "none":
        return loss
    if reduction in ("sum", "mean"):
        return reduce_tensor(loss, reduction)
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', "
                     "'sum'.")


# --- binary_cross_entropy, binary_cross_entropy_with_logits ------------------------------------

@jax.custom_jvp
def _bce(x, t):
    """PyTorch's elementwise binary cross entropy, its logs clamped at -100."""
    return (t - 1) * jnp.maximum(jnp.log(1 - x), -100) - t * jnp.maximum(jnp.log(x), -100)


@_bce.defjvp
def _bce_jvp(primals, tangents):
    # NOTE: PyTorch's derivatives ignore the clamp: (x - t) / max(x (1 - x), 1e-12) for the
    # input and -logit(x) for the target, so they stay finite (or inf) at x = 0 and 1.
    (x, t), (dx, dt) = primals, tangents
    dinput = (x - t) / jnp.maximum((1 - x) * x, 1e-12)
    return _bce(x, t), dinput * dx + (jnp.log1p(-x) - jnp.log(x)) * dt


def _bce_fn(x, t, *weight, reduction):
    loss = _bce(x, t)
    if weight:
        loss = loss * weight[0].astype(loss.dtype)
    return reduce_array(loss, reduction)


def _bce_logits_fn(x, t, *extra, reduction, has_weight, has_pos_weight):
    # log(1 + exp(-x)) as logaddexp(0, -x): stable for large |x|, with an exact gradient; in
    # the input's dtype, the rest in the promoted one (as PyTorch's kernel)
    softplus_neg = jnp.logaddexp(jnp.zeros((), x.dtype), -x)
    dt = jnp.result_type(x, t)
    x, t = x.astype(dt), t.astype(dt)
    if has_pos_weight:
        log_weight = (extra[-1] - 1) * t + 1
        loss = (1 - t) * x + (log_weight * softplus_neg).astype(dt)
    else:
        loss = (1 - t) * x + softplus_neg
    if has_weight:
        loss = loss * extra[0].astype(dt)
    return reduce_array(loss, reduction)


BINARY_CROSS_ENTROPY = Op("binary_cross_entropy", _bce_fn, "BinaryCrossEntropyBackward0",
                          inputs=2)
BINARY_CROSS_ENTROPY_WITH_LOGITS = Op(
    "binary_cross_entropy_with_logits", _bce_logits_fn, "BinaryCrossEntropyWithLogitsBackward0",
    inputs=2)


@_amp_hook.entry("binary_cross_entropy")
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """Mirrors ``torch.nn.functional.binary_cross_entropy``:
    ``-w (t log(x) + (1 - t) log(1 - x))`` with the logs clamped at -100, reduced.  ``weight``
    broadcasts to the target; inputs outside [0, 1] raise (checked in eager mode only)."""
    reduction = reduction_of(reduction, size_average, reduce)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.size()}) that is different to the input "
                         f"size ({input.size()}) is deprecated. Please ensure they have the same "
                         "size.")
    extra = ()
    if weight is not None:
        broadcast_shapes(tuple(target.shape), tuple(weight.shape))
        check_not_differentiable("binary_cross_entropy", "weight", weight)
        extra = (weight,)
    if target.dtype is not input.dtype:
        raise RuntimeError(f"Found dtype {target.dtype._scalar_name} but expected "
                           f"{input.dtype._scalar_name}")
    for t, name in ((input, "input"), (target, "target")):
        check_all(t, _in_unit_interval, RuntimeError,
                  f"all elements of {name} should be between 0 and 1")
    return call(BINARY_CROSS_ENTROPY, input, target, *extra, static=(("reduction", reduction),))


def _in_unit_interval(v):
    return (v >= 0) & (v <= 1)


@_amp_hook.entry("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """Mirrors ``torch.nn.functional.binary_cross_entropy_with_logits``: binary cross entropy
    of ``sigmoid(input)``, computed stably from the logits; ``weight`` scales each element,
    ``pos_weight`` the positive term (both broadcast)."""
    reduction = reduction_of(reduction, size_average, reduce)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.size()}) must be the same as input size "
                         f"({input.size()})")
    fn = "binary_cross_entropy_with_logits"
    check_not_differentiable(fn, "weight", weight)
    check_not_differentiable(fn, "pos_weight", pos_weight)
    extra = tuple(w for w in (weight, pos_weight) if w is not None)
    static = (("reduction", reduction), ("has_weight", weight is not None),
              ("has_pos_weight", pos_weight is not None))
    return call(BINARY_CROSS_ENTROPY_WITH_LOGITS, input, target, *extra, static=static)


# --- nll_loss, cross_entropy --------------------------------------------------------------------

def _nll(x, target, *weight, ignore_index, reduction):
    """-weight[t] * x[t] per sample (class dim 1, or 0 for one unbatched sample); ignored
    targets contribute 0, and 'mean' divides by the weights of the others."""
    unbatched = x.ndim == 1
    if unbatched:
        x, target = x[None], target.reshape(1)
    target = target.astype(jnp.int64)
    keep = target != ignore_index
    safe = jnp.where(keep, target, 0)
    picked = jnp.take_along_axis(x, safe[:, None], axis=1, mode="clip")[:, 0]
    w = weight[0].astype(x.dtype)[safe] if weight else jnp.ones((), x.dtype)
    w = jnp.where(keep, w, jnp.zeros((), x.dtype))
    out = jnp.where(keep, -picked * w, jnp.zeros((), x.dtype))
    if reduction == "none":
        return out.reshape(()) if unbatched else out
    if reduction == "sum":
        return jnp.sum(out)
    return jnp.sum(out) / jnp.sum(w)


# (a short batch runs a longer one's program: NOTE [ a short call in a longer one's program ])
NLL_LOSS = Op("nll_loss", _nll, "NllLossBackward0", inputs=1, bucket=loss_rows)
NLL_LOSS2D = Op("nll_loss2d", _nll, "NllLoss2DBackward0", inputs=1)


def _target_weight_sum(weight, target, ignore_index):
    keep = target != ignore_index
    w = weight[jnp.where(keep, target, 0)]
    return jnp.sum(jnp.where(keep, w, jnp.zeros((), w.dtype)))


# The summed class weights of the targets that are not ignored (no gradient: the weights have
# none in PyTorch).
TARGET_WEIGHT_SUM = Op("target_weight_sum", _target_weight_sum, None)


def _nll_checks(op, input, target, weight, ignore_index):
    fn = "nll_loss2d" if op is NLL_LOSS2D else "nll_loss"
    n_classes = input.shape[1] if input.ndim > 1 else input.shape[0]
    if weight is not None:
        if op is NLL_LOSS2D:
            if weight.numel() != n_classes:
                raise RuntimeError("weight tensor should be defined either for all or no classes")
        elif weight.ndim != 1 or weight.numel() != n_classes:
            raise RuntimeError(f"weight tensor should be defined either for all {n_classes} "
                               "classes or no classes but got weight tensor of shape: "
                               f"{list(weight.shape)}")
    if target.dtype._name not in ("int64", "uint8"):
        raise RuntimeError("expected target dtype to be Long or Byte, but got "
                           f"{target.dtype._scalar_name}")
    if not input.dtype.is_floating_point:
        raise _no_kernel(f"{fn}_out_frame", input.dtype)
    if weight is not None:
        if weight.dtype is not input.dtype:
            raise RuntimeError(f"expected scalar type {input.dtype._scalar_name} but found "
                               f"{weight.dtype._scalar_name}")
        check_not_differentiable(f"{fn}_forward", "weight", weight)
    check_index_range(target, 0, n_classes, IndexError, "Target {1} is out of bounds.",
                      ignore_index)


def _nll_call(op, input, target, weight, reduction, ignore_index):
    _nll_checks(op, input, target, weight, ignore_index)
    extra = () if weight is None else (weight,)
    static = (("ignore_index", int(ignore_index)), ("reduction", reduction))
    return call(op, input, target, *extra, static=static)


def _nll_nd(input, target, weight, reduction, ignore_index):
    """PyTorch's nll_loss_nd: 1-D/2-D input -> NllLoss, 4-D -> NllLoss2d, other ranks viewed as
    (N, C, 1, -1) for NllLoss2d and the result viewed back."""
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if input.ndim != 1 and input.shape[0] != (target.shape[0] if target.ndim else 0):
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({target.shape[0] if target.ndim else 0}).")
    if input.ndim <= 2:
        if target.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if input.ndim == 1 and target.ndim == 1 and target.shape[0] != 1:
            raise ValueError("For 1D input, 1D target must have size 1, but got target size: "
                             f"{target.shape[0]}")
        return _nll_call(NLL_LOSS, input, target, weight, reduction, ignore_index)
    if input.ndim == 4:
        if target.ndim != 3:
            raise RuntimeError("only batches of spatial targets supported (3D tensors) but got "
                               f"targets of dimension: {target.ndim}")
        if tuple(input.shape[2:]) != tuple(target.shape[1:]):
            raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: "
                               f"{list(target.shape)}")
        return _nll_call(NLL_LOSS2D, input, target, weight, reduction, ignore_index)
    n, c = input.shape[:2]
    out_size = (n,) + tuple(input.shape[2:])
    if tuple(target.shape[1:]) != tuple(input.shape[2:]):
        raise RuntimeError(f"Expected target size {list(out_size)}, got {list(target.shape)}")
    input, target = S.contiguous(input), S.contiguous(target)
    if input.numel() > 0:
        input = S.view(input, n, c, 1, -1)
    else:
        input = S.view(input, n, c, 0, 0)
    target = S.view(target, n, 1, -1) if target.numel() > 0 else S.view(target, n, 0, 0)
    out = _nll_call(NLL_LOSS2D, input, target, weight, reduction, ignore_index)
    return S.view(out, *out_size) if reduction == "none" else out


@_amp_hook.entry("nll_loss")
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Mirrors ``torch.nn.functional.nll_loss``: ``-weight[t] * input[n, t]`` for class-index
    targets, over input (N, C), (N, C, d1, ...) or one unbatched (C,); ``ignore_index`` targets
    count for nothing, 'mean' divides by the summed weights of the others.  Targets out of range
    raise (checked in eager mode only)."""
    reduction = reduction_of(reduction, size_average, reduce)
    return _nll_nd(input, target, weight, reduction, ignore_index)


def _class_weight_view(weight, ndim, class_dim):
    if ndim <= 1:
        return weight
    shape = [1] * ndim
    shape[class_dim] = weight.shape[0]
    return S.view(weight, *shape)


def _cross_entropy_probs(input, target, weight, reduction, label_smoothing, class_dim):
    n_classes = input.shape[class_dim]
    if weight is not None and (weight.ndim != 1 or weight.numel() != n_classes):
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all "
                           f"{n_classes} classes or no classes but got weight tensor of shape: "
                           f"{list(weight.shape)}")
    logp = log_softmax(input, class_dim)
    if label_smoothing > 0.0:
        _check_smoothing(label_smoothing)
        target = call(ADD_SCALAR, call(MUL_SCALAR, target, 1 - label_smoothing),
                      label_smoothing / n_classes)
    prod = mul(logp, target)
    if weight is not None:
        prod = mul(prod, _class_weight_view(weight, input.ndim, class_dim))
    if reduction == "none":
        return neg(R.sum(prod, class_dim))
    total = neg(R.sum(prod))
    if reduction == "sum":
        return total
    return call(DIV_SCALAR, total, input.numel() // n_classes if n_classes else 0)


def _check_smoothing(label_smoothing):
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing:g}")


def _cross_entropy_smoothed(input, target, weight, reduction, ignore_index, label_smoothing,
                            class_dim):
    logp = log_softmax(input, class_dim)
    nll = _nll_nd(logp, target, weight, reduction, ignore_index)
    n_classes = input.shape[class_dim]
    if weight is not None:
        smooth = neg(R.sum(mul(logp, _class_weight_view(weight, input.ndim, class_dim)),
                           class_dim))
    else:
        smooth = neg(R.sum(logp, class_dim))
    ignored = eq(target, ignore_index)
    smooth = masked_fill(smooth, ignored, 0.0)
    if reduction == "mean":
        if weight is not None:
            count = call(TARGET_WEIGHT_SUM, weight, target,
                         static=(("ignore_index", int(ignore_index)),))
        else:
            count = R.sum(logical_not(ignored))
        smooth = div(R.sum(smooth), count)
    elif reduction == "sum":
        smooth = R.sum(smooth)
    return add(call(MUL_SCALAR, nll, 1 - label_smoothing),
               call(MUL_SCALAR, smooth, label_smoothing / n_classes))


@_amp_hook.entry("cross_entropy")
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """Mirrors ``torch.nn.functional.cross_entropy``: ``nll_loss(log_softmax(input, 1))`` for
    class-index targets, or ``-sum(target * log_softmax(input))`` for class-probability targets
    (same shape as ``input``); ``label_smoothing`` mixes in the uniform distribution.

    Input (N, C), (N, C, d1, ...) or one unbatched (C,) sample; ``weight`` rescales each class;
    ``ignore_index`` targets count for nothing.
    """
    reduction = reduction_of(reduction, size_average, reduce)
    class_dim = 0 if input.ndim == 1 else 1
    if tuple(input.shape) == tuple(target.shape):
        if not target.dtype.is_floating_point:
            raise RuntimeError("Expected floating point type for target with class "
                               f"probabilities, got {target.dtype._scalar_name}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _cross_entropy_probs(input, target, weight, reduction, label_smoothing, class_dim)
    if label_smoothing > 0.0:
        _check_smoothing(label_smoothing)
        return _cross_entropy_smoothed(input, target, weight, reduction, ignore_index,
                                       label_smoothing, class_dim)
    return _nll_nd(log_softmax(input, class_dim), target, weight, reduction, ignore_index)


# --- kl_div, poisson_nll_loss, gaussian_nll_loss -------------------------------------------------

@_amp_hook.entry("kl_div")
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Mirrors ``torch.nn.functional.kl_div``: the pointwise KL divergence
    ``target * (log(target) - input)`` (``exp(target) * (target - input)`` when
    ``log_target``), reduced; 'batchmean' divides the sum by the batch size."""
    if size_average is not None or reduce is not None:
        reduced = legacy_reduction(size_average, reduce)
    else:
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and "
                          "the support size.'batchmean' divides only by the batch size, and "
                          "aligns with the KL div math definition.'mean' will be changed to "
                          "behave the same as 'batchmean' in the next major release.",
                          stacklevel=_amp_hook.stacklevel(2))
        reduced = "sum" if reduction == "batchmean" else reduction_of(reduction)
    if log_target:
        loss = mul(exp(target), sub(target, input))
    else:
        loss = sub(xlogy(target, target), mul(target, input))
    loss = reduce_tensor(loss, reduced)
    if reduction == "batchmean" and input.ndim != 0:
        loss = div(loss, input.shape[0])
    return loss


@_amp_hook.entry("poisson_nll_loss")
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """Mirrors ``torch.nn.functional.poisson_nll_loss``: ``exp(input) - target * input``
    (``input - target * log(input + eps)`` when not ``log_input``), plus Stirling's
    approximation of ``log(target!)`` where target > 1 when ``full``."""
    reduction = reduction_of(reduction, size_average, reduce)
    if log_input:
        loss = sub(exp(input), mul(target, input))
    else:
        loss = sub(input, mul(target, log(call(ADD_SCALAR, input, eps))))
    if full:
        stirling = add(sub(mul(target, log(target)), target),
                       call(MUL_SCALAR, log(call(MUL_SCALAR, target, 2 * math.pi)), 0.5))
        loss = add(loss, masked_fill(stirling, le(target, 1), 0))
    return reduce_tensor(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Mirrors ``torch.nn.functional.gaussian_nll_loss``:
    ``0.5 * (log(var) + (input - target)**2 / var)`` (plus ``0.5 log(2 pi)`` when ``full``).

    ``var`` is a float, a tensor of input's shape, of input's shape without its last dim, or
    broadcastable to input with exactly one dim of size 1; it is clamped to ``eps`` for
    stability without changing its gradient (as PyTorch's clamp under no_grad).
    """
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = mul(ones_like(input), var)
    elif isinstance(var, Tensor):
        v = host_values(var)
        if v is not None and np.any(v < 0):
            raise ValueError("var has negative entry/entries")
    else:
        raise TypeError(f"gaussian_nll_loss(): argument 'var' must be Tensor or float, not "
                        f"{type(var).__name__}")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = S.unsqueeze(var, -1)
        elif not (input.ndim == var.ndim and sum(
                y for x, y in zip(input.shape, var.shape) if x != y) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    var = S.clone(var)
    with no_grad():
        var.clamp_(min=eps)
    loss = mul(add(log(var), div(pow(sub(input, target), 2), var)), 0.5)
    if full:
        loss = add(loss, 0.5 * math.log(2 * math.pi))
    return reduce_tensor(loss, reduction)


PUBLIC = ()
TENSOR_METHODS = {}
