"""torchlike.utils.checkpoint against torch.utils.checkpoint and against the same computation
without checkpointing: values, gradients (parameters included), dropout replayed in the
recomputation, warnings and errors, checkpoint_sequential, and checkpoint inside traced programs
(jax.grad of to_jax, torchlike.compile) where it becomes jax.checkpoint (remat)."""
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import torchlike as tl
import torchlike.utils.checkpoint  # noqa: F401
import torch.utils.checkpoint  # noqa: F401

RNG = np.random.default_rng(1)
X = RNG.standard_normal((4, 3)).astype(np.float32)
STATE = {"0.weight": RNG.standard_normal((5, 3)).astype(np.float32),
         "0.bias": RNG.standard_normal(5).astype(np.float32),
         "2.weight": RNG.standard_normal((2, 5)).astype(np.float32),
         "2.bias": RNG.standard_normal(2).astype(np.float32)}


def net(T):
    m = T.nn.Sequential(T.nn.Linear(3, 5), T.nn.Tanh(), T.nn.Linear(5, 2))
    m.load_state_dict({k: T.tensor(v) for k, v in STATE.items()})
    return m


def as_np(x):
    return x.detach().numpy() if isinstance(x, torch.Tensor) else np.asarray(x.detach().numpy())


def grads(T, model, x):
    return [x.grad] + [p.grad for p in model.parameters()]


def run_case(T, reentrant, ckpt=True, x_grad=True, kwargs=False):
    model = net(T)
    x = T.tensor(X).requires_grad_(x_grad)
    block = (lambda a, scale=1.0: model[1](model[0](a)) * scale)
    extra = {"scale": T.tensor(2.0)} if kwargs else {}
    if ckpt:
        h = T.utils.checkpoint.checkpoint(block, x, use_reentrant=reentrant, **extra)
    else:
        h = block(x, **extra)
    out = model[2](h)
    (out ** 2).sum().backward()
    return out, h.requires_grad, grads(T, model, x)


def check(ref, got, atol=1e-5):
    if isinstance(ref, (list, tuple)):
        assert len(ref) == len(got)
        for r, g in zip(ref, got):
            check(r, g, atol)
    elif ref is None or isinstance(ref, bool):
        assert ref == got
    else:
        np.testing.assert_allclose(as_np(got), as_np(ref), rtol=1e-5, atol=atol)


@pytest.mark.parametrize("reentrant,x_grad,kwargs", [
    (False, True, False), (True, True, False), (False, False, False), (False, True, True)])
def test_gradients_match_torch_and_plain(reentrant, x_grad, kwargs):
    got = run_case(tl, reentrant, x_grad=x_grad, kwargs=kwargs)
    check(run_case(torch, reentrant, x_grad=x_grad, kwargs=kwargs), got)
    check(run_case(tl, reentrant, ckpt=False, x_grad=x_grad, kwargs=kwargs), got)


def test_node_and_reentrant_without_grad_inputs():
    model = net(tl)
    x = tl.tensor(X).requires_grad_()
    h = tl.utils.checkpoint.checkpoint(model, x, use_reentrant=False)
    assert type(h.grad_fn).__name__ == "CheckpointFunctionBackward"
    # reentrant: no input requires grad -> torch's warning, and no graph (parameters included)
    for T in (torch, tl):
        m = net(T)
        with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
            y = T.utils.checkpoint.checkpoint(m, T.tensor(X), use_reentrant=True)
        assert not y.requires_grad
    # non-reentrant: the parameters alone make a graph; parameters the function does not read
    # get no gradient
    unused = tl.nn.Linear(2, 2)

    def fn(a):
        if False:
            unused(a)
        return model(a)
    y = tl.utils.checkpoint.checkpoint(fn, tl.tensor(X), use_reentrant=False)
    y.sum().backward()
    assert model[0].weight.grad is not None and unused.weight.grad is None


def test_autograd_grad_and_second_order():
    def fn(T, ckpt):
        x = T.tensor(X).requires_grad_()
        f = (lambda a: (a.sin() * a).sum(1))
        y = T.utils.checkpoint.checkpoint(f, x, use_reentrant=False) if ckpt else f(x)
        (g,) = T.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = T.autograd.grad(g.pow(2).sum(), x)
        return g, gg
    got = fn(tl, True)
    check(fn(torch, True), got)
    check(fn(tl, False), got)


def _dropout_block(model, p=0.5):
    return lambda a: tl.nn.functional.dropout(model[1](model[0](a)), p)


def test_dropout_mask_replayed():
    """The recomputation draws the forward's mask: gradients equal the plain run's with the
    same seed; preserve_rng_state=False draws another mask in the recomputation."""
    def run(ckpt, preserve=True):
        model = net(tl)
        x = tl.tensor(X).requires_grad_()
        tl.manual_seed(7)
        block = _dropout_block(model)
        h = (tl.utils.checkpoint.checkpoint(block, x, use_reentrant=False,
                                            preserve_rng_state=preserve) if ckpt else block(x))
        after = tl.rand(1).item()   # the generator advanced past the forward's draws once
        model[2](h).pow(2).sum().backward()
        return h.detach().numpy(), x.grad.numpy(), model[0].weight.grad.numpy(), after
    plain, ckpt, other = run(False), run(True), run(True, preserve=False)
    for a, b in zip(plain, ckpt):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(other[0], plain[0])   # same forward ...
    assert not np.allclose(other[1], plain[1])        # ... but another mask recomputed


def test_warnings_and_errors_match_torch():
    for T in (torch, tl):
        model = net(T)
        x = T.tensor(X).requires_grad_()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            T.utils.checkpoint.checkpoint(model, x)
            T.utils.checkpoint.checkpoint_sequential(model, 2, x)
        msgs = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
        if T is torch:
            expected = msgs
        else:
            assert msgs == expected
            assert caught[0].filename == __file__
    bad = [dict(use_reentrant=True, foo=1), dict(use_reentrant=True, context_fn=lambda: 1),
           dict(use_reentrant=True, debug=True), dict(use_reentrant=False, determinism_check="x")]
    for kwargs in bad:
        with pytest.raises(ValueError) as ref:
            torch.utils.checkpoint.checkpoint(net(torch), torch.tensor(X), **kwargs)
        with pytest.raises(ValueError) as got:
            tl.utils.checkpoint.checkpoint(net(tl), tl.tensor(X), **kwargs)
        assert str(got.value) == str(ref.value)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
        tl.utils.checkpoint.checkpoint_sequential(net(tl), 2, tl.tensor(X), use_reentrant=False,
                                                  foo=1)


def test_checkpoint_sequential_matches_torch():
    def fn(T):
        model = net(T)
        x = T.tensor(X).requires_grad_()
        out = T.utils.checkpoint.checkpoint_sequential(model, 2, x, use_reentrant=False)
        out.pow(2).sum().backward()
        return out, grads(T, model, x)
    check(fn(torch), fn(tl))


def test_context_fn_and_non_tensor_outputs():
    entered = []

    class Ctx:
        def __init__(self, name):
            self.name = name

        def __enter__(self):
            entered.append(self.name)

        def __exit__(self, *exc):
            return False
    x = tl.tensor(X).requires_grad_()
    out, n, none = tl.utils.checkpoint.checkpoint(
        lambda a: (a.exp(), 3, None), x, use_reentrant=False,
        context_fn=lambda: (Ctx("forward"), Ctx("recompute")))
    assert (n, none) == (3, None) and entered == ["forward"]
    out.sum().backward()
    assert entered[0] == "forward" and set(entered[1:]) == {"recompute"}
    np.testing.assert_allclose(x.grad.numpy(), np.exp(X), rtol=1e-6)


def test_traced_checkpoint_is_remat():
    """Under jax.grad of to_jax the checkpointed block is jax.checkpoint (remat2 in the jaxpr)
    and the gradients equal .backward()'s."""
    class M(tl.nn.Module):
        def __init__(self):
            super().__init__()
            self.net = net(tl)

        def forward(self, a):
            h = tl.utils.checkpoint.checkpoint(lambda t: self.net[1](self.net[0](t)), a,
                                               use_reentrant=False)
            return self.net[2](h)
    m = M()
    m(tl.tensor(X)).pow(2).sum().backward()
    fn, params = tl.func.to_jax(m)

    def loss(p):
        return jnp.sum(fn(p, jnp.asarray(X)) ** 2)
    assert "remat" in str(jax.make_jaxpr(jax.grad(loss))(params))
    g = jax.grad(loss)(params)
    for k, p in m.named_parameters():
        np.testing.assert_allclose(np.asarray(g[k]), p.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_compiled_step_with_checkpoint_and_dropout():
    """A compiled training step whose model checkpoints a dropout block equals the eager step
    (the compiled step's generator state is traced: the block threads it)."""
    def make():
        model = net(tl)
        return model, tl.optim.SGD(model.parameters(), lr=0.1)

    def step_fn(model, opt):
        def step(x):
            opt.zero_grad()
            h = tl.utils.checkpoint.checkpoint(_dropout_block(model), x, use_reentrant=False)
            loss = model[2](h).pow(2).mean()
            loss.backward()
            opt.step()
            return loss
        return step
    model, opt = make()
    eager_model, eager_opt = make()
    compiled = tl.compile(step_fn(model, opt), fullgraph=True)
    eager = step_fn(eager_model, eager_opt)
    x = tl.tensor(X)
    calls = tl.compiler.counters["calls"]
    for i in range(3):
        tl.manual_seed(i)
        a = compiled(x).item()
        tl.manual_seed(i)
        b = eager(x).item()
        np.testing.assert_allclose(a, b, rtol=1e-5)
    assert tl.compiler.counters["calls"] == calls + 2   # the first call warms up eagerly
    for p, q in zip(model.parameters(), eager_model.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_batchnorm_statistics_updated_once():
    """Writes inside a checkpointed block (BatchNorm's running statistics) happen once, in the
    forward, eagerly and under to_jax; the recomputation's are dropped (PyTorch repeats them)."""
    def make():
        tl.manual_seed(0)
        return tl.nn.Sequential(tl.nn.Linear(3, 4), tl.nn.BatchNorm1d(4), tl.nn.Tanh())
    x = tl.tensor(X)
    ckpt, plain = make(), make()
    h = tl.utils.checkpoint.checkpoint(ckpt, x, use_reentrant=False)
    h.sum().backward()
    plain(x).sum().backward()
    for a, b in zip(list(ckpt.buffers()) + [ckpt[0].weight.grad],
                    list(plain.buffers()) + [plain[0].weight.grad]):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)

    class Wrapped(tl.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, a):
            return tl.utils.checkpoint.checkpoint(self.inner, a, use_reentrant=False)
    fn, params, buffers = tl.func.to_jax(Wrapped(make()), with_buffers=True)
    _, new = jax.jit(fn)(params, buffers, jnp.asarray(X))
    np.testing.assert_allclose(np.asarray(new["inner.1.running_var"]),
                               plain[1].running_var.numpy(), rtol=1e-5)
    assert int(new["inner.1.num_batches_tracked"]) == 1
