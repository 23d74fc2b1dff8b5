"""Indexing ops against real PyTorch: gather / scatter / scatter_add / scatter_reduce /
index_select / index_add / index_copy / index_fill / index_put / masked_fill / masked_scatter /
masked_select / take / take_along_dim / argwhere / put, their in-place forms, errors, gradcheck,
tracing; and hypothesis properties of ``x[idx]`` / ``x[idx] = v`` against NumPy.

Spec tables (docs/architecture.md §7.5): one row per case, run through the harness of parity.py.
"""
import logging
import warnings

import jax
import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, example, given, settings, strategies as st

import torchlike as tl
from parity import A, Raised, both, cases, check_op, run
from torchlike.testing import to_jax_function


def I(T, v, dtype="int64"):  # noqa: E743 - an index tensor of either library
    return T.tensor(v, dtype=getattr(T, dtype))


G2 = [[0, 1, 2, 0], [2, 0, 1, 1]]          # gather/scatter index for a [3, 4] input, dim 0
G2_UNIQ = [[0, 1, 2, 0], [2, 0, 1, 1]]     # unique per column: a well-defined scatter
DUP = [[0, 0, 2, 2], [0, 0, 2, 2]]         # repeated targets in each column
X34, S34, S24 = A((3, 4)), A((3, 4)), A((2, 4))
M34 = A((3, 4), "bool")

# ------------------------------------------------------------------------------------------------
# Forward + backward + grad_fn + next_functions vs torch (float32)
# ------------------------------------------------------------------------------------------------

OPS = [
    # name, fn(T, *inputs), inputs
    ("gather0", lambda T, x: T.gather(x, 0, I(T, G2)), [X34]),
    ("gather1_dup", lambda T, x: x.gather(1, I(T, [[3, 3], [0, 0], [1, 3]])), [X34]),
    ("gather_neg_dim_small_idx", lambda T, x: T.gather(x, -1, I(T, [[1], [2]])), [X34]),
    ("gather_int32_idx", lambda T, x: T.gather(x, 0, I(T, G2, "int32")), [X34]),
    ("gather_0d", lambda T, x: T.gather(x, 0, I(T, 0)), [A(())]),
    ("scatter_src", lambda T, x, s: T.scatter(x, 0, I(T, G2_UNIQ), s), [X34, S24]),
    ("scatter_src_dim1", lambda T, x, s: x.scatter(1, I(T, [[3, 1], [0, 2]]), s[:, :2]),
     [X34, S24]),
    ("scatter_value", lambda T, x: T.scatter(x, 0, I(T, G2_UNIQ), 1.5), [X34]),
    ("scatter_value_kw", lambda T, x: T.scatter(x, 1, I(T, [[0], [1], [3]]), value=-2.0),
     [X34]),
    ("scatter_add", lambda T, x, s: T.scatter_add(x, 0, I(T, DUP), s), [X34, S24]),
    ("scatter_add_dim1", lambda T, x, s: x.scatter_add(1, I(T, [[3, 3, 3]] * 3), s[:, :3]),
     [X34, S34]),
    ("scatter_add_0d", lambda T, x, s: T.scatter_add(x, 0, I(T, 0), s), [A(()), A(())]),
    ("index_select0", lambda T, x: T.index_select(x, 0, I(T, [2, 0, 2])), [X34]),
    ("index_select1", lambda T, x: x.index_select(1, I(T, [3, 1])), [X34]),
    ("index_select_0d_idx", lambda T, x: T.index_select(x, 0, I(T, 1)), [X34]),
    ("index_select_int32", lambda T, x: T.index_select(x, -1, I(T, [0], "int32")), [X34]),
    ("index_add", lambda T, x, s: T.index_add(x, 0, I(T, [2, 0, 2]), s), [X34, S34]),
    ("index_add_alpha", lambda T, x, s: x.index_add(1, I(T, [1, 1, 0, 3]), s, alpha=2.5),
     [X34, S34]),
    ("index_copy", lambda T, x, s: T.index_copy(x, 0, I(T, [2, 0]), s[:2]), [X34, S34]),
    ("index_copy1", lambda T, x, s: x.index_copy(1, I(T, [3, 0, 1]), s[:, :3]), [X34, S34]),
    ("index_fill", lambda T, x: T.index_fill(x, 0, I(T, [2, 0]), 2.0), [X34]),
    ("index_fill_neg_dup", lambda T, x: x.index_fill(1, I(T, [-1, 3, 0]), -1.0), [X34]),
    ("index_fill_tensor", lambda T, x, v: T.index_fill(x, 1, I(T, [1, 1, 2]), v), [X34, A(())]),
    ("index_put", lambda T, x, s: T.index_put(x, (I(T, [2, 0]),), s[:2]), [X34, S34]),
    ("index_put_2idx", lambda T, x, s: x.index_put((I(T, [0, 2]), I(T, [3, 1])), s[0, :2]),
     [X34, S34]),
    ("index_put_acc_dup", lambda T, x, s: T.index_put(x, (I(T, [0, 0, 1]), I(T, [1, 1, 1])),
                                                      s[0, :3], accumulate=True), [X34, S34]),
    ("index_put_bool", lambda T, x, s: x.index_put((T.tensor([True, False, True]),), s[0]),
     [X34, S34]),
    ("masked_fill", lambda T, x, m: T.masked_fill(x, m, 0.5), [X34, M34]),
    ("masked_fill_bcast", lambda T, x: x.masked_fill(T.tensor([True, False, False, True]), 3.0),
     [X34]),
    ("masked_fill_bcast_self", lambda T, x, m: T.masked_fill(x[0], m, 1.0), [X34, M34]),
    ("masked_fill_tensor", lambda T, x, m, v: T.masked_fill(x, m, v), [X34, M34, A(())]),
    ("masked_scatter", lambda T, x, m, s: T.masked_scatter(x, m, s), [X34, M34, S34]),
    ("masked_scatter_bcast", lambda T, x, s: x.masked_scatter(T.tensor([True, False, True, True]),
                                                              s), [X34, S34]),
    ("masked_select", lambda T, x, m: T.masked_select(x, m), [X34, M34]),
    ("masked_select_bcast", lambda T, x: x.masked_select(T.tensor([False, True, True, False])),
     [X34]),
    ("take", lambda T, x: T.take(x, I(T, [[0, 11], [-1, 5]])), [X34]),
    ("take_dup", lambda T, x: x.take(I(T, [3, 3, 3])), [X34]),
    ("take_along_dim0", lambda T, x: T.take_along_dim(x, I(T, G2), 0), [X34]),
    ("take_along_dim_bcast", lambda T, x: T.take_along_dim(x, I(T, [[0], [3], [-1]]), 1), [X34]),
    ("take_along_dim_bcast_input", lambda T, x: x[:1].take_along_dim(I(T, [[0], [1]]), 1), [X34]),
    ("take_along_dim_none", lambda T, x: T.take_along_dim(x, I(T, [1, 11, 1])), [X34]),
    ("put", lambda T, x, s: T.put(x, I(T, [0, 11, -2]), s[0, :3]), [X34, S34]),
    ("put_acc_dup", lambda T, x, s: x.put(I(T, [[5, 5], [0, 5]]), s[:2, :2], accumulate=True),
     [X34, S34]),
]


@pytest.mark.parametrize("name,fn,inputs", cases(OPS))
def test_op(name, fn, inputs):
    check_op(name, fn, inputs)


# NOTE: src is the index's shape: PyTorch's backward fails when src is larger than index.
REDUCE_INPUTS = [X34, S24]


@pytest.mark.parametrize("include_self", [True, False], ids=["self", "noself"])
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
def test_scatter_reduce(reduce, include_self):
    check_op(f"scatter_reduce_{reduce}_{include_self}",
             lambda T, x, s: T.scatter_reduce(x, 0, I(T, DUP), s, reduce,
                                              include_self=include_self), REDUCE_INPUTS)


@pytest.mark.parametrize("reduce", ["amax", "amin", "prod"])
def test_scatter_reduce_ties_and_zeros(reduce):
    """Tied maxima share the gradient evenly (self included); zeros in a product."""
    xv = np.array([[1.0, 0.0, 2.0], [3.0, 1.0, 0.0]])
    sv = np.array([[1.0, 1.0, 2.0], [1.0, 0.0, 5.0]])

    def go(T):
        x = T.tensor(xv, requires_grad=True)
        s = T.tensor(sv, requires_grad=True)
        out = T.scatter_reduce(x, 0, I(T, [[0, 0, 0], [0, 0, 1]]), s, reduce)
        out.backward(T.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=T.float64))
        return out, x.grad, s.grad
    both(go)


# ------------------------------------------------------------------------------------------------
# dtypes: forward values / dtype / shape for float32, float64, int64, bool where accepted
# ------------------------------------------------------------------------------------------------

def _vals(dtype, shape, seed):
    return A(shape, dtype, grad=False).values(np.random.default_rng(seed))


DTYPE_OPS = [
    # name, fn(T, x, s): x, s of the swept dtype, shape [3, 4]; the error PyTorch raises
    # for bool (None: bool works)
    ("gather", lambda T, x, s: x.gather(1, I(T, [[1, 0], [3, 3], [2, 1]])), None),
    ("scatter", lambda T, x, s: x.scatter(0, I(T, G2_UNIQ), s), None),
    ("scatter_value", lambda T, x, s: x.scatter(0, I(T, G2_UNIQ), 1), None),
    ("scatter_value_float", lambda T, x, s: x.scatter(0, I(T, [[1]]), 1.5), None),
    ("scatter_add", lambda T, x, s: x.scatter_add(0, I(T, DUP), s), None),
    ("scatter_reduce_sum", lambda T, x, s: x.scatter_reduce(0, I(T, DUP), s, "sum"), None),
    ("scatter_reduce_prod", lambda T, x, s: x.scatter_reduce(0, I(T, DUP), s, "prod"), None),
    ("scatter_reduce_mean", lambda T, x, s: x.scatter_reduce(0, I(T, DUP), s, "mean"),
     r"^\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'$"),
    ("scatter_reduce_mean_noself", lambda T, x, s: x.scatter_reduce(0, I(T, DUP), s, "mean",
                                                                    include_self=False),
     r"^\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'$"),
    ("scatter_reduce_amax", lambda T, x, s: x.scatter_reduce(0, I(T, DUP), s, "amax"), None),
    ("scatter_reduce_amin_noself", lambda T, x, s: x.scatter_reduce(0, I(T, DUP), s, "amin",
                                                                    include_self=False), None),
    ("index_select", lambda T, x, s: x.index_select(0, I(T, [1, 1])), None),
    ("index_add", lambda T, x, s: x.index_add(0, I(T, [1, 1]), s[:2]), None),
    ("index_copy", lambda T, x, s: x.index_copy(1, I(T, [1, 0]), s[:, :2]), None),
    ("index_fill", lambda T, x, s: x.index_fill(1, I(T, [1]), 1), None),
    ("index_fill_float_value", lambda T, x, s: x.index_fill(1, I(T, [1]), 1.5), None),
    ("index_put", lambda T, x, s: x.index_put((I(T, [0, 2]),), s[:2]), None),
    ("index_put_acc", lambda T, x, s: x.index_put((I(T, [0, 0]),), s[:2], accumulate=True), None),
    ("masked_fill", lambda T, x, s: x.masked_fill(x == s, 1), None),
    ("masked_fill_0d", lambda T, x, s: x.masked_fill(x != s, s[0, 0]), None),
    ("masked_scatter", lambda T, x, s: x.masked_scatter(T.tensor([True, False, True, False]), s),
     None),
    ("masked_select", lambda T, x, s: x.masked_select(T.tensor([True, False, True, False])), None),
    ("take", lambda T, x, s: x.take(I(T, [1, -1])), None),
    ("take_along_dim", lambda T, x, s: x.take_along_dim(I(T, [[2], [0], [1]]), 1), None),
    ("put", lambda T, x, s: x.put(I(T, [1, 7]), s[0, :2]), None),
    ("put_acc", lambda T, x, s: x.put(I(T, [1, 1]), s[0, :2], accumulate=True), None),
    ("argwhere", lambda T, x, s: T.argwhere(x), None),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
@pytest.mark.parametrize("name,fn,bool_error", cases(DTYPE_OPS))
def test_dtypes(name, fn, bool_error, dtype):
    xv, sv = _vals(dtype, (3, 4), 1), _vals(dtype, (3, 4), 2)
    raises = dtype == "bool" and bool_error is not None
    both(lambda T: fn(T, T.tensor(xv), T.tensor(sv)), match=bool_error, raises=raises)


# ------------------------------------------------------------------------------------------------
# In-place forms: values, grad_fn, next_functions, grads and version bumps vs torch
# ------------------------------------------------------------------------------------------------

INPLACE = [
    # name, fn(T, x, s, m): x is a non-leaf (leaf * 1) float32 [3, 4]
    ("scatter_", lambda T, x, s, m: x.scatter_(0, I(T, G2_UNIQ), s[:2])),
    ("scatter_value_", lambda T, x, s, m: x.scatter_(1, I(T, [[1], [0], [2]]), 4.0)),
    ("scatter_add_", lambda T, x, s, m: x.scatter_add_(0, I(T, DUP), s[:2])),
    ("scatter_reduce_", lambda T, x, s, m: x.scatter_reduce_(0, I(T, DUP), s[:2], "amax")),
    ("index_add_", lambda T, x, s, m: x.index_add_(0, I(T, [1, 1]), s[:2], alpha=-1)),
    ("index_copy_", lambda T, x, s, m: x.index_copy_(0, I(T, [2]), s[:1])),
    ("index_fill_", lambda T, x, s, m: x.index_fill_(1, I(T, [0, 2]), 7.0)),
    ("index_put_", lambda T, x, s, m: x.index_put_((I(T, [1]), I(T, [2])), s[0, 0])),
    ("index_put_acc_", lambda T, x, s, m: x.index_put_((I(T, [1, 1]),), s[:2], accumulate=True)),
    ("masked_fill_", lambda T, x, s, m: x.masked_fill_(m, -1.0)),
    ("masked_fill_tensor_", lambda T, x, s, m: x.masked_fill_(m, s[0, 0])),
    ("masked_scatter_", lambda T, x, s, m: x.masked_scatter_(m, s)),
    ("put_", lambda T, x, s, m: x.put_(I(T, [3, 0]), s[1, :2])),
    ("put_acc_", lambda T, x, s, m: x.put_(I(T, [3, 3]), s[1, :2], accumulate=True)),
    ("through_view", lambda T, x, s, m: x[1:].index_fill_(1, I(T, [0]), 2.0)),
]


@pytest.mark.parametrize("name,fn", cases(INPLACE))
def test_inplace(name, fn):
    rng = np.random.default_rng(5)
    xv, sv = rng.uniform(-2, 2, (3, 4)), rng.uniform(-2, 2, (3, 4))
    mv, gv = rng.random((3, 4)) > 0.5, rng.standard_normal((3, 4))

    def go(T):
        leaf = T.tensor(xv, dtype=T.float32, requires_grad=True)
        s = T.tensor(sv, dtype=T.float32, requires_grad=True)
        x = leaf * 1
        r = fn(T, x, s, T.tensor(mv))
        res = [r is x, x, x._version, type(x.grad_fn).__name__]
        if name != "through_view":   # see the report: CopySlices lists one more input here
            res.append([type(n).__name__ for n, _ in x.grad_fn.next_functions if n is not None])
        x.backward(T.tensor(gv, dtype=T.float32))
        return res + [leaf.grad, s.grad]
    both(go)


def test_inplace_on_leaf_raises():
    both(lambda T: T.ones(3, requires_grad=True).index_fill_(0, I(T, [0]), 1.0),
         match="a leaf Variable that requires grad", raises=True)


def test_legacy_scatter_reduce_has_no_derivative():
    def go(T):
        x = T.ones(2, 3, requires_grad=True)
        s = T.full((2, 3), 2.0, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = T.scatter(x, 0, I(T, [[1, 0, 1]]), s, reduce="multiply")
            v = T.scatter(x, 1, I(T, [[1], [1]]), 3.0, reduce="add")
        values = [out, v, type(out.grad_fn).__name__, type(v.grad_fn).__name__]
        return values + [run(lambda T: out.sum().backward(), T)]
    ref, got = both(go)
    assert isinstance(got[-1], Raised) and "derivative for aten::scatter" in str(got[-1].exc)


# ------------------------------------------------------------------------------------------------
# Errors: PyTorch's exception type and wording
# ------------------------------------------------------------------------------------------------

def _x(T):
    return T.arange(12.0).view(3, 4)


ERRORS = [
    # name, fn(T), match
    ("masked_fill_bad_bcast", lambda T: (_x(T) * 1)[0].masked_fill_(_x(T) > 0, 1.0),
     r"^output with shape \[4\] doesn't match the broadcast shape \[3, 4\]$"),
    ("gather_oob", lambda T: T.gather(_x(T), 0, I(T, [[5]])), "index 5 is out of bounds"),
    ("gather_neg", lambda T: T.gather(_x(T), 0, I(T, [[-1]])), "index -1 is out of bounds"),
    ("gather_float_idx", lambda T: T.gather(_x(T), 0, T.tensor([[0.0]])),
     r"Expected dtype int32/int64 for index"),
    ("gather_ndim", lambda T: T.gather(_x(T), 0, I(T, [0])), "same number of dimensions"),
    ("gather_size", lambda T: T.gather(_x(T), 0, T.zeros(2, 5, dtype=T.long)),
     r"Size does not match at dimension 1 expected index \[2, 5\]"),
    ("gather_dim", lambda T: T.gather(_x(T), 2, I(T, [[0]])), "Dimension out of range"),
    ("scatter_oob", lambda T: T.scatter(_x(T), 0, I(T, [[3]]), 1.0),
     "index 3 is out of bounds for dimension 0 with size 3"),
    ("scatter_src_small", lambda T: T.scatter(_x(T), 0, I(T, G2), T.ones(1, 4)),
     "to be no larger size than src"),
    ("scatter_dtype", lambda T: T.scatter(_x(T), 0, I(T, G2), T.ones(2, 4, dtype=T.float64)),
     "Expected self.dtype to be equal to src.dtype"),
    ("scatter_ndim", lambda T: T.scatter(_x(T), 0, I(T, [0]), 1.0),
     "same number of dimensions as self tensor"),
    ("scatter_bad_reduce", lambda T: T.scatter(_x(T), 0, I(T, G2), 1.0, reduce="mean"),
     "reduce argument must be either add or multiply"),
    ("scatter_add_dtype", lambda T: T.scatter_add(_x(T), 0, I(T, G2), T.ones(2, 4).long()),
     "Expected self.dtype to be equal to src.dtype"),
    ("scatter_reduce_bad", lambda T: T.scatter_reduce(_x(T), 0, I(T, G2), _x(T), "foo"),
     "reduce argument must be either sum, prod, mean, amax or amin, got foo"),
    ("index_select_oob", lambda T: T.index_select(_x(T), 0, I(T, [3])), "index out of range"),
    ("index_select_neg", lambda T: T.index_select(_x(T), 0, I(T, [-1])), "index out of range"),
    ("index_select_2d", lambda T: T.index_select(_x(T), 0, I(T, [[0]])),
     "Index is supposed to be a vector"),
    ("index_select_float", lambda T: T.index_select(_x(T), 0, T.tensor([0.0])),
     "Expected dtype int32 or int64 for index"),
    ("index_add_oob", lambda T: T.index_add(_x(T), 0, I(T, [5]), _x(T)[:1]),
     "index 5 is out of bounds for dimension 0 with size 3"),
    ("index_add_count", lambda T: T.index_add(_x(T), 0, I(T, [0, 1]), _x(T)[:1]),
     r"Number of indices \(2\) should be equal to source.size\(dim\): \(1\), for dim: 0"),
    ("index_add_dtype", lambda T: T.index_add(_x(T), 0, I(T, [0]), _x(T)[:1].double()),
     r"self \(Float\) and source \(Double\) must have the same scalar type"),
    ("index_add_2d", lambda T: T.index_add(_x(T), 0, I(T, [[0]]), _x(T)[:1]),
     "Index is supposed to be a vector, but got dim: 2"),
    ("index_add_src_shape", lambda T: T.index_add(_x(T), 0, I(T, [0]), T.ones(1, 3)),
     "source tensor shape must match self tensor shape"),
    ("index_add_float_idx", lambda T: T.index_add(_x(T), 0, T.tensor([0.0]), _x(T)[:1]),
     "Expected dtype int32/int64 for index but got: Float"),
    ("index_copy_oob", lambda T: T.index_copy(_x(T), 0, I(T, [5]), _x(T)[:1]),
     "index_copy_\\(\\): index 5 is out of bounds"),
    ("index_copy_int32", lambda T: T.index_copy(_x(T), 0, I(T, [0], "int32"), _x(T)[:1]),
     "Expected a long tensor for index, but got Int"),
    ("index_copy_count", lambda T: T.index_copy(_x(T), 0, I(T, [0, 1]), _x(T)[:1]),
     r"Number of indices \(2\) should be equal to source.size\(dim\) \(1\)"),
    ("index_copy_dtype", lambda T: T.index_copy(_x(T), 0, I(T, [0]), _x(T)[:1].double()),
     r"\(self\) Float and \(source\) Double"),
    ("index_fill_oob", lambda T: T.index_fill(_x(T), 0, I(T, [5]), 1.0), "index 5 is out of"),
    ("index_fill_negoob", lambda T: T.index_fill(_x(T), 0, I(T, [-4]), 1.0), "index -4 is out"),
    ("index_fill_int32", lambda T: T.index_fill(_x(T), 0, I(T, [0], "int32"), 1.0),
     "Expected dtype int64 for index"),
    ("index_fill_1d_value", lambda T: T.index_fill(_x(T), 0, I(T, [0]), T.tensor([1.0])),
     "only supports a 0-dimensional value tensor"),
    ("index_put_oob", lambda T: T.index_put(_x(T), (I(T, [5]),), T.tensor(1.0)),
     "index 5 is out of bounds for dimension 0 with size 3"),
    ("index_put_none", lambda T: T.index_put(_x(T), (None, I(T, [1])), T.tensor(1.0)),
     "expected Tensor as element 0 in argument 1, but got NoneType"),
    ("index_put_scalar", lambda T: T.index_put(_x(T), (I(T, [1]),), 1.0), "must be Tensor"),
    ("index_put_dtype", lambda T: T.index_put(_x(T), (I(T, [1]),), T.tensor(1)),
     "Index put requires the source and destination dtypes match"),
    ("index_put_shape", lambda T: T.index_put(_x(T), (I(T, [0]),), T.ones(3)),
     r"shape mismatch: value tensor of shape \[3\] cannot be broadcast"),
    ("masked_fill_long_mask", lambda T: T.masked_fill(_x(T), T.ones(3, 4, dtype=T.long), 1.0),
     "masked_fill_ only supports boolean masks, but got mask with dtype long int"),
    ("masked_fill_1d_value", lambda T: T.masked_fill(_x(T), _x(T) > 2, T.tensor([1.0])),
     "only supports a 0-dimensional value tensor"),
    ("masked_scatter_small", lambda T: T.masked_scatter(_x(T), _x(T) >= 0, T.ones(5)),
     "Number of elements of source < number of ones in mask"),
    ("masked_scatter_long_mask", lambda T: T.masked_scatter(_x(T), T.ones(3, 4).long(),
                                                            T.ones(12)),
     "masked_scatter_ only supports boolean masks, but got mask with dtype Long"),
    ("masked_scatter_dtype", lambda T: T.masked_scatter(_x(T), _x(T) > 0, T.ones(12).double()),
     "expected self and source to have same dtypes but gotFloat and Double"),
    ("masked_select_long_mask", lambda T: T.masked_select(_x(T), T.ones(3, 4).long()),
     "masked_select: expected BoolTensor for mask"),
    ("take_oob", lambda T: T.take(_x(T), I(T, [12])),
     "out of range: tried to access index 12 on a tensor of 12 elements"),
    ("take_negoob", lambda T: T.take(_x(T), I(T, [-13])), "tried to access index -13"),
    ("take_int32", lambda T: T.take(_x(T), I(T, [1], "int32")),
     "Expected a long tensor for index, but got Int"),
    ("take_along_dim_ndim", lambda T: T.take_along_dim(_x(T), I(T, [0]), 0),
     "input and indices should have the same number of dimensions"),
    ("take_along_dim_int32", lambda T: T.take_along_dim(_x(T), I(T, [[0]], "int32"), 0),
     "dtype of indices should be Long but got Int"),
    ("take_along_dim_bcast", lambda T: T.take_along_dim(_x(T), I(T, [[0], [1]]), 1),
     r"The size of tensor a \(3\) must match the size of tensor b \(2\)"),
    ("put_oob", lambda T: T.put(_x(T), I(T, [12]), T.tensor([1.0])),
     "out of range: tried to access index 12 on a tensor of 12 elements"),
    ("put_numel", lambda T: T.put(_x(T), I(T, [1, 2]), T.tensor([1.0])),
     "Expected source and index to have the same number of elements"),
    ("put_dtype", lambda T: T.put(_x(T), I(T, [1]), T.tensor([1.0]).double()),
     "self.dtype = Float and source.dtype = Double"),
    ("put_int32", lambda T: T.put(_x(T), I(T, [1], "int32"), T.tensor([1.0])),
     "Expected a long tensor for index, but got Int"),
]


@pytest.mark.parametrize("name,fn,match", cases(ERRORS))
def test_errors(name, fn, match):
    both(fn, match=match, raises=True)


# ------------------------------------------------------------------------------------------------
# argwhere / nonzero shapes, gradcheck in float64, tracing
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("vals", [[[0.0, 1.0], [2.0, 0.0]], 3.0, 0.0, [[0.0, 0.0]]],
                         ids=["2d", "0d", "0d_zero", "none"])
def test_argwhere_nonzero(vals):
    both(lambda T: [T.argwhere(T.tensor(vals)), T.nonzero(T.tensor(vals))])


RNG = np.random.default_rng(0)
XG, SG = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
MG = RNG.random((3, 4)) > 0.5
GRADCHECK = [
    # name, fn(x, s) on float64 [3, 4] leaves
    ("gather", lambda x, s: x.gather(0, tl.tensor(DUP))),
    ("scatter", lambda x, s: x.scatter(0, tl.tensor(G2_UNIQ), s)),
    ("scatter_add", lambda x, s: x.scatter_add(0, tl.tensor(DUP), s)),
    ("scatter_reduce_prod", lambda x, s: x.scatter_reduce(0, tl.tensor(DUP), s, "prod")),
    ("scatter_reduce_mean", lambda x, s: x.scatter_reduce(0, tl.tensor(DUP), s, "mean",
                                                          include_self=False)),
    ("scatter_reduce_amax", lambda x, s: x.scatter_reduce(0, tl.tensor(DUP), s, "amax")),
    ("index_select", lambda x, s: x.index_select(1, tl.tensor([3, 3, 0]))),
    ("index_add", lambda x, s: x.index_add(0, tl.tensor([1, 1, 0]), s, alpha=0.5)),
    ("index_copy", lambda x, s: x.index_copy(1, tl.tensor([3, 0]), s[:, :2])),
    ("index_fill_tensor", lambda x, s: x.index_fill(1, tl.tensor([2, 2]), s[0, 0])),
    ("masked_fill_tensor", lambda x, s: x.masked_fill(tl.tensor(MG), s[1, 1])),
    ("masked_scatter", lambda x, s: x.masked_scatter(tl.tensor(MG), s)),
    ("masked_select", lambda x, s: x.masked_select(tl.tensor(MG))),
    ("take", lambda x, s: x.take(tl.tensor([1, 1, -1]))),
    ("take_along_dim", lambda x, s: x.take_along_dim(tl.tensor([[0], [2], [2]]), 1)),
    ("put_acc", lambda x, s: x.put(tl.tensor([4, 4]), s[0, :2], accumulate=True)),
]


@pytest.mark.parametrize("name,fn", cases(GRADCHECK))
def test_gradcheck(name, fn):
    x = tl.tensor(XG, requires_grad=True)
    s = tl.tensor(SG, requires_grad=True)
    assert tl.autograd.gradcheck(fn, (x, s))


TRACED = [
    # name, fn(x) on a float64 [3, 4] tensor; same value under jax.jit as eagerly
    ("gather", lambda x: x.gather(0, tl.tensor(DUP))),
    ("scatter", lambda x: x.scatter(0, tl.tensor(G2_UNIQ), x * 2)),
    ("scatter_value", lambda x: x.scatter(1, tl.tensor([[0], [1], [2]]), 3.0)),
    ("scatter_reduce_prod", lambda x: x.scatter_reduce(0, tl.tensor(DUP), x, "prod")),
    ("scatter_reduce_mean", lambda x: x.scatter_reduce(0, tl.tensor(DUP), x, "mean")),
    ("index_select", lambda x: x.index_select(1, tl.tensor([1, 0]))),
    ("index_add", lambda x: x.index_add(0, tl.tensor([1, 1]), x[:2])),
    ("index_fill", lambda x: x.index_fill(0, tl.tensor([1]), 0.0)),
    ("index_put", lambda x: x.index_put((tl.tensor([2]),), x[0], accumulate=True)),
    ("masked_fill", lambda x: x.masked_fill(x > 0, 0.0)),
    ("masked_scatter", lambda x: x.masked_scatter(x > 0, x * 10)),
    ("take", lambda x: x.take(tl.tensor([0, -1]))),
    ("take_along_dim", lambda x: x.take_along_dim(tl.tensor([[0], [2], [1]]), 1)),
    ("put_", lambda x: x.clone().put_(tl.tensor([0, 5]), x[0, :2] + 1)),
    ("traced_index", lambda x: x.gather(0, (x > 0).long()[:1])),
]


@pytest.mark.parametrize("name,fn", cases(TRACED))
def test_traced(name, fn):
    x = tl.tensor(XG)
    traced = jax.jit(to_jax_function(fn))(x._value())
    np.testing.assert_allclose(np.asarray(traced), fn(x).numpy(), rtol=1e-12)


@pytest.mark.parametrize("fn", [lambda x: x.masked_select(x > 0), lambda x: tl.argwhere(x)],
                         ids=["masked_select", "argwhere"])
def test_data_dependent_shapes_raise_when_traced(fn):
    with pytest.raises(RuntimeError, match="data-dependent output shape"):
        jax.jit(to_jax_function(fn))(tl.tensor(XG)._value())


# ------------------------------------------------------------------------------------------------
# Hypothesis: x[idx] and x[idx] = v / += v against NumPy (numpy's indexing is PyTorch's, for
# the index kinds both accept)
# ------------------------------------------------------------------------------------------------

SHAPE = (3, 4, 2)


@st.composite
def components(draw, shape=SHAPE):
    """An index tuple for an array of ``shape``: ints, slices (steps > 0), None, Ellipsis,
    int lists/arrays (as tensors), bool masks."""
    items, dim, used_ellipsis, n_adv = [], 0, False, 0
    for _ in range(draw(st.integers(1, 4))):
        if dim >= len(shape):
            break
        size = shape[dim]
        kind = draw(st.sampled_from(["int", "slice", "none", "ellipsis", "list", "mask"]))
        if kind == "int":
            items.append(draw(st.integers(-size, size - 1)))
            dim += 1
        elif kind == "slice":
            start = draw(st.none() | st.integers(-size - 1, size + 1))
            stop = draw(st.none() | st.integers(-size - 1, size + 1))
            items.append(slice(start, stop, draw(st.none() | st.integers(1, 3))))
            dim += 1
        elif kind == "none":
            items.append(None)
        elif kind == "ellipsis" and not used_ellipsis:
            used_ellipsis = True
            items.append(Ellipsis)
            dim = len(shape) - (len(shape) - dim) // 2   # leave room for later components
        elif kind == "list" and n_adv < 2:
            n_adv += 1
            n = draw(st.integers(1, 3))
            items.append(draw(st.lists(st.integers(-size, size - 1), min_size=n, max_size=n)))
            dim += 1
        elif kind == "mask" and n_adv == 0:
            n_adv += 1
            items.append(np.array(draw(st.lists(st.booleans(), min_size=size, max_size=size))))
            dim += 1
    return tuple(items)


def _np_index(index):
    return tuple(np.asarray(i) if isinstance(i, list) else i for i in index)


def _to_tl(index):
    return tuple(tl.tensor(i) if isinstance(i, (list, np.ndarray)) else i for i in index)


def _repeats(index):
    """Whether an int list repeats a position (x[i] += v then keeps one write, in numpy and
    PyTorch alike, but which one is unspecified)."""
    return any(isinstance(i, list) and len({j % SHAPE[0] for j in i}) < len(i) for i in index)


def _numpy_or_error(fn):
    try:
        return fn()
    except IndexError:
        return IndexError


BASE = np.arange(np.prod(SHAPE), dtype=np.float64).reshape(SHAPE)
HSETTINGS = settings(max_examples=25, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


@HSETTINGS
@given(components())
def test_getitem_matches_numpy(index):
    expected = _numpy_or_error(lambda: BASE[_np_index(index)])
    if expected is IndexError:   # e.g. index arrays that do not broadcast together
        with pytest.raises(IndexError):
            tl.tensor(BASE)[_to_tl(index)]
        return
    got = tl.tensor(BASE)[_to_tl(index)]
    assert tuple(got.shape) == expected.shape
    np.testing.assert_array_equal(got.numpy(), expected)


@HSETTINGS
@given(components(), st.booleans())
def test_setitem_matches_numpy(index, add):
    target = _numpy_or_error(lambda: BASE[_np_index(index)])
    if target is IndexError or (add and _repeats(index)):
        return
    last = np.shape(target)[-1:]
    value = np.arange(1, 1 + (last[0] if last else 1), dtype=np.float64).reshape(last)
    expected, x = BASE.copy(), tl.tensor(BASE)
    if add:
        expected[_np_index(index)] += value
        x[_to_tl(index)] += tl.tensor(value)
    else:
        expected[_np_index(index)] = value
        x[_to_tl(index)] = tl.tensor(value)
    np.testing.assert_array_equal(x.numpy(), expected)


@settings(HSETTINGS, max_examples=15)
@given(components(), st.floats(-3, 3, allow_nan=False))
@example((np.zeros(SHAPE[0], bool), [0, 1]), 0.0)   # a case hypothesis once found
def test_setitem_scalar_matches_torch(index, v):
    # (an index numpy refuses, e.g. an all-False mask beside a list, torch refuses too)
    if _repeats(index) or _numpy_or_error(lambda: BASE[_np_index(index)]) is IndexError:
        return

    def go(T):
        x = T.tensor(BASE)
        x[tuple(T.tensor(i) if isinstance(i, (list, np.ndarray)) else i for i in index)] = v
        return x
    both(go)


def test_a_slice_of_a_whole_dim_runs_no_program(caplog):
    """``x[:, -n:]`` on a dim of at most n (a context window cut from a shorter sequence) is the
    array itself: no program for each new length, and still a view with SliceBackward0 that
    writes through both ways, as in PyTorch."""
    v = np.arange(21.0, dtype=np.float32).reshape(3, 7)
    x = tl.tensor(v, requires_grad=True)
    x + 1   # (the first program of a process also compiles a probe of XLA's options)
    with jax.log_compiles(), caplog.at_level(logging.WARNING):
        y = x[:, -9:]
    assert "XLA compilation" not in caplog.text, caplog.text
    np.testing.assert_array_equal(y[:, 0:7:2][:, :4].detach().numpy(), v[:, 0:7:2])
    # a step over a dim of 1 keeps all of it too
    np.testing.assert_array_equal(y[:1, :, None][:, :, ::3].detach().numpy(), v[:1, :, None])
    for lib in (torch, tl):
        leaf = lib.tensor(v, requires_grad=True)
        window = leaf[:, -9:]
        assert type(window.grad_fn).__name__ == "SliceBackward0" and window._base is leaf
        (window * lib.tensor(v)).sum().backward()
        np.testing.assert_array_equal(leaf.grad.numpy(), v)
        base = lib.tensor(v)
        view = base.narrow(1, 0, 7)
        view[0, 0] = -1.0
        base[2, 6] = -2.0
        assert base[0, 0].item() == -1.0 and view[2, 6].item() == -2.0


def test_copy_from_a_matching_source_runs_no_program(caplog):
    """copy_ from a tensor of the destination's shape, dtype and device takes the source's
    array (jax arrays are immutable, so later writes to either leave the other alone), and
    still records CopyBackwards; any other source runs the copy program (cast, broadcast)."""
    src = tl.tensor(np.arange(65.0, dtype=np.float32).reshape(5, 13), requires_grad=True)
    dst = tl.zeros(5, 13)
    with jax.log_compiles(), caplog.at_level(logging.WARNING):
        with tl.no_grad():
            dst.copy_(src)
    assert "XLA compilation" not in caplog.text, caplog.text
    with tl.no_grad():
        src.add_(1.0)
    np.testing.assert_array_equal(dst.numpy(), np.arange(65.0).reshape(5, 13))

    for lib in (torch, tl):
        s = lib.ones(5, 13, requires_grad=True)
        d = lib.zeros(5, 13, dtype=lib.float64).float()   # a non-leaf, then copied into
        d.copy_(s * 2)
        assert type(d.grad_fn).__name__ == "CopyBackwards"
        (d * d).sum().backward()
        np.testing.assert_array_equal(s.grad.numpy(), np.full((5, 13), 8.0, np.float32))
    wide = tl.zeros(5, 13, dtype=tl.float64).copy_(src)
    np.testing.assert_array_equal(wide.detach().numpy(), np.arange(1.0, 66.0).reshape(5, 13))
