"""Embedding functionals: embedding, embedding_bag, one_hot.

``embedding`` and ``embedding_bag`` are one Op each (``EmbeddingBackward0``,
``EmbeddingBagBackward0``) whose graph inputs are the weight (and the per-sample weights); the
indices are extra operands.  PyTorch's gradient conventions that differ from the plain gather are
written into the forward with ``stop_gradient`` (the value is unchanged, only the derivative):
no gradient reaches the ``padding_idx`` row, and ``scale_grad_by_freq`` divides each row's
gradient by how often its index occurs in the mini-batch.

Index range checks read the indices on the host, as PyTorch's CPU kernels do; while
torchlike.compile traces a step they become checks of the program (NOTE [ checks in a compiled
step ] in _compile/program.py).  ``max_norm`` renormalizes the referenced rows of the weight in
place (no autograd, ``Tensor._write``) before the lookup, as PyTorch does.
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import _dtype as D, _trace_context
from .._dispatch import Op, call
from .._host import moved_on_host
from .._size import int_arg
from .._tensor import TracedValueError, check_index_range, host_values
from ..autograd.grad_mode import no_grad
from .padded import index_rows

_ABSENT = 0.0   # placeholder operand for missing per_sample_weights (keeps the node's 2 inputs)



def _check_indices(indices, fn, arg="indices"):
    dt = indices.dtype
    if dt is not D.int64 and dt is not D.int32:
        raise RuntimeError(f"Expected tensor for argument #1 '{arg}' to have one of the following "
                           f"scalar types: Long, Int; but got torch.{dt._tensor_type} instead "
                           f"(while checking arguments for {fn})")


def _freq_scaled(rows, indices, num):
    """rows, with their gradient divided by their index's count in ``indices``."""
    flat = indices.reshape(-1)
    counts = jnp.zeros((num,), jnp.int32).at[flat].add(1)
    scale = (1 / counts[indices].astype(rows.dtype))[..., None]
    fixed = lax.stop_gradient(rows)
    return fixed + (rows - fixed) * scale


# --- embedding ------------------------------------------------------------------------------------

def _embedding(weight, indices, padding_idx, scale_grad_by_freq):
    rows = weight[indices]
    if scale_grad_by_freq:
        rows = _freq_scaled(rows, indices, weight.shape[0])
    if padding_idx >= 0:
        rows = jnp.where((indices == padding_idx)[..., None], lax.stop_gradient(rows), rows)
    return rows


def _gathered(arrays, static, dt):
    """The rows of new small shapes, gathered on the host (NOTE [ new shapes moved on the
    host ]): the indices were checked there already (check_index_range)."""
    return moved_on_host(EMBEDDING, static, arrays, _rows_on_host)


def _rows_on_host(static, weight, indices):
    return weight[indices]


# (a short batch runs a longer one's program: NOTE [ a short call in a longer one's program ])
EMBEDDING = Op("embedding", _embedding, "EmbeddingBackward0", inputs=1, saves=(1,),
               cold=_gathered, bucket=index_rows)


def _renorm(weight, indices, max_norm, norm_type):
    used = jnp.zeros((weight.shape[0],), bool).at[indices.reshape(-1)].set(True)
    norms = jnp.linalg.norm(weight.astype(jnp.promote_types(weight.dtype, jnp.float32)),
                            ord=norm_type, axis=1)
    scale = max_norm / (norms + 1e-7)
    shrink = used & (norms > max_norm)
    return jnp.where(shrink[:, None], weight * scale[:, None].astype(weight.dtype), weight)


EMBEDDING_RENORM = Op("embedding_renorm_", _renorm, None, saves=())


def embedding_renorm_(input, indices, max_norm, norm_type):
    """Mirrors ``torch.embedding_renorm_``: rescale, in place, each row of ``input`` referenced by
    ``indices`` whose ``norm_type``-norm exceeds ``max_norm`` to norm ``max_norm`` (no autograd).
    """
    _check_indices(indices, "embedding_renorm_")
    if input.ndim != 2:
        raise RuntimeError("'self' must be 2-D")
    with no_grad():
        new = call(EMBEDDING_RENORM, input, indices, static=(
            ("max_norm", float(max_norm)), ("norm_type", float(norm_type))))
    input._write(new._value())
    return input


def _padding(padding_idx, num):
    if padding_idx is None:
        return -1
    if padding_idx > 0 and padding_idx >= num or padding_idx < 0 and padding_idx < -num:
        raise AssertionError("Padding_idx must be within num_embeddings")
    return padding_idx + num if padding_idx < 0 else padding_idx


def _torch_embedding(weight, input, padding_idx, scale_grad_by_freq, sparse):
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    _check_indices(input, "embedding")
    if sparse:
        raise NotImplementedError("torchlike: embedding with sparse=True is not supported (jax "
                                  "has no sparse gradients); use sparse=False")
    check_index_range(input, 0, weight.shape[0], IndexError, "index out of range in self")
    static = (("padding_idx", int(padding_idx)), ("scale_grad_by_freq", bool(scale_grad_by_freq)))
    return call(EMBEDDING, weight, input, static=static)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Mirrors ``torch.nn.functional.embedding``: the rows of ``weight`` at ``input``'s indices
    (result shape ``input.shape + (embedding_dim,)``).

    ``padding_idx``: that row gets no gradient.  ``max_norm``: first rescale, in place, the
    referenced rows whose ``norm_type``-norm exceeds it.  ``scale_grad_by_freq``: divide each
    row's gradient by the frequency of its index in ``input``.  ``sparse=True`` raises
    NotImplementedError (torchlike has no sparse gradients).

    Example:
        >>> w = torchlike.randn(10, 3)
        >>> torchlike.nn.functional.embedding(torchlike.tensor([[1, 2], [4, 9]]), w).shape
        torch.Size([2, 2, 3])
    """
    padding_idx = _padding(padding_idx, weight.shape[0])
    if max_norm is not None:
        embedding_renorm_(weight.detach(), input, max_norm, norm_type)
    return _torch_embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def torch_embedding(weight, input, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """Mirrors ``torch.embedding`` (ATen's argument order: weight first; ``padding_idx=-1`` is
    none)."""
    return _torch_embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


# --- embedding_bag --------------------------------------------------------------------------------

_MODES = ("sum", "mean", "max")


def _first_max(rows, bag, pos, segments):
    """Per bag and column, the row value at the FIRST position holding the maximum: gathered
    there, so the gradient goes to that one position, as PyTorch's (jax's segment_max would
    split it between ties).  An empty bag reads the zero row appended at the end."""
    n = rows.shape[0]
    best = jax.ops.segment_max(lax.stop_gradient(rows), bag, segments)
    hit = rows == best[bag]
    first = jax.ops.segment_min(jnp.where(hit, pos[:, None], n), bag, segments)
    padded = jnp.concatenate([rows, jnp.zeros((1,) + rows.shape[1:], rows.dtype)])
    return jnp.take_along_axis(padded, jnp.minimum(first, n), axis=0)


def _embedding_bag(weight, psw, indices, offsets, mode, num_bags, bag_len, padding_idx,
                   scale_grad_by_freq, weighted):
    indices = indices.reshape(-1)   # a 2-D input is flattened here, inside the jit
    n = indices.shape[0]
    pos = jnp.arange(n)
    if bag_len:   # 2-D input: fixed-length bags
        bag = pos // bag_len
    else:
        # bag of position i: how many offsets are <= i, minus one (offsets are non-decreasing)
        starts = jnp.zeros((n + 1,), jnp.int32).at[offsets].add(1)
        bag = jnp.cumsum(starts[:n]) - 1
    valid = (bag >= 0) & (bag < num_bags)
    if padding_idx >= 0:
        valid = valid & (indices != padding_idx)
    bag = jnp.where(valid, bag, num_bags)   # one extra bag collects what is left out
    rows = weight[indices]
    if scale_grad_by_freq:
        rows = _freq_scaled(rows, indices, weight.shape[0])
    if weighted:
        rows = rows * psw.astype(rows.dtype)[:, None]
    segments = num_bags + 1
    if mode == "max":
        out = _first_max(rows, bag, pos, segments)
    else:
        out = jax.ops.segment_sum(rows, bag, segments)
    counts = jax.ops.segment_sum(valid.astype(rows.dtype), bag, segments)[:, None]
    out = out[:num_bags]
    counts = counts[:num_bags]
    if mode == "mean":
        out = out / jnp.maximum(counts, 1)
    elif mode == "max":
        out = jnp.where(counts > 0, out, jnp.zeros((), out.dtype))
    return out


EMBEDDING_BAG = Op("embedding_bag", _embedding_bag, "EmbeddingBagBackward0", inputs=2,
                   saves=(0, 2, 3))


def _bag_value_checks(input, offsets, num):
    check_index_range(input, 0, num, RuntimeError, "Index {} of input takes value {} which "
                      f"is not in the valid range [0, {num})")
    off = None if offsets is None else host_values(offsets)
    if off is None or not off.size:
        return
    if off[0] != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {int(off[0])}\n"
                           f"[ torch.{offsets.dtype._tensor_type}{{}} ]")
    if off[-1] > input.shape[0]:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length "
                           f"{input.shape[0]} but got offsets[-1] of {int(off[-1])}")
    if off.size > 1 and np.any(off[1:] < off[:-1]):
        if off.min() < 0:
            raise IndexError("index out of range in self")
        raise RuntimeError(f"offsets must be non-decreasing, but got {off.tolist()}")


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """Mirrors ``torch.nn.functional.embedding_bag``: the ``sum`` / ``mean`` / ``max`` of the
    embeddings of each bag of indices, without materializing them one by one.

    A 1-D ``input`` is cut into bags at ``offsets`` (bag ``i`` starts at ``offsets[i]``; with
    ``include_last_offset`` the last offset ends the last bag); a 2-D ``input`` is one bag per
    row.  ``per_sample_weights`` (mode ``'sum'`` only) scales each embedding first.  Indices equal
    to ``padding_idx`` are left out of their bag (and of its mean).  Empty bags give zeros.
    ``max_norm`` renormalizes the referenced rows in place first, as in ``embedding``.

    Example:
        >>> w = torchlike.randn(10, 3)
        >>> torchlike.nn.functional.embedding_bag(
        ...     torchlike.tensor([1, 2, 4, 5]), w, torchlike.tensor([0, 2])).shape
        torch.Size([2, 3])
    """
    psw = per_sample_weights
    if psw is not None and tuple(input.shape) != tuple(psw.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({psw.shape}) is not None, then "
                         f"it must have the same shape as the input ({input.shape})")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.ndim}")
    bag_len = 0
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is "
                             "a mini-batch of fixed length sequences. However, found offsets of "
                             f"type {type(offsets)}")
        if input.shape[1] == 0:
            raise RuntimeError("step must be nonzero")
        num_bags, bag_len = input.shape[0], input.shape[1]
        if psw is not None:   # flattened as PyTorch does (ViewBackward0); the indices in the jit
            psw = psw.reshape(-1)
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        num_bags = offsets.shape[0] - (1 if include_last_offset else 0)
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.ndim}")
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        embedding_renorm_(weight.detach(), input, max_norm, norm_type)
    if psw is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. "
                                  "per_sample_weights is only supported for mode='sum' "
                                  f"(got mode='{mode}'). Please open a feature request on GitHub.")
    _check_indices(input, "embedding_bag")
    if offsets is not None:
        _check_indices(offsets, "embedding_bag")
    if not weight.dtype.is_floating_point:
        raise RuntimeError("Expected tensor for argument #1 'weight' to have one of the following "
                           "scalar types: Half, BFloat16, Float, Double; but got "
                           f"torch.{weight.dtype._tensor_type} instead (while checking arguments "
                           "for embedding_bag)")
    if psw is not None and psw.dtype is not weight.dtype:
        raise RuntimeError("Expected tensor for argument #1 'weight' to have the same type as "
                           "tensor for argument #1 'per_sample_weights'; but type "
                           f"torch.{weight.dtype._tensor_type} does not equal "
                           f"torch.{psw.dtype._tensor_type} (while checking arguments for "
                           "embedding_bag)")
    num = weight.shape[0]
    if padding_idx is None:
        padding_idx = -1
    elif not -num <= padding_idx < num:
        raise RuntimeError(f"padding_idx must be within the number of embeddings, {-num} through "
                           f"{num - 1}, but got {padding_idx}")
    elif padding_idx < 0:
        padding_idx += num
    if sparse:
        raise NotImplementedError("torchlike: embedding_bag with sparse=True is not supported "
                                  "(jax has no sparse gradients); use sparse=False")
    _bag_value_checks(input, offsets, num)
    static = (("mode", mode), ("num_bags", num_bags), ("bag_len", bag_len),
              ("padding_idx", int(padding_idx)), ("scale_grad_by_freq", bool(scale_grad_by_freq)),
              ("weighted", psw is not None))
    return call(EMBEDDING_BAG, weight, _ABSENT if psw is None else psw, input,
                _ABSENT if offsets is None else offsets, static=static)


# --- one_hot --------------------------------------------------------------------------------------

ONE_HOT = Op("one_hot", lambda x, num_classes: (
    x[..., None] == jnp.arange(num_classes, dtype=x.dtype)).astype(jnp.int64), None, saves=())


def one_hot(tensor, num_classes=-1):
    """Mirrors ``torch.nn.functional.one_hot``: int64 tensor of shape ``tensor.shape +
    (num_classes,)`` with a 1 at each class index.  ``num_classes=-1`` infers ``max + 1`` from the
    data, which needs the values: eager only (inside a traced step, pass ``num_classes``).

    Example:
        >>> torchlike.nn.functional.one_hot(torchlike.tensor([0, 2]), 3)
        tensor([[1, 0, 0],
                [0, 0, 1]])
    """
    if tensor.dtype is not D.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    num_classes = int_arg("one_hot", "num_classes", 2, num_classes)
    if tensor.numel() == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
    else:
        values = host_values(tensor)
        if values is None:
            if num_classes == -1:
                raise TracedValueError("one_hot(num_classes=-1) infers the number of classes from "
                                       "the values, which cannot be traced (torchlike.compile / "
                                       "to_jax); pass num_classes explicitly")
            a = tensor._value()   # the compiled step checks (NOTE [ checks in a compiled step ])
            _trace_context.check(~(a < 0).any(), RuntimeError, "Class values must be "
                                 "non-negative.")
            _trace_context.check(~(a >= num_classes).any(), RuntimeError, "Class values must be "
                                 "smaller than num_classes.")
        else:
            if values.min() < 0:
                raise RuntimeError("Class values must be non-negative.")
            if num_classes == -1:
                num_classes = int(values.max()) + 1
            elif values.max() >= num_classes:
                raise RuntimeError("Class values must be smaller than num_classes.")
    return call(ONE_HOT, tensor, static=(("num_classes", num_classes),))


PUBLIC = ("embedding_renorm_",)
TENSOR_METHODS = {}
# torch.<name> functions whose ATen signature differs from torch.nn.functional's
TOP_LEVEL = {"embedding": torch_embedding}
