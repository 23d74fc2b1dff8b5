"""Parity rows for the ``torchlike.special`` and ``torchlike.linalg`` functions added to reach
PyTorch's namespaces: one or a few rows per name, against real torch (values, dtypes, grad_fn
names, gradients where PyTorch has them, and its errors).
"""
import math

import jax
import mpmath
import numpy as np
import pytest
import torch

import torchlike as tl

from parity import A, both, cases, check_op, same

# ------------------------------------------------------------------------------------------------
# torch.special: the gamma family
# ------------------------------------------------------------------------------------------------

GAMMA = [
    # name, fn(T, *inputs), inputs
    ("polygamma_2", lambda T, x: T.special.polygamma(2, x), [A((2, 3), "float64", "pos")]),
    ("polygamma_0", lambda T, x: T.special.polygamma(0, x), [A((2, 3), "float32", "pos")]),
    ("polygamma_1", lambda T, x: T.special.polygamma(1, x), [A((4,), "float32", "nz")]),
    ("multigammaln", lambda T, x: T.special.multigammaln(x + 2, 3), [A((2, 3), "float64", "pos")]),
    ("multigammaln_1", lambda T, x: T.special.multigammaln(x, 1), [A((4,), "float32", "pos")]),
    ("gammainc", lambda T, a, x: T.special.gammainc(a, x),
     [A((3,), "float64", "pos", grad=False), A((3,), "float64", "pos")]),
    ("gammaincc", lambda T, a, x: T.special.gammaincc(a, x),
     [A((2, 3), "float32", "pos", grad=False), A((3,), "float32", "pos")]),
    ("zeta", lambda T, s, q: T.special.zeta(s + 1, q),
     [A((3,), "float64", "pos", grad=False), A((3,), "float64", "pos")]),
    ("zeta_number_self", lambda T, q: T.special.zeta(3.0, q), [A((3,), "float32", "pos")]),
    ("zeta_number_other", lambda T, s: T.special.zeta(s + 1.5, 2.0),
     [A((3,), "float32", "pos", grad=False)]),
    ("erfcx", lambda T, x: T.special.erfcx(x * 3), [A((2, 3), "float64")]),
    ("logsumexp", lambda T, x: T.special.logsumexp(x, (0, 1), keepdim=True), [A((2, 3))]),
    # PyTorch's backward refuses the derivative in the first argument
    ("gammainc_input_grad", lambda T, a, x: T.special.gammainc(a, x),
     [A((3,), "float64", "pos"), A((3,), "float64", "pos")]),
    ("zeta_input_grad", lambda T, s: T.special.zeta(s + 1.5, 2.0), [A((3,), "float32", "pos")]),
]
REFUSED = {"gammainc_input_grad", "zeta_input_grad"}


@pytest.mark.parametrize("name,fn,inputs", cases(GAMMA))
def test_gamma_family(name, fn, inputs):
    check_op(name, fn, inputs, raises=name in REFUSED)


GAMMA_VALUES = [
    # name, fn(T): poles, integer inputs, edge values
    ("polygamma_poles", lambda T: [T.special.polygamma(n, T.tensor(
        [0., -2., -1.5, 1e-3, 2.], dtype=T.float64)) for n in (0, 2, 3)]),
    ("polygamma_int", lambda T: T.special.polygamma(2, T.tensor([1, 2]))),
    ("multigammaln_int", lambda T: T.special.multigammaln(T.tensor([3, 4]), 2)),
    ("multigammaln_below_domain", lambda T: T.special.multigammaln(T.tensor([0.5, 3.]), 3)),
    ("gammainc_edges", lambda T: [f(T.tensor([0., 1., -1., 2., 0.]), T.tensor(
        [1., 0., 1., -1., 0.])) for f in (T.special.gammainc, T.special.gammaincc)]),
    ("gammainc_zero_dim_other", lambda T: T.special.gammainc(
        T.tensor([2., 3.]), T.tensor(1., dtype=T.float64))),
    ("zeta_edges", lambda T: T.special.zeta(T.tensor([2., -1., 1., 0.5, 3., 3.]),
                                            T.tensor([1., 1., 0., 1., -2.5, -1.5]))),
    ("zeta_int", lambda T: [T.special.zeta(T.tensor([2, 3]), 2), T.special.zeta(2, T.tensor(
        [2, 3]))]),
    ("erfcx_edges", lambda T: T.special.erfcx(T.tensor([-30., -1., 0., 30., 1e30]))),
]


@pytest.mark.parametrize("name,fn", cases(GAMMA_VALUES))
def test_gamma_values(name, fn):
    both(fn)


# ------------------------------------------------------------------------------------------------
# torch.special: orthogonal polynomials (not differentiable: results never require grad)
# ------------------------------------------------------------------------------------------------

POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
               "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
               "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
               "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
               "laguerre_polynomial_l", "legendre_polynomial_p"]
# endpoints, inside and outside [-1, 1] (and [0, 1]), by degrees below and above the switch to
# the trigonometric forms; truncated, negative and NaN degrees
_X = [-1., -0.5, 0., 0.3, 0.5, 0.77, 1., 1.5, -2., 3.]
_N = [-1., 0., 1., 2., 2.7, 5., 7., 9., 12., -0.5, math.nan]


# float32 takes the same paths: a few rows of it
_POLY_SWEEP = [(name, "float64") for name in POLYNOMIALS] + [
    (name, "float32") for name in ("chebyshev_polynomial_u", "shifted_chebyshev_polynomial_w",
                                   "hermite_polynomial_h", "legendre_polynomial_p")]


@pytest.mark.parametrize("name,dtype", _POLY_SWEEP)
def test_polynomials(name, dtype):
    def go(T):
        f = getattr(T.special, name)
        dt = getattr(T, dtype)
        x = T.tensor(_X, dtype=dt, requires_grad=True)[:, None]
        # float32 recurrences near a root of a high degree: absolute error, as PyTorch's
        return f(x, T.tensor(_N, dtype=dt))
    both(go, atol=1e-6 if dtype == "float32" else 1e-12)


POLYNOMIAL_FORMS = [
    ("number_x", lambda T: T.special.chebyshev_polynomial_u(0.5, T.tensor([1, 2, 3]))),
    ("number_n", lambda T: T.special.hermite_polynomial_he(T.tensor([1, 2]), 3)),
    ("float_n", lambda T: T.special.legendre_polynomial_p(T.tensor([0.3]), 2.5)),
    ("broadcast", lambda T: T.special.laguerre_polynomial_l(T.tensor([0.5, 2.]),
                                                            T.tensor([[1], [2], [3]]))),
    ("dtypes", lambda T: T.special.shifted_chebyshev_polynomial_t(
        T.tensor([0.3]), T.tensor([3.], dtype=T.float64))),
    ("zero_dim_n", lambda T: T.special.chebyshev_polynomial_t(
        T.tensor([0.3]), T.tensor(4., dtype=T.float64))),
    ("bool", lambda T: T.special.hermite_polynomial_h(T.tensor([True, False]), T.tensor([2]))),
    ("out", lambda T: T.special.chebyshev_polynomial_t(T.tensor([0.3, 0.4]), 3,
                                                        out=T.empty(2))),
]


@pytest.mark.parametrize("name,fn", cases(POLYNOMIAL_FORMS))
def test_polynomial_forms(name, fn):
    both(fn)


# ------------------------------------------------------------------------------------------------
# torch.special: Bessel and Airy functions (not differentiable)
# ------------------------------------------------------------------------------------------------

BESSEL = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
          "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
          "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0"]
# Each branch of each function (series, recurrence, asymptotic; the Airy ray integral).
# PyTorch's float64 kernels for J, Y and Ai are off by ~1e-9 over much of x > 5 and by up to
# 3e-6 just past their own branch points (J and Y at x = 5..6, Ai at x = -2.1..-2.5, avoided
# here): float64 rows compare to 1e-8, and the mpmath test below checks float64 to a few ulps.
_XB = [-27.3, -12.6, -8.3, -4.1, -1.3, 0., 0.7, 1.4, 1.99, 2.6, 3.9, 9.4, 17.2, 24.6, 31.5,
       80.1, 700., math.inf, -math.inf, math.nan, 1e-300]


_BESSEL_SWEEP = [(name, "float64") for name in BESSEL] + [
    (name, "float32") for name in ("airy_ai", "bessel_j0", "bessel_y1", "modified_bessel_i1",
                                   "modified_bessel_k1", "scaled_modified_bessel_k0",
                                   "spherical_bessel_j0")]


@pytest.mark.parametrize("name,dtype", _BESSEL_SWEEP)
def test_bessel(name, dtype):
    tol = {"rtol": 1e-8, "atol": 1e-8} if dtype == "float64" else {}
    both(lambda T: getattr(T.special, name)(T.tensor(_XB, dtype=getattr(T, dtype),
                                                     requires_grad=True)), **tol)


_MPMATH = {
    "airy_ai": mpmath.airyai, "bessel_j0": lambda x: mpmath.besselj(0, x),
    "bessel_j1": lambda x: mpmath.besselj(1, x), "bessel_y0": lambda x: mpmath.bessely(0, x),
    "bessel_y1": lambda x: mpmath.bessely(1, x), "modified_bessel_k0": lambda x: mpmath.besselk(0, x),
    "scaled_modified_bessel_k1": lambda x: mpmath.besselk(1, x) * mpmath.exp(x),
}


@pytest.mark.parametrize("name", sorted(_MPMATH))
def test_bessel_against_mpmath(name):
    """float64 to a few ulps against mpmath (PyTorch's own float64 kernels are less accurate in
    places), over a grid crossing every branch point."""
    lo = 0.05 if name.startswith(("bessel_y", "modified", "scaled")) else -40
    x = np.linspace(lo, 40, 121)
    ref = np.array([float(_MPMATH[name](mpmath.mpf(v))) for v in x])
    got = getattr(tl.special, name)(tl.tensor(x, dtype=tl.float64)).numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-11, atol=1e-13)


def test_bessel_integer_input():
    both(lambda T: [T.special.bessel_j0(T.tensor([1, 2])), T.special.airy_ai(T.tensor([0]))])


# ------------------------------------------------------------------------------------------------
# torch.special: errors
# ------------------------------------------------------------------------------------------------

SPECIAL_ERRORS = [
    ("zeta_numbers", lambda T: T.special.zeta(2., 3.)),
    ("zeta_str", lambda T: T.special.zeta(T.ones(1), "a")),
    ("polynomial_numbers", lambda T: T.special.chebyshev_polynomial_t(0.5, 2)),
    ("gammainc_number", lambda T: T.special.gammainc(2., T.ones(1))),
    ("gammainc_int", lambda T: T.special.gammainc(T.tensor([1]), T.tensor([2]))),
    ("polygamma_tensor_n", lambda T: T.special.polygamma(T.ones(1), 1)),
    ("polygamma_negative", lambda T: T.special.polygamma(-1, T.ones(1))),
    ("polygamma_complex", lambda T: T.special.polygamma(1, T.ones(1, dtype=T.complex64))),
    ("multigammaln_float_p", lambda T: T.special.multigammaln(T.ones(1), 1.5)),
    ("multigammaln_p0", lambda T: T.special.multigammaln(T.ones(1), 0)),
    ("erfcx_number", lambda T: T.special.erfcx(2.0)),
    ("erfcx_half", lambda T: T.special.erfcx(T.ones(1, dtype=T.float16))),
    ("airy_number", lambda T: T.special.airy_ai(2.0)),
    ("bessel_half", lambda T: T.special.bessel_j0(T.ones(1, dtype=T.float16))),
    ("bessel_complex", lambda T: T.special.modified_bessel_k0(T.ones(1, dtype=T.complex64))),
    ("polynomial_bfloat16", lambda T: T.special.hermite_polynomial_h(
        T.ones(1, dtype=T.bfloat16), 2)),
    ("zeta_half", lambda T: T.special.zeta(T.ones(1, dtype=T.float16), 2.)),
]


@pytest.mark.parametrize("name,fn", cases(SPECIAL_ERRORS))
def test_special_errors(name, fn):
    same(fn, raises=True)


# ------------------------------------------------------------------------------------------------
# torch.linalg: factorizations, solvers and composites
# ------------------------------------------------------------------------------------------------

def _tuple(r):
    """A named tuple of either library as a plain tuple (their classes differ)."""
    return tuple(r)


def _tri(T, a, upper, unit=False):
    """A well-conditioned triangular matrix from ``a`` (the diagonal pushed away from 0)."""
    n = a.shape[-1]
    a = a + 3 * T.eye(n, dtype=a.dtype)
    return a.triu() if upper else a.tril()


LINALG = [
    # name, fn(T, *inputs), inputs
    ("lu_factor", lambda T, a: _tuple(T.linalg.lu_factor(a)), [A((3, 3), "float64")]),
    ("lu_factor_batch_wide", lambda T, a: _tuple(T.linalg.lu_factor(a)), [A((2, 3, 4))]),
    ("lu_factor_tall", lambda T, a: _tuple(T.linalg.lu_factor_ex(a)), [A((4, 2), "float64")]),
    ("lu", lambda T, a: _tuple(T.linalg.lu(a)), [A((3, 3), "float64")]),
    ("lu_wide", lambda T, a: _tuple(T.linalg.lu(a))[1:], [A((2, 3, 4))]),
    ("lu_tall", lambda T, a: T.linalg.lu(a).U, [A((4, 3), "float64")]),
    ("lu_solve", lambda T, a, b: T.linalg.lu_solve(*T.linalg.lu_factor(a), b),
     [A((3, 3), "float64"), A((3, 2), "float64")]),
    ("lu_solve_right_adjoint", lambda T, a, b: T.linalg.lu_solve(
        *T.linalg.lu_factor(a), b, left=False, adjoint=True),
     [A((3, 3), "float64"), A((2, 3), "float64")]),
    ("lu_solve_adjoint_broadcast", lambda T, a, b: T.linalg.lu_solve(
        *T.linalg.lu_factor(a), b, adjoint=True),
     [A((2, 3, 3), "float64"), A((4, 1, 3, 2), "float64")]),
    ("lu_solve_right", lambda T, a, b: T.linalg.lu_solve(*T.linalg.lu_factor(a), b, left=False),
     [A((3, 3), "float64"), A((2, 3), "float64")]),
    ("solve_triangular_upper", lambda T, a, b: T.linalg.solve_triangular(
        _tri(T, a, True), b, upper=True), [A((3, 3), "float64"), A((3, 2), "float64")]),
    ("solve_triangular_lower_right", lambda T, a, b: T.linalg.solve_triangular(
        _tri(T, a, False), b, upper=False, left=False), [A((3, 3)), A((2, 3))]),
    ("solve_triangular_unit_reads_triangle", lambda T, a, b: T.linalg.solve_triangular(
        a, b, upper=False, unitriangular=True), [A((3, 3), "float64"), A((3, 2), "float64")]),
    ("solve_triangular_broadcast", lambda T, a, b: T.linalg.solve_triangular(
        _tri(T, a, True), b, upper=True), [A((2, 1, 3, 3)), A((4, 3, 2))]),
    ("solve_triangular_mixed_dtypes", lambda T, a, b: T.linalg.solve_triangular(
        _tri(T, a, True), b, upper=True), [A((3, 3)), A((3, 2), "float64")]),
    ("householder_product", lambda T, a, t: T.linalg.householder_product(a, t),
     [A((4, 3), "float64"), A((2,), "float64")]),
    ("householder_product_batch", lambda T, a, t: T.linalg.householder_product(a, t),
     [A((2, 3, 3)), A((2, 3))]),
    ("householder_product_complex", lambda T, a, t: T.linalg.householder_product(
        a * (1 + 1j), t * (1 - 2j)).abs(), [A((3, 2), "float64"), A((2,), "float64")]),
    ("cond", lambda T, a: T.linalg.cond(a), [A((3, 3), "float64")]),
    ("cond_rect_minus2", lambda T, a: T.linalg.cond(a, -2), [A((2, 3, 4))]),
    # PyTorch's backward of cond through inv refuses: its masked_fill_ modifies the inverse that
    # inv's backward saved
    ("cond_1", lambda T, a: T.linalg.cond(a, 1), [A((3, 3), "float64")]),
    ("cond_fro", lambda T, a: T.linalg.cond(a, "fro"), [A((2, 3, 3))]),
    ("cond_nuc", lambda T, a: T.linalg.cond(a, "nuc"), [A((3, 3), "float64")]),
    ("cond_inf", lambda T, a: T.linalg.cond(a, -math.inf), [A((3, 3), "float64")]),
    ("tensorinv", lambda T, a: T.linalg.tensorinv(a, ind=2), [A((2, 3, 6), "float64")]),
    ("tensorinv_1", lambda T, a: T.linalg.tensorinv(a, 1), [A((6, 2, 3))]),
    ("tensorsolve", lambda T, a, b: T.linalg.tensorsolve(a, b),
     [A((2, 3, 6), "float64"), A((2, 3), "float64")]),
    ("tensorsolve_dims", lambda T, a, b: T.linalg.tensorsolve(a, b, dims=(0,)),
     [A((6, 2, 3), "float64"), A((2, 3), "float64")]),
    ("vander", lambda T, x: T.linalg.vander(x), [A((3,), "float64")]),
    ("vander_n_batch", lambda T, x: T.linalg.vander(x, N=4), [A((2, 3))]),
]


@pytest.mark.parametrize("name,fn,inputs", cases(LINALG))
def test_linalg(name, fn, inputs):
    check_op(name, fn, inputs, upstream=False, raises=name in ("cond_1", "cond_fro", "cond_inf"))


def test_cond_without_grad():
    both(lambda T: [T.linalg.cond(T.tensor([[2., 1.], [0.5, 3.]]), p)
                    for p in (1, -1, "fro", "nuc", math.inf, 2)])


def _sym(T, values, herm=False):
    a = T.tensor(values)
    return a + (a.transpose(-2, -1).conj() if herm else a.transpose(-2, -1))


_INDEFINITE = [[0.01, 2., 1., 0.], [0., -0.02, 3., 1.], [0., 0., 0., 2.], [0., 0., 0., 0.5]]
_INDEFINITE_C = [[0.01 + 0.5j, 2. - 1j, 1., 0.], [0., -0.02, 3.j, 1.], [0., 0., 0., 2.],
                 [0., 0., 0., 0.5j]]

LINALG_VALUES = [
    # name, fn(T): outputs without gradients, LDL (not differentiable in PyTorch), integers
    ("lu_factor_ex_singular_info", lambda T: _tuple(T.linalg.lu_factor_ex(T.stack(
        [T.eye(3), T.zeros(3, 3), T.tensor([[1., 2., 3.], [2., 4., 6.], [1., 0., 1.]])])))),
    ("lu_pivots_and_p", lambda T: _tuple(T.linalg.lu(T.tensor([[1., 2.], [3., 4.]])))),
    ("lu_complex", lambda T: _tuple(T.linalg.lu(T.tensor([[1 + 1j, 2.], [3., 4j]])))),
    ("ldl_factor_ex_batch", lambda T: _tuple(T.linalg.ldl_factor_ex(T.stack(
        [_sym(T, _INDEFINITE), T.eye(4), T.zeros(4, 4)])))),
    ("ldl_factor_hermitian", lambda T: _tuple(T.linalg.ldl_factor(
        _sym(T, _INDEFINITE_C, herm=True), hermitian=True))),
    ("ldl_factor_complex_symmetric", lambda T: _tuple(T.linalg.ldl_factor(
        _sym(T, _INDEFINITE_C)))),
    ("ldl_factor_solve", lambda T: T.linalg.ldl_solve(*T.linalg.ldl_factor(
        _sym(T, _INDEFINITE)), T.arange(8.).reshape(4, 2))),
    ("ldl_solve_hermitian_broadcast", lambda T: T.linalg.ldl_solve(
        *T.linalg.ldl_factor(_sym(T, _INDEFINITE_C, herm=True), hermitian=True),
        T.ones(3, 4, 1, dtype=T.complex64), hermitian=True)),
    ("ldl_factor_records_no_derivative", lambda T: T.linalg.ldl_factor(
        _sym(T, _INDEFINITE).requires_grad_()).LD),
    ("cond_singular", lambda T: [T.linalg.cond(T.tensor([[1., 2.], [2., 4.]]), p)
                                 for p in ("fro", 1, -1, math.inf)]),
    ("cond_singular_nuc", lambda T: T.linalg.cond(T.tensor([[1., 0.], [0., 0.]]), "nuc")),
    ("cond_zero", lambda T: T.linalg.cond(T.zeros(2, 2), "fro")),
    ("cond_empty", lambda T: [T.linalg.cond(T.zeros(0, 0)), T.linalg.cond(T.zeros(2, 3, 0), 1)]),
    ("cond_complex", lambda T: T.linalg.cond(T.tensor([[1 + 1j, 2.], [0.5, 1j]]), 1.0)),
    ("vander_int", lambda T: [T.linalg.vander(T.tensor([1, 2, 3])),
                              T.linalg.vander(T.tensor([1, 2], dtype=T.int8), N=3)]),
]


@pytest.mark.parametrize("name,fn", cases(LINALG_VALUES))
def test_linalg_values(name, fn):
    both(fn)


def test_ldl_backward_refused():
    def go(T):
        LD = T.linalg.ldl_factor(_sym(T, _INDEFINITE).requires_grad_()).LD
        LD.sum().backward()
    same(go, raises=True)


def _ldl_eye(T):
    return T.eye(3), T.tensor([1, 2, 3], dtype=T.int32)   # ldl_factor(eye(3))


LINALG_ERRORS = [
    ("lu_factor_singular", lambda T: T.linalg.lu_factor(T.stack([T.eye(2), T.zeros(2, 2)]))),
    ("lu_factor_ex_check", lambda T: T.linalg.lu_factor_ex(T.zeros(2, 2), check_errors=True)),
    ("lu_factor_no_pivot_cpu", lambda T: T.linalg.lu_factor(T.eye(2), pivot=False)),
    ("lu_factor_1d", lambda T: T.linalg.lu_factor(T.ones(3))),
    ("lu_factor_half", lambda T: T.linalg.lu_factor(T.eye(3, dtype=T.float16))),
    ("lu_factor_int", lambda T: T.linalg.lu(T.ones(3, 3, dtype=T.int64))),
    ("lu_solve_b_1d", lambda T: T.linalg.lu_solve(*T.linalg.lu_factor(T.eye(3)), T.ones(3))),
    ("lu_solve_shapes", lambda T: T.linalg.lu_solve(*T.linalg.lu_factor(T.eye(3)), T.ones(4, 2))),
    ("lu_solve_shapes_right", lambda T: T.linalg.lu_solve(
        *T.linalg.lu_factor(T.eye(3)), T.ones(2, 4), left=False)),
    ("lu_solve_dtypes", lambda T: T.linalg.lu_solve(
        *T.linalg.lu_factor(T.eye(3)), T.ones(3, 2, dtype=T.float64))),
    ("lu_solve_pivots_dtype", lambda T: T.linalg.lu_solve(
        T.eye(3), T.ones(3, dtype=T.int64), T.ones(3, 2))),
    ("lu_solve_pivots_count", lambda T: T.linalg.lu_solve(
        T.eye(3), T.ones(2, dtype=T.int32), T.ones(3, 2))),
    ("lu_solve_pivots_batch", lambda T: T.linalg.lu_solve(
        T.eye(3).expand(2, 3, 3), T.ones(3, dtype=T.int32), T.ones(3, 2))),
    ("lu_solve_not_square", lambda T: T.linalg.lu_solve(
        T.ones(3, 2), T.ones(2, dtype=T.int32), T.ones(3, 2))),
    ("solve_triangular_no_upper", lambda T: T.linalg.solve_triangular(T.eye(3), T.ones(3, 2))),
    ("solve_triangular_b_1d", lambda T: T.linalg.solve_triangular(T.eye(3), T.ones(3),
                                                                  upper=True)),
    ("solve_triangular_shapes", lambda T: T.linalg.solve_triangular(
        T.eye(3), T.ones(4, 3), upper=False)),
    ("solve_triangular_not_square", lambda T: T.linalg.solve_triangular(
        T.ones(3, 4), T.ones(3, 2), upper=False)),
    ("solve_triangular_int", lambda T: T.linalg.solve_triangular(
        T.eye(3, dtype=T.int32), T.ones(3, 2, dtype=T.int32), upper=True)),
    ("householder_product_tau_long", lambda T: T.linalg.householder_product(T.ones(3, 2),
                                                                            T.ones(3))),
    ("householder_product_wide", lambda T: T.linalg.householder_product(T.ones(2, 3),
                                                                        T.ones(2))),
    ("householder_product_dtype", lambda T: T.linalg.householder_product(
        T.ones(3, 2), T.ones(2, dtype=T.float64))),
    ("householder_product_1d", lambda T: T.linalg.householder_product(T.ones(3), T.ones(2))),
    ("householder_product_batch", lambda T: T.linalg.householder_product(T.ones(2, 3, 2),
                                                                         T.ones(3, 2))),
    ("householder_product_int", lambda T: T.linalg.householder_product(
        T.ones(3, 2, dtype=T.int32), T.ones(2, dtype=T.int32))),
    ("ldl_factor_not_square", lambda T: T.linalg.ldl_factor(T.ones(3, 4))),
    ("ldl_factor_half", lambda T: T.linalg.ldl_factor(T.eye(3, dtype=T.float16))),
    ("ldl_factor_int", lambda T: T.linalg.ldl_factor(T.eye(3, dtype=T.int64))),
    ("ldl_solve_b_1d", lambda T: T.linalg.ldl_solve(*_ldl_eye(T), T.ones(3))),
    ("ldl_solve_shapes", lambda T: T.linalg.ldl_solve(*_ldl_eye(T),
                                                      T.ones(4, 1))),
    ("ldl_solve_dtypes", lambda T: T.linalg.ldl_solve(
        *_ldl_eye(T), T.ones(3, 1, dtype=T.float64))),
    ("ldl_solve_pivots_batch", lambda T: T.linalg.ldl_solve(
        T.eye(3).expand(2, 3, 3), T.ones(3, dtype=T.int32), T.ones(3, 1))),
    ("cond_1d", lambda T: T.linalg.cond(T.ones(3))),
    ("cond_bad_ord", lambda T: T.linalg.cond(T.eye(3), 3)),
    ("cond_bad_str", lambda T: T.linalg.cond(T.eye(3), "foo")),
    ("cond_not_square", lambda T: [T.linalg.cond(T.ones(3, 4), p) for p in ("fro",)]),
    ("cond_not_square_float", lambda T: T.linalg.cond(T.ones(3, 4), 1.0)),
    ("cond_not_square_inf", lambda T: T.linalg.cond(T.ones(3, 4), math.inf)),
    ("cond_int", lambda T: T.linalg.cond(T.ones(3, 3, dtype=T.int32))),
    ("tensorinv_shapes", lambda T: T.linalg.tensorinv(T.ones(2, 3, 5), ind=2)),
    ("tensorinv_ind", lambda T: T.linalg.tensorinv(T.ones(2, 3, 6), ind=0)),
    ("tensorsolve_shapes", lambda T: T.linalg.tensorsolve(T.ones(2, 3, 6), T.ones(3, 2, 1))),
    ("vander_n1", lambda T: T.linalg.vander(T.ones(2), N=1)),
    ("vander_0d", lambda T: T.linalg.vander(T.tensor(2.))),
    ("vander_bool", lambda T: T.linalg.vander(T.tensor([True, False]))),
]


@pytest.mark.parametrize("name,fn", cases(LINALG_ERRORS))
def test_linalg_errors(name, fn):
    same(fn, raises=True)


def test_lu_without_pivoting():
    """pivot=False (PyTorch: accelerators only) is Doolittle's elimination: on a diagonally
    dominant matrix partial pivoting swaps nothing, so torch's pivoted LU is the oracle."""
    from torchlike._ops.linalg_factor import _getrf
    a = np.array([[[4., 1., 2.], [1., 5., 1.], [2., 1., 6.]], [[3., 1., 0.], [1., 4., 1.],
                                                                [0., 1., 5.]]])
    with jax.enable_x64(True):   # the op's jax function itself, in float64
        lu, piv, info = _getrf(a, pivot=False)
    ref = torch.linalg.lu_factor(torch.tensor(a))
    np.testing.assert_allclose(np.asarray(lu), ref.LU.numpy(), rtol=1e-12)
    assert (np.asarray(piv) == ref.pivots.numpy()).all() and not np.asarray(info).any()
