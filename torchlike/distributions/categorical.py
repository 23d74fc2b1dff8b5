"""torchlike.distributions.categorical: mirrors ``torch.distributions.categorical``."""
import math

from .. import _creation as C, _dtype as D
from .._info import finfo
from .._ops.join import broadcast_tensors
from .._ops.sampling import multinomial
from .._size import Size
from . import constraints
from ._params import expand_params
from .distribution import Distribution
from .utils import lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical"]


class Categorical(Distribution):
    """Mirrors ``torch.distributions.Categorical``: an index in ``{0, ..., K-1}`` drawn with the
    weights of the last dimension of ``probs`` (normalized to sum to 1) or of ``logits``
    (unnormalized log-probabilities, normalized by logsumexp); the leading dimensions are a
    batch.  It is the distribution :func:`torchlike.multinomial` samples from.

    Args:
        probs (Tensor): event probabilities (non-negative, finite, with a positive sum).
        logits (Tensor): event log-probabilities, unnormalized (give one of the two).
        validate_args (bool, optional): whether to check parameters and values.

    Example:
        >>> m = Categorical(torchlike.tensor([0.25, 0.25, 0.25, 0.25]))
        >>> m.sample().shape
        torch.Size([])
    """
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.ndimension() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = Size(batch_shape)
        expand_params(self, new, batch_shape + Size((self._num_events,)))
        new._num_events = self._num_events
        super(Categorical, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return self._param.size()

    @property
    def mean(self):
        return C.full(self._extended_shape(), math.nan, dtype=self.probs.dtype,
                      device=self.probs.device)

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        return C.full(self._extended_shape(), math.nan, dtype=self.probs.dtype,
                      device=self.probs.device)

    def sample(self, sample_shape=Size()):
        sample_shape = Size(sample_shape)
        probs_2d = self.probs.reshape(-1, self._num_events)
        samples_2d = multinomial(probs_2d, sample_shape.numel(), True).T
        return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self):
        # a logit of -inf (probability 0) counts 0 * finfo.min = 0, not 0 * -inf = nan
        logits = self.logits.clamp(min=finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = C.arange(self._num_events, dtype=D.int64, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + self._batch_shape)
        return values
