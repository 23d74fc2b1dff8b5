"""Mirrors ``torch.distributions.continuous_bernoulli``."""
import math

from .. import _creation as C
from .._ops.loss import binary_cross_entropy_with_logits
from .._ops.pointwise import where
from .._random import rand
from .._size import Size
from ..autograd.grad_mode import no_grad
from . import constraints
from .exp_family import ExponentialFamily
from .utils import (_NUMBER, broadcast_all, clamp_probs, lazy_property, logits_to_probs,
                    probs_to_logits)

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """Mirrors ``torch.distributions.continuous_bernoulli.ContinuousBernoulli``: the continuous
    Bernoulli distribution on [0, 1] (Loaiza-Ganem & Cunningham, 2019), parameterized by
    ``probs`` or ``logits`` (not both).  Near probs = 0.5, inside ``lims``, its normalizer,
    mean and variance use Taylor expansions.

    Args:
        probs (Number or Tensor): parameters in [0, 1].
        logits (Number or Tensor): real parameters, the log-odds of ``probs``.
        lims (tuple of float): the interval around 0.5 where the Taylor expansions are used.
        validate_args (bool, optional): check the arguments against ``arg_constraints``.

    Example:
        >>> ContinuousBernoulli(torchlike.tensor([0.3])).sample().shape
        torch.Size([1])
    """
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, _NUMBER)
            (self.probs,) = broadcast_all(probs)
            # checked here, before clamping makes every value pass
            if validate_args is not None:
                if not self.arg_constraints["probs"].check(self.probs).all():
                    raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            is_scalar = isinstance(logits, _NUMBER)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        self._lims = lims
        super().__init__(Size() if is_scalar else self._param.size(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        new._lims = self._lims
        batch_shape = Size(batch_shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(batch_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(batch_shape)
            new._param = new.logits
        super(ContinuousBernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._param.new_empty(*args, **kwargs)

    def _outside_unstable_region(self):
        return self.probs.le(self._lims[0]) | self.probs.gt(self._lims[1])

    def _cut_probs(self):
        return where(self._outside_unstable_region(), self.probs,
                     self._lims[0] * C.ones_like(self.probs))

    def _cont_bern_log_norm(self):
        """The log normalizing constant as a function of ``probs``."""
        cut_probs = self._cut_probs()
        below_half = where(cut_probs.le(0.5), cut_probs, C.zeros_like(cut_probs))
        above_half = where(cut_probs.ge(0.5), cut_probs, C.ones_like(cut_probs))
        log_norm = ((-cut_probs).log1p() - cut_probs.log()).abs().log() - where(
            cut_probs.le(0.5), (-2.0 * below_half).log1p(), (2.0 * above_half - 1.0).log())
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut_probs = self._cut_probs()
        mus = cut_probs / (2.0 * cut_probs - 1.0) + 1.0 / (
            (-cut_probs).log1p() - cut_probs.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return self.variance.sqrt()

    @property
    def variance(self):
        cut_probs = self._cut_probs()
        vars_ = cut_probs * (cut_probs - 1.0) / (1.0 - 2.0 * cut_probs).pow(2) + 1.0 / (
            (-cut_probs).log1p() - cut_probs.log()).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return where(self._outside_unstable_region(), vars_, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        u = rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        with no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        return self.icdf(rand(shape, dtype=self.probs.dtype, device=self.probs.device))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return (-binary_cross_entropy_with_logits(logits, value, reduction="none")
                + self._cont_bern_log_norm())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut_probs = self._cut_probs()
        cdfs = (cut_probs.pow(value) * (1.0 - cut_probs).pow(1.0 - value) + cut_probs
                - 1.0) / (2.0 * cut_probs - 1.0)
        unbounded = where(self._outside_unstable_region(), cdfs, value)
        return where(value.le(0.0), C.zeros_like(value),
                     where(value.ge(1.0), C.ones_like(value), unbounded))

    def icdf(self, value):
        cut_probs = self._cut_probs()
        return where(self._outside_unstable_region(),
                     ((-cut_probs + value * (2.0 * cut_probs - 1.0)).log1p()
                      - (-cut_probs).log1p()) / (cut_probs.log() - (-cut_probs).log1p()),
                     value)

    def entropy(self):
        log_probs0 = (-self.probs).log1p()
        log_probs1 = self.probs.log()
        return (self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm()
                - log_probs0)

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """The log normalizing constant as a function of the natural parameter."""
        outside = x.le(self._lims[0] - 0.5) | x.gt(self._lims[1] - 0.5)
        cut = where(outside, x, (self._lims[0] - 0.5) * C.ones_like(x))
        log_norm = cut.expm1().abs().log() - cut.abs().log()
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return where(outside, log_norm, taylor)
