"""Mirrors ``torch.distributions.distribution``: the Distribution base class."""
import warnings

from .. import _trace_context
from .._size import Size
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from . import constraints
from .utils import _is_all_true, lazy_property

__all__ = ["Distribution"]


# NOTE [ validation while tracing ]
# Validation reads values: ``Normal(loc, scale)`` raises when a scale is not positive.  In eager
# code the check runs on the host, with PyTorch's message (it prints the offending tensor).
# While torchlike.compile traces a step the values are not known; the check becomes one of the
# step's own checks (_trace_context.check), so the compiled program raises the same ValueError
# type naming the parameter, its shape, the distribution and the constraint (without the values,
# which the message is written before).  Under other jax transforms (to_jax, torchlike.func)
# nothing can raise, and the check is skipped, as PyTorch skips it when tracing for export.
def _require(valid, message, traced_message):
    ok = _is_all_true(valid)
    if ok is None:
        _trace_context.check(valid._value().all(), ValueError,
                             traced_message.replace("{", "{{").replace("}", "}}"))
    elif not ok:
        raise ValueError(message())


class Distribution:
    """Mirrors ``torch.distributions.Distribution``: the abstract base class of probability
    distributions.

    A distribution has a ``batch_shape`` (independent, differently parameterized copies) and an
    ``event_shape`` (the shape of one draw); ``sample(sample_shape)`` returns
    ``sample_shape + batch_shape + event_shape``.  Its methods are written with torchlike's ops,
    so ``rsample``/``log_prob`` are recorded for ``.backward()`` and trace under
    ``torchlike.compile`` and ``torchlike.func``.

    Args:
        batch_shape (torchlike.Size): the shape over which parameters are batched.
        event_shape (torchlike.Size): the shape of a single sample.
        validate_args (bool, optional): check parameters and values against their constraints
            (default: ``Distribution.set_default_validate_args``, True unless ``python -O``).
    """
    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        """Mirrors ``torch.distributions.Distribution.set_default_validate_args``: whether
        distributions validate their arguments by default.

        Args:
            value (bool): True or False.

        Example:
            >>> Distribution.set_default_validate_args(False)
        """
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args=None):
        self._batch_shape = batch_shape
        self._event_shape = event_shape
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                              "`arg_constraints = {}` or initialize the distribution with "
                              "`validate_args=False` to turn off validation.", stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                if param not in self.__dict__ and isinstance(getattr(type(self), param),
                                                             lazy_property):
                    continue   # not derived yet (lazy_property)
                self._check_param(param, constraint, getattr(self, param))
        super().__init__()

    def _check_param(self, param, constraint, value):
        head = (f"Expected parameter {param} ({type(value).__name__} of shape "
                f"{tuple(value.shape)}) of distribution ")
        tail = f" to satisfy the constraint {constraint!r}, but found invalid values"
        _require(constraint.check(value),
                 lambda: f"{head}{self!r}{tail}:\n{value}",
                 f"{head}{type(self).__name__}{tail}")

    def expand(self, batch_shape, _instance=None):
        """Mirrors ``torch.distributions.Distribution.expand``: a distribution with its batch
        dimensions expanded to ``batch_shape`` (its parameters ``Tensor.expand``-ed, without
        copying or re-validating).

        Args:
            batch_shape (torchlike.Size): the new batch shape.
            _instance: the new instance, from a subclass that overrides ``expand``.
        """
        raise NotImplementedError

    @property
    def batch_shape(self):
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self):
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self):
        """{argument name: Constraint} that the distribution's tensor arguments satisfy."""
        raise NotImplementedError

    @property
    def support(self):
        """The Constraint that the distribution's values satisfy."""
        raise NotImplementedError

    @property
    def mean(self):
        """The mean of the distribution."""
        raise NotImplementedError

    @property
    def mode(self):
        """The mode of the distribution."""
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        """The variance of the distribution."""
        raise NotImplementedError

    @property
    def stddev(self):
        """The standard deviation: ``variance.sqrt()``."""
        return self.variance.sqrt()

    def sample(self, sample_shape=Size()):
        """Mirrors ``torch.distributions.Distribution.sample``: a draw of shape
        ``sample_shape + batch_shape + event_shape``, not differentiable (``rsample`` under
        no_grad unless a subclass draws otherwise).

        Example:
            >>> Normal(0.0, 1.0).sample((3,)).shape
            torchlike.Size([3])
        """
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()):
        """A reparameterized draw of shape ``sample_shape + batch_shape + event_shape``:
        gradients flow back to the parameters."""
        raise NotImplementedError

    def sample_n(self, n):
        """Mirrors the deprecated ``torch.distributions.Distribution.sample_n``:
        ``sample((n,))``, with its FutureWarning."""
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.",
                      FutureWarning, stacklevel=2)
        return self.sample(Size((n,)))

    def log_prob(self, value):
        """The log of the probability density/mass function at ``value``."""
        raise NotImplementedError

    def cdf(self, value):
        """The cumulative distribution function at ``value``."""
        raise NotImplementedError

    def icdf(self, value):
        """The inverse cumulative distribution function at ``value``."""
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        """All values of a discrete distribution along dimension 0: shape
        ``(cardinality,) + batch_shape + event_shape`` (``expand=False``: batch dimensions of
        size 1)."""
        raise NotImplementedError

    def entropy(self):
        """The entropy, of shape ``batch_shape``."""
        raise NotImplementedError

    def perplexity(self):
        """Mirrors ``torch.distributions.Distribution.perplexity``: ``exp(entropy())``."""
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=Size()):
        """``sample_shape + batch_shape + event_shape`` as a Size."""
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        return Size(sample_shape + self._batch_shape + self._event_shape)

    def _validate_sample(self, value):
        """Checks a value given to ``log_prob``/``cdf``/``icdf``: a Tensor whose rightmost
        dimensions are ``event_shape``, broadcastable with ``batch_shape + event_shape``, inside
        the support; raises ValueError as PyTorch does."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.size()) - len(self._event_shape)
        if value.size()[event_dim_start:] != self._event_shape:
            raise ValueError("The right-most size of value must match event_shape: "
                             f"{value.size()} vs {self._event_shape}.")
        actual_shape = value.size()
        expected_shape = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError("Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual_shape} vs {expected_shape}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample "
                          "validation. Please initialize the distribution with "
                          "`validate_args=False` to turn off validation.", stacklevel=2)
            return
        if support is None:
            raise AssertionError("support is unexpectedly None")
        head = f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) "
        tail = f"to be within the support ({support!r}) of the distribution "
        _require(support.check(value),
                 lambda: f"{head}{tail}{self!r}, but found invalid values:\n{value}",
                 f"{head}{tail}{type(self).__name__}, but found invalid values")

    def _get_checked_instance(self, cls, _instance=None):
        """The instance ``expand`` fills: ``_instance``, or a bare one of this class (which a
        subclass with its own ``__init__`` must not rely on)."""
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self):
        shown = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
            for p in shown)
        return f"{type(self).__name__}({args})"
