"""Identity, Linear, Bilinear, LazyLinear (mirror ``torch.nn``'s), thin over nn.functional."""
import math

from ... import _creation as C
from .. import functional as F, init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module


class Identity(Module):
    """Mirrors ``torch.nn.Identity``: returns its input (constructor arguments are ignored)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """Mirrors ``torch.nn.Linear``: y = x W^T + b, with W of shape (out_features, in_features)
    and PyTorch's default initialisation (kaiming_uniform_ with a=sqrt(5); bias from
    U(-1/sqrt(in_features), 1/sqrt(in_features)))."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(C.empty((out_features, in_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(C.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            _uniform_fan_in(self.bias, self.weight)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


def _uniform_fan_in(bias, weight):
    """PyTorch's default bias: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with the weight's fan_in."""
    fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
    bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
    init.uniform_(bias, -bound, bound)



class NonDynamicallyQuantizableLinear(Linear):
    """A Linear under PyTorch's name for MultiheadAttention's output projection (the name shows
    in reprs)."""


class Bilinear(Module):
    """Mirrors ``torch.nn.Bilinear``: y = x1^T A x2 + b, A of shape
    (out_features, in1_features, in2_features), initialised from U(-1/sqrt(in1), 1/sqrt(in1))."""

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(C.empty((out_features, in1_features, in2_features),
                                        device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(C.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class LazyLinear(LazyModuleMixin, Linear):
    """Mirrors ``torch.nn.LazyLinear``: a Linear whose ``in_features`` is read from the first
    input; it then becomes a ``Linear``."""

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        Module.__init__(self)
        self.in_features = 0
        self.out_features = out_features
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        else:
            self.register_parameter("bias", None)
        self._register_lazy_hook()

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.in_features = input.shape[-1]
            self.weight.materialize((self.out_features, self.in_features))
            if self.bias is not None:
                self.bias.materialize((self.out_features,))
            self.reset_parameters()
