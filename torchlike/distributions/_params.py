"""Parameters given as ``probs`` or ``logits`` (but not both), shared by the discrete
distributions whose torch classes repeat the same constructor and ``expand`` lines."""
import numbers

from .._size import Size
from .utils import broadcast_all

PROBS_OR_LOGITS = ("probs", "logits")


def init_probs_or_logits(dist, probs, logits, total_count=None):
    """Sets ``dist.probs`` or ``dist.logits`` (broadcast to a Tensor), ``dist._param`` and, when
    given, ``dist.total_count`` broadcast with the parameter and cast to its dtype.  Returns the
    batch shape: ``()`` for a Python number, else the parameter's shape."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    name, given = ("probs", probs) if probs is not None else ("logits", logits)
    if total_count is None:
        param, = broadcast_all(given)
    else:
        count, param = broadcast_all(total_count, given)
        dist.total_count = count.type_as(param)
    setattr(dist, name, param)
    dist._param = param
    if total_count is None and isinstance(given, numbers.Number):
        return Size()
    return param.size()


def expand_params(dist, new, shape, names=PROBS_OR_LOGITS):
    """``new``'s parameters among ``names`` that ``dist`` holds (a lazy ``probs`` / ``logits``
    only once computed), expanded to ``shape``; ``_param`` follows the one given."""
    for name in names:
        if name in dist.__dict__:
            setattr(new, name, getattr(dist, name).expand(shape))
            if name in PROBS_OR_LOGITS:
                new._param = getattr(new, name)
