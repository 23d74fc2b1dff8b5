"""Parity tests for torchlike/_ops/attention.py against PyTorch: F.linear, F.bilinear,
F.scaled_dot_product_attention (both of PyTorch's CPU backends, masks, causal, GQA, dropout) and
F.multi_head_attention_forward.

Spec tables, one row per case: values, dtypes, shapes, grad_fn and next_functions names and
gradients against real torch (check_op); finite differences in float64 (gradcheck); dropout
statistics and reproducibility; PyTorch's errors; the traced (jax.jit) path.
"""
import warnings

import jax
import numpy as np
import pytest
import torch

import torchlike as tl
from torchlike.testing import to_jax_function

from parity import A, both, cases, check_op, gname, next_names, seed_of
from sample_stats import check_frequencies


def F(T):
    return T.nn.functional



# ------------------------------------------------------------------------------------------------
# linear, bilinear
# ------------------------------------------------------------------------------------------------

LINEAR = [
    # name, fn(T, *xs), input specs
    ("2d_bias", lambda T, x, w, b: F(T).linear(x, w, b), [(2, 4), (3, 4), (3,)]),
    ("1d_bias", lambda T, x, w, b: F(T).linear(x, w, b), [(4,), (3, 4), (3,)]),
    ("3d_bias", lambda T, x, w, b: F(T).linear(x, w, b), [(2, 5, 4), (3, 4), (3,)]),
    ("4d_bias", lambda T, x, w, b: F(T).linear(x, w, b), [(2, 2, 1, 4), (3, 4), (3,)]),
    ("2d", lambda T, x, w: F(T).linear(x, w), [(2, 4), (3, 4)]),
    ("1d", lambda T, x, w: F(T).linear(x, w), [(4,), (3, 4)]),
    ("3d", lambda T, x, w: F(T).linear(x, w), [(2, 5, 4), (3, 4)]),
    ("3d_noncontiguous_bias", lambda T, x, w, b: F(T).linear(x.transpose(0, 1), w, b),
     [(5, 2, 4), (3, 4), (3,)]),
    ("2d_noncontiguous_bias", lambda T, x, w, b: F(T).linear(x.t(), w, b),
     [(4, 2), (3, 4), (3,)]),
    ("vector_weight", lambda T, x, w: F(T).linear(x, w), [(2, 4), (4,)]),
    ("bias_broadcast", lambda T, x, w, b: F(T).linear(x, w, b), [(2, 4), (3, 4), (1,)]),
    ("bilinear", lambda T, a, b, w, c: F(T).bilinear(a, b, w, c),
     [(2, 3), (2, 4), (5, 3, 4), (5,)]),
    ("bilinear_nobias", lambda T, a, b, w: F(T).bilinear(a, b, w), [(2, 3), (2, 4), (5, 3, 4)]),
    ("bilinear_3d", lambda T, a, b, w, c: F(T).bilinear(a, b, w, c),
     [(3, 2, 3), (3, 2, 4), (5, 3, 4), (5,)]),
    ("bilinear_1d", lambda T, a, b, w: T.bilinear(a, b, w), [(3,), (4,), (2, 3, 4)]),
]


@pytest.mark.parametrize("name,fn,shapes", cases(LINEAR))
def test_linear(name, fn, shapes):
    check_op(name, fn, [A(s) for s in shapes])


@pytest.mark.parametrize("name,fn,shapes", cases(
    [r for r in LINEAR if r[0] in ("3d_bias", "1d", "3d_noncontiguous_bias", "bilinear_1d")]))
def test_linear_float64(name, fn, shapes):
    check_op(f"{name}/f64", fn, [A(s, "float64") for s in shapes])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("name,fn,shapes", cases(
    [r for r in LINEAR if r[0] in ("2d_bias", "1d_bias", "3d_bias", "3d", "bias_broadcast")]))
def test_linear_nothing_recorded(name, fn, shapes, dtype):
    # no input requires grad: the one-jit path
    check_op(f"{name}/nograd/{dtype}", fn, [A(s, dtype, grad=False) for s in shapes])


def test_linear_under_no_grad():
    def fn(T, x, w, b):
        with T.no_grad():
            return F(T).linear(x, w, b)
    check_op("linear_no_grad_mode", fn, [A((2, 3, 4)), A((3, 4)), A((3,))])


def test_linear_no_grad_bias():
    check_op("linear_nograd_bias", lambda T, x, w, b: F(T).linear(x, w, b),
             [A((2, 5, 4)), A((3, 4)), A((3,), grad=False)])


LINEAR_ERRORS = [
    ("0d", lambda T: F(T).linear(T.ones(()), T.ones(3, 4), T.ones(3)), "at least 1D"),
    ("shapes", lambda T: F(T).linear(T.ones(2, 5), T.ones(3, 4), T.ones(3)),
     r"cannot be multiplied \(2x5 and 4x3\)"),
    ("shapes_3d", lambda T: F(T).linear(T.ones(2, 3, 5), T.ones(3, 4)),
     r"cannot be multiplied \(6x5 and 4x3\)"),
    ("dtypes", lambda T: F(T).linear(T.ones(2, 4).double(), T.ones(3, 4)),
     "expected m1 and m2 to have the same dtype"),
    ("bilinear_ranks", lambda T: F(T).bilinear(T.ones(2, 2, 3), T.ones(2, 4), T.ones(5, 3, 4)),
     "input dimensions do not match: got 3 and 2"),
    ("bilinear_batch", lambda T: F(T).bilinear(T.ones(2, 3), T.ones(3, 4), T.ones(5, 3, 4)),
     "batch dimensions do not match at dim 0: got 2 and 3"),
    ("bilinear_in1", lambda T: F(T).bilinear(T.ones(2, 2), T.ones(2, 4), T.ones(5, 3, 4)),
     "input1 size does not match weight size: got 2 but expected 3"),
    ("bilinear_in2", lambda T: F(T).bilinear(T.ones(2, 3), T.ones(2, 4), T.ones(5, 3, 5)),
     "input2 size does not match weight size: got 4 but expected 5"),
    ("bilinear_bias", lambda T: F(T).bilinear(T.ones(2, 3), T.ones(2, 4), T.ones(5, 3, 4),
                                              T.ones(4)), "bias size does not match"),
]


@pytest.mark.parametrize("name,fn,match", cases(LINEAR_ERRORS))
def test_linear_errors(name, fn, match):
    both(fn, match=match, raises=True)


# ------------------------------------------------------------------------------------------------
# scaled_dot_product_attention
# ------------------------------------------------------------------------------------------------

def _sdpa(**kw):
    return lambda T, q, k, v, *m: F(T).scaled_dot_product_attention(
        q, k, v, *(m[:1]), **kw)


Q4, K4 = (2, 3, 4, 8), (2, 3, 5, 8)
DEAD_ROW = np.array([[1, 1, 0, 0, 1], [0, 0, 0, 0, 0], [1, 0, 0, 0, 0], [1, 1, 1, 1, 1]], bool)


class Fixed(A):
    """An input with the given values."""

    def __init__(self, values, dtype="bool", grad=True):
        super().__init__(values.shape, dtype, grad=grad)
        self.fixed = values

    def values(self, rng):
        return self.fixed


SDPA = [
    # name, fn(T, q, k, v[, mask]), input specs.  PyTorch's flash kernel (one node):
    ("flash", _sdpa(), [Q4, K4, K4]),
    ("flash_causal", _sdpa(is_causal=True), [Q4, K4, K4]),
    ("flash_causal_tall", _sdpa(is_causal=True), [(1, 2, 5, 8), (1, 2, 3, 8), (1, 2, 3, 8)]),
    ("flash_scale", _sdpa(scale=0.3), [Q4, K4, K4]),
    ("flash_bool_mask", _sdpa(), [Q4, K4, K4, A((4, 5), "bool")]),
    ("flash_bool_mask_dead_row", _sdpa(), [Q4, K4, K4, Fixed(DEAD_ROW)]),
    ("flash_float_mask", _sdpa(), [Q4, K4, K4, A((2, 1, 4, 5), grad=False)]),
    ("flash_float_mask_bcast", _sdpa(), [Q4, K4, K4, A((4, 1), grad=False)]),
    ("flash_mask_and_causal", _sdpa(is_causal=True), [Q4, K4, K4, A((4, 5), "bool")]),
    ("flash_gqa", _sdpa(enable_gqa=True), [(2, 4, 4, 8), (2, 2, 5, 8), (2, 2, 5, 8)]),
    # PyTorch's math composite
    ("math_3d", _sdpa(), [(3, 4, 8), (3, 5, 8), (3, 5, 8)]),
    ("math_2d", _sdpa(), [(4, 8), (5, 8), (5, 8)]),
    ("math_5d", _sdpa(), [(2, 2, 3, 4, 8), (2, 2, 3, 5, 8), (2, 2, 3, 5, 8)]),
    ("math_value_dim", _sdpa(), [Q4, K4, (2, 3, 5, 6)]),
    ("math_batch_broadcast", _sdpa(), [Q4, (1, 3, 5, 8), (1, 3, 5, 8)]),
    ("math_float_mask_grad", _sdpa(), [Q4, K4, K4, A((4, 5))]),
    ("math_mask_3d", _sdpa(), [Q4, K4, K4, A((3, 4, 5), "bool")]),
    ("math_causal_scale", _sdpa(is_causal=True, scale=0.7), [(3, 4, 8), (3, 5, 8), (3, 5, 6)]),
    ("math_gqa", _sdpa(enable_gqa=True), [(4, 4, 8), (2, 5, 8), (2, 5, 8)]),
    ("math_dead_row", _sdpa(), [(3, 4, 8), (3, 5, 8), (3, 5, 8), Fixed(DEAD_ROW)]),
    ("math_dropout_all", _sdpa(dropout_p=1.0), [Q4, K4, K4]),
]


def _specs(specs, dtype):
    return [s if isinstance(s, A) else A(s, dtype) for s in specs]


@pytest.mark.parametrize("name,fn,specs", cases(SDPA))
def test_sdpa(name, fn, specs):
    check_op(name, fn, _specs(specs, "float32"))


SDPA64 = ["flash", "flash_bool_mask_dead_row", "flash_mask_and_causal", "flash_gqa", "math_3d",
          "math_float_mask_grad", "math_causal_scale"]


@pytest.mark.parametrize("name,fn,specs", cases([r for r in SDPA if r[0] in SDPA64]))
def test_sdpa_float64(name, fn, specs):
    check_op(name + "/f64", fn, _specs(specs, "float64"))


def test_sdpa_half():
    check_op("sdpa_half", _sdpa(is_causal=True), [A(Q4, "float16", grad=False),
                                                   A(K4, "float16", grad=False),
                                                   A(K4, "float16", grad=False)])


def test_sdpa_mask_float_for_double_query():
    # a float32 mask is accepted with a float64 query
    check_op("sdpa_mask_f32_q64", _sdpa(), [A(Q4, "float64"), A(K4, "float64"),
                                             A(K4, "float64"), A((4, 5), grad=False)])


SDPA_ERRORS = [
    ("mask_and_causal_math", lambda T: F(T).scaled_dot_product_attention(
        T.ones(3, 4, 8), T.ones(3, 4, 8), T.ones(3, 4, 8), attn_mask=T.ones(4, 4, dtype=T.bool),
        is_causal=True), "Explicit attn_mask should not be set when is_causal=True"),
    ("dtypes", lambda T: F(T).scaled_dot_product_attention(
        T.ones(3, 4, 8), T.ones(3, 4, 8).double(), T.ones(3, 4, 8)),
     "query.dtype: float key.dtype: double and value.dtype: float"),
    ("rank", lambda T: F(T).scaled_dot_product_attention(T.ones(8), T.ones(4, 8), T.ones(4, 8)),
     "at least 2 dimensional"),
    ("mask_dtype", lambda T: F(T).scaled_dot_product_attention(
        T.ones(3, 4, 8), T.ones(3, 4, 8), T.ones(3, 4, 8), attn_mask=T.ones(4, 4).long()),
     "Expected attn_mask dtype to be bool or float or to match query dtype"),
    ("dropout_p", lambda T: F(T).scaled_dot_product_attention(
        T.ones(3, 4, 8), T.ones(3, 4, 8), T.ones(3, 4, 8), dropout_p=1.5),
     "dropout probability has to be between 0 and 1, but got 1.5"),
    ("gqa_heads", lambda T: F(T).scaled_dot_product_attention(
        T.ones(1, 3, 4, 8), T.ones(1, 2, 4, 8), T.ones(1, 2, 4, 8), enable_gqa=True),
     "Number of heads in key and value must divide"),
    ("head_dims", lambda T: F(T).scaled_dot_product_attention(
        T.ones(3, 4, 8), T.ones(3, 4, 6), T.ones(3, 4, 8)), None),
]


@pytest.mark.parametrize("name,fn,match", cases(SDPA_ERRORS))
def test_sdpa_errors(name, fn, match):
    both(fn, match=match, raises=True)


def _attend_uniform(T, p, n=4000, s=50, grad=False):
    """q = k = 0: every key gets weight 1/s; v = 1: each output counts the kept weights."""
    q = T.zeros(n, 1, 1, 4)
    v = T.ones(n, 1, s, 1, requires_grad=grad)
    return F(T).scaled_dot_product_attention(q, T.zeros(n, 1, s, 4), v, dropout_p=p), v


@pytest.mark.parametrize("p", [0.2, 0.5])
def test_sdpa_dropout_statistics(p):
    tl.manual_seed(0)
    out, _ = _attend_uniform(tl, p)
    vals = out.numpy().ravel()
    kept = vals * 50 * (1 - p)           # an integer count of kept keys per row
    np.testing.assert_allclose(kept, np.round(kept), atol=1e-3)
    check_frequencies(kept.mean() / 50, 1 - p, kept.size * 50, "keys kept")


def test_sdpa_dropout_reproducible_and_graph():
    tl.manual_seed(123)
    a, _ = _attend_uniform(tl, 0.3, n=8, s=6)
    b, _ = _attend_uniform(tl, 0.3, n=8, s=6)
    tl.manual_seed(123)
    c, v = _attend_uniform(tl, 0.3, n=8, s=6, grad=True)
    np.testing.assert_array_equal(a.numpy(), c.detach().numpy())
    assert not np.array_equal(a.numpy(), b.numpy())
    # the math path with dropout: PyTorch's node names
    ref, _ = _attend_uniform(torch, 0.3, n=8, s=6, grad=True)
    assert gname(c) == gname(ref) and next_names(c.grad_fn) == next_names(ref.grad_fn)
    c.sum().backward()     # each v row's gradient: the kept, rescaled weights of its column
    np.testing.assert_allclose(v.grad.numpy().sum(), c.detach().numpy().sum(), rtol=1e-5)


# ------------------------------------------------------------------------------------------------
# multi_head_attention_forward
# ------------------------------------------------------------------------------------------------

E, H, L, S, N = 8, 2, 3, 4, 2


def _mha(key_value="separate", masks=(), bias_kv=False, separate=False, statics=False,
         batch_first=False, no_bias=False, **kw):
    """fn(T, query, key, value, in_w, in_b, out_w, out_b, *extra) for one configuration;
    ``batch_first``: the query is (N, L, E), passed transposed as nn.MultiheadAttention does;
    ``no_bias``: both projections without bias."""
    def fn(T, q, k, v, wi, bi, wo, bo, *extra):
        extra = list(extra)
        if batch_first:
            q = q.transpose(1, 0)
        if no_bias:
            bi = bo = None
        if key_value == "self":
            k = v = q
        elif key_value == "shared":
            v = k
        opts = dict(kw)
        bk = bv = None
        if bias_kv:
            bk, bv = extra.pop(0), extra.pop(0)
        if statics:
            opts["static_k"], opts["static_v"] = extra.pop(0), extra.pop(0)
        for name in masks:
            opts[name] = extra.pop(0)
        if separate:
            opts.update(use_separate_proj_weight=True, q_proj_weight=wi[:E],
                        k_proj_weight=wi[E:2 * E], v_proj_weight=wi[2 * E:])
        return F(T).multi_head_attention_forward(
            q, k, v, E, H, wi, bi, bk, bv, opts.pop("add_zero_attn", False),
            opts.pop("dropout_p", 0.0), wo, bo, **opts)
    return fn


def _base(batched=True, batch_first=False):
    lead = (N,) if batched else ()
    query = (N, L, E) if batch_first else (L,) + lead + (E,)
    return [query, (S,) + lead + (E,), (S,) + lead + (E,), (3 * E, E), (3 * E,), (E, E), (E,)]


MHA = [
    # name, options of _mha, extra input specs, batched
    ("plain", {}, [], True),
    ("self", dict(key_value="self"), [], True),
    ("shared_kv", dict(key_value="shared"), [], True),
    ("heads_not_averaged", dict(average_attn_weights=False), [], True),
    ("key_padding_bool", dict(masks=["key_padding_mask"]), [A((N, S), "bool")], True),
    ("key_padding_float", dict(masks=["key_padding_mask"]), [A((N, S), grad=False)], True),
    ("attn_mask_2d_bool", dict(masks=["attn_mask"]),
     [Fixed(np.array([[0, 1, 0, 0], [0, 0, 1, 1], [1, 0, 0, 0]], bool))], True),
    ("attn_mask_3d_float", dict(masks=["attn_mask"]), [A((N * H, L, S), grad=False)], True),
    ("both_masks", dict(masks=["attn_mask", "key_padding_mask"]),
     [A((L, S), "float64", grad=False), A((N, S), "float64", grad=False)], True),
    ("causal", dict(masks=["attn_mask"], is_causal=True),
     [Fixed(np.triu(np.ones((L, S), bool), 1))], True),
    ("bias_kv", dict(masks=["attn_mask", "key_padding_mask"], bias_kv=True),
     [(1, 1, E), (1, 1, E), A((L, S), grad=False),
      Fixed(np.array([[0, 0, 1, 0], [0, 1, 0, 0]], bool))], True),
    ("zero_attn", dict(masks=["attn_mask"], add_zero_attn=True), [A((L, S), grad=False)], True),
    ("separate_weights", dict(separate=True), [], True),
    ("static_kv", dict(statics=True), [(N * H, 5, E // H), (N * H, 5, E // H)], True),
    ("eval_ignores_dropout", dict(dropout_p=0.5, training=False), [], True),
    ("unbatched", dict(masks=["key_padding_mask"]), [Fixed(np.array([0, 1, 0, 0], bool))],
     False),
    ("unbatched_mask_3d", dict(masks=["attn_mask"]), [A((H, L, S), "float64", grad=False)],
     False),
]


def _check_pair(name, fn, specs, rtol=None, atol=None):
    """check_op for a function returning (output, weights or None)."""
    rng = np.random.default_rng(seed_of(name))
    vals = [a.values(rng) for a in specs]

    def go(T):
        xs = [a.make(T, v) for a, v in zip(specs, vals)]
        out, weights = fn(T, *xs)
        res = {"out": out, "weights": weights, "next": next_names(out.grad_fn)}
        g = np.random.default_rng(seed_of(name + "/g")).standard_normal(tuple(out.shape))
        loss = (out * T.tensor(g, dtype=out.dtype)).sum()
        if weights is not None:
            res["weights_next"] = next_names(weights.grad_fn)
            loss = loss + (weights * weights).sum()
        loss.backward()
        res["grads"] = [x.grad for x in xs]
        return res

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # mismatched mask types warn in both libraries
        both(go, rtol=rtol, atol=atol)


def _need_weights(name, other_path=False):
    """Alternate rows take the need_weights=False path (scaled_dot_product_attention)."""
    return ([r[0] for r in MHA].index(name) % 2 == 0) != other_path


@pytest.mark.parametrize("name,options,extra,batched", cases(MHA))
def test_mha(name, options, extra, batched):
    # float64: float32 rounding through the whole layer exceeds the float32 tolerances
    nw = _need_weights(name)
    _check_pair(f"mha/{name}/{nw}", _mha(need_weights=nw, **options),
                _specs(_base(batched) + extra, "float64"))


@pytest.mark.parametrize("name,options,extra,batched", cases(
    [r for r in MHA if r[0] in ("key_padding_bool", "causal", "bias_kv", "unbatched")]))
def test_mha_other_path(name, options, extra, batched):
    nw = _need_weights(name, other_path=True)
    _check_pair(f"mha/{name}/{nw}", _mha(need_weights=nw, **options),
                _specs(_base(batched) + extra, "float64"))


SELF_MHA = [
    # self-attention (query is key is value) without weights takes its own path in torchlike
    # (one projection straight to the heads layout); each mask form against PyTorch
    ("self_key_padding", dict(masks=["key_padding_mask"]),
     [Fixed(np.array([[0, 0, 1], [1, 0, 0]], bool))], True),
    ("self_attn_mask_2d", dict(masks=["attn_mask"]),
     [Fixed(np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]], bool))], True),
    ("self_attn_mask_3d", dict(masks=["attn_mask"]), [A((N * H, L, L), "float64", grad=False)],
     True),
    ("self_both_masks", dict(masks=["attn_mask", "key_padding_mask"]),
     [A((L, L), "float64", grad=False), A((N, L), "float64", grad=False)], True),
    ("self_causal", dict(masks=["attn_mask"], is_causal=True),
     [Fixed(np.triu(np.ones((L, L), bool), 1))], True),
    ("self_causal_padding", dict(masks=["attn_mask", "key_padding_mask"], is_causal=True),
     [Fixed(np.triu(np.ones((L, L), bool), 1)), Fixed(np.array([[0, 0, 1], [0, 0, 0]], bool))],
     True),
    ("self_unbatched", dict(masks=["key_padding_mask"]), [Fixed(np.array([0, 1, 0], bool))],
     False),
    # a batch_first query (its transpose passed in), which torchlike projects in its own order
    ("self_batch_first", dict(batch_first=True), [], True),
    ("self_batch_first_padding", dict(batch_first=True, masks=["key_padding_mask"]),
     [Fixed(np.array([[0, 0, 1], [1, 0, 0]], bool))], True),
    ("self_batch_first_causal", dict(batch_first=True, masks=["attn_mask"], is_causal=True),
     [Fixed(np.triu(np.ones((L, L), bool), 1))], True),
    ("self_batch_first_no_bias", dict(batch_first=True, no_bias=True), [], True),
]


@pytest.mark.parametrize("need_weights", [False, True])
@pytest.mark.parametrize("name,options,extra,batched", cases(SELF_MHA))
def test_mha_self_attention(name, options, extra, batched, need_weights):
    _check_pair(f"mha/{name}/{need_weights}",
                _mha(key_value="self", need_weights=need_weights, **options),
                _specs(_base(batched, options.get("batch_first", False)) + extra, "float64"))


def test_mha_projection_views_fold():
    """Self-attention's packed path runs each projection as one op, its view into heads or back
    into (tokens, batch) folded in (NOTE [ folded views ] in torchlike/_dispatch.py): the output,
    its base (the output projection's product), graph and gradients are PyTorch's."""
    rng = np.random.default_rng(seed_of("mha/views"))
    x = rng.standard_normal((2, 3, 8))
    state = {k: rng.standard_normal(v) for k, v in (
        ("in_proj_weight", (24, 8)), ("in_proj_bias", (24,)), ("out_proj.weight", (8, 8)),
        ("out_proj.bias", (8,)))}

    def go(T):
        mha = T.nn.MultiheadAttention(8, 2, batch_first=True, dtype=T.float64)
        mha.load_state_dict({k: T.tensor(v) for k, v in state.items()})
        q = T.tensor(x, requires_grad=True)
        out = mha(q, q, q, need_weights=False)[0]
        base = out._base
        (out * out).sum().backward()
        return [out, gname(out), tuple(base.shape), base.detach(), gname(base),
                q.grad, mha.in_proj_weight.grad, mha.out_proj.weight.grad]
    both(go)
    mha = tl.nn.MultiheadAttention(8, 2, batch_first=True)
    q = tl.randn(2, 3, 8, requires_grad=True)
    with tl.autograd.profiler.profile() as prof:
        out = mha(q, q, q, need_weights=False)[0]
    names = [e.name for e in prof.function_events]
    assert names.count("aten::addmm") == 2 and "aten::view" not in names, names
    with tl.no_grad(), tl.autograd.profiler.profile() as prof:
        plain = mha(q, q, q, need_weights=False)[0]
    names = [e.name for e in prof.function_events]
    assert names.count("aten::linear") == 2 and "aten::view" not in names, names
    assert plain._base.shape == out._base.shape and tl.allclose(plain, out)


MHA_ERRORS = [
    ("embed_dim", lambda T, q: F(T).multi_head_attention_forward(
        q, q, q, 7, 2, T.ones(24, 8), None, None, None, False, 0., T.ones(8, 8), None),
     "was expecting embedding dimension of 7, but got 8"),
    ("rank", lambda T, q: F(T).multi_head_attention_forward(
        q[None], q[None], q[None], 8, 2, T.ones(24, 8), None, None, None, False, 0.,
        T.ones(8, 8), None), "query should be unbatched 2D or batched 3D tensor"),
    ("causal_without_mask", lambda T, q: F(T).multi_head_attention_forward(
        q, q, q, 8, 2, T.ones(24, 8), None, None, None, False, 0., T.ones(8, 8), None,
        is_causal=True), "Need attn_mask if specifying the is_causal hint"),
    ("mask_shape", lambda T, q: F(T).multi_head_attention_forward(
        q, q, q, 8, 2, T.ones(24, 8), None, None, None, False, 0., T.ones(8, 8), None,
        attn_mask=T.ones(2, 2)), "The shape of the 2D attn_mask is"),
    ("heads", lambda T, q: F(T).multi_head_attention_forward(
        q, q, q, 8, 3, T.ones(24, 8), None, None, None, False, 0., T.ones(8, 8), None),
     "embed_dim 8 not divisible by num_heads 3"),
    ("int_mask", lambda T, q: F(T).multi_head_attention_forward(
        q, q, q, 8, 2, T.ones(24, 8), None, None, None, False, 0., T.ones(8, 8), None,
        key_padding_mask=T.ones(2, 3, dtype=T.int64)), "only bool and floating types"),
    ("padding_shape", lambda T, q: F(T).multi_head_attention_forward(
        q, q, q, 8, 2, T.ones(24, 8), None, None, None, False, 0., T.ones(8, 8), None,
        key_padding_mask=T.ones(2, 4, dtype=T.bool)),
     r"Expected key_padded_mask.shape\[1\] to be 3, but got 4"),
    # float32 masks merged for a float64 query (the need_weights path adds them to its scores)
    ("mask_dtypes", lambda T, q: F(T).multi_head_attention_forward(
        *[q.double()] * 3, 8, 2, T.ones(24, 8).double(), None, None, None, False, 0.,
        T.ones(8, 8).double(), None, attn_mask=T.zeros(3, 3), key_padding_mask=T.zeros(2, 3)),
     "Input dtypes must be the same, got: input float, batch1: double, batch2: double"),
]


@pytest.mark.parametrize("name,fn,match", cases(MHA_ERRORS))
def test_mha_errors(name, fn, match):
    both(lambda T: fn(T, T.ones(3, 2, 8)), match=match, raises=True)


def test_mha_dropout_trains():
    tl.manual_seed(0)
    xs = [tl.randn(*s, dtype=tl.float64) for s in _base()]
    a, _ = _mha(dropout_p=0.5, need_weights=False)(tl, *xs)
    b, _ = _mha(dropout_p=0.5, need_weights=False)(tl, *xs)
    c, _ = _mha(dropout_p=0.5, training=False, need_weights=False)(tl, *xs)
    d, _ = _mha(dropout_p=0.0, need_weights=False)(tl, *xs)
    assert not np.allclose(a.numpy(), b.numpy())
    np.testing.assert_allclose(c.numpy(), d.numpy())


# ------------------------------------------------------------------------------------------------
# finite differences (float64) and the traced path
# ------------------------------------------------------------------------------------------------

GRADCHECK = [
    ("linear_3d", lambda x, w, b: tl.nn.functional.linear(x, w, b), [(2, 2, 3), (2, 3), (2,)]),
    ("bilinear", lambda a, b, w: tl.nn.functional.bilinear(a, b, w), [(2, 2), (2, 3), (2, 2, 3)]),
    ("sdpa_flash_causal", lambda q, k, v: tl.nn.functional.scaled_dot_product_attention(
        q, k, v, is_causal=True), [(1, 1, 3, 2), (1, 1, 3, 2), (1, 1, 3, 2)]),
    ("sdpa_math_mask", lambda q, k, v, m: tl.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=m), [(1, 2, 2), (1, 3, 2), (1, 3, 2), (2, 3)]),
]


@pytest.mark.parametrize("name,fn,shapes", cases(GRADCHECK))
def test_gradcheck(name, fn, shapes):
    rng = np.random.default_rng(seed_of(name))
    xs = [tl.tensor(rng.uniform(-1, 1, s), dtype=tl.float64, requires_grad=True) for s in shapes]
    assert tl.autograd.gradcheck(fn, xs)


def test_traced():
    def program(x, w, b, m):
        h = tl.nn.functional.linear(x, w, b).unflatten(-1, (2, 2)).transpose(1, 2)
        return tl.nn.functional.scaled_dot_product_attention(h, h, h, attn_mask=m > 0)
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s) for s in ((2, 3, 4), (4, 4), (4,), (3, 3))]
    eager = program(*[tl.tensor(a) for a in args]).numpy()
    with jax.enable_x64(True):   # its JAX code reads 64-bit data
        traced = jax.jit(to_jax_function(program))(*args)
    np.testing.assert_allclose(np.asarray(traced), eager, rtol=1e-12)
