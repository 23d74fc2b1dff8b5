"""Parity tests for torchlike.nn.functional's losses (torchlike/_ops/loss.py and loss_ctc.py;
the margin and embedding losses are tested with the distances, in test_nn_distance.py) against
PyTorch.

Spec tables, one row per case: every loss in float32 and float64 with each reduction (values,
dtypes, shapes, grad_fn and next_functions names, gradients of every float input: check_op),
the options of each loss, finite differences in float64 (gradcheck), PyTorch's errors and
warnings, and the traced (jax.jit) path.
"""
import warnings

import jax
import numpy as np
import pytest
import torch

import torchlike as tl
from torchlike.testing import to_jax_function

from parity import A, both, cases, check_op, seed_of

X, V = (3, 5), (5,)
REDUCTIONS = ("none", "mean", "sum")
DTYPES = ("float32", "float64")


def F(T):
    return T.nn.functional


def a(shape, dom="any", grad=True):
    """An input spec of a table row (its dtype comes from the sweep)."""
    return shape, dom, grad


def idx(T, *values):
    return T.tensor(list(values))


def log_softmax(T, x, dim):
    return T.special.log_softmax(x, dim)


# ------------------------------------------------------------------------------------------------
# Every loss, swept over reductions x float32/float64
# ------------------------------------------------------------------------------------------------

LOSSES = [
    # name, fn(T, reduction, *inputs), input specs
    ("mse_loss", lambda T, r, x, y: F(T).mse_loss(x, y, reduction=r), [a(X), a(X)]),
    ("l1_loss", lambda T, r, x, y: F(T).l1_loss(x, y, reduction=r), [a(X), a(X)]),
    ("smooth_l1_loss", lambda T, r, x, y: F(T).smooth_l1_loss(x, y, reduction=r, beta=0.6),
     [a(X), a(X)]),
    ("huber_loss", lambda T, r, x, y: F(T).huber_loss(x, y, reduction=r, delta=0.7),
     [a(X), a(X)]),
    ("binary_cross_entropy", lambda T, r, x, y: F(T).binary_cross_entropy(
        x.sigmoid(), y, reduction=r), [a(X), a(X, "prob")]),
    ("bce_with_logits", lambda T, r, x, y: F(T).binary_cross_entropy_with_logits(
        x, y, reduction=r), [a(X), a(X, "unit")]),
    ("nll_loss", lambda T, r, x: F(T).nll_loss(x, idx(T, 1, 0, 4), reduction=r), [a(X)]),
    ("nll_loss2d", lambda T, r, x: F(T).nll_loss(
        x, T.tensor([[[0, 1], [2, 1]], [[1, 1], [0, 2]]]), reduction=r), [a((2, 3, 2, 2))]),
    ("cross_entropy", lambda T, r, x: F(T).cross_entropy(x, idx(T, 1, 0, 4), reduction=r),
     [a(X)]),
    ("cross_entropy_probs", lambda T, r, x, y: F(T).cross_entropy(x, y, reduction=r),
     [a(X), a(X, "pos")]),
    ("kl_div", lambda T, r, x, y: F(T).kl_div(x, y, reduction=r), [a(X), a(X, "pos")]),
    ("poisson_nll_loss", lambda T, r, x, y: F(T).poisson_nll_loss(x, y, reduction=r),
     [a(X), a(X, "pos")]),
    ("gaussian_nll_loss", lambda T, r, x, y, v: F(T).gaussian_nll_loss(x, y, v, reduction=r),
     [a(X), a(X), a(X, "pos")]),
    ("ctc_loss", lambda T, r, x: F(T).ctc_loss(
        x, T.tensor([[1, 2, 2], [3, 3, 0]]), [6, 5], [3, 2], reduction=r), [a((6, 2, 4))]),
]


def _sweep(table):
    return [pytest.param(name, r, dt, fn, specs, id=f"{name}/{r}/{dt}")
            for name, fn, specs in table for r in REDUCTIONS for dt in DTYPES]


def _inputs(specs, dtype):
    return [A(shape, dtype, dom, grad) for shape, dom, grad in specs]


@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides the total loss")
@pytest.mark.parametrize("name,reduction,dtype,fn,specs", _sweep(LOSSES))
def test_loss(name, reduction, dtype, fn, specs):
    check_op(f"{name}/{reduction}/{dtype}", lambda T, *xs: fn(T, reduction, *xs),
             _inputs(specs, dtype))


# ------------------------------------------------------------------------------------------------
# Options of each loss (float32 unless the row says otherwise)
# ------------------------------------------------------------------------------------------------

W5 = a(V, "pos", grad=False)
OPTIONS = [
    # name, fn(T, *inputs), input specs
    ("mse_weight", lambda T, x, y, w: F(T).mse_loss(x, y, weight=w),
     [a(X), a(X), a(X, "pos", False)]),
    ("mse_mixed_dtypes", lambda T, x, y: F(T).mse_loss(x, y.double()), [a(X), a(X)]),
    ("l1_weight_none", lambda T, x, y, w: F(T).l1_loss(x, y, reduction="none", weight=w),
     [a(X), a(X), a(X, "pos", False)]),
    ("smooth_l1_beta0", lambda T, x, y: F(T).smooth_l1_loss(x, y, beta=0.0), [a(X), a(X)]),
    ("bce_weight_none", lambda T, x, y, w: F(T).binary_cross_entropy(
        x.sigmoid(), y.abs(), w, reduction="none"), [a(X), a(X, "unit"), a((3, 1), "pos", False)]),
    ("bce_edges", lambda T, x: F(T).binary_cross_entropy(
        x, T.tensor([[1., 0.3], [0., 0.5]]), reduction="none"), [a((2, 2), "prob")]),
    ("bce_logits_weights", lambda T, x, y, w, p: F(T).binary_cross_entropy_with_logits(
        x, y, w, pos_weight=p), [a(X), a(X, "unit"), W5, W5]),
    ("bce_logits_pos_weight_none", lambda T, x, y, p: F(T).binary_cross_entropy_with_logits(
        x, y, reduction="none", pos_weight=p), [a(X), a(X, "unit"), a((3, 1), "pos", False)]),
    ("bce_logits_mixed", lambda T, x, y: F(T).binary_cross_entropy_with_logits(x, y.double()),
     [a(X), a(X, "unit")]),
    ("nll_weight_ignore", lambda T, x, w: F(T).nll_loss(x, idx(T, 1, -100, 3), w),
     [a(X), W5]),
    ("nll_ignore_index", lambda T, x: F(T).nll_loss(x, idx(T, 1, 3, 3), ignore_index=3,
                                                    reduction="none"), [a(X)]),
    ("nll_unbatched", lambda T, x: F(T).nll_loss(x, T.tensor(2), reduction="none"), [a(V)]),
    # PyTorch's backward rejects this target shape, so compare the forward only
    ("nll_unbatched_1", lambda T, x: F(T).nll_loss(x, T.tensor([2])), [a(V, grad=False)]),
    ("nll_3d_none", lambda T, x: F(T).nll_loss(x, T.tensor([[0, 1], [2, 1]]), reduction="none"),
     [a((2, 3, 2))]),
    ("nll_5d_none_weight", lambda T, x, w: F(T).nll_loss(
        x, T.tensor([[[[0], [1]]], [[[2], [0]]]]), w, reduction="none"),
     [a((2, 3, 1, 2, 1)), a((3,), "pos", False)]),
    ("nll2d_weight_ignore", lambda T, x, w: F(T).nll_loss(
        x, T.tensor([[[0, 1], [2, 1]], [[1, 1], [0, 2]]]), w, ignore_index=1),
     [a((2, 3, 2, 2)), a((3,), "pos", False)]),
    ("nll_empty", lambda T, x: F(T).nll_loss(x, T.zeros(0, dtype=T.int64)), [a((0, 5))]),
    ("ce_unbatched", lambda T, x: F(T).cross_entropy(x, T.tensor(2)), [a(V)]),
    ("ce_3d_none", lambda T, x: F(T).cross_entropy(x, T.tensor([[0, 1], [2, 1]]),
                                                   reduction="none"), [a((2, 3, 2))]),
    ("ce_4d_weight", lambda T, x, w: F(T).cross_entropy(
        x, T.tensor([[[0, 1], [2, 1]], [[1, 1], [0, 2]]]), w),
     [a((2, 3, 2, 2)), a((3,), "pos", False)]),
    ("ce_smoothing", lambda T, x: F(T).cross_entropy(x, idx(T, 1, -100, 3),
                                                     label_smoothing=0.2), [a(X)]),
    ("ce_smoothing_none", lambda T, x: F(T).cross_entropy(
        x, idx(T, 1, -100, 3), reduction="none", label_smoothing=0.2), [a(X)]),
    ("ce_smoothing_weight", lambda T, x, w: F(T).cross_entropy(
        x, idx(T, 1, -100, 3), w, label_smoothing=0.3), [a(X), W5]),
    ("ce_smoothing_weight_none", lambda T, x, w: F(T).cross_entropy(
        x, idx(T, 1, 0, 3), w, reduction="none", label_smoothing=0.3), [a(X), W5]),
    ("ce_smoothing_4d", lambda T, x: F(T).cross_entropy(
        x, T.tensor([[[0, 1], [2, 1]], [[1, 1], [0, 2]]]), label_smoothing=0.1),
     [a((2, 3, 2, 2))]),
    ("ce_probs_weight_none", lambda T, x, y, w: F(T).cross_entropy(x, y, w, reduction="none"),
     [a(X), a(X, "pos"), W5]),
    ("ce_probs_smoothing", lambda T, x, y: F(T).cross_entropy(x, y, label_smoothing=0.3),
     [a(X), a(X, "pos")]),
    ("ce_probs_mixed", lambda T, x, y: F(T).cross_entropy(x, y.double()), [a(X), a(X, "pos")]),
    ("kl_batchmean", lambda T, x, y: F(T).kl_div(x, y, reduction="batchmean"),
     [a(X), a(X, "pos")]),
    ("kl_zero_target", lambda T, x: F(T).kl_div(x, T.tensor([0., 0.5, 2.]), reduction="none"),
     [a((3,))]),
    ("poisson_full", lambda T, x, y: F(T).poisson_nll_loss(x, y * 2, full=True,
                                                           reduction="none"), [a(X), a(X, "pos")]),
    ("gaussian_var_short", lambda T, x, y, v: F(T).gaussian_nll_loss(x, y, v, reduction="none"),
     [a(X), a(X), a((3,), "pos")]),
    ("gaussian_var_one", lambda T, x, y, v: F(T).gaussian_nll_loss(x, y, v, reduction="sum"),
     [a((2, 3, 4)), a((2, 3, 4)), a((2, 1, 4), "pos")]),
    ("gaussian_var_clamped", lambda T, x, y, v: F(T).gaussian_nll_loss(x, y, v * 1e-3, eps=0.1),
     [a(X), a(X), a(X, "pos")]),
    ("legacy_size_average", lambda T, x, y: F(T).mse_loss(x, y, size_average=False),
     [a(X), a(X)]),
    ("ctc_concatenated_blank", lambda T, x: F(T).ctc_loss(
        x, T.tensor([1, 2, 2, 0, 0]), T.tensor([6, 5]), T.tensor([3, 2]), blank=3), [a((6, 2, 4))]),
    # batch: a normal sample, one without alignment (inf), an empty target, an empty input
    ("ctc_edge_cases", lambda T, x: F(T).ctc_loss(
        x, T.tensor([[1, 2, 2], [3, 3, 0], [1, 1, 1], [2, 2, 2]]), [6, 2, 4, 0], [3, 2, 0, 0],
        reduction="none"), [a((6, 4, 4))]),
    ("ctc_zero_infinity", lambda T, x: F(T).ctc_loss(
        x, T.tensor([[1, 2, 2], [3, 3, 0], [1, 1, 1], [2, 2, 2]]), [6, 2, 4, 0], [3, 2, 0, 0],
        zero_infinity=True), [a((6, 4, 4))]),
    ("ctc_unbatched", lambda T, x: F(T).ctc_loss(
        x, T.tensor([1, 1]), T.tensor(5), T.tensor(2), reduction="none"), [a((6, 4))]),
    ("ctc_log_softmax", lambda T, x: F(T).ctc_loss(
        log_softmax(T, x, 2), T.tensor([[1, 2, 2], [3, 3, 0]]), [6, 5], [3, 2]),
     [A((6, 2, 4), "float64")]),
]


@pytest.mark.parametrize("name,fn,specs", cases(OPTIONS))
def test_loss_options(name, fn, specs):
    inputs = [s if isinstance(s, A) else A(s[0], "float32", s[1], s[2]) for s in specs]
    # a float32 intermediate promoted to float64 carries float32 rounding
    rtol = 1e-6 if name.endswith("_mixed") else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_op(name, fn, inputs, rtol=rtol)


# ------------------------------------------------------------------------------------------------
# Finite differences in float64
# ------------------------------------------------------------------------------------------------

def _probs(x):
    return tl.special.softmax(x, 1)


GRADCHECK = [
    # name, fn(x, y) on float64 [3, 5] leaves x (any) and y (in (0.1, 0.9))
    ("binary_cross_entropy", lambda x, y: F(tl).binary_cross_entropy(y, _probs(x))),
    ("bce_with_logits", lambda x, y: F(tl).binary_cross_entropy_with_logits(
        x, y, pos_weight=tl.tensor([1., 2, 3, 4, 5], dtype=tl.float64))),
    ("cross_entropy_smoothed", lambda x, y: F(tl).cross_entropy(
        x, tl.tensor([1, 0, -100]), label_smoothing=0.3)),
    ("kl_div", lambda x, y: F(tl).kl_div(x, y, reduction="batchmean")),
    ("gaussian_nll_loss", lambda x, y: F(tl).gaussian_nll_loss(x, x * 0.5, y)),
]


@pytest.mark.parametrize("name,fn", cases(GRADCHECK))
def test_gradcheck(name, fn):
    rng = np.random.default_rng(seed_of(name))
    x = tl.tensor(rng.uniform(-1, 1, X), dtype=tl.float64, requires_grad=True)
    y = tl.tensor(rng.uniform(0.1, 0.9, X), dtype=tl.float64, requires_grad=True)
    assert tl.autograd.gradcheck(fn, (x, y))


def test_gradcheck_ctc():
    # PyTorch's ctc gradient is the one w.r.t. the logits of log_softmax (see loss_ctc.py)
    rng = np.random.default_rng(seed_of("ctc"))
    x = tl.tensor(rng.uniform(-1, 1, (6, 2, 4)), dtype=tl.float64, requires_grad=True)
    assert tl.autograd.gradcheck(lambda x: F(tl).ctc_loss(
        log_softmax(tl, x, 2), tl.tensor([[1, 2, 2], [3, 3, 0]]), [6, 5], [3, 2]), (x,))


# ------------------------------------------------------------------------------------------------
# Errors: PyTorch's exception types and wording
# ------------------------------------------------------------------------------------------------

def _x(T, *shape, dtype=None):
    return T.linspace(0.1, 0.9, int(np.prod(shape)), dtype=dtype).reshape(shape)


def _lp(T):
    return T.zeros(5, 2, 4)


ERRORS = [
    # name, fn(T), message pattern
    ("ce_batch", lambda T: F(T).cross_entropy(_x(T, 3, 5), idx(T, 1, 0)),
     r"Expected input batch_size \(3\) to match target batch_size \(2\)\."),
    ("nll_batch", lambda T: F(T).nll_loss(_x(T, 3, 5), idx(T, 1, 0)),
     r"Expected input batch_size \(3\) to match target batch_size \(2\)\."),
    ("nll3d_batch", lambda T: F(T).nll_loss(_x(T, 2, 3, 4), T.zeros(3, 4, dtype=T.int64)),
     r"Expected input batch_size \(2\) to match target batch_size \(3\)\."),
    ("ce_out_of_bounds", lambda T: F(T).cross_entropy(_x(T, 3, 5), idx(T, 1, 0, 5)),
     r"^Target 5 is out of bounds\.$"),
    ("ce_negative_target", lambda T: F(T).cross_entropy(_x(T, 3, 5), idx(T, 1, -1, 2)),
     r"Target -1 is out of bounds\."),
    ("nll_out_of_bounds_none", lambda T: F(T).nll_loss(_x(T, 3, 5), idx(T, 7, 0, 1),
                                                       reduction="none"),
     r"Target 7 is out of bounds\."),
    ("nll2d_out_of_bounds", lambda T: F(T).nll_loss(_x(T, 2, 3, 2, 2),
                                                    T.full((2, 2, 2), 5)),
     r"Target 5 is out of bounds\."),
    ("ce_smoothing_out_of_bounds", lambda T: F(T).cross_entropy(
        _x(T, 3, 5), idx(T, 1, 2, 7), label_smoothing=0.2), r"Target 7 is out of bounds\."),
    ("ce_float_target", lambda T: F(T).cross_entropy(_x(T, 3, 5), T.tensor([1., 0., 4.])),
     r"expected target dtype to be Long or Byte, but got Float"),
    ("ce_int32_target", lambda T: F(T).cross_entropy(_x(T, 3, 5), T.tensor([1, 0, 4],
                                                                           dtype=T.int32)),
     r"expected target dtype to be Long or Byte, but got Int"),
    ("nll2d_float_target", lambda T: F(T).nll_loss(_x(T, 2, 3, 2, 2), T.zeros(2, 2, 2)),
     r"expected target dtype to be Long or Byte, but got Float"),
    ("ce_int_prob_target", lambda T: F(T).cross_entropy(_x(T, 3, 5),
                                                        T.zeros(3, 5, dtype=T.int64)),
     r"Expected floating point type for target with class probabilities, got Long"),
    ("ce_probs_ignore_index", lambda T: F(T).cross_entropy(_x(T, 3, 5), _x(T, 3, 5),
                                                           ignore_index=1),
     r"ignore_index is not supported for floating point target"),
    ("ce_bad_reduction", lambda T: F(T).cross_entropy(_x(T, 3, 5), idx(T, 1, 0, 4),
                                                      reduction="foo"),
     r"^foo is not a valid value for reduction$"),
    ("mse_bad_reduction", lambda T: F(T).mse_loss(_x(T, 3), _x(T, 3), reduction="avg"),
     r"avg is not a valid value for reduction"),
    ("kl_bad_reduction", lambda T: F(T).kl_div(_x(T, 3), _x(T, 3), reduction="foo"),
     r"foo is not a valid value for reduction"),
    ("ctc_bad_reduction", lambda T: F(T).ctc_loss(_lp(T), T.ones(2, 2, dtype=T.int64),
                                                  [5, 5], [2, 2], reduction="foo"),
     r"foo is not a valid value for reduction"),
    ("gaussian_bad_reduction", lambda T: F(T).gaussian_nll_loss(
        _x(T, 3), _x(T, 3), _x(T, 3), reduction="foo"), r"^foo is not valid$"),
    ("mse_weight_bad_reduction", lambda T: F(T).mse_loss(
        _x(T, 3), _x(T, 3), reduction="foo", weight=_x(T, 3)), r"Invalid reduction mode: foo"),
    ("ce_weight_size", lambda T: F(T).cross_entropy(_x(T, 3, 5), idx(T, 1, 0, 4),
                                                    weight=T.ones(4)),
     r"weight tensor should be defined either for all 5 classes or no classes but got weight "
     r"tensor of shape: \[4\]"),
    ("nll_weight_2d", lambda T: F(T).nll_loss(_x(T, 3, 5), idx(T, 1, 0, 4),
                                              weight=T.ones(5, 1)),
     r"but got weight tensor of shape: \[5, 1\]"),
    ("ce_probs_weight_size", lambda T: F(T).cross_entropy(_x(T, 3, 5), _x(T, 3, 5),
                                                          weight=T.ones(4)),
     r"^cross_entropy: weight tensor should be defined either for all 5 classes"),
    ("nll2d_weight_size", lambda T: F(T).nll_loss(
        _x(T, 2, 3, 2, 2), T.zeros(2, 2, 2, dtype=T.int64), weight=T.ones(4)),
     r"weight tensor should be defined either for all or no classes"),
    ("ce_weight_dtype", lambda T: F(T).cross_entropy(_x(T, 3, 5), idx(T, 1, 0, 4),
                                                     weight=T.ones(5, dtype=T.float64)),
     r"expected scalar type Float but found Double"),
    ("nll_weight_requires_grad", lambda T: F(T).nll_loss(
        _x(T, 3, 5), idx(T, 1, 0, 4), weight=T.ones(5, requires_grad=True)),
     r"The function 'nll_loss_forward' is not differentiable with respect to argument "
     r"'weight'\. This input cannot have requires_grad True\."),
    ("ce_smoothing_range", lambda T: F(T).cross_entropy(_x(T, 3, 5), idx(T, 1, 0, 4),
                                                        label_smoothing=1.5),
     r"label_smoothing must be between 0\.0 and 1\.0\. Got: 1\.5"),
    ("ce_int_input", lambda T: F(T).cross_entropy(T.ones(3, 5, dtype=T.int64), idx(T, 1, 0, 4)),
     r'"log_softmax_lastdim_kernel_impl" not implemented for \'Long\''),
    ("nll_0d_input", lambda T: F(T).nll_loss(T.tensor(1.), T.tensor(0)),
     r"Expected 1 or more dimensions \(got 0\)"),
    ("nll_1d_target_size", lambda T: F(T).nll_loss(_x(T, 5), idx(T, 2, 1)),
     r"For 1D input, 1D target must have size 1, but got target size: 2"),
    ("nll_2d_target", lambda T: F(T).nll_loss(_x(T, 3, 5), T.zeros(3, 2, dtype=T.int64)),
     r"0D or 1D target tensor expected, multi-target not supported"),
    ("nll2d_target_dims", lambda T: F(T).nll_loss(_x(T, 2, 3, 2, 2),
                                                  T.zeros(2, 4, dtype=T.int64)),
     r"only batches of spatial targets supported \(3D tensors\) but got targets of "
     r"dimension: 2"),
    ("nll2d_size_mismatch", lambda T: F(T).nll_loss(_x(T, 2, 3, 2, 2),
                                                    T.zeros(2, 2, 3, dtype=T.int64)),
     r"size mismatch \(got input: \[2, 3, 2, 2\] , target: \[2, 2, 3\]"),
    ("nll3d_target_size", lambda T: F(T).nll_loss(_x(T, 2, 3, 4), T.zeros(2, 5, dtype=T.int64)),
     r"Expected target size \[2, 4\], got \[2, 5\]"),
    ("bce_size", lambda T: F(T).binary_cross_entropy(_x(T, 3, 5), _x(T, 3, 1)),
     r"Using a target size \(torch\.Size\(\[3, 1\]\)\) that is different to the input size "
     r"\(torch\.Size\(\[3, 5\]\)\) is deprecated\. Please ensure they have the same size\."),
    ("bce_input_range", lambda T: F(T).binary_cross_entropy(_x(T, 3) + 1, _x(T, 3)),
     r"all elements of input should be between 0 and 1"),
    ("bce_target_range", lambda T: F(T).binary_cross_entropy(_x(T, 3), _x(T, 3) * 2),
     r"all elements of target should be between 0 and 1"),
    ("bce_dtype", lambda T: F(T).binary_cross_entropy(_x(T, 3), _x(T, 3, dtype=T.float64)),
     r"Found dtype Double but expected Float"),
    ("bce_weight_broadcast", lambda T: F(T).binary_cross_entropy(_x(T, 3, 5), _x(T, 3, 5),
                                                                 weight=T.ones(4)), None),
    ("bce_weight_requires_grad", lambda T: F(T).binary_cross_entropy(
        _x(T, 3), _x(T, 3), weight=T.ones(3, requires_grad=True)),
     r"'binary_cross_entropy' is not differentiable with respect to argument 'weight'"),
    ("bce_logits_size", lambda T: F(T).binary_cross_entropy_with_logits(_x(T, 3, 5),
                                                                        _x(T, 3, 1)),
     r"Target size \(torch\.Size\(\[3, 1\]\)\) must be the same as input size "
     r"\(torch\.Size\(\[3, 5\]\)\)"),
    ("bce_logits_pos_weight_grad", lambda T: F(T).binary_cross_entropy_with_logits(
        _x(T, 3), _x(T, 3), pos_weight=T.ones(3, requires_grad=True)),
     r"not differentiable with respect to argument 'pos_weight'"),
    ("bce_logits_pos_weight_shape", lambda T: F(T).binary_cross_entropy_with_logits(
        _x(T, 3, 5), _x(T, 3, 5), pos_weight=T.ones(4)), None),
    ("mse_no_broadcast", lambda T: F(T).mse_loss(_x(T, 3, 5), _x(T, 3, 4)),
     r"The size of tensor a \(5\) must match the size of tensor b \(4\) at non-singleton "
     r"dimension 1"),
    ("mse_int", lambda T: F(T).mse_loss(T.ones(3, dtype=T.int64), T.ones(3, dtype=T.int64)),
     r'"mse_cpu" not implemented for \'Long\''),
    ("l1_int_mean", lambda T: F(T).l1_loss(T.ones(3, dtype=T.int64), T.ones(3, dtype=T.int64)),
     r"mean\(\): could not infer output dtype"),
    ("mse_weight_size", lambda T: F(T).mse_loss(_x(T, 3, 5), _x(T, 3, 5), weight=T.ones(5)),
     r"Weights and input must have the same size\."),
    ("smooth_l1_negative_beta", lambda T: F(T).smooth_l1_loss(_x(T, 3), _x(T, 3), beta=-1.0),
     r"smooth_l1_loss does not support negative values for beta\."),
    ("huber_zero_delta", lambda T: F(T).huber_loss(_x(T, 3), _x(T, 3), delta=0.0),
     r"huber_loss does not support non-positive values for delta\."),
    ("gaussian_negative_var", lambda T: F(T).gaussian_nll_loss(_x(T, 3), _x(T, 3), -_x(T, 3)),
     r"var has negative entry/entries"),
    ("gaussian_negative_float", lambda T: F(T).gaussian_nll_loss(_x(T, 3), _x(T, 3), -1.0),
     r"var has negative entry/entries"),
    ("gaussian_int_var", lambda T: F(T).gaussian_nll_loss(_x(T, 3), _x(T, 3), 1), None),
    ("gaussian_var_size", lambda T: F(T).gaussian_nll_loss(_x(T, 3, 5), _x(T, 3, 5),
                                                           T.ones(3, 4)),
     r"var is of incorrect size"),
    ("gaussian_var_two_dims", lambda T: F(T).gaussian_nll_loss(
        _x(T, 2, 3, 4), _x(T, 2, 3, 4), T.ones(1, 1, 4)), r"var is of incorrect size"),
    ("ctc_input_length", lambda T: F(T).ctc_loss(_lp(T), T.ones(2, 2, dtype=T.int64),
                                                 [5, 6], [2, 2]),
     r"Expected input_lengths to have value at most 5, but got value 6"),
    ("ctc_lengths_size", lambda T: F(T).ctc_loss(_lp(T), T.ones(2, 2, dtype=T.int64),
                                                 [5], [2, 2]),
     r"input_lengths must be of size batch_size"),
    ("ctc_padded_too_short", lambda T: F(T).ctc_loss(_lp(T), T.ones(2, 2, dtype=T.int64),
                                                     [5, 5], [2, 3]),
     r"Expected tensor to have size at least 3 at dimension 1, but got size 2 for argument "
     r"#2 'targets'"),
    ("ctc_concatenated_size", lambda T: F(T).ctc_loss(_lp(T), T.ones(3, dtype=T.int64),
                                                      [5, 5], [2, 2]),
     r"Expected tensor to have size 4 at dimension 0, but got size 3 for argument #2 "
     r"'targets'"),
    ("ctc_blank", lambda T: F(T).ctc_loss(_lp(T), T.ones(2, 2, dtype=T.int64), [5, 5], [2, 2],
                                          blank=4), r"blank must be in label range"),
    ("ctc_negative_target_length", lambda T: F(T).ctc_loss(
        _lp(T), T.ones(2, 2, dtype=T.int64), [5, 5], [2, -1]),
     r"Expected target_lengths to have value at least 0, but got value -1"),
    ("ctc_log_probs_dims", lambda T: F(T).ctc_loss(T.zeros(5), T.ones(2, dtype=T.int64), [5],
                                                   [2]),
     r"Expected 3-dimensional tensor, but got 2-dimensional tensor for argument #1 'log_probs'"),
    ("ctc_targets_dims", lambda T: F(T).ctc_loss(_lp(T), T.ones(2, 2, 2, dtype=T.int64),
                                                 [5, 5], [2, 2]),
     r"Expected 1 to 2 dimensions, but got 3-dimensional tensor for argument #2 'targets'"),
    ("ctc_targets_batch", lambda T: F(T).ctc_loss(_lp(T), T.ones(3, 2, dtype=T.int64),
                                                  [5, 5], [2, 2]),
     r"Expected tensor to have size 2 at dimension 0, but got size 3 for argument #2 "
     r"'targets'"),
    ("ctc_int_log_probs", lambda T: F(T).ctc_loss(T.zeros(5, 2, 4, dtype=T.int64),
                                                  T.ones(2, 2, dtype=T.int64), [5, 5], [2, 2]),
     r'"ctc_loss_cpu" not implemented for \'Long\''),
    ("ctc_mixed_lengths", lambda T: F(T).ctc_loss(_lp(T), T.ones(2, 2, dtype=T.int64), [5, 5],
                                                  T.tensor([2, 2])), None),
    ("ctc_float_lengths", lambda T: F(T).ctc_loss(
        _lp(T), T.ones(2, 2, dtype=T.int64), T.tensor([5., 3.]), T.tensor([2, 2])),
     r"input_lengths must be integral"),
]


@pytest.mark.parametrize("name,fn,match", cases(ERRORS))
def test_errors(name, fn, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both(fn, match=match, raises=True)


# ------------------------------------------------------------------------------------------------
# Warnings: the deprecated arguments, kl_div's 'mean', broadcasting targets
# ------------------------------------------------------------------------------------------------

WARNINGS = [
    # name, fn(T, x, y) with x, y float [3, 5]
    ("size_average", lambda T, x, y: F(T).mse_loss(x, y, size_average=False)),
    ("reduce", lambda T, x, y: F(T).l1_loss(x, y, reduce=False)),
    ("both_legacy", lambda T, x, y: F(T).binary_cross_entropy_with_logits(x, y, None, True,
                                                                          False)),
    ("nll_legacy", lambda T, x, y: F(T).nll_loss(x, idx(T, 1, 0, 4), size_average=True)),
    ("elementwise_mean", lambda T, x, y: F(T).smooth_l1_loss(x, y, reduction="elementwise_mean")),
    ("kl_mean", lambda T, x, y: F(T).kl_div(x, y)),
    ("kl_batchmean", lambda T, x, y: F(T).kl_div(x, y, reduction="batchmean")),
    ("target_size", lambda T, x, y: F(T).mse_loss(x, y[:1])),
    ("target_size_huber", lambda T, x, y: F(T).huber_loss(x[:, :1], y)),
    ("no_warning", lambda T, x, y: F(T).cross_entropy(x, y)),
]


@pytest.mark.parametrize("name,fn", cases(WARNINGS))
def test_warnings(name, fn):
    rng = np.random.default_rng(seed_of(name))
    x, y = rng.uniform(0.1, 0.9, X), rng.uniform(0.1, 0.9, X)

    def go(T):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = fn(T, T.tensor(x), T.tensor(y))
        return [str(w.message) for w in caught], out

    both(go)


# ------------------------------------------------------------------------------------------------
# Traced: the same code under jax.jit (eager-only value checks skipped), backward under jit
# ------------------------------------------------------------------------------------------------

def _traced_losses(x, y, p, v, lp, tg, il, tln):
    f = F(tl)
    return (f.cross_entropy(x, y) + f.nll_loss(x, y, reduction="sum")
            + f.cross_entropy(x, y, label_smoothing=0.1) + f.binary_cross_entropy(p, v)
            + f.gaussian_nll_loss(x, x * 0.5, v) + f.ctc_loss(lp, tg, il, tln)
            + f.ctc_loss(lp, tg, il, tln, reduction="sum"))


def test_traced_matches_eager():
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(X), np.array([1, 0, 4]), rng.uniform(0.1, 0.9, X),
              rng.uniform(0.1, 0.9, X), rng.standard_normal((6, 2, 4)),
              np.array([1, 2, 2, 1, 3]), np.array([6, 5]), np.array([3, 2])]
    eager = _traced_losses(*[tl.tensor(v) for v in arrays])
    with jax.enable_x64(True):   # its JAX code reads 64-bit data
        traced = jax.jit(to_jax_function(_traced_losses))(*arrays)
    np.testing.assert_allclose(np.asarray(traced), eager.numpy(), rtol=1e-12)


def test_backward_under_jit():
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(X), np.array([1, 0, 4])

    def grads(x_arr, y_arr):
        xt = tl.Tensor._wrap(x_arr).requires_grad_(True)
        target = tl.Tensor._wrap(y_arr)
        loss = F(tl).cross_entropy(xt, target, label_smoothing=0.2) + F(tl).ctc_loss(
            log_softmax(tl, xt.unsqueeze(1), 2), target.unsqueeze(0), [3], [3])
        loss.backward()
        return xt.grad._value()

    xt = torch.tensor(x, requires_grad=True)
    target = torch.tensor(y)
    (torch.nn.functional.cross_entropy(xt, target, label_smoothing=0.2)
     + torch.nn.functional.ctc_loss(xt.unsqueeze(1).log_softmax(2), target.unsqueeze(0), [3],
                                    [3])).backward()
    with jax.enable_x64(True):   # its JAX code reads 64-bit data
        got = jax.jit(grads)(x, y)
    np.testing.assert_allclose(np.asarray(got), xt.grad.numpy(), rtol=1e-10)


def test_double_backward():
    """create_graph through the one-node losses: the gradient of the gradient matches torch."""
    def go(T):
        x = T.tensor([[0.3, -1.2, 0.8], [1.5, 0.1, -0.4]], dtype=T.float64, requires_grad=True)
        y = T.tensor([[0.2, 0.9, 0.4], [0.7, 0.1, 0.5]], dtype=T.float64)
        f = F(T)
        loss = (f.mse_loss(x, y) + f.binary_cross_entropy_with_logits(x, y)
                + f.cross_entropy(x, T.tensor([2, 0])))
        (g,) = T.autograd.grad(loss, x, create_graph=True)
        (gg,) = T.autograd.grad((g * g).sum(), x)
        return g.detach(), gg

    both(go)
