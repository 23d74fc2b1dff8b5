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
import warnings

from ..autograd import grad
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .independent import Independent
from .transformed_distribution import TransformedDistribution
from .utils import _sum_rightmost

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
