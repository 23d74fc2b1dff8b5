"""torchlike.func: mirrors ``torch.func`` -- function transforms over modules and tensors."""
from .nn.utils.stateless import _functional_call


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
