"""Mirrors ``torch.distributions.beta``."""
from .. import _creation as C
from .._ops.shape import stack
from .._size import Size
from . import constraints
from .dirichlet import Dirichlet
from .exp_family import ExponentialFamily
from .utils import _NUMBER, broadcast_all

__all__ = ["Beta"]


class Beta(ExponentialFamily):
    """Mirrors ``torch.distributions.beta.Beta``: the Beta distribution, the first coordinate of
    a two-category Dirichlet.

    Args:
        concentration1 (float or Tensor): the first concentration (alpha).
        concentration0 (float or Tensor): the second concentration (beta).
        validate_args (bool, optional): check the arguments against ``arg_constraints``.

    Example:
        >>> Beta(torchlike.tensor([0.5]), torchlike.tensor([0.5])).sample().shape
        torch.Size([1])
    """
    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        if isinstance(concentration1, _NUMBER) and isinstance(concentration0, _NUMBER):
            both = C.tensor([float(concentration1), float(concentration0)])
        else:
            concentration1, concentration0 = broadcast_all(concentration1, concentration0)
            both = stack([concentration1, concentration0], -1)
        self._dirichlet = Dirichlet(both, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = Size(batch_shape)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        super(Beta, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    def entropy(self):
        return self._dirichlet.entropy()

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return x.lgamma() + y.lgamma() - (x + y).lgamma()
