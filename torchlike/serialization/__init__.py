"""``torchlike.save`` / ``torchlike.load``: PyTorch's checkpoint format, without PyTorch.

Files are interchangeable with ``torch.save`` / ``torch.load``: ``torchlike.save`` writes the zip
archive torch (>= 1.6) writes (``<name>/data.pkl``, one record ``<name>/data/<key>`` of raw
bytes per storage, ``byteorder``, ``version``, ...), whose pickle names only torch's globals, so
``torch.load(f, weights_only=True)`` opens it; ``torchlike.load`` reads what ``torch.save``
wrote (zip or the legacy format) into torchlike Tensors, Parameters, ``torchlike.Size`` and
dtypes.  Loading is ``weights_only=True`` by default, as in torch >= 2.6 (NOTE [ weights_only ]
in _weights_only.py).  Saving to a path is atomic: a failed save leaves the old
file, and a save killed outright leaves a temporary the next save removes (NOTE [ stale
temporaries ]).
"""
import contextlib
import io
import mmap as _mmap
import os
import pickle
import re
import secrets
import stat
import struct
import sys
import time
import warnings

import numpy as np

try:
    import fcntl
except ImportError:   # Windows (NOTE [ stale temporaries ])
    fcntl = None

from ._pickler import pickler_class
from ._unpickler import Loader, _safe_globals, scan_storage_ids
from ._weights_only import WeightsOnlyUnpickler, allowed_names, globals_in_pickle
from ._zip import ZipReader, ZipWriter, is_zip

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals", "get_unsafe_globals_in_checkpoint", "DEFAULT_PROTOCOL"]

DEFAULT_PROTOCOL = 2
# The legacy (pre-zip) format: three small pickles, the object's pickle, the sorted storage keys,
# then each storage as an int64 element count and its bytes.
MAGIC_NUMBER = 0x1950a86a20f9469cfc6c
PROTOCOL_VERSION = 1001

_UNSAFE_MESSAGE = (
    "In PyTorch 2.6, the default value of the `weights_only` argument of `torch.load` changed "
    "from `False` to `True`, and `torchlike.load` follows it. Re-running `torchlike.load` with "
    "`weights_only` set to `False` will likely succeed, but it can result in arbitrary code "
    "execution. Do it only if you got the file from a trusted source.")
_DOCS_MESSAGE = (
    "\n\nCheck the documentation of torch.load (which torchlike.load mirrors) to learn more "
    "about types accepted by default with weights_only "
    "https://pytorch.org/docs/stable/generated/torch.load.html.")
_TRUE_VALUES = ("1", "y", "yes", "true")


def _is_path(f):
    return isinstance(f, (str, os.PathLike))


# --- save ---------------------------------------------------------------------------------------

def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization=True, _disable_byteorder_record=False):
    """Mirrors ``torch.save``: write ``obj`` (tensors, state_dicts, modules, any picklable
    object) to ``f`` in PyTorch's checkpoint format.

    Args:
        obj: what to save.
        f: a path (str or os.PathLike) or a writable binary file-like object.  A path is
            written atomically: a temporary file beside it, fsync'ed, then renamed over it, so
            a failing save (e.g. an unpicklable object) leaves any existing file untouched.
        pickle_module: ``pickle`` (or a module whose Pickler extends pickle's pure-Python one).
        pickle_protocol: the pickle protocol (torch's default, 2, is what
            ``torch.load(weights_only=True)`` reads).
        _use_new_zipfile_serialization: False writes torch's legacy (pre-1.6) format.

    Tensors are saved as torch saves them (``torch._utils._rebuild_tensor_v2`` over a storage
    record), so a saved state_dict loads with real ``torch.load(f, weights_only=True)``, and
    with ``torchlike.load`` without torch.

    Example::

        >>> torchlike.save(model.state_dict(), "model.pt")
        >>> model.load_state_dict(torchlike.load("model.pt"))
    """
    if _is_path(f):
        path = os.fspath(f)
        name = _archive_name(path)
        _atomic_write(path, lambda stream: _write(
            obj, stream, name, pickle_module, pickle_protocol, _use_new_zipfile_serialization,
            not _disable_byteorder_record))
        return
    if not callable(getattr(f, "write", None)):
        if not hasattr(f, "write"):
            raise AttributeError("expected 'f' to be string, path, or a file-like object with "
                                 "a 'write' attribute")
        raise TypeError(f"Buffer of {str(type(f)).strip('<>')} has no callable attribute "
                        "'write'")
    _write(obj, f, "archive", pickle_module, pickle_protocol, _use_new_zipfile_serialization,
           not _disable_byteorder_record)
    f.flush()   # as torch's: a stream without flush raises AttributeError (after the write)


def _archive_name(path):
    """The archive's top-level folder, as torch names it: the file name up to its last dot
    ('archive' for a non-ASCII path)."""
    try:
        path.encode("ascii")
    except UnicodeEncodeError:
        return "archive"
    base = os.path.basename(path)
    name = base[:base.rfind(".")] if "." in base else base
    if not name:
        raise RuntimeError(f"invalid file name: {path}")
    return name


# NOTE [ stale temporaries ]
# A save to a path writes ``.<name>.<pid>.<random>.tmp`` beside the target and renames it over
# the target when complete, so a failed save leaves the old file.  A save killed outright
# (SIGKILL, out of memory, power loss) cannot remove its temporary, so every save first removes
# the temporaries of earlier saves of the same target that are provably stale, and must never
# remove a live concurrent saver's.  The writer holds an exclusive ``flock`` on its temporary
# from just after creating it until after the rename; the kernel drops that lock when its
# process dies, however it dies.  A temporary is stale when its lock can be taken, the pid in its
# name is not a live process and it was last written a minute ago or more: the lock covers pid
# reuse and savers in other pid namespaces or on other hosts of a shared filesystem; the pid and
# the age cover the instant between a live saver creating its file and locking it (the pid only
# for a saver in this pid namespace).  Without ``fcntl`` (Windows) nothing is removed.

def _atomic_write(path, write):
    target = os.path.realpath(path) if os.path.islink(path) else path
    directory = os.path.dirname(target) or "."
    if not os.path.isdir(directory):
        raise RuntimeError(f"Parent directory {os.path.dirname(path)} does not exist.")
    if os.path.isdir(target):
        raise RuntimeError(f"open file failed with strerror: Is a directory: '{path}'")
    base = os.path.basename(target)
    _remove_stale_temporaries(directory, base)
    fd, tmp = _create_temporary(directory, base)
    held = fd
    try:
        with os.fdopen(fd, "wb", closefd=False) as stream:
            write(stream)
            stream.flush()
            os.fsync(stream.fileno())
        with contextlib.suppress(OSError):   # keep an existing file's permissions
            os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode))
        if fcntl is None:    # Windows renames no open file (and there is no lock to keep)
            os.close(fd)
            held = None
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    finally:
        if held is not None:
            os.close(held)     # drops the lock (NOTE [ stale temporaries ])
    with contextlib.suppress(OSError, AttributeError):   # make the rename itself durable
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def _create_temporary(directory, base):
    """(fd, path) of a new, locked temporary for a save of ``base`` (NOTE [ stale
    temporaries ])."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        tmp = os.path.join(directory, f".{base}.{os.getpid()}.{secrets.token_hex(8)}.tmp")
        try:
            fd = os.open(tmp, flags, 0o666)
            break
        except FileExistsError:
            continue
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    return fd, tmp


def _remove_stale_temporaries(directory, base):
    """Remove the temporaries that killed saves of ``base`` left in ``directory``."""
    if fcntl is None:
        return
    prefix = f".{base}."
    stale, now = [], time.time()
    with contextlib.suppress(OSError), os.scandir(directory) as entries:
        stale = [e.path for e in entries if e.name.startswith(prefix)
                 and _TEMPORARY.fullmatch(e.name[len(prefix):])
                 and e.is_file(follow_symlinks=False)
                 and now - e.stat(follow_symlinks=False).st_mtime >= _STALE_AFTER
                 and not _alive(int(e.name[len(prefix):].split(".")[0]))]
    for tmp in stale:
        with contextlib.suppress(OSError):
            fd = os.open(tmp, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)   # BlockingIOError: in use
                os.unlink(tmp)
            finally:
                os.close(fd)


_TEMPORARY = re.compile(r"[1-9][0-9]*\.[0-9a-f]{16}\.tmp")
_STALE_AFTER = 60   # seconds since a temporary was last written (NOTE [ stale temporaries ])


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):   # another user's process / cannot tell: keep it
        return True
    return True


def _write(obj, stream, name, pickle_module, protocol, zip_format, byteorder_record):
    # The whole pickle is made before anything is written: an unpicklable object fails first.
    data = io.BytesIO()
    pickler = pickler_class(pickle_module)(data, protocol, legacy=not zip_format)
    pickler.dump(obj)
    storages = pickler.storages
    if not zip_format:
        _write_legacy(stream, data.getvalue(), storages, pickle_module, protocol)
        return
    zf = ZipWriter(stream)
    zf.write(f"{name}/data.pkl", data.getvalue())
    zf.write(f"{name}/.format_version", b"1")
    zf.write(f"{name}/.storage_alignment", b"64")
    if byteorder_record:
        zf.write(f"{name}/byteorder", sys.byteorder.encode("ascii"))
    for ref in storages:
        zf.write(f"{name}/data/{ref.key}", np.ascontiguousarray(ref.array).view(np.uint8))
    zf.write(f"{name}/version", b"3\n")
    zf.write(f"{name}/.data/serialization_id", f"{secrets.randbits(128):040d}".encode("ascii"))
    zf.close()


def _write_legacy(stream, data_pkl, storages, pickle_module, protocol):
    sys_info = {"protocol_version": PROTOCOL_VERSION, "little_endian": sys.byteorder == "little",
                "type_sizes": {"short": 2, "int": 4, "long": 4}}
    for header in (MAGIC_NUMBER, PROTOCOL_VERSION, sys_info):
        pickle_module.dump(header, stream, protocol=protocol)
    stream.write(data_pkl)
    by_key = {ref.key: ref for ref in storages}
    keys = sorted(by_key)
    pickle_module.dump(keys, stream, protocol=protocol)
    for key in keys:
        array = np.ascontiguousarray(by_key[key].array)
        pid = by_key[key].persistent_id(legacy=True)
        stream.write(struct.pack("<q", pid[4]))
        stream.write(array.view(np.uint8))


# --- load ---------------------------------------------------------------------------------------

def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Mirrors ``torch.load``: read an object saved by ``torch.save`` or ``torchlike.save``.

    Args:
        f: a path (str or os.PathLike) or a readable, seekable binary file-like object.
        map_location: where storages go: None (where they were saved: 'cpu', 'cuda:0', ...),
            a device or device string for all of them, a dict mapping saved locations to new
            ones, or a callable ``(storage, location) -> storage`` (given a storage on the CPU;
            return it, ``storage.cuda(i)``, ``storage.to(device)``, or None for the default).
            'cuda' is the jax GPU device torchlike uses.
        pickle_module: the module to unpickle with (only with ``weights_only=False``).
        weights_only: True (the default, as in torch >= 2.6) loads only tensors, primitive
            types, dicts/lists/tuples/sets, ``OrderedDict``, ``torch.Size``, dtypes, devices
            and the globals registered with ``add_safe_globals``; anything else raises
            ``pickle.UnpicklingError``.  False unpickles any object: use only on trusted
            files.  The environment variables ``TORCH_FORCE_WEIGHTS_ONLY_LOAD`` and
            ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` (set to 1/y/yes/true) override it as in torch.
        mmap: read storages through a memory map of the file (zip checkpoints at a path only).
        pickle_load_args: passed to the Unpickler (e.g. ``encoding``; only with
            ``weights_only=False``).

    Returns:
        The saved object, with torchlike Tensors (Parameters as ``torchlike.nn.Parameter``)
        in place of torch's.  Tensors that shared a storage when saved share it again (a write
        through one shows in the others), and a tensor costs no more memory than the storage
        it views (NOTE [ loaded storages ] in _unpickler.py).

    Example::

        >>> sd = torchlike.load("model.pt", map_location="cpu")
        >>> model.load_state_dict(sd)
    """
    weights_only = _resolve_weights_only(weights_only, pickle_module)
    if weights_only:
        if pickle_module is not None:
            raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                               "specified")
        if pickle_load_args:
            warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
        pickle_module = None
        unpickle_args = {"encoding": pickle_load_args.get("encoding", "utf-8")}
    else:
        pickle_module = pickle if pickle_module is None else pickle_module
        unpickle_args = {"encoding": "utf-8", **pickle_load_args}
    try:
        with _open_for_read(f) as stream:
            loader = Loader(None, map_location, weights_only)
            base = WeightsOnlyUnpickler if weights_only else pickle_module.Unpickler
            if is_zip(stream):
                mapped = None
                if mmap:
                    if not _is_path(f):
                        raise ValueError("f must be a file path in order to use the mmap "
                                         "argument")
                    mapped = _mmap.mmap(stream.fileno(), 0, access=_mmap.ACCESS_READ)
                try:
                    return _load_zip(stream, mapped, loader, base, unpickle_args)
                finally:
                    if mapped is not None:
                        with contextlib.suppress(BufferError):   # arrays may still view it
                            mapped.close()
            if mmap:
                shown = f"{f}, " if isinstance(f, str) else ""
                raise RuntimeError("mmap can only be used with files saved with "
                                   f"`torchlike.save({shown}_use_new_zipfile_serialization=True)"
                                   "`, please torchlike.save your checkpoint with this option "
                                   "in order to use mmap.")
            return _load_legacy(stream, loader, base, unpickle_args)
    except pickle.UnpicklingError as e:
        if not weights_only:
            raise
        raise pickle.UnpicklingError(_weights_only_message(str(e))) from None


def _resolve_weights_only(weights_only, pickle_module):
    not_set = weights_only is None
    if not_set:
        weights_only = pickle_module is None
    force = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE_VALUES
    force_no = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE_VALUES
    if force and force_no:
        raise RuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or "
                           "`TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` should be set, but both were set.")
    if force:
        return True
    if force_no and not_set:
        warnings.warn("Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the "
                      "`weights_only` argument was not explicitly passed to `torchlike.load`, "
                      "forcing weights_only=False.", UserWarning, stacklevel=3)
        return False
    return bool(weights_only)


def _weights_only_message(message):
    if "was not an allowed global by default" in message:
        return ("Weights only load failed. This file can still be loaded, to do so you have two "
                "options, \033[1mdo those steps only if you trust the source of the "
                f"checkpoint\033[0m. \n\t(1) {_UNSAFE_MESSAGE}\n\t(2) Alternatively, to load "
                "with `weights_only=True` please check the recommended steps in the following "
                f"error message.\n\tWeightsUnpickler error: {message}{_DOCS_MESSAGE}")
    text = f"Weights only load failed. {_UNSAFE_MESSAGE}\n"
    if "is blocked" not in message:
        text += ("Please file an issue with the following so that we can make "
                 "`weights_only=True` compatible with your use case: WeightsUnpickler error: ")
    return f"{text}\n\n{message}{_DOCS_MESSAGE}"


@contextlib.contextmanager
def _open_for_read(f):
    if _is_path(f):
        with open(f, "rb") as stream:
            yield stream
        return
    if not callable(getattr(f, "read", None)):
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a "
                             "'read' attribute")
    try:
        f.seek(f.tell())
    except (io.UnsupportedOperation, AttributeError) as e:
        if "seek" not in str(e) and "tell" not in str(e):
            raise
        raise type(e)(f"{e}. You can only torchlike.load from a file that is seekable. Please "
                      "pre-load the data into a buffer like io.BytesIO and try to load from it "
                      "instead.") from None
    yield f


def _load_zip(stream, mapped, loader, base, unpickle_args):
    archive = ZipReader(stream, mapped)
    archive.check_version()
    if archive.has("constants.pkl"):
        raise RuntimeError("this is a TorchScript archive (torch.jit.save); torchlike.load "
                           "reads checkpoints written by torch.save / torchlike.save only")
    order = bytes(archive.read("byteorder")).decode() if archive.has("byteorder") else None
    if order not in (None, "little", "big"):
        raise ValueError(f"Unknown endianness type: {order}")
    loader.swap = order is not None and order != sys.byteorder
    loader.read_storage = lambda key, nbytes: np.frombuffer(
        archive.read(f"data/{key}", nbytes), np.uint8)
    return loader.load(io.BytesIO(archive.read("data.pkl")), base, **unpickle_args)


def _load_legacy(stream, loader, base, unpickle_args):
    def header():
        return loader.load(stream, base, **unpickle_args)

    if header() != MAGIC_NUMBER:
        raise RuntimeError("Invalid magic number; corrupt file?")
    version = header()
    if version != PROTOCOL_VERSION:
        raise RuntimeError(f"Invalid protocol version: {version}")
    sys_info = header()
    loader.swap = bool(sys_info.get("little_endian", True)) != (sys.byteorder == "little")
    loader.legacy = True
    # The storages' bytes follow the object's pickle: find which storages (and element sizes)
    # it refers to without running it, read them, then unpickle it for real.
    start = stream.tell()
    ids = scan_storage_ids(stream)
    storages = {}
    for key in header():
        key = key.decode("ascii") if isinstance(key, bytes) else key
        if key not in ids:
            raise RuntimeError(f"corrupt legacy checkpoint: storage {key!r} is listed but "
                               "never used")
        (count,) = struct.unpack("<q", stream.read(8))
        nbytes = count * ids[key][0].itemsize
        raw = stream.read(nbytes)
        if len(raw) != nbytes:
            raise RuntimeError(f"corrupt legacy checkpoint: storage {key!r} is truncated")
        storages[key] = np.frombuffer(raw, np.uint8)
    end = stream.tell()
    stream.seek(start)
    loader.read_storage = lambda key, nbytes: storages[key]
    result = loader.load(stream, base, **unpickle_args)
    stream.seek(end)
    return result


# --- safe globals (torch.serialization.add_safe_globals & co.) ----------------------------------

def add_safe_globals(safe_globals):
    """Mirrors ``torch.serialization.add_safe_globals``: let ``weights_only`` loads use these
    classes/functions.  Each entry is the object, or ``(object, "module.qualified.name")`` to
    admit it under the name a checkpoint spells it with."""
    _safe_globals.update(safe_globals)


def get_safe_globals():
    """Mirrors ``torch.serialization.get_safe_globals``: the user-registered safe globals."""
    return list(_safe_globals)


def clear_safe_globals():
    """Mirrors ``torch.serialization.clear_safe_globals``."""
    _safe_globals.clear()


class safe_globals:
    """Mirrors ``torch.serialization.safe_globals``: a context manager that adds safe globals
    for its duration.

    Example::

        >>> with torchlike.serialization.safe_globals([MyConfig]):
        ...     ckpt = torchlike.load("ckpt.pt")
    """

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc):
        _safe_globals.difference_update(self.safe_globals)


def get_unsafe_globals_in_checkpoint(f):
    """Mirrors ``torch.serialization.get_unsafe_globals_in_checkpoint``: the globals a (zip)
    checkpoint names that a ``weights_only`` load would refuse, as "module.name" strings
    (found without running the pickle)."""
    with _open_for_read(f) as stream:
        if not is_zip(stream):
            raise ValueError("Expected input to be a checkpoint returned by torch.save")
        data = ZipReader(stream).read("data.pkl")
    return sorted(globals_in_pickle(io.BytesIO(data)) - allowed_names())
