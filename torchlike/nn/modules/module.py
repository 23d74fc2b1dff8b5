"""Module: mirrors ``torch.nn.Module``.

NOTE [ module state ]
A Module files what is assigned to it by type (``__setattr__``): a Parameter goes to
``_parameters``, a Module to ``_modules``, a Tensor assigned to a registered buffer name (or an
``nn.Buffer``) to ``_buffers``; everything else is a plain attribute.  These three dicts, in
insertion order, are the whole state: ``named_parameters``, ``state_dict`` and the pytree
flattening all walk them, so the order is PyTorch's (own entries first, then each child in the
order it was assigned).  Hooks live in one dict per kind (``_hooks``), each mapping a handle id
to the hook, so a ``RemovableHandle`` removes it.
"""
import collections
import itertools
import warnings

from ... import _creation, _dtype as D, _trace_context
from ..._device import device as _device_cls
from ..._meta import NO_DATA
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...autograd.graph import add_hook
from ...utils.hooks import call_with_hooks
from ..parameter import Buffer, Parameter, is_lazy
from ._module_pytree import register_pytree

_HOOK_KINDS = ("forward_pre", "forward", "backward_pre", "backward", "state_dict_pre",
               "state_dict", "load_state_dict_pre", "load_state_dict_post")


class _IncompatibleKeys(collections.namedtuple("IncompatibleKeys",
                                               ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys it missed and the ones it did not expect."""

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


_IncompatibleKeys.__name__ = _IncompatibleKeys.__qualname__ = "_IncompatibleKeys"


def _add_indent(text, spaces):
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


def _typename(value):
    if isinstance(value, Tensor):
        return f"torch.{_legacy_type(value)}"
    return type(value).__name__


def _legacy_type(t):
    return t.type().rsplit(".", 1)[-1]


class Module:
    """Mirrors ``torch.nn.Module``: the base class of every layer and model.

    Subclasses call ``super().__init__()`` first, assign Parameters, buffers and sub-modules as
    attributes, and define ``forward``; calling the module runs its hooks around ``forward``.

    Example::

        >>> class Net(torchlike.nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.fc = torchlike.nn.Linear(4, 2)
        ...     def forward(self, x):
        ...         return self.fc(x).relu()
    """

    _version = 1
    training: bool
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if kwargs and not self.call_super_init:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                            f"argument '{next(iter(kwargs))}'")
        if args and not self.call_super_init:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        setattr_ = super().__setattr__
        setattr_("training", True)
        setattr_("_parameters", {})
        setattr_("_buffers", {})
        setattr_("_non_persistent_buffers_set", set())
        setattr_("_modules", {})
        setattr_("_hooks", {kind: {} for kind in _HOOK_KINDS})
        # handle ids of forward hooks registered with_kwargs / always_call
        setattr_("_with_kwargs", set())
        setattr_("_always_called", set())
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        register_pytree(cls)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  '"forward" function')

    # --- registration (NOTE [ module state ]) ---------------------------------------------------

    def _check_name(self, kind, name, exists_ok):
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and not exists_ok:
            raise KeyError(f"attribute '{name}' already exists")

    def register_buffer(self, name, tensor, persistent=True):
        """Mirrors ``Module.register_buffer``: ``tensor`` (or None) becomes state that is not a
        parameter; ``persistent=False`` keeps it out of ``state_dict``."""
        _trace_context.structure_changed()
        self._check_name("buffer", name, name in self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        """Mirrors ``Module.register_parameter``: ``param`` (a Parameter or None) is filed as
        this module's parameter ``name``."""
        _trace_context.structure_changed()
        self._check_name("parameter", name, name in self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        if param is not None and param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                             f"parameters must be created explicitly. To express '{name}' as a "
                             "function of another Tensor, compute the value in the forward() "
                             "method.")
        self._parameters[name] = param

    def add_module(self, name, module):
        """Mirrors ``Module.add_module``: file ``module`` (or None) as the child ``name``."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        _trace_context.structure_changed()
        self._check_name("module", name, name in self._modules)
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name, value):
        _trace_context.structure_changed()
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, keep=self._parameters)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            if params is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, keep=self._modules)
            self._modules[name] = value
        elif params is not None and name in d["_modules"]:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            d["_modules"][name] = None
        elif isinstance(value, Buffer) or params is not None and name in d["_buffers"]:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(torch.nn.Buffer, torch.Tensor or None expected)")
            persistent = (value.persistent if isinstance(value, Buffer)
                          else name not in d["_non_persistent_buffers_set"])
            if isinstance(value, Buffer):
                self._forget(name, keep=self._buffers)
            self.register_buffer(name, value, persistent)
        else:
            super().__setattr__(name, value)

    def _forget(self, name, keep):
        """Drop ``name`` from every place an attribute can live but ``keep``, the table it is
        filed in again: a name assigned anew keeps its place there, as in PyTorch (the order of
        parameters, buffers and submodules is what forward, state_dict and optimizers see)."""
        self.__dict__.pop(name, None)
        for table in (self._parameters, self._buffers, self._modules):
            if table is not keep:
                table.pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __getattr__(self, name):
        d = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            if table in d and name in d[table]:
                return d[table][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        _trace_context.structure_changed()
        for table in (self._parameters, self._buffers, self._modules):
            if name in table:
                del table[name]
                self._non_persistent_buffers_set.discard(name)
                return
        super().__delattr__(name)

    def __dir__(self):
        keys = itertools.chain(super().__dir__(), self._parameters, self._modules, self._buffers)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    # --- lookup ---------------------------------------------------------------------------------

    def get_submodule(self, target):
        """Mirrors ``Module.get_submodule``: the sub-module at dotted path ``target``."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def _owner_and_name(self, target):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        return mod, name

    def get_parameter(self, target):
        """Mirrors ``Module.get_parameter``: the Parameter at dotted path ``target``."""
        mod, name = self._owner_and_name(target)
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        """Mirrors ``Module.get_buffer``: the buffer at dotted path ``target``."""
        mod, name = self._owner_and_name(target)
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return getattr(mod, name)

    # --- iteration ------------------------------------------------------------------------------

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """Mirrors ``Module.named_modules``: this module and every descendant, depth first."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            yield from module.named_modules(memo, prefix + ("." if prefix else "") + name,
                                            remove_duplicate)

    def modules(self):
        """Mirrors ``Module.modules``."""
        for _, module in self.named_modules():
            yield module

    def named_children(self):
        """Mirrors ``Module.named_children``: the direct sub-modules (each once)."""
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def children(self):
        """Mirrors ``Module.children``."""
        for _, module in self.named_children():
            yield module

    def _named_members(self, table, prefix, recurse, remove_duplicate):
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        memo = set()
        for module_prefix, module in modules:
            for name, value in getattr(module, table).items():
                if value is None or remove_duplicate and id(value) in memo:
                    continue
                if remove_duplicate:
                    memo.add(id(value))
                yield module_prefix + ("." if module_prefix else "") + name, value

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """Mirrors ``Module.named_parameters``: (dotted name, Parameter) in PyTorch's order; a
        tied parameter is listed once unless ``remove_duplicate=False``."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        """Mirrors ``Module.parameters``."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """Mirrors ``Module.named_buffers``."""
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        """Mirrors ``Module.buffers``."""
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    # --- modes and conversions ------------------------------------------------------------------

    def train(self, mode=True):
        """Mirrors ``Module.train``: set training mode here and in every descendant."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for module in self.modules():
            if module.training is not mode:
                _trace_context.structure_changed()
                object.__setattr__(module, "training", mode)
        return self

    def eval(self):
        """Mirrors ``Module.eval``: ``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Mirrors ``Module.requires_grad_``: switch gradient recording for every parameter."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Mirrors ``Module.zero_grad``: drop (or zero) every parameter's ``.grad``."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                g = p.grad
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                g.zero_()

    def apply(self, fn):
        """Mirrors ``Module.apply``: call ``fn`` on every sub-module (children first), then on
        this module."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def _apply(self, fn, recurse=True):
        """Convert every parameter, its gradient and every buffer with ``fn`` (Tensor -> Tensor).
        Parameters stay the same objects (their data is rebound), as in PyTorch."""
        _trace_context.structure_changed()
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with no_grad():
                new = fn(param)
            if new is not param:
                param.data = new
            if param.grad is not None:
                with no_grad():
                    g = fn(param.grad)
                if g is not param.grad:
                    param.grad.data = g
        for name, buf in self._buffers.items():
            if buf is not None:
                self._buffers[name] = fn(buf)
        return self

    def to(self, *args, **kwargs):
        """Mirrors ``Module.to(device)``, ``.to(dtype)``, ``.to(device, dtype)``,
        ``.to(tensor)``: floating-point (and complex) parameters and buffers take ``dtype``."""
        device, dtype = _parse_to(args, kwargs)
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but "
                            f"got desired dtype={dtype}")

        def convert(t):
            if dtype is not None and (t.is_floating_point() or t.is_complex()):
                t = t.to(dtype)
            if device is None:
                return t
            try:
                return t.to(device)
            except NotImplementedError as e:
                if str(e) != NO_DATA:
                    raise
                raise NotImplementedError(f"{e} Please use torch.nn.Module.to_empty() instead of "
                                          "torch.nn.Module.to() when moving module from meta to "
                                          "a different device.") from None
        return self._apply(convert)

    def to_empty(self, *, device, recurse=True):
        """Mirrors ``Module.to_empty``: every parameter and buffer replaced by an uninitialised
        tensor of its shape and dtype on ``device`` (how a model built on the meta device gets
        storage; ``reset_parameters()`` or ``load_state_dict(..., assign=True)`` fill it)."""
        return self._apply(lambda t: _creation.empty_like(t, device=device), recurse=recurse)

    def _cast_floats(self, dtype):
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self):
        """Mirrors ``Module.float``: floating-point parameters and buffers to float32."""
        return self._cast_floats(D.float32)

    def double(self):
        """Mirrors ``Module.double``."""
        return self._cast_floats(D.float64)

    def half(self):
        """Mirrors ``Module.half``."""
        return self._cast_floats(D.float16)

    def bfloat16(self):
        """Mirrors ``Module.bfloat16``."""
        return self._cast_floats(D.bfloat16)

    def type(self, dst_type):
        """Mirrors ``Module.type``: every parameter and buffer cast to ``dst_type``."""
        return self._apply(lambda t: t.type(dst_type))

    def cpu(self):
        """Mirrors ``Module.cpu``."""
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        """Mirrors ``Module.cuda``: move to the accelerator (XLA's GPU where present)."""
        return self._apply(lambda t: t.cuda(device))

    # --- state_dict -----------------------------------------------------------------------------

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        """Put this module's own parameters and persistent buffers into ``destination``."""
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + "_extra_state"] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """Mirrors ``Module.state_dict``: an ordered dict from dotted names to (detached)
        parameters and persistent buffers, in PyTorch's key order."""
        if args:   # the deprecated positional form (destination, prefix, keep_vars)
            warnings.warn("Positional args are being deprecated, use kwargs instead. Refer to "
                          "https://pytorch.org/docs/main/generated/torch.nn.Module.html"
                          "#torch.nn.Module.state_dict for details.", FutureWarning,
                          stacklevel=2)
            destination, prefix, keep_vars = (list(args) + [destination, prefix, keep_vars][
                len(args):])[:3]
        if destination is None:
            destination = collections.OrderedDict()
            destination._metadata = collections.OrderedDict()
        metadata = getattr(destination, "_metadata", None)
        if metadata is not None:
            metadata[prefix[:-1]] = {"version": self._version}
        for hook in self._hooks["state_dict_pre"].values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        for hook in self._hooks["state_dict"].values():
            result = hook(self, destination, prefix, metadata and metadata.get(prefix[:-1]))
            if result is not None:
                destination = result
        return destination

    def get_extra_state(self):
        """Mirrors ``Module.get_extra_state``: override to save extra (picklable) state."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be "
                           "called. Please file an issue.")

    def set_extra_state(self, state):
        """Mirrors ``Module.set_extra_state``: override to restore what get_extra_state saved."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be "
                           "called. Please file an issue.")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        """Copy this module's own entries out of ``state_dict`` (PyTorch's override point)."""
        for hook in self._hooks["load_state_dict_pre"].values():
            hook(self, state_dict, prefix, local_metadata, strict, missing_keys,
                 unexpected_keys, error_msgs)
        local = {name: t for name, t in itertools.chain(
            self._parameters.items(), ((n, b) for n, b in self._buffers.items()
                                       if n not in self._non_persistent_buffers_set))
            if t is not None}
        assign = (local_metadata or {}).get("assign_to_params_buffers", False)
        for name, param in local.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected '
                                  "torch.Tensor or Tensor-like object from checkpoint but "
                                  f"received {type(value)}")
                continue
            if not is_lazy(param) and param.ndim == 0 and value.ndim == 1 and \
                    tuple(value.shape) == (1,):
                value = value[0]   # PyTorch's legacy 1-element form of a 0-dim entry
            if not is_lazy(param) and value.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{value.shape} from checkpoint, the shape in current model "
                                  f"is {param.shape}.")
                continue
            if not assign and param.is_meta and not value.is_meta:
                warnings.warn(f"for {key}: copying from a non-meta parameter in the checkpoint to "
                              "a meta parameter in the current model, which is a no-op. (Did you "
                              "mean to pass `assign=True` to assign items in the state dictionary "
                              "to their corresponding key in the module instead of copying them "
                              "in place?)", UserWarning, stacklevel=3)
            try:
                with no_grad():
                    if assign:
                        self._assign(name, param, value)
                    elif is_lazy(param):
                        param.materialize(tuple(value.shape))
                        param.copy_(value)
                    else:
                        param.copy_(value)
            except Exception as ex:  # noqa: BLE001 - reported as PyTorch does
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions '
                                  f"in the model are {param.shape} and whose dimensions in the "
                                  f"checkpoint are {value.shape}, an exception occurred : "
                                  f"{ex.args}.")
        extra_key = prefix + "_extra_state"
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    head = key[len(prefix):].split(".", 1)[0]
                    if head not in self._modules and head not in local:
                        unexpected_keys.append(key)

    def _assign(self, name, param, value):
        if isinstance(param, Parameter):
            if not isinstance(value, Parameter):
                value = Parameter(value, requires_grad=param.requires_grad)
            else:
                value.requires_grad_(param.requires_grad)
        setattr(self, name, value)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Mirrors ``Module.load_state_dict``: copy parameters and buffers from ``state_dict``
        (values are copied into the existing tensors; ``assign=True`` rebinds them instead).
        Returns the ``(missing_keys, unexpected_keys)`` named tuple; with ``strict`` any
        mismatch raises a RuntimeError listing them."""
        if not isinstance(state_dict, collections.abc.Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = collections.OrderedDict(state_dict)

        def load(module, local_state, prefix=""):
            local_metadata = dict(metadata.get(prefix[:-1], {})) if metadata else {}
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local_state, prefix, local_metadata, True, missing,
                                         unexpected, errors)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local_state.items()
                                 if k.startswith(child_prefix)}, child_prefix)
            incompatible = _IncompatibleKeys(missing, unexpected)
            for hook in module._hooks["load_state_dict_post"].values():
                if hook(module, incompatible) is not None:
                    raise RuntimeError("Hooks registered with "
                                       "``register_load_state_dict_post_hook`` are not expected "
                                       "to return new values, if incompatible_keys need to be "
                                       "modified, it should be done inplace.")

        load(self, state_dict)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                self._get_name(), "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    # --- hooks ----------------------------------------------------------------------------------

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """Mirrors ``Module.register_forward_pre_hook``: ``hook(module, args)`` (or
        ``hook(module, args, kwargs)`` with ``with_kwargs``) runs before ``forward`` and may
        return replacement arguments."""
        handle = add_hook(self._hooks["forward_pre"], hook, prepend)
        if with_kwargs:
            self._with_kwargs.add(handle.id)
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        """Mirrors ``Module.register_forward_hook``: ``hook(module, args, output)`` (or
        ``hook(module, args, kwargs, output)``) runs after ``forward`` and may return a
        replacement output; ``always_call`` runs it even when ``forward`` raised."""
        handle = add_hook(self._hooks["forward"], hook, prepend)
        if with_kwargs:
            self._with_kwargs.add(handle.id)
        if always_call:
            self._always_called.add(handle.id)
        return handle

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """Mirrors ``Module.register_full_backward_pre_hook``: ``hook(module, grad_output)`` runs
        when the gradients of the module's outputs are known and may replace them."""
        return add_hook(self._hooks["backward_pre"], hook, prepend)

    def register_full_backward_hook(self, hook, prepend=False):
        """Mirrors ``Module.register_full_backward_hook``: ``hook(module, grad_input,
        grad_output)`` runs when the gradients of the module's inputs are computed and may
        return replacement ``grad_input``."""
        return add_hook(self._hooks["backward"], hook, prepend)

    def register_state_dict_pre_hook(self, hook):
        """Mirrors ``Module.register_state_dict_pre_hook``: ``hook(module, prefix, keep_vars)``
        runs before ``state_dict`` collects this module's entries."""
        return add_hook(self._hooks["state_dict_pre"], hook)

    def register_state_dict_post_hook(self, hook):
        """Mirrors ``Module.register_state_dict_post_hook``: ``hook(module, state_dict, prefix,
        local_metadata)`` runs after; it edits ``state_dict`` in place."""
        def checked(module, state_dict, prefix, local_metadata):
            if hook(module, state_dict, prefix, local_metadata) is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return add_hook(self._hooks["state_dict"], checked)

    def _register_state_dict_hook(self, hook):
        """The private PyTorch form: the hook may return a new state_dict."""
        return add_hook(self._hooks["state_dict"], hook)

    def register_load_state_dict_pre_hook(self, hook):
        """Mirrors ``Module.register_load_state_dict_pre_hook``: ``hook(module, state_dict,
        prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)``."""
        return add_hook(self._hooks["load_state_dict_pre"], hook)

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        if with_module:
            return self.register_load_state_dict_pre_hook(hook)
        return add_hook(self._hooks["load_state_dict_pre"], lambda module, *args: hook(*args))

    def register_load_state_dict_post_hook(self, hook):
        """Mirrors ``Module.register_load_state_dict_post_hook``: ``hook(module,
        incompatible_keys)`` runs after loading and may edit the key lists in place."""
        return add_hook(self._hooks["load_state_dict_post"], hook)

    # --- calling --------------------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        hooks = self._hooks
        if not (hooks["forward_pre"] or hooks["forward"] or hooks["backward"]
                or hooks["backward_pre"]):
            return self.forward(*args, **kwargs)
        return call_with_hooks(self, args, kwargs)

    _call_impl = __call__

    # --- repr, copying --------------------------------------------------------------------------

    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        """Mirrors ``Module.extra_repr``: override to show this module's settings in its repr."""
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): {_add_indent(repr(module), 2)}"
                       for name, module in self._modules.items()]
        lines = extra_lines + child_lines
        if not lines:
            body = ""
        elif len(extra_lines) == 1 and not child_lines:
            body = extra_lines[0]
        else:
            body = "\n  " + "\n  ".join(lines) + "\n"
        return f"{self._get_name()}({body})"

    def __setstate__(self, state):
        self.__dict__.update(state)
        d = self.__dict__
        d.setdefault("_hooks", {kind: {} for kind in _HOOK_KINDS})
        d.setdefault("_with_kwargs", set())
        d.setdefault("_always_called", set())
        d.setdefault("_non_persistent_buffers_set", set())


register_pytree(Module)   # its subclasses register in __init_subclass__


def _parse_to(args, kwargs):
    """(device, dtype) from the arguments of ``Module.to``."""
    device, dtype = kwargs.pop("device", None), kwargs.pop("dtype", None)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() received an invalid combination of arguments: {kwargs}")
    for a in args:
        if isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, D.dtype):
            dtype = a
        elif isinstance(a, (str, _device_cls, int)):
            device = _device_cls(a)
        elif isinstance(a, bool):
            continue   # non_blocking, positionally
        else:
            raise TypeError(f"to() received an invalid combination of arguments: {a!r}")
    if dtype is not None:
        dtype = D.to_dtype(dtype)
    return device, dtype

