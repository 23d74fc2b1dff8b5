"""Decompositions and solvers: det, slogdet, inv, solve, cholesky, qr, svd, eig, eigh, lstsq,
pinv, matrix_rank, matrix_power and matrix_exp (``torchlike.linalg`` and the top-level aliases).

Each is one Op: the ``jnp.linalg`` routine (its gradient is ``jax.vjp`` of it) recorded under
PyTorch's backward node (``LinalgInvExBackward0``, ``LinalgSvdBackward0``, ...).  Batch dimensions
lead, as in PyTorch.  Where the maths needs care the function says so: eigh and cholesky read one
triangle, full SVDs and pinv have derivatives written here (NOTE [ linalg derivatives ]).  The
products written here run at the float32 precision policy, a static argument of their ops
(NOTE [ matmul precision ] in _precision.py); jax's routines run theirs at HIGHEST.

NOTE [ linalg errors ]
PyTorch raises ``torch.linalg.LinAlgError`` for a singular or non-positive-definite input.  The
ops compute LAPACK's ``info`` (the ``*_ex`` functions return it) inside the jitted function; in
eager mode the wrapper reads it on the host and raises with PyTorch's wording.  While tracing
(``to_jax_function``, whole-step compile) values cannot be read: no error is raised and the result
holds inf/NaN, as the ``*_ex`` variants do in PyTorch.
"""
import functools
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _amp_hook
from .. import _dtype as D, _precision, _x64
from .. import return_types as RT
from .._creation import eye
from .._dispatch import Op, call, with_out as _out
from .._meta import is_meta
from .._tensor import Tensor
from . import linalg as _products, reduce as _reduce, shape as _shape


class _LinAlgError(RuntimeError):
    """Mirrors ``torch.linalg.LinAlgError``: a RuntimeError for inputs a decomposition cannot
    handle (singular, not positive-definite)."""


_LinAlgError.__module__ = "torchlike.linalg"
LinAlgError = _LinAlgError


# --- checks -------------------------------------------------------------------------------------

def _check(name, A, square=True, low=None):
    """PyTorch's checks, in its order: a (batch of) matrix, square, floating or complex.  Half
    precision: ``low`` names the CPU kernel PyTorch lacks (else its "Low precision" error)."""
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    m, n = A.shape[-2:]
    if square and m != n:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {m} by "
                           f"{n} matrices")
    dt = A.dtype
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{dt._scalar_name}")
    if dt in (D.float16, D.bfloat16):
        if low is None:
            raise RuntimeError(f"{name}: Low precision dtypes not supported. Got {dt._scalar_name}")
        raise NotImplementedError(f"\"{low}\" not implemented for '{dt._scalar_name}'")


def _raise_on_info(info, A, message):
    """Eager mode: raise LinAlgError for the first matrix whose info is non-zero (NOTE [ linalg
    errors ]); ``message(prefix, info)`` is PyTorch's text."""
    arr = info._value()
    if isinstance(arr, jax.core.Tracer) or is_meta(arr):
        return
    flat = np.asarray(arr).reshape(-1)
    bad = np.flatnonzero(flat)
    if bad.size:
        k = int(bad[0])
        prefix = f"(Batch element {k}): " if A.ndim > 2 else ""
        raise _LinAlgError(message(prefix, int(flat[k])))


def _mH(x):
    return jnp.conj(jnp.swapaxes(x, -1, -2))


def _mm(*factors, precision):
    """The product of ``factors``, left to right."""
    out = factors[0]
    for f in factors[1:]:
        out = jnp.matmul(out, f, precision=precision)
    return out


def _lu_info(a):
    """LAPACK getrf's info: the 1-based index of the first zero pivot of the LU factorization,
    0 when there is none."""
    lu = jax.lax.linalg.lu(jax.lax.stop_gradient(a))[0]
    zero = jnp.diagonal(lu, axis1=-2, axis2=-1) == 0
    return jnp.where(zero.any(-1), _x64.argmax(zero, -1) + 1, 0).astype(jnp.int32)


def _cholesky_info(h):
    """LAPACK potrf's info: the order of the first leading minor that is not positive-definite
    (0 if none), from the pivots of an unpivoted elimination."""
    n = h.shape[-1]
    later = jnp.arange(n)

    def step(k, carry):
        s, info = carry
        p = jnp.real(s[..., k, k])
        bad = ~(p > 0)
        info = jnp.where((info == 0) & bad, k + 1, info)
        update = s[..., :, k, None] * s[..., None, k, :] / jnp.where(bad, 1, p)[..., None, None]
        mask = (later > k)[:, None] & (later > k)[None, :]
        return s - jnp.where(mask, update, 0), info

    return jax.lax.fori_loop(0, n, step, (h, jnp.zeros(h.shape[:-2], jnp.int32)))[1]


def _no_info(h):
    return jnp.zeros(h.shape[:-2], jnp.int32)


def _from_triangle(a, lower):
    """The Hermitian matrix PyTorch's eigh / cholesky see: one triangle of ``a`` and the real
    part of its diagonal."""
    tri = jnp.tril(a, -1) if lower else jnp.triu(a, 1)
    diag = jnp.real(jnp.diagonal(a, axis1=-2, axis2=-1)).astype(a.dtype)
    return tri + _mH(tri) + diag[..., None] * jnp.eye(a.shape[-1], dtype=a.dtype)


def _hermitian(a, lower):
    """``_from_triangle`` in value; its derivative is that of ``(a + a^H) / 2``, so the gradient
    is the symmetric one PyTorch returns."""
    sym = (a + _mH(a)) / 2
    return sym + jax.lax.stop_gradient(_from_triangle(a, lower) - sym)


# --- det, slogdet, logdet -----------------------------------------------------------------------

DET = Op("linalg_det", jnp.linalg.det, "LinalgDetBackward0")
SLOGDET = Op("linalg_slogdet", lambda a: tuple(jnp.linalg.slogdet(a)), "LinalgSlogdetBackward0")


def det(A, *, out=None):
    """Mirrors ``torch.linalg.det`` (and ``torch.det``): the determinant of each matrix."""
    _check("linalg.det", A, low="lu_cpu")
    return _out(call(DET, A), out)


def slogdet(A, *, out=None):
    """Mirrors ``torch.linalg.slogdet``: ``(sign, logabsdet)`` with ``det = sign *
    exp(logabsdet)`` (sign 0 and logabsdet -inf for a singular matrix)."""
    _check("linalg.slogdet", A)
    sign, logabsdet = call(SLOGDET, A)
    return _out(RT.linalg_slogdet(sign, logabsdet), out)


def _slogdet(input):
    """Mirrors ``torch.slogdet``."""
    return RT.slogdet(*slogdet(input))


def logdet(input):
    """Mirrors ``torch.logdet``: ``log(det(input))`` -- NaN for a negative determinant of a real
    matrix, as PyTorch builds it (``where(sign == -1, nan, logabsdet)``; for complex input
    ``log(sign) + logabsdet``)."""
    from . import pointwise as pw
    _check("logdet", input)
    sign, logabsdet = slogdet(input)
    if input.dtype.is_complex:
        return pw.add(pw.log(sign), logabsdet)
    return pw.where(pw.eq(sign, -1), float("nan"), logabsdet)


# --- inv, solve ---------------------------------------------------------------------------------

INV_EX = Op("linalg_inv_ex", lambda a: (jnp.linalg.inv(a), _lu_info(a)), "LinalgInvExBackward0",
            saves=("result",))


def _inv_message(prefix, info):
    return (f"linalg.inv: {prefix}The diagonal element {info} is zero, the inversion could not "
            "be completed because the input matrix is singular.")


@_amp_hook.entry("linalg_inv_ex")
def inv_ex(A, *, check_errors=False, out=None):
    """Mirrors ``torch.linalg.inv_ex``: ``(inverse, info)``; info (int32, one per matrix) is the
    index of LU's first zero pivot, 0 for an invertible matrix."""
    _check("linalg.inv", A)
    inverse, info = call(INV_EX, A)
    if check_errors:
        _raise_on_info(info, A, _inv_message)
    return _out(RT.linalg_inv_ex(inverse, info), out)


@_amp_hook.entry("linalg_inv")
def inv(A, *, out=None):
    """Mirrors ``torch.linalg.inv`` (and ``torch.inverse``): raises ``LinAlgError`` for a singular
    matrix in eager mode (NOTE [ linalg errors ])."""
    return _out(inv_ex(A, check_errors=True).inverse, out)


def _solve_ex(a, b, left, vector):
    if vector:
        b = b[..., None]
    if not left:   # X A = B  <=>  A^T X^T = B^T
        a, b = jnp.swapaxes(a, -1, -2), jnp.swapaxes(b, -1, -2)
    batch = jnp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    x = jnp.linalg.solve(jnp.broadcast_to(a, batch + a.shape[-2:]),
                         jnp.broadcast_to(b, batch + b.shape[-2:]))
    if not left:
        x = jnp.swapaxes(x, -1, -2)
    return (x[..., 0] if vector else x), _lu_info(a)


SOLVE_EX = Op("linalg_solve_ex", _solve_ex, "LinalgSolveExBackward0")


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """Mirrors ``torch.linalg.solve_ex``: ``(result, info)`` for ``A X = B`` (``X A = B`` when
    ``left`` is False).  ``B`` is a (batch of) vector(s) when it is 1-D or has ``A``'s shape
    without its last dimension; batch dimensions broadcast."""
    _check("linalg.solve", A)
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A "
                           f"of type {A.dtype._scalar_name} and B of type {B.dtype._scalar_name} "
                           "instead")
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    bm = tuple(B.shape) + (1,) if vector else tuple(B.shape)
    n = A.shape[-1]
    if len(bm) < 2 or (bm[-2] if left else bm[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        shape = f"{bm[-2]}x{bm[-1]}" if len(bm) > 1 else f"{bm[-1]}"
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation {eq} "
                           f"({n}x{n} and {shape})")
    _products._broadcast_shape(bm[:-2], A.shape[:-2])
    result, info = call(SOLVE_EX, A, B, static=(("left", bool(left)), ("vector", vector)))
    if check_errors:
        _raise_on_info(info, A, lambda prefix, _: (
            f"torch.linalg.solve: {prefix}The solver failed because the input matrix is "
            "singular."))
    return _out(RT.linalg_solve_ex(result, info), out)


@_amp_hook.entry("linalg_solve")
def solve(A, B, *, left=True, out=None):
    """Mirrors ``torch.linalg.solve``: ``X`` with ``A X = B`` (``X A = B`` when ``left`` is
    False); ``LinAlgError`` for a singular ``A`` in eager mode."""
    return _out(solve_ex(A, B, left=left, check_errors=True).result, out)


# --- cholesky -----------------------------------------------------------------------------------

@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2))
def _cholesky_factor(a, upper, precision):
    low = jnp.linalg.cholesky(_from_triangle(a, lower=not upper), symmetrize_input=False)
    return _mH(low) if upper else low


def _cholesky_fwd(a, upper, precision):
    factor = _cholesky_factor(a, upper, precision)
    return factor, factor


@_x64.scoped   # NOTE [ custom_vjp rules and 64-bit types ] in _x64.py
def _cholesky_bwd(upper, precision, factor, g):
    """NOTE [ linalg derivatives ]: PyTorch's gradient of ``A = L L^H`` (Murray, 2016):
    ``L^-H Phi L^-1`` with ``Phi = (tril(L^H gL) + tril(L^H gL, -1)^H) / 2``.  Hermitian for real
    input; for complex input its diagonal keeps the imaginary part of ``diag(L^H gL) / 2``, as
    PyTorch's does.  jax's cotangents are the conjugates of PyTorch's gradients (see
    _dispatch._vjp_fn), hence the conj on the way in and out."""
    g = jnp.conj(g)
    low, g = (_mH(factor), _mH(g)) if upper else (factor, g)
    p = jnp.tril(_mm(_mH(low), g, precision=precision))
    phi = (p + _mH(jnp.tril(p, -1))) / 2
    solve = jax.scipy.linalg.solve_triangular
    x = solve(_mH(low), phi, lower=False)                    # L^-H Phi
    return (jnp.conj(_mH(solve(_mH(low), _mH(x), lower=False))),)   # (L^-H (L^-H Phi)^H)^H


_cholesky_factor.defvjp(_cholesky_fwd, _cholesky_bwd)


def _cholesky_ex(a, upper, precision):
    factor = _cholesky_factor(a, upper, precision)
    h = jax.lax.stop_gradient(_from_triangle(a, lower=not upper))
    # the elimination that finds the failing minor runs only when the factorization failed
    info = jax.lax.cond(jnp.all(jnp.isfinite(factor)), _no_info, _cholesky_info, h)
    return factor, info


CHOLESKY_EX = Op("linalg_cholesky_ex", _cholesky_ex, "LinalgCholeskyExBackward0",
                 saves=("result",))
CHOLESKY_OLD = Op("cholesky", _cholesky_ex, "CholeskyBackward0", saves=("result",))


def _cholesky_message(name):
    return lambda prefix, info: (
        f"{name}: {prefix}The factorization could not be completed because the input is not "
        f"positive-definite (the leading minor of order {info} is not positive-definite).")


@_amp_hook.entry("linalg_cholesky_ex")
def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """Mirrors ``torch.linalg.cholesky_ex``: ``(L, info)``; info is the order of the first leading
    minor that is not positive-definite (0 on success).  Reads the lower triangle of ``A`` (the
    upper one when ``upper``)."""
    _check("linalg.cholesky", A, low="cholesky_cpu")
    L, info = call(CHOLESKY_EX, A, static=(("upper", bool(upper)),) + _precision.static())
    if check_errors:
        _raise_on_info(info, A, _cholesky_message("linalg.cholesky"))
    return _out(RT.linalg_cholesky_ex(L, info), out)


@_amp_hook.entry("linalg_cholesky")
def linalg_cholesky(A, *, upper=False, out=None):
    """Mirrors ``torch.linalg.cholesky``: ``L`` lower-triangular with ``A = L L^H`` (``U`` with
    ``A = U^H U`` when ``upper``); ``LinAlgError`` when ``A`` is not positive-definite (eager)."""
    return _out(cholesky_ex(A, upper=upper, check_errors=True).L, out)


@_amp_hook.entry("cholesky")
def cholesky(input, upper=False, *, out=None):
    """Mirrors ``torch.cholesky`` (deprecated in PyTorch for ``torch.linalg.cholesky``)."""
    warnings.warn(
        "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
        "future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\nL = "
        "torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be replaced "
        "with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce equivalent results "
        "for all valid (symmetric positive definite) inputs.", UserWarning,
        stacklevel=_amp_hook.stacklevel(2))
    _check("cholesky", input, low="cholesky_cpu")
    L, info = call(CHOLESKY_OLD, input, static=(("upper", bool(upper)),) + _precision.static())
    _raise_on_info(info, input, _cholesky_message("cholesky"))
    return _out(L, out)


# --- qr -----------------------------------------------------------------------------------------

def _qr(a, mode, precision):
    if mode == "r":
        return jnp.zeros((0,), a.dtype), jnp.linalg.qr(a, mode="r")
    with _precision.scope(precision):   # jax's QR derivative writes its dots without one
        return tuple(jnp.linalg.qr(a, mode=mode))


QR = Op("linalg_qr", _qr, "LinalgQrBackward0")
# PyTorch records these but its backward refuses them.
QR_NO_GRAD = {
    "complete": Op("linalg_qr", _qr, "LinalgQrBackward0", no_grad_reason=(
        "The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")),
    "r": Op("linalg_qr", _qr, "LinalgQrBackward0", no_grad_reason=(
        "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please "
        "use linalg.qr(A, mode='reduced') if you are going to differentiate through "
        "linalg.qr.")),
}


@_amp_hook.entry("linalg_qr")
def linalg_qr(A, mode="reduced", *, out=None):
    """Mirrors ``torch.linalg.qr``: ``(Q, R)`` with ``A = Q R``; mode 'reduced' (Q is m x k),
    'complete' (Q is m x m) or 'r' (R only; Q is empty)."""
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    _check("linalg.qr", A, square=False, low="geqrf_cpu")
    m, n = A.shape[-2:]
    op = QR_NO_GRAD["r"] if mode == "r" else (
        QR_NO_GRAD["complete"] if mode == "complete" and m > n else QR)
    if mode == "complete" and m <= n:
        mode = "reduced"   # the same factors
    Q, R = call(op, A, static=(("mode", mode),) + _precision.static())
    return _out(RT.linalg_qr(Q, R), out)


@_amp_hook.entry("qr")
def qr(input, some=True, *, out=None):
    """Mirrors ``torch.qr`` (deprecated in PyTorch for ``torch.linalg.qr``)."""
    warnings.warn(
        "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future "
        "PyTorch release.\nThe boolean parameter 'some' has been replaced with a string "
        "parameter 'mode'.\nQ, R = torch.qr(A, some)\nshould be replaced with\nQ, R = "
        "torch.linalg.qr(A, 'reduced' if some else 'complete')", UserWarning,
        stacklevel=_amp_hook.stacklevel(2))
    Q, R = linalg_qr(input, "reduced" if some else "complete")
    return _out(RT.qr(Q, R), out)


# --- svd ----------------------------------------------------------------------------------------

def _svd_tangents(u, s, vh, da, precision):
    """NOTE [ linalg derivatives ]: the derivative of the reduced SVD ``A = U diag(s) Vh``
    (U m x k, Vh k x n).  With ``P = U^H dA V``: ``ds = Re(diag P)``; ``dU = U Ou + (I - U U^H)
    dA V / s`` and ``dV = V Ov + (I - V V^H) dA^H U / s``, where off the diagonal
    ``Ou_ij = (s_j P_ij + s_i conj(P_ji)) / (s_j^2 - s_i^2)`` and
    ``Ov_ij = (s_i P_ij + s_j conj(P_ji)) / (s_j^2 - s_i^2)``; the diagonal of ``Ou`` is
    ``i Im(P_ii) / s_i`` (the phase gauge PyTorch's backward assumes).  Needs distinct non-zero
    singular values, as PyTorch's."""
    v = _mH(vh)
    p = _mm(_mH(u), da, v, precision=precision)
    ph = _mH(p)
    si, sj = s[..., :, None], s[..., None, :]
    k = s.shape[-1]
    off = ~jnp.eye(k, dtype=bool)
    inv = jnp.where(off, 1 / jnp.where(off, sj * sj - si * si, 1), 0).astype(p.dtype)
    ou = (sj * p + si * ph) * inv
    ov = (si * p + sj * ph) * inv
    diag_p = jnp.diagonal(p, axis1=-2, axis2=-1)
    if jnp.iscomplexobj(p):
        ou = ou + jnp.eye(k, dtype=p.dtype) * (1j * jnp.imag(diag_p) / s)[..., None, :]
    mm = functools.partial(_mm, precision=precision)
    du, dv = mm(u, ou), mm(v, ov)
    m, n = da.shape[-2:]
    if m > k:
        dav = mm(da, v)
        du = du + (dav - mm(u, mm(_mH(u), dav))) / s[..., None, :]
    if n > k:
        dahu = mm(_mH(da), u)
        dv = dv + (dahu - mm(v, mm(vh, dahu))) / s[..., None, :]
    return du, jnp.real(diag_p), _mH(dv)


@functools.partial(jax.custom_jvp, nondiff_argnums=(1,))
def _svd_full(a, precision):
    return tuple(jnp.linalg.svd(a, full_matrices=True))


@_svd_full.defjvp
def _svd_full_jvp(precision, primals, tangents):
    """The extra columns of U (rows of Vh) of a full SVD are any orthonormal completion: PyTorch
    differentiates the first k only (their gradient is dropped), so their tangent is 0."""
    (a,), (da,) = primals, tangents
    u, s, vh = _svd_full(a, precision)
    k = s.shape[-1]
    du, ds, dvh = _svd_tangents(u[..., :k], s, vh[..., :k, :], da, precision)
    du = jnp.concatenate([du, jnp.zeros_like(u[..., k:])], -1)
    dvh = jnp.concatenate([dvh, jnp.zeros_like(vh[..., k:, :])], -2)
    return (u, s, vh), (du, ds, dvh)


def _svd(a, full_matrices, precision):
    if full_matrices and a.shape[-1] != a.shape[-2]:
        return _svd_full(a, precision)
    return tuple(jnp.linalg.svd(a, full_matrices=False))


SVD = Op("linalg_svd", _svd, "LinalgSvdBackward0")


@_amp_hook.entry("linalg_svd")
def linalg_svd(A, full_matrices=True, *, driver=None, out=None):
    """Mirrors ``torch.linalg.svd``: ``(U, S, Vh)`` with ``A = U diag(S) Vh``, singular values
    descending.  Singular vectors are unique up to sign (phase): gradients are meaningful for
    functions that do not depend on that choice, as in PyTorch."""
    _check("linalg.svd", A, square=False, low="linalg_svd_cpu")
    U, S, Vh = call(SVD, A, static=(("full_matrices", bool(full_matrices)),)
                    + _precision.static())
    if out is not None:
        return RT.linalg_svd(*(_out(r, o) for r, o in zip((U, S, Vh), out)))
    return RT.linalg_svd(U, S, Vh)


@_amp_hook.entry("linalg_svdvals")
def svdvals(A, *, driver=None, out=None):
    """Mirrors ``torch.linalg.svdvals``: the singular values, descending."""
    _check("linalg.svd", A, square=False, low="linalg_svd_cpu")
    return _out(call(_reduce.SVDVALS, A)[1], out)


@_amp_hook.entry("svd")
def svd(input, some=True, compute_uv=True, *, out=None):
    """Mirrors ``torch.svd``: ``(U, S, V)`` -- V, not Vh; without ``compute_uv`` U and V are
    zero-filled m x m and n x n matrices."""
    if not compute_uv:
        from .._creation import zeros
        m, n = input.shape[-2:]
        batch = tuple(input.shape[:-2])
        S = svdvals(input)
        U = zeros(*batch, m, m, dtype=input.dtype)
        V = zeros(*batch, n, n, dtype=input.dtype)
        return RT.svd(U, S, V)
    U, S, Vh = linalg_svd(input, full_matrices=not some)
    V = _shape.transpose(Vh, -2, -1)
    if V.dtype.is_complex:
        from .complex import conj
        V = conj(V)
    if out is not None:
        return RT.svd(*(_out(r, o) for r, o in zip((U, S, V), out)))
    return RT.svd(U, S, V)


# --- eig, eigh ----------------------------------------------------------------------------------

def _eig(a):
    # enable_eigvec_derivs: the derivative PyTorch's backward uses (unit-norm eigenvectors;
    # meaningful for phase-invariant functions of them)
    w, v = jax.lax.linalg.eig(a, compute_left_eigenvectors=False, enable_eigvec_derivs=True)
    return w, v


EIG = Op("linalg_eig", _eig, "LinalgEigBackward0")
EIGVALS = Op("linalg_eigvals", jnp.linalg.eigvals, "LinalgEigBackward0")


def _check_eig(name, A):
    if A.ndim >= 2 and A.shape[-1] == A.shape[-2] and not (
            A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"Unknown Complex ScalarType for {A.dtype._scalar_name}")
    _check(name, A, low="linalg_eig_out_cpu")


@_amp_hook.entry("linalg_eig")
def eig(A, *, out=None):
    """Mirrors ``torch.linalg.eig``: complex ``(eigenvalues, eigenvectors)`` (also for real
    input), eigenvectors of unit norm.  Runs on the CPU (jax's eig has no accelerator kernel)."""
    _check_eig("linalg.eig", A)
    w, v = call(EIG, A)
    return _out(RT.linalg_eig(w, v), out)


@_amp_hook.entry("linalg_eigvals")
def eigvals(A, *, out=None):
    """Mirrors ``torch.linalg.eigvals``: the complex eigenvalues."""
    _check_eig("linalg.eigvals", A)
    return _out(call(EIGVALS, A), out)


def _eigh(a, lower):
    w, v = jnp.linalg.eigh(_hermitian(a, lower), symmetrize_input=False)
    return w, v


EIGH = Op("linalg_eigh", _eigh, "LinalgEighBackward0")
EIGVALSH = Op("linalg_eigvalsh", lambda a, lower: _eigh(a, lower)[0], "LinalgEighBackward0")


def _check_eigh(A, UPLO):
    if A.ndim >= 2 and not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise NotImplementedError(f"\"linalg_eigh_cpu\" not implemented for "
                                  f"'{A.dtype._scalar_name}'")
    _check("linalg.eigh", A, low="linalg_eigh_cpu")
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return (("lower", UPLO == "L"),)


@_amp_hook.entry("linalg_eigh")
def eigh(A, UPLO="L", *, out=None):
    """Mirrors ``torch.linalg.eigh``: real ascending eigenvalues and orthonormal eigenvectors of
    the Hermitian matrix held in ``A``'s lower (``UPLO='L'``) or upper triangle."""
    static = _check_eigh(A, UPLO)
    w, v = call(EIGH, A, static=static)
    return _out(RT.linalg_eigh(w, v), out)


@_amp_hook.entry("linalg_eigvalsh")
def eigvalsh(A, UPLO="L", *, out=None):
    """Mirrors ``torch.linalg.eigvalsh``: the eigenvalues of ``eigh``."""
    return _out(call(EIGVALSH, A, static=_check_eigh(A, UPLO)), out)


# --- pinv, matrix_rank, lstsq -------------------------------------------------------------------

def _cutoff(s, atol, rtol, shape, dtype):
    """PyTorch's threshold ``max(atol, rtol * s_max)``; rtol defaults to ``eps * max(m, n)``,
    or 0 where a positive atol is given."""
    if rtol is None:
        default = jnp.finfo(dtype).eps * max(shape)
        rtol = jnp.where(jnp.asarray(atol) > 0, 0.0, default)
    smax = jnp.max(s, -1, initial=0.0)
    return jnp.maximum(jnp.asarray(atol, s.dtype), jnp.asarray(rtol, s.dtype) * smax)[..., None]


@functools.partial(jax.custom_jvp, nondiff_argnums=(3, 4, 5))
def _pinv(a, atol, rtol, hermitian, default_rtol, precision):
    rtol = None if default_rtol else rtol
    if hermitian:
        w, v = jnp.linalg.eigh(a, symmetrize_input=False)
        keep = jnp.abs(w) > _cutoff(jnp.abs(w), atol, rtol, a.shape[-2:], w.dtype)
        winv = jnp.where(keep, 1 / jnp.where(keep, w, 1), 0).astype(a.dtype)
        return _mm(v * winv[..., None, :], _mH(v), precision=precision)
    u, s, vh = jnp.linalg.svd(a, full_matrices=False)
    keep = s > _cutoff(s, atol, rtol, a.shape[-2:], s.dtype)
    sinv = jnp.where(keep, 1 / jnp.where(keep, s, 1), 0).astype(a.dtype)
    return _mm(_mH(vh), sinv[..., :, None] * _mH(u), precision=precision)


@_pinv.defjvp
def _pinv_jvp(hermitian, default_rtol, precision, primals, tangents):
    """NOTE [ linalg derivatives ]: for ``P = pinv(A)`` of locally constant rank,
    ``dP = -P dA P + P P^H dA^H (I - A P) + (I - P A) dA^H P^H P`` (Golub and Pereyra), defined
    also for repeated singular values; atol and rtol get no derivative."""
    a, atol, rtol = primals
    da = tangents[0]
    p = _pinv(a, atol, rtol, hermitian, default_rtol, precision)
    ph, dah = _mH(p), _mH(da)
    m, n = a.shape[-2:]
    mm = functools.partial(_mm, precision=precision)
    dp = (-mm(p, da, p) + mm(p, ph, dah, jnp.eye(m, dtype=a.dtype) - mm(a, p))
          + mm(jnp.eye(n, dtype=a.dtype) - mm(p, a), dah, ph, p))
    return p, dp


PINV = Op("linalg_pinv", lambda a, atol, rtol, hermitian, default_rtol, precision: _pinv(
    a, atol, rtol, hermitian, default_rtol, precision), "LinalgPinvBackward0", inputs=1)


def _tolerances(A, atol, rtol, name):
    for t in (atol, rtol):
        if isinstance(t, Tensor) and t.dtype.is_complex:
            raise RuntimeError(f"{name}: atol and rtol must be real tensors")
    return (0.0 if atol is None else atol), (0.0 if rtol is None else rtol), rtol is None


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None, rcond=None):
    """Mirrors ``torch.linalg.pinv``: the Moore-Penrose pseudo-inverse, singular values below
    ``max(atol, rtol * s_max)`` treated as zero (``rtol`` defaults to ``eps * max(m, n)``, or 0
    when ``atol`` > 0).  ``hermitian`` uses eigh of the lower triangle; ``rcond`` is the legacy
    name of rtol."""
    if A.ndim < 2 or not (A.dtype.is_floating_point or A.dtype.is_complex) or A.dtype in (
            D.float16, D.bfloat16):
        raise RuntimeError(f"linalg.pinv({A.dtype._scalar_name}{{{list(A.shape)}}}): expected a "
                           "tensor with 2 or more dimensions of float, double, cfloat or cdouble "
                           "types")
    if rcond is not None:
        rtol = rcond
    atol, rtol, default = _tolerances(A, atol, rtol, "linalg.pinv")
    return _out(call(PINV, A, atol, rtol, static=(("hermitian", bool(hermitian)),
                                                  ("default_rtol", default))
                     + _precision.static()), out)


@_amp_hook.entry("pinverse")
def pinverse(input, rcond=1e-15):
    """Mirrors ``torch.pinverse``: ``linalg.pinv(input, rtol=rcond)``."""
    return pinv(input, rtol=rcond)


def _matrix_rank(a, atol, rtol, hermitian, default_rtol):
    if hermitian:
        s = jnp.abs(jnp.linalg.eigvalsh(a, symmetrize_input=False))
    else:
        s = jnp.linalg.svd(a, compute_uv=False)
    tol = _cutoff(s, atol, None if default_rtol else rtol, a.shape[-2:], s.dtype)
    return jnp.sum(s > tol, -1).astype(jnp.int64)


MATRIX_RANK = Op("linalg_matrix_rank", _matrix_rank, None)


@_amp_hook.entry("linalg_matrix_rank")
def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """Mirrors ``torch.linalg.matrix_rank``: the number of singular values (eigenvalue moduli
    when ``hermitian``) above ``max(atol, rtol * s_max)``; ``tol`` is the legacy name of atol
    (with rtol 0)."""
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least "
                           "2 dimensions.")
    if not (A.dtype.is_floating_point or A.dtype.is_complex) or A.dtype in (D.float16,
                                                                            D.bfloat16):
        raise RuntimeError("This function doesn't handle types other than float and double")
    if tol is not None:
        atol, rtol = tol, 0.0
    atol, rtol, default = _tolerances(A, atol, rtol, "linalg.matrix_rank")
    return _out(call(MATRIX_RANK, A, atol, rtol, static=(("hermitian", bool(hermitian)),
                                                         ("default_rtol", default))), out)


_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _broadcast_ab(a, b, vector):
    if vector:
        b = b[..., None]
    batch = jnp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return jnp.broadcast_to(a, batch + a.shape[-2:]), jnp.broadcast_to(b, batch + b.shape[-2:])


def _lstsq(a, b, rcond, vector, residuals, precision):
    """The minimum-norm least-squares solution through pinv (its derivative is pinv's) and,
    when asked, the squared norms of the residual columns."""
    a, b = _broadcast_ab(a, b, vector)
    x = _mm(_pinv(a, 0.0, rcond, False, rcond is None, precision), b, precision=precision)
    res = jnp.zeros((0,), jnp.real(x).dtype)
    if residuals:
        r = _mm(a, x, precision=precision) - b
        res = jnp.sum(jnp.real(r * jnp.conj(r)), -2)
    return (x[..., 0] if vector else x), res


def _lstsq_rank(a, b, rcond, vector, driver):
    """The rank (gels: none) and singular values (gelsd / gelss only) PyTorch's drivers
    report."""
    a, _ = _broadcast_ab(a, b, vector)
    s = jnp.linalg.svd(a, compute_uv=False)
    rank = jnp.sum(s > _cutoff(s, 0.0, rcond, a.shape[-2:], s.dtype), -1).astype(jnp.int64)
    if driver == "gels":
        rank = jnp.zeros((0,), jnp.int64)
    return rank, (s if driver in ("gelsd", "gelss") else jnp.zeros((0,), s.dtype))


LSTSQ = Op("linalg_lstsq", _lstsq, "LinalgLstsqBackward0")
LSTSQ_RANK = Op("linalg_lstsq", _lstsq_rank, None)


@_amp_hook.entry("linalg_lstsq")
def lstsq(A, B, rcond=None, *, driver=None):
    """Mirrors ``torch.linalg.lstsq``: ``(solution, residuals, rank, singular_values)`` of
    ``min ||A X - B||``, with the outputs of PyTorch's CPU ``driver`` (default 'gelsy').

    The solution is always the minimum-norm one (what 'gelsd' / 'gelss' return); for a
    rank-deficient A, PyTorch's 'gelsy' and 'gels' return a different (basic) solution.
    Residuals (squared norms of the columns of ``A X - B``) come when m > n and the driver is not
    'gelsy', and, in eager mode, only when every matrix has full rank, as in PyTorch; while
    tracing the rank cannot be read and they always come.
    """
    if driver is None:
        driver = "gelsy"
    if driver not in _DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, "
                           "gelsy, gelsd, gelss)")
    if not (A.dtype.is_floating_point or A.dtype.is_complex) or A.dtype in (D.float16,
                                                                            D.bfloat16):
        raise RuntimeError("This function doesn't handle types other than float and double")
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {A.dtype} and other's dtype {B.dtype}")
    vector = B.ndim == A.ndim - 1
    if B.shape[-1 if vector else -2] != A.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    rcond = None if rcond is None else float(rcond)
    static = (("rcond", rcond), ("vector", vector))
    rank, sv = call(LSTSQ_RANK, A, B, static=static + (("driver", driver),))
    m, n = A.shape[-2:]
    residuals = m > n and driver != "gelsy"
    if residuals and driver != "gels" and not isinstance(rank._value(), jax.core.Tracer):
        residuals = int(np.asarray(rank._value()).min(initial=n)) == n
    x, res = call(LSTSQ, A, B, static=static + (("residuals", residuals),)
                  + _precision.static())
    return RT.linalg_lstsq(x, res, rank, sv)


# --- matrix_power, matrix_exp -------------------------------------------------------------------

def matrix_power(A, n, *, out=None):
    """Mirrors ``torch.linalg.matrix_power`` (and ``torch.matrix_power``): ``A`` multiplied by
    itself ``n`` times by repeated squaring, as PyTorch orders the products; ``n = 0`` gives the
    identity, negative ``n`` powers of the inverse."""
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"linalg_matrix_power(): argument 'n' (position 2) must be int, not "
                        f"{type(n).__name__}")
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 "
                           "dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they "
                           f"are {A.shape[-2]} by {A.shape[-1]} matrices")
    if n == 0:
        return _out(_shape.clone(A).copy_(eye(A.shape[-1], dtype=A.dtype)), out)
    if n == 1:
        return _out(_shape.clone(A), out)
    if n < 0:
        A, n = inv(A), -n
        if n == 1:
            return _out(A, out)
    matmul = _products.matmul
    if n == 3:   # PyTorch's one exception to repeated squaring
        return _out(matmul(matmul(A, A), A), out)
    z = result = None
    while n:
        n, bit = divmod(n, 2)
        z = A if z is None else matmul(z, z)
        if bit:
            result = z if result is None else matmul(result, z)
    return _out(result, out)


MATRIX_EXP = Op("linalg_matrix_exp", jax.scipy.linalg.expm, "LinalgMatrixExpBackward0")


def matrix_exp(A):
    """Mirrors ``torch.linalg.matrix_exp`` (and ``torch.matrix_exp``): the matrix exponential."""
    _check("linalg.matrix_exp", A)
    return call(MATRIX_EXP, A)


@_amp_hook.entry("inverse")
def inverse(input, *, out=None):
    """Mirrors ``torch.inverse``: ``linalg.inv``."""
    return inv(input, out=out)
