"""Robustness: what autograd keeps alive, and autograd misuse, against PyTorch.

Memory is counted with ``jax.live_arrays()``: the activations of a model whose hidden width no
other test uses are told apart by their shape.
"""
import gc

import jax
import pytest
import torch

import torchlike as tl
from torchlike.autograd import fused
from parity import both

HIDDEN = (23, 317)   # the activations' shape: batch 23, hidden width 317


def _live(shape=HIDDEN):
    gc.collect()
    return sum(1 for a in jax.live_arrays() if a.shape == shape)


def _model():
    tl.manual_seed(0)
    return tl.nn.Sequential(tl.nn.Linear(7, HIDDEN[1]), tl.nn.Tanh(), tl.nn.Linear(HIDDEN[1], 3))


@pytest.fixture
def data():
    return tl.randn(HIDDEN[0], 7), tl.randint(0, 3, (HIDDEN[0],))


@pytest.mark.parametrize("use_fused", [True, False], ids=["fused", "per_node"])
def test_backward_frees_what_it_saved(data, use_fused, monkeypatch):
    """After a backward without retain_graph nothing saved stays reachable, also from the
    detached losses a training loop keeps (the per-node walk and the fused program)."""
    monkeypatch.setattr(fused, "enabled", use_fused)
    x, y = data
    model = _model()
    opt = tl.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for step in range(3):
        opt.zero_grad()
        loss = tl.nn.functional.cross_entropy(model(x), y)
        if step == 0:
            assert _live() > 0   # the graph holds the activations until backward
        loss.backward()
        opt.step()
        losses.append(loss.detach())
        assert _live() == 0
    del loss
    assert _live() == 0


def test_retain_graph_keeps_what_it_saved(data):
    x, y = data
    model = _model()
    loss = tl.nn.functional.cross_entropy(model(x), y)
    loss.backward(retain_graph=True)
    assert _live() > 0
    loss.backward()   # a second backward still works
    assert _live() == 0


def test_detach_keeps_no_graph(data):
    """A detached output holds only its value: keeping the outputs of forwards that never run
    backward (an evaluation loop without no_grad) keeps no activations."""
    x, _ = data
    model = _model()
    kept = [model(x).detach() for _ in range(5)]
    kept += [model(x).data for _ in range(5)]
    assert _live() == 0
    assert all(not t.requires_grad and t.grad_fn is None for t in kept)


def test_custom_function_frees_saved_tensors():
    class Square(tl.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return 2 * a * g

    x = tl.randn(HIDDEN, requires_grad=True)
    y = Square.apply(x * 1.5)
    assert _live() == 3   # x, the saved x * 1.5, y
    y.sum().backward()
    assert _live() == 3   # x, y, x.grad
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.sum().backward()


# --- detach: storage shared, graph not (each row runs on torch and on torchlike) --------------

def _x(T):
    return T.tensor([1., 2., 3.], requires_grad=True)


def detach_then_inplace_with_grad(T):
    x, w = _x(T), T.tensor([1., 1., 1.], requires_grad=True)
    y = x * 2
    d = y.detach()
    d.add_(w)   # d records its own history; y keeps MulBackward0 and sees the new values
    return y.detach(), type(y.grad_fn).__name__, type(d.grad_fn).__name__


def detach_then_write_is_seen_by_backward(T):
    x = _x(T)
    y = x.exp()
    y.detach().add_(1)
    y.sum().backward()


def detach_then_inplace_on_original(T):
    x = _x(T)
    y = x * 3
    d = y.detach()
    y.mul_(2)
    y.sum().backward()
    return d, y._version, d._version, x.grad


def data_then_zero(T):
    y = _x(T) * 3
    d = y.data
    d.zero_()
    return y.detach(), y._version, d._version


def detach_then_set_data(T):
    y = _x(T) * 3
    d = y.detach()
    y.data = T.zeros(3)
    return y.detach(), d, type(y.grad_fn).__name__


def detach_then_view_write(T):
    x = _x(T)
    y = x * 3
    d = y.detach()
    v = y[0:2]
    d[0] = 7
    v.sum().backward()
    return v.detach(), x.grad


def view_then_detach_write(T):
    x = _x(T)
    y = x * 3
    v = y[1:]
    d = y.detach()
    d[2] = 5
    return v.detach(), y.detach()


def detach_then_write_through_a_view(T):
    x = T.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    y = x * 2
    d = y.detach()
    y[0].mul_(3)
    y.t().mul_(2)
    y.sum().backward()
    return d, type(y.grad_fn).__name__, x.grad


def view_of_an_alias_written_with_grad(T):
    w = T.tensor([1., 1.], requires_grad=True)
    a = (T.tensor([[1., 2.], [3., 4.]]) * 1).detach()
    a[0].mul_(w)
    a.sum().backward()
    return type(a.grad_fn).__name__, w.grad


def leaf_alias_inplace_with_grad(T):
    a = _x(T).detach()
    a.requires_grad_()
    a.add_(1)


@pytest.mark.parametrize("fn, raises", [
    (detach_then_inplace_with_grad, False), (detach_then_write_is_seen_by_backward, True),
    (detach_then_inplace_on_original, False), (data_then_zero, False),
    (detach_then_set_data, False), (detach_then_view_write, False),
    (view_then_detach_write, False), (detach_then_write_through_a_view, False),
    (view_of_an_alias_written_with_grad, False), (leaf_alias_inplace_with_grad, True),
], ids=lambda v: getattr(v, "__name__", ""))
def test_detach_shares_storage_not_graph(fn, raises):
    both(fn, raises=raises)


# --- misuse ----------------------------------------------------------------------------------

def complex_scalar_backward(T):
    x = T.tensor([1 + 2j], requires_grad=True)
    (x * x).sum().backward()


def complex_scalar_grad(T):
    x = T.tensor([1., 2.], requires_grad=True)
    return T.autograd.grad((x * (1 + 1j)).sum(), x)


def complex_backward_with_gradient(T):
    x = T.tensor([1 + 2j], requires_grad=True)
    (x * x).sum().backward(T.tensor(1 + 0j))
    return x.grad


@pytest.mark.parametrize("fn, raises", [
    (complex_scalar_backward, True), (complex_scalar_grad, True),
    (complex_backward_with_gradient, False),
], ids=lambda v: getattr(v, "__name__", ""))
def test_misuse(fn, raises):
    both(fn, raises=raises)


# --- inference tensors --------------------------------------------------------------------------

def _inference(T):
    with T.inference_mode():
        return T.ones(3)


def inference_tensors_made_inside(T):
    x, n = T.ones(3, requires_grad=True), T.ones(3)
    with T.inference_mode():
        made = [T.ones(3), n * 2, x * 2, n[0:2], n.detach(), T.tensor([1.]), T.randn(2)]
        with T.inference_mode(False):
            off = [T.ones(3), made[0] * 1, T.is_grad_enabled()]
        with T.no_grad():
            made.append(T.ones(1))
    a = made[0]
    outside = [a * 2, a[0:2], a.clone(), a.detach(), a.data, T.exp(a)]
    return ([t.is_inference() for t in made + outside], off[2],
            [t.is_inference() for t in off[:2]], (x * 2).requires_grad, T.is_inference(a))


def inference_version(T):
    return _inference(T)._version


def inference_saved_for_backward(T):
    x = T.ones(3, requires_grad=True)
    x.mul(_inference(T))


def inference_not_saved(T):
    x = T.ones(3, requires_grad=True)
    (x + _inference(T)).sum().backward()
    return x.grad


def inference_saved_by_function(T):
    class Mul(T.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(b)
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g * ctx.saved_tensors[0], None
    Mul.apply(T.ones(2, requires_grad=True), _inference(T))


def inference_requires_grad(T):
    _inference(T).requires_grad_()


def inference_parameter(T):
    T.nn.Parameter(_inference(T))


def inference_inplace_inside(T):
    a = _inference(T)
    with T.inference_mode():
        a.add_(1)
    return a


INPLACE = {
    "add_": lambda T, a: a.add_(1), "view_add_": lambda T, a: a.view(3).add_(1),
    "copy_": lambda T, a: a.copy_(T.zeros(3)), "setitem": lambda T, a: a.__setitem__(0, 1.),
    "zero_": lambda T, a: a.zero_(), "uniform_": lambda T, a: a.uniform_(),
    "clamp_": lambda T, a: a.clamp_(0, 1),
    "index_add_": lambda T, a: a.index_add_(0, T.tensor([0]), T.ones(1)),
    "no_grad_add_": lambda T, a: T.no_grad()(lambda: a.add_(1))(),
}


@pytest.mark.parametrize("fn, raises", [
    (inference_tensors_made_inside, False), (inference_version, True),
    (inference_saved_for_backward, True), (inference_not_saved, False),
    (inference_saved_by_function, True), (inference_requires_grad, True),
    (inference_parameter, True), (inference_inplace_inside, False),
], ids=lambda v: getattr(v, "__name__", ""))
def test_inference_tensors(fn, raises):
    both(fn, raises=raises)


@pytest.mark.parametrize("name", INPLACE)
def test_inference_tensor_inplace_outside_the_mode(name):
    """Refused as in PyTorch (which writes first and then raises: torchlike leaves the tensor
    as it was)."""
    both(lambda T: INPLACE[name](T, _inference(T)), raises=True)
    a = _inference(tl)
    with pytest.raises(RuntimeError):
        INPLACE[name](tl, a)
    assert a.tolist() == [1., 1., 1.]


# --- the fused backward's size cap (NOTE [ fused backward ]) -----------------------------------

def test_a_graph_over_the_cap_runs_node_by_node(monkeypatch):
    """A recurrent loop unrolled past fused.max_nodes is never compiled as one program (its
    compile grows faster than the graph): each step walks it node by node, with the gradients
    of the per-node walk; a short unroll still compiles once."""
    monkeypatch.setattr(fused, "max_nodes", 40)
    compiled = []
    original = fused._program
    monkeypatch.setattr(fused, "_program", lambda sig: compiled.append(len(sig[0])) or
                        original(sig))
    tl.manual_seed(0)
    cell = tl.nn.RNNCell(3, 5).double()
    xs = tl.randn(60, 2, 3, dtype=tl.float64)

    def grads(steps):
        cell.zero_grad(set_to_none=True)
        h = tl.zeros(2, 5, dtype=tl.float64)
        for x in xs[:steps]:
            h = cell(x, h)
        h.pow(2).sum().backward()
        return [p.grad.clone() for p in cell.parameters()]

    for _ in range(3):
        grads(3)
    assert len(compiled) == 1 and compiled[0] <= 40
    runs = [grads(60) for _ in range(3)]
    assert len(compiled) == 1
    monkeypatch.setattr(fused, "enabled", False)
    reference = grads(60)
    for run in runs:
        assert all(tl.equal(a, b) for a, b in zip(run, reference))


def test_gathered_gradients_sum_in_arrival_order(monkeypatch):
    """NOTE [ gathered gradients ]: the gradients reaching one input from every step of an
    unrolled loop are added a chunk at a time, in one program per chunk, to the same sum,
    bit for bit, as adding each as it arrives."""
    from torchlike.autograd import engine
    monkeypatch.setattr(fused, "enabled", False)
    tl.manual_seed(0)
    cell = tl.nn.LSTMCell(3, 4)
    xs = tl.randn(30, 2, 3)
    chunks = []
    original = engine._add_chunk
    monkeypatch.setattr(engine, "_add_chunk", lambda *gs: chunks.append(len(gs)) or
                        original(*gs))

    def grads():
        cell.zero_grad(set_to_none=True)
        h = c = tl.zeros(2, 4)
        for x in xs:
            h, c = cell(x, (h, c))
        h.pow(2).sum().backward()
        return [p.grad.numpy() for p in cell.parameters()]

    gathered = grads()
    assert chunks and set(chunks) == {engine._CHUNK + 1}
    monkeypatch.setattr(engine, "_CHUNK", 10 ** 9)   # every gradient added on its own
    one_by_one = grads()
    for a, b in zip(gathered, one_by_one):
        assert (a == b).all()


# --- autograd misuse, as a careless user writes it: each row runs on torch and torchlike -------

def _leaf(T, n=3):
    return T.arange(1., n + 1).requires_grad_()


MISUSE = {
    "backward_twice": lambda T: [(y := (_leaf(T) ** 2).sum()).backward(), y.backward()],
    "grad_twice": lambda T: [T.autograd.grad(y := (x := _leaf(T)).exp().sum(), x),
                             T.autograd.grad(y, x)],
    "non_scalar_backward": lambda T: (_leaf(T) * 2).backward(),
    "empty_backward": lambda T: (_leaf(T)[:0] * 2).backward(),
    "no_grad_output": lambda T: T.ones(3).sum().backward(),
    "output_made_under_no_grad": lambda T: T.no_grad()(lambda x: (x * 2).sum())(
        _leaf(T)).backward(),
    "int_requires_grad": lambda T: T.arange(3).requires_grad_(),
    "int_tensor_requires_grad": lambda T: T.tensor([1, 2], requires_grad=True),
    "nonleaf_requires_grad_false": lambda T: (_leaf(T) * 2).requires_grad_(False),
    "leaf_inplace": lambda T: _leaf(T).add_(1),
    "leaf_view_inplace": lambda T: _leaf(T)[0:2].mul_(2),
    "saved_modified": lambda T: [y := (x := _leaf(T)).exp(), y.add_(1), y.sum().backward()],
    "input_modified": lambda T: [w := _leaf(T) * 1, y := w * w, w.add_(1), y.sum().backward()],
    "gradient_wrong_shape": lambda T: (_leaf(T) * 2).backward(T.ones(4)),
    "gradient_not_tensor": lambda T: (_leaf(T) * 2).backward([1., 1., 1.]),
    "gradient_int_dtype": lambda T: [(x := _leaf(T)) * 2, (x * 2).backward(T.ones(3, dtype=T.int64)),
                                     x.grad][-1],
    "grad_unused_input": lambda T: T.autograd.grad((x := _leaf(T)).sum(), [x, _leaf(T)]),
    "grad_allow_unused": lambda T: T.autograd.grad((x := _leaf(T)).sum(), [x, _leaf(T)],
                                                   allow_unused=True),
    "grad_materialize": lambda T: T.autograd.grad((x := _leaf(T)).sum(), [x, _leaf(T)],
                                                  allow_unused=True, materialize_grads=True),
    "grad_of_non_tensor_input": lambda T: T.autograd.grad((x := _leaf(T)).sum(), [x, 1.0]),
    "grad_input_no_grad": lambda T: T.autograd.grad((x := _leaf(T)).sum(), T.ones(3)),
    "grad_outputs_mismatch": lambda T: T.autograd.grad((x := _leaf(T)) * 2, x,
                                                       grad_outputs=[T.ones(2)]),
    "grad_outputs_extra": lambda T: T.autograd.grad([(x := _leaf(T)).sum()], x,
                                                    grad_outputs=[T.ones(()), T.ones(())]),
    "backward_empty_inputs": lambda T: (_leaf(T) * 2).sum().backward(inputs=[]),
    "backward_inputs_no_grad": lambda T: (_leaf(T) * 2).sum().backward(inputs=[T.ones(3)]),
    "retain_grad_no_grad": lambda T: T.ones(3).retain_grad(),
    "hook_no_grad": lambda T: T.ones(3).register_hook(lambda g: g),
    "hook_wrong_shape": lambda T: [(x := _leaf(T)).register_hook(lambda g: g[:2]),
                                   (x * 2).sum().backward()],
    "hook_returns_wrong_type": lambda T: [(x := _leaf(T)).register_hook(lambda g: 1.0),
                                          (x * 2).sum().backward()],
    "post_acc_hook_nonleaf": lambda T: (_leaf(T) * 2).register_post_accumulate_grad_hook(print),
    "grad_assign_wrong_shape": lambda T: setattr(_leaf(T), "grad", T.ones(4)),
    "grad_assign_wrong_dtype": lambda T: setattr(_leaf(T), "grad", T.ones(3, dtype=T.float64)),
    "grad_assign_not_tensor": lambda T: setattr(_leaf(T), "grad", [1., 2., 3.]),
    "detach_view_inplace": lambda T: _leaf(T)[0:2].detach_(),
    "numpy_requires_grad": lambda T: _leaf(T).numpy(),
    "deepcopy_nonleaf": lambda T: __import__("copy").deepcopy(_leaf(T) * 2),
    "unbind_view_inplace": lambda T: [a := (x := _leaf(T) * 1).unbind(0), a[0].mul_(2)],
    "item_of_many": lambda T: _leaf(T).item(),
    "bool_of_many": lambda T: bool(_leaf(T) > 0),
    "backward_on_leaf": lambda T: [(x := _leaf(T)).sum().backward(), x.backward(T.ones(3)),
                                   x.grad][-1],
    "create_graph_then_free": lambda T: [g := T.autograd.grad((x := _leaf(T)).pow(3).sum(), x,
                                                              create_graph=True)[0],
                                         g.sum().backward(), g.sum().backward()],
}
MISUSE_OK = {"grad_allow_unused", "grad_materialize", "gradient_int_dtype", "backward_on_leaf",
             "grad_outputs_extra"}


@pytest.mark.parametrize("name", MISUSE)
def test_autograd_misuse(name):
    both(MISUSE[name], raises=name not in MISUSE_OK)
