"""Ordinary PyTorch programs (examples/pytorch/) run unmodified as ``python -m torchlike X.py`` and
reach what the same file reaches under real PyTorch.

Each test runs one program twice at once, in two subprocesses: ``python X.py`` under real torch
(the oracle) and ``python -m torchlike X.py`` with the same small arguments, then compares the
machine-readable last lines.  Programs that draw random numbers are compared by what they learn
(both reach the learning goal; torchlike's result within a margin of torch's), since torchlike's
random streams are not torch's.  The L-BFGS fit draws none and must take torch's exact path,
on the CPU and on "cuda" (CPU devices presented as CUDA ones, TORCHLIKE_CPU_AS_CUDA=1), where
``device = "cuda" if torch.cuda.is_available() else "cpu"`` picks the accelerator.
"""
import math
import re

import pytest
import torch  # noqa: F401  (the oracle: the torch runs below need it installed)

from test_examples import REPO, run_side_by_side

PROGRAMS = REPO / "examples" / "pytorch"
TIMEOUT = 240   # seconds for one program's pair of runs (bounds a hang; a pass takes ~10-30 s)
FINAL = re.compile(r"(\w+)=(\S+)")


def _final_line(stdout):
    """{key: value} of the last line that has key=value pairs (numbers as floats)."""
    for line in reversed(stdout.strip().splitlines()):
        pairs = FINAL.findall(line)
        if pairs:
            return {k: v if "," in v else float(v) for k, v in pairs}
    raise AssertionError(f"no key=value line in:\n{stdout}")


def _run(name, args, variants):
    """{label: (final line as a dict, stdout)} of ``examples/pytorch/<name>.py args`` run once
    per variant, all at once; a variant is (interpreter arguments, extra environment)."""
    script = str(PROGRAMS / f"{name}.py")
    outputs = run_side_by_side(
        {label: [*prefix, script, *args] for label, (prefix, _) in variants.items()}, REPO,
        TIMEOUT, f"{name} {' '.join(args)}",
        {label: extra_env for label, (_, extra_env) in variants.items()})
    return {label: (_final_line(out), out) for label, (out, _) in outputs.items()}


TORCH = ((), {})
TORCHLIKE = (("-m", "torchlike"), {})
# torch.cuda.is_available() is True: the program's "cuda" is CPU device 1 (NOTE [ devices ]).
TORCHLIKE_CUDA = (("-m", "torchlike"), {"TORCHLIKE_CPU_AS_CUDA": "1",
                                        "XLA_FLAGS": "--xla_force_host_platform_device_count=2"})


def _run_pair(name, *args):
    """(torch's final line, torchlike's final line, torch's stdout, torchlike's stdout)."""
    runs = _run(name, args, {"torch": TORCH, "torchlike": TORCHLIKE})
    return runs["torch"][0], runs["torchlike"][0], runs["torch"][1], runs["torchlike"][1]


def test_cnn_digits_classifies_as_well_as_torch():
    ref, got, _, _ = _run_pair("cnn_digits", "--epochs", "2")
    for run in (ref, got):
        assert run["accuracy"] >= 0.85, run                     # chance is 0.10
        assert run["final_loss"] < 1.0, run                     # from ln(10) = 2.30
        assert run["reloaded_accuracy"] == run["accuracy"], run  # the checkpoint round trip
    assert got["accuracy"] >= ref["accuracy"] - 0.08, (got, ref)
    assert abs(got["final_loss"] - ref["final_loss"]) < 0.25, (got, ref)


def test_vae_digits_lowers_the_loss_as_torch():
    ref, got, _, _ = _run_pair("vae_digits", "--epochs", "4")
    # The untrained model's loss depends only on the init's distribution, which torchlike shares.
    assert abs(got["initial_loss"] - ref["initial_loss"]) < 1.5, (got, ref)
    ratios = [run["final_loss"] / run["initial_loss"] for run in (ref, got)]
    assert max(ratios) < 0.8, (got, ref)
    assert abs(ratios[1] - ratios[0]) < 0.04, (got, ref)
    assert abs(got["recon_error"] - ref["recon_error"]) < 0.02, (got, ref)


def test_gan_ring_learns_the_modes_as_torch():
    ref, got, _, _ = _run_pair("gan_ring", "--steps", "300")
    ratios = []
    for run in (ref, got):
        ratios.append(run["ring_error"] / run["initial_ring_error"])
        assert ratios[-1] < 0.3, run         # samples moved onto the ring
        assert run["modes"] >= 4, run        # of 6
        assert run["quality"] >= 0.1, run
    assert ratios[1] < ratios[0] + 0.12, (got, ref)


def _check_language_model(ref, got, out, vocab_slack):
    vocab = int(re.search(r"vocabulary (\d+)", out).group(1))
    for run in (ref, got):
        # Untrained, a model guesses about uniformly over the vocabulary.
        assert abs(run["initial_loss"] - math.log(vocab)) < vocab_slack, (run, vocab)
        assert run["final_loss"] < run["initial_loss"] - 1.0, run
    assert got["final_loss"] < ref["final_loss"] + 0.15, (got, ref)
    assert got["accuracy"] > ref["accuracy"] - 0.05, (got, ref)


def test_char_lstm_learns_the_text_as_torch():
    ref, got, ref_out, got_out = _run_pair("char_lstm", "--steps", "150", "--sample-chars", "20")
    assert "sample: 'The " in got_out, got_out
    _check_language_model(ref, got, ref_out, vocab_slack=0.1)


def test_transformer_lm_learns_the_text_as_torch():
    ref, got, ref_out, got_out = _run_pair("transformer_lm", "--steps", "60", "--warmup", "10",
                                           "--sample-chars", "1")
    assert "sample: 'The " in got_out, got_out
    _check_language_model(ref, got, ref_out, vocab_slack=0.15)


def test_word_lstm_learns_the_text_as_torch():
    ref, got, ref_out, _ = _run_pair("word_lstm", "--epochs", "1", "--words", "10000",
                                     "--vocab", "200", "--bptt", "20")
    vocab = int(re.search(r"vocabulary (\d+)", ref_out).group(1))
    for run in (ref, got):
        assert abs(run["initial_loss"] - math.log(vocab)) < 0.1, (run, vocab)
        assert run["final_loss"] < run["initial_loss"] - 0.4, run
    assert got["final_loss"] < ref["final_loss"] + 0.3, (got, ref)


def test_lstm_timeseries_fits_the_waves_as_torch():
    ref, got, _, _ = _run_pair("lstm_timeseries", "--steps", "2", "--max-iter", "6",
                               "--length", "30", "--series", "6", "--future", "5")
    for run in (ref, got):
        assert run["final_loss"] < 0.2 * run["initial_loss"], run   # from about 0.5
        assert run["test_loss"] < 0.15, run     # the held-out waves, continuation included
        assert 6 <= run["evals"] <= 30, run     # 2 steps of 6 iterations, line search included


def test_lbfgs_fit_takes_torchs_exact_path_on_cpu_and_cuda():
    runs = _run("lbfgs_fit", (), {"torch": TORCH, "torchlike": TORCHLIKE,
                                  "torchlike on cuda": TORCHLIKE_CUDA})
    ref, ref_out = runs["torch"]
    assert ref["final_loss"] < 1e-3     # converged: from 0.57 down to the data's wiggle
    assert "parameters on cpu, data on cpu" in runs["torchlike"][1]
    assert "parameters on cuda:0, data on cuda:0" in runs["torchlike on cuda"][1]
    for label in ("torchlike", "torchlike on cuda"):
        got, got_out = runs[label]
        # No random numbers: every printed step (3 significant digits, closure calls) is torch's.
        steps = [[line for line in out.splitlines() if line.startswith(("initial", "step"))]
                 for out in (ref_out, got_out)]
        assert steps[1] == steps[0] and len(steps[0]) == 6, (label, got_out)
        assert got["evals"] == ref["evals"], label
        assert got["final_loss"] == pytest.approx(ref["final_loss"], rel=1e-9), label
        ref_params = [float(v) for v in ref["params"].split(",")]
        got_params = [float(v) for v in got["params"].split(",")]
        assert got_params == pytest.approx(ref_params, rel=1e-9, abs=1e-12), label
