"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode (thread-local, as in torch)."""
import functools
import inspect
import threading

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled"]


class _State(threading.local):
    grad_enabled = True
    inference = False


_state = _State()

# How many inference_mode(True) regions are open, in all threads: Tensor._wrap reads this
# thread's mode only while some region is open (a thread-local read costs more than an op can
# spare).
INFERENCE_REGIONS = [0]
_regions_lock = threading.Lock()


def is_grad_enabled():
    """Mirrors ``torch.is_grad_enabled``."""
    return _state.grad_enabled


def is_inference_mode_enabled():
    """Mirrors ``torch.is_inference_mode_enabled``."""
    return _state.inference


class _Mode:
    """A context manager that also works as a decorator (also on generator functions), with or
    without parentheses (``@no_grad`` and ``@no_grad()``, as torch allows)."""

    def __new__(cls, *args, **kwargs):
        if cls in (no_grad, enable_grad) and len(args) == 1 and callable(args[0]):
            return cls()(args[0])
        if cls is inference_mode and args and callable(args[0]) and not isinstance(args[0], bool):
            return cls()(args[0])
        return super().__new__(cls)

    def __call__(self, fn):
        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def gen(*args, **kwargs):
                it = fn(*args, **kwargs)
                value = None
                while True:
                    with self.clone():
                        try:
                            value = it.send(value)
                        except StopIteration as stop:
                            return stop.value
                    value = yield value
            return gen

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        return wrapper

    def clone(self):
        return type(self)()

    def __enter__(self):
        self._prev = (_state.grad_enabled, _state.inference)
        self._set()
        return None

    def __exit__(self, *exc):
        _state.grad_enabled, _state.inference = self._prev
        return False


class no_grad(_Mode):
    """Mirrors ``torch.no_grad``: ops inside record no graph."""

    def _set(self):
        _state.grad_enabled = False


class enable_grad(_Mode):
    """Mirrors ``torch.enable_grad``."""

    def _set(self):
        _state.grad_enabled = True


class set_grad_enabled(_Mode):
    """Mirrors ``torch.set_grad_enabled``: takes effect at once, and also works as a context
    manager or decorator that restores the previous mode."""

    def __init__(self, mode):
        self.mode = bool(mode)
        self._prev = (_state.grad_enabled, _state.inference)
        _state.grad_enabled = self.mode

    def clone(self):
        return set_grad_enabled(self.mode)

    def __call__(self, fn):
        _state.grad_enabled = self._prev[0]
        return super().__call__(fn)

    def _set(self):
        _state.grad_enabled = self.mode

    def __enter__(self):
        # the mode was already set by __init__; keep the state from before __init__ to restore
        _state.grad_enabled = self.mode
        return None


class inference_mode(_Mode):
    """Mirrors ``torch.inference_mode``: no graph is recorded, and the tensors made inside are
    inference tensors (``is_inference()``): outside the mode they cannot be updated in place,
    saved for backward or made to require grad (PyTorch's errors).  ``inference_mode(False)``
    turns it off inside such a region, with grad mode on."""

    def __init__(self, mode=True):
        self.mode = bool(mode)

    def clone(self):
        return inference_mode(self.mode)

    def _set(self):
        _state.grad_enabled = not self.mode
        _state.inference = self.mode
        if self.mode:
            with _regions_lock:
                INFERENCE_REGIONS[0] += 1

    def __exit__(self, *exc):
        if self.mode:
            with _regions_lock:
                INFERENCE_REGIONS[0] -= 1
        return super().__exit__(*exc)
