"""RNN, LSTM, GRU, their cells, the recurrence functionals (torch.lstm, ...) and
torch.nn.utils.rnn (PackedSequence and friends) against real PyTorch.

Every case builds the same module in both libraries, torchlike's weights copied from torch's, runs
the same inputs, and compares outputs, final states, grad_fn names and the gradients of every
parameter, input and initial state (after backward with random upstream gradients).
"""
import functools
import types
import warnings

import jax
import numpy as np
import pytest
import torch

import torchlike as tl
import torchlike.nn.modules.rnn as tl_rnn
import torchlike.nn.utils.rnn as tl_utils
from torchlike._ops import rnn as tl_ops

from parity import both, cases, same, seed_of
from sample_stats import check_frequencies

pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections is not supported")

NAMES = ("RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell")
TL_NN = types.SimpleNamespace(**{n: getattr(tl_rnn, n) for n in NAMES})
F32 = dict(rtol=1e-4, atol=1e-5)   # recurrences accumulate float32 rounding differently


def nn_of(T):
    return torch.nn if T is torch else TL_NN


def utils_of(T):
    return torch.nn.utils.rnn if T is torch else tl_utils


def weights_of(cls, args, kw, seed):
    """A state_dict (numpy) of a torch module made with this seed."""
    torch.manual_seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = getattr(torch.nn, cls)(*args, **kw)
    return {k: v.detach().numpy() for k, v in m.state_dict().items()}


def make(T, cls, args, kw, weights, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = getattr(nn_of(T), cls)(*args, **kw)
    m.load_state_dict({k: T.tensor(v) for k, v in weights.items()})
    return m.to(getattr(T, dtype))


def leaf(T, values, dtype):
    return T.tensor(values, dtype=getattr(T, dtype)).requires_grad_()


def flat(res):
    """(output, state) as a flat dict of Tensors; PackedSequences split into their fields."""
    out, state = res
    d = {}
    if hasattr(out, "batch_sizes"):
        d.update(data=out.data, batch_sizes=out.batch_sizes, sorted=out.sorted_indices,
                 unsorted=out.unsorted_indices)
    else:
        d["out"] = out
    if isinstance(state, tuple):
        d["h"], d["c"] = state
    elif state is not None:
        d["h"] = state
    return d


def run_layer(T, cls, args, kw, x, h0=None, c0=None, dtype="float32", packed=None, train=False,
              seed=0):
    """Build, run, backward with random upstream gradients; return what to compare."""
    m = make(T, cls, args, kw, weights_of(cls, args, kw, seed), dtype)
    m.train(train)
    xs = leaf(T, x, dtype)
    inp = xs
    if packed is not None:
        lengths, enforce = packed
        batch_first = kw.get("batch_first", False)
        inp = utils_of(T).pack_padded_sequence(xs, lengths, batch_first, enforce)
    hs = [leaf(T, h, dtype) for h in (h0, c0) if h is not None]
    hx = None if not hs else tuple(hs) if cls == "LSTM" else hs[0]
    res = m(inp) if hx is None else m(inp, hx)
    d = flat(res)
    outs = [t for k, t in d.items() if k in ("out", "data", "h", "c")]
    rng = np.random.default_rng(seed + 1)
    grads = [T.tensor(rng.standard_normal(tuple(t.shape)), dtype=t.dtype) for t in outs]
    T.autograd.backward(outs, grads)
    d["grads"] = [p.grad for p in m.parameters()] + [xs.grad] + [h.grad for h in hs]
    return d


RNG = np.random.default_rng(0)
X = RNG.uniform(-1, 1, (4, 3, 4))          # (L, N, H_in)
XB = np.ascontiguousarray(X.transpose(1, 0, 2))  # batch_first
XU = X[:, 0]                               # unbatched (L, H_in)
H1 = RNG.uniform(-1, 1, (1, 3, 5))
H2B = RNG.uniform(-1, 1, (4, 3, 5))        # 2 layers x 2 directions
HP = RNG.uniform(-1, 1, (2, 3, 3))         # proj_size 3, 2 layers
HU = RNG.uniform(-1, 1, (1, 5))

LAYERS = [
    # name, class, ctor args, ctor kwargs, input, h0, c0, packed (lengths, enforce_sorted),
    # dtype.  Each row is one compiled configuration (compiles dominate the run time), so the
    # rows combine features.
    ("lstm", "LSTM", (4, 5), {}, X, None, None, None, "float32"),
    ("lstm_2l_bidir_h0_eval_dropout", "LSTM", (4, 5),
     dict(num_layers=2, bidirectional=True, dropout=0.5), X, H2B, H2B, None, "float32"),
    ("lstm_proj_2l_batch_first", "LSTM", (4, 5), dict(proj_size=3, num_layers=2,
                                                      batch_first=True),
     XB, HP, H2B[:2], None, "float32"),
    ("lstm_unbatched_bf_nobias", "LSTM", (4, 5), dict(batch_first=True, bias=False), XU, HU, HU,
     None, "float32"),
    ("lstm_packed_unsorted_bidir_h0", "LSTM", (4, 5), dict(bidirectional=True), X, H2B[:2],
     H2B[:2], ([3, 4, 1], False), "float32"),
    ("gru_2l_bidir_bf_h0", "GRU", (4, 5), dict(num_layers=2, bidirectional=True,
                                               batch_first=True), XB, H2B, None, None, "float32"),
    ("gru_packed_nobias", "GRU", (4, 5), dict(bias=False), X, None, None, ([4, 2, 2], True),
     "float32"),
    ("rnn_relu_2l_h0", "RNN", (4, 5, 2, "relu"), {}, X, H2B[:2], None, None, "float32"),
    ("lstm_packed_2l_h0_f64", "LSTM", (4, 5), dict(num_layers=2), X, H2B[:2], H2B[:2],
     ([4, 3, 1], True), "float64"),
    ("rnn_bidir_unsorted_f64", "RNN", (4, 5), dict(bidirectional=True), X, H2B[:2], None,
     ([2, 4, 3], False), "float64"),
]


@pytest.mark.parametrize("name,cls,args,kw,x,h0,c0,packed,dtype", cases(LAYERS))
def test_layer(name, cls, args, kw, x, h0, c0, packed, dtype):
    tol = F32 if dtype == "float32" else {}
    both(lambda T: run_layer(T, cls, args, kw, x, h0, c0, dtype, packed,
                             seed=seed_of(name) % 1000), **tol)


def test_dropout_one_in_training_zeroes_layer_inputs():
    # p=1 is deterministic: every layer after the first sees zeros
    both(lambda T: run_layer(T, "GRU", (4, 5), dict(num_layers=2, dropout=1.0), X, train=True),
         **F32)


def test_dropout_training_masks():
    """Layer 2 of a relu RNN with identity input weights returns its (non-negative) input, so
    the training output is the eval output times the dropout mask / (1 - p)."""
    p, n = 0.3, 8000
    m = TL_NN.RNN(4, 5, num_layers=2, nonlinearity="relu", dropout=p)
    with tl.no_grad():
        m.weight_ih_l1.copy_(tl.eye(5))
        m.weight_hh_l1.zero_()
        m.bias_ih_l1.zero_()
        m.bias_hh_l1.zero_()
    x = tl.tensor(np.random.default_rng(1).uniform(-1, 1, (4, n, 4)), dtype=tl.float32)
    m.requires_grad_(False)
    ref = m.eval()(x)[0].numpy()
    m.train()
    tl.manual_seed(0)
    a = m(x)[0].numpy()
    tl.manual_seed(0)
    b = m(x)[0].numpy()
    c = m(x)[0].numpy()
    np.testing.assert_array_equal(a, b)          # the default generator drives the masks
    assert not np.array_equal(a, c)
    live = ref > 1e-6
    ratio = a[live] / ref[live]
    kept = np.isclose(ratio, 1 / (1 - p), rtol=1e-4)
    assert np.all(kept | (ratio == 0))
    check_frequencies((~kept).mean(), p, kept.size, "dropped")
    m.eval()
    np.testing.assert_array_equal(m(x)[0].numpy(), ref)


# --- cells ---------------------------------------------------------------------------------------

XC = RNG.uniform(-1, 1, (3, 4))
HC = RNG.uniform(-1, 1, (3, 5))
CC = RNG.uniform(-1, 1, (3, 5))

CELLS = [
    # name, class, ctor kwargs, input, states, dtypes
    ("rnncell", "RNNCell", {}, XC, [HC], ("float32",)),
    ("rnncell_relu_unbatched_zero_h", "RNNCell", dict(nonlinearity="relu"), XC[0], [],
     ("float32", "float64")),
    ("lstmcell", "LSTMCell", {}, XC, [HC, CC], ("float32", "float64")),
    ("lstmcell_zero_h_nobias", "LSTMCell", dict(bias=False), XC, [], ("float32",)),
    ("lstmcell_unbatched", "LSTMCell", {}, XC[0], [HC[0], CC[0]], ("float32",)),
    ("grucell", "GRUCell", {}, XC, [HC], ("float32", "float64")),
    ("grucell_unbatched_nobias", "GRUCell", dict(bias=False), XC[0], [HC[0]], ("float32",)),
]


def run_cell(T, cls, kw, x, states, dtype, seed):
    m = make(T, cls, (4, 5), kw, weights_of(cls, (4, 5), kw, seed), dtype)
    xs = leaf(T, x, dtype)
    hs = [leaf(T, h, dtype) for h in states]
    hx = None if not hs else tuple(hs) if cls == "LSTMCell" else hs[0]
    out = m(xs, hx)
    outs = list(out) if isinstance(out, tuple) else [out]
    rng = np.random.default_rng(seed)
    T.autograd.backward(outs, [T.tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype)
                               for o in outs])
    return {"out": out, "grads": [p.grad for p in m.parameters()] + [xs.grad] +
            [h.grad for h in hs]}


@pytest.mark.parametrize("name,cls,kw,x,states,dtype", [
    pytest.param(*row[:5], dt, id=f"{row[0]}-{dt}") for row in CELLS for dt in row[5]])
def test_cell(name, cls, kw, x, states, dtype):
    tol = F32 if dtype == "float32" else {}
    both(lambda T: run_cell(T, cls, kw, x, states, dtype, seed_of(name) % 1000), **tol)


# --- functionals ---------------------------------------------------------------------------------

def _params(T, cls, kw, dtype="float64"):
    m = make(T, cls, (4, 5), kw, weights_of(cls, (4, 5), kw, 7), dtype)
    return list(m.parameters())


def _fn(T, name):
    return getattr(torch, name) if T is torch else getattr(tl_ops, name)


FUNCTIONALS = [
    ("lstm_proj_batch_first", lambda T: _fn(T, "lstm")(
        leaf(T, XB, "float64"), (T.tensor(H1[..., :3], dtype=T.float64),
                                 T.tensor(H1, dtype=T.float64)),
        _params(T, "LSTM", dict(proj_size=3)), True, 1, 0.0, False, False, True)),
    ("gru_packed", lambda T: _fn(T, "gru")(
        leaf(T, X.reshape(12, 4)[:7], "float64"), T.tensor([3, 2, 1, 1]),
        T.tensor(H1, dtype=T.float64), _params(T, "GRU", {}), True, 1, 0.0, False, False)),
    ("rnn_relu", lambda T: _fn(T, "rnn_relu")(
        leaf(T, X, "float64"), T.tensor(H1, dtype=T.float64),
        _params(T, "RNN", dict(nonlinearity="relu")), True, 1, 0.0, False, False, False)),
    ("gru_cell", lambda T: _fn(T, "gru_cell")(
        leaf(T, XC, "float64"), leaf(T, HC, "float64"), *_params(T, "GRUCell", {}))),
    ("lstm_cell", lambda T: _fn(T, "lstm_cell")(
        leaf(T, XC, "float64"), (leaf(T, HC, "float64"), leaf(T, CC, "float64")),
        *_params(T, "LSTMCell", {}))),
    ("rnn_tanh_cell_nobias", lambda T: _fn(T, "rnn_tanh_cell")(
        leaf(T, XC, "float64"), leaf(T, HC, "float64"), *_params(T, "RNNCell", {})[:2])),
    ("rnn_relu_cell", lambda T: _fn(T, "rnn_relu_cell")(
        leaf(T, XC, "float64"), leaf(T, HC, "float64"),
        *_params(T, "RNNCell", dict(nonlinearity="relu")))),
]


@pytest.mark.parametrize("name,fn", cases(FUNCTIONALS))
def test_functional(name, fn):
    both(fn)


def test_gradcheck_gru():
    rng = np.random.default_rng(3)

    def t(*shape, grad=True):
        return tl.tensor(rng.uniform(-1, 1, shape), dtype=tl.float64, requires_grad=grad)

    params = [t(9, 2), t(9, 3), t(9, grad=False), t(9, grad=False)]

    def f(x, h0, w_hh):
        ps = [params[0], w_hh] + params[2:]
        return tl_ops.gru(x, h0, ps, True, 1, 0.0, False, False, False)[0]
    assert tl.autograd.gradcheck(f, (t(3, 2, 2), t(1, 2, 3), params[1]))


def test_gradcheck_packed_bidirectional():
    rng = np.random.default_rng(4)
    w = [tl.tensor(rng.uniform(-1, 1, s), dtype=tl.float64) for s in ((3, 2), (3, 3)) * 2]

    def f(x):
        p = tl_utils.pack_padded_sequence(x, [1, 3], enforce_sorted=False)
        out, h = tl_ops.rnn_tanh(p.data, p.batch_sizes, tl.zeros(2, 2, 3, dtype=tl.float64), w,
                                 False, 1, 0.0, False, True)
        return tl_utils.pad_packed_sequence(tl_utils.PackedSequence(
            out, p.batch_sizes, p.sorted_indices, p.unsorted_indices))[0]
    x = tl.tensor(rng.uniform(-1, 1, (3, 2, 2)), dtype=tl.float64, requires_grad=True)
    assert tl.autograd.gradcheck(f, (x,))


def test_traced_backward_matches_eager():
    """The same eager code traces (whole-step compile): a packed GRU's backward inside jax.jit
    gives the eager gradients."""
    m = TL_NN.GRU(4, 5).requires_grad_(False)

    def grad_of_input(x):
        x.requires_grad_(True)
        p = tl_utils.pack_padded_sequence(x, [3, 4, 1], enforce_sorted=False)
        out, h = m(p)
        ((tl_utils.pad_packed_sequence(out)[0] ** 2).sum() + h.sum()).backward()
        return x.grad

    x = tl.tensor(X, dtype=tl.float32)
    eager = grad_of_input(x.clone()).numpy()
    traced = jax.jit(lambda a: grad_of_input(tl.Tensor._wrap(a))._value())(x._value())
    np.testing.assert_allclose(np.asarray(traced), eager, rtol=1e-5, atol=1e-6)


def test_backward_from_kept_residuals(monkeypatch):
    """NOTE [ kept residuals ]: a recorded stack keeps its VJP's residuals until a backward
    frees them; the gradients (node by node, fused, and of second order, which differentiates
    the primals) equal those of the VJP at the primals, computed with nothing kept."""
    from torchlike import _lazy
    from torchlike.autograd import fused
    was_lazy = _lazy.enabled   # (eager recording: a lazy segment keeps no residuals)
    _lazy.enable(False)
    try:
        _kept_residuals_check(monkeypatch, fused)
    finally:
        _lazy.enable(was_lazy)


def _kept_residuals_check(monkeypatch, fused):
    m = TL_NN.LSTM(3, 4, num_layers=2)
    x = tl.tensor(X[..., :3], dtype=tl.float32, requires_grad=True)

    def grads(fuse):
        monkeypatch.setattr(fused, "enabled", fuse)
        monkeypatch.setattr(fused, "fuse_after", 1)
        out, (h, c) = m(x)
        node = out.grad_fn
        kept = node._residuals is not None
        first = tl.autograd.grad((out ** 2).sum() + c.sum(), [x, *m.parameters()],
                                 create_graph=True)
        second = tl.autograd.grad(sum((g ** 2).sum() for g in first), x)[0]
        out, _ = m(x)
        x.grad = None
        (out ** 2).sum().backward()
        freed = out.grad_fn._residuals is None
        return kept, freed, [g.detach().numpy() for g in first] + [second.numpy(),
                                                                   x.grad.numpy()]

    for fuse in (False, True):
        kept, freed, with_residuals = grads(fuse)
        assert kept and freed
        monkeypatch.setattr(tl_ops._ONEDNN_STACK, "residuals", False)
        kept, _, recomputed = grads(fuse)
        monkeypatch.setattr(tl_ops._ONEDNN_STACK, "residuals", True)
        assert not kept
        for a, b in zip(with_residuals, recomputed):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _stack_programs():
    """Programs compiled so far for the stacks (forwards, with residuals, backwards)."""
    return sum(f._cache_size() for op in (tl_ops._ONEDNN_STACK, tl_ops._NATIVE_STACK)
               for cache in (op._fwd, op._bwd) for f in cache.values()
               if hasattr(f, "_cache_size"))


def _stack_node(t):
    """The node of the stack op under ``t`` (its output, or that cat, transposed)."""
    node = t.grad_fn
    while node._op not in (tl_ops._ONEDNN_STACK, tl_ops._NATIVE_STACK):
        node = node.next_functions[0][0]
    return node


@pytest.mark.parametrize("cls,kw,lengths", [
    ("LSTM", dict(num_layers=2), (4, 2, 3)),
    ("GRU", dict(bidirectional=True, batch_first=True), (4, 1))])
def test_a_short_window_runs_a_longer_ones_program(monkeypatch, short_calls, cls, kw, lengths):
    """NOTE [ a recurrence's short window in a bucket ] in torchlike/_ops/rnn.py: after a call
    over more steps, a call over fewer (a stream's remainder) runs the longer call's programs,
    forward and backward, with its outputs, final states, grad_fn names and every gradient
    PyTorch's; create_graph differentiates the call's own operands (as with the bucket off);
    after RENT calls a length compiles its own programs."""
    bf = kw.get("batch_first", False)
    x = RNG.uniform(-1, 1, (max(lengths), 3, 4))

    def call(T, n, names):
        xs = x[:n].transpose(1, 0, 2) if bf else x[:n]
        d = run_layer(T, cls, (4, 5), kw, np.ascontiguousarray(xs), seed=n)
        names.append(d["out"].grad_fn.name())
        return d

    for n in lengths:
        names = []
        programs = _stack_programs()
        both(lambda T: call(T, n, names), **F32)
        assert names[0] == names[1]
        assert (_stack_programs() == programs) == (n < lengths[0])   # (torch's, then ours)
    n = min(set(range(1, lengths[0])) - set(lengths))   # a length not met yet
    m = make(tl, cls, (4, 5), kw, weights_of(cls, (4, 5), kw, 0), "float32")
    xs = tl.tensor(np.ascontiguousarray(x[:n].transpose(1, 0, 2) if bf else x[:n]),
                   dtype=tl.float32, requires_grad=True)

    def second_order():
        out = m(xs)[0]
        (first,) = tl.autograd.grad((out ** 2).sum(), xs, create_graph=True)
        return tl.autograd.grad((first ** 2).sum(), xs)[0].numpy()
    bucketed = second_order()   # (the first of its RENT calls in the bucket)
    node = _stack_node(m(xs)[0])
    assert node._cut is not None and node._saved_shapes()[0] == ("input[0]", tuple(xs.shape))
    programs = _stack_programs()
    assert _stack_node(m(xs)[0])._cut is None   # the rent paid: its own programs
    assert _stack_programs() > programs
    for op in (tl_ops._ONEDNN_STACK, tl_ops._NATIVE_STACK):
        monkeypatch.setattr(op, "bucket", None)
    np.testing.assert_allclose(bucketed, second_order(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_cell_takes_one_sigmoid_with_the_stack_step_numbers(mode):
    """NOTE [ one sigmoid for a cell's gates ]: a cell's backward at the primals evaluates one
    sigmoid (over every gate that has one), and gives the numbers of the stacks' step, which
    takes a sigmoid per gate (to an ulp: XLA may contract a multiply-add differently)."""
    gates = 4 if mode == "LSTM" else 3
    rng = np.random.default_rng(seed_of(mode))
    x, h, c = (rng.standard_normal((5, n)) * 3 for n in (3, 4, 4))
    w_ih, w_hh = rng.standard_normal((gates * 4, 3)), rng.standard_normal((gates * 4, 4))
    b_ih, b_hh = rng.standard_normal(gates * 4), rng.standard_normal(gates * 4)
    states = (h, c) if mode == "LSTM" else (h,)
    precision = tl_ops._Precision((jax.lax.Precision.HIGHEST, None))

    def cell(x, *rest):   # as the cell op returns it: (h', c') for LSTM
        out = tl_ops._cell(x, *rest, mode=mode, has_h=True, bias=True, unbatched=False,
                           precision=precision)
        return (out[0] * jax.numpy.tanh(out[1]), out[1]) if mode == "LSTM" else out

    def step(x, *rest):
        *hc, w_ih, w_hh, b_ih, b_hh = rest
        xp = tl_ops._mm(x, w_ih, precision, b_ih)
        h2, c2 = tl_ops._step(mode, xp, hc[0], hc[1] if mode == "LSTM" else None, w_hh, b_hh,
                              None, precision)
        return (h2, c2) if mode == "LSTM" else h2

    args = (x, *states, w_ih, w_hh, b_ih, b_hh)
    cot = jax.tree_util.tree_map(np.ones_like, cell(*args))

    def backward(fn):
        return lambda *a: jax.vjp(fn, *a)[1](cot)
    jaxpr = str(jax.make_jaxpr(backward(cell))(*args))
    assert jaxpr.count("logistic") == 1, jaxpr
    assert str(jax.make_jaxpr(backward(step))(*args)).count("logistic") == gates - 1
    for fn in (lambda f: f, backward):
        for a, b in zip(jax.tree_util.tree_leaves(jax.jit(fn(cell))(*args)),
                        jax.tree_util.tree_leaves(jax.jit(fn(step))(*args))):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("mode,reverse,bias,packed", [
    ("LSTM", False, True, False), ("LSTM", True, False, True), ("GRU", True, True, True),
    ("RNN_TANH", False, False, False), ("RNN_RELU", True, True, False)])
def test_layer_derivative_is_jaxs_of_its_loop(mode, reverse, bias, packed):
    """NOTE [ a recurrent layer's derivative ]: the layer's loop with its own derivative gives
    the derivatives jax finds for the plain loop of the same step (packed sequences' steps
    masked): reverse mode with respect to every operand and to some (the others' tangents
    symbolic zeros), forward mode, and the second order."""
    gates = {"LSTM": 4, "GRU": 3}.get(mode, 1)
    rng = np.random.default_rng(seed_of(f"layer_scan {mode} {reverse} {bias}"))
    xp, h, w_hh = (rng.standard_normal(s) for s in ((5, 3, 4 * gates), (3, 4), (4 * gates, 4)))
    c = rng.standard_normal((3, 4)) if mode == "LSTM" else None
    b_hh = rng.standard_normal(4 * gates) if bias else None
    mask = np.arange(5)[:, None] < np.array([5, 3, 1]) if packed else None   # (L, N) steps run
    precision = tl_ops._Precision((jax.lax.Precision.HIGHEST, None))

    def ruled(xp, h, c, w_hh, b_hh):
        return tl_ops._layer_scan(xp, h, c, w_hh, b_hh, mask, mode, reverse, precision)

    def plain(xp, h, c, w_hh, b_hh):
        body = functools.partial(tl_ops._masked_step, mode, w_hh, b_hh, None, precision)
        (h, c), out = jax.lax.scan(body, (h, c), (xp, mask), reverse=reverse)
        return out, h, c

    args = (xp, h, c, w_hh, b_hh)
    cot = tuple(None if a is None else rng.standard_normal(a.shape) for a in plain(*args))
    tangents = tuple(None if a is None else rng.standard_normal(a.shape) for a in args)

    def close(a, b):
        for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
            np.testing.assert_allclose(x, y, **F32)

    def partial(fn, at):   # fn of the operands at ``at``, the others held
        def of(*some):
            full = list(args)
            for i, v in zip(at, some):
                full[i] = v
            return fn(*full)
        return of

    every = tuple(i for i, a in enumerate(args) if a is not None)
    for at in (every, (0, 1) if reverse else (1, 3)):   # the weight's or the input's tangent 0
        some = [args[i] for i in at]
        close(*(jax.vjp(partial(fn, at), *some)[1](cot) for fn in (ruled, plain)))
    close(*(jax.jvp(partial(fn, every), [args[i] for i in every],
                    [tangents[i] for i in every]) for fn in (ruled, plain)))

    def second(fn):   # d/dW_hh of |d/dW_hh <out, cot>|^2
        def first(w):
            return jax.vjp(lambda w: fn(xp, h, c, w, b_hh), w)[1](cot)[0]
        return jax.grad(lambda w: (first(w) ** 2).sum())(w_hh)
    close(second(ruled), second(plain))


# --- module surface ------------------------------------------------------------------------------

SURFACE = [
    ("RNN", (4, 5), dict(num_layers=2, nonlinearity="relu", bias=False, dropout=0.25)),
    ("RNN", (4, 5, 2, "relu", False), {}),
    ("LSTM", (4, 5), dict(num_layers=2, batch_first=True)),
    ("LSTM", (4, 5), dict(proj_size=2, bidirectional=True, num_layers=2)),
    ("LSTM", (4, 5), dict(bias=False, proj_size=3)),
    ("GRU", (4, 5), dict(bidirectional=True, batch_first=True, dropout=0.5, num_layers=3)),
    ("RNNCell", (4, 5), dict(nonlinearity="relu", bias=False)),
    ("LSTMCell", (4, 5), {}),
    ("GRUCell", (4, 5), dict(bias=False)),
]


@pytest.mark.parametrize("cls,args,kw", SURFACE)
def test_surface(cls, args, kw):
    def go(T):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = getattr(nn_of(T), cls)(*args, **kw)
        res = {"repr": repr(m), "keys": list(m.state_dict()),
               "shapes": [tuple(p.shape) for p in m.parameters()],
               "dtypes": [str(p.dtype) for p in m.to(T.float64).parameters()]}
        if hasattr(m, "all_weights"):
            res["all_weights"] = [[tuple(w.shape) for w in ws] for ws in m.all_weights]
            res["flat"] = list(m._flat_weights_names)
            m.flatten_parameters()
        return res
    ref, got = both(go)
    assert got["repr"].startswith(cls + "(")


@pytest.mark.parametrize("cls", NAMES)
def test_default_init_and_factory_kwargs(cls):
    dtype = tl.float64 if cls == "RNNCell" else tl.float32
    tl.manual_seed(0)
    m = getattr(TL_NN, cls)(4, 5, dtype=dtype, device="cpu")
    bound = 1 / np.sqrt(5)
    for p in m.parameters():
        assert p.dtype is dtype and p.requires_grad and str(p.device) == "cpu"
    v = np.concatenate([p.detach().numpy().ravel() for p in m.parameters()])
    # U(-1/sqrt(5), 1/sqrt(5)), whose std is bound / sqrt(3)
    assert np.all(np.abs(v) <= bound) and v.std() > bound / 3


def test_dropout_warning_and_default_state():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        TL_NN.GRU(4, 5, dropout=0.5)
    m = TL_NN.LSTM(4, 5)
    out, (h, c) = m(tl.zeros(2, 3, 4))
    assert out.shape == (2, 3, 5) and h.shape == c.shape == (1, 3, 5)
    with tl.no_grad():
        assert not m(tl.zeros(2, 3, 4))[0].requires_grad


# --- errors --------------------------------------------------------------------------------------

def _call(cls, args, x, hx=None, **kw):
    def go(T):
        m = getattr(nn_of(T), cls)(*args, **kw)
        inp = x(T) if callable(x) else T.tensor(x, dtype=T.float32)
        h = hx(T) if callable(hx) else hx
        return m(inp) if h is None else m(inp, h)
    return go


def _z(*shape, dtype="float32"):
    return lambda T: T.zeros(*shape, dtype=getattr(T, dtype))


ERRORS = [
    ("input_size", _call("LSTM", (4, 5), np.zeros((3, 2, 3)))),
    ("input_dim_lstm", _call("LSTM", (4, 5), np.zeros((3, 2, 2, 4)))),
    ("input_dim_rnn", _call("RNN", (4, 5), np.zeros((3, 2, 2, 4)))),
    ("input_dim_gru", _call("GRU", (4, 5), np.zeros((3, 2, 2, 4)))),
    ("input_dtype", _call("GRU", (4, 5), _z(3, 2, 4, dtype="float64"))),
    ("empty_sequence", _call("GRU", (4, 5), np.zeros((0, 2, 4)))),
    ("hidden_size", _call("GRU", (4, 5), np.zeros((3, 2, 4)), _z(1, 3, 5))),
    ("hidden_batched_2d", _call("GRU", (4, 5), np.zeros((3, 2, 4)), _z(3, 5))),
    ("hidden_unbatched_3d", _call("RNN", (4, 5), np.zeros((3, 4)), _z(1, 1, 5))),
    ("hidden_dtype", _call("GRU", (4, 5), np.zeros((3, 2, 4)), _z(1, 2, 5, dtype="float64"))),
    ("lstm_h_size", _call("LSTM", (4, 5), np.zeros((3, 2, 4)),
                          lambda T: (T.zeros(1, 3, 5), T.zeros(1, 3, 5)))),
    ("lstm_c_size", _call("LSTM", (4, 5), np.zeros((3, 2, 4)),
                          lambda T: (T.zeros(1, 2, 5), T.zeros(1, 3, 5)))),
    ("lstm_proj_h_size", _call("LSTM", (4, 5), np.zeros((3, 2, 4)),
                               lambda T: (T.zeros(1, 2, 5), T.zeros(1, 2, 5)), proj_size=2)),
    ("lstm_hx_dims", _call("LSTM", (4, 5), np.zeros((3, 2, 4)),
                           lambda T: (T.zeros(2, 5), T.zeros(1, 2, 5)))),
    ("lstm_unbatched_hx_dims", _call("LSTM", (4, 5), np.zeros((3, 4)),
                                     lambda T: (T.zeros(1, 2, 5), T.zeros(1, 3, 5)))),
    ("bf_hidden_batch", _call("GRU", (4, 5), np.zeros((2, 3, 4)), _z(1, 3, 5),
                              batch_first=True)),
    ("packed_input_size", _call("GRU", (4, 5), lambda T: utils_of(T).pack_sequence(
        [T.zeros(3, 3), T.zeros(2, 3)]))),
    ("cell_input_size", _call("RNNCell", (4, 5), np.zeros((2, 3)))),
    ("cell_hidden_size", _call("RNNCell", (4, 5), np.zeros((2, 4)), _z(2, 4))),
    ("cell_batch", _call("GRUCell", (4, 5), np.zeros((2, 4)), _z(3, 5))),
    ("cell_batch_1d_h", _call("GRUCell", (4, 5), np.zeros((2, 4)), _z(5))),
    ("cell_unbatched_2d_h", _call("GRUCell", (4, 5), np.zeros(4), _z(2, 5))),
    ("cell_input_dim", _call("RNNCell", (4, 5), np.zeros((2, 2, 4)))),
    ("cell_hidden_dim", _call("GRUCell", (4, 5), np.zeros(4), _z(2, 2, 5))),
    ("lstmcell_hx_dim", _call("LSTMCell", (4, 5), np.zeros((2, 4)),
                              lambda T: (T.zeros(2, 2, 5), T.zeros(2, 5)))),
    ("lstmcell_c_size", _call("LSTMCell", (4, 5), np.zeros((2, 4)),
                              lambda T: (T.zeros(2, 5), T.zeros(2, 4)))),
    ("lstmcell_c_batch", _call("LSTMCell", (4, 5), np.zeros((2, 4)),
                               lambda T: (T.zeros(2, 5), T.zeros(3, 5)))),
    ("lstmcell_one_state", _call("LSTMCell", (4, 5), np.zeros((2, 4)),
                                 lambda T: (T.zeros(2, 5),))),
    ("cell_dtype", _call("GRUCell", (4, 5), _z(2, 4, dtype="float64"))),
    ("cell_hidden_dtype", _call("RNNCell", (4, 5), np.zeros((2, 4)),
                                _z(2, 5, dtype="float64"))),
    ("cell_bad_nonlinearity", _call("RNNCell", (4, 5), np.zeros((2, 4)), nonlinearity="foo")),
    ("ctor_proj_too_big", lambda T: T.nn.LSTM(4, 5, proj_size=5) if T is torch
     else TL_NN.LSTM(4, 5, proj_size=5)),
]
CTOR_ERRORS = [
    ("proj_negative", "LSTM", (4, 5), dict(proj_size=-1)),
    ("proj_gru", "GRU", (4, 5), dict(proj_size=2)),
    ("proj_rnn", "RNN", (4, 5), dict(proj_size=2)),
    ("dropout_range", "GRU", (4, 5), dict(dropout=1.5)),
    ("dropout_bool", "GRU", (4, 5), dict(dropout=True)),
    ("hidden_float", "GRU", (4, 5.0), {}),
    ("hidden_zero", "GRU", (4, 0), {}),
    ("input_zero", "GRU", (0, 3), {}),
    ("layers_zero", "GRU", (4, 3), dict(num_layers=0)),
    ("bias_int", "LSTM", (4, 3), dict(bias=1)),
    ("batch_first_int", "LSTM", (4, 3), dict(batch_first=1)),
    ("nonlinearity", "RNN", (4, 3), dict(nonlinearity="sigmoid")),
]


@pytest.mark.parametrize("name,fn", cases(ERRORS))
def test_errors(name, fn):
    same(fn, raises=True)


@pytest.mark.parametrize("name,cls,args,kw", cases(CTOR_ERRORS))
def test_constructor_errors(name, cls, args, kw):
    same(lambda T: getattr(nn_of(T), cls)(*args, **kw), raises=True)


# --- torch.nn.utils.rnn --------------------------------------------------------------------------

SEQS = [RNG.uniform(-1, 1, (n, 2)) for n in (3, 1, 4)]


def seqs(T, dtype="float64"):
    return [leaf(T, s, dtype) for s in SEQS]


def packed_fields(p):
    return {"data": p.data, "batch_sizes": p.batch_sizes, "sorted": p.sorted_indices,
            "unsorted": p.unsorted_indices}


def with_grads(res, leaves, seed=5):
    """Backward through every float Tensor in ``res`` with random upstream gradients."""
    outs = [t for t in (res.values() if isinstance(res, dict) else res)
            if hasattr(t, "grad_fn") and t.grad_fn is not None]
    rng = np.random.default_rng(seed)
    T = torch if isinstance(outs[0], torch.Tensor) else tl
    T.autograd.backward(outs, [T.tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype)
                               for o in outs])
    return {"res": res, "grads": [x.grad for x in leaves]}


def _pad(kw):
    def go(T):
        s = seqs(T)
        return with_grads([utils_of(T).pad_sequence(s, **kw)], s)
    return go


def _pack_padded(lengths, batch_first=False, enforce_sorted=True):
    def go(T):
        x = leaf(T, XB if batch_first else X, "float64")
        p = utils_of(T).pack_padded_sequence(x, lengths, batch_first, enforce_sorted)
        return with_grads(packed_fields(p), [x])
    return go


def _round_trip(lengths, enforce_sorted, **kw):
    def go(T):
        U = utils_of(T)
        x = leaf(T, X, "float64")
        p = U.pack_padded_sequence(x, T.tensor(lengths), enforce_sorted=enforce_sorted)
        padded, lens = U.pad_packed_sequence(p, **kw)
        return with_grads({"padded": padded, "lengths": lens}, [x])
    return go


def _pack_sequence(enforce_sorted):
    def go(T):
        U = utils_of(T)
        s = seqs(T)
        p = U.pack_sequence(s, enforce_sorted=enforce_sorted)
        back = U.unpack_sequence(p)
        return with_grads(back + [p.data], s)
    return go


def _unpad(batch_first):
    def go(T):
        U = utils_of(T)
        s = seqs(T)
        padded = U.pad_sequence(s, batch_first=batch_first)
        out = U.unpad_sequence(padded, T.tensor([3, 1, 4]), batch_first=batch_first)
        return with_grads(out + [padded.shape], s)
    return go


UTILS = [
    ("pad", _pad({})),
    ("pad_batch_first_value", _pad(dict(batch_first=True, padding_value=-2.5))),
    ("pad_left", _pad(dict(padding_side="left"))),
    ("pad_left_batch_first", _pad(dict(batch_first=True, padding_side="left"))),
    ("pad_ints", lambda T: utils_of(T).pad_sequence([T.arange(3), T.arange(2)],
                                                    padding_value=-1.5)),
    ("pad_mixed_dtypes_1d", lambda T: utils_of(T).pad_sequence(
        [T.ones(3), T.ones(2, dtype=T.float64)])),
    ("pad_broadcast", lambda T: utils_of(T).pad_sequence([T.ones(3, 2), T.full((2, 1), 3.0)])),
    ("pad_tensor_rows", lambda T: utils_of(T).pad_sequence(T.ones(3, 2))),
    ("pad_generator", lambda T: utils_of(T).pad_sequence(t for t in [T.ones(2), T.ones(1)])),
    ("pack_sorted", _pack_padded([4, 3, 1])),
    ("pack_sorted_ties", _pack_padded([4, 2, 2])),
    ("pack_batch_first", _pack_padded([4, 3, 1], batch_first=True)),
    ("pack_unsorted", _pack_padded([2, 4, 3], enforce_sorted=False)),
    ("pack_unsorted_bf_tensor", lambda T: _pack_padded(T.tensor([1, 4, 4]), True, False)(T)),
    ("pack_float_lengths", _pack_padded([3.7, 2.0, 1.0])),
    ("round_trip", _round_trip([4, 3, 1], True)),
    ("round_trip_unsorted_bf", _round_trip([2, 4, 3], False, batch_first=True)),
    ("round_trip_total_length", _round_trip([3, 1, 2], False, padding_value=-1.0,
                                            total_length=6)),
    ("pack_sequence", _pack_sequence(False)),
    ("unpad", _unpad(False)),
    ("unpad_batch_first", _unpad(True)),
    ("invert_permutation", lambda T: [utils_of(T).invert_permutation(T.tensor([2, 0, 3, 1])),
                                      utils_of(T).invert_permutation(None)]),
    ("packed_to_float", lambda T: packed_fields(utils_of(T).pack_padded_sequence(
        T.tensor(X), [4, 2, 1], enforce_sorted=False).float())),
    ("packed_from_pair", lambda T: packed_fields(utils_of(T).PackedSequence(
        (T.ones(3, 2), T.tensor([2, 1]))))),
    ("packed_new_sorted", lambda T: packed_fields(utils_of(T).PackedSequence(
        T.ones(3, 2), T.tensor([2, 1]), T.tensor([1, 0])))),
]


@pytest.mark.parametrize("name,fn", cases(UTILS))
def test_utils(name, fn):
    both(fn)


def test_packed_sequence_type():
    p = tl_utils.pack_sequence([tl.ones(2), tl.ones(1)])
    assert isinstance(p, tuple) and p._fields == ("data", "batch_sizes", "sorted_indices",
                                                   "unsorted_indices")
    assert repr(p).startswith("PackedSequence(data=tensor(")
    assert p.to(tl.float32) is p and p.double().data.dtype is tl.float64
    assert str(p.batch_sizes.device) == "cpu" and p.batch_sizes.dtype is tl.int64


UTIL_ERRORS = [
    ("unsorted", lambda T: utils_of(T).pack_padded_sequence(T.zeros(4, 3, 2), [2, 4, 1])),
    ("zero_length", lambda T: utils_of(T).pack_padded_sequence(T.zeros(4, 3, 2), [4, 2, 0])),
    ("zero_first_unsorted", lambda T: utils_of(T).pack_padded_sequence(T.zeros(3, 2), [0, 2])),
    ("zero_lengths_unsorted", lambda T: utils_of(T).pack_padded_sequence(
        T.zeros(3, 2, 1), [0, 0], enforce_sorted=False)),
    ("lengths_count", lambda T: utils_of(T).pack_padded_sequence(T.zeros(3, 2, 1), [3, 2, 1])),
    ("lengths_2d", lambda T: utils_of(T).pack_padded_sequence(T.zeros(3, 2, 1),
                                                              T.tensor([[3, 2]]))),
    ("empty", lambda T: utils_of(T).pack_padded_sequence(T.zeros(3, 0, 1), [])),
    ("input_1d", lambda T: utils_of(T).pack_padded_sequence(T.zeros(3), T.tensor([3]))),
    ("total_length", lambda T: utils_of(T).pad_packed_sequence(
        utils_of(T).pack_padded_sequence(T.zeros(4, 3, 2), [4, 2, 1]), total_length=3)),
    ("pad_empty", lambda T: utils_of(T).pad_sequence([])),
    ("pad_not_iterable", lambda T: utils_of(T).pad_sequence(5)),
    ("pad_side", lambda T: utils_of(T).pad_sequence([T.ones(2)], padding_side="middle")),
    ("pad_trailing", lambda T: utils_of(T).pad_sequence([T.ones(3, 2), T.ones(2, 3)])),
    ("pad_broadcast_bigger", lambda T: utils_of(T).pad_sequence([T.ones(3, 2), T.ones(2, 2, 2)])),
    ("unpad_lengths", lambda T: utils_of(T).unpad_sequence(T.zeros(3, 2, 4),
                                                           T.tensor([3, 2, 1]))),
    ("unpad_leaf", lambda T: utils_of(T).unpad_sequence(T.zeros(3, 2, 1, requires_grad=True),
                                                        T.tensor([3, 2]))),
]


@pytest.mark.parametrize("name,fn", cases(UTIL_ERRORS))
def test_util_errors(name, fn):
    if name in ("input_1d", "unpad_leaf"):   # torch's wording comes from inner ops
        both(fn, raises=True)
    else:
        same(fn, raises=True)
