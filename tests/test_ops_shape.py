"""Parity tests for the remaining shape and view ops (torchlike/_ops/shape.py, join.py) against
PyTorch.

Spec tables, one row per case: values, dtypes, shapes, grad_fn names and gradients against real
torch (check_op / both from parity) over float32/float64/int64/bool inputs; finite
differences in float64 (gradcheck); the strides and ``_base`` of every view; writes through views
reaching their base and back; PyTorch's rules for writing into multi-output views; the errors
PyTorch raises; and the traced (jax.jit) path.
"""
import warnings

import jax
import numpy as np
import pytest
import torch

import torchlike as tl
from torchlike.testing import to_jax_function

from parity import A, both, cases, check_op, gname, next_names, seed_of

DTYPES = ["float32", "float64", "int64", "bool"]

# ------------------------------------------------------------------------------------------------
# One input, one output: swept over float32 / float64 / int64 / bool
# ------------------------------------------------------------------------------------------------

M, X3, V4, S0 = (3, 4), (2, 3, 4), (4,), ()
ONE = [
    # name, fn(T, x), input shape
    ("unflatten", lambda T, x: x.unflatten(1, (2, 2)), M),
    ("unflatten_fn_infer", lambda T, x: T.unflatten(x, -1, (2, -1)), X3),
    ("unflatten_list", lambda T, x: x.unflatten(0, [1, 3, 1]), M),
    ("movedim", lambda T, x: T.movedim(x, 0, 2), X3),
    ("movedim_tuple", lambda T, x: x.movedim((0, 1), (2, 0)), X3),
    ("movedim_same", lambda T, x: T.movedim(x, 0, 0), M),
    ("movedim_0d", lambda T, x: T.movedim(x, 0, 0), S0),
    ("moveaxis", lambda T, x: T.moveaxis(x, -1, 0), X3),
    ("moveaxis_method", lambda T, x: x.moveaxis([0], [-1]), X3),
    ("swapaxes", lambda T, x: T.swapaxes(x, 0, 2), X3),
    ("swapdims_method", lambda T, x: x.swapdims(1, -1), X3),
    ("swapaxes_0d", lambda T, x: x.swapaxes(0, 0), S0),
    ("transpose_0d", lambda T, x: T.transpose(x, 0, -1), S0),
    ("broadcast_to", lambda T, x: T.broadcast_to(x, (2, 3, 4)), (3, 1)),
    ("broadcast_to_same", lambda T, x: x.broadcast_to((3, 4)), M),
    ("broadcast_to_keep", lambda T, x: T.broadcast_to(x, (-1, 4)), (3, 1)),
    ("broadcast_to_0d", lambda T, x: T.broadcast_to(x, (2,)), S0),
    ("repeat", lambda T, x: x.repeat(2, 1, 2), M),
    ("repeat_tuple", lambda T, x: x.repeat((2, 2)), M),
    ("repeat_size", lambda T, x: x.repeat(T.Size([1, 3])), M),
    ("repeat_zero", lambda T, x: x.repeat(0, 2), M),
    ("repeat_0d", lambda T, x: x.repeat(2, 3), S0),
    ("repeat_0d_empty", lambda T, x: x.repeat(()), S0),
    ("tile", lambda T, x: T.tile(x, (2,)), M),
    ("tile_more", lambda T, x: T.tile(x, [2, 1, 1]), M),
    ("tile_method", lambda T, x: x.tile(2, 1), V4),
    ("tile_none", lambda T, x: T.tile(x, ()), M),
    ("repeat_interleave", lambda T, x: T.repeat_interleave(x, 2), M),
    ("repeat_interleave_dim", lambda T, x: x.repeat_interleave(3, dim=1), M),
    ("repeat_interleave_size", lambda T, x: T.repeat_interleave(x, 2, 0, output_size=6), M),
    ("repeat_interleave_0", lambda T, x: x.repeat_interleave(0, dim=-1), M),
    ("repeat_interleave_0d", lambda T, x: T.repeat_interleave(x, 3), S0),
    ("repeat_interleave_t", lambda T, x: T.repeat_interleave(x, T.tensor([1, 0, 2]), dim=0), M),
    ("repeat_interleave_t0d", lambda T, x: x.repeat_interleave(T.tensor(2), dim=-1), M),
    ("repeat_interleave_t1", lambda T, x: x.repeat_interleave(T.tensor([3]), dim=0), M),
    ("repeat_interleave_tflat", lambda T, x: T.repeat_interleave(x, T.arange(12) % 3), M),
    ("repeat_interleave_tsize", lambda T, x: T.repeat_interleave(
        x, T.tensor([2, 1, 0, 1], dtype=T.int32), dim=1, output_size=4), M),
    ("flip", lambda T, x: T.flip(x, (0, 1)), M),
    ("flip_method", lambda T, x: x.flip(-1), X3),
    ("flip_method_many", lambda T, x: x.flip(2, 0), X3),
    ("flip_none", lambda T, x: T.flip(x, ()), M),
    ("flip_0d", lambda T, x: x.flip(0), S0),
    ("fliplr", lambda T, x: T.fliplr(x), X3),
    ("flipud", lambda T, x: x.flipud(), V4),
    ("roll", lambda T, x: T.roll(x, 1, 0), M),
    ("roll_tuple", lambda T, x: T.roll(x, (1, -2), (0, 1)), M),
    ("roll_flat", lambda T, x: x.roll(5), M),
    ("roll_big", lambda T, x: x.roll(-7, 1), M),
    ("roll_kw", lambda T, x: T.roll(x, shifts=(2,), dims=(-1,)), X3),
    ("roll_0d", lambda T, x: x.roll(1), S0),
    ("rot90", lambda T, x: T.rot90(x), M),
    ("rot90_2", lambda T, x: x.rot90(2), M),
    ("rot90_3", lambda T, x: x.rot90(3, [0, 1]), M),
    ("rot90_neg", lambda T, x: T.rot90(x, -1), M),
    ("rot90_0", lambda T, x: T.rot90(x, 0), M),
    ("rot90_dims", lambda T, x: T.rot90(x, 1, (2, 0)), X3),
    ("rot90_kw", lambda T, x: T.rot90(x, k=5, dims=[1, 0]), M),
    ("narrow", lambda T, x: T.narrow(x, 1, 1, 2), M),
    ("narrow_neg", lambda T, x: x.narrow(0, -1, 1), M),
    ("narrow_tensor_start", lambda T, x: x.narrow(1, T.tensor(1), 2), M),
    ("narrow_int32_start", lambda T, x: x.narrow(-1, T.tensor(-3, dtype=T.int32), 3), X3),
    ("narrow_empty", lambda T, x: x.narrow(1, 4, 0), M),
    ("diagonal", lambda T, x: x.diagonal(), M),
    ("diagonal_above", lambda T, x: T.diagonal(x, 1), M),
    ("diagonal_below", lambda T, x: x.diagonal(-1), M),
    ("diagonal_far", lambda T, x: x.diagonal(5), M),
    ("diagonal_dims", lambda T, x: T.diagonal(x, offset=1, dim1=-1, dim2=0), X3),
    ("diagonal_swapped", lambda T, x: x.diagonal(1, 1, 0), M),
    ("unfold", lambda T, x: x.unfold(1, 2, 1), M),
    ("unfold_dim0", lambda T, x: x.unfold(0, 2, 1), M),
    ("unfold_step", lambda T, x: x.unfold(-1, 3, 2), X3),
    ("unfold_disjoint", lambda T, x: x.unfold(1, 2, 2), M),
    ("unfold_size0", lambda T, x: x.unfold(1, 0, 1), M),
    ("unfold_0d", lambda T, x: x.unfold(0, 1, 1), S0),
    ("tril", lambda T, x: x.tril(), M),
    ("triu", lambda T, x: T.triu(x, 1), M),
    ("tril_below", lambda T, x: T.tril(x, diagonal=-1), M),
    ("triu_batched", lambda T, x: x.triu(-1), X3),
    ("tril_far", lambda T, x: x.tril(9), M),
    ("diag_vector", lambda T, x: T.diag(x), V4),
    ("diag_vector_above", lambda T, x: x.diag(1), V4),
    ("diag_vector_below", lambda T, x: T.diag(x, -2), V4),
    ("diag_matrix", lambda T, x: x.diag(), M),
    ("diag_matrix_below", lambda T, x: T.diag(x, -1), M),
    ("diag_matrix_far", lambda T, x: T.diag(x, 5), M),
    ("diag_embed", lambda T, x: T.diag_embed(x), M),
    ("diag_embed_dims", lambda T, x: x.diag_embed(-1, 0, 2), M),
    ("diag_embed_swapped", lambda T, x: T.diag_embed(x, offset=1, dim1=-1, dim2=0), V4),
    ("diagflat", lambda T, x: T.diagflat(x), M),
    ("diagflat_above", lambda T, x: x.diagflat(1), V4),
    ("diagflat_t", lambda T, x: T.diagflat(x.t(), -1), M),
    ("diagflat_0d", lambda T, x: T.diagflat(x), S0),
    ("trace", lambda T, x: T.trace(x), M),
    ("trace_method", lambda T, x: x.t().trace(), M),
    ("atleast_1d_0d", lambda T, x: T.atleast_1d(x), S0),
    ("atleast_1d_keep", lambda T, x: T.atleast_1d(x), M),
    ("atleast_2d_0d", lambda T, x: T.atleast_2d(x), S0),
    ("atleast_2d_1d", lambda T, x: T.atleast_2d(x), V4),
    ("atleast_3d_0d", lambda T, x: T.atleast_3d(x), S0),
    ("atleast_3d_1d", lambda T, x: T.atleast_3d(x), V4),
    ("atleast_3d_2d", lambda T, x: T.atleast_3d(x), M),
    ("atleast_3d_keep", lambda T, x: T.atleast_3d(x), X3),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,fn,shape", cases(ONE))
def test_one(name, fn, shape, dtype):
    no_kernel = dtype == "bool" and name.startswith("trace")   # PyTorch has no bool trace
    check_op(f"{name}/{dtype}", fn, [A(shape, dtype)], raises=no_kernel,
             match=r"^\"trace\" not implemented for 'Bool'$")


# ------------------------------------------------------------------------------------------------
# Several outputs (split family, grids, broadcast_tensors): values and grad_fn names of each
# output, then the gradients through all of them (each weighted, then summed)
# ------------------------------------------------------------------------------------------------

MULTI = [
    # name, fn(T, x) -> tuple of tensors, input shape
    ("split", lambda T, x: x.split(2, 1), M),
    ("split_uneven", lambda T, x: T.split(x, 3, dim=1), M),
    ("split_one", lambda T, x: x.split(4, 1), M),
    ("split_dim0", lambda T, x: T.split(x, 1), M),
    ("split_kw", lambda T, x: T.split(x, split_size_or_sections=2, dim=-1), X3),
    ("split_sizes", lambda T, x: T.split(x, [1, 3], 1), M),
    ("split_sizes_tuple", lambda T, x: x.split((2, 0, 1), 0), M),
    ("split_tensor_size", lambda T, x: x.split(T.tensor(2), 1), M),
    ("chunk", lambda T, x: x.chunk(2, 1), M),
    ("chunk_uneven", lambda T, x: T.chunk(x, 3, 1), M),
    ("chunk_more", lambda T, x: T.chunk(x, 5, dim=1), M),
    ("chunk_empty", lambda T, x: x[:0].chunk(3), M),
    ("tensor_split", lambda T, x: x.tensor_split(3, 1), M),
    ("tensor_split_more", lambda T, x: T.tensor_split(x, 5, 1), M),
    ("tensor_split_indices", lambda T, x: T.tensor_split(x, [1, 3], dim=1), M),
    ("tensor_split_unordered", lambda T, x: x.tensor_split([3, 1, 6], 1), M),
    ("tensor_split_negative", lambda T, x: x.tensor_split((-1,), 1), M),
    ("tensor_split_tensor", lambda T, x: x.tensor_split(T.tensor([1, 3]), 1), M),
    ("tensor_split_tensor0d", lambda T, x: T.tensor_split(x, T.tensor(2), 1), M),
    ("tensor_split_sections_kw", lambda T, x: T.tensor_split(x, sections=2, dim=1), M),
    ("tensor_split_indices_kw", lambda T, x: x.tensor_split(indices=[2], dim=0), M),
    ("tensor_split_none", lambda T, x: x.tensor_split((), 1), M),
    ("hsplit", lambda T, x: x.hsplit(2), M),
    ("hsplit_indices", lambda T, x: T.hsplit(x, [1, 2]), M),
    ("hsplit_1d", lambda T, x: T.hsplit(x, 2), V4),
    ("vsplit", lambda T, x: x.vsplit([1]), M),
    ("dsplit", lambda T, x: T.dsplit(x, 2), X3),
    ("unbind", lambda T, x: x.unbind(1), M),
    ("meshgrid_ij", lambda T, x: T.meshgrid(x, x[:3], indexing="ij"), V4),
    ("meshgrid_xy", lambda T, x: T.meshgrid(x, x[:3], indexing="xy"), V4),
    ("meshgrid_xy3", lambda T, x: T.meshgrid([x, x[:3], x[1:3]], indexing="xy"), V4),
    ("meshgrid_one", lambda T, x: T.meshgrid(x, indexing="xy"), V4),
    ("meshgrid_0d", lambda T, x: T.meshgrid(x[0], x, indexing="ij"), V4),
    ("broadcast_tensors", lambda T, x: T.broadcast_tensors(x, x[:1], x[0, 0]), M),
    ("broadcast_tensors_3d", lambda T, x: T.broadcast_tensors(x[:, :1], x[0], T.ones(2, 1, 1)),
     M),
    ("broadcast_tensors_one", lambda T, x: T.broadcast_tensors(x), M),
    ("atleast_2d_many", lambda T, x: T.atleast_2d(x, x[0], x[0, 0]), M),
    ("atleast_3d_list", lambda T, x: T.atleast_3d([x[0, 0], x[0]]), M),
    ("atleast_1d_one_list", lambda T, x: T.atleast_1d([x]), M),
]


def _weighted(T, outs):
    """The multi-output result as one tensor whose gradient reaches every piece."""
    return T.stack([(o * (i + 1.5)).sum() for i, o in enumerate(outs)])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,fn,shape", cases(MULTI))
def test_multi(name, fn, shape, dtype):
    check_op(f"{name}/{dtype}", fn, [A(shape, dtype)])
    if dtype.startswith("float"):
        check_op(f"{name}/{dtype}/grad", lambda T, x: _weighted(T, fn(T, x)), [A(shape, dtype)])


# ------------------------------------------------------------------------------------------------
# Joining several tensors (out= too)
# ------------------------------------------------------------------------------------------------

JOIN = [
    # name, fn(T, *xs), input shapes
    ("hstack", lambda T, a, b: T.hstack([a, b]), [M, (3, 2)]),
    ("hstack_1d", lambda T, a, b: T.hstack((a, b)), [V4, (2,)]),
    ("hstack_0d", lambda T, a, b: T.hstack([a, b]), [S0, V4]),
    ("vstack", lambda T, a, b: T.vstack([a, b]), [M, V4]),
    ("vstack_1d", lambda T, a, b: T.vstack([a, b]), [V4, V4]),
    ("row_stack", lambda T, a, b: T.row_stack([a, b]), [M, (2, 4)]),
    ("dstack", lambda T, a, b: T.dstack([a, b]), [M, M]),
    ("dstack_1d", lambda T, a, b: T.dstack((a, b)), [V4, V4]),
    ("dstack_3d", lambda T, a, b: T.dstack([a, b]), [X3, (2, 3, 1)]),
    ("column_stack", lambda T, a, b: T.column_stack([a, b]), [M, (3,)]),
    ("column_stack_0d", lambda T, a, b: T.column_stack([a, b]), [S0, S0]),
    ("column_stack_1d", lambda T, a, b: T.column_stack([a, b]), [V4, V4]),
    ("concat", lambda T, a, b: T.concat([a, b]), [M, (2, 4)]),
    ("concat_axis", lambda T, a, b: T.concat([a, b], axis=1), [M, (3, 1)]),
    ("concatenate", lambda T, a, b: T.concatenate((a, b), 1), [M, (3, 1)]),
    ("concatenate_axis", lambda T, a, b: T.concatenate([a, b], axis=-1), [M, M]),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,fn,shapes", cases(JOIN))
def test_join(name, fn, shapes, dtype):
    check_op(f"{name}/{dtype}", fn, [A(s, dtype) for s in shapes])


def test_join_mixed_dtypes():
    check_op("hstack_promote", lambda T, a, b: T.hstack([a, b]), [A(M), A((3, 1), "float64")])
    check_op("vstack_int_float", lambda T, a, b: T.vstack([a, b]), [A(M, "int64"), A(V4)])


OUT = [
    # name, fn(T) -> (result, out)
    ("hstack", lambda T: (lambda o: (T.hstack([T.ones(2), T.zeros(3)], out=o), o))(T.empty(0))),
    ("vstack", lambda T: (lambda o: (T.vstack([T.ones(2), T.zeros(2)], out=o), o))(T.empty(0))),
    ("dstack", lambda T: (lambda o: (T.dstack([T.ones(2), T.zeros(2)], out=o), o))(T.empty(0))),
    ("column_stack", lambda T: (lambda o: (T.column_stack([T.ones(2), T.zeros(2)], out=o), o))(
        T.empty(2, 2))),
    ("concat", lambda T: (lambda o: (T.concat([T.ones(2), T.zeros(2)], out=o), o))(T.empty(4))),
    ("tril", lambda T: (lambda o: (T.tril(T.ones(3, 3), out=o), o))(T.empty(3, 3))),
    ("triu", lambda T: (lambda o: (T.triu(T.ones(3, 3), 1, out=o), o))(T.empty(0))),
    ("diag", lambda T: (lambda o: (T.diag(T.ones(3), out=o), o))(T.empty(3, 3))),
    ("tril_grad", lambda T: T.tril(T.ones(2, 2, requires_grad=True), out=T.empty(2, 2))),
]


@pytest.mark.parametrize("name,fn", cases(OUT))
def test_out(name, fn):
    both(fn, match=r"^tril\(\): functions with out=\.\.\. arguments don't support automatic "
                   r"differentiation", raises=name.endswith("_grad"))


# ------------------------------------------------------------------------------------------------
# Finite differences in float64
# ------------------------------------------------------------------------------------------------

GRADCHECK = [
    # name, fn(x) on a float64 [3, 4] leaf
    ("unflatten", lambda x: x.unflatten(1, (2, 2)) * x.unflatten(1, (2, 2))),
    ("movedim", lambda x: tl.movedim(x.unsqueeze(0), (0, 2), (1, 0)).sin()),
    ("swapaxes", lambda x: x.swapaxes(0, 1).exp()),
    ("broadcast_to", lambda x: tl.broadcast_to(x[:, :1], (2, 3, 4)) ** 2),
    ("repeat", lambda x: x.repeat(2, 1, 2) ** 2),
    ("tile", lambda x: tl.tile(x, (2,)).sin()),
    ("repeat_interleave", lambda x: tl.repeat_interleave(x, 2, dim=1) ** 2),
    ("repeat_interleave_t", lambda x: tl.repeat_interleave(x, tl.tensor([2, 0, 1]), dim=0) ** 2),
    ("flip", lambda x: x.flip(0, 1) * x),
    ("roll", lambda x: tl.roll(x, (1, 3), (0, 1)) * x),
    ("roll_flat", lambda x: x.roll(5) * x),
    ("rot90", lambda x: tl.rot90(x, 3).cos()),
    ("narrow", lambda x: x.narrow(1, 1, 2) ** 3),
    ("diagonal", lambda x: x.diagonal(1).exp()),
    ("unfold", lambda x: x.unfold(1, 2, 1) ** 2),
    ("tril", lambda x: x.tril(1) ** 2),
    ("triu", lambda x: tl.triu(x, -1).sin()),
    ("diag", lambda x: tl.diag(x, 1).exp()),
    ("diag_vector", lambda x: tl.diag(x[0], -1) ** 2),
    ("diag_embed", lambda x: tl.diag_embed(x, 1, 0, 2).sin()),
    ("diagflat", lambda x: tl.diagflat(x.t()) ** 2),
    ("trace", lambda x: (x * x).trace()),
    ("split", lambda x: tl.stack([p.sum() * (i + 1) for i, p in enumerate(x.split(3, 1))])),
    ("split_sizes", lambda x: x.split([1, 3], 1)[1] ** 2),
    ("chunk", lambda x: x.chunk(2, 0)[0].exp()),
    ("tensor_split", lambda x: tl.tensor_split(x, [1, 3], 1)[1] ** 2),
    ("hstack", lambda x: tl.hstack([x, x ** 2])),
    ("vstack", lambda x: tl.vstack([x[0], x ** 2])),
    ("dstack", lambda x: tl.dstack([x, x.sin()])),
    ("column_stack", lambda x: tl.column_stack([x, x[:, 0] ** 2])),
    ("meshgrid", lambda x: tl.stack(tl.meshgrid(x[0], x[1], indexing="xy")) ** 2),
    ("broadcast_tensors", lambda x: tl.stack(tl.broadcast_tensors(x, x[0] ** 2))),
]


@pytest.mark.parametrize("name,fn", cases(GRADCHECK))
def test_gradcheck(name, fn):
    rng = np.random.default_rng(seed_of(name))
    x = tl.tensor(rng.uniform(-1, 1, (3, 4)), dtype=tl.float64, requires_grad=True)
    assert tl.autograd.gradcheck(fn, (x,))


# ------------------------------------------------------------------------------------------------
# Views: strides and _base as PyTorch reports them; writes reach the base and back
# ------------------------------------------------------------------------------------------------

VIEWS = [
    # name, fn(T, x) -> view or tuple of views of x (a float [2, 3, 4] tensor)
    ("unflatten", lambda T, x: x.unflatten(2, (2, 2))),
    ("unflatten_t", lambda T, x: x.transpose(0, 2).unflatten(0, (2, -1))),
    ("movedim", lambda T, x: x.movedim(0, 2)),
    ("movedim_sliced", lambda T, x: x[:, 1:, ::2].movedim((0, 1), (1, 2))),
    ("swapaxes", lambda T, x: x.swapaxes(0, 2)),
    ("swapdims", lambda T, x: T.swapdims(x[0], 0, 1)),
    ("narrow", lambda T, x: x.narrow(2, 1, 2)),
    ("narrow_t", lambda T, x: x.transpose(1, 2).narrow(1, 1, 2)),
    ("diagonal", lambda T, x: x.diagonal()),
    ("diagonal_offset", lambda T, x: x[0].diagonal(1)),
    ("diagonal_below", lambda T, x: x[1].diagonal(-1)),
    ("diagonal_dims", lambda T, x: x.diagonal(1, 2, 0)),
    ("diagonal_t", lambda T, x: x[0].t().diagonal()),
    ("diagonal_sliced", lambda T, x: x[0, :, ::2].diagonal()),
    ("unfold", lambda T, x: x.unfold(2, 2, 2)),
    ("unfold_overlap", lambda T, x: x.unfold(2, 3, 1)),
    ("unfold_dim1_overlap", lambda T, x: x.unfold(1, 2, 1)),
    ("unfold_t", lambda T, x: x[0].t().unfold(0, 2, 2)),
    ("split", lambda T, x: x.split(2, 2)),
    ("split_sizes", lambda T, x: x.split([1, 2], 1)),
    ("chunk", lambda T, x: x.chunk(2, 0)),
    ("tensor_split", lambda T, x: x.tensor_split(3, 2)),
    ("hsplit", lambda T, x: T.hsplit(x, [1])),
    ("dsplit", lambda T, x: x.dsplit(2)),
    ("broadcast_to", lambda T, x: T.broadcast_to(x[:, :1], (5, 2, 3, 4))),
    ("broadcast_tensors", lambda T, x: T.broadcast_tensors(x, x[0, 0])),
    ("meshgrid", lambda T, x: T.meshgrid(x[0, 0], x[1, 1, :3], indexing="xy")),
    ("atleast_3d", lambda T, x: T.atleast_3d(x[0, 0], x[0], x[0, 0, 0])),
    ("rot90_copy", lambda T, x: x.rot90(1, (0, 2))),
    ("rot90_copy_even", lambda T, x: x.rot90(2)),
]


def _layout(T, r, base):
    if isinstance(r, tuple):
        return tuple(_layout(T, o, base) for o in r)
    return (tuple(r.shape), r.stride(), r.is_contiguous(), r._base is base)


@pytest.mark.parametrize("name,fn", cases(VIEWS))
def test_view_strides(name, fn):
    def go(T):
        x = T.arange(24.0).reshape(2, 3, 4)
        base = x._base
        return _layout(T, fn(T, x), base if base is not None else x)
    both(go)


def _writable(name):
    return "overlap" not in name and name not in ("broadcast_tensors", "meshgrid",
                                                  "broadcast_to")


@pytest.mark.parametrize("name,fn", cases([r for r in VIEWS if _writable(r[0])]))
def test_write_through_view(name, fn):
    """v.add_(1) lands in the base; base.mul_(2) shows in the view (no autograd involved)."""
    def go(T):
        x = T.arange(24.0).reshape(2, 3, 4)
        views = fn(T, x)
        views = views if isinstance(views, tuple) else (views,)
        for i, v in enumerate(views):
            v.add_(i + 1)
        after_write = x.clone()
        x.mul_(2)
        return after_write, views
    both(go)


@pytest.mark.parametrize("name,fn", cases(VIEWS))
def test_views_read_on_host_after_a_write(name, fn, monkeypatch):
    """Reads on the host (tolist, numpy, item) of views whose base was written since give the
    new values; a view whose steps all move data (reshape, slice, transpose, permute, squeeze,
    expand, select, diagonal, unfold) takes them from its base's array with numpy, running no
    program (NOTE [ views read on the host ] in torchlike/_views.py)."""
    from torchlike import _views
    derived = []
    real = _views.apply_chain
    monkeypatch.setattr(_views, "apply_chain", lambda *a: derived.append(a[1]) or real(*a))

    def go(T):
        x = T.arange(24.0).reshape(2, 3, 4)
        views = fn(T, x)
        views = views if isinstance(views, tuple) else (views,)
        x.mul_(2)
        derived.clear()
        return [(v.tolist(), v.numpy().tolist(), str(v.numpy().dtype),
                 v.item() if v.numel() == 1 else None) for v in views]
    both(go)
    assert derived == []   # (no view's array derived again by a program)


def test_a_view_read_on_host_checks_index_values():
    """An op's check of index values held in a view reads them on the host: an out-of-range
    target of a loss raises PyTorch's error, and one in range trains as torch does."""
    def go(T, bad):
        y = T.tensor([[0, 1, 2], [2, 1, bad]])
        logits = T.arange(18.0).reshape(6, 3) / 7
        return T.nn.functional.cross_entropy(logits, y.view(-1)).item()
    both(lambda T: go(T, 0))
    both(lambda T: go(T, 3), match=r"^Target 3 is out of bounds\.$", raises=True)


OVERLAP = (r"^unsupported operation: more than one element of the written-to tensor refers to a "
           r"single memory location\. Please clone\(\) the tensor before performing the "
           r"operation\.$")
OVERLAP_WRITES = [
    # name, fn(T, x): writes into a view whose elements may share memory; raises
    ("broadcast_to", lambda T, x: T.broadcast_to(x[:1], (3, 4)).add_(1), True),
    ("broadcast_tensors", lambda T, x: T.broadcast_tensors(x, x[0, :1])[1].mul_(2), True),
    ("meshgrid", lambda T, x: T.meshgrid(x[0], x[1], indexing="ij")[0].sub_(1), True),
    ("broadcast_to_same", lambda T, x: (T.broadcast_to(x, (3, 4)).add_(1), x), False),
    ("expand_then_select", lambda T, x: (x[:1].expand(3, 4)[0].add_(1), x), False),
]


@pytest.mark.parametrize("name,fn,raises", cases(OVERLAP_WRITES))
def test_overlapping_writes(name, fn, raises):
    both(lambda T: fn(T, T.zeros(3, 4)), match=OVERLAP, raises=raises)


def test_view_of_grad_tensor_write_records_copyslices():
    """Writing through a new view of a non-leaf records CopySlices, as in PyTorch."""
    def go(T):
        leaf = T.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
        y = leaf * 1
        d = y.diagonal()
        d.mul_(3)
        u = y.unfold(1, 2, 2)
        u[:, :, 0].add_(1)
        n = y.narrow(0, 1, 1)
        n.neg_()               # saves nothing: an op that saves must be the last write (sin_)
        m = y.movedim(0, 1).unflatten(0, (2, 2))
        m.sin_()
        res = [y, gname(y), gname(d), gname(u), gname(n), gname(m)]
        (y * T.arange(12.0).reshape(3, 4)).sum().backward()
        return res + [leaf.grad]
    both(go)


# ------------------------------------------------------------------------------------------------
# Multi-output views: PyTorch forbids writing into them while autograd records
# ------------------------------------------------------------------------------------------------

MULTI_VIEWS = [
    # name, fn(T, y) -> tuple of views, in-place allowed with grad
    ("split", lambda T, y: y.split(2, 1), False),
    ("split_one", lambda T, y: y.split(4, 1), False),
    ("split_sizes", lambda T, y: y.split([1, 3], 1), False),
    ("chunk", lambda T, y: y.chunk(2, 1), False),
    ("chunk_empty", lambda T, y: y[:, :0].chunk(2, 1), False),
    ("unbind", lambda T, y: y.unbind(0), False),
    ("tensor_split", lambda T, y: y.tensor_split(2, 1), True),
    ("hsplit", lambda T, y: y.hsplit(2), True),
]
_MULTI_MSG = "is a view and (is being|its base or another view of its base has been) modified"


@pytest.mark.parametrize("name,fn,allowed", cases(MULTI_VIEWS))
def test_multi_view_inplace(name, fn, allowed):
    def write_piece(T):
        leaf = T.ones(3, 4, requires_grad=True)
        y = leaf * 2
        p = fn(T, y)
        p[-1].mul_(3)
        y.sum().backward()
        return y, leaf.grad
    both(write_piece, match=_MULTI_MSG, raises=not allowed)

    def write_base(T):
        leaf = T.ones(3, 4, requires_grad=True)
        y = leaf * 2
        p = fn(T, y)
        y.add_(1)
        q = p[0] * 2
        q.sum().backward()
        return q, gname(q), leaf.grad
    both(write_base, match=_MULTI_MSG, raises=not allowed)


@pytest.mark.parametrize("name,fn,allowed", cases(MULTI_VIEWS))
def test_multi_view_writes_without_grad(name, fn, allowed):
    def go(T):
        leaf = T.ones(3, 4, requires_grad=True)
        with T.no_grad():
            y = leaf * 2
            p = fn(T, y)
            p[0].add_(1)
        z = T.zeros(3, 4)
        fn(T, z)[-1].sub_(1)
        return y, z, p[0].requires_grad
    both(go)


def test_multi_view_message_names_the_output():
    def go(T):
        y = T.ones(3, 4, requires_grad=True) * 1
        return y.split([1, 3], 1)[1].add_(1)
    both(go, match=r"^Output 1 of SplitWithSizes is a view and is being modified inplace\. This "
                   r"view is the output of a function that returns multiple views\. Such "
                   r"functions do not allow the output views to be modified inplace\. You should "
                   r"replace the inplace operation by an out-of-place one\.$", raises=True)


# ------------------------------------------------------------------------------------------------
# In-place ops: tril_ / triu_ / swapaxes_ / swapdims_ / transpose_
# ------------------------------------------------------------------------------------------------

INPLACE = [
    # name, fn(T, y): y a non-leaf [3, 4] float tensor; the result is kept and backward is run
    ("tril_", lambda T, y: y.tril_()),
    ("triu_", lambda T, y: y.triu_(1)),
    ("tril_view", lambda T, y: y[1:].tril_(-1)),
    ("swapaxes_", lambda T, y: y.swapaxes_(0, 1)),
    ("swapdims_", lambda T, y: y.swapdims_(1, 0)),
    ("transpose_", lambda T, y: y.transpose_(-1, 0)),
    ("swapaxes_view", lambda T, y: y[1:].swapaxes_(0, 1)),
    ("swapaxes_unsqueezed", lambda T, y: y.unsqueeze(0).swapaxes_(0, 2)),
]


@pytest.mark.parametrize("name,fn", cases(INPLACE))
def test_inplace(name, fn):
    rng = np.random.default_rng(seed_of(name))
    values = rng.uniform(-2, 2, (3, 4)).astype(np.float32)

    def go(T):
        leaf = T.tensor(values, requires_grad=True)
        y = leaf * 1
        r = fn(T, y)
        layout = (tuple(r.shape), r.stride(), r._version, gname(r),
                  [type(n).__name__ for n, _ in r.grad_fn.next_functions])
        (r * T.arange(float(r.numel())).reshape(r.shape)).sum().backward()
        return r, y, layout, leaf.grad
    both(go)


INPLACE_ERRORS = [
    # name, fn(T), match
    ("swapaxes_leaf", lambda T: T.ones(2, 3, requires_grad=True).swapaxes_(0, 1), "leaf"),
    ("swapaxes_leaf_view", lambda T: T.ones(2, 3, requires_grad=True)[0].swapaxes_(0, 0),
     "view of a leaf"),
    ("swapaxes_bad_dim", lambda T: T.ones(2, 3).swapaxes_(0, 2), "Dimension out of range"),
    ("tril_1d", lambda T: T.ones(3).tril_(), "tril: input tensor must have at least 2"),
    ("triu_0d", lambda T: T.ones(()).triu_(), "triu: input tensor must have at least 2"),
    ("tril_leaf", lambda T: T.ones(2, 2, requires_grad=True).tril_(), "leaf"),
]


@pytest.mark.parametrize("name,fn,match", cases(INPLACE_ERRORS))
def test_inplace_errors(name, fn, match):
    both(fn, match=match, raises=True)


def test_swapaxes_inplace_without_grad():
    def go(T):
        x = T.arange(12.0).reshape(3, 4)
        x.swapaxes_(0, 1)
        v = x[0]
        v.add_(100)
        w = T.arange(24.0).reshape(2, 3, 4)
        s = w[1]
        s.swapdims_(0, 1)
        s[0].mul_(-1)
        return x, x.stride(), x.is_contiguous(), w, s, s.stride(), s._version
    both(go)


# ------------------------------------------------------------------------------------------------
# Errors: PyTorch's exception types and wording
# ------------------------------------------------------------------------------------------------

m = lambda T: T.ones(3, 4)  # noqa: E731
ERRORS = [
    # name, fn(T), match
    ("unflatten_bad", lambda T: m(T).unflatten(1, (3, 2)),
     r"unflatten: Provided sizes \[3, 2\] don't multiply up to the size of dim 1 \(4\)"),
    ("unflatten_infer_bad", lambda T: m(T).unflatten(1, (3, -1)), "don't multiply up"),
    ("unflatten_two_infer", lambda T: m(T).unflatten(1, (-1, -1)),
     "only one dimension can be inferred"),
    ("unflatten_negative", lambda T: m(T).unflatten(1, (-2, -2)),
     r"invalid shape dimension -2 at index 0 of shape \[-2, -2\]"),
    ("unflatten_empty", lambda T: m(T).unflatten(1, ()), "unflatten: sizes must be non-empty"),
    ("unflatten_dim", lambda T: m(T).unflatten(3, (2, 2)),
     r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 3\)"),
    ("unflatten_0d", lambda T: T.ones(()).unflatten(0, (1,)),
     "Dimension specified as 0 but tensor has no dimensions"),
    ("movedim_count", lambda T: T.movedim(m(T), (0, 1), (1,)),
     r"movedim: Invalid source or destination dims: source \(\[0, 1\] dims\) should contain "
     r"the same number of dims as destination \(\[1\] dims\)"),
    ("movedim_repeat_src", lambda T: T.movedim(m(T), (0, 0), (1, 0)),
     r"movedim: repeated dim in `source` \(\[0, 0\]\)"),
    ("movedim_repeat_dst", lambda T: T.movedim(m(T), (0, 1), (1, -1)),
     r"repeated dim in `destination` \(\[1, -1\]\)"),
    ("movedim_range", lambda T: T.movedim(m(T), 2, 0),
     r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"),
    ("swapaxes_range", lambda T: T.swapaxes(m(T), 0, 2), "Dimension out of range"),
    ("broadcast_to_rank", lambda T: T.broadcast_to(m(T), (4,)),
     r"expand\(torch.FloatTensor\{\[3, 4\]\}, size=\[4\]\): the number of sizes provided \(1\) "
     r"must be greater or equal to the number of dimensions in the tensor \(2\)"),
    ("broadcast_to_rank_long", lambda T: T.broadcast_to(m(T).long(), (4,)),
     r"expand\(torch.LongTensor\{\[3, 4\]\}"),
    ("broadcast_to_size", lambda T: T.broadcast_to(m(T), (2, 3, 5)),
     r"The expanded size of the tensor \(5\) must match the existing size \(4\) at "
     r"non-singleton dimension 2"),
    ("broadcast_tensors", lambda T: T.broadcast_tensors(m(T), T.ones(3)),
     r"^The size of tensor a \(4\) must match the size of tensor b \(3\) at non-singleton "
     r"dimension 1$"),
    ("broadcast_tensors_fold", lambda T: T.broadcast_tensors(T.ones(2, 3), T.ones(3, 3),
                                                             T.ones(4)),
     r"tensor a \(2\) must match the size of tensor b \(3\) at non-singleton dimension 0"),
    ("broadcast_tensors_list", lambda T: T.broadcast_tensors([m(T)]),
     "expected Tensor as element 0 in argument 0, but got list"),
    ("broadcast_shapes", lambda T: T.broadcast_shapes((3, 1), (1, 4), 5),
     r"^Attempting to broadcast a dimension of length 5 at -1! Mismatching argument at index 2 "
     r"had \(5,\); but expected shape should be broadcastable to \[3, 4\]$"),
    ("broadcast_shapes_list", lambda T: T.broadcast_shapes((3, 1), [2, 4]),
     r"length 2 at -2! Mismatching argument at index 1 had \[2, 4\]; but expected shape should "
     r"be broadcastable to \[3, 4\]"),
    ("broadcast_shapes_zero", lambda T: T.broadcast_shapes((0,), (2,)), r"broadcastable to \[0\]"),
    ("broadcast_shapes_negative", lambda T: T.broadcast_shapes((1, -1)),
     "Attempting to broadcast a dimension with negative length!"),
    ("broadcast_shapes_type", lambda T: T.broadcast_shapes(2.0),
     "Input shapes should be of type ints, a tuple of ints, or a list of ints, got 2.0"),
    ("repeat_rank", lambda T: m(T).repeat(2),
     "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"),
    ("repeat_negative", lambda T: m(T).repeat(-1, 2),
     r"Trying to create tensor with negative dimension -3: \[-3, 8\]"),
    ("tile_int", lambda T: T.tile(m(T), 2), "argument 'dims' .* must be tuple of ints, not int"),
    ("repeat_interleave_neg", lambda T: T.repeat_interleave(m(T), -1),
     "Repeats must be non-negative"),
    ("repeat_interleave_t_neg", lambda T: T.repeat_interleave(m(T), T.tensor([-1, 1, 1]), dim=0),
     "repeats can not be negative"),
    ("repeat_interleave_t_2d", lambda T: T.repeat_interleave(m(T), T.tensor([[1]]), dim=0),
     "repeats must be 0-dim or 1-dim tensor"),
    ("repeat_interleave_t_len", lambda T: T.repeat_interleave(m(T), T.tensor([1, 2]), dim=1),
     r"repeats must have the same size as input along dim, but got repeats.size\(0\) = 2 and "
     r"input.size\(1\) = 4"),
    ("repeat_interleave_t_float", lambda T: T.repeat_interleave(m(T), T.tensor([1., 2, 1]), 0),
     "\"repeat_interleave_cpu\" not implemented for 'Float'"),
    ("repeat_interleave_t_short", lambda T: T.repeat_interleave(T.tensor([1, 2], dtype=T.int16)),
     "not implemented for 'Short'"),
    ("repeat_interleave_output_size", lambda T: T.repeat_interleave(
        m(T), T.tensor([1, 2, 1]), dim=0, output_size=5), "allocated size does not match"),
    ("repeat_interleave_int_output_size", lambda T: T.repeat_interleave(
        m(T), 2, dim=0, output_size=5),
     "repeat_interleave: Invalid output_size, expected 6 but got 5"),
    ("repeat_interleave_2d_repeats", lambda T: T.repeat_interleave(T.tensor([[1, 2]])),
     "repeat_interleave only accept 1D vector as repeat"),
    ("repeat_interleave_dim", lambda T: T.repeat_interleave(m(T), 2, dim=2),
     "Dimension out of range"),
    ("repeat_interleave_0d_dim", lambda T: T.repeat_interleave(T.ones(()), 3, dim=0),
     r"expected to be in range of \[-1, 0\], but got 1"),
    ("flip_dup", lambda T: m(T).flip((0, 0)), "dim 0 appears multiple times in the list of dims"),
    ("flip_dup_neg", lambda T: m(T).flip(1, -1), "dim 1 appears multiple times"),
    ("flip_range", lambda T: m(T).flip(2), "Dimension out of range"),
    ("flip_int", lambda T: T.flip(m(T), 0), "must be tuple of ints, not int"),
    ("fliplr_1d", lambda T: T.ones(3).fliplr(), r"Input must be >= 2-d\."),
    ("flipud_0d", lambda T: T.flipud(T.ones(())), r"Input must be >= 1-d\."),
    ("roll_align", lambda T: m(T).roll((1, 2), (0,)),
     "shifts and dimensions must align. shifts: 2, dims:1"),
    ("roll_align_flat", lambda T: m(T).roll((1, 2)),
     "shifts and dimensions must align. shifts: 2, dims:0"),
    ("roll_empty", lambda T: m(T).roll(()), "`shifts` required"),
    ("roll_range", lambda T: m(T).roll(1, 2), "Dimension out of range"),
    ("roll_0d_dim", lambda T: T.ones(()).roll(1, -1),
     "Dimension specified as -1 but tensor has no dimensions"),
    ("rot90_same", lambda T: m(T).rot90(1, (0, -2)),
     "expected rotation dims to be different, but got dim0 = 0 and dim1 = -2"),
    ("rot90_count", lambda T: m(T).rot90(1, (0,)),
     "expected total rotation dims == 2, but got dims = 1"),
    ("rot90_1d", lambda T: T.ones(3).rot90(), "expected total dims >= 2, but got total dims = 1"),
    ("rot90_range", lambda T: m(T).rot90(1, (0, 2)), "Dimension out of range"),
    ("narrow_over", lambda T: m(T).narrow(1, 3, 2),
     r"start \(3\) \+ length \(2\) exceeds dimension size \(4\)\."),
    ("narrow_start", lambda T: m(T).narrow(1, -5, 2),
     r"start out of range \(expected to be in range of \[-4, 4\], but got -5\)"),
    ("narrow_start_high", lambda T: m(T).narrow(1, 5, 0), "but got 5"),
    ("narrow_length", lambda T: m(T).narrow(1, 1, -1), r"narrow\(\): length must be non-negative"),
    ("narrow_dim", lambda T: m(T).narrow(2, 1, 1),
     r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"),
    ("narrow_0d", lambda T: T.ones(()).narrow(0, 0, 1),
     r"narrow\(\) cannot be applied to a 0-dim tensor\."),
    ("narrow_tensor_1d", lambda T: m(T).narrow(1, T.tensor([1]), 1),
     "start must be an 0-dim integral Tensor"),
    ("narrow_tensor_float", lambda T: m(T).narrow(1, T.tensor(1.0), 1), "0-dim integral"),
    ("narrow_tensor_bool", lambda T: m(T).narrow(1, T.tensor(True), 1), "0-dim integral"),
    ("narrow_tensor_range", lambda T: m(T).narrow(1, T.tensor(5), 1), "start out of range"),
    ("split_zero", lambda T: m(T).split(0, 1),
     "split_size can only be 0 if dimension size is 0, but got dimension size of 4"),
    ("split_negative", lambda T: m(T).split(-1, 1),
     "split expects split_size be non-negative, but got split_size=-1"),
    ("split_sum", lambda T: m(T).split([1, 2], 1),
     r"split_with_sizes expects split_sizes to sum exactly to 4 \(input tensor's size at "
     r"dimension 1\), but got split_sizes=\[1, 2\]"),
    ("split_negative_size", lambda T: m(T).split([5, -1], 1),
     r"expects split_sizes have only non-negative entries, but got split_sizes=\[5, -1\]"),
    ("split_dim", lambda T: m(T).split(2, 2), "Dimension out of range"),
    ("split_0d", lambda T: T.ones(()).split(1), "split expects at least a 1-dimensional tensor"),
    ("split_sizes_0d", lambda T: T.ones(()).split([1]), "at least a 1-dimensional tensor"),
    ("chunk_zero", lambda T: m(T).chunk(0), "chunk expects `chunks` to be greater than 0, got: 0"),
    ("chunk_negative", lambda T: m(T).chunk(-1), "got: -1"),
    ("chunk_0d", lambda T: T.ones(()).chunk(2), "chunk expects at least a 1-dimensional tensor"),
    ("tensor_split_zero", lambda T: m(T).tensor_split(0, 1),
     "number of sections must be larger than 0, got 0"),
    ("tensor_split_0d", lambda T: T.ones(()).tensor_split(2),
     "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims"),
    ("tensor_split_2d", lambda T: m(T).tensor_split(T.tensor([[2]]), 1),
     "to be a zero-dimensional or one-dimensional tensor, but got a tensor with 2 dims"),
    ("tensor_split_float", lambda T: m(T).tensor_split(T.tensor([2.0]), 1),
     "tensor_split expected tensor_indices_or_sections to have dtype of long, but got Float"),
    ("hsplit_divisible", lambda T: m(T).hsplit(3),
     "torch.hsplit attempted to split along dimension 1, but the size of the dimension 4 is not "
     "divisible by the split_size 3!"),
    ("hsplit_zero", lambda T: m(T).hsplit(0), "not divisible by the split_size 0!"),
    ("hsplit_0d", lambda T: T.ones(()).hsplit(1),
     "torch.hsplit requires a tensor with at least 1 dimension, but got a tensor with 0 "
     "dimensions!"),
    ("vsplit_1d", lambda T: T.ones(4).vsplit(2),
     "torch.vsplit requires a tensor with at least 2 dimension, but got a tensor with 1 "
     "dimensions!"),
    ("vsplit_divisible", lambda T: m(T).vsplit(2), "split along dimension 0, but the size"),
    ("dsplit_2d", lambda T: m(T).dsplit(2), "torch.dsplit requires a tensor with at least 3"),
    ("hstack_empty", lambda T: T.hstack([]), "hstack expects a non-empty TensorList"),
    ("vstack_empty", lambda T: T.vstack([]), "vstack expects a non-empty TensorList"),
    ("row_stack_empty", lambda T: T.row_stack([]), "vstack expects a non-empty TensorList"),
    ("dstack_empty", lambda T: T.dstack([]), "dstack expects a non-empty TensorList"),
    ("column_stack_empty", lambda T: T.column_stack([]), "column_stack expects a non-empty"),
    ("stack_empty", lambda T: T.stack([]), "^stack expects a non-empty TensorList$"),
    ("hstack_mismatch", lambda T: T.hstack([m(T), T.ones(4)]),
     "Tensors must have same number of dimensions: got 2 and 1"),
    ("vstack_mismatch", lambda T: T.vstack([m(T), T.ones(3)]),
     "Sizes of tensors must match except in dimension 0"),
    ("atleast_int", lambda T: T.atleast_1d(3), r"atleast_1d\(\) received an invalid combination"),
    ("tril_1d", lambda T: T.tril(T.ones(3)), "tril: input tensor must have at least 2 dimensions"),
    ("triu_0d", lambda T: T.ones(()).triu(), "triu: input tensor must have at least 2 dimensions"),
    ("diag_0d", lambda T: T.diag(T.ones(())), r"diag\(\): Supports 1D or 2D tensors. Got 0D"),
    ("diag_3d", lambda T: T.ones(2, 2, 2).diag(), "Got 3D"),
    ("diagonal_same", lambda T: m(T).diagonal(0, 1, -1),
     "diagonal dimensions cannot be identical 1, -1"),
    ("diagonal_range", lambda T: m(T).diagonal(0, 0, 2), "Dimension out of range"),
    ("diagonal_1d", lambda T: T.ones(3).diagonal(),
     r"expected to be in range of \[-1, 0\], but got 1"),
    ("diag_embed_same", lambda T: T.diag_embed(m(T), 0, 1, -2),
     "diagonal dimensions cannot be identical 1, -2"),
    ("diag_embed_range", lambda T: T.diag_embed(m(T), 0, 0, 3),
     r"expected to be in range of \[-3, 2\], but got 3"),
    ("diag_embed_0d", lambda T: T.diag_embed(T.ones(())),
     r"expected to be in range of \[-1, 0\], but got -2"),
    ("trace_1d", lambda T: T.trace(T.ones(3)),
     "trace: expected a matrix, but got tensor with dim 1"),
    ("trace_bool", lambda T: T.trace(T.ones(2, 2, dtype=T.bool)),
     "\"trace\" not implemented for 'Bool'"),
    ("unfold_size", lambda T: m(T).unfold(1, 5, 1),
     "maximum size for tensor at dimension 1 is 4 but size is 5"),
    ("unfold_step", lambda T: m(T).unfold(1, 2, 0), "step is 0 but must be > 0"),
    ("unfold_negative", lambda T: m(T).unfold(1, -1, 0), "size is -1 but must be >= 0"),
    ("unfold_dim", lambda T: m(T).unfold(2, 1, 1), "Dimension out of range"),
    ("unfold_0d", lambda T: T.ones(()).unfold(0, 2, 1),
     "maximum size for tensor at dimension 0 is 1 but size is 2"),
    ("meshgrid_empty", lambda T: T.meshgrid(indexing="ij"),
     "meshgrid expects a non-empty TensorList"),
    ("meshgrid_indexing", lambda T: T.meshgrid(T.ones(2), indexing="ab"),
     'torch.meshgrid: indexing must be one of "xy" or "ij", but received: ab'),
    ("meshgrid_2d", lambda T: T.meshgrid(T.ones(2), m(T), indexing="ij"),
     "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: "),
    ("meshgrid_dtype", lambda T: T.meshgrid(T.ones(2), T.ones(2).long(), indexing="ij"),
     "meshgrid expects all tensors to have the same dtype"),
    ("meshgrid_type", lambda T: T.meshgrid(T.ones(2), 3, indexing="ij"),
     "expected Tensor as element 1 in argument 0, but got int"),
]



def _joined(name, make):
    return lambda T: getattr(T, name)(make(T))


# a Tensor or a generator where PyTorch takes a tuple or list of Tensors (a Tensor iterates over
# its rows, so without the check these would run)
ERRORS += [(f"{name}_{kind}", _joined(name, make),
            rf"^{name}\(\): argument 'tensors' \(position 1\) must be tuple of Tensors, not "
            rf"{kind}$")
           for name in ("cat", "concat", "concatenate", "stack", "hstack", "vstack", "row_stack",
                        "dstack", "column_stack")
           for kind, make in (("Tensor", m), ("generator", lambda T: (t for t in [m(T)])))]


@pytest.mark.parametrize("name,fn,match", cases(ERRORS))
def test_errors(name, fn, match):
    both(fn, match=match, raises=True)


SHAPES = [
    # name, fn(T) -> a torch.Size (broadcast_shapes) or other plain result
    ("broadcast_shapes", lambda T: T.broadcast_shapes((3, 1), (1, 4), 4)),
    ("broadcast_shapes_mixed", lambda T: T.broadcast_shapes((3,), (2, 1), ())),
    ("broadcast_shapes_size", lambda T: T.broadcast_shapes(T.Size([2, 1]), [3])),
    ("broadcast_shapes_zero", lambda T: T.broadcast_shapes((0,), (1,))),
    ("broadcast_shapes_none", lambda T: T.broadcast_shapes()),
    ("broadcast_tensors_none", lambda T: T.broadcast_tensors()),
    ("atleast_none", lambda T: T.atleast_1d()),
    ("atleast_2d_none", lambda T: T.atleast_2d()),
    ("tril_bool_inplace", lambda T: T.ones(2, 2, dtype=T.bool).tril_()),
    ("broadcast_tensors_same_object", lambda T: (lambda a, b: tuple(
        r is x for r, x in zip(T.broadcast_tensors(a, b), (a, b))))(T.ones(3, 4), T.ones(4))),
    ("atleast_same_object", lambda T: (lambda a: (T.atleast_1d(a) is a, T.atleast_2d(a) is a,
                                                  T.atleast_3d(a) is a))(T.ones(2, 2))),
    ("broadcast_to_new_object", lambda T: (lambda a: T.broadcast_to(a, (2, 2)) is a)(
        T.ones(2, 2))),
]


@pytest.mark.parametrize("name,fn", cases(SHAPES))
def test_shapes_and_identity(name, fn):
    both(fn)


def test_meshgrid_warns_only_without_indexing():
    for T in (torch, tl):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            T.meshgrid(T.ones(2), T.ones(3), indexing="ij")
            T.meshgrid(T.ones(2), T.ones(3), indexing="xy")
        assert not caught, (T.__name__, [str(w.message) for w in caught])
        with pytest.warns(UserWarning, match="it will be required to pass the indexing "
                                             "argument"):
            out = T.meshgrid(T.ones(2), T.ones(3))
        assert tuple(out[0].shape) == (2, 3)


# ------------------------------------------------------------------------------------------------
# Traced (jax.jit): static-shape ops trace, narrow with a traced start, repeat_interleave with
# output_size
# ------------------------------------------------------------------------------------------------

def _traced_program(x, r, start):
    parts = [
        x.unflatten(1, (2, 2)).movedim(0, 2).swapaxes(0, 1), tl.broadcast_to(x[:1], (2, 3, 4)),
        x.repeat(2, 1), tl.tile(x, (2,)), tl.repeat_interleave(x, 2, dim=1),
        tl.repeat_interleave(x, r, dim=0, output_size=5), tl.flip(x, (0,)), x.fliplr(),
        tl.roll(x, (1, 2), (0, 1)), x.roll(3), tl.rot90(x, 3), x.narrow(1, 1, 2),
        x.narrow(1, start, 2), x.diagonal(1), x.unfold(1, 2, 1), x.tril(-1), tl.triu(x),
        tl.diag(x[0]), x.diag(), tl.diag_embed(x), tl.diagflat(x.t()), x.trace(),
        *x.split([1, 3], 1), *x.chunk(2), *x.tensor_split([1, 3], 1), *tl.hsplit(x, 2),
        tl.hstack([x, x]), tl.vstack([x, x[0]]), tl.dstack([x, x]), tl.column_stack([x, x[:, 0]]),
        *tl.meshgrid(x[0], x[1, :2], indexing="xy"), *tl.broadcast_tensors(x, x[0]),
        tl.atleast_3d(x[0, 0]),
    ]
    return tl.cat([p.reshape(-1) for p in parts])


def test_traced_matches_eager():
    rng = np.random.default_rng(0)
    x = tl.tensor(rng.uniform(-1, 1, (3, 4)))
    r, start = tl.tensor([2, 0, 3]), tl.tensor(-3)
    eager = _traced_program(x, r, start)
    traced = jax.jit(to_jax_function(_traced_program))(x._value(), r._value(), start._value())
    np.testing.assert_allclose(np.asarray(traced), eager.numpy(), rtol=1e-12)


def _loss(x):
    y = (x.split(2, 1)[0] * 2).sum() + x.diagonal().exp().sum() + x.unfold(1, 2, 1).sin().sum()
    return y + tl.rot90(x).roll(1, 0)[0].sum() + tl.repeat_interleave(x, 2, 0).pow(2).sum()


def test_backward_under_jit():
    def grads(x_arr):
        x = tl.Tensor._wrap(x_arr).requires_grad_(True)
        _loss(x).backward()
        return x.grad._value()
    x = tl.tensor(np.linspace(-1, 1, 12).reshape(3, 4), requires_grad=True)
    _loss(x).backward()
    got = jax.jit(grads)(x.detach()._value())
    np.testing.assert_allclose(np.asarray(got), x.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("fn", [
    lambda x: tl.repeat_interleave(x, tl.Tensor._wrap(x._value()[:, 0].astype("int64")), dim=0),
    lambda x: x.tensor_split(tl.Tensor._wrap((x._value()[0, :2] * 0 + 1).astype("int64")), 1),
], ids=["repeat_interleave_no_output_size", "tensor_split_traced_indices"])
def test_data_dependent_shapes_are_eager_only(fn):
    with pytest.raises(RuntimeError, match="traced Tensor"):
        jax.jit(to_jax_function(fn))(np.ones((3, 4)))


@pytest.mark.parametrize("name,fn,raises", cases([
    ("expand_fill_", lambda T: T.zeros(3).expand(2, 3).fill_(1.5)._base, False),
    ("expand_zero_", lambda T: T.ones(3).expand(2, 3).zero_()._base, False),
    ("meshgrid_fill_", lambda T: T.meshgrid(T.arange(3.0), T.arange(2.0), indexing="ij")[0]
     .fill_(T.tensor(2.0)), True),
    ("expand_add_", lambda T: T.zeros(3).expand(2, 3).add_(1), True),
]))
def test_fill_and_zero_write_overlapping_views(name, fn, raises):
    """zero_ and fill_ with a number may write to elements that share memory (each gets the
    same value); fill_ with a tensor may not, as in PyTorch."""
    both(fn, match=OVERLAP, raises=raises)


@pytest.mark.parametrize("name,fn", cases([
    ("select_of_split", lambda T: T.randn(4, 3, requires_grad=True).clone().split(2)[1][0]
     .mul_(2)),
    ("t_of_split", lambda T: T.randn(4, 3, requires_grad=True).clone().split(2)[1].t().mul_(2)),
    ("slice_of_unbind", lambda T: T.randn(4, 3, requires_grad=True).clone().unbind(0)[1][:2]
     .zero_()),
    ("chunk_of_chunk", lambda T: T.randn(4, 3, requires_grad=True).clone().chunk(2)[0]
     .chunk(2)[1].add_(1)),
]))
def test_views_of_multi_output_views_keep_the_inplace_rule(name, fn):
    both(fn, match=r"^Output \d of \w+ is a view and is being modified inplace\. This view is "
                   r"the output of a function that returns multiple views", raises=True)


def _stale_split_view(T):
    """An output of split whose storage was then written (under no_grad)."""
    x = T.tensor(np.arange(12.0).reshape(4, 3), requires_grad=True).clone()
    a, _ = x.split(2)
    with T.no_grad():
        x.mul_(2)
    return a


@pytest.mark.parametrize("name,fn,raises", cases([
    ("detach", lambda T, a: a.detach() * 1, False),
    ("numpy", lambda T, a: T.tensor(a.detach().numpy()), False),
    ("requires_grad", lambda T, a: a.requires_grad, False),
    ("grad_fn", lambda T, a: a.grad_fn, True),
    ("add", lambda T, a: a + 1, True),
    ("add_no_grad", lambda T, a: T.no_grad().__enter__() or a + 1, False),
]))
def test_stale_multi_output_view(name, fn, raises):
    """After its storage is written, a split output stays readable but cannot join the graph
    while grad mode is on."""
    try:
        both(lambda T: fn(T, _stale_split_view(T)),
             match=r"^Output 0 of Split is a view and its base or another view of its base has "
                   r"been modified inplace", raises=raises)
    finally:
        torch.set_grad_enabled(True)
        tl.set_grad_enabled(True)


def test_cuts_stacked_are_gathered_by_one_program():
    """NOTE [ cuts gathered by stack ]: slices and selects along dim 0 that autograd does not
    record are deferred; a stack of them, none read, gathers them in one program (no cut runs one
    of its own, and a batch of new starts runs the same program); a cut read inside a jax trace
    still holds its concrete value afterwards."""
    from torchlike._ops import shape
    data = tl.arange(100) * 3
    rows = tl.arange(60.0).reshape(10, 6)
    traces = shape._GATHER._traces[0]
    for starts in ([5, 0, 90, 41], [7, 7, 2, 60]):
        pieces = [data[s:s + 8] for s in starts]
        batch = tl.stack(pieces)
        assert all(p._lazy.value is None for p in pieces)
        assert batch.tolist() == [list(range(3 * s, 3 * s + 24, 3)) for s in starts]
        assert [p.tolist() for p in pieces] == batch.tolist()
    picked = tl.stack([rows[i] for i in (9, 0, 4)], 1)
    np.testing.assert_array_equal(picked.numpy(), rows.numpy()[[9, 0, 4]].T)
    assert shape._GATHER._traces[0] == traces + 2   # the windows' program once, the rows' once
    assert tl.stack([data[2:4], data[2:4] * 1]).tolist() == [[6, 9], [6, 9]]   # one read: no gather

    piece = data[10:13]
    traced = jax.jit(tl.func.to_jax(lambda a: a + piece))(np.zeros(3, np.int64))
    np.testing.assert_array_equal(traced, [30, 33, 36])
    assert piece.tolist() == [30, 33, 36]   # (not the trace's value)


def test_stacked_cuts_read_on_host_before_their_program_runs(monkeypatch):
    """A stack of cuts (a batch of windows) read on the host while its gather is queued takes
    its values from what the gather reads, with numpy (NOTE [ views read on the host ] in
    torchlike/_views.py): reads of it and of its views, and an embedding's check of it, give the
    program's values; a write into the batch or into the tensor the windows were cut from
    since is seen as torch sees it."""
    from torchlike import _tensor
    made = []
    real = _tensor._made_on_host

    def made_on_host(root):
        values = real(root)
        if values is not None:
            made.append(values.shape)
        return values
    monkeypatch.setattr(_tensor, "_made_on_host", made_on_host)
    monkeypatch.setattr(_tensor, "_ready", lambda arr: False)   # (as if queued behind a step)

    def go(T):
        data = T.arange(100) * 3
        batch = T.stack([data[s:s + 4] for s in (5, 0, 90)])
        y = T.stack([data[s + 1:s + 5] for s in (5, 0, 90)])
        read = [batch.tolist(), y.view(-1).tolist(), y[1].numpy().tolist(), y[2, 3].item()]
        emb = T.nn.Embedding(300, 2)
        read.append(list(emb(batch).shape))
        data[0] = 1000   # the windows' tensor written after the stack: the batch keeps its values
        read.append(batch.tolist())
        batch[0, 0] = -1
        read.append(batch.tolist())
        try:
            emb(batch)
        except IndexError as e:
            read.append(str(e))
        return read
    both(go)
    # every read before the writes; the one after the write into the cut tensor too while its
    # old array lives (held weakly), none after the write into the batch
    assert made[:5] == [(3, 4)] * 5 and len(made) <= 6


# ------------------------------------------------------------------------------------------------
# A view undone (NOTE [ a view undone ] in _ops/shape.py): its root's array, no program
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, shape, make, undo", [
    ("transpose", (2, 3, 4), lambda x: x.transpose(2, 0), lambda v: v.transpose(0, 2)),
    ("permute", (2, 3, 4), lambda x: x.permute(2, 0, 1), lambda v: v.permute(1, 2, 0)),
    ("t", (3, 4), lambda x: x.t(), lambda v: v.t()),
])
def test_a_view_undone_takes_its_roots_array(monkeypatch, name, shape, make, undo):
    from torchlike import _dispatch
    ran = []
    forward = _dispatch.eager_forward
    monkeypatch.setattr(_dispatch, "eager_forward",
                        lambda op, *a, **k: ran.append(op.name) or forward(op, *a, **k))
    out = {}
    for T in (tl, torch):
        x = T.tensor(np.arange(float(np.prod(shape))).reshape(shape), requires_grad=True)
        root = x * 2
        v = make(root)
        ran.clear()
        w = undo(v)
        out[T] = (w, root, v, x, list(ran))
        (w * T.arange(float(np.prod(shape))).reshape(shape)).sum().backward()
    (w, root, v, x, ran), (tw, _, _, tx, _) = out[tl], out[torch]
    assert ran == []   # no program: the root's array
    np.testing.assert_array_equal(w.detach().numpy(), tw.detach().numpy())
    assert w.stride() == tw.stride() and w.is_contiguous() and w._base is root
    assert gname(w) == gname(tw) and next_names(w.grad_fn) == next_names(tw.grad_fn)
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    with tl.no_grad():   # writes through the undone view reach the root, and back
        w.view(-1)[0] = 100.0
        assert float(root.reshape(-1)[0]) == 100.0 and float(v.reshape(-1)[0]) == 100.0
        root.add_(1)
        assert float(w.reshape(-1)[0]) == 101.0


def test_a_view_not_undone_keeps_its_values():
    """Chains that do not undo to their storage root (not the inverse, two steps from the root,
    a view of a view) compute their values as PyTorch's: a rule applied too widely would hand out
    the root's array, of other values or shape."""
    got = None
    for T in (tl, torch):
        x = T.arange(24.0).reshape(2, 3, 4)
        outs = (x.permute(2, 0, 1).permute(2, 0, 1),   # not the inverse
                x.transpose(0, 1).transpose(1, 2).transpose(1, 2),   # two steps from the root
                x[0].transpose(0, 1).transpose(0, 1))
        if got is None:
            got = [t.numpy() for t in outs]
        else:
            for g, t in zip(got, outs):
                np.testing.assert_array_equal(g, t.numpy())
