"""Mirrors ``torch.nn.modules.pixelshuffle``, where PyTorch defines PixelShuffle and
PixelUnshuffle (torchlike writes them in shape.py)."""
from .shape import PixelShuffle as PixelShuffle, PixelUnshuffle as PixelUnshuffle
