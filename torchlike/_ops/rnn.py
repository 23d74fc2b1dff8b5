"""Recurrent networks: the stacked recurrences ``lstm``, ``gru``, ``rnn_tanh``, ``rnn_relu`` (what
``nn.LSTM`` / ``nn.GRU`` / ``nn.RNN`` run) and the single steps ``lstm_cell``, ``gru_cell``,
``rnn_tanh_cell``, ``rnn_relu_cell`` (what the ``nn.*Cell`` layers run).

NOTE [ rnn ops ]
A whole stacked recurrence (every layer and direction) is ONE op, recorded as one Node.  For each
(layer, direction) the input projection of every time step is one matmul, then a ``jax.lax.scan``
over time carries the hidden (and cell) state; the reverse direction is the same scan with
``reverse=True``.  The backward is jax.vjp of the whole program (XLA's reverse scans, with a
derivative of their own where the loop allows: NOTE [ a recurrent layer's derivative ]): no
Python runs per time step in either direction.  One program per configuration also means one XLA
compilation for the forward and one for the backward instead of one per (layer, direction):
on CPU, compiling a scan's VJP costs about a second, much of it fixed per program.

Packed sequences: the op gathers the packed rows into a padded (time, batch) grid, the scan's mask
keeps each sequence's state fixed after its last valid step (so ``h_n`` is the state at each
sequence's own end, in both directions), and the outputs are gathered back into packed rows.  The
gather indices are computed on the host from ``batch_sizes``, which PyTorch also keeps on the CPU.

Dropout between layers (training only) uses one key drawn from the default generator per call,
folded with the layer number; the mask is applied to the concatenated output of a layer, so both
directions of the next layer see the same dropped input, as in PyTorch.

grad_fn names follow PyTorch 2.x on CPU: an LSTM layer without projections in float32/bfloat16
is oneDNN's ``MkldnnRnnLayerBackward0``; the native kernels (GRU, RNN, LSTM with projections or
in other dtypes) stack the per-step outputs (``StackBackward0``), and packed sequences
concatenate them (``CatBackward0``): the op's node takes that name.  The op returns each
direction's output and each final state separately, so that, as in PyTorch, the two directions
are then concatenated (``CatBackward0``), the final states stacked (``StackBackward0``), and
batch_first outputs transposed: ``TransposeBackward0`` for LSTM, ``TransposeBackward1`` (an
in-place transpose_) for GRU and RNN.  Cells: ``TanhBackward0`` / ``ReluBackward0`` (RNNCell),
``AddBackward0`` (GRUCell, and LSTMCell's c), ``MulBackward0`` (LSTMCell's h = o * tanh(c)).

NOTE [ rnn ops under autocast ]
PyTorch's CPU autocast (checked against torch 2.13) lists ``mkldnn_rnn_layer``, the oneDNN LSTM
layer (no projections, not packed): every operand is cast, and output, h_n and c_n come out in
the region's dtype.  That op's row is ``mkldnn_rnn_layer``, so dispatch casts its operands.  The
native kernels (GRU, RNN, LSTM with projections or packed, and the cells) have no row; they run
``linear`` at each step, which is listed, so the gate projections run in the region's dtype and
the state updates promote: an RNN's state is the lower dtype, a GRU's ``(1 - z) * n + z * h`` and
an LSTM's ``c`` stay float32 given float32 states (an LSTM with projections: h in the lower dtype,
c float32).  These ops take the dtype ``linear``'s row gives now (``_amp_hook.inner_dtype``) in
their static ``precision`` and run each projection in it; the scan's state starts in the dtype
one step gives it.  The float32 parameters' gradients come back float32 through the casts.
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.custom_derivatives import SymbolicZero

from .. import _amp_hook, _dtype as D, _precision
from .._dispatch import Op, call
from .._random import _key, random_uniform
from .._tensor import Tensor
from . import shape as _shape
from .padded import Rows

PUBLIC = ("lstm", "gru", "rnn_tanh", "rnn_relu", "lstm_cell", "gru_cell", "rnn_tanh_cell",
          "rnn_relu_cell")
TENSOR_METHODS = {}

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


# --- the maths: one time step of each kind -------------------------------------------------------

def _mm(a, w, precision, b=None):
    """a @ w.T (+ b): PyTorch's ``linear``, in ``precision.amp`` where autocast asks for it
    (NOTE [ rnn ops under autocast ])."""
    dt = precision.amp
    if dt is not None:
        a, w, b = a.astype(dt), w.astype(dt), None if b is None else b.astype(dt)
    out = jnp.matmul(a, w.T, precision=precision.dot)
    return out if b is None else out + b


class _Precision(tuple):
    """The static ``precision`` of the rnn ops: the dots' precision and the dtype autocast runs
    their ``linear`` in (None outside a region)."""
    dot = property(lambda self: self[0])
    amp = property(lambda self: self[1])


def _precision_of(x, amp):
    return _Precision((_precision.rnn(x.device.type), None if amp is None else amp._np))


# NOTE [ one sigmoid for a cell's gates ]
# A cell (nn.LSTMCell, nn.GRUCell) is a per-op program compiled with the quick options (NOTE
# [ quick compiles ] in _quick.py), where each ``sigmoid`` is its own expansion of exp and a
# division in the code XLA emits, and the backward at the primals emits them again.  Taking one
# sigmoid over the pre-activations of every gate that has one (for LSTM all four columns, g's
# computed and dropped, as tanh is taken of g's columns alone) is the same arithmetic (the sigmoid
# is elementwise; bit for bit in the programs measured here, though XLA may contract a multiply-add
# in the backward differently) and compiles faster: measured in fresh processes on one core of the
# 2-core CPU, batch 24, hidden 51, float64 (examples/pytorch/lstm_timeseries.py), an LSTMCell's
# backward 116-129 -> 72-77 ms and forward 55-80 -> 44-48 ms, a GRUCell's backward 158-166 ->
# 126-133 ms (float32 180-185 -> 132-151 ms), running as fast; lstm_timeseries' XLA compiles took
# 1.67-1.76 -> 1.54-1.67 s (scripts/bench_programs.py, one core, four interleaved runs).  The
# stacks' scans compile with XLA's default emitters (``Op(fusion=True)``), where one sigmoid
# compiled no faster (two LSTM layers' recorded forward, 35 steps: 391-429 -> 408-432 ms), kept
# more residuals (10.1 -> 10.8 MB) and ran a GRU layer's backward from its residuals slower
# (3.3-3.4 -> 3.9-4.5 ms): they keep a sigmoid per gate.

def _lstm_gates(z, one_sigmoid):
    """LSTM's gates (i, f, g, o) from their pre-activations ``z`` (NOTE [ one sigmoid for a
    cell's gates ])."""
    if one_sigmoid:
        i, f, _, o = jnp.split(jax.nn.sigmoid(z), 4, axis=-1)
        n = z.shape[-1] // 4
        return i, f, jnp.tanh(z[..., 2 * n:3 * n]), o
    i, f, g, o = jnp.split(z, 4, axis=-1)
    return jax.nn.sigmoid(i), jax.nn.sigmoid(f), jnp.tanh(g), jax.nn.sigmoid(o)


def _gru_gates(xp, hh, one_sigmoid):
    """GRU's gates (r, z, n) from the input projection ``xp`` and the recurrent one ``hh``
    (NOTE [ one sigmoid for a cell's gates ])."""
    k = hh.shape[-1] // 3
    if one_sigmoid:
        r, z = jnp.split(jax.nn.sigmoid(xp[..., :2 * k] + hh[..., :2 * k]), 2, axis=-1)
    else:
        r = jax.nn.sigmoid(xp[..., :k] + hh[..., :k])
        z = jax.nn.sigmoid(xp[..., k:2 * k] + hh[..., k:2 * k])
    return r, z, jnp.tanh(xp[..., 2 * k:] + r * hh[..., 2 * k:])


def _step(mode, xp, h, c, w_hh, b_hh, w_hr, precision, one_sigmoid=False):
    """One step of ``mode`` from the input projection ``xp`` (x W_ih^T + b_ih) and the state
    (h, c); returns the new (h, c) (c is None except for LSTM).  ``one_sigmoid``: as a cell
    takes its gates (NOTE [ one sigmoid for a cell's gates ])."""
    hh = _mm(h, w_hh, precision, b_hh)
    if mode == "LSTM":
        i, f, g, o = _lstm_gates(xp + hh, one_sigmoid)
        c = f * c + i * g
        h = o * jnp.tanh(c)
        return (h if w_hr is None else _mm(h, w_hr, precision)), c
    if mode == "GRU":
        r, z, n = _gru_gates(xp, hh, one_sigmoid)
        return (1 - z) * n + z * h, None
    pre = xp + hh
    return (jnp.tanh(pre) if mode == "RNN_TANH" else jax.nn.relu(pre)), None


def _dropout(x, key, p):
    keep = random_uniform(key, x.shape, jnp.float32) < 1.0 - p
    scale = 0.0 if p >= 1 else 1.0 / (1.0 - p)
    return x * (keep.astype(x.dtype) * jnp.asarray(scale, x.dtype))


# NOTE [ a recurrent layer's derivative ]
# Differentiating ``lax.scan`` over a recurrent step, jax carries the weight's cotangent through
# the reverse loop: every step adds its own product ``dz_t^T h_{t-1}`` to it, a second small
# matrix product in each step of the sequential loop besides ``dz_t W_hh`` (the state's).  A
# layer without projections or autocast (nn.LSTM's, nn.GRU's and nn.RNN's, both directions,
# packed sequences too) therefore runs its loop with a derivative of its own (``_layer_scan``, a
# ``jax.custom_jvp``, so forward mode, vmap and higher orders stay jax's).  Its tangent is
# linear in the tangents of the input projections, the state and the weights, with factors the
# forward loop returns for every step (``_step_factors``: for LSTM, with dz the tangent of the
# gates' pre-activations, dc' = f dc + ki dz_i + kf dz_f + kg dz_g and dh' = ko dz_o + m dc');
# the weight's and the recurrent bias's part of it for every step is one product over all steps
# (``prev @ dW_hh^T``) outside the loop, and what of each step's tangent does not depend on the
# state's is combined outside it too (``_outside``), so the tangent loop holds one product a
# step and nothing for jax to compute from the primals.  Its transpose, the backward, is a
# reverse loop of one product a step, and the weight's cotangent one product after it.
# Measured on the 2-core CPU (jax 0.10.2; two runs each, medians of 5 windows; before -> after,
# torch 2.13 beside): a layer of char_lstm's size (48 steps, batch 32, 32 -> 96) recorded forward
# / backward, nn.LSTM 2.38-2.40 / 3.52-3.60 -> 2.12-2.17 / 2.56-2.57 ms (torch 1.76 / 1.82),
# nn.GRU 1.75-1.79 / 4.25-4.27 -> 1.63-1.65 / 2.58-2.82 ms (2.92 / 4.70); two layers of
# word_lstm's size (35 steps, batch 20, 64 -> 128), nn.LSTM 3.54-3.57 / 6.08-6.21 -> 3.10-3.26 /
# 4.37-4.38 ms (2.50 / 3.19), nn.RNN 1.02-1.04 / 1.79-1.81 -> 0.88-0.97 / 1.28-1.31 ms (1.48 /
# 2.91); packed sequences (the char layer's size, lengths 1-48), nn.LSTM 3.18-3.59 / 4.93-5.44
# -> 2.54-2.59 / 3.86-4.03 ms (2.84 / 10.14), nn.GRU 2.19-2.23 / 5.38-5.50 -> 1.97-2.01 /
# 3.21-3.31 ms (2.88 / 9.46); the forwards under no_grad unchanged.  The kept residuals shrink
# (the char LSTM layer's 7.5 -> 4.5 MB), and a new length's first forward and backward, compiles
# included, takes 494-503 -> 437-457 ms (LSTM), 467-477 -> 435-438 ms (GRU).

def _kept(m, new, old):
    """The new state where the step's sequence runs (``m``: (N,) booleans, or None for all),
    else the old: a finished (or not yet started) packed sequence keeps its state."""
    return new if m is None or new is None else jnp.where(m[:, None], new, old)


def _masked_step(mode, w_hh, b_hh, w_hr, precision, carry, inp):
    """A layer's loop body over (input projection, mask) per step."""
    xt, m = inp
    h2, c2 = _step(mode, xt, *carry, w_hh, b_hh, w_hr, precision)
    h2, c2 = _kept(m, h2, carry[0]), _kept(m, c2, carry[1])
    return (h2, c2), h2


@functools.partial(jax.custom_jvp, nondiff_argnums=(6, 7, 8))
def _layer_scan(xp, h, c, w_hh, b_hh, mask, mode, reverse, precision):
    """One direction of a layer of ``mode``: its loop over the time-major input projections
    ``xp`` (L, N, G*H), L > 0 (``run_stack`` checks), from the state (h, c; c is None but for
    LSTM), the steps of packed sequences ``mask`` (L, N) (or None): (output, h_n, c_n); its
    derivative by ``_layer_scan_jvp`` (NOTE [ a recurrent layer's derivative ])."""
    (h, c), out = lax.scan(functools.partial(_masked_step, mode, w_hh, b_hh, None, precision),
                           (h, c), (xp, mask), reverse=reverse)
    return out, h, c


def _step_factors(mode, w_hh, b_hh, precision, carry, inp):
    """``_masked_step`` for the derivative's forward loop: the new state, and the step's output
    with the factors its tangent is linear in."""
    (h, c), (xt, m) = carry, inp
    hh = _mm(h, w_hh, precision, b_hh)
    if mode == "LSTM":
        i, f, g, o = _lstm_gates(xt + hh, False)
        c2 = f * c + i * g
        tc = jnp.tanh(c2)
        h2 = o * tc
        factors = (g * i * (1 - i), c * f * (1 - f), i * (1 - g * g), tc * o * (1 - o), f,
                   o * (1 - tc * tc))
    elif mode == "GRU":   # dh' = ar (dx_r + dhh_r) + az (dx_z + dhh_z) + e dx_n + d dhh_n + z dh
        r, z, n = _gru_gates(xt, hh, False)
        c2, h2 = None, (1 - z) * n + z * h
        b = (1 - z) * (1 - n * n)
        factors = (b * hh[..., 2 * (hh.shape[-1] // 3):] * r * (1 - r),
                   z * (1 - z) * (h - n), b, b * r, z)
    else:
        pre = xt + hh
        c2, h2 = None, jnp.tanh(pre) if mode == "RNN_TANH" else jax.nn.relu(pre)
        factors = ((1 - h2 * h2) if mode == "RNN_TANH" else (pre > 0).astype(h2.dtype),)
    h2, c2 = _kept(m, h2, h), _kept(m, c2, c)
    return (h2, c2), (h2, factors)


def _outside(mode, dxp, dhh, factors):
    """What of each step's tangent does not depend on the state's (from the input projections'
    tangents ``dxp`` and the recurrent product's ``dhh`` for the weight and bias, or None), and
    the factors the tangent loop still needs."""
    if mode == "LSTM":
        return (dxp if dhh is None else dxp + dhh), factors
    if mode == "GRU":
        ar, az, e, d, z = factors
        dr, dz, dn = jnp.split(dxp, 3, axis=-1)
        if dhh is None:
            return ar * dr + az * dz + e * dn, (ar, az, d, z)
        hr, hz, hn = jnp.split(dhh, 3, axis=-1)
        return ar * (dr + hr) + az * (dz + hz) + e * dn + d * hn, (ar, az, d, z)
    (k,) = factors
    return k * (dxp if dhh is None else dxp + dhh), factors


def _tangent_step(mode, w_hh, precision, carry, step):
    """One step of the tangent loop: linear in the carried tangents (dh, dc)."""
    dh, dc = carry
    ext, factors, mask = step
    q = _mm(dh, w_hh, precision)
    dc2 = None
    if mode == "LSTM":
        ki, kf, kg, ko, f, m = factors
        di, df, dg, do = jnp.split(ext + q, 4, axis=-1)
        dc2 = f * dc + ki * di + kf * df + kg * dg
        dh2 = ko * do + m * dc2
    elif mode == "GRU":
        ar, az, d, z = factors
        qr, qz, qn = jnp.split(q, 3, axis=-1)
        dh2 = ext + ar * qr + az * qz + d * qn + z * dh
    else:
        dh2 = ext + factors[0] * q
    dh2, dc2 = _kept(mask, dh2, dh), _kept(mask, dc2, dc)
    return (dh2, dc2), dh2


def _layer_scan_jvp(mode, reverse, precision, primals, tangents):
    xp, h0, c0, w_hh, b_hh, mask = primals
    dxp, dh0, dc0, dw_hh, db_hh = [   # (the mask's is a symbolic zero)
        jnp.zeros(t.shape, t.dtype) if type(t) is SymbolicZero else t for t in tangents[:5]]
    (h, c), (out, factors) = lax.scan(
        functools.partial(_step_factors, mode, w_hh, b_hh, precision), (h0, c0), (xp, mask),
        reverse=reverse)
    dhh = None   # the recurrent product's tangent for the weight and bias: all steps at once
    if type(tangents[3]) is not SymbolicZero:   # (the states each step started from)
        prev = (out[1:], h0[None]) if reverse else (h0[None], out[:-1])
        dhh = _mm(jnp.concatenate(prev), dw_hh, precision)
    if b_hh is not None and type(tangents[4]) is not SymbolicZero:
        dhh = db_hh if dhh is None else dhh + db_hh
    ext, factors = _outside(mode, dxp, dhh, factors)
    (dh, dc), dout = lax.scan(functools.partial(_tangent_step, mode, w_hh, precision),
                              (dh0, dc0), (ext, factors, mask), reverse=reverse)
    return (out, h, c), (dout, dh, dc)


_layer_scan.defjvp(_layer_scan_jvp, symbolic_zeros=True)


# --- a stacked recurrence: every layer and direction in one op ----------------------------------

def _direction(mode, x, ws, h, c, reverse, mask, pad_idx, pack_idx, precision):
    """One direction of one layer: x (L, N, F) time-major, or packed rows (T, F) when
    ``pad_idx`` is given.  Returns (output, h_n, c_n)."""
    w_ih, w_hh, b_ih, b_hh, w_hr = ws
    xp = _mm(x, w_ih, precision, b_ih)
    if pad_idx is not None:
        xp = jnp.concatenate([xp, jnp.zeros((1, xp.shape[-1]), xp.dtype)])[pad_idx]

    if precision.amp is not None:   # the state takes the dtype one step gives it
        shapes = jax.eval_shape(lambda h, c: _step(mode, xp[0], h, c, w_hh, b_hh, w_hr,
                                                   precision), h, c)
        h = h.astype(shapes[0].dtype)
        c = None if c is None else c.astype(shapes[1].dtype)
    if w_hr is None and precision.amp is None:
        out, h, c = _layer_scan(xp, h, c, w_hh, b_hh, mask, mode, reverse, precision)
    else:
        (h, c), out = lax.scan(functools.partial(_masked_step, mode, w_hh, b_hh, w_hr,
                                                 precision), (h, c), (xp, mask), reverse=reverse)
    if pack_idx is not None:
        out = out.reshape(-1, out.shape[-1])[pack_idx]
    return out, h, c


def _stack(*xs, mode, num_layers, dirs, bias, proj, has_h, p, layout, precision):
    """Operands: x, then per (layer, direction) w_ih, w_hh, [b_ih, b_hh], [w_hr], then
    [h0, [c0]] (all layers and directions), [dropout key], then [pad_idx, pack_idx, mask]
    (packed) or the steps that run (time-major and batch_first: NOTE [ a recurrence's short
    window in a bucket ]).  ``layout``: "tnf" (time-major), "ntf" (batch_first), "tf"
    (unbatched, h0 too) or "packed" (rows of a PackedSequence).  Returns the last layer's
    output of each direction (time-major or packed rows), then h_n of each (layer, direction),
    then (LSTM) each c_n."""
    lstm = mode == "LSTM"
    per = 2 + 2 * bias + proj
    n_w = per * num_layers * dirs
    x, weights, rest = xs[0], xs[1:1 + n_w], list(xs[1 + n_w:])
    h0 = rest.pop(0) if has_h else None
    c0 = rest.pop(0) if has_h and lstm else None
    key = rest.pop(0) if p > 0 else None
    pad_idx, pack_idx, mask = rest if layout == "packed" else (None, None, None)
    if layout == "tf":
        x = x[:, None]
        h0, c0 = (None if h0 is None else h0[:, None]), (None if c0 is None else c0[:, None])
    elif layout == "ntf":
        x = jnp.swapaxes(x, 0, 1)
    if layout in _STEPPED:   # the first ``steps`` of the (padded) sequence run
        (steps,) = rest
        mask = jnp.broadcast_to((jnp.arange(x.shape[0]) < steps)[:, None], x.shape[:2])
    n = mask.shape[1] if mask is not None else x.shape[1]
    hidden = weights[1].shape[0] // _GATES[mode]
    hs, cs = [], []
    for layer in range(num_layers):
        if layer > 0 and key is not None:
            x = _dropout(x, jax.random.key_data(jax.random.fold_in(
                jax.random.wrap_key_data(key), layer)), p)
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            w = weights[k * per:(k + 1) * per]
            ws = (w[0], w[1], w[2] if bias else None, w[3] if bias else None,
                  w[-1] if proj else None)
            h = jnp.zeros((n, w[1].shape[1]), x.dtype) if h0 is None else h0[k]
            c = None if not lstm else jnp.zeros((n, hidden), x.dtype) if c0 is None else c0[k]
            out, h, c = _direction(mode, x, ws, h, c, d == 1, mask, pad_idx, pack_idx,
                                   precision)
            outs.append(out)
            hs.append(h)
            cs.append(c)
        if layer < num_layers - 1:
            x = outs[0] if dirs == 1 else jnp.concatenate(outs, axis=-1)
    return tuple(outs) + tuple(hs) + (tuple(cs) if lstm else ())


# NOTE [ a recurrence's short window in a bucket ]
# A language model trained on windows of ``bptt`` steps (truncated back-propagation through time)
# meets a shorter window once per pass over its data, the stream's remainder, in training and in
# each evaluation; examples/pytorch/word_lstm.py's remainders (14 steps of 35) compiled their own
# LSTM forward (0.46 s in training, 0.15 s evaluating), its backward (0.23 s) and the programs
# around it, and without them the program took 6.6-6.9 s where it took 9.0-9.9 (2-core CPU, two
# runs each).  So a stack over time-major or batch_first input takes the number of steps that
# run as an operand (``steps``, a Python int): the scan's mask keeps each state after its
# sequence's last step (as for a PackedSequence), so a call over x padded with zero steps gives
# the call's outputs in its first steps and its final states as they are, and a call shorter
# than a length its op has run for the same other shapes runs that length's program, x padded
# along time and each direction's output cut (``_time_rows``: NOTE [ a short call in a longer
# one's program ] in padded.py); the padded steps' cotangents are zeros, so nothing reaches the
# weights from them.  Dropout between layers draws its noise for the padded steps too, so a
# window's masks are not those of its own program (both are draws of the same key).  word_lstm,
# three interleaved runs each (scripts/bench_programs.py, 2-core CPU): XLA's compiles 3.25, 3.32,
# 3.33 -> 2.46, 3.04, 2.38 s, tracing 0.60-0.71 -> 0.35-0.42 s, the wall time 9.95, 9.53, 9.43
# -> 8.37, 9.65, 8.12 s (torch 4.5-5.0 s); its epochs after the first 1.34-1.44 -> 1.30-1.35 s
# (the mask's selects are a few more of each step's elementwise ops).
_STEPPED = ("tnf", "ntf")   # the layouts that take the steps that run


@Rows
def _time_rows(arrays, static):
    """A stack's call over fewer steps than one its op has run: x padded along time, each
    direction's output cut (NOTE above; an ``Op.bucket`` rule)."""
    s = dict(static)
    if s["layout"] not in _STEPPED:
        return None
    return ((0, 1 if s["layout"] == "ntf" else 0, 0),), tuple([(nr, 0) for nr in range(s["dirs"])])


# (their backward keeps the scans' residuals: NOTE [ kept residuals ] in _dispatch.py; they
# compile with the fusion emitters: NOTE [ quick compiles ]; a short window runs a longer one's
# program: NOTE [ a recurrence's short window in a bucket ])
_ONEDNN_STACK = Op("mkldnn_rnn_layer", _stack, "MkldnnRnnLayerBackward0", residuals=True,
                   fusion=True, bucket=_time_rows)
_NATIVE_STACK = Op("rnn_stack", _stack, "StackBackward0", residuals=True, fusion=True,
                   bucket=_time_rows)
_PACKED_STACK = Op("rnn_stack", _stack, "CatBackward0", residuals=True, fusion=True)
_ONEDNN_DTYPES = (D.float32, D.bfloat16)


def _stack_op(mode, proj, packed, dtype, batch):
    """The op whose node name is what PyTorch's CPU kernel records (NOTE [ rnn ops ])."""
    if packed:
        return _PACKED_STACK
    if mode == "LSTM" and not proj and dtype in _ONEDNN_DTYPES and batch > 0:
        return _ONEDNN_STACK
    return _NATIVE_STACK


@functools.lru_cache(maxsize=256)
def _packed_indices(batch_sizes):
    """For batch sizes (per time step, decreasing): the (time, batch) grid of packed row
    indices (``total`` where padding), the packed order's flat grid positions, and the mask of
    valid grid cells."""
    bs = np.asarray(batch_sizes, np.int64)
    n, total = int(bs[0]), int(bs.sum())
    mask = np.arange(n)[None, :] < bs[:, None]
    offsets = np.concatenate([[0], np.cumsum(bs)[:-1]])
    pad_idx = np.where(mask, offsets[:, None] + np.arange(n)[None, :], total)
    t, b = np.nonzero(mask)
    return (jnp.asarray(pad_idx, jnp.int32), jnp.asarray(t * n + b, jnp.int32),
            jnp.asarray(mask))


def host_batch_sizes(batch_sizes):
    """A PackedSequence's batch sizes as a tuple of ints (they live on the host, as in
    PyTorch; they fix the data's shape, so they are never traced)."""
    arr = batch_sizes._value() if isinstance(batch_sizes, Tensor) else batch_sizes
    if isinstance(arr, jax.core.Tracer):
        raise RuntimeError("batch_sizes of a PackedSequence must be concrete (they fix the "
                           "shape of its data); build the PackedSequence outside the traced "
                           "function")
    return tuple(int(b) for b in np.asarray(arr).reshape(-1))


def _type_name(t):
    return t.dtype._scalar_name


def _check_same_dtype(a, w):
    if a.dtype is not w.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_type_name(a)} "
                           f"and {_type_name(w)}")


# --- stacked recurrences ------------------------------------------------------------------------

def run_stack(mode, x, batch_sizes, hx, cx, params, has_biases, num_layers, dropout, train,
              bidirectional, batch_first, proj=False, unbatched=False):
    """The recurrence behind torch.lstm / gru / rnn_tanh / rnn_relu and the nn layers.

    ``x``: (L, N, H_in) (or (N, L, H_in) with batch_first, (L, H_in) when ``unbatched``) or the
    data of a PackedSequence when ``batch_sizes`` (a tuple of ints) is given.  ``hx`` / ``cx``:
    (num_layers * num_directions, N, H) or None for zeros.  ``params``: per (layer, direction)
    w_ih, w_hh, [b_ih, b_hh], [w_hr].  Returns (output, h_n) or (output, h_n, c_n)."""
    packed = batch_sizes is not None
    dirs = 2 if bidirectional else 1
    per = 2 + 2 * bool(has_biases) + bool(proj)
    if len(params) != per * num_layers * dirs:
        raise RuntimeError("got an incorrect number of RNN parameters")
    if not packed and x.shape[0 if unbatched or not batch_first else 1] == 0:
        raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
    amp = _amp_hook.inner_dtype("linear", (x, *params, *[h for h in (hx, cx) if h is not None]))
    if amp is None:   # under autocast the projections' casts make the dtypes agree
        _check_same_dtype(x, params[0])
        for h in (hx, cx):
            if h is not None:
                _check_same_dtype(h, params[1])
    layout = "packed" if packed else "tf" if unbatched else "ntf" if batch_first else "tnf"
    extras = _packed_indices(batch_sizes) if packed else \
        (x.shape[1 if batch_first else 0],) if layout in _STEPPED else ()
    batch = 1 if unbatched else batch_sizes[0] if packed else x.shape[1 if not batch_first else 0]
    lstm = mode == "LSTM"
    states = [] if hx is None else [hx] if cx is None else [hx, cx]
    p = float(dropout) if train and num_layers > 1 and dropout > 0 else 0.0
    key = (_key(None, x),) if p > 0 else ()
    static = (("mode", mode), ("num_layers", int(num_layers)), ("dirs", dirs),
              ("bias", bool(has_biases)), ("proj", bool(proj)), ("has_h", hx is not None),
              ("p", p), ("layout", layout))
    op = _stack_op(mode, proj, packed, x.dtype, batch)
    precision = _precision_of(x, None if op is _ONEDNN_STACK else amp)
    res = call(op, x, *params, *states, *key, *extras,
               static=static + (("precision", precision),))
    out = res[0] if dirs == 1 else _shape.cat(res[:2], -1)
    n = num_layers * dirs
    h_n = _shape.stack(res[dirs:dirs + n])
    if batch_first and not packed and not unbatched:
        out = out.transpose(0, 1) if lstm else out.transpose_(0, 1)
    return (out, h_n, _shape.stack(res[dirs + n:])) if lstm else (out, h_n)


def _stack_forms(name, args, packed_at):
    """Split torch.<name>'s two overloads: (input, hx, params, has_biases, num_layers, dropout,
    train, bidirectional, batch_first) or (data, batch_sizes, hx, params, has_biases,
    num_layers, dropout, train, bidirectional); ``packed_at`` is the position whose type
    tells them apart (a Tensor there means the packed form)."""
    if len(args) > packed_at and isinstance(args[packed_at], Tensor):
        if len(args) != 9:
            raise TypeError(f"{name}() takes 9 positional arguments but {len(args)} were given")
        data, batch_sizes, hx, *rest = args
        return (data, host_batch_sizes(batch_sizes), hx, *rest, False)
    if len(args) != 9:
        raise TypeError(f"{name}() takes 9 positional arguments but {len(args)} were given")
    return (args[0], None) + tuple(args[1:])


def lstm(*args):
    """Mirrors ``torch.lstm``: a stacked LSTM, ``lstm(input, (h0, c0), params, has_biases,
    num_layers, dropout, train, bidirectional, batch_first)`` -> (output, h_n, c_n), or the
    packed form ``lstm(data, batch_sizes, (h0, c0), params, ...)`` without batch_first.
    Projections are used when h0's last size differs from c0's."""
    x, bs, hx, params, bias, layers, dropout, train, bidir, bf = _stack_forms("lstm", args, 1)
    if len(hx) != 2:
        raise RuntimeError("lstm expects two hidden states")
    h0, c0 = hx
    proj = h0.shape[-1] != c0.shape[-1]
    return run_stack("LSTM", x, bs, h0, c0, list(params), bias, layers, dropout, train, bidir,
                     bf, proj)


def _simple_stack(mode, name):
    def fn(*args):
        x, bs, hx, params, bias, layers, dropout, train, bidir, bf = _stack_forms(name, args, 2)
        return run_stack(mode, x, bs, hx, None, list(params), bias, layers, dropout, train,
                         bidir, bf)
    fn.__name__ = fn.__qualname__ = name
    return fn


gru = _simple_stack("GRU", "gru")
gru.__doc__ = """Mirrors ``torch.gru``: a stacked GRU, ``gru(input, h0, params, has_biases,
    num_layers, dropout, train, bidirectional, batch_first)`` -> (output, h_n), or the packed
    form ``gru(data, batch_sizes, h0, params, ...)``."""
rnn_tanh = _simple_stack("RNN_TANH", "rnn_tanh")
rnn_tanh.__doc__ = """Mirrors ``torch.rnn_tanh``: a stacked Elman RNN with tanh (arguments as
    ``gru``)."""
rnn_relu = _simple_stack("RNN_RELU", "rnn_relu")
rnn_relu.__doc__ = """Mirrors ``torch.rnn_relu``: a stacked Elman RNN with relu (arguments as
    ``gru``)."""


# --- cells --------------------------------------------------------------------------------------

def _cell(*xs, mode, has_h, bias, unbatched, precision):
    """Operands: x, [h, [c]], w_ih, w_hh, [b_ih, b_hh].  Returns h' (LSTM: (sigmoid(o), c'),
    from which h' = sigmoid(o) * tanh(c') is formed outside, as PyTorch's graph has it)."""
    it = iter(xs)
    x = next(it)
    h = next(it) if has_h else None
    c = next(it) if has_h and mode == "LSTM" else None
    w_ih, w_hh = next(it), next(it)
    b_ih, b_hh = (next(it), next(it)) if bias else (None, None)
    if unbatched:
        x = x[None]
        h, c = (None if h is None else h[None]), (None if c is None else c[None])
    hidden = w_hh.shape[1]
    if h is None:
        h = jnp.zeros((x.shape[0], hidden), x.dtype)
        c = h if mode == "LSTM" else None
    xp = _mm(x, w_ih, precision, b_ih)
    if mode != "LSTM":
        return _step(mode, xp, h, c, w_hh, b_hh, None, precision, one_sigmoid=True)[0]
    i, f, g, o = _lstm_gates(xp + _mm(h, w_hh, precision, b_hh), one_sigmoid=True)
    return o, f * c + i * g


_CELL_OPS = {"RNN_TANH": Op("rnn_tanh_cell", _cell, "TanhBackward0"),
             "RNN_RELU": Op("rnn_relu_cell", _cell, "ReluBackward0"),
             "GRU": Op("gru_cell", _cell, "AddBackward0"),
             "LSTM": Op("lstm_cell", _cell, "AddBackward0")}


def _check_cell(x, hs, w_ih, w_hh, same_dtype=True):
    """PyTorch's checks of a cell's (batched) input and hidden states."""
    if x.shape[1] != w_ih.shape[1]:
        raise RuntimeError(f"input has inconsistent input_size: got {x.shape[1]} expected "
                           f"{w_ih.shape[1]}")
    for i, h in enumerate(hs):
        if h.shape[0] != x.shape[0]:
            raise RuntimeError(f"Input batch size {x.shape[0]} doesn't match hidden{i} batch "
                               f"size {h.shape[0]}")
        if h.ndim < 2 or h.shape[1] != w_hh.shape[1]:
            got = h.shape[1] if h.ndim > 1 else 1
            raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {got}, expected "
                               f"{w_hh.shape[1]}")
    if same_dtype:
        _check_same_dtype(x, w_ih)
        for h in hs:
            _check_same_dtype(h, w_hh)


def run_cell(mode, x, hx, w_ih, w_hh, b_ih=None, b_hh=None, unbatched=False):
    """One step of an RNN/GRU/LSTM cell; ``hx`` is None (zeros), a Tensor, or (h, c) for LSTM.
    ``unbatched``: x is (H_in,) and the states (H,), as nn.*Cell accept them."""
    hs = () if hx is None else tuple(hx) if mode == "LSTM" else (hx,)
    if mode == "LSTM" and hx is not None and len(hs) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    shape = (lambda t: (1,) + tuple(t.shape)) if unbatched else (lambda t: tuple(t.shape))
    amp = _amp_hook.inner_dtype("linear", (x, *hs, w_ih, w_hh))
    _check_cell(_Shaped(shape(x), x.dtype), [_Shaped(shape(h), h.dtype) for h in hs], w_ih,
                w_hh, same_dtype=amp is None)
    bias = b_ih is not None
    static = (("mode", mode), ("has_h", bool(hs)), ("bias", bias), ("unbatched", unbatched),
              ("precision", _precision_of(x, amp)))
    res = call(_CELL_OPS[mode], x, *hs, w_ih, w_hh, *((b_ih, b_hh) if bias else ()),
               static=static)
    if mode == "LSTM":
        o, c = res
        h = o * c.tanh()
        return (h.squeeze(0), c.squeeze(0)) if unbatched else (h, c)
    return res.squeeze(0) if unbatched else res


class _Shaped:
    """A shape and dtype standing in for a Tensor in the checks."""

    def __init__(self, shape, dtype):
        self.shape, self.ndim, self.dtype = shape, len(shape), dtype


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """Mirrors ``torch.rnn_tanh_cell``: h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)."""
    return run_cell("RNN_TANH", input, hx, w_ih, w_hh, b_ih, b_hh)


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """Mirrors ``torch.rnn_relu_cell``: h' = relu(x W_ih^T + b_ih + h W_hh^T + b_hh)."""
    return run_cell("RNN_RELU", input, hx, w_ih, w_hh, b_ih, b_hh)


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """Mirrors ``torch.gru_cell``: one GRU step (gates r, z, n in that order;
    n = tanh(W_in x + b_in + r * (W_hn h + b_hn)), h' = (1 - z) * n + z * h)."""
    return run_cell("GRU", input, hx, w_ih, w_hh, b_ih, b_hh)


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """Mirrors ``torch.lstm_cell``: one LSTM step from ``hx = (h, c)`` (gates i, f, g, o);
    returns (h', c')."""
    return run_cell("LSTM", input, hx, w_ih, w_hh, b_ih, b_hh)
