"""Lazy eager mode (NOTE [ lazy segments ] in torchlike/_lazy.py) against eager mode and jax.grad.

Every test runs with lazy mode on, ``fuse_after = 1`` and ``buy_after = 0``, so a segment of more
than one record runs as its compiled program from its first flush: the compiled replay is what
is checked.
Modes agree: the same program gives the same values and gradients lazily and eagerly; errors
are raised at the op; reads, writes, views, hooks and threads behave as eagerly.
"""
import logging
import re
import threading

import jax
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import torchlike as tl
from torchlike import _lazy
from torchlike.testing import assert_grads_match_jax

from test_engine_vs_jax import SHAPES, make_program, step as program_step


@pytest.fixture
def lazy(monkeypatch):
    monkeypatch.setattr(_lazy, "fuse_after", 1)
    monkeypatch.setattr(_lazy, "buy_after", 0)
    monkeypatch.setattr(_lazy, "solo_after", 10 ** 9)   # (one test sets it: the trie is shared)
    _lazy.enable()
    yield
    _lazy.enable(False)


def _pending(t):
    return t._lazy is not None and t._lazy.value is None


@settings(max_examples=10, deadline=None)
@given(shapes=st.lists(st.sampled_from(SHAPES), min_size=1, max_size=3),
       steps=st.lists(program_step, min_size=1, max_size=8),
       outputs=st.lists(st.integers(0, 99), min_size=1, max_size=3),
       seed=st.integers(0, 2**31 - 1))
def test_random_programs_lazily_match_jax_grad(shapes, steps, outputs, seed):
    rng = np.random.default_rng(seed)
    leaves = [tl.tensor(rng.standard_normal(s), dtype=tl.float64) for s in shapes]
    before = _lazy.fuse_after, _lazy.buy_after
    _lazy.fuse_after, _lazy.buy_after = 1, 0   # (hypothesis runs no function-scoped fixture)
    _lazy.enable()
    try:   # twice: the second run replays the segments' compiled programs
        for _ in range(2):
            assert_grads_match_jax(make_program(steps, outputs), *leaves, rtol=1e-9, atol=1e-9)
    finally:
        _lazy.enable(False)
        _lazy.fuse_after, _lazy.buy_after = before


def _train(opt_cls, steps, lazy_mode, **kw):
    tl.manual_seed(0)
    net = tl.nn.Sequential(tl.nn.Linear(6, 8), tl.nn.Tanh(), tl.nn.Dropout(0.2),
                           tl.nn.Linear(8, 3))
    opt = opt_cls(net.parameters(), **kw)
    x, y = tl.randn(5, 6), tl.tensor([0, 2, 1, 1, 0])
    flushes, losses = [], []
    _lazy.enable(lazy_mode)
    try:
        for _ in range(steps):
            before = _count_flushes[0]
            opt.zero_grad()
            loss = tl.nn.functional.cross_entropy(net(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
            flushes.append(_count_flushes[0] - before)
    finally:
        _lazy.enable(False)
    return losses, [p.detach().clone() for p in net.parameters()], flushes


_count_flushes = [0]


@pytest.mark.parametrize("opt_cls, kw", [(tl.optim.SGD, dict(lr=0.1, momentum=0.9)),
                                         (tl.optim.Adam, dict(lr=0.01))])
def test_a_training_step_is_one_program_with_eager_values(opt_cls, kw, lazy, monkeypatch):
    flush = _lazy.Segment.flush

    def counted(seg):
        if seg.records:
            _count_flushes[0] += 1
        return flush(seg)
    monkeypatch.setattr(_lazy.Segment, "flush", counted)
    eager_losses, eager_params, _ = _train(opt_cls, 4, False, **kw)
    lazy_losses, lazy_params, flushes = _train(opt_cls, 4, True, **kw)
    np.testing.assert_allclose(lazy_losses, eager_losses, rtol=1e-6)
    for a, b in zip(lazy_params, eager_params):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
    # forward, backward and update run together when the optimizer steps
    assert flushes[-1] == 1


def _train_by_hand(steps):
    tl.manual_seed(0)
    net = tl.nn.Sequential(tl.nn.Linear(6, 8), tl.nn.Tanh(), tl.nn.Linear(8, 3))
    x, y = tl.randn(5, 6), tl.randn(5, 3)
    for _ in range(steps):
        loss = ((net(x) - y) ** 2).mean()
        net.zero_grad()
        loss.backward()
        with tl.no_grad():
            for p in net.parameters():
                p -= 0.1 * p.grad
    return loss.item(), [p.detach().clone() for p in net.parameters()]


def test_a_hand_written_update_outputs_only_what_is_referenced(lazy, monkeypatch):
    _lazy.enable(False)
    eager_loss, eager_params = _train_by_hand(6)
    outputs, program = [], _lazy._program
    monkeypatch.setattr(_lazy, "_program",
                        lambda records, live: outputs.append(len(live)) or program(records, live))
    _lazy.enable()
    lazy_loss, lazy_params = _train_by_hand(6)
    assert lazy_loss == pytest.approx(eager_loss, rel=1e-6)
    for a, b in zip(lazy_params, eager_params):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-7)
    # a second backward flushes the segment (two steps): its program outputs the 4 parameters,
    # their 4 gradients and the loss, none of the activations the released graph had saved
    assert outputs and max(outputs) <= 9


def test_shapes_dtypes_and_errors_at_the_op_without_running(lazy):
    a = tl.randn(2, 3, requires_grad=True)
    b = (a * 2).exp().sum(0, keepdim=True)
    assert _pending(b)
    assert (b.shape, b.dtype, b.device, b.stride()) == ((1, 3), tl.float32, tl.device("cpu"),
                                                        (3, 1))
    assert b.grad_fn.name() == "SumBackward1" and b.requires_grad
    with pytest.raises(RuntimeError, match=r"size of tensor a \(3\) must match the size of "
                                           r"tensor b \(5\) at non-singleton dimension 1"):
        b + tl.ones(4, 5)
    assert _pending(b)   # nothing ran
    expected = np.exp(2 * a.detach().numpy()).sum(0, keepdims=True)
    np.testing.assert_allclose(b.detach().numpy(), expected, rtol=1e-6)


def test_reads_writes_and_views_of_pending_values(lazy):
    x = tl.arange(6.0)
    y = x * 2
    v = y.view(2, 3)          # a view of a pending root, pending itself
    w = v[1]
    assert _pending(v) and _pending(w)
    y.add_(1)                 # a write into the pending root: a new pending value, no run
    assert _pending(y) and y._version == 1
    np.testing.assert_array_equal(w.numpy(), [7.0, 9.0, 11.0])
    z = x + 1
    u = z.view(3, 2)
    x.mul_(10)                # the operand changed after z was recorded: z keeps x's old values
    np.testing.assert_array_equal(u.numpy(), [[1, 2], [3, 4], [5, 6]])
    s = (x * 3).sum()
    assert s.item() == 450.0 and f"{s:.1f}" == "450.0" and bool(s > 0)


def test_hooks_retain_grad_and_a_second_backward(lazy):
    x = tl.randn(3, requires_grad=True)
    seen = []
    for _ in range(2):
        x.grad = None
        h = x.sin()
        h.retain_grad()
        h.register_hook(lambda g: seen.append(g.clone()) or g * 2)
        out = (h * h).sum()
        out.backward(retain_graph=True)
        out.backward()
        expected = 2 * 2 * 2 * x.detach().sin() * x.detach().cos()
        np.testing.assert_allclose(x.grad.numpy(), expected.numpy(), rtol=1e-6)
        np.testing.assert_allclose(h.grad.numpy(), 8 * h.detach().numpy(), rtol=1e-6)   # torch
    assert len(seen) == 4


def test_autograd_grad_create_graph_and_no_grad(lazy):
    x = tl.tensor([0.5, -1.0, 2.0], requires_grad=True)
    (g,) = tl.autograd.grad((x ** 3).sum(), x, create_graph=True)
    (gg,) = tl.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), 6 * x.detach().numpy(), rtol=1e-6)
    with tl.no_grad():
        y = x * 4
    assert y.grad_fn is None and not y.requires_grad
    np.testing.assert_allclose(y.numpy(), 4 * x.detach().numpy())


def test_threads_record_their_own_segments(lazy):
    results, errors = {}, []

    def work(k):
        try:
            t = tl.full((4,), float(k))
            for _ in range(20):
                t = t * 1.5 - t * 0.5 + 1
            results[k] = t.sum().item()
        except Exception as e:   # reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=60)
    assert not errors and results == {k: 4 * (k + 20) for k in range(4)}


def test_the_trie_of_segments_is_bounded(lazy, monkeypatch):
    monkeypatch.setattr(_lazy, "max_trie", 50)
    for n in range(1, 40):   # a new shape every time: new trie nodes every time
        assert (tl.ones(n) * 2 + 1).sum().item() == 3 * n
    assert _lazy._trie_nodes <= 50


def test_a_trace_that_reads_pending_values_gets_concrete_ones(lazy):
    """A segment run because a trace reads it (a user's jax.jit over eager code here;
    torchlike.compile's trace alike) computes concrete values, not the trace's tracers."""
    b = tl.arange(4.) * 2 + 1   # pending

    def f(x):
        return (tl.Tensor._wrap(x) * b)._value()
    np.testing.assert_array_equal(jax.jit(f)(np.ones(4, np.float32)), [1., 3., 5., 7.])
    assert b.tolist() == [1., 3., 5., 7.]   # read after the trace: no leaked tracer


def test_synchronize_and_events_run_what_is_recorded(lazy):
    a, b = tl.ones(3) * 2, tl.ones(3) * 3
    assert _pending(a) and _pending(b)
    tl.cpu.synchronize()
    assert not _pending(a) and a._arr.is_ready()
    c = b + 1
    tl.cpu.Event().record()
    assert not _pending(c)


def test_a_flush_compiles_only_the_programs_of_its_ops(lazy, caplog):
    """A flush runs its records as concrete values (above) without folding the constants of the
    programs it traces meanwhile (the random bits' iota of a dropout mask, a broadcast zero):
    each would be a program of its own, compiled op by op."""
    x = tl.randn(6, 7)
    with jax.log_compiles(), caplog.at_level(logging.WARNING):
        tl.nn.functional.dropout(x * 3 - 1, 0.25).sum().item()
    compiled = re.findall(r"Compiling (jit\(\w+\))", caplog.text)
    assert compiled and not {"jit(iota)", "jit(broadcast_in_dim)"} & set(compiled), compiled


def test_an_op_that_keeps_residuals_runs_when_recorded_with_a_graph(lazy):
    """An rnn stack recorded with a graph runs at once and keeps its VJP's residuals, as
    eagerly (NOTE [ kept residuals ] in torchlike/_dispatch.py): recorded in a segment, its
    backward would compute the scan's forward again.  Under no_grad it is recorded."""
    tl.manual_seed(0)
    lstm = tl.nn.LSTM(3, 4)
    x = tl.randn(5, 2, 3) * 2   # pending
    out, _ = lstm(x)
    assert out.grad_fn._residuals is not None and not _pending(out)
    out.sum().backward()
    grads = [p.grad.numpy().copy() for p in lstm.parameters()]
    with tl.no_grad():
        assert _pending(lstm(x * 1)[0])
    _lazy.enable(False)
    lstm.zero_grad()
    lstm(x)[0].sum().backward()
    for p, g in zip(lstm.parameters(), grads):
        np.testing.assert_allclose(p.grad.numpy(), g, rtol=1e-6, atol=1e-7)


def test_an_op_read_at_once_every_time_runs_unrecorded(lazy, monkeypatch):
    """An op that begins segments which always end right after it (its result read at once)
    runs eagerly once that has happened ``solo_after`` times, a recorded node and all; an op
    that begins longer segments stays recorded (NOTE [ lazy segments ])."""
    monkeypatch.setattr(_lazy, "solo_after", 3)
    data = np.arange(21.0, dtype=np.float32).reshape(3, 7)
    x = tl.tensor(data)
    for i in range(5):
        y = x * 3.25
        assert _pending(y) == (i < 3)
        np.testing.assert_array_equal(y.numpy(), data * 3.25)
    z = x * 3.25 + 1   # the mul runs now; the add begins the segment
    assert _pending(z)
    np.testing.assert_array_equal(z.numpy(), data * 3.25 + 1)
    xg = tl.tensor(data, requires_grad=True)
    yg = xg * 3.25
    assert not _pending(yg) and yg.grad_fn.name() == "MulBackward0"
    yg.sum().backward()
    np.testing.assert_array_equal(xg.grad.numpy(), np.full((3, 7), 3.25, np.float32))
    for _ in range(5):   # a segment of two: its first op is never run unrecorded
        w = (x - 1.5) * 2
        assert _pending(w)
        np.testing.assert_array_equal(w.numpy(), (data - 1.5) * 2)
    u = tl.tensor(data[:2])   # (other avals: a path of its own in the trie)
    assert (u * 1.75 + 2).tolist() == (data[:2] * 1.75 + 2).tolist()
    for _ in range(5):   # once continued, its segments do not always end at it
        v = u * 1.75
        assert _pending(v) and v.tolist() == (data[:2] * 1.75).tolist()
