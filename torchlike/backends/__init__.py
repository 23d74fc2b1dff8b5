"""torchlike.backends: mirrors ``torch.backends`` -- the switches PyTorch programs set for their
backends (cuDNN, cuBLAS, oneDNN, opt_einsum, ...), answered for what XLA runs.

Each switch reads back what was set.  Those XLA has an equivalent for act on it: the TF32 and
``fp32_precision`` switches set the precision of torchlike's float32 matmuls and convolutions
(NOTE [ matmul precision ] in _precision.py), opt_einsum's choose einsum's contraction order,
the scaled-dot-product-attention backend switches choose between the fused and the math path
(NOTE [ sdpa backends ] in _ops/attention.py), and the deterministic switches warn where XLA
needs a start-up flag (NOTE [ deterministic algorithms ] in _settings.py).  The others (cuDNN's
``enabled`` and ``benchmark``: XLA always uses cuDNN and autotunes) are kept and read back.
"""
import contextlib
import sys

from .. import _precision
from ._switches import (disable_global_flags as disable_global_flags,
                        flags_frozen as flags_frozen, module_with_switches, switch, unfrozen)


@contextlib.contextmanager
def flags(fp32_precision="none"):
    """Mirrors ``torch.backends.flags``: the generic ``fp32_precision`` set in the block."""
    before = _precision.fp32_precision("generic", "all")
    with unfrozen():
        _precision.set_fp32_precision("generic", "all", fp32_precision)
    try:
        yield
    finally:
        with unfrozen():
            _precision.set_fp32_precision("generic", "all", before)


module_with_switches(sys.modules[__name__], fp32_precision=switch(
    lambda: _precision.fp32_precision("generic", "all"),
    lambda v: _precision.set_fp32_precision("generic", "all", v)))

from . import (  # noqa: E402
    cpu as cpu, cuda as cuda, cudnn as cudnn, mha as mha, mkl as mkl, mkldnn as mkldnn,
    mps as mps, openmp as openmp, opt_einsum as opt_einsum)
