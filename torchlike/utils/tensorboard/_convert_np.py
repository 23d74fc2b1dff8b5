"""Values to numpy arrays for the summary builders (mirrors
``torch.utils.tensorboard._convert_np``)."""
import numbers

import jax
import numpy as np

from ..._dtype import bfloat16, float16
from ..._tensor import Tensor


def make_np(x):
    """Mirrors ``torch.utils.tensorboard._convert_np.make_np``: a torchlike Tensor (any device),
    a numpy or jax array, or a Python / numpy number as a numpy array.

    A number becomes a one-element array; a bfloat16 Tensor is read as float16 (numpy has no
    bfloat16); a Tensor on the meta device has no values and, as in torch, reads as one random
    number, so logging code traced on meta tensors runs.

    Example::

        >>> make_np(torchlike.ones(2)).tolist()
        [1.0, 1.0]
    """
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x) or isinstance(x, numbers.Number):
        return np.array([x])
    if isinstance(x, Tensor):
        if x.device.type == "meta":
            return np.random.randn(1)
        if x.dtype == bfloat16:
            x = x.to(float16)
        return x.detach().cpu().numpy()
    if isinstance(x, jax.Array):
        return np.asarray(x)
    raise NotImplementedError(
        f"Got {type(x)}, but numpy array or torch tensor are expected.")
