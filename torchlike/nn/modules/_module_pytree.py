"""A Module as a pytree: it flattens to its parameters' and buffers' arrays (each tensor once, in
``named_parameters`` / ``named_buffers`` order) and unflattens to a copy holding new arrays, so
JAX transforms can carry modules.
"""
import itertools

import jax

from ..._tensor import Tensor
from ..parameter import Parameter


def _state_tensors(module):
    """(dotted name, tensor) of every parameter and buffer, each tensor once."""
    return list(itertools.chain(module.named_parameters(), module.named_buffers()))


def _flatten(module):
    tensors = _state_tensors(module)
    return [t._value() for _, t in tensors], (module, tuple(n for n, _ in tensors))


def _flatten_with_keys(module):
    leaves, aux = _flatten(module)
    return [(jax.tree_util.GetAttrKey(name), leaf) for name, leaf in zip(aux[1], leaves)], aux


def _unflatten(aux, leaves):
    """A copy of the module (sub-modules copied, other attributes shared) whose parameters and
    buffers hold ``leaves`` (arrays or tracers)."""
    module, names = aux
    clone = _copy_tree(module)
    new = {}   # id of an original tensor -> its replacement (tied weights stay tied)
    originals = dict(_state_tensors(module))
    for name, leaf in zip(names, leaves):
        old = originals[name]
        t = Tensor._wrap(leaf)
        if isinstance(old, Parameter):
            t.__class__ = type(old)
            if old.requires_grad:
                t._set_requires_grad(True)
        new[id(old)] = t
    for (_, src), (_, dst) in zip(module.named_modules(remove_duplicate=False),
                                  clone.named_modules(remove_duplicate=False)):
        for table in ("_parameters", "_buffers"):
            dst_table = getattr(dst, table)
            for name, t in getattr(src, table).items():
                if t is not None:
                    dst_table[name] = new.get(id(t), t)
    return clone


def _copy_tree(module, memo=None):
    memo = {} if memo is None else memo
    if id(module) in memo:
        return memo[id(module)]
    clone = object.__new__(type(module))   # not copy.copy: parametrized modules forbid it
    clone.__dict__.update(module.__dict__)
    memo[id(module)] = clone
    object.__setattr__(clone, "_parameters", dict(module._parameters))
    object.__setattr__(clone, "_buffers", dict(module._buffers))
    object.__setattr__(clone, "_modules", {name: None if m is None else _copy_tree(m, memo)
                                           for name, m in module._modules.items()})
    return clone


def register_pytree(cls):
    """Register the Module class ``cls`` with JAX's pytrees (Module does so for every subclass)."""
    jax.tree_util.register_pytree_with_keys(cls, _flatten_with_keys, _unflatten, _flatten)
