"""torchlike.nn.utils.rnn: mirrors ``torch.nn.utils.rnn`` -- PackedSequence and the functions
that pack, pad and unpad batches of variable-length sequences.

A PackedSequence keeps the time steps of a batch of sequences sorted by decreasing length:
``data`` holds, for each time step, the rows of the sequences still running, and
``batch_sizes`` (an int64 CPU tensor, as in PyTorch) how many there are.  Lengths and batch sizes
fix the shapes involved, so they are read on the host (never traced).  Packing and padding are
one op each, a gather with host-computed indices (``PackPaddedSequenceBackward0``; padding shows
PyTorch's ``CopySlices``), so their backward is one scatter.
"""
import collections
from collections.abc import Iterable

import jax
import jax.numpy as jnp
import numpy as np

from ... import _creation as C, _dtype as D
from ..._dispatch import Op, _broadcast_message, call
from ..._ops.rnn import host_batch_sizes
from ..._ops.scatter import index_select
from ..._tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence",
           "pad_sequence", "unpad_sequence", "pack_sequence", "unpack_sequence"]


# --- PackedSequence -------------------------------------------------------------------------------

_PackedSequenceBase = collections.namedtuple(
    "PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


class PackedSequence(_PackedSequenceBase):
    """Mirrors ``torch.nn.utils.rnn.PackedSequence``: the packed time steps of a batch of
    variable-length sequences (build one with ``pack_padded_sequence`` or ``pack_sequence``).

    Fields: ``data`` (sum of lengths, *), ``batch_sizes`` (int64, on the CPU: how many sequences
    run at each time step), ``sorted_indices`` (the batch order used for packing, or None) and
    ``unsorted_indices`` (its inverse).

    Example::

        >>> x = torchlike.tensor([[1, 2, 3], [4, 5, 0]]).T
        >>> p = pack_padded_sequence(x, [3, 2])
        >>> p.data, p.batch_sizes
        (tensor([1, 4, 2, 5, 3]), tensor([2, 2, 1]))
    """

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        elif batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should never "
                "be created manually. They should be instantiated by functions like "
                "pack_sequence and pack_padded_sequences in nn.utils.rnn. "
                "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """Mirrors ``PackedSequence.to``: ``data`` converted as ``Tensor.to`` does; the indices
        follow its device; ``batch_sizes`` stays on the CPU."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        sorted_indices, unsorted_indices = (
            None if t is None else t.to(data.device)
            for t in (self.sorted_indices, self.unsorted_indices))
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted_indices)

    def cuda(self, *args, **kwargs):
        """Mirrors ``PackedSequence.cuda``."""
        return self.to(*args, device="cuda", **kwargs) if not args else self.to(*args, **kwargs)

    def cpu(self, *args, **kwargs):
        """Mirrors ``PackedSequence.cpu``."""
        return self.to(*args, device="cpu", **kwargs)

    def pin_memory(self):
        """Mirrors ``PackedSequence.pin_memory`` (host memory needs no pinning here)."""
        return self

    def is_pinned(self):
        return False

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def double(self):
        return self.to(dtype=D.float64)

    def float(self):
        return self.to(dtype=D.float32)

    def half(self):
        return self.to(dtype=D.float16)

    def long(self):
        return self.to(dtype=D.int64)

    def int(self):
        return self.to(dtype=D.int32)

    def short(self):
        return self.to(dtype=D.int16)

    def char(self):
        return self.to(dtype=D.int8)

    def byte(self):
        return self.to(dtype=D.uint8)


PackedSequence.__module__ = "torchlike.nn.utils.rnn"


def invert_permutation(permutation):
    """Mirrors ``torch.nn.utils.rnn.invert_permutation``: the permutation q with
    q[permutation[i]] = i (None stays None)."""
    if permutation is None:
        return None
    out = C.empty_like(permutation)
    return out.scatter_(0, permutation, C.arange(permutation.numel(), device=permutation.device))


# --- the ops --------------------------------------------------------------------------------------

def _pack(x, idx, batch_first):
    if batch_first:
        x = jnp.swapaxes(x, 0, 1)
    return x.reshape((-1,) + x.shape[2:])[idx]


def _pad(data, idx, padding_value):
    fill = jnp.full((1,) + data.shape[1:], padding_value, data.dtype)
    return jnp.concatenate([data, fill])[idx]


def _pad_list(*seqs, lengths, shape, batch_first, padding_value, left):
    dt = seqs[0].dtype
    parts = []
    for s, (n, full) in zip(seqs, lengths):
        s = jnp.broadcast_to(jnp.asarray(s, dt), full)
        gap = ((shape[0] - n, 0) if left else (0, shape[0] - n),) + ((0, 0),) * (s.ndim - 1)
        parts.append(jnp.pad(s, gap, constant_values=jnp.asarray(padding_value).astype(dt)))
    return jnp.stack(parts, axis=0 if batch_first else 1)


PACK_PADDED = Op("_pack_padded_sequence", _pack, "PackPaddedSequenceBackward0", inputs=1,
                 saves="indices")
PAD_PACKED = Op("_pad_packed_sequence", _pad, "CopySlices", inputs=1, saves="indices")
PAD_SEQUENCE = Op("pad_sequence", _pad_list, "CopySlices", saves=())


def _host_tensor(values):
    """An int64 CPU Tensor of host values that stays concrete inside a traced function (batch
    sizes and lengths fix shapes, so later calls must be able to read them)."""
    with jax.ensure_compile_time_eval():
        return C.as_tensor(np.asarray(values), dtype=D.int64, device="cpu")


def _host_ints(t, what):
    arr = t._value()
    if isinstance(arr, jax.core.Tracer):
        raise RuntimeError(f"{what} must be concrete (they fix the shape of the result); compute "
                           "them outside the traced function")
    return np.asarray(arr)


# --- packing --------------------------------------------------------------------------------------

def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Mirrors ``torch.nn.utils.rnn.pack_padded_sequence``: pack a padded batch ``input`` of
    shape (T, B, *) (or (B, T, *) with ``batch_first``) whose sequences have ``lengths``.

    With ``enforce_sorted`` the lengths must be decreasing; otherwise the batch is sorted first
    and the order is kept in ``sorted_indices``.

    Example::

        >>> x = torchlike.zeros(4, 3, 2)
        >>> pack_padded_sequence(x, [4, 2, 1]).batch_sizes
        tensor([3, 2, 1, 1])
    """
    if isinstance(lengths, Tensor):
        lens = _host_ints(lengths, "lengths").astype(np.int64)
    else:
        lens = np.asarray(lengths).astype(np.int64)
    if lens.ndim != 1:
        raise RuntimeError("'lengths' argument should be a 1D CPU int64 tensor, but got "
                           f"{lens.ndim}D cpu Long tensor")
    if enforce_sorted:
        sorted_indices = None
    else:
        order = np.argsort(-lens, kind="stable")   # torch.sort's order, ties kept in place
        lens = lens[order]
        sorted_indices = C.as_tensor(order, dtype=D.int64, device=input.device)
        input = index_select(input, 0 if batch_first else 1, sorted_indices)
    data, batch_sizes = _pack_padded(input, lens, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def _pack_padded(input, lens, batch_first):
    if input.ndim < 2:
        raise IndexError("Dimension out of range (expected to be in range of "
                         f"[{-max(input.ndim, 1)}, {max(input.ndim, 1) - 1}], but got 1)")
    steps, batch = (input.shape[1], input.shape[0]) if batch_first else input.shape[:2]
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    if len(lens) != batch:
        raise RuntimeError("Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lens)} (batch_size={batch})")
    if lens[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if np.any(lens[1:] > lens[:-1]):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
            "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
            "to sidestep this requirement if you do not need ONNX exportability.")
    if lens[0] > steps:
        raise RuntimeError(f"Expected all lengths to be at most the padded length {steps}, but "
                           f"got a length of {int(lens[0])}")
    valid = np.arange(lens[0])[:, None] < lens[None, :]          # (time, batch)
    t, b = np.nonzero(valid)
    idx = jnp.asarray(t * batch + b, jnp.int32)
    data = call(PACK_PADDED, input, idx, static=(("batch_first", bool(batch_first)),))
    return data, _host_tensor(valid.sum(1))


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Mirrors ``torch.nn.utils.rnn.pad_packed_sequence``: the inverse of
    ``pack_padded_sequence``; returns (padded, lengths), padded of shape (T, B, *) (or (B, T, *)
    with ``batch_first``), T being ``total_length`` when given, in the original batch order;
    lengths an int64 CPU tensor."""
    bs = np.asarray(host_batch_sizes(sequence.batch_sizes), np.int64)
    max_len = len(bs)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {max_len}")
        max_len = total_length
    data = sequence.data
    batch, total = int(bs[0]), int(bs.sum())
    steps = np.zeros(max_len, np.int64)
    steps[:len(bs)] = bs
    valid = np.arange(batch)[None, :] < steps[:, None]            # (time, batch)
    offsets = np.concatenate([[0], np.cumsum(steps)[:-1]])
    idx = np.where(valid, offsets[:, None] + np.arange(batch)[None, :], total)
    padded = call(PAD_PACKED, data, jnp.asarray(idx, jnp.int32), padding_value)
    lengths = _host_tensor(valid.sum(0))
    if batch_first:
        padded = padded.transpose(0, 1)
    unsorted = sequence.unsorted_indices
    if unsorted is not None:
        padded = index_select(padded, 0 if batch_first else 1, unsorted)
        lengths = lengths[unsorted.cpu()]
    return padded, lengths


# --- padding lists of tensors ---------------------------------------------------------------------

def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Mirrors ``torch.nn.utils.rnn.pad_sequence``: stack tensors of shapes (L_i, *) into one
    (max L, B, *) tensor (or (B, max L, *) with ``batch_first``), filling with
    ``padding_value`` on the ``padding_side`` ('right' or 'left').  The result takes the first
    tensor's dtype; each tensor is broadcast into its slot, as PyTorch copies it.

    Example::

        >>> pad_sequence([torchlike.ones(2), torchlike.ones(1)], batch_first=True)
        tensor([[1., 1.],
                [1., 0.]])
    """
    if not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg of "
                           f"type: {type(sequences)}")
    sequences = tuple(sequences)
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if sequences[0].ndim == 0:
        raise RuntimeError("pad_sequence: expected each sequence to have at least one "
                           "dimension, but got a 0-dim tensor")
    trailing = tuple(sequences[0].shape[1:])
    max_len = max(s.shape[0] if s.ndim else 0 for s in sequences)
    lengths = []
    for s in sequences:
        if s.ndim == 0:
            raise RuntimeError("pad_sequence: expected each sequence to have at least one "
                               "dimension, but got a 0-dim tensor")
        slot = (s.shape[0],) + trailing
        try:
            full = np.broadcast_shapes(slot, tuple(s.shape))
        except ValueError:
            raise RuntimeError(_broadcast_message([np.empty(slot, np.bool_),
                                                   np.empty(tuple(s.shape), np.bool_)])) from None
        if full != slot:
            raise RuntimeError(f"output with shape {list(slot)} doesn't match the broadcast "
                               f"shape {list(full)}")
        lengths.append((s.shape[0], slot))
    static = (("lengths", tuple(lengths)), ("shape", (max_len,) + trailing),
              ("batch_first", bool(batch_first)), ("padding_value", padding_value),
              ("left", padding_side == "left"))
    return call(PAD_SEQUENCE, *sequences, static=static)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Mirrors ``torch.nn.utils.rnn.unpad_sequence``: the list of tensors ``pad_sequence``
    stacked.  Like PyTorch, without ``batch_first`` it transposes ``padded_sequences`` in
    place."""
    if not batch_first:
        padded_sequences.transpose_(0, 1)
    max_length = padded_sequences.shape[1]
    idx = C.arange(max_length, device=lengths.device)
    return [seq[idx < length] for seq, length in zip(padded_sequences, lengths, strict=True)]


def pack_sequence(sequences, enforce_sorted=True):
    """Mirrors ``torch.nn.utils.rnn.pack_sequence``: pack a list of tensors of shapes
    (L_i, *) (decreasing lengths unless ``enforce_sorted=False``)."""
    lengths = C.as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """Mirrors ``torch.nn.utils.rnn.unpack_sequence``: the list of tensors a PackedSequence
    holds, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
