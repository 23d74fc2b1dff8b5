"""The parity harness: torchlike against real PyTorch (CPU), shared by the tests.

Every case runs the same function once with ``torch`` and once with ``torchlike`` (the APIs are
the same) and compares what comes back: values, dtypes, shapes, ``requires_grad``, grad_fn class
names, ``next_functions`` names, the gradients of every floating-point input, and -- where the
row declares that torch raises (``raises=True``) -- the exception type (and, where users grep for
it, the message).  A row that does not declare it fails when torch raises: both libraries
refusing a mistaken input would otherwise pass while testing nothing.

Cases are spec tables: one row per case (docs/architecture.md §7.5).  Test files import what they
use from here (tests/ is on sys.path under pytest's default "prepend" import mode); the name does
not start with ``test_``, so pytest does not collect this file.  test_parity.py tests the harness.
"""
import cmath
import math
import re
import zlib

import numpy as np
import pytest
import torch

import torchlike as tl

TOL = {"float16": (2e-3, 2e-3), "bfloat16": (1.6e-2, 1.6e-2), "float32": (2e-5, 2e-6),
       "float64": (1e-10, 1e-12), "complex64": (2e-5, 2e-6), "complex128": (1e-10, 1e-12)}


class Raised:
    """What a call raised, kept so the two libraries' failures can be compared."""

    def __init__(self, exc):
        self.exc = exc

    def __repr__(self):
        return f"Raised({type(self.exc).__name__}: {self.exc})"


def catch(f):
    """Call ``f``; return what it raised (as Raised) instead of raising it."""
    try:
        return f()
    except Exception as e:  # noqa: BLE001 - the exception itself is the result under test
        return Raised(e)


def run(fn, T):
    return catch(lambda: fn(T))


def dname(d):
    return str(d).rsplit(".", 1)[-1]


def gname(t):
    return type(t.grad_fn).__name__


def next_names(node):
    return [(type(n).__name__, i) for n, i in node.next_functions]


def np_of(t):
    """A torch or torchlike tensor's values as a numpy array (bfloat16 widened)."""
    if isinstance(t, torch.Tensor):
        t = t.detach().resolve_conj().resolve_neg()
        if t.dtype == torch.bfloat16:
            t = t.to(torch.float32)
        return t.numpy()
    return np.asarray(t.detach().numpy())


def close_scalars(ref, got, rtol, atol):
    """Two Python floats / complexes agree to the tolerance; NaN agrees with NaN only."""
    if cmath.isnan(ref) or cmath.isnan(got):
        return all(math.isnan(r) == math.isnan(g) and (math.isnan(r) or r == g)
                   for r, g in ((ref.real, got.real), (ref.imag, got.imag)))
    return cmath.isclose(got, ref, rel_tol=1e-12 if rtol is None else rtol,
                         abs_tol=0 if atol is None else atol)


def assert_same(ref, got, path="result", rtol=None, atol=None, match=None, raises=False):
    """Assert torchlike's ``got`` mirrors torch's ``ref`` (recursively).

    ``raises`` says what torch is expected to do: False (a value row: torch raising means the
    row is wrong, so it fails), True (an error row: torch must raise) or None (either: a sweep
    whose cells may be errors, which are then compared like the values).  A ``Raised`` nested
    inside a result is always compared: the row caught it on purpose."""
    if raises is not None and isinstance(ref, Raised) != raises:
        raise AssertionError(
            f"{path}: test is wrong: torch raised {ref!r} in a value row (declare raises=True "
            f"for an error row)" if isinstance(ref, Raised) else
            f"{path}: test is wrong: torch returned {ref!r} in an error row")
    if isinstance(ref, Raised):
        if not isinstance(got, Raised):
            raise AssertionError(f"{path}: torch raised {ref!r}, torchlike returned {got!r}")
        rtype, gtype = type(ref.exc), type(got.exc)
        assert issubclass(gtype, rtype) or gtype.__name__ == rtype.__name__, (
            f"{path}: torch raised {ref!r}, torchlike raised {got!r}")
        if match is not None:
            assert re.search(match, str(ref.exc)), f"test is wrong: torch message {ref!r}"
            assert re.search(match, str(got.exc)), (
                f"{path}: message mismatch: torch {ref!r}, torchlike {got!r}")
        return
    if isinstance(got, Raised):
        raise AssertionError(f"{path}: torch returned {ref!r}, torchlike raised "
                             f"{got!r}") from got.exc
    if isinstance(ref, torch.Tensor):
        assert isinstance(got, tl.Tensor), f"{path}: expected a Tensor, got {type(got)}: {got!r}"
        assert dname(got.dtype) == dname(ref.dtype), (
            f"{path}: dtype torch {ref.dtype} vs torchlike {got.dtype}")
        assert tuple(got.shape) == tuple(ref.shape), (
            f"{path}: shape torch {tuple(ref.shape)} vs torchlike {tuple(got.shape)}")
        assert got.requires_grad == ref.requires_grad, (
            f"{path}: requires_grad torch {ref.requires_grad} vs torchlike {got.requires_grad}")
        assert gname(got) == gname(ref), f"{path}: grad_fn torch {gname(ref)} vs {gname(got)}"
        r, g = np_of(ref), np_of(got)
        if ref.dtype.is_floating_point or ref.dtype.is_complex:
            rt, at = TOL[dname(ref.dtype)]
            np.testing.assert_allclose(g, r, rtol=rt if rtol is None else rtol,
                                       atol=at if atol is None else atol, equal_nan=True,
                                       err_msg=f"{path}: values differ")
        else:
            np.testing.assert_array_equal(g, r, err_msg=f"{path}: values differ")
        return
    if isinstance(ref, torch.dtype):
        assert isinstance(got, tl.dtype), f"{path}: expected a dtype, got {got!r}"
        assert dname(got) == dname(ref), f"{path}: torch {ref} vs torchlike {got}"
        return
    if isinstance(ref, torch.Size):
        assert type(got).__name__ == "Size" and isinstance(got, tuple), f"{path}: {got!r}"
        assert tuple(got) == tuple(ref), f"{path}: torch {ref} vs torchlike {got}"
        return
    if isinstance(ref, torch.device):
        assert str(got) == str(ref), f"{path}: torch {ref} vs torchlike {got}"
        return
    if isinstance(ref, (list, tuple)):
        assert type(got) is type(ref), f"{path}: torch {type(ref)} vs torchlike {type(got)}"
        assert len(got) == len(ref), f"{path}: length torch {len(ref)} vs torchlike {len(got)}"
        for i, (r, g) in enumerate(zip(ref, got)):
            assert_same(r, g, f"{path}[{i}]", rtol, atol, match, raises=None)
        return
    if isinstance(ref, dict):
        assert isinstance(got, dict) and list(got) == list(ref), f"{path}: keys {got} vs {ref}"
        for k in ref:
            assert_same(ref[k], got[k], f"{path}[{k!r}]", rtol, atol, match, raises=None)
        return
    assert type(got) is type(ref), (
        f"{path}: torch {type(ref).__name__} {ref!r} vs torchlike {type(got).__name__} {got!r}")
    if isinstance(ref, (float, complex)):
        assert close_scalars(ref, got, rtol, atol), f"{path}: torch {ref!r} vs torchlike {got!r}"
    else:
        assert got == ref, f"{path}: torch {ref!r} vs torchlike {got!r}"


def both(fn, rtol=None, atol=None, match=None, raises=False):
    """Run ``fn(torch)`` and ``fn(torchlike)``; assert the results (or, where the row declares
    ``raises``, the exceptions) agree."""
    ref = run(fn, torch)
    got = run(fn, tl)
    assert_same(ref, got, rtol=rtol, atol=atol, match=match, raises=raises)
    return ref, got


def same(fn, raises=False):
    """``both(fn)``; where torch raised, the messages must also be identical."""
    ref, got = both(fn, raises=raises)
    if isinstance(ref, Raised):
        assert str(got.exc) == str(ref.exc), f"torch: {ref.exc}\ntorchlike: {got.exc}"
    return ref, got


class A:
    """An input: a numpy-generated array of ``shape`` and ``dtype``; floats require grad.

    dom: 'any' (-2..2), 'pos' (0.5..2), 'nz' (|x| in 0.5..2), 'unit' (-0.9..0.9),
    'prob' (0.05..0.95: probabilities and rates), 'small' (non-negative small ints for exponents
    and indices).
    """

    def __init__(self, shape, dtype="float32", dom="any", grad=True):
        self.shape, self.dtype, self.dom, self.grad = shape, dtype, dom, grad

    def __repr__(self):
        return f"{self.dtype}{list(self.shape)}"

    def values(self, rng):
        s, d = self.shape, self.dtype
        if d == "bool":
            return rng.random(s) > 0.5
        if d in ("uint8", "int8", "int16", "int32", "int64"):
            lo, hi = {"any": (-5, 6), "pos": (1, 6), "nz": (1, 6), "small": (0, 4)}[self.dom]
            if d == "uint8":
                lo = max(lo, 0)
            return rng.integers(lo, hi, size=s).astype(d)
        if self.dom == "pos":
            v = rng.uniform(0.5, 2.0, s)
        elif self.dom == "nz":
            v = rng.uniform(0.5, 2.0, s) * rng.choice([-1.0, 1.0], s)
        elif self.dom == "unit":
            v = rng.uniform(-0.9, 0.9, s)
        elif self.dom == "prob":
            v = rng.uniform(0.05, 0.95, s)
        else:
            v = rng.uniform(-2.0, 2.0, s)
        return np.asarray(v, dtype=np.float64 if d == "float64" else np.float32)

    def make(self, T, values):
        t = T.tensor(values, dtype=getattr(T, self.dtype))
        if self.grad and t.dtype.is_floating_point:
            t.requires_grad_()
        return t


class L:
    """An explicit input: the values ``v`` as a tensor of ``dtype``; floats require grad."""

    def __init__(self, v, dtype="float32"):
        self.v, self.dtype = v, dtype

    def values(self, rng):
        return np.asarray(self.v, self.dtype)

    def make(self, T, values):
        t = T.tensor(values, dtype=getattr(T, self.dtype))
        return t.requires_grad_() if t.dtype.is_floating_point else t


def seed_of(name):
    return zlib.crc32(name.encode())


# torch has no derivative for these (floor_divide; remainder with a Python-scalar self): its
# backward raises "derivative for aten::floor_divide is not implemented". Compare values only.
NO_TORCH_DERIVATIVE = {"x//2", "3//x", "3%x", "floordiv_f32"}


def check_op(name, fn, inputs, upstream=True, rtol=None, atol=None, match=None, raises=False):
    """Run ``fn(T, *tensors)`` in both libraries; compare the output, its grad_fn and
    next_functions names, and (after backward with a random upstream gradient, or
    ``.sum().backward()`` when ``upstream`` is False) the ``.grad`` of every input."""
    if name.split("|")[0] in NO_TORCH_DERIVATIVE:
        inputs = [A(a.shape, a.dtype, a.dom, grad=False) for a in inputs]
    rng = np.random.default_rng(seed_of(name))
    vals = [a.values(rng) if hasattr(a, "make") else a for a in inputs]
    gseed = seed_of(name + "/g")

    def go(T):
        xs = [a.make(T, v) if hasattr(a, "make") else v for a, v in zip(inputs, vals)]
        out = fn(T, *xs)
        res = {"out": out}
        if isinstance(out, T.Tensor) and out.grad_fn is not None:
            res["next"] = next_names(out.grad_fn)
            if upstream:
                g = np.random.default_rng(gseed).standard_normal(tuple(out.shape))
                out.backward(T.tensor(g, dtype=out.dtype))
            else:
                out.sum().backward()
            res["grads"] = [x.grad if isinstance(x, T.Tensor) else None for x in xs]
        return res

    both(go, rtol=rtol, atol=atol, match=match, raises=raises)


def cases(table):
    """One pytest.param per spec-table row, its id the row's name (a case function's own)."""
    return [pytest.param(*row, id=getattr(row[0], "__name__", str(row[0]))) for row in table]


# ------------------------------------------------------------------------------------------------
# Engine cases (test_parity_autograd_*.py): a case is a function of the library module ``T``; it
# runs once with ``torch`` and once with ``torchlike`` and whatever it returns (tensors, grads,
# flags, recorded hook calls, raised errors) must agree.  A table row is (case, match).
# ------------------------------------------------------------------------------------------------

X3 = [1.0, -2.0, 0.5]
M23 = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
VERSION_ERR = "one of the variables needed for gradient computation has been modified by an " \
    "inplace operation"


def raising(case):
    """Marks a case whose result in torch is an exception (raised, or caught and returned): it is
    compared with torchlike's; every other case must return a value."""
    case.raises = True
    return case


def leaf(T, values, dtype=None):
    return T.tensor(values, dtype=dtype or T.float32, requires_grad=True)


def vals(t):
    """A tensor without its graph: compare values/dtype/shape and requires_grad, not node names
    (used for higher-order results, whose node names are an implementation detail)."""
    return (t.detach(), t.requires_grad)


def both_again(fn, match):
    """Run case ``fn`` once in torchlike, then ``both``: a graph shape seen before runs its
    backward as one program (NOTE [ fused backward ] in torchlike/autograd/fused.py) wherever the
    graph is plain; results must still be torch's."""
    run(fn, tl)
    both(fn, match=match, raises=getattr(fn, "raises", False))
