"""Mirrors ``torch.optim.Adam`` and ``torch.optim.AdamW``, and the pieces the Adam family shares
(argument checks, scalar state, ``lerp``).

NOTE [ scalar factors in float64 ]
PyTorch's single-tensor optimizers read the step counter on the host and compute the scalar
factors of an update (bias corrections, step sizes) as Python floats, i.e. in float64; each factor
is rounded to the parameter's dtype only where it meets a tensor.  The rules here do the same
inside the update program: the counter becomes a float64 scalar (``_count``), the factors are
computed in float64 and cast with ``.astype(p.dtype)`` where PyTorch passes them to a tensor op.
Plain hyper-parameters (``lr``, ``1 - beta1``) arrive as weakly typed scalars and take the
parameter's dtype by themselves, as Python numbers do in PyTorch.
"""
import jax.numpy as jnp

from .. import _creation, _dtype
from .._tensor import Tensor
from .optimizer import Optimizer, check_fused
from .sgd import check_lr

__all__ = ["Adam", "AdamW"]


# --- shared by the algorithms of this package --------------------------------------------------

def scalar_state(value, param, fused=None):
    """A 0-dim state Tensor (step counter, ``mu_product``, ...) in PyTorch's scalar dtype:
    float64 when the default dtype is float64 (and the update is not fused), else float32.
    It lives on ``param``'s device, as PyTorch's capturable state does, so the update is one
    program on that device (PyTorch's default keeps ``step`` on the CPU and syncs each step)."""
    dtype = _dtype.float64 if (not fused and _dtype.get_default_dtype() == _dtype.float64) \
        else _dtype.float32
    if isinstance(value, Tensor):
        return value.detach().to(dtype=dtype, device=param.device).clone()
    return _creation.tensor(value, dtype=dtype, device=param.device)


def check_adam_args(lr, betas, eps, weight_decay):
    """The argument checks of the Adam family, in PyTorch's order and wording."""
    check_lr(lr)
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    for i in (0, 1):
        if not 0.0 <= betas[i] < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def count(step):
    """The step counter as PyTorch's rules see it: a float64 number (NOTE [ scalar factors in
    float64 ])."""
    return step.astype(jnp.float64)


def lerp(start, end, weight):
    """``start.lerp(end, weight)`` with a scalar weight, in the form PyTorch's kernel uses
    (from the nearer end, so weights near 1 keep their precision)."""
    weight = jnp.asarray(weight).astype(start.dtype)
    return jnp.where(jnp.abs(weight) < 0.5, start + weight * (end - start),
                     end - (end - start) * (1 - weight))


def addcmul_sq(avg, g, decay):
    """``avg.mul_(decay).addcmul_(g, g, value=1 - decay)``: the running average of squares."""
    return avg * decay + (1 - decay) * g * g


def decay_weights(p, g, h, flags):
    """Weight decay as the Adam family applies it: decoupled (``p *= 1 - lr * wd``, AdamW) or
    added to the gradient (``g += wd * p``); nothing when ``weight_decay`` is 0."""
    if flags["weight_decay"]:
        if flags.get("decoupled_weight_decay"):
            p = p * (1 - h["lr"] * h["weight_decay"])
        else:
            g = g + h["weight_decay"] * p
    return p, g


# --- Adam / AdamW -------------------------------------------------------------------------------

class Adam(Optimizer):
    r"""Mirrors ``torch.optim.Adam`` (Kingma & Ba, 2014, "Adam: A Method for Stochastic
    Optimization"; AMSGrad from Reddi et al., 2018, "On the Convergence of Adam and Beyond").

    .. math::
        g &\leftarrow \nabla_p f \;(\text{negated if maximize}) + \lambda p
            \quad (\text{or } p \leftarrow p (1 - \gamma\lambda) \text{ if decoupled}) \\
        m &\leftarrow \beta_1 m + (1 - \beta_1) g, \qquad
        v \leftarrow \beta_2 v + (1 - \beta_2) g^2 \\
        \hat v &= \max(\hat v, v) \text{ (amsgrad) or } v \\
        p &\leftarrow p - \frac{\gamma}{1 - \beta_1^t}\,
            \frac{m}{\sqrt{\hat v} / \sqrt{1 - \beta_2^t} + \epsilon}

    State per parameter: ``step`` (a 0-dim Tensor), ``exp_avg`` (:math:`m`), ``exp_avg_sq``
    (:math:`v`) and, with amsgrad, ``max_exp_avg_sq``.

    Args:
        params: parameters or parameter groups.
        lr: learning rate :math:`\gamma` (default 1e-3; a float or a one-element Tensor).
        betas: :math:`(\beta_1, \beta_2)` (default (0.9, 0.999)).
        eps: :math:`\epsilon` (default 1e-8).
        weight_decay: :math:`\lambda` (default 0).
        amsgrad: use the running maximum of :math:`v` (default False).
        maximize: ascend instead of descend.
        decoupled_weight_decay: decay the weights directly instead of through the gradient
            (this makes Adam AdamW).
        foreach, capturable, differentiable, fused: accepted for compatibility and shown in
            the groups; the update is always one fused XLA program.

    Example::

        >>> opt = torchlike.optim.Adam(model.parameters(), lr=1e-3)
        >>> opt.zero_grad(); loss_fn(model(x), y).backward(); opt.step()
    """

    _static = ("amsgrad", "maximize", "decoupled_weight_decay")
    _switches = ("weight_decay",)

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        if isinstance(lr, Tensor) and foreach and not capturable:
            raise ValueError("lr as a Tensor is not supported for capturable=False and "
                             "foreach=True")
        check_adam_args(lr, betas, eps, weight_decay)
        if not (all(isinstance(b, float) for b in betas)
                or all(isinstance(b, Tensor) for b in betas)):
            raise ValueError("betas must be either both floats or both Tensors")
        for i, b in enumerate(betas):
            if isinstance(b, Tensor):
                if not capturable and foreach:
                    raise ValueError(f"betas[{i}] as a Tensor is not supported for "
                                     "capturable=False and foreach=True")
                if b.numel() != 1:
                    raise ValueError(f"Tensor betas[{i}] must be 1-element")
        betas = tuple(b.squeeze() if isinstance(b, Tensor) and b.dim() else b for b in betas)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                    "capturable": capturable, "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)
        check_fused(self.defaults)

    def _init_state(self, p, group):
        state = {"step": scalar_state(0.0, p, group["fused"]),
                 "exp_avg": _creation.zeros_like(p),
                 "exp_avg_sq": _creation.zeros_like(p)}
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = _creation.zeros_like(p)
        return state

    @staticmethod
    def _rule(p, g, state, h, flags):
        beta1, beta2 = h["betas"]
        step = state["step"] + 1
        p, g = decay_weights(p, g, h, flags)
        exp_avg = lerp(state["exp_avg"], g, 1 - beta1)
        exp_avg_sq = addcmul_sq(state["exp_avg_sq"], g, beta2)
        t = count(step)
        step_size = h["lr"] / (1 - beta1 ** t)
        bias_correction2_sqrt = jnp.sqrt(1 - beta2 ** t)
        new_state = {"step": step, "exp_avg": exp_avg, "exp_avg_sq": exp_avg_sq}
        second = exp_avg_sq
        if flags["amsgrad"]:
            second = new_state["max_exp_avg_sq"] = jnp.maximum(state["max_exp_avg_sq"],
                                                               exp_avg_sq)
        denom = jnp.sqrt(second) / bias_correction2_sqrt.astype(p.dtype) + h["eps"]
        return p + (-step_size).astype(p.dtype) * exp_avg / denom, new_state


class AdamW(Adam):
    r"""Mirrors ``torch.optim.AdamW`` (Loshchilov & Hutter, 2019, "Decoupled Weight Decay
    Regularization"): :class:`Adam` with ``decoupled_weight_decay=True``, i.e.

    .. math::
        p \leftarrow p (1 - \gamma\lambda), \text{ then Adam's update without } \lambda

    The arguments are Adam's, except that ``weight_decay`` defaults to 1e-2 and
    ``decoupled_weight_decay`` is always True (it still appears in the groups, as in PyTorch).

    Example::

        >>> opt = torchlike.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
