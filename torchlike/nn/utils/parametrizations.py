"""Ready-made parametrizations: mirrors ``torch.nn.utils.parametrizations`` (weight_norm,
spectral_norm, orthogonal), each registered through ``parametrize.register_parametrization``
(NOTE [ parametrized modules ] in parametrize.py), so state_dict keys and reprs are PyTorch's.
"""
import enum

import jax.numpy as jnp

from ... import _creation, _precision, _random, _x64
from ..._dispatch import Op, call
from ..._info import finfo
from ..._ops import pointwise as _pointwise, shape as _shape
from ..._ops.decomp import matrix_exp, solve
from ..._ops.linalg import matmul, mv, vdot
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..modules.module import Module
from . import parametrize
from .spectral_norm import _conv_transpose_classes
from .weight_norm import _weight_norm, norm_except_dim


# --- orthogonal ---------------------------------------------------------------------------------

def _householder_product(A, tau, precision):
    """Q = H_1 ... H_k (first n columns), H_i = I - tau_i v_i v_i^H, v_i the i-th column of A
    below the diagonal with a unit on it (LAPACK's orgqr), as differentiable jnp."""
    m, n = A.shape[-2:]
    rows = jnp.arange(m)[:, None]
    Q = jnp.broadcast_to(jnp.eye(m, n, dtype=A.dtype), A.shape)
    for i in reversed(range(tau.shape[-1])):
        v = jnp.where(rows < i, 0, jnp.where(rows == i, 1, A[..., :, i:i + 1]))
        Q = Q - tau[..., i, None, None] * v * jnp.matmul(jnp.conj(v).mT, Q, precision=precision)
    return Q


HOUSEHOLDER_PRODUCT = Op("linalg_householder_product", _householder_product,
                         "LinalgHouseholderProductBackward0", promote="common")


def householder_product(A, tau):
    """Mirrors ``torch.linalg.householder_product``: the first n columns of the product of the
    Householder reflectors stored in ``A`` (m x n, below the diagonal) and ``tau``."""
    return call(HOUSEHOLDER_PRODUCT, A, tau, static=_precision.static())


@_x64.scoped
def _geqrf(A):
    """(reflectors, tau) of LAPACK's QR factorization (torch.geqrf's output), no autograd."""
    from jax._src.lax import linalg as lax_linalg   # jax keeps geqrf out of its public API
    a, tau = lax_linalg.geqrf(A._value())
    return Tensor._wrap(a), Tensor._wrap(tau)


def _is_orthogonal(Q):
    n, k = Q.shape[-2], Q.shape[-1]
    eye = _creation.eye(k, dtype=Q.dtype)
    eps = 10.0 * n * finfo(Q.dtype).eps
    return _pointwise.allclose(matmul(Q.mT.conj(), Q), eye, atol=eps)


@_x64.scoped
def _make_orthogonal(A):
    """The Q of A's QR factorization, signed so that R has a positive diagonal."""
    q, r = jnp.linalg.qr(A._value())
    d = jnp.diagonal(r, axis1=-2, axis2=-1)
    return Tensor._wrap(q * jnp.sign(d)[..., None, :])


class _OrthMaps(enum.Enum):
    matrix_exp = enum.auto()
    cayley = enum.auto()
    householder = enum.auto()


class _Orthogonal(Module):
    """The parametrization registered by :func:`orthogonal`: an orthogonal (unitary) matrix
    from an unconstrained one, through the matrix exponential or the Cayley map of a skew
    matrix, or a product of Householder reflectors; ``base`` (use_trivialization) is the
    orthogonal matrix the map is taken around."""

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex "
                             "tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                pad = X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)
                X = _shape.cat([X, pad], dim=-1)
            A = X - X.mT.conj()
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = matrix_exp(A)
            else:
                eye = _creation.eye(n, dtype=A.dtype)
                Q = solve(_pointwise.add(eye, A, alpha=-0.5), _pointwise.add(eye, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = matmul(self.base, Q)
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q):
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.shape[-2], Q.shape[-1]
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError("It is not possible to assign to the matrix "
                                          "exponential or the Cayley parametrizations when "
                                          "use_trivialization=False.")
            A, tau = _geqrf(Q)
            diag = A.diagonal(dim1=-2, dim2=-1)
            flip = (tau == 0.0).to(A.dtype) * -2 + 1
            diag.copy_(diag.sign() * flip)
            return A.mT if transpose else A
        if n == k:
            Q = _make_orthogonal(Q) if not _is_orthogonal(Q) else Q.clone()
        else:
            N = _random.randn(*(tuple(Q.shape[:-2]) + (n, n - k)), dtype=Q.dtype)
            Q = _make_orthogonal(_shape.cat([Q, N], dim=-1))
        self.base = Q
        neg_id = _creation.zeros_like(Q_init)
        neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_id


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Mirrors ``torch.nn.utils.parametrizations.orthogonal``: constrain the matrix (or batch
    of matrices) ``module.<name>`` to be orthogonal (unitary), with columns or rows orthonormal,
    whichever is fewer.

    Args:
        module: the module to parametrize.
        name: the parameter or buffer (default ``"weight"``).
        orthogonal_map: ``"matrix_exp"``, ``"cayley"`` or ``"householder"``; default
            ``"matrix_exp"`` for square or complex matrices, else ``"householder"``.
        use_trivialization: keep the map around a stored orthogonal ``base`` (a buffer),
            which lets the weight be assigned (default True).

    Returns:
        ``module``.

    Example::

        >>> m = torchlike.nn.utils.parametrizations.orthogonal(torchlike.nn.Linear(20, 40))
        >>> Q = m.weight
        >>> torchlike.dist(Q.T @ Q, torchlike.eye(20)) < 1e-5
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. "
                         f"Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = ("matrix_exp" if weight.shape[-2] == weight.shape[-1]
                          or weight.is_complex() else "householder")
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


# --- weight_norm --------------------------------------------------------------------------------

class _WeightNorm(Module):
    """The parametrization registered by :func:`weight_norm`: original0 is the magnitude g,
    original1 the direction v."""

    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Mirrors ``torch.nn.utils.parametrizations.weight_norm``: ``module.<name>`` becomes
    ``g * v / ||v||`` (the norm over every dimension but ``dim``; all of them for
    ``dim=None``), with ``g`` and ``v`` stored as ``parametrizations.<name>.original0`` and
    ``original1``.  A state_dict of the legacy form (``<name>_g``, ``<name>_v``) still loads.

    Example::

        >>> m = torchlike.nn.utils.parametrizations.weight_norm(torchlike.nn.Linear(20, 40))
        >>> m.parametrizations.weight.original0.shape
        torchlike.Size([40, 1])
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys,
                                 unexpected_keys, error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


# --- spectral_norm ------------------------------------------------------------------------------

class _SpectralNorm(Module):
    """The parametrization registered by :func:`spectral_norm`: the weight divided by its
    largest singular value, estimated by power iteration with the buffers ``_u`` and ``_v``
    (refined ``n_power_iterations`` times per read in training mode, frozen in eval mode)."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        with no_grad():
            weight_mat_h = weight_mat.mT.conj()
            for _ in range(n_power_iterations):
                self._u = F.normalize(mv(weight_mat, self._v), dim=0, eps=self.eps,
                                      out=self._u)
                self._v = F.normalize(mv(weight_mat_h, self._u), dim=0,
                                      eps=self.eps, out=self._v)

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = vdot(u, mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Mirrors ``torch.nn.utils.parametrizations.spectral_norm``: ``module.<name>`` becomes the
    weight divided by its spectral norm (largest singular value of the weight viewed as a matrix
    with ``dim`` first), estimated by power iteration.  The buffers
    ``parametrizations.<name>.0._u`` / ``._v`` are refined ``n_power_iterations`` times at every
    read in training mode and used as they are in eval mode.

    Args:
        module: the module to parametrize.
        name: the parameter (default ``"weight"``).
        n_power_iterations: power iterations per read in training mode.
        eps: added for numerical stability when normalising.
        dim: the output dimension (default 0; 1 for ConvTranspose modules).

    Returns:
        ``module``.
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, _conv_transpose_classes()) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
