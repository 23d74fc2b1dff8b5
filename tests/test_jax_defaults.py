"""JAX code in the same process keeps JAX's own defaults (NOTE [ 64-bit types in torchlike's
scope ] in torchlike/_x64.py), while torchlike keeps PyTorch's dtypes, and the bridge
(``func.to_jax`` / ``from_jax``, NOTE [ the bridge and 64-bit types ]) connects the two.

Oracles: plain JAX before torchlike is imported (its defaults), real torch (dtypes, values,
gradients), and ``jax.grad`` of the same computation written in JAX.
"""
import io
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
        return x

    def view_write(T):
        x = T.arange(6, dtype=T.float64).reshape(2, 3)
        x[1].mul_(2.5)
        return x

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
        g = T.func.grad(lambda v: (v.sin() * T.arange(4)).sum())(x)
        return g, T.func.vmap(lambda r: r.sum())(T.arange(6).reshape(2, 3))

    return [
        ("arange", lambda T: T.arange(5)),
        ("tensor of ints", lambda T: T.tensor([[1, 2], [3, 4]])),
        ("from_numpy float64", lambda T: T.from_numpy(np.linspace(0, 1, 3))),
        ("int sum and cumsum", lambda T: (T.arange(5).sum(), T.arange(5).cumsum(0))),
        ("float64 arithmetic", lambda T: T.ones(3, dtype=T.float64) / 3),
        ("to long and double", lambda T: (T.ones(2).long(), T.ones(2).double())),
        ("random dtypes", lambda T: (T.randint(0, 5, (3,)).dtype, T.randperm(4).dtype,
                                     T.rand(2, dtype=T.float64).dtype)),
        ("setitem", setitem),
        ("view write", view_write),
        ("backward float64", backward64),
        ("double backward", double_backward),
        ("Adam float64", adam64),
        ("clip_grad_norm_ float64", clip64),
        ("out=", out_kwarg),
        ("BatchNorm running stats", batch_norm64),
        ("save / load", save_load),
        ("autograd.functional.jacobian", jacobian64),
        ("func.grad / vmap", func_transforms),
    ]


ROWS = _rows()


def _flat(x):
    return list(x) if isinstance(x, (tuple, list)) else [x]


@pytest.fixture
def truncation_is_an_error():
    """jax raises where code asks for a 64-bit dtype with 64-bit types off: a torchlike path
    missing its scope fails here instead of silently computing in 32 bits."""
    prev = jax.config.jax_explicit_x64_dtypes
    jax.config.update("jax_explicit_x64_dtypes", "error")
    yield
    jax.config.update("jax_explicit_x64_dtypes", prev)


@pytest.mark.parametrize("name, fn", ROWS, ids=[r[0] for r in ROWS])
def test_torchlike_keeps_torch_dtypes(name, fn, truncation_is_an_error):
    state = (jax.enable_x64.get_local(), jax.enable_x64.get_global())
    got, want = _flat(fn(tl)), _flat(fn(torch))
    assert (jax.enable_x64.get_local(), jax.enable_x64.get_global()) == state
    assert jnp.arange(2).dtype == jnp.int32
    for g, w in zip(got, want):
        if isinstance(w, torch.dtype):
            assert str(g) == str(w)
            continue
        assert str(g.dtype) == str(w.dtype), name
        np.testing.assert_allclose(np.asarray(g.detach().numpy()), w.detach().numpy(),
                                   rtol=1e-12, atol=1e-12)


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
    seen = {}

    def work():
        seen["dtype"] = (tl.arange(3) * tl.ones(3, dtype=tl.float64)).dtype
        seen["jax"] = jnp.arange(2).dtype

    t = threading.Thread(target=work)
    t.start()
    t.join(60)
    assert seen == {"dtype": tl.float64, "jax": jnp.int32}
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
        grads = jax.grad(lambda p: (pure(p, X) ** 2).sum())(params)
    finally:
        jax.config.update("jax_enable_x64", prev)
    t(torch.tensor(X)).square().sum().backward()
    for name, p in t.named_parameters():
        assert grads[name].dtype == jnp.float64
        np.testing.assert_allclose(np.asarray(grads[name]), p.grad.numpy(), rtol=1e-12,
                                   atol=1e-12)


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


def test_notebook_03_executes():
    nb = _execute_notebook(NOTEBOOK)
    text = "".join(out.get("text", "") for cell in nb.cells if cell.cell_type == "code"
                   for out in cell.outputs if out.output_type == "stream")
    assert "jnp.arange(3) -> int32" in text and "torch.arange(3) -> torch.int64" in text
    assert "FromJaxBackward torch.float32" in text
    assert "outside the block JAX is back to its defaults: int32" in text
