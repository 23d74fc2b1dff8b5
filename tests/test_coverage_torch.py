"""Parity tests for the torch-namespace functions and Tensor methods added for API coverage
(scripts/api_coverage.py): one or a few rows per name against real torch (values, dtypes, shapes,
grad_fn names and gradients through check_op / both from test_parity_ops), error rows compared
by type and message.
"""
import numpy as np
import pytest
import torch

import torchlike as tl

from test_parity_ops import A, both, cases, check_op

M, V3, V4, S0 = (3, 4), (3,), (4,), ()

OPS = [
    # name, fn(T, *inputs), inputs
    ("cartesian_prod", lambda T, a, b: T.cartesian_prod(a, b), [A(V3), A((2,))]),
    ("cartesian_prod_3", lambda T, a, b: T.cartesian_prod(a, b, a), [A(V3), A((2,))]),
    ("cartesian_prod_int", lambda T, a: T.cartesian_prod(a, a), [A(V3, "int64")]),
    ("combinations", lambda T, a: T.combinations(a), [A(V4)]),
    ("combinations_r3", lambda T, a: T.combinations(a, 3), [A(V4)]),
    ("combinations_repl", lambda T, a: T.combinations(a, 2, with_replacement=True), [A(V3)]),
    ("combinations_0", lambda T, a: T.combinations(a, 0), [A(V3)]),
    ("block_diag", lambda T, a, b, c: T.block_diag(a, b, c), [A(M), A(V3), A(S0)]),
    ("block_diag_promote", lambda T, a, b: T.block_diag(a, b), [A((2, 2), "int64"), A(V3)]),
    ("block_diag_f64", lambda T, a, b: T.block_diag(a, b), [A((2, 1)), A((1, 2), "float64")]),
    ("block_diag_empty", lambda T: T.block_diag(), []),
    ("cov", lambda T, x: T.cov(x), [A(M)]),
    ("cov_1d", lambda T, x: x.cov(correction=0), [A(V4)]),
    ("cov_int", lambda T, x: T.cov(x), [A(M, "int64")]),
    ("cov_weights", lambda T, x, fw, aw: T.cov(x, fweights=fw, aweights=aw),
     [A(M, "float64"), A(V4, "int64", "small"), A(V4, "float64", "pos", grad=False)]),
    ("cov_complex", lambda T, x: T.cov(T.complex(x, x.flip(0))), [A(M)]),
    ("corrcoef", lambda T, x: T.corrcoef(x), [A(M)]),
    ("corrcoef_1d", lambda T, x: x.corrcoef(), [A(V4, "float64")]),
    ("isin", lambda T, x, y: T.isin(x, y), [A(M, "int64"), A(V4, "int64")]),
    ("isin_promote", lambda T, x, y: T.isin(x, y, invert=True), [A(M, "int64"), A(V3)]),
    ("isin_numbers", lambda T, x: [T.isin(2, x), T.isin(x, 2)], [A(M, "int64")]),
]


@pytest.mark.parametrize("name,fn,inputs", cases(OPS))
def test_op(name, fn, inputs):
    check_op(name, fn, inputs)


ERRORS = [
    # name, fn(T), the message (a regex both must match)
    ("cartesian_prod_2d", lambda T: T.cartesian_prod(T.ones(2, 2), T.ones(2)),
     r"Expect a 1D vector, but got shape \[2, 2\]"),
    ("cartesian_prod_dtypes", lambda T: T.cartesian_prod(T.ones(2), T.ones(2).long()),
     "meshgrid expects all tensors to have the same dtype"),
    ("combinations_negative", lambda T: T.combinations(T.ones(3), -1),
     "Expect a non-negative number, but got -1"),
    ("cov_3d", lambda T: T.cov(T.ones(2, 2, 2)),
     "cov\\(\\): expected input to have two or fewer dimensions but got an input with 3"),
    ("cov_fweights_float", lambda T: T.cov(T.ones(2, 3), fweights=T.ones(3)),
     "cov\\(\\): expected fweights to have integral dtype but got fweights with Float dtype"),
    ("cov_aweights_negative", lambda T: T.cov(T.ones(2, 3), aweights=-T.ones(3)),
     "cov\\(\\): aweights cannot be negative"),
    ("isin_bool", lambda T: T.isin(T.tensor([True]), T.tensor([1])),
     "Unsupported input type encountered for isin\\(\\): Bool"),
    ("isin_list", lambda T: T.isin(T.tensor([1]), [1]), "isin\\(\\) received an invalid"),
    ("block_diag_3d", lambda T: T.block_diag(T.ones(2), T.ones(1, 1, 1)),
     "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input 1 has 3 dimensions"),
]


@pytest.mark.parametrize("name,fn,match", cases(ERRORS))
def test_error(name, fn, match):
    both(fn, match=match, raises=True)
