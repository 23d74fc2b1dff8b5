"""torchlike.distributions.logistic_normal: mirrors ``torch.distributions.logistic_normal``."""
from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import StickBreakingTransform

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    """Mirrors ``torch.distributions.LogisticNormal``: a point of the simplex, the
    stick-breaking transform of a Normal(loc, scale) vector (``K - 1`` normals give ``K``
    probabilities)::

        X ~ LogisticNormal(loc, scale)
        Y = log(X / (1 - X.cumsum(-1)))[..., :-1] ~ Normal(loc, scale)

    Args:
        loc (float or Tensor): the mean of the base distribution.
        scale (float or Tensor): its standard deviation.
        validate_args (bool, optional): whether to check parameters and values.

    Example:
        >>> m = LogisticNormal(torchlike.tensor([0., 0., 0.]), torchlike.tensor([1., 1., 1.]))
        >>> m.sample().shape
        torch.Size([4])
    """
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale
