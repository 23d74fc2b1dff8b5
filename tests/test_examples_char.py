"""examples/char_transformer.py trains a tiny GPT on CPython's pydoc text with a compiled step:
a short run exits cleanly, its loss falls, it times the compiled step against eager steps and it
prints generated text."""
import re
import subprocess
import sys

from test_examples import REPO, _env

SCRIPT = REPO / "examples" / "char_transformer.py"
SAMPLE_CHARS = 40
PROMPT = "The "


def _run(*args):
    proc = subprocess.run([sys.executable, str(SCRIPT), *args], cwd=REPO, env=_env(),
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, (
        f"{SCRIPT.name} {' '.join(args)} exited {proc.returncode}\n--- stdout ---\n"
        f"{proc.stdout}\n--- stderr ---\n{proc.stderr}")
    return proc.stdout


def test_short_compiled_run_learns_times_and_samples():
    out = _run("--steps", "30", "--log-every", "10", "--layers", "1", "--d-model", "32",
               "--heads", "2", "--block-size", "32", "--batch-size", "8", "--eager-steps", "3",
               "--sample-chars", str(SAMPLE_CHARS), "--seed", "1")

    steps = re.findall(r"^step +(\d+)/30: train loss (\d+\.\d+), lr", out, flags=re.M)
    assert [s[0] for s in steps] == ["10", "20", "30"], out
    losses = [float(s[1]) for s in steps]
    assert losses[-1] < losses[0] - 0.3, f"the training loss did not fall: {losses}"
    before = float(re.search(r"validation loss before training: (\d+\.\d+)", out).group(1))
    after = float(re.search(r"validation loss after training: (\d+\.\d+)", out).group(1))
    assert after < before, (before, after)

    speed = re.search(r"speed: compiled (\d+\.\d) steps/s \((\d+\.\d) ms a step\), eager "
                      r"(\d+\.\d) steps/s \((\d+\.\d) ms a step\): compiled is (\d+\.\d)x faster",
                      out)
    assert speed, out
    compiled_ms, eager_ms, ratio = (float(speed.group(i)) for i in (2, 4, 5))
    assert compiled_ms > 0 and eager_ms > 0
    assert abs(ratio - eager_ms / compiled_ms) < 0.1 + 0.05 * ratio, speed.group(0)
    assert "training took" in out and "(compiled)" in out

    sample = re.search(r"^-{72}\n(.*?)\n-{72}$", out, flags=re.M | re.S)
    assert sample, out
    text = sample.group(1)
    assert text.startswith(PROMPT) and len(text) == len(PROMPT) + SAMPLE_CHARS, repr(text)
