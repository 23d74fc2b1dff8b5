"""Eager-mode latency of torchlike next to hand-written JAX and real PyTorch.

    python scripts/bench_eager.py [--json PATH] [--budget SECONDS] [--window N] [--cases abcdef]

Cases (64x64 float32 unless said otherwise):
  a. one op, no grad:          a * b; and the same with its array taken at once, as a read does
                               (``__jax_array__``: lazily the op's segment runs, or, once the op
                               has begun segments read at once solo_after times, the op itself)
  b. one recorded op:          a * b, where a requires grad (jax: jax.vjp of the mul)
  c. mul + sum + backward:     (a * b).sum().backward()   (jax: eager jax.grad)
  d. tiny MLP SGD step:        32-64-64-4, batch 16, relu, MSE loss; zero grads, backward,
                               p -= lr * p.grad under no_grad for the 6 parameters.
                               jax eager: un-jitted jax.value_and_grad + per-parameter update;
                               jax jit: jax.jit(jax.value_and_grad(loss)) + update in one program.
  e. the op surface, recorded: indexing, reductions, sorting, matmul, joins, random draws, ... on
     inputs that require grad (setitem on a plain tensor), torchlike next to torch, each op's
     time as a multiple of torchlike's recorded mul of the same size.  The goal is <= 2x
     for small inputs: at 8x8 an op's arithmetic is negligible and the ratio measures dispatch;
     at 64x64 (shown for context) sorting and sampling are compute-bound in torch too.
  f. models, forward + backward (zero_grad, loss, backward), torchlike next to torch:
     a small CNN (conv 1-8-16, max-pool, adaptive avg-pool, linear; 32 images 1x16x16,
     cross-entropy) and a 2-layer Transformer encoder (d_model 64, 4 heads, feed-forward 128,
     batch 8 x 32 tokens, batch_first, dropout 0).

Each measurement warms up first, then times windows of --window back-to-back repetitions with
time.perf_counter, waiting for the window's last result (block_until_ready) before stopping the
clock, so jax's asynchronous dispatch cannot hide work; a sample is window time / window.  The
default window of 10 amortises the ~30-40 us it costs to wake a waiting thread on CPU (a cost torch,
being synchronous, never pays); --window 1 waits after every single repetition.  Reports the median
and p10/p90 of the samples in microseconds.  The "lazy" column runs torchlike's cases in lazy mode
(NOTE [ lazy segments ] in torchlike/_lazy.py): a window's ops join one segment, which runs when
the window's last result is read (case b: ten muls recorded, then one program).  Timings are
printed, never asserted.  --cases picks the cases to run (default all: abcdef), e.g. --cases abcd
for the per-op and tiny-MLP table alone.
"""
import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import torchlike  # noqa: E402
from torchlike import _lazy  # noqa: E402
from torchlike.autograd import fused  # noqa: E402

try:
    import torch
except ImportError:  # the torch columns are left empty
    torch = None

N = 64
MLP_SIZES = (32, 64, 64, 4)
BATCH = 16
LR = 0.01


def measure(fn, wait, budget_s, window, min_samples=30, max_reps=20000):
    """Time ``fn`` in windows of ``window`` back-to-back calls, waiting for the last result at
    the end of each window; one sample = window time / window, in µs."""
    warm_end = time.perf_counter() + 0.15 * budget_s
    for i in range(max_reps // window):  # warm-up: jit caches, allocator; in windows as timed,
        for _ in range(window):          # so lazy mode's segments are the timed ones
            out = fn()
        wait(out)
        # 40 windows: past fused.fuse_after and lazy's fuse_after for each segment of a window
        if i >= 40 and time.perf_counter() > warm_end:
            break
    samples = []
    deadline = time.perf_counter() + budget_s
    while len(samples) < min_samples or (time.perf_counter() < deadline
                                         and len(samples) * window < max_reps):
        t0 = time.perf_counter()
        for _ in range(window):
            out = fn()
        wait(out)
        samples.append((time.perf_counter() - t0) / window)
    us = np.asarray(samples) * 1e6
    return {"median_us": float(np.median(us)), "p10_us": float(np.percentile(us, 10)),
            "p90_us": float(np.percentile(us, 90)), "reps": len(us) * window}


def print_environment(args):
    """Print (and return) the versions and settings a run was measured with."""
    env = {"python": platform.python_version(), "jax": jax.__version__,
           "jax_backend": jax.default_backend(), "torchlike": torchlike.__version__,
           "torch": None if torch is None else torch.__version__,
           "torch_threads": None if torch is None else torch.get_num_threads(),
           "cpu_count": os.cpu_count(), "machine": platform.machine(),
           "budget_s": args.budget, "window": args.window}
    print()
    print("env:", ", ".join(f"{k}={v}" for k, v in env.items()))
    return env


def wait_jax(out):
    jax.block_until_ready(out)


def wait_torchlike(out):
    """Wait for the jax arrays behind a torchlike tensor or a list of them."""
    tensors = out if isinstance(out, (list, tuple)) else [out]
    jax.block_until_ready([t.__jax_array__() for t in tensors])


def wait_torch(out):
    """Real torch on CPU is synchronous: nothing to wait for."""


# --- the same inputs for everyone ------------------------------------------------------------

def make_data():
    rng = np.random.default_rng(0)
    data = {"a": rng.standard_normal((N, N), dtype=np.float32),
            "b": rng.standard_normal((N, N), dtype=np.float32),
            "x": rng.standard_normal((BATCH, MLP_SIZES[0]), dtype=np.float32),
            "y": rng.standard_normal((BATCH, MLP_SIZES[-1]), dtype=np.float32)}
    params = []
    for fan_in, fan_out in zip(MLP_SIZES[:-1], MLP_SIZES[1:]):
        bound = 1.0 / np.sqrt(fan_in)
        params.append(rng.uniform(-bound, bound, (fan_in, fan_out)).astype(np.float32))
        params.append(rng.uniform(-bound, bound, (fan_out,)).astype(np.float32))
    data["params"] = params
    return data


# --- torch-style code, shared by torchlike and real torch --------------------------------------

def torch_style_cases(lib, data):
    """The four cases for ``lib`` (torchlike or torch); each returns what to wait for."""
    a = lib.tensor(data["a"])
    b = lib.tensor(data["b"])
    a_rg = lib.tensor(data["a"], requires_grad=True)
    x = lib.tensor(data["x"])
    y = lib.tensor(data["y"])
    params = [lib.tensor(p, requires_grad=True) for p in data["params"]]

    def op_no_grad():
        return a * b

    def op_read_at_once():
        out = a * b
        take = getattr(out, "__jax_array__", None)   # (torch: nothing is pending)
        if take is not None:
            take()
        return out

    def op_recorded():
        return a_rg * b

    def mul_sum_backward():
        a_rg.grad = None
        (a_rg * b).sum().backward()
        return a_rg.grad

    def mlp_step():
        w1, b1, w2, b2, w3, b3 = params
        h = lib.relu(x @ w1 + b1)
        h = lib.relu(h @ w2 + b2)
        loss = ((h @ w3 + b3 - y) ** 2).mean()
        for p in params:
            p.grad = None
        loss.backward()
        with lib.no_grad():
            for p in params:
                p -= LR * p.grad
        return [loss, *params]

    return {"a": op_no_grad, "a_read": op_read_at_once, "b": op_recorded, "c": mul_sum_backward,
            "d": mlp_step}, params


# --- e. the op surface (the same code for torchlike and torch) -------------------------------

SURFACE = [
    ("x[3]", lambda T, d: d["x"][3]),
    ("x[:, ::2]", lambda T, d: d["x"][:, ::2]),
    ("x[idx]", lambda T, d: d["x"][d["idx"]]),
    ("x[mask]", lambda T, d: d["x"][d["mask"]]),
    ("x[idx] = 0 (no grad)", lambda T, d: d["plain"].__setitem__(d["idx"], 0.0) or d["plain"]),
    ("gather", lambda T, d: T.gather(d["x"], 1, d["idx2"])),
    ("index_select", lambda T, d: T.index_select(d["x"], 0, d["idx"])),
    ("masked_fill", lambda T, d: d["x"].masked_fill(d["mask"], 0.0)),
    ("sum", lambda T, d: d["x"].sum()),
    ("sum(dim)", lambda T, d: d["x"].sum(1)),
    ("mean(dim)", lambda T, d: d["x"].mean(0)),
    ("max(dim)", lambda T, d: d["x"].max(1)),
    ("std(dim)", lambda T, d: d["x"].std(1)),
    ("logsumexp", lambda T, d: T.logsumexp(d["x"], 1)),
    ("cumsum", lambda T, d: d["x"].cumsum(1)),
    ("argmax", lambda T, d: d["x"].argmax(1)),
    ("sort", lambda T, d: d["x"].sort(1)),
    ("topk", lambda T, d: d["x"].topk(5)),
    ("matmul", lambda T, d: d["x"] @ d["y"]),
    ("bmm", lambda T, d: T.bmm(d["x3"], d["x3"])),
    ("einsum", lambda T, d: T.einsum("ij,jk->ik", d["x"], d["y"])),
    ("linalg.vector_norm", lambda T, d: T.linalg.vector_norm(d["x"], dim=1)),
    ("cat", lambda T, d: T.cat([d["x"], d["y"]])),
    ("stack", lambda T, d: T.stack([d["x"], d["y"]])),
    ("transpose+contiguous", lambda T, d: d["x"].t().contiguous()),
    ("reshape", lambda T, d: d["x"].reshape(d["n"] // 4, 4 * d["n"])),
    ("where", lambda T, d: T.where(d["mask"], d["x"], d["y"])),
    ("clamp", lambda T, d: d["x"].clamp(-1, 1)),
    ("softmax", lambda T, d: T.special.softmax(d["x"], 1)),
    ("rand", lambda T, d: T.rand(d["n"], d["n"])),
    ("randn", lambda T, d: T.randn(d["n"], d["n"])),
    ("randint", lambda T, d: T.randint(0, 10, (d["n"], d["n"]))),
    ("uniform_ (no grad)", lambda T, d: d["plain"].uniform_()),
    ("bernoulli", lambda T, d: T.bernoulli(d["p"])),
    ("dropout (train)", lambda T, d: T.nn.functional.dropout(d["x"], 0.5)),
]
SURFACE_SIZES = (8, N)   # the bound is judged at 8x8; 64x64 for context


def surface_cases(lib, n):
    """SURFACE for ``lib`` on n x n inputs (the same values for torchlike and torch)."""
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
    d = {"n": n, "x": lib.tensor(a, requires_grad=True), "y": lib.tensor(b),
         "plain": lib.tensor(a), "p": lib.tensor(np.full((n, n), 0.5, np.float32)),
         "x3": lib.tensor(a.reshape(4, n // 2, n // 2), requires_grad=True),
         "idx": lib.tensor(rng.integers(0, n, 16)),
         "idx2": lib.tensor(rng.integers(0, n, (n, 4))),
         "mask": lib.tensor(a > 0),
         "mul": lambda: d["x"] * d["y"]}
    return d, {name: (lambda fn=fn: fn(lib, d)) for name, fn in SURFACE}


def model_cases(lib):
    """Case f: forward + backward of a small CNN and a 2-layer Transformer encoder in ``lib``."""
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)
    rng = np.random.default_rng(2)
    cnn = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                        nn.Flatten(), nn.Linear(16, 10))
    images = lib.tensor(rng.standard_normal((32, 1, 16, 16)).astype(np.float32))
    labels = lib.tensor(rng.integers(0, 10, 32))
    layer = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True)
    encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    tokens = lib.tensor(rng.standard_normal((8, 32, 64)).astype(np.float32))

    def cnn_step():
        cnn.zero_grad()
        loss = F.cross_entropy(cnn(images), labels)
        loss.backward()
        return loss

    def encoder_step():
        encoder.zero_grad()
        loss = encoder(tokens).square().mean()
        loss.backward()
        return loss

    return {"small CNN fwd+bwd": cnn_step, "transformer encoder fwd+bwd": encoder_step}


def measure_models(args):
    """Case f: torchlike next to torch on whole models (forward + backward)."""
    libs = {"torchlike": (model_cases(torchlike), wait_torchlike)}
    if torch is not None:
        libs["torch"] = (model_cases(torch), wait_torch)
    print()
    print("f. models, forward + backward")
    header = f"{'model':<30} {'torchlike us':>13} {'torch us':>10} {'torchlike/torch':>16}"
    print(header)
    print("-" * len(header))
    rows = []
    for name in libs["torchlike"][0]:
        t = {lib: measure(cases[name], wait, args.budget, args.window)["median_us"]
             for lib, (cases, wait) in libs.items()}
        tl, th = t["torchlike"], t.get("torch")
        rows.append({"model": name, "torchlike_us": tl, "torch_us": th})
        print(f"{name:<30} {fmt(tl):>13} {fmt(th):>10} {fmt(tl / th if th else None, 2):>16}")
    return rows


# --- hand-written JAX --------------------------------------------------------------------------

def mlp_loss(params, x, y):
    w1, b1, w2, b2, w3, b3 = params
    h = jax.nn.relu(x @ w1 + b1)
    h = jax.nn.relu(h @ w2 + b2)
    return jnp.mean((h @ w3 + b3 - y) ** 2)


def sgd(params, grads):
    return [p - LR * g for p, g in zip(params, grads)]


def jax_cases(data):
    a, b = jnp.asarray(data["a"]), jnp.asarray(data["b"])
    x, y = jnp.asarray(data["x"]), jnp.asarray(data["y"])
    state = {"eager": [jnp.asarray(p) for p in data["params"]],
             "jit": [jnp.asarray(p) for p in data["params"]]}
    mul = lambda a, b: a * b  # noqa: E731
    mul_sum_grad = jax.grad(lambda a, b: jnp.sum(a * b))
    jit_mul, jit_mul_sum_grad = jax.jit(mul), jax.jit(mul_sum_grad)
    value_and_grad = jax.value_and_grad(mlp_loss)

    @jax.jit
    def jit_step(params, x, y):
        loss, grads = jax.value_and_grad(mlp_loss)(params, x, y)
        return loss, sgd(params, grads)

    def mlp_eager():
        loss, grads = value_and_grad(state["eager"], x, y)
        state["eager"] = sgd(state["eager"], grads)
        return [loss, *state["eager"]]

    def mlp_jit():
        loss, state["jit"] = jit_step(state["jit"], x, y)
        return [loss, *state["jit"]]

    return {
        "a": lambda: a * b,
        "a_jit": lambda: jit_mul(a, b),
        "b": lambda: jax.vjp(mul, a, b),
        "c": lambda: mul_sum_grad(a, b),
        "c_jit": lambda: jit_mul_sum_grad(a, b),
        "d": mlp_eager,
        "d_jit": mlp_jit,
    }, state


def check_agreement(data):
    """One MLP step in each library from the same start: the losses and updates must agree."""
    tl_cases, tl_params = torch_style_cases(torchlike, data)
    jx_cases, jx_state = jax_cases(data)
    tl_loss = tl_cases["d"]()[0].item()
    jx_loss = float(jx_cases["d_jit"]()[0])
    report = [f"loss torchlike {tl_loss:.6f}  jax {jx_loss:.6f}"]
    ok = abs(tl_loss - jx_loss) <= 1e-5 * max(1.0, abs(jx_loss))
    for i, (p, q) in enumerate(zip(tl_params, jx_state["jit"])):
        err = float(np.max(np.abs(p.detach().numpy() - np.asarray(q))))
        ok &= err <= 1e-5
        if err > 1e-5:
            report.append(f"param {i} differs from jax by {err:.2e}")
    if torch is not None:
        t_cases, _ = torch_style_cases(torch, data)
        t_loss = t_cases["d"]()[0].item()
        report.append(f"torch {t_loss:.6f}")
        ok &= abs(tl_loss - t_loss) <= 1e-5 * max(1.0, abs(t_loss))
    return ok, "; ".join(report)


def fmt(v, digits=1):
    return "-" if v is None else f"{v:.{digits}f}"


def measure_surface(args):
    """Case e: each op of SURFACE in torchlike and torch at each of SURFACE_SIZES, and
    torchlike's time over its own recorded mul of the same size."""
    libs = {"torchlike": wait_torchlike}
    if torch is not None:
        libs["torch"] = wait_torch
    cases = {(lib, n): surface_cases(module, n) for lib, module in
             (("torchlike", torchlike), ("torch", torch)) if lib in libs for n in SURFACE_SIZES}
    base = {n: measure(cases["torchlike", n][0]["mul"], wait_torchlike, args.budget,
                       args.window)["median_us"] for n in SURFACE_SIZES}
    print()
    print("e. op surface, inputs requiring grad; torchlike's recorded mul: " + ", ".join(
        f"{n}x{n} {base[n]:.1f} us" for n in SURFACE_SIZES))
    header = f"{'op':<22}" + "".join(
        f" {f'tl {n}x{n}':>9} {f'torch':>7} {'/mul':>6} {'/torch':>7}" for n in SURFACE_SIZES)
    print(header)
    print("-" * len(header))
    rows = []
    for name, _ in SURFACE:
        row, line = {"op": name}, f"{name:<22}"
        for n in SURFACE_SIZES:
            t = {lib: measure(cases[lib, n][1][name], wait, args.budget / 2,
                              args.window)["median_us"] for lib, wait in libs.items()}
            tl, th = t["torchlike"], t.get("torch")
            ratio = tl / base[n]
            row[f"{n}x{n}"] = {"torchlike_us": tl, "torch_us": th, "over_recorded_mul": ratio}
            line += (f" {fmt(tl):>9} {fmt(th):>7} {fmt(ratio, 2):>6} "
                     f"{fmt(tl / th if th else None, 2):>7}")
        small = row[f"{SURFACE_SIZES[0]}x{SURFACE_SIZES[0]}"]["over_recorded_mul"]
        print(line + ("  > 2x at small size" if small > 2 else ""))
        rows.append(row)
    return {"recorded_mul_us": {f"{n}x{n}": base[n] for n in SURFACE_SIZES}, "ops": rows}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="PATH", help="also write the numbers as JSON here")
    parser.add_argument("--budget", type=float, default=1.2,
                        help="seconds of timed repetitions per measurement (default 1.2)")
    parser.add_argument("--window", type=int, default=10,
                        help="repetitions per timed window; 1 waits after each (default 10)")
    parser.add_argument("--cases", default="abcdef",
                        help="which cases to run, by letter (default abcdef)")
    args = parser.parse_args(argv)

    data = make_data()
    ok, detail = check_agreement(data)
    print(("agreement check: OK  " if ok else "agreement check: MISMATCH  ") + detail)

    impls = {"torchlike": (torch_style_cases(torchlike, data)[0], wait_torchlike),
             "lazy": (torch_style_cases(torchlike, data)[0], wait_torchlike),
             "jax": (jax_cases(data)[0], wait_jax)}
    if torch is not None:
        impls["torch"] = (torch_style_cases(torch, data)[0], wait_torch)

    # (row label, case key per implementation)
    rows = [("a. mul 64x64, no grad", {"torchlike": "a", "lazy": "a", "jax": "a", "torch": "a"}),
            ("a. mul 64x64 (jax jit)", {"torchlike": "a", "lazy": "a", "jax": "a_jit",
                                        "torch": "a"}),
            ("a. mul 64x64, read at once", {"torchlike": "a_read", "lazy": "a_read", "jax": "a",
                                            "torch": "a"}),
            ("b. mul 64x64, recorded", {"torchlike": "b", "lazy": "b", "jax": "b", "torch": "b"}),
            ("c. mul+sum+backward", {"torchlike": "c", "lazy": "c", "jax": "c", "torch": "c"}),
            ("c. mul+sum+backward (jax jit)", {"torchlike": "c", "lazy": "c", "jax": "c_jit",
                                               "torch": "c"}),
            ("d. MLP SGD step (jax eager)", {"torchlike": "d", "lazy": "d", "jax": "d",
                                             "torch": "d"}),
            ("d. MLP SGD step (jax jit)", {"torchlike": "d", "lazy": "d", "jax": "d_jit",
                                           "torch": "d"})]
    rows = [row for row in rows if row[0][0] in args.cases]

    # the steady state: a repeated segment (lazy) and a repeated graph's backward (fused)
    # compiled at their fuse_after-th flush or sighting, as a long loop's are once running them
    # op by op or node by node has cost (or would save) what a compile costs
    _lazy.buy_after = fused.buy_after = 0
    results = {}  # (impl, case key) -> stats; a shared key is measured once
    for _, keys in rows:
        for impl, key in keys.items():
            if impl in impls and (impl, key) not in results:
                cases, wait = impls[impl]
                if impl == "lazy":   # each case from no segments seen, as its own program starts
                    _lazy._drop_trie()
                _lazy.enable(impl == "lazy")   # a window's ops join one segment, read at its end
                try:
                    results[impl, key] = measure(cases[key], wait, args.budget, args.window)
                finally:
                    _lazy.enable(False)

    def median(impl, keys):
        stats = results.get((impl, keys[impl]))
        return None if stats is None else stats["median_us"]

    header = (f"{'case':<30} {'torchlike us':>13} {'lazy us':>8} {'jax us':>10} "
              f"{'torch us':>10} {'torchlike/jax':>14} {'torchlike/torch':>16} "
              f"{'lazy/torch':>11}")
    print()
    print(header)
    print("-" * len(header))
    table = []
    for label, keys in rows:
        tl, jx, th = median("torchlike", keys), median("jax", keys), median("torch", keys)
        lz = median("lazy", keys)
        r_jax = tl / jx if jx else None
        r_torch = tl / th if th else None
        r_lazy = lz / th if th else None
        table.append({"case": label, "torchlike_us": tl, "lazy_us": lz, "jax_us": jx,
                      "torch_us": th, "torchlike_over_jax": r_jax, "torchlike_over_torch": r_torch,
                      "lazy_over_torch": r_lazy})
        print(f"{label:<30} {fmt(tl):>13} {fmt(lz):>8} {fmt(jx):>10} {fmt(th):>10} "
              f"{fmt(r_jax, 2):>14} {fmt(r_torch, 2):>16} {fmt(r_lazy, 2):>11}")

    surface = measure_surface(args) if "e" in args.cases else None
    models = measure_models(args) if "f" in args.cases else None

    print()
    print(f"{'implementation / case':<24} {'median us':>10} {'p10 us':>10} {'p90 us':>10} "
          f"{'reps':>7}")
    for (impl, key), s in results.items():
        print(f"{impl + ' / ' + key:<24} {s['median_us']:>10.1f} {s['p10_us']:>10.1f} "
              f"{s['p90_us']:>10.1f} {s['reps']:>7}")
    env = print_environment(args)
    if not ok:
        print("WARNING: torchlike's MLP step disagrees with jax/torch; see the agreement check.")

    if args.json:
        out = {"env": env, "agreement_ok": ok, "agreement": detail, "table": table,
               "surface": surface, "models": models,
               "measurements": {f"{impl}/{key}": s for (impl, key), s in results.items()}}
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
