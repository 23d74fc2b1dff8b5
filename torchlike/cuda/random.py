"""Mirrors ``torch.cuda.random``: the default generators of the cuda devices (NOTE [ a generator
per device ] in _random.py).  Without a GPU, seeding does nothing and reading a state raises,
as in a CPU-only PyTorch."""
from .. import _random
from .._device import current_index, device as _device_cls, devices_of

__all__ = ["get_rng_state", "get_rng_state_all", "initial_seed", "manual_seed",
           "manual_seed_all", "seed", "seed_all", "set_rng_state", "set_rng_state_all"]


def _generators():
    return _random.device_generators("cuda")


def _generator(device="cuda"):
    """The default generator of ``device`` (an index, 'cuda', 'cuda:N' or a torch.device)."""
    if not devices_of("cuda"):
        raise AssertionError("Torch not compiled with CUDA enabled")
    if isinstance(device, int):
        device = _device_cls("cuda", device)
    d = _device_cls(device)
    return _random.device_generator(_device_cls("cuda", current_index("cuda")
                                                 if d.index is None else d.index))


def get_rng_state(device="cuda"):
    """Mirrors ``torch.cuda.get_rng_state``: the state of ``device``'s generator, as a uint8
    CPU Tensor."""
    return _generator(device).get_state()


def get_rng_state_all():
    """Mirrors ``torch.cuda.get_rng_state_all``: one state per cuda device."""
    return [g.get_state() for g in _generators()]


def set_rng_state(new_state, device="cuda"):
    """Mirrors ``torch.cuda.set_rng_state``."""
    if devices_of("cuda"):
        _generator(device).set_state(new_state)


def set_rng_state_all(new_states):
    """Mirrors ``torch.cuda.set_rng_state_all``."""
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def manual_seed(seed):
    """Mirrors ``torch.cuda.manual_seed``: seed the current cuda device's generator."""
    seed = int(seed)
    if devices_of("cuda"):
        _generator().manual_seed(seed)


def manual_seed_all(seed):
    """Mirrors ``torch.cuda.manual_seed_all``: seed every cuda device's generator (and those
    made later)."""
    _random.manual_seed_all("cuda", int(seed))


def seed():
    """Mirrors ``torch.cuda.seed``: seed the current cuda device's generator from OS entropy."""
    if devices_of("cuda"):
        _generator().seed()


def seed_all():
    """Mirrors ``torch.cuda.seed_all``: one seed from OS entropy for every cuda device."""
    if devices_of("cuda"):
        manual_seed_all(_generators()[0].seed())


def initial_seed():
    """Mirrors ``torch.cuda.initial_seed``: the current cuda device's generator's seed."""
    return _generator().initial_seed()
