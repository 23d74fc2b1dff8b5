"""Mirrors ``torch.version``: the release torchlike reproduces (NOTE [ the version torchlike
reports ] in torch_version.py) and the build facts programs probe.  torchlike is not built against
CUDA, ROCm or XPU (XLA brings its own runtimes), so those are None, as in a CPU build of PyTorch."""
from .torch_version import TorchVersion

__all__ = ["__version__", "cuda", "debug", "git_version", "hip", "rocm", "xpu"]

__version__ = TorchVersion("2.13.0+torchlike.0.1.0")
cuda = None
hip = None
rocm = None
xpu = None
debug = False
git_version = "unknown"
