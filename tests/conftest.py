"""Test-session settings.

NOTE [ test compile time ]
Most of the suite's time is XLA compiling small programs (every new op, shape and dtype is one
compile).  The tests check values, not speed, so XLA's backend optimisations are turned down
for them (--xla_backend_optimization_level=0: LLVM does far less work; measured about a third
less compile time).  The benchmarks in scripts/ run with XLA's defaults.  Set before jax
creates its backend, which happens at the first computation, after this file is imported.

NOTE [ 64-bit types in tests ]
torchlike turns jax's 64-bit types on only while its own code runs (NOTE [ 64-bit types in
torchlike's scope ] in torchlike/_x64.py).  A path of torchlike's that calls jax outside such a
scope computes in 32 bits, and jax only warns.  The suite makes that an error
(JAX_EXPLICIT_X64_DTYPES=error, inherited by the subprocesses and notebooks the tests start), so
every test that touches an int64 / float64 tensor also checks that its path runs in the scope.

NOTE [ the fused backward in tests ]
The fused backward compiles a graph's program once it has been seen ``fuse_after`` times (32 by
default) and as often as its savings need to repay the compile (about 1,200 times: NOTE [ fused
backward ] in torchlike/autograd/fused.py).  A test runs a graph a few times at most, so the
session sets 2 sightings and nothing more (``buy_after = 0``): every test that runs a graph twice to
compare the fused program with the per-node walk (tests/parity.py's both_again,
tests/test_engine_vs_jax.py) relies on it, and tests/test_engine_vs_jax.py checks the rule at
other settings.

NOTE [ torch is required ]
Real PyTorch is the oracle of most tests, so they import it at the top of the file, never through
pytest.importorskip: a run without torch (or with a broken one) fails at collection instead of
passing with thousands of tests skipped.
"""
import os
import threading

# tests/devices/ is a session of its own, with CPU devices presented as GPUs: test_devices.py
# starts it in a subprocess (NOTE [ devices ] in torchlike/_device.py)
collect_ignore = [] if os.environ.get("TORCHLIKE_CPU_AS_CUDA") == "1" else ["devices"]

os.environ.setdefault("JAX_EXPLICIT_X64_DTYPES", "error")   # NOTE [ 64-bit types in tests ]
os.environ["XLA_FLAGS"] = " ".join(
    filter(None, [os.environ.get("XLA_FLAGS"), "--xla_backend_optimization_level=0"]))

import pytest  # noqa: E402
import torch  # noqa: E402  (NOTE [ torch is required ])

from torchlike.autograd import fused  # noqa: E402  (after the settings above)

fused.fuse_after, fused.buy_after = 2, 0   # NOTE [ the fused backward in tests ]


@pytest.fixture(autouse=True)
def _torch_validates_distributions():
    """torch.distributions' default, validation on: torch._dynamo turns it off for the process
    the first time torch.compile runs (in this worker, any earlier test's), and the
    torchlike.distributions tests compare the errors it raises."""
    torch.distributions.Distribution.set_default_validate_args(True)


@pytest.fixture
def short_calls(monkeypatch):
    """No call run before for the short-call buckets (NOTE [ a short call in a longer one's
    program ] in torchlike/_ops/padded.py), their rent 2 calls; returns the names of the ops
    whose calls run padded from then on, a name per call."""
    from torchlike._ops import padded
    monkeypatch.setattr(padded.Padded, "_RUN", {})
    monkeypatch.setattr(padded.Padded, "_RENTED", {})
    monkeypatch.setattr(padded.Rows, "_OWN", {})
    monkeypatch.setattr(padded, "RENT", 2)
    ran, of = [], padded.Padded.of.__func__

    def spy(cls, op, *args):
        out = of(cls, op, *args)
        if out is not None:
            ran.append(op.name)
        return out
    monkeypatch.setattr(padded.Padded, "of", classmethod(spy))
    return ran


@pytest.fixture
def churning(monkeypatch):
    """Whether each program this thread traces compiles as a churning op's does (level 0 where
    small: NOTE [ programs for ever new shapes ] in torchlike/_quick.py), in order; the
    compile-ahead worker's traces are left out."""
    from torchlike import _quick
    seen, here, recompile = [], threading.get_ident(), _quick._recompile

    def noted(args, out, churn, fusion):
        if threading.get_ident() == here:
            seen.append(churn)
        return recompile(args, out, churn, fusion)
    monkeypatch.setattr(_quick, "_recompile", noted)
    return seen
