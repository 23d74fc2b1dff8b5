"""Ever new shapes run without compiling: data moved on the host, rows run in buckets.

NOTE [ new shapes moved on the host ]
A loop whose shapes keep changing compiles every op again for each new shape (NOTE [ programs for
ever new shapes ] in _quick.py), and most of those programs in a generation loop only move data:
examples/pytorch/transformer_lm.py's 40-character sample compiled 280 programs, 156 of them
slices, a causal layer's padding and cut, and the cat that grows the context, and 29 more its
embedding's gathers; a nanoGPT-style sample (a hand-written causal attention: views, transposes,
a split of the fused projection; 100 tokens, 64 of context) compiled 1,786, 955 of them views and
splits.  The first call of such a program takes 17-25 ms (tracing, lowering, and XLA's compile,
which makes an MLIR context and an LLVM module for the smallest program; 2-core CPU, jax 0.10.2),
and the calls after it 20-30 µs (torchlike's and jax's dispatch); done with numpy and the result
placed on the device (``_creation.put``), such a call takes 40-70 µs up to 16,384 elements, 150
at 65,536 and 240 at 262,144 (a view; its program 30, 65 and 90 µs): a compile costs as much as
some hundred calls on the host.

So an op with a ``cold`` rule (a slice, a pad with zeros, a cat, an embedding's gather, a split
and the view ops: view, _unsafe_view, transpose, t, permute, unsqueeze, squeeze, expand, select)
tries it where its program has not run for its operands' avals (``Op._hot``, in _dispatch.py's
``eager_forward``: a call of a shape already run pays only that lookup, 0.3-0.6 µs; the rent's
own lookup, 1.5-2 µs, which slices and cats paid on every call once their op met a few shapes,
is paid by such calls alone).  Where every operand it reads is a concrete array of at most
``MOVED`` elements committed to one CPU device, no jax trace is open, and the op's programs have
been traced for more than ``MOVES_MET`` shapes, the rule runs it with numpy for the first
``RENT`` calls of each combination of shapes and arguments, and the program compiles as before
from the next one on: a shape a loop keeps meeting runs its program after a few calls (16: the
nanoGPT sample cuts each length's views six times a step, the heads' q, k and v in two layers),
and a shape met a few times costs no compile; ``RENT`` calls on the host cost at most 2-4 ms
more than the program's would, a compile's time.  Moving data is exact either way (the same
elements, no arithmetic: an embedding's indices were checked on the host already), and the
result is an array like the program's, committed to the same device.  Reading an operand on the
host waits for the ops that compute it, where the program would have been queued behind them;
the rent's few calls a shape pay that.  On another kind of device the arrays would cross to the
host and back, so nothing changes there (nor on a CPU device presented as CUDA, which stands for
one); nor for operands that are traced, pending (lazy mode) or on meta.  At 16 shapes (the level-0
count, NOTE [ programs for ever new shapes ]) transformer_lm compiled 293 programs where it
compiled 418 (its generation 155 where 280), and XLA's compiles took 5.88, 5.57 s where they took
8.49, 8.19 (scripts/bench_programs.py, two interleaved runs on a busy machine; the wall time 21.2,
20.6 -> 15.6, 15.1 s, torch's 7.5-8.9 s); at 4 the whole program compiled 245 (XLA's compiles 5.46,
4.57 s where 7.60, 7.57 without the host moves).  Moves compile nothing of their own,
so they start at an op's first shape (``MOVES_MET`` = -1): a shape met once (a script's
data cut and transposed into batches, a model's first evaluation, a last short batch) compiles
nothing, and one a training loop meets every step compiles after its rent, the rent-or-buy
bound as for any other shape.  From an op's third program on, as they started before
2026-12-08, the example programs compiled 4-8 programs more (scripts/bench_programs.py's six, one
process each, two runs: word_lstm 54 -> 48, char_lstm 53 -> 48, transformer_lm 120 -> 112,
cnn_digits 57 -> 53, lstm_timeseries 57 -> 53, lbfgs_fit 29 either way; the same result lines).
The buckets below keep ``SHAPES_MET`` = 4: each is a program of its own, which a shape
met every step compiles again once its rent is paid (at 1, cnn_digits' third ReLU of another
shape ran in a bucket for 16 steps, then compiled its own; lbfgs_fit's add and mul of 200
elements so too).  scripts/bench_programs.py, two interleaved runs each, both at 1 against
moves at 1 and buckets at 4: transformer_lm 150 / 154 programs, char_lstm 62 / 61, word_lstm
81 / 79, cnn_digits 62 / 61, lbfgs_fit 32 / 30 (both at 4, as before 2026-12-07: 165, 67, 84,
62, 30); the wall times within the machine's noise.  With the view ops and splits and the
rent of 16 the nanoGPT sample took 20.1 s where it took 44.1, and with the ops that compute in
buckets (below) 8.8, 9.5 s where 44.4, 48.1 (two interleaved runs; torch: 0.14 s).
"""
import math

import ml_dtypes
import numpy as np
from jax.sharding import SingleDeviceSharding

from . import _quick
from ._creation import put
from ._device import from_jax_device
from ._dispatch import _SCALARS, eager_forward, remember
from ._tensor import ArrayImpl

MOVES_MET = -1        # traces of an op's programs before its new small shapes move here
SHAPES_MET = 4        # ... before they run in a bucket (NOTE [ rows in buckets ])
RENT = 16             # host calls of one combination of shapes before its program compiles
MOVED = 1 << 18       # elements: the largest array read on the host
_RENTED = {}          # (op, static, operand avals) -> host calls so far
_MAX_RENTED = 4096    # (NOTE [ bounded program caches ] in _dispatch.py)


try:
    from jax._src.core import trace_ctx as _trace_ctx
    top_level = _trace_ctx.is_top_level   # whether no jax trace is open: 0.2 us
except (ImportError, AttributeError):   # another jax: as if a trace were open
    def top_level():
        return False


def _rented(op, static, arrays, read, met=None, moves=False):
    """The CPU device of ``arrays`` where ``op`` keeps meeting new shapes (its programs traced for
    more than ``met`` shapes, default SHAPES_MET) outside any jax trace, the arrays at indices
    ``read`` (those read on the host) are small, and this combination of shapes and arguments
    has been run here fewer than RENT times, this call counted; None where its program should
    run (NOTE [ new shapes moved on the host ]).  ``moves``: the call moves data, tracing nothing
    of ``op``'s, and its first call of these shapes is counted as a new shape the op met
    (``Op._traces``: a recorded call's backward compiles ahead, NOTE [ backward programs compiled
    ahead ] in _ahead.py)."""
    if op._traces[0] <= (SHAPES_MET if met is None else met) or not top_level():
        return None   # (in a trace: what it captures)
    for i in read:
        if type(arrays[i]) is not ArrayImpl:
            return None
        if not _readable(arrays[i].aval, MOVED):
            return None
    avals, placed = [], []
    for a in arrays:
        if type(a) is ArrayImpl:
            aval = a.aval
            avals.append((aval.shape, aval.dtype))
            placed.append(a)
        elif type(a) in _SCALARS:   # (a Python number: a traced operand, whatever its value)
            avals.append(type(a))
        else:
            return None
    key = (op, static, tuple(avals))
    calls = _RENTED.get(key, 0)
    if calls >= RENT:
        return None
    sharding = placed[0].sharding
    if type(sharding) is not SingleDeviceSharding or \
            any(not a.committed or a.sharding != sharding for a in placed):
        return None
    device = next(iter(sharding.device_set))
    if from_jax_device(device).type != "cpu":   # (a CPU device presented as CUDA too)
        if not calls:   # (filed as paid: these shapes on an accelerator run the program at once)
            remember(_RENTED, key, RENT, _MAX_RENTED)
        return None
    if calls:
        _RENTED[key] = calls + 1
    else:
        remember(_RENTED, key, 1, _MAX_RENTED)
        if moves:
            op._traces[1] += 1
    return device


def _readable(aval, largest):
    """Whether numpy reads an array of ``aval``: at most ``largest`` elements of a dtype it has."""
    return aval.size <= largest and (aval.dtype.kind in "biufc" or
                                     aval.dtype == ml_dtypes.bfloat16)


def cpu_device(x, largest=MOVED):
    """The CPU device holding concrete array ``x`` (committed, one device, at most ``largest``
    elements of a dtype numpy holds) outside any jax trace: where numpy may move its values in
    place of a program; else None."""
    if type(x) is not ArrayImpl or not top_level() or not _readable(x.aval, largest):
        return None
    sharding = x.sharding
    if type(sharding) is not SingleDeviceSharding or not x.committed:
        return None
    device = next(iter(sharding.device_set))
    return device if from_jax_device(device).type == "cpu" else None


def moved_on_host(op, static, arrays, move, movable=None):
    """``move(static, *numpy arrays)`` (a numpy array, or a tuple of them) of ``arrays``, placed
    on their CPU device, where ``op`` keeps meeting new small shapes and ``movable(static,
    arrays)`` (if given) holds (NOTE [ new shapes moved on the host ]); None where its program
    should run."""
    if op._traces[0] <= MOVES_MET or movable is not None and \
            not movable(static, arrays):
        return None
    device = _rented(op, static, arrays, range(len(arrays)), MOVES_MET, moves=True)
    if device is None:
        return None
    return _placed(move(static, *[np.asarray(a) for a in arrays]), device)


def filled_on_host(op, static, arrays, value):
    """An array of the shape and dtype of ``arrays[0]`` filled with ``value`` (a Python number),
    made on the host for the first RENT fills of its shape on a CPU, where ``value`` converts to
    that dtype exactly (NOTE [ fills on the host ]); None where ``op``'s program should run."""
    x = arrays[0]
    if type(value) not in _SCALARS or type(x) is not ArrayImpl or \
            type(value) is complex and x.dtype.kind != "c":
        return None
    try:
        filled = np.asarray(value).astype(x.dtype)
    except (OverflowError, TypeError, ValueError):
        return None
    if filled != value or (device := _rented(op, static, arrays, (), met=-1)) is None:
        return None
    return put(np.full(x.shape, filled), device)


# NOTE [ fills on the host ]
# Building a model fills its norms' weights with ones and its biases with zeros (``nn.init``'s
# ``ones_``, ``zeros_``, ``constant_``: ``fill_`` and ``zero_``), and each new shape compiled a
# fill program (15-20 ms, 2-core CPU) that writes a constant: numpy fills the same values
# and ``put`` places them on the device in microseconds.  So a fill whose value converts to the
# tensor's dtype exactly (zero always; one, a half, an integer in range; not 0.1 in float32,
# whose rounding stays the program's) runs on the host for its shape's first RENT fills, from the
# first shape on (RENT such fills cost less than one compile), and its program compiles for a
# shape filled more often than that (a loop's ``zero_`` of a buffer).  On other devices and in a
# jax trace the program runs, as for the moves above.


def _placed(out, device, cut=None):
    """The numpy array ``out`` (or each of a tuple's: a split's pieces, frexp's two results),
    ``cut(out)`` where ``cut`` is given, copied onto ``device``.  (A copy: numpy's view of an
    operand may be its device buffer, which a result placed without copying would share.)"""
    if type(out) is tuple:
        return tuple([_placed(o, device, cut) for o in out])
    return put(np.array(out if cut is None else cut(np.asarray(out))), device)


def bucket(length):
    """``length`` rounded up to a bucket: a multiple of 8, and past 128 of a sixteenth of the next
    power of two (NOTE [ rows in buckets ])."""
    step = max(8, 1 << max(0, (length - 1).bit_length() - 4))
    return -(-length // step) * step


def _power_of_two(length):
    """``length`` rounded up to a power of two, at least 8 (NOTE [ rows in buckets ])."""
    return max(8, 1 << (length - 1).bit_length())


# NOTE [ rows in buckets ]
# A layer norm and a linear layer treat each row of their input (every index of its leading dims)
# on its own, an elementwise op each element of its operands broadcast, and a batched product each
# row of its first operand against each column of its second; a generation loop whose context grows
# a token a step meets them at a new shape each step: examples/pytorch/transformer_lm.py's
# 40-character sample compiled its final layer norm and its head for each of 29 lengths, 1.3 and
# 0.4 s of its compiles and traces, and a nanoGPT-style sample
# (NOTE [ new shapes moved on the host ] above) its adds, scalings, masks, GELUs, attention
# products and softmaxes, some 600 programs.  Where such an op keeps meeting new shapes on a CPU
# (its ``cold`` rule, as for the host's moves above: past SHAPES_MET traces, what is read on the
# host at most ``MOVED`` elements, the first RENT calls of a combination of shapes), its operands
# are padded on the host and its program runs at the padded shape, and the real results are cut
# from its output on the host: a layer norm's or a linear layer's rows flattened into one dim and
# padded with zero rows to a bucket (``bucket``, as the causal encoder layer's length:
# NOTE [ causal encoder layers in buckets ] in _ops/attention.py; a bucket's number of rows in
# several dims runs it too, flattened); an elementwise op's operands (masked_fill's too) broadcast,
# flattened and padded with ones to a power of two (its elements cost little, and a (T, T) mask's
# T*T elements would meet a finer bucket at nearly every T); a batched product's three dims padded
# with zeros to powers of two (the padded terms of its sums are exact zeros); a softmax's or
# log-softmax's rows over its last dim padded with zero rows, and that dim with -inf (no part of
# its max or sum), each to a power of two.  One program then serves every shape within a
# bucket.  Each real element is the same arithmetic over the same values, but the exact shape's
# program may order its sums otherwise (one row's product runs as a matrix-vector product), so the
# results may differ in the last bits: over (1, t, 32) for t = 1..39, a head of 92 outputs and a
# layer norm matched the exact programs bit for bit at 36 of the 39 lengths, and within 2 ulp of
# the largest value at the others (the head at t = 1, the layer norm at 15 and 16); exp, tanh, GELU
# (both), sigmoid, log, sin, erf, softplus, SiLU, a power, rsqrt, a scaling and an add over (1, t,
# 64) flattened and padded matched theirs bit for bit at every t from 1 to 69, at one optimisation
# level (a program compiled at level 0 and one at level 1 already differ:
# NOTE [ programs for ever new shapes ] in _quick.py).
def in_bucket(op, static, dt, arrays):
    """``op``'s output from its program at a bucket's shape, which compiles quickest
    (``_quick.bucketed``)."""
    with _quick.bucketed():
        return eager_forward(op, static, dt, arrays)


def in_buckets(op, static, dt, arrays, lead):
    """``op``'s output over ``arrays`` from its program at a bucket's number of rows, where the
    first ``lead[i]`` dims of operand i are rows (None: operand i is taken whole), and ``op``
    keeps meeting new small shapes on a CPU (NOTE [ rows in buckets ]); None where its own
    program should run."""
    padded = [i for i, k in enumerate(lead) if k]
    if not padded:
        return None
    shape = arrays[padded[0]].shape[:lead[padded[0]]]
    rows = math.prod(shape)
    size = bucket(rows)
    if size == rows and all(lead[i] == 1 for i in padded) or \
            (device := _rented(op, static, arrays, padded)) is None:
        return None
    moved = list(arrays)
    for i in padded:
        a = np.asarray(arrays[i]).reshape(rows, *arrays[i].shape[lead[i]:])
        moved[i] = put(np.pad(a, [(0, size - rows)] + [(0, 0)] * (a.ndim - 1)), device)
    return _placed(in_bucket(op, static, dt, moved), device,
                   lambda out: out[:rows].reshape(shape + out.shape[1:]))


def batched_in_buckets(op, static, dt, arrays):
    """A batched product's output (``a @ b`` over (batch, n, k) and (batch, k, m)) from its
    program over ``n``, ``k`` and ``m`` padded with zeros to powers of two, where ``op`` keeps
    meeting new small shapes on a CPU (NOTE [ rows in buckets ]); None where its own program
    should run."""
    a, b = arrays[0].shape, arrays[1].shape
    sizes = [_power_of_two(d) for d in (a[1], a[2], b[2])]
    if sizes == [a[1], a[2], b[2]] or (device := _rented(op, static, arrays, (0, 1))) is None:
        return None
    n, k, m = sizes
    moved = [put(np.pad(np.asarray(x), [(0, 0), (0, p - x.shape[1]), (0, q - x.shape[2])]),
                 device) for x, p, q in ((arrays[0], n, k), (arrays[1], k, m))]
    return _placed(in_bucket(op, static, dt, moved), device,
                   lambda out: out[:, :a[1], :b[2]])


def softmax_in_buckets(op, static, dt, arrays):
    """A (log-)softmax's output over its last dim from its program over rows padded with zeros
    and the last dim padded with -inf (which takes no part), each to a power of two, where ``op``
    keeps meeting new small shapes on a CPU (NOTE [ rows in buckets ]); None where its own
    program should run."""
    x = arrays[0]
    shape = x.shape
    if not shape or dict(static)["dim"] != len(shape) - 1 or not (
            x.dtype.kind == "f" or x.dtype == ml_dtypes.bfloat16):
        return None
    rows, length = math.prod(shape[:-1]), shape[-1]
    size = _power_of_two(rows), _power_of_two(length)
    if size == (rows, length) or (device := _rented(op, static, arrays, (0,))) is None:
        return None
    padded = np.full(size, -np.inf, x.dtype)
    padded[rows:] = 0
    padded[:rows, :length] = np.asarray(x).reshape(rows, length)
    return _placed(in_bucket(op, (("dim", 1),), dt, [put(padded, device)]), device,
                   lambda out: out[:rows, :length].reshape(shape))


def elementwise_in_buckets(op, static, dt, arrays):
    """An elementwise op's output over ``arrays`` from its program over its array operands
    broadcast, flattened and padded with ones to a power of two, where ``op`` keeps meeting
    new small shapes on a CPU (NOTE [ rows in buckets ]); None where its own program should
    run."""
    read = [i for i, a in enumerate(arrays) if type(a) is ArrayImpl]
    if not read:
        return None
    shape = np.broadcast_shapes(*[arrays[i].shape for i in read])
    n = math.prod(shape)
    size = _power_of_two(n)
    if size == n and len(shape) == 1 and all(arrays[i].shape == shape for i in read) or \
            (device := _rented(op, static, arrays, read)) is None:
        return None
    moved = list(arrays)
    for i in read:
        flat = np.broadcast_to(np.asarray(arrays[i]), shape).reshape(-1)
        moved[i] = put(np.concatenate([flat, np.ones(size - n, flat.dtype)]), device)
    return _placed(in_bucket(op, static, dt, moved), device,
                   lambda out: out[:n].reshape(shape))
