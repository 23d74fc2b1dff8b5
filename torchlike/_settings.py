"""Process-wide runtime switches PyTorch programs set in their first lines: deterministic
algorithms and thread counts; and those torchlike sets at import: how jax dispatches CPU
programs and how the C library's malloc keeps freed memory.

NOTE [ deterministic algorithms ]
XLA's CPU programs are deterministic.  On a GPU, XLA uses atomic additions for some scatters and
reductions unless the process starts with ``XLA_FLAGS=--xla_gpu_deterministic_ops=true`` (read
when jax starts its GPU backend, as PyTorch's CUBLAS_WORKSPACE_CONFIG is).  So
``use_deterministic_algorithms`` (and ``backends.cudnn.deterministic``) record the switch and
read it back, and turning it on where a real GPU runs without that flag warns what to set; no
op raises PyTorch's "does not have a deterministic implementation" error.

NOTE [ thread counts ]
XLA's CPU backend sizes its thread pool once, when it starts, from the CPUs the process may run
on (``os.sched_getaffinity``), and it cannot be resized.  ``get_num_threads`` reports that size
until ``set_num_threads`` records another value, which it then reports; the pool itself does not
change.  To run on fewer threads, restrict the process's CPUs before jax starts
(``os.sched_setaffinity`` or ``taskset``).  The inter-op count is recorded the same way.

NOTE [ asynchronous CPU dispatch ]
jax can hand each CPU program to a worker thread and return at once, as it queues a GPU's
(``jax_cpu_enable_async_dispatch``, its default).  Then the Python that records and dispatches
the next op runs while XLA computes this one on another core.  Measured on the 2-core CPU (jax
0.10.2, side by side): scripts/bench_train.py's eager steps took 4.23 -> 3.81 ms (MLP), 3.79 ->
2.68 (CNN) and 5.53 -> 3.10 (Transformer), their recorded forwards 1.09 -> 1.02x (MLP) and 1.09
-> 1.05x (CNN) the same forward under no_grad, and bench_eager's Transformer encoder forward and
backward 4.06 -> 2.52 ms (torch 2.31-2.35); a lone small op costs the same either way (a 64x64
mul 9.4 against 8.8 µs, a tiny MLP's step 455 against 464-476 µs).  Early jax versions cost
more asynchronously (12 against 6.5 µs for that mul), and torchlike turned it off until this
was measured again.  With one core there is nothing to overlap and the hand-over costs (the
Transformer step 5.43 -> 6.93 ms on one core), so a process that may run on one CPU only
(``os.sched_getaffinity``) dispatches synchronously; elsewhere jax's setting stands.  jax
reads the switch when its CPU backend starts (the first op), so a program may still set it
(``jax.config.update("jax_cpu_enable_async_dispatch", ...)``) after ``import torchlike``.
PyTorch's CPU ops have finished when they return; torchlike's have been queued, so a CPU loop is
timed after reading a result or ``torch.cpu.synchronize()``, as a GPU loop is.

NOTE [ the host allocator ]
XLA's CPU runtime allocates every output of every op with the C library's ``malloc``, and an
eager step frees and allocates the same sizes again each step.  glibc's defaults can hand that
memory back to the kernel between steps: a freed block over its mmap threshold is unmapped, and
the free top of its heap past its trim threshold is released, so the next step's arrays land on
fresh pages and each first touch is a page fault.  glibc raises both thresholds after it frees
a large mapped block (up to 32 MiB), so whether a process pays depends on what it freed before:
in fresh processes here the Transformer step of scripts/bench_train.py took 968 minor faults a
step (and the MLP's 252), its recorded forward 3.7-3.8 ms against 2.46 ms without the faults;
in another run, and inside bench_train (torch's and the data's large frees had raised the
thresholds), none.  So on glibc, at import, torchlike keeps freed memory in the process up to
256 MiB past the heap's top (``M_TRIM_THRESHOLD``) and serves blocks up to 32 MiB from the
heap (``M_MMAP_THRESHOLD``): 0-3 faults a step from the start, the peak RSS unchanged (502
against 508 MB over 660 forwards); larger blocks are still mapped and unmapped.  The cost: up
to 256 MiB of freed memory stays counted in the process's RSS after a peak.
With asynchronous dispatch (above) XLA's worker threads allocate too, each from a malloc arena
of its own, and a process takes some steps before each arena holds what a step needs: in
tests/test_device_runtime.py's MLP, 126, 294, then 0-32 faults a window of 20 steps with these
settings, against 700-3,200 with glibc's.  A thread's arena grows by mapping further heaps of
64 MiB, and glibc unmaps such a heap as soon as it holds nothing again, whatever the trim
threshold, unless the arena's top pad (``M_TOP_PAD``) asks it to keep that much: a step that
needs a second heap then maps it anew every time.  bench_train's Transformer at a compute-bound
width (its "transformer, wide" forward row: a 17-22 ms forward) faulted 2,850-4,070 times a
recorded forward, whose graph keeps more alive than no_grad does.  So the top pad is 64 MiB, a
heap's size (address space: pages untouched cost no memory): 0.4 faults a recorded forward,
which took 17.6-18.7 ms against 21.4-22.8 (no_grad 16.0-16.7 either way; fresh processes,
alternated, 2-core CPU).  Its cost is the thresholds' own: what a peak touched stays counted in
the process's RSS (peak RSS of examples/pytorch/transformer_lm.py 437 -> 449 MB, word_lstm.py
488 -> 511 MB, one run each).
``TORCHLIKE_MALLOC=system`` (read at import) leaves glibc's defaults; other C libraries are left
alone.  PyTorch's CPU allocator meets the same defaults (its documentation suggests jemalloc or
tcmalloc instead).
"""
import ctypes
import os
import platform
import warnings

__all__ = ["are_deterministic_algorithms_enabled", "get_deterministic_debug_mode",
           "get_num_interop_threads", "get_num_threads",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "set_num_interop_threads", "set_num_threads", "use_deterministic_algorithms"]

_state = {"deterministic": False, "warn_only": False, "threads": None, "interop": None}


def gpu_determinism_warning():
    """Warn when determinism is asked for on a real GPU without XLA's deterministic flag."""
    import jax
    from ._device import devices_of
    gpus = [d for d in devices_of("cuda") if d.platform != "cpu"]
    if gpus and "--xla_gpu_deterministic_ops=true" not in os.environ.get("XLA_FLAGS", ""):
        warnings.warn("XLA's GPU programs use nondeterministic atomics unless the process "
                      "starts with XLA_FLAGS=--xla_gpu_deterministic_ops=true (jax "
                      f"{jax.__version__} reads it when its GPU backend starts)", UserWarning,
                      stacklevel=3)


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Mirrors ``torch.use_deterministic_algorithms`` (NOTE [ deterministic algorithms ])."""
    for name, value in (("mode", mode), ("warn_only", warn_only)):
        if not isinstance(value, bool):
            position = " (position 1)" if name == "mode" else ""
            raise TypeError(f"_set_deterministic_algorithms(): argument '{name}'{position} must "
                            f"be bool, not {type(value).__name__}")
    _state["deterministic"], _state["warn_only"] = mode, mode and warn_only
    if mode:
        gpu_determinism_warning()


def are_deterministic_algorithms_enabled():
    """Mirrors ``torch.are_deterministic_algorithms_enabled``."""
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled():
    """Mirrors ``torch.is_deterministic_algorithms_warn_only_enabled``."""
    return _state["warn_only"]


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode):
    """Mirrors ``torch.set_deterministic_debug_mode``: 'default' / 0 (off), 'warn' / 1
    (deterministic, warn only), 'error' / 2 (deterministic)."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    elif not isinstance(debug_mode, int) or isinstance(debug_mode, bool):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    """Mirrors ``torch.get_deterministic_debug_mode``: 0, 1 or 2."""
    if not _state["deterministic"]:
        return 0
    return 1 if _state["warn_only"] else 2


def _xla_threads():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:   # a platform without affinity
        return os.cpu_count() or 1


def _positive(name, n):
    if isinstance(n, bool) or not isinstance(n, int):
        raise RuntimeError(f"{name} expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError(f"{name} expects a positive integer")


def set_num_threads(int):   # noqa: A002 (PyTorch's parameter name)
    """Mirrors ``torch.set_num_threads``: recorded and read back; XLA's pool keeps its size
    (NOTE [ thread counts ])."""
    _positive("set_num_threads", int)
    _state["threads"] = int


def get_num_threads():
    """Mirrors ``torch.get_num_threads``: XLA's CPU pool size, or the value set."""
    return _state["threads"] or _xla_threads()


def set_num_interop_threads(int):   # noqa: A002
    """Mirrors ``torch.set_num_interop_threads``: once per process, as in PyTorch."""
    _positive("set_num_interop_threads", int)
    if _state["interop"] is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has "
                           "started or set_num_interop_threads called")
    _state["interop"] = int


def get_num_interop_threads():
    """Mirrors ``torch.get_num_interop_threads``."""
    return _state["interop"] or _xla_threads()


_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3   # glibc's mallopt (malloc.h)


def choose_cpu_dispatch():
    """jax's CPU dispatch made synchronous where the process may run on one CPU only, left as
    jax has it otherwise (NOTE [ asynchronous CPU dispatch ]); returns whether it is
    asynchronous."""
    import jax
    if _xla_threads() < 2:   # the CPUs the process may run on, as XLA's pool counts them
        jax.config.update("jax_cpu_enable_async_dispatch", False)
    return jax.config.values["jax_cpu_enable_async_dispatch"]


def tune_host_allocator():
    """glibc's malloc kept from returning the memory of one step to the kernel before the next
    (NOTE [ the host allocator ]); True where the settings were applied."""
    if os.environ.get("TORCHLIKE_MALLOC") == "system" or platform.libc_ver()[0] != "glibc":
        return False
    mallopt = ctypes.CDLL(None).mallopt
    return bool(mallopt(_M_TRIM_THRESHOLD, 256 << 20) and mallopt(_M_MMAP_THRESHOLD, 32 << 20)
                and mallopt(_M_TOP_PAD, 64 << 20))
