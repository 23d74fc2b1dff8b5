"""The meta device (NOTE [ the meta device ] in torchlike/_meta.py) against real torch's meta
tensors: factories, ops with autograd, the errors of reading values or moving off meta, and
models built on meta then given storage (``to_empty`` + ``reset_parameters``, or
``load_state_dict(..., assign=True)``).

A meta tensor has a shape, a dtype and a grad_fn but no values, so its repr
(``tensor(..., device='meta', size=(2, 3), dtype=..., grad_fn=<...>)``) says everything there is
to compare: the rows compare reprs exactly.  Values appear only once a model built on meta gets
storage; their oracle is the same model built on the CPU by torchlike itself.

Cases are spec tables: one row per case (docs/architecture.md §7.5).
"""
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl

from parity import cases


def shown(x):
    """What a result shows of itself: a tensor's repr; sequences item by item, with the type's
    name (a torch.return_types namedtuple, tuple or list)."""
    if isinstance(x, (torch.Tensor, tl.Tensor)):
        return repr(x)
    if isinstance(x, (tuple, list)):
        return (type(x).__name__, [shown(v) for v in x])
    return repr(x)


def outcome(fn, T):
    """``shown(fn(T))``, or what it raised (type and message)."""
    try:
        return shown(fn(T))
    except Exception as e:  # noqa: BLE001 - the exception itself is the result under test
        return (type(e).__name__, str(e))


def same_repr(fn):
    ref, got = outcome(fn, torch), outcome(fn, tl)
    assert ref == got, f"\ntorch:     {ref}\ntorchlike: {got}"


def meta(T, shape, dtype="float32", grad=True):
    """An empty meta tensor; a floating one requires grad unless ``grad`` is False."""
    t = T.empty(shape, dtype=getattr(T, dtype), device="meta")
    return t.requires_grad_() if grad and t.is_floating_point() else t


# ------------------------------------------------------------------------------------------------
# Factories
# ------------------------------------------------------------------------------------------------

def _default_meta(T):
    T.set_default_device("meta")
    try:
        return [T.ones(2, 3), T.arange(4), T.randn(3), T.tensor([1.0, 2.0]), T.eye(2),
                T.empty(0), T.full((2,), 7)]
    finally:
        T.set_default_device(None)


def _with_meta(T):
    with T.device("meta"):
        return [T.zeros(3, dtype=T.float64), T.rand(2, 2), T.randint(5, (3,)),
                T.linspace(0, 1, 4), T.nn.Linear(2, 3).weight]


FACTORIES = [
    ("empty", lambda T: T.empty(2, 3, device="meta")),
    ("empty_grad", lambda T: T.empty(2, 3, device="meta", requires_grad=True)),
    ("empty_f16", lambda T: T.empty((4,), device="meta", dtype=T.float16)),
    ("empty_0d", lambda T: T.empty((), device="meta")),
    ("empty_zero_size", lambda T: T.empty(0, 3, device="meta")),
    ("zeros_int", lambda T: T.zeros(2, 3, device="meta", dtype=T.int64)),
    ("ones_bool", lambda T: T.ones(2, device=T.device("meta"), dtype=T.bool)),
    ("ones_c64", lambda T: T.ones(2, device="meta", dtype=T.complex64)),
    ("full_float", lambda T: T.full((2, 2), 1.5, device="meta")),
    ("full_int", lambda T: T.full((2, 2), 3, device="meta")),
    ("full_bool", lambda T: T.full((3,), True, device="meta")),
    ("arange_int", lambda T: T.arange(5, device="meta")),
    ("arange_float", lambda T: T.arange(0, 1, 0.25, device="meta")),
    ("linspace", lambda T: T.linspace(0, 1, 7, device="meta")),
    ("logspace_f64", lambda T: T.logspace(0, 2, 3, device="meta", dtype=T.float64)),
    ("eye", lambda T: T.eye(3, 4, device="meta")),
    ("tensor_list", lambda T: T.tensor([[1, 2], [3, 4]], device="meta")),
    ("tensor_float_grad", lambda T: T.tensor([1.0, 2.0], device="meta", requires_grad=True)),
    ("tensor_scalar", lambda T: T.tensor(3.5, device="meta", dtype=T.float64)),
    ("as_tensor", lambda T: T.as_tensor([1, 2, 3], device="meta")),
    ("rand", lambda T: T.rand(2, 3, device="meta")),
    ("randn_f64", lambda T: T.randn(4, device="meta", dtype=T.float64)),
    ("randint", lambda T: T.randint(0, 10, (2, 5), device="meta")),
    ("randint_int32", lambda T: T.randint(3, (4,), device="meta", dtype=T.int32)),
    ("randperm", lambda T: T.randperm(6, device="meta")),
    ("empty_like", lambda T: T.empty_like(meta(T, (2, 3)))),
    ("zeros_like_int", lambda T: T.zeros_like(meta(T, (2, 3), "int32"))),
    ("ones_like_grad", lambda T: T.ones_like(meta(T, (2,)), requires_grad=True)),
    ("full_like", lambda T: T.full_like(meta(T, (2, 3)), 2.0)),
    ("rand_like", lambda T: T.rand_like(meta(T, (3,), "float64"))),
    ("randn_like", lambda T: T.randn_like(meta(T, (2, 2)))),
    ("randint_like", lambda T: T.randint_like(meta(T, (3,)), 10)),
    ("zeros_like_from_cpu", lambda T: T.zeros_like(T.ones(2, 3), device="meta")),
    ("new_zeros", lambda T: meta(T, (2,)).new_zeros(3, 4)),
    ("new_ones_int", lambda T: meta(T, (2,), "int64").new_ones((2,))),
    ("new_empty", lambda T: meta(T, (2,), "float16").new_empty(5)),
    ("new_full", lambda T: meta(T, (2,)).new_full((2, 2), 3.0)),
    ("new_tensor", lambda T: meta(T, (2,)).new_tensor([1, 2, 3])),
    ("cpu_to_meta", lambda T: T.ones(2, 3, dtype=T.float64).to("meta")),
    ("cpu_to_meta_grad", lambda T: T.ones(2, requires_grad=True).to("meta")),
    ("with_device_meta", _with_meta),
    ("set_default_device_meta", _default_meta),
]


@pytest.mark.parametrize("name,fn", cases(FACTORIES))
def test_factory(name, fn):
    same_repr(fn)


def test_huge_empty_allocates_nothing():
    """2**40 float32 elements (4 TiB) on meta: a shape and a dtype, no storage."""
    t = tl.empty(2 ** 40, device="meta")
    assert repr(t) == repr(torch.empty(2 ** 40, device="meta"))
    assert t.is_meta and t.numel() == 2 ** 40 and t.element_size() == 4
    assert repr(tl.zeros(2 ** 20, 2 ** 20, device="meta") + 1) == repr(
        torch.zeros(2 ** 20, 2 ** 20, device="meta") + 1)


def _draws(T):
    """Every way to draw random values, on meta."""
    x = T.empty(3, 4, device="meta")
    T.rand(5, device="meta"), T.randn(2, 2, device="meta"), T.randint(9, (3,), device="meta")
    T.randperm(7, device="meta"), T.rand_like(x), T.randn_like(x), T.randint_like(x, 3)
    T.normal(x, 1.0), T.multinomial(x, 2), T.nn.functional.dropout(x)
    x.uniform_(), x.normal_(), x.bernoulli_(0.5), x.random_(0, 4), x.exponential_()
    x.cauchy_(), x.log_normal_(), x.geometric_(0.5)
    T.nn.init.kaiming_uniform_(x), T.nn.init.trunc_normal_(x), T.nn.init.xavier_normal_(x)
    T.nn.Linear(4, 4, device="meta"), T.nn.Embedding(5, 3, device="meta")


@pytest.mark.parametrize("T", [torch, tl], ids=["torch", "torchlike"])
def test_drawing_on_meta_leaves_the_generator(T):
    """Meta has no generator: drawing there leaves the CPU generator as it was, and the next
    CPU draw is the one it would have been (torch is checked as the oracle of the claim)."""
    T.manual_seed(7)
    expected = T.rand(3)
    T.manual_seed(7)
    before = T.get_rng_state()
    _draws(T)
    assert T.equal(T.get_rng_state(), before)
    assert T.equal(T.rand(3), expected)


# ------------------------------------------------------------------------------------------------
# Ops with autograd
# ------------------------------------------------------------------------------------------------

F32, F64, I64, I32, B8 = "float32", "float64", "int64", "int32", "bool"


def _write_rows(T, x, y):
    c = x.clone()
    c[0] = y[1]
    c[:, 1].mul_(2)
    c.view(-1)[2:5].zero_()
    return c


def _write_mask(T, x):
    c = x.clone()
    c.masked_fill_(x > 0, 0.0)
    return c


def _index_put(T, x, v):
    c = x.clone()
    c[T.tensor([0, 2]), T.tensor([1, 1])] = v
    return c


OPS = [
    # name, fn(T, *inputs), inputs as (shape, dtype[, grad]); floating inputs require grad
    # unless grad is False
    # pointwise and type promotion
    ("add", lambda T, a, b: a + b, [((2, 3), F32), ((3,), F32)]),
    ("add_alpha", lambda T, a, b: T.add(a, b, alpha=2), [((2, 3), F32), ((2, 1), F32)]),
    ("sub_broadcast", lambda T, a, b: a - b, [((3, 1), F32), ((1, 4), F32)]),
    ("div_int_int", lambda T, a, b: a / b, [((3,), I64), ((3,), I64)]),
    ("int_plus_float_scalar", lambda T, a: a + 1.5, [((3,), I64)]),
    ("int_times_float", lambda T, a, b: a * b, [((3,), I32), ((3,), F32)]),
    ("f16_plus_f32", lambda T, a, b: a + b, [((3,), "float16"), ((3,), F32)]),
    ("f32_plus_f64_0d", lambda T, a, b: a + b, [((3,), F32), ((), F64)]),
    ("uint8_plus_int8", lambda T, a, b: a + b, [((3,), "uint8"), ((3,), "int8")]),
    ("bool_plus_int", lambda T, a, b: a + b, [((3,), B8), ((3,), I32)]),
    ("pow_scalar", lambda T, a: a ** 2, [((2, 3), F32)]),
    ("pow_tensor", lambda T, a, b: T.pow(a, b), [((2, 3), F32), ((3,), F64)]),
    ("sin_tanh_sigmoid", lambda T, a: T.sin(a).tanh().sigmoid(), [((4,), F64)]),
    ("relu_gelu", lambda T, a: T.nn.functional.gelu(T.relu(a)), [((2, 3), F32)]),
    ("where", lambda T, c, a, b: T.where(c, a, b), [((2, 3), B8), ((2, 3), F32), ((3,), F32)]),
    ("addcmul", lambda T, a, b, c: T.addcmul(a, b, c, value=0.5),
     [((3,), F32), ((2, 3), F32), ((3,), F32)]),
    ("maximum", lambda T, a, b: T.maximum(a, b), [((2, 3), F32), ((3,), F32)]),
    ("atan2", lambda T, a, b: T.atan2(a, b), [((2, 3), F32), ((3,), F64)]),
    ("compare", lambda T, a, b: a < b, [((2, 3), F32), ((3,), F32)]),
    ("logical_and", lambda T, a, b: T.logical_and(a, b), [((3,), B8), ((3,), F32)]),
    ("bitwise_xor", lambda T, a, b: a ^ b, [((3,), I64), ((3,), I32)]),
    ("complex_abs", lambda T, a, b: T.complex(a, b).abs(), [((3,), F32), ((3,), F32)]),
    # reductions
    ("sum_all", lambda T, a: a.sum(), [((2, 3), F32)]),
    ("sum_dim_keepdim", lambda T, a: a.sum(1, keepdim=True), [((2, 3, 4), F32)]),
    ("sum_int", lambda T, a: a.sum(0), [((2, 3), I32)]),
    ("mean_dims", lambda T, a: a.mean((0, 2)), [((2, 3, 4), F64)]),
    ("amax_dims", lambda T, a: a.amax((0, 1)), [((2, 3, 4), F32)]),
    ("max_dim", lambda T, a: a.max(1), [((2, 3), F32)]),
    ("std", lambda T, a: a.std(0), [((2, 3), F32)]),
    ("norm_dim", lambda T, a: T.linalg.vector_norm(a, 2, dim=1), [((2, 3), F32)]),
    ("cumsum", lambda T, a: a.cumsum(1), [((2, 3), F32)]),
    ("any_all", lambda T, a: [a.any(0), a.all()], [((2, 3), B8)]),
    ("sort", lambda T, a: a.sort(1, descending=True), [((2, 3), F32)]),
    # matmul family
    ("matmul", lambda T, a, b: a @ b, [((2, 3), F32), ((3, 4), F32)]),
    ("matmul_batched", lambda T, a, b: T.matmul(a, b), [((5, 2, 3), F32), ((3, 4), F32)]),
    ("bmm", lambda T, a, b: T.bmm(a, b), [((2, 3, 4), F32), ((2, 4, 5), F32)]),
    ("einsum", lambda T, a, b: T.einsum("bij,bjk->bik", a, b),
     [((2, 3, 4), F32), ((2, 4, 5), F32)]),
    ("addmm", lambda T, c, a, b: T.addmm(c, a, b), [((4,), F32), ((2, 3), F32), ((3, 4), F32)]),
    ("linear", lambda T, x, w, b: T.nn.functional.linear(x, w, b),
     [((5, 3), F32), ((4, 3), F32), ((4,), F32)]),
    # views, indexing, joining
    ("view", lambda T, a: a.view(3, 2), [((2, 3), F32)]),
    ("reshape_t", lambda T, a: a.t().reshape(-1), [((2, 3), F32)]),
    ("permute", lambda T, a: a.permute(2, 0, 1), [((2, 3, 4), F32)]),
    ("unsqueeze_squeeze", lambda T, a: a.unsqueeze(1).squeeze(0), [((1, 3), F32)]),
    ("expand", lambda T, a: a.expand(4, 3), [((1, 3), F32)]),
    ("index_int", lambda T, a: a[1], [((2, 3), F32)]),
    ("index_slice_step", lambda T, a: a[:, ::2], [((2, 5), F32)]),
    ("index_none_ellipsis", lambda T, a: a[None, ..., 0], [((2, 3, 4), F32)]),
    ("index_cpu_tensor", lambda T, a: a[T.tensor([1, 0, 1])], [((2, 3), F32)]),
    ("index_cpu_tensors_2d", lambda T, a: a[T.tensor([0, 1]), T.tensor([2, 0])],
     [((2, 3), F32)]),
    ("index_cpu_bool_mask", lambda T, a: a[T.tensor([True, False, True])], [((3, 2), F32)]),
    ("gather_meta_index", lambda T, a, i: a.gather(1, i), [((2, 3), F32), ((2, 2), I64)]),
    ("chunk", lambda T, a: a.chunk(2, 1), [((2, 4), F32)]),
    ("diagonal_movedim", lambda T, a: a.diagonal(0, 1, 2).movedim(0, 1), [((2, 3, 3), F32)]),
    ("repeat", lambda T, a: a.repeat(2, 1, 1), [((2, 3), F32)]),
    ("cat", lambda T, a, b: T.cat([a, b], 0), [((2, 3), F32), ((1, 3), F32)]),
    ("cat_promote", lambda T, a, b: T.cat([a, b], 1), [((2, 3), I64), ((2, 1), F32)]),
    ("stack", lambda T, a, b: T.stack([a, b], 1), [((2, 3), F32), ((2, 3), F32)]),
    # nn.functional
    ("conv2d", lambda T, x, w, b: T.nn.functional.conv2d(x, w, b, stride=2, padding=1),
     [((2, 3, 8, 8), F32), ((4, 3, 3, 3), F32), ((4,), F32)]),
    ("conv_transpose2d", lambda T, x, w: T.nn.functional.conv_transpose2d(x, w, stride=2),
     [((1, 3, 4, 4), F32), ((3, 2, 3, 3), F32)]),
    ("max_pool2d", lambda T, x: T.nn.functional.max_pool2d(x, 2), [((2, 3, 6, 6), F32)]),
    ("adaptive_avg_pool2d", lambda T, x: T.nn.functional.adaptive_avg_pool2d(x, (2, 3)),
     [((1, 2, 6, 7), F32)]),
    ("batch_norm_train", lambda T, x, w, b: T.nn.functional.batch_norm(
        x, T.zeros(3, device="meta"), T.ones(3, device="meta"), w, b, training=True),
     [((4, 3, 5), F32), ((3,), F32), ((3,), F32)]),
    ("layer_norm", lambda T, x, w, b: T.nn.functional.layer_norm(x, (4,), w, b),
     [((2, 3, 4), F32), ((4,), F32), ((4,), F32)]),
    ("group_norm", lambda T, x: T.nn.functional.group_norm(x, 2), [((2, 4, 3), F32)]),
    ("softmax", lambda T, x: T.softmax(x, -1), [((2, 5), F32)]),
    ("cross_entropy", lambda T, x, y: T.nn.functional.cross_entropy(x, y),
     [((4, 5), F32), ((4,), I64)]),
    ("nll_loss_none", lambda T, x, y: T.nn.functional.nll_loss(x, y, reduction="none"),
     [((4, 5), F32), ((4,), I64)]),
    ("bce_with_logits", lambda T, x, y: T.nn.functional.binary_cross_entropy_with_logits(x, y),
     [((2, 3), F32), ((2, 3), F32)]),
    ("embedding", lambda T, i, w: T.nn.functional.embedding(i, w), [((2, 3), I64), ((5, 4), F32)]),
    ("interpolate", lambda T, x: T.nn.functional.interpolate(x, scale_factor=2),
     [((1, 2, 3, 3), F32)]),
    # linalg (shape-only on meta)
    ("qr", lambda T, a: T.linalg.qr(a), [((4, 3), F32)]),
    ("svd", lambda T, a: T.linalg.svd(a, full_matrices=False), [((4, 3), F32)]),
    ("det", lambda T, a: T.linalg.det(a), [((2, 3, 3), F32)]),
    # in-place and writes through views
    ("add_", lambda T, a, b: a.clone().add_(b), [((2, 3), F32), ((3,), F32)]),
    ("mul__int_by_0d_cpu", lambda T, a: a.clone().mul_(T.tensor(3)), [((2, 3), I64)]),
    ("relu_inplace", lambda T, a: T.nn.functional.relu(a * 1, inplace=True), [((2, 3), F32)]),
    ("write_through_views", _write_rows, [((3, 4), F32, False), ((3, 4), F32, False)]),
    ("write_through_views_grad", _write_rows, [((3, 4), F32), ((3, 4), F32)]),
    # gradients that accumulate (an input used twice, repeat + tile, attention)
    ("used_twice", lambda T, a: a * a.exp() + a, [((2, 3), F32)]),
    ("repeat_tile", lambda T, a: a.repeat(2, 1).tile(2), [((2, 3), F32)]),
    ("self_attention", lambda T, q: (q @ q.transpose(-1, -2)).softmax(-1) @ q,
     [((2, 3, 4), F32)]),
    ("masked_fill_", _write_mask, [((2, 3), F32)]),
    ("index_put_cpu_indices", _index_put, [((3, 2), F32), ((2,), F32)]),
    ("scatter_", lambda T, a, i, s: a.clone().scatter_(0, i, s),
     [((3, 2), F32), ((2, 2), I64), ((2, 2), F32)]),
    ("index_add_", lambda T, a, i, s: a.clone().index_add_(0, i, s),
     [((3, 2), F32), ((2,), I64), ((2, 2), F32)]),
    # dtype conversions
    ("to_float64", lambda T, a: a.to(T.float64), [((2, 3), F32)]),
    ("to_int64", lambda T, a: a.to(T.int64), [((2, 3), F32)]),
    ("type_as", lambda T, a, b: a.type_as(b), [((2,), I32), ((3,), F64)]),
]


@pytest.mark.parametrize("name,fn,inputs", cases(OPS))
def test_op(name, fn, inputs):
    """The result's repr (shape, dtype, grad_fn), then backward through every floating result
    with a grad_fn: the inputs' grads' reprs."""
    def go(T):
        xs = [meta(T, *spec) for spec in inputs]
        out = fn(T, *xs)
        flat = out if isinstance(out, (tuple, list)) else [out]
        roots = [o for o in flat if o.grad_fn is not None and o.is_floating_point()]
        if roots:
            T.autograd.backward(roots, [T.ones_like(o) for o in roots])
        return [out, [x.grad for x in xs]]
    same_repr(go)


# ------------------------------------------------------------------------------------------------
# Errors: values read, moves off meta, mixed devices, value-dependent ops
# ------------------------------------------------------------------------------------------------

def _m(T, *shape, dtype="float32"):
    return meta(T, shape, dtype, grad=False)


ERRORS = [
    # name, fn(T): both raise the same type with the same message
    ("item_0d", lambda T: _m(T).item()),
    ("item_one_element", lambda T: _m(T, 1, 1).item()),
    ("item_many_elements", lambda T: _m(T, 2, 3).item()),
    ("float", lambda T: float(_m(T))),
    ("int", lambda T: int(_m(T, 1, dtype="int64"))),
    ("index", lambda T: [1, 2][_m(T, dtype="int64")]),
    ("bool_0d", lambda T: bool(_m(T))),
    ("bool_many", lambda T: bool(_m(T, 2))),
    ("tolist", lambda T: _m(T, 2, 3).tolist()),
    ("tolist_0d", lambda T: _m(T).tolist()),
    ("numpy", lambda T: _m(T, 2, 3).numpy()),
    ("to_cpu", lambda T: _m(T, 2, 3).to("cpu")),
    ("to_cpu_dtype", lambda T: _m(T, 2).to("cpu", T.float64)),
    ("to_like_cpu", lambda T: _m(T, 2).to(T.ones(1))),
    ("cpu", lambda T: _m(T, 2, 3).cpu()),
    ("cpu_copy_from_meta", lambda T: T.ones(2, 3).copy_(_m(T, 2, 3))),
    ("module_to_cpu", lambda T: T.nn.Linear(2, 2, device="meta").to("cpu")),
    ("mix_cpu_tensor", lambda T: _m(T, 2, 3) + T.ones(3)),
    ("mix_cpu_tensor_same_shape", lambda T: T.mul(_m(T, 2, 3), T.ones(2, 3))),
    ("stack_with_cpu", lambda T: T.stack([_m(T, 3), T.ones(3)])),
    ("backward_without_grad", lambda T: _m(T, 2).sum().backward()),
]


@pytest.mark.parametrize("name,fn", cases(ERRORS))
def test_error(name, fn):
    ref, got = outcome(fn, torch), outcome(fn, tl)
    assert isinstance(ref, tuple) and ref[0].endswith("Error"), f"test is wrong: torch {ref}"
    assert ref == got, f"\ntorch:     {ref}\ntorchlike: {got}"


VALUE_DEPENDENT = [
    # name, fn(T): the result's shape depends on values meta does not have; PyTorch raises
    # NotImplementedError (its messages name its kernels; torchlike's say why)
    ("nonzero", lambda T: _m(T, 2, 3).nonzero()),
    ("argwhere", lambda T: _m(T, 2, 3).argwhere()),
    ("where_one_arg", lambda T: T.where(_m(T, 2, 3, dtype="bool"))),
    ("unique", lambda T: T.unique(_m(T, 2, 3))),
    ("unique_consecutive", lambda T: _m(T, 4).unique_consecutive()),
    ("masked_select", lambda T: _m(T, 2, 3).masked_select(_m(T, 2, 3, dtype="bool"))),
    ("bincount", lambda T: T.bincount(_m(T, 3, dtype="int64"))),
    ("equal", lambda T: _m(T, 2).equal(_m(T, 2))),
]


@pytest.mark.parametrize("name,fn", cases(VALUE_DEPENDENT))
def test_value_dependent(name, fn):
    ref, got = outcome(fn, torch), outcome(fn, tl)
    assert ref[0] == "NotImplementedError", f"test is wrong: torch {ref}"
    assert got[0] == "NotImplementedError", f"torchlike: {got}"


JOINS = [
    # name, fn(T): a 0-dim CPU tensor joins meta tensors (as a Python scalar would)
    ("meta_plus_0d", lambda T: _m(T, 2, 3) + T.tensor(2.0)),
    ("0d_plus_meta", lambda T: T.tensor(2.0, dtype=T.float64) * _m(T, 2, 3)),
    ("0d_int_promotes_not", lambda T: _m(T, 2, dtype="int32") + T.tensor(7)),
    ("0d_float_into_int", lambda T: _m(T, 2, dtype="int32") * T.tensor(2.5)),
    ("where_0d_other", lambda T: T.where(_m(T, 3, dtype="bool"), _m(T, 3), T.tensor(0.0))),
    ("0d_grad_joins", lambda T: _m(T, 3) * T.tensor(2.0, requires_grad=True)),
]


@pytest.mark.parametrize("name,fn", cases(JOINS))
def test_0d_cpu_tensor_joins(name, fn):
    same_repr(fn)


# ------------------------------------------------------------------------------------------------
# Models built on meta
# ------------------------------------------------------------------------------------------------

def _cnn(T, device):
    nn = T.nn
    return nn.Sequential(nn.Conv2d(1, 4, 3, device=device), nn.BatchNorm2d(4, device=device),
                         nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(36, 5, device=device))


def _reset(m):
    """Every submodule's reset_parameters, in construction order (these modules draw only
    there)."""
    for mod in m.modules():
        if hasattr(mod, "reset_parameters"):
            mod.reset_parameters()


def _reset_attention(mha):
    """MultiheadAttention's constructor draws its out_proj (a Linear) first, then in
    _reset_parameters."""
    mha.out_proj.reset_parameters()
    mha._reset_parameters()


def _reset_encoder_layer(m):
    _reset_attention(m.self_attn)
    for mod in (m.linear1, m.linear2, m.norm1, m.norm2):
        mod.reset_parameters()


MODELS = [
    # name, build(T, device), forward inputs as (shape, dtype), reinitialise(model) as the
    # constructor draws, whether a training step follows (NOTE [ meta model rows ])
    ("Linear", lambda T, d: T.nn.Linear(4, 3, device=d), [((2, 4), F32)], _reset, True),
    ("Conv2d", lambda T, d: T.nn.Conv2d(3, 4, 3, padding=1, device=d), [((2, 3, 5, 5), F32)],
     _reset, True),
    ("BatchNorm2d", lambda T, d: T.nn.BatchNorm2d(3, device=d), [((2, 3, 4, 4), F32)], _reset,
     True),
    ("LayerNorm", lambda T, d: T.nn.LayerNorm(4, device=d), [((2, 4), F32)], _reset, True),
    ("Embedding_padding_idx", lambda T, d: T.nn.Embedding(6, 4, padding_idx=1, device=d),
     [((2, 3), I64)], _reset, True),
    ("LSTM", lambda T, d: T.nn.LSTM(4, 5, num_layers=2, batch_first=True, device=d),
     [((2, 3, 4), F32)], _reset, False),
    ("MultiheadAttention", lambda T, d: T.nn.MultiheadAttention(8, 2, batch_first=True, device=d),
     [((2, 3, 8), F32)] * 3, _reset_attention, False),
    ("TransformerEncoderLayer", lambda T, d: T.nn.TransformerEncoderLayer(
        8, 2, dim_feedforward=16, batch_first=True, device=d), [((2, 3, 8), F32)],
     _reset_encoder_layer, False),
    ("Sequential_CNN", _cnn, [((2, 1, 8, 8), F32)], _reset, True),
]

# NOTE [ meta model rows ]
# Once reinitialised, a model built on meta holds exactly the state of the one built on the CPU,
# so its training step is the CPU model's; the step shows nothing is left on meta (a buffer, a
# flag) and is run for the layers whose first eager step compiles in well under a second.  The
# recurrent and attention rows skip it: their first step is seconds of op compiles, and
# test_nn_layers / test_nn_rnn check their gradients against torch's on the CPU already.


def _tensors(m):
    return list(m.named_parameters()) + list(m.named_buffers())


def _described(m):
    """Each parameter and buffer: name, class, shape, dtype, device, requires_grad."""
    return [(n, type(t).__name__, tuple(t.shape), str(t.dtype), str(t.device), t.requires_grad)
            for n, t in _tensors(m)]


def _inputs(T, specs, device, seed=0):
    rng = np.random.default_rng(seed)
    xs = []
    for shape, dtype in specs:
        v = rng.integers(0, 6, shape) if dtype == I64 else rng.standard_normal(shape)
        xs.append(T.tensor(v, dtype=getattr(T, dtype)).to(device))
    return xs


def _step(T, m, xs):
    """One SGD step on sum(out ** 2) of the first output (dropout drawn under a fixed seed);
    the loss."""
    opt = T.optim.SGD(m.parameters(), lr=0.1)
    T.manual_seed(5)
    out = m(*xs)
    out = out[0] if isinstance(out, tuple) else out
    loss = out.pow(2).sum()
    loss.backward()
    opt.step()
    return loss


def _state(m):
    return {k: v.detach().numpy() for k, v in m.state_dict().items()}


def _assert_state_equal(got, ref):
    assert list(got) == list(ref)
    for k in ref:
        np.testing.assert_array_equal(got[k], ref[k], err_msg=k)


def _same_steps(m, ref, xs, monkeypatch):
    """A training step of ``m`` and of ``ref`` give the same loss and the same state.  Both walk
    the graph node by node: the second would run its fused backward (NOTE [ the fused backward
    in tests ] in conftest.py), a program of its own that rounds differently in the last bits."""
    monkeypatch.setattr(tl.autograd.fused, "enabled", False)
    assert _step(tl, m, xs).item() == _step(tl, ref, xs).item()
    _assert_state_equal(_state(m), _state(ref))


@pytest.mark.parametrize("name,build,inputs,reinit,step", cases(MODELS))
def test_model_on_meta(name, build, inputs, reinit, step, monkeypatch):
    """Built on meta: torch's parameters and buffers, and torch's forward repr.  Then
    to_empty(device='cpu') gives storage of the same shapes, reinitialising under a seed gives
    the values the CPU construction under that seed gives, and a training step matches it."""
    def on_meta(T):
        m = build(T, "meta")
        xs = [meta(T, shape, dtype, grad=False) for shape, dtype in inputs]
        return m, [_described(m), shown(m(*xs))]
    (tm, ref), (m, got) = on_meta(torch), on_meta(tl)
    assert got == ref, f"\ntorch:     {ref}\ntorchlike: {got}"

    described = [(n, c, s, dt, "cpu", rg) for n, c, s, dt, _, rg in ref[0]]
    assert _described(tm.to_empty(device="cpu")) == described   # the oracle of the claim
    assert m.to_empty(device="cpu") is m
    assert _described(m) == described

    tl.manual_seed(11)
    reinit(m)
    tl.manual_seed(11)
    cpu = build(tl, "cpu")
    _assert_state_equal(_state(m), _state(cpu))
    if not step:
        return
    xs = _inputs(tl, inputs, "cpu")
    _same_steps(m, cpu, xs, monkeypatch)


def _frozen_cnn(T, device):
    m = _cnn(T, device)
    m[0].weight.requires_grad_(False)
    return m


def test_load_state_dict_assign(monkeypatch):
    """load_state_dict(..., assign=True) into a model built on meta: Parameters holding the
    checkpoint's values, each keeping the model's requires_grad (the frozen conv weight stays
    frozen, as in torch); a training step then matches the checkpoint's model's."""
    def loaded(T):
        T.manual_seed(3)
        sd = {k: v.clone() for k, v in _frozen_cnn(T, "cpu").state_dict().items()}
        m = _frozen_cnn(T, "meta")
        result = m.load_state_dict(sd, assign=True)
        return m, sd, [repr(result), _described(m)]
    (_, _, ref), (m, sd, got) = loaded(torch), loaded(tl)
    assert got == ref, f"\ntorch:     {ref}\ntorchlike: {got}"
    _assert_state_equal(_state(m), {k: v.numpy() for k, v in sd.items()})
    tl.manual_seed(3)
    cpu = _frozen_cnn(tl, "cpu")
    _same_steps(m, cpu, _inputs(tl, MODELS[-1][2], "cpu"), monkeypatch)


def test_load_state_dict_into_meta_warns():
    """Without assign, copying a CPU checkpoint into meta parameters is a no-op: torch's
    UserWarning for each key, and the model stays on meta."""
    def load(T):
        sd = _cnn(T, "cpu").state_dict()
        m = _cnn(T, "meta")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m.load_state_dict(sd)
        return [[(w.category.__name__, str(w.message)) for w in caught], _described(m)]
    ref, got = load(torch), load(tl)
    assert ref[0], "test is wrong: torch gave no warning"
    assert got == ref, f"\ntorch:     {ref}\ntorchlike: {got}"


def test_skip_init():
    """nn.utils.skip_init builds on meta and lands on the given device (default cpu) without
    drawing: the CPU generator is left as it was."""
    def skipped(T):
        T.manual_seed(0)
        before = T.get_rng_state()
        ms = [T.nn.utils.skip_init(T.nn.Linear, 4, 3, device="cpu"),
              T.nn.utils.skip_init(T.nn.Conv2d, 2, 3, 3, bias=False),
              T.nn.utils.skip_init(T.nn.Embedding, 5, 2, device="meta")]
        return [T.equal(T.get_rng_state(), before)] + [_described(m) for m in ms]
    ref, got = skipped(torch), skipped(tl)
    assert ref[0] is True
    assert got == ref, f"\ntorch:     {ref}\ntorchlike: {got}"


@pytest.mark.parametrize("shape", [(5, 4), (2, 5, 4)])
def test_linear_backward_on_meta_twice(shape):
    """A linear's backward on meta, a second time over the kept graph (the gradients add up,
    and an N-d input's folded output view runs its backward from placeholders: NOTE [ folded
    views ] in torchlike/_dispatch.py): gradients of PyTorch's shapes on meta."""
    def run(T):
        lin = T.nn.Linear(4, 3, device="meta")
        x = T.randn(*shape, device="meta", requires_grad=True)
        loss = lin(x).sum()
        loss.backward(retain_graph=True)
        loss.backward()
        return [(tuple(t.grad.shape), str(t.grad.device)) for t in (x, lin.weight, lin.bias)]
    assert run(tl) == run(torch)
