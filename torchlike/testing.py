"""torchlike.testing: ``assert_close`` (mirrors torch.testing) and the jax.grad oracle.

The oracle (docs/architecture.md §7.4): run a torchlike function on Tensors that hold jax tracers,
which turns it into a pure JAX function, and compare ``jax.grad`` of that function with the
gradients torchlike's own engine produced with ``.backward()``.  It checks the engine (graph walk,
accumulation, hooks-free paths, in-place rebinding, views) independently of each op's maths.

    def f(x, w):
        return (x @ w).relu().sum()
    torchlike.testing.assert_grads_match_jax(f, x, w)
"""
import jax
import numpy as np

from . import _dtype as D, _x64
from ._tensor import Tensor
from .autograd.grad_mode import no_grad

__all__ = ["assert_close", "to_jax_function", "grads_from_jax", "assert_grads_match_jax"]

# (rtol, atol) per dtype, as torch.testing.assert_close
_TOLERANCES = {D.float16: (1e-3, 1e-5), D.bfloat16: (1.6e-2, 1e-5), D.float32: (1.3e-6, 1e-5),
               D.float64: (1e-7, 1e-7), D.complex64: (1.3e-6, 1e-5),
               D.complex128: (1e-7, 1e-7)}


def _as_numpy(x):
    if isinstance(x, Tensor):
        x = x.detach()._value()
    a = np.asarray(x)
    if a.dtype == D.bfloat16._np:
        a = a.astype(np.float32)
    return a


def _dtype_of(x):
    if isinstance(x, Tensor):
        return x.dtype
    try:
        return D.from_numpy_dtype(np.asarray(x).dtype)
    except TypeError:
        return None


def assert_close(actual, expected, *, rtol=None, atol=None, equal_nan=False, check_dtype=True,
                 check_device=True, msg=None):
    """Mirrors ``torch.testing.assert_close`` for Tensors, arrays, scalars and (nested)
    sequences/mappings of them: |actual - expected| <= atol + rtol * |expected|."""
    if isinstance(actual, (list, tuple)) and isinstance(expected, (list, tuple)):
        if len(actual) != len(expected):
            raise AssertionError(f"The length of the sequences mismatch: {len(actual)} != "
                                 f"{len(expected)}")
        for a, e in zip(actual, expected):
            assert_close(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan,
                         check_dtype=check_dtype, msg=msg)
        return
    if isinstance(actual, dict) and isinstance(expected, dict):
        if actual.keys() != expected.keys():
            raise AssertionError(f"The keys of the mappings do not match: {sorted(actual)} != "
                                 f"{sorted(expected)}")
        for k in actual:
            assert_close(actual[k], expected[k], rtol=rtol, atol=atol, equal_nan=equal_nan,
                         check_dtype=check_dtype, msg=msg)
        return
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         f"no {'rtol' if rtol is None else 'atol'}.")
    da, de = _dtype_of(actual), _dtype_of(expected)
    if check_dtype and isinstance(actual, Tensor) and isinstance(expected, Tensor) and da != de:
        raise AssertionError(msg or f"The values for attribute 'dtype' do not match: {da} != "
                                    f"{de}.")
    a, e = _as_numpy(actual), _as_numpy(expected)
    if a.shape != e.shape:
        raise AssertionError(msg or f"The values for attribute 'shape' do not match: "
                                    f"torch.Size({list(a.shape)}) != torch.Size({list(e.shape)}).")
    if rtol is None:
        rtol, atol = _TOLERANCES.get(de, (0.0, 0.0)) if de is not None else (0.0, 0.0)
    if a.dtype.kind in "biu" and e.dtype.kind in "biu":
        bad = a != e
        a_f, e_f = a.astype(np.float64), e.astype(np.float64)
    else:
        a_f, e_f = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64), \
            e.astype(np.complex128 if e.dtype.kind == "c" else np.float64)
        with np.errstate(invalid="ignore"):
            bad = ~np.isclose(a_f, e_f, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if not bad.any():
        return
    if msg is not None:
        raise AssertionError(msg)
    diff = np.abs(a_f - e_f)
    rel = diff / np.where(np.abs(e_f) == 0, np.inf, np.abs(e_f))
    n, total = int(bad.sum()), bad.size
    worst_abs = np.unravel_index(np.nanargmax(np.where(bad, diff, -np.inf)), bad.shape)
    worst_rel = np.unravel_index(np.nanargmax(np.where(bad, rel, -np.inf)), bad.shape)
    raise AssertionError(
        f"Tensor-likes are not close!\n\nMismatched elements: {n} / {total} "
        f"({100 * n / total:.1f}%)\n"
        f"Greatest absolute difference: {diff[worst_abs]} at index {tuple(map(int, worst_abs))} "
        f"(up to {atol} allowed)\n"
        f"Greatest relative difference: {rel[worst_rel]} at index {tuple(map(int, worst_rel))} "
        f"(up to {rtol} allowed)")


def to_jax_function(fn):
    """A pure function of jax arrays that runs the torchlike function ``fn`` (which takes and
    returns Tensors) on Tensors holding the arrays: what jax.grad / jax.jit can transform."""
    @_x64.scoped
    def pure(*arrays):
        with no_grad():
            out = fn(*[Tensor._wrap(a) for a in arrays])
        if isinstance(out, (tuple, list)):
            return type(out)(o._value() for o in out)
        return out._value()
    return pure


@_x64.scoped
def grads_from_jax(fn, *inputs):
    """jax.grad of the scalar-valued torchlike function ``fn`` w.r.t. every input, as arrays."""
    arrays = [t.detach()._value() for t in inputs]
    return jax.grad(to_jax_function(fn), argnums=tuple(range(len(arrays))))(*arrays)


def assert_grads_match_jax(fn, *inputs, rtol=None, atol=None):
    """Check torchlike's ``fn(*inputs).backward()`` against jax.grad of the same computation.

    ``fn`` maps Tensors to a scalar Tensor; ``inputs`` are floating tensors.  Leaves get
    requires_grad, the engine runs, and each ``.grad`` must match jax.grad's."""
    leaves = [t.detach().clone().requires_grad_(True) for t in inputs]
    fn(*leaves).backward()
    expected = grads_from_jax(fn, *inputs)
    for i, (leaf, e) in enumerate(zip(leaves, expected)):
        got = leaf.grad
        if got is None:
            got = np.zeros_like(np.asarray(e))
        try:
            assert_close(_as_numpy(got), np.asarray(e), rtol=rtol, atol=atol)
        except AssertionError as err:
            raise AssertionError(f"gradient of input {i} differs from jax.grad:\n{err}") from None
