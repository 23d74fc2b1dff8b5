"""TorchVersion: mirrors ``torch.torch_version``.

NOTE [ the version torchlike reports ]
Programs compare ``torch.__version__`` with the release they need (``torch.__version__ >= "2.0"``,
``>= (1, 12)``) before they pick an API.  torchlike reports the PyTorch release whose behaviour it
reproduces and is tested against, with its own release as the local label:
``2.13.0+torchlike.0.1.0``.  The package's own version (``importlib.metadata``) stays 0.1.0.
"""

import operator
import re

__all__ = ["TorchVersion"]


def _key(v):
    """What a version sorts by, as PEP 440 orders it: the release numbers, a pre-release
    (a < b < rc) before the final release and a development release before both, a post-release
    after it, then the local label ('+cpu'), which sorts after none.  A tuple is a final
    release with no label."""
    if isinstance(v, tuple):
        return tuple(int(x) for x in v), _FINAL, _NONE, _LAST, ""
    public, _, local = str(v).partition("+")
    m = _VERSION.match(public.lower())
    if m is None:
        raise ValueError(f"Invalid version: '{v}'")
    release, pre, pre_n, post_n, dev_n = m.groups()
    if pre:
        stage = (_PRE.index(pre), int(pre_n or 0))
    else:
        stage = _FIRST if dev_n is not None and post_n is None else _FINAL
    return (tuple(int(x) for x in release.split(".")), stage,
            _NONE if post_n is None else (int(post_n or 0),),
            _LAST if dev_n is None else (int(dev_n or 0),), local)


_VERSION = re.compile(r"v?(\d+(?:\.\d+)*)(?:[.-]?(a|b|rc)(\d*))?(?:[.-]?post(\d*))?"
                      r"(?:[.-]?dev(\d*))?$")
_PRE = ("a", "b", "rc")
_FIRST, _FINAL, _NONE, _LAST = (-1,), (3,), (-1,), (1 << 62,)


class TorchVersion(str):
    """A version string that compares as a version with strings and tuples:
    ``TorchVersion('2.13.0+cpu') >= '2.1'`` and ``>= (2, 1)``."""

    def _cmp(self, other, op):
        if not isinstance(other, (str, tuple)):
            return NotImplemented
        a, b = _key(self), _key(other)
        n = max(len(a[0]), len(b[0]))   # 2.13 is 2.13.0
        return op((a[0] + (0,) * (n - len(a[0])),) + a[1:],
                  (b[0] + (0,) * (n - len(b[0])),) + b[1:])

    def __lt__(self, other):
        return self._cmp(other, operator.lt)

    def __le__(self, other):
        return self._cmp(other, operator.le)

    def __gt__(self, other):
        return self._cmp(other, operator.gt)

    def __ge__(self, other):
        return self._cmp(other, operator.ge)

    def __eq__(self, other):
        return self._cmp(other, operator.eq)

    __ne__ = str.__ne__   # as PyTorch's: the strings' inequality
    __hash__ = str.__hash__
