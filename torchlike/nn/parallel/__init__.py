"""torchlike.nn.parallel: mirrors ``torch.nn.parallel`` -- DataParallel over the accelerator's
devices in one process (NOTE [ DataParallel ] in data_parallel.py) and its pieces (scatter,
replicate, parallel_apply, gather); DistributedDataParallel over the processes of a
torchlike.distributed group (NOTE [ DistributedDataParallel ] in distributed.py)."""
from .data_parallel import DataParallel as DataParallel, data_parallel as data_parallel
from .distributed import DistributedDataParallel as DistributedDataParallel
from .parallel_apply import parallel_apply as parallel_apply
from .replicate import replicate as replicate
from .scatter_gather import gather as gather, scatter as scatter

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel", "gather",
           "parallel_apply", "replicate", "scatter"]
