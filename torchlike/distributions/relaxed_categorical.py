"""torchlike.distributions.relaxed_categorical: mirrors
``torch.distributions.relaxed_categorical``."""
from .. import _creation as C
from .._random import rand
from .._size import Size
from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform
from .utils import broadcast_all, clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(Distribution):
    """Mirrors ``torch.distributions.ExpRelaxedCategorical``: the log of a
    RelaxedOneHotCategorical sample, ``log_softmax((logits + g) / temperature)`` for Gumbel
    noise g (Maddison et al., 2017, "The Concrete Distribution"; Jang et al., 2017).

    Args:
        temperature (Tensor): the relaxation temperature.
        probs (Tensor): event probabilities (normalized along the last dimension).
        logits (Tensor): unnormalized event log-probabilities (give one of the two).
        validate_args (bool, optional): whether to check parameters and values.

    Example:
        >>> m = ExpRelaxedCategorical(torchlike.tensor([0.5]), torchlike.tensor([0.2, 0.8]))
        >>> m.rsample().exp().sum()
        tensor(1.)
    """
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        batch_shape = Size(batch_shape)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        super(ExpRelaxedCategorical, new).__init__(batch_shape, self.event_shape,
                                                   validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        uniforms = clamp_probs(rand(shape, dtype=self.logits.dtype, device=self.logits.device))
        gumbels = -((-(uniforms.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value):
        K = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_scale = (C.full_like(self.temperature, float(K)).lgamma()
                     - self.temperature.log().mul(-(K - 1)))
        score = logits - value.mul(self.temperature)
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    """Mirrors ``torch.distributions.RelaxedOneHotCategorical``: a reparameterizable relaxation
    of OneHotCategorical on the simplex (the Gumbel-softmax / Concrete distribution), the exp of
    an ExpRelaxedCategorical.

    Args:
        temperature (Tensor): the relaxation temperature.
        probs (Tensor): event probabilities (normalized along the last dimension).
        logits (Tensor): unnormalized event log-probabilities (give one of the two).
        validate_args (bool, optional): whether to check parameters and values.

    Example:
        >>> m = RelaxedOneHotCategorical(torchlike.tensor([2.2]),
        ...                              torchlike.tensor([0.1, 0.2, 0.3, 0.4]))
        >>> m.sample().shape
        torch.Size([4])
    """
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = ExpRelaxedCategorical(temperature, probs, logits,
                                          validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs
