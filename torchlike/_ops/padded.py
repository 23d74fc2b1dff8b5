"""A short call run in a longer call's program: its rows padded, its outputs cut.

NOTE [ a short call in a longer one's program ]
A training loop over a stream or a dataset meets its ops at one shape a step, and at a shorter
one once a pass: the last, short batch or window (examples/pytorch/word_lstm.py's stream
remainder of 14 steps of 35, in training and in each evaluation).  Each op compiles its forward
and its backward again for that shape, and the remainder's share of word_lstm's compiles was most
of a second.  An op whose outputs' rows (the indices of one axis) depend on the same rows of some
of its operands and on the others whole, a row-wise op, gives the call's outputs from its program
over those operands padded with rows of a fill value, the padded rows cut off its outputs.  So
where an op has run for the same static arguments and the same shapes but a longer length along
those axes (recorded, for a recorded call, whose backward program is then the longer call's too;
either, for one under no_grad, where the op's forward is the same program recorded or not: a few
predictions after training at a larger batch; an rnn stack's recorded forward, which keeps
residuals, is a program of its own), a call of a shorter one runs the shortest such program
(``Padded.of``, an ``Op.bucket`` rule; dispatch pads, runs and cuts, and a recorded call's node
keeps the padded operands, pads its outputs' gradients with zeros and cuts the padded operands'
cotangents: ``OpNode._cut`` in autograd/graph.py; where the longer call's backward ran on through
linear ops below the rows now padded, NOTE [ backward through linear ops ] in autograd/engine.py,
the short call's is another program, handed to the worker at a length's first call:
NOTE [ backward programs compiled ahead ] in _ahead.py).  numpy pads and cuts, on a CPU (operands of
at most ``ON_HOST`` elements): a pad or a cut of word_lstm's (140, 2000) logits compiled in 27-36 ms
as programs of their own, as long as the op's, and numpy's take a millisecond (an output larger
than that, a linear layer's over a large vocabulary, is cut by jax's own program); on other
devices (and in a jax trace) a call runs its own program, as for the host's moves.  The padded
rows' gradients are zeros, so nothing reaches an operand taken whole from them (a weight's
gradient, an embedding's rows).  A length is run so for its first RENT calls (NOTE [ new shapes
moved on the host ] in _host.py), then compiles its own program, which a length a loop keeps
meeting repays.  create_graph and a traced backward differentiate the call's own operands (its own
program, compiled then); the fused backward leaves such a node to the per-node walk (NOTE [ fused
backward ] in autograd/fused.py).

Each real row is the same arithmetic over the same values; a reduction over the rows (a loss's
sum or mean, its padded targets ignored) may sum them in another order, so its last bits may
differ from the call's own program's, as a bucket's may (NOTE [ rows in buckets ] in _host.py).
A random draw for the padded rows (dropout's mask) keeps the real rows' draws where the padded
axis is the leading one of float32 values: the counter of each element is its index
(NOTE [ fast random bits ] in _random.py).  The rules: the rnn stacks along time (NOTE [ a
recurrence's short window in a bucket ] in rnn.py), and along their leading axis log_softmax,
softmax, argmax and argmin over another axis, nll_loss (its targets padded with the ignored
index), dropout, relu, embedding's indices, a batched convolution's samples, a pooling's (max,
average, adaptive), a normalization's (layer and group norm, batch norm out of training), a
linear layer's rows (addmm and mm of a matrix, and linear under no_grad).
"""
import jax
import numpy as np
from jax import lax

from .._creation import put
from .._dispatch import remember
from .._host import RENT, cpu_device
from .._tensor import ArrayImpl


ON_HOST = 1 << 22   # elements: the largest operand padded (by numpy, on a CPU: NOTE above)


class Padded:
    """The cut of a call whose operands ``pads`` ((operand, axis, fill value), ...) ran padded
    from ``length`` to ``size`` rows along their axes; ``cuts`` ((output, axis), ...) are the
    outputs holding the call's rows along theirs (NOTE above), a multi-output op's all
    differentiable (its gradients come as one tuple of them all), or ``EVERY``: every output
    holds them along its leading axis (a max-pool's values and indices; the gradients of those
    that are differentiable)."""

    __slots__ = ("length", "size", "pads", "cuts", "device")
    _RUN = {}   # (op, static, recorded, the operands' avals but the padded axes) -> {lengths}
    _RENTED = {}   # (that key, a length) -> calls run at a longer length so far

    def __init__(self, length, size, pads, cuts, device):
        self.length, self.size, self.pads, self.cuts = length, size, pads, cuts
        self.device = device

    @classmethod
    def of(cls, op, arrays, static, recorded, pads, cuts):
        """(the operands at the shortest longer length ``op`` has run, the cut), or None where
        the call runs a program of its own shapes."""
        axes = {i: axis for i, axis, _ in pads}
        key, length, device = [op, static, recorded], None, None
        for i, a in enumerate(arrays):
            if type(a) is not ArrayImpl:
                if i in axes:
                    return None
                key.append(type(a))
                continue
            aval = a.aval   # NOTE [ reading an array's shape and dtype ] in _dispatch.py
            shape = aval.shape
            if i in axes:
                axis = axes[i]
                if length is None:
                    length, device = shape[axis], cpu_device(a, ON_HOST)
                    if device is None:
                        return None
                elif shape[axis] != length or cpu_device(a, ON_HOST) != device:
                    return None
                shape = shape[:axis] + shape[axis + 1:]
            key += (shape, aval.dtype)
        key = tuple(key)
        run = cls._RUN.get(key)
        if run is None:
            run = remember(cls._RUN, key, set())
        longer = [n for n in run if n > length]
        if not recorded and not op.residuals and \
                (ran := cls._RUN.get(key[:2] + (True,) + key[3:])):
            longer += [n for n in ran if n > length]   # (a recorded call's forward is its own)
        calls = cls._RENTED.get((key, length), 0)
        if length in run or not longer or calls >= RENT:   # (the rent paid: its own program)
            run.add(length)
            return None
        remember(cls._RENTED, (key, length), calls + 1)
        if not calls:   # a new shape met: a recorded call's backward compiles ahead
            op._traces[1] += 1
        cut = cls(length, min(longer), pads, cuts, device)
        padded = list(arrays)
        for i, axis, value in pads:
            padded[i] = cut._pad(arrays[i], axis, value)
        return padded, cut

    def _pad(self, x, axis, value=0):
        pads = [(0, 0)] * x.ndim
        pads[axis] = (0, self.size - self.length)
        if x.size > ON_HOST:   # (a large output's gradient: jax's own program)
            return lax.pad(x, np.asarray(value, x.dtype), [(lo, hi, 0) for lo, hi in pads])
        return put(np.pad(np.asarray(x), pads, constant_values=value), self.device)

    def _cut(self, x, axis):
        if x.size > ON_HOST:   # (a large output: jax's own program)
            return lax.slice_in_dim(x, 0, self.length, axis=axis)
        # (a copy: numpy's view of x may be its device buffer)
        return put(np.array(np.asarray(x)[(slice(None),) * axis + (slice(self.length),)]),
                   self.device)

    def outputs(self, out):
        """The call's outputs from the program's."""
        return self._each(out, self._cut)

    def gradients(self, g):
        """The gradients of the program's outputs from the call's: zero rows after."""
        return self._each(g, self._pad)

    def gradient_avals(self, g):
        """What ``gradients`` makes of ``g``, ShapeDtypeStructs of the call's gradients (its
        backward compiled ahead: NOTE [ backward programs compiled ahead ] in _ahead.py)."""
        def grown(s, axis):
            return jax.ShapeDtypeStruct(s.shape[:axis] + (self.size,) + s.shape[axis + 1:],
                                        s.dtype, weak_type=s.weak_type, sharding=s.sharding)
        return self._each(g, grown)

    def _each(self, values, move):
        """``move(value, axis)`` for each of ``values`` (an array, or a tuple: the outputs, or
        the gradients of the differentiable ones) that holds the call's rows along ``axis``."""
        if self.cuts is EVERY:
            return tuple([move(v, 0) for v in values]) if type(values) is tuple else \
                move(values, 0)
        if type(values) is not tuple:
            return move(values, self.cuts[0][1]) if self.cuts else values
        values = list(values)
        for nr, axis in self.cuts:
            values[nr] = move(values[nr], axis)
        return tuple(values)

    def cotangents(self, outs, mask):
        """The call's cotangents from the program's (of the operands in ``mask``)."""
        axes = {i: axis for i, axis, _ in self.pads}
        return [self._cut(o, axes[i]) if i in axes else o for i, o in zip(mask, outs)]

    def primals(self, primals):
        """The call's own operands from the program's."""
        primals = list(primals)
        for i, axis, _ in self.pads:
            primals[i] = self._cut(primals[i], axis)
        return tuple(primals)

    def shape(self, i, shape):
        """Operand ``i``'s shape in the call from its ``shape`` in the program."""
        for j, axis, _ in self.pads:
            if j == i:
                return shape[:axis] + (self.length,) + shape[axis + 1:]
        return shape


class Rows:
    """An ``Op.bucket`` rule (NOTE above): ``spec(arrays, static)`` gives a call's (pads, cuts)
    for ``Padded.of``, or None where the op is not row-wise for it.  A call whose exact shapes
    ran their own program runs it from then on (a short call's rent paid, a length met first):
    its operands' avals and the op's arguments, filed, answer it in about 0.3 us where the rule
    took 2-4."""

    __slots__ = ("spec",)
    _OWN = {}   # (op, static, recorded, the operands' avals) of the calls that run their own

    def __init__(self, spec):
        self.spec = spec

    def __call__(self, op, arrays, static, recorded):
        a = arrays[0]   # (one or two operands, the common cases, spelt out)
        if len(arrays) == 1 and type(a) is ArrayImpl:
            exact = (op, static, recorded, a.aval)
        elif len(arrays) == 2 and type(a) is ArrayImpl and type(b := arrays[1]) is ArrayImpl:
            exact = (op, static, recorded, a.aval, b.aval)
        else:
            exact = (op, static, recorded,
                     *[a.aval if type(a) is ArrayImpl else type(a) for a in arrays])
        if exact in self._OWN:
            return None
        spec = self.spec(arrays, static)
        bucket = None if spec is None else Padded.of(op, arrays, static, recorded, *spec)
        if bucket is None:
            remember(self._OWN, exact, True)
        return bucket


EVERY = "every output"   # (as cuts: every output's leading axis cut)
_LEADING = (((0, 0, 0),), ((0, 0),))   # operand 0's leading axis padded, output 0's cut


@Rows
def elementwise_rows(arrays, static):
    """Operand 0's rows, the others whole (dropout's key)."""
    return _LEADING if arrays[0].ndim else None


@Rows
def matrix_rows(arrays, static):
    """The rows of a matrix (or batch of them) operand 0, the others whole (linear's weight)."""
    return _LEADING if arrays[0].ndim >= 2 else None


@Rows
def batch_rows(arrays, static):
    """A batched convolution's samples (operand 0, as many dims as its weight), the weight and
    bias whole."""
    return _LEADING if arrays[0].ndim == arrays[1].ndim else None


@Rows
def pooled_rows(arrays, static):
    """A pooling's samples (or channels, unbatched: each pooled alone), every output's too."""
    return (((0, 0, 0),), EVERY) if arrays[0].ndim >= 2 else None


@Rows
def normalized_rows(arrays, static):
    """A normalization over each sample's own values: a layer norm's last dims (static "nd"), a
    group norm's groups, a batch norm from its running statistics (not in training, whose
    statistics are the batch's, nor an instance norm's tiled ones)."""
    s, ndim = dict(static), arrays[0].ndim
    if "training" in s:
        return _LEADING if ndim >= 2 and not s["training"] and s["groups"] == 1 else None
    return _LEADING if ndim > s.get("nd", 1) else None


@Rows
def product_rows(arrays, static):
    """The rows of a matrix product's left operand, the last but one (addmm's bias first: its
    weight, folded, the last), the others whole."""
    return (((len(arrays) - 2, 0, 0),), ((0, 0),)) if arrays[-2].ndim == 2 else None


@Rows
def rows_over_dim(arrays, static):
    """Operand 0's rows, for an op over another dim (``static``'s "dim"): a softmax, an argmax."""
    dim, ndim = static[0][1], arrays[0].ndim   # (("dim", dim), ...)
    return _LEADING if dim is not None and ndim >= 2 and dim % ndim else None


@Rows
def loss_rows(arrays, static):
    """nll_loss's samples (a batch of rows of class scores): their targets padded with the index
    it ignores; the reduced loss whole."""
    s = dict(static)
    if arrays[0].ndim != 2:
        return None
    return ((0, 0, 0), (1, 0, s["ignore_index"])), ((0, 0),) if s["reduction"] == "none" else ()


@Rows
def index_rows(arrays, static):
    """An embedding's rows of indices (padded with 0, whose row the zero gradients leave as it
    is); not where each index's gradient is scaled by how often it occurs."""
    if arrays[1].ndim == 0 or dict(static)["scale_grad_by_freq"]:
        return None
    return ((1, 0, 0),), ((0, 0),)
