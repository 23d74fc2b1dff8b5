"""Mirrors ``torch.distributions.generalized_pareto``."""
import math

from .. import _creation as C
from .._ops.pointwise import isclose, where
from .._ops.shape import broadcast_to
from .._random import rand
from .._size import Size
from . import constraints
from .distribution import Distribution
from .utils import _NUMBER, broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """Mirrors ``torch.distributions.generalized_pareto.GeneralizedPareto``: the generalized
    Pareto distribution of location ``loc``, scale ``scale`` and shape ``concentration`` (the
    exponential distribution at concentration 0).

    Like PyTorch's, ``log_prob`` and ``cdf`` compare the concentration with a default-dtype 0
    (``isclose``), so they need parameters of the default dtype.

    Args:
        loc (float or Tensor): the location.
        scale (float or Tensor): the scale.
        concentration (float or Tensor): the shape (xi).
        validate_args (bool, optional): check the arguments against ``arg_constraints``.

    Example:
        >>> GeneralizedPareto(0.0, 1.0, 0.5).sample().shape
        torch.Size([])
    """
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalar = all(isinstance(v, _NUMBER) for v in (loc, scale, concentration))
        super().__init__(Size() if scalar else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(GeneralizedPareto, _instance)
        batch_shape = Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        super(GeneralizedPareto, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        return self.icdf(rand(shape, dtype=self.loc.dtype, device=self.loc.device))

    def _safe_concentration(self):
        """(concentration == 0, the concentration with 1 where it is 0)."""
        eq_zero = isclose(self.concentration, C.tensor(0.0))
        return eq_zero, where(eq_zero, self.concentration.new_ones(()), self.concentration)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        y = 1 / safe_conc + z.new_ones(()).expand_as(z)
        where_nonzero = where(y == 0, y, y * (safe_conc * z).log1p())
        return -self.scale.log() - where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        return where(eq_zero, -z, -(safe_conc * z).log1p() / safe_conc)

    def log_cdf(self, value):
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value):
        return self.log_cdf(value).exp()

    def icdf(self, value):
        eq_zero = isclose(self.concentration, self.concentration.new_zeros(()))
        safe_conc = where(eq_zero, self.concentration.new_ones(()), self.concentration)
        logu = (-value).log1p()
        where_nonzero = self.loc + self.scale / safe_conc * (-safe_conc * logu).expm1()
        return where(eq_zero, self.loc - self.scale * logu, where_nonzero)

    def _z(self, x):
        return (x - self.loc) / self.scale

    @property
    def mean(self):
        valid = self.concentration < 1
        safe_conc = where(valid, self.concentration, 0.5)
        return where(valid, self.loc + self.scale / (1 - safe_conc), math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        safe_conc = where(valid, self.concentration, 0.25)
        result = self.scale ** 2 / ((1 - safe_conc) ** 2 * (1 - 2 * safe_conc))
        return where(valid, result, math.nan)

    def entropy(self):
        return broadcast_to(self.scale.log() + self.concentration + 1, self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        upper = where(self.concentration < 0, self.loc - self.scale / self.concentration,
                      math.inf)
        return constraints.interval(self.loc, upper)
