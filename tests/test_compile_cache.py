"""``torchlike.compiler.config.cache_dir`` / ``TORCHLIKE_CACHE_DIR``: JAX's persistent compilation
cache for every program torchlike compiles, reused by a second process (NOTE [ persistent
compilation cache ] in torchlike/compiler.py).  Timings are scripts/bench_startup.py's."""
import json
import os
import pathlib
import subprocess
import sys

import jax
import pytest

import torchlike as tl

ROOT = str(pathlib.Path(__file__).resolve().parents[1])

# One short run: eager ops with a backward, an optimizer step, and a torchlike.compile step (its
# first call runs eagerly, its second compiles the program).  It counts JAX's compiles and its
# persistent cache's hits and misses with jax.monitoring, and turns the cache on the way argv[1]
# says: "env" leaves it to TORCHLIKE_CACHE_DIR, else the attribute is set to argv[1].
_CHILD = """
import collections, json, sys
from jax import monitoring
import torchlike as tl
events = collections.Counter()
monitoring.register_event_listener(lambda e, **k: events.update([e.rsplit("/", 1)[-1]]))
monitoring.register_event_duration_secs_listener(
    lambda e, d, **k: events.update(["compiles"]) if e.endswith("backend_compile_duration") else 0)
if sys.argv[1] != "env":
    tl.compiler.config.cache_dir = sys.argv[1]
tl.manual_seed(0)
model = tl.nn.Sequential(tl.nn.Linear(4, 8), tl.nn.ReLU(), tl.nn.Linear(8, 2))
opt = tl.optim.SGD(model.parameters(), lr=0.1)
x, y = tl.randn(16, 4), tl.randint(0, 2, (16,))

def step():
    opt.zero_grad()
    loss = tl.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss

step()
compiled = tl.compile(step)
losses = [compiled().item() for _ in range(3)]
print(json.dumps({"cache_dir": tl.compiler.config.cache_dir, "events": events,
                  "losses": losses}))
"""


def _run_child(how, cache_dir, **env):
    env = {**{k: v for k, v in os.environ.items() if k != "TORCHLIKE_CACHE_DIR"},
           "PYTHONPATH": ROOT, "JAX_PLATFORMS": "cpu", **env}
    done = subprocess.run([sys.executable, "-c", _CHILD, how], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["cache_dir"] == str(cache_dir)
    return out


def _entries(cache_dir):
    return sorted(p.name for p in cache_dir.iterdir() if p.name.endswith("-cache"))


def test_a_second_process_loads_every_program_from_the_cache(tmp_path):
    cache_dir = tmp_path / "xla"   # made by the option
    first = _run_child("env", cache_dir, TORCHLIKE_CACHE_DIR=str(cache_dir))
    files = _entries(cache_dir)
    compiles = first["events"]["compiles"]
    # every program, however quick to compile, is written (JAX's own threshold is 1 s)
    assert compiles > 10 and first["events"]["cache_misses"] == compiles == len(files)
    assert "cache_hits" not in first["events"]

    second = _run_child(str(cache_dir), cache_dir)   # the attribute, the same directory
    assert second["events"]["cache_hits"] == compiles
    assert "cache_misses" not in second["events"]
    assert _entries(cache_dir) == files
    assert second["losses"] == first["losses"]


def test_off_by_default_and_none_puts_jax_settings_back(tmp_path):
    config = tl.compiler.config
    assert os.environ.get("TORCHLIKE_CACHE_DIR") or config.cache_dir is None
    names = ("jax_compilation_cache_dir", "jax_persistent_cache_min_compile_time_secs",
             "jax_persistent_cache_min_entry_size_bytes")
    before = {name: getattr(jax.config, name) for name in names}
    previous = config.cache_dir
    try:
        config.cache_dir = tmp_path / "a"
        config.cache_dir = str(tmp_path / "b")   # a second directory replaces the first
        assert jax.config.jax_compilation_cache_dir == config.cache_dir == str(tmp_path / "b")
        assert jax.config.jax_persistent_cache_min_compile_time_secs == 0
        assert (tmp_path / "a").is_dir() and (tmp_path / "b").is_dir()
        assert "cache_dir=" in repr(config)
        config.cache_dir = None
        assert {name: getattr(jax.config, name) for name in names} == before
        assert config.cache_dir is None
    finally:
        config.cache_dir = previous


@pytest.mark.parametrize("value, error, words", [
    (3, TypeError, "not int"),
    (b"/tmp/x", TypeError, "not bytes"),
    ("", ValueError, "None turns the cache off"),
    ("FILE", NotADirectoryError, "is not a directory"),
])
def test_bad_values_raise_and_leave_the_setting(tmp_path, value, error, words):
    if value == "FILE":
        value = tmp_path / "file"
        value.write_text("")
    config = tl.compiler.config
    previous = config.cache_dir
    with pytest.raises(error, match=words):
        config.cache_dir = value
    assert config.cache_dir == previous


def test_a_bad_environment_value_fails_the_import_naming_the_variable(tmp_path):
    path = tmp_path / "file"
    path.write_text("")
    env = dict(os.environ, PYTHONPATH=ROOT, JAX_PLATFORMS="cpu", TORCHLIKE_CACHE_DIR=str(path))
    done = subprocess.run([sys.executable, "-c", "import torchlike"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert f"NotADirectoryError: TORCHLIKE_CACHE_DIR={str(path)!r}" in done.stderr
