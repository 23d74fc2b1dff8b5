"""Device semantics on a machine without an accelerator: tests/devices/ runs as a session of its
own with eight CPU devices, the last seven presented as cuda:0-6 (TORCHLIKE_CPU_AS_CUDA=1,
NOTE [ devices ] in torchlike/_device.py).  XLA reads the device count when JAX starts, so the
session is a subprocess; its output is shown when it fails."""
import os
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).parent


def test_device_session():
    env = dict(os.environ, TORCHLIKE_CPU_AS_CUDA="1",
               XLA_FLAGS="--xla_force_host_platform_device_count=8")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", str(HERE / "devices")],
                          cwd=HERE.parent, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
