"""Mirrors ``torch.backends.mkl``: torchlike does not use Intel's MKL (XLA compiles its own CPU
kernels)."""

__all__ = ["is_available"]


def is_available():
    """Mirrors ``torch.backends.mkl.is_available``: False."""
    return False
