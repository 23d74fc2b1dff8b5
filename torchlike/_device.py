"""torch-named devices ('cpu', 'cuda', 'cuda:1', 'tpu') mapped onto jax devices."""
import re

import jax

__all__ = ["device"]

# torch's device type -> jax's platform name
_PLATFORM = {"cpu": "cpu", "cuda": "gpu", "tpu": "tpu"}
_TYPE = {"cpu": "cpu", "gpu": "cuda", "cuda": "cuda", "rocm": "cuda", "tpu": "tpu"}
_SPEC = re.compile(r"^(cpu|cuda|tpu)(?::(\d+))?$")


class device:
    """Mirrors ``torch.device``: a (type, index) pair; it names a device, it does not check one."""

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int):
            type, index = _default_accelerator(), type
        m = _SPEC.match(type) if isinstance(type, str) else None
        if m is None:
            raise RuntimeError(f"Invalid device string: '{type}'")
        if m.group(2) is not None:
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was "
                                   f"passed explicitly: {type}")
            index = int(m.group(2))
        if index is not None and index < 0:
            raise RuntimeError(f"Device index must not be negative, got {index}")
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


def _default_accelerator():
    return "cuda" if _platform_devices("gpu") else "tpu" if _platform_devices("tpu") else "cpu"


_DEVICES = {}


def _platform_devices(platform):
    if platform not in _DEVICES:
        try:
            _DEVICES[platform] = jax.devices(platform)
        except RuntimeError:
            _DEVICES[platform] = []
    return _DEVICES[platform]


def to_jax_device(d):
    """The jax device a torch device names; a clear RuntimeError when it does not exist."""
    d = device(d) if not isinstance(d, device) else d
    devs = _platform_devices(_PLATFORM[d.type])
    index = d.index or 0
    if index >= len(devs):
        if not devs:
            raise RuntimeError(f"device '{d}' is not available: jax found no '{_PLATFORM[d.type]}' "
                               f"devices (jax.devices() = {jax.devices()})")
        raise RuntimeError(f"device '{d}' is not available: there are {len(devs)} "
                           f"{d.type} device(s)")
    return devs[index]


_FROM_JAX = {}


def from_jax_device(jd):
    """The torch device for a jax device; cpu:0 prints as 'cpu', as in torch."""
    r = _FROM_JAX.get(jd)
    if r is None:
        t = _TYPE.get(jd.platform, jd.platform)
        r = device("cpu") if t == "cpu" else device(t, _platform_devices(jd.platform).index(jd))
        _FROM_JAX[jd] = r
    return r


CPU = device("cpu")
