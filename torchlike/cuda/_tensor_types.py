"""The legacy cuda tensor types: mirrors ``torch.cuda.FloatTensor`` and its siblings, the CPU
types' metaclass (NOTE [ legacy tensor types ] in _legacy.py) for the cuda device type:
``isinstance(t, torchlike.cuda.FloatTensor)`` holds for a float32 Tensor on a cuda device, and
calling a type makes a Tensor of its dtype on the current cuda device.  Without a GPU, calling
one raises PyTorch's TypeError."""
from .. import _dtype as D
from .._device import devices_of
from .._legacy import TensorType


class _CudaTensorType(TensorType):

    def __call__(cls, *args, device=None):
        if not devices_of("cuda"):
            raise TypeError(f"type torch.cuda.{cls.__name__} not available. Torch not compiled "
                            "with CUDA enabled.")
        return super().__call__(*args, device=device)


class LegacyCudaTensorType(metaclass=_CudaTensorType):
    """The attributes every legacy cuda tensor type has; a type sets ``dtype``."""
    dtype = None
    is_cuda = True
    is_sparse = False
    _device_type = "cuda"


class FloatTensor(LegacyCudaTensorType):
    """Mirrors ``torch.cuda.FloatTensor``: float32 on a cuda device."""
    dtype = D.float32


class DoubleTensor(LegacyCudaTensorType):
    """Mirrors ``torch.cuda.DoubleTensor``: float64 on a cuda device."""
    dtype = D.float64


class HalfTensor(LegacyCudaTensorType):
    """Mirrors ``torch.cuda.HalfTensor``: float16 on a cuda device."""
    dtype = D.float16


class BFloat16Tensor(LegacyCudaTensorType):
    """Mirrors ``torch.cuda.BFloat16Tensor``: bfloat16 on a cuda device."""
    dtype = D.bfloat16


class LongTensor(LegacyCudaTensorType):
    """Mirrors ``torch.cuda.LongTensor``: int64 on a cuda device."""
    dtype = D.int64


class IntTensor(LegacyCudaTensorType):
    """Mirrors ``torch.cuda.IntTensor``: int32 on a cuda device."""
    dtype = D.int32


class ShortTensor(LegacyCudaTensorType):
    """Mirrors ``torch.cuda.ShortTensor``: int16 on a cuda device."""
    dtype = D.int16


class CharTensor(LegacyCudaTensorType):
    """Mirrors ``torch.cuda.CharTensor``: int8 on a cuda device."""
    dtype = D.int8


class ByteTensor(LegacyCudaTensorType):
    """Mirrors ``torch.cuda.ByteTensor``: uint8 on a cuda device."""
    dtype = D.uint8


class BoolTensor(LegacyCudaTensorType):
    """Mirrors ``torch.cuda.BoolTensor``: bool on a cuda device."""
    dtype = D.bool_


for _t in (FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor,
           ShortTensor, CharTensor, ByteTensor, BoolTensor):
    _t.__module__ = "torchlike.cuda"   # the public path in reprs
del _t
