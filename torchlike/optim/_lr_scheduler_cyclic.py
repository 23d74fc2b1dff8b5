"""The cyclic schedulers (CyclicLR, OneCycleLR, CosineAnnealingWarmRestarts) and the
metric-driven ReduceLROnPlateau; public as ``torchlike.optim.lr_scheduler.<name>``.

CyclicLR and OneCycleLR also cycle the momentum: the group's ``momentum`` (SGD, RMSprop) or the
first of its ``betas`` (Adam and its relatives), whichever the optimizer's defaults have.
"""
import math
import types
import warnings
from functools import partial

from ._lr_scheduler_base import (EPOCH_DEPRECATION_WARNING, LRScheduler, _check_optimizer,
                                 _Flag, _format_param, _group_values, _set_group_value,
                                 _warn_get_lr_outside_step)

__all__ = ["ReduceLROnPlateau", "CyclicLR", "CosineAnnealingWarmRestarts", "OneCycleLR"]


def _momentum_key(optimizer):
    """Whether the momentum to cycle is ``betas[0]`` (True) or ``momentum`` (False)."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError(
            "optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
    return "betas" in optimizer.defaults


def _set_momentum(group, use_beta1, value):
    if use_beta1:
        group["betas"] = (value, *group["betas"][1:])
    else:
        group["momentum"] = value


def _init_momentums(optimizer, use_beta1, max_momentums, base_momentums):
    """Start each group at its max momentum and record both bounds in the group."""
    for m_max, m_base, group in zip(max_momentums, base_momentums, optimizer.param_groups,
                                    strict=True):
        _set_momentum(group, use_beta1, m_max)
        group["max_momentum"] = m_max
        group["base_momentum"] = m_base


class ReduceLROnPlateau(LRScheduler):
    """Mirrors ``torch.optim.lr_scheduler.ReduceLROnPlateau``: multiply the rate by ``factor``
    when a metric has not improved for more than ``patience`` epochs.

    A value improves on the best so far when it is below ``best * (1 - threshold)`` (mode
    ``'min'``, ``threshold_mode='rel'``), below ``best - threshold`` (``'abs'``), or above
    ``best * (1 + threshold)`` / ``best + threshold`` in mode ``'max'``.  After a reduction,
    ``cooldown`` epochs pass before bad epochs count again.  A reduction smaller than ``eps``
    is skipped; the rate never goes below ``min_lr``.

    Args:
        optimizer: the wrapped optimizer.
        mode: ``'min'`` or ``'max'`` (default ``'min'``).
        factor: the factor, < 1 (default 0.1).
        patience: bad epochs tolerated (default 10).
        threshold: the least improvement that counts (default 1e-4).
        threshold_mode: ``'rel'`` or ``'abs'`` (default ``'rel'``).
        cooldown: epochs to wait after a reduction (default 0).
        min_lr: a lower bound, or one per group (default 0).
        eps: the smallest reduction applied (default 1e-8).

    Example::

        >>> sched = ReduceLROnPlateau(opt, mode="min", patience=2)
        >>> for epoch in range(10):
        ...     train(...)
        ...     sched.step(validate(...))
    """

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4,
                 threshold_mode="rel", cooldown=0, min_lr=0, eps=1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(
                    f"expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _group_values(self.optimizer, "lr")
        self._init_is_better(mode=mode, threshold=threshold, threshold_mode=threshold_mode)
        self._reset()

    def _reset(self):
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics, epoch=None):
        """Mirrors ``ReduceLROnPlateau.step``: record this epoch's metric (a number or a
        one-element Tensor) and reduce the rate when it has plateaued.

        Args:
            metrics: the monitored value.
            epoch: deprecated; the epoch number (warns).
        """
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr(epoch)
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _group_values(self.optimizer, "lr")

    def _reduce_lr(self, epoch):
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` ({len(groups)}) differs "
                    f"from when `ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), "
                    "usually due to a new param group being added to the optimizer. Please "
                    "modify the `min_lrs` field to match the length of the `optimizer` param "
                    "groups.")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, min_lr in zip(groups, self.min_lrs):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, min_lr)
            if old_lr - new_lr > self.eps:
                _set_group_value(group, "lr", new_lr)

    @property
    def in_cooldown(self):
        """Whether the scheduler is waiting after a reduction."""
        return self.cooldown_counter > 0

    def _is_better(self, a, best):
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min" and self.threshold_mode == "abs":
            return a < best - self.threshold
        if self.mode == "max" and self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode, threshold, threshold_mode):
        if mode not in {"min", "max"}:
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict):
        """Mirrors ``ReduceLROnPlateau.load_state_dict``."""
        self.__dict__.update(state_dict)
        self._init_is_better(mode=self.mode, threshold=self.threshold,
                             threshold_mode=self.threshold_mode)


class CyclicLR(LRScheduler):
    r"""Mirrors ``torch.optim.lr_scheduler.CyclicLR`` (Smith, 2017, "Cyclical Learning Rates
    for Training Neural Networks"): the rate goes from ``base_lr`` up to ``max_lr`` in
    ``step_size_up`` steps and back in ``step_size_down``, the swing scaled by

    - ``'triangular'``: 1;
    - ``'triangular2'``: :math:`1/2^{c-1}` in cycle :math:`c` (halved every cycle);
    - ``'exp_range'``: :math:`\gamma^{i}` at iteration :math:`i`;

    or by ``scale_fn`` of the cycle (``scale_mode='cycle'``) or of the iteration
    (``'iterations'``).  With ``cycle_momentum`` the momentum (or ``betas[0]``) moves the
    opposite way, between ``max_momentum`` and ``base_momentum``.  Step it after every batch.

    Args:
        optimizer: the wrapped optimizer.
        base_lr, max_lr: the bounds (or one per group); ``base_lr`` becomes the groups' lr.
        step_size_up: steps in the rising half (default 2000).
        step_size_down: steps in the falling half (default: ``step_size_up``).
        mode: ``'triangular'``, ``'triangular2'`` or ``'exp_range'``.
        gamma: the base of ``'exp_range'`` (default 1).
        scale_fn: a custom scale function (overrides ``mode``).
        scale_mode: ``'cycle'`` or ``'iterations'``: the argument of ``scale_fn``.
        cycle_momentum: cycle the momentum too (default True).
        base_momentum, max_momentum: its bounds (default 0.8 and 0.9).
        last_epoch: the last step's index (default -1).
    """

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None,
                 mode="triangular", gamma=1.0, scale_fn=None, scale_mode="cycle",
                 cycle_momentum=True, base_momentum=0.8, max_momentum=0.9, last_epoch=-1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        base_lrs = _format_param("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups, strict=True):
                _set_group_value(group, "lr", lr)
        self.max_lrs = _format_param("max_lr", optimizer, max_lr)
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        if mode not in ["triangular", "triangular2", "exp_range"] and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1 = _momentum_key(optimizer)
            self.base_momentums = _format_param("base_momentum", optimizer, base_momentum)
            self.max_momentums = _format_param("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                _init_momentums(optimizer, self.use_beta1, self.max_momentums,
                                self.base_momentums)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self):
        if self._scale_fn_custom is not None:
            return
        if self.mode == "triangular":
            self._scale_fn_ref = self._triangular_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "triangular2":
            self._scale_fn_ref = self._triangular2_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "exp_range":
            self._scale_fn_ref = partial(self._exp_range_scale_fn, self.gamma)
            self.scale_mode = "iterations"

    def scale_fn(self, x):
        """Mirrors ``CyclicLR.scale_fn``: the amplitude's scale at cycle or iteration ``x``."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        return self._scale_fn_ref(x)

    @staticmethod
    def _triangular_scale_fn(x):
        return 1.0

    @staticmethod
    def _triangular2_scale_fn(x):
        return 1 / (2.0 ** (x - 1))

    @staticmethod
    def _exp_range_scale_fn(gamma, x):
        return gamma ** x

    def get_lr(self):
        """Mirrors ``CyclicLR.get_lr`` (which also sets the groups' momentum)."""
        _warn_get_lr_outside_step(self)
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle   # position in the cycle, [0, 1)
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        at = cycle if self.scale_mode == "cycle" else self.last_epoch
        lrs = [base_lr + (max_lr - base_lr) * scale_factor * self.scale_fn(at)
               for base_lr, max_lr in zip(self.base_lrs, self.max_lrs, strict=True)]
        if self.cycle_momentum:
            momentums = [m_max - (m_max - m_base) * scale_factor * self.scale_fn(at)
                         for m_base, m_max in zip(self.base_momentums, self.max_momentums,
                                                  strict=True)]
            for group, momentum in zip(self.optimizer.param_groups, momentums, strict=True):
                _set_momentum(group, self.use_beta1, momentum)
        return lrs

    def state_dict(self):
        """Mirrors ``CyclicLR.state_dict``: a custom ``scale_fn`` is saved as its ``__dict__``
        when it is a callable object, as None when it is a function."""
        state = super().state_dict()
        state.pop("_scale_fn_ref", None)
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None
        if fn is not None and not isinstance(fn, types.FunctionType):
            state["_scale_fn_custom"] = fn.__dict__.copy()
        return state

    def load_state_dict(self, state_dict):
        """Mirrors ``CyclicLR.load_state_dict``."""
        fn = state_dict.pop("_scale_fn_custom")
        super().load_state_dict(state_dict)
        if fn is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()


class CosineAnnealingWarmRestarts(LRScheduler):
    r"""Mirrors ``torch.optim.lr_scheduler.CosineAnnealingWarmRestarts`` (SGDR, Loshchilov &
    Hutter, 2017):

    .. math::
        \eta = \eta_{min} + (\eta_{max} - \eta_{min})\,\frac{1 + \cos(\pi T_{cur} / T_i)}{2}

    where :math:`T_{cur}` counts epochs since the last restart and the period :math:`T_i`
    starts at ``T_0`` and is multiplied by ``T_mult`` at each restart.  ``step(epoch)`` accepts
    fractional epochs (``step(epoch + i / iters)`` inside an epoch).

    Args:
        optimizer: the wrapped optimizer.
        T_0: the first period (a positive int).
        T_mult: the period's growth factor (an int >= 1, default 1).
        eta_min: the lowest rate (default 0).
        last_epoch: the last epoch's index (default -1).
    """

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(
                f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """Mirrors ``CosineAnnealingWarmRestarts.get_lr``."""
        _warn_get_lr_outside_step(self)
        return [self.eta_min + (base_lr - self.eta_min)
                * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base_lr in self.base_lrs]

    def step(self, epoch=None):
        """Mirrors ``CosineAnnealingWarmRestarts.step``: the next epoch, or ``epoch`` (which
        may be fractional; no deprecation warning here).

        Args:
            epoch: optional; the (fractional) epoch to go to.

        Example::

            >>> iters = len(loader)
            >>> for epoch in range(20):
            ...     for i, batch in enumerate(loader):
            ...         train_step(batch)
            ...         sched.step(epoch + i / iters)
        """
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    # the restart index n: T_0 (T_mult^n - 1) / (T_mult - 1) <= epoch
                    n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        with _Flag(self, "_get_lr_called_within_step"):
            for group, lr in zip(self.optimizer.param_groups, self.get_lr(), strict=True):
                _set_group_value(group, "lr", lr)
        self._last_lr = _group_values(self.optimizer, "lr")


class OneCycleLR(LRScheduler):
    r"""Mirrors ``torch.optim.lr_scheduler.OneCycleLR`` (Smith & Topin, 2018,
    "Super-Convergence"): one cycle over ``total_steps`` steps, from ``max_lr / div_factor``
    up to ``max_lr`` during the first ``pct_start`` of the steps, then down to
    ``initial_lr / final_div_factor``; with ``three_phase`` it comes back to the initial rate
    first (symmetrically) and only then anneals to the minimum.  Each phase anneals by cosine
    (``'cos'``) or linearly, and with ``cycle_momentum`` the momentum (or ``betas[0]``) moves
    the opposite way between ``max_momentum`` and ``base_momentum``.  Step it after every
    batch; stepping more than ``total_steps`` times raises ValueError.

    Args:
        optimizer: the wrapped optimizer.
        max_lr: the peak rate (or one per group).
        total_steps: the cycle's length, or give ``epochs`` and ``steps_per_epoch``.
        pct_start: the rising share of the cycle (a float, default 0.3).
        anneal_strategy: ``'cos'`` or ``'linear'``.
        cycle_momentum: cycle the momentum too (default True).
        base_momentum, max_momentum: its bounds (default 0.85 and 0.95).
        div_factor: ``initial_lr = max_lr / div_factor`` (default 25).
        final_div_factor: ``min_lr = initial_lr / final_div_factor`` (default 1e4).
        three_phase: the three-phase schedule (default False).
        last_epoch: the last step's index (default -1).

    Example::

        >>> sched = OneCycleLR(opt, max_lr=0.01, steps_per_epoch=len(loader), epochs=10)
    """

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
                 pct_start=0.3, anneal_strategy="cos", cycle_momentum=True,
                 base_momentum=0.85, max_momentum=0.95, div_factor=25.0,
                 final_div_factor=1e4, three_phase=False, last_epoch=-1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(
                    f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")

        def phase(end_step, start_lr, end_lr, start_momentum, end_momentum):
            return {"end_step": end_step, "start_lr": start_lr, "end_lr": end_lr,
                    "start_momentum": start_momentum, "end_momentum": end_momentum}

        rise = float(pct_start * self.total_steps) - 1
        if three_phase:
            self._schedule_phases = [
                phase(rise, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                phase(float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr",
                      "base_momentum", "max_momentum"),
                phase(self.total_steps - 1, "initial_lr", "min_lr", "max_momentum",
                      "max_momentum")]
        else:
            self._schedule_phases = [
                phase(rise, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                phase(self.total_steps - 1, "max_lr", "min_lr", "base_momentum",
                      "max_momentum")]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._anneal_func_type = anneal_strategy

        max_lrs = _format_param("max_lr", self.optimizer, max_lr)
        if last_epoch == -1:
            for group, group_max_lr in zip(self.optimizer.param_groups, max_lrs):
                group["initial_lr"] = group_max_lr / div_factor
                group["max_lr"] = group_max_lr
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1 = _momentum_key(self.optimizer)
            max_momentums = _format_param("max_momentum", optimizer, max_momentum)
            base_momentums = _format_param("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                _init_momentums(optimizer, self.use_beta1, max_momentums, base_momentums)
        super().__init__(optimizer, last_epoch)

    def _anneal_func(self, start, end, pct):
        if self._anneal_func_type == "cos":
            return self._annealing_cos(start, end, pct)
        if self._anneal_func_type == "linear":
            return self._annealing_linear(start, end, pct)
        raise ValueError(f"Unknown _anneal_func_type: {self._anneal_func_type}")

    @staticmethod
    def _annealing_cos(start, end, pct):
        """Cosine from ``start`` (pct 0) to ``end`` (pct 1)."""
        cos_out = math.cos(math.pi * pct) + 1
        return end + (start - end) / 2.0 * cos_out

    @staticmethod
    def _annealing_linear(start, end, pct):
        """Straight line from ``start`` (pct 0) to ``end`` (pct 1)."""
        return (end - start) * pct + start

    def get_lr(self):
        """Mirrors ``OneCycleLR.get_lr`` (which also sets the groups' momentum)."""
        _warn_get_lr_outside_step(self)
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(f"Tried to step {step_num} times. The specified number of total "
                             f"steps is {self.total_steps}")
        lrs = []
        last = len(self._schedule_phases) - 1
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step_num <= end_step or i == last:
                    pct = (step_num - start_step) / (end_step - start_step)
                    lrs.append(self._anneal_func(group[phase["start_lr"]],
                                                 group[phase["end_lr"]], pct))
                    if self.cycle_momentum:
                        momentum = self._anneal_func(group[phase["start_momentum"]],
                                                     group[phase["end_momentum"]], pct)
                        _set_momentum(group, self.use_beta1, momentum)
                    break
                start_step = phase["end_step"]
        return lrs


for _cls in (ReduceLROnPlateau, CyclicLR, CosineAnnealingWarmRestarts, OneCycleLR):
    _cls.__module__ = "torchlike.optim.lr_scheduler"   # their public home
del _cls
