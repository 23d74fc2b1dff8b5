"""Small data movement of ever new shapes, done on the host instead of compiled.

NOTE [ new shapes moved on the host ]
A loop whose shapes keep changing compiles every op again for each new shape (NOTE [ programs for
ever new shapes ] in _quick.py), and most of those programs in a generation loop only move data:
examples/pytorch/transformer_lm.py's 40-character sample compiled 280 programs, 156 of them
slices, a causal layer's padding and cut, and the cat that grows the context, and 29 more its
embedding's gathers, each over a few thousand elements at most and run once or twice.  The first
call of such a program takes 17-18 ms (tracing, lowering, and XLA's compile, which makes an MLIR
context and an LLVM module for the smallest program; 2-core CPU, jax 0.10.2), and the calls
after it 20-30 µs (torchlike's and jax's dispatch); done with numpy and the result placed on the
device (``_creation.put``), such a call takes 40-55 µs: a compile costs as much as some 600
calls on the host.

So where every operand is a concrete array of at most ``_quick._SMALL`` elements committed to one
CPU device, and the op's programs have been traced for more than ``SHAPES_MET`` shapes, a slice,
a pad with zeros, a cat or an embedding's gather (ops whose ``pieces`` call ``moved_on_host``)
runs with numpy for the first ``RENT`` calls of each combination of shapes and arguments, and
compiles as before from the next one on: a shape a loop keeps meeting runs its program after a
few calls, and a shape met a few times costs no compile.  Moving data is exact either way (the
same elements, no arithmetic: an embedding's indices were checked on the host already), and the
result is an array like the program's, committed to the same device.  Reading an operand on the
host waits for the ops that compute it, where the program would have been queued behind them;
the rent's few calls a shape pay that.  On another kind of device the arrays would cross to the
host and back, so nothing changes there; nor for operands that are traced, pending (lazy mode)
or on meta.  An op past ``SHAPES_MET`` pays its calls over small arrays 1.5-2 µs more for the
lookup of their shapes (a small slice 15.9 -> 17.4 µs), its rent or not; one met in a few shapes
(a model's own slices) pays nothing.  At 16 shapes (the level-0 count, NOTE [ programs for ever
new shapes ]) transformer_lm compiled 293 programs where it compiled 418 (its generation 155
where 280), and XLA's compiles took 5.88, 5.57 s where they took 8.49, 8.19
(scripts/bench_programs.py, two interleaved runs on a busy machine; the wall time 21.2, 20.6 ->
15.6, 15.1 s, torch's 7.5-8.9 s); at 4 its generation compiles 107 and takes 2.67, 2.58 s where
it took 3.72, 3.74 (60 training steps, then the sample; in one process, interleaved), since the
first sixteen shapes of the pad, the cat and the embedding compiled too, and the whole program
compiles 245 (XLA's compiles 5.46, 4.57 s where 7.60, 7.57 without the host moves, the wall
time 15.8, 13.4 s where 18.2, 18.1; two more interleaved rounds).
"""
import ml_dtypes
import numpy as np
from jax.sharding import SingleDeviceSharding

from . import _quick
from ._creation import put
from ._dispatch import remember
from ._tensor import ArrayImpl

SHAPES_MET = 4        # traces of an op's programs before its new small shapes move here
RENT = 4              # host calls of one combination of shapes before its program compiles
_RENTED = {}          # (op, static, operand avals) -> host calls so far
_MAX_RENTED = 4096    # (NOTE [ bounded program caches ] in _dispatch.py)


def moved_on_host(op, static, arrays, move, movable=None):
    """``move(static, *numpy arrays)`` (a numpy array) of ``arrays``, placed on their CPU device,
    where ``op`` keeps meeting new small shapes and ``movable(static, arrays)`` (if given) holds
    (NOTE [ new shapes moved on the host ]); None where its program should run."""
    if op._traces[0] <= SHAPES_MET or movable is not None and \
            not movable(static, arrays):
        return None
    avals = []
    for a in arrays:
        if type(a) is not ArrayImpl:
            return None
        aval = a.aval
        if aval.size > _quick._SMALL or not (aval.dtype.kind in "biufc" or
                                             aval.dtype == ml_dtypes.bfloat16):
            return None
        avals.append((aval.shape, aval.dtype))
    key = (op, static, tuple(avals))
    calls = _RENTED.get(key, 0)
    if calls >= RENT:
        return None
    sharding = arrays[0].sharding
    if type(sharding) is not SingleDeviceSharding or \
            any(not a.committed or a.sharding != sharding for a in arrays):
        return None
    device = next(iter(sharding.device_set))
    if device.platform != "cpu":
        if not calls:   # (filed as paid: these shapes on an accelerator run the program at once)
            remember(_RENTED, key, RENT, _MAX_RENTED)
        return None
    if calls:
        _RENTED[key] = calls + 1
    else:
        remember(_RENTED, key, 1, _MAX_RENTED)
    # (a copy: numpy's view of an operand may be its device buffer, which a result placed
    # without copying would then share)
    return put(np.array(move(static, *[np.asarray(a) for a in arrays])), device)
