"""Parametrizations: mirrors ``torch.nn.utils.parametrize``.

NOTE [ parametrized modules ]
``register_parametrization(module, "weight", p)`` moves the tensor ``module.weight`` into
``module.parametrizations.weight`` (a ``ParametrizationList`` holding ``p`` and the unconstrained
tensor as ``original``, or ``original0, original1, ...`` when ``p.right_inverse`` returns several),
and makes ``weight`` a property that computes ``p(original)`` on every read and calls
``right_inverse`` on every assignment.  As in PyTorch, the property lives on a class created for
this one module, ``"Parametrized" + its class name`` (a subclass of the original class), so
``type(module).__name__``, reprs and state_dict keys (``parametrizations.weight.original``) are
PyTorch's; removing the last parametrization restores the original class.
"""
import collections
import contextlib
import copy
import copyreg

from ...autograd.grad_mode import no_grad
from ..._tensor import Tensor
from ..modules.container import ModuleDict, ModuleList
from ..parameter import Parameter

_cache_enabled = 0
_cache = {}


@contextlib.contextmanager
def cached():
    """Mirrors ``torch.nn.utils.parametrize.cached``: inside this context each parametrized
    tensor is computed once, on first read, and reused until the (outermost) context exits.

    Example::

        >>> with torchlike.nn.utils.parametrize.cached():
        ...     for x in inputs:
        ...         out = rnn(x)       # rnn.weight_hh_l0 computed once
    """
    global _cache, _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register_parameter_or_buffer(module, name, value):
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _maybe_set(dest, src):
    """``dest.set_(src)``: ``dest`` (the same object) takes ``src``'s values, shape and dtype."""
    with no_grad():
        dest.data = src


class ParametrizationList(ModuleList):
    """Mirrors ``torch.nn.utils.parametrize.ParametrizationList``: the parametrizations of one
    tensor (applied in order) and the unconstrained tensor(s) they act on, ``original`` or
    ``original0, original1, ...``.  Built by :func:`register_parametrization`."""

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape, original_dtype = original.shape, original.dtype
        new = original
        with no_grad():
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (Tensor, collections.abc.Sequence)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                             f"(list, tuple...). Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the "
                                 f"dtype.\noriginal.dtype: {original.dtype}\n"
                                 f"right_inverse(original).dtype: {new.dtype}")
            if original.device != new.device:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the "
                                 f"device.\noriginal.device: {original.device}\n"
                                 f"right_inverse(original).device: {new.device}")
            _maybe_set(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, originali in enumerate(new):
                if not isinstance(originali, Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of "
                                     f"tensors (list, tuple...). Got element {i} of the sequence "
                                     f"with type {type(originali).__name__}.")
                if isinstance(original, Parameter):
                    originali = Parameter(originali, original.requires_grad)
                originali.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", originali)
        if not self.unsafe:
            Z = self()
            if not isinstance(Z, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got "
                                 f"{type(Z).__name__}.")
            if Z.dtype != original_dtype:
                raise ValueError("Registering a parametrization may not change the dtype of the "
                                 "tensor, unless `unsafe` flag is enabled.\nunparametrized "
                                 f"dtype: {original_dtype}\nparametrized dtype: {Z.dtype}")
            if Z.shape != original_shape:
                raise ValueError("Registering a parametrization may not change the shape of the "
                                 "tensor, unless `unsafe` flag is enabled.\nunparametrized "
                                 f"shape: {original_shape}\nparametrized shape: {Z.shape}")

    def right_inverse(self, value):
        """Mirrors ``ParametrizationList.right_inverse``: set the originals so that the
        parametrized tensor becomes ``value`` (each parametrization's ``right_inverse``, last
        first)."""
        with no_grad():
            for module in reversed(list(self)):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       "implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got "
                                     f"{type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype "
                                     f"{value.dtype} while `original` has dtype "
                                     f"{self.original.dtype}")
                _maybe_set(self.original, value)
                return
            if not isinstance(value, collections.abc.Sequence):
                raise ValueError("'right_inverse' must return a sequence of tensors. Got "
                                 f"{type(value).__name__}.")
            if len(value) != self.ntensors:
                raise ValueError("'right_inverse' must return a sequence of tensors of length "
                                 f"{self.ntensors}. Got a sequence of length {len(value)}.")
            for i, tensor in enumerate(value):
                original_i = getattr(self, f"original{i}")
                if not isinstance(tensor, Tensor):
                    raise ValueError("'right_inverse' must return a sequence of tensors or "
                                     f"reference-type opaques. Got element {i} of type "
                                     f"{type(tensor).__name__}.")
                if original_i.dtype != tensor.dtype:
                    raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype "
                                     f"{tensor.dtype} while `original{i}` has dtype "
                                     f"{original_i.dtype}")
                _maybe_set(original_i, tensor)

    def forward(self):
        modules = list(self)
        if self.is_tensor:
            x = modules[0](self.original)
        else:
            x = modules[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in modules[1:]:
            x = module(x)
        return x


def _default_deepcopy(self, memo):
    obj = memo.get(id(self))
    if obj is not None:
        return obj
    replica = self.__new__(self.__class__)
    memo[id(self)] = replica
    replica.__dict__ = copy.deepcopy(self.__dict__, memo)
    for slot in copyreg._slotnames(self.__class__):
        if hasattr(self, slot):
            setattr(replica, slot, copy.deepcopy(getattr(self, slot), memo))
    return replica


def _getstate(self):
    raise RuntimeError("Serialization of parametrized modules is only supported through "
                       "state_dict(). See:\nhttps://pytorch.org/tutorials/beginner/"
                       "saving_loading_models.html#saving-loading-a-general-checkpoint-for-"
                       "inference-and-or-resuming-training")


def _inject_new_class(module):
    """Give ``module`` a class of its own, ``Parametrized<Class>`` (NOTE [ parametrized
    modules ]): pickling raises (state_dict is the way), deepcopy still works."""
    cls = module.__class__
    namespace = {"__getstate__": _getstate}
    if not hasattr(cls, "__deepcopy__"):
        namespace["__deepcopy__"] = _default_deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), namespace)


def _inject_property(module, tensor_name):
    if hasattr(module, tensor_name):
        raise AssertionError(f"Module already has an attribute named '{tensor_name}'")

    def get_parametrized(self):
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()
        key = (id(self), tensor_name)
        tensor = _cache.get(key)
        if tensor is None:
            tensor = _cache[key] = parametrization()
        return tensor

    def set_original(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Mirrors ``torch.nn.utils.parametrize.register_parametrization``: make
    ``module.<tensor_name>`` the output of ``parametrization`` applied to an unconstrained
    tensor (NOTE [ parametrized modules ]).

    Args:
        module: the module owning the parameter or buffer.
        tensor_name: its name; registering again on the same name chains parametrizations.
        parametrization: a Module whose ``forward`` maps the original tensor(s) to the
            parametrized one; an optional ``right_inverse`` maps a value back (it may return
            a tuple of tensors, stored as ``original0, original1, ...``).
        unsafe: skip the checks that the parametrization keeps the dtype and shape.

    Returns:
        ``module``.

    Example::

        >>> class Symmetric(torchlike.nn.Module):
        ...     def forward(self, X):
        ...         return X.triu() + X.triu(1).mT
        >>> m = torchlike.nn.Linear(3, 3)
        >>> torchlike.nn.utils.parametrize.register_parametrization(m, "weight", Symmetric())
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            Y = getattr(module, tensor_name)
            X = parametrization(Y)
            if not isinstance(X, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got "
                                 f"{type(X).__name__}.")
            for attr in ("dtype", "shape"):
                if getattr(X, attr) != getattr(Y, attr):
                    raise ValueError(
                        f"Registering a parametrization may not change the {attr} of the tensor, "
                        f"unless the `unsafe` flag is enabled.\nmodule.{tensor_name}.{attr}: "
                        f"{getattr(Y, attr)}\nparametrization(module.{tensor_name}).{attr}: "
                        f"{getattr(X, attr)}")
            if hasattr(parametrization, "right_inverse"):
                try:
                    Z = parametrization.right_inverse(X)
                except NotImplementedError:
                    pass
                else:
                    if not isinstance(Z, Tensor):
                        raise ValueError("parametrization.right_inverse must return a tensor. "
                                         f"Got: {type(Z).__name__}")
                    for attr in ("dtype", "shape"):
                        if getattr(Z, attr) != getattr(Y, attr):
                            raise ValueError(
                                "The tensor returned by parametrization.right_inverse must have "
                                f"the same {attr} as module.{tensor_name}, unless the `unsafe` "
                                f"flag is enabled.\nmodule.{tensor_name}.{attr}: "
                                f"{getattr(Y, attr)}\nreturned {attr}: {getattr(Z, attr)}")
        plist = module.parametrizations[tensor_name]
        plist.append(parametrization)
        plist.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        plist = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = plist
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    return module


def is_parametrized(module, tensor_name=None):
    """Mirrors ``torch.nn.utils.parametrize.is_parametrized``: whether ``module`` has any
    parametrization (or one on ``tensor_name``)."""
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Mirrors ``torch.nn.utils.parametrize.remove_parametrizations``: make ``tensor_name`` a
    plain parameter (or buffer) again, holding its current parametrized value
    (``leave_parametrized=True``) or the original unconstrained one.  The original tensor object
    is kept.  Returns ``module``."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                t = getattr(module, tensor_name)
            _maybe_set(original, t)
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                             "that is parametrized in terms of a sequence of tensors.")
        t = getattr(module, tensor_name)
        original = Parameter(t) if t.requires_grad else t
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module):
    """Mirrors ``torch.nn.utils.parametrize.type_before_parametrizations``: the module's class
    as it was before any parametrization was registered."""
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(from_module, to_module, tensor_name=None):
    """Mirrors ``torch.nn.utils.parametrize.transfer_parametrizations_and_params``: register
    ``from_module``'s parametrizations (all, or those of ``tensor_name``) on ``to_module``, which
    then shares the original tensors.  Returns ``to_module``."""
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        source = from_module.parametrizations[name]
        for param_func in source:
            register_parametrization(to_module, name, param_func)
        target = to_module.parametrizations[name]
        if hasattr(source, "original"):
            target.original = source.original
        else:
            i = 0
            while hasattr(source, f"original{i}"):
                setattr(target, f"original{i}", getattr(source, f"original{i}"))
                i += 1
    return to_module
