"""``import torch`` answered by torchlike: an import hook that aliases ``torch`` and every
``torch.X.Y`` to ``torchlike`` and ``torchlike.X.Y`` (``python -m torchlike script.py``, or
``torchlike.install_as_torch()`` in a notebook or a test).

NOTE [ torch as an alias ]
A meta path finder, first on ``sys.meta_path``, answers ``torch`` with the torchlike module itself
and ``torch.X.Y`` with the module ``torchlike.X.Y`` (imported as usual, then entered in
``sys.modules`` under both names): ``sys.modules["torch.nn"] is torchlike.nn``, so a class has
one identity whichever name imported it.  A name torchlike has no module for is not found, and
Python raises its own ``ModuleNotFoundError: No module named 'torch.distributed'``.  The import
system stamps the ``torch.*`` spec on the module it loads; the loader puts the module's own spec
back, so torchlike's modules keep their names, files and specs.

Processes: the hook lives in this process.  ``multiprocessing``'s 'spawn' children (DataLoader
workers, ``torchlike.multiprocessing.spawn``) re-run the main script before anything else, so
while the hook is installed the data a spawn child reads first carries one more entry, which,
when unpickled in the child, imports torchlike and installs the hook there too.  A 'fork' child
inherits the hook; a 'forkserver' server and an unrelated ``subprocess`` run of Python do not
get it (run those with ``python -m torchlike`` themselves).

Real torch and torchlike cannot both be ``torch`` in one process: installing refuses when real
torch is already imported.
"""
import importlib
import importlib.abc
import importlib.util
import multiprocessing.spawn
import os
import sys

__all__ = ["install_as_torch", "uninstall_as_torch"]

_ALIAS, _TARGET = "torch", "torchlike"


def _is_torchlike(module):
    name = getattr(module, "__name__", "")
    return name == _TARGET or name.startswith(_TARGET + ".")


def _target(fullname):
    """'torch.nn.functional' -> 'torchlike.nn.functional' (None for other names)."""
    if fullname == _ALIAS or fullname.startswith(_ALIAS + "."):
        return _TARGET + fullname[len(_ALIAS):]
    return None


class _TorchFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``torch.X.Y`` where torchlike has ``torchlike.X.Y`` and loads it as that module."""

    def find_spec(self, fullname, path=None, target=None):
        name = _target(fullname)
        if name is None:
            return None
        try:
            found = importlib.util.find_spec(name)
        except ModuleNotFoundError:   # a parent is missing: then so is this module
            return None
        if found is None:
            return None
        return importlib.util.spec_from_loader(
            fullname, self, origin=found.origin,
            is_package=found.submodule_search_locations is not None)

    def create_module(self, spec):
        module = importlib.import_module(_target(spec.name))
        spec.loader_state = module.__spec__   # the import system overwrites it: see exec_module
        return module

    def exec_module(self, module):
        module.__spec__ = module.__spec__.loader_state   # NOTE [ torch as an alias ]


_FINDER = _TorchFinder()
_get_preparation_data = multiprocessing.spawn.get_preparation_data


class _InstallInChild:
    """An entry of a spawn child's preparation data: unpickled, it installs the hook there
    (before the child re-runs the main script) from the torchlike this process imported."""

    def __reduce__(self):
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        return exec, (f"import sys\nsys.path.insert(0, {root!r})\nimport torchlike\n"
                      f"torchlike.install_as_torch()\n",)


def _preparation_data(name):
    data = _get_preparation_data(name)
    data["torchlike_install_as_torch"] = _InstallInChild()
    return data


def _real_torch():
    """The module path of a real torch imported in this process, or None."""
    for key in (_ALIAS, *(k for k in list(sys.modules) if k.startswith(_ALIAS + "."))):
        module = sys.modules.get(key)
        if module is not None and not _is_torchlike(module):
            return getattr(module, "__file__", None) or key
    return None


def install_as_torch():
    """Make ``import torch`` (and ``import torch.nn``, ``from torch.utils.data import
    DataLoader``, ...) import torchlike in this process and its spawn children; what
    ``python -m torchlike script.py`` does before running the script.

    Raises:
        RuntimeError: real torch is already imported in this process.

    Example::

        import torchlike
        torchlike.install_as_torch()
        import torch.nn as nn        # torchlike.nn
    """
    found = _real_torch()
    if found is not None:
        raise RuntimeError(
            f"install_as_torch(): real torch is already imported in this process ({found}); "
            "torchlike cannot be `torch` too. Call install_as_torch() before anything imports "
            "torch (e.g. in a fresh kernel), or run the program with `python -m torchlike`.")
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    sys.modules[_ALIAS] = sys.modules[_TARGET]
    multiprocessing.spawn.get_preparation_data = _preparation_data


def uninstall_as_torch():
    """Undo ``install_as_torch``: remove the hook and the ``torch`` names it entered in
    ``sys.modules`` (modules that imported ``torch`` keep the torchlike modules they hold)."""
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    for key in [k for k in sys.modules if _target(k) is not None]:
        if _is_torchlike(sys.modules[key]):
            del sys.modules[key]
    if multiprocessing.spawn.get_preparation_data is _preparation_data:
        multiprocessing.spawn.get_preparation_data = _get_preparation_data
