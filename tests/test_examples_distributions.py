"""The torch.distributions examples learn what they claim: examples/vae_digits.py raises the
held-out ELBO and draws its reconstructions, examples/policy_gradient.py raises the average
return towards the best possible one, and notebooks/04_vae_digits.ipynb runs and draws.

One test runs all three, so that pytest-xdist keeps them on one worker: the two scripts start
together (the machine has two cores), and the notebook runs once the VAE script is done, on the
XLA programs it left in a shared compilation cache (TORCHLIKE_CACHE_DIR), since both compile the
same model's ops."""
import re
import subprocess
import sys

import pytest

from test_examples import REPO, _env, _execute_notebook

EXAMPLES = REPO / "examples"
NOTEBOOK = REPO / "notebooks" / "04_vae_digits.ipynb"
TIMEOUT = 120   # seconds for one script (bounds a hang; a pass takes ~10-20 s)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
FINAL = re.compile(r"(\w+)=(-?\d+\.\d+)")


def _start(script, args, env):
    argv = [sys.executable, str(EXAMPLES / script), *args]
    return subprocess.Popen(argv, cwd=REPO, env=env, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def _finish(proc):
    """The script's stdout and its last line's key=value numbers, once it exits cleanly."""
    command = " ".join(proc.args[1:])
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{command} ran past {TIMEOUT} s")
    assert proc.returncode == 0, (f"{command} exited {proc.returncode}\n"
                                  f"--- stdout ---\n{out}\n--- stderr ---\n{err}")
    last = out.strip().splitlines()[-1]
    return out, {key: float(value) for key, value in FINAL.findall(last)}


def _check_vae(out, final):
    assert set(final) == {"initial_elbo", "final_elbo", "kl", "recon_error"}, out
    # 64 Bernoulli pixels at p = 1/2 cost 44 nats; two epochs already explain half of that
    assert final["initial_elbo"] < -40 and final["final_elbo"] > final["initial_elbo"] + 10, out
    assert final["kl"] >= 0 and 0 < final["recon_error"] < 0.5, out
    png = re.search(r"^reconstructions: (.+)$", out, flags=re.M)
    assert png, out
    with open(png.group(1), "rb") as f:
        assert f.read(8) == PNG_MAGIC


def _check_policy(out, final):
    assert set(final) == {"initial_return", "final_return", "optimal_return"}, out
    # the untrained policy wanders (a random walk times out often); the trained one walks to
    # an exit: "always right" alone is worth 0.55 of the best 0.6
    assert final["initial_return"] < 0 < final["final_return"], out
    assert final["optimal_return"] - 0.1 < final["final_return"], out
    assert final["final_return"] <= final["optimal_return"] + 1e-9, out
    assert "(compiled update)" in out


def _check_notebook(nb):
    outputs = [out for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs]
    text = "".join(out.get("text", "") for out in outputs if out.output_type == "stream")
    before = float(re.search(r"held-out ELBO before training: (-?\d+\.\d+)", text).group(1))
    after = float(re.search(r"held-out ELBO after training: (-?\d+\.\d+)", text).group(1))
    assert after > before + 10, text
    assert "z.grad_fn: AddBackward0" in text
    assert any("image/png" in out.get("data", {}) for out in outputs), "no picture was drawn"


def test_scripts_learn_and_the_notebook_draws(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHLIKE_CACHE_DIR", str(tmp_path / "xla-cache"))
    env = _env()
    procs = []
    try:
        procs.append(_start("vae_digits.py", ["--epochs", "2", "--save-reconstructions",
                                              str(tmp_path / "vae.png")], env))
        procs.append(_start("policy_gradient.py", ["--iterations", "15", "--compile"], env))
        _check_vae(*_finish(procs[0]))
        _check_notebook(_execute_notebook(NOTEBOOK))   # on the programs the VAE script cached
        _check_policy(*_finish(procs[1]))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
