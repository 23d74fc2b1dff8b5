"""Parity tests for the pointwise family (torchlike/_ops/pointwise.py) and torchlike.special.

Spec tables, one row per op, against real PyTorch (values, dtypes, shapes, grad_fn and
next_functions names, gradients, exceptions) and finite differences (gradcheck in float64).
"""
import math

import numpy as np
import pytest
import torch

import torchlike as tl
from parity import A, L, both, cases, check_op


# ------------------------------------------------------------------------------------------------
# Unary ops: float32 / float64 values, grads and grad_fn vs torch; int64 / bool inputs; gradcheck
# ------------------------------------------------------------------------------------------------

UNARY = [
    # name, fn, domain (the domain keeps values where torch and the finite differences are smooth)
    ("sign", lambda T, x: T.sign(x), "nz"),
    ("sgn", lambda T, x: T.sgn(x) * x, "nz"),   # * x: torch returns a ZeroTensor grad
    ("exp2", lambda T, x: T.exp2(x), "any"),
    ("expm1", lambda T, x: T.expm1(x), "any"),
    ("log2", lambda T, x: T.log2(x), "pos"),
    ("log10", lambda T, x: T.log10(x), "pos"),
    ("log1p", lambda T, x: T.log1p(x), "pos"),
    ("rsqrt", lambda T, x: T.rsqrt(x), "pos"),
    ("square", lambda T, x: T.square(x), "any"),
    ("tan", lambda T, x: T.tan(x), "unit"),
    ("asin", lambda T, x: T.asin(x), "unit"),
    ("acos", lambda T, x: T.acos(x), "unit"),
    ("atan", lambda T, x: T.atan(x), "any"),
    ("sinh", lambda T, x: T.sinh(x), "any"),
    ("cosh", lambda T, x: T.cosh(x), "any"),
    ("asinh", lambda T, x: T.asinh(x), "any"),
    ("acosh", lambda T, x: T.acosh(x + 1), "pos"),
    ("atanh", lambda T, x: T.atanh(x), "unit"),
    ("logit", lambda T, x: T.logit(x / 2.5), "pos"),
    ("logit_eps", lambda T, x: T.logit(x, eps=0.25), "unit"),
    ("erf", lambda T, x: T.erf(x), "any"),
    ("erfc", lambda T, x: T.erfc(x), "any"),
    ("erfinv", lambda T, x: T.erfinv(x), "unit"),
    ("lgamma", lambda T, x: T.lgamma(x), "nz"),
    ("digamma", lambda T, x: T.digamma(x), "pos"),
    ("i0", lambda T, x: T.i0(x), "any"),
    ("sinc", lambda T, x: T.sinc(x), "any"),
    ("floor", lambda T, x: T.floor(x), "any"),
    ("ceil", lambda T, x: T.ceil(x), "any"),
    ("round", lambda T, x: T.round(x), "any"),
    ("round_decimals", lambda T, x: T.round(x * 10, decimals=1), "any"),
    ("round_neg_decimals", lambda T, x: T.round(x * 100, decimals=-1), "any"),
    ("trunc", lambda T, x: T.trunc(x), "any"),
    ("frac", lambda T, x: T.frac(x), "any"),
    ("nan_to_num", lambda T, x: T.nan_to_num(x), "any"),
]
# Finite differences (gradcheck, float64) for the ops whose derivative torchlike writes itself
# (custom_jvp rules, composites); every row's float64 gradients are also compared with torch's.
# NOTE: gradcheck's perturbed inputs are uncommitted jax arrays, so each op compiles again for
# them; checking every plain jnp op this way doubles the file's time.
GRADCHECK = {"lgamma", "digamma", "i0", "logit", "logit_eps", "frac", "sinc", "rsqrt"}


def _gradcheck(fn, inputs, seed):
    """torchlike's gradcheck (float64 finite differences) on the inputs of a check_op row, with
    the same shapes, so the row's compiled forward and backward are reused."""
    rng = np.random.default_rng(seed)
    xs = tuple(a.make(tl, a.values(rng)) for a in inputs)
    assert tl.autograd.gradcheck(lambda *t: fn(tl, *t), xs, check_undefined_grad=False)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,fn,dom", cases(UNARY))
def test_unary(name, fn, dom, dtype):
    inputs = [A((2, 3), dtype, dom)]
    check_op(f"{name}/{dtype}", fn, inputs, rtol=1e-8 if dtype == "float64" else None)
    if dtype == "float64" and name in GRADCHECK:
        _gradcheck(fn, inputs, 0)


# the (op, dtype) cells of test_unary_int_bool that PyTorch has no kernel for
NO_KERNEL = {("floor", "bool"), ("ceil", "bool"), ("round", "bool"), ("trunc", "bool"),
             ("round_decimals", "int64"), ("round_decimals", "bool"),
             ("round_neg_decimals", "int64"), ("round_neg_decimals", "bool"),
             ("frac", "int64"), ("frac", "bool")}


@pytest.mark.parametrize("dtype", ["int64", "bool"])
@pytest.mark.parametrize("name,fn,dom", cases(UNARY))
def test_unary_int_bool(name, fn, dom, dtype):
    # integers compute in float32, rounding keeps them, bool has no rounding kernel in torch
    check_op(f"{name}/{dtype}", fn, [A((2, 3), dtype, "pos" if dom == "pos" else "any")],
             raises=(name, dtype) in NO_KERNEL,
             match=r"^\"\w+\" not implemented for '(Bool|Long)'$")


def test_unary_0d_and_default_float64():
    check_op("exp2_0d", lambda T, x: T.exp2(x), [A(())])
    check_op("lgamma_0d", lambda T, x: x.lgamma(), [A((), "float64", "pos")])

    def go(T):
        old = T.get_default_dtype()
        T.set_default_dtype(T.float64)
        try:
            return T.erf(T.tensor([1, 2])), T.atan2(T.tensor([1]), T.tensor([2]))
        finally:
            T.set_default_dtype(old)
    both(go)


# ------------------------------------------------------------------------------------------------
# Binary / ternary ops with broadcasting
# ------------------------------------------------------------------------------------------------

BINARY = [
    # name, fn, domain of a, domain of b
    ("atan2", lambda T, a, b: T.atan2(a, b), "any", "nz"),
    ("xlogy", lambda T, a, b: T.xlogy(a, b), "any", "pos"),
    ("hypot", lambda T, a, b: T.hypot(a, b), "nz", "nz"),
    ("fmax", lambda T, a, b: T.fmax(a, b), "any", "any"),
    ("fmin", lambda T, a, b: T.fmin(a, b), "any", "any"),
    ("copysign", lambda T, a, b: T.copysign(a, b), "nz", "nz"),
    ("logaddexp", lambda T, a, b: T.logaddexp(a, b), "any", "any"),
    ("lerp", lambda T, a, b: T.lerp(a, b, 0.3), "any", "any"),
    ("lerp_big_weight", lambda T, a, b: T.lerp(a, b, 0.8), "any", "any"),
    ("lerp_tensor", lambda T, a, b: T.lerp(a, b, (a - b).sigmoid()), "any", "any"),
    ("addcmul", lambda T, a, b: T.addcmul(a, a, b, value=0.5), "any", "any"),
    ("addcdiv", lambda T, a, b: T.addcdiv(b, a, b, value=2), "any", "nz"),
]


@pytest.mark.parametrize("dtype,shapes", [("float32", ((2, 3), (3,))),
                                          ("float64", ((2, 1), (1, 3)))], ids=["f32", "f64"])
@pytest.mark.parametrize("name,fn,da,db", cases(BINARY))
def test_binary(name, fn, da, db, dtype, shapes):
    inputs = [A(shapes[0], dtype, da), A(shapes[1], dtype, db)]
    check_op(f"{name}/{dtype}", fn, inputs)
    if dtype == "float64":
        _gradcheck(fn, inputs, 1)


TERNARY = [
    # name, fn, three inputs
    ("lerp_tensor_weight", lambda T, a, b, w: T.lerp(a, b, w), (2, 3), (3,), (2, 1)),
    ("addcmul_bcast", lambda T, a, b, c: T.addcmul(a, b, c), (2, 3), (3,), (2, 1)),
    ("addcdiv_bcast", lambda T, a, b, c: T.addcdiv(a, b, c.abs() + 1, value=-1), (3,), (2, 3),
     (2, 1)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,fn,s1,s2,s3", cases(TERNARY))
def test_ternary(name, fn, s1, s2, s3, dtype):
    inputs = [A(s1, dtype), A(s2, dtype), A(s3, dtype)]
    check_op(f"{name}/{dtype}", fn, inputs)
    if dtype == "float64":
        _gradcheck(fn, inputs, 2)


MIXED = [
    # name, fn, inputs: integer / bool / mixed-dtype operands and Python scalars
    ("atan2_i64", lambda T, a, b: T.atan2(a, b), [A((2, 3), "int64"), A((3,), "int64")]),
    ("atan2_f32_f64", lambda T, a, b: T.atan2(a, b), [A((3,)), A((3,), "float64", grad=False)]),
    ("arctan2", lambda T, a, b: T.arctan2(a, b), [A((2, 3)), A((3,), dom="nz")]),
    ("arcsin_arctanh_fix", lambda T, a: T.arcsin(a) + T.arctanh(a) + T.fix(a * 3),
     [A((2, 3), dom="unit")]),
    ("hypot_f32_f64", lambda T, a, b: T.hypot(a, b), [A((3,)), A((3,), "float64")]),
    ("hypot_i64_f32", lambda T, a, b: T.hypot(a, b), [A((3,), "int64"), A((3,))]),
    ("logaddexp_f32_f64", lambda T, a, b: T.logaddexp(a, b), [A((3,)), A((3,), "float64")]),
    ("fmax_i64", lambda T, a, b: T.fmax(a, b), [A((2, 3), "int64"), A((3,), "int64")]),
    ("fmin_bool", lambda T, a, b: T.fmin(a, b), [A((4,), "bool"), A((4,), "bool")]),
    ("fmax_i64_f32", lambda T, a, b: T.fmax(a, b), [A((3,), "int64"), A((3,))]),
    ("copysign_i64", lambda T, a, b: T.copysign(a, b), [A((2, 3), "int64"), A((3,), "int64")]),
    ("copysign_scalar", lambda T, a: T.copysign(a, -2.0), [A((2, 3))]),
    ("copysign_scalar_int", lambda T, a: a.copysign(-1), [A((2, 3), "int64")]),
    ("xlogy_i64", lambda T, a, b: T.xlogy(a, b), [A((3,), "int64"), A((3,), "int64", "pos")]),
    ("xlogy_scalar_self", lambda T, b: T.xlogy(2.0, b), [A((2, 3), "float32", "pos")]),
    ("xlogy_scalar_other", lambda T, a: T.xlogy(a, 3), [A((2, 3))]),
    ("xlogy_int_scalar", lambda T, a: T.xlogy(a, 2.5), [A((3,), "int64")]),
    ("heaviside_i64", lambda T, a, b: T.heaviside(a, b), [A((6,), "int64"), A((6,), "int64")]),
    ("heaviside_f32", lambda T, a, b: T.heaviside(T.round(a), b),
     [A((6,), grad=False), A((6,), grad=False)]),
    ("addcmul_i64", lambda T, a, b: T.addcmul(a, b, b, value=2), [A((3,), "int64"),
                                                                   A((3,), "int64")]),
    ("addcmul_i64_frac_value", lambda T, a, b: T.addcmul(a, b, b, value=0.5),
     [A((3,), "int64"), A((3,), "int64")]),
    ("addcmul_f32_i64", lambda T, a, b: T.addcmul(a, b, b, value=2), [A((3,)), A((3,), "int64")]),
    ("addcdiv_f32_i64", lambda T, a, b: T.addcdiv(b, a, b),
     [A((3,), grad=False), A((3,), "int64", "nz")]),
    ("lerp_weight_int", lambda T, a, b: T.lerp(a, b, 1), [A((3,)), A((3,))]),
    ("lerp_weight_0d_f64", lambda T, a, b: T.lerp(a, b, T.tensor(0.25, dtype=T.float64)),
     [A((3,)), A((3,))]),
    ("nan_to_num_i64", lambda T, a: T.nan_to_num(a), [A((3,), "int64")]),
    ("nan_to_num_bool", lambda T, a: T.nan_to_num(a), [A((3,), "bool")]),
]


@pytest.mark.parametrize("name,fn,inputs", cases(MIXED))
def test_mixed_dtypes(name, fn, inputs):
    check_op(name, fn, inputs)


# ------------------------------------------------------------------------------------------------
# Gradients (and values) at special points, where jax's own rules differ from PyTorch's
# ------------------------------------------------------------------------------------------------

INF, NAN = math.inf, math.nan
EDGE = [
    # name, fn, inputs (lists: float64 leaves)
    ("floor_ceil_round_trunc", lambda T, x: T.floor(x) + T.ceil(x) + T.round(x) + T.trunc(x),
     [[-1.5, -0.5, 0.0, 0.5, 2.5]]),
    ("round_half_even", lambda T, x: T.round(x), [[0.5, 1.5, 2.5, -0.5, -2.5]]),
    ("round_decimals_2", lambda T, x: T.round(x, decimals=2), [[1.2345, 125.0, 0.125, -0.135]]),
    ("frac_grad_is_one", lambda T, x: T.frac(x), [[-1.5, -0.5, 0.0, 0.5, 2.0]]),
    ("sign_at_0", lambda T, x: T.sign(x) * x, [[-1.0, 0.0, 2.0]]),
    ("xlogy_x0", lambda T, x, y: T.xlogy(x, y), [[0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0],
                                                [0.0, 1.0, -1.0, 0.0, -1.0, NAN, 2.0]]),
    ("xlogy_scalar_other_0", lambda T, x: T.xlogy(x, 0.0), [[0.0, 1.0]]),
    ("hypot_at_0", lambda T, x, y: T.hypot(x, y), [[0.0, 3.0], [0.0, 4.0]]),
    ("atan2_at_0", lambda T, x, y: T.atan2(x, y), [[0.0, 3.0, -1.0], [0.0, 4.0, 0.0]]),
    ("logit_out_of_range", lambda T, x: T.logit(x), [[-0.5, 0.0, 0.3, 1.0, 1.5]]),
    ("logit_negative_eps", lambda T, x: T.logit(x, eps=-1.0), [[-0.5, 0.3, 1.5]]),
    ("logit_eps_bounds", lambda T, x: T.logit(x, eps=0.2),
     [[-0.5, 0.0, 0.2, 0.3, 0.8, 1.0, 1.5]]),
    ("lgamma_poles", lambda T, x: T.lgamma(x), [[0.0, -1.0, -0.5, 2.0]]),
    ("digamma_at_0", lambda T, x: T.digamma(x), [[0.0, -0.0, -2.5, 2.0]]),
    ("erfinv_ends", lambda T, x: T.erfinv(x), [[-1.0, 0.0, 1.0, 2.0]]),
    ("acosh_at_1", lambda T, x: T.acosh(x), [[1.0, 0.5, 2.0]]),
    ("atanh_ends", lambda T, x: T.atanh(x), [[1.0, -1.0, 0.5, 2.0]]),
    ("rsqrt_at_0", lambda T, x: T.rsqrt(x), [[0.0, -1.0, 4.0]]),
    ("log1p_at_-1", lambda T, x: T.log1p(x), [[-1.0, -2.0, 1.0]]),
    ("i0_at_0", lambda T, x: T.i0(x), [[0.0, -1.0, 4.0]]),
    ("sinc_at_0", lambda T, x: T.sinc(x), [[0.0, -1.0, 0.5]]),
    ("copysign_zeros", lambda T, x, y: T.copysign(x, y), [[0.0, -0.0, 2.0, -2.0],
                                                         [-1.0, 1.0, -0.0, 3.0]]),
    ("fmax_ties_nan", lambda T, x, y: T.fmax(x, y), [[0.0, 1.0, NAN, 2.0, NAN],
                                                    [0.0, NAN, 1.0, 3.0, NAN]]),
    ("fmin_ties_nan", lambda T, x, y: T.fmin(x, y), [[0.0, 1.0, NAN, 2.0, NAN],
                                                    [0.0, NAN, 1.0, 3.0, NAN]]),
    ("logaddexp_infs", lambda T, x, y: T.logaddexp(x, y), [[0.0, INF, -INF, 1000.0],
                                                          [0.0, INF, -INF, 0.0]]),
    ("nan_to_num_default", lambda T, x: T.nan_to_num(x), [[NAN, INF, -INF, 1.0]]),
    ("nan_to_num_values", lambda T, x: T.nan_to_num(x, nan=2.0, posinf=1e3, neginf=-7),
     [[NAN, INF, -INF, 1.0]]),
    ("nan_to_num_f32", lambda T, x: T.nan_to_num(x.float(), posinf=5.0), [[NAN, INF, -INF]]),
    ("lerp_ends", lambda T, a, b: T.lerp(a, b, 1.0) + T.lerp(a, b, 0.0),
     [[0.1, 1e10], [0.3, -3.0]]),
    ("square_at_0", lambda T, x: T.square(x), [[0.0, -1.0]]),
    ("entr_edges", lambda T, x: T.special.entr(x), [[-1.0, 0.0, 0.5]]),
    ("xlog1py_x0", lambda T, x, y: T.special.xlog1py(x, y), [[0.0, 0.0, 2.0, 1.0, 0.0],
                                                             [-1.0, 1.0, 0.5, -1.0, -2.0]]),
    ("ndtr_tails", lambda T, x: T.special.ndtr(x), [[0.0, -40.0, 1.0, 40.0]]),
]


@pytest.mark.parametrize("name,fn,inputs", cases(EDGE))
def test_edges(name, fn, inputs):
    # rtol: torch's float64 trigamma (digamma's derivative) is accurate to ~1e-9
    check_op(name, fn, [L(v, "float64") for v in inputs], upstream=False, rtol=1e-8)


# ------------------------------------------------------------------------------------------------
# Bool-valued ops: classification, closeness, logic, shifts
# ------------------------------------------------------------------------------------------------

SPECIALS = [1.0, -0.0, NAN, INF, -INF, 1.0 + 1e-6, 2.0]
BOOL_OPS = [
    # name, fn(T): each builds its own inputs
    ("isnan", lambda T: T.isnan(T.tensor(SPECIALS))),
    ("isinf", lambda T: T.isinf(T.tensor(SPECIALS))),
    ("isfinite", lambda T: T.isfinite(T.tensor(SPECIALS, requires_grad=True))),
    ("isposinf", lambda T: T.isposinf(T.tensor(SPECIALS))),
    ("isneginf", lambda T: T.tensor(SPECIALS).isneginf()),
    ("signbit", lambda T: T.signbit(T.tensor(SPECIALS))),
    ("isnan_int", lambda T: T.isnan(T.tensor([1, 2]))),
    ("isfinite_bool", lambda T: T.isfinite(T.tensor([True]))),
    ("isnan_method", lambda T: T.tensor(SPECIALS).isnan()),
    ("isclose", lambda T: T.isclose(T.tensor(SPECIALS), T.tensor([1.0] * 7))),
    ("isclose_bcast", lambda T: T.isclose(T.tensor(SPECIALS), T.tensor(1.0))),
    ("isclose_tols", lambda T: T.isclose(T.tensor(SPECIALS), T.tensor([1.1] * 7), rtol=0.1,
                                         atol=0.01)),
    ("isclose_zero_tols", lambda T: T.isclose(T.tensor(SPECIALS), T.tensor(SPECIALS), 0, 0)),
    ("isclose_equal_nan", lambda T: T.tensor(SPECIALS).isclose(T.tensor(SPECIALS),
                                                               equal_nan=True)),
    ("isclose_int", lambda T: T.isclose(T.tensor([1, 5, 100000]), T.tensor([1, 6, 100001]))),
    ("isclose_int_atol", lambda T: T.isclose(T.tensor([1, 5]), T.tensor([2, 7]), atol=1)),
    ("isclose_bool", lambda T: T.isclose(T.tensor([True, False]), T.tensor([True, True]))),
    ("allclose_true", lambda T: T.allclose(T.tensor([1.0, 2.0]), T.tensor([1.0, 2.0 + 1e-6]))),
    ("allclose_false", lambda T: T.tensor([1.0, 2.0]).allclose(T.tensor([1.0, 2.1]))),
    ("allclose_nan", lambda T: T.allclose(T.tensor([NAN]), T.tensor([NAN]), equal_nan=True)),
    ("allclose_bcast", lambda T: T.allclose(T.ones(2), T.ones(3, 2))),
    ("equal", lambda T: T.equal(T.tensor([1.0, 2.0]), T.tensor([1.0, 2.0]))),
    ("equal_values", lambda T: T.equal(T.tensor([1.0, 2.0]), T.tensor([1.0, 3.0]))),
    ("equal_shape", lambda T: T.equal(T.ones(2), T.ones(3, 2))),
    ("equal_dtypes", lambda T: (T.equal(T.ones(2), T.ones(2, dtype=T.float64)),
                                T.ones(2).equal(T.ones(2, dtype=T.int64)))),
    ("equal_nan", lambda T: T.equal(T.tensor([NAN]), T.tensor([NAN]))),
    ("logical_and", lambda T: T.logical_and(T.tensor([0.0, 1.0, 2.0, 0.0]),
                                            T.tensor([0, 0, 3, 1]))),
    ("logical_or", lambda T: T.logical_or(T.tensor([0.0, 1.0, NAN, 0.0]),
                                          T.tensor([False, False, False, True]))),
    ("logical_xor_bcast", lambda T: T.logical_xor(T.tensor([[0], [1]]), T.tensor([0.0, 1.0]))),
    ("logical_not", lambda T: T.logical_not(T.tensor([0.0, 1.5, -0.0]))),
    ("logical_not_int", lambda T: T.tensor([0, 3]).logical_not()),
    ("logical_and_method", lambda T: T.tensor([1, 0]).logical_and(T.tensor([1, 1]))),
    ("logical_and_out_float", lambda T: T.logical_and(T.tensor([1, 0]), T.tensor([1, 1]),
                                                      out=T.zeros(2))),
    ("logical_or_inplace", lambda T: (lambda x: (x.logical_or_(T.tensor([1.0, 0.0])), x))(
        T.tensor([0.0, 0.0]))),
    ("lshift", lambda T: T.bitwise_left_shift(T.tensor([-3, 0, 4]), 1)),
    ("lshift_tensor", lambda T: T.bitwise_left_shift(T.tensor([-3, 0, 4]),
                                                     T.tensor([1, 2, 70]))),
    ("lshift_scalar_self", lambda T: T.bitwise_left_shift(1, T.tensor([3, 0, 4]))),
    ("rshift", lambda T: T.bitwise_right_shift(T.tensor([-3, 0, 4]), T.tensor([1, 1, 70]))),
    ("rshift_i32", lambda T: T.tensor([-8, 8], dtype=T.int32).bitwise_right_shift(2)),
    ("rshift_inplace", lambda T: (lambda x: (x.bitwise_right_shift_(1), x))(T.tensor([8, 3]))),
    ("shift_ops", lambda T: (T.tensor([3]) << 2, T.tensor([-12]) >> 2)),
]


@pytest.mark.parametrize("name,fn", cases(BOOL_OPS))
def test_bool_ops(name, fn):
    both(fn)


# ------------------------------------------------------------------------------------------------
# Methods, in-place methods and out=
# ------------------------------------------------------------------------------------------------

def _ip(method, args=lambda T: (), **kwargs):
    """y.method_(*args(T), **kwargs) on a non-leaf copy y of x; returns (result is y, y)."""
    def f(T, x):
        y = x * 1
        r = getattr(y, method + "_")(*args(T), **kwargs)
        return r is y, y
    return f


FORMS = [
    # name, fn, domain: method spellings and in-place variants (float32 [2, 3])
    ("exp2_method", lambda T, x: x.exp2(), "any"),
    ("atan2_method", lambda T, x: x.atan2(x + 3), "any"),
    ("hypot_method", lambda T, x: x.hypot(x * 2), "nz"),
    ("round_method_decimals", lambda T, x: (x * 10).round(decimals=1), "any"),
    ("lerp_method", lambda T, x: x.lerp(x * 2, 0.5), "any"),
    ("addcmul_method", lambda T, x: x.addcmul(x, x, value=3), "any"),
    ("fmax_method", lambda T, x: x.fmax(-x), "any"),
    ("logaddexp_method", lambda T, x: x.logaddexp(x * 2), "any"),
    ("logit_method", lambda T, x: (x / 2.5).logit(0.3), "pos"),
    ("xlogy_method", lambda T, x: x.xlogy(x), "pos"),
    ("nan_to_num_method", lambda T, x: (x / 0).nan_to_num(posinf=3.0), "nz"),
    ("square_method", lambda T, x: x.square(), "any"),
    ("sign_", _ip("sign"), "nz"),
    ("sgn_", lambda T, x: (lambda y: (y.sgn_() is y, y * x))(x * 1), "nz"),
    ("rsqrt_", _ip("rsqrt"), "pos"),
    ("square_", _ip("square"), "any"),
    ("arccos_", _ip("arccos"), "unit"),
    ("atan2_", _ip("atan2", lambda T: (T.ones(1),)), "any"),
    ("logit_", _ip("logit", lambda T: (0.1,)), "unit"),
    ("lgamma_", _ip("lgamma"), "pos"),
    ("floor_", _ip("floor"), "any"),
    ("round_", _ip("round", decimals=1), "any"),
    ("frac_", _ip("frac"), "any"),
    ("lerp_", _ip("lerp", lambda T: (T.zeros(3), 0.25)), "any"),
    ("addcdiv_", _ip("addcdiv", lambda T: (T.ones(3), T.full((3,), 2.0)), value=0.5), "any"),
    ("nan_to_num_", _ip("nan_to_num"), "any"),
    ("copysign_", _ip("copysign", lambda T: (-1.0,)), "nz"),
    ("xlogy_", _ip("xlogy", lambda T: (2.0,)), "any"),
    ("hypot_", _ip("hypot", lambda T: (T.ones(3),)), "any"),
]


@pytest.mark.parametrize("name,fn,dom", cases(FORMS))
def test_methods_and_inplace(name, fn, dom):
    a = A((2, 3), "float32", dom)
    vals = a.values(np.random.default_rng(len(name)))
    both(lambda T: _grads_of(T, fn, a.make(T, vals)))


def _grads_of(T, g, x):
    out = g(T, x)
    y = out[1] if isinstance(out, tuple) else out
    y.sum().backward()
    return out, x.grad


OUT = [
    # name, fn: out= and in-place dtype rules; the error's message (None: a value row)
    ("erf_out", lambda T: (lambda o: (T.erf(T.tensor([0.5, 1.0]), out=o), o))(T.empty(2)), None),
    ("atan2_out", lambda T: (lambda o: (T.atan2(T.ones(2), T.ones(2), out=o), o))(T.empty(0)),
     None),
    ("floor_out_int", lambda T: (lambda o: (T.floor(T.tensor([1, 2]), out=o), o))(
        T.empty(2, dtype=T.int64)), None),
    ("round_decimals_out", lambda T: (lambda o: (T.round(T.tensor([1.26]), decimals=1, out=o),
                                                 o))(T.empty(1)), None),
    ("exp2_out_grad", lambda T: T.exp2(T.ones(2, requires_grad=True), out=T.empty(2)),
     r"^exp2\(\): functions with out=\.\.\. arguments don't support automatic differentiation"),
    ("int_inplace_float_result", lambda T: T.tensor([1, 2]).exp2_(),
     r"^result type Float can't be cast to the desired output type Long$"),
    ("int_floor_inplace", lambda T: (lambda x: (x.floor_(), x))(T.tensor([1, 2])), None),
    ("leaf_inplace", lambda T: T.ones(2, requires_grad=True).tan_(),
     r"^a leaf Variable that requires grad is being used in an in-place operation\.$"),
    ("inplace_version_check", lambda T: _saved_then_modified(T),
     r"^one of the variables needed for gradient computation has been modified by an inplace "
     r"operation: \[torch\.FloatTensor \[2\]\], which is output 0 of Rsqrt"),
    ("sgn_complex", lambda T: T.sgn(T.tensor([3 + 4j, 0j, -2j])), None),
    ("sign_uint8", lambda T: T.sign(T.tensor([0, 3], dtype=T.uint8)), None),
    ("exp2_float16", lambda T: T.exp2(T.tensor([1.0, -2.5], dtype=T.float16)), None),
]


def _saved_then_modified(T):
    x = T.ones(2, requires_grad=True)
    y = x * 2
    z = y.rsqrt()   # saves its result
    z.add_(1)
    z.sum().backward()


@pytest.mark.parametrize("name,fn,match", cases(OUT))
def test_out_and_inplace_rules(name, fn, match):
    both(fn, match=match, raises=match is not None)


# ------------------------------------------------------------------------------------------------
# Errors: PyTorch's exception types and messages
# ------------------------------------------------------------------------------------------------

ERRORS = [
    # name, fn, message regex
    ("sign_complex", lambda T: T.sign(T.tensor([1 + 1j])), "torch.sgn instead"),
    ("floor_bool", lambda T: T.floor(T.tensor([True])), "\"floor_vml_cpu\" not implemented for "
     "'Bool'"),
    ("round_bool", lambda T: T.round(T.tensor([True])), "round_vml_cpu"),
    ("round_decimals_int", lambda T: T.round(T.tensor([1]), decimals=1),
     "\"round_cpu\" not implemented for 'Long'"),
    ("round_decimals_0_int", lambda T: T.special.round(T.tensor([1])),
     "\"round_vml_cpu\" not implemented for 'Long'"),
    ("frac_int", lambda T: T.frac(T.tensor([1])), "\"frac_cpu\" not implemented for 'Long'"),
    ("hypot_int", lambda T: T.hypot(T.tensor([1]), T.tensor([2])), "hypot_cpu"),
    ("logaddexp_int", lambda T: T.logaddexp(T.tensor([1]), T.tensor([2])), "logaddexp_cpu"),
    ("fmax_scalar", lambda T: T.fmax(T.ones(2), 0.5),
     r"fmax\(\): argument 'other' \(position 2\) must be Tensor, not float"),
    ("atan2_scalar_self", lambda T: T.atan2(0.5, T.ones(2)),
     r"atan2\(\): argument 'input' \(position 1\) must be Tensor, not float"),
    ("hypot_scalar", lambda T: T.hypot(T.ones(2), 2), "must be Tensor"),
    ("heaviside_scalar", lambda T: T.heaviside(T.ones(2), 0.5),
     r"argument 'values' \(position 2\) must be Tensor"),
    ("heaviside_dtypes", lambda T: T.heaviside(T.ones(2), T.ones(2, dtype=T.float64)),
     "heaviside is not yet implemented for tensors with different dtypes."),
    ("heaviside_backward", lambda T: T.heaviside(T.ones(2, requires_grad=True),
                                                 T.ones(2)).sum().backward(),
     "derivative for aten::heaviside is not implemented"),
    ("lerp_end_dtype", lambda T: T.lerp(T.ones(2), T.zeros(2, dtype=T.float64), 0.5),
     "expected dtype float for `end` but got dtype double"),
    ("lerp_weight_dtype", lambda T: T.lerp(T.ones(2), T.ones(2), T.ones(2, dtype=T.float64)),
     "expected dtype float for `weight` but got dtype double"),
    ("lerp_int", lambda T: T.lerp(T.tensor([1]), T.tensor([2]), 0.5),
     "\"lerp_kernel_scalar\" not implemented for 'Long'"),
    ("lerp_int_weight", lambda T: T.lerp(T.tensor([1]), T.tensor([2]), T.tensor([1])),
     "lerp_kernel_tensor"),
    ("addcdiv_int", lambda T: T.addcdiv(T.tensor([1]), T.tensor([1]), T.tensor([2])),
     r"Integer division with addcdiv is no longer supported"),
    ("isclose_dtypes", lambda T: T.isclose(T.ones(2), T.ones(2, dtype=T.float64)),
     "Float did not match Double"),
    ("allclose_dtypes", lambda T: T.allclose(T.tensor([1]), T.ones(1)),
     "Long did not match Float"),
    ("isclose_rtol", lambda T: T.isclose(T.ones(2), T.ones(2), rtol=-1),
     "rtol must be greater than or equal to zero, but got -1"),
    ("isclose_atol", lambda T: T.isclose(T.ones(2), T.ones(2), atol=-0.5),
     "atol must be greater than or equal to zero, but got -0.5"),
    ("isclose_scalar", lambda T: T.isclose(T.ones(2), 1.0), "must be Tensor"),
    ("allclose_shapes", lambda T: T.allclose(T.ones(2), T.ones(3)),
     r"The size of tensor a \(2\) must match the size of tensor b \(3\)"),
    ("equal_scalar", lambda T: T.equal(T.ones(2), 1), "must be Tensor"),
    ("logical_xor_scalar", lambda T: T.logical_xor(T.ones(2), 1),
     r"logical_xor\(\): argument 'other' \(position 2\) must be Tensor, not int"),
    ("lshift_float", lambda T: T.bitwise_left_shift(T.ones(2), 1),
     "\"lshift_cpu\" not implemented for 'Float'"),
    ("rshift_float", lambda T: T.bitwise_right_shift(T.tensor([1]), T.ones(1)), "rshift_cpu"),
    ("softmax_int", lambda T: T.special.softmax(T.tensor([1, 2]), 0),
     "\"softmax_lastdim_kernel_impl\" not implemented for 'Long'"),
    ("log_softmax_int_dim0", lambda T: T.special.log_softmax(T.ones(2, 2, dtype=T.long), 0),
     "\"log_softmax_kernel_impl\" not implemented for 'Long'"),
    ("softmax_bad_dim", lambda T: T.special.softmax(T.ones(2), 1),
     r"Dimension out of range \(expected to be in range of \[-1, 0\], but got 1\)"),
    ("broadcast", lambda T: T.atan2(T.ones(2), T.ones(3)),
     r"The size of tensor a \(2\) must match the size of tensor b \(3\)"),
    ("inplace_float_into_int", lambda T: T.tensor([1, 2]).sinh_(),
     "result type Float can't be cast to the desired output type Long"),
]


@pytest.mark.parametrize("name,fn,match", cases(ERRORS))
def test_errors(name, fn, match):
    both(fn, match=match, raises=True)


# ------------------------------------------------------------------------------------------------
# torchlike.special
# ------------------------------------------------------------------------------------------------

SPECIAL = [
    # name, fn, input
    ("expit", lambda T, x: T.special.expit(x), A((2, 3))),
    ("expit_f64", lambda T, x: T.special.expit(x), A((2, 3), "float64")),
    ("logit_eps", lambda T, x: T.special.logit(x, eps=1e-2), A((2, 3), dom="unit")),
    ("xlogy_scalar", lambda T, x: T.special.xlogy(x, 2.0), A((2, 3))),
    ("xlog1py", lambda T, x: T.special.xlog1py(x, x.abs()), A((2, 3), "float64")),
    ("i0e", lambda T, x: T.special.i0e(x), A((2, 3), "float64")),
    ("i1", lambda T, x: T.special.i1(x), A((2, 3), "float64")),
    ("i1e", lambda T, x: T.special.i1e(x), A((2, 3), "float64")),
    ("entr", lambda T, x: T.special.entr(x), A((2, 3))),
    ("entr_f64", lambda T, x: T.special.entr(x), A((2, 3), "float64", dom="pos")),
    ("ndtr", lambda T, x: T.special.ndtr(x), A((2, 3))),
    ("ndtr_f64", lambda T, x: T.special.ndtr(x), A((2, 3), "float64")),
    ("ndtri", lambda T, x: T.special.ndtri(x.sigmoid()), A((2, 3), "float64")),
    ("log_ndtr", lambda T, x: T.special.log_ndtr(x * 5), A((2, 3), "float64")),
    ("round", lambda T, x: T.special.round(x * 3), A((2, 3))),
    ("round_decimals", lambda T, x: T.special.round(x, decimals=2), A((2, 3))),
    ("softmax", lambda T, x: T.special.softmax(x, 1), A((2, 3))),
    ("softmax_dim0_f64", lambda T, x: T.special.softmax(x, dim=0), A((2, 3), "float64")),
    ("softmax_dtype", lambda T, x: T.special.softmax(x, -1, dtype=T.float64), A((2, 3))),
    ("softmax_0d", lambda T, x: T.special.softmax(x, 0), A(())),
    ("log_softmax", lambda T, x: T.special.log_softmax(x, 1), A((2, 3))),
    ("log_softmax_neg_dim", lambda T, x: T.special.log_softmax(x, -2), A((2, 3), "float64")),
    ("log_softmax_dtype", lambda T, x: T.special.log_softmax(x, 0, dtype=T.float64), A((2, 3))),
    ("softmax_int_dtype", lambda T, x: T.special.softmax(x, 0, dtype=T.float32),
     A((3,), "int64")),
    ("ndtr_int", lambda T, x: T.special.ndtr(x), A((3,), "int64")),
    ("entr_int", lambda T, x: T.special.entr(x), A((3,), "int64")),
]


@pytest.mark.parametrize("name,fn,x", cases(SPECIAL))
def test_special(name, fn, x):
    check_op(name, fn, [x], rtol=1e-8 if x.dtype == "float64" else None)
    if name in ("xlog1py", "ndtr_f64", "softmax_dim0_f64", "log_softmax_neg_dim", "entr_f64"):
        _gradcheck(fn, [x], 3)


def test_lgamma_digamma_double_backward():
    # custom derivatives stay differentiable: grad of grad vs torch
    def go(T):
        x = T.tensor([0.5, 1.5, 3.0], dtype=T.float64, requires_grad=True)
        g, = T.autograd.grad(T.lgamma(x).sum(), x, create_graph=True)
        gg, = T.autograd.grad(g.sum(), x)
        return g.detach(), gg
    both(go, rtol=1e-8)


# ------------------------------------------------------------------------------------------------
# where(condition): the one-argument form
# ------------------------------------------------------------------------------------------------

WHERE1 = [
    ("where_1d", lambda T: T.where(T.tensor([0.0, 1.5, 0.0, -2.0]) != 0)),
    ("where_2d", lambda T: T.where(T.tensor([[True, False], [False, True]]))),
    ("where_int", lambda T: T.where(T.tensor([[0, 3, 0], [1, 0, 2]]))),
    ("where_none", lambda T: T.where(T.zeros(3) > 1)),
]


@pytest.mark.parametrize("name,fn", cases(WHERE1))
def test_where_one_argument(name, fn):
    both(fn)


def test_public_names_and_methods():
    from torchlike._ops import pointwise
    for name in pointwise.PUBLIC:
        assert getattr(tl, name) is getattr(pointwise, name), name
        assert hasattr(torch, name), name
    for name in pointwise.TENSOR_METHODS:
        assert hasattr(torch.Tensor, name), name
        assert hasattr(tl.Tensor, name), name
    aliases = {"erf": tl.erf, "erfc": tl.erfc, "erfinv": tl.erfinv, "gammaln": tl.lgamma,
               "digamma": tl.digamma, "psi": tl.digamma, "i0": tl.i0, "exp2": tl.exp2,
               "expm1": tl.expm1, "log1p": tl.log1p, "sinc": tl.sinc, "xlogy": tl.xlogy,
               "logit": tl.logit}
    for name, fn in aliases.items():
        assert getattr(tl.special, name) is fn, name
    assert tl.arctan2 is not tl.atan2 and tl.arcsin is tl.asin and tl.fix is tl.trunc
    for name in ("expit", "logit", "erf", "erfc", "erfinv", "xlogy", "log_softmax", "softmax",
                 "gammaln", "i0", "entr", "ndtr", "exp2", "expm1", "log1p", "sinc", "round",
                 "digamma", "psi", "i0e", "i1", "i1e", "ndtri", "log_ndtr", "xlog1py"):
        assert hasattr(torch.special, name) and hasattr(tl.special, name), name


# ------------------------------------------------------------------------------------------------
# Tracing: the same eager code runs on jax tracers (one jit of a program using the family)
# ------------------------------------------------------------------------------------------------

def _traced_program(x, y):
    p = x.sigmoid()
    h = tl.logit(p, eps=0.1) + tl.xlogy(p, y) + tl.hypot(x, y) + tl.atan2(x, y).lgamma()
    h = h + tl.lerp(x, y, 0.3) + tl.lerp(x, y, p) + tl.addcdiv(x, x, y, value=2)
    h = h + tl.fmax(x, y) * tl.copysign(y, x) + tl.logaddexp(x, y) + tl.round(x, decimals=1)
    h = h + tl.nan_to_num(x.log()) + tl.frac(x) + tl.i0(x) + tl.special.ndtr(x).digamma()
    h = h + tl.special.log_softmax(x, 0) + tl.where(tl.isclose(x, y) | tl.isnan(x), x, y)
    h = h + tl.logical_xor(x > 0, y > 1).double() + tl.square(x).erf().sign()
    z = y * 1
    z.add_(1).atan_()
    return h.sum() + z.sum()


def test_traced_program_matches_eager_and_backward():
    from torchlike.testing import to_jax_function
    import jax
    rng = np.random.default_rng(5)
    xv, yv = rng.uniform(0.1, 2, (2, 3)), rng.uniform(0.5, 2, (2, 3))
    eager = _traced_program(tl.tensor(xv), tl.tensor(yv))
    with jax.enable_x64(True):   # its JAX code reads 64-bit data
        traced = jax.jit(to_jax_function(_traced_program))(tl.tensor(xv)._value(),
                                                           tl.tensor(yv)._value())
    np.testing.assert_allclose(np.asarray(traced), eager.numpy(), rtol=1e-12)

    def grad_of_x(x_arr, y_arr):
        x = tl.Tensor._wrap(x_arr).requires_grad_(True)
        _traced_program(x, tl.Tensor._wrap(y_arr)).backward()
        return x.grad._value()
    leaf = tl.tensor(xv, requires_grad=True)
    _traced_program(leaf, tl.tensor(yv)).backward()
    with jax.enable_x64(True):
        got = jax.jit(grad_of_x)(tl.tensor(xv)._value(), tl.tensor(yv)._value())
    np.testing.assert_allclose(np.asarray(got), leaf.grad.numpy(), rtol=1e-10)
