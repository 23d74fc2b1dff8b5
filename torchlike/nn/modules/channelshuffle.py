"""Mirrors ``torch.nn.modules.channelshuffle``, where PyTorch defines ChannelShuffle (torchlike
writes it in shape.py)."""
from .shape import ChannelShuffle as ChannelShuffle
