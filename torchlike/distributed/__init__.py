"""Mirrors ``torch.distributed``."""
