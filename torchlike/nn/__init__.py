"""torchlike.nn: mirrors ``torch.nn`` -- Module, Parameter, the standard layers, init, losses.

The maths lives in ``torchlike.nn.functional``; each layer holds its parameters and calls it.
"""
from . import functional as functional, init as init, modules as modules
from .modules.container import (
    ModuleDict as ModuleDict, ModuleList as ModuleList, ParameterDict as ParameterDict,
    ParameterList as ParameterList, Sequential as Sequential)
from .modules.linear import (
    Bilinear as Bilinear, Identity as Identity, LazyLinear as LazyLinear, Linear as Linear)
from .modules.module import Module as Module
from .parameter import (
    Buffer as Buffer, Parameter as Parameter, UninitializedParameter as UninitializedParameter)
