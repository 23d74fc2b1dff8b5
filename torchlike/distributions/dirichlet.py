"""Mirrors ``torch.distributions.dirichlet``."""
from .._ops.binary import xlogy
from .._ops.embedding import one_hot
from .._ops.pointwise import where
from .._ops.sampling import _dirichlet_grad, _dirichlet_rsample
from .._size import Size
from . import constraints
from .exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


def _Dirichlet_backward(x, concentration, grad_output):
    """The gradient reaching ``concentration`` from ``grad_output`` at the sample ``x``: each
    coordinate's Beta reparameterization gradient (``torch._dirichlet_grad``), projected onto
    the simplex.  (PyTorch exposes it for testing; rsample's own backward is the same formula,
    in _ops/sampling.py.)"""
    total = concentration.sum(-1, True).expand_as(concentration)
    grad = _dirichlet_grad(x, concentration, total)
    return grad * (grad_output - (x * grad_output).sum(-1, True))


class Dirichlet(ExponentialFamily):
    """Mirrors ``torch.distributions.dirichlet.Dirichlet``: the Dirichlet distribution over the
    simplex of the last dimension of ``concentration``.

    Args:
        concentration (Tensor): the concentrations (alpha), at least one-dimensional.
        validate_args (bool, optional): check the arguments against ``arg_constraints``.

    Example:
        >>> Dirichlet(torchlike.tensor([0.5, 0.5])).sample().shape
        torch.Size([2])
    """
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape + self.event_shape)
        super(Dirichlet, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return _dirichlet_rsample(self.concentration.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (xlogy(self.concentration - 1.0, value).sum(-1)
                + self.concentration.sum(-1).lgamma() - self.concentration.lgamma().sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, True)
        # all concentrations below 1: the mode is the vertex of the largest
        vertex = one_hot(mode.argmax(dim=-1), concentrationm1.shape[-1]).to(mode)
        return where((self.concentration < 1).all(dim=-1, keepdim=True), vertex, mode)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (self.concentration.lgamma().sum(-1) - a0.lgamma() - (k - a0) * a0.digamma()
                - ((self.concentration - 1.0) * self.concentration.digamma()).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - x.sum(-1).lgamma()
