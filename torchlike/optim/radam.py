"""Mirrors ``torch.optim.RAdam``."""
import jax.numpy as jnp

from .. import _creation
from .adam import addcmul_sq, check_adam_args, count, decay_weights, lerp, scalar_state
from .optimizer import Optimizer

__all__ = ["RAdam"]


class RAdam(Optimizer):
    r"""Mirrors ``torch.optim.RAdam``: Adam whose adaptive step is switched on only once the
    variance of its estimate is tractable (Liu et al., 2019, "On the Variance of the Adaptive
    Learning Rate and Beyond").

    .. math::
        g &\leftarrow \nabla_p f \;(\text{negated if maximize}) + \lambda p
            \quad (\text{or } p \leftarrow p (1 - \gamma\lambda) \text{ if decoupled}) \\
        m &\leftarrow \beta_1 m + (1 - \beta_1) g, \qquad
        v \leftarrow \beta_2 v + (1 - \beta_2) g^2, \qquad
        \hat m = m / (1 - \beta_1^t) \\
        \rho_\infty &= \frac{2}{1 - \beta_2} - 1, \qquad
        \rho_t = \rho_\infty - \frac{2 t \beta_2^t}{1 - \beta_2^t} \\
        p &\leftarrow p - \gamma \hat m \, \frac{\sqrt{1 - \beta_2^t}}{\sqrt v + \epsilon}
            \sqrt{\frac{(\rho_t - 4)(\rho_t - 2)\rho_\infty}{(\rho_\infty - 4)(\rho_\infty - 2)
            \rho_t}} \quad\text{if } \rho_t > 5, \text{ else } p - \gamma \hat m

    State per parameter: ``step``, ``exp_avg`` (:math:`m`) and ``exp_avg_sq`` (:math:`v`).

    Args:
        params: parameters or parameter groups.
        lr: learning rate :math:`\gamma` (default 1e-3).
        betas: :math:`(\beta_1, \beta_2)` (default (0.9, 0.999)).
        eps: :math:`\epsilon` (default 1e-8).
        weight_decay: :math:`\lambda` (default 0).
        decoupled_weight_decay: decay the weights directly, as AdamW does (RAdamW).
        maximize: ascend instead of descend.
        foreach, capturable, differentiable: accepted for compatibility and shown in the
            groups; the update is always one fused XLA program.

    Example::

        >>> opt = torchlike.optim.RAdam(model.parameters())
    """

    _static = ("maximize", "decoupled_weight_decay")
    _switches = ("weight_decay",)

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        check_adam_args(lr, betas, eps, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        return {"step": scalar_state(0.0, p), "exp_avg": _creation.zeros_like(p),
                "exp_avg_sq": _creation.zeros_like(p)}

    @staticmethod
    def _rule(p, g, state, h, flags):
        beta1, beta2 = h["betas"]
        lr = h["lr"]
        step = state["step"] + 1
        t = count(step)
        p, g = decay_weights(p, g, h, flags)
        exp_avg = lerp(state["exp_avg"], g, 1 - beta1)
        exp_avg_sq = addcmul_sq(state["exp_avg_sq"], g, beta2)
        bias_correction2 = 1 - beta2 ** t
        corrected = exp_avg / (1 - beta1 ** t).astype(p.dtype)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * t * beta2 ** t / bias_correction2
        # NaN while rho_t <= 4, but then the plain branch is the one taken
        rect = jnp.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                        / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
        adaptive = jnp.sqrt(bias_correction2).astype(p.dtype) / (jnp.sqrt(exp_avg_sq)
                                                                 + h["eps"])
        update = jnp.where(rho_t > 5.0, corrected * lr * adaptive * rect.astype(p.dtype),
                           corrected * lr)
        return p - update, {"step": step, "exp_avg": exp_avg, "exp_avg_sq": exp_avg_sq}
