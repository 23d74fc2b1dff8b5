"""The public surface: every op family's public names are exported by ``torchlike`` (the
explicit imports of torchlike/__init__.py stay in step with the families) and every Tensor
method a family declares is bound on Tensor (the families: ``torchlike._methods.FAMILIES``, the
list the installer walks)."""
import importlib

import pytest

import torchlike
from torchlike._methods import FAMILIES


@pytest.mark.parametrize("family", FAMILIES)
def test_family_names_are_exported(family):
    mod = importlib.import_module("torchlike." + family)
    missing = [n for n in mod.PUBLIC if getattr(torchlike, n, None) is not getattr(mod, n)]
    assert not missing, f"not exported by torchlike/__init__.py: {missing}"


@pytest.mark.parametrize("family", FAMILIES)
def test_family_methods_are_bound(family):
    mod = importlib.import_module("torchlike." + family)
    methods = getattr(mod, "TENSOR_METHODS", {})
    unbound = [n for n, fn in methods.items() if getattr(torchlike.Tensor, n, None) is not fn]
    assert not unbound, f"not bound on Tensor: {unbound}"


@pytest.mark.parametrize("family", [f for f in FAMILIES if hasattr(
    importlib.import_module("torchlike." + f), "TOP_LEVEL")])
def test_family_top_level_adapters_are_exported(family):
    """``torch.<name>`` functions whose signature differs from ``F.<name>`` (torch.dropout,
    torch.softmax, torch.batch_norm, ...) are exported under the torch name."""
    mod = importlib.import_module("torchlike." + family)
    wrong = [n for n, fn in mod.TOP_LEVEL.items() if getattr(torchlike, n, None) is not fn]
    assert not wrong, f"not exported by torchlike/__init__.py: {wrong}"
