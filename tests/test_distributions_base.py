"""torchlike.distributions' base layer against torch.distributions: constraints, transforms,
biject_to / transform_to, the Distribution base class, ExponentialFamily, kl_divergence's
dispatch, Independent and TransformedDistribution.

The distributions under test are built over a small test-local Normal written once against the
public API of either library (``_normal_class(T)``), so the same subclass runs on torch's base
classes and on torchlike's; one test checks that local Normal against torch's own.  Every case
is a function of the library module ``T`` compared by tests/parity.py's ``both`` / ``same``.
"""
import math
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl
from parity import Raised, both, catch, same
from sample_stats import check_moments

F64 = "float64"


def _t(T, v, grad=False, dtype="float64"):
    return T.tensor(v, dtype=getattr(T, dtype), requires_grad=grad)


def _vals(x):
    """A result without its graph (values, dtype, shape, requires_grad), or what it raised."""
    if isinstance(x, Raised) or not hasattr(x, "detach"):
        return x
    return x.detach(), x.requires_grad


def _normal_class(T):
    """A Normal written against ``T``'s public API, as users subclass Distribution."""
    D = T.distributions

    class Normal(D.ExponentialFamily):
        arg_constraints = {"loc": D.constraints.real, "scale": D.constraints.positive}
        support = D.constraints.real
        has_rsample = True
        _mean_carrier_measure = 0

        def __init__(self, loc, scale, validate_args=None):
            self.loc, self.scale = D.utils.broadcast_all(loc, scale)
            super().__init__(self.loc.size(), validate_args=validate_args)

        def expand(self, batch_shape, _instance=None):
            new = self._get_checked_instance(Normal, _instance)
            new.loc = self.loc.expand(batch_shape)
            new.scale = self.scale.expand(batch_shape)
            super(Normal, new).__init__(T.Size(batch_shape), validate_args=False)
            new._validate_args = self._validate_args
            return new

        @property
        def mean(self):
            return self.loc

        @property
        def variance(self):
            return self.scale.pow(2)

        def rsample(self, sample_shape=()):
            shape = self._extended_shape(sample_shape)
            return self.loc + self.scale * T.randn(shape, dtype=self.loc.dtype)

        def log_prob(self, value):
            if self._validate_args:
                self._validate_sample(value)
            return (-((value - self.loc) ** 2) / (2 * self.variance) - self.scale.log()
                    - math.log(math.sqrt(2 * math.pi)))

        def cdf(self, value):
            return 0.5 * (1 + T.erf((value - self.loc) / (self.scale * math.sqrt(2))))

        def icdf(self, value):
            return self.loc + self.scale * T.erfinv(2 * value - 1) * math.sqrt(2)

        @property
        def _natural_params(self):
            return self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal()

        def _log_normalizer(self, x, y):
            return -0.25 * x.pow(2) / y + 0.5 * T.log(-math.pi / y)

    return Normal


NORMAL = {torch: _normal_class(torch), tl: _normal_class(tl)}


# ---- constraints ---------------------------------------------------------------------------------

def _c(name, *args):
    return lambda T: getattr(T.distributions.constraints, name)(*args) if args else \
        getattr(T.distributions.constraints, name)


CHECKS = [  # (id, constraint, value)
    ("boolean", _c("boolean"), [0.0, 1.0, 0.5]),
    ("one_hot", _c("one_hot"), [[0.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0]]),
    ("nonnegative_integer", _c("nonnegative_integer"), [-1.0, 0.0, 1.5, 3.0]),
    ("positive_integer", _c("positive_integer"), [0.0, 1.0, 2.0]),
    ("integer_interval", _c("integer_interval", 1, 3), [0.0, 1.0, 2.5, 3.0, 4.0]),
    ("real", _c("real"), [float("nan"), float("inf"), -1.0]),
    ("real_vector", _c("real_vector"), [[1.0, float("nan")], [1.0, 2.0]]),
    ("positive", _c("positive"), [-1.0, 0.0, 1.0]),
    ("nonnegative", _c("nonnegative"), [-1.0, 0.0, 1.0]),
    ("greater_than", _c("greater_than", 1.5), [1.0, 1.5, 2.0]),
    ("greater_than_eq", _c("greater_than_eq", 1.5), [1.0, 1.5, 2.0]),
    ("less_than", _c("less_than", 1.5), [1.0, 1.5, 2.0]),
    ("multinomial", _c("multinomial", 3), [[1.0, 2.0], [2.0, 2.0], [-1.0, 1.0]]),
    ("unit_interval", _c("unit_interval"), [-0.1, 0.0, 1.0, 1.1]),
    ("interval", _c("interval", -1.0, 2.0), [-1.0, 2.0, 2.5]),
    ("half_open_interval", _c("half_open_interval", 0.0, 1.0), [0.0, 0.5, 1.0]),
    ("simplex", _c("simplex"), [[0.2, 0.8], [0.5, 0.6], [-0.1, 1.1]]),
    ("lower_triangular", _c("lower_triangular"), [[[1.0, 0.0], [2.0, 3.0]],
                                                  [[1.0, 1.0], [0.0, 1.0]]]),
    ("lower_cholesky", _c("lower_cholesky"), [[[1.0, 0.0], [2.0, 3.0]], [[1.0, 0.0], [2.0, -3.0]]]),
    ("corr_cholesky", _c("corr_cholesky"), [[[1.0, 0.0], [0.6, 0.8]], [[1.0, 0.0], [0.5, 0.5]]]),
    ("square", _c("square"), [[1.0, 2.0], [3.0, 4.0]]),
    ("square_not", _c("square"), [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]),
    ("symmetric", _c("symmetric"), [[[1.0, 2.0], [2.0, 1.0]], [[1.0, 2.0], [3.0, 1.0]]]),
    ("positive_semidefinite", _c("positive_semidefinite"),
     [[[2.0, 1.0], [1.0, 2.0]], [[1.0, 2.0], [2.0, 1.0]], [[0.0, 0.0], [0.0, 0.0]]]),
    ("positive_definite", _c("positive_definite"),
     [[[2.0, 1.0], [1.0, 2.0]], [[1.0, 2.0], [2.0, 1.0]], [[0.0, 0.0], [0.0, 0.0]]]),
    ("positive_definite_mixed", _c("positive_definite"),   # torch's rule for a mixed batch
     [[[2.0, 1.0], [1.0, 2.0]], [[1.0, 2.0], [2.0, 1.0]], [[1.0, 2.0], [0.0, 1.0]]]),
    ("symmetric_not_square", _c("symmetric"), [[1.0, 2.0, 3.0], [2.0, 1.0, 0.0]]),
    ("independent", lambda T: T.distributions.constraints.independent(
        T.distributions.constraints.positive, 1), [[1.0, 2.0], [1.0, -1.0]]),
    ("independent_too_few", lambda T: T.distributions.constraints.independent(
        T.distributions.constraints.real_vector, 2), [1.0, 2.0]),
    ("cat", lambda T: T.distributions.constraints.cat(
        [T.distributions.constraints.positive, T.distributions.constraints.real], 0, [1, 2]),
     [-1.0, 0.0, 1.0]),
    ("stack", lambda T: T.distributions.constraints.stack(
        [T.distributions.constraints.positive, T.distributions.constraints.unit_interval], 1),
     [[1.0, 0.5], [-1.0, 2.0]]),
    ("mixture", lambda T: T.distributions.constraints.MixtureSameFamilyConstraint(
        T.distributions.constraints.positive), [1.0, -1.0]),
    ("dependent", _c("dependent"), [1.0]),
]


@pytest.mark.parametrize("make, value", [pytest.param(m, v, id=i) for i, m, v in CHECKS])
def test_constraint_check(make, value):
    def go(T):
        c = make(T)
        attrs = {k: catch(lambda: getattr(c, k)) for k in ("is_discrete", "event_dim")}
        return catch(lambda: c.check(_t(T, value))), repr(c), attrs
    ref, got = both(go)
    if isinstance(ref[0], Raised):
        assert str(got[0].exc) == str(ref[0].exc)


def test_constraint_singletons():
    """Every constraint object torch exports: class name, is_discrete, event_dim, repr."""
    names = [n for n in torch.distributions.constraints.__all__
             if isinstance(getattr(torch.distributions.constraints, n),
                           torch.distributions.constraints.Constraint)]
    assert len(names) > 15

    def go(T):
        C = T.distributions.constraints
        out = {n: (type(getattr(C, n)).__name__, repr(getattr(C, n)),
                   catch(lambda: getattr(C, n).is_discrete),
                   catch(lambda: getattr(C, n).event_dim)) for n in names}
        dep = C.dependent(is_discrete=True, event_dim=1)
        out["dependent(...)"] = (dep.is_discrete, dep.event_dim, C.is_dependent(dep),
                                 C.is_dependent(C.real))
        out["__all__"] = sorted(C.__all__)
        return out
    both(go)


def test_dependent_property():
    def go(T):
        C = T.distributions.constraints

        class U:
            def __init__(self, lo):
                self.lo = lo

            @C.dependent_property(is_discrete=False, event_dim=0)
            def support(self):
                return C.greater_than(self.lo)
        return (C.is_dependent(U.support), U.support.event_dim, U.support.is_discrete,
                repr(U(2.0).support))
    both(go)


# ---- transforms ----------------------------------------------------------------------------------

def _tr(name, *args, **kw):
    return lambda T: getattr(T.distributions.transforms, name)(*args, **kw)


def _tensor_args(name, *args, **kw):
    return lambda T: getattr(T.distributions.transforms, name)(
        *[_t(T, a) for a in args], **kw)


def _compose(T):
    TR = T.distributions.transforms
    return TR.ComposeTransform([TR.ExpTransform(), TR.AffineTransform(1.0, 2.0)])


def _cat(T):
    TR = T.distributions.transforms
    return TR.CatTransform([TR.ExpTransform(), TR.AffineTransform(0.0, 3.0)], 0, [1, 2])


def _cat_event(T):
    TR = T.distributions.transforms
    return TR.CatTransform([TR.IndependentTransform(TR.ExpTransform(), 1),
                            TR.AffineTransform(0.0, 2.0, event_dim=1)], 0, [1, 1])


def _stack(T):
    TR = T.distributions.transforms
    return TR.StackTransform([TR.ExpTransform(), TR.TanhTransform()], 1)


def _cdf(T):
    return T.distributions.transforms.CumulativeDistributionTransform(
        NORMAL[T](_t(T, 0.5), _t(T, 2.0)))


X3 = [-1.0, 0.25, 0.5]
X23 = [[-1.0, 0.25, 0.5], [0.3, -0.7, 1.2]]
POS3 = [0.5, 1.0, 2.0]
SQ = [[[0.3, -0.4], [1.1, -0.2]], [[-0.5, 2.0], [0.7, 0.1]]]

TRANSFORMS = [  # (id, transform, x)
    ("exp", _tr("ExpTransform"), X3),
    ("power", _tensor_args("PowerTransform", 2.5), POS3),
    ("power_neg", _tensor_args("PowerTransform", [-1.5, 0.5, 2.0]), POS3),
    ("sigmoid", _tr("SigmoidTransform"), X3),
    ("tanh", _tr("TanhTransform"), X3),
    ("softplus", _tr("SoftplusTransform"), X3),
    ("abs", _tr("AbsTransform"), X3),
    ("affine_number", _tr("AffineTransform", 1.0, -2.0), X3),
    ("affine_tensor_event", lambda T: T.distributions.transforms.AffineTransform(
        _t(T, [1.0, 2.0, 3.0]), _t(T, [0.5, -1.0, 2.0]), event_dim=1), X23),
    ("compose", _compose, X3),
    ("compose_empty", lambda T: T.distributions.transforms.identity_transform, X3),
    ("independent", lambda T: T.distributions.transforms.IndependentTransform(
        T.distributions.transforms.SigmoidTransform(), 1), X23),
    ("reshape", _tr("ReshapeTransform", (2, 3), (6,)), [X23, X23]),
    ("corr_cholesky", _tr("CorrCholeskyTransform"), X23),
    ("softmax", _tr("SoftmaxTransform"), X23),
    ("stick_breaking", _tr("StickBreakingTransform"), X23),
    ("lower_cholesky", _tr("LowerCholeskyTransform"), SQ),
    ("positive_definite", _tr("PositiveDefiniteTransform"), SQ),
    ("cat", _cat, X3),
    ("cat_event", _cat_event, X23),
    ("stack", _stack, [[-1.0, 0.2], [0.5, 1.5], [0.0, -0.3]]),
    ("cdf", _cdf, X3),
    ("inverse_sigmoid", lambda T: T.distributions.transforms.SigmoidTransform().inv,
     [0.2, 0.5, 0.9]),
    ("sigmoid_f32", _tr("SigmoidTransform"), [-20.0, 0.0, 17.0], "float32"),
]


@pytest.mark.parametrize("make, x, dtype", [pytest.param(m, v, *d or (F64,), id=i)
                                             for i, m, v, *d in TRANSFORMS])
def test_transform(make, x, dtype):
    """Forward, inverse and log|det J| values, their gradients w.r.t. x, and the transform's
    static description (domain, codomain, event dims, shapes, bijective, sign, reprs)."""
    def go(T):
        t = make(T)
        xt = _t(T, x, grad=True, dtype=dtype)
        y = t(xt)
        ladj = catch(lambda: t.log_abs_det_jacobian(xt, y))
        x_back = catch(lambda: t.inv(y))
        inv_ladj = catch(lambda: t.inv.log_abs_det_jacobian(y, xt))
        loss = y.sum() + (ladj.sum() if not isinstance(ladj, Raised) else 0) + \
            (x_back.pow(2).sum() if not isinstance(x_back, Raised) else 0)
        loss.backward()
        sign = catch(lambda: t.sign)
        return {"y": _vals(y), "x_back": _vals(x_back), "ladj": _vals(ladj),
                "inv_ladj": _vals(inv_ladj), "grad": xt.grad,
                "shapes": (tuple(t.forward_shape(xt.shape)), tuple(t.inv.inverse_shape(
                    xt.shape)), tuple(t.inverse_shape(y.shape))),
                "domain": (repr(t.domain), t.domain.event_dim),
                "codomain": (repr(t.codomain), t.codomain.event_dim),
                "in_codomain": t.codomain.check(y.detach()).all().item(),
                "bijective": t.bijective, "sign": _vals(sign),
                "repr": (repr(t), repr(t.inv)), "event_dim": catch(lambda: t.event_dim)}
    both(go, *((1e-9, 1e-11) if dtype == F64 else (1e-5, 1e-6)))


def test_transform_caching_and_identity():
    """NOTE [ transform caching ]: the cache answers the same object, inverses are kept, and
    the equality / with_cache / cache_size rules are torch's."""
    def go(T):
        TR = T.distributions.transforms
        x = _t(T, [0.5, 1.0])
        cached, plain = TR.ExpTransform(cache_size=1), TR.ExpTransform()
        y = cached(x)
        aff = TR.AffineTransform(1.0, 2.0)
        return {
            "same_y": cached(x) is y, "inv_is_x": cached.inv(y) is x,
            "inv_other": cached.inv(y.clone()) is x, "plain_new": plain(x) is plain(x),
            "inv_inv": plain.inv.inv is plain, "inv_kept": plain.inv is plain.inv,
            "with_cache": (type(plain.with_cache(1)).__name__, plain.with_cache(0) is plain,
                           plain.with_cache(1)._cache_size, plain.inv.with_cache(1)._cache_size,
                           aff.with_cache(1)._cache_size,
                           TR.ComposeTransform([plain, aff]).with_cache(1).parts[1]._cache_size),
            "bad_size": catch(lambda: TR.ExpTransform(cache_size=2)),
            "eq": (TR.ExpTransform() == TR.ExpTransform(), aff == TR.AffineTransform(1.0, 2.0),
                   aff == TR.AffineTransform(1.0, 3.0), plain.inv == TR.ExpTransform().inv,
                   TR.ComposeTransform([plain]) == TR.ComposeTransform([TR.ExpTransform()]),
                   TR.PowerTransform(_t(T, 2.0)) == TR.PowerTransform(_t(T, 2.0)),
                   plain != TR.SigmoidTransform()),
            "compose_inv": (repr(TR.ComposeTransform([plain, aff]).inv),
                            TR.ComposeTransform([plain]).inv.inv is not None),
            "event_dim_mismatch": catch(lambda: TR.CorrCholeskyTransform().event_dim),
            "reshape_bad": catch(lambda: TR.ReshapeTransform((2, 3), (5,))),
            "reshape_shape": catch(lambda: TR.ReshapeTransform((2, 3), (6,)).forward_shape(
                (4, 3, 2))),
            "corr_shape": catch(lambda: TR.CorrCholeskyTransform().forward_shape((4,))),
            "cat_bad": catch(lambda: _cat(T)(_t(T, [1.0, 2.0]))),
            "stack_bad": catch(lambda: _stack(T)(_t(T, [[1.0, 2.0, 3.0]]))),
            "ind_few": catch(lambda: TR.IndependentTransform(TR.ExpTransform(), 2)(x)),
            "__all__": (sorted(TR.__all__), sorted(T.distributions.constraint_registry.__all__),
                        sorted(T.distributions.kl.__all__)),
        }
    ref, got = both(go)
    for k in ("bad_size", "event_dim_mismatch", "reshape_bad", "reshape_shape", "corr_shape",
              "cat_bad", "stack_bad", "ind_few"):
        assert str(got[k].exc) == str(ref[k].exc), k


# ---- biject_to / transform_to ------------------------------------------------------------------

REGISTERED = [  # (id, constraint, unconstrained x)
    ("real", _c("real"), X3),
    ("real_vector", _c("real_vector"), X23),
    ("positive", _c("positive"), X3),
    ("nonnegative", _c("nonnegative"), X3),
    ("greater_than", _c("greater_than", 2.0), X3),
    ("greater_than_eq", _c("greater_than_eq", -1.0), X3),
    ("less_than", _c("less_than", 3.0), X3),
    ("interval", _c("interval", -1.0, 2.0), X3),
    ("half_open_interval", _c("half_open_interval", 0, 1), X3),
    ("unit_interval", _c("unit_interval"), X3),
    ("simplex", _c("simplex"), X23),
    ("lower_cholesky", _c("lower_cholesky"), SQ),
    ("positive_definite", _c("positive_definite"), SQ),
    ("positive_semidefinite", _c("positive_semidefinite"), SQ),
    ("corr_cholesky", _c("corr_cholesky"), X23),
    ("cat", lambda T: T.distributions.constraints.cat(
        [T.distributions.constraints.positive, T.distributions.constraints.interval(0.0, 2.0)],
        0, [1, 2]), X3),
    ("stack", lambda T: T.distributions.constraints.stack(
        [T.distributions.constraints.positive, T.distributions.constraints.unit_interval], 1),
     [[-1.0, 0.2], [0.5, 1.5]]),
    ("integer", _c("nonnegative_integer"), X3),
]


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("make, x", [pytest.param(m, v, id=i) for i, m, v in REGISTERED])
def test_biject_to_transform_to(registry, make, x):
    """The same transform as torch's for every registered constraint; its output satisfies the
    constraint and (bijections) comes back to x."""
    def go(T):
        c = make(T)
        t = catch(lambda: getattr(T.distributions, registry)(c))
        if isinstance(t, Raised):
            return t
        xt = _t(T, x)
        y = t(xt)
        out = {"repr": repr(t), "bijective": t.bijective, "y": y,
               "in_support": c.check(y).all().item()}
        if t.bijective:
            out["x_back"] = t.inv(y)
        return out
    ref, got = both(go, rtol=1e-9, atol=1e-11, raises=None)
    if isinstance(ref, Raised):
        assert str(got.exc) == str(ref.exc)
    else:
        assert ref["in_support"]
        if "x_back" in ref:
            np.testing.assert_allclose(ref["x_back"].numpy(), x, rtol=1e-9)


def test_constraint_registry_register():
    def go(T):
        D = T.distributions
        reg = D.constraint_registry.ConstraintRegistry()
        reg.register(D.constraints.positive, lambda c: D.transforms.ExpTransform())
        return (repr(reg(D.constraints.greater_than(3.0))), catch(lambda: reg(D.constraints.real)),
                catch(lambda: reg.register(3, lambda c: None)))
    same(go)


# ---- Distribution, ExponentialFamily, validation -------------------------------------------------

def test_local_normal_matches_torch():
    """The oracle: the test-local Normal (over torchlike) against torch's own Normal: its
    formulas, and ExponentialFamily's Bregman entropy and KL against the closed forms."""
    def go(T):
        loc, scale = _t(T, [0.3, -1.0], grad=True), _t(T, [0.5, 2.0], grad=True)
        N = torch.distributions.Normal if T is torch else NORMAL[T]
        p, q = N(loc, scale), N(_t(T, 1.0), _t(T, 1.5))
        v = _t(T, [[0.1, 0.2], [2.0, -3.0]])
        lp, cdf, icdf = p.log_prob(v), p.cdf(v), p.icdf(_t(T, 0.3))
        (lp.sum() + cdf.sum() + icdf.sum()).backward()
        return [_vals(a) for a in (lp, cdf, icdf, p.entropy(), T.distributions.kl_divergence(
            p, q), p.mean, p.stddev, p.perplexity())] + [loc.grad, scale.grad]
    both(go, rtol=1e-9, atol=1e-11)


def test_exponential_family_gradients():
    """Bregman entropy and KL differentiate as torch's: through q's parameters, not p's (whose
    natural parameters are detached to differentiate the log normalizer)."""
    def go(T):
        loc, scale = _t(T, [0.3, -1.0], grad=True), _t(T, [0.5, 2.0], grad=True)
        qloc, qscale = _t(T, 1.0, grad=True), _t(T, 1.5, grad=True)
        p, q = NORMAL[T](loc, scale), NORMAL[T](qloc, qscale)
        ent, kl = p.entropy(), T.distributions.kl_divergence(p, q)
        (ent.sum() + kl.sum()).backward()
        return _vals(ent), _vals(kl), loc.grad, scale.grad, qloc.grad, qscale.grad
    both(go, rtol=1e-9, atol=1e-11)


VALIDATION = [  # (id, case) -- the message must be torch's, character for character
    ("bad_param", lambda T, N: N(_t(T, 0.0), _t(T, -1.0))),
    ("bad_param_vector", lambda T, N: N(_t(T, [0.0, 1.0]), _t(T, [1.0, 0.0]))),
    ("bad_value", lambda T, N: N(_t(T, 0.0), _t(T, 1.0)).log_prob(_t(T, [float("nan"), 1.0]))),
    ("not_tensor", lambda T, N: N(_t(T, 0.0), _t(T, 1.0)).log_prob(1.0)),
    ("not_broadcastable", lambda T, N: N(_t(T, [0.0, 1.0]), _t(T, 1.0)).log_prob(
        _t(T, [1.0, 2.0, 3.0]))),
    ("event_shape", lambda T, N: T.distributions.Independent(
        N(_t(T, [0.0, 1.0]), _t(T, 1.0)), 1).log_prob(_t(T, [1.0, 2.0, 3.0]))),
    ("independent_ndims", lambda T, N: T.distributions.Independent(N(_t(T, 0.0), _t(T, 1.0)), 1)),
    ("transforms_type", lambda T, N: T.distributions.TransformedDistribution(
        N(_t(T, 0.0), _t(T, 1.0)), "exp")),
    ("transforms_list", lambda T, N: T.distributions.TransformedDistribution(
        N(_t(T, 0.0), _t(T, 1.0)), ["exp"])),
    ("set_default", lambda T, N: T.distributions.Distribution.set_default_validate_args("yes")),
    ("enumerate_independent", lambda T, N: T.distributions.Independent(
        N(_t(T, [0.0]), _t(T, 1.0)), 1).enumerate_support()),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=i) for i, c in VALIDATION])
def test_validation_errors(case):
    same(lambda T: case(T, NORMAL[T]), raises=True)


def test_validation_switches():
    """validate_args=False and set_default_validate_args(False) skip the checks; lazily derived
    parameters are not checked (nor computed) at construction."""
    def go(T):
        D, N = T.distributions, NORMAL[T]
        off = N(_t(T, 0.0), _t(T, -1.0), validate_args=False).log_prob(_t(T, 0.5))
        D.Distribution.set_default_validate_args(False)
        try:
            default_off = N(_t(T, 0.0), _t(T, -1.0))._validate_args
        finally:
            D.Distribution.set_default_validate_args(True)

        class Lazy(D.Distribution):
            arg_constraints = {"rate": D.constraints.positive}

            def __init__(self, log_rate):
                self.log_rate = log_rate
                super().__init__()

            @D.utils.lazy_property
            def rate(self):
                return self.log_rate.exp()
        lazy = Lazy(_t(T, 0.5))
        return (off, default_off, "rate" in lazy.__dict__, lazy.rate, "rate" in lazy.__dict__,
                isinstance(Lazy.rate, property))
    both(go)


def _messages(T, fn):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        fn(T)
    return [(w.category.__name__, str(w.message).replace("torchlike.", "torch.")) for w in seen]


def test_distribution_base_behaviour():
    """Shapes, expand, repr, sample_n's warning, the base class's abstract members and the
    messages that name the class (torch's module paths, with torchlike for torch)."""
    def go(T):
        D, N = T.distributions, NORMAL[T]
        n = N(_t(T, [0.0, 1.0]), _t(T, [1.0, 2.0]))

        class NoConstraints(D.Distribution):
            pass

        class OwnInit(N):
            def __init__(self):
                super().__init__(_t(T, 0.0), _t(T, 1.0))
        base = D.Distribution(validate_args=False)
        return {
            "shapes": (n.batch_shape, n.event_shape, n._extended_shape((3,)),
                       n.sample((4,)).shape, n.rsample().requires_grad, n.sample().requires_grad),
            "expand": (n.expand((3, 2)).batch_shape, n.expand((3, 2)).loc,
                       n.expand(T.Size((3, 2)))._validate_args),
            "repr": (repr(n), repr(N(_t(T, 0.5), _t(T, 1.5))), repr(n.expand((3, 2)))),
            "sample_n": _messages(T, lambda T: n.sample_n(2)),
            "no_constraints": _messages(T, lambda T: NoConstraints()),
            "no_support": _messages(T, lambda T: NoConstraints()._validate_sample(_t(T, 1.0))),
            "own_init": catch(lambda: OwnInit().expand((2,))),
            "abstract": [catch(lambda: getattr(base, k)) for k in
                         ("mean", "variance", "support", "arg_constraints", "stddev")],
            "mode": str(catch(lambda: base.mode).exc).replace("torchlike.", "torch."),
            "methods": [catch(lambda: getattr(base, k)(_t(T, 0.5))) for k in
                        ("log_prob", "cdf", "icdf", "expand")],
            "flags": (base.has_rsample, base.has_enumerate_support, base.batch_shape),
            "module": (D.Distribution.__module__.replace("torchlike.", "torch."),
                       D.ExponentialFamily.__module__.replace("torchlike.", "torch."),
                       D.Independent.__module__.replace("torchlike.", "torch."),
                       D.TransformedDistribution.__module__.replace("torchlike.", "torch."),
                       D.ExpTransform.__module__.replace("torchlike.", "torch.")),
        }
    ref, got = both(go)
    assert str(got["own_init"].exc) == str(ref["own_init"].exc)


# ---- kl_divergence dispatch ------------------------------------------------------------------

def test_kl_dispatch():
    """The most specific registration wins; an ambiguous pair warns (naming the pair to
    register) and uses the p-first choice; registering clears the memo; no match raises."""
    def go(T):
        D = T.distributions
        kl = D.kl

        class A(D.Distribution):
            arg_constraints = {}

        class B(A):
            pass

        class C(A):
            pass
        added = [(A, A), (B, A), (A, C), (B, C)]
        try:
            D.register_kl(A, A)(lambda p, q: "AA")
            first = D.kl_divergence(B(), C())
            D.register_kl(B, A)(lambda p, q: "BA")
            D.register_kl(A, C)(lambda p, q: "AC")
            ambiguous = _messages(T, lambda T: D.kl_divergence(B(), C()))
            chosen = D.kl_divergence(B(), C())
            D.register_kl(B, C)(lambda p, q: "BC")
            tie_broken = D.kl_divergence(B(), C())
            missing = catch(lambda: D.kl_divergence(A(), NORMAL[T](0.0, 1.0)))
            bad = catch(lambda: D.register_kl(3, A))
        finally:
            for pair in added:
                kl._KL_REGISTRY.pop(pair, None)
            kl._KL_MEMOIZE.clear()
        return first, ambiguous, chosen, tie_broken, missing, type(bad.exc)
    ref, got = both(go)
    assert str(got[4].exc) == str(ref[4].exc)


# ---- Independent and TransformedDistribution ---------------------------------------------------

def test_independent():
    def go(T):
        D, N = T.distributions, NORMAL[T]
        loc = _t(T, [[0.0, 1.0, -1.0], [0.5, 0.2, 0.3]], grad=True)
        scale = _t(T, [[1.0, 2.0, 0.5], [1.5, 0.7, 0.9]], grad=True)
        d = D.Independent(N(loc, scale), 1)
        v = _t(T, [[[0.1, 0.2, 0.3], [1.0, -1.0, 0.5]]] * 2)
        lp, ent = d.log_prob(v), d.entropy()
        kl = D.kl_divergence(d, D.Independent(N(_t(T, 0.0), _t(T, 1.0)).expand((2, 3)), 1))
        (lp.sum() + ent.sum() + kl.sum()).backward()
        e = d.expand((4, 2))
        return {"values": [_vals(a) for a in (lp, ent, kl, d.mean, d.variance, d.stddev)],
                "grads": (loc.grad, scale.grad),
                "shapes": (d.batch_shape, d.event_shape, d.sample((5,)).shape,
                           d.rsample().shape, e.batch_shape, e.event_shape,
                           e.log_prob(v[0]).shape, e.base_dist.batch_shape),
                "flags": (d.has_rsample, d.has_enumerate_support, repr(d.support), repr(d),
                          repr(D.Independent(N(loc, scale), 0).support))}
    both(go, rtol=1e-9, atol=1e-11)


def _lognormal(T, loc, scale, *more):
    D = T.distributions
    return D.TransformedDistribution(NORMAL[T](loc, scale),
                                     [D.ExpTransform(), D.AffineTransform(1.0, -2.0), *more])


def test_transformed_distribution():
    def go(T):
        D = T.distributions
        loc, scale = _t(T, [0.0, 0.5], grad=True), _t(T, [1.0, 0.3], grad=True)
        d = _lognormal(T, loc, scale)
        v = _t(T, [[-0.5, -2.0], [0.0, -1.0]])
        lp, cdf, icdf = d.log_prob(v), d.cdf(v), d.icdf(_t(T, [0.2, 0.7]))
        kl = D.kl_divergence(d, _lognormal(T, _t(T, 1.0), _t(T, 2.0)))
        (lp.sum() + cdf.sum() + icdf.sum() + kl.sum()).backward()
        e = d.expand((3, 2))
        simplex = D.TransformedDistribution(NORMAL[T](_t(T, [0.0, 1.0, -1.0]), _t(T, 1.0)),
                                            D.StickBreakingTransform())
        sv = _t(T, [[0.2, 0.3, 0.4, 0.1]])
        broadcast = D.TransformedDistribution(NORMAL[T](_t(T, 0.0), _t(T, 1.0)),
                                              D.AffineTransform(_t(T, [1.0, 2.0]), 3.0))
        return {"values": [_vals(a) for a in (lp, cdf, icdf, kl, simplex.log_prob(sv))],
                "grads": (loc.grad, scale.grad),
                "shapes": (d.batch_shape, d.event_shape, d.sample((4,)).shape,
                           e.batch_shape, e.log_prob(v[0]).shape, simplex.batch_shape,
                           simplex.event_shape, simplex.sample().shape,
                           type(simplex.base_dist).__name__, broadcast.batch_shape,
                           broadcast.base_dist.batch_shape),
                "support": (repr(d.support), repr(simplex.support), d.has_rsample,
                            d.sample().requires_grad, d.rsample().requires_grad),
                "not_same_kl": catch(lambda: D.kl_divergence(
                    d, D.TransformedDistribution(NORMAL[T](loc, scale), D.ExpTransform())))}
    both(go, rtol=1e-9, atol=1e-11)


def test_sampling_through_transforms():
    """rsample of exp(N(mu, sigma)) has the log-normal's moments, draws are reproducible under
    manual_seed, and the reparameterized gradient is d/dmu sum(y) = sum(y)."""
    D = tl.distributions
    mu, sigma = 0.2, 0.4
    loc = tl.tensor(mu, dtype=tl.float64, requires_grad=True)
    d = D.TransformedDistribution(NORMAL[tl](loc, tl.tensor(sigma, dtype=tl.float64)),
                                  D.ExpTransform())
    tl.manual_seed(5)
    y = d.rsample((4000,))
    tl.manual_seed(5)
    again = d.sample((4000,))
    assert np.array_equal(y.detach().numpy(), again.numpy())
    m = math.exp(mu + sigma ** 2 / 2)
    var = (math.exp(sigma ** 2) - 1) * math.exp(2 * mu + sigma ** 2)
    raw = [math.exp(k * mu + k * k * sigma ** 2 / 2) for k in range(5)]
    mu4 = raw[4] - 4 * m * raw[3] + 6 * m ** 2 * raw[2] - 3 * m ** 4
    check_moments(y.detach(), m, var, mu4, "lognormal")
    y.sum().backward()
    np.testing.assert_allclose(loc.grad.item(), y.sum().item(), rtol=1e-12)
    assert bool(d.support.check(y).all())


def test_compiled_log_prob_and_validation():
    """log_prob of a TransformedDistribution traces under torchlike.compile (same values as
    eager) and torchlike.func.grad (same gradient as .backward()), and a parameter outside its
    constraint raises from the compiled program (NOTE [ validation while tracing ])."""
    def lp(scale):
        return _lognormal(tl, tl.tensor(0.1, dtype=tl.float64), scale).log_prob(
            tl.tensor([-0.5, -1.0], dtype=tl.float64))
    step = tl.compile(lp)
    s = tl.tensor(0.7, dtype=tl.float64)
    np.testing.assert_allclose(step(s).numpy(), lp(s).numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match="Expected parameter scale .* of distribution Normal "
                                         "to satisfy the constraint GreaterThan"):
        step(tl.tensor(-0.7, dtype=tl.float64))
    s.requires_grad_()
    lp(s).sum().backward()
    np.testing.assert_allclose(tl.func.grad(lambda v: lp(v).sum())(s.detach()).numpy(),
                               s.grad.numpy(), rtol=1e-12)
