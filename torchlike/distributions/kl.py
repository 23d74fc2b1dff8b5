"""Mirrors ``torch.distributions.kl``: ``kl_divergence(p, q)`` dispatched on the two types, and
``register_kl`` to add a pair.

NOTE [ KL dispatch ]
The registry maps a few (type_p, type_q) pairs to functions.  ``kl_divergence`` looks up the
pair of the arguments' exact types in a memo; on a miss, every registered pair whose types are
superclasses of the arguments' matches, and the most specific match wins: the least pair in the
order "p's type first, then q's" (``_Match``).  When the least pair in the order "q's type
first" names another function, the choice is ambiguous: PyTorch warns (RuntimeWarning, naming
the pair to register to break the tie) and uses the first.  Registering clears the memo, since
a new pair may be more specific than one already chosen.
"""
import functools
import math
import warnings

from ..autograd import grad
from .exp_family import ExponentialFamily
from .independent import Independent
from .transformed_distribution import TransformedDistribution
from .utils import _sum_rightmost
# discrete and multivariate
from .._ops.join import broadcast_shapes
from ..linalg import solve_triangular
from ..nn.functional import softplus
from .bernoulli import Bernoulli
from .binomial import Binomial
from .categorical import Categorical
from .geometric import Geometric
from .lowrank_multivariate_normal import (LowRankMultivariateNormal, _batch_lowrank_logdet,
                                          _batch_lowrank_mahalanobis)
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson

__all__ = ["register_kl", "kl_divergence"]

_KL_REGISTRY = {}   # (type_p, type_q) -> function: what register_kl added
_KL_MEMOIZE = {}    # (type(p), type(q)) -> the function dispatch chose (or NotImplemented)


def register_kl(type_p, type_q):
    """Mirrors ``torch.distributions.kl.register_kl``: a decorator registering a function
    ``fun(p, q)`` that computes KL(p || q) for ``p`` of ``type_p`` and ``q`` of ``type_q``
    (subclasses included; the most specific registration wins, NOTE [ KL dispatch ]).

    Args:
        type_p (type): a Distribution subclass.
        type_q (type): a Distribution subclass.

    Returns:
        the decorator, which returns its function unchanged.

    Example::

        @register_kl(Normal, Normal)
        def kl_normal_normal(p, q):
            ...
    """
    for name, value in (("type_p", type_p), ("type_q", type_q)):
        if not isinstance(value, type):
            raise TypeError(f"Expected {name} to be a Distribution subclass but got {value}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()
        return fun
    return decorator


@functools.total_ordering
class _Match:
    """A tuple of types, ordered lexicographically by subclass: (A, B) <= (C, D) when A is a
    subclass of C, and, if A is C, B is a subclass of D."""
    __slots__ = ["types"]

    def __init__(self, *types):
        self.types = types

    def __eq__(self, other):
        return self.types == other.types

    def __le__(self, other):
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p, type_q):
    """The registered function most specific for (type_p, type_q), or NotImplemented."""
    matches = [(p, q) for p, q in _KL_REGISTRY if issubclass(type_p, p) and issubclass(type_q, q)]
    if not matches:
        return NotImplemented
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fun = _KL_REGISTRY[left_p, left_q]
    if left_fun is not _KL_REGISTRY[right_p, right_q]:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
                      f"Please register_kl({left_p.__name__}, {right_q.__name__})",
                      RuntimeWarning, stacklevel=2)
    return left_fun


def kl_divergence(p, q):
    r"""Mirrors ``torch.distributions.kl.kl_divergence``: KL(p || q) =
    :math:`\int p(x) \log \frac{p(x)}{q(x)} dx`, by the registered function for the two types.

    Args:
        p (Distribution): the first distribution.
        q (Distribution): the second distribution.

    Returns:
        Tensor of shape ``batch_shape``.

    Raises:
        NotImplementedError: when no registered pair matches the two types.

    Example:
        >>> kl_divergence(Normal(0.0, 1.0), Normal(1.0, 1.0))
        tensor(0.5000)
    """
    key = type(p), type(q)
    if key not in _KL_MEMOIZE:
        _KL_MEMOIZE[key] = _dispatch_kl(*key)
    fun = _KL_MEMOIZE[key]
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{p.__class__.__name__} and q type {q.__class__.__name__}")
    return fun(p, q)


def _infinite_like(tensor):
    """A tensor of +inf like ``tensor`` (KL of p against a q whose support misses p's)."""
    return tensor.new_full(tensor.shape, float("inf"))


def _x_log_x(tensor):
    """x * log(x), 0 at x = 0."""
    return tensor.xlogy(tensor)


def _batch_trace_XXT(bmat):
    """trace(X X^T) of each matrix of the batch ``bmat``."""
    n, m = bmat.size(-1), bmat.size(-2)
    return bmat.reshape(-1, m * n).pow(2).sum(-1).reshape(bmat.shape[:-2])


# ---- generic pairs (base) ----------------------------------------------------------------------

@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    """The Bregman divergence of the family's log normalizer between q's and p's natural
    parameters (one family only)."""
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential "
                                  "families cannot be computed using Bregman divergences")
    p_nparams = [np_.detach().requires_grad_() for np_ in p._natural_params]
    q_nparams = q._natural_params
    lg_normal = p._log_normalizer(*p_nparams)
    gradients = grad(lg_normal.sum(), p_nparams, create_graph=True)
    result = q._log_normalizer(*q_nparams) - lg_normal
    for pnp, qnp, g in zip(p_nparams, q_nparams, gradients):
        result -= _sum_rightmost((qnp - pnp) * g, len(q.event_shape))
    return result


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    """KL of the base distributions: a bijection applied to both leaves KL unchanged."""
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


# ---- discrete and multivariate -----------------------------------------------------------------

@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    # p log(p/q) + (1-p) log((1-p)/(1-q)) through softplus of the logits; a zero of q where p
    # has mass is infinite, a zero of p contributes nothing
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = t1.masked_fill(q.probs == 0, math.inf).masked_fill(p.probs == 0, 0)
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = t2.masked_fill(q.probs == 1, math.inf).masked_fill(p.probs == 1, 0)
    return t1 + t2


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    # n [p log(p/q) + (1-p) log((1-p)/(1-q))] for equal counts; infinite where p's count is
    # larger (p reaches values q cannot)
    if (p.total_count < q.total_count).any():
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is "
                                  "not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p()
                          - (-q.probs).log1p())
    return kl.masked_fill(p.total_count > q.total_count, math.inf)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = t.masked_fill((q.probs == 0).expand_as(t), math.inf)
    t = t.masked_fill((p.probs == 0).expand_as(t), 0)
    return t.sum(-1)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Poisson, Bernoulli)
@register_kl(Poisson, Binomial)
def _kl_poisson_infinity(p, q):
    return _infinite_like(p.rate)


# NOTE [ KL of multivariate normals ]: KL(p || q) = 1/2 [log det(Sq) - log det(Sp)
# + tr(Sq^-1 Sp) + (mq - mp)^T Sq^-1 (mq - mp) - n].  With Sq = Lq Lq^T the trace is
# ||Lq^-1 Fp||^2 for any factor Fp of Sp (Fp Fp^T = Sp); a low-rank Sq = W W^T + D takes
# Woodbury's Sq^-1 = D^-1 - A^T A (A = C^-1/2 W^T D^-1, NOTE [ low-rank covariance ]).

def _check_event_shapes(p, q, what):
    if p.event_shape != q.event_shape:
        # (torch's message carries the indentation of its continued source line)
        raise ValueError(f"KL-divergence between two {what} with{' ' * 26}different event "
                         "shapes cannot be computed")


def _woodbury_factor(q):
    """A with q's precision D^-1 - A^T A (NOTE [ KL of multivariate normals ])."""
    W, D = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag
    return solve_triangular(q._capacitance_tril, W.mT / D.unsqueeze(-2), upper=False)


def _lowrank_logdet(p):
    return _batch_lowrank_logdet(p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag,
                                 p._capacitance_tril)


def _lowrank_mahalanobis(q, x):
    return _batch_lowrank_mahalanobis(q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag,
                                      x, q._capacitance_tril)


def _tril_logdet(p):
    return 2 * p._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrankmultivariatenormal_lowrankmultivariatenormal(p, q):
    _check_event_shapes(p, q, "Low Rank Multivariate Normals")
    term1 = _lowrank_logdet(q) - _lowrank_logdet(p)
    term3 = _lowrank_mahalanobis(q, q.loc - p.loc)
    # tr(Sq^-1 Sp) = tr((D_q^-1 - A^T A)(D_p + W_p W_p^T))
    A = _woodbury_factor(q)
    pW, pD, qD = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag, q._unbroadcasted_cov_diag
    term2 = ((pD / qD).sum(-1) + _batch_trace_XXT(pW * qD.rsqrt().unsqueeze(-1))
             - _batch_trace_XXT(A * pD.sqrt().unsqueeze(-2)) - _batch_trace_XXT(A.matmul(pW)))
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_multivariatenormal_lowrankmultivariatenormal(p, q):
    _check_event_shapes(p, q, "(Low Rank) Multivariate Normals")
    term1 = _lowrank_logdet(q) - _tril_logdet(p)
    term3 = _lowrank_mahalanobis(q, q.loc - p.loc)
    # tr(Sq^-1 Sp) = tr((D_q^-1 - A^T A) Lp Lp^T)
    A = _woodbury_factor(q)
    pL, qD = p._unbroadcasted_scale_tril, q._unbroadcasted_cov_diag
    term2 = _batch_trace_XXT(pL * qD.rsqrt().unsqueeze(-1)) - _batch_trace_XXT(A.matmul(pL))
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrankmultivariatenormal_multivariatenormal(p, q):
    _check_event_shapes(p, q, "(Low Rank) Multivariate Normals")
    term1 = _tril_logdet(q) - _lowrank_logdet(p)
    term3 = _batch_mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    # tr(Sq^-1 Sp) = ||Lq^-1 W_p||^2 + ||Lq^-1 D_p^1/2||^2
    n = p.event_shape[0]
    batch = broadcast_shapes(q._unbroadcasted_scale_tril.shape[:-2],
                             p._unbroadcasted_cov_factor.shape[:-2])
    qL = q._unbroadcasted_scale_tril.expand(batch + (n, n))
    pW = p._unbroadcasted_cov_factor.expand(batch + (n, p.cov_factor.size(-1)))
    pD = p._unbroadcasted_cov_diag.sqrt().diag_embed().expand(batch + (n, n))
    term2 = (_batch_trace_XXT(solve_triangular(qL, pW, upper=False))
             + _batch_trace_XXT(solve_triangular(qL, pD, upper=False)))
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    _check_event_shapes(p, q, "Multivariate Normals")
    half_term1 = (q._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
                  - p._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1))
    n = p.event_shape[0]
    batch = broadcast_shapes(q._unbroadcasted_scale_tril.shape[:-2],
                             p._unbroadcasted_scale_tril.shape[:-2])
    qL = q._unbroadcasted_scale_tril.expand(batch + (n, n))
    pL = p._unbroadcasted_scale_tril.expand(batch + (n, n))
    term2 = _batch_trace_XXT(solve_triangular(qL, pL, upper=False))
    term3 = _batch_mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)

