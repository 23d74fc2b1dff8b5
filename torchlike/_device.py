"""torch-named devices ('cpu', 'cuda', 'cuda:1', 'xla', 'meta') mapped onto jax devices.

NOTE [ devices ]
A torchlike device names a jax device: ``cpu:N`` the N-th jax CPU device, ``cuda:N`` the N-th
GPU, ``xla:N`` / ``tpu:N`` the N-th device of the default accelerator (TPU, else GPU, else CPU:
torch_xla's name for whatever XLA runs on), ``meta`` no device at all (shape and dtype only);
``mps`` and ``xpu`` are valid names with no devices behind them.  A jax device maps back to one
torch device: GPUs are ``cuda:N``, TPUs ``xla:N`` (as torch_xla reports them), CPUs ``cpu`` (the
first) or ``cpu:N``.

Without an accelerator, ``TORCHLIKE_CPU_AS_CUDA=1`` presents jax's CPU devices past the first as
``cuda:0``, ``cuda:1``, ... (start the process with
``XLA_FLAGS=--xla_force_host_platform_device_count=N``, N >= 2): ``cpu`` is then CPU device 0 and
every ``cuda`` code path -- moves, mixing errors, per-device RNG, memory queries, compile -- runs
on a machine with no GPU.  The table is read once, when a device is first looked up.
"""
import builtins
import os
import re

import jax

from ._meta import META

__all__ = ["device"]

_TYPES = ("cpu", "cuda", "xla", "tpu", "meta", "mps", "xpu")
_SPEC = re.compile(r"^([a-z]+)(?::(\d+))?$")


class device:
    """Mirrors ``torch.device``: a (type, index) pair; it names a device, it does not check one.
    As a context manager it is the default device of the factories inside the block."""

    __slots__ = ("type", "index", "_previous")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int) and not isinstance(type, bool):
            acc = accelerator_type()
            if acc is None:
                raise RuntimeError("Cannot access accelerator device when none is available.")
            type, index = acc, type
        m = _SPEC.match(type) if isinstance(type, str) else None
        if m is None or m.group(1) not in _TYPES:
            if not isinstance(type, str):
                raise TypeError(f"device() received an invalid combination of arguments - got "
                                f"({builtins.type(type).__name__})")
            raise RuntimeError(f"Expected one of {', '.join(_TYPES)} device type at start of "
                               f"device string: {type}")
        if m.group(2) is not None:
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was "
                                   f"passed explicitly: {type}")
            index = int(m.group(2))
        if index is not None and index < 0:
            raise RuntimeError(f"Device index must be -1 or non-negative, got {index}")
        self.type, self.index = m.group(1), index

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))

    def __enter__(self):
        self._previous = _default["device"]
        _default["device"] = self
        return self

    def __exit__(self, *exc):
        _default["device"] = self._previous


class AcceleratorError(RuntimeError):
    """Mirrors ``torch.AcceleratorError``: an error an accelerator reported."""


class OutOfMemoryError(RuntimeError):
    """Mirrors ``torch.OutOfMemoryError`` (``torch.cuda.OutOfMemoryError``): XLA could not
    allocate a buffer (its RESOURCE_EXHAUSTED), so a program can catch it, as with PyTorch, and
    retry smaller."""


def out_of_memory(error):
    """``error`` (raised by jax running a program) as an OutOfMemoryError, or None when it is
    not XLA's allocation failure."""
    if isinstance(error, jax.errors.JaxRuntimeError) and "RESOURCE_EXHAUSTED" in str(error):
        return OutOfMemoryError(f"out of memory: {error}")
    return None


# --- the table: torch type -> jax devices ------------------------------------------------------

_TABLE = {}


def _jax_devices(platform):
    """This process's devices of ``platform`` (with several processes, jax.devices() lists
    every process's: NOTE [ process groups on JAX ] in distributed/distributed_c10d.py)."""
    try:
        return list(jax.local_devices(backend=platform))
    except RuntimeError:
        return []


def _table():
    if not _TABLE:
        cpus = _jax_devices("cpu")
        gpus, tpus = _jax_devices("gpu"), _jax_devices("tpu")
        if os.environ.get("TORCHLIKE_CPU_AS_CUDA") == "1" and not gpus:
            cpus, gpus = cpus[:1], cpus[1:]
        _TABLE.update(cpu=cpus, cuda=gpus, xla=tpus or gpus or cpus, tpu=tpus or gpus or cpus)
        back = {}
        for t in ("xla", "cpu", "cuda"):   # a GPU is cuda:N, a TPU xla:N, a CPU cpu:N
            for i, jd in enumerate(_TABLE[t]):
                back[jd] = device(t) if t == "cpu" and i == 0 else device(t, i)
        _FROM_JAX.update(back)
    return _TABLE


_FROM_JAX = {META: device("meta")}


def reset():
    """Read the table again on the next lookup (JAX's runtime was restarted with more
    processes)."""
    _TABLE.clear()
    _FROM_JAX.clear()
    _FROM_JAX[META] = device("meta")


def devices_of(type):
    """The jax devices behind torch device type ``type`` ('cpu', 'cuda', 'xla', ...)."""
    return _table().get(type, [])


def accelerator_type():
    """'cuda' when there are GPUs (or CPUs presented as GPUs), 'xla' for TPUs, else None."""
    return "cuda" if devices_of("cuda") else "xla" if _jax_devices("tpu") else None


_current = {}   # device type -> the index a device of that type without one means


def current_index(type):
    """The index ``torchlike.device(type)`` means (``torch.cuda.set_device`` sets it)."""
    return _current.get(type, 0)


def set_current_index(type, index):
    _current[type] = index


def to_jax_device(d):
    """The jax device a torch device names; a clear RuntimeError when it does not exist."""
    d = device(d) if not isinstance(d, device) else d
    if d.type == "meta":
        return META
    devs = devices_of(d.type)
    index = current_index(d.type) if d.index is None else d.index
    if index >= len(devs):
        if not devs:
            raise RuntimeError(f"device '{d}' is not available: jax found no device for it "
                               f"(jax.devices() = {jax.devices()})")
        raise RuntimeError(f"device '{d}' is not available: there are {len(devs)} "
                           f"{d.type} device(s)")
    return devs[index]


def from_jax_device(jd):
    """The torch device for a jax device; cpu:0 prints as 'cpu', as in torch."""
    r = _FROM_JAX.get(jd)
    if r is None:
        _table()
        r = _FROM_JAX.get(jd)
        if r is None:   # a device jax added later, or one of a platform torchlike has no name for
            r = _FROM_JAX[jd] = device("cpu") if jd.platform == "cpu" else device("xla", jd.id)
    return r


CPU = device("cpu")
_default = {"device": CPU}


def default_device():
    """The device factories use when given none (``set_default_device``, ``with device(...)``)."""
    return _default["device"]


def set_default_device(d):
    """Mirrors ``torch.set_default_device``."""
    _default["device"] = CPU if d is None else device(d)
