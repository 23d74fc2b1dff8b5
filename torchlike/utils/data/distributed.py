"""DistributedSampler: mirrors ``torch.utils.data.distributed``."""
import math

from ... import _random
from .sampler import Sampler

__all__ = ["DistributedSampler"]


def _world():
    """(world size, rank) of the default process group, as torch.distributed reports them."""
    try:
        from ... import distributed as dist
    except ImportError:
        raise RuntimeError("Requires distributed package to be available") from None
    if not dist.is_available():
        raise RuntimeError("Requires distributed package to be available")
    return dist.get_world_size(), dist.get_rank()


class DistributedSampler(Sampler):
    """Mirrors ``torch.utils.data.distributed.DistributedSampler``: the share of a dataset's
    indices that one of ``num_replicas`` processes reads.

    Every replica builds the same index list (shuffled with seed ``seed + epoch`` when
    ``shuffle``), pads it by repeating its head until it divides evenly (or, with ``drop_last``,
    cuts its tail), and takes every ``num_replicas``-th index starting at ``rank``.  Call
    ``set_epoch(epoch)`` before each epoch so that shuffling differs between epochs.

    Args:
        dataset: the dataset (only its length is used).
        num_replicas, rank: the number of processes and this one's rank (default: from the
            initialised ``torchlike.distributed`` process group).
        shuffle: shuffle the indices (default True).
        seed: the shuffle's seed; the same on every replica.
        drop_last: drop the tail instead of padding.

    Example:
        >>> list(DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False))
        [1, 3, 0]
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None or rank is None:
            world, my_rank = _world()
            num_replicas = world if num_replicas is None else num_replicas
            rank = my_rank if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            g = _random.Generator().manual_seed(self.seed + self.epoch)
            indices = _random.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if self.drop_last:
            indices = indices[:self.total_size]
        else:
            pad = self.total_size - len(indices)
            if pad <= len(indices):
                indices += indices[:pad]
            else:
                indices += (indices * math.ceil(pad / len(indices)))[:pad]
        assert len(indices) == self.total_size
        mine = indices[self.rank:self.total_size:self.num_replicas]
        assert len(mine) == self.num_samples
        return iter(mine)

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Mirrors ``DistributedSampler.set_epoch``: the epoch that seeds the next shuffle."""
        self.epoch = epoch
