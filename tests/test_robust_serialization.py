"""torchlike.load against hostile and damaged checkpoints, and what a load shares and allocates,
with real torch as the oracle: a malicious pickle is refused as torch refuses it (type and
reason) and changes nothing in torchlike; a fuzz over opcode streams built from the
weights_only allow-list calls nothing outside it; corrupt archives raise torch's errors; loaded
tensors share storage exactly where torch's do; a huge stride-0 tensor loads as a view of its
small storage; a save killed by SIGKILL leaves a temporary that the next save removes."""
import collections
import io
import os
import pickle
import re
import select
import signal
import socket
import struct
import subprocess
import sys
import textwrap
import time
import zipfile
from pickle import (APPEND, APPENDS, BINFLOAT, BINGET, BININT, BINPERSID, BINPUT, BINUNICODE,
                    BUILD, DUP, EMPTY_DICT, EMPTY_LIST, EMPTY_SET, EMPTY_TUPLE, EXT1, EXT2, EXT4,
                    FRAME, GLOBAL, INST, LONG1, MARK, MEMOIZE, NEWFALSE, NEWOBJ, NEWTRUE, NONE, OBJ,
                    PERSID, POP, PROTO, REDUCE, SETITEM, SETITEMS, STACK_GLOBAL, STOP, TUPLE,
                    TUPLE1, TUPLE2, TUPLE3)

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings, strategies as st

import torchlike as tl
from torchlike import _dtype, serialization as S
from torchlike.serialization._unpickler import TORCH_GLOBALS, StorageType, _safe_globals

# --- pickles by hand ------------------------------------------------------------------------------


def G(path):
    """GLOBAL module.name"""
    module, name = path.rsplit(".", 1)
    return GLOBAL + module.encode() + b"\n" + name.encode() + b"\n"


def U(s):
    """BINUNICODE s"""
    b = s.encode()
    return BINUNICODE + struct.pack("<I", len(b)) + b


def I(n):   # noqa: E743
    """BININT n, or LONG1 n past 32 bits"""
    if -2 ** 31 <= n < 2 ** 31:
        return BININT + struct.pack("<i", n)
    b = pickle.encode_long(n)
    return LONG1 + bytes([len(b)]) + b


FALSE = NEWFALSE
STORAGE = MARK + U("storage") + G("torch.FloatStorage") + U("0") + U("cpu") + I(6) + TUPLE + \
    BINPERSID
OD = G("collections.OrderedDict") + EMPTY_TUPLE + REDUCE


def tensor_op(offset=0, size=(6,), stride=(1,)):
    """_rebuild_tensor_v2 over storage '0' (6 float32 values)."""
    def ints(xs):
        return MARK + b"".join(I(x) for x in xs) + TUPLE
    return (G("torch._utils._rebuild_tensor_v2") + MARK + STORAGE + I(offset) + ints(size)
            + ints(stride) + FALSE + OD + TUPLE + REDUCE)


def pkl(*parts):
    return PROTO + b"\x02" + b"".join(parts) + STOP


def ckpt(data_pkl, records=None):
    """A zip checkpoint with this data.pkl (records default to storage '0': 0..5 as float32)."""
    records = {"0": np.arange(6, dtype=np.float32).tobytes()} if records is None else records
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("a/data.pkl", data_pkl)
        z.writestr("a/byteorder", sys.byteorder)
        for key, data in records.items():
            z.writestr(f"a/data/{key}", data)
        z.writestr("a/version", "3\n")
    return out.getvalue()


def outcome(load, data, **kwargs):
    """(exception type or None, the refusal's reason, the result)."""
    try:
        return None, None, load(io.BytesIO(data), **kwargs)
    except Exception as e:   # noqa: BLE001 -- the type is what is compared
        return type(e), _reason(str(e)), None


def _reason(message):
    """The WeightsUnpickler error inside a weights_only refusal (the message itself for other
    errors), with torch's and torchlike's spellings of names and object reprs made equal."""
    text = message.split("\n\nCheck the documentation")[0]
    if "WeightsUnpickler error: " in text:
        text = text.split("WeightsUnpickler error: ", 1)[1]
    elif text.startswith("Weights only load failed."):
        text = text.split("\n\n", 1)[-1]
    text = text.strip().replace("torchlike", "torch")
    text = re.sub(r"<class '[^']*'>", "<class>", text)
    return re.sub(r"<(function|built-in function|torch global) [^>]*>", "<function>", text)


# --- what a load must not change -----------------------------------------------------------------

def _canary(*args):
    _CANARY_CALLS.append(args)


_CANARY_CALLS = []
CANARY = f"{_canary.__module__}._canary"


def torchlike_state():
    """Every module attribute and class attribute of torchlike (by identity), the dtype and
    storage-type singletons' fields, the allow-list and the registered safe globals."""
    modules, classes = {}, {}
    for name, mod in list(sys.modules.items()):
        if name == "torchlike" or name.startswith("torchlike."):
            d = vars(mod)
            modules[name] = {k: id(v) for k, v in d.items()}
            for v in d.values():
                if isinstance(v, type) and id(v) not in classes and \
                        v.__module__.startswith("torchlike"):
                    classes[id(v)] = {k: id(x) for k, x in vars(v).items()}
    for cls in (collections.OrderedDict, collections.Counter):
        classes[id(cls)] = {k: id(x) for k, x in vars(cls).items()}
    for g in TORCH_GLOBALS.values():   # the allowed functions: their attributes and defaults
        if callable(g) and hasattr(g, "__code__"):
            classes[id(g)] = {k: id(x) for k, x in vars(g).items()}
            classes[id(g)].update(__code__=id(g.__code__), __defaults__=id(g.__defaults__))
    dtypes = [tuple(getattr(dt, f) for f in type(dt).__slots__) for dt in _dtype.ALL]
    storages = {p: (g.name, g.dtype) for p, g in TORCH_GLOBALS.items()
                if isinstance(g, StorageType)}
    return (modules, classes, dtypes, storages, {p: id(g) for p, g in TORCH_GLOBALS.items()},
            frozenset(_safe_globals), tl.get_default_dtype())


def assert_unchanged(before):
    after = torchlike_state()
    modules, classes = before[0], before[1]
    for name, attrs in modules.items():     # new keys: lazily imported submodules
        assert {k: after[0][name].get(k) for k in attrs} == attrs, name
    assert after[1] == classes
    assert after[2:] == before[2:]
    assert not _CANARY_CALLS


@pytest.fixture(scope="module")
def warm():
    """Import and compile what loads touch, so state snapshots compare like with like."""
    x = torch.arange(6.0)
    buf = io.BytesIO()
    torch.save({"a": x, "v": x[1:3], "p": torch.nn.Parameter(x)}, buf)
    tl.load(io.BytesIO(buf.getvalue()))
    for data in MALICIOUS.values():
        outcome(tl.load, ckpt(data))
    return torchlike_state()


# --- malicious checkpoints ------------------------------------------------------------------------

MALICIOUS = {
    # the reproducer: later checkpoints would load as float16
    "build FloatStorage": pkl(G("torch.FloatStorage"), NONE, EMPTY_DICT, U("dtype"),
                              G("torch.float16"), SETITEM, TUPLE2, BUILD),
    "build dtype (slots)": pkl(G("torch.float32"), NONE, EMPTY_DICT, U("itemsize"), I(2),
                               SETITEM, TUPLE2, BUILD),
    "build Tensor class": pkl(G("torch.Tensor"), NONE, EMPTY_DICT, U("__add__"),
                              G("torch.Size"), SETITEM, TUPLE2, BUILD),
    "build Parameter class": pkl(G("torch.nn.parameter.Parameter"), EMPTY_DICT,
                                 U("requires_grad"), FALSE, SETITEM, BUILD),
    "build rebuild function": pkl(G("torch._utils._rebuild_tensor_v2"), EMPTY_DICT,
                                  U("__defaults__"), EMPTY_TUPLE, SETITEM, BUILD),
    "build OrderedDict class": pkl(G("collections.OrderedDict"), NONE, EMPTY_DICT, U("keys"),
                                   G("torch.Size"), SETITEM, TUPLE2, BUILD),
    "build Counter class": pkl(G("collections.Counter"), NONE, EMPTY_DICT, U("most_common"),
                               G("torch.Size"), SETITEM, TUPLE2, BUILD),
    "setitem into dtype": pkl(G("torch.float32"), U("x"), I(1), SETITEM),
    "setitem into Tensor class": pkl(G("torch.Tensor"), U("x"), I(1), SETITEM),
    "append to Size class": pkl(G("torch.Size"), I(1), APPEND),
    "append to tensor": pkl(tensor_op(), I(1), APPEND),
    "reduce eval": pkl(G("builtins.eval"), U("1"), TUPLE1, REDUCE),
    "reduce os.system": pkl(G("os.system"), U("true"), TUPLE1, REDUCE),
    "reduce posix.system": pkl(G("posix.system"), U("true"), TUPLE1, REDUCE),
    "reduce getattr": pkl(G("builtins.getattr"), G("torch.Tensor"), U("add"), TUPLE2, REDUCE),
    "reduce __import__": pkl(G("builtins.__import__"), U("os"), TUPLE1, REDUCE),
    "reduce add_safe_globals": pkl(G("torch.serialization.add_safe_globals"), EMPTY_LIST,
                                   TUPLE1, REDUCE),
    "reduce set_default_dtype": pkl(G("torch.set_default_dtype"), G("torch.float16"), TUPLE1,
                                    REDUCE),
    "reduce a loaded tensor": pkl(tensor_op(), EMPTY_TUPLE, REDUCE),
    "reduce a dict": pkl(EMPTY_DICT, EMPTY_TUPLE, REDUCE),
    "reduce the canary": pkl(G(CANARY), EMPTY_TUPLE, REDUCE),
    "newobj of a dict": pkl(EMPTY_DICT, EMPTY_TUPLE, NEWOBJ),
    "newobj of a storage type": pkl(G("torch.FloatStorage"), EMPTY_TUPLE, NEWOBJ),
    "ext1": pkl(EXT1 + b"\x01"),
    "ext2": pkl(EXT2 + b"\x01\x00"),
    "ext4": pkl(EXT4 + b"\x01\x00\x00\x00"),
    "inst": MARK + INST + b"builtins\neval\n" + U("1") + STOP,
    "obj": pkl(MARK, G("builtins.eval"), U("1"), OBJ),
    "stack_global": PROTO + b"\x04" + U("builtins") + U("eval") + STACK_GLOBAL + U("1")
                    + TUPLE1 + REDUCE + STOP,
    "persistent id of a module": pkl(MARK, U("module"), G("torch.Tensor"), TUPLE, BINPERSID),
    "persistent id of a list": pkl(EMPTY_LIST, BINPERSID),
    "persistent id, text opcode": pkl(PERSID + b"storage\n"),
    "string opcode (protocol 0)": b"S'x'\np0\n.",
    "rebuild from type with a storage type": pkl(
        G("torch._tensor._rebuild_from_type_v2"), MARK, G("torch.FloatStorage"),
        G("torch.Tensor"), EMPTY_TUPLE, EMPTY_DICT, TUPLE, REDUCE),
}


@pytest.mark.parametrize("name", list(MALICIOUS))
def test_malicious_checkpoint_is_refused_as_torch_refuses_it(warm, name):
    data = ckpt(MALICIOUS[name])
    want, why, _ = outcome(torch.load, data)
    before = torchlike_state()
    got, reason, _ = outcome(tl.load, data)
    assert want is not None, "torch loads it"
    assert got is want, (got, reason)
    if want is pickle.UnpicklingError:
        assert reason == why
    assert_unchanged(before)
    assert tl.tensor([1.0001]).dtype is tl.float32
    good = io.BytesIO()
    torch.save({"w": torch.arange(3.0)}, good)
    assert tl.load(io.BytesIO(good.getvalue()))["w"].dtype is tl.float32


def test_malicious_legacy_checkpoint_is_refused(warm):
    """The pre-zip format is scanned for its storages before it is loaded: a BUILD on a
    storage type must not reach the shared one there either."""
    obj = G("torch.FloatStorage") + NONE + EMPTY_DICT + U("dtype") + G("torch.float16") + \
        SETITEM + TUPLE2 + BUILD
    header = b"".join(pickle.dumps(h, protocol=2) for h in (
        S.MAGIC_NUMBER, S.PROTOCOL_VERSION,
        {"protocol_version": 1001, "little_endian": True, "type_sizes": {}}))
    data = header + pkl(obj) + pickle.dumps([], protocol=2)
    want, why, _ = outcome(torch.load, data)
    before = torchlike_state()
    got, reason, _ = outcome(tl.load, data)
    assert (got, reason) == (want, why)
    assert_unchanged(before)


# --- the fuzz ------------------------------------------------------------------------------------

ALLOWED = sorted(p for p in TORCH_GLOBALS if "cuda" not in p)
FORBIDDEN = [CANARY, "builtins.eval", "os.system", "builtins.setattr", "builtins.getattr",
             "torch.serialization.add_safe_globals", "torch.set_default_dtype",
             "copyreg._reconstructor", "torchlike._dtype.dtype"]
NAMES = ["dtype", "itemsize", "name", "__add__", "__defaults__", "_name", "requires_grad",
         "data", "type", "__class__"]

_value = st.one_of(   # one well-formed object pushed
    st.integers(-1, 6).map(I), st.sampled_from(NAMES).map(U),
    st.floats(allow_nan=False, width=32).map(lambda f: BINFLOAT + struct.pack(">d", f)),
    st.sampled_from([NONE, FALSE, EMPTY_DICT, EMPTY_LIST, EMPTY_TUPLE, STORAGE, OD,
                     tensor_op(), tensor_op(1, (2, 2), (0, 1))]),
    st.sampled_from(ALLOWED).map(G))
_opcode = st.one_of(   # anything else: stack work, the risky opcodes, unsupported ones
    st.sampled_from([NEWTRUE, EMPTY_SET, MARK, TUPLE, TUPLE1, TUPLE2, TUPLE3, REDUCE, BUILD,
                     NEWOBJ, SETITEM, SETITEMS, APPEND, APPENDS, BINPERSID, EXT1 + b"\x01",
                     STACK_GLOBAL, MEMOIZE, INST, OBJ, FRAME + bytes(8), DUP, POP]),
    st.integers(0, 3).map(lambda i: BINPUT + bytes([i])),
    st.integers(0, 3).map(lambda i: BINGET + bytes([i])),
    st.sampled_from(FORBIDDEN).map(G))


@st.composite
def _attack(draw):
    """A global of the allow-list (or one outside it), then the opcode that would change or
    call it, with well-formed arguments."""
    target = G(draw(st.sampled_from(ALLOWED + FORBIDDEN)))
    items = draw(st.lists(st.tuples(st.sampled_from(NAMES), _value), min_size=1, max_size=2))
    state = EMPTY_DICT + b"".join(U(k) + v + SETITEM for k, v in items)
    args = MARK + b"".join(v for _, v in items) + TUPLE
    return target + draw(st.sampled_from([
        NONE + state + TUPLE2 + BUILD, NONE + state + TUPLE2 + BUILD,   # (None, slot state)
        state + BUILD, b"".join(U(k) + v + SETITEM for k, v in items),
        items[0][1] + APPEND, MARK + items[0][1] + APPENDS, args + REDUCE, args + NEWOBJ]))


_stream = st.lists(st.one_of(_attack(), _attack(), _value, _opcode), min_size=1,
                   max_size=16).map(lambda parts: pkl(*parts))


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(_stream)
def test_fuzz_calls_nothing_outside_the_allow_list(warm, data):
    data = ckpt(data)
    before = torchlike_state()
    got, reason, _ = outcome(tl.load, data)
    assert_unchanged(before)
    want, why, _ = outcome(torch.load, data)     # fails where torch fails, as it fails
    assert got is want, (got, reason, want, why)
    if want is pickle.UnpicklingError:
        assert reason == why


def test_get_unsafe_globals_in_checkpoint_follows_torch(tmp_path):
    for data in (pkl(G(CANARY), NONE, TUPLE1, REDUCE), MALICIOUS["build FloatStorage"],
                 MALICIOUS["stack_global"]):
        (tmp_path / "c.pt").write_bytes(ckpt(data))
        results = []
        for f in (torch.serialization.get_unsafe_globals_in_checkpoint,
                  S.get_unsafe_globals_in_checkpoint):
            try:
                results.append(sorted(f(tmp_path / "c.pt")))
            except Exception as e:   # noqa: BLE001
                results.append(type(e))
        assert results[0] == results[1]


# --- corrupt checkpoints -------------------------------------------------------------------------

def _corrupt_cases():
    buf = io.BytesIO()
    torch.save({"a": torch.arange(6.0)}, buf)
    good = buf.getvalue()
    z = zipfile.ZipFile(io.BytesIO(good))
    names = z.namelist()

    def rezip(drop=(), extra=None, rename=None, compression=zipfile.ZIP_STORED):
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", compression) as w:
            for n in names:
                if n.split("/", 1)[1] not in drop:
                    w.writestr(rename(n) if rename else n, z.read(n))
            for k, v in (extra or {}).items():
                w.writestr("archive/" + k, v)
        return out.getvalue()

    pkl_bytes = z.read("archive/data.pkl")
    eocd = good.rfind(b"PK\x05\x06")
    return {
        "empty file": b"",
        "half": good[:len(good) // 2],
        "last byte cut": good[:-1],
        "zip magic then zeros": b"PK\x03\x04" + bytes(100),
        "directory entry count": good[:eocd + 10] + b"\x55" + good[eocd + 11:],
        "no data.pkl": rezip(drop=("data.pkl",)),
        "no storage record": rezip(drop=("data/0",)),
        "no version": rezip(drop=("version",)),
        "version 99": rezip(drop=("version",), extra={"version": b"99\n"}),
        "version 0": rezip(drop=("version",), extra={"version": b"0\n"}),
        "version not a number": rezip(drop=("version",), extra={"version": b"abc"}),
        "no folder": rezip(rename=lambda n: n.split("/", 1)[1]),
        "byteorder middle": rezip(drop=("byteorder",), extra={"byteorder": b"middle"}),
        "short storage record": rezip(drop=("data/0",), extra={"data/0": bytes(8)}),
        "deflated": rezip(compression=zipfile.ZIP_DEFLATED),
        "pickle cut": rezip(drop=("data.pkl",), extra={"data.pkl": pkl_bytes[:-3]}),
        "pickle empty": rezip(drop=("data.pkl",), extra={"data.pkl": b""}),
        "pickle without PROTO": rezip(drop=("data.pkl",), extra={"data.pkl": pkl_bytes[2:]}),
        "pickle of another protocol": rezip(drop=("data.pkl",), extra={
            "data.pkl": pickle.dumps({"a": 1}, protocol=4)}),
    }


CORRUPT = _corrupt_cases()


@pytest.mark.parametrize("name", list(CORRUPT))
def test_corrupt_checkpoint_fails_as_torch_fails(name):
    data = CORRUPT[name]
    want, why, expected = outcome(torch.load, data)
    got, reason, loaded = outcome(tl.load, data)
    assert got is want, (got, reason)
    if want is None:
        np.testing.assert_array_equal(loaded["a"].numpy(), expected["a"].numpy())
    elif want is RuntimeError:   # torch's words, without its C++ source locations
        assert re.sub(r"\[enforce fail at \S+\] \. ", "", why).startswith(reason)


@pytest.mark.parametrize("record", ["data/0", "data.pkl"])
def test_damaged_record_is_detected(record):
    """Still different, deliberately: torch does not check a record's CRC and loads a flipped
    byte as a wrong value; torchlike raises (mmap loads, which read in place, do not check)."""
    buf = io.BytesIO()
    torch.save({"a": torch.arange(6.0)}, buf)
    data = bytearray(buf.getvalue())
    info = zipfile.ZipFile(io.BytesIO(bytes(data))).getinfo("archive/" + record)
    name_len, extra_len = struct.unpack("<HH", data[info.header_offset + 26:
                                                    info.header_offset + 30])
    data[info.header_offset + 30 + name_len + extra_len + 5] ^= 0xFF
    with pytest.raises(RuntimeError, match="Bad CRC-32.*checkpoint file is corrupted"):
        tl.load(io.BytesIO(bytes(data)))


BAD_LAYOUTS = [(0, (4, 3), (3, 1)), (5, (2,), (1,)), (5, (2,), (-1,)), (-1, (2,), (1,)),
               (0, (-2,), (1,)), (0, (2, 3), (1,)), (2 ** 62, (2,), (1,)),
               (0, (2 ** 62, 4), (1, 2 ** 62)), (100, (0, 3), (3, 1))]


@pytest.mark.parametrize("offset,size,stride", BAD_LAYOUTS)
def test_sizes_and_strides_outside_the_storage(offset, size, stride):
    """torch's set_ checks, in its order and words; an empty tensor may sit anywhere."""
    data = ckpt(pkl(tensor_op(offset, size, stride)))
    want, why, expected = outcome(torch.load, data)
    got, reason, loaded = outcome(tl.load, data)
    assert (got, reason) == (want, why)
    if want is None:
        assert loaded.shape == expected.shape and loaded.stride() == expected.stride()


def test_rebuild_argument_types():
    v3 = G("torch._utils._rebuild_tensor_v3") + MARK + STORAGE + I(0) + MARK + I(2) + TUPLE + \
        MARK + I(1) + TUPLE + FALSE + OD + U("float32") + TUPLE + REDUCE
    floats = G("torch._utils._rebuild_tensor_v2") + MARK + STORAGE + I(0) + \
        BINFLOAT + struct.pack(">d", 2.0) + TUPLE1 + I(1) + TUPLE1 + FALSE + OD + TUPLE + REDUCE
    for data in (pkl(v3), pkl(floats)):
        want, _, _ = outcome(torch.load, ckpt(data))
        got, _, _ = outcome(tl.load, ckpt(data))
        assert got is want is TypeError


# --- streams -------------------------------------------------------------------------------------

class _NoSeek:
    def __init__(self, data):
        self._f = io.BytesIO(data)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def read(self, n=-1):
        return self._f.read(n)

    def readline(self):
        return self._f.readline()


class _WriteOnly:
    def __init__(self):
        self.f = io.BytesIO()

    def write(self, b):
        return self.f.write(b)


def test_streams_that_cannot_seek():
    buf = io.BytesIO()
    torch.save({"a": torch.arange(3.0)}, buf)
    data = buf.getvalue()

    def sources():
        yield _NoSeek(data)
        a, b = socket.socketpair()
        b.sendall(data)
        b.close()
        yield a.makefile("rb")
        r, w = os.pipe()
        os.write(w, data)
        os.close(w)
        yield os.fdopen(r, "rb")

    messages = []
    for load in (torch.load, tl.load):
        for f in sources():
            with f, pytest.raises(OSError if not isinstance(f, _NoSeek) else AttributeError) \
                    as info:
                load(f)
            messages.append(str(info.value).replace("torchlike", "torch"))
    assert messages[:3] == messages[3:]
    for save, x in ((torch.save, torch.ones(1)), (tl.save, tl.ones(1))):
        with pytest.raises(AttributeError, match="flush"):
            save(x, _WriteOnly())


# --- what loads share and allocate ---------------------------------------------------------------

def _shared_objects(T):
    """Tensors viewing one storage in several ways, tied entries, a Parameter and an entry
    aliasing it, and a tensor of its own, in module T (torch or torchlike)."""
    x = T.arange(24.0).reshape(4, 6)
    p = T.nn.Parameter(T.arange(5.0))
    return {"base": x, "t": x.t(), "col": x[:, 1], "block": x[1:3, 2:5], "flat": x.view(-1)[5:9],
            "expand": x[0].expand(3, 6), "tied": x.detach(), "p": p, "p_entry": p.detach(),
            "own": T.ones(3)}


def _write_through_each(module, loaded):
    """The values of every entry after writing through each one in turn (the error's type
    where the write raises)."""
    results = []
    for k in loaded:
        t = loaded[k]
        try:
            with module.no_grad():
                t.view(-1)[0:1].add_(100) if t.is_contiguous() else t.add_(100)
        except RuntimeError as e:
            results.append((k, type(e).__name__))
            continue
        results.append((k, {j: v.detach().resolve_conj().resolve_neg().numpy().tolist()
                            for j, v in loaded.items()}))
    return results


@pytest.mark.parametrize("writer", ["torch", "torch legacy format", "torchlike"])
def test_loaded_tensors_share_storage_where_torch_does(writer):
    objs = _shared_objects(tl if writer == "torchlike" else torch)
    buf = io.BytesIO()
    if writer == "torchlike":
        tl.save(objs, buf)
    else:
        torch.save(objs, buf, _use_new_zipfile_serialization=writer == "torch")
    data = buf.getvalue()
    want = torch.load(io.BytesIO(data))
    got = tl.load(io.BytesIO(data))
    for k in want:
        assert tuple(got[k].shape) == tuple(want[k].shape), k
        assert got[k].stride() == want[k].stride(), k
        assert got[k]._version == want[k]._version, k
        assert got[k]._base is None and type(got[k]) is (
            tl.nn.Parameter if isinstance(want[k], torch.nn.Parameter) else tl.Tensor)
    assert _write_through_each(tl, got) == _write_through_each(torch, want)
    # torchlike saves what it loaded with the same sharing, as torch reads it
    again = io.BytesIO()
    tl.save(tl.load(io.BytesIO(data)), again)
    assert _write_through_each(torch, torch.load(io.BytesIO(again.getvalue()))) == \
        _write_through_each(torch, torch.load(io.BytesIO(data)))


@pytest.mark.parametrize("entries", [("z", "conj"), ("real", "neg imag")])
def test_conjugate_and_negative_bits(entries):
    """torch's lazy conj / neg bits: a conjugate view shares its complex storage (is_conj(),
    writes go through both ways); the imaginary part of a conjugate (a negative real view)
    shares its storage too (is_neg()), reading and writing as torch's."""
    z = torch.tensor([1 + 2j, 3 - 4j, -5 + 6j])
    make = {"z": lambda: z, "conj": z.conj, "real": lambda: z.real,
            "neg imag": lambda: z.conj().imag}
    buf = io.BytesIO()
    torch.save({k: make[k]() for k in entries}, buf)
    want = torch.load(io.BytesIO(buf.getvalue()))
    got = tl.load(io.BytesIO(buf.getvalue()))
    for k in entries:
        assert got[k].is_conj() == want[k].is_conj()
        assert got[k].is_neg() == want[k].is_neg()
    assert _write_through_each(tl, got) == _write_through_each(torch, want)


def test_tied_weights_stay_tied():
    """A language model's tied embedding and decoder: one Parameter under two module
    attributes (a whole-model pickle) and two state_dict entries of one storage."""
    model = tl.nn.Sequential(tl.nn.Embedding(5, 4), tl.nn.Linear(4, 5, bias=False))
    model[1].weight = model[0].weight
    buf = io.BytesIO()
    tl.save({"model": model, "sd": model.state_dict()}, buf)
    loaded = tl.load(io.BytesIO(buf.getvalue()), weights_only=False)
    m, sd = loaded["model"], loaded["sd"]
    assert m[1].weight is m[0].weight
    with tl.no_grad():
        sd["0.weight"].add_(1)
    np.testing.assert_array_equal(sd["1.weight"].numpy(), sd["0.weight"].numpy())
    np.testing.assert_array_equal(sd["0.weight"].numpy(),
                                  model.state_dict()["0.weight"].numpy() + 1)


def test_huge_stride_zero_tensor_loads_as_a_view_of_its_storage():
    """A 2**28-element expanded tensor (a 1 GiB copy) loads as what it is: a view of a
    1-element storage, with torch's size and strides; nothing of its size is made."""
    big = torch.zeros(1).as_strided((2 ** 14, 2 ** 14), (0, 0))
    buf = io.BytesIO()
    torch.save({"big": big, "small": torch.arange(3.0).expand(2, 3)}, buf)
    loaded = tl.load(io.BytesIO(buf.getvalue()))
    h = loaded["big"]
    assert tuple(h.shape) == tuple(big.shape) and h.stride() == big.stride()
    assert h._root is not None and h._root.numel() == 1
    assert not hasattr(h._arr, "unsafe_buffer_pointer")    # not derived
    s = loaded["small"]
    np.testing.assert_array_equal(s.numpy(), np.tile(np.arange(3.0), (2, 1)))
    assert s.stride() == (0, 1)


# --- a save killed mid-write ---------------------------------------------------------------------

_KILLED_SAVER = textwrap.dedent("""
    import sys
    import torchlike as tl
    from torchlike.serialization import _zip as Z
    real = Z.ZipWriter.write

    def write(self, name, data):
        real(self, name, data)
        if "/data/" in name:      # half-way: the temporary holds the pickle and a storage
            self._stream.flush()
            print("writing", flush=True)
            sys.stdin.readline()

    Z.ZipWriter.write = write
    tl.save({"w": tl.full((4096,), 7.0)}, sys.argv[1])
    print("saved", flush=True)
""")


def _read_line(proc, timeout=120):
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, "the saver did not report in time"
    return proc.stdout.readline().strip()


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL (POSIX)")
def test_killed_save_leaves_a_temporary_the_next_save_removes(tmp_path):
    path = tmp_path / "ckpt.pt"
    tl.save({"w": tl.zeros(2)}, path)
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(tl.__file__))}
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_SAVER, str(path)], env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert _read_line(proc) == "writing"
        temps = [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]
        assert len(temps) == 1 and f".{proc.pid}." in temps[0]
        assert (tmp_path / temps[0]).stat().st_size > 4096 * 4
        tl.save({"w": tl.ones(2)}, path)          # a live saver's temporary is kept
        assert (tmp_path / temps[0]).exists()
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        assert (tmp_path / temps[0]).exists()     # what the killed save leaves
        tl.save({"w": tl.full((2,), 2.0)}, path)  # ... is kept while it is recent
        assert (tmp_path / temps[0]).exists()
        old = time.time() - 61
        os.utime(tmp_path / temps[0], (old, old))
        tl.save({"w": tl.full((2,), 3.0)}, path)  # ... and removed by the next save after
        assert sorted(os.listdir(tmp_path)) == ["ckpt.pt"]
        np.testing.assert_array_equal(torch.load(path)["w"].numpy(), [3.0, 3.0])
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=60)
