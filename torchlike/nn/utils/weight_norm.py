"""Weight normalization: mirrors ``torch.nn.utils.weight_norm`` (the legacy, hook-based form) and
the two functions it is built on, ``torch._weight_norm`` and ``torch.norm_except_dim``.

``w = g * v / ||v||``, the norm taken over every dimension but ``dim`` (all of them for
``dim=-1``).  When ``dim`` is the first or the last dimension PyTorch computes it in one fused
kernel (one ``WeightNormInterfaceBackward0`` node): here one Op.  Otherwise it is the composite
``v * (g / norm_except_dim(v, 2, dim))`` with PyTorch's nodes.
"""
import warnings

import jax.numpy as jnp

from ..._dispatch import Op, call
from ..._ops.reduce import _vector_norm
from ..._tensor import _wrap_dim
from ..parameter import Parameter, UninitializedParameter


def _weight_norm_interface(v, g, dim):
    axes = tuple(d for d in range(v.ndim) if d != dim)
    norm = jnp.sqrt(jnp.sum(v * v, axis=axes, keepdims=True))
    return v * (g / norm)


WEIGHT_NORM_INTERFACE = Op("_weight_norm_interface", _weight_norm_interface,
                           "WeightNormInterfaceBackward0", promote="common")
# ATen's norm(p) and norm(p, dim) (what norm_except_dim calls): their own node names
NORM = Op("norm", lambda x, p: _vector_norm(x, p, None, False, None), "NormBackward0",
          saves=(0, "result"))
NORM_DIM = Op("norm", lambda x, p, dim: _vector_norm(x, p, (dim,), False, None),
              "NormBackward1", saves=(0, "result"))


def norm_except_dim(v, pow=2, dim=0):
    """Mirrors ``torch.norm_except_dim``: the ``pow``-norm of ``v`` over every dimension but
    ``dim``, shaped to broadcast against ``v`` (size 1 except along ``dim``); ``dim=-1`` gives
    the norm of all elements (a 0-dim Tensor)."""
    if dim == -1:
        return call(NORM, v, static=(("p", float(pow)),))
    dim = _wrap_dim(dim, v.ndim)
    if dim == 0:
        rows = v.contiguous().view(v.shape[0], -1)
        norm = call(NORM_DIM, rows, static=(("p", float(pow)), ("dim", 1)))
        return norm.view((v.shape[0],) + (1,) * (v.ndim - 1))
    if dim == v.ndim - 1:
        cols = v.contiguous().view(-1, v.shape[-1])
        norm = call(NORM_DIM, cols, static=(("p", float(pow)), ("dim", 0)))
        return norm.view((1,) * (v.ndim - 1) + (v.shape[-1],))
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def _weight_norm(v, g, dim=0):
    """Mirrors ``torch._weight_norm``: ``g * v / norm_except_dim(v, 2, dim)``."""
    if dim == 0 or dim == v.ndim - 1:
        return call(WEIGHT_NORM_INTERFACE, v, g, static=(("dim", dim),))
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """Mirrors ``torch.nn.utils.weight_norm.WeightNorm``: the forward pre-hook that recomputes
    ``module.<name>`` from ``<name>_g`` and ``<name>_v`` before each call."""

    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module, name, dim):
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning,
                      stacklevel=3)
        for hook in module._hooks["forward_pre"].values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError("Cannot register two weight_norm hooks on the same "
                                   f"parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `WeightNorm` can't have uninitialized "
                             "parameters. Make sure to run the dummy forward before applying "
                             "weight normalization")
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2,
                                                                         fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Mirrors ``torch.nn.utils.weight_norm`` (deprecated there in favour of
    ``torchlike.nn.utils.parametrizations.weight_norm``): replace the parameter ``name`` by a
    magnitude ``<name>_g`` and a direction ``<name>_v``; a forward pre-hook recomputes
    ``module.<name> = g * v / ||v||`` before every call.  ``dim=None`` normalises over all
    elements.  Returns ``module``."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Mirrors ``torch.nn.utils.remove_weight_norm``: make ``name`` a plain Parameter again
    (holding the current normalised weight).  Returns ``module``."""
    hooks = module._hooks["forward_pre"]
    for k, hook in hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")


PUBLIC = ("_weight_norm", "norm_except_dim")
TENSOR_METHODS = {}
