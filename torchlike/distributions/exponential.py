"""Mirrors ``torch.distributions.exponential``."""
from .._size import Size
from . import constraints
from .exp_family import ExponentialFamily
from .utils import _NUMBER, broadcast_all

__all__ = ["Exponential"]


class Exponential(ExponentialFamily):
    """Mirrors ``torch.distributions.exponential.Exponential``: the exponential distribution of
    ``rate`` (1 / scale).

    Args:
        rate (float or Tensor): the rate.
        validate_args (bool, optional): check the arguments against ``arg_constraints``.

    Example:
        >>> Exponential(torchlike.tensor([1.0])).sample().shape
        torch.Size([1])
    """
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = Size() if isinstance(rate, _NUMBER) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Exponential, _instance)
        batch_shape = Size(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        super(Exponential, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return self.rate.new_zeros(self.rate.shape)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        return self.rate.new_empty(shape).exponential_() / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value):
        return -(-value).log1p() / self.rate

    def entropy(self):
        return 1.0 - self.rate.log()

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -(-x).log()
