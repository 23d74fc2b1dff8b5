"""torchlike.optim: mirrors ``torch.optim`` (optimizers and learning-rate schedulers)."""
from . import optimizer as optimizer
from .optimizer import Optimizer as Optimizer
from .sgd import SGD as SGD
