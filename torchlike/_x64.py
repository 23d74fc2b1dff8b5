"""jax's 64-bit types, turned on while torchlike's own code runs and only then.

NOTE [ 64-bit types in torchlike's scope ]
PyTorch's default integer dtype is int64 and float64 is an ordinary dtype; jax has both only while
its flag ``jax_enable_x64`` is on.  Set process-wide (``jax.config.update``), the flag changes what
every other JAX program in the process computes: ``jnp.arange(3)`` becomes int64,
``jax.random.normal(key, (3,))`` float64, and a float32 model written in JAX meets float64 arrays
in ``lax.conv``.  jax also keeps the flag per thread (``jax.enable_x64`` is its context manager,
and it is part of every jit cache key), so torchlike sets the thread's value on where its own code
starts and puts back what was there where it ends:

- eager ops (``_dispatch.call``), the backward engine, the factories (``_creation._place``),
  the random generators, views and in-place writes, optimizer steps, ``torchlike.compile``,
  export, the ``func`` transforms and the other places that call jax themselves;
- ``func.to_jax``'s pure function turns it on around the torchlike code it runs (inside the
  user's ``jax.grad`` / ``jax.jit``, whose own code keeps the user's setting), and
  ``func.from_jax`` runs the user's jax function with the process's setting (NOTE [ the bridge
  and 64-bit types ] in func/_bridge.py).

A thread starts with the process's value, and the scopes set the thread's own, so torchlike code
run from any thread (a user's, a data-loading one) gets the 64-bit types and leaves the other
threads alone.

Code outside these scopes, the user's JAX code included, sees jax's own defaults (or whatever the
user set).  Arrays torchlike made keep their dtypes there: reading them (``np.asarray``,
``.item()``, printing) needs no scope, and JAX code that computes with an int64 / float64 array
while the flag is off truncates it to 32 bits, as jax does for any such array (with jax's
warning).  A user who wants float64 in their own JAX code too, e.g. to compare a float64
torchlike gradient with ``jax.grad``, turns the flag on for the process as usual::

    jax.config.update("jax_enable_x64", True)

Cost: a scope is ``swap_local`` / ``set_local`` on the flag's state, about 0.2 µs (a
``with jax.enable_x64(True):`` block builds a context-manager object and costs about 1 µs); an
eager op costs 5-10 µs.  A scope inside a scope costs the same and changes nothing, so scopes sit
where torchlike's code is entered (a public function, a function it returns, a rule jax calls
back), not around every helper.

Code of torchlike's that calls jax outside these places (a new jitted helper, an eager jnp call
on a Tensor's array, an array made from host data) needs a scope of its own: ``@_x64.scoped``
on a function that issues no ``warnings.warn(..., stacklevel=n)`` (the wrapper is one more
frame), else ``with _x64.on():`` around the jax part.  Without it the call computes in 32 bits
(or warns that jax truncated a 64-bit array).  The test suite runs with that truncation made an
error (NOTE [ 64-bit types in tests ] in tests/conftest.py), and tests/test_jax_defaults.py
runs a sample of every family of the API that calls jax itself.

NOTE [ custom_vjp rules and 64-bit types ]
jax calls a ``custom_vjp``'s backward rule when it runs the backward pass: inside torchlike's
scope when torchlike's engine differentiates, but in the caller's setting when the user's
``jax.grad`` differentiates a ``func.to_jax`` function.  So torchlike's backward rules carry a
scope of their own (``@_x64.scoped``; tests/test_jax_defaults.py checks every ``defvjp``'s).
Forward rules and ``custom_jvp`` rules run while the function is traced, inside the scope
already.

NOTE [ lowering in the caller's setting ]
A program of torchlike's is lowered to XLA where it is compiled: inside the scope for its own
jitted ops, compile and export, but in the caller's setting when the caller's ``jax.jit`` (or
other transform) compiles a ``func.to_jax`` function.  jax lowers a few primitives by tracing
Python that builds constants of the types it finds then, so with 64-bit types off the lowering
of a 64-bit operation fails (jax's own ``with jax.enable_x64(True)`` inside a ``jax.jit`` fails
the same way).  ``jnp.argmax`` is the one torchlike met: its int64 index becomes an int32
``iota`` ("type of return operand ... tensor<i32> doesn't match ... tensor<i64>").  So
torchlike's ops take indices from :func:`argmax` below (an int32 index, widened where PyTorch
returns int64), and tests/test_jax_defaults.py compiles a sample of ops under a caller's
``jax.jit`` with 64-bit types off.  float64 work inside a ``to_jax`` function needs the
caller's 64-bit types on anyway (NOTE [ the bridge and 64-bit types ] in func/_bridge.py).
"""
import functools

import jax

_FLAG = jax.enable_x64   # the flag's state and context manager (public since jax 0.8)


def _switches(flag):
    """(swap, restore): ``swap(value)`` sets the thread's value of ``flag`` and returns what
    ``restore`` needs to put the previous one back.  jax's C++ config state does this in
    ``swap_local`` / ``set_local`` (the previous value, or a sentinel when the thread had none);
    without them, the public context manager does it at its own cost."""
    if hasattr(flag, "swap_local") and hasattr(flag, "set_local"):
        return flag.swap_local, flag.set_local

    def swap(value):
        manager = flag(value)
        manager.__enter__()
        return manager

    def restore(manager):
        manager.__exit__(None, None, None)
    return swap, restore


swap, restore = _switches(_FLAG)


def scoped(fn):
    """``fn`` with 64-bit types on while it runs (NOTE [ 64-bit types in torchlike's scope ])."""
    @functools.wraps(fn)
    def run(*args, **kwargs):
        prev = swap(True)
        try:
            return fn(*args, **kwargs)
        finally:
            restore(prev)
    return run


class on:
    """``with _x64.on():`` -- 64-bit types on for the block."""

    __slots__ = ("_prev",)

    def __enter__(self):
        self._prev = swap(True)

    def __exit__(self, *exc):
        restore(self._prev)


def argmax(a, axis=None, keepdims=False):
    """``jnp.argmax`` with an int32 index, whose lowering builds no 64-bit constant (NOTE
    [ lowering in the caller's setting ]); the same positions, NaN counting as the largest."""
    import jax.numpy as jnp
    if axis is None:
        a, axis, dims = a.ravel(), 0, tuple(range(a.ndim))
    else:
        axis = axis % a.ndim
        dims = (axis,)
    index = jax.lax.argmax(a, axis, jnp.int32)
    return jnp.expand_dims(index, dims) if keepdims else index


def enabled():
    """Whether 64-bit types are on for the calling code right now (its thread's value, else the
    process's)."""
    return _FLAG.value


def process_setting():
    """The flag as set for the process (``jax.config.update``; off by default), which
    torchlike's scopes never change."""
    return _FLAG.get_global()
