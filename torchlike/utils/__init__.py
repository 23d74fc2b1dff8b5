"""torchlike.utils: mirrors ``torch.utils`` (hooks)."""
from . import hooks as hooks
