"""torchlike.export: exported forward == eager forward (MLP, CNN with BatchNorm, Transformer
encoder), symbolic batch, save/load in this process and in a fresh one, whole-step export ==
eager steps, and the errors a bad call gets.  The oracle is torchlike's own eager mode; real
torch only for the Dim API."""
import io
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import torchlike as torch
import torchlike.export
import torchlike.nn.functional as F
from torchlike import nn

E = torchlike.export


def _np(t):
    return np.asarray(t.detach().numpy())


def _eager(model, *args):
    with torch.no_grad():
        return model(*args)


def _mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))


def _cnn():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 4 * 4, 5))
    model(torch.randn(8, 1, 8, 8))   # running statistics that are not the initial ones
    return model.eval()


def _transformer():
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    return nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()


# --- forward ----------------------------------------------------------------------------------

def test_mlp_round_trip_and_signature():
    model = _mlp()
    x = torch.randn(4, 4)
    ep = E.export(model, (x,))
    np.testing.assert_allclose(_np(ep.module()(x)), _np(_eager(model, x)), rtol=1e-6)
    np.testing.assert_allclose(_np(ep.call(x)), _np(_eager(model, x)), rtol=1e-6)
    assert list(ep.state_dict) == list(model.state_dict())
    assert list(ep.module().state_dict()) == list(model.state_dict())
    sig = ep.graph_signature
    assert sig.parameters == ("0.weight", "0.bias", "2.weight", "2.bias")
    assert sig.user_inputs == ("input",) and sig.user_outputs == ("output",)
    assert sig.inputs_to_parameters["p_0_weight"] == "0.weight"
    text = repr(ep)
    assert "p_0_weight: PARAMETER target='0.weight'" in text
    assert 'input: "f32[4, 4]"' in text and "static shapes" in text
    assert "stablehlo" in ep.mlir_module()


def test_exported_module_is_differentiable_after_load_too():
    """As torch.export's: gradients reach the module's parameters and inputs, equal to eager
    ones, also after save/load (the derivative is saved beside the program) and at a batch
    size other than the example's."""
    model, x = _mlp(), torch.randn(5, 4)
    ep = E.export(model, (x,), dynamic_shapes={"input": {0: E.Dim("batch")}})
    buf = io.BytesIO()
    E.save(ep, buf)
    buf.seek(0)

    def grads(m):
        xi = x[:3].clone().requires_grad_()
        (m(xi) ** 2).sum().backward()
        return [xi.grad] + [p.grad for p in m.parameters()]
    want = grads(model)
    for module in (ep.module(), E.load(buf).module()):
        assert all(p.requires_grad for p in module.parameters())
        for got, w in zip(grads(module), want, strict=True):
            np.testing.assert_allclose(_np(got), _np(w), rtol=1e-5, atol=1e-6)


def test_symbolic_batch_mlp():
    model = _mlp()
    batch = E.Dim("batch", max=64)
    ep = E.export(model, (torch.randn(4, 4),), dynamic_shapes={"input": {0: batch}})
    assert "symbolic shapes" in repr(ep) and 'input: "f32[batch, 4]"' in repr(ep)
    assert ep.range_constraints == {"batch": (1, 64)}
    m = ep.module()
    for n in (7, 1):
        x = torch.randn(n, 4)
        out = m(x)
        assert out.shape == (n, 3)
        np.testing.assert_allclose(_np(out), _np(_eager(model, x)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("make, shape", [(_cnn, (1, 8, 8)), (_transformer, (5, 8))],
                         ids=["cnn_batchnorm", "transformer"])
def test_dynamic_batch_models(make, shape):
    model = make()
    x = torch.randn(4, *shape)
    ep = E.export(model, (x,), dynamic_shapes=({0: E.Dim("batch")},))
    m = ep.module()
    for n in (4, 7, 1):
        xn = torch.randn(n, *shape)
        np.testing.assert_allclose(_np(m(xn)), _np(_eager(model, xn)), rtol=1e-5, atol=1e-5)
    assert list(ep.state_dict) == list(model.state_dict())
    if make is _cnn:   # eval-mode BatchNorm reads its running statistics, not the counter
        assert "1.running_mean" in ep.graph_signature.buffers
        assert "1.num_batches_tracked" not in ep.graph_signature.buffers


def test_train_mode_batchnorm_and_dropout_state():
    torch.manual_seed(3)
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Dropout(0.5))
    x = torch.randn(5, 3)
    ep = E.export(model, (x,))
    sig = ep.graph_signature
    assert set(sig.buffers_to_mutate.values()) == {
        "1.running_mean", "1.running_var", "1.num_batches_tracked"}
    assert "rng" in ep.constants
    m = ep.module()
    # The program draws from the generator state it was exported with, as eager mode does.
    np.testing.assert_allclose(_np(m(x)), _np(_eager(model, x)), rtol=1e-6)
    for name in ("1.running_mean", "1.running_var", "1.num_batches_tracked"):
        np.testing.assert_allclose(_np(m.state_dict()[name]), _np(model.state_dict()[name]),
                                   rtol=1e-6)
    np.testing.assert_allclose(_np(m(x)), _np(_eager(model, x)), rtol=1e-6)


def test_per_example_export_refuses_rows_that_interact():
    class Center(nn.Module):
        def forward(self, x):
            h = x.flatten(1)
            return h - h.mean(0)
    with pytest.raises(RuntimeError, match="batch rows interact"):
        E.export(Center(), (torch.randn(4, 2, 3),), dynamic_shapes=({0: E.Dim("b")},))


# --- errors -------------------------------------------------------------------------------------

def test_value_dependent_python_is_unsupported():
    class Branch(nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x
            return -x
    with pytest.raises(torchlike.compiler.Unsupported, match=r"x\.sum\(\) > 0"):
        E.export(Branch(), (torch.randn(3),))


class _Two(nn.Module):
    def forward(self, x, y, n=2):
        return {"s": x * n + y, "d": (x - y,)}


def test_bad_calls_name_the_input():
    b = E.Dim("b", min=2, max=64)
    ep = E.export(_Two(), (torch.randn(4, 3), torch.randn(4, 3), 2),
                  dynamic_shapes={"x": {0: b}, "y": {0: b}, "n": None})
    m = ep.module()
    out = m(torch.randn(5, 3), torch.ones(5, 3), 2)
    assert out["s"].shape == (5, 3) and out["d"][0].shape == (5, 3)
    cases = [((torch.randn(5, 4), torch.randn(5, 4), 2), r"x\.size\(\)\[1\] == 3"),
             ((torch.randn(5, 3), torch.randn(6, 3), 2), r"y\.size\(\)\[0\] == x\.size\(\)\[0\]"),
             ((torch.randn(1, 3), torch.randn(1, 3), 2), r"x\.size\(\)\[0\] >= 2"),
             ((torch.randn(65, 3), torch.randn(65, 3), 2), r"x\.size\(\)\[0\] <= 64"),
             ((torch.randn(5, 3, 1), torch.randn(5, 3), 2), r"x\.dim\(\) == 2"),
             ((torch.randn(5, 3).double(), torch.randn(5, 3), 2), r"x\.dtype == torch\.float32"),
             ((torch.randn(5, 3), torch.randn(5, 3), 3), r"n == 2")]
    for args, msg in cases:
        with pytest.raises(AssertionError, match="Guard failed: " + msg):
            m(*args)
    with pytest.raises(ValueError, match="Trying to flatten user inputs"):
        m(torch.randn(5, 3))


def test_dynamic_shapes_errors():
    args = (torch.randn(4, 3), torch.randn(4, 3), 2)
    b = E.Dim("b", min=2)
    with pytest.raises(RuntimeError, match="top-level keys must be the arg names"):
        E.export(_Two(), args, dynamic_shapes={"z": {0: b}})
    with pytest.raises(RuntimeError, match="`inputs` has 3 elements, but `dynamic_shapes` has 1"):
        E.export(_Two(), args, dynamic_shapes=({0: b},))
    with pytest.raises(IndexError, match="dimension 5 is out of range"):
        E.export(_Two(), args, dynamic_shapes=({5: b}, None, None))
    with pytest.raises(RuntimeError, match=r"Constraints violated \(b\)"):
        E.export(_Two(), (torch.randn(1, 3), torch.randn(1, 3), 2),
                 dynamic_shapes={"x": {0: b}, "y": {0: b}})
    with pytest.raises(RuntimeError, match="Expecting `args` to be a tuple"):
        E.export(_Two(), torch.randn(4, 3))


def test_dim_matches_torch():
    import torch as torch_
    for kw in ({}, {"min": 2, "max": 64}, {"max": 64}, {"min": 3}, {"min": 1, "max": 8}):
        assert repr(E.Dim("b", **kw)) == repr(torch_.export.Dim("b", **kw))
    assert repr(E.Dim.STATIC) == repr(torch_.export.Dim.STATIC)
    assert [repr(d) for d in E.dims("a", "b", max=4)] == \
        [repr(d) for d in torch_.export.dims("a", "b", max=4)]
    for mod in (E, torch_.export):
        with pytest.raises(AssertionError, match="inconsistent min=5, max=2"):
            mod.Dim("b", min=5, max=2)


# --- save / load --------------------------------------------------------------------------------

def test_save_load_in_process(tmp_path):
    model = _mlp()
    ep = E.export(model, (torch.randn(4, 4),), dynamic_shapes=({0: E.Dim("batch")},))
    buf = io.BytesIO()
    E.save(ep, buf)
    buf.seek(0)
    path = tmp_path / "mlp.pt2"
    E.save(ep, path, extra_files={"note": "hello"})
    assert os.listdir(tmp_path) == ["mlp.pt2"]   # the temporary file was renamed
    extra = {"note": ""}
    x = torch.randn(6, 4)
    for loaded in (E.load(buf), E.load(str(path), extra_files=extra)):
        assert isinstance(loaded, E.ExportedProgram)
        assert list(loaded.state_dict) == list(model.state_dict())
        np.testing.assert_allclose(_np(loaded.module()(x)), _np(_eager(model, x)),
                                   rtol=1e-5, atol=1e-6)
        assert repr(loaded.graph_signature) == repr(ep.graph_signature)
    assert extra == {"note": "hello"}
    with pytest.raises(RuntimeError, match="not a zip archive"):
        E.load(io.BytesIO(b"not an exported program"))


# --- training steps -----------------------------------------------------------------------------

def _training(optimizer):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.25), nn.Linear(8, 3))
    if optimizer == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    else:
        opt = torch.optim.Adam(model.parameters(), lr=0.01)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    torch.manual_seed(1)
    batches = [(torch.randn(6, 4), torch.randint(0, 3, (6,))) for _ in range(4)]
    return model, opt, step, batches


def _optimizer_state(opt):
    params = [p for g in opt.param_groups for p in g["params"]]
    return {(i, k): _np(v) for i, p in enumerate(params) for k, v in opt.state[p].items()}


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_export_step_matches_eager_steps(optimizer):
    model, opt, step, batches = _training(optimizer)
    ep = E.export_step(step, batches[0])
    # The optimizer creates its state at the first step, so export_step ran that step for
    # real; the exported step starts from the state after it.
    assert ep._meta["warmed_up"]
    names = set(ep.state)
    assert {"model.0.weight", "model.3.bias", "model.0.weight.grad",
            "opt.param_groups.0.lr", "rng"} <= names
    key = "momentum_buffer" if optimizer == "sgd" else "exp_avg"
    assert f"opt.state.0.{key}" in names
    start = {k: _np(v) for k, v in ep.state.items()}
    start_opt = _optimizer_state(opt)
    state, losses = ep.state, []
    for x, y in batches[1:]:
        state, loss = ep.run(state, x, y)
        losses.append(loss.item())
    eager = [step(x, y).item() for x, y in batches[1:]]
    np.testing.assert_allclose(losses, eager, rtol=1e-6)
    for n, p in model.named_parameters():
        np.testing.assert_allclose(_np(state[f"model.{n}"]), _np(p), rtol=1e-5, atol=1e-7)
    for (i, k), v in _optimizer_state(opt).items():
        np.testing.assert_allclose(_np(state[f"opt.state.{i}.{k}"]), v, rtol=1e-5, atol=1e-7)
    # apply_to writes a state (here: the start) back into the live model and optimizer
    ep.apply_to(model, opt)
    for n, p in model.named_parameters():
        np.testing.assert_array_equal(_np(p), start[f"model.{n}"])
    for (i, k), v in _optimizer_state(opt).items():
        np.testing.assert_array_equal(v, start_opt[(i, k)])
    # hyper-parameters are inputs: lr = 0 leaves the parameters where they are
    frozen = dict(ep.state, **{"opt.param_groups.0.lr": 0.0})
    after, _ = ep.run(frozen, *batches[1])
    np.testing.assert_array_equal(_np(after["model.0.weight"]), start["model.0.weight"])


def test_step_run_checks_state_and_batch():
    model, opt, step, batches = _training("sgd")
    ep = E.export_step(step, batches[0])
    with pytest.raises(KeyError, match="missing"):
        ep.run({}, *batches[1])
    with pytest.raises(AssertionError, match=r"Guard failed: x\.size\(\)\[0\] == 6"):
        ep.run(ep.state, torch.randn(5, 4), torch.randint(0, 3, (5,)))


# --- a fresh process ----------------------------------------------------------------------------

def test_load_in_fresh_process_without_model_code(tmp_path):
    model = _cnn()
    ep = E.export(model, (torch.randn(4, 1, 8, 8),), dynamic_shapes=({0: E.Dim("batch")},))
    E.save(ep, tmp_path / "cnn.pt2")
    x = torch.randn(3, 1, 8, 8)
    trained, _, step, batches = _training("sgd")
    ep_step = E.export_step(step, batches[0])
    E.save(ep_step, tmp_path / "step.pt2")
    # (no random draws from here to the eager steps: the exported step's 'rng' is the default
    # generator's state at export, and dropout in the eager steps draws from that generator)
    want_losses = [step(bx, by).item() for bx, by in batches[1:]]
    np.savez(tmp_path / "data.npz", x=_np(x), bx=np.stack([_np(b[0]) for b in batches[1:]]),
             by=np.stack([_np(b[1]) for b in batches[1:]]))
    code = textwrap.dedent(f"""
        import sys
        import numpy as np
        import torchlike, torchlike.export
        d = np.load({str(tmp_path / 'data.npz')!r})
        ep = torchlike.export.load({str(tmp_path / 'cnn.pt2')!r})
        out = ep.module()(torchlike.from_numpy(d["x"])).detach().numpy()
        st = torchlike.export.load({str(tmp_path / 'step.pt2')!r})
        state, losses = st.state, []
        for bx, by in zip(d["bx"], d["by"]):
            state, loss = st.run(state, torchlike.from_numpy(bx), torchlike.from_numpy(by))
            losses.append(loss.item())
        np.savez({str(tmp_path / 'out.npz')!r}, out=out, losses=np.array(losses),
                 w=state["model.0.weight"].numpy())
        assert "torch" not in sys.modules and "test_export" not in sys.modules
    """)
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, cwd=str(tmp_path), timeout=300)
    assert run.returncode == 0, run.stderr
    got = np.load(tmp_path / "out.npz")
    np.testing.assert_allclose(got["out"], _np(_eager(model, x)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["losses"], want_losses, rtol=1e-6)
    np.testing.assert_allclose(got["w"], _np(trained[0].weight), rtol=1e-5, atol=1e-7)
