"""Lazy modules (mirrors ``torch.nn.modules.lazy``): parameters whose shapes come from the first
input.  A forward pre-hook materialises them, then the module becomes ``cls_to_become``."""
from ..parameter import is_lazy


class LazyModuleMixin:
    """Mirrors ``torch.nn.modules.lazy.LazyModuleMixin``: subclasses define
    ``initialize_parameters(*inputs)`` and ``cls_to_become``; ``__init__`` calls
    ``_register_lazy_hook()``."""

    cls_to_become = None

    def _register_lazy_hook(self):
        self._lazy_hook = self.register_forward_pre_hook(_infer_parameters)

    def has_uninitialized_params(self):
        """Whether a parameter or buffer still waits for its shape."""
        return any(is_lazy(t) for t in (*self._parameters.values(), *self._buffers.values()))


def _infer_parameters(module, args):
    module.initialize_parameters(*args)
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
    module._lazy_hook.remove()
    del module._lazy_hook
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become
