"""Parity tests for the embedding functionals (torchlike/_ops/embedding.py) against PyTorch.

Spec tables, one row per case: values, dtypes, grad_fn and next_functions names and gradients of
the weight (and per-sample weights) (check_op); padding_idx rows getting no gradient;
scale_grad_by_freq; max_norm renormalizing the weight in place; embedding_bag's modes, offsets and
empty bags; one_hot; finite differences in float64; PyTorch's errors; and the traced path.
"""
import jax
import numpy as np
import pytest
import torch

import torchlike as tl

from parity import A, both, cases, check_op


def F(T):
    return T.nn.functional


W = A((6, 3))
W64 = A((6, 3), "float64")

EMBEDDING = [
    # name, fn(T, weight), weight
    ("1d", lambda T, w: F(T).embedding(T.tensor([1, 4, 1, 0]), w), W),
    ("2d", lambda T, w: F(T).embedding(T.tensor([[1, 2], [5, 2]]), w), W),
    ("0d", lambda T, w: F(T).embedding(T.tensor(3), w), W),
    ("int32", lambda T, w: F(T).embedding(T.tensor([2, 5], dtype=T.int32), w), W),
    ("f64", lambda T, w: F(T).embedding(T.tensor([[0, 0, 5]]), w), W64),
    ("padding", lambda T, w: F(T).embedding(T.tensor([1, 2, 2, 0]), w, padding_idx=2), W),
    ("padding_0", lambda T, w: F(T).embedding(T.tensor([[0, 3], [0, 0]]), w, 0), W),
    ("padding_negative", lambda T, w: F(T).embedding(T.tensor([5, 1, 5]), w, padding_idx=-1), W),
    ("scale_grad", lambda T, w: F(T).embedding(T.tensor([1, 1, 1, 4, 2, 4]), w,
                                               scale_grad_by_freq=True), W),
    ("scale_grad_padding", lambda T, w: F(T).embedding(T.tensor([[3, 3], [0, 3]]), w, 0,
                                                       scale_grad_by_freq=True), W64),
    ("max_norm", lambda T, w: F(T).embedding(T.tensor([1, 2, 1]), w, max_norm=0.5), W),
    ("max_norm_p1", lambda T, w: F(T).embedding(T.tensor([[0, 5]]), w, max_norm=1.0,
                                                norm_type=1.0), W64),
    ("max_norm_padding_scale", lambda T, w: F(T).embedding(
        T.tensor([4, 4, 3]), w, 3, 1.5, 2.0, True), W),
    ("torch_embedding", lambda T, w: T.embedding(w, T.tensor([1, 3, 3]), 3, True, False), W),
]


@pytest.mark.parametrize("name,fn,weight", cases(EMBEDDING))
def test_embedding(name, fn, weight):
    check_op(f"emb/{name}", fn, [weight])



MAX_NORM = [
    # name, fn(T, weight) -> output (the weight is renormalized in place first)
    ("p2", lambda T, w: F(T).embedding(T.tensor([[1, 2], [1, 5]]), w, max_norm=0.8)),
    ("p1_bag", lambda T, w: F(T).embedding_bag(T.tensor([0, 2, 2]), w, T.tensor([0, 1]),
                                               max_norm=1.0, norm_type=1)),
    ("inf", lambda T, w: F(T).embedding(T.tensor([3]), w, max_norm=0.5,
                                        norm_type=float("inf"))),
    ("renorm_", lambda T, w: T.embedding_renorm_(w, T.tensor([0, 4]), 0.7, 2.0)),
]


@pytest.mark.parametrize("name,fn", cases(MAX_NORM))
def test_max_norm_writes_weight(name, fn):
    values = np.random.default_rng(3).uniform(-1.5, 1.5, (6, 3))

    def go(T):
        w = T.tensor(values, requires_grad=True)
        out = fn(T, w)
        return out.detach(), w.detach().clone(), w._version

    def go_renorm_(T):   # the in-place op proper, on a tensor without grad
        w = T.tensor(values)
        out = fn(T, w)
        return out is w, w, w._version
    both(go_renorm_ if name == "renorm_" else go)


# ------------------------------------------------------------------------------------------------
# embedding_bag
# ------------------------------------------------------------------------------------------------

IDX = [1, 2, 4, 5, 4, 3, 2]
BAG = [
    # name, fn(T, weight, *more), inputs after the weight
    ("sum_offsets", lambda T, w: F(T).embedding_bag(T.tensor(IDX), w, T.tensor([0, 2, 5]),
                                                    mode="sum"), []),
    ("mean_offsets", lambda T, w: F(T).embedding_bag(T.tensor(IDX), w, T.tensor([0, 3])), []),
    ("max_offsets", lambda T, w: F(T).embedding_bag(T.tensor(IDX), w, T.tensor([0, 4]),
                                                    mode="max"), []),
    ("sum_2d", lambda T, w: F(T).embedding_bag(T.tensor([[0, 2], [2, 5]]), w, mode="sum"), []),
    ("mean_2d_f64", lambda T, w: F(T).embedding_bag(T.tensor([[0, 2, 3], [1, 5, 5]]), w), []),
    ("max_2d", lambda T, w: F(T).embedding_bag(T.tensor([[1, 4], [3, 0]]), w, mode="max"), []),
    ("max_ties", lambda T, w: F(T).embedding_bag(
        T.tensor([1, 2, 3, 0, 2]), w.clamp(max=0.2), T.tensor([0, 4]), mode="max"), []),
    ("empty_bags", lambda T, w: F(T).embedding_bag(T.tensor(IDX), w, T.tensor([0, 0, 3, 3, 7]),
                                                   mode="mean"), []),
    ("empty_bags_max", lambda T, w: F(T).embedding_bag(T.tensor(IDX), w, T.tensor([0, 2, 2]),
                                                       mode="max"), []),
    ("last_offset", lambda T, w: F(T).embedding_bag(T.tensor(IDX), w, T.tensor([0, 3, 7]),
                                                    include_last_offset=True, mode="sum"), []),
    ("last_offset_max", lambda T, w: F(T).embedding_bag(T.tensor(IDX), w, T.tensor([0, 5, 7]),
                                                        mode="max", include_last_offset=True), []),
    ("int32", lambda T, w: F(T).embedding_bag(T.tensor(IDX, dtype=T.int32), w,
                                              T.tensor([0, 1], dtype=T.int32)), []),
    ("padding_mean", lambda T, w: F(T).embedding_bag(T.tensor(IDX), w, T.tensor([0, 2]),
                                                     padding_idx=2), []),
    ("padding_sum_negative", lambda T, w: F(T).embedding_bag(
        T.tensor([[5, 5], [1, 5]]), w, mode="sum", padding_idx=-1), []),
    ("padding_max_all", lambda T, w: F(T).embedding_bag(T.tensor([4, 4, 1]), w, T.tensor([0, 2]),
                                                        mode="max", padding_idx=4), []),
    # (indices chosen so that PyTorch 2.13's CPU bug, see test_bag_scale_grad_mixed_counts,
    # does not show)
    ("scale_grad_sum", lambda T, w: F(T).embedding_bag(
        T.tensor([4, 1, 4, 2, 4]), w, T.tensor([0, 3]), scale_grad_by_freq=True, mode="sum"), []),
    ("scale_grad_mean", lambda T, w: F(T).embedding_bag(
        T.tensor([[4, 4], [2, 1]]), w, scale_grad_by_freq=True), []),
    ("per_sample_weights", lambda T, w, p: F(T).embedding_bag(
        T.tensor(IDX), w, T.tensor([0, 4]), mode="sum", per_sample_weights=p), [A((7,))]),
    ("per_sample_weights_2d_pad", lambda T, w, p: F(T).embedding_bag(
        T.tensor([[0, 3, 3], [1, 2, 3]]), w, mode="sum", per_sample_weights=p,
        padding_idx=3), [A((2, 3))]),
]


@pytest.mark.parametrize("name,fn,more", cases(BAG))
def test_embedding_bag(name, fn, more):
    check_op(f"bag/{name}", fn, [W64 if "f64" in name else W] + more)


def test_bag_trailing_indices_left_out():
    """With include_last_offset, indices after the last offset belong to no bag.  Values only:
    PyTorch 2.13's CPU backward writes uninitialized memory there, and its 'mean' divides the
    last bag's sum by a count that includes the trailing indices; torchlike averages over the
    bag's own indices (checked by hand)."""
    def bags(T, mode):
        return F(T).embedding_bag(T.tensor(IDX), T.arange(18.0).reshape(6, 3),
                                  T.tensor([0, 2, 4]), mode=mode, include_last_offset=True)
    for mode in ("sum", "max"):
        both(lambda T: bags(T, mode))
    mean = bags(tl, "mean").numpy()
    np.testing.assert_array_equal(mean, [[4.5, 5.5, 6.5], [13.5, 14.5, 15.5]])


def test_bag_scale_grad_mixed_counts():
    """PyTorch 2.13's CPU embedding_bag divides some rows by another index's count
    (pytorch/pytorch#190063, fixed upstream by #190264); torchlike divides each row by its own
    count, as CUDA and F.embedding do.  Oracle: torch's F.embedding summed per bag."""
    idx, w0 = [1, 1, 2, 2, 2, 3, 1], np.random.default_rng(0).standard_normal((5, 2))
    w = torch.tensor(w0, requires_grad=True)
    rows = torch.nn.functional.embedding(torch.tensor(idx), w, scale_grad_by_freq=True)
    (rows[:4].sum(0) * 2 + rows[4:].sum(0) * 3).sum().backward()
    t = tl.tensor(w0, requires_grad=True)
    bags = F(tl).embedding_bag(tl.tensor(idx), t, tl.tensor([0, 4]), mode="sum",
                               scale_grad_by_freq=True)
    (bags * tl.tensor([[2.0], [3.0]], dtype=tl.float64)).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), w.grad.numpy(), rtol=1e-12)


def test_embedding_bag_grad_fn_without_weights():
    """EmbeddingBagBackward0 lists (weight, per_sample_weights) even when the latter is None."""
    both(lambda T: [(type(n).__name__, i) for n, i in F(T).embedding_bag(
        T.tensor([1, 2]), T.ones(3, 2, requires_grad=True), T.tensor([0])).grad_fn.next_functions])


# ------------------------------------------------------------------------------------------------
# one_hot
# ------------------------------------------------------------------------------------------------

ONE_HOT = [
    # name, fn(T), the error's message (None: a value row)
    ("infer", lambda T: F(T).one_hot(T.tensor([3, 0, 1])), None),
    ("explicit", lambda T: F(T).one_hot(T.tensor([[0, 2], [1, 1]]), 5), None),
    ("0d", lambda T: F(T).one_hot(T.tensor(2), 3), None),
    ("empty", lambda T: F(T).one_hot(T.zeros(0, 2, dtype=T.long), 4), None),
    ("float", lambda T: F(T).one_hot(T.tensor([1.0])),
     r"^one_hot is only applicable to index tensor of type LongTensor\.$"),
    ("int32", lambda T: F(T).one_hot(T.tensor([1], dtype=T.int32), 3),
     r"^one_hot is only applicable to index tensor of type LongTensor\.$"),
    ("negative", lambda T: F(T).one_hot(T.tensor([1, -2]), 4),
     r"^Class values must be non-negative\.$"),
    ("too_small", lambda T: F(T).one_hot(T.tensor([1, 3]), 3),
     r"^Class values must be smaller than num_classes\.$"),
    ("zero_classes", lambda T: F(T).one_hot(T.tensor([1]), 0),
     r"^Class values must be smaller than num_classes\.$"),
    ("empty_infer", lambda T: F(T).one_hot(T.zeros(0, dtype=T.long)),
     r"^Can not infer total number of classes from empty tensor\.$"),
]


@pytest.mark.parametrize("name,fn,match", cases(ONE_HOT))
def test_one_hot(name, fn, match):
    both(fn, match=match, raises=match is not None)


# ------------------------------------------------------------------------------------------------
# Finite differences (float64)
# ------------------------------------------------------------------------------------------------

def _w(seed, shape=(5, 3)):
    v = np.random.default_rng(seed).uniform(-1.5, 1.5, shape)
    return tl.tensor(v, dtype=tl.float64, requires_grad=True)


GRADCHECK = [
    # name, fn(*tensors), tensors
    # (padding_idx and scale_grad_by_freq change the gradient on purpose: not finite differences)
    ("embedding", lambda w: F(tl).embedding(tl.tensor([[1, 1], [2, 0]]), w), [_w(1)]),
    ("bag_mean", lambda w: F(tl).embedding_bag(tl.tensor([0, 4, 4, 2]), w, tl.tensor([0, 1])),
     [_w(2)]),
    ("bag_max", lambda w: F(tl).embedding_bag(tl.tensor([[0, 4], [3, 2]]), w, mode="max"),
     [_w(3)]),
    ("bag_weighted", lambda w, p: F(tl).embedding_bag(tl.tensor([1, 3, 3]), w, tl.tensor([0, 2]),
                                                      mode="sum", per_sample_weights=p),
     [_w(4), _w(5, (3,))]),
]


@pytest.mark.parametrize("name,fn,tensors", cases(GRADCHECK))
def test_gradcheck(name, fn, tensors):
    assert tl.autograd.gradcheck(fn, tuple(tensors), fast_mode=True)


# ------------------------------------------------------------------------------------------------
# Errors
# ------------------------------------------------------------------------------------------------

def _w3(T):
    return T.ones(5, 3)


ERRORS = [
    # name, fn(T), match
    ("emb_out_of_range", lambda T: F(T).embedding(T.tensor([1, 5]), _w3(T)),
     "index out of range in self"),
    ("emb_negative", lambda T: F(T).embedding(T.tensor([-1]), _w3(T)), "index out of range"),
    ("emb_float_indices", lambda T: F(T).embedding(T.tensor([1.0]), _w3(T)),
     r"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
     r"Long, Int; but got torch.FloatTensor instead \(while checking arguments for embedding\)"),
    ("emb_short_indices", lambda T: F(T).embedding(T.tensor([1], dtype=T.int16), _w3(T)),
     "but got torch.ShortTensor instead"),
    ("emb_padding_big", lambda T: F(T).embedding(T.tensor([1]), _w3(T), padding_idx=5),
     "Padding_idx must be within num_embeddings"),
    ("emb_padding_negative", lambda T: F(T).embedding(T.tensor([1]), _w3(T), padding_idx=-6),
     "Padding_idx must be within num_embeddings"),
    ("emb_weight_1d", lambda T: F(T).embedding(T.tensor([1]), T.ones(5)), "'weight' must be 2-D"),
    ("bag_no_offsets", lambda T: F(T).embedding_bag(T.tensor([1, 2]), _w3(T)),
     "offsets has to be a 1D Tensor but got None"),
    ("bag_2d_offsets", lambda T: F(T).embedding_bag(T.tensor([[1, 2]]), _w3(T), T.tensor([0])),
     "if input is 2D, then offsets has to be None"),
    ("bag_offsets_2d", lambda T: F(T).embedding_bag(T.tensor([1]), _w3(T), T.tensor([[0]])),
     "offsets has to be a 1D Tensor"),
    ("bag_3d", lambda T: F(T).embedding_bag(T.tensor([[[1]]]), _w3(T)),
     "input has to be 1D or 2D Tensor, but got Tensor of dimension 3"),
    ("bag_mode", lambda T: F(T).embedding_bag(T.tensor([[1]]), _w3(T), mode="min"),
     "mode has to be one of sum, mean or max"),
    ("bag_max_scale", lambda T: F(T).embedding_bag(T.tensor([[1]]), _w3(T), mode="max",
                                                   scale_grad_by_freq=True),
     "max mode does not support scaling the gradient by the frequency"),
    ("bag_psw_mean", lambda T: F(T).embedding_bag(T.tensor([[1]]), _w3(T),
                                                  per_sample_weights=T.ones(1, 1)),
     r"per_sample_weights is only supported for mode='sum' \(got mode='mean'\)"),
    ("bag_psw_shape", lambda T: F(T).embedding_bag(T.tensor([[1, 2]]), _w3(T), mode="sum",
                                                   per_sample_weights=T.ones(2)),
     r"If per_sample_weights \(torch.Size\(\[2\]\)\) is not None, then it must have the same "
     r"shape as the input \(torch.Size\(\[1, 2\]\)\)"),
    ("bag_psw_dtype", lambda T: F(T).embedding_bag(T.tensor([[1, 2]]), _w3(T), mode="sum",
                                                   per_sample_weights=T.ones(1, 2).double()),
     "does not equal torch.DoubleTensor"),
    ("bag_weight_1d", lambda T: F(T).embedding_bag(T.tensor([[1]]), T.ones(3)),
     "weight has to be a 2D Tensor, but got Tensor of dimension 1"),
    ("bag_int_weight", lambda T: F(T).embedding_bag(T.tensor([[1]]), _w3(T).long(), mode="sum"),
     "'weight' to have one of the following scalar types: Half, BFloat16, Float, Double"),
    ("bag_float_offsets", lambda T: F(T).embedding_bag(T.tensor([1]), _w3(T), T.tensor([0.0])),
     "but got torch.FloatTensor instead"),
    ("bag_out_of_range", lambda T: F(T).embedding_bag(T.tensor([1, 7]), _w3(T), T.tensor([0])),
     r"Index 1 of input takes value 7 which is not in the valid range \[0, 5\)"),
    ("bag_first_offset", lambda T: F(T).embedding_bag(T.tensor([1, 2]), _w3(T), T.tensor([1])),
     "offsets\\[0\\] has to be 0, i.e., the first sequence in the mini-batch has to start from "
     "position 0. However, got 1"),
    ("bag_last_offset", lambda T: F(T).embedding_bag(T.tensor([1, 2]), _w3(T), T.tensor([0, 5])),
     "offsets\\[-1\\] can not be greater than input's length 2 but got offsets\\[-1\\] of 5"),
    ("bag_padding", lambda T: F(T).embedding_bag(T.tensor([1]), _w3(T), T.tensor([0]),
                                                 padding_idx=5),
     "padding_idx must be within the number of embeddings, -5 through 4, but got 5"),
    ("bag_empty_rows", lambda T: F(T).embedding_bag(T.zeros(2, 0, dtype=T.long), _w3(T)),
     "step must be nonzero"),
]


@pytest.mark.parametrize("name,fn,match", cases(ERRORS))
def test_errors(name, fn, match):
    both(fn, match=match, raises=True)


def test_sparse_is_not_supported():
    with pytest.raises(NotImplementedError, match="sparse"):
        F(tl).embedding(tl.tensor([1]), tl.ones(3, 2), sparse=True)
    with pytest.raises(NotImplementedError, match="sparse"):
        F(tl).embedding_bag(tl.tensor([[1]]), tl.ones(3, 2), sparse=True)


# ------------------------------------------------------------------------------------------------
# Traced
# ------------------------------------------------------------------------------------------------

def _emb_step(w, idx):
    out = F(tl).embedding(idx, w, padding_idx=1, scale_grad_by_freq=True)
    bag = F(tl).embedding_bag(idx, w, tl.tensor([0, 2]), mode="max")
    ((out ** 2).sum() + bag.sum()).backward()
    return out.detach(), w.grad, F(tl).one_hot(idx, 4)


def test_traced():
    w = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    idx = np.array([1, 3, 3, 0])

    def step(w, idx):
        t = tl.Tensor._wrap(w).requires_grad_()
        return tuple(o._value() for o in _emb_step(t, tl.Tensor._wrap(idx)))

    with jax.enable_x64(True):   # its JAX code reads 64-bit data
        traced = jax.jit(step)(w, idx)
        eager = step(jax.numpy.asarray(w), jax.numpy.asarray(idx))
    for t, e in zip(traced, eager):
        np.testing.assert_allclose(np.asarray(t), np.asarray(e), rtol=1e-6)


def test_one_hot_infer_is_eager_only():
    with jax.enable_x64(True), pytest.raises(RuntimeError, match="num_classes"):   # int64 data
        jax.jit(lambda a: F(tl).one_hot(tl.Tensor._wrap(a))._value())(np.array([1, 2]))
