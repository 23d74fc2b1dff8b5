"""Random numbers: ``Generator``, seeding and RNG state, and the sampling factories (``rand``,
``randn``, ``randint``, ``randperm`` and the ``_like`` forms).  Sampling from tensors of
parameters (``normal``, ``bernoulli``, ``multinomial``, ``poisson``) and the in-place samplers
(``x.uniform_()``, ``x.normal_()``, ...) live in _ops/sampling.py; their public names are
re-exported here.

NOTE [ random streams ]
The streams are torchlike's own, not PyTorch's: the same seed gives the same numbers in torchlike
on every run, but not the numbers torch would draw.  Shapes, dtypes, devices, autograd
behaviour, errors and the distributions themselves follow PyTorch.

A Generator's state is four uint32 words: the seed (two words) and the number of draws so far
(two words).  Draw number c samples from the key data _draw_key(seed, c), so a draw needs no
device call: eagerly the words are Python ints on the host.  The state is also a Tensor
(``Generator._state``, brought up to date when read), and when that Tensor holds a tracer
(``set_state`` inside a traced program: ``torchlike.compile``, ``to_jax_function``) draws read
and advance it with array ops, so the program takes the state in and hands the advanced state
out and each call draws fresh numbers.  ``get_state`` shows the words as uint8 bytes
(little-endian), which ``set_state`` accepts, traced or not.

Samplers are ops of the op table whose inputs are the sample's parameters and the draw's key
data (an array that never requires grad), so they run jitted in eager mode and trace as they
are.  Uniform-based samplers hash their bits from the key (NOTE [ fast random bits ]); the
others use jax.random with the key data as a raw key.

NOTE [ a generator per device ]
As in PyTorch, each device has its own default generator: ``default_generator`` is the CPU's,
and every other device (``cuda:0``, ``cuda:1``, ``xla:0``, ...) gets one when a draw first needs
it, made on that device (its state Tensor lives there, so a traced step on an accelerator never
reads a CPU key).  A draw without a ``generator`` takes the default generator of the device the
result lands on: ``randn(3, device="cuda")`` draws from the current cuda device's, dropout on a
cuda tensor from that tensor's device's.  ``torch.manual_seed`` seeds every one of them (and
those made later start from its seed), ``torch.cuda.manual_seed`` the current cuda device's,
``manual_seed_all`` those of every device of the type.  ``Generator(device="cuda")`` makes a
generator of the current cuda device; a generator of one device type given for a draw on
another raises PyTorch's error.  The CPU stream is unchanged by all this: a seed gives the
numbers it gave before.
"""
import functools
import math
import os
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from . import _dtype as D, _meta, _x64
from ._creation import (_finish, _place, _size, check_alloc, check_nonnegative, put,
                        get_default_device, size_arg)
from ._device import (current_index, device as _device_cls, devices_of, from_jax_device,
                      to_jax_device)
from ._dispatch import Op, remember, with_out
from ._host import RENT, top_level
from ._meta import META
from ._quick import inlined, quick_jit
from ._tensor import Tensor

_DEFAULT_SEED = 67280421310721
_U64 = 1 << 64
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1
_Tracer = jax.core.Tracer


# --- Generator ------------------------------------------------------------------------------------

_MASK = 0xFFFFFFFF


def _mix32(x):
    """The "lowbias32" integer hash (C. Wellons): a bijection on uint32 with near-ideal
    avalanche.  Works on Python ints and on uint32 arrays alike (NOTE [ fast random bits ])."""
    x = ((x ^ (x >> 16)) * 0x7FEB352D) & _MASK
    x = ((x ^ (x >> 15)) * 0x846CA68B) & _MASK
    return x ^ (x >> 16)


def _keyed_words(count, k0, k1):
    """Word ``count`` of the draw with key data (k0, k1): uint32 arrays of jax's or numpy's,
    which compute it alike (NOTE [ fast random bits ])."""
    return _mix32(_mix32(count ^ k0) + k1)


def _draw_key(s_lo, s_hi, c_lo, c_hi):
    """The key data (two words) of draw number ``c`` from seed ``s`` (words of each)."""
    k0 = _mix32(_mix32(c_lo ^ s_lo) ^ s_hi)
    return k0, _mix32((_mix32(c_hi ^ s_hi) + k0 + 0x9E3779B9) & _MASK)


@jax.jit
def _words_to_bytes(words):
    shifts = jnp.asarray(_BYTE_SHIFTS, jnp.uint32)
    return ((words[:, None] >> shifts) & 0xFF).astype(jnp.uint8).reshape(-1)


@jax.jit
def _bytes_to_words(data):
    shifts = jnp.asarray(_BYTE_SHIFTS, jnp.uint32)
    return jnp.sum(data.reshape(-1, 4).astype(jnp.uint32) << shifts, axis=1, dtype=jnp.uint32)


_BYTE_SHIFTS = (0, 8, 16, 24)


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
        self.device = _generator_device(device)
        self._tensor = None
        self.manual_seed(_DEFAULT_SEED)

    # NOTE: the state is four uint32 words, [seed lo, seed hi, draws lo, draws hi]; draw number
    # c samples from the key _draw_key(seed, c).  Eagerly the words live on the host (``_words``,
    # Python ints), so a draw costs no device call, and ``_state`` (the Tensor) is brought up to
    # date when read.  A traced state (set_state with a tracer) lives in the Tensor only
    # (``_words`` is None) and draws advance it with array ops.  Code that writes the Tensor
    # directly must call ``_reload()`` afterwards.

    @property
    def _state(self):
        """The state as a uint32 Tensor of four words, up to date."""
        if self._stale:
            words = _place(np.asarray(self._words, np.uint32), self.device)
            if self._tensor is None:
                self._tensor = Tensor._wrap(words)
            else:
                self._tensor._write(words)
            self._stale = False
        return self._tensor

    def _reload(self):
        """Take the state from the Tensor (after a direct write to it, e.g. a compiled step's
        result); its words are read to the host when an eager draw first needs them, so a
        compiled step's state stays on its device until then."""
        self._words, self._stale = None, False

    def _host_words(self):
        """The state's words as Python ints, None while the state is traced."""
        if self._words is None:
            arr = self._tensor._value()
            if not isinstance(arr, _Tracer):
                self._words = [int(w) for w in np.asarray(arr)]
        return self._words

    def manual_seed(self, seed):
        """Mirrors ``torch.Generator.manual_seed``: reseed; returns the generator."""
        seed = _seed_value(seed)
        self._words, self._stale = [seed & _MASK, seed >> 32, 0, 0], True
        return self

    def seed(self):
        """Mirrors ``torch.Generator.seed``: reseed from OS entropy; returns the new seed."""
        s = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(s)
        return s

    def initial_seed(self):
        """Mirrors ``torch.Generator.initial_seed``: the seed the state started from."""
        words = self._host_words() or [int(w) for w in np.asarray(self._state._value()[:2])]
        return words[0] | words[1] << 32

    def get_state(self):
        """Mirrors ``torch.Generator.get_state``: the state as a uint8 Tensor, on the CPU (as
        PyTorch returns a cuda generator's) unless the state is traced."""
        data = _words_to_bytes(self._state._value())
        if self.device.type != "cpu" and not isinstance(data, _Tracer):
            data = _place(data, CPU)
        return Tensor._wrap(data)

    def set_state(self, new_state):
        """Mirrors ``torch.Generator.set_state``: restore a state from ``get_state``."""
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        if new_state.dtype is not D.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        if new_state.numel() != 16:
            raise RuntimeError(f"Expected a torchlike.Generator state of size 16 but found "
                               f"the input RNG state size to be {new_state.numel()}")
        words = _bytes_to_words(new_state._value())
        if not isinstance(words, _Tracer):
            words = _place(words, self.device)
        self._state._write(words)
        self._reload()
        return self

    def clone_state(self):
        """Mirrors ``torch.Generator.clone_state``: a new generator in the same state."""
        return Generator(self.device).set_state(self.get_state())

    def __reduce__(self):
        return _rebuild_generator, (str(self.device), np.asarray(self.get_state()._value()))

    def _next(self):
        """Key data for one draw; the state advances (a write a traced step hands out)."""
        w = self._host_words()
        if w is not None:
            c = (w[2] | w[3] << 32) + 1
            self._words, self._stale = [w[0], w[1], c & _MASK, (c >> 32) & _MASK], True
            return np.asarray(_draw_key(*w), np.uint32)
        state = self._tensor._value()
        c_lo = state[2] + 1
        self._tensor._write(state.at[2].set(c_lo).at[3].add((c_lo == 0).astype(jnp.uint32)))
        return jnp.stack(_draw_key(*state))

    def next_key(self):
        """A fresh jax PRNG key; the generator's state advances."""
        return jax.random.wrap_key_data(jnp.asarray(self._next()))


def _rebuild_generator(device, state):
    return Generator(device).set_state(Tensor._wrap(jnp.asarray(state)))


CPU = _device_cls("cpu")
# what PyTorch says when a device type has no generator (no such device)
_NO_GENERATOR = {
    "cuda": "Cannot get CUDA generator without ATen_cuda library.",
    "xpu": "Cannot get XPU generator without ATen_xpu library.",
    "mps": "Cannot execute getNewGenerator() without MPS backend.",
    "xla": "Cannot get XLA generator without torch_xla library.",
    "tpu": "Cannot get XLA generator without torch_xla library.",
    "meta": "META device type not an accelerator.",
}


def _generator_device(device):
    """The device a Generator(device) lives on: 'cpu', or an accelerator device with its index
    (the current one when none is given), which must exist."""
    d = device if isinstance(device, _device_cls) else _device_cls(device)
    if d.type == "cpu":
        return CPU
    if not devices_of(d.type):
        raise RuntimeError(_NO_GENERATOR[d.type])
    d = _device_cls(d.type, current_index(d.type) if d.index is None else d.index)
    to_jax_device(d)
    return d


default_generator = Generator()
_device_generators = {}   # (type, index) -> that device's default generator (not the CPU's)
_seeds_for = {}           # type -> the seed manual_seed_all gave (for generators made later)
_by_jax_device = {}       # jax device -> its default generator


def device_generator(device):
    """The default generator of torch device ``device`` (NOTE [ a generator per device ])."""
    d = device if isinstance(device, _device_cls) else _device_cls(device)
    if d.type in ("cpu", "meta"):
        return default_generator
    key = (d.type, current_index(d.type) if d.index is None else d.index)
    g = _device_generators.get(key)
    if g is None:
        g = Generator(_device_cls(*key)).manual_seed(_seeds_for.get(d.type, _DEFAULT_SEED))
        _device_generators[key] = g
    return g


def _generator_on(jax_device):
    """The default generator of a jax device."""
    g = _by_jax_device.get(jax_device)
    if g is None:
        g = _by_jax_device[jax_device] = device_generator(from_jax_device(jax_device))
    return g


def device_generators(type):
    """The default generators of every device of ``type`` ('cuda', 'xla', ...), made if new."""
    return [device_generator(_device_cls(type, i)) for i in range(len(devices_of(type)))]


def default_generators():
    """Every device's default generator, the CPU's first (for code that captures them all)."""
    types = dict.fromkeys(from_jax_device(jd).type for jd in jax.devices())
    return [default_generator] + [g for t in types if t != "cpu" for g in device_generators(t)]


def manual_seed_all(type, seed):
    """Seed the default generator of every ``type`` device, and those made later."""
    seed = _seed_value(int(seed))
    _seeds_for[type] = seed
    for (t, _), g in _device_generators.items():
        if t == type:
            g.manual_seed(seed)


_ACCELERATOR_TYPES = ("cuda", "xla", "tpu", "mps", "xpu")


def manual_seed(seed):
    """Mirrors ``torch.manual_seed``: reseed the default generator of every device (the CPU's
    and each accelerator's); returns the CPU's."""
    g = default_generator.manual_seed(int(seed))
    for t in _ACCELERATOR_TYPES:
        manual_seed_all(t, seed)
    return g


def seed():
    """Mirrors ``torch.seed``: reseed the default generators from OS entropy (one seed for every
    device, as PyTorch); returns it."""
    s = default_generator.seed()
    for t in _ACCELERATOR_TYPES:
        manual_seed_all(t, s)
    return s


def initial_seed():
    """Mirrors ``torch.initial_seed``."""
    return default_generator.initial_seed()


def get_rng_state():
    """Mirrors ``torch.get_rng_state``: the default generator's state (uint8 Tensor)."""
    return default_generator.get_state()


def set_rng_state(new_state):
    """Mirrors ``torch.set_rng_state``."""
    default_generator.set_state(new_state)


def _gen(generator, jax_device=None):
    """``generator``, checked, or (None) the default generator of ``jax_device`` (None: the
    CPU's)."""
    if generator is None:
        return default_generator if jax_device is None else _generator_on(jax_device)
    if not isinstance(generator, Generator):
        raise TypeError(f"argument 'generator' must be torch.Generator, not "
                        f"{type(generator).__name__}")
    if jax_device is not None:
        want = from_jax_device(jax_device).type
        if generator.device.type != want:
            raise RuntimeError(f"Expected a '{want}' device type for generator but found "
                               f"'{generator.device.type}'")
    return generator


def _key(generator, like=None):
    """Key data for one draw from ``generator`` (None: the default generator of the device of
    Tensor ``like``, or the CPU's): numpy when eager (it goes to the jitted sampler as an
    argument), an array when the state is traced; for a meta ``like``, a key with no values
    and no draw."""
    if like is None:
        return _gen(generator)._next()
    jax_device = like._device()
    if jax_device is META:
        return _meta.array((2,), np.uint32)
    return _gen(generator, jax_device)._next()


_FACTORY_PROGRAMS = 256   # NOTE [ bounded program caches ] in _dispatch.py: static has the size


@functools.lru_cache(maxsize=_FACTORY_PROGRAMS)
def _factory_program(op, static, device, n_params, chunk=False):
    """The jitted sampler of a factory (rand, randperm, x.uniform_(), ...) for ``device``.  Its
    one input, the draw's key data and scalar parameters packed in one host array (one argument
    transfer instead of one per value), comes from the host, so the program itself places and
    commits the result to ``device``, like every array torchlike makes (a device_put would
    cost more than the draw).  ``chunk``: the key data has a third word, the first counter of a
    chunk of a larger draw (NOTE [ random draws in chunks ])."""
    kw = dict(static)
    words = 3 if chunk else 2

    def run(packed):
        params = [packed[words + i] for i in range(n_params)]
        return op.fn(packed[:words].astype(jnp.uint32), *params, **kw).astype(kw["dtype"])
    return quick_jit(run, out_shardings=jax.sharding.SingleDeviceSharding(device))


# NOTE [ random draws in chunks ]
# Building a model draws every parameter's initial values (``kaiming_uniform_``, ``normal_``),
# and every new shape of a draw compiled a program of its own: tens of milliseconds each, a few
# hundred for an ordinary model, where drawing the numbers takes microseconds.  A draw's
# element i is a function of its counter i alone (NOTE [ fast random bits ]) where each element
# takes one word, which every sampler below built on ``random_uniform`` does for the float
# dtypes of at most 32 bits (float64 and the integers take two words, from both halves of the
# draw's counters).  So such a draw of at most
# ``_CHUNKED`` elements on a CPU runs one program of ``_CHUNK`` elements whose key data carries
# the chunk's first counter, once per chunk, and the chunks are joined and cut on the host:
# element for element the numbers of the draw's own program (the same arithmetic on the same
# word; tests/test_random.py compares them bit for bit), and one program per sampler and dtype
# serves every shape.  A draw of one shape made ``RENT`` times (a ``randn`` in a training loop)
# compiles its own program from the next one on, which runs without the host's join (a chunk
# of normals takes 0.6-0.7 ms with the host's part, so the rent of one shape costs about as
# much as compiling its program; 2-core CPU).
# Building a model in a fresh process (2-core CPU, jax 0.10.2, two runs each): the digits CNN
# (8 draws) 0.54, 0.51 -> 0.14, 0.13 s; scripts/bench_train.py's Transformer 0.66, 0.67 ->
# 0.32, 0.29 s; 20 linear layers of growing widths 2.15, 2.00 -> 0.13, 0.15 s.  A parameter's
# draw under no_grad (``nn.init``) is such a factory draw too (sampling.py's ``_fill``).
_CHUNK = 1 << 16        # elements a chunk's program draws
_CHUNKED = 1 << 20      # elements: the largest draw made in chunks
_ONE_WORD = frozenset({"rand", "randn", "uniform_", "normal_", "bernoulli_", "exponential_",
                       "log_normal_", "cauchy_"})   # element i from word i, for floats <= 32 bits
_chunked_draws = {}     # (op, static, device) -> draws of that shape made in chunks so far


def _in_chunks(op, static, device, key, params):
    """The sample of factory ``op`` (``static``: its shape and dtype) drawn in chunks on the
    host's CPU ``device``, or None where its own program should run (NOTE [ random draws in
    chunks ])."""
    if op.name not in _ONE_WORD:
        return None
    at = (op, static, device)
    draws = _chunked_draws.get(at)
    if draws is None:   # (a draw its own program makes is filed as paid: one lookup from then)
        kw = dict(static)
        shape, dtype = kw.get("shape"), kw["dtype"]
        n = None if shape is None else math.prod(shape)
        chunkable = n is not None and 0 < n <= _CHUNKED and dtype.itemsize <= 4 and \
            jnp.issubdtype(dtype, jnp.floating) and from_jax_device(device).type == "cpu"
        draws = 0 if chunkable else RENT
        remember(_chunked_draws, at, draws, _FACTORY_PROGRAMS)
    if draws >= RENT or not top_level():
        return None
    _chunked_draws[at] = draws + 1
    kw = dict(static)
    shape, dtype = kw["shape"], kw["dtype"]
    n = math.prod(shape)
    program = _factory_program(op, (("shape", (_CHUNK,)), ("dtype", dtype)), device,
                               len(params), True)
    k0, k1 = key.tolist()
    chunks = [np.asarray(program(np.array([k0, k1, start, *params], np.float64)))
              for start in range(0, n, _CHUNK)]
    flat = chunks[0] if len(chunks) == 1 else np.concatenate(chunks)
    return put(np.array(flat[:n]).reshape(shape), device)


# NOTE [ integer draws on the host ]
# XLA's CPU client runs a device's programs in the order they were queued (NOTE [ views read on
# the host ] in _views.py), so a draw's program runs after all the work queued before it, and a
# loop that reads its draw at once waits for the whole of its last step: a random batch's offsets
# (examples/pytorch/char_lstm.py's ``torch.randint(n, (32,)).tolist()``, nanoGPT's ``for i in
# ix``) waited 5-5.4 ms a step for the last step's backward and update, where torch has them at
# once.  An integer draw's element is a hash of the draw's key data and its counters in uint32
# and uint64 arithmetic (``_ints``, NOTE [ fast random bits ]), which numpy computes exactly as
# XLA does; so ``randint`` of at most ``_HOST_INTS`` elements on a CPU is computed with numpy and
# placed on the device (``put``, which waits for no program): the same numbers (tests compare
# them with the program's), ready at once, and no program compiled for a new shape.  Other
# devices, traced draws and larger ones run the program.  char_lstm still waits, later: its
# embedding checks the batch the slices' stack makes, a program queued behind the last step; but
# the batch's 64 slices and two stacks are now dispatched while that step runs, where the
# device sat idle as they were (alternated in one process, windows of 10 steps, two runs; 2-core
# CPU, 2026-12-07: its training step 8.90, 9.63 -> 8.33, 8.88 ms).
_HOST_INTS = 4096


def _ints_on_host(static, device, key, params):
    """``randint``'s sample (``static``: its shape and dtype; ``params``: low and span as
    uint64) computed with numpy and placed on the CPU ``device``, or None where its program
    should run (NOTE [ integer draws on the host ])."""
    kw = dict(static)
    shape, dtype = kw["shape"], kw["dtype"]
    n = math.prod(shape)
    if n > _HOST_INTS or dtype.kind not in "biu" or not top_level() or \
            from_jax_device(device).type != "cpu":
        return None
    k0, k1 = np.asarray(key, np.uint32)
    words = _keyed_words(np.arange(2 * n, dtype=np.uint32), k0, k1)
    return put(np.asarray(_ints_of(words, shape, dtype, *params)), device)


@_x64.scoped
def _sample_on(op, device, generator, *params, static):
    """A factory's sample as a jax array (eager: on ``device``; traced: as the trace places it).
    ``params`` are Python floats, or numpy uint64 values (integer samplers)."""
    target = to_jax_device(get_default_device() if device is None else device)
    if target is META:   # no values, no draw: the generators stay where they are
        kw = dict(static)
        return _meta.array(kw["shape"] if "shape" in kw else (kw["n"],), kw["dtype"])
    key = _gen(generator, target)._next()
    if isinstance(key, _Tracer):
        return op.fn(key, *params, **dict(static))
    wide = params and isinstance(params[0], np.unsignedinteger)
    if not wide and (drawn := _in_chunks(op, static, target, key, params)) is not None:
        return drawn
    if op is RANDINT and (drawn := _ints_on_host(static, target, key, params)) is not None:
        return drawn
    packed = np.array([*key.tolist(), *params], np.uint64 if wide else np.float64)
    program = _factory_program(op, static, target, len(params))
    try:
        return program(packed)
    except ValueError as e:   # inside another trace (NOTE [ quick compiles ] in _quick.py)
        return inlined(e, program, packed)


# --- distributions: pure functions (key, shape, dtype, *params) -> sample ----------------------

# NOTE [ fast random bits ]
# jax.random's threefry costs ~15 ns per number on a CPU (a 64x64 rand took ~70 µs, five times a
# recorded mul), so uniform draws (rand, randn, bernoulli, dropout, ...) take their bits from a
# keyed counter hash instead: word i of a draw is mix(mix(i ^ k0) + k1), with (k0, k1) the draw's
# key data and mix the "lowbias32" integer hash (C. Wellons), a bijection on uint32 with
# near-ideal avalanche; the two keyed rounds decorrelate neighbouring counters and keys.  This is
# a statistical generator for simulation and training, not a cryptographic one (neither is
# torch's).  The counters are materialised before the hash (optimization_barrier): XLA's CPU
# backend runs the hash ~3x slower when it is fused with the iota.  Integers take two words each.
# randperm sorts the indices by 64-bit keys of these bits (one sort; any tie is as likely as two
# equal 64-bit draws, and still leaves a permutation): jax.random.permutation's rounds of sorts
# took 215-250 ms to compile and 0.28 ms to run for n = 1437 on the 2-core CPU (a DataLoader's
# shuffle of scikit-learn's digits), the one sort 45-65 ms and 0.15-0.17 ms.  Distributions with
# their own algorithms (poisson, multinomial, geometric) stay on jax.random, keyed by the same
# key data.

def random_bits(key, n):
    """``n`` pseudo-random uint32 words from key data ``key`` (NOTE [ fast random bits ])."""
    key = jnp.asarray(key).astype(jnp.uint32).reshape(-1)
    count = jax.lax.iota(jnp.uint32, n)
    if key.shape[0] > 2:   # a chunk of a larger draw (NOTE [ random draws in chunks ])
        count = count + key[2]
    count = jax.lax.optimization_barrier(count)
    return _keyed_words(count, key[0], key[1])


def random_uniform(key, shape, dtype, low=0.0, high=1.0):
    """Uniform samples on [low, high) of a float ``dtype``, from :func:`random_bits`: as many
    random bits as the dtype's mantissa holds (24 for float32, 53 for float64)."""
    dtype = jnp.dtype(dtype)
    n = math.prod(shape)
    nbits = jnp.finfo(dtype).nmant + 1
    if nbits > 32:
        w = random_bits(key, 2 * n).reshape(2, n).astype(jnp.uint64)
        u = ((w[0] << 21) ^ (w[1] >> 11)).astype(jnp.float64) * 2.0 ** -53
    else:
        u = ((random_bits(key, n) >> (32 - nbits)).astype(jnp.int32).astype(jnp.float32)
             * np.float32(2.0 ** -nbits))
    u = u.reshape(shape).astype(dtype)
    return jnp.maximum(low, u * (high - low) + low).astype(dtype)


def random_normal(key, shape, dtype):
    """Standard normal samples: the inverse error function of a uniform on (-1, 1), as jax's
    own normal sampler computes them."""
    dtype = jnp.dtype(dtype)
    tiny = 2.0 ** -53 if dtype.itemsize > 4 else 2.0 ** -24
    u = random_uniform(key, shape, dtype) * 2 - (1 - tiny)
    return (np.sqrt(2) * jax.lax.erf_inv(u)).astype(dtype)


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
    return random_uniform(key, shape, dtype, low, high)


@_componentwise
@_in_float32
def _normal(key, shape, dtype, mean, std, complex_=False):
    # NOTE: a complex normal of std s has std s / sqrt(2) in each part, as in PyTorch.
    scale = std / math.sqrt(2) if complex_ else std
    return mean + scale * random_normal(key, shape, dtype)


def _ints(key, shape, dtype, low, span):
    """Integers in [low, low + span) (span 0: all 2**64), as PyTorch's random_: bits % span."""
    return _ints_of(random_bits(key, 2 * math.prod(shape)), shape, dtype, low, span)


def _ints_of(words, shape, dtype, low, span):
    """``_ints`` from a draw's words (uint32, two an integer), jax's or numpy's (NOTE [ integer
    draws on the host ])."""
    xp = np if type(words) is np.ndarray else jnp
    w = words.reshape((2,) + tuple(shape)).astype(xp.uint64)
    bits = (w[0] << 32) | w[1]
    v = xp.where(span == 0, bits, bits % xp.maximum(span, 1)) + low
    v = v.view(np.int64) if xp is np else jax.lax.bitcast_convert_type(v, jnp.int64)
    return v.astype(dtype)


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
    """A uniformly random permutation of 0 .. n-1 (NOTE [ fast random bits ])."""
    w = random_bits(key, 2 * n).reshape(2, n).astype(jnp.uint64)
    order = jnp.arange(n, dtype=jnp.int64)
    return jax.lax.sort_key_val((w[0] << 32) | w[1], order, is_stable=False)[1].astype(dtype)


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


@functools.lru_cache(maxsize=None)
def _limits(dt):
    """The least and greatest values of dtype ``dt`` (jnp.finfo and jnp.iinfo take 2-4 µs a
    call, which a draw per step would pay)."""
    if dt.is_floating_point:
        info = jnp.finfo(dt._np)
        return float(info.min), float(info.max)
    if dt is D.bool_:
        return 0, 1
    if not dt.is_complex:
        info = jnp.iinfo(dt._np)
        return int(info.min), int(info.max)
    raise RuntimeError("check_random_bounds handles only integral, floating-point and boolean "
                       "types")


def _check_in_range(dt, low, to_inc):
    """PyTorch's bounds for random_'s [low, to_inc] in dtype ``dt``: errors past what the dtype
    holds, warnings past the integers a float dtype represents exactly."""
    name = _C_NAMES[dt._name]
    lo, hi = _limits(dt)
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
    check_alloc(size, dt, device)
    arr = _sample_on(op, device, generator, *params, static=(("shape", size), ("dtype", dt._np)))
    return with_out(_finish(arr, requires_grad), out)


def _sizes(fname, size, kwargs):
    """``rand(2, 3)``, ``rand((2, 3))`` or ``rand(size=(2, 3))``."""
    for k in kwargs:
        if k != "size":
            raise TypeError(f"{fname}() got an unexpected keyword argument '{k}'")
    return _size(fname, size, kwargs.get("size"))


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
    position = 3
    if size is None:
        low, high, size, position = 0, low, high, 2
    elif high is None:
        low, high = 0, low
    if high is None or size is None:
        raise TypeError("randint() missing required argument 'high' or 'size'")
    size = size_arg("randint", size, position)
    low, high = (_int_arg(v, _must_be_int("randint", name)) for v, name in ((low, "low"),
                                                                               (high, "high")))
    dt = _factory_dtype(dtype, out, D.int64)
    span = _int_range(dt, low, high)
    return _draw(RANDINT, _span_args(*span), size, dt, device, requires_grad, generator, out)


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
    check_nonnegative("randperm", (n,))
    dt = _factory_dtype(dtype, out, D.int64)
    if dt is D.bool_ or dt.is_complex or dt in _WIDE_UNSIGNED:
        raise _not_implemented("randperm", dt)
    if dt._name in _RANDPERM_OVERFLOW and n - 1 > int(jnp.iinfo(dt._np).max):
        raise RuntimeError(f"value cannot be converted to type {_RANDPERM_OVERFLOW[dt._name]} "
                           "without overflow")
    limit = _RANDPERM_FLOAT_MAX.get(dt._name)
    if limit is not None and n > 1 + (1 << _MANTISSA_DIGITS[dt._name]):
        raise RuntimeError(f"n cannot be greater than {limit[0]} for {limit[1]} type.")
    check_alloc((n,), dt, device)
    arr = _sample_on(RANDPERM, device, generator, static=(("n", n), ("dtype", dt._np)))
    return with_out(_finish(arr, requires_grad), out)


PUBLIC = ("Generator", "default_generator", "manual_seed", "seed", "initial_seed",
          "get_rng_state", "set_rng_state", "rand", "randn", "randint", "rand_like",
          "randn_like", "randint_like", "randperm")
