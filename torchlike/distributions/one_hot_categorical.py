"""torchlike.distributions.one_hot_categorical: mirrors
``torch.distributions.one_hot_categorical``."""
from .. import _creation as C
from .._size import Size
from ..nn.functional import one_hot
from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


class OneHotCategorical(Distribution):
    """Mirrors ``torch.distributions.OneHotCategorical``: ``Categorical(probs, logits)`` with
    each sample a one-hot vector of size ``K`` (in the parameter's dtype).

    Args:
        probs (Tensor): event probabilities (normalized along the last dimension).
        logits (Tensor): unnormalized event log-probabilities (give one of the two).
        validate_args (bool, optional): whether to check parameters and values.

    Example:
        >>> m = OneHotCategorical(torchlike.tensor([0.25, 0.25, 0.25, 0.25]))
        >>> m.sample().shape
        torch.Size([4])
    """
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(OneHotCategorical, _instance)
        batch_shape = Size(batch_shape)
        new._categorical = self._categorical.expand(batch_shape)
        super(OneHotCategorical, new).__init__(batch_shape, self.event_shape,
                                               validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return one_hot(probs.argmax(dim=-1), num_classes=probs.shape[-1]).to(probs)

    @property
    def variance(self):
        return self._categorical.probs * (1 - self._categorical.probs)

    @property
    def param_shape(self):
        return self._categorical.param_shape

    def sample(self, sample_shape=Size()):
        indices = self._categorical.sample(Size(sample_shape))
        return one_hot(indices, self._categorical._num_events).to(self._categorical.probs)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.max(-1)[1])

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        values = C.eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        if expand:
            values = values.expand((n,) + self.batch_shape + (n,))
        return values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """Mirrors ``torch.distributions.OneHotCategoricalStraightThrough``: a OneHotCategorical
    whose ``rsample`` is the straight-through estimator (Bengio et al., 2013): the forward
    value is a one-hot sample, the gradient that of ``probs``.

    Example:
        >>> p = torchlike.tensor([0.2, 0.8], requires_grad=True)
        >>> OneHotCategoricalStraightThrough(p).rsample().requires_grad
        True
    """
    has_rsample = True

    def rsample(self, sample_shape=Size()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs   # cached, so the gradient reaches probs once
        return samples + (probs - probs.detach())
