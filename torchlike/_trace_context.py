"""The trace ``torchlike.compile`` is running, for the few places that must behave differently
inside it (NOTE [ whole-step compile ] in _compile/__init__.py): optimizer flags computed from
traced hyper-parameters, and LR scheduler steps, which are replayed after every call."""
import jax
import jax.numpy as jnp

_Tracer = jax.core.Tracer


class Trace:
    def __init__(self, checks=False, jax_trace=None):
        self.concrete = {}   # id(tracer) -> the Python value it stands for
        self.deferred = []   # (fn, args) to replay after every call
        self.backward_ran = False
        # (traced ok, error type, message, traced values for it), where the program raises;
        # None where the trace keeps no checks (an export has no host to raise on)
        self.checks = [] if checks else None
        self.jax_trace = jax_trace   # the jax trace of the step's own values
        self.device = None           # the jax device the step's program runs on
        self.devices = {}            # id(captured tensor) -> its jax device
        self.moved = set()           # ids of captured tensors the step moves to its device
        self.group = None            # the process group whose collectives the step runs
        self.mesh = None             # the devices a step over several devices runs on


active = []


def defer(fn, *args):
    """While a step is being traced, record ``fn(*args)`` to run eagerly after every call of the
    compiled step and return True; otherwise return False (the caller runs it now)."""
    if not active:
        return False
    active[-1].deferred.append((fn, args))
    return True


def check(ok, error, message, *values):
    """While torchlike.compile traces a step: the program raises ``error(message.format(
    *values))`` where the traced boolean ``ok`` is False, before any state changes, as eager
    code raises before its op runs (NOTE [ checks in a compiled step ] in _compile/program.py).
    Does nothing otherwise (eager code checks values on the host itself), nor for a value of a
    jax transform nested in the step (vmap, checkpoint, a custom_vjp's rule): its tracers cannot
    leave that transform."""
    if active and active[-1].checks is not None and \
            getattr(ok, "_trace", None) is active[-1].jax_trace:
        active[-1].checks.append((ok, error, message, values))


def check_in_range(values, lo, hi, error, message, ignore=None):
    """check() that every entry of the traced integer array ``values`` lies in [lo, hi) (or
    equals ``ignore``, as cross-entropy's ignore_index); ``message.format(position, value)``
    names the first one that does not."""
    if active and active[-1].checks is not None and values.size:
        v = values.ravel().astype(jnp.int64)
        bad = (v < lo) | (v >= hi)
        if ignore is not None:
            bad &= v != ignore
        i = jnp.argmax(bad)
        check(~bad.any(), error, message, i, v[i])


def device_of(t):
    """The jax device of the traced tensor ``t`` (None: no step is being traced): a captured
    tensor's own, else the step's (NOTE [ devices in a compiled step ] in _compile/__init__.py)."""
    if not active:
        return None
    trace = active[-1]
    return trace.devices.get(id(t if t._root is None else t._root), trace.device)


def move(t, jd):
    """Whether the traced tensor ``t`` must be copied to reach jax device ``jd``; a captured
    tensor moved to the step's device is moved before each call.  A step runs on one device, so
    a move elsewhere raises."""
    here = device_of(t)
    if here is None or here == jd:
        return False
    trace = active[-1]
    if jd != trace.device:
        from ._device import from_jax_device
        raise RuntimeError(f"a compiled step runs on one device ({from_jax_device(trace.device)})"
                           f"; it cannot move a tensor to {from_jax_device(jd)}: move it outside "
                           "the step")
    trace.moved.add(id(t if t._root is None else t._root))
    return True


def concrete(value):
    """The Python value a traced hyper-parameter stood for when the step was traced; anything
    else unchanged.  Flags computed from it are baked into the program (and guarded)."""
    if active and isinstance(value, _Tracer):
        return active[-1].concrete.get(id(value), value)
    return value


# Bumped whenever a Module's tables change or a tensor's requires_grad does: torchlike.compile
# reuses what it found in a module between calls while this stays the same.
structure = [0]


def structure_changed():
    structure[0] += 1
