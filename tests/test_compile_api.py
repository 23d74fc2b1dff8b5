"""torchlike.compile's interface: decorator forms and options, compiled Modules, and steps that
cannot be one program (graph breaks) (NOTE [ whole-step compile ] in
torchlike/_compile/__init__.py)."""
import copy
import warnings

import numpy as np
import pytest

import torchlike as tl
import torchlike.nn as nn
import torchlike.nn.functional as F
from torchlike import compiler

# fresh_counters: an autouse fixture (compiler counters and programs reset per test)
from compile_helpers import as_numpy, assert_same, fresh_counters  # noqa: F401


def _line_of(marker):
    """(line number, code text) of the line of this file that carries ``marker``."""
    with open(__file__) as f:
        for n, line in enumerate(f, 1):
            if marker in line and "_line_of(" not in line:
                return n, line.strip()
    raise AssertionError(marker)


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
    assert_same(expected, got)
    assert_same(expected_state, (model.state_dict(), opt.state_dict()))
    assert compiler.counters["graph_breaks"] == 1
    assert compiler.counters["compiles"] == 0 and compiler.counters["eager_calls"] == 4


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
            np.testing.assert_array_equal(as_numpy(fn(x)), [1.0, 2.0, 3.0])
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
    assert_same(eager, compiled)


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
    assert_same(out1, out2)
    assert_same(t1.model.state_dict(), t2.model.state_dict())
    assert_same(t1.opt.state_dict(), t2.opt.state_dict())


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
            assert_same(model(x), cmodel(x))
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
    assert_same(eager, compiled)
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

    assert_same(run(False), run(True))


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
