"""Mirrors ``torch.backends.opt_einsum``: how ``torchlike.einsum`` orders a contraction of
three or more operands.  jax computes the order with the opt_einsum package (a dependency of
jax, so always available): ``enabled = False`` contracts left to right, as PyTorch without
opt_einsum, and ``strategy`` ('auto', 'greedy', 'optimal') is opt_einsum's path search."""
import contextlib
import sys

from ._switches import module_with_switches, switch, unfrozen

__all__ = ["flags", "get_opt_einsum", "is_available", "set_flags"]

_flags = {"enabled": True, "strategy": "auto"}


def is_available():
    """Mirrors ``torch.backends.opt_einsum.is_available``: True (jax depends on it)."""
    return True


def get_opt_einsum():
    """Mirrors ``torch.backends.opt_einsum.get_opt_einsum``: the opt_einsum package."""
    import opt_einsum
    return opt_einsum


def optimize():
    """What ``jnp.einsum``'s ``optimize`` gets: False (left to right) or the strategy."""
    return _flags["strategy"] if _flags["enabled"] else False


def _set_enabled(value):
    _flags["enabled"] = bool(value)


def _set_strategy(value):
    if not _flags["enabled"]:
        raise ValueError(f"opt_einsum is not enabled, so setting a `strategy` to {value} will "
                         "not be meaningful. torch.einsum will bypass path calculation and "
                         "simply contract from left to right. Please set `enabled` to `True` as "
                         "well or unset `strategy`.")
    if value not in ("auto", "greedy", "optimal"):
        raise ValueError(f"`strategy` must be one of the following: [auto, greedy, optimal] "
                         f"but is {value}")
    _flags["strategy"] = value


def set_flags(_enabled=None, _strategy=None):
    """Mirrors ``torch.backends.opt_einsum.set_flags``; returns the old switches."""
    old = (_flags["enabled"], _flags["strategy"])
    if _enabled is not None:
        _set_enabled(_enabled)
    if _strategy is not None:
        _set_strategy(_strategy)
    return old


@contextlib.contextmanager
def flags(enabled=None, strategy=None):
    """Mirrors ``torch.backends.opt_einsum.flags``: the switches set in the block."""
    with unfrozen():
        old = set_flags(enabled, strategy)
    try:
        yield
    finally:
        with unfrozen():
            set_flags(*old)


# NOTE: as in PyTorch, a direct assignment (``opt_einsum.strategy = ...``) is not checked;
# set_flags and flags() check their values.
module_with_switches(sys.modules[__name__],
                     enabled=switch(lambda: _flags["enabled"], _set_enabled),
                     strategy=switch(lambda: _flags["strategy"],
                                     lambda v: _flags.__setitem__("strategy", v)))
