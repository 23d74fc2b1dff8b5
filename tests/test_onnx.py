"""torchlike.onnx.export against its real consumers: each exported file is checked by
``onnx.checker`` and run in onnxruntime against the eager forward -- an MLP, the digits CNN of
examples/train_digits.py, an LSTM language model and a Transformer encoder, each with a dynamic
batch axis run at two batch sizes -- plus a table of layers and functions in one model, names,
PyTorch's own exporter on the same MLP, and the errors (an untranslatable op, onnx missing).
The files are exported once per module (fixture ``exported``)."""
import importlib.util
import io
import re
import sys
import warnings

import numpy as np
import onnx   # the test extra's, imported as torch is (NOTE [ torch is required ] in conftest.py)
import onnxruntime as ort
import pytest
import torch

import torchlike as tl
import torchlike.nn as nn
import torchlike.nn.functional as F

EXAMPLE = __import__("pathlib").Path(__file__).resolve().parents[1] / "examples" / \
    "train_digits.py"


def _example():
    spec = importlib.util.spec_from_file_location("train_digits_for_onnx", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class LanguageModel(nn.Module):
    """Embedding -> 2-layer LSTM -> Linear, as a character-level language model."""

    def __init__(self, vocab=50, emb=16, hidden=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, tokens):
        out, _ = self.lstm(self.embed(tokens))
        return self.head(out)


def _inputs(name, batch, gen):
    if name == "lstm":
        return gen.integers(0, 50, (batch, 7)).astype(np.int64)
    shape = {"mlp": (batch, 8), "cnn": (batch, 1, 8, 8), "encoder": (batch, 5, 16)}[name]
    return gen.random(shape, dtype=np.float32) * 2 - 1


def _session(path_or_bytes):
    return ort.InferenceSession(path_or_bytes, providers=["CPUExecutionProvider"])


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """name -> (model, path of the exported file, what export returned)."""
    tl.manual_seed(0)
    gen = np.random.default_rng(0)
    out, root = {}, tmp_path_factory.mktemp("onnx")
    mlp = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 32), nn.Tanh(),
                        nn.Linear(32, 4)).eval()
    path = str(root / "mlp.onnx")
    out["mlp"] = mlp, path, tl.onnx.export(
        mlp, (tl.from_numpy(_inputs("mlp", 3, gen)),), path, input_names=["x"],
        output_names=["y"], dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    # the digits CNN, exported by the example's own --onnx code
    example = _example()
    cnn, path = example.Net(), str(root / "cnn.onnx")
    line = example.export_onnx(cnn, tl.from_numpy(_inputs("cnn", 6, gen)), path)
    out["cnn"] = cnn, path, line
    lm, path = LanguageModel().eval(), str(root / "lstm.onnx")
    out["lstm"] = lm, path, tl.onnx.export(
        lm, (tl.from_numpy(_inputs("lstm", 3, gen)),), path,
        dynamic_shapes={"tokens": {0: tl.export.Dim("batch")}})
    layer = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True)
    encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()
    path = str(root / "encoder.onnx")
    out["encoder"] = encoder, path, tl.onnx.export(
        encoder, (tl.from_numpy(_inputs("encoder", 3, gen)),), path,
        dynamic_axes={"src": [0]})
    return out


@pytest.mark.parametrize("name", ["mlp", "cnn", "lstm", "encoder"])
def test_exported_model_runs_in_onnxruntime_at_any_batch(exported, name):
    model, path, _ = exported[name]
    proto = onnx.load(path)
    onnx.checker.check_model(proto, full_check=True)
    (graph_input,) = proto.graph.input
    assert graph_input.type.tensor_type.shape.dim[0].dim_param     # the batch is symbolic
    session = _session(path)
    gen = np.random.default_rng(1)
    diffs = []
    for batch in (2, 5):
        x = _inputs(name, batch, gen)
        (got,) = session.run(None, {graph_input.name: x})
        with tl.no_grad():
            want = model(tl.from_numpy(x)).numpy()
        assert got.shape == want.shape and got.dtype == want.dtype
        diffs.append(float(np.abs(got - want).max()))
    print(f"\nonnx {name}: onnxruntime vs eager, max abs diff {max(diffs):.2e} "
          f"(batches 2 and 5)")
    assert max(diffs) < 2e-5, diffs


def test_names_weights_and_program(exported, tmp_path):
    model, path, program = exported["mlp"]
    proto = program.model_proto
    assert [i.name for i in proto.graph.input] == ["x"]
    assert [o.name for o in proto.graph.output] == ["y"]
    assert [d.dim_param or d.dim_value for d in proto.graph.input[0].type.tensor_type.shape.dim] \
        == ["batch", 8]
    assert [d.dim_param or d.dim_value
            for d in proto.graph.output[0].type.tensor_type.shape.dim] == ["batch", 4]
    weights = {t.name: onnx.numpy_helper.to_array(t) for t in proto.graph.initializer}
    for key, value in model.state_dict().items():      # every weight, named as in state_dict
        np.testing.assert_array_equal(weights[key], value.numpy())
    assert proto.opset_import[0].version == 20
    # ONNXProgram: runs in onnxruntime and in ONNX's reference evaluator, saves, shows itself
    x = tl.randn(6, 8)
    with tl.no_grad():
        want = model(x).numpy()
    (got,) = program(x)
    (ref,) = program.call_reference(x)
    assert isinstance(got, tl.Tensor)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ref.numpy(), want, rtol=1e-5, atol=1e-6)
    program.save(tmp_path / "again.onnx", keep_initializers_as_inputs=True)
    again = onnx.load(str(tmp_path / "again.onnx"))
    assert [i.name for i in again.graph.input] == ["x", *model.state_dict()]
    assert repr(program).startswith("ONNXProgram(\n    model=")
    assert isinstance(program.exported_program, tl.export.ExportedProgram)
    # verify=True checks the file in onnxruntime; a file object receives the bytes
    buf = io.BytesIO()
    assert tl.onnx.export(model, (x,), buf, verify=True, dynamo=False) is None
    assert onnx.load_from_string(buf.getvalue()).graph.initializer
    # an older opset; without export_params the weights are graph inputs
    old = tl.onnx.export(model, (x,), opset_version=17, export_params=False).model_proto
    assert old.opset_import[0].version == 17
    assert not {t.name for t in old.graph.initializer} & set(model.state_dict())
    feeds = {"input": x.numpy(), **{k: v.numpy() for k, v in model.state_dict().items()}}
    np.testing.assert_allclose(_session(old.SerializeToString()).run(None, feeds)[0], want,
                               rtol=1e-5, atol=1e-6)


def test_digits_example_reports_agreement(exported):
    line = exported["cnn"][2]
    m = re.search(r"max abs diff (\S+)\)", line)
    assert m and float(m.group(1)) < 1e-5, line


def test_mlp_agrees_with_pytorchs_exporter(exported):
    """The same weights through torch.onnx.export (its TorchScript exporter: the dynamo one
    needs onnxscript): the two files compute the same in onnxruntime and name the weights
    alike."""
    model, path, _ = exported["mlp"]
    ref = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 32),
                              torch.nn.Tanh(), torch.nn.Linear(32, 4))
    ref.load_state_dict({k: torch.from_numpy(v.numpy()) for k, v in model.state_dict().items()})
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # PyTorch's exporter is deprecated
        torch.onnx.export(ref, (torch.randn(3, 8),), buf, dynamo=False, input_names=["x"],
                          output_names=["y"], dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    theirs = onnx.load_from_string(buf.getvalue())
    ours = onnx.load(path)
    assert {t.name for t in theirs.graph.initializer} == {t.name for t in ours.graph.initializer}
    x = np.random.default_rng(2).standard_normal((7, 8)).astype(np.float32)
    a = _session(buf.getvalue()).run(None, {"x": x})[0]
    b = _session(path).run(None, {"x": x})[0]
    np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


class _Layers(nn.Module):
    """Many layers and functions in one forward: one export, one session, every output
    checked."""

    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(6)
        self.ln = nn.LayerNorm(6)
        self.conv = nn.Conv1d(3, 4, 3, padding=1, stride=2)
        self.gn = nn.GroupNorm(2, 4)
        self.emb = nn.Embedding(10, 3)
        self.up = nn.ConvTranspose1d(3, 2, 3, stride=2, padding=3, dilation=2)  # cuts its input
        self.bag = nn.EmbeddingBag(10, 3, mode="mean")
        self.gru = nn.GRU(3, 4, batch_first=True, bidirectional=True)

    def forward(self, x, img, tok):
        c = self.conv(img)
        square = img.view(-1, 1, 4, 6)
        return dict(
            softmax=F.softmax(x, -1), log_softmax=F.log_softmax(x, 1), gelu=F.gelu(x),
            gelu_tanh=F.gelu(x, approximate="tanh"), silu=F.silu(x), elu=F.elu(x),
            leaky=F.leaky_relu(x, 0.1), softplus=F.softplus(x), hardswish=F.hardswish(x),
            mish=F.mish(x), relu6=F.relu6(x), logsigmoid=F.logsigmoid(x), bn=self.bn(x),
            ln=self.ln(x), gn=self.gn(c), conv=c, normalize=F.normalize(x, dim=1),
            clamp=x.clamp(-0.5, 0.5), where=tl.where(x > 0, x, x * 2),
            pow=x.abs().pow(1.5), rsqrt=x.abs().add(1).rsqrt(), mean=x.mean(1), var=x.var(1),
            std=x.std(1), prod=x.prod(1), amax=x.amax(1), argmax=x.argmax(1),
            max=x.max(1).values, any=(x > 0).any(1), all=(x > 0).all(1), cat=tl.cat([x, x], 1),
            expm1=x.expm1(), log1p=x.abs().log1p(), erf=tl.erf(x), round=x.round(),
            floor=x.floor(), trunc=x.trunc(), sign=x.sign(), fmod=tl.fmod(x, 0.3),
            remainder=tl.remainder(x, 0.3), floordiv=(x * 10).long() // 3,
            masked=x.masked_fill(x < 0, 0.0), atan2=tl.atan2(x, x.flip(1)),
            atan2_axes=tl.atan2(tl.cat([x, x * 0, -x * 0]), tl.cat([x * 0, x, -x * 0])),
            bmm=tl.bmm(img, img.transpose(1, 2)),
            matmul=x @ x.T, total=x.sum(), rows=x[tl.tensor([2, 0])],
            tril=tl.tril(x @ x.T), conv_transpose=self.up(img), bag=self.bag(tok),
            gru=self.gru(img.transpose(1, 2))[0], index_add=tl.zeros(10, 6).index_add(0, tok[0], x),
            scatter_add=tl.zeros(6, 10).scatter_add(1, tok[:1].expand(6, -1), x.T),
            max_pool2d=F.max_pool2d(square, 3, stride=2, padding=1),
            bilinear=F.interpolate(square, scale_factor=2, mode="bilinear"),
            **_batched(self, x, img, tok))


def _batched(model, x, img, tok):
    """The outputs whose translation reads the batch size (sizes computed in the graph)."""
    return dict(cumsum=x.cumsum(1), topk=x.topk(2, 1).values, flip=x.flip(1),
                roll=x.roll(1, 1), narrow=x[:, 1:4] * 2, columns=x[:, [0, 2]],
                avg_pool=F.avg_pool1d(img, 2), max_pool=F.max_pool1d(img, 2),
                pad=F.pad(img, (1, 2)), nearest=F.interpolate(img, scale_factor=2),
                embed=model.emb(tok))


def _layer_inputs(n, gen):
    return (gen.standard_normal((n, 6)).astype(np.float32),
            gen.standard_normal((n, 3, 8)).astype(np.float32), gen.integers(0, 10, (n, 4)))


def _check_outputs(program, arrays, want):
    session = _session(program.model_proto.SerializeToString())
    got = dict(zip([o.name for o in session.get_outputs()],
                   session.run(None, dict(zip(["x", "img", "tok"], arrays)))))
    # dict outputs come in jax's order (sorted keys), named output_<key>
    assert sorted(got) == [f"output_{k}" for k in sorted(want)]
    for key, w in want.items():
        g, w = got[f"output_{key}"], w.detach().numpy()
        assert g.dtype == w.dtype and g.shape == w.shape, key
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=key)


def test_layers_and_functions_match_the_traced_program():
    """Static shapes, opset 16 (reductions take their axes as attributes before 18); the
    oracle is torchlike.export's program of the same forward run by XLA (one compiled program:
    the eager forward would compile each of ~70 ops)."""
    tl.manual_seed(0)
    model = _Layers().eval()
    arrays = _layer_inputs(4, np.random.default_rng(3))
    inputs = tuple(tl.from_numpy(a) for a in arrays)
    program = tl.onnx.export(model, inputs, opset_version=16)
    assert program.model_proto.opset_import[0].version == 16
    _check_outputs(program, arrays, program.exported_program.module()(*inputs))


def test_batch_sized_translations_match_eager():
    """The ops whose ONNX form computes sizes from the batch, with a dynamic batch, against
    the eager forward at two batch sizes; opset 14 (sizes sliced out of Shape)."""
    tl.manual_seed(0)
    model = _Layers().eval()
    gen = np.random.default_rng(4)

    def forward(x, img, tok):
        return _batched(model, x, img, tok)
    wrapper = nn.Module()
    wrapper.forward = forward
    wrapper.emb = model.emb
    program = tl.onnx.export(wrapper, tuple(tl.from_numpy(a) for a in _layer_inputs(3, gen)),
                             dynamic_axes={"x": {0: "b"}, "img": {0: "b"}, "tok": {0: "b"}},
                             opset_version=14)
    for n in (2, 5):
        arrays = _layer_inputs(n, gen)
        with tl.no_grad():
            want = forward(*(tl.from_numpy(a) for a in arrays))
        _check_outputs(program, arrays, want)


def test_a_loss_divides_by_the_dynamic_batch():
    """The mean over the batch reads the batch size as a value (jax's dim_as_value)."""
    class Loss(nn.Module):
        def forward(self, logits, target):
            return F.cross_entropy(logits, target)
    gen = np.random.default_rng(5)

    def batch(n):
        return gen.standard_normal((n, 4)).astype(np.float32), gen.integers(0, 4, n)
    program = tl.onnx.export(Loss(), tuple(tl.from_numpy(a) for a in batch(3)),
                             dynamic_axes={"logits": {0: "n"}, "target": {0: "n"}})
    session = _session(program.model_proto.SerializeToString())
    for n in (2, 7):
        logits, target = batch(n)
        (got,) = session.run(None, {"logits": logits, "target": target})
        want = F.cross_entropy(tl.from_numpy(logits), tl.from_numpy(target)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_lstm_with_dynamic_batch_and_sequence_axes():
    """Two dynamic axes (batch and time) trace symbolically through the LSTM's transposed
    views (their strides are expressions in the sizes) and run at other sizes."""
    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm, self.head = nn.LSTM(4, 8, batch_first=True), nn.Linear(8, 3)

        def forward(self, x):
            return self.head(self.lstm(x)[0])
    tl.manual_seed(0)
    model, gen = Tagger().eval(), np.random.default_rng(6)
    program = tl.onnx.export(model, (tl.randn(2, 5, 4),), input_names=["x"],
                             dynamic_axes={"x": {0: "b", 1: "t"}})
    dims = program.model_proto.graph.input[0].type.tensor_type.shape.dim
    assert [d.dim_param for d in dims[:2]] == ["b", "t"]
    session = _session(program.model_proto.SerializeToString())
    for shape in ((3, 9, 4), (1, 2, 4)):
        x = gen.standard_normal(shape).astype(np.float32)
        (got,) = session.run(None, {"x": x})
        with tl.no_grad():
            np.testing.assert_allclose(got, model(tl.from_numpy(x)).numpy(), atol=1e-5)


def test_optimize_folds_constants_in_place(exported):
    """ONNXProgram.optimize (torch's tutorial calls it) folds what depends on weights alone and
    drops what nothing reads; the optimized model computes the same outputs."""
    assert callable(torch.onnx.ONNXProgram.optimize)
    model = exported["encoder"][0]
    example = tl.from_numpy(_inputs("encoder", 3, np.random.default_rng(7)))
    program = tl.onnx.export(model, (example,), dynamic_axes={"src": [0]})
    x = _inputs("encoder", 4, np.random.default_rng(8))
    (before,) = program(tl.from_numpy(x))
    nodes, size = len(program.model_proto.graph.node), program.model_proto.ByteSize()
    program.optimize()
    onnx.checker.check_model(program.model_proto, full_check=True)
    graph = program.model_proto.graph
    assert len(graph.node) < nodes and program.model_proto.ByteSize() < 1.5 * size
    assert not any(n.op_type == "Constant" for n in graph.node)
    (after,) = program(tl.from_numpy(x))
    np.testing.assert_array_equal(after.numpy(), before.numpy())


def test_unsupported_op_names_the_primitive_and_the_function():
    class Inverse(nn.Module):
        def forward(self, x):
            return tl.special.erfinv(x) * 2

    with pytest.raises(tl.onnx.errors.UnsupportedOperatorError) as info:
        tl.onnx.export(Inverse(), (tl.rand(3),))
    message = str(info.value)
    assert isinstance(info.value, tl.onnx.OnnxExporterError)
    assert message.startswith("Exporting the operator 'jax::erf_inv' to ONNX opset version 20 "
                              "is not supported"), message
    assert "erfinv" in message      # the torchlike function (or its source line)
    with pytest.raises(tl.onnx.errors.UnsupportedOperatorError,
                       match="Try exporting with opset version 16"):   # ScatterND's add
        tl.onnx.export(_Layers().eval(), tuple(tl.from_numpy(a) for a in _layer_inputs(
            4, np.random.default_rng(0))), opset_version=15)
    dropout = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))     # in training mode
    with pytest.raises(tl.onnx.OnnxExporterError, match=r"draws random numbers .* model.eval"):
        tl.onnx.export(dropout, (tl.randn(2, 4),))
    with pytest.raises(ValueError, match="Unsupported ONNX opset version: 12"):
        tl.onnx.export(Inverse(), (tl.rand(3),), opset_version=12)


def test_missing_onnx_raises_as_pytorch(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)     # `import onnx` fails as if not installed

    def export(T, dynamo):
        return T.onnx.export(T.nn.Linear(2, 2), (T.ones(1, 2),), io.BytesIO(), dynamo=dynamo)
    with pytest.raises(ModuleNotFoundError, match=r'torchlike\[onnx\]') as info:
        export(tl, True)
    assert info.value.name == "onnx"
    with pytest.raises(ModuleNotFoundError):    # PyTorch: its backend (onnxscript) is missing
        export(torch, True)
    with pytest.raises(torch.onnx.OnnxExporterError) as theirs, warnings.catch_warnings():
        warnings.simplefilter("ignore")     # PyTorch's exporter is deprecated
        export(torch, False)
    with pytest.raises(tl.onnx.OnnxExporterError) as ours:
        export(tl, False)
    assert str(ours.value) == str(theirs.value)


def test_is_in_onnx_export_during_the_trace():
    def seen(T):
        class Probe(T.nn.Module):
            def forward(self, x):
                flags.append(T.onnx.is_in_onnx_export())
                return x * 2
        flags = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            T.onnx.export(Probe(), (T.ones(2),), io.BytesIO(), dynamo=False)
        return flags[0], T.onnx.is_in_onnx_export()
    assert seen(tl) == seen(torch) == (True, False)
