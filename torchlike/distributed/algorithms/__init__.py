"""Mirrors ``torch.distributed.algorithms``."""
