"""skip_init: mirrors ``torch.nn.utils.init``."""
import inspect

from ... import _random
from ..modules.module import Module


def skip_init(module_cls, *args, **kwargs):
    """Mirrors ``torch.nn.utils.skip_init``: build ``module_cls(*args, **kwargs)`` without
    spending its parameter initialisation: the values are unspecified (here: whatever the
    constructor's initialisation produced) and the global random state is left as it was, as
    PyTorch's meta-device construction leaves it.  ``module_cls`` must take a ``device``
    argument.

    Example::

        >>> m = torchlike.nn.utils.skip_init(torchlike.nn.Linear, 5, 1)
    """
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs["device"] = kwargs.pop("device", "cpu")
    state = _random.get_rng_state()
    try:
        return module_cls(*args, **kwargs)
    finally:
        _random.set_rng_state(state)
