"""Connectionist temporal classification: mirrors ``torch.nn.functional.ctc_loss``.

The loss is one ``CtcLossBackward0`` node, as in PyTorch.  Forward: the standard alpha
recursion in log space over the extended label sequence (blank, l1, blank, l2, ..., blank),
one ``lax.scan`` over time, vectorized over the batch and the states.  Its gradient is
PyTorch's (NOTE [ ctc gradient ]), from the beta recursion, a reverse ``lax.scan``.

NOTE [ ctc gradient ]
PyTorch's CTC backward returns ``exp(log_probs) - exp(log_alpha_beta + nll - log_probs)``
(times the incoming gradient) for t < input_length, and 0 after: the gradient with respect to
the *logits* when ``log_probs = log_softmax(logits)``, not the derivative with respect to
``log_probs`` that autodiff of the forward gives (the two differ by ``exp(log_probs)``, which
log_softmax's backward then cancels).  Users compare gradients on ``log_probs`` leaves, so the
op keeps PyTorch's convention through a ``jax.custom_vjp``.  A loss that is infinite (no
alignment exists) gets NaN gradients, or zeros with ``zero_infinity``, as in PyTorch.
"""
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import _amp_hook
from .. import _x64
from .._dispatch import Op, call
from .._tensor import Tensor, host_values
from . import shape as S
from .loss import reduce_tensor, reduction_of
from .pointwise import _no_kernel, div, where


def _logsumexp3(a, b, c):
    m = jnp.maximum(jnp.maximum(a, b), c)
    m = jnp.where(jnp.isneginf(m), jnp.zeros((), m.dtype), m)
    return jnp.log(jnp.exp(a - m) + jnp.exp(b - m) + jnp.exp(c - m)) + m


def _shift(x, k, fill):
    """x shifted k states right (k > 0: state s reads s - k) or left (k < 0), padded."""
    pad = jnp.full(x.shape[:-1] + (abs(k),), fill, x.dtype)
    if k > 0:
        return jnp.concatenate([pad, x[..., :-k]], axis=-1)
    return jnp.concatenate([x[..., -k:], pad], axis=-1)


def _extended(labels, blank):
    """(N, 2S+1) extended labels and where a state may be entered from two states back."""
    n, s = labels.shape
    ext = jnp.full((n, 2 * s + 1), blank, labels.dtype).at[:, 1::2].set(labels)
    skip = (jnp.arange(2 * s + 1) % 2 == 1) & (ext != _shift(ext, 2, blank))
    return ext, skip & (jnp.arange(2 * s + 1) >= 2)


def _alphas(lp_ext, skip, in_len, tg_len):
    """log alpha for every (t, n, state), frozen after each input's length, and the nll."""
    neginf = jnp.array(-jnp.inf, lp_ext.dtype)
    states = jnp.arange(lp_ext.shape[-1])
    first = (states == 0) | ((states == 1) & (tg_len[:, None] > 0))
    alpha0 = jnp.where(first, lp_ext[0], neginf)

    def step(alpha, xs):
        t, lp_t = xs
        new = _logsumexp3(alpha, _shift(alpha, 1, neginf),
                          jnp.where(skip, _shift(alpha, 2, neginf), neginf)) + lp_t
        new = jnp.where((t < in_len)[:, None], new, alpha)
        return new, new

    t_steps = jnp.arange(1, lp_ext.shape[0])
    last, rest = lax.scan(step, alpha0, (t_steps, lp_ext[1:]))
    alphas = jnp.concatenate([alpha0[None], rest], axis=0)
    end = 2 * tg_len
    l1 = jnp.take_along_axis(last, end[:, None], axis=1)[:, 0]
    l2 = jnp.where(tg_len > 0, jnp.take_along_axis(last, jnp.maximum(end - 1, 0)[:, None],
                                                   axis=1)[:, 0], neginf)
    ll = jnp.logaddexp(l1, l2)
    ll = jnp.where(in_len == 0, jnp.where(tg_len == 0, 0.0, neginf).astype(ll.dtype), ll)
    return alphas, -ll


def _betas(lp_ext, skip, in_len, tg_len):
    neginf = jnp.array(-jnp.inf, lp_ext.dtype)
    states = jnp.arange(lp_ext.shape[-1])
    end = (2 * tg_len)[:, None]
    last = (states == end) | ((states == end - 1) & (tg_len[:, None] > 0))
    skip_back = _shift(skip, -2, False)   # state s may jump to s + 2

    def step(beta, xs):
        t, lp_t = xs
        rec = _logsumexp3(beta, _shift(beta, -1, neginf),
                          jnp.where(skip_back, _shift(beta, -2, neginf), neginf)) + lp_t
        start = jnp.where(last, lp_t, neginf)
        t_last = (in_len - 1)[:, None]
        new = jnp.where(t == t_last, start, jnp.where(t < t_last, rec, neginf))
        return new, new

    t_steps = jnp.arange(lp_ext.shape[0])
    init = jnp.full(lp_ext.shape[1:], neginf)
    _, betas = lax.scan(step, init, (t_steps, lp_ext), reverse=True)
    return betas


@partial(jax.custom_vjp, nondiff_argnums=(4, 5))
def _ctc_core(lp, labels, in_len, tg_len, blank, zero_infinity):
    return _ctc_forward(lp, labels, in_len, tg_len, blank)[0]


def _ctc_forward(lp, labels, in_len, tg_len, blank):
    ext, skip = _extended(labels, blank)
    lp_ext = jnp.take_along_axis(lp, jnp.broadcast_to(ext[None], lp.shape[:1] + ext.shape),
                                 axis=2)
    alphas, nll = _alphas(lp_ext, skip, in_len, tg_len)
    return nll, (lp, labels, in_len, tg_len, alphas, nll)


def _ctc_fwd(lp, labels, in_len, tg_len, blank, zero_infinity):
    return _ctc_forward(lp, labels, in_len, tg_len, blank)


@_x64.scoped   # NOTE [ custom_vjp rules and 64-bit types ] in _x64.py
def _ctc_bwd(blank, zero_infinity, res, g):
    # NOTE [ ctc gradient ]: PyTorch's convention, from alpha * beta collected per class.
    lp, labels, in_len, tg_len, alphas, nll = res
    ext, skip = _extended(labels, blank)
    lp_ext = jnp.take_along_axis(lp, jnp.broadcast_to(ext[None], lp.shape[:1] + ext.shape),
                                 axis=2)
    ab = alphas + _betas(lp_ext, skip, in_len, tg_len)                 # (T, N, states)
    top = jnp.max(ab, axis=-1, keepdims=True)
    top = jnp.where(jnp.isfinite(top), top, jnp.zeros((), top.dtype))
    onehot = (ext[:, :, None] == jnp.arange(lp.shape[-1])).astype(lp.dtype)  # (N, states, C)
    collected = jnp.einsum("tns,nsc->tnc", jnp.exp(ab - top), onehot,
                           precision=lax.Precision.HIGHEST)
    log_ab = jnp.log(collected) + top
    grad = (jnp.exp(lp) - jnp.exp(log_ab + nll[None, :, None] - lp)) * g[None, :, None]
    live = jnp.arange(lp.shape[0])[:, None, None] < in_len[None, :, None]
    if zero_infinity:
        live = live & ~jnp.isinf(nll)[None, :, None]
    return jnp.where(live, grad, jnp.zeros((), grad.dtype)), None, None, None


_ctc_core.defvjp(_ctc_fwd, _ctc_bwd)


def _ctc(lp, targets, in_len, tg_len, blank, max_len, concatenated, zero_infinity):
    in_len, tg_len = in_len.astype(jnp.int64), tg_len.astype(jnp.int64)
    targets = targets.astype(jnp.int64)
    n = lp.shape[1]
    if concatenated:
        if targets.shape[0] == 0 or max_len == 0:
            labels = jnp.zeros((n, max_len), jnp.int64)
        else:
            starts = jnp.cumsum(tg_len) - tg_len
            idx = jnp.clip(starts[:, None] + jnp.arange(max_len), 0, targets.shape[0] - 1)
            labels = targets[idx]
    else:
        labels = targets[:, :max_len]
    return _ctc_core(lp, labels, in_len, tg_len, blank, zero_infinity)


CTC_LOSS = Op("ctc_loss", _ctc, "CtcLossBackward0", inputs=1)


def _lengths(lengths, name, batch):
    """(array or Tensor for the op, numpy values or None while tracing)."""
    if isinstance(lengths, Tensor):
        if lengths.dtype.is_floating_point or lengths.dtype.is_complex:
            raise RuntimeError(f"{name} must be integral")
        values = host_values(lengths)
        t = lengths if lengths.ndim else S.reshape(lengths, 1)
    else:
        values = np.asarray(lengths, dtype=np.int64).reshape(-1)
        t = jnp.asarray(values)
    if (values.size if values is not None else t.shape[0]) != batch:
        raise RuntimeError(f"{name} must be of size batch_size")
    return t, values


def _check_shapes(log_probs, targets):
    where_ = " (while checking arguments for ctc_loss_allocate_outputs)"
    if log_probs.ndim != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {log_probs.ndim}-dimensional "
                           f"tensor for argument #1 'log_probs'{where_}")
    if not 1 <= targets.ndim <= 2:
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {targets.ndim}-dimensional "
                           f"tensor for argument #2 'targets'{where_}")
    if targets.ndim == 2 and targets.shape[0] != log_probs.shape[1]:
        raise RuntimeError(f"Expected tensor to have size {log_probs.shape[1]} at dimension 0, but "
                           f"got size {targets.shape[0]} for argument #2 'targets'{where_}")
    if not log_probs.dtype.is_floating_point:
        raise _no_kernel("ctc_loss_cpu", log_probs.dtype)


def _check_lengths(log_probs, targets, in_vals, tg_vals, concatenated):
    where_ = " (while checking arguments for ctc_loss_allocate_outputs)"
    if in_vals is not None and in_vals.size and in_vals.max() > log_probs.shape[0]:
        raise RuntimeError(f"Expected input_lengths to have value at most {log_probs.shape[0]}, "
                           f"but got value {in_vals.max()}{where_}")
    if tg_vals is None:
        return
    if tg_vals.size and tg_vals.min() < 0:
        raise RuntimeError("Expected target_lengths to have value at least 0, but got value "
                           f"{tg_vals.min()}{where_}")
    if concatenated and targets.shape[0] != tg_vals.sum():
        raise RuntimeError(f"Expected tensor to have size {tg_vals.sum()} at dimension 0, but "
                           f"got size {targets.shape[0]} for argument #2 'targets'{where_}")
    if not concatenated and tg_vals.size and targets.shape[1] < tg_vals.max():
        raise RuntimeError(f"Expected tensor to have size at least {tg_vals.max()} at dimension "
                           f"1, but got size {targets.shape[1]} for argument #2 'targets'"
                           f"{where_}")


@_amp_hook.entry("ctc_loss")
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """Mirrors ``torch.nn.functional.ctc_loss``: the negative log likelihood of the targets
    under all alignments of ``log_probs``.

    Args:
        log_probs: (T, N, C) log-probabilities (e.g. ``log_softmax`` output), or (T, C).
        targets: (N, S) padded class indices, or 1-D: all targets concatenated.
        input_lengths, target_lengths: (N,) Tensors or sequences of ints.
        blank: the blank label.  reduction: 'none' | 'mean' (each loss divided by its target
            length, then the batch mean) | 'sum'.
        zero_infinity: infinite losses (no possible alignment) and their gradients become 0.
    """
    reduction = reduction_of(reduction)
    if isinstance(input_lengths, Tensor) != isinstance(target_lengths, Tensor):
        raise TypeError("ctc_loss(): input_lengths and target_lengths must both be Tensors or "
                        "both be tuples of ints")
    batched = log_probs.ndim == 3
    if not batched:
        log_probs, targets = S.unsqueeze(log_probs, 1), S.unsqueeze(targets, 0)
    _check_shapes(log_probs, targets)
    n, n_classes = log_probs.shape[1], log_probs.shape[2]
    if not 0 <= blank < n_classes:
        raise RuntimeError("blank must be in label range")
    in_len, in_vals = _lengths(input_lengths, "input_lengths", n)
    tg_len, tg_vals = _lengths(target_lengths, "target_lengths", n)
    concatenated = targets.ndim == 1
    _check_lengths(log_probs, targets, in_vals, tg_vals, concatenated)
    if not concatenated:
        max_len = targets.shape[1]
    elif tg_vals is not None:
        max_len = int(tg_vals.max()) if tg_vals.size else 0
    else:   # traced lengths: the concatenation's length bounds every target
        max_len = targets.shape[0]
    static = (("blank", int(blank)), ("max_len", max_len), ("concatenated", concatenated),
              ("zero_infinity", bool(zero_infinity)))
    loss = call(CTC_LOSS, log_probs, targets, in_len, tg_len, static=static)
    if zero_infinity:
        loss = where(loss == float("inf"), 0.0, loss)
    if reduction == "mean":
        lengths = tg_len if isinstance(tg_len, Tensor) else Tensor._wrap(tg_len)
        lengths = lengths.to(loss.dtype).clamp_min(1)
        return reduce_tensor(div(loss, lengths), "mean")
    if reduction == "sum":
        return reduce_tensor(loss, "sum")
    return loss if batched else S.squeeze(loss, 0)


PUBLIC = ()
TENSOR_METHODS = {}
