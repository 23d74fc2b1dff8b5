"""Parity tests for torchlike.nn.functional's distances (torchlike/_ops/distance.py) and the
margin and embedding losses built on them (torchlike/_ops/loss_margin.py) against PyTorch.

Spec tables, one row per case: values, dtypes, shapes, grad_fn and next_functions names and the
gradients of every float input (check_op), each loss in float32 and float64 with each
reduction, the options, finite differences in float64 (gradcheck), PyTorch's errors, and the
traced (jax.jit) path.
"""
import math
import warnings

import jax
import numpy as np
import pytest
import torch

import torchlike as tl
from torchlike.testing import to_jax_function

from test_nn_loss import DTYPES, REDUCTIONS, V, X, F, _x, a, idx
from parity import A, both, cases, check_op, seed_of


def signs(T, dtype=None):
    return T.tensor([[1., -1, 1, 1, -1], [-1, -1, 1, 1, 1], [1, 1, -1, 1, -1]], dtype=dtype)


def labels(T):
    return T.tensor([[3, 0, -1, 1, 2], [1, 1, -1, 0, 0], [4, 3, 2, 1, 0]])


def _inputs(specs, dtype):
    return [s if isinstance(s, A) else A(s[0], dtype, s[1], s[2]) for s in specs]


# ------------------------------------------------------------------------------------------------
# Distances: float32 and float64
# ------------------------------------------------------------------------------------------------

DISTANCES = [
    # name, fn(T, *inputs), input specs
    ("cosine_similarity", lambda T, x, y: F(T).cosine_similarity(x, y), [a(X), a(X)]),
    ("cosine_similarity_dim0", lambda T, x, y: F(T).cosine_similarity(x, y, 0), [a(X), a(X)]),
    ("cosine_similarity_broadcast", lambda T, x, y: F(T).cosine_similarity(x, y, -1, eps=0.5),
     [a(X), a((1, 5))]),
    ("cosine_similarity_1d", lambda T, x, y: F(T).cosine_similarity(x, y, dim=0), [a(V), a(V)]),
    ("pairwise_distance", lambda T, x, y: F(T).pairwise_distance(x, y), [a(X), a(X)]),
    ("pairwise_distance_p1_keepdim", lambda T, x, y: F(T).pairwise_distance(
        x, y, p=1, keepdim=True), [a(X), a(X)]),
    ("pairwise_distance_inf_broadcast", lambda T, x, y: F(T).pairwise_distance(
        x, y, p=math.inf, eps=0.1), [a(X), a(V)]),
    ("pairwise_distance_p3", lambda T, x, y: F(T).pairwise_distance(x, y, p=3), [a(X), a(X)]),
    ("pairwise_distance_0d", lambda T, x, y: F(T).pairwise_distance(x, y), [a(()), a(())]),
    ("pdist", lambda T, x: F(T).pdist(x), [a((4, 3))]),
    ("pdist_p1", lambda T, x: F(T).pdist(x, 1), [a((4, 3))]),
    ("pdist_p3_5", lambda T, x: F(T).pdist(x, 3.5), [a((4, 3))]),
    ("pdist_inf", lambda T, x: F(T).pdist(x, math.inf), [a((4, 3))]),
    ("pdist_p0", lambda T, x: F(T).pdist(x, 0), [a((4, 3))]),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,fn,specs", cases(DISTANCES))
def test_distance(name, fn, specs, dtype):
    check_op(f"{name}/{dtype}", fn, _inputs(specs, dtype))


MORE_DISTANCES = [
    # name, fn(T, *inputs), input specs (float32 unless given)
    ("cosine_similarity_mixed", lambda T, x, y: F(T).cosine_similarity(x, y.double()),
     [a(X), a(X)]),
    ("cosine_similarity_int", lambda T, x: F(T).cosine_similarity(
        T.tensor([[1, 2, 0, 1, 3], [0, 0, 0, 0, 0], [2, 1, 1, 1, 1]]), x), [a(X)]),
    ("cosine_similarity_zero", lambda T, x: F(T).cosine_similarity(x, x * 0), [a(X)]),
    ("pairwise_distance_int", lambda T: F(T).pairwise_distance(idx(T, 1, 4), idx(T, 3, 1)), []),
    ("pairwise_distance_mixed", lambda T, x, y: F(T).pairwise_distance(x, y.double()),
     [a(X), a(X)]),
    ("pairwise_distance_neg_p", lambda T, x, y: F(T).pairwise_distance(x, y, p=-1.5),
     [a(X), a(X)]),
    ("pdist_one_row", lambda T, x: F(T).pdist(x), [a((1, 3))]),
    ("pdist_no_columns", lambda T: F(T).pdist(T.ones(3, 0)), []),
    ("pdist_equal_rows", lambda T, x: F(T).pdist(T.cat([x, x])), [a((1, 3))]),
]


@pytest.mark.parametrize("name,fn,specs", cases(MORE_DISTANCES))
def test_distance_options(name, fn, specs):
    rtol = 1e-6 if name.endswith("_mixed") else None   # float32 rounding, promoted
    check_op(name, fn, _inputs(specs, "float32"), rtol=rtol)


# ------------------------------------------------------------------------------------------------
# Margin and embedding losses, swept over reductions x float32/float64
# ------------------------------------------------------------------------------------------------

LOSSES = [
    # name, fn(T, reduction, *inputs), input specs
    ("cosine_embedding_loss", lambda T, r, x, y: F(T).cosine_embedding_loss(
        x, y, idx(T, 1, -1, 1), margin=0.1, reduction=r), [a(X), a(X)]),
    ("margin_ranking_loss", lambda T, r, x, y: F(T).margin_ranking_loss(
        x, y, signs(T, x.dtype), margin=0.3, reduction=r), [a(X), a(X)]),
    ("hinge_embedding_loss", lambda T, r, x: F(T).hinge_embedding_loss(
        x, signs(T, x.dtype), margin=1.5, reduction=r), [a(X)]),
    ("soft_margin_loss", lambda T, r, x: F(T).soft_margin_loss(x, signs(T), reduction=r),
     [a(X)]),
    ("triplet_margin_loss", lambda T, r, an, p, n: F(T).triplet_margin_loss(
        an, p, n, margin=2.0, reduction=r), [a(X), a(X), a(X)]),
    ("triplet_margin_with_distance_loss", lambda T, r, an, p, n:
     F(T).triplet_margin_with_distance_loss(an, p, n, margin=2.0, reduction=r),
     [a(X), a(X), a(X)]),
    ("multi_margin_loss", lambda T, r, x: F(T).multi_margin_loss(x, idx(T, 1, 0, 4),
                                                                 reduction=r), [a(X)]),
    ("multilabel_margin_loss", lambda T, r, x: F(T).multilabel_margin_loss(
        x, labels(T), reduction=r), [a(X)]),
    ("multilabel_soft_margin_loss", lambda T, r, x, y: F(T).multilabel_soft_margin_loss(
        x, y, reduction=r), [a(X), a(X, "unit")]),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name,fn,specs", cases(LOSSES))
def test_loss(name, fn, specs, reduction, dtype):
    check_op(f"{name}/{reduction}/{dtype}", lambda T, *xs: fn(T, reduction, *xs),
             _inputs(specs, dtype))


W5 = a(V, "pos", grad=False)
OPTIONS = [
    # name, fn(T, *inputs), input specs (float32)
    ("cosine_embedding_unbatched", lambda T, x, y: F(T).cosine_embedding_loss(
        x, y, T.tensor(-1), margin=-0.5), [a(V), a(V)]),
    ("cosine_embedding_other_targets", lambda T, x, y: F(T).cosine_embedding_loss(
        x, y, idx(T, 0, -1, 2), reduction="none"), [a(X), a(X)]),
    ("margin_ranking_target_grad", lambda T, x, y, t: F(T).margin_ranking_loss(x, y, t),
     [a(X), a(X), a(X)]),
    ("margin_ranking_broadcast", lambda T, x, y: F(T).margin_ranking_loss(
        x, y, signs(T)[:, :1], reduction="none"), [a(X), a(X)]),
    ("hinge_embedding_broadcast", lambda T, x: F(T).hinge_embedding_loss(
        x, signs(T)[0], reduction="none"), [a(X)]),
    ("soft_margin_mixed", lambda T, x: F(T).soft_margin_loss(x, signs(T, T.float64)), [a(X)]),
    ("triplet_p1_swap", lambda T, an, p, n: F(T).triplet_margin_loss(
        an, p, n, margin=2.0, p=1, swap=True, reduction="none"), [a(X), a(X), a(X)]),
    ("triplet_eps_legacy", lambda T, an, p, n: F(T).triplet_margin_loss(
        an, p, n, eps=0.1, size_average=False), [a(X), a(X), a(X)]),
    ("triplet_distance_cosine_swap", lambda T, an, p, n: F(T).triplet_margin_with_distance_loss(
        an, p, n, distance_function=lambda u, v: 1 - F(T).cosine_similarity(u, v), swap=True,
        reduction="none"), [a(X), a(X), a(X)]),
    ("multi_margin_p2_weight", lambda T, x, w: F(T).multi_margin_loss(
        x, idx(T, 1, 0, 4), p=2, margin=0.6, weight=w, reduction="none"), [a(X), W5]),
    ("multi_margin_unbatched", lambda T, x: F(T).multi_margin_loss(x, T.tensor(3),
                                                                   reduction="none"), [a(V)]),
    ("multi_margin_unbatched_1", lambda T, x: F(T).multi_margin_loss(x, T.tensor([3]),
                                                                     reduction="none"), [a(V)]),
    ("multilabel_margin_unbatched", lambda T, x: F(T).multilabel_margin_loss(
        x, T.tensor([3, 0, -1, 1, 2]), reduction="none"), [a(V)]),
    ("multilabel_soft_margin_weight", lambda T, x, y, w: F(T).multilabel_soft_margin_loss(
        x, y, w, reduction="none"), [a(X), a(X, "unit"), W5]),
]


@pytest.mark.parametrize("name,fn,specs", cases(OPTIONS))
def test_loss_options(name, fn, specs):
    rtol = 1e-6 if name.endswith("_mixed") else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_op(name, fn, _inputs(specs, "float32"), rtol=rtol)


# ------------------------------------------------------------------------------------------------
# Finite differences in float64
# ------------------------------------------------------------------------------------------------

GRADCHECK = [
    # name, fn(x, y) on float64 [3, 5] leaves
    ("cosine_similarity", lambda x, y: F(tl).cosine_similarity(x, y)),
    ("pairwise_distance_p3", lambda x, y: F(tl).pairwise_distance(x, y, p=3)),
    ("pdist", lambda x, y: F(tl).pdist(x)),
    ("cosine_embedding_loss", lambda x, y: F(tl).cosine_embedding_loss(
        x, y, tl.tensor([1, -1, -1]))),
    ("triplet_margin_loss", lambda x, y: F(tl).triplet_margin_loss(x, y, x * 0.5 + 0.3,
                                                                   margin=3.0)),
    ("multi_margin_loss", lambda x, y: F(tl).multi_margin_loss(x, tl.tensor([1, 0, 4]), p=2)),
    ("multilabel_margin_loss", lambda x, y: F(tl).multilabel_margin_loss(x, labels(tl))),
    ("multilabel_soft_margin_loss", lambda x, y: F(tl).multilabel_soft_margin_loss(x, y)),
    ("soft_margin_loss", lambda x, y: F(tl).soft_margin_loss(x, signs(tl))),
]


@pytest.mark.parametrize("name,fn", cases(GRADCHECK))
def test_gradcheck(name, fn):
    rng = np.random.default_rng(seed_of(name))
    x = tl.tensor(rng.uniform(-1, 1, X), dtype=tl.float64, requires_grad=True)
    y = tl.tensor(rng.uniform(0.1, 0.9, X), dtype=tl.float64, requires_grad=True)
    assert tl.autograd.gradcheck(fn, (x, y))


# ------------------------------------------------------------------------------------------------
# Errors: PyTorch's exception types and wording
# ------------------------------------------------------------------------------------------------


ERRORS = [
    # name, fn(T), message pattern
    ("cosine_similarity_int", lambda T: F(T).cosine_similarity(idx(T, 1, 2), idx(T, 2, 1), 0),
     r"expected common dtype to be floating point, yet common dtype is Long"),
    ("cosine_similarity_shapes", lambda T: F(T).cosine_similarity(_x(T, 3, 5), _x(T, 4)),
     r"The size of tensor a \(5\) must match the size of tensor b \(4\) at non-singleton "
     r"dimension 1"),
    ("cosine_similarity_dim", lambda T: F(T).cosine_similarity(_x(T, 5), _x(T, 5)),
     r"Dimension out of range \(expected to be in range of \[-1, 0\], but got 1\)"),
    ("pairwise_distance_shapes", lambda T: F(T).pairwise_distance(_x(T, 3, 5), _x(T, 4)),
     r"The size of tensor a \(5\) must match the size of tensor b \(4\)"),
    ("pdist_3d", lambda T: F(T).pdist(_x(T, 2, 3, 4)), r"pdist only supports 2D tensors, got: 3D"),
    ("pdist_negative_p", lambda T: F(T).pdist(_x(T, 3, 5), p=-1),
     r"pdist only supports non-negative p values"),
    ("pdist_int", lambda T: F(T).pdist(T.ones(3, 5, dtype=T.int64)),
     r"pdist only supports floating-point dtypes"),
    ("cosine_embedding_target_dims", lambda T: F(T).cosine_embedding_loss(
        _x(T, 3, 5), _x(T, 3, 5), T.ones(3, 5)),
     r"0D or 1D target tensor expected, multi-target not supported"),
    ("cosine_embedding_0d_target", lambda T: F(T).cosine_embedding_loss(
        _x(T, 3, 5), _x(T, 3, 5), T.tensor(1.)),
     r"0D target tensor expects 1D input tensors, but found inputs with sizes \[3, 5\] and "
     r"\[3, 5\]\."),
    ("cosine_embedding_1d_target", lambda T: F(T).cosine_embedding_loss(
        _x(T, 5), _x(T, 5), T.ones(5)),
     r"1D target tensor expects 2D input tensors, but found inputs with sizes \[5\] and \[5\]\."),
    ("cosine_embedding_bad_reduction", lambda T: F(T).cosine_embedding_loss(
        _x(T, 3, 5), _x(T, 3, 5), T.ones(3), reduction="foo"),
     r"foo is not a valid value for reduction"),
    ("margin_ranking_dims", lambda T: F(T).margin_ranking_loss(_x(T, 3, 5), _x(T, 3, 5),
                                                               T.ones(3)),
     r"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
     r"input1: torch\.Size\(\[3, 5\]\), input2: torch\.Size\(\[3, 5\]\), target: "
     r"torch\.Size\(\[3\]\) "),
    ("triplet_margin", lambda T: F(T).triplet_margin_loss(_x(T, 3), _x(T, 3), _x(T, 3), margin=0),
     r"margin must be greater than 0, got 0"),
    ("triplet_dims", lambda T: F(T).triplet_margin_loss(_x(T, 3, 5), _x(T, 3, 5), _x(T, 5)),
     r"The anchor, positive, and negative tensors are expected to have the same number of "
     r"dimensions, but got: anchor 2D, positive 2D, and negative 1D inputs"),
    ("triplet_distance_dims", lambda T: F(T).triplet_margin_with_distance_loss(
        _x(T, 3, 5), _x(T, 5), _x(T, 5)), r"anchor 2D, positive 1D, and negative 1D inputs"),
    ("triplet_distance_reduction", lambda T: F(T).triplet_margin_with_distance_loss(
        _x(T, 3), _x(T, 3), _x(T, 3), reduction="foo"), r"foo is not a valid value for reduction"),
    ("triplet_distance_margin", lambda T: F(T).triplet_margin_with_distance_loss(
        _x(T, 3), _x(T, 3), _x(T, 3), margin=-1.0), r"margin must be greater than 0, got -1.0"),
    ("soft_margin_target_grad", lambda T: F(T).soft_margin_loss(
        _x(T, 3), T.ones(3, requires_grad=True)),
     r"The function 'soft_margin_loss' is not differentiable with respect to argument "
     r"'target'\. This input cannot have requires_grad True\."),
    ("soft_margin_int", lambda T: F(T).soft_margin_loss(T.ones(3, dtype=T.int64),
                                                        T.ones(3, dtype=T.int64)),
     r"result type Float can't be cast to the desired output type Long"),
    ("multi_margin_p", lambda T: F(T).multi_margin_loss(_x(T, 3, 5), idx(T, 1, 0, 4), p=3),
     r"only p == 1 and p == 2 supported"),
    ("multi_margin_weight_dims", lambda T: F(T).multi_margin_loss(
        _x(T, 3, 5), idx(T, 1, 0, 4), weight=T.ones(5, 1)), r"weight must be one-dimensional"),
    ("multi_margin_weight_size", lambda T: F(T).multi_margin_loss(
        _x(T, 3, 5), idx(T, 1, 0, 4), weight=T.ones(4)),
     r"inconsistent weight size, expected 5 but got \[4\]"),
    ("multi_margin_weight_grad", lambda T: F(T).multi_margin_loss(
        _x(T, 3, 5), idx(T, 1, 0, 4), weight=T.ones(5, requires_grad=True)),
     r"'multi_margin_loss' is not differentiable with respect to argument 'weight'"),
    ("multi_margin_weight_dtype", lambda T: F(T).multi_margin_loss(
        _x(T, 3, 5), idx(T, 1, 0, 4), weight=T.ones(5, dtype=T.float64)),
     r"expected scalar type Float but found Double"),
    ("multi_margin_target_range", lambda T: F(T).multi_margin_loss(_x(T, 3, 5), idx(T, 1, 0, 5)),
     r"target out of range"),
    ("multi_margin_batch", lambda T: F(T).multi_margin_loss(_x(T, 3, 5), idx(T, 1, 0)),
     r"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
     r"samples \(batch size\)\. Expected target size \[3\], but got \[2\]\. Input has shape "
     r"\[3, 5\]\."),
    ("multi_margin_3d", lambda T: F(T).multi_margin_loss(_x(T, 2, 3, 4), idx(T, 1, 0)),
     r"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
     r"\[2, 3, 4\]"),
    ("multi_margin_int32_target", lambda T: F(T).multi_margin_loss(
        _x(T, 3, 5), T.tensor([1, 0, 4], dtype=T.int32)),
     r"expected scalar type Long but found Int"),
    ("multilabel_margin_target_size", lambda T: F(T).multilabel_margin_loss(
        _x(T, 3, 5), idx(T, 1, 2, -1, 0, 0)),
     r"inconsistent target size: \[5\] for input of size: \[3, 5\]"),
    ("multilabel_margin_empty", lambda T: F(T).multilabel_margin_loss(
        T.ones(3, 0), T.ones(3, 0, dtype=T.int64)),
     r"Expected non-empty vector or matrix with optional 0-dim batch size, but got: \[3, 0\]"),
    ("multilabel_margin_range", lambda T: F(T).multilabel_margin_loss(
        _x(T, 3, 5), T.full((3, 5), 7)), r"argument #2 'target' is out of range"),
    ("multilabel_margin_float", lambda T: F(T).multilabel_margin_loss(
        _x(T, 3, 5), T.ones(3, 5)), r"expected scalar type Long but found Float"),
    ("multilabel_soft_margin_reduction", lambda T: F(T).multilabel_soft_margin_loss(
        _x(T, 3, 5), _x(T, 3, 5), reduction="foo"), r"^foo is not valid$"),
]


@pytest.mark.parametrize("name,fn,match", cases(ERRORS))
def test_errors(name, fn, match):
    both(fn, match=match, raises=True)


# ------------------------------------------------------------------------------------------------
# Traced: the same code under jax.jit (eager-only value checks skipped)
# ------------------------------------------------------------------------------------------------

def _traced(x, y, z, t):
    f = F(tl)
    return (f.cosine_similarity(x, y).sum() + f.pairwise_distance(x, y, p=1).sum()
            + f.pdist(x).sum() + f.triplet_margin_loss(x, y, z, swap=True)
            + f.cosine_embedding_loss(x, y, t) + f.multi_margin_loss(x, t.clamp(0, 4))
            + f.multilabel_margin_loss(x, t.clamp(-1, 4).unsqueeze(1).expand(3, 5).contiguous())
            + f.hinge_embedding_loss(x, t.unsqueeze(1).to(x.dtype)))


def test_traced_matches_eager():
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(X), rng.standard_normal(X), rng.standard_normal(X),
              np.array([1, -1, 1])]
    eager = _traced(*[tl.tensor(v) for v in arrays])
    with jax.enable_x64(True):   # its JAX code reads 64-bit data
        traced = jax.jit(to_jax_function(_traced))(*arrays)
    np.testing.assert_allclose(np.asarray(traced), eager.numpy(), rtol=1e-12)
