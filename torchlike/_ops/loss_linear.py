"""``torch.nn.functional.linear_cross_entropy``: cross entropy of linearly transformed inputs,
as PyTorch composes it (``cross_entropy(linear(input, W, b), target)``), and its chunked path
(NOTE [ chunked linear cross entropy ] in nn/modules/linear_cross_entropy_options.py)."""
import math
import warnings

from .. import _dtype as D
from .attention import linear
from .loss import cross_entropy
from .shape import cat


def _check(input, linear_weight, linear_bias):
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    if input.shape[-1] != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions "
                           f"(in_features), got {input.shape[-1]} and {linear_weight.shape[-1]}, "
                           "respectively")
    classes = (linear_weight.shape[0], *linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != classes:
        raise RuntimeError(f"expected linear_bias shape {classes}, got "
                           f"{tuple(linear_bias.shape)}")
    if len(classes) > 1 and input.dim() == 1:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape "
                           f"{tuple(linear_weight.shape)} requires batched input, "
                           f"(N, {input.shape[-1]}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    return classes


def _chunked(input, linear_weight, target, linear_bias, weight, reduction, ignore_index, options):
    """The loss computed options.batch_chunk_size rows at a time in options.acc_dtype."""
    batched = input.dim() == 2
    x, t = (input, target) if batched else (input.unsqueeze(0), target.unsqueeze(0))
    options = options._adjust(x.shape[0], x.shape[1], linear_weight.shape[0], x.dtype,
                              x.device)
    acc = options.acc_dtype
    w = linear_weight.to(acc)
    b = None if linear_bias is None else linear_bias.to(acc)
    size = options.batch_chunk_size
    parts = []
    for start in range(0, x.shape[0], size):
        logits = linear(x[start:start + size].to(acc), w, b)
        parts.append(cross_entropy(logits, t[start:start + size], weight=weight,
                                   reduction="none", ignore_index=ignore_index))
    losses = cat(parts) if len(parts) > 1 else parts[0]
    if reduction == "none":
        out = losses if batched else losses.squeeze(0)
    elif reduction == "sum":
        out = losses.sum()
    else:   # the mean over the weights of the targets that count, as cross_entropy's
        counted = (t != ignore_index)
        total = (weight.to(acc)[t.clamp(min=0)] * counted).sum() if weight is not None \
            else counted.sum().to(acc)
        out = losses.sum() / total
    return out.to(input.dtype)


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction="mean", ignore_index=None, label_smoothing=0.0,
                         options=None):
    """Mirrors ``torch.nn.functional.linear_cross_entropy``: ``cross_entropy(linear(input,
    linear_weight, linear_bias), target, ...)``; a weight of shape (C, d1, ..., dK, in) gives
    the K-dimensional loss.  ``options`` (a ``LinearCrossEntropyOptions``) computes it in chunks
    of rows where PyTorch's chunked path applies (reductions 'mean' / 'sum' / 'none', no label
    smoothing, int64 class targets, 2-d weight), and warns and ignores them elsewhere."""
    classes = _check(input, linear_weight, linear_bias)
    logits_shape = (*input.shape[:-1], *classes)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains "
                           "probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    out_features = classes[1:]
    chunkable = (not out_features and reduction in ("mean", "sum", "none")
                 and label_smoothing == 0.0 and target.dtype is D.int64)
    if options is not None and not chunkable:
        bias_shape = None if linear_bias is None else tuple(linear_bias.shape)
        warnings.warn(
            "linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
            "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, out_features "
            f"== (). Got reduction={reduction!r}, label_smoothing={label_smoothing}, "
            f"target.dtype={target.dtype}, out_features={tuple(out_features)}, tracing=False, "
            f"linear_bias.shape={bias_shape}.", stacklevel=2)
    if options is not None and chunkable:
        return _chunked(input, linear_weight, target, linear_bias, weight, reduction,
                        ignore_index, options)
    if out_features:
        rows = math.prod(classes)
        linear_weight = linear_weight.reshape(rows, input.shape[-1])
        linear_bias = None if linear_bias is None else linear_bias.reshape(rows)
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=ignore_index, label_smoothing=label_smoothing)
