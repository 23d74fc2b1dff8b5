"""Mirrors ``torch.optim.RMSprop``."""
import jax.numpy as jnp

from .. import _creation
from .adam import addcmul_sq, lerp, scalar_state
from .optimizer import Optimizer
from .sgd import check_lr

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    r"""Mirrors ``torch.optim.RMSprop`` (Hinton, Lecture 6e of "Neural Networks for Machine
    Learning"; the centered form from Graves, 2013, "Generating Sequences With Recurrent Neural
    Networks").

    .. math::
        g &\leftarrow \nabla_p f \;(\text{negated if maximize}) + \lambda p \\
        v &\leftarrow \alpha v + (1 - \alpha) g^2, \qquad
        \bar g \leftarrow \alpha \bar g + (1 - \alpha) g \text{ (centered)} \\
        d &= \sqrt{v - \bar g^2} + \epsilon \text{ (centered) or } \sqrt v + \epsilon \\
        b &\leftarrow \mu b + g / d, \; p \leftarrow p - \gamma b \text{ (momentum)}
            \quad\text{or}\quad p \leftarrow p - \gamma g / d

    State per parameter: ``step``, ``square_avg`` (:math:`v`), ``momentum_buffer``
    (:math:`b`, when momentum > 0) and ``grad_avg`` (:math:`\bar g`, when centered).

    Args:
        params: parameters or parameter groups.
        lr: learning rate :math:`\gamma` (default 1e-2).
        alpha: smoothing constant :math:`\alpha` (default 0.99).
        eps: :math:`\epsilon` (default 1e-8).
        weight_decay: :math:`\lambda` (default 0).
        momentum: :math:`\mu` (default 0).
        centered: normalise by the estimated variance instead of the second moment.
        maximize: ascend instead of descend.
        capturable, foreach, differentiable: accepted for compatibility and shown in the
            groups; the update is always one fused XLA program.

    Example::

        >>> opt = torchlike.optim.RMSprop(model.parameters(), lr=1e-2, momentum=0.9)
    """

    _static = ("centered", "maximize")
    _switches = ("momentum", "weight_decay")

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        check_lr(lr)
        for name, value in (("epsilon", eps), ("momentum", momentum),
                            ("weight_decay", weight_decay), ("alpha", alpha)):
            if not 0.0 <= value:
                raise ValueError(f"Invalid {name} value: {value}")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay,
                    "capturable": capturable, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        state = {"step": scalar_state(0.0, p), "square_avg": _creation.zeros_like(p)}
        if group["momentum"] > 0:
            state["momentum_buffer"] = _creation.zeros_like(p)
        if group["centered"]:
            state["grad_avg"] = _creation.zeros_like(p)
        return state

    @staticmethod
    def _rule(p, g, state, h, flags):
        alpha = h["alpha"]
        new_state = {"step": state["step"] + 1}
        if flags["weight_decay"]:
            g = g + h["weight_decay"] * p
        square_avg = new_state["square_avg"] = addcmul_sq(state["square_avg"], g, alpha)
        if flags["centered"]:
            grad_avg = new_state["grad_avg"] = lerp(state["grad_avg"], g, 1 - alpha)
            avg = jnp.sqrt(square_avg - grad_avg * grad_avg)
        else:
            avg = jnp.sqrt(square_avg)
        avg = avg + h["eps"]
        if flags["momentum"]:
            buf = new_state["momentum_buffer"] = state["momentum_buffer"] * h["momentum"] \
                + g / avg
            return p - h["lr"] * buf, new_state
        return p + (-h["lr"]) * g / avg, new_state
