"""Parity tests: torchlike's shape ops against real PyTorch (CPU): reductions, matmul, shape
ops and views, indexing and index assignment, cat / stack / where / clamp; and the errors.

Cases are spec tables run through the harness of parity.py: one row per case (docs/architecture.md
§7.5).
"""
import numpy as np
import pytest
import torch

from parity import A, both, cases, check_op, gname, seed_of

# ------------------------------------------------------------------------------------------------
# Reductions
# ------------------------------------------------------------------------------------------------

REDUCE = [
    # name, fn, input
    ("sum", lambda T, x: x.sum(), A((2, 3, 4))),
    ("sum_fn", lambda T, x: T.sum(x), A((2, 3, 4))),
    ("sum_0", lambda T, x: x.sum(0), A((2, 3, 4))),
    ("sum_-1", lambda T, x: x.sum(-1), A((2, 3, 4))),
    ("sum_dim_kw", lambda T, x: T.sum(x, dim=1), A((2, 3, 4))),
    ("sum_keepdim", lambda T, x: x.sum(1, keepdim=True), A((2, 3, 4))),
    ("sum_tuple", lambda T, x: x.sum((0, 2)), A((2, 3, 4))),
    ("sum_tuple_keepdim", lambda T, x: x.sum(dim=(0, -1), keepdim=True), A((2, 3, 4))),
    ("sum_list", lambda T, x: x.sum([1]), A((2, 3, 4))),
    ("sum_0d", lambda T, x: x.sum(), A(())),
    ("sum_0d_dim0", lambda T, x: x.sum(0), A(())),
    ("sum_dtype", lambda T, x: x.sum(dtype=T.float64), A((2, 3))),
    ("sum_f64", lambda T, x: x.sum(1), A((2, 3), "float64")),
    ("sum_f16", lambda T, x: x.sum(), A((2, 3), "float16")),
    ("sum_bf16", lambda T, x: x.sum(0), A((2, 3), "bfloat16")),
    ("sum_i32", lambda T, x: x.sum(), A((2, 3), "int32")),
    ("sum_i32_dim", lambda T, x: x.sum(1), A((2, 3), "int32")),
    ("sum_u8", lambda T, x: x.sum(), A((2, 3), "uint8")),
    ("sum_bool", lambda T, x: x.sum(), A((2, 3), "bool")),
    ("sum_bool_dim", lambda T, x: T.sum(x, 0), A((2, 3), "bool")),
    ("sum_empty", lambda T, x: x[:0].sum(), A((2, 3))),
    ("mean", lambda T, x: x.mean(), A((2, 3, 4))),
    ("mean_fn", lambda T, x: T.mean(x), A((2, 3, 4))),
    ("mean_1", lambda T, x: x.mean(1), A((2, 3, 4))),
    ("mean_keepdim", lambda T, x: x.mean(-1, keepdim=True), A((2, 3, 4))),
    ("mean_tuple", lambda T, x: T.mean(x, dim=(0, 1)), A((2, 3, 4))),
    ("mean_f64", lambda T, x: x.mean(0), A((2, 3), "float64")),
    ("mean_f16", lambda T, x: x.mean(), A((2, 3), "float16")),
    ("mean_int_dtype", lambda T, x: x.mean(dtype=T.float64), A((2, 3), "int64")),
    ("mean_empty", lambda T, x: x[:0].mean(), A((2, 3))),
    ("mean_0d", lambda T, x: x.mean(), A(())),
    ("sum_of_sum", lambda T, x: x.sum(0).sum(0), A((2, 3, 4))),
]


@pytest.mark.parametrize("name,fn,x", cases(REDUCE))
def test_reduce(name, fn, x):
    check_op(name, fn, [x])


# ------------------------------------------------------------------------------------------------
# matmul / mm / bmm
# ------------------------------------------------------------------------------------------------

MATMUL = [
    # name, fn, a, b, the error's message (None: a value row)
    ("vv", lambda T, a, b: T.matmul(a, b), A((3,)), A((3,)), None),
    ("mv", lambda T, a, b: a @ b, A((2, 3)), A((3,)), None),
    ("vm", lambda T, a, b: a @ b, A((3,)), A((3, 4)), None),
    ("mm_op", lambda T, a, b: a @ b, A((2, 3)), A((3, 4)), None),
    ("mm", lambda T, a, b: T.mm(a, b), A((2, 3)), A((3, 4)), None),
    ("mm_method", lambda T, a, b: a.mm(b), A((2, 3)), A((3, 4)), None),
    ("matmul_method", lambda T, a, b: a.matmul(b), A((2, 3)), A((3, 4)), None),
    ("bm_m", lambda T, a, b: a @ b, A((2, 2, 3)), A((3, 4)), None),
    ("bbm_m", lambda T, a, b: a @ b, A((2, 3, 2, 3)), A((3, 4)), None),
    ("bm_m_transposed", lambda T, a, b: a.transpose(0, 1) @ b, A((2, 2, 3)), A((3, 4)), None),
    ("bm_m_i64", lambda T, a, b: a @ b, A((2, 2, 3), "int64"), A((3, 4), "int64"), None),
    ("m_bm", lambda T, a, b: a @ b, A((2, 3)), A((2, 3, 4)), None),
    ("bmm_op", lambda T, a, b: a @ b, A((2, 2, 3)), A((2, 3, 4)), None),
    ("bmm", lambda T, a, b: T.bmm(a, b), A((2, 2, 3)), A((2, 3, 4)), None),
    ("bmm_method", lambda T, a, b: a.bmm(b), A((2, 2, 3)), A((2, 3, 4)), None),
    ("v_bm", lambda T, a, b: a @ b, A((3,)), A((2, 3, 4)), None),
    ("bm_v", lambda T, a, b: a @ b, A((2, 2, 3)), A((3,)), None),
    ("broadcast_batch", lambda T, a, b: a @ b, A((2, 1, 2, 3)), A((3, 3, 4)), None),
    ("mm_f64", lambda T, a, b: a @ b, A((2, 3), "float64"), A((3, 4), "float64"), None),
    ("mm_i64", lambda T, a, b: a @ b, A((2, 3), "int64"), A((3, 4), "int64"), None),
    ("mm_f16", lambda T, a, b: a @ b, A((2, 3), "float16"), A((3, 4), "float16"), None),
    ("mm_shape_error", lambda T, a, b: T.mm(a, b), A((2, 3)), A((4, 5)),
     r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"),
    ("matmul_shape_error", lambda T, a, b: a @ b, A((2, 3)), A((4, 5)),
     r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"),
    ("mm_dtype_error", lambda T, a, b: T.mm(a, b), A((2, 3)), A((3, 4), "float64"),
     r"expected m1 and m2 to have the same dtype, but got: float != double"),
    ("matmul_dtype_error", lambda T, a, b: a @ b, A((2, 3)), A((3, 4), "float64"),
     r"expected m1 and m2 to have the same dtype, but got: float != double"),
    ("vv_mismatch", lambda T, a, b: a @ b, A((3,)), A((4,)),
     r"inconsistent tensor size, expected tensor \[3\] and src \[4\] to have the same number of "
     r"elements, but got 3 and 4 elements respectively"),
    ("bmm_2d_error", lambda T, a, b: T.bmm(a, b), A((2, 3)), A((3, 4)),
     r"batch1 must be a 3D tensor"),
    ("mm_1d_error", lambda T, a, b: T.mm(a, b), A((3,)), A((3, 4)), r"self must be a matrix"),
    ("matmul_0d_error", lambda T, a, b: T.matmul(a, b), A(()), A((3,)),
     r"both arguments to matmul need to be at least 1D, but they are 0D and 1D"),
]


@pytest.mark.parametrize("name,fn,a,b,match", cases(MATMUL))
def test_matmul(name, fn, a, b, match):
    check_op(name, fn, [a, b], match=match, raises=match is not None)


# ------------------------------------------------------------------------------------------------
# Shape ops, views, indexing
# ------------------------------------------------------------------------------------------------

X = A((2, 3, 4))
SHAPE = [
    # name, fn, input, the error's message (None: a value row)
    ("view", lambda T, x: x.view(6, 4), X, None),
    ("view_tuple", lambda T, x: x.view((4, 6)), X, None),
    ("view_-1", lambda T, x: x.view(-1), X, None),
    ("view_2_-1", lambda T, x: x.view(2, -1), X, None),
    ("view_bad_numel", lambda T, x: x.view(5, 5), X, r"shape '\[5, 5\]' is invalid for input of "
     "size 24"),
    ("view_two_-1", lambda T, x: x.view(-1, -1), X, "only one dimension can be inferred"),
    ("view_noncontig", lambda T, x: x.transpose(0, 1).view(-1), X, "view size is not compatible"),
    ("view_as", lambda T, x: x.view_as(T.zeros(4, 6)), X, None),
    ("reshape", lambda T, x: x.reshape(4, 6), X, None),
    ("reshape_fn", lambda T, x: T.reshape(x, (3, 8)), X, None),
    ("reshape_-1", lambda T, x: x.reshape(-1), X, None),
    ("reshape_noncontig", lambda T, x: x.transpose(0, 1).reshape(-1), X, None),
    ("reshape_as", lambda T, x: x.reshape_as(T.zeros(12, 2)), X, None),
    ("reshape_0d", lambda T, x: x.reshape(1, 1), A(()), None),
    ("transpose", lambda T, x: x.transpose(0, 2), X, None),
    ("transpose_neg", lambda T, x: T.transpose(x, -1, -2), X, None),
    ("transpose_same", lambda T, x: x.transpose(1, 1), X, None),
    ("transpose_bad", lambda T, x: x.transpose(0, 3), X, "Dimension out of range"),
    ("t", lambda T, x: x.t(), A((2, 3)), None),
    ("t_fn", lambda T, x: T.t(x), A((2, 3)), None),
    ("t_1d", lambda T, x: x.t(), A((3,)), None),
    ("t_3d", lambda T, x: x.t(), X, r"t\(\) expects a tensor with <= 2 dimensions, but self is 3D"),
    ("T_2d", lambda T, x: x.T, A((2, 3)), None),
    ("mT", lambda T, x: x.mT, X, None),
    ("permute", lambda T, x: x.permute(2, 0, 1), X, None),
    ("permute_tuple", lambda T, x: x.permute((1, 2, 0)), X, None),
    ("permute_neg", lambda T, x: T.permute(x, (-1, 0, 1)), X, None),
    ("permute_bad", lambda T, x: x.permute(0, 1), X,
     r"number of dimensions in the tensor input does not match the length of the desired "
     r"ordering of dimensions i\.e\. input\.dim\(\) = 3 is not equal to len\(dims\) = 2"),
    ("permute_repeat", lambda T, x: x.permute(0, 0, 1), X,
     r"permute\(\): duplicate dims are not allowed\."),
    ("unsqueeze_0", lambda T, x: x.unsqueeze(0), X, None),
    ("unsqueeze_-1", lambda T, x: T.unsqueeze(x, -1), X, None),
    ("unsqueeze_3", lambda T, x: x.unsqueeze(3), X, None),
    ("unsqueeze_bad", lambda T, x: x.unsqueeze(5), X, "Dimension out of range"),
    ("squeeze", lambda T, x: x.squeeze(), A((2, 1, 3, 1)), None),
    ("squeeze_fn", lambda T, x: T.squeeze(x), A((2, 1, 3, 1)), None),
    ("squeeze_1", lambda T, x: x.squeeze(1), A((2, 1, 3, 1)), None),
    ("squeeze_-1", lambda T, x: x.squeeze(-1), A((2, 1, 3, 1)), None),
    ("squeeze_noop", lambda T, x: x.squeeze(0), A((2, 1, 3, 1)), None),
    ("squeeze_tuple", lambda T, x: x.squeeze((1, 3)), A((2, 1, 3, 1)), None),
    ("squeeze_0d", lambda T, x: x.squeeze(), A(()), None),
    ("expand", lambda T, x: x.expand(2, 3, 4), A((3, 1)), None),
    ("expand_-1", lambda T, x: x.expand(-1, 4), A((3, 1)), None),
    ("expand_tuple", lambda T, x: x.expand((2, 3, 4)), A((1, 4)), None),
    ("expand_0d", lambda T, x: x.expand(2, 2), A(()), None),
    ("expand_bad", lambda T, x: x.expand(2, 4), A((3, 1)),
     r"The expanded size of the tensor \(2\) must match the existing size \(3\) at non-singleton "
     r"dimension 0\.  Target sizes: \[2, 4\]\.  Tensor sizes: \[3, 1\]"),
    ("expand_as", lambda T, x: x.expand_as(T.zeros(2, 3, 4)), A((3, 1)), None),
    ("flatten", lambda T, x: x.flatten(), X, None),
    ("flatten_fn", lambda T, x: T.flatten(x, 1), X, None),
    ("flatten_0_1", lambda T, x: x.flatten(0, 1), X, None),
    ("flatten_neg", lambda T, x: x.flatten(-2, -1), X, None),
    ("flatten_0d", lambda T, x: x.flatten(), A(()), None),
    ("flatten_noop", lambda T, x: x.flatten(1, 1), X, None),
    ("contiguous", lambda T, x: x.transpose(0, 1).contiguous(), X, None),
    ("clone", lambda T, x: x.clone(), X, None),
    ("clone_fn", lambda T, x: T.clone(x), X, None),
    ("select", lambda T, x: x.select(1, 2), X, None),
    ("select_fn", lambda T, x: T.select(x, 0, -1), X, None),
    ("chain", lambda T, x: x.transpose(0, 1).reshape(3, 8).t().unsqueeze(0).squeeze(0), X, None),
]


@pytest.mark.parametrize("name,fn,x,match", cases(SHAPE))
def test_shape(name, fn, x, match):
    check_op(name, fn, [x], match=match, raises=match is not None)


INDEX = [
    # name, fn, input, the error's message (None: a value row)
    ("int", lambda T, x: x[0], X, None),
    ("neg_int", lambda T, x: x[-1], X, None),
    ("colon_int", lambda T, x: x[:, 1], X, None),
    ("ellipsis_int", lambda T, x: x[..., 0], X, None),
    ("none", lambda T, x: x[None], X, None),
    ("colon_none", lambda T, x: x[:, None], X, None),
    ("ellipsis_none", lambda T, x: x[..., None], X, None),
    ("scalar", lambda T, x: x[0, 1, 2], X, None),
    ("slice", lambda T, x: x[1:], X, None),
    ("slice_step", lambda T, x: x[:, ::2], X, None),
    ("slice_mid", lambda T, x: x[:, 1:3, 1:], X, None),
    ("slice_neg", lambda T, x: x[..., -3:-1], X, None),
    ("slice_empty", lambda T, x: x[:, 2:1], X, None),
    ("slice_past_end", lambda T, x: x[:, 1:10], X, None),
    ("slice_neg_step", lambda T, x: x[::-1], X, "step must be greater than zero"),
    ("out_of_range", lambda T, x: x[5], X, "index 5 is out of bounds for dimension 0 with size 2"),
    ("too_many", lambda T, x: x[0, 0, 0, 0], X, r"too many indices for tensor of dimension 3"),
    ("tuple_mixed", lambda T, x: x[1, :, None, 2:], X, None),
    ("tensor_idx", lambda T, x: x[T.tensor([1, 0, 1])], X, None),
    ("list_idx", lambda T, x: x[[1, 0]], X, None),
    ("list_idx_dim1", lambda T, x: x[:, [2, 0, 2]], X, None),
    ("two_lists", lambda T, x: x[[0, 1], [1, 2]], X, None),
    ("list_and_slice", lambda T, x: x[[0, 1], :, [3, 0]], X, None),
    ("tensor_2d_idx", lambda T, x: x[T.tensor([[0, 1], [1, 1]])], X, None),
    ("neg_tensor_idx", lambda T, x: x[:, T.tensor([-1, 0])], X, None),
    ("int32_idx", lambda T, x: x[T.tensor([1, 0], dtype=T.int32)], X, None),
    ("0d_tensor_idx", lambda T, x: x[T.tensor(1)], X, None),
    ("bool_mask_full", lambda T, x: x[x > 0], X, None),
    ("bool_mask_rows", lambda T, x: x[T.tensor([True, False])], X, None),
    ("bool_mask_dim1", lambda T, x: x[:, T.tensor([True, False, True])], X, None),
    ("bool_list", lambda T, x: x[[True, False]], X, None),
    ("bool_scalar", lambda T, x: x[True], A((3,)), None),
    ("idx_out_of_range", lambda T, x: x[T.tensor([0, 5])], X,
     r"index 5 is out of bounds for dimension 0 with size 2"),
    ("float_idx", lambda T, x: x[T.tensor([0.0])], X,
     r"tensors used as indices must be long, int, byte or bool tensors"),
    ("view_of_view", lambda T, x: x[1][:, 2][1:], X, None),
    ("1d_slice", lambda T, x: x[1:4], A((6,)), None),
    ("0d_ellipsis", lambda T, x: x[...], A(()), None),
    ("0d_none", lambda T, x: x[None], A(()), None),
]


@pytest.mark.parametrize("name,fn,x,match", cases(INDEX))
def test_getitem(name, fn, x, match):
    check_op(name, fn, [x], match=match, raises=match is not None)


SETITEM = [
    # name, fn(T, x, v): x is a fresh non-leaf (leaf * 1) so it can be written; returns x;
    # the error's message (None: a value row)
    ("int_scalar", lambda T, x, v: x.__setitem__(0, 0.5), None),
    ("int_tensor", lambda T, x, v: x.__setitem__(1, v[0]), None),
    ("slice_broadcast", lambda T, x, v: x.__setitem__((slice(None), slice(1, None)), v[0, :2]),
     None),
    ("ellipsis", lambda T, x, v: x.__setitem__(Ellipsis, 2.0), None),
    ("mask", lambda T, x, v: x.__setitem__(x > 0, 0.0), None),
    ("mask_tensor_value", lambda T, x, v: x.__setitem__(x > 0, v.flatten()[:1]), None),
    ("list_idx", lambda T, x, v: x.__setitem__([0, 1], v), None),
    ("tensor_idx_dim1", lambda T, x, v: x.__setitem__((slice(None), T.tensor([0, 2])),
                                                      v[:, :2]), None),
    ("int_value", lambda T, x, v: x.__setitem__(0, 3), None),
    ("bad_shape", lambda T, x, v: x.__setitem__(0, T.ones(5)),
     r"^The expanded size of the tensor \(3\) must match the existing size \(5\) at "
     r"non-singleton dimension 0\.  Target sizes: \[3\]\.  Tensor sizes: \[5\]$"),
    ("f64_value", lambda T, x, v: x.__setitem__(0, v[0].double()), None),
]


@pytest.mark.parametrize("name,fn,match", cases(SETITEM))
def test_setitem(name, fn, match):
    rng = np.random.default_rng(seed_of(name))
    xv = rng.uniform(-2, 2, (2, 3)).astype(np.float32)
    vv = rng.uniform(-2, 2, (2, 3)).astype(np.float32)
    gv = rng.standard_normal((2, 3))

    def go(T):
        leaf = T.tensor(xv, requires_grad=True)
        v = T.tensor(vv, requires_grad=True)
        x = leaf * 1
        fn(T, x, v)
        res = [x, x._version > 0, gname(x)]
        x.backward(T.tensor(gv, dtype=T.float32))
        return res + [leaf.grad, v.grad]

    both(go, match=match, raises=match is not None)


CATSTACK = [
    # name, fn(T, a, b, c): a, b float32 [2, 3], c float64 [2, 3]
    ("cat0", lambda T, a, b, c: T.cat([a, b])),
    ("cat1", lambda T, a, b, c: T.cat([a, b], 1)),
    ("cat_neg", lambda T, a, b, c: T.cat((a, b, a), dim=-1)),
    ("cat_one", lambda T, a, b, c: T.cat([a])),
    ("cat_promote", lambda T, a, b, c: T.cat([a, c])),
    ("cat_int_float", lambda T, a, b, c: T.cat([a, T.ones(1, 3, dtype=T.int64)])),
    ("cat_uneven", lambda T, a, b, c: T.cat([a, b[:1]], 0)),
    ("stack0", lambda T, a, b, c: T.stack([a, b])),
    ("stack1", lambda T, a, b, c: T.stack([a, b], 1)),
    ("stack_neg", lambda T, a, b, c: T.stack((a, b, a), dim=-1)),
    ("stack_promote", lambda T, a, b, c: T.stack([a, c])),
    ("stack_0d", lambda T, a, b, c: T.stack([a[0, 0], b[1, 1]])),
    ("where", lambda T, a, b, c: T.where(a > b, a, b)),
    ("where_broadcast", lambda T, a, b, c: T.where(a[0] > 0, a, b[:1])),
    ("where_scalar_y", lambda T, a, b, c: T.where(a > 0, a, 0.0)),
    ("where_scalar_x", lambda T, a, b, c: T.where(a > 0, 1.0, b)),
    ("where_scalars", lambda T, a, b, c: T.where(a > 0, 1.0, 0.0)),
    ("where_int_scalars", lambda T, a, b, c: T.where(a > 0, 1, 0)),
    ("where_promote", lambda T, a, b, c: T.where(a > 0, a, c)),
    ("where_method", lambda T, a, b, c: a.where(a > 0, b)),
    ("clamp", lambda T, a, b, c: T.clamp(a, -0.5, 0.5)),
    ("clamp_min", lambda T, a, b, c: a.clamp(min=-0.5)),
    ("clamp_max", lambda T, a, b, c: a.clamp(max=0.5)),
    ("clamp_tensor", lambda T, a, b, c: T.clamp(a, min=b, max=b + 1)),
    ("clamp_tensor_min", lambda T, a, b, c: a.clamp(min=b[0])),
    ("clamp_min_gt_max", lambda T, a, b, c: a.clamp(1.0, -1.0)),
    ("clamp_int_float_bound", lambda T, a, b, c: T.clamp((a * 3).long(), min=0.5)),
    ("clamp_int", lambda T, a, b, c: T.clamp((a * 3).long(), -1, 1)),
    ("clip", lambda T, a, b, c: T.clip(a, -1, 1)),
    ("clamp_min_fn", lambda T, a, b, c: T.clamp_min(a, 0.1)),
    ("clamp_max_fn", lambda T, a, b, c: T.clamp_max(a, 0.1)),
    ("maximum", lambda T, a, b, c: T.maximum(a, b)),
    ("minimum_promote", lambda T, a, b, c: T.minimum(a, c)),
    ("max_int_float", lambda T, a, b, c: T.maximum(a, T.tensor([1, 0, -1]))),
]


@pytest.mark.parametrize("name,fn", cases(CATSTACK))
def test_cat_stack_where_clamp(name, fn):
    check_op(name, fn, [A((2, 3)), A((2, 3)), A((2, 3), "float64")])


def _written_first(T, x):
    pieces = [x[s:s + 5] for s in (0, 8, 20)]
    x[:10] = 7   # before any piece is read: each shows the write, as a view does
    return T.stack(pieces)


def _written_through(T, x):
    pieces = [x[s:s + 5] for s in (0, 20)]
    pieces[0].add_(1)
    return T.stack(pieces), x


def _one_read_first(T, x):
    pieces = [x[s:s + 5] for s in (0, 8, 20)]
    return T.stack(pieces), pieces[1].sum()


# Stacks of pieces cut from one tensor, as a batch is made by hand: gathered in one program
# where the cuts were deferred (NOTE [ cuts gathered by stack ] in torchlike/_ops/shape.py)
CUT_STACKS = [
    # name, fn(T, x, f): x int64 [40], f float32 [6, 5, 4], neither requiring grad
    ("windows", lambda T, x, f: T.stack([x[s:s + 7] for s in (3, 0, 33, 3)])),
    ("windows_dim1", lambda T, x, f: T.stack([x[s:s + 7] for s in (3, 0, 33)], 1)),
    ("windows_step", lambda T, x, f: T.stack([x[s:s + 9:3] for s in (1, 31)])),
    ("windows_negative", lambda T, x, f: T.stack([x[-9:-2], x[0:7]])),
    ("windows_of_a_view", lambda T, x, f: T.stack([x[5:][s:s + 4] for s in (0, 31)])),
    ("windows_empty", lambda T, x, f: T.stack([x[s:s] for s in (0, 5)])),
    ("windows_past_the_end", lambda T, x, f: T.stack([x[38:45], x[0:2]])),
    ("rows", lambda T, x, f: T.stack([f[i] for i in (5, 0, -1, 2)])),
    ("rows_last_dim", lambda T, x, f: T.stack([f[i] for i in (1, 3)], -1)),
    ("rows_bool", lambda T, x, f: T.stack([(f > 0)[i] for i in (4, 1)])),
    ("blocks", lambda T, x, f: T.stack([f[i:i + 2] for i in (0, 4, 2)], 2)),
    ("rows_of_rows", lambda T, x, f: T.stack([f[i][j] for i, j in ((1, 2), (3, 0))])),
    ("of_two_tensors", lambda T, x, f: T.stack([x[0:5], x.clone()[0:5]])),
    ("slices_and_rows", lambda T, x, f: T.stack([f[0], f[1:2][0]])),
    ("one_piece", lambda T, x, f: T.stack([x[2:9]])),
    ("into_out", lambda T, x, f: T.stack([x[s:s + 3] for s in (1, 7)],
                                          out=T.empty(0, dtype=x.dtype))),
    ("written_first", lambda T, x, f: _written_first(T, x)),
    ("written_through", lambda T, x, f: _written_through(T, x)),
    ("one_read_first", lambda T, x, f: _one_read_first(T, x)),
    ("then_requires_grad", lambda T, x, f: (lambda p: T.stack([p.requires_grad_(), f[4]]))(f[1])),
]


@pytest.mark.parametrize("name,fn", cases(CUT_STACKS))
def test_stack_of_cuts(name, fn):
    check_op(name, fn, [A((40,), "int64", "small", grad=False), A((6, 5, 4), grad=False)])


# ------------------------------------------------------------------------------------------------
# Errors
# ------------------------------------------------------------------------------------------------

# The errors of the value tables of test_parity_ops_*.py (rows of the same names, moved here
# to declare that torch raises)
X23, B4 = [A((2, 3)), A((2, 3)), A((2, 3), "float64")], A((4,), "bool")
OP_ERRORS = [
    # name, fn(T, *xs), inputs, torch's message
    ("neg_bool", lambda T, x: -x, [A((2, 3), "bool")],
     r"^Negation, the `-` operator, on a bool tensor is not supported\. If you are trying to "
     r"invert a mask, use the `~` or `logical_not\(\)` operator instead\.$"),
    ("sub_bool_bool", lambda T, a, b: a - b, [B4, B4],
     r"^Subtraction, the `-` operator, with two bool tensors is not supported\. Use the `\^` or "
     r"`logical_xor\(\)` operator instead\.$"),
    ("i64**-1", lambda T, x: x ** -1, [A((3,), "int64", "nz")],
     r"^Integers to negative integer powers are not allowed\.$"),
    ("i64//0", lambda T, x: x // 0, [A((3,), "int64")], r"^ZeroDivisionError$"),
    ("i64.fmod(0)", lambda T, x: T.fmod(x, 0), [A((3,), "int64")], r"^ZeroDivisionError$"),
    ("i64-True", lambda T, x: x - True, [A((3,), "int64")],
     r"^Subtraction, the `-` operator, with a bool tensor is not supported\. If you are trying "
     r"to invert a mask, use the `~` or `logical_not\(\)` operator instead\.$"),
    ("sum_bad_dim", lambda T, x: x.sum(3), [A((2, 3))],
     r"^Dimension out of range \(expected to be in range of \[-2, 1\], but got 3\)$"),
    ("mean_int", lambda T, x: x.mean(), [A((2, 3), "int64")],
     r"^mean\(\): could not infer output dtype\. Input dtype must be either a floating point or "
     r"complex dtype\. Got: Long$"),
    ("cat_mismatch", lambda T, a, b, c: T.cat([a, b[:1]], 1), X23,
     r"^Sizes of tensors must match except in dimension 1\. Expected size 2 but got size 1 for "
     r"tensor number 1 in the list\.$"),
    ("cat_rank_mismatch", lambda T, a, b, c: T.cat([a, b[0]]), X23,
     r"^Tensors must have same number of dimensions: got 2 and 1$"),
    ("cat_empty_list", lambda T, a, b, c: T.cat([]), X23,
     r"^torch\.cat\(\): expected a non-empty list of Tensors$"),
    ("stack_mismatch", lambda T, a, b, c: T.stack([a, b[:1]]), X23,
     r"^stack expects each tensor to be equal size, but got \[2, 3\] at entry 0 and \[1, 3\] at "
     r"entry 1$"),
    ("where_nonbool_cond", lambda T, a, b, c: T.where(a, a, b), X23,
     r"^where expected condition to be a boolean tensor, but got a tensor with dtype Float$"),
    ("clamp_none", lambda T, a, b, c: T.clamp(a), X23,
     r"^torch\.clamp: At least one of 'min' or 'max' must not be None$"),
    ("ones_like_int_requires_grad", lambda T, i: T.ones_like(i, requires_grad=True),
     [A((2, 3), "int64")], r"^Only Tensors of floating point and complex dtype can require "
     r"gradients$"),
    ("size_bad", lambda T, x: x.size(3), [A((2, 3, 4))],
     r"^Dimension out of range \(expected to be in range of \[-3, 2\], but got 3\)$"),
]


@pytest.mark.parametrize("name,fn,inputs,match", cases(OP_ERRORS))
def test_op_errors(name, fn, inputs, match):
    check_op(name, fn, inputs, match=match, raises=True)


@pytest.mark.parametrize("name,fn", cases([
    ("add", lambda T, a: T.add(a, 1, out=T.empty(3))),
    ("cat", lambda T, a: T.cat([a], out=T.empty(3))),
    ("exp", lambda T, a: T.exp(a, out=T.empty(3))),
    ("mul", lambda T, a: T.mul(a, a, out=T.empty(3))),
    ("sum", lambda T, a: T.sum(a, 0, out=T.empty(()))),
]))
def test_out_with_grad_names_the_op(name, fn):
    both(lambda T: fn(T, T.ones(3, requires_grad=True)),
         match=rf"^{name}\(\): functions with out=\.\.\. arguments don't support automatic "
               r"differentiation, but one of the arguments requires grad\.", raises=True)
