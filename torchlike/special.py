"""torchlike.special: mirrors ``torch.special``.

Most names are the pointwise ops under their SciPy-style names (``expit`` is ``sigmoid``,
``gammaln`` is ``lgamma``, ``psi`` is ``digamma``); the functions PyTorch keeps only here are
registered below, each as one jnp function with its PyTorch backward-node name.
"""
import math

import jax
import jax.numpy as jnp
import jax.scipy.special as jss

from ._dispatch import Op, call, with_out as _out
from ._ops import binary as _binary_ops, pointwise as _pw, unary as _unary_ops
from ._ops.pointwise import _unary
from ._tensor import Tensor, _wrap_dim

# --- aliases of the pointwise ops ---------------------------------------------------------------

erf = _unary_ops.erf
erfc = _unary_ops.erfc
erfinv = _unary_ops.erfinv
exp2 = _unary_ops.exp2
expm1 = _unary_ops.expm1
log1p = _unary_ops.log1p
sinc = _unary_ops.sinc
i0 = _unary_ops.i0
xlogy = _binary_ops.xlogy
logit = _unary_ops.logit
digamma = psi = _unary_ops.digamma
gammaln = _unary_ops.lgamma


def expit(input, *, out=None):
    """Mirrors ``torch.special.expit`` (the logistic sigmoid)."""
    return _pw.sigmoid(input, out=out)


def round(input, *, decimals=0, out=None):   # noqa: A001 - torch's name
    """Mirrors ``torch.special.round`` (always PyTorch's ``round.decimals``: RoundBackward1)."""
    return _unary_ops.round(input, decimals=decimals, out=out)


# --- functions that live only in torch.special --------------------------------------------------

ENTR, entr = _unary("entr", jss.entr, "SpecialEntrBackward0", namespace="torch.special")
I0E, i0e = _unary("i0e", jss.i0e, "SpecialI0EBackward0", namespace="torch.special")
I1, i1 = _unary("i1", jss.i1, "SpecialI1Backward0", namespace="torch.special")
I1E, i1e = _unary("i1e", jss.i1e, "SpecialI1EBackward0", namespace="torch.special")
NDTRI, ndtri = _unary("ndtri", jss.ndtri, "SpecialNdtriBackward0", namespace="torch.special")
LOG_NDTR, log_ndtr = _unary("log_ndtr", jss.log_ndtr, "SpecialLogNdtrBackward0",
                            namespace="torch.special")

# PyTorch writes ndtr as a composite of scalar ops, ((1 + erf(x / sqrt(2))) * 0.5): the same
# nodes (MulBackward1, AddBackward1) show in its graph.
_MUL_SCALAR = Op("mul", lambda a, s: a * s, "MulBackward1", saves=(), promote="common", inputs=1)
_ADD_SCALAR = Op("add", lambda a, s: a + s, "AddBackward1", saves=(), promote="common", inputs=1)


def ndtr(input, *, out=None):
    """Mirrors ``torch.special.ndtr``: the standard normal CDF."""
    x = call(_MUL_SCALAR, input, math.sqrt(0.5))
    return _out(call(_MUL_SCALAR, call(_ADD_SCALAR, _unary_ops.erf(x), 1), 0.5), out)


_xlog1py = _binary_ops.x_times_log(jnp.log1p, -1)


XLOG1PY = Op("xlog1py", _xlog1py, "SpecialXlog1PyBackward0", promote="float")
XLOG1PY_SCALAR_SELF = Op("xlog1py", lambda y, x: _xlog1py(x, y), "SpecialXlog1PyBackward1",
                         saves=(0,), promote="float", inputs=1)
XLOG1PY_SCALAR_OTHER = Op("xlog1py", _xlog1py, "SpecialXlog1PyBackward2", saves=(0,),
                          promote="float", inputs=1)


def xlog1py(input, other, *, out=None):
    """Mirrors ``torch.special.xlog1py``: input * log1p(other), 0 where input == 0."""
    if isinstance(input, (bool, int, float)) and isinstance(other, Tensor):
        return _out(call(XLOG1PY_SCALAR_SELF, other, input), out)
    _pw._need_tensor("special_xlog1py", input, "input", 1)
    if isinstance(other, (bool, int, float)):
        return _out(call(XLOG1PY_SCALAR_OTHER, input, other), out)
    _pw._need_tensor("special_xlog1py", other, "other", 2)
    return _out(call(XLOG1PY, input, other), out)


# --- softmax over a dim -------------------------------------------------------------------------

def _over_dim(fn):
    def f(x, dim):
        if x.ndim == 0:
            return fn(x.reshape(1), axis=0).reshape(())
        return fn(x, axis=dim)
    return f


SOFTMAX = Op("softmax", _over_dim(jax.nn.softmax), "SoftmaxBackward0", saves=("result",))
LOG_SOFTMAX = Op("log_softmax", _over_dim(jax.nn.log_softmax), "LogSoftmaxBackward0",
                 saves=("result",))


def _softmax(op, input, dim, dtype):
    if dtype is not None:
        input = input.to(dtype)
    dim = _wrap_dim(dim, input.ndim)
    dt = input.dtype
    if not (dt.is_floating_point or dt.is_complex):
        last = "lastdim_" if dim == max(input.ndim, 1) - 1 else ""
        raise _pw._no_kernel(f"{op.name}_{last}kernel_impl", dt)
    return call(op, input, static=(("dim", dim),))


def softmax(input, dim, dtype=None):
    """Mirrors ``torch.special.softmax``: exp(x) / sum(exp(x)) over ``dim``; ``dtype`` casts the
    input first."""
    return _softmax(SOFTMAX, input, dim, dtype)


def log_softmax(input, dim, *, dtype=None):
    """Mirrors ``torch.special.log_softmax``: x - logsumexp(x) over ``dim``; ``dtype`` casts the
    input first."""
    return _softmax(LOG_SOFTMAX, input, dim, dtype)
