"""Dropout layers (mirror ``torch.nn``'s): active in training mode only."""
from .. import functional as F
from .module import Module


class _DropoutNd(Module):
    fn = None

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return type(self).fn(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Mirrors ``torch.nn.Dropout``: zero each element with probability p, scale the rest by
    1 / (1 - p)."""
    fn = F.dropout


class Dropout1d(_DropoutNd):
    """Mirrors ``torch.nn.Dropout1d``: zero whole channels of (N, C, L) or (C, L) inputs."""
    fn = F.dropout1d


class Dropout2d(_DropoutNd):
    """Mirrors ``torch.nn.Dropout2d``: zero whole channels of (N, C, H, W) inputs."""
    fn = F.dropout2d


class Dropout3d(_DropoutNd):
    """Mirrors ``torch.nn.Dropout3d``: zero whole channels of (N, C, D, H, W) inputs."""
    fn = F.dropout3d


class AlphaDropout(_DropoutNd):
    """Mirrors ``torch.nn.AlphaDropout``: dropout that keeps SELU's mean and variance."""
    fn = F.alpha_dropout


class FeatureAlphaDropout(_DropoutNd):
    """Mirrors ``torch.nn.FeatureAlphaDropout``: alpha dropout of whole channels."""
    fn = F.feature_alpha_dropout
