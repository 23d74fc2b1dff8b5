"""Dropout: ``torch.nn.functional.dropout`` and its feature (channel), alpha and top-level forms.

One op draws the keep-mask from a key split off torchlike's default generator and applies it,
``x * mask / (1 - p)``; the key is an operand of the op, so backward regenerates the same mask
(and the op traces, the generator state carried in and out; NOTE [ random streams ] in
_random.py).  The graph is PyTorch's CPU graph: ``MulBackward0`` of the input and a noise tensor
that requires no grad (listed as None), and ``AddBackward0`` after it for alpha dropout.  Off
the CPU PyTorch fuses plain dropout into ``native_dropout``, and so does torchlike
(``NativeDropoutBackward0``).

As in PyTorch: ``training=False``, ``p == 0`` or an empty input returns the input itself;
``p == 1`` multiplies by a zero scalar (no randomness); the feature forms zero whole channels
(the mask has shape (N, C, 1, ...)).
"""
import math
import warnings

import jax

from .._creation import scalar_tensor
from .._dispatch import call, elementwise_op
from .._inplace import inplace as _inplace
from .._random import _key
from . import pointwise as _pw
from . import shape as _shape
from .padded import elementwise_rows
from .sampling import _bernoulli

_ALPHA = 1.7580993408473766   # selu's alpha * scale: where alpha dropout sends dropped units


def _keep(x, key, p, noise_dims):
    """The keep-mask (1 keeps, 0 drops) in x's dtype, varying over x's first ``noise_dims``
    dims (None: every element)."""
    shape = x.shape if noise_dims is None else (
        x.shape[:noise_dims] + (1,) * (x.ndim - noise_dims))
    return _bernoulli(key, shape, x.dtype, 1 - p)


def _dropout(x, key, p, noise_dims):
    return x * (_keep(x, key, p, noise_dims) / (1 - p))


def _alpha_coefficients(p):
    a = 1 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    return a, _ALPHA * a, _ALPHA * a * p


def _alpha_mul(x, key, p, noise_dims):
    a, _, _ = _alpha_coefficients(p)
    return x * (_keep(x, key, p, noise_dims) * a)


def _alpha_add(y, key, p, noise_dims):
    # the same key regenerates the same mask as _alpha_mul's
    _, alpha_a, shift = _alpha_coefficients(p)
    return y + ((_keep(y, key, p, noise_dims) - 1) * alpha_a + shift)


# The key is the second operand, listed as None in next_functions, like PyTorch's noise tensor;
# the mask it regenerates is what backward needs.
# (a short batch runs a longer one's program: NOTE [ a short call in a longer one's program ])
DROPOUT = elementwise_op("dropout", _dropout, "MulBackward0", saves={0: (1,)},
                         bucket=elementwise_rows)
NATIVE_DROPOUT = elementwise_op("native_dropout", _dropout, "NativeDropoutBackward0",
                                saves={0: (1,)}, inputs=1, bucket=elementwise_rows)
ALPHA_DROPOUT_MUL = elementwise_op("alpha_dropout", _alpha_mul, "MulBackward0", saves={0: (1,)})
ALPHA_DROPOUT_ADD = elementwise_op("alpha_dropout", _alpha_add, "AddBackward0", saves=())


def _check_p(p, exc):
    if p < 0.0 or p > 1.0:
        raise exc(f"dropout probability has to be between 0 and 1, but got {p}")


def _fused(input):
    """Whether PyTorch would run native_dropout (its fused kernel, used off the CPU)."""
    if isinstance(input._lazy or input._value(), jax.core.Tracer):
        return jax.default_backend() != "cpu"
    return input._device().platform != "cpu"


def _impl(input, p, train, inplace, feature=False, alpha=False, noise_dims=None):
    """PyTorch's dropout kernel for every form (``feature``: channel-wise)."""
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        zero = scalar_tensor(0, dtype=input.dtype, device=input.device)
        if inplace:
            return _inplace(input, lambda: _pw.mul(input, zero))
        return _pw.mul(input, zero)
    if feature:
        if input.ndim < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        noise_dims = noise_dims or 2
    dt = input.dtype
    if dt.is_complex:
        raise NotImplementedError(f"\"bernoulli_scalar_cpu_\" not implemented for "
                                  f"'{dt._scalar_name}'")
    if not dt.is_floating_point:
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{dt._scalar_name}")
    key = _key(None, input)
    static = (("p", float(p)), ("noise_dims", noise_dims))
    if alpha:
        out = _run(ALPHA_DROPOUT_MUL, input, key, static, inplace)
        # PyTorch adds the shift in place, into its product
        return _inplace(out, lambda: call(ALPHA_DROPOUT_ADD, out, key, static=static))
    if not inplace and not feature and _fused(input):
        return call(NATIVE_DROPOUT, input, key, static=static)
    return _run(DROPOUT, input, key, static, inplace)


def _run(op, input, key, static, inplace):
    if inplace:
        return _inplace(input, lambda: call(op, input, key, static=static))
    return call(op, input, key, static=static)


def _unbatched(input, p, training, inplace):
    """Feature dropout of an input without its batch dim: PyTorch unsqueezes it, drops channels
    and squeezes it back.  In place, the input's own dim 0 is the channel dim."""
    if inplace:
        return _impl(input, p, training, True, feature=True, noise_dims=1)
    out = _impl(_shape.unsqueeze(input, 0), p, training, False, feature=True)
    return _shape.squeeze(out, 0)


# --- torch.nn.functional ------------------------------------------------------------------------

def dropout(input, p=0.5, training=True, inplace=False):
    """Mirrors ``torch.nn.functional.dropout``: zero each element with probability ``p`` and
    scale the rest by 1 / (1 - p); the identity (the input itself) when not ``training``.

    Example:
        >>> x = torchlike.ones(1000)
        >>> y = F.dropout(x, 0.25)
        >>> sorted(set(y.tolist()))   # dropped, or kept and scaled by 1 / 0.75
        [0.0, 1.3333333730697632]
    """
    _check_p(p, ValueError)
    return _impl(input, p, training, inplace)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Mirrors ``torch.nn.functional.alpha_dropout``: dropout that keeps a SELU network's mean
    and variance (dropped units go to selu's negative saturation, then an affine correction)."""
    _check_p(p, ValueError)
    return _impl(input, p, training, inplace, alpha=True)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Mirrors ``torch.nn.functional.feature_alpha_dropout``: alpha dropout of whole channels."""
    _check_p(p, ValueError)
    return _impl(input, p, training, inplace, feature=True, alpha=True)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Mirrors ``torch.nn.functional.dropout1d``: zero whole channels of an (N, C, L) or (C, L)
    input."""
    _check_p(p, ValueError)
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs).")
    if input.ndim == 2:
        return _unbatched(input, p, training, inplace)
    return _impl(input, p, training, inplace, feature=True)


def _rank_warning(name, ndim, spatial, ranks):
    warnings.warn(
        f"{name}: Received a {ndim}-D input to {name}, which is deprecated and will result in "
        "an error in a future release. To retain the behavior and silence this warning, please "
        f"use dropout instead. Note that {name} exists to provide channel-wise dropout on "
        f"inputs with {spatial} spatial dimensions, a channel dimension, and an optional batch "
        f"dimension (i.e. {ranks} inputs).", stacklevel=3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Mirrors ``torch.nn.functional.dropout2d``: zero whole channels of an (N, C, H, W) input.

    As PyTorch does, a 3-D input is read as (N, C, L) (with a warning), and other ranks warn.
    """
    _check_p(p, ValueError)
    if input.ndim not in (3, 4):
        _rank_warning("dropout2d", input.ndim, 2, "3D or 4D")
    if input.ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2)
    return _impl(input, p, training, inplace, feature=True)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Mirrors ``torch.nn.functional.dropout3d``: zero whole channels of an (N, C, D, H, W) or
    (C, D, H, W) input (other ranks warn, as in PyTorch)."""
    _check_p(p, ValueError)
    if input.ndim not in (4, 5):
        _rank_warning("dropout3d", input.ndim, 3, "4D or 5D")
    if input.ndim != 5:
        return _unbatched(input, p, training, inplace)
    return _impl(input, p, training, inplace, feature=True)


# --- top-level torch.dropout(input, p, train) and friends (RuntimeError for a bad p) ------------

def _top(name, inplace, feature=False, alpha=False):
    def fn(input, p, train):
        _check_p(p, RuntimeError)
        return _impl(input, p, train, inplace, feature=feature, alpha=alpha)
    fn.__name__ = name
    fn.__doc__ = f"Mirrors ``torch.{name}(input, p, train)``."
    return fn


torch_dropout = _top("dropout", False)
torch_dropout_ = _top("dropout_", True)
torch_feature_dropout = _top("feature_dropout", False, feature=True)
torch_feature_dropout_ = _top("feature_dropout_", True, feature=True)
torch_alpha_dropout = _top("alpha_dropout", False, alpha=True)
torch_alpha_dropout_ = _top("alpha_dropout_", True, alpha=True)
torch_feature_alpha_dropout = _top("feature_alpha_dropout", False, True, True)
torch_feature_alpha_dropout_ = _top("feature_alpha_dropout_", True, True, True)

# torch.<name> whose signature differs from F.<name>
TOP_LEVEL = {"dropout": torch_dropout, "dropout_": torch_dropout_,
             "feature_dropout": torch_feature_dropout, "feature_dropout_": torch_feature_dropout_,
             "alpha_dropout": torch_alpha_dropout, "alpha_dropout_": torch_alpha_dropout_,
             "feature_alpha_dropout": torch_feature_alpha_dropout,
             "feature_alpha_dropout_": torch_feature_alpha_dropout_}
PUBLIC = ()
TENSOR_METHODS = {}
