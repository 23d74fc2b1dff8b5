"""Mirrors ``torch.distributions.studentT``."""
import math

from .._ops.pointwise import where
from .._size import Size
from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Mirrors ``torch.distributions.studentT.StudentT``: Student's t-distribution of ``df``
    degrees of freedom, location ``loc`` and scale ``scale``.

    Args:
        df (float or Tensor): the degrees of freedom.
        loc (float or Tensor): the location (default 0).
        scale (float or Tensor): the scale (default 1).
        validate_args (bool, optional): check the arguments against ``arg_constraints``.

    Example:
        >>> StudentT(torchlike.tensor([2.0])).sample().shape
        torch.Size([1])
    """
    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = Size(batch_shape)
        new.df = self.df.expand(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new._chi2 = self._chi2.expand(batch_shape)
        super(StudentT, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return where(self.df <= 1, math.nan, self.loc)   # undefined for df <= 1

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        # scale^2 df / (df - 2) for df > 2, inf for 1 < df <= 2, undefined below
        df = where(self.df > 2, self.df, 3.0)   # a finite branch where it is not taken
        finite = self.scale.pow(2) * df / (df - 2)
        return where(self.df > 2, finite, where(self.df > 1, math.inf, math.nan))

    def rsample(self, sample_shape=Size()):
        # X ~ Normal(0, 1), Z ~ Chi2(df): Y = X / sqrt(Z / df) ~ StudentT(df)
        shape = self._extended_shape(sample_shape)
        x = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * (x * (z / self.df).rsqrt())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + (0.5 * self.df).lgamma() - (0.5 * (self.df + 1.0)).lgamma())
        return -0.5 * (self.df + 1.0) * (y ** 2.0 / self.df).log1p() - z

    def entropy(self):
        lbeta = ((0.5 * self.df).lgamma() + math.lgamma(0.5)
                 - (0.5 * (self.df + 1)).lgamma())
        return (self.scale.log()
                + 0.5 * (self.df + 1) * ((0.5 * (self.df + 1)).digamma()
                                         - (0.5 * self.df).digamma())
                + 0.5 * self.df.log() + lbeta)
