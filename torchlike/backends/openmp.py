"""Mirrors ``torch.backends.openmp``: XLA's CPU backend runs on its own thread pool, not
OpenMP (NOTE [ thread counts ] in _settings.py)."""

__all__ = ["is_available"]


def is_available():
    """Mirrors ``torch.backends.openmp.is_available``: False."""
    return False
