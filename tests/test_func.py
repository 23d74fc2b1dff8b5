"""torchlike.func against torch.func (values, result structures, errors) and the JAX bridge
against jax.grad: every case runs the same code with ``T = torch`` and ``T = torchlike``."""
import os
import pathlib
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import torchlike as tl
from parity import TOL, close_scalars, dname

RNG = np.random.default_rng(0)
X = RNG.standard_normal(3).astype(np.float32)
Y = RNG.standard_normal(2).astype(np.float32)
XB = RNG.standard_normal((4, 3)).astype(np.float32)
W = RNG.standard_normal((2, 3)).astype(np.float32)
B = RNG.standard_normal(2).astype(np.float32)


def t(T, a, grad=False):
    x = T.tensor(a)
    return x.requires_grad_() if grad else x


def as_np(x):
    if isinstance(x, torch.Tensor):
        return x.detach().numpy()
    return np.asarray(x.detach().numpy())


def check_same(ref, got, path="result", rtol=None, atol=None):
    """Same pytree structure (tuple/list/dict), same values (to the dtype's tolerance unless
    given), shapes and dtypes."""
    if isinstance(ref, torch.Tensor):
        assert isinstance(got, tl.Tensor), f"{path}: {type(got)}"
        assert tuple(ref.shape) == tuple(got.shape), f"{path}: {ref.shape} vs {got.shape}"
        assert str(ref.dtype) == str(got.dtype), f"{path}: {ref.dtype} vs {got.dtype}"
        if not (ref.dtype.is_floating_point or ref.dtype.is_complex):
            np.testing.assert_array_equal(as_np(got), as_np(ref), err_msg=path)
            return
        rt, at = TOL[dname(ref.dtype)]
        np.testing.assert_allclose(as_np(got), as_np(ref), rtol=rt if rtol is None else rtol,
                                   atol=at if atol is None else atol, err_msg=path)
    elif isinstance(ref, (tuple, list)):
        assert type(ref) is type(got) and len(ref) == len(got), f"{path}: {ref!r} vs {got!r}"
        for i, (r, g) in enumerate(zip(ref, got)):
            check_same(r, g, f"{path}[{i}]", rtol, atol)
    elif isinstance(ref, dict):
        assert isinstance(got, dict) and list(ref) == list(got), f"{path}: {ref!r} vs {got!r}"
        for k in ref:
            check_same(ref[k], got[k], f"{path}[{k!r}]", rtol, atol)
    elif isinstance(ref, (float, complex)):
        assert close_scalars(ref, got, rtol, atol), f"{path}: {ref!r} vs {got!r}"
    else:
        assert ref == got, f"{path}: {ref!r} vs {got!r}"


def both(fn, rtol=None, atol=None):
    ref, got = fn(torch), fn(tl)
    check_same(ref, got, rtol=rtol, atol=atol)
    return got


def raises_same(fn):
    """torch and torchlike raise the same exception type with the same message."""
    with pytest.raises(Exception) as ref:
        fn(torch)
    with pytest.raises(type(ref.value)) as got:
        fn(tl)
    assert str(got.value) == str(ref.value)


# --- grad, vjp, jvp, jacobians, hessian, linearize ------------------------------------------------

def f_scalar(x):
    return (x.sin() * x).sum()


def f_two(x, y):
    return (x.sin().sum() * y.cos()).sum()


CASES = {
    "grad": lambda T: T.func.grad(f_scalar)(t(T, X)),
    "grad_argnums": lambda T: T.func.grad(f_two, argnums=(0, 1))(t(T, X), t(T, Y)),
    "grad_argnum_neg": lambda T: T.func.grad(f_two, argnums=-1)(t(T, X), t(T, Y)),
    "grad_dict": lambda T: T.func.grad(lambda d: f_scalar(d["a"]) * d["b"].sum())(
        {"a": t(T, X), "b": t(T, Y)}),
    "grad_aux": lambda T: T.func.grad(lambda x: (f_scalar(x), {"c": x.cos()}), has_aux=True)(
        t(T, X)),
    "grad_kwargs": lambda T: T.func.grad(lambda x, s: f_scalar(x) * s)(t(T, X), s=t(T, Y[0])),
    "grad_and_value": lambda T: T.func.grad_and_value(f_scalar)(t(T, X)),
    "grad_and_value_aux": lambda T: T.func.grad_and_value(
        lambda x: (f_scalar(x), [x * 2]), has_aux=True)(t(T, X)),
    "vjp": lambda T: (lambda o: (o[0], o[1](t(T, X[::-1].copy()))))(
        T.func.vjp(lambda x: x.sin() * x, t(T, X))),
    "vjp_tree": lambda T: (lambda o: (o[0], o[1]((t(T, X), {"y": t(T, Y)})), o[2]))(
        T.func.vjp(lambda x, y: ((x * y.sum(), {"y": y.exp()}), x.sum()), t(T, X), t(T, Y),
                   has_aux=True)),
    "jvp": lambda T: T.func.jvp(lambda x, y: x.sin() * y.sum(), (t(T, X), t(T, Y)),
                                (t(T, X * 2), t(T, Y))),
    "jvp_aux": lambda T: T.func.jvp(lambda x: (x.exp(), x.sum()), (t(T, X),), (t(T, X),),
                                    has_aux=True),
    "jacrev": lambda T: T.func.jacrev(lambda x: x.sin() * x.sum())(t(T, X)),
    "jacrev_tree": lambda T: T.func.jacrev(lambda x, y: {"a": x * y.sum(), "b": (x @ x) * y},
                                           argnums=(0, 1))(t(T, X), t(T, Y)),
    "jacrev_chunk_aux": lambda T: T.func.jacrev(lambda x: (T.outer(x, x), x.sum()),
                                                has_aux=True, chunk_size=2)(t(T, X)),
    "jacfwd": lambda T: T.func.jacfwd(lambda x: x.sin() * x.sum())(t(T, X)),
    "jacfwd_tree": lambda T: T.func.jacfwd(lambda x, y: (x * y.sum(), (x @ x) * y),
                                           argnums=(0, 1))(t(T, X), t(T, Y)),
    "jacfwd_aux": lambda T: T.func.jacfwd(lambda x: (x.exp(), {"s": x.sum()}), has_aux=True)(
        t(T, X)),
    "hessian": lambda T: T.func.hessian(f_scalar)(t(T, X)),
    "hessian_argnums": lambda T: T.func.hessian(f_two, argnums=(0, 1))(t(T, X), t(T, Y)),
    "linearize": lambda T: (lambda o: (o[0], o[1](t(T, X), t(T, Y))))(
        T.func.linearize(lambda x, y: (x.sin(), y * x.sum()), t(T, X), t(T, Y))),
    "grad_grad": lambda T: T.func.grad(lambda x: T.func.grad(f_scalar)(x).sum())(t(T, X)),
    "vmap_grad": lambda T: T.func.vmap(T.func.grad(f_scalar))(t(T, XB)),
    "jacrev_jacrev": lambda T: T.func.jacrev(T.func.jacrev(lambda x: x.sin() * x.sum()))(
        t(T, X)),
    "vmap_jacrev": lambda T: T.func.vmap(T.func.jacrev(lambda x: x.sin() * x.sum()))(t(T, XB)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_transform_matches_torch(name):
    both(CASES[name])


ERRORS = {
    "grad_not_scalar": lambda T: T.func.grad(lambda x: x * 2)(t(T, X)),
    "grad_not_tensor": lambda T: T.func.grad(lambda x: 1)(t(T, X)),
    "grad_no_aux": lambda T: T.func.grad(lambda x: x.sum(), has_aux=True)(t(T, X)),
    "grad_aux_type": lambda T: T.func.grad(lambda x: (x.sum(), 1), has_aux=True)(t(T, X)),
    "argnums_list": lambda T: T.func.grad(f_two, argnums=[0])(t(T, X), t(T, Y)),
    "argnums_range": lambda T: T.func.grad(f_two, argnums=2)(t(T, X), t(T, Y)),
    "argnums_dup": lambda T: T.func.grad(f_two, argnums=(0, 0))(t(T, X), t(T, Y)),
    "argnums_empty": lambda T: T.func.grad(f_two, argnums=())(t(T, X), t(T, Y)),
    "grad_float_arg": lambda T: T.func.grad(f_scalar)(3.0),
    "grad_int_tensor": lambda T: T.func.grad(lambda x: x.sum())(T.tensor([1, 2])),
    "vjp_ct_structure": lambda T: T.func.vjp(lambda x: x.sin(), t(T, X))[1]((t(T, X),)),
    "vjp_ct_shape": lambda T: T.func.vjp(lambda x: x.sin(), t(T, X))[1](t(T, Y)),
    "vjp_out_type": lambda T: T.func.vjp(lambda x: 1, t(T, X)),
    "jvp_list": lambda T: T.func.jvp(lambda x: x, [t(T, X)], [t(T, X)]),
    "jvp_shape": lambda T: T.func.jvp(lambda x: x, (t(T, X),), (t(T, Y),)),
    "jvp_empty": lambda T: T.func.jvp(lambda: 1, (), ()),
    "jvp_strict": lambda T: T.func.jvp(lambda x: T.ones(2), (t(T, X),), (t(T, X),), strict=True),
    "jvp_int": lambda T: T.func.jvp(lambda x: x, (T.tensor([1, 2]),), (T.tensor([1, 2]),)),
    "jacrev_chunk": lambda T: T.func.jacrev(lambda x: x, chunk_size=0)(t(T, X)),
    "jacfwd_randomness": lambda T: T.func.jacfwd(lambda x: x, randomness="bad")(t(T, X)),
    "jacfwd_random": lambda T: T.func.jacfwd(lambda x: x * T.rand(3))(t(T, X)),
    "hessian_random": lambda T: T.func.hessian(lambda x: (x * T.rand(3)).sum())(t(T, X)),
    "linearize_shape": lambda T: T.func.linearize(lambda x: x.sin(), t(T, X))[1](t(T, Y)),
    "stack_empty": lambda T: T.func.stack_module_state([]),
    "stack_classes": lambda T: T.func.stack_module_state([T.nn.Linear(3, 2), T.nn.Tanh()]),
    "stack_modes": lambda T: T.func.stack_module_state([T.nn.Linear(3, 2),
                                                        T.nn.Linear(3, 2).eval()]),
    "vmap_sizes": lambda T: T.func.vmap(lambda a, b: a * b)(t(T, XB), t(T, X)),
    "vmap_in_dim_range": lambda T: T.func.vmap(lambda a: a, in_dims=2)(t(T, XB)),
    "vmap_in_dims_type": lambda T: T.func.vmap(lambda a: a, in_dims="a")(t(T, XB)),
    "vmap_non_tensor": lambda T: T.func.vmap(lambda a, b: a, in_dims=(0, 0))(t(T, XB), 3),
    "vmap_nothing": lambda T: T.func.vmap(lambda a: a, in_dims=(None,))(t(T, XB)),
    "vmap_no_inputs": lambda T: T.func.vmap(lambda: 1)(),
    "vmap_returns_int": lambda T: T.func.vmap(lambda a: 1)(t(T, XB)),
    "vmap_returns_none": lambda T: T.func.vmap(lambda a: (a, None))(t(T, XB)),
    "vmap_batched_none": lambda T: T.func.vmap(lambda a: a, out_dims=None)(t(T, XB)),
    "vmap_out_dim_range": lambda T: T.func.vmap(lambda a: a, out_dims=5)(t(T, XB)),
    "vmap_chunk": lambda T: T.func.vmap(lambda a: a, chunk_size=0)(t(T, XB)),
    "vmap_randomness": lambda T: T.func.vmap(lambda a: a, randomness="x")(t(T, XB)),
    "vmap_random_error": lambda T: T.func.vmap(lambda a: a + T.rand(3))(t(T, XB)),
    "vmap_dropout_error": lambda T: T.func.vmap(lambda a: T.nn.functional.dropout(a, 0.5))(
        t(T, XB)),
    "vmap_item": lambda T: T.func.vmap(lambda a: a.sum().item())(t(T, XB)),
    "vmap_control_flow": lambda T: T.func.vmap(lambda a: a if a.sum() > 0 else -a)(t(T, XB)),
    "vmap_mutates_captured": lambda T: (lambda c: T.func.vmap(lambda a: c.add_(a))(t(T, XB)))(
        T.zeros(3)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    raises_same(ERRORS[name])


def test_structure_errors_match_torch_prefix():
    """Structure mismatches: same type and wording up to the printed tree specs (torch prints
    its TreeSpec, torchlike jax's)."""
    cases = [lambda T: T.func.vmap(lambda a: a, in_dims=(0, 0))(t(T, XB)),
             lambda T: T.func.jvp(lambda x: x, (t(T, X),), (t(T, X), t(T, X))),
             lambda T: T.func.vmap(lambda a: a, out_dims=(0, 0))(t(T, XB))]
    for fn in cases:
        with pytest.raises((ValueError, RuntimeError)) as ref:
            fn(torch)
        with pytest.raises(type(ref.value)) as got:
            fn(tl)
        prefix = str(ref.value).split(" structure")[0]
        assert str(got.value).startswith(prefix)


def test_signatures_match_torch():
    import inspect
    import torch.func
    for name in ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap",
                 "linearize", "stack_module_state", "functional_call"]:
        ref = inspect.signature(getattr(torch.func, name)).parameters.values()
        got = inspect.signature(getattr(tl.func, name)).parameters.values()
        assert [(p.name, p.kind, p.default) for p in got] == \
            [(p.name, p.kind, p.default) for p in ref], name


def test_mutating_captured_tensor_raises():
    """A write into a tensor the function captured raises (torch's wording up to the op name)
    and leaves no tracer behind (a BatchNorm in training mode)."""
    for T in (torch, tl):
        bn = T.nn.BatchNorm1d(3)
        with pytest.raises(RuntimeError) as info:
            T.func.grad(lambda x: bn(x).pow(2).sum())(t(T, XB))
        assert str(info.value).startswith("During a grad (vjp, jvp, grad, etc) transform, the "
                                          "function provided attempted to call")
        assert str(info.value).endswith("that would mutate a captured Tensor. This is not "
                                        "supported; please rewrite the function being "
                                        "transformed to explicitly accept the mutated Tensor(s) "
                                        "as inputs.")
        assert as_np(bn.running_mean).tolist() == [0.0, 0.0, 0.0]
        assert int(bn.num_batches_tracked) == 0


# --- vmap -----------------------------------------------------------------------------------------

VMAP = {
    "in_dims_none": lambda T: T.func.vmap(lambda a, b: a * b, in_dims=(0, None))(
        t(T, XB), t(T, X)),
    "in_dim_1": lambda T: T.func.vmap(lambda a, b: a * b, in_dims=(1, None))(
        t(T, XB.T.copy()), t(T, X)),
    "in_dim_neg": lambda T: T.func.vmap(lambda a: a.sum(), in_dims=-1)(t(T, XB)),
    "nested_in_dims": lambda T: T.func.vmap(lambda d: d["a"] * d["b"][0],
                                            in_dims=({"a": 0, "b": [None]},))(
        {"a": t(T, XB), "b": [t(T, X)]}),
    "list_input": lambda T: T.func.vmap(lambda xs: xs[0] + xs[1])([t(T, XB), t(T, XB)]),
    "out_dims": lambda T: T.func.vmap(lambda a: (a, a.sum()), out_dims=(1, 0))(t(T, XB)),
    "out_dims_none": lambda T: T.func.vmap(lambda a: (a * 2, 3.0, T.tensor(Y)),
                                           out_dims=(0, None, None))(t(T, XB)),
    "unbatched_out": lambda T: T.func.vmap(lambda a: T.tensor(Y))(t(T, XB)),
    "kwargs": lambda T: T.func.vmap(lambda a, scale=None: a * scale)(t(T, XB), scale=t(T, X)),
    "chunks": lambda T: T.func.vmap(lambda a: a.cumsum(0), chunk_size=3)(t(T, XB)),
    "nested": lambda T: T.func.vmap(T.func.vmap(lambda a: a.exp()))(t(T, XB)),
    "nested_in_dims_2": lambda T: T.func.vmap(T.func.vmap(lambda a, b: a * b, in_dims=(0, None)),
                                              in_dims=(None, 0))(t(T, X), t(T, XB)),
    "int_dtype": lambda T: T.func.vmap(lambda a: a * 2)(T.tensor([[1, 2], [3, 4]])),
    "functional": lambda T: T.func.vmap(lambda a: T.nn.functional.softmax(a, 0))(t(T, XB)),
}


@pytest.mark.parametrize("name", sorted(VMAP))
def test_vmap_matches_torch(name):
    both(VMAP[name])


def test_vmap_randomness():
    x = tl.zeros(4, 3)
    same = tl.func.vmap(lambda a: a + tl.rand(3), randomness="same")(x)
    assert (same == same[0]).all()
    diff = tl.func.vmap(lambda a: a + tl.rand(3), randomness="different")(x)
    assert len({tuple(r) for r in diff.tolist()}) == 4
    masks = tl.func.vmap(lambda a: tl.nn.functional.dropout(a, 0.5), randomness="different")(
        tl.ones(4, 16))
    assert len({tuple(r) for r in masks.tolist()}) == 4
    assert set(np.unique(masks.numpy())) <= {0.0, 2.0}
    masks = tl.func.vmap(lambda a: tl.nn.functional.dropout(a, 0.5), randomness="same")(
        tl.ones(4, 16))
    assert (masks == masks[0]).all()
    nested = tl.func.vmap(tl.func.vmap(lambda a: a + tl.rand(3), randomness="different"),
                          randomness="different")(tl.zeros(2, 2, 3))
    assert len({tuple(r) for r in nested.reshape(4, 3).tolist()}) == 4
    # each call draws anew: the generator advances
    again = tl.func.vmap(lambda a: a + tl.rand(3), randomness="different")(x)
    assert not (again == diff).all()
    # chunks draw per example too (the seeds are made for the whole batch)
    chunked = tl.func.vmap(lambda a: a + tl.rand(3), randomness="different", chunk_size=2)(x)
    assert len({tuple(r) for r in chunked.tolist()}) == 4


def test_vmap_per_example_grads_equal_loop():
    """vmap(grad) of a per-example loss equals a Python loop of .backward()."""
    tl.manual_seed(0)
    model = tl.nn.Sequential(tl.nn.Linear(3, 4), tl.nn.Tanh(), tl.nn.Linear(4, 2))
    x, y = tl.tensor(XB), tl.tensor(RNG.standard_normal((4, 2)).astype(np.float32))
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, xi, yi):
        out = tl.func.functional_call(model, p, (xi[None],))
        return tl.nn.functional.mse_loss(out, yi[None])
    grads = tl.func.vmap(tl.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)
    for i in range(4):
        model.zero_grad()
        tl.nn.functional.mse_loss(model(x[i:i + 1]), y[i:i + 1]).backward()
        for k, p in model.named_parameters():
            np.testing.assert_allclose(grads[k][i].numpy(), p.grad.numpy(), rtol=1e-5,
                                       atol=1e-6)


def _ensemble(T):
    T.manual_seed(0)
    models = [T.nn.Linear(3, 2) for _ in range(3)]
    for i, m in enumerate(models):
        m.load_state_dict({"weight": T.tensor(W + i), "bias": T.tensor(B - i)})
        m.register_buffer("scale", T.tensor([float(i + 1)]))
    params, buffers = T.func.stack_module_state(models)
    base = models[0]

    def f(p, b, x):
        return T.func.functional_call(base, (p, b), (x,)) * b["scale"]
    out = T.func.vmap(f, in_dims=(0, 0, None))(params, buffers, t(T, XB))
    flags = {k: (v.requires_grad, v.is_leaf) for k, v in params.items()}
    return params, buffers, out, flags


def test_stack_module_state_ensemble():
    both(_ensemble)


# --- eager autograd through transforms --------------------------------------------------------

def _through(T):
    """Transform results are differentiable w.r.t. their inputs and the tensors the function
    reads (a gradient penalty)."""
    x = t(T, X, grad=True)
    w = t(T, X[::-1].copy(), grad=True)
    g = T.func.grad(lambda x: (x * w).pow(3).sum())(x)
    jac = T.func.jacrev(lambda x: x.sin() * w)(x)
    vm = T.func.vmap(lambda r: (r * w).sum())(t(T, XB))
    out, vjp_fn = T.func.vjp(lambda x: x * w.exp(), x)
    (ct,) = vjp_fn(t(T, Y[:1].repeat(3)))
    (g.pow(2).sum() + jac.sum() + vm.sum() + out.sum() + ct.sum()).backward()
    return x.grad, w.grad


def test_results_differentiable_by_backward():
    both(_through)


def test_grad_node_and_version_check():
    x = tl.tensor(X).requires_grad_()
    g = tl.func.grad(f_scalar)(x)
    assert type(g.grad_fn).__name__ == "GradBackward"
    with tl.no_grad():
        x.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        g.sum().backward()


def test_second_order_through_transform():
    """create_graph through a recorded transform, against torch."""
    def fn(T):
        x = t(T, X, grad=True)
        g = T.func.grad(f_scalar)(x)
        (gg,) = T.autograd.grad(g.pow(2).sum(), x, create_graph=True)
        (ggg,) = T.autograd.grad(gg.sum(), x)
        return gg, ggg
    both(fn)


def test_random_draws_replayed_in_backward():
    """A transform whose function draws is recomputed in backward with the same draws."""
    x = tl.tensor(X).requires_grad_()
    tl.manual_seed(3)
    g = tl.func.grad(lambda x: (x * tl.rand(3)).pow(2).sum())(x)
    tl.manual_seed(3)
    r = tl.rand(3)
    g.sum().backward()
    np.testing.assert_allclose(g.detach().numpy(), (2 * X * r.numpy() ** 2), rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), 2 * r.numpy() ** 2, rtol=1e-6)


# --- the JAX bridge -------------------------------------------------------------------------------

def _model():
    tl.manual_seed(0)
    return tl.nn.Sequential(tl.nn.Linear(3, 4), tl.nn.Tanh(), tl.nn.Linear(4, 2))


def test_to_jax_grad_equals_backward():
    model = _model()
    x, y = tl.tensor(XB), tl.tensor(RNG.standard_normal((4, 2)).astype(np.float32))
    tl.nn.functional.mse_loss(model(x), y).backward()
    fn, params = tl.func.to_jax(model)
    assert list(params) == [k for k, _ in model.named_parameters()]
    loss = jax.jit(lambda p: jnp.mean((fn(p, x._value()) - y._value()) ** 2))
    grads = jax.grad(loss)(params)
    for k, p in model.named_parameters():
        np.testing.assert_allclose(np.asarray(grads[k]), p.grad.numpy(), rtol=1e-5, atol=1e-7)
    # jax.vmap over examples equals the batched call
    per_example = jax.vmap(lambda xi: fn(params, xi))(x._value())
    np.testing.assert_allclose(np.asarray(per_example), model(x).detach().numpy(), rtol=1e-5)


def test_to_jax_function_and_buffers():
    f = tl.func.to_jax(lambda a, b: {"s": (a * b).sum(), "n": 3})
    out = f(jnp.ones(3), np.arange(3.0, dtype=np.float32))
    assert out["n"] == 3 and float(out["s"]) == 3.0
    g = jax.grad(lambda a: tl.func.to_jax(f_scalar)(a))(jnp.asarray(X))
    np.testing.assert_allclose(np.asarray(g), np.sin(X) + X * np.cos(X), rtol=1e-5)
    bn = tl.nn.BatchNorm1d(3)
    fn, params, buffers = tl.func.to_jax(bn, with_buffers=True)
    out, new = jax.jit(fn)(params, buffers, jnp.asarray(XB))
    ref = bn(tl.tensor(XB))
    np.testing.assert_allclose(np.asarray(out), ref.detach().numpy(), rtol=1e-5, atol=1e-6)
    for k, b in bn.named_buffers():
        np.testing.assert_allclose(np.asarray(new[k]), b.numpy(), rtol=1e-6)
    with pytest.raises(TypeError, match="to_jax expects"):
        tl.func.to_jax(3)


def test_to_jax_runs_ops_on_captured_tensors_in_the_trace():
    """Ops on tensors a to_jax function closes over (a view, a reduction, a random draw) run
    inside the caller's jax.jit and make_jaxpr: their programs, compiled quickly where they run
    eagerly, are inlined into the trace (NOTE [ quick compiles ] in torchlike/_quick.py).
    Oracle: the same arithmetic in numpy."""
    from torchlike import _quick
    w = tl.tensor(W)

    def f(a):
        return (a @ w.t()).sum() + w.sum() * 2 + w.t()[0].sum() + tl.rand(3).sum() * 0

    want = (XB @ W.T).sum() + W.sum() * 2 + W.T[0].sum()
    np.testing.assert_allclose(float(f(tl.tensor(XB))), want, rtol=1e-5)
    np.testing.assert_allclose(float(jax.jit(tl.func.to_jax(f))(jnp.asarray(XB))), want,
                               rtol=1e-5)
    assert jax.make_jaxpr(tl.func.to_jax(f))(jnp.asarray(XB)).eqns
    quick, fusion = _quick._options   # in use: this process's devices are CPUs, and the
    assert quick == {"xla_cpu_use_fusion_emitters": False} and fusion == {}   # tests' XLA_FLAGS
    # set the optimisation level (conftest.py), which the quick options then leave to them


def test_quick_options_in_a_process_without_xla_flags():
    """Where XLA_FLAGS leaves them alone, the quick programs compile with the old emitters at
    optimisation level 1 and those with the fusion emitters at level 1 (NOTE [ quick compiles ]);
    this session's own XLA_FLAGS keeps level 0 (test above).  A fresh process, since the options
    are found once."""
    code = ("import torchlike; from torchlike import _quick\n"
            "(torchlike.ones(3) * 2).sum()\n"
            "print(sorted(_quick._options[0].items()), sorted(_quick._options[1].items()))")
    root = pathlib.Path(__file__).resolve().parent.parent
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=dict(env, PYTHONPATH=str(root)), cwd=root)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split("\n")[0] == ("[('xla_backend_optimization_level', 1), "
                                          "('xla_cpu_use_fusion_emitters', False)] "
                                          "[('xla_backend_optimization_level', 1)]")


def test_quick_programs_lower_into_one_context_a_thread(monkeypatch):
    """A quick program's lowerings share their thread's MLIR context, made anew after
    _CONTEXT_USES of them; a plain jax.jit's lowering, another thread's, and every lowering
    under TORCHLIKE_MLIR_CONTEXT=jax get contexts of their own (NOTE [ one MLIR context a
    thread ] in torchlike/_quick.py)."""
    import threading
    from jax._src.interpreters import mlir
    from torchlike import _quick

    def context(f, n):   # (an abstract input: a jnp.ones(n) would be a program of its own)
        return f.lower(jax.ShapeDtypeStruct((n,), jnp.float32)).compiler_ir().context

    monkeypatch.setattr(_quick, "_CONTEXT_USES", 2)
    monkeypatch.setattr(_quick, "_thread", threading.local())
    quick = _quick.quick_jit(lambda x: x * 2)
    first, second, third = (context(quick, n) for n in (3, 4, 5))
    assert first is second and third is not first   # two uses each
    assert context(jax.jit(lambda x: x * 2), 6) is not third
    assert context(quick, 7) is third
    other = []
    worker = threading.Thread(target=lambda: other.append(context(quick, 8)))
    worker.start()
    worker.join(timeout=60)
    assert other and other[0] is not third

    monkeypatch.setattr(mlir, "make_ir_context", mlir.make_ir_context.jax)
    monkeypatch.setenv("TORCHLIKE_MLIR_CONTEXT", "jax")
    assert not _quick.share_ir_contexts() and not hasattr(mlir.make_ir_context, "jax")
    assert context(quick, 9) is not context(quick, 10)
    monkeypatch.delenv("TORCHLIKE_MLIR_CONTEXT")
    assert _quick.share_ir_contexts() and not _quick.share_ir_contexts()   # once
    assert context(quick, 11) is context(quick, 12)


def test_quick_programs_compile_with_the_options_their_trace_chose(monkeypatch):
    """Once the programs of one op were traced _SHAPES_MET times, a new one over small arrays
    compiles at optimisation level 0; the first ones, one over larger arrays and a program
    counting its own traces at the quick options' level 1 (NOTE [ programs for ever new shapes ]
    in torchlike/_quick.py), and a bucket's program from its first trace.  A program whose
    largest array reaches its ``fusion`` size compiles with the fusion emitters (NOTE [ quick
    compiles ]).  Nothing changes under TORCHLIKE_COMPILE_STEP=jax."""
    from jax._src.interpreters import pxla
    from torchlike import _quick
    seen = []

    def compile_spy(computation, *args):
        seen.extend(dict(a) for a in args if type(a) is tuple and a and type(a[0]) is tuple)
        return jax_compile(computation, *args)

    jax_compile = pxla._cached_compilation.jax
    compile_spy.cache_clear = jax_compile.cache_clear
    monkeypatch.setattr(pxla, "_cached_compilation", compile_spy)
    assert _quick.options_per_program() and not _quick.options_per_program()
    monkeypatch.setattr(_quick, "_SHAPES_MET", 3)
    level, emitters = "xla_backend_optimization_level", "xla_cpu_use_fusion_emitters"
    monkeypatch.setattr(_quick, "_options", ({emitters: False, level: 1}, {level: 1}))
    traces = [0, 0]   # one op's (Op._traces): its forward and its backward
    forward = _quick.quick_jit(lambda x: (x * 2, x.sum()), traces=traces)
    backward = _quick.quick_jit(lambda g, x: g * x, traces=traces)
    own = _quick.quick_jit(lambda x: x + 1)
    rows = _quick.quick_jit(lambda x: jax.nn.softmax(x, -1), fusion=6000)

    def compile(f, *shapes):   # (abstract inputs: a jnp.ones(n) would be a program of its own)
        f.lower(*(jax.ShapeDtypeStruct(s, jnp.float32) for s in shapes)).compile()
        options = seen.pop()
        return options.get(level) if options.get(emitters) is False else ("fusion", options[level])

    assert [compile(forward, (n,)) for n in (1, 2)] == [1, 1]
    assert [compile(backward, (n,), (n,)) for n in (1, 2)] == [1, 0]   # traces 3 and 4
    assert [compile(forward, (n,)) for n in (3, 4096)] == [0, 0]
    assert compile(forward, (4097,)) == 1 and compile(backward, (64, 65), (64, 65)) == 1
    assert [compile(own, (n,)) for n in (1, 2, 3, 4)] == [1, 1, 1, 0]
    assert traces == [8, 8]   # (each trace a new shape met)
    bucket = _quick.quick_jit(lambda x: x - 1)   # a bucket's program: churning from its first
    with _quick.bucketed():
        assert [compile(bucket, (n,)) for n in (8, 4097)] == [0, 1]
    assert compile(bucket, (16,)) == 1   # (outside one: its own two traces so far)
    # (its fourth trace and on: churning, so a small one compiles at level 0)
    assert [compile(rows, s) for s in ((2, 3), (59, 100), (60, 100), (4000, 3), (5, 3))] == [
        1, 1, ("fusion", 1), ("fusion", 1), 0]
    # a small float reduction over two dims longer than one: the fusion emitters, unless its
    # trace chose level 0 (NOTE [ small reductions over several dims ])

    def total(axes, dtype=jnp.float32):
        return _quick.quick_jit(lambda x: x.astype(dtype).sum(axes))
    assert [compile(total(None), s) for s in ((32, 32), (1, 32, 32), (64, 64), (2048, 1))] == [
        ("fusion", 1), ("fusion", 1), 1, 1]
    assert compile(total((1, 2)), (2, 32, 32)) == ("fusion", 1)
    assert compile(total(1), (32, 32)) == compile(total(None, jnp.int32), (32, 32)) == 1
    assert compile(forward, (32, 32)) == 0
    monkeypatch.setattr(_quick, "_options", ({emitters: False}, {}))   # XLA_FLAGS sets the level
    assert compile(total(None), (32, 32)) is None
    jax.extend.backend.clear_in_memory_compilation_cache()   # (reaches jax's own cache)

    monkeypatch.setattr(pxla, "_cached_compilation", compile_spy)
    monkeypatch.setenv("TORCHLIKE_COMPILE_STEP", "jax")
    assert not _quick.options_per_program()
    assert compile(forward, (5,)) == 1 and compile(rows, (70, 100)) == 1


def test_programs_of_one_text_compile_once(monkeypatch):
    """Quick programs whose modules differ only in their own names and their results' compile
    once: a later one runs the first one's executable on its own operands; another shape, other
    options, a donated operand and a plain jax.jit compile their own; at most _MAX_SAME are kept,
    and clearing jax's caches clears them (NOTE [ one program for one text ] in
    torchlike/_quick.py)."""
    from jax._src.interpreters import pxla
    from torchlike import _quick
    compiled = []

    def compile_spy(computation, *args):
        compiled.append(computation)
        return jax_compile(computation, *args)

    jax_compile = pxla._cached_compilation.jax
    compile_spy.cache_clear = jax_compile.cache_clear
    monkeypatch.setattr(pxla, "_cached_compilation", compile_spy)
    assert _quick.options_per_program()
    level, emitters = "xla_backend_optimization_level", "xla_cpu_use_fusion_emitters"
    monkeypatch.setattr(_quick, "_options", ({emitters: False, level: 1}, {level: 1}))
    monkeypatch.setattr(_quick, "_SAME", {})

    def scaled(y):   # another name, its result another (a tuple's first)
        return (y * 2.0,)

    x, y, t = (jax.device_put(a) for a in (np.arange(6, dtype=np.float32).reshape(2, 3),
                                           np.ones((2, 3), np.float32),
                                           np.ones((3, 2), np.float32)))
    first = _quick.quick_jit(lambda x: x * 2.0)
    np.testing.assert_array_equal(first(x), np.asarray(x) * 2)
    assert len(compiled) == 1
    second = _quick.quick_jit(scaled)(y)[0]
    assert len(compiled) == 1   # the first one's executable, its own values
    np.testing.assert_array_equal(second, np.full((2, 3), 2.0))
    for other in (lambda: first(t), lambda: _quick.quick_jit(scaled, fusion=True)(x),
                  lambda: _quick.quick_jit(scaled, donate_argnums=0)(y),
                  lambda: jax.jit(scaled)(x)):
        n = len(compiled)
        other()
        assert len(compiled) == n + 1
    assert len(_quick._SAME) == 4   # (the plain jax.jit's is not kept)
    monkeypatch.setattr(_quick, "_MAX_SAME", 4)
    _quick.quick_jit(lambda x: x - 1.0)(x)   # a fifth: the least recently used one goes
    n = len(compiled)
    _quick.quick_jit(lambda x: x * 2.0)(t)   # (used more recently than x's)
    _quick.quick_jit(scaled)(x)
    assert len(compiled) == n + 1
    jax.clear_caches()
    assert _quick._SAME == {}


def test_new_small_shapes_move_on_the_host(monkeypatch):
    """Once an op's programs were traced for MOVES_MET shapes, a slice, a pad with zeros, a cat,
    an embedding, a split or a view op (view, transpose, permute, expand, ...) of small arrays on
    a CPU runs with numpy for its first RENT calls of a shape (no trace), then compiles; the
    host's results are the programs' (values, dtype, shape, device).  Large arrays, mixed
    dtypes, cropping or other pad values, and an op not meeting new shapes compile; a shape
    whose program ran asks the rule no more (NOTE [ new shapes moved on the host ] in
    torchlike/_host.py)."""
    from torchlike import _host
    from torchlike._ops import embedding, join, shape, spatial
    F = tl.nn.functional
    cases = [  # (op, what runs it over x): a dynamic start, a step, each dtype, the view ops
        (shape.SLICE, lambda x: x[1:, 2:7:2]), (shape.SLICE, lambda x: x[:, -3:]),
        (spatial.CONSTANT_PAD, lambda x: F.pad(x, (1, 2, 0, 3))),
        (spatial.CONSTANT_PAD, lambda x: F.pad(x, (0, 1), value=-0.0)),
        (shape._cat, lambda x: tl.cat([x, x[:2]], 0)),
        (embedding.EMBEDDING, lambda x: F.embedding(tl.tensor([[4, 0], [2, 2]]), x)),
        (shape.VIEW, lambda x: x.view(9, 5)), (shape.TRANSPOSE, lambda x: x.transpose(0, 1)),
        (shape.T, lambda x: x.t()), (shape.PERMUTE, lambda x: x.permute(1, 0)),
        (shape.UNSQUEEZE, lambda x: x.unsqueeze(1)), (shape.EXPAND, lambda x: x.expand(2, 5, 9)),
        (shape.SQUEEZE[1], lambda x: x.view(5, 1, 9).squeeze(1)),
        (shape.SELECT, lambda x: x.select(1, 7)),
        (shape.UNSAFE_VIEW, lambda x: x.t().reshape(45)),
        (join.SPLIT["SplitWithSizes"], lambda x: x.split([2, 4, 3], 1)[1])]

    def run(f, x, host):
        monkeypatch.setattr(_host, "MOVES_MET", -1 if host else 10 ** 9)
        monkeypatch.setattr(_host, "_RENTED", {})
        return f(x)._value()

    for dtype in (tl.float32, tl.bfloat16, tl.int64, tl.bool):
        x = (tl.arange(5 * 9) % 7 - 3).reshape(5, 9).to(dtype)
        for op, f in cases:
            traces = op._traces[0]
            moved = run(f, x, host=True)
            assert op._traces[0] == traces
            compiled = run(f, x, host=False)
            assert (moved.dtype, moved.shape, moved.sharding, moved.committed) == (
                compiled.dtype, compiled.shape, compiled.sharding, compiled.committed)
            np.testing.assert_array_equal(np.asarray(moved), np.asarray(compiled))
    x = tl.randn(3, 17)
    monkeypatch.setattr(_host, "MOVES_MET", -1)
    traces = shape.SLICE._traces[0]
    for _ in range(_host.RENT):
        x[:, 4:]
    assert shape.SLICE._traces[0] == traces
    x[:, 4:]
    assert shape.SLICE._traces[0] == traces + 1   # the rent paid: compiled
    for op, f in [(spatial.CONSTANT_PAD, lambda x: F.pad(x, (1, 1), value=1.0)),
                  (spatial.CONSTANT_PAD, lambda x: F.pad(x, (-1, 1))),
                  (shape._cat, lambda x: tl.cat([x, x.double()], 0)),
                  (shape.SLICE, lambda x: tl.zeros(_host.MOVED // 500 + 1, 500)[1:])]:
        traces = op._traces[0]
        f(tl.randn(2, 19))._value()   # (read: NOTE [ cuts gathered by stack ])
        assert op._traces[0] > traces
    monkeypatch.setattr(_host, "MOVES_MET", 10 ** 9)
    traces = shape.SLICE._traces[0]
    x[:, 5:]
    assert shape.SLICE._traces[0] == traces + 1
    asked = []   # the rule is asked until the program ran for these avals, then not
    monkeypatch.setattr(shape.VIEW, "cold", lambda arrays, static, dt: asked.append(static))
    y = tl.randn(6, 7)
    for _ in range(3):
        y.view(42)._value(), y.double().view(42)._value()
    assert len(asked) == 2


def test_fills_of_new_shapes_made_on_the_host(monkeypatch):
    """zero_ and fill_ of a value the tensor's dtype holds exactly run with numpy for a shape's
    first RENT fills, from the first shape on (no trace), then compile; the host's results are
    the programs' (bits, dtype, shape, device); a value the dtype rounds (XLA rounds a float64
    to bfloat16 through float32, numpy directly) or truncates stays the program's (NOTE
    [ fills on the host ] in torchlike/_host.py)."""
    from torchlike import _host
    from torchlike._ops import index
    fills = [(lambda x: x.zero_(), True), (lambda x: x.fill_(1), True),
             (lambda x: x.fill_(0.5), True), (lambda x: x.fill_(-3), True),
             (lambda x: x.fill_(True), True), (lambda x: x.fill_(1 + 2 ** -8 + 2 ** -30), False),
             (lambda x: x.fill_(0.1), False), (lambda x: x.fill_(2.7), False)]

    def run(f, x, host):
        monkeypatch.setattr(_host, "RENT", 16 if host else 0)
        monkeypatch.setattr(_host, "_RENTED", {})
        for op in (index.ZERO, index.FILL):
            monkeypatch.setattr(op, "_hot", {})
        return f(x.clone())._value()

    for dtype in (tl.float32, tl.bfloat16, tl.float16, tl.float64, tl.int32, tl.int64, tl.bool,
                  tl.complex64):
        x = tl.zeros(5, 3, dtype=dtype)
        for f, exact in fills:
            traces = index.ZERO._traces[0] + index.FILL._traces[0]
            filled = run(f, x, host=True)
            moved = index.ZERO._traces[0] + index.FILL._traces[0] == traces
            compiled = run(f, x, host=False)
            assert (filled.dtype, filled.shape, filled.sharding, filled.committed) == (
                compiled.dtype, compiled.shape, compiled.sharding, compiled.committed)
            assert np.asarray(filled).tobytes() == np.asarray(compiled).tobytes(), (dtype, f)
            if exact and (dtype.is_floating_point or dtype.is_complex):
                assert moved, (dtype, f)
    monkeypatch.setattr(_host, "RENT", 16)
    x = tl.empty(3, 41)
    traces = index.ZERO._traces[0]
    for _ in range(_host.RENT):
        x.zero_()
    assert index.ZERO._traces[0] == traces
    x.zero_()
    assert index.ZERO._traces[0] == traces + 1   # the rent paid: compiled


def test_numbers_kept_on_the_device(monkeypatch):
    """A Python number an op takes NUMBER_RENT times on a device is passed as a device scalar
    from then on: weakly typed and uncommitted like the one jax makes of the number, so no op
    traces again and every result is the number's, bit for bit (dtype, shape, device too).
    -0.0 and NaN stay numbers; a number seen fewer times than the rent is only counted
    (NOTE [ Python numbers as device scalars ] in torchlike/_dispatch.py)."""
    from torchlike import _dispatch, _host
    from torchlike._ops import pointwise
    monkeypatch.setattr(_dispatch, "_NUMBERS", {})
    ops = (pointwise.MUL, pointwise.ADD, pointwise.SUB, pointwise.DIV)
    cases = [(tl.float16, lambda x: x * 0.1), (tl.bfloat16, lambda x: x + 1e-3),
             (tl.float32, lambda x: 3 - x), (tl.int64, lambda x: x * 0.5),
             (tl.int32, lambda x: x + 7), (tl.float64, lambda x: x / 3.0),
             (tl.float32, lambda x: x * 0.0), (tl.float32, lambda x: x * -0.0),
             (tl.float32, lambda x: x + float("nan"))]
    rent = _dispatch.NUMBER_RENT
    for dtype, f in cases:
        x = tl.tensor([-2, -1, 0, 1, 2, 3]).to(dtype)
        monkeypatch.setattr(_dispatch, "NUMBER_RENT", 10 ** 9)   # the oracle: numbers stay
        for _ in range(_host.RENT + 1):   # past a bucket's rent: the shape's own program
            first = f(x)._value()
        monkeypatch.setattr(_dispatch, "NUMBER_RENT", rent)
        traces = [op._traces[0] for op in ops]
        for _ in range(rent + 2):
            kept = f(x)._value()
        assert [op._traces[0] for op in ops] == traces, (dtype, f)
        assert (kept.dtype, kept.shape, kept.sharding, kept.committed, kept.weak_type) == (
            first.dtype, first.shape, first.sharding, first.committed, first.weak_type)
        assert np.asarray(kept).tobytes() == np.asarray(first).tobytes(), (dtype, f)
    kept = {k[:2] for k, v in _dispatch._NUMBERS.items() if type(v) is not int}
    assert all(v.weak_type and not v.committed for v in _dispatch._NUMBERS.values()
               if type(v) is not int)   # else each program compiles again for the scalar
    assert kept == {(float, 0.1), (float, 1e-3), (int, 3), (float, 0.5), (int, 7), (float, 3.0)}
    x = tl.tensor([-2, -1, 0, 1, 2, 3]).float()   # (its program ran above)
    for i in range(rent - 1):   # new numbers, each seen fewer times than the rent
        x * (2.5 + i)
    counted = {(float, 2.5 + i) for i in range(rent - 1)}
    assert [type(v) for k, v in _dispatch._NUMBERS.items() if k[:2] in counted] == [int] * (
        rent - 1)


def test_rows_of_new_shapes_run_in_buckets(monkeypatch, churning):
    """Once a layer norm, a linear layer (unrecorded), an elementwise op, masked_fill, bmm or a
    softmax keeps meeting new small shapes on a CPU, it runs padded to a bucket (rows; elements
    broadcast and flattened; a product's three dims): one program for every shape within a
    bucket, the real results the exact program's (up to the order of its sums), and after RENT
    calls of a shape its own program compiles (NOTE [ rows in buckets ] in
    torchlike/_host.py); a bucket's program compiles quickest (NOTE [ programs for ever new
    shapes ] in torchlike/_quick.py)."""
    from torchlike import _host
    from torchlike._ops import activation, attention, linalg, normalization, pointwise, scatter
    F = tl.nn.functional
    w, b = tl.randn(7, 16), tl.randn(7)
    lw, lb = tl.randn(2, 8), tl.randn(2, 8)
    cases = [(attention.LINEAR, lambda x: F.linear(x, w, b)),
             (normalization.LAYER_NORM, lambda x: F.layer_norm(x, (16,))),
             (normalization.LAYER_NORM, lambda x: F.layer_norm(x.view(1, -1, 2, 8), (2, 8), lw,
                                                               lb)),
             (pointwise.MUL, lambda x: x * tl.arange(16.0)), (activation.GELU, F.gelu),
             (scatter.MASKED_FILL, lambda x: x.masked_fill(w[0] > 0, -1.5)),
             (linalg.BMM, lambda x: tl.bmm(x, x.transpose(1, 2))),
             (activation.SOFTMAX, lambda x: F.softmax(x, -1))]

    def run(f, x, host):
        monkeypatch.setattr(_host, "SHAPES_MET", -1 if host else 10 ** 9)
        monkeypatch.setattr(_host, "_RENTED", {})
        with tl.no_grad():
            return f(x)._value()

    for op, f in cases:
        op._fwd.clear()   # (a program an earlier test compiled for a bucket is not traced here)
        for rows in (17, 19, 22, 24):   # one bucket, 24 rows (flattened from (1, 24) too)
            x = tl.randn(1, rows, 16)
            traces = op._traces[0]
            del churning[:]
            bucketed = run(f, x, host=True)
            assert op._traces[0] == traces + (rows == 17)
            assert churning.count(True) == (rows == 17)   # (its operands' views: not)
            compiled = run(f, x, host=False)
            assert (bucketed.dtype, bucketed.shape, bucketed.sharding, bucketed.committed) == (
                compiled.dtype, compiled.shape, compiled.sharding, compiled.committed)
            np.testing.assert_allclose(np.asarray(bucketed), np.asarray(compiled), rtol=1e-6,
                                       atol=1e-5)
    monkeypatch.setattr(_host, "SHAPES_MET", -1)
    op, f = cases[0]
    x = tl.randn(3, 5, 16)
    traces = op._traces[0]
    for _ in range(_host.RENT):
        f(x)
    assert op._traces[0] == traces + 1   # the bucket's (16 rows)
    f(x)
    assert op._traces[0] == traces + 2   # the rent paid: compiled
    rented = dict(_host._RENTED)   # rows of more than MOVED elements: its own program
    F.layer_norm(tl.randn(_host.MOVED // 16 + 1, 16), (16,))
    assert _host._RENTED == rented
    x = tl.randn(2, 9, 16, requires_grad=True)   # recorded: its backward as before
    y = F.layer_norm(x, (16,), lw.flatten(), lb.flatten())
    y.sum().backward()
    monkeypatch.setattr(_host, "SHAPES_MET", 10 ** 9)
    x2 = x.detach().requires_grad_()
    y2 = F.layer_norm(x2, (16,), lw.flatten(), lb.flatten())
    y2.sum().backward()
    assert y.grad_fn.name() == y2.grad_fn.name() == "NativeLayerNormBackward0"
    np.testing.assert_allclose(y.detach().numpy(), y2.detach().numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-6, atol=1e-6)
    monkeypatch.setattr(_host, "SHAPES_MET", -1)   # inside a jax trace: what the trace captures
    x = tl.randn(7, 3)
    out = jax.jit(lambda s: (x * 3 + 1)._value() * s)(2.0)
    np.testing.assert_allclose(np.asarray(out), (x.numpy() * 3 + 1) * 2.0, rtol=1e-6)


def _from_jax_case(T):
    x = t(T, XB, grad=True)
    w = t(T, W, grad=True)
    if T is tl:
        def mlp(a, w, scale):
            h = jnp.tanh(a @ w.T) * scale
            return {"h": h, "n": jnp.sum(h ** 2)}
        f = tl.func.from_jax(mlp)
        out = f(x, w, 2.0)
        h, n = out["h"], out["n"]
    else:
        h = (x @ w.T).tanh() * 2.0
        n = (h ** 2).sum()
    (gx,) = T.autograd.grad((h.sin().sum() + n), x, create_graph=True)
    gx.pow(2).sum().backward()
    return h, n, gx, x.grad, w.grad


def test_from_jax_in_graph_and_second_order():
    got = both(_from_jax_case)
    assert got[0].grad_fn is not None


def test_from_jax_traced():
    """from_jax inside torchlike.compile and under jax.grad of to_jax."""
    f = tl.func.from_jax(jnp.tanh)
    model = _model()
    x, y = tl.tensor(XB), tl.tensor(RNG.standard_normal((4, 2)).astype(np.float32))
    g = jax.grad(lambda p: jnp.sum(tl.func.to_jax(lambda a: f(a).sum())(p)))(x._value())
    np.testing.assert_allclose(np.asarray(g), 1 - np.tanh(XB) ** 2, rtol=1e-5)
    opt = tl.optim.SGD(model.parameters(), lr=0.1)

    def step(x, y):
        opt.zero_grad()
        loss = tl.nn.functional.mse_loss(f(model(x)), y)
        loss.backward()
        opt.step()
        return loss
    eager = _model()
    eager_opt = tl.optim.SGD(eager.parameters(), lr=0.1)
    compiled = tl.compile(step, fullgraph=True)
    for _ in range(3):
        loss = compiled(x, y)
        eager_opt.zero_grad()
        ref = tl.nn.functional.mse_loss(f(eager(x)), y)
        ref.backward()
        eager_opt.step()
        np.testing.assert_allclose(loss.item(), ref.item(), rtol=1e-5)
    for p, q in zip(model.parameters(), eager.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-6)
