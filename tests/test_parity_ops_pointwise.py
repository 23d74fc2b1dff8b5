"""Parity tests: torchlike's pointwise ops against real PyTorch (CPU): unary and binary ops,
Python scalars, type promotion, in-place arithmetic, comparisons, gradients at the edges.

Cases are spec tables run through the harness of parity.py: one row per case (docs/architecture.md
§7.5).
"""
import math

import numpy as np
import pytest
import torch

from parity import A, L, both, cases, check_op, seed_of

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
# Comparisons
# ------------------------------------------------------------------------------------------------

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
