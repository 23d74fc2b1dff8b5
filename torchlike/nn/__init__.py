"""torchlike.nn: mirrors ``torch.nn`` -- Module, Parameter, the standard layers, init, losses.

The maths lives in ``torchlike.nn.functional``; each layer holds its parameters and calls it.
"""
from . import functional as functional
