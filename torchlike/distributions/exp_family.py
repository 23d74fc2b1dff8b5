"""Mirrors ``torch.distributions.exp_family``: the ExponentialFamily base class."""
from ..autograd import grad
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    r"""Mirrors ``torch.distributions.ExponentialFamily``: a distribution whose density is

    .. math::
        p_F(x; \theta) = \exp(\langle t(x), \theta \rangle - F(\theta) + k(x))

    with natural parameters :math:`\theta` (``_natural_params``), sufficient statistic
    :math:`t`, log normalizer :math:`F` (``_log_normalizer``) and carrier measure :math:`k`
    (``_mean_carrier_measure`` is :math:`E[k(x)]`).  From those alone it computes the entropy
    and (in kl.py) the KL divergence between two members of one family as Bregman divergences of
    :math:`F`, differentiating :math:`F` with torchlike's autograd (Nielsen & Nock, "Entropies
    and cross-entropies of exponential families", 2010).
    """

    @property
    def _natural_params(self):
        """The natural parameters, a tuple of Tensors."""
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        """The log normalizer F at ``natural_params``."""
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        """E[k(x)], the expected carrier measure."""
        raise NotImplementedError

    def entropy(self):
        r"""Mirrors ``torch.distributions.ExponentialFamily.entropy``:
        :math:`F(\theta) - \langle \theta, \nabla F(\theta) \rangle - E[k(x)]`.  As in
        PyTorch, F is differentiated at detached copies of the natural parameters, so the result
        carries no gradient back to the distribution's own parameters."""
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = grad(lg_normal.sum(), nparams, create_graph=True)
        result += lg_normal
        for np_, g in zip(nparams, gradients):
            result -= (np_ * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
