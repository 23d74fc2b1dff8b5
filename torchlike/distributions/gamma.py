"""Mirrors ``torch.distributions.gamma``."""
from .._creation import as_tensor
from .._info import finfo
from .._ops.binary import xlogy
from .._ops.sampling import _standard_gamma
from .._ops.special import gammainc
from .._size import Size
from . import constraints
from .exp_family import ExponentialFamily
from .utils import _NUMBER, broadcast_all

__all__ = ["Gamma"]


class Gamma(ExponentialFamily):
    """Mirrors ``torch.distributions.gamma.Gamma``: the gamma distribution of shape
    ``concentration`` and ``rate`` (1 / scale).  ``rsample`` is differentiable in both, the
    concentration by PyTorch's implicit reparameterization gradient (``torch._standard_gamma``).

    Args:
        concentration (float or Tensor): the shape (alpha).
        rate (float or Tensor): the rate (beta).
        validate_args (bool, optional): check the arguments against ``arg_constraints``.

    Example:
        >>> Gamma(torchlike.tensor([1.0]), torchlike.tensor([1.0])).sample().shape
        torch.Size([1])
    """
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        scalar = isinstance(concentration, _NUMBER) and isinstance(rate, _NUMBER)
        super().__init__(Size() if scalar else self.concentration.size(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gamma, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        super(Gamma, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        # NOTE: clamped through a detached alias, so the graph records no clamp (as PyTorch)
        value.detach().clamp_(min=finfo(value.dtype).tiny)
        return value

    def log_prob(self, value):
        value = as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (xlogy(self.concentration, self.rate) + xlogy(self.concentration - 1, value)
                - self.rate * value - self.concentration.lgamma())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return gammainc(self.concentration, self.rate * value)

    def entropy(self):
        return (self.concentration - self.rate.log() + self.concentration.lgamma()
                + (1.0 - self.concentration) * self.concentration.digamma())

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return (x + 1).lgamma() + (x + 1) * (-y.reciprocal()).log()
