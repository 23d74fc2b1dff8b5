"""Spectral normalization, the legacy hook-based form: mirrors ``torch.nn.utils.spectral_norm``.

The parameter ``<name>`` is replaced by ``<name>_orig`` (a Parameter) and the power-iteration
buffers ``<name>_u`` / ``<name>_v``; a forward pre-hook sets ``module.<name>`` (a plain attribute)
to ``<name>_orig / sigma`` before every call, refining u and v in training mode.  The newer
``torchlike.nn.utils.parametrizations.spectral_norm`` is the recommended form.
"""
from ..._ops.decomp import pinverse
from ..._ops.linalg import dot, multi_dot, mv
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..parameter import Parameter, UninitializedParameter


class SpectralNorm:
    """Mirrors ``torch.nn.utils.spectral_norm.SpectralNorm``: the forward pre-hook."""

    _version = 1

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *[d for d in range(weight.ndim) if d != self.dim])
        return weight.reshape(weight.shape[0], -1)

    def compute_weight(self, module, do_power_iteration):
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v = F.normalize(mv(weight_mat.t(), u), dim=0, eps=self.eps, out=v)
                    u = F.normalize(mv(weight_mat, v), dim=0, eps=self.eps, out=u)
                u = u.clone()
                v = v.clone()
        sigma = dot(u, mv(weight_mat, v))
        return weight / sigma

    def remove(self, module):
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        for suffix in ("", "_u", "_v", "_orig"):
            delattr(module, self.name + suffix)
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, module.training))

    def _solve_v_and_rescale(self, weight_mat, u, target_sigma):
        # the v that makes u^T W v equal target_sigma (old checkpoints stored no v)
        v = multi_dot([pinverse(weight_mat.t().mm(weight_mat)), weight_mat.t(),
                       u.unsqueeze(1)]).squeeze(1)
        return v.mul_(target_sigma / dot(u, mv(weight_mat, v)))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        for hook in module._hooks["forward_pre"].values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError("Cannot register two spectral_norm hooks on the same "
                                   f"parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `SpectralNorm` can't have uninitialized "
                             "parameters. Make sure to run the dummy forward before applying "
                             "spectral normalization")
        with no_grad():
            weight_mat = fn.reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        module._register_state_dict_hook(SpectralNormStateDictHook(fn))
        module.register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(fn))
        return fn


class SpectralNormLoadStateDictPreHook:
    """Mirrors PyTorch's hook that upgrades checkpoints saved before spectral_norm stored v."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata, strict, missing_keys,
                 unexpected_keys, error_msgs):
        fn = self.fn
        version = (local_metadata or {}).get("spectral_norm", {}).get(fn.name + ".version")
        if version is not None and version >= 1:
            return
        weight_key = prefix + fn.name
        if version is None and weight_key not in state_dict and all(
                weight_key + s in state_dict for s in ("_orig", "_u", "_v")):
            return
        has_missing_keys = False
        for suffix in ("_orig", "", "_u"):
            if weight_key + suffix not in state_dict:
                has_missing_keys = True
                if strict:
                    missing_keys.append(weight_key + suffix)
        if has_missing_keys:
            return
        with no_grad():
            weight_orig = state_dict[weight_key + "_orig"]
            weight = state_dict.pop(weight_key)
            sigma = (weight_orig / weight).mean()
            weight_mat = fn.reshape_weight_to_matrix(weight_orig)
            u = state_dict[weight_key + "_u"]
            state_dict[weight_key + "_v"] = fn._solve_v_and_rescale(weight_mat, u, sigma)


class SpectralNormStateDictHook:
    """Mirrors PyTorch's hook recording the spectral_norm version in the state_dict metadata."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata):
        if local_metadata is None:
            return
        versions = local_metadata.setdefault("spectral_norm", {})
        key = self.fn.name + ".version"
        if key in versions:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        versions[key] = self.fn._version


def _conv_transpose_classes():
    from ... import nn
    return tuple(getattr(nn, n) for n in ("ConvTranspose1d", "ConvTranspose2d",
                                          "ConvTranspose3d") if hasattr(nn, n))


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Mirrors ``torch.nn.utils.spectral_norm``: divide ``module.<name>`` by its spectral norm
    (largest singular value of the weight viewed as a matrix with ``dim`` first), estimated by
    ``n_power_iterations`` power-iteration steps per forward call in training mode.  The
    parameter becomes ``<name>_orig``, with buffers ``<name>_u`` and ``<name>_v``.  ``dim``
    defaults to 0 (1 for ConvTranspose modules).  Returns ``module``."""
    if dim is None:
        dim = 1 if isinstance(module, _conv_transpose_classes()) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    """Mirrors ``torch.nn.utils.remove_spectral_norm``: make ``name`` a plain Parameter again
    (the current normalised weight) and drop the hooks.  Returns ``module``."""
    hooks = module._hooks
    for k, hook in hooks["forward_pre"].items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del hooks["forward_pre"][k]
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    for kind, cls in (("state_dict", SpectralNormStateDictHook),
                      ("load_state_dict_pre", SpectralNormLoadStateDictPreHook)):
        for k, hook in hooks[kind].items():
            if isinstance(hook, cls) and hook.fn.name == name:
                del hooks[kind][k]
                break
    return module
