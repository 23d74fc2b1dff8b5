"""Mirrors ``torch.optim.adamw``, where PyTorch defines AdamW (torchlike writes it beside Adam,
whose rule it shares)."""
from .adam import AdamW as AdamW
