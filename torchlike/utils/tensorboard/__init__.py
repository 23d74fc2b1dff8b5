"""torchlike.utils.tensorboard: mirrors ``torch.utils.tensorboard``, TensorBoard logging.

``SummaryWriter`` writes scalars, histograms, images, figures, text, hyper-parameters and the
model's graph to event files with the ``tensorboard`` package's own writer and protos.  The
package is optional (``pip install "torchlike[tensorboard]"``): it is imported when a writer is
made, not by this import (NOTE [ tensorboard is optional ] in ``_proto.py``).

Example::

    >>> from torchlike.utils.tensorboard import SummaryWriter
    >>> writer = SummaryWriter()          # runs/<date>_<host>
    >>> writer.add_scalar("loss", 0.25, global_step=1)
    >>> writer.close()
"""
from .writer import FileWriter as FileWriter
from .writer import SummaryWriter as SummaryWriter

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]


def __getattr__(name):
    # tensorboard's RecordWriter, which torch re-exports: imported when asked for
    if name == "RecordWriter":
        from ._proto import load
        return load().RecordWriter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
