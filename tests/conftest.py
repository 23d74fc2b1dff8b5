"""Test-session settings.

NOTE [ test compile time ]
Most of the suite's time is XLA compiling small programs (every new op, shape and dtype is one
compile).  The tests check values, not speed, so XLA's backend optimisations are turned down
for them (--xla_backend_optimization_level=0: LLVM does far less work; measured about a third
less compile time).  The benchmarks in scripts/ run with XLA's defaults.  Set before jax
creates its backend, which happens at the first computation, after this file is imported.

NOTE [ torch is required ]
Real PyTorch is the oracle of most tests, so they import it at the top of the file, never through
pytest.importorskip: a run without torch (or with a broken one) fails at collection instead of
passing with thousands of tests skipped.
"""
import os

# tests/devices/ is a session of its own, with CPU devices presented as GPUs: test_devices.py
# starts it in a subprocess (NOTE [ devices ] in torchlike/_device.py)
collect_ignore = [] if os.environ.get("TORCHLIKE_CPU_AS_CUDA") == "1" else ["devices"]

os.environ["XLA_FLAGS"] = " ".join(
    filter(None, [os.environ.get("XLA_FLAGS"), "--xla_backend_optimization_level=0"]))
