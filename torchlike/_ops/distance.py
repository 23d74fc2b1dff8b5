"""Distances: mirrors ``torch.nn.functional.cosine_similarity``, ``pairwise_distance`` and
``pdist`` (``cdist`` is in linalg.py).

``pdist`` is one ``PdistBackward0`` node, as in PyTorch.  ``pairwise_distance`` and
``cosine_similarity`` are composites in PyTorch and are composed here from the same ops
(``norm(x1 - x2 + eps)``; ``sum(x1 / |x1| * x2 / |x2|)``), so their graphs read the same.
"""
import numpy as np

from .. import _amp_hook
from .. import _dtype as D
from .._dispatch import Op, _broadcast_message, call, result_dtype
from .._tensor import _wrap_dim
from ..autograd.grad_mode import no_grad
from . import shape as S
from .join import broadcast_shapes
from .pointwise import ADD_SCALAR, div, mul, sub
from .reduce import VECTOR_NORM, _vector_norm, sum as _sum

# at::norm(input, p, dim, keepdim): the same maths as linalg_vector_norm, its own node name.
NORM = Op("norm", lambda x, p, dims, keepdim: _vector_norm(x, p, dims, keepdim, None),
          "NormBackward1", saves=(0, "result"))


def _pdist(x, p):
    i, j = np.triu_indices(x.shape[0], 1)
    return _vector_norm(x[i] - x[j], p, (1,), False, None)


PDIST = Op("pdist", _pdist, "PdistBackward0", saves=(0, "result"))


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """Mirrors ``torch.nn.functional.pairwise_distance``: the ``p``-norm of ``x1 - x2 + eps``
    over the last dimension (inputs broadcast)."""
    ndim = max(x1.ndim, x2.ndim)
    diff = sub(x1, x2)
    if diff.dtype.is_floating_point or diff.dtype.is_complex:
        diff = call(ADD_SCALAR, diff, eps)
    else:   # PyTorch adds eps in place to the integer difference (a no-op), then norms in float
        diff = diff.to(D.get_default_dtype())
    dims = (ndim - 1,) if ndim else ()
    return call(NORM, diff, static=(("p", float(p)), ("dims", dims), ("keepdim", bool(keepdim))))


@_amp_hook.entry("cosine_similarity")
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Mirrors ``torch.nn.functional.cosine_similarity``: ``sum(x1 / max(|x1|, eps) *
    x2 / max(|x2|, eps))`` over ``dim`` (PyTorch 2.x: each input normalized first, the norms
    clamped to ``eps`` without changing their gradient); inputs broadcast."""
    dt = result_dtype("common", x1, x2)
    if not dt.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{dt._scalar_name}")
    if not (x1.dtype.is_floating_point or x1.dtype.is_complex):
        x1 = x1.to(dt)
    if not (x2.dtype.is_floating_point or x2.dtype.is_complex):
        x2 = x2.to(dt)
    if tuple(x1.shape) != tuple(x2.shape):
        try:
            shape = broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
        except RuntimeError:
            raise RuntimeError(_broadcast_message([x1, x2])) from None
        x1, x2 = S.expand(x1, *shape), S.expand(x2, *shape)
    dim = _wrap_dim(dim, x1.ndim)
    static = (("ord", 2.0), ("dims", (dim,) if x1.ndim else ()), ("keepdim", True),
              ("dtype", None))
    n1 = S.clone(call(VECTOR_NORM, x1, static=static))
    n2 = S.clone(call(VECTOR_NORM, x2, static=static))
    with no_grad():
        n1.clamp_(min=eps)
        n2.clamp_(min=eps)
    return _sum(mul(div(x1, n1), div(x2, n2)), dim)


def pdist(input, p=2):
    """Mirrors ``torch.nn.functional.pdist``: the ``p``-norm distance between every pair of
    rows of a 2-D input, the upper triangle of ``cdist(input, input)`` row by row."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    return call(PDIST, input, static=(("p", float(p)),))


DIST = Op("dist", lambda a, b, p: _vector_norm(a - b, p, None, False, None), "DistBackward0",
          promote="common", saves=(0, 1, "result"))


def dist(input, other, p=2):
    """Mirrors ``torch.dist``: the ``p``-norm of ``input - other`` (broadcast), a 0-dim
    tensor."""
    dt = result_dtype("common", input, other)
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. "
                           f"Got {dt._scalar_name} instead.")
    return call(DIST, input, other, static=(("p", float(p)),))


PUBLIC = ("cosine_similarity", "pairwise_distance", "pdist", "dist")
TENSOR_METHODS = {"dist": dist}
