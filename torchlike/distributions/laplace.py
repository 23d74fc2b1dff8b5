"""Mirrors ``torch.distributions.laplace``."""
from .._info import finfo
from .._size import Size
from . import constraints
from .distribution import Distribution
from .utils import _NUMBER, broadcast_all

__all__ = ["Laplace"]


class Laplace(Distribution):
    """Mirrors ``torch.distributions.laplace.Laplace``: the Laplace distribution.

    Args:
        loc (float or Tensor): the mean.
        scale (float or Tensor): the scale.
        validate_args (bool, optional): check the arguments against ``arg_constraints``.

    Example:
        >>> Laplace(torchlike.tensor([0.0]), torchlike.tensor([1.0])).sample().shape
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
        new = self._get_checked_instance(Laplace, _instance)
        batch_shape = Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        super(Laplace, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return (2 ** 0.5) * self.scale

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        u = self.loc.new_empty(shape).uniform_(finfo(self.loc.dtype).eps - 1, 1)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        d = value - self.loc
        return 0.5 - 0.5 * d.sign() * (-d.abs() / self.scale).expm1()

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self):
        return 1 + (2 * self.scale).log()
