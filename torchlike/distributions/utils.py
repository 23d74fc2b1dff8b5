"""Mirrors ``torch.distributions.utils``: broadcasting of parameters, logits <-> probabilities,
``lazy_property`` and the lower-triangle <-> vector maps the distributions share."""
import functools

import numpy as np

from .. import _creation as C
from .. import _dtype as D
from .._info import finfo
from .._ops.activation import torch_softmax
from .._ops.join import broadcast_tensors
from .._ops.pointwise import sigmoid
from .._ops.shape import cat
from .._random import randn
from .._tensor import Tensor, host_values
from ..autograd.grad_mode import enable_grad

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits", "lazy_property",
           "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060   # the Euler-Mascheroni constant

_NUMBER = (bool, int, float)


def broadcast_all(*values):
    """Mirrors ``torch.distributions.utils.broadcast_all``: the values broadcast together.

    Python numbers become tensors of the first Tensor's dtype and device (of the default dtype
    when all are numbers), then everything is broadcast as ``torch.broadcast_tensors`` does.

    Args:
        *values: Tensors and Python numbers.

    Returns:
        tuple of Tensors of one shape.

    Raises:
        ValueError: when a value is neither a Tensor nor a number.

    Example:
        >>> broadcast_all(torchlike.zeros(2), 1.0)
        (tensor([0., 0.]), tensor([1., 1.]))
    """
    if not all(isinstance(v, (Tensor,) + _NUMBER) for v in values):
        raise ValueError("Input arguments must all be instances of Number, torch.Tensor or "
                         "objects implementing __torch_function__.")
    if not all(isinstance(v, Tensor) for v in values):
        first = next((v for v in values if isinstance(v, Tensor)), None)
        options = ({"dtype": D.get_default_dtype()} if first is None
                   else {"dtype": first.dtype, "device": first.device})
        values = [v if isinstance(v, Tensor) else C.tensor(v, **options) for v in values]
    return broadcast_tensors(*values)


def _standard_normal(shape, dtype, device):
    """A standard normal draw of ``shape`` from torchlike's generator."""
    return randn(tuple(shape), dtype=dtype, device=device)


def _sum_rightmost(value, dim):
    """``value`` summed over its ``dim`` rightmost dimensions."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:value.dim() - dim]) + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    """Mirrors ``torch.distributions.utils.logits_to_probs``: probabilities from logits.

    Args:
        logits (Tensor): log-odds (``is_binary``) or unnormalized log-probabilities along the
            last dimension.
        is_binary (bool): sigmoid instead of softmax over the last dimension.

    Returns:
        Tensor of the same shape.

    Example:
        >>> logits_to_probs(torchlike.tensor([0.0, 0.0]))
        tensor([0.5000, 0.5000])
    """
    if is_binary:
        return sigmoid(logits)
    return torch_softmax(logits, -1)


def clamp_probs(probs):
    """Mirrors ``torch.distributions.utils.clamp_probs``: ``probs`` clamped into
    ``[eps, 1 - eps]`` (``eps`` of its dtype).

    Example:
        >>> clamp_probs(torchlike.tensor([0.0, 0.5, 1.0]))
        tensor([1.1921e-07, 5.0000e-01, 1.0000e+00])
    """
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Mirrors ``torch.distributions.utils.probs_to_logits``: logits from probabilities (the
    probabilities clamped first by ``clamp_probs``).

    Args:
        probs (Tensor): probabilities of the event 1 (``is_binary``) or of each event along the
            last dimension.
        is_binary (bool): log-odds instead of log-probabilities.

    Example:
        >>> probs_to_logits(torchlike.tensor([0.5]), is_binary=True)
        tensor([0.])
    """
    clamped = clamp_probs(probs)
    if is_binary:
        return clamped.log() - (-clamped).log1p()
    return clamped.log()


class lazy_property:
    """Mirrors ``torch.distributions.utils.lazy_property``: a method computed (under grad mode)
    on first access, then stored on the instance in place of the descriptor.

    ``Bernoulli`` keeps only the parameter it was given and derives the other (``probs`` from
    ``logits`` or back) when read; validation skips such a parameter until then.
    """

    def __init__(self, wrapped):
        self.wrapped = wrapped
        functools.update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What a class shows for a lazy_property: a property to documentation tools, a
    lazy_property to validation."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def _tril_positions(n, diag):
    """The flat positions (row-major) of the entries on and below diagonal ``diag`` of an
    ``n x n`` matrix: static, so the maps below are gathers that trace and differentiate."""
    idx = np.arange(n)
    return np.flatnonzero(idx[None, :] < idx[:, None] + (diag + 1))


def tril_matrix_to_vec(mat, diag=0):
    """Mirrors ``torch.distributions.utils.tril_matrix_to_vec``: the entries of the (batched)
    ``D x D`` matrix on and below diagonal ``diag``, row by row.

    Example:
        >>> tril_matrix_to_vec(torchlike.tensor([[1., 0.], [2., 3.]]))
        tensor([1., 2., 3.])
    """
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    flat = mat.reshape(tuple(mat.shape[:-2]) + (-1,))
    return flat[..., C.tensor(_tril_positions(n, diag), device=mat.device)]


def vec_to_tril_matrix(vec, diag=0):
    """Mirrors ``torch.distributions.utils.vec_to_tril_matrix``: the (batched) ``D x D`` lower
    triangular matrix whose entries on and below diagonal ``diag`` are ``vec``, row by row.

    Raises:
        ValueError: when ``vec.shape[-1]`` is no triangle's size.

    Example:
        >>> vec_to_tril_matrix(torchlike.tensor([1., 2., 3.]))
        tensor([[1., 0.],
                [2., 3.]])
    """
    b = 1 + 2 * diag
    n = (-b + (b ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be "
                         "expressed as the lower triangular part of a square D x D matrix.")
    n = round(n)
    # every position of the matrix reads vec, or the zero appended after it
    source = np.full(n * n, vec.shape[-1])
    source[_tril_positions(n, diag)] = np.arange(vec.shape[-1])
    padded = cat([vec, vec.new_zeros(tuple(vec.shape[:-1]) + (1,))], -1)
    return padded[..., C.tensor(source, device=vec.device)].reshape(tuple(vec.shape[:-1]) + (n, n))


def _is_all_true(valid):
    """``valid.all()`` as a Python bool (None while tracing: the values are not known)."""
    values = host_values(valid)
    return None if values is None else bool(values.all())
