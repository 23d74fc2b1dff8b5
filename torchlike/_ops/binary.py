"""Pointwise maths of two or three tensors beyond the core arithmetic (pointwise.py): atan2,
hypot, xlogy, logaddexp, copysign, fmax/fmin, heaviside, lerp, addcmul, addcdiv."""
import jax
import jax.numpy as jnp

from .. import _dtype as D
from .._dispatch import call, elementwise_op as _op, result_dtype, with_out as _out
from .._inplace import inplace
from .._tensor import Tensor
from .pointwise import _SCALAR, _need_tensor, _no_kernel, _tensors, family, pow


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


ATAN2 = _op("atan2", _atan2, "Atan2Backward0", promote="float")
HYPOT = _op("hypot", _hypot, "HypotBackward0", saves=(0, 1, "result"), promote="common")
XLOGY = _op("xlogy", _xlogy, "XlogyBackward0", promote="float")
XLOGY_SCALAR_SELF = _op("xlogy", lambda y, x: _xlogy(x, y), "XlogyBackward1", saves=(0,),
                       promote="float", inputs=1)
XLOGY_SCALAR_OTHER = _op("xlogy", _xlogy, "XlogyBackward2", saves=(0,), promote="float",
                        inputs=1)
LOGADDEXP = _op("logaddexp", _logaddexp, "LogaddexpBackward0", promote="common")
COPYSIGN = _op("copysign", _copysign, "CopysignBackward0", saves=(0, "result"), promote="float")
COPYSIGN_SCALAR = _op("copysign", _copysign, "CopysignBackward1", saves=(0, "result"),
                     promote="float", inputs=1)
FMAX = _op("fmax", _fmax, "FmaxBackward0", promote="common")
FMIN = _op("fmin", _fmin, "FminBackward0", promote="common")
HEAVISIDE = _op("heaviside", _heaviside, "NotImplemented", saves=(),
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


LERP = _op("lerp", _lerp, "LerpBackward0", saves=(), promote="common", inputs=2, promote_args=2)
LERP_T = _op("lerp", _lerp, "LerpBackward1", saves={0: (2,), 1: (2,), 2: (0, 1)},
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


ADDCMUL = _op("addcmul", lambda x, t1, t2, value: x + value * t1 * t2, "AddcmulBackward0",
             saves={1: (2,), 2: (1,)}, promote="common", inputs=3, promote_args=3)
ADDCDIV = _op("addcdiv", lambda x, t1, t2, value: x + value * t1 / t2, "AddcdivBackward0",
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


# --- float_power, ldexp, logaddexp2, nextafter, gcd, lcm ----------------------------------------

def float_power(input, exponent, *, out=None):
    """Mirrors ``torch.float_power``: ``pow`` computed in float64 (complex128 when either side
    is complex), whatever the operands' dtypes."""
    cplx = any(isinstance(t, complex) or isinstance(t, Tensor) and t.dtype.is_complex
               for t in (input, exponent))
    dt = D.complex128 if cplx else D.float64
    input, exponent = (t.to(dt) if isinstance(t, Tensor) else t for t in (input, exponent))
    return pow(input, exponent, out=out)


def _float_power_(self, exponent):
    cplx = self.dtype.is_complex or isinstance(exponent, complex) or (
        isinstance(exponent, Tensor) and exponent.dtype.is_complex)
    dt = D.complex128 if cplx else D.float64
    if self.dtype is not dt:
        raise RuntimeError(f"the base given to float_power_ has dtype {self.dtype._scalar_name} "
                           f"but the operation's result requires dtype {dt._scalar_name}")
    return inplace(self, lambda: float_power(self, exponent))


@jax.custom_jvp
def _ldexp_int(x, e):
    return x * jnp.exp2(e.astype(x.dtype))


@_ldexp_int.defjvp
def _ldexp_int_jvp(p, t):
    # NOTE: PyTorch's LdexpBackward0 multiplies by pow(2, other) in other's integer dtype, which
    # is 0 for a negative exponent: no gradient reaches input there.
    x, e = p
    return _ldexp_int(x, e), t[0] * jnp.where(e < 0, 0, jnp.exp2(e.astype(x.dtype)))


# 2**other is computed in other's own floating dtype, then multiplied in the result's (PyTorch's
# values: float64 input with a float32 exponent gets a float32 power of two)
LDEXP = _op("ldexp", lambda x, e, dtype: x.astype(dtype) * jnp.exp2(e).astype(dtype),
            "LdexpBackward0")
LDEXP_INT = _op("ldexp", _ldexp_int, "LdexpBackward0", promote="float", promote_args=1)


def ldexp(input, other, *, out=None):
    """Mirrors ``torch.ldexp``: input * 2**other, in the promoted floating-point dtype."""
    _tensors("ldexp", input, other)
    if not (other.dtype.is_floating_point or other.dtype.is_complex):
        return _out(call(LDEXP_INT, input, other), out)
    dt = result_dtype("float", input, other)
    return _out(call(LDEXP, input, other, static=(("dtype", dt._np),)), out)


@jax.custom_jvp
def _logaddexp2(a, b):
    return jnp.logaddexp2(a, b)


@_logaddexp2.defjvp
def _logaddexp2_jvp(p, t):
    # PyTorch's formula, 1 / (1 + 2**(b - a)), as logaddexp's
    a, b = p
    return _logaddexp2(a, b), t[0] / (1 + jnp.exp2(b - a)) + t[1] / (1 + jnp.exp2(a - b))


LOGADDEXP2 = _op("logaddexp2", _logaddexp2, "Logaddexp2Backward0", promote="common")


def logaddexp2(input, other, *, out=None):
    """Mirrors ``torch.logaddexp2``: log2(2**input + 2**other) without overflow."""
    _tensors("logaddexp2", input, other)
    _float_only("logaddexp2_cpu", input, other)
    return _out(call(LOGADDEXP2, input, other), out)


@jax.custom_jvp
def _nextafter(a, b):
    return jnp.nextafter(a, b)


# NOTE: PyTorch's NextafterBackward0 passes the gradient to input unchanged, none to other.
_nextafter.defjvp(lambda p, t: (_nextafter(*p), t[0]))
NEXTAFTER = _op("nextafter", _nextafter, "NextafterBackward0", promote="common")


def nextafter(input, other, *, out=None):
    """Mirrors ``torch.nextafter``: the next floating-point value after input towards other."""
    _tensors("nextafter", input, other)
    _float_only("nextafter_cpu", input, other)
    return _out(call(NEXTAFTER, input, other), out)


GCD = _op("gcd", jnp.gcd, None, saves=(), promote="common")
LCM = _op("lcm", jnp.lcm, None, saves=(), promote="common")


def _integer_only(kernel, input, other):
    dt = result_dtype("common", input, other)
    if dt.is_floating_point or dt.is_complex or dt is D.bool_:
        raise _no_kernel(kernel, dt)


def gcd(input, other, *, out=None):
    """Mirrors ``torch.gcd``: the non-negative greatest common divisor (integer tensors)."""
    _tensors("gcd", input, other)
    _integer_only("gcd_cpu", input, other)
    return _out(call(GCD, input, other), out)


def lcm(input, other, *, out=None):
    """Mirrors ``torch.lcm``: the non-negative least common multiple (integer tensors)."""
    _tensors("lcm", input, other)
    _integer_only("lcm_cpu", input, other)
    return _out(call(LCM, input, other), out)

PUBLIC, TENSOR_METHODS = family(
    {"atan2": atan2, "arctan2": arctan2, "xlogy": xlogy, "hypot": hypot, "lerp": lerp,
     "addcmul": addcmul, "addcdiv": addcdiv, "copysign": copysign, "heaviside": heaviside,
     "ldexp": ldexp, "nextafter": nextafter, "gcd": gcd, "lcm": lcm},
    {"fmax": fmax, "fmin": fmin, "logaddexp": logaddexp, "logaddexp2": logaddexp2,
     "float_power": float_power})
TENSOR_METHODS["float_power_"] = _float_power_
