"""The modules and names PyTorch programs touch in their first lines, against real torch:
torch.onnx, torch.jit, torch.nn.parallel, torch.multiprocessing, torch.hub, the legacy tensor
types and Tensor.type, the constants, the in-place shape and storage methods, and indexing with
ranges and other sequences, and the version.  Each row runs the same function with ``torch``
and with ``torchlike`` (``both`` / ``same`` from parity)."""
import hashlib
import io
import json
import math
import os
import subprocess
import sys
import typing
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl
from parity import both, run, same

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# --- the version ---------------------------------------------------------------------------------

_VERSIONS = ["2.13.0+cpu", "2.13.0", "2.13", "2.1.0a0+git", "1.12.1", "2.13.0.post1",
             "2.13.0.dev20240101", "2.13.0rc1", "2.13.0a0", "2.13.0b2", "2.13.0rc1.dev3", "2.13.1",
             "3", "2.13.0+torchlike.0.1.0", "2.13.0.post1.dev2"]


def test_version_compares_as_pytorchs():
    """torch.__version__ >= "2.0" and the like: every comparison of a grid of version strings
    (and tuples) gives what torch.torch_version.TorchVersion gives."""
    from torch.torch_version import TorchVersion as Ref
    ops = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__")
    for v in _VERSIONS:
        for other in _VERSIONS + [(2, 13), (2, 13, 0), (1, 12)]:
            for op in ops:
                assert getattr(tl.torch_version.TorchVersion(v), op)(other) == \
                    getattr(Ref(v), op)(other), (v, op, other)


def test_version_is_the_release_torchlike_reproduces():
    assert isinstance(tl.__version__, str) and tl.__version__ is tl.version.__version__
    assert tl.__version__.split("+")[0] == torch.__version__.split("+")[0]   # tested against
    assert tl.__version__ >= "2.0" and tl.__version__ >= (2, 0)
    for name in ("cuda", "hip", "debug", "git_version"):
        assert hasattr(tl.version, name) and hasattr(torch.version, name)


# --- constants ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["pi", "e", "inf"])
def test_constants(name):
    assert getattr(tl, name) == getattr(torch, name)


def test_nan_and_newaxis():
    assert math.isnan(tl.nan) and tl.newaxis is torch.newaxis is None
    same(lambda T: T.zeros(2, 3)[T.newaxis, :, T.newaxis].shape)


# --- torch.autograd.Variable --------------------------------------------------------------------

def test_autograd_variable():
    def f(T):
        V = T.autograd.Variable
        t, w = T.ones(2), T.ones(2, requires_grad=True) * 2
        v, v2, v3 = V(t), V(t, requires_grad=True), V(w)
        out = [v is t, v.requires_grad, v.is_leaf, v2.requires_grad, v2.is_leaf,
               t.requires_grad, isinstance(t, V), isinstance(3, V), v3.requires_grad,
               v3.grad_fn, V().shape]
        t.add_(1)   # the same storage
        return out + [v]
    same(f)
    same(lambda T: T.autograd.Variable([1, 2]), raises=True)
    same(lambda T: T.autograd.Variable(T.ones(2, dtype=T.long), requires_grad=True),
         raises=True)
    assert tl.autograd.variable.Variable is tl.autograd.Variable


# --- torch.onnx ----------------------------------------------------------------------------------

def test_onnx_export_writes_a_model_and_returns_as_pytorchs():
    """dynamo=False (PyTorch's TorchScript exporter) writes a model to a file object and returns
    None in both; dynamo=True returns an ONNXProgram in torchlike (PyTorch's needs onnxscript,
    which is not installed here).  tests/test_onnx.py runs the files."""
    def legacy(T):
        buf = io.BytesIO()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # PyTorch: its exporter is deprecated
            out = T.onnx.export(T.nn.Linear(2, 2), (T.ones(1, 2),), buf, dynamo=False)
        return out, len(buf.getvalue()) > 100
    ref, got = both(legacy)
    assert ref == got == (None, True)
    assert isinstance(tl.onnx.export(tl.nn.Linear(2, 2), (tl.ones(1, 2),)), tl.onnx.ONNXProgram)
    assert issubclass(tl.onnx.OnnxExporterError, RuntimeError)
    assert tl.onnx.errors.OnnxExporterError is tl.onnx.OnnxExporterError
    assert issubclass(tl.onnx.errors.UnsupportedOperatorError, tl.onnx.OnnxExporterError)
    assert (str(tl.onnx.errors.UnsupportedOperatorError("aten::foo", 18, 20))
            == str(torch.onnx.errors.UnsupportedOperatorError("aten::foo", 18, 20)))


def test_onnx_names():
    assert tl.onnx.is_in_onnx_export() is torch.onnx.is_in_onnx_export() is False
    for enum in ("TrainingMode", "OperatorExportTypes"):
        ours, theirs = getattr(tl.onnx, enum), getattr(torch.onnx, enum)
        assert {m.name: int(m) for m in ours} == {
            k: int(v) for k, v in theirs.__members__.items()}
    assert (tl.onnx.producer_name, tl.onnx.producer_version) == (
        torch.onnx.producer_name, torch.onnx.producer_version)


def test_onnx_select_model_mode_for_export():
    def modes(T):
        m, seen = T.nn.Linear(2, 2), []
        for mode in (T.onnx.TrainingMode.EVAL, T.onnx.TrainingMode.TRAINING,
                     T.onnx.TrainingMode.PRESERVE):
            m.train(mode != T.onnx.TrainingMode.TRAINING)
            with T.onnx.select_model_mode_for_export(m, mode):
                seen.append(m.training)
            seen.append(m.training)
        return seen
    same(modes)
    same(lambda T: T.onnx.select_model_mode_for_export(T.nn.Linear(1, 1), 1).__enter__(),
         raises=True)


# --- torch.jit -----------------------------------------------------------------------------------

def _scaled(x: torch.Tensor, k: float) -> torch.Tensor:
    if torch.jit.is_scripting():
        return x * k
    return x * k + 0.0


def test_jit_script_computes_what_torchscript_computes():
    x = np.linspace(-1, 1, 6).reshape(2, 3).astype(np.float32)
    scripted = torch.jit.script(_scaled)
    ours_f = tl.jit.script(_scaled)
    assert type(ours_f).__name__ == type(scripted).__name__ == "ScriptFunction"
    np.testing.assert_allclose(ours_f(tl.tensor(x), 2.5).numpy(),
                               scripted(torch.tensor(x), 2.5).numpy(), rtol=1e-6)
    m = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU())
    ours = tl.nn.Sequential(tl.nn.Linear(3, 2), tl.nn.ReLU())
    ours.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in m.state_dict().items()})
    ours_m = tl.jit.script(ours)
    assert isinstance(ours_m, tl.jit.ScriptModule) and ours_m[0].weight is ours[0].weight
    np.testing.assert_allclose(ours_m(tl.tensor(x)).detach().numpy(),
                               torch.jit.script(m)(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-7)   # unseeded: float32 sums in two orders


def test_jit_decorators_and_helpers():
    def f(x):
        return x
    for name in ("ignore", "unused", "export"):
        assert getattr(tl.jit, name)(f) is f and getattr(torch.jit, name)(f) is f
    assert tl.jit.ignore(drop=True)(f) is f
    assert tl.jit.is_scripting() is torch.jit.is_scripting() is False
    assert tl.jit.is_tracing() is torch.jit.is_tracing() is False
    assert tl.jit.Final is torch.jit.Final is typing.Final
    assert tl.jit.annotate(typing.List[int], []) == torch.jit.annotate(typing.List[int], [])
    assert tuple(tl.jit.Attribute(3, int)) == tuple(torch.jit.Attribute(3, int))

    class Old(tl.jit.ScriptModule):   # the pre-1.2 style: a ScriptModule with script methods
        def __init__(self):
            super().__init__()
            self.k = tl.jit.Attribute(2.0, float)

        @tl.jit.script_method
        def forward(self, x):
            return x * self.k
    assert Old()(tl.ones(2)).tolist() == [2.0, 2.0]


# --- torch.nn.parallel ---------------------------------------------------------------------------

def test_data_parallel_without_an_accelerator_calls_the_module():
    def wrapped(T):
        T.manual_seed(0)
        dp = T.nn.DataParallel(T.nn.Linear(3, 2))
        x = T.arange(6.0).reshape(2, 3)
        out = dp(x)
        out.sum().backward()
        return (dp.device_ids, repr(dp), list(dp.state_dict()),
                [n for n, _ in dp.named_parameters()], out.shape, type(dp.module).__name__)
    same(wrapped)
    dp = tl.nn.DataParallel(tl.nn.Linear(3, 2))
    x = tl.randn(4, 3)
    assert tl.equal(dp(x), dp.module(x))


def test_distributed_data_parallel_needs_a_process_group():
    same(lambda T: T.nn.parallel.DistributedDataParallel(T.nn.Linear(2, 2)), raises=True)


DATA_PARALLEL_ON_TWO_DEVICES = '''
import json, torchlike as torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
x = torch.randn(5, 3)
ref = model(x)
ref.pow(2).sum().backward()
ref_grads = [p.grad.clone() for p in model.parameters()]
model.zero_grad()
dp = torch.nn.DataParallel(model.to("cuda"))
out = dp(x.to("cuda"))
out.pow(2).sum().backward()
chunks = torch.nn.parallel.scatter(x, [0, 1])
print(json.dumps({
    "device_ids": dp.device_ids, "out_device": str(out.device),
    "chunks": [[list(c.shape), str(c.device)] for c in chunks],
    "out": torch.allclose(out.cpu(), ref, atol=1e-6),
    "grads": all(torch.allclose(p.grad.cpu(), g, atol=1e-5)
                 for p, g in zip(model.parameters(), ref_grads))}))
'''


def test_data_parallel_splits_the_batch_over_two_devices(tmp_path):
    """Two CPU devices presented as cuda:0 and cuda:1 (NOTE [ devices ]): the output and the
    gradients are the module's own; the batch of 5 is chunked 3 + 2 as PyTorch's scatter."""
    env = dict(os.environ, PYTHONPATH=ROOT, JAX_PLATFORMS="cpu", TORCHLIKE_CPU_AS_CUDA="1",
               XLA_FLAGS="--xla_force_host_platform_device_count=3")
    r = subprocess.run([sys.executable, "-c", DATA_PARALLEL_ON_TWO_DEVICES], env=env,
                       capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["device_ids"] == [0, 1] and out["out_device"] == "cuda:0"
    assert out["chunks"] == [[[3, 3], "cuda:0"], [[2, 3], "cuda:1"]]
    assert out["out"] and out["grads"]


# --- torch.multiprocessing -----------------------------------------------------------------------

def test_multiprocessing_reexports_pythons():
    import multiprocessing
    for name in multiprocessing.__all__:
        assert getattr(tl.multiprocessing, name) is getattr(multiprocessing, name), name
    for name in ("spawn", "start_processes", "ProcessContext", "ProcessRaisedException",
                 "ProcessExitedException", "get_sharing_strategy", "set_sharing_strategy",
                 "get_all_sharing_strategies"):
        assert hasattr(tl.multiprocessing, name) and hasattr(torch.multiprocessing, name)
    assert tl.multiprocessing.get_all_sharing_strategies() == (
        torch.multiprocessing.get_all_sharing_strategies())
    assert (tl.multiprocessing.get_sharing_strategy()
            == torch.multiprocessing.get_sharing_strategy())
    with pytest.raises(AssertionError):
        tl.multiprocessing.set_sharing_strategy("shared_dreams")


# --- torch.hub -----------------------------------------------------------------------------------

HUBCONF = '''
dependencies = ["numpy"]


def tiny(width=2, scale=1):
    """A tiny entry point."""
    return width * 2 * scale


def needs_missing():
    return 0


_private = 3
'''


@pytest.fixture
def hub_dirs(tmp_path, monkeypatch):
    """Both hubs pointed at one fresh cache holding repo owner/repo:main (trusted)."""
    cache = tmp_path / "hub"
    (cache / "owner_repo_main").mkdir(parents=True)
    (cache / "owner_repo_main" / "hubconf.py").write_text(HUBCONF)
    (cache / "trusted_list").write_text("owner_repo\n")
    local = tmp_path / "local_repo"
    local.mkdir()
    (local / "hubconf.py").write_text(HUBCONF + 'dependencies = ["numpy", "no_such_pkg"]\n')
    monkeypatch.setattr(torch.hub, "_hub_dir", str(cache))
    monkeypatch.setattr(tl.hub, "_hub_dir", str(cache))
    return cache, local


def test_hub_get_dir_is_pytorchs(monkeypatch, tmp_path):
    monkeypatch.setattr(torch.hub, "_hub_dir", None)
    monkeypatch.setattr(tl.hub, "_hub_dir", None)
    for env in ({}, {"TORCH_HOME": str(tmp_path / "th")}, {"XDG_CACHE_HOME": str(tmp_path)}):
        with monkeypatch.context() as m:
            m.delenv("TORCH_HOME", raising=False)
            m.delenv("XDG_CACHE_HOME", raising=False)
            for k, v in env.items():
                m.setenv(k, v)
            assert tl.hub.get_dir() == torch.hub.get_dir()
    tl.hub.set_dir("~/x")
    torch.hub.set_dir("~/x")
    assert tl.hub.get_dir() == torch.hub.get_dir()


def test_hub_load_list_help(hub_dirs):
    cache, local = hub_dirs
    same(lambda T: T.hub.load(str(cache / "owner_repo_main"), "tiny", 3, source="local",
                              scale=2))
    same(lambda T: T.hub.load("owner/repo:main", "tiny", width=5, verbose=False))
    same(lambda T: T.hub.list("owner/repo:main", verbose=False))
    same(lambda T: T.hub.help("owner/repo:main", "tiny"))
    same(lambda T: T.hub.load(str(local), "tiny", source="local"), raises=True)  # dependency
    same(lambda T: T.hub.load(str(cache / "owner_repo_main"), "nope", source="local"),
         raises=True)
    same(lambda T: T.hub.load("owner/repo:main", "tiny", source="gitlab"), raises=True)


def test_hub_never_downloads(hub_dirs):
    with pytest.raises(RuntimeError, match="does not download"):
        tl.hub.load("owner/elsewhere:main", "tiny", trust_repo=True)
    with pytest.raises(RuntimeError, match="does not download"):
        tl.hub.load_state_dict_from_url("https://example.com/weights.pth")
    with pytest.raises(RuntimeError, match="does not download"):
        tl.hub.download_url_to_file("https://example.com/weights.pth", "/tmp/never")


def test_hub_load_state_dict_from_url(tmp_path, hub_dirs, capsys):
    state = {"w": torch.arange(6.0).reshape(2, 3), "b": torch.tensor([1, 2])}
    src = tmp_path / "src" / "weights.pt"
    src.parent.mkdir()
    torch.save(state, src)
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    hashed = src.with_name(f"weights-{digest[:8]}.pt")
    hashed.write_bytes(src.read_bytes())
    for url, name in ((src.as_uri(), "weights.pt"), (hashed.as_uri(), hashed.name)):
        ours = tl.hub.load_state_dict_from_url(url, model_dir=str(tmp_path / "a"),
                                               check_hash=True)
        theirs = torch.hub.load_state_dict_from_url(url, model_dir=str(tmp_path / "b"),
                                                    check_hash=True)
        assert list(ours) == list(theirs)
        for k in theirs:
            np.testing.assert_array_equal(ours[k].numpy(), theirs[k].numpy())
        assert (tmp_path / "a" / name).read_bytes() == src.read_bytes()
    # a checkpoint already in the cache is loaded without the network (as torch does)
    (tmp_path / "a" / "remote.pt").write_bytes(src.read_bytes())
    cached = tl.hub.load_state_dict_from_url("https://example.com/x/remote.pt",
                                             model_dir=str(tmp_path / "a"))
    np.testing.assert_array_equal(cached["w"].numpy(), state["w"].numpy())
    bad = hashed.with_name("weights-0000beef.pt")
    bad.write_bytes(src.read_bytes())
    same(lambda T: T.hub.load_state_dict_from_url(bad.as_uri(), model_dir=str(
        tmp_path / ("a" if T is tl else "b")), check_hash=True), raises=True)
    assert 'Downloading: "file://' in capsys.readouterr().out


# --- legacy tensor types and Tensor.type ---------------------------------------------------------

LEGACY = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor",
          "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"]
DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
          "uint8", "bool", "complex64"]


def test_legacy_types_are_pytorchs():
    assert sorted(n for n in dir(torch) if n.endswith("Tensor") and n != "Tensor"
                  and not n.startswith("_")) == sorted(LEGACY)
    for name in LEGACY:
        same(lambda T: (getattr(T, name).dtype, getattr(T, name).is_cuda,
                        getattr(T, name).is_sparse, getattr(T, name).__name__))


@pytest.mark.parametrize("name", LEGACY)
def test_isinstance_of_a_legacy_type(name):
    same(lambda T: [isinstance(T.zeros(2, dtype=getattr(T, d)), getattr(T, name))
                    for d in DTYPES] + [isinstance(3, getattr(T, name))])


LEGACY_NEW = [
    lambda T: T.FloatTensor([1, 2]),
    lambda T: T.LongTensor([1.7, -2.5]),
    lambda T: T.IntTensor(np.array([1.7, 3.2])),
    lambda T: T.BoolTensor([1, 0, 2]),
    lambda T: T.ByteTensor([1, 255]),
    lambda T: T.DoubleTensor((2, 3)),                  # a tuple is data
    lambda T: T.FloatTensor([[1.0], [2.0]], device="cpu"),
    lambda T: T.FloatTensor(),
    lambda T: T.FloatTensor([]),
    lambda T: (T.FloatTensor(2, 3).shape, T.FloatTensor(2, 3).dtype),   # sizes: uninitialized
    lambda T: (T.HalfTensor(T.Size([2, 1])).shape, T.ShortTensor(0).shape, T.BoolTensor(2).dtype),
    lambda T: T.FloatTensor(T.tensor([1.0, 2.0])),
    lambda T: T.FloatTensor([1, 2]).requires_grad,
]
LEGACY_NEW_ERRORS = [
    lambda T: T.FloatTensor(T.tensor([1, 2])),
    lambda T: T.FloatTensor(2.5),
    lambda T: T.FloatTensor("abc"),
    lambda T: T.FloatTensor(2, "a"),
    lambda T: T.FloatTensor(2, 3.0),
    lambda T: T.FloatTensor([1, 2], device="meta"),
]


@pytest.mark.parametrize("case", range(len(LEGACY_NEW)))
def test_legacy_constructor(case):
    same(LEGACY_NEW[case])


@pytest.mark.parametrize("case", range(len(LEGACY_NEW_ERRORS)))
def test_legacy_constructor_errors(case):
    same(LEGACY_NEW_ERRORS[case], raises=True)


TYPE_CASES = [
    lambda T: [T.zeros(1, dtype=getattr(T, d)).type() for d in DTYPES],
    lambda T: T.zeros(2).type(T.DoubleTensor),
    lambda T: T.zeros(2, dtype=T.int64).type("torch.FloatTensor"),
    lambda T: T.zeros(2).type(T.float16),
    lambda T: T.zeros(2, dtype=T.int64).type(T.Tensor),
    lambda T: [(lambda x: x.type(t) is x)(T.zeros(2)) for t in (
        T.FloatTensor, "torch.FloatTensor", T.float32, T.Tensor)],
]
TYPE_ERRORS = [lambda T: T.zeros(2).type(s) for s in (
    "float", "DoubleTensor", "torch.double", "torch.meta.FloatTensor")] + [
    lambda T: T.zeros(2).type(3)]


@pytest.mark.parametrize("case", range(len(TYPE_CASES)))
def test_tensor_type(case):
    same(TYPE_CASES[case])


@pytest.mark.parametrize("case", range(len(TYPE_ERRORS)))
def test_tensor_type_errors(case):
    same(TYPE_ERRORS[case], raises=True)


# --- in-place shape methods ----------------------------------------------------------------------

def _inplace_view(method, args, shape=(3, 1, 2)):
    def f(T):
        w = T.arange(float(math.prod(shape))).reshape(shape).requires_grad_()
        y = w * 2
        r = getattr(y, method)(*args)
        out = (r is y, r.shape, r.stride(), y._version, type(y.grad_fn).__name__, r * 1)
        (r * T.arange(r.numel()).reshape(r.shape)).sum().backward()
        return out + (w.grad,)
    return f


INPLACE_VIEWS = [("squeeze_", ()), ("squeeze_", (1,)), ("squeeze_", ((1, 2),)),
                 ("squeeze_", (0,)), ("unsqueeze_", (0,)), ("unsqueeze_", (-1,)),
                 ("t_", (), (2, 3)), ("t_", (), (3,))]


@pytest.mark.parametrize("case", INPLACE_VIEWS, ids=str)
def test_inplace_view_methods(case):
    same(_inplace_view(*case))


INPLACE_VIEW_ERRORS = [
    lambda T: T.zeros(3, 1, requires_grad=True).squeeze_(),
    lambda T: T.zeros(2, 3).squeeze_(5),
    lambda T: T.zeros(2, 3).unsqueeze_(3),
    lambda T: T.zeros(2, 3, 4).t_(),
]


@pytest.mark.parametrize("case", range(len(INPLACE_VIEW_ERRORS)))
def test_inplace_view_errors(case):
    same(INPLACE_VIEW_ERRORS[case], raises=True)


def test_inplace_view_of_a_view_keeps_writing_through():
    def f(T):
        base = T.zeros(2, 3)
        v = base[1:]
        v.squeeze_(0)
        v.fill_(5.0)
        return base, v.shape, v.stride()
    same(f)


RESIZE = [
    lambda T: T.arange(6.0).reshape(2, 3).resize_(3, 2),
    lambda T: T.arange(6.0).resize_((2, 2)),
    lambda T: T.arange(6.0).resize_(T.Size([1, 4])).stride(),
    lambda T: T.arange(6.0).reshape(2, 3).t().contiguous().t().resize_(6),   # memory order
    lambda T: T.arange(4.0).resize_(2, 3)[0],              # the kept elements come first
    lambda T: (lambda x: (x.resize_(2, 3), x._version))(T.zeros(3, 2)),
    lambda T: T.arange(8.0).resize_(2, 2, 2, 1, memory_format=T.channels_last).stride(),
    lambda T: T.zeros(3).resize_as_(T.zeros(2, 2)).shape,
    lambda T: T.arange(6.0)[2:4].resize_(1, 2),
]
RESIZE_ERRORS = [
    lambda T: T.zeros(2, requires_grad=True).resize_(3),
    lambda T: (T.zeros(2, requires_grad=True) * 1).resize_(3),
    lambda T: T.zeros(2).resize_(2, -1),
    lambda T: T.zeros(2).resize_(2.5),
    lambda T: T.zeros(2).resize_(),
    lambda T: T.zeros(2).resize_(2, memory_format=T.channels_last),
]


@pytest.mark.parametrize("case", range(len(RESIZE)))
def test_resize(case):
    same(RESIZE[case])


@pytest.mark.parametrize("case", range(len(RESIZE_ERRORS)))
def test_resize_errors(case):
    same(RESIZE_ERRORS[case], raises=True)


FILL_DIAGONAL = [
    lambda T: T.zeros(3, 4).fill_diagonal_(5),
    lambda T: T.zeros(4, 3).fill_diagonal_(2),
    lambda T: T.zeros(7, 3).fill_diagonal_(2, wrap=True),
    lambda T: T.zeros(10, 3).fill_diagonal_(2, wrap=True),
    lambda T: T.zeros(4, 3).fill_diagonal_(2, wrap=True),
    lambda T: T.zeros(3, 3, 3).fill_diagonal_(1),
    lambda T: T.zeros(3, 3, dtype=T.int64).fill_diagonal_(1.5),
    lambda T: T.zeros(3, 3, dtype=T.bool).fill_diagonal_(True),
    lambda T: T.zeros(4, 2).t().fill_diagonal_(3),         # not contiguous
]


@pytest.mark.parametrize("case", range(len(FILL_DIAGONAL)))
def test_fill_diagonal(case):
    same(FILL_DIAGONAL[case])


def test_fill_diagonal_autograd_and_errors():
    def f(T):
        w = T.arange(9.0).reshape(3, 3).requires_grad_()
        y = w * 2
        y.fill_diagonal_(-1)
        (y * T.arange(9.0).reshape(3, 3)).sum().backward()
        return y, type(y.grad_fn).__name__.replace("torch::autograd::", ""), w.grad
    ref, got = run(f, torch), run(f, tl)
    assert ref[1] == got[1] == "CopySlices"
    np.testing.assert_array_equal(got[0].detach().numpy(), ref[0].detach().numpy())
    np.testing.assert_array_equal(got[2].numpy(), ref[2].numpy())
    for bad in (lambda T: T.zeros(3).fill_diagonal_(1),
                lambda T: T.zeros(2, 3, 2).fill_diagonal_(1),
                lambda T: T.zeros(2, 2, requires_grad=True).fill_diagonal_(1)):
        same(bad, raises=True)


# --- storage: data_ptr, storage_offset, nbytes, itemsize, untyped_storage -----------------------

VIEWS = [lambda x: x, lambda x: x[1], lambda x: x[:, 2], lambda x: x[1:, 1:], lambda x: x.t(),
         lambda x: x.view(-1)[5:], lambda x: x[::2, ::3], lambda x: x.detach(),
         lambda x: x.reshape(3, 4)[2], lambda x: x.diagonal(), lambda x: x.unsqueeze(0)[0, 1]]


def test_storage_offset_and_data_ptr_of_views():
    def f(T):
        x = T.zeros(3, 4)
        out = []
        for view in VIEWS:
            v = view(x)
            out.append((v.storage_offset(), v.data_ptr() - x.data_ptr(),
                        v.untyped_storage().nbytes(), v.untyped_storage().size(),
                        len(v.untyped_storage()),
                        v.untyped_storage().data_ptr() == x.data_ptr()))
        return out
    same(f)


def test_data_ptr_identifies_storage():
    def f(T):
        x = T.arange(6.0)
        before = x.data_ptr()
        x.add_(1)
        y = x.clone()
        return (x.data_ptr() == before, y.data_ptr() != x.data_ptr(),
                x[2:].data_ptr() - x.data_ptr(), T.zeros(0).data_ptr(),
                x.untyped_storage().element_size(), x.data_ptr() % 16)
    same(f)


@pytest.mark.parametrize("dtype", DTYPES)
def test_nbytes_and_itemsize(dtype):
    same(lambda T: (lambda x: (x.nbytes, x.itemsize, x[1:].nbytes, x.expand(4, 3, 2).nbytes,
                               x.element_size()))(T.zeros(3, 2, dtype=getattr(T, dtype))))


def test_share_memory():
    same(lambda T: (lambda x: (x.is_shared(), x.share_memory_() is x))(T.zeros(2)))
    assert tl.zeros(2).share_memory_().is_shared() is False   # NOTE [ tensors between processes ]


# --- a view as another dtype: the same bytes (NOTE [ dtype views ] in torchlike/_ops/shape.py) ---

BYTES = np.random.default_rng(7).integers(0, 256, 48, dtype=np.uint8)
# (the source's dtype, the view's): equal sizes, smaller, larger; complex, bfloat16, half, bool
DTYPE_VIEWS = [("float32", "int32"), ("int32", "float32"), ("float64", "int64"),
               ("float32", "int16"), ("int16", "float32"), ("float32", "uint8"),
               ("uint8", "float64"), ("float64", "complex64"), ("complex64", "float32"),
               ("complex128", "int32"), ("bfloat16", "float16"), ("float16", "int8"),
               ("int8", "bfloat16"), ("int64", "complex128"), ("float32", "float32")]


def _from_bytes(T, dtype, shape):
    """A tensor of ``dtype`` and ``shape`` holding the same bytes in either library (finite
    floats: each float made from its own integer)."""
    n = math.prod(shape)
    if dtype in ("float32", "float64", "float16", "bfloat16", "complex64", "complex128"):
        values = (BYTES[:n].astype(np.float64) - 128) / 8
        return T.tensor(values, dtype=getattr(T, dtype)).reshape(shape) if "complex" not in \
            dtype else T.complex(T.tensor(values), T.tensor(values[::-1].copy())).to(
                getattr(T, dtype)).reshape(shape)
    return T.tensor(BYTES[:n].astype(np.int64) - (128 if dtype.startswith("int") else 0),
                    dtype=getattr(T, dtype)).reshape(shape)


@pytest.mark.parametrize("src, dst", DTYPE_VIEWS, ids=[f"{a}-{b}" for a, b in DTYPE_VIEWS])
def test_a_view_as_another_dtype_reads_and_writes_the_same_bytes(src, dst):
    def f(T):
        x = _from_bytes(T, src, (3, 16))
        views = [x.view(getattr(T, dst)), x[1:].view(dtype=getattr(T, dst)),
                 x.view(getattr(T, dst))[1:, 1:]]
        seen = [(tuple(v.shape), v.stride(), v.storage_offset(), v.data_ptr() - x.data_ptr(),
                 v.requires_grad, v.grad_fn is None, v._base is None) for v in views]
        first = [v.clone() for v in views]
        views[2][0, 0] = 1   # the write lands in x's bytes, the other views read it
        views[1].zero_()
        x[0, 0] = 2   # and a write to x shows in its views
        return seen, first, [x.clone(), *views], x._version, views[0]._version
    same(f)


def test_views_as_bool_and_of_bools():
    def f(T):
        x = T.tensor([0, 1, 2, 0, 255, 0], dtype=T.uint8)
        b = x.view(T.bool)
        b[1] = False   # as bytes: the bytes it leaves keep theirs
        flags = T.tensor([True, False, False, True])
        bits = flags.view(T.int8)
        bits[2] = 1
        return x.clone(), b[::2].clone(), flags.clone(), bits.clone(), \
            T.tensor([1.0, -2.0]).view(T.bool).shape
    same(f)


def test_a_view_as_another_dtype_of_a_tensor_that_requires_grad():
    """No history and no view for autograd (``_base`` is None), the same storage and version
    counter: an in-place write through it is allowed, as in PyTorch."""
    def f(T):
        w = T.ones(2, 4, requires_grad=True)
        v = w.view(T.int16)
        v.add_(1)
        half = w.detach().view(T.float16)
        return v.requires_grad, v.grad_fn is None, w._version, w.detach().clone(), \
            half.requires_grad, tuple(half.shape)
    same(f)


DTYPE_VIEW_ERRORS = {
    "0-dim": lambda T: T.tensor(1.0).view(T.int16),
    "0-dim larger": lambda T: T.tensor(1, dtype=T.int16).view(T.int32),
    "size": lambda T: T.zeros(2, 3, dtype=T.int16).view(T.int32),
    "offset": lambda T: T.zeros(3, 4, dtype=T.int16)[:, 1:3].view(T.int32),
    "last stride": lambda T: T.zeros(4, 4, dtype=T.int16).t()[:, :2].view(T.int32),
    "offset, then last stride": lambda T: T.zeros(4, 4, dtype=T.int16).t()[1:, :2].view(T.int32),
    "last stride, smaller": lambda T: T.zeros(3, 4).t().view(T.int16),
    "stride": lambda T: T.zeros(3, 5, dtype=T.int16)[:, :4].view(T.int32),
    "empty": lambda T: T.zeros(2, 0, dtype=T.int16).view(T.int32)}


@pytest.mark.parametrize("case", DTYPE_VIEW_ERRORS)
def test_a_view_as_another_dtype_refuses_what_pytorch_refuses(case):
    same(DTYPE_VIEW_ERRORS[case], raises=True)


# --- indexing with ranges and other sequences ----------------------------------------------------

INDICES = [range(3), range(0, 4, 2), range(0), [0, 2], (0, 2), np.array([0, 2]),
           np.array([[0, 1], [2, 3]]), np.array([0, 1], dtype=np.int32),
           [True, False, True, False],
           np.array([True, False, True, True]), (range(2), range(2)), (slice(None), range(2)),
           (range(2), 1), [[0, 1], [1, 0]], [0, range(2)], [np.int64(1), np.int64(2)],
           (np.int64(1),), np.array(2), np.array(-1, dtype=np.int32), [-1, -4], [], ([0, 1],)]


@pytest.mark.parametrize("index", INDICES, ids=repr)
def test_getitem_with_sequences(index):
    def f(T):
        x = T.arange(24.0).reshape(4, 6).requires_grad_()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # the deprecated list-as-tuple spellings warn
            y = x[index]
        y.sum().backward()
        return y, x.grad
    same(f)


@pytest.mark.parametrize("index", [range(3), [0, 2], (0, 2), (range(2), range(2)),
                                   np.array([0, 2]), [True, False, True, False]], ids=repr)
def test_setitem_with_sequences(index):
    def f(T):
        x = T.arange(24.0).reshape(4, 6)
        x[index] = -1.0
        return x
    same(f)


def test_index_out_of_range_in_a_sequence():
    same(lambda T: T.zeros(3)[range(4)], raises=True)
    same(lambda T: T.zeros(3)[np.array(5)], raises=True)



def test_device_predicates_and_storage_names():
    def probe(T):
        x, m = T.ones(2), T.ones(2, device="meta")
        return (x.is_xla, x.is_mps, x.is_xpu, x.is_meta, m.is_meta, m.is_cpu, m.get_device(),
                x.const_data_ptr() == x.data_ptr(), type(x.untyped_storage()) is T.UntypedStorage,
                issubclass(T.AcceleratorError, RuntimeError),
                issubclass(T.cuda.OutOfMemoryError, RuntimeError))
    same(probe)
