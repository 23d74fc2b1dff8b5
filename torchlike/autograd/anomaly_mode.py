"""Anomaly detection: ``set_detect_anomaly`` / ``detect_anomaly`` (mirrors torch.autograd)."""
import threading
import traceback
import warnings

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]


class _State(threading.local):
    enabled = False
    check_nan = True


_state = _State()


def is_anomaly_enabled():
    return _state.enabled


def is_anomaly_check_nan_enabled():
    return _state.check_nan


def forward_trace():
    """The user's stack at the forward op (torchlike's own frames dropped)."""
    frames = [f for f in traceback.extract_stack()[:-1] if "/torchlike/" not in f.filename]
    return "".join(traceback.format_list(frames))


class set_detect_anomaly:
    """Mirrors ``torch.autograd.set_detect_anomaly(mode, check_nan=True)``: takes effect at
    once, and restores the previous setting when used as a context manager."""

    def __init__(self, mode, check_nan=True):
        self._prev = (_state.enabled, _state.check_nan)
        _state.enabled, _state.check_nan = bool(mode), bool(check_nan)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _state.enabled, _state.check_nan = self._prev
        return False


class detect_anomaly:
    """Mirrors ``torch.autograd.detect_anomaly``: a context manager that records each forward
    op's stack, and makes backward raise when a node returns NaN (naming that node and showing
    the forward call that created it)."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan

    def __enter__(self):
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", UserWarning, stacklevel=2)
        self._prev = (_state.enabled, _state.check_nan)
        _state.enabled, _state.check_nan = True, self.check_nan

    def __exit__(self, *exc):
        _state.enabled, _state.check_nan = self._prev
        return False
