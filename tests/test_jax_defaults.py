"""JAX code in the same process keeps JAX's own defaults (NOTE [ 64-bit types in torchlike's
scope ] in torchlike/_x64.py), while torchlike keeps PyTorch's dtypes, and the bridge
(``func.to_jax`` / ``from_jax``, NOTE [ the bridge and 64-bit types ]) connects the two.

Oracles: plain JAX before torchlike is imported (its defaults), real torch (dtypes, values,
gradients), and ``jax.grad`` of the same computation written in JAX.  The whole suite runs with
jax's truncation of 64-bit types made an error (NOTE [ 64-bit types in tests ] in conftest.py), so
every test is also a check that torchlike's code ran in its scope; the rows below reach each
family of the API that calls jax itself.
"""
import ast
import io
import os
import pathlib
import re
import subprocess
import sys
import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import torchlike as tl
from torchlike import _x64

from test_examples import REPO, _env, _execute_notebook

NOTEBOOK = REPO / "notebooks" / "03_torchlike_and_jax.ipynb"

# What plain JAX computes with its defaults; the same lines run before and after torchlike works.
_JAX_FACTS = """
import jax, jax.numpy as jnp
def facts():
    key = jax.random.key(0)
    x = jnp.ones((1, 3, 8, 8), jnp.float32)
    w = jax.random.normal(key, (4, 3, 3, 3))
    conv = jax.lax.conv(x, w, (1, 1), "SAME")
    return [str(jnp.arange(3).dtype), str(jax.random.normal(key, (3,)).dtype),
            str(jnp.array(1.0).dtype), str(jnp.zeros(2).sum().dtype), str(conv.dtype),
            str(jax.grad(lambda v: (v * v).sum())(jnp.ones(3)).dtype),
            bool(jax.config.jax_enable_x64)]
"""


def test_import_and_use_leave_jax_defaults():
    """After ``import torchlike`` and torchlike work (int64, float64, backward, compile), JAX
    code computes exactly what it computed before the import."""
    code = _JAX_FACTS + """
before = facts()
import torchlike as tl
x = tl.arange(4) * 2
w = tl.randn(3, dtype=tl.float64, requires_grad=True)
(w * w).sum().backward()
step = tl.compile(lambda a: (a * 2).sum())
for _ in range(3):
    step(tl.ones(2))
after = facts()
assert (x.dtype, w.grad.dtype) == (tl.int64, tl.float64), (x.dtype, w.grad.dtype)
print(before == after, before, after)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=_env(), cwd=REPO)
    assert out.returncode == 0, out.stderr
    same, *_ = out.stdout.split(" ", 1)
    assert same == "True", out.stdout
    assert "'int32', 'float32', 'float32', 'float32', 'float32', 'float32', False" in out.stdout


# --- torchlike keeps PyTorch's dtypes (and values) with no 64-bit scope left behind -----------

def _rows():
    """(name, fn(T) -> Tensor or tuple of Tensors) run with T = torchlike and T = torch."""
    def setitem(T):
        x = T.arange(6)
        x[2] = 7
        x[T.tensor([0, 5])] = -1
        x[T.tensor([1, 3])] = T.tensor([8, 9])
        y = T.zeros(4, dtype=T.float64).index_put((T.tensor([0, 2]),),
                                                  T.tensor([1.5, 2.5], dtype=T.float64))
        return x, y

    def view_write(T):
        x = T.arange(6, dtype=T.float64).reshape(2, 3)
        column, diagonal = x[:, 1], x[:, :2].diagonal()
        x[1].mul_(2.5)
        return x, column, diagonal   # the views read their base again when the test reads them

    def backward64(T):
        w = T.linspace(-1, 1, 6, dtype=T.float64).reshape(2, 3).requires_grad_()
        (w.sin() * w).sum().backward()
        return w.grad

    def double_backward(T):
        x = T.tensor([0.5, 1.5], dtype=T.float64, requires_grad=True)
        (g,) = T.autograd.grad((x ** 3).sum(), x, create_graph=True)
        return T.autograd.grad(g.sum(), x)[0]

    def adam64(T):
        p = T.tensor([1.0, -2.0, 3.0], dtype=T.float64, requires_grad=True)
        opt = T.optim.Adam([p], lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            (p * p).sum().backward()
            opt.step()
        return p.detach()

    def clip64(T):
        p = T.tensor([3.0, 4.0], dtype=T.float64, requires_grad=True)
        (p * p).sum().backward()
        return T.nn.utils.clip_grad_norm_([p], 1.0), p.grad

    def out_kwarg(T):
        out = T.empty(0, dtype=T.float64)   # resized to the result
        T.add(T.ones(3, dtype=T.float64), 2, out=out)
        return out

    def batch_norm64(T):
        bn = T.nn.BatchNorm1d(2).double()
        bn(T.tensor([[1.0, 2.0], [3.0, 5.0], [4.0, 0.0]], dtype=T.float64))
        return bn.running_mean, bn.running_var, bn.num_batches_tracked

    def save_load(T):
        buf = io.BytesIO()
        T.save({"i": T.arange(3), "d": T.ones(2, dtype=T.float64)}, buf)
        buf.seek(0)
        d = T.load(buf)
        return d["i"], d["d"]

    def jacobian64(T):
        return T.autograd.functional.jacobian(lambda v: v.exp() * v, T.ones(2, dtype=T.float64))

    def func_transforms(T):
        x = T.linspace(0, 1, 4, dtype=T.float64)
        m = T.linspace(-1, 1, 12, dtype=T.float64).reshape(4, 3)
        f = lambda v: (v @ m).sin().sum()   # the backward of a matmul needs the 64-bit types
        g = T.func.grad(lambda v: (v.sin() * T.arange(4)).sum())(x)
        _, vjp_fn = T.func.vjp(f, x)
        return (g, T.func.grad(f)(x), vjp_fn(T.tensor(1.0, dtype=T.float64))[0],
                T.func.jvp(f, (x,), (T.ones(4, dtype=T.float64),))[1],
                T.func.jacrev(lambda v: v @ m)(x), T.func.jacfwd(lambda v: v @ m)(x),
                T.func.vmap(lambda r: r.sum())(T.arange(6).reshape(2, 3)),
                T.func.vmap(lambda r: r @ m, in_dims=1)(m))

    def stats(T):
        x = T.arange(12, dtype=T.float64).reshape(3, 4).sin()
        return (T.cov(x), T.corrcoef(x), T.histc(x, bins=4), T.bincount(T.tensor([0, 1, 1, 3])),
                T.cdist(x, x[:2]), T.nn.functional.pdist(x))

    def lapack(T):
        a = T.eye(3, dtype=T.float64) * 2 + T.ones(3, 3, dtype=T.float64) / 4
        qr, tau = T.geqrf(a)
        return (qr, tau, T.cholesky_inverse(T.linalg.cholesky(a)),
                *T.lu_unpack(*T.linalg.lu_factor(a)))

    def lapack_backward(T):
        a = (T.eye(3, dtype=T.float64) * 2).requires_grad_()
        b = T.ones(3, 2, dtype=T.float64, requires_grad=True)
        l = T.linalg.cholesky(a)
        (T.cholesky_solve(b, l).sum() + T.cholesky_inverse(l).sum()).backward()
        return a.grad, b.grad

    def index_reduce(T):
        x = T.ones(3, dtype=T.float64, requires_grad=True)
        y = x.index_reduce(0, T.tensor([0, 2, 0]), T.tensor([2.0, 3.0, 4.0], dtype=T.float64),
                           "prod")
        y.sum().backward()
        return y, x.grad

    def control_flow(T):
        while_loop = T.while_loop if T is tl else T._higher_order_ops.while_loop
        c = T.cond(T.tensor(True), lambda v: v * 2, lambda v: v - 1, (T.arange(3),))
        (n, acc) = while_loop(lambda i, a: i < 4, lambda i, a: (i + 1, a * 1.5),
                              (T.tensor(0), T.ones(2, dtype=T.float64)))
        return c, n, acc

    def signal(T):
        x = T.arange(64, dtype=T.float64).sin()
        w = T.hann_window(16, dtype=T.float64)
        spec = T.stft(x, 16, window=w, return_complex=True)
        return spec, T.istft(spec, 16, window=w, length=64)

    def storage(T):
        x = T.arange(6)
        v = x[2:]
        y = T.arange(6.0, dtype=T.float64).resize_(2, 2)
        grown = T.arange(6.0, dtype=T.float64).resize_(3, 3)   # new elements: uninitialized
        pairs = T.view_as_complex(T.arange(8, dtype=T.float64).reshape(4, 2)[1:])
        return (x.untyped_storage().nbytes(), v.storage_offset(), y, grown.flatten()[:6],
                pairs)

    def legacy(T):
        return T.LongTensor([1, 2]), T.DoubleTensor([0.5]), T.ones(2).type(T.LongTensor)

    def moves(T):
        x = T.arange(3)
        return x.to("cpu"), x.cpu().double(), x.to(T.float64), T.ones(2, device="cpu").long()

    def data_loader(T):
        ds = T.utils.data.TensorDataset(T.arange(6), T.arange(6, dtype=T.float64))
        rows = [(np.int64(i), float(i), np.ones(2)) for i in range(4)]
        out = []
        for batch in T.utils.data.DataLoader(ds, batch_size=3):
            out += batch
        for batch in T.utils.data.DataLoader(rows, batch_size=2):
            out += batch
        return out

    def lbfgs64(T):
        p = T.tensor([1.0, -2.0], dtype=T.float64, requires_grad=True)
        opt = T.optim.LBFGS([p], line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            loss = ((p - 3) ** 2 * T.arange(1, 3)).sum()
            loss.backward()
            return loss
        opt.step(closure)
        return p.detach()

    def functional64(T):
        f = lambda v: (v ** 3 * T.arange(1, 3)).sum()
        x = T.tensor([0.5, 2.0], dtype=T.float64)
        return (T.autograd.functional.hessian(f, x), T.autograd.functional.vjp(f, x)[1],
                T.autograd.functional.hvp(f, x, T.ones(2, dtype=T.float64))[1])

    def nn_utils64(T):
        lin = T.nn.utils.parametrizations.orthogonal(T.nn.Linear(3, 3).double())
        house = T.nn.utils.parametrizations.orthogonal(
            T.nn.Linear(3, 3).double(), orthogonal_map="householder", use_trivialization=False)
        p = T.tensor([3.0, -4.0], dtype=T.float64, requires_grad=True)
        (p * p).sum().backward()
        norm = T.nn.utils.get_total_norm([p.grad])
        T.nn.utils.clip_grad_value_([p], 1.5)
        return lin.weight.dtype, house.weight.dtype, norm, p.grad

    def ctc64(T):
        lp = T.linspace(-2, 0, 20, dtype=T.float64).reshape(5, 1, 4).log_softmax(2)
        lp.requires_grad_()
        loss = T.nn.functional.ctc_loss(lp, T.tensor([[1, 2]]), T.tensor([5]), T.tensor([2]))
        loss.backward()
        return loss, lp.grad

    def meta(T):
        x = T.empty(4, 3, dtype=T.int64, device="meta")
        return x.sum(1).dtype, (x * 2.5).dtype, T.empty(2, device="meta").double().dtype

    def dlpack(T):
        return T.from_dlpack(torch.arange(3)), T.from_dlpack(torch.ones(2, dtype=torch.float64))

    def compiled64(T):
        step = tl.compile(lambda a, i: (a * i).sum()) if T is tl else (lambda a, i: (a * i).sum())
        for _ in range(3):
            out = step(T.ones(3, dtype=T.float64), T.arange(3))
        return out

    def compiled_control_flow(T):
        def body(x):
            return T.cond(x.sum() > 0, lambda v: v * 2, lambda v: v - 1, (x,))
        step = tl.compile(body) if T is tl else body
        for _ in range(3):
            out = step(T.arange(3, dtype=T.float64))
        return out

    def export64(T):
        m = T.nn.Linear(2, 2).double()
        with T.no_grad():
            m.weight.copy_(T.tensor([[1.0, 2.0], [3.0, 4.0]]))
            m.bias.fill_(0.5)
        x = T.tensor([[0.25, -1.0]], dtype=T.float64)
        run = T.export.export(m, (x,)).module() if T is tl else m
        return run(x)

    return [
        ("arange", lambda T: T.arange(5)),
        ("tensor of ints", lambda T: T.tensor([[1, 2], [3, 4]])),
        ("from_numpy float64", lambda T: T.from_numpy(np.linspace(0, 1, 3))),
        ("int sum and cumsum", lambda T: (T.arange(5).sum(), T.arange(5).cumsum(0))),
        ("nonzero, argwhere, unique", lambda T: (T.nonzero(T.tensor([0, 3, 0, 1])),
                                                 T.argwhere(T.eye(2)),
                                                 *T.unique(T.tensor([3, 1, 3]), return_inverse=True,
                                                           return_counts=True))),
        ("integer division", lambda T: (T.arange(5) // 2, T.arange(5) % 3,
                                        T.div(T.arange(4), T.tensor(3), rounding_mode="floor"))),
        ("float64 arithmetic", lambda T: T.ones(3, dtype=T.float64) / 3),
        ("to long and double", lambda T: (T.ones(2).long(), T.ones(2).double())),
        ("random dtypes", lambda T: (T.randint(0, 5, (3,)).dtype, T.randperm(4).dtype,
                                     T.rand(2, dtype=T.float64).dtype,
                                     T.randint(0, 2 ** 40, (2,)).dtype,
                                     T.bernoulli(T.full((3,), 0.5, dtype=T.float64)).dtype,
                                     T.multinomial(T.ones(4, dtype=T.float64), 2).dtype)),
        ("setitem, index_put", setitem),
        ("view write", view_write),
        ("repr of a float64 view",
         lambda T: repr(T.arange(6, dtype=T.float64).reshape(2, 3)[:, 1])),
        ("backward float64", backward64),
        ("double backward", double_backward),
        ("Adam float64", adam64),
        ("LBFGS float64", lbfgs64),
        ("clip_grad_norm_ float64", clip64),
        ("get_total_norm, clip_grad_value_, orthogonal", nn_utils64),
        ("out=", out_kwarg),
        ("BatchNorm running stats", batch_norm64),
        ("save / load", save_load),
        ("autograd.functional.jacobian", jacobian64),
        ("autograd.functional hessian, vjp, hvp", functional64),
        ("func.grad, vjp, jvp, jacrev, jacfwd, vmap", func_transforms),
        ("cov, corrcoef, histc, bincount, cdist, pdist", stats),
        ("geqrf, cholesky_inverse, lu_unpack", lapack),
        ("cholesky_solve / cholesky_inverse backward", lapack_backward),
        ("index_reduce and its backward", index_reduce),
        ("cond / while_loop", control_flow),
        ("stft / istft / hann_window", signal),
        ("storage, storage_offset, resize_, view_as_complex", storage),
        ("legacy tensor types", legacy),
        ("moves and casts", moves),
        ("DataLoader", data_loader),
        ("ctc_loss backward", ctc64),
        ("meta device", meta),
        ("from_dlpack", dlpack),
        ("compile float64 / int64", compiled64),
        ("compile with cond", compiled_control_flow),
        ("export float64", export64),
    ]


ROWS = _rows()


def _flat(x):
    return list(x) if isinstance(x, (tuple, list)) else [x]


@pytest.mark.parametrize("name, fn", ROWS, ids=[r[0] for r in ROWS])
def test_torchlike_keeps_torch_dtypes(name, fn):
    state = (jax.enable_x64.get_local(), jax.enable_x64.get_global())
    got, want = _flat(fn(tl)), _flat(fn(torch))
    assert (jax.enable_x64.get_local(), jax.enable_x64.get_global()) == state
    assert jnp.arange(2).dtype == jnp.int32
    for g, w in zip(got, want):
        if isinstance(w, torch.dtype):
            assert str(g) == str(w)
            continue
        if not hasattr(w, "dtype"):   # a Python value
            assert g == w
            continue
        assert str(g.dtype) == str(w.dtype), name
        values = g.detach().numpy() if g.requires_grad else g.numpy()   # a view syncs here
        np.testing.assert_allclose(values, w.detach().numpy(), rtol=1e-12, atol=1e-12)


def test_gradcheck_in_float64():
    x = tl.tensor([0.3, -1.2, 2.0], dtype=tl.float64, requires_grad=True)
    assert tl.autograd.gradcheck(lambda v: (v.sin() * v.exp()).sum(), (x,))
    assert tl.autograd.gradgradcheck(lambda v: (v.sin() * v.exp()).sum(), (x,))


def test_the_scope_is_restored_after_errors_and_inside_a_users_block():
    state = (jax.enable_x64.get_local(), jax.enable_x64.get_global())
    with pytest.raises(RuntimeError) as err:
        tl.ones(2, 3) + tl.ones(4, 5)
    with pytest.raises(RuntimeError) as want:
        torch.ones(2, 3) + torch.ones(4, 5)
    assert str(err.value) == str(want.value)
    assert (jax.enable_x64.get_local(), jax.enable_x64.get_global()) == state
    with jax.enable_x64(True):   # the user's own 64-bit block stays one
        tl.arange(3).sum()
        assert jnp.arange(2).dtype == jnp.int64
    assert jnp.arange(2).dtype == jnp.int32


def test_another_thread_gets_torch_dtypes_and_leaves_this_one_alone():
    def work(T, seen):
        p = T.ones(3, dtype=T.float64, requires_grad=True)
        opt = T.optim.SGD([p], lr=0.5)
        (p * T.arange(3)).sum().backward()
        opt.step()
        seen["got"] = [str(T.arange(3).dtype), str(p.grad.dtype), p.tolist()]
        seen["jax"] = jnp.arange(2).dtype

    got, want = {}, {}
    t = threading.Thread(target=work, args=(tl, got))
    t.start()
    t.join(60)
    work(torch, want)
    assert got == want and got["jax"] == jnp.int32
    assert jnp.arange(2).dtype == jnp.int32


def test_switches_without_jax_fast_methods_use_the_context_manager():
    class PublicOnly:   # a flag state with only jax.enable_x64's public context manager
        def __call__(self, value):
            return jax.enable_x64(value)
    swap, restore = _x64._switches(PublicOnly())
    token = swap(True)
    try:
        assert jnp.arange(2).dtype == jnp.int64
    finally:
        restore(token)
    assert jnp.arange(2).dtype == jnp.int32


def test_every_custom_vjp_backward_rule_has_a_scope():
    """jax runs a custom_vjp's backward rule in the caller's setting when the caller's jax.grad
    differentiates a to_jax function (NOTE [ custom_vjp rules and 64-bit types ] in _x64.py):
    each of torchlike's rules carries ``@_x64.scoped``."""
    package = pathlib.Path(tl.__file__).parent
    rules = []
    for path in package.rglob("*.py"):
        tree = ast.parse(path.read_text())
        defs = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        for call in ast.walk(tree):
            if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                    and call.func.attr == "defvjp"):
                bwd = defs[call.args[1].id]
                rules.append((path.name, bwd.name,
                              any(ast.unparse(d) == "_x64.scoped" for d in bwd.decorator_list)))
    assert len(rules) >= 6, rules
    assert [r for r in rules if not r[2]] == []


# --- the bridge ---------------------------------------------------------------------------------

def _models(seed=0):
    """The same small classifier in torchlike and in torch."""
    tl.manual_seed(seed)
    m = tl.nn.Sequential(tl.nn.Linear(4, 8), tl.nn.Tanh(), tl.nn.Linear(8, 3))
    t = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    t.load_state_dict({k: torch.tensor(v.numpy()) for k, v in m.state_dict().items()})
    return m, t


X = np.random.default_rng(0).standard_normal((5, 4))   # float64: JAX reads it as float32
LABELS = [0, 2, 1, 1, 0]


def test_to_jax_under_jax_grad_matches_torch_in_float32():
    m, t = _models()
    pure, params = tl.func.to_jax(m)
    loss_of = tl.func.to_jax(lambda out, y: tl.nn.functional.cross_entropy(out, y))
    y = jnp.array(LABELS)   # int32: read as PyTorch's int64
    assert y.dtype == jnp.int32

    def loss(p):
        return loss_of(pure(p, X), y)

    eager, jitted = jax.grad(loss)(params), jax.jit(jax.grad(loss))(params)
    torch.nn.functional.cross_entropy(t(torch.tensor(X, dtype=torch.float32)),
                                      torch.tensor(LABELS)).backward()
    for name, p in t.named_parameters():
        for g in (eager[name], jitted[name]):
            assert g.dtype == jnp.float32
            np.testing.assert_allclose(np.asarray(g), p.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert jnp.arange(2).dtype == jnp.int32


def test_to_jax_of_a_float64_module_needs_jax_64_bit_types():
    m, t = _models()
    m.double()
    t.double()
    pure, params = tl.func.to_jax(m)
    with pytest.raises(TypeError, match=r'jax.config.update\("jax_enable_x64", True\)'):
        jax.grad(lambda p: pure(p, X).sum())(params)
    prev = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)   # the one line the message names
    try:
        loss = lambda p: (pure(p, X) ** 2).sum()
        eager, jitted = jax.grad(loss)(params), jax.jit(jax.grad(loss))(params)
    finally:
        jax.config.update("jax_enable_x64", prev)
    t(torch.tensor(X)).square().sum().backward()
    for name, p in t.named_parameters():
        for g in (eager[name], jitted[name]):
            assert g.dtype == jnp.float64
            np.testing.assert_allclose(np.asarray(g), p.grad.numpy(), rtol=1e-12, atol=1e-12)


def _f_jax(x, w):
    return (jnp.tanh(x @ w) ** 2).sum()


def _f_tl(x, w):
    return (tl.tanh(x @ w) ** 2).sum()


def test_backward_against_jax_grad_in_float32_and_after_the_one_line_in_float64():
    """The comparison users make: torchlike's .backward() against jax.grad of the same function
    in JAX.  float32 as both libraries default; float64 once JAX's 64-bit types are on (before
    that line, jax.grad computes float64 numpy inputs in float32, as JAX always has)."""
    w = np.linspace(-1, 1, 12).reshape(4, 3)
    for dtype, line, rtol in ((np.float32, False, 1e-5), (np.float64, True, 1e-13)):
        prev = jax.config.jax_enable_x64
        if line:
            assert jax.grad(_f_jax, argnums=1)(X, w).dtype == jnp.float32
            jax.config.update("jax_enable_x64", True)
        try:
            want = jax.grad(_f_jax, argnums=1)(X.astype(dtype), w.astype(dtype))
        finally:
            jax.config.update("jax_enable_x64", prev)
        wt = tl.tensor(w.astype(dtype), requires_grad=True)
        _f_tl(tl.tensor(X.astype(dtype)), wt).backward()
        assert str(wt.grad.dtype) == f"torch.{want.dtype}" == f"torch.{np.dtype(dtype)}"
        np.testing.assert_allclose(wt.grad.numpy(), want, rtol=rtol, atol=rtol)


def _lowered_rows(T):
    """Ops whose programs hold index computations: (name, fn of a (4, 6) float32 Tensor)."""
    F = T.nn.functional
    square = lambda a: a[:, :4] @ a[:, :4].T + T.eye(4)
    return [
        ("mode", lambda a: a.round().mode(1)),
        ("inv_ex info", lambda a: T.linalg.inv_ex(square(a) * 0).info),
        ("solve_ex info", lambda a: T.linalg.solve_ex(square(a), a[:, :2]).info),
        ("ldl_factor", lambda a: T.linalg.ldl_factor(square(a))),
        ("fractional_max_pool2d", lambda a: F.fractional_max_pool2d(
            a[None, None], 2, output_size=2, return_indices=True,
            _random_samples=T.full((1, 1, 2), 0.5))),
        ("argmax, max, topk, sort", lambda a: (a.argmax(), a.max(1), a.topk(2), a.sort(0))),
        ("cross_entropy and accuracy", lambda a: (
            F.cross_entropy(a, T.tensor([0, 5, 2, 1])),
            (a.argmax(1) == T.tensor([0, 5, 2, 1])).float().mean())),
    ]


def _leaves(x):
    return [v for item in x for v in _leaves(item)] if isinstance(x, (tuple, list)) else [x]


@pytest.mark.parametrize("row", range(len(_lowered_rows(tl))),
                         ids=[r[0] for r in _lowered_rows(tl)])
def test_to_jax_compiles_under_the_callers_jit_with_jax_defaults(row):
    """The caller's jax.jit lowers what to_jax traced, in the caller's setting (NOTE [ lowering
    in the caller's setting ] in _x64.py): the programs hold no 64-bit constant jax would have
    to build then."""
    x = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)
    got = jax.jit(tl.func.to_jax(_lowered_rows(tl)[row][1]))(jnp.asarray(x))
    want = _lowered_rows(torch)[row][1](torch.tensor(x))
    got, want = _leaves(got), _leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert str(g.dtype) == str(w.dtype).replace("torch.", "")
        np.testing.assert_allclose(np.asarray(g), w.numpy(), rtol=1e-6, atol=1e-6)


def test_torchlike_takes_no_index_from_jnp_argmax():
    """jnp.argmax's int64 index cannot be lowered with 64-bit types off (NOTE [ lowering in the
    caller's setting ]): torchlike's ops use _x64.argmax."""
    package = pathlib.Path(tl.__file__).parent
    call = re.compile(r"(jnp|jax\.numpy)\.(nan)?argm(ax|in)\(")
    calls = [(path.name, n) for path in package.rglob("*.py")
             for n, line in enumerate(path.read_text().splitlines(), 1) if call.search(line)
             and path.name not in ("_tensor.py", "_trace_context.py")]   # lowered in a scope
    assert calls == []


def _scaled(x, w):
    return jnp.tanh(x @ w) * jnp.arange(1.0, 4.0)


def test_from_jax_runs_the_function_with_jax_defaults():
    """float32 tensors: the function computes what it computes in plain JAX (its float
    constants are float32, so the result is too); float64 tensors: with 64-bit types on."""
    x, w = X.astype(np.float32), np.linspace(-1, 1, 12).reshape(4, 3).astype(np.float32)
    f = tl.func.from_jax(_scaled)
    wt = tl.tensor(w, requires_grad=True)
    out = f(tl.tensor(x), wt)
    expected = _scaled(x, w)
    assert str(out.dtype) == "torch." + str(expected.dtype) == "torch.float32"
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-6)
    out.sum().backward()
    np.testing.assert_allclose(wt.grad.numpy(), jax.grad(lambda v: _scaled(x, v).sum())(w),
                               rtol=1e-5, atol=1e-6)
    w64 = tl.tensor(w.astype(np.float64), requires_grad=True)
    out64 = f(tl.tensor(X), w64)
    out64.sum().backward()
    with jax.enable_x64(True):
        expected64 = jax.grad(lambda v: _scaled(X, v).sum())(w.astype(np.float64))
    assert out64.dtype is tl.float64 and w64.grad.dtype is tl.float64
    np.testing.assert_allclose(w64.grad.numpy(), expected64, rtol=1e-12)


def _gather_scaled(x, i):
    return x[i] * jnp.arange(1.0, 3.0)


def test_from_jax_reads_an_int64_index_as_jax_does():
    """A PyTorch index is int64; with JAX's 64-bit types off the function gets it as int32 (as
    jnp.asarray reads int64 data), so its float constants stay float32 -- eagerly, under
    torchlike.compile, and under the caller's jax.grad of a to_jax function."""
    f = tl.func.from_jax(_gather_scaled)
    x = tl.arange(4.0, requires_grad=True)
    idx = tl.tensor([1, 3])
    assert tl.func.from_jax(lambda i: i)(idx).dtype is tl.int32   # what the function gets
    out = f(x, idx)
    out.sum().backward()
    want = _gather_scaled(jnp.arange(4.0), jnp.array([1, 3]))
    assert out.dtype is tl.float32
    np.testing.assert_array_equal(out.detach().numpy(), want)
    grad = jax.grad(lambda v: _gather_scaled(v, jnp.array([1, 3])).sum())(jnp.arange(4.0))
    np.testing.assert_array_equal(x.grad.numpy(), grad)
    step = tl.compile(lambda a, i: f(a, i).sum())
    for _ in range(3):
        total = step(tl.arange(4.0), idx)
    assert total.dtype is tl.float32 and total.item() == float(want.sum())
    g = jax.grad(tl.func.to_jax(lambda a, i: f(a, i).sum()))(jnp.arange(4.0), jnp.array([1, 3]))
    np.testing.assert_array_equal(g, grad)


def test_notebook_03_executes(monkeypatch):
    """Run with CPU devices presented as CUDA (NOTE [ devices ] in torchlike/_device.py), so its
    devices section takes the accelerator's path."""
    monkeypatch.setenv("TORCHLIKE_CPU_AS_CUDA", "1")
    monkeypatch.setenv("XLA_FLAGS", " ".join(filter(None, [
        os.environ.get("XLA_FLAGS"), "--xla_force_host_platform_device_count=3"])))
    nb = _execute_notebook(NOTEBOOK)
    text = "".join(out.get("text", "") for cell in nb.cells if cell.cell_type == "code"
                   for out in cell.outputs if out.output_type == "stream")
    assert "jnp.arange(3) -> int32" in text and "torch.arange(3) -> torch.int64" in text
    assert "FromJaxBackward torch.float32" in text
    assert "outside the block JAX is back to its defaults: int32" in text
    assert "parameters on cuda:0   Adam state on cuda:0   loss on cuda:0" in text
    assert ("mixing devices: Expected all tensors to be on the same device, but found at least "
            "two devices, cuda:0 and cpu!") in text
