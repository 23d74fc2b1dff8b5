"""torchlike.utils: mirrors ``torch.utils`` (hooks)."""
from . import data as data
from . import hooks as hooks
