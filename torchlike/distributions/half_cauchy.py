"""Mirrors ``torch.distributions.half_cauchy``."""
import math

from .. import _creation as C
from .._ops.pointwise import where
from . import constraints
from .cauchy import Cauchy
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["HalfCauchy"]


class HalfCauchy(TransformedDistribution):
    """Mirrors ``torch.distributions.half_cauchy.HalfCauchy``: ``|X|`` for
    ``X ~ Cauchy(0, scale)``.

    Args:
        scale (float or Tensor): the scale of the full Cauchy distribution.
        validate_args (bool, optional): check the arguments against ``arg_constraints``.

    Example:
        >>> HalfCauchy(torchlike.tensor([1.0])).sample().shape
        torch.Size([1])
    """
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        base_dist = Cauchy(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return C.full(self._extended_shape(), math.inf, dtype=self.scale.dtype,
                      device=self.scale.device)

    @property
    def mode(self):
        return C.zeros_like(self.scale)

    @property
    def variance(self):
        return self.base_dist.variance

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = C.as_tensor(value, dtype=self.base_dist.scale.dtype,
                            device=self.base_dist.scale.device)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return where(value >= 0, log_prob, -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)
