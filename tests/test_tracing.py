"""Every op works when Tensors hold jax tracers (docs/architecture.md §2.5): the same eager code
traces into one jax program, including views, in-place writes and the autograd engine itself."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import torchlike as tl
from torchlike import Tensor
from torchlike.testing import assert_close, to_jax_function


def _program(x, w):
    h = x @ w
    h = h + 1 - 2 * h / (h * h + 1) ** 2
    h = tl.where(h > 0, h, 0.1 * h).clamp(-3, 3)
    h = tl.maximum(h, tl.minimum(h.exp(), h.sigmoid())) + h.tanh().abs().sqrt()
    h = h.sin() * h.cos() + h.relu() + (h * h + 1).log() - (-h)
    v = h.t().reshape(-1).view(w.shape[1], -1).transpose(0, 1).permute(1, 0).t()
    v = v.unsqueeze(0).expand(2, -1, -1).flatten(0, 1).squeeze()
    u = tl.cat([v, v[:1]], 0)[1:] * 1.0
    u[0] = u[1] * 3              # write through a basic index
    u[:, 1:3].mul_(0.5)          # in-place through a view
    u[tl.tensor([0, 2])] += 1.0  # advanced index, read-modify-write
    s = tl.stack([u, u.detach()], 0).sum(0).mean(1, keepdim=True)
    return (s * (u > 0)).sum() + (x @ w.t().t()).mean() + tl.bmm(
        u.unsqueeze(0), u.t().unsqueeze(0)).sum()


def _inputs():
    rng = np.random.default_rng(0)
    return (tl.tensor(rng.standard_normal((4, 3)), dtype=tl.float64),
            tl.tensor(rng.standard_normal((3, 5)), dtype=tl.float64))


def test_program_gives_the_same_value_eager_and_under_jit():
    x, w = _inputs()
    eager = _program(x, w)
    traced = jax.jit(to_jax_function(_program))(x._value(), w._value())
    assert_close(np.asarray(traced), eager.numpy(), rtol=1e-12, atol=1e-12)


def test_backward_runs_inside_a_jit_trace():
    """What whole-step compile needs: the engine itself works on tracers."""
    def grads(x_arr, w_arr):
        x, w = Tensor._wrap(x_arr), Tensor._wrap(w_arr).requires_grad_(True)
        _program(x, w).backward()
        return w.grad._value()

    x, w = _inputs()
    leaf = w.clone().requires_grad_(True)
    _program(x, leaf).backward()
    traced = jax.jit(grads)(x._value(), w._value())
    assert_close(np.asarray(traced), leaf.grad.numpy(), rtol=1e-10, atol=1e-10)


def test_create_graph_inside_a_jit_trace():
    def second(x_arr):
        x = Tensor._wrap(x_arr).requires_grad_(True)
        (g,) = tl.autograd.grad((x ** 3).sum(), x, create_graph=True)
        (h,) = tl.autograd.grad(g.sum(), x)
        return h._value()

    x = jnp.asarray([1.0, 2.0, -3.0])
    np.testing.assert_allclose(np.asarray(jax.jit(second)(x)), 6 * np.asarray(x))


def test_custom_function_inside_a_jit_trace_with_backward():
    class Square(tl.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    def grads(x_arr):
        x = Tensor._wrap(x_arr).requires_grad_(True)
        Square.apply(x).sum().backward()
        return x.grad._value()

    x = jnp.asarray([1.0, -2.0, 0.5])
    np.testing.assert_allclose(np.asarray(jax.jit(grads)(x)), 2 * np.asarray(x))


def test_data_dependent_python_control_flow_names_the_problem():
    def f(x):
        return x * 2 if bool(x.sum() > 0) else x

    with pytest.raises(RuntimeError, match="traced Tensor"):
        jax.jit(to_jax_function(f))(jnp.ones(3))


def test_bool_mask_indexing_is_eager_only():
    with pytest.raises(RuntimeError, match="data-dependent shape"):
        jax.jit(to_jax_function(lambda x: x[x > 0].sum()))(jnp.ones(3))
