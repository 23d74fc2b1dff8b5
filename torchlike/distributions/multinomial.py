"""torchlike.distributions.multinomial: mirrors ``torch.distributions.multinomial``."""
import math

from .. import _creation as C
from .._size import Size
from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """Mirrors ``torch.distributions.Multinomial``: the counts of each of ``K`` categories in
    ``total_count`` draws from ``Categorical(probs, logits)``.  ``log_prob`` takes any counts
    (``total_count`` need not match); ``sample`` and ``entropy`` use ``total_count``.

    Args:
        total_count (int): the number of draws.
        probs (Tensor): event probabilities (normalized along the last dimension).
        logits (Tensor): unnormalized event log-probabilities (give one of the two).
        validate_args (bool, optional): whether to check parameters and values.

    Example:
        >>> m = Multinomial(100, torchlike.tensor([1., 1., 1., 1.]))
        >>> m.sample().sum()
        tensor(100.)
    """
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        super(Multinomial, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self):
        return self._categorical.param_shape

    def sample(self, sample_shape=Size()):
        sample_shape = Size(sample_shape)
        samples = self._categorical.sample(Size((self.total_count,)) + sample_shape)
        # the draws' dimension last, then counted per category
        samples = samples.permute(*range(1, samples.dim()), 0)
        counts = C.zeros(self._extended_shape(sample_shape), dtype=samples.dtype,
                         device=samples.device)
        counts.scatter_add_(-1, samples, C.ones_like(samples))
        return counts.type_as(self.probs)

    def entropy(self):
        # NOTE: as torch, lgamma(n + 1) of the int64 count is taken in the default dtype.
        n = C.tensor(self.total_count)
        term1 = n * self._categorical.entropy() - (n + 1).lgamma()
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = self._binomial.log_prob(support).exp()
        term2 = (binomial_probs * (support + 1).lgamma()).sum([0, -1])
        return term1 + term2

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = (value.sum(-1) + 1).lgamma()
        log_factorial_xs = (value + 1).lgamma().sum(-1)
        # a category of probability 0 drawn 0 times contributes 0 * -inf := 0
        logits = logits.masked_fill((value == 0) & (logits == -math.inf), 0)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)
