"""Gradient clipping: mirrors ``torch.nn.utils.clip_grad``.

Each function reads every gradient's array, computes in ONE jitted function over the whole list
(the per-tensor norms, their total, the scaled or clamped gradients) and writes the new arrays back
into the same ``.grad`` tensors.  PyTorch's foreach kernels do the same job; XLA fuses the loop,
so ``foreach`` is accepted and ignored.  Everything runs without recording autograd history, as
in PyTorch.  With traced gradients (whole-step compile) the same code traces; only the eager-only
``error_if_nonfinite`` check (a host sync, as in PyTorch) is skipped then.
"""
import functools
import types
import warnings

import jax.numpy as jnp

from ... import _creation, _x64
from ..._dispatch import is_traced
from ..._quick import quick_program
from ..._ops.reduce import _vector_norm
from ..._tensor import Tensor


def _norm_of_norms(arrays, norm_type):
    """The ``norm_type``-norm of the per-tensor norms, as PyTorch builds it (so the rounding
    matches): each tensor's norm, stacked in the promoted dtype, then normed again."""
    norms = [_vector_norm(a, norm_type, None, False, None) for a in arrays]
    dt = functools.reduce(jnp.promote_types, [n.dtype for n in norms])
    return _vector_norm(jnp.stack([n.astype(dt) for n in norms]), norm_type, None, False, None)


def _scaled(arrays, max_norm, total):
    """Each gradient times ``min(max_norm / (total + 1e-6), 1)``; half-precision gradients are
    multiplied in float32 and rounded back (PyTorch's opmath)."""
    coef = jnp.minimum(max_norm / (total + 1e-6), 1.0)
    out = []
    for g in arrays:
        real = jnp.zeros((), g.dtype).real.dtype
        op = jnp.promote_types(real, jnp.float32) if jnp.finfo(real).bits < 32 else real
        out.append((g * coef.astype(op)).astype(g.dtype))
    return out


@functools.partial(quick_program, static_argnames=("norm_type",))
def _total_norm_jit(arrays, norm_type):
    return _norm_of_norms(arrays, norm_type)


@quick_program
def _scale_jit(arrays, max_norm, total):
    return _scaled(arrays, max_norm, total)


@functools.partial(quick_program, static_argnames=("norm_type",))
def _clip_norm_jit(arrays, max_norm, norm_type):
    total = _norm_of_norms(arrays, norm_type)
    return total, _scaled(arrays, max_norm, total)


@quick_program
def _clamp_jit(arrays, clip_value):
    return [jnp.clip(g, -clip_value, clip_value).astype(g.dtype) for g in arrays]


def _as_list(tensors):
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def _grads(parameters):
    return [p.grad for p in parameters if p.grad is not None]


def _arrays(tensors):
    return tuple(t._value() for t in tensors)


def _write(grads, arrays):
    for g, a in zip(grads, arrays):
        g._write(a)


def _check_finite(total, norm_type, error_if_nonfinite):
    if error_if_nonfinite and not is_traced((total,)) and not bool(jnp.isfinite(total)):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the gradients "
            "by the non-finite norm anyway, set `error_if_nonfinite=False`")


@_x64.scoped
def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Mirrors ``torch.nn.utils.get_total_norm``: the ``norm_type``-norm of all ``tensors``
    viewed as one vector (computed as the norm of their individual norms).

    Args:
        tensors: a Tensor or an iterable of Tensors.
        norm_type: the p of the p-norm; ``inf`` or ``'inf'`` for the max norm.
        error_if_nonfinite: raise a RuntimeError if the total is nan or inf.
        foreach: accepted for compatibility; one fused computation is always used.

    Returns:
        The total norm, a 0-dim Tensor (``tensor(0.)`` for no tensors).
    """
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return _creation.tensor(0.0)
    arrays = _arrays(tensors)
    total = (_norm_of_norms(arrays, norm_type) if is_traced(arrays)
             else _total_norm_jit(arrays, norm_type=norm_type))
    _check_finite(total, norm_type, error_if_nonfinite)
    return Tensor._wrap(total)


@_x64.scoped
def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Mirrors ``torch.nn.utils.clip_grads_with_norm_``: scale every gradient in place by
    ``min(max_norm / (total_norm + 1e-6), 1)`` for a total norm computed beforehand (e.g. by
    :func:`get_total_norm`).  Returns None."""
    grads = _grads(_as_list(parameters))
    max_norm = float(max_norm)
    if not grads:
        return
    total = total_norm._value() if isinstance(total_norm, Tensor) else jnp.asarray(total_norm)
    arrays = _arrays(grads)
    if is_traced(arrays + (total,)):
        _write(grads, _scaled(arrays, max_norm, total))
    else:
        _write(grads, _scale_jit(arrays, max_norm, total))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Mirrors ``torch.nn.utils.clip_grad_norm_``: scale the gradients of ``parameters`` in place
    so that their total ``norm_type``-norm (all gradients viewed as one vector) is at most
    ``max_norm``.

    Args:
        parameters: a Tensor or an iterable of Tensors whose ``.grad`` is clipped.
        max_norm: the largest total norm allowed.
        norm_type: the p of the p-norm; ``inf`` or ``'inf'`` for the max norm.
        error_if_nonfinite: raise a RuntimeError (before touching any gradient) if the total
            norm is nan or inf.
        foreach: accepted for compatibility; one fused computation is always used.

    Returns:
        The total norm of the gradients before clipping, a 0-dim Tensor.

    Example::

        >>> loss.backward()
        >>> torchlike.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.",
                          stacklevel=2)
    return _clip_norm(parameters, max_norm, norm_type, error_if_nonfinite)


@_x64.scoped
def _clip_norm(parameters, max_norm, norm_type, error_if_nonfinite):
    grads = _grads(parameters)
    norm_type = float(norm_type)
    max_norm = float(max_norm)
    if not grads:
        return _creation.tensor(0.0)
    arrays = _arrays(grads)
    if is_traced(arrays):
        total = _norm_of_norms(arrays, norm_type)
        new = _scaled(arrays, max_norm, total)
    else:
        total, new = _clip_norm_jit(arrays, max_norm, norm_type=norm_type)
    _check_finite(total, norm_type, error_if_nonfinite)
    _write(grads, new)
    return Tensor._wrap(total)


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Mirrors the deprecated ``torch.nn.utils.clip_grad_norm``: :func:`clip_grad_norm_` with a
    FutureWarning."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@_x64.scoped
def clip_grad_value_(parameters, clip_value, foreach=None):
    """Mirrors ``torch.nn.utils.clip_grad_value_``: clamp every gradient of ``parameters`` in
    place to ``[-clip_value, clip_value]``.  Returns None."""
    parameters = _as_list(parameters)
    clip_value = float(clip_value)
    grads = _grads(parameters)
    if not grads:
        return
    if any(g.is_complex() for g in grads):
        raise NotImplementedError("clamp is not supported for complex types")
    arrays = _arrays(grads)
    if is_traced(arrays):
        _write(grads, [jnp.clip(g, -clip_value, clip_value).astype(g.dtype) for g in arrays])
    else:
        _write(grads, _clamp_jit(arrays, clip_value))
