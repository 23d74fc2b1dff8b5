"""torchlike.optim: mirrors ``torch.optim`` (optimizers and learning-rate schedulers)."""
from . import optimizer as optimizer
from .optimizer import Optimizer as Optimizer
from .sgd import SGD as SGD
from .lbfgs import LBFGS as LBFGS
from .adadelta import Adadelta as Adadelta
from .adagrad import Adagrad as Adagrad
from .adam import Adam as Adam, AdamW as AdamW
from .adamax import Adamax as Adamax
from .asgd import ASGD as ASGD
from .nadam import NAdam as NAdam
from .radam import RAdam as RAdam
from .rmsprop import RMSprop as RMSprop
from .rprop import Rprop as Rprop
from . import lr_scheduler as lr_scheduler
