"""Parity tests: creating and converting tensors against real PyTorch (CPU): creation functions,
the default dtype, conversions and casts, metadata, DLPack, repr.

Cases are spec tables run through the harness of parity.py: one row per case (docs/architecture.md
§7.5).
"""
import math
import operator

import numpy as np
import pytest
import torch

import torchlike as tl
from parity import L, both, cases, check_op

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
