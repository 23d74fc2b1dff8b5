"""torchlike.utils.data: mirrors ``torch.utils.data`` -- datasets, samplers, collation and the
DataLoader with worker processes (see NOTE [ DataLoader worker start method ] in
dataloader.py)."""
from ._collate import default_collate as default_collate, default_convert as default_convert
from ._fetch import _DatasetKind as _DatasetKind
from ._worker import get_worker_info as get_worker_info
from .dataloader import DataLoader as DataLoader
from .dataset import (
    ChainDataset as ChainDataset, ConcatDataset as ConcatDataset, Dataset as Dataset,
    IterableDataset as IterableDataset, StackDataset as StackDataset, Subset as Subset,
    TensorDataset as TensorDataset, random_split as random_split)
from .distributed import DistributedSampler as DistributedSampler
from .sampler import (
    BatchSampler as BatchSampler, RandomSampler as RandomSampler, Sampler as Sampler,
    SequentialSampler as SequentialSampler, SubsetRandomSampler as SubsetRandomSampler,
    WeightedRandomSampler as WeightedRandomSampler)

__all__ = ["_DatasetKind", "BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
           "DistributedSampler", "IterableDataset", "RandomSampler", "Sampler",
           "SequentialSampler", "StackDataset", "Subset", "SubsetRandomSampler",
           "TensorDataset", "WeightedRandomSampler", "default_collate", "default_convert",
           "get_worker_info", "random_split"]
