"""torchlike.compiler: what ``torchlike.compile`` did, and its settings (mirrors the parts of
``torch.compiler`` / ``torch._dynamo`` people reach for: a reset, a recompile limit, counters).

Example::

    >>> step = torchlike.compile(train_step)
    >>> for x, y in loader:
    ...     step(x, y)
    >>> torchlike.compiler.counters["compiles"]   # 1: one program for the whole run
"""
import collections
import os

from . import _ahead

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
            a program is compiled (``reset()`` makes existing ones compile again).  Checks of
            what the step is given run on the host before each call; those of values the step
            computes run in the program, whose flags are read back after each call (on an
            accelerator: at the next read of values on the host); ``scripts/bench_train.py
            --index-checks-cost`` measures what the checks cost.
        cache_dir: a directory for JAX's persistent compilation cache, or None (the default:
            off).  Set, every XLA program torchlike compiles -- each eager op's forward and
            backward, fused backwards, optimizer updates, ``torchlike.compile`` steps -- is
            written there, and a later process (a second run, a restarted notebook kernel)
            loads it instead of compiling it again (the digits CNN's first eager step takes
            0.3x its cold time; ``scripts/bench_startup.py`` measures it).  The
            environment variable ``TORCHLIKE_CACHE_DIR`` sets it at import and reaches
            subprocesses (DataLoader workers); ``None`` puts JAX's own settings back.  The
            cache is JAX's, one per process, so JAX code of your own in the same process is
            cached there too.  A cache is code the process runs: keep it where only you can
            write.  NOTE [ persistent compilation cache ].
        compile_ahead: where an eager op recorded for autograd has just compiled its forward
            (a new shape), compile the program its backward will run on a worker thread while
            the forward goes on (on by default where the process has more than one core;
            ``TORCHLIKE_COMPILE_AHEAD=0`` turns it off at import).  NOTE [ backward programs
            compiled ahead ].
    """

    def __init__(self):
        self.cache_size_limit = 8
        self.log_compiles = False
        self.donate_buffers = True
        self.index_checks = True
        self._cache_dir = None
        env = os.environ.get("TORCHLIKE_CACHE_DIR")
        if env:
            try:
                self.cache_dir = env
            except (ValueError, OSError) as e:
                raise type(e)(f"TORCHLIKE_CACHE_DIR={env!r}: {e}") from None

    @property
    def cache_dir(self):
        return self._cache_dir

    @cache_dir.setter
    def cache_dir(self, path):
        path = _cache_path(path)
        _use_persistent_cache(path)
        self._cache_dir = path

    @property
    def compile_ahead(self):
        return _ahead.enabled

    @compile_ahead.setter
    def compile_ahead(self, on):
        if not isinstance(on, bool):
            raise TypeError(f"compile_ahead must be a bool, not {type(on).__name__}")
        _ahead.enabled = on

    def __repr__(self):
        return (f"config(cache_size_limit={self.cache_size_limit}, "
                f"log_compiles={self.log_compiles}, donate_buffers={self.donate_buffers}, "
                f"index_checks={self.index_checks}, cache_dir={self.cache_dir!r}, "
                f"compile_ahead={self.compile_ahead})")


# NOTE [ persistent compilation cache ]
# Most of a new process's first steps is XLA compiling.  The digits CNN's first eager step
# compiles 30 programs (each op's forward and backward, and the Adam update), 3.9 s of the
# step's 4.6 s; the fused backward is compiled once the graph has repeated (then at the second
# step, now at the 32nd), and a torchlike.compile step's program at its second call
# (scripts/bench_startup.py, 2-core CPU shared with other work).  JAX's
# persistent cache stores each executable on disk under a hash of its program, compile options,
# XLA flags and device kind, and a new process loads it (1-5 ms a program, 20 ms for the Adam
# update) instead of compiling it (7-600 ms).  Tracing and lowering still run (0.6-1 s of a
# first step), so a warm first step takes 0.15-0.3x a cold one, and launch to first step
# 0.3-0.5x (CNN and Transformer, eager and compiled).
# - Threshold.  JAX writes only programs that took at least
#   jax_persistent_cache_min_compile_time_secs (1 s by default) to compile; none of an eager
#   step's programs takes that long, and each loads 3-30x faster than it compiles, so the
#   option writes every program (0 s; and min_entry_size_bytes -1: no size floor either).
# - Off by default, as in JAX.  The directory grows with every new op, shape and dtype, without
#   bound (about 6 KB a program: the CNN's first three eager steps write 39 files, 235 KB; one
#   test file, tests/test_ops_reduce.py, 557 files, 3.5 MB); JAX's
#   jax_compilation_cache_max_size bounds it, with the filelock package.  A cold run pays for
#   the writes (0.14 s over the CNN's 39 programs, lost in the noise of its 4-9 s).  And a
#   cache is trusted code: whoever can write the directory can make the process run anything.
#   Processes may share a directory (three at once on an empty one: same results, no errors);
#   a program read while another process writes it fails to decompress, and JAX then warns and
#   compiles it.
# - JAX in the same process.  JAX opens one cache per process, so the setting is JAX's own
#   (jax_compilation_cache_dir and the two thresholds), and JAX programs of the user's compile
#   through it too, their results unchanged.  The values JAX had before are kept and put back
#   by ``cache_dir = None``.  JAX opens the directory at the first compile after it is set, so a
#   change resets JAX's handle (``compilation_cache.reset_cache``), which takes effect for
#   programs compiled from then on.
_JAX_CACHE_SETTINGS = {"jax_compilation_cache_dir": None,   # the path
                       "jax_persistent_cache_min_compile_time_secs": 0.0,
                       "jax_persistent_cache_min_entry_size_bytes": -1}
_jax_before = {}   # JAX's values while torchlike's are in force


def _cache_path(path):
    """The directory ``path`` names, as an absolute path, created if missing (a remote URL such
    as ``gs://...`` is JAX's to open); None stays None."""
    if path is None:
        return None
    if not isinstance(path, (str, os.PathLike)) or isinstance(path, bytes):
        raise TypeError(f"cache_dir must be a str, an os.PathLike or None, not "
                        f"{type(path).__name__}")
    path = os.fspath(path)
    if not isinstance(path, str):
        raise TypeError(f"cache_dir must name a str path, not {type(path).__name__}")
    if not path:
        raise ValueError("cache_dir must name a directory, not ''; None turns the cache off")
    if "://" in path:
        return path
    path = os.path.abspath(os.path.expanduser(path))
    if os.path.exists(path) and not os.path.isdir(path):
        raise NotADirectoryError(f"cache_dir {path!r} is not a directory")
    os.makedirs(path, exist_ok=True)
    if not os.access(path, os.W_OK | os.X_OK):
        raise PermissionError(f"cache_dir {path!r} is not writable")
    return path


def _use_persistent_cache(path):
    """Point JAX's persistent cache at ``path`` with torchlike's thresholds, or put JAX's own
    settings back for None (NOTE [ persistent compilation cache ])."""
    import jax
    from jax.experimental.compilation_cache import compilation_cache
    if path is None:
        for name, value in _jax_before.items():
            jax.config.update(name, value)
        _jax_before.clear()
    else:
        if not _jax_before:
            _jax_before.update({name: getattr(jax.config, name) for name in _JAX_CACHE_SETTINGS})
        for name, value in _JAX_CACHE_SETTINGS.items():
            jax.config.update(name, path if value is None else value)
    compilation_cache.reset_cache()


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
