"""Parity tests: torchlike.autograd.functional against torch.autograd.functional.

Every function below is written with methods only, so the same lambda runs on torch tensors
and on torchlike tensors; results are compared value by value and structure by structure.
"""
import numpy as np
import pytest
import torch

import torchlike as tl

TF = torch.autograd.functional
LF = tl.autograd.functional

RNG = np.random.default_rng(0)
X = RNG.standard_normal(3)           # input shapes are tiny: every new shape is a jax compile
Y = RNG.standard_normal((2, 3))
VX = RNG.standard_normal(3)
VY = RNG.standard_normal((2, 3))


def pair(arr, requires_grad=False):
    return (torch.tensor(arr, dtype=torch.float64, requires_grad=requires_grad),
            tl.tensor(arr, dtype=tl.float64, requires_grad=requires_grad))


def same(t_res, l_res, create_graph=False, path="result"):
    """Same nesting (tuple/list), shapes and values; detached unless create_graph."""
    if isinstance(t_res, (tuple, list)):
        assert type(l_res) is type(t_res), f"{path}: {type(l_res)} vs {type(t_res)}"
        assert len(l_res) == len(t_res), path
        for i, (a, b) in enumerate(zip(t_res, l_res)):
            same(a, b, create_graph, f"{path}[{i}]")
        return
    assert isinstance(l_res, tl.Tensor), f"{path}: {type(l_res)}"
    assert tuple(l_res.shape) == tuple(t_res.shape), path
    assert str(l_res.dtype) == str(t_res.dtype), path
    np.testing.assert_allclose(np.asarray(l_res.detach()), t_res.detach().numpy(), rtol=1e-7,
                               atol=1e-10, err_msg=path)
    if not create_graph:
        assert not l_res.requires_grad and l_res.grad_fn is None, path


# name -> (function, takes (x, y) rather than x alone); x has shape (3,), y (2, 3)
# Few distinct ops, so that jax compiles few kernels.
FUNCS = {
    "single": (lambda x: x.sin() * x, False),
    "multi_in": (lambda x, y: (x.sin() * y).sum(1) + (y @ x.unsqueeze(1)).squeeze(1), True),
    "multi_out": (lambda x: (x.sin(), (x * x).sum()), False),
    "multi_in_out": (lambda x, y: ((x.sin() * y).sum(1), x.exp() * 2, y.t() * y.t()), True),
    "unused_input": (lambda x, y: x.sin() * x, True),
}
SCALAR_FUNCS = {
    "cubic": (lambda x: (x * x * x).sum(), False),
    "mixed": (lambda x, y: (x.sin() * y).sum() + (x * x * x).sum(), True),
    "unused": (lambda x, y: (x.sin() * x).sum(), True),
}


def args(multi):
    (tx, lx), (ty, ly) = pair(X), pair(Y)
    return ((tx, ty), (lx, ly)) if multi else (tx, lx)


def vec_in(multi):
    (tx, lx), (ty, ly) = pair(VX), pair(VY)
    return ((tx, ty), (lx, ly)) if multi else (tx, lx)


def vec_out(fn, t_in):
    """A random v shaped like fn's outputs (same structure), on both sides."""
    out = fn(*t_in) if isinstance(t_in, tuple) else fn(t_in)
    if isinstance(out, tuple):
        ps = [pair(RNG.standard_normal(tuple(o.shape))) for o in out]
        return tuple(p[0] for p in ps), tuple(p[1] for p in ps)
    return pair(RNG.standard_normal(tuple(out.shape)))


VJP_CASES = [(name, False) for name in FUNCS] + [("single", True), ("multi_in_out", True)]


@pytest.mark.parametrize("name,create_graph", VJP_CASES)
def test_vjp_jvp_match_torch(name, create_graph):
    fn, multi = FUNCS[name]
    t_in, l_in = args(multi)
    t_v, l_v = vec_out(fn, t_in)
    same(TF.vjp(fn, t_in, t_v), LF.vjp(fn, l_in, l_v, create_graph=create_graph), create_graph)
    t_u, l_u = vec_in(multi)
    same(TF.jvp(fn, t_in, t_u), LF.jvp(fn, l_in, l_u, create_graph=create_graph), create_graph)


@pytest.mark.parametrize("name", FUNCS)
def test_jacobian_matches_torch(name):
    fn, multi = FUNCS[name]
    t_in, l_in = args(multi)
    same(TF.jacobian(fn, t_in), LF.jacobian(fn, l_in))


# Every mode compiles its own jax kernels, so the modes run on a representative subset.
@pytest.mark.parametrize("name", ["single", "multi_in_out", "unused_input"])
def test_jacobian_modes_match_torch(name):
    fn, multi = FUNCS[name]
    t_in, l_in = args(multi)
    same(TF.jacobian(fn, t_in), LF.jacobian(fn, l_in, vectorize=True))
    # torch needs vectorize=True and returns lists; torchlike also runs unvectorized
    expected = TF.jacobian(fn, t_in, vectorize=True, strategy="forward-mode")
    same(expected, LF.jacobian(fn, l_in, vectorize=True, strategy="forward-mode"))
    same(expected, LF.jacobian(fn, l_in, strategy="forward-mode"))


@pytest.mark.parametrize("name", SCALAR_FUNCS)
def test_hessian_vhp_hvp_match_torch(name):
    fn, multi = SCALAR_FUNCS[name]
    t_in, l_in = args(multi)
    same(TF.hessian(fn, t_in), LF.hessian(fn, l_in))
    t_v, l_v = vec_in(multi)
    same(TF.vhp(fn, t_in, t_v), LF.vhp(fn, l_in, l_v))
    same(TF.hvp(fn, t_in, t_v), LF.hvp(fn, l_in, l_v))


def test_hessian_modes_match_torch():
    fn, _ = SCALAR_FUNCS["mixed"]
    t_in, l_in = args(True)
    same(TF.hessian(fn, t_in), LF.hessian(fn, l_in, vectorize=True))
    # torch's forward-mode outer jacobian needs vectorize=True and gives lists for tuple inputs
    expected_fwd = TF.hessian(fn, t_in, vectorize=True, outer_jacobian_strategy="forward-mode")
    same(expected_fwd, LF.hessian(fn, l_in, outer_jacobian_strategy="forward-mode"))


def test_create_graph_results_are_differentiable():
    fn = SCALAR_FUNCS["mixed"][0]
    (tx, lx), (ty, ly) = pair(X, True), pair(Y, True)
    t_h = TF.hessian(fn, (tx, ty), create_graph=True)
    l_h = LF.hessian(fn, (lx, ly), create_graph=True)
    same(t_h, l_h, create_graph=True)
    assert l_h[0][0].grad_fn is not None
    # differentiate a hessian entry once more: third derivatives agree with torch
    t_g = torch.autograd.grad(t_h[0][0].sum(), (tx, ty), allow_unused=True, materialize_grads=True)
    l_g = tl.autograd.grad(l_h[0][0].sum(), (lx, ly), allow_unused=True, materialize_grads=True)
    same(t_g, l_g, create_graph=True)
    for op in (TF.vhp, TF.hvp):
        t_out, t_r = op(fn, (tx, ty), (tx.detach(), ty.detach()), create_graph=True)
        l_out, l_r = getattr(LF, op.__name__)(fn, (lx, ly), (lx.detach(), ly.detach()),
                                              create_graph=True)
        assert l_out.grad_fn is not None and l_r[0].grad_fn is not None
        t_g = torch.autograd.grad(t_r[0].sum(), tx)
        l_g = tl.autograd.grad(l_r[0].sum(), lx)
        same(t_g, l_g)


def test_jacobian_create_graph_vectorized_and_plain_agree():
    fn = FUNCS["multi_in_out"][0]
    (tx, lx), (ty, ly) = pair(X, True), pair(Y, True)
    expected = TF.jacobian(fn, (tx, ty), create_graph=True)
    for kwargs in ({}, {"vectorize": True}, {"strategy": "forward-mode"}):
        got = LF.jacobian(fn, (lx, ly), create_graph=True, **kwargs)
        assert got[0][0].grad_fn is not None
        if "strategy" in kwargs:   # torch has no forward-mode create_graph: compare values only
            got = tuple(tuple(j) for j in got)
        same(expected, got, create_graph=True)


def test_results_detached_and_inputs_untouched():
    fn = FUNCS["multi_in"][0]
    lx, ly = tl.tensor(X, requires_grad=True), tl.tensor(Y)
    out, res = LF.vjp(fn, (lx, ly), tl.ones(2, dtype=tl.float64))
    assert out.grad_fn is None and not res[0].requires_grad
    assert lx.grad is None and lx.is_leaf and lx.requires_grad and not ly.requires_grad
    with tl.no_grad():   # the transforms enable grad themselves, as in torch
        same(TF.jacobian(fn, args(True)[0]), LF.jacobian(fn, (lx, ly)))


def test_v_none_for_single_element():
    fn = lambda x: (x * x).sum()  # noqa: E731
    (tx, lx) = pair(np.array([1.5]))
    same(TF.vjp(fn, tx), LF.vjp(fn, lx))
    same(TF.jvp(fn, tx), LF.jvp(fn, lx))
    same(TF.vhp(fn, tx), LF.vhp(fn, lx))
    same(TF.hvp(fn, tx), LF.hvp(fn, lx))


def test_non_float_outputs_give_zero_jacobian():
    fn = lambda x: (x * 2).long()  # noqa: E731
    tx, lx = pair(X)
    same(TF.jacobian(fn, tx), LF.jacobian(fn, lx))


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001  (the type is what is compared)
        return type(e), str(e)
    return None


ONE = lambda L: L.ones(2, dtype=L.float64)  # noqa: E731
ERROR_CASES = {
    "inputs_list": lambda F, L: F.vjp(lambda x: x, [ONE(L)]),
    "inputs_tuple_item": lambda F, L: F.jvp(lambda x, y: x, (ONE(L), 3), (ONE(L), ONE(L))),
    "outputs_type": lambda F, L: F.jacobian(lambda x: 3, ONE(L)),
    "vjp_v_none": lambda F, L: F.vjp(lambda x: x * 2, ONE(L)),
    "jvp_v_none": lambda F, L: F.jvp(lambda x: x * 2, ONE(L)),
    "vhp_v_none": lambda F, L: F.vhp(lambda x: x.sum(), ONE(L)),
    "v_size": lambda F, L: F.vjp(lambda x: x * 2, ONE(L), L.ones(3)),
    "v_tuple_len": lambda F, L: F.vjp(lambda x: (x * 2, x), ONE(L), (ONE(L),)),
    "v_single": lambda F, L: F.jvp(lambda x: x * 2, ONE(L), (ONE(L), ONE(L))),
    "v_entry_size": lambda F, L: F.vjp(lambda x: (x * 2, x), ONE(L), (ONE(L), L.ones(3))),
    "v_type": lambda F, L: F.hvp(lambda x: x.sum(), ONE(L), [ONE(L)]),
    "strict_output_constant": lambda F, L: F.vjp(lambda x: ONE(L), ONE(L), ONE(L), strict=True),
    "strict_unused_vjp": lambda F, L: F.vjp(lambda x, y: x * 2, (ONE(L), ONE(L)), ONE(L),
                                            strict=True),
    "strict_unused_jvp": lambda F, L: F.jvp(lambda x, y: x * 2, (ONE(L), ONE(L)),
                                            (ONE(L), ONE(L)), strict=True),
    "strict_unused_jacobian": lambda F, L: F.jacobian(lambda x, y: x * 2, (ONE(L), ONE(L)),
                                                      strict=True),
    "strict_unused_vhp": lambda F, L: F.vhp(lambda x, y: (x * x).sum(), (ONE(L), ONE(L)),
                                            (ONE(L), ONE(L)), strict=True),
    "strict_vectorize": lambda F, L: F.jacobian(lambda x: x * 2, ONE(L), strict=True,
                                                vectorize=True),
    "strict_forward": lambda F, L: F.jacobian(lambda x: x * 2, ONE(L), strict=True,
                                              vectorize=True, strategy="forward-mode"),
    "strict_linear_create_graph": lambda F, L: F.jacobian(lambda x: x * 2, ONE(L), strict=True,
                                                          create_graph=True),
    "strict_hessian_of_linear": lambda F, L: F.hessian(lambda x: (x * 2).sum(), ONE(L),
                                                       strict=True),
    "strict_vhp_of_linear": lambda F, L: F.vhp(lambda x: (x * 2).sum(), ONE(L), ONE(L),
                                               strict=True),
    "bad_strategy": lambda F, L: F.jacobian(lambda x: x, ONE(L), strategy="sideways"),
    "bad_outer_strategy": lambda F, L: F.hessian(lambda x: x.sum(), ONE(L),
                                                 outer_jacobian_strategy="sideways"),
    "hessian_tuple_output": lambda F, L: F.hessian(lambda x: (x.sum(),), ONE(L)),
    "hessian_not_scalar": lambda F, L: F.hessian(lambda x: x * 2, ONE(L)),
    "vhp_tuple_output": lambda F, L: F.vhp(lambda x: (x.sum(),), ONE(L), ONE(L)),
    "hvp_not_scalar": lambda F, L: F.hvp(lambda x: x * 2, ONE(L), ONE(L)),
}


@pytest.mark.parametrize("case", ERROR_CASES)
def test_errors_match_torch(case):
    expected = _error(lambda: ERROR_CASES[case](TF, torch))
    assert expected is not None
    assert _error(lambda: ERROR_CASES[case](LF, tl)) == expected


# torchlike's create_graph records a second-order backward op on its primals even when the
# result is constant (d2(x*x)/dx2 = 2), so strict mode cannot see that it is independent of the
# input (core issue, reported with a repro).
CONSTANT_SECOND_ORDER_CASES = {
    "jvp_of_linear": lambda F, L: F.jvp(lambda x: x * 2, ONE(L), ONE(L), strict=True,
                                        create_graph=True),
    "hessian_of_quadratic": lambda F, L: F.hessian(lambda x: (x * x).sum(), ONE(L),
                                                   strict=True, create_graph=True),
    "vhp_of_quadratic": lambda F, L: F.vhp(lambda x: (x * x).sum(), ONE(L), ONE(L),
                                           strict=True, create_graph=True),
    "hvp_of_quadratic": lambda F, L: F.hvp(lambda x: (x * x).sum(), ONE(L), ONE(L),
                                           strict=True, create_graph=True),
}


@pytest.mark.parametrize("case", CONSTANT_SECOND_ORDER_CASES)
def test_strict_constant_second_order_errors_match_torch(case):
    expected = _error(lambda: CONSTANT_SECOND_ORDER_CASES[case](TF, torch))
    assert expected is not None
    assert _error(lambda: CONSTANT_SECOND_ORDER_CASES[case](LF, tl)) == expected
