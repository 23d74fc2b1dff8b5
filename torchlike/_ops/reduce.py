"""Reductions: sum, mean, prod, max/min, statistics, norms, order statistics, scans.

Each op is one jnp function of the input and static dims; ``saves`` mirrors what PyTorch keeps for
backward.  Value-selecting reductions (``max(dim)``, ``median(dim)``, ``mode``, ``cummax``) gather
the chosen elements, so jax.vjp sends the gradient to the selected index only, as PyTorch does;
PyTorch saves the indices (an output) there, not the input: ``saves={0: ()}``.
"""
import builtins
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import _amp_hook
from .. import _dtype as D, _x64
from .. import return_types as RT
from .._dispatch import Op, call, with_out as _out
from .._inplace import inplace_method
from .._quick import SOFTMAX_FUSION
from .._tensor import Tensor, _wrap_dim
from .padded import rows_over_dim
from .pointwise import div, maximum, minimum


_INTS = (int, np.integer)   # a dim may be a numpy integer, as PyTorch's parser takes


def _dims(dim, ndim):
    """None for a full reduction, else a sorted tuple of wrapped dims."""
    if dim is None:
        return None
    dims = (dim,) if isinstance(dim, _INTS) else tuple(dim)
    if not dims:
        return None
    wrapped = tuple(sorted(_wrap_dim(d, ndim) for d in dims))
    if ndim == 0:   # a 0-dim tensor reduces over its one implicit dim: nothing to do
        return ()
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"dim {wrapped[0]} appears multiple times in the list of dims")
    return wrapped




def _is_float(dt):
    return dt.is_floating_point or dt.is_complex


def _int_to_long(input, dtype):
    """PyTorch's accumulate dtype: integers and bools sum (prod, cumsum) to int64."""
    if dtype is None:
        dt = input.dtype
        return D.int64 if not _is_float(dt) else dt
    return D.to_dtype(dtype)


def _check_nonempty(name, input, dims, full_error=RuntimeError):
    """PyTorch's errors for reductions without an identity (max, argmax, ...) on empty input."""
    if dims is None:
        if input.numel() == 0:
            extra = "" if full_error is IndexError else \
                " Specify the reduction dim with the 'dim' argument."
            raise full_error(f"{name}(): Expected reduction dim to be specified for "
                             f"input.numel() == 0.{extra}")
        return
    for d in dims:
        if input.ndim and input.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _squeeze_kept(x, axis, keepdim):
    return x if keepdim else jnp.squeeze(x, axis)


# --- sum, mean, nansum, nanmean, prod -------------------------------------------------------------

def _sum(x, dims, keepdim, dtype):
    return jnp.sum(x, axis=dims, keepdims=keepdim, dtype=dtype)


def _mean(x, dims, keepdim, dtype):
    return jnp.mean(x, axis=dims, keepdims=keepdim, dtype=dtype)


SUM = {False: Op("sum", _sum, "SumBackward0", saves=()),
       True: Op("sum", _sum, "SumBackward1", saves=())}
MEAN = {False: Op("mean", _mean, "MeanBackward0", saves=()),
        True: Op("mean", _mean, "MeanBackward1", saves=())}
def _nansum_of(x, dims, keepdim, dtype):
    return jnp.nansum(x, axis=dims, keepdims=keepdim, dtype=dtype)


_nansum = jax.custom_jvp(_nansum_of, nondiff_argnums=(1, 2, 3))


@_nansum.defjvp
def _nansum_jvp(dims, keepdim, dtype, primals, tangents):
    # NOTE: PyTorch's gradient is grad * ~isnan(x), a product: an infinite gradient (nanmean
    # of an all-NaN row divides by 0) gives NaN, where jnp.nansum's where would give 0.
    # Spelled where(nan, t * 0, t): XLA folds a multiply by a converted mask into a select.
    (x,), (t,) = primals, tangents
    return (_nansum_of(x, dims, keepdim, dtype),
            jnp.sum(jnp.where(jnp.isnan(x), t * 0, t), axis=dims, keepdims=keepdim, dtype=dtype))


NANSUM = Op("nansum", _nansum, "NansumBackward0", saves=(0,))
NOT_NAN = Op("not_nan_count", lambda x, dims, keepdim: jnp.sum(
    ~jnp.isnan(x), axis=dims, keepdims=keepdim, dtype=jnp.int64), None, saves=())
PROD = {False: Op("prod", lambda x, dims, keepdim, dtype: jnp.prod(x, axis=dims, dtype=dtype,
                                                                   keepdims=keepdim),
                  "ProdBackward0", saves=(0, "result")),
        True: Op("prod", lambda x, dims, keepdim, dtype: jnp.prod(x, axis=dims, dtype=dtype,
                                                                  keepdims=keepdim),
                 "ProdBackward1", saves=(0, "result"))}


def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Mirrors ``torch.sum`` (integer and bool inputs sum to int64, as in PyTorch)."""
    dims = _dims(dim, input.ndim)
    static = (("dims", dims), ("keepdim", bool(keepdim)), ("dtype", _int_to_long(input, dtype)._np))
    return _out(call(SUM[dim is not None], input, static=static), out)


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Mirrors ``torch.mean``: integer inputs need an explicit float ``dtype``."""
    dt = D.to_dtype(dtype) if dtype is not None else input.dtype
    if not _is_float(dt):
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a "
                           "floating point or complex dtype. Got: " + dt._scalar_name)
    dims = _dims(dim, input.ndim)
    static = (("dims", dims), ("keepdim", bool(keepdim)), ("dtype", dt._np))
    return _out(call(MEAN[dim is not None], input, static=static), out)


def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Mirrors ``torch.nansum``: sum treating NaN as zero (its gradient is 0 there)."""
    dims = _dims(dim, input.ndim)
    static = (("dims", dims), ("keepdim", bool(keepdim)), ("dtype", _int_to_long(input, dtype)._np))
    return _out(call(NANSUM, input, static=static), out)


def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Mirrors ``torch.nanmean``: ``nansum / (number of non-NaN elements)``, as PyTorch
    composes it (its grad_fn is ``DivBackward0``)."""
    if not _is_float(input.dtype):
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {input.dtype._scalar_name}")
    dims = _dims(dim, input.ndim)
    count = call(NOT_NAN, input, static=(("dims", dims), ("keepdim", bool(keepdim))))
    return _out(div(nansum(input, dim, keepdim, dtype=dtype), count), out)


@_amp_hook.entry("prod")
def prod(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Mirrors ``torch.prod`` (one ``dim`` at most; integers and bools multiply to int64).
    Zeros get PyTorch's gradient (the product of the other elements), not a division by 0."""
    if dim is not None and not isinstance(dim, _INTS):
        raise TypeError(f"prod() received an invalid combination of arguments - got "
                        f"({type(dim).__name__}), but expected (int dim, bool keepdim = False, "
                        "*, torch.dtype dtype = None)")
    dims = _dims(dim, input.ndim)
    static = (("dims", dims), ("keepdim", bool(keepdim)), ("dtype", _int_to_long(input, dtype)._np))
    return _out(call(PROD[dim is not None], input, static=static), out)


# --- max, min, amax, amin, aminmax, argmax, argmin ------------------------------------------------

@jax.custom_jvp
def _spread(x, v):
    """``v`` (a full reduction of x that picked one value), with its gradient spread evenly over
    the elements equal to it."""
    return v


@_spread.defjvp
def _spread_jvp(primals, tangents):
    # NOTE: PyTorch's evenly_distribute_backward (max(), min(), median()): ties share the
    # gradient, and a NaN result sends it to the NaN elements.
    x, v = primals
    mask = (x == v) | (jnp.isnan(x) & jnp.isnan(v))
    return v, jnp.sum(jnp.where(mask, tangents[0], 0)) / jnp.sum(mask)


def _evenly(x, v):
    return _spread(x, lax.stop_gradient(v)) if jnp.issubdtype(x.dtype, jnp.inexact) else v


def _select(x, dim, keepdim, arg):
    """(values, int64 indices) of the elements that ``arg`` picks along ``dim``."""
    if x.ndim == 0:
        return x, jnp.zeros((), jnp.int64)
    idx = arg(x, axis=dim, keepdims=True)
    return (_squeeze_kept(jnp.take_along_axis(x, idx, axis=dim), dim, keepdim),
            _squeeze_kept(idx.astype(jnp.int64), dim, keepdim))


def _first_extreme(x, axis=None, keepdims=False, take_max=True):
    """Index of the first maximum (minimum) along axis, NaN counting as the extreme, as PyTorch
    and jnp.argmax do.  NOTE: two plain reductions; XLA's variadic argmax reduction is ~4x
    slower on the CPU."""
    if axis is None:
        x, axis = x.reshape(-1), 0
    v = jnp.max(x, axis, keepdims=True) if take_max else jnp.min(x, axis, keepdims=True)
    hit = x == v
    if jnp.issubdtype(x.dtype, jnp.inexact):
        hit = hit | (jnp.isnan(x) & jnp.isnan(v))
    iota = lax.broadcasted_iota(jnp.int64, x.shape, axis)
    return jnp.min(jnp.where(hit, iota, x.shape[axis]), axis, keepdims=keepdims)


def _argmax(x, axis=None, keepdims=False):
    return _first_extreme(x, axis, keepdims, take_max=True)


def _argmin(x, axis=None, keepdims=False):
    return _first_extreme(x, axis, keepdims, take_max=False)


MAX_ALL = Op("max", lambda x: _evenly(x, jnp.max(x)), "MaxBackward1", saves=(0, "result"))
MIN_ALL = Op("min", lambda x: _evenly(x, jnp.min(x)), "MinBackward1", saves=(0, "result"))
MAX_DIM = Op("max", lambda x, dim, keepdim: _select(x, dim, keepdim, _argmax), "MaxBackward0",
             saves={0: ()})
MIN_DIM = Op("min", lambda x, dim, keepdim: _select(x, dim, keepdim, _argmin), "MinBackward0",
             saves={0: ()})
# NOTE: jnp.max's own derivative already spreads the gradient evenly over ties, as PyTorch's
# amax/amin backward (scale_grad_by_count) does.
AMAX = Op("amax", lambda x, dims, keepdim: jnp.max(x, axis=dims, keepdims=keepdim),
          "AmaxBackward0", saves=(0, "result"))
AMIN = Op("amin", lambda x, dims, keepdim: jnp.min(x, axis=dims, keepdims=keepdim),
          "AminBackward0", saves=(0, "result"))
AMINMAX = Op("aminmax", lambda x, dims, keepdim: (jnp.min(x, axis=dims, keepdims=keepdim),
                                                  jnp.max(x, axis=dims, keepdims=keepdim)),
             "AminmaxBackward0", saves=(0, "result"))


def _argpick(x, dim, keepdim, arg):
    if dim is None:
        i = arg(x.reshape(-1)).astype(jnp.int64)
        return i.reshape((1,) * x.ndim) if keepdim else i
    return _select(x, dim, keepdim, arg)[1]


# (a short batch runs a longer one's program: NOTE [ a short call in a longer one's program ])
ARGMAX = Op("argmax", lambda x, dim, keepdim: _argpick(x, dim, keepdim, _argmax), None,
            saves=(), bucket=rows_over_dim)
ARGMIN = Op("argmin", lambda x, dim, keepdim: _argpick(x, dim, keepdim, _argmin), None,
            saves=(), bucket=rows_over_dim)


def _along(name, op, result_type, input, dim, keepdim, out):
    """The (values, indices) named tuple ``op`` picks along one dim (max, min, median, mode)."""
    d = _wrap_dim(dim, input.ndim)
    _check_nonempty(name, input, (d,))
    values, indices = call(op, input, static=(("dim", d), ("keepdim", bool(keepdim))))
    return _out(result_type(values, indices), out)


def _extreme(name, full_op, dim_op, other_fn, result_type, input, dim, keepdim, out):
    if isinstance(dim, Tensor):   # max(a, b): the elementwise maximum
        return other_fn(input, dim, out=out)
    if dim is None:
        _check_nonempty(name, input, None)
        return _out(call(full_op, input), out)
    if not isinstance(dim, _INTS):
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"({type(dim).__name__}), but expected one of: (), (Tensor other), "
                        "(int dim, bool keepdim = False)")
    return _along(name, dim_op, result_type, input, dim, keepdim, out)


def max(input, dim=None, keepdim=False, *, out=None):  # noqa: A001
    """Mirrors ``torch.max``: ``max(input)`` is a 0-dim tensor; ``max(input, dim, keepdim)``
    returns ``(values, indices)`` (first occurrence on ties); ``max(input, other)`` is
    ``maximum``."""
    return _extreme("max", MAX_ALL, MAX_DIM, maximum, RT.max, input, dim, keepdim, out)


def min(input, dim=None, keepdim=False, *, out=None):  # noqa: A001
    """Mirrors ``torch.min`` (see ``max``)."""
    return _extreme("min", MIN_ALL, MIN_DIM, minimum, RT.min, input, dim, keepdim, out)


def amax(input, dim=(), keepdim=False, *, out=None):
    """Mirrors ``torch.amax``: ties share the gradient evenly."""
    dims = _dims(dim, input.ndim)
    _check_nonempty("amax", input, dims)
    return _out(call(AMAX, input, static=(("dims", dims), ("keepdim", bool(keepdim)))), out)


def amin(input, dim=(), keepdim=False, *, out=None):
    """Mirrors ``torch.amin``: ties share the gradient evenly."""
    dims = _dims(dim, input.ndim)
    _check_nonempty("amin", input, dims)
    return _out(call(AMIN, input, static=(("dims", dims), ("keepdim", bool(keepdim)))), out)


def aminmax(input, *, dim=None, keepdim=False, out=None):
    """Mirrors ``torch.aminmax``: ``return_types.aminmax(min, max)``."""
    dims = None if dim is None else (_wrap_dim(dim, input.ndim),) if input.ndim else ()
    if dims is None and input.numel() == 0:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                           "operation has no identity.")
    if dims and input.shape[dims[0]] == 0:
        raise IndexError(f"aminmax: Expected reduction dim {dims[0]} to have non-zero size.")
    lo, hi = call(AMINMAX, input, static=(("dims", dims), ("keepdim", bool(keepdim))))
    return _out(RT.aminmax(lo, hi), out)


def _arg(name, op, input, dim, keepdim, out):
    if input.dtype is D.bool_:
        raise RuntimeError(f"{name}(): does not support bool input")
    d = None if dim is None else _wrap_dim(dim, input.ndim)
    _check_nonempty(name, input, None if d is None else (d,), full_error=IndexError)
    return _out(call(op, input, static=(("dim", d), ("keepdim", bool(keepdim)))), out)


def argmax(input, dim=None, keepdim=False, *, out=None):
    """Mirrors ``torch.argmax`` (``dim=None`` flattens; first occurrence on ties)."""
    return _arg("argmax", ARGMAX, input, dim, keepdim, out)


def argmin(input, dim=None, keepdim=False, *, out=None):
    """Mirrors ``torch.argmin`` (``dim=None`` flattens; first occurrence on ties)."""
    return _arg("argmin", ARGMIN, input, dim, keepdim, out)


# --- var, std, std_mean, var_mean, logsumexp, norm ------------------------------------------------

def _safe_sqrt(v):
    # NOTE: PyTorch masks std's and norm's gradient to 0 where the result is 0 (sqrt's derivative
    # is inf there): the double where keeps the inf out of the backward pass.
    zero = v == 0
    return jnp.where(zero, 0, jnp.sqrt(jnp.where(zero, 1, v)))


def _var(x, dims, correction, keepdim):
    # PyTorch divides by max(N - correction, 0) (so too large a correction gives inf, not nan)
    n = math.prod(x.shape[d] for d in (range(x.ndim) if dims is None else dims))
    d = x - jnp.mean(x, axis=dims, keepdims=True)
    sq = jnp.real(d * jnp.conj(d)) if jnp.iscomplexobj(d) else d * d
    return jnp.sum(sq, axis=dims, keepdims=keepdim) / builtins.max(n - correction, 0)


def _std(x, dims, correction, keepdim):
    return _safe_sqrt(_var(x, dims, correction, keepdim))


def _mean_of(x, dims, keepdim):
    return jnp.mean(x, axis=dims, keepdims=keepdim)


VAR = Op("var", _var, "VarBackward0", saves=(0,))
STD = Op("std", _std, "StdBackward0", saves=(0, "result"))
VAR_MEAN = Op("var_mean", lambda x, dims, correction, keepdim: (
    _var(x, dims, correction, keepdim), _mean_of(x, dims, keepdim)), "VarMeanBackward0",
    saves=(0,))
STD_MEAN = Op("std_mean", lambda x, dims, correction, keepdim: (
    _std(x, dims, correction, keepdim), _mean_of(x, dims, keepdim)), "StdMeanBackward0",
    saves=(0, "result"))


def _moments(op, input, dim, unbiased, keepdim, correction):
    if not _is_float(input.dtype):
        raise RuntimeError("std and var only support floating point and complex dtypes")
    if isinstance(dim, bool):   # the legacy form std(input, unbiased)
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise RuntimeError("Cannot specify both unbiased and correction")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    static = (("dims", _dims(dim, input.ndim)), ("correction", correction),
              ("keepdim", bool(keepdim)))
    return call(op, input, static=static)


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Mirrors ``torch.var``: divides by ``N - correction`` (``correction=1`` by default;
    ``unbiased=False`` means 0)."""
    return _out(_moments(VAR, input, dim, unbiased, keepdim, correction), out)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Mirrors ``torch.std`` (see ``var``)."""
    return _out(_moments(STD, input, dim, unbiased, keepdim, correction), out)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Mirrors ``torch.var_mean``: the tuple ``(var, mean)``."""
    return tuple(_moments(VAR_MEAN, input, dim, unbiased, keepdim, correction))


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Mirrors ``torch.std_mean``: the tuple ``(std, mean)``."""
    return tuple(_moments(STD_MEAN, input, dim, unbiased, keepdim, correction))


def _logsumexp(x, dims, keepdim):
    # PyTorch's formulation: subtract the (non-infinite) max; its gradient exp(x - result) falls
    # out of this one, nan where the result is infinite included.
    m = jnp.max(x, axis=dims, keepdims=True, initial=-jnp.inf)
    m = lax.stop_gradient(jnp.where(jnp.isinf(m), 0, m))
    s = jnp.log(jnp.sum(jnp.exp(x - m), axis=dims, keepdims=keepdim))
    return s + m.reshape(s.shape)


LOGSUMEXP = Op("logsumexp", _logsumexp, "LogsumexpBackward0", saves=(0, "result"),
               promote="float", fusion=SOFTMAX_FUSION)   # (NOTE [ quick compiles ] in _quick.py)


def logsumexp(input, dim, keepdim=False, *, out=None):
    """Mirrors ``torch.logsumexp`` (integer inputs compute in the default float dtype)."""
    static = (("dims", _dims(dim, input.ndim)), ("keepdim", bool(keepdim)))
    return _out(call(LOGSUMEXP, input, static=static), out)


def _safe_pow(a, p):
    # NOTE: PyTorch's p-norm gradient is 0 at zero elements and at a zero norm (masked), where
    # a ** p has an infinite derivative for p < 1: the double where keeps it out.
    zero = a == 0
    return jnp.where(zero, 0, jnp.where(zero, 1, a) ** p)


def _vector_norm(x, ord, dims, keepdim, dtype):
    if dtype is not None:
        x = x.astype(dtype)
    a = jnp.abs(x)
    if ord == 2:
        sq = jnp.real(x * jnp.conj(x)) if jnp.iscomplexobj(x) else x * x
        return _safe_sqrt(jnp.sum(sq, axis=dims, keepdims=keepdim))
    if ord == math.inf:
        return jnp.max(a, axis=dims, keepdims=keepdim)
    if ord == -math.inf:
        return jnp.min(a, axis=dims, keepdims=keepdim)
    if ord == 0:
        return jnp.sum(x != 0, axis=dims, keepdims=keepdim, dtype=a.dtype)
    if ord == 1:
        return jnp.sum(a, axis=dims, keepdims=keepdim)
    return _safe_pow(jnp.sum(_safe_pow(a, ord), axis=dims, keepdims=keepdim), 1.0 / ord)


VECTOR_NORM = Op("linalg_vector_norm", _vector_norm, "LinalgVectorNormBackward0",
                 saves=(0, "result"))


# PyTorch's svdvals is output 1 of _linalg_svd(compute_uv=False), whose U and Vh are empty
SVDVALS = Op("linalg_svdvals", lambda m: (jnp.zeros((0,), m.dtype),
                                          jnp.linalg.svd(m, compute_uv=False),
                                          jnp.zeros((0,), m.dtype)), "LinalgSvdBackward0")


def _nuclear_norm(input, dims, keepdim):
    """The sum of the singular values of the matrices over ``dims``, built from the same ops
    as PyTorch's (permute the two dims last, singular values, sum)."""
    from .shape import permute
    rest = [d for d in range(input.ndim) if d not in dims]
    perm = rest + list(dims)
    result = sum(call(SVDVALS, permute(input, perm))[1], -1, keepdim=keepdim)
    if not keepdim:
        return result
    inverse = [perm.index(d) for d in range(input.ndim)]
    return permute(result.unsqueeze(-1), inverse)


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """Mirrors ``torch.norm``: ``p`` a number (inf, -inf, 0 included), ``'fro'`` (the 2-norm
    over ``dim``: all elements, or one or two dims) or ``'nuc'`` (the nuclear norm of the
    matrices over the two dims ``dim``, the last two by default)."""
    if not _is_float(input.dtype):
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {input.dtype._scalar_name}")
    dims = _dims(dim, input.ndim)
    if isinstance(p, str):
        if p == "nuc":   # the sum of the singular values of the matrices over ``dim``
            if input.ndim < 2:
                raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                                   "dimensions.")
            dims = (input.ndim - 2, input.ndim - 1) if dim is None else tuple(
                _wrap_dim(d, input.ndim) for d in dim)
            x = input if dtype is None else input.to(dtype)
            return _out(_nuclear_norm(x, dims, bool(keepdim)), out)
        if p != "fro":
            raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
        if dims is not None and len(dims) > 2:
            raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got " +
                               " ".join(str(d) for d in dims))
        p = 2
    dt = None if dtype is None else D.to_dtype(dtype)._np
    static = (("ord", float(p)), ("dims", dims), ("keepdim", bool(keepdim)), ("dtype", dt))
    return _out(call(VECTOR_NORM, input, static=static), out)


# --- median, nanmedian, mode ----------------------------------------------------------------------

def _median_dim(x, dim, keepdim, ignore_nan):
    """(values, indices) of the lower median along ``dim``; NaN sorts last, as in PyTorch:
    ``median`` picks the first NaN, ``nanmedian`` the median of the others."""
    if x.ndim == 0:
        return x, jnp.zeros((), jnp.int64)
    n = x.shape[dim]
    order = jnp.argsort(x, axis=dim, stable=True)
    kshape = x.shape[:dim] + (1,) + x.shape[dim + 1:]
    if jnp.issubdtype(x.dtype, jnp.inexact):
        nans = jnp.sum(jnp.isnan(x), axis=dim, keepdims=True)
        if ignore_nan:
            k = jnp.maximum((n - nans - 1) // 2, 0)
        else:
            k = jnp.where(nans > 0, n - nans, (n - 1) // 2)
    else:
        k = jnp.full(kshape, (n - 1) // 2)
    idx = jnp.take_along_axis(order, k, axis=dim)
    return (_squeeze_kept(jnp.take_along_axis(x, idx, axis=dim), dim, keepdim),
            _squeeze_kept(idx.astype(jnp.int64), dim, keepdim))


def _median_all(x, ignore_nan):
    if x.size == 0:
        fill = jnp.nan if jnp.issubdtype(x.dtype, jnp.inexact) else jnp.iinfo(x.dtype).min
        return jnp.full((), fill, x.dtype)
    return _evenly(x, _median_dim(x.reshape(-1), 0, False, ignore_nan)[0])


MEDIAN_ALL = Op("median", lambda x: _median_all(x, False), "MedianBackward0", saves=(0, "result"))
NANMEDIAN_ALL = Op("nanmedian", lambda x: _median_all(x, True), "NanmedianBackward0",
                   saves=(0, "result"))
MEDIAN_DIM = Op("median", lambda x, dim, keepdim: _median_dim(x, dim, keepdim, False),
                "MedianBackward1", saves={0: ()})
NANMEDIAN_DIM = Op("nanmedian", lambda x, dim, keepdim: _median_dim(x, dim, keepdim, True),
                   "NanmedianBackward1", saves={0: ()})


def _median(name, full_op, dim_op, result_type, input, dim, keepdim, out):
    if input.dtype is D.bool_:
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for 'Bool'")
    if dim is None:
        return _out(call(full_op, input), out)
    return _along(name, dim_op, result_type, input, dim, keepdim, out)


def median(input, dim=None, keepdim=False, *, out=None):
    """Mirrors ``torch.median``: the lower median (NaN if any element is NaN).  Without ``dim``
    a 0-dim tensor whose gradient ties share; with ``dim`` ``return_types.median``."""
    return _median("median", MEDIAN_ALL, MEDIAN_DIM, RT.median, input, dim, keepdim, out)


def nanmedian(input, dim=None, keepdim=False, *, out=None):
    """Mirrors ``torch.nanmedian``: ``median`` ignoring NaNs (NaN when all are NaN)."""
    return _median("nanmedian", NANMEDIAN_ALL, NANMEDIAN_DIM, RT.nanmedian, input, dim, keepdim,
                   out)


def _mode(x, dim, keepdim):
    # Counts by pairwise comparison along dim (n x n per row): no data-dependent shapes.
    if x.ndim == 0:
        return x, jnp.zeros((), jnp.int64)
    v = jnp.moveaxis(x, dim, -1)
    n = v.shape[-1]
    count = jnp.sum(v[..., :, None] == v[..., None, :], axis=-1)
    best = count == jnp.max(count, axis=-1, keepdims=True)
    # the smallest of the most frequent values, at its last occurrence (PyTorch's choice)
    smallest = best & jnp.all((v[..., :, None] <= v[..., None, :]) | ~best[..., None, :], axis=-1)
    idx = (n - 1 - _x64.argmax(smallest[..., ::-1], -1))[..., None]
    values = jnp.take_along_axis(v, idx, axis=-1)
    values, idx = jnp.moveaxis(values, -1, dim), jnp.moveaxis(idx, -1, dim)
    return _squeeze_kept(values, dim, keepdim), _squeeze_kept(idx.astype(jnp.int64), dim, keepdim)


MODE = Op("mode", _mode, "ModeBackward0", saves={0: ()})


def mode(input, dim=-1, keepdim=False, *, out=None):
    """Mirrors ``torch.mode``: ``return_types.mode(values, indices)``, the most frequent value
    along ``dim`` (the smallest on ties) and the index of its last occurrence."""
    return _along("mode", MODE, RT.mode, input, dim, keepdim, out)


# --- quantile, nanquantile ------------------------------------------------------------------------

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _lerp(a, b, w):
    # PyTorch's lerp, the same float rounding on both halves
    return jnp.where(w < 0.5, a + w * (b - a), b - (b - a) * (1 - w))


def _quantile(x, q, dim, keepdim, interpolation, ignore_nan, scalar_q):
    """PyTorch's quantile algorithm: sort, a rank per q, gather, interpolate."""
    s = jnp.sort(x.reshape(-1) if dim is None else jnp.moveaxis(x, dim, -1), axis=-1)
    n = s.shape[-1]
    q = jnp.asarray(q, s.dtype).reshape(-1)
    nan = jnp.isnan(s)
    if ignore_nan:   # the rank among the non-NaN values (rank 0, a NaN, when all are NaN)
        ranks = q * (jnp.sum(~nan, axis=-1, keepdims=True) - 1)
        ranks = jnp.where(ranks < 0, 0, ranks)
    else:            # any NaN: the last rank, which holds a NaN
        ranks = jnp.where(jnp.any(nan, axis=-1, keepdims=True), n - 1, q * (n - 1))
    ranks = {"lower": jnp.floor, "higher": jnp.ceil, "nearest": jnp.round}.get(
        interpolation, lambda r: r)(ranks)
    below = ranks.astype(jnp.int64)
    values = jnp.take_along_axis(s, below, axis=-1)
    if interpolation in ("linear", "midpoint"):
        above = jnp.ceil(ranks).astype(jnp.int64)
        w = ranks - below if interpolation == "linear" else \
            jnp.where(above == below, 0, 0.5).astype(s.dtype)
        values = _lerp(values, jnp.take_along_axis(s, above, axis=-1), w)
    out = jnp.moveaxis(values, -1, 0)                       # (Q, *reduced shape)
    if keepdim:
        out = out.reshape((out.shape[0],) + (1,) * x.ndim) if dim is None else \
            jnp.expand_dims(out, 1 + dim)
    return out[0] if scalar_q else out


# NOTE: PyTorch composes quantile from sort, gather and lerp; its outermost node is the final
# squeeze, whose name the result reports.
QUANTILE = Op("quantile", _quantile, "SqueezeBackward4", saves={0: ()}, inputs=1)


@_x64.scoped   # reads q's values eagerly, outside the op's scope
def _quantile_public(name, ignore_nan, input, q, dim, keepdim, interpolation, out):
    if input.dtype not in (D.float32, D.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q.dtype is not input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        arr = q._value()
        if not isinstance(arr, jax.core.Tracer) and not bool(jnp.all((arr >= 0) & (arr <= 1))):
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
        scalar_q = q.ndim == 0
    elif isinstance(q, (int, float)) and not isinstance(q, bool):
        if not 0 <= q <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q:g}")
        q, scalar_q = float(q), True
    else:
        raise TypeError(f"{name}(): argument 'q' must be float or Tensor, not "
                        f"{type(q).__name__}")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    d = None if dim is None else _wrap_dim(dim, input.ndim) if input.ndim else None
    static = (("dim", d), ("keepdim", bool(keepdim)), ("interpolation", interpolation),
              ("ignore_nan", ignore_nan), ("scalar_q", scalar_q))
    return _out(call(QUANTILE, input, q, static=static), out)


@_amp_hook.entry("quantile")
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """Mirrors ``torch.quantile``: ``q`` a float or a 0/1-dim tensor in [0, 1] (a 1-dim q
    adds a leading dim); ``dim=None`` flattens; NaN anywhere gives NaN."""
    return _quantile_public("quantile", False, input, q, dim, keepdim, interpolation, out)


@_amp_hook.entry("nanquantile")
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """Mirrors ``torch.nanquantile``: ``quantile`` ignoring NaNs."""
    return _quantile_public("quantile", True, input, q, dim, keepdim, interpolation, out)


# --- all, any, count_nonzero ----------------------------------------------------------------------

def _logical(fn):
    def reduce_fn(x, dims, keepdim):
        r = fn(x != 0, axis=dims, keepdims=keepdim)
        return r.astype(jnp.uint8) if x.dtype == jnp.uint8 else r   # PyTorch keeps uint8
    return reduce_fn


ALL = Op("all", _logical(jnp.all), None, saves=())
ANY = Op("any", _logical(jnp.any), None, saves=())
COUNT_NONZERO = Op("count_nonzero", lambda x, dims: jnp.sum(x != 0, axis=dims, dtype=jnp.int64),
                   None, saves=())


def all(input, dim=None, keepdim=False, *, out=None):  # noqa: A001
    """Mirrors ``torch.all``: a bool result (uint8 for uint8 input, as PyTorch)."""
    static = (("dims", _dims(dim, input.ndim)), ("keepdim", bool(keepdim)))
    return _out(call(ALL, input, static=static), out)


def any(input, dim=None, keepdim=False, *, out=None):  # noqa: A001
    """Mirrors ``torch.any``: a bool result (uint8 for uint8 input, as PyTorch)."""
    static = (("dims", _dims(dim, input.ndim)), ("keepdim", bool(keepdim)))
    return _out(call(ANY, input, static=static), out)


def count_nonzero(input, dim=None):
    """Mirrors ``torch.count_nonzero`` (int64)."""
    return call(COUNT_NONZERO, input, static=(("dims", _dims(dim, input.ndim)),))


# --- cumulative: cumsum, cumprod, cummax, cummin, logcumsumexp, diff ------------------------------

def _scan(fn):
    def scan_fn(x, dim, dtype):
        x = x if dtype is None else x.astype(dtype)
        return fn(x, axis=dim) if x.ndim else x
    return scan_fn


def _cumsum(x, axis):
    # NOTE: a parallel prefix sum: XLA's cumsum is a windowed reduction, ~2x slower on the CPU
    # for small inputs.  Floating-point sums may round differently from PyTorch's sequential sum.
    return lax.associative_scan(jnp.add, x, axis=axis)


CUMSUM = Op("cumsum", _scan(_cumsum), "CumsumBackward0", saves=())
CUMPROD = Op("cumprod", _scan(jnp.cumprod), "CumprodBackward0", saves=(0, "result"))
LOGCUMSUMEXP = Op("logcumsumexp", _scan(lax.cumlogsumexp), "LogcumsumexpBackward0",
                  saves=(0, "result"))


def _cumulative(op, input, dim, dtype, out):
    static = (("dim", _wrap_dim(dim, input.ndim)), ("dtype", _int_to_long(input, dtype)._np))
    return _out(call(op, input, static=static), out)


def cumsum(input, dim, *, dtype=None, out=None):
    """Mirrors ``torch.cumsum`` (integers and bools accumulate in int64)."""
    return _cumulative(CUMSUM, input, dim, dtype, out)


def cumprod(input, dim, *, dtype=None, out=None):
    """Mirrors ``torch.cumprod``; zeros get PyTorch's exact gradient (no division)."""
    return _cumulative(CUMPROD, input, dim, dtype, out)


def logcumsumexp(input, dim, *, out=None):
    """Mirrors ``torch.logcumsumexp`` (floating-point input)."""
    if not _is_float(input.dtype):
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for "
                                  f"'{input.dtype._scalar_name}'")
    return _cumulative(LOGCUMSUMEXP, input, dim, None, out)


def _cum_select(x, dim, take_max):
    """Running (values, indices) of the max/min along dim.  PyTorch's rule: a later element
    wins ties, and NaN wins over everything (each new NaN takes over)."""
    if x.ndim == 0:
        return x, jnp.zeros((), jnp.int64)
    inexact = jnp.issubdtype(x.dtype, jnp.inexact)

    def combine(a, b):   # a: earlier elements, b: later ones
        (va, ia), (vb, ib) = a, b
        better = vb >= va if take_max else vb <= va
        if inexact:
            better = jnp.isnan(vb) | (~jnp.isnan(va) & better)
        return jnp.where(better, vb, va), jnp.where(better, ib, ia)
    iota = lax.broadcasted_iota(jnp.int64, x.shape, dim)
    _, idx = lax.associative_scan(combine, (lax.stop_gradient(x), iota), axis=dim)
    return jnp.take_along_axis(x, idx, axis=dim), idx


CUMMAX = Op("cummax", lambda x, dim: _cum_select(x, dim, True), "CummaxBackward0", saves=(0,))
CUMMIN = Op("cummin", lambda x, dim: _cum_select(x, dim, False), "CumminBackward0", saves=(0,))


def cummax(input, dim, *, out=None):
    """Mirrors ``torch.cummax``: ``return_types.cummax(values, indices)``."""
    values, indices = call(CUMMAX, input, static=(("dim", _wrap_dim(dim, input.ndim)),))
    return _out(RT.cummax(values, indices), out)


def cummin(input, dim, *, out=None):
    """Mirrors ``torch.cummin``: ``return_types.cummin(values, indices)``."""
    values, indices = call(CUMMIN, input, static=(("dim", _wrap_dim(dim, input.ndim)),))
    return _out(RT.cummin(values, indices), out)


def diff(input, n=1, dim=-1, prepend=None, append=None, *, out=None):
    """Mirrors ``torch.diff``: the n-th forward difference along ``dim`` (after concatenating
    ``prepend`` / ``append``), composed from slices and ``sub`` (``ne`` for bool) as in PyTorch."""
    from .pointwise import ne, sub
    from .shape import cat, slice_dim
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _wrap_dim(dim, input.ndim)
    x = input
    if prepend is not None or append is not None:
        x = cat([t for t in (prepend, x, append) if t is not None], d)
    if n == 0 and x is input:
        from .shape import clone
        return _out(clone(x), out)
    step = ne if x.dtype is D.bool_ else sub
    for _ in range(n):
        size = x.shape[d]
        if size == 0:
            break
        x = step(slice_dim(x, d, 1, size, 1), slice_dim(x, d, 0, size - 1, 1))
    return _out(x, out)


# --- wiring ---------------------------------------------------------------------------------------

PUBLIC = ("sum", "mean", "nansum", "nanmean", "prod", "max", "min", "amax", "amin", "aminmax",
          "argmax", "argmin", "std", "var", "std_mean", "var_mean", "logsumexp", "norm", "median",
          "nanmedian", "mode", "quantile", "nanquantile", "all", "any", "count_nonzero", "cumsum",
          "cumprod", "cummax", "cummin", "logcumsumexp", "diff")
TENSOR_METHODS = {name: globals()[name] for name in PUBLIC if name not in ("std_mean",
                                                                         "var_mean")}
TENSOR_METHODS.update({"cumsum_": inplace_method(cumsum), "cumprod_": inplace_method(cumprod)})
