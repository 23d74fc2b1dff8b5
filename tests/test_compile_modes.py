"""torchlike.compile, modes agree: the same seeded setup run once with the plain step and once
with ``torchlike.compile(step)`` ends in the same parameters, ``.grad``, optimizer state, buffers
and losses, for several models, optimizers, LR schedules, training-loop patterns and custom
autograd.Functions (NOTE [ whole-step compile ] in torchlike/_compile/__init__.py)."""
import copy

import numpy as np
import pytest

import torchlike as tl
import torchlike.nn as nn
import torchlike.nn.functional as F
from torchlike import compiler

# fresh_counters: an autouse fixture (compiler counters and programs reset per test)
from compile_helpers import (as_numpy, assert_same, fresh_counters, loop_setup,  # noqa: F401
                             mlp_step, plain_step)


# --- models and optimizers --------------------------------------------------------------------

def _mlp():
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    return model, tl.randn(6, 4), tl.randint(0, 3, (6,))


def _cnn():
    # bias=False before BatchNorm: that bias's gradient is ~0, and Adam would amplify its noise
    model = nn.Sequential(nn.Conv2d(1, 4, 3, bias=False), nn.BatchNorm2d(4), nn.ReLU(),
                          nn.Dropout(0.5), nn.Flatten(), nn.Linear(4 * 4 * 4, 3))
    return model, tl.randn(5, 1, 6, 6), tl.randint(0, 3, (5,))


class _Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16,
                                                dropout=0.0, batch_first=True)
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        return self.head(self.layer(x).mean(1))


def _transformer():
    return _Encoder(), tl.randn(3, 5, 8), tl.randint(0, 3, (3,))


_MODELS = {"mlp": _mlp, "cnn": _cnn, "transformer": _transformer}


def _two_sgd_groups(params):
    """Plain momentum on the first half of the parameters, nesterov + weight decay on the rest
    (one program covers both update rules)."""
    params = list(params)
    half = len(params) // 2
    return tl.optim.SGD([{"params": params[:half]},
                         {"params": params[half:], "nesterov": True, "weight_decay": 1e-2,
                          "lr": 0.03}], lr=0.05, momentum=0.9)


_OPTIMIZERS = {
    "sgd_momentum_and_nesterov_wd": _two_sgd_groups,
    "adam": lambda p: tl.optim.Adam(p, lr=1e-2),
    "adamw": lambda p: tl.optim.AdamW(p, lr=1e-2, weight_decay=0.1),
}


def _train(make_model, make_opt, compiled, steps=5, make_sched=None):
    """``steps`` seeded training steps; returns (model, optimizer, losses, hyper-parameters)."""
    tl.manual_seed(0)
    model, x, y = make_model()
    opt = make_opt(model.parameters())
    sched = make_sched(opt) if make_sched else None

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        if sched is not None:
            sched.step()
        return loss

    fn = tl.compile(step) if compiled else step
    losses, lrs = [], []
    for _ in range(steps):
        losses.append(fn(x, y).detach())
        lrs.append([(g["lr"], g.get("momentum"), g.get("betas")) for g in opt.param_groups])
    return model, opt, losses, lrs


def _without_key_bias(name, t):
    """An attention layer's key bias gets a gradient of exactly 0 in exact arithmetic (a shift
    of every key moves each row of scores alike), so its gradient is rounding noise, which Adam
    scales up to full steps: that block of in_proj_bias (and its optimizer state) is left out
    of the comparison; its gradient is checked to be noise-sized instead."""
    if not name.endswith("in_proj_bias"):
        return t
    e = t.shape[0] // 3
    return tl.cat([t[:e], t[2 * e:]])


def _assert_runs_agree(eager, compiled):
    (m1, o1, l1, lr1), (m2, o2, l2, lr2) = eager, compiled
    assert_same(l1, l2, "losses")
    for (name, p1), p2 in zip(m1.named_parameters(), m2.parameters()):
        assert_same(_without_key_bias(name, p1.detach()), _without_key_bias(name, p2.detach()),
                    name)
        assert_same(_without_key_bias(name, p1.grad), _without_key_bias(name, p2.grad),
                    name + ".grad")
        if name.endswith("in_proj_bias"):
            e = p1.shape[0] // 3
            assert float(p1.grad[e:2 * e].abs().max()) < 1e-6
            assert float(p2.grad[e:2 * e].abs().max()) < 1e-6
    assert_same(dict(m1.named_buffers()), dict(m2.named_buffers()), "buffers")
    names = [name for name, _ in m1.named_parameters()]
    s1, s2 = o1.state_dict(), o2.state_dict()
    for s in (s1, s2):
        s["state"] = {i: {k: _without_key_bias(names[i], v) if v.ndim else v
                          for k, v in entry.items()} for i, entry in s["state"].items()}
    assert_same(s1, s2, "optimizer")
    assert_same(lr1, lr2, "hyper-parameters")


# --- compiled == eager ------------------------------------------------------------------------

@pytest.mark.parametrize("opt_name", list(_OPTIMIZERS))
@pytest.mark.parametrize("model_name", list(_MODELS))
def test_compiled_steps_equal_eager_steps(model_name, opt_name):
    args = (_MODELS[model_name], _OPTIMIZERS[opt_name])
    eager = _train(*args, compiled=False)
    compiled = _train(*args, compiled=True)
    _assert_runs_agree(eager, compiled)
    assert compiler.counters["compiles"] == 1
    assert compiler.counters["calls"] == 4 and compiler.counters["eager_calls"] == 1
    if model_name == "cnn":   # the running statistics moved, one batch counted per step
        bn = compiled[0][1]
        assert int(bn.num_batches_tracked) == 5
        assert not np.allclose(as_numpy(bn.running_var), 1.0)


_SCHEDULES = {
    "step_lr_sgd": (lambda p: tl.optim.SGD(p, lr=0.1, momentum=0.9),
                    lambda o: tl.optim.lr_scheduler.StepLR(o, step_size=3, gamma=0.5)),
    "one_cycle_sgd": (lambda p: tl.optim.SGD(p, lr=0.1, momentum=0.9),
                      lambda o: tl.optim.lr_scheduler.OneCycleLR(o, max_lr=0.1, total_steps=20)),
    "one_cycle_adam": (lambda p: tl.optim.Adam(p, lr=1e-2),
                       lambda o: tl.optim.lr_scheduler.OneCycleLR(o, max_lr=1e-2,
                                                                  total_steps=20)),
}


@pytest.mark.parametrize("name", list(_SCHEDULES))
def test_schedules_compile_once_and_follow_the_eager_rates(name):
    make_opt, make_sched = _SCHEDULES[name]
    eager = _train(_mlp, make_opt, False, steps=20, make_sched=make_sched)
    compiled = _train(_mlp, make_opt, True, steps=20, make_sched=make_sched)
    assert compiler.counters["compiles"] == 1
    assert compiler.counters["calls"] == 19
    assert compiled[3] == eager[3]   # the same Python floats: the schedule runs eagerly
    lrs = [g[0][0] for g in eager[3]]
    assert len(set(lrs)) > 3   # the schedule really moved the rate
    if name.startswith("one_cycle"):   # and the momentum / beta1
        assert len({g[0][1] or g[0][2] for g in eager[3]}) > 3
    _assert_runs_agree(eager, compiled)


# --- the ways a training loop touches the state between and inside steps ------------------------

def _sched_outside(wrap):
    model, opt, x = loop_setup()
    sched = tl.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    step = wrap(plain_step(model, opt))
    out = []
    for _ in range(5):
        out.append(step(x).detach())
        sched.step()   # once per "epoch", outside the compiled step
    return model, opt, out


def _manual_lr_and_param_writes(wrap):
    model, opt, x = loop_setup()
    step = wrap(plain_step(model, opt))
    out = []
    for i in range(5):
        out.append(step(x).detach())
        opt.param_groups[0]["lr"] = 0.1 / (i + 2)
        with tl.no_grad():
            model[0].weight.mul_(0.9)
            model[2].bias[0] = 0.5
    return model, opt, out


def _grad_accumulation(wrap):
    model, opt, x = loop_setup()

    def step(x):   # no zero_grad: .grad accumulates over the calls, as in eager
        loss = model(x).pow(2).mean()
        loss.backward()
        return loss
    step = wrap(step)
    out = [step(x).detach() for _ in range(4)]
    opt.step()
    return model, opt, out


def _zero_grad_keep_and_clip(wrap):
    model, opt, x = loop_setup()

    def step(x):
        opt.zero_grad(set_to_none=False)
        loss = model(x).pow(2).mean() * 100
        loss.backward()
        norm = nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        return loss, norm
    step = wrap(step)
    return model, opt, [step(x) for _ in range(5)]


def _hooks(wrap):
    model, opt, x = loop_setup()
    model[0].weight.register_hook(lambda g: g * 0.5)
    model[2].register_forward_hook(lambda mod, args, out: out * 2)
    step = wrap(plain_step(model, opt))
    return model, opt, [step(x).detach() for _ in range(5)]


def _tied_and_frozen(wrap):
    tl.manual_seed(0)
    emb, frozen, head = nn.Embedding(5, 4), nn.Linear(4, 4), nn.Linear(4, 5, bias=False)
    head.weight = emb.weight
    frozen.requires_grad_(False)
    model = nn.ModuleList([emb, frozen, head])
    opt = tl.optim.Adam(model.parameters(), lr=1e-2)
    idx = tl.randint(0, 5, (3,))

    def step(idx):
        opt.zero_grad()
        loss = F.cross_entropy(head(frozen(emb(idx))), idx)
        loss.backward()
        opt.step()
        return loss
    step = wrap(step)
    out = [step(idx).detach() for _ in range(5)]
    assert head.weight is emb.weight and frozen.weight.grad is None
    return model, opt, out


def _state_created_while_tracing(wrap):
    """The optimizer steps only on odd calls: its state is created inside a traced call."""
    tl.manual_seed(0)
    model = nn.Linear(4, 2)
    opt = tl.optim.Adam(model.parameters(), lr=1e-2)
    x = tl.randn(6, 4)

    def step(x, do_step):
        loss = model(x).pow(2).mean()
        loss.backward()
        if do_step:
            opt.step()
            opt.zero_grad()
        return loss
    step = wrap(step)
    return model, opt, [step(x, i % 2 == 1).detach() for i in range(6)]


_LOOPS = {"sched_outside": (_sched_outside, 1), "manual_lr_and_param_writes":
          (_manual_lr_and_param_writes, 1), "grad_accumulation": (_grad_accumulation, 1),
          "zero_grad_keep_and_clip": (_zero_grad_keep_and_clip, 1), "hooks": (_hooks, 1),
          "tied_and_frozen": (_tied_and_frozen, 1),
          # one program per do_step value, and the first do_step=True one again once the
          # state it created exists
          "state_created_while_tracing": (_state_created_while_tracing, 3)}


@pytest.mark.parametrize("name", list(_LOOPS))
def test_training_loop_patterns_compiled_equal_eager(name):
    loop, programs = _LOOPS[name]
    m1, o1, out1 = loop(lambda f: f)
    m2, o2, out2 = loop(tl.compile)
    assert compiler.counters["compiles"] == programs
    assert_same(out1, out2, "outputs")
    for (n, p1), p2 in zip(m1.named_parameters(), m2.parameters()):
        assert_same(p1.detach(), p2.detach(), n)
        assert_same(p1.grad, p2.grad, n + ".grad")
    assert_same(o1.state_dict(), o2.state_dict(), "optimizer")


def test_an_error_while_tracing_propagates_and_leaves_the_state_usable():
    model, opt, step = mlp_step(make_opt=lambda p: tl.optim.Adam(p, lr=1e-2))
    step = tl.compile(step)
    x = tl.randn(6, 4)
    step(x)
    step(x)
    before = copy.deepcopy((model.state_dict(), opt.state_dict()))
    with pytest.raises(RuntimeError,
                       match=r"mat1 and mat2 shapes cannot be multiplied \(6x5 and 4x8\)"):
        step(tl.randn(6, 5))
    assert_same(before, (model.state_dict(), opt.state_dict()), rtol=0, atol=0)
    # the step's zero_grad() ran before the error, as it would eagerly
    assert all(p.grad is None for p in model.parameters())
    step(x)   # entered with no .grad this time: a second program, as for a first step
    assert compiler.counters["calls"] == 2 and compiler.counters["compiles"] == 2


# --- custom autograd.Function ------------------------------------------------------------------

class _ScaleGrad(tl.autograd.Function):
    """Identity forward; backward scales the gradient by 0.25 (not the derivative of identity)."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad * 0.25


class _StraightThroughSign(tl.autograd.Function):
    """sign() forward; backward passes the gradient through where |x| <= 1 (the plain
    derivative of sign is zero everywhere)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sign()

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (x.abs() <= 1).to(grad.dtype)


def _custom_grads(compiled):
    tl.manual_seed(0)
    w = tl.randn(4, 3, requires_grad=True)
    v = tl.randn(3, 2, requires_grad=True)
    x = tl.randn(5, 4)

    def step(x):
        w.grad = v.grad = None
        h = _StraightThroughSign.apply(x @ w)
        loss = (_ScaleGrad.apply(h @ v) ** 2).sum()
        loss.backward()
        return loss

    fn = tl.compile(step) if compiled else step
    for _ in range(3):
        loss = fn(x)
    return loss.detach(), w.grad.clone(), v.grad.clone(), (w, v, x)


class _Noise(tl.autograd.Function):
    """x times noise drawn in forward and saved for backward (NOTE [ draws in a traced
    Function ] in torchlike/autograd/function.py)."""

    @staticmethod
    def forward(ctx, x):
        noise = tl.randn(x.shape)
        ctx.save_for_backward(noise)
        return x * noise

    @staticmethod
    def backward(ctx, grad):
        (noise,) = ctx.saved_tensors
        return grad * noise


def test_a_function_drawing_in_forward_draws_as_eagerly_inside_a_compiled_step():
    runs = []
    for compiled in (False, True):
        tl.manual_seed(0)
        w = tl.full((3,), 2.0, requires_grad=True)

        def step():
            w.grad = None
            out = _Noise.apply(w)
            out.sum().backward()
            return out

        fn = tl.compile(step) if compiled else step
        runs.append([(as_numpy(out), as_numpy(w.grad)) for out in (fn() for _ in range(3))])
    for (out, grad), (c_out, c_grad) in zip(*runs):
        np.testing.assert_array_equal(c_out, out)   # the same draws, call after call
        np.testing.assert_array_equal(c_grad, grad)
        np.testing.assert_allclose(c_grad, c_out / 2.0, rtol=1e-6)   # backward saw that noise
    assert not np.array_equal(runs[1][1][0], runs[1][2][0])   # fresh draws each call


def test_custom_function_backward_is_used_inside_a_compiled_step():
    eager = _custom_grads(False)
    compiled = _custom_grads(True)
    assert compiler.counters["calls"] == 2
    assert_same(eager[:3], compiled[:3], "loss, w.grad, v.grad")
    w, v, x = (t.detach().requires_grad_(True) for t in compiled[3])
    plain = ((x @ w).sign() @ v).pow(2).sum()   # the rule the custom backward replaces
    plain.backward()
    assert np.abs(as_numpy(w.grad)).max() == 0 and np.abs(as_numpy(compiled[1])).max() > 0
    assert not np.allclose(as_numpy(v.grad), as_numpy(compiled[2]))
    np.testing.assert_allclose(as_numpy(compiled[2]), 0.25 * as_numpy(v.grad), rtol=1e-5, atol=1e-6)
