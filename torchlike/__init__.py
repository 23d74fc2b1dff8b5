"""torchlike: PyTorch's eager API running on JAX/XLA.

    import torchlike as torch

Tensors are mutable, ``.backward()`` walks a graph torchlike records itself, each op's local
derivative comes from ``jax.vjp``, and XLA computes the numbers on CPU, GPU or TPU.
"""
import jax as _jax

# int64 / float64 need jax's 64-bit mode; torchlike passes explicit dtypes everywhere, so float32
# stays float32.
_jax.config.update("jax_enable_x64", True)
# NOTE: eager PyTorch code issues many small ops.  On the CPU, jax's asynchronous dispatch hands
# each one to a worker thread, which costs more than a small op itself (measured: a 64x64 mul
# takes 12 µs async, 6.5 µs sync); PyTorch's CPU ops are synchronous too.  GPU/TPU dispatch stays
# asynchronous.  Set jax_cpu_enable_async_dispatch back to True after import to change it.
_jax.config.update("jax_cpu_enable_async_dispatch", False)

from . import _dtype  # noqa: E402
from ._dtype import dtype as dtype  # noqa: E402
from ._dtype import get_default_dtype as get_default_dtype  # noqa: E402
from ._dtype import promote_types as promote_types  # noqa: E402
from ._dtype import set_default_dtype as set_default_dtype  # noqa: E402
from ._device import device as device  # noqa: E402
from ._info import finfo as finfo  # noqa: E402
from ._layout import channels_last as channels_last  # noqa: E402
from ._layout import channels_last_3d as channels_last_3d  # noqa: E402
from ._layout import contiguous_format as contiguous_format  # noqa: E402
from ._layout import memory_format as memory_format  # noqa: E402
from ._layout import preserve_format as preserve_format  # noqa: E402
from ._info import iinfo as iinfo  # noqa: E402
from ._size import Size as Size  # noqa: E402
from ._tensor import Tensor as Tensor  # noqa: E402
from . import _methods  # noqa: E402

_methods.install()

from . import autograd as autograd  # noqa: E402
from ._creation import arange as arange  # noqa: E402
from ._creation import as_tensor as as_tensor  # noqa: E402
from ._creation import asarray as asarray  # noqa: E402
from ._creation import empty as empty  # noqa: E402
from ._creation import empty_like as empty_like  # noqa: E402
from ._creation import eye as eye  # noqa: E402
from ._creation import from_dlpack as from_dlpack  # noqa: E402
from ._creation import from_numpy as from_numpy  # noqa: E402
from ._creation import full as full  # noqa: E402
from ._creation import full_like as full_like  # noqa: E402
from ._creation import get_default_device as get_default_device  # noqa: E402
from ._creation import linspace as linspace  # noqa: E402
from ._creation import logspace as logspace  # noqa: E402
from ._creation import ones as ones  # noqa: E402
from ._creation import ones_like as ones_like  # noqa: E402
from ._creation import scalar_tensor as scalar_tensor  # noqa: E402
from ._creation import set_default_device as set_default_device  # noqa: E402
from ._creation import tensor as tensor  # noqa: E402
from ._creation import tril_indices as tril_indices  # noqa: E402
from ._creation import triu_indices as triu_indices  # noqa: E402
from ._creation import zeros as zeros  # noqa: E402
from ._creation import zeros_like as zeros_like  # noqa: E402
from ._ops.index import nonzero as nonzero  # noqa: E402
from ._ops.linalg import bmm as bmm  # noqa: E402
from ._ops.linalg import dot as dot  # noqa: E402
from ._ops.linalg import get_float32_matmul_precision as get_float32_matmul_precision  # noqa
from ._ops.linalg import matmul as matmul  # noqa: E402
from ._ops.linalg import mm as mm  # noqa: E402
from ._ops.linalg import mv as mv  # noqa: E402
from ._ops.linalg import set_float32_matmul_precision as set_float32_matmul_precision  # noqa
from ._ops.pointwise import abs as abs  # noqa: E402
from ._ops.pointwise import absolute as absolute  # noqa: E402
from ._ops.pointwise import add as add  # noqa: E402
from ._ops.pointwise import bitwise_and as bitwise_and  # noqa: E402
from ._ops.pointwise import bitwise_not as bitwise_not  # noqa: E402
from ._ops.pointwise import bitwise_or as bitwise_or  # noqa: E402
from ._ops.pointwise import bitwise_xor as bitwise_xor  # noqa: E402
from ._ops.pointwise import clamp as clamp  # noqa: E402
from ._ops.pointwise import clamp_max as clamp_max  # noqa: E402
from ._ops.pointwise import clamp_min as clamp_min  # noqa: E402
from ._ops.pointwise import clip as clip  # noqa: E402
from ._ops.pointwise import cos as cos  # noqa: E402
from ._ops.pointwise import div as div  # noqa: E402
from ._ops.pointwise import eq as eq  # noqa: E402
from ._ops.pointwise import exp as exp  # noqa: E402
from ._ops.pointwise import floor_divide as floor_divide  # noqa: E402
from ._ops.pointwise import ge as ge  # noqa: E402
from ._ops.pointwise import gt as gt  # noqa: E402
from ._ops.pointwise import le as le  # noqa: E402
from ._ops.pointwise import log as log  # noqa: E402
from ._ops.pointwise import lt as lt  # noqa: E402
from ._ops.pointwise import maximum as maximum  # noqa: E402
from ._ops.pointwise import minimum as minimum  # noqa: E402
from ._ops.pointwise import mul as mul  # noqa: E402
from ._ops.pointwise import ne as ne  # noqa: E402
from ._ops.pointwise import neg as neg  # noqa: E402
from ._ops.pointwise import negative as negative  # noqa: E402
from ._ops.pointwise import pow as pow  # noqa: E402
from ._ops.pointwise import reciprocal as reciprocal  # noqa: E402
from ._ops.pointwise import relu as relu  # noqa: E402
from ._ops.pointwise import remainder as remainder  # noqa: E402
from ._ops.pointwise import rsub as rsub  # noqa: E402
from ._ops.pointwise import sigmoid as sigmoid  # noqa: E402
from ._ops.pointwise import sin as sin  # noqa: E402
from ._ops.pointwise import sqrt as sqrt  # noqa: E402
from ._ops.pointwise import sub as sub  # noqa: E402
from ._ops.pointwise import tanh as tanh  # noqa: E402
from ._ops.pointwise import true_divide as true_divide  # noqa: E402
from ._ops.pointwise import where as where  # noqa: E402
from ._ops.reduce import mean as mean  # noqa: E402
from ._ops.reduce import sum as sum  # noqa: E402
from ._ops.shape import cat as cat  # noqa: E402
from ._ops.shape import clone as clone  # noqa: E402
from ._ops.shape import flatten as flatten  # noqa: E402
from ._ops.shape import permute as permute  # noqa: E402
from ._ops.shape import reshape as reshape  # noqa: E402
from ._ops.shape import select as select  # noqa: E402
from ._ops.shape import squeeze as squeeze  # noqa: E402
from ._ops.shape import stack as stack  # noqa: E402
from ._ops.shape import t as t  # noqa: E402
from ._ops.shape import transpose as transpose  # noqa: E402
from ._ops.shape import unbind as unbind  # noqa: E402
from ._ops.shape import unsqueeze as unsqueeze  # noqa: E402
from ._random import manual_seed as manual_seed  # noqa: E402
from ._random import rand as rand  # noqa: E402
from ._random import randint as randint  # noqa: E402
from ._random import randn as randn  # noqa: E402
from ._random import seed as seed  # noqa: E402
from ._tensor_str import get_printoptions as get_printoptions  # noqa: E402
from ._tensor_str import set_printoptions as set_printoptions  # noqa: E402
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled as is_anomaly_check_nan_enabled  # noqa
from .autograd.anomaly_mode import is_anomaly_enabled as is_anomaly_enabled  # noqa: E402
from .autograd.grad_mode import enable_grad as enable_grad  # noqa: E402
from .autograd.grad_mode import inference_mode as inference_mode  # noqa: E402
from .autograd.grad_mode import is_grad_enabled as is_grad_enabled  # noqa: E402
from .autograd.grad_mode import is_inference_mode_enabled as is_inference_mode_enabled  # noqa
from .autograd.grad_mode import no_grad as no_grad  # noqa: E402
from .autograd.grad_mode import set_grad_enabled as set_grad_enabled  # noqa: E402
from . import special as special  # noqa: E402
from . import testing as testing  # noqa: E402
from . import fft as fft  # noqa: E402
from . import linalg as linalg  # noqa: E402
from . import _random  # noqa: E402
from ._ops import pointwise as _pointwise, reduce as _reduce, scatter as _scatter  # noqa: E402
from ._ops import complex as _complex, join as _join, linalg as _linalg, shape as _shape  # noqa
from ._ops import binary as _binary, sorting as _sorting, unary as _unary  # noqa: E402

# The op families of issue 3 list their public names in PUBLIC while they are being built; each
# name moves to an explicit import above once its family is complete.
for _family in (_pointwise, _unary, _binary, _reduce, _scatter, _sorting, _shape, _join, _linalg,
                _complex, _random):
    for _name in _family.PUBLIC:
        globals().setdefault(_name, getattr(_family, _name))
del _family, _name

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


__version__ = "0.1.0"
