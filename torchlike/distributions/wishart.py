"""torchlike.distributions.wishart: mirrors ``torch.distributions.wishart``."""
import math
import numbers
import warnings

from .. import _creation as C
from .._dispatch import is_traced
from .._info import finfo
from .._ops.join import broadcast_shapes
from .._random import randn
from .._size import Size
from ..linalg import cholesky, cholesky_ex, slogdet
from . import constraints
from .chi2 import Chi2
from .distribution import _require
from .exp_family import ExponentialFamily
from .multivariate_normal import _precision_to_scale_tril
from .utils import _is_all_true, lazy_property

__all__ = ["Wishart"]

_log_2 = math.log(2)


def _mvdigamma(x, p):
    """The multivariate digamma function: ``sum_i digamma(x - i / 2)`` for i < p."""
    if not x.gt((p - 1) / 2).all():
        raise AssertionError("Wrong domain for multivariate digamma function.")
    halves = C.arange(p, dtype=x.dtype, device=x.device).div(2)
    return (x.unsqueeze(-1) - halves.expand(x.shape + (-1,))).digamma().sum(-1)


def _clamp_above_eps(x):
    return x.clamp(min=finfo(x.dtype).eps)


def _traced(t):
    return is_traced((t._value(),))


class Wishart(ExponentialFamily):
    """Mirrors ``torch.distributions.Wishart``: the distribution of ``X X^T`` for ``df``
    columns X drawn from a zero-mean normal of the given covariance, parameterized by ``df``
    and exactly one of ``covariance_matrix``, ``precision_matrix`` and ``scale_tril``.
    ``rsample`` uses the Bartlett decomposition.

    Args:
        df (float or Tensor): degrees of freedom, greater than ``n - 1``.
        covariance_matrix (Tensor): positive-definite scale matrices.
        precision_matrix (Tensor): their inverses.
        scale_tril (Tensor): their lower Cholesky factors.
        validate_args (bool, optional): whether to check parameters and values.

    Example:
        >>> m = Wishart(torchlike.tensor([2.]), covariance_matrix=torchlike.eye(2))
        >>> m.sample().shape
        torch.Size([1, 2, 2])
    """
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        given = [(name, m) for name, m in (("covariance_matrix", covariance_matrix),
                                           ("precision_matrix", precision_matrix),
                                           ("scale_tril", scale_tril)) if m is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        (name, param), = given
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, numbers.Number):
            batch_shape = Size(param.shape[:-2])
            self.df = C.tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = Size(broadcast_shapes(param.shape[:-2], df.shape))
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        n = event_shape[-1]
        # while traced, the df check is the compiled step's own (NOTE [ validation while
        # tracing ] in distribution.py) and the warning is left out
        _require(self.df.gt(n - 1),
                 lambda: f"Value of df={df} expected to be greater than ndim - 1 = {n - 1}.",
                 f"Value of df expected to be greater than ndim - 1 = {n - 1}.")
        setattr(self, name, param.expand(batch_shape + (-1, -1)))
        if _is_all_true(self.df.ge(n)) is False:
            warnings.warn("Low df values detected. Singular samples are highly likely to "
                          "occur for ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = param
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = cholesky(param)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(param)
        self._dist_chi2 = self._chi2(batch_shape)

    def _chi2(self, batch_shape):
        # the Bartlett decomposition's squared diagonal: chi2(df - i) for row i
        L = self._unbroadcasted_scale_tril
        rows = C.arange(self._event_shape[-1], dtype=L.dtype, device=L.device)
        return Chi2(df=self.df.unsqueeze(-1) - rows.expand(batch_shape + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = batch_shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(cov_shape))
        super(Wishart, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._dist_chi2 = new._chi2(batch_shape)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.transpose(-2, -1)).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        identity = C.eye(self._event_shape[-1], device=L.device, dtype=L.dtype)
        return identity.cholesky_solve(L).expand(self._batch_shape + self._event_shape)

    @property
    def mean(self):
        return self.df.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = factor.masked_fill(factor <= 0, math.nan)   # no mode for df <= n + 1
        return factor.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self.df.view(self._batch_shape + (1, 1)) * (
            V.pow(2) + diag_V.unsqueeze(-1) * diag_V.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape=Size()):
        # L A (L A)^T with A lower triangular: sqrt(chi2(df - i)) on the diagonal, standard
        # normals below it
        p = self._event_shape[-1]
        diag = _clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt()).diag_embed(
            dim1=-2, dim2=-1)
        below = randn(Size(sample_shape) + self._batch_shape + (p, p), dtype=diag.dtype,
                      device=diag.device).tril(-1)
        chol = self._unbroadcasted_scale_tril @ (diag + below)
        return chol @ chol.transpose(-2, -1)

    def _singular(self, sample):
        # the support's check without its symmetry test (L A A^T L^T is symmetric by
        # construction), which needs no host read while traced
        singular = cholesky_ex(sample).info.ne(0)
        return singular.amax(self._batch_dims) if self._batch_shape else singular

    def rsample(self, sample_shape=Size(), max_try_correction=None):
        # NOTE [ singular Wishart samples ]: a sample whose batch holds a singular matrix
        # (likely when df < n) is drawn again, up to max_try_correction times (torch's default:
        # 10 eagerly, 3 traced).  Eagerly the redraw happens (with a warning) only when one is
        # found; traced, every redraw is made and kept where still needed.  torch 2.13 tests
        # the opposite of singularity here, so it warns and redraws on every call; torchlike
        # does what its code intends.
        sample_shape = Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        singular = self._singular(sample)
        traced = _traced(sample)
        if max_try_correction is None:
            max_try_correction = 3 if traced else 10
        if not traced:
            if not singular.any():
                return sample
            warnings.warn("Singular sample detected.", stacklevel=2)
        mask_shape = singular.shape + (1,) * (sample.dim() - singular.dim())
        for _ in range(max_try_correction):
            sample = self._bartlett_sampling(sample_shape).where(
                singular.view(mask_shape), sample)
            singular = self._singular(sample)
            if not traced and not singular.any():
                break
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        log_det_L = L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        trace = value.cholesky_solve(L).diagonal(dim1=-2, dim2=-1).sum(dim=-1)
        return (-nu * (p * _log_2 / 2 + log_det_L) - (nu / 2).mvlgamma(p=p)
                + (nu - p - 1) / 2 * slogdet(value).logabsdet - trace / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        log_det_L = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * (p * _log_2 / 2 + log_det_L) + (nu / 2).mvlgamma(p=p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p) + nu * p / 2)

    @property
    def _natural_params(self):
        nu = self.df
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (nu - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-slogdet(-2 * x).logabsdet + _log_2 * p)
                + (y + (p + 1) / 2).mvlgamma(p=p))
