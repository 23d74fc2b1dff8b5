"""Matrix products: matmul (every rank combination), mm, bmm, mv, dot, vdot, inner, outer, the
fused add-products (addmm, addmv, addr, addbmm, baddbmm), tensordot, kron, multi_dot,
chain_matmul, cross, vecdot and cdist.  einsum lives in einsum.py; decompositions, solvers and
norms in decomp.py and norms.py.

Where PyTorch builds a product from other ops (outer is a broadcast mul, kron a mul of two
reshaped views, tensordot a permute/reshape/mm/view), torchlike builds it from the same torchlike
ops, so the recorded graph shows PyTorch's nodes.

Every product passes the float32 precision policy as a static argument (NOTE [ matmul
precision ] in _precision.py).
"""
import math
import warnings
from types import SimpleNamespace

import jax.numpy as jnp
import numpy as np

from .. import _amp_hook
from .. import _dtype as D, _precision
from .._dispatch import Op, call, with_out as _out
from .._host import batched_in_buckets
from .._inplace import inplace
from .._tensor import _wrap_dim
from . import pointwise as pw, reduce as _reduce, shape as _shape

def _name(t):
    return t.dtype._scalar_name


def _no_bool(kernel, *tensors):
    """PyTorch's CPU BLAS kernels have no bool version."""
    for t in tensors:
        if t.dtype is D.bool_:
            raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _matmul(a, b, precision):
    return jnp.matmul(a, b, precision=precision)


def _same_dtype(a, b):
    if a._aval().dtype != b._aval().dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{a.dtype._scalar_name.lower()} != {b.dtype._scalar_name.lower()}")


def _static():
    return _precision.static()


SQUEEZE_ = Op("squeeze_", lambda x, dim: jnp.squeeze(x, dim), "SqueezeBackward4", saves=())


@_amp_hook.entry("matmul")
def matmul(input, other, *, out=None):
    """Mirrors ``torch.matmul``: dot, mv, mm, and broadcast batched products, decomposed into
    the same ops PyTorch uses (so the recorded graph has PyTorch's nodes)."""
    a, b = input, other
    da, db = a.ndim, b.ndim
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
        product = mm(folded, t2)
        result = _unsafe_view(product, out_shape)
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
BMM = Op("bmm", _matmul, "BmmBackward0", saves=_CROSS, cold=lambda arrays, static, dt: (
    batched_in_buckets(BMM, static, dt, arrays)))   # NOTE [ rows in buckets ] in _host.py
MV = Op("mv", _matmul, "MvBackward0", saves=_CROSS)
DOT = Op("dot", _matmul, "DotBackward0", saves=_CROSS)


@_amp_hook.entry("mm")
def mm(input, mat2, *, out=None):
    """Mirrors ``torch.mm``."""
    s1, s2 = input.shape, mat2.shape
    if len(s1) != 2:
        raise RuntimeError("self must be a matrix")
    if len(s2) != 2:
        raise RuntimeError("mat2 must be a matrix")
    if s1[1] != s2[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({s1[0]}x{s1[1]} and "
                           f"{s2[0]}x{s2[1]})")
    _same_dtype(input, mat2)
    _no_bool("addmm_impl_cpu_", input)
    return _out(call(MM, input, mat2, static=_static()), out)


@_amp_hook.entry("bmm")
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
    if input.dtype is not mat2.dtype:
        raise RuntimeError(f"expected scalar type {_name(input)} but found {_name(mat2)}")
    _no_bool("bmm", input)
    return _out(call(BMM, input, mat2, static=_static()), out)


def mv(input, vec, *, out=None):
    """Mirrors ``torch.mv``."""
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    if input.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input.shape[0]}), mat "
                           f"({input.shape[0]}x{input.shape[1]}), vec ({vec.shape[0]})")
    if input.dtype is not vec.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {_name(vec)}, "
                           f"{_name(input)}, and {_name(vec)}")
    _no_bool("addmv_impl_cpu", input)
    return _out(call(MV, input, vec, static=_static()), out)


def _check_vectors(input, other):
    """torch.dot / torch.vdot: two 1-D tensors of one size and dtype."""
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D "
                           "tensors")
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.shape[0]}] and "
                           f"src [{other.shape[0]}] to have the same number of elements, but "
                           f"got {input.shape[0]} and {other.shape[0]} elements respectively")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{_name(input)} and {_name(other)}")
    _no_bool("dot", input)


VDOT = Op("vdot", lambda a, b, precision: jnp.vdot(a, b, precision=precision), "VdotBackward0",
          saves=_CROSS)


def dot(input, tensor, *, out=None):
    """Mirrors ``torch.dot``: the inner product of two 1-D tensors."""
    _check_vectors(input, tensor)
    return _out(call(DOT, input, tensor, static=_static()), out)


def vdot(input, other, *, out=None):
    """Mirrors ``torch.vdot``: ``sum(conj(input) * other)`` of two 1-D tensors."""
    _check_vectors(input, other)
    return _out(call(VDOT, input, other, static=_static()), out)


# --- addmm, addmv, addr, addbmm, baddbmm ---------------------------------------------------------

def _scaled(inp, prod, beta, alpha, beta_zero):
    """``beta * input + alpha * prod`` in prod's dtype; PyTorch ignores input (NaN included)
    when beta == 0.  For bool tensors + is "or" and * is "and"."""
    dt = prod.dtype
    if dt == jnp.bool_:
        prod = prod & jnp.asarray(alpha).astype(bool)
        return prod if beta_zero else (inp & jnp.asarray(beta).astype(bool)) | prod
    prod = jnp.asarray(alpha).astype(dt) * prod
    return prod if beta_zero else jnp.asarray(beta).astype(dt) * inp + prod


def _fused(product):
    def fn(inp, a, b, beta, alpha, beta_zero, precision):
        return _scaled(inp, product(a, b, precision), beta, alpha, beta_zero)
    return fn


# name: (product of the two operands, backward node, promote); the input's gradient needs no
# saved tensor, each operand's gradient needs the other.
_FUSED = {
    "addmm": (_matmul, "AddmmBackward0", None),
    "addmv": (_matmul, "AddmvBackward0", None),
    "addr": (lambda a, b, precision: a[:, None] * b[None, :], "AddrBackward0", "common"),
    "addbmm": (lambda a, b, precision: jnp.sum(jnp.matmul(a, b, precision=precision), 0),
               "AddbmmBackward0", None),
    "baddbmm": (_matmul, "BaddbmmBackward0", None),
}
FUSED = {name: Op(name, _fused(product), node, inputs=3, saves={1: (2,), 2: (1,)},
                  promote=promote, promote_args=3)
         for name, (product, node, promote) in _FUSED.items()}


def _check_expand(input, target):
    """PyTorch's errors when ``input`` does not expand to the result's shape."""
    shape, target = tuple(input.shape), tuple(target)
    if len(shape) > len(target):
        raise RuntimeError(f"expand({input.type()}{{{list(shape)}}}, size={list(target)}): the "
                           f"number of sizes provided ({len(target)}) must be greater or equal "
                           f"to the number of dimensions in the tensor ({len(shape)})")
    lead = len(target) - len(shape)
    for i in range(len(shape) - 1, -1, -1):
        if shape[i] not in (1, target[lead + i]):
            raise RuntimeError(f"The expanded size of the tensor ({target[lead + i]}) must match "
                               f"the existing size ({shape[i]}) at non-singleton dimension "
                               f"{lead + i}.  Target sizes: {list(target)}.  Tensor sizes: "
                               f"{list(shape)}")


def _check_scalars(input, beta, alpha):
    """addr refuses float scalars for integral (and bool) tensors."""
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        for name, v in (("beta", beta), ("alpha", alpha)):
            if isinstance(v, float):
                raise RuntimeError(f"For integral input tensors, argument {name} must not be a "
                                   "floating point number.")


def _fused_call(name, input, a, b, beta, alpha, out_shape, out):
    _check_expand(input, out_shape)
    static = (("beta_zero", beta == 0),) + _static()
    return _out(call(FUSED[name], input, a, b, beta, alpha, static=static), out)


def _check_matrix_dtypes(input, mat1, mat2):
    for x, name in ((input, "self"), (mat1, "mat1")):
        if x.dtype is not mat2.dtype:
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got {_name(x)} and "
                               f"{_name(mat2)}")


@_amp_hook.entry("addmm")
def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """Mirrors ``torch.addmm``: ``beta * input + alpha * (mat1 @ mat2)``; ``input`` broadcasts to
    the product's shape and is ignored (NaN included) when ``beta`` is 0."""
    out_shape = _addmm_checks(input, mat1, mat2)
    return _fused_call("addmm", input, mat1, mat2, beta, alpha, out_shape, out)


def _addmm_checks(input, mat1, mat2):
    """PyTorch's addmm argument errors; the product's shape."""
    for x, name in ((mat1, "mat1"), (mat2, "mat2")):
        if x.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {x.ndim}-D tensor")
    (n, k), (k2, p) = mat1.shape, mat2.shape
    if k != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{p})")
    _check_matrix_dtypes(input, mat1, mat2)
    _no_bool("addmm_impl_cpu_", input)
    return n, p


@_amp_hook.entry("addmv")
def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """Mirrors ``torch.addmv``: ``beta * input + alpha * (mat @ vec)``."""
    if mat.ndim != 2 or vec.ndim != 1 or input.ndim > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, "
                           f"{vec.ndim}")
    n, k = mat.shape
    if k != vec.shape[0] or (input.ndim == 1 and input.shape[0] not in (1, n)):
        size = ", ".join(str(s) for s in input.shape)
        raise RuntimeError(f"size mismatch, got input ({size}), mat ({n}x{k}), vec "
                           f"({vec.shape[0]})")
    if not (input.dtype is mat.dtype is vec.dtype):
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{_name(input)}, {_name(mat)}, and {_name(vec)}")
    _no_bool("addmv_impl_cpu", input)
    return _fused_call("addmv", input, mat, vec, beta, alpha, (n,), out)


@_amp_hook.entry("addr")
def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """Mirrors ``torch.addr``: ``beta * input + alpha * outer(vec1, vec2)`` (for bool tensors:
    ``(beta and input) or (alpha and outer)``)."""
    for x, name in ((vec1, "vec1"), (vec2, "vec2")):
        if x.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {x.ndim}-D")
    _check_scalars(input, beta, alpha)
    return _fused_call("addr", input, vec1, vec2, beta, alpha, (vec1.shape[0], vec2.shape[0]),
                       out)


def _check_batches(b1, b2):
    for x, name in ((b1, "batch1"), (b2, "batch2")):
        if x.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")


@_amp_hook.entry("addbmm")
def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """Mirrors ``torch.addbmm``: ``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``."""
    _check_batches(batch1, batch2)
    (b, n, k), (b2, k2, p) = batch1.shape, batch2.shape
    if b != b2:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {b} and "
                           f"{b2}")
    if k != k2:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({n}x{k} and {k2}x{p})")
    _check_matrix_dtypes(input, batch1, batch2)
    _no_bool("addmm_impl_cpu_", input)
    return _fused_call("addbmm", input, batch1, batch2, beta, alpha, (n, p), out)


@_amp_hook.entry("baddbmm")
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """Mirrors ``torch.baddbmm``: ``beta * input + alpha * (batch1 @ batch2)``, batch by
    batch."""
    _check_batches(batch1, batch2)
    (b, n, k), (b2, k2, p) = batch1.shape, batch2.shape
    if (b2, k2) != (b, k):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{b}, {k}] but got: [{b2}, {k2}].")
    if input.dtype is not batch1.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input "
                           f"{_name(input).lower()}, batch1: {_name(batch1).lower()}, batch2: "
                           f"{_name(batch2).lower()}")
    if batch2.dtype is not batch1.dtype:
        raise RuntimeError(f"expected scalar type {_name(batch1)} but found {_name(batch2)}")
    _no_bool("baddbmm", input)
    return _fused_call("baddbmm", input, batch1, batch2, beta, alpha, (b, n, p), out)


def _fused_inplace(fn, result_shape):
    """``x.addmm_(...)`` and friends: the result must have self's shape."""
    def method(self, a, b, *, beta=1, alpha=1):
        shape = result_shape(a, b)
        if tuple(self.shape) != shape:
            if fn is addr:
                raise RuntimeError(f"size mismatch, input: {list(self.shape)}, v1: "
                                   f"{list(a.shape)}, v2: {list(b.shape)}")
            raise RuntimeError(f"Bad in-place call: input tensor size {list(self.shape)} and "
                               f"output tensor size {list(shape)} should match")
        return inplace(self, lambda: fn(self, a, b, beta=beta, alpha=alpha))
    method.__name__ = fn.__name__ + "_"
    return method


addmm_ = _fused_inplace(addmm, lambda a, b: (a.shape[0], b.shape[-1]))
addmv_ = _fused_inplace(addmv, lambda a, b: (a.shape[0],))
addr_ = _fused_inplace(addr, lambda a, b: (a.shape[0], b.shape[0]))
addbmm_ = _fused_inplace(addbmm, lambda a, b: (a.shape[1], b.shape[2]))
baddbmm_ = _fused_inplace(baddbmm, lambda a, b: (a.shape[0], a.shape[1], b.shape[2]))


# --- outer, inner, tensordot, kron ---------------------------------------------------------------

def outer(input, vec2, *, out=None):
    """Mirrors ``torch.outer`` (and ``torch.ger``): ``input.reshape(-1, 1) * vec2``."""
    for x, name in ((input, "self"), (vec2, "vec2")):
        if x.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {x.ndim}-D")
    return _out(pw.mul(_shape.reshape(input, -1, 1), vec2), out)


ger = outer


def inner(input, other, *, out=None):
    """Mirrors ``torch.inner``: contract the last dimension of both (a product when one of them
    is 0-dim)."""
    if input.ndim == 0 or other.ndim == 0:
        return _out(pw.mul(input, other), out)
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(input.shape)} and {list(other.shape)}")
    return _out(tensordot(input, other, ([-1], [-1])), out)


def _tensordot_dims(a, b, dims):
    if hasattr(dims, "tolist"):   # a Tensor: 0-dim count, or two rows of dims
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.ndim or dims > b.ndim:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        return list(range(-dims, 0)), list(range(dims))
    da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    return da, db


@_amp_hook.entry("tensordot")
def tensordot(a, b, dims=2, out=None):
    """Mirrors ``torch.tensordot``: contract ``dims`` (a count of trailing/leading dims, or two
    lists of dims) of ``a`` and ``b`` -- permute, reshape to matrices, ``mm`` (``dot`` when
    nothing is left over), view."""
    if isinstance(dims, list) and dims and all(isinstance(d, int) for d in dims):
        raise TypeError("tensordot(): argument 'dims_self' (position 3) must be tuple of ints, "
                        "not int")
    dims_a, dims_b = _tensordot_dims(a, b, dims)
    for da, db in zip(dims_a, dims_b):
        sa, sb = a.shape[_wrap_dim(da, a.ndim)], b.shape[_wrap_dim(db, b.ndim)]
        if sa != sb:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {sa} "
                               f"in dim {da} and second has size {sb} in dim {db}")
    if a.dtype is not b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    ca = [_wrap_dim(d, a.ndim) for d in dims_a]
    cb = [_wrap_dim(d, b.ndim) for d in dims_b]
    free_a = [d for d in range(a.ndim) if d not in ca]
    free_b = [d for d in range(b.ndim) if d not in cb]
    _no_bool("addmm_impl_cpu_" if free_a or free_b else "dot", a)
    size = math.prod(a.shape[d] for d in ca)
    out_a, out_b = [a.shape[d] for d in free_a], [b.shape[d] for d in free_b]
    ma = _shape.reshape(_shape.permute(a, free_a + ca), math.prod(out_a), size)
    mb = _shape.reshape(_shape.permute(b, cb + free_b), size, math.prod(out_b))
    if not free_a and not free_b:
        result = dot(_shape.reshape(ma, -1), _shape.reshape(mb, -1))
    else:
        result = mm(ma, mb)
    return _out(_shape.view(result, out_a + out_b), out)


def kron(input, other, *, out=None):
    """Mirrors ``torch.kron``: the Kronecker product, as PyTorch builds it (two interleaved
    views, a broadcast mul, a view of the result)."""
    nd = max(input.ndim, other.ndim)
    sa = (1,) * (nd - input.ndim) + tuple(input.shape)
    sb = (1,) * (nd - other.ndim) + tuple(other.shape)
    va = _unsafe_view(input, [s for d in sa for s in (d, 1)])
    vb = _unsafe_view(other, [s for d in sb for s in (1, d)])
    return _out(_unsafe_view(pw.mul(va, vb), [x * y for x, y in zip(sa, sb)]), out)


# --- multi_dot, chain_matmul --------------------------------------------------------------------

def _chain_order(dims):
    """The cheapest parenthesization of a chain of matrices with ``dims`` (p0 x p1, p1 x p2,
    ...): split[i][j] is where the product of matrices i..j splits (the classic dynamic
    program; PyTorch's multi_dot uses the same, with a direct comparison for three)."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain(tensors, split, i, j):
    if i == j:
        return tensors[i]
    k = split[i][j]
    return mm(_chain(tensors, split, i, k), _chain(tensors, split, k + 1, j))


def _multiply_chain(tensors):
    if len(tensors) == 2:
        return mm(*tensors)
    if len(tensors) == 3:
        (a, b), (_, c), (_, d) = (t.shape for t in tensors)
        if a * c * (b + d) <= b * d * (a + c):
            return mm(mm(tensors[0], tensors[1]), tensors[2])
        return mm(tensors[0], mm(tensors[1], tensors[2]))
    dims = [tensors[0].shape[0]] + [t.shape[1] for t in tensors]
    return _chain(tensors, _chain_order(dims), 0, len(tensors) - 1)


@_amp_hook.entry("multi_dot")
def multi_dot(tensors, *, out=None):
    """Mirrors ``torch.linalg.multi_dot``: the product of two or more matrices in the cheapest
    order; the first may be a row vector and the last a column vector (1-D)."""
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    for i, t in enumerate(tensors):
        if i in (0, n - 1):
            if t.ndim not in (1, 2):
                which = "first" if i == 0 else "last"
                raise RuntimeError(f"multi_dot(): the {which} tensor must be 1D or 2D but got "
                                   f"{t.ndim}D")
        elif t.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor "
                               f"0 is {_name(tensors[0]).lower()} and tensor {i} "
                               f"{_name(t).lower()}")
    first, last = tensors[0], tensors[-1]
    mats = [_shape.unsqueeze(first, 0) if first.ndim == 1 else first, *tensors[1:-1],
            _shape.unsqueeze(last, -1) if last.ndim == 1 else last]
    for i in range(n - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(tensors[i].shape)} and {list(tensors[i + 1].shape)} "
                               "cannot be multiplied")
    out_shape = list(first.shape[:1] if first.ndim == 2 else []) + list(
        last.shape[1:] if last.ndim == 2 else [])
    return _out(_shape.view(_multiply_chain(mats), out_shape), out)


@_amp_hook.entry("chain_matmul")
def chain_matmul(*matrices, out=None):
    """Mirrors ``torch.chain_matmul`` (deprecated in PyTorch for ``linalg.multi_dot``)."""
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch "
                  "release. Use torch.linalg.multi_dot instead, which accepts a list of two or "
                  "more tensors rather than multiple parameters.", UserWarning,
                  stacklevel=_amp_hook.stacklevel(2))
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for t in matrices:
        if t.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {t.ndim}, expected 2 instead.")
    if len(matrices) == 1:
        return _out(_shape.clone(matrices[0]), out)
    return multi_dot(list(matrices), out=out)


# --- cross, vecdot, diagonal --------------------------------------------------------------------

CROSS = Op("linalg_cross", lambda a, b, dim: jnp.cross(a, b, axis=dim), "LinalgCrossBackward0",
           saves=_CROSS)


def _broadcast_shape(*shapes):
    """The broadcast of ``shapes``, or PyTorch's error."""
    try:
        return tuple(np.broadcast_shapes(*(tuple(s) for s in shapes)))
    except ValueError:
        from .._dispatch import _broadcast_message
        raise RuntimeError(_broadcast_message([SimpleNamespace(shape=s) for s in shapes])
                           ) from None


def _cross(input, other, dim):
    if input.dtype is not other.dtype:
        raise RuntimeError(f"expected scalar type {_name(input)} but found {_name(other)}")
    return call(CROSS, input, other, static=(("dim", dim),))


@_amp_hook.entry("cross")
def cross(input, other, dim=None, *, out=None):
    """Mirrors ``torch.cross``: without ``dim``, the first dimension of size 3 (PyTorch warns
    that this default will change to -1, as in ``linalg.cross``)."""
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease "
                      "either pass the dim explicitly or simply use torch.linalg.cross.\nThe "
                      "default value of dim will change to agree with that of linalg.cross in "
                      "a future release.", UserWarning,
                      stacklevel=_amp_hook.stacklevel(2))
        if input.ndim != other.ndim:
            raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
        shape = _broadcast_shape(input.shape, other.shape)
        if 3 not in shape:
            raise RuntimeError("no dimension of size 3 in input")
        dim = shape.index(3)
    return linalg_cross(input, other, dim=dim, out=out)


def linalg_cross(input, other, *, dim=-1, out=None):
    """Mirrors ``torch.linalg.cross``: the cross product of 3-vectors along ``dim``
    (broadcasting the other dimensions)."""
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = _wrap_dim(dim, input.ndim)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[d]} and {other.shape[d]}")
    _broadcast_shape(input.shape, other.shape)
    return _out(_cross(input, other, d), out)


@_amp_hook.entry("vecdot")
def vecdot(x, y, *, dim=-1, out=None):
    """Mirrors ``torch.linalg.vecdot``: ``sum(conj(x) * y, dim)``."""
    for t in (x, y):
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as "
                               f"input. Got {_name(t)}")
    if x.dtype.is_complex:
        from .complex import conj
        x = conj(x)
    return _out(_reduce.sum(pw.mul(x, y), dim), out)


def linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """Mirrors ``torch.linalg.diagonal``: ``torch.diagonal`` with the last two dims as default
    (a view)."""
    return _shape.diagonal(A, offset, dim1, dim2)


# --- cdist --------------------------------------------------------------------------------------

def _safe_pow(a, p):
    # NOTE: PyTorch's cdist gradient is 0 where a distance component (or a distance) is 0; the
    # double where keeps the infinite derivative of a ** p (p < 1) out.
    zero = a == 0
    return jnp.where(zero, 0, jnp.where(zero, 1, a) ** p)


def _euclidean_dist(x1, x2, precision):
    """|x|^2 - 2 x.y + |y|^2, clamped before the square root, as PyTorch's mm path."""
    sq = (jnp.sum(x1 * x1, -1)[..., :, None] + jnp.sum(x2 * x2, -1)[..., None, :]
          - 2 * jnp.matmul(x1, jnp.swapaxes(x2, -1, -2), precision=precision))
    return jnp.sqrt(jnp.maximum(sq, 1e-30))


def _cdist(x1, x2, p):
    diff = jnp.abs(x1[..., :, None, :] - x2[..., None, :, :])
    if p == 0:
        return jnp.sum(diff != 0, -1).astype(diff.dtype)
    if p == math.inf:
        return jnp.max(diff, -1) if diff.shape[-1] else jnp.zeros(diff.shape[:-1], diff.dtype)
    if p == 1:
        return jnp.sum(diff, -1)
    return _safe_pow(jnp.sum(_safe_pow(diff, p), -1), 1.0 / p)


EUCLIDEAN_DIST = Op("_euclidean_dist", _euclidean_dist, "EuclideanDistBackward0")
CDIST = Op("cdist", _cdist, "CdistBackward0")
_CDIST_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                "donot_use_mm_for_euclid_dist")


@_amp_hook.entry("cdist")
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """Mirrors ``torch.cdist``: the p-norm distance between each row of ``x1`` (..., P, M) and
    each row of ``x2`` (..., R, M), batch dimensions broadcast.

    For p = 2, ``compute_mode`` picks PyTorch's matrix-product formula (faster, less exact for
    near points) as PyTorch does: always, never, or when P or R exceeds 25 (the default).
    """
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for t, name in ((x1, "X1"), (x2, "X2")):
        if t.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: "
                               f"{t.ndim}D")
    for t, name in ((x1, "X1"), (x2, "X2")):
        if not t.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{_name(t)}")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if x1.dtype is not x2.dtype:
        raise RuntimeError(f"expected scalar type {_name(x1)} but found {_name(x2)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    batch = _broadcast_shape(x1.shape[:-2], x2.shape[:-2])
    use_mm = p == 2 and (compute_mode == _CDIST_MODES[1] or (
        compute_mode == _CDIST_MODES[0] and (x1.shape[-2] > 25 or x2.shape[-2] > 25)))
    if not use_mm:
        return call(CDIST, x1, x2, static=(("p", float(p)),))
    # PyTorch: expand to the common batch, fold it, _euclidean_dist, view
    (n1, m), n2 = x1.shape[-2:], x2.shape[-2]
    if batch:
        x1 = _shape.reshape(_shape.expand(x1, *batch, n1, m), -1, n1, m)
        x2 = _shape.reshape(_shape.expand(x2, *batch, n2, m), -1, n2, m)
    return _shape.view(call(EUCLIDEAN_DIST, x1, x2, static=_static()), *batch, n1, n2)


# The decompositions and einsum join this family's public names (they import from this module,
# so they come last).
from .decomp import (cholesky, det, inverse, logdet, matrix_exp, matrix_power,  # noqa: E402,F401
                     pinverse, qr, svd)
from .decomp import _slogdet as slogdet  # noqa: E402,F401
from .einsum import einsum  # noqa: E402,F401

# Public names and Tensor methods of this family.
PUBLIC = ("matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm", "addmv",
          "addr", "addbmm", "baddbmm", "tensordot", "kron", "cross", "cdist", "chain_matmul",
          "einsum", "det", "logdet", "slogdet", "inverse", "pinverse", "matrix_power",
          "matrix_exp", "cholesky", "qr", "svd")
TENSOR_METHODS = {name: globals()[name] for name in (
    "matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm", "addmv", "addr",
    "addbmm", "baddbmm", "kron", "cross", "det", "logdet", "slogdet", "inverse", "pinverse",
    "matrix_power", "matrix_exp", "cholesky", "qr", "svd", "addmm_", "addmv_", "addr_", "addbmm_",
    "baddbmm_")}
