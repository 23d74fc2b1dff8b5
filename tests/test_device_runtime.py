"""The device runtime namespaces -- torchlike.cuda, accelerator, backends, mps, xpu -- and the
process-wide switches (deterministic algorithms, threads), against real torch.

In this process JAX has no accelerator, so each answer is compared with what a CPU-only torch
answers (values, or exception type and message).  One subprocess presents CPU devices as GPUs
(TORCHLIKE_CPU_AS_CUDA=1 with three forced CPU devices: cpu, cuda:0, cuda:1) and checks the cuda
answers there: devices, the current device, per-device random generators, memory statistics,
streams and events, the legacy types, and the convolution precision on a cuda device.
"""
import json
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl
from torchlike import _precision, _settings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(tl.__file__)))
# the in-process tables are what a machine without an accelerator answers
without_devices = pytest.mark.skipif(
    tl.accelerator.is_available(), reason="this process has an accelerator: the answers "
    "without one are checked where there is none (CI)")


def outcome(fn, ns):
    """``fn(ns)``'s value (devices as strings), or its exception's type name and message."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = fn(ns)
    except Exception as e:   # noqa: BLE001 (the exception is the result compared)
        return ("raises", type(e).__name__, str(e))
    if isinstance(value, (torch.device, tl.device)):
        return ("device", str(value))
    return ("value", value)


def same(fn, message_prefix=False):
    ours, theirs = outcome(fn, tl), outcome(fn, torch)
    if message_prefix and ours[0] == theirs[0] == "raises":
        assert ours[1] == theirs[1] and theirs[2].startswith(ours[2]), (ours, theirs)
        return
    assert ours == theirs


# --- torch.cuda without a GPU --------------------------------------------------------------------

CUDA_WITHOUT_GPU = {
    "is_available": lambda t: t.cuda.is_available(),
    "device_count": lambda t: t.cuda.device_count(),
    "current_device": lambda t: t.cuda.current_device(),
    "set_device(-1)": lambda t: t.cuda.set_device(-1),
    "set_device('cpu')": lambda t: t.cuda.set_device("cpu"),
    "set_device('cuda')": lambda t: t.cuda.set_device("cuda"),
    "device(-1)": lambda t: t.cuda.device(-1).__enter__(),
    "device_of(cpu)": lambda t: t.cuda.device_of(t.ones(1)).__enter__(),
    "get_device_name": lambda t: t.cuda.get_device_name(),
    "get_device_properties": lambda t: t.cuda.get_device_properties(0),
    "get_device_capability": lambda t: t.cuda.get_device_capability(),
    "synchronize": lambda t: t.cuda.synchronize(),
    "init": lambda t: t.cuda.init(),
    "is_initialized": lambda t: t.cuda.is_initialized(),
    "manual_seed": lambda t: t.cuda.manual_seed(1),
    "manual_seed_all": lambda t: t.cuda.manual_seed_all(1),
    "seed": lambda t: t.cuda.seed(),
    "seed_all": lambda t: t.cuda.seed_all(),
    "initial_seed": lambda t: t.cuda.initial_seed(),
    "get_rng_state": lambda t: t.cuda.get_rng_state(),
    "set_rng_state": lambda t: t.cuda.set_rng_state(t.zeros(16, dtype=t.uint8)),
    "get_rng_state_all": lambda t: t.cuda.get_rng_state_all(),
    "set_rng_state_all": lambda t: t.cuda.set_rng_state_all([]),
    "default_generators": lambda t: t.cuda.default_generators,
    "memory_allocated": lambda t: t.cuda.memory_allocated(),
    "max_memory_allocated": lambda t: t.cuda.max_memory_allocated(),
    "memory_reserved": lambda t: t.cuda.memory_reserved(),
    "max_memory_reserved": lambda t: t.cuda.max_memory_reserved(),
    "memory_cached": lambda t: t.cuda.memory_cached(),
    "memory_stats": lambda t: t.cuda.memory_stats(),
    "memory_stats_as_nested_dict": lambda t: t.cuda.memory_stats_as_nested_dict(),
    "memory_summary": lambda t: t.cuda.memory_summary(),
    "mem_get_info": lambda t: t.cuda.mem_get_info(),
    "empty_cache": lambda t: t.cuda.empty_cache(),
    "Stream()": lambda t: t.cuda.Stream(),
    "Event()": lambda t: t.cuda.Event(),
    "current_stream": lambda t: t.cuda.current_stream(),
    "default_stream": lambda t: t.cuda.default_stream(),
    "stream(None)": lambda t: t.cuda.stream(None).__enter__(),
    "set_stream(None)": lambda t: t.cuda.set_stream(None),
    "is_bf16_supported": lambda t: t.cuda.is_bf16_supported(),
    "is_tf32_supported": lambda t: t.cuda.is_tf32_supported(),
    "get_arch_list": lambda t: t.cuda.get_arch_list(),
    "get_gencode_flags": lambda t: t.cuda.get_gencode_flags(),
    "FloatTensor(2)": lambda t: t.cuda.FloatTensor(2),
    "isinstance(FloatTensor)": lambda t: isinstance(t.ones(1), t.cuda.FloatTensor),
    "BFloat16Tensor.dtype": lambda t: str(t.cuda.BFloat16Tensor.dtype).split(".")[-1],
    "LongTensor.is_cuda": lambda t: t.cuda.LongTensor.is_cuda,
}


@without_devices
@pytest.mark.parametrize("name", list(CUDA_WITHOUT_GPU))
def test_cuda_without_a_gpu_answers_as_cpu_only_torch(name):
    same(CUDA_WITHOUT_GPU[name])


@without_devices
def test_cuda_generator_without_a_gpu():
    """PyTorch's message goes on about its two shared libraries; torchlike's is its first
    sentence."""
    same(lambda t: t.Generator(device="cuda"), message_prefix=True)
    same(lambda t: t.Generator(device="xpu"), message_prefix=True)
    same(lambda t: t.Generator(device="meta"))
    same(lambda t: str(t.Generator(device="cpu:0").device))


@without_devices
def test_cuda_deviations_without_a_gpu():
    """A CPU-only torch fails ``set_device(0)`` and the peak resets with an AttributeError about
    its missing C functions; torchlike raises its 'Torch not compiled with CUDA enabled'."""
    for fn in (lambda t: t.cuda.set_device(0), lambda t: t.cuda.reset_peak_memory_stats()):
        assert outcome(fn, torch)[0] == "raises"
        assert outcome(fn, tl) == ("raises", "AssertionError",
                                   "Torch not compiled with CUDA enabled")


# --- torch.accelerator, torch.mps, torch.xpu without one -----------------------------------------

OTHERS_WITHOUT_DEVICES = {
    "accelerator.current_accelerator": lambda t: t.accelerator.current_accelerator(),
    "accelerator.is_available": lambda t: t.accelerator.is_available(),
    "accelerator.device_count": lambda t: t.accelerator.device_count(),
    "accelerator.current_device_index": lambda t: t.accelerator.current_device_index(),
    "accelerator.current_device_idx": lambda t: t.accelerator.current_device_idx(),
    "accelerator.set_device_index(0)": lambda t: t.accelerator.set_device_index(0),
    "accelerator.set_device_index(-1)": lambda t: t.accelerator.set_device_index(-1),
    "accelerator.set_device_idx(0)": lambda t: t.accelerator.set_device_idx(0),
    "accelerator.device_index(0)": lambda t: t.accelerator.device_index(0).__enter__(),
    "accelerator.device_index(None)": lambda t: t.accelerator.device_index(None).__enter__(),
    "accelerator.synchronize": lambda t: t.accelerator.synchronize(),
    "accelerator.current_stream": lambda t: t.accelerator.current_stream(),
    "accelerator.empty_cache": lambda t: t.accelerator.empty_cache(),
    "accelerator.empty_host_cache": lambda t: t.accelerator.empty_host_cache(),
    "accelerator.memory_allocated": lambda t: t.accelerator.memory_allocated(),
    "accelerator.max_memory_allocated": lambda t: t.accelerator.max_memory_allocated(),
    "accelerator.memory_reserved": lambda t: t.accelerator.memory_reserved(),
    "accelerator.max_memory_reserved": lambda t: t.accelerator.max_memory_reserved(),
    "accelerator.memory_stats": lambda t: t.accelerator.memory_stats(),
    "accelerator.reset_peak_memory_stats": lambda t: t.accelerator.reset_peak_memory_stats(),
    "accelerator.get_memory_info": lambda t: t.accelerator.get_memory_info(),
    "mps.is_available": lambda t: t.mps.is_available(),
    "mps.device_count": lambda t: t.mps.device_count(),
    "mps.manual_seed": lambda t: t.mps.manual_seed(1),
    "mps.seed": lambda t: t.mps.seed(),
    "mps.get_rng_state": lambda t: t.mps.get_rng_state(),
    "mps.set_rng_state": lambda t: t.mps.set_rng_state(t.zeros(1, dtype=t.uint8)),
    "mps.synchronize": lambda t: t.mps.synchronize(),
    "mps.empty_cache": lambda t: t.mps.empty_cache(),
    "mps.current_allocated_memory": lambda t: t.mps.current_allocated_memory(),
    "mps.driver_allocated_memory": lambda t: t.mps.driver_allocated_memory(),
    "mps.recommended_max_memory": lambda t: t.mps.recommended_max_memory(),
    "xpu.is_available": lambda t: t.xpu.is_available(),
    "xpu.device_count": lambda t: t.xpu.device_count(),
    "xpu.current_device": lambda t: t.xpu.current_device(),
    "xpu.set_device": lambda t: t.xpu.set_device(0),
    "xpu.manual_seed": lambda t: t.xpu.manual_seed(1),
    "xpu.manual_seed_all": lambda t: t.xpu.manual_seed_all(1),
    "xpu.seed": lambda t: t.xpu.seed(),
    "xpu.initial_seed": lambda t: t.xpu.initial_seed(),
    "xpu.get_rng_state": lambda t: t.xpu.get_rng_state(),
    "xpu.synchronize": lambda t: t.xpu.synchronize(),
    "xpu.empty_cache": lambda t: t.xpu.empty_cache(),
    "xpu.memory_allocated": lambda t: t.xpu.memory_allocated(),
    "xpu.is_bf16_supported": lambda t: t.xpu.is_bf16_supported(),
    "xpu.get_device_name": lambda t: t.xpu.get_device_name(),
    "xpu.is_initialized": lambda t: t.xpu.is_initialized(),
    "backends.mps.is_available": lambda t: t.backends.mps.is_available(),
    "backends.mps.is_built": lambda t: t.backends.mps.is_built(),
    "backends.cuda.is_built": lambda t: t.backends.cuda.is_built(),
    "backends.cudnn.is_available": lambda t: t.backends.cudnn.is_available(),
    "backends.cudnn.version": lambda t: t.backends.cudnn.version(),
    "backends.cudnn.is_acceptable": lambda t: t.backends.cudnn.is_acceptable(t.ones(1)),
    "backends.cudnn.benchmark_limit": lambda t: t.backends.cudnn.benchmark_limit,
    "backends.opt_einsum.is_available": lambda t: t.backends.opt_einsum.is_available(),
    "backends.cuda.is_flash_attention_available":
        lambda t: t.backends.cuda.is_flash_attention_available(),
    "backends.cpu.get_cpu_capability": lambda t: t.backends.cpu.get_cpu_capability(),
}


@without_devices
@pytest.mark.parametrize("name", list(OTHERS_WITHOUT_DEVICES))
def test_other_namespaces_without_devices(name):
    same(OTHERS_WITHOUT_DEVICES[name])


def test_what_differs_from_a_cpu_torch_build_on_purpose():
    """torchlike runs no oneDNN, MKL or OpenMP (XLA compiles its own CPU kernels)."""
    assert torch.backends.mkldnn.is_available() and not tl.backends.mkldnn.is_available()
    assert not tl.backends.mkl.is_available() and not tl.backends.openmp.is_available()
    assert tl.backends.opt_einsum.get_opt_einsum() is torch.backends.opt_einsum.get_opt_einsum()


@without_devices
def test_deprecated_accelerator_names_warn():
    for ns in (torch, tl):
        with pytest.warns(FutureWarning, match="Use `current_device_index` instead."):
            with pytest.raises(RuntimeError):
                ns.accelerator.current_device_idx()


# --- backends: the switches read back as PyTorch's -----------------------------------------------

SWITCHES = {
    "float32_matmul_precision": lambda t: t.get_float32_matmul_precision(),
    "cuda.matmul.allow_tf32": lambda t: t.backends.cuda.matmul.allow_tf32,
    "cuda.matmul.fp32_precision": lambda t: t.backends.cuda.matmul.fp32_precision,
    "mkldnn.matmul.fp32_precision": lambda t: t.backends.mkldnn.matmul.fp32_precision,
    "cudnn.allow_tf32": lambda t: t.backends.cudnn.allow_tf32,
    "cudnn.conv.fp32_precision": lambda t: t.backends.cudnn.conv.fp32_precision,
    "cudnn.fp32_precision": lambda t: t.backends.cudnn.fp32_precision,
    "fp32_precision": lambda t: t.backends.fp32_precision,
    "mkldnn.fp32_precision": lambda t: t.backends.mkldnn.fp32_precision,
    "cudnn.enabled": lambda t: t.backends.cudnn.enabled,
    "cudnn.benchmark": lambda t: t.backends.cudnn.benchmark,
    "cudnn.deterministic": lambda t: t.backends.cudnn.deterministic,
    "cudnn.depthwise_kernel": lambda t: t.backends.cudnn.depthwise_kernel,
    "mkldnn.enabled": lambda t: t.backends.mkldnn.enabled,
    "mkldnn.deterministic": lambda t: t.backends.mkldnn.deterministic,
    "opt_einsum.enabled": lambda t: t.backends.opt_einsum.enabled,
    "opt_einsum.strategy": lambda t: t.backends.opt_einsum.strategy,
    "flash_sdp": lambda t: t.backends.cuda.flash_sdp_enabled(),
    "math_sdp": lambda t: t.backends.cuda.math_sdp_enabled(),
    "mem_efficient_sdp": lambda t: t.backends.cuda.mem_efficient_sdp_enabled(),
    "cudnn_sdp": lambda t: t.backends.cuda.cudnn_sdp_enabled(),
    "fp16_bf16_reduction_math_sdp":
        lambda t: t.backends.cuda.fp16_bf16_reduction_math_sdp_allowed(),
    "allow_fp16_reduced_precision_reduction":
        lambda t: t.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
    "allow_bf16_reduced_precision_reduction_split_k":
        lambda t: t.backends.cuda.matmul.allow_bf16_reduced_precision_reduction_split_k,
    "allow_fp16_accumulation": lambda t: t.backends.cuda.matmul.allow_fp16_accumulation,
    "deterministic_algorithms": lambda t: (t.are_deterministic_algorithms_enabled(),
                                           t.is_deterministic_algorithms_warn_only_enabled(),
                                           t.get_deterministic_debug_mode()),
}


_READERS = {  # the same switches, as source for a process of its own
    "float32_matmul_precision": "lambda t: t.get_float32_matmul_precision()",
    "cuda.matmul.allow_tf32": "lambda t: t.backends.cuda.matmul.allow_tf32",
    "cuda.matmul.fp32_precision": "lambda t: t.backends.cuda.matmul.fp32_precision",
    "mkldnn.matmul.fp32_precision": "lambda t: t.backends.mkldnn.matmul.fp32_precision",
    "cudnn.allow_tf32": "lambda t: t.backends.cudnn.allow_tf32",
    "cudnn.conv.fp32_precision": "lambda t: t.backends.cudnn.conv.fp32_precision",
    "cudnn.fp32_precision": "lambda t: t.backends.cudnn.fp32_precision",
    "fp32_precision": "lambda t: t.backends.fp32_precision",
    "mkldnn.fp32_precision": "lambda t: t.backends.mkldnn.fp32_precision",
}


def _read(ns):
    return {k: outcome(fn, ns) for k, fn in SWITCHES.items()}


def _restore(ns, state):
    """Put a namespace's switches back (the ones the tests here change)."""
    B = ns.backends
    B.fp32_precision = B.cudnn.fp32_precision = "none"
    B.cudnn.conv.fp32_precision = B.mkldnn.conv.fp32_precision = "none"
    B.mkldnn.rnn.fp32_precision = "none"
    ns.set_float32_matmul_precision(state["float32_matmul_precision"][1])
    B.cuda.matmul.fp32_precision = state["cuda.matmul.fp32_precision"][1]
    B.mkldnn.matmul.fp32_precision = state["mkldnn.matmul.fp32_precision"][1]
    B.cudnn.allow_tf32 = state["cudnn.allow_tf32"][1]
    for name in ("enabled", "benchmark", "deterministic"):
        setattr(B.cudnn, name, state[f"cudnn.{name}"][1])
    for name in ("enabled", "deterministic"):
        setattr(B.mkldnn, name, state[f"mkldnn.{name}"][1])
    B.opt_einsum.enabled = True
    B.opt_einsum.strategy = state["opt_einsum.strategy"][1]
    for name in ("flash", "math", "mem_efficient", "cudnn"):
        getattr(B.cuda, f"enable_{name}_sdp")(state[f"{name}_sdp"][1])
    B.cuda.allow_fp16_bf16_reduction_math_sdp(state["fp16_bf16_reduction_math_sdp"][1])
    B.cuda.matmul.allow_fp16_reduced_precision_reduction = True
    B.cuda.matmul.allow_bf16_reduced_precision_reduction = True
    B.cuda.matmul.allow_fp16_accumulation = False
    ns.use_deterministic_algorithms(False)


@pytest.fixture
def switches():
    """Both libraries' switches, restored after the test; yields a function comparing them."""
    before = {"torch": _read(torch), "tl": _read(tl)}
    assert before["torch"] == before["tl"]

    def compare(statement, legacy_read_differs=()):
        """Run ``statement`` in both; compare its outcome and every switch read after it but
        ``legacy_read_differs``: a legacy switch PyTorch reads from its own legacy state after a
        write through the new fp32_precision interface (torchlike reads the one policy)."""
        for ns in (torch, tl):
            r = outcome(lambda t: exec(statement, {"torch": t, "B": t.backends}), ns)
            if ns is torch:
                theirs = r
            else:
                assert r == theirs, statement
        ours, theirs = _read(tl), _read(torch)
        for k in ours:
            # PyTorch raises reading a legacy switch after the two interfaces were mixed
            if theirs[k][0] != "raises" and k not in legacy_read_differs:
                assert ours[k] == theirs[k], (statement, k)
    yield compare
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _restore(torch, before["torch"])
        _restore(tl, before["tl"])
    assert _read(tl) == before["tl"]


SEQUENCES = [
    ["torch.set_float32_matmul_precision('high')", "torch.set_float32_matmul_precision('medium')",
     "torch.set_float32_matmul_precision('highest')", "torch.set_float32_matmul_precision('x')",
     "torch.set_float32_matmul_precision(3)"],
    ["B.cuda.matmul.allow_tf32 = True", "B.cuda.matmul.allow_tf32 = False",
     "B.cuda.matmul.allow_tf32 = 'yes'"],
    ["B.cuda.matmul.fp32_precision = 'ieee'", "B.cuda.matmul.fp32_precision = 'bf16'",
     "B.cuda.matmul.fp32_precision = 'x'", "B.cuda.matmul.foo = 1"],
    ["B.cudnn.allow_tf32 = False", "B.cudnn.allow_tf32 = True",
     "B.cudnn.conv.fp32_precision = 'tf32'"],
    ["B.cudnn.benchmark = True", "B.cudnn.deterministic = True", "B.cudnn.enabled = False",
     "B.mkldnn.enabled = False"],
    ["B.opt_einsum.strategy = 'greedy'", "B.opt_einsum.strategy = 'best'",
     "B.opt_einsum.enabled = False", "B.opt_einsum.strategy = 'optimal'"],
    ["B.cuda.enable_flash_sdp(False)", "B.cuda.enable_math_sdp(False)",
     "B.cuda.enable_mem_efficient_sdp(False)", "B.cuda.enable_cudnn_sdp(False)",
     "B.cuda.allow_fp16_bf16_reduction_math_sdp(True)"],
    ["B.cuda.matmul.allow_fp16_reduced_precision_reduction = (False, False)",
     "B.cuda.matmul.allow_bf16_reduced_precision_reduction = [True]",
     "B.cuda.matmul.allow_fp16_reduced_precision_reduction = ()",
     "B.cuda.matmul.allow_fp16_reduced_precision_reduction = 1",
     "B.cuda.matmul.allow_fp16_accumulation = True"],
    ["torch.use_deterministic_algorithms(True, warn_only=True)",
     "torch.use_deterministic_algorithms(1)", "torch.set_deterministic_debug_mode('error')",
     "torch.set_deterministic_debug_mode('x')", "torch.set_deterministic_debug_mode(5)",
     "torch.set_deterministic_debug_mode(1.0)", "torch.set_deterministic_debug_mode(0)"],
]


@pytest.mark.parametrize("statements", SEQUENCES,
                         ids=lambda s: str(s[0]).split("=")[0].strip(" ('\""))
def test_switches_read_back_as_pytorchs(statements, switches):
    for statement in statements:
        if isinstance(statement, tuple):
            switches(statement[0], statement[1:])
        else:
            switches(statement)


# Sequences through PyTorch 2.9's fp32_precision interface: PyTorch's answers depend on what
# was set before in the process, so its oracle is a fresh process.
FRESH_SEQUENCES = [
    [("B.fp32_precision = 'ieee'", "cudnn.allow_tf32"), ("B.fp32_precision = 'none'",),
     ("B.mkldnn.conv.fp32_precision = 'bf16'",), ("B.fp32_precision = 'tf32'",)],
    [("B.cudnn.conv.fp32_precision = 'ieee'", "cudnn.allow_tf32"),
     ("B.cudnn.fp32_precision = 'tf32'",), ("B.mkldnn.matmul.fp32_precision = 'tf32'",),
     ("B.fp32_precision = 'bf16'", "cudnn.allow_tf32")],
]
_FRESH = textwrap.dedent('''
    import json, sys, warnings
    import torch
    warnings.simplefilter("ignore")
    SWITCHES = {SWITCHES}
    def outcome(fn):
        try:
            return ["value", fn(torch)]
        except Exception as e:
            return ["raises", type(e).__name__, str(e)]
    out = []
    for statement in json.loads(sys.argv[1]):
        r = outcome(lambda t: exec(statement, {{"torch": t, "B": t.backends}}))
        out.append([r, {{k: outcome(eval(f)) for k, f in SWITCHES.items()}}])
    print(json.dumps(out))
''')


@pytest.mark.parametrize("sequence", FRESH_SEQUENCES, ids=lambda s: s[0][0].split("=")[0])
def test_fp32_precision_reads_back_as_a_fresh_pytorchs(sequence, switches):
    readers = {k: v for k, v in _READERS.items() if k != "deterministic_algorithms"}
    script = _FRESH.format(SWITCHES=repr(readers))
    r = subprocess.run([sys.executable, "-c", script, json.dumps([s[0] for s in sequence])],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    for (statement, *differs), (theirs, reads) in zip(sequence, json.loads(r.stdout)):
        ours = outcome(lambda t: exec(statement, {"torch": t, "B": t.backends}), tl)
        assert list(ours) == theirs, statement
        for k, read in reads.items():
            if read[0] != "raises" and k not in differs:
                assert list(outcome(SWITCHES[k], tl)) == read, (statement, k)


def test_allow_tf32_moves_the_precision_of_torchlikes_matmuls(switches):
    """``allow_tf32 = True`` is 'high' (HIGH), False 'highest' (HIGHEST); the conv switch moves
    the precision of cuda convolutions only."""
    import jax
    switches("B.cuda.matmul.allow_tf32 = True")
    assert _precision.matmul() == jax.lax.Precision.HIGH
    switches("B.cuda.matmul.allow_tf32 = False")
    assert _precision.matmul() == jax.lax.Precision.HIGHEST
    switches("torch.set_float32_matmul_precision('medium')")
    assert _precision.matmul() == jax.lax.Precision.DEFAULT
    switches("B.cudnn.allow_tf32 = False")
    assert _precision.conv("cuda") == jax.lax.Precision.HIGHEST
    assert _precision.conv("cpu") == jax.lax.Precision.DEFAULT


def test_flags_contexts_set_and_restore(switches):
    for ns in (torch, tl):
        with ns.backends.cudnn.flags(enabled=True, benchmark=True, deterministic=True,
                                     allow_tf32=False):
            inside = outcome(lambda t: (t.backends.cudnn.benchmark, t.backends.cudnn.allow_tf32,
                                        t.backends.cudnn.deterministic), ns)
        assert inside == ("value", (True, False, True))
        with ns.backends.mkldnn.flags(enabled=False):
            assert ns.backends.mkldnn.enabled is False
    assert _read(tl) == _read(torch)
    # (PyTorch's opt_einsum module shows a direct assignment over what flags() sets: ours only)
    with tl.backends.opt_einsum.flags(enabled=False):
        assert tl.backends.opt_einsum.enabled is False
    assert tl.backends.opt_einsum.enabled is True


def test_disabled_global_flags_refuse_direct_sets():
    from torchlike.backends import _switches
    try:
        tl.backends.disable_global_flags()
        assert tl.backends.flags_frozen()
        with pytest.raises(RuntimeError, match="not allowed to set torchlike.backends.cudnn flags"):
            tl.backends.cudnn.benchmark = True
        with tl.backends.cudnn.flags(enabled=True, benchmark=True):
            assert tl.backends.cudnn.benchmark
        assert not tl.backends.cudnn.benchmark
    finally:
        _switches._frozen[0] = False


def test_sdpa_backend_switches_choose_the_path(switches):
    """As in PyTorch's CPU build: the fused kernel unless disabled; the math path; neither."""
    q = np.random.default_rng(0).standard_normal((1, 2, 3, 4)).astype(np.float32)

    def node(t):
        x = t.tensor(q, requires_grad=True)
        return t.nn.functional.scaled_dot_product_attention(x, x, x).grad_fn.name()
    same(node)
    switches("B.cuda.enable_flash_sdp(False)")
    same(node)
    switches("B.cuda.enable_math_sdp(False)")
    same(node)
    switches("B.cuda.enable_flash_sdp(True)")
    same(node)
    same(lambda t: t.nn.functional.scaled_dot_product_attention(
        *(t.tensor(q),) * 3, dropout_p=0.5))


def test_sdpa_kernel_enables_only_its_backends(switches):
    import torch.nn.attention
    import torchlike.nn.attention

    def inside(backends, flags=False):
        def run(t):
            A = sys.modules[t.__name__ + ".nn.attention"]
            chosen = [getattr(A.SDPBackend, b) for b in backends] if isinstance(
                backends, list) else backends
            with A.sdpa_kernel(chosen) as ctx:
                if flags:
                    B = t.backends.cuda
                    return ctx, B.flash_sdp_enabled(), B.math_sdp_enabled(), B.cudnn_sdp_enabled()
                x = t.ones(1, 2, 3, 4, requires_grad=True)
                return t.nn.functional.scaled_dot_product_attention(x, x, x).grad_fn.name()
        return run
    for backends in (["MATH"], ["FLASH_ATTENTION"], ["MATH", "CUDNN_ATTENTION"], "math"):
        same(inside(backends, flags=True))
        same(inside(backends))
    names = ["ERROR", "MATH", "FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION",
             "OVERRIDEABLE"]
    same(lambda t: [(int(b), str(b), repr(b)) for b in (
        getattr(sys.modules[t.__name__ + ".nn.attention"].SDPBackend, n) for n in names)])


def test_einsum_follows_opt_einsum_switches(switches):
    """The contraction order changes the rounding only; each setting matches torch's value."""
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((5, 40), (40, 3), (3, 50))]

    def run(t):
        return t.einsum("ij,jk,kl->il", *(t.tensor(a) for a in arrays)).numpy()
    for statement in (None, "B.opt_einsum.strategy = 'optimal'", "B.opt_einsum.enabled = False"):
        if statement:
            switches(statement)
        np.testing.assert_allclose(run(tl), run(torch), rtol=1e-5, atol=1e-5)


# --- deterministic algorithms and threads --------------------------------------------------------

@pytest.fixture
def threads():
    before = (torch.get_num_threads(), _settings._state["threads"])
    yield
    torch.set_num_threads(before[0])
    _settings._state["threads"] = before[1]


def test_thread_counts_read_back(threads):
    assert tl.get_num_threads() == len(os.sched_getaffinity(0))
    for n in (1, 3):
        torch.set_num_threads(n)
        tl.set_num_threads(n)
        assert tl.get_num_threads() == torch.get_num_threads() == n
    for bad in (0, -1, 1.5):
        same(lambda t: t.set_num_threads(bad))
        same(lambda t: t.set_num_interop_threads(bad))


def test_interop_threads_are_set_once():
    before = _settings._state["interop"]
    try:
        _settings._state["interop"] = None
        tl.set_num_interop_threads(3)
        assert tl.get_num_interop_threads() == 3
        with pytest.raises(RuntimeError) as ours:
            tl.set_num_interop_threads(4)
        torch_message = outcome(lambda t: (t.set_num_interop_threads(5),
                                           t.set_num_interop_threads(6)), torch)
        assert torch_message == ("raises", "RuntimeError", str(ours.value))
    finally:
        _settings._state["interop"] = before


# --- the cuda answers, with CPU devices presented as GPUs ----------------------------------------

EMULATED = textwrap.dedent('''
    import json, sys, time, warnings
    import jax, numpy as np
    import torchlike as torch
    from torchlike import _precision
    C = torch.cuda
    expected = json.loads(sys.argv[1])

    # devices and the current device
    assert C.is_available() and C.device_count() == 2 and C.current_device() == 0
    assert C.is_initialized()
    cpus = jax.devices("cpu")
    assert C.get_device_name(1) == f"{cpus[2].device_kind} (TORCHLIKE_CPU_AS_CUDA)"
    assert C.get_device_capability() == (0, 0) and C.get_arch_list() == []
    p = C.get_device_properties(0)
    assert p.total_memory > 0 and p.multi_processor_count > 0
    assert C.is_bf16_supported() and not C.is_bf16_supported(including_emulation=False)
    assert torch.randn(3, device="cuda").device == torch.device("cuda", 0)
    C.set_device(1)
    assert C.current_device() == 1 and torch.ones(2, device="cuda").device == torch.device("cuda:1")
    with C.device(0):
        assert C.current_device() == 0 and torch.zeros(1, device="cuda").device.index == 0
        with C.device_of(torch.ones(1, device="cuda:1")):
            assert C.current_device() == 1
    assert C.current_device() == 1
    C.set_device(0)
    A = torch.accelerator
    assert A.current_accelerator() == torch.device("cuda") and A.device_count() == 2
    A.set_device_index(1)
    assert A.current_device_index() == C.current_device() == 1
    with A.device_index(0):
        assert C.current_device() == 0
    A.set_device_index(0)
    try:
        A.set_device_index("cpu")
        raise SystemExit("accelerator took a cpu device")
    except ValueError as e:
        assert str(e) == "cpu doesn't match the current accelerator cuda.", e
    assert torch.backends.cudnn.is_available() is False and torch.backends.cudnn.version() is None

    # per-device generators: the CPU stream is the one the parent draws, untouched by cuda draws
    torch.manual_seed(5)
    assert torch.randn(4).tolist() == expected["cpu_seed5"]
    torch.manual_seed(5)
    a = torch.randn(4, device="cuda")
    assert a.device == torch.device("cuda:0")
    cpu_state = torch.get_rng_state()
    x = torch.ones(1000, device="cuda:1")
    y = torch.nn.functional.dropout(x, 0.5)
    assert bool((torch.get_rng_state() == cpu_state).all()), "dropout on cuda drew from the CPU"
    assert y.device == torch.device("cuda:1")
    assert torch.randn(4).tolist() == expected["cpu_seed5"]
    torch.manual_seed(5)
    assert torch.randn(4, device="cuda").tolist() == a.tolist()
    g0, g1 = C.default_generators
    assert g0.device == torch.device("cuda:0") and g1.device == torch.device("cuda:1")
    assert str(g0._state.device) == "cuda:0", g0._state.device
    C.manual_seed(7)          # the current device only
    assert C.initial_seed() == 7 and g1.initial_seed() == 5
    C.manual_seed_all(9)
    assert g0.initial_seed() == g1.initial_seed() == 9 and torch.initial_seed() == 5
    state = C.get_rng_state(1)
    assert state.device == torch.device("cpu") and state.dtype == torch.uint8
    first = torch.rand(3, device="cuda:1").tolist()
    C.set_rng_state(state, 1)
    assert torch.rand(3, device="cuda:1").tolist() == first
    assert [s.tolist() for s in C.get_rng_state_all()] == [g0.get_state().tolist(),
                                                           g1.get_state().tolist()]
    g = torch.Generator(device="cuda")
    assert g.device == torch.device("cuda:0")
    assert torch.randn(2, device="cuda", generator=g).device == torch.device("cuda:0")
    for draw in (lambda: torch.randn(2, generator=g),
                 lambda: torch.randn(2, device="cuda", generator=torch.Generator())):
        try:
            draw()
            raise SystemExit("a generator drew for another device type")
        except RuntimeError as e:
            assert "device type for generator but found" in str(e), e

    # memory statistics (computed from the live arrays on an emulated device)
    C.synchronize(1)
    before = C.memory_allocated(1)
    big = torch.ones(1000, 1000, device="cuda:1")
    assert C.memory_allocated(1) - before == 4_000_000
    assert C.memory_allocated(0) < 1_000_000
    peak = C.max_memory_allocated(1)
    assert peak >= before + 4_000_000
    del big
    assert C.memory_allocated(1) == before and C.max_memory_allocated(1) == peak
    C.reset_peak_memory_stats(1)
    assert C.max_memory_allocated(1) == before
    assert C.memory_reserved(1) == C.memory_allocated(1)
    free, total = C.mem_get_info(1)
    assert 0 < free <= total
    stats = C.memory_stats(1)
    assert stats["allocated_bytes.all.current"] == before
    assert C.memory_stats_as_nested_dict(1)["allocated_bytes"]["all"]["current"] == before
    assert "Allocated memory" in C.memory_summary(1)
    assert A.memory_allocated(1) == before

    # streams and events
    s = C.Stream()
    assert s.device == torch.device("cuda:0") and s != C.default_stream()
    assert C.current_stream() == C.default_stream()
    with C.stream(s):
        assert C.current_stream() == s
        z = torch.ones(3, device="cuda") * 2
    assert C.current_stream() == C.default_stream()
    s.wait_stream(C.default_stream())
    s.synchronize()
    assert s.query()
    e1, e2 = C.Event(enable_timing=True), C.Event(enable_timing=True)
    e1.record()
    w = torch.randn(300, 300, device="cuda")
    for _ in range(3):
        w = w @ w
    e2.record()
    e2.synchronize()
    assert e2.query() and e1.elapsed_time(e2) >= 0
    try:
        C.Event().elapsed_time(C.Event())
        raise SystemExit("elapsed_time without timing")
    except RuntimeError as e:
        assert "enable_timing=True" in str(e)

    # the legacy types
    f = C.FloatTensor(2, 3)
    assert f.device == torch.device("cuda:0") and f.dtype == torch.float32 and f.shape == (2, 3)
    assert isinstance(f, C.FloatTensor) and not isinstance(f, C.DoubleTensor)
    assert not isinstance(torch.ones(1), C.FloatTensor)
    assert C.LongTensor([1, 2]).tolist() == [1, 2] and C.LongTensor([1]).dtype == torch.int64
    C.set_device(1)
    assert C.BoolTensor(2).device == torch.device("cuda:1")
    C.set_device(0)

    # a cuda convolution's precision follows cuDNN's TF32 switch
    seen = []
    bind = jax.lax.conv_general_dilated_p.bind
    def hooked(*args, **params):
        seen.append(params["precision"])
        return bind(*args, **params)
    jax.lax.conv_general_dilated_p.bind = hooked
    x = torch.randn(1, 2, 5, 5, device="cuda")
    w = torch.randn(3, 2, 3, 3, device="cuda")
    torch.nn.functional.conv2d(x, w)
    torch.backends.cudnn.allow_tf32 = False
    torch.nn.functional.conv2d(x, w)
    P = jax.lax.Precision
    assert [p[0] for p in seen] == [P.HIGH, P.HIGHEST], seen
    print("ok")
''')


def test_cuda_answers_on_cpu_devices_presented_as_gpus():
    tl.manual_seed(5)
    expected = {"cpu_seed5": tl.randn(4).tolist()}
    env = dict(os.environ, TORCHLIKE_CPU_AS_CUDA="1", PYTHONPATH=ROOT,
               XLA_FLAGS="--xla_force_host_platform_device_count=3 "
                         "--xla_backend_optimization_level=0")
    r = subprocess.run([sys.executable, "-c", EMULATED, json.dumps(expected)], env=env,
                       capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr


# --- running out of memory ----------------------------------------------------------------------

def _exhausted(x):
    """An op body that fails as XLA fails an allocation (raised while jax traces it)."""
    import jax
    raise jax.errors.JaxRuntimeError("RESOURCE_EXHAUSTED: Out of memory while trying to "
                                      "allocate 1099511627776 bytes.")


def test_an_allocation_xla_refuses_is_pytorchs_out_of_memory_error():
    """`except torch.cuda.OutOfMemoryError:` (retry with a smaller batch) catches XLA's
    RESOURCE_EXHAUSTED from an eager op and from a compiled step; other XLA errors pass as
    they are."""
    from torchlike._dispatch import Op, call
    assert tl.cuda.OutOfMemoryError is tl.OutOfMemoryError
    assert issubclass(tl.OutOfMemoryError, RuntimeError) and \
        issubclass(torch.OutOfMemoryError, RuntimeError)
    op = Op("exhausted_probe", _exhausted, "ExhaustedProbeBackward0")
    x = tl.ones(3)
    with pytest.raises(tl.cuda.OutOfMemoryError, match="RESOURCE_EXHAUSTED"):
        call(op, x)
    with pytest.raises(tl.OutOfMemoryError, match="RESOURCE_EXHAUSTED"):
        tl.compile(lambda t: call(op, t) + 1)(x)

    def other(x):
        import jax
        raise jax.errors.JaxRuntimeError("INTERNAL: something else")
    with pytest.raises(RuntimeError, match="INTERNAL") as info:
        call(Op("other_probe", other, "OtherProbeBackward0"), x)
    assert not isinstance(info.value, tl.OutOfMemoryError)


_FAULTS = """
import resource, torchlike as tl
tl.manual_seed(0)
model = tl.nn.Sequential(tl.nn.Linear(256, 1024), tl.nn.ReLU(), tl.nn.Linear(1024, 10))
x = tl.randn(64, 256)
def step():
    model.zero_grad()
    loss = model(x).square().mean()
    loss.backward()
    loss.item()
for _ in range(40):   # (XLA's worker threads fill their malloc arenas over the first steps)
    step()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(60):
    step()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _in_a_process(code, cpus=None, **env):
    """The last line ``code`` prints, run in a fresh process with ``env`` added to this one's
    environment (on ``cpus`` CPUs of this one's: its affinity set before torchlike starts)."""
    if cpus is not None:
        code = f"import os; os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:{cpus}])\n" \
            + code
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=dict(os.environ, JAX_PLATFORMS="cpu", **env), cwd=ROOT)
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout.split("\n")[-2]


_DISPATCH = """
import jax, torchlike as tl
y = tl.ones(3) * 2
print(jax.config.values["jax_cpu_enable_async_dispatch"], y.tolist())
"""


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs two CPUs to choose from")
def test_cpu_dispatch_is_asynchronous_where_a_second_cpu_can_run_it():
    """NOTE [ asynchronous CPU dispatch ]: on two CPUs jax's asynchronous dispatch stays on;
    a process restricted to one runs its programs as they are dispatched."""
    assert _in_a_process(_DISPATCH) == "True [2.0, 2.0, 2.0]"
    assert _in_a_process(_DISPATCH, cpus=1) == "False [2.0, 2.0, 2.0]"


def test_cpu_namespace_answers_as_pytorch():
    for fn in (lambda t: t.cpu.is_available(), lambda t: t.cpu.is_initialized(),
               lambda t: t.cpu.device_count(), lambda t: t.cpu.current_device(),
               lambda t: t.cpu.set_device("cpu"), lambda t: t.cpu.synchronize(),
               lambda t: t.cpu.synchronize("cpu"), lambda t: t.cpu.Event().query(),
               lambda t: t.cpu.Stream().record_event(),
               lambda t: t.cpu.stream(t.cpu.Stream()).__enter__(),
               lambda t: sorted(set(t.cpu.__all__) - {"get_capabilities"})):
        same(fn)


def test_cpu_synchronize_and_events_wait_for_the_queued_work():
    """torch.cpu.synchronize() and a recorded torch.cpu.Event wait for what was queued (NOTE
    [ asynchronous CPU dispatch ]), and a stream made current in a block is current there."""
    x = tl.randn(600, 600)
    y = x @ x @ x
    event = tl.cpu.Event()
    event.record()
    event.synchronize()
    assert event.query() and y._arr.is_ready()
    z = y @ x
    tl.cpu.synchronize()
    assert z._arr.is_ready()
    s = tl.cpu.Stream()
    with tl.cpu.stream(s):
        assert tl.cpu.current_stream() is s
    assert tl.cpu.current_stream() is not s


_HEAPS = """
import ctypes, resource, threading
import torchlike
libc = ctypes.CDLL(None)
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
libc.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
faults = []
def steps():   # as an XLA worker thread allocates: from a malloc arena of its own
    held = [libc.malloc(30 << 20) for _ in range(2)]   # most of the arena's first heap
    for block in held:
        libc.memset(block, 1, 30 << 20)
    for _ in range(3):   # each step's block needs a second heap, freed at the step's end
        before = resource.getrusage(resource.RUSAGE_THREAD).ru_minflt
        block = libc.malloc(24 << 20)
        libc.memset(block, 1, 24 << 20)
        libc.free(block)
        faults.append(resource.getrusage(resource.RUSAGE_THREAD).ru_minflt - before)
thread = threading.Thread(target=steps)
thread.start()
thread.join()
print(faults[-1])
"""


@pytest.mark.skipif(__import__("platform").libc_ver()[0] != "glibc", reason="glibc's malloc")
def test_a_threads_emptied_heap_stays_mapped():
    """NOTE [ the host allocator ]: a thread's malloc arena keeps a heap that held nothing again
    (torchlike's top pad), so a step whose arrays need a second heap does not map it anew each
    time: 6,144 faults a step for the 24 MiB block without the top pad, none with it."""
    assert int(_in_a_process(_HEAPS)) < 600


@pytest.mark.skipif(__import__("platform").libc_ver()[0] != "glibc", reason="glibc's malloc")
def test_eager_steps_reuse_host_memory():
    """NOTE [ the host allocator ]: with torchlike's malloc settings, eager steps that
    allocate and free the same arrays each step reuse the memory: few page faults once the
    worker threads' arenas are warm (25-260 over these 60 steps), where arrays landing on fresh
    pages fault hundreds of times a step (glibc's defaults, TORCHLIKE_MALLOC=system: 6,000-
    15,000).  Not compared with a run on glibc's defaults: those adapt now and then (their
    thresholds rise after a large free), and such a run then faults as little."""
    assert int(_in_a_process(_FAULTS)) < 2000
