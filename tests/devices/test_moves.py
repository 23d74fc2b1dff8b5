"""Moves are real and observable, PyTorch's mixing rules hold, and training runs where its
tensors live (cuda:N are CPU devices 1..3 here; the values are compared with the same work on
the CPU device)."""
import io
import pickle

import jax
import numpy as np
import pytest

import torchlike as tl
from torchlike import nn
from torchlike._device import to_jax_device

MIXED = r"Expected all tensors to be on the same device, but found at least two devices, {} and {}!"


def on(t):
    """The jax device holding ``t``'s values: what a move must change."""
    return next(iter(t._value().devices()))


@pytest.mark.parametrize("where", ["cuda", "cuda:1", tl.device("cuda", 2), "cpu"])
def test_factories_and_moves_put_the_data_there(where):
    jd = to_jax_device(where)
    assert on(tl.zeros(2, device=where)) == jd and on(tl.randn(2, device=where)) == jd
    x = tl.arange(6.0).reshape(2, 3)
    y = x.to(where)
    assert on(y) == jd and y.device == tl.device(where if where != "cuda" else "cuda:0")
    assert np.array_equal(y.cpu().numpy(), x.numpy()) and on(y.cpu()) == on(x)
    assert y.to(where) is y and x.to("cpu") is x   # no move, no copy: as PyTorch


def test_cuda_method_and_default_device():
    x = tl.ones(2)
    assert on(x.cuda()) == to_jax_device("cuda:0") and on(x.cuda(2)) == to_jax_device("cuda:2")
    with tl.device("cuda:1"):
        assert tl.ones(2).device == tl.device("cuda:1")
    assert tl.ones(2).device == tl.device("cpu")
    tl.set_default_device("cuda:2")
    try:
        assert on(tl.tensor([1.0])) == to_jax_device("cuda:2")
    finally:
        tl.set_default_device(None)


def test_gradient_comes_back_to_the_input_device():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    y = x.to("cuda:1")
    assert type(y.grad_fn).__name__ == "ToCopyBackward0"
    (y * y).sum().backward()
    assert on(x.grad) == on(x) and np.array_equal(x.grad.numpy(), [2.0, 4.0])
    # second order through a move: d/dx of (dy/dx . 1) with y = x**3 moved
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    (g,) = tl.autograd.grad(x.to("cuda").pow(3).sum(), x, create_graph=True)
    g.sum().backward()
    assert on(x.grad) == on(x) and np.allclose(x.grad.numpy(), [6.0, 12.0])


def test_mixing_devices_raises_pytorchs_error():
    a, b = tl.ones(2, device="cuda"), tl.ones(2)
    with pytest.raises(RuntimeError, match=MIXED.format("cuda:0", "cpu")):
        a + b
    with pytest.raises(RuntimeError, match=MIXED.format("cpu", "cuda:0")):
        tl.mm(b[None], a[:, None])
    with pytest.raises(RuntimeError, match=MIXED.format("cuda:1", "cuda:0")):
        a.to("cuda:1") * a
    with pytest.raises(RuntimeError, match=MIXED.format("cuda:0", "cpu")):
        a.sum() + b   # 0-dim on the GPU does not join the CPU


def test_a_zero_dim_cpu_tensor_joins_any_device():
    a = tl.ones(2, device="cuda:1")
    s = tl.tensor(3.0, requires_grad=True)
    out = a * s
    assert on(out) == on(a) and np.array_equal(out.detach().cpu().numpy(), [3.0, 3.0])
    out.sum().backward()
    assert on(s.grad) == on(s) and s.grad.item() == 2.0


def test_a_number_kept_on_the_device_is_kept_where_the_tensor_is():
    """A Python number taken again and again is kept next to the tensor it meets, one per
    device (NOTE [ Python numbers as device scalars ] in torchlike/_dispatch.py)."""
    from torchlike import _dispatch
    a, b = tl.arange(4.0, device="cuda:1"), tl.arange(4.0)
    for _ in range(_dispatch.NUMBER_RENT + 1):
        out, ref = a * 0.375, b * 0.375
    kept = {d for key, s in _dispatch._NUMBERS.items()
            if key[:2] == (float, 0.375) and type(s) is not int for d in s.devices()}
    assert kept == {on(a), on(b)} and on(out) == on(a)
    assert out.cpu().tolist() == ref.tolist() == [0.0, 0.375, 0.75, 1.125]


def test_copy_and_indexing_across_devices():
    a = tl.zeros(3, device="cuda")
    a.copy_(tl.tensor([1.0, 2.0, 3.0]))
    assert on(a) == to_jax_device("cuda:0") and a.cpu().tolist() == [1.0, 2.0, 3.0]
    assert a[tl.tensor([2, 0])].cpu().tolist() == [3.0, 1.0]   # a CPU index of a GPU tensor
    a[tl.tensor([1])] = 7.0
    assert a.cpu().tolist() == [1.0, 7.0, 3.0]


def _model():
    tl.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 2))


OPTIMIZERS = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "NAdam", "RAdam", "Adamax", "ASGD",
              "Rprop", "Adadelta"]


def _one_step(name, device, x, y):
    model = _model().to(device)
    opt = getattr(tl.optim, name)(model.parameters(), lr=0.01)
    nn.functional.cross_entropy(model(x.to(device)), y.to(device)).backward()
    opt.step()
    state = [v for s in opt.state.values() for v in s.values() if isinstance(v, tl.Tensor)]
    return model, state


def test_every_optimizer_keeps_its_state_next_to_its_parameters():
    """A scalar state (step, mu_product, eta) on another device would fail the optimizer's one
    update program."""
    x, y = tl.randn(16, 4), tl.randint(0, 2, (16,))
    for name in OPTIMIZERS:
        model, state = _one_step(name, "cuda:1", x, y)
        jd = to_jax_device("cuda:1")
        assert all(on(t) == jd for t in [*model.parameters(), *model.buffers(), *state]), name


@pytest.mark.parametrize("name", ["Adam", "NAdam"])
def test_training_on_a_gpu_equals_training_on_the_cpu(name):
    x, y = tl.randn(16, 4), tl.randint(0, 2, (16,))
    cpu, gpu = (_one_step(name, device, x, y)[0] for device in ("cpu", "cuda:2"))
    for p, q in zip(cpu.parameters(), gpu.parameters()):
        np.testing.assert_allclose(q.detach().cpu().numpy(), p.detach().numpy(), rtol=1e-6,
                                   atol=1e-7)


def test_module_moves_keep_parameters_and_load_across_devices():
    model = _model()
    w = model[0].weight
    model.cuda()
    assert model[0].weight is w and on(w) == to_jax_device("cuda:0")
    assert on(model[1].running_mean) == to_jax_device("cuda:0")
    cpu_state = _model().state_dict()
    model.load_state_dict(cpu_state)   # copies into the GPU tensors, as PyTorch
    assert on(model[0].weight) == to_jax_device("cuda:0")
    assert np.array_equal(model[0].weight.detach().cpu().numpy(), cpu_state["0.weight"].numpy())
    opt = tl.optim.Adam(model.parameters())
    model(tl.randn(3, 4, device="cuda")).sum().backward()
    opt.step()
    sd = opt.state_dict()
    moved = _model().to("cuda:2")
    opt2 = tl.optim.Adam(moved.parameters())
    opt2.load_state_dict(sd)   # state goes next to its parameter
    assert all(on(v) == to_jax_device("cuda:2") for s in opt2.state.values()
               for v in s.values())


def test_save_and_load_with_map_location():
    x = tl.arange(4.0, device="cuda:1")
    buf = io.BytesIO()
    tl.save({"x": x}, buf)
    buf.seek(0)
    assert on(tl.load(buf)["x"]) == to_jax_device("cuda:1")
    buf.seek(0)
    y = tl.load(buf, map_location="cuda:2")["x"]
    assert on(y) == to_jax_device("cuda:2") and y.cpu().tolist() == [0.0, 1.0, 2.0, 3.0]
    buf.seek(0)
    assert tl.load(buf, map_location="cpu")["x"].device == tl.device("cpu")
    assert on(pickle.loads(pickle.dumps(x))) == to_jax_device("cuda:1")   # as PyTorch's


def test_pinned_memory_and_dataloader():
    x = tl.ones(3)
    p = x.pin_memory()
    assert p.is_pinned() and not x.is_pinned() and p.device == tl.device("cpu")
    assert p.to("cuda", non_blocking=True).device == tl.device("cuda:0")
    with pytest.raises(RuntimeError, match="only dense CPU tensors can be pinned"):
        tl.ones(2, device="cuda").pin_memory()
    data = tl.utils.data.TensorDataset(tl.arange(8.0).reshape(4, 2), tl.arange(4))
    batch = next(iter(tl.utils.data.DataLoader(data, batch_size=2, pin_memory=True)))
    assert all(t.is_pinned() for t in batch)


@pytest.mark.parametrize("lazy", ["0", "1"], ids=["eager", "lazy"])
def test_importing_torchlike_starts_no_backend(lazy):
    """JAX claims most of a GPU's memory when its backend starts: importing must not start it
    (nor switching lazy mode on at import, TORCHLIKE_LAZY=1)."""
    import os
    import subprocess
    import sys
    code = ("import torchlike, torchlike.nn, torchlike.optim, torchlike.utils.data\n"
            "from jax._src import xla_bridge\n"
            "assert not xla_bridge._backends, list(xla_bridge._backends)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "TORCHLIKE_LAZY": lazy})
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_masks_and_padding_made_inside_ops_follow_their_inputs():
    q = tl.randn(1, 2, 4, 8, device="cuda:1")
    out = nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True, dropout_p=0.1)
    assert on(out) == on(q)
    mha = nn.MultiheadAttention(8, 2, add_zero_attn=True).to("cuda:1")
    x = tl.randn(3, 1, 8, device="cuda:1")
    assert on(mha(x, x, x)[0]) == on(x)


def test_moves_of_64_bit_values_run_in_torchlikes_scope(monkeypatch):
    """Every move of int64 / float64 values puts them with jax's 64-bit types on: jax 0.11 on a
    GPU moved an int64 array put outside the scope as an int32 buffer behind an int64 array, and
    the next jitted op on it failed (RuntimeProgramInputMismatch, seen on an H200).  Moves:
    .to, Module.to, a CPU index into a GPU tensor, load with map_location."""
    outside = []
    device_put = jax.device_put

    def watched(x, *args, **kwargs):
        if not jax.config.jax_enable_x64 and any(
                np.dtype(a.dtype).itemsize == 8 for a in jax.tree_util.tree_leaves(x)):
            outside.append(x)
        return device_put(x, *args, **kwargs)
    monkeypatch.setattr(jax, "device_put", watched)
    x = tl.randint(0, 10, (4, 3))
    y = x.to("cuda:1")
    nn.Embedding(10, 2).double().to("cuda:1")(y)
    assert y[tl.tensor([0, 2])].tolist() == x[tl.tensor([0, 2])].tolist()
    buf = io.BytesIO()
    tl.save(x, buf)
    buf.seek(0)
    assert on(tl.load(buf, map_location="cuda:2")) == to_jax_device("cuda:2")
    assert not outside, [(a.dtype, a.shape) for a in outside]
