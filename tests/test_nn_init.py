"""nn.init and the layers' default initialisation against PyTorch.

Random initialisers draw from different streams, so they are compared by distribution: the
bounds must be PyTorch's exactly (a uniform sample fills its interval), and the sample mean and
standard deviation must agree within sampling error.  Deterministic initialisers (constant_,
eye_, dirac_, calculate_gain) are compared value for value; errors by type and message.
"""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torchlike as tl  # noqa: E402

from test_parity_ops import cases  # noqa: E402

SHAPE = (200, 300)   # 60000 samples: the std of a sample std is ~0.3% of the std


def stats(t):
    v = t.detach().numpy().astype(np.float64)
    return v.mean(), v.std(), v.min(), v.max()


def assert_same_distribution(t_ref, t_got, uniform):
    (m_r, s_r, lo_r, hi_r), (m_g, s_g, lo_g, hi_g) = stats(t_ref), stats(t_got)
    assert abs(m_g - m_r) < 0.03 * s_r + 1e-12, (m_r, m_g)
    assert abs(s_g - s_r) < 0.02 * s_r + 1e-12, (s_r, s_g)
    if uniform:   # both samples nearly fill the same interval
        width = hi_r - lo_r
        assert abs(lo_g - lo_r) < 0.005 * width and abs(hi_g - hi_r) < 0.005 * width


RANDOM_INITS = [
    # name, init(T, tensor), uniform
    ("uniform_", lambda T, t: T.nn.init.uniform_(t, -0.3, 0.7), True),
    ("normal_", lambda T, t: T.nn.init.normal_(t, 0.5, 2.0), False),
    ("trunc_normal_", lambda T, t: T.nn.init.trunc_normal_(t, 0.1, 1.0, -1.0, 1.5), False),
    ("xavier_uniform_", lambda T, t: T.nn.init.xavier_uniform_(t, gain=2.0), True),
    ("xavier_normal_", lambda T, t: T.nn.init.xavier_normal_(t), False),
    ("kaiming_uniform_", lambda T, t: T.nn.init.kaiming_uniform_(t, a=math.sqrt(5)), True),
    ("kaiming_uniform_fan_out_relu", lambda T, t: T.nn.init.kaiming_uniform_(
        t, mode="fan_out", nonlinearity="relu"), True),
    ("kaiming_normal_", lambda T, t: T.nn.init.kaiming_normal_(t, nonlinearity="tanh"), False),
    ("orthogonal_", lambda T, t: T.nn.init.orthogonal_(t, gain=1.5), False),
]


@pytest.mark.parametrize("name,init,uniform", cases(RANDOM_INITS))
def test_random_initialisers_match_pytorch_distribution(name, init, uniform):
    ref = init(torch, torch.empty(SHAPE))
    got = init(tl, tl.empty(SHAPE))
    assert got.dtype == tl.float32 and tuple(got.shape) == SHAPE and not got.requires_grad
    assert_same_distribution(ref, got, uniform)


def test_trunc_normal_stays_in_bounds_and_orthogonal_is_orthogonal():
    t = tl.nn.init.trunc_normal_(tl.empty(SHAPE), 0.0, 1.0, -0.5, 0.8)
    assert float(t.min()) >= -0.5 and float(t.max()) <= 0.8
    q = tl.nn.init.orthogonal_(tl.empty(3, 5)).numpy()
    np.testing.assert_allclose(q @ q.T, np.eye(3), atol=1e-5)


def test_sparse_zeroes_a_fraction_of_each_column():
    t = tl.nn.init.sparse_(tl.empty(10, 6), sparsity=0.3, std=0.05).numpy()
    assert ((t == 0).sum(0) == math.ceil(0.3 * 10)).all()


def test_initialisers_keep_the_tensor_and_do_not_record():
    p = tl.nn.Parameter(tl.empty(3, 4))
    assert tl.nn.init.kaiming_uniform_(p) is p
    assert p.grad_fn is None and p.requires_grad and p.is_leaf


DETERMINISTIC = [
    ("constant_", lambda T: T.nn.init.constant_(T.empty(2, 3), 0.25)),
    ("ones_", lambda T: T.nn.init.ones_(T.empty(2, 3))),
    ("zeros_", lambda T: T.nn.init.zeros_(T.empty(2, 3))),
    ("eye_", lambda T: T.nn.init.eye_(T.empty(3, 5))),
    ("dirac_", lambda T: T.nn.init.dirac_(T.empty(4, 2, 3, 3))),
    ("dirac_groups", lambda T: T.nn.init.dirac_(T.empty(6, 2, 3), groups=2)),
]


@pytest.mark.parametrize("name,fn", cases(DETERMINISTIC))
def test_deterministic_initialisers(name, fn):
    np.testing.assert_array_equal(fn(tl).numpy(), fn(torch).numpy())


@pytest.mark.parametrize("nonlinearity,param", [
    ("linear", None), ("conv2d", None), ("conv_transpose3d", None), ("sigmoid", None),
    ("tanh", None), ("relu", None), ("leaky_relu", None), ("leaky_relu", 0.2),
    ("leaky_relu", 3), ("selu", None)])
def test_calculate_gain(nonlinearity, param):
    assert tl.nn.init.calculate_gain(nonlinearity, param) == \
        torch.nn.init.calculate_gain(nonlinearity, param)


ERRORS = [
    ("gain-unknown", lambda T: T.nn.init.calculate_gain("swish")),
    ("gain-bad-slope", lambda T: T.nn.init.calculate_gain("leaky_relu", "x")),
    ("fan-1d", lambda T: T.nn.init.xavier_uniform_(T.empty(3))),
    ("fan-mode", lambda T: T.nn.init.kaiming_normal_(T.empty(3, 4), mode="fan_avg")),
    ("eye-3d", lambda T: T.nn.init.eye_(T.empty(2, 2, 2))),
    ("dirac-2d", lambda T: T.nn.init.dirac_(T.empty(2, 2))),
    ("dirac-groups", lambda T: T.nn.init.dirac_(T.empty(5, 2, 3), groups=2)),
    ("orthogonal-1d", lambda T: T.nn.init.orthogonal_(T.empty(3))),
    ("sparse-3d", lambda T: T.nn.init.sparse_(T.empty(2, 2, 2), 0.5)),
]


@pytest.mark.parametrize("name,fn", cases(ERRORS))
def test_init_errors(name, fn):
    errors = []
    for T in (torch, tl):
        with pytest.raises(Exception) as info:
            fn(T)
        errors.append(info.value)
    assert type(errors[1]) is type(errors[0]) and str(errors[1]) == str(errors[0])


# --- default initialisation of the layers -------------------------------------------------------

LAYERS = [
    ("Linear", lambda T: T.nn.Linear(300, 200)),
    ("Bilinear", lambda T: T.nn.Bilinear(40, 30, 50)),
    ("Conv2d", lambda T: T.nn.Conv2d(16, 64, 5)),
    ("ConvTranspose1d", lambda T: T.nn.ConvTranspose1d(32, 64, 7, groups=2)),
    ("Embedding", lambda T: T.nn.Embedding(300, 200, padding_idx=3)),
    ("LSTM", lambda T: T.nn.LSTM(40, 50, proj_size=20)),
    ("MultiheadAttention", lambda T: T.nn.MultiheadAttention(96, 4, add_bias_kv=True)),
    ("Transformer", lambda T: T.nn.Transformer(32, 4, 1, 1, 64)),
    ("BatchNorm2d", lambda T: T.nn.BatchNorm2d(8)),
    ("LayerNorm", lambda T: T.nn.LayerNorm(8)),
    ("PReLU", lambda T: T.nn.PReLU(4)),
]


@pytest.mark.parametrize("name,ctor", cases(LAYERS))
def test_layer_default_initialisation(name, ctor):
    """Every parameter and buffer of a freshly built layer has PyTorch's shape, dtype and
    distribution (bounds and spread); constant ones are equal."""
    ref, got = ctor(torch).state_dict(), ctor(tl).state_dict()
    assert list(got) == list(ref)
    for key in ref:
        r, g = ref[key], got[key]
        assert tuple(g.shape) == tuple(r.shape) and str(g.dtype) == str(r.dtype), key
        values = r.numpy().astype(np.float64)
        if values.std() == 0 or values.size < 200:
            if values.std() == 0:
                np.testing.assert_array_equal(g.numpy(), r.numpy(), err_msg=key)
            continue
        uniform = abs(values.max() + values.min()) < 0.1 * values.max() and \
            np.mean(np.abs(values) > 0.9 * values.max()) > 0.05
        (_, s_r, lo_r, hi_r), (_, s_g, lo_g, hi_g) = stats(r), stats(g)
        tol = 4 / math.sqrt(2 * values.size)   # 4 standard errors of a sample std
        assert abs(s_g - s_r) < tol * s_r, f"{key}: std {s_r} vs {s_g}"
        if uniform:
            assert lo_g >= lo_r - 0.05 * (hi_r - lo_r) and hi_g <= hi_r + 0.05 * (hi_r - lo_r)
