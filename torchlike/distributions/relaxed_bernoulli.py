"""torchlike.distributions.relaxed_bernoulli: mirrors ``torch.distributions.relaxed_bernoulli``."""
from .._random import rand
from .._size import Size
from . import constraints
from ._params import expand_params, init_probs_or_logits
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(Distribution):
    """Mirrors ``torch.distributions.LogitRelaxedBernoulli``: the logit of a RelaxedBernoulli
    sample, ``(logit(u) + logits) / temperature`` for u uniform (Maddison et al., 2017, "The
    Concrete Distribution"; Jang et al., 2017, "Categorical Reparametrization with
    Gumbel-Softmax").

    Args:
        temperature (Tensor): the relaxation temperature.
        probs (Number, Tensor): the probability of sampling 1.
        logits (Number, Tensor): its log-odds (give one of ``probs`` and ``logits``).
        validate_args (bool, optional): whether to check parameters and values.

    Example:
        >>> m = LogitRelaxedBernoulli(torchlike.tensor([0.5]), torchlike.tensor([0.3]))
        >>> m.rsample().shape
        torch.Size([1])
    """
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        batch_shape = init_probs_or_logits(self, probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogitRelaxedBernoulli, _instance)
        batch_shape = Size(batch_shape)
        new.temperature = self.temperature
        expand_params(self, new, batch_shape)
        super(LogitRelaxedBernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        uniforms = clamp_probs(rand(shape, dtype=probs.dtype, device=probs.device))
        return (uniforms.log() - (-uniforms).log1p() + probs.log()
                - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(TransformedDistribution):
    """Mirrors ``torch.distributions.RelaxedBernoulli``: a reparameterizable relaxation of
    Bernoulli on (0, 1), the sigmoid of a LogitRelaxedBernoulli.

    Args:
        temperature (Tensor): the relaxation temperature.
        probs (Number, Tensor): the probability of sampling 1.
        logits (Number, Tensor): its log-odds (give one of ``probs`` and ``logits``).
        validate_args (bool, optional): whether to check parameters and values.

    Example:
        >>> m = RelaxedBernoulli(torchlike.tensor([2.2]), torchlike.tensor([0.1, 0.2, 0.3, 0.99]))
        >>> m.sample().shape
        torch.Size([4])
    """
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
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
