"""Whole training steps: torchlike eager, torchlike.compile, hand-written JAX and PyTorch.

    python scripts/bench_train.py [--json PATH] [--budget SECONDS] [--window N]
                                  [--cases mlp,cnn,transformer] [--no-torch-compile]
                                  [--torch-threads N] [--profile] [--index-checks-cost]
                                  [--device cuda] [--no-forward] [--no-amp]
                                  [--amp-dtypes bfloat16,float16]

One training step (zero_grad, forward, cross-entropy loss, backward, optimizer step) of:
  mlp:          MLP 784-512-512-10 (ReLU), batch 128, SGD (lr 0.01, momentum 0.9);
  cnn:          the digits CNN of examples/train_digits.py (conv 1-16-32 3x3, ReLU, 2x2 max-pool,
                linear 512-64, ReLU, dropout 0.25, linear 64-10) on 8x8 images, batch 64, Adam;
  transformer:  a classifier over 32 tokens (vocabulary 128): embedding, a 2-layer
                nn.TransformerEncoder (d_model 64, 4 heads, feed-forward 128, post-norm, ReLU,
                dropout 0), mean over tokens, linear 64-10; batch 8, Adam.
each run seven ways on the same batch, from the same initial parameters:
  torchlike eager     the step as ordinary PyTorch code on torchlike;
  torchlike lazy      the same in lazy mode (NOTE [ lazy segments ] in torchlike/_lazy.py): a
                      repeated step runs as one recorded program;
  torchlike compiled  torchlike.compile(step): one XLA program per call;
  jax jit             the same model written by hand in jax.numpy, parameters as a dict pytree,
                      jax.jit(value_and_grad + the same update rule), old buffers donated (as
                      torchlike.compile donates); the CNN carries a PRNG key for its dropout;
  jax jit, torch state  the same, leaving what a PyTorch step leaves: it also returns every
                      parameter's gradient (PyTorch keeps them in .grad), and Adam keeps
                      torch.optim.Adam's state (a step counter per parameter, bias corrections
                      in float64, exp_avg by lerp), i.e. the program torchlike.compile makes of
                      the PyTorch step, written by hand;
  torch eager         the step in PyTorch (torch.set_num_threads(number of cores); on a machine
                      that other work keeps busy its threads wait on each other, and
                      --torch-threads 1 gives steadier numbers);
  torch compiled      torch.compile(step) (inductor needs a C++ compiler; a failure is reported
                      as "n/a" with its reason).
Differences that are the models' formulation, not torchlike's: the "jax jit" step returns no
gradients and keeps one Adam step counter (the "torch state" column measures what PyTorch's
state costs); torchlike's dropout hashes a counter, the hand-written one draws
jax.random.bernoulli (threefry).
torchlike turns on jax's 64-bit mode when imported (and jax's CPU dispatch stays asynchronous
unless the process has one CPU: NOTE [ asynchronous CPU dispatch ] in torchlike/_settings.py); the
hand-written JAX runs in the same process under the same settings.
Before timing, each case runs three steps in every implementation with dropout off and prints
whether the losses agree (the first loss checks the model, the later ones the update rule).

Timing as in scripts/bench_eager.py: a warm-up, then windows of --window back-to-back steps,
waiting for the window's last result (block_until_ready) before stopping the clock; one sample
is window time / window.  The implementations of a case take turns window by window, so a change
in the machine's load hits them all alike and the ratios are measured side by side; each round
takes them in a new random order (seeded), so none mostly runs right after the same one, and
each window begins with one untimed step (the first step after another implementation's window
meets its caches and allocator state, which a training loop never does).  Reports the median
and p10/p90 in milliseconds.  The goal: compiled torchlike within 1.05x of the
hand-written JAX step (the "jax jit" column; the ratio to "jax jit, torch state" is printed
beside it).  --profile (automatic when a case misses the goal) splits a compiled call
into its per-call Python (state discovery, guard key, inputs, write-back) and the XLA program.
--index-checks-cost adds an eighth implementation, the compiled step built with
torchlike.compiler.config.index_checks off, and prints what the checks of the embedding indices
and cross-entropy targets cost (NOTE [ checks in a compiled step ] in
torchlike/_compile/program.py).

Forward rows (unless --no-forward): each case's forward and loss alone, eager, with autograd
recording (the graph made, then dropped) beside the same under torchlike.no_grad(), timed
together: issue 19's target is recording <= 1.05x no_grad at compute-bound sizes (recording
must not change the forward's programs, only add Python).  The Transformer above is not
compute-bound (41 ops of about 30 us), so it has a second row, "transformer, wide": d_model 128,
feed-forward 512, batch 32 x 64 tokens (WIDE), a forward of about 20 ms.

Autocast rows (unless --no-amp): each case again with the forward and loss under
torch.autocast(dtype=...) for each of --amp-dtypes (default bfloat16) beside the float32
step -- torchlike eager and compiled, torch eager -- timed together, and the peak memory of
each: for a compiled step, XLA's memory analysis of its program (arguments + outputs +
temporaries - donated aliases); for an eager step, the device's peak_bytes_in_use where jax
reports one (a GPU; jax's CPU client reports none, so "n/a").  On a CPU without bfloat16 matrix
units, XLA computes a bfloat16 dot by converting to float32 and back, so autocast adds casts and
saves little: report what CPU gives.
"""
import argparse
import functools
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import torchlike  # noqa: E402
from torchlike import _lazy, _x64  # noqa: E402
from torchlike.autograd import fused  # noqa: E402
from torchlike._compile import function, guards, program as programs, walk  # noqa: E402

from bench_eager import (  # noqa: E402  (scripts/ is on the path when run as a script)
    print_environment, wait_jax, wait_torch, wait_torchlike)

try:
    import torch
except ImportError:  # the torch columns are left empty
    torch = None

GOAL = 1.05
DEVICE = "cpu"   # --device: where torchlike's and the hand-written JAX's steps run
VOCAB, SEQ, D_MODEL, HEADS, FF = 128, 32, 64, 4, 128
WIDE = {"d_model": 128, "ff": 512, "batch": 32, "seq": 64}   # the compute-bound forward row
SGD_LR, MOMENTUM, ADAM_LR = 0.01, 0.9, 1e-3
BETAS, EPS = (0.9, 0.999), 1e-8


# --- the models, written once for torchlike and torch ------------------------------------------

class DigitsCNN:
    """examples/train_digits.py's Net, built from ``lib.nn`` (torchlike or torch)."""

    @staticmethod
    def build(nn, p):
        return nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(32 * 4 * 4, 64), nn.ReLU(),
            nn.Dropout(p), nn.Linear(64, 10))


def build_model(lib, case, dropout, d_model=D_MODEL, ff=FF):
    nn = lib.nn
    if case == "mlp":
        return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                             nn.Linear(512, 10))
    if case == "cnn":
        return DigitsCNN.build(nn, dropout)

    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(VOCAB, d_model)
            layer = nn.TransformerEncoderLayer(d_model, HEADS, ff, dropout=0.0,
                                               batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.head = nn.Linear(d_model, 10)

        def forward(self, tokens):
            return self.head(self.encoder(self.embed(tokens)).mean(dim=1))
    return Classifier()


def make_batch(case):
    rng = np.random.default_rng(0)
    if case == "mlp":
        x = rng.standard_normal((128, 784), dtype=np.float32)
        y = rng.integers(0, 10, 128)
    elif case == "cnn":
        x = rng.uniform(0, 1, (64, 1, 8, 8)).astype(np.float32)
        y = rng.integers(0, 10, 64)
    else:
        x = rng.integers(0, VOCAB, (8, SEQ))
        y = rng.integers(0, 10, 8)
    return x, y


def make_optimizer(lib, case, params):
    if case == "mlp":
        return lib.optim.SGD(params, lr=SGD_LR, momentum=MOMENTUM)
    return lib.optim.Adam(params, lr=ADAM_LR, betas=BETAS, eps=EPS)


def torch_style_step(lib, case, init, dropout, amp=None):
    """(step, model) for ``lib``: the ordinary eager training step, parameters set to ``init``
    (None: the model's own initialisation, as a fresh program has); ``amp``: the name of a
    dtype to run its forward and loss in under autocast (None: float32)."""
    model = build_model(lib, case, dropout)
    if init is not None:
        model.load_state_dict({k: lib.tensor(v) for k, v in init.items()})
    x, y = (lib.tensor(a) for a in make_batch(case))
    if lib is torchlike:   # --device (torch stays on its CPU)
        model.to(DEVICE)
        x, y = x.to(DEVICE), y.to(DEVICE)
    opt = make_optimizer(lib, case, model.parameters())
    F = lib.nn.functional

    device_type = DEVICE.split(":")[0] if lib is torchlike else "cpu"

    def step():
        opt.zero_grad()
        with lib.autocast(device_type, dtype=getattr(lib, amp or "bfloat16"),
                          enabled=amp is not None):
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step, model


# --- the same models by hand in jax.numpy ------------------------------------------------------

def linear(p, name, x):
    return x @ p[name + ".weight"].T + p[name + ".bias"]


def jax_mlp(p, x, key, train):
    h = jax.nn.relu(linear(p, "0", x))
    h = jax.nn.relu(linear(p, "2", h))
    return linear(p, "4", h)


def conv(p, name, x):
    out = jax.lax.conv_general_dilated(x, p[name + ".weight"], (1, 1), ((1, 1), (1, 1)),
                                       dimension_numbers=("NCHW", "OIHW", "NCHW"))
    return out + p[name + ".bias"][None, :, None, None]


def jax_cnn(p, x, key, train, rate=0.25):
    h = jax.nn.relu(conv(p, "0", x))
    h = jax.nn.relu(conv(p, "2", h))
    h = jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
    h = jax.nn.relu(linear(p, "6", h.reshape(h.shape[0], -1)))
    if train and rate > 0:
        keep = jax.random.bernoulli(key, 1 - rate, h.shape)
        h = jnp.where(keep, h / (1 - rate), 0)
    return linear(p, "9", h)


def layer_norm(p, name, x, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + eps) * p[name + ".weight"] + p[name + ".bias"]


def attention(p, name, x):
    b, s, d = x.shape
    qkv = x @ p[name + ".in_proj_weight"].T + p[name + ".in_proj_bias"]
    q, k, v = (a.reshape(b, s, HEADS, d // HEADS).transpose(0, 2, 1, 3)
               for a in jnp.split(qkv, 3, axis=-1))
    w = jax.nn.softmax(q @ k.transpose(0, 1, 3, 2) * (d // HEADS) ** -0.5, axis=-1)
    out = (w @ v).transpose(0, 2, 1, 3).reshape(b, s, d)
    return linear(p, name + ".out_proj", out)


def jax_transformer(p, tokens, key, train):
    x = p["embed.weight"][tokens]
    for i in range(2):
        name = f"encoder.layers.{i}"
        x = layer_norm(p, name + ".norm1", x + attention(p, name + ".self_attn", x))
        ff = linear(p, name + ".linear2", jax.nn.relu(linear(p, name + ".linear1", x)))
        x = layer_norm(p, name + ".norm2", x + ff)
    return linear(p, "head", x.mean(axis=1))


JAX_MODELS = {"mlp": jax_mlp, "cnn": jax_cnn, "transformer": jax_transformer}


def cross_entropy(logits, y):
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.take_along_axis(logp, y[:, None], axis=1).mean()


def sgd_update(params, grads, state):
    """SGD with momentum as torch.optim.SGD: buf = momentum * buf + g; p -= lr * buf."""
    bufs = jax.tree_util.tree_map(lambda b, g: MOMENTUM * b + g, state["buf"], grads)
    params = jax.tree_util.tree_map(lambda p, b: p - SGD_LR * b, params, bufs)
    return params, {"buf": bufs}


def adam_update(params, grads, state):
    """Adam as torch.optim.Adam (bias corrections folded into the step size and denominator)."""
    b1, b2 = BETAS
    t = state["step"] + 1
    m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, state["m"], grads)
    v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, state["v"], grads)
    tf = t.astype(jnp.float32)
    step_size = ADAM_LR / (1 - b1 ** tf)
    root_bc2 = jnp.sqrt(1 - b2 ** tf)
    params = jax.tree_util.tree_map(
        lambda p, m, v: p - step_size * m / (jnp.sqrt(v) / root_bc2 + EPS), params, m, v)
    return params, {"step": t, "m": m, "v": v}


def adam_update_torch_state(params, grads, state):
    """Adam with torch.optim.Adam's state: a float32 step counter per parameter, the bias
    corrections of each computed in float64 (as its single-tensor update does on the host),
    exp_avg by lerp."""
    b1, b2 = BETAS
    steps = jax.tree_util.tree_map(lambda t: t + 1, state["step"])
    m = jax.tree_util.tree_map(lambda m, g: m + (1 - b1) * (g - m), state["m"], grads)
    v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, state["v"], grads)

    def param(p, m, v, t):
        t = t.astype(jnp.float64)
        step_size = (ADAM_LR / (1 - b1 ** t)).astype(p.dtype)
        root_bc2 = jnp.sqrt(1 - b2 ** t).astype(p.dtype)
        return p - step_size * m / (jnp.sqrt(v) / root_bc2 + EPS)
    params = jax.tree_util.tree_map(param, params, m, v, steps)
    return params, {"step": steps, "m": m, "v": v}


def jax_step_fn(case, dropout, torch_state=False):
    """(step, init_state): the jitted hand-written step and its optimizer state's start.

    ``torch_state``: the step also returns every parameter's gradient (PyTorch leaves them in
    ``.grad``; the old ones are donated) and Adam keeps torch.optim.Adam's state
    (adam_update_torch_state): what a training step in PyTorch leaves behind, in one program.
    """
    model = functools.partial(JAX_MODELS[case], train=True)
    if case == "cnn":
        model = functools.partial(model, rate=dropout)
    update = sgd_update if case == "mlp" else \
        adam_update_torch_state if torch_state else adam_update

    def loss_fn(params, x, y, key):
        return cross_entropy(model(params, x, key), y)

    def body(params, state, x, y, key):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y, key)
        params, state = update(params, grads, state)
        # the gradients ride along in the state: PyTorch's step leaves them in .grad
        return loss, params, {**state, "grads": grads} if torch_state else state

    if uses_key(case):
        @functools.partial(jax.jit, donate_argnums=(0, 1, 2))
        def step(params, state, key, x, y):
            key, sub = jax.random.split(key)
            return (*body(params, state, x, y, sub), key)
    else:   # no dropout: no key (``key`` is None)
        @functools.partial(jax.jit, donate_argnums=(0, 1))
        def step(params, state, key, x, y):
            return (*body(params, state, x, y, None), None)

    def init_state(params):
        zeros = lambda: jax.tree_util.tree_map(jnp.zeros_like, params)  # noqa: E731
        if case == "mlp":
            state = {"buf": zeros()}
        elif torch_state:
            state = {"step": jax.tree_util.tree_map(lambda p: jnp.zeros((), jnp.float32),
                                                    params), "m": zeros(), "v": zeros()}
        else:
            state = {"step": jnp.zeros((), jnp.int32), "m": zeros(), "v": zeros()}
        return {**state, "grads": zeros()} if torch_state else state
    return step, init_state


def uses_key(case):
    """Whether the hand-written step carries a PRNG key: only the CNN has dropout."""
    return case == "cnn"


def jax_runner(case, init, dropout, torch_state=False):
    """A closure running the hand-written step on its own copy of the state; returns the loss
    and the new parameters (what to wait for)."""
    step, init_state = jax_step_fn(case, dropout, torch_state)
    where = torchlike._device.to_jax_device(DEVICE)
    params = {k: jax.device_put(jnp.asarray(v), where) for k, v in init.items()}
    box = {"params": params, "state": jax.device_put(init_state(params), where),
           "key": jax.device_put(jax.random.key(0), where) if uses_key(case) else None}
    x, y = (jax.device_put(jnp.asarray(a), where) for a in make_batch(case))

    def run():
        loss, box["params"], box["state"], box["key"] = step(
            box["params"], box["state"], box["key"], x, y)
        return loss, box["params"]
    return run


# --- agreement -----------------------------------------------------------------------------------

def initial_params(case):
    torchlike.manual_seed(0)
    model = build_model(torchlike, case, 0.25)
    return {k: v.numpy() for k, v in model.state_dict().items()}


def check_agreement(case, init, steps=3):
    """Losses of ``steps`` steps with dropout off, in every implementation: (ok, line)."""
    losses = {}
    step, _ = torch_style_step(torchlike, case, init, 0.0)
    losses["torchlike"] = [step().item() for _ in range(steps)]
    step, _ = torch_style_step(torchlike, case, init, 0.0)
    compiled = torchlike.compile(step)
    losses["compiled"] = [compiled().item() for _ in range(steps)]
    dtypes = set()
    for name, torch_state in (("jax", False), ("jax torch-state", True)):
        run = jax_runner(case, init, 0.0, torch_state)
        outs = [run() for _ in range(steps)]
        losses[name] = [float(loss) for loss, _ in outs]
        # torchlike turns on jax's 64-bit mode, so a stray numpy scalar would make the
        # hand-written model float64 (and slow): check it stayed float32.
        dtypes.update(str(a.dtype) for a in jax.tree_util.tree_leaves(outs[-1]))
    if torch is not None:
        step, _ = torch_style_step(torch, case, init, 0.0)
        losses["torch"] = [step().item() for _ in range(steps)]
    ref = losses["jax"]
    ok = dtypes == {"float32"} and all(abs(a - b) <= 1e-4 * max(1.0, abs(b))
                                       for other in losses.values() for a, b in zip(other, ref))
    line = "  ".join(f"{k} " + "/".join(f"{v:.5f}" for v in vals) for k, vals in losses.items())
    if dtypes != {"float32"}:
        line += f"  (the hand-written step computes in {sorted(dtypes)})"
    return ok, f"{case}: {'OK' if ok else 'MISMATCH'}  losses of steps 1/2/3: {line}"


# --- timing ---------------------------------------------------------------------------------------

# steps every implementation runs before timing: a training loop's steady state, which for
# torchlike includes the fused backward, compiled on a graph's fused.fuse_after-th sighting here
# (fused.buy_after = 0 in main), as a long loop's is once seen often enough to repay the compile
WARM_STEPS = 40


def measure_together(runners, budget_s, window, min_samples=15):
    """Time several implementations of one case, taking turns window by window.

    ``runners``: {name: (fn, wait)}.  Returns {name: {median_ms, p10_ms, p90_ms, reps}}."""
    for fn, wait in runners.values():      # warm-up: compiles, allocator, caches
        warm_end = time.perf_counter() + max(0.1 * budget_s / len(runners), 0.05)
        for i in range(1000):
            wait(fn())
            if i >= WARM_STEPS and time.perf_counter() > warm_end:
                break
    samples = {name: [] for name in runners}
    names = list(runners)
    order = np.random.default_rng(0)
    deadline = time.perf_counter() + budget_s
    while min(len(s) for s in samples.values()) < min_samples or time.perf_counter() < deadline:
        # each round takes the implementations in a new random order, so none mostly runs
        # right after the same one; and a window's first step, which meets the caches and
        # allocator state the previous implementation left, is not timed: a training loop runs
        # step after step
        for name in order.permutation(names):
            fn, wait = runners[name]
            wait(fn())
            t0 = time.perf_counter()
            for _ in range(window):
                out = fn()
            wait(out)
            samples[name].append((time.perf_counter() - t0) / window)
    stats = {}
    for name, s in samples.items():
        ms = np.asarray(s) * 1e3
        stats[name] = {"median_ms": float(np.median(ms)), "p10_ms": float(np.percentile(ms, 10)),
                       "p90_ms": float(np.percentile(ms, 90)), "reps": len(ms) * window}
    return stats


def torch_compiled_runner(step):
    """torch.compile(step), compiled by its first calls: (fn, note) or (None, reason)."""
    from torch._dynamo.utils import counters
    counters.clear()
    try:
        compiled = torch.compile(step)
        for _ in range(5):   # the first calls compile (and may recompile once)
            compiled()
    except Exception as e:  # inductor needs a working C++ toolchain; report why it failed
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return None, f"{type(e).__name__}: {reason}"[:160]
    graphs = counters["stats"]["unique_graphs"]
    breaks = sum(counters["graph_break"].values())
    return compiled, f"{graphs} graphs, {breaks} graph breaks"


def lazily(step):
    """``step`` in lazy mode (NOTE [ lazy segments ] in torchlike/_lazy.py), the others not;
    measured in its steady state: the step's segment compiled at its fuse_after-th flush, as a
    long loop's is once its flushes have cost what a compile costs."""
    _lazy.buy_after = 0

    def run():
        _lazy.enable(True)
        try:
            return step()
        finally:
            _lazy.enable(False)
    return run


def runners_for(case, init, args):
    """{implementation: (fn, wait)} for one case, plus notes on what could not run."""
    runners, notes = {}, {}
    step, _ = torch_style_step(torchlike, case, init, 0.25)
    runners["torchlike eager"] = (step, wait_torchlike)
    step, _ = torch_style_step(torchlike, case, init, 0.25)
    runners["torchlike lazy"] = (lazily(step), wait_torchlike)
    step, _ = torch_style_step(torchlike, case, init, 0.25)
    runners["torchlike compiled"] = (torchlike.compile(step), wait_torchlike)
    if args.index_checks_cost:
        step, _ = torch_style_step(torchlike, case, init, 0.25)
        unchecked = torchlike.compile(step)
        torchlike.compiler.config.index_checks = False
        try:
            for _ in range(2):   # eager, then the call that compiles the program
                wait_torchlike(unchecked())
        finally:
            torchlike.compiler.config.index_checks = True
        runners["compiled, no index checks"] = (unchecked, wait_torchlike)
    runners["jax jit"] = (jax_runner(case, init, 0.25), wait_jax)
    runners["jax jit, torch state"] = (jax_runner(case, init, 0.25, torch_state=True), wait_jax)
    if torch is not None:
        step, _ = torch_style_step(torch, case, init, 0.25)
        runners["torch eager"] = (step, wait_torch)
        if args.torch_compile:
            step, _ = torch_style_step(torch, case, init, 0.25)
            t0 = time.perf_counter()
            fn, note = torch_compiled_runner(step)
            if fn is None:
                notes["torch compiled"] = f"n/a: {note}"
            else:
                runners["torch compiled"] = (fn, wait_torch)
                notes["torch compiled"] = (f"{note}; the first calls took "
                                           f"{time.perf_counter() - t0:.0f} s")
        else:
            notes["torch compiled"] = "skipped (--no-torch-compile)"
    else:
        notes["torch"] = "torch is not installed"
    return runners, notes


# --- autocast against float32 ------------------------------------------------------------------

AMP_IMPLS = ["torchlike eager", "torchlike compiled", "torch eager"]


def compiled_peak_bytes(compiled):
    """XLA's memory analysis of a torchlike.compile step's program: the bytes it holds at its
    peak (arguments, outputs and temporaries, less the outputs that alias donated arguments)."""
    state = walk.find_state(compiled._fn, (), {})
    program = compiled._programs[guards.guard_key(state)]
    arrays, grads, hypers, gens = programs.input_values(state)
    donated = [arrays[i] for i in program.donated]
    kept = [arrays[i] for i in program.kept]
    program.sealed = False
    with _x64.on():   # lowered where a call runs it (the generators' keys live on the CPU)
        args = jax.device_put((donated, kept, grads, hypers, gens), program.placement)
        mem = program.fn.lower(*args).compile().memory_analysis()
    if mem is None:
        return None
    return (mem.argument_size_in_bytes + mem.output_size_in_bytes + mem.temp_size_in_bytes
            - mem.alias_size_in_bytes)


def eager_peak_bytes(step, wait):
    """The device's peak bytes in use over a few eager steps, where jax reports it (else None).
    jax keeps one peak per process, so this is an upper bound once something larger ran."""
    wait(step())
    device = torchlike._device.to_jax_device(DEVICE)
    stats = device.memory_stats()
    if not stats or "peak_bytes_in_use" not in stats:
        return None
    for _ in range(3):
        wait(step())
    return device.memory_stats()["peak_bytes_in_use"]


def forward_rows(case, init, args, wide=False):
    """The eager forward and loss with recording against the same under no_grad, side by
    side: {"recorded": stats, "no_grad": stats}.  ``wide``: the Transformer at WIDE's sizes,
    from its own initialisation (a forward of tens of milliseconds: compute-bound)."""
    if wide:
        torchlike.manual_seed(0)
        model = build_model(torchlike, case, 0.25, WIDE["d_model"], WIDE["ff"])
        rng = np.random.default_rng(0)
        batch = (rng.integers(0, VOCAB, (WIDE["batch"], WIDE["seq"])),
                 rng.integers(0, 10, WIDE["batch"]))
    else:
        model = build_model(torchlike, case, 0.25)
        model.load_state_dict({k: torchlike.tensor(v) for k, v in init.items()})
        batch = make_batch(case)
    model.to(DEVICE)
    x, y = (torchlike.tensor(a).to(DEVICE) for a in batch)
    F = torchlike.nn.functional

    def recorded():
        return F.cross_entropy(model(x), y)

    def no_grad():
        with torchlike.no_grad():
            return F.cross_entropy(model(x), y)
    return measure_together({"recorded": (recorded, wait_torchlike),
                             "no_grad": (no_grad, wait_torchlike)}, args.budget, args.window)


def amp_rows(case, init, args):
    """Step time and peak memory of float32 against autocast to each of ``args.amp_dtypes``,
    side by side."""
    runners, peaks = {}, {}
    for amp in [None] + args.amp_dtypes:
        tag = f" {amp}" if amp else ""
        step, _ = torch_style_step(torchlike, case, init, 0.25, amp=amp)
        runners["torchlike eager" + tag] = (step, wait_torchlike)
        peaks["torchlike eager" + tag] = eager_peak_bytes(step, wait_torchlike)
        step, _ = torch_style_step(torchlike, case, init, 0.25, amp=amp)
        compiled = torchlike.compile(step)
        for _ in range(2):   # eager, then the call that compiles the program
            wait_torchlike(compiled())
        runners["torchlike compiled" + tag] = (compiled, wait_torchlike)
        peaks["torchlike compiled" + tag] = compiled_peak_bytes(compiled)
        if torch is not None:
            step, _ = torch_style_step(torch, case, init, 0.25, amp=amp)
            runners["torch eager" + tag] = (step, wait_torch)
            peaks["torch eager" + tag] = None   # PyTorch's CPU allocator keeps no peak
    stats = measure_together(runners, args.budget, args.window)
    return {name: dict(stats[name], peak_bytes=peaks[name]) for name in runners}


def print_amp_rows(results, cases, dtypes):
    print()
    print("autocast against float32: median ms per step, peak MiB (markdown; amp / fp32 ratios)")
    print("| case | implementation | dtype | fp32 ms | amp ms | amp / fp32 time | fp32 MiB | "
          "amp MiB |")
    print("|---|---|---|---|---|---|---|---|")
    for case in cases:
        rows = results[case]["amp"]
        for impl, dtype in ((i, d) for i in AMP_IMPLS for d in dtypes):
            if impl not in rows or impl + " " + dtype not in rows:
                continue
            f, a = rows[impl], rows[impl + " " + dtype]
            mib = [None if r["peak_bytes"] is None else r["peak_bytes"] / 2 ** 20 for r in (f, a)]
            print(f"| {case} | {impl} | {dtype} | {f['median_ms']:.2f} | {a['median_ms']:.2f} | "
                  f"{a['median_ms'] / f['median_ms']:.2f} | "
                  + " | ".join("n/a" if m is None else f"{m:.2f}" for m in mib) + " |")


# --- where a compiled call's time goes ----------------------------------------------------------

def profile_compiled(case, init, budget_s, window, calls=300):
    """Where a torchlike.compile call's time goes: (1) the whole call, its XLA program run in a
    loop of its own and the hand-written JAX step, timed in turns; (2) the phases of the call,
    timed by wrapping torchlike._compile's functions for ``calls`` calls (median microseconds; a
    phase a call skips counts 0)."""
    step, _ = torch_style_step(torchlike, case, init, 0.25)
    compiled = torchlike.compile(step)
    for _ in range(3):
        wait_torchlike(compiled())
    state = walk.find_state(compiled._fn, (), {})

    # A second copy of the step whose program the loop below runs directly: outputs fed back as
    # the next inputs, as the hand-written step does, without torchlike.compile's per-call Python.
    other, _ = torch_style_step(torchlike, case, init, 0.25)
    other = torchlike.compile(other)
    for _ in range(3):
        wait_torchlike(other())
    other_state = walk.find_state(other._fn, (), {})
    program = other._programs[guards.guard_key(other_state)]
    arrays, grads, hypers, gens = programs.input_values(other_state)
    box = {"donated": [arrays[i] for i in program.donated],
           "kept": [arrays[i] for i in program.kept],
           "grads": grads, "gens": gens}
    del arrays
    for t in other_state.tensors:   # the loop owns these buffers now
        t._arr = None

    def program_alone():   # torchlike's program, in torchlike's 64-bit scope as compile runs it
        with _x64.on():
            changed, outs, final_grads, _, gens_out, _, _, _ = program.fn(
                box["donated"], box["kept"], box["grads"], hypers, box["gens"])
        box["donated"], box["grads"] = changed, final_grads
        for i, a in zip(program.plan.gens, gens_out):   # the generators the step drew from
            box["gens"][i] = a
        return outs
    stats = measure_together({"whole compiled call": (compiled, wait_torchlike),
                              "its XLA program alone": (program_alone, wait_jax),
                              "hand-written jax step": (jax_runner(case, init, 0.25), wait_jax)},
                             budget_s, window)
    loops = {name: s["median_ms"] * 1e3 for name, s in stats.items()}

    # The phases: wrap the functions CompiledFunction.__call__ calls, where it looks them up,
    # then restore them.  A call that replays the last one (NOTE [ replaying the last call ])
    # checks instead of finding the state and guard key; its per-call plan (Call, NOTE [ the
    # per-call plan ]) reads the inputs, runs the program and writes the results back.
    spent = {}
    originals = {(walk, "find_state"): walk.find_state,
                 (function, "guard_key"): function.guard_key}

    def timed(name, fn):
        def wrapper(*a, **k):
            t0 = time.perf_counter()
            try:
                out = fn(*a, **k)
                if name == "program":   # its XLA run, which CPU dispatch may not have waited for
                    jax.block_until_ready(out)
                return out
            finally:
                spent[name] = spent.get(name, 0.0) + time.perf_counter() - t0
        return wrapper
    methods = {(programs.Compiled, "__call__"): "program", (programs.Call, "__call__"): "call",
               (guards.Replay, "state_for"): "replay"}
    unwrapped = {where: getattr(*where) for where in methods}
    phases = {k: [] for k in ("whole call", "replay", "find_state", "guard_key", "program",
                              "inputs, write-back", "other")}
    replayed = 0
    try:
        for (module, name), fn in originals.items():
            setattr(module, name, timed(name, fn))
        for (cls, name), phase in methods.items():
            setattr(cls, name, timed(phase, unwrapped[cls, name]))
        for _ in range(calls):
            spent.clear()
            t0 = time.perf_counter()
            wait_torchlike(compiled())
            whole = time.perf_counter() - t0
            replayed += "find_state" not in spent
            for name in ("replay", "find_state", "guard_key"):
                spent.setdefault(name, 0.0)
            phases["whole call"].append(whole)
            for name in ("replay", "find_state", "guard_key", "program"):
                phases[name].append(spent[name])
            phases["inputs, write-back"].append(spent["call"] - spent["program"])
            phases["other"].append(whole - spent["call"] - spent["find_state"]
                                   - spent["guard_key"] - spent["replay"])
    finally:
        for (module, name), fn in originals.items():
            setattr(module, name, fn)
        for (cls, name), fn in unwrapped.items():
            setattr(cls, name, fn)
    phase_us = {k: float(np.median(v)) * 1e6 for k, v in phases.items()}
    counts = {"tensors": len(state.tensors), "params": len(state.params),
              "modules": len(state.modules), "written": len(program.plan.changed),
              "replayed": replayed, "calls": calls}
    return {"loops_us": loops, "phases_us": phase_us, "counts": counts}


def print_profile(case, prof):
    c, loops, ph = prof["counts"], prof["loops_us"], prof["phases_us"]
    print(f"\n{case}: where a compiled call's time goes ({c['tensors']} captured tensors, "
          f"{c['params']} parameters, {c['modules']} modules walked, {c['written']} tensors "
          f"written back)")
    print("  timed in turns (median us):")
    for name, us in loops.items():
        print(f"    {name:<44} {us:9.1f}")
    python = ph["whole call"] - ph["program"]
    print(f"  phases of one call (median us over calls; per-call Python {python:.1f} us = "
          f"{100 * python / ph['whole call']:.0f}%; {c['replayed']} of {c['calls']} calls "
          "replayed the last call's state):")
    labels = {"whole call": "whole call",
              "replay": "  replay check: would a walk find the last state?",
              "find_state": "  find_state: walk fn's closure, globals, modules",
              "guard_key": "  guard_key",
              "program": "  program: donation checks, jit dispatch, XLA run",
              "inputs, write-back": "  inputs, write-back: arrays in; outputs, .grad out",
              "other": "  other (x64 scope, counters, the wait for the result)"}
    for name, us in ph.items():
        print(f"    {labels[name]:<52} {us:9.1f}")


# --- main -----------------------------------------------------------------------------------------

IMPLS = ["torchlike eager", "torchlike lazy", "torchlike compiled", "jax jit",
         "jax jit, torch state", "torch eager", "torch compiled"]


def fmt(v, digits=2):
    return "-" if v is None else f"{v:.{digits}f}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="PATH", help="also write the numbers as JSON here")
    parser.add_argument("--budget", type=float, default=4.0,
                        help="seconds of timed steps per case, all implementations (default 4)")
    parser.add_argument("--window", type=int, default=5,
                        help="steps per timed window (default 5)")
    parser.add_argument("--cases", default="mlp,cnn,transformer",
                        help="comma-separated subset of mlp,cnn,transformer")
    parser.add_argument("--no-torch-compile", dest="torch_compile", action="store_false",
                        help="skip torch.compile (its first call takes tens of seconds)")
    parser.add_argument("--torch-threads", type=int, default=os.cpu_count(),
                        help="torch.set_num_threads (default: the number of cores)")
    parser.add_argument("--index-checks-cost", action="store_true",
                        help="also time the compiled step without its index checks")
    parser.add_argument("--profile", action="store_true",
                        help="profile every compiled step, not only those that miss the goal")
    parser.add_argument("--no-forward", dest="forward", action="store_false",
                        help="skip the forward rows (recording against no_grad)")
    parser.add_argument("--no-amp", dest="amp", action="store_false",
                        help="skip the autocast rows")
    parser.add_argument("--amp-dtypes", default="bfloat16",
                        help="comma-separated autocast dtypes for the autocast rows "
                             "(bfloat16, float16; default bfloat16)")
    parser.add_argument("--device", default="cpu",
                        help="torchlike device for torchlike's and JAX's steps, e.g. cuda "
                             "(default cpu; torch's columns stay on its CPU build)")
    args = parser.parse_args(argv)
    args.amp_dtypes = [d.strip() for d in args.amp_dtypes.split(",") if d.strip()]
    fused.buy_after = 0   # see WARM_STEPS
    global DEVICE
    DEVICE = args.device
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    for c in cases:
        if c not in JAX_MODELS:
            parser.error(f"unknown case {c!r}; choose from {', '.join(JAX_MODELS)}")
    if torch is not None:
        torch.set_num_threads(args.torch_threads)
        torch.manual_seed(0)

    inits = {case: initial_params(case) for case in cases}
    results = {}
    print("agreement (dropout off, same initial parameters, three steps):")
    for case in cases:
        ok, line = check_agreement(case, inits[case])
        results[case] = {"agreement_ok": ok, "agreement": line}
        print("  " + line)

    for case in cases:
        runners, notes = runners_for(case, inits[case], args)
        results[case]["notes"] = notes
        results[case]["stats"] = measure_together(runners, args.budget, args.window)

    print()
    print("median ms per training step (markdown; p10-p90 below)")
    cols = IMPLS + ["compiled / jax", "compiled / jax, torch state", "eager / compiled",
                    "lazy / compiled", "compiled / torch eager"]
    print("| case | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for case in cases:
        stats = results[case]["stats"]
        med = {name: s["median_ms"] for name, s in stats.items()}
        tlc = med["torchlike compiled"]
        ratios = {"compiled_over_jax": tlc / med["jax jit"],
                  "compiled_over_jax_torch_state": tlc / med["jax jit, torch state"],
                  "eager_over_compiled": med["torchlike eager"] / tlc,
                  "lazy_over_compiled": med["torchlike lazy"] / tlc,
                  "compiled_over_torch_eager": (tlc / med["torch eager"]
                                                if "torch eager" in med else None)}
        results[case]["ratios"] = ratios
        cells = [fmt(med.get(name)) if name in med else "n/a" for name in IMPLS]
        cells += [fmt(r) for r in ratios.values()]
        print(f"| {case} | " + " | ".join(cells) + " |")
    for case in cases:
        spread = ", ".join(f"{name} {s['p10_ms']:.2f}-{s['p90_ms']:.2f}"
                           for name, s in results[case]["stats"].items())
        print(f"  {case} p10-p90 ms: {spread}")
        for k, v in results[case]["notes"].items():
            print(f"  {case}: {k}: {v}")
        stats = results[case]["stats"]
        if "compiled, no index checks" in stats:
            on, off = (stats[k]["median_ms"] for k in ("torchlike compiled",
                                                         "compiled, no index checks"))
            results[case]["ratios"]["index_checks"] = on / off
            print(f"  {case}: index checks: compiled {on:.3f} ms, without them {off:.3f} ms: "
                  f"{on / off:.3f}x")

    if args.forward:
        print()
        print("eager forward + loss: with recording against no_grad (median ms)")
        rows = [(case, case, False) for case in cases]
        if "transformer" in cases:
            rows.append(("transformer", "transformer, wide", True))
        for case, label, wide in rows:
            f = forward_rows(case, inits[case], args, wide)
            results[case]["forward_wide" if wide else "forward"] = f
            rec, ng = f["recorded"]["median_ms"], f["no_grad"]["median_ms"]
            f["ratio"] = rec / ng
            print(f"  {label}: recorded {rec:.3f} ms, no_grad {ng:.3f} ms: {rec / ng:.3f}x "
                  f"(target <= 1.05x)")

    if args.amp:
        for case in cases:
            results[case]["amp"] = amp_rows(case, inits[case], args)
        print_amp_rows(results, cases, args.amp_dtypes)

    print()
    for case in cases:
        r = results[case]["ratios"]["compiled_over_jax"]
        verdict = "meets" if r <= GOAL else "misses"
        print(f"goal {case}: compiled torchlike {r:.3f}x hand-written JAX ({verdict} <= {GOAL}x); "
              f"{results[case]['ratios']['compiled_over_jax_torch_state']:.3f}x the hand-written "
              "step that leaves PyTorch's state")
        if r > GOAL or args.profile:
            results[case]["profile"] = profile_compiled(case, inits[case], args.budget,
                                                        args.window)
            print_profile(case, results[case]["profile"])

    env = print_environment(args)
    if not all(results[c]["agreement_ok"] for c in cases):
        print("WARNING: the implementations disagree; see the agreement lines.")
    if args.json:
        Path(args.json).write_text(json.dumps({"env": env, "cases": results}, indent=2) + "\n")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
