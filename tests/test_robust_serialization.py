"""torchlike.save against a careless end: a save killed by SIGKILL leaves its temporary file,
which the next save of that file removes (and a live concurrent saver's it keeps)."""
import os
import select
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import torchlike as tl


# --- a save killed mid-write ---------------------------------------------------------------------

_KILLED_SAVER = textwrap.dedent("""
    import sys
    import torchlike as tl
    from torchlike import _serialization_zip as Z
    real = Z.ZipWriter.write

    def write(self, name, data):
        real(self, name, data)
        if "/data/" in name:      # half-way: the temporary holds the pickle and a storage
            self._stream.flush()
            print("writing", flush=True)
            sys.stdin.readline()

    Z.ZipWriter.write = write
    tl.save({"w": tl.full((4096,), 7.0)}, sys.argv[1])
    print("saved", flush=True)
""")


def _read_line(proc, timeout=120):
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, "the saver did not report in time"
    return proc.stdout.readline().strip()


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL (POSIX)")
def test_killed_save_leaves_a_temporary_the_next_save_removes(tmp_path):
    path = tmp_path / "ckpt.pt"
    tl.save({"w": tl.zeros(2)}, path)
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(tl.__file__))}
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_SAVER, str(path)], env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert _read_line(proc) == "writing"
        temps = [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]
        assert len(temps) == 1 and f".{proc.pid}." in temps[0]
        assert (tmp_path / temps[0]).stat().st_size > 4096 * 4
        tl.save({"w": tl.ones(2)}, path)          # a live saver's temporary is kept
        assert (tmp_path / temps[0]).exists()
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        assert (tmp_path / temps[0]).exists()     # what the killed save leaves
        tl.save({"w": tl.full((2,), 3.0)}, path)  # ... the next save removes
        assert sorted(os.listdir(tmp_path)) == ["ckpt.pt"]
        np.testing.assert_array_equal(torch.load(path)["w"].numpy(), [3.0, 3.0])
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=60)
