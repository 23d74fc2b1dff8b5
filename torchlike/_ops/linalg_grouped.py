"""``torch.nn.functional.grouped_mm``: the grouped matrix products of mixture-of-experts layers.

One operand (or both, when 2-d) is cut into groups along one dim by ``offs``, int32 ends of
the groups (group i spans ``[offs[i-1], offs[i])``, from 0):

- 2-d A (M, K) and 3-d B (G, K, N): rows of A by group, each times its B[i] -> (M, N);
- 3-d A (G, M, K) and 2-d B (K, N): columns of B by group, A[i] times each -> (M, N);
- 2-d A (M, K) and 2-d B (K, N): the shared K by group -> (G, M, N);
- 3-d A and 3-d B (no offs): a batched product -> (G, M, N).

Rows (columns) past ``offs[-1]`` are 0 here (PyTorch leaves them unwritten).  The ragged
products are jax's ``ragged_dot``; the gradient is its vjp, recorded as GroupedMmBackward0.
"""
import jax
import jax.numpy as jnp

from .. import _dtype as D, _precision
from .._dispatch import Op, call


def _sizes(offs):
    return jnp.diff(offs, prepend=0).astype(jnp.int32)


def _grouped_mm(a, b, offs, precision):
    if a.ndim == 3 and b.ndim == 3:
        return jnp.matmul(a, b, precision=precision)
    if a.ndim == 2 and b.ndim == 3:
        return jax.lax.ragged_dot(a, b, _sizes(offs), precision=precision)
    if a.ndim == 3:   # columns of B by group: (B^T ragged A^T)^T
        return jax.lax.ragged_dot(b.T, jnp.swapaxes(a, 1, 2), _sizes(offs),
                                  precision=precision).T
    k = jnp.arange(a.shape[1])
    starts = jnp.concatenate([jnp.zeros(1, offs.dtype), offs[:-1]])
    member = (k >= starts[:, None]) & (k < offs[:, None])                # (G, K)
    return jnp.einsum("mk,gk,kn->gmn", a, member.astype(a.dtype), b, precision=precision)


GROUPED_MM = Op("_grouped_mm", _grouped_mm, "GroupedMmBackward0", inputs=2)


def grouped_mm(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None):
    """Mirrors ``torch.nn.functional.grouped_mm``: ``mat_a @ mat_b`` per group, for float32,
    bfloat16 and float16 operands (see the module docstring for the four layouts)."""
    for name, m in (("mat_a", mat_a), ("mat_b", mat_b)):
        if m.ndim not in (2, 3):
            raise RuntimeError(f"{name} has to be 2 or 3d")
        if m.dtype not in (D.float32, D.bfloat16, D.float16):
            raise RuntimeError(f"Expected {name} to be Float32, BFloat16 or Float16 matrix, got "
                               f"{m.dtype._scalar_name}")
    if (offs is None) != (mat_a.ndim == 3 and mat_b.ndim == 3):
        raise RuntimeError("Have to provide offsets if there is a 2d matrix, or no offset if "
                           "both matrices are 3d")
    if offs is not None and offs.dtype is not D.int32:
        raise RuntimeError("Offsets have to be int32")
    if mat_a.shape[-1] != mat_b.shape[-2]:
        raise RuntimeError("contraction dimension of mat_a and mat_b must match")
    if bias is not None:
        raise RuntimeError("Bias not supported yet")
    if out_dtype is not None and out_dtype is not mat_a.dtype:
        raise RuntimeError("Grouped gemm output dtype must match `mat_a` dtype")
    return call(GROUPED_MM, mat_a, mat_b, offs, static=_precision.static())
