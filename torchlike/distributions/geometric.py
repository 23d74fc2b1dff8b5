"""torchlike.distributions.geometric: mirrors ``torch.distributions.geometric``."""
from .._info import finfo
from .._random import rand
from .._size import Size
from ..autograd.grad_mode import no_grad
from ..nn.functional import binary_cross_entropy_with_logits
from . import constraints
from ._params import expand_params, init_probs_or_logits
from .distribution import Distribution, _require
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Geometric"]


class Geometric(Distribution):
    """Mirrors ``torch.distributions.Geometric``: the number of failures before the first
    success in Bernoulli trials of probability ``probs`` (support ``{0, 1, 2, ...}``).

    Args:
        probs (Number, Tensor): the probability of success, in (0, 1].
        logits (Number, Tensor): its log-odds (give one of ``probs`` and ``logits``).
        validate_args (bool, optional): whether to check parameters and values.

    Example:
        >>> m = Geometric(torchlike.tensor([0.3]))
        >>> m.sample().shape
        torch.Size([1])
    """
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        batch_shape = init_probs_or_logits(self, probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            # unit_interval admits 0, where the distribution is not defined
            value = self.probs
            valid = value > 0
            head = (f"Expected parameter probs ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution ")
            tail = " to be positive but found invalid values"
            _require(valid, lambda: f"{head}{self!r}{tail}:\n{value.data[~valid]}",
                     f"{head}{type(self).__name__}{tail}")

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Geometric, _instance)
        batch_shape = Size(batch_shape)
        expand_params(self, new, batch_shape)
        super(Geometric, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return self.probs.new_zeros(self.probs.shape)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    def sample(self, sample_shape=Size()):
        # inversion: floor(log(u) / log(1 - p)) for u uniform on [tiny, 1)
        shape = self._extended_shape(sample_shape)
        with no_grad():
            u = rand(shape, dtype=self.probs.dtype, device=self.probs.device)
            u = u.clamp(min=finfo(self.probs.dtype).tiny)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # P(0) = 1 when p = 1: 0 * log(0) counts 0, not nan
        probs = probs.masked_fill((probs == 1) & (value == 0), 0)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs,
                                                reduction="none") / self.probs
