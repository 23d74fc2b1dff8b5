"""Parity tests for the reduction family (torchlike/_ops/reduce.py) against real PyTorch.

Spec tables, one row per case (docs/architecture.md §7.5): values, dtypes, shapes, grad_fn and
next_functions names and gradients against torch; gradcheck in float64; named-tuple results; error
cases; and the ops running under jax.jit (tracers).
"""
import math

import jax
import numpy as np
import pytest
import torch

import torchlike as tl
from torchlike.testing import assert_close, to_jax_function

from parity import A, both, cases, check_op, next_names, seed_of

NAN, INF = math.nan, math.inf


class V:
    """An explicit input of ``dtype`` (floats require grad)."""

    def __init__(self, v, dtype="float32"):
        self.v, self.dtype = v, dtype

    def values(self, rng):
        return np.asarray(self.v, dtype=self.dtype)

    def make(self, T, values):
        t = T.tensor(values, dtype=getattr(T, self.dtype))
        return t.requires_grad_() if t.dtype.is_floating_point else t


X = A((3, 4))
TIES = V([[1.0, 3.0, 3.0, -1.0], [2.0, 2.0, 0.5, 2.0], [-1.0, -1.0, -1.0, -1.0]])
NANS = V([[1.0, NAN, 0.5, -2.0], [NAN, NAN, NAN, 0.25], [3.0, 1.0, -1.0, 2.0]])
# NOTE: along a dim, PyTorch's index among equal elements (all-NaN rows) comes from
# std::nth_element and is not specified: such rows are only used for full reductions.
ALL_NAN = V([[NAN, NAN], [1.0, NAN]])
ZEROS = V([[2.0, 0.0, 3.0, 0.0], [2.0, 0.0, 3.0, 1.0], [1.0, 2.0, 3.0, 4.0]])
INTS = V([[1, 2, 2, 0], [3, 3, 1, 1], [-2, 5, 5, 5]], "int64")

# ------------------------------------------------------------------------------------------------
# Single-tensor results: values, dtype, shape, grad_fn, next_functions, gradients
# ------------------------------------------------------------------------------------------------

REDUCE = [
    # nansum / nanmean
    ("nansum", lambda T, x: x.nansum(), NANS),
    ("nansum_dim", lambda T, x: T.nansum(x, 1, keepdim=True), NANS),
    ("nanmean", lambda T, x: x.nanmean(), NANS),
    ("nanmean_dim", lambda T, x: T.nanmean(x, dim=1), NANS),
    ("nanmean_all_nan_row", lambda T, x: x.nanmean(1), ALL_NAN),
    # prod
    ("prod", lambda T, x: x.prod(), X),
    ("prod_dim_keepdim", lambda T, x: T.prod(x, 1, keepdim=True), X),
    ("prod_zeros", lambda T, x: x.prod(1), ZEROS),
    ("prod_zeros_all", lambda T, x: x[:2].prod(), ZEROS),
    ("prod_one_zero_all", lambda T, x: x[1:].prod(), ZEROS),
    ("prod_dtype", lambda T, x: x.prod(0, dtype=T.float64), X),
    ("prod_empty", lambda T, x: x[:0].prod(), X),
    # max / min / amax / amin
    ("max", lambda T, x: x.max(), X),
    ("max_ties", lambda T, x: x.max(), TIES),
    ("min_fn_ties", lambda T, x: T.min(x), TIES),
    ("max_nan", lambda T, x: x.max(), NANS),
    ("max_two", lambda T, x: T.max(x, x.t().t() * -1), X),
    ("min_two_method", lambda T, x: x.min(x * 0.5), X),
    ("amax", lambda T, x: x.amax(), X),
    ("amax_ties", lambda T, x: x.amax(1), TIES),
    ("amin_dims", lambda T, x: T.amin(x, (0, 1), keepdim=True), TIES),
    ("amin_ties_all", lambda T, x: x.amin(), TIES),
    ("argmax", lambda T, x: x.argmax(), X),
    ("argmax_keepdim", lambda T, x: x.argmax(keepdim=True), X),
    ("argmax_dim", lambda T, x: T.argmax(x, 1), TIES),
    ("argmin_dim_keepdim", lambda T, x: x.argmin(0, keepdim=True), TIES),
    ("argmax_nan", lambda T, x: x.argmax(1), NANS),
    # var / std
    ("var", lambda T, x: x.var(), X),
    ("var_dim", lambda T, x: T.var(x, 1), X),
    ("var_unbiased_false", lambda T, x: x.var(0, False), X),
    ("var_legacy_unbiased", lambda T, x: x.var(False), X),
    ("var_correction0", lambda T, x: x.var(1, correction=0, keepdim=True), X),
    ("var_correction2_dims", lambda T, x: T.var(x, (0, 1), correction=2), X),
    ("var_too_much_correction", lambda T, x: x[:1].var(0), X),
    ("std", lambda T, x: x.std(), X),
    ("std_dim_keepdim", lambda T, x: x.std(1, keepdim=True), X),
    ("std_unbiased", lambda T, x: T.std(x, 0, True, True), X),
    ("std_constant", lambda T, x: x.std(1), TIES),
    ("var_f64", lambda T, x: x.var(1), A((3, 4), "float64")),
    # logsumexp
    ("logsumexp", lambda T, x: x.logsumexp(1), X),
    ("logsumexp_dims_keepdim", lambda T, x: T.logsumexp(x, (0, 1), keepdim=True), X),
    ("logsumexp_inf", lambda T, x: x.logsumexp(1), V([[-INF, -INF], [INF, 1.0], [0.0, -INF]])),
    ("logsumexp_big", lambda T, x: x.logsumexp(1),
     V([[1000.0, 1000.0], [-1000.0, 0.0]], "float64")),
    # norm
    ("norm", lambda T, x: x.norm(), X),
    ("norm_p1", lambda T, x: T.norm(x, 1), X),
    ("norm_dim", lambda T, x: x.norm(2, 1), X),
    ("norm_inf", lambda T, x: x.norm(INF), TIES),
    ("norm_ninf", lambda T, x: x.norm(-INF, 1), X),
    # PyTorch leaves the gradient of the 0-"norm" undefined (None); torchlike gives zeros
    ("norm_p0", lambda T, x: x.detach().norm(0), ZEROS),
    ("norm_p3", lambda T, x: x.norm(3, dim=1), X),
    ("norm_p05_zeros", lambda T, x: x.norm(0.5), ZEROS),
    ("norm_fro_dims", lambda T, x: T.norm(x, "fro", (0, 1)), X),
    ("norm_nuc", lambda T, x: T.norm(x, "nuc"), X),
    ("norm_nuc_keepdim", lambda T, x: x.norm("nuc", (1, 0), keepdim=True), X),
    ("norm_zero", lambda T, x: (x * 0).norm(), X),
    ("norm_zero_p3", lambda T, x: (x * 0).norm(3), X),
    ("norm_dtype", lambda T, x: x.norm(dtype=T.float64), X),
    # median / nanmedian (full)
    ("median", lambda T, x: x.median(), X),
    ("median_ties", lambda T, x: x.median(), TIES),
    ("median_nan", lambda T, x: x.median(), NANS),
    ("nanmedian", lambda T, x: x.nanmedian(), NANS),
    ("nanmedian_all_nan", lambda T, x: x[0].nanmedian(), ALL_NAN),
    ("median_empty", lambda T, x: x[:0].median(), X),
    # quantile / nanquantile
    ("quantile", lambda T, x: x.quantile(0.3), X),
    ("quantile_dim", lambda T, x: T.quantile(x, 0.75, dim=1), X),
    ("quantile_q_tensor", lambda T, x: x.quantile(T.tensor([0.1, 0.5, 1.0]), dim=1), X),
    ("quantile_q_tensor_keepdim", lambda T, x: x.quantile(T.tensor([0.0, 0.6]), 1, True), X),
    ("quantile_q_tensor_all_keepdim", lambda T, x: x.quantile(T.tensor([0.6]), keepdim=True),
     X),
    ("quantile_q_0d", lambda T, x: x.quantile(T.tensor(0.6)), X),
    ("quantile_lower", lambda T, x: x.quantile(0.3, 1, interpolation="lower"), X),
    ("quantile_higher_keepdim", lambda T, x: x.quantile(0.3, 0, True, interpolation="higher"),
     X),
    ("quantile_midpoint", lambda T, x: x.quantile(0.3, 1, interpolation="midpoint"), X),
    ("quantile_nearest", lambda T, x: x.quantile(T.tensor([0.25, 0.5, 0.75]), 1,
                                                 interpolation="nearest"), X),
    ("quantile_nan", lambda T, x: x.quantile(0.5, 1), NANS),
    ("nanquantile", lambda T, x: x.nanquantile(0.5, 1), NANS),
    ("nanquantile_all", lambda T, x: T.nanquantile(x, 0.25), NANS),
    # all / any / count_nonzero
    ("all_float", lambda T, x: x.all(), ZEROS),
    ("all_dim", lambda T, x: T.all(x, 1), ZEROS),
    ("any_dims_keepdim", lambda T, x: x.any((0, 1), keepdim=True), ZEROS),
    ("any_int", lambda T, x: x.any(0), INTS),
    ("all_uint8", lambda T, x: x.all(), V([1, 0, 2], "uint8")),
    ("any_nan", lambda T, x: x.any(1), V([[NAN, 0.0], [0.0, 0.0]])),
    ("count_nonzero", lambda T, x: x.count_nonzero(), ZEROS),
    ("count_nonzero_dims", lambda T, x: T.count_nonzero(x, (0, 1)), ZEROS),
    # cumulative
    ("cumsum", lambda T, x: x.cumsum(1), X),
    ("cumsum_fn_dim0", lambda T, x: T.cumsum(x, dim=0), X),
    ("cumsum_dtype", lambda T, x: x.cumsum(-1, dtype=T.float64), X),
    ("cumsum_0d", lambda T, x: x.sum().cumsum(0), X),
    ("cumprod", lambda T, x: x.cumprod(1), X),
    ("cumprod_zeros", lambda T, x: T.cumprod(x, 1), ZEROS),
    ("logcumsumexp", lambda T, x: x.logcumsumexp(1), X),
    ("diff", lambda T, x: x.diff(), X),
    ("diff_n2_dim0", lambda T, x: T.diff(x, 2, 0), X),
    ("diff_prepend", lambda T, x: x.diff(dim=0, prepend=x[:1] * 2), X),
    ("diff_append", lambda T, x: x.diff(append=x[:, :2]), X),
    ("diff_big_n", lambda T, x: x.diff(6), INTS),
    # PyTorch returns a copy (grad_fn CopyBackwards) for n=0, torchlike a clone
    ("diff_n0", lambda T, x: x.detach().diff(0), X),
]


def _outer_node_only(fn):
    """PyTorch composes quantile from sort, gather, lerp and a final squeeze; torchlike runs it
    as one op named after that squeeze.  ``* 1`` compares the node's name (as the next function
    of MulBackward0) but not PyTorch's inner graph."""
    return lambda T, x: fn(T, x) * 1


@pytest.mark.parametrize("name,fn,x", cases(REDUCE))
def test_reduce(name, fn, x):
    check_op(name, _outer_node_only(fn) if "quantile" in name else fn, [x])


# ------------------------------------------------------------------------------------------------
# dtype sweep: float64 / int64 / bool (float32 is the table above; torch raising must be matched)
# ------------------------------------------------------------------------------------------------

NOT_FLOAT = ("int64", "bool")
SWEEP = [
    # name, fn, the swept dtypes PyTorch refuses, its message for them
    ("nansum", lambda T, x: x.nansum(1), (), None),
    ("nanmean", lambda T, x: x.nanmean(), NOT_FLOAT,
     r"^nanmean\(\): expected input to have floating point or complex dtype but got (Long|Bool)$"),
    ("prod", lambda T, x: x.prod(0), (), None),
    ("max", lambda T, x: x.max(), (), None),
    ("amin", lambda T, x: x.amin(1), (), None),
    ("argmax", lambda T, x: x.argmax(1), ("bool",), r"^argmax\(\): does not support bool input$"),
    ("std", lambda T, x: x.std(1), NOT_FLOAT,
     r"^std and var only support floating point and complex dtypes$"),
    ("logsumexp", lambda T, x: x.logsumexp(1), (), None),
    ("norm", lambda T, x: x.norm(), NOT_FLOAT,
     r"^linalg\.vector_norm: Expected a floating point or complex tensor as input\. "
     r"Got (Long|Bool)$"),
    ("median", lambda T, x: x.median(), ("bool",), r"^\"median_cpu\" not implemented for 'Bool'$"),
    ("quantile", lambda T, x: x.quantile(0.5), NOT_FLOAT,
     r"^quantile\(\) input tensor must be either float or double dtype$"),
    ("all", lambda T, x: x.all(1), (), None),
    ("count_nonzero", lambda T, x: x.count_nonzero(0), (), None),
    ("cumsum", lambda T, x: x.cumsum(0), (), None),
    ("cumprod", lambda T, x: x.cumprod(1), (), None),
    ("logcumsumexp", lambda T, x: x.logcumsumexp(1), NOT_FLOAT,
     r"^\"logcumsumexp_out_cpu\" not implemented for '(Long|Bool)'$"),
    ("diff", lambda T, x: x.diff(), (), None),
]


@pytest.mark.parametrize("dtype", ["float64", "int64", "bool"])
@pytest.mark.parametrize("name,fn,refused,match", cases(SWEEP))
def test_dtype_sweep(name, fn, refused, match, dtype):
    check_op(f"{name}/{dtype}", _outer_node_only(fn) if name == "quantile" else fn,
             [A((2, 3), dtype, grad=False)],   # float64 gradients: test_gradcheck
             raises=dtype in refused, match=match)


# ------------------------------------------------------------------------------------------------
# Tuple results (return_types and std_mean/var_mean): each part, gradients through all parts
# ------------------------------------------------------------------------------------------------

def check_multi(name, fn, inputs):
    rng = np.random.default_rng(seed_of(name))
    vals = [a.values(rng) for a in inputs]

    def go(T):
        xs = [a.make(T, v) for a, v in zip(inputs, vals)]
        out = fn(T, *xs)
        kind = type(out).__name__
        fields = {"tuple": (), "aminmax": ("min", "max")}.get(kind, ("values", "indices"))
        res = {"type": kind, "fields": [getattr(out, f) for f in fields], "parts": list(out),
               "next": [next_names(o.grad_fn) if o.grad_fn is not None else None for o in out]}
        grng = np.random.default_rng(seed_of(name + "/g"))
        loss = None
        for o in out:
            if o.grad_fn is not None:
                g = T.tensor(grng.standard_normal(tuple(o.shape)), dtype=o.dtype)
                loss = (o * g).sum() if loss is None else loss + (o * g).sum()
        if loss is not None:
            loss.backward()
            res["grads"] = [x.grad for x in xs]
        return res

    both(go)


MULTI = [
    ("max_dim", lambda T, x: x.max(1), X),
    ("max_dim_keepdim_ties", lambda T, x: T.max(x, 1, True), TIES),
    ("min_dim_ties", lambda T, x: x.min(dim=0), TIES),
    ("max_dim_nan", lambda T, x: x.max(1), NANS),
    ("max_dim_int", lambda T, x: x.max(0), INTS),
    ("max_dim_bool", lambda T, x: (x > 1).max(1), INTS),
    ("max_dim_0d", lambda T, x: x.sum().max(0), X),
    ("max_empty_rows", lambda T, x: x[:0].max(1), X),
    ("aminmax", lambda T, x: x.aminmax(), X),
    ("aminmax_dim_ties", lambda T, x: T.aminmax(x, dim=1, keepdim=True), TIES),
    ("aminmax_int", lambda T, x: x.aminmax(dim=0), INTS),
    ("median_dim", lambda T, x: x.median(1), X),
    ("median_dim_keepdim", lambda T, x: T.median(x, 0, keepdim=True), X),
    ("median_dim_nan", lambda T, x: x.median(1), NANS),
    ("median_dim_int", lambda T, x: x.median(1), INTS),
    ("nanmedian_dim", lambda T, x: x.nanmedian(1), NANS),
    ("nanmedian_dim0", lambda T, x: T.nanmedian(x, 0), NANS),
    ("mode", lambda T, x: x.mode(), INTS),
    ("mode_dim0_keepdim", lambda T, x: T.mode(x, 0, keepdim=True), INTS),
    ("mode_float", lambda T, x: x.mode(1), V([[1.0, 2.0, 2.0, 0.5], [3.0, 3.0, 1.0, 1.0],
                                               [0.5, -1.0, 0.5, 2.0]])),
    ("mode_bool", lambda T, x: (x > 1).mode(1), INTS),
    ("cummax", lambda T, x: x.cummax(1), X),
    ("cummax_ties", lambda T, x: T.cummax(x, 1), TIES),
    ("cummin_ties_dim0", lambda T, x: x.cummin(0), TIES),
    ("cummax_nan", lambda T, x: x.cummax(1), V([[1.0, NAN, 3.0, NAN, 5.0]])),
    ("cummin_int", lambda T, x: x.cummin(1), INTS),
    ("cummax_0d", lambda T, x: x.sum().cummax(0), X),
    ("std_mean", lambda T, x: T.std_mean(x, 1), X),
    ("std_mean_all_corr0", lambda T, x: T.std_mean(x, correction=0), X),
    ("var_mean", lambda T, x: T.var_mean(x, (0, 1), keepdim=True), X),
    ("var_mean_unbiased", lambda T, x: T.var_mean(x, 0, False), X),
]


@pytest.mark.parametrize("name,fn,x", cases(MULTI))
def test_multi_output(name, fn, x):
    check_multi(name, fn, [x])


def test_return_type_repr_and_fields():
    r = tl.tensor([[1.0, 5.0], [3.0, 2.0]]).max(1)
    assert r.values.tolist() == [5.0, 3.0] and r.indices.tolist() == [1, 0]
    assert repr(r).startswith("torch.return_types.max(")
    assert tl.tensor([1.0, 2.0]).aminmax()._fields == ("min", "max")


# ------------------------------------------------------------------------------------------------
# out= and in-place methods
# ------------------------------------------------------------------------------------------------

OUT = [
    ("prod_out", lambda T, x: T.prod(x, 1, out=T.empty(0))),
    ("cumsum_out", lambda T, x: T.cumsum(x, 0, out=T.zeros(3, 4))),
    ("argmax_out", lambda T, x: T.argmax(x, 1, out=T.zeros(3, dtype=T.int64))),
    ("max_out", lambda T, x: tuple(T.max(x, 1, out=(T.empty(0), T.empty(0, dtype=T.int64))))),
    ("cumsum_", lambda T, x: x.clone().cumsum_(1)),
    ("cumprod_", lambda T, x: x.clone().cumprod_(0)),
    ("cumsum_int_", lambda T, x: x.long().cumsum_(1)),
]


@pytest.mark.parametrize("name,fn", cases(OUT))
def test_out_and_inplace(name, fn):
    vals = np.random.default_rng(seed_of(name)).uniform(-2, 2, (3, 4)).astype(np.float32)
    both(lambda T: fn(T, T.tensor(vals)))


def test_cumsum_inplace_records_grad():
    check_op("cumsum_inplace_grad", lambda T, x: (x * 1).cumsum_(1), [X])


# ------------------------------------------------------------------------------------------------
# Errors: PyTorch's exception type and message
# ------------------------------------------------------------------------------------------------

E = [1.0, 2.0]
ERRORS = [
    ("max_empty", lambda T: T.tensor([]).max(), "Expected reduction dim to be specified"),
    ("min_empty", lambda T: T.tensor([]).min(), r"min\(\): Expected reduction dim"),
    ("amax_empty", lambda T: T.tensor([]).amax(), r"amax\(\): Expected reduction dim"),
    ("argmax_empty", lambda T: T.tensor([]).argmax(), r"argmax\(\): Expected reduction dim"),
    ("max_empty_dim", lambda T: T.zeros(0, 3).max(0), "reduction dim 0 to have non-zero size"),
    ("amin_empty_dims", lambda T: T.zeros(2, 0).amin((0, 1)), "dim 1 to have non-zero size"),
    ("argmax_empty_dim", lambda T: T.zeros(2, 0).argmax(1), "dim 1 to have non-zero size"),
    ("median_empty_dim", lambda T: T.zeros(2, 0).median(1), "dim 1 to have non-zero size"),
    ("mode_empty", lambda T: T.tensor([]).mode(), "dim 0 to have non-zero size"),
    ("aminmax_empty", lambda T: T.tensor([]).aminmax(), "cannot compute aminmax"),
    ("aminmax_empty_dim", lambda T: T.zeros(2, 0).aminmax(dim=1), "non-zero size"),
    ("max_bad_dim", lambda T: T.zeros(2, 3).max(2), "Dimension out of range"),
    ("sum_bad_dim", lambda T: T.zeros(2, 3).cumsum(-3), "Dimension out of range"),
    ("argmax_bool", lambda T: T.tensor([True]).argmax(), "does not support bool input"),
    ("std_int", lambda T: T.tensor([1, 2]).std(), "only support floating point and complex"),
    ("var_int", lambda T: T.tensor([1, 2]).var(0), "only support floating point"),
    ("norm_int", lambda T: T.tensor([1, 2]).norm(), "Expected a floating point or complex"),
    ("norm_bad_str", lambda T: T.tensor(E).norm("foo"), "Order foo not supported"),
    ("nanmean_int", lambda T: T.tensor([1, 2]).nanmean(), "expected input to have floating"),
    ("mean_int", lambda T: T.tensor([1, 2]).mean(), "could not infer output dtype"),
    ("median_bool", lambda T: T.tensor([True]).median(), "not implemented for 'Bool'"),
    ("logcumsumexp_int", lambda T: T.tensor([1, 2]).logcumsumexp(0), "not implemented"),
    ("quantile_int", lambda T: T.tensor([1, 2]).quantile(0.5), "must be either float or double"),
    ("quantile_q_range", lambda T: T.tensor(E).quantile(1.5), r"must be in the range \[0, 1\] "
                                                              "but got 1.5"),
    ("quantile_q_values", lambda T: T.tensor(E).quantile(T.tensor([0.5, 1.5])), "q values"),
    ("quantile_q_dtype", lambda T: T.tensor(E).quantile(T.tensor([0.5], dtype=T.float64)),
     "same dtype"),
    ("quantile_q_2d", lambda T: T.tensor(E).quantile(T.tensor([[0.5]])), "scalar or 1D"),
    ("quantile_interp", lambda T: T.tensor(E).quantile(0.5, interpolation="foo"),
     "interpolation must be one of"),
    ("quantile_empty", lambda T: T.tensor([]).quantile(0.5), "must be non-empty"),
    ("nanquantile_q", lambda T: T.tensor(E).nanquantile(-0.5), "must be in the range"),
    ("diff_0d", lambda T: T.tensor(1.0).diff(), "at least one-dimensional"),
    ("diff_negative", lambda T: T.tensor(E).diff(-1), "order must be non-negative"),
    ("prod_tuple_dim", lambda T: T.tensor(E).prod((0,)), None),
    ("max_float_dim", lambda T: T.tensor(E).max(1.5), None),
    ("logsumexp_no_dim", lambda T: T.logsumexp(T.tensor(E)), None),
    ("dup_dims", lambda T: T.zeros(2, 3).amax((0, 0)), "appears multiple times"),
    ("out_with_grad", lambda T: T.cumsum(T.tensor(E, requires_grad=True), 0, out=T.zeros(2)),
     "don't support automatic differentiation"),
]


@pytest.mark.parametrize("name,fn,match", cases(ERRORS))
def test_errors(name, fn, match):
    both(fn, match=match, raises=True)


# ------------------------------------------------------------------------------------------------
# gradcheck (float64 finite differences) for every differentiable op
# ------------------------------------------------------------------------------------------------

GRADCHECK = [
    ("nansum", lambda x: tl.nansum(x, 1)),
    ("nanmean", lambda x: tl.nanmean(x, 0)),
    ("prod", lambda x: (x.prod(1), x.prod())),
    ("max_min", lambda x: (x.max(), x.max(1).values, x.min(0, keepdim=True).values)),
    ("amax_aminmax", lambda x: (x.amax((0, 1)), *x.aminmax(dim=1))),
    ("var_std", lambda x: (x.var(1, correction=0), x.std())),
    ("std_mean_var_mean", lambda x: tl.std_mean(x, 1) + tl.var_mean(x)),
    ("logsumexp", lambda x: x.logsumexp(1)),
    ("norm", lambda x: (x.norm(), x.norm(3, 1), x.norm(INF, 0))),
    ("median", lambda x: (x.median(), x.median(0).values, x.nanmedian(1).values)),
    ("mode", lambda x: x.mode(1).values),
    ("quantile", lambda x: (x.quantile(0.3, 1), x.nanquantile(0.5, 0, interpolation="midpoint"),
                            x.quantile(tl.tensor([0.2, 0.9], dtype=tl.float64)))),
    ("cumsum_cumprod", lambda x: (x.cumsum(1), x.cumprod(0))),
    ("cummax_cummin", lambda x: (x.cummax(1).values, x.cummin(0).values)),
    ("logcumsumexp", lambda x: x.logcumsumexp(1)),
    ("diff", lambda x: x.diff(2, prepend=x[:, :1])),
]


def _distinct(name):
    """Distinct float64 values away from ties (max, median, quantile, mode pick one element)."""
    vals = np.random.default_rng(seed_of(name)).permutation(12).reshape(3, 4) * 0.3 - 1.6
    return tl.tensor(vals, dtype=tl.float64)


@pytest.mark.parametrize("name,fn", [pytest.param(n, f, id=n) for n, f in GRADCHECK])
def test_gradcheck(name, fn):
    # undefined output gradients are the engine's business (tests/test_gradcheck.py); skipping
    # that check here saves a compile per op
    x = _distinct(name).requires_grad_()
    assert tl.autograd.gradcheck(fn, (x,), check_undefined_grad=False)


def test_gradcheck_prod_cumprod_with_zeros():
    x = tl.tensor([[2.0, 0.0, 3.0, 0.0], [1.5, 0.0, 2.0, 1.0]], dtype=tl.float64,
                  requires_grad=True)
    assert tl.autograd.gradcheck(lambda t: (t.cumprod(1), t.prod(1)), (x,),
                                 check_undefined_grad=False)


# ------------------------------------------------------------------------------------------------
# Traced: the ops run on jax tracers; one jitted program agrees with eager mode and .backward()
# ------------------------------------------------------------------------------------------------

def _program(x):
    q = tl.tensor([0.25, 0.5], dtype=tl.float64)
    return (x.max(1).values.sum() + x.min() + x.median() + x.nanmedian(1).values.sum()
            + x.mode(0).values.sum() + x.quantile(q, 1).sum() + x.cummax(1).values.sum()
            + x.std() + x.norm(3) + x.logsumexp(1).sum() + x.nansum() + x.prod()
            + x.argmax(0).sum() * 0)


def test_traced_program():
    x = _distinct("traced")
    leaf = x.clone().requires_grad_()
    eager = _program(leaf)
    eager.backward()
    with jax.enable_x64(True):   # its JAX code reads 64-bit data
        value, grad = jax.jit(jax.value_and_grad(to_jax_function(_program)))(x._value())
    assert_close(np.asarray(value), eager.detach().numpy(), rtol=1e-12, atol=1e-12)
    assert_close(np.asarray(grad), leaf.grad.numpy(), rtol=1e-12, atol=1e-12)
