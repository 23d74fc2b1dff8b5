"""Random numbers: a Generator holding a jax PRNG key in a Tensor (so compile can capture it),
``manual_seed``, ``rand``, ``randn``, ``randint``.  The streams are jax's, not PyTorch's: the same
seed gives the same numbers in torchlike, not the numbers torch would draw."""
import jax
import numpy as np

from . import _dtype as D
from ._creation import _place, _size
from ._tensor import Tensor

_DEFAULT_SEED = 67280421310721


class Generator:
    """Mirrors ``torch.Generator``."""

    def __init__(self, device="cpu"):
        self.device = device
        self.manual_seed(_DEFAULT_SEED)

    def manual_seed(self, seed):
        seed = int(seed)
        self._seed = seed
        self._key = Tensor._wrap(jax.random.key_data(jax.random.key(seed & 0xFFFFFFFFFFFFFFFF)))
        return self

    def seed(self):
        s = int(np.random.SeedSequence().entropy) & 0x7FFFFFFFFFFFFFFF
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def get_state(self):
        return Tensor._wrap(self._key._value())

    def set_state(self, state):
        self._key._write(state._value())
        return self

    def next_key(self):
        """A fresh subkey; the generator's state advances (a write a compiled step captures)."""
        key = jax.random.wrap_key_data(self._key._value())
        key, sub = jax.random.split(key)
        self._key._write(jax.random.key_data(key))
        return sub


default_generator = Generator()


def manual_seed(seed):
    """Mirrors ``torch.manual_seed``."""
    return default_generator.manual_seed(seed)


def seed():
    """Mirrors ``torch.seed``."""
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def _draw(fn, size, dtype, device, requires_grad, generator):
    gen = generator or default_generator
    t = Tensor._wrap(_place(fn(gen.next_key(), size, dtype), device))
    if requires_grad:
        t._set_requires_grad(True)
    return t


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False, out=None,
         layout=None, pin_memory=False):
    """Mirrors ``torch.rand``: uniform on [0, 1)."""
    dt = D.to_dtype(dtype) if dtype is not None else D.get_default_dtype()
    return _draw(lambda k, s, d: jax.random.uniform(k, s, d._np), _size(size), dt, device,
                 requires_grad, generator)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False, out=None,
          layout=None, pin_memory=False):
    """Mirrors ``torch.randn``: standard normal."""
    dt = D.to_dtype(dtype) if dtype is not None else D.get_default_dtype()
    return _draw(lambda k, s, d: jax.random.normal(k, s, d._np), _size(size), dt, device,
                 requires_grad, generator)


def randint(low=0, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad=False, out=None, layout=None, pin_memory=False):
    """Mirrors ``torch.randint(low=0, high, size)``: integers in [low, high), int64."""
    if size is None:
        low, high, size = 0, low, high
    if high is None:
        raise TypeError("randint() missing required argument 'high'")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    dt = D.to_dtype(dtype) if dtype is not None else D.int64
    return _draw(lambda k, s, d: jax.random.randint(k, s, low, high, d._np), _size((size,)), dt,
                 device, requires_grad, generator)


PUBLIC = ()
TENSOR_METHODS = {}
