"""The LRScheduler base class and the helpers every scheduler shares (the public names are
re-exported by ``torchlike.optim.lr_scheduler``).

NOTE [ scheduler arithmetic ]
PyTorch computes learning rates in plain Python floats, and each scheduler's formula is
chainable: the new rate is derived from the group's current one.  The schedulers here evaluate
the same expressions in the same order, so the rates are the same floats as PyTorch's, bit for
bit.  A group whose ``lr`` is a Tensor keeps that Tensor: it is filled in place with the new
value (as PyTorch does), so a compiled step that reads it sees the change without retracing.
"""
import functools
import warnings
import weakref

from .. import _trace_context
from .._tensor import Tensor
from .optimizer import Optimizer

__all__ = ["LRScheduler"]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being "
    "deprecated where possible. Please use `scheduler.step()` to step the "
    "scheduler. During the deprecation, if epoch is different from None, the "
    "closed form is used instead of the new chainable form, where available. "
    "Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose."
)


def _check_optimizer(optimizer):
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


def _copy(value):
    return value.clone() if isinstance(value, Tensor) else value


def _format_param(name, optimizer, param):
    """One value of hyper-parameter ``name`` per parameter group (a scalar is repeated)."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. "
                f"{name} has {len(param)} values, param_groups has "
                f"{len(optimizer.param_groups)}.")
    else:
        param = [param] * len(optimizer.param_groups)
    return [_copy(p) for p in param]


def _group_values(optimizer, key):
    """``group[key]`` of every group (Tensors cloned, so later fills do not change them)."""
    return [_copy(group[key]) for group in optimizer.param_groups]


def _set_group_value(group, key, value):
    """Store a new hyper-parameter value: a Tensor entry is filled in place."""
    if isinstance(group[key], Tensor):
        if isinstance(value, Tensor) and value.dim() != 0:
            value = value.squeeze()
        group[key].fill_(value)
    else:
        group[key] = value


def _warn_get_lr_outside_step(scheduler):
    if not scheduler._get_lr_called_within_step:
        warnings.warn("To get the last learning rate computed by the scheduler, "
                      "please use `get_last_lr()`.", UserWarning, stacklevel=2)


class _Flag:
    """``with _Flag(scheduler, name):`` sets the attribute ``name`` to True for the block
    (on the instance, so it shows in ``state_dict()`` as in PyTorch)."""

    def __init__(self, scheduler, name):
        self.scheduler, self.name = scheduler, name

    def __enter__(self):
        setattr(self.scheduler, self.name, True)

    def __exit__(self, *exc):
        setattr(self.scheduler, self.name, False)


def _track_optimizer_step(scheduler, optimizer):
    """Wrap ``optimizer.step`` (once per optimizer) so that it records that it ran: a scheduler
    stepped before its optimizer warns, as in PyTorch."""
    if hasattr(optimizer.step, "_wrapped_by_lr_sched"):
        return
    opt_ref = weakref.ref(optimizer)   # the wrapper is stored on the optimizer: no cycle
    func = optimizer.step.__func__

    @functools.wraps(func)
    def step(*args, **kwargs):
        opt = opt_ref()
        opt._opt_called = True
        return func.__get__(opt, type(opt))(*args, **kwargs)

    step._wrapped_by_lr_sched = True
    optimizer.step = step


def _deferred_when_compiled(step):
    """Wrap a scheduler's ``step``: inside a step being compiled it is recorded and replayed
    eagerly after every call (NOTE [ whole-step compile ]): a schedule is Python arithmetic on
    Python numbers, which a traced program would run only once."""
    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        if _trace_context.defer(functools.partial(step, self, **kwargs), *args):
            return None
        return step(self, *args, **kwargs)
    wrapper._deferred = True
    return wrapper


class LRScheduler:
    """Mirrors ``torch.optim.lr_scheduler.LRScheduler``: the base of the epoch-driven
    schedulers.

    A subclass computes the new learning rates in ``get_lr()`` (chainable: from the groups'
    current ``lr``) and may give ``_get_closed_form_lr()`` (from ``base_lrs`` and
    ``last_epoch``), used when ``step`` is given an explicit epoch.  Construction stores each
    group's ``'initial_lr'`` (when ``last_epoch == -1``), takes ``base_lrs`` from it and makes
    the first step (epoch 0).

    Args:
        optimizer: the wrapped ``torchlike.optim.Optimizer``.
        last_epoch: the index of the last epoch, to resume a schedule (default -1: start).

    Example::

        >>> sched = torchlike.optim.lr_scheduler.StepLR(opt, step_size=30, gamma=0.1)
        >>> for epoch in range(100):
        ...     train(...)          # calls opt.step()
        ...     sched.step()
    """

    _get_lr_called_within_step = False
    _is_initial = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_deferred", False):
            cls.step = _deferred_when_compiled(step)

    def __init__(self, optimizer, last_epoch=-1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", _copy(group["lr"]))
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when "
                        "resuming scheduler with last_epoch >= 0.\n"
                        "This typically happens when:\n"
                        "1. You're trying to resume training from a checkpoint but haven't "
                        "properly loaded the optimizer state\n"
                        "2. You're using last_epoch >= 0 for a fresh training run (not "
                        "recommended)")
        self.base_lrs = _group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        _track_optimizer_step(self, optimizer)
        self._initial_step()

    def _initial_step(self):
        """The step construction makes (and SequentialLR repeats at a milestone)."""
        self._step_count = 0
        with _Flag(self, "_is_initial"):
            self.step()

    def state_dict(self):
        """Mirrors ``LRScheduler.state_dict``: every attribute but the optimizer."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict):
        """Mirrors ``LRScheduler.load_state_dict``."""
        self.__dict__.update(state_dict)

    def get_last_lr(self):
        """Mirrors ``LRScheduler.get_last_lr``: the learning rates the last step set, one per
        group."""
        return self._last_lr

    def get_lr(self):
        """Mirrors ``LRScheduler.get_lr``: the new learning rates (subclasses define it)."""
        raise NotImplementedError

    def step(self, epoch=None):
        """Mirrors ``LRScheduler.step``: advance one epoch and set the groups' ``lr``.

        Args:
            epoch: deprecated; jump to this epoch (uses the closed form where there is one)
                and warn.
        """
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn(
                    "Seems like `optimizer.step()` has been overridden after learning rate "
                    "scheduler initialization. Please, make sure to call `optimizer.step()` "
                    "before `lr_scheduler.step()`. See more details at "
                    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                    UserWarning, stacklevel=2)
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(
                    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. "
                    "In PyTorch 1.1.0 and later, you should call them in the opposite order: "
                    "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this "
                    "will result in PyTorch skipping the first value of the learning rate "
                    "schedule. See more details at "
                    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                    UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        with _Flag(self, "_get_lr_called_within_step"):
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                values = closed_form() if closed_form is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            _set_group_value(group, "lr", lr)
        self._last_lr = _group_values(self.optimizer, "lr")


LRScheduler.__module__ = "torchlike.optim.lr_scheduler"   # its public home


LRScheduler.step = _deferred_when_compiled(LRScheduler.step)
