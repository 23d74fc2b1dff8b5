"""Pointwise maths of one tensor beyond the core (pointwise.py): exp2 ... digamma, logit, sign,
sgn, rounding, nan_to_num.  Integer inputs compute in the default float dtype unless noted."""
import math

import jax
import jax.numpy as jnp
import jax.scipy.special as jss
import numpy as np

from .. import return_types
from .._dispatch import call, elementwise_op as _op, with_out as _out
from .pointwise import _clamp, _no_kernel, _unary, family, pow

@jax.custom_jvp
def _digamma(x):
    # NOTE: PyTorch's digamma(+-0) is -+inf (jax: nan); its derivative is polygamma(1, x).
    return jnp.where(x == 0, jnp.copysign(jnp.array(jnp.inf, x.dtype), -x), jss.digamma(x))


_digamma.defjvp(lambda p, t: (_digamma(p[0]), jss.polygamma(1, p[0]) * t[0]))


@jax.custom_jvp
def _lgamma(x):
    return jss.gammaln(x)


# NOTE: lgamma's derivative is digamma, so lgamma'(0) = -inf as in PyTorch (jax: nan).
_lgamma.defjvp(lambda p, t: (_lgamma(p[0]), _digamma(p[0]) * t[0]))


@jax.custom_jvp
def _i0(x):
    return jss.i0(x)


# NOTE: i0' = i1 (jax's own rule gives 1 at x = 0; PyTorch gives i1(0) = 0).
_i0.defjvp(lambda p, t: (_i0(p[0]), jss.i1(p[0]) * t[0]))


@jax.custom_jvp
def _logit(x):
    return jnp.log(x / (1 - x))


@_logit.defjvp
def _logit_jvp(p, t):
    # NOTE: PyTorch's logit derivative is nan outside [0, 1] (where the value is nan too).
    x, = p
    d = jnp.where((x < 0) | (x > 1), jnp.nan, 1 / (x * (1 - x)))
    return _logit(x), d * t[0]


def _logit_eps(x, eps):
    if eps is None:
        return _logit(x)
    # the clamp passes the gradient on its bounds, as PyTorch's (lo <= x <= hi)
    return _logit(_clamp(x, eps, 1 - eps))


def _sign(x):
    if x.dtype == jnp.bool_:
        return x
    # NOTE: PyTorch's sign is (0 < x) - (x < 0): 0 for nan (jnp.sign: nan)
    return jnp.where(jnp.isnan(x), jnp.zeros_like(x), jnp.sign(x)) \
        if jnp.issubdtype(x.dtype, jnp.floating) else jnp.sign(x)


def _sgn(x):
    if not jnp.iscomplexobj(x):
        return _sign(x)
    a = jnp.abs(x)
    return jnp.where(a == 0, jnp.zeros_like(x), x / jnp.where(a == 0, jnp.ones_like(a), a))


EXP2, exp2 = _unary("exp2", jnp.exp2, "Exp2Backward0", saves=("result",))
EXPM1, expm1 = _unary("expm1", jnp.expm1, "Expm1Backward0", saves=("result",))
LOG2, log2 = _unary("log2", jnp.log2, "Log2Backward0")
LOG10, log10 = _unary("log10", jnp.log10, "Log10Backward0")
LOG1P, log1p = _unary("log1p", jnp.log1p, "Log1PBackward0")
RSQRT, rsqrt = _unary("rsqrt", jax.lax.rsqrt, "RsqrtBackward0", saves=("result",))
TAN, tan = _unary("tan", jnp.tan, "TanBackward0", saves=("result",))
ASIN, asin = _unary("asin", jnp.arcsin, "AsinBackward0")
ACOS, acos = _unary("acos", jnp.arccos, "AcosBackward0")
ATAN, atan = _unary("atan", jnp.arctan, "AtanBackward0")
SINH, sinh = _unary("sinh", jnp.sinh, "SinhBackward0")
COSH, cosh = _unary("cosh", jnp.cosh, "CoshBackward0")
ASINH, asinh = _unary("asinh", jnp.arcsinh, "AsinhBackward0")
ACOSH, acosh = _unary("acosh", jnp.arccosh, "AcoshBackward0")
ATANH, atanh = _unary("atanh", jnp.arctanh, "AtanhBackward0")
ERF, erf = _unary("erf", jss.erf, "ErfBackward0")
ERFC, erfc = _unary("erfc", jss.erfc, "ErfcBackward0")
ERFINV, erfinv = _unary("erfinv", jss.erfinv, "ErfinvBackward0")
LGAMMA, lgamma = _unary("lgamma", _lgamma, "LgammaBackward0")
DIGAMMA, digamma = _unary("digamma", _digamma, "DigammaBackward0")
I0, i0 = _unary("i0", _i0, "I0Backward0")
SINC, sinc = _unary("sinc", jnp.sinc, "SincBackward0")
LOGIT = _op("logit", _logit_eps, "LogitBackward0", saves=(0,), promote="float")
SIGN = _op("sign", _sign, "SignBackward0", saves=())
SGN = _op("sgn", _sgn, "SgnBackward0", saves=(0, "result"))

arcsin, arccos, arctan = asin, acos, atan
arcsinh, arccosh, arctanh = asinh, acosh, atanh


def logit(input, eps=None, *, out=None):
    """Mirrors ``torch.logit``: log(p / (1 - p)), with p clamped to [eps, 1 - eps] if given."""
    eps = None if eps is None or eps < 0 else float(eps)   # PyTorch: a negative eps: no clamp
    return _out(call(LOGIT, input, static=(("eps", eps),)), out)


def sign(input, *, out=None):
    """Mirrors ``torch.sign`` (bool stays bool; complex inputs need ``sgn``)."""
    if input.dtype.is_complex:
        raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex "
                                  "numbers. Please use torch.sgn instead.")
    return _out(call(SIGN, input), out)


def sgn(input, *, out=None):
    """Mirrors ``torch.sgn``: sign for real tensors, x / |x| (0 at 0) for complex ones."""
    return _out(call(SGN, input), out)


def square(input, *, out=None):
    """Mirrors ``torch.square`` (``pow(input, 2)``: bool becomes int64, as in PyTorch)."""
    return pow(input, 2, out=out)


# --- rounding: integer tensors come back unchanged, the derivative is zero ----------------------

def _keep_int(fn):
    def f(x):
        return x if jnp.issubdtype(x.dtype, jnp.integer) else fn(x)
    return f


def _round(x, decimals):
    if jnp.issubdtype(x.dtype, jnp.integer) or decimals is None:
        return x if jnp.issubdtype(x.dtype, jnp.integer) else jnp.round(x)
    # PyTorch's formula (so float32 results agree bit for bit): scale, round half to even, unscale
    if decimals > 0:
        p = 10.0 ** decimals
        return jnp.round(x * p) / p
    p = 10.0 ** -decimals
    return jnp.round(x / p) * p


FLOOR = _op("floor", _keep_int(jnp.floor), "FloorBackward0", saves=())
CEIL = _op("ceil", _keep_int(jnp.ceil), "CeilBackward0", saves=())
TRUNC = _op("trunc", _keep_int(jnp.trunc), "TruncBackward0", saves=())
ROUND = _op("round", _round, "RoundBackward0", saves=())
ROUND_DECIMALS = _op("round", _round, "RoundBackward1", saves=())
# NOTE: frac = x - trunc(x) has derivative 1, as PyTorch's FracBackward0 (grad passes through).
FRAC = _op("frac", lambda x: x - jnp.trunc(x), "FracBackward0", saves=())


def _rounding(name, op):
    def public(input, *, out=None):
        if input.dtype._name == "bool":
            raise _no_kernel(f"{name}_vml_cpu", input.dtype)
        return _out(call(op, input), out)
    public.__name__ = name
    public.__doc__ = f"Mirrors ``torch.{name}`` (integer tensors are returned unchanged)."
    return public


floor = _rounding("floor", FLOOR)
ceil = _rounding("ceil", CEIL)
trunc = fix = _rounding("trunc", TRUNC)


def round(input, *, decimals=None, out=None):   # noqa: A001 - torch's name
    """Mirrors ``torch.round``: round half to even, to ``decimals`` decimal places (PyTorch's
    default is 0; passing it selects its ``round.decimals`` overload, RoundBackward1)."""
    if decimals is None:
        if input.dtype._name == "bool":
            raise _no_kernel("round_vml_cpu", input.dtype)
        return _out(call(ROUND, input, static=(("decimals", None),)), out)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise _no_kernel("round_vml_cpu" if decimals == 0 else "round_cpu", input.dtype)
    return _out(call(ROUND_DECIMALS, input, static=(("decimals", int(decimals)),)), out)


def frac(input, *, out=None):
    """Mirrors ``torch.frac``: input - trunc(input) (floating-point tensors only)."""
    if not input.dtype.is_floating_point:
        raise _no_kernel("frac_cpu", input.dtype)
    return _out(call(FRAC, input), out)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    """Mirrors ``torch.nan_to_num`` (infinities become the dtype's largest finite values)."""
    static = (("nan", float(nan)), ("posinf", None if posinf is None else float(posinf)),
              ("neginf", None if neginf is None else float(neginf)))
    return _out(call(NAN_TO_NUM, input, static=static), out)


NAN_TO_NUM = _op("nan_to_num", lambda x, nan, posinf, neginf: x if not jnp.issubdtype(
    x.dtype, jnp.inexact) else jnp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf),
    "NanToNumBackward0", saves=(0,))


# --- angles, positive, frexp --------------------------------------------------------------------

def _scaled_by(factor):
    return lambda x: x * jnp.asarray(factor, x.dtype)


DEG2RAD, _deg2rad = _unary("deg2rad", _scaled_by(math.pi / 180), "Deg2RadBackward0", saves=())
RAD2DEG, _rad2deg = _unary("rad2deg", _scaled_by(180 / math.pi), "Rad2DegBackward0", saves=())


def deg2rad(input, *, out=None):
    """Mirrors ``torch.deg2rad``: input * pi / 180 (integers become the default float dtype)."""
    if input.dtype.is_complex:
        raise RuntimeError("deg2rad is not supported for complex tensors.")
    return _deg2rad(input, out=out)


def rad2deg(input, *, out=None):
    """Mirrors ``torch.rad2deg``: input * 180 / pi (integers become the default float dtype)."""
    if input.dtype.is_complex:
        raise RuntimeError("rad2deg is not supported for complex tensors.")
    return _rad2deg(input, out=out)


def positive(input):
    """Mirrors ``torch.positive``: ``input`` itself (refused for bool, as unary ``+``)."""
    if input.dtype._name == "bool":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


@jax.custom_jvp
def _frexp(x):
    m, e = jnp.frexp(x)
    # NOTE: XLA's CPU arithmetic flushes subnormals to zero, so their (mantissa, exponent) is
    # read from the bits: value = frac * 2**(1 - bias - nmant), frac's top bit p sets both.
    info = jnp.finfo(x.dtype)
    bits, nmant = info.bits, info.nmant
    uint = {16: jnp.uint16, 32: jnp.uint32, 64: jnp.uint64}[bits]
    one = uint(1)
    b = jax.lax.bitcast_convert_type(x, uint)
    bias = (1 << (bits - 2 - nmant)) - 1
    frac = b & uint((1 << nmant) - 1)
    sub = ((b >> uint(nmant)) & uint(2 * bias + 1) == 0) & (frac != 0)
    p = (bits - 1) - jax.lax.clz(frac).astype(jnp.int32)
    shift = jnp.where(sub, nmant - p, 0).astype(uint)
    m_bits = (b & (one << uint(bits - 1))) | uint((bias - 1) << nmant) | \
        ((frac << shift) & uint((1 << nmant) - 1))
    m = jnp.where(sub, jax.lax.bitcast_convert_type(m_bits, x.dtype), m)
    return m, jnp.where(sub, p + 2 - bias - nmant, e).astype(jnp.int32)


@_frexp.defjvp
def _frexp_jvp(p, t):
    # PyTorch's FrexpBackward0: grad / 2**exponent (nothing flows through the exponent)
    m, e = _frexp(p[0])
    return (m, e), (t[0] * jnp.exp2(-e.astype(m.dtype)), np.zeros(e.shape, jax.dtypes.float0))


FREXP = _op("frexp", _frexp, "FrexpBackward0", saves=(0,))


def frexp(input, *, out=None):
    """Mirrors ``torch.frexp``: ``return_types.frexp(mantissa, exponent)`` with input =
    mantissa * 2**exponent, |mantissa| in [0.5, 1) (0 for 0) and an int32 exponent."""
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    result = return_types.frexp(*call(FREXP, input))
    return result if out is None else return_types.frexp(*_out(result, out))

# --- the gamma family's torch names (written once, in special.py) -------------------------------
# special imports this module, so they are looked up when called.

def polygamma(n, input, *, out=None):
    """Mirrors ``torch.polygamma`` (``torch.special.polygamma``): the n-th derivative of
    digamma."""
    from . import special
    return special.polygamma(n, input, out=out)


def _polygamma_method(self, n):
    return polygamma(n, self)


def _polygamma_(self, n):
    """``Tensor.polygamma_``: its own overload in PyTorch (PolygammaBackward1)."""
    from . import special
    from .._inplace import inplace
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"polygamma_(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return inplace(self, lambda: call(special.POLYGAMMA_, self, static=(("n", n),)))


def mvlgamma(input, p, *, out=None):
    """Mirrors ``torch.mvlgamma`` (``torch.special.multigammaln``): the multivariate log-gamma
    function of dimension ``p``."""
    from . import special
    return special.multigammaln(input, p, out=out)


def igamma(input, other, *, out=None):
    """Mirrors ``torch.igamma`` (``torch.special.gammainc``): the regularized lower incomplete
    gamma function."""
    from . import special
    return special.gammainc(input, other, out=out)


def igammac(input, other, *, out=None):
    """Mirrors ``torch.igammac`` (``torch.special.gammaincc``): the regularized upper incomplete
    gamma function."""
    from . import special
    return special.gammaincc(input, other, out=out)


PUBLIC, TENSOR_METHODS = family({
    "sign": sign, "sgn": sgn, "exp2": exp2, "expm1": expm1, "log2": log2, "log10": log10,
    "log1p": log1p, "rsqrt": rsqrt, "square": square, "tan": tan, "asin": asin,
    "arcsin": asin, "acos": acos, "arccos": acos, "atan": atan, "arctan": atan,
    "sinh": sinh, "cosh": cosh, "asinh": asinh, "arcsinh": asinh, "acosh": acosh,
    "arccosh": acosh, "atanh": atanh, "arctanh": atanh, "logit": logit, "erf": erf,
    "erfc": erfc, "erfinv": erfinv, "lgamma": lgamma, "digamma": digamma, "i0": i0,
    "sinc": sinc, "floor": floor, "ceil": ceil, "round": round, "trunc": trunc, "fix": fix,
    "frac": frac, "nan_to_num": nan_to_num, "deg2rad": deg2rad, "rad2deg": rad2deg,
    "mvlgamma": mvlgamma, "igamma": igamma, "igammac": igammac, "polygamma": _polygamma_method},
    {"positive": positive, "frexp": frexp})
PUBLIC += ("polygamma",)
TENSOR_METHODS["polygamma_"] = _polygamma_
