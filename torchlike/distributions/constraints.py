"""Mirrors ``torch.distributions.constraints``: the regions a distribution's parameters and
samples live in.

A constraint's ``check(value)`` returns a boolean Tensor of shape ``value.shape[:-event_dim]``
(one entry per event); ``is_discrete`` and ``event_dim`` describe the region.  The singletons
(``real``, ``positive``, ``simplex``, ...) and the factories (``interval(lo, hi)``,
``independent(c, n)``, ``cat(...)``, ...) are PyTorch's, with the same reprs (the class name
without its leading underscore).
"""
from .. import _creation as C
from .. import _dtype as D
from .. import linalg
from .._info import finfo
from .._ops.pointwise import where
from .._ops.shape import cat as _cat, stack as _stack

__all__ = [
    "Constraint", "boolean", "cat", "corr_cholesky", "dependent", "dependent_property",
    "greater_than", "greater_than_eq", "independent", "integer_interval", "interval",
    "half_open_interval", "is_dependent", "less_than", "lower_cholesky", "lower_triangular",
    "MixtureSameFamilyConstraint", "multinomial", "nonnegative", "nonnegative_integer", "one_hot",
    "positive", "positive_semidefinite", "positive_definite", "positive_integer", "real",
    "real_vector", "simplex", "square", "stack", "symmetric", "unit_interval",
]


class Constraint:
    """Mirrors ``torch.distributions.constraints.Constraint``: the abstract region a variable is
    valid in.

    Attributes:
        is_discrete (bool): whether the region is discrete (default False).
        event_dim (int): how many rightmost dimensions form one event; ``check`` reduces them.
    """
    is_discrete = False
    event_dim = 0

    def check(self, value):
        """A boolean Tensor of shape ``sample_shape + batch_shape``: whether each event of
        ``value`` lies in the region."""
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__[1:] + "()"


def _fold_events(result, ndims):
    """``result`` with its ``ndims`` rightmost dimensions reduced by all()."""
    if ndims == 0:
        return result
    return result.reshape(tuple(result.shape[:result.dim() - ndims]) + (-1,)).all(-1)


class _Dependent(Constraint):
    """Mirrors ``torch.distributions.constraints.dependent``: a region that depends on other
    variables (``Uniform``'s support depends on ``low`` and ``high``), which no coordinate-wise
    check can decide.  ``is_discrete`` / ``event_dim`` are known only when given."""

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._is_discrete = is_discrete
        self._event_dim = event_dim
        super().__init__()

    @property
    def is_discrete(self):
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self):
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        """``constraints.dependent(is_discrete=True, event_dim=1)``: a dependent constraint
        whose static attributes are known."""
        if is_discrete is NotImplemented:
            is_discrete = self._is_discrete
        if event_dim is NotImplemented:
            event_dim = self._event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, x):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint):
    """Mirrors ``torch.distributions.constraints.is_dependent``: whether ``constraint`` is a
    dependent one (validation skips those).

    Example:
        >>> is_dependent(constraints.dependent), is_dependent(constraints.real)
        (True, False)
    """
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """Mirrors ``torch.distributions.constraints.dependent_property``: a ``@property`` that reads
    as a dependent constraint on the class (``Uniform.support``) and as the property's value on
    an instance.

    Example::

        @constraints.dependent_property(is_discrete=False, event_dim=0)
        def support(self):
            return constraints.interval(self.low, self.high)
    """

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        property.__init__(self, fn)
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    def __call__(self, fn):
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """Mirrors ``torch.distributions.constraints.independent``: ``base_constraint`` with its
    ``reinterpreted_batch_ndims`` rightmost batch dimensions folded into the event (an event is
    valid when all its entries are)."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        if not isinstance(base_constraint, Constraint):
            raise AssertionError("base_constraint must be a Constraint, got "
                                 f"{type(base_constraint).__name__}")
        if not isinstance(reinterpreted_batch_ndims, int):
            raise AssertionError("reinterpreted_batch_ndims must be an int, got "
                                 f"{type(reinterpreted_batch_ndims).__name__}")
        if reinterpreted_batch_ndims < 0:
            raise AssertionError("reinterpreted_batch_ndims must be >= 0, got "
                                 f"{reinterpreted_batch_ndims}")
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__()

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        if result.dim() < self.reinterpreted_batch_ndims:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.dim()}")
        return _fold_events(result, self.reinterpreted_batch_ndims)

    def __repr__(self):
        return (f"{type(self).__name__[1:]}({self.base_constraint!r}, "
                f"{self.reinterpreted_batch_ndims})")


class MixtureSameFamilyConstraint(Constraint):
    """Mirrors ``torch.distributions.constraints.MixtureSameFamilyConstraint``: the support of a
    ``MixtureSameFamily``: ``base_constraint`` checked against every component (the value gets
    the component dimension back), valid where all components accept it."""

    def __init__(self, base_constraint):
        if not isinstance(base_constraint, Constraint):
            raise AssertionError("base_constraint must be a Constraint, got "
                                 f"{type(base_constraint).__name__}")
        self.base_constraint = base_constraint
        super().__init__()

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim

    def check(self, value):
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        if value.dim() < self.event_dim:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.dim()}")
        return _fold_events(result, result.dim() - (value.dim() - self.event_dim))

    def __repr__(self):
        return f"{type(self).__name__}({self.base_constraint!r})"


class _Boolean(Constraint):
    """The two values {0, 1}."""
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    """One-hot vectors along the last dimension."""
    is_discrete = True
    event_dim = 1

    def check(self, value):
        return ((value == 0) | (value == 1)).all(-1) & value.sum(-1).eq(1)


class _IntegerInterval(Constraint):
    """The integers in [lower_bound, upper_bound]."""
    is_discrete = True

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value):
        return (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return (f"{type(self).__name__[1:]}(lower_bound={self.lower_bound}, "
                f"upper_bound={self.upper_bound})")


class _IntegerLessThan(Constraint):
    """The integers in (-inf, upper_bound]."""
    is_discrete = True

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value):
        return (value % 1 == 0) & (value <= self.upper_bound)

    def __repr__(self):
        return f"{type(self).__name__[1:]}(upper_bound={self.upper_bound})"


class _IntegerGreaterThan(Constraint):
    """The integers in [lower_bound, inf)."""
    is_discrete = True

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound
        super().__init__()

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self):
        return f"{type(self).__name__[1:]}(lower_bound={self.lower_bound})"


class _Real(Constraint):
    """The extended real line [-inf, inf] (NaN is not in it)."""

    def check(self, value):
        return value == value


class _GreaterThan(Constraint):
    """The half line (lower_bound, inf]."""

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound
        super().__init__()

    def check(self, value):
        return self.lower_bound < value

    def __repr__(self):
        return f"{type(self).__name__[1:]}(lower_bound={self.lower_bound})"


class _GreaterThanEq(Constraint):
    """The half line [lower_bound, inf)."""

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound
        super().__init__()

    def check(self, value):
        return self.lower_bound <= value

    def __repr__(self):
        return f"{type(self).__name__[1:]}(lower_bound={self.lower_bound})"


class _LessThan(Constraint):
    """The half line [-inf, upper_bound)."""

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value):
        return value < self.upper_bound

    def __repr__(self):
        return f"{type(self).__name__[1:]}(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    """The closed interval [lower_bound, upper_bound]."""

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return (f"{type(self).__name__[1:]}(lower_bound={self.lower_bound}, "
                f"upper_bound={self.upper_bound})")


class _HalfOpenInterval(Constraint):
    """The interval [lower_bound, upper_bound)."""

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value):
        return (self.lower_bound <= value) & (value < self.upper_bound)

    __repr__ = _Interval.__repr__


class _Simplex(Constraint):
    """The unit simplex along the last dimension: x >= 0 and |x.sum(-1) - 1| < 1e-6."""
    event_dim = 1

    def check(self, value):
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _Multinomial(Constraint):
    """Nonnegative counts whose sum is at most ``upper_bound`` (PyTorch checks this weaker
    condition rather than equality)."""
    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, x):
        return (x >= 0).all(-1) & (x.sum(-1) <= self.upper_bound)


def _is_lower_triangular(value):
    return (value.tril() == value).reshape(tuple(value.shape[:-2]) + (-1,)).all(-1)


class _LowerTriangular(Constraint):
    """Lower-triangular square matrices."""
    event_dim = 2

    def check(self, value):
        return _is_lower_triangular(value)


class _LowerCholesky(Constraint):
    """Lower-triangular matrices with a positive diagonal."""
    event_dim = 2

    def check(self, value):
        return _is_lower_triangular(value) & (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)


class _CorrCholesky(Constraint):
    """Cholesky factors of correlation matrices: lower Cholesky with rows of unit length (within
    ``10 * n * eps``)."""
    event_dim = 2

    def check(self, value):
        tol = finfo(value.dtype).eps * value.size(-1) * 10
        row_norm = linalg.norm(value.detach(), dim=-1)
        unit_rows = (row_norm - 1.0).abs().le(tol).all(-1)
        return _LowerCholesky().check(value) & unit_rows


class _Square(Constraint):
    """Square matrices."""
    event_dim = 2

    def check(self, value):
        return C.full(tuple(value.shape[:-2]), value.shape[-2] == value.shape[-1],
                      dtype=D.bool_, device=value.device)


class _Symmetric(_Square):
    """Symmetric square matrices (within an absolute 1e-6)."""

    def check(self, value):
        if value.shape[-2] != value.shape[-1]:
            return super().check(value)
        return value.isclose(value.mT, atol=1e-6).all(-2).all(-1)


# NOTE: PyTorch checks the matrices' values only when every matrix of the batch is symmetric,
# and otherwise answers the symmetry check alone (a symmetric matrix in such a batch passes
# whatever its eigenvalues).  ``where`` on the batch-wide flag keeps exactly that answer without
# a Python branch on tensor values, so the check also traces.
class _PositiveSemidefinite(_Symmetric):
    """Symmetric matrices with nonnegative eigenvalues."""

    def check(self, value):
        sym = super().check(value)
        return where(sym.all(), linalg.eigvalsh(value).ge(0).all(-1), sym)


class _PositiveDefinite(_Symmetric):
    """Symmetric matrices whose Cholesky factorization succeeds."""

    def check(self, value):
        sym = super().check(value)
        return where(sym.all(), linalg.cholesky_ex(value).info.eq(0), sym)


class _Cat(Constraint):
    """Mirrors ``torch.distributions.constraints.cat``: the constraints ``cseq`` applied to
    consecutive slices of ``lengths`` (default 1 each) along ``dim``, as ``torch.cat`` joins
    them."""

    def __init__(self, cseq, dim=0, lengths=None):
        if not all(isinstance(c, Constraint) for c in cseq):
            raise AssertionError("All elements of cseq must be Constraint instances")
        self.cseq = list(cseq)
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match cseq "
                                 f"({len(self.cseq)})")
        self.dim = dim
        super().__init__()

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        if not -value.dim() <= self.dim < value.dim():
            raise AssertionError(f"dim {self.dim} out of range for value with {value.dim()} "
                                 "dimensions")
        checks, start = [], 0
        for constraint, length in zip(self.cseq, self.lengths):
            checks.append(constraint.check(value.narrow(self.dim, start, length)))
            start += length
        return _cat(checks, self.dim)


class _Stack(Constraint):
    """Mirrors ``torch.distributions.constraints.stack``: the constraints ``cseq`` applied to
    the slices of ``value`` along ``dim``, as ``torch.stack`` joins them."""

    def __init__(self, cseq, dim=0):
        if not all(isinstance(c, Constraint) for c in cseq):
            raise AssertionError("All elements of cseq must be Constraint instances")
        self.cseq = list(cseq)
        self.dim = dim
        super().__init__()

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        dim = max(c.event_dim for c in self.cseq)
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value):
        if not -value.dim() <= self.dim < value.dim():
            raise AssertionError(f"dim {self.dim} out of range for value with {value.dim()} "
                                 "dimensions")
        slices = [value.select(self.dim, i) for i in range(value.size(self.dim))]
        return _stack([c.check(v) for v, c in zip(slices, self.cseq)], self.dim)


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
multinomial = _Multinomial
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
cat = _Cat
stack = _Stack
