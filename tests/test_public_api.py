"""The public surface: every op family's public names are exported by ``torchlike`` (the
explicit imports of torchlike/__init__.py stay in step with the families) and every Tensor
method a family declares is bound on Tensor."""
import importlib

import pytest

import torchlike

FAMILIES = ["_ops.pointwise", "_ops.unary", "_ops.binary", "_ops.reduce", "_ops.scatter",
            "_ops.sorting", "_ops.shape", "_ops.join", "_ops.linalg", "_ops.complex",
            "_ops.random", "_random"]


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
