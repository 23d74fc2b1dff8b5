"""``python -m torchlike script.py``: a program written for PyTorch runs with torchlike answering
``import torch`` (NOTE [ torch as an alias ]), and torchlike's classes are found at PyTorch's
module paths.  Oracles: Python itself (a traceback, argv, exit status as ``python`` gives them)
and real torch (values; the module paths its classes live at)."""
import importlib
import inspect
import json
import os
import pkgutil
import subprocess
import sys

import pytest
import torch

import torchlike

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=ROOT, JAX_PLATFORMS="cpu")

SCRIPT = '''
import importlib, json, os, sys
import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from torch.optim.lr_scheduler import StepLR
from torch.nn.modules.activation import MultiheadAttention
import torchlike


class Rows(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return torch.arange(3.0) * i


def work(i, out_dir):   # runs in a spawned process, which re-imports this script
    with open(os.path.join(out_dir, f"{i}.json"), "w") as f:
        json.dump([torch.__name__, (torch.ones(2) * 21).sum().item()], f)
    raise ValueError(f"process {i} failed")


def main():
    try:
        importlib.import_module("torch.no_such_module")
    except ModuleNotFoundError as e:
        missing = [str(e), e.name]
    try:
        mp.spawn(work, args=(os.getcwd(),), nprocs=1)
    except mp.ProcessRaisedException as e:
        raised = [e.error_index, "ValueError: process 0 failed" in str(e)]
    model = nn.Linear(3, 2)
    StepLR(torch.optim.SGD(model.parameters(), lr=0.1), 1)
    print(json.dumps({
        "name": __name__, "argv": sys.argv, "path0": sys.path[0], "file": __file__,
        "torch": torch is torchlike, "nn": nn is torchlike.nn is sys.modules["torch.nn"],
        "F": F is torchlike.nn.functional, "mha": MultiheadAttention is nn.MultiheadAttention,
        "spec": nn.__spec__.name, "missing": missing, "raised": raised,
        "child": json.load(open("0.json")),
        "batches": [b.tolist() for b in DataLoader(Rows(), batch_size=2)],
        "softmax": F.softmax(torch.tensor([[1.0, 2.0, 3.0]]), dim=1).tolist()}))
    sys.exit(3)


if __name__ == "__main__":
    main()
'''

FAILING_MODULE = '''
import sys


def fail():
    raise ValueError("boom")


print(__name__, sys.argv[1:])
fail()
'''


def _run(args, cwd, module=True):
    cmd = [sys.executable, "-m", "torchlike", *args] if module else [sys.executable, *args]
    return subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True, timeout=180)


def test_script_runs_with_torchlike_as_torch(tmp_path):
    (tmp_path / "prog").mkdir()
    (tmp_path / "prog" / "train.py").write_text(SCRIPT)
    r = _run(["prog/train.py", "--epochs", "2"], cwd=tmp_path)
    assert r.returncode == 3, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["name"] == "__main__"
    assert out["argv"] == ["prog/train.py", "--epochs", "2"]           # as python gives it
    assert out["path0"] == str(tmp_path / "prog")                       # the script's directory
    assert out["file"] == str(tmp_path / "prog" / "train.py")
    assert out["torch"] and out["nn"] and out["F"] and out["mha"]
    assert out["spec"] == "torchlike.nn"     # the module keeps its own spec
    assert out["missing"] == ["No module named 'torch.no_such_module'", "torch.no_such_module"]
    # torch.multiprocessing.spawn's processes re-import the script with torchlike as torch
    assert out["raised"] == [0, True] and out["child"] == ["torchlike", 42.0]
    rows = [torch.arange(3.0) * i for i in range(4)]
    assert out["batches"] == [b.tolist() for b in torch.utils.data.DataLoader(rows, batch_size=2)]
    expect = torch.nn.functional.softmax(torch.tensor([[1.0, 2.0, 3.0]]), dim=1)
    assert out["softmax"][0] == pytest.approx(expect[0].tolist(), rel=1e-6)


UNGUARDED = '''
import torch
from torch.utils.data import DataLoader, Dataset


class Squares(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        return torch.tensor([float(i * i)])


print("set-up")
for batch in DataLoader(Squares(), batch_size=2, num_workers=2):
    print(batch.flatten().tolist())
print("done")
'''


def test_a_script_without_a_main_guard_runs_with_dataloader_workers(tmp_path):
    """PyTorch forks its workers, so a script iterating a loader with workers at its top level
    runs there; torchlike's spawned workers re-run the script only up to the loader, with its
    output discarded (NOTE [ a main script without a guard ]).  Oracle: real torch's run."""
    (tmp_path / "unguarded.py").write_text(UNGUARDED)
    ref = subprocess.run([sys.executable, "unguarded.py"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    got = _run(["unguarded.py"], cwd=tmp_path)
    assert ref.returncode == 0, ref.stderr
    assert got.returncode == 0, got.stderr
    assert got.stdout == ref.stdout


def test_module_form_traceback_and_exit_status_are_pythons(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "mod.py").write_text(FAILING_MODULE)
    ours = _run(["-m", "pkg.mod", "a", "b"], cwd=tmp_path)
    python = _run(["-m", "pkg.mod", "a", "b"], cwd=tmp_path, module=False)
    assert ours.returncode == python.returncode == 1
    assert ours.stdout == python.stdout == "__main__ ['a', 'b']\n"
    assert ours.stderr == python.stderr   # the same traceback, frame for frame
    assert ours.stderr.startswith("Traceback (most recent call last):\n")
    missing = _run(["no_such_script.py"], cwd=tmp_path)
    assert missing.returncode == 2 and "can't open file" in missing.stderr


def test_install_refuses_when_real_torch_is_imported():
    with pytest.raises(RuntimeError, match="real torch is already imported"):
        torchlike.install_as_torch()
    assert torchlike._torch_alias._FINDER not in sys.meta_path


def test_install_and_uninstall_in_process():
    real = {k: m for k, m in sys.modules.items() if k == "torch" or k.startswith("torch.")}
    for k in real:
        del sys.modules[k]
    try:
        torchlike.install_as_torch()
        import torch as aliased
        import torch.nn.modules.loss as loss
        from torch.optim.optimizer import Optimizer
        assert aliased is torchlike and loss is torchlike.nn.modules.loss
        assert sys.modules["torch.nn.modules.loss"] is torchlike.nn.modules.loss
        assert loss.__spec__.name == "torchlike.nn.modules.loss"
        assert Optimizer is torchlike.optim.Optimizer
        with pytest.raises(ModuleNotFoundError, match="No module named 'torch.nn.nothing'"):
            importlib.import_module("torch.nn.nothing")
        torchlike.uninstall_as_torch()
        assert not any(k == "torch" or k.startswith("torch.") for k in sys.modules)
    finally:
        torchlike.uninstall_as_torch()
        sys.modules.update(real)


# --- module paths: a class is found where PyTorch defines it ------------------------------------

ROOTS = ("nn.modules", "nn.parameter", "optim", "utils.data")


def _public_modules(name):
    """``name`` and its public submodules (torch.utils.data.datapipes, deprecated, left out)."""
    pkg = importlib.import_module(name)
    yield name, pkg
    for info in pkgutil.walk_packages(getattr(pkg, "__path__", []), name + "."):
        if any(p.startswith("_") for p in info.name.split(".")) or ".datapipes" in info.name:
            continue
        yield info.name, importlib.import_module(info.name)


def _torchlike_classes():
    """Every class torchlike defines under nn, optim and utils.data, by name."""
    found = {}
    for root in ROOTS:
        for _, mod in _public_modules("torchlike." + root.split(".")[0]):
            for n, v in vars(mod).items():
                if inspect.isclass(v) and v.__module__.startswith("torchlike."):
                    found.setdefault(n, set()).add(v)
    return found


def test_classes_are_found_at_pytorchs_module_paths():
    """For each class real torch defines (or its package lists in ``__all__``) in nn.modules,
    nn.parameter, optim and utils.data, the torchlike class of that name is importable from
    the same path under torchlike (``torch.nn.modules.activation.MultiheadAttention``)."""
    ours = _torchlike_classes()
    wrong, checked = [], 0
    for root in ROOTS:
        for name, mod in _public_modules("torch." + root):
            names = {n for n, v in vars(mod).items() if inspect.isclass(v)
                     and v.__module__ == name and not n.startswith("__")}
            names |= {n for n in getattr(mod, "__all__", ()) if inspect.isclass(getattr(mod, n))}
            for n in sorted(names):
                if len(ours.get(n, ())) != 1:   # a class torchlike does not have
                    continue
                (cls,) = ours[n]
                try:
                    here = getattr(importlib.import_module("torchlike" + name[5:]), n, None)
                except ImportError:
                    here = None
                checked += 1
                if here is not cls:
                    wrong.append(f"{name}.{n}")
    assert not wrong, f"not importable from PyTorch's module path: {wrong}"
    assert checked > 250
