"""Mirrors ``torch.nn.modules.upsampling``, where PyTorch defines Upsample and its 2-d forms
(torchlike writes them in shape.py)."""
from .shape import (
    Upsample as Upsample, UpsamplingBilinear2d as UpsamplingBilinear2d,
    UpsamplingNearest2d as UpsamplingNearest2d)
