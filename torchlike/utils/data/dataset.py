"""Datasets: mirrors ``torch.utils.data.dataset``.

A map-style dataset answers ``dataset[i]`` and ``len(dataset)``; an iterable-style dataset is
iterated.  The composites (``TensorDataset``, ``StackDataset``, ``ConcatDataset``,
``ChainDataset``, ``Subset``) only route indices, so they work over any dataset, torchlike or not.
"""
import bisect
import itertools
import math
import warnings
from typing import Generic, Iterable, TypeVar

from ... import _random

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split"]

T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """Mirrors ``torch.utils.data.Dataset``: a map from keys (usually ints) to samples.

    Subclasses define ``__getitem__`` and usually ``__len__`` (samplers and the default
    ``DataLoader`` need it).  They may also define ``__getitems__(indices)`` to fetch a whole
    batch in one call; the ``DataLoader`` then uses it instead of one ``__getitem__`` per index.
    ``a + b`` gives ``ConcatDataset([a, b])``.
    """

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co], Iterable[T_co]):
    """Mirrors ``torch.utils.data.IterableDataset``: a dataset read as a stream.

    With ``num_workers > 0`` every worker iterates its own copy of the dataset; use
    ``torchlike.utils.data.get_worker_info()`` inside ``__iter__`` to give each worker its own
    share, or every sample comes once per worker.  ``a + b`` gives ``ChainDataset([a, b])``.

    Example:
        >>> class Range(IterableDataset):
        ...     def __init__(self, n): self.n = n
        ...     def __iter__(self):
        ...         info = get_worker_info()
        ...         if info is None:
        ...             return iter(range(self.n))
        ...         return iter(range(info.id, self.n, info.num_workers))
    """

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Mirrors ``torch.utils.data.TensorDataset``: sample ``i`` is ``tuple(t[i] for t in
    tensors)``; every tensor must have the same size in dimension 0."""

    def __init__(self, *tensors):
        assert all(tensors[0].size(0) == t.size(0) for t in tensors), \
            "Size mismatch between tensors"
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Mirrors ``torch.utils.data.StackDataset``: zip datasets of equal length.

    ``StackDataset(a, b)[i] == (a[i], b[i])``; ``StackDataset(x=a, y=b)[i] == {"x": a[i],
    "y": b[i]}``.
    """

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via "
                             "``kwargs``) like input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        datasets = list(args) if args else list(kwargs.values())
        self._length = len(datasets[0])
        if any(len(d) != self._length for d in datasets):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args if args else kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices):
        """One batch: each member dataset fetched with its own ``__getitems__`` if it has one."""
        named = isinstance(self.datasets, dict)
        items = self.datasets.items() if named else enumerate(self.datasets)
        columns = {}
        for key, d in items:
            getitems = getattr(d, "__getitems__", None)
            column = getitems(indices) if callable(getitems) else [d[i] for i in indices]
            if len(column) != len(indices):
                raise ValueError("Nested dataset's output size mismatch. "
                                 f"Expected {len(indices)}, got {len(column)}")
            columns[key] = column
        if named:
            return [{k: col[j] for k, col in columns.items()} for j in range(len(indices))]
        return [tuple(col[j] for col in columns.values()) for j in range(len(indices))]

    def __len__(self):
        return self._length


class ConcatDataset(Dataset):
    """Mirrors ``torch.utils.data.ConcatDataset``: the datasets one after another.

    ``cumulative_sizes[k]`` is the total length of the first ``k + 1`` datasets; negative
    indices count from the end.
    """

    @staticmethod
    def cumsum(sequence):
        return list(itertools.accumulate(len(d) for d in sequence))

    def __init__(self, datasets):
        self.datasets = list(datasets)
        assert len(self.datasets) > 0, "datasets should not be an empty iterable"
        for d in self.datasets:
            assert not isinstance(d, IterableDataset), \
                "ConcatDataset does not support IterableDataset"
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which > 0 else 0
        return self.datasets[which][idx - start]

    @property
    def cummulative_sizes(self):
        warnings.warn("`cummulative_sizes` attribute is renamed to `cumulative_sizes`",
                      FutureWarning, stacklevel=2)
        return self.cumulative_sizes


class ChainDataset(IterableDataset):
    """Mirrors ``torch.utils.data.ChainDataset``: iterable datasets one after another, chained
    lazily as they are iterated."""

    def __init__(self, datasets):
        super().__init__()
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            assert isinstance(d, IterableDataset), "ChainDataset only supports IterableDataset"
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            assert isinstance(d, IterableDataset), "ChainDataset only supports IterableDataset"
            total += len(d)
        return total


class Subset(Dataset):
    """Mirrors ``torch.utils.data.Subset``: ``dataset`` seen through ``indices``."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        getitems = getattr(self.dataset, "__getitems__", None)
        if callable(getitems):
            return getitems([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Mirrors ``torch.utils.data.random_split``: disjoint random subsets of given lengths.

    Args:
        dataset: the map-style dataset to split.
        lengths: the lengths of the splits, or fractions summing to 1.  Fractions are floored
            (``floor(len(dataset) * frac)``) and the items left over are handed out one each,
            round-robin from the first split; an empty split warns.
        generator: the ``torchlike.Generator`` for the permutation (default: the global one).

    Returns:
        a list of ``Subset``.

    Example:
        >>> train, val = random_split(range(10), [0.8, 0.2],
        ...                           generator=torchlike.Generator().manual_seed(0))
        >>> len(train), len(val)
        (8, 2)
    """
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            sizes.append(int(math.floor(len(dataset) * frac)))
        for i in range(len(dataset) - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
        for i, n in enumerate(lengths):
            if n == 0:
                warnings.warn(f"Length of split at index {i} is 0. "
                              "This might result in an empty dataset.")
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    gen = _random.default_generator if generator is None else generator
    indices = _random.randperm(sum(lengths), generator=gen).tolist()
    return [Subset(dataset, indices[end - n:end])
            for end, n in zip(itertools.accumulate(lengths), lengths)]
