"""Mirrors ``torch.optim.lr_scheduler``: learning-rate schedules over an optimizer's parameter
groups.

The epoch-driven schedulers derive each new rate from the group's current one, with PyTorch's
formulas evaluated in the same order, so the rates are PyTorch's floats exactly (NOTE [ scheduler
arithmetic ] in _lr_scheduler_base.py).  The cyclic schedulers and ReduceLROnPlateau live in
_lr_scheduler_cyclic.py.  As in PyTorch 2.13, no scheduler takes a ``verbose`` argument.
"""
import math
import types
from bisect import bisect_right
from collections import Counter

from ._lr_scheduler_base import LRScheduler as LRScheduler
from ._lr_scheduler_base import _group_values, _set_group_value, _warn_get_lr_outside_step
from ._lr_scheduler_cyclic import CosineAnnealingWarmRestarts as CosineAnnealingWarmRestarts
from ._lr_scheduler_cyclic import CyclicLR as CyclicLR
from ._lr_scheduler_cyclic import OneCycleLR as OneCycleLR
from ._lr_scheduler_cyclic import ReduceLROnPlateau as ReduceLROnPlateau

__all__ = ["LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
           "ExponentialLR", "SequentialLR", "CosineAnnealingLR", "ChainedScheduler",
           "ReduceLROnPlateau", "CyclicLR", "CosineAnnealingWarmRestarts", "OneCycleLR",
           "PolynomialLR", "LRScheduler"]


class _LRScheduler(LRScheduler):
    """Mirrors ``torch.optim.lr_scheduler._LRScheduler``: LRScheduler's old name, which older
    code still subclasses."""


# --- schedules given by functions of the epoch ---------------------------------------------------

def _lambdas(optimizer, lr_lambda):
    if not isinstance(lr_lambda, (list, tuple)):
        return [lr_lambda] * len(optimizer.param_groups)
    if len(lr_lambda) != len(optimizer.param_groups):
        raise ValueError(
            f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}")
    return list(lr_lambda)


class _LambdaState:
    """state_dict for schedulers holding user functions: a plain function is not saved (None),
    a callable object's ``__dict__`` is (PyTorch's rule)."""

    def state_dict(self):
        """Mirrors ``LambdaLR.state_dict``: every attribute but the optimizer; ``lr_lambdas``
        as the callable objects' ``__dict__`` (None for plain functions and lambdas)."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict):
        """Mirrors ``LambdaLR.load_state_dict``: restore the attributes and update the callable
        objects' ``__dict__``."""
        lr_lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        state_dict["lr_lambdas"] = lr_lambdas
        for fn, saved in zip(self.lr_lambdas, lr_lambdas):
            if saved is not None:
                fn.__dict__.update(saved)


class LambdaLR(_LambdaState, LRScheduler):
    r"""Mirrors ``torch.optim.lr_scheduler.LambdaLR``: :math:`\mathrm{lr}_e =
    \mathrm{base\_lr} \cdot \lambda(e)`.

    Args:
        optimizer: the wrapped optimizer.
        lr_lambda: a function of the epoch, or one per parameter group.
        last_epoch: the last epoch's index (default -1).

    Example::

        >>> sched = LambdaLR(opt, lr_lambda=lambda epoch: 0.95 ** epoch)
    """

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """Mirrors ``LambdaLR.get_lr``."""
        _warn_get_lr_outside_step(self)
        return [base_lr * fn(self.last_epoch)
                for fn, base_lr in zip(self.lr_lambdas, self.base_lrs, strict=True)]


class MultiplicativeLR(_LambdaState, LRScheduler):
    r"""Mirrors ``torch.optim.lr_scheduler.MultiplicativeLR``: :math:`\mathrm{lr}_e =
    \mathrm{lr}_{e-1} \cdot \lambda(e)`.

    Args:
        optimizer: the wrapped optimizer.
        lr_lambda: a function of the epoch giving the factor, or one per parameter group.
        last_epoch: the last epoch's index (default -1).
    """

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """Mirrors ``MultiplicativeLR.get_lr``."""
        _warn_get_lr_outside_step(self)
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * fn(self.last_epoch)
                for fn, group in zip(self.lr_lambdas, self.optimizer.param_groups, strict=True)]


# --- step decays ---------------------------------------------------------------------------------

class StepLR(LRScheduler):
    r"""Mirrors ``torch.optim.lr_scheduler.StepLR``: multiply the rate by ``gamma`` every
    ``step_size`` epochs, :math:`\mathrm{lr}_e = \mathrm{base\_lr}\cdot
    \gamma^{\lfloor e / \mathrm{step\_size}\rfloor}`.

    Args:
        optimizer: the wrapped optimizer.
        step_size: epochs between decays.
        gamma: the factor (default 0.1).
        last_epoch: the last epoch's index (default -1).
    """

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """Mirrors ``StepLR.get_lr``."""
        _warn_get_lr_outside_step(self)
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size)
                for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    r"""Mirrors ``torch.optim.lr_scheduler.MultiStepLR``: multiply the rate by ``gamma`` at each
    milestone (by ``gamma**k`` at a milestone listed k times).

    Args:
        optimizer: the wrapped optimizer.
        milestones: epoch indices.
        gamma: the factor (default 0.1).
        last_epoch: the last epoch's index (default -1).
    """

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """Mirrors ``MultiStepLR.get_lr``."""
        _warn_get_lr_outside_step(self)
        if self.last_epoch not in self.milestones:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * self.gamma ** self.milestones[self.last_epoch]
                for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        milestones = sorted(self.milestones.elements())
        return [base_lr * self.gamma ** bisect_right(milestones, self.last_epoch)
                for base_lr in self.base_lrs]


class ConstantLR(LRScheduler):
    r"""Mirrors ``torch.optim.lr_scheduler.ConstantLR``: the rate times ``factor`` for the
    first ``total_iters`` epochs, then the rate itself.

    Args:
        optimizer: the wrapped optimizer.
        factor: in [0, 1] (default 1/3).
        total_iters: epochs at the reduced rate (default 5).
        last_epoch: the last epoch's index (default -1).
    """

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """Mirrors ``ConstantLR.get_lr``."""
        _warn_get_lr_outside_step(self)
        if self.last_epoch == 0:
            return [group["lr"] * self.factor for group in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * (1.0 / self.factor) for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * (self.factor + (self.last_epoch >= self.total_iters)
                           * (1 - self.factor))
                for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    r"""Mirrors ``torch.optim.lr_scheduler.LinearLR``: the factor on the rate goes linearly
    from ``start_factor`` to ``end_factor`` over ``total_iters`` epochs.

    Args:
        optimizer: the wrapped optimizer.
        start_factor: in (0, 1] (default 1/3).
        end_factor: in [0, 1] (default 1).
        total_iters: length of the ramp in epochs (default 5).
        last_epoch: the last epoch's index (default -1).
    """

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5,
                 last_epoch=-1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and "
                             "less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """Mirrors ``LinearLR.get_lr``."""
        _warn_get_lr_outside_step(self)
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return _group_values(self.optimizer, "lr")
        # ratio of consecutive factors: f(e) / f(e - 1)
        delta = self.end_factor - self.start_factor
        ratio = 1.0 + delta / (self.total_iters * self.start_factor
                               + (self.last_epoch - 1) * delta)
        return [group["lr"] * ratio for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * (self.start_factor + (self.end_factor - self.start_factor)
                           * min(self.total_iters, self.last_epoch) / self.total_iters)
                for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    r"""Mirrors ``torch.optim.lr_scheduler.ExponentialLR``: :math:`\mathrm{lr}_e =
    \mathrm{lr}_{e-1}\cdot\gamma`.

    Args:
        optimizer: the wrapped optimizer.
        gamma: the factor per epoch.
        last_epoch: the last epoch's index (default -1).
    """

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """Mirrors ``ExponentialLR.get_lr``."""
        _warn_get_lr_outside_step(self)
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    r"""Mirrors ``torch.optim.lr_scheduler.PolynomialLR``: :math:`\mathrm{lr}_e =
    \mathrm{base\_lr}\,(1 - \min(e, T)/T)^{p}` with :math:`T` = ``total_iters``.

    Args:
        optimizer: the wrapped optimizer.
        total_iters: epochs until the rate reaches 0 (default 5).
        power: the exponent :math:`p` (default 1).
        last_epoch: the last epoch's index (default -1).
    """

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """Mirrors ``PolynomialLR.get_lr``."""
        _warn_get_lr_outside_step(self)
        if self._is_initial or self.last_epoch > self.total_iters:
            return _group_values(self.optimizer, "lr")
        decay = ((1.0 - self.last_epoch / self.total_iters)
                 / (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [group["lr"] * decay for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters)
                ** self.power
                for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    r"""Mirrors ``torch.optim.lr_scheduler.CosineAnnealingLR`` (SGDR without restarts,
    Loshchilov & Hutter, 2017):

    .. math::
        \eta_e = \eta_{min} + (\eta_{e-1} - \eta_{min})
                 \frac{1 + \cos(\pi e / T)}{1 + \cos(\pi (e-1) / T)}

    the recursive form of :math:`\eta_{min} + (\eta_{max} - \eta_{min})(1 + \cos(\pi e/T))/2`,
    which also follows changes made to the rate from outside; past :math:`T` the rate
    continues along the cosine (it rises again).

    Args:
        optimizer: the wrapped optimizer.
        T_max: half-period in epochs.
        eta_min: the lowest rate (default 0).
        last_epoch: the last epoch's index (default -1).
    """

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """Mirrors ``CosineAnnealingLR.get_lr``."""
        _warn_get_lr_outside_step(self)
        groups = self.optimizer.param_groups
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        if self._step_count == 1 and self.last_epoch > 0:
            # resumed: nothing to recurse from, so the closed form
            return [self.eta_min + (base_lr - self.eta_min)
                    * (1 + math.cos(self.last_epoch * math.pi / self.T_max)) / 2
                    for base_lr, _ in zip(self.base_lrs, groups, strict=True)]
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            # leaving the minimum, where the ratio of cosines is 0 / 0
            return [group["lr"] + (base_lr - self.eta_min)
                    * (1 - math.cos(math.pi / self.T_max)) / 2
                    for base_lr, group in zip(self.base_lrs, groups, strict=True)]
        return [(1 + math.cos(math.pi * self.last_epoch / self.T_max))
                / (1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max))
                * (group["lr"] - self.eta_min) + self.eta_min
                for group in groups]

    def _get_closed_form_lr(self):
        return [self.eta_min + (base_lr - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]


# --- combinations --------------------------------------------------------------------------------

def _check_schedulers(owner, optimizer, schedulers):
    name = type(owner).__name__
    for i, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{name} at index {i} should have `optimizer` as its attribute.")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(
                f"{name} does not support `ReduceLROnPlateau` scheduler as it requires "
                "additional kwargs to be specified when calling `step`, but got one at index "
                f"{i} in the given schedulers sequence.")
        if optimizer != scheduler.optimizer:
            raise ValueError(
                f"{name} expects all schedulers to belong to the same optimizer, but got "
                f"scheduler {type(scheduler).__name__} at index {i} has "
                f"{scheduler.optimizer}, which is different from {type(optimizer).__name__}.")


class _Composite:
    """state_dict for schedulers made of schedulers: theirs are nested under
    ``'_schedulers'``."""

    def state_dict(self):
        """Mirrors ``SequentialLR.state_dict``: the attributes but the optimizer, with each
        inner scheduler's ``state_dict()`` under ``'_schedulers'``."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict):
        """Mirrors ``SequentialLR.load_state_dict``."""
        schedulers = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        state_dict["_schedulers"] = schedulers
        for scheduler, saved in zip(self._schedulers, schedulers):
            scheduler.load_state_dict(saved)


class SequentialLR(_Composite, LRScheduler):
    """Mirrors ``torch.optim.lr_scheduler.SequentialLR``: run ``schedulers[i]`` from
    ``milestones[i-1]`` on; each takes over from the group's ``initial_lr`` (its closed form
    at epoch 0).

    Args:
        optimizer: the wrapped optimizer (the schedulers' own).
        schedulers: the schedulers, in order.
        milestones: the epochs at which the next scheduler starts (one fewer than schedulers).
        last_epoch: the last epoch's index (default -1).

    Example::

        >>> warmup = LinearLR(opt, start_factor=0.1, total_iters=5)
        >>> decay = ExponentialLR(opt, gamma=0.9)
        >>> sched = SequentialLR(opt, [warmup, decay], milestones=[5])
    """

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        if len(schedulers) < 1:
            raise ValueError(f"{type(self).__name__} expects at least one scheduler, but got "
                             "no scheduler.")
        _check_schedulers(self, optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more "
                "than the number of milestone points, but got number of schedulers "
                f"{len(schedulers)} and the number of milestones to be equal to "
                f"{len(milestones)}")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # undo the inner schedulers' first steps, then make the first one's again
        for group in self.optimizer.param_groups:
            _set_group_value(group, "lr", group["initial_lr"])
        self.recursive_undo()
        index = bisect_right(self._milestones, 0)
        self._schedulers[index]._initial_step()
        self._last_lr = schedulers[index].get_last_lr()

    def recursive_undo(self, sched=None):
        """Mirrors ``SequentialLR.recursive_undo``: step every scheduler inside (nested ones
        too) back one epoch."""
        sched = self if sched is None else sched
        if hasattr(sched, "_schedulers"):
            for inner in sched._schedulers:
                self.recursive_undo(inner)
        elif hasattr(sched, "last_epoch"):
            sched.last_epoch -= 1

    def step(self):
        """Mirrors ``SequentialLR.step``: step the scheduler of the current epoch (at a
        milestone: restart it at epoch 0)."""
        self.last_epoch += 1
        index = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[index]
        if index > 0 and self._milestones[index - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_Composite, LRScheduler):
    """Mirrors ``torch.optim.lr_scheduler.ChainedScheduler``: step every scheduler in turn, so
    their (chainable) effects multiply.

    Args:
        schedulers: the schedulers, all of one optimizer.
        optimizer: that optimizer (default: the first scheduler's).

    Example::

        >>> sched = ChainedScheduler([ConstantLR(opt, 0.1, total_iters=2),
        ...                           ExponentialLR(opt, gamma=0.9)])
    """

    def __init__(self, schedulers, optimizer=None):
        if len(schedulers) < 1:
            raise ValueError(f"{type(self).__name__} expects at least one scheduler to be "
                             "chained, but got no scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers(self, optimizer, schedulers)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")

    def step(self):
        """Mirrors ``ChainedScheduler.step``: step each scheduler."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")
