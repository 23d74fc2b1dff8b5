"""Mirrors ``torch.nn.modules.flatten``, where PyTorch defines Flatten and Unflatten (torchlike
writes them in shape.py)."""
from .shape import Flatten as Flatten, Unflatten as Unflatten
