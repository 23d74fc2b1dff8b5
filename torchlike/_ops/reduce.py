"""Reductions: sum and mean (the rest of the family lives here too as it lands)."""
import jax.numpy as jnp

from .. import _dtype as D
from .._dispatch import Op, call, with_out as _out
from .._tensor import _wrap_dim


def _dims(dim, ndim):
    """None for a full reduction, else a sorted tuple of wrapped dims."""
    if dim is None:
        return None
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if not dims:
        return None
    wrapped = tuple(sorted(_wrap_dim(d, ndim) for d in dims))
    if ndim == 0:   # a 0-dim tensor reduces over its one implicit dim: nothing to do
        return ()
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"dim {wrapped[0]} appears multiple times in the list of dims")
    return wrapped


def _sum(x, dims, keepdim, dtype):
    return jnp.sum(x, axis=dims, keepdims=keepdim, dtype=dtype)


SUM = {False: Op("sum", _sum, "SumBackward0", saves=()),
       True: Op("sum", _sum, "SumBackward1", saves=())}
MEAN = {False: Op("mean", lambda x, dims, keepdim, dtype: jnp.mean(x, axis=dims, keepdims=keepdim,
                                                                   dtype=dtype),
                  "MeanBackward0", saves=()),
        True: Op("mean", lambda x, dims, keepdim, dtype: jnp.mean(x, axis=dims, keepdims=keepdim,
                                                                  dtype=dtype),
                 "MeanBackward1", saves=())}


def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Mirrors ``torch.sum`` (integer and bool inputs sum to int64, as in PyTorch)."""
    dims = _dims(dim, input.ndim)
    if dtype is None:
        dt = input.dtype
        dtype = D.int64 if not (dt.is_floating_point or dt.is_complex) else dt
    dtype = D.to_dtype(dtype)
    static = (("dims", dims), ("keepdim", bool(keepdim)), ("dtype", dtype._np))
    return _out(call(SUM[dim is not None], input, static=static), out)


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Mirrors ``torch.mean``: integer inputs need an explicit float ``dtype``."""
    dt = D.to_dtype(dtype) if dtype is not None else input.dtype
    if not (dt.is_floating_point or dt.is_complex):
        from .._inplace import _scalar_type_name
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a "
                           "floating point or complex dtype. Got: " + _scalar_type_name(dt))
    dims = _dims(dim, input.ndim)
    static = (("dims", dims), ("keepdim", bool(keepdim)), ("dtype", dt._np))
    return _out(call(MEAN[dim is not None], input, static=static), out)
