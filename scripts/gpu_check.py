"""The accelerator checks and benchmarks, for a machine with a GPU (or TPU); CI has none.

    python scripts/gpu_check.py [--quick]

1. Semantics on the real device (each line prints ok or the failure): importing torchlike
   starts no backend (so claims no GPU memory); moves put data on the GPU and gradients come
   back; mixing a GPU and a CPU tensor raises PyTorch's error; every optimizer keeps its state on
   the GPU; an eager and a compiled training step read no GPU value on the host
   (jax.transfer_guard_device_to_host("disallow") around steady-state steps), and a bad target
   is reported at the next read; memory queries answer; autocast in float16 and bfloat16 casts
   as CUDA's lists say (linear in the lower precision, softmax and the loss in float32, float32
   gradients), and a compiled step with autocast and a GradScaler reads nothing on the host.
2. The device test session (tests/devices) where the machine has three GPUs or more.
3. scripts/bench_train.py --device cuda (or xla) with float16 and bfloat16 autocast rows, and
   scripts/bench_eager.py, unless --quick.
Exit status 1 if any check failed.
"""
import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

FAILED = []


def check(name, fn):
    t0 = time.perf_counter()
    try:
        fn()
    except Exception as e:   # report and go on: one run should show every problem
        FAILED.append(name)
        print(f"FAIL  {name}: {type(e).__name__}: {e}", flush=True)
    else:
        print(f"ok    {name} ({time.perf_counter() - t0:.1f} s)", flush=True)


def import_starts_no_backend():
    code = ("import torchlike, torchlike.nn, torchlike.optim, torchlike.utils.data\n"
            "from jax._src import xla_bridge\n"
            "assert not xla_bridge._backends, list(xla_bridge._backends)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-1000:]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the benchmarks")
    args = parser.parse_args(argv)
    check("importing torchlike starts no jax backend", import_starts_no_backend)

    import jax
    import numpy as np
    import torchlike as tl
    from torchlike import nn
    from torchlike._device import accelerator_type, devices_of, to_jax_device
    F = nn.functional

    kind = accelerator_type()
    print(f"jax {jax.__version__}, devices {jax.devices()}, torchlike accelerator: {kind}")
    if kind is None:
        print("no accelerator: nothing to check here (CI runs tests/devices on CPU devices)")
        return 1
    gpu = f"{kind}:0"
    cpu = to_jax_device("cpu")

    def on_gpu(t):
        return next(iter(t._value().devices())) != cpu

    def moves():
        x = tl.arange(6.0, requires_grad=True)
        y = x.to(gpu)
        assert on_gpu(y) and y.device == tl.device(gpu)
        (y * y).sum().backward()
        assert not on_gpu(x.grad)
        np.testing.assert_array_equal(x.grad.numpy(), 2 * np.arange(6.0))
    check("moves are real, gradients come back", moves)

    def mixing():
        try:
            tl.ones(2, device=gpu) + tl.ones(2)
        except RuntimeError as e:
            assert "Expected all tensors to be on the same device" in str(e)
        else:
            raise AssertionError("no error")
        assert (tl.ones(2, device=gpu) * tl.tensor(2.0)).device == tl.device(gpu)
    check("mixing devices: PyTorch's error; a 0-dim CPU tensor joins", mixing)

    def model_and_step(compiled):
        tl.manual_seed(0)
        model = nn.Sequential(nn.Embedding(100, 64), nn.Flatten(), nn.Linear(64 * 8, 128),
                              nn.ReLU(), nn.Dropout(0.1), nn.Linear(128, 10)).to(gpu)
        opt = tl.optim.AdamW(model.parameters(), lr=1e-3)

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x.to(gpu)), y.to(gpu))
            loss.backward()
            opt.step()
            return loss
        return model, opt, tl.compile(step) if compiled else step

    def no_host_reads(compiled):
        def run():
            model, opt, step = model_and_step(compiled)
            x, y = tl.randint(0, 100, (32, 8)), tl.randint(0, 10, (32,))
            for _ in range(3):
                step(x, y)
            with jax.transfer_guard_device_to_host("disallow"):
                for _ in range(5):
                    loss = step(x, y)
            assert np.isfinite(loss.item())
            assert all(on_gpu(v) for s in opt.state.values() for v in s.values())
            step(x, tl.full((32,), 10))   # a bad target: reported at the next read
            try:
                tl.ones(1).item()
            except IndexError as e:
                assert "out of bounds" in str(e)
            else:
                raise AssertionError("the failed check was not reported")
        return run
    check("eager step: no device-to-host reads", no_host_reads(False))
    check("compiled step: no device-to-host reads", no_host_reads(True))

    def optimizers():
        for name in ("SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "NAdam", "RAdam", "Adamax",
                     "ASGD", "Rprop", "Adadelta"):
            p = nn.Parameter(tl.randn(4, device=gpu))
            opt = getattr(tl.optim, name)([p], lr=0.01)
            p.sum().backward()
            opt.step()
            assert all(on_gpu(v) for v in opt.state[p].values() if isinstance(v, tl.Tensor)), \
                name
    check("every optimizer's state on the GPU", optimizers)

    amp_device = "cuda" if kind == "cuda" else "xla"   # autocast's device types

    def autocast_dtypes():
        for dt in (tl.float16, tl.bfloat16):
            lin = nn.Linear(8, 4).to(gpu)
            x = tl.randn(3, 8, device=gpu)
            with tl.autocast(amp_device, dtype=dt):
                y = lin(x)
                p = y.softmax(1)
                loss = F.cross_entropy(y, tl.tensor([0, 1, 2], device=gpu))
            assert y.dtype is dt and p.dtype is tl.float32 and loss.dtype is tl.float32, dt
            loss.backward()
            assert lin.weight.grad.dtype is tl.float32 and on_gpu(lin.weight.grad), dt
    check("autocast float16 / bfloat16: CUDA's cast lists", autocast_dtypes)

    def amp_compiled_step():
        model, opt, _ = model_and_step(True)
        scaler = tl.amp.GradScaler(amp_device, init_scale=2.0 ** 8, growth_interval=2)

        def step(x, y):
            opt.zero_grad()
            with tl.autocast(amp_device, dtype=tl.float16):
                loss = F.cross_entropy(model(x.to(gpu)), y.to(gpu))
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            return loss
        step = tl.compile(step)
        x, y = tl.randint(0, 100, (32, 8)), tl.randint(0, 10, (32,))
        for _ in range(3):
            step(x, y)
        with jax.transfer_guard_device_to_host("disallow"):
            for _ in range(4):
                step(x, y)
        assert scaler.get_scale() == 2.0 ** 11 and tl.compiler.counters["compiles"] >= 1
        assert on_gpu(scaler._scale)
    check("compiled step with autocast + GradScaler: no host reads, the scale grows",
          amp_compiled_step)

    if hasattr(tl, "cuda") and kind == "cuda":
        def memory():
            before = tl.cuda.memory_allocated()
            x = tl.empty(1 << 20, device=gpu)
            assert tl.cuda.memory_allocated() >= before, "memory_allocated"
            free, total = tl.cuda.mem_get_info()
            assert 0 < free <= total
            del x
            tl.cuda.synchronize()
        check("torchlike.cuda memory queries", memory)

    if len(devices_of("cuda")) >= 3:
        def session():
            proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "tests/devices"],
                                  cwd=ROOT, timeout=900)
            assert proc.returncode == 0
        check("tests/devices on the GPUs", session)
    else:
        print("skip  tests/devices: it needs three GPUs (CI runs it on CPU devices)")

    if not args.quick:
        for cmd in ([sys.executable, os.path.join(HERE, "bench_train.py"), "--device", gpu,
                     "--no-torch-compile", "--budget", "3", "--amp-dtypes", "float16,bfloat16"],
                    [sys.executable, os.path.join(HERE, "bench_eager.py")]):
            print("$", " ".join(cmd[1:]), flush=True)
            subprocess.run(cmd, cwd=ROOT, timeout=900)
    print("FAILED: " + ", ".join(FAILED) if FAILED else "all checks passed")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
