"""Pointwise ops, the core: arithmetic, the common unary maths and activations, comparisons,
bitwise ops, where, clamp, floating-point classification and logic.  The rest of the pointwise
surface is in unary.py (exp2 ... digamma, rounding) and binary.py (atan2 ... addcdiv).

Each op is one jnp function; ``promote`` says how PyTorch types its operands ("common":
promote_types with Python scalars weak; "float": integers compute in the default float dtype).
``saves`` lists what PyTorch saves for backward (checked against in-place writes).
"""
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype as D, _x64
from .._dispatch import call, elementwise_op as _op, result_dtype, with_out as _out
from .._inplace import can_cast as _can_cast, check_cast, inplace, inplace_method
from .._tensor import Tensor
from .padded import elementwise_rows

_SCALAR = (bool, int, float, complex)


def _binary(name, fn, node, promote="common", saves=None):
    return _op(name, fn, node, saves=saves, promote=promote)


ADD = _binary("add", jnp.add, "AddBackward0", saves=())
ADD_ALPHA = _op("add", lambda a, b, alpha: a + alpha * b, "AddBackward0", saves=(),
               promote="common", inputs=2, promote_args=2)
SUB = _binary("sub", jnp.subtract, "SubBackward0", saves=())
SUB_ALPHA = _op("sub", lambda a, b, alpha: a - alpha * b, "SubBackward0", saves=(),
               promote="common", inputs=2, promote_args=2)
RSUB = _op("rsub", lambda a, s: s - a, "RsubBackward1", saves=(), promote="common", inputs=1)
MUL = _binary("mul", jnp.multiply, "MulBackward0", saves={0: (1,), 1: (0,)})
DIV = _binary("div", jnp.true_divide, "DivBackward0", promote="float", saves={0: (1,), 1: (0, 1)})
REMAINDER = _binary("remainder", jnp.remainder, "RemainderBackward1", saves={1: (0, 1)})
REMAINDER_SCALAR = _op("remainder", jnp.remainder, "RemainderBackward0", saves=(),
                      promote="common", inputs=1)
FMOD = _binary("fmod", jnp.fmod, "FmodBackward1", saves={1: (0, 1)})
FMOD_SCALAR = _op("fmod", jnp.fmod, "FmodBackward0", saves=(), promote="common", inputs=1)
FLOOR_DIVIDE = _op("floor_divide", jnp.floor_divide, "NotImplemented", saves=(), promote="common",
                  no_grad_reason="derivative for aten::floor_divide is not implemented")
MAXIMUM = _binary("maximum", jnp.maximum, "MaximumBackward0")
MINIMUM = _binary("minimum", jnp.minimum, "MinimumBackward0")


@jax.custom_jvp
def _pow(a, b):
    if jnp.issubdtype(jnp.result_type(a, b), jnp.signedinteger):
        return _int_pow(a, b)
    return jnp.power(a, b)


def _int_pow(a, b):
    # NOTE: PyTorch's integer power with a negative exponent: 1 for base 1, +-1 for base -1,
    # else 0 (jnp.power gives garbage there).
    neg = jnp.where(a == 1, 1, jnp.where(a == -1, jnp.where(b % 2 == 0, 1, -1), 0))
    return jnp.where(b < 0, neg.astype(a.dtype), jnp.power(a, jnp.maximum(b, 0)))


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
POW_SCALAR = _op("pow", lambda a, exponent, dtype: a.astype(dtype) ** exponent, "PowBackward0",
                saves=(0,))
RPOW = _op("pow", lambda a, base, dtype: _pow(jnp.asarray(base, dtype), a.astype(dtype)),
          "PowBackward2", saves=("result",))

# ATen's Scalar overloads, which composites written in C++ call: mul(Tensor, Scalar),
# add(Tensor, Scalar) and div(Tensor, Scalar) record MulBackward1 / AddBackward1 / DivBackward1
# (a Python number is a 0-dim tensor: MulBackward0 / AddBackward0 / DivBackward0).
MUL_SCALAR = _op("mul", lambda a, s: a * s, "MulBackward1", saves=(), promote="common", inputs=1)
ADD_SCALAR = _op("add", lambda a, s: a + s, "AddBackward1", saves=(), promote="common", inputs=1)
DIV_SCALAR = _op("div", lambda a, s: a / s, "DivBackward1", saves=(), promote="float", inputs=1)


def _scalar_or_tensor(x, name):
    if isinstance(x, (Tensor,) + _SCALAR):
        return x
    raise TypeError(f"{name}(): argument 'other' must be Tensor or Number, not "
                    f"{type(x).__name__}")


def _is_bool(x):
    return isinstance(x, bool) or (isinstance(x, Tensor) and x._aval().dtype == np.bool_)


def _arith(op, op_alpha, input, other, alpha):
    other = _scalar_or_tensor(other, op.name)
    if not isinstance(input, Tensor):
        raise TypeError(f"{op.name}(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    if alpha == 1 and type(alpha) is int:
        return call(op, input, other)
    if type(alpha) is not int and not (type(alpha) is float and input.dtype.is_floating_point):
        _check_alpha(result_dtype("common", input, other), alpha)   # (a float input needs none)
    return call(op_alpha, input, other, alpha)


def _check_alpha(dt, alpha):
    """PyTorch's alpha_check: alpha must not be of a wider kind than the result."""
    if isinstance(alpha, bool) and dt is not D.bool_:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if isinstance(alpha, float) and not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    if isinstance(alpha, complex) and not dt.is_complex:
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex "
                           "number.")


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


@_x64.scoped
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
DIV_ROUNDED = {"trunc": _op("div", _trunc_div, "DivBackward2", saves=(), promote="common"),
               "floor": _op("div", jnp.floor_divide, "DivBackward2", saves=(), promote="common")}


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
    return scalar_tensor(value, dtype=D.scalar_dtype(value))


def remainder(input, other, *, out=None):
    """Mirrors ``torch.remainder`` (the result has the sign of the divisor, as Python's %)."""
    if isinstance(input, _SCALAR):
        input = _scalar_operand(input)
    other = _scalar_or_tensor(other, "remainder")
    _check_integer_division(input, other)
    op = REMAINDER if isinstance(other, Tensor) else REMAINDER_SCALAR
    return _out(call(op, input, other), out)


def fmod(input, other, *, out=None):
    """Mirrors ``torch.fmod``: C's remainder, with the sign of the dividend (``input``)."""
    _need_tensor("fmod", input, "input", 1)
    other = _scalar_or_tensor(other, "fmod")
    _check_integer_division(input, other)
    op = FMOD if isinstance(other, Tensor) else FMOD_SCALAR
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

def _unary(name, fn, node, saves=(0,), promote="float", namespace="torch", bucket=None):
    op = _op(name, fn, node, saves=saves, promote=promote, bucket=bucket)

    def public(input, *, out=None):
        return _out(call(op, input), out)
    public.__name__ = name
    public.__doc__ = f"Mirrors ``{namespace}.{name}``."
    return op, public


NEG, _neg = _unary("neg", jnp.negative, "NegBackward0", saves=(), promote=None)


def _abs(x):
    # NOTE: x * sign(x), not jnp.abs, so the derivative at 0 is sign(0) = 0 as in PyTorch.
    return jnp.abs(x) if jnp.iscomplexobj(x) else x * jnp.sign(x)


ABS, _abs_public = _unary("abs", _abs, "AbsBackward0", promote=None)


def abs(input, *, out=None):  # noqa: A001
    """Mirrors ``torch.abs``."""
    if input.dtype is D.bool_:
        raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool'")
    return _abs_public(input, out=out)


EXP, exp = _unary("exp", jnp.exp, "ExpBackward0", saves=("result",))
LOG, log = _unary("log", jnp.log, "LogBackward0")
SQRT, sqrt = _unary("sqrt", jnp.sqrt, "SqrtBackward0", saves=("result",))
SIN, sin = _unary("sin", jnp.sin, "SinBackward0")
COS, cos = _unary("cos", jnp.cos, "CosBackward0")
TANH, tanh = _unary("tanh", jnp.tanh, "TanhBackward0", saves=("result",))
SIGMOID, sigmoid = _unary("sigmoid", jax.nn.sigmoid, "SigmoidBackward0", saves=("result",))
RECIPROCAL, _ = _unary("reciprocal", jnp.reciprocal, "ReciprocalBackward0", saves=("result",))
# NOTE: jax.nn.relu's derivative at 0 is 0, as PyTorch's (threshold_backward); relu(nan) = nan.
# (a short batch runs a longer one's program: NOTE [ a short call in a longer one's program ])
RELU, relu = _unary("relu", jax.nn.relu, "ReluBackward0", saves=("result",), promote=None,
                    bucket=elementwise_rows)


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
    op = _op(name, fn, None, saves=(), promote="common")

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
    op = _op(name, fn, None, saves=(), promote="common")

    def public(input, other, *, out=None):
        if any(isinstance(t, (float, complex)) or (isinstance(t, Tensor) and (
                t.dtype.is_floating_point or t.dtype.is_complex)) for t in (input, other)):
            dt = result_dtype("common", input, other)
            raise NotImplementedError(f'"{kernel or name}_cpu" not implemented for '
                                      f"'{dt._scalar_name}'")
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
_BITWISE_NOT = _op("bitwise_not", jnp.invert, None, saves=())


def bitwise_not(input, *, out=None):
    """Mirrors ``torch.bitwise_not`` (logical not on bool tensors)."""
    if input.dtype.is_floating_point or input.dtype.is_complex:
        raise NotImplementedError(f"\"bitwise_not_cpu\" not implemented for "
                                  f"'{input.dtype._scalar_name}'")
    return _out(call(_BITWISE_NOT, input), out)




# --- where, clamp -------------------------------------------------------------------------------

# cond comes last so that next_functions lists only (input, other), as in PyTorch.
WHERE = _op("where", lambda a, b, cond: jnp.where(cond, a, b), "WhereBackward0", saves=(2,),
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
        condition = _uint8_condition(condition)
    if isinstance(input, _SCALAR) and isinstance(other, _SCALAR):
        input = _scalar_operand(input)   # where(c, 1., 0.) is float32, where(c, 1, 0) int64
    return _out(call(WHERE, input, other, condition), out)


_WARNED = set()
_WARN_ALWAYS = [False]


def warn_once(message, stacklevel=3):
    """A UserWarning given once per process, as PyTorch's TORCH_WARN_ONCE (every time after
    ``set_warn_always(True)``)."""
    if _WARN_ALWAYS[0] or message not in _WARNED:
        _WARNED.add(message)
        warnings.warn(message, UserWarning, stacklevel=stacklevel)


def set_warn_always(b):
    """Mirrors ``torch.set_warn_always``: True makes the warnings PyTorch gives once per process
    (torchlike's ``warn_once``) appear every time."""
    _WARN_ALWAYS[0] = bool(b)


def is_warn_always_enabled():
    """Mirrors ``torch.is_warn_always_enabled``."""
    return _WARN_ALWAYS[0]


def _uint8_condition(condition):
    """where's condition as bool: PyTorch still takes a uint8 one (with a warning), and refuses
    every other dtype."""
    if condition.dtype._name != "uint8":
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {condition.dtype._scalar_name}")
    warn_once("where received a uint8 condition tensor. This behavior is deprecated and will be "
              "removed in a future version of PyTorch. Use a boolean condition instead.", 4)
    return ne(condition, 0)


# NOTE [ clamp ]
# PyTorch's clamp is min(max(x, min), max) with NaN propagating from x and from either bound
# (clamp(min=nan) is nan everywhere) and min > max giving max.  Its derivatives are masks, not
# jnp.maximum's (which splits ties): x gets the gradient where min <= x <= max (bounds
# included, so none where x or a bound is nan), a tensor min where min > x and min < max, a
# tensor max where max < x or min > max.  `_clamp` states both as one custom_jvp; a missing
# bound is None, a scalar bound an array constant (its tangent is zero).

@jax.custom_jvp
def _clamp(x, lo, hi):
    if lo is not None:
        x = jnp.maximum(x, lo)
    if hi is not None:
        x = jnp.minimum(x, hi)
    return x


@_clamp.defjvp
def _clamp_jvp(primals, tangents):
    x, lo, hi = primals
    tx, tlo, thi = tangents
    out = _clamp(x, lo, hi)
    keep = jnp.ones(out.shape, jnp.bool_)
    parts = []
    if lo is not None:
        keep = keep & (x >= lo)
        parts.append(((lo > x) & (lo < hi) if hi is not None else lo > x, tlo))
    if hi is not None:
        keep = keep & (x <= hi)
        parts.append(((hi < x) | (lo > hi) if lo is not None else hi < x, thi))
    zero = jnp.zeros(out.shape, out.dtype)
    t = jnp.where(keep, jnp.broadcast_to(tx, out.shape), zero)
    for mask, tb in parts:
        t = t + jnp.where(mask, jnp.broadcast_to(tb, out.shape), zero)
    return out, t


def _clamp_scalar(x, min, max, dtype):
    x = x.astype(dtype)
    return _clamp(x, None if min is None else jnp.asarray(min, dtype),
                  None if max is None else jnp.asarray(max, dtype))


def _clamp_tensor(x, lo, hi, has_min, has_max):
    return _clamp(x, lo if has_min else None, hi if has_max else None)


CLAMP = _op("clamp", _clamp_scalar, "ClampBackward1", saves=(0,))
CLAMP_MIN = _op("clamp_min", _clamp_scalar, "ClampMinBackward0", saves=(0,))
CLAMP_MAX = _op("clamp_max", _clamp_scalar, "ClampMaxBackward0", saves=(0,))
# a missing bound is passed as a False that never takes effect (and, a bool, promotes nothing), so
# next_functions has 3 entries
CLAMP_T = _op("clamp", _clamp_tensor, "ClampBackward0", promote="common")
CLAMP_MIN_T = _op("clamp_min", lambda x, lo: _clamp(x, lo, None), "ClampMinBackward1",
                 promote="common")
CLAMP_MAX_T = _op("clamp_max", lambda x, hi: _clamp(x, None, hi), "ClampMaxBackward1",
                 promote="common")

# NOTE [ clamp's bounds ]
# PyTorch reads a Python number bound in three ways, and a complex one shows which:
# - clamp and clip read a floating tensor's bounds as doubles: a complex bound is its real part,
#   or "value cannot be converted to type double without overflow" where it has an imaginary
#   one; an integral or bool tensor's bounds join the result type, and a complex one makes it
#   complex, which clamp does not support (NotImplementedError);
# - clamp_min and clamp_max take a bound into the result type for every tensor, so any complex
#   bound is that NotImplementedError;
# - in place, an integral or bool tensor first checks that the result type casts to its own
#   dtype, and names its dtype as C++ names the element type ("result type Float can't be cast
#   to the desired output type long int"; clamp_min_ and clamp_max_ check for complex bounds
#   first).
# Tensor bounds run PyTorch's maximum, minimum or clamp kernel in the common dtype, which none
# has for complex types, and clamp's for bool neither (in place, after the cast check, which
# names dtypes as PyTorch does: "Long").
_TYPEID_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char",
                 "int16": "short int", "int32": "int", "int64": "long int",
                 "uint16": "short unsigned int", "uint32": "unsigned int",
                 "uint64": "long unsigned int"}


def _real_bounds(input, bounds, as_doubles, in_place):
    """``bounds`` (Python numbers or None) as PyTorch's clamp reads them (NOTE [ clamp's
    bounds ]): ``as_doubles`` for clamp and clip, ``in_place`` for the methods ending in _."""
    dt = input.dtype
    given = [b for b in bounds if b is not None]
    complex_bound = any(isinstance(b, complex) for b in given)
    if complex_bound and not as_doubles:
        raise NotImplementedError("clamp is not supported for complex types")
    if in_place and not (dt.is_floating_point or dt.is_complex):
        check_cast(result_dtype("common", input, *given), dt, _TYPEID_NAMES[dt._name])
    if not complex_bound or dt.is_complex:
        return bounds
    if not dt.is_floating_point:
        raise NotImplementedError("clamp is not supported for complex types")
    if any(isinstance(b, complex) and b.imag for b in given):
        raise RuntimeError("value cannot be converted to type double without overflow")
    return tuple(b.real if isinstance(b, complex) else b for b in bounds)


def _check_tensor_bounds(input, min, max, kernel, in_place):
    """PyTorch's errors where a bound is a Tensor: in place, a result type that does not cast to
    the tensor's dtype (named as PyTorch names dtypes); then ``kernel`` (maximum, minimum or
    clamp), which has no complex version, and clamp's none for bool."""
    dt = result_dtype("common", input, *[b for b in (min, max) if b is not None])
    if in_place:
        check_cast(dt, input.dtype)
    if dt.is_complex or (dt is D.bool_ and kernel == "clamp"):
        raise NotImplementedError(f"\"{kernel}_cpu\" not implemented for '{dt._scalar_name}'")


def _clamp_scalars(op, input, min, max):
    dt = result_dtype("common", input, *[b for b in (min, max) if b is not None])
    min, max = (None if b is None else D.fit_scalar(b, dt) for b in (min, max))
    return call(op, input, static=(("min", min), ("max", max), ("dtype", dt._np)))


def _check_clamp(input, kernel, bounds):
    """PyTorch's errors before a clamp: none of complex tensors, nor of a bool one whose bounds
    (Python bools) keep it bool."""
    dt = input.dtype
    if dt.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")
    if dt is D.bool_ and all(isinstance(b, bool) for b in bounds if b is not None):
        raise NotImplementedError(f"\"{kernel}_cpu\" not implemented for 'Bool'")


def _clamped(input, min, max, in_place):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    _check_clamp(input, "clamp_scalar" if min is not None and max is not None else
                 "clamp_min_scalar" if min is not None else "clamp_max_scalar", (min, max))
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        _check_tensor_bounds(input, min, max, "clamp" if min is not None and max is not None
                             else "maximum" if min is not None else "minimum", in_place)
        static = (("has_min", min is not None), ("has_max", max is not None))
        return call(CLAMP_T, input, False if min is None else min,
                    False if max is None else max, static=static)
    min, max = _real_bounds(input, (min, max), True, in_place)
    return _clamp_scalars(CLAMP, input, min, max)


def _clamped_min(input, min, in_place):
    _check_clamp(input, "clamp_min_scalar", (min,))
    if isinstance(min, Tensor):
        _check_tensor_bounds(input, min, None, "maximum", in_place)
        return call(CLAMP_MIN_T, input, min)
    min, = _real_bounds(input, (min,), False, in_place)
    return _clamp_scalars(CLAMP_MIN, input, min, None)


def _clamped_max(input, max, in_place):
    _check_clamp(input, "clamp_max_scalar", (max,))
    if isinstance(max, Tensor):
        _check_tensor_bounds(input, None, max, "minimum", in_place)
        return call(CLAMP_MAX_T, input, max)
    max, = _real_bounds(input, (max,), False, in_place)
    return _clamp_scalars(CLAMP_MAX, input, None, max)


def clamp(input, min=None, max=None, *, out=None):
    """Mirrors ``torch.clamp`` (scalar or tensor bounds; NOTE [ clamp ], NOTE [ clamp's
    bounds ])."""
    return _out(_clamped(input, min, max, False), out)


def clamp_min(input, min):
    """Mirrors ``torch.clamp_min``."""
    return _clamped_min(input, min, False)


def clamp_max(input, max):
    """Mirrors ``torch.clamp_max``."""
    return _clamped_max(input, max, False)


def clamp_(self, min=None, max=None):
    """Mirrors ``Tensor.clamp_`` (and ``clip_``): Python bounds read as in place."""
    return inplace(self, lambda: _clamped(self, min, max, True))


def clamp_min_(self, min):
    """Mirrors ``Tensor.clamp_min_``."""
    return inplace(self, lambda: _clamped_min(self, min, True))


def clamp_max_(self, max):
    """Mirrors ``Tensor.clamp_max_``."""
    return inplace(self, lambda: _clamped_max(self, max, True))


clip = clamp


# --- argument checks ---------------------------------------------------------------------------

def _need_tensor(fn, x, arg, pos):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be Tensor, not "
                        f"{type(x).__name__}")


def _tensors(fn, input, other, arg="other"):
    _need_tensor(fn, input, "input", 1)
    _need_tensor(fn, other, arg, 2)



def _no_kernel(kernel, dt):
    return NotImplementedError(f'"{kernel}" not implemented for \'{dt._scalar_name}\'')


# --- classification and closeness (bool results) ------------------------------------------------

def _classify(name, fn):
    op = _op(name, fn, None, saves=())

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


ISCLOSE = _op("isclose", _isclose, None, saves=())


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
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


def equal(input, other):
    """Mirrors ``torch.equal``: a Python bool, True for the same shape and values (nan != nan)."""
    _tensors("equal", input, other)
    if tuple(input.shape) != tuple(other.shape):
        return False
    same = eq(input, other).all()
    if same.is_meta:
        raise NotImplementedError("aten::equal: attempted to run this operator with Meta "
                                  "tensors, but it needs their values")
    return bool(same)


def is_nonzero(input):
    """Mirrors ``torch.is_nonzero``: whether a one-element tensor is not zero (a Python bool)."""
    n = input.numel()
    if n != 1:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous" if n == 0 else
                           "Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item() != 0)


# --- promotion ----------------------------------------------------------------------------------

def result_type(tensor, other):
    """Mirrors ``torch.result_type``: the dtype an arithmetic op on ``tensor`` and ``other``
    (Tensors or Python numbers) computes in (PyTorch's type promotion)."""
    for name, pos, x in (("tensor", 1, tensor), ("other", 2, other)):
        if not isinstance(x, (Tensor,) + _SCALAR):
            raise TypeError(f"result_type(): argument '{name}' (position {pos}) must be Tensor, "
                            f"not {type(x).__name__}")
    return result_dtype("common", tensor, other)


def can_cast(from_, to):
    """Mirrors ``torch.can_cast``: whether PyTorch's casting rules allow ``from_`` -> ``to``
    (no complex -> real, floating -> integral, or non-bool -> bool)."""
    for name, pos, d in (("from_", 1, from_), ("to", 2, to)):
        if not isinstance(d, D.dtype):
            raise TypeError(f"can_cast(): argument '{name}' (position {pos}) must be "
                            f"torch.dtype, not {type(d).__name__}")
    return _can_cast(from_, to)

# --- logic (any dtype in, bool out) -------------------------------------------------------------

def _logical(name, fn):
    op = _op(name, lambda a, b: fn(a != 0, b != 0), None, saves=())

    def public(input, other, *, out=None):
        _tensors(name, input, other)
        return _out(call(op, input, other), out)
    public.__name__ = name
    public.__doc__ = f"Mirrors ``torch.{name}`` (nonzero is True; the result is bool)."
    return public


logical_and = _logical("logical_and", jnp.logical_and)
logical_or = _logical("logical_or", jnp.logical_or)
logical_xor = _logical("logical_xor", jnp.logical_xor)
_LOGICAL_NOT = _op("logical_not", lambda a: a == 0, None, saves=())


def logical_not(input, *, out=None):
    """Mirrors ``torch.logical_not``."""
    _need_tensor("logical_not", input, "input", 1)
    return _out(call(_LOGICAL_NOT, input), out)


# --- wiring -------------------------------------------------------------------------------------

def family(with_inplace, no_inplace=None):
    """A pointwise family's public names and Tensor methods: every function is a method, and
    those in ``with_inplace`` also get an in-place ``name_`` method."""
    no_inplace = no_inplace or {}
    methods = {**with_inplace, **no_inplace,
               **{name + "_": inplace_method(fn) for name, fn in with_inplace.items()}}
    return tuple(with_inplace) + tuple(no_inplace), methods


# PyTorch's aliases of the comparisons and of the arithmetic
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne
divide, multiply, subtract = div, mul, sub

PUBLIC, TENSOR_METHODS = family(
    {"add": add, "sub": sub, "subtract": sub, "mul": mul, "multiply": mul, "div": div,
     "divide": div, "true_divide": true_divide, "pow": pow, "remainder": remainder,
     "floor_divide": floor_divide, "neg": neg, "negative": neg, "abs": abs, "absolute": abs,
     "exp": exp, "log": log, "sqrt": sqrt, "sin": sin, "cos": cos, "tanh": tanh,
     "sigmoid": sigmoid, "relu": relu, "reciprocal": reciprocal, "bitwise_and": bitwise_and,
     "bitwise_or": bitwise_or, "bitwise_xor": bitwise_xor, "bitwise_not": bitwise_not, "eq": eq,
     "ne": ne, "lt": lt, "le": le, "gt": gt, "ge": ge, "fmod": fmod, "logical_and": logical_and,
     "logical_or": logical_or, "logical_xor": logical_xor, "logical_not": logical_not,
     "bitwise_left_shift": bitwise_left_shift, "bitwise_right_shift": bitwise_right_shift,
     "greater": gt, "greater_equal": ge, "less": lt, "less_equal": le, "not_equal": ne},
    {"isnan": isnan, "isinf": isinf, "isfinite": isfinite, "isposinf": isposinf,
     "isneginf": isneginf, "signbit": signbit, "isclose": isclose, "allclose": allclose,
     "equal": equal, "is_nonzero": is_nonzero, "maximum": maximum, "minimum": minimum,
     "clamp": clamp, "clip": clamp, "clamp_min": clamp_min, "clamp_max": clamp_max})
# their in-place variants read Python bounds as in place (NOTE [ clamp's bounds ])
TENSOR_METHODS.update({"clamp_": clamp_, "clip_": clamp_, "clamp_min_": clamp_min_,
                       "clamp_max_": clamp_max_})
PUBLIC += ("where", "rsub", "can_cast", "result_type", "is_warn_always_enabled",
           "set_warn_always")


def _is_signed(self):
    """Mirrors ``Tensor.is_signed``: whether the dtype is a signed one."""
    return self.dtype.is_signed


def _where(self, cond, other):
    return where(cond, self, other)


TENSOR_METHODS.update({"is_signed": _is_signed, "where": _where})
