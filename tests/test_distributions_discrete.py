"""torchlike.distributions' discrete, multivariate and composite distributions against real
PyTorch, side by side in float64.

One spec table (``SPECS``) drives the tests: each row builds the same distribution in both
libraries from the same numbers (parameters listed in ``grad`` require grad) and names a value
in its support.  For every row: repr, shapes, flags and support, ``log_prob`` / ``entropy`` /
``mean`` / ``variance`` / ``mode`` / ``enumerate_support`` values and dtypes, the gradients
that ``.backward()`` of ``log_prob + entropy`` gives each parameter, ``expand``, and samples'
shapes, dtypes and support.  Then: a few distributions' sample frequencies and moments
(tests/sample_stats.py, fixed seeds), ``torchlike.binomial``, validation errors' texts, the KL
pairs (values and gradients), finite differences on a few rows, a REINFORCE step compiled
against eager, and each class's module path, bases and constraints.

The suite's time here is XLA compiling each op at each new shape (NOTE [ test compile time ] in
conftest.py), so rows share batch shapes where they can and heavy samplers draw one shape.
"""
import math

import numpy as np
import pytest
import torch

import torchlike as tl
from parity import both, same
from sample_stats import check_frequencies, check_moments

COV = [[2.0, 0.3], [0.3, 1.0]]
COV_B = [[[1.5, -0.4], [-0.4, 0.8]], [[1.0, 0.2], [0.2, 2.0]]]
TRIL = [[1.2, 0.0], [0.4, 0.7]]
CORR_L = [[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [-0.3, 0.4, math.sqrt(0.75)]]


def scalar(x):
    """A 0-dim float64 tensor parameter (a plain Python number stays a number)."""
    return np.float64(x)


# (id, class or builder(D, params), parameters, names requiring grad, value in the support)
SPECS = [
    ("bernoulli-probs", "Bernoulli", dict(probs=[0.2, 0.5]), ("probs",), [1.0, 0.0]),
    ("bernoulli-logits", "Bernoulli", dict(logits=[-1.0, 0.3]), ("logits",), [0.0, 1.0]),
    ("binomial-probs", "Binomial", dict(total_count=[5.0, 5.0], probs=[0.2, 0.9]),
     ("probs",), [0.0, 5.0]),
    ("binomial-logits", "Binomial", dict(total_count=4, logits=[-1.0, 0.5]), ("logits",),
     [1.0, 4.0]),
    ("categorical-probs", "Categorical", dict(probs=[[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]),
     ("probs",), [2.0, 0.0]),
    ("categorical-logits", "Categorical", dict(logits=[0.1, -0.4, 1.2]), ("logits",),
     [[2.0], [1.0]]),
    ("geometric-probs", "Geometric", dict(probs=[0.3, 1.0]), ("probs",), [2.0, 0.0]),
    ("geometric-logits", "Geometric", dict(logits=[0.4, -1.5]), ("logits",), [0.0, 3.0]),
    ("negative-binomial-probs", "NegativeBinomial", dict(total_count=[3.0, 2.5], probs=[0.4, 0.7]),
     ("total_count", "probs"), [2.0, 0.0]),
    ("poisson", "Poisson", dict(rate=[0.5, 3.0]), ("rate",), [0.0, 4.0]),
    ("multinomial-probs", "Multinomial", dict(total_count=4, probs=[0.2, 0.3, 0.5]), ("probs",),
     [1.0, 0.0, 3.0]),
    ("one-hot-probs", "OneHotCategorical", dict(probs=[[0.2, 0.3, 0.5], [0.5, 0.25, 0.25]]),
     ("probs",), [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]),
    ("one-hot-straight-through", "OneHotCategoricalStraightThrough",
     dict(logits=[[0.3, -0.2, 1.0], [0.0, 0.5, -1.0]]), ("logits",), [0.0, 0.0, 1.0]),
    ("relaxed-bernoulli", "RelaxedBernoulli", dict(temperature=scalar(0.7), probs=[0.3, 0.8]),
     ("temperature", "probs"), [0.2, 0.9]),
    ("relaxed-one-hot", "RelaxedOneHotCategorical",
     dict(temperature=scalar(0.5), probs=[0.2, 0.3, 0.5]), ("temperature", "probs"),
     [0.1, 0.3, 0.6]),
    ("mvn-covariance", "MultivariateNormal", dict(loc=[[0.5, -1.0], [0.0, 2.0]],
                                                  covariance_matrix=COV),
     ("loc", "covariance_matrix"), [0.3, 0.1]),
    ("mvn-precision", "MultivariateNormal", dict(loc=[0.5, -1.0], precision_matrix=COV_B),
     ("loc", "precision_matrix"), [[1.0, 0.0]]),
    ("mvn-scale-tril", "MultivariateNormal", dict(loc=[[0.5, -1.0], [1.0, 1.0]], scale_tril=TRIL),
     ("loc", "scale_tril"), [-0.2, 0.4]),
    ("lowrank-mvn", "LowRankMultivariateNormal",
     dict(loc=[1.0, 0.0], cov_factor=[[0.5], [1.0]], cov_diag=[1.0, 0.5]),
     ("loc", "cov_factor", "cov_diag"), [0.3, -0.4]),
    ("lowrank-mvn-batch", "LowRankMultivariateNormal",
     dict(loc=[[0.0, 1.0], [1.0, 0.0]], cov_factor=[[1.0, 0.5], [0.2, -0.3]], cov_diag=[0.5, 1.5]),
     ("loc", "cov_factor", "cov_diag"), [0.3, -0.4]),
    ("lkj-cholesky", "LKJCholesky", dict(dim=3, concentration=[0.5, 2.0]), ("concentration",),
     CORR_L),
    ("wishart", "Wishart", dict(df=[3.0, 4.5], covariance_matrix=COV), ("df", "covariance_matrix"),
     COV_B),
    ("logistic-normal", "LogisticNormal", dict(loc=[0.2, -0.3], scale=[1.0, 0.5]),
     ("loc", "scale"), [0.2, 0.5, 0.3]),
    ("mixture-mvn", lambda D, p: D.MixtureSameFamily(
        D.Categorical(logits=p["mix"]), D.MultivariateNormal(p["loc"], scale_tril=p["tril"])),
     dict(mix=[0.3, -0.2], loc=[[0.0, 1.0], [1.0, -1.0]], tril=TRIL), ("mix", "loc", "tril"),
     [0.5, 0.5]),
    ("mixture-bernoulli", lambda D, p: D.MixtureSameFamily(
        D.Categorical(probs=p["mix"]), D.Bernoulli(probs=p["probs"])),
     dict(mix=[[0.3, 0.7], [0.5, 0.5]], probs=[[0.2, 0.9], [0.6, 0.1]]), ("mix", "probs"),
     [1.0, 0.0]),
]
ROWS = {row[0]: row for row in SPECS}
# Multinomial's entropy takes lgamma(total_count + 1) of an int64 tensor, in float32 (as torch)
RTOL = {"multinomial-probs": 2e-6}
CASES = [pytest.param(row[0], id=row[0]) for row in SPECS]


def params(T, row):
    """The row's parameters as ``T``'s tensors (float64; Python numbers stay numbers)."""
    _, _, values, grads, _ = row
    out = {}
    for name, v in values.items():
        if isinstance(v, (list, np.floating)):
            v = T.tensor(np.asarray(v, np.float64), requires_grad=name in grads)
        out[name] = v
    return out


def build(T, row, **kwargs):
    p = params(T, row)
    make = row[1]
    if callable(make):
        return make(T.distributions, p), p
    return getattr(T.distributions, make)(**p, **kwargs), p


def value_of(T, row):
    return T.tensor(np.asarray(row[4], np.float64))


def shown(x):
    """A result to compare: a tensor detached, with whether it requires grad (node names of
    the two libraries' composite formulas need not match)."""
    if isinstance(x, (torch.Tensor, tl.Tensor)):
        return x.detach(), x.requires_grad
    return x


def attempt(f):
    """f(), or the type name of what it raised (both libraries must raise alike)."""
    try:
        return shown(f())
    except (NotImplementedError, ValueError, RuntimeError) as e:
        return type(e).__name__


@pytest.mark.parametrize("name", CASES)
def test_values_and_gradients(name):
    row = ROWS[name]

    def run(T):
        d, p = build(T, row)
        v = value_of(T, row)
        support = d.support
        out = {
            "repr": repr(d),
            "shapes": (d.batch_shape, d.event_shape, d.has_rsample, d.has_enumerate_support),
            "support": (type(support).__name__, support.is_discrete, support.event_dim),
            "log_prob": shown(d.log_prob(v)),
            "in_support": shown(support.check(v)),
        }
        for attr in ("mean", "variance", "mode"):
            out[attr] = attempt(lambda: getattr(d, attr))
        out["entropy"] = attempt(d.entropy)
        if d.has_enumerate_support:
            out["enumerate"] = (shown(d.enumerate_support()),
                                d.enumerate_support(expand=False).shape)
        loss = d.log_prob(v).sum()
        if not isinstance(out["entropy"], str):
            loss = loss + d.entropy().sum()
        if loss.requires_grad:
            loss.backward()
        out["grads"] = {k: p[k].grad for k in row[3]}
        e = d.expand((2,) + tuple(d.batch_shape))
        out["expand"] = (e.batch_shape, e.event_shape)
        return out

    both(run, rtol=RTOL.get(name, 1e-9), atol=1e-11)


# Every row draws sample_shape (3,); these also draw () (each new shape is a new program).
SCALAR_SAMPLES = {"bernoulli-probs", "categorical-probs", "mvn-scale-tril", "mixture-mvn"}
# rows whose sampler is another row's, given other parameters
SAMPLED = [pytest.param(name, id=name) for name in ROWS if name not in
           {"binomial-logits", "geometric-logits", "mvn-covariance", "lowrank-mvn-batch"}]


@pytest.mark.parametrize("name", SAMPLED)
def test_samples(name):
    row = ROWS[name]

    def run(T):
        T.manual_seed(0)
        d, _ = build(T, row)
        out = []
        for shape in ((), (3,)) if name in SCALAR_SAMPLES else ((3,),):
            for method in ("sample", "rsample") if d.has_rsample else ("sample",):
                s = getattr(d, method)(shape)
                assert bool(d.support.check(s).all()), (method, s)
                out.append((s.shape, s.dtype, s.requires_grad))
        return out

    both(run)


def test_frequencies_and_moments():
    tl.manual_seed(1)
    D, n = tl.distributions, 20000
    assert D.Bernoulli(0.3).batch_shape == () and D.Bernoulli(0.3).probs.dtype is tl.float32
    probs = np.array([0.1, 0.2, 0.3, 0.4])
    idx = D.Categorical(tl.tensor(probs)).sample((n,)).numpy()
    check_frequencies(np.bincount(idx, minlength=4) / n, probs, n, "Categorical")
    counts = D.Multinomial(10, tl.tensor(probs)).sample((n // 10,)).numpy()
    check_frequencies(counts.sum(0) / n, probs, n, "Multinomial")
    x = D.Binomial(tl.tensor(20.0), tl.tensor(0.3)).sample((n,))
    pq = 0.3 * 0.7
    check_moments(x, 6.0, 20 * pq, 20 * pq * (1 + 3 * pq * 18), "Binomial")
    p = 0.25
    x = D.Geometric(tl.tensor(p)).sample((n,))
    var = (1 - p) / p ** 2
    check_moments(x, (1 - p) / p, var, var ** 2 * (9 + p * p / (1 - p)), "Geometric")
    mvn = D.MultivariateNormal(tl.tensor([1.0, -2.0]), tl.tensor(COV))
    x = mvn.rsample((n,)).numpy()
    for i in range(2):
        check_moments(x[:, i], mvn.mean[i].item(), COV[i][i], 3 * COV[i][i] ** 2, f"MVN[{i}]")
    y = x[:, 0] + x[:, 1]   # a sum of the two: its variance needs the covariance
    var = COV[0][0] + COV[1][1] + 2 * COV[0][1]
    check_moments(y, -1.0, var, 3 * var ** 2, "MVN sum")


def test_binomial_op():
    # (3, 2): the shape of test_samples' Binomial draws, whose program it shares
    same(lambda T: shown(T.binomial(
        T.tensor([[0.0, 4.0], [3.0, 5.0], [0.7, 2.5]], dtype=T.float64),
        T.tensor([[0.5, 1.0], [0.0, float("nan")], [0.99, 1.0]], dtype=T.float64))))
    same(lambda T: T.binomial(T.tensor([5]), T.tensor([0.5])), raises=True)
    same(lambda T: T.binomial(T.tensor([5.0]), T.tensor([0.5], dtype=T.float64)), raises=True)
    same(lambda T: T.binomial(T.tensor([5.0, 2.0]), T.tensor([0.3, 0.2, 0.1])), raises=True)

    def backward(T):
        c = T.full((3, 2), 3.0, dtype=T.float64, requires_grad=True)
        T.binomial(c, T.full((3, 2), 0.5, dtype=T.float64)).sum().backward()
    same(backward, raises=True)


# (class, parameters, value): validation errors, compared word for word with torch's
ERRORS = [
    ("Bernoulli", dict(probs=[0.5, 1.5]), None),
    ("Bernoulli", dict(logits=[0.0, float("nan")]), None),
    ("Bernoulli", dict(probs=[0.5]), [2.0]),
    ("Bernoulli", dict(probs=[0.5], logits=[0.0]), None),
    ("Binomial", dict(total_count=[2.5], probs=[0.5]), None),
    ("Binomial", dict(total_count=3, probs=[0.5]), [4.0]),
    ("Categorical", dict(probs=[0.5, -0.1, 0.6]), None),
    ("Categorical", dict(logits=[0.0, float("inf")]), None),
    ("Categorical", dict(probs=[0.5, 0.5]), [2.0]),
    ("Geometric", dict(probs=[0.0, 0.5]), None),
    ("Geometric", dict(probs=[0.5]), [1.5]),
    ("NegativeBinomial", dict(total_count=[2.0], probs=[1.0]), None),
    ("Poisson", dict(rate=[-1.0]), None),
    ("Poisson", dict(rate=[1.0]), [-1.0]),
    ("Multinomial", dict(total_count=2, probs=[0.5, 0.5]), [3.0, 0.0]),
    ("OneHotCategorical", dict(probs=[0.5, 0.5]), [1.0, 1.0]),
    ("MultivariateNormal", dict(loc=[0.0, 0.0], covariance_matrix=[[1.0, 2.0], [2.0, 1.0]]), None),
    ("MultivariateNormal", dict(loc=[0.0, 0.0], scale_tril=[[1.0, 0.5], [0.0, 1.0]]), None),
    ("LowRankMultivariateNormal", dict(loc=[0.0], cov_factor=[[1.0]], cov_diag=[-1.0]), None),
    ("LKJCholesky", dict(dim=2, concentration=[-1.0]), None),
    ("LKJCholesky", dict(dim=2), [[1.0, 0.0], [1.0, 1.0]]),
]


@pytest.mark.parametrize("cls,kwargs,value", ERRORS, ids=[f"{e[0]}-{i}" for i, e in
                                                        enumerate(ERRORS)])
def test_validation_errors(cls, kwargs, value):
    def run(T):
        p = {k: T.tensor(v, dtype=T.float64) if isinstance(v, list) else v
             for k, v in kwargs.items()}
        d = getattr(T.distributions, cls)(**p, validate_args=True)
        d.log_prob(T.tensor(value, dtype=T.float64))
    same(run, raises=True)


# KL pairs torch registers among these distributions: (p row, q row)
KL_PAIRS = [
    ("bernoulli-probs", "bernoulli-logits"),
    ("binomial-probs", "binomial-logits"),
    ("categorical-probs", "categorical-logits"),
    ("geometric-logits", "geometric-probs"),
    ("poisson", "poisson"),
    ("one-hot-probs", "one-hot-straight-through"),
    ("mvn-covariance", "mvn-scale-tril"),
    ("mvn-precision", "lowrank-mvn"),
    ("lowrank-mvn", "mvn-scale-tril"),
    ("lowrank-mvn", "lowrank-mvn-batch"),
    ("lowrank-mvn-batch", "mvn-covariance"),
    ("bernoulli-logits", "poisson"),
    ("poisson", "bernoulli-probs"),
    ("poisson", "binomial-probs"),
]


@pytest.mark.parametrize("p_name,q_name", KL_PAIRS, ids=[f"{p}|{q}" for p, q in KL_PAIRS])
def test_kl_divergence(p_name, q_name):
    def run(T):
        p, pp = build(T, ROWS[p_name])
        q, qp = build(T, ROWS[q_name])
        kl = T.distributions.kl_divergence(p, q)
        out = [shown(kl)]
        if kl.requires_grad and bool(T.isfinite(kl).all()):
            kl.sum().backward()
            out.append([t.grad for t in (*pp.values(), *qp.values())
                        if isinstance(t, (torch.Tensor, tl.Tensor)) and t.requires_grad])
        return out

    both(run, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("pair", ["mvn-event-shapes", "lowrank-event-shapes", "binomial-counts"])
def test_kl_errors(pair):
    def run(T):
        D = T.distributions
        tril2 = T.eye(2, dtype=T.float64)
        p = D.MultivariateNormal(T.zeros(2, dtype=T.float64), scale_tril=tril2)
        q = D.MultivariateNormal(T.zeros(3, dtype=T.float64), scale_tril=T.eye(3, dtype=T.float64))
        if pair == "lowrank-event-shapes":
            p = D.LowRankMultivariateNormal(T.zeros(2, dtype=T.float64), tril2,
                                            T.ones(2, dtype=T.float64))
        if pair == "binomial-counts":
            p = D.Binomial(T.tensor([2.0, 3.0]), T.tensor([0.5, 0.5]))
            q = D.Binomial(T.tensor([3.0, 3.0]), T.tensor([0.5, 0.5]))
        D.kl_divergence(p, q)
    same(run, raises=True)


@pytest.mark.parametrize("name,names", [
    ("binomial-logits", ("logits",)), ("lowrank-mvn", ("loc", "cov_factor", "cov_diag")),
    ("lkj-cholesky", ("concentration",))])
def test_gradcheck(name, names):
    row = ROWS[name]
    p = params(tl, row)
    v = value_of(tl, row)

    def f(*xs):
        d = getattr(tl.distributions, row[1])(**dict(p, **dict(zip(names, xs))),
                                               validate_args=False)
        return d.log_prob(v)

    assert tl.autograd.gradcheck(f, tuple(p[k] for k in names))


def test_reinforce_compiled_equals_eager():
    def run(compiled):
        tl.manual_seed(0)
        model = tl.nn.Linear(4, 3, dtype=tl.float64)
        opt = tl.optim.SGD(model.parameters(), lr=0.1)
        x = tl.tensor(np.linspace(-1, 1, 20).reshape(5, 4))
        advantage = tl.tensor([1.0, -0.5, 2.0, 0.3, -1.0], dtype=tl.float64)

        def step():
            opt.zero_grad()
            dist = tl.distributions.Categorical(logits=model(x))
            action = dist.sample()
            loss = -(dist.log_prob(action) * advantage).mean()
            loss.backward()
            opt.step()
            return loss.detach(), action

        step = tl.compile(step, fullgraph=True) if compiled else step
        results = [step() for _ in range(3)]
        return results, model.weight.detach().numpy()

    (eager, w_eager), (comp, w_comp) = run(False), run(True)
    for (le, ae), (lc, ac) in zip(eager, comp):
        np.testing.assert_array_equal(ac.numpy(), ae.numpy())
        np.testing.assert_allclose(lc.numpy(), le.numpy(), rtol=1e-12)
    np.testing.assert_allclose(w_comp, w_eager, rtol=1e-12)


CLASSES = ["Bernoulli", "Binomial", "Categorical", "Geometric", "NegativeBinomial", "Poisson",
           "Multinomial", "OneHotCategorical", "OneHotCategoricalStraightThrough",
           "RelaxedBernoulli", "RelaxedOneHotCategorical", "MultivariateNormal",
           "LowRankMultivariateNormal", "LKJCholesky", "Wishart", "MixtureSameFamily",
           "LogisticNormal", "relaxed_bernoulli.LogitRelaxedBernoulli",
           "relaxed_categorical.ExpRelaxedCategorical"]


@pytest.mark.parametrize("path", CLASSES)
def test_class_paths_and_constraints(path):
    def run(T):
        cls = T.distributions
        for part in path.split("."):
            cls = getattr(cls, part)
        bases = [b.__name__ for b in cls.__mro__]
        arg = cls.__dict__.get("arg_constraints")
        arg = {k: repr(c) for k, c in arg.items()} if isinstance(arg, dict) else None
        support = cls.__dict__.get("support")
        return (cls.__module__.split(".", 1)[1], cls.__qualname__, bases, arg,
                None if support is None or isinstance(support, property) else repr(support),
                cls.has_rsample, cls.has_enumerate_support)
    same(run)
