"""Composite ``torchlike.linalg`` functions: cond, tensorinv, tensorsolve and vander.

Each is written from other ops as PyTorch composes it, so its graph shows the same nodes
(``linalg.cond`` is ``svdvals`` sliced and divided, or ``matrix_norm(A) * matrix_norm(inv(A))``
with infinities for singular input; ``tensorinv`` an ``inv`` of a reshape; ``vander`` a cumprod
after a column of ones) and needs no derivative of its own.
"""
import math

from .. import _amp_hook
from .. import _dtype as D
from .._dispatch import Op, call, with_out as _out
from . import decomp as _decomp, norms as _norms, shape as _shape
from .shape import cat

_COND_ORDS = (None, 2, -2, 1, -1, math.inf, -math.inf, "fro", "nuc")


def _ord_name(p):
    if isinstance(p, str):
        return p
    return f"{p:.6f}" if isinstance(p, float) and math.isfinite(p) else str(p)


@_amp_hook.entry("linalg_cond")
def cond(A, p=None, *, out=None):
    """Mirrors ``torch.linalg.cond``: the condition number ``norm(A, p) * norm(inv(A), p)``
    (from the singular values for ``p`` None, 2, -2 (which allow a non-square A) and 'nuc');
    inf for a singular matrix, 0 for an empty one."""
    if A.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if not any(p == o and isinstance(p, str) == isinstance(o, str) for o in _COND_ORDS):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if A.numel() == 0:
        from .._creation import zeros
        real = A.real.dtype if A.dtype.is_complex else A.dtype
        return _out(zeros(tuple(A.shape[:-2]), dtype=real), out)
    if p is None or p in (2, -2) and not isinstance(p, str):
        s = _decomp.svdvals(A)
        s_max, s_min = s.narrow(-1, 0, 1), s.narrow(-1, -1, 1)
        ratio = s_min / s_max if p == -2 else s_max / s_min
        return _out(ratio.squeeze(-1), out)
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.cond(ord={_ord_name(p)}): A must be batches of square "
                           f"matrices, but they are {A.shape[-2]} by {A.shape[-1]} matrices")
    if p == "nuc":   # PyTorch: sum(s) * sum(1 / s) from the singular values s
        return _out(_norms.matrix_norm(A, p) * _decomp.svdvals(A).reciprocal().sum(-1), out)
    inverse, info = _decomp.inv_ex(A)
    inverse.masked_fill_(info[..., None, None] > 0, math.inf)
    result = _norms.matrix_norm(A, p) * _norms.matrix_norm(inverse, p)
    # 0 * inf for NumPy compatibility
    return _out(result.nan_to_num_(math.inf, math.inf, -math.inf), out)


# PyTorch's tensorinv reshapes through _reshape_alias; its result here is a fresh tensor, so a
# reshaped copy recorded under that node behaves the same.
_RESHAPE_ALIAS = Op("_reshape_alias", lambda x, shape: x.reshape(shape), "ReshapeAliasBackward0",
                    saves=())


@_amp_hook.entry("linalg_tensorinv")
def tensorinv(A, ind=2, *, out=None):
    """Mirrors ``torch.linalg.tensorinv``: the tensor X with ``tensordot(X, A, ind)`` the
    identity, from the inverse of A reshaped to a square matrix."""
    if not isinstance(ind, int) or ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    head, tail = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    rows, cols = math.prod(head), math.prod(tail)
    if rows != cols:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    inverse = _decomp.inv(A.reshape(rows, cols))
    return _out(call(_RESHAPE_ALIAS, inverse, static=(("shape", tail + head),)), out)


@_amp_hook.entry("linalg_tensorsolve")
def tensorsolve(A, B, dims=None, *, out=None):
    """Mirrors ``torch.linalg.tensorsolve``: X with ``tensordot(A, X, X.ndim) = B``, the dims
    ``dims`` of A moved to the end first."""
    if dims is not None:
        dims = tuple(dims)
        A = _shape.movedim(A, dims, tuple(range(A.ndim - len(dims), A.ndim)))
    shape = tuple(A.shape[B.ndim:])
    n, m = math.prod(shape), B.numel()
    if n != m:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:]) "
                           f"== prod(self.shape[:other.ndim]), but got {n} != {m}")
    return _out(_decomp.solve(A.reshape(n, n), B.flatten()).reshape(shape), out)


def vander(x, N=None):
    """Mirrors ``torch.linalg.vander``: the Vandermonde matrix with columns ``x**0 ... x**(N-1)``
    (increasing powers; integer input gives int64, as its cumprod does)."""
    dt = x.dtype
    if dt is D.bool_ or not (dt.is_floating_point or dt.is_complex or dt._np.kind in "iu"):
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer "
                           f"tensors, but got {dt._scalar_name}")
    x = x.unsqueeze(-1) if x.ndim == 0 else x
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    powers = x.unsqueeze(-1).expand(*x.shape, n - 1).cumprod(-1)
    return cat([powers.new_ones(*x.shape, 1), powers], -1)
