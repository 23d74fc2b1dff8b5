"""torchlike.distributions: mirrors ``torch.distributions`` -- parameterizable probability
distributions, constraints, transforms and KL divergences, written with torchlike's own ops so
that ``rsample()`` and ``log_prob()`` are recorded for ``.backward()`` and trace under
``torchlike.compile`` and ``torchlike.func``.  Sampling draws from torchlike's generators
(``torchlike.manual_seed``).

Example:
    >>> from torchlike.distributions import Normal, kl_divergence
    >>> p = Normal(torchlike.tensor(0.0, requires_grad=True), 1.0)
    >>> p.log_prob(p.rsample((10,))).mean().backward()
"""
from . import constraints as constraints
from . import transforms as transforms
from . import utils as utils
from .constraint_registry import biject_to as biject_to, transform_to as transform_to
from .kl import kl_divergence as kl_divergence, register_kl as register_kl
from .transforms import (
    AbsTransform as AbsTransform, AffineTransform as AffineTransform,
    CatTransform as CatTransform, ComposeTransform as ComposeTransform,
    CorrCholeskyTransform as CorrCholeskyTransform,
    CumulativeDistributionTransform as CumulativeDistributionTransform,
    ExpTransform as ExpTransform, IndependentTransform as IndependentTransform,
    LowerCholeskyTransform as LowerCholeskyTransform,
    PositiveDefiniteTransform as PositiveDefiniteTransform, PowerTransform as PowerTransform,
    ReshapeTransform as ReshapeTransform, SigmoidTransform as SigmoidTransform,
    SoftmaxTransform as SoftmaxTransform, SoftplusTransform as SoftplusTransform,
    StackTransform as StackTransform, StickBreakingTransform as StickBreakingTransform,
    TanhTransform as TanhTransform, Transform as Transform,
    identity_transform as identity_transform)

# The distributions: one line per class, in alphabetical order.
from .distribution import Distribution as Distribution
from .exp_family import ExponentialFamily as ExponentialFamily
from .bernoulli import Bernoulli as Bernoulli
from .binomial import Binomial as Binomial
from .categorical import Categorical as Categorical
from .geometric import Geometric as Geometric
from .independent import Independent as Independent
from .lkj_cholesky import LKJCholesky as LKJCholesky
from .logistic_normal import LogisticNormal as LogisticNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal as LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily as MixtureSameFamily
from .multinomial import Multinomial as Multinomial
from .multivariate_normal import MultivariateNormal as MultivariateNormal
from .negative_binomial import NegativeBinomial as NegativeBinomial
from .one_hot_categorical import OneHotCategorical as OneHotCategorical
from .one_hot_categorical import (
    OneHotCategoricalStraightThrough as OneHotCategoricalStraightThrough)
from .poisson import Poisson as Poisson
from .relaxed_bernoulli import RelaxedBernoulli as RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical as RelaxedOneHotCategorical
from .transformed_distribution import TransformedDistribution as TransformedDistribution
from .wishart import Wishart as Wishart

# PyTorch's __all__: every distribution class imported above, the two registries, the KL
# functions and the transforms' names.
__all__ = sorted(name for name, value in list(globals().items())
                 if isinstance(value, type) and issubclass(value, Distribution))
__all__ += ["biject_to", "kl_divergence", "register_kl", "transform_to"]
__all__ += transforms.__all__
