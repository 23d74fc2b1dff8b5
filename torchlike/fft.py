"""``torchlike.fft``: mirrors ``torch.fft``."""
