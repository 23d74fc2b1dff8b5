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
_state = {"precision": "highest"}


def set_float32_matmul_precision(precision):
    """Mirrors ``torch.set_float32_matmul_precision`` ('highest', 'high' or 'medium')."""
    if precision not in _PRECISION:
        raise RuntimeError(f"Invalid precision: {precision}; expected 'highest', 'high' or "
                           "'medium'")
    _state["precision"] = precision


def get_float32_matmul_precision():
    return _state["precision"]


def _matmul(a, b, precision):
    return jnp.matmul(a, b, precision=precision)


# PyTorch's grad_fn for each (a.ndim, b.ndim) case of matmul (what its decomposition ends with)
_MATMUL_NODE = {(1, 1): "DotBackward0", (2, 2): "MmBackward0", (2, 1): "MvBackward0",
                (1, 2): "SqueezeBackward4", (2, 3): "CloneBackward0"}
_MATMUL_OPS = {}
# each operand's gradient needs the other operand
_CROSS = {0: (1,), 1: (0,)}


def _matmul_op(node):
    op = _MATMUL_OPS.get(node)
    if op is None:
        op = _MATMUL_OPS[node] = Op("matmul", _matmul, node, saves=_CROSS)
    return op


def _same_dtype(a, b):
    if a.dtype is not b.dtype:
        from .._inplace import _scalar_type_name as n
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{n(a.dtype).lower()} != {n(b.dtype).lower()}")


def _static():
    return (("precision", _PRECISION[_state["precision"]]),)


def matmul(input, other, *, out=None):
    """Mirrors ``torch.matmul``: dot, mv, mm, and broadcast batched products."""
    a, b = input, other
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{a.ndim}D and {b.ndim}D")
    _same_dtype(a, b)
    ka, kb = a.shape[-1], b.shape[-2] if b.ndim > 1 else b.shape[0]
    if ka != kb:
        if a.ndim == 1 and b.ndim == 1:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{ka}] and src [{kb}] "
                               f"to have the same number of elements, but got {ka} and {kb} "
                               "elements respectively")
        if a.ndim == 2 and b.ndim == 1:
            raise RuntimeError(f"size mismatch, got input ({a.shape[0]}), mat "
                               f"({a.shape[0]}x{ka}), vec ({kb})")
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                           f"({_rows(a)}x{ka} and {kb}x{b.shape[-1] if b.ndim > 1 else 1})")
    node = _MATMUL_NODE.get((min(a.ndim, 3), min(b.ndim, 3)), "UnsafeViewBackward0")
    return _out(call(_matmul_op(node), a, b, static=_static()), out)


def _rows(a):
    n = 1
    for s in a.shape[:-1]:
        n *= s
    return n


MM = Op("mm", _matmul, "MmBackward0", saves=_CROSS)
BMM = Op("bmm", _matmul, "BmmBackward0", saves=_CROSS)
MV = Op("mv", _matmul, "MvBackward0", saves=_CROSS)
DOT = Op("dot", _matmul, "DotBackward0", saves=_CROSS)


def mm(input, mat2, *, out=None):
    """Mirrors ``torch.mm``."""
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if input.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({input.shape[0]}x"
                           f"{input.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]})")
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
