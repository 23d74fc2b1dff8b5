"""Parity tests for linear algebra (torchlike/_ops/linalg.py, einsum.py, decomp.py, norms.py and
the ``torchlike.linalg`` namespace) against PyTorch.

Spec tables, one row per case: values, dtypes, shapes, grad_fn names and gradients against real
torch (check_op / both from parity), finite differences in float64 (gradcheck), the
errors PyTorch raises, and the traced (jax.jit) path.

Decompositions get well-conditioned inputs (M below): SPD matrices for cholesky / eigh, distinct
eigenvalues and singular values for eig / eigh / svd.  Singular and eigen vectors are unique only
up to sign (phase), so their cases compare gauge-invariant functions of them (``abs``,
``U diag(S) Vh``), as PyTorch's own tests do.  float32 decompositions run through different
LAPACK builds in the two libraries, so those rows compare with ``F32`` tolerances.
"""
import math

import numpy as np
import pytest
import torch

import torchlike as tl

from parity import A, both, cases, check_op, gname, seed_of

# PyTorch warns about its deprecated spellings (torch.qr, torch.cholesky, chain_matmul)
pytestmark = pytest.mark.filterwarnings("ignore:torch.*is deprecated:UserWarning")

# float32 LAPACK results differ in the last bits between builds; products of a few of them more
F32 = {"rtol": 2e-4, "atol": 2e-5}


def tol(dtype):
    return F32 if dtype in ("float32", "complex64") else {}


def _orthogonal(rng, n, complex_):
    z = rng.standard_normal((n, n)) + (1j * rng.standard_normal((n, n)) if complex_ else 0)
    q, r = np.linalg.qr(z)
    return q * (np.diagonal(r) / np.abs(np.diagonal(r)))


class M(A):
    """A (batch of) well-conditioned matrix input; floats and complex require grad.

    kind: 'gen' (diagonally dominant), 'spd' (Hermitian positive definite, eigenvalues 1..4),
    'svd' (singular values spread over 1..3), 'eig' (real distinct eigenvalues, not symmetric),
    'sym' (Hermitian with distinct eigenvalues of both signs, |lambda| in 1..3).
    """

    def __init__(self, shape, dtype="float64", kind="gen", grad=True):
        super().__init__(shape, dtype, kind, grad)

    def _one(self, rng, m, n):
        cplx = self.dtype.startswith("complex")
        k = min(m, n)
        if self.dom == "gen":
            z = rng.uniform(-1, 1, (m, n)) + (1j * rng.uniform(-1, 1, (m, n)) if cplx else 0)
            return z + 2 * np.eye(m, n)
        if self.dom == "svd":
            s = np.linspace(3, 1, k) + rng.uniform(-0.1, 0.1, k)
            return _orthogonal(rng, m, cplx)[:, :k] * s @ _orthogonal(rng, n, cplx)[:k]
        lam = {"spd": np.linspace(1, 4, n), "sym": np.linspace(1, 3, n) * (-1) ** np.arange(n),
               "eig": np.linspace(-2, 2, n)}[self.dom] + rng.uniform(-0.1, 0.1, n)
        if self.dom == "eig":
            v = np.eye(n) + 0.3 * rng.uniform(-1, 1, (n, n))
            return v * lam @ np.linalg.inv(v)
        q = _orthogonal(rng, n, cplx)
        return q * lam @ q.conj().T

    def values(self, rng):
        *batch, m, n = self.shape
        mats = [self._one(rng, m, n) for _ in range(int(np.prod(batch, dtype=np.int64)))]
        v = np.stack(mats).reshape(self.shape)
        return v.astype(self.dtype) if self.dtype.startswith("complex") else \
            v.real.astype(self.dtype)

    def make(self, T, values):
        t = T.tensor(values, dtype=getattr(T, self.dtype))
        if self.grad and (t.dtype.is_floating_point or t.dtype.is_complex):
            t.requires_grad_()
        return t


def _names(r):
    """The grad_fn names of each output of a (named) tuple."""
    return [gname(t) for t in r]


def _plain(r):
    return tuple(_plain(x) for x in r) if isinstance(r, tuple) else r


# ------------------------------------------------------------------------------------------------
# Products: vdot, inner, outer, add-products, tensordot, kron, multi_dot, cross, vecdot, cdist
# ------------------------------------------------------------------------------------------------

PRODUCTS = [
    # name, fn, input shapes: swept over float32 / float64 / int64 (ints: values only)
    ("dot", lambda T, a, b: T.dot(a, b), [(4,), (4,)]),
    ("vdot", lambda T, a, b: T.vdot(a, b), [(4,), (4,)]),
    ("vdot_method", lambda T, a, b: a.vdot(b), [(4,), (4,)]),
    ("inner_1d", lambda T, a, b: T.inner(a, b), [(4,), (4,)]),
    ("inner_2d", lambda T, a, b: T.inner(a, b), [(2, 4), (3, 4)]),
    ("inner_3d_1d", lambda T, a, b: a.inner(b), [(2, 3, 4), (4,)]),
    ("inner_0d", lambda T, a, b: T.inner(a, b), [(), (3,)]),
    ("outer", lambda T, a, b: T.outer(a, b), [(3,), (4,)]),
    ("ger", lambda T, a, b: T.ger(a, b), [(3,), (4,)]),
    ("outer_method", lambda T, a, b: a.outer(b), [(3,), (4,)]),
    ("addmm", lambda T, i, a, b: T.addmm(i, a, b), [(2, 4), (2, 3), (3, 4)]),
    ("addmm_scaled", lambda T, i, a, b: T.addmm(i, a, b, beta=2, alpha=3), [(2, 4), (2, 3),
                                                                            (3, 4)]),
    ("addmm_bcast", lambda T, i, a, b: T.addmm(i, a, b, alpha=2), [(4,), (2, 3), (3, 4)]),
    ("addmm_bcast_0d", lambda T, i, a, b: i.addmm(a, b), [(), (2, 3), (3, 4)]),
    ("addmm_beta0", lambda T, i, a, b: T.addmm(i, a, b, beta=0), [(2, 4), (2, 3), (3, 4)]),
    ("addmv", lambda T, i, a, b: T.addmv(i, a, b, beta=2), [(2,), (2, 3), (3,)]),
    ("addmv_bcast", lambda T, i, a, b: i.addmv(a, b, alpha=-1), [(1,), (2, 3), (3,)]),
    ("addr", lambda T, i, a, b: T.addr(i, a, b, beta=3, alpha=2), [(2, 3), (2,), (3,)]),
    ("addr_bcast", lambda T, i, a, b: i.addr(a, b), [(3,), (2,), (3,)]),
    ("addbmm", lambda T, i, a, b: T.addbmm(i, a, b, alpha=2), [(2, 4), (3, 2, 5), (3, 5, 4)]),
    ("baddbmm", lambda T, i, a, b: T.baddbmm(i, a, b, beta=2), [(3, 2, 4), (3, 2, 5),
                                                                (3, 5, 4)]),
    ("baddbmm_bcast", lambda T, i, a, b: i.baddbmm(a, b), [(2, 4), (3, 2, 5), (3, 5, 4)]),
    ("tensordot_1", lambda T, a, b: T.tensordot(a, b, 1), [(2, 3), (3, 4)]),
    ("tensordot_2", lambda T, a, b: T.tensordot(a, b), [(2, 3, 4), (3, 4, 5)]),
    ("tensordot_0", lambda T, a, b: T.tensordot(a, b, 0), [(2,), (3,)]),
    ("tensordot_all", lambda T, a, b: T.tensordot(a, b, 2), [(2, 3), (2, 3)]),
    ("tensordot_lists", lambda T, a, b: T.tensordot(a, b, ([0, 2], [1, 0])), [(2, 3, 4),
                                                                             (4, 2, 5)]),
    ("tensordot_vec", lambda T, a, b: T.tensordot(a, b, ([1], [0])), [(3, 4), (4,)]),
    ("kron_2d", lambda T, a, b: T.kron(a, b), [(2, 3), (3, 2)]),
    ("kron_1d_2d", lambda T, a, b: a.kron(b), [(2,), (2, 3)]),
    ("kron_3d_2d", lambda T, a, b: T.kron(a, b), [(2, 1, 2), (3, 2)]),
    ("kron_0d", lambda T, a, b: T.kron(a, b), [(), (3,)]),
    ("multi_dot_2", lambda T, a, b: T.linalg.multi_dot([a, b]), [(2, 3), (3, 4)]),
    ("multi_dot_3", lambda T, a, b, c: T.linalg.multi_dot([a, b, c]), [(3, 4), (4, 3), (3, 4)]),
    ("multi_dot_3r", lambda T, a, b, c: T.linalg.multi_dot([a, b, c]), [(4, 2), (2, 5), (5, 1)]),
    ("multi_dot_vec", lambda T, a, b, c: T.linalg.multi_dot([a, b, c]), [(3,), (3, 4), (4,)]),
    ("multi_dot_5", lambda T, a, b, c, d, e: T.linalg.multi_dot([a, b, c, d, e]),
     [(2, 5), (5, 3), (3, 6), (6, 2), (2, 4)]),
    ("chain_matmul", lambda T, a, b, c: T.chain_matmul(a, b, c), [(3, 4), (4, 3), (3, 4)]),
    ("chain_matmul_1", lambda T, a: T.chain_matmul(a), [(3, 4)]),
    ("cross", lambda T, a, b: T.linalg.cross(a, b), [(4, 3), (4, 3)]),
    ("cross_dim0", lambda T, a, b: T.linalg.cross(a, b, dim=0), [(3, 2), (3, 2)]),
    ("cross_bcast", lambda T, a, b: T.linalg.cross(a, b), [(1, 3), (4, 3)]),
    ("cross_torch_dim", lambda T, a, b: T.cross(a, b, dim=1), [(2, 3), (2, 3)]),
    ("cross_method", lambda T, a, b: a.cross(b, 0), [(3, 2), (3, 2)]),
    ("matmul_mm", lambda T, a, b: T.linalg.matmul(a, b), [(2, 3), (3, 4)]),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("name,fn,shapes", cases(PRODUCTS))
def test_products(name, fn, shapes, dtype):
    check_op(f"{name}/{dtype}", fn, [A(s, dtype) for s in shapes])


FLOAT_PRODUCTS = [
    # name, fn, input shapes: float-only ops, float32 / float64
    ("vecdot", lambda T, a, b: T.linalg.vecdot(a, b), [(3, 4), (3, 4)]),
    ("vecdot_dim0", lambda T, a, b: T.linalg.vecdot(a, b, dim=0), [(3, 4), (3, 1)]),
    ("cdist", lambda T, a, b: T.cdist(a, b), [(4, 3), (5, 3)]),
    ("cdist_batched", lambda T, a, b: T.cdist(a, b), [(2, 4, 3), (5, 3)]),
    ("cdist_bcast", lambda T, a, b: T.cdist(a, b), [(2, 1, 4, 3), (3, 5, 3)]),
    ("cdist_mm_path", lambda T, a, b: T.cdist(a, b), [(30, 3), (4, 3)]),
    ("cdist_mm_forced", lambda T, a, b: T.cdist(a, b, compute_mode="use_mm_for_euclid_dist"),
     [(4, 3), (5, 3)]),
    ("cdist_no_mm", lambda T, a, b: T.cdist(a, b, compute_mode="donot_use_mm_for_euclid_dist"),
     [(30, 3), (5, 3)]),
    ("cdist_p1", lambda T, a, b: T.cdist(a, b, p=1), [(4, 3), (5, 3)]),
    ("cdist_p3", lambda T, a, b: T.cdist(a, b, p=3), [(4, 3), (5, 3)]),
    ("cdist_p_half", lambda T, a, b: T.cdist(a, b, p=0.5), [(4, 3), (5, 3)]),
    ("cdist_p0", lambda T, a, b: T.cdist(a, b, p=0), [(4, 3), (5, 3)]),
    ("cdist_inf", lambda T, a, b: T.cdist(a, b, p=math.inf), [(4, 3), (5, 3)]),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,fn,shapes", cases(FLOAT_PRODUCTS))
def test_float_products(name, fn, shapes, dtype):
    check_op(f"{name}/{dtype}", fn, [A(s, dtype) for s in shapes], **tol(dtype))


PRODUCT_SPECIAL = [
    # name, fn(T): NaN input with beta=0, bool and mixed dtypes, in-place forms, out=
    ("addmm_beta0_nan", lambda T: T.addmm(T.full((2, 2), math.nan), T.ones(2, 3), T.ones(3, 2),
                                          beta=0)),
    ("addmv_beta0_nan", lambda T: T.addmv(T.full((2,), math.nan), T.ones(2, 3), T.ones(3),
                                          beta=0)),
    ("addr_beta0_nan", lambda T: T.addr(T.full((2, 3), math.nan), T.ones(2), T.ones(3),
                                        beta=0)),
    ("baddbmm_beta0_nan", lambda T: T.baddbmm(T.full((2, 2, 2), math.nan), T.ones(2, 2, 3),
                                              T.ones(2, 3, 2), beta=0)),
    ("addbmm_beta0_nan", lambda T: T.addbmm(T.full((2, 2), math.nan), T.ones(2, 2, 3),
                                            T.ones(2, 3, 2), beta=0)),
    ("addmm_int_float_beta", lambda T: T.addmm(T.ones(2, 2, dtype=T.long),
                                               T.ones(2, 3, dtype=T.long),
                                               T.ones(3, 2, dtype=T.long), beta=2.5)),
    ("addr_bool", lambda T: T.addr(T.tensor([[True, False], [False, False]]),
                                   T.tensor([True, False]), T.tensor([False, True]))),
    ("addr_bool_beta0", lambda T: T.addr(T.tensor([[True, False]]), T.tensor([True]),
                                         T.tensor([False, True]), beta=0)),
    ("addr_mixed", lambda T: T.addr(T.ones(2, 3, dtype=T.long), T.ones(2), T.ones(3))),
    ("addr_f32_f64", lambda T: T.addr(T.ones(2, 3), T.ones(2), T.ones(3, dtype=T.float64))),
    ("outer_mixed", lambda T: T.outer(T.arange(2), T.ones(3))),
    ("outer_bool", lambda T: T.outer(T.tensor([True, False]), T.tensor([True, True]))),
    ("kron_mixed", lambda T: T.kron(T.arange(2), T.ones(3))),
    ("kron_bool", lambda T: T.kron(T.tensor([True, False]), T.tensor([True, True]))),
    ("vdot_complex", lambda T: T.vdot(T.tensor([1 + 2j, 3j]), T.tensor([2 + 1j, 1 - 1j]))),
    ("vecdot_complex", lambda T: T.linalg.vecdot(T.tensor([1 + 2j, 3j]),
                                                 T.tensor([2 + 1j, 1 - 1j]))),
    ("tensordot_tensor_dims", lambda T: T.tensordot(T.ones(2, 3), T.ones(3, 2), T.tensor(1))),
    ("tensordot_tensor_lists", lambda T: T.tensordot(T.ones(2, 3), T.ones(3, 2),
                                                     T.tensor([[1], [0]]))),
    ("cdist_same_points", lambda T: T.cdist(T.ones(3, 2), T.ones(2, 2))),
    ("addmm_", lambda T: (lambda x: (x.addmm_(T.ones(2, 3), T.ones(3, 2), alpha=2), x))(
        T.ones(2, 2))),
    ("addmv_", lambda T: (lambda x: (x.addmv_(T.ones(2, 3), T.ones(3)), x))(T.ones(2))),
    ("addr_", lambda T: (lambda x: (x.addr_(T.ones(2), T.ones(3), beta=0), x))(T.ones(2, 3))),
    ("addbmm_", lambda T: (lambda x: (x.addbmm_(T.ones(2, 2, 3), T.ones(2, 3, 2)), x))(
        T.ones(2, 2))),
    ("baddbmm_", lambda T: (lambda x: (x.baddbmm_(T.ones(2, 2, 3), T.ones(2, 3, 2)), x))(
        T.ones(2, 2, 2))),
    ("addmm_out", lambda T: (lambda o: (T.addmm(T.ones(2, 2), T.ones(2, 3), T.ones(3, 2),
                                                out=o), o))(T.empty(2, 2))),
    ("vdot_out", lambda T: (lambda o: (T.vdot(T.ones(3), T.ones(3), out=o), o))(T.empty(()))),
    ("kron_out", lambda T: (lambda o: (T.kron(T.ones(2), T.ones(2), out=o), o))(T.empty(4))),
]


@pytest.mark.parametrize("name,fn", cases(PRODUCT_SPECIAL))
def test_product_special(name, fn):
    both(fn)


def test_inplace_addmm_grad():
    """An in-place add-product on a non-leaf records PyTorch's node and gradients."""
    def go(T):
        w = T.tensor([[1., 2.], [3., 4.]], requires_grad=True)
        a = T.tensor([[1., -1., 2.], [0., 1., 1.]], requires_grad=True)
        y = w * 2
        y.addmm_(a, a.t(), beta=0.5)
        y.sum().backward()
        return gname(y), w.grad, a.grad
    both(go)


def test_chain_matmul_warns():
    with pytest.warns(UserWarning, match="chain_matmul is deprecated"):
        tl.chain_matmul(tl.ones(2, 2), tl.ones(2, 2))


def test_cross_without_dim_warns():
    with pytest.warns(UserWarning, match="without specifying the dim arg is deprecated"):
        both(lambda T: T.cross(T.ones(3, 2), T.tensor([[1.], [2.], [3.]]).expand(3, 2)))


# ------------------------------------------------------------------------------------------------
# einsum
# ------------------------------------------------------------------------------------------------

def check_values_grads(name, fn, inputs, **kw):
    """check_op without ``next_functions``: for einsum, whose graph below the top node PyTorch
    builds from permutes and bmm (torchlike records one node with PyTorch's top name)."""
    rng = np.random.default_rng(seed_of(name))
    vals = [a.values(rng) for a in inputs]

    def go(T):
        xs = [a.make(T, v) for a, v in zip(inputs, vals)]
        out = fn(T, *xs)
        res = {"out": out}
        if out.grad_fn is not None:
            g = np.random.default_rng(seed_of(name + "/g")).standard_normal(tuple(out.shape))
            out.backward(T.tensor(g, dtype=out.dtype))
            res["grads"] = [x.grad for x in xs]
        return res
    both(go, **kw)


EINSUM = [
    # name, equation, operand shapes: swept over float32 / float64 / int64
    ("matmul", "ij,jk->ik", [(2, 3), (3, 4)]),
    ("implicit", "ij,jk", [(2, 3), (3, 4)]),
    ("transpose", "ij->ji", [(2, 3)]),
    ("identity", "ij", [(2, 3)]),
    ("implicit_order", "bA", [(2, 3)]),
    ("trace", "ii", [(3, 3)]),
    ("diagonal", "ii->i", [(3, 3)]),
    ("sum_all", "ij->", [(2, 3)]),
    ("sum_rows", "ij->j", [(2, 3)]),
    ("dot", "i,i->", [(3,), (3,)]),
    ("hadamard", "ij,ij->ij", [(2, 3), (2, 3)]),
    ("outer", "i,j->ij", [(3,), (4,)]),
    ("outer3", "i,j,k->ijk", [(2,), (3,), (4,)]),
    ("bmm", "bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
    ("chain", "ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("sum_one_side", "ij,k->k", [(2, 3), (4,)]),
    ("diag_mul", "ii,i->i", [(3, 3), (3,)]),
    ("ellipsis", "...ij,...jk->...ik", [(5, 2, 3), (3, 4)]),
    ("ellipsis_mid", "i...j", [(2, 4, 5, 3)]),
    ("ellipsis_sum", "i...->...", [(2, 3)]),
    ("bcast_label", "ij,ij->ij", [(2, 3), (1, 3)]),
    ("bcast_ellipsis", "...ij,...j->...i", [(2, 1, 3, 4), (5, 4)]),
    ("scalar_operand", ",i->i", [(), (3,)]),
    ("spaces", "ij -> j i", [(2, 3)]),
    ("contract_3d", "ijk,ik->j", [(2, 3, 4), (2, 4)]),
    ("output_order", "ij,jk->ki", [(2, 3), (3, 4)]),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("name,eq,shapes", cases(EINSUM))
def test_einsum(name, eq, shapes, dtype):
    check_values_grads(f"einsum_{name}/{dtype}", lambda T, *xs: T.einsum(eq, *xs),
                       [A(s, dtype) for s in shapes])


EINSUM_FORMS = [
    # name, fn(T, a, b)
    ("list", lambda T, a, b: T.einsum("ij,jk->ik", [a, b])),
    ("sublist", lambda T, a, b: T.einsum(a, [0, 1], b, [1, 2], [0, 2])),
    ("sublist_implicit", lambda T, a, b: T.einsum(a, [0, 1], b, [1, 27])),
    ("sublist_ellipsis", lambda T, a, b: T.einsum(a, [..., 1], [...])),
]


@pytest.mark.parametrize("name,fn", cases(EINSUM_FORMS))
def test_einsum_forms(name, fn):
    check_values_grads(f"einsum_{name}", fn, [A((2, 3)), A((3, 4))])


def test_einsum_dtypes():
    both(lambda T: [T.einsum("ij->j", T.ones(2, 3, dtype=T.int32)).dtype,
                    T.einsum("ij,jk->ik", T.ones(2, 3, dtype=T.int32),
                             T.ones(3, 2, dtype=T.int32)).dtype,
                    T.einsum("ij->j", T.ones(2, 3, dtype=T.bool)).dtype,
                    T.einsum("ij,ij->ij", T.ones(2, 3, dtype=T.bool),
                             T.ones(2, 3, dtype=T.bool)).dtype])


# ------------------------------------------------------------------------------------------------
# Decompositions and solvers: values, grad_fn names and gradients (float32 / float64)
# ------------------------------------------------------------------------------------------------

def _recon(r):
    """``U diag(S) Vh`` of a (full or reduced) SVD: independent of the singular vectors' signs."""
    U, S, Vh = r
    k = S.shape[-1]
    U = U if U.shape[-1] == k else U[..., :k]
    Vh = Vh if Vh.shape[-2] == k else Vh[..., :k, :]
    return (U * S.unsqueeze(-2)) @ Vh


DECOMP = [
    # name, fn, inputs (dtype filled in)
    ("det", lambda T, x: T.linalg.det(x), [("gen", (3, 3))]),
    ("det_batched", lambda T, x: T.det(x), [("gen", (2, 3, 3))]),
    ("det_method", lambda T, x: x.det(), [("eig", (4, 4))]),
    ("slogdet_logabsdet", lambda T, x: T.linalg.slogdet(x).logabsdet, [("eig", (2, 3, 3))]),
    ("slogdet_torch", lambda T, x: T.slogdet(x)[1], [("gen", (3, 3))]),
    ("logdet", lambda T, x: T.logdet(x), [("spd", (2, 3, 3))]),
    ("logdet_method", lambda T, x: x.logdet(), [("eig", (3, 3))]),
    ("inv", lambda T, x: T.linalg.inv(x), [("gen", (3, 3))]),
    ("inv_batched", lambda T, x: T.linalg.inv(x), [("gen", (2, 2, 3, 3))]),
    ("inverse", lambda T, x: T.inverse(x), [("gen", (4, 4))]),
    ("inverse_method", lambda T, x: x.inverse(), [("gen", (3, 3))]),
    ("inv_ex", lambda T, x: T.linalg.inv_ex(x).inverse, [("gen", (2, 3, 3))]),
    ("solve", lambda T, a, b: T.linalg.solve(a, b), [("gen", (3, 3)), ("gen", (3, 2))]),
    ("solve_vector", lambda T, a, b: T.linalg.solve(a, b), [("gen", (3, 3)), ("gen", (3,))]),
    ("solve_batch_vectors", lambda T, a, b: T.linalg.solve(a, b), [("gen", (2, 3, 3)),
                                                                  ("gen", (2, 3))]),
    ("solve_bcast", lambda T, a, b: T.linalg.solve(a, b), [("gen", (2, 3, 3)),
                                                          ("gen", (4, 1, 3, 2))]),
    ("solve_right", lambda T, a, b: T.linalg.solve(a, b, left=False), [("gen", (3, 3)),
                                                                      ("gen", (4, 3))]),
    ("solve_ex", lambda T, a, b: T.linalg.solve_ex(a, b).result, [("gen", (3, 3)),
                                                                 ("gen", (3, 2))]),
    ("cholesky", lambda T, x: T.linalg.cholesky(x), [("spd", (3, 3))]),
    ("cholesky_upper", lambda T, x: T.linalg.cholesky(x, upper=True), [("spd", (2, 3, 3))]),
    ("cholesky_ex", lambda T, x: T.linalg.cholesky_ex(x).L, [("spd", (4, 4))]),
    ("qr_Q", lambda T, x: T.linalg.qr(x).Q, [("gen", (4, 3))]),
    ("qr_R", lambda T, x: T.linalg.qr(x).R, [("gen", (4, 3))]),
    ("qr_wide", lambda T, x: T.linalg.qr(x)[0] @ T.linalg.qr(x)[1], [("gen", (3, 5))]),
    ("qr_wide_R", lambda T, x: T.linalg.qr(x).R, [("gen", (3, 5))]),
    ("qr_batched", lambda T, x: T.linalg.qr(x).Q, [("gen", (2, 3, 3))]),
    ("qr_complete_square", lambda T, x: T.linalg.qr(x, mode="complete").R, [("gen", (3, 3))]),
    ("qr_complete_wide", lambda T, x: T.linalg.qr(x, "complete").Q, [("gen", (2, 4))]),
    ("qr_torch", lambda T, x: T.qr(x).R, [("gen", (4, 3))]),
    ("qr_method", lambda T, x: x.qr()[0], [("gen", (3, 3))]),
    ("svd_S", lambda T, x: T.linalg.svd(x).S, [("svd", (4, 3))]),
    ("svd_recon", lambda T, x: _recon(T.linalg.svd(x, full_matrices=False)), [("svd", (4, 3))]),
    ("svd_recon_full", lambda T, x: _recon(T.linalg.svd(x)), [("svd", (4, 3))]),
    ("svd_recon_wide_full", lambda T, x: _recon(T.linalg.svd(x)), [("svd", (2, 3, 5))]),
    ("svd_abs_U", lambda T, x: T.linalg.svd(x, full_matrices=False).U.abs(), [("svd", (4, 3))]),
    ("svd_abs_U_full", lambda T, x: T.linalg.svd(x).U[..., :3].abs(), [("svd", (5, 3))]),
    ("svd_abs_Vh_full", lambda T, x: T.linalg.svd(x).Vh[..., :2, :].abs(), [("svd", (2, 4))]),
    ("svd_abs_Vh", lambda T, x: T.linalg.svd(x).Vh.abs(), [("svd", (2, 3, 3))]),
    ("svd_torch_V", lambda T, x: T.svd(x).V.abs(), [("svd", (4, 3))]),
    ("svd_method", lambda T, x: x.svd()[1], [("svd", (3, 4))]),
    ("svdvals", lambda T, x: T.linalg.svdvals(x), [("svd", (2, 3, 4))]),
    ("eigh_values", lambda T, x: T.linalg.eigh(x).eigenvalues, [("sym", (3, 3))]),
    ("eigh_abs_vectors", lambda T, x: T.linalg.eigh(x).eigenvectors.abs(), [("sym", (2, 3, 3))]),
    ("eigh_upper", lambda T, x: T.linalg.eigh(x, UPLO="U")[0], [("spd", (4, 4))]),
    ("eigh_lower_triangle", lambda T, x: T.linalg.eigvalsh(x.tril() * 2 + x.triu(1)),
     [("sym", (3, 3))]),
    ("eigvalsh", lambda T, x: T.linalg.eigvalsh(x), [("spd", (2, 4, 4))]),
    ("eigvalsh_upper", lambda T, x: T.linalg.eigvalsh(x, "U"), [("sym", (3, 3))]),
    ("eig_values", lambda T, x: T.linalg.eig(x).eigenvalues, [("eig", (3, 3))]),
    ("eig_abs_vectors", lambda T, x: T.linalg.eig(x).eigenvectors.abs(), [("eig", (3, 3))]),
    ("eigvals", lambda T, x: T.linalg.eigvals(x), [("eig", (2, 3, 3))]),
    ("pinv", lambda T, x: T.linalg.pinv(x), [("svd", (3, 3))]),
    ("pinv_tall", lambda T, x: T.linalg.pinv(x), [("svd", (2, 5, 3))]),
    ("pinv_wide", lambda T, x: T.pinverse(x), [("svd", (3, 4))]),
    ("pinv_hermitian", lambda T, x: T.linalg.pinv(x, hermitian=True), [("sym", (3, 3))]),
    ("pinv_rtol", lambda T, x: T.linalg.pinv(x, rtol=0.5), [("svd", (4, 3))]),
    ("pinv_atol", lambda T, x: T.linalg.pinv(x, atol=1.5), [("svd", (4, 3))]),
    ("pinv_method", lambda T, x: x.pinverse(), [("svd", (3, 3))]),
    ("lstsq", lambda T, a, b: T.linalg.lstsq(a, b).solution, [("svd", (5, 3)), ("gen", (5, 2))]),
    ("lstsq_gelsd", lambda T, a, b: T.linalg.lstsq(a, b, driver="gelsd").residuals,
     [("svd", (5, 3)), ("gen", (5, 2))]),
    ("lstsq_vector", lambda T, a, b: T.linalg.lstsq(a, b).solution, [("svd", (2, 4, 3)),
                                                                    ("gen", (2, 4))]),
    ("lstsq_square", lambda T, a, b: T.linalg.lstsq(a, b).solution, [("gen", (3, 3)),
                                                                    ("gen", (3, 1))]),
    ("matrix_power_0", lambda T, x: T.linalg.matrix_power(x, 0), [("gen", (3, 3))]),
    ("matrix_power_1", lambda T, x: T.matrix_power(x, 1), [("gen", (3, 3))]),
    ("matrix_power_3", lambda T, x: T.matrix_power(x, 3), [("gen", (3, 3))]),
    ("matrix_power_6", lambda T, x: x.matrix_power(6), [("gen", (3, 3))]),
    ("matrix_power_7_batched", lambda T, x: T.matrix_power(x, 7), [("gen", (2, 3, 3))]),
    ("matrix_power_neg1", lambda T, x: T.matrix_power(x, -1), [("gen", (3, 3))]),
    ("matrix_power_neg3", lambda T, x: T.matrix_power(x, -3), [("gen", (3, 3))]),
    ("matrix_exp", lambda T, x: T.linalg.matrix_exp(x), [("gen", (3, 3))]),
    ("matrix_exp_batched", lambda T, x: x.matrix_exp(), [("eig", (2, 4, 4))]),
    ("diagonal", lambda T, x: T.linalg.diagonal(x, offset=1), [("gen", (2, 3, 4))]),
    ("diagonal_dims", lambda T, x: T.linalg.diagonal(x, dim1=0, dim2=2), [("gen", (3, 2, 3))]),
]


def _inputs(spec, dtype):
    return [M(shape, dtype, kind) if len(shape) > 1 else A(shape, dtype) for kind, shape in spec]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,fn,spec", cases(DECOMP))
def test_decompositions(name, fn, spec, dtype):
    check_op(f"{name}/{dtype}", fn, _inputs(spec, dtype), **tol(dtype))


RESULT_NODES = [
    # name, fn(T, x) -> a tuple of outputs: grad_fn names of every output
    ("slogdet", lambda T, x: T.linalg.slogdet(x)),
    ("inv_ex", lambda T, x: T.linalg.inv_ex(x)),
    ("solve_ex", lambda T, x: T.linalg.solve_ex(x, x)),
    ("cholesky_ex", lambda T, x: T.linalg.cholesky_ex(x @ x.mT + T.eye(3))),
    ("qr", lambda T, x: T.linalg.qr(x)),
    ("qr_r", lambda T, x: T.linalg.qr(x, mode="r")),
    ("svd", lambda T, x: T.linalg.svd(x)),
    ("svd_torch", lambda T, x: T.svd(x)),
    ("svd_torch_no_uv", lambda T, x: T.svd(x, compute_uv=False)),
    ("eig", lambda T, x: T.linalg.eig(x)),
    ("eigh", lambda T, x: T.linalg.eigh(x)),
    ("lstsq", lambda T, x: T.linalg.lstsq(x, x)),
    ("lstsq_gelsd", lambda T, x: T.linalg.lstsq(x, x, driver="gelsd")),
    ("matrix_rank", lambda T, x: (T.linalg.matrix_rank(x),)),
]


@pytest.mark.parametrize("name,fn", cases(RESULT_NODES))
def test_result_nodes(name, fn):
    """Every output's grad_fn (None for info / rank outputs), dtype and shape."""
    rng = np.random.default_rng(seed_of(name))
    x = M((3, 3), "float64").values(rng)

    def go(T):
        r = fn(T, T.tensor(x, requires_grad=True))
        return _names(r), [(str(t.dtype), tuple(t.shape)) for t in r], type(r).__name__
    both(go)


def test_named_results():
    x = tl.tensor(M((3, 3)).values(np.random.default_rng(0)))
    for r, fields in ((tl.linalg.slogdet(x), ("sign", "logabsdet")),
                      (tl.linalg.svd(x), ("U", "S", "Vh")), (tl.svd(x), ("U", "S", "V")),
                      (tl.linalg.qr(x), ("Q", "R")), (tl.qr(x), ("Q", "R")),
                      (tl.linalg.eig(x), ("eigenvalues", "eigenvectors")),
                      (tl.linalg.lstsq(x, x), ("solution", "residuals", "rank",
                                               "singular_values"))):
        assert r._fields == fields
    assert repr(tl.linalg.inv_ex(tl.eye(2))) == repr(torch.linalg.inv_ex(torch.eye(2)))


LSTSQ = [
    # name, fn(T, a, b): every output, per driver (float64, full-rank and rank-deficient)
    ("default", lambda T, a, b: T.linalg.lstsq(a, b)),
    ("gels", lambda T, a, b: T.linalg.lstsq(a, b, driver="gels")),
    ("gelsd", lambda T, a, b: T.linalg.lstsq(a, b, driver="gelsd")),
    ("gelss", lambda T, a, b: T.linalg.lstsq(a, b, driver="gelss")),
    ("gelsd_rcond", lambda T, a, b: T.linalg.lstsq(a, b, rcond=0.5, driver="gelsd")),
    ("wide_gelsd", lambda T, a, b: T.linalg.lstsq(a.mT[..., :2, :], b[..., :2, :],
                                                  driver="gelsd")),
    ("rank_deficient_gelsd", lambda T, a, b: T.linalg.lstsq(
        T.cat([a, a[..., :1]], -1), b, driver="gelsd")),
    ("batched_vectors", lambda T, a, b: T.linalg.lstsq(a.expand(2, 5, 3), b[:, 0].expand(2, 5),
                                                       driver="gelsd")),
]


@pytest.mark.parametrize("name,fn", cases(LSTSQ))
def test_lstsq_outputs(name, fn):
    check_op(f"lstsq_{name}", lambda T, a, b: _plain(fn(T, a, b)),
             [M((5, 3), "float64", "svd", grad=False), M((5, 2), "float64", grad=False)])


NORMS = [
    # name, fn, shape: swept over float32 / float64
    ("norm_default", lambda T, x: T.linalg.norm(x), (3, 4)),
    ("norm_3d", lambda T, x: T.linalg.norm(x), (2, 3, 4)),
    ("norm_vec_ord3", lambda T, x: T.linalg.norm(x, 3), (5,)),
    ("norm_vec_inf", lambda T, x: T.linalg.norm(x, math.inf), (5,)),
    ("norm_mat_fro", lambda T, x: T.linalg.norm(x, "fro"), (3, 4)),
    ("norm_mat_nuc", lambda T, x: T.linalg.norm(x, "nuc"), (3, 4)),
    ("norm_mat_2", lambda T, x: T.linalg.norm(x, 2), (3, 4)),
    ("norm_mat_1", lambda T, x: T.linalg.norm(x, 1), (3, 4)),
    ("norm_dim_int", lambda T, x: T.linalg.norm(x, dim=1, keepdim=True), (2, 3, 4)),
    ("norm_dim_pair", lambda T, x: T.linalg.norm(x, -2, dim=(0, 2)), (2, 3, 4)),
    ("norm_dim_str", lambda T, x: T.linalg.norm(x, "nuc", (0, 2)), (2, 3, 4)),
    ("vector_norm", lambda T, x: T.linalg.vector_norm(x), (2, 3)),
    ("vector_norm_1_dim", lambda T, x: T.linalg.vector_norm(x, 1, dim=0), (2, 3)),
    ("vector_norm_half", lambda T, x: T.linalg.vector_norm(x, 0.5, (0, 1), True), (2, 3)),
    ("vector_norm_neg_inf", lambda T, x: T.linalg.vector_norm(x, -math.inf, -1), (2, 3)),
    ("vector_norm_neg", lambda T, x: T.linalg.vector_norm(x, -2), (2, 3)),
    ("vector_norm_empty_dims", lambda T, x: T.linalg.vector_norm(x, dim=()), (2, 3)),
    ("vector_norm_0d", lambda T, x: T.linalg.vector_norm(x), ()),
    ("matrix_norm_fro", lambda T, x: T.linalg.matrix_norm(x), (2, 3, 4)),
    ("matrix_norm_fro_dims", lambda T, x: T.linalg.matrix_norm(x, dim=(2, 0), keepdim=True),
     (2, 3, 4)),
]
MATRIX_ORDS = ["nuc", 2, -2, 1, -1, math.inf, -math.inf]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,fn,shape", cases(NORMS))
def test_norms(name, fn, shape, dtype):
    check_op(f"{name}/{dtype}", fn, [A(shape, dtype, "nz")], **tol(dtype))


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [(-2, -1), (0, 2), (2, 0)], ids=str)
@pytest.mark.parametrize("ord", MATRIX_ORDS, ids=str)
def test_matrix_norm_orders(ord, dim, keepdim):
    check_op(f"matrix_norm_{ord}_{dim}_{keepdim}",
             lambda T, x: T.linalg.matrix_norm(x, ord, dim, keepdim), [A((2, 3, 4), "float64")])


NORM_DTYPES = [
    # name, fn(T): the dtype argument (casts first) and other spellings
    # (ord 0 counts non-zeros: PyTorch's backward gives no gradient -- None -- where torchlike's
    # gives zeros, so only the value is compared)
    ("vector_norm_0", lambda T: T.linalg.vector_norm(T.tensor([[1., 0., -2.], [0., 3., 0.]]), 0)),
    ("vector_norm_0_dim", lambda T: T.linalg.vector_norm(T.tensor([[1., 0.], [0., 0.]]), 0, 1)),
    ("vector_norm_dtype", lambda T: T.linalg.vector_norm(T.ones(3), dtype=T.float64)),
    ("matrix_norm_dtype", lambda T: T.linalg.matrix_norm(T.ones(2, 3), dtype=T.float64)),
    ("matrix_norm_2_dtype", lambda T: T.linalg.matrix_norm(T.eye(3), 2, dtype=T.float64)),
    ("matrix_norm_1_dtype", lambda T: T.linalg.matrix_norm(T.eye(3), 1, dtype=T.float64)),
    ("norm_complex", lambda T: T.linalg.norm(T.tensor([[1 + 1j, 2j], [3., -1j]]))),
    ("vector_norm_complex_dtype", lambda T: T.linalg.vector_norm(T.tensor([1 + 1j, 2j]),
                                                                 dtype=T.complex128)),
    ("norm_empty_fro", lambda T: T.linalg.norm(T.zeros(0, 3))),
]


@pytest.mark.parametrize("name,fn", cases(NORM_DTYPES))
def test_norm_dtypes(name, fn):
    both(fn)


RANK = [
    # name, fn(T, x): matrix_rank and its tolerances (int64 results, no grad)
    ("full", lambda T, x: T.linalg.matrix_rank(x)),
    ("deficient", lambda T, x: T.linalg.matrix_rank(T.cat([x, x[..., :1]], -1))),
    ("atol", lambda T, x: T.linalg.matrix_rank(x, atol=1.5)),
    ("rtol", lambda T, x: T.linalg.matrix_rank(x, rtol=0.5)),
    ("atol_rtol", lambda T, x: T.linalg.matrix_rank(x, atol=0.5, rtol=0.6)),
    ("tol", lambda T, x: T.linalg.matrix_rank(x, 1.5)),
    ("hermitian", lambda T, x: T.linalg.matrix_rank(x @ x.mT, hermitian=True)),
    ("batched_tensor_atol", lambda T, x: T.linalg.matrix_rank(
        x.expand(2, 4, 3), atol=T.tensor([0.5, 2.0], dtype=x.dtype))),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,fn", cases(RANK))
def test_matrix_rank(name, fn, dtype):
    check_op(f"rank_{name}/{dtype}", fn, [M((4, 3), dtype, "svd", grad=False)])


# ------------------------------------------------------------------------------------------------
# Complex inputs
# ------------------------------------------------------------------------------------------------

COMPLEX = [
    # name, fn, inputs: complex64 / complex128 parity (values, grad_fn, gradients)
    ("det", lambda T, x: T.linalg.det(x), [("gen", (3, 3))]),
    ("slogdet", lambda T, x: T.linalg.slogdet(x).logabsdet, [("gen", (2, 3, 3))]),
    ("logdet", lambda T, x: T.logdet(x), [("gen", (3, 3))]),
    ("inv", lambda T, x: T.linalg.inv(x), [("gen", (3, 3))]),
    ("solve", lambda T, a, b: T.linalg.solve(a, b), [("gen", (3, 3)), ("gen", (3, 2))]),
    ("cholesky", lambda T, x: T.linalg.cholesky(x), [("spd", (3, 3))]),
    ("qr_Q", lambda T, x: T.linalg.qr(x).Q, [("gen", (4, 3))]),
    ("qr_R", lambda T, x: T.linalg.qr(x).R, [("gen", (3, 3))]),
    ("svd_S", lambda T, x: T.linalg.svd(x).S, [("svd", (4, 3))]),
    ("svd_recon", lambda T, x: _recon(T.linalg.svd(x, full_matrices=False)), [("svd", (3, 4))]),
    ("svd_abs_U", lambda T, x: T.linalg.svd(x, full_matrices=False).U.abs(), [("svd", (4, 3))]),
    ("eigh_values", lambda T, x: T.linalg.eigh(x).eigenvalues, [("sym", (3, 3))]),
    ("eigh_abs_vectors", lambda T, x: T.linalg.eigh(x).eigenvectors.abs(), [("sym", (3, 3))]),
    ("eig_values", lambda T, x: T.linalg.eig(x).eigenvalues, [("eig", (3, 3))]),
    ("pinv", lambda T, x: T.linalg.pinv(x), [("svd", (4, 3))]),
    ("matrix_exp", lambda T, x: T.linalg.matrix_exp(x), [("gen", (3, 3))]),
    ("norm", lambda T, x: T.linalg.norm(x), [("gen", (3, 3))]),
    ("vector_norm_3", lambda T, x: T.linalg.vector_norm(x, 3, dim=0), [("gen", (3, 3))]),
    ("matrix_norm_nuc", lambda T, x: T.linalg.matrix_norm(x, "nuc"), [("svd", (3, 3))]),
    ("matrix_norm_2", lambda T, x: T.linalg.matrix_norm(x, 2), [("svd", (3, 3))]),
    ("matrix_norm_1", lambda T, x: T.linalg.matrix_norm(x, 1), [("gen", (3, 3))]),
    ("vecdot", lambda T, a, b: T.linalg.vecdot(a, b), [("gen", (3, 3)), ("gen", (3, 3))]),
    ("einsum", lambda T, a, b: T.einsum("ij,jk->ik", a, b), [("gen", (3, 3)), ("gen", (3, 2))]),
    ("addmm", lambda T, i, a, b: T.addmm(i, a, b, alpha=2), [("gen", (3, 2)), ("gen", (3, 3)),
                                                            ("gen", (3, 2))]),
]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name,fn,spec", cases(COMPLEX))
def test_complex(name, fn, spec, dtype):
    run = check_values_grads if name == "einsum" else check_op
    run(f"complex_{name}/{dtype}", fn, [M(s, dtype, k) for k, s in spec], **tol(dtype))


# ------------------------------------------------------------------------------------------------
# Finite differences (float64)
# ------------------------------------------------------------------------------------------------

def _sym(x):
    """Finite differences move one entry at a time; eigh / cholesky read one triangle and
    PyTorch's gradient is the symmetric one, so they are checked on a symmetric function of x
    (as PyTorch's own tests do)."""
    return (x + x.mT) / 2


def _spd(x):
    return x @ x.mT + tl.eye(x.shape[-1], dtype=x.dtype)


GRADCHECK = [
    # name, fn(*tensors), inputs
    ("addmm", lambda i, a, b: tl.addmm(i, a, b, beta=0.5, alpha=2), [("gen", (2, 2)),
                                                                     ("gen", (2, 3)),
                                                                     ("gen", (3, 2))]),
    ("baddbmm", lambda i, a, b: tl.baddbmm(i, a, b), [("gen", (2, 2)), ("gen", (3, 2, 2)),
                                                      ("gen", (3, 2, 2))]),
    ("addr", lambda i, a, b: tl.addr(i, a[0], b[0], alpha=3), [("gen", (2, 3)), ("gen", (1, 2)),
                                                               ("gen", (1, 3))]),
    ("einsum", lambda a, b: tl.einsum("bij,jk->bki", a, b), [("gen", (2, 2, 3)),
                                                             ("gen", (3, 3))]),
    ("einsum_diag", lambda a: tl.einsum("ii->i", a), [("gen", (3, 3))]),
    ("tensordot", lambda a, b: tl.tensordot(a, b, ([0], [1])), [("gen", (3, 2)),
                                                                ("gen", (2, 3))]),
    ("kron", lambda a, b: tl.kron(a, b), [("gen", (2, 2)), ("gen", (2, 3))]),
    ("cross", lambda a, b: tl.linalg.cross(a, b), [("gen", (2, 3)), ("svd", (2, 3))]),
    ("multi_dot", lambda a, b, c: tl.linalg.multi_dot([a, b, c]), [("gen", (2, 3)),
                                                                  ("gen", (3, 4)),
                                                                  ("gen", (4, 2))]),
    ("cdist", lambda a, b: tl.cdist(a, b), [("gen", (3, 2)), ("svd", (4, 2))]),
    ("cdist_mm", lambda a, b: tl.cdist(a, b, compute_mode="use_mm_for_euclid_dist"),
     [("gen", (3, 2)), ("svd", (4, 2))]),
    ("cdist_p3", lambda a, b: tl.cdist(a, b, p=3), [("gen", (3, 2)), ("svd", (4, 2))]),
    ("det", lambda x: tl.linalg.det(x), [("gen", (2, 3, 3))]),
    ("slogdet", lambda x: tl.linalg.slogdet(x).logabsdet, [("eig", (3, 3))]),
    ("logdet", lambda x: tl.logdet(x), [("spd", (3, 3))]),
    ("inv", lambda x: tl.linalg.inv(x), [("gen", (2, 3, 3))]),
    ("solve", lambda a, b: tl.linalg.solve(a, b), [("gen", (3, 3)), ("gen", (2, 3, 2))]),
    ("solve_right", lambda a, b: tl.linalg.solve(a, b, left=False), [("gen", (3, 3)),
                                                                     ("gen", (2, 3))]),
    ("cholesky", lambda x: tl.linalg.cholesky(_spd(x)), [("spd", (3, 3))]),
    ("cholesky_upper", lambda x: tl.linalg.cholesky(_spd(x), upper=True), [("spd", (2, 3, 3))]),
    ("qr", lambda x: tl.linalg.qr(x), [("gen", (4, 3))]),
    ("qr_wide", lambda x: tl.linalg.qr(x), [("gen", (2, 4))]),
    ("svd_recon_full", lambda x: _recon(tl.linalg.svd(x)), [("svd", (4, 3))]),
    ("svd_recon_wide", lambda x: _recon(tl.linalg.svd(x)), [("svd", (2, 4))]),
    ("svd_abs_full", lambda x: (tl.linalg.svd(x).U[:, :2].abs(), tl.linalg.svd(x).Vh.abs()),
     [("svd", (3, 2))]),
    ("svd_abs", lambda x: tuple(t.abs() for t in tl.linalg.svd(x, False)), [("svd", (3, 4))]),
    ("svdvals", lambda x: tl.linalg.svdvals(x), [("svd", (4, 3))]),
    ("eigh", lambda x: (tl.linalg.eigh(_sym(x))[0], tl.linalg.eigh(_sym(x))[1].abs()),
     [("sym", (3, 3))]),
    ("eigvalsh_upper", lambda x: tl.linalg.eigvalsh(_sym(x), "U"), [("spd", (3, 3))]),
    ("eig", lambda x: tl.linalg.eig(x)[1].abs(), [("eig", (3, 3))]),
    ("eigvals", lambda x: tl.view_as_real(tl.linalg.eigvals(x)), [("gen", (3, 3))]),
    ("pinv", lambda x: tl.linalg.pinv(x), [("svd", (4, 3))]),
    ("pinv_hermitian", lambda x: tl.linalg.pinv(x + x.mT, hermitian=True), [("sym", (3, 3))]),
    ("lstsq", lambda a, b: tl.linalg.lstsq(a, b, driver="gelsd")[:2], [("svd", (4, 2)),
                                                                      ("gen", (4, 2))]),
    ("matrix_power", lambda x: tl.linalg.matrix_power(x, -3), [("gen", (3, 3))]),
    ("matrix_exp", lambda x: tl.linalg.matrix_exp(x), [("gen", (2, 3, 3))]),
    ("matrix_norm_nuc", lambda x: tl.linalg.matrix_norm(x, "nuc"), [("svd", (3, 4))]),
    ("matrix_norm_2", lambda x: tl.linalg.matrix_norm(x, -2, (0, 2), True), [("svd", (3, 2, 4))]),
    ("matrix_norm_1", lambda x: tl.linalg.matrix_norm(x, 1), [("svd", (3, 4))]),
    ("vector_norm", lambda x: tl.linalg.vector_norm(x, 3, 1), [("svd", (3, 4))]),
]


@pytest.mark.parametrize("name,fn,spec", cases(GRADCHECK))
def test_gradcheck(name, fn, spec):
    rng = np.random.default_rng(seed_of(name))
    xs = [tl.tensor(M(s, "float64", k).values(rng), requires_grad=True) for k, s in spec]
    assert tl.autograd.gradcheck(fn, tuple(xs))
