"""torchlike.func: mirrors ``torch.func`` -- function transforms over modules and tensors, each
the JAX transform of the function run on Tensors holding traced arrays -- and the bridge to pure
JAX (``to_jax`` / ``from_jax``, which torch does not have).

Transforms nest (``grad(grad(f))``, ``vmap(grad(f))``, ``jacrev(jacrev(f))``) and their results
are part of the eager autograd graph of their inputs and of the tensors requiring grad that the
function reads (NOTE [ lifted transforms ] in _lift.py).
"""
from ..nn.utils.stateless import _functional_call
from ._bridge import from_jax as from_jax, to_jax as to_jax
from ._transforms import (
    grad as grad, grad_and_value as grad_and_value, hessian as hessian, jacfwd as jacfwd,
    jacrev as jacrev, jvp as jvp, linearize as linearize, vjp as vjp)
from ._vmap import vmap as vmap

__all__ = ["functional_call", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd",
           "hessian", "vmap", "linearize", "stack_module_state", "to_jax", "from_jax"]


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """Mirrors ``torch.func.functional_call``: call ``module(*args, **kwargs)`` with the
    tensors of ``parameter_and_buffer_dicts`` (dotted name -> Tensor, or a sequence of such
    dicts) in place of its parameters and buffers, which are restored afterwards.  Works on
    traced tensors, so ``jax.grad`` can differentiate a loss written with it.

    Example::

        >>> params = {k: v * 0 for k, v in model.named_parameters()}
        >>> out = torchlike.func.functional_call(model, params, (x,))
    """
    return _functional_call(module, parameter_and_buffer_dicts, args, kwargs,
                            tie_weights=tie_weights, strict=strict)


def _stacked_leaf(tensors, name):
    from .._ops.shape import stack
    grads = {t.requires_grad for t in tensors}
    if len(grads) > 1:
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    result = stack(tensors)
    if grads == {True}:
        result = result.detach().requires_grad_()
    return result


def stack_module_state(models):
    """Mirrors ``torch.func.stack_module_state``: the parameters and buffers of several models
    of one class, stacked along a new leading dimension (for ``vmap`` over an ensemble with
    ``functional_call``).

    Returns:
        ``(params, buffers)``: dicts name -> stacked Tensor; stacked parameters are new leaves
        that require grad when the models' parameters do.

    Example::

        >>> params, buffers = torchlike.func.stack_module_state(models)
        >>> base = copy.deepcopy(models[0])
        >>> f = lambda p, b, x: torchlike.func.functional_call(base, (p, b), (x,))
        >>> out = torchlike.func.vmap(f, in_dims=(0, 0, None))(params, buffers, x)
    """
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(m.named_parameters()) for m in models]
    params = {k: _stacked_leaf([p[k] for p in all_params], k) for k in all_params[0]}
    all_buffers = [dict(m.named_buffers()) for m in models]
    buffers = {k: _stacked_leaf([b[k] for b in all_buffers], k) for k in all_buffers[0]}
    return params, buffers
