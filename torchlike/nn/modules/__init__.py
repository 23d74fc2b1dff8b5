"""The layers of torchlike.nn, one file per family (each thin over nn.functional)."""
import sys


def __getattr__(name):
    """``torch.nn.modules.Linear``: as PyTorch's, the package also answers with each layer of
    ``nn`` (found there, so the two names are one class)."""
    from .module import Module
    value = getattr(sys.modules["torchlike.nn"], name, None)
    if isinstance(value, type) and issubclass(value, Module):
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
