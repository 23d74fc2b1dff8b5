"""Mirrors ``torch.optim.Adagrad``."""
import jax.numpy as jnp

from .. import _creation
from .adam import count, scalar_state
from .optimizer import Optimizer, check_fused
from .sgd import check_lr

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    r"""Mirrors ``torch.optim.Adagrad`` (Duchi et al., 2011, "Adaptive Subgradient Methods for
    Online Learning and Stochastic Optimization").

    .. math::
        g &\leftarrow \nabla_p f \;(\text{negated if maximize}) + \lambda p \\
        s &\leftarrow s + g^2 \\
        p &\leftarrow p - \frac{\gamma}{1 + (t - 1)\eta} \frac{g}{\sqrt s + \epsilon}

    with learning-rate decay :math:`\eta`.  State per parameter: ``step`` and ``sum``
    (:math:`s`, starting at ``initial_accumulator_value``).  As in PyTorch the state of the
    constructor's parameters exists from construction on (so ``state_dict()`` shows it before
    the first step), always filled with the constructor's ``initial_accumulator_value``.

    Args:
        params: parameters or parameter groups.
        lr: learning rate :math:`\gamma` (default 1e-2).
        lr_decay: :math:`\eta` (default 0).
        weight_decay: :math:`\lambda` (default 0).
        initial_accumulator_value: the starting value of :math:`s` (default 0).
        eps: :math:`\epsilon` (default 1e-10).
        maximize: ascend instead of descend.
        foreach, differentiable, fused: accepted for compatibility and shown in the groups;
            the update is always one fused XLA program.

    Example::

        >>> opt = torchlike.optim.Adagrad(model.parameters(), lr=0.1)
    """

    _static = ("maximize",)
    _switches = ("weight_decay",)

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        check_lr(lr)
        for name, value in (("lr_decay", lr_decay), ("weight_decay", weight_decay),
                            ("initial_accumulator_value", initial_accumulator_value),
                            ("epsilon", eps)):
            if not 0.0 <= value:
                raise ValueError(f"Invalid {name} value: {value}")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "fused": fused}
        super().__init__(params, defaults)
        check_fused(self.defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p].update(self._init_state(p, group))

    def _init_state(self, p, group):
        # PyTorch fills the accumulator from the constructor's value, whatever the group says
        value = self.defaults["initial_accumulator_value"]
        if p.is_complex():
            value = complex(value, value)
        return {"step": scalar_state(0.0, p, group["fused"]),
                "sum": _creation.full_like(p, value)}

    @staticmethod
    def _rule(p, g, state, h, flags):
        step = state["step"] + 1
        if flags["weight_decay"]:
            g = g + h["weight_decay"] * p
        clr = h["lr"] / (1 + (count(step) - 1) * h["lr_decay"])
        state_sum = state["sum"] + g * g
        std = jnp.sqrt(state_sum) + h["eps"]
        return p + (-clr).astype(p.dtype) * g / std, {"step": step, "sum": state_sum}
