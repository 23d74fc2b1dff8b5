"""Robustness: a compiled step raises where eager code raises, leaves the state as it was when
it does, and keeps PyTorch's ``.grad`` semantics (one small model, compiled once per setting)."""
import re

import numpy as np
import pytest
import torch

import torchlike as tl
import torchlike.nn.functional as F


class Step:
    """An embedding, a linear layer and Adam, with cross-entropy on class indices."""

    def __init__(self, lib, compile=False):
        lib.manual_seed(0)
        self.lib = lib
        self.emb, self.lin = lib.nn.Embedding(10, 4), lib.nn.Linear(4, 3)
        if lib is torch:   # the same initial weights in both libraries
            self.emb.weight.data = torch.tensor(_TL.emb.weight.tolist())
            self.lin.weight.data = torch.tensor(_TL.lin.weight.tolist())
            self.lin.bias.data = torch.tensor(_TL.lin.bias.tolist())
        self.params = [self.emb.weight, self.lin.weight, self.lin.bias]
        self.opt = lib.optim.Adam(self.params, lr=0.1)
        self.step = lib.compile(self._step) if compile else self._step

    def _step(self, x, y):
        self.opt.zero_grad()
        loss = self.lib.nn.functional.cross_entropy(self.lin(self.emb(x)), y)
        loss.backward()
        self.opt.step()
        return loss.detach()

    def state(self):
        """The parameters and the optimizer's state."""
        st = [p.detach().clone() for p in self.params]
        st += [v.clone() for p in self.params for v in self.opt.state[p].values()]
        return st

    def failing(self, x, y):
        """Run a step that raises; return its exception and which .grad are None after it."""
        with pytest.raises(Exception) as info:
            self.step(self.lib.tensor(x), self.lib.tensor(y))
        return info.value, [p.grad is None for p in self.params]


_TL = Step(tl)
X, Y = [1, 2, 3], [0, 1, 2]
BAD = {"embedding index": ([1, 2, 10], Y, IndexError, "index out of range in self"),
       "negative index": ([-1, 2, 3], Y, IndexError, "index out of range in self"),
       "target": (X, [0, 1, 3], IndexError, "Target 3 is out of bounds."),
       "negative target": (X, [0, -5, 1], IndexError, "Target -5 is out of bounds.")}


@pytest.fixture(scope="module")
def compiled():
    s = Step(tl, compile=True)
    for _ in range(3):   # eager, then traced, then replayed
        s.step(tl.tensor(X), tl.tensor(Y))
    return s


def _equal(a, b):
    return len(a) == len(b) and all(tl.equal(u, v) for u, v in zip(a, b))


def _eager_failure(x, y):
    """What PyTorch's eager step leaves after a step went well and the next one raised: the
    exception, and which .grad are None (zero_grad ran, backward did not)."""
    s = Step(torch)
    s.step(torch.tensor(X), torch.tensor(Y))
    return s.failing(x, y)


@pytest.mark.parametrize("case", BAD)
def test_out_of_range_index_raises_and_changes_nothing(compiled, case):
    x, y, error, message = BAD[case]
    ref, ref_none = _eager_failure(x, y)
    assert type(ref) is error and str(ref) == message
    before = compiled.state()
    calls = tl.compiler.counters["calls"]
    got, got_none = compiled.failing(x, y)
    assert type(got) is error and str(got) == message
    assert tl.compiler.counters["calls"] == calls + 1   # it ran as the compiled program
    assert _equal(compiled.state(), before) and got_none == ref_none
    compiled.step(tl.tensor(X), tl.tensor(Y))   # and the step goes on from there
    assert not _equal(compiled.state(), before)


WRONG = {"float indices": (lambda T: T.tensor([1., 2., 3.]), lambda T: T.tensor(Y)),
         "short target": (lambda T: T.tensor(X), lambda T: T.tensor([0, 1])),
         "float target": (lambda T: T.tensor(X), lambda T: T.tensor([0., 1., 2.]))}


@pytest.mark.parametrize("case", WRONG)
def test_wrong_inputs_raise_as_eager(compiled, case):
    """A call with new input types traces again and raises PyTorch's error, its state as
    eager code leaves it."""
    x, y = (f(torch) for f in WRONG[case])
    ref, ref_none = _eager_failure(x.tolist(), y.tolist())
    compiled.step(tl.tensor(X), tl.tensor(Y))
    before = compiled.state()
    got, got_none = compiled.failing(x.tolist(), y.tolist())
    assert type(got) is type(ref) and str(got) == str(ref)
    assert _equal(compiled.state(), before) and got_none == ref_none


def test_index_checks_can_be_switched_off(monkeypatch):
    s = Step(tl, compile=True)
    monkeypatch.setattr(tl.compiler.config, "index_checks", False)
    for _ in range(3):
        s.step(tl.tensor(X), tl.tensor(Y))
    s.step(tl.tensor([1, 2, 10]), tl.tensor(Y))   # XLA clamps the index: no error


def test_compiled_step_matches_eager_and_torch():
    """The checked program trains as eager torchlike and PyTorch do."""
    runs = [Step(torch), Step(tl), Step(tl, compile=True)]
    for _ in range(4):
        for r in runs:
            r.step(r.lib.tensor(X), r.lib.tensor(Y))
    ref = runs[0].state()
    for r in runs[1:]:
        for a, b in zip(r.state(), ref):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("lib", [torch, tl, "compiled"], ids=["torch", "eager", "compiled"])
def test_a_kept_grad_keeps_its_values(lib):
    """zero_grad() then backward gives each parameter a new .grad Tensor: one the caller kept
    from the step before keeps its values (a compiled step too)."""
    s = Step(tl, compile=True) if lib == "compiled" else Step(lib)
    T = s.lib
    for _ in range(3):
        s.step(T.tensor(X), T.tensor(Y))
    kept = s.lin.weight.grad
    values = kept.clone()
    s.step(T.tensor(X), T.tensor(Y))
    assert s.lin.weight.grad is not kept
    assert T.equal(kept, values)
    assert not T.equal(s.lin.weight.grad, values)


def test_accumulated_grad_stays_the_same_tensor():
    """Without zero_grad, backward accumulates into the same .grad Tensor (compiled too)."""
    p = tl.nn.Parameter(tl.ones(3))

    def step():
        (p * p).sum().backward()

    c = tl.compile(step)
    for _ in range(3):
        c()
    g = p.grad
    c()
    assert p.grad is g and p.grad.tolist() == [8., 8., 8.]


@pytest.mark.parametrize("grads", ["accumulated", "None before each call"])
def test_a_failing_step_leaves_the_gradients_as_eager_does(grads):
    """A step that raises leaves each .grad as PyTorch's eager step leaves it, where the step
    adds to gradients kept from before and where it makes them (zero_grad outside it)."""
    def run(lib, compile):
        lib.manual_seed(0)
        emb = lib.nn.Embedding(10, 4)
        emb.weight.data = lib.tensor(_TL.emb.weight.tolist())

        def step(x):
            emb(x).sum().backward()
        step = lib.compile(step) if compile else step
        for x in (X, X, X, [1, 2, 10]):   # eager, traced, replayed; then out of range
            if grads != "accumulated":
                emb.weight.grad = None
            try:
                step(lib.tensor(x))
            except IndexError as e:
                error = str(e)
        g = emb.weight.grad
        return error, None if g is None else g.tolist()
    assert run(tl, True) == run(tl, False) == run(torch, False)


def _F(t):
    return (torch if isinstance(t, torch.Tensor) else tl).nn.functional


INDEX_OPS = {"getitem": lambda w, i: w[i], "index_select": lambda w, i: w.index_select(0, i),
             "gather": lambda w, i: w.gather(0, i[:, None].expand(-1, 3)),
             "take": lambda w, i: w.take(i * 4),
             "one_hot": lambda w, i: _F(w).one_hot(i, 5).to(w.dtype) @ w,
             "multi_margin_loss": lambda w, i: _F(w).multi_margin_loss(w.t(), i)}


@pytest.mark.parametrize("op", INDEX_OPS)
def test_index_ops_check_their_indices(op):
    """x[i], index_select, gather, take, one_hot, multi_margin_loss: an index out of range
    raises PyTorch's error from the compiled step too, with the parameter unchanged."""
    f = INDEX_OPS[op]
    w = tl.nn.Parameter(tl.randn(5, 3))
    opt = tl.optim.SGD([w], lr=0.1)

    def step(i):
        opt.zero_grad()
        f(w, i).sum().backward()
        opt.step()
    compiled = tl.compile(step)
    for _ in range(3):
        compiled(tl.tensor([0, 1, 2]))
    before = w.detach().clone()
    for bad in ([0, 1, 7], [0, -9, 1]):
        with pytest.raises(Exception) as ref:
            f(torch.zeros(5, 3), torch.tensor(bad))
        with pytest.raises(type(ref.value), match=re.escape(str(ref.value))):
            compiled(tl.tensor(bad))
        assert tl.equal(w, before)


NESTED = {"checkpoint": lambda emb, x: tl.utils.checkpoint.checkpoint(emb, x, use_reentrant=False),
          "vmap": lambda emb, x: tl.func.vmap(emb)(x[None])[0],
          "empty index": lambda emb, x: emb(x[:0]).sum() + emb(x)}


@pytest.mark.parametrize("wrap", NESTED)
def test_indices_inside_transforms_and_empty_ones(wrap):
    """An embedding inside checkpoint or vmap in a compiled step (its check cannot leave the
    transform, so it is skipped there), or looking up no index at all, trains as eager does."""
    def run(compiled):
        tl.manual_seed(0)
        emb = tl.nn.Embedding(10, 4)
        opt = tl.optim.SGD(emb.parameters(), lr=0.1)

        def step(x):
            opt.zero_grad()
            NESTED[wrap](emb, x).pow(2).sum().backward()
            opt.step()
        fn = tl.compile(step) if compiled else step
        for _ in range(3):
            fn(tl.tensor([1, 2, 3]))
        return emb.weight.detach()
    np.testing.assert_allclose(run(True).numpy(), run(False).numpy(), rtol=1e-6)


def test_a_captured_index_changed_in_place_is_checked_again():
    """Checks that held for an array are not evaluated again for the same array; writing into a
    captured Tensor gives it a new array, which is checked (NOTE [ checks in a compiled step ])."""
    s = Step(tl, compile=True)
    x, y = tl.tensor(X), tl.tensor(Y)
    step = tl.compile(lambda: s._step(x, y))
    for _ in range(3):
        step()
    program = list(step._programs.values())[-1]
    flags, checks, reads = program.check
    evaluated = []
    program.check = (lambda *a: evaluated.append(1) or flags(*a), checks, reads)
    step()
    assert evaluated == []   # the same arrays as the last call's
    before = s.state()
    y[1] = 3
    with pytest.raises(IndexError, match="Target 3 is out of bounds."):
        step()
    assert evaluated == [1] and _equal(s.state(), before)
    y[1] = 1
    step()
    assert evaluated == [1, 1] and not _equal(s.state(), before)


def test_a_check_of_a_computed_index_selects_the_old_state(compiled):
    """An index the step is given is checked before the program runs, on the host; one the
    model computes (here from a product) is checked inside the program, whose outputs keep the
    old state where it fails (NOTE [ checks in a compiled step ])."""
    assert list(compiled.step._programs.values())[-1].check is not None
    tl.manual_seed(0)
    emb, lin = tl.nn.Embedding(10, 4), tl.nn.Linear(4, 3)
    opt = tl.optim.Adam([*emb.parameters(), *lin.parameters()], lr=0.1)

    def step(x, offset):
        opt.zero_grad()
        emb(lin(emb(x)).argmax(-1) + offset).sum().backward()
        opt.step()
    in_program = tl.compile(step)
    for _ in range(3):
        in_program(tl.tensor(X), tl.tensor(0))
    program = list(in_program._programs.values())[-1]
    assert program.check is None   # (the computed index's check holds a product)
    before = [p.detach().clone() for p in (*emb.parameters(), *lin.parameters())]
    with pytest.raises(IndexError, match="index out of range in self"):
        in_program(tl.tensor(X), tl.tensor(9))
    assert _equal([p.detach() for p in (*emb.parameters(), *lin.parameters())], before)
    in_program(tl.tensor(X), tl.tensor(0))
    assert not _equal([p.detach() for p in (*emb.parameters(), *lin.parameters())], before)


def test_checks_evaluated_on_the_host_as_xla_evaluates_them():
    """The host's evaluation of a step's checks (numpy, NOTE [ checks in a compiled step ])
    gives what XLA gives for the same jaxpr, for every primitive it knows: comparisons, logic,
    arithmetic, selects, argmax and reductions (bitwise on integers), reshapes and broadcasts, a dynamic slice whose
    start XLA clamps, stacks, joins and nested calls."""
    import jax
    import jax.numpy as jnp
    from torchlike._compile import program

    @jax.jit
    def inner(v):
        return jnp.maximum(v, -3) - jnp.minimum(v, 3) * 2

    def checks(v, w):
        bad = (v < 0) | (v >= 7) | ~(v != -100) & (v <= 2) | (v > 5) & (v == 4)
        i = jnp.argmax(bad)
        sel = jnp.where(bad, v + 1, inner(v))
        return (jnp.stack([~bad.any(), bad.all()]), i, jax.lax.reduce_or(v, (0,)),
                jax.lax.reduce_and(v, (0,)), jax.lax.dynamic_slice(v, (i + 9,), (3,)),
                sel.reshape(2, 4).max(0), sel.reshape(2, 4).min(1).astype(jnp.int32),
                jnp.broadcast_to(w[:, None], (3, 2)), jnp.concatenate([v, v[:1]]),
                jnp.squeeze(v[None, :2], 0))

    for v in ([0, 1, 2, 3, 4, 5, 6, 1], [3, -1, 9, 4, -100, 2, 0, 8]):
        args = (np.array(v, np.int32), np.array([1.5, -2.0, 0.25], np.float32))
        closed = jax.make_jaxpr(checks)(*args)
        host = program._host_program(closed.jaxpr, closed.consts)(*args)
        xla = jax.core.eval_jaxpr(closed.jaxpr, closed.consts, *args)
        assert len(host) == len(xla)
        for a, b in zip(host, xla):
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_array_equal(a, np.asarray(b))
