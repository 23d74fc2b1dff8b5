"""torchlike.compile: what a compiled step reads and leaves behind, and the state written back
into the same objects (NOTE [ whole-step compile ] in torchlike/_compile/__init__.py)."""
import copy

import numpy as np
import pytest

import torchlike as tl
import torchlike.nn as nn
from torchlike import compiler

# fresh_counters: an autouse fixture (compiler counters and programs reset per test)
from compile_helpers import (Holder, as_numpy, assert_same, fresh_counters,  # noqa: F401
                             loop_setup, mlp_step, plain_step)


# --- values the step reads or leaves behind ----------------------------------------------------

def test_learning_rate_read_inside_the_step_is_a_number():
    def run(wrap):
        model, opt, x = loop_setup()

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
    assert_same(eager, compiled)


def test_sched_step_inside_the_step_takes_effect_at_the_next_call():
    """Documented (NOTE [ whole-step compile ]): a scheduler step inside a compiled step is
    replayed after the call, so the next call gets the new rate, as in eager mode; a Python
    number the step returns is fixed when it is traced, and compile says so."""
    def run(wrap):
        model, opt, x = loop_setup()
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
    assert_same(m1.state_dict(), m2.state_dict())


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
        np.testing.assert_array_equal(as_numpy(w_t), as_numpy(w).T)


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

    assert_same(run(lambda f: f), run(tl.compile))


def test_running_average_rebound_or_updated_in_place():
    """A step that binds a new Tensor to an attribute each call (stats.ema = ...) compiles once,
    as the in-place form does: later calls bind the program's new value there as a new Tensor,
    so a reference to the old one keeps the old value, as in eager."""
    class Stats:
        ema = None

    def run(wrap, in_place):
        model, opt, x = loop_setup()
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
                assert_same(t, value)
        return stats.ema

    for in_place in (False, True):
        compiler.reset()
        eager = run(lambda f: f, in_place)
        compiled = run(tl.compile, in_place)
        assert_same(eager, compiled)
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
        model, opt, x = loop_setup()
        holder, tracker = Holder(), _Tracker()
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
    assert_same(eager, compiled)
    assert compiler.counters["compiles"] == 1


def test_rebound_state_moved_to_another_object_is_traced_there():
    """The program binds to the places it was traced with only while they still hold the
    step's inputs: a step that now updates another object is traced again."""
    def run(wrap):
        model, opt, x = loop_setup()
        first, second = Holder(), Holder()
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

    assert_same(run(lambda f: f), run(tl.compile))
    assert compiler.counters["compiles"] == 2


# --- state written back, buffers not lost ------------------------------------------------------

def test_state_is_written_back_into_the_same_objects():
    model, opt, step = mlp_step(make_opt=lambda p: tl.optim.Adam(p, lr=1e-2))
    step = tl.compile(step)
    x = tl.randn(6, 4)
    params = list(model.parameters())
    ids = [id(p) for p in params]
    step(x)
    state_ids = {id(p): {k: id(v) for k, v in opt.state[p].items()} for p in params}
    before = [as_numpy(p).copy() for p in params]
    for _ in range(3):
        step(x)
        assert [id(p) for p in model.parameters()] == ids
        assert {id(p): {k: id(v) for k, v in opt.state[p].items()} for p in params} == state_ids
        assert all(p.grad is not None and p.grad.shape == p.shape for p in params)
    assert compiler.counters["calls"] == 3
    assert all(not np.allclose(b, as_numpy(p)) for b, p in zip(before, params))
    assert all(int(opt.state[p]["step"]) == 4 for p in params)


def test_tensors_held_before_the_compiled_steps_keep_their_values():
    model, opt, step = mlp_step()
    step = tl.compile(step)
    x = tl.randn(6, 4)
    step(x)
    p = model[0].weight
    snapshot = p.detach().clone()
    alias = p.detach()   # shares p's storage: sees the updates, as in torch
    saved = copy.deepcopy(model.state_dict())
    saved_opt = copy.deepcopy(opt.state_dict())
    expected = as_numpy(p).copy()
    expected_sd = {k: as_numpy(v).copy() for k, v in model.state_dict().items()}
    next_loss = step(x)
    next_params = [as_numpy(q).copy() for q in model.parameters()]
    for _ in range(2):
        step(x)
    assert compiler.counters["calls"] == 3
    np.testing.assert_array_equal(as_numpy(snapshot), expected)
    for k, v in saved.items():
        np.testing.assert_array_equal(as_numpy(v), expected_sd[k])
    np.testing.assert_array_equal(as_numpy(alias), as_numpy(p))
    assert not np.array_equal(as_numpy(alias), expected)
    # the copies are usable: loading them back restores the old model
    model.load_state_dict(saved)
    opt.load_state_dict(saved_opt)
    np.testing.assert_array_equal(as_numpy(p), expected)
    assert_same(step(x), next_loss, rtol=0, atol=0)   # the same step as after the snapshot
    for q, v in zip(model.parameters(), next_params):
        np.testing.assert_array_equal(as_numpy(q), v)
    assert compiler.counters["compiles"] == 1


def test_changes_to_the_model_between_calls_are_seen():
    """What compile found in a module is reused between calls only while the module's structure
    is unchanged: freezing a parameter or replacing a layer between calls is picked up."""
    def run(wrap):
        tl.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        opt = tl.optim.SGD(model.parameters(), lr=0.1)
        step = wrap(plain_step(model, opt))
        x = tl.randn(6, 4)
        losses = [step(x).detach() for _ in range(3)]
        model[0].weight.requires_grad_(False)
        losses += [step(x).detach() for _ in range(2)]
        tl.manual_seed(1)
        model[2] = nn.Linear(8, 1)   # not in the optimizer: its .grad is set, it does not move
        losses += [step(x).detach() for _ in range(2)]
        return losses, model.state_dict(), [p.grad for p in model.parameters()]

    eager, compiled = run(lambda f: f), run(tl.compile)
    assert_same(eager, compiled)
