"""PyTorch's LAPACK-named routines outside ``torch.linalg``: geqrf, orgqr, ormqr, cholesky_solve,
cholesky_inverse and lu_unpack, and the Tensor methods lu, lu_solve and triangular_solve (whose
torch functions are deprecated in favour of torch.linalg's; the methods are not).

Each is one Op on jax's LAPACK-backed routines under PyTorch's backward node (gradients from
``jax.vjp``), or the torch.linalg function it forwards to (linalg_factor.py).  Their Tensor
methods join the reduce family (reduce.py).
"""
import functools

import jax
import jax.numpy as jnp
# NOTE: jax exposes LAPACK's geqrf only privately (jax.lax.linalg has qr, which forms Q)
from jax._src.lax.linalg import geqrf as _geqrf

from .. import _amp_hook
from .. import _dtype as D, _precision, _x64
from .. import return_types as RT
from .._creation import empty
from .._dispatch import Op, call
from .pointwise import warn_once

_FLOATS = (D.float32, D.float64, D.complex64, D.complex128)


def _factor():
    """torch.linalg's factorizations (linalg_factor.py).  Imported when first used: reduce.py,
    which binds this family's methods, is imported by linalg.py, which linalg_factor imports."""
    from . import linalg_factor
    return linalg_factor


def _mH(x):
    return jnp.conj(jnp.swapaxes(x, -1, -2))


def _check(name, kernel, A, what="input"):
    if A.ndim < 2:
        raise RuntimeError(f"{name}: {what} must have at least 2 dimensions.")
    if A.dtype not in _FLOATS:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{A.dtype._scalar_name}'")


# --- QR: geqrf, orgqr, ormqr --------------------------------------------------------------------

GEQRF = Op("geqrf", _geqrf, "GeqrfBackward0", saves=(), no_grad_reason=(
    NotImplementedError, "the derivative for 'geqrf' is not implemented."))


@_amp_hook.entry("geqrf")
def geqrf(input, *, out=None):
    """Mirrors ``torch.geqrf``: ``return_types.geqrf(a, tau)``, LAPACK's QR factorization with
    R on and above the diagonal of ``a`` and the Householder reflectors below it and in ``tau``
    (not differentiable, as in PyTorch)."""
    _check("torch.geqrf", "geqrf_cpu", input)
    return RT.geqrf(*call(GEQRF, input))


@_amp_hook.entry("orgqr")
def orgqr(input, tau):
    """Mirrors ``torch.orgqr`` (``torch.linalg.householder_product``): the first n columns of
    the Q that ``geqrf``'s reflectors make."""
    return _factor().householder_product(input, tau)


def _ormqr(a, tau, c, left, transpose, precision):
    m = a.shape[-2]
    # the full m x m Q: reflectors past tau's are identities (tau = 0)
    pad = [(0, 0)] * (a.ndim - 1)
    q = _factor()._householder_product(jnp.pad(a, pad + [(0, m - a.shape[-1])]),
                             jnp.pad(tau, pad[:-1] + [(0, m - tau.shape[-1])]))
    if transpose:
        q = _mH(q)
    return jnp.matmul(q, c, precision=precision) if left else jnp.matmul(c, q,
                                                                         precision=precision)


ORMQR = Op("ormqr", _ormqr, "OrmqrBackward0")


@_amp_hook.entry("ormqr")
def ormqr(input, tau, other, left=True, transpose=False, *, out=None):
    """Mirrors ``torch.ormqr``: ``other`` multiplied by the Q of ``geqrf``'s reflectors, on the
    left (``Q other``) or the right (``other Q``), Q's conjugate transpose when ``transpose``."""
    name = "torch.ormqr"
    _check(name, "ormqr_cpu", input)
    if other.ndim < 2:
        raise RuntimeError(f"{name}: other must have at least 2 dimensions.")
    side = -2 if left else -1
    if other.shape[side] != input.shape[-2]:
        raise RuntimeError(f"{name}: other.shape[{side}] must be equal to input.shape[-2]")
    if tau.shape[-1] > input.shape[-1]:
        raise RuntimeError(f"{name}: tau.shape[-1] must be less than or equal to input.shape[-1]")
    if tau.dtype is not input.dtype or other.dtype is not input.dtype:
        bad = tau if tau.dtype is not input.dtype else other
        raise RuntimeError(f"{name}: Expected input and {'tau' if bad is tau else 'other'} to "
                           f"have the same dtype, but input has dtype {input.dtype} and "
                           f"{'tau' if bad is tau else 'other'} has dtype {bad.dtype}")
    static = (("left", bool(left)), ("transpose", bool(transpose))) + _precision.static()
    return call(ORMQR, input, tau, other, static=static)


# --- Cholesky: cholesky_solve, cholesky_inverse -------------------------------------------------

def _potrs(b, l, upper):
    """LAPACK potrs: X with (L L^H) X = b from the triangle of ``l`` (U^H U when upper)."""
    batch = jnp.broadcast_shapes(b.shape[:-2], l.shape[:-2])
    b = jnp.broadcast_to(b, batch + b.shape[-2:])
    lower = jnp.broadcast_to(_mH(l) if upper else l, batch + l.shape[-2:])
    solve = jax.lax.linalg.triangular_solve
    y = solve(lower, b, left_side=True, lower=True)
    return solve(lower, y, left_side=True, lower=True, transpose_a=True, conjugate_a=True)


def _sum_to(x, shape):
    """x summed over the leading batch dims broadcasting added to an operand of ``shape``."""
    extra = x.ndim - len(shape)
    x = x.sum(tuple(range(extra))) if extra else x
    dims = tuple(i for i, n in enumerate(shape) if n == 1 and x.shape[i] != 1)
    return x.sum(dims, keepdims=True) if dims else x


# NOTE: PyTorch's derivatives of cholesky_solve and cholesky_inverse treat the factor as a full
# matrix (its formulas multiply by all of L), while the solves read only its triangle: jax's
# derivative of the triangular solves would give the triangle only.  Both are custom_vjp rules
# with PyTorch's formulas (FunctionsManual's cholesky_solve_backward / cholesky_inverse_backward).

@functools.partial(jax.custom_vjp, nondiff_argnums=(2, 3))
def _cholesky_solve(b, l, upper, precision):
    return _potrs(b, l, upper)


def _cholesky_solve_fwd(b, l, upper, precision):
    x = _potrs(b, l, upper)
    return x, (b, l, x)


@_x64.scoped   # NOTE [ custom_vjp rules and 64-bit types ] in _x64.py
def _cholesky_solve_bwd(upper, precision, res, g):
    b, l, x = res
    gb = _potrs(g, l, upper)
    common = jnp.matmul(gb, _mH(x), precision=precision)
    common = common + _mH(common)
    gl = -(jnp.matmul(l, common, precision=precision) if upper else
           jnp.matmul(common, l, precision=precision))
    return _sum_to(gb, b.shape), _sum_to(gl, l.shape)


_cholesky_solve.defvjp(_cholesky_solve_fwd, _cholesky_solve_bwd)


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2))
def _cholesky_inverse(l, upper, precision):
    return _potrs(jnp.broadcast_to(jnp.eye(l.shape[-1], dtype=l.dtype), l.shape), l, upper)


def _cholesky_inverse_fwd(l, upper, precision):
    inverse = _cholesky_inverse(l, upper, precision)
    return inverse, (l, inverse)


@_x64.scoped
def _cholesky_inverse_bwd(upper, precision, res, g):
    l, inverse = res
    common = jnp.matmul(inverse, jnp.matmul(g + _mH(g), inverse, precision=precision),
                        precision=precision)
    return (-(jnp.matmul(l, common, precision=precision) if upper else
              jnp.matmul(common, l, precision=precision)),)


_cholesky_inverse.defvjp(_cholesky_inverse_fwd, _cholesky_inverse_bwd)
CHOLESKY_SOLVE = Op("cholesky_solve", _cholesky_solve, "CholeskySolveBackward0",
                    saves=(0, 1, "result"))
CHOLESKY_INVERSE = Op("cholesky_inverse", _cholesky_inverse, "CholeskyInverseBackward0",
                      saves=(0, "result"))


@_amp_hook.entry("cholesky_solve")
def cholesky_solve(B, L, upper=False, *, out=None):
    """Mirrors ``torch.cholesky_solve``: X with ``A X = B`` for ``A = L L^H`` given its Cholesky
    factor ``L`` (``upper``: A = U^H U); batch dims broadcast."""
    from .._dispatch import with_out
    for name, t in (("b", B), ("A", L)):
        if t.ndim < 2:
            raise RuntimeError(f"{name} should have at least 2 dimensions, but has {t.ndim} "
                               f"dimensions instead")
    if L.shape[-1] != L.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are "
                           f"{L.shape[-2]} by {L.shape[-1]} matrices")
    if L.shape[-1] != B.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is "
                           f"{L.shape[-1]} by {L.shape[-1]} but each b matrix is "
                           f"{B.shape[-2]} by {B.shape[-1]}")
    if B.dtype is not L.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but got b.dtype = "
                           f"{B.dtype} and A.dtype = {L.dtype}")
    _check("cholesky_solve", "cholesky_solve_cpu", L)
    static = (("upper", bool(upper)),) + _precision.static()
    return with_out(call(CHOLESKY_SOLVE, B, L, static=static), out)


@_amp_hook.entry("cholesky_inverse")
def cholesky_inverse(L, upper=False, *, out=None):
    """Mirrors ``torch.cholesky_inverse``: the inverse of ``A = L L^H`` (``upper``: U^H U) from
    its Cholesky factor."""
    from .._dispatch import with_out
    if L.ndim < 2:
        raise RuntimeError("cholesky_inverse: The input tensor A must have at least 2 "
                           "dimensions.")
    if L.shape[-1] != L.shape[-2]:
        raise RuntimeError(f"cholesky_inverse: A must be batches of square matrices, but they "
                           f"are {L.shape[-2]} by {L.shape[-1]} matrices")
    _check("cholesky_inverse", "cholesky_inverse_out_cpu", L)
    static = (("upper", bool(upper)),) + _precision.static()
    return with_out(call(CHOLESKY_INVERSE, L, static=static), out)


# --- LU: lu_unpack and the deprecated lu / lu_solve methods -------------------------------------

def _lu_factors(lu, m, n, data):
    if not data:
        z = jnp.zeros((0,), lu.dtype)
        return z, z
    return _factor()._unpack(lu, m, n)


LU_UNPACK = Op("lu_unpack", _lu_factors, "LuUnpackBackward0", saves=())


@_x64.scoped
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """Mirrors ``torch.lu_unpack``: ``return_types.lu_unpack(P, L, U)`` from ``lu_factor``'s
    packed factors and 1-based int32 pivots (empty tensors for the parts not unpacked)."""
    if LU_pivots.dtype is not D.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of "
                           "torch.int32 dtype.\nNote: this function is intended to be used with "
                           "the output produced by torch.linalg.lu_factor")
    if LU_data.ndim < 2:
        raise RuntimeError(f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(LU_data.shape)} instead")
    m, n = LU_data.shape[-2:]
    static = (("m", m), ("n", n), ("data", bool(unpack_data)))
    L, U = call(LU_UNPACK, LU_data, static=static)
    if unpack_pivots:
        perm = jax.lax.linalg.lu_pivots_to_permutation(LU_pivots._value() - 1, m)
        from .._tensor import Tensor
        P = call(_factor().PERMUTATION_MATRIX, Tensor._wrap(perm),
                 static=(("dtype", LU_data.dtype._np),))
    else:
        P = empty(0, dtype=LU_data.dtype, device=LU_data.device)
    return RT.lu_unpack(P, L, U)


def _lu_method(self, pivot=True, get_infos=False):
    """``Tensor.lu``: ``torch.lu``, ``(LU, pivots)`` (and ``infos``) of
    ``torch.linalg.lu_factor_ex``."""
    warn_once("torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg."
              "lu_factor_ex and will be removed in a future PyTorch release.\nLU, pivots = "
              "torch.lu(A, compute_pivots)\nshould be replaced with\nLU, pivots = "
              "torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, pivots, info = torch.lu(A, "
              "compute_pivots, get_infos=True)\nshould be replaced with\nLU, pivots, info = "
              "torch.linalg.lu_factor_ex(A, compute_pivots)")
    LU, pivots, infos = _factor().lu_factor_ex(self, pivot=pivot)
    return (LU, pivots, infos) if get_infos else (LU, pivots)


def _lu_solve_method(self, LU_data, LU_pivots):
    """``Tensor.lu_solve``: ``torch.lu_solve(b, LU, pivots)``, ``torch.linalg.lu_solve`` with
    its arguments in the old order."""
    warn_once("torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed "
              "in a future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments "
              "reversed.\nX = torch.lu_solve(B, LU, pivots)\nshould be replaced with\nX = "
              "torch.linalg.lu_solve(LU, pivots, B)")
    return _factor().lu_solve(LU_data, LU_pivots, self)


def _triangular_solve(b, a, upper, transpose, unitriangular):
    batch = jnp.broadcast_shapes(b.shape[:-2], a.shape[:-2])
    b = jnp.broadcast_to(b, batch + b.shape[-2:])
    a = jnp.broadcast_to(a, batch + a.shape[-2:])
    x = jax.lax.linalg.triangular_solve(a, b, left_side=True, lower=not upper,
                                        transpose_a=transpose, unit_diagonal=unitriangular)
    return x, a


TRIANGULAR_SOLVE = Op("triangular_solve", _triangular_solve, "TriangularSolveBackward0")


def _triangular_solve_method(self, A, upper=True, transpose=False, unitriangular=False):
    """``Tensor.triangular_solve``: ``torch.triangular_solve(b, A)``,
    ``return_types.triangular_solve(solution, cloned_coefficient)`` of the triangular system
    ``A X = b`` (``A^T X = b`` when ``transpose``)."""
    warn_once("torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand "
              "will be removed in a future PyTorch release.\ntorch.linalg.solve_triangular has "
              "its arguments reversed and does not return a copy of one of the inputs.\nX = "
              "torch.triangular_solve(B, A).solution\nshould be replaced with\nX = "
              "torch.linalg.solve_triangular(A, B).")
    for name, t in (("b", self), ("A", A)):
        if t.ndim < 2:
            raise RuntimeError(f"torch.triangular_solve: Expected {name} to have at least 2 "
                               f"dimensions, but it has {t.ndim} dimensions instead")
    static = (("upper", bool(upper)), ("transpose", bool(transpose)),
              ("unitriangular", bool(unitriangular)))
    return RT.triangular_solve(*call(TRIANGULAR_SOLVE, self, A, static=static))


PUBLIC = ("geqrf", "orgqr", "ormqr", "cholesky_solve", "cholesky_inverse", "lu_unpack")
TENSOR_METHODS = {"geqrf": geqrf, "orgqr": orgqr, "ormqr": ormqr,
                  "cholesky_solve": cholesky_solve, "cholesky_inverse": cholesky_inverse,
                  "lu": _lu_method, "lu_solve": _lu_solve_method,
                  "triangular_solve": _triangular_solve_method}
