"""torchlike.load against damaged checkpoints and streams, with real torch as the oracle:
corrupt archives raise torch's errors (not zipfile's), streams that cannot seek get torch's
hint; and torchlike.save against a careless end: a save killed by SIGKILL leaves its
temporary file, which the next save of that file removes (and a live concurrent saver's it
keeps)."""
import io
import os
import re
import select
import signal
import socket
import struct
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest
import torch

import torchlike as tl


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
        "deflated": rezip(compression=zipfile.ZIP_DEFLATED),
        "pickle empty": rezip(drop=("data.pkl",), extra={"data.pkl": b""}),
        "pickle without PROTO": rezip(drop=("data.pkl",), extra={"data.pkl": pkl_bytes[2:]}),
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


# --- a save killed mid-write ---------------------------------------------------------------------

_KILLED_SAVER = textwrap.dedent("""
    import sys
    import torchlike as tl
    from torchlike import _serialization_zip as Z
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
        tl.save({"w": tl.full((2,), 3.0)}, path)  # ... the next save removes
        assert sorted(os.listdir(tmp_path)) == ["ckpt.pt"]
        np.testing.assert_array_equal(torch.load(path)["w"].numpy(), [3.0, 3.0])
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=60)
