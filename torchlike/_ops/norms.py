"""Norms of ``torchlike.linalg``: vector_norm, matrix_norm and norm.

They are built as PyTorch builds them, so the recorded graph has PyTorch's nodes: a vector norm
(and the Frobenius norm) is one ``LinalgVectorNormBackward0`` node; the nuclear and spectral norms
reduce the singular values (``sum`` / ``amax`` / ``amin`` of ``svdvals`` of the permuted input);
the 1- and inf-norms take ``amax`` / ``amin`` of column or row sums.
"""
import math

from .. import _amp_hook
from .. import _dtype as D
from .._dispatch import call, with_out as _out
from .._tensor import _wrap_dim
from . import reduce as _reduce, shape as _shape


def _check_dtype(name, input, dtype):
    """PyTorch's checks of the ``dtype`` argument of a norm."""
    dt = input.dtype
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{dt._scalar_name}")
    if dtype is None:
        return None
    dtype = D.to_dtype(dtype)
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{name}: dtype should be floating point or complex, but got "
                           f"{dtype._scalar_name}")
    if dt.is_complex and not dtype.is_complex:
        raise RuntimeError(f"{name}: dtype should be complex for complex inputs, but got "
                           f"{dtype._scalar_name}")
    if D.promote_types(dt, dtype) is not dtype:
        raise RuntimeError(f"{name}: the dtype of the input ({dt._scalar_name}) should be "
                           f"convertible without narrowing to the specified dtype "
                           f"({dtype._scalar_name})")
    return dtype


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """Mirrors ``torch.linalg.vector_norm``: ``(sum |x|^ord)^(1/ord)`` over ``dim`` (all
    elements by default); ``ord`` inf / -inf are the largest / smallest ``|x|``, 0 counts the
    non-zero elements.  The result is real; ``dtype`` casts the input first.

    Example:
        >>> torchlike.linalg.vector_norm(torchlike.tensor([3.0, 4.0]))
        tensor(5.)
    """
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' (position 2) must be Number, not "
                        f"{type(ord).__name__}")
    dtype = _check_dtype("linalg.vector_norm", x, dtype)
    dims = _reduce._dims(dim, x.ndim)
    if ord < 0 or math.isinf(ord):   # no identity: an empty reduction has no value
        name = "inf" if ord == math.inf else ("-inf" if ord == -math.inf else _ord_str(ord))
        if dims is None and x.numel() == 0:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {name} norm on an empty "
                               "tensor because the operation does not have an identity")
        for d in dims or ():
            if x.shape[d] == 0:
                raise RuntimeError(f"linalg.vector_norm cannot compute the {name} norm on the "
                                   f"dimension {d}because this dimension is empty and the "
                                   "operation does not have an identity")
    static = (("ord", float(ord)), ("dims", dims), ("keepdim", bool(keepdim)),
              ("dtype", None if dtype is None else dtype._np))
    return _out(call(_reduce.VECTOR_NORM, x, static=static), out)


_MATRIX_ORDS = ("fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf)


def _svd_norm(A, dims, keepdim, reducer):
    """``reducer`` (sum, amax, amin) of the singular values of the matrices over ``dims``:
    permute them last, svdvals, reduce, and put kept dims back, as PyTorch does."""
    rest = [d for d in range(A.ndim) if d not in dims]
    perm = rest + list(dims)
    result = reducer(call(_reduce.SVDVALS, _shape.permute(A, perm))[1], -1, keepdim=keepdim)
    if not keepdim:
        return result
    return _shape.permute(_shape.unsqueeze(result, -1), [perm.index(d) for d in range(A.ndim)])


@_amp_hook.entry("linalg_matrix_norm")
def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """Mirrors ``torch.linalg.matrix_norm``: the norm of each matrix over the two dims ``dim``.

    ``ord``: 'fro' (Frobenius), 'nuc' (sum of singular values), 2 / -2 (largest / smallest
    singular value), 1 / -1 (largest / smallest column sum of ``|A|``), inf / -inf (row sums).
    """
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) != 2:
        raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got " +
                           " ".join(str(d) for d in dims))
    d0, d1 = (_wrap_dim(d, A.ndim) for d in dims)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dims[0]}, "
                           f"{dims[1]})")
    if not (ord in ("fro", "nuc") if isinstance(ord, str) else ord in _MATRIX_ORDS[2:]):
        raise RuntimeError(f"linalg.matrix_norm: Order {_ord_str(ord)} not supported.")
    dtype = _check_dtype("linalg.matrix_norm", A, dtype)
    keepdim = bool(keepdim)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim, dtype=dtype, out=out)
    if ord == "nuc" or abs(ord) == 2:
        x = A if dtype is None else A.to(dtype)
        reducer = _reduce.sum if ord == "nuc" else (_reduce.amax if ord == 2 else _reduce.amin)
        return _out(_svd_norm(x, (d0, d1), keepdim, reducer), out)
    # 1: largest column sum (sum over d0, then max over d1); inf: rows (sum over d1)
    summed, other = (d0, d1) if abs(ord) == 1 else (d1, d0)
    sums = vector_norm(A, 1, summed, keepdim, dtype=dtype)
    if not keepdim and summed < other:
        other -= 1
    reducer = _reduce.amax if ord > 0 else _reduce.amin
    return _out(reducer(sums, other, keepdim=keepdim), out)


def _ord_str(ord):
    if isinstance(ord, float) and ord.is_integer():
        return str(int(ord))
    return str(ord)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """Mirrors ``torch.linalg.norm``: a vector norm (``dim`` an int or one dim, or a 1-D input)
    or a matrix norm (``dim`` two dims, a string ``ord``, or a 2-D input with ``ord`` given).
    Without ``ord`` and ``dim`` it is the 2-norm of all elements.

    Example:
        >>> torchlike.linalg.norm(torchlike.tensor([[1.0, 2.0], [2.0, 4.0]]), "nuc")
        tensor(5.)
    """
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. "
                               f"Got {list(dims)}")
        if len(dims) == 2 or isinstance(ord, str):
            return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype,
                               out=out)
        return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype, out=out)
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype, out=out)
    if A.ndim not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be "
                           f"1D or 2D. Got {A.ndim}D.")
    if A.ndim == 2 or isinstance(ord, str):
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype, out=out)
    return vector_norm(A, ord, None, keepdim, dtype=dtype, out=out)
