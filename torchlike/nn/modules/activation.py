"""Activation layers (mirror ``torch.nn``'s): each holds its settings and calls nn.functional."""
import warnings

from ... import _creation as C
from .. import functional as F
from ..parameter import Parameter
from .module import Module


def _inplace_suffix(inplace, first=False):
    if not inplace:
        return ""
    return "inplace=True" if first else ", inplace=True"


class _Stateless(Module):
    """An activation without settings: ``forward`` is ``fn(input)``.  PyTorch's constructors of
    these accept and ignore any arguments."""

    fn = None

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return type(self).fn(input)


class Sigmoid(_Stateless):
    """Mirrors ``torch.nn.Sigmoid``."""
    fn = F.sigmoid


class Tanh(_Stateless):
    """Mirrors ``torch.nn.Tanh``."""
    fn = F.tanh


class LogSigmoid(_Stateless):
    """Mirrors ``torch.nn.LogSigmoid``."""
    fn = F.logsigmoid


class Softsign(_Stateless):
    """Mirrors ``torch.nn.Softsign``."""
    fn = F.softsign


class Tanhshrink(_Stateless):
    """Mirrors ``torch.nn.Tanhshrink``."""
    fn = F.tanhshrink


class _InplaceOnly(Module):
    """An activation whose only setting is ``inplace``."""

    fn = None
    show_inplace = True

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return type(self).fn(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_suffix(self.inplace, first=True) if self.show_inplace else ""


class ReLU(_InplaceOnly):
    """Mirrors ``torch.nn.ReLU``: max(0, x)."""
    fn = F.relu


class SELU(_InplaceOnly):
    """Mirrors ``torch.nn.SELU``."""
    fn = F.selu


class SiLU(_InplaceOnly):
    """Mirrors ``torch.nn.SiLU``: x * sigmoid(x)."""
    fn = F.silu


class Mish(_InplaceOnly):
    """Mirrors ``torch.nn.Mish``: x * tanh(softplus(x))."""
    fn = F.mish


class Hardsigmoid(_InplaceOnly):
    """Mirrors ``torch.nn.Hardsigmoid``."""
    fn = F.hardsigmoid
    show_inplace = False


class Hardswish(_InplaceOnly):
    """Mirrors ``torch.nn.Hardswish``."""
    fn = F.hardswish
    show_inplace = False


class Threshold(Module):
    """Mirrors ``torch.nn.Threshold``: x where x > threshold, else value."""

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}{_inplace_suffix(self.inplace)}"


class RReLU(Module):
    """Mirrors ``torch.nn.RReLU``: leaky ReLU with a random slope from U(lower, upper) in
    training and (lower + upper) / 2 in evaluation."""

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}{_inplace_suffix(self.inplace)}"


class Hardtanh(Module):
    """Mirrors ``torch.nn.Hardtanh``: x clamped to [min_val, max_val]."""

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None,
                 max_value=None):
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and rename to `min_val`",
                          FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and rename to `max_val`",
                          FutureWarning, stacklevel=2)
            max_val = max_value
        if max_val <= min_val:
            raise AssertionError
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_suffix(self.inplace)}"


class ReLU6(Hardtanh):
    """Mirrors ``torch.nn.ReLU6``: min(max(0, x), 6)."""

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return _inplace_suffix(self.inplace, first=True)


class _Alpha(Module):
    fn = None

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return type(self).fn(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}{_inplace_suffix(self.inplace)}"


class ELU(_Alpha):
    """Mirrors ``torch.nn.ELU``."""
    fn = F.elu


class CELU(_Alpha):
    """Mirrors ``torch.nn.CELU``."""
    fn = F.celu


class GLU(Module):
    """Mirrors ``torch.nn.GLU``: a * sigmoid(b) for the two halves of ``dim``."""

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class GELU(Module):
    """Mirrors ``torch.nn.GELU`` (``approximate='tanh'`` for the tanh form)."""

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class _Shrink(Module):
    fn = None

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return type(self).fn(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Hardshrink(_Shrink):
    """Mirrors ``torch.nn.Hardshrink``."""
    fn = F.hardshrink


class Softshrink(_Shrink):
    """Mirrors ``torch.nn.Softshrink``."""
    fn = F.softshrink


class LeakyReLU(Module):
    """Mirrors ``torch.nn.LeakyReLU``."""

    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}{_inplace_suffix(self.inplace)}"


class Softplus(Module):
    """Mirrors ``torch.nn.Softplus``: log(1 + exp(beta x)) / beta, linear above threshold."""

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class PReLU(Module):
    """Mirrors ``torch.nn.PReLU``: leaky ReLU with a learned slope (one, or one per channel),
    initialised to ``init``."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(C.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        from .. import init
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class _SoftmaxLike(Module):
    fn = None

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        self.__dict__.setdefault("dim", None)

    def forward(self, input):
        return type(self).fn(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax(_SoftmaxLike):
    """Mirrors ``torch.nn.Softmax``."""
    fn = F.softmax


class Softmin(_SoftmaxLike):
    """Mirrors ``torch.nn.Softmin``."""
    fn = F.softmin


class LogSoftmax(_SoftmaxLike):
    """Mirrors ``torch.nn.LogSoftmax``."""
    fn = F.log_softmax


class Softmax2d(Module):
    """Mirrors ``torch.nn.Softmax2d``: softmax over the channels of (C, H, W) or (N, C, H, W)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D "
                             "instead")
        return F.softmax(input, -3, _stacklevel=5)


# PyTorch defines MultiheadAttention in this module; torchlike writes it in attention.py
from .attention import MultiheadAttention as MultiheadAttention  # noqa: E402
