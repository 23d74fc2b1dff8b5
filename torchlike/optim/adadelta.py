"""Mirrors ``torch.optim.Adadelta``."""
import jax.numpy as jnp

from .. import _creation
from .adam import addcmul_sq, scalar_state
from .optimizer import Optimizer
from .sgd import check_lr

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    r"""Mirrors ``torch.optim.Adadelta`` (Zeiler, 2012, "ADADELTA: An Adaptive Learning Rate
    Method").

    .. math::
        g &\leftarrow \nabla_p f \;(\text{negated if maximize}) + \lambda p \\
        v &\leftarrow \rho v + (1 - \rho) g^2 \\
        \Delta &= \frac{\sqrt{u + \epsilon}}{\sqrt{v + \epsilon}}\, g, \qquad
        u \leftarrow \rho u + (1 - \rho) \Delta^2 \\
        p &\leftarrow p - \gamma \Delta

    State per parameter: ``step``, ``square_avg`` (:math:`v`) and ``acc_delta`` (:math:`u`).

    Args:
        params: parameters or parameter groups.
        lr: scale :math:`\gamma` of the update (default 1.0).
        rho: :math:`\rho` (default 0.9).
        eps: :math:`\epsilon` (default 1e-6).
        weight_decay: :math:`\lambda` (default 0).
        maximize: ascend instead of descend.
        foreach, capturable, differentiable: accepted for compatibility and shown in the
            groups; the update is always one fused XLA program.

    Example::

        >>> opt = torchlike.optim.Adadelta(model.parameters())
    """

    _static = ("maximize",)
    _switches = ("weight_decay",)

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "capturable": capturable, "foreach": foreach,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        return {"step": scalar_state(0.0, p), "square_avg": _creation.zeros_like(p),
                "acc_delta": _creation.zeros_like(p)}

    @staticmethod
    def _rule(p, g, state, h, flags):
        rho, eps = h["rho"], h["eps"]
        if flags["weight_decay"]:
            g = g + h["weight_decay"] * p
        square_avg = addcmul_sq(state["square_avg"], g, rho)
        delta = jnp.sqrt(state["acc_delta"] + eps) / jnp.sqrt(square_avg + eps) * g
        acc_delta = addcmul_sq(state["acc_delta"], delta, rho)
        return p + (-h["lr"]) * delta, {"step": state["step"] + 1, "square_avg": square_avg,
                                         "acc_delta": acc_delta}
