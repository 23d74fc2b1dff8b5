"""LU factorizations and triangular solvers of ``torchlike.linalg``: lu, lu_factor(_ex),
lu_solve, solve_triangular and householder_product.

Each is one Op on jax's LAPACK-backed routines, recorded under PyTorch's backward node; its
gradient is ``jax.vjp`` of the same function.  LU follows LAPACK's getrf, as PyTorch's: the
factors packed in one matrix (unit-diagonal L below, U on and above the diagonal) and 1-based
int32 row interchanges ``pivots`` (row i was swapped with row ``pivots[i]``, in order).  The
errors of singular input follow NOTE [ linalg errors ] in decomp.py.
"""
import jax
import jax.numpy as jnp

from .. import _amp_hook
from .. import _dtype as D, _x64
from .. import return_types as RT
from .._dispatch import Op, call, with_out as _out
from .decomp import _raise_on_info
from .linalg import _broadcast_shape


def _check_lapack(name, kernel, A, square=False, dims_message=None):
    """PyTorch's checks: a (batch of) matrix (``dims_message`` words its error), square when
    asked, and a kernel for float32/64 and complex64/128 only."""
    if A.ndim < 2:
        raise RuntimeError(dims_message or f"{name}: The input tensor A must have at least 2 "
                           "dimensions.")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if A.dtype not in (D.float32, D.float64, D.complex64, D.complex128):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{A.dtype._scalar_name}'")


def _mH(x):
    return jnp.conj(jnp.swapaxes(x, -1, -2))


# --- lu_factor, lu ------------------------------------------------------------------------------

def _getrf(a, pivot):
    """LAPACK getrf: (packed LU, 1-based pivots, info = 1-based index of U's first zero
    diagonal entry, 0 if none).  Without pivoting: Doolittle elimination in place."""
    k = min(a.shape[-2:])
    if pivot:
        lu, piv, _ = jax.lax.linalg.lu(a)
        piv = piv + 1
    else:
        lu = _lu_no_pivot(a)
        piv = jnp.broadcast_to(jnp.arange(1, k + 1, dtype=jnp.int32), a.shape[:-2] + (k,))
    zero = jnp.diagonal(lu, axis1=-2, axis2=-1)[..., :k] == 0
    info = jnp.where(zero.any(-1), _x64.argmax(zero, -1) + 1, 0).astype(jnp.int32)
    return lu, piv.astype(jnp.int32), info


def _lu_no_pivot(a):
    m, n = a.shape[-2:]
    rows, cols = jnp.arange(m)[:, None], jnp.arange(n)[None, :]

    def step(j, lu):
        pivot = lu[..., j, j][..., None, None]
        col = jnp.where(rows > j, jnp.take(lu, j, axis=-1)[..., :, None] / pivot, 0)
        row = jnp.where(cols > j, jnp.take(lu, j, axis=-2)[..., None, :], 0)
        lu = lu - col * row
        return jnp.where((rows > j) & (cols == j), col, lu)

    return jax.lax.fori_loop(0, min(m, n), step, a)


LU_FACTOR_EX = Op("linalg_lu_factor_ex", _getrf, "LinalgLuFactorExBackward0")


def _unpack(lu, m, n):
    k = min(m, n)
    L = jnp.tril(lu[..., :, :k], -1) + jnp.eye(m, k, dtype=lu.dtype)
    return L, jnp.triu(lu[..., :k, :])


def _lu(a, pivot):
    lu, piv, _ = _getrf(a, pivot)
    L, U = _unpack(lu, *a.shape[-2:])
    return L, U, jax.lax.linalg.lu_pivots_to_permutation(piv - 1, a.shape[-2])


LU = Op("linalg_lu", _lu, "LinalgLuBackward0")
# A = P L U, with P[perm[i], i] = 1 (row i of L U is row perm[i] of A)
PERMUTATION_MATRIX = Op("linalg_lu", lambda perm, dtype: jnp.swapaxes(
    jax.nn.one_hot(perm, perm.shape[-1], dtype=dtype), -1, -2), None)


def _check_lu(A, pivot):
    _check_lapack("torch.lu_factor", "lu_cpu", A, dims_message=(
        f"torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: "
        f"{list(A.shape)} instead"))
    if not pivot and A.device.type == "cpu":
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    return (("pivot", bool(pivot)),)


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """Mirrors ``torch.linalg.lu_factor_ex``: ``(LU, pivots, info)``, LAPACK's getrf (info is
    the 1-based index of U's first zero diagonal entry, 0 when there is none).  ``pivot=False``
    (no row interchanges) runs on accelerators only, as in PyTorch."""
    LU_, pivots, info = call(LU_FACTOR_EX, A, static=_check_lu(A, pivot))
    if check_errors:
        _raise_on_info(info, A, _singular_u("torch.linalg.lu_factor_ex"))
    return _out(RT.linalg_lu_factor_ex(LU_, pivots, info), out)


def _singular_u(name):
    return lambda prefix, i: (
        f"{name}: {prefix}U[{i},{i}] is zero and using it on lu_solve would result in a "
        "division by zero. If you still want to perform the factorization, consider calling "
        "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


def lu_factor(A, *, pivot=True, out=None):
    """Mirrors ``torch.linalg.lu_factor``: ``(LU, pivots)``; a zero on U's diagonal raises in
    eager mode (NOTE [ linalg errors ])."""
    LU_, pivots, info = lu_factor_ex(A, pivot=pivot)
    _raise_on_info(info, A, _singular_u("torch.linalg.lu_factor"))
    return _out(RT.linalg_lu_factor(LU_, pivots), out)


def lu(A, *, pivot=True, out=None):
    """Mirrors ``torch.linalg.lu``: ``(P, L, U)`` with ``A = P L U``, L unit lower-triangular
    (m x k) and U upper-triangular (k x n), k = min(m, n); P is not differentiable, and empty
    when ``pivot`` is False (``A = L U``; accelerators only, as in PyTorch)."""
    L, U, perm = call(LU, A, static=_check_lu(A, pivot))
    if pivot:
        P = call(PERMUTATION_MATRIX, perm, static=(("dtype", A.dtype._np),))
    else:
        from .._creation import empty
        P = empty(0, dtype=A.dtype, device=A.device)
    return _out(RT.linalg_lu(P, L, U), out)


# --- lu_solve -----------------------------------------------------------------------------------

def _triangular(a, b, lower, unit, left=True, adjoint=False):
    return jax.lax.linalg.triangular_solve(a, b, left_side=left, lower=lower,
                                           transpose_a=adjoint, conjugate_a=adjoint,
                                           unit_diagonal=unit)


def _lu_solve(lu, b, piv, left, adjoint):
    if not left:   # X A = B  <=>  A^H X^H = B^H (and X A^H = B  <=>  A X^H = B^H)
        return _mH(_lu_solve(lu, _mH(b), piv, True, not adjoint))
    batch = jnp.broadcast_shapes(lu.shape[:-2], b.shape[:-2])
    lu = jnp.broadcast_to(lu, batch + lu.shape[-2:])
    b = jnp.broadcast_to(b, batch + b.shape[-2:])
    perm = jax.lax.linalg.lu_pivots_to_permutation(
        jnp.broadcast_to(piv, batch + piv.shape[-1:]) - 1, lu.shape[-1])
    if adjoint:    # A^H = U^H L^H P^T:  X = P L^-H U^-H B
        y = _triangular(lu, _triangular(lu, b, False, False, adjoint=True), True, True,
                        adjoint=True)
        inverse = jnp.argsort(perm, axis=-1)
        return jnp.take_along_axis(y, inverse[..., :, None], axis=-2)
    pb = jnp.take_along_axis(b, perm[..., :, None], axis=-2)     # P^T B
    return _triangular(lu, _triangular(lu, pb, True, True), False, False)


# the pivots are an operand but no graph input (PyTorch's node links LU and B only)
LU_SOLVE = Op("linalg_lu_solve", _lu_solve, "LinalgLuSolveBackward0", inputs=2)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """Mirrors ``torch.linalg.lu_solve``: ``X`` with ``A X = B`` for ``A = P L U`` given by
    ``lu_factor`` (``X A = B`` when ``left`` is False; ``A^H`` in place of ``A`` when
    ``adjoint``); batch dimensions broadcast."""
    name = "linalg.lu_solve"
    if B.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    _check_lapack(f"torch.{name}", "lu_solve_cpu", LU, square=True)
    n = LU.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation {eq} "
                           f"({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    if LU.dtype is not B.dtype:
        raise RuntimeError(f"{name}: Expected LU and B to have the same dtype, but found LU of "
                           f"type {LU.dtype._scalar_name} and B of type {B.dtype._scalar_name} "
                           "instead")
    if pivots.dtype is not D.int32:
        raise RuntimeError(f"{name}: pivots should be a Tensor of scalar type torch.int32")
    if pivots.shape[-1:] != LU.shape[-1:]:
        raise RuntimeError(f"{name}: Number of pivots per batch should be same as the dimension "
                           "of the matrix")
    if tuple(pivots.shape) != tuple(LU.shape[:-1]):
        raise RuntimeError(f"{name}: Expected LU.shape[:-1] and pivots.shape to be the same, but "
                           f"got pivots with shape {list(pivots.shape)} instead")
    _broadcast_shape(LU.shape[:-2], B.shape[:-2])
    return _out(call(LU_SOLVE, LU, B, pivots, static=(("left", bool(left)),
                                                       ("adjoint", bool(adjoint)))), out)


# --- solve_triangular ---------------------------------------------------------------------------

def _solve_triangular(a, b, upper, left, unitriangular):
    b = b.astype(a.dtype)    # PyTorch solves in A's dtype (and returns it)
    batch = jnp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return _triangular(jnp.broadcast_to(a, batch + a.shape[-2:]),
                       jnp.broadcast_to(b, batch + b.shape[-2:]), not upper, unitriangular,
                       left=left)


SOLVE_TRIANGULAR = Op("linalg_solve_triangular", _solve_triangular,
                      "LinalgSolveTriangularBackward0")


def solve_triangular(A, B, *, upper=None, left=True, unitriangular=False, out=None):
    """Mirrors ``torch.linalg.solve_triangular``: ``X`` with ``A X = B`` (``X A = B`` when
    ``left`` is False) for A upper- (``upper=True``) or lower-triangular, reading only that
    triangle (and not the diagonal when ``unitriangular``); batch dimensions broadcast."""
    name = "linalg.solve_triangular"
    if upper is None:
        raise TypeError('linalg_solve_triangular() missing 1 required positional arguments: '
                        '"upper"')
    if B.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    _check_lapack(name, "triangular_solve_cpu", A, square=True)
    if B.dtype not in (D.float32, D.float64, D.complex64, D.complex128):
        raise NotImplementedError(f"\"triangular_solve_cpu\" not implemented for "
                                  f"'{B.dtype._scalar_name}'")
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation {eq} "
                           f"({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    _broadcast_shape(A.shape[:-2], B.shape[:-2])
    static = (("upper", bool(upper)), ("left", bool(left)), ("unitriangular", bool(unitriangular)))
    return _out(call(SOLVE_TRIANGULAR, A, B, static=static), out)


# --- householder_product ------------------------------------------------------------------------

def _householder_product(a, tau):
    """LAPACK orgqr: the first n columns of ``H_1 ... H_k``, ``H_i = I - tau_i v_i v_i^H`` with
    v_i = (0, ..., 0, 1, a[i+1:, i]); the reflectors are applied to the identity from the last
    one, one rank-1 update each (so the derivative is that of the same sequence)."""
    m, n = a.shape[-2:]
    rows = jnp.arange(m)
    q = jnp.broadcast_to(jnp.eye(m, n, dtype=a.dtype), a.shape)

    def reflect(j, q):
        i = tau.shape[-1] - 1 - j
        col = jnp.take(a, i, axis=-1)
        v = jnp.where(rows > i, col, jnp.where(rows == i, 1, 0).astype(a.dtype))
        t = jnp.take(tau, i, axis=-1)[..., None, None]
        return q - t * v[..., :, None] * jnp.sum(jnp.conj(v)[..., :, None] * q, -2,
                                                 keepdims=True)

    return jax.lax.fori_loop(0, tau.shape[-1], reflect, q)


HOUSEHOLDER_PRODUCT = Op("linalg_householder_product", _householder_product,
                         "LinalgHouseholderProductBackward0")


@_amp_hook.entry("linalg_householder_product")
def householder_product(A, tau, *, out=None):
    """Mirrors ``torch.linalg.householder_product``: the first n columns of the product of the
    Householder reflectors ``I - tau_i v_i v_i^H`` stored below A's diagonal (LAPACK's orgqr)."""
    name = "torch.linalg.householder_product"
    if A.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if A.shape[-2] < A.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if A.shape[-1] < tau.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    if tau.ndim != A.ndim - 1 or tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau.shape[:-1])}")
    if tau.dtype is not A.dtype:
        raise RuntimeError(f"{name}: tau dtype {tau.dtype._scalar_name} does not match input "
                           f"dtype {A.dtype._scalar_name}")
    _check_lapack(name, "orgqr_cpu", A)
    return _out(call(HOUSEHOLDER_PRODUCT, A, tau), out)
