"""The LDL factorization of ``torchlike.linalg``: ldl_factor(_ex) and ldl_solve.

NOTE [ ldl factorization ]
PyTorch returns LAPACK's sytrf / hetrf factorization (lower triangle): the Bunch-Kaufman
diagonal pivoting ``A = P L D L^T P^T`` with D made of 1x1 and 2x2 blocks, packed in one matrix
``LD`` (D's blocks on and just below the diagonal, L's multipliers below them) and 1-based int32
``pivots``: ``pivots[k] = p > 0`` says row/column k was swapped with p before a 1x1 step,
``pivots[k] = pivots[k+1] = -p`` that row/column k+1 was swapped with p before a 2x2 step.  jax
has no such routine, so it is written here step for step as LAPACK's unblocked sytf2 / hetf2
(the same pivot choices, with alpha = (1 + sqrt(17)) / 8 and, for complex input, LAPACK's
``|Re| + |Im|`` magnitudes), one ``lax.while_loop`` per matrix (vmapped over the batch);
ldl_solve is sytrs / hetrs.  ``hermitian=True`` factors a complex matrix as Hermitian (``L^H``).
PyTorch has no derivative for either.
"""
import math

import jax
import jax.numpy as jnp

from .. import _dtype as D, _x64
from .. import return_types as RT
from .._dispatch import Op, call, with_out as _out
from .decomp import _raise_on_info

_ALPHA = (1 + math.sqrt(17)) / 8


def _cabs1(z):
    return jnp.abs(jnp.real(z)) + jnp.abs(jnp.imag(z)) if jnp.iscomplexobj(z) else jnp.abs(z)


def _batched(fn, *arrays):
    """fn of single matrices, vmapped over the (broadcast) batch dimensions."""
    batch = jnp.broadcast_shapes(*(a.shape[:-k] for a, k in arrays))
    flat = [jnp.broadcast_to(a, batch + a.shape[len(a.shape) - k:]).reshape(
        (-1,) + a.shape[len(a.shape) - k:]) for a, k in arrays]
    outs = jax.vmap(fn)(*flat)
    return tuple(o.reshape(batch + o.shape[1:]) for o in outs)


def _sytf2(a, hermitian):
    """One n x n matrix: (LD, 1-based pivots, info) of LAPACK's lower sytf2 / hetf2."""
    n = a.shape[-1]
    herm = hermitian and jnp.iscomplexobj(a)
    rows, cols = jnp.arange(n)[:, None], jnp.arange(n)[None, :]
    idx = jnp.arange(n)
    conj = jnp.conj if herm else (lambda x: x)
    re = jnp.real if herm else (lambda x: x)

    def diag_abs(z):
        return jnp.abs(jnp.real(z)) if herm else _cabs1(z)

    def full(a):   # the symmetric (Hermitian) matrix held in a's lower triangle
        low = jnp.tril(a, -1)
        d = jnp.diagonal(a)
        return low + conj(low.T) + jnp.diag(re(d).astype(a.dtype))

    def step(state):
        a, piv, k, info = state
        col = a[:, k]
        absakk = diag_abs(a[k, k])
        below = jnp.where(idx > k, _cabs1(col), -1)
        imax = _x64.argmax(below)
        colmax = jnp.where(k < n - 1, below[imax], 0)
        zero = (jnp.maximum(absakk, colmax) == 0) | jnp.isnan(absakk)
        row = jnp.where((idx >= k) & (idx < imax), _cabs1(a[imax, :]), -1)
        rowmax = jnp.maximum(jnp.max(row), jnp.max(jnp.where(idx > imax, _cabs1(a[:, imax]), -1)))
        no_swap = zero | (absakk >= _ALPHA * colmax) | (
            absakk >= _ALPHA * colmax * (colmax / rowmax))
        one_by_one = no_swap | (diag_abs(a[imax, imax]) >= _ALPHA * rowmax)
        kp = jnp.where(no_swap, k, imax)
        kstep = jnp.where(one_by_one, 1, 2)
        kk = k + kstep - 1
        # swap rows and columns kk and kp of the trailing (symmetric) block
        perm = jnp.where(idx == kk, kp, jnp.where(idx == kp, kk, idx))
        trailing = (rows >= k) & (cols >= k) & (rows >= cols)
        a = jnp.where(trailing, full(a)[perm][:, perm], a)
        if herm:
            a = jnp.where((rows == cols) & (rows >= k), re(a).astype(a.dtype), a)
        # eliminate: a 1x1 pivot ...
        lower = (rows > k) & (cols > k) & (rows >= cols)
        x = jnp.where(idx > k, a[:, k], 0)
        d11 = 1 / re(a[k, k])
        one = a - jnp.where(lower, d11 * x[:, None] * conj(x)[None, :], 0)
        one = jnp.where((idx > k)[:, None] & (cols == k), one * d11, one)
        # ... or a 2x2 pivot
        k1 = jnp.minimum(k + 1, n - 1)
        if herm:
            dd = jnp.abs(a[k1, k])
            e11, e22 = jnp.real(a[k1, k1]) / dd, jnp.real(a[k, k]) / dd
            t = 1 / (e11 * e22 - 1)
            e21 = a[k1, k] / dd
            dd = t / dd
            wk = dd * (e11 * a[:, k] - e21 * a[:, k1])
            wkp1 = dd * (e22 * a[:, k1] - jnp.conj(e21) * a[:, k])
        else:
            e21 = a[k1, k]
            e11, e22 = a[k1, k1] / e21, a[k, k] / e21
            t = 1 / (e11 * e22 - 1)
            e21 = t / e21
            wk = e21 * (e11 * a[:, k] - a[:, k1])
            wkp1 = e21 * (e22 * a[:, k1] - a[:, k])
        rest = (rows > k1) & (cols > k1) & (rows >= cols)
        two = a - jnp.where(rest, a[:, k][:, None] * conj(wk)[None, :]
                            + a[:, k1][:, None] * conj(wkp1)[None, :], 0)
        two = jnp.where((idx > k1)[:, None] & (cols == k), wk[:, None], two)
        two = jnp.where((idx > k1)[:, None] & (cols == k1), wkp1[:, None], two)
        if herm:
            two = jnp.where((rows == cols) & (rows > k1), re(two).astype(a.dtype), two)
        a = jnp.where(zero, a, jnp.where(kstep == 1, one, two))
        p = (kp + 1).astype(jnp.int32)
        piv = jnp.where(kstep == 1, piv.at[k].set(p), piv.at[k].set(-p).at[k1].set(-p))
        info = jnp.where(zero & (info == 0), k + 1, info)
        return a, piv, k + kstep, info

    init = (a, jnp.zeros(n, jnp.int32), jnp.asarray(0), jnp.asarray(0, jnp.int32))
    a, piv, _, info = jax.lax.while_loop(lambda s: s[2] < n, step, init)
    return jnp.tril(a), piv, info


def _ldl_factor(a, hermitian):
    return _batched(lambda m: _sytf2(m, hermitian), (a, 2))


LDL_FACTOR_EX = Op("linalg_ldl_factor_ex", _ldl_factor, "NotImplemented", no_grad_reason=(
    "derivative for aten::linalg_ldl_factor_ex is not implemented"))


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    """Mirrors ``torch.linalg.ldl_factor_ex``: ``(LD, pivots, info)`` of LAPACK's Bunch-Kaufman
    factorization (NOTE [ ldl factorization ]); info is the 1-based index of the first exactly
    zero 1x1 block of D (0 if none)."""
    name = "torch.linalg.ldl_factor_ex"
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{A.dtype._scalar_name}")
    if A.dtype in (D.float16, D.bfloat16):
        raise NotImplementedError(f"\"ldl_factor_kernel_cpu\" not implemented for "
                                  f"'{A.dtype._scalar_name}'")
    LD, pivots, info = call(LDL_FACTOR_EX, A, static=(("hermitian", bool(hermitian)),))
    if check_errors:
        _raise_on_info(info, A, lambda prefix, i: (
            f"{name}: {prefix}The factorization could not be completed because the block "
            f"diagonal matrix D is singular (D[{i},{i}] is exactly zero)."))
    return _out(RT.linalg_ldl_factor_ex(LD, pivots, info), out)


def ldl_factor(A, *, hermitian=False, out=None):
    """Mirrors ``torch.linalg.ldl_factor``: ``(LD, pivots)`` (NOTE [ ldl factorization ]); a
    singular D raises ``LinAlgError`` in eager mode (PyTorch 2.13 raises an internal error)."""
    LD, pivots, info = ldl_factor_ex(A, hermitian=hermitian)
    _raise_on_info(info, A, lambda prefix, i: (
        f"torch.linalg.ldl_factor: {prefix}The factorization could not be completed because the "
        f"block diagonal matrix D is singular (D[{i},{i}] is exactly zero)."))
    return _out(RT.linalg_ldl_factor(LD, pivots), out)


# --- ldl_solve ----------------------------------------------------------------------------------

def _sytrs(a, piv, b, hermitian):
    """One system: X with A X = B from sytf2's (LD, pivots), as LAPACK's lower sytrs / hetrs."""
    n = a.shape[-1]
    herm = hermitian and jnp.iscomplexobj(a)
    conj = jnp.conj if herm else (lambda x: x)
    idx = jnp.arange(n)

    def swap(b, i, j):
        return b.at[jnp.stack([i, j])].set(b[jnp.stack([j, i])])

    def forward(state):   # L D Y = P^T B
        b, k = state
        p = piv[k]
        one = p > 0
        k1 = jnp.minimum(k + 1, n - 1)
        b = swap(b, jnp.where(one, k, k1), jnp.abs(p) - 1)
        # 1x1
        b1 = b - jnp.where((idx > k)[:, None], a[:, k][:, None] * b[k][None, :], 0)
        b1 = b1.at[k].set(b1[k] / jnp.real(a[k, k]) if herm else b1[k] / a[k, k])
        # 2x2
        b2 = b - jnp.where((idx > k1)[:, None], a[:, k][:, None] * b[k][None, :]
                           + a[:, k1][:, None] * b[k1][None, :], 0)
        e = a[k1, k]
        akm1, ak = a[k, k] / conj(e), a[k1, k1] / e
        denom = akm1 * ak - 1
        bkm1, bk = b2[k] / conj(e), b2[k1] / e
        b2 = b2.at[k].set((ak * bkm1 - bk) / denom).at[k1].set((akm1 * bk - bkm1) / denom)
        return jnp.where(one, b1, b2), k + jnp.where(one, 1, 2)

    def backward(state):   # L^T P^T X = Y
        b, k = state
        p = piv[k]
        one = p > 0
        k0 = jnp.maximum(k - 1, 0)
        below = (idx > k)[:, None]
        dot_k = jnp.sum(jnp.where(below, conj(a[:, k])[:, None] * b, 0), 0)
        dot_k0 = jnp.sum(jnp.where(below, conj(a[:, k0])[:, None] * b, 0), 0)
        b = b.at[k].add(-dot_k)
        b = jnp.where(one, b, b.at[k0].add(-dot_k0))
        b = swap(b, k, jnp.abs(p) - 1)
        return b, k - jnp.where(one, 1, 2)

    b, _ = jax.lax.while_loop(lambda s: s[1] < n, forward, (b, jnp.asarray(0)))
    b, _ = jax.lax.while_loop(lambda s: s[1] >= 0, backward, (b, jnp.asarray(n - 1)))
    return (b,)


def _ldl_solve(ld, piv, b, hermitian):
    return _batched(lambda a, p, x: _sytrs(a, p, x, hermitian), (ld, 2), (piv, 1), (b, 2))[0]


LDL_SOLVE = Op("linalg_ldl_solve", _ldl_solve, "NotImplemented", no_grad_reason=(
    "derivative for aten::linalg_ldl_solve is not implemented"))


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """Mirrors ``torch.linalg.ldl_solve``: ``X`` with ``A X = B`` for ``A`` factored by
    ``ldl_factor`` (NOTE [ ldl factorization ]); batch dimensions broadcast."""
    name = "torch.linalg.ldl_solve"
    if B.ndim < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [-{max(B.ndim, 1)}, "
                         f"{max(B.ndim, 1) - 1}], but got -2)")
    if LD.shape[-1] != B.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is "
                           f"{LD.shape[-2]} by {LD.shape[-1]} but each b matrix is "
                           f"{B.shape[-2]} by {B.shape[-1]}")
    if LD.dtype is not B.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{B.dtype._scalar_name} and A of type {LD.dtype._scalar_name} "
                           "instead.")
    if tuple(pivots.shape) != tuple(LD.shape[:-1]):
        raise RuntimeError(f"{name}: Expected LD.shape[:-1] and pivots.shape to be the same, but "
                           f"got pivots with shape {list(pivots.shape)} instead")
    return _out(call(LDL_SOLVE, LD, pivots, B, static=(("hermitian", bool(hermitian)),)), out)

