"""The engine against jax.grad (docs/architecture.md §7.4, oracle 1).

Hypothesis builds random programs over a pool of tensors: shared subexpressions (an entry is
used many times), fan-out, broadcasting, reductions, views, indexing and in-place steps.  The
same program runs through torchlike's engine (``.backward()``) and, on tracers, through
``jax.grad``; the leaf gradients must agree.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import torchlike as tl
from torchlike.testing import assert_grads_match_jax, grads_from_jax

SHAPES = [(4, 4), (4,), (1, 4), (4, 1)]

UNARY = {
    "neg": lambda a: -a, "exp": lambda a: (a * 0.3).exp(), "tanh": lambda a: a.tanh(),
    "sigmoid": lambda a: a.sigmoid(), "relu": lambda a: a.relu(), "sin": lambda a: a.sin(),
    "cos": lambda a: a.cos(), "abs": lambda a: a.abs(), "sqrt": lambda a: (a * a + 1).sqrt(),
    "log": lambda a: (a * a + 1).log(), "square": lambda a: a ** 2,
    "clamp": lambda a: a.clamp(-0.5, 0.5), "scale": lambda a: 2.5 * a - 1,
    "rdiv": lambda a: 1 / (a * a + 1), "mean_keep": lambda a: a.mean(-1, keepdim=True),
    "sum_keep": lambda a: a.sum(0, keepdim=True), "t": lambda a: a.t() if a.ndim == 2 else a,
    "view_roundtrip": lambda a: a.reshape(-1).view(a.shape),
    "unsqueeze_squeeze": lambda a: a.unsqueeze(0).squeeze(0),
    "expand": lambda a: a.expand(4, 4), "index": lambda a: a[..., 1:3].sum(-1, keepdim=True),
    "flip_index": lambda a: a[..., tl.tensor([3, 0, 2, 1])] if a.shape[-1] == 4 else a,
    "cat": lambda a: tl.cat([a, a * 2], dim=-1)[..., ::2],
}
BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (b * b + 1), "max": lambda a, b: tl.maximum(a, b),
    "min": lambda a, b: tl.minimum(a, b), "where": lambda a, b: tl.where(a > b, a, b),
    "matmul": lambda a, b: a.expand(4, 4) @ b.expand(4, 4),
    "stack_sum": lambda a, b: tl.stack([a.expand(4, 4), b.expand(4, 4)]).sum(0),
    "pow": lambda a, b: (a * a + 1) ** (b * 0.1),
}


def _inplace_mul(a, b):
    u = a * 1.0
    u.mul_(b.mean())
    return u


def _inplace_setitem(a, b):
    u = a.expand(4, 4) * 1.0
    u[..., 0] = b.expand(4, 4)[..., -1]
    return u


def _inplace_view(a, b):
    u = a.expand(4, 4) * 1.0
    v = u[1:3]
    v.add_(b.expand(4, 4)[2:])
    v.relu_()
    return u


def _inplace_mask(a, b):
    u = a.expand(4, 4) * 1.0
    u[u > 0.5] = 0.0
    u[tl.tensor([0, 2])] += b.expand(4, 4)[1:3]
    return u


INPLACE = {"mul_": _inplace_mul, "setitem": _inplace_setitem, "view_write": _inplace_view,
           "mask_write": _inplace_mask}

step = st.one_of(
    st.tuples(st.just("u"), st.sampled_from(sorted(UNARY)), st.integers(0, 99)),
    st.tuples(st.just("b"), st.sampled_from(sorted(BINARY)), st.integers(0, 99), st.integers(0, 99)),
    st.tuples(st.just("i"), st.sampled_from(sorted(INPLACE)), st.integers(0, 99),
              st.integers(0, 99)),
)


def _broadcasts(a, b):
    try:
        np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
        return True
    except ValueError:
        return False


def make_program(steps, outputs):
    def program(*leaves):
        pool = list(leaves)
        for s in steps:
            a = pool[s[2] % len(pool)]
            if s[0] == "u":
                pool.append(UNARY[s[1]](a))
                continue
            b = pool[s[3] % len(pool)]
            if not _broadcasts(a, b) and s[1] != "matmul":
                b = b.sum()
            table = BINARY if s[0] == "b" else INPLACE
            pool.append(table[s[1]](a, b))
        picked = [pool[i % len(pool)] for i in outputs]
        total = picked[0].sum()
        for k, p in enumerate(picked[1:], 2):
            total = total + k * p.sum()
        return total
    return program


@settings(max_examples=30, deadline=None)
@given(shapes=st.lists(st.sampled_from(SHAPES), min_size=1, max_size=3),
       steps=st.lists(step, min_size=1, max_size=8),
       outputs=st.lists(st.integers(0, 99), min_size=1, max_size=3),
       seed=st.integers(0, 2**31 - 1))
def test_random_programs_match_jax_grad(shapes, steps, outputs, seed):
    rng = np.random.default_rng(seed)
    leaves = [tl.tensor(rng.standard_normal(s), dtype=tl.float64) for s in shapes]
    assert_grads_match_jax(make_program(steps, outputs), *leaves, rtol=1e-9, atol=1e-9)


def test_fan_out_and_shared_subexpression():
    def f(x, w):
        h = (x @ w).tanh()
        return (h * h + h.sum(0) - h.mean()).sum() + (h @ h.t()).relu().sum()
    x, w = tl.randn(3, 4, dtype=tl.float64), tl.randn(4, 4, dtype=tl.float64)
    assert_grads_match_jax(f, x, w, rtol=1e-10, atol=1e-10)


def test_the_oracle_catches_a_wrong_gradient():
    """Not vacuous: a hook that changes the engine's gradient (jax.grad knows no hooks)."""
    def f(x):
        y = x * 2
        if y.requires_grad:
            y.register_hook(lambda g: g * 3)
        return y.sum()
    with pytest.raises(AssertionError, match="differs from jax.grad"):
        assert_grads_match_jax(f, tl.randn(3, dtype=tl.float64))


def test_custom_function_under_jax_grad_uses_its_backward():
    """autograd.Function maps onto jax.custom_vjp when traced: jax.grad sees the user rule."""
    class ScaledExp(tl.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y * 2   # not exp's derivative, on purpose: whose rule ran is visible

    x = tl.randn(5, dtype=tl.float64)
    (g_jax,) = grads_from_jax(lambda t: ScaledExp.apply(t).sum(), x)
    np.testing.assert_allclose(np.asarray(g_jax), 2 * np.exp(x.numpy()), rtol=1e-12)
    assert_grads_match_jax(lambda t: ScaledExp.apply(t).sum(), x, rtol=1e-12, atol=1e-12)


# --- the fused backward (NOTE [ fused backward ]) against the per-node walk ---------------------

@settings(max_examples=25, deadline=None)
@given(shapes=st.lists(st.sampled_from(SHAPES), min_size=1, max_size=3),
       steps=st.lists(step, min_size=1, max_size=6),
       outputs=st.lists(st.integers(0, 99), min_size=1, max_size=3),
       seed=st.integers(0, 2**31 - 1))
def test_fused_backward_matches_the_per_node_walk(shapes, steps, outputs, seed):
    """The second backward of a graph shape runs as one program: same gradients, accumulated
    into the same .grad tensors."""
    from torchlike.autograd import fused
    rng = np.random.default_rng(seed)
    program = make_program(steps, outputs)
    leaves = [tl.tensor(rng.standard_normal(s), dtype=tl.float64, requires_grad=True)
              for s in shapes]
    program(*leaves).backward()                      # first sighting: node by node
    first = [None if x.grad is None else x.grad.numpy().copy() for x in leaves]
    held = [x.grad for x in leaves]
    compiled = []
    original = fused._program
    fused._program = lambda signature: compiled.append(signature) or original(signature)
    try:
        program(*leaves).backward()                  # same signature: fused, accumulating
    finally:
        fused._program = original
    for x, g, h in zip(leaves, first, held):
        if g is None:
            assert x.grad is None
            continue
        assert x.grad is h                           # accumulated in place, as PyTorch does
        np.testing.assert_allclose(x.grad.numpy(), 2 * g, rtol=1e-12, atol=1e-12)
    assert len(compiled) <= 1    # compiled now, or earlier for the same graph shape


def test_fused_backward_is_compiled_once_seen_often_enough(monkeypatch):
    """Node by node until a graph's signature has been seen ``fuse_after`` times and as often
    as its savings need to repay its compile, then one program from that sighting on; the
    compile's time then prices the next (NOTE [ fused backward ])."""
    from torchlike.autograd import fused
    monkeypatch.setattr(fused, "fuse_after", 4)
    compiled = []
    original = fused._program
    monkeypatch.setattr(fused, "_program", lambda sig: compiled.append(sig) or original(sig))
    x = tl.randn(3, 5, dtype=tl.float64, requires_grad=True)
    v = x.detach().numpy()
    expected = np.cos(v) * v + np.sin(v)

    def sightings_until_compiled():
        compiled.clear()
        fused._SEEN.clear()
        for sighting in range(1, 10):
            x.grad = None
            (x.sin() * x).sum().backward()
            np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)
            if compiled:
                return sighting

    assert sightings_until_compiled() == 4   # conftest's buy_after = 0: fuse_after decides
    monkeypatch.setattr(fused, "buy_after", None)
    # a compile of 6 nodes' savings a node so far: compiled on the 7th sighting
    monkeypatch.setattr(fused, "_compiles", [6 * fused.node_saving, 1])
    assert sightings_until_compiled() == 7
    nodes = len(compiled[0][0])
    assert fused._compiles[1] == 1 + nodes and fused._compiles[0] > 6 * fused.node_saving
    monkeypatch.setattr(fused, "_compiles", [1 * fused.node_saving, 1])
    assert sightings_until_compiled() == 4   # fuse_after is the least


def test_fused_backward_is_used_and_keeps_engine_semantics():
    from torchlike.autograd import fused
    x = tl.randn(3, 4, dtype=tl.float64, requires_grad=True)
    w = tl.randn(4, 2, dtype=tl.float64, requires_grad=True)

    def step():
        loss = ((x @ w).tanh() ** 2).mean()
        loss.backward()
        return loss

    step()
    calls = []
    original = fused._program

    def spy(signature):
        calls.append(signature)
        return original(signature)
    fused._program = spy
    try:
        loss = step()                                # compiles the fused program once
        step()
    finally:
        fused._program = original
    assert len(calls) == 1
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()                              # the fused run released the graph
    y = x * 2
    z = (y * y).sum()
    y.add_(1)                                        # version counter, checked before it runs
    for _ in range(2):
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.backward(retain_graph=True)


def test_fused_and_per_node_agree_on_an_mlp():
    from torchlike.autograd import fused
    rng = np.random.default_rng(0)
    x = tl.tensor(rng.standard_normal((8, 5)))
    params = [tl.tensor(rng.standard_normal(s), requires_grad=True)
              for s in [(5, 7), (7,), (7, 3), (3,)]]

    def grads():
        for p in params:
            p.grad = None
        h = tl.relu(x @ params[0] + params[1])
        ((h @ params[2] + params[3]) ** 2).mean().backward()
        return [p.grad.numpy().copy() for p in params]

    fused.enabled = False
    try:
        reference = grads()
    finally:
        fused.enabled = True
    for _ in range(3):
        for got, want in zip(grads(), reference):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
