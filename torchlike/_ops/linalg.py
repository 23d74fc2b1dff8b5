"""Matrix products: matmul (every rank combination), mm, bmm, mv, dot.

NOTE [ matmul precision ]
PyTorch computes float32 matmuls in full float32 unless the user opts in to TF32
(``torch.set_float32_matmul_precision('high')``); XLA on GPU/TPU defaults to lower precision, so
torchlike asks for HIGHEST unless told otherwise.
"""
import jax
import jax.numpy as jnp

from .._dispatch import Op, call, with_out as _out

_PRECISION = {"highest": jax.lax.Precision.HIGHEST, "high": jax.lax.Precision.HIGH,
              "medium": jax.lax.Precision.DEFAULT}
_state = {"precision": "highest", "static": (("precision", _PRECISION["highest"]),)}


def set_float32_matmul_precision(precision):
    """Mirrors ``torch.set_float32_matmul_precision`` ('highest', 'high' or 'medium')."""
    if precision not in _PRECISION:
        raise RuntimeError(f"Invalid precision: {precision}; expected 'highest', 'high' or "
                           "'medium'")
    _state["precision"] = precision
    _state["static"] = (("precision", _PRECISION[precision]),)


def get_float32_matmul_precision():
    return _state["precision"]


def _matmul(a, b, precision):
    return jnp.matmul(a, b, precision=precision)


def _same_dtype(a, b):
    if a._arr.dtype != b._arr.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{a.dtype._scalar_name.lower()} != {b.dtype._scalar_name.lower()}")


def _static():
    return _state["static"]


SQUEEZE_ = Op("squeeze_", lambda x, dim: jnp.squeeze(x, dim), "SqueezeBackward4", saves=())


def matmul(input, other, *, out=None):
    """Mirrors ``torch.matmul``: dot, mv, mm, and broadcast batched products, decomposed into
    the same ops PyTorch uses (so the recorded graph has PyTorch's nodes)."""
    a, b = input, other
    da, db = a._arr.ndim, b._arr.ndim
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{da}D and {db}D")
    if da == 1 and db == 1:
        return _out(dot(a, b), out)
    if da == 2 and db == 1:
        return _out(mv(a, b), out)
    if da == 1 and db == 2:
        return _out(call(SQUEEZE_, mm(a.unsqueeze(0), b), static=(("dim", 0),)), out)
    if da == 2 and db == 2:
        return _out(mm(a, b), out)
    if ((da >= 3 and db <= 2) or (db >= 3 and da <= 2)) and _should_fold(a, b):
        return _out(_folded(a, b), out)
    return _out(_batched(a, b), out)


def _should_fold(a, b):
    """Fold the batch dims into one mm/mv when it needs no copy (or the left operand requires
    grad, where the fold saves a large intermediate in backward), as PyTorch decides."""
    if a.requires_grad:
        return True
    t1 = a if a.ndim >= b.ndim else b.mT
    if t1.numel() == 0:
        return True
    shape, strides = t1.shape, t1.stride()
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(t1.ndim - 2))


def _folded(a, b):
    """(..., n, k) @ (k[, p]): fold the batch dims into one matrix and use mm / mv."""
    transpose = b.ndim > a.ndim
    t1 = b.mT if transpose else a
    t2 = (a.t() if a.ndim == 2 else a) if transpose else b
    out_shape = list(t1.shape[:-1])
    rows = 1
    for s in out_shape:
        rows *= s
    folded = t1.reshape(rows, t1.shape[-1])
    if t2.ndim == 2:
        out_shape.append(t2.shape[1])
        result = _unsafe_view(mm(folded, t2), out_shape)
        return result.mT.contiguous() if transpose else result
    return _unsafe_view(mv(folded, t2), out_shape)


def _batched(a, b):
    """Broadcast the batch dims, flatten them, and use bmm (a vector operand becomes a
    one-row or one-column matrix)."""
    import numpy as np
    n = a.shape[-2] if a.ndim > 1 else 1
    m1 = a.shape[-1]
    m2 = b.shape[-2] if b.ndim > 1 else b.shape[0]
    p = b.shape[-1] if b.ndim > 1 else 1
    try:
        batch = list(np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2])))
    except ValueError:
        from .._dispatch import _broadcast_message
        raise RuntimeError(_broadcast_message([a._arr[..., 0, 0], b._arr[..., 0, 0]])) from None
    count = int(np.prod(batch, dtype=np.int64))
    if m1 != m2:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{count}, {m1}] but got: [{count}, {m2}].")
    a3 = a.expand(*batch, n, m1).reshape(count, n, m1)
    if b.ndim == 1:
        b3 = b.expand(*batch, m2).reshape(count, m2).unsqueeze(2)
        return _unsafe_view(bmm(a3, b3).squeeze(-1), batch + [n])
    b3 = b.expand(*batch, m2, p).reshape(count, m2, p)
    out_shape = batch + ([n] if a.ndim > 1 else []) + [p]
    return _unsafe_view(bmm(a3, b3), out_shape)


def _unsafe_view(x, shape):
    from .shape import UNSAFE_VIEW
    return call(UNSAFE_VIEW, x, static=(("shape", tuple(shape)),))


# each operand's gradient needs the other operand
_CROSS = {0: (1,), 1: (0,)}
MM = Op("mm", _matmul, "MmBackward0", saves=_CROSS)
BMM = Op("bmm", _matmul, "BmmBackward0", saves=_CROSS)
MV = Op("mv", _matmul, "MvBackward0", saves=_CROSS)
DOT = Op("dot", _matmul, "DotBackward0", saves=_CROSS)


def mm(input, mat2, *, out=None):
    """Mirrors ``torch.mm``."""
    s1, s2 = input._arr.shape, mat2._arr.shape
    if len(s1) != 2:
        raise RuntimeError("self must be a matrix")
    if len(s2) != 2:
        raise RuntimeError("mat2 must be a matrix")
    if s1[1] != s2[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({s1[0]}x{s1[1]} and "
                           f"{s2[0]}x{s2[1]})")
    _same_dtype(input, mat2)
    return _out(call(MM, input, mat2, static=_static()), out)


def bmm(input, mat2, *, out=None):
    """Mirrors ``torch.bmm``."""
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    b, _, k = input.shape
    if tuple(mat2.shape[:2]) != (b, k):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{b}, {k}] but got: [{mat2.shape[0]}, {mat2.shape[1]}].")
    _same_dtype(input, mat2)
    return _out(call(BMM, input, mat2, static=_static()), out)


def mv(input, vec, *, out=None):
    """Mirrors ``torch.mv``."""
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    if input.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input.shape[0]}), mat "
                           f"({input.shape[0]}x{input.shape[1]}), vec ({vec.shape[0]})")
    _same_dtype(input, vec)
    return _out(call(MV, input, vec, static=_static()), out)


def dot(input, tensor, *, out=None):
    """Mirrors ``torch.dot``."""
    if input.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {tensor.ndim}D "
                           "tensors")
    if input.shape[0] != tensor.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.shape[0]}] and "
                           f"src [{tensor.shape[0]}] to have the same number of elements, but "
                           f"got {input.shape[0]} and {tensor.shape[0]} elements respectively")
    _same_dtype(input, tensor)
    return _out(call(DOT, input, tensor, static=_static()), out)


# Public names and Tensor methods added by this family beyond the core ones bound in _methods.
PUBLIC = ()
TENSOR_METHODS = {}
