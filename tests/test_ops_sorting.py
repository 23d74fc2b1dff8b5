"""Parity tests for the sorting and searching family (torchlike/_ops/sorting.py) against PyTorch.

Spec tables, one row per case: values, dtypes, shapes, grad_fn names and gradients against real
torch (check_op / both from parity), finite differences in float64 (gradcheck), the
errors PyTorch raises, and the traced (jax.jit) path.
"""
import math

import jax
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import torchlike as tl
from torchlike.testing import to_jax_function

from parity import A, both, cases, check_op, seed_of

NAN = math.nan


class P(A):
    """An input without ties: a random permutation of distinct values (floats require grad)."""

    def values(self, rng):
        n = int(np.prod(self.shape, dtype=np.int64))
        v = rng.permutation(n).reshape(self.shape) - n // 2
        if self.dtype in ("float32", "float64"):
            v = v * 0.5 + rng.uniform(-0.1, 0.1, self.shape)
        return np.asarray(v, dtype=self.dtype)


def _pair(r):
    """A named (values, indices) result as a plain tuple, so torch's and ours compare."""
    return tuple(r) if isinstance(r, tuple) else r


def _values(r):
    return r[0] if isinstance(r, tuple) else r


# ------------------------------------------------------------------------------------------------
# sort, argsort, msort, topk, kthvalue
# ------------------------------------------------------------------------------------------------

SORT_LIKE = [
    # name, fn(T, x) -> named pair or Tensor; swept over float32/float64/int64 inputs without ties
    ("sort", lambda T, x: T.sort(x)),
    ("sort_dim0", lambda T, x: T.sort(x, 0)),
    ("sort_desc", lambda T, x: T.sort(x, dim=1, descending=True)),
    ("sort_stable", lambda T, x: T.sort(x, stable=True)),
    ("sort_stable_desc", lambda T, x: x.sort(stable=True, dim=0, descending=True)),
    ("argsort", lambda T, x: T.argsort(x)),
    ("argsort_desc", lambda T, x: x.argsort(dim=0, descending=True)),
    ("argsort_stable", lambda T, x: T.argsort(x, stable=True, dim=0)),
    ("msort", lambda T, x: x.msort()),
    ("topk", lambda T, x: T.topk(x, 2)),
    ("topk_dim0_smallest", lambda T, x: T.topk(x, 2, dim=0, largest=False)),
    ("topk_method", lambda T, x: x.topk(3, 1, True, True)),
    ("topk_zero", lambda T, x: x.topk(0)),
    ("kthvalue", lambda T, x: T.kthvalue(x, 2)),
    ("kthvalue_dim0", lambda T, x: T.kthvalue(x, 3, 0)),
    ("kthvalue_keepdim", lambda T, x: x.kthvalue(1, dim=-1, keepdim=True)),
    ("kthvalue_last", lambda T, x: x.kthvalue(4)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("name,fn", cases(SORT_LIKE))
def test_sort_like(name, fn, dtype):
    """Values, indices, dtypes and shapes; grad_fn names and gradients of the values."""
    check_op(f"{name}/{dtype}/v", lambda T, x: _values(fn(T, x)), [P((3, 4), dtype)])
    check_op(f"{name}/{dtype}/i", lambda T, x: _pair(fn(T, x)), [P((3, 4), dtype, grad=False)])


def test_named_results():
    x = tl.tensor([[3.0, 1.0, 2.0]])
    for r, name in ((tl.sort(x), "sort"), (x.topk(2), "topk"), (x.kthvalue(1), "kthvalue")):
        assert type(r).__name__ == name and r._fields == ("values", "indices")
        assert r.values is r[0] and r.indices is r[1]
    assert repr(tl.sort(tl.tensor([2.0, 1.0]))) == repr(torch.sort(torch.tensor([2.0, 1.0])))


SORT_SPECIAL = [
    # name, fn(T) -> result: ties (stable order), NaN, infinities, signed zeros, bool, 0-dim
    ("ties", lambda T: _pair(T.sort(T.tensor([2, 1, 2, 1, 0, 2])))),
    ("ties_desc", lambda T: _pair(T.sort(T.tensor([2, 1, 2, 1, 0, 2]), descending=True))),
    ("ties_stable_desc", lambda T: _pair(T.sort(T.tensor([1., 0., 1., 0.]), stable=True,
                                                descending=True))),
    ("argsort_ties", lambda T: T.argsort(T.tensor([[1, 1, 0], [0, 1, 0]]), dim=1)),
    ("nan_inf", lambda T: _pair(T.sort(T.tensor([1., NAN, -math.inf, 0., -0., math.inf, -2.])))),
    ("nan_inf_desc", lambda T: _pair(T.sort(T.tensor([1., NAN, -math.inf, math.inf, -2.]),
                                            descending=True))),
    ("topk_nan", lambda T: _pair(T.topk(T.tensor([1., NAN, 0.5, 2.]), 2))),
    ("topk_nan_smallest", lambda T: _pair(T.topk(T.tensor([1., NAN, 0.5]), 2, largest=False))),
    ("topk_ties", lambda T: _pair(T.topk(T.tensor([3., 1., 2., 1., 2.]), 3))),
    ("kthvalue_nan", lambda T: _pair(T.kthvalue(T.tensor([1., NAN, 0.5]), 3))),
    ("bool", lambda T: _pair(T.sort(T.tensor([True, False, True, False])))),
    ("msort_bool", lambda T: T.msort(T.tensor([[True, False], [False, True]]))),
    ("topk_f16", lambda T: _pair(T.topk(T.tensor([1., 2., -1.], dtype=T.float16), 2))),
    ("bool_desc", lambda T: _pair(T.sort(T.tensor([True, False, True]), descending=True))),
    ("argsort_bool", lambda T: T.argsort(T.tensor([True, False, True]))),
    ("sort_0d", lambda T: _pair(T.sort(T.tensor(3.0)))),
    ("argsort_0d", lambda T: T.argsort(T.tensor(3.0))),
    ("topk_0d", lambda T: _pair(T.topk(T.tensor(3.0), 1))),
    ("kthvalue_0d", lambda T: _pair(T.kthvalue(T.tensor(3.0), 1))),
    ("msort_0d", lambda T: T.msort(T.tensor(3.0))),
    ("sort_empty", lambda T: _pair(T.sort(T.zeros(2, 0)))),
    ("topk_empty_rows", lambda T: _pair(T.topk(T.zeros(0, 3), 2))),
    ("sort_f16", lambda T: _pair(T.sort(T.tensor([1.5, -1., 0.25], dtype=T.float16)))),
    ("sort_i32", lambda T: _pair(T.sort(T.tensor([5, -1, 3], dtype=T.int32)))),
    ("sort_u8_desc", lambda T: _pair(T.sort(T.tensor([5, 1, 3], dtype=T.uint8), 0, True))),
    ("argsort_3d", lambda T: T.argsort(T.tensor(np.arange(24).reshape(2, 3, 4) % 5), dim=1)),
    ("sort_out", lambda T: (lambda v, i: (T.sort(T.tensor([3., 1., 2.]), out=(v, i)), v, i))(
        T.empty(3), T.empty(3, dtype=T.long))),
    ("topk_out", lambda T: (lambda v, i: (_pair(T.topk(T.tensor([3., 1., 2.]), 2, out=(v, i))),
                                          v, i))(T.empty(2), T.empty(2, dtype=T.long))),
    ("msort_out", lambda T: (lambda o: (T.msort(T.tensor([3., 1.]), out=o), o))(T.empty(2))),
]


def _strip_named(r):
    if isinstance(r, tuple):
        return tuple(_strip_named(x) for x in r)
    return r


@pytest.mark.parametrize("name,fn", cases(SORT_SPECIAL))
def test_sort_special(name, fn):
    both(lambda T: _strip_named(fn(T)))


def test_sort_grad_with_ties_and_upstream():
    """Gradients scatter back through the permutation, ties included."""
    def go(T):
        x = T.tensor([[2., 1., 2., 0.5], [1., 1., 3., 0.]], requires_grad=True)
        v = T.sort(x, 1, True).values * T.tensor([1., 2., 3., 4.])
        t = T.topk(x, 2, 0).values.sum() + T.kthvalue(x, 2).values.sum() + T.msort(x)[0].sum()
        (v.sum() + t).backward()
        return x.grad
    both(go)


def test_sort_grad_flows_through_graph():
    check_op("sort_chain", lambda T, x: T.sort(x.exp() * 2, 0).values.sin(), [P((3, 2))])


def test_sort_of_view_then_inplace_on_values():
    """PyTorch does not save the input or the values of sort: writing into either after sort
    does not break backward."""
    def go(T):
        x = T.tensor([3., 1., 2.], requires_grad=True)
        y = x * 1
        v = T.sort(y).values
        w = v * 2
        y.add_(1)
        w.sum().backward()
        return x.grad
    both(go)


GRADCHECK = [
    # name, fn(x): float64 inputs without ties
    ("sort", lambda x: tl.sort(x, 1).values),
    ("sort_desc_dim0", lambda x: tl.sort(x, 0, descending=True)[0]),
    ("sort_stable", lambda x: tl.sort(x, stable=True).values),
    ("msort", lambda x: tl.msort(x)),
    ("topk", lambda x: tl.topk(x, 2).values),
    ("topk_smallest_dim0", lambda x: tl.topk(x, 2, 0, largest=False).values),
    ("kthvalue", lambda x: tl.kthvalue(x, 3).values),
    ("kthvalue_keepdim", lambda x: tl.kthvalue(x, 2, 0, keepdim=True).values),
]


@pytest.mark.parametrize("name,fn", cases(GRADCHECK))
def test_gradcheck(name, fn):
    rng = np.random.default_rng(seed_of(name))
    x = tl.tensor(P((3, 4), "float64").values(rng), dtype=tl.float64, requires_grad=True)
    assert tl.autograd.gradcheck(fn, (x,))


# ------------------------------------------------------------------------------------------------
# unique, unique_consecutive (eager only)
# ------------------------------------------------------------------------------------------------

_U1 = [3, 1, 2, 1, 5, 3, 3]
_U2 = [[1, 2], [1, 2], [0, 3], [1, 2], [0, 3]]

UNIQUE = [
    # name, fn(T)
    ("unique", lambda T: T.unique(T.tensor(_U1))),
    ("unique_inverse", lambda T: T.unique(T.tensor(_U1), return_inverse=True)),
    ("unique_counts", lambda T: T.unique(T.tensor(_U1), return_counts=True)),
    ("unique_all", lambda T: T.unique(T.tensor(_U1), True, True, True)),
    ("unique_unsorted", lambda T: T.unique(T.tensor(_U1), sorted=False, return_inverse=True)),
    ("unique_method", lambda T: T.tensor(_U1).unique(return_counts=True)),
    ("unique_float", lambda T: T.unique(T.tensor([2.5, -1., 2.5, 0.]), return_inverse=True)),
    ("unique_f64", lambda T: T.unique(T.tensor([2.5, -1., 2.5], dtype=T.float64))),
    ("unique_nan", lambda T: T.unique(T.tensor([3., 1., NAN, 1., NAN]), return_inverse=True,
                                      return_counts=True)),
    ("unique_bool", lambda T: T.unique(T.tensor([True, False, True]), return_counts=True)),
    ("unique_2d", lambda T: T.unique(T.tensor([[1, 2], [3, 1]]), return_inverse=True)),
    ("unique_0d", lambda T: T.unique(T.tensor(5), return_inverse=True, return_counts=True)),
    ("unique_empty", lambda T: T.unique(T.zeros(0), return_inverse=True, return_counts=True)),
    ("unique_i32", lambda T: T.unique(T.tensor([2, 2, 1], dtype=T.int32))),
    ("unique_dim0", lambda T: T.unique(T.tensor(_U2), dim=0, return_inverse=True,
                                       return_counts=True)),
    ("unique_dim1", lambda T: T.unique(T.tensor(_U2).t(), dim=1, return_inverse=True)),
    ("unique_dim_neg", lambda T: T.unique(T.tensor(_U2), dim=-2)),
    ("unique_dim_3d", lambda T: T.unique(T.tensor(np.arange(12).reshape(2, 3, 2) % 3), dim=1,
                                         return_inverse=True, return_counts=True)),
    ("unique_dim_nan", lambda T: T.unique(T.tensor([[1., NAN], [1., NAN]]), dim=0)),
    ("unique_dim_empty", lambda T: T.unique(T.zeros(0, 3), dim=0, return_inverse=True,
                                            return_counts=True)),
    ("uc", lambda T: T.unique_consecutive(T.tensor([1, 1, 2, 2, 3, 1, 1, 2]))),
    ("uc_all", lambda T: T.unique_consecutive(T.tensor([1, 1, 2, 2, 3, 1, 1, 2]),
                                              return_inverse=True, return_counts=True)),
    ("uc_method", lambda T: T.tensor([1., 1., 2.]).unique_consecutive(return_counts=True)),
    ("uc_nan", lambda T: T.unique_consecutive(T.tensor([1., NAN, NAN, 2.]), return_counts=True)),
    ("uc_2d_flat", lambda T: T.unique_consecutive(T.tensor([[1, 1], [1, 2]]),
                                                  return_inverse=True)),
    ("uc_dim0", lambda T: T.unique_consecutive(T.tensor(_U2), dim=0, return_inverse=True,
                                               return_counts=True)),
    ("uc_dim1", lambda T: T.unique_consecutive(T.tensor(_U2).t(), dim=1, return_counts=True)),
    ("uc_0d", lambda T: T.unique_consecutive(T.tensor(5), return_inverse=True,
                                             return_counts=True)),
    ("unique_requires_grad", lambda T: T.unique(T.tensor([2., 1., 2.], requires_grad=True),
                                                return_inverse=True)),
    ("unique_dim_requires_grad", lambda T: T.unique(T.ones(2, 2, requires_grad=True), dim=0)),
    ("uc_requires_grad", lambda T: T.unique_consecutive(T.ones(3, requires_grad=True))),
    ("uc_dim_requires_grad", lambda T: T.unique_consecutive(T.ones(3, requires_grad=True),
                                                            dim=0)),
]


@pytest.mark.parametrize("name,fn", cases(UNIQUE))
def test_unique(name, fn):
    both(fn)


@pytest.mark.parametrize("fn,op", [
    (lambda T, x: T.unique(x), "_unique2"),
    (lambda T, x: T.unique(x, dim=0), "unique_dim"),
    (lambda T, x: T.unique_consecutive(x), "unique_consecutive"),
], ids=["unique", "unique_dim", "unique_consecutive"])
def test_unique_backward_raises(fn, op):
    # PyTorch raises NotImplementedError (a RuntimeError subclass), with this message
    msg = f"the derivative for '{op}' is not implemented."
    for lib in (torch, tl):
        with pytest.raises(NotImplementedError, match=msg):
            fn(lib, lib.ones(3, requires_grad=True)).sum().backward()


# ------------------------------------------------------------------------------------------------
# searchsorted, bucketize
# ------------------------------------------------------------------------------------------------

_SEQ = [1., 2., 2., 3., 5.]
_VALS = [[0., 2., 2.5], [5., 6., -1.]]
_S2 = [[1, 3, 5, 7], [2, 4, 6, 8], [0, 0, 1, 1]]
_V2 = [[3, 6, 0], [1, 4, 9], [0, 1, 2]]

SEARCH = [
    # name, fn(T)
    ("left", lambda T: T.searchsorted(T.tensor(_SEQ), T.tensor(_VALS))),
    ("right", lambda T: T.searchsorted(T.tensor(_SEQ), T.tensor(_VALS), right=True)),
    ("side_right", lambda T: T.searchsorted(T.tensor(_SEQ), T.tensor(_VALS), side="right")),
    ("side_left", lambda T: T.searchsorted(T.tensor(_SEQ), T.tensor(_VALS), side="left")),
    ("side_right_right_false", lambda T: T.searchsorted(T.tensor(_SEQ), T.tensor(_VALS),
                                                        side="right", right=False)),
    ("int32", lambda T: T.searchsorted(T.tensor(_SEQ), T.tensor(_VALS), out_int32=True)),
    ("scalar", lambda T: T.searchsorted(T.tensor(_SEQ), 2)),
    ("scalar_float_right", lambda T: T.searchsorted(T.tensor(_SEQ), 2.0, right=True)),
    ("scalar_int32", lambda T: T.searchsorted(T.tensor(_SEQ), 2.5, out_int32=True)),
    ("scalar_bool", lambda T: T.searchsorted(T.tensor(_SEQ), True)),
    ("value_0d", lambda T: T.searchsorted(T.tensor(_SEQ), T.tensor(2.))),
    ("nd", lambda T: T.searchsorted(T.tensor(_S2), T.tensor(_V2))),
    ("nd_right", lambda T: T.searchsorted(T.tensor(_S2), T.tensor(_V2), right=True)),
    ("nd_more_values", lambda T: T.searchsorted(T.tensor(_S2), T.tensor(_V2)[:, :2])),
    ("3d", lambda T: T.searchsorted(T.tensor(_S2).reshape(3, 1, 4),
                                    T.tensor(_V2).reshape(3, 1, 3))),
    ("values_nan", lambda T: T.searchsorted(T.tensor(_SEQ), T.tensor([NAN, 2.]))),
    ("seq_nan", lambda T: T.searchsorted(T.tensor([1., 2., NAN]), T.tensor([NAN, 3., 1.5]))),
    ("seq_nan_right", lambda T: T.searchsorted(T.tensor([1., 2., NAN]), T.tensor([NAN, 1.5]),
                                               right=True)),
    ("seq_long_values_float", lambda T: T.searchsorted(T.tensor([1, 2, 2, 3]),
                                                       T.tensor([1.5, 2.0, 3.5]))),
    ("seq_float_values_long", lambda T: T.searchsorted(T.tensor(_SEQ), T.tensor([2, 4]))),
    ("seq_long_scalar_float", lambda T: T.searchsorted(T.tensor([1, 2, 3]), 2.5)),
    ("f64_f32", lambda T: T.searchsorted(T.tensor(_SEQ, dtype=T.float64), T.tensor(_VALS))),
    ("empty_seq", lambda T: T.searchsorted(T.tensor([]), T.tensor([1., 2.]))),
    ("empty_values", lambda T: T.searchsorted(T.tensor(_SEQ), T.zeros(0))),
    ("one_elem", lambda T: T.searchsorted(T.tensor([1.]), T.tensor([0., 1., 2.]), right=True)),
    ("sorter", lambda T: T.searchsorted(T.tensor([30., 10., 20.]), T.tensor([15., 25., 10.]),
                                        sorter=T.tensor([1, 2, 0]))),
    ("sorter_right", lambda T: T.searchsorted(T.tensor([30., 10., 20.]), T.tensor([10., 30.]),
                                              sorter=T.tensor([1, 2, 0]), side="right")),
    ("sorter_nd", lambda T: T.searchsorted(T.tensor([[3, 1, 2], [6, 4, 5]]),
                                           T.tensor([[2], [6]]),
                                           sorter=T.tensor([[1, 2, 0], [1, 2, 0]]))),
    ("values_require_grad", lambda T: T.searchsorted(T.tensor(_SEQ),
                                                     T.tensor(_VALS, requires_grad=True))),
    ("out", lambda T: (lambda o: (T.searchsorted(T.tensor(_SEQ), T.tensor([2.5]), out=o), o))(
        T.empty(1, dtype=T.long))),
    ("bucketize", lambda T: T.bucketize(T.tensor(_VALS), T.tensor(_SEQ))),
    ("bucketize_right_int32", lambda T: T.bucketize(T.tensor(_VALS), T.tensor(_SEQ), right=True,
                                                    out_int32=True)),
    ("bucketize_scalar", lambda T: T.bucketize(3, T.tensor(_SEQ))),
    ("bucketize_scalar_right", lambda T: T.bucketize(2.5, T.tensor(_SEQ), right=True)),
    ("bucketize_long_input", lambda T: T.bucketize(T.tensor([[0, 2], [5, 7]]), T.tensor(_SEQ))),
    ("bucketize_nan", lambda T: T.bucketize(T.tensor([NAN, 1.]), T.tensor(_SEQ))),
    ("bucketize_out", lambda T: (lambda o: (T.bucketize(T.tensor([2.5]), T.tensor(_SEQ), out=o),
                                            o))(T.empty(1, dtype=T.long))),
]


@pytest.mark.parametrize("name,fn", cases(SEARCH))
def test_searchsorted(name, fn):
    both(fn)


def test_searchsorted_random_agrees_with_torch():
    """Many lanes and lengths at once: duplicates, values beyond both ends."""
    rng = np.random.default_rng(0)
    for n in (1, 4, 7):
        seq = np.sort(rng.integers(-4, 5, (3, n)), axis=1).astype(np.float32)
        vals = rng.integers(-6, 7, (3, 11)).astype(np.float32)
        both(lambda T: [T.searchsorted(T.tensor(seq), T.tensor(vals), right=right)
                        for right in (False, True)])


# ------------------------------------------------------------------------------------------------
# histc, bincount
# ------------------------------------------------------------------------------------------------

_H = [0.1, 0.5, 1.0, 0.0, 0.99, 2.0, -1., 0.25, 0.75, 0.7499999]

HIST = [
    # name, fn(T)
    ("histc", lambda T: T.histc(T.tensor(_H), bins=4, min=0, max=1)),
    ("histc_default_bins", lambda T: T.histc(T.tensor(_H))),
    ("histc_auto_range", lambda T: T.histc(T.tensor(_H), bins=7)),
    ("histc_positional", lambda T: T.histc(T.tensor(_H), 5, -1, 2)),
    ("histc_method", lambda T: T.tensor(_H).histc(3, 0, 1)),
    ("histc_f64", lambda T: T.histc(T.tensor(_H, dtype=T.float64), bins=4, min=0, max=1)),
    ("histc_f16", lambda T: T.histc(T.tensor([1., 2., 2.5, 3.], dtype=T.float16), bins=3)),
    ("histc_constant", lambda T: T.histc(T.tensor([1., 1.]), bins=3)),
    ("histc_same_min_max_args", lambda T: T.histc(T.tensor([1., 2., 3.]), bins=4, min=2, max=2)),
    ("histc_empty", lambda T: T.histc(T.tensor([]), bins=3)),
    ("histc_2d", lambda T: T.histc(T.tensor([[1., 2.], [0.5, 3]]), bins=3, min=1, max=1)),
    ("histc_one_bin_edge", lambda T: T.histc(T.tensor([0.3]), bins=10, min=0, max=1)),
    ("histc_edges", lambda T: T.histc(T.tensor([0.1 * i for i in range(11)]), bins=10, min=0,
                                      max=1)),
    ("histc_edges_f64", lambda T: T.histc(T.tensor([0.1 * i for i in range(11)],
                                                   dtype=T.float64), bins=10, min=0, max=1)),
    ("histc_nan_in_range", lambda T: T.histc(T.tensor([1., NAN]), bins=3, min=0, max=2)),
    ("histc_requires_grad", lambda T: T.histc(T.tensor(_H, requires_grad=True), bins=4)),
    ("histc_out", lambda T: (lambda o: (T.histc(T.tensor(_H), 2, 0, 1, out=o), o))(T.empty(2))),
    ("bincount", lambda T: T.bincount(T.tensor([0, 2, 2, 5]))),
    ("bincount_method", lambda T: T.tensor([0, 2, 2, 5]).bincount()),
    ("bincount_minlength", lambda T: T.bincount(T.tensor([0, 2, 2, 5]), minlength=8)),
    ("bincount_minlength_small", lambda T: T.bincount(T.tensor([0, 2, 2, 5]), minlength=2)),
    ("bincount_w_f32", lambda T: T.bincount(T.tensor([0, 2, 2, 5]), T.tensor([1., 2, 3, 4]))),
    ("bincount_w_f64", lambda T: T.bincount(T.tensor([0, 2, 2, 5]),
                                            T.tensor([1., 2, 3, 4], dtype=T.float64))),
    ("bincount_w_long", lambda T: T.bincount(T.tensor([0, 2, 2, 5]), T.tensor([1, 2, 3, 4]))),
    ("bincount_w_f16", lambda T: T.bincount(T.tensor([0, 2, 2, 5]),
                                            T.tensor([1., 2, 3, 4], dtype=T.float16))),
    ("bincount_w_bool", lambda T: T.bincount(T.tensor([0, 1]), T.ones(2, dtype=T.bool))),
    ("bincount_w_kw", lambda T: T.bincount(T.tensor([1, 1]), weights=T.tensor([.5, .25]),
                                           minlength=3)),
    ("bincount_i32", lambda T: T.bincount(T.tensor([1, 2], dtype=T.int32))),
    ("bincount_u8", lambda T: T.bincount(T.tensor([1, 2], dtype=T.uint8))),
    ("bincount_empty", lambda T: T.bincount(T.tensor([], dtype=T.long))),
    ("bincount_empty_minlength_w", lambda T: T.bincount(T.tensor([], dtype=T.long),
                                                        T.tensor([]), minlength=2)),
    ("bincount_w_requires_grad", lambda T: T.bincount(T.tensor([0, 2]),
                                                      T.tensor([1., 2.], requires_grad=True))),
    ("bincount_w_f16_requires_grad", lambda T: (lambda b: (b, [type(n).__name__ for n, _ in
                                                               b.grad_fn.next_functions]))(
        T.bincount(T.tensor([0, 2]), T.tensor([1., 2.], dtype=T.float16, requires_grad=True)))),
]


@pytest.mark.parametrize("name,fn", cases(HIST))
def test_histc_bincount(name, fn):
    both(fn)


def test_histc_random_agrees_with_torch():
    rng = np.random.default_rng(1)
    for dtype in ("float32", "float64"):
        x = rng.uniform(-1.2, 1.2, 200).astype(dtype)
        x[:20] = np.round(x[:20], 1)   # values on bin edges
        for bins, lo, hi in ((10, -1, 1), (7, 0, 0), (3, -0.5, 0.3)):
            both(lambda T: T.histc(T.tensor(x), bins, lo, hi))


def test_bincount_backward_raises():
    match = "derivative for aten::bincount is not implemented"
    both(lambda T: T.bincount(T.tensor([0, 2]), T.tensor([1., 2.], requires_grad=True))
         .sum().backward(), match=match, raises=True)


# ------------------------------------------------------------------------------------------------
# Errors: PyTorch's exception types and messages
# ------------------------------------------------------------------------------------------------

_X = [[3., 1., 2.], [0., 5., 4.]]

ERRORS = [
    # name, fn(T), message regex (None: compare the exception type only)
    ("unique_dim_bad", lambda T: T.unique(T.tensor([[1, 2]]), dim=2),
     r"^Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)$"),
    ("unique_dim_zero_unselected", lambda T: T.unique(T.zeros(2, 0), dim=0),
     r"^There are 0 sized dimensions, and they aren't selected, so unique cannot be applied$"),
    ("uc_dim_bad", lambda T: T.unique_consecutive(T.tensor([[1, 2]]), dim=2),
     r"^Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)$"),
    ("sort_bad_dim", lambda T: T.sort(T.tensor(_X), 2), r"Dimension out of range"),
    ("sort_0d_bad_dim", lambda T: T.sort(T.tensor(1.), 1), r"Dimension out of range"),
    ("sort_complex", lambda T: T.sort(T.tensor([1 + 1j])), r"does not support complex"),
    ("argsort_bad_dim", lambda T: T.argsort(T.tensor(_X), -3), r"Dimension out of range"),
    ("topk_k_too_big", lambda T: T.topk(T.tensor(_X), 4), r"selected index k out of range"),
    ("topk_k_negative", lambda T: T.topk(T.tensor(_X), -1), r"selected index k out of range"),
    ("topk_k_dim0", lambda T: T.topk(T.tensor(_X), 3, dim=0), r"selected index k out of range"),
    ("topk_0d_k2", lambda T: T.topk(T.tensor(1.), 2), r"selected index k out of range"),
    ("topk_bad_dim", lambda T: T.topk(T.tensor(_X), 1, 5), r"Dimension out of range"),
    ("topk_bool", lambda T: T.topk(T.tensor([True, False]), 1),
     r"topk does not support bool dtypes on CPU"),
    ("kthvalue_bool", lambda T: T.kthvalue(T.tensor([True, False]), 1),
     r"\"kthvalue_cpu\" not implemented for 'Bool'"),
    ("kthvalue_k0", lambda T: T.kthvalue(T.tensor(_X), 0),
     r"kthvalue\(\): selected number k out of range for dimension 1"),
    ("kthvalue_k_too_big", lambda T: T.kthvalue(T.tensor(_X), 3, 0),
     r"kthvalue\(\): selected number k out of range for dimension 0"),
    ("kthvalue_0d", lambda T: T.kthvalue(T.tensor(1.), 2),
     r"selected number k out of range for dimension 0"),
    ("ss_side_conflict", lambda T: T.searchsorted(T.tensor(_SEQ), T.tensor([1.]), side="left",
                                                  right=True),
     r"side and right can't be set to opposites, got side of left while right was True"),
    ("ss_bad_side", lambda T: T.searchsorted(T.tensor(_SEQ), T.tensor([1.]), side="middle"),
     r"side can only be 'left' or 'right' but got middle"),
    ("ss_dims", lambda T: T.searchsorted(T.tensor(_SEQ).reshape(1, 5), T.tensor(_VALS)),
     r"boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor "
     r"and input value tensor must match, but we got boundaries tensor \[1, 5\] and input value "
     r"tensor \[2, 3\]"),
    ("ss_dims_rank", lambda T: T.searchsorted(T.tensor(_S2), T.tensor([3, 6])),
     r"but we got boundaries tensor \[3, 4\] and input value tensor \[2\]"),
    ("ss_scalar_nd", lambda T: T.searchsorted(T.tensor(_S2), 3),
     r"input value can be a scalar only when boundaries tensor dimension is 1, but we got "
     r"boundaries tensor dim\(2\) and input value's dim\(0\) numel\(1\)"),
    ("ss_0d_boundaries", lambda T: T.searchsorted(T.tensor(3.), T.tensor([1.])),
     r"boundaries tensor should have positive dimension, but got 0 dimension"),
    ("ss_sorter_dtype", lambda T: T.searchsorted(T.tensor([3., 1.]), T.tensor([2.]),
                                                 sorter=T.tensor([1, 0], dtype=T.int32)),
     r"sorter must be a tensor of long dtype but got dtype Int"),
    ("ss_sorter_size", lambda T: T.searchsorted(T.tensor([3., 1., 2.]), T.tensor([2.]),
                                                sorter=T.tensor([1, 0])),
     r"boundary and sorter must have the same size, but got boundary tensor \[3\]and got "
     r"sorter tensor \[2\]"),
    ("ss_sorter_range", lambda T: T.searchsorted(T.tensor([3., 1.]), T.tensor([2.]),
                                                 sorter=T.tensor([1, 2])),
     r"sorter index out of range"),
    ("ss_sorter_negative", lambda T: T.searchsorted(T.tensor([3., 1.]), T.tensor([2.]),
                                                    sorter=T.tensor([-1, 0])),
     r"sorter index out of range"),
    ("ss_bool", lambda T: T.searchsorted(T.tensor([False, True]), T.tensor([True])),
     r"\"searchsorted_out_cpu\" not implemented for 'Bool'"),
    ("ss_list", lambda T: T.searchsorted(T.tensor(_SEQ), [2.]), None),
    ("ss_out_dtype", lambda T: T.searchsorted(T.tensor(_SEQ), T.tensor([2.]), out_int32=True,
                                              out=T.empty(1, dtype=T.long)), None),
    ("bucketize_2d", lambda T: T.bucketize(T.tensor(_VALS), T.tensor(_SEQ).reshape(1, 5)),
     r"boundaries tensor must be 1 dimension, but got dim\(2\)"),
    ("bucketize_0d", lambda T: T.bucketize(T.tensor(_VALS), T.tensor(1.)),
     r"boundaries tensor must be 1 dimension, but got dim\(0\)"),
    ("histc_long", lambda T: T.histc(T.tensor([1, 2, 3]), bins=4),
     r"\"histogram_cpu\" not implemented for 'Long'"),
    ("histc_bool", lambda T: T.histc(T.tensor([True]), bins=4),
     r"\"linspace_cpu\" not implemented for 'Bool'"),
    ("histc_min_gt_max", lambda T: T.histc(T.tensor([1., 2.]), bins=4, min=3, max=1),
     r"torch.histc: max must be larger than min"),
    ("histc_bins0", lambda T: T.histc(T.tensor([1., 2.]), bins=0, min=3, max=1),
     r"torch.histogram\(\): bins must be > 0, but got 0 for dimension 0"),
    ("histc_bins_negative", lambda T: T.histc(T.tensor([1., 2.]), bins=-1),
     r"bins must be > 0, but got -1 for dimension 0"),
    ("histc_nan_data", lambda T: T.histc(T.tensor([1., NAN]), bins=3),
     r"torch.histc: range of \[-?nan, -?nan\] is not finite"),
    ("histc_inf_data", lambda T: T.histc(T.tensor([1., math.inf]), bins=3),
     r"torch.histc: range of \[1, inf\] is not finite"),
    ("histc_nan_min", lambda T: T.histc(T.tensor([1., 2.]), bins=3, min=NAN, max=2),
     r"torch.histc: range of \[nan, 2\] is not finite"),
    ("bincount_negative", lambda T: T.bincount(T.tensor([0, -2])),
     r"bincount only supports 1-d non-negative integral inputs."),
    ("bincount_2d", lambda T: T.bincount(T.tensor([[0, 2]])),
     r"bincount only supports 1-d non-negative integral inputs."),
    ("bincount_0d", lambda T: T.bincount(T.tensor(2)),
     r"bincount only supports 1-d non-negative integral inputs."),
    ("bincount_empty_2d", lambda T: T.bincount(T.zeros(0, 2).long()),
     r"bincount only supports 1-d non-negative integral inputs."),
    ("bincount_float", lambda T: T.bincount(T.tensor([0., 2])),
     r"\"bincount_cpu\" not implemented for 'Float'"),
    ("bincount_bool", lambda T: T.bincount(T.tensor([True, False])),
     r"\"bincount_cpu\" not implemented for 'Bool'"),
    ("bincount_weights_len", lambda T: T.bincount(T.tensor([0, 2]), T.ones(3)),
     r"weights should be 1-d and have the same length as input"),
    ("bincount_weights_2d", lambda T: T.bincount(T.tensor([0, 1]), T.ones(2, 1)),
     r"weights should be 1-d and have the same length as input"),
    ("bincount_minlength", lambda T: T.bincount(T.tensor([0, 2]), minlength=-1),
     r"minlength should be >= 0"),
]


@pytest.mark.parametrize("name,fn,match", cases(ERRORS))
def test_errors(name, fn, match):
    both(fn, match=match, raises=True)


# ------------------------------------------------------------------------------------------------
# Traced (jax.jit): static-shape ops trace; data-dependent ones name the problem
# ------------------------------------------------------------------------------------------------

def _traced_program(x, s):
    v, i = tl.sort(x, 1, descending=True)
    t = tl.topk(x, 2, 0, largest=False)
    k = tl.kthvalue(x, 2, keepdim=True)
    pos = tl.searchsorted(s, x.reshape(-1), right=True) + tl.bucketize(x, s).sum()
    h = tl.histc(x, bins=5).sum() + tl.histc(x, 4, -1, 1).sum()
    return (v * 2 + i).sum() + t.values.sum() + t.indices.sum() + k[0].sum() + pos.sum() + \
        h.sum() + tl.argsort(x, 0).sum() + tl.msort(x).sum()


def test_ops_trace_under_jit():
    rng = np.random.default_rng(3)
    x = tl.tensor(rng.uniform(-1, 1, (3, 4)))
    s = tl.tensor([-0.5, 0.0, 0.5])
    eager = _traced_program(x, s)
    traced = jax.jit(to_jax_function(_traced_program))(x._value(), s._value())
    np.testing.assert_allclose(np.asarray(traced), eager.numpy(), rtol=1e-12)


def test_sort_backward_under_jit():
    def grads(x_arr):
        x = tl.Tensor._wrap(x_arr).requires_grad_(True)
        (tl.sort(x, 0).values * tl.arange(3.0).reshape(3, 1)).sum().backward()
        return x.grad._value()

    x = tl.tensor([[3.0, 1.0], [1.0, 2.0], [2.0, 0.0]], requires_grad=True)
    (tl.sort(x, 0).values * tl.arange(3.0).reshape(3, 1)).sum().backward()
    np.testing.assert_allclose(np.asarray(jax.jit(grads)(x.detach()._value())), x.grad.numpy())


@pytest.mark.parametrize("fn", [
    lambda x: tl.unique(x),
    lambda x: tl.unique_consecutive(x, dim=0),
    lambda x: tl.bincount(x.long().abs()),
], ids=["unique", "unique_consecutive", "bincount"])
def test_data_dependent_ops_are_eager_only(fn):
    with pytest.raises(RuntimeError, match="data-dependent output shape and cannot be traced"):
        jax.jit(to_jax_function(fn))(np.ones(3))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("largest", [True, False])
def test_topk_special_values(dtype, largest):
    """NaN (of either sign) counts as the largest value, infinities order, both topk paths
    (float32's lax.top_k and the sort for other dtypes); values and untied indices as torch."""
    inf = math.inf
    rows = [[1.0, NAN, 3.0, -inf, inf, -2.0, 0.5],    # one NaN per row: no ties
            [-0.5, 2.0, inf, -NAN, -inf, -3.0, 1.0]]
    for k in (1, 3, 7):
        both(lambda T: tuple(T.tensor(rows, dtype=getattr(T, dtype))
                             .topk(k, largest=largest, dim=1)))


_SPECIAL = [NAN, -NAN, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 2.5]


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_stable_sort_property(data):
    """Stable sort/argsort (the packed-integer path for <= 32-bit dtypes and the general one)
    agree with torch on arrays full of ties, NaNs of both signs, infinities and signed zeros."""
    dtype = data.draw(st.sampled_from(["float32", "float16", "bfloat16", "int32", "int8",
                                       "uint8", "bool", "float64", "int64"]))
    shape = data.draw(st.sampled_from([(7,), (3, 5), (2, 3, 4), (1, 33)]))
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    descending = data.draw(st.booleans())
    values = data.draw(st.lists(st.sampled_from(_SPECIAL), min_size=int(np.prod(shape)),
                                max_size=int(np.prod(shape))))
    arr = np.asarray(values, np.float64).reshape(shape)
    if not dtype.startswith(("float", "bfloat")):
        arr = np.nan_to_num(arr, nan=3.0, posinf=4.0, neginf=-4.0 if dtype != "uint8" else 5.0)
        arr = np.abs(arr) if dtype == "uint8" else arr

    def run(T):
        x = T.tensor(arr).to(getattr(T, dtype))
        return tuple(x.sort(dim=dim, descending=descending, stable=True)), \
            x.argsort(dim=dim, descending=descending, stable=True)
    both(run)
