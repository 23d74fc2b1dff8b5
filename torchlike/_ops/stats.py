"""Statistics of samples: cov and corrcoef.

These are composites in PyTorch (ATen's Correlation.cpp), written here from the same ops in the
same order, so the values, dtypes and the graph (``cov``'s SqueezeBackward0, ``corrcoef``'s
ClampBackward1) are PyTorch's.  Their Tensor methods join the reduce family (reduce.py).
"""
import warnings

from .. import _dtype as D
from .._creation import scalar_tensor


def _check_weights(w, name, n, kind_ok, kind):
    if w.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                           f"{name} with {w.ndim} dimensions")
    if not kind_ok(w.dtype):
        raise RuntimeError(f"cov(): expected {name} to have {kind} dtype but got {name} with "
                           f"{w.dtype._scalar_name} dtype")
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {w.numel()} != {n}")
    if n and not bool(w.min().ge(0)):
        raise RuntimeError(f"cov(): {name} cannot be negative")


def cov(input, *, correction=1, fweights=None, aweights=None):
    """Mirrors ``torch.cov``: the covariance matrix of the variables in ``input``'s rows (a 1-D
    input is one variable), observations in its columns, weighted by integer frequencies
    ``fweights`` and/or floating-point ``aweights``, normalised by the weights' sum less
    ``correction`` (1: Bessel's correction).  A 0-dim result for a single variable."""
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.ndim} dimensions")
    if input.dtype is D.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.view(1, -1) if input.ndim < 2 else input
    n = x.shape[1]
    w = None
    if fweights is not None:
        _check_weights(fweights, "fweights", n,
                       lambda dt: not (dt.is_floating_point or dt.is_complex or dt is D.bool_),
                       "integral")
        w = fweights
    if aweights is not None:
        _check_weights(aweights, "aweights", n, lambda dt: dt.is_floating_point,
                       "floating point")
        w = aweights if w is None else w * aweights
    w_sum = scalar_tensor(n, dtype=D.int64, device=input.device) if w is None else w.sum()
    if w is not None and not bool(w_sum.ne(0)):
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = (x if w is None else x * w).sum(1) / w_sum
    if w is None:
        norm = scalar_tensor(n - correction, dtype=D.int64, device=input.device)
    elif correction == 0:
        norm = w_sum
    elif aweights is None:
        norm = w_sum - correction
    elif fweights is None and n == 1 and correction == 1:
        norm = scalar_tensor(0, dtype=D.int64, device=input.device)
    else:
        norm = w_sum - correction * (w * aweights).sum() / w_sum
    if bool(norm.le(0)):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
        norm = norm.zero_()
    if n == 1 and (fweights is None) != (aweights is None):
        # NOTE: PyTorch's corner case for one observation with one kind of weights: the centred
        # input is 0, and it zeroes the input itself (in place, through the view) to get it.
        x = x.zero_()
        if not (x.dtype.is_floating_point or x.dtype.is_complex):
            x = x.to(D.float32)
    else:
        x = x - avg.unsqueeze(1)
    c = x.mm((x if w is None else x * w).t().conj())
    return c.div(norm).squeeze()


def corrcoef(input):
    """Mirrors ``torch.corrcoef``: Pearson's correlation coefficients of the variables in
    ``input``'s rows (``cov`` normalised by the standard deviations, clipped to [-1, 1])."""
    if input.ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got "
                           f"an input with {input.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:   # one variable: nan where the covariance is nan, inf or 0, else 1
        return c / c
    d = c.diagonal()
    stddev = (d.real if d.is_complex() else d).sqrt()
    c = c / stddev.view(-1, 1)
    c = c / stddev.view(1, -1)
    if c.is_complex():
        from .complex import complex as make_complex
        return make_complex(c.real.clip(-1, 1), c.imag.clip(-1, 1))
    return c.clip(-1, 1)


PUBLIC = ("cov", "corrcoef")
TENSOR_METHODS = {"cov": cov, "corrcoef": corrcoef}
