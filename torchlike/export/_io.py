"""``torchlike.export.save`` / ``load``: one zip file holding

    manifest.json       names, kinds, shapes and dtypes of the inputs, outputs and state
    program.jaxexport   the program, serialized by jax.export (StableHLO bytecode inside)
    state.npz           the state arrays (keys s0, s1, ... in the manifest's order)
    extra/<name>        the caller's extra files

Nothing is pickled, so loading runs no code from the file.  A path is written atomically
(a temporary file in the same folder, then os.replace).
"""
import io
import json
import os
import tempfile
import zipfile

import jax
import jax.numpy as jnp
import numpy as np

from .._tensor import Tensor

_FORMAT = "torchlike.export"


def _serialize(exported):
    try:
        return bytes(exported.serialize(vjp_order=1))   # NOTE [ a differentiable exported module ]
    except ImportError as e:
        raise ImportError("torchlike.export.save needs the 'flatbuffers' package for "
                          "jax.export's serialization: pip install flatbuffers (or "
                          "torchlike[export])") from e


def _deserialize(data):
    try:
        return jax.export.deserialize(bytearray(data))
    except ImportError as e:
        raise ImportError("torchlike.export.load needs the 'flatbuffers' package for "
                          "jax.export's serialization: pip install flatbuffers (or "
                          "torchlike[export])") from e


def _arrays(ep):
    if ep._meta["kind"] == "step":
        return {s["name"]: ep.state[s["name"]] for s in ep._meta["state"]}
    return {**ep.state_dict, **ep.constants}


def save(ep, f, extra_files=None):
    from . import ExportedProgram, ExportedStep
    if not isinstance(ep, (ExportedProgram, ExportedStep)):
        raise TypeError(f"The 'ep' parameter must be an instance of 'ExportedProgram', got "
                        f"'{type(ep).__name__}' instead.")
    program = _serialize(ep.exported)
    arrays = _arrays(ep)
    npz = io.BytesIO()
    stored = {}
    for i, s in enumerate(ep._meta["state"]):
        a = np.asarray(arrays[s["name"]]._value())
        if a.dtype.kind == "V":   # ml_dtypes (bfloat16, ...): store the bits
            a = a.view(f"u{a.dtype.itemsize}")
        stored[f"s{i}"] = a
    np.savez(npz, **stored)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("manifest.json", json.dumps(ep._meta, indent=1))
        z.writestr("program.jaxexport", program)
        z.writestr("state.npz", npz.getvalue())
        for name, content in (extra_files or {}).items():
            z.writestr(f"extra/{name}", content)
    data = buf.getvalue()
    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)),
                                   prefix=os.path.basename(path) + ".", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.remove(tmp)
            raise
    else:
        f.write(data)


def load(f, extra_files=None):
    from . import ExportedProgram, ExportedStep
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            data = fh.read()
    else:
        data = f.read()
    try:
        z = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise RuntimeError("torchlike.export.load: not a file written by "
                           "torchlike.export.save (not a zip archive)") from None
    with z:
        names = set(z.namelist())
        if not {"manifest.json", "program.jaxexport", "state.npz"} <= names:
            raise RuntimeError("torchlike.export.load: not a file written by "
                               "torchlike.export.save (missing manifest, program or state)")
        meta = json.loads(z.read("manifest.json"))
        if meta.get("format") != _FORMAT or meta.get("version") != 1:
            raise RuntimeError(f"torchlike.export.load: unsupported format "
                               f"{meta.get('format')!r} version {meta.get('version')!r}")
        exported = _deserialize(z.read("program.jaxexport"))
        with np.load(io.BytesIO(z.read("state.npz")), allow_pickle=False) as npz:
            tensors = {}
            for i, s in enumerate(meta["state"]):
                a = npz[f"s{i}"]
                want = jnp.dtype(s["dtype"])
                if a.dtype != want:
                    a = a.view(want)
                t = Tensor._wrap(jnp.asarray(a))
                if s.get("requires_grad"):
                    t.requires_grad_(True)
                tensors[s["name"]] = t
        if extra_files is not None:
            for name in list(extra_files):
                if f"extra/{name}" in names:
                    extra_files[name] = z.read(f"extra/{name}").decode()
    if meta["kind"] == "step":
        return ExportedStep(exported, meta, tensors)
    state_dict, constants = {}, {}
    for s in meta["state"]:
        persistent = s["kind"] == "PARAMETER" or (s["kind"] == "BUFFER" and s["persistent"])
        (state_dict if persistent else constants)[s["name"]] = tensors[s["name"]]
    return ExportedProgram(exported, meta, state_dict, constants)
