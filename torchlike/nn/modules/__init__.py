"""The layers of torchlike.nn, one file per family (each thin over nn.functional)."""
import sys


def __getattr__(name):
    """``torch.nn.modules.Linear``: as PyTorch's, the package also answers with each class of
    ``nn`` that its modules define (found there, so the two names are one class)."""
    value = getattr(sys.modules["torchlike.nn"], name, None)
    if isinstance(value, type) and value.__module__.startswith(__name__ + "."):
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
