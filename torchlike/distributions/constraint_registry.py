"""Mirrors ``torch.distributions.constraint_registry``: ``biject_to`` and ``transform_to``, the
two registries that map a Constraint to a Transform from the real line onto it.

- ``biject_to(constraint)``: a bijective transform (``.bijective`` is True and it has
  ``log_abs_det_jacobian``), for samplers that move in the unconstrained space (HMC).
- ``transform_to(constraint)``: any transform onto the constraint, possibly over-parameterized
  (the simplex gets ``SoftmaxTransform``), for unconstrained optimization of constrained
  parameters::

      unconstrained = torchlike.zeros(100, requires_grad=True)
      scale = transform_to(Normal.arg_constraints["scale"])(unconstrained)

Both look a constraint up by its class, so one factory serves every ``interval(a, b)``; users
extend them with ``register`` (or make their own ``ConstraintRegistry``).
"""
from . import constraints, transforms

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]

_NUMBER = (bool, int, float)


class ConstraintRegistry:
    """Mirrors ``torch.distributions.constraint_registry.ConstraintRegistry``: maps Constraint
    classes to factories ``factory(constraint) -> Transform``."""

    def __init__(self):
        self._registry = {}
        super().__init__()

    def register(self, constraint, factory=None):
        """Registers ``factory`` for the class of ``constraint`` (a Constraint subclass or an
        instance of one); without ``factory``, returns a decorator.

        Args:
            constraint: a Constraint subclass, or a singleton instance of one.
            factory (callable): constraint -> Transform.

        Example::

            @transform_to.register(MyConstraint)
            def my_factory(constraint):
                return MyTransform(constraint.param)
        """
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, constraints.Constraint):
            raise TypeError("Expected constraint to be either a Constraint subclass or instance, "
                            f"but got {constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint):
        """The transform onto ``constraint`` (looked up by its exact class).

        Raises:
            NotImplementedError: when no factory is registered for that class.
        """
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(
                f"Cannot transform {type(constraint).__name__} constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


# ---- the registrations (PyTorch's table) --------------------------------------------------------

@biject_to.register(constraints.real)
@transform_to.register(constraints.real)
def _transform_to_real(constraint):
    return transforms.identity_transform


@biject_to.register(constraints.independent)
def _biject_to_independent(constraint):
    return transforms.IndependentTransform(biject_to(constraint.base_constraint),
                                           constraint.reinterpreted_batch_ndims)


@transform_to.register(constraints.independent)
def _transform_to_independent(constraint):
    return transforms.IndependentTransform(transform_to(constraint.base_constraint),
                                           constraint.reinterpreted_batch_ndims)


# NOTE: ``positive`` and ``nonnegative`` are instances of the classes ``greater_than`` and
# ``greater_than_eq``; PyTorch registers ExpTransform for them and then overrides that with this
# factory for the same classes, so ``biject_to(positive)`` is exp followed by a shift by 0.
@biject_to.register(constraints.greater_than)
@biject_to.register(constraints.greater_than_eq)
@transform_to.register(constraints.greater_than)
@transform_to.register(constraints.greater_than_eq)
def _transform_to_greater_than(constraint):
    return transforms.ComposeTransform([transforms.ExpTransform(),
                                        transforms.AffineTransform(constraint.lower_bound, 1)])


@biject_to.register(constraints.less_than)
@transform_to.register(constraints.less_than)
def _transform_to_less_than(constraint):
    return transforms.ComposeTransform([transforms.ExpTransform(),
                                        transforms.AffineTransform(constraint.upper_bound, -1)])


@biject_to.register(constraints.interval)
@biject_to.register(constraints.half_open_interval)
@transform_to.register(constraints.interval)
@transform_to.register(constraints.half_open_interval)
def _transform_to_interval(constraint):
    lo, hi = constraint.lower_bound, constraint.upper_bound
    if isinstance(lo, _NUMBER) and lo == 0 and isinstance(hi, _NUMBER) and hi == 1:
        return transforms.SigmoidTransform()
    return transforms.ComposeTransform([transforms.SigmoidTransform(),
                                        transforms.AffineTransform(lo, hi - lo)])


@biject_to.register(constraints.simplex)
def _biject_to_simplex(constraint):
    return transforms.StickBreakingTransform()


@transform_to.register(constraints.simplex)
def _transform_to_simplex(constraint):
    return transforms.SoftmaxTransform()


@transform_to.register(constraints.lower_cholesky)
def _transform_to_lower_cholesky(constraint):
    return transforms.LowerCholeskyTransform()


@transform_to.register(constraints.positive_definite)
@transform_to.register(constraints.positive_semidefinite)
def _transform_to_positive_definite(constraint):
    return transforms.PositiveDefiniteTransform()


@biject_to.register(constraints.corr_cholesky)
@transform_to.register(constraints.corr_cholesky)
def _transform_to_corr_cholesky(constraint):
    return transforms.CorrCholeskyTransform()


@biject_to.register(constraints.cat)
def _biject_to_cat(constraint):
    return transforms.CatTransform([biject_to(c) for c in constraint.cseq], constraint.dim,
                                   constraint.lengths)


@transform_to.register(constraints.cat)
def _transform_to_cat(constraint):
    return transforms.CatTransform([transform_to(c) for c in constraint.cseq], constraint.dim,
                                   constraint.lengths)


@biject_to.register(constraints.stack)
def _biject_to_stack(constraint):
    return transforms.StackTransform([biject_to(c) for c in constraint.cseq], constraint.dim)


@transform_to.register(constraints.stack)
def _transform_to_stack(constraint):
    return transforms.StackTransform([transform_to(c) for c in constraint.cseq], constraint.dim)
