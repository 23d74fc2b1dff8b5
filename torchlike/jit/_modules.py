"""The objects ``torchlike.jit`` returns: ScriptModule and its traced and scripted kinds, which
mirror a module's structure and share its parameters and buffers, and ScriptFunction.

NOTE [ jit modules mirror the original ]
torch's ``trace`` and ``script`` return a new module tree (``TopLevelTracedModule`` /
``RecursiveScriptModule``, one per submodule, each showing ``original_name``) whose parameters
and buffers are the original's own Tensors.  torchlike builds the same: each mirror registers
the original's Parameter and buffer objects (so ``parameters()``, ``state_dict()``,
``load_state_dict`` and an optimizer over either module act on the same Tensors) and a mirror
of each child; its own ``training`` flags are separate from the original's.  Attributes the
mirror does not have (a method, ``in_features``) are read from the original.  The top-level
forward runs the program (NOTE [ traced programs ] in _program.py); a traced module's children
run their original's forward eagerly, a scripted module's children are scripted themselves.
``copy.deepcopy`` copies the original and captures the copy again (torch's copy of a traced
module is a RecursiveScriptModule, and so is torchlike's); a ScriptFunction copies as itself.
"""
import copy
import json
import typing

import jax

from .. import export
from .._tensor import Tensor
from ..nn.modules.module import Module
from . import _program

NAMES = "torchlike.jit.json"   # the extra file with the modules' original names


class Attribute(typing.NamedTuple):
    """Mirrors ``torch.jit.Attribute``: a value with its TorchScript type; assigned on a
    ScriptModule, the module keeps the value."""
    value: typing.Any
    type: typing.Any


class ScriptModule(Module):
    """Mirrors ``torch.jit.ScriptModule``: the base of what ``trace`` and ``script`` return, and
    as a base class of user code (the pre-1.2 style) a Module whose ``@script_method`` methods
    run as Python and whose ``Attribute`` assignments keep their value."""

    def __setattr__(self, name, value):
        if isinstance(value, Attribute):
            value = value.value
        super().__setattr__(name, value)


class _Mirror(ScriptModule):
    """What TracedModule and RecursiveScriptModule share: NOTE [ jit modules mirror the
    original ]."""

    _child = None   # the class of a child's mirror

    def __init__(self, original, name=None):
        super().__init__()
        object.__setattr__(self, "_original", original)
        object.__setattr__(self, "original_name", name or type(original).__name__)
        object.__setattr__(self, "training", original.training)
        self._parameters.update(original._parameters)
        self._buffers.update(original._buffers)
        self._non_persistent_buffers_set.update(original._non_persistent_buffers_set)
        for key, child in original._modules.items():
            self._modules[key] = None if child is None else self._child(child)

    def _get_name(self):
        return self.original_name

    def extra_repr(self):
        return f"original_name={self.original_name}"

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            original = self.__dict__.get("_original")
            if original is None or name.startswith("__"):
                raise
            return getattr(original, name)

    def _flags_to(self, other):
        """``other`` (a copy of this tree) takes this tree's training flags."""
        for a, b in zip(self.modules(), other.modules()):
            object.__setattr__(b, "training", a.training)
        return other

    def _settings(self):
        """(original module, this mirror's training flag) for every module of the tree."""
        pairs = [(self._original, self.training)]
        for key, child in self._modules.items():
            if isinstance(child, _Mirror):
                pairs += child._settings()
        return pairs


class TracedModule(_Mirror):
    """Mirrors ``torch.jit.TracedModule``: a submodule of a traced module; it shares the
    original's parameters and buffers, and calling it runs the original's forward."""

    def forward(self, *args, **kwargs):
        with _program.modes(self._settings()):
            return self._original(*args, **kwargs)

    @property
    def code(self):
        return (f"# {self.original_name}: a submodule of a traced module; its computation is "
                "part of the top-level module's program (see its .code)\n")

    graph = inlined_graph = code


TracedModule._child = TracedModule


class _Program:
    """What the objects that run a program (their ``_runner``) share: its StableHLO text as
    ``.code`` / ``.graph`` and ``save``."""

    @property
    def code(self):
        return self._runner.text()

    graph = inlined_graph = code

    def save(self, f, _extra_files=None):
        """Mirrors ``torch.jit.ScriptModule.save``: see :func:`torchlike.jit.save`."""
        save(self, f, _extra_files)


class TopLevelTracedModule(_Program, TracedModule):
    """Mirrors ``torch.jit.TopLevelTracedModule``: what ``torchlike.jit.trace(module, ...)``
    returns.  Calls run the captured program compiled, with the module's live parameters;
    gradients reach them (NOTE [ traced programs ] in _program.py).  ``.code`` / ``.graph`` show
    the program's StableHLO; ``.save(path)`` writes it (``torchlike.jit.load`` runs it without
    the model's code)."""

    def __init__(self, original, runner):
        super().__init__(original)
        object.__setattr__(self, "_runner", runner)

    def forward(self, *args, **kwargs):
        return self._runner(args, kwargs)

    def __deepcopy__(self, memo):
        """As torch's: a RecursiveScriptModule, here the program traced again on a deep copy of
        the original (its own parameters)."""
        original = copy.deepcopy(self._original, memo)
        return self._flags_to(RecursiveScriptModule(original,
                                                    runner=self._runner.for_copy(original)))


class RecursiveScriptModule(_Program, _Mirror):
    """Mirrors ``torch.jit.RecursiveScriptModule``: what ``torchlike.jit.script(module)`` and
    ``torchlike.jit.load`` return.  A scripted module's calls run its forward compiled where it
    can be one program (one per input structure and training mode; each shape specialised by
    jit), eagerly where it cannot (one warning says why); it shares the original's parameters
    and buffers, so gradients and optimizer steps act on them."""

    def __init__(self, original, name=None, runner=None):
        super().__init__(original, name)
        if runner is None:
            runner = _program.ScriptRunner(original, self._settings)
        object.__setattr__(self, "_runner", runner)

    def forward(self, *args, **kwargs):
        return self._runner(args, kwargs)

    def __deepcopy__(self, memo):
        """A scripted copy of a deep copy of the original (a loaded module: the same program
        with copies of its state)."""
        runner = self._runner
        if hasattr(runner, "copy_loaded"):
            return self._flags_to(runner.copy_loaded(self))
        original = copy.deepcopy(self._original, memo)
        return self._flags_to(RecursiveScriptModule(original, name=self.original_name,
                                                    runner=runner.for_copy(original)))

    def _get_name(self):
        return "RecursiveScriptModule"

    # a scripted Sequential / ModuleList / ModuleDict indexes, iterates and has a length, as
    # torch's does (a traced module does not)
    def _container(self):
        if not hasattr(type(self._original), "__getitem__"):
            raise TypeError(f"'{type(self).__name__}' object is not subscriptable")
        return self._modules

    def __getitem__(self, idx):
        mods = self._container()
        if isinstance(idx, str):
            return mods[idx]
        return list(mods.values())[idx]

    def __len__(self):
        return len(self._container())

    def __iter__(self):
        return iter(self._container().values())


RecursiveScriptModule._child = RecursiveScriptModule


class ScriptFunction(_Program):
    """Mirrors ``torch.jit.ScriptFunction``: what ``trace`` and ``script`` return for a
    function; calling it runs the function's program (``.code`` / ``.graph``: its StableHLO,
    ``.save(path)``: see :func:`torchlike.jit.save`)."""

    def __init__(self, fn, runner):
        self._fn, self._runner = fn, runner
        self.__name__ = getattr(fn, "__name__", type(fn).__name__)
        self.__qualname__ = getattr(fn, "__qualname__", self.__name__)
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__wrapped__ = fn

    def __call__(self, *args, **kwargs):
        return self._runner(args, kwargs)

    def __deepcopy__(self, memo):
        return self   # as a function is: it holds no state of its own

    @property
    def name(self):
        return self.__name__

    @property
    def qualified_name(self):
        return f"__torch__.{self.__qualname__}"

    def __repr__(self):
        return f"<torchlike.jit.ScriptFunction object at {hex(id(self))}>"


ScriptFunction.__module__ = "torchlike.jit"
for _cls in (ScriptModule, TracedModule, TopLevelTracedModule, RecursiveScriptModule):
    _cls.__module__ = "torchlike.jit"


def save(m, f, _extra_files=None):
    """Mirrors ``torch.jit.save``: write the traced or scripted ``m`` (a ScriptModule or
    ScriptFunction) to ``f`` (a path or a binary file object) as one file that
    :func:`torchlike.jit.load` runs without the model's code (NOTE [ jit files ] in
    _serialization.py).

    Args:
        m: what ``trace`` or ``script`` returned (a scripted module called at least once), or
            what ``load`` returned.
        f: a path or a writable binary file object.
        _extra_files: ``{name: str or bytes}`` stored beside the program.

    Example::

        >>> torchlike.jit.save(torchlike.jit.trace(model.eval(), x), "model.pt")
        >>> torchlike.jit.load("model.pt")(x)
    """
    runner = getattr(m, "_runner", None)
    if runner is None:   # torch calls m.save, which a plain Module does not have
        raise AttributeError(f"'{type(m).__name__}' object has no attribute 'save'")
    ep = runner.exported_program()
    if isinstance(m, ScriptFunction):
        names, training = {"": m.__name__}, {}
    else:
        mirrors = [(k, mod) for k, mod in m.named_modules() if isinstance(mod, _Mirror)]
        names = {k: mod.original_name for k, mod in mirrors}
        training = {k: mod.training for k, mod in mirrors}   # torch's file keeps each flag
    extra = {k: v.decode() if isinstance(v, bytes) else v
             for k, v in (_extra_files or {}).items()}
    extra[NAMES] = json.dumps({"original_names": names, "training": training})
    export.save(ep, f, extra_files=extra)


def tensors_only(outputs):
    """The Tensors of an output pytree."""
    return [t for t in jax.tree_util.tree_leaves(outputs, is_leaf=lambda x: isinstance(x, Tensor))
            if isinstance(t, Tensor)]
