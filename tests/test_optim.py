"""torchlike.optim against real PyTorch: every algorithm step for step (float32, float64, complex,
two parameter groups, closures), state_dict layout and round trips (its own and PyTorch's), the
base class's errors, warnings, named parameters, zero_grad and hooks, and the one-program-per-step
promise of NOTE [ one update program per step ].

Every model is built from the same numpy arrays by one function of the library (``T`` is torch
or torchlike), so both start from identical weights.
"""
import copy
import warnings

import jax.numpy as jnp
import numpy as np
import pytest
import torch

from torch.optim import optimizer as torch_optimizer
import torchlike as tl
from torchlike import _ahead
from torchlike.optim import optimizer as tl_optimizer

RNG = np.random.default_rng(0)
W = RNG.standard_normal((3, 4)).astype(np.float32)
B = RNG.standard_normal(3).astype(np.float32)
X = RNG.standard_normal((8, 4)).astype(np.float32)
Y = RNG.standard_normal((8, 3)).astype(np.float32)
P_C = (RNG.standard_normal((3, 2)) + 1j * RNG.standard_normal((3, 2))).astype(np.complex64)
A_C = (RNG.standard_normal((4, 3)) + 1j * RNG.standard_normal((4, 3))).astype(np.complex64)
T_C = (RNG.standard_normal((4, 2)) + 1j * RNG.standard_normal((4, 2))).astype(np.complex64)

STEPS = 10
TOL = {np.float32: dict(rtol=2e-5, atol=2e-6), np.float64: dict(rtol=1e-12, atol=1e-13),
       np.complex64: dict(rtol=2e-5, atol=2e-6)}

# name, constructor kwargs, overrides for the second group (the bias).  Ten steps reach RAdam's
# rectified phase (rho_t > 5 from step 6) and ASGD's averaging (t0=3).
SPECS = [
    ("SGD", dict(lr=0.1), {}),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01), {"momentum": 0}),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, maximize=True), {"nesterov": False}),
    ("Adam", dict(lr=0.05), {}),
    ("Adam", dict(lr=0.05, amsgrad=True, weight_decay=0.1), {"amsgrad": False}),
    ("Adam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, maximize=True),
     {"betas": (0.8, 0.99)}),
    ("AdamW", dict(lr=0.05), {}),
    ("AdamW", dict(lr=0.05, amsgrad=True, weight_decay=0.5), {"weight_decay": 0}),
    ("Adamax", dict(lr=0.05, weight_decay=0.1), {"betas": (0.5, 0.9)}),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, momentum_decay=0.01), {}),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True), {}),
    ("RAdam", dict(lr=0.05), {}),
    ("RAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, maximize=True), {}),
    ("RMSprop", dict(lr=0.01), {"alpha": 0.5}),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.9, alpha=0.9, weight_decay=0.1),
     {"centered": False}),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1, weight_decay=0.1),
     {}),
    ("Adadelta", dict(lr=1.0, rho=0.8, weight_decay=0.1), {"rho": 0.95}),
    ("ASGD", dict(lr=0.05, t0=3, lambd=0.01, alpha=0.6, weight_decay=0.1), {}),
    ("Rprop", dict(lr=0.01, etas=(0.4, 1.3), step_sizes=(1e-4, 0.05)), {"etas": (0.5, 1.2)}),
]
CASES = [pytest.param(*row, id=f"{row[0]}-{i}") for i, row in enumerate(SPECS)]


# --- helpers ------------------------------------------------------------------------------------

def to_np(x):
    return x.detach().numpy().copy() if isinstance(x, (torch.Tensor, tl.Tensor)) else x


def linear_problem(T, name, kwargs, extra, dtype=np.float32):
    """A weight and a bias (two groups: the bias takes ``extra`` and half the lr), the optimizer
    and a closure computing the MSE of ``x @ w.T + b`` against ``y``."""
    w = T.nn.Parameter(T.tensor(W.astype(dtype)))
    b = T.nn.Parameter(T.tensor(B.astype(dtype)))
    x, y = T.tensor(X.astype(dtype)), T.tensor(Y.astype(dtype))
    opt = getattr(T.optim, name)(
        [{"params": [w]}, {"params": [b], "lr": kwargs["lr"] * 0.5, **extra}], **kwargs)

    def closure():
        opt.zero_grad()
        loss = ((x @ w.t() + b - y) ** 2).mean()
        loss.backward()
        return loss

    return [w, b], opt, closure


def complex_problem(T, name, kwargs):
    p = T.nn.Parameter(T.tensor(P_C))
    a, t = T.tensor(A_C), T.tensor(T_C)
    opt = getattr(T.optim, name)([p], **kwargs)

    def closure():
        opt.zero_grad()
        loss = ((a @ p - t).abs() ** 2).mean()
        loss.backward()
        return loss

    return [p], opt, closure


def train(params, opt, closure, steps):
    """``steps`` steps; the parameters and the returned loss after each."""
    history = []
    for _ in range(steps):
        loss = opt.step(closure)
        history.append(([to_np(p) for p in params], float(loss.detach().item())))
    return history


def assert_history_close(ref, got, tol):
    for i, ((ref_p, ref_l), (got_p, got_l)) in enumerate(zip(ref, got)):
        np.testing.assert_allclose(got_l, ref_l, **tol, err_msg=f"loss at step {i + 1}")
        for j, (r, g) in enumerate(zip(ref_p, got_p)):
            assert g.dtype == r.dtype
            np.testing.assert_allclose(g, r, **tol, err_msg=f"param {j} after step {i + 1}")


def assert_state_dict_equal(ref, got, tol=TOL[np.float32]):
    """Same layout (keys and their order, param indices, group entries) and values."""
    assert list(got) == list(ref)
    assert len(got["param_groups"]) == len(ref["param_groups"])
    for rg, gg in zip(ref["param_groups"], got["param_groups"]):
        assert list(gg) == list(rg)
        assert gg == rg
    assert list(got["state"]) == list(ref["state"])
    for k, rs in ref["state"].items():
        gs = got["state"][k]
        assert list(gs) == list(rs), k
        for key, rv in rs.items():
            gv = gs[key]
            assert isinstance(gv, tl.Tensor) == isinstance(rv, torch.Tensor), key
            if isinstance(rv, torch.Tensor):
                assert str(gv.dtype) == str(rv.dtype) and tuple(gv.shape) == tuple(rv.shape), key
                np.testing.assert_allclose(to_np(gv), to_np(rv), **tol, err_msg=key)
            else:
                assert gv == rv, key


def torch_state_dict_to_tl(sd):
    """PyTorch's state_dict with each tensor rebuilt as a torchlike tensor (same nesting)."""
    def conv(v):
        if isinstance(v, torch.Tensor):
            return tl.tensor(v.numpy())
        if isinstance(v, dict):
            return {k: conv(x) for k, x in v.items()}
        if isinstance(v, list):
            return [conv(x) for x in v]
        return v
    return conv(copy.deepcopy(sd))


def same_error(fn, kind=Exception):
    """``fn(torch)`` and ``fn(torchlike)`` both raise the same exception type and message."""
    errors = []
    for T in (torch, tl):
        with pytest.raises(kind) as info:
            fn(T)
        errors.append(info.value)
    assert type(errors[1]) is type(errors[0])
    assert str(errors[1]) == str(errors[0])


def optimizer_module(T):
    """``torch.optim.optimizer`` (torch.optim hides the name) or ``torchlike.optim.optimizer``."""
    return torch_optimizer if T is torch else tl_optimizer


def params_of(T, n=2):
    return [T.nn.Parameter(T.tensor(W[i])) for i in range(n)]


# --- every algorithm against PyTorch ------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name,kwargs,extra", CASES)
def test_steps_match_torch(name, kwargs, extra, dtype):
    """Parameters and closure losses after every step, then the whole state_dict, the defaults
    and the repr equal PyTorch's."""
    ref_params, ref_opt, ref_closure = linear_problem(torch, name, kwargs, extra, dtype)
    params, opt, closure = linear_problem(tl, name, kwargs, extra, dtype)
    assert list(opt.defaults.items()) == list(ref_opt.defaults.items())
    assert repr(opt) == repr(ref_opt)
    assert_history_close(train(ref_params, ref_opt, ref_closure, STEPS),
                         train(params, opt, closure, STEPS), TOL[dtype])
    assert_state_dict_equal(ref_opt.state_dict(), opt.state_dict(), TOL[dtype])
    assert repr(opt) == repr(ref_opt)


@pytest.mark.parametrize("name,kwargs,extra", CASES)
def test_complex_parameter_matches_torch(name, kwargs, extra):
    """A complex64 parameter is updated as PyTorch does (as pairs of reals)."""
    ref = complex_problem(torch, name, kwargs)
    got = complex_problem(tl, name, kwargs)
    assert_history_close(train(*ref, STEPS), train(*got, STEPS), TOL[np.complex64])
    assert_state_dict_equal(ref[1].state_dict(), got[1].state_dict(), TOL[np.complex64])


@pytest.mark.parametrize("name,kwargs,extra", CASES)
def test_state_dict_round_trip(name, kwargs, extra):
    """5 steps, state_dict -> deepcopy -> a fresh optimizer on copied weights -> 5 more steps
    gives exactly the 10-step run."""
    params, opt, closure = linear_problem(tl, name, kwargs, extra)
    full = train(params, opt, closure, STEPS)
    params, opt, closure = linear_problem(tl, name, kwargs, extra)
    train(params, opt, closure, STEPS // 2)
    saved = copy.deepcopy(opt.state_dict())
    weights = [to_np(p) for p in params]
    params2, opt2, closure2 = linear_problem(tl, name, kwargs, extra)
    for p, w in zip(params2, weights):
        with tl.no_grad():
            p.copy_(tl.tensor(w))
    opt2.load_state_dict(saved)
    resumed = train(params2, opt2, closure2, STEPS // 2)
    for (ref_p, ref_l), (got_p, got_l) in zip(full[STEPS // 2:], resumed):
        assert got_l == ref_l
        for r, g in zip(ref_p, got_p):
            np.testing.assert_array_equal(g, r)


@pytest.mark.parametrize("name,kwargs,extra", CASES)
def test_load_torch_state_dict(name, kwargs, extra):
    """A real PyTorch state_dict (tensors converted through numpy) loads into torchlike's
    optimizer, which then continues exactly as PyTorch does."""
    ref_params, ref_opt, ref_closure = linear_problem(torch, name, kwargs, extra)
    train(ref_params, ref_opt, ref_closure, STEPS // 2)
    params, opt, closure = linear_problem(tl, name, kwargs, extra)
    for p, r in zip(params, ref_params):
        with tl.no_grad():
            p.copy_(tl.tensor(to_np(r)))
    opt.load_state_dict(torch_state_dict_to_tl(ref_opt.state_dict()))
    assert_state_dict_equal(ref_opt.state_dict(), opt.state_dict(), TOL[np.float32])
    assert_history_close(train(ref_params, ref_opt, ref_closure, STEPS // 2),
                         train(params, opt, closure, STEPS // 2), TOL[np.float32])
    assert_state_dict_equal(ref_opt.state_dict(), opt.state_dict(), TOL[np.float32])


def test_adagrad_state_exists_from_construction():
    def state(T):
        w, b = params_of(T)
        opt = T.optim.Adagrad([w], initial_accumulator_value=0.5)
        # a group added later is initialised at its first step, from the defaults' value
        opt.add_param_group({"params": [b], "initial_accumulator_value": 2.0})
        before = opt.state_dict()
        (w.sum() + b.sum()).backward()
        opt.step()
        return before, opt.state_dict()

    for ref, got in zip(state(torch), state(tl)):
        assert_state_dict_equal(ref, got)


def test_scalar_state_follows_default_dtype():
    """Step counters and other 0-dim state are float64 under a float64 default dtype."""
    def state(T, name):
        T.set_default_dtype(T.float64)
        try:
            w = T.nn.Parameter(T.tensor(W[0]))
            opt = getattr(T.optim, name)([w], lr=0.1)
            w.sum().backward()
            opt.step()
            return opt.state_dict()
        finally:
            T.set_default_dtype(T.float32)

    for name in ("Adam", "NAdam", "ASGD", "Adagrad"):
        assert_state_dict_equal(state(torch, name), state(tl, name))


TENSOR_HYPER = [row for i, row in enumerate(SPECS) if row[0] not in {r[0] for r in SPECS[:i]}]


@pytest.mark.parametrize("name,kwargs,extra", TENSOR_HYPER, ids=[r[0] for r in TENSOR_HYPER])
def test_tensor_lr_matches_torch(name, kwargs, extra):
    """A one-element Tensor learning rate (and Tensor betas for Adam) works as in PyTorch."""
    def problem(T):
        hyper = dict(kwargs, lr=T.tensor([kwargs["lr"]]))
        if name == "Adam":
            hyper["betas"] = (T.tensor(0.8), T.tensor(0.99))
        w = T.nn.Parameter(T.tensor(W))
        x, y = T.tensor(X), T.tensor(Y)
        opt = getattr(T.optim, name)([w], **hyper)

        def closure():
            opt.zero_grad()
            loss = ((x @ w.t() - y) ** 2).mean()
            loss.backward()
            return loss
        return [w], opt, closure

    assert_history_close(train(*problem(torch), STEPS), train(*problem(tl), STEPS),
                         TOL[np.float32])


# --- constructor checks -------------------------------------------------------------------------

BAD_ARGS = [
    ("SGD", dict(lr=-1)), ("SGD", dict(momentum=-0.5)), ("SGD", dict(weight_decay=-1)),
    ("SGD", dict(nesterov=True)), ("SGD", dict(momentum=0.9, dampening=0.1, nesterov=True)),
    ("SGD", dict(fused=True, foreach=True)),
    ("Adam", dict(lr=-1)), ("Adam", dict(eps=-1)), ("Adam", dict(betas=(1.0, 0.9))),
    ("Adam", dict(betas=(0.9, 1.0))), ("Adam", dict(betas=(0.9, -0.1))),
    ("Adam", dict(weight_decay=-1)), ("Adam", dict(betas=(0, 0.9))),
    ("Adam", dict(fused=True, foreach=True)), ("Adam", dict(fused=True, differentiable=True)),
    ("AdamW", dict(lr=-0.1)), ("AdamW", dict(betas=(0.9, 1))),
    ("Adamax", dict(eps=-1)), ("Adamax", dict(betas=(-0.1, 0.9))),
    ("NAdam", dict(momentum_decay=-1)), ("NAdam", dict(weight_decay=-1)),
    ("RAdam", dict(betas=(0.9, 1.5))), ("RAdam", dict(lr=-2)),
    ("RMSprop", dict(lr=-1)), ("RMSprop", dict(eps=-1)), ("RMSprop", dict(momentum=-1)),
    ("RMSprop", dict(weight_decay=-1)), ("RMSprop", dict(alpha=-1)),
    ("Adagrad", dict(lr_decay=-1)), ("Adagrad", dict(weight_decay=-1)),
    ("Adagrad", dict(initial_accumulator_value=-1)), ("Adagrad", dict(eps=-1)),
    ("Adagrad", dict(fused=True, foreach=True)),
    ("Adadelta", dict(rho=1.5)), ("Adadelta", dict(eps=-1)), ("Adadelta", dict(lr=-1)),
    ("ASGD", dict(lr=-1)), ("ASGD", dict(weight_decay=-1)),
    ("Rprop", dict(lr=-1)), ("Rprop", dict(etas=(1.1, 1.2))), ("Rprop", dict(etas=(0.5, 0.9))),
]


@pytest.mark.parametrize("name,kwargs", BAD_ARGS,
                         ids=[f"{n}-{'-'.join(k)}" for n, k in BAD_ARGS])
def test_constructor_errors(name, kwargs):
    same_error(lambda T: getattr(T.optim, name)(params_of(T), **kwargs))


def test_tensor_lr_checks():
    same_error(lambda T: T.optim.Adam(params_of(T), lr=T.tensor([0.1, 0.2])))
    same_error(lambda T: T.optim.RMSprop(params_of(T), lr=T.tensor([0.1, 0.2])))
    same_error(lambda T: T.optim.Adam(params_of(T), lr=T.tensor(0.1), foreach=True))
    same_error(lambda T: T.optim.Adam(params_of(T), betas=(T.tensor(0.9), 0.99)))


def test_defaults_of_every_algorithm():
    for name, _, _ in SPECS:
        ref = getattr(torch.optim, name)(params_of(torch))
        got = getattr(tl.optim, name)(params_of(tl))
        assert list(got.defaults.items()) == list(ref.defaults.items()), name
        assert repr(got) == repr(ref)


# --- the base class -----------------------------------------------------------------------------

def test_params_errors():
    same_error(lambda T: T.optim.SGD(T.nn.Parameter(T.ones(2)), lr=0.1), TypeError)
    same_error(lambda T: T.optim.SGD([], lr=0.1), ValueError)
    same_error(lambda T: T.optim.SGD([{"params": {T.nn.Parameter(T.ones(2))}}]), TypeError)
    same_error(lambda T: T.optim.SGD([1.0], lr=0.1), TypeError)
    same_error(lambda T: T.optim.SGD([T.ones(2, requires_grad=True) * 2], lr=0.1), ValueError)
    same_error(lambda T: T.optim.SGD([{"params": [p]} for p in params_of(T, 1) * 2]),
               ValueError)
    same_error(lambda T: T.optim.SGD([("a", params_of(T, 1)[0]), params_of(T, 1)[0]]),
               ValueError)

    def mixed_groups(T):
        w, b = params_of(T)
        T.optim.SGD([{"params": [("w", w)]}, {"params": [b]}])
    same_error(mixed_groups, ValueError)


def test_add_param_group_type_error():
    same_error(lambda T: T.optim.SGD(params_of(T)).add_param_group([params_of(T, 1)]),
               TypeError)


def test_no_state_entry_without_state():
    """SGD without momentum keeps no state, so PyTorch's state_dict has no entry for it."""
    def state(T):
        w = params_of(T, 1)[0]
        opt = T.optim.SGD([w], lr=0.1)
        w.sum().backward()
        opt.step()
        return opt.state_dict()["state"]

    assert state(tl) == state(torch) == {}


def test_required_hyper_parameter():
    def build(T):
        required = optimizer_module(T).required

        class Custom(T.optim.Optimizer):
            def __init__(self, params, lr=required):
                super().__init__(params, {"lr": lr})

        assert repr(required) == "<required parameter>"
        Custom([{"params": params_of(T, 1), "lr": 0.1}])
        Custom(params_of(T))
    same_error(build, ValueError)


def test_duplicate_parameter_warns():
    messages = []
    for T in (torch, tl):
        p = params_of(T, 1)[0]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            T.optim.SGD([p, p], lr=0.1)
        messages.append([str(w.message) for w in caught])
    assert messages[1] == messages[0] and len(messages[0]) == 1


def test_named_parameters():
    def build(T):
        T.manual_seed(0)
        model = T.nn.Sequential(T.nn.Linear(2, 2), T.nn.Linear(2, 1))
        opt = T.optim.Adam(model[0].named_parameters(), lr=0.1)
        opt.add_param_group({"params": list(model[1].named_parameters()), "lr": 0.5})
        model(T.ones(3, 2)).sum().backward()
        opt.step()
        return opt

    ref, got = build(torch), build(tl)
    assert [g["param_names"] for g in got.param_groups] == \
        [g["param_names"] for g in ref.param_groups] == [["weight", "bias"]] * 2
    sd_ref, sd_got = ref.state_dict(), got.state_dict()
    for rg, gg in zip(sd_ref["param_groups"], sd_got["param_groups"]):
        assert list(gg) == list(rg) and gg == rg
    assert repr(got) == repr(ref)
    # named parameters cannot join an unnamed optimizer
    same_error(lambda T: T.optim.SGD(params_of(T, 1)).add_param_group(
        {"params": [("x", params_of(T, 1)[0])]}), ValueError)


@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad(set_to_none):
    for T in (torch, tl):
        w, b = params_of(T)
        opt = T.optim.SGD([w, b], lr=0.1)
        (w * 2).sum().backward()
        grad = w.grad
        opt.zero_grad(set_to_none=set_to_none)
        assert b.grad is None
        if set_to_none:
            assert w.grad is None
        else:
            assert w.grad is grad and not w.grad.requires_grad
            np.testing.assert_array_equal(to_np(w.grad), np.zeros(4, np.float32))


def test_step_hooks():
    """Per-optimizer and global pre/post hooks: order, arguments, a bad return value,
    removal."""
    def run(T):
        log = []
        w = params_of(T, 1)[0]
        opt = T.optim.SGD([w], lr=0.1)
        mod = optimizer_module(T)

        def closure():
            log.append("closure")
            opt.zero_grad()
            loss = (w ** 2).sum()
            loss.backward()
            return loss

        handles = [
            mod.register_optimizer_step_pre_hook(
                lambda o, a, k: log.append(("global pre", o is opt, sorted(k)))),
            mod.register_optimizer_step_post_hook(
                lambda o, a, k: log.append(("global post", o is opt))),
            opt.register_step_pre_hook(lambda o, a, k: log.append(("pre", o is opt))),
            opt.register_step_post_hook(lambda o, a, k: log.append(("post", sorted(k)))),
        ]
        try:
            log.append(opt.step(closure).detach().item())
            for h in handles[2:]:
                h.remove()
            log.append(opt.step(closure=closure).detach().item())
            for h in handles[:2]:
                h.remove()
            opt.step(closure)
            bad = opt.register_step_pre_hook(lambda o, a, k: "bad")
            try:
                opt.step(closure)
            except RuntimeError as e:
                log.append(str(e).split(" must return")[1])
            bad.remove()
        finally:
            for h in handles:
                h.remove()
        log.append(to_np(w).tolist())
        return log

    assert run(tl) == run(torch)


def test_step_pre_hook_sees_and_replaces_all_args():
    """As in PyTorch the hooks' ``args`` start with the optimizer itself, and a pre hook may
    return new ``(args, kwargs)`` for the step."""
    def run(T):
        log = []
        w = params_of(T, 1)[0]
        opt = T.optim.SGD([w], lr=0.1)

        def closure():
            opt.zero_grad()
            loss = (w ** 2).sum()
            loss.backward()
            return loss

        def other_closure():
            log.append("other closure")
            return closure() * 0 + 7

        opt.register_step_pre_hook(lambda o, a, k: ((a[0], other_closure), k))
        opt.register_step_post_hook(lambda o, a, k: log.append((a[0] is o, a[1].__name__)))
        log.append(opt.step(closure).detach().item())
        return log

    assert run(tl) == run(torch)


def test_state_dict_hooks():
    def run(T):
        log = []
        w, b = params_of(T)
        opt = T.optim.Adam([w, b], lr=0.1)
        (w.sum() + b.sum()).backward()
        opt.step()
        opt.register_state_dict_pre_hook(lambda o: log.append("pre"))
        opt.register_state_dict_pre_hook(lambda o: log.append("pre first"), prepend=True)

        def post(o, sd):
            log.append(("post", sorted(sd)))
            sd["extra"] = 1
            return sd
        opt.register_state_dict_post_hook(post)
        sd = opt.state_dict()
        log.append(sd["extra"])

        def load_pre(o, sd):
            log.append(("load pre", sd["param_groups"][0]["lr"]))
            sd = dict(sd)
            sd["param_groups"] = [dict(sd["param_groups"][0], lr=0.25)]
            return sd
        handle = opt.register_load_state_dict_pre_hook(load_pre)
        opt.register_load_state_dict_post_hook(
            lambda o: log.append(("load post", o.param_groups[0]["lr"])))
        opt.load_state_dict(sd)
        log.append(sd["param_groups"][0]["lr"])   # the caller's dict is left alone
        handle.remove()
        opt.load_state_dict(sd)
        log.append(opt.param_groups[0]["lr"])
        return log

    assert run(tl) == run(torch)


def test_load_state_dict_errors():
    def fewer_groups(T):
        w, b = params_of(T)
        opt = T.optim.SGD([{"params": [w]}, {"params": [b]}], lr=0.1)
        opt.load_state_dict(T.optim.SGD([w], lr=0.1).state_dict())

    def group_size(T):
        w, b = params_of(T)
        opt = T.optim.SGD([w, b], lr=0.1)
        opt.load_state_dict(T.optim.SGD([w], lr=0.1).state_dict())

    same_error(fewer_groups, ValueError)
    same_error(group_size, ValueError)


def test_load_state_dict_casts_state_to_parameter_dtype():
    """State tensors take the parameter's floating dtype; ``step`` keeps its own."""
    def run(T):
        w = T.nn.Parameter(T.tensor(W[0].astype(np.float64)))
        opt = T.optim.Adam([w], lr=0.1)
        w.sum().backward()
        opt.step()
        sd = copy.deepcopy(opt.state_dict())
        for k in ("exp_avg", "exp_avg_sq"):
            sd["state"][0][k] = sd["state"][0][k].float()
        opt.load_state_dict(sd)
        return {k: str(v.dtype) for k, v in opt.state[w].items()}

    assert run(tl) == run(torch)


# --- one update program per step ----------------------------------------------------------------

def test_update_program_traces_each_parameter_shape_once(monkeypatch):
    """The rule is traced once per shape of a parameter's operands, whatever the number of
    parameters, and jax.numpy's functions are expanded in its trace: the update program's
    jaxpr holds no nested programs (NOTE [ tracing the update program ]).  The values are those
    of test_steps_match_torch's oracle."""
    rule, traced = tl.optim.Adam._rule, []
    monkeypatch.setattr(tl.optim.Adam, "_rule", staticmethod(
        lambda p, *args: traced.append(p.shape) or rule(p, *args)))
    tl.manual_seed(0)
    params = [tl.nn.Parameter(tl.randn(3, 4)) for _ in range(4)] + [
        tl.nn.Parameter(tl.randn(5)) for _ in range(3)]
    for p in params:
        p.grad = tl.ones_like(p)
    opt = tl.optim.Adam(params, lr=0.1)
    opt.step()
    assert sorted(traced) == [(3, 4), (5,)]
    group = opt.param_groups[0]
    flags = tuple((k, group[k]) for k in opt._static) + tuple(
        (k, tl_optimizer._nonzero(group[k])) for k in opt._switches)
    program = tl_optimizer._program(tl.optim.Adam._rule, (flags,), True)
    hyper = {k: tl_optimizer._traced_value(group[k]) for k in opt.defaults
             if k not in tl_optimizer._NOT_HYPER and k not in opt._static}
    with tl._x64.on():
        jaxpr = program.trace([([p._value() for p in params],
                                [{k: v._value() for k, v in opt.state[p].items()}
                                 for p in params])],
                              [([p.grad._value() for p in params], hyper)]).jaxpr
    assert {e.primitive.name for e in jaxpr.eqns} & {"pjit", "jit", "closed_call"} == set()


def test_one_program_per_step(monkeypatch):
    """A step over many parameters in two groups is one call of one jitted program, and changing
    lr or betas between steps reuses it; changing a switch (weight_decay 0 -> nonzero) builds
    another."""
    calls = []
    real = tl_optimizer._program

    def counting(rule, flags, donate):
        program = real(rule, flags, donate)

        def call(written, read):
            calls.append(program)
            return program(written, read)
        return call

    monkeypatch.setattr(tl_optimizer, "_program", counting)
    tl.manual_seed(0)
    model = tl.nn.Sequential(tl.nn.Linear(3, 5), tl.nn.Linear(5, 4), tl.nn.Linear(4, 2))
    params = list(model.parameters())
    opt = tl.optim.Adam([{"params": params[:4]}, {"params": params[4:], "lr": 0.01}], lr=0.1)
    x = tl.ones(2, 3)

    def step():
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()

    step()
    assert len(calls) == 1
    # the second step may compile once more: fresh parameters are uncommitted jax arrays,
    # a program's outputs are committed to the device (see the report)
    step()
    compiled = calls[0]._cache_size()
    opt.param_groups[0]["lr"] = 0.05
    opt.param_groups[1]["betas"] = (0.8, 0.9)
    step()
    assert len(calls) == 3 and calls[2] is calls[0]
    assert calls[0]._cache_size() == compiled
    opt.param_groups[1]["weight_decay"] = 0.1
    step()
    assert len(calls) == 4 and calls[3] is not calls[0]


def test_update_takes_only_buffers_its_tensors_alone_hold():
    """The update writes parameters and states in place where their Tensors alone hold the
    arrays (NOTE [ donated buffers ] in torchlike/_donate.py); an array anything else holds keeps
    its values for it: a clone sharing it, a jax array of it.  Values as PyTorch's."""
    def run(T):
        model = T.nn.Linear(4, 3)
        with T.no_grad():
            model.weight.copy_(T.tensor(W))
            model.bias.copy_(T.tensor([0.1, -0.2, 0.3]))
        opt = T.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        x = T.tensor(np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4))

        def step():
            opt.zero_grad()
            model(x).square().sum().backward()
            opt.step()
        step()
        step()
        moved = None
        if T is tl:
            w, buf = model.weight, opt.state[model.weight]["momentum_buffer"]
            at = (w._arr.unsafe_buffer_pointer(), buf._arr.unsafe_buffer_pointer())
            step()
            moved = at != (w._arr.unsafe_buffer_pointer(), buf._arr.unsafe_buffer_pointer())
        else:
            step()
        clone = model.weight.clone()
        taken = jnp.asarray(model.bias) if T is tl else model.bias.detach().clone()
        step()
        return moved, [np.asarray(t.detach().numpy() if hasattr(t, "detach") else t)
                       for t in (clone, taken, model.weight, model.bias)]
    _, expected = run(torch)
    moved, got = run(tl)
    assert moved is False   # in place
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def test_arrays_shared_by_copies_are_copied_so_the_update_compiles_once(monkeypatch):
    """A deep copy's parameters share their arrays with the original's (jax arrays are
    immutable); the first update that finds written arrays shared copies them and takes the
    copies' buffers, so it compiles one program, not one that declines to donate and then one
    that does.  Sharing found again (here: the arrays held at each step) is taken to last: no
    more copies, the program without donation (NOTE [ donated buffers ] in
    torchlike/_donate.py).  The copy that is not optimized keeps its values; all values as
    PyTorch's."""
    donations, copies = [], []
    monkeypatch.setattr(_ahead, "enabled", False)   # (no first program handed over: one call)
    real = tl_optimizer._program
    monkeypatch.setattr(tl_optimizer, "_program",
                        lambda rule, flags, donate: donations.append(donate) or
                        real(rule, flags, donate))
    real_copy = tl_optimizer.copy_each
    monkeypatch.setattr(tl_optimizer, "copy_each",
                        lambda arrays: copies.append(len(donations)) or real_copy(arrays))

    def run(T):
        first = T.nn.Linear(4, 3)
        with T.no_grad():
            first.weight.copy_(T.tensor(W))
            first.bias.copy_(T.tensor([0.1, -0.2, 0.3]))
        second = copy.deepcopy(first)
        opt = T.optim.Adam(first.parameters(), lr=0.1)
        x = T.tensor(np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4))
        held = []
        for i in range(5):
            opt.zero_grad()
            (first(x) * second(x)).square().sum().backward()
            if i >= 3:   # arrays something else holds at the update
                held.append([p.detach() for p in first.parameters()])
            opt.step()
        return [t.detach().numpy() for t in (*first.parameters(), *second.parameters())]
    expected = run(torch)
    got = run(tl)
    assert donations == [True] * 3 + [False] * 2 and set(copies) == {0}
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
