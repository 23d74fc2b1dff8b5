"""Parity rows for the ``torchlike.nn`` layers and ``torchlike.nn.functional`` functions added to
reach PyTorch's namespaces, against real torch: lazy layers, fractional max pooling, adaptive
softmax, CrossMapLRN2d, linear cross entropy, SyncBatchNorm, conv_tbc, grouped_mm and helpers.
"""
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl

from parity import A, assert_same, both, cases, check_op, same


def _copy_params(src, dst):
    """Load torch module ``src``'s state into torchlike module ``dst`` (same names)."""
    dst.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in src.state_dict().items()})


def _pair_run(make, inputs, call=lambda m, *xs: m(*xs)):
    """Build the layer in both libraries (torchlike's takes torch's parameters), run ``call`` on
    the same inputs, backprop the sum; return the outputs and the input and parameter grads."""
    def run(T, m):
        xs = [T.tensor(x, requires_grad=np.issubdtype(x.dtype, np.floating)) for x in inputs]
        out = call(m, *xs)
        first = out[0] if isinstance(out, tuple) else out
        first.sum().backward()
        grads = [x.grad for x in xs if x.requires_grad]
        return [first.detach(), grads, [p.grad for p in m.parameters()]]
    mt, ml = make(torch), make(tl)
    _copy_params(mt, ml)
    assert_same(run(torch, mt), run(tl, ml))
    return mt, ml


# ------------------------------------------------------------------------------------------------
# Lazy layers: in_channels / num_features from the first input
# ------------------------------------------------------------------------------------------------

LAZY = [
    # name, make(T), input shape
    ("LazyConv1d", lambda T: T.nn.LazyConv1d(4, 3), (2, 3, 8)),
    ("LazyConv2d", lambda T: T.nn.LazyConv2d(4, 3, padding=1, bias=False), (2, 3, 5, 5)),
    ("LazyConv3d", lambda T: T.nn.LazyConv3d(2, 2, groups=1), (1, 3, 4, 4, 4)),
    ("LazyConvTranspose1d", lambda T: T.nn.LazyConvTranspose1d(4, 3, stride=2), (2, 3, 8)),
    ("LazyConvTranspose2d", lambda T: T.nn.LazyConvTranspose2d(4, 3), (3, 5, 5)),
    ("LazyConvTranspose3d", lambda T: T.nn.LazyConvTranspose3d(2, 2, groups=1), (1, 2, 3, 3, 3)),
    ("LazyBatchNorm1d", lambda T: T.nn.LazyBatchNorm1d(), (4, 3)),
    ("LazyBatchNorm2d", lambda T: T.nn.LazyBatchNorm2d(affine=False), (2, 3, 4, 4)),
    ("LazyBatchNorm3d", lambda T: T.nn.LazyBatchNorm3d(momentum=None), (2, 3, 2, 2, 2)),
    ("LazyInstanceNorm1d", lambda T: T.nn.LazyInstanceNorm1d(), (2, 3, 5)),
    ("LazyInstanceNorm2d", lambda T: T.nn.LazyInstanceNorm2d(affine=False,
                                                             track_running_stats=False),
     (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", lambda T: T.nn.LazyInstanceNorm3d(), (2, 3, 2, 2, 2)),
]


@pytest.mark.filterwarnings("ignore:input's size at dim=1 does not match num_features")
@pytest.mark.parametrize("name,make,shape", cases(LAZY))
def test_lazy_layers(name, make, shape):
    """Before the first input: repr, state_dict of uninitialized entries; after: the layer it
    becomes, its parameter shapes and, with torch's initial values, its output."""
    mt, ml = make(torch), make(tl)
    assert repr(ml) == repr(mt)
    assert {k: repr(v) for k, v in ml.state_dict().items()} == \
        {k: repr(v) for k, v in mt.state_dict().items()}
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    mt(torch.tensor(x))
    ml(tl.tensor(x))
    assert type(ml).__name__ == type(mt).__name__ and repr(ml) == repr(mt)
    assert [(k, tuple(v.shape)) for k, v in ml.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in mt.state_dict().items()]
    # a lazy layer takes its shapes (here torch's initial values) from a state_dict; its
    # num_features / in_channels stay 0 (PyTorch's lazy InstanceNorm then refuses the input)
    source, loaded_t, loaded_l = make(torch), make(torch), make(tl)
    source(torch.tensor(x))
    loaded_t.load_state_dict(source.state_dict())
    _copy_params(source, loaded_l)
    both(lambda T: (loaded_t if T is torch else loaded_l)(T.tensor(x)), raises=None)


def test_lazy_errors():
    same(lambda T: T.nn.LazyConv2d(4, 3)(T.ones(3, 4)), raises=True)
    same(lambda T: T.nn.LazyConv1d(4, 3, groups=2)(T.ones(2, 3, 8)), raises=True)


def test_uninitialized_buffer():
    def go(T):
        m = T.nn.Module()
        m.stat = T.nn.UninitializedBuffer()
        before = (repr(m.stat), list(m._buffers), T.nn.parameter.is_lazy(m.stat))
        m.stat.materialize((2, 3))
        return before, type(m.stat).__name__, tuple(m.stat.shape), list(m.state_dict())
    both(go)


# ------------------------------------------------------------------------------------------------
# Fractional max pooling
# ------------------------------------------------------------------------------------------------

_S2 = [[[0.3, 0.8], [0.5, 0.05], [0.99, 0.0]], [[0.1, 0.55], [0.7, 0.2], [0.35, 0.65]]]
_S3 = [[[0.2, 0.5, 0.9], [0.1, 0.3, 0.7]]]


def _F(T):
    return T.nn.functional


FRACTIONAL = [
    ("2d", lambda T, x: _F(T).fractional_max_pool2d(
        x, 2, output_size=(3, 4), _random_samples=T.tensor(_S2)), [A((2, 3, 7, 9))]),
    ("2d_ratio_indices", lambda T, x: list(_F(T).fractional_max_pool2d(
        x, (3, 2), output_ratio=(0.5, 0.5), return_indices=True,
        _random_samples=T.tensor(_S2, dtype=T.float64))), [A((2, 3, 8, 9), "float64")]),
    ("2d_unbatched", lambda T, x: _F(T).fractional_max_pool2d(
        x, 2, output_size=3, _random_samples=T.tensor(_S2[:1])), [A((3, 7, 9))]),
    ("2d_one_output", lambda T, x: _F(T).fractional_max_pool2d(
        x, 2, output_size=1, _random_samples=T.tensor(_S2)), [A((2, 3, 4, 5))]),
    ("3d_with_indices", lambda T, x: list(_F(T).fractional_max_pool3d_with_indices(
        x, 2, output_size=(3, 4, 2), _random_samples=T.tensor(_S3))), [A((1, 2, 5, 6, 7))]),
    ("3d_ratio", lambda T, x: _F(T).fractional_max_pool3d(
        x, (2, 3, 2), output_ratio=0.5, _random_samples=T.tensor(_S3)), [A((1, 2, 6, 8, 7))]),
    ("2d_with_indices", lambda T, x: list(_F(T).fractional_max_pool2d_with_indices(
        x, 2, output_size=(3, 4), _random_samples=T.tensor(_S2))), [A((2, 3, 7, 9))]),
    ("module_2d", lambda T, x: T.nn.FractionalMaxPool2d(
        2, output_size=(3, 4), _random_samples=T.tensor(_S2))(x), [A((2, 3, 7, 9))]),
    ("module_3d", lambda T, x: list(T.nn.FractionalMaxPool3d(
        2, output_ratio=(0.5, 0.6, 0.4), return_indices=True,
        _random_samples=T.tensor(_S3))(x)), [A((1, 2, 6, 5, 7))]),
]


@pytest.mark.parametrize("name,fn,inputs", cases(FRACTIONAL))
def test_fractional_max_pool(name, fn, inputs):
    check_op(name, fn, inputs)


def test_fractional_max_pool_values():
    nan = float("nan")
    both(lambda T: list(_F(T).fractional_max_pool2d(
        T.tensor([[[[1., nan, 3.], [nan, 2., 0.], [1., 1., 1.]]]]), 2, output_size=2,
        return_indices=True, _random_samples=T.tensor([[[0.5, 0.5]]]))))
    both(lambda T: [repr(T.nn.FractionalMaxPool2d(3, output_ratio=0.5)),
                    list(T.nn.FractionalMaxPool2d(3, output_size=2)._buffers)])


def test_fractional_max_pool_draws_samples():
    """Without _random_samples every call draws its windows (from torchlike's generator): the
    shape is right and every value is the maximum of some window."""
    tl.manual_seed(0)
    x = tl.arange(2 * 3 * 9 * 9, dtype=tl.float32).reshape(2, 3, 9, 9)
    y, idx = tl.nn.functional.fractional_max_pool2d(x, 2, output_size=4, return_indices=True)
    assert tuple(y.shape) == (2, 3, 4, 4)
    np.testing.assert_array_equal(
        np.take_along_axis(x.numpy().reshape(2, 3, -1), idx.numpy().reshape(2, 3, -1), -1),
        y.numpy().reshape(2, 3, -1))


FRACTIONAL_ERRORS = [
    ("no_size", lambda T: _F(T).fractional_max_pool2d(T.ones(1, 1, 5, 5), 2)),
    ("float_ratio", lambda T: _F(T).fractional_max_pool2d(T.ones(1, 1, 5, 5), 2,
                                                          output_ratio=0.5)),
    ("too_large", lambda T: _F(T).fractional_max_pool2d(T.ones(2, 3, 7, 9), 2,
                                                        output_size=(7, 4))),
    ("samples_channels", lambda T: _F(T).fractional_max_pool2d(
        T.ones(2, 3, 7, 9), 2, output_size=(3, 4), _random_samples=T.ones(2, 2, 2) / 2)),
    ("samples_dims", lambda T: _F(T).fractional_max_pool2d(
        T.ones(2, 3, 7, 9), 2, output_size=(3, 4), _random_samples=T.ones(2, 3, 3) / 2)),
    ("samples_dtype", lambda T: _F(T).fractional_max_pool2d(
        T.ones(2, 3, 7, 9), 2, output_size=(3, 4),
        _random_samples=T.ones(2, 3, 2, dtype=T.float64) / 2)),
    ("int_input", lambda T: _F(T).fractional_max_pool2d(T.ones(1, 1, 5, 5, dtype=T.int64), 2,
                                                        output_size=3)),
    ("3d_no_size", lambda T: _F(T).fractional_max_pool3d(T.ones(1, 1, 5, 5, 5), 2)),
    ("module_no_size", lambda T: T.nn.FractionalMaxPool2d(2)),
    ("module_both", lambda T: T.nn.FractionalMaxPool3d(2, output_size=3, output_ratio=0.5)),
    ("module_ratio", lambda T: T.nn.FractionalMaxPool2d(2, output_ratio=1.5)),
]


@pytest.mark.parametrize("name,fn", cases(FRACTIONAL_ERRORS))
def test_fractional_max_pool_errors(name, fn):
    same(fn, raises=True)


# ------------------------------------------------------------------------------------------------
# AdaptiveLogSoftmaxWithLoss, CrossMapLRN2d, SyncBatchNorm
# ------------------------------------------------------------------------------------------------

def test_adaptive_log_softmax():
    x = np.random.default_rng(0).standard_normal((5, 8)).astype(np.float32)
    target = np.array([0, 4, 9, 2, 7])

    def make(T):
        return T.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0, head_bias=True)
    mt, ml = _pair_run(make, [x, target], lambda m, x, t: m(x, t))
    assert repr(ml) == repr(mt)

    def extras(T, m):
        xs = T.tensor(x)
        return [m(xs, T.tensor(target)).loss, m.log_prob(xs), m.predict(xs),
                m(xs[0], T.tensor(9)).output, type(m(xs, T.tensor(target))).__name__]
    assert_same(extras(torch, mt), extras(tl, ml))


ADAPTIVE_ERRORS = [
    ("no_cutoffs", lambda T: T.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [])),
    ("unsorted", lambda T: T.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [6, 3])),
    ("too_large", lambda T: T.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 10])),
    ("batch", lambda T: T.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3])(T.ones(2, 8),
                                                                   T.tensor([1, 2, 3]))),
    ("input_1d", lambda T: T.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3])(T.ones(8),
                                                                      T.tensor([1]))),
    ("target_2d", lambda T: T.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3])(T.ones(2, 8),
                                                                       T.ones(2, 1).long())),
    ("target_range", lambda T: T.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3])(T.ones(2, 8),
                                                                          T.tensor([1, 12]))),
]


@pytest.mark.parametrize("name,fn", cases(ADAPTIVE_ERRORS))
def test_adaptive_log_softmax_errors(name, fn):
    same(fn, raises=True)


# (size, channels): PyTorch's own backward fails for a size of 1, or above the channel count
@pytest.mark.parametrize("size,channels", [(3, 5), (5, 7), (2, 4), (6, 4)])
def test_cross_map_lrn2d(size, channels):
    check_op(f"lrn{size}", lambda T, x: T.nn.CrossMapLRN2d(size, alpha=0.5, beta=0.75, k=1.5)(x),
             [A((2, channels, 3, 2), "float64")])


def test_cross_map_lrn2d_forms():
    check_op("lrn_default", lambda T, x: T.nn.CrossMapLRN2d(3)(x * 10), [A((1, 4, 2, 2))])
    both(lambda T: repr(T.nn.CrossMapLRN2d(3, k=2)))
    same(lambda T: T.nn.CrossMapLRN2d(3)(T.ones(5, 3, 3)), raises=True)


SYNC_BN = [
    ("train", lambda T, x: T.nn.SyncBatchNorm(3)(x), [A((4, 3, 2, 2))]),
    ("cumulative_6d", lambda T, x: T.nn.SyncBatchNorm(3, momentum=None, dtype=T.float64)(x),
     [A((2, 3, 2, 2, 2, 2), "float64")]),
    ("eval", lambda T, x: T.nn.SyncBatchNorm(3, affine=False).eval()(x), [A((4, 3))]),
]


@pytest.mark.parametrize("name,fn,inputs", cases(SYNC_BN))
def test_sync_batch_norm(name, fn, inputs):
    check_op(name, fn, inputs)


def test_sync_batch_norm_convert_and_errors():
    def go(T):
        m = T.nn.Sequential(T.nn.Conv2d(2, 3, 1), T.nn.BatchNorm2d(3),
                            T.nn.Sequential(T.nn.BatchNorm1d(3, affine=False)))
        s = T.nn.SyncBatchNorm.convert_sync_batchnorm(m)
        return (repr(s), list(s.state_dict()), s[1].weight is m[1].weight,
                s[2][0].running_mean is m[2][0].running_mean, repr(T.nn.SyncBatchNorm(3)))
    both(go)
    same(lambda T: T.nn.SyncBatchNorm(3)(T.ones(3)), raises=True)
    same(lambda T: T.nn.SyncBatchNorm(0)(T.ones(2, 0)), raises=True)


# ------------------------------------------------------------------------------------------------
# linear_cross_entropy, LinearCrossEntropyLoss, LinearCrossEntropyOptions
# ------------------------------------------------------------------------------------------------

def _t(T, v):
    return T.tensor(v)


LINEAR_CE = [
    ("mean", lambda T, x, w: _F(T).linear_cross_entropy(x, w, _t(T, [0, 2, 1, 2])),
     [A((4, 3)), A((5, 3))]),
    ("bias_sum_ignore", lambda T, x, w, b: _F(T).linear_cross_entropy(
        x, w, _t(T, [0, 2, -100, 4]), linear_bias=b, reduction="sum"),
     [A((4, 3), "float64"), A((5, 3), "float64"), A((5,), "float64")]),
    ("k_dim_smoothing", lambda T, x, w: _F(T).linear_cross_entropy(
        x, w, _t(T, [[0, 2], [1, 1], [2, 0], [1, 2]]), reduction="none", label_smoothing=0.1),
     [A((4, 3)), A((3, 2, 3))]),
    ("unbatched_weight", lambda T, x, w: _F(T).linear_cross_entropy(
        x, w, _t(T, 2), weight=T.tensor([1., 2., 0.5])), [A((3,)), A((3, 3))]),
    ("probabilities", lambda T, x, w, p: _F(T).linear_cross_entropy(x, w, p.softmax(-1)),
     [A((4, 3)), A((5, 3)), A((4, 5), grad=False)]),
    ("ignore_index", lambda T, x, w: _F(T).linear_cross_entropy(
        x, w, _t(T, [0, 2, 1, 2]), ignore_index=2), [A((4, 3)), A((5, 3))]),
]


@pytest.mark.parametrize("name,fn,inputs", cases(LINEAR_CE))
def test_linear_cross_entropy(name, fn, inputs):
    check_op(name, fn, inputs, upstream=False)


@pytest.mark.parametrize("reduction,chunking", [
    ("mean", {"batch_chunk_size": 3}), ("sum", {"chunking_method": "aspect_ratio"}),
    ("none", {"batch_chunk_size": 3})])
def test_linear_cross_entropy_chunked(reduction, chunking):
    """With options: chunks of 3 rows (or the 'aspect_ratio' pick) give the reference values
    and gradients (the graph nodes are PyTorch's custom op's, not compared)."""
    def go(T):
        x = T.tensor(np.linspace(-1, 1, 21).reshape(7, 3), dtype=T.float32, requires_grad=True)
        w = T.tensor(np.linspace(-2, 1, 15).reshape(5, 3), dtype=T.float32, requires_grad=True)
        b = T.tensor(np.linspace(0, 1, 5), dtype=T.float32, requires_grad=True)
        out = _F(T).linear_cross_entropy(
            x, w, T.tensor([0, 2, 1, -100, 4, 3, 0]), linear_bias=b,
            weight=T.tensor([1., 2., 0.5, 1., 3.]), reduction=reduction,
            options=T.nn.LinearCrossEntropyOptions(**chunking))
        out.sum().backward()
        return [out.detach(), x.grad, w.grad, b.grad]
    both(go)


def test_linear_cross_entropy_options():
    both(lambda T: [repr(T.nn.LinearCrossEntropyOptions()),
                    repr(T.nn.LinearCrossEntropyOptions()._adjust(100, 8, 50, T.float32)),
                    repr(T.nn.LinearCrossEntropyOptions(chunking_method="aspect_ratio:4",
                                                        acc_policy="balanced")._adjust(
                        64, 16, 1000, T.float32)),
                    repr(T.nn.LinearCrossEntropyOptions(batch_chunk_size=5)._adjust(
                        100, 8, 50, T.float64))])

    def warns(T):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = _F(T).linear_cross_entropy(T.ones(2, 3), T.ones(4, 3), T.tensor([1, 2]),
                                             label_smoothing=0.1,
                                             options=T.nn.LinearCrossEntropyOptions())
        return out, [str(w.message) for w in caught]
    both(warns)


LINEAR_CE_ERRORS = [
    ("input_3d", lambda T: _F(T).linear_cross_entropy(T.ones(2, 2, 3), T.ones(4, 3),
                                                      T.tensor([1, 2]))),
    ("weight_1d", lambda T: _F(T).linear_cross_entropy(T.ones(2, 3), T.ones(3),
                                                       T.tensor([1, 2]))),
    ("features", lambda T: _F(T).linear_cross_entropy(T.ones(2, 3), T.ones(4, 2),
                                                      T.tensor([1, 2]))),
    ("bias_shape", lambda T: _F(T).linear_cross_entropy(T.ones(2, 3), T.ones(4, 3),
                                                        T.tensor([1, 2]), linear_bias=T.ones(3))),
    ("k_dim_unbatched", lambda T: _F(T).linear_cross_entropy(T.ones(3), T.ones(4, 2, 3),
                                                             T.tensor([1, 2]))),
    ("probabilities_ignore", lambda T: _F(T).linear_cross_entropy(
        T.ones(2, 3), T.ones(4, 3), T.ones(2, 4) / 4, ignore_index=1)),
    ("options_policy", lambda T: T.nn.LinearCrossEntropyOptions(acc_policy="fast")),
    ("options_method", lambda T: T.nn.LinearCrossEntropyOptions(chunking_method="rows")),
    ("options_chunk", lambda T: T.nn.LinearCrossEntropyOptions(batch_chunk_size=0)),
    ("options_dtype", lambda T: T.nn.LinearCrossEntropyOptions(acc_dtype=T.int32)),
    ("options_conflict", lambda T: T.nn.LinearCrossEntropyOptions(
        batch_chunk_size=3, chunking_method="aspect_ratio")._adjust(100, 8, 50, T.float32)),
    ("loss_weight_shape", lambda T: T.nn.LinearCrossEntropyLoss(4, 3, weight=T.ones(2))),
    ("loss_smoothing", lambda T: T.nn.LinearCrossEntropyLoss(4, 3, label_smoothing=2.0)),
]


@pytest.mark.parametrize("name,fn", cases(LINEAR_CE_ERRORS))
def test_linear_cross_entropy_errors(name, fn):
    same(fn, raises=True)


def test_linear_cross_entropy_loss():
    rng = np.random.default_rng(1)
    x, target = rng.standard_normal((6, 4)).astype(np.float32), rng.integers(0, 3, (6, 2))
    _pair_run(lambda T: T.nn.LinearCrossEntropyLoss(4, 3, out_features=(2,), bias=True,
                                                    label_smoothing=0.05),
              [x, target], lambda m, x, t: m(x, t))
    _pair_run(lambda T: T.nn.LinearCrossEntropyLoss(
        4, 3, reduction="none", options=T.nn.LinearCrossEntropyOptions(batch_chunk_size=2)),
        [x, target[:, 0]], lambda m, x, t: m(x, t))
    both(lambda T: [repr(T.nn.LinearCrossEntropyLoss(4, 3)), list(
        T.nn.LinearCrossEntropyLoss(4, 3, out_features=(2,), bias=True).state_dict())])


# ------------------------------------------------------------------------------------------------
# conv_tbc, native_channel_shuffle, grouped_mm, factory_kwargs, assert_int_or_pair
# ------------------------------------------------------------------------------------------------

def _offs(T, values):
    return T.tensor(values, dtype=T.int32)


FUNCTIONAL = [
    ("conv_tbc", lambda T, x, w, b: _F(T).conv_tbc(x, w, b, 1),
     [A((5, 2, 3)), A((3, 3, 4)), A((4,))]),
    ("conv_tbc_float64", lambda T, x, w, b: _F(T).conv_tbc(x, w, b),
     [A((6, 3, 2), "float64"), A((2, 2, 5), "float64"), A((5,), "float64")]),
    ("native_channel_shuffle", lambda T, x: _F(T).native_channel_shuffle(x, 2),
     [A((1, 4, 2, 3), grad=False)]),
    ("grouped_mm_2d_3d", lambda T, a, b: _F(T).grouped_mm(a, b, offs=_offs(T, [2, 4, 7])),
     [A((7, 8)), A((3, 8, 4))]),
    ("grouped_mm_3d_3d", lambda T, a, b: _F(T).grouped_mm(a, b), [A((3, 2, 8)), A((3, 8, 4))]),
    ("grouped_mm_3d_2d", lambda T, a, b: _F(T).grouped_mm(a, b, offs=_offs(T, [4, 8, 12])),
     [A((3, 4, 8)), A((8, 12))]),
    ("grouped_mm_2d_2d", lambda T, a, b: _F(T).grouped_mm(a, b, offs=_offs(T, [4, 8, 12])),
     [A((4, 12)), A((12, 8))]),
]


@pytest.mark.parametrize("name,fn,inputs", cases(FUNCTIONAL))
def test_functional(name, fn, inputs):
    check_op(name, fn, inputs)


def test_functional_values():
    both(lambda T: _F(T).conv_tbc(T.arange(12).reshape(4, 1, 3),
                                  T.ones(2, 3, 2, dtype=T.int64), T.tensor([1, 2])))
    same(lambda T: _F(T).native_channel_shuffle(T.ones(1, 4, 2, 2, requires_grad=True),
                                                2).sum().backward(), raises=True)
    both(lambda T: [T.nn.factory_kwargs(None), T.nn.factory_kwargs(
        {"device": "cpu", "factory_kwargs": {"dtype": T.float64}})])
    both(lambda T: _F(T).assert_int_or_pair((1, 2), "kernel", "{} bad"))


FUNCTIONAL_ERRORS = [
    ("conv_tbc_input", lambda T: _F(T).conv_tbc(T.ones(2, 3), T.ones(3, 3, 4), T.ones(4))),
    ("conv_tbc_weight", lambda T: _F(T).conv_tbc(T.ones(5, 2, 3), T.ones(3, 4), T.ones(4))),
    ("conv_tbc_bias", lambda T: _F(T).conv_tbc(T.ones(5, 2, 3), T.ones(3, 3, 4),
                                               T.ones(1, 4))),
    ("conv_tbc_channels", lambda T: _F(T).conv_tbc(T.ones(5, 2, 3), T.ones(3, 2, 4),
                                                   T.ones(4))),
    ("conv_tbc_out", lambda T: _F(T).conv_tbc(T.ones(5, 2, 3), T.ones(3, 3, 4), T.ones(5))),
    ("conv_tbc_long", lambda T: _F(T).conv_tbc(T.ones(5, 2, 3), T.ones(7, 3, 4), T.ones(4))),
    ("conv_tbc_pad", lambda T: _F(T).conv_tbc(T.ones(5, 2, 3), T.ones(3, 3, 4), T.ones(4), 1.5)),
    ("conv_tbc_dtypes", lambda T: _F(T).conv_tbc(T.ones(5, 2, 3, dtype=T.float64),
                                                 T.ones(3, 3, 4), T.ones(4))),
    ("shuffle_groups", lambda T: _F(T).native_channel_shuffle(T.ones(1, 4, 2, 2), 3)),
    ("shuffle_zero", lambda T: _F(T).native_channel_shuffle(T.ones(1, 4, 2, 2), 0)),
    ("shuffle_2d", lambda T: _F(T).native_channel_shuffle(T.ones(4, 2), 2)),
    ("grouped_bias", lambda T: _F(T).grouped_mm(T.ones(7, 8), T.ones(3, 8, 4),
                                                offs=_offs(T, [2, 4, 6]), bias=T.ones(3, 4))),
    ("grouped_out_dtype", lambda T: _F(T).grouped_mm(T.ones(7, 8), T.ones(3, 8, 4),
                                                     offs=_offs(T, [2, 4, 6]),
                                                     out_dtype=T.float64)),
    ("grouped_no_offs", lambda T: _F(T).grouped_mm(T.ones(7, 8), T.ones(3, 8, 4))),
    ("grouped_offs_3d", lambda T: _F(T).grouped_mm(T.ones(3, 2, 8), T.ones(3, 8, 4),
                                                   offs=_offs(T, [2, 4, 6]))),
    ("grouped_offs_int64", lambda T: _F(T).grouped_mm(T.ones(7, 8), T.ones(3, 8, 4),
                                                      offs=T.tensor([2, 4, 6]))),
    ("grouped_float64", lambda T: _F(T).grouped_mm(T.ones(7, 8, dtype=T.float64),
                                                   T.ones(3, 8, 4, dtype=T.float64),
                                                   offs=_offs(T, [2, 4, 6]))),
    ("grouped_1d", lambda T: _F(T).grouped_mm(T.ones(8), T.ones(3, 8, 4),
                                              offs=_offs(T, [2, 4, 6]))),
    ("grouped_contraction", lambda T: _F(T).grouped_mm(T.ones(7, 4), T.ones(3, 8, 4),
                                                       offs=_offs(T, [2, 4, 6]))),
    ("factory_kwargs_unexpected", lambda T: T.nn.factory_kwargs({"size": 3})),
    ("factory_kwargs_twice", lambda T: T.nn.factory_kwargs(
        {"dtype": T.float32, "factory_kwargs": {"dtype": T.float64}})),
    ("assert_int_or_pair", lambda T: _F(T).assert_int_or_pair((1, 2, 3), "kernel", "{} bad")),
]


@pytest.mark.parametrize("name,fn", cases(FUNCTIONAL_ERRORS))
def test_functional_errors(name, fn):
    same(fn, raises=True)
