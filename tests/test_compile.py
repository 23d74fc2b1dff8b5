"""torchlike.compile: a whole training step as one XLA program (NOTE [ whole-step compile ] in
torchlike/_compile/__init__.py).  The main oracle is "modes agree": the same seeded setup run once
with the plain step and once with ``torchlike.compile(step)`` ends in the same parameters,
``.grad``, optimizer state, buffers and losses (to float32 rounding: XLA fuses the compiled program
differently from the eager ops)."""
import copy
import warnings

import numpy as np
import pytest

import torchlike as tl
import torchlike.nn as nn
import torchlike.nn.functional as F
from torchlike import compiler

# float32 rounding of a differently fused program, amplified a little by a few optimizer steps
RTOL, ATOL = 2e-4, 2e-5


@pytest.fixture(autouse=True)
def _fresh_counters():
    compiler.reset()
    yield
    compiler.reset()


def _np(x):
    return x.detach().numpy() if isinstance(x, tl.Tensor) else np.asarray(x)


def _assert_same(a, b, path="", rtol=RTOL, atol=ATOL):
    """Nested dicts / lists of Tensors and Python values are equal (Tensors to tolerance)."""
    if isinstance(a, tl.Tensor) or isinstance(b, tl.Tensor):
        assert isinstance(a, tl.Tensor) and isinstance(b, tl.Tensor), path
        assert a.shape == b.shape and a.dtype == b.dtype, (path, a.shape, b.shape, a.dtype, b.dtype)
        np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol, err_msg=path)
    elif isinstance(a, dict):
        assert list(a) == list(b), path
        for k in a:
            _assert_same(a[k], b[k], f"{path}.{k}", rtol, atol)
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _assert_same(x, y, f"{path}[{i}]", rtol, atol)
    elif isinstance(a, float):
        assert b == pytest.approx(a, rel=1e-6, abs=1e-12, nan_ok=True), path
    else:
        assert a == b, path


def _line_of(marker):
    """(line number, code text) of the line of this file that carries ``marker``."""
    with open(__file__) as f:
        for n, line in enumerate(f, 1):
            if marker in line and "_line_of(" not in line:
                return n, line.strip()
    raise AssertionError(marker)


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
    _assert_same(l1, l2, "losses")
    for (name, p1), p2 in zip(m1.named_parameters(), m2.parameters()):
        _assert_same(_without_key_bias(name, p1.detach()), _without_key_bias(name, p2.detach()),
                     name)
        _assert_same(_without_key_bias(name, p1.grad), _without_key_bias(name, p2.grad),
                     name + ".grad")
        if name.endswith("in_proj_bias"):
            e = p1.shape[0] // 3
            assert float(p1.grad[e:2 * e].abs().max()) < 1e-6
            assert float(p2.grad[e:2 * e].abs().max()) < 1e-6
    _assert_same(dict(m1.named_buffers()), dict(m2.named_buffers()), "buffers")
    names = [name for name, _ in m1.named_parameters()]
    s1, s2 = o1.state_dict(), o2.state_dict()
    for s in (s1, s2):
        s["state"] = {i: {k: _without_key_bias(names[i], v) if v.ndim else v
                          for k, v in entry.items()} for i, entry in s["state"].items()}
    _assert_same(s1, s2, "optimizer")
    _assert_same(lr1, lr2, "hyper-parameters")


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
        assert not np.allclose(_np(bn.running_var), 1.0)


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

def _loop_setup():
    tl.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    return model, tl.optim.SGD(model.parameters(), lr=0.1, momentum=0.9), tl.randn(6, 4)


def _plain_step(model, opt):
    def step(x):
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()
        return loss
    return step


def _sched_outside(wrap):
    model, opt, x = _loop_setup()
    sched = tl.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    step = wrap(_plain_step(model, opt))
    out = []
    for _ in range(5):
        out.append(step(x).detach())
        sched.step()   # once per "epoch", outside the compiled step
    return model, opt, out


def _manual_lr_and_param_writes(wrap):
    model, opt, x = _loop_setup()
    step = wrap(_plain_step(model, opt))
    out = []
    for i in range(5):
        out.append(step(x).detach())
        opt.param_groups[0]["lr"] = 0.1 / (i + 2)
        with tl.no_grad():
            model[0].weight.mul_(0.9)
            model[2].bias[0] = 0.5
    return model, opt, out


def _grad_accumulation(wrap):
    model, opt, x = _loop_setup()

    def step(x):   # no zero_grad: .grad accumulates over the calls, as in eager
        loss = model(x).pow(2).mean()
        loss.backward()
        return loss
    step = wrap(step)
    out = [step(x).detach() for _ in range(4)]
    opt.step()
    return model, opt, out


def _zero_grad_keep_and_clip(wrap):
    model, opt, x = _loop_setup()

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
    model, opt, x = _loop_setup()
    model[0].weight.register_hook(lambda g: g * 0.5)
    model[2].register_forward_hook(lambda mod, args, out: out * 2)
    step = wrap(_plain_step(model, opt))
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
    _assert_same(out1, out2, "outputs")
    for (n, p1), p2 in zip(m1.named_parameters(), m2.parameters()):
        _assert_same(p1.detach(), p2.detach(), n)
        _assert_same(p1.grad, p2.grad, n + ".grad")
    _assert_same(o1.state_dict(), o2.state_dict(), "optimizer")


def test_an_error_while_tracing_propagates_and_leaves_the_state_usable():
    model, opt, step = _mlp_step(make_opt=lambda p: tl.optim.Adam(p, lr=1e-2))
    step = tl.compile(step)
    x = tl.randn(6, 4)
    step(x)
    step(x)
    before = copy.deepcopy((model.state_dict(), opt.state_dict()))
    with pytest.raises(RuntimeError,
                       match=r"mat1 and mat2 shapes cannot be multiplied \(6x5 and 4x8\)"):
        step(tl.randn(6, 5))
    _assert_same(before, (model.state_dict(), opt.state_dict()), rtol=0, atol=0)
    # the step's zero_grad() ran before the error, as it would eagerly
    assert all(p.grad is None for p in model.parameters())
    step(x)   # entered with no .grad this time: a second program, as for a first step
    assert compiler.counters["calls"] == 2 and compiler.counters["compiles"] == 2


# --- values the step reads or leaves behind ----------------------------------------------------

def test_learning_rate_read_inside_the_step_is_a_number():
    def run(wrap):
        model, opt, x = _loop_setup()

        def step(x):
            opt.zero_grad()
            loss = model(x).pow(2).mean() * opt.param_groups[0]["lr"]
            loss.backward()
            opt.step()
            return loss, opt.param_groups[0]["lr"]
        step = wrap(step)
        out = []
        for i in range(4):
            out.append(step(x))
            opt.param_groups[0]["lr"] = 0.1 / (i + 2)
        return [(loss.detach(), lr) for loss, lr in out]

    eager, compiled = run(lambda f: f), run(tl.compile)
    assert all(type(lr) is float for _, lr in compiled)
    _assert_same(eager, compiled)


def test_sched_step_inside_the_step_takes_effect_at_the_next_call():
    """Documented (NOTE [ whole-step compile ]): a scheduler step inside a compiled step is
    replayed after the call, so the next call gets the new rate, as in eager mode; a Python
    number the step returns is fixed when it is traced, and compile says so."""
    def run(wrap):
        model, opt, x = _loop_setup()
        sched = tl.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)

        def step(x):
            opt.zero_grad()
            model(x).pow(2).mean().backward()
            opt.step()
            sched.step()
            return sched.get_last_lr()[0]
        step = wrap(step)
        return [(step(x), opt.param_groups[0]["lr"]) for _ in range(4)], model

    eager, m1 = run(lambda f: f)
    with pytest.warns(UserWarning, match=r"returns Python numbers \[0\.05\]: they are fixed"):
        compiled, m2 = run(tl.compile)
    assert [r for r, _ in eager] == [0.05, 0.025, 0.0125, 0.00625]
    assert [lr for _, lr in compiled] == [lr for _, lr in eager]   # after each call: the same
    assert [r for r, _ in compiled] == [0.05] * 4                 # the value when traced
    _assert_same(m1.state_dict(), m2.state_dict())


def test_view_of_a_parameter_made_before_the_steps_is_readable_after_every_call():
    tl.manual_seed(0)
    w = tl.randn(3, 2, requires_grad=True)
    w_t = w.detach().t()   # e.g. a tied or transposed weight kept as an attribute
    opt = tl.optim.SGD([w], lr=0.1)
    x = tl.randn(4, 3)

    def step(x):
        opt.zero_grad()
        loss = (x @ w).pow(2).mean() + w_t.sum()
        loss.backward()
        opt.step()
        return loss
    step = tl.compile(step)
    for _ in range(3):
        step(x)
        np.testing.assert_array_equal(_np(w_t), _np(w).T)


class _KeepsLast(nn.Module):
    """Keeps its last output as an attribute (as models that expose attention maps do)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 2)
        self.last = None

    def forward(self, x):
        out = self.lin(x)
        self.last = out.detach()
        return out


def test_tensors_the_step_leaves_behind_hold_values():
    def run(wrap):
        tl.manual_seed(0)
        model = _KeepsLast()
        opt = tl.optim.SGD(model.parameters(), lr=0.1)
        x = tl.randn(5, 4)
        history = []

        def step(x):
            opt.zero_grad()
            loss = model(x).pow(2).mean()
            loss.backward()
            opt.step()
            history.append(loss.detach())
            return loss
        step = wrap(step)
        lasts = []
        for _ in range(4):
            step(x)
            lasts.append(model.last.clone())
        return lasts, history

    _assert_same(run(lambda f: f), run(tl.compile))


def test_running_average_rebound_or_updated_in_place():
    """A step that binds a new Tensor to an attribute each call (stats.ema = ...) compiles once,
    as the in-place form does: later calls bind the program's new value there as a new Tensor,
    so a reference to the old one keeps the old value, as in eager."""
    class Stats:
        ema = None

    def run(wrap, in_place):
        model, opt, x = _loop_setup()
        stats = Stats()
        stats.ema = tl.zeros(())

        def step(x):
            opt.zero_grad()
            loss = model(x).pow(2).mean()
            loss.backward()
            opt.step()
            if in_place:
                stats.ema.mul_(0.9).add_(0.1 * loss.detach())
            else:
                stats.ema = 0.9 * stats.ema + 0.1 * loss.detach()
            return loss
        step = wrap(step)
        held = []
        for _ in range(6):
            held.append((stats.ema, stats.ema.clone()))
            step(x)
        if not in_place:   # each call made a new Tensor; the old ones are untouched
            assert len({id(t) for t, _ in held}) == 6
        for t, value in held[:-1] if in_place else held:
            if not in_place:
                _assert_same(t, value)
        return stats.ema

    for in_place in (False, True):
        compiler.reset()
        eager = run(lambda f: f, in_place)
        compiled = run(tl.compile, in_place)
        _assert_same(eager, compiled)
        assert compiler.counters["compiles"] == 1


_RUNNING = None   # the global a case below rebinds


class _Tracker(nn.Module):
    def __init__(self):
        super().__init__()
        self.ema = tl.zeros(())


@pytest.mark.parametrize("place", ["attribute", "module_attribute", "dict_item", "list_item",
                                   "closure", "global"])
def test_state_rebound_in_any_place_compiles_once(place):
    def run(wrap):
        global _RUNNING
        model, opt, x = _loop_setup()
        holder, tracker = _Holder(), _Tracker()
        holder.ema = tl.zeros(())
        box = {"ema": tl.zeros(())}
        slots = [tl.zeros(())]
        ema = tl.zeros(())
        _RUNNING = tl.zeros(())

        def step(x):
            nonlocal ema
            global _RUNNING
            opt.zero_grad()
            loss = model(x).pow(2).mean()
            loss.backward()
            opt.step()
            new = lambda old: 0.9 * old + 0.1 * loss.detach()  # noqa: E731
            if place == "attribute":
                holder.ema = new(holder.ema)
            elif place == "module_attribute":
                tracker.ema = new(tracker.ema)
            elif place == "dict_item":
                box["ema"] = new(box["ema"])
            elif place == "list_item":
                slots[0] = new(slots[0])
            elif place == "closure":
                ema = new(ema)
            else:
                _RUNNING = new(_RUNNING)
            return loss
        step = wrap(step)
        for _ in range(5):
            step(x)
        return [holder.ema, tracker.ema, box["ema"], slots[0], ema, _RUNNING]

    eager = run(lambda f: f)
    compiler.reset()
    compiled = run(tl.compile)
    _assert_same(eager, compiled)
    assert compiler.counters["compiles"] == 1


def test_rebound_state_moved_to_another_object_is_traced_there():
    """The program binds to the places it was traced with only while they still hold the
    step's inputs: a step that now updates another object is traced again."""
    def run(wrap):
        model, opt, x = _loop_setup()
        first, second = _Holder(), _Holder()
        first.ema, second.ema = tl.zeros(()), tl.full((), 5.0)
        box = {"stats": first}

        def step(x):
            opt.zero_grad()
            loss = model(x).pow(2).mean()
            loss.backward()
            opt.step()
            stats = box["stats"]
            stats.ema = 0.9 * stats.ema + 0.1 * loss.detach()
            return loss
        step = wrap(step)
        for i in range(6):
            if i == 3:
                box["stats"] = second
            step(x)
        return first.ema, second.ema

    _assert_same(run(lambda f: f), run(tl.compile))
    assert compiler.counters["compiles"] == 2


# --- calls, guards and recompiles -------------------------------------------------------------

def _mlp_step(dropout=0.0, make_opt=lambda p: tl.optim.SGD(p, lr=0.1)):
    tl.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(dropout), nn.ReLU(), nn.Linear(8, 1))
    opt = make_opt(model.parameters())
    return model, opt, _plain_step(model, opt)


def test_first_call_runs_eagerly_later_calls_compiled():
    _, _, step = _mlp_step()
    step = tl.compile(step)
    x = tl.randn(3, 4)
    step(x)
    assert dict(compiler.counters) == {"eager_calls": 1}
    step(x)
    step(x)
    assert compiler.counters["eager_calls"] == 1
    assert compiler.counters["compiles"] == 1
    assert compiler.counters["calls"] == 2


def _adam_step_in_steady_state():
    """(step, x, state): a compiled MLP step with Adam after three calls, and what returns every
    Tensor it writes, by name (parameters, their .grad, Adam's moments and step counters)."""
    model, opt, step = _mlp_step(make_opt=lambda p: tl.optim.Adam(p, lr=1e-2))
    step = tl.compile(step)
    x = tl.randn(3, 4)
    for _ in range(3):
        step(x)

    def state():
        out = {}
        for name, p in model.named_parameters():
            out[name], out[name + ".grad"] = p, p.grad
            out.update((f"{name}.{k}", v) for k, v in opt.state[p].items())
        return out
    return step, x, state


def test_written_state_and_grads_reuse_their_buffers():
    """Each Tensor a compiled step writes (parameters, .grad, Adam's moments and step counters)
    gets its new value in its old buffer: the program takes the old ones as donations, and
    each output lines up with the input it replaces (a returned loss must not take the first
    step counter's buffer)."""
    step, x, state = _adam_step_in_steady_state()

    def buffers():
        return {k: t._arr.unsafe_buffer_pointer() for k, t in state().items()}
    before = buffers()
    step(x)
    assert buffers() == before
    assert len(before) == 4 * 5


def test_arrays_held_outside_are_not_donated():
    """A jax array taken from the state (``__jax_array__``, as a bridge to jax code does) stays
    valid and keeps its values across compiled calls: only buffers nothing else holds are
    donated."""
    step, x, state = _adam_step_in_steady_state()
    held = [t.__jax_array__() for t in state().values()]
    expected = [np.array(a) for a in held]
    step(x)
    step(x)
    for a, e in zip(held, expected):
        np.testing.assert_array_equal(np.asarray(a), e)


def test_new_batch_shape_retraces_and_old_shape_reuses_its_program():
    def run(wrap):
        model, _, step = _mlp_step()
        step = wrap(step)
        a, b = tl.randn(6, 4), tl.randn(4, 4)
        counts, losses = [], []
        for x in (a, a, b, a, b):
            losses.append(step(x).detach())
            counts.append(compiler.counters["compiles"])
        return counts, losses, model.state_dict()

    eager, compiled = run(lambda f: f), run(tl.compile)
    assert compiled[0] == [0, 1, 2, 2, 2]
    assert compiler.counters["calls"] == 4
    _assert_same(eager[1:], compiled[1:])


def test_float_arguments_are_guarded_as_written():
    """A float argument is baked into the program: -0.0 and 0.0 get a program each (the sign
    of a zero product differs), and nan, which is not == itself, gets one program."""
    step = tl.compile(lambda x, s: x * s)
    x = tl.tensor([-1.0, 2.0])
    for s in (1.0, -0.0, 0.0, -0.0, 0.0):   # the first call runs eagerly
        signs = [np.copysign(1.0, v) for v in step(x, s).tolist()]
        assert signs == [np.copysign(1.0, v * s) for v in (-1.0, 2.0)], s
    assert compiler.counters["compiles"] == 2
    for _ in range(3):
        assert np.isnan(step(x, float("nan")).tolist()).all()
    assert compiler.counters["compiles"] == 3


def test_train_and_eval_modes_compile_separate_programs():
    def run(wrap):
        model, _, step = _mlp_step(dropout=0.5)
        step = wrap(step)
        x = tl.randn(6, 4)
        counts, losses = [], []
        for training in (True, True, False, True, False):
            model.train(training)
            losses.append(step(x).detach())
            counts.append(compiler.counters["compiles"])
        return counts, losses, model.state_dict()

    eager, compiled = run(lambda f: f), run(tl.compile)
    assert compiled[0] == [0, 1, 2, 2, 2]
    _assert_same(eager[1:], compiled[1:])


def test_no_grad_inference_step_equals_eager():
    model, _, _ = _mlp_step(dropout=0.5)
    model.eval()

    def predict(x):
        with tl.no_grad():
            return model(x).relu()

    compiled = tl.compile(predict)
    for n in (5, 5, 5, 2):
        x = tl.randn(n, 4)
        out = compiled(x)
        assert not out.requires_grad
        _assert_same(predict(x), out)
    assert compiler.counters["compiles"] == 2
    assert all(p.grad is None for p in model.parameters())


def test_dropout_is_fresh_on_every_call_and_reproducible_from_the_seed():
    def masks(compiled):
        tl.manual_seed(1)
        drop = nn.Dropout(0.5)
        ones = tl.ones(4, 16)

        def apply(x):
            return drop(x)
        fn = tl.compile(apply) if compiled else apply
        return [_np(fn(ones)) for _ in range(4)]

    first, second, eager = masks(True), masks(True), masks(False)
    assert compiler.counters["calls"] == 6
    for i in range(1, 4):   # every compiled call draws a new mask
        assert not np.array_equal(first[i], first[i - 1])
    for a, b, c in zip(first, second, eager):   # same seed: same sequence, as eager
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)


@pytest.mark.parametrize("counts_calls", [False, True])
def test_recompile_warning_past_the_cache_size_limit(monkeypatch, counts_calls):
    """Past config.cache_size_limit programs each new one warns.  A step that changes a global
    number of its own (``counts_calls``) is filed under the number's value before and after
    its trace (NOTE [ whole-step compile ]); that is still one program towards the limit."""
    monkeypatch.setattr(compiler.config, "cache_size_limit", 2)

    def f(x):
        global _CALLS
        if counts_calls:
            _CALLS += 1
        return x * 2
    f = tl.compile(f)
    f(tl.ones(1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f(tl.ones(1))
        f(tl.ones(1))
        f(tl.ones(2))
        f(tl.ones(2))
    with pytest.warns(UserWarning, match="recompiled 2 times.*cache_size_limit = 2"):
        f(tl.ones(3))
    assert compiler.counters["compiles"] == 3


# --- graph breaks -----------------------------------------------------------------------------

def _break_item(model, opt, x):
    opt.zero_grad()
    loss = model(x).pow(2).mean()
    if loss.item() > 1:  # BREAK-item
        loss = loss / 2
    loss.backward()
    opt.step()
    return loss


def _break_numpy(model, opt, x):   # breaks after the optimizer wrote the state
    opt.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    return loss.detach() * float(loss.detach().numpy())  # BREAK-numpy


def _break_nonzero(model, opt, x):
    opt.zero_grad()
    out = model(x)
    idx = out.nonzero()  # BREAK-nonzero
    loss = out.pow(2).mean() + idx.shape[0]
    loss.backward()
    opt.step()
    return loss


_BREAKS = {"item": _break_item, "numpy": _break_numpy, "nonzero": _break_nonzero}


def _break_setup():
    tl.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    opt = tl.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    return model, opt, tl.randn(6, 4) * 3


@pytest.mark.parametrize("kind", list(_BREAKS))
def test_graph_break_with_fullgraph_raises_naming_the_line(kind):
    model, opt, x = _break_setup()
    step = tl.compile(_BREAKS[kind], fullgraph=True)
    step(model, opt, x)   # the first call is eager
    with pytest.raises(compiler.Unsupported) as info:
        step(model, opt, x)
    lineno, code = _line_of(f"# BREAK-{kind}")
    message = str(info.value)
    assert f"line {lineno} of {__file__}" in message
    assert code in message
    assert "torchlike.where" in message and "fullgraph=False" in message


@pytest.mark.parametrize("kind", list(_BREAKS))
def test_graph_break_without_fullgraph_warns_once_and_runs_eagerly(kind):
    fn = _BREAKS[kind]
    model, opt, x = _break_setup()
    expected = [fn(model, opt, x).detach() for _ in range(4)]
    expected_state = (copy.deepcopy(model.state_dict()), copy.deepcopy(opt.state_dict()))

    model, opt, x = _break_setup()
    step = tl.compile(fn)
    got = [step(model, opt, x).detach()]
    lineno, _ = _line_of(f"# BREAK-{kind}")
    with pytest.warns(UserWarning, match=f"line {lineno} ") as record:
        got.append(step(model, opt, x).detach())
    assert len([w for w in record if w.category is UserWarning]) == 1
    assert record[0].filename == __file__   # points at the caller's line
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got += [step(model, opt, x).detach() for _ in range(2)]
    _assert_same(expected, got)
    _assert_same(expected_state, (model.state_dict(), opt.state_dict()))
    assert compiler.counters["graph_breaks"] == 1
    assert compiler.counters["compiles"] == 0 and compiler.counters["eager_calls"] == 4


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


def test_custom_function_backward_is_used_inside_a_compiled_step():
    eager = _custom_grads(False)
    compiled = _custom_grads(True)
    assert compiler.counters["calls"] == 2
    _assert_same(eager[:3], compiled[:3], "loss, w.grad, v.grad")
    w, v, x = (t.detach().requires_grad_(True) for t in compiled[3])
    plain = ((x @ w).sign() @ v).pow(2).sum()   # the rule the custom backward replaces
    plain.backward()
    assert np.abs(_np(w.grad)).max() == 0 and np.abs(_np(compiled[1])).max() > 0
    assert not np.allclose(_np(v.grad), _np(compiled[2]))
    np.testing.assert_allclose(_np(compiled[2]), 0.25 * _np(v.grad), rtol=1e-5, atol=1e-6)


# --- decorator forms, options, Modules ---------------------------------------------------------

def test_decorator_forms_and_options():
    w = tl.ones(3)

    @tl.compile
    def plain(x):
        return x * w + 1

    @tl.compile(fullgraph=True)
    def full(x):
        return x * w + 1

    x = tl.arange(3.0)
    for fn in (plain, full, tl.compile(lambda x: x * w + 1, mode="reduce-overhead"),
               tl.compile(mode="max-autotune", dynamic=True)(lambda x: x * w + 1),
               tl.compile(lambda x: x * w + 1, dynamic=False, mode="default")):
        for _ in range(3):
            np.testing.assert_array_equal(_np(fn(x)), [1.0, 2.0, 3.0])
    assert plain.__name__ == "plain" and full.__name__ == "full"
    assert tl.compile(_break_item, disable=True) is _break_item
    assert compiler.counters["compiles"] == 5

    @tl.compile(fullgraph=True)
    def bad(x):
        return x * x.sum().item()
    bad(x)   # eager: fine
    with pytest.raises(compiler.Unsupported):
        bad(x)


def test_bad_arguments_raise_torchs_errors():
    import torch

    def f(x):
        return x

    for kwargs in (dict(mode="bogus"), dict(mode="default", options={"a": 1})):
        with pytest.raises(RuntimeError) as expected:
            torch.compile(f, **kwargs)
        with pytest.raises(RuntimeError) as got:
            tl.compile(f, **kwargs)
        assert str(got.value) == str(expected.value)
    with pytest.raises(RuntimeError, match="Invalid backend: 'nope'"):   # torch: InvalidBackend
        torch.compile(f, backend="nope")
    with pytest.raises(RuntimeError, match="Invalid backend: 'nope'"):
        tl.compile(f, backend="nope")
    with pytest.raises(Exception) as expected:
        torch.compile(3)
    with pytest.raises(type(expected.value), match=r"A callable function is expected, but "
                       r"<class 'int'> is provided\."):
        tl.compile(3)


def test_compiled_loss_function_backpropagates_outside():
    def run(wrap):
        tl.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
        x = tl.randn(5, 3)
        loss_fn = wrap(lambda x: model(x).pow(2).mean())
        for _ in range(3):
            loss = loss_fn(x)
            loss.backward()
        return loss.detach(), [p.grad for p in model.parameters()]

    eager = run(lambda f: f)
    # a compiled program's outputs have no history: such a function runs eagerly, with a warning
    with pytest.warns(UserWarning, match="returns tensors that require grad without running "
                                         "backward itself"):
        compiled = run(tl.compile)
    _assert_same(eager, compiled)


class _Trainer:
    def __init__(self):
        tl.manual_seed(0)
        self.model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.2), nn.Linear(8, 2))
        self.opt = tl.optim.AdamW(self.model.parameters(), lr=1e-2)
        self.sched = tl.optim.lr_scheduler.CosineAnnealingLR(self.opt, T_max=10)

    def train_step(self, batch):
        self.opt.zero_grad()
        loss = F.cross_entropy(self.model(batch["x"]), batch["y"])
        loss.backward()
        self.opt.step()
        self.sched.step()
        return {"loss": loss.detach()}


def test_compiled_bound_method_with_dict_batch_equals_eager():
    def run(compiled):
        trainer = _Trainer()
        batch = {"x": tl.randn(6, 4), "y": tl.randint(0, 2, (6,))}
        step = tl.compile(trainer.train_step) if compiled else trainer.train_step
        return [step(batch) for _ in range(5)], trainer

    (out1, t1), (out2, t2) = run(False), run(True)
    assert compiler.counters["compiles"] == 1
    _assert_same(out1, out2)
    _assert_same(t1.model.state_dict(), t2.model.state_dict())
    _assert_same(t1.opt.state_dict(), t2.opt.state_dict())


def test_compile_module_forward_for_inference():
    tl.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Dropout(0.3),
                          nn.Linear(8, 2))
    model.eval()
    cmodel = tl.compile(model)
    assert cmodel._orig_mod is model
    with tl.no_grad():
        for _ in range(3):
            x = tl.randn(5, 4)
            _assert_same(model(x), cmodel(x))
    assert compiler.counters["compiles"] == 1 and compiler.counters["calls"] == 2
    assert cmodel.training is False


def test_compile_module_in_train_mode_under_no_grad_updates_buffers_and_draws_fresh_masks():
    def run(compiled):
        tl.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Dropout(0.5))
        fn = tl.compile(model) if compiled else model
        with tl.no_grad():
            outs = [fn(tl.ones(5, 4) * i) for i in range(4)]
        return outs, dict(model.named_buffers())

    eager, compiled = run(False), run(True)
    assert compiler.counters["calls"] == 3
    _assert_same(eager, compiled)
    assert int(compiled[1]["1.num_batches_tracked"]) == 4


def test_compiled_module_trains_through_autograd_like_the_module():
    """``model = torchlike.compile(model)`` in an ordinary loop: the gradients are the eager
    ones (a call autograd must record runs the module itself)."""
    def run(compiled):
        tl.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
        fn = tl.compile(model) if compiled else model
        opt = tl.optim.SGD(model.parameters(), lr=0.1)
        x = tl.randn(6, 4)
        for _ in range(3):
            opt.zero_grad()
            fn(x).pow(2).mean().backward()
            opt.step()
        return [(p.detach(), p.grad) for p in model.parameters()]

    _assert_same(run(False), run(True))


def test_compiled_module_repr_matches_torch():
    import torch
    ours = tl.compile(tl.nn.Sequential(tl.nn.Linear(2, 3), tl.nn.ReLU()))
    theirs = torch.compile(torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU()))
    assert repr(ours) == repr(theirs)
    assert repr(tl.compile(tl.nn.Linear(2, 3))) == repr(torch.compile(torch.nn.Linear(2, 3)))


def test_compiled_module_is_a_module_like_torchs():
    import torch
    ours, theirs = (lib.compile(lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.ReLU()))
                    for lib in (tl, torch))
    assert isinstance(ours, tl.nn.Module) == isinstance(theirs, torch.nn.Module)
    assert list(ours.state_dict()) == list(theirs.state_dict())   # '_orig_mod.0.weight', ...
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert len(ours) == len(theirs)
    assert ours.eval() is ours and theirs.eval() is theirs
    assert ours.training is False and ours._orig_mod.training is False


# --- state written back, buffers not lost ------------------------------------------------------

def test_state_is_written_back_into_the_same_objects():
    model, opt, step = _mlp_step(make_opt=lambda p: tl.optim.Adam(p, lr=1e-2))
    step = tl.compile(step)
    x = tl.randn(6, 4)
    params = list(model.parameters())
    ids = [id(p) for p in params]
    step(x)
    state_ids = {id(p): {k: id(v) for k, v in opt.state[p].items()} for p in params}
    before = [_np(p).copy() for p in params]
    for _ in range(3):
        step(x)
        assert [id(p) for p in model.parameters()] == ids
        assert {id(p): {k: id(v) for k, v in opt.state[p].items()} for p in params} == state_ids
        assert all(p.grad is not None and p.grad.shape == p.shape for p in params)
    assert compiler.counters["calls"] == 3
    assert all(not np.allclose(b, _np(p)) for b, p in zip(before, params))
    assert all(int(opt.state[p]["step"]) == 4 for p in params)


def test_tensors_held_before_the_compiled_steps_keep_their_values():
    model, opt, step = _mlp_step()
    step = tl.compile(step)
    x = tl.randn(6, 4)
    step(x)
    p = model[0].weight
    snapshot = p.detach().clone()
    alias = p.detach()   # shares p's storage: sees the updates, as in torch
    saved = copy.deepcopy(model.state_dict())
    saved_opt = copy.deepcopy(opt.state_dict())
    expected = _np(p).copy()
    expected_sd = {k: _np(v).copy() for k, v in model.state_dict().items()}
    next_loss = step(x)
    next_params = [_np(q).copy() for q in model.parameters()]
    for _ in range(2):
        step(x)
    assert compiler.counters["calls"] == 3
    np.testing.assert_array_equal(_np(snapshot), expected)
    for k, v in saved.items():
        np.testing.assert_array_equal(_np(v), expected_sd[k])
    np.testing.assert_array_equal(_np(alias), _np(p))
    assert not np.array_equal(_np(alias), expected)
    # the copies are usable: loading them back restores the old model
    model.load_state_dict(saved)
    opt.load_state_dict(saved_opt)
    np.testing.assert_array_equal(_np(p), expected)
    _assert_same(step(x), next_loss, rtol=0, atol=0)   # the same step as after the snapshot
    for q, v in zip(model.parameters(), next_params):
        np.testing.assert_array_equal(_np(q), v)
    assert compiler.counters["compiles"] == 1


def test_changes_to_the_model_between_calls_are_seen():
    """What compile found in a module is reused between calls only while the module's structure
    is unchanged: freezing a parameter or replacing a layer between calls is picked up."""
    def run(wrap):
        tl.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        opt = tl.optim.SGD(model.parameters(), lr=0.1)
        step = wrap(_plain_step(model, opt))
        x = tl.randn(6, 4)
        losses = [step(x).detach() for _ in range(3)]
        model[0].weight.requires_grad_(False)
        losses += [step(x).detach() for _ in range(2)]
        tl.manual_seed(1)
        model[2] = nn.Linear(8, 1)   # not in the optimizer: its .grad is set, it does not move
        losses += [step(x).detach() for _ in range(2)]
        return losses, model.state_dict(), [p.grad for p in model.parameters()]

    eager, compiled = run(lambda f: f), run(tl.compile)
    _assert_same(eager, compiled)


# --- replaying the last call (NOTE [ replaying the last call ]) ------------------------------

class _Holder:
    pass


_GLOBAL_SCALE = None   # rebound by one of the cases below


def _between_calls_cases():
    """name -> change(model, opt, holder, box): something done between compiled calls that a
    call must see although it reuses the last call's state when nothing changed."""
    def rebind_global(model, opt, holder, box):
        global _GLOBAL_SCALE
        _GLOBAL_SCALE = tl.full((), 3.0)

    def rebind_closure(model, opt, holder, box):
        box["bias"] = tl.full((), -1.0)

    def rebind_attribute(model, opt, holder, box):
        holder.offset = tl.full((1,), 0.5)

    def append_to_a_list(model, opt, holder, box):
        box["extra"].append(tl.full((), 0.25))

    def add_param_group(model, opt, holder, box):
        opt.add_param_group({"params": [holder.free], "lr": 0.2})

    def replace_optimizer_state(model, opt, holder, box):
        opt.state[model[0].weight]["momentum_buffer"] = tl.zeros_like(model[0].weight)

    def grads_to_none(model, opt, holder, box):
        model[2].bias.grad = None

    def freeze_by_detach_(model, opt, holder, box):
        model[2].weight.detach_()

    def new_lr_type(model, opt, holder, box):
        opt.param_groups[0]["lr"] = 1   # an int now

    def flag_switch(model, opt, holder, box):
        opt.param_groups[0]["nesterov"] = True

    def replace_data(model, opt, holder, box):
        model[0].bias.data = tl.full((8,), 0.1)

    return {f.__name__: f for f in (
        rebind_global, rebind_closure, rebind_attribute, append_to_a_list, add_param_group,
        replace_optimizer_state, grads_to_none, freeze_by_detach_, new_lr_type, flag_switch,
        replace_data)}


@pytest.mark.parametrize("case", list(_between_calls_cases()))
def test_changes_between_calls_are_seen_by_the_replayed_call(case):
    change = _between_calls_cases()[case]

    def run(wrap):
        global _GLOBAL_SCALE
        tl.manual_seed(0)
        _GLOBAL_SCALE = tl.full((), 1.0)
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        opt = tl.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        holder = _Holder()
        holder.offset = tl.zeros(1)
        holder.free = tl.zeros(1, requires_grad=True)
        box = {"bias": tl.zeros(()), "extra": [tl.zeros(())]}

        def step(x):
            opt.zero_grad()
            out = model(x) * _GLOBAL_SCALE + holder.offset + box["bias"] + holder.free
            loss = out.pow(2).mean() + sum(box["extra"])
            loss.backward()
            opt.step()
            return loss
        step = wrap(step)
        x = tl.randn(6, 4)
        losses = [step(x).detach() for _ in range(3)]
        change(model, opt, holder, box)
        losses += [step(x).detach() for _ in range(3)]
        return (losses, model.state_dict(), [p.grad for p in model.parameters()],
                holder.free.detach(), holder.free.grad)

    _assert_same(run(lambda f: f), run(tl.compile))


def test_a_steady_loop_replays_the_last_call_without_walking(monkeypatch):
    from torchlike._compile import walk
    model, opt, step = _mlp_step(dropout=0.5)
    step = tl.compile(step)
    walks = []
    real = walk.find_state

    def counted(*args, locate=False):
        walks.append(locate)
        return real(*args, locate=locate)
    monkeypatch.setattr(walk, "find_state", counted)
    for _ in range(6):
        step(tl.randn(3, 4))   # a new batch Tensor each call
    # call 1 runs eagerly; call 2 finds its state (a walk) and traces (with a locating walk
    # before and after); the later calls replay
    assert compiler.counters["compiles"] == 1
    assert walks.count(False) == 1 and walks.count(True) == 2
    step(tl.randn(5, 4))   # a new shape: the sealed program refuses it, and it is traced anew
    assert compiler.counters["compiles"] == 2


def test_slices_of_a_dataset_tensor_are_inputs_not_baked_in():
    """x[i:i + n] of a tensor that does not require grad enters by value: every slice gives its
    own values from one program (a slice's position must not be baked in)."""
    def run(wrap):
        tl.manual_seed(0)
        data = tl.randn(20, 4)
        model, opt, step = _mlp_step()
        step = wrap(step)
        return [step(data[i:i + 4]).detach() for i in range(0, 16, 2)], model.state_dict()

    eager, compiled = run(lambda f: f), run(tl.compile)
    _assert_same(eager, compiled)
    assert compiler.counters["compiles"] == 1


def test_views_of_parameters_as_arguments_follow_their_root():
    """A view of a tensor that requires grad enters as its storage root, with the view's steps
    guarded: the gradient reaches the root, and another view is another program."""
    def run(wrap):
        tl.manual_seed(0)
        w = tl.randn(6, 3, requires_grad=True)
        opt = tl.optim.SGD([w], lr=0.1)

        def step(rows, x):
            opt.zero_grad()
            loss = (x @ rows.t()).pow(2).mean()
            loss.backward()
            opt.step()
            return loss
        step = wrap(step)
        x = tl.randn(5, 3)
        losses = [step(w[i:i + 2], x).detach() for i in (0, 0, 2, 0, 4, 2)]
        return losses, w.detach(), w.grad

    eager, compiled = run(lambda f: f), run(tl.compile)
    _assert_same(eager, compiled)
    assert compiler.counters["compiles"] == 3


def test_writes_into_an_argument_view_reach_its_root():
    def run(wrap):
        buf = tl.zeros(4, 3)
        w = tl.ones(3, requires_grad=True)
        opt = tl.optim.SGD([w], lr=0.1)

        def step(row):
            opt.zero_grad()
            loss = (row + w).pow(2).sum()
            loss.backward()
            opt.step()
            row.add_(loss.detach())
            return loss
        step = wrap(step)
        for i in (0, 1, 2, 1):
            step(buf[i])
        return buf, w.detach()

    _assert_same(run(lambda f: f), run(tl.compile))


_LAST_LOSS = None   # bound, never read, by the step below


def test_a_global_the_step_only_binds_gets_each_calls_value():
    def run(wrap):
        model, opt, x = _loop_setup()

        def step(x):
            global _LAST_LOSS
            opt.zero_grad()
            loss = model(x).pow(2).mean()
            loss.backward()
            opt.step()
            _LAST_LOSS = loss.detach() * 2
            return loss
        step = wrap(step)
        seen = []
        for _ in range(4):
            step(x)
            seen.append(_LAST_LOSS.clone())
        return seen

    _assert_same(run(lambda f: f), run(tl.compile))
    assert compiler.counters["compiles"] == 1


_SCALE = 1.0    # a Python number a step reads (changed by the test below)
_CALLS = 0      # a Python counter a step increments


def test_python_numbers_the_step_reads_are_guarded():
    """The trace bakes in the Python numbers the step reads: a global, a closure variable, a
    module attribute (a dropout's p).  Changing one between calls compiles for the new value,
    as eager would compute with it."""
    def run(wrap):
        global _SCALE
        _SCALE = 1.0
        tl.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.0), nn.ReLU(), nn.Linear(8, 1))
        opt = tl.optim.SGD(model.parameters(), lr=0.05)
        offset = 0

        def step(x):
            opt.zero_grad()
            loss = (model(x) * _SCALE + offset).pow(2).mean()
            loss.backward()
            opt.step()
            return loss
        step = wrap(step)
        x = tl.randn(6, 4)
        losses = [step(x).detach() for _ in range(3)]
        _SCALE = 2.5
        losses += [step(x).detach() for _ in range(2)]
        offset = 1
        losses += [step(x).detach() for _ in range(2)]
        model[1].p = 0.5
        losses += [step(x).detach() for _ in range(2)]
        return losses, model.state_dict()

    _assert_same(run(lambda f: f), run(tl.compile))
    assert compiler.counters["compiles"] == 4


def test_a_counter_the_step_increments_does_not_recompile_every_call():
    """Python side effects run while the step is traced; a number the step changes keeps the
    value the trace left, and later calls (which run no Python) reuse the program."""
    global _CALLS
    _CALLS = 0
    model, opt, x = _loop_setup()

    def step(x):
        global _CALLS
        _CALLS += 1
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()
        return loss
    step = tl.compile(step)
    for _ in range(5):
        step(x)
    assert compiler.counters["compiles"] == 1
    assert _CALLS == 2   # the eager first call and the trace
