"""Sampling from tensors of parameters (``normal``, ``bernoulli``, ``multinomial``,
``poisson``) and the in-place samplers (``x.uniform_()``, ``x.normal_()``, ``x.random_()``, ...).

Each sampler is an op of the op table whose inputs are its parameters and a key split off a
``Generator`` (NOTE [ random streams ] in _random.py).  PyTorch records the samplers for autograd
but their derivative is zero, so the op functions either ignore their tensor inputs or stop
their gradient.  The checks PyTorch makes on parameter values run on Python numbers; checks of
tensor contents (a negative std tensor, invalid ``multinomial`` rows) run in eager mode only.
"""
import math

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype as D, _x64
from .._creation import size_arg, zeros
from .._dispatch import Op, _broadcast_message, call, with_out
from .._inplace import inplace, shape_broadcast
from .._meta import is_meta
from .._random import (RANDN, _C_NAMES, _WIDE_UNSIGNED, _Tracer, _compute_dtype, _draw, _dtype_max,
                       _factory, _factory_dtype, _in_float32, _int_arg, _int_range, _ints, _key,
                       _like, _normal, _not_implemented, _require_float, _span_args, _uniform,
                       _sample_on, random_normal, random_uniform)
from .._tensor import Tensor, check_all, on_host
from ..autograd.grad_mode import _state as _grad_state
from .reparam import (dirichlet_grad as _dirichlet_grad_fn, gamma_grad as _gamma_grad,
                      log_standard_gamma)


# --- distributions: pure functions (key, shape, dtype, *params) -> sample ----------------------

def _bernoulli(key, shape, dtype, p):
    return (random_uniform(key, shape, _compute_dtype(dtype)) < p).astype(dtype)


@_in_float32
def _exponential(key, shape, dtype, lambd):
    return -jnp.log1p(-random_uniform(key, shape, dtype)) / lambd


def _geometric(key, shape, dtype, p):
    return jax.random.geometric(key, p, shape, jnp.int64).astype(dtype)


@_in_float32
def _log_normal(key, shape, dtype, mean, std):
    return jnp.exp(mean + std * random_normal(key, shape, dtype))


@_in_float32
def _cauchy(key, shape, dtype, median, sigma):
    u = random_uniform(key, shape, dtype, jnp.finfo(dtype).eps, 1.0)
    return median + sigma * jnp.tan(jnp.pi * (u - 0.5))


def _normal_tensors(mean, std, key):
    # NOTE: PyTorch's derivative of normal is zero for mean and std alike.
    mean = jax.lax.stop_gradient(mean)
    std = jax.lax.stop_gradient(std).astype(mean.dtype)   # the result has mean's dtype
    shape = jnp.broadcast_shapes(mean.shape, std.shape)
    return mean + std * _normal(key, shape, mean.dtype, 0.0, 1.0)


def _bernoulli_tensor(x, p, key):
    return _bernoulli(key, x.shape, x.dtype, jnp.broadcast_to(p, x.shape))


def _poisson(rates, key):
    lam = rates.astype(_compute_dtype(rates.dtype))
    return jax.random.poisson(key, lam, rates.shape, jnp.int64).astype(rates.dtype)


def _multinomial(probs, key, num_samples, replacement):
    logits = jnp.log(probs.astype(_compute_dtype(probs.dtype)))
    if replacement:
        idx = jax.random.categorical(key, logits, shape=(num_samples,) + logits.shape[:-1])
        idx = jnp.moveaxis(idx, 0, -1)
    else:   # Gumbel top-k: distinct categories, each draw weighted as without replacement
        idx = jax.lax.top_k(logits + jax.random.gumbel(key, logits.shape, logits.dtype),
                            num_samples)[1]
    return idx.astype(jnp.int64)


# PyTorch saves only sizes for these (nothing to version-check) and their gradient is zero.
NORMAL_TT = Op("normal", _normal_tensors, "NormalBackward3", saves=(), inputs=2)
NORMAL_TF = Op("normal", lambda m, key, std: _normal_tensors(m, jnp.asarray(std, m.dtype), key),
               "NormalBackward1", saves=(), inputs=1)
NORMAL_FT = Op("normal", lambda s, key, mean: _normal_tensors(jnp.asarray(mean, s.dtype), s, key),
               "NormalBackward2", saves=(), inputs=1)
BERNOULLI = Op("bernoulli", lambda p, key: _bernoulli(key, p.shape, p.dtype, p),
               "BernoulliBackward0", saves=(), inputs=1)
BERNOULLI_P = Op("bernoulli", _like(_bernoulli), "NotImplemented", saves=(), inputs=1,
                 no_grad_reason="derivative for aten::bernoulli is not implemented")
POISSON = Op("poisson", _poisson, "PoissonBackward0", saves=(), inputs=1)
MULTINOMIAL = Op("multinomial", _multinomial, None)

# The in-place samplers: x.NAME(...) stores a sample of x's shape and dtype.  PyTorch records
# them (the gradient is zero) and saves nothing.
_SAMPLERS = (
    ("uniform_", _uniform, "UniformBackward0"),
    ("normal_", _normal, "NormalBackward0"),
    ("bernoulli_", _bernoulli, "BernoulliBackward2"),
    ("exponential_", _exponential, "ExponentialBackward0"),
    ("geometric_", _geometric, "GeometricBackward0"),
    ("log_normal_", _log_normal, "LogNormalBackward0"),
    ("cauchy_", _cauchy, "CauchyBackward0"),
    ("random_from_to", _ints, "RandomBackward0"),   # random_(from, to)
    ("random_to", _ints, "RandomBackward1"),        # random_(to)
    ("random_", _ints, "RandomBackward2"))          # random_()
_FILL = {name: Op(name, _like(sample), node, saves=(), inputs=1)
         for name, sample, node in _SAMPLERS}
# the same samplers as factories of a shape and dtype, for a tensor that records no graph
_FILL_FACTORY = {name: Op(name, _factory(sample), None) for name, sample, _ in _SAMPLERS}
BERNOULLI_T_ = Op("bernoulli_", _bernoulli_tensor, "BernoulliBackward1", saves=(), inputs=2)


# --- argument and value checks ------------------------------------------------------------------

_REQUIRED = object()


def _real_dtype(dt):
    return dt.to_real() if dt.is_complex else dt


def _concrete(arr):
    """Whether ``arr`` has values to check (not traced, not meta)."""
    return not isinstance(arr, _Tracer) and not is_meta(arr)


def _bind(fname, spec, args, kwargs):
    """Positional and keyword arguments -> a list of values in ``spec`` order
    (``((name, default), ...)``), with Python's errors for bad calls."""
    if len(args) > len(spec):
        raise TypeError(f"{fname}() takes from 0 to {len(spec)} positional arguments but "
                        f"{len(args)} were given")
    values = list(args) + [_REQUIRED] * (len(spec) - len(args))
    names = [n for n, _ in spec]
    for k, v in kwargs.items():
        if k not in names:
            raise TypeError(f"{fname}() got an unexpected keyword argument '{k}'")
        values[names.index(k)] = v
    for i, (name, default) in enumerate(spec):
        if values[i] is _REQUIRED:
            if default is _REQUIRED:
                raise TypeError(f"{fname}() missing 1 required positional arguments: "
                                f"\"{name}\"")
            values[i] = default
    return values


def _float_arg(fname, name, pos, v):
    """A float parameter: a Python number or a 0-dim Tensor (a traced one stays an array)."""
    if isinstance(v, Tensor) and v.ndim == 0 and not v.is_complex():
        arr = v._value()
        return float(arr) if _concrete(arr) else arr
    if isinstance(v, (int, float, np.integer, np.floating)):
        return float(v)
    raise TypeError(f"{fname}(): argument '{name}' (position {pos}) must be float, not "
                    f"{type(v).__name__}")


def _fail(value, ok):
    """True when ``value`` is known (not traced) and ``ok(value)`` does not hold."""
    return isinstance(value, float) and not ok(value)


def _check_std(std):
    if _fail(std, lambda s: s >= 0.0):
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")


def _check_p(p):
    if _fail(p, lambda q: 0.0 <= q <= 1.0):
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")


@jax.jit
def _in_range(a, lo, hi):
    return jnp.all((a >= lo) & (a <= hi))


@_x64.scoped
def _all_true(arr, lo, hi=math.inf):
    """Whether every element of ``arr`` lies in [lo, hi] (False for nan); True for a traced
    array (the check is eager only).  A few CPU values are checked on the host (no device
    call), others by one jitted call."""
    if not _concrete(arr):
        return True
    if arr.size <= 64 and next(iter(arr.devices())).platform == "cpu":
        v = np.asarray(arr)
        return bool(((v >= lo) & (v <= hi)).all())
    return bool(_in_range(arr, lo, hi))


def _check_uniform(dt, low, high):
    _require_float(dt, "check_uniform_bounds", complex_ok=True)
    real = _real_dtype(dt)
    info = jnp.finfo(real._np)
    for name, v in (("from", low), ("to", high)):
        if _fail(v, lambda x: float(info.min) <= x <= float(info.max)):
            raise RuntimeError(f"{name} is out of bounds for {_C_NAMES[real._name]}")
    if isinstance(low, float) and isinstance(high, float):
        if low > high:
            raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                               f"from={low:g} > to={high:g}")
        if high - low > float(info.max):
            raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<"
                               f"{real._scalar_name}>::max(), but found to={high:g} and "
                               f"from={low:g} which result in to-from to exceed the limit")


# --- sampling from tensors of parameters ------------------------------------------------------

_NORMAL_SIGNATURES = (
    "normal() received an invalid combination of arguments - got ({got}), but expected one of:\n"
    " * (Tensor mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (Tensor mean, float std = 1, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (float mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (float mean, float std, tuple of ints size, *, torch.Generator generator = None, "
    "Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, torch.device "
    "device = None, bool pin_memory = False, bool requires_grad = False)\n")


def _check_std_tensor(std):
    if std.is_complex():
        raise RuntimeError("normal expects standard deviation to be non-complex")
    if std.dtype in _WIDE_UNSIGNED:   # PyTorch's check takes std.min(), which these lack
        raise _not_implemented("min_all", std.dtype)
    if not _all_true(std._value(), 0):
        raise RuntimeError("normal expects all elements of std >= 0.0")


def normal(mean=_REQUIRED, std=1.0, size=None, *, generator=None, out=None, dtype=None,
           layout=None, device=None, pin_memory=False, requires_grad=False):
    """Mirrors ``torch.normal``'s four overloads: ``normal(mean: Tensor, std: Tensor)``,
    ``normal(mean: Tensor, std=1.0)``, ``normal(mean: float, std: Tensor)`` (each broadcasting
    its tensors; the gradient reaching mean and std is zero, as in PyTorch) and
    ``normal(mean: float, std: float, size)``.

    Example:
        >>> torchlike.normal(torchlike.zeros(2, 1), torchlike.ones(3)).shape
        torch.Size([2, 3])
    """
    if mean is _REQUIRED:
        raise TypeError('normal() missing 1 required positional arguments: "mean"')
    tm, ts = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not (tm or ts):
        if size is None:
            names = ", ".join(type(v).__name__ for v in (mean, std))
            raise TypeError(_NORMAL_SIGNATURES.format(got=names))
        mean, std = _float_arg("normal", "mean", 1, mean), _float_arg("normal", "std", 2, std)
        _check_std(std)
        dt = _factory_dtype(dtype, out, D.get_default_dtype())
        _require_float(dt, "normal_kernel_cpu", complex_ok=True)
        return _draw(RANDN, (mean, std), size_arg("normal", size, 3), dt, device, requires_grad,
                     generator, out)
    if size is not None:
        got = ", ".join(type(v).__name__ for v in (mean, std, size))
        raise TypeError(_NORMAL_SIGNATURES.format(got=got))
    if tm and ts:
        _check_std_tensor(std)
        m, s = mean._value(), std._value()
        if shape_broadcast(m.shape, s.shape) is None:
            raise RuntimeError(_broadcast_message([m, s]))
        _require_float(mean.dtype, "normal_kernel_cpu", complex_ok=True)
        result = call(NORMAL_TT, mean, std, _key(generator, mean))
    elif tm:
        std = _float_arg("normal", "std", 2, std)
        _check_std(std)
        _require_float(mean.dtype, "normal_kernel_cpu", complex_ok=True)
        result = call(NORMAL_TF, mean, _key(generator, mean), std)
    else:
        _check_std_tensor(std)
        mean = _float_arg("normal", "mean", 1, mean)
        _require_float(std.dtype, "normal_kernel_cpu")
        result = call(NORMAL_FT, std, _key(generator, std), mean)
    return with_out(result, out)


def _check_probs_dtype(p, self_dt):
    if self_dt.is_complex or self_dt in _WIDE_UNSIGNED:
        raise _not_implemented("bernoulli_tensor_cpu_self_", self_dt)
    if not p.dtype.is_floating_point:
        raise _not_implemented("bernoulli_tensor_cpu_p_", p.dtype)
    if not _all_true(p._value(), 0, 1):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could "
                           "this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")


def _check_bernoulli_scalar(dt):
    if dt.is_complex or dt in _WIDE_UNSIGNED:
        raise _not_implemented("bernoulli_scalar_cpu_", dt)


def bernoulli(input, p=None, *, generator=None, out=None):
    """Mirrors ``torch.bernoulli``: 1 with probability ``input`` (or the float ``p``), else 0,
    in ``input``'s dtype.  The gradient reaching ``input`` is zero; with ``p`` given PyTorch
    records the op but has no derivative (backward raises)."""
    if p is None:
        _check_probs_dtype(input, input.dtype)
        return with_out(call(BERNOULLI, input, _key(generator, input)), out)
    if isinstance(p, Tensor):
        raise TypeError("bernoulli(): argument 'p' must be float, not Tensor")
    p = _float_arg("bernoulli", "p", 2, p)
    _check_p(p)
    _check_bernoulli_scalar(input.dtype)
    return with_out(call(BERNOULLI_P, input, _key(generator, input), p), out)


def poisson(input, generator=None):
    """Mirrors ``torch.poisson``: a Poisson count for each rate in ``input``, in its dtype
    (the gradient reaching ``input`` is zero)."""
    _require_float(input.dtype, "poisson_cpu")
    if not _all_true(input._value(), 0):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    return call(POISSON, input, _key(generator, input))


def _check_distribution(probs, checked_per_entry):
    """PyTorch's eager checks of multinomial's rows: of host values on the CPU, queued on an
    accelerator (NOTE [ checks on an accelerator ]: PyTorch's CUDA kernel checks on the
    device), skipped when traced."""
    arr = probs._value()
    if not _concrete(arr):
        return
    if not on_host(arr):
        check_all(probs, _finite_and_not_negative, RuntimeError,
                  "probability tensor contains either `inf`, `nan` or element < 0")
        check_all(probs, _rows_sum_to_positive, RuntimeError,
                  "invalid multinomial distribution (sum of probabilities <= 0)")
        return
    rows = np.atleast_2d(np.asarray(arr, np.float64))
    if checked_per_entry:
        for row in rows:   # the first bad entry of a row, then its sum
            bad = np.flatnonzero(~(row >= 0) | np.isinf(row))
            if bad.size:
                what = "= infinity or NaN" if np.isinf(row[bad[0]]) else "< 0"
                raise RuntimeError(f"invalid multinomial distribution (encountering "
                                   f"probability entry {what})")
            if not row.sum() > 0:
                raise RuntimeError("invalid multinomial distribution (sum of probabilities "
                                   "<= 0)")
        return
    if not (np.all(rows >= 0) and np.all(np.isfinite(rows))):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if np.any(rows.sum(axis=1) == 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


def _finite_and_not_negative(p):
    return (p >= 0) & (p < float("inf"))


def _rows_sum_to_positive(p):
    return p.sum(axis=-1) > 0


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Mirrors ``torch.multinomial``: ``num_samples`` category indices per row of the 1-D or
    2-D weights ``input`` (int64); without replacement no index repeats within a row.

    Example:
        >>> torchlike.multinomial(torchlike.tensor([0., 1., 0.]), 1)
        tensor([1])
    """
    if isinstance(num_samples, Tensor) and num_samples.ndim == 0:
        num_samples = int(num_samples)
    for name, v, kind in (("num_samples", num_samples, int), ("replacement", replacement, bool)):
        ok = isinstance(v, (bool, np.bool_) if kind is bool else (int, np.integer))
        if not ok or (kind is int and isinstance(v, bool)):
            pos = " (position 2)" if name == "num_samples" else ""
            raise TypeError(f"multinomial(): argument '{name}'{pos} must be {kind.__name__}, "
                            f"not {type(v).__name__}")
    if not 1 <= input.ndim <= 2:
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{input.dtype._scalar_name}")
    if out is not None and out.dtype is not D.int64:
        raise RuntimeError(f"multinomial expects Long tensor out, got: {out.dtype._scalar_name}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n_categories = input.shape[-1]
    if not replacement and num_samples > n_categories:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if n_categories > 1 << 24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    if input.ndim == 2 and input.shape[0] == 0:
        return with_out(zeros(0, num_samples, dtype=D.int64, device=input.device), out)
    _check_distribution(input, replacement and num_samples > 1)
    result = call(MULTINOMIAL, input, _key(generator, input),
                  static=(("num_samples", num_samples), ("replacement", replacement)))
    return with_out(result, out)


# --- in-place samplers ----------------------------------------------------------------------------

def _fill(self, op, generator, prepare, tensors=()):
    """self <- a sample of ``op`` through the in-place machinery (identity, version, views,
    autograd).  ``prepare()`` makes PyTorch's value and dtype checks, which come after its leaf
    check, and returns the op's scalar parameters; ``tensors`` are its tensor parameters.  A
    write that records no graph (no tensor parameters; ``self`` not requiring grad, or grad
    mode off: a parameter's initial values) takes the factory's sampler (one packed host
    argument; NOTE [ random draws in chunks ] in _random.py)."""
    def compute():
        params = prepare()
        if not (tensors or self.requires_grad and _grad_state.grad_enabled) and all(
                isinstance(v, (float, int, np.unsignedinteger)) for v in params):
            static = (("shape", tuple(self.shape)), ("dtype", self.dtype._np))
            return Tensor._wrap(_sample_on(_FILL_FACTORY[op.name], self.device, generator,
                                           *params, static=static))
        return call(op, self, *tensors, _key(generator, self), *params)
    return inplace(self, compute)


def _floats(fname, spec, args, kwargs):
    if not args and not kwargs and all(d is not _REQUIRED for _, d in spec):
        return [default for _, default in spec]   # the common call, x.uniform_()
    values = _bind(fname, spec, args, kwargs)
    return [_float_arg(fname, name, i + 1, v)
            for i, ((name, _), v) in enumerate(zip(spec, values))]


def uniform_(self, *args, generator=None, **kwargs):
    """Mirrors ``Tensor.uniform_(from=0, to=1)``: uniform on [from, to)."""
    low, high = _floats("uniform_", (("from", 0.0), ("to", 1.0)), args, kwargs)

    def prepare():
        _check_uniform(self.dtype, low, high)
        return low, high
    return _fill(self, _FILL["uniform_"], generator, prepare)


def normal_(self, *args, generator=None, **kwargs):
    """Mirrors ``Tensor.normal_(mean=0, std=1)``."""
    mean, std = _floats("normal_", (("mean", 0.0), ("std", 1.0)), args, kwargs)

    def prepare():
        _check_std(std)
        _require_float(self.dtype, "normal_kernel_cpu", complex_ok=True)
        return mean, std
    return _fill(self, _FILL["normal_"], generator, prepare)


def bernoulli_(self, *args, generator=None, **kwargs):
    """Mirrors ``Tensor.bernoulli_(p=0.5)``: ``p`` a float or a Tensor of probabilities
    (broadcast to self)."""
    (p,) = _bind("bernoulli_", (("p", 0.5),), args, kwargs)
    if isinstance(p, Tensor):
        def prepare_tensor():
            p.detach().expand(self.shape)   # PyTorch's errors for a p that does not fit
            _check_probs_dtype(p, self.dtype)
            return ()
        return _fill(self, BERNOULLI_T_, generator, prepare_tensor, tensors=(p,))
    p = _float_arg("bernoulli_", "p", 1, p)

    def prepare():
        _check_p(p)
        _check_bernoulli_scalar(self.dtype)
        return (p,)
    return _fill(self, _FILL["bernoulli_"], generator, prepare)


def exponential_(self, *args, generator=None, **kwargs):
    """Mirrors ``Tensor.exponential_(lambd=1)``."""
    (lambd,) = _floats("exponential_", (("lambd", 1.0),), args, kwargs)

    def prepare():
        if _fail(lambd, lambda v: v > 0.0):
            raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
        if not self.dtype.is_floating_point:
            raise RuntimeError("Exponential distribution is a continuous probability "
                               "distribution. dtype must be a floating point but you specified "
                               f"{self.dtype._scalar_name}")
        return (lambd,)
    return _fill(self, _FILL["exponential_"], generator, prepare)


def geometric_(self, *args, generator=None, **kwargs):
    """Mirrors ``Tensor.geometric_(p)``: the number of trials up to the first success."""
    (p,) = _floats("geometric_", (("p", _REQUIRED),), args, kwargs)

    def prepare():
        if _fail(p, lambda v: 0.0 < v < 1.0):
            raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
        if self.dtype is D.bool_ or self.dtype.is_complex or self.dtype in _WIDE_UNSIGNED:
            raise _not_implemented("geometric_cpu", self.dtype)
        return (p,)
    return _fill(self, _FILL["geometric_"], generator, prepare)


def log_normal_(self, *args, generator=None, **kwargs):
    """Mirrors ``Tensor.log_normal_(mean=1, std=2)``: exp of a normal(mean, std) sample."""
    mean, std = _floats("log_normal_", (("mean", 1.0), ("std", 2.0)), args, kwargs)

    def prepare():
        if _fail(std, lambda v: v > 0.0):
            raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
        _require_float(self.dtype, "log_normal_cpu")
        return mean, std
    return _fill(self, _FILL["log_normal_"], generator, prepare)


def cauchy_(self, *args, generator=None, **kwargs):
    """Mirrors ``Tensor.cauchy_(median=0, sigma=1)``."""
    median, sigma = _floats("cauchy_", (("median", 0.0), ("sigma", 1.0)), args, kwargs)

    def prepare():
        if _fail(sigma, lambda v: v > 0.0):
            raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
        if not self.dtype.is_floating_point:
            raise RuntimeError("Cauchy distribution is a continuous probability distribution. "
                               "dtype must be a floating point but you specified "
                               f"{_C_NAMES[self.dtype._name]}")
        return median, sigma
    return _fill(self, _FILL["cauchy_"], generator, prepare)


def _random_overload(args, kwargs):
    """random_'s overload and bounds: ("random_from_to", from, to), ("random_to", 0, to) or
    ("random_", None, None)."""
    got = ", ".join([type(a).__name__ for a in args]
                    + [f"{k}={type(v).__name__}" for k, v in kwargs.items()])
    got += ", " if kwargs else ""

    def invalid(_):
        return ("random_() received an invalid combination of arguments - got "
                f"({got}), but expected one of:\n"
                " * (*, torch.Generator generator = None)\n"
                " * (int from, int to, *, torch.Generator generator = None)\n"
                " * (int to, *, torch.Generator generator = None)\n")
    if len(args) > 2:
        raise TypeError(f"random_() takes 2 positional arguments but {len(args)} were given")
    named = dict(zip(("to",) if len(args) == 1 and not kwargs else ("from", "to"), args))
    named.update(kwargs)
    if not named:
        return "random_", None, None
    if set(named) == {"to"}:
        return "random_to", 0, _int_arg(named["to"], invalid)
    if set(named) != {"from", "to"}:
        raise TypeError(invalid(None))
    high = None if named["to"] is None else _int_arg(named["to"], invalid)
    return "random_from_to", _int_arg(named["from"], invalid), high


def _default_range(dt):
    if dt.is_complex or dt in _WIDE_UNSIGNED:
        raise _not_implemented("random_kernel_cpu", dt)
    return 0, _dtype_max(dt) + 1


def random_(self, *args, generator=None, **kwargs):
    """Mirrors ``Tensor.random_(from, to)`` / ``random_(to)`` / ``random_()``: integers in
    [from, to), [0, to), or from 0 to the dtype's largest value (2**mantissa for floats);
    ``to=None`` runs up to that largest value."""
    name, low, high = _random_overload(args, kwargs)

    def prepare():
        dt = self.dtype
        return _span_args(*(_default_range(dt) if name == "random_" else
                            _int_range(dt, low, high)))
    return _fill(self, _FILL[name], generator, prepare)


# --- binomial (torch.binomial, used by distributions.Binomial) -----------------------------------

def _binomial(count, prob, key):
    # NOTE: as PyTorch's kernel: a count <= 0 or prob <= 0 draws 0, prob >= 1 draws the count,
    # prob > 1/2 draws count minus a draw of the failures (so a fractional count keeps its
    # fraction), one <= 1/2 counts whole trials; a nan prob gives nan.
    dt = _compute_dtype(count.dtype)
    shape = jnp.broadcast_shapes(count.shape, prob.shape)
    c = jnp.broadcast_to(count, shape).astype(dt)
    p = jnp.broadcast_to(prob, shape).astype(dt)
    flip = p > 0.5
    q = jnp.where(flip, 1 - p, p)
    ok = (c >= 1) & (q > 0)
    k = jax.random.binomial(key, jnp.where(ok, jnp.floor(c), 0), jnp.where(ok, q, 0.5), shape,
                            dt)
    k = jnp.where(ok, k, 0)
    draw = jnp.where((c <= 0) | (p <= 0), 0, jnp.where(flip, c - k, k))
    return jnp.where(jnp.isnan(p), jnp.nan, draw).astype(count.dtype)


BINOMIAL = Op("binomial", _binomial, "NotImplemented", saves=(), inputs=2,
              no_grad_reason="derivative for aten::binomial is not implemented")


def binomial(count, prob, generator=None):
    """Mirrors ``torch.binomial``: the number of successes in ``count`` trials of probability
    ``prob`` (floating tensors of one dtype, broadcast together), in their dtype.  PyTorch
    records the op without a derivative: backward through it raises.

    Args:
        count (Tensor): the number of trials.
        prob (Tensor): the probability of success of each trial.
        generator (Generator, optional): the generator to draw from.

    Returns:
        Tensor: the counts of successes.

    Example:
        >>> torchlike.binomial(torchlike.tensor([0., 4.]), torchlike.tensor([0.5, 1.0]))
        tensor([0., 4.])
    """
    for name, t in (("count", count), ("prob", prob)):
        if not t.dtype.is_floating_point:
            raise ValueError(f"binomial only supports floating-point dtypes for {name}, got: "
                             f"{t.dtype._scalar_name}")
    if prob.dtype is not count.dtype:
        raise RuntimeError(f"Found dtype {prob.dtype._scalar_name} but expected "
                           f"{count.dtype._scalar_name}")
    c, p = count._value(), prob._value()
    if shape_broadcast(c.shape, p.shape) is None:
        raise RuntimeError(_broadcast_message([c, p]))
    return call(BINOMIAL, count, prob, _key(generator, count))


# --- gamma and Dirichlet samplers with reparameterized gradients (torch.distributions) ----------

# The gradients' maths is in _ops/reparam.py (NOTE [ reparameterized gamma gradients ]).

@jax.custom_jvp
def _gamma_reparam(alpha, x):
    return x


@_gamma_reparam.defjvp
def _gamma_reparam_jvp(primals, tangents):
    alpha, x = primals
    return x, _gamma_grad(alpha, x) * tangents[0]


def _log_gamma_draw(key, alpha):
    """(logs of standard gamma draws of ``alpha``'s shape in its compute dtype (float32 for
    half types), where they are defined: alpha > 0); no gradient."""
    alpha = jax.lax.stop_gradient(alpha)
    a = alpha.astype(_compute_dtype(alpha.dtype))
    ok = (a > 0) & (a < jnp.inf)
    return log_standard_gamma(key, jnp.where(ok, a, 1), a.dtype), ok


def _standard_gamma_fn(alpha, key):
    log_x, ok = _log_gamma_draw(key, alpha)
    x = jnp.exp(log_x)
    # PyTorch's sampler returns at least the dtype's smallest normal number (also for alpha <= 0
    # or nan) and inf for alpha = inf
    tiny = jnp.finfo(alpha.dtype).tiny
    x = jnp.where(jnp.isposinf(alpha), jnp.inf, jnp.where(ok, jnp.maximum(x, tiny), tiny))
    return _gamma_reparam(alpha, x.astype(alpha.dtype))


def _sample_dirichlet_fn(alpha, key):
    # the gamma draws normalized in log space, so small concentrations keep their mass
    a = alpha.reshape(alpha.shape or (1,))
    log_g, ok = _log_gamma_draw(key, a)
    log_g = jnp.where(ok, log_g, -jnp.inf)
    x = jnp.exp(log_g - jax.nn.logsumexp(log_g, axis=-1, keepdims=True))
    x = jnp.where(jnp.isnan(x), 1 / a.shape[-1], x)   # every draw underflowed: equal shares
    return jnp.maximum(x, jnp.finfo(alpha.dtype).tiny).astype(alpha.dtype).reshape(alpha.shape)


@jax.custom_jvp
def _dirichlet_reparam(alpha, x):
    return x


@_dirichlet_reparam.defjvp
def _dirichlet_reparam_jvp(primals, tangents):
    # d x_i / d alpha_j = G_j (delta_ij - x_i), G the Beta marginals' gradients: its transpose
    # is PyTorch's _Dirichlet backward, G * (g - sum(x * g))
    alpha, x = primals
    total = jnp.broadcast_to(alpha.sum(-1, keepdims=True), alpha.shape)
    gt = _dirichlet_grad_fn(x, alpha, total) * tangents[0]
    return x, gt - x * gt.sum(-1, keepdims=True)


def _dirichlet_rsample_fn(alpha, key):
    return _dirichlet_reparam(alpha, _sample_dirichlet_fn(alpha, key))


STANDARD_GAMMA = Op("_standard_gamma", _standard_gamma_fn, "StandardGammaBackward0",
                    saves=(0, "result"), inputs=1)
STANDARD_GAMMA_GRAD = Op("_standard_gamma_grad", lambda a, x: _gamma_grad(*jnp.broadcast_arrays(
    a, x)), "StandardGammaGradBackward0", no_grad_reason=(
        NotImplementedError, "the derivative for '_standard_gamma_grad' is not implemented."))
SAMPLE_DIRICHLET = Op("_sample_dirichlet", _sample_dirichlet_fn, "NotImplemented", saves=(),
                      inputs=1,
                      no_grad_reason="derivative for aten::_sample_dirichlet is not implemented")
# Dirichlet.rsample's sampler: PyTorch records it as its _Dirichlet autograd.Function
DIRICHLET_RSAMPLE = Op("_dirichlet_rsample", _dirichlet_rsample_fn, "_DirichletBackward",
                       saves=(0, "result"), inputs=1)
DIRICHLET_GRAD = Op("_dirichlet_grad", _dirichlet_grad_fn, "NotImplemented", saves=(),
                    no_grad_reason="derivative for aten::_dirichlet_grad is not implemented")


def _von_mises_fn(loc, concentration, proposal_r, key):
    """Best & Fisher's rejection sampler for the von Mises distribution: every element proposes
    in each round of one loop until all have accepted (PyTorch loops the same way in eager
    code; here the loop is a ``lax.while_loop``, so the sampler also traces)."""
    def body(state):
        i, x, done = state
        u1, u2, u3 = jax.random.uniform(jax.random.fold_in(key, i), (3,) + loc.shape, loc.dtype)
        z = jnp.cos(jnp.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | (jnp.log(c / u2) + 1 - c >= 0)
        x = jnp.where(~done & accept, jnp.sign(u3 - 0.5) * jnp.arccos(f), x)
        return i + 1, x, done | accept

    start = (jnp.uint32(0), jnp.zeros_like(loc), jnp.zeros(loc.shape, bool))
    _, x, _ = jax.lax.while_loop(lambda s: ~jnp.all(s[2]) & (s[0] < 100000), body, start)
    return (x + jnp.pi + loc) % (2 * jnp.pi) - jnp.pi


VON_MISES = Op("_von_mises", _von_mises_fn, None)


def _von_mises_sample(loc, concentration, proposal_r, generator=None):
    """Von Mises draws of ``loc`` / ``concentration`` (and the sampler's ``proposal_r``), all of
    the sample's shape, for ``VonMises.sample`` (which passes float64, as PyTorch samples)."""
    return call(VON_MISES, loc, concentration, proposal_r, _key(generator, loc))


def _same_dtype(first, *others):
    for t in others:
        if t.dtype is not first.dtype:
            raise RuntimeError(f"Found dtype {t.dtype._scalar_name} but expected "
                               f"{first.dtype._scalar_name}")


def _standard_gamma(input, generator=None):
    """Mirrors ``torch._standard_gamma``: a Gamma(input, 1) sample per element, in its dtype.
    Its gradient is PyTorch's implicit reparameterization gradient (NOTE [ reparameterized
    gamma gradients ]).

    Example:
        >>> torchlike._standard_gamma(torchlike.ones(2)).shape
        torch.Size([2])
    """
    if not input.dtype.is_floating_point or input.dtype.itemsize < 4:
        raise _not_implemented("gamma_cpu", input.dtype)
    return call(STANDARD_GAMMA, input, _key(generator, input))


def _standard_gamma_grad(input, output):
    """Mirrors ``torch._standard_gamma_grad``: d output / d input for standard gamma samples
    ``output`` of concentrations ``input``."""
    _same_dtype(input, output)
    return call(STANDARD_GAMMA_GRAD, input, output)


def _sample_dirichlet(input, generator=None):
    """Mirrors ``torch._sample_dirichlet``: a Dirichlet sample per row of concentrations
    ``input`` (its last dimension); PyTorch has no derivative for it."""
    if not input.dtype.is_floating_point or input.dtype.itemsize < 4:
        raise _not_implemented("dirichlet", input.dtype)
    return call(SAMPLE_DIRICHLET, input, _key(generator, input))


def _dirichlet_rsample(concentration, generator=None):
    """A Dirichlet sample per row of ``concentration`` whose gradient is PyTorch's
    reparameterization gradient (its ``_Dirichlet`` Function; NOTE [ reparameterized gamma
    gradients ])."""
    if not concentration.dtype.is_floating_point or concentration.dtype.itemsize < 4:
        raise _not_implemented("dirichlet", concentration.dtype)
    return call(DIRICHLET_RSAMPLE, concentration, _key(generator, concentration))


def _dirichlet_grad(x, alpha, total):
    """Mirrors ``torch._dirichlet_grad``: the reparameterized gradient of Beta(alpha,
    total - alpha) samples ``x``, as the Dirichlet's backward uses it."""
    _same_dtype(x, alpha, total)
    return call(DIRICHLET_GRAD, x, alpha, total)


PUBLIC = ("normal", "bernoulli", "multinomial", "poisson", "binomial")
PUBLIC += ("_standard_gamma", "_standard_gamma_grad", "_sample_dirichlet", "_dirichlet_grad")
TENSOR_METHODS = {
    "bernoulli": bernoulli, "multinomial": multinomial,
    "uniform_": uniform_, "normal_": normal_, "bernoulli_": bernoulli_,
    "exponential_": exponential_, "geometric_": geometric_, "log_normal_": log_normal_,
    "cauchy_": cauchy_, "random_": random_,
}
