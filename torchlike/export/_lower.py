"""Lowering a ``_capture.Capture`` with jax.export, and checking a call's inputs against
the exported signature.

NOTE [ symbolic batch ]
A dynamic dimension (``torchlike.export.Dim``) becomes a jax.export symbolic dimension, and the
program is first traced with it directly ("symbolic"): jax's shape polymorphism then carries the
symbol through every op.  Much of torchlike's Python-side shape logic (view strides, ``int()``
of a size) needs concrete sizes, so that trace can fail.  When it does and every dynamic
dimension is one symbol (a batch), the forward is exported per example instead ("per-example"):
``jax.vmap`` over the batch axis of a function that gives the model a batch of one, so torchlike
only ever sees concrete shapes while the exported program takes any batch size.  That is exact
only for a forward whose batch rows do not interact, so it is checked at export time: the
forward must write no state (no running statistics, no random draws: call ``model.eval()``),
each output's batch axis is found from traces at batch sizes 1 and 2, and the exported program
must reproduce the eager forward on the example inputs.
"""
import jax
import jax.numpy as jnp
import numpy as np

from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from . import _capture as cap


def dim_str(d):
    """A dimension as the manifest stores it: an int, or a symbol's name."""
    try:
        return int(d)
    except Exception:
        return str(d)


def aval_json(aval):
    return {"shape": [dim_str(d) for d in aval.shape], "dtype": jnp.dtype(aval.dtype).name}


# --- lowering -------------------------------------------------------------------------------------

class _NotPerExample(Exception):
    pass


def _specs(capture, shapes):
    """``(values, args, kwargs)`` specs: ``shapes[j]`` is input j's shape."""
    values = {e.name: capture.spec(e) for e in capture.kept}
    it = iter(zip(capture.inputs, shapes))
    leaves = []
    for is_input in capture.leaf_is_input:
        if is_input:
            t, shape = next(it)
            leaves.append(jax.ShapeDtypeStruct(tuple(shape), t._arr.dtype))
        else:
            leaves.append(None)
    args, kwargs = jax.tree_util.tree_unflatten(capture.tree, leaves)
    return values, args, kwargs


def _export(fn, name, platforms, specs, traced=None):
    fn.__name__ = fn.__qualname__ = name
    exported = jax.export.export(jax.jit(fn), platforms=platforms)(*specs)
    if traced is not None:
        traced[:] = [fn, specs]
    return exported


def lower(capture, dims, symbols, platforms, name, traced=None):
    """Export ``capture.pure``.  ``dims[j]``: input j's {dim index: symbol name}; ``symbols``:
    {name: jax symbolic dimension}.  Returns (jax.export.Exported, method).  ``traced``: a
    list that receives the exported jax function and its input specs (torchlike.onnx traces
    them again into a jaxpr)."""
    shapes = [[symbols[d[i]] if i in d else n for i, n in enumerate(t.shape)]
              for t, d in zip(capture.inputs, dims)]

    def pure(values, args, kwargs):
        return capture.pure(values, args, kwargs)
    if not symbols:
        return _export(pure, name, platforms, _specs(capture, shapes), traced), "static"
    try:
        return _export(pure, name, platforms, _specs(capture, shapes), traced), "symbolic"
    except Exception as e:   # noqa: BLE001 -- any failure of the symbolic trace; see the note
        direct = e
    names = {s for d in dims for s in d.values()}
    try:
        if len(names) != 1:
            raise _NotPerExample(f"it has {len(names)} dynamic dimensions ({sorted(names)}); "
                                 "only one (a batch dimension) can be exported per example")
        return _lower_per_example(capture, dims, names.pop(), symbols, platforms, name,
                                  traced), \
            "per-example"
    except _NotPerExample as e:
        raise RuntimeError(
            f"torchlike.export: cannot export {cap._qualname(capture.fn)} with a dynamic "
            f"dimension.  Tracing it with a symbolic size failed "
            f"({type(direct).__name__}: {str(direct).splitlines()[0] if str(direct) else ''}), "
            f"and it cannot be exported per example: {e}.  Export it with static shapes "
            "(dynamic_shapes=None) instead (see NOTE [ symbolic batch ])") from direct


def _lower_per_example(capture, dims, symbol, symbols, platforms, name, traced=None):
    axes = []
    for j, d in enumerate(dims):
        at = [i for i, s in d.items() if s == symbol]
        if len(at) > 1:
            raise _NotPerExample(f"input {capture.input_names[j]} has the batch dimension twice")
        axes.append(at[0] if at else None)

    def concrete(n):
        return _specs(capture, [[n if i == a else s for i, s in enumerate(t.shape)]
                                for t, a in zip(capture.inputs, axes)])
    outs1, updates = jax.eval_shape(capture.pure, *concrete(1))
    if updates:
        raise _NotPerExample(f"its forward writes state ({', '.join(sorted(updates))}); call "
                             "model.eval() for a forward without running statistics or random "
                             "draws")
    outs2, _ = jax.eval_shape(capture.pure, *concrete(2))
    out_leaves, out_tree = jax.tree_util.tree_flatten(outs1)
    out_axes = []
    for o1, o2, oname in zip(out_leaves, jax.tree_util.tree_leaves(outs2),
                             cap.output_names(outs1)):
        differ = [i for i, (a, b) in enumerate(zip(o1.shape, o2.shape)) if a != b]
        if len(o1.shape) != len(o2.shape) or len(differ) > 1 or (
                differ and (o1.shape[differ[0]], o2.shape[differ[0]]) != (1, 2)):
            raise _NotPerExample(f"output {oname} has shape {o1.shape} for a batch of 1 and "
                                 f"{o2.shape} for a batch of 2, so it has no single batch axis")
        out_axes.append(differ[0] if differ else None)
    arg_tree = jax.tree_util.tree_structure(concrete(1)[1:])

    def one(values, args, kwargs):
        leaves = jax.tree_util.tree_leaves((args, kwargs))
        leaves = [x if a is None else jnp.expand_dims(x, a) for x, a in zip(leaves, axes)]
        outputs, _ = capture.pure(values, *jax.tree_util.tree_unflatten(arg_tree, leaves))
        ys = jax.tree_util.tree_leaves(outputs)
        return jax.tree_util.tree_unflatten(
            out_tree, [y if a is None else jnp.squeeze(y, a) for y, a in zip(ys, out_axes)])

    def pure(values, args, kwargs):
        in_axes = jax.tree_util.tree_unflatten(arg_tree, axes)
        outputs = jax.vmap(one, in_axes=(None,) + tuple(in_axes),
                           out_axes=jax.tree_util.tree_unflatten(out_tree, out_axes))(
            values, args, kwargs)
        return outputs, {}
    shapes = [[symbols[d[i]] if i in d else n for i, n in enumerate(t.shape)]
              for t, d in zip(capture.inputs, dims)]
    exported = _export(pure, name, platforms, _specs(capture, shapes), traced)
    _check_per_example(capture, exported)
    return exported


def _check_per_example(capture, exported):
    """The per-example program must give the eager forward's numbers on the example inputs."""
    values = {e.name: capture.live(e) for e in capture.kept}
    leaves = [t._arr if is_input else None
              for t, is_input in zip(_inputs_by_leaf(capture), capture.leaf_is_input)]
    args, kwargs = jax.tree_util.tree_unflatten(capture.tree, leaves)
    got, _ = exported.call(values, args, kwargs)
    with no_grad():
        want = capture.fn(*capture.args, **capture.kwargs)
    want = [t._value() for t in jax.tree_util.tree_leaves(
        want, is_leaf=lambda x: isinstance(x, Tensor))]
    for g, w, oname in zip(jax.tree_util.tree_leaves(got), want,
                           cap.output_names(got)):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape or not np.allclose(g, w, rtol=1e-4, atol=1e-5 * (
                1 + float(np.max(np.abs(w), initial=0)))):
            raise _NotPerExample(f"output {oname} computed one example at a time differs from "
                                 "the batched forward, so the batch rows interact")


def _inputs_by_leaf(capture):
    it = iter(capture.inputs)
    return [next(it) if is_input else None for is_input in capture.leaf_is_input]


# --- checking a call ------------------------------------------------------------------------------

def leaves_meta(capture):
    """The manifest's description of each leaf of the example ``(args, kwargs)``."""
    out, j, c = [], 0, 0
    for name, is_input in zip(capture.input_names, capture.leaf_is_input):
        if is_input:
            out.append({"name": name, "input": j})
            j += 1
        else:
            value = capture.constants[c]
            c += 1
            if isinstance(value, (bool, int, float, str)):
                out.append({"name": name, "constant": value})
            else:
                out.append({"name": name, "opaque": type(value).__name__})
    return out


def _spec_str(args_def, kwargs_def):
    return f"{args_def}, {kwargs_def}"


def check_call(meta, exported, args, kwargs):
    """The ``(args, kwargs)`` for ``exported.call``; a torch.export-style error (naming the
    input) for a call that does not fit the exported signature."""
    leaves, tree = cap.flatten_inputs(args, kwargs)
    subst = [cap.as_array(x) if cap.is_array(x) else None for x in leaves]
    sub_args, sub_kwargs = jax.tree_util.tree_unflatten(tree, subst)
    args_def, kwargs_def = exported.in_tree.children()[0].children()[1:3]
    got_kwargs = jax.tree_util.tree_structure(sub_kwargs)
    if (jax.tree_util.tree_structure(sub_args) != args_def
            or got_kwargs != kwargs_def
            or len(leaves) != len(meta["leaves"])
            or any(("input" in m) != cap.is_array(x) for m, x in zip(meta["leaves"], leaves))):
        raise ValueError(
            "Trying to flatten user inputs with exported input tree spec: \n"
            f"{_spec_str(args_def, kwargs_def)}\n"
            "but actually got inputs with tree spec of: \n"
            f"{_spec_str(jax.tree_util.tree_structure(sub_args), got_kwargs)}.\n"
            "Please check that the inputs have the same number and type of args and kwargs as "
            "the ones you used when tracing.")
    bound, ranges = {}, meta.get("range_constraints", {})
    for m, x, a in zip(meta["leaves"], leaves, subst):
        name = m["name"]
        if "constant" in m:
            if type(x) is not type(m["constant"]) or x != m["constant"]:
                raise AssertionError(f"Guard failed: {name} == {m['constant']!r}")
            continue
        if "input" not in m:
            continue
        spec = meta["inputs"][m["input"]]
        shape = spec["shape"]
        if a.ndim != len(shape):
            raise AssertionError(f"Guard failed: {name}.dim() == {len(shape)}")
        for d, (n, want) in enumerate(zip(a.shape, shape)):
            here = f"{name}.size()[{d}]"
            if isinstance(want, int):
                if n != want:
                    raise AssertionError(f"Guard failed: {here} == {want}")
                continue
            if want in bound:
                if n != bound[want][0]:
                    raise AssertionError(f"Guard failed: {here} == {bound[want][1]}")
                continue
            bound[want] = (n, here)
            lo, hi = ranges.get(want, (1, None))
            if n < max(lo, 1):
                raise AssertionError(f"Guard failed: {here} >= {max(lo, 1)}")
            if hi is not None and n > hi:
                raise AssertionError(f"Guard failed: {here} <= {hi}")
        if jnp.dtype(a.dtype).name != spec["dtype"]:
            raise AssertionError(f"Guard failed: {name}.dtype == torch.{spec['dtype']}")
    return sub_args, sub_kwargs
