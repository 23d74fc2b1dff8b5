"""One ONNX translation per jax primitive (NOTE [ onnx translation ] in _graph.py).

A rule is ``rule(g, eqn, ins, used) -> output name(s)``: ``g`` the _graph.Graph, ``eqn`` the jaxpr
equation (its params and the avals of its variables), ``ins`` the ONNX names of its inputs,
``used`` which of its outputs are needed.  ``RULES`` at the end is the table.
"""
import string

import numpy as np

from ._graph import elem_type
from .errors import UnsupportedOperatorError

_INT64_MAX = np.iinfo(np.int64).max


def _aval_in(eqn, i=0):
    return eqn.invars[i].aval


def _aval_out(eqn, i=0):
    return eqn.outvars[i].aval


def _unsupported(g, eqn, detail):
    return UnsupportedOperatorError.for_primitive(eqn.primitive.name, g, detail=detail)


def _is_float(dtype):
    return np.issubdtype(np.dtype(dtype), np.floating) or np.dtype(dtype).name == "bfloat16"


# --- elementwise ------------------------------------------------------------------------------

def _same(op):
    def rule(g, eqn, ins, used):
        return g.node(op, ins)
    rule.__name__ = f"_{op.lower()}"
    return rule


def _logical(bool_op, int_op):
    """and / or / xor / not: logical on booleans, bitwise on integers."""
    def rule(g, eqn, ins, used):
        if np.dtype(_aval_in(eqn).dtype) == np.bool_:
            return g.node(bool_op, ins)
        _needs(g, eqn, 18, f"{int_op} (bitwise {eqn.primitive.name} of integers)")
        return g.node(int_op, ins)
    return rule


def _needs(g, eqn, opset, what):
    if g.opset < opset:
        raise UnsupportedOperatorError(f"jax::{eqn.primitive.name}", g.opset, opset,
                                       detail=f"its translation uses {what}, added in opset "
                                              f"{opset}")


def _ne(g, eqn, ins, used):
    return g.node("Not", [g.node("Equal", ins)])


def _rem(g, eqn, ins, used):
    # lax.rem is C's fmod: the result takes the dividend's sign.
    return g.node("Mod", ins, fmod=1)


def _div(g, eqn, ins, used):
    if _is_float(_aval_in(eqn).dtype):
        return g.node("Div", ins)
    # lax.div rounds integers toward zero; ONNX's integer Div is not specified for negative
    # operands, so divide the magnitudes and put the sign back.
    a, b = ins
    q = g.node("Div", [g.node("Abs", [a]), g.node("Abs", [b])])
    sign = g.node("Mul", [g.node("Sign", [a]), g.node("Sign", [b])])
    return g.node("Mul", [q, sign])


def _rsqrt(g, eqn, ins, used):
    return g.node("Reciprocal", [g.node("Sqrt", ins)])


def _square(g, eqn, ins, used):
    return g.node("Mul", [ins[0], ins[0]])


def _scalar_like(g, eqn, value):
    return g.const(np.asarray(value, dtype=_aval_in(eqn).dtype))


def _log1p(g, eqn, ins, used):
    return g.node("Log", [g.node("Add", [ins[0], _scalar_like(g, eqn, 1)])])


def _expm1(g, eqn, ins, used):
    return g.node("Sub", [g.node("Exp", ins), _scalar_like(g, eqn, 1)])


def _exp2(g, eqn, ins, used):
    return g.node("Pow", [_scalar_like(g, eqn, 2), ins[0]])


def _erfc(g, eqn, ins, used):
    return g.node("Sub", [_scalar_like(g, eqn, 1), g.node("Erf", ins)])


def _cbrt(g, eqn, ins, used):
    x = ins[0]
    root = g.node("Pow", [g.node("Abs", [x]), _scalar_like(g, eqn, 1 / 3)])
    return g.node("Mul", [g.node("Sign", [x]), root])


def _is_finite(g, eqn, ins, used):
    return g.node("Not", [g.node("Or", [g.node("IsInf", ins), g.node("IsNaN", ins)])])


def _round(g, eqn, ins, used):
    method = int(eqn.params.get("rounding_method", 0))
    if method == 1:     # to nearest even: ONNX's Round
        return g.node("Round", ins)
    x = ins[0]          # away from zero
    half = _scalar_like(g, eqn, 0.5)
    return g.node("Mul", [g.node("Sign", [x]),
                          g.node("Floor", [g.node("Add", [g.node("Abs", [x]), half])])])


def _integer_pow(g, eqn, ins, used):
    y = int(eqn.params["y"])
    x = ins[0]
    if y == 0:
        return g.node("Expand", [_scalar_like(g, eqn, 1), g.node("Shape", [x])])
    out = x
    for _ in range(abs(y) - 1):
        out = g.node("Mul", [out, x])
    return g.node("Reciprocal", [out]) if y < 0 else out


def _clamp(g, eqn, ins, used):
    lo, x, hi = ins
    return g.node("Min", [g.node("Max", [x, lo]), hi])


def _select_n(g, eqn, ins, used):
    which, *cases = ins
    if len(cases) == 1:
        return cases[0]
    if np.dtype(_aval_in(eqn).dtype) == np.bool_:
        return g.node("Where", [which, cases[1], cases[0]])
    out = cases[0]
    idx_dtype = _aval_in(eqn).dtype
    for k in range(1, len(cases)):
        pick = g.node("Equal", [which, g.const(np.asarray(k, dtype=idx_dtype))])
        out = g.node("Where", [pick, cases[k], out])
    return out


def _convert(g, eqn, ins, used):
    return g.node("Cast", ins, to=elem_type(eqn.params["new_dtype"]))


def _identity(g, eqn, ins, used):
    return [g.node("Identity", [x]) for x in ins] if len(ins) > 1 else g.node("Identity", ins)


def _reduce_precision(g, eqn, ins, used):
    dtype = np.dtype(_aval_in(eqn).dtype)
    bits = (int(eqn.params["exponent_bits"]), int(eqn.params["mantissa_bits"]))
    info = {np.dtype(np.float32): (8, 23), np.dtype(np.float64): (11, 52),
            np.dtype(np.float16): (5, 10)}.get(dtype)
    if info == bits:
        return g.node("Identity", ins)
    narrow = {(8, 7): "bfloat16", (5, 10): "float16"}.get(bits)
    if narrow is None:
        raise _unsupported(g, eqn, f"rounding to {bits[0]} exponent and {bits[1]} mantissa "
                                   "bits has no ONNX type")
    import ml_dtypes
    down = g.node("Cast", ins, to=elem_type(getattr(ml_dtypes, narrow) if narrow == "bfloat16"
                                            else np.float16))
    return g.node("Cast", [down], to=elem_type(dtype))


# --- shapes -----------------------------------------------------------------------------------

def _broadcast_in_dim(g, eqn, ins, used):
    x = ins[0]
    shape = tuple(eqn.params["shape"])
    dims = tuple(int(d) for d in eqn.params["broadcast_dimensions"])
    in_shape = _aval_in(eqn).shape
    new_axes = [i for i in range(len(shape)) if i not in dims]
    if new_axes:
        x = g.node("Unsqueeze", [x, g.ints(new_axes)])
    # Expand broadcasts both ways: a size the operand already has can be given as 1, so only
    # the sizes the operand lacks are computed.
    full = [in_shape[dims.index(i)] if i in dims else 1 for i in range(len(shape))]
    target = [1 if i in dims and _same_size(full[i], shape[i]) else shape[i]
              for i in range(len(shape))]
    if all(isinstance(t, (int, np.integer)) and t == 1 for t in target):
        return x if new_axes else g.node("Identity", [x])
    return g.node("Expand", [x, g.shape(target)])


def _same_size(a, b):
    try:
        return bool(a == b)
    except Exception:   # noqa: BLE001 -- jax cannot decide: treat as different
        return False


def _reshape(g, eqn, ins, used):
    if eqn.params.get("dimensions") is not None:
        raise _unsupported(g, eqn, "a reshape with a dimension order")
    sizes = list(eqn.params["new_sizes"])
    allowzero = {"allowzero": 1} if any(
        isinstance(d, (int, np.integer)) and d == 0 for d in sizes) else {}
    return g.node("Reshape", [ins[0], g.shape(sizes, infer_one=not allowzero)], **allowzero)


def _squeeze(g, eqn, ins, used):
    dims = list(eqn.params["dimensions"])
    return g.node("Squeeze", [ins[0], g.ints(dims)]) if dims else g.node("Identity", ins)


def _expand_dims(g, eqn, ins, used):
    return g.node("Unsqueeze", [ins[0], g.ints(eqn.params["dimensions"])])


def _transpose(g, eqn, ins, used):
    return g.node("Transpose", ins, perm=[int(p) for p in eqn.params["permutation"]])


def _slice(g, eqn, ins, used):
    shape = _aval_in(eqn).shape
    starts, limits = eqn.params["start_indices"], eqn.params["limit_indices"]
    strides = eqn.params.get("strides") or (1,) * len(shape)
    axes, st, en, sp = [], [], [], []
    for i, (s, e, k, n) in enumerate(zip(starts, limits, strides, shape)):
        if _same_size(s, 0) and _same_size(e, n) and int(k) == 1:
            continue
        axes.append(i)
        st.append(s)
        en.append(_INT64_MAX if _same_size(e, n) else e)
        sp.append(int(k))
    if not axes:
        return g.node("Identity", ins)
    return g.node("Slice", [ins[0], g.shape(st), g.shape(en), g.ints(axes), g.ints(sp)])


def _dynamic_slice(g, eqn, ins, used):
    x, *starts = ins
    sizes = eqn.params["slice_sizes"]
    shape = _aval_in(eqn).shape
    # jax clamps each start into [0, size - slice size]
    cast = [g.node("Cast", [g.node("Reshape", [s, g.ints([1])])], to=elem_type(np.int64))
            for s in starts]
    start = g.node("Concat", cast, axis=0)
    hi = g.node("Sub", [g.shape(shape), g.shape(sizes)])
    start = g.node("Min", [g.node("Max", [start, g.ints([0] * len(shape))]), hi])
    end = g.node("Add", [start, g.shape(sizes)])
    return g.node("Slice", [x, start, end, g.ints(range(len(shape)))])


def _rev(g, eqn, ins, used):
    dims = list(eqn.params["dimensions"])
    if not dims:
        return g.node("Identity", ins)
    n = len(dims)
    return g.node("Slice", [ins[0], g.ints([-1] * n), g.ints([np.iinfo(np.int64).min] * n),
                            g.ints(dims), g.ints([-1] * n)])


def _concatenate(g, eqn, ins, used):
    return g.node("Concat", ins, axis=int(eqn.params["dimension"]))


def _stack(g, eqn, ins, used):
    axis = int(eqn.params["axis"])
    return g.node("Concat", [g.node("Unsqueeze", [x, g.ints([axis])]) for x in ins], axis=axis)


def _split(g, eqn, ins, used):
    sizes = list(eqn.params["sizes"])
    outs = g.node("Split", [ins[0], g.shape(sizes)], n_out=len(sizes),
                  axis=int(eqn.params["axis"]))
    return outs if len(sizes) > 1 else [outs]


def _pad(g, eqn, ins, used):
    x, value = ins
    config = eqn.params["padding_config"]
    shape = list(_aval_in(eqn).shape)
    for axis, (_, _, interior) in enumerate(config):
        if not _same_size(interior, 0):
            x = _interior(g, x, value, shape, axis, int(interior))
    lo = [c[0] for c in config]
    hi = [c[1] for c in config]
    if any(isinstance(p, (int, np.integer)) and p < 0 for p in lo + hi):
        cut = [(max(-int(a), 0), max(-int(b), 0)) for a, b in zip(lo, hi)]
        x = g.node("Slice", [x, g.ints([a for a, _ in cut]),
                             g.shape([n - b for n, (_, b) in zip(shape, cut)]),
                             g.ints(range(len(shape)))])
        lo, hi = [max(int(a), 0) for a in lo], [max(int(b), 0) for b in hi]
    return g.node("Pad", [x, g.shape(lo + hi), value], mode="constant")


def _interior(g, x, value, shape, axis, k):
    """``k`` padding values between neighbours along ``axis`` (``shape`` is updated): each
    element is paired with a block of ``k`` values, the pairs laid end to end, the last block
    cut off."""
    n = shape[axis]
    block = shape[:axis] + [n, k] + shape[axis + 1:]
    fill = g.node("Expand", [value, g.shape(block)])
    x = g.node("Unsqueeze", [x, g.ints([axis + 1])])
    x = g.node("Concat", [x, fill], axis=axis + 1)
    x = g.node("Reshape", [x, g.shape(shape[:axis] + [n * (k + 1)] + shape[axis + 1:])])
    shape[axis] = n + (n - 1) * k
    return g.node("Slice", [x, g.ints([0]), g.shape([shape[axis]]), g.ints([axis])])


def _dim_as_value(g, eqn, ins, used):
    size = g.node("Squeeze", [g.dim(eqn.params["dim"]), g.ints([0])])
    return g.node("Cast", [size], to=elem_type(_aval_out(eqn).dtype))


def _tile(g, eqn, ins, used):
    return g.node("Tile", [ins[0], g.shape(list(eqn.params["reps"]))])


def _iota(g, eqn, ins, used):
    aval = _aval_out(eqn)
    dim, shape = int(eqn.params["dimension"]), list(eqn.params["shape"])
    n = g.node("Squeeze", [g.dim(shape[dim]), g.ints([0])])
    zero, one = g.const(np.asarray(0, np.int64)), g.const(np.asarray(1, np.int64))
    line = g.node("Cast", [g.node("Range", [zero, n, one])], to=elem_type(aval.dtype))
    axes = [i for i in range(len(shape)) if i != dim]
    if axes:
        line = g.node("Unsqueeze", [line, g.ints(axes)])
    return g.node("Expand", [line, g.shape([1 if i == dim else s
                                            for i, s in enumerate(shape)])])


# --- reductions ---------------------------------------------------------------------------------

def _reduce(op):
    def rule(g, eqn, ins, used):
        axes = [int(a) for a in eqn.params["axes"]]
        if not axes:
            return g.node("Identity", ins)
        dtype = np.dtype(_aval_in(eqn).dtype)
        x = ins[0]
        if dtype == np.bool_:    # all / any as min / max over 0s and 1s
            x = g.node("Cast", [x], to=elem_type(np.int32))
        if op == "ReduceSum" or g.opset >= 18:      # axes became an input in 13 / 18
            out = g.node(op, [x, g.ints(axes)], keepdims=0)
        else:
            out = g.node(op, [x], axes=axes, keepdims=0)
        return g.node("Cast", [out], to=elem_type(np.bool_)) if dtype == np.bool_ else out
    rule.__name__ = f"_{op.lower()}"
    return rule


def _arg(op):
    def rule(g, eqn, ins, used):
        axes = list(eqn.params["axes"])
        out = g.node(op, ins, axis=int(axes[0]), keepdims=0)
        return g.node("Cast", [out], to=elem_type(eqn.params["index_dtype"]))
    return rule


def _cumsum(g, eqn, ins, used):
    axis = g.const(np.asarray(int(eqn.params["axis"]), np.int64))
    return g.node("CumSum", [ins[0], axis], reverse=int(bool(eqn.params["reverse"])))


def _reduce_window(kind):
    """reduce_window_sum / _max / _min as ONNX pooling: the dimensions the window does not
    move along are merged into the pool's batch (channel 1), the others are its spatial
    ones."""
    def rule(g, eqn, ins, used):
        p = eqn.params
        aval = _aval_in(eqn)
        shape, out_shape = list(aval.shape), list(_aval_out(eqn).shape)
        if any(int(d) != 1 for d in p["base_dilation"]):
            raise _unsupported(g, eqn, f"a window reduction with base dilation "
                                       f"{tuple(p['base_dilation'])}")
        if not _is_float(aval.dtype):
            raise _unsupported(g, eqn, f"a window reduction of {np.dtype(aval.dtype).name}")
        win, strides = [int(w) for w in p["window_dimensions"]], \
            [int(st) for st in p["window_strides"]]
        pads, dil = [tuple(int(v) for v in q) for q in p["padding"]], \
            [int(d) for d in p["window_dilation"]]
        spatial = [d for d in range(len(shape))
                   if (win[d], strides[d], pads[d], dil[d]) != (1, 1, (0, 0), 1)]
        still = [d for d in range(len(shape)) if d not in spatial]
        x = ins[0]
        if kind == "min":
            x = g.node("Neg", [x])
        if still + spatial != list(range(len(shape))):
            x = g.node("Transpose", [x], perm=still + spatial)
        x = g.node("Reshape", [x, g.shape([-1, 1] + [shape[d] for d in spatial])])
        attrs = dict(kernel_shape=[win[d] for d in spatial],
                     strides=[strides[d] for d in spatial],
                     pads=[pads[d][0] for d in spatial] + [pads[d][1] for d in spatial],
                     dilations=[dil[d] for d in spatial])
        if kind == "sum":
            if all(d == 1 for d in attrs["dilations"]):
                del attrs["dilations"]          # AveragePool has them from opset 19
            else:
                _needs(g, eqn, 19, "AveragePool with dilations")
            y = g.node("AveragePool", [x], count_include_pad=1, **attrs)
            y = g.node("Mul", [y, g.const(np.asarray(np.prod([win[d] for d in spatial]),
                                                     dtype=aval.dtype))])
        else:
            y = g.node("MaxPool", [x], **attrs)
        y = g.node("Reshape", [y, g.shape([out_shape[d] for d in still + spatial])])
        back = [0] * len(shape)
        for i, d in enumerate(still + spatial):
            back[d] = i
        if back != list(range(len(shape))):
            y = g.node("Transpose", [y], perm=back)
        return g.node("Neg", [y]) if kind == "min" else y
    return rule


# --- contractions -----------------------------------------------------------------------------

def _dot_general(g, eqn, ins, used):
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    lhs, rhs = _aval_in(eqn, 0), _aval_in(eqn, 1)
    out = _aval_out(eqn)
    a, b = ins
    for i, (x, aval) in enumerate(((a, lhs), (b, rhs))):
        if np.dtype(aval.dtype) != np.dtype(out.dtype):
            cast = g.node("Cast", [x], to=elem_type(out.dtype))
            a, b = (cast, b) if i == 0 else (a, cast)
    lc, rc, lb, rb = (tuple(int(d) for d in t) for t in (lc, rc, lb, rb))
    nl, nr = len(lhs.shape), len(rhs.shape)
    # MatMul where the layout is already a (batched) matrix product, Einsum otherwise
    if lb == rb == tuple(range(len(lb))) and lc == (nl - 1,) and (
            (nr == len(rb) + 2 and rc == (nr - 2,) and nl == nr)
            or (not rb and nr == 2 and rc == (0,))):
        return g.node("MatMul", [a, b])
    letters = iter(string.ascii_letters)
    ls = [next(letters) for _ in range(nl)]
    rs = [None] * nr
    for i, j in zip(lc + lb, rc + rb):
        rs[j] = ls[i]
    rs = [c or next(letters) for c in rs]
    res = [ls[i] for i in lb] + [ls[i] for i in range(nl) if i not in lc + lb] + \
        [rs[j] for j in range(nr) if j not in rc + rb]
    return g.node("Einsum", [a, b], equation=f"{''.join(ls)},{''.join(rs)}->{''.join(res)}")


def _conv(g, eqn, ins, used):
    p = eqn.params
    if int(p["batch_group_count"]) != 1:
        raise _unsupported(g, eqn, "a convolution with batch_group_count "
                                   f"{p['batch_group_count']}")
    dn = p["dimension_numbers"]
    lhs_spec, rhs_spec, out_spec = (tuple(int(d) for d in s) for s in
                                    (dn.lhs_spec, dn.rhs_spec, dn.out_spec))
    x = g.node("Transpose", [ins[0]], perm=list(lhs_spec))
    w = g.node("Transpose", [ins[1]], perm=list(rhs_spec))
    shape = [_aval_in(eqn).shape[d] for d in lhs_spec]
    pads = [(int(a), int(b)) for a, b in p["padding"]]
    # a transposed convolution dilates its input (zeros between elements), and may cut it
    zero = g.const(np.zeros((), _aval_in(eqn).dtype))
    for i, d in enumerate(int(d) for d in p["lhs_dilation"]):
        if d != 1:
            x = _interior(g, x, zero, shape, 2 + i, d - 1)
    cut = [(max(-a, 0), max(-b, 0)) for a, b in pads]
    if any(a or b for a, b in cut):
        axes = [2 + i for i, (a, b) in enumerate(cut) if a or b]
        x = g.node("Slice", [x, g.ints([cut[a - 2][0] for a in axes]),
                             g.shape([shape[a] - cut[a - 2][1] for a in axes]), g.ints(axes)])
        pads = [(max(a, 0), max(b, 0)) for a, b in pads]
    y = g.node("Conv", [x, w], strides=[int(s) for s in p["window_strides"]],
               pads=[a for a, _ in pads] + [b for _, b in pads],
               dilations=[int(d) for d in p["rhs_dilation"]],
               group=int(p["feature_group_count"]))
    back = [0] * len(out_spec)
    for logical, physical in enumerate(out_spec):
        back[physical] = logical
    return g.node("Transpose", [y], perm=back)


def _gather(g, eqn, ins, used):
    """lax.gather as ONNX GatherND: the operand's batching dimensions first, then the indexed
    ones, then the rest; the indices' batching dimensions first; then one Transpose into
    lax's output order.  Each indexed dimension takes slices of size 1, every other dimension
    a slice from 0 (a Slice before, where it is not the whole dimension)."""
    operand, indices = ins
    dn, sizes = eqn.params["dimension_numbers"], list(eqn.params["slice_sizes"])
    op_aval, idx_aval = _aval_in(eqn, 0), _aval_in(eqn, 1)
    shape = list(op_aval.shape)
    offset_dims = [int(d) for d in dn.offset_dims]
    collapsed = [int(d) for d in dn.collapsed_slice_dims]
    index_map = [int(d) for d in dn.start_index_map]
    op_batch = [int(d) for d in dn.operand_batching_dims]
    idx_batch = [int(d) for d in dn.start_indices_batching_dims]
    wide = [d for d in index_map if not _same_size(sizes[d], 1)]
    for d in wide:
        if not isinstance(sizes[d], (int, np.integer)):
            raise _unsupported(g, eqn, f"a gather of slices of size {sizes[d]} along an "
                                       f"indexed dimension ({d})")
    rest = [d for d in range(len(shape)) if d not in op_batch and d not in index_map]
    partial = [d for d in rest if not _same_size(sizes[d], shape[d])]
    if partial:
        operand = g.node("Slice", [operand, g.ints([0] * len(partial)),
                                   g.shape([sizes[d] for d in partial]), g.ints(partial)])
    order = op_batch + index_map + rest
    if order != list(range(len(shape))):
        operand = g.node("Transpose", [operand], perm=order)
    n_idx = len(idx_aval.shape) - 1
    other = [d for d in range(n_idx) if d not in idx_batch]
    idx_order = idx_batch + other + [n_idx]
    if idx_order != list(range(n_idx + 1)):
        indices = g.node("Transpose", [indices], perm=idx_order)
    indices = g.node("Cast", [indices], to=elem_type(np.int64))
    if str(eqn.params.get("mode")).endswith("CLIP") or wide:
        # jax clamps a start so that its whole slice fits
        top = g.node("Sub", [g.shape([shape[d] for d in index_map]),
                             g.ints([sizes[d] for d in index_map])])
        indices = g.node("Min", [g.node("Max", [indices, g.ints([0])]), top])
    for d in wide:
        # a slice of size s along an indexed dimension: s indices, one more index dimension
        steps = np.zeros((int(sizes[d]), len(index_map)), np.int64)
        steps[:, index_map.index(d)] = np.arange(int(sizes[d]))
        indices = g.node("Add", [g.node("Unsqueeze", [indices, g.ints([-2])]), g.const(steps)])
    out = g.node("GatherND", [operand, indices], batch_dims=len(op_batch))
    labels = [("i", d) for d in idx_batch + other] + [("o", d) for d in wide] + \
        [("o", d) for d in rest]
    kept = [d for d in index_map if d not in collapsed and d not in wide]   # size-1 slices
    if kept:
        out = g.node("Unsqueeze", [out, g.ints(range(len(labels), len(labels) + len(kept)))])
        labels += [("o", d) for d in kept]
    offset_src = sorted(d for d in range(len(shape)) if d not in collapsed and d not in op_batch)
    batch_src = iter(range(n_idx))
    n_out = len(_aval_out(eqn).shape)
    want = [("o", offset_src[offset_dims.index(i)]) if i in offset_dims
            else ("i", next(batch_src)) for i in range(n_out)]
    perm = [labels.index(w) for w in want]
    return out if perm == list(range(n_out)) else g.node("Transpose", [out], perm=perm)


def _scatter(reduction):
    """lax.scatter (and its -add, -mul, -min, -max forms) as ONNX ScatterND: the scattered
    dimensions of the operand first, the updates' scatter dimensions first, then one Transpose
    back.  Each scattered dimension takes windows of size 1; every other dimension a whole
    window."""
    def rule(g, eqn, ins, used):
        operand, indices, updates = ins
        dn = eqn.params["dimension_numbers"]
        shape = list(_aval_in(eqn, 0).shape)
        up_shape = list(_aval_in(eqn, 2).shape)
        window = [int(d) for d in dn.update_window_dims]
        inserted = [int(d) for d in dn.inserted_window_dims]
        to_operand = [int(d) for d in dn.scatter_dims_to_operand_dims]
        if tuple(dn.operand_batching_dims) or sorted(inserted) != sorted(to_operand):
            raise _unsupported(g, eqn, "a scatter with batching dimensions or windows along "
                                       "its scattered dimensions")
        rest = [d for d in range(len(shape)) if d not in to_operand]
        for w, d in zip(window, rest):
            if not _same_size(up_shape[w], shape[d]):
                raise _unsupported(g, eqn, f"a scatter of partial windows ({up_shape[w]} of "
                                           f"{shape[d]} along dimension {d})")
        order = to_operand + rest
        if order != list(range(len(shape))):
            operand = g.node("Transpose", [operand], perm=order)
        scatter_dims = [d for d in range(len(up_shape)) if d not in window]
        if scatter_dims + window != list(range(len(up_shape))):
            updates = g.node("Transpose", [updates], perm=scatter_dims + window)
        indices = g.node("Cast", [indices], to=elem_type(np.int64))
        if reduction != "none":
            _needs(g, eqn, 16 if reduction in ("add", "mul") else 18,
                   f"ScatterND with reduction '{reduction}'")
        attrs = {} if reduction == "none" else {"reduction": reduction}
        out = g.node("ScatterND", [operand, indices, updates], **attrs)
        back = [0] * len(shape)
        for i, d in enumerate(order):
            back[d] = i
        return out if back == list(range(len(shape))) else g.node("Transpose", [out],
                                                                    perm=back)
    return rule


# --- calls and loops ------------------------------------------------------------------------------

def _call(key):
    def rule(g, eqn, ins, used):
        name = eqn.params.get("name")
        return g.inline(eqn, ins, used, eqn.params[key],
                        name=str(name) if name is not None else None)
    return rule


def _custom_jvp(g, eqn, ins, used):
    return g.inline(eqn, ins, used, eqn.params["call_jaxpr"], name=_fun_name(eqn))


def _custom_vjp(g, eqn, ins, used):
    jaxpr = eqn.params.get("call_jaxpr", eqn.params.get("fun_jaxpr"))
    return g.inline(eqn, ins, used, jaxpr, name=_fun_name(eqn))


def _fun_name(eqn):
    name = eqn.params.get("name")
    return str(name) if name is not None else None


def _scan(g, eqn, ins, used):
    """An ONNX Loop over the scanned axis: the body reads step i of each scanned input
    (``Gather``) and the constants from the enclosing graph, carries the carry, and its
    per-step outputs are stacked by the Loop (then reversed for a reverse scan)."""
    p = eqn.params
    n_consts, n_carry = int(p["num_consts"]), int(p["num_carry"])
    consts, carry, xs = ins[:n_consts], ins[n_consts:n_consts + n_carry], \
        ins[n_consts + n_carry:]
    trips = g.node("Squeeze", [g.dim(p["length"]), g.ints([0])])     # a size, maybe symbolic
    need_ys = list(used[n_carry:])
    helper = g.helper

    def info(name, aval=None):
        dtype = np.bool_ if aval is None else aval.dtype
        return helper.make_tensor_value_info(name, elem_type(dtype), None if aval else [])
    with g.subgraph() as body:
        step, cond = g.fresh("step"), g.fresh("cond")
        carry_in = [g.fresh("carry") for _ in carry]
        body[1] += [helper.make_tensor_value_info(step, elem_type(np.int64), []), info(cond)]
        body[1] += [info(n, v.aval) for n, v in
                    zip(carry_in, eqn.invars[n_consts:n_consts + n_carry])]
        t = step
        if p["reverse"]:
            t = g.node("Sub", [g.node("Sub", [trips, g.const(np.asarray(1, np.int64))]), step])
        xt = [g.node("Gather", [x, t], axis=0) for x in xs]
        outs = g.inline(eqn, consts + carry_in + xt, [True] * n_carry + need_ys, p["jaxpr"])
        results = [g.node("Identity", [cond])]
        results += [g.node("Identity", [o]) for o, keep in
                    zip(outs, [True] * n_carry + need_ys) if keep]
        inner = p["jaxpr"].jaxpr.outvars
        kept_avals = [v.aval for v, keep in zip(inner, [True] * n_carry + need_ys) if keep]
        body[2] += [info(results[0])] + [info(r, a) for r, a in zip(results[1:], kept_avals)]
        graph = helper.make_graph(body[0], g.fresh("scan_body"), body[1], body[2])
    n_ys = sum(need_ys)
    loop = g.node("Loop", [trips, g.const(np.asarray(True))] + carry,
                  n_out=n_carry + n_ys, body=graph)
    loop = loop if isinstance(loop, list) else [loop]
    carry_out, ys = loop[:n_carry], iter(loop[n_carry:])
    stacked = []
    for keep in need_ys:
        if not keep:
            stacked.append(None)
            continue
        y = next(ys)
        if p["reverse"]:
            y = g.node("Slice", [y, g.ints([-1]), g.ints([np.iinfo(np.int64).min]), g.ints([0]),
                                 g.ints([-1])])
        stacked.append(y)
    return carry_out + stacked


def _atan2(g, eqn, ins, used):
    """atan(y / x) moved into the right quadrant, with IEEE's signed zeros: where x < 0 add
    +-pi (by y's sign bit); where x is +-0, +-pi/2, or for y = +-0 the signed 0 or pi."""
    y, x = ins
    c = lambda v: _scalar_like(g, eqn, v)    # noqa: E731

    def signbit(v):     # v < 0, or v is -0.0 (1 / -0.0 = -inf)
        zero = g.node("Equal", [v, c(0)])
        return g.node("Or", [g.node("Less", [v, c(0)]),
                             g.node("And", [zero, g.node("Less", [g.node("Reciprocal", [v]),
                                                                  c(0)])])])

    def by_y(neg, pos):
        return g.node("Where", [y_neg, c(neg), c(pos)])
    y_neg, x_neg = signbit(y), signbit(x)
    base = g.node("Atan", [g.node("Div", [y, x])])
    base = g.node("Where", [g.node("Less", [x, c(0)]),
                            g.node("Add", [base, by_y(-np.pi, np.pi)]), base])
    on_axis = g.node("Where", [x_neg, by_y(-np.pi, np.pi), by_y(-0.0, 0.0)])
    at_zero = g.node("Where", [g.node("Equal", [y, c(0)]), on_axis, by_y(-np.pi / 2, np.pi / 2)])
    return g.node("Where", [g.node("Equal", [x, c(0)]), at_zero, base])


def _top_k(g, eqn, ins, used):
    k = g.ints([int(eqn.params["k"])])
    values, indices = g.node("TopK", [ins[0], k], n_out=2, axis=-1, largest=1, sorted=1)
    return [values, g.node("Cast", [indices], to=elem_type(_aval_out(eqn, 1).dtype))]


RULES = {
    # elementwise
    "add": _same("Add"), "sub": _same("Sub"), "mul": _same("Mul"), "div": _div,
    "max": _same("Max"), "min": _same("Min"), "pow": _same("Pow"), "rem": _rem,
    "neg": _same("Neg"), "abs": _same("Abs"), "sign": _same("Sign"),
    "floor": _same("Floor"), "ceil": _same("Ceil"), "round": _round,
    "exp": _same("Exp"), "exp2": _exp2, "log": _same("Log"), "log1p": _log1p,
    "expm1": _expm1, "sqrt": _same("Sqrt"), "rsqrt": _rsqrt, "cbrt": _cbrt,
    "tanh": _same("Tanh"), "logistic": _same("Sigmoid"), "erf": _same("Erf"), "erfc": _erfc,
    "sin": _same("Sin"), "cos": _same("Cos"), "tan": _same("Tan"), "asin": _same("Asin"),
    "acos": _same("Acos"), "atan": _same("Atan"), "sinh": _same("Sinh"),
    "cosh": _same("Cosh"), "asinh": _same("Asinh"), "acosh": _same("Acosh"),
    "atanh": _same("Atanh"), "square": _square, "integer_pow": _integer_pow,
    "atan2": _atan2, "is_finite": _is_finite, "clamp": _clamp, "select_n": _select_n,
    "eq": _same("Equal"), "ne": _ne, "lt": _same("Less"), "le": _same("LessOrEqual"),
    "gt": _same("Greater"), "ge": _same("GreaterOrEqual"),
    "and": _logical("And", "BitwiseAnd"), "or": _logical("Or", "BitwiseOr"),
    "xor": _logical("Xor", "BitwiseXor"), "not": _logical("Not", "BitwiseNot"),
    "convert_element_type": _convert, "copy": _identity, "copy_p": _identity,
    "stop_gradient": _identity, "optimization_barrier": _identity,
    "reduce_precision": _reduce_precision,
    # shapes
    "broadcast_in_dim": _broadcast_in_dim, "reshape": _reshape, "squeeze": _squeeze,
    "expand_dims": _expand_dims, "transpose": _transpose, "slice": _slice,
    "dynamic_slice": _dynamic_slice, "rev": _rev, "concatenate": _concatenate,
    "stack": _stack, "split": _split, "pad": _pad, "iota": _iota,
    "tile": _tile, "dim_as_value": _dim_as_value,
    # reductions
    "reduce_sum": _reduce("ReduceSum"), "reduce_max": _reduce("ReduceMax"),
    "reduce_min": _reduce("ReduceMin"), "reduce_prod": _reduce("ReduceProd"),
    "reduce_and": _reduce("ReduceMin"), "reduce_or": _reduce("ReduceMax"),
    "argmax": _arg("ArgMax"), "argmin": _arg("ArgMin"), "cumsum": _cumsum,
    "top_k": _top_k, "reduce_window_sum": _reduce_window("sum"),
    "reduce_window_max": _reduce_window("max"), "reduce_window_min": _reduce_window("min"),
    # contractions and gathers
    "dot_general": _dot_general, "conv_general_dilated": _conv, "gather": _gather,
    "scatter": _scatter("none"), "scatter-add": _scatter("add"),
    "scatter_add": _scatter("add"), "scatter-mul": _scatter("mul"),
    "scatter_mul": _scatter("mul"), "scatter-min": _scatter("min"),
    "scatter_min": _scatter("min"), "scatter-max": _scatter("max"),
    "scatter_max": _scatter("max"),
    # calls and loops
    "pjit": _call("jaxpr"), "jit": _call("jaxpr"), "closed_call": _call("call_jaxpr"),
    "core_call": _call("call_jaxpr"), "remat": _call("jaxpr"), "checkpoint": _call("jaxpr"),
    "custom_jvp_call": _custom_jvp, "custom_vjp_call": _custom_vjp,
    "custom_vjp_call_jaxpr": _custom_vjp, "scan": _scan,
}
