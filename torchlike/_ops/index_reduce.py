"""index_reduce: the rows of ``source`` reduced into the rows ``index`` of ``input`` along a dim
with 'prod', 'mean', 'amax' or 'amin' (index_add is scatter.py's).

One Op (IndexReduceBackward0) whose derivative is PyTorch's formula (FunctionsManual's
index_reduce_backward) as a custom_vjp: its treatment of zeros in 'prod' and of ties in
'amax' / 'amin' (the gradient shared equally among the elements equal to the result) is not
what jax's derivatives of the scatters would give.  The Tensor method index_reduce_ joins the
reduce family (reduce.py).
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype as D, _x64
from .._dispatch import Op, call, with_out
from .._inplace import inplace_method
from .._tensor import _wrap_dim

_REDUCES = ("prod", "mean", "amax", "amin")


def _extreme(dtype, reduce):
    """The identity of amax / amin in ``dtype``."""
    if jnp.issubdtype(dtype, jnp.floating):
        return -jnp.inf if reduce == "amax" else jnp.inf
    info = jnp.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


def _forward(x, index, src, reduce, include_self):
    """x, src with the reduced dim first; the reduction of src's rows into x's rows ``index``."""
    hit = jnp.zeros(x.shape[0], bool).at[index].set(True)
    hit = hit.reshape((-1,) + (1,) * (x.ndim - 1))
    if reduce == "prod":
        start = x if include_self else jnp.where(hit, jnp.ones_like(x), x)
        return start.at[index].multiply(src)
    if reduce == "mean":
        start = x if include_self else jnp.where(hit, jnp.zeros_like(x), x)
        total = start.at[index].add(src)
        counts = jnp.full(x.shape, 1 if include_self else 0, x.dtype).at[index].add(
            jnp.ones_like(src))
        counts = jnp.where(counts == 0, jnp.ones_like(counts), counts)
        if jnp.issubdtype(x.dtype, jnp.inexact):
            return total / counts
        return jnp.floor_divide(total, counts)
    start = x if include_self else jnp.where(hit, jnp.asarray(_extreme(x.dtype, reduce),
                                                              x.dtype), x)
    return start.at[index].max(src) if reduce == "amax" else start.at[index].min(src)


def _index_add(like, index, values):
    return jnp.zeros_like(like).at[index].add(values)


@functools.partial(jax.custom_vjp, nondiff_argnums=(3, 4))
def _index_reduce(x, index, src, reduce, include_self):
    return _forward(x, index, src, reduce, include_self)


def _index_reduce_fwd(x, index, src, reduce, include_self):
    result = _forward(x, index, src, reduce, include_self)
    return result, (x, index, src, result)


@_x64.scoped   # NOTE [ custom_vjp rules and 64-bit types ] in _x64.py
def _index_reduce_bwd(reduce, include_self, res, g):
    x, index, src, result = res
    if reduce == "prod":
        masked_x = jnp.where(x == 0, jnp.ones_like(x), x)
        grad_x = g * _forward(masked_x, index, src, reduce, include_self) / masked_x
        src_zero = src == 0
        zeros_at = _index_add(x, index, src_zero.astype(x.dtype))[index]
        single = src_zero & (zeros_at == 1)
        masked_src = jnp.where(single, jnp.ones_like(src), src)
        grad_src = jnp.where(single, (g * _forward(x, index, masked_src, reduce,
                                                   include_self))[index],
                             (g * result)[index] / jnp.where(src_zero, jnp.ones_like(src), src))
    elif reduce == "mean":
        n = jnp.full(g.shape, 1 if include_self else 0, g.dtype)
        n = n.at[index].add(jnp.ones_like(src))
        n = jnp.where(n == 0, jnp.ones_like(n), n)
        grad_x = g / n
        grad_src = g[index] / n[index]
    else:
        x_is = (x == result).astype(x.dtype)
        src_is = (src == result[index]).astype(x.dtype)
        shared = g / (x_is + _index_add(x, index, src_is))
        grad_x = x_is * shared
        grad_src = src_is * shared[index]
    if not include_self:
        hit = jnp.zeros(x.shape[0], bool).at[index].set(True)
        grad_x = jnp.where(hit.reshape((-1,) + (1,) * (x.ndim - 1)), jnp.zeros_like(grad_x),
                           grad_x)
    return grad_x, np.zeros(index.shape, jax.dtypes.float0), grad_src


_index_reduce.defvjp(_index_reduce_fwd, _index_reduce_bwd)


def _moved(x, index, src, dim, reduce, include_self):
    if x.ndim == 0:
        return _index_reduce(x.reshape(1), index, src.reshape(1), reduce, include_self)[0]
    out = _index_reduce(jnp.moveaxis(x, dim, 0), index, jnp.moveaxis(src, dim, 0), reduce,
                        include_self)
    return jnp.moveaxis(out, 0, dim)


# index is the last operand, so next_functions lists (input, source) as PyTorch's
INDEX_REDUCE = Op("index_reduce", lambda x, src, index, dim, reduce, include_self: _moved(
    x, index, src, dim, reduce, include_self), "IndexReduceBackward0", inputs=2)


def _checked(fname, input, dim, index, source, reduce):
    if reduce not in _REDUCES:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    if index.dtype not in (D.int32, D.int64):
        raise RuntimeError(f"{fname}(): Expected dtype int32/int64 for index but got: "
                           f"{index.dtype._scalar_name}")
    if index.ndim > 1:
        raise IndexError(f"{fname}(): Index is supposed to be a vector")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"{fname}(): self ({input.dtype._scalar_name}) and source "
                           f"({source.dtype._scalar_name}) must have the same scalar type")
    dim = _wrap_dim(dim, max(input.ndim, 1))
    n = index.numel()
    have = source.shape[dim] if source.ndim else 1
    if n != have:
        raise RuntimeError(f"{fname}(): Number of indices ({n}) should be equal to "
                           f"source.size(dim): ({have}), for dim: {dim}")
    values = np.asarray(index._value()).reshape(-1)
    size = input.shape[dim] if input.ndim else 1
    if values.size and (values.min() < -size or values.max() >= size):
        raise IndexError("index out of range in self")
    return dim


def index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None):
    """Mirrors ``torch.index_reduce``: ``input`` with each source row ``i`` along ``dim``
    reduced into row ``index[i]`` by 'prod', 'mean', 'amax' or 'amin' (``include_self``: the
    input's row takes part; else only the source rows), other rows unchanged."""
    dim = _checked("index_reduce_", input, dim, index, source, reduce)
    static = (("dim", dim), ("reduce", reduce), ("include_self", bool(include_self)))
    return with_out(call(INDEX_REDUCE, input, source, index.reshape(-1), static=static), out)


PUBLIC = ("index_reduce",)
TENSOR_METHODS = {"index_reduce": index_reduce, "index_reduce_": inplace_method(index_reduce)}
