"""Tests for random sampling (torchlike/_random.py, torchlike/_ops/sampling.py).

torchlike draws from jax's streams, not PyTorch's (NOTE [ random streams ]), so values are never
compared with torch.  Against torch (spec tables): dtypes, shapes, devices, requires_grad,
grad_fn and next_functions names, the (zero) gradients, errors.  Against the analytic
distributions: moments of large samples drawn with fixed seeds, with tolerances of several
standard errors for the sample size.  Within torchlike: determinism, generator state, in-place
semantics, and the traced (jax.jit) path with the generator state carried in and out.
"""
import itertools
import math
import pickle
import re
import warnings

import jax
import numpy as np
import pytest
import torch

import torchlike as tl
from torchlike.testing import assert_grads_match_jax, to_jax_function

from parity import A, both, cases, dname, next_names, run, same, seed_of
from sample_stats import Z, check_frequencies, check_moments

N = 200_000      # sample size of the distribution checks


@pytest.fixture(autouse=True)
def _keep_default_state():
    """Tests reseed the default generator; leave it as they found it."""
    state = tl.get_rng_state()
    yield
    tl.set_rng_state(state)


# ------------------------------------------------------------------------------------------------
# Everything but the values, against torch
# ------------------------------------------------------------------------------------------------

def _meta(t):
    """What a sample shows apart from its values."""
    fn = t.grad_fn
    return {"dtype": dname(t.dtype), "shape": tuple(t.shape), "device": str(t.device),
            "requires_grad": t.requires_grad, "grad_fn": type(fn).__name__,
            "next": next_names(fn) if fn is not None else None}


def check_sampler(name, fn, inputs, match=None):
    """Run ``fn(T, *tensors)`` in both libraries; compare the result's metadata (or the
    exception), and after backward (when there is a graph) the gradient of every input."""
    rng = np.random.default_rng(seed_of(name))
    vals = [a.values(rng) if hasattr(a, "make") else a for a in inputs]

    def go(T):
        xs = [a.make(T, v) if hasattr(a, "make") else v for a, v in zip(inputs, vals)]
        out = fn(T, *xs)
        res = {"meta": _meta(out)}
        if out.grad_fn is not None:
            res["backward"] = run(lambda _: out.backward(T.ones_like(out)), T)
            res["grads"] = [x.grad if isinstance(x, T.Tensor) else None for x in xs]
        return res

    both(go, match=match)


SAMPLERS = [
    # name, fn(T, *xs), inputs: result metadata, grad_fn / next_functions and zero gradients
    ("rand", lambda T: T.rand(2, 3), []),
    ("rand_tuple_f64", lambda T: T.rand((2, 3), dtype=T.float64), []),
    ("rand_size_kw", lambda T: T.rand(size=(4,)), []),
    ("rand_0d", lambda T: T.rand(()), []),
    ("rand_empty", lambda T: T.rand(0, 3), []),
    ("rand_requires_grad", lambda T: T.rand(3, requires_grad=True), []),
    ("rand_generator", lambda T: T.rand(3, generator=T.Generator().manual_seed(1)), []),
    ("randn", lambda T: T.randn(2, 3), []),
    ("randn_c128", lambda T: T.randn(4, dtype=T.complex128), []),
    ("randn_requires_grad", lambda T: T.randn(2, dtype=T.float64, requires_grad=True), []),
    ("randint_high", lambda T: T.randint(5, (2, 3)), []),
    ("randint_low_high", lambda T: T.randint(-3, 5, (4,)), []),
    ("randint_size_kw", lambda T: T.randint(5, size=(3,)), []),
    ("randint_f32", lambda T: T.randint(0, 5, (3,), dtype=T.float32), []),
    ("randint_f32_grad", lambda T: T.randint(5, (3,), dtype=T.float32, requires_grad=True), []),
    ("randint_full_int64", lambda T: T.randint(-2**63, 2**63 - 1, (3,)), []),
    ("rand_like", lambda T, x: T.rand_like(x), [A((2, 3))]),
    ("rand_like_f64", lambda T, x: T.rand_like(x, dtype=T.float64, requires_grad=True),
     [A((2, 3), grad=False)]),
    ("randn_like", lambda T, x: T.randn_like(x), [A((2, 3), "float64")]),
    ("randn_like_generator", lambda T, x: T.randn_like(x, generator=T.Generator()), [A((3,))]),
    ("randint_like", lambda T, x: T.randint_like(x, 5), [A((2, 3))]),
    ("randint_like_low_high", lambda T, x: T.randint_like(x, 3, 9), [A((2, 3), "int32")]),
    ("randint_like_kw", lambda T, x: T.randint_like(x, high=4), [A((2,), "int64")]),
    ("randperm", lambda T: T.randperm(7), []),
    ("randperm_0", lambda T: T.randperm(0), []),
    ("randperm_f32_grad", lambda T: T.randperm(5, dtype=T.float32, requires_grad=True), []),
    ("randperm_uint8_256", lambda T: T.randperm(256, dtype=T.uint8), []),
    ("normal_tt", lambda T, m, s: T.normal(m, s), [A((2, 3)), A((2, 3), dom="prob")]),
    ("normal_tt_broadcast", lambda T, m, s: T.normal(m, s), [A((2, 1)), A((3,), dom="prob")]),
    ("normal_tt_mean_dtype", lambda T, m, s: T.normal(m, s),
     [A((3,), "float64"), A((3,), dom="prob")]),
    ("normal_tt_std_dtype", lambda T, m, s: T.normal(m, s), [A((3,)), A((3,), "float64", "prob")]),
    ("normal_tt_f16", lambda T, m, s: T.normal(m, s), [A((3,), "float16"), A((3,), dom="prob")]),
    ("normal_tt_no_grad", lambda T, m, s: T.normal(m, s), [A((3,), grad=False),
                                                            A((3,), dom="prob", grad=False)]),
    ("normal_tt_0d", lambda T, m, s: T.normal(m, s), [A(()), A((), dom="prob")]),
    ("normal_tf", lambda T, m: T.normal(m, 2.0), [A((2, 3))]),
    ("normal_tf_default_std", lambda T, m: T.normal(mean=m), [A((2, 3), "float64")]),
    ("normal_ft", lambda T, s: T.normal(1.5, s), [A((2, 3), dom="prob")]),
    ("normal_ff", lambda T: T.normal(0.0, 1.0, (2, 3)), []),
    ("normal_ff_ints", lambda T: T.normal(0, 1, (2,), dtype=T.float64), []),
    ("normal_ff_grad", lambda T: T.normal(2.0, 3.0, size=(4,), requires_grad=True), []),
    ("normal_generator", lambda T, m: T.normal(m, 1.0, generator=T.Generator()), [A((3,))]),
    ("bernoulli", lambda T, p: T.bernoulli(p), [A((2, 3), dom="prob")]),
    ("bernoulli_method", lambda T, p: p.bernoulli(), [A((2, 3), "float64", "prob")]),
    ("bernoulli_no_grad", lambda T, p: T.bernoulli(p), [A((3,), "float16", "prob", grad=False)]),
    ("bernoulli_p", lambda T, x: T.bernoulli(x, 0.3), [A((2, 3))]),
    ("bernoulli_p_method", lambda T, x: x.bernoulli(p=0.7), [A((3,), grad=False)]),
    ("multinomial", lambda T, p: T.multinomial(p, 2), [A((4,), dom="prob")]),
    ("multinomial_2d", lambda T, p: T.multinomial(p, 3), [A((2, 4), dom="prob")]),
    ("multinomial_replacement", lambda T, p: T.multinomial(p, 9, True), [A((2, 4), dom="prob")]),
    ("multinomial_method", lambda T, p: p.multinomial(1), [A((5,), "float64", "prob")]),
    ("multinomial_empty_rows", lambda T, p: T.multinomial(p, 2), [A((0, 3), dom="prob")]),
    ("poisson", lambda T, r: T.poisson(r * 4), [A((2, 3), dom="prob")]),
    ("poisson_f64", lambda T, r: T.poisson(r), [A((3,), "float64", "prob", grad=False)]),
    ("poisson_generator", lambda T, r: T.poisson(r, T.Generator()),
     [A((3,), dom="prob", grad=False)]),
    ("rand_out", lambda T: _same_out(T, T.empty(0), lambda o: T.rand(2, 3, out=o)), []),
    ("rand_out_f64", lambda T: _same_out(T, T.empty(3, dtype=T.float64),
                                         lambda o: T.rand(3, out=o)), []),
    ("randn_out", lambda T: _same_out(T, T.empty(5), lambda o: T.randn(2, out=o)), []),
    ("randint_out_int32", lambda T: _same_out(T, T.empty(0, dtype=T.int32),
                                              lambda o: T.randint(5, (4,), out=o)), []),
    ("randperm_out", lambda T: _same_out(T, T.empty(0, dtype=T.int32),
                                         lambda o: T.randperm(4, out=o)), []),
    ("normal_out", lambda T, m, s: _same_out(T, T.empty(0), lambda o: T.normal(m, s, out=o)),
     [A((2, 1), grad=False), A((3,), dom="prob", grad=False)]),
    ("normal_ff_out", lambda T: _same_out(T, T.empty(0, dtype=T.float64),
                                          lambda o: T.normal(0.0, 1.0, (3,), out=o)), []),
    ("bernoulli_out", lambda T, p: _same_out(T, T.empty(0), lambda o: T.bernoulli(p, out=o)),
     [A((3,), dom="prob", grad=False)]),
    ("multinomial_out", lambda T, p: _same_out(T, T.empty(0, dtype=T.int64),
                                               lambda o: T.multinomial(p, 2, out=o)),
     [A((2, 3), dom="prob")]),
]


def _same_out(T, out, fn):
    """fn(out) must return ``out`` itself (resized, keeping its dtype)."""
    result = fn(out)
    assert result is out
    return result


@pytest.mark.parametrize("name,fn,inputs", cases(SAMPLERS))
def test_sampler_matches_torch_apart_from_values(name, fn, inputs):
    check_sampler(name, fn, inputs)


def _nonleaf(T, x):
    return x * 2   # a tensor in the graph, so in-place samplers record a node


IN_PLACE = [
    # name, fn(T, x): the in-place samplers on a non-leaf (grad_fn, next_functions, zero grads)
    ("uniform_", lambda T, x: _nonleaf(T, x).uniform_()),
    ("uniform_from_to", lambda T, x: _nonleaf(T, x).uniform_(-2, 5)),
    ("uniform_kw", lambda T, x: _nonleaf(T, x).uniform_(**{"from": 1, "to": 2})),
    ("normal_", lambda T, x: _nonleaf(T, x).normal_()),
    ("normal_kw", lambda T, x: _nonleaf(T, x).normal_(std=3.0, mean=1.0)),
    ("bernoulli_", lambda T, x: _nonleaf(T, x).bernoulli_()),
    ("bernoulli_float", lambda T, x: _nonleaf(T, x).bernoulli_(0.2)),
    ("bernoulli_tensor", lambda T, x: _nonleaf(T, x).bernoulli_(T.full((3,), 0.5))),
    ("bernoulli_0d_tensor", lambda T, x: _nonleaf(T, x).bernoulli_(T.tensor(0.5))),
    ("bernoulli_tensor_grad",
     lambda T, x: _nonleaf(T, x).bernoulli_(T.full((3,), 0.5, requires_grad=True))),
    ("exponential_", lambda T, x: _nonleaf(T, x).exponential_()),
    ("exponential_lambd", lambda T, x: _nonleaf(T, x).exponential_(lambd=3)),
    ("geometric_", lambda T, x: _nonleaf(T, x).geometric_(0.3)),
    ("log_normal_", lambda T, x: _nonleaf(T, x).log_normal_()),
    ("log_normal_kw", lambda T, x: _nonleaf(T, x).log_normal_(mean=0, std=0.5)),
    ("cauchy_", lambda T, x: _nonleaf(T, x).cauchy_()),
    ("cauchy_kw", lambda T, x: _nonleaf(T, x).cauchy_(median=1, sigma=2)),
    ("random_", lambda T, x: _nonleaf(T, x).random_()),
    ("random_to", lambda T, x: _nonleaf(T, x).random_(7)),
    ("random_from_to", lambda T, x: _nonleaf(T, x).random_(-3, 7)),
    ("random_from_none", lambda T, x: _nonleaf(T, x).random_(3, None)),
    ("random_to_kw", lambda T, x: _nonleaf(T, x).random_(to=4)),
    ("random_generator", lambda T, x: _nonleaf(T, x).random_(5, generator=T.Generator())),
    ("grad_disabled", lambda T, x: _no_grad_sample(T, x)),
]


def _no_grad_sample(T, x):
    with T.no_grad():
        x.uniform_(-1, 1)   # what nn.init does to parameters
    return x


@pytest.mark.parametrize("name,fn", cases(IN_PLACE))
def test_in_place_sampler_matches_torch_apart_from_values(name, fn):
    check_sampler(name, fn, [A((2, 3))])


@pytest.mark.parametrize("T", [torch, tl], ids=["torch", "torchlike"])
def test_in_place_sampler_on_a_view_of_a_non_leaf(T):
    """The base gets CopySlices; the sampled row's gradient is zero, the rest's flows.
    (torchlike's CopySlices also lists the in-place op's own node, as for every in-place op
    on a view, so next_functions are not compared.)"""
    x = T.randn(2, 3, requires_grad=True)
    y = x * 2
    y[0].normal_()
    assert type(y.grad_fn).__name__ == "CopySlices"
    y.sum().backward()
    assert (x.grad[0] == 0).all() and (x.grad[1] == 2).all()


DTYPE_SWEEP = [
    # name, fn(T, x): each sampler on zeros of every dtype of SWEPT_DTYPES
    ("uniform_", lambda T, x: x.uniform_(1, 3)),
    ("normal_", lambda T, x: x.normal_(2, 0.5)),
    ("bernoulli_", lambda T, x: x.bernoulli_(0.5)),
    ("bernoulli_tensor", lambda T, x: x.bernoulli_(T.full((4,), 0.5))),
    ("bernoulli_int_p", lambda T, x: T.zeros(4).bernoulli_(x)),
    ("exponential_", lambda T, x: x.exponential_()),
    ("geometric_", lambda T, x: x.geometric_(0.5)),
    ("log_normal_", lambda T, x: x.log_normal_()),
    ("cauchy_", lambda T, x: x.cauchy_()),
    ("random_", lambda T, x: x.random_()),
    ("random_to", lambda T, x: x.random_(2)),
    ("random_from_to", lambda T, x: x.random_(0, 2)),
    ("random_from", lambda T, x: x.random_(0, None)),
    ("random_full", lambda T, x: x.random_(-2**63, None)),
    ("rand_like", lambda T, x: T.rand_like(x)),
    ("randn_like", lambda T, x: T.randn_like(x)),
    ("randint_like", lambda T, x: T.randint_like(x, 2)),
    ("bernoulli", lambda T, x: T.bernoulli(x)),
    ("bernoulli_p", lambda T, x: T.bernoulli(x, 0.5)),
    ("poisson", lambda T, x: T.poisson(x)),
    ("normal_mean", lambda T, x: T.normal(x, 1.0)),
    ("normal_std", lambda T, x: T.normal(0.0, x)),
    ("rand", lambda T, x: T.rand(2, dtype=x.dtype)),
    ("randn", lambda T, x: T.randn(2, dtype=x.dtype)),
    ("randint", lambda T, x: T.randint(0, 2, (3,), dtype=x.dtype)),
    ("randperm", lambda T, x: T.randperm(3, dtype=x.dtype)),
]
SWEPT_DTYPES = ["bool", "uint8", "int16", "int64", "uint16", "uint64", "float16", "bfloat16",
                "float64", "complex64"]


@pytest.mark.parametrize("dtype", SWEPT_DTYPES)
@pytest.mark.parametrize("name,fn", cases(DTYPE_SWEEP))
def test_dtypes_match_torch(name, fn, dtype):
    """The result's dtype and shape, or the very error torch raises (type and message)."""
    def go(T):
        out = fn(T, T.zeros(4, dtype=getattr(T, dtype)))
        return dname(out.dtype), tuple(out.shape)
    same(go, raises=None)   # either: some dtypes are refused, with this very message


# ------------------------------------------------------------------------------------------------
# Errors, against torch (type and message)
# ------------------------------------------------------------------------------------------------

ERRORS = [
    # name, fn(T), message regex
    ("rand_negative", lambda T: T.rand(-1), "negative dimension -1"),
    ("rand_int_requires_grad", lambda T: T.rand(2, dtype=T.int64, requires_grad=True),
     "check_uniform_bounds"),
    ("randint_requires_grad", lambda T: T.randint(5, (2,), requires_grad=True),
     "Only Tensors of floating point and complex dtype can require gradients"),
    ("randint_empty_range", lambda T: T.randint(5, 3, (2,)),
     r"random_ expects 'from' to be less than 'to', but got from=5 >= to=3"),
    ("randint_uint8_from", lambda T: T.randint(-1, 3, (2,), dtype=T.uint8),
     "from is out of bounds for unsigned char"),
    ("randint_int8_to", lambda T: T.randint(0, 300, (2,), dtype=T.int8),
     "to - 1 is out of bounds for signed char"),
    ("randint_float_high", lambda T: T.randint(5.5, (3,)), "must be int"),
    ("randint_like_bool", lambda T: T.randint_like(T.zeros(2, dtype=T.bool), 3),
     "to - 1 is out of bounds for bool"),
    ("randint_like_f16", lambda T: T.randint_like(T.zeros(2, dtype=T.float16), 0, 70000),
     r"to - 1 is out of bounds for c10::Half"),
    ("randperm_negative", lambda T: T.randperm(-1), "negative dimension -1"),
    ("randperm_float_n", lambda T: T.randperm(5.0), "must be int, not float"),
    ("randperm_uint8", lambda T: T.randperm(257, dtype=T.uint8),
     "value cannot be converted to type uint8_t without overflow"),
    ("randperm_int32", lambda T: T.randperm(300, dtype=T.int8), "int8_t without overflow"),
    ("randperm_f16", lambda T: T.randperm(2050, dtype=T.float16),
     r"n cannot be greater than 2049 for Half type\."),
    ("randperm_int_grad", lambda T: T.randperm(3, requires_grad=True), "can require gradients"),
    ("normal_negative_std_tensor", lambda T: T.normal(T.zeros(3), -T.ones(3)),
     r"normal expects all elements of std >= 0\.0"),
    ("normal_nan_std_tensor", lambda T: T.normal(1.0, T.tensor([1.0, math.nan])),
     r"normal expects all elements of std >= 0\.0"),
    ("normal_negative_std", lambda T: T.normal(T.zeros(3), -1.0),
     r"normal expects std >= 0\.0, but found std -1$"),
    ("normal_negative_std_ff", lambda T: T.normal(0.0, -1.5, (2,)),
     r"normal expects std >= 0\.0, but found std -1\.5"),
    ("normal_broadcast", lambda T: T.normal(T.zeros(2, 3), T.ones(4)),
     r"The size of tensor a \(3\) must match the size of tensor b \(4\) at non-singleton "
     r"dimension 1"),
    ("normal_complex_std", lambda T: T.normal(T.zeros(2), T.ones(2, dtype=T.complex64)),
     "normal expects standard deviation to be non-complex"),
    ("normal_float_float", lambda T: T.normal(1.0, 2.0),
     r"normal\(\) received an invalid combination of arguments - got \(float, float\)"),
    ("normal_tensor_size", lambda T: T.normal(T.zeros(2), 1.0, (2,)),
     r"normal\(\) received an invalid combination of arguments"),
    ("normal_no_mean", lambda T: T.normal(std=T.ones(2)), "missing 1 required positional"),
    ("normal_out_requires_grad",
     lambda T: T.normal(T.zeros(2, requires_grad=True), 1.0, out=T.empty(2)),
     "functions with out=... arguments don't support automatic differentiation"),
    ("bernoulli_out_of_range", lambda T: T.bernoulli(T.tensor([0.5, 1.5])),
     r"Expected p_in >= 0 && p_in <= 1 to be true, but got false"),
    ("bernoulli_nan", lambda T: T.bernoulli(T.tensor([0.5, math.nan])), "p_in >= 0"),
    ("bernoulli_p_range", lambda T: T.bernoulli(T.zeros(2), 1.5),
     r"bernoulli_ expects p to be in \[0, 1\], but got p=1\.5"),
    ("bernoulli_p_tensor", lambda T: T.bernoulli(T.zeros(2), p=T.zeros(2)), "bernoulli"),
    ("multinomial_too_many", lambda T: T.multinomial(T.ones(3), 4),
     r"cannot sample n_sample > prob_dist\.size\(-1\) samples without replacement"),
    ("multinomial_zero", lambda T: T.multinomial(T.ones(3), 0),
     "cannot sample n_sample <= 0 samples"),
    ("multinomial_3d", lambda T: T.multinomial(T.ones(2, 2, 2), 1), "prob_dist must be 1 or 2 dim"),
    ("multinomial_0d", lambda T: T.multinomial(T.ones(()), 1), "prob_dist must be 1 or 2 dim"),
    ("multinomial_int", lambda T: T.multinomial(T.tensor([1, 2]), 1),
     "multinomial only supports floating-point dtypes for input, got: Long"),
    ("multinomial_negative", lambda T: T.multinomial(T.tensor([1.0, -1.0]), 1),
     r"probability tensor contains either `inf`, `nan` or element < 0"),
    ("multinomial_inf", lambda T: T.multinomial(T.tensor([[1.0, 1.0], [1.0, math.inf]]), 2),
     "probability tensor contains either"),
    ("multinomial_zero_row", lambda T: T.multinomial(T.tensor([[1.0, 1.0], [0.0, 0.0]]), 1),
     r"invalid multinomial distribution \(sum of probabilities <= 0\)"),
    ("multinomial_replacement_negative",
     lambda T: T.multinomial(T.tensor([1.0, -1.0]), 3, True),
     r"invalid multinomial distribution \(encountering probability entry < 0\)"),
    ("multinomial_replacement_nan",
     lambda T: T.multinomial(T.tensor([1.0, math.nan]), 3, True), r"entry < 0\)"),
    ("multinomial_replacement_inf",
     lambda T: T.multinomial(T.tensor([1.0, math.inf]), 3, True),
     r"encountering probability entry = infinity or NaN"),
    ("multinomial_replacement_zero", lambda T: T.multinomial(T.zeros(2), 3, True),
     r"sum of probabilities <= 0"),
    ("multinomial_float_n", lambda T: T.multinomial(T.ones(2), 2.0),
     r"multinomial\(\): argument 'num_samples' \(position 2\) must be int, not float"),
    ("multinomial_bool_replacement", lambda T: T.multinomial(T.ones(2), 2, replacement=1),
     r"argument 'replacement' must be bool, not int"),
    ("multinomial_out_int32",
     lambda T: T.multinomial(T.ones(2), 1, out=T.empty(0, dtype=T.int32)),
     "multinomial expects Long tensor out, got: Int"),
    ("poisson_negative", lambda T: T.poisson(T.tensor([-1.0, 2.0])),
     "invalid Poisson rate, expected rate to be non-negative"),
    ("poisson_nan", lambda T: T.poisson(T.tensor([math.nan])), "invalid Poisson rate"),
    ("bernoulli_p_backward", lambda T: T.bernoulli(T.rand(2, requires_grad=True), 0.5)
     .sum().backward(), "derivative for aten::bernoulli is not implemented"),
]

IN_PLACE_ERRORS = [
    # name, fn(x) on a float32 [4] tensor, message regex
    ("uniform_reversed", lambda x: x.uniform_(2, 1),
     r"uniform_ expects to return a \[from, to\) range, but found from=2 > to=1"),
    ("uniform_inf", lambda x: x.uniform_(0, math.inf), "to is out of bounds for float"),
    ("uniform_nan", lambda x: x.uniform_(math.nan, 1), "from is out of bounds for float"),
    ("uniform_huge", lambda x: x.uniform_(-3e38, 3e38),
     r"uniform_ expects to-from <= std::numeric_limits<Float>::max\(\), but found to=3e\+38 "
     r"and from=-3e\+38 which result in to-from to exceed the limit"),
    ("uniform_tensor_1d", lambda x: x.uniform_(x[:1], 2),
     r"uniform_\(\): argument 'from' \(position 1\) must be float, not Tensor"),
    ("uniform_three_args", lambda x: x.uniform_(0, 1, 2), "positional arguments"),
    ("uniform_bad_kw", lambda x: x.uniform_(0, too=1), "unexpected keyword argument 'too'"),
    ("normal_negative", lambda x: x.normal_(0, -1),
     r"normal expects std >= 0\.0, but found std -1"),
    ("normal_nan_std", lambda x: x.normal_(0, math.nan), "but found std nan"),
    ("exponential_zero", lambda x: x.exponential_(0),
     r"exponential_ expects lambda > 0\.0, but found lambda=0"),
    ("exponential_nan", lambda x: x.exponential_(math.nan), "lambda=nan"),
    ("exponential_tensor", lambda x: x.exponential_(x[:1]), "must be float, not Tensor"),
    ("geometric_zero", lambda x: x.geometric_(0),
     r"geometric_ expects p to be in \(0, 1\), but got p=0"),
    ("geometric_one", lambda x: x.geometric_(1), r"but got p=1"),
    ("geometric_missing", lambda x: x.geometric_(), "missing 1 required positional"),
    ("log_normal_zero", lambda x: x.log_normal_(0, 0),
     r"log_normal_ expects std > 0\.0, but found std=0"),
    ("cauchy_negative", lambda x: x.cauchy_(0, -1),
     r"cauchy_ expects sigma > 0\.0, but found sigma=-1"),
    ("bernoulli_range", lambda x: x.bernoulli_(1.5),
     r"bernoulli_ expects p to be in \[0, 1\], but got p=1\.5"),
    ("bernoulli_nan", lambda x: x.bernoulli_(math.nan), "but got p=nan"),
    ("bernoulli_tensor_range", lambda x: x.bernoulli_(x + 2), "p_in >= 0 && p_in <= 1"),
    ("bernoulli_tensor_shape", lambda x: x.bernoulli_(x[:2]),
     r"The expanded size of the tensor \(4\) must match the existing size \(2\)"),
    ("bernoulli_tensor_dims", lambda x: x.bernoulli_(x.expand(2, 4)),
     "the number of sizes provided"),
    ("random_empty", lambda x: x.random_(5, 5),
     "random_ expects 'from' to be less than 'to', but got from=5 >= to=5"),
    ("random_zero", lambda x: x.random_(0), "from=0 >= to=0"),
    ("random_float", lambda x: x.random_(1.5),
     r"random_\(\) received an invalid combination of arguments - got \(float\)"),
    ("random_bool", lambda x: x.random_(True), r"got \(bool\)"),
    ("random_from_only", lambda x: x.random_(**{"from": 2}), r"invalid combination"),
    ("random_overflow", lambda x: x.random_(0, 2**63), "Overflow when unpacking long long"),
    ("random_three", lambda x: x.random_(1, 2, 3), "positional arguments"),
    ("random_from_past_mantissa", lambda x: x.half().random_(2049, None),
     r"random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted to "
     r"dtype, but got from=2049 > to_inc=2048"),
    ("random_f16_out_of_range", lambda x: x.half().random_(70000, 80000),
     "from is out of bounds for c10::Half"),
    ("leaf", lambda x: x.requires_grad_().normal_(),
     "a leaf Variable that requires grad is being used in an in-place operation."),
    ("leaf_before_value_checks", lambda x: x.requires_grad_().normal_(0, -1),
     "a leaf Variable that requires grad"),
    ("leaf_before_range_checks", lambda x: x.requires_grad_().uniform_(2, 1), "a leaf Variable"),
    ("leaf_before_p_checks", lambda x: x.requires_grad_().geometric_(2), "a leaf Variable"),
    ("leaf_after_argument_types", lambda x: x.requires_grad_().random_(1.5), "invalid combin"),
    ("view_of_leaf", lambda x: x.requires_grad_()[:2].uniform_(),
     "a view of a leaf Variable that requires grad is being used in an in-place operation."),
]


@pytest.mark.parametrize("name,fn,match", cases(ERRORS))
def test_errors_match_torch(name, fn, match):
    both(fn, match=match, raises=True)


@pytest.mark.parametrize("name,fn,match", cases(IN_PLACE_ERRORS))
def test_in_place_errors_match_torch(name, fn, match):
    both(lambda T: fn(T.zeros(4)), match=match, raises=True)


WARNINGS = [
    # name, fn(T): PyTorch warns when a float dtype cannot hold every integer of the range
    ("random_f32_past_2_24", lambda T: T.zeros(3).random_(0, 2**25 + 2),
     r"to - 1 is out of bounds \[-\(2\^24\), 2\^24\]\. Due to precision limitations float can "
     r"support discrete uniform distribution only within this range"),
    ("random_f16_from", lambda T: T.zeros(3, dtype=T.float16).random_(2049, 2051),
     r"from is out of bounds \[-\(2\^11\), 2\^11\]"),
    ("randint_bf16", lambda T: T.randint(0, 2**10, (2,), dtype=T.bfloat16),
     r"c10::BFloat16 can support"),
]


@pytest.mark.parametrize("name,fn,match", cases(WARNINGS))
def test_range_warnings_match_torch(name, fn, match):
    for T in (torch, tl):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fn(T)
        assert any(re.search(match, str(w.message)) for w in caught), (T.__name__, caught)


def test_generator_argument_must_be_a_generator():
    with pytest.raises(TypeError, match="generator"):
        tl.rand(2, generator=3)


# ------------------------------------------------------------------------------------------------
# Determinism and generator state
# ------------------------------------------------------------------------------------------------

DRAWS = [
    # name, fn(generator) -> Tensor: one draw of each sampler, for the determinism checks
    ("rand", lambda g: tl.rand(5, generator=g)),
    ("randn", lambda g: tl.randn(5, dtype=tl.float64, generator=g)),
    ("randint", lambda g: tl.randint(-5, 5, (5,), generator=g)),
    ("randperm", lambda g: tl.randperm(9, generator=g)),
    ("normal", lambda g: tl.normal(tl.zeros(5), tl.ones(5), generator=g)),
    ("bernoulli", lambda g: tl.bernoulli(tl.full((9,), 0.5), generator=g)),
    ("multinomial", lambda g: tl.multinomial(tl.ones(9), 4, generator=g)),
    ("poisson", lambda g: tl.poisson(tl.full((5,), 3.0), generator=g)),
    ("uniform_", lambda g: tl.empty(5).uniform_(generator=g)),
    ("random_", lambda g: tl.empty(5, dtype=tl.int64).random_(generator=g)),
    ("cauchy_", lambda g: tl.empty(5).cauchy_(generator=g)),
]


def _values(t):
    return t.numpy().tolist()


@pytest.mark.parametrize("name,draw", cases(DRAWS))
def test_same_seed_same_numbers(name, draw):
    tl.manual_seed(123)
    first = [_values(draw(None)) for _ in range(2)]
    assert first[0] != first[1], "consecutive draws must differ"
    tl.manual_seed(123)
    assert [_values(draw(None)) for _ in range(2)] == first
    g = tl.Generator().manual_seed(123)
    assert [_values(draw(g)) for _ in range(2)] == first, "a generator seeded alike agrees"


@pytest.mark.parametrize("name,draw", cases(DRAWS))
def test_generator_is_independent_of_the_default_one(name, draw):
    g = tl.Generator().manual_seed(7)
    before = tl.get_rng_state()
    a = _values(draw(g))
    assert tl.get_rng_state().numpy().tolist() == before.numpy().tolist()
    tl.rand(3)   # the default generator moving on does not move g
    g2 = tl.Generator().manual_seed(7)
    assert _values(draw(g2)) == a
    assert _values(draw(g)) == _values(draw(g2))


def test_rng_state_replays():
    state = tl.get_rng_state()
    assert (dname(state.dtype), state.ndim, str(state.device)) == ("uint8", 1, "cpu")
    a = [tl.rand(3).tolist(), tl.randn(2).tolist(), tl.empty(3).normal_().tolist()]
    tl.set_rng_state(state)
    assert [tl.rand(3).tolist(), tl.randn(2).tolist(), tl.empty(3).normal_().tolist()] == a
    saved = state.tolist()
    assert tl.get_rng_state().tolist() != saved and state.tolist() == saved, "a copy"


def test_generator_state_round_trips():
    g = tl.Generator().manual_seed(5)
    state = g.get_state()
    a = tl.rand(4, generator=g).tolist()
    g.manual_seed(99)
    assert g.set_state(state) is g
    assert g.initial_seed() == 5
    assert tl.rand(4, generator=g).tolist() == a
    clone = g.clone_state()
    assert tl.rand(4, generator=clone).tolist() == tl.rand(4, generator=g).tolist()
    copied = pickle.loads(pickle.dumps(g))
    assert copied.initial_seed() == 5
    assert tl.rand(4, generator=copied).tolist() == tl.rand(4, generator=g).tolist()


@pytest.mark.parametrize("seed_value,expected", [(0, 0), (5, 5), (2**64 - 1, 2**64 - 1),
                                                 (-1, 2**64 - 1), (-2**63, 2**63)])
def test_seeds_as_torch_takes_them(seed_value, expected):
    """The seed torch reports back: negative seeds wrap to uint64 (values from torch)."""
    torch_gen = torch.Generator().manual_seed(seed_value)
    assert torch_gen.initial_seed() == expected
    assert tl.Generator().manual_seed(seed_value).initial_seed() == expected
    assert tl.manual_seed(seed_value) is tl.default_generator
    assert tl.initial_seed() == expected


def test_distinct_seeds_distinct_streams():
    draws = {tuple(tl.Generator().manual_seed(s).get_state().tolist()) for s in
             (0, 1, 2**32, 2**63, 2**64 - 1, -2)}
    assert len(draws) == 6
    assert len({tuple(tl.rand(4, generator=tl.Generator().manual_seed(s)).tolist())
                for s in (0, 1, 2**32, 2**64 - 1)}) == 4


def test_default_seed_and_reseeding():
    assert tl.Generator().initial_seed() == torch.Generator().initial_seed()
    s = tl.seed()
    assert isinstance(s, int) and 0 <= s < 2**64 and tl.initial_seed() == s
    g = tl.Generator()
    assert g.seed() == g.initial_seed()
    assert str(g.device) == "cpu" and str(tl.Generator(device="cpu").device) == "cpu"


STATE_ERRORS = [
    # name, fn(T), message regex (None: a value row)
    ("seed_overflow", lambda T: T.manual_seed(2**64), "Overflow when unpacking long long"),
    ("seed_underflow", lambda T: T.Generator().manual_seed(-2**63 - 1), "Overflow"),
    ("seed_float", lambda T: T.Generator().manual_seed(1.5),
     "manual_seed expected a long, but got float"),
    ("seed_str", lambda T: T.manual_seed("a"), "invalid literal for int"),
    ("seed_float_rounds", lambda T: T.manual_seed(1.5).initial_seed(), None),
    ("state_list", lambda T: T.set_rng_state([1, 2]), "expected a torch.ByteTensor, but got list"),
    ("state_float", lambda T: T.Generator().set_state(T.zeros(16)),
     "RNG state must be a torch.ByteTensor"),
    ("state_size", lambda T: T.set_rng_state(T.zeros(3, dtype=T.uint8)),
     "but found the input RNG state size to be 3"),
]


@pytest.mark.parametrize("name,fn,match", cases(STATE_ERRORS))
def test_state_errors_match_torch(name, fn, match):
    both(fn, match=match, raises=match is not None)


# ------------------------------------------------------------------------------------------------
# Distributions: moments of large samples against the analytic values
# ------------------------------------------------------------------------------------------------

def _geometric_moments(p):
    var = (1 - p) / p**2
    return 1 / p, var, var**2 * (9 + p * p / (1 - p))


def _uniform_moments(a, b):
    return (a + b) / 2, (b - a) ** 2 / 12, (b - a) ** 4 / 80


def _discrete_uniform_moments(a, b):
    """Integers in [a, b)."""
    k = b - a
    var = (k * k - 1) / 12
    return (a + b - 1) / 2, var, (k * k - 1) * (3 * k * k - 7) / 240


def _e(dtype=tl.float64):
    """An empty tensor of N elements for the in-place samplers."""
    return tl.empty(N, dtype=dtype)


def _bernoulli_moments(p):
    v = p * (1 - p)
    return p, v, v * (1 - 3 * v)


MOMENTS = [
    # name, draw(generator) -> N samples, (mean, var, fourth central moment)
    ("rand", lambda g: tl.rand(N, dtype=tl.float64, generator=g), _uniform_moments(0, 1)),
    ("rand_f32", lambda g: tl.rand(N, generator=g), _uniform_moments(0, 1)),
    ("uniform_", lambda g: _e().uniform_(-2, 3, generator=g), _uniform_moments(-2, 3)),
    ("randn", lambda g: tl.randn(N, dtype=tl.float64, generator=g), (0, 1, 3)),
    ("randn_bf16", lambda g: tl.randn(N, dtype=tl.bfloat16, generator=g).float(), (0, 1, 3)),
    ("randn_complex_real", lambda g: tl.randn(N, dtype=tl.complex128, generator=g).numpy().real,
     (0, 0.5, 0.75)),
    ("randn_complex_imag", lambda g: tl.randn(N, dtype=tl.complex128, generator=g).numpy().imag,
     (0, 0.5, 0.75)),
    ("normal_", lambda g: _e().normal_(2, 3, generator=g), (2, 9, 3 * 81)),
    ("normal_complex_imag", lambda g: _e(tl.complex128).normal_(2, 3, generator=g).numpy().imag,
     (2, 4.5, 3 * 4.5**2)),
    ("normal_tensors", lambda g: tl.normal(tl.full((N,), -1.0), tl.full((N,), 0.5), generator=g),
     (-1, 0.25, 3 * 0.0625)),
    ("normal_std_tensor", lambda g: tl.normal(4.0, tl.full((N,), 2.0), generator=g), (4, 4, 48)),
    ("normal_size", lambda g: tl.normal(1.0, 2.0, (N,), generator=g), (1, 4, 48)),
    ("log_normal_log", lambda g: _e().log_normal_(0.5, 0.25, generator=g).log(),
     (0.5, 0.0625, 3 * 0.0625**2)),
    ("exponential_", lambda g: _e().exponential_(2.5, generator=g), (0.4, 0.16, 9 / 2.5**4)),
    ("geometric_", lambda g: _e().geometric_(0.3, generator=g), _geometric_moments(0.3)),
    ("geometric_int", lambda g: _e(tl.int32).geometric_(0.6, generator=g),
     _geometric_moments(0.6)),
    ("bernoulli_", lambda g: _e(tl.float32).bernoulli_(0.3, generator=g),
     _bernoulli_moments(0.3)),
    ("bernoulli_tensor_p", lambda g: _e().bernoulli_(tl.full((N,), 0.8), generator=g),
     _bernoulli_moments(0.8)),
    ("bernoulli", lambda g: tl.bernoulli(tl.full((N,), 0.1), generator=g),
     _bernoulli_moments(0.1)),
    ("poisson", lambda g: tl.poisson(tl.full((N,), 3.5), generator=g), (3.5, 3.5, 3.5 * 11.5)),
    ("poisson_large", lambda g: tl.poisson(tl.full((N,), 40.0, dtype=tl.float64), generator=g),
     (40, 40, 40 * 121)),
    ("randint", lambda g: tl.randint(-3, 7, (N,), generator=g), _discrete_uniform_moments(-3, 7)),
    ("random_to", lambda g: _e().random_(10, generator=g), _discrete_uniform_moments(0, 10)),
    ("random_from_to", lambda g: _e(tl.int16).random_(-100, 50, generator=g),
     _discrete_uniform_moments(-100, 50)),
    ("random_uint8", lambda g: _e(tl.uint8).random_(generator=g),
     _discrete_uniform_moments(0, 256)),
    ("random_f16", lambda g: _e(tl.float16).random_(generator=g),
     _discrete_uniform_moments(0, 2049)),
    ("random_bool", lambda g: _e(tl.bool).random_(generator=g), _discrete_uniform_moments(0, 2)),
    ("randint_like", lambda g: tl.randint_like(_e(), 5, 9, generator=g),
     _discrete_uniform_moments(5, 9)),
]


@pytest.mark.parametrize("name,draw,moments", cases(MOMENTS))
def test_moments(name, draw, moments):
    check_moments(draw(tl.Generator().manual_seed(2024)), *moments, what=name)


RANGES = [
    # name, draw(generator), low, high, integral: every sample lies in [low, high]
    ("rand_f16", lambda g: tl.rand(N, dtype=tl.float16, generator=g), 0, 1 - 2**-11, False),
    ("uniform_bf16", lambda g: _e(tl.bfloat16).uniform_(1, 2, generator=g), 1, 2, False),
    ("randint", lambda g: tl.randint(-3, 7, (N,), generator=g), -3, 6, True),
    ("random_uint8_range", lambda g: _e(tl.uint8).random_(3, 9, generator=g), 3, 8, True),
    ("random_f32", lambda g: _e(tl.float32).random_(generator=g), 0, 2**24, True),
    ("random_from_none", lambda g: _e(tl.int8).random_(100, None, generator=g), 100, 127, True),
    ("random_int64_full", lambda g: _e(tl.int64).random_(-2**63, None, generator=g),
     -2**63, 2**63 - 1, True),
    ("geometric_", lambda g: _e(tl.int64).geometric_(0.9, generator=g), 1, 2**62, True),
    ("exponential_", lambda g: _e(tl.float32).exponential_(generator=g), 0, math.inf, False),
    ("poisson", lambda g: tl.poisson(tl.rand(N, generator=g) * 5, generator=g), 0, 100, True),
]


@pytest.mark.parametrize("name,draw,low,high,integral", cases(RANGES))
def test_ranges(name, draw, low, high, integral):
    x = draw(tl.Generator().manual_seed(11)).numpy()
    assert low <= x.min() and x.max() <= high, (x.min(), x.max())
    if integral:
        assert np.all(np.asarray(x, np.float64) == np.round(np.asarray(x, np.float64)))
    if name in ("randint", "random_uint8_range", "random_from_none"):
        assert x.min() == low and x.max() == high, "every value of a small range occurs"
    if name == "random_int64_full":
        assert x.min() < -2**62 and x.max() > 2**62, "the whole int64 range is drawn"


def test_cauchy_quartiles():
    """Half of a Cauchy(m, s) sample lies within [m - s, m + s], a quarter above m + s."""
    x = _e().cauchy_(1.0, 2.0, generator=tl.Generator().manual_seed(3)).numpy()
    check_frequencies([np.mean(np.abs(x - 1.0) <= 2.0), np.mean(x > 3.0)], [0.5, 0.25], N,
                      "quartiles")
    assert abs(np.median(x) - 1.0) <= Z * math.pi * 2.0 / (2 * math.sqrt(N))


def test_normal_broadcasts_each_mean_and_std():
    means, stds = tl.tensor([[-3.0], [0.0], [5.0]]), tl.tensor([0.5, 1.0, 2.0, 4.0])
    x = tl.normal(means.expand(3, N // 10).unsqueeze(-1), stds,
                  generator=tl.Generator().manual_seed(1)).numpy()
    for i, m in enumerate((-3.0, 0.0, 5.0)):
        for j, s in enumerate((0.5, 1.0, 2.0, 4.0)):
            check_moments(x[i, :, j], m, s * s, 3 * s**4, (m, s))


@pytest.mark.parametrize("replacement", [True, False])
def test_multinomial_frequencies(replacement):
    """With replacement: category i comes up with probability w_i / sum(w); without, so does
    the first draw of each row."""
    w = np.array([1.0, 2.0, 0.0, 5.0, 2.0])
    p = w / w.sum()
    rows = 20_000
    g = tl.Generator().manual_seed(8)
    samples = tl.multinomial(tl.tensor(np.tile(w, (rows, 1))), 4 if not replacement else 10,
                             replacement, generator=g).numpy()
    first = samples[:, 0] if not replacement else samples.ravel()
    freq = np.bincount(first, minlength=5) / first.size
    check_frequencies(freq, p, first.size, "multinomial")
    assert freq[2] == 0, "a zero weight is never drawn while others remain"


def test_multinomial_without_replacement_never_repeats():
    g = tl.Generator().manual_seed(5)
    probs = tl.rand(500, 12, generator=g) ** 4   # uneven rows
    for n in (1, 6, 12):
        s = tl.multinomial(probs, n, generator=g).numpy()
        assert s.shape == (500, n)
        assert all(len(set(row)) == n for row in s)
    s = tl.multinomial(tl.tensor([0.0, 1.0, 0.0, 0.0]), 4, generator=g).numpy()
    assert sorted(s) == [0, 1, 2, 3] and s[0] == 1, "zero weights come last, each once"


def test_randperm_is_a_permutation():
    g = tl.Generator().manual_seed(4)
    for n in (1, 2, 10, 1000):
        p = tl.randperm(n, generator=g).numpy()
        assert sorted(p.tolist()) == list(range(n))
    assert sorted(tl.randperm(2049, dtype=tl.float16, generator=g).tolist()) == list(range(2049))
    firsts = np.array([tl.randperm(10, generator=g)[0].item() for _ in range(500)])
    mean, var, _ = _discrete_uniform_moments(0, 10)
    assert abs(firsts.mean() - mean) <= Z * math.sqrt(var / firsts.size)
    # each of the 24 orders of 4 equally likely
    n = 2400
    drawn = [tuple(tl.randperm(4, generator=g).tolist()) for _ in range(n)]
    orders = list(itertools.permutations(range(4)))
    check_frequencies([drawn.count(o) / n for o in orders], [1 / 24] * 24, n, "randperm")


# ------------------------------------------------------------------------------------------------
# In-place semantics: identity, versions, views
# ------------------------------------------------------------------------------------------------

FILLS = [
    # name, fn(x) on a float32 tensor
    ("uniform_", lambda x: x.uniform_(2, 3)),
    ("normal_", lambda x: x.normal_(5, 1)),
    ("bernoulli_", lambda x: x.bernoulli_(1.0)),
    ("bernoulli_tensor", lambda x: x.bernoulli_(tl.ones(x.shape[-1]))),
    ("exponential_", lambda x: x.exponential_()),
    ("geometric_", lambda x: x.geometric_(0.5)),
    ("log_normal_", lambda x: x.log_normal_()),
    ("cauchy_", lambda x: x.cauchy_(10, 0.001)),
    ("random_", lambda x: x.random_(1, 10)),
]


@pytest.mark.parametrize("name,fill", cases(FILLS))
def test_in_place_identity_version_and_views(name, fill):
    x = tl.zeros(3, 4)
    alias = x.detach()
    assert fill(x) is x and x._version == 1 and alias._version == 1
    assert (x != 0).all() and (alias == x).all(), "an alias sees the write"
    base = tl.zeros(3, 4)
    row, col = base[1], base[:, 2]
    assert fill(row) is row
    b = base.numpy()
    assert (b[1] != 0).all() and (b[[0, 2]] == 0).all(), "writing a view writes its base"
    assert base._version == row._version == col._version == 1
    assert (col.numpy()[1] != 0) and (col.numpy()[[0, 2]] == 0).all(), "other views see it"
    t = base.t()
    fill(t[0])
    assert (base.numpy()[:, 0] != 0).all(), "a transposed view writes the right column"


# ------------------------------------------------------------------------------------------------
# Traced (jax.jit): the generator state is carried in and out of the traced program
# ------------------------------------------------------------------------------------------------

def _program(x):
    """A bit of everything: factories, parameter tensors, in-place samplers."""
    m = tl.normal(x, x.abs() + 0.5)
    y = x * 1.0
    y.normal_(0, 2).add_(tl.rand(3))
    return (m, y, tl.randn(2, 3), tl.randint(0, 5, (4,)), tl.randperm(6),
            tl.bernoulli(x.sigmoid()), tl.multinomial(x.exp(), 2),
            tl.poisson(x.abs()), tl.empty(3).random_(0, 100), tl.empty(3).exponential_())


def _carried(program, generator):
    """program as a pure function (state, *xs) -> (new state, *outputs)."""
    def step(state, *xs):
        generator.set_state(state)
        outs = program(*xs)
        return (generator.get_state(),) + tuple(outs)
    return to_jax_function(step)


def test_traced_program_matches_eager_and_advances():
    g = tl.default_generator
    x = tl.tensor([0.5, -1.0, 2.0])
    tl.manual_seed(3)
    start = tl.get_rng_state()
    eager = [o.numpy() for o in _program(x)]
    eager_state = tl.get_rng_state().numpy()
    jitted = jax.jit(_carried(_program, g))
    try:
        state, *traced = jitted(start._value(), x._value())
        state2, *again = jitted(state, x._value())
    finally:
        g.set_state(start)   # the traced program left a tracer in the generator
    np.testing.assert_array_equal(np.asarray(state), eager_state)
    for e, t in zip(eager, traced):
        assert e.dtype == t.dtype and e.shape == t.shape
        np.testing.assert_allclose(np.asarray(t, np.float64), np.asarray(e, np.float64),
                                   rtol=1e-6, atol=1e-6)
    assert any(not np.array_equal(a, b) for a, b in zip(traced, again)), \
        "the carried state gives fresh numbers on the next call"


def test_traced_generator_object_and_traced_parameters():
    g = tl.Generator().manual_seed(9)
    start = g.get_state()

    def program(mean, std, p, lo):
        return (tl.normal(mean, std, generator=g), tl.normal(mean, 2.0, generator=g),
                tl.normal(1.0, std, generator=g), tl.bernoulli(p, generator=g),
                tl.empty(3).uniform_(lo, 2.0, generator=g),
                tl.empty(3).bernoulli_(p, generator=g), tl.empty(3).normal_(lo, 1.0,
                                                                             generator=g))
    args = [tl.zeros(3), tl.ones(3), tl.full((3,), 0.5), tl.tensor(1.0)]
    eager = [o.numpy() for o in program(*args)]
    g.set_state(start)
    before = tl.get_rng_state().tolist()
    state, *traced = jax.jit(_carried(program, g))(start._value(), *[a._value() for a in args])
    g.set_state(start)
    assert tl.get_rng_state().tolist() == before, "the default generator was not touched"
    for e, t in zip(eager, traced):
        np.testing.assert_allclose(np.asarray(t), e, rtol=1e-6, atol=1e-6)
    assert np.asarray(traced[4]).min() >= 1.0


def test_traced_state_bytes_round_trip():
    g = tl.Generator().manual_seed(2**64 - 5)
    state = g.get_state()
    f = jax.jit(to_jax_function(lambda s: tl.Generator().set_state(s).get_state()))
    np.testing.assert_array_equal(np.asarray(f(state._value())), state.numpy())


def test_gradients_match_jax_grad():
    """The engine's gradients through samplers equal jax.grad of the same program (each draw
    seeded inside, so both runs see the same numbers): zero through the sample itself."""
    def fn(m, s):
        g = tl.Generator().manual_seed(0)
        y = tl.normal(m, s, generator=g) * m + tl.normal(m, 1.0, generator=g)
        z = (s * 1.0).uniform_(generator=g) * s + tl.poisson(s, generator=g)
        return y.sum() + z.sum() + tl.bernoulli(s.sigmoid(), generator=g).sum()
    assert_grads_match_jax(fn, tl.randn(2, 3, dtype=tl.float64), tl.rand(3, dtype=tl.float64))


# ------------------------------------------------------------------------------------------------
# Draws in chunks (NOTE [ random draws in chunks ] in torchlike/_random.py)
# ------------------------------------------------------------------------------------------------

CHUNKED = [
    # name, draw(shape, dtype, generator): one of the samplers drawn in chunks
    ("rand", lambda s, d, g: tl.rand(s, dtype=d, generator=g)),
    ("randn", lambda s, d, g: tl.randn(s, dtype=d, generator=g)),
    ("uniform_", lambda s, d, g: tl.empty(s, dtype=d).uniform_(-2, 3, generator=g)),
    ("normal_", lambda s, d, g: tl.empty(s, dtype=d).normal_(1, 2, generator=g)),
    ("bernoulli_", lambda s, d, g: tl.empty(s, dtype=d).bernoulli_(0.3, generator=g)),
    ("exponential_", lambda s, d, g: tl.empty(s, dtype=d).exponential_(2, generator=g)),
    ("log_normal_", lambda s, d, g: tl.empty(s, dtype=d).log_normal_(0.5, 0.25, generator=g)),
    ("cauchy_", lambda s, d, g: tl.empty(s, dtype=d).cauchy_(1, 0.5, generator=g)),
    ("parameter under no_grad", lambda s, d, g: _no_grad_init(s, d, g)),
]


def _no_grad_init(shape, dtype, g):
    p = tl.nn.Parameter(tl.empty(shape, dtype=dtype))
    with tl.no_grad():
        return p.uniform_(-1, 1, generator=g).detach()


@pytest.mark.parametrize("dtype", [tl.float32, tl.bfloat16, tl.float16], ids=dname)
@pytest.mark.parametrize("name,draw", cases(CHUNKED))
def test_a_draw_in_chunks_is_the_draws_own_program_bit_for_bit(name, draw, dtype, monkeypatch):
    """Every element of a draw made in chunks (two of them here, and one at a shape of its
    own) equals the one its own program draws, the oracle (every draw in chunks off)."""
    from torchlike import _random
    monkeypatch.setattr(_random, "_CHUNK", 64)
    shapes = [(3, 50), (7,)]   # (150 elements: three chunks, the last one cut)
    chunked = [draw(s, dtype, tl.Generator().manual_seed(11)) for s in shapes]
    monkeypatch.setattr(_random, "_CHUNKED", 0)
    own = [draw(s, dtype, tl.Generator().manual_seed(11)) for s in shapes]
    for c, o, s in zip(chunked, own, shapes):
        assert c.shape == o.shape == s and c.dtype == o.dtype == dtype
        assert c.device == o.device and c._value().committed
        bits = np.uint16 if dtype.itemsize == 2 else np.uint32
        np.testing.assert_array_equal(np.asarray(c._value()).view(bits),
                                      np.asarray(o._value()).view(bits))


INT_DRAWS = [
    # (low, high, shape, dtype): randint's ranges, dtypes and shapes
    (0, 35951, (32,), tl.int64), (-7, 3, (4, 5), tl.int32), (0, 2, (3,), tl.bool),
    (-128, 127, (17,), tl.int8), (0, 256, (9,), tl.uint8), (5, 6, (1,), tl.int16),
    (-2 ** 63, 2 ** 63 - 1, (2, 3, 4), tl.int64), (-1000, 10 ** 12, (4096,), tl.int64),
    (0, 5, (0,), tl.int64)]


@pytest.mark.parametrize("low,high,shape,dtype", INT_DRAWS)
def test_an_integer_draw_on_the_host_is_the_programs_bit_for_bit(low, high, shape, dtype,
                                                                 monkeypatch):
    """randint on a CPU is computed with numpy (NOTE [ integer draws on the host ]): each draw,
    two from one generator, equals the one its program draws, the oracle (the host's off), and
    is placed on the device as the program places it, with no program run (the second draw
    equal too: the generator advanced as the program's draw advances it)."""
    from torchlike import _random
    ran = []
    real = _random._factory_program
    monkeypatch.setattr(_random, "_factory_program", lambda *a: ran.append(a) or real(*a))
    g = tl.Generator().manual_seed(3)
    host = [tl.randint(low, high, shape, dtype=dtype, generator=g) for _ in range(2)]
    assert ran == []
    monkeypatch.setattr(_random, "_HOST_INTS", -1)
    g = tl.Generator().manual_seed(3)
    own = [tl.randint(low, high, shape, dtype=dtype, generator=g) for _ in range(2)]
    assert len(ran) == 2
    for h, o in zip(host, own):
        assert h.shape == o.shape == shape and h.dtype == o.dtype == dtype
        assert h.device == o.device and h._value().committed
        np.testing.assert_array_equal(h.numpy(), o.numpy())


def test_a_shape_drawn_often_compiles_its_own_program(monkeypatch):
    """The first RENT draws of one shape run the chunks' program; the next its own."""
    from torchlike import _host, _random
    asked = []
    real = _random._factory_program
    monkeypatch.setattr(_random, "_factory_program",
                        lambda op, static, *a: asked.append(dict(static)["shape"]) or
                        real(op, static, *a))
    g = tl.Generator().manual_seed(0)
    for _ in range(_host.RENT + 2):
        tl.randn(5, 9, generator=g)
    chunk = (_random._CHUNK,)
    assert asked == [chunk] * _host.RENT + [(5, 9)] * 2


def test_a_parameters_draw_under_no_grad_is_a_factory_draw():
    """nn.init's draws into a parameter (a leaf requiring grad, under no_grad) record nothing and
    take the factories' sampler, drawn in chunks: no program of the parameter's shape."""
    from torchlike._ops import sampling
    op = sampling._FILL["uniform_"]
    traces = op._traces[0]
    p = tl.nn.Parameter(tl.empty(7, 13))
    with tl.no_grad():
        p.uniform_(-1, 1)
    assert op._traces[0] == traces and p.grad_fn is None and p.requires_grad
    assert float(p.abs().max()) <= 1 and len(set(p.flatten().tolist())) == 91
