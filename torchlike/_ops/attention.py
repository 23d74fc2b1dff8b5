"""Linear maps and attention: ``linear``, ``bilinear``, ``scaled_dot_product_attention`` and
``multi_head_attention_forward``.

``linear`` and ``bilinear`` are composites, as in PyTorch (``addmm`` / ``matmul`` /
``_trilinear`` plus views), so their graphs carry PyTorch's nodes; when no graph is recorded,
``linear`` is one fused op.

NOTE [ sdpa backends ]
PyTorch's CPU build picks a backend per call.  Where it picks its fused flash kernel (4-D
inputs, no dropout, equal batch and head counts (or ``enable_gqa``), one head size for q, k and
v, non-empty sequences, a 2-D or 4-D mask that does not require grad) torchlike runs ONE Op
whose node is ``ScaledDotProductFlashAttentionForCpuBackward0``: softmax(q k^T * scale + mask) v
in one jit (a mask and ``is_causal`` together combine, as that kernel does).  Everywhere else
PyTorch runs its "math" composite and so does torchlike, from the same ops (q and k^T each
scaled by sqrt(scale), matmul, add the mask, ``_safe_softmax``, dropout as a product with a
scaled Bernoulli mask from torchlike's global generator, matmul), so the graph reads the same.
Rows whose every score is masked give 0, as PyTorch's ``_safe_softmax`` does.  PyTorch's backend
switches choose as they do there: ``torchlike.backends.cuda.enable_flash_sdp(False)`` sends every
call down the math path, and with the math path disabled too no backend is left (PyTorch's
errors).
"""
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _amp_hook
from .. import _dtype as D, _precision
from .._dispatch import Op, call, eager_forward, remember
from .._host import bucket, in_bucket, in_buckets
from .._quick import SOFTMAX_FUSION
from .._random import _C_NAMES, _key, random_uniform
from .._tensor import Tensor
from ..backends import cuda as _sdp_switches
from ..autograd.grad_mode import _state as _grad_state
from . import linalg, pointwise
from .activation import _gelu
from .dropout import dropout
from .normalization import _layer_norm
from .padded import matrix_rows, product_rows
from .shape import SLICE, T, VIEW, slice_static
from .spatial import CONSTANT_PAD

# --- linear, bilinear ---------------------------------------------------------------------------


def _linear(x, w, *bias, precision):
    y = jnp.matmul(x, w.T, precision=precision)
    return y + bias[0] if bias else y


# NOTE: one jit for a linear layer when nothing is recorded (inference, no_grad): the same
# maths as the composite below, without its three or four dispatches.
# (NOTE [ rows in buckets ] in _host.py; NOTE [ a short call in a longer one's program ])
LINEAR = Op("linear", _linear, None, cold=lambda arrays, static, dt: in_buckets(
    LINEAR, static, dt, arrays, (arrays[0].ndim - 1, None, None)), bucket=matrix_rows)
# the same, its output's view folded (NOTE [ folded views ] in _dispatch.py; ``_out``)
_LINEAR_VIEW = Op("linear", _linear, None, view_out=(VIEW, "out"))


# The recorded products of a linear layer: addmm / mm with weight.t() folded into their own
# program (NOTE [ folded views ] in _dispatch.py), and without addmm's beta and alpha, which are
# 1 here (as operands they would cost the backward program a pass over each gradient).
def _addmm_t(bias, x, wt, precision):
    return bias + linalg._matmul(x, wt, precision)


# (a short batch runs a longer one's program: NOTE [ a short call in a longer one's program ])
_ADDMM_T = Op("addmm", _addmm_t, "AddmmBackward0", saves={1: (2,), 2: (1,)}, fold={2: T},
              bucket=product_rows)
_MM_T = Op("mm", linalg.MM.fn, "MmBackward0", saves=linalg.MM.saves, fold={1: T},
           bucket=product_rows)
# An N-d input's flattening view(-1, in) and the output's view folded too; their statics are
# the op's "flat" and "out" arguments.  The product is the flat matrix's, as PyTorch's is: over
# the input's own leading axes instead (the weight's gradient then contracts two axes, which XLA
# runs as a transposing copy and a fused kernel) the backward took 1.1-2x as long (2-core CPU,
# jax 0.10.2: (32, 32, 32) @ (32, 96) 387 -> 180 us, (35, 20, 128) @ (128, 2000) 5.9 -> 4.4 ms).
_ADDMM_FLAT_T = Op("addmm", _addmm_t, "AddmmBackward0", saves={1: (2,), 2: (1,)},
                   fold={1: (VIEW, "flat"), 2: T}, view_out=(VIEW, "out"))
# a product's output view folded (MultiheadAttention's output projection)
_ADDMM_VIEW_T = Op("addmm", _addmm_t, "AddmmBackward0", saves={1: (2,), 2: (1,)},
                   fold={2: T}, view_out=(VIEW, "out"))
_MM_VIEW_T = Op("mm", linalg.MM.fn, "MmBackward0", saves=linalg.MM.saves, fold={1: T},
                view_out=(VIEW, "out"))


def _out(view, rows, weight):
    """The static of a folded output view: ``view``'s shape, of a (rows, out_features) base."""
    return (("out", ((("shape", tuple(view)),), (rows, weight._aval().shape[0]))),)


def _records(*tensors):
    if _grad_state.grad_enabled:
        for t in tensors:
            if t is not None and t.requires_grad:
                return True
    return False


def _plain(input, weight, bias):
    """Whether the one-jit path applies: well-formed operands of one (non-bool) dtype."""
    # NOTE [ reading an array's shape and dtype ] in _dispatch.py: this runs on every layer
    x, w = input._aval(), weight._aval()
    xs, ws, dt = x.shape, w.shape, x.dtype
    if not (len(ws) == 2 and xs and xs[-1] == ws[1] and w.dtype == dt and dt != np.bool_):
        return False
    if bias is None:
        return True
    b = bias._aval()
    return b.dtype == dt and b.shape in ((), (1,), (ws[0],))


@_amp_hook.entry("linear")
def linear(input, weight, bias=None):
    """Mirrors ``torch.nn.functional.linear``: ``input @ weight.T + bias``.

    As PyTorch composes it: ``addmm`` for a matrix input with a bias (a contiguous input of
    another rank is flattened to a matrix first and viewed back), else ``matmul`` (+ bias);
    when no graph is recorded, one fused op.

    Example:
        >>> F.linear(torchlike.ones(2, 3), torchlike.ones(4, 3), torchlike.zeros(4)).shape
        torchlike.Size([2, 4])
    """
    return _linear_as(input, weight, bias, None)


@_amp_hook.entry("linear")
def _projection(input, weight, bias, view):
    """``linear(input, weight, bias).view(view)``: MultiheadAttention's projections, their
    view folded into the product wherever linear's own views are (NOTE [ folded views ])."""
    return _linear_as(input, weight, bias, view)


def _linear_as(input, weight, bias, view):
    """``linear``, and its result's ``.view(view)`` where ``view`` is given."""
    plain = _plain(input, weight, bias)
    if not _records(input, weight, bias) and plain:
        args = (input, weight) if bias is None else (input, weight, bias)
        if view is None:
            return call(LINEAR, *args, static=linalg._static())
        if input.ndim >= 2 and input.is_contiguous():   # (PyTorch's base: the product)
            rows = math.prod(input.shape[:-1])
            return call(_LINEAR_VIEW, *args, static=linalg._static() + _out(view, rows, weight))
        return call(LINEAR, *args, static=linalg._static()).view(view)
    if input.ndim == 0 or weight.ndim == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are "
                           f"{input.ndim}D and {weight.ndim}D")
    if input.ndim == 2 and plain:
        static = linalg._static()
        if view is not None:   # its output view folded (MultiheadAttention's out projection)
            static += _out(view, input.shape[0], weight)
            if bias is None:
                return call(_MM_VIEW_T, input, weight, static=static)
            return call(_ADDMM_VIEW_T, bias, input, weight, static=static)
        if bias is None:
            out = call(_MM_T, input, weight, static=static)
        else:
            out = call(_ADDMM_T, bias, input, weight, static=static)
    elif bias is not None and weight.ndim == 2 and input.ndim == 2:
        out = linalg.addmm(bias, input, weight.t())
    elif bias is not None and weight.ndim == 2 and input.is_contiguous():
        rows, k = tuple(input.shape[:-1]), input.shape[-1]
        if plain and k:   # recorded (else the fused op ran): both views folded
            return _flat_addmm(input, weight, bias, rows, k, view)
        out = _linear_as(input.view(-1, k), weight, bias, None)
        # (the view op itself: out is a fresh contiguous matrix, nothing to check)
        out = call(VIEW, out, static=(("shape", rows + (out.shape[-1],)),))
    else:
        out = linalg.matmul(input, weight.t())
        if bias is not None:
            out = out + bias
    return out if view is None else out.view(view)


def _flat_addmm(input, weight, bias, rows, k, view):
    """The recorded addmm of a contiguous (*rows, k) input's flattening view(-1, k), viewed as
    ``view`` (None: (*rows, out_features)): both views folded into it (NOTE [ folded views ]).
    A layer's static arguments are made once per shape (they are the same every step)."""
    precision, features = linalg._static(), weight._aval().shape[0]
    key = (precision, rows, k, features, view if view is None else tuple(view))
    static = _FLAT_STATICS.get(key)
    if static is None:
        n = math.prod(rows)
        static = remember(_FLAT_STATICS, key, precision + (("flat", (("shape", (n, k)),)),) +
                          _out(view or rows + (features,), n, weight))
    return call(_ADDMM_FLAT_T, bias, input, weight, static=static)


_FLAT_STATICS = {}   # _flat_addmm's static arguments, by shapes (bounded: _dispatch.remember)


def _trilinear(a, w, b, precision):
    return jnp.einsum("ni,oij,nj->no", a, w, b, precision=precision)


TRILINEAR = Op("_trilinear", _trilinear, "TrilinearBackward0")


@_amp_hook.entry("bilinear")
def bilinear(input1, input2, weight, bias=None):
    """Mirrors ``torch.nn.functional.bilinear``: ``y[..., o] = x1 @ weight[o] @ x2 + bias[o]``
    (PyTorch's ``_trilinear`` between flattened inputs, viewed back, plus the bias)."""
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and "
                           f"{input2.ndim}")
    for i in range(input1.ndim - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: "
                               f"got {input1.shape[i]} and {input2.shape[i]}")
    for name, x, d in (("input1", input1, 1), ("input2", input2, 2)):
        if x.shape[-1] != weight.shape[d]:
            raise RuntimeError(f"bilinear(): {name} size does not match weight size: got "
                               f"{x.shape[-1]} but expected {weight.shape[d]}")
    if bias is not None and bias.shape[0] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[0]} but expected {weight.shape[0]}")
    for x in (input2, weight):
        if x.dtype is not input1.dtype:
            raise RuntimeError(f"expected scalar type {input1.dtype._scalar_name} but found "
                               f"{x.dtype._scalar_name}")
    a = input1.reshape(-1, input1.shape[-1])
    b = input2.reshape(-1, input2.shape[-1])
    out = call(TRILINEAR, a, weight, b, static=_precision.static())
    out = out.reshape(*input1.shape[:-1], weight.shape[0])
    return out if bias is None else out + bias


# --- scaled_dot_product_attention ---------------------------------------------------------------

@jax.custom_jvp
def _safe_softmax(s):
    """Softmax over the last dim; a row that is all -inf gives zeros (PyTorch's _safe_softmax).
    Its derivative is softmax's, ``y * (ds - sum(ds * y))`` (as PyTorch's backward and
    jax.nn.softmax compute it, rather than through exp, sum and the division)."""
    m = jnp.max(s, -1, keepdims=True, initial=-jnp.inf)
    dead = m == -jnp.inf
    e = jnp.exp(s - jnp.where(dead, jnp.zeros_like(m), m))
    total = jnp.sum(e, -1, keepdims=True)
    return e / jnp.where(dead, jnp.ones_like(total), total)


@_safe_softmax.defjvp
def _safe_softmax_jvp(primals, tangents):
    y = _safe_softmax(primals[0])
    ds = tangents[0]
    return y, y * (ds - jnp.sum(ds * y, -1, keepdims=True))


SAFE_SOFTMAX = Op("_safe_softmax", _safe_softmax, "SafeSoftmaxBackward0", saves=("result",),
                  fusion=SOFTMAX_FUSION)   # (NOTE [ quick compiles ] in _quick.py)


def _sdpa(q, k, v, *mask, is_causal, scale, gqa, precision):
    dtype = q.dtype
    if dtype.itemsize < 4:    # PyTorch's CPU kernel accumulates half precision in float32
        q, k, v = (x.astype(jnp.float32) for x in (q, k, v))
    if gqa and k.shape[-3] != q.shape[-3]:
        k = jnp.repeat(k, q.shape[-3] // k.shape[-3], axis=-3)
        v = jnp.repeat(v, q.shape[-3] // v.shape[-3], axis=-3)
    s = jnp.einsum("...le,...se->...ls", q, k, precision=precision)
    s = s * jnp.asarray(scale, q.dtype)
    neg = jnp.asarray(-jnp.inf, s.dtype)
    if is_causal:
        s = jnp.where(jnp.tril(jnp.ones(s.shape[-2:], bool)), s, neg)
    if mask:
        m = mask[0]
        s = jnp.where(m, s, neg) if m.dtype == jnp.bool_ else s + m.astype(s.dtype)
    # only a mask can mask a whole row (a causal row keeps its first key); without one, the
    # plain softmax, which XLA's CPU backend fuses with the scores' matmul
    w = _safe_softmax(s) if mask else jax.nn.softmax(s, -1)
    return jnp.einsum("...ls,...se->...le", w, v, precision=precision).astype(dtype)


SDPA_FLASH = Op("_scaled_dot_product_flash_attention_for_cpu", _sdpa,
                "ScaledDotProductFlashAttentionForCpuBackward0", inputs=3)


def _dropout_noise(like, key, p):
    keep = random_uniform(key, like.shape, jnp.float32) >= p
    return jnp.where(keep, jnp.asarray(1 / (1 - p) if p < 1 else 0, like.dtype),
                     jnp.zeros((), like.dtype))


DROPOUT_NOISE = Op("dropout_noise", _dropout_noise, None)


def _dropout_mul(x, p):
    """``x * noise``: PyTorch's training-mode dropout as its math path writes it (MulBackward0)."""
    noise = call(DROPOUT_NOISE, x, _key(None, x), static=(("p", float(p)),))
    return pointwise.mul(x, noise)


def _cname(dt):
    return _C_NAMES[dt._name]


def _check_sdpa(query, key, value, attn_mask, dropout_p):
    if not (query.dtype is key.dtype is value.dtype):
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{_cname(query.dtype)} key.dtype: {_cname(key.dtype)} and value.dtype: "
            f"{_cname(value.dtype)} instead.")
    if min(query.ndim, key.ndim, value.ndim) < 2:
        raise RuntimeError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got "
            f"query.dim: {query.ndim} key.dim: {key.ndim} and value.dim: {value.ndim} instead.")
    if attn_mask is not None and attn_mask.dtype not in (D.bool_, D.float32, query.dtype):
        raise RuntimeError(
            "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
            f"attn_mask.dtype: {_cname(attn_mask.dtype)} and  query.dtype: "
            f"{_cname(query.dtype)} instead.")
    if not query.dtype.is_floating_point:
        raise RuntimeError(f"expected scalar type Float but found {query.dtype._scalar_name}")
    if dropout_p > 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    if dropout_p < 0:
        raise RuntimeError("scaled_dot_product_attention_flash_attention: Currently do not "
                           "support dropout > 0")


def _flash_ok(query, key, value, attn_mask, dropout_p, enable_gqa):
    """Whether PyTorch's CPU build would take its flash kernel (NOTE [ sdpa backends ])."""
    if not (query.ndim == key.ndim == value.ndim == 4) or dropout_p > 0:
        return False
    if not (query.shape[0] == key.shape[0] == value.shape[0]):
        return False
    hq, hk, hv = query.shape[1], key.shape[1], value.shape[1]
    if not (hq == hk == hv or (enable_gqa and hk == hv and hq % hk == 0)):
        return False
    if not (query.shape[-1] == key.shape[-1] == value.shape[-1]):
        return False
    if query.shape[2] == 0 or key.shape[2] == 0:
        return False
    return attn_mask is None or (attn_mask.ndim in (2, 4) and not attn_mask.requires_grad)


def _additive(mask, dtype):
    """A bool mask (True = attend) as the float mask added to the scores."""
    if mask.dtype is not D.bool_:
        return mask
    return pointwise.where(mask.logical_not(), -math.inf, 0.0).to(dtype)


def _sdpa_math(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                               "set when is_causal=True")
        from .._creation import ones
        attn_mask = ones(query.shape[-2], key.shape[-2], dtype=D.bool_,
                         device=query.device).tril()
    if enable_gqa and key.shape[-3] != query.shape[-3]:
        key = key.repeat_interleave(query.shape[-3] // key.shape[-3], -3)
        value = value.repeat_interleave(query.shape[-3] // value.shape[-3], -3)
    root = math.sqrt(scale)
    attn = linalg.matmul(call(pointwise.MUL_SCALAR, query, root),
                         call(pointwise.MUL_SCALAR, key.transpose(-2, -1), root))
    if attn_mask is not None:
        attn = attn + _additive(attn_mask, query.dtype)
    attn = call(SAFE_SOFTMAX, attn)
    if dropout_p > 0:
        attn = _dropout_mul(attn, dropout_p)
    return linalg.matmul(attn, value)


@_amp_hook.entry("scaled_dot_product_attention")
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """Mirrors ``torch.nn.functional.scaled_dot_product_attention``:
    ``softmax(query @ key.T * scale + mask) @ value``, with dropout on the attention weights.

    ``attn_mask``: bool (True = take part in attention) or float (added to the scores),
    broadcastable to (..., L, S); ``is_causal``: a lower-triangular (L, S) mask; ``scale``
    defaults to 1/sqrt(E); ``enable_gqa``: key/value heads (dim -3) shared by groups of query
    heads.  Dropout draws from torchlike's global generator.  See NOTE [ sdpa backends ].

    Example:
        >>> q = torchlike.ones(1, 2, 3, 4)
        >>> F.scaled_dot_product_attention(q, q, q, is_causal=True).shape
        torchlike.Size([1, 2, 3, 4])
    """
    _check_sdpa(query, key, value, attn_mask, dropout_p)
    if enable_gqa and key.shape[-3] != query.shape[-3]:
        if query.shape[-3] % key.shape[-3] or query.shape[-3] % value.shape[-3]:
            raise RuntimeError("Number of heads in key and value must divide the number of "
                               "heads in ")
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])
    flash = _sdp_switches.flash_sdp_enabled()
    if not (flash and _flash_ok(query, key, value, attn_mask, dropout_p, enable_gqa)):
        if not _sdp_switches.math_sdp_enabled():
            if flash:
                raise RuntimeError("No available kernel.  Aborting execution.")
            raise RuntimeError("No viable backend for scaled_dot_product_attention was found. "
                               "This is likely due to turning off both the math kernel and the "
                               "fused kernels.")
        return _sdpa_math(query, key, value, attn_mask, dropout_p, is_causal, float(scale),
                          enable_gqa)
    masks = () if attn_mask is None else (attn_mask,)
    static = (("is_causal", bool(is_causal)), ("scale", float(scale)),
              ("gqa", bool(enable_gqa))) + _precision.static()
    return call(SDPA_FLASH, query, key, value, *masks, static=static)


# --- multi_head_attention_forward ---------------------------------------------------------------

def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask (True = masked out) as a float mask of ``target_type`` (-inf where True)."""
    if mask is None:
        return None
    if mask.dtype is not D.bool_ and not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype is not other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use "
                      "same type for both instead.", stacklevel=3)
    if mask.dtype is D.bool_:
        mask = pointwise.where(mask, -math.inf, 0.0).to(target_type)
    return mask


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether the inputs are batched (3-D) or not (2-D); PyTorch's shape errors otherwise."""
    if query.ndim not in (2, 3):
        raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                             f"{query.ndim}-D query tensor")
    batched = query.ndim == 3
    kind = "batched (3-D)" if batched else "unbatched (2-D)"
    if key.ndim != query.ndim or value.ndim != query.ndim:
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be "
                             f"{query.ndim}-D but found {key.ndim}-D and {value.ndim}-D tensors "
                             "respectively")
    if key_padding_mask is not None and key_padding_mask.ndim != query.ndim - 1:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or "
                             f"{query.ndim - 1}-D but found {key_padding_mask.ndim}-D tensor "
                             "instead")
    if attn_mask is not None:
        if attn_mask.ndim not in (2, 3):
            raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or "
                                 f"3-D but found {attn_mask.ndim}-D tensor instead")
        if not batched and attn_mask.ndim == 3:
            expected = (num_heads, query.shape[0], key.shape[0])
            if tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                     f"{attn_mask.shape}")
    return batched


def _in_projection_packed(q, k, v, w, b=None):
    """q, k, v projected by the packed (3E, E) weight ``w`` (and bias ``b``), as PyTorch does:
    one ``linear`` for self-attention, two when key is value, else three."""
    E = q.shape[-1]
    if k is v:
        if q is k:
            proj = linear(q, w, b).unflatten(-1, (3, E)).unsqueeze(0).transpose(0, -2)
            proj = proj.squeeze(-2).contiguous()
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([E, E * 2])
        b_q, b_kv = (None, None) if b is None else b.split([E, E * 2])
        kv = linear(k, w_kv, b_kv).unflatten(-1, (2, E)).unsqueeze(0).transpose(0, -2)
        kv = kv.squeeze(-2).contiguous()
        return linear(q, w_q, b_q), kv[0], kv[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None,) * 3 if b is None else b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    """q, k, v projected by separate weights (PyTorch's shape checks)."""
    Eq, Ek, Ev = q.shape[-1], k.shape[-1], v.shape[-1]
    for name, w, shape_ in (("query", w_q, (Eq, Eq)), ("key", w_k, (Eq, Ek)),
                            ("value", w_v, (Eq, Ev))):
        if tuple(w.shape) != shape_:
            raise AssertionError(f"expecting {name} weights shape of {shape_}, but got {w.shape}")
    for name, b in (("query", b_q), ("key", b_k), ("value", b_v)):
        if b is not None and tuple(b.shape) != (Eq,):
            raise AssertionError(f"expecting {name} bias shape of {(Eq,)}, but got {b.shape}")
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def multi_head_attention_forward(
        query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
        bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
        training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
        use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
        v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
        is_causal=False):
    """Mirrors ``torch.nn.functional.multi_head_attention_forward``: project query (L, N, E),
    key and value (S, N, E) (or unbatched (L, E), (S, E)) into ``num_heads`` heads, attend, and
    project back.  Returns ``(attn_output, attn_weights)``; the weights (averaged over heads
    when ``average_attn_weights``) only when ``need_weights``, else None.  Masks: bool (True =
    masked out) or float (added); ``attn_mask`` 2-D (L, S) or 3-D (N * num_heads, L, S)."""
    batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       _none_or_dtype(attn_mask), "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None     # sdpa builds the causal mask itself
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                                 f"value's {value.shape[:2]}")
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight "
                                     "is None")
        b_q, b_k, b_v = (None,) * 3 if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight,
                                 v_proj_weight, b_q, b_k, b_v)
    else:
        if key.shape != value.shape:
            raise AssertionError(f"key shape {key.shape} does not match value shape "
                                 f"{value.shape}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        if query is key is value and not need_weights and bias_k is None and bias_v is None \
                and static_k is None and static_v is None and not add_zero_attn:
            return _packed_self_attention(query, num_heads, in_proj_weight, in_proj_bias,
                                          out_proj_weight, out_proj_bias, attn_mask,
                                          key_padding_mask, dropout_p if training else 0.0,
                                          is_causal, batched)
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)

    if attn_mask is not None:
        _check_attn_mask(attn_mask, bsz * num_heads, tgt_len, src_len)
        if attn_mask.ndim == 2:
            attn_mask = attn_mask.unsqueeze(0)

    from .spatial import pad
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        from .shape import cat
        k = cat([k, bias_k.repeat(1, bsz, 1)])
        v = cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k is set but bias_v is None" if bias_k is not None
                             else "bias_v is set but bias_k is None")

    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _heads(k, static_k, "static_k", bsz * num_heads, head_dim)
    v = _heads(v, static_v, "static_v", bsz * num_heads, head_dim)
    if add_zero_attn:
        from .._creation import zeros
        from .shape import cat
        k = cat([k, zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype, device=k.device)], dim=1)
        v = cat([v, zeros((bsz * num_heads, 1, head_dim), dtype=v.dtype, device=v.device)], dim=1)
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]

    if key_padding_mask is not None:
        _check_key_padding_mask(key_padding_mask, bsz, src_len)
        key_padding_mask = key_padding_mask.view(bsz, 1, 1, src_len).expand(
            -1, num_heads, -1, -1).reshape(bsz * num_heads, 1, src_len)
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0

    if need_weights:
        if is_causal and attn_mask is None:   # PyTorch's own error, word for word
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        q_scaled = q * math.sqrt(1.0 / float(q.shape[-1]))
        k_t = k.transpose(-2, -1)
        weights = (linalg.bmm(q_scaled, k_t) if attn_mask is None
                   else linalg.baddbmm(attn_mask, q_scaled, k_t))
        from .special import softmax
        weights = softmax(weights, -1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        out = linalg.bmm(weights, v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias)
        out = out.view(tgt_len, bsz, out.shape[1])
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            from .reduce import mean
            weights = mean(weights, 1)
        if not batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights

    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.ndim == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias)
    out = out.view(tgt_len, bsz, out.shape[1])
    return (out if batched else out.squeeze(1)), None


def _packed_self_attention(x, num_heads, in_proj_weight, in_proj_bias, out_proj_weight,
                           out_proj_bias, attn_mask, key_padding_mask, dropout_p, is_causal,
                           batched):
    """multi_head_attention_forward's common case (self-attention, one packed projection, no
    weights returned) with the same numbers and fewer copies: the projection goes straight to
    the (batch, heads, tokens, head_dim) layout sdpa takes, where PyTorch's steps pass through a
    contiguous (3, tokens, batch, dim) copy and (batch * heads, tokens, head_dim) views; and a
    batch_first input is projected in its own (batch, tokens) order."""
    L, N, E = x.shape
    D = E // num_heads
    batch_first = _swaps_leading_dims(x)
    if batch_first:   # nn.MultiheadAttention's batch_first input: project (N, L, E)
        proj = _projection(x.transpose(0, 1), in_proj_weight, in_proj_bias,
                           (N, L, 3, num_heads, D))
        q, k, v = proj.permute(2, 0, 3, 1, 4).unbind(0)
    else:
        proj = _projection(x, in_proj_weight, in_proj_bias, (L, N, 3, num_heads, D))
        q, k, v = proj.permute(2, 1, 3, 0, 4).unbind(0)
    mask = None
    if attn_mask is not None:
        _check_attn_mask(attn_mask, N * num_heads, L, L)
        mask = attn_mask.view(1, 1, L, L) if attn_mask.ndim == 2 else \
            attn_mask.view(N, num_heads, L, L)
    if key_padding_mask is not None:
        _check_key_padding_mask(key_padding_mask, N, L)
        padding = key_padding_mask.view(N, 1, 1, L)
        mask = padding if mask is None else mask + padding
    out = scaled_dot_product_attention(q, k, v, mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(L * N, E)
    out = _projection(out, out_proj_weight, out_proj_bias, (L, N, E))
    return (out if batched else out.squeeze(1)), None


def _check_attn_mask(mask, batch_heads, tgt_len, src_len):
    """multi_head_attention_forward's errors for an attn_mask that is not (tgt, src) or
    (batch * heads, tgt, src)."""
    if mask.ndim == 2:
        if tuple(mask.shape) != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {mask.shape}, but should be "
                               f"{(tgt_len, src_len)}.")
    elif mask.ndim == 3:
        if tuple(mask.shape) != (batch_heads, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {mask.shape}, but should be "
                               f"{(batch_heads, tgt_len, src_len)}.")
    else:
        raise RuntimeError(f"attn_mask's dimension {mask.ndim} is not supported")


def _check_key_padding_mask(mask, bsz, src_len):
    for i, size in enumerate((bsz, src_len)):
        if mask.shape[i] != size:
            raise AssertionError(f"Expected key_padded_mask.shape[{i}] to be {size}, but got "
                                 f"{mask.shape[i]}")


def _swaps_leading_dims(x):
    """Whether ``x`` is a view whose last step swapped dims 0 and 1 (as nn.MultiheadAttention
    does to a batch_first input): its rows are then the transpose of a layout XLA can project
    without first copying the input into (L, N) order."""
    if x._root is None or not x._chain:
        return False
    op, static = x._chain[-1]
    return op.name == "transpose" and sorted(dict(static).values()) == [0, 1]


def _heads(x, static, name, count, head_dim):
    """(S, N, E) -> (N * heads, S, head_dim), or the given static keys / values."""
    if static is None:
        return x.view(x.shape[0], count, head_dim).transpose(0, 1)
    if static.shape[0] != count:
        raise AssertionError(f"expecting {name}.size(0) of {count}, but got {static.shape[0]}")
    if static.shape[2] != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got "
                             f"{static.shape[2]}")
    return static


# --- the encoder layer's inference fast path ---------------------------------------------------

# NOTE [ encoder layer fast path ]
# PyTorch runs an nn.TransformerEncoderLayer in eval mode with nothing to record as one native op,
# ``torch._transformer_encoder_layer_fwd`` (the layer's conditions are PyTorch's, in
# nn/modules/transformer.py; ``torch.backends.mha.set_fastpath_enabled(False)`` turns it off).
# torchlike runs it as one op too: one program for the whole layer where the plain path runs
# some twenty, each of which compiles for every new shape.  That matters most where shapes keep
# changing, as in a language model's generation loop, whose context grows by a token a step:
# examples/pytorch/transformer_lm.py's 40-character sample compiled about 24 programs for each
# of its 29 context lengths.  The numbers are those of the plain path's functions (layer_norm,
# linear, the sdpa kernel, gelu) composed in one program.

def _encoder_layer(src, in_w, in_b, out_w, out_b, n1_w, n1_b, n2_w, n2_b, w1, b1, w2, b2,
                   *mask, num_heads, use_gelu, norm_first, eps, precision, causal=False):
    n, length, e = src.shape
    d = e // num_heads

    def norm(x, w, b):
        return _layer_norm(x, w, b, eps, 1, (w is not None, b is not None))

    def project(x, w, b):
        return _linear(x, w, *(() if b is None else (b,)), precision=precision)

    def attention(x):
        qkv = project(x, in_w, in_b).reshape(n, length, 3, num_heads, d)
        q, k, v = qkv.transpose(2, 0, 3, 1, 4)
        out = _sdpa(q, k, v, *mask, is_causal=causal, scale=1.0 / math.sqrt(d), gqa=False,
                    precision=precision)
        return project(out.transpose(0, 2, 1, 3).reshape(n, length, e), out_w, out_b)

    def feed_forward(x):
        h = project(x, w1, b1)
        return project(_gelu(h, "none") if use_gelu else jax.nn.relu(h), w2, b2)

    if norm_first:
        x = src + attention(norm(src, n1_w, n1_b))
        return x + feed_forward(norm(x, n2_w, n2_b))
    x = norm(src + attention(src), n1_w, n1_b)
    return norm(x + feed_forward(x), n2_w, n2_b)


# NOTE [ causal encoder layers in buckets ]
# A causal layer (nn.TransformerEncoderLayer's ``is_causal`` hint with a 2-D mask, which PyTorch
# documents as a promise that the mask is the causal one, and which its own attention then applies
# as such) runs the fast path without the mask operand, the mask made inside the program, and at a
# length rounded up to a bucket (``_host.bucket``: a multiple of 8, and past 128 of a sixteenth of
# the next power of two): the rows past the length are zeros, which the causal mask keeps every
# real row from reading, and the rows it returns past the length are dropped.  A generation loop
# whose context grows a token a step then compiles the layer once per bucket, and for each length
# only the padding and the cut (tiny programs, which move on the host once pads and slices keep
# meeting new shapes: NOTE [ new shapes moved on the host ] in _host.py) where it compiled the
# whole layer (examples/pytorch/transformer_lm.py: 29 lengths, the layer's program 110-160 ms of
# compiling each, 2-core CPU).  Each real row's values are the same arithmetic; its softmax and
# attention sums run over more (masked, zero) terms, so they may differ in the last bit.
def _bucketed_layer(arrays, static):
    """A causal layer's output from its program at the bucket's length (padded and cut as
    constant_pad_nd and slice are), or None where the length is a bucket's (NOTE [ causal
    encoder layers in buckets ])."""
    length = arrays[0].shape[1]
    size = bucket(length)
    if not dict(static).get("causal") or size == length:
        return None
    padded = eager_forward(CONSTANT_PAD, (("pads", ((0, 0), (0, size - length), (0, 0))),
                                          ("value", 0)), None, arrays[:1])
    out = in_bucket(ENCODER_LAYER, static, None, [padded, *arrays[1:]])   # (compiled quickest)
    return eager_forward(SLICE, slice_static(1, 0, length, 1), None, [out])


ENCODER_LAYER = Op("_transformer_encoder_layer_fwd", _encoder_layer, "NotImplemented",
                   inputs=13, pieces=_bucketed_layer, no_grad_reason=(
                       "derivative for aten::_transformer_encoder_layer_fwd is not implemented"))


def _transformer_encoder_layer_fwd(src, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight,
                                   proj_bias, use_gelu, norm_first, eps, norm_weight_1,
                                   norm_bias_1, norm_weight_2, norm_bias_2, ffn_weight_1,
                                   ffn_bias_1, ffn_weight_2, ffn_bias_2, mask=None,
                                   mask_type=None):
    """Mirrors ``torch._transformer_encoder_layer_fwd``: a batch-first encoder layer (ReLU, or
    GELU where ``use_gelu``) in one op (NOTE [ encoder layer fast path ]).  ``mask``: an
    attention mask ((L, L), ``mask_type`` 0), a key padding mask ((N, L), type 1) or one
    broadcast over (N, heads, L, L) (type 2, as MultiheadAttention.merge_masks gives), bool
    (True: masked out) or float (added to the scores)."""
    masks = ()
    if mask is not None:
        if mask_type == 1:
            mask = mask.view(mask.shape[0], 1, 1, mask.shape[-1])
        masks = (_canonical_mask(mask, "mask", None, "", src.dtype),)
    return run_encoder_layer(src, num_heads, use_gelu, norm_first, eps, (
        qkv_weight, qkv_bias, proj_weight, proj_bias, norm_weight_1, norm_bias_1, norm_weight_2,
        norm_bias_2, ffn_weight_1, ffn_bias_1, ffn_weight_2, ffn_bias_2), masks)


def run_encoder_layer(src, num_heads, use_gelu, norm_first, eps, weights, masks=(),
                      causal=False):
    """The fast path's op on ``weights`` (in ``_transformer_encoder_layer_fwd``'s order) and
    ``masks`` (none, or one broadcast over (N, heads, L, L)); ``causal``: the causal mask made
    inside instead (NOTE [ causal encoder layers in buckets ])."""
    static = (("num_heads", int(num_heads)), ("use_gelu", bool(use_gelu)),
              ("norm_first", bool(norm_first)), ("eps", float(eps))) + _precision.static()
    if causal:
        static += (("causal", True),)
    return call(ENCODER_LAYER, src, *weights, *masks, static=static)


PUBLIC = ("bilinear", "_transformer_encoder_layer_fwd")
TENSOR_METHODS = {}
