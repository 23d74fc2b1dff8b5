"""Activation functions of ``torch.nn.functional`` (relu ... glu, the softmax family).

Each activation PyTorch computes in one kernel is one op: a jnp function, its PyTorch
backward-node name, and the saved tensors.  PyTorch's in-place forms (``inplace=True``,
``F.elu_``) write the out-of-place result into the input (torchlike/_inplace.py); where PyTorch
names the in-place node differently (``LeakyReluBackward1``, ``EluBackward1``, ...) a second op
carries that name.  The functions PyTorch writes in Python (softsign, tanhshrink, softmin,
gumbel_softmax) are composed from other ops, so their graphs show the same nodes.

Gradients at the kinks follow PyTorch's backward kernels: each op is written with ``where`` so
that jax.vjp takes the branch PyTorch's mask takes (hardtanh has zero gradient on its bounds,
leaky_relu the negative slope at 0, nan inputs take the "else" branch), and a branch ``where``
does not take sees a harmless input, so inf or nan there cannot leak into the gradient.
"""
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _amp_hook
from .. import _dtype as D, _x64
from .._dispatch import Op, call, elementwise_op
from .._host import softmax_in_buckets
from .._inplace import inplace as _inplace
from .._quick import SOFTMAX_FUSION
from .._random import _key, random_uniform
from .._tensor import _wrap_dim
from . import pointwise as _pw
from . import shape as _shape
from .padded import rows_over_dim
from .pointwise import RELU, _no_kernel


# --- helpers ------------------------------------------------------------------------------------

def _opmath(fn):
    """fn computed in float32 for half-precision inputs and rounded back, as PyTorch's CPU
    kernels compute them."""
    def wrapped(x, *args, **kwargs):
        if x.dtype in (jnp.float16, jnp.bfloat16):
            return fn(x.astype(jnp.float32), *args, **kwargs).astype(x.dtype)
        return fn(x, *args, **kwargs)
    return wrapped


def _floating(input, kernel, complex_ok=False):
    """PyTorch's dtype dispatch: its kernel ``kernel`` exists for floating types only."""
    dt = input.dtype
    if not (dt.is_floating_point or (complex_ok and dt.is_complex)):
        raise _no_kernel(kernel, dt)


def _scalar(v):
    """A Scalar argument as a Python float (a 0-dim Tensor is read: eager only); NaN as the one
    ``math.nan``, so that a static argument holding it finds its cached program again."""
    v = float(v)
    return v if v == v else math.nan


def _run(op, input, inplace, static=(), inplace_op=None):
    """``op(input)``, or written into ``input`` (as ``inplace_op`` where PyTorch's in-place
    node has its own name)."""
    if inplace:
        return _inplace(input, lambda: call(inplace_op or op, input, static=static))
    return call(op, input, static=static)


def _negative_slope_error(what):
    # PyTorch raises this from the backward of the in-place op (its result cannot be inverted).
    if what == "leaky_relu":
        return (RuntimeError, "In-place leakyReLu backward calculation is triggered with a "
                "negative slope which is not supported. This is caused by calling in-place "
                "forward function with a negative slope, please call out-of-place version "
                "instead. File an issue at https://github.com/pytorch/pytorch if you do require "
                "supporting in-place leakRelu backward calculation with negative slope")
    return (RuntimeError, "In-place elu backward calculation is triggered with a negative slope "
            "which is not supported. This is caused by calling in-place forward function with a "
            "negative slope, please call out-of-place version instead.")


def _inplace_ops(name, fn, node, saves=("result",), what=None):
    """The in-place op (PyTorch saves its result) and, for ``what``, the variant whose backward
    raises because the slope is negative."""
    ok = elementwise_op(name + "_", fn, node, saves=saves)
    bad = elementwise_op(name + "_", fn, node, saves=saves,
                         no_grad_reason=_negative_slope_error(what)) if what else None
    return ok, bad


# --- the op table -------------------------------------------------------------------------------

def _clamped(x, lo, hi):
    # NOTE: where, not clip: PyTorch's gradient is 0 on the bounds (x <= lo or x >= hi) and 1
    # for nan; integer inputs round the bounds toward zero, as PyTorch casts them.  A NaN bound
    # makes every value NaN (as clamp's), the gradient keeping that mask.
    out = jnp.where(x <= lo, lo, jnp.where(x >= hi, hi, x))
    if lo != lo or hi != hi:
        out = out + math.nan
    return out.astype(x.dtype)


def _leaky(x, slope):
    # NOTE: x > 0 picks the identity, so the gradient at 0 (and at nan) is the slope, as PyTorch.
    return jnp.where(x > 0, x, x * slope)


def _where(cond, x):
    """x where cond holds, else 0: a branch ``where`` does not take must still have a finite
    derivative at x (nan or inf there would leak into the gradient as 0 * nan)."""
    return jnp.where(cond, x, 0)


@_opmath
def _elu(x, alpha, scale, input_scale):
    # NOTE: x <= 0 picks the exponential, so the gradient at 0 is alpha*scale*input_scale as in
    # PyTorch, and nan takes the linear branch (gradient scale).
    neg = x <= 0
    return jnp.where(neg, alpha * scale * jnp.expm1(_where(neg, x) * input_scale), x * scale)


@_opmath
def _softplus(x, beta, threshold):
    linear = x * beta > threshold
    soft = jnp.log1p(jnp.exp(_where(~linear, x) * beta)) / beta
    return jnp.where(linear, x, soft)


@_opmath
def _gelu(x, approximate):
    return jax.nn.gelu(x, approximate=approximate == "tanh")


@_opmath
def _silu(x):
    return x * jax.nn.sigmoid(x)


@_opmath
def _mish(x):
    return x * jnp.tanh(jax.nn.softplus(x))


@_opmath
def _log_sigmoid(x):
    return jax.nn.log_sigmoid(x)


_ONE_SIXTH_F32 = float(np.float32(1.0) / np.float32(6.0))


@jax.custom_jvp
def _hardsigmoid(x):
    return jnp.where(x <= -3, 0, jnp.where(x >= 3, 1, (x + 3) / 6)).astype(x.dtype)


@_hardsigmoid.defjvp
def _hardsigmoid_jvp(primals, tangents):
    # NOTE: PyTorch's slope is the float constant 1/6 (0.1666666716...) in every dtype, and 0 on
    # the bounds and for nan.
    x, = primals
    t, = tangents
    slope = jnp.where((x > -3) & (x < 3), _ONE_SIXTH_F32, 0).astype(x.dtype)
    return _hardsigmoid(x), slope * t


@_opmath
def _hardswish(x):
    # NOTE: PyTorch's gradient is 0 for x <= -3, x/3 + 1/2 for -3 < x < 3, and 1 from 3 on (nan
    # included).
    mid = _where((x > -3) & (x < 3), x)
    return jnp.where(x <= -3, 0, jnp.where(x < 3, mid * (mid + 3) / 6, x)).astype(x.dtype)


def _softshrink(x, lambd):
    # NOTE: the gradient is 0 on [-lambd, lambd] (bounds included) and 1 elsewhere, nan too.
    return jnp.where((x >= -lambd) & (x <= lambd), 0, x - lambd * jnp.sign(x)).astype(x.dtype)


def _hardshrink(x, lambd):
    return jnp.where((x >= -lambd) & (x <= lambd), 0, x).astype(x.dtype)


def _threshold(x, threshold, value):
    return jnp.where(x <= threshold, value, x).astype(x.dtype)


@_opmath
def _rrelu_train(x, key, lower, upper):
    # NOTE: each element <= 0 gets its own slope drawn from U(lower, upper), its gradient too.
    r = random_uniform(key, x.shape, x.dtype, lower, upper)
    return jnp.where(x <= 0, x * r, x)


@_opmath
def _glu(x, dim):
    a, b = jnp.split(x, 2, axis=dim)
    return a * jax.nn.sigmoid(b)


def _prelu(x, weight):
    return jnp.where(x > 0, x, weight * x)


def _op(name, fn, node, saves=(0,)):
    return elementwise_op(name, fn, node, saves=saves)


HARDTANH = _op("hardtanh", _clamped, "HardtanhBackward0")
LEAKY_RELU = _op("leaky_relu", _leaky, "LeakyReluBackward0")
LEAKY_RELU_, LEAKY_RELU_NEG_ = _inplace_ops("leaky_relu", _leaky, "LeakyReluBackward1",
                                            what="leaky_relu")
ELU = _op("elu", _elu, "EluBackward0")
ELU_, ELU_NEG_ = _inplace_ops("elu", _elu, "EluBackward1", what="elu")
CELU = _op("celu", _elu, "CeluBackward0")
CELU_, CELU_NEG_ = _inplace_ops("celu", _elu, "CeluBackward1", what="elu")
GELU = _op("gelu", _gelu, "GeluBackward0")
SILU = _op("silu", _silu, "SiluBackward0")
MISH = _op("mish", _mish, "MishBackward0")
SOFTPLUS = _op("softplus", _softplus, "SoftplusBackward0")
HARDSIGMOID = _op("hardsigmoid", _opmath(_hardsigmoid), "HardsigmoidBackward0")
HARDSWISH = _op("hardswish", _hardswish, "HardswishBackward0")
SOFTSHRINK = _op("softshrink", _softshrink, "SoftshrinkBackward0")
HARDSHRINK = _op("hardshrink", _hardshrink, "HardshrinkBackward0")
THRESHOLD = _op("threshold", _threshold, "ThresholdBackward0")
THRESHOLD_, _ = _inplace_ops("threshold", _threshold, "ThresholdBackward1")
LOG_SIGMOID = _op("log_sigmoid", _log_sigmoid, "LogSigmoidBackward0")
# rrelu: one node name whether the slopes are random (training) or their mean (eval); the key
# is an extra operand, not a graph input (PyTorch lists only ``self``).
RRELU = _op("rrelu_with_noise", _leaky, "RreluWithNoiseBackward0")
RRELU_, RRELU_NEG_ = _inplace_ops("rrelu_with_noise", _leaky, "RreluWithNoiseBackward1",
                                  what="leaky_relu")
RRELU_TRAIN = Op("rrelu_with_noise", _rrelu_train, "RreluWithNoiseBackward0", saves=(0,),
                 inputs=1, elementwise=True)
RRELU_TRAIN_ = Op("rrelu_with_noise_", _rrelu_train, "RreluWithNoiseBackward1",
                  saves=("result",), inputs=1, elementwise=True)
GLU = Op("glu", _glu, "GluBackward0", saves=(0,))
PRELU = elementwise_op("prelu", _prelu, "PreluKernelBackward0", broadcasts=False)


# --- relu family --------------------------------------------------------------------------------

def relu(input, inplace=False):
    """Mirrors ``torch.nn.functional.relu``: max(0, x).

    Example:
        >>> F.relu(torchlike.tensor([-1.0, 2.0]))
        tensor([0., 2.])
    """
    dt = input.dtype
    if dt is D.bool_:
        raise RuntimeError("Boolean inputs not supported for relu")
    if dt.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")
    return _run(RELU, input, inplace)


def relu_(input):
    """Mirrors ``torch.nn.functional.relu_`` (and ``torch.relu_``): relu in place."""
    return relu(input, inplace=True)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """Mirrors ``torch.nn.functional.hardtanh``: x clamped to [min_val, max_val] (gradient 0 on
    the bounds, as PyTorch's)."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    dt = input.dtype
    if dt is D.bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if dt.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")
    static = (("lo", _scalar(min_val)), ("hi", _scalar(max_val)))
    for _, v in static:
        D.check_scalar(v, dt)
    return _run(HARDTANH, input, inplace, static)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """Mirrors ``torch.nn.functional.hardtanh_``: hardtanh in place."""
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace=False):
    """Mirrors ``torch.nn.functional.relu6``: min(max(0, x), 6) (PyTorch's HardtanhBackward0)."""
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """Mirrors ``torch.nn.functional.leaky_relu``: x for x > 0, else negative_slope * x."""
    _floating(input, "leaky_relu_cpu")
    slope = _scalar(negative_slope)
    static = (("slope", slope),)
    return _run(LEAKY_RELU, input, inplace, static,
                LEAKY_RELU_NEG_ if slope < 0 else LEAKY_RELU_)


def leaky_relu_(input, negative_slope=0.01):
    """Mirrors ``torch.nn.functional.leaky_relu_``: leaky_relu in place."""
    return leaky_relu(input, negative_slope, inplace=True)


def _rrelu(input, lower, upper, training, inplace, generator):
    lower, upper = _scalar(lower), _scalar(upper)
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:   # the mean slope, as leaky_relu
        _floating(input, "leaky_relu_cpu")
        slope = (lower + upper) / 2
        return _run(RRELU, input, inplace, (("slope", slope),),
                    RRELU_NEG_ if slope < 0 else RRELU_)
    if input.dtype not in (D.float32, D.float64, D.bfloat16):
        raise _no_kernel("rrelu_with_noise_out_cpu", input.dtype)
    key = _key(generator, input)
    static = (("lower", lower), ("upper", upper))
    if inplace:
        return _inplace(input, lambda: call(RRELU_TRAIN_, input, key, static=static))
    return call(RRELU_TRAIN, input, key, static=static)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Mirrors ``torch.nn.functional.rrelu``: randomized leaky relu.

    In training each element <= 0 is multiplied by its own slope drawn uniformly from
    [lower, upper] (from torchlike's default generator); otherwise the slope is their mean.
    """
    return _rrelu(input, lower, upper, training, inplace, None)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """Mirrors ``torch.nn.functional.rrelu_`` (and ``torch.rrelu_``): rrelu in place."""
    return _rrelu(input, lower, upper, training, True, generator)


def torch_rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """Mirrors ``torch.rrelu`` (it takes a ``generator`` where F.rrelu takes ``inplace``)."""
    return _rrelu(input, lower, upper, training, False, generator)


def _threshold_impl(input, th, value, inplace):
    dt = input.dtype
    if dt is D.bool_ or dt.is_complex:
        raise _no_kernel("threshold_cpu", dt)
    static = (("threshold", _scalar(th)), ("value", _scalar(value)))
    return _run(THRESHOLD, input, inplace, static, THRESHOLD_)


def threshold(input, threshold, value, inplace=False):
    """Mirrors ``torch.nn.functional.threshold``: ``value`` where x <= threshold, else x."""
    return _threshold_impl(input, threshold, value, inplace)


def threshold_(input, threshold, value):
    """Mirrors ``torch.nn.functional.threshold_``: threshold in place."""
    return _threshold_impl(input, threshold, value, True)


@_amp_hook.entry("prelu")
def prelu(input, weight):
    """Mirrors ``torch.nn.functional.prelu``: x for x > 0, else weight * x, with one weight per
    channel (dim 1) or a single weight."""
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got "
                           f"{input.dtype._scalar_name} and {weight.dtype._scalar_name}")
    if weight.numel() != 1:
        if input.ndim == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.ndim > 1 else 1
        if channels != weight.numel():
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {weight.numel()} and channel size = "
                               f"{channels}.")
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.ndim}")
    _floating(input, "prelu_cpu")
    if input.ndim != weight.ndim:   # a view that broadcasts over the channel dim, as PyTorch
        dims = [1] * input.ndim
        if input.ndim > 1:
            dims[1] = weight.numel()
        weight = _shape.reshape(weight, tuple(dims))
    return call(PRELU, input, weight)


# --- smooth activations -------------------------------------------------------------------------

def elu(input, alpha=1.0, inplace=False):
    """Mirrors ``torch.nn.functional.elu``: x for x > 0, else alpha * (exp(x) - 1)."""
    _floating(input, "elu_cpu")
    alpha = _scalar(alpha)
    static = (("alpha", alpha), ("scale", 1.0), ("input_scale", 1.0))
    return _run(ELU, input, inplace, static, ELU_NEG_ if alpha < 0 else ELU_)


def elu_(input, alpha=1.0):
    """Mirrors ``torch.nn.functional.elu_``: elu in place."""
    return elu(input, alpha, inplace=True)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input, inplace=False):
    """Mirrors ``torch.nn.functional.selu``: scale * elu(x, alpha) with the self-normalizing
    constants (PyTorch's EluBackward0)."""
    _floating(input, "elu_cpu")
    static = (("alpha", _SELU_ALPHA), ("scale", _SELU_SCALE), ("input_scale", 1.0))
    return _run(ELU, input, inplace, static, ELU_)


def selu_(input):
    """Mirrors ``torch.nn.functional.selu_`` (and ``torch.selu_``): selu in place."""
    return selu(input, inplace=True)


def celu(input, alpha=1.0, inplace=False):
    """Mirrors ``torch.nn.functional.celu``: max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    alpha = _scalar(alpha)
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    _floating(input, "elu_cpu")
    static = (("alpha", alpha), ("scale", 1.0), ("input_scale", 1.0 / alpha))
    return _run(CELU, input, inplace, static, CELU_NEG_ if alpha < 0 else CELU_)


def celu_(input, alpha=1.0):
    """Mirrors ``torch.nn.functional.celu_`` (and ``torch.celu_``): celu in place."""
    return celu(input, alpha, inplace=True)


def gelu(input, approximate="none"):
    """Mirrors ``torch.nn.functional.gelu``: x * Phi(x), or its tanh approximation."""
    if not isinstance(approximate, str):
        raise TypeError(f"gelu(): argument 'approximate' must be str, not "
                        f"{type(approximate).__name__}")
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _floating(input, "GeluKernelImpl")
    return call(GELU, input, static=(("approximate", approximate),))


def silu(input, inplace=False):
    """Mirrors ``torch.nn.functional.silu``: x * sigmoid(x)."""
    _floating(input, "silu_cpu", complex_ok=True)
    return _run(SILU, input, inplace)


def mish(input, inplace=False):
    """Mirrors ``torch.nn.functional.mish``: x * tanh(softplus(x))."""
    _floating(input, "mish_cpu")
    return _run(MISH, input, inplace)


def softplus(input, beta=1.0, threshold=20.0):
    """Mirrors ``torch.nn.functional.softplus``: log(1 + exp(beta * x)) / beta, and x itself
    where beta * x > threshold."""
    _floating(input, "softplus_cpu")
    return call(SOFTPLUS, input, static=(("beta", _scalar(beta)),
                                         ("threshold", _scalar(threshold))))


def hardsigmoid(input, inplace=False):
    """Mirrors ``torch.nn.functional.hardsigmoid``: relu6(x + 3) / 6."""
    _floating(input, "hardsigmoid_cpu")
    return _run(HARDSIGMOID, input, inplace)


def hardswish(input, inplace=False):
    """Mirrors ``torch.nn.functional.hardswish``: x * relu6(x + 3) / 6."""
    _floating(input, "hardswish_cpu")
    return _run(HARDSWISH, input, inplace)


def logsigmoid(input):
    """Mirrors ``torch.nn.functional.logsigmoid``: log(sigmoid(x))."""
    _floating(input, "log_sigmoid_cpu")
    return call(LOG_SIGMOID, input)


def sigmoid(input):
    """Mirrors ``torch.nn.functional.sigmoid``."""
    return _pw.sigmoid(input)


def tanh(input):
    """Mirrors ``torch.nn.functional.tanh``."""
    return _pw.tanh(input)


def softsign(input):
    """Mirrors ``torch.nn.functional.softsign``: x / (1 + |x|) (PyTorch's composite)."""
    if input.dtype is D.bool_:
        raise _no_kernel("abs_cpu", input.dtype)
    return _pw.div(input, _pw.add(_pw.abs(input), 1))


def tanhshrink(input):
    """Mirrors ``torch.nn.functional.tanhshrink``: x - tanh(x) (PyTorch's composite)."""
    return _pw.sub(input, _pw.tanh(input))


_DTYPE_MAX = {"float16": "65504", "bfloat16": "3.38953e+38", "float32": "3.40282e+38",
              "float64": "1.79769e+308"}


def softshrink(input, lambd=0.5):
    """Mirrors ``torch.nn.functional.softshrink``: x - lambd * sign(x) outside [-lambd, lambd],
    0 inside."""
    _floating(input, "softshrink_check")
    lambd = _scalar(lambd)
    if lambd < 0:
        dt = input.dtype
        raise RuntimeError(f"lambda must be in range [0, {_DTYPE_MAX[dt._name]}] for input dtype "
                           f"{dt._scalar_name}, but found {lambd:g}")
    return call(SOFTSHRINK, input, static=(("lambd", lambd),))


def hardshrink(input, lambd=0.5):
    """Mirrors ``torch.nn.functional.hardshrink`` (and ``torch.hardshrink``): x outside
    [-lambd, lambd], 0 inside."""
    _floating(input, "hardshrink_cpu")
    return call(HARDSHRINK, input, static=(("lambd", _scalar(lambd)),))


def glu(input, dim=-1):
    """Mirrors ``torch.nn.functional.glu``: a * sigmoid(b), a and b the halves of ``dim``."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    dim = _wrap_dim(dim, input.ndim)
    if input.shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size "
                           f"{input.shape[dim]}")
    _floating(input, "glu_cpu")
    return call(GLU, input, static=(("dim", dim),))


# --- the softmax family -------------------------------------------------------------------------

def _over_dim(fn):
    def f(x, dim):
        if x.ndim == 0:
            return fn(x.reshape(1), axis=0).reshape(())
        return fn(x, axis=dim)
    return f


# (a large one compiles with the fusion emitters: NOTE [ quick compiles ] in _quick.py)
# (a short batch runs a longer one's program: NOTE [ a short call in a longer one's program ])
SOFTMAX = Op("softmax", _over_dim(jax.nn.softmax), "SoftmaxBackward0", saves=("result",),
             fusion=SOFTMAX_FUSION, cold=lambda arrays, static, dt: softmax_in_buckets(
                 SOFTMAX, static, dt, arrays),   # NOTE [ rows in buckets ] in _host.py
             bucket=rows_over_dim)
LOG_SOFTMAX = Op("log_softmax", _over_dim(jax.nn.log_softmax), "LogSoftmaxBackward0",
                 saves=("result",), fusion=SOFTMAX_FUSION,
                 cold=lambda arrays, static, dt: softmax_in_buckets(LOG_SOFTMAX, static, dt,
                                                                    arrays),
                 bucket=rows_over_dim)


def _implicit_dim(name, ndim, stacklevel):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  "include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax_over(op, input, dim, dtype, complex_ok=False):
    """``op`` (SOFTMAX or LOG_SOFTMAX) over ``dim``, ``dtype`` casting the input first, with
    PyTorch's error for the inputs its CPU kernels do not take: integral ones, and complex ones
    unless ``complex_ok`` (torch.special's softmax and log_softmax take them)."""
    dt = D.to_dtype(dtype) if dtype is not None else input.dtype
    if dt.is_complex and not complex_ok:
        raise _no_softmax_kernel(op, input, dim, dt)
    if dtype is not None:
        input = input.to(dtype)
    dim = _wrap_dim(dim, input.ndim)
    dt = input.dtype
    if not (dt.is_floating_point or dt.is_complex):
        raise _no_softmax_kernel(op, input, dim, dt)
    return call(op, input, static=(("dim", dim),))


def _no_softmax_kernel(op, input, dim, dt):
    last = "lastdim_" if _wrap_dim(dim, input.ndim) == max(input.ndim, 1) - 1 else ""
    return _no_kernel(f"{op.name}_{last}kernel_impl", dt)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """Mirrors ``torch.nn.functional.softmax``: exp(x) / sum(exp(x)) over ``dim``; ``dtype``
    casts the input first.  ``dim=None`` picks PyTorch's deprecated implicit dim (and warns)."""
    if dim is None:
        dim = _implicit_dim("softmax", input.ndim, _stacklevel)
    return softmax_over(SOFTMAX, input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """Mirrors ``torch.nn.functional.log_softmax``: x - logsumexp(x) over ``dim``."""
    if dim is None:
        dim = _implicit_dim("log_softmax", input.ndim, _stacklevel)
    return softmax_over(LOG_SOFTMAX, input, dim, dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """Mirrors ``torch.nn.functional.softmin``: softmax(-x) over ``dim``."""
    if dim is None:
        dim = _implicit_dim("softmin", input.ndim, _stacklevel)
    return softmax_over(SOFTMAX, _pw.neg(input), dim, dtype)


def torch_softmax(input, dim, dtype=None):
    """Mirrors ``torch.softmax`` and ``Tensor.softmax`` (``dim`` required, ``dtype`` third)."""
    return softmax_over(SOFTMAX, input, dim, dtype)


def torch_log_softmax(input, dim, dtype=None):
    """Mirrors ``torch.log_softmax`` and ``Tensor.log_softmax``."""
    return softmax_over(LOG_SOFTMAX, input, dim, dtype)


def _gumbel_noise(logits, key):
    # -log(Exponential(1)) ~ Gumbel(0, 1), drawn as PyTorch draws it (its gradient is zero)
    dt = logits.dtype
    wide = jnp.float32 if dt in (jnp.float16, jnp.bfloat16) else dt
    return (-jnp.log(-jnp.log1p(-random_uniform(key, logits.shape, wide)))).astype(dt)


def _straight_through(y_soft, dim):
    """one_hot(argmax(y_soft)) - y_soft: added to y_soft it gives the hard sample whose gradient
    is y_soft's."""
    idx = _x64.argmax(y_soft, dim, keepdims=True)   # NOTE [ lowering in the caller's setting ]
    hard = (jnp.arange(y_soft.shape[dim]).reshape(
        [-1 if d == dim else 1 for d in range(y_soft.ndim)]) == idx).astype(y_soft.dtype)
    return hard - y_soft


GUMBEL_NOISE = Op("gumbel_noise", _gumbel_noise, None)
STRAIGHT_THROUGH = Op("gumbel_hard", _straight_through, None)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """Mirrors ``torch.nn.functional.gumbel_softmax``: softmax((logits + g) / tau) over ``dim``
    with Gumbel(0, 1) noise g from torchlike's default generator; ``hard=True`` returns one-hot
    samples whose gradient is the soft sample's (straight-through).

    Example:
        >>> y = F.gumbel_softmax(torchlike.zeros(2, 3), hard=True)
        >>> y.sum(-1).tolist()
        [1.0, 1.0]
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    if not logits.dtype.is_floating_point:
        raise RuntimeError(f"Exponential distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified "
                           f"{logits.dtype._scalar_name}")
    gumbels = call(GUMBEL_NOISE, logits, _key(None, logits))
    y_soft = softmax_over(SOFTMAX, _pw.div(_pw.add(logits, gumbels), tau), dim, None)
    if not hard:
        return y_soft
    dim = _wrap_dim(dim, y_soft.ndim)
    # y_hard - y_soft.detach() (no grad), then + y_soft: PyTorch's AddBackward0(None, Softmax)
    return _pw.add(call(STRAIGHT_THROUGH, y_soft, static=(("dim", dim),)), y_soft)


# --- wiring -------------------------------------------------------------------------------------

# Also top-level torch names with the same signature (torch.relu, sigmoid and tanh are
# pointwise.py's).
PUBLIC = ("relu_", "selu", "selu_", "celu", "celu_", "threshold", "threshold_", "rrelu_",
          "prelu", "hardshrink")
# torch.<name> whose signature differs from F.<name>: small adapters.
TOP_LEVEL = {"softmax": torch_softmax, "log_softmax": torch_log_softmax, "rrelu": torch_rrelu}
TENSOR_METHODS = {"softmax": torch_softmax, "log_softmax": torch_log_softmax,
                  "hardshrink": hardshrink, "prelu": prelu}
