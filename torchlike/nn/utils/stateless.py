"""Calling a module with other tensors in place of its parameters and buffers: mirrors
``torch.nn.utils.stateless`` (and ``torch.func.functional_call``).

For the duration of the call the given tensors are put straight into the modules' tables
(``_parameters`` / ``_buffers``, or set as attributes, e.g. through a parametrization's
property); the originals are put back in a ``finally``.  Nothing is copied, so the tensors may
hold jax tracers: a loss written with ``functional_call`` can be differentiated by ``jax.grad``.

Example::

    >>> params = {k: v * 2 for k, v in model.named_parameters()}
    >>> out = torchlike.nn.utils.stateless.functional_call(model, params, (x,))
"""
import collections
import contextlib
import warnings

from ..._tensor import Tensor
from ..modules.module import Module

_MISSING = object()


def _check_name(name):
    if "." in name:
        raise KeyError('tensor name can\'t contain "."')
    if name == "":
        raise KeyError('tensor name can\'t be empty string ""')


def _swap_tensor(module, name, tensor):
    """Put ``tensor`` (or _MISSING: remove) under ``name`` in ``module``; return what was
    there (or _MISSING)."""
    if tensor is not _MISSING and tensor is not None and not isinstance(tensor, Tensor):
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    _check_name(name)
    for table in (module._parameters, module._buffers):
        if name in table:
            orig = table[name]
            if tensor is _MISSING:
                del table[name]
            else:
                table[name] = tensor
            return orig
    orig = getattr(module, name) if hasattr(module, name) else _MISSING
    if orig is not _MISSING and orig is not None and not isinstance(orig, Tensor):
        raise TypeError(f"attribute `{name}`: {orig} is not an instance of torch.Tensor")
    if tensor is not _MISSING:
        setattr(module, name, tensor)
    elif hasattr(module, name):
        delattr(module, name)
    return orig


class _Accessor:
    """Dotted-name access to a module tree's tensors, with the sub-module lookups cached."""

    def __init__(self, module):
        self.module = module
        self.memo = {}

    def get_submodule(self, name):
        if not name:
            return self.module
        sub = self.memo.get(name)
        if sub is None:
            prefix, _, attr = name.rpartition(".")
            parent = self.get_submodule(prefix)
            try:
                sub = getattr(parent, attr)
            except AttributeError as ex:
                raise AttributeError(f"{parent._get_name()} has no attribute `{attr}`") from ex
            if not isinstance(sub, Module):
                raise TypeError(f"submodule `{name}`: {sub} is not an instance of "
                                "torch.nn.Module")
            self.memo[name] = sub
        return sub

    def swap(self, name, value):
        prefix, _, attr = name.rpartition(".")
        return _swap_tensor(self.get_submodule(prefix), attr, value)

    def swap_dict(self, named):
        """Swap every entry in; on an error, swap back what was done.  Returns the originals."""
        originals = {}
        try:
            for name, tensor in named.items():
                originals[name] = self.swap(name, tensor)
        except Exception:
            for name, orig in originals.items():
                self.swap(name, orig)
            raise
        return originals

    def check_keys(self, keys):
        keys = set(keys)
        valid = {name for name, _ in self.module.named_parameters(remove_duplicate=False)}
        valid |= {name for name, _ in self.module.named_buffers(remove_duplicate=False)}
        return sorted(valid - keys), sorted(keys - valid)


def _untie_named_tensors_map(module, parameters_and_buffers):
    """Extend the given names to every name tied to them (the same tensor under several
    names); a ValueError if tied names were given different values."""
    by_tensor = collections.defaultdict(set)
    for name, t in list(module.named_parameters(remove_duplicate=False)) + list(
            module.named_buffers(remove_duplicate=False)):
        by_tensor[id(t)].add(name)
    tied = {name: names for names in by_tensor.values() if len(names) > 1 for name in names}
    given = {name for name in parameters_and_buffers if name in tied}
    for name in given:
        names = tied[name]
        if len(names & given) > 1 and len({id(parameters_and_buffers[n])
                                            for n in names & given}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, "
                             "which are tied. Consider using tie_weights=False")
    untied = dict(parameters_and_buffers)
    for name in given:
        for other in tied[name]:
            untied[other] = parameters_and_buffers[name]
    return untied


@contextlib.contextmanager
def _reparametrize_module(module, parameters_and_buffers, tie_weights=False, strict=False):
    untied = (_untie_named_tensors_map(module, parameters_and_buffers) if tie_weights
              else parameters_and_buffers)
    accessor = _Accessor(module)
    if strict:
        missing, unexpected = accessor.check_keys(untied)
        errors = []
        if unexpected:
            errors.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            errors.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if errors:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(
                module._get_name(), "\n\t".join(errors)))
    originals = {}
    try:
        originals = accessor.swap_dict(untied)
        yield
    finally:
        # what the call left in the module (a buffer it reassigned) goes back to the caller
        final = accessor.swap_dict(originals)
        parameters_and_buffers.update({k: final[k] for k in parameters_and_buffers
                                       if k in final})


def _merge_dicts(parameter_and_buffer_dicts):
    """torch.func's rule: one dict, or a sequence of dicts with distinct keys."""
    if isinstance(parameter_and_buffer_dicts, dict):
        return parameter_and_buffer_dicts
    if isinstance(parameter_and_buffer_dicts, collections.abc.Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                             "dictionaries")
        counts = collections.Counter(k for d in parameter_and_buffer_dicts for k in d)
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             "functional call is ambiguous")
        return {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                     f"dicts, but got {type(parameter_and_buffer_dicts)}")


def _functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                     tie_weights=True, strict=False):
    """``functional_call`` without the deprecation warning: ``torch.func.functional_call``, and
    what nn's own modules (``nn.parallel``'s replicas) call."""
    parameters_and_buffers = _merge_dicts(parameter_and_buffer_dicts)
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights,
                               strict=strict):
        return module(*args, **kwargs)


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """Mirrors ``torch.nn.utils.stateless.functional_call`` (deprecated there in favour of
    ``torch.func.functional_call``, which it also mirrors): call ``module(*args, **kwargs)``
    with the tensors of ``parameter_and_buffer_dicts`` in place of its parameters and buffers.

    Args:
        module: the module to call.
        parameter_and_buffer_dicts: dotted name -> Tensor; or a sequence of such dicts with
            distinct keys.  Names the module lacks are set as attributes for the call.
        args: positional arguments (a non-tuple is one argument).
        kwargs: keyword arguments.
        tie_weights: a value given for one of several tied names is used for all of them
            (different values for tied names raise a ValueError).
        strict: the names must be exactly the module's parameters and buffers.

    Returns:
        Whatever ``module`` returns.  The module's own tensors are restored afterwards, even
        if the call raised.
    """
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 "
                  "and will be removed in a future version of PyTorch. Please use "
                  "`torch.func.functional_call` instead which is a drop-in replacement.",
                  FutureWarning, stacklevel=2)
    return _functional_call(module, parameter_and_buffer_dicts, args, kwargs,
                            tie_weights=tie_weights, strict=strict)
