"""``torch.cpu``: the CPU's own namespace; here, its ``amp`` aliases."""
from . import amp as amp

__all__ = ["amp"]
