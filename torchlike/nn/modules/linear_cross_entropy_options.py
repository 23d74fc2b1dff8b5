"""``LinearCrossEntropyOptions`` (mirrors ``torch.nn.modules.linear_cross_entropy_options``):
the settings of ``F.linear_cross_entropy``'s chunked path.

NOTE [ chunked linear cross entropy ]
With options, ``linear_cross_entropy`` computes the logits and losses ``batch_chunk_size`` rows
at a time instead of materialising the whole (batch, classes) logits, in ``acc_dtype``; the
values are those of the reference ``cross_entropy(linear(x, W, b), target)``.  The chunk size
is PyTorch's: ``batch_chunk_size``, or from ``chunking_method`` 'aspect_ratio[:N]' (chunks whose
logits take about the input's memory, divided by N), with 'auto' picks per (device, dtype).
``acc_policy`` chooses, in PyTorch, which of its hand-written backward's buffers stay in
``acc_dtype`` and is validated and resolved the same way here; torchlike's backward is the
autodiff of the chunked forward, whose buffers XLA places.
"""
import dataclasses
from typing import NamedTuple

from ... import _dtype as D

__all__ = ["LinearCrossEntropyOptions"]


class _AutoDefault(NamedTuple):
    acc_policy: str
    chunking_method: str


# PyTorch's picks for acc_policy / chunking_method = "auto", per (device type, input dtype)
_AUTO_DEFAULTS = {
    ("cuda", D.bfloat16): _AutoDefault("compact", "aspect_ratio:2"),
    ("cuda", D.float16): _AutoDefault("compact", "aspect_ratio:2"),
    ("cpu", D.bfloat16): _AutoDefault("accurate", "aspect_ratio"),
    ("cpu", D.float16): _AutoDefault("accurate", "aspect_ratio"),
}
_AUTO_FALLBACK = _AutoDefault("compact", "aspect_ratio:2")
_POLICIES = ("auto", "accurate", "balanced", "compact")


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """Mirrors ``torch.nn.LinearCrossEntropyOptions``: opt into the chunked implementation of
    ``F.linear_cross_entropy`` (NOTE [ chunked linear cross entropy ]).

    Args:
        allow_retain_graph: allow a second backward through the scalar reductions.
        batch_chunk_size: rows per chunk (None: from ``chunking_method``, or one chunk).
        chunking_method: 'auto', 'aspect_ratio', 'aspect_ratio:N' or None.
        acc_policy: 'auto', 'accurate', 'balanced' or 'compact'.
        acc_dtype: the dtype logits are accumulated in (None: float32 for half-precision input
            on a CPU or capable GPU, else the input's dtype).
    """

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None

    def __post_init__(self):
        if self.acc_policy not in _POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        method = self.chunking_method
        if method is not None and method != "auto":
            name, sep, factor = method.partition(":")
            factor = factor if sep else "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {method!r}")
        size = self.batch_chunk_size
        if size is not None and not (isinstance(size, int) and size > 0):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in (
                D.float16, D.bfloat16, D.float32, D.float64):
            raise ValueError(
                f"acc_dtype must be one of {{None, torch.float16, torch.bfloat16, "
                f"torch.float32, torch.float64}}, got {self.acc_dtype!r}. Pass acc_dtype=None "
                "to let the op pick automatically.")

    @staticmethod
    def _chunk_from_method(method, num_batches, in_features, num_classes):
        """'aspect_ratio[:N]': the next power of two of the rows whose logits take the input's
        memory, divided by N."""
        factor = int(method.split(":", 1)[1]) if ":" in method else 1
        rows = -(-num_batches // -(-num_classes // in_features))
        return min((1 << (rows - 1).bit_length()) // factor, num_batches)

    def _adjust(self, num_batches, in_features, num_classes, dtype, device=None):
        """These options resolved for one call: 'auto' picks, the chunk size, acc_dtype."""
        policy, method = self.acc_policy, self.chunking_method
        if method == "auto" and self.batch_chunk_size is not None:
            method = None
        if "auto" in (policy, method):
            pick = (_AUTO_DEFAULTS.get((device.type, dtype), _AUTO_FALLBACK)
                    if device is not None else _AUTO_FALLBACK)
            policy = pick.acc_policy if policy == "auto" else policy
            method = pick.chunking_method if method == "auto" else method
        size = num_batches if self.batch_chunk_size is None else min(self.batch_chunk_size,
                                                                     num_batches)
        if method is not None:
            size = self._chunk_from_method(method, num_batches, in_features, num_classes)
            if self.batch_chunk_size is not None and self.batch_chunk_size != size:
                raise ValueError(
                    f"batch_chunk_size (={self.batch_chunk_size}) and chunking_method "
                    f"('{method}') give different chunk sizes ({self.batch_chunk_size} vs "
                    f"{size}); pass only one.")
        acc = self.acc_dtype
        if acc is None:
            half = dtype in (D.float16, D.bfloat16) and device is not None and \
                device.type in ("cpu", "cuda")
            acc = D.float32 if self.acc_policy == "auto" and half else dtype
        return dataclasses.replace(self, acc_policy=policy, chunking_method=method,
                                   batch_chunk_size=max(1, size), acc_dtype=acc)
