"""Mirrors ``torch.backends.cpu``."""

__all__ = ["get_cpu_capability"]


def get_cpu_capability():
    """Mirrors ``torch.backends.cpu.get_cpu_capability``: the widest vector instruction set
    of this x86 CPU ("AVX512", "AVX2", else "DEFAULT") from the kernel's CPU flags, the
    instructions XLA's compiler targets as PyTorch's kernels do."""
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
    except OSError:
        return "DEFAULT"
    flags = set()
    for line in text.splitlines():
        if line.startswith(("flags", "Features")):
            flags.update(line.split(":", 1)[1].split())
            break
    if "avx512f" in flags and "avx512bw" in flags and "avx512vl" in flags:
        return "AVX512"
    if "avx2" in flags:
        return "AVX2"
    return "DEFAULT"
