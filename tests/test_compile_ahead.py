"""Backward programs compiled on a worker thread while the forward runs (NOTE [ backward programs
compiled ahead ] in torchlike/_ahead.py): what the worker compiled is not compiled again,
gradients are unchanged, a job the worker has not started is taken back, one it is compiling is
waited for, its errors are raised by the call that needs the program, and a forked child or the
interpreter's exit finds no stuck worker."""
import os
import subprocess
import sys
import threading
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import torchlike as tl
from torchlike import _ahead, _host

_LOWER = "/jax/core/compile/jaxpr_to_mlir_module_duration"


@pytest.fixture
def compiles(monkeypatch):
    """The programs the main thread and the worker compiled, as lists of seconds: their
    lowerings, since a program whose text was compiled before takes that executable from XLA
    (NOTE [ one program for one text ] in torchlike/_quick.py)."""
    monkeypatch.setattr(_ahead, "enabled", True)
    seen = {"main": [], "worker": []}

    def listen(event, seconds, **kwargs):
        if event == _LOWER:
            main = threading.current_thread() is threading.main_thread()
            seen["main" if main else "worker"].append(seconds)
    jax.monitoring.register_event_duration_secs_listener(listen)
    yield seen
    jax.monitoring.unregister_event_duration_listener(listen)


def _settled(timeout=60.0):
    """Wait until the worker has no job left."""
    end = time.monotonic() + timeout
    while _ahead.waiting:
        assert time.monotonic() < end, "the worker did not finish its jobs"
        time.sleep(0.01)


def _forward(x, w, b, u):
    """A linear layer over 3-D rows (folded views on both sides), a product, a softmax, and a
    two-output op whose second output gets no gradient (zeros filled in)."""
    h = tl.nn.functional.linear(x, w, b).tanh()
    p = (h @ u).softmax(-1)
    std, mean = tl.std_mean(h, -1)
    return ((p * p).sum(-1) + std).sum()


def _op_nodes(node):
    """How many op nodes the graph under ``node`` has (each runs a backward program)."""
    seen, todo = set(), [node]
    while todo:
        n = todo.pop()
        if n is not None and id(n) not in seen and type(n).__name__ != "AccumulateGrad":
            seen.add(id(n))
            todo.extend(e[0] for e in n.next_functions)
    return len(seen)


def _reference(x, w, b, u):
    h = jnp.tanh(x @ w.T + b)
    p = jax.nn.softmax(h @ u, -1)
    return ((p * p).sum(-1) + jnp.std(h, -1, ddof=1)).sum()


def test_backward_programs_compile_ahead(compiles, monkeypatch):
    """The backward program of every node the walk runs of a step at new shapes compiles on
    the worker, and the main thread compiles only the rest of what it compiled before (the
    engine's own: gradient sums, zeros for a missing gradient); the gradients are jax.grad's."""
    rng = np.random.default_rng(0)
    monkeypatch.setattr(_host, "MOVES_MET", 10 ** 9)   # (views of new shapes compile, no rent)
    monkeypatch.setattr(_host, "SHAPES_MET", 10 ** 9)   # (nor rows in buckets)

    def step(n, ahead):   # (every shape new: no program of one step serves another)
        monkeypatch.setattr(_ahead, "enabled", ahead)
        arrays = [rng.standard_normal(s).astype(np.float32)
                  for s in ((3, n, n + 2), (n + 1, n + 2), (n + 1,), (n + 1, 5))]
        inputs = [tl.tensor(a, requires_grad=True) for a in arrays]
        worker = len(compiles["worker"])
        loss = _forward(*inputs)
        _settled()
        main, worker = len(compiles["main"]), len(compiles["worker"]) - worker
        nodes = _op_nodes(loss.grad_fn)
        loss.backward()
        return arrays, inputs, len(compiles["main"]) - main, worker, nodes

    step(9, ahead=True)   # (the first backward's seed)
    _, _, on_main, _, _ = step(10, ahead=False)
    arrays, inputs, left, worker, nodes = step(11, ahead=True)
    # (the walk runs the linear layer's addmm through its two folded views and its output
    # view, whose nodes run no program: NOTE [ backward through folded views ]; and the
    # product's reshapes and a sum inside the nodes above them, NOTE [ backward through linear
    # ops ]; the loss's sum, a linear op that nothing runs, is not compiled ahead)
    assert worker == nodes - 3 - 3 - 1 and left == on_main - worker
    want = jax.grad(_reference, argnums=(0, 1, 2, 3))(*map(jnp.asarray, arrays))
    for t, w in zip(inputs, want):
        np.testing.assert_allclose(t.grad.numpy(), np.asarray(w), rtol=1e-5, atol=1e-6)


def test_a_job_not_started_is_taken_back(compiles):
    """A job still waiting when its program is called is taken back and compiled by the call;
    the worker never compiles it."""
    fn = jax.jit(lambda a: a * 2 + 1)
    args = (np.ones((3, 19), np.float32),)
    with _ahead._lock:   # (the worker cannot take a job while this is held)
        _ahead.submit(fn, args)
        assert _ahead._key(fn, args) in _ahead.waiting
        _ahead.claim(fn, args)
        assert not _ahead.waiting
    np.testing.assert_array_equal(fn(*args), np.full((3, 19), 3.0))
    _settled()
    assert len(compiles["main"]) == 1 and not compiles["worker"]   # (by the call)


def test_a_job_being_compiled_is_waited_for(compiles):
    """A call of a program the worker is compiling waits for it and compiles nothing."""
    def slow(a):
        for i in range(40):
            a = jnp.sin(a) * (i + 1) + jnp.cos(a @ a)
        return a
    fn = jax.jit(slow)
    args = (np.ones((8, 8), np.float32),)
    _ahead.submit(fn, args)
    end = time.monotonic() + 60
    while _ahead.waiting.get(_ahead._key(fn, args)) is None:   # (until the worker starts it)
        assert time.monotonic() < end
        time.sleep(0.001)
    _ahead.claim(fn, args)
    assert not _ahead.waiting and len(compiles["worker"]) == 1
    fn(*args).block_until_ready()
    assert not compiles["main"]


def test_a_job_marked_last_waits_for_the_others(compiles):
    """The worker takes a job submitted with ``last=True`` only once no other job waits."""
    order = []
    later = jax.jit(lambda a: order.append("last") or a - 1)
    first = jax.jit(lambda a: order.append("first") or a + 1)
    args = (np.ones(37, np.float32),)
    with _ahead._lock:   # (both queued before the worker can take either)
        _ahead.submit(later, args, last=True)
        _ahead.submit(first, args)
    _settled()
    assert order == ["first", "last"] and len(compiles["worker"]) == 2


def test_an_error_is_raised_by_the_call_that_needs_the_program(compiles):
    def bad(a):
        raise ValueError(f"no program for shape {a.shape}")
    fn = jax.jit(bad)
    args = (np.ones(4, np.float32),)
    _ahead.submit(fn, args)
    _settled()
    _ahead.claim(fn, args)
    with pytest.raises(ValueError, match=r"no program for shape \(4,\)"):
        fn(*args)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.filterwarnings("ignore:os.fork")
def test_a_forked_child_starts_with_no_worker(compiles):
    """A child forked while the parent held the worker's lock gets a free lock, no jobs and no
    worker (a DataLoader worker records ops too)."""
    _ahead.submit(jax.jit(lambda a: a + 1), (np.ones(5, np.float32),))
    with _ahead._lock:
        pid = os.fork()
        if pid == 0:   # the child: report through the exit status, never run pytest's code
            fresh = _ahead._lock.acquire(timeout=5)
            os._exit(0 if fresh and not _ahead.waiting and _ahead._worker is None else 1)
    end = time.monotonic() + 60
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > end:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("the forked child hung")
        time.sleep(0.01)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    _settled()


def test_exit_while_compiling_and_the_switch():
    """A process that leaves while the worker compiles exits cleanly; TORCHLIKE_COMPILE_AHEAD=0
    switches it off (as one core does)."""
    code = ("import torchlike as tl\n"
            "from torchlike import _ahead\n"
            "print(_ahead.enabled)\n"
            "x = tl.randn(6, 21, requires_grad=True)\n"
            "y = (x.sin() @ x.T).softmax(-1).log().sum()\n"
            "print(len(_ahead.waiting) > 0)\n")
    on = str(_ahead._cores() > 1)
    for flag, want in (("1", f"{on}\n{on}"), ("0", "False\nFalse")):
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=120, env=dict(os.environ, TORCHLIKE_COMPILE_AHEAD=flag))
        assert run.returncode == 0, run.stderr[-2000:]
        assert run.stdout.strip() == want, run.stdout


def test_config_switch(compiles):
    """torchlike.compiler.config.compile_ahead turns it off and on; it takes a bool."""
    tl.compiler.config.compile_ahead = False
    x = tl.randn(5, 23, requires_grad=True)
    (x.exp() * 2).sum()
    assert not _ahead.waiting and not compiles["worker"]
    tl.compiler.config.compile_ahead = True
    (x.exp() * 2).prod(1)   # (a new program: its backward is compiled ahead)
    assert tl.compiler.config.compile_ahead and _ahead.waiting
    _settled()
    assert compiles["worker"]
    with pytest.raises(TypeError, match="compile_ahead must be a bool, not int"):
        tl.compiler.config.compile_ahead = 1


@pytest.mark.parametrize("on_host", [False, True])
def test_an_embedding_of_a_cut_hands_over(compiles, monkeypatch, on_host):
    """An embedding of a window cut from a corpus (a deferred cut, pending until read: NOTE
    [ cuts gathered by stack ] in torchlike/_ops/shape.py; run before the op outside lazy mode)
    hands its backward over, whether its gather is a program traced at the new shape or runs on
    the host (NOTE [ new shapes moved on the host ] in torchlike/_host.py: nothing traced)."""
    from torchlike._ops.embedding import EMBEDDING
    monkeypatch.setattr(_host, "MOVES_MET", -1 if on_host else 10 ** 9)
    monkeypatch.setattr(_host, "_RENTED", {})   # (the host's calls, by op and shapes)
    n, d = (41, 23) if on_host else (37, 19)   # (a shape of each case's own)
    window = tl.tensor(np.arange(n + 13) % 7)[3:3 + n]
    assert window._lazy is not None and window._lazy.value is None
    w = tl.randn(7, d, requires_grad=True)
    worker = len(compiles["worker"])
    out = tl.nn.functional.embedding(window, w)
    _settled()
    assert len(compiles["worker"]) == worker + 1
    assert any(key[0] is EMBEDDING for key in _host._RENTED) == on_host
    g = np.random.default_rng(0).standard_normal((n, d)).astype(np.float32)
    out.backward(tl.tensor(g))
    want = np.zeros((7, d), np.float32)
    np.add.at(want, np.arange(3, 3 + n) % 7, g)
    np.testing.assert_allclose(w.grad.numpy(), want, rtol=1e-5, atol=1e-6)


def test_a_short_calls_backward_compiles_ahead(compiles, short_calls):
    """A short call run in a longer one's program (NOTE [ a short call in a longer one's
    program ] in torchlike/_ops/padded.py) whose backward is not the longer call's hands it to
    the worker: a log-softmax over a reshape, which the longer call's backward ran inside its
    program (NOTE [ backward through linear ops ]) and the short call's cannot (its padded rows
    are the reshape's output); the main thread compiles only the reshape's own backward."""
    rng = np.random.default_rng(0)

    def step(n):   # (a shape of this test's own)
        x = tl.tensor(rng.standard_normal((n, 3, 29)).astype(np.float32), requires_grad=True)
        y = x.reshape(n * 3, 29).log_softmax(1)
        return x, y, tl.tensor(rng.standard_normal((n * 3, 29)).astype(np.float32))

    x, y, g = step(13)
    y.backward(g)
    _settled()
    x, y, g = step(6)
    assert short_calls == ["log_softmax"]
    _settled()
    main, worker = len(compiles["main"]), len(compiles["worker"])
    y.backward(g)
    assert len(compiles["main"]) == main + 1 and len(compiles["worker"]) == worker
    want = jax.grad(lambda a: (jax.nn.log_softmax(a.reshape(18, 29), 1) * g._value()).sum())(
        x.detach()._value())
    np.testing.assert_allclose(x.grad.numpy(), np.asarray(want), rtol=1e-5, atol=1e-6)


def test_lazy_mode_hands_nothing_over(compiles):
    """In lazy mode a recorded op at a new shape stays pending: nothing is handed to the worker
    (describing its backward would read its outputs and run the segment)."""
    from torchlike import _lazy
    _lazy.enable()
    try:
        a = tl.randn(2, 29, requires_grad=True)
        b = (a * 2).exp().sum(0, keepdim=True)
        assert b._lazy is not None and b._lazy.value is None and not _ahead.waiting
    finally:
        _lazy.enable(False)
    np.testing.assert_allclose(b.detach().numpy(), np.exp(2 * a.detach().numpy()).sum(
        0, keepdims=True), rtol=1e-6)


def test_the_first_update_compiles_ahead(compiles, monkeypatch):
    """An optimizer's first zero_grad() hands the program of its first step() to the worker
    (NOTE [ the first update compiled ahead ] in optim/optimizer.py): that step then compiles
    nothing on its own thread, and the state is still made by the step, as PyTorch's is.
    Without the worker the step compiles it; an optimizer with a step of its own (LBFGS)
    hands nothing over."""
    rng = np.random.default_rng(2)

    def step_compiles(n, ahead):   # (a new shape each time: nothing compiled before)
        monkeypatch.setattr(_ahead, "enabled", ahead)
        w = tl.tensor(rng.standard_normal((n, 3)).astype(np.float32), requires_grad=True)
        b = tl.zeros(n, requires_grad=True)
        opt = tl.optim.AdamW([{"params": [w]}, {"params": [b], "weight_decay": 0.0}], lr=0.1)
        loss = ((tl.ones(4, 3) @ w.T + b) ** 2).sum()
        opt.zero_grad()
        assert not opt.state
        _settled()
        loss.backward()
        main = len(compiles["main"])
        opt.step()
        assert set(opt.state[w]) == {"step", "exp_avg", "exp_avg_sq"}
        return len(compiles["main"]) - main

    assert step_compiles(31, ahead=False) >= 1
    assert step_compiles(32, ahead=True) == 0
    x = tl.zeros(33, requires_grad=True)
    tl.optim.LBFGS([x]).zero_grad()
    assert not _ahead.waiting
