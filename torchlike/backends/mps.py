"""Mirrors ``torch.backends.mps``: Apple's GPUs, which jax reaches through its Metal plugin
(platform 'METAL')."""
import functools
import importlib.util

__all__ = ["is_available", "is_built"]


def is_built():
    """Mirrors ``torch.backends.mps.is_built``: whether jax's Metal plugin is installed."""
    try:
        return importlib.util.find_spec("jax_plugins.metal_plugin") is not None
    except ModuleNotFoundError:   # no jax plugin at all
        return False


@functools.lru_cache(maxsize=None)
def is_available():
    """Mirrors ``torch.backends.mps.is_available``: whether jax has a METAL device."""
    import jax
    try:
        return bool(jax.devices("METAL"))
    except RuntimeError:
        return False
