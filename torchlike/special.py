"""torchlike.special: mirrors torch.special."""
