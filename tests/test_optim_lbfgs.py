"""torchlike.optim.LBFGS against torch.optim.LBFGS: the same problems, settings and starting
points; parameters, losses and evaluation counts compared after every call of step."""
import copy
import logging
import re
import warnings

import jax
import numpy as np
import pytest
import torch

import torchlike


def _rosenbrock(lib, params):
    (x,) = params
    return ((1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
            + (1 - x[2]) ** 2 + 100 * (x[3] - x[2] ** 2) ** 2)


def _least_squares(lib, params, data):
    w, b = params
    a, y = (lib.tensor(v, dtype=w.dtype) for v in data)
    r = a @ w + b - y
    return (r * r).sum()


def _problem(lib, name, dtype, seed=0):
    """Parameters (as ``lib`` tensors) and the objective of a test problem."""
    dt = getattr(lib, dtype)
    rng = np.random.default_rng(seed)
    if name == "rosenbrock":
        params = [lib.tensor([-1.5, 2.0, 1.2, -0.5], dtype=dt, requires_grad=True)]
        return params, lambda: _rosenbrock(lib, params)
    data = (rng.standard_normal((8, 3)), rng.standard_normal((8, 2)))
    params = [lib.tensor(rng.standard_normal((3, 2)), dtype=dt, requires_grad=True),
              lib.tensor(rng.standard_normal(2), dtype=dt, requires_grad=True)]
    return params, lambda: _least_squares(lib, params, data)


def _run(lib, name, dtype, kwargs, steps):
    params, objective = _problem(lib, name, dtype)
    opt = lib.optim.LBFGS(params, **kwargs)

    def closure():
        opt.zero_grad()
        loss = objective()
        loss.backward()
        return loss

    trace = []
    for _ in range(steps):
        loss = opt.step(closure)
        state = opt.state[params[0]]
        trace.append((loss.detach().item(), [p.detach().numpy().copy() for p in params],
                      state["func_evals"], state["n_iter"]))
    return trace


# (problem, settings): each run for 3 calls of step.  The float32 rows keep away from the
# optimum, where float32 rounding (which differs between PyTorch's and XLA's kernels) decides
# the stopping tests and a one-ulp difference in a loss can send a line search elsewhere.
CASES = [
    ("least_squares", {}),
    ("least_squares", {"line_search_fn": "strong_wolfe"}),
    ("least_squares", {"lr": 0.1, "history_size": 2, "max_iter": 5}),
    ("least_squares", {"history_size": 3, "max_iter": 7, "line_search_fn": "strong_wolfe"}),
    ("rosenbrock", {"max_iter": 10}),
    ("rosenbrock", {"line_search_fn": "strong_wolfe"}),
    ("rosenbrock", {"history_size": 3, "max_iter": 7, "line_search_fn": "strong_wolfe"}),
    ("rosenbrock", {"lr": 0.1, "history_size": 2, "max_iter": 5}),
]
CASES32 = [
    ("least_squares", {"lr": 0.1, "history_size": 2, "max_iter": 5}),
    ("least_squares", {"lr": 0.5, "max_iter": 3, "line_search_fn": "strong_wolfe"}),
    ("rosenbrock", {"lr": 0.5, "max_iter": 4}),
    ("rosenbrock", {"max_iter": 3, "line_search_fn": "strong_wolfe"}),
    ("rosenbrock", {"history_size": 2, "max_iter": 3, "line_search_fn": "strong_wolfe"}),
    ("rosenbrock", {"lr": 0.1, "history_size": 2, "max_iter": 5}),
]


@pytest.mark.parametrize("dtype, name, kwargs",
                         [("float64",) + c for c in CASES] + [("float32",) + c for c in CASES32])
def test_matches_torch(dtype, name, kwargs):
    steps = 3
    expected = _run(torch, name, dtype, kwargs, steps)
    got = _run(torchlike, name, dtype, kwargs, steps)
    rtol, atol = (1e-7, 1e-9) if dtype == "float64" else (1e-4, 1e-5)
    for (loss_e, params_e, evals_e, iters_e), (loss, params, evals, iters) in zip(expected, got):
        np.testing.assert_allclose(loss, loss_e, rtol=rtol, atol=atol)
        for p, p_e in zip(params, params_e):
            assert p.dtype == p_e.dtype
            np.testing.assert_allclose(p, p_e, rtol=rtol, atol=atol)
        assert (evals, iters) == (evals_e, iters_e)


def test_tensor_lr_and_defaults():
    expected = _run(torch, "least_squares", "float64", {"lr": torch.tensor(0.5)}, 2)
    got = _run(torchlike, "least_squares", "float64", {"lr": torchlike.tensor(0.5)}, 2)
    for (loss_e, params_e, *counts_e), (loss, params, *counts) in zip(expected, got):
        np.testing.assert_allclose(loss, loss_e, rtol=1e-7)
        for p, p_e in zip(params, params_e):
            np.testing.assert_allclose(p, p_e, rtol=1e-7, atol=1e-9)
        assert counts == counts_e
    p = torchlike.zeros(2, requires_grad=True)
    q = torch.zeros(2, requires_grad=True)
    assert torchlike.optim.LBFGS([p], max_iter=9).defaults == torch.optim.LBFGS(
        [q], max_iter=9).defaults


def test_state_layout_matches_torch():
    states = []
    for lib in (torch, torchlike):
        params, objective = _problem(lib, "least_squares", "float64")
        opt = lib.optim.LBFGS(params, max_iter=4, history_size=2)

        def closure():
            opt.zero_grad()
            loss = objective()
            loss.backward()
            return loss

        opt.step(closure)
        opt.step(closure)
        sd = opt.state_dict()
        assert list(sd["state"]) == [0]
        assert sd["param_groups"][0]["params"] == [0, 1]
        states.append(sd["state"][0])
    expected, got = states
    assert list(got) == list(expected)
    for key, value in expected.items():
        if isinstance(value, torch.Tensor):
            assert isinstance(got[key], torchlike.Tensor), key
            np.testing.assert_allclose(got[key].numpy(), value.numpy(), rtol=1e-7, atol=1e-12)
        elif isinstance(value, list):
            assert len(got[key]) == len(value), key
            for g, e in zip(got[key], value):
                if e is None:
                    assert g is None
                else:
                    np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-7, atol=1e-12)
        else:
            assert type(got[key]) is type(value) and got[key] == pytest.approx(value), key


def _closure_for(opt, objective):
    def closure():
        opt.zero_grad()
        loss = objective()
        loss.backward()
        return loss
    return closure


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_state_dict_round_trip_continues_identically(line_search_fn):
    kwargs = {"max_iter": 3, "history_size": 4, "line_search_fn": line_search_fn}
    params, objective = _problem(torchlike, "rosenbrock", "float64")
    opt = torchlike.optim.LBFGS(params, **kwargs)
    closure = _closure_for(opt, objective)
    opt.step(closure)
    opt.step(closure)
    saved = copy.deepcopy(opt.state_dict())
    values = [p.detach().clone() for p in params]

    params2, objective2 = _problem(torchlike, "rosenbrock", "float64")
    with torchlike.no_grad():
        for p, v in zip(params2, values):
            p.copy_(v)
    opt2 = torchlike.optim.LBFGS(params2, **kwargs)
    opt2.load_state_dict(saved)
    closure2 = _closure_for(opt2, objective2)
    for _ in range(2):
        loss, loss2 = opt.step(closure), opt2.step(closure2)
        assert loss.detach().item() == loss2.detach().item()
        for p, p2 in zip(params, params2):
            np.testing.assert_array_equal(p.detach().numpy(), p2.detach().numpy())
    assert opt.state[params[0]]["func_evals"] == opt2.state[params2[0]]["func_evals"]


def test_stops_at_optimum_like_torch():
    counts = []
    for lib in (torch, torchlike):
        p = lib.tensor([1.0, 1.0, 1.0, 1.0], dtype=lib.float64, requires_grad=True)
        opt = lib.optim.LBFGS([p])
        loss = opt.step(_closure_for(opt, lambda: _rosenbrock(lib, [p])))
        counts.append((loss.detach().item(), p.tolist(), dict(opt.state[p])))
    assert counts[0] == counts[1]


def test_complex_parameter_matches_torch():
    out = []
    for lib in (torch, torchlike):
        z = lib.tensor([1 + 2j, -0.5 + 0.25j], dtype=lib.complex128, requires_grad=True)
        c = lib.tensor([0.3 - 1j, 2 + 0.5j], dtype=lib.complex128)
        opt = lib.optim.LBFGS([z], max_iter=3)

        def objective():
            diff = z - c
            return (diff.real ** 4 + diff.imag ** 2).sum()

        closure = _closure_for(opt, objective)
        opt.step(closure)
        opt.step(closure)
        out.append(z.detach().numpy())
    np.testing.assert_allclose(out[1], out[0], rtol=1e-9, atol=1e-12)


def test_step_hooks_run_once_per_step():
    params, objective = _problem(torchlike, "rosenbrock", "float64")
    opt = torchlike.optim.LBFGS(params, max_iter=3)
    calls = []
    opt.register_step_pre_hook(lambda o, args, kwargs: calls.append("pre"))
    opt.register_step_post_hook(lambda o, args, kwargs: calls.append("post"))
    opt.step(_closure_for(opt, objective))
    assert calls == ["pre", "post"]


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


def test_errors_match_torch():
    for make in (
        lambda lib: lib.optim.LBFGS([lib.zeros(2, requires_grad=True)]).step(),
        lambda lib: lib.optim.LBFGS([{"params": [lib.zeros(2, requires_grad=True)]},
                                     {"params": [lib.zeros(1, requires_grad=True)]}]),
        lambda lib: lib.optim.LBFGS([lib.zeros(2, requires_grad=True)], lr=-1.0),
        lambda lib: lib.optim.LBFGS([lib.zeros(2, requires_grad=True)],
                                    lr=lib.tensor([0.1, 0.2])),
    ):
        assert _error(lambda: make(torchlike)) == _error(lambda: make(torch))

    for lib in (torch, torchlike):
        p = lib.tensor([0.5, 2.0], requires_grad=True)
        opt = lib.optim.LBFGS([p], line_search_fn="bogus")
        with pytest.raises(RuntimeError, match=re.escape("only 'strong_wolfe' is supported")):
            opt.step(_closure_for(opt, lambda: (p * p).sum()))
        opt.add_param_group({"params": [lib.zeros(1, requires_grad=True)]})
        with pytest.raises(AssertionError, match="Expected exactly one param_group, but got 2"):
            opt.step(_closure_for(opt, lambda: (p * p).sum()))


def test_overflowing_scalars_are_silent_and_match_torch():
    """float32 losses near the type's limit overflow the step's scalars (1/ys, the line search's
    cubic) to inf and nan: PyTorch's tensors go on silently, and so does torchlike's host
    arithmetic (NOTE [ LBFGS scalars ]), while the closure keeps the caller's numpy settings."""
    out = []
    for lib in (torch, torchlike):
        for line_search in (None, "strong_wolfe"):
            p = lib.tensor([1e19, -3e18], requires_grad=True)
            opt = lib.optim.LBFGS([p], max_iter=5, line_search_fn=line_search)

            def closure():
                with pytest.raises(FloatingPointError):
                    np.float32(1) / np.float32(0)
                return _closure_for(opt, lambda: (p * p).sum())()

            with warnings.catch_warnings(), np.errstate(divide="raise"):
                warnings.simplefilter("error")
                loss = opt.step(closure)
            state = opt.state[p]
            out.append((loss.item(), p.tolist(), state["func_evals"], state["n_iter"]))
    assert out[2:] == out[:2]


def test_a_step_compiles_only_its_seven_programs(caplog, monkeypatch):
    """The vector maths runs in seven programs, each compiled once (NOTE [ LBFGS scalars ]), not a
    program per jax.numpy call; the closure's own programs are compiled before the count (its
    backward walked node by node)."""
    monkeypatch.setattr(torchlike.autograd.fused, "enabled", False)
    w = torchlike.tensor(np.linspace(-1, 1, 17, dtype=np.float32), requires_grad=True)
    b = torchlike.zeros(3, requires_grad=True)   # no gradient: its flat part is zeros
    opt = torchlike.optim.LBFGS([w, b], lr=0.5, max_iter=6, line_search_fn="strong_wolfe")
    closure = _closure_for(opt, lambda: ((w - 0.25) ** 4).sum() + (w * w).sum())
    closure()
    with jax.log_compiles(), caplog.at_level(logging.WARNING):
        opt.step(closure)
        opt.step(closure)
    compiled = re.findall(r"Finished XLA compilation of jit\((\w+)\)", caplog.text)
    assert sorted(compiled) == ["_backward_pass", "_flatten", "_forward_pass", "_moved", "_pair",
                                "_scaled", "_slope"], compiled
