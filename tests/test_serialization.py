"""torchlike.save / torchlike.load against real torch.save / torch.load (the oracle): files go
both ways, and weights_only, the environment overrides, errors and atomic writes behave as
torch's do."""
import collections
import io
import os
import pickle
import pickletools
import struct
import warnings
import zipfile

import numpy as np
import pytest
import torch

import torchlike as tl
from torchlike import serialization as S

RNG = np.random.default_rng(0)

DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64",
          "uint8", "bool", "complex64", "complex128", "uint16", "uint32", "uint64"]


class Config:
    """A user class a checkpoint may hold (needs add_safe_globals under weights_only)."""

    def __init__(self, lr):
        self.lr = lr


class RunsCode:
    """Unpickling it evaluates ``code`` (a stand-in for a malicious checkpoint)."""

    def __init__(self, func, code):
        self.func, self.code = func, code

    def __reduce__(self):
        return (self.func, (self.code,))


def _values(dtype_name, shape=(2, 3)):
    if dtype_name == "bool":
        return RNG.random(shape) > 0.5
    if dtype_name.startswith("complex"):
        return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype_name)
    if dtype_name.startswith(("int", "uint")):
        return RNG.integers(0, 100, shape).astype(dtype_name)
    return RNG.standard_normal(shape).astype(np.float32).astype(getattr(tl, dtype_name)._np)


def _torch_bytes(t):
    """A torch tensor's values as bytes (row-major), for dtypes numpy lacks too."""
    t = t.detach().resolve_conj().resolve_neg().contiguous()
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    return t.numpy().tobytes()


def _tl_bytes(t):
    return np.ascontiguousarray(np.asarray(t._value())).tobytes()


def _assert_same(t_torch, t_tl, strides=True):
    """A torch tensor and a torchlike tensor hold the same tensor."""
    assert str(t_torch.dtype) == repr(t_tl.dtype)
    assert tuple(t_torch.shape) == tuple(t_tl.shape)
    assert _torch_bytes(t_torch) == _tl_bytes(t_tl)
    assert t_torch.requires_grad == t_tl.requires_grad
    if strides:
        assert t_torch.stride() == t_tl.stride()


def _assert_tree(a_torch, b_tl):
    """Nested containers agree, tensors compared with _assert_same."""
    if isinstance(a_torch, torch.Tensor):
        assert isinstance(b_tl, tl.Tensor)
        assert isinstance(a_torch, torch.nn.Parameter) == isinstance(b_tl, tl.nn.Parameter)
        _assert_same(a_torch, b_tl)
    elif isinstance(a_torch, dict):
        assert type(a_torch) is type(b_tl) and list(a_torch) == list(b_tl)
        for k in a_torch:
            _assert_tree(a_torch[k], b_tl[k])
    elif isinstance(a_torch, (list, tuple)):
        assert type(a_torch) is type(b_tl) and len(a_torch) == len(b_tl)
        for x, y in zip(a_torch, b_tl):
            _assert_tree(x, y)
    else:
        assert type(a_torch) is type(b_tl) and a_torch == b_tl


def _torch_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4),
                               torch.nn.ReLU(), torch.nn.Linear(4, 2))


def _tl_model():
    return tl.nn.Sequential(tl.nn.Linear(3, 4), tl.nn.BatchNorm1d(4), tl.nn.ReLU(),
                            tl.nn.Linear(4, 2))


def _optimizer_state(T):
    """An Adam-style state_dict built by hand in module ``T`` (torch or torchlike)."""
    def t(shape):
        return T.tensor(RNG.standard_normal(shape).astype(np.float32))
    return {"state": {0: {"step": T.tensor(3.0), "exp_avg": t((2, 3)), "exp_avg_sq": t((2, 3))},
                      1: {"step": T.tensor(3.0), "exp_avg": t((2,)), "exp_avg_sq": t((2,))}},
            "param_groups": [{"lr": 0.1, "betas": (0.9, 0.999), "eps": 1e-08,
                              "weight_decay": 0, "amsgrad": False, "maximize": False,
                              "foreach": None, "capturable": False, "differentiable": False,
                              "fused": None, "decoupled_weight_decay": False,
                              "params": [0, 1]}]}


# --- torchlike.save -> torch.load ---------------------------------------------------------------

def test_module_state_dict_loads_in_torch(tmp_path):
    model = _tl_model()
    model(tl.tensor(RNG.standard_normal((5, 3)).astype(np.float32)))   # moves running stats
    sd = model.state_dict()
    S.save(sd, tmp_path / "model.pt")
    loaded = torch.load(tmp_path / "model.pt", weights_only=True)
    assert type(loaded) is collections.OrderedDict and list(loaded) == list(sd)
    assert loaded._metadata == sd._metadata
    for k in sd:
        _assert_same(loaded[k], sd[k])
    ref = _torch_model()
    ref.load_state_dict(loaded)
    ref.eval()
    model.eval()
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_allclose(model(tl.tensor(x)).detach().numpy(),
                               ref(torch.tensor(x)).detach().numpy(), rtol=1e-6, atol=1e-6)


def test_every_dtype_loads_in_torch():
    obj = {name: tl.tensor(_values(name), dtype=getattr(tl, name)) for name in DTYPES}
    obj["scalar"] = tl.tensor(2.5)
    obj["empty"] = tl.zeros(0, 3)
    buf = io.BytesIO()
    S.save(obj, buf)
    buf.seek(0)
    loaded = torch.load(buf, weights_only=True)
    for k in obj:
        _assert_same(loaded[k], obj[k])


def test_views_parameters_and_attributes_load_in_torch():
    x = tl.arange(24.0).reshape(4, 6)
    z = tl.tensor(_values("complex64", (3,)))
    p = tl.nn.Parameter(tl.ones(2, 2))
    w = tl.nn.Parameter(tl.zeros(3), requires_grad=False)
    a = tl.ones(2)
    a.note = "kept"
    obj = {"base": x, "t": x.t(), "col": x[:, 1], "block": x[1:3, 2:5], "step": x[::2, ::3],
           "expand": tl.arange(3.0).expand(2, 3), "conj": z.conj(), "real": tl.view_as_real(z),
           "p": p, "p_again": p, "w": w, "attr": a,
           "grad": tl.ones(2, requires_grad=True) * 2}
    buf = io.BytesIO()
    S.save(obj, buf)
    buf.seek(0)
    loaded = torch.load(buf, weights_only=True)
    for k in obj:
        _assert_same(loaded[k], obj[k])
    # views share their base's storage at torch's offsets, as torch.save writes them
    tx = torch.arange(24.0).reshape(4, 6)
    for k, view in [("t", tx.t()), ("col", tx[:, 1]), ("block", tx[1:3, 2:5]),
                    ("step", tx[::2, ::3])]:
        assert loaded[k].storage_offset() == view.storage_offset()
        assert loaded[k].untyped_storage().data_ptr() == loaded["base"].untyped_storage(
        ).data_ptr()
    assert type(loaded["p"]) is torch.nn.Parameter and loaded["p"] is loaded["p_again"]
    assert not loaded["w"].requires_grad and type(loaded["w"]) is torch.nn.Parameter
    assert loaded["attr"].note == "kept"
    # a view that cannot live in its root's storage gets its own, and only that is written
    buf = io.BytesIO()
    S.save({"conj": z.conj()}, buf)
    assert sum("/data/" in n for n in zipfile.ZipFile(buf).namelist()) == 1
    buf.seek(0)
    _assert_same(torch.load(buf)["conj"], z.conj())


def test_nested_and_optimizer_state_load_in_torch():
    state = _optimizer_state(tl)
    nested = {"list": [tl.ones(2), 3, 2.5, "s", None, True],
              "tuple": (tl.zeros(1, dtype=tl.int64), (1, (2.0,))), "size": tl.Size([2, 3]),
              "dtype": tl.bfloat16, "device": tl.device("cpu"), "set": {1, 2},
              "complex": 1 + 2j, "bytes": b"\x00ab", "counter": collections.Counter(a=2)}
    buf = io.BytesIO()
    S.save({"optimizer": state, "nested": nested}, buf)
    buf.seek(0)
    loaded = torch.load(buf, weights_only=True)
    _assert_tree(loaded["optimizer"], state)
    got = loaded["nested"]
    _assert_tree(got["list"], nested["list"])
    _assert_tree(got["tuple"], nested["tuple"])
    assert got["size"] == torch.Size([2, 3]) and type(got["size"]) is torch.Size
    assert got["dtype"] is torch.bfloat16 and got["device"] == torch.device("cpu")
    assert (got["set"], got["complex"], got["bytes"], got["counter"]) == (
        {1, 2}, 1 + 2j, b"\x00ab", collections.Counter(a=2))
    # torch's own optimizer accepts the state
    params = [torch.nn.Parameter(torch.zeros(2, 3)), torch.nn.Parameter(torch.zeros(2))]
    opt = torch.optim.Adam(params, lr=0.5)
    opt.load_state_dict(loaded["optimizer"])
    assert opt.param_groups[0]["lr"] == 0.1
    _assert_same(opt.state[params[0]]["exp_avg"], state["state"][0]["exp_avg"])


def test_archive_layout_matches_torch(tmp_path):
    """Same records, record contents, globals and 64-byte data alignment as torch.save."""
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    S.save({"a": tl.tensor(x), "b": tl.nn.Parameter(tl.tensor(x[0])),
            "c": tl.zeros(2, dtype=tl.uint16)}, tmp_path / "my.model.pt")
    torch.save({"a": torch.tensor(x), "b": torch.nn.Parameter(torch.tensor(x[0])),
                "c": torch.zeros(2, dtype=torch.uint16)}, tmp_path / "ref.model.pt")
    ours, ref = (zipfile.ZipFile(tmp_path / n) for n in ("my.model.pt", "ref.model.pt"))
    names = [n.replace("my.model/", "") for n in ours.namelist()]
    assert names == [n.replace("ref.model/", "") for n in ref.namelist()]
    for n in (".format_version", ".storage_alignment", "byteorder", "version", "data/0"):
        assert ours.read("my.model/" + n) == ref.read("ref.model/" + n)
    assert len(ours.read("my.model/.data/serialization_id")) == 40

    def globals_of(zf, name):
        return {arg for op, arg, _ in pickletools.genops(zf.read(name + "/data.pkl"))
                if op.name == "GLOBAL"}
    assert globals_of(ours, "my.model") == globals_of(ref, "ref.model")
    raw = (tmp_path / "my.model.pt").read_bytes()
    for info in ours.infolist():
        name_len, extra_len = struct.unpack("<HH", raw[info.header_offset + 26:
                                                       info.header_offset + 30])
        assert (info.header_offset + 30 + name_len + extra_len) % 64 == 0
    assert ours.testzip() is None


def test_zip64_records(tmp_path, monkeypatch):
    """Entries, offsets and counts past the classic limits use zip64 fields (limits lowered)."""
    from torchlike.serialization import _zip as Z
    monkeypatch.setattr(Z, "ZIP64_LIMIT", 100)
    monkeypatch.setattr(Z, "ZIP64_COUNT_LIMIT", 3)
    values = RNG.standard_normal(40).astype(np.float32)
    S.save({"a": tl.tensor(values)}, tmp_path / "big.pt")
    assert zipfile.ZipFile(tmp_path / "big.pt").testzip() is None
    np.testing.assert_array_equal(torch.load(tmp_path / "big.pt")["a"].numpy(), values)
    np.testing.assert_array_equal(S.load(tmp_path / "big.pt")["a"].numpy(), values)


def test_legacy_format_save(tmp_path):
    x = tl.arange(6.0).reshape(2, 3)
    obj = {"t": x.t(), "p": tl.nn.Parameter(tl.ones(2)), "i": tl.tensor([1, 2], dtype=tl.int16)}
    S.save(obj, tmp_path / "old.pt", _use_new_zipfile_serialization=False)
    assert not zipfile.is_zipfile(tmp_path / "old.pt")
    for k, v in torch.load(tmp_path / "old.pt", weights_only=True).items():
        _assert_same(v, obj[k])
    for k, v in S.load(tmp_path / "old.pt").items():
        np.testing.assert_array_equal(v.detach().numpy(), obj[k].detach().numpy())


# --- torch.save -> torchlike.load ---------------------------------------------------------------

@pytest.mark.parametrize("zip_format", [True, False], ids=["zip", "legacy"])
def test_torch_checkpoint_loads_in_torchlike(tmp_path, zip_format):
    ref = _torch_model()
    ref(torch.randn(5, 3))          # moves running stats
    x = torch.arange(24.0).reshape(4, 6)
    z = torch.tensor(_values("complex64", (3,)))
    obj = {"model": ref.state_dict(), "optimizer": _optimizer_state(torch),
           "views": {"base": x, "t": x.t(), "col": x[:, 2], "block": x[1:3, 2:5],
                     "step": x[::2, ::3], "expand": torch.arange(3.0).expand(2, 3),
                     "conj": z.conj(), "neg": x[0]._neg_view(), "offset": x.view(-1)[5:9]},
           "dtypes": {n: torch.from_numpy(np.ascontiguousarray(_values(n))) if n != "bfloat16"
                      else torch.tensor(_values("float32")).bfloat16()
                      for n in DTYPES if not n.startswith("uint") or n == "uint8"},
           "p": torch.nn.Parameter(torch.ones(2)), "grad": torch.ones(2, requires_grad=True),
           "misc": [torch.Size([2, 3]), torch.float16, torch.device("cpu"), {1, 2}, 1 + 2j,
                    b"ab", (None, "s", 3)]}
    if zip_format:   # torch's own legacy loader cannot read uint16+ (untyped storages)
        obj["dtypes"].update({n: torch.from_numpy(_values(n)) for n in ("uint16", "uint32",
                                                                        "uint64")})
    torch.save(obj, tmp_path / "ref.pt", _use_new_zipfile_serialization=zip_format)
    loaded = tl.serialization.load(tmp_path / "ref.pt")

    sd = loaded["model"]
    assert type(sd) is collections.OrderedDict and sd._metadata == ref.state_dict()._metadata
    for k, v in ref.state_dict().items():
        _assert_same(v, sd[k])
    _assert_tree(obj["optimizer"], loaded["optimizer"])
    for k, v in obj["dtypes"].items():
        _assert_same(v, loaded["dtypes"][k])
    for k, v in obj["views"].items():     # values and shapes; a dense layout keeps its strides
        _assert_same(v, loaded["views"][k], strides=False)
    assert loaded["views"]["t"].stride() == x.t().stride()
    assert type(loaded["p"]) is tl.nn.Parameter and loaded["p"].requires_grad
    _assert_same(obj["grad"], loaded["grad"])
    size, dt, dev, st, c, b, tup = loaded["misc"]
    assert type(size) is tl.Size and size == (2, 3) and dt is tl.float16
    assert dev == tl.device("cpu") and (st, c, b, tup) == ({1, 2}, 1 + 2j, b"ab", (None, "s", 3))

    model = _tl_model()
    assert not model.load_state_dict(sd).missing_keys
    model.eval()
    ref.eval()
    xin = RNG.standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_allclose(model(tl.tensor(xin)).detach().numpy(),
                               ref(torch.tensor(xin)).detach().numpy(), rtol=1e-6, atol=1e-6)


def test_mmap_and_file_objects(tmp_path):
    values = RNG.standard_normal((3, 5)).astype(np.float32)
    torch.save({"a": torch.tensor(values)}, tmp_path / "ref.pt")
    for f in (tmp_path / "ref.pt", str(tmp_path / "ref.pt")):
        np.testing.assert_array_equal(S.load(f, mmap=True)["a"].numpy(), values)
    with open(tmp_path / "ref.pt", "rb") as fh:
        np.testing.assert_array_equal(S.load(fh)["a"].numpy(), values)


def test_whole_torch_module_loads_without_weights_only(tmp_path):
    ref = _torch_model()
    torch.save(ref, tmp_path / "whole.pt")
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global"):
        S.load(tmp_path / "whole.pt")
    model = S.load(tmp_path / "whole.pt", weights_only=False)
    assert isinstance(model, tl.nn.Sequential) and isinstance(model[0], tl.nn.Linear)
    model.eval()
    ref.eval()
    xin = RNG.standard_normal((2, 3)).astype(np.float32)
    np.testing.assert_allclose(model(tl.tensor(xin)).detach().numpy(),
                               ref(torch.tensor(xin)).detach().numpy(), rtol=1e-6, atol=1e-6)


# --- torchlike.save -> torchlike.load -----------------------------------------------------------

@pytest.mark.parametrize("target", ["path", "bytesio"])
def test_round_trip(tmp_path, target):
    model = _tl_model()
    x = tl.arange(12.0).reshape(3, 4)
    obj = {"model": model.state_dict(), "optimizer": _optimizer_state(tl), "t": x.t(),
           "col": x[:, 1], "p": tl.nn.Parameter(tl.ones(2)), "size": tl.Size([1, 2]),
           "dtype": tl.int8, "dtypes": [tl.tensor(_values(n), dtype=getattr(tl, n))
                                        for n in DTYPES]}
    f = tmp_path / "rt.pt" if target == "path" else io.BytesIO()
    S.save(obj, f)
    if target == "bytesio":
        f.seek(0)
    loaded = S.load(f)
    for k in ("t", "col", "p"):
        assert loaded[k].stride() == obj[k].stride() or k == "col"
        np.testing.assert_array_equal(loaded[k].detach().numpy(), obj[k].detach().numpy())
    assert type(loaded["p"]) is tl.nn.Parameter and loaded["p"].requires_grad
    assert type(loaded["size"]) is tl.Size and loaded["dtype"] is tl.int8
    for a, b in zip(loaded["dtypes"], obj["dtypes"]):
        assert a.dtype is b.dtype and _tl_bytes(a) == _tl_bytes(b)
    assert loaded["optimizer"]["param_groups"] == obj["optimizer"]["param_groups"]
    fresh = _tl_model()
    fresh.load_state_dict(loaded["model"])
    for (k, a), b in zip(fresh.state_dict().items(), model.state_dict().values()):
        assert _tl_bytes(a) == _tl_bytes(b), k


def test_whole_torchlike_objects_round_trip(tmp_path):
    model = _tl_model()
    S.save({"model": model, "config": Config(0.5)}, tmp_path / "whole.pt")
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        S.load(tmp_path / "whole.pt")
    loaded = S.load(tmp_path / "whole.pt", weights_only=False)
    assert loaded["config"].lr == 0.5
    model.eval()
    loaded["model"].eval()
    xin = tl.tensor(RNG.standard_normal((2, 3)).astype(np.float32))
    np.testing.assert_array_equal(loaded["model"](xin).detach().numpy(),
                                  model(xin).detach().numpy())


# --- map_location -------------------------------------------------------------------------------

def test_map_location(tmp_path, monkeypatch):
    from torchlike.serialization import _pickler as P
    values = RNG.standard_normal(3).astype(np.float32)
    with monkeypatch.context() as m:       # a checkpoint whose storages were on cuda:0
        m.setattr(P, "_location", lambda t: "cuda:0")
        S.save({"a": tl.tensor(values)}, tmp_path / "gpu.pt")
    seen = []

    def keep(storage, location):
        seen.append(location)
        return storage

    for ml in ("cpu", tl.device("cpu"), {"cuda:0": "cpu"}, keep, lambda s, loc: s.cpu()):
        got = S.load(tmp_path / "gpu.pt", map_location=ml)["a"]
        assert got.device == tl.device("cpu")
        np.testing.assert_array_equal(got.numpy(), values)
        np.testing.assert_array_equal(
            torch.load(tmp_path / "gpu.pt", map_location=ml if not isinstance(ml, tl.device)
                       else "cpu")["a"].numpy(), values)
    assert seen == ["cuda:0", "cuda:0"]   # once per storage, from each load
    import jax
    if not torch.cuda.is_available() and all(d.platform != "gpu" for d in jax.devices()):
        with pytest.raises(RuntimeError, match="CUDA"):
            torch.load(tmp_path / "gpu.pt")
        with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA"):
            S.load(tmp_path / "gpu.pt")


# --- weights_only -------------------------------------------------------------------------------

@pytest.mark.parametrize("func,shown,why", [
    (os.system, None, "is blocked"),
    (eval, "eval", "Unsupported global"),
    (exec, "exec", "Unsupported global"),
], ids=["os.system", "eval", "exec"])
def test_malicious_pickle_is_refused(tmp_path, func, shown, why):
    marker = tmp_path / "marker"
    code = f"touch {marker}" if func is os.system else f"open({str(marker)!r}, 'w').close()"
    S.save({"w": tl.ones(1), "payload": RunsCode(func, code)}, tmp_path / "evil.pt")
    for load in (S.load, torch.load):
        with pytest.raises(pickle.UnpicklingError) as info:
            load(tmp_path / "evil.pt")
        assert "Weights only load failed" in str(info.value) and why in str(info.value)
        assert not marker.exists()
    if shown is not None:
        assert (f"Please use `torchlike.serialization.add_safe_globals([{shown}])`"
                in str(pytest.raises(pickle.UnpicklingError, S.load, tmp_path / "evil.pt").value))
    if func is not os.system:   # the payload is real: a trusting load runs it
        S.load(tmp_path / "evil.pt", weights_only=False)
        assert marker.exists()


def test_safe_globals(tmp_path):
    path = tmp_path / "cfg.pt"
    S.save({"w": tl.ones(2), "cfg": Config(0.1)}, path)
    name = f"{Config.__module__}.Config"
    assert S.get_unsafe_globals_in_checkpoint(path) == [name]
    assert torch.serialization.get_unsafe_globals_in_checkpoint(path) == [name]
    with pytest.raises(pickle.UnpicklingError, match=f"GLOBAL {name} was not an allowed"):
        S.load(path)
    assert S.load(path, weights_only=False)["cfg"].lr == 0.1
    with S.safe_globals([Config]):
        assert Config in S.get_safe_globals()
        assert S.load(path)["cfg"].lr == 0.1
    assert Config not in S.get_safe_globals()
    with pytest.raises(pickle.UnpicklingError):
        S.load(path)
    S.add_safe_globals([(Config, name)])
    try:
        assert S.load(path)["cfg"].lr == 0.1
        assert S.get_unsafe_globals_in_checkpoint(path) == []
    finally:
        S.clear_safe_globals()
    assert S.get_safe_globals() == []
    S.add_safe_globals([os.system])      # sys/os/posix/nt stay blocked even when registered
    try:
        S.save(RunsCode(os.system, "true"), tmp_path / "sys.pt")
        with pytest.raises(pickle.UnpicklingError, match="is blocked"):
            S.load(tmp_path / "sys.pt")
    finally:
        S.clear_safe_globals()


ENV_CASES = [
    ({}, {}), ({}, {"weights_only": False}),
    ({"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"}, {}),
    ({"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "true"}, {"weights_only": True}),
    ({"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "on"}, {}),
    ({"TORCH_FORCE_WEIGHTS_ONLY_LOAD": "YES"}, {"weights_only": False}),
    ({"TORCH_FORCE_WEIGHTS_ONLY_LOAD": "1", "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"}, {}),
    ({}, {"pickle_module": pickle}),
]


@pytest.mark.parametrize("env,kwargs", ENV_CASES)
def test_weights_only_environment_overrides(tmp_path, monkeypatch, env, kwargs):
    for k in ("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "TORCH_FORCE_WEIGHTS_ONLY_LOAD"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    S.save(Config(1.0), tmp_path / "cfg.pt")

    def outcome(load):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result = type(load(tmp_path / "cfg.pt", **kwargs)).__name__
            except (pickle.UnpicklingError, RuntimeError) as e:
                result = type(e).__name__
        return result, [w.category for w in caught]

    assert outcome(S.load) == outcome(torch.load)


# --- errors and atomic writes -------------------------------------------------------------------

def test_errors_match_torch(tmp_path):
    (tmp_path / "plain.pkl").write_bytes(pickle.dumps({"a": 1}, protocol=2))
    (tmp_path / "empty.bin").write_bytes(b"")
    torch.save({"a": torch.ones(1)}, tmp_path / "ok.pt")
    torch.save({"a": torch.ones(1)}, tmp_path / "old.pt", _use_new_zipfile_serialization=False)
    load_cases = [
        (tmp_path / "missing.pt", {}), (tmp_path / "plain.pkl", {}),
        (tmp_path / "empty.bin", {"weights_only": False}),
        (tmp_path / "ok.pt", {"pickle_module": pickle, "weights_only": True}),
        (io.BytesIO((tmp_path / "ok.pt").read_bytes()), {"mmap": True}),
        (tmp_path / "old.pt", {"mmap": True}),
    ]
    for f, kwargs in load_cases:
        errors = []
        for load in (torch.load, S.load):
            if isinstance(f, io.BytesIO):
                f.seek(0)
            with pytest.raises(Exception) as info:
                load(f, **kwargs)
            errors.append(info.type)
        assert errors[0] is errors[1], (f, kwargs, errors)
    (tmp_path / "adir").mkdir()
    for f in (tmp_path / "nodir" / "x.pt", b"x.pt", 3, tmp_path / "adir", tmp_path / ".pt"):
        errors = []
        for save in (torch.save, S.save):
            with pytest.raises(Exception) as info:
                save({"a": 1}, f)
            errors.append(info.type)
        assert errors[0] is errors[1], (f, errors)


def test_archive_name_follows_torch(tmp_path):
    for name in ("a.b.pt", "noext", "x.tar.gz", "ünï.pt"):
        S.save(tl.ones(1), tmp_path / name)
        torch.save(torch.ones(1), tmp_path / ("ref_" + name))
        ours = zipfile.ZipFile(tmp_path / name).namelist()[0]
        ref = zipfile.ZipFile(tmp_path / ("ref_" + name)).namelist()[0]
        assert ours == ref.replace("ref_", "", 1)


def test_failed_save_leaves_old_file_and_no_temp(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.pt"
    S.save({"w": tl.ones(3)}, path)
    before = path.read_bytes()
    listing = sorted(os.listdir(tmp_path))
    with pytest.raises((pickle.PicklingError, AttributeError)):
        S.save({"w": tl.zeros(3), "f": lambda: 0}, path)
    assert path.read_bytes() == before and sorted(os.listdir(tmp_path)) == listing

    from torchlike.serialization import _zip as Z
    real_write = Z.ZipWriter.write

    def failing_write(self, name, data):   # fail half-way through writing the archive
        if "/data/" in name:
            raise OSError("disk full")
        return real_write(self, name, data)

    monkeypatch.setattr(Z.ZipWriter, "write", failing_write)
    with pytest.raises(OSError, match="disk full"):
        S.save({"w": tl.zeros(3)}, path)
    assert path.read_bytes() == before and sorted(os.listdir(tmp_path)) == listing
    monkeypatch.undo()
    np.testing.assert_array_equal(torch.load(path)["w"].numpy(), np.ones(3, np.float32))
