"""Mirrors ``torch.optim.SGD``."""
from .._tensor import Tensor
from .optimizer import Optimizer, check_fused

__all__ = ["SGD"]


def check_lr(lr):
    """PyTorch's checks of a learning rate (a float or a one-element Tensor)."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


class SGD(Optimizer):
    r"""Mirrors ``torch.optim.SGD``: stochastic gradient descent, optionally with momentum
    (heavy-ball, or Nesterov's as in Sutskever et al., 2013).

    .. math::
        g &\leftarrow \nabla_p f \;(\text{negated if maximize}) + \lambda p \\
        b &\leftarrow \mu b + (1 - \tau) g \quad (b \leftarrow g \text{ at the first step}) \\
        g &\leftarrow g + \mu b \text{ (nesterov)} \quad\text{or}\quad g \leftarrow b \\
        p &\leftarrow p - \gamma g

    with learning rate :math:`\gamma`, momentum :math:`\mu`, dampening :math:`\tau` and weight
    decay :math:`\lambda`.  The buffer :math:`b` is ``state[p]['momentum_buffer']`` (only when
    momentum is nonzero).

    Args:
        params: parameters or parameter groups.
        lr: learning rate (default 1e-3).
        momentum, dampening, weight_decay: as above (default 0).
        nesterov: Nesterov momentum (needs momentum > 0 and dampening 0).
        maximize: ascend instead of descend.
        foreach, differentiable, fused: accepted for compatibility and shown in the groups; the
            update is always one fused XLA program, run without recording a graph.

    Example::

        >>> opt = torchlike.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        >>> opt.zero_grad(); loss_fn(model(x), y).backward(); opt.step()
    """

    _static = ("nesterov", "maximize")
    _switches = ("momentum", "weight_decay")

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                 *, maximize=False, foreach=None, differentiable=False, fused=None):
        check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        check_fused(self.defaults)

    @staticmethod
    def _rule(p, g, state, h, flags):
        if flags["weight_decay"]:
            g = g + h["weight_decay"] * p
        new_state = {}
        if flags["momentum"]:
            buf = state.get("momentum_buffer")
            buf = g if buf is None else h["momentum"] * buf + (1 - h["dampening"]) * g
            g = g + h["momentum"] * buf if flags["nesterov"] else buf
            new_state["momentum_buffer"] = buf
        return p - h["lr"] * g, new_state
