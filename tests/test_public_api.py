"""The public surface: every op family's public names are exported by ``torchlike`` (the
explicit imports of torchlike/__init__.py stay in step with the families) and every Tensor
method a family declares is bound on Tensor."""
import importlib

import pytest

import torchlike

FAMILIES = ["_ops.pointwise", "_ops.unary", "_ops.binary", "_ops.reduce", "_ops.scatter",
            "_ops.sorting", "_ops.shape", "_ops.join", "_ops.linalg", "_ops.complex",
            "_ops.sampling", "_random", "_ops.activation", "_ops.dropout", "_ops.conv", "_ops.pool",
            "_ops.normalization", "_ops.embedding", "_ops.loss", "_ops.loss_margin",
            "_ops.loss_ctc", "_ops.distance", "_ops.rnn", "_ops.spatial", "_ops.attention",
            "nn.utils.convert_parameters", "nn.utils.weight_norm", "_legacy", "_storage",
            "_ops.stats", "_ops.signal", "_ops.lapack", "_ops.strided", "_ops.host",
            "_ops.index_reduce", "_ops.control_flow"]


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
