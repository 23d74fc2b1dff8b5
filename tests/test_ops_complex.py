"""Parity tests for the complex-number family (torchlike/_ops/complex.py) against PyTorch.

Spec tables, one row per case: values, dtypes, shapes, grad_fn names and gradients against real
torch (check_op / both from parity, with complex inputs and complex upstream gradients),
strides and the lazy conj / neg bits of views, writes through real/imag/view_as_real/conj views,
finite differences in float64 (gradcheck on real-valued wrappers: torchlike's gradcheck takes
real tensors only), PyTorch's errors, and the traced (jax.jit) path.
"""
import math

import jax
import numpy as np
import pytest
import torch

import torchlike as tl
from torchlike.testing import assert_grads_match_jax, to_jax_function

from parity import A, both, cases, check_op

NAN, INF = math.nan, math.inf
COMPLEX = ("complex64", "complex128")
_PART = {"complex64": "float32", "complex128": "float64"}


class Z(A):
    """An input that may be complex (real and imaginary parts drawn as A draws real values);
    floating and complex inputs require grad."""

    def values(self, rng):
        if self.dtype not in COMPLEX:
            return super().values(rng)
        part = A(self.shape, _PART[self.dtype], self.dom)
        return (part.values(rng) + 1j * part.values(rng)).astype(self.dtype)

    def make(self, T, values):
        t = T.tensor(values, dtype=getattr(T, self.dtype))
        if self.grad and (t.dtype.is_floating_point or t.dtype.is_complex):
            t.requires_grad_()
        return t


def cx(fn):
    """fn, with a complex upstream gradient for complex results: check_op's upstream is real,
    so a hook multiplies it by fixed complex weights (the same in both libraries)."""
    def wrapped(T, *xs):
        out = fn(T, *xs)
        if isinstance(out, T.Tensor) and out.is_complex() and out.requires_grad:
            rng = np.random.default_rng(7)
            w = rng.standard_normal(tuple(out.shape)) + 1j * rng.standard_normal(tuple(out.shape))
            w = T.tensor(w, dtype=out.dtype)
            out.register_hook(lambda g: g * w)
        return out
    return wrapped


# ------------------------------------------------------------------------------------------------
# Views of complex tensors: real, imag, view_as_real, conj (and its real/imag), view_as_complex
# ------------------------------------------------------------------------------------------------

VIEWS = [
    # name, fn(T, z) on a complex [2, 3] tensor requiring grad
    ("real_attr", lambda T, z: z.real),
    ("imag_attr", lambda T, z: z.imag),
    ("real_fn", lambda T, z: T.real(z)),
    ("imag_fn", lambda T, z: T.imag(z)),
    ("real_of_nonleaf", lambda T, z: (z * 2).real),
    ("view_as_real", lambda T, z: T.view_as_real(z)),
    ("view_as_real_of_t", lambda T, z: T.view_as_real(z.t())),
    ("view_as_real_of_slice", lambda T, z: T.view_as_real(z[:, ::2])),
    ("conj", lambda T, z: T.conj(z)),
    ("conj_method", lambda T, z: z.conj()),
    ("conj_conj", lambda T, z: z.conj().conj()),
    ("conj_real", lambda T, z: z.conj().real),
    ("conj_imag", lambda T, z: z.conj().imag),
    ("conj_then_mul", lambda T, z: z.conj() * z),
    ("conj_select", lambda T, z: z.conj()[1]),
    ("resolve_conj", lambda T, z: z.conj().resolve_conj()),
    ("resolve_conj_plain", lambda T, z: T.resolve_conj(z)),
    ("resolve_neg", lambda T, z: z.conj().imag.resolve_neg()),
    ("resolve_neg_plain", lambda T, z: T.resolve_neg(z.real)),
    ("conj_physical", lambda T, z: T.conj_physical(z)),
    ("conj_physical_method", lambda T, z: z.conj_physical()),
    ("conj_physical_of_conj", lambda T, z: z.conj().conj_physical()),
    ("conj_physical_inplace", lambda T, z: (z * 1).conj_physical_()),
    ("roundtrip", lambda T, z: T.view_as_complex(T.view_as_real(z))),
    ("view_as_complex_of_view_as_real_mul", lambda T, z: T.view_as_complex(T.view_as_real(z) * 3)),
    ("real_imag_mix", lambda T, z: z.real * 2 - z.imag),
]


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("name,fn", cases(VIEWS))
def test_views(name, fn, dtype):
    check_op(f"{name}/{dtype}", cx(fn), [Z((2, 3), dtype)])


def _graph(fn):
    """The grad_fn chain as nested names: 'SelectBackward0(ViewAsRealBackward0(...))'."""
    if fn is None:
        return ""
    kids = [_graph(n) for n, _ in fn.next_functions if n is not None]
    return type(fn).__name__ + (f"({','.join(kids)})" if kids else "")


def _layout(t):
    return (tuple(t.stride()), t.is_conj(), t.is_neg(), t.is_complex(), t.dtype,
            _graph(t.grad_fn))


LAYOUT = [
    # name, fn(T, z) -> the view whose strides / conj and neg bits / base are compared
    ("real", lambda T, z: z.real),
    ("imag", lambda T, z: z.imag),
    ("view_as_real", lambda T, z: T.view_as_real(z)),
    ("view_as_real_t", lambda T, z: T.view_as_real(z.t())),
    ("view_as_real_slice", lambda T, z: T.view_as_real(z[:, ::2])),
    ("real_of_t", lambda T, z: z.t().real),
    ("conj", lambda T, z: z.conj()),
    ("conj_conj", lambda T, z: z.conj().conj()),
    ("conj_t", lambda T, z: z.conj().t()),
    ("conj_imag", lambda T, z: z.conj().imag),
    ("conj_real", lambda T, z: z.conj().real),
    ("conj_detach", lambda T, z: z.conj().detach()),
    ("conj_clone", lambda T, z: z.conj().clone()),
    ("conj_plus", lambda T, z: z.conj() + 1),
    ("resolve_conj", lambda T, z: z.conj().resolve_conj()),
    ("conj_physical", lambda T, z: z.conj_physical()),
    ("view_as_complex", lambda T, z: T.view_as_complex(T.view_as_real(z))),
    ("view_as_complex_strided", lambda T, z: T.view_as_complex(T.view_as_real(z)[:, ::2])),
    ("view_as_complex_t", lambda T, z: T.view_as_complex(T.view_as_real(z).transpose(0, 1))),
    ("view_as_complex_fresh", lambda T, z: T.view_as_complex(T.ones(3, 2))),
    ("view_as_complex_step", lambda T, z: T.view_as_complex(T.ones(4, 2)[::2])),
    ("view_as_complex_offset", lambda T, z: T.view_as_complex(T.ones(3, 2)[1:])),
    ("view_as_complex_expanded", lambda T, z: T.view_as_complex(T.ones(1, 2).expand(3, 2))),
    ("view_as_complex_0d", lambda T, z: T.view_as_complex(T.ones(2))),
    ("view_as_complex_empty", lambda T, z: T.view_as_complex(T.ones(0, 2))),
    ("view_as_real_0d", lambda T, z: T.view_as_real(z[0, 0])),
    ("view_as_real_offset_flat", lambda T, z: T.view_as_complex(T.view_as_real(z).flatten()
                                                                 [2:6].view(2, 2))),
]


@pytest.mark.parametrize("name,fn", cases(LAYOUT))
def test_view_layout(name, fn):
    """Strides as PyTorch reports them, the conj / neg bits, and which tensor is the base."""
    z = np.arange(6).reshape(2, 3) + 1j * np.arange(10, 16).reshape(2, 3)

    def go(T):
        x = T.tensor(z, dtype=T.complex64, requires_grad=True)
        v = fn(T, x)
        return _layout(v), v.resolve_neg(), v._base is x
    both(go)


REAL_INPUTS = [
    # name, fn(T, x) on a real tensor: what PyTorch returns for real dtypes
    ("real_is_self", lambda T, x: x.real is x),
    ("real_fn_is_self", lambda T, x: T.real(x) is x),
    ("conj_is_self", lambda T, x: T.conj(x) is x),
    ("conj_method_is_self", lambda T, x: x.conj() is x),
    ("conj_physical_is_self", lambda T, x: T.conj_physical(x) is x),
    ("conj_physical_inplace_is_self", lambda T, x: x.detach().conj_physical_().equal(x)),
    ("resolve_conj_is_self", lambda T, x: x.resolve_conj() is x),
    ("resolve_neg_is_self", lambda T, x: x.resolve_neg() is x),
    ("is_conj", lambda T, x: (x.is_conj(), T.is_conj(x), x.is_neg(), T.is_neg(x))),
    ("isreal", lambda T, x: T.isreal(x)),
    ("isreal_method", lambda T, x: x.isreal()),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
@pytest.mark.parametrize("name,fn", cases(REAL_INPUTS))
def test_real_inputs(name, fn, dtype):
    check_op(f"{name}/{dtype}", fn, [A((2, 3), dtype)])


# ------------------------------------------------------------------------------------------------
# Writes through views: x.real.mul_(2), x.imag[0] = 5, x.real = t, view_as_real(x)[...] = v, ...
# ------------------------------------------------------------------------------------------------

_Z = [[1 + 2j, 3 - 1j, -0.5j], [0.5 + 0j, -2 + 4j, 1 + 1j]]


def _write(step):
    """A case: make x (complex64 [2, 3]), run ``step(T, x)``, return x and its views."""
    def go(T):
        x = T.tensor(_Z)
        out = step(T, x)
        return x, x.real, x.imag, out, x._version
    return go


def _set(attr, value):
    def step(T, x):
        setattr(x, attr, value(T))
    return step


WRITES = [
    # name, step(T, x)
    ("real_mul_", lambda T, x: x.real.mul_(2)),
    ("imag_add_", lambda T, x: x.imag.add_(10)),
    ("real_fn_zero_", lambda T, x: T.real(x).zero_()),
    ("imag_index", lambda T, x: x.imag.__setitem__(0, 5.0)),
    ("imag_index_tensor", lambda T, x: x.imag.__setitem__((1, 2), T.tensor(-7.0))),
    ("real_slice", lambda T, x: x.real[:, 1:].fill_(3.0)),
    ("real_advanced_index", lambda T, x: x.real.__setitem__(T.tensor([0, 1]), 9.0)),
    ("imag_mask", lambda T, x: x.imag.__setitem__(x.imag > 0, 0.0)),
    ("set_real", _set("real", lambda T: T.tensor([9.0, 8.0, 7.0]))),
    ("set_imag_scalar_tensor", _set("imag", lambda T: T.tensor(1.0))),
    ("set_real_python_scalar", _set("real", lambda T: 5)),
    ("set_imag_int_tensor", _set("imag", lambda T: T.tensor([1, 2, 3]))),
    ("view_as_real_write", lambda T, x: T.view_as_real(x).__setitem__((0, 1, 1), -3.0)),
    ("view_as_real_column", lambda T, x: T.view_as_real(x)[..., 0].mul_(-1)),
    ("view_as_real_of_t", lambda T, x: T.view_as_real(x.t())[0].fill_(0.0)),
    ("real_of_t", lambda T, x: x.t().real.add_(100)),
    ("real_of_row", lambda T, x: x[1].real.sub_(1)),
    ("conj_add_", lambda T, x: x.conj().add_(1j)),
    ("conj_index", lambda T, x: x.conj().__setitem__((0, 0), 5 + 5j)),
    ("conj_imag_write", lambda T, x: x.conj().imag.__setitem__(1, 7.0)),
    ("conj_real_write", lambda T, x: x.conj().real.mul_(0.5)),
    ("conj_conj_write", lambda T, x: x.conj().conj().mul_(1j)),
    ("conj_physical_", lambda T, x: x.conj_physical_()),
    ("conj_physical_of_row", lambda T, x: x[0].conj_physical_()),
    ("copy_into_real", lambda T, x: x.real.copy_(T.ones(2, 3) * 4)),
    ("base_write_shows_in_view", lambda T, x: (lambda r: (x.mul_(2), r))(x.real)[1]),
]


@pytest.mark.parametrize("name,step", cases(WRITES))
def test_writes_through_views(name, step):
    both(_write(step))


def _view_complex_writes(step):
    def go(T):
        y = T.arange(12.0).reshape(3, 2, 2)
        z = T.view_as_complex(y)
        step(T, z)
        return y, z, y._version
    return go


VIEW_COMPLEX_WRITES = [
    # name, step(T, z) on z = view_as_complex(y), y real [3, 2, 2]
    ("mul_", lambda T, z: z.mul_(1j)),
    ("index", lambda T, z: z.__setitem__((1, 0), 7 - 7j)),
    ("real_of_it", lambda T, z: z.real.fill_(-1.0)),
    ("imag_of_it", lambda T, z: z.imag[2].add_(100)),
    ("conj_of_it", lambda T, z: z.conj()[0].mul_(2)),
    ("view_as_real_of_it", lambda T, z: T.view_as_real(z)[1, 1].fill_(9.0)),
]


@pytest.mark.parametrize("name,step", cases(VIEW_COMPLEX_WRITES))
def test_writes_through_view_as_complex(name, step):
    both(_view_complex_writes(step))


AUTOGRAD_WRITES = [
    # name, step(T, x) on x = (leaf * 1): a non-leaf complex tensor; gradients flow to the leaf
    ("real_mul_", lambda T, x: x.real.mul_(2)),
    ("imag_add_tensor", lambda T, x: x.imag.add_(x.real)),
    ("imag_index", lambda T, x: x.imag.__setitem__(0, 5.0)),
    ("conj_mul_", lambda T, x: x.conj().mul_(1 + 1j)),
    ("conj_imag_mul_", lambda T, x: x.conj().imag.mul_(3)),
    ("view_as_real_mul_", lambda T, x: T.view_as_real(x)[:, :, 1].mul_(-2)),
    ("conj_physical_", lambda T, x: x.conj_physical_()),
]


@pytest.mark.parametrize("name,step", cases(AUTOGRAD_WRITES))
def test_writes_through_views_autograd(name, step):
    """In-place writes through views of a non-leaf: values, grad_fn, and the leaf's gradient
    under a real loss that reads both parts."""
    def go(T):
        leaf = T.tensor(_Z, requires_grad=True)
        x = leaf * 1
        step(T, x)
        w = T.tensor(np.arange(12.0).reshape(2, 3, 2) - 5, dtype=T.float32)
        loss = (T.view_as_real(x) * w).sum() + (x.abs() ** 2).sum()
        loss.backward()
        return x, leaf.grad, type(x.grad_fn).__name__
    both(go)


def test_view_reads_base_after_write():
    """A view made before a write through another view sees the new values (no stale copy)."""
    def go(T):
        x = T.tensor(_Z)
        re, vr, c = x.real, T.view_as_real(x), x.conj()
        x.imag.mul_(-1)
        x[0, 0] = 9 + 9j
        return re, vr, c, x.imag
    both(go)


# ------------------------------------------------------------------------------------------------
# angle, isreal, sgn, polar, complex
# ------------------------------------------------------------------------------------------------

POINTWISE = [
    # name, fn(T, *xs), input specs
    ("angle_real", lambda T, x: T.angle(x), [Z((2, 3), "float32")]),
    ("angle_real_f64", lambda T, x: x.angle(), [Z((2, 3), "float64")]),
    ("angle_int", lambda T, x: T.angle(x), [Z((2, 3), "int64")]),
    ("angle_bool", lambda T, x: T.angle(x), [Z((2, 3), "bool")]),
    ("angle_c64", lambda T, x: T.angle(x), [Z((2, 3), "complex64")]),
    ("angle_c128", lambda T, x: x.angle(), [Z((2, 3), "complex128")]),
    ("angle_0d", lambda T, x: T.angle(x), [Z((), "complex128")]),
    ("isreal_c", lambda T, x: T.isreal(x), [Z((2, 3), "complex64")]),
    ("isreal_c_rounded", lambda T, x: T.isreal(x * (x.abs() > 1)), [Z((4,), "complex128")]),
    ("sgn_c64", lambda T, x: T.sgn(x), [Z((2, 3), "complex64")]),
    ("sgn_c128", lambda T, x: x.sgn(), [Z((2, 3), "complex128")]),
    ("complex_f32", lambda T, a, b: T.complex(a, b), [Z((2, 3)), Z((2, 3))]),
    ("complex_f64", lambda T, a, b: T.complex(a, b), [Z((2, 3), "float64"), Z((2, 3), "float64")]),
    ("complex_broadcast", lambda T, a, b: T.complex(a, b), [Z((2, 1)), Z((3,))]),
    ("complex_0d", lambda T, a, b: T.complex(a, b), [Z(()), Z(())]),
    ("complex_one_grad", lambda T, a, b: T.complex(a, b), [Z((3,)), Z((3,), grad=False)]),
    ("polar_f32", lambda T, a, b: T.polar(a, b), [Z((2, 3), dom="pos"), Z((2, 3))]),
    ("polar_f64", lambda T, a, b: T.polar(a, b),
     [Z((2, 3), "float64", "pos"), Z((2, 3), "float64")]),
    ("polar_broadcast", lambda T, a, b: T.polar(a, b), [Z((3,), dom="pos"), Z((2, 1))]),
    ("polar_then_angle", lambda T, a, b: T.polar(a, b).angle(), [Z((4,), dom="pos"),
                                                                 Z((4,), dom="unit")]),
    ("abs_c", lambda T, x: x.abs(), [Z((2, 3), "complex64")]),
    ("mul_c", lambda T, x, y: x * y, [Z((2, 3), "complex64"), Z((3,), "complex64")]),
    ("mixed_c_real", lambda T, x, y: x * y + y, [Z((2, 3), "complex128"), Z((3,), "float64")]),
]


@pytest.mark.parametrize("name,fn,inputs", cases(POINTWISE))
def test_pointwise(name, fn, inputs):
    check_op(name, cx(fn), inputs)


SPECIAL = [
    # name, fn(T): special values, zeros (PyTorch's gradient 0 there), out=
    ("angle_special", lambda T: T.angle(T.tensor([-1., 0., -0., 2., NAN, INF, -INF]))),
    ("angle_special_c", lambda T: T.angle(T.tensor([0j, complex(-0.0, 0.0), complex(-1, -0.0),
                                                    1j, -1j, complex(NAN, 1)]))),
    ("angle_grad_at_zero", lambda T: (lambda x: (T.angle(x).sum().backward(), x.grad)[1])(
        T.tensor([0j, 1 + 1j, -2j], requires_grad=True))),
    ("angle_real_grad", lambda T: (lambda x: (T.angle(x).sum().backward(), x.grad)[1])(
        T.tensor([-1., 0., 2., NAN], requires_grad=True))),
    ("angle_out", lambda T: (lambda o: (T.angle(T.tensor([1 + 1j, -1.]), out=o), o))(
        T.empty(2))),
    ("angle_out_complex", lambda T: (lambda o: (T.angle(T.tensor([1 + 1j]), out=o), o))(
        T.empty(1, dtype=T.complex64))),
    ("polar_out", lambda T: (lambda o: (T.polar(T.ones(2), T.tensor([0., 1.]), out=o), o))(
        T.empty(2, dtype=T.complex64))),
    ("complex_out", lambda T: (lambda o: (T.complex(T.ones(2), T.zeros(2), out=o), o))(
        T.empty(0, dtype=T.complex64))),
    ("conj_physical_out", lambda T: (lambda o: (T.conj_physical(T.tensor([1j]), out=o), o))(
        T.empty(1, dtype=T.complex64))),
    ("complex_special", lambda T: T.complex(T.tensor([NAN, INF, -0.0]), T.tensor([1., -INF, -0.]))),
    ("polar_special", lambda T: T.polar(T.tensor([0., 1., INF]), T.tensor([INF, NAN, 0.]))),
    ("isreal_special", lambda T: T.isreal(T.tensor([complex(NAN, 0), complex(1, NAN), -0j]))),
    ("promote_real_complex", lambda T: (T.tensor([1., 2.], dtype=T.float64)
                                        * T.tensor([1j])).dtype),
    ("set_real_of_real", lambda T: (lambda x: (setattr(x, "real", T.ones(3)), x)[1])(
        T.zeros(3))),
    ("complex_repr", lambda T: repr(T.complex(T.tensor([1.5]), T.tensor([-2.0])))),
]


@pytest.mark.parametrize("name,fn", cases(SPECIAL))
def test_special_values(name, fn):
    both(fn)


# ------------------------------------------------------------------------------------------------
# Errors
# ------------------------------------------------------------------------------------------------

def _assign(attr):
    def go(T):
        x = T.ones(3)
        setattr(x, attr, T.zeros(3))
    return go


ERRORS = [
    # name, fn(T), message regex
    ("imag_of_real", lambda T: T.ones(2).imag,
     r"imag is not implemented for tensors with non-complex dtypes\."),
    ("imag_fn_of_int", lambda T: T.imag(T.ones(2, dtype=T.long)),
     r"imag is not implemented for tensors with non-complex dtypes\."),
    ("set_imag_of_real", _assign("imag"), r"imag is not implemented"),
    ("set_real_bad_shape", lambda T: setattr(T.tensor([1j, 2j]), "real", T.ones(3)),
     r"The size of tensor a \(2\) must match the size of tensor b \(3\)"),
    ("set_real_broadcasts_past_its_shape",
     lambda T: setattr(T.tensor([1j, 2j]), "real", T.ones(1, 2)),
     r"output with shape \[2\] doesn't match the broadcast shape \[1, 2\]"),
    ("set_imag_list", lambda T: setattr(T.tensor([1j], dtype=T.complex128), "imag", [1.0]),
     r"can't assign a list to a torch\.DoubleTensor"),
    ("view_as_real_of_real", lambda T: T.view_as_real(T.ones(2)),
     r"view_as_real is only supported for complex tensors"),
    ("view_as_real_of_conj", lambda T: T.view_as_real(T.tensor([1j]).conj()),
     r"view_as_real doesn't work on unresolved conjugated tensors"),
    ("view_as_complex_long", lambda T: T.view_as_complex(T.ones(3, dtype=T.long)),
     r"view_as_complex is only supported for half, float and double tensors, but got a tensor "
     r"of scalar type: Long"),
    ("view_as_complex_bf16", lambda T: T.view_as_complex(T.ones(3, 2, dtype=T.bfloat16)),
     r"scalar type: BFloat16"),
    ("view_as_complex_complex", lambda T: T.view_as_complex(T.ones(3, 2, dtype=T.complex64)),
     r"scalar type: ComplexFloat"),
    ("view_as_complex_0d", lambda T: T.view_as_complex(T.tensor(1.)),
     r"Input tensor must have one or more dimensions"),
    ("view_as_complex_last_3", lambda T: T.view_as_complex(T.ones(3, 3)),
     r"Tensor must have a last dimension of size 2"),
    ("view_as_complex_1d", lambda T: T.view_as_complex(T.ones(3)),
     r"Tensor must have a last dimension of size 2"),
    ("view_as_complex_stride", lambda T: T.view_as_complex(T.ones(2, 3).t()),
     r"Tensor must have a last dimension with stride 1"),
    ("view_as_complex_odd_stride", lambda T: T.view_as_complex(T.ones(3, 3)[:, :2]),
     r"Tensor must have a stride divisible by 2 for all but last dimension"),
    ("view_as_complex_odd_offset", lambda T: T.view_as_complex(T.ones(3, 4)[:, 1:3]),
     r"Tensor must have a storage_offset divisible by 2"),
    ("view_as_complex_odd_offset_flat", lambda T: T.view_as_complex(T.ones(8)[1:7].view(3, 2)),
     r"Tensor must have a storage_offset divisible by 2"),
    ("view_as_complex_of_real_part", lambda T: T.view_as_complex(T.ones(3, 2, dtype=T.complex64)
                                                                  .real),
     r"Tensor must have a last dimension with stride 1"),
    ("view_as_complex_imag_offset", lambda T: T.view_as_complex(
        T.view_as_real(T.ones(4, dtype=T.complex64)).flatten()[1:5].view(2, 2)),
     r"Tensor must have a storage_offset divisible by 2"),
    ("complex_float_double", lambda T: T.complex(T.ones(2), T.ones(2, dtype=T.float64)),
     r"Expected object of scalar type Float but got scalar type Double for second argument"),
    ("complex_double_float", lambda T: T.complex(T.ones(2, dtype=T.float64), T.ones(2)),
     r"Expected object of scalar type Double but got scalar type Float for second argument"),
    ("complex_long", lambda T: T.complex(T.ones(2, dtype=T.long), T.ones(2, dtype=T.long)),
     r"Expected both inputs to be Half, Float or Double tensors but got Long and Long"),
    ("complex_float_long", lambda T: T.complex(T.ones(2), T.ones(2, dtype=T.long)),
     r"Expected both inputs to be Half, Float or Double tensors but got Float and Long"),
    ("complex_bf16", lambda T: T.complex(T.ones(2, dtype=T.bfloat16),
                                         T.ones(2, dtype=T.bfloat16)),
     r"but got BFloat16 and BFloat16"),
    ("complex_scalar", lambda T: T.complex(T.ones(2), 2.0),
     r"complex\(\): argument 'imag' \(position 2\) must be Tensor, not float"),
    ("complex_scalar_first", lambda T: T.complex(1.0, T.ones(2)),
     r"complex\(\): argument 'real' \(position 1\) must be Tensor, not float"),
    ("complex_shapes", lambda T: T.complex(T.ones(2), T.ones(3)),
     r"The size of tensor a \(2\) must match the size of tensor b \(3\)"),
    ("polar_float_double", lambda T: T.polar(T.ones(2), T.ones(2, dtype=T.float64)),
     r"Expected object of scalar type Float but got scalar type Double for second argument"),
    ("polar_complex", lambda T: T.polar(T.ones(2, dtype=T.complex64), T.ones(2)),
     r"but got ComplexFloat and Float"),
    ("polar_scalar", lambda T: T.polar(T.ones(2), 1),
     r"polar\(\): argument 'angle' \(position 2\) must be Tensor, not int"),
    ("angle_out_int", lambda T: T.angle(T.tensor([1.]), out=T.empty(1, dtype=T.long)),
     r"result type Float can't be cast to the desired output type Long"),
]


@pytest.mark.parametrize("name,fn,match", cases(ERRORS))
def test_errors(name, fn, match):
    both(fn, match=match, raises=True)


def test_inplace_on_view_of_leaf_raises():
    both(lambda T: T.tensor([1j], requires_grad=True).real.mul_(2),
         match=r"a view of a leaf Variable that requires grad is being used in an in-place",
         raises=True)
    both(lambda T: T.tensor([1j], requires_grad=True).conj().mul_(2),
         match=r"a view of a leaf Variable that requires grad is being used in an in-place",
         raises=True)


# ------------------------------------------------------------------------------------------------
# Finite differences (float64): real-valued wrappers around the complex ops
# ------------------------------------------------------------------------------------------------

GRADCHECK = [
    # name, fn of real float64 tensors, shapes of the inputs
    ("complex_parts", lambda a, b: tl.view_as_real(tl.complex(a, b) * tl.complex(b, a)),
     [(2, 3), (2, 3)]),
    ("polar", lambda r, t: tl.view_as_real(tl.polar(r, t)), [(4,), (4,)]),
    ("real_imag", lambda a, b: (lambda z: z.real * z.imag + z.conj().imag)(
        tl.complex(a, b) ** 2), [(3,), (3,)]),
    ("angle", lambda a, b: tl.angle(tl.complex(a, b)), [(5,), (5,)]),
    ("sgn", lambda a, b: tl.view_as_real(tl.sgn(tl.complex(a, b))), [(4,), (4,)]),
    ("view_as_complex", lambda p: tl.view_as_real(tl.view_as_complex(p) ** 2), [(3, 2)]),
    ("conj_physical", lambda a, b: tl.view_as_real(tl.complex(a, b).conj_physical() * 1j),
     [(3,), (3,)]),
    ("abs", lambda a, b: tl.complex(a, b).abs(), [(4,), (4,)]),
]


@pytest.mark.parametrize("name,fn,shapes", cases(GRADCHECK))
def test_gradcheck(name, fn, shapes):
    rng = np.random.default_rng(5)
    xs = [tl.tensor(rng.uniform(0.5, 2.0, s) * rng.choice([-1.0, 1.0], s),
                    dtype=tl.float64, requires_grad=True) for s in shapes]
    assert tl.autograd.gradcheck(fn, tuple(xs))


def test_gradcheck_through_write_into_view():
    def f(a, b):
        z = tl.complex(a, b) * 1
        z.imag.mul_(a)
        z.conj()[0] = tl.complex(b[1], a[0])
        return tl.view_as_real(z)
    rng = np.random.default_rng(6)
    xs = [tl.tensor(rng.uniform(-1, 1, 3), dtype=tl.float64, requires_grad=True)
          for _ in range(2)]
    assert tl.autograd.gradcheck(f, tuple(xs))


# ------------------------------------------------------------------------------------------------
# Traced (jax.jit): the ops and writes through views trace; jax.grad agrees with backward
# ------------------------------------------------------------------------------------------------

def _program(p, a):
    z = tl.view_as_complex(p)                     # p: real [3, 2]
    w = tl.complex(a, a * 2) * z.conj()
    w.real.mul_(3)
    w.conj().imag[0] = 1.5
    y = tl.polar(a.abs() + 1, tl.angle(w))
    return (tl.view_as_real(y) ** 2).sum() + w.imag.sum() + tl.isreal(w).sum()


def test_program_traces_under_jit():
    rng = np.random.default_rng(8)
    p, a = tl.tensor(rng.uniform(-1, 1, (3, 2))), tl.tensor(rng.uniform(-1, 1, 3))
    eager = _program(p, a)
    traced = jax.jit(to_jax_function(_program))(p._value(), a._value())
    np.testing.assert_allclose(np.asarray(traced), eager.numpy(), rtol=1e-12)


def test_grads_match_jax():
    rng = np.random.default_rng(9)
    p, a = tl.tensor(rng.uniform(-1, 1, (3, 2))), tl.tensor(rng.uniform(0.5, 1, 3))
    assert_grads_match_jax(_program, p, a)


def _writes(re, im):
    z = tl.complex(re, im)
    z.real.add_(1)
    tl.view_as_real(z)[1, 1] = -4.0
    z.conj()[0] = tl.complex(im[1], re[0])
    return tl.view_as_real(z.conj().resolve_conj())


def test_writes_through_views_trace():
    re, im = tl.tensor([1.0, 2.0], dtype=tl.float64), tl.tensor([3.0, 4.0], dtype=tl.float64)
    eager = _writes(re, im)
    traced = jax.jit(to_jax_function(_writes))(re._value(), im._value())
    np.testing.assert_array_equal(np.asarray(traced), eager.numpy())
