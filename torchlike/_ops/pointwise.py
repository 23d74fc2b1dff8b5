"""Pointwise ops: arithmetic, unary maths, activations, comparisons, where, clamp, rounding,
special functions, floating-point classification and logic.

Each op is one jnp function; ``promote`` says how PyTorch types its operands ("common":
promote_types with Python scalars weak; "float": integers compute in the default float dtype).
``saves`` lists what PyTorch saves for backward (checked against in-place writes).
"""
import jax
import jax.numpy as jnp
import jax.scipy.special as jss
import numpy as np

from .. import _dtype as D
from .._dispatch import Op, call, result_dtype, with_out as _out
from .._inplace import inplace
from .._tensor import Tensor

_SCALAR = (bool, int, float, complex)


def _binary(name, fn, node, promote="common", saves=None):
    return Op(name, fn, node, saves=saves, promote=promote)


ADD = _binary("add", jnp.add, "AddBackward0", saves=())
ADD_ALPHA = Op("add", lambda a, b, alpha: a + alpha * b, "AddBackward0", saves=(),
               promote="common", inputs=2, promote_args=2)
SUB = _binary("sub", jnp.subtract, "SubBackward0", saves=())
SUB_ALPHA = Op("sub", lambda a, b, alpha: a - alpha * b, "SubBackward0", saves=(),
               promote="common", inputs=2, promote_args=2)
RSUB = Op("rsub", lambda a, s: s - a, "RsubBackward1", saves=(), promote="common", inputs=1)
MUL = _binary("mul", jnp.multiply, "MulBackward0", saves={0: (1,), 1: (0,)})
DIV = _binary("div", jnp.true_divide, "DivBackward0", promote="float", saves={0: (1,), 1: (0, 1)})
REMAINDER = _binary("remainder", jnp.remainder, "RemainderBackward1", saves={1: (0, 1)})
REMAINDER_SCALAR = Op("remainder", jnp.remainder, "RemainderBackward0", saves=(),
                      promote="common", inputs=1)
FLOOR_DIVIDE = Op("floor_divide", jnp.floor_divide, "NotImplemented", saves=(), promote="common",
                  no_grad_reason="derivative for aten::floor_divide is not implemented")
MAXIMUM = _binary("maximum", jnp.maximum, "MaximumBackward0")
MINIMUM = _binary("minimum", jnp.minimum, "MinimumBackward0")


@jax.custom_jvp
def _pow(a, b):
    return jnp.power(a, b)


@_pow.defjvp
def _pow_jvp(primals, tangents):
    # NOTE: PyTorch masks pow's derivatives: none w.r.t. the base where the exponent is 0, and
    # none w.r.t. the exponent where the base is 0 and the exponent >= 0 (jnp.power gives nan).
    a, b = primals
    ta, tb = tangents
    y = jnp.power(a, b)
    da = jnp.where(b == 0, jnp.zeros_like(y), b * jnp.power(a, b - 1))
    safe_log = jnp.log(jnp.where(a == 0, jnp.ones_like(a), a))
    db = jnp.where((a == 0) & (jnp.real(b) >= 0), jnp.zeros_like(y), y * safe_log)
    return y, da * ta + db * tb


POW = _binary("pow", _pow, "PowBackward1")
POW_SCALAR = Op("pow", lambda a, exponent, dtype: a.astype(dtype) ** exponent, "PowBackward0",
                saves=(0,))
RPOW = Op("pow", lambda a, base, dtype: _pow(jnp.asarray(base, dtype), a.astype(dtype)),
          "PowBackward2", saves=("result",))


def _scalar_or_tensor(x, name):
    if isinstance(x, (Tensor,) + _SCALAR):
        return x
    raise TypeError(f"{name}(): argument 'other' must be Tensor or Number, not "
                    f"{type(x).__name__}")


def _is_bool(x):
    return isinstance(x, bool) or (isinstance(x, Tensor) and x._arr.dtype == np.bool_)


def _arith(op, op_alpha, input, other, alpha):
    other = _scalar_or_tensor(other, op.name)
    if not isinstance(input, Tensor):
        raise TypeError(f"{op.name}(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    if alpha == 1:
        return call(op, input, other)
    return call(op_alpha, input, other, alpha)


def add(input, other, *, alpha=1, out=None):
    """Mirrors ``torch.add``: input + alpha * other."""
    return _out(_arith(ADD, ADD_ALPHA, input, other, alpha), out)


def _check_sub(a, b):
    if _is_bool(a) and _is_bool(b):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if _is_bool(a) or _is_bool(b):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")


def sub(input, other, *, alpha=1, out=None):
    """Mirrors ``torch.sub``: input - alpha * other."""
    _check_sub(input, other)
    return _out(_arith(SUB, SUB_ALPHA, input, other, alpha), out)


def rsub(input, other, *, alpha=1):
    """Mirrors ``torch.rsub``: other - alpha * input."""
    if isinstance(other, Tensor):
        return sub(other, input, alpha=alpha)
    _check_sub(input, other)
    return call(RSUB, input if alpha == 1 else mul(input, alpha), other)


def mul(input, other, *, out=None):
    """Mirrors ``torch.mul``."""
    return _out(call(MUL, input, _scalar_or_tensor(other, "mul")), out)


def _check_integer_division(input, other):
    """Integer division by zero raises in PyTorch (it has no inf to return).  Needs the values,
    so it is checked in eager mode only."""
    if result_dtype("common", input, other).is_floating_point or \
            result_dtype("common", input, other).is_complex:
        return
    if isinstance(other, Tensor):
        arr = other._value()
        if isinstance(arr, jax.core.Tracer) or not bool(jnp.any(arr == 0)):
            return
    elif other != 0:
        return
    raise RuntimeError("ZeroDivisionError")


def div(input, other, *, rounding_mode=None, out=None):
    """Mirrors ``torch.div`` (true division; ``rounding_mode`` 'trunc' or 'floor')."""
    other = _scalar_or_tensor(other, "div")
    if rounding_mode is None:
        return _out(call(DIV, input, other), out)
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                           f"but found '{rounding_mode}'")
    _check_integer_division(input, other)
    return _out(call(DIV_ROUNDED[rounding_mode], input, other), out)


def _trunc_div(a, b):
    if jnp.issubdtype(a.dtype, jnp.integer):
        q = jnp.floor_divide(a, b)
        return jnp.where((q < 0) & (q * b != a), q + 1, q)
    return jnp.trunc(a / b)


# NOTE: PyTorch's derivative of a rounded division is zero (its DivBackward2 formula).
DIV_ROUNDED = {"trunc": Op("div", _trunc_div, "DivBackward2", saves=(), promote="common"),
               "floor": Op("div", jnp.floor_divide, "DivBackward2", saves=(), promote="common")}


def true_divide(input, other, *, out=None):
    return div(input, other, out=out)


def reciprocal(input):
    """Mirrors ``torch.reciprocal``."""
    return call(RECIPROCAL, input)


def rdiv(input, other):
    """``other / input`` for a Python scalar ``other`` (PyTorch: reciprocal then mul)."""
    return mul(reciprocal(input), other)


def pow(input, exponent, *, out=None):
    """Mirrors ``torch.pow`` (tensor ** tensor, tensor ** scalar, scalar ** tensor)."""
    if isinstance(input, _SCALAR):
        dt = result_dtype("common", input, exponent)
        return _out(call(RPOW, exponent, static=(("base", input), ("dtype", dt._np))), out)
    if isinstance(exponent, _SCALAR):
        dt = result_dtype("common", input, exponent)
        if isinstance(exponent, int) and exponent < 0 and not (
                dt.is_floating_point or dt.is_complex):
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        return _out(call(POW_SCALAR, input, static=(("exponent", exponent),
                                                    ("dtype", dt._np))), out)
    return _out(call(POW, input, exponent), out)


def _scalar_operand(value):
    """A Python scalar on the left of % or //, as a 0-dim tensor of its own dtype."""
    from .._creation import scalar_tensor
    from .. import _dtype as D
    return scalar_tensor(value, dtype=D.scalar_dtype(value))


def remainder(input, other, *, out=None):
    """Mirrors ``torch.remainder`` (the result has the sign of the divisor, as Python's %)."""
    if isinstance(input, _SCALAR):
        input = _scalar_operand(input)
    other = _scalar_or_tensor(other, "remainder")
    _check_integer_division(input, other)
    op = REMAINDER if isinstance(other, Tensor) else REMAINDER_SCALAR
    return _out(call(op, input, other), out)


def floor_divide(input, other, *, out=None):
    """Mirrors ``torch.floor_divide`` (not differentiable in PyTorch either)."""
    if isinstance(input, _SCALAR):
        input = _scalar_operand(input)
    other = _scalar_or_tensor(other, "floor_divide")
    _check_integer_division(input, other)
    return _out(call(FLOOR_DIVIDE, input, other), out)


def maximum(input, other, *, out=None):
    """Mirrors ``torch.maximum`` (a tie sends half the gradient each way, as in PyTorch)."""
    return _out(call(MAXIMUM, input, other), out)


def minimum(input, other, *, out=None):
    """Mirrors ``torch.minimum``."""
    return _out(call(MINIMUM, input, other), out)


# --- unary --------------------------------------------------------------------------------------

def _unary(name, fn, node, saves=(0,), promote="float", namespace="torch"):
    op = Op(name, fn, node, saves=saves, promote=promote)

    def public(input, *, out=None):
        return _out(call(op, input), out)
    public.__name__ = name
    public.__doc__ = f"Mirrors ``{namespace}.{name}``."
    return op, public


NEG, _neg = _unary("neg", jnp.negative, "NegBackward0", saves=(), promote=None)


def _abs(x):
    # NOTE: x * sign(x), not jnp.abs, so the derivative at 0 is sign(0) = 0 as in PyTorch.
    return jnp.abs(x) if jnp.iscomplexobj(x) else x * jnp.sign(x)


ABS, abs = _unary("abs", _abs, "AbsBackward0", promote=None)
EXP, exp = _unary("exp", jnp.exp, "ExpBackward0", saves=("result",))
LOG, log = _unary("log", jnp.log, "LogBackward0")
SQRT, sqrt = _unary("sqrt", jnp.sqrt, "SqrtBackward0", saves=("result",))
SIN, sin = _unary("sin", jnp.sin, "SinBackward0")
COS, cos = _unary("cos", jnp.cos, "CosBackward0")
TANH, tanh = _unary("tanh", jnp.tanh, "TanhBackward0", saves=("result",))
SIGMOID, sigmoid = _unary("sigmoid", jax.nn.sigmoid, "SigmoidBackward0", saves=("result",))
RECIPROCAL, _ = _unary("reciprocal", jnp.reciprocal, "ReciprocalBackward0", saves=("result",))
# NOTE: jax.nn.relu's derivative at 0 is 0, as PyTorch's (threshold_backward); relu(nan) = nan.
RELU, relu = _unary("relu", jax.nn.relu, "ReluBackward0", saves=("result",), promote=None)


def neg(input, *, out=None):
    """Mirrors ``torch.neg``."""
    if input.dtype._name == "bool":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    return _neg(input, out=out)


negative = neg
absolute = abs


# --- comparisons and logic (bool results: never differentiable) ---------------------------------

def _compare(name, fn):
    op = Op(name, fn, None, saves=(), promote="common")

    def public(input, other, *, out=None):
        return _out(call(op, input, _scalar_or_tensor(other, name)), out)
    public.__name__ = name
    public.__doc__ = f"Mirrors ``torch.{name}``."
    return public


eq = _compare("eq", jnp.equal)
ne = _compare("ne", jnp.not_equal)
lt = _compare("lt", jnp.less)
le = _compare("le", jnp.less_equal)
gt = _compare("gt", jnp.greater)
ge = _compare("ge", jnp.greater_equal)


def _bitwise(name, fn, kernel=None, commutes=True):
    op = Op(name, fn, None, saves=(), promote="common")

    def public(input, other, *, out=None):
        for t in (input, other):
            if isinstance(t, Tensor) and (t.dtype.is_floating_point or t.dtype.is_complex):
                raise NotImplementedError(f'"{kernel or name}_cpu" not implemented for '
                                   f"'{t.dtype._scalar_name}'")
        if isinstance(input, _SCALAR):
            if commutes:
                input, other = other, input
            else:   # 1 << t: the scalar stays on the left, as a 0-dim tensor of its own type
                input = _scalar_operand(input)
        return _out(call(op, input, other), out)
    public.__name__ = name
    public.__doc__ = f"Mirrors ``torch.{name}``."
    return public


bitwise_and = _bitwise("bitwise_and", jnp.bitwise_and)
bitwise_or = _bitwise("bitwise_or", jnp.bitwise_or)
bitwise_xor = _bitwise("bitwise_xor", jnp.bitwise_xor)
bitwise_left_shift = _bitwise("bitwise_left_shift", jnp.left_shift, "lshift", commutes=False)
bitwise_right_shift = _bitwise("bitwise_right_shift", jnp.right_shift, "rshift", commutes=False)
_BITWISE_NOT = Op("bitwise_not", jnp.invert, None, saves=())


def bitwise_not(input, *, out=None):
    """Mirrors ``torch.bitwise_not`` (logical not on bool tensors)."""
    if input.dtype.is_floating_point or input.dtype.is_complex:
        raise RuntimeError(f"\"bitwise_not_cpu\" not implemented for '{input.dtype._scalar_name}'")
    return _out(call(_BITWISE_NOT, input), out)




# --- where, clamp -------------------------------------------------------------------------------

# cond comes last so that next_functions lists only (input, other), as in PyTorch.
WHERE = Op("where", lambda a, b, cond: jnp.where(cond, a, b), "WhereBackward0", saves=(2,),
           promote="common", inputs=2, promote_args=2)


def where(condition, input=None, other=None, *, out=None):
    """Mirrors ``torch.where(condition, input, other)``; the one-argument form is
    ``condition.nonzero(as_tuple=True)``."""
    if input is None and other is None:
        from .index import nonzero
        return nonzero(condition, as_tuple=True)
    if not isinstance(condition, Tensor):
        raise TypeError("where(): argument 'condition' must be Tensor")
    if condition.dtype._name != "bool":
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {condition.dtype._scalar_name}")
    if isinstance(input, _SCALAR) and isinstance(other, _SCALAR):
        input = _scalar_operand(input)   # where(c, 1., 0.) is float32, where(c, 1, 0) int64
    return _out(call(WHERE, input, other, condition), out)


def _clamp(x, lo, hi):
    # NOTE: written with where, not clip, so that the gradient reaches x on the bounds
    # (PyTorch: grad * (min <= x <= max)), and min > max gives max everywhere.
    if lo is not None:
        x = jnp.where(x < lo, lo, x)
    if hi is not None:
        x = jnp.where(x > hi, hi, x)
    return x


def _clamp_scalar(x, min, max, dtype):
    return _clamp(x.astype(dtype), min, max)


def _clamp_tensor(x, lo, hi, has_min, has_max):
    return _clamp(x, lo if has_min else None, hi if has_max else None)


CLAMP = Op("clamp", _clamp_scalar, "ClampBackward1", saves=(0,))
CLAMP_MIN = Op("clamp_min", _clamp_scalar, "ClampMinBackward0", saves=(0,))
CLAMP_MAX = Op("clamp_max", _clamp_scalar, "ClampMaxBackward0", saves=(0,))
# a missing bound is passed as a 0 that never takes effect, so next_functions has 3 entries
CLAMP_T = Op("clamp", _clamp_tensor, "ClampBackward0", promote="common")
CLAMP_MIN_T = Op("clamp_min", lambda x, lo: _clamp(x, lo, None), "ClampMinBackward1",
                 promote="common")
CLAMP_MAX_T = Op("clamp_max", lambda x, hi: _clamp(x, None, hi), "ClampMaxBackward1",
                 promote="common")


def _clamp_scalars(op, input, min, max):
    dt = result_dtype("common", input, *[b for b in (min, max) if b is not None])
    return call(op, input, static=(("min", min), ("max", max), ("dtype", dt._np)))


def clamp(input, min=None, max=None, *, out=None):
    """Mirrors ``torch.clamp`` (scalar or tensor bounds)."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        static = (("has_min", min is not None), ("has_max", max is not None))
        return _out(call(CLAMP_T, input, 0 if min is None else min, 0 if max is None else max,
                         static=static), out)
    return _out(_clamp_scalars(CLAMP, input, min, max), out)


def clamp_min(input, min):
    """Mirrors ``torch.clamp_min``."""
    if isinstance(min, Tensor):
        return call(CLAMP_MIN_T, input, min)
    return _clamp_scalars(CLAMP_MIN, input, min, None)


def clamp_max(input, max):
    """Mirrors ``torch.clamp_max``."""
    if isinstance(max, Tensor):
        return call(CLAMP_MAX_T, input, max)
    return _clamp_scalars(CLAMP_MAX, input, None, max)


clip = clamp


# --- more unary maths (integers compute in the default float dtype) -----------------------------

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
    return x if x.dtype == jnp.bool_ else jnp.sign(x)


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
LOGIT = Op("logit", _logit_eps, "LogitBackward0", saves=(0,), promote="float")
SIGN = Op("sign", _sign, "SignBackward0", saves=())
SGN = Op("sgn", _sgn, "SgnBackward0", saves=(0, "result"))

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


FLOOR = Op("floor", _keep_int(jnp.floor), "FloorBackward0", saves=())
CEIL = Op("ceil", _keep_int(jnp.ceil), "CeilBackward0", saves=())
TRUNC = Op("trunc", _keep_int(jnp.trunc), "TruncBackward0", saves=())
ROUND = Op("round", _round, "RoundBackward0", saves=())
ROUND_DECIMALS = Op("round", _round, "RoundBackward1", saves=())
# NOTE: frac = x - trunc(x) has derivative 1, as PyTorch's FracBackward0 (grad passes through).
FRAC = Op("frac", lambda x: x - jnp.trunc(x), "FracBackward0", saves=())


def _no_kernel(kernel, dt):
    return NotImplementedError(f'"{kernel}" not implemented for \'{dt._scalar_name}\'')


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


NAN_TO_NUM = Op("nan_to_num", lambda x, nan, posinf, neginf: x if not jnp.issubdtype(
    x.dtype, jnp.inexact) else jnp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf),
    "NanToNumBackward0", saves=(0,))


# --- binary maths -------------------------------------------------------------------------------

def _need_tensor(fn, x, arg, pos):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be Tensor, not "
                        f"{type(x).__name__}")


def _tensors(fn, input, other, arg="other"):
    _need_tensor(fn, input, "input", 1)
    _need_tensor(fn, other, arg, 2)


def _safe_div(n, d):
    """n / d, and 0 where d == 0, with no nan reaching the derivative of the unused branch."""
    return jnp.where(d == 0, jnp.zeros_like(n), n / jnp.where(d == 0, jnp.ones_like(d), d))


@jax.custom_jvp
def _atan2(a, b):
    return jnp.arctan2(a, b)


@_atan2.defjvp
def _atan2_jvp(p, t):
    # NOTE: PyTorch's atan2 derivative is 0 at (0, 0) (jax: nan).
    a, b = p
    r = a * a + b * b
    return _atan2(a, b), _safe_div(b, r) * t[0] - _safe_div(a, r) * t[1]


@jax.custom_jvp
def _hypot(a, b):
    return jnp.hypot(a, b)


@_hypot.defjvp
def _hypot_jvp(p, t):
    # NOTE: PyTorch's hypot derivative is a / result: nan at (0, 0) (jax: 0.5).
    a, b = p
    r = _hypot(a, b)
    return r, (a * t[0] + b * t[1]) / r


def x_times_log(log, pole):
    """``x * log(y)`` that is 0 where x == 0 (PyTorch's xlogy with log, xlog1py with log1p).

    NOTE: PyTorch's d/dx is log(y), masked to 0 where x == 0 and y <= pole (where log(y) is -inf
    or nan); jax's would give nan there."""
    @jax.custom_jvp
    def f(x, y):
        return jnp.where(jnp.isnan(y), y, jnp.where(x == 0, jnp.zeros_like(x), x * log(y)))

    @f.defjvp
    def f_jvp(p, t):
        x, y = p
        dx = jnp.where((x == 0) & (y <= pole), jnp.zeros_like(y), log(y))
        _, dlog = jax.jvp(log, (y,), (t[1],))
        return f(x, y), dx * t[0] + x * dlog
    return f


_xlogy = x_times_log(jnp.log, 0)


@jax.custom_jvp
def _logaddexp(a, b):
    return jnp.logaddexp(a, b)


@_logaddexp.defjvp
def _logaddexp_jvp(p, t):
    # NOTE: PyTorch's formula, 1 / (1 + exp(b - a)): nan at (inf, inf) (jax: 1/2 ... 1).
    a, b = p
    return _logaddexp(a, b), t[0] / (1 + jnp.exp(b - a)) + t[1] / (1 + jnp.exp(a - b))


@jax.custom_jvp
def _copysign(a, b):
    return jnp.copysign(a, b)


@_copysign.defjvp
def _copysign_jvp(p, t):
    # NOTE: PyTorch's d/da is result / a with 0 where a == 0; nothing flows to b.
    a, b = p
    s = jnp.where(jnp.signbit(b), -jnp.ones_like(a), jnp.ones_like(a))
    return _copysign(a, b), jnp.sign(a) * s * t[0]


def _fmax(a, b):
    # NOTE: where, not jnp.fmax: a tie (and a nan in b) sends the whole gradient to a, as in
    # PyTorch's FmaxBackward0.
    return jnp.where((a >= b) | jnp.isnan(b), a, b)


def _fmin(a, b):
    return jnp.where((a <= b) | jnp.isnan(b), a, b)


def _heaviside(x, values):
    return jnp.where(x == 0, values, (x > 0).astype(x.dtype))


ATAN2 = Op("atan2", _atan2, "Atan2Backward0", promote="float")
HYPOT = Op("hypot", _hypot, "HypotBackward0", saves=(0, 1, "result"), promote="common")
XLOGY = Op("xlogy", _xlogy, "XlogyBackward0", promote="float")
XLOGY_SCALAR_SELF = Op("xlogy", lambda y, x: _xlogy(x, y), "XlogyBackward1", saves=(0,),
                       promote="float", inputs=1)
XLOGY_SCALAR_OTHER = Op("xlogy", _xlogy, "XlogyBackward2", saves=(0,), promote="float",
                        inputs=1)
LOGADDEXP = Op("logaddexp", _logaddexp, "LogaddexpBackward0", promote="common")
COPYSIGN = Op("copysign", _copysign, "CopysignBackward0", saves=(0, "result"), promote="float")
COPYSIGN_SCALAR = Op("copysign", _copysign, "CopysignBackward1", saves=(0, "result"),
                     promote="float", inputs=1)
FMAX = Op("fmax", _fmax, "FmaxBackward0", promote="common")
FMIN = Op("fmin", _fmin, "FminBackward0", promote="common")
HEAVISIDE = Op("heaviside", _heaviside, "NotImplemented", saves=(),
               no_grad_reason="derivative for aten::heaviside is not implemented")


def atan2(input, other, *, out=None):
    """Mirrors ``torch.atan2``: the angle of (other, input), in (-pi, pi]."""
    _tensors("atan2", input, other)
    return _out(call(ATAN2, input, other), out)


def arctan2(input, other, *, out=None):
    """Mirrors ``torch.arctan2`` (alias of ``atan2``)."""
    _tensors("arctan2", input, other)
    return _out(call(ATAN2, input, other), out)


def _float_only(kernel, input, other):
    dt = result_dtype("common", input, other)
    if not dt.is_floating_point:
        raise _no_kernel(kernel, dt)


def hypot(input, other, *, out=None):
    """Mirrors ``torch.hypot``: sqrt(input**2 + other**2) (floating-point tensors)."""
    _tensors("hypot", input, other)
    _float_only("hypot_cpu", input, other)
    return _out(call(HYPOT, input, other), out)


def logaddexp(input, other, *, out=None):
    """Mirrors ``torch.logaddexp``: log(exp(input) + exp(other)) without overflow."""
    _tensors("logaddexp", input, other)
    _float_only("logaddexp_cpu", input, other)
    return _out(call(LOGADDEXP, input, other), out)


def xlogy(input, other, *, out=None):
    """Mirrors ``torch.xlogy``: input * log(other), 0 where input == 0 (nan if other is nan)."""
    if isinstance(input, _SCALAR) and isinstance(other, Tensor):
        return _out(call(XLOGY_SCALAR_SELF, other, input), out)
    _need_tensor("xlogy", input, "input", 1)
    if isinstance(other, _SCALAR):
        return _out(call(XLOGY_SCALAR_OTHER, input, other), out)
    _need_tensor("xlogy", other, "other", 2)
    return _out(call(XLOGY, input, other), out)


def copysign(input, other, *, out=None):
    """Mirrors ``torch.copysign``: |input| with the sign (bit) of other."""
    _need_tensor("copysign", input, "input", 1)
    if isinstance(other, _SCALAR):
        return _out(call(COPYSIGN_SCALAR, input, other), out)
    _need_tensor("copysign", other, "other", 2)
    return _out(call(COPYSIGN, input, other), out)


def fmax(input, other, *, out=None):
    """Mirrors ``torch.fmax``: elementwise maximum that ignores a nan when the other is a number."""
    _tensors("fmax", input, other)
    return _out(call(FMAX, input, other), out)


def fmin(input, other, *, out=None):
    """Mirrors ``torch.fmin``: elementwise minimum that ignores a nan when the other is a number."""
    _tensors("fmin", input, other)
    return _out(call(FMIN, input, other), out)


def heaviside(input, values, *, out=None):
    """Mirrors ``torch.heaviside``: 0 below zero, ``values`` at zero, 1 above (not
    differentiable, as in PyTorch)."""
    _tensors("heaviside", input, values, "values")
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return _out(call(HEAVISIDE, input, values), out)


# --- lerp, addcmul, addcdiv ---------------------------------------------------------------------

_C10_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
              "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
              "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
              "bool": "bool", "complex64": "c10::complex<float>",
              "complex128": "c10::complex<double>"}


def _lerp(a, b, w):
    # PyTorch's formula: from the nearer end, so lerp(a, b, 1) == b exactly
    d = b - a
    return jnp.where(jnp.abs(w) < 0.5, a + w * d, b - d * (1 - w))


LERP = Op("lerp", _lerp, "LerpBackward0", saves=(), promote="common", inputs=2, promote_args=2)
LERP_T = Op("lerp", _lerp, "LerpBackward1", saves={0: (2,), 1: (2,), 2: (0, 1)},
            promote="common")


def lerp(input, end, weight, *, out=None):
    """Mirrors ``torch.lerp``: input + weight * (end - input), for a scalar or tensor weight."""
    _tensors("lerp", input, end, "end")
    names = [("end", end)] + ([("weight", weight)] if isinstance(weight, Tensor) and
                              weight.ndim else [])
    for arg, t in names:
        if t.dtype is not input.dtype:
            raise RuntimeError(f"expected dtype {_C10_NAMES.get(input.dtype._name)} for `{arg}` "
                               f"but got dtype {_C10_NAMES.get(t.dtype._name)}")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        kernel = "tensor" if isinstance(weight, Tensor) else "scalar"
        raise _no_kernel(f"lerp_kernel_{kernel}", input.dtype)
    if isinstance(weight, Tensor):
        return _out(call(LERP_T, input, end, weight.to(input.dtype)), out)
    return _out(call(LERP, input, end, weight), out)


ADDCMUL = Op("addcmul", lambda x, t1, t2, value: x + value * t1 * t2, "AddcmulBackward0",
             saves={1: (2,), 2: (1,)}, promote="common", inputs=3, promote_args=3)
ADDCDIV = Op("addcdiv", lambda x, t1, t2, value: x + value * t1 / t2, "AddcdivBackward0",
             saves={1: (2,), 2: (1, 2)}, promote="common", inputs=3, promote_args=3)


def _addc(op, input, tensor1, tensor2, value):
    dt = result_dtype("common", input, tensor1, tensor2)
    if not (dt.is_floating_point or dt.is_complex):
        value = int(value)   # PyTorch casts the scalar to the integer result type
    return call(op, input, tensor1, tensor2, value)


def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    """Mirrors ``torch.addcmul``: input + value * tensor1 * tensor2."""
    return _out(_addc(ADDCMUL, input, tensor1, tensor2, value), out)


def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    """Mirrors ``torch.addcdiv``: input + value * tensor1 / tensor2 (floating-point division)."""
    if not (tensor1.dtype.is_floating_point or tensor1.dtype.is_complex) and not (
            tensor2.dtype.is_floating_point or tensor2.dtype.is_complex):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))"
            ".to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
            "float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes.")
    return _out(_addc(ADDCDIV, input, tensor1, tensor2, value), out)


# --- classification and closeness (bool results) ------------------------------------------------

def _classify(name, fn):
    op = Op(name, fn, None, saves=())

    def public(input):
        _need_tensor(name, input, "input", 1)
        return call(op, input)
    public.__name__ = name
    public.__doc__ = f"Mirrors ``torch.{name}`` (a bool tensor)."
    return public


isnan = _classify("isnan", jnp.isnan)
isinf = _classify("isinf", jnp.isinf)
isfinite = _classify("isfinite", jnp.isfinite)
isposinf = _classify("isposinf", jnp.isposinf)
isneginf = _classify("isneginf", jnp.isneginf)
signbit = _classify("signbit", jnp.signbit)


def _isclose(a, b, rtol, atol, equal_nan, cast):
    if a.dtype == jnp.bool_:
        return a == b
    close = a == b
    if equal_nan:
        close = close | (jnp.isnan(a) & jnp.isnan(b))
    if rtol == 0 and atol == 0:
        return close
    if cast is not None:   # PyTorch measures integer distances in the default float dtype
        a, b = a.astype(cast), b.astype(cast)
    allowed = atol + jnp.abs(rtol * b)
    actual = jnp.abs(a - b)
    return close | (jnp.isfinite(actual) & (actual <= allowed))


ISCLOSE = Op("isclose", _isclose, None, saves=())


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Mirrors ``torch.isclose``: |input - other| <= atol + rtol * |other| (same dtypes)."""
    _tensors("isclose", input, other)
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{input.dtype._scalar_name} did not match {other.dtype._scalar_name}")
    for name, v in (("rtol", rtol), ("atol", atol)):
        if v < 0:
            raise RuntimeError(f"{name} must be greater than or equal to zero, but got {v}")
    dt = input.dtype
    cast = None if dt.is_floating_point or dt.is_complex else D.get_default_dtype()._np
    static = (("rtol", float(rtol)), ("atol", float(atol)), ("equal_nan", bool(equal_nan)),
              ("cast", cast))
    return call(ISCLOSE, input, other, static=static)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Mirrors ``torch.allclose``: a Python bool (needs the values: eager only)."""
    return bool(jnp.all(isclose(input, other, rtol, atol, equal_nan)._value()))


def equal(input, other):
    """Mirrors ``torch.equal``: a Python bool, True for the same shape and values (nan != nan)."""
    _tensors("equal", input, other)
    if tuple(input.shape) != tuple(other.shape):
        return False
    return bool(jnp.all(eq(input, other)._value()))


# --- logic (any dtype in, bool out) -------------------------------------------------------------

def _logical(name, fn):
    op = Op(name, lambda a, b: fn(a != 0, b != 0), None, saves=())

    def public(input, other, *, out=None):
        _tensors(name, input, other)
        return _out(call(op, input, other), out)
    public.__name__ = name
    public.__doc__ = f"Mirrors ``torch.{name}`` (nonzero is True; the result is bool)."
    return public


logical_and = _logical("logical_and", jnp.logical_and)
logical_or = _logical("logical_or", jnp.logical_or)
logical_xor = _logical("logical_xor", jnp.logical_xor)
_LOGICAL_NOT = Op("logical_not", lambda a: a == 0, None, saves=())


def logical_not(input, *, out=None):
    """Mirrors ``torch.logical_not``."""
    _need_tensor("logical_not", input, "input", 1)
    return _out(call(_LOGICAL_NOT, input), out)


# --- wiring -------------------------------------------------------------------------------------

def _inplace_of(fn):
    def method(self, *args, **kwargs):
        return inplace(self, lambda: fn(self, *args, **kwargs))
    method.__name__ = fn.__name__ + "_"
    return method


_WITH_INPLACE = {
    "sign": sign, "sgn": sgn, "exp2": exp2, "expm1": expm1, "log2": log2, "log10": log10,
    "log1p": log1p, "rsqrt": rsqrt, "square": square, "tan": tan, "asin": asin,
    "arcsin": asin, "acos": acos, "arccos": acos, "atan": atan, "arctan": atan,
    "atan2": atan2, "arctan2": arctan2, "sinh": sinh, "cosh": cosh, "asinh": asinh,
    "arcsinh": asinh, "acosh": acosh, "arccosh": acosh, "atanh": atanh, "arctanh": atanh,
    "logit": logit, "erf": erf, "erfc": erfc, "erfinv": erfinv, "lgamma": lgamma,
    "digamma": digamma, "i0": i0, "sinc": sinc, "xlogy": xlogy, "hypot": hypot,
    "floor": floor, "ceil": ceil, "round": round, "trunc": trunc, "fix": fix, "frac": frac,
    "lerp": lerp, "addcmul": addcmul, "addcdiv": addcdiv, "nan_to_num": nan_to_num,
    "copysign": copysign, "heaviside": heaviside, "logical_and": logical_and,
    "logical_or": logical_or, "logical_xor": logical_xor, "logical_not": logical_not,
    "bitwise_left_shift": bitwise_left_shift, "bitwise_right_shift": bitwise_right_shift,
}
_NO_INPLACE = {
    "fmax": fmax, "fmin": fmin, "logaddexp": logaddexp, "isnan": isnan, "isinf": isinf,
    "isfinite": isfinite, "isposinf": isposinf, "isneginf": isneginf, "signbit": signbit,
    "isclose": isclose, "allclose": allclose, "equal": equal,
}

# Public names this family adds to the torchlike namespace, and the Tensor methods it binds.
PUBLIC = tuple(_WITH_INPLACE) + tuple(_NO_INPLACE)
TENSOR_METHODS = {**_WITH_INPLACE, **_NO_INPLACE,
                  **{name + "_": _inplace_of(fn) for name, fn in _WITH_INPLACE.items()}}
