"""skip_init: mirrors ``torch.nn.utils.init``."""
import inspect

from ..modules.module import Module


def skip_init(module_cls, *args, **kwargs):
    """Mirrors ``torch.nn.utils.skip_init``: build ``module_cls(*args, **kwargs)`` on the meta
    device (no values, no random draws), then give it uninitialised storage on ``device``
    (default cpu) with ``to_empty``.  ``module_cls`` must take a ``device`` argument.

    Example::

        >>> m = torchlike.nn.utils.skip_init(torchlike.nn.Linear, 5, 1)
    """
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    kwargs["device"] = "meta"
    return module_cls(*args, **kwargs).to_empty(device=final_device)
