"""torchlike.utils: mirrors ``torch.utils`` (checkpoint, data, hooks).

``utils.checkpoint`` is built on ``torchlike.func``, which needs ``nn``, whose modules need
``utils.hooks``: so, as in ``torch.utils``, this package does not import it, and
``torchlike/__init__.py`` does, once ``nn`` and ``func`` are loaded."""
from . import data as data
from . import hooks as hooks
