"""torchlike.distributions' continuous distributions against real PyTorch: one spec table (the
class, float64 parameters, values in the support) drives log_prob / cdf / icdf / entropy /
mean / variance / mode / stddev and their gradients w.r.t. every parameter, shapes and supports
of samples, the KL pairs PyTorch registers among these classes, validation messages, the
reparameterized gradients of gamma and Dirichlet samples (against torch._standard_gamma_grad /
torch._dirichlet_grad at the same sample values), sample moments at fixed seeds, and a loss
through rsample under torchlike.compile.
"""
import math

import numpy as np
import pytest
import torch
import torch.distributions as TD
from torch.distributions.dirichlet import _Dirichlet_backward
from torch.distributions.kl import _KL_REGISTRY

import torchlike as tl
import torchlike.distributions as LD
from sample_stats import check_moments

# name, parameters (keyword: values, float64), values in the support, and the dtype when not
# float64 (GeneralizedPareto compares its concentration with a float32 zero, so PyTorch's
# log_prob and cdf need float32 parameters).
SPECS = [
    ("Normal", dict(loc=[0.3, -1.2], scale=[0.7, 2.0]), [0.5, -0.4]),
    ("Uniform", dict(low=[-1.0, 0.5], high=[2.0, 0.9]), [0.1, 0.6]),
    ("Beta", dict(concentration1=[0.7, 2.5], concentration0=[1.5, 3.0]), [0.3, 0.8]),
    ("Gamma", dict(concentration=[0.7, 3.0], rate=[1.5, 0.4]), [0.3, 4.0]),
    ("Chi2", dict(df=[1.5, 4.0]), [0.3, 4.0]),
    ("Exponential", dict(rate=[0.5, 2.0]), [0.3, 1.7]),
    ("Laplace", dict(loc=[0.3, -1.0], scale=[0.7, 2.0]), [0.5, -2.4]),
    ("Cauchy", dict(loc=[0.3, -1.0], scale=[0.7, 2.0]), [0.5, -2.4]),
    ("HalfCauchy", dict(scale=[0.7, 2.0]), [0.5, 3.0]),
    ("HalfNormal", dict(scale=[0.7, 2.0]), [0.5, 3.0]),
    ("LogNormal", dict(loc=[0.3, -1.0], scale=[0.7, 1.5]), [0.5, 2.0]),
    ("Gumbel", dict(loc=[0.3, -1.0], scale=[0.7, 2.0]), [0.5, -2.0]),
    ("Weibull", dict(scale=[0.7, 2.0], concentration=[0.8, 3.0]), [0.5, 2.5]),
    ("Pareto", dict(scale=[0.7, 2.0], alpha=[1.5, 3.0]), [0.9, 2.5]),
    ("StudentT", dict(df=[0.8, 1.5, 3.0], loc=[0.3, -1.0, 0.0], scale=[0.7, 2.0, 1.0]),
     [0.5, -2.0, 1.0]),
    ("FisherSnedecor", dict(df1=[1.5, 3.0, 5.0], df2=[1.5, 3.0, 5.0]), [0.5, 2.0, 1.0]),
    ("InverseGamma", dict(concentration=[0.7, 1.5, 3.0], rate=[1.5, 0.4, 1.0]), [0.3, 4.0, 1.0]),
    ("Kumaraswamy", dict(concentration1=[0.7, 2.0], concentration0=[1.5, 0.5]), [0.3, 0.8]),
    ("VonMises", dict(loc=[0.3, -1.0], concentration=[0.7, 5.0]), [0.5, -2.0]),
    ("ContinuousBernoulli", dict(probs=[0.2, 0.4995, 0.8]), [0.3, 0.6, 0.9]),
    ("ContinuousBernoulli", dict(logits=[-1.0, 0.001, 2.0]), [0.3, 0.6, 0.9]),
    ("Dirichlet", dict(concentration=[[0.7, 2.0, 1.5], [3.0, 0.4, 0.2]]),
     [[0.2, 0.5, 0.3], [0.6, 0.3, 0.1]]),
    ("GeneralizedPareto", dict(loc=[0.1, -0.5, 0.0], scale=[0.7, 2.0, 1.0],
                               concentration=[0.3, -0.2, 0.0]), [0.5, 1.0, 2.0], "float32"),
]
CASES = [pytest.param(*row, id=f"{row[0]}-{i}") for i, row in enumerate(SPECS)]
PROBS = [0.15, 0.7, 0.4]      # icdf's arguments (the first of them for each batch entry)
METHODS = ("log_prob", "cdf", "icdf", "entropy", "mean", "variance", "mode", "stddev")


def _build(lib, name, params, dtype, requires_grad=True):
    """(distribution, its parameter tensors) of ``lib`` (torch or torchlike)."""
    dt = getattr(lib, dtype)
    tensors = {k: lib.tensor(v, dtype=dt, requires_grad=requires_grad)
               for k, v in params.items()}
    mod = TD if lib is torch else LD
    return getattr(mod, name)(**tensors), tensors


def _run(lib, name, params, dtype, method, arg):
    """(result, gradients of its sum) or the exception type PyTorch raises."""
    dist, tensors = _build(lib, name, params, dtype)
    try:
        attr = getattr(dist, method)
        out = attr(lib.tensor(arg, dtype=getattr(lib, dtype))) if callable(attr) and arg \
            is not None else (attr() if callable(attr) else attr)
    except NotImplementedError:
        return NotImplementedError, None
    grads = {}
    if out.requires_grad:
        try:
            out.sum().backward()
        except (NotImplementedError, RuntimeError) as e:   # PyTorch has no such derivative
            return out.detach().numpy(), (type(e), str(e))
        grads = {k: None if t.grad is None else t.grad.detach().numpy()
                 for k, t in tensors.items()}
    return out.detach().numpy(), grads


def _close(a, b, dtype, what, grad=False):
    """Values to float64 rounding; gradients less tightly where they meet polygamma, whose
    float64 values differ from PyTorch's in the 9th digit."""
    rtol, atol = (1e-9, 1e-12) if dtype == "float64" else (2e-5, 1e-6)
    rtol *= 100 if grad else 1
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("name, params, values, dtype", [
    pytest.param(*(row + ("float64",))[:4], id=f"{row[0]}-{i}") for i, row in enumerate(SPECS)])
def test_methods_and_gradients_match_torch(name, params, values, dtype):
    """Every method's value and the gradient of its sum w.r.t. every parameter, as PyTorch's
    (or NotImplementedError where PyTorch raises it)."""
    batch = len(values)
    for method in METHODS:
        icdf_arg = values if name == "Dirichlet" else PROBS[:batch]
        arg = {"log_prob": values, "cdf": values, "icdf": icdf_arg}.get(method)
        want = _run(torch, name, params, dtype, method, arg)
        got = _run(tl, name, params, dtype, method, arg)
        if want[0] is NotImplementedError:
            assert got[0] is NotImplementedError, (name, method)
            continue
        assert got[0] is not NotImplementedError, (name, method)
        _close(got[0], want[0], dtype, f"{name}.{method}")
        if isinstance(want[1], tuple):
            assert got[1] == want[1], (name, method)
            continue
        assert set(got[1]) == set(want[1]), (name, method)
        for k in want[1]:
            if want[1][k] is None:
                assert got[1][k] is None or not np.any(got[1][k]), (name, method, k)
            else:
                _close(got[1][k], want[1][k], dtype, f"{name}.{method} d/d{k}", grad=True)


@pytest.mark.parametrize("name, params, values, dtype", [
    pytest.param(*(row + ("float64",))[:4], id=f"{row[0]}-{i}") for i, row in enumerate(SPECS)])
def test_shapes_dtypes_support(name, params, values, dtype):
    """batch/event shapes, flags, support repr; sample/rsample shapes, dtypes and support for
    sample_shape () and (3,), and expand."""
    tdist, _ = _build(torch, name, params, dtype)
    ldist, _ = _build(tl, name, params, dtype)
    assert tuple(ldist.batch_shape) == tuple(tdist.batch_shape)
    assert tuple(ldist.event_shape) == tuple(tdist.event_shape)
    assert ldist.has_rsample == tdist.has_rsample
    assert type(ldist).__module__ == type(tdist).__module__.replace("torch", "torchlike", 1)
    assert repr(ldist.support) == repr(tdist.support)
    tl.manual_seed(0)
    for shape in ((), (3,)):
        want = tuple(shape) + tuple(tdist.batch_shape) + tuple(tdist.event_shape)
        draws = [ldist.sample(shape)] + ([ldist.rsample(shape)] if ldist.has_rsample else [])
        for x in draws:
            assert tuple(x.shape) == want and x.dtype == getattr(tl, dtype), (name, shape)
            assert bool(ldist.support.check(x).all()), (name, x)
        assert not draws[0].requires_grad
        if len(draws) > 1:
            assert draws[1].requires_grad
    expanded = ldist.expand((4,) + tuple(ldist.batch_shape))
    assert tuple(expanded.batch_shape) == (4,) + tuple(tdist.batch_shape)
    assert type(expanded) is type(ldist)
    _close(expanded.log_prob(tl.tensor(values, dtype=getattr(tl, dtype))).detach().numpy(),
           tdist.log_prob(torch.tensor(values, dtype=getattr(torch, dtype))).detach()
           .expand((4,) + tuple(tdist.batch_shape)).numpy(), dtype, f"{name} expanded")


# --- reparameterized gradients of gamma and Dirichlet samples --------------------------------

def _t(x):
    return torch.tensor(x.detach().numpy())


def test_gamma_and_chi2_rsample_gradients_are_torch_standard_gamma_grad():
    tl.manual_seed(1)
    conc = tl.tensor([0.05, 0.6, 2.0, 9.0, 40.0], dtype=tl.float64, requires_grad=True)
    rate = tl.tensor([0.5, 1.0, 2.0, 3.0, 0.2], dtype=tl.float64, requires_grad=True)
    x = LD.Gamma(conc, rate).rsample((2,))
    x.sum().backward()
    std = _t(x) * _t(rate)
    want = (torch._standard_gamma_grad(_t(conc).expand_as(std), std) / _t(rate)).sum(0)
    np.testing.assert_allclose(conc.grad.numpy(), want.numpy(), rtol=1e-10)
    np.testing.assert_allclose(rate.grad.numpy(), (-_t(x) / _t(rate)).sum(0).numpy(),
                               rtol=1e-10)
    df = tl.tensor([0.5, 3.0, 30.0], dtype=tl.float64, requires_grad=True)
    x = LD.Chi2(df).rsample()
    x.sum().backward()
    want = torch._standard_gamma_grad(_t(df) / 2, _t(x) / 2)
    np.testing.assert_allclose(df.grad.numpy(), want.numpy(), rtol=1e-10)


def test_dirichlet_and_beta_rsample_gradients_are_torch_dirichlet_grad():
    tl.manual_seed(2)
    conc = tl.tensor([[0.3, 2.0, 1.5], [8.0, 9.0, 0.5]], dtype=tl.float64, requires_grad=True)
    w = tl.tensor([1.0, -2.0, 0.5], dtype=tl.float64)
    x = LD.Dirichlet(conc).rsample()
    assert x.grad_fn.name() == "_DirichletBackward"
    np.testing.assert_allclose(x.sum(-1).detach().numpy(), 1.0, rtol=1e-12)
    (x * w).sum().backward()
    want = _Dirichlet_backward(_t(x), _t(conc), _t(w).expand(2, 3))
    np.testing.assert_allclose(conc.grad.numpy(), want.numpy(), rtol=1e-10)
    c1 = tl.tensor([0.5, 7.0], dtype=tl.float64, requires_grad=True)
    c0 = tl.tensor([2.0, 8.0], dtype=tl.float64, requires_grad=True)
    x = LD.Beta(c1, c0).rsample()
    x.sum().backward()
    pair = torch.stack([_t(x), 1 - _t(x)], -1)
    want = _Dirichlet_backward(pair, torch.stack([_t(c1), _t(c0)], -1),
                               torch.tensor([1.0, 0.0], dtype=torch.float64).expand(2, 2))
    np.testing.assert_allclose(c1.grad.numpy(), want[:, 0].numpy(), rtol=1e-10)
    np.testing.assert_allclose(c0.grad.numpy(), want[:, 1].numpy(), rtol=1e-10)


def test_sampler_ops_match_torch():
    """torch._standard_gamma_grad / _dirichlet_grad on a grid through every branch of their
    approximations; the samplers' dtypes, edge values and errors."""
    rng = np.random.default_rng(0)
    alpha = np.repeat([0.01, 0.5, 2.0, 7.9, 8.5, 50.0, 1000.0], 20)
    x = rng.gamma(alpha)
    got = tl._standard_gamma_grad(tl.tensor(alpha), tl.tensor(x)).numpy()
    want = torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-11)
    conc = np.array([[0.1, 0.2], [0.5, 3.0], [7.0, 9.0], [20.0, 30.0], [0.01, 5.0], [2.0, 1.0]])
    xs = np.stack([rng.dirichlet(c, 25)[:, 0] for c in conc])
    a, total = np.repeat(conc[:, :1], 25, 1), np.repeat(conc.sum(1, keepdims=True), 25, 1)
    args = [np.clip(xs, 1e-300, None), a, total]
    got = tl._dirichlet_grad(*map(tl.tensor, args)).numpy()
    want = torch._dirichlet_grad(*map(torch.tensor, args)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-10)
    edge = tl._standard_gamma(tl.tensor([0.0, -1.0, math.nan, math.inf]))
    np.testing.assert_array_equal(
        edge.numpy(), torch._standard_gamma(torch.tensor([0.0, -1.0, math.nan, math.inf])))
    small = tl._sample_dirichlet(tl.tensor([[1e-3, 1e-3]]))
    assert sorted(small.numpy().ravel()) == [np.finfo(np.float32).tiny, 1.0]
    for fn, kernel in ((tl._standard_gamma, "gamma_cpu"), (tl._sample_dirichlet, "dirichlet")):
        with pytest.raises(NotImplementedError, match=f'"{kernel}" not implemented for .Long.'):
            fn(tl.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
        tl._standard_gamma_grad(tl.tensor([1.0]), tl.tensor([1.0], dtype=tl.float64))
    sample = tl._sample_dirichlet(tl.tensor([1.0, 2.0], requires_grad=True))
    with pytest.raises(RuntimeError, match="derivative for aten::_sample_dirichlet is not "):
        sample.sum().backward()


# --- moments, KL, validation, gradcheck, compile ------------------------------------------------

@pytest.mark.parametrize("name, params", [
    ("Gamma", dict(concentration=0.3, rate=2.0)),
    ("Beta", dict(concentration1=0.5, concentration0=2.0)),
    ("StudentT", dict(df=7.0, loc=1.0, scale=2.0)),
    ("Laplace", dict(loc=-1.0, scale=0.5)),
    ("VonMises", dict(loc=0.5, concentration=4.0)),
    ("Kumaraswamy", dict(concentration1=2.0, concentration0=3.0)),
])
def test_sample_moments(name, params):
    """Sample mean and variance within a few standard errors of PyTorch's mean/variance (its
    own large sample gives the fourth moment the tolerance needs)."""
    tl.manual_seed(3)
    kwargs = {k: tl.tensor(v, dtype=tl.float64) for k, v in params.items()}
    x = getattr(LD, name)(**kwargs).sample((20000,))
    tdist = getattr(TD, name)(**{k: torch.tensor(v, dtype=torch.float64)
                                 for k, v in params.items()})
    torch.manual_seed(0)
    ref = tdist.sample((200000,)).numpy()
    mean = float(tdist.mean) if name != "VonMises" else float(ref.mean())
    var = float(tdist.variance) if name != "VonMises" else float(ref.var())
    check_moments(x, mean, var, float(((ref - ref.mean()) ** 4).mean()), name)


_KL_PARAMS = {
    "Normal": dict(loc=[0.3, -1.0], scale=[0.7, 2.0]),
    "Uniform": dict(low=[0.2, 0.1], high=[0.6, 0.9]),
    "Beta": dict(concentration1=[0.7, 2.5], concentration0=[1.5, 3.0]),
    "Gamma": dict(concentration=[0.7, 3.0], rate=[1.5, 0.4]),
    "Exponential": dict(rate=[0.5, 2.0]),
    "Laplace": dict(loc=[0.3, -1.0], scale=[0.7, 2.0]),
    "Cauchy": dict(loc=[0.3, -1.0], scale=[0.7, 2.0]),
    "HalfNormal": dict(scale=[0.7, 2.0]),
    "Gumbel": dict(loc=[0.3, -1.0], scale=[0.7, 2.0]),
    "Pareto": dict(scale=[0.7, 2.0], alpha=[2.5, 3.0]),
    "ContinuousBernoulli": dict(probs=[0.2, 0.8]),
    "Dirichlet": dict(concentration=[[0.7, 2.0, 1.5], [3.0, 0.4, 0.2]]),
}
_KL_Q = {  # q's parameters, where they differ from p's
    "Normal": dict(loc=[0.1, 0.5], scale=[1.5, 0.9]),
    "Uniform": dict(low=[0.1, 0.05], high=[0.9, 0.95]),
    "Beta": dict(concentration1=[1.3, 0.5], concentration0=[2.0, 1.2]),
    "Gamma": dict(concentration=[1.2, 0.8], rate=[0.5, 2.0]),
    "Exponential": dict(rate=[1.5, 0.3]),
    "Laplace": dict(loc=[0.1, 0.5], scale=[1.5, 0.9]),
    "Cauchy": dict(loc=[0.1, 0.5], scale=[1.5, 0.9]),
    "HalfNormal": dict(scale=[1.5, 0.9]),
    "Gumbel": dict(loc=[0.1, 0.5], scale=[1.5, 0.9]),
    "Pareto": dict(scale=[0.5, 2.5], alpha=[1.5, 4.0]),
    "ContinuousBernoulli": dict(probs=[0.6, 0.3]),
    "Dirichlet": dict(concentration=[[1.0, 1.0, 2.0], [0.5, 0.5, 3.0]]),
}
KL_PAIRS = sorted({(p.__name__, q.__name__) for p, q in _KL_REGISTRY
                   if p.__name__ in _KL_PARAMS and q.__name__ in _KL_PARAMS})


@pytest.mark.parametrize("p_name, q_name", KL_PAIRS, ids=[f"{p}-{q}" for p, q in KL_PAIRS])
def test_kl_pairs_match_torch(p_name, q_name):
    """Every pair PyTorch registers among these classes: value and gradients w.r.t. both
    distributions' parameters."""
    results = []
    for lib in (torch, tl):
        p, p_params = _build(lib, p_name, _KL_PARAMS[p_name], "float64")
        q, q_params = _build(lib, q_name, _KL_Q[q_name], "float64")
        mod = TD if lib is torch else LD
        out = mod.kl_divergence(p, q)
        grads = []
        if out.requires_grad:
            out.sum().backward()
            grads = [None if t.grad is None else t.grad.numpy()
                     for t in list(p_params.values()) + list(q_params.values())]
        results.append((out.detach().numpy(), grads))
    (want, want_g), (got, got_g) = results
    _close(got, want, "float64", f"KL({p_name} || {q_name})")
    assert len(got_g) == len(want_g)
    for g, w in zip(got_g, want_g):
        if w is None:
            assert g is None or not np.any(g)
        else:
            _close(g, w, "float64", f"KL({p_name} || {q_name}) gradient", grad=True)


def _message(make):
    try:
        make()
    except Exception as e:   # noqa: BLE001 (the type is compared)
        return type(e), str(e)
    return None


@pytest.mark.parametrize("case", range(6))
def test_validation_errors_match_torch(case):
    def make(lib, mod):
        t = lambda v: lib.tensor(v, dtype=lib.float64)   # noqa: E731
        return [
            lambda: mod.Normal(t([0.0]), t([-1.0]), validate_args=True),
            lambda: mod.Gamma(t([1.0]), t([1.0]), validate_args=True).log_prob(t([-1.0])),
            lambda: mod.Uniform(t([1.0]), t([0.5]), validate_args=True),
            lambda: mod.Dirichlet(t(1.0)),
            lambda: mod.ContinuousBernoulli(probs=t([1.5]), validate_args=True),
            lambda: mod.Beta(t([0.5]), t([0.5]), validate_args=True).log_prob(t([1.5])),
        ][case]
    want = _message(make(torch, TD))
    got = _message(make(tl, LD))
    assert want is not None and got == want, got


def test_gradcheck_log_prob_and_entropy():
    """Finite differences of a few log_probs and entropies in every parameter."""
    values = tl.tensor([0.3, 1.7], dtype=tl.float64)
    for cls, n in ((LD.Gamma, 2), (LD.StudentT, 3), (LD.Beta, 2), (LD.Weibull, 2)):
        params = [tl.tensor([1.3, 2.5], dtype=tl.float64, requires_grad=True) for _ in range(n)]
        x = values / 2 if cls is LD.Beta else values
        assert tl.autograd.gradcheck(lambda *p: cls(*p).log_prob(x), params)
        assert tl.autograd.gradcheck(lambda *p: cls(*p).entropy(), params)


def test_loss_through_rsample_under_compile():
    """A step whose loss comes from rsample (Normal, Gamma, Dirichlet) compiles into one
    program: fresh draws each call, gradients reach the parameters."""
    loc = tl.tensor([0.3, -0.2], requires_grad=True)
    conc = tl.tensor([1.5, 0.7], requires_grad=True)

    @tl.compile
    def step():
        loc.grad = conc.grad = None
        x = LD.Normal(loc, 1.0).rsample((4,))
        g = LD.Gamma(conc, 2.0).rsample((4,))
        d = LD.Dirichlet(conc).rsample()
        loss = (x * g).mean() + (d * loc).sum() + LD.Normal(loc, 1.0).log_prob(g).sum()
        loss.backward()
        return loss
    tl.manual_seed(4)
    first = step().item()
    grads = loc.grad.clone(), conc.grad.clone()
    second = step().item()
    assert math.isfinite(first) and math.isfinite(second) and first != second
    assert all(bool(g.isfinite().all()) and bool((g != 0).any()) for g in grads)
    assert not bool((loc.grad == grads[0]).all())
