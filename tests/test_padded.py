"""A short call runs a longer one's program (NOTE [ a short call in a longer one's program ] in
torchlike/_ops/padded.py): after a call over more rows, a call over fewer gives PyTorch's
outputs, grad_fn names and gradients from the longer call's programs, forward and backward; after
RENT such calls a length compiles its own."""
import gc

import jax
import numpy as np
import pytest

import torchlike as tl
from torchlike._dispatch import Op
from torchlike._ops.dropout import DROPOUT

from parity import both, next_names

LONG, SHORT = 13, 6   # rows (odd sizes: no other test compiles these programs)


def _recorded(T, out, leaves):
    """The output, its grad_fn's and next_functions' names, and the leaves' gradients after a
    backward with a fixed upstream gradient."""
    res = {"out": out, "name": type(out.grad_fn).__name__, "next": next_names(out.grad_fn)}
    g = np.random.default_rng(1).standard_normal(tuple(out.shape)).astype(np.float32)
    out.backward(T.tensor(g))
    res["grads"] = [t.grad for t in leaves]
    return res


def _inputs(T, n, *shapes):
    rng = np.random.default_rng(n)
    return [T.tensor(rng.standard_normal((n, *s)).astype(np.float32), requires_grad=True)
            for s in shapes]


def _targets(T, n, classes):
    return T.tensor(np.random.default_rng(n + 1).integers(0, classes, n))


def log_softmax(T, n):
    (x,) = _inputs(T, n, (7,))
    return _recorded(T, T.log_softmax(x * 2, 1), [x])


def softmax_3d(T, n):
    (x,) = _inputs(T, n, (3, 5))
    return _recorded(T, T.softmax(x, -1), [x])


def cross_entropy_weighted(T, n):   # log_softmax, then nll_loss over targets some ignored
    (x,) = _inputs(T, n, (7,))
    w = T.tensor(np.linspace(0.5, 2.0, 7, dtype=np.float32))
    loss = T.nn.functional.cross_entropy(x, _targets(T, n, 7), weight=w, ignore_index=3)
    return _recorded(T, loss, [x])


def nll_loss_none(T, n):
    (x,) = _inputs(T, n, (7,))
    return _recorded(T, T.nn.functional.nll_loss(x, _targets(T, n, 7), reduction="none"), [x])


def nll_loss_sum(T, n):
    (x,) = _inputs(T, n, (7,))
    return _recorded(T, T.nn.functional.nll_loss(x, _targets(T, n, 7), reduction="sum"), [x])


def embedding(T, n):
    w = T.tensor(np.random.default_rng(0).standard_normal((9, 4)).astype(np.float32),
                 requires_grad=True)
    idx = T.tensor(np.random.default_rng(n).integers(0, 9, (n, 3)))
    return _recorded(T, T.nn.functional.embedding(idx, w, padding_idx=1), [w])


def linear(T, n):   # addmm, the weight's transpose folded
    x, w, b = _inputs(T, n, (4,)) + _inputs(T, 5, (4,), ())
    return _recorded(T, T.relu(T.nn.functional.linear(x, w, b.reshape(5))), [x, w, b])


def linear_no_bias(T, n):   # mm
    x, w = _inputs(T, n, (4,)) + _inputs(T, 5, (4,))
    return _recorded(T, T.nn.functional.linear(x, w), [x, w])


def conv2d(T, n):
    x, w, b = _inputs(T, n, (2, 5, 5)) + _inputs(T, 3, (2, 3, 3), ())
    return _recorded(T, T.nn.functional.conv2d(x, w, b.reshape(3), padding=1), [x, w, b])


def max_pool2d(T, n):   # values and indices, the values' gradient
    (x,) = _inputs(T, n, (2, 6, 6))
    y, idx = T.nn.functional.max_pool2d(x, 2, return_indices=True)
    res = _recorded(T, y, [x])
    res["indices"] = idx
    return res


def avg_pools(T, n):
    (x,) = _inputs(T, n, (2, 6, 6))
    y = T.nn.functional.adaptive_avg_pool2d(T.nn.functional.avg_pool2d(x, 2), (2, 1))
    return _recorded(T, y, [x])


def norms(T, n):   # layer norm over the last dim, group norm, batch norm from running stats
    (x,) = _inputs(T, n, (4, 3))
    w, b = _inputs(T, 1, (4,), (4,))
    F = T.nn.functional
    y = F.layer_norm(x, (3,)) + F.group_norm(x, 2, w[0], b[0])
    y = y + F.batch_norm(x, b[0].detach() * 0.1, w[0].detach().abs() + 0.5, w[0], b[0])
    return _recorded(T, y, [x, w, b])


def hooked_twice(T, n):   # a tensor hook, a node hook, and a second backward of the graph
    (x,) = _inputs(T, n, (7,))
    y = T.log_softmax(x, 1)
    seen = []
    y.register_hook(lambda g: g * 2)
    y.grad_fn.register_hook(lambda gi, go: seen.append((gi[0].clone(), go[0].clone())))
    g = T.tensor(np.random.default_rng(2).standard_normal(tuple(y.shape)).astype(np.float32))
    y.backward(g, retain_graph=True)
    y.backward(g)
    return {"grad": x.grad, "seen": seen}


def argmax(T, n):
    (x,) = _inputs(T, n, (7,))
    return {"out": x.detach().argmax(1)}


def linear_no_grad(T, n):
    x, = _inputs(T, n, (3, 4))
    w, b = _inputs(T, 5, (4,), ())
    with T.no_grad():
        return {"out": T.nn.functional.linear(x, w, b.reshape(5))}


CASES = {f.__name__: (f, ops) for f, ops in [
    (log_softmax, ("log_softmax",)), (softmax_3d, ("softmax",)),
    (cross_entropy_weighted, ("log_softmax", "nll_loss")), (nll_loss_none, ("nll_loss",)),
    (nll_loss_sum, ("nll_loss",)), (embedding, ("embedding",)), (linear, ("addmm", "relu")),
    (linear_no_bias, ("mm",)), (conv2d, ("convolution",)),
    (max_pool2d, ("max_pool2d_with_indices",)), (avg_pools, ("avg_pool2d", "adaptive_avg_pool2d")),
    (norms, ("layer_norm", "group_norm", "batch_norm")), (hooked_twice, ("log_softmax",)),
    (argmax, ("argmax",)),
    (linear_no_grad, ("linear",))]}


def _programs(names):
    """The forward and backward programs compiled so far for the ops of these names."""
    return sum(f._cache_size() for op in gc.get_objects() if type(op) is Op and op.name in names
               for cache in (op._fwd, op._bwd) for f in cache.values()
               if hasattr(f, "_cache_size"))


@pytest.mark.parametrize("name", list(CASES))
def test_a_short_batch_runs_a_longer_ones_program(short_calls, name):
    case, ops = CASES[name]
    both(lambda T: case(T, LONG), rtol=1e-5, atol=1e-5)
    assert not short_calls
    for call in range(3):   # RENT 2: the third call compiles its own programs
        before = _programs(ops)
        both(lambda T: case(T, SHORT), rtol=1e-5, atol=1e-5)
        if call < 2:
            assert sorted(short_calls) == sorted(ops)
            assert _programs(ops) == before   # (the pads and cuts run on the host)
        else:
            assert not short_calls
        short_calls.clear()


def test_dropout_keeps_its_draws_for_the_real_rows(short_calls, monkeypatch):
    """float32 dropout in a longer call's program draws the short call's rows as its own program
    does (each element's counter is its index): the same outputs and gradients, bit for bit."""
    def run():
        tl.manual_seed(0)
        out = []
        for n in (LONG, SHORT):
            (x,) = _inputs(tl, n, (4,))
            y = tl.nn.functional.dropout(x, 0.5)
            (y * tl.arange(4.0)).sum().backward()
            out += [y.detach().numpy(), x.grad.numpy()]
        return out

    padded_run = run()
    assert short_calls == ["dropout"]
    monkeypatch.setattr(DROPOUT, "bucket", None)
    for a, b in zip(padded_run, run()):
        np.testing.assert_array_equal(a, b)


def test_create_graph_differentiates_the_calls_own_operands(short_calls):
    """A bucketed node's double backward runs the call's own program (NOTE in padded.py)."""
    def second_order(T):
        (x,) = _inputs(T, LONG, (7,))
        T.log_softmax(x, 1).sum().backward()
        (x,) = _inputs(T, SHORT, (7,))
        y = T.log_softmax(x * x, 1)
        (g,) = T.autograd.grad((y * y).sum(), x, create_graph=True)
        return T.autograd.grad((g * g).sum(), x)[0]
    both(second_order, rtol=1e-5, atol=1e-6)
    assert short_calls == ["log_softmax"]


def test_a_large_output_is_cut_by_jax(short_calls, monkeypatch):
    """An output (and its gradient) past ON_HOST elements is cut (padded) by jax's own program:
    an embedding's (6, 3, 4) rows from indices of 18."""
    from torchlike._ops import padded
    monkeypatch.setattr(padded, "ON_HOST", 64)
    both(lambda T: embedding(T, LONG), rtol=1e-5, atol=1e-5)
    cuts, slice_in_dim = [], jax.lax.slice_in_dim
    monkeypatch.setattr(jax.lax, "slice_in_dim", lambda *a, **k: cuts.append(a[0].shape) or
                        slice_in_dim(*a, **k))
    both(lambda T: embedding(T, SHORT), rtol=1e-5, atol=1e-5)
    assert short_calls == ["embedding"] and cuts == [(LONG, 3, 4)]


def test_a_prediction_runs_a_training_calls_forward(short_calls):
    """Under no_grad, a short call runs the forward program of a longer recorded call (a few
    predictions after training at a larger batch); its own program after the rent."""
    ops = ("relu", "log_softmax")

    def step(T, n):
        (x,) = _inputs(T, n, (7,))
        if n == LONG:   # training
            return _recorded(T, T.log_softmax(T.relu(x), 1), [x])
        with T.no_grad():
            return {"out": T.log_softmax(T.relu(x), 1)}
    both(lambda T: step(T, LONG), rtol=1e-5, atol=1e-5)
    for call in range(3):   # RENT 2
        before = _programs(ops)
        both(lambda T: step(T, SHORT), rtol=1e-5, atol=1e-5)
        assert sorted(short_calls) == (sorted(ops) if call < 2 else [])
        if call < 2:   # (the third's programs: perhaps compiled by another test already)
            assert _programs(ops) == before
        short_calls.clear()
