"""Mirrors ``torch.optim.ASGD``."""
import jax.numpy as jnp

from .. import _creation
from .adam import count, scalar_state
from .optimizer import Optimizer
from .sgd import check_lr

__all__ = ["ASGD"]


class ASGD(Optimizer):
    r"""Mirrors ``torch.optim.ASGD``: averaged stochastic gradient descent (Polyak & Juditsky,
    1992, "Acceleration of Stochastic Approximation by Averaging").

    .. math::
        g &\leftarrow \nabla_p f \;(\text{negated if maximize}) + \lambda_w p \\
        p &\leftarrow p (1 - \lambda \eta_t) - \eta_t g \\
        a &\leftarrow a + \mu_t (p - a) \quad (a \leftarrow p \text{ while } \mu_t = 1) \\
        \eta_{t+1} &= \frac{\gamma}{(1 + \lambda \gamma t)^\alpha}, \qquad
        \mu_{t+1} = \frac{1}{\max(1, t - t_0)}

    The average :math:`a` is ``state[p]['ax']``; ``eta`` and ``mu`` are 0-dim Tensors.

    Args:
        params: parameters or parameter groups.
        lr: learning rate :math:`\gamma` (default 1e-2).
        lambd: decay term :math:`\lambda` (default 1e-4).
        alpha: power :math:`\alpha` of the learning-rate schedule (default 0.75).
        t0: the step :math:`t_0` at which averaging starts (default 1e6).
        weight_decay: :math:`\lambda_w` (default 0).
        maximize: ascend instead of descend.
        foreach, differentiable, capturable: accepted for compatibility and shown in the
            groups; the update is always one fused XLA program.

    Example::

        >>> opt = torchlike.optim.ASGD(model.parameters(), lr=0.01, t0=100)
    """

    _static = ("maximize",)
    _switches = ("weight_decay",)

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        check_lr(lr)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        return {"step": scalar_state(0.0, p), "eta": scalar_state(group["lr"], p),
                "mu": scalar_state(1.0, p), "ax": _creation.zeros_like(p)}

    @staticmethod
    def _rule(p, g, state, h, flags):
        lr, lambd = h["lr"], h["lambd"]
        step = state["step"] + 1
        if flags["weight_decay"]:
            g = g + h["weight_decay"] * p
        eta, mu = count(state["eta"]), state["mu"]
        p = p * (1 - lambd * eta).astype(p.dtype)
        p = p + (-eta).astype(p.dtype) * g
        ax = jnp.where(mu != 1, state["ax"] + (p - state["ax"]) * mu.astype(p.dtype), p)
        t = count(step)
        new_eta = lr / (1 + lambd * lr * t) ** h["alpha"]
        new_mu = 1 / jnp.maximum(1.0, t - h["t0"])
        return p, {"step": step, "eta": new_eta, "mu": new_mu, "ax": ax}
