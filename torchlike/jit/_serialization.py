"""``torchlike.jit.save`` / ``load``: a traced or scripted program as torchlike.export's file
(StableHLO from jax.export, the weights, a JSON manifest; nothing pickled), which loads and runs
in a process without the model's code.

NOTE [ jit files ]
``save`` writes the ExportedProgram of the module's captured program (``Program.exported``):
dimension 0 of the inputs is exported as one symbolic batch dimension where the program lowers
so, else every shape is the example's (a call with another shape then fails torch.export's way,
``AssertionError: Guard failed: x.size()[0] == 4``).  A scripted module is captured at its first
call, so it must have been called once before it is saved (its last call's program is saved).
The modules' ``original_name``s and ``training`` flags travel in the extra file
``torchlike.jit.json`` (``load`` restores both, as torch's loaded module keeps its flags).
``load`` returns a ``RecursiveScriptModule`` over ``ExportedProgram.module()``: same parameter
and buffer names as the original's ``state_dict``; gradients reach its parameters and inputs
through the derivative saved beside the program (NOTE [ a differentiable exported module ] in
export/__init__.py).
"""
import json
import os
import zipfile

from .. import export as _export
from ._modules import NAMES, RecursiveScriptModule, _Mirror, save as save


def _is_torchscript(f):
    """Whether ``f`` is a zip with TorchScript's ``constants.pkl``."""
    try:
        if not isinstance(f, (str, os.PathLike)):
            f.seek(0)
        with zipfile.ZipFile(f) as z:
            return any(n.endswith("/constants.pkl") or n == "constants.pkl"
                       for n in z.namelist())
    except Exception:   # noqa: BLE001 -- not a readable zip: not TorchScript either
        return False


class _LoadedRunner:
    def __init__(self, module, program):
        self.module, self.program = module, program

    def __call__(self, args, kwargs):
        return self.module(*args, **kwargs)

    def exported_program(self):
        return self.program

    def copy_loaded(self, mirror):
        """A copy of the loaded ``mirror``: the same program, copies of its current state."""
        module = self.program.module()
        module.load_state_dict(self.module.state_dict())
        copied = RecursiveScriptModule(module, name=mirror.original_name,
                                       runner=_LoadedRunner(module, self.program))
        for (_, a), (_, b) in zip(mirror.named_modules(), copied.named_modules()):
            object.__setattr__(b, "original_name", a.original_name)
        return copied

    def text(self):
        return self.program.mlir_module()


def load(f, map_location=None, _extra_files=None):
    """Mirrors ``torch.jit.load``: the module :func:`save` wrote, as a
    ``RecursiveScriptModule`` that runs its program (no model code needed; differentiable,
    NOTE [ jit files ]).

    Args:
        f: a path or a readable binary file object.
        map_location: a device (or its name) to move the parameters and buffers to.
        _extra_files: a dict whose keys are filled with the stored extra files (bytes).

    Example::

        >>> m = torchlike.jit.load("model.pt", map_location="cpu")
        >>> m(torchlike.randn(4, 8)).shape
    """
    if isinstance(f, (str, os.PathLike)):
        if not os.path.exists(f):
            raise ValueError(f"The provided filename {f} does not exist")
        if os.path.isdir(f):
            raise ValueError(f"The provided filename {f} is a directory")
    extra = {NAMES: None, **{k: None for k in (_extra_files or {})}}
    try:
        ep = _export.load(f, extra_files=extra)
    except RuntimeError:
        if _is_torchscript(f):
            raise RuntimeError(
                "torchlike.jit.load: this is a TorchScript archive written by PyTorch's "
                "torch.jit.save; torchlike runs what torchlike.jit.save or "
                "torchlike.export.save wrote.  Load the model's weights (state_dict) into the "
                "torchlike model and trace it instead") from None
        raise
    if not isinstance(ep, _export.ExportedProgram):
        raise RuntimeError("torch.jit.load: the file holds a training step "
                           "(torchlike.export.export_step); load it with torchlike.export.load")
    manifest = json.loads(extra.pop(NAMES) or "{}")
    names, training = manifest.get("original_names", {}), manifest.get("training", {})
    if _extra_files is not None:
        for k in _extra_files:
            if extra.get(k) is not None:
                _extra_files[k] = extra[k].encode()
    module = ep.module()
    if map_location is not None:
        module.to(map_location)
    loaded = RecursiveScriptModule(module, name=names.get(""),
                                   runner=_LoadedRunner(module, ep))
    for path, mod in loaded.named_modules():
        if path and isinstance(mod, _Mirror):
            object.__setattr__(mod, "original_name", names.get(path, "Module"))
        if path in training:   # the saved module's flags, as torch.jit.load restores them
            object.__setattr__(mod, "training", training[path])
    return loaded
