"""Mirrors ``torch.distributed.elastic.utils``: the launcher's logger."""
