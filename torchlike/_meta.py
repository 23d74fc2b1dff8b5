"""The meta device: tensors with a shape and a dtype and no values.

NOTE [ the meta device ]
A meta tensor holds a ``MetaArray`` (a ``jax.ShapeDtypeStruct`` that answers ``devices()`` with
``META``) where other tensors hold a ``jax.Array``.  Nothing is allocated: ``torch.empty(2**40,
device="meta")`` costs what a tuple costs, which is what building a large model on meta is for
(construct it, then ``Module.to_empty(device=...)`` and ``reset_parameters()``, or
``load_state_dict(..., assign=True)``).

An op runs on meta through the same Op, by ``jax.eval_shape`` of its cached jitted forward
(``_dispatch.call`` notices a MetaArray operand in the loop that reads its operands, so other
tensors pay nothing); autograd records as usual and backward runs the same way (``run``).
Factories and random fills make a MetaArray without drawing (the generators do not move, as in
PyTorch, where meta has no generator).  A view's chain and a write through it are shapes only.
What needs values -- reading them on the host (``item``, ``tolist``, printing values), moving off
meta, or an op whose result shape depends on them (``nonzero``, a meta boolean mask) -- raises
PyTorch's NotImplementedError.  As in PyTorch, a 0-dim CPU tensor combines with meta tensors; any
other mix is a RuntimeError.
"""
import jax

from ._quick import inlined


class _MetaDevice:
    """What ``to_jax_device('meta')`` gives: no jax device at all."""

    platform = "meta"
    id = 0

    def __repr__(self):
        return "meta"


META = _MetaDevice()
_DEVICES = frozenset((META,))
NO_DATA = "Cannot copy out of meta tensor; no data!"


class MetaArray(jax.ShapeDtypeStruct):
    """A meta tensor's array: a shape and a dtype, on no device."""

    __slots__ = ()

    def devices(self):
        return _DEVICES

    def __array__(self, dtype=None, copy=None):   # every read of values on the host
        raise NotImplementedError(NO_DATA)


def array(shape, dtype):
    return MetaArray(tuple(shape), dtype)


def is_meta(arr):
    return type(arr) is MetaArray


def evaluate(fn, name, *arrays):
    """``fn``'s outputs as MetaArrays (a tuple stays a tuple), ``arrays`` being MetaArrays,
    concrete arrays or Python scalars; NotImplementedError for an op whose result shape depends
    on its values."""
    try:
        try:
            out = jax.eval_shape(fn, *arrays)
        except ValueError as e:   # a quick program inside (NOTE [ quick compiles ] in _quick.py)
            out = inlined(e, jax.eval_shape, fn, *arrays)
    except (jax.errors.ConcretizationTypeError, jax.errors.TracerBoolConversionError,
            jax.errors.TracerIntegerConversionError, jax.errors.TracerArrayConversionError):
        raise NotImplementedError(f"{name}: attempted to run this operator with Meta tensors, "
                                  "but its result depends on the tensors' values") from None
    return jax.tree_util.tree_map(lambda s: MetaArray(s.shape, s.dtype), out)


def run(fn, name, *arrays):
    """``fn(*arrays)`` (``arrays``: arrays, Python scalars, or one level of tuples of them);
    over meta operands, the shapes of its outputs.  A jitted function called with a MetaArray
    would compile for its shapes before refusing it, so meta operands are looked for first."""
    for a in arrays:
        if type(a) is MetaArray or type(a) is tuple and any(type(x) is MetaArray for x in a):
            return evaluate(fn, name, *arrays)
    try:
        return fn(*arrays)
    except ValueError as e:   # inside another trace (NOTE [ quick compiles ] in _quick.py)
        return inlined(e, fn, *arrays)
