"""Mirrors ``torch.backends.mha``: whether nn.TransformerEncoderLayer takes its inference fast
path, the whole layer as one op in eval mode with nothing to record (NOTE [ encoder layer fast
path ] in _ops/attention.py)."""

__all__ = ["get_fastpath_enabled", "set_fastpath_enabled"]

_enabled = [True]


def get_fastpath_enabled():
    """Mirrors ``torch.backends.mha.get_fastpath_enabled``: True unless turned off."""
    return _enabled[0]


def set_fastpath_enabled(value):
    """Mirrors ``torch.backends.mha.set_fastpath_enabled``."""
    _enabled[0] = bool(value)
