"""Parity tests: torchlike ops against real PyTorch (CPU), through the harness of parity.py.

Cases are spec tables: one row per case (STYLE.md §9).
"""
import math
import operator

import numpy as np
import pytest
import torch

import torchlike as tl
from parity import A, L, both, cases, check_op, gname, seed_of

# ------------------------------------------------------------------------------------------------
# Unary pointwise ops: value, dtype, grad_fn, grads; float32 and float64; 2-D and 0-dim
# ------------------------------------------------------------------------------------------------

UNARY = [
    # name, fn, domain: swept over float32/float64 and 2-D/0-dim
    ("neg", lambda T, x: T.neg(x), "any"),
    ("abs", lambda T, x: T.abs(x), "nz"),
    ("exp", lambda T, x: T.exp(x), "any"),
    ("log", lambda T, x: T.log(x), "pos"),
    ("sqrt", lambda T, x: T.sqrt(x), "pos"),
    ("sin", lambda T, x: T.sin(x), "any"),
    ("cos", lambda T, x: T.cos(x), "any"),
    ("tanh", lambda T, x: T.tanh(x), "any"),
    ("sigmoid", lambda T, x: T.sigmoid(x), "any"),
    ("relu", lambda T, x: T.relu(x), "nz"),
    ("reciprocal", lambda T, x: T.reciprocal(x), "nz"),
]


@pytest.mark.parametrize("shape", [(2, 3), ()], ids=["2x3", "0d"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,fn,dom", cases(UNARY))
def test_unary(name, fn, dom, dtype, shape):
    check_op(f"{name}/{dtype}/{shape}", fn, [A(shape, dtype, dom)])


UNARY_FORMS = [
    # name, fn, domain: operator and method spellings (float32 [2, 3])
    ("neg_op", lambda T, x: -x, "any"),
    ("neg_method", lambda T, x: x.neg(), "any"),
    ("negative", lambda T, x: T.negative(x), "any"),
    ("pos_op", lambda T, x: +x, "any"),
    ("abs_op", lambda T, x: abs(x), "nz"),
    ("abs_method", lambda T, x: x.abs(), "nz"),
    ("absolute", lambda T, x: T.absolute(x), "nz"),
    ("exp_method", lambda T, x: x.exp(), "any"),
    ("log_method", lambda T, x: x.log(), "pos"),
    ("sqrt_method", lambda T, x: x.sqrt(), "pos"),
    ("sin_method", lambda T, x: x.sin(), "any"),
    ("cos_method", lambda T, x: x.cos(), "any"),
    ("tanh_method", lambda T, x: x.tanh(), "any"),
    ("sigmoid_method", lambda T, x: x.sigmoid(), "any"),
    ("relu_method", lambda T, x: x.relu(), "nz"),
]


@pytest.mark.parametrize("name,fn,dom", cases(UNARY_FORMS))
def test_unary_forms(name, fn, dom):
    check_op(name, fn, [A((2, 3), "float32", dom)])


UNARY_INT = [
    # name, fn, dtype: integer/bool inputs (no grad); value and result dtype
    ("neg_int64", lambda T, x: -x, "int64"),
    ("abs_int32", lambda T, x: T.abs(x), "int32"),
    ("exp_int64", lambda T, x: T.exp(x), "int64"),
    ("sqrt_int32", lambda T, x: T.sqrt(x.abs()), "int32"),
    ("sin_bool", lambda T, x: T.sin(x), "bool"),
    ("sigmoid_int64", lambda T, x: T.sigmoid(x), "int64"),
    ("relu_int64", lambda T, x: T.relu(x), "int64"),
    ("abs_uint8", lambda T, x: T.abs(x), "uint8"),
    ("exp_float16", lambda T, x: T.exp(x), "float16"),
    ("tanh_bfloat16", lambda T, x: T.tanh(x), "bfloat16"),
    ("log_float16", lambda T, x: T.log(x.abs() + 1), "float16"),
]


@pytest.mark.parametrize("name,fn,dtype", cases(UNARY_INT))
def test_unary_dtypes(name, fn, dtype):
    check_op(name, fn, [A((2, 3), dtype)])


# ------------------------------------------------------------------------------------------------
# Binary ops with broadcasting
# ------------------------------------------------------------------------------------------------

BINARY = [
    # name, fn, domain of a, domain of b: swept over broadcasting shapes and float32/float64
    ("add", lambda T, a, b: T.add(a, b), "any", "any"),
    ("sub", lambda T, a, b: T.sub(a, b), "any", "any"),
    ("mul", lambda T, a, b: T.mul(a, b), "any", "any"),
    ("div", lambda T, a, b: T.div(a, b), "any", "nz"),
    ("pow", lambda T, a, b: T.pow(a, b), "pos", "any"),
    ("maximum", lambda T, a, b: T.maximum(a, b), "any", "any"),
    ("minimum", lambda T, a, b: T.minimum(a, b), "any", "any"),
    ("remainder", lambda T, a, b: T.remainder(a, b), "any", "nz"),
    ("fmod", lambda T, a, b: T.fmod(a, b), "any", "nz"),
    ("where_gt", lambda T, a, b: T.where(a > b, a, b), "any", "any"),
]

SHAPES2 = [((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 3)), ((4, 1, 3), (2, 1))]


@pytest.mark.parametrize("shapes", SHAPES2, ids=lambda s: f"{list(s[0])}-{list(s[1])}")
@pytest.mark.parametrize("name,fn,da,db", cases(BINARY))
def test_binary_broadcast_float32(name, fn, da, db, shapes):
    sa, sb = shapes
    check_op(f"{name}/{sa}/{sb}", fn, [A(sa, "float32", da), A(sb, "float32", db)])


@pytest.mark.parametrize("name,fn,da,db", cases(BINARY))
def test_binary_float64(name, fn, da, db):
    check_op(f"{name}/f64", fn, [A((2, 3), "float64", da), A((2, 1), "float64", db)])


BINARY_FORMS = [
    # name, fn, domain of a, domain of b: other spellings, one broadcasting pair
    ("add_op", lambda T, a, b: a + b, "any", "any"),
    ("add_alpha", lambda T, a, b: T.add(a, b, alpha=2), "any", "any"),
    ("add_method", lambda T, a, b: a.add(b), "any", "any"),
    ("sub_op", lambda T, a, b: a - b, "any", "any"),
    ("sub_alpha", lambda T, a, b: a.sub(b, alpha=0.5), "any", "any"),
    ("subtract", lambda T, a, b: a.subtract(b), "any", "any"),
    ("mul_op", lambda T, a, b: a * b, "any", "any"),
    ("multiply", lambda T, a, b: a.multiply(b), "any", "any"),
    ("div_op", lambda T, a, b: a / b, "any", "nz"),
    ("true_divide", lambda T, a, b: T.true_divide(a, b), "any", "nz"),
    ("divide", lambda T, a, b: a.divide(b), "any", "nz"),
    ("div_floor", lambda T, a, b: T.div(a, b, rounding_mode="floor"), "any", "nz"),
    ("div_trunc", lambda T, a, b: T.div(a, b, rounding_mode="trunc"), "any", "nz"),
    ("pow_op", lambda T, a, b: a ** b, "pos", "any"),
    ("pow_method", lambda T, a, b: a.pow(b), "pos", "any"),
    ("maximum_method", lambda T, a, b: a.maximum(b), "any", "any"),
    ("minimum_method", lambda T, a, b: a.minimum(b), "any", "any"),
    ("mod_op", lambda T, a, b: a % b, "any", "nz"),
    ("composite", lambda T, a, b: (a * b).sin() / (1 + a * a), "any", "any"),
]


@pytest.mark.parametrize("name,fn,da,db", cases(BINARY_FORMS))
def test_binary_forms(name, fn, da, db):
    check_op(name, fn, [A((2, 3), "float32", da), A((3,), "float32", db)])


MIXED = [
    # name, fn, a, b: mixed dtypes; each grad comes back in its own input's dtype
    ("f32+f64", lambda T, a, b: a + b, A((2, 3), "float32"), A((3,), "float64")),
    ("f64*f32", lambda T, a, b: a * b, A((2, 3), "float64"), A((2, 3), "float32")),
    ("f16*f32", lambda T, a, b: a * b, A((3,), "float16"), A((3,), "float32")),
    ("bf16+f16", lambda T, a, b: a + b, A((3,), "bfloat16"), A((3,), "float16")),
    ("bf16*bf16", lambda T, a, b: a * b, A((3,), "bfloat16"), A((3,), "bfloat16")),
    ("f16/f16", lambda T, a, b: a / b, A((3,), "float16"), A((3,), "float16", "nz")),
    ("i64+f32", lambda T, a, b: a + b, A((2, 3), "int64"), A((3,), "float32")),
    ("f32*i32", lambda T, a, b: a * b, A((2, 3), "float32"), A((2, 3), "int32")),
    ("f32/i64", lambda T, a, b: a / b, A((2, 3), "float32"), A((2, 3), "int64", "nz")),
    ("bool*f32", lambda T, a, b: a * b, A((2, 3), "bool"), A((2, 3), "float32")),
    ("f32_0d+f64_1d", lambda T, a, b: a + b, A((), "float64"), A((3,), "float32")),
    # the product is float32 (a 0-dim operand does not promote), so the float64 scalar's
    # gradient is a float32 sum: float32 accuracy, summation order is XLA's
    ("f64_0d*f32_2d|f32-sum", lambda T, a, b: a * b, A((), "float64"), A((2, 3), "float32")),
    ("max_f32_f64", lambda T, a, b: T.maximum(a, b), A((3,), "float32"), A((3,), "float64")),
    ("pow_f32_f64", lambda T, a, b: a ** b, A((3,), "float32", "pos"), A((3,), "float64")),
    ("pow_f32_i64", lambda T, a, b: a ** b, A((3,), "float32", "pos"), A((3,), "int64", "small")),
    ("where_f32_f64", lambda T, a, b: T.where(a > 0, a, b), A((3,), "float32"),
     A((3,), "float64")),
]


@pytest.mark.parametrize("name,fn,a,b", cases(MIXED))
def test_binary_mixed_dtypes(name, fn, a, b):
    tol = dict(rtol=2e-6, atol=1e-7) if name.endswith("|f32-sum") else {}
    check_op(name, fn, [a, b], **tol)


BINARY_INT = [
    # name, fn, a, b: integer/bool arithmetic (values and result dtypes)
    ("add_i64", lambda T, a, b: a + b, A((2, 3), "int64"), A((3,), "int64")),
    ("sub_i32", lambda T, a, b: a - b, A((2, 3), "int32"), A((2, 3), "int32")),
    ("mul_u8_i8", lambda T, a, b: a * b, A((3,), "uint8"), A((3,), "int8")),
    ("div_i64", lambda T, a, b: a / b, A((2, 3), "int64"), A((2, 3), "int64", "nz")),
    ("floordiv_i64", lambda T, a, b: a // b, A((2, 3), "int64"), A((2, 3), "int64", "nz")),
    ("floordiv_neg", lambda T, a, b: a // b, A((6,), "int32"), A((6,), "int32", "nz")),
    ("mod_i64", lambda T, a, b: a % b, A((2, 3), "int64"), A((2, 3), "int64", "nz")),
    ("fmod_i64", lambda T, a, b: T.fmod(a, b), A((2, 3), "int64"), A((2, 3), "int64", "nz")),
    ("fmod_i32_method", lambda T, a, b: a.fmod(b), A((6,), "int32"), A((6,), "int32", "nz")),
    ("div_floor_i64", lambda T, a, b: T.div(a, b, rounding_mode="floor"), A((6,), "int64"),
     A((6,), "int64", "nz")),
    ("div_trunc_i64", lambda T, a, b: T.div(a, -b, rounding_mode="trunc"), A((6,), "int64"),
     A((6,), "int64", "nz")),
    ("pow_i64", lambda T, a, b: a ** b, A((2, 3), "int64"), A((2, 3), "int64", "small")),
    ("max_i32_i64", lambda T, a, b: T.maximum(a, b), A((3,), "int32"), A((3,), "int64")),
    ("add_bool_bool", lambda T, a, b: a + b, A((4,), "bool"), A((4,), "bool")),
    ("mul_bool_bool", lambda T, a, b: a * b, A((4,), "bool"), A((4,), "bool")),
    ("add_bool_i32", lambda T, a, b: a + b, A((4,), "bool"), A((4,), "int32")),
    ("div_bool_bool", lambda T, a, b: a / b, A((4,), "bool"), A((4,), "bool")),
    ("floordiv_f32", lambda T, a, b: a // b, A((2, 3), "float32"), A((2, 3), "float32", "nz")),
    ("mod_f32", lambda T, a, b: a % b, A((2, 3), "float32"), A((2, 3), "float32", "nz")),
]


@pytest.mark.parametrize("name,fn,a,b", cases(BINARY_INT))
def test_binary_int_bool(name, fn, a, b):
    check_op(name, fn, [a, b])


# ------------------------------------------------------------------------------------------------
# Python scalars on either side
# ------------------------------------------------------------------------------------------------

SCALAR_F = [
    # name, fn, domain of x (float32 [2, 3], requires grad)
    ("x+2", lambda T, x: x + 2, "any"),
    ("2+x", lambda T, x: 2 + x, "any"),
    ("x+2.5", lambda T, x: x + 2.5, "any"),
    ("x-2", lambda T, x: x - 2, "any"),
    ("2-x", lambda T, x: 2 - x, "any"),
    ("1.5-x", lambda T, x: 1.5 - x, "any"),
    ("x*2", lambda T, x: x * 2, "any"),
    ("2*x", lambda T, x: 2 * x, "any"),
    ("x*True", lambda T, x: x * True, "any"),
    ("x/2", lambda T, x: x / 2, "any"),
    ("2/x", lambda T, x: 2 / x, "nz"),
    ("x**2", lambda T, x: x ** 2, "any"),
    ("x**3", lambda T, x: x ** 3, "any"),
    ("x**2.0", lambda T, x: x ** 2.0, "any"),
    ("x**0.5", lambda T, x: x ** 0.5, "pos"),
    ("x**-1", lambda T, x: x ** -1, "nz"),
    ("x**-2.5", lambda T, x: x ** -2.5, "pos"),
    ("x**0", lambda T, x: x ** 0, "any"),
    ("x**1", lambda T, x: x ** 1, "any"),
    ("2**x", lambda T, x: 2 ** x, "any"),
    ("2.5**x", lambda T, x: 2.5 ** x, "any"),
    ("0.5**x", lambda T, x: 0.5 ** x, "any"),
    ("x//2", lambda T, x: x // 2, "any"),
    ("3//x", lambda T, x: 3 // x, "nz"),
    ("x%1.5", lambda T, x: x % 1.5, "any"),
    ("3%x", lambda T, x: 3 % x, "nz"),
    ("add(x,2)", lambda T, x: T.add(x, 2), "any"),
    ("add(x,2,alpha=3)", lambda T, x: T.add(x, 2, alpha=3), "any"),
    ("sub(x,2)", lambda T, x: T.sub(x, 2), "any"),
    ("rsub(x,2)", lambda T, x: T.rsub(x, 2), "any"),
    ("mul(x,3)", lambda T, x: T.mul(x, 3), "any"),
    ("div(x,4)", lambda T, x: T.div(x, 4), "any"),
    ("pow(x,3)", lambda T, x: T.pow(x, 3), "any"),
    ("pow(2,x)", lambda T, x: T.pow(2, x), "any"),
    ("x.pow(2)", lambda T, x: x.pow(2), "any"),
    ("maximum_scalar_tensor", lambda T, x: T.maximum(x, T.tensor(0.0)), "nz"),
]


@pytest.mark.parametrize("name,fn,dom", cases(SCALAR_F))
def test_python_scalars_float(name, fn, dom):
    check_op(name, fn, [A((2, 3), "float32", dom)])


@pytest.mark.parametrize("name,fn,dom", cases(SCALAR_F[:26]))
def test_python_scalars_float64(name, fn, dom):
    check_op(name + "|f64", fn, [A((3,), "float64", dom)])


SCALAR_DTYPE = [
    # name, fn, x: result dtype and values of tensor-with-Python-scalar ops
    ("i64+2", lambda T, x: x + 2, A((3,), "int64")),
    ("i64*2.5", lambda T, x: x * 2.5, A((3,), "int64")),
    ("2.5*i64", lambda T, x: 2.5 * x, A((3,), "int64")),
    ("i64/2", lambda T, x: x / 2, A((3,), "int64")),
    ("2/i64", lambda T, x: 2 / x, A((3,), "int64", "nz")),
    ("i64**2", lambda T, x: x ** 2, A((3,), "int64")),
    ("2**i64", lambda T, x: 2 ** x, A((3,), "int64", "small")),
    ("i64**0.5", lambda T, x: x ** 0.5, A((3,), "int64", "pos")),
    ("i64//2", lambda T, x: x // 2, A((6,), "int64")),
    ("-7//i64", lambda T, x: -7 // x, A((6,), "int64", "nz")),
    ("i64%3", lambda T, x: x % 3, A((6,), "int64")),
    ("i64%-3", lambda T, x: x % -3, A((6,), "int64")),
    ("i64.fmod(3)", lambda T, x: x.fmod(3), A((6,), "int64")),
    ("i64.fmod(-2.5)", lambda T, x: T.fmod(x, -2.5), A((6,), "int64")),
    ("f32.fmod(1.5)", lambda T, x: T.fmod(x, 1.5), A((6,), "float32")),
    ("fmod_(2)", lambda T, x: x.clone().fmod_(2), A((6,), "float32")),
    ("i32+2", lambda T, x: x + 2, A((3,), "int32")),
    ("i32*2.5", lambda T, x: x * 2.5, A((3,), "int32")),
    ("i32+2**40", lambda T, x: x + 2 ** 40, A((3,), "int32")),
    ("u8+1", lambda T, x: x + 1, A((3,), "uint8")),
    ("u8-10", lambda T, x: x - 10, A((3,), "uint8")),
    ("i8*-1", lambda T, x: x * -1, A((3,), "int8")),
    ("i16/2", lambda T, x: x / 2, A((3,), "int16")),
    ("bool+1", lambda T, x: x + 1, A((4,), "bool")),
    ("bool*2.5", lambda T, x: x * 2.5, A((4,), "bool")),
    ("bool+True", lambda T, x: x + True, A((4,), "bool")),
    ("bool*False", lambda T, x: x * False, A((4,), "bool")),
    ("bool/2", lambda T, x: x / 2, A((4,), "bool")),
    ("f16*2.5", lambda T, x: x * 2.5, A((3,), "float16")),
    ("f16+2**20", lambda T, x: x + 2 ** 20, A((3,), "float16")),
    ("bf16/3", lambda T, x: x / 3, A((3,), "bfloat16")),
    ("f64+2", lambda T, x: x + 2, A((3,), "float64")),
    ("f32+True", lambda T, x: x + True, A((3,), "float32")),
    ("f32*1j", lambda T, x: x * 1j, A((3,), "float32")),
    ("i64+1j", lambda T, x: x + 1j, A((3,), "int64")),
]


@pytest.mark.parametrize("name,fn,x", cases(SCALAR_DTYPE))
def test_python_scalars_dtype(name, fn, x):
    check_op(name, fn, [x])


# ------------------------------------------------------------------------------------------------
# Type promotion
# ------------------------------------------------------------------------------------------------

PDTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
           "float64"]


@pytest.mark.parametrize("a", PDTYPES)
@pytest.mark.parametrize("b", PDTYPES)
def test_promote_types_matrix(a, b):
    both(lambda T: T.promote_types(getattr(T, a), getattr(T, b)))


PROMOTE = [
    # dtype a, shape a, dtype b, shape b
    ("int32", (3,), "float32", (3,)),
    ("int64", (3,), "float32", (3,)),
    ("int64", (3,), "float16", (3,)),
    ("uint8", (3,), "int8", (3,)),
    ("uint8", (3,), "int64", (3,)),
    ("int8", (3,), "int16", (3,)),
    ("bool", (3,), "int32", (3,)),
    ("bool", (3,), "uint8", (3,)),
    ("bool", (3,), "float16", (3,)),
    ("float16", (3,), "bfloat16", (3,)),
    ("float16", (3,), "float32", (3,)),
    ("bfloat16", (3,), "float64", (3,)),
    ("float64", (), "float32", (3,)),
    ("float32", (), "float16", (3,)),
    ("int64", (), "int8", (3,)),
    ("int64", (), "uint8", (3,)),
    ("int64", (), "bool", (3,)),
    ("float64", (), "int32", (3,)),
    ("float16", (), "int64", (3,)),
    ("float64", (), "float32", ()),
    ("int32", (), "int64", ()),
    ("float32", (2, 3), "float64", ()),
    ("bool", (), "bool", (3,)),
]
PROMOTE_OPS = {
    "add": lambda T, a, b: a + b,
    "truediv": lambda T, a, b: a / b,
}
# Other ops run on the rows named here (the promotion rule is the same; the code paths are not).
PROMOTE_MORE_OPS = {
    "mul": lambda T, a, b: T.mul(a, b),
    "eq": lambda T, a, b: a == b,
    "lt": lambda T, a, b: a < b,
    "maximum": lambda T, a, b: T.maximum(a, b),
    "where": lambda T, a, b: T.where(T.ones((), dtype=T.bool), a, b),
    "cat": lambda T, a, b: T.cat([a.reshape(-1), b.reshape(-1)]),
}
PROMOTE_MORE = [PROMOTE[i] for i in (0, 3, 6, 9, 12, 14, 18)]


def _promote_ids(rows):
    return [f"{a}{list(sa)}-{b}{list(sb)}" for a, sa, b, sb in rows]


@pytest.mark.parametrize("op", list(PROMOTE_OPS))
@pytest.mark.parametrize("da,sa,db,sb", PROMOTE, ids=_promote_ids(PROMOTE))
def test_promotion(da, sa, db, sb, op):
    check_op(f"promo/{da}/{sa}/{db}/{sb}/{op}", PROMOTE_OPS[op],
             [A(sa, da, "pos", grad=False), A(sb, db, "pos", grad=False)])


@pytest.mark.parametrize("op", list(PROMOTE_MORE_OPS))
@pytest.mark.parametrize("da,sa,db,sb", PROMOTE_MORE, ids=_promote_ids(PROMOTE_MORE))
def test_promotion_more_ops(da, sa, db, sb, op):
    check_op(f"promo/{da}/{sa}/{db}/{sb}/{op}", PROMOTE_MORE_OPS[op],
             [A(sa, da, "pos", grad=False), A(sb, db, "pos", grad=False)])


def test_result_type():
    both(lambda T: [T.tensor([1], dtype=T.int32).dtype, (T.tensor([1], dtype=T.int32) + 1).dtype,
                    (T.tensor([1], dtype=T.uint8) + T.tensor(1000)).dtype])


# ------------------------------------------------------------------------------------------------
# In-place arithmetic: dtype rules, broadcasting rules, return value
# ------------------------------------------------------------------------------------------------

INPLACE = [
    # name, fn (fresh non-grad float32 x [2, 3], int64 i [2, 3]), match (None: a value row)
    ("f32+=1", lambda T, x, i: (x.__iadd__(1), x), None),
    ("f32+=f64", lambda T, x, i: (x.__iadd__(x.double()), x), None),
    ("f32*=2.5", lambda T, x, i: (x.__imul__(2.5), x), None),
    ("f32/=i64", lambda T, x, i: (x.__itruediv__(i.abs() + 1), x), None),
    ("f32-=bool", lambda T, x, i: (x.__isub__(i > 0), x),
     r"Subtraction, the `-` operator, with a bool tensor is not supported\. If you are trying to "
     r"invert a mask, use the `~` or `logical_not\(\)` operator instead\."),
    ("f32**=2", lambda T, x, i: (x.__ipow__(2), x), None),
    ("i64+=1", lambda T, x, i: (i.__iadd__(1), i), None),
    ("i64+=1.5", lambda T, x, i: i.__iadd__(1.5), "result type Float can't be cast to the "
     "desired output type Long"),
    ("i64/=2", lambda T, x, i: i.__itruediv__(2), "result type Float can't be cast"),
    ("i64+=f32", lambda T, x, i: i.__iadd__(x), "result type Float can't be cast"),
    ("i64//=2", lambda T, x, i: (i.__ifloordiv__(2), i), None),
    ("i64%=4", lambda T, x, i: (i.__imod__(4), i), None),
    ("i32+=i64", lambda T, x, i: (lambda j: (j.__iadd__(i), j))(i.int()), None),
    ("bool+=1", lambda T, x, i: (i > 0).__iadd__(1), "result type Long can't be cast"),
    ("add_ returns self", lambda T, x, i: x.add_(1) is x, None),
    ("mul_ value", lambda T, x, i: (x.mul_(x), x), None),
    ("add_ alpha", lambda T, x, i: x.add_(x, alpha=-2), None),
    ("sub_ scalar", lambda T, x, i: x.sub_(0.5), None),
    ("div_ tensor", lambda T, x, i: x.div_(x.abs() + 1), None),
    ("pow_", lambda T, x, i: x.abs().pow_(0.5), None),
    ("exp_", lambda T, x, i: x.exp_(), None),
    ("clamp_", lambda T, x, i: x.clamp_(-0.5, 0.5), None),
    ("relu_", lambda T, x, i: x.relu_(), None),
    ("neg_", lambda T, x, i: x.neg_(), None),
    ("zero_", lambda T, x, i: (x.zero_(), i.zero_()), None),
    ("fill_", lambda T, x, i: (x.fill_(2.5), i.fill_(3)), None),
    ("copy_ broadcast", lambda T, x, i: x.copy_(T.tensor([1.0, 2.0, 3.0])), None),
    ("copy_ casts", lambda T, x, i: i.copy_(x), None),
    ("add_ broadcast ok", lambda T, x, i: x.add_(T.ones(3)), None),
    ("add_ broadcast bad", lambda T, x, i: x[0].clone().add_(x),
     r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"),
    ("iadd rebinds same object", lambda T, x, i: (lambda y: (y.__iadd__(1) is y))(x), None),
]


@pytest.mark.parametrize("name,fn,match", cases(INPLACE))
def test_inplace_arith(name, fn, match):
    rng = np.random.default_rng(seed_of(name))
    xv = rng.uniform(-2, 2, (2, 3)).astype(np.float32)
    iv = rng.integers(-5, 6, (2, 3))
    both(lambda T: fn(T, T.tensor(xv), T.tensor(iv)), match=match, raises=match is not None)


# ------------------------------------------------------------------------------------------------
# Reductions
# ------------------------------------------------------------------------------------------------

REDUCE = [
    # name, fn, input
    ("sum", lambda T, x: x.sum(), A((2, 3, 4))),
    ("sum_fn", lambda T, x: T.sum(x), A((2, 3, 4))),
    ("sum_0", lambda T, x: x.sum(0), A((2, 3, 4))),
    ("sum_-1", lambda T, x: x.sum(-1), A((2, 3, 4))),
    ("sum_dim_kw", lambda T, x: T.sum(x, dim=1), A((2, 3, 4))),
    ("sum_keepdim", lambda T, x: x.sum(1, keepdim=True), A((2, 3, 4))),
    ("sum_tuple", lambda T, x: x.sum((0, 2)), A((2, 3, 4))),
    ("sum_tuple_keepdim", lambda T, x: x.sum(dim=(0, -1), keepdim=True), A((2, 3, 4))),
    ("sum_list", lambda T, x: x.sum([1]), A((2, 3, 4))),
    ("sum_0d", lambda T, x: x.sum(), A(())),
    ("sum_0d_dim0", lambda T, x: x.sum(0), A(())),
    ("sum_dtype", lambda T, x: x.sum(dtype=T.float64), A((2, 3))),
    ("sum_f64", lambda T, x: x.sum(1), A((2, 3), "float64")),
    ("sum_f16", lambda T, x: x.sum(), A((2, 3), "float16")),
    ("sum_bf16", lambda T, x: x.sum(0), A((2, 3), "bfloat16")),
    ("sum_i32", lambda T, x: x.sum(), A((2, 3), "int32")),
    ("sum_i32_dim", lambda T, x: x.sum(1), A((2, 3), "int32")),
    ("sum_u8", lambda T, x: x.sum(), A((2, 3), "uint8")),
    ("sum_bool", lambda T, x: x.sum(), A((2, 3), "bool")),
    ("sum_bool_dim", lambda T, x: T.sum(x, 0), A((2, 3), "bool")),
    ("sum_empty", lambda T, x: x[:0].sum(), A((2, 3))),
    ("mean", lambda T, x: x.mean(), A((2, 3, 4))),
    ("mean_fn", lambda T, x: T.mean(x), A((2, 3, 4))),
    ("mean_1", lambda T, x: x.mean(1), A((2, 3, 4))),
    ("mean_keepdim", lambda T, x: x.mean(-1, keepdim=True), A((2, 3, 4))),
    ("mean_tuple", lambda T, x: T.mean(x, dim=(0, 1)), A((2, 3, 4))),
    ("mean_f64", lambda T, x: x.mean(0), A((2, 3), "float64")),
    ("mean_f16", lambda T, x: x.mean(), A((2, 3), "float16")),
    ("mean_int_dtype", lambda T, x: x.mean(dtype=T.float64), A((2, 3), "int64")),
    ("mean_empty", lambda T, x: x[:0].mean(), A((2, 3))),
    ("mean_0d", lambda T, x: x.mean(), A(())),
    ("sum_of_sum", lambda T, x: x.sum(0).sum(0), A((2, 3, 4))),
]


@pytest.mark.parametrize("name,fn,x", cases(REDUCE))
def test_reduce(name, fn, x):
    check_op(name, fn, [x])


# ------------------------------------------------------------------------------------------------
# matmul / mm / bmm
# ------------------------------------------------------------------------------------------------

MATMUL = [
    # name, fn, a, b, the error's message (None: a value row)
    ("vv", lambda T, a, b: T.matmul(a, b), A((3,)), A((3,)), None),
    ("mv", lambda T, a, b: a @ b, A((2, 3)), A((3,)), None),
    ("vm", lambda T, a, b: a @ b, A((3,)), A((3, 4)), None),
    ("mm_op", lambda T, a, b: a @ b, A((2, 3)), A((3, 4)), None),
    ("mm", lambda T, a, b: T.mm(a, b), A((2, 3)), A((3, 4)), None),
    ("mm_method", lambda T, a, b: a.mm(b), A((2, 3)), A((3, 4)), None),
    ("matmul_method", lambda T, a, b: a.matmul(b), A((2, 3)), A((3, 4)), None),
    ("bm_m", lambda T, a, b: a @ b, A((2, 2, 3)), A((3, 4)), None),
    ("bbm_m", lambda T, a, b: a @ b, A((2, 3, 2, 3)), A((3, 4)), None),
    ("bm_m_transposed", lambda T, a, b: a.transpose(0, 1) @ b, A((2, 2, 3)), A((3, 4)), None),
    ("bm_m_i64", lambda T, a, b: a @ b, A((2, 2, 3), "int64"), A((3, 4), "int64"), None),
    ("m_bm", lambda T, a, b: a @ b, A((2, 3)), A((2, 3, 4)), None),
    ("bmm_op", lambda T, a, b: a @ b, A((2, 2, 3)), A((2, 3, 4)), None),
    ("bmm", lambda T, a, b: T.bmm(a, b), A((2, 2, 3)), A((2, 3, 4)), None),
    ("bmm_method", lambda T, a, b: a.bmm(b), A((2, 2, 3)), A((2, 3, 4)), None),
    ("v_bm", lambda T, a, b: a @ b, A((3,)), A((2, 3, 4)), None),
    ("bm_v", lambda T, a, b: a @ b, A((2, 2, 3)), A((3,)), None),
    ("broadcast_batch", lambda T, a, b: a @ b, A((2, 1, 2, 3)), A((3, 3, 4)), None),
    ("mm_f64", lambda T, a, b: a @ b, A((2, 3), "float64"), A((3, 4), "float64"), None),
    ("mm_i64", lambda T, a, b: a @ b, A((2, 3), "int64"), A((3, 4), "int64"), None),
    ("mm_f16", lambda T, a, b: a @ b, A((2, 3), "float16"), A((3, 4), "float16"), None),
    ("mm_shape_error", lambda T, a, b: T.mm(a, b), A((2, 3)), A((4, 5)),
     r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"),
    ("matmul_shape_error", lambda T, a, b: a @ b, A((2, 3)), A((4, 5)),
     r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"),
    ("mm_dtype_error", lambda T, a, b: T.mm(a, b), A((2, 3)), A((3, 4), "float64"),
     r"expected m1 and m2 to have the same dtype, but got: float != double"),
    ("matmul_dtype_error", lambda T, a, b: a @ b, A((2, 3)), A((3, 4), "float64"),
     r"expected m1 and m2 to have the same dtype, but got: float != double"),
    ("vv_mismatch", lambda T, a, b: a @ b, A((3,)), A((4,)),
     r"inconsistent tensor size, expected tensor \[3\] and src \[4\] to have the same number of "
     r"elements, but got 3 and 4 elements respectively"),
    ("bmm_2d_error", lambda T, a, b: T.bmm(a, b), A((2, 3)), A((3, 4)),
     r"batch1 must be a 3D tensor"),
    ("mm_1d_error", lambda T, a, b: T.mm(a, b), A((3,)), A((3, 4)), r"self must be a matrix"),
    ("matmul_0d_error", lambda T, a, b: T.matmul(a, b), A(()), A((3,)),
     r"both arguments to matmul need to be at least 1D, but they are 0D and 1D"),
]


@pytest.mark.parametrize("name,fn,a,b,match", cases(MATMUL))
def test_matmul(name, fn, a, b, match):
    check_op(name, fn, [a, b], match=match, raises=match is not None)


# ------------------------------------------------------------------------------------------------
# Shape ops, views, indexing
# ------------------------------------------------------------------------------------------------

X = A((2, 3, 4))
SHAPE = [
    # name, fn, input, the error's message (None: a value row)
    ("view", lambda T, x: x.view(6, 4), X, None),
    ("view_tuple", lambda T, x: x.view((4, 6)), X, None),
    ("view_-1", lambda T, x: x.view(-1), X, None),
    ("view_2_-1", lambda T, x: x.view(2, -1), X, None),
    ("view_bad_numel", lambda T, x: x.view(5, 5), X, r"shape '\[5, 5\]' is invalid for input of "
     "size 24"),
    ("view_two_-1", lambda T, x: x.view(-1, -1), X, "only one dimension can be inferred"),
    ("view_noncontig", lambda T, x: x.transpose(0, 1).view(-1), X, "view size is not compatible"),
    ("view_as", lambda T, x: x.view_as(T.zeros(4, 6)), X, None),
    ("reshape", lambda T, x: x.reshape(4, 6), X, None),
    ("reshape_fn", lambda T, x: T.reshape(x, (3, 8)), X, None),
    ("reshape_-1", lambda T, x: x.reshape(-1), X, None),
    ("reshape_noncontig", lambda T, x: x.transpose(0, 1).reshape(-1), X, None),
    ("reshape_as", lambda T, x: x.reshape_as(T.zeros(12, 2)), X, None),
    ("reshape_0d", lambda T, x: x.reshape(1, 1), A(()), None),
    ("transpose", lambda T, x: x.transpose(0, 2), X, None),
    ("transpose_neg", lambda T, x: T.transpose(x, -1, -2), X, None),
    ("transpose_same", lambda T, x: x.transpose(1, 1), X, None),
    ("transpose_bad", lambda T, x: x.transpose(0, 3), X, "Dimension out of range"),
    ("t", lambda T, x: x.t(), A((2, 3)), None),
    ("t_fn", lambda T, x: T.t(x), A((2, 3)), None),
    ("t_1d", lambda T, x: x.t(), A((3,)), None),
    ("t_3d", lambda T, x: x.t(), X, r"t\(\) expects a tensor with <= 2 dimensions, but self is 3D"),
    ("T_2d", lambda T, x: x.T, A((2, 3)), None),
    ("mT", lambda T, x: x.mT, X, None),
    ("permute", lambda T, x: x.permute(2, 0, 1), X, None),
    ("permute_tuple", lambda T, x: x.permute((1, 2, 0)), X, None),
    ("permute_neg", lambda T, x: T.permute(x, (-1, 0, 1)), X, None),
    ("permute_bad", lambda T, x: x.permute(0, 1), X,
     r"number of dimensions in the tensor input does not match the length of the desired "
     r"ordering of dimensions i\.e\. input\.dim\(\) = 3 is not equal to len\(dims\) = 2"),
    ("permute_repeat", lambda T, x: x.permute(0, 0, 1), X,
     r"permute\(\): duplicate dims are not allowed\."),
    ("unsqueeze_0", lambda T, x: x.unsqueeze(0), X, None),
    ("unsqueeze_-1", lambda T, x: T.unsqueeze(x, -1), X, None),
    ("unsqueeze_3", lambda T, x: x.unsqueeze(3), X, None),
    ("unsqueeze_bad", lambda T, x: x.unsqueeze(5), X, "Dimension out of range"),
    ("squeeze", lambda T, x: x.squeeze(), A((2, 1, 3, 1)), None),
    ("squeeze_fn", lambda T, x: T.squeeze(x), A((2, 1, 3, 1)), None),
    ("squeeze_1", lambda T, x: x.squeeze(1), A((2, 1, 3, 1)), None),
    ("squeeze_-1", lambda T, x: x.squeeze(-1), A((2, 1, 3, 1)), None),
    ("squeeze_noop", lambda T, x: x.squeeze(0), A((2, 1, 3, 1)), None),
    ("squeeze_tuple", lambda T, x: x.squeeze((1, 3)), A((2, 1, 3, 1)), None),
    ("squeeze_0d", lambda T, x: x.squeeze(), A(()), None),
    ("expand", lambda T, x: x.expand(2, 3, 4), A((3, 1)), None),
    ("expand_-1", lambda T, x: x.expand(-1, 4), A((3, 1)), None),
    ("expand_tuple", lambda T, x: x.expand((2, 3, 4)), A((1, 4)), None),
    ("expand_0d", lambda T, x: x.expand(2, 2), A(()), None),
    ("expand_bad", lambda T, x: x.expand(2, 4), A((3, 1)),
     r"The expanded size of the tensor \(2\) must match the existing size \(3\) at non-singleton "
     r"dimension 0\.  Target sizes: \[2, 4\]\.  Tensor sizes: \[3, 1\]"),
    ("expand_as", lambda T, x: x.expand_as(T.zeros(2, 3, 4)), A((3, 1)), None),
    ("flatten", lambda T, x: x.flatten(), X, None),
    ("flatten_fn", lambda T, x: T.flatten(x, 1), X, None),
    ("flatten_0_1", lambda T, x: x.flatten(0, 1), X, None),
    ("flatten_neg", lambda T, x: x.flatten(-2, -1), X, None),
    ("flatten_0d", lambda T, x: x.flatten(), A(()), None),
    ("flatten_noop", lambda T, x: x.flatten(1, 1), X, None),
    ("contiguous", lambda T, x: x.transpose(0, 1).contiguous(), X, None),
    ("clone", lambda T, x: x.clone(), X, None),
    ("clone_fn", lambda T, x: T.clone(x), X, None),
    ("select", lambda T, x: x.select(1, 2), X, None),
    ("select_fn", lambda T, x: T.select(x, 0, -1), X, None),
    ("chain", lambda T, x: x.transpose(0, 1).reshape(3, 8).t().unsqueeze(0).squeeze(0), X, None),
]


@pytest.mark.parametrize("name,fn,x,match", cases(SHAPE))
def test_shape(name, fn, x, match):
    check_op(name, fn, [x], match=match, raises=match is not None)


INDEX = [
    # name, fn, input, the error's message (None: a value row)
    ("int", lambda T, x: x[0], X, None),
    ("neg_int", lambda T, x: x[-1], X, None),
    ("colon_int", lambda T, x: x[:, 1], X, None),
    ("ellipsis_int", lambda T, x: x[..., 0], X, None),
    ("none", lambda T, x: x[None], X, None),
    ("colon_none", lambda T, x: x[:, None], X, None),
    ("ellipsis_none", lambda T, x: x[..., None], X, None),
    ("scalar", lambda T, x: x[0, 1, 2], X, None),
    ("slice", lambda T, x: x[1:], X, None),
    ("slice_step", lambda T, x: x[:, ::2], X, None),
    ("slice_mid", lambda T, x: x[:, 1:3, 1:], X, None),
    ("slice_neg", lambda T, x: x[..., -3:-1], X, None),
    ("slice_empty", lambda T, x: x[:, 2:1], X, None),
    ("slice_past_end", lambda T, x: x[:, 1:10], X, None),
    ("slice_neg_step", lambda T, x: x[::-1], X, "step must be greater than zero"),
    ("out_of_range", lambda T, x: x[5], X, "index 5 is out of bounds for dimension 0 with size 2"),
    ("too_many", lambda T, x: x[0, 0, 0, 0], X, r"too many indices for tensor of dimension 3"),
    ("tuple_mixed", lambda T, x: x[1, :, None, 2:], X, None),
    ("tensor_idx", lambda T, x: x[T.tensor([1, 0, 1])], X, None),
    ("list_idx", lambda T, x: x[[1, 0]], X, None),
    ("list_idx_dim1", lambda T, x: x[:, [2, 0, 2]], X, None),
    ("two_lists", lambda T, x: x[[0, 1], [1, 2]], X, None),
    ("list_and_slice", lambda T, x: x[[0, 1], :, [3, 0]], X, None),
    ("tensor_2d_idx", lambda T, x: x[T.tensor([[0, 1], [1, 1]])], X, None),
    ("neg_tensor_idx", lambda T, x: x[:, T.tensor([-1, 0])], X, None),
    ("int32_idx", lambda T, x: x[T.tensor([1, 0], dtype=T.int32)], X, None),
    ("0d_tensor_idx", lambda T, x: x[T.tensor(1)], X, None),
    ("bool_mask_full", lambda T, x: x[x > 0], X, None),
    ("bool_mask_rows", lambda T, x: x[T.tensor([True, False])], X, None),
    ("bool_mask_dim1", lambda T, x: x[:, T.tensor([True, False, True])], X, None),
    ("bool_list", lambda T, x: x[[True, False]], X, None),
    ("bool_scalar", lambda T, x: x[True], A((3,)), None),
    ("idx_out_of_range", lambda T, x: x[T.tensor([0, 5])], X,
     r"index 5 is out of bounds for dimension 0 with size 2"),
    ("float_idx", lambda T, x: x[T.tensor([0.0])], X,
     r"tensors used as indices must be long, int, byte or bool tensors"),
    ("view_of_view", lambda T, x: x[1][:, 2][1:], X, None),
    ("1d_slice", lambda T, x: x[1:4], A((6,)), None),
    ("0d_ellipsis", lambda T, x: x[...], A(()), None),
    ("0d_none", lambda T, x: x[None], A(()), None),
]


@pytest.mark.parametrize("name,fn,x,match", cases(INDEX))
def test_getitem(name, fn, x, match):
    check_op(name, fn, [x], match=match, raises=match is not None)


SETITEM = [
    # name, fn(T, x, v): x is a fresh non-leaf (leaf * 1) so it can be written; returns x;
    # the error's message (None: a value row)
    ("int_scalar", lambda T, x, v: x.__setitem__(0, 0.5), None),
    ("int_tensor", lambda T, x, v: x.__setitem__(1, v[0]), None),
    ("slice_broadcast", lambda T, x, v: x.__setitem__((slice(None), slice(1, None)), v[0, :2]),
     None),
    ("ellipsis", lambda T, x, v: x.__setitem__(Ellipsis, 2.0), None),
    ("mask", lambda T, x, v: x.__setitem__(x > 0, 0.0), None),
    ("mask_tensor_value", lambda T, x, v: x.__setitem__(x > 0, v.flatten()[:1]), None),
    ("list_idx", lambda T, x, v: x.__setitem__([0, 1], v), None),
    ("tensor_idx_dim1", lambda T, x, v: x.__setitem__((slice(None), T.tensor([0, 2])),
                                                      v[:, :2]), None),
    ("int_value", lambda T, x, v: x.__setitem__(0, 3), None),
    ("bad_shape", lambda T, x, v: x.__setitem__(0, T.ones(5)),
     r"^The expanded size of the tensor \(3\) must match the existing size \(5\) at "
     r"non-singleton dimension 0\.  Target sizes: \[3\]\.  Tensor sizes: \[5\]$"),
    ("f64_value", lambda T, x, v: x.__setitem__(0, v[0].double()), None),
]


@pytest.mark.parametrize("name,fn,match", cases(SETITEM))
def test_setitem(name, fn, match):
    rng = np.random.default_rng(seed_of(name))
    xv = rng.uniform(-2, 2, (2, 3)).astype(np.float32)
    vv = rng.uniform(-2, 2, (2, 3)).astype(np.float32)
    gv = rng.standard_normal((2, 3))

    def go(T):
        leaf = T.tensor(xv, requires_grad=True)
        v = T.tensor(vv, requires_grad=True)
        x = leaf * 1
        fn(T, x, v)
        res = [x, x._version > 0, gname(x)]
        x.backward(T.tensor(gv, dtype=T.float32))
        return res + [leaf.grad, v.grad]

    both(go, match=match, raises=match is not None)


CATSTACK = [
    # name, fn(T, a, b, c): a, b float32 [2, 3], c float64 [2, 3]
    ("cat0", lambda T, a, b, c: T.cat([a, b])),
    ("cat1", lambda T, a, b, c: T.cat([a, b], 1)),
    ("cat_neg", lambda T, a, b, c: T.cat((a, b, a), dim=-1)),
    ("cat_one", lambda T, a, b, c: T.cat([a])),
    ("cat_promote", lambda T, a, b, c: T.cat([a, c])),
    ("cat_int_float", lambda T, a, b, c: T.cat([a, T.ones(1, 3, dtype=T.int64)])),
    ("cat_uneven", lambda T, a, b, c: T.cat([a, b[:1]], 0)),
    ("stack0", lambda T, a, b, c: T.stack([a, b])),
    ("stack1", lambda T, a, b, c: T.stack([a, b], 1)),
    ("stack_neg", lambda T, a, b, c: T.stack((a, b, a), dim=-1)),
    ("stack_promote", lambda T, a, b, c: T.stack([a, c])),
    ("stack_0d", lambda T, a, b, c: T.stack([a[0, 0], b[1, 1]])),
    ("where", lambda T, a, b, c: T.where(a > b, a, b)),
    ("where_broadcast", lambda T, a, b, c: T.where(a[0] > 0, a, b[:1])),
    ("where_scalar_y", lambda T, a, b, c: T.where(a > 0, a, 0.0)),
    ("where_scalar_x", lambda T, a, b, c: T.where(a > 0, 1.0, b)),
    ("where_scalars", lambda T, a, b, c: T.where(a > 0, 1.0, 0.0)),
    ("where_int_scalars", lambda T, a, b, c: T.where(a > 0, 1, 0)),
    ("where_promote", lambda T, a, b, c: T.where(a > 0, a, c)),
    ("where_method", lambda T, a, b, c: a.where(a > 0, b)),
    ("clamp", lambda T, a, b, c: T.clamp(a, -0.5, 0.5)),
    ("clamp_min", lambda T, a, b, c: a.clamp(min=-0.5)),
    ("clamp_max", lambda T, a, b, c: a.clamp(max=0.5)),
    ("clamp_tensor", lambda T, a, b, c: T.clamp(a, min=b, max=b + 1)),
    ("clamp_tensor_min", lambda T, a, b, c: a.clamp(min=b[0])),
    ("clamp_min_gt_max", lambda T, a, b, c: a.clamp(1.0, -1.0)),
    ("clamp_int_float_bound", lambda T, a, b, c: T.clamp((a * 3).long(), min=0.5)),
    ("clamp_int", lambda T, a, b, c: T.clamp((a * 3).long(), -1, 1)),
    ("clip", lambda T, a, b, c: T.clip(a, -1, 1)),
    ("clamp_min_fn", lambda T, a, b, c: T.clamp_min(a, 0.1)),
    ("clamp_max_fn", lambda T, a, b, c: T.clamp_max(a, 0.1)),
    ("maximum", lambda T, a, b, c: T.maximum(a, b)),
    ("minimum_promote", lambda T, a, b, c: T.minimum(a, c)),
    ("max_int_float", lambda T, a, b, c: T.maximum(a, T.tensor([1, 0, -1]))),
]


@pytest.mark.parametrize("name,fn", cases(CATSTACK))
def test_cat_stack_where_clamp(name, fn):
    check_op(name, fn, [A((2, 3)), A((2, 3)), A((2, 3), "float64")])


COMPARE = [
    # name, fn(T, a, b): a, b float32 [2, 3] requiring grad; result is bool without grad
    ("lt", lambda T, a, b: a < b),
    ("le", lambda T, a, b: a <= b),
    ("gt", lambda T, a, b: a > b),
    ("ge", lambda T, a, b: a >= b),
    ("eq", lambda T, a, b: a == b),
    ("eq_self", lambda T, a, b: a == a),
    ("ne", lambda T, a, b: a != b),
    ("lt_fn", lambda T, a, b: T.lt(a, b)),
    ("ge_fn", lambda T, a, b: T.ge(a, b)),
    ("eq_fn", lambda T, a, b: T.eq(a, b)),
    ("ne_fn", lambda T, a, b: T.ne(a, 0.5)),
    ("gt_method", lambda T, a, b: a.gt(0)),
    ("le_method", lambda T, a, b: a.le(b)),
    ("scalar_right", lambda T, a, b: a > 0.5),
    ("scalar_left", lambda T, a, b: 0.5 > a),
    ("scalar_left_eq", lambda T, a, b: 1 == a),
    ("broadcast", lambda T, a, b: a < b[0]),
    ("int_vs_float", lambda T, a, b: (a * 2).long() < a),
    ("int_vs_float_scalar", lambda T, a, b: (a * 2).long() == 1.0),
    ("bool_vs_int", lambda T, a, b: (a > 0) == 1),
    ("f64_vs_f32", lambda T, a, b: a.double() >= b),
    ("nan_eq", lambda T, a, b: (a / 0 * 0) == (a / 0 * 0)),
    ("nan_ne", lambda T, a, b: (a / 0 * 0) != (a / 0 * 0)),
    ("chained_to_float", lambda T, a, b: (a > b).float() * a),
]


@pytest.mark.parametrize("name,fn", cases(COMPARE))
def test_compare(name, fn):
    check_op(name, fn, [A((2, 3)), A((2, 3))])


# ------------------------------------------------------------------------------------------------
# Gradients at the edges: where the formula's choice at a kink or singularity shows
# ------------------------------------------------------------------------------------------------

V = [-1.0, 0.0, 0.5, 1.0, 2.0]
EDGE = [
    # name, fn, inputs (lists become float32 leaves)
    ("relu_at_0", lambda T, x: T.relu(x), [V]),
    ("abs_at_0", lambda T, x: T.abs(x), [V]),
    ("sqrt_at_0", lambda T, x: T.sqrt(x), [[0.0, 1.0, 4.0]]),
    ("sqrt_neg", lambda T, x: T.sqrt(x), [[-1.0, 1.0]]),
    ("log_at_0", lambda T, x: T.log(x), [[0.0, 1.0]]),
    ("log_neg", lambda T, x: T.log(x), [[-1.0, 1.0]]),
    ("clamp_at_bounds", lambda T, x: T.clamp(x, 0.0, 1.0), [V]),
    ("clamp_min_at_bound", lambda T, x: x.clamp(min=0.5), [V]),
    ("clamp_max_at_bound", lambda T, x: x.clamp(max=1.0), [V]),
    ("clamp_tensor_bounds_tie", lambda T, x, lo: T.clamp(x, min=lo), [V, [0.0] * 5]),
    ("maximum_tie", lambda T, a, b: T.maximum(a, b), [V, [0.0, 0.0, 0.5, 2.0, 2.0]]),
    ("minimum_tie", lambda T, a, b: T.minimum(a, b), [V, [0.0, 0.0, 0.5, 2.0, 2.0]]),
    ("pow2_at_0", lambda T, x: x ** 2, [V]),
    ("pow_half_at_0", lambda T, x: x ** 0.5, [[0.0, 1.0]]),
    ("pow0_at_0", lambda T, x: x ** 0, [V]),
    ("pow_0_base", lambda T, x, y: T.pow(x, y), [[0.0, 0.0, 0.0], [0.0, 1.0, 2.0]]),
    ("pow_neg_base", lambda T, x, y: T.pow(x, y), [[-2.0, -2.0], [2.0, 0.5]]),
    ("rpow_at_0", lambda T, x: 0.0 ** x, [[0.0, 1.0, 2.0]]),
    ("div_by_0", lambda T, x, y: x / y, [[1.0, 0.0, -1.0], [0.0, 0.0, 0.0]]),
    ("where_nan_branch", lambda T, x: T.where(x > 0, T.sqrt(x), T.zeros_like(x)), [V]),
    ("where_inf_branch", lambda T, x: T.where(x != 0, 1 / x, x), [V]),
    ("sigmoid_big", lambda T, x: T.sigmoid(x), [[-100.0, 0.0, 100.0]]),
    ("tanh_big", lambda T, x: T.tanh(x), [[-50.0, 0.0, 50.0]]),
    ("exp_overflow", lambda T, x: T.exp(x), [[100.0, 0.0]]),
    ("inf_minus_inf", lambda T, x: x - x, [[math.inf, 1.0]]),
    ("nan_input", lambda T, x: (x * 2).sum(), [[math.nan, 1.0]]),
    ("remainder_grad", lambda T, x, y: T.remainder(x, y), [[5.5, -5.5], [2.0, 2.0]]),
    ("fmod_grad", lambda T, x, y: T.fmod(x, y), [[5.5, -5.5, 7.0], [2.0, 2.0, -3.0]]),
    ("floordiv_grad", lambda T, x, y: T.div(x, y, rounding_mode="floor"), [[5.5, -5.5],
                                                                          [2.0, 2.0]]),
    ("sum_then_relu", lambda T, x: T.relu(x.sum() - 2.5), [V]),
    ("mean_of_abs", lambda T, x: x.abs().mean(), [V]),
]


@pytest.mark.parametrize("name,fn,inputs", cases(EDGE))
def test_grad_edges(name, fn, inputs):
    check_op(name, fn, [L(v) for v in inputs], upstream=False)


# ------------------------------------------------------------------------------------------------
# Creation functions
# ------------------------------------------------------------------------------------------------

CREATE = [
    # name, fn, the error's message (None: a value row)
    ("tensor_bool", lambda T: T.tensor([True, False]), None),
    ("tensor_int", lambda T: T.tensor([1, 2]), None),
    ("tensor_float", lambda T: T.tensor([1.0, 2.0]), None),
    ("tensor_mixed_int_float", lambda T: T.tensor([1, 2.5]), None),
    ("tensor_mixed_bool_int", lambda T: T.tensor([True, 2]), None),
    ("tensor_mixed_bool_float", lambda T: T.tensor([True, 2.5]), None),
    ("tensor_nested", lambda T: T.tensor([[1, 2], [3, 4]]), None),
    ("tensor_nested_float", lambda T: T.tensor([[1.5], [2.5], [3.5]]), None),
    ("tensor_nested_mixed", lambda T: T.tensor([[1, 2], [3.5, 4]]), None),
    ("tensor_tuple", lambda T: T.tensor(((1, 2), (3, 4))), None),
    ("tensor_int_scalar", lambda T: T.tensor(3), None),
    ("tensor_float_scalar", lambda T: T.tensor(3.5), None),
    ("tensor_bool_scalar", lambda T: T.tensor(True), None),
    ("tensor_big_int", lambda T: T.tensor(2 ** 40), None),
    ("tensor_complex", lambda T: T.tensor([1 + 2j, 3.0]), None),
    ("tensor_empty", lambda T: T.tensor([]), None),
    ("tensor_empty_nested", lambda T: T.tensor([[], []]), None),
    ("tensor_dtype_float", lambda T: T.tensor([1, 2], dtype=T.float32), None),
    ("tensor_dtype_int_from_float", lambda T: T.tensor([1.7, -1.7], dtype=T.int32), None),
    ("tensor_dtype_f16", lambda T: T.tensor([1, 2], dtype=T.float16), None),
    ("tensor_dtype_bf16", lambda T: T.tensor([1.1, 2.2], dtype=T.bfloat16), None),
    ("tensor_dtype_bool", lambda T: T.tensor([0, 1, 2], dtype=T.bool), None),
    ("tensor_dtype_alias", lambda T: T.tensor([1, 2], dtype=T.double), None),
    ("tensor_np_int32", lambda T: T.tensor(np.array([1, 2], dtype=np.int32)), None),
    ("tensor_np_f64", lambda T: T.tensor(np.array([1.5, 2.5])), None),
    ("tensor_np_f16", lambda T: T.tensor(np.array([1.5], dtype=np.float16)), None),
    ("tensor_np_bool", lambda T: T.tensor(np.array([True, False])), None),
    ("tensor_np_uint8", lambda T: T.tensor(np.arange(3, dtype=np.uint8)), None),
    ("tensor_np_f32_scalar", lambda T: T.tensor(np.float32(2.5)), None),
    ("tensor_np_f64_scalar", lambda T: T.tensor(np.float64(2.5)), None),
    ("tensor_np_i64_scalar", lambda T: T.tensor(np.int64(7)), None),
    ("tensor_list_of_0d", lambda T: T.tensor([T.tensor(1.0), T.tensor(2.0)]), None),
    ("tensor_ragged", lambda T: T.tensor([[1, 2], [3]]),
     r"expected sequence of length 2 at dim 1 \(got 1\)"),
    ("tensor_string", lambda T: T.tensor(["a"]), r"too many dimensions 'str'"),
    ("tensor_requires_grad", lambda T: T.tensor([1.5], requires_grad=True), None),
    ("tensor_int_requires_grad", lambda T: T.tensor([1, 2], requires_grad=True),
     "Only Tensors of floating point and complex dtype can require gradients"),
    ("tensor_device", lambda T: T.tensor([1.0], device="cpu").device, None),
    ("tensor_device_obj", lambda T: T.tensor([1.0], device=T.device("cpu")).device, None),
    ("as_tensor_list", lambda T: T.as_tensor([1, 2]), None),
    ("as_tensor_np", lambda T: T.as_tensor(np.array([1.5], dtype=np.float32)), None),
    ("as_tensor_dtype", lambda T: T.as_tensor([1, 2], dtype=T.float64), None),
    ("as_tensor_same_object", lambda T: (lambda t: T.as_tensor(t) is t)(T.ones(2)), None),
    ("as_tensor_cast", lambda T: T.as_tensor(T.ones(2), dtype=T.int32), None),
    ("from_numpy_i16", lambda T: T.from_numpy(np.arange(3, dtype=np.int16)), None),
    ("from_numpy_f32", lambda T: T.from_numpy(np.ones((2, 2), dtype=np.float32)), None),
    ("from_numpy_0d", lambda T: T.from_numpy(np.array(3.5)), None),
    ("from_numpy_big_endian", lambda T: T.from_numpy(np.arange(3, dtype=">f4")),
     "^given numpy array has byte order different from the native byte order"),
    ("tensor_big_endian", lambda T: T.tensor(np.arange(3, dtype=">i4"), dtype=T.float64),
     "byte order different from the native byte order"),
    ("as_tensor_big_endian", lambda T: T.as_tensor(np.arange(3, dtype=">f8")),
     "Conversion between byte orders is currently not supported."),
    ("tensor_one_byte_big_endian", lambda T: T.tensor(np.arange(3, dtype=">i1")), None),
    ("zeros_varargs", lambda T: T.zeros(2, 3), None),
    ("zeros_tuple", lambda T: T.zeros((2, 3)), None),
    ("zeros_list", lambda T: T.zeros([2, 3]), None),
    ("zeros_size", lambda T: T.zeros(T.Size([2, 3])), None),
    ("zeros_int32", lambda T: T.zeros(2, 3, dtype=T.int32), None),
    ("zeros_empty", lambda T: T.zeros(0), None),
    ("zeros_0d", lambda T: T.zeros(()), None),
    ("zeros_no_args", lambda T: T.zeros([]), None),
    ("zeros_requires_grad", lambda T: T.zeros(2, requires_grad=True), None),
    ("zeros_negative", lambda T: T.zeros(-1), r"zeros: Dimension size must be non\-negative\."),
    ("ones", lambda T: T.ones(3), None),
    ("ones_bool", lambda T: T.ones(3, dtype=T.bool), None),
    ("ones_f64", lambda T: T.ones(2, 2, dtype=T.float64), None),
    ("full_int", lambda T: T.full((2, 2), 7), None),
    ("full_float", lambda T: T.full((2,), 2.5), None),
    ("full_bool", lambda T: T.full((2,), True), None),
    ("full_int_as_f64", lambda T: T.full((2,), 7, dtype=T.float64), None),
    ("full_list_size", lambda T: T.full([3], -1), None),
    ("full_float_as_int", lambda T: T.full((2,), 1.5, dtype=T.int64), None),
    ("empty_meta", lambda T: (lambda e: (e.shape, e.dtype, e.requires_grad))(T.empty(2, 3)),
     None),
    ("empty_meta_dtype", lambda T: (lambda e: (e.shape, e.dtype))(T.empty((4,), dtype=T.int16)),
     None),
    ("arange_int", lambda T: T.arange(5), None),
    ("arange_start_end", lambda T: T.arange(1, 5), None),
    ("arange_step", lambda T: T.arange(0, 5, 2), None),
    ("arange_neg_step", lambda T: T.arange(5, 0, -1), None),
    ("arange_float_step", lambda T: T.arange(0, 1, 0.25), None),
    ("arange_float_end", lambda T: T.arange(5.0), None),
    ("arange_float_start", lambda T: T.arange(0.5, 3), None),
    ("arange_tenth", lambda T: T.arange(0, 1, 0.1), None),
    ("arange_neg_float", lambda T: T.arange(0, -1, -0.25), None),
    ("arange_dtype_f32", lambda T: T.arange(5, dtype=T.float32), None),
    ("arange_dtype_f64", lambda T: T.arange(1, 4, dtype=T.float64), None),
    ("arange_dtype_int_float_args", lambda T: T.arange(0.5, 4.5, dtype=T.int64), None),
    ("arange_empty", lambda T: T.arange(0), None),
    ("arange_wrong_sign", lambda T: T.arange(0, 5, -1),
     r"^upper bound and lower bound inconsistent with step sign$"),
    ("arange_zero_step", lambda T: T.arange(0, 5, 0), r"step must be nonzero"),
    ("arange_requires_grad", lambda T: T.arange(3.0, requires_grad=True), None),
    ("linspace", lambda T: T.linspace(0, 1, 5), None),
    ("linspace_one", lambda T: T.linspace(0, 1, 1), None),
    ("linspace_zero", lambda T: T.linspace(0, 1, 0), None),
    ("linspace_kw", lambda T: T.linspace(-1, 1, steps=4, dtype=T.float64), None),
    ("linspace_int_dtype", lambda T: T.linspace(0, 10, 4, dtype=T.int64), None),
    ("linspace_desc", lambda T: T.linspace(3, -3, 7), None),
    ("eye", lambda T: T.eye(3), None),
    ("eye_rect", lambda T: T.eye(2, 3), None),
    ("eye_tall", lambda T: T.eye(3, 2), None),
    ("eye_int", lambda T: T.eye(3, dtype=T.int64), None),
    ("eye_bool", lambda T: T.eye(2, dtype=T.bool), None),
    ("eye_0", lambda T: T.eye(0), None),
    ("scalar_tensor", lambda T: T.scalar_tensor(3), None),
    ("scalar_tensor_dtype", lambda T: T.scalar_tensor(3, dtype=T.int64), None),
]


@pytest.mark.parametrize("name,fn,match", cases(CREATE))
def test_creation(name, fn, match):
    both(fn, match=match, raises=match is not None)


LIKE = [
    # name, fn(T, x, i): x float32 [2, 3] requiring grad, i int64 [2, 3]
    ("zeros_like", lambda T, x, i: T.zeros_like(x)),
    ("ones_like_int", lambda T, x, i: T.ones_like(i)),
    ("full_like", lambda T, x, i: T.full_like(x, 7)),
    ("full_like_int_float_fill", lambda T, x, i: T.full_like(i, 2.5)),
    ("full_like_bool_fill", lambda T, x, i: T.full_like(x, True)),
    ("zeros_like_dtype", lambda T, x, i: T.zeros_like(x, dtype=T.float64)),
    ("ones_like_requires_grad", lambda T, x, i: T.ones_like(x, requires_grad=True)),
    ("empty_like_meta", lambda T, x, i: (lambda e: (e.shape, e.dtype, e.requires_grad))(
        T.empty_like(i))),
    ("zeros_like_0d", lambda T, x, i: T.zeros_like(x.sum())),
    ("zeros_like_view", lambda T, x, i: T.zeros_like(x.t())),
]


@pytest.mark.parametrize("name,fn", cases(LIKE))
def test_like(name, fn):
    xv = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
    both(lambda T: fn(T, T.tensor(xv, requires_grad=True), T.tensor(xv * 4).long()))


@pytest.fixture
def default_float64():
    torch.set_default_dtype(torch.float64)
    tl.set_default_dtype(tl.float64)
    yield
    torch.set_default_dtype(torch.float32)
    tl.set_default_dtype(tl.float32)


DEFAULT_F64 = [
    ("tensor_float", lambda T: T.tensor([1.5])),
    ("tensor_int", lambda T: T.tensor([1, 2])),
    ("tensor_mixed", lambda T: T.tensor([1, 2.5])),
    ("zeros", lambda T: T.zeros(2)),
    ("arange_float", lambda T: T.arange(0.5, 2)),
    ("arange_int", lambda T: T.arange(3)),
    ("linspace", lambda T: T.linspace(0, 1, 3)),
    ("full_float", lambda T: T.full((2,), 1.5)),
    ("int_times_float", lambda T: T.tensor([1, 2]) * 1.5),
    ("int_div", lambda T: T.tensor([1, 2]) / 2),
    ("f32_plus_scalar", lambda T: T.ones(2, dtype=T.float32) + 1.5),
    ("get_default", lambda T: T.get_default_dtype()),
    ("eye", lambda T: T.eye(2)),
]


@pytest.mark.parametrize("name,fn", cases(DEFAULT_F64))
def test_default_dtype_float64(name, fn, default_float64):
    both(fn)


# ------------------------------------------------------------------------------------------------
# Conversions and metadata
# ------------------------------------------------------------------------------------------------

CONVERT = [
    # name, fn(T), the error's message (None: a value row)
    ("item_float", lambda T: T.tensor(2.5).item(), None),
    ("item_float32_precision", lambda T: T.tensor(0.1).item(), None),
    ("item_float64", lambda T: T.tensor(0.1, dtype=T.float64).item(), None),
    ("item_int", lambda T: T.tensor([3]).item(), None),
    ("item_bool", lambda T: T.tensor(True).item(), None),
    ("item_f16", lambda T: T.tensor(1.1, dtype=T.float16).item(), None),
    ("item_nested_one", lambda T: T.tensor([[4.0]]).item(), None),
    ("item_many", lambda T: T.tensor([1.0, 2.0]).item(), "a Tensor with 2 elements cannot be "
     "converted to Scalar"),
    ("item_requires_grad", lambda T: T.tensor(2.0, requires_grad=True).item(), None),
    ("tolist_float", lambda T: T.tensor([[0.5, 1.5], [2.0, -1.0]]).tolist(), None),
    ("tolist_f32_precision", lambda T: T.tensor([0.1]).tolist(), None),
    ("tolist_int", lambda T: T.tensor([[1, 2], [3, 4]]).tolist(), None),
    ("tolist_bool", lambda T: T.tensor([True, False]).tolist(), None),
    ("tolist_0d", lambda T: T.tensor(3).tolist(), None),
    ("tolist_empty", lambda T: T.zeros(2, 0).tolist(), None),
    ("tolist_requires_grad", lambda T: T.ones(2, requires_grad=True).tolist(), None),
    ("float", lambda T: float(T.tensor(2.5)), None),
    ("float_of_int", lambda T: float(T.tensor(3)), None),
    ("float_1elem", lambda T: float(T.tensor([[2.5]])), None),
    ("float_many", lambda T: float(T.tensor([1.0, 2.0])),
     r"only one element tensors can be converted to Python scalars"),
    ("int", lambda T: int(T.tensor(2.7)), None),
    ("int_neg", lambda T: int(T.tensor(-2.7)), None),
    ("int_1elem", lambda T: int(T.tensor([3.9])), None),
    ("bool_true", lambda T: bool(T.tensor([1.0])), None),
    ("bool_false", lambda T: bool(T.tensor(0)), None),
    ("bool_many", lambda T: bool(T.tensor([1, 2])), "Boolean value of Tensor with more than one "
     "value is ambiguous"),
    ("bool_empty", lambda T: bool(T.tensor([])), r"^Boolean value of Tensor with no values is "
     r"ambiguous$"),
    ("if_tensor", lambda T: "yes" if T.tensor(2.0) > 1 else "no", None),
    ("index", lambda T: operator.index(T.tensor(3)), None),
    ("index_float", lambda T: operator.index(T.tensor(3.0)),
     r"only integer tensors of a single element can be converted to an index"),
    ("index_many", lambda T: operator.index(T.tensor([3, 4])),
     r"only integer tensors of a single element can be converted to an index"),
    ("list_index", lambda T: [10, 20, 30][T.tensor(1)], None),
    ("range", lambda T: list(range(T.tensor(3))), None),
    ("len", lambda T: len(T.zeros(4, 2)), None),
    ("len_0d", lambda T: len(T.tensor(1.0)), "len\\(\\) of a 0-d tensor"),
    ("iter_rows", lambda T: list(T.tensor([[1, 2], [3, 4]])), None),
    ("iter_0d", lambda T: list(T.tensor(1.0)), "iteration over a 0-d tensor"),
    ("iter_requires_grad", lambda T: list(T.ones(2, 2, requires_grad=True) * 2), None),
    ("unpack", lambda T: (lambda a, b: (a, b))(*T.tensor([1.5, 2.5])), None),
    ("numpy_requires_grad", lambda T: T.ones(2, requires_grad=True).numpy(),
     "Can't call numpy\\(\\) on Tensor that requires grad"),
    ("np_asarray_requires_grad", lambda T: np.asarray(T.ones(2, requires_grad=True)),
     "Can't call numpy\\(\\) on Tensor that requires grad"),
    ("numpy_detached", lambda T: T.ones(2, requires_grad=True).detach().numpy().dtype.name, None),
    ("np_asarray_dtype", lambda T: np.asarray(T.tensor([1, 2], dtype=T.int32)).dtype.name, None),
    ("np_asarray_values", lambda T: np.asarray(T.tensor([1.5, 2.5])).tolist(), None),
    ("np_asarray_cast", lambda T: np.asarray(T.tensor([1.5]), dtype=np.float64).dtype.name,
     None),
    ("np_array_f16", lambda T: np.array(T.tensor([1.5], dtype=T.float16)).dtype.name, None),
    ("np_ufunc", lambda T: float(np.sum(np.asarray(T.tensor([1.5, 2.5])))), None),
]


@pytest.mark.parametrize("name,fn,match", cases(CONVERT))
def test_conversions(name, fn, match):
    both(fn, match=match, raises=match is not None)


CASTS = [
    # name, fn(T, x): x float32 [6] with negatives and fractions, requiring grad
    ("float", lambda T, x: x.float()),
    ("float_is_self", lambda T, x: x.float() is x),
    ("double", lambda T, x: x.double()),
    ("half", lambda T, x: x.half()),
    ("bfloat16", lambda T, x: x.bfloat16()),
    ("long", lambda T, x: x.long()),
    ("int", lambda T, x: x.int()),
    ("short", lambda T, x: x.short()),
    ("char", lambda T, x: x.char()),
    ("byte", lambda T, x: x.abs().byte()),
    ("bool", lambda T, x: x.bool()),
    ("to_f64", lambda T, x: x.to(T.float64)),
    ("to_kw", lambda T, x: x.to(dtype=T.int32)),
    ("to_same_is_self", lambda T, x: x.to(T.float32) is x),
    ("to_device", lambda T, x: x.to("cpu")),
    ("to_device_is_self", lambda T, x: x.to("cpu") is x),
    ("to_device_dtype", lambda T, x: x.to("cpu", T.float64)),
    ("to_other", lambda T, x: x.to(T.zeros(1, dtype=T.float16))),
    ("to_copy", lambda T, x: x.to(T.float32, copy=True)),
    ("to_python_float", lambda T, x: x.to(float)),
    ("cpu_is_self", lambda T, x: x.cpu() is x),
    ("double_then_float", lambda T, x: x.double().float() * 2),
    ("long_then_float", lambda T, x: x.long().float()),
    ("bool_roundtrip", lambda T, x: x.bool().long()),
    ("int_to_float", lambda T, x: x.long().to(T.float32)),
    ("int_to_bool", lambda T, x: x.long().bool()),
]


@pytest.mark.parametrize("name,fn", cases(CASTS))
def test_casts(name, fn):
    xv = [-2.7, -1.5, -0.2, 0.0, 0.6, 2.5]
    if not name.startswith("to_same") and "is_self" not in name:
        check_op(name, lambda T, x: fn(T, x), [L(xv)])
    else:
        both(lambda T: fn(T, T.tensor(xv, requires_grad=True)))


META = [
    # name, fn(T, x): x float32 [2, 3, 4] requiring grad
    ("shape", lambda T, x: x.shape),
    ("size", lambda T, x: x.size()),
    ("size_dim", lambda T, x: x.size(1)),
    ("size_neg", lambda T, x: x.size(-1)),
    ("shape_eq_tuple", lambda T, x: x.shape == (2, 3, 4)),
    ("shape_index", lambda T, x: x.shape[0]),
    ("shape_slice", lambda T, x: x.shape[1:]),
    ("shape_numel", lambda T, x: x.shape.numel()),
    ("dim", lambda T, x: x.dim()),
    ("ndim", lambda T, x: x.ndim),
    ("ndimension", lambda T, x: x.ndimension()),
    ("numel", lambda T, x: x.numel()),
    ("numel_fn", lambda T, x: T.numel(x)),
    ("nelement", lambda T, x: x.nelement()),
    ("dtype", lambda T, x: x.dtype),
    ("dtype_is_floating", lambda T, x: (x.dtype.is_floating_point,
                                        x.long().dtype.is_floating_point)),
    ("dtype_itemsize", lambda T, x: (x.dtype.itemsize, x.half().dtype.itemsize)),
    ("device", lambda T, x: x.device),
    ("device_type", lambda T, x: x.device.type),
    ("is_cpu", lambda T, x: x.is_cpu),
    ("is_cuda", lambda T, x: x.is_cuda),
    ("is_leaf", lambda T, x: (x.is_leaf, (x * 2).is_leaf, x.detach().is_leaf)),
    ("requires_grad", lambda T, x: (x.requires_grad, x.detach().requires_grad)),
    ("is_floating_point", lambda T, x: (x.is_floating_point(), x.long().is_floating_point(),
                                        T.is_floating_point(x))),
    ("is_tensor", lambda T, x: (T.is_tensor(x), T.is_tensor([1]))),
    ("isinstance", lambda T, x: isinstance(x, T.Tensor)),
    ("element_size", lambda T, x: (x.element_size(), x.double().element_size())),
    ("stride", lambda T, x: x.stride()),
    ("stride_dim", lambda T, x: x.stride(1)),
    ("stride_t", lambda T, x: x.transpose(0, 2).stride()),
    ("stride_slice", lambda T, x: x[:, ::2].stride()),
    ("is_contiguous", lambda T, x: (x.is_contiguous(), x.transpose(0, 1).is_contiguous(),
                                    x.transpose(0, 1).contiguous().is_contiguous())),
    ("T_shape", lambda T, x: x[0].T.shape),
    ("grad_none", lambda T, x: x.grad),
    ("output_nr", lambda T, x: x.output_nr),
    ("dtype_aliases", lambda T, x: [T.float, T.double, T.long, T.int, T.half, T.short, T.bool]),
    ("dtype_eq", lambda T, x: (T.float32 == T.float, T.float32 is T.float, T.int32 == T.int64)),
    ("dtype_repr", lambda T, x: [repr(T.float32), str(T.int64), repr(T.bfloat16)]),
    ("device_eq", lambda T, x: (T.device("cpu") == x.device, repr(T.device("cpu")),
                                str(T.device("cpu")))),
    ("size_repr", lambda T, x: repr(x.shape)),
    ("size_type", lambda T, x: (type(x.shape).__name__, isinstance(x.shape, tuple))),
    ("hash_identity", lambda T, x: {x: 1}[x]),
    ("get_device", lambda T, x: x.get_device()),
]


@pytest.mark.parametrize("name,fn", cases(META))
def test_metadata(name, fn):
    xv = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    both(lambda T: fn(T, T.tensor(xv, requires_grad=True)))


# The errors of the value tables above (rows of the same names, moved here to declare that
# torch raises)
X23, B4 = [A((2, 3)), A((2, 3)), A((2, 3), "float64")], A((4,), "bool")
OP_ERRORS = [
    # name, fn(T, *xs), inputs, torch's message
    ("neg_bool", lambda T, x: -x, [A((2, 3), "bool")],
     r"^Negation, the `-` operator, on a bool tensor is not supported\. If you are trying to "
     r"invert a mask, use the `~` or `logical_not\(\)` operator instead\.$"),
    ("sub_bool_bool", lambda T, a, b: a - b, [B4, B4],
     r"^Subtraction, the `-` operator, with two bool tensors is not supported\. Use the `\^` or "
     r"`logical_xor\(\)` operator instead\.$"),
    ("i64**-1", lambda T, x: x ** -1, [A((3,), "int64", "nz")],
     r"^Integers to negative integer powers are not allowed\.$"),
    ("i64//0", lambda T, x: x // 0, [A((3,), "int64")], r"^ZeroDivisionError$"),
    ("i64.fmod(0)", lambda T, x: T.fmod(x, 0), [A((3,), "int64")], r"^ZeroDivisionError$"),
    ("i64-True", lambda T, x: x - True, [A((3,), "int64")],
     r"^Subtraction, the `-` operator, with a bool tensor is not supported\. If you are trying "
     r"to invert a mask, use the `~` or `logical_not\(\)` operator instead\.$"),
    ("sum_bad_dim", lambda T, x: x.sum(3), [A((2, 3))],
     r"^Dimension out of range \(expected to be in range of \[-2, 1\], but got 3\)$"),
    ("mean_int", lambda T, x: x.mean(), [A((2, 3), "int64")],
     r"^mean\(\): could not infer output dtype\. Input dtype must be either a floating point or "
     r"complex dtype\. Got: Long$"),
    ("cat_mismatch", lambda T, a, b, c: T.cat([a, b[:1]], 1), X23,
     r"^Sizes of tensors must match except in dimension 1\. Expected size 2 but got size 1 for "
     r"tensor number 1 in the list\.$"),
    ("cat_rank_mismatch", lambda T, a, b, c: T.cat([a, b[0]]), X23,
     r"^Tensors must have same number of dimensions: got 2 and 1$"),
    ("cat_empty_list", lambda T, a, b, c: T.cat([]), X23,
     r"^torch\.cat\(\): expected a non-empty list of Tensors$"),
    ("stack_mismatch", lambda T, a, b, c: T.stack([a, b[:1]]), X23,
     r"^stack expects each tensor to be equal size, but got \[2, 3\] at entry 0 and \[1, 3\] at "
     r"entry 1$"),
    ("where_nonbool_cond", lambda T, a, b, c: T.where(a, a, b), X23,
     r"^where expected condition to be a boolean tensor, but got a tensor with dtype Float$"),
    ("clamp_none", lambda T, a, b, c: T.clamp(a), X23,
     r"^torch\.clamp: At least one of 'min' or 'max' must not be None$"),
    ("ones_like_int_requires_grad", lambda T, i: T.ones_like(i, requires_grad=True),
     [A((2, 3), "int64")], r"^Only Tensors of floating point and complex dtype can require "
     r"gradients$"),
    ("size_bad", lambda T, x: x.size(3), [A((2, 3, 4))],
     r"^Dimension out of range \(expected to be in range of \[-3, 2\], but got 3\)$"),
]


@pytest.mark.parametrize("name,fn,inputs,match", cases(OP_ERRORS))
def test_op_errors(name, fn, inputs, match):
    check_op(name, fn, inputs, match=match, raises=True)


def test_dlpack_torch_from_torchlike():
    x = tl.tensor([[1.0, 2.0], [3.0, 4.0]])
    y = torch.from_dlpack(x)
    assert y.dtype == torch.float32 and y.tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_dlpack_torchlike_from_torch():
    x = torch.arange(6, dtype=torch.int32).reshape(2, 3)
    y = tl.from_dlpack(x)
    assert isinstance(y, tl.Tensor)
    assert y.dtype == tl.int32 and y.tolist() == x.tolist()


def test_dlpack_numpy_from_torchlike():
    y = np.from_dlpack(tl.tensor([1.5, 2.5], dtype=tl.float64))
    assert y.dtype == np.float64 and y.tolist() == [1.5, 2.5]


def test_dlpack_device():
    assert tl.ones(2).__dlpack_device__() == torch.ones(2).__dlpack_device__()


# ------------------------------------------------------------------------------------------------
# repr
# ------------------------------------------------------------------------------------------------

REPR = [
    # name, fn(T) -> tensor whose repr() is compared
    ("float", lambda T: T.tensor([1.0, 2.0])),
    ("float_frac", lambda T: T.tensor([1.5, -0.25, 3.0])),
    ("float_2d", lambda T: T.tensor([[1.0, 2.0], [3.0, 4.0]])),
    ("int64", lambda T: T.tensor([1, 2])),
    ("int32", lambda T: T.tensor([1, 2], dtype=T.int32)),
    ("uint8", lambda T: T.tensor([1, 2], dtype=T.uint8)),
    ("float64", lambda T: T.tensor([1.0, 2.0], dtype=T.float64)),
    ("float16", lambda T: T.tensor([1.0, 2.5], dtype=T.float16)),
    ("bfloat16", lambda T: T.tensor([1.0, 2.5], dtype=T.bfloat16)),
    ("bool", lambda T: T.tensor([True, False])),
    ("scalar", lambda T: T.tensor(3.5)),
    ("scalar_int", lambda T: T.tensor(3)),
    ("scalar_f64", lambda T: T.tensor(3.5, dtype=T.float64)),
    ("empty", lambda T: T.tensor([])),
    ("empty_int32", lambda T: T.tensor([], dtype=T.int32)),
    ("empty_2d", lambda T: T.zeros(0, 3)),
    ("requires_grad", lambda T: T.tensor([1.0, 2.0], requires_grad=True)),
    ("requires_grad_f64", lambda T: T.tensor([1.5], dtype=T.float64, requires_grad=True)),
    ("grad_fn_mul", lambda T: T.tensor([1.0, 2.0], requires_grad=True) * 2),
    ("grad_fn_sum", lambda T: T.tensor([1.0, 2.0], requires_grad=True).sum()),
    ("grad_fn_f64", lambda T: T.tensor([1.0, 2.0], requires_grad=True).double()),
    ("grad_fn_select", lambda T: T.ones(2, 2, requires_grad=True)[0]),
    ("nan_inf", lambda T: T.tensor([math.nan, math.inf, -math.inf, 1.0])),
    ("sci", lambda T: T.tensor([1e-5, 1e5])),
    ("large_ints", lambda T: T.tensor([1e10, 2.0])),
    ("detached", lambda T: (T.ones(2, requires_grad=True) * 2).detach()),
    ("no_grad_result", lambda T: T.no_grad()(lambda: T.ones(2, requires_grad=True) * 2)()),
]


@pytest.mark.parametrize("name,fn", cases(REPR))
def test_repr(name, fn):
    both(lambda T: (repr(fn(T)), str(fn(T))))


def test_repr_long_summarized():
    both(lambda T: repr(T.arange(2000)))


@pytest.mark.parametrize("name,fn", cases([
    ("add", lambda T, a: T.add(a, 1, out=T.empty(3))),
    ("cat", lambda T, a: T.cat([a], out=T.empty(3))),
    ("exp", lambda T, a: T.exp(a, out=T.empty(3))),
    ("mul", lambda T, a: T.mul(a, a, out=T.empty(3))),
    ("sum", lambda T, a: T.sum(a, 0, out=T.empty(()))),
]))
def test_out_with_grad_names_the_op(name, fn):
    both(lambda T: fn(T, T.ones(3, requires_grad=True)),
         match=rf"^{name}\(\): functions with out=\.\.\. arguments don't support automatic "
               r"differentiation, but one of the arguments requires grad\.", raises=True)
