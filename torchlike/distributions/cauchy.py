"""Mirrors ``torch.distributions.cauchy``."""
import math

from .. import _creation as C
from .._size import Size
from . import constraints
from .distribution import Distribution
from .utils import _NUMBER, broadcast_all

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    """Mirrors ``torch.distributions.cauchy.Cauchy``: the Cauchy (Lorentz) distribution, the
    ratio of two independent standard normals.

    Args:
        loc (float or Tensor): the mode or median.
        scale (float or Tensor): the half width at half maximum.
        validate_args (bool, optional): check the arguments against ``arg_constraints``.

    Example:
        >>> Cauchy(torchlike.tensor([0.0]), torchlike.tensor([1.0])).sample().shape
        torch.Size([1])
    """
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        scalar = isinstance(loc, _NUMBER) and isinstance(scale, _NUMBER)
        super().__init__(Size() if scalar else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Cauchy, _instance)
        batch_shape = Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        super(Cauchy, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return C.full(self._extended_shape(), math.nan, dtype=self.loc.dtype,
                      device=self.loc.device)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return C.full(self._extended_shape(), math.inf, dtype=self.loc.dtype,
                      device=self.loc.device)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps = self.loc.new_empty(shape).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (-math.log(math.pi) - self.scale.log()
                - (((value - self.loc) / self.scale) ** 2).log1p())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value):
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
