"""torchlike.distributions: mirrors ``torch.distributions`` -- parameterizable probability
distributions, constraints, transforms and KL divergences, written with torchlike's own ops so
that ``rsample()`` and ``log_prob()`` are recorded for ``.backward()`` and trace under
``torchlike.compile`` and ``torchlike.func``.  Sampling draws from torchlike's generators
(``torchlike.manual_seed``).
"""
from . import constraints as constraints
from . import utils as utils
from .distribution import Distribution as Distribution
from .exp_family import ExponentialFamily as ExponentialFamily
# discrete, multivariate and composite distributions
from .bernoulli import Bernoulli as Bernoulli
from .binomial import Binomial as Binomial
from .categorical import Categorical as Categorical
from .geometric import Geometric as Geometric
from .lowrank_multivariate_normal import LowRankMultivariateNormal as LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily as MixtureSameFamily
from .multinomial import Multinomial as Multinomial
from .multivariate_normal import MultivariateNormal as MultivariateNormal
from .one_hot_categorical import (OneHotCategorical as OneHotCategorical,
                                  OneHotCategoricalStraightThrough as
                                  OneHotCategoricalStraightThrough)
from .poisson import Poisson as Poisson
from .kl import kl_divergence as kl_divergence, register_kl as register_kl

__all__ = [
    # discrete, multivariate and composite distributions
    "Bernoulli",
    "Binomial",
    "Categorical",
    "Geometric",
    "LowRankMultivariateNormal",
    "MixtureSameFamily",
    "Multinomial",
    "MultivariateNormal",
    "OneHotCategorical",
    "OneHotCategoricalStraightThrough",
    "Poisson",
    "Distribution",
    "ExponentialFamily",
    "kl_divergence",
    "register_kl",
]
