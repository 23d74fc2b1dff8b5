"""Samplers: mirrors ``torch.utils.data.sampler``.

A sampler yields the keys (indices) a ``DataLoader`` fetches; a batch sampler yields lists of
them.  Random samplers draw from a ``torchlike.Generator`` (NOTE [ random streams ] in
torchlike/_random.py: the same seed gives the same order within torchlike, not torch's order).
"""
import itertools

from ... import _dtype as D, _random
from ..._creation import as_tensor, empty
from ..._ops.sampling import multinomial

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]


class Sampler:
    """Mirrors ``torch.utils.data.Sampler``: the base class of samplers.

    Subclasses define ``__iter__`` (the keys to fetch) and, where the count is known,
    ``__len__``.
    """

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """Mirrors ``torch.utils.data.SequentialSampler``: ``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


def _fresh_generator():
    """A generator seeded from the global RNG, as torch's RandomSampler makes one per epoch."""
    seed = int(empty((), dtype=D.int64).random_().item())
    return _random.Generator().manual_seed(seed)


class RandomSampler(Sampler):
    """Mirrors ``torch.utils.data.RandomSampler``: a random order of the dataset's indices.

    Args:
        data_source: the dataset (only its length is used).
        replacement: draw ``num_samples`` indices with replacement instead of permuting.
        num_samples: how many indices to yield (default ``len(data_source)``); without
            replacement, more than ``len(data_source)`` chains several permutations.
        generator: the ``torchlike.Generator`` to draw from.  Without one each pass seeds a
            new generator from the global RNG.
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError("replacement should be a boolean value, but got "
                            f"replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        gen = _fresh_generator() if self.generator is None else self.generator
        if self.replacement:
            # drawn in chunks of 32, so a partly consumed iterator draws little more than it yields
            for start in range(0, self.num_samples, 32):
                size = min(32, self.num_samples - start)
                yield from _random.randint(high=n, size=(size,), dtype=D.int64,
                                           generator=gen).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from _random.randperm(n, generator=gen).tolist()
            rest = self.num_samples % n
            if rest:
                yield from _random.randperm(n, generator=gen).tolist()[:rest]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """Mirrors ``torch.utils.data.SubsetRandomSampler``: the given indices in random order,
    without replacement."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in _random.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """Mirrors ``torch.utils.data.WeightedRandomSampler``: indices ``0..len(weights)-1`` drawn
    with probability proportional to ``weights`` (not necessarily summing to one).

    Args:
        weights: a 1-d sequence of non-negative weights.
        num_samples: how many indices to draw.
        replacement: draw with replacement; without it ``num_samples`` must not exceed the
            number of weights.
        generator: the ``torchlike.Generator`` to draw from.
    """

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if (not isinstance(num_samples, int) or isinstance(num_samples, bool)
                or num_samples <= 0):
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError("replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        weights = as_tensor(weights, dtype=D.float64)
        if weights.ndim != 1:
            raise ValueError("weights should be a 1d sequence but given weights have shape "
                             f"{tuple(weights.shape)}")
        self.weights = weights
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        drawn = multinomial(self.weights, self.num_samples, self.replacement,
                            generator=self.generator)
        yield from drawn.tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Mirrors ``torch.utils.data.BatchSampler``: lists of ``batch_size`` indices from another
    sampler; the last, shorter list is kept unless ``drop_last``.

    Example:
        >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
        [[0, 1], [2, 3], [4]]
    """

    def __init__(self, sampler, batch_size, drop_last):
        if (not isinstance(batch_size, int) or isinstance(batch_size, bool)
                or batch_size <= 0):
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        it = iter(self.sampler)
        while True:
            batch = list(itertools.islice(it, self.batch_size))
            if len(batch) < self.batch_size:
                if batch and not self.drop_last:
                    yield batch
                return
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
