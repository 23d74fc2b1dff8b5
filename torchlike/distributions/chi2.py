"""Mirrors ``torch.distributions.chi2``."""
from . import constraints
from .gamma import Gamma

__all__ = ["Chi2"]


class Chi2(Gamma):
    """Mirrors ``torch.distributions.chi2.Chi2``: the chi-squared distribution of ``df`` degrees
    of freedom, ``Gamma(0.5 * df, 0.5)``.

    Args:
        df (float or Tensor): the degrees of freedom.
        validate_args (bool, optional): check the arguments against ``arg_constraints``.

    Example:
        >>> Chi2(torchlike.tensor([1.0])).sample().shape
        torch.Size([1])
    """
    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self):
        return self.concentration * 2
