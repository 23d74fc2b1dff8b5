"""torchlike.distributions.binomial: mirrors ``torch.distributions.binomial``."""
from .. import _creation as C
from .._ops.sampling import binomial as _binomial
from .._size import Size
from ..autograd.grad_mode import no_grad
from . import constraints
from ._params import expand_params, init_probs_or_logits
from .distribution import Distribution
from .utils import lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Binomial"]


def _clamp_by_zero(x):
    # max(x, 0) whose gradient at 0 is 1/2 (the mean of both sides), as torch's
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


def _homogeneous_count(dist, what):
    """The one total count of all the batch (a host read), else NotImplementedError."""
    total_count = int(dist.total_count.max())
    if not dist.total_count.min() == total_count:
        raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
    return total_count


class Binomial(Distribution):
    """Mirrors ``torch.distributions.Binomial``: the number of successes in ``total_count``
    trials of probability ``probs`` (or log-odds ``logits``), broadcast together.

    Args:
        total_count (int or Tensor): the number of trials.
        probs (Tensor): the probability of success of each trial.
        logits (Tensor): its log-odds (give one of ``probs`` and ``logits``).
        validate_args (bool, optional): whether to check parameters and values.

    Example:
        >>> m = Binomial(100, torchlike.tensor([0., .2, .8, 1.]))
        >>> m.sample().shape
        torch.Size([4])
    """
    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        init_probs_or_logits(self, probs, logits, total_count)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Binomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        expand_params(self, new, batch_shape)
        super(Binomial, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return _binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        log_factorial_n = (n + 1).lgamma()
        log_factorial_k = (value + 1).lgamma()
        log_factorial_nmk = (n - value + 1).lgamma()
        # n * log(1 + exp(logits)), written stably: n * (max(logits, 0) + log1p(exp(-|logits|)))
        normalize_term = (n * _clamp_by_zero(logits) + n * (-logits.abs()).exp().log1p()
                          - log_factorial_n)
        return value * logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self):
        _homogeneous_count(self, "entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total_count = _homogeneous_count(self, "enumerate_support")
        values = C.arange(1 + total_count, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + self._batch_shape)
        return values
