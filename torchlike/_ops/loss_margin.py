"""Margin and embedding losses: mirrors ``torch.nn.functional``'s cosine_embedding_loss,
margin_ranking_loss, hinge_embedding_loss, soft_margin_loss, triplet_margin_loss,
triplet_margin_with_distance_loss, multi_margin_loss, multilabel_margin_loss and
multilabel_soft_margin_loss.

``soft_margin_loss``, ``multi_margin_loss`` and ``multilabel_margin_loss`` are one node each in
PyTorch and one Op here.  The others are composites in PyTorch and are composed here from the
same ops, so ``grad_fn`` and its ``next_functions`` read as PyTorch's.  Hinges use
``where(z > 0, z, 0)``: no gradient at the kink, as PyTorch's kernels.
"""
import jax.numpy as jnp

from .. import _amp_hook
from .._creation import full_like, zeros_like
from .._dispatch import Op, call
from .._tensor import check_index_range
from . import pointwise as P
from .activation import logsigmoid
from .distance import pairwise_distance
from .loss import (_REDUCTIONS, check_not_differentiable, legacy_reduction,
                   reduce_array, reduce_tensor, reduction_of)
from .pointwise import ADD_SCALAR, add, clamp_min, eq, minimum, mul, ne, neg, rsub, sub, where
from .reduce import sum as _sum

_EPSILON = 1e-12


def _cosine(x1, x2, dim):
    """cosine_embedding_loss's cosine: <x1, x2> / sqrt((|x1|^2 + 1e-12) (|x2|^2 + 1e-12))."""
    prod = jnp.sum(x1 * x2, axis=dim)
    mag1 = jnp.sum(x1 * x1, axis=dim) + _EPSILON
    mag2 = jnp.sum(x2 * x2, axis=dim) + _EPSILON
    return prod / jnp.sqrt(mag1 * mag2)


# NOTE: PyTorch computes this cosine from seven small ops ending in a division; it is one Op
# here, recorded under that division's name.
COSINE = Op("cosine", _cosine, "DivBackward0", promote="common")


@_amp_hook.entry("cosine_embedding_loss")
def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    """Mirrors ``torch.nn.functional.cosine_embedding_loss``: ``1 - cos(x1, x2)`` where
    target is 1, ``max(0, cos(x1, x2) - margin)`` where it is -1 (0 elsewhere), reduced."""
    reduction = reduction_of(reduction, size_average, reduce)
    tdim = target.ndim
    if tdim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input1.ndim != tdim + 1:
        raise RuntimeError(f"{tdim}D target tensor expects {tdim + 1}D input tensors, but found "
                           f"inputs with sizes {list(input1.shape)} and {list(input2.shape)}.")
    cos = call(COSINE, input1, input2, static=(("dim", tdim),))
    zeros = zeros_like(cos)
    pos = sub(full_like(cos, 1), cos)
    neg_part = clamp_min(sub(cos, margin), 0)
    out = add(where(eq(target, 1), pos, zeros), where(eq(target, -1), neg_part, zeros))
    return reduce_tensor(out, reduction)


@_amp_hook.entry("margin_ranking_loss")
def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    """Mirrors ``torch.nn.functional.margin_ranking_loss``:
    ``max(0, -target * (input1 - input2) + margin)``, reduced."""
    reduction = reduction_of(reduction, size_average, reduce)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(
            f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    out = call(ADD_SCALAR, mul(neg(target), sub(input1, input2)), margin)
    return reduce_tensor(clamp_min(out, 0), reduction)


@_amp_hook.entry("hinge_embedding_loss")
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """Mirrors ``torch.nn.functional.hinge_embedding_loss``: ``input`` where target is 1,
    ``max(0, margin - input)`` where it is -1 (both terms where it is neither), reduced."""
    reduction = reduction_of(reduction, size_average, reduce)
    zeros = zeros_like(input)
    margin_clamp = clamp_min(call(P.SUB, margin, input), 0)
    out = add(where(ne(target, 1), margin_clamp, zeros), where(ne(target, -1), input, zeros))
    return reduce_tensor(out, reduction)


def _soft_margin(x, t, reduction):
    # log(1 + exp(-t x)) as PyTorch writes it (it overflows to inf where PyTorch's does)
    return reduce_array(jnp.log(1 + jnp.exp(-t.astype(x.dtype) * x)), reduction)


SOFT_MARGIN_LOSS = Op("soft_margin_loss", _soft_margin, "SoftMarginLossBackward0", inputs=1)


@_amp_hook.entry("soft_margin_loss")
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Mirrors ``torch.nn.functional.soft_margin_loss``: ``log(1 + exp(-target * input))``,
    reduced (in input's dtype)."""
    reduction = reduction_of(reduction, size_average, reduce)
    check_not_differentiable("soft_margin_loss", "target", target)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{input.dtype._scalar_name}")
    return call(SOFT_MARGIN_LOSS, input, target, static=(("reduction", reduction),))


def _check_triplet_dims(anchor, positive, negative, margin):
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a, p, n = anchor.ndim, positive.ndim, negative.ndim
    if not a == p == n:
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {a}D, positive {p}D, and "
                           f"negative {n}D inputs")


@_amp_hook.entry("triplet_margin_loss")
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """Mirrors ``torch.nn.functional.triplet_margin_loss``:
    ``max(0, margin + d(a, p) - d(a, n))`` with ``d`` the pairwise ``p``-distance;
    ``swap`` uses ``min(d(a, n), d(p, n))`` for the negative distance."""
    reduction = reduction_of(reduction, size_average, reduce)
    _check_triplet_dims(anchor, positive, negative, margin)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    out = clamp_min(sub(call(ADD_SCALAR, d_pos, margin), d_neg), 0)
    return reduce_tensor(out, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """Mirrors ``torch.nn.functional.triplet_margin_with_distance_loss``: the triplet margin
    loss with any ``distance_function(x1, x2)`` (default :func:`pairwise_distance`)."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    _check_triplet_dims(anchor, positive, negative, margin)
    distance = pairwise_distance if distance_function is None else distance_function
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    if swap:
        d_neg = minimum(d_neg, distance(positive, negative))
    out = clamp_min(sub(add(d_pos, margin), d_neg), 0)
    return reduce_tensor(out, reduction)


# --- multi_margin_loss, multilabel_margin_loss, multilabel_soft_margin_loss --------------------

def _multi_margin(x, target, *weight, p, margin, reduction):
    n_classes = x.shape[-1] if x.ndim else 1
    x2 = x.reshape(-1, n_classes)
    t = target.reshape(-1).astype(jnp.int64)
    picked = jnp.take_along_axis(x2, t[:, None], axis=1, mode="clip")
    z = margin - picked + x2
    h = jnp.where(z > 0, z if p == 1 else z * z, jnp.zeros((), x.dtype))
    if weight:
        h = h * weight[0].astype(x.dtype)[t][:, None]
    h = jnp.where(jnp.arange(n_classes)[None] == t[:, None], jnp.zeros((), x.dtype), h)
    loss = jnp.sum(h, axis=1) / n_classes
    return reduce_array(loss.reshape(target.shape), reduction)


MULTI_MARGIN_LOSS = Op("multi_margin_loss", _multi_margin, "MultiMarginLossBackward0", inputs=1)


@_amp_hook.entry("multi_margin_loss")
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """Mirrors ``torch.nn.functional.multi_margin_loss``: for each sample,
    ``sum_{j != y} w[y] max(0, margin - x[y] + x[j]) ** p / C`` (p 1 or 2), reduced."""
    reduction = reduction_of(reduction, size_average, reduce)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    if input.numel() == 0 or input.ndim > 2:
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch size, "
                           f"but got: {list(input.shape)}")
    nframe, dim = (1, input.shape[0] if input.ndim else 1) if input.ndim <= 1 else input.shape
    if target.ndim > 1 or target.numel() != nframe:
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of "
            f"input samples (batch size). Expected target size [{nframe}], but got "
            f"{list(target.shape)}. Input has shape {list(input.shape)}.")
    if weight is not None:
        if weight.numel() != dim:
            raise RuntimeError(f"inconsistent weight size, expected {dim} but got "
                               f"{list(weight.shape)}")
        check_not_differentiable("multi_margin_loss", "weight", weight)
        if weight.dtype is not input.dtype:
            raise RuntimeError(f"expected scalar type {input.dtype._scalar_name} but found "
                               f"{weight.dtype._scalar_name}")
    _check_long(target)
    check_index_range(target, 0, dim, RuntimeError, "target out of range")
    extra = () if weight is None else (weight,)
    static = (("p", int(p)), ("margin", float(margin)), ("reduction", reduction))
    return call(MULTI_MARGIN_LOSS, input, target, *extra, static=static)


def _check_long(target):
    if target.dtype._name != "int64":
        raise RuntimeError(f"expected scalar type Long but found {target.dtype._scalar_name}")


def _multilabel_margin(x, target, reduction):
    n_classes = x.shape[-1] if x.ndim else 1
    x2 = x.reshape(-1, n_classes)
    t = target.reshape(-1, n_classes).astype(jnp.int64)
    valid = jnp.cumprod(t != -1, axis=1).astype(bool)    # the labels before the first -1
    safe = jnp.where(valid, t, 0)
    is_target = jnp.any(valid[:, :, None] & (safe[:, :, None] == jnp.arange(n_classes)), axis=1)
    picked = jnp.take_along_axis(x2, safe, axis=1, mode="clip")
    z = 1 - picked[:, :, None] + x2[:, None, :]           # (sample, label j, class k)
    hinge = (z > 0) & valid[:, :, None] & ~is_target[:, None, :]
    loss = jnp.sum(jnp.where(hinge, z, jnp.zeros((), x.dtype)), axis=(1, 2)) / n_classes
    return reduce_array(loss.reshape(()) if x.ndim <= 1 else loss, reduction)


MULTILABEL_MARGIN_LOSS = Op("multilabel_margin_loss", _multilabel_margin,
                            "MultilabelMarginLossBackward0", inputs=1)


@_amp_hook.entry("multilabel_margin_loss")
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Mirrors ``torch.nn.functional.multilabel_margin_loss``: for each sample, the hinge
    ``max(0, 1 - (x[y_j] - x[k])) / C`` summed over its labels ``y_j`` (the target's leading
    entries up to the first -1) and the classes ``k`` that are not labels, reduced."""
    reduction = reduction_of(reduction, size_average, reduce)
    ndim = input.ndim
    if not ((ndim == 2 and input.shape[1] != 0) or (ndim == 1 and input.shape[0] != 0)
            or ndim == 0):
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch size, "
                           f"but got: {list(input.shape)}")
    if ndim <= 1:
        dim = input.shape[0] if ndim else 1
        ok = target.ndim <= 1 and target.numel() == dim
    else:
        dim = input.shape[1]
        ok = target.ndim == 2 and tuple(target.shape) == tuple(input.shape)
    if not ok:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    _check_long(target)
    check_index_range(target, -1, dim, RuntimeError, "argument #2 'target' is out of range")
    return call(MULTILABEL_MARGIN_LOSS, input, target, static=(("reduction", reduction),))


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """Mirrors ``torch.nn.functional.multilabel_soft_margin_loss``: the binary cross entropy of
    ``sigmoid(input)`` per class (optionally weighted), averaged over the classes (last dim),
    then reduced over the samples."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    loss = neg(add(mul(target, logsigmoid(input)), mul(rsub(target, 1), logsigmoid(neg(input)))))
    if weight is not None:
        loss = mul(loss, weight)
    class_dim = input.ndim - 1
    loss = P.div(_sum(loss, class_dim), input.shape[class_dim] if input.ndim else 1)
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    return reduce_tensor(loss, reduction)


PUBLIC = ()
TENSOR_METHODS = {}
