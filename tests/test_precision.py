"""The float32 precision policy (NOTE [ matmul precision ] in torchlike/_precision.py).

Three checks: every dot written in torchlike's source passes a precision (an AST walk); every
dot the op families run -- forward and backward, eager and after a change of policy -- carries
the policy's precision (recorded as the programs are traced); and at 'highest' the products
whose precision used to be left to JAX (sdpa, bilinear, linalg backward rules) match torch's
float64 results to float32 rounding.  The switches' read-back against real torch's is in
tests/test_device_runtime.py.
"""
import ast
import pathlib
import warnings

import jax
import numpy as np
import pytest
import torch

import torchlike as tl
from torchlike import _precision

ROOT = pathlib.Path(tl.__file__).parent
HIGH, HIGHEST = jax.lax.Precision.HIGH, jax.lax.Precision.HIGHEST

# --- the source: every dot passes a precision ------------------------------------------------

_DOTS = {"matmul", "dot", "vdot", "vecdot", "inner", "tensordot", "einsum", "matvec", "vecmat",
         "multi_dot", "dot_general", "batch_matmul", "conv", "conv_general_dilated",
         "conv_with_general_padding", "conv_transpose", "convolve", "correlate"}
_JAX_NAMES = {"jnp", "lax", "jax.numpy", "jax.lax", "jnp.linalg", "jax.numpy.linalg",
              "jax.scipy.signal"}
# ``@`` in a module that uses jax: allowed only here, each with its reason
_MATMUL_OPERATOR_OK = {
    ("autograd/gradcheck.py", "vj[i][j] @ u"): "numpy float64 vectors (gradcheck's own check)",
    ("autograd/gradcheck.py", "v @ ju[j][k]"): "numpy float64 vectors (gradcheck's own check)",
}


def _uses_jax(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "jax"
                                                for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "jax":
            return True
    return False


def _unprecise_dots(path, tree):
    """(line, source) of each jnp/lax dot without ``precision=`` and each ``@`` between arrays."""
    rel = path.relative_to(ROOT).as_posix()
    bad, uses_jax = [], _uses_jax(tree)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in _DOTS
                and ast.unparse(node.func.value) in _JAX_NAMES
                and not any(k.arg == "precision" for k in node.keywords)):
            bad.append((node.lineno, ast.unparse(node)))
        if (uses_jax and isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult)
                and (rel, ast.unparse(node)) not in _MATMUL_OPERATOR_OK):
            bad.append((node.lineno, ast.unparse(node)))
    return bad


def test_every_dot_in_the_source_passes_a_precision():
    bad = []
    for path in sorted(ROOT.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        bad += [f"{path.relative_to(ROOT)}:{line}: {src}"
                for line, src in _unprecise_dots(path, tree)]
    assert not bad, ("dots without the precision policy (pass precision=_precision.matmul() "
                     "or take it as a static argument; see NOTE [ matmul precision ]):\n"
                     + "\n".join(bad))


def test_the_source_check_finds_what_it_looks_for(tmp_path):
    path = ROOT / "_probe.py"   # a name inside ROOT, so relative paths work; never written
    tree = ast.parse("import jax.numpy as jnp\n"
                     "def f(a, b, p):\n"
                     "    x = jnp.matmul(a, b)\n"
                     "    y = jnp.einsum('ij,jk->ik', a, b, precision=p)\n"
                     "    return a @ b, jax.lax.dot_general(a, b, (((1,), (0,)), ((), ())))\n")
    assert [line for line, _ in _unprecise_dots(path, tree)] == [3, 5, 5]


# --- the programs: every dot carries the policy --------------------------------------------------

class _Recorder:
    """The precision of every dot_general and convolution traced while active."""

    def __init__(self, monkeypatch):
        self.seen = []
        for prim in (jax.lax.dot_general_p, jax.lax.conv_general_dilated_p):
            monkeypatch.setattr(prim, "bind", self._hook(prim.bind), raising=False)

    def _hook(self, bind):
        def hooked(*args, **params):
            p = params.get("precision")
            self.seen.append(tuple(p) if isinstance(p, tuple) else (p, p))
            return bind(*args, **params)
        return hooked

    def kinds(self):
        return {q for pair in self.seen for q in pair}


@pytest.fixture
def policy():
    before = _precision.get_float32_matmul_precision()
    yield _precision.set_float32_matmul_precision
    _precision.set_float32_matmul_precision(before)


def _randn(*shape, grad=True, seed=0):
    x = tl.tensor(np.random.default_rng(seed + len(shape)).standard_normal(shape)
                  .astype(np.float32))
    return x.requires_grad_() if grad else x


def _spd(n):
    a = np.random.default_rng(n).standard_normal((n, n)).astype(np.float32)
    return a @ a.T / n + np.eye(n, dtype=np.float32)


def _flat(out):
    return [t for o in out for t in _flat(o)] if isinstance(out, (tuple, list)) else [out]


def _loss(out):
    return sum(o.abs().sum() for o in _flat(out) if o.is_floating_point())


def _arrays(*shapes):
    return [np.random.default_rng(i).standard_normal(s).astype(np.float32) if isinstance(s, tuple)
            else s for i, s in enumerate(shapes)]


def _trace_grad(fn, *inputs):
    """Trace ``fn``'s loss and its gradient with respect to every input (as ``jax.grad`` of
    ``torchlike.func.to_jax(fn)``): the dots of forward and backward are bound while tracing,
    whatever the caches hold (with jit off, a routine jax jits itself, as expm, is traced
    afresh rather than taken from the trace cache an earlier test filled)."""
    pure = tl.func.to_jax(lambda *ts: _loss(fn(*ts)))
    with jax.disable_jit():
        jax.make_jaxpr(jax.grad(pure, argnums=tuple(range(len(inputs)))))(*inputs)


def _module(module, *inputs):
    """Trace ``module``'s loss and its gradient with respect to its parameters and inputs."""
    pure, params = tl.func.to_jax(module)
    loss = tl.func.to_jax(lambda out: _loss(out))
    with jax.disable_jit():
        jax.make_jaxpr(jax.grad(lambda p, *xs: loss(pure(p, *xs)), argnums=(0, 1)))(params,
                                                                                     *inputs)


def _lbfgs_step():
    """Eager (LBFGS decides on the host); a size no other test uses, so its programs trace."""
    w = _randn(13)
    target = _randn(13, grad=False, seed=7)
    opt = tl.optim.LBFGS([w], max_iter=4, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = ((w - target) ** 2).sum() + (w * w).sum()
        loss.backward()
        return loss.detach()
    opt.step(closure)


F = tl.nn.functional
FAMILIES = {
    "matmul": lambda: _trace_grad(tl.matmul, *_arrays((2, 3, 4), (4, 5))),
    "mm_addmm_bmm_mv": lambda: _trace_grad(
        lambda a, b, c, d, e: (tl.addmm(a, b, c), tl.bmm(d, e), tl.mv(b, a[:4].repeat(1)),
                               tl.dot(a, a)), *_arrays((3,), (2, 3), (3, 3), (2, 3, 4), (2, 4, 2))),
    "linear": lambda: _trace_grad(F.linear, *_arrays((2, 3), (4, 3), (4,))),
    "einsum": lambda: _trace_grad(lambda a, b: tl.einsum("bij,bjk->bik", a, b),
                                  *_arrays((2, 3, 4), (2, 4, 5))),
    "conv2d": lambda: _trace_grad(F.conv2d, *_arrays((1, 2, 5, 5), (3, 2, 3, 3))),
    "lstm": lambda: _module(tl.nn.LSTM(3, 4), *_arrays((5, 2, 3))),
    "sdpa_fused": lambda: _trace_grad(F.scaled_dot_product_attention,
                                      *_arrays((1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4))),
    "sdpa_math": lambda: _trace_grad(F.scaled_dot_product_attention,
                                     *_arrays((2, 3, 4), (2, 5, 4), (2, 5, 4))),
    "bilinear": lambda: _trace_grad(F.bilinear, *_arrays((2, 3), (2, 4), (5, 3, 4))),
    "svd_full": lambda: _trace_grad(lambda a: tl.linalg.svd(a, full_matrices=True),
                                    *_arrays((4, 3))),
    "pinv_lstsq": lambda: _trace_grad(
        lambda a, b: (tl.linalg.pinv(a), tl.linalg.lstsq(a, b, driver="gelsd")[0]),
        *_arrays((4, 3), (4, 2))),
    "cholesky": lambda: _trace_grad(tl.linalg.cholesky, _spd(3)),
    "inv_solve_eigh_qr": lambda: _trace_grad(
        lambda s, b, a: (tl.linalg.inv(s), tl.linalg.solve(s, b), tl.linalg.eigh(s)[0],
                         tl.linalg.qr(a)), _spd(3), *_arrays((3,), (4, 3))),
    "matrix_exp": lambda: _trace_grad(tl.linalg.matrix_exp, *_arrays((3, 3))),
    "affine_grid": lambda: _trace_grad(
        lambda t: F.affine_grid(t, (1, 1, 3, 4), align_corners=False), *_arrays((1, 2, 3))),
    "orthogonal": lambda: _module(tl.nn.utils.parametrizations.orthogonal(
        tl.nn.Linear(4, 4), orthogonal_map="householder"), *_arrays((2, 4))),
    "lbfgs": _lbfgs_step,
}
# families whose every dot is inside a jax routine (jax.scipy.linalg.expm: HIGHEST)
_JAX_ROUTINE_ONLY = {"matrix_exp"}


@pytest.mark.parametrize("name", list(FAMILIES))
def test_every_dot_an_op_runs_carries_the_policy(name, policy, monkeypatch):
    """At 'high', each family's programs (forward and backward) use HIGH for their own dots
    and HIGHEST only inside jax's linalg routines; none is left at JAX's default (None)."""
    policy("high")
    rec = _Recorder(monkeypatch)
    FAMILIES[name]()
    assert rec.seen, f"{name}: no dot was traced"
    if name in _JAX_ROUTINE_ONLY:
        assert rec.kinds() == {HIGHEST}, f"{name}: {rec.kinds()}"
        return
    assert rec.kinds() <= {HIGH, HIGHEST}, f"{name}: {rec.kinds()}"
    assert HIGH in rec.kinds(), f"{name}: the policy (HIGH) reached none of its dots"


def test_a_change_of_policy_takes_effect_at_the_next_call(policy, monkeypatch):
    """The precision is part of what a cached program is keyed by: no stale program."""
    a, b = _randn(3, 4), _randn(4, 2)
    q, k = _randn(1, 1, 2, 4), _randn(1, 1, 3, 4)
    w = _randn(5, 3, 4)

    def run():
        tl.matmul(a, b).sum().backward()
        tl.nn.functional.scaled_dot_product_attention(q, k, k).sum().backward()
        tl.nn.functional.bilinear(a[:, :3], a, w).sum().backward()

    policy("highest")
    run()   # cached at HIGHEST
    rec = _Recorder(monkeypatch)
    policy("high")
    run()
    assert rec.kinds() == {HIGH}
    rec.seen.clear()
    policy("highest")
    run()   # back to the first programs: no new trace, and nothing traced at HIGH
    assert HIGH not in rec.kinds()


def test_convolutions_and_rnns_on_cuda_follow_cudnn_tf32():
    """A cuda convolution uses cuDNN's TF32 switch (on by default, as in PyTorch), not the
    matmul policy; elsewhere the matmul policy applies."""
    before = _precision.allow_tf32_cudnn()
    try:
        assert _precision.conv("cuda") == HIGH and _precision.rnn("cuda") == HIGH
        assert _precision.conv("cpu") == _precision.matmul() == HIGHEST
        _precision.set_allow_tf32_cudnn(False)
        assert _precision.conv("cuda") == HIGHEST and _precision.rnn("cuda") == HIGHEST
    finally:
        _precision.set_allow_tf32_cudnn(before)


# --- values: 'highest' is float32 rounding ------------------------------------------------------

def _both(shape, seed):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return (tl.tensor(a).requires_grad_(), torch.tensor(a, dtype=torch.float64,
                                                          requires_grad=True))


def _close(ours, ref, rtol=2e-6, atol=2e-6):
    """float32 rounding of an O(1) result: a TF32 product is off by ~1e-3, a bfloat16 one by
    ~1e-2, so these bounds tell full float32 from either."""
    np.testing.assert_allclose(np.asarray(ours.detach().numpy(), np.float64),
                               ref.detach().numpy(), rtol=rtol, atol=atol)


def _compare(fn_tl, fn_torch, shapes, rtol=2e-6, atol=2e-6):
    pairs = [_both(s, i) for i, s in enumerate(shapes)]
    ours = fn_tl(*(p[0] for p in pairs))
    ref = fn_torch(*(p[1] for p in pairs))
    _close(ours, ref, rtol, atol)
    ours.square().sum().backward()
    ref.square().sum().backward()
    for (x, xr) in pairs:
        _close(x.grad, xr.grad, rtol, atol)


def test_highest_sdpa_is_float32_exact(policy):
    policy("highest")
    for fused in (True, False):   # 4-D: PyTorch's fused CPU kernel; 3-D: its math path
        shapes = [(1, 2, 4, 8), (1, 2, 6, 8), (1, 2, 6, 8)] if fused else [(2, 4, 8), (2, 6, 8),
                                                                           (2, 6, 8)]
        _compare(tl.nn.functional.scaled_dot_product_attention,
                 torch.nn.functional.scaled_dot_product_attention, shapes)


def test_highest_bilinear_is_float32_exact(policy):
    policy("highest")
    _compare(tl.nn.functional.bilinear, torch.nn.functional.bilinear,
             [(3, 5), (3, 6), (4, 5, 6)], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["svd", "pinv", "lstsq", "cholesky"])
def test_highest_linalg_backward_is_float32_exact(name, policy):
    """The derivative rules written in torchlike (full SVD, pinv, lstsq, cholesky)."""
    policy("highest")
    a = np.random.default_rng(3).standard_normal((5, 3)).astype(np.float32)
    spd = (a.T @ a / 5 + np.eye(3)).astype(np.float32)
    b = np.random.default_rng(4).standard_normal((5, 2)).astype(np.float32)
    cases = {
        # |U S Vh| is sign-independent: a function of the SVD the gradient is defined for
        "svd": (a, lambda L, x: (lambda u, s, vh: (u[:, :3] * s) @ vh)(*L.svd(
            x, full_matrices=True))),
        "pinv": (a, lambda L, x: L.pinv(x)),
        "lstsq": (a, lambda L, x: L.lstsq(x, (tl if L is tl.linalg else torch).tensor(
            b, dtype=x.dtype), driver="gelsd")[0]),
        "cholesky": (spd, lambda L, x: L.cholesky(x)),
    }
    data, fn = cases[name]
    x, xr = tl.tensor(data).requires_grad_(), torch.tensor(data, dtype=torch.float64,
                                                            requires_grad=True)
    ours, ref = fn(tl.linalg, x), fn(torch.linalg, xr)
    _close(ours, ref, 1e-5, 1e-5)
    (ours * ours).sum().backward()
    (ref * ref).sum().backward()
    _close(x.grad, xr.grad, 2e-5, 2e-5)


def test_set_float32_matmul_precision_errors_as_torch(policy):
    with pytest.warns(UserWarning) as ours:
        tl.set_float32_matmul_precision("fast")
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        torch.set_float32_matmul_precision("fast")
    assert str(theirs[0].message).startswith(str(ours[0].message) + " (Triggered internally")
    assert tl.get_float32_matmul_precision() == torch.get_float32_matmul_precision()
    with pytest.raises(RuntimeError) as ours_e:
        tl.set_float32_matmul_precision(1)
    with pytest.raises(RuntimeError) as theirs_e:
        torch.set_float32_matmul_precision(1)
    assert str(ours_e.value) == str(theirs_e.value)
