"""What the ``torchlike.backends`` modules share: switches read and set as module attributes
(``torchlike.backends.cudnn.benchmark = True``), as PyTorch's ``ContextProp`` /
``PropModule`` make them, and the freeze PyTorch's test suite puts on them."""
import contextlib
import types

from .. import _precision

_frozen = [False]


def disable_global_flags():
    """Mirrors ``torch.backends.disable_global_flags``: setting a switch directly raises from
    now on (the ``flags()`` contexts still work)."""
    _frozen[0] = True


def flags_frozen():
    """Mirrors ``torch.backends.flags_frozen``."""
    return _frozen[0]


@contextlib.contextmanager
def unfrozen():
    before = _frozen[0]
    _frozen[0] = False
    try:
        yield
    finally:
        _frozen[0] = before


def switch(getter, setter):
    """A module attribute read through ``getter`` and set through ``setter``."""
    def set_(module, value):
        if _frozen[0]:
            raise RuntimeError(f"not allowed to set {module.__name__} flags after "
                               "disable_global_flags; please use flags() context manager instead")
        setter(value)
    return property(lambda module: getter(), set_)


def module_with_switches(module, **switches):
    """Give ``module`` (a ``sys.modules`` entry) the ``switches`` as attributes: its class
    becomes a ModuleType subclass holding them (PyTorch replaces the module object instead)."""
    module.__class__ = type("module", (types.ModuleType,), {**switches, "__module__": "builtins"})


class FP32Precision:
    """``<backend>.<op>.fp32_precision`` (NOTE [ matmul precision ] in _precision.py)."""

    __slots__ = ("_backend", "_op")

    def __init__(self, backend, op):
        object.__setattr__(self, "_backend", backend)
        object.__setattr__(self, "_op", op)

    def __getattr__(self, name):
        if name == "fp32_precision":
            return _precision.fp32_precision(self._backend, self._op)
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name, value):
        if name != "fp32_precision":
            raise AttributeError("Unknown attribute " + name)
        _precision.set_fp32_precision(self._backend, self._op, value)
