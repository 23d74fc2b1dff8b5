"""Tensor methods, in-place variants, operators and properties, bound from the op families.

Each family module (below, relative to ``torchlike``) declares, next to its ops, ``PUBLIC``: the
names ``torchlike`` exports from it, and ``TENSOR_METHODS``: name -> function (or property) bound
on Tensor.  A method is the function of the same name (``x.exp()`` is ``torchlike.exp(x)``); an
in-place variant ``x.exp_()`` is ``_inplace.inplace_method(exp)``: it computes the out-of-place
result and stores it (see _inplace.py).  tests/test_public_api.py checks both against this list.
"""
import importlib

from ._tensor import Tensor

FAMILIES = (
    "_ops.pointwise", "_ops.unary", "_ops.binary", "_ops.operators", "_ops.reduce",
    "_ops.scatter", "_ops.index", "_ops.sorting", "_ops.shape", "_ops.join", "_ops.linalg",
    "_ops.complex", "_ops.convert", "_ops.sampling", "_random", "_ops.activation", "_ops.dropout",
    "_ops.conv", "_ops.pool", "_ops.normalization", "_ops.embedding", "_ops.loss",
    "_ops.loss_margin", "_ops.loss_ctc", "_ops.distance", "_ops.rnn", "_ops.spatial",
    "_ops.attention", "_ops.stats", "_ops.signal", "_ops.lapack", "_ops.strided", "_ops.host",
    "_ops.index_reduce", "_ops.control_flow", "nn.utils.convert_parameters",
    "nn.utils.weight_norm", "_legacy", "_storage")


def install():
    """Bind every family's ``TENSOR_METHODS`` on Tensor."""
    for family in FAMILIES:
        module = importlib.import_module("." + family, __package__)
        for name, fn in getattr(module, "TENSOR_METHODS", {}).items():
            setattr(Tensor, name, fn)
