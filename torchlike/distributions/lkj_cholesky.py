"""torchlike.distributions.lkj_cholesky: mirrors ``torch.distributions.lkj_cholesky``."""
import math

from .. import _creation as C
from .._info import finfo
from .._ops.shape import cat
from .._random import randn
from .._size import Size
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """Mirrors ``torch.distributions.LKJCholesky``: the LKJ distribution of correlation
    matrices, over their lower Cholesky factors, ``p(L) ∝ |L L^T|^(concentration - 1)``
    (Lewandowski, Kurowicka and Joe, 2009).  Samples come from the onion method: row i is a
    uniform direction scaled by the square root of a Beta draw.

    Args:
        dim (int): the size of the matrices (at least 2).
        concentration (float or Tensor): the shape parameter (positive).
        validate_args (bool, optional): whether to check parameters and values.

    Example:
        >>> m = LKJCholesky(3, 0.5)
        >>> m.sample().shape
        torch.Size([3, 3])
    """
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        self.concentration, = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = Size((dim, dim))
        # The onion method's Beta parameters per row i (row 0 has none; it is e_0):
        # Beta(i / 2, concentration + (dim - 2) / 2 - (i - 1) / 2), written with offset i - 1.
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = C.arange(self.dim - 1, dtype=self.concentration.dtype,
                          device=self.concentration.device)
        offset = cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        super(LKJCholesky, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=Size()):
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        u_normal = randn(self._extended_shape(sample_shape), dtype=y.dtype,
                         device=y.device).tril(-1)
        u_hypersphere = u_normal / u_normal.norm(dim=-1, keepdim=True)
        # row 0 is all zeros (0 / 0 above): its off-diagonal part is empty
        first_row = C.arange(self.dim, device=y.device).view(-1, 1) == 0
        u_hypersphere = u_hypersphere.masked_fill(first_row, 0.0)
        w = y.sqrt() * u_hypersphere
        # the diagonal completes each row to unit norm
        eps = finfo(w.dtype).tiny
        diag_elems = (1 - w.pow(2).sum(-1)).clamp(min=eps).sqrt()
        return w + diag_elems.diag_embed()

    def log_prob(self, value):
        # log p(L) = sum_i (2 (concentration - 1) + dim - i) log L_ii for i = 2..dim, minus
        # the log normalizer of the onion method (Lewandowski et al. 2009, section 3.2)
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = C.arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = (order * diag_elems.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = alpha.lgamma() * dm1
        numerator = (alpha - 0.5).mvlgamma(dm1)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        return unnormalized_log_pdf - (pi_constant + numerator - denominator)
