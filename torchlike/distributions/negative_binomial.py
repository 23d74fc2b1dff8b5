"""torchlike.distributions.negative_binomial: mirrors ``torch.distributions.negative_binomial``."""
from .._ops.sampling import poisson
from .._size import Size
from ..autograd.grad_mode import no_grad
from ..nn.functional import logsigmoid
from . import constraints
from ._params import expand_params, init_probs_or_logits
from .distribution import Distribution
from .gamma import Gamma
from .utils import lazy_property, logits_to_probs, probs_to_logits

__all__ = ["NegativeBinomial"]


class NegativeBinomial(Distribution):
    """Mirrors ``torch.distributions.NegativeBinomial``: the number of successes of Bernoulli
    trials of probability ``probs`` before ``total_count`` failures.

    Args:
        total_count (float or Tensor): the number of failures to stop at (non-negative; a real
            number makes it a Gamma-Poisson mixture).
        probs (Tensor): the probability of success, in [0, 1).
        logits (Tensor): its log-odds (give one of ``probs`` and ``logits``).
        validate_args (bool, optional): whether to check parameters and values.

    Example:
        >>> m = NegativeBinomial(3.0, torchlike.tensor([0.4]))
        >>> m.sample().shape
        torch.Size([1])
    """
    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        init_probs_or_logits(self, probs, logits, total_count)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(NegativeBinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        expand_params(self, new, batch_shape)
        super(NegativeBinomial, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / (-self.logits).sigmoid()

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    @lazy_property
    def _gamma(self):
        # the Poisson rate's mixing distribution: Gamma(total_count, rate=(1 - p) / p)
        return Gamma(concentration=self.total_count, rate=(-self.logits).exp(),
                     validate_args=False)

    def sample(self, sample_shape=Size()):
        with no_grad():
            rate = self._gamma.sample(sample_shape=sample_shape)
            return poisson(rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        log_unnormalized_prob = n * logsigmoid(-self.logits) + value * logsigmoid(self.logits)
        log_normalization = -(n + value).lgamma() + (1.0 + value).lgamma() + n.lgamma()
        # total_count = value = 0 has probability 1 (lgamma(0) = inf on both sides)
        log_normalization = log_normalization.masked_fill(n + value == 0.0, 0.0)
        return log_unnormalized_prob - log_normalization
