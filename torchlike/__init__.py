"""torchlike: PyTorch's eager API running on JAX/XLA.

    import torchlike as torch

Tensors are mutable, ``.backward()`` walks a graph torchlike records itself, each op's local
derivative comes from ``jax.vjp``, and XLA computes the numbers on CPU, GPU or TPU.
"""
import jax as _jax

from . import _x64  # noqa: E402

# int64 / float64 need jax's 64-bit types, which torchlike turns on only while its own code runs
# (NOTE [ 64-bit types in torchlike's scope ] in _x64.py): JAX code of the user's keeps jax's
# defaults.  The import itself runs in that scope (module-level arrays and programs).
_x64_prev = _x64.swap(True)

from . import _settings  # noqa: E402

_settings.choose_cpu_dispatch()   # NOTE [ asynchronous CPU dispatch ] in _settings.py

from . import _dtype, _methods  # noqa: E402

_methods.install()   # Tensor methods, operators and properties (each op family's TENSOR_METHODS)

from . import (  # noqa: E402
    autograd as autograd, distributions as distributions, fft as fft, func as func,
    linalg as linalg, nn as nn, optim as optim, special as special, testing as testing,
    torch_version as torch_version, version as version)
from ._creation import (  # noqa: E402
    arange as arange, as_tensor as as_tensor, asarray as asarray, empty as empty,
    empty_like as empty_like, eye as eye, from_dlpack as from_dlpack, from_numpy as from_numpy,
    full as full, full_like as full_like, get_default_device as get_default_device,
    linspace as linspace, logspace as logspace, ones as ones, ones_like as ones_like,
    scalar_tensor as scalar_tensor, set_default_device as set_default_device, tensor as tensor,
    tril_indices as tril_indices, triu_indices as triu_indices, zeros as zeros,
    zeros_like as zeros_like)
from ._device import (  # noqa: E402
    AcceleratorError as AcceleratorError, OutOfMemoryError as OutOfMemoryError, device as device)
from ._storage import UntypedStorage as UntypedStorage  # noqa: E402
from ._dtype import (  # noqa: E402
    dtype as dtype, get_default_dtype as get_default_dtype, promote_types as promote_types,
    set_default_dtype as set_default_dtype)
from ._info import (  # noqa: E402
    finfo as finfo, iinfo as iinfo)
from ._layout import layout as layout, strided as strided  # noqa: E402
from ._layout import legacy_contiguous_format as legacy_contiguous_format  # noqa: E402
from ._layout import (  # noqa: E402
    channels_last as channels_last, channels_last_3d as channels_last_3d,
    contiguous_format as contiguous_format, memory_format as memory_format,
    preserve_format as preserve_format)
from ._ops.activation import (  # noqa: E402
    celu as celu, celu_ as celu_, hardshrink as hardshrink, prelu as prelu, relu_ as relu_,
    rrelu_ as rrelu_, selu as selu, selu_ as selu_, threshold as threshold,
    threshold_ as threshold_, torch_log_softmax as log_softmax, torch_rrelu as rrelu,
    torch_softmax as softmax)
from ._ops.attention import (  # noqa: E402
    _transformer_encoder_layer_fwd as _transformer_encoder_layer_fwd, bilinear as bilinear)
from ._ops.conv import (  # noqa: E402
    conv1d as conv1d, conv2d as conv2d, conv3d as conv3d, conv_transpose1d as conv_transpose1d,
    conv_transpose2d as conv_transpose2d, conv_transpose3d as conv_transpose3d)
from ._ops.distance import (  # noqa: E402
    cosine_similarity as cosine_similarity, pairwise_distance as pairwise_distance,
    pdist as pdist)
from ._ops.distance import dist as dist  # noqa: E402
from ._ops.dropout import (  # noqa: E402
    torch_alpha_dropout as alpha_dropout, torch_alpha_dropout_ as alpha_dropout_,
    torch_dropout as dropout, torch_dropout_ as dropout_,
    torch_feature_alpha_dropout as feature_alpha_dropout,
    torch_feature_alpha_dropout_ as feature_alpha_dropout_,
    torch_feature_dropout as feature_dropout, torch_feature_dropout_ as feature_dropout_)
from ._ops.embedding import (  # noqa: E402
    embedding_renorm_ as embedding_renorm_, torch_embedding as embedding)
from ._ops.normalization import (  # noqa: E402
    rms_norm as rms_norm, torch_batch_norm as batch_norm, torch_group_norm as group_norm,
    torch_instance_norm as instance_norm, torch_layer_norm as layer_norm)
from ._ops.normalization import renorm as renorm  # noqa: E402
from ._ops.pool import (  # noqa: E402
    adaptive_avg_pool1d as adaptive_avg_pool1d,
    adaptive_max_pool1d_with_indices as adaptive_max_pool1d, avg_pool1d as avg_pool1d,
    max_pool1d as max_pool1d, max_pool1d_with_indices as max_pool1d_with_indices,
    max_pool2d as max_pool2d, max_pool3d as max_pool3d)
from ._ops.rnn import (  # noqa: E402
    gru as gru, gru_cell as gru_cell, lstm as lstm, lstm_cell as lstm_cell,
    rnn_relu as rnn_relu, rnn_relu_cell as rnn_relu_cell, rnn_tanh as rnn_tanh,
    rnn_tanh_cell as rnn_tanh_cell)
from ._ops.spatial import (  # noqa: E402
    channel_shuffle as channel_shuffle, constant_pad_nd as constant_pad_nd,
    pixel_shuffle as pixel_shuffle, pixel_unshuffle as pixel_unshuffle)
from ._ops.native import conv_tbc as conv_tbc  # noqa: E402
from ._ops.spatial import native_channel_shuffle as native_channel_shuffle  # noqa: E402
from ._ops.binary import (  # noqa: E402
    addcdiv as addcdiv, addcmul as addcmul, arctan2 as arctan2, atan2 as atan2,
    copysign as copysign, fmax as fmax, fmin as fmin, heaviside as heaviside, hypot as hypot,
    lerp as lerp, logaddexp as logaddexp, xlogy as xlogy)
from ._ops.binary import (  # noqa: E402
    float_power as float_power, gcd as gcd, lcm as lcm, ldexp as ldexp, logaddexp2 as logaddexp2,
    nextafter as nextafter)
from ._ops.complex import (  # noqa: E402
    angle as angle, complex as complex, conj as conj, conj_physical as conj_physical,
    conj_physical_ as conj_physical_, imag as imag, is_conj as is_conj, is_neg as is_neg,
    isreal as isreal, polar as polar, real as real, resolve_conj as resolve_conj,
    resolve_neg as resolve_neg, view_as_complex as view_as_complex, view_as_real as view_as_real)
from ._ops.decomp import (  # noqa: E402
    cholesky as cholesky, det as det, inverse as inverse, logdet as logdet,
    matrix_exp as matrix_exp, matrix_power as matrix_power, pinverse as pinverse, qr as qr,
    svd as svd)
from ._ops.einsum import einsum as einsum  # noqa: E402
from ._ops.index import nonzero as nonzero  # noqa: E402
from ._ops.join import (  # noqa: E402
    atleast_1d as atleast_1d, atleast_2d as atleast_2d, atleast_3d as atleast_3d,
    broadcast_shapes as broadcast_shapes, broadcast_tensors as broadcast_tensors, chunk as chunk,
    column_stack as column_stack, concat as concat, concatenate as concatenate, dsplit as dsplit,
    dstack as dstack, flip as flip, fliplr as fliplr, flipud as flipud, hsplit as hsplit,
    hstack as hstack, meshgrid as meshgrid, repeat_interleave as repeat_interleave, roll as roll,
    rot90 as rot90, row_stack as row_stack, split as split, tensor_split as tensor_split,
    tile as tile, vsplit as vsplit, vstack as vstack)
from ._ops.join import (  # noqa: E402
    block_diag as block_diag, cartesian_prod as cartesian_prod, combinations as combinations,
    unsafe_chunk as unsafe_chunk, unsafe_split as unsafe_split, vander as vander)
from ._ops.lapack import (  # noqa: E402
    cholesky_inverse as cholesky_inverse, cholesky_solve as cholesky_solve, geqrf as geqrf,
    lu_unpack as lu_unpack, orgqr as orgqr, ormqr as ormqr)
from ._ops.linalg import (  # noqa: E402
    addbmm as addbmm, addmm as addmm, addmv as addmv, addr as addr, baddbmm as baddbmm, bmm as bmm,
    cdist as cdist, chain_matmul as chain_matmul, cross as cross, dot as dot, ger as ger,
    inner as inner, kron as kron, matmul as matmul, mm as mm, mv as mv, outer as outer,
    slogdet as slogdet, tensordot as tensordot, vdot as vdot)
from ._precision import (  # noqa: E402
    get_float32_matmul_precision as get_float32_matmul_precision,
    set_float32_matmul_precision as set_float32_matmul_precision)
from ._ops.pointwise import (  # noqa: E402
    abs as abs, absolute as absolute, add as add, allclose as allclose, bitwise_and as bitwise_and,
    bitwise_left_shift as bitwise_left_shift, bitwise_not as bitwise_not, bitwise_or as bitwise_or,
    bitwise_right_shift as bitwise_right_shift, bitwise_xor as bitwise_xor, clamp as clamp,
    clamp_max as clamp_max, clamp_min as clamp_min, clip as clip, cos as cos, div as div, eq as eq,
    equal as equal, exp as exp, floor_divide as floor_divide, fmod as fmod, ge as ge, gt as gt,
    isclose as isclose, isfinite as isfinite, isinf as isinf, isnan as isnan, isneginf as isneginf,
    isposinf as isposinf, le as le, log as log, logical_and as logical_and,
    logical_not as logical_not, logical_or as logical_or, logical_xor as logical_xor, lt as lt,
    maximum as maximum, minimum as minimum, mul as mul, ne as ne, neg as neg, negative as negative,
    pow as pow, reciprocal as reciprocal, relu as relu, remainder as remainder, rsub as rsub,
    sigmoid as sigmoid, signbit as signbit, sin as sin, sqrt as sqrt, sub as sub, tanh as tanh,
    true_divide as true_divide, where as where)
from ._ops.pointwise import (  # noqa: E402
    can_cast as can_cast, divide as divide, greater as greater, greater_equal as greater_equal,
    is_nonzero as is_nonzero, less as less, less_equal as less_equal, multiply as multiply,
    not_equal as not_equal, result_type as result_type, subtract as subtract)
from ._ops.sampling import (  # noqa: E402
    _dirichlet_grad as _dirichlet_grad, _sample_dirichlet as _sample_dirichlet,
    _standard_gamma as _standard_gamma, _standard_gamma_grad as _standard_gamma_grad,
    bernoulli as bernoulli, binomial as binomial, multinomial as multinomial, normal as normal,
    poisson as poisson)
from ._ops.reduce import (  # noqa: E402
    all as all, amax as amax, amin as amin, aminmax as aminmax, any as any, argmax as argmax,
    argmin as argmin, count_nonzero as count_nonzero, cummax as cummax, cummin as cummin,
    cumprod as cumprod, cumsum as cumsum, diff as diff, logcumsumexp as logcumsumexp,
    logsumexp as logsumexp, max as max, mean as mean, median as median, min as min, mode as mode,
    nanmean as nanmean, nanmedian as nanmedian, nanquantile as nanquantile, nansum as nansum,
    norm as norm, prod as prod, quantile as quantile, std as std, std_mean as std_mean, sum as sum,
    var as var, var_mean as var_mean)
from ._ops.scatter import (  # noqa: E402
    argwhere as argwhere, gather as gather, index_add as index_add, index_copy as index_copy,
    index_fill as index_fill, index_put as index_put, index_select as index_select,
    masked_fill as masked_fill, masked_scatter as masked_scatter, masked_select as masked_select,
    put as put, scatter as scatter, scatter_add as scatter_add, scatter_reduce as scatter_reduce,
    take as take, take_along_dim as take_along_dim)
from ._ops.scatter import (  # noqa: E402
    diagonal_scatter as diagonal_scatter, nonzero_static as nonzero_static,
    select_scatter as select_scatter, slice_scatter as slice_scatter,
    unravel_index as unravel_index)
from ._ops.shape import (  # noqa: E402
    broadcast_to as broadcast_to, cat as cat, clone as clone, diag as diag,
    diag_embed as diag_embed, diagflat as diagflat, diagonal as diagonal, flatten as flatten,
    moveaxis as moveaxis, movedim as movedim, narrow as narrow, permute as permute,
    reshape as reshape, select as select, squeeze as squeeze, stack as stack, swapaxes as swapaxes,
    swapdims as swapdims, t as t, trace as trace, transpose as transpose, tril as tril,
    triu as triu, unbind as unbind, unflatten as unflatten, unsqueeze as unsqueeze)
from ._ops.shape import adjoint as adjoint, ravel as ravel  # noqa: E402
from ._ops.signal import (  # noqa: E402
    bartlett_window as bartlett_window, blackman_window as blackman_window,
    hamming_window as hamming_window, hann_window as hann_window, istft as istft,
    kaiser_window as kaiser_window, stft as stft)
from ._ops.stats import (  # noqa: E402
    corrcoef as corrcoef, cov as cov, cumulative_trapezoid as cumulative_trapezoid,
    gradient as gradient, histogram as histogram, histogramdd as histogramdd,
    trapezoid as trapezoid, trapz as trapz)
from ._ops.sorting import (  # noqa: E402
    argsort as argsort, bincount as bincount, bucketize as bucketize, histc as histc,
    kthvalue as kthvalue, msort as msort, searchsorted as searchsorted, sort as sort, topk as topk,
    unique as unique, unique_consecutive as unique_consecutive)
from ._ops.sorting import isin as isin  # noqa: E402
from ._ops.host import (  # noqa: E402
    from_file as from_file, frombuffer as frombuffer, is_storage as is_storage,
    to_dlpack as to_dlpack)
from ._ops.pointwise import (  # noqa: E402
    is_warn_always_enabled as is_warn_always_enabled, set_warn_always as set_warn_always)
from ._ops.stats import hash_tensor as hash_tensor  # noqa: E402
from ._ops.index_reduce import index_reduce as index_reduce  # noqa: E402
from ._ops.control_flow import cond as cond, while_loop as while_loop  # noqa: E402
from ._ops.strided import (  # noqa: E402
    as_strided as as_strided, as_strided_scatter as as_strided_scatter,
    empty_permuted as empty_permuted, empty_strided as empty_strided)
from ._ops.unary import (  # noqa: E402
    acos as acos, acosh as acosh, arccos as arccos, arccosh as arccosh, arcsin as arcsin,
    arcsinh as arcsinh, arctan as arctan, arctanh as arctanh, asin as asin, asinh as asinh,
    atan as atan, atanh as atanh, ceil as ceil, cosh as cosh, digamma as digamma, erf as erf,
    erfc as erfc, erfinv as erfinv, exp2 as exp2, expm1 as expm1, fix as fix, floor as floor,
    frac as frac, i0 as i0, lgamma as lgamma, log10 as log10, log1p as log1p, log2 as log2,
    logit as logit, nan_to_num as nan_to_num, round as round, rsqrt as rsqrt, sgn as sgn,
    sign as sign, sinc as sinc, sinh as sinh, square as square, tan as tan, trunc as trunc)
from ._ops.unary import (  # noqa: E402
    deg2rad as deg2rad, frexp as frexp, igamma as igamma, igammac as igammac,
    mvlgamma as mvlgamma, polygamma as polygamma, positive as positive, rad2deg as rad2deg)
from ._random import (  # noqa: E402
    default_generator as default_generator, Generator as Generator, get_rng_state as get_rng_state,
    initial_seed as initial_seed, manual_seed as manual_seed, rand as rand, rand_like as rand_like,
    randint as randint, randint_like as randint_like, randn as randn, randn_like as randn_like,
    randperm as randperm, seed as seed, set_rng_state as set_rng_state)
from .nn.utils.convert_parameters import typename as typename  # noqa: E402
from .nn.utils.weight_norm import (  # noqa: E402
    _weight_norm as _weight_norm, norm_except_dim as norm_except_dim)
from ._size import Size as Size  # noqa: E402
from . import serialization as serialization  # noqa: E402
from . import compiler as compiler  # noqa: E402
from . import (  # noqa: E402
    accelerator as accelerator, backends as backends, cuda as cuda, mps as mps, xpu as xpu)
from ._settings import (  # noqa: E402
    are_deterministic_algorithms_enabled as are_deterministic_algorithms_enabled,
    get_deterministic_debug_mode as get_deterministic_debug_mode,
    get_num_interop_threads as get_num_interop_threads, get_num_threads as get_num_threads,
    is_deterministic_algorithms_warn_only_enabled as
    is_deterministic_algorithms_warn_only_enabled,
    set_deterministic_debug_mode as set_deterministic_debug_mode,
    set_num_interop_threads as set_num_interop_threads, set_num_threads as set_num_threads,
    use_deterministic_algorithms as use_deterministic_algorithms)
from ._streams import Event as Event, Stream as Stream  # noqa: E402
from . import amp as amp, cpu as cpu  # noqa: E402
from .amp.grad_scaler import GradScaler as GradScaler  # noqa: E402
from .cuda import amp as _cuda_amp  # noqa: E402  (loads torchlike.cuda.amp)
from .amp.autocast_mode import (  # noqa: E402
    autocast as autocast, autocast_decrement_nesting as autocast_decrement_nesting,
    autocast_increment_nesting as autocast_increment_nesting,
    clear_autocast_cache as clear_autocast_cache, get_autocast_cpu_dtype as get_autocast_cpu_dtype,
    get_autocast_dtype as get_autocast_dtype, get_autocast_gpu_dtype as get_autocast_gpu_dtype,
    get_autocast_xla_dtype as get_autocast_xla_dtype,
    is_autocast_cache_enabled as is_autocast_cache_enabled,
    is_autocast_cpu_enabled as is_autocast_cpu_enabled,
    is_autocast_enabled as is_autocast_enabled, is_autocast_xla_enabled as is_autocast_xla_enabled,
    set_autocast_cache_enabled as set_autocast_cache_enabled,
    set_autocast_cpu_dtype as set_autocast_cpu_dtype,
    set_autocast_cpu_enabled as set_autocast_cpu_enabled,
    set_autocast_dtype as set_autocast_dtype, set_autocast_enabled as set_autocast_enabled,
    set_autocast_gpu_dtype as set_autocast_gpu_dtype,
    set_autocast_xla_dtype as set_autocast_xla_dtype,
    set_autocast_xla_enabled as set_autocast_xla_enabled)
from ._compile import compile as compile  # noqa: E402
from .func._vmap import vmap as vmap  # noqa: E402
from . import utils as utils  # noqa: E402
from .utils import checkpoint as _checkpoint  # noqa: E402  (loads torchlike.utils.checkpoint)
from . import export as export  # noqa: E402
from .serialization import load as load, save as save  # noqa: E402
from . import profiler as profiler  # noqa: E402
from ._tensor import Tensor as Tensor  # noqa: E402
from ._legacy import (  # noqa: E402
    BFloat16Tensor as BFloat16Tensor, BoolTensor as BoolTensor, ByteTensor as ByteTensor,
    CharTensor as CharTensor, DoubleTensor as DoubleTensor, FloatTensor as FloatTensor,
    HalfTensor as HalfTensor, IntTensor as IntTensor, LongTensor as LongTensor,
    ShortTensor as ShortTensor)
from . import (  # noqa: E402
    hub as hub, jit as jit, multiprocessing as multiprocessing, onnx as onnx)
from ._torch_alias import (  # noqa: E402
    install_as_torch as install_as_torch, uninstall_as_torch as uninstall_as_torch)
from ._tensor_str import (  # noqa: E402
    get_printoptions as get_printoptions, set_printoptions as set_printoptions)
from .autograd.anomaly_mode import (  # noqa: E402
    is_anomaly_check_nan_enabled as is_anomaly_check_nan_enabled,
    is_anomaly_enabled as is_anomaly_enabled)
from .autograd.grad_mode import (  # noqa: E402
    enable_grad as enable_grad, inference_mode as inference_mode,
    is_grad_enabled as is_grad_enabled, is_inference_mode_enabled as is_inference_mode_enabled,
    no_grad as no_grad, set_grad_enabled as set_grad_enabled)

# dtypes, with torch's aliases (torchlike.float is torchlike.float32, .long is .int64, ...)
bool = _dtype.bool_  # noqa: A001
uint8 = _dtype.uint8
uint16 = _dtype.uint16
uint32 = _dtype.uint32
uint64 = _dtype.uint64
int8 = _dtype.int8
int16 = short = _dtype.int16
int32 = int = _dtype.int32  # noqa: A001
int64 = long = _dtype.int64
float16 = half = _dtype.float16
bfloat16 = _dtype.bfloat16
float32 = float = _dtype.float32  # noqa: A001
float64 = double = _dtype.float64
complex64 = cfloat = _dtype.complex64
complex128 = cdouble = _dtype.complex128


def is_tensor(obj):
    """Mirrors ``torch.is_tensor``."""
    return isinstance(obj, Tensor)


def numel(input):
    """Mirrors ``torch.numel``."""
    return input.numel()


def is_floating_point(input):
    return input.is_floating_point()


def is_complex(input):
    return input.is_complex()


def is_inference(input):
    """Mirrors ``torch.is_inference``: whether ``input`` was made in inference mode."""
    return input.is_inference()


# PyTorch's constants
import math as _math  # noqa: E402
e, inf, nan, pi = _math.e, _math.inf, _math.nan, _math.pi
newaxis = None

__version__ = version.__version__   # NOTE [ the version torchlike reports ] in torch_version.py

_x64.restore(_x64_prev)
del _x64_prev, _checkpoint

_settings.tune_host_allocator()   # NOTE [ the host allocator ] in _settings.py
from . import _quick  # noqa: E402
_quick.share_ir_contexts()   # NOTE [ one MLIR context a thread ] in _quick.py
_quick.options_per_program()   # NOTE [ programs for ever new shapes ] in _quick.py

import os as _os  # noqa: E402
if _os.environ.get("TORCHLIKE_LAZY") == "1":   # NOTE [ lazy segments ] in _lazy.py
    from . import _lazy
    _lazy.enable()
