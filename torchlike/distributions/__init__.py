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
from .kl import kl_divergence as kl_divergence, register_kl as register_kl

__all__ = [
    "Distribution",
    "ExponentialFamily",
    "kl_divergence",
    "register_kl",
]
