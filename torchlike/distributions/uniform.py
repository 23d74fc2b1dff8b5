"""Mirrors ``torch.distributions.uniform``."""
import math

from .._random import rand
from .._size import Size
from . import constraints
from .distribution import Distribution
from .utils import _NUMBER, broadcast_all

__all__ = ["Uniform"]


class Uniform(Distribution):
    """Mirrors ``torch.distributions.uniform.Uniform``: uniform on the half-open interval
    ``[low, high)``.

    Args:
        low (float or Tensor): the lower bound (inclusive).
        high (float or Tensor): the upper bound (exclusive).
        validate_args (bool, optional): check the arguments against ``arg_constraints``.

    Example:
        >>> Uniform(torchlike.tensor([0.0]), torchlike.tensor([5.0])).sample().shape
        torch.Size([1])
    """
    has_rsample = True

    @property
    def arg_constraints(self):
        return {"low": constraints.less_than(self.high),
                "high": constraints.greater_than(self.low)}

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        scalar = isinstance(low, _NUMBER) and isinstance(high, _NUMBER)
        super().__init__(Size() if scalar else self.low.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Uniform, _instance)
        batch_shape = Size(batch_shape)
        new.low = self.low.expand(batch_shape)
        new.high = self.high.expand(batch_shape)
        super(Uniform, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return math.nan * self.high

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        u = rand(shape, dtype=self.low.dtype, device=self.low.device)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lb = self.low.le(value).type_as(self.low)
        ub = self.high.gt(value).type_as(self.low)
        return lb.mul(ub).log() - (self.high - self.low).log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return (self.high - self.low).log()
