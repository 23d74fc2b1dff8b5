"""``torch.amp``: automatic mixed precision -- ``autocast`` regions and ``GradScaler``
(docs/architecture.md §5.7; NOTE [ autocast policy ] in ``_policy.py``)."""
from .autocast_mode import autocast as autocast
from .autocast_mode import custom_bwd as custom_bwd
from .autocast_mode import custom_fwd as custom_fwd
from .autocast_mode import is_autocast_available as is_autocast_available
from .grad_scaler import GradScaler as GradScaler

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available", "GradScaler"]
