"""torchlike.utils: mirrors ``torch.utils`` (hooks; data loading comes with torchlike.utils.data)."""
from . import hooks as hooks
