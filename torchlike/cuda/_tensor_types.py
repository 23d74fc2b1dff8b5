"""The legacy cuda tensor types: mirrors ``torch.cuda.FloatTensor`` and its siblings, the CPU
types' metaclass (NOTE [ legacy tensor types ] in _legacy.py) for the cuda device type:
``isinstance(t, torchlike.cuda.FloatTensor)`` holds for a float32 Tensor on a cuda device, and
calling a type makes a Tensor of its dtype on the current cuda device.  Without a GPU, calling
one raises PyTorch's TypeError."""
from .._device import devices_of
from .._legacy import TensorType, tensor_types


class _CudaTensorType(TensorType):

    def __call__(cls, *args, device=None):
        if not devices_of("cuda"):
            raise TypeError(f"type torch.cuda.{cls.__name__} not available. Torch not compiled "
                            "with CUDA enabled.")
        return super().__call__(*args, device=device)


(FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor, ShortTensor,
 CharTensor, ByteTensor, BoolTensor) = tensor_types(_CudaTensorType, "cuda", "torchlike.cuda")
