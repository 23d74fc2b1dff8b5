"""torchlike.utils: mirrors ``torch.utils`` (checkpoint, data, hooks)."""
from . import checkpoint as checkpoint
from . import data as data
from . import hooks as hooks
