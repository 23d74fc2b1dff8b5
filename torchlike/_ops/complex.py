"""Complex-number ops: real, imag, conj, angle, view_as_real/view_as_complex, polar, complex.

NOTE [ complex views ]
In PyTorch ``x.real`` and ``x.imag`` of a complex tensor are views of its storage: a ``select``
of ``view_as_real(x)`` (grad_fn SelectBackward0 <- ViewAsRealBackward0).  ``x.conj()`` is a lazy
view with the conjugate bit set, and ``.imag`` of such a view is a negative view
(NegViewBackward0).  torchlike keeps all of these as steps of a view's chain from its storage root
(NOTE [ views and in-place writes ] in _tensor.py): reading a view applies them, and ``is_conj()``
/ ``is_neg()`` are the parity of the CONJ / NEG_VIEW steps in the chain.  A write through such a
view lands in the root's real and imaginary parts (_views.scatter_parts).
"""
import jax
import jax.numpy as jnp
import numpy as np

from .. import _amp_hook
from .. import _dtype as D, _x64
from .._dispatch import Op, call, with_out as _out
from .._inplace import inplace
from .._tensor import Tensor
from .._views import apply_chain_fn, part_numbers, stored_strides, strides_of
from . import shape


# --- the view steps -----------------------------------------------------------------------------

def _as_real_strides(parent, out, kw):
    return stored_strides(tuple(2 * s for s in strides_of(parent)) + (1,), out.shape)


def _as_complex_strides(parent, out, kw):
    return stored_strides(tuple(s // 2 for s in strides_of(parent)[:-1]), out.shape)


def _view_as_real(x):
    return jnp.stack([jnp.real(x), jnp.imag(x)], axis=-1)


def _view_as_complex(x):
    return jax.lax.complex(x[..., 0], x[..., 1])


VIEW_AS_REAL = Op("view_as_real", _view_as_real, "ViewAsRealBackward0", saves=(),
                  view=_as_real_strides)
VIEW_AS_COMPLEX = Op("view_as_complex", _view_as_complex, "ViewAsComplexBackward0", saves=(),
                     view=_as_complex_strides)
CONJ = Op("conj", jnp.conj, "ConjBackward0", saves=(), view=shape._same)
NEG_VIEW = Op("_neg_view", jnp.negative, "NegViewBackward0", saves=(), view=shape._same)


def _count(t, op):
    return sum(1 for step, _ in t._chain if step is op)


@_x64.scoped
def _storage_offset(t):
    """Where ``t``'s first element sits in its root's storage, in units of t's element size."""
    root = t._root
    if root is None or t.numel() == 0:
        return 0
    cplx = root.is_complex()
    with jax.ensure_compile_time_eval():
        first = apply_chain_fn(t._chain)(part_numbers(root.shape, cplx)).ravel()[0]
    part = int(abs(np.real(np.asarray(first)))) - 1
    if not cplx:
        return int(np.dot(np.unravel_index(part, tuple(root.shape)), strides_of(root)))
    pos = np.unravel_index(part, tuple(root.shape) + (2,))
    offset = 2 * int(np.dot(pos[:-1], strides_of(root))) + int(pos[-1])
    return offset // 2 if t.is_complex() else offset


# --- views: real, imag, view_as_real, view_as_complex, conj -------------------------------------

def is_conj(input):
    """Mirrors ``torch.is_conj``: whether ``input`` is a lazily conjugated view (``conj()``)."""
    return input.is_complex() and _count(input, CONJ) % 2 == 1


def is_neg(input):
    """Mirrors ``torch.is_neg``: whether ``input`` is a lazily negated view (the ``.imag`` of a
    conjugated view)."""
    return _count(input, NEG_VIEW) % 2 == 1


def _storage_parts(input):
    """``view_as_real`` of what ``input``'s storage holds, resolving a lazy conj as PyTorch
    does (a second ConjBackward0 step)."""
    if is_conj(input):
        input = call(CONJ, input)
    return call(VIEW_AS_REAL, input)


def real(input):
    """Mirrors ``torch.real`` / ``Tensor.real``: a view of the real parts of a complex tensor
    (writes go through to it); a real tensor is returned itself."""
    if not input.is_complex():
        return input
    return shape.select(_storage_parts(input), -1, 0)


def imag(input):
    """Mirrors ``torch.imag`` / ``Tensor.imag``: a view of the imaginary parts of a complex
    tensor (writes go through to it)."""
    if not input.is_complex():
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    parts = _storage_parts(input)
    if is_conj(input):
        parts = call(NEG_VIEW, parts)
    return shape.select(parts, -1, 1)


def _set_part(part, value):
    """``z.real = value`` / ``z.imag = value``, as PyTorch: a Tensor is copied in, a number
    fills."""
    if isinstance(value, Tensor):
        part.copy_(value)
    elif isinstance(value, (bool, int, float, np.number)):
        part.fill_(value)
    else:
        raise TypeError(f"can't assign a {type(value).__name__} to a "
                        f"torch.{part.dtype._tensor_type}")


def _set_real(self, value):
    _set_part(real(self), value)


def _set_imag(self, value):
    _set_part(imag(self), value)


def view_as_real(input):
    """Mirrors ``torch.view_as_real``: a complex tensor's storage as a real tensor with a last
    dimension of size 2 (real, imaginary); writes go through."""
    if not input.is_complex():
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if is_conj(input):
        raise RuntimeError("view_as_real doesn't work on unresolved conjugated tensors.  To "
                           "resolve the conjugate tensor so you can view it as real, use "
                           "self.resolve_conj(); however, be warned that the resulting tensor "
                           "will NOT alias the original.")
    return call(VIEW_AS_REAL, input)


@_amp_hook.entry("view_as_complex")
def view_as_complex(input):
    """Mirrors ``torch.view_as_complex``: a real tensor whose last dimension has size 2 and
    stride 1 seen as a complex tensor; writes go through.  (torchlike has no complex32, so
    float16 inputs are refused.)"""
    dt = input.dtype
    if dt not in (D.float16, D.float32, D.float64):
        raise RuntimeError("view_as_complex is only supported for half, float and double "
                           f"tensors, but got a tensor of scalar type: {dt._scalar_name}")
    if input.ndim == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    strides = input.stride()
    if strides[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if _storage_offset(input) % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    if dt is D.float16:
        raise RuntimeError("view_as_complex: torchlike has no complex32 (ComplexHalf) dtype; "
                           "convert the tensor to float32 first")
    return call(VIEW_AS_COMPLEX, input)


def conj(input):
    """Mirrors ``torch.conj``: a lazily conjugated view of a complex tensor (``is_conj()`` is
    True, writes go through conjugated); a real tensor is returned itself."""
    if not input.is_complex():
        return input
    return call(CONJ, input)


CONJ_PHYSICAL = Op("conj_physical", jnp.conj, "ConjPhysicalBackward0", saves=())
CONJ_PHYSICAL_ = Op("conj_physical_", jnp.conj, "ConjPhysicalBackward1", saves=())


def conj_physical(input, *, out=None):
    """Mirrors ``torch.conj_physical``: the complex conjugate as a new tensor (a real tensor is
    returned itself)."""
    if not input.is_complex():
        return _out(input, out)
    return _out(call(CONJ_PHYSICAL, input), out)


def conj_physical_(input):
    """Mirrors ``torch.conj_physical_``: conjugate in place."""
    if input.is_complex():
        inplace(input, lambda: call(CONJ_PHYSICAL_, input))
    return input


def resolve_conj(input):
    """Mirrors ``torch.resolve_conj``: a materialised copy of a lazily conjugated view, else
    ``input`` itself."""
    return shape.clone(input) if is_conj(input) else input


def resolve_neg(input):
    """Mirrors ``torch.resolve_neg``: a materialised copy of a lazily negated view, else
    ``input`` itself."""
    return shape.clone(input) if is_neg(input) else input


# --- angle, isreal, polar, complex --------------------------------------------------------------

def _angle(x):
    if jnp.iscomplexobj(x):
        # NOTE: PyTorch's gradient at 0 is 0 (atan2's is nan there): read the value at 0 with
        # no gradient and differentiate only where x != 0.
        zero = x == 0
        safe = jnp.where(zero, jnp.ones_like(x), x)
        return jnp.where(zero, jax.lax.stop_gradient(jnp.angle(x)), jnp.angle(safe))
    # a real number's angle is 0 or pi (-0.0 included in 0), NaN stays NaN; its gradient is 0
    x = jax.lax.stop_gradient(x)
    return jnp.where(jnp.isnan(x), x, jnp.where(x < 0, jnp.pi, 0.0).astype(x.dtype))


ANGLE = Op("angle", _angle, "AngleBackward0", saves=(0,), promote="float")
ISREAL = Op("isreal", lambda x: jnp.imag(x) == 0, None, saves=())


def angle(input, *, out=None):
    """Mirrors ``torch.angle``: the argument of each element, in (-pi, pi], as a real tensor
    (0 or pi for real inputs; integers give the default float dtype)."""
    return _out(call(ANGLE, input), out)


def isreal(input):
    """Mirrors ``torch.isreal``: True where the imaginary part is 0 (everywhere for real
    tensors)."""
    return call(ISREAL, input)


def _need_tensor(fname, value, name, pos):
    if not isinstance(value, Tensor):
        raise TypeError(f"{fname}(): argument '{name}' (position {pos}) must be Tensor, not "
                        f"{type(value).__name__}")


def _check_parts(fname, first, second):
    """The checks PyTorch makes on the two real inputs (name, value) of complex and polar."""
    (name_a, a), (name_b, b) = first, second
    _need_tensor(fname, a, name_a, 1)
    _need_tensor(fname, b, name_b, 2)
    ok = (D.float16, D.float32, D.float64)
    da, db = a.dtype, b.dtype
    if da not in ok or db not in ok:
        raise RuntimeError("Expected both inputs to be Half, Float or Double tensors but got "
                           f"{da._scalar_name} and {db._scalar_name}")
    if da is not db:
        raise RuntimeError(f"Expected object of scalar type {da._scalar_name} but got scalar "
                           f"type {db._scalar_name} for second argument")
    if da is D.float16:
        raise RuntimeError(f"{fname}: torchlike has no complex32 (ComplexHalf) dtype; use "
                           "float32 inputs")


def _complex(re, im):
    re, im = jnp.broadcast_arrays(re, im)
    return jax.lax.complex(re, im)


def _polar(r, theta):
    return _complex(r * jnp.cos(theta), r * jnp.sin(theta))


COMPLEX = Op("complex", _complex, "ComplexBackward0", saves=())
POLAR = Op("polar", _polar, "PolarBackward0", saves=("result",))


def complex(real, imag, *, out=None):  # noqa: A001 - PyTorch's name
    """Mirrors ``torch.complex``: ``real + imag * 1j`` from two float tensors of the same dtype
    (broadcast); float32 gives complex64, float64 complex128."""
    _check_parts("complex", ("real", real), ("imag", imag))
    return _out(call(COMPLEX, real, imag), out)


@_amp_hook.entry("polar")
def polar(abs, angle, *, out=None):  # noqa: A002 - PyTorch's names
    """Mirrors ``torch.polar``: ``abs * (cos(angle) + 1j * sin(angle))``."""
    _check_parts("polar", ("abs", abs), ("angle", angle))
    return _out(call(POLAR, abs, angle), out)


# Public names and Tensor methods of this family.
PUBLIC = ("real", "imag", "view_as_real", "view_as_complex", "conj", "conj_physical",
          "conj_physical_", "resolve_conj", "resolve_neg", "is_conj", "is_neg", "angle",
          "isreal", "polar", "complex")
TENSOR_METHODS = {
    "real": property(real, _set_real), "imag": property(imag, _set_imag),
    "conj": conj, "conj_physical": conj_physical, "conj_physical_": conj_physical_,
    "resolve_conj": resolve_conj, "resolve_neg": resolve_neg, "is_conj": is_conj,
    "is_neg": is_neg, "angle": angle, "isreal": isreal,
}
