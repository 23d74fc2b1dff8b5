"""What a long-running program must not accumulate: caches keyed by shapes stay within their
bounds (NOTE [ bounded program caches ] in torchlike/_dispatch.py), and a long graph runs backward
and is freed without recursion and without waiting for the garbage collector.
scripts/bench_growth.py measures what these cost; nothing here is timed.
"""
import gc
import inspect
import sys
import weakref

import jax
import numpy as np

import torchlike as tl
from torchlike import _dispatch, _random, _views


def test_factory_programs_stay_within_their_bound():
    """A sampler's program is keyed by its size, so randn(b) over ever more sizes b would keep
    one jitted function (and its compiled programs) per size; the cache keeps at most
    _FACTORY_PROGRAMS.  Making a jit function compiles nothing, so the keys are made directly."""
    device = jax.devices("cpu")[0]
    for b in range(_random._FACTORY_PROGRAMS + 20):
        static = (("shape", (b, 3)), ("dtype", np.dtype(np.float32)))
        _random._factory_program(_random.RANDN, static, device, 2)
    assert _random._factory_program.cache_info().currsize <= _random._FACTORY_PROGRAMS


def test_view_programs_stay_within_their_bound(monkeypatch):
    """Reading and writing through views of ten different shapes, with room for four chains:
    each cache keeps at most four, and the values stay right when a dropped chain is needed
    again (the second round)."""
    monkeypatch.setattr(_views, "_MAX_CHAINS", 4)
    monkeypatch.setattr(_views, "_CHAINS", {})
    monkeypatch.setattr(_views, "_SCATTERS", {})
    rows = (1, 2, 3, 4, 6, 8, 12, 16, 24, 48)
    for _ in range(2):
        for k in rows:
            x = tl.zeros(8, 6)
            v = x.view(k, 48 // k)
            v.add_(1.0)        # a write through the view: scattered into x
            x.mul_(3.0)        # a write to the root: v re-reads its chain
            assert float(v.sum()) == 144.0
            assert float(x.sum()) == 144.0
    assert 0 < len(_views._CHAINS) <= 4
    assert 0 < len(_views._SCATTERS) <= 4


def test_op_programs_stay_within_their_bound(monkeypatch):
    """An op whose static arguments carry a shape (a view's sizes) over twelve shapes, with room for
    four programs per cache: the op keeps at most four forward and four backward programs, and
    one dropped and needed again gives the right values (the second round)."""
    monkeypatch.setattr(_dispatch, "_MAX_PROGRAMS", 4)
    x = tl.arange(60.0, requires_grad=True)   # shapes no other test here views
    for _ in range(2):
        for k in (1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30, 60):
            x.grad = None
            y = x.reshape(k, 60 // k)
            (y * y).sum().backward()
            np.testing.assert_array_equal(x.grad.numpy(), 2 * np.arange(60.0))
    op = y.grad_fn._op
    assert 0 < len(op._fwd) <= 4 and 0 < len(op._bwd) <= 4


def test_a_long_graph_runs_backward_without_recursion():
    """20,000 chained ops (more than the fused backward takes: node by node) run backward with
    Python's recursion limit a few frames above this test's depth, and the graph is freed by
    reference counting alone (no cycle waits for the garbage collector)."""
    x = tl.randn(4, requires_grad=True)

    def chain(n):
        """(the sum of n chained ops on x, a weak reference to the first op's node)"""
        y = first = x * 1.0001
        for i in range(1, n):
            y = y * 1.0001 if i % 2 == 0 else y + 0.0001
        return y.sum(), weakref.ref(first.grad_fn)
    chain(4)[0].backward()   # compile its ops with the usual limit
    x.grad = None
    loss, first = chain(20000)
    last = weakref.ref(loss.grad_fn)
    enabled, limit = gc.isenabled(), sys.getrecursionlimit()
    gc.disable()
    sys.setrecursionlimit(len(inspect.stack()) + 60)
    try:
        loss.backward()
        del loss
        assert last() is None and first() is None
    finally:
        sys.setrecursionlimit(limit)
        if enabled:
            gc.enable()
    expected = float(np.float32(1.0001)) ** 10000   # 10,000 of the ops multiply
    np.testing.assert_allclose(x.grad.numpy(), np.full(4, expected), rtol=1e-3)
