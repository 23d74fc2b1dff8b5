"""``torchlike.linalg``: mirrors ``torch.linalg``."""
