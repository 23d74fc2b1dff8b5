"""Mirrors ``torch.distributed.checkpoint.state_dict``: a model's and its optimizers' state as
DTensors (sharded, as ``Module.state_dict()`` of a ``fully_shard`` model gives it) or as full
tensors (``StateDictOptions(full_state_dict=True)``), and loading either back.

Optimizer state dicts are keyed by parameter name (fully qualified name), as PyTorch's are here,
so a full one loads into a model sharded differently or not at all."""
import dataclasses

from ..._device import CPU
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..tensor._api import DTensor, distribute_tensor

__all__ = ["StateDictOptions", "get_model_state_dict", "get_optimizer_state_dict",
           "get_state_dict", "set_model_state_dict", "set_optimizer_state_dict",
           "set_state_dict"]


@dataclasses.dataclass
class StateDictOptions:
    """Mirrors ``torch.distributed.checkpoint.state_dict.StateDictOptions``.

    Args:
        full_state_dict: give (and take) full tensors instead of DTensors.
        cpu_offload: put the given values on the CPU.
        ignore_frozen_params: leave out parameters that do not require grad.
        keep_submodule_prefixes: with ``submodules``, keep the names' module prefixes.
        strict: loading checks the keys as ``load_state_dict(strict=...)``.
        broadcast_from_rank0: take full values from rank 0 (in one process: the values
            given, which every rank shares).
        flatten_optimizer_state_dict: optimizer state as one flat dict (``state.<name>.<key>``
            and ``param_groups.<name>.<key>``).
    """

    full_state_dict: bool = False
    cpu_offload: bool = False
    ignore_frozen_params: bool = False
    keep_submodule_prefixes: bool = True
    strict: bool = True
    broadcast_from_rank0: bool = False
    flatten_optimizer_state_dict: bool = False
    dsd_fqn_modifiers: str = "_fqn_modifiers"


def _give(value, options):
    """A value as the options ask for it."""
    if not isinstance(value, Tensor):
        return value
    if options.full_state_dict and isinstance(value, DTensor):
        value = value.full_tensor().detach()
    if options.cpu_offload and (options.full_state_dict or not isinstance(value, DTensor)):
        value = value.to(CPU)
    return value


def get_model_state_dict(model, *, submodules=None, options=None):
    """Mirrors ``torch.distributed.checkpoint.state_dict.get_model_state_dict``: ``model``'s
    state dict, DTensors for sharded parameters, or full tensors with
    ``options.full_state_dict``.

    Args:
        model: the module (sharded by ``fully_shard`` or not).
        submodules: only the state of these submodules (deprecated in PyTorch).
        options: a StateDictOptions.

    Returns:
        A dict from fully qualified names to tensors.

    Example::

        >>> full = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True))
    """
    options = options or StateDictOptions()
    state = model.state_dict()
    if options.ignore_frozen_params:
        frozen = {n for n, p in model.named_parameters() if not p.requires_grad}
        state = {k: v for k, v in state.items() if k not in frozen}
    if submodules is not None:
        prefixes = {name + "." for name, m in model.named_modules() if m in submodules}
        kept = {}
        for k, v in state.items():
            p = next((p for p in prefixes if k.startswith(p)), None)
            if p is not None:
                kept[k if options.keep_submodule_prefixes else k[len(p):]] = v
        state = kept
    return {k: _give(v, options) for k, v in state.items()}


def set_model_state_dict(model, model_state_dict, *, options=None):
    """Mirrors ``torch.distributed.checkpoint.state_dict.set_model_state_dict``: load
    DTensors or full tensors into ``model`` (each value takes its parameter's layout).

    Args:
        model: the module.
        model_state_dict: names to tensors (DTensors or full tensors).
        options: a StateDictOptions (``strict`` is used).

    Returns:
        ``_IncompatibleKeys(missing_keys, unexpected_keys)``.
    """
    options = options or StateDictOptions()
    return model.load_state_dict(model_state_dict, strict=options.strict)


def _optimizers(optimizers):
    return [optimizers] if hasattr(optimizers, "param_groups") else list(optimizers)


def _names(model):
    return {id(p): n for n, p in model.named_parameters()}


def get_optimizer_state_dict(model, optimizers, *, options=None):
    """Mirrors ``torch.distributed.checkpoint.state_dict.get_optimizer_state_dict``: the
    optimizers' state keyed by parameter name (``{"state": {name: {...}}, "param_groups":
    [{..., "params": [names]}]}``), DTensors or full tensors as ``options`` ask.

    Args:
        model: the module whose parameters the optimizers step.
        optimizers: an optimizer or several.
        options: a StateDictOptions.

    Returns:
        The state dict (flattened with ``options.flatten_optimizer_state_dict``).
    """
    options = options or StateDictOptions()
    names = _names(model)
    state, groups = {}, []
    for opt in _optimizers(optimizers):
        for group in opt.param_groups:
            groups.append({**{k: v for k, v in group.items() if k != "params"},
                           "params": [names[id(p)] for p in group["params"]]})
            for p in group["params"]:
                if opt.state.get(p):
                    state[names[id(p)]] = {k: _give(v, options)
                                           for k, v in opt.state[p].items()}
    if options.flatten_optimizer_state_dict:
        flat = {f"state.{n}.{k}": v for n, s in state.items() for k, v in s.items()}
        for g in groups:
            for n in g["params"]:
                flat.update({f"param_groups.{n}.{k}": v for k, v in g.items()
                             if k != "params"})
        return flat
    return {"state": state, "param_groups": groups}


def set_optimizer_state_dict(model, optimizers, optim_state_dict, *, options=None):
    """Mirrors ``torch.distributed.checkpoint.state_dict.set_optimizer_state_dict``: load a
    state dict keyed by parameter name (as ``get_optimizer_state_dict`` gives), each state
    tensor taking its parameter's layout.

    Args:
        model: the module whose parameters the optimizers step.
        optimizers: an optimizer or several.
        optim_state_dict: the state dict (flat or not).
        options: a StateDictOptions.
    """
    sd = optim_state_dict
    if "state" not in sd:   # the flat form
        state, settings = {}, {}
        for key, v in sd.items():
            kind, rest = key.split(".", 1)
            name, k = rest.rsplit(".", 1)
            (state if kind == "state" else settings).setdefault(name, {})[k] = v
    else:
        state = sd["state"]
        settings = {n: {k: v for k, v in g.items() if k != "params"}
                    for g in sd["param_groups"] for n in g["params"]}
    names = _names(model)
    for opt in _optimizers(optimizers):
        for group in opt.param_groups:
            for k, v in settings.get(names[id(group["params"][0])], {}).items():
                group[k] = v
            for p in group["params"]:
                saved = state.get(names[id(p)])
                if saved is not None:
                    opt.state[p] = {k: _take(v, p) for k, v in saved.items()}


def _take(value, param):
    """A saved state value as the state of ``param``: its layout for its shape, whole on its
    mesh for the rest (the step count)."""
    if not isinstance(value, Tensor):
        return value
    with no_grad():
        if isinstance(param, DTensor):
            if isinstance(value, DTensor):
                value = value.full_tensor()
            if value.shape == param.shape:
                return distribute_tensor(value.detach().to(param.dtype), param.device_mesh,
                                         param.placements)
            from ..tensor.placement_types import Replicate
            whole = distribute_tensor(value.detach(), param.device_mesh,
                                      [Replicate()] * param.device_mesh.ndim)
            return Tensor._wrap(whole._value())
        return value.detach().to(param.device).clone()


def get_state_dict(model, optimizers, *, submodules=None, options=None):
    """Mirrors ``torch.distributed.checkpoint.state_dict.get_state_dict``: the model's and
    the optimizers' state dicts."""
    return (get_model_state_dict(model, submodules=submodules, options=options),
            get_optimizer_state_dict(model, optimizers, options=options))


def set_state_dict(model, optimizers, *, model_state_dict, optim_state_dict, options=None):
    """Mirrors ``torch.distributed.checkpoint.state_dict.set_state_dict``: load both; returns
    the model's ``_IncompatibleKeys``."""
    keys = set_model_state_dict(model, model_state_dict, options=options)
    set_optimizer_state_dict(model, optimizers, optim_state_dict, options=options)
    return keys
