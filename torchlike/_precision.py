"""The float32 precision policy: the ``jax.lax.Precision`` every dot and convolution torchlike
writes runs at, set by PyTorch's switches for it.

NOTE [ matmul precision ]
PyTorch computes float32 matmuls in full float32 unless the program opts in to less:
``torch.set_float32_matmul_precision('high')`` (or ``backends.cuda.matmul.allow_tf32 = True``,
or ``backends.cuda.matmul.fp32_precision = 'tf32'``) allows TF32 on the GPU, 'medium' bfloat16.
XLA's default on a GPU or TPU is the fast one (TF32 on a GPU, one bfloat16 pass on a TPU), so
torchlike passes a precision to every dot it writes: HIGHEST for 'highest', HIGH for 'high'
(TF32 on a GPU, three bfloat16 passes on a TPU), DEFAULT for 'medium'.  XLA's CPU backend
computes float32 dots in float32 whatever the precision says.

Convolutions and recurrent layers follow the switches PyTorch has for them: on a cuda device,
cuDNN's TF32 switch (``backends.cudnn.allow_tf32``, True by default as in PyTorch, or
``backends.cudnn.conv.fp32_precision``; ``cudnn.rnn.fp32_precision`` for RNNs) gives HIGH when
on and HIGHEST when off; on every other device the matmul policy applies.

Every dot torchlike writes (``jnp.matmul`` / ``dot`` / ``einsum`` / ``vdot`` ...,
``lax.dot_general``, ``lax.conv_general_dilated``) passes ``precision=``; an op whose function
holds one takes the precision as a static argument (``static()``), so its cached programs are
keyed by it and a change of policy takes effect at the next call.  tests/test_precision.py walks
torchlike's source to keep it so, and records the precision of every dot the op families trace.
jax's own linear-algebra routines (``jnp.linalg.*``, ``jax.scipy.linalg.expm`` and their
derivative rules) run theirs at HIGHEST, except QR's derivative, which leaves it to the
``jax.default_matmul_precision`` context: torchlike's QR op sets that to the policy (``scope``).

PyTorch 2.9 added a second interface, ``fp32_precision`` ('ieee', 'tf32', 'bf16' or 'none')
per backend ('cuda', 'mkldnn', and 'generic' above both) and operation ('matmul', 'conv',
'rnn', and 'all' above them); one left at 'none' takes the setting above it.  Both interfaces write the one
policy here, so each reads back what the other set: where PyTorch raises on reading a legacy
switch after the two were mixed, torchlike answers from the last write.  The mkldnn settings
(PyTorch's CPU kernels) are kept and read back; XLA's CPU backend has no reduced-precision mode
for them to select.
"""
import warnings

import jax
from jax import lax

_MATMUL = {"highest": lax.Precision.HIGHEST, "high": lax.Precision.HIGH,
           "medium": lax.Precision.DEFAULT}
_state = {"matmul": "highest", "static": (("precision", lax.Precision.HIGHEST),),
          "cudnn_tf32": True}

# fp32_precision per (backend, op), as set; a setting of 'none' takes its parent's ('all', then
# 'generic'), and a cuda conv / rnn with none set anywhere follows cuDNN's legacy TF32 switch.
_fp32 = {("generic", "all"): "none",
         ("cuda", "all"): "none", ("cuda", "matmul"): "none", ("cuda", "conv"): "none",
         ("cuda", "rnn"): "none",
         ("mkldnn", "all"): "none", ("mkldnn", "matmul"): "none", ("mkldnn", "conv"): "none",
         ("mkldnn", "rnn"): "none"}
_VALUES = {"cuda": ("ieee", "tf32", "none"), "mkldnn": ("ieee", "tf32", "bf16", "none"),
           "generic": ("ieee", "tf32", "bf16", "none")}
_PARENT = {("cuda", "all"): ("generic", "all"), ("mkldnn", "all"): ("generic", "all")}
_PARENT.update({(b, o): (b, "all") for b, o in _fp32 if b != "generic" and o != "all"})


def matmul():
    """The precision of float32 matmuls (and every other dot): the policy's current value."""
    return _state["static"][0][1]


def static():
    """``(("precision", matmul()),)``: the static argument of an op whose function has a dot."""
    return _state["static"]


def scope(precision):
    """A context in which the dots jax's own routines write without a precision use
    ``precision`` (jax's QR derivative is one)."""
    return jax.default_matmul_precision(precision.name.lower())


def conv(device_type):
    """The precision of a convolution on a device of torch type ``device_type``."""
    if device_type == "cuda":
        tf32 = fp32_precision("cuda", "conv") == "tf32"
        return lax.Precision.HIGH if tf32 else lax.Precision.HIGHEST
    return matmul()


def rnn(device_type):
    """The precision of a recurrent layer's matmuls on a device of type ``device_type``."""
    if device_type == "cuda":
        tf32 = fp32_precision("cuda", "rnn") == "tf32"
        return lax.Precision.HIGH if tf32 else lax.Precision.HIGHEST
    return matmul()


def _set_matmul(name):
    _state["matmul"] = name
    _state["static"] = (("precision", _MATMUL[name]),)


def set_float32_matmul_precision(precision):
    """Mirrors ``torch.set_float32_matmul_precision``: 'highest' (full float32, the default),
    'high' (TF32 on a GPU, three bfloat16 passes on a TPU) or 'medium' (XLA's fastest: TF32 on
    a GPU, one bfloat16 pass on a TPU) for every float32 matmul torchlike computes
    (NOTE [ matmul precision ]).  Another string warns and changes nothing, as in PyTorch."""
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got "
                           f"{type(precision).__name__}")
    if precision not in _MATMUL:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _set_matmul(precision)
    _fp32["cuda", "matmul"] = "ieee" if precision == "highest" else "tf32"
    _fp32["mkldnn", "matmul"] = {"highest": "ieee", "high": "tf32", "medium": "bf16"}[precision]


def get_float32_matmul_precision():
    """Mirrors ``torch.get_float32_matmul_precision``."""
    return _state["matmul"]


def allow_tf32_cublas():
    """``backends.cuda.matmul.allow_tf32``: whether float32 matmuls may use TF32."""
    return _state["matmul"] != "highest"


def set_allow_tf32_cublas(value):
    if not isinstance(value, bool):
        raise RuntimeError(f"set_allow_tf32_cublas expects a bool, but got "
                           f"{type(value).__name__}")
    _set_matmul("high" if value else "highest")
    _fp32["cuda", "matmul"] = "tf32" if value else "ieee"


def allow_tf32_cudnn():
    """``backends.cudnn.allow_tf32``: whether float32 convolutions on cuda may use TF32."""
    return fp32_precision("cuda", "conv") == "tf32"


def set_allow_tf32_cudnn(value):
    if not isinstance(value, bool):
        raise RuntimeError(f"set_allow_tf32_cudnn expects a bool, but got "
                           f"{type(value).__name__}")
    _state["cudnn_tf32"] = value
    _fp32["cuda", "conv"] = _fp32["cuda", "rnn"] = "none"   # the switch just set shows through


def fp32_precision(backend, op):
    """The ``fp32_precision`` of ``backend`` ('generic', 'cuda', 'mkldnn') for ``op``: its own
    setting, else the nearest one above it (one the backend cannot take reads 'none')."""
    key = (backend, op)
    while key is not None:
        value = _fp32[key]
        if value != "none":
            return value if value in _VALUES[backend] else "none"
        key = _PARENT.get(key)
    if backend == "cuda" and op in ("conv", "rnn"):
        return "tf32" if _state["cudnn_tf32"] else "none"
    return "none"


def set_fp32_precision(backend, op, value):
    """Set ``backend``'s ``fp32_precision`` for ``op`` (which the settings below it that are
    'none' take); the cuda matmul precision moves the matmul policy with it."""
    if value not in ("ieee", "tf32", "bf16", "none"):
        raise RuntimeError(f"Unknown precision: {value}")
    if value not in _VALUES[backend]:
        raise RuntimeError(f"backend '{backend}' does not support precision '{value}'")
    _fp32[backend, op] = value
    if op == "all" and backend in ("generic", "cuda") or (backend, op) == ("cuda", "matmul"):
        if fp32_precision("cuda", "matmul") != "tf32":
            _set_matmul("highest")
        elif _state["matmul"] == "highest":
            _set_matmul("high")
