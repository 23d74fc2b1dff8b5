"""The autocast policy: one table per device type, and the casts it asks for.

NOTE [ autocast policy ]
PyTorch's autocast is a dispatch key: each listed op has a kernel that casts its floating
operands by the op's cast policy, then runs the op with autocast excluded below it.  torchlike
keeps the lists as one table here, ``POLICIES[device_type][name] -> policy``, read in two places
(NOTE [ autocast hook ] in ``_amp_hook.py``): ``_dispatch.call`` for an op of the table whose
``Op.name`` has a row, and ``_amp_hook.entry`` for a composite public function PyTorch lists
(its name is the row's name), whose inner ops then run uncast, as in PyTorch.  In-place
variants (``x.addmm_(...)``, ``_inplace.inplace``) and ``out=`` calls run uncast: PyTorch
lists only the out-of-place overloads.  The policies:

- ``LOWER``: eligible operands become the region's dtype (bfloat16 or float16): matmuls,
  convolutions, linear, prelu, attention;
- ``FP32``: eligible operands become float32: losses, reductions and linear algebra that lose
  too much in 16 bits (PyTorch's ``fp32``, ``fp32_set_opt_dtype`` and ``fp32_append_dtype``:
  the last two ask the op for a float32 result, which for a float operand is the same as
  casting it first);
- ``PROMOTE``: eligible operands become the widest of their dtypes and the region's (cat, stack).

An operand is eligible when it is a floating Tensor other than float64 on the region's device
type (PyTorch's ``is_eligible``).  A cast is the ``to`` op, recorded as ``ToCopyBackward0``,
so backward returns each gradient in its operand's own dtype: a float32 weight gets a float32
``.grad``.  The weight cast cache (``cache_enabled``): a lower-precision cast of a float32 leaf
that requires grad and is no view is made once per outermost region and reused (PyTorch's
heuristic for model weights used by several ops), never for traced values.

The lists are PyTorch 2.13's (aten/src/ATen/autocast_mode.cpp for CPU, autocast_mode.h for
CUDA); ``xla`` uses CUDA's lists, where torch_xla starts its own.  Ops PyTorch lists that
torchlike lacks have no row (``_convolution``, which only ``torch._convolution`` reaches).
A row torchlike has only as part of a composite is reached through ``entry``'s row names (the
reflection / replication pads behind ``F.pad``, ``bmm`` inside ``einsum``), the op's own name
(``mkldnn_rnn_layer``: the oneDNN LSTM stack) or ``inner_dtype`` (``linear`` inside the native
recurrences, which PyTorch's CPU kernels run once per step).
"""
import threading
import weakref

import jax

from .. import _amp_hook, _dtype as D
from .._tensor import Tensor
from .._ops.convert import TO_DTYPE
from .._dispatch import call

LOWER, FP32, PROMOTE = "lower_precision_fp", "fp32", "promote"


def _rows(policy, names):
    return {name: policy for name in names.split()}


_CONV = "conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d"
CPU = {
    **_rows(LOWER, _CONV + " conv_tbc bmm mm vecdot baddbmm addmm addbmm linear matmul prelu "
            "scaled_dot_product_attention mkldnn_rnn_layer"),
    **_rows(FP32, "reflection_pad1d reflection_pad2d replication_pad1d replication_pad2d "
            "replication_pad3d avg_pool3d binary_cross_entropy grid_sample polar prod quantile "
            "nanquantile "
            "stft cdist trace view_as_complex cholesky cholesky_inverse cholesky_solve inverse "
            "orgqr ormqr pinverse max_pool3d max_unpool2d max_unpool3d "
            "adaptive_avg_pool3d mse_loss cosine_embedding_loss nll_loss nll_loss2d "
            "hinge_embedding_loss poisson_nll_loss smooth_l1_loss cross_entropy l1_loss "
            "huber_loss margin_ranking_loss soft_margin_loss triplet_margin_loss "
            "multi_margin_loss ctc_loss kl_div multilabel_margin_loss "
            "binary_cross_entropy_with_logits fft_fft fft_ifft fft_fft2 fft_ifft2 fft_fftn "
            "fft_ifftn fft_rfft fft_irfft fft_rfft2 fft_irfft2 fft_rfftn fft_irfftn fft_hfft "
            "fft_ihfft linalg_cond linalg_matrix_rank linalg_solve linalg_cholesky "
            "linalg_svdvals linalg_eigvals linalg_eigvalsh linalg_inv "
            "linalg_householder_product linalg_tensorinv linalg_tensorsolve geqrf qr svd "
            "fractional_max_pool2d fractional_max_pool3d adaptive_max_pool3d "
            "linalg_qr linalg_cholesky_ex linalg_svd linalg_eig linalg_eigh linalg_lstsq "
            "linalg_inv_ex"),
    **_rows(PROMOTE, "stack cat index_copy"),
}
CUDA = {
    **_rows(LOWER, _CONV + " convolution conv_tbc prelu addmm addmv addr matmul einsum mm mv "
            "vecdot linear addbmm baddbmm bmm chain_matmul multi_dot lstm_cell gru_cell "
            "rnn_tanh_cell rnn_relu_cell scaled_dot_product_attention"),
    **_rows(FP32, "acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt sinh "
            "tan pow softplus layer_norm group_norm norm cosine_similarity poisson_nll_loss "
            "cosine_embedding_loss nll_loss nll_loss2d hinge_embedding_loss kl_div l1_loss "
            "smooth_l1_loss huber_loss mse_loss margin_ranking_loss multilabel_margin_loss "
            "soft_margin_loss triplet_margin_loss multi_margin_loss "
            "binary_cross_entropy_with_logits dist pdist cdist renorm logsumexp interpolate "
            # fp32_set_opt_dtype and fp32_append_dtype
            "prod softmax log_softmax cumprod cumsum linalg_vector_norm linalg_matrix_norm sum"),
    **_rows(PROMOTE, "addcdiv addcmul atan2 bilinear cross dot vdot grid_sample index_put "
            "tensordot scatter_add"),
}
POLICIES = {"cpu": CPU, "cuda": CUDA, "xla": CUDA}
LOWER_DTYPES = {"cpu": D.bfloat16, "cuda": D.float16, "xla": D.bfloat16}


# --- per-thread state (PyTorch's thread-local autocast state) -----------------------------------

class _State(threading.local):
    def __init__(self):
        self.enabled = {}                  # device type -> bool
        self.dtype = dict(LOWER_DTYPES)    # device type -> the region's dtype
        self.cache_enabled = True
        self.nesting = 0
        self.excluded = 0                  # inside a listed composite: no casts below it
        self.cache = {}                    # id(weight) -> (weakref to it, its cast)


STATE = _State()
_lock = threading.Lock()
_active = [0]   # (thread, device type) pairs enabled, over all threads


def set_enabled(device_type, enabled):
    """Turn autocast for ``device_type`` on or off in this thread (the hook follows)."""
    enabled = bool(enabled)
    was = STATE.enabled.get(device_type, False)
    if was == enabled:
        return
    STATE.enabled[device_type] = enabled
    with _lock:
        _active[0] += 1 if enabled else -1
        _amp_hook.policy = POLICY if _active[0] else None


# --- the casts ----------------------------------------------------------------------------------

def _eligible(t, device_type):
    return (isinstance(t, Tensor) and t.dtype.is_floating_point and t.dtype is not D.float64
            and t.device.type == device_type)


def _cast(t, dtype, device_type):
    if t.dtype is dtype:
        return t
    st = STATE
    cacheable = (st.cache_enabled and dtype is st.dtype[device_type]
                 and t.dtype is D.float32 and t.requires_grad and t.is_leaf
                 and t._root is None and not _traced(t))
    if cacheable:
        hit = st.cache.get(id(t))
        if hit is not None and hit[0]() is t:
            return hit[1]
    out = call(TO_DTYPE, t, static=(("dtype", dtype._np),))
    if cacheable:
        st.cache[id(t)] = (weakref.ref(t), out)
    return out


def _traced(t):
    return isinstance(t._arr, jax.core.Tracer)


def _widest(args, device_type, start):
    """PyTorch's ``prioritize``: float32 if any eligible operand is, else the region's dtype;
    another 16-bit dtype beside it is an error."""
    for a in args:
        if isinstance(a, (list, tuple)):
            start = _widest(a, device_type, start)
        elif _eligible(a, device_type):
            if start is D.float32 or a.dtype is D.float32:
                start = D.float32
            elif a.dtype is not start:
                raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
    return start


def _map(args, dtype, device_type):
    out = []
    for a in args:
        if isinstance(a, (list, tuple)):
            a = type(a)(_map(a, dtype, device_type))
        elif _eligible(a, device_type):
            a = _cast(a, dtype, device_type)
        out.append(a)
    return out


def _target(policy, device_type, args):
    if policy is LOWER:
        return STATE.dtype[device_type]
    if policy is FP32:
        return D.float32
    return _widest(args, device_type, STATE.dtype[device_type])


class _Policy:
    """What the hooks call while some autocast region is active (NOTE [ autocast hook ])."""

    def cast(self, op, args):
        """``op``'s operands cast by its row in each enabled device type's table."""
        st = STATE
        if st.excluded:
            return args
        for device_type, on in st.enabled.items():
            if on:
                policy = POLICIES[device_type].get(op.name)
                if policy is not None:
                    args = _map(args, _target(policy, device_type, args), device_type)
        return args

    def enter(self, names, args, kwargs):
        """Entering a composite whose rows are ``names`` (the first found applies, per device
        type): ``(args, kwargs, excluded)``, its operands cast by that row, and whether nothing
        below it is cast now (then ``leave`` after it).  With ``out=``
        nothing is cast: PyTorch's lists name only the out-of-place overloads."""
        st = STATE
        if st.excluded:
            return args, kwargs, False
        if kwargs.get("out") is not None:
            st.excluded += 1
            return args, kwargs, True
        ran = False
        for device_type, on in st.enabled.items():
            table = POLICIES[device_type]
            policy = next((table[n] for n in names if n in table), None) if on else None
            if policy is not None:
                keys = list(kwargs)
                flat = _map(list(args) + [kwargs[k] for k in keys],
                            _target(policy, device_type, list(args) + list(kwargs.values())),
                            device_type)
                args, kwargs = flat[:len(args)], dict(zip(keys, flat[len(args):]))
                ran = True
        if ran:
            st.excluded += 1
        return args, kwargs, ran

    def any_enabled(self):
        """Whether autocast is on for some device type in this thread."""
        return any(STATE.enabled.values())

    def inner_dtype(self, name, tensors):
        """The region's dtype if row ``name`` is a lower-precision row of an enabled device type
        for which some tensor of ``tensors`` is eligible (NOTE [ autocast hook ]), else None."""
        st = STATE
        if st.excluded:
            return None
        for device_type, on in st.enabled.items():
            if on and POLICIES[device_type].get(name) is LOWER and any(
                    _eligible(t, device_type) for t in tensors):
                return st.dtype[device_type]
        return None

    def leave(self):
        """Leaving a composite that ``enter`` cast."""
        STATE.excluded -= 1


    def run_uncast(self, fn, *args, **kwargs):
        """``fn(*args, **kwargs)`` with no casts below it (an in-place op, an ``out=``)."""
        st = STATE
        st.excluded += 1
        try:
            return fn(*args, **kwargs)
        finally:
            st.excluded -= 1


POLICY = _Policy()


def region_key():
    """The autocast state a traced call bakes in (a compiled step's guard): None outside every
    region."""
    if _amp_hook.policy is None:
        return None
    st = STATE
    return (tuple((d, st.dtype[d]) for d, on in st.enabled.items() if on), st.excluded)


def clear_cache():
    """Drop the weight casts of this thread (PyTorch's ``clear_autocast_cache``)."""
    STATE.cache.clear()
