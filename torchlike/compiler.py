"""torchlike.compiler: what ``torchlike.compile`` did, and its settings (mirrors the parts of
``torch.compiler`` / ``torch._dynamo`` people reach for: a reset, a recompile limit, counters).

Example::

    >>> step = torchlike.compile(train_step)
    >>> for x, y in loader:
    ...     step(x, y)
    >>> torchlike.compiler.counters["compiles"]   # 1: one program for the whole run
"""
import collections

__all__ = ["config", "counters", "reset", "InvalidBackend", "Unsupported"]


class _Config:
    """Settings of ``torchlike.compile``.

    Attributes:
        cache_size_limit: programs one compiled function may build before each further one
            warns (torch._dynamo's ``cache_size_limit``, 8).
        log_compiles: print one line for every (re)compilation, with the reason.
        donate_buffers: hand the buffers of written state (parameters, optimizer state, ...) to
            the program for reuse (see NOTE [ whole-step compile ]).
        index_checks: a compiled step raises what eager code raises for an index out of range
            (an embedding index past the table, a cross-entropy target out of bounds, ...),
            and leaves its state as it was (where PyTorch's CUDA kernels stop at a device-side
            assert).  Off, the program skips the checks and XLA clamps such indices.  Read when
            a program is compiled (``reset()`` makes existing ones compile again).  A program
            with checks reads their flags back after each call, which on an accelerator waits
            for the step to finish; ``scripts/bench_train.py --index-checks-cost`` measures
            what the checks cost.
    """

    def __init__(self):
        self.cache_size_limit = 8
        self.log_compiles = False
        self.donate_buffers = True
        self.index_checks = True

    def __repr__(self):
        return (f"config(cache_size_limit={self.cache_size_limit}, "
                f"log_compiles={self.log_compiles}, donate_buffers={self.donate_buffers}, "
                f"index_checks={self.index_checks})")


config = _Config()

#: ``compiles``: programs built; ``calls``: compiled calls run; ``eager_calls``: calls run
#: eagerly (the first call of each function, and fallbacks); ``graph_breaks``: fallbacks to
#: eager after a step could not be traced (``fullgraph=False``).
counters = collections.Counter()


class Unsupported(RuntimeError):
    """Mirrors ``torch._dynamo.exc.Unsupported``: a step needs the value of a traced tensor in
    Python (``.item()``, ``if loss > 1:``, ``.numpy()``, ``nonzero()``) and cannot become one
    program."""


class InvalidBackend(RuntimeError):
    """Mirrors ``torch._dynamo.exc.InvalidBackend``: ``torchlike.compile(backend=...)`` names a
    backend other than XLA."""


def reset():
    """Mirrors ``torch.compiler.reset``: forget every compiled program and zero the counters."""
    from . import _compile
    _compile.reset()
    counters.clear()
