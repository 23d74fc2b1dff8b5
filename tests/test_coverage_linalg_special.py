"""Parity rows for the ``torchlike.special`` and ``torchlike.linalg`` functions added to reach
PyTorch's namespaces: one or a few rows per name, against real torch (values, dtypes, grad_fn
names, gradients where PyTorch has them, and its errors).
"""
import math

import mpmath
import numpy as np
import pytest
import torch

import torchlike as tl

from test_parity_ops import A, both, cases, check_op, same

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


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", POLYNOMIALS)
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


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", BESSEL)
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
