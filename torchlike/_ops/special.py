"""The functions of ``torch.special`` beyond the pointwise ops it shares under SciPy-style names
(torchlike/special.py re-exports both): each one jnp function with its PyTorch backward-node
name, or another op under torch.special's signature.
"""
import functools
import math

import jax
import jax.numpy as jnp
import jax.scipy.special as jss

from .. import _dtype as D
from .._dispatch import Op, call, result_dtype, with_out as _out
from .._tensor import Tensor
from . import binary as _binary_ops, pointwise as _pw, reduce as _reduce, unary as _unary_ops
from . import special_bessel as _bes, special_orthogonal as _orth
from .activation import LOG_SOFTMAX, SOFTMAX, softmax_over
from .pointwise import ADD_SCALAR, MUL_SCALAR, _unary

# --- other ops under torch.special's signature --------------------------------------------------

def expit(input, *, out=None):
    """Mirrors ``torch.special.expit`` (the logistic sigmoid)."""
    return _pw.sigmoid(input, out=out)


def round(input, *, decimals=0, out=None):   # noqa: A001 - torch's name
    """Mirrors ``torch.special.round`` (always PyTorch's ``round.decimals``: RoundBackward1)."""
    return _unary_ops.round(input, decimals=decimals, out=out)


# --- functions that live only in torch.special --------------------------------------------------

ENTR, entr = _unary("entr", jss.entr, "SpecialEntrBackward0", namespace="torch.special")
I0E, i0e = _unary("i0e", jss.i0e, "SpecialI0EBackward0", namespace="torch.special")
I1, i1 = _unary("i1", jss.i1, "SpecialI1Backward0", namespace="torch.special")
I1E, i1e = _unary("i1e", jss.i1e, "SpecialI1EBackward0", namespace="torch.special")
NDTRI, ndtri = _unary("ndtri", jss.ndtri, "SpecialNdtriBackward0", namespace="torch.special")
LOG_NDTR, log_ndtr = _unary("log_ndtr", jss.log_ndtr, "SpecialLogNdtrBackward0",
                            namespace="torch.special")

# PyTorch writes ndtr as a composite of scalar ops, ((1 + erf(x / sqrt(2))) * 0.5): the same
# nodes (MulBackward1, AddBackward1) show in its graph.
def ndtr(input, *, out=None):
    """Mirrors ``torch.special.ndtr``: the standard normal CDF."""
    x = call(MUL_SCALAR, input, math.sqrt(0.5))
    return _out(call(MUL_SCALAR, call(ADD_SCALAR, _unary_ops.erf(x), 1), 0.5), out)


_xlog1py = _binary_ops.x_times_log(jnp.log1p, -1)


XLOG1PY = Op("xlog1py", _xlog1py, "SpecialXlog1PyBackward0", promote="float")
XLOG1PY_SCALAR_SELF = Op("xlog1py", lambda y, x: _xlog1py(x, y), "SpecialXlog1PyBackward1",
                         saves=(0,), promote="float", inputs=1)
XLOG1PY_SCALAR_OTHER = Op("xlog1py", _xlog1py, "SpecialXlog1PyBackward2", saves=(0,),
                          promote="float", inputs=1)


def xlog1py(input, other, *, out=None):
    """Mirrors ``torch.special.xlog1py``: input * log1p(other), 0 where input == 0."""
    if isinstance(input, (bool, int, float)) and isinstance(other, Tensor):
        return _out(call(XLOG1PY_SCALAR_SELF, other, input), out)
    _pw._need_tensor("special_xlog1py", input, "input", 1)
    if isinstance(other, (bool, int, float)):
        return _out(call(XLOG1PY_SCALAR_OTHER, input, other), out)
    _pw._need_tensor("special_xlog1py", other, "other", 2)
    return _out(call(XLOG1PY, input, other), out)


# --- softmax over a dim (the softmax family: activation.py) -------------------------------------

def softmax(input, dim, dtype=None):
    """Mirrors ``torch.special.softmax``: exp(x) / sum(exp(x)) over ``dim``; ``dtype`` casts the
    input first."""
    return softmax_over(SOFTMAX, input, dim, dtype, complex_ok=True)


def log_softmax(input, dim, *, dtype=None):
    """Mirrors ``torch.special.log_softmax``: x - logsumexp(x) over ``dim``; ``dtype`` casts the
    input first."""
    return softmax_over(LOG_SOFTMAX, input, dim, dtype, complex_ok=True)


def logsumexp(input, dim, keepdim=False, *, out=None):
    """Mirrors ``torch.special.logsumexp`` (``torch.logsumexp``): log(sum(exp(x))) over ``dim``,
    computed stably."""
    return _reduce.logsumexp(input, dim, keepdim, out=out)


# --- the gamma family ---------------------------------------------------------------------------

def _single_or_double(kernel, kind, *operands):
    """PyTorch's CPU kernels of these functions exist for float32 and float64 only."""
    dt = result_dtype(kind, *operands)
    if dt not in (D.float32, D.float64):
        raise _pw._no_kernel(kernel, dt)


ERFCX, _erfcx = _unary("erfcx", jss.erfcx, "SpecialErfcxBackward0", namespace="torch.special")


def erfcx(input, *, out=None):
    """Mirrors ``torch.special.erfcx``: the scaled complementary error function
    ``exp(x**2) * erfc(x)``."""
    _pw._need_tensor("special_erfcx", input, "input", 1)
    _single_or_double("erfcx_cpu", "float", input)
    return _erfcx(input, out=out)


@functools.partial(jax.custom_jvp, nondiff_argnums=(1,))
def _polygamma(x, n):
    if n == 0:
        return _unary_ops._digamma(x)
    # NOTE: at 0 and the negative integers PyTorch gives the pole's one-sided sign for even n
    # (-inf) and +inf for odd n; jax's reflection gives nan for even n.
    pole = (x <= 0) & (x == jnp.floor(x))
    return jnp.where(pole, jnp.inf if n % 2 else -jnp.inf, jss.polygamma(n, x)).astype(x.dtype)


_polygamma.defjvp(lambda n, p, t: (_polygamma(p[0], n), _polygamma(p[0], n + 1) * t[0]))
POLYGAMMA = Op("polygamma", _polygamma, "PolygammaBackward0", promote="float", elementwise=True)
POLYGAMMA_ = Op("polygamma_", _polygamma, "PolygammaBackward1", promote="float", elementwise=True)


def polygamma(n, input, *, out=None):
    """Mirrors ``torch.special.polygamma``: the ``n``-th derivative of the digamma function
    (``n = 0`` is digamma itself)."""
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"special_polygamma(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}")
    _pw._need_tensor("special_polygamma", input, "input", 2)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if input.dtype.is_complex:
        raise _pw._no_kernel({0: "digamma", 1: "trigamma"}.get(n, "polygamma"), input.dtype)
    return _out(call(POLYGAMMA, input, static=(("n", n),)), out)


def _multigammaln(a, p):
    # PyTorch's order: lgamma(a + [-(p-1)/2, ..., -1/2, 0]) summed over the last axis
    shifts = jnp.arange(-p / 2 + 0.5, 0.5, 0.5, dtype=a.dtype)
    return (jnp.sum(_unary_ops._lgamma(a[..., None] + shifts), -1)
            + p * (p - 1) / 4 * math.log(math.pi)).astype(a.dtype)


MVLGAMMA = Op("mvlgamma", _multigammaln, "MvlgammaBackward0", promote="float", elementwise=True)


def multigammaln(input, p, *, out=None):
    """Mirrors ``torch.special.multigammaln``: the multivariate log-gamma function of dimension
    ``p``, ``p (p - 1) / 4 log(pi) + sum_i lgamma(x - i / 2)``."""
    _pw._need_tensor("special_multigammaln", input, "input", 1)
    if not isinstance(p, int) or isinstance(p, bool):
        raise TypeError(f"special_multigammaln(): argument 'p' (position 2) must be int, not "
                        f"{type(p).__name__}")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if input.dtype.is_complex:
        raise _pw._no_kernel("arange_cpu", input.dtype)
    return _out(call(MVLGAMMA, input, static=(("p", p),)), out)


def _incomplete_gamma(name, fn, node):
    """gammainc / gammaincc: differentiable in ``other`` only; PyTorch's backward refuses the
    derivative in ``input``, so the op that records it carries that refusal."""
    op = Op(name, fn, node, promote="float", elementwise=True)
    refused = Op(name, fn, node, promote="float", elementwise=True, no_grad_reason=(
        NotImplementedError, f"the derivative for '{name}: input' is not implemented."))

    def public(input, other, *, out=None):
        _pw._tensors(f"special_{public.__name__}", input, other)
        if not result_dtype("common", input, other).is_floating_point:
            raise _pw._no_kernel(f"{name}_cpu", result_dtype("common", input, other))
        return _out(call(refused if input.requires_grad else op, input, other), out)
    return public


gammainc = _incomplete_gamma("igamma", jss.gammainc, "IgammaBackward0")
gammainc.__name__ = "gammainc"
gammainc.__doc__ = """Mirrors ``torch.special.gammainc``: the regularized lower incomplete gamma
    function ``P(input, other)``."""
gammaincc = _incomplete_gamma("igammac", jss.gammaincc, "IgammacBackward0")
gammaincc.__name__ = "gammaincc"
gammaincc.__doc__ = """Mirrors ``torch.special.gammaincc``: the regularized upper incomplete
    gamma function ``Q(input, other) = 1 - P(input, other)``."""


_NUMBER = (bool, int, float)


def _overloads(name, first, second, a, b):
    """PyTorch's TypeError for arguments that are not (Tensor, Tensor), (Number, Tensor) or
    (Tensor, Number)."""
    if isinstance(a, Tensor) and isinstance(b, (Tensor,) + _NUMBER) or (
            isinstance(a, _NUMBER) and isinstance(b, Tensor)):
        return
    self_name = "self" if first == "input" else first
    raise TypeError(
        f"special_{name}() received an invalid combination of arguments - got "
        f"({type(a).__name__}, {type(b).__name__}), but expected one of:\n"
        f" * (Tensor {first}, Tensor {second}, *, Tensor out = None)\n"
        f" * (Number {self_name}, Tensor {second}, *, Tensor out = None)\n"
        f" * (Tensor {first}, Number {second}, *, Tensor out = None)\n")


@jax.custom_jvp
def _zeta(x, q):
    return jss.zeta(x, q)


@_zeta.defjvp
def _zeta_jvp(p, t):
    # PyTorch: d/dq zeta(x, q) = -x zeta(x + 1, q); there is none in x (refused below)
    x, q = p
    return _zeta(x, q), -x * _zeta(x + 1, q) * t[1]


_ZETA_REFUSED = (NotImplementedError, "the derivative for 'zeta' is not implemented.")
ZETA = {(a, b, no): Op("special_zeta", _zeta if a else (lambda q, x: _zeta(x, q)),
                   f"SpecialZetaBackward{0 if a and b else 1 if b else 2}", promote="float",
                   elementwise=True, inputs=2 if a and b else 1, no_grad_reason=no)
        for a in (True, False) for b in (True, False) if a or b
        for no in (None, _ZETA_REFUSED)}


def zeta(input, other, *, out=None):
    """Mirrors ``torch.special.zeta``: the Hurwitz zeta function ``sum_k (k + other)**-input``;
    either argument may be a number.  Differentiable in ``other`` only, as in PyTorch."""
    _overloads("zeta", "input", "other", input, other)
    _single_or_double("zeta_cpu", "float", input, other)
    a, b = isinstance(input, Tensor), isinstance(other, Tensor)
    refused = _ZETA_REFUSED if a and input.requires_grad else None
    args = (input, other) if a else (other, input)
    return _out(call(ZETA[a, b, refused], *args), out)


# --- orthogonal polynomials (NOTE [ orthogonal polynomials ] in special_orthogonal.py) ----------

def _polynomial(name, fn, what):
    op = Op(f"special_{name}", fn, None, promote="float", elementwise=True)

    def public(x, n, *, out=None):
        _overloads(name, "x", "n", x, n)
        _single_or_double(f"{name}_cpu", "float", x, n)
        return _out(call(op, x, n), out)
    public.__name__ = name
    public.__doc__ = (f"Mirrors ``torch.special.{name}``: {what} of degree ``n`` (truncated to "
                      "an integer; 0 for a negative degree) at ``x``.  Not differentiable.")
    return public


chebyshev_polynomial_t = _polynomial(
    "chebyshev_polynomial_t", _orth.chebyshev("t", False), "the Chebyshev polynomial T_n")
chebyshev_polynomial_u = _polynomial(
    "chebyshev_polynomial_u", _orth.chebyshev("u", False), "the Chebyshev polynomial U_n")
chebyshev_polynomial_v = _polynomial(
    "chebyshev_polynomial_v", _orth.chebyshev("v", False), "the Chebyshev polynomial V_n")
chebyshev_polynomial_w = _polynomial(
    "chebyshev_polynomial_w", _orth.chebyshev("w", False), "the Chebyshev polynomial W_n")
shifted_chebyshev_polynomial_t = _polynomial(
    "shifted_chebyshev_polynomial_t", _orth.chebyshev("t", True),
    "the shifted Chebyshev polynomial T*_n(x) = T_n(2x - 1)")
shifted_chebyshev_polynomial_u = _polynomial(
    "shifted_chebyshev_polynomial_u", _orth.chebyshev("u", True),
    "the shifted Chebyshev polynomial U*_n(x) = U_n(2x - 1)")
shifted_chebyshev_polynomial_v = _polynomial(
    "shifted_chebyshev_polynomial_v", _orth.chebyshev("v", True),
    "the shifted Chebyshev polynomial V*_n(x) = V_n(2x - 1)")
shifted_chebyshev_polynomial_w = _polynomial(
    "shifted_chebyshev_polynomial_w", _orth.chebyshev("w", True),
    "the shifted Chebyshev polynomial W*_n(x) = W_n(2x - 1)")
hermite_polynomial_h = _polynomial(
    "hermite_polynomial_h", _orth.hermite_h, "the physicists' Hermite polynomial H_n")
hermite_polynomial_he = _polynomial(
    "hermite_polynomial_he", _orth.hermite_he, "the probabilists' Hermite polynomial He_n")
laguerre_polynomial_l = _polynomial(
    "laguerre_polynomial_l", _orth.laguerre_l, "the Laguerre polynomial L_n")
legendre_polynomial_p = _polynomial(
    "legendre_polynomial_p", _orth.legendre_p, "the Legendre polynomial P_n")


# --- Bessel and Airy functions (NOTE [ bessel functions ] in special_bessel.py) -----------------

def _bessel(name, fn, what, arg="input"):
    op = Op(f"special_{name}", fn, None, promote="float", elementwise=True)

    def public(input, *, out=None):
        _pw._need_tensor(f"special_{name}", input, arg, 1)
        _single_or_double(f"{name}_cpu", "float", input)
        return _out(call(op, input), out)
    public.__name__ = name
    public.__doc__ = f"Mirrors ``torch.special.{name}``: {what}.  Not differentiable."
    return public


airy_ai = _bessel("airy_ai", _bes.airy_ai, "the Airy function Ai", arg="x")
bessel_j0 = _bessel("bessel_j0", _bes.bessel_j0, "the Bessel function of the first kind J0")
bessel_j1 = _bessel("bessel_j1", _bes.bessel_j1, "the Bessel function of the first kind J1")
bessel_y0 = _bessel("bessel_y0", _bes.bessel_y0, "the Bessel function of the second kind Y0")
bessel_y1 = _bessel("bessel_y1", _bes.bessel_y1, "the Bessel function of the second kind Y1")
modified_bessel_i0 = _bessel("modified_bessel_i0", jss.i0,
                             "the modified Bessel function of the first kind I0")
modified_bessel_i1 = _bessel("modified_bessel_i1", jss.i1,
                             "the modified Bessel function of the first kind I1")
modified_bessel_k0 = _bessel("modified_bessel_k0", _bes.modified_bessel_k0,
                             "the modified Bessel function of the second kind K0")
modified_bessel_k1 = _bessel("modified_bessel_k1", _bes.modified_bessel_k1,
                             "the modified Bessel function of the second kind K1")
scaled_modified_bessel_k0 = _bessel("scaled_modified_bessel_k0",
                                    _bes.scaled_modified_bessel_k0, "exp(x) * K0(x)")
scaled_modified_bessel_k1 = _bessel("scaled_modified_bessel_k1",
                                    _bes.scaled_modified_bessel_k1, "exp(x) * K1(x)")
spherical_bessel_j0 = _bessel("spherical_bessel_j0", _bes.spherical_bessel_j0,
                              "the spherical Bessel function of the first kind j0 = sin(x) / x")
