"""nn.init and the layers' default initialisation against PyTorch.

Random initialisers draw from different streams, so they are compared by distribution, with
PyTorch's pooled over many draws as the reference: every element PyTorch never varies (a
constant, a padding row) must be equal; a uniform sample must lie within PyTorch's bounds and
reach close to them (as near as its size makes certain, so a bound off by any factor shows,
however small the tensor); mean and variance must agree within sampling error.  Deterministic
initialisers (constant_, eye_, dirac_, calculate_gain) are compared value for value; errors by
type and message.
"""
import math

import numpy as np
import pytest
import torch

import torchlike as tl

from parity import cases
from sample_stats import check_moments

SHAPE = (200, 300)
DRAWS = 8    # PyTorch's draws pooled as the reference: its own error then adds ~6% to our SE
MISS = 1e-9  # the chance a correct sample fails the bound checks


def _np(t):
    return t.detach().numpy().astype(np.float64)


def assert_drawn_like_torch(what, ref_draws, got, uniform):
    """``got`` (one draw, an array) comes from the distribution ``ref_draws`` (PyTorch's draws
    of the same tensor, stacked on a new first axis) samples.  Where that is ``uniform``, ours
    must also lie within PyTorch's pooled bounds and reach within a factor MISS ** (1 / n) of
    them, as n uniform samples do but with chance MISS."""
    fixed = (ref_draws == ref_draws[0]).all(0)
    np.testing.assert_array_equal(got[fixed], ref_draws[0][fixed], err_msg=f"{what}: constants")
    ref, got = ref_draws[:, ~fixed].ravel(), got[~fixed]
    if got.size == 0:
        return
    if not uniform:
        mean = ref.mean()
        check_moments(got, mean, ref.var(), ((ref - mean) ** 4).mean(), what)
        return
    lo, hi = ref.min(), ref.max()
    centre, half = (lo + hi) / 2, (hi - lo) / 2
    slack = (hi - lo) * -math.log(MISS) / ref.size   # how far the pooled ends may fall short
    assert lo - slack <= got.min() and got.max() <= hi + slack, (
        f"{what}: [{got.min()}, {got.max()}] outside PyTorch's [{lo}, {hi}]")
    reach, floor = np.abs(got - centre).max(), half * MISS ** (1 / got.size) - slack
    assert reach >= floor, (
        f"{what}: reaches {reach} of PyTorch's half-width {half} ({got.size} samples)")
    check_moments(got, centre, half * half / 3, half ** 4 / 5, what)


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
    ref = np.stack([_np(init(torch, torch.empty(SHAPE))) for _ in range(DRAWS)])
    got = init(tl, tl.empty(SHAPE))
    assert got.dtype == tl.float32 and tuple(got.shape) == SHAPE and not got.requires_grad
    assert_drawn_like_torch(name, ref, _np(got), uniform)


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
    # name, ctor(T), the state-dict keys drawn from a normal (the other random ones: uniform)
    ("Linear", lambda T: T.nn.Linear(300, 200), ()),
    ("Linear_small", lambda T: T.nn.Linear(3, 2), ()),
    ("Bilinear", lambda T: T.nn.Bilinear(40, 30, 50), ()),
    ("Conv2d", lambda T: T.nn.Conv2d(16, 64, 5), ()),
    ("Conv1d_small", lambda T: T.nn.Conv1d(2, 3, 2), ()),
    ("Conv3d_groups", lambda T: T.nn.Conv3d(4, 6, (1, 2, 3), groups=2), ()),
    ("ConvTranspose1d", lambda T: T.nn.ConvTranspose1d(32, 64, 7, groups=2), ()),
    ("ConvTranspose2d_small", lambda T: T.nn.ConvTranspose2d(3, 2, 2), ()),
    ("Embedding", lambda T: T.nn.Embedding(300, 200, padding_idx=3), ("weight",)),
    ("LSTM", lambda T: T.nn.LSTM(40, 50, proj_size=20), ()),
    ("GRUCell", lambda T: T.nn.GRUCell(3, 4), ()),
    ("MultiheadAttention", lambda T: T.nn.MultiheadAttention(96, 4, add_bias_kv=True),
     ("bias_k", "bias_v")),
    ("Transformer", lambda T: T.nn.Transformer(32, 4, 1, 1, 64), ()),
    ("BatchNorm2d", lambda T: T.nn.BatchNorm2d(8), ()),
    ("LayerNorm", lambda T: T.nn.LayerNorm(8), ()),
    ("PReLU", lambda T: T.nn.PReLU(4), ()),
]


@pytest.mark.parametrize("name,ctor,normal", cases(LAYERS))
def test_layer_default_initialisation(name, ctor, normal):
    """Every parameter and buffer of a freshly built layer, whatever its size, has PyTorch's
    shape, dtype and distribution (bounds, mean and spread); constant elements are equal."""
    refs, got = [ctor(torch).state_dict() for _ in range(DRAWS)], ctor(tl).state_dict()
    assert list(got) == list(refs[0])
    for key, g in got.items():
        r = refs[0][key]
        assert tuple(g.shape) == tuple(r.shape) and str(g.dtype) == str(r.dtype), key
        assert_drawn_like_torch(key, np.stack([_np(sd[key]) for sd in refs]), _np(g),
                                uniform=key not in normal)
