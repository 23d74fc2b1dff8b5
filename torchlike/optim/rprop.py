"""Mirrors ``torch.optim.Rprop``."""
import jax.numpy as jnp

from .. import _creation
from .adam import scalar_state
from .optimizer import Optimizer
from .sgd import check_lr

__all__ = ["Rprop"]


class Rprop(Optimizer):
    r"""Mirrors ``torch.optim.Rprop``: resilient backpropagation (Riedmiller & Braun, 1993, "A
    Direct Adaptive Method for Faster Backpropagation Learning: The RPROP Algorithm").  Only the
    sign of the gradient is used; each element has its own step size.

    .. math::
        s &\leftarrow \operatorname{clamp}(s \cdot \eta, s_{\min}, s_{\max}), \quad
        \eta = \begin{cases} \eta_+ & g\, g_{prev} > 0 \\ \eta_- & g\, g_{prev} < 0 \\
            1 & \text{otherwise} \end{cases} \\
        g &\leftarrow 0 \text{ where } g\, g_{prev} < 0, \qquad
        p \leftarrow p - s \operatorname{sign}(g), \qquad g_{prev} \leftarrow g

    (:math:`g` negated first if maximize).  State per parameter: ``step``, ``prev``
    (:math:`g_{prev}`) and ``step_size`` (:math:`s`, starting at ``lr``).

    Args:
        params: parameters or parameter groups.
        lr: the initial step size (default 1e-2).
        etas: :math:`(\eta_-, \eta_+)` (default (0.5, 1.2)).
        step_sizes: :math:`(s_{\min}, s_{\max})` (default (1e-6, 50)).
        maximize: ascend instead of descend.
        capturable, foreach, differentiable: accepted for compatibility and shown in the
            groups; the update is always one fused XLA program.

    Example::

        >>> opt = torchlike.optim.Rprop(model.parameters())
    """

    _static = ("maximize",)

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        lr = group["lr"]
        lr = lr.item() if hasattr(lr, "item") else lr
        return {"step": scalar_state(0.0, p), "prev": _creation.zeros_like(p),
                "step_size": _creation.full_like(p, complex(lr, lr) if p.is_complex() else lr)}

    @staticmethod
    def _rule(p, g, state, h, flags):
        eta_minus, eta_plus = h["etas"]
        # PyTorch overwrites the sign in place in this order; NaN products keep their NaN
        factor = jnp.sign(g * state["prev"])
        factor = jnp.where(factor > 0, jnp.asarray(eta_plus, g.dtype), factor)
        factor = jnp.where(factor < 0, jnp.asarray(eta_minus, g.dtype), factor)
        factor = jnp.where(factor == 0, jnp.ones((), g.dtype), factor)
        step_size = jnp.clip(state["step_size"] * factor, *h["step_sizes"])
        g = jnp.where(factor == jnp.asarray(eta_minus, g.dtype), jnp.zeros((), g.dtype), g)
        return p + (-1 * jnp.sign(g)) * step_size, {"step": state["step"] + 1, "prev": g,
                                                    "step_size": step_size}
