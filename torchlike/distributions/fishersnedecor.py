"""Mirrors ``torch.distributions.fishersnedecor``."""
import math

from .._info import finfo
from .._ops.pointwise import where
from .._size import Size
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import _NUMBER, broadcast_all

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """Mirrors ``torch.distributions.fishersnedecor.FisherSnedecor``: the F-distribution of
    ``df1`` and ``df2`` degrees of freedom.

    Args:
        df1 (float or Tensor): the first degrees of freedom.
        df2 (float or Tensor): the second degrees of freedom.
        validate_args (bool, optional): check the arguments against ``arg_constraints``.

    Example:
        >>> FisherSnedecor(torchlike.tensor([1.0]), torchlike.tensor([2.0])).sample().shape
        torch.Size([1])
    """
    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        scalar = isinstance(df1, _NUMBER) and isinstance(df2, _NUMBER)
        super().__init__(Size() if scalar else self.df1.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(FisherSnedecor, _instance)
        batch_shape = Size(batch_shape)
        new.df1 = self.df1.expand(batch_shape)
        new.df2 = self.df2.expand(batch_shape)
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        super(FisherSnedecor, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        df2 = where(self.df2 <= 2, math.nan, self.df2)   # undefined for df2 <= 2
        return df2 / (df2 - 2)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return where(self.df1 <= 2, math.nan, mode)

    @property
    def variance(self):
        df2 = where(self.df2 <= 4, math.nan, self.df2)   # undefined for df2 <= 4
        return (2 * df2.pow(2) * (self.df1 + df2 - 2)
                / (self.df1 * (df2 - 2).pow(2) * (df2 - 4)))

    def rsample(self, sample_shape=Size(())):
        # X1 ~ Gamma(df1 / 2, 1 / df1), X2 ~ Gamma(df2 / 2, 1 / df2): X1 / X2 ~ F(df1, df2)
        shape = self._extended_shape(sample_shape)
        x1 = self._gamma1.rsample(sample_shape).view(shape)
        x2 = self._gamma2.rsample(sample_shape).view(shape)
        tiny = finfo(x2.dtype).tiny
        x2.clamp_(min=tiny)
        y = x1 / x2
        y.clamp_(min=tiny)
        return y

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        ct1, ct2, ct3 = self.df1 * 0.5, self.df2 * 0.5, self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * value.log()
        t3 = (ct1 + ct2) * (ct3 * value).log1p()
        return t1 + t2 - t3
