"""Mirrors ``torch.optim.Adamax``."""
import jax.numpy as jnp

from .. import _creation
from .adam import check_adam_args, count, lerp, scalar_state
from .optimizer import Optimizer

__all__ = ["Adamax"]


class Adamax(Optimizer):
    r"""Mirrors ``torch.optim.Adamax``: Adam with the infinity norm in place of the second
    moment (Kingma & Ba, 2014, "Adam: A Method for Stochastic Optimization", section 7).

    .. math::
        g &\leftarrow \nabla_p f \;(\text{negated if maximize}) + \lambda p \\
        m &\leftarrow \beta_1 m + (1 - \beta_1) g, \qquad
        u \leftarrow \max(\beta_2 u, |g| + \epsilon) \\
        p &\leftarrow p - \frac{\gamma}{1 - \beta_1^t} \frac{m}{u}

    State per parameter: ``step``, ``exp_avg`` (:math:`m`) and ``exp_inf`` (:math:`u`).

    Args:
        params: parameters or parameter groups.
        lr: learning rate :math:`\gamma` (default 2e-3).
        betas: :math:`(\beta_1, \beta_2)` (default (0.9, 0.999)).
        eps: :math:`\epsilon` (default 1e-8).
        weight_decay: :math:`\lambda` (default 0).
        maximize: ascend instead of descend.
        foreach, differentiable, capturable: accepted for compatibility and shown in the
            groups; the update is always one fused XLA program.

    Example::

        >>> opt = torchlike.optim.Adamax(model.parameters())
    """

    _static = ("maximize",)
    _switches = ("weight_decay",)

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        check_adam_args(lr, betas, eps, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        return {"step": scalar_state(0.0, p), "exp_avg": _creation.zeros_like(p),
                "exp_inf": _creation.zeros_like(p)}

    @staticmethod
    def _rule(p, g, state, h, flags):
        beta1, beta2 = h["betas"]
        step = state["step"] + 1
        if flags["weight_decay"]:
            g = g + h["weight_decay"] * p
        exp_avg = lerp(state["exp_avg"], g, 1 - beta1)
        exp_inf = jnp.maximum(state["exp_inf"] * beta2, jnp.abs(g) + h["eps"])
        clr = h["lr"] / (1 - beta1 ** count(step))
        new_p = p + (-clr).astype(p.dtype) * exp_avg / exp_inf
        return new_p, {"step": step, "exp_avg": exp_avg, "exp_inf": exp_inf}
