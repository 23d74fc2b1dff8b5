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
from .bernoulli import Bernoulli as Bernoulli
from .beta import Beta as Beta
from .binomial import Binomial as Binomial
from .categorical import Categorical as Categorical
from .cauchy import Cauchy as Cauchy
from .chi2 import Chi2 as Chi2
from .continuous_bernoulli import ContinuousBernoulli as ContinuousBernoulli
from .dirichlet import Dirichlet as Dirichlet
from .distribution import Distribution as Distribution
from .exp_family import ExponentialFamily as ExponentialFamily
from .exponential import Exponential as Exponential
from .fishersnedecor import FisherSnedecor as FisherSnedecor
from .gamma import Gamma as Gamma
from .generalized_pareto import GeneralizedPareto as GeneralizedPareto
from .geometric import Geometric as Geometric
from .gumbel import Gumbel as Gumbel
from .half_cauchy import HalfCauchy as HalfCauchy
from .half_normal import HalfNormal as HalfNormal
from .independent import Independent as Independent
from .inverse_gamma import InverseGamma as InverseGamma
from .kumaraswamy import Kumaraswamy as Kumaraswamy
from .laplace import Laplace as Laplace
from .lkj_cholesky import LKJCholesky as LKJCholesky
from .log_normal import LogNormal as LogNormal
from .logistic_normal import LogisticNormal as LogisticNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal as LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily as MixtureSameFamily
from .multinomial import Multinomial as Multinomial
from .multivariate_normal import MultivariateNormal as MultivariateNormal
from .negative_binomial import NegativeBinomial as NegativeBinomial
from .normal import Normal as Normal
from .one_hot_categorical import OneHotCategorical as OneHotCategorical
from .one_hot_categorical import (
    OneHotCategoricalStraightThrough as OneHotCategoricalStraightThrough)
from .pareto import Pareto as Pareto
from .poisson import Poisson as Poisson
from .relaxed_bernoulli import RelaxedBernoulli as RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical as RelaxedOneHotCategorical
from .studentT import StudentT as StudentT
from .transformed_distribution import TransformedDistribution as TransformedDistribution
from .uniform import Uniform as Uniform
from .von_mises import VonMises as VonMises
from .weibull import Weibull as Weibull
from .wishart import Wishart as Wishart

# PyTorch's __all__: every distribution class imported above, the two registries, the KL
# functions and the transforms' names.
__all__ = sorted(name for name, value in list(globals().items())
                 if isinstance(value, type) and issubclass(value, Distribution))
__all__ += ["biject_to", "kl_divergence", "register_kl", "transform_to"]
__all__ += transforms.__all__
