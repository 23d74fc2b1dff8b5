"""Data-dependent control flow: ``torch.cond`` and ``torch.while_loop``.

NOTE [ cond and while_loop ]
PyTorch runs these as higher-order ops that torch.compile captures whole.  torchlike runs them
as the control flow they describe: with a concrete predicate (eager mode) the branch it selects
runs, or the loop runs in Python, recorded op by op like any eager code (so gradients reach the
operands and every tensor the functions use).  With a traced predicate (inside
torchlike.compile, torchlike.func, to_jax) they become ``jax.lax.cond`` / ``jax.lax.while_loop``
over the operands (through ``func.from_jax``: one FromJaxBackward node; a while_loop is not
differentiable there, as in JAX); the functions then see only their operands as variables, and
the tensors they close over are constants.  PyTorch's checks that run before either: the
predicate is a bool or a one-element tensor, the operands (of a tensor predicate) a tuple or
list, a loop body returns what it was given (number, shapes, dtypes).
"""
import jax

from .._tensor import Tensor


def _predicate(pred):
    """A Python bool, or None when ``pred`` is a traced tensor."""
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got "
                               f"{pred}.")
        value = pred._value()
        if isinstance(value, jax.core.Tracer):
            return None
        return bool(value.reshape(()))
    if isinstance(pred, (bool, int)):
        return bool(pred)
    raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")


def _check_operands(what, operands):
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(f"Expect {what} to be a tuple of possibly nested dict/list/tuple that "
                           f"only consists of tensor leaves, but got {operands}.")
    for leaf in jax.tree_util.tree_leaves(operands, is_leaf=lambda x: isinstance(x, Tensor)):
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"Expect {what} to be a tuple of possibly nested dict/list/tuple "
                               f"that only consists of tensor leaves, but got {operands}.")


def cond(pred, true_fn, false_fn, operands=()):
    """Mirrors ``torch.cond``: ``true_fn(*operands)`` if ``pred`` else
    ``false_fn(*operands)`` (NOTE [ cond and while_loop ])."""
    taken = _predicate(pred)
    if not isinstance(pred, Tensor):   # PyTorch calls the branch at once, unchecked
        return (true_fn if taken else false_fn)(*operands)
    _check_operands("operands", operands)
    if taken is not None:
        return (true_fn if taken else false_fn)(*operands)
    from ..func._bridge import bridge_op, to_jax
    on_true, on_false = to_jax(true_fn), to_jax(false_fn)
    return bridge_op(lambda p, *xs: jax.lax.cond(p.reshape(()), on_true, on_false, *xs),
                     x64=True)(pred, *operands)


def _same_metadata(out, carried):
    if not isinstance(out, (tuple, list)) or len(out) != len(carried):
        raise RuntimeError(f"body_fn should return a tuple or list of {len(carried)} tensors, "
                           f"the same number as carried_inputs, but got {out}")
    for i, (a, b) in enumerate(zip(out, carried)):
        if not isinstance(a, Tensor) or a.shape != b.shape or a.dtype is not b.dtype:
            raise RuntimeError(
                f"Expected body_fn_output and carried_inputs to have same metadata but found:\n"
                f"pair[{i}] differ in {_difference(a, b)}")


def _difference(a, b):
    if not isinstance(a, Tensor):
        return f"'type: {type(a).__name__} vs Tensor'"
    if a.dtype is not b.dtype:
        return f"'dtype: {a.dtype} vs {b.dtype}'"
    return f"'shape: {list(a.shape)} vs {list(b.shape)}'"


def while_loop(cond_fn, body_fn, carried_inputs):
    """Mirrors ``torch.while_loop``: ``carried_inputs = body_fn(*carried_inputs)`` while
    ``cond_fn(*carried_inputs)``; the final values, in the type (tuple or list) given
    (NOTE [ cond and while_loop ])."""
    _check_operands("carried_inputs", carried_inputs)
    kind = type(carried_inputs)
    carried = tuple(carried_inputs)
    while True:
        go = _predicate(cond_fn(*carried))
        if go is None:
            return kind(_traced_loop(cond_fn, body_fn, carried))
        if not go:
            return kind(carried)
        out = body_fn(*carried)
        _same_metadata(out, carried)
        carried = tuple(out)


def _traced_loop(cond_fn, body_fn, carried):
    from ..func._bridge import bridge_op, to_jax
    test, body = to_jax(cond_fn), to_jax(body_fn)

    def loop(*xs):
        return jax.lax.while_loop(lambda c: test(*c).reshape(()), lambda c: tuple(body(*c)),
                                  tuple(xs))
    return bridge_op(loop, x64=True)(*carried)


PUBLIC = ("cond", "while_loop")
TENSOR_METHODS = {}
