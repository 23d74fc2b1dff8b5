"""Random numbers: ``Generator``, seeding and RNG state, and the sampling factories (``rand``,
``randn``, ``randint``, ``randperm`` and the ``_like`` forms).  Sampling from tensors of
parameters (``normal``, ``bernoulli``, ``multinomial``, ``poisson``) and the in-place samplers
(``x.uniform_()``, ``x.normal_()``, ...) live in _ops/random.py; their public names are
re-exported here.

NOTE [ random streams ]
The streams are jax's, not PyTorch's: the same seed gives the same numbers in torchlike on every
run, but not the numbers torch would draw.  Shapes, dtypes, devices, autograd behaviour, errors
and the distributions themselves follow PyTorch.

A Generator keeps its whole state in one uint32 Tensor: the seed (two words) and a jax PRNG key.
Every draw splits the key, writes the advanced state back into that Tensor and samples from the
split-off key.  Because the state is read and written only through the Tensor, a traced program
(``torchlike.compile``, ``to_jax_function``) can take the state in and hand the advanced state
out, so each call of a compiled step draws fresh numbers.  ``get_state`` shows it as uint8 bytes
(little-endian words), which ``set_state`` accepts, traced or not.

Samplers are ops of the op table whose inputs are the sample's parameters and the split-off key
(an array that never requires grad), so they run jitted in eager mode and trace as they are.
"""
import math
import os
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from . import _dtype as D
from ._creation import _finish, _place, _size, get_default_device
from ._device import device as _device_cls, to_jax_device
from ._dispatch import Op, call, with_out
from ._tensor import Tensor

_DEFAULT_SEED = 67280421310721
_U64 = 1 << 64
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1
_Tracer = jax.core.Tracer


# --- Generator ------------------------------------------------------------------------------------

@jax.jit
def _seeded_state(seed):
    """uint32 words [seed low, seed high, *key] for an int64 seed."""
    u = jax.lax.bitcast_convert_type(seed, jnp.uint64)
    words = jnp.stack([u & 0xFFFFFFFF, u >> 32]).astype(jnp.uint32)
    return jnp.concatenate([words, jax.random.key_data(jax.random.key(seed)).ravel()])


@jax.jit
def _advance(state):
    """(the state after one draw, the key data that draw samples from)."""
    key, sub = jax.random.split(jax.random.wrap_key_data(state[2:]))
    return state.at[2:].set(jax.random.key_data(key)), jax.random.key_data(sub)


_BYTE_SHIFTS = (0, 8, 16, 24)


@jax.jit
def _words_to_bytes(words):
    shifts = jnp.asarray(_BYTE_SHIFTS, jnp.uint32)
    return ((words[:, None] >> shifts) & 0xFF).astype(jnp.uint8).reshape(-1)


@jax.jit
def _bytes_to_words(data):
    shifts = jnp.asarray(_BYTE_SHIFTS, jnp.uint32)
    return jnp.sum(data.reshape(-1, 4).astype(jnp.uint32) << shifts, axis=1, dtype=jnp.uint32)


def _seed_value(seed):
    """A seed as PyTorch takes it: an int in [-2**63, 2**64); negative ones wrap to uint64."""
    if isinstance(seed, Tensor) or not isinstance(seed, (int, np.integer)):
        raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
    seed = int(seed)
    if not _I64_MIN <= seed < _U64:
        raise ValueError("Overflow when unpacking long long")
    return seed % _U64


class Generator:
    """Mirrors ``torch.Generator``: a source of random numbers with its own state.

    Example:
        >>> g = torchlike.Generator().manual_seed(0)
        >>> state = g.get_state()
        >>> a = torchlike.rand(2, generator=g)
        >>> bool((torchlike.rand(2, generator=g.set_state(state)) == a).all())
        True
    """

    def __init__(self, device="cpu"):
        self.device = _device_cls(device)
        self._state = None
        self.manual_seed(_DEFAULT_SEED)

    def manual_seed(self, seed):
        """Mirrors ``torch.Generator.manual_seed``: reseed; returns the generator."""
        seed = _seed_value(seed)
        signed = np.int64(seed - _U64 if seed > _I64_MAX else seed)
        words = _place(_seeded_state(signed), self.device)
        if self._state is None:
            self._state = Tensor._wrap(words)
        else:
            self._state._write(words)
        return self

    def seed(self):
        """Mirrors ``torch.Generator.seed``: reseed from OS entropy; returns the new seed."""
        s = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(s)
        return s

    def initial_seed(self):
        """Mirrors ``torch.Generator.initial_seed``: the seed the state started from."""
        words = np.asarray(self._state._value()[:2]).astype(np.uint64)
        return int(words[0]) | int(words[1]) << 32

    def get_state(self):
        """Mirrors ``torch.Generator.get_state``: the state as a uint8 Tensor."""
        return Tensor._wrap(_words_to_bytes(self._state._value()))

    def set_state(self, new_state):
        """Mirrors ``torch.Generator.set_state``: restore a state from ``get_state``."""
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        if new_state.dtype is not D.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        size = 4 * self._state.numel()
        if new_state.numel() != size:
            raise RuntimeError(f"Expected a torchlike.Generator state of size {size} but found "
                               f"the input RNG state size to be {new_state.numel()}")
        words = _bytes_to_words(new_state._value())
        if not isinstance(words, _Tracer):
            words = _place(words, self.device)
        self._state._write(words)
        return self

    def clone_state(self):
        """Mirrors ``torch.Generator.clone_state``: a new generator in the same state."""
        return Generator(self.device).set_state(self.get_state())

    def __reduce__(self):
        return _rebuild_generator, (str(self.device), np.asarray(self.get_state()._value()))

    def _next(self):
        """Key data for one draw; the state advances (a write a traced step hands out)."""
        state, sub = _advance(self._state._value())
        self._state._write(state)
        return sub

    def next_key(self):
        """A fresh jax PRNG key; the generator's state advances."""
        return jax.random.wrap_key_data(self._next())


def _rebuild_generator(device, state):
    return Generator(device).set_state(Tensor._wrap(jnp.asarray(state)))


default_generator = Generator()


def manual_seed(seed):
    """Mirrors ``torch.manual_seed``: reseed the default generator; returns it."""
    return default_generator.manual_seed(int(seed))


def seed():
    """Mirrors ``torch.seed``: reseed the default generator from OS entropy."""
    return default_generator.seed()


def initial_seed():
    """Mirrors ``torch.initial_seed``."""
    return default_generator.initial_seed()


def get_rng_state():
    """Mirrors ``torch.get_rng_state``: the default generator's state (uint8 Tensor)."""
    return default_generator.get_state()


def set_rng_state(new_state):
    """Mirrors ``torch.set_rng_state``."""
    default_generator.set_state(new_state)


def _gen(generator):
    if generator is None:
        return default_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"argument 'generator' must be torch.Generator, not "
                        f"{type(generator).__name__}")
    return generator


def _moved(key, devices):
    """``key`` on the one jax device in ``devices`` (a no-op device_put still costs time)."""
    if isinstance(key, _Tracer) or len(devices) != 1 or key.devices() == devices:
        return key
    return jax.device_put(key, next(iter(devices)))


def _key_like(generator, like):
    """Key data for one draw, on the device of the Tensor ``like``."""
    key, arr = _gen(generator)._next(), like._value()
    return key if isinstance(arr, _Tracer) else _moved(key, arr.devices())


def _key_on(generator, device):
    """Key data for one draw, on ``device`` (None: the default device)."""
    target = to_jax_device(get_default_device() if device is None else device)
    return _moved(_gen(generator)._next(), {target})


# --- distributions: pure functions (key, shape, dtype, *params) -> sample ----------------------

def _compute_dtype(dtype):
    """The float dtype a sample is computed in before it is cast to ``dtype``."""
    return jnp.float64 if dtype in (jnp.float64, jnp.int64) else jnp.float32


def _componentwise(sample):
    """Complex dtypes sample the real and imaginary parts independently, as PyTorch samples the
    ``view_as_real`` of the tensor (``complex_=True`` tells the sampler it draws such parts)."""
    def fn(key, shape, dtype, *params):
        dtype = jnp.dtype(dtype)
        if not jnp.issubdtype(dtype, jnp.complexfloating):
            return sample(key, shape, dtype, *params)
        real = sample(key, tuple(shape) + (2,), jnp.finfo(dtype).dtype, *params, complex_=True)
        return jax.lax.complex(real[..., 0], real[..., 1])
    return fn


def _in_float32(sample):
    """Half-precision samples are drawn in float32 and rounded, as PyTorch computes them (jax's
    own float16 / bfloat16 normal and exponential draws are visibly biased)."""
    def fn(key, shape, dtype, *params, **kwargs):
        if jnp.dtype(dtype).itemsize >= 4:
            return sample(key, shape, dtype, *params, **kwargs)
        return sample(key, shape, jnp.float32, *params, **kwargs).astype(dtype)
    return fn


@_componentwise
def _uniform(key, shape, dtype, low, high, complex_=False):
    return jax.random.uniform(key, shape, dtype, low, high)


@_componentwise
@_in_float32
def _normal(key, shape, dtype, mean, std, complex_=False):
    # NOTE: a complex normal of std s has std s / sqrt(2) in each part, as in PyTorch.
    scale = std / math.sqrt(2) if complex_ else std
    return mean + scale * jax.random.normal(key, shape, dtype)


def _ints(key, shape, dtype, low, span):
    """Integers in [low, low + span) (span 0: all 2**64), as PyTorch's random_: bits % span."""
    bits = jax.random.bits(key, shape, jnp.uint64)
    v = jnp.where(span == 0, bits, bits % jnp.maximum(span, 1)) + low
    return jax.lax.bitcast_convert_type(v, jnp.int64).astype(dtype)


def _factory(sample):
    """An op of (key, *params) making a sample of static shape and dtype."""
    def fn(key, *params, shape, dtype):
        return sample(key, shape, dtype, *params)
    return fn


def _like(sample):
    """An op of (x, key, *params) making a sample of x's shape and dtype (x's values unused)."""
    def fn(x, key, *params):
        return sample(key, x.shape, x.dtype, *params)
    return fn


def _randperm(key, n, dtype):
    return jax.random.permutation(key, n).astype(dtype)


RAND = Op("rand", _factory(_uniform), None)
RANDN = Op("randn", _factory(_normal), None)
RANDINT = Op("randint", _factory(_ints), None)
RANDPERM = Op("randperm", _randperm, None)


# --- argument and value checks ------------------------------------------------------------------

# C++ type names PyTorch uses in some messages
_C_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char",
            "int16": "short int", "int32": "int", "int64": "long int",
            "uint16": "short unsigned int", "uint32": "unsigned int",
            "uint64": "long unsigned int", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "float32": "float", "float64": "double", "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>"}
_MANTISSA_DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


def _not_implemented(kernel, dt):
    return NotImplementedError(f"\"{kernel}\" not implemented for '{dt._scalar_name}'")


def _require_float(dt, kernel, complex_ok=False):
    if not (dt.is_floating_point or (complex_ok and dt.is_complex)):
        raise _not_implemented(kernel, dt)


def _int_arg(v, message):
    """An int parameter (a Python int or a 0-dim integer Tensor), else TypeError(message(v))."""
    if isinstance(v, Tensor) and v.ndim == 0 and not (v.is_floating_point() or v.is_complex()):
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(message(v))
    v = int(v)
    if not _I64_MIN <= v <= _I64_MAX:
        raise ValueError("Overflow when unpacking long long")
    return v


def _must_be_int(fname, name):
    return lambda v: f"{fname}(): argument '{name}' must be int, not {type(v).__name__}"


def _check_in_range(dt, low, to_inc):
    """PyTorch's bounds for random_'s [low, to_inc] in dtype ``dt``: errors past what the dtype
    holds, warnings past the integers a float dtype represents exactly."""
    name = _C_NAMES[dt._name]
    if dt.is_floating_point:
        info = jnp.finfo(dt._np)
        lo, hi = float(info.min), float(info.max)
    elif dt is D.bool_:
        lo, hi = 0, 1
    elif not dt.is_complex:
        info = jnp.iinfo(dt._np)
        lo, hi = int(info.min), int(info.max)
    else:
        raise RuntimeError("check_random_bounds handles only integral, floating-point and "
                           "boolean types")
    for what, v in (("from", low), ("to - 1", to_inc)):
        if not lo <= v <= hi:
            raise RuntimeError(f"{what} is out of bounds for {name}")
    if dt.is_floating_point:
        d = _MANTISSA_DIGITS[dt._name]
        for what, v in (("from", low), ("to - 1", to_inc)):
            if not -(1 << d) <= v <= 1 << d:
                warnings.warn(f"{what} is out of bounds [-(2^{d}), 2^{d}]. Due to precision "
                              f"limitations {name} can support discrete uniform distribution "
                              "only within this range. This warning will become an error in "
                              "version 1.7 release, please fix the code in advance",
                              UserWarning, stacklevel=4)


def _dtype_max(dt):
    """random_()'s inclusive upper end: 2**mantissa digits for floats, the max for integers
    (as an int64, which PyTorch's arithmetic wraps for uint64)."""
    if dt.is_floating_point:
        return 1 << _MANTISSA_DIGITS[dt._name]
    top = 1 if dt is D.bool_ else int(jnp.iinfo(dt._np).max)
    return top - _U64 if top > _I64_MAX else top


# Unsigned types past uint8: only a few of PyTorch's CPU samplers take them.
_WIDE_UNSIGNED = (D.uint16, D.uint32, D.uint64)


def _int_range(dt, low, high):
    """(low, span) of random_(low, high) for dtype ``dt``; high None: up to the dtype's max."""
    if high is not None:
        if low >= high:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                               f"from={low} >= to={high}")
        _check_in_range(dt, low, high - 1)
        return low, high - low
    if low == _I64_MIN:
        if dt is D.bool_ or dt is D.float16 or dt.is_complex or dt in _WIDE_UNSIGNED:
            raise _not_implemented("random_full_64_bits_range_kernel_cpu", dt)
        if dt not in (D.int64, D.float64, D.float32, D.bfloat16):
            raise RuntimeError("random_full_64_bits_range_kernel_cpu handles only int64, "
                               "double, float and bfloat16")
        return low, 0
    if dt.is_complex:
        raise RuntimeError("random_from_to_impl handles only integral, floating-point and "
                           "boolean types")
    to_inc = _dtype_max(dt)
    if dt.is_floating_point and low >= to_inc:
        raise RuntimeError(f"random_ expects 'from' casted to dtype to be less than or equal to "
                           f"'to_inc' casted to dtype, but got from={low} > to_inc={to_inc}")
    _check_in_range(dt, low, to_inc)
    return low, to_inc - low + 1


def _span_args(low, span):
    """random_'s range as the uint64 scalars the sampler takes (traced, not baked in)."""
    return np.uint64(low % _U64), np.uint64(span % _U64)


# --- factories ------------------------------------------------------------------------------------

def _factory_dtype(dtype, out, default):
    if dtype is not None:
        return D.to_dtype(dtype)
    return out.dtype if out is not None else default


def _draw(op, params, size, dt, device, requires_grad, generator, out):
    key = _key_on(generator, device)
    t = call(op, key, *params, static=(("shape", size), ("dtype", dt._np)))
    return with_out(_finish(t._value(), requires_grad), out)


def _sizes(fname, size, kwargs):
    """``rand(2, 3)``, ``rand((2, 3))`` or ``rand(size=(2, 3))``."""
    for k in kwargs:
        if k != "size":
            raise TypeError(f"{fname}() got an unexpected keyword argument '{k}'")
    return _size((kwargs["size"],) if "size" in kwargs else size)


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False, out=None,
         layout=None, pin_memory=False, **kwargs):
    """Mirrors ``torch.rand``: uniform on [0, 1).

    Example:
        >>> g = torchlike.Generator().manual_seed(0)
        >>> torchlike.rand(2, 3, generator=g).shape
        torch.Size([2, 3])
    """
    dt = _factory_dtype(dtype, out, D.get_default_dtype())
    _require_float(dt, "check_uniform_bounds", complex_ok=True)
    return _draw(RAND, (0.0, 1.0), _sizes("rand", size, kwargs), dt, device,
                 requires_grad, generator, out)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False, out=None,
          layout=None, pin_memory=False, **kwargs):
    """Mirrors ``torch.randn``: standard normal (complex: std 1/sqrt(2) in each part)."""
    dt = _factory_dtype(dtype, out, D.get_default_dtype())
    _require_float(dt, "normal_kernel_cpu", complex_ok=True)
    return _draw(RANDN, (0.0, 1.0), _sizes("randn", size, kwargs), dt, device,
                 requires_grad, generator, out)


def randint(low=0, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad=False, out=None, layout=None, pin_memory=False):
    """Mirrors ``torch.randint(low=0, high, size)``: integers in [low, high), int64 by default."""
    if size is None:
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    if high is None or size is None:
        raise TypeError("randint() missing required argument 'high' or 'size'")
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"randint(): argument 'size' must be tuple of ints, not "
                        f"{type(size).__name__}")
    low, high = (_int_arg(v, _must_be_int("randint", name)) for v, name in ((low, "low"),
                                                                               (high, "high")))
    dt = _factory_dtype(dtype, out, D.int64)
    span = _int_range(dt, low, high)
    return _draw(RANDINT, _span_args(*span), _size((size,)), dt, device, requires_grad,
                 generator, out)


def _like_args(input, dtype, device):
    return (tuple(input.shape), D.to_dtype(dtype) if dtype is not None else input.dtype,
            device if device is not None else input.device)


def rand_like(input, *, generator=None, dtype=None, layout=None, device=None,
              requires_grad=False, memory_format=None):
    """Mirrors ``torch.rand_like``."""
    size, dt, device = _like_args(input, dtype, device)
    _require_float(dt, "check_uniform_bounds", complex_ok=True)
    return _draw(RAND, (0.0, 1.0), size, dt, device, requires_grad, generator, None)


def randn_like(input, *, generator=None, dtype=None, layout=None, device=None,
               requires_grad=False, memory_format=None):
    """Mirrors ``torch.randn_like``."""
    size, dt, device = _like_args(input, dtype, device)
    _require_float(dt, "normal_kernel_cpu", complex_ok=True)
    return _draw(RANDN, (0.0, 1.0), size, dt, device, requires_grad, generator, None)


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, layout=None,
                 device=None, requires_grad=False, memory_format=None):
    """Mirrors ``torch.randint_like(input, low=0, high)``."""
    if high is None:
        low, high = 0, low
    low, high = (_int_arg(v, _must_be_int("randint_like", name))
                 for v, name in ((low, "low"), (high, "high")))
    size, dt, device = _like_args(input, dtype, device)
    span = _int_range(dt, low, high)
    return _draw(RANDINT, _span_args(*span), size, dt, device, requires_grad, generator, None)


_RANDPERM_OVERFLOW = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int"}
_RANDPERM_FLOAT_MAX = {"float16": ("2049", "Half"), "float32": ("2^24+1", "Float"),
                       "float64": ("2^53+1", "Double")}


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    """Mirrors ``torch.randperm``: a random permutation of 0 .. n-1 (int64 by default)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"randperm(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}")
    n = int(n)
    _size((n,))
    dt = _factory_dtype(dtype, out, D.int64)
    if dt is D.bool_ or dt.is_complex or dt in _WIDE_UNSIGNED:
        raise _not_implemented("randperm", dt)
    if dt._name in _RANDPERM_OVERFLOW and n - 1 > int(jnp.iinfo(dt._np).max):
        raise RuntimeError(f"value cannot be converted to type {_RANDPERM_OVERFLOW[dt._name]} "
                           "without overflow")
    limit = _RANDPERM_FLOAT_MAX.get(dt._name)
    if limit is not None and n > 1 + (1 << _MANTISSA_DIGITS[dt._name]):
        raise RuntimeError(f"n cannot be greater than {limit[0]} for {limit[1]} type.")
    key = _key_on(generator, device)
    t = call(RANDPERM, key, static=(("n", n), ("dtype", dt._np)))
    return with_out(_finish(t._value(), requires_grad), out)


PUBLIC = ("Generator", "default_generator", "manual_seed", "seed", "initial_seed",
          "get_rng_state", "set_rng_state", "rand", "randn", "randint", "rand_like",
          "randn_like", "randint_like", "randperm")
