"""torchlike.compile: calls, guards and recompiles, and the replayed last call (NOTE [ whole-step
compile ] in torchlike/_compile/__init__.py, NOTE [ replaying the last call ] in
torchlike/_compile/guards.py)."""
import warnings

import numpy as np
import pytest

import torchlike as tl
import torchlike.nn as nn
from torchlike import compiler

# fresh_counters: an autouse fixture (compiler counters and programs reset per test)
from compile_helpers import (Holder, as_numpy, assert_same, fresh_counters,  # noqa: F401
                             loop_setup, mlp_step)


# --- calls, guards and recompiles -------------------------------------------------------------

def test_first_call_runs_eagerly_later_calls_compiled():
    _, _, step = mlp_step()
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
    model, opt, step = mlp_step(make_opt=lambda p: tl.optim.Adam(p, lr=1e-2))
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
        model, _, step = mlp_step()
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
    assert_same(eager[1:], compiled[1:])


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
        model, _, step = mlp_step(dropout=0.5)
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
    assert_same(eager[1:], compiled[1:])


def test_no_grad_inference_step_equals_eager():
    model, _, _ = mlp_step(dropout=0.5)
    model.eval()

    def predict(x):
        with tl.no_grad():
            return model(x).relu()

    compiled = tl.compile(predict)
    for n in (5, 5, 5, 2):
        x = tl.randn(n, 4)
        out = compiled(x)
        assert not out.requires_grad
        assert_same(predict(x), out)
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
        return [as_numpy(fn(ones)) for _ in range(4)]

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


# --- replaying the last call (NOTE [ replaying the last call ]) ------------------------------

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
        holder = Holder()
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

    assert_same(run(lambda f: f), run(tl.compile))


def test_a_steady_loop_replays_the_last_call_without_walking(monkeypatch):
    from torchlike._compile import walk
    model, opt, step = mlp_step(dropout=0.5)
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
        model, opt, step = mlp_step()
        step = wrap(step)
        return [step(data[i:i + 4]).detach() for i in range(0, 16, 2)], model.state_dict()

    eager, compiled = run(lambda f: f), run(tl.compile)
    assert_same(eager, compiled)
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
    assert_same(eager, compiled)
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

    assert_same(run(lambda f: f), run(tl.compile))


_LAST_LOSS = None   # bound, never read, by the step below


def test_a_global_the_step_only_binds_gets_each_calls_value():
    def run(wrap):
        model, opt, x = loop_setup()

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

    assert_same(run(lambda f: f), run(tl.compile))
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

    assert_same(run(lambda f: f), run(tl.compile))
    assert compiler.counters["compiles"] == 4


def test_a_counter_the_step_increments_does_not_recompile_every_call():
    """Python side effects run while the step is traced; a number the step changes keeps the
    value the trace left, and later calls (which run no Python) reuse the program."""
    global _CALLS
    _CALLS = 0
    model, opt, x = loop_setup()

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
