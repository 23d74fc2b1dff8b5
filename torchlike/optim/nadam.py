"""Mirrors ``torch.optim.NAdam``."""
import jax.numpy as jnp

from .. import _creation
from .adam import addcmul_sq, check_adam_args, count, decay_weights, lerp, scalar_state
from .optimizer import Optimizer

__all__ = ["NAdam"]


class NAdam(Optimizer):
    r"""Mirrors ``torch.optim.NAdam``: Adam with Nesterov momentum (Dozat, 2016, "Incorporating
    Nesterov Momentum into Adam"), with its momentum schedule.

    .. math::
        g &\leftarrow \nabla_p f \;(\text{negated if maximize}) + \lambda p
            \quad (\text{or } p \leftarrow p (1 - \gamma\lambda) \text{ if decoupled}) \\
        \mu_t &= \beta_1 \big(1 - \tfrac12\, 0.96^{t\psi}\big), \qquad
        \Pi_t = \Pi_{t-1} \mu_t \\
        m &\leftarrow \beta_1 m + (1 - \beta_1) g, \qquad
        v \leftarrow \beta_2 v + (1 - \beta_2) g^2 \\
        d &= \sqrt{v / (1 - \beta_2^t)} + \epsilon \\
        p &\leftarrow p - \gamma \frac{1 - \mu_t}{1 - \Pi_t} \frac{g}{d}
                         - \gamma \frac{\mu_{t+1}}{1 - \Pi_t \mu_{t+1}} \frac{m}{d}

    with momentum decay :math:`\psi`.  State per parameter: ``step``, ``mu_product``
    (:math:`\Pi`, a 0-dim Tensor), ``exp_avg`` (:math:`m`) and ``exp_avg_sq`` (:math:`v`).

    Args:
        params: parameters or parameter groups.
        lr: learning rate :math:`\gamma` (default 2e-3).
        betas: :math:`(\beta_1, \beta_2)` (default (0.9, 0.999)).
        eps: :math:`\epsilon` (default 1e-8).
        weight_decay: :math:`\lambda` (default 0).
        momentum_decay: :math:`\psi` (default 4e-3).
        decoupled_weight_decay: decay the weights directly, as AdamW does (NAdamW).
        maximize: ascend instead of descend.
        foreach, capturable, differentiable: accepted for compatibility and shown in the
            groups; the update is always one fused XLA program.

    Example::

        >>> opt = torchlike.optim.NAdam(model.parameters(), lr=2e-3)
    """

    _static = ("decoupled_weight_decay", "maximize")
    _switches = ("weight_decay",)

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        check_adam_args(lr, betas, eps, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        return {"step": scalar_state(0.0, p), "mu_product": scalar_state(1.0, p),
                "exp_avg": _creation.zeros_like(p), "exp_avg_sq": _creation.zeros_like(p)}

    @staticmethod
    def _rule(p, g, state, h, flags):
        beta1, beta2 = h["betas"]
        lr, psi = h["lr"], h["momentum_decay"]
        step = state["step"] + 1
        t = count(step)
        p, g = decay_weights(p, g, h, flags)
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (t * psi))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * psi))
        # the product is a stored (float32) Tensor: round it as PyTorch does before using it
        mu_product = state["mu_product"] * mu.astype(state["mu_product"].dtype)
        prod = mu_product.astype(jnp.float64)
        exp_avg = lerp(state["exp_avg"], g, 1 - beta1)
        exp_avg_sq = addcmul_sq(state["exp_avg_sq"], g, beta2)
        denom = jnp.sqrt(exp_avg_sq / (1 - beta2 ** t).astype(p.dtype)) + h["eps"]
        p = p + (-lr * (1.0 - mu) / (1.0 - prod)).astype(p.dtype) * g / denom
        p = p + ((-lr * mu_next) / (1.0 - prod * mu_next)).astype(p.dtype) * exp_avg / denom
        return p, {"step": step, "mu_product": mu_product, "exp_avg": exp_avg,
                   "exp_avg_sq": exp_avg_sq}
