"""Higher-level autograd on whole functions (mirrors torch.autograd.functional).

Everything here is built from ``autograd.grad``, as in PyTorch: ``vjp`` is one backward pass,
``jvp`` and ``hvp`` use the double-backward trick (see NOTE [ double-backward trick ]), and
``jacobian`` / ``hessian`` stack one vector product per row (or per column in forward mode).
``vectorize=True`` pushes a whole basis of vectors through a single backward pass with
``jax.vmap`` (see NOTE [ vectorized backward ]).

NOTE [ double-backward trick ]
PyTorch's functional ``jvp`` has no forward-mode AD under it. For ``y = f(x)``, the backward pass
``g -> J^T g`` is linear in ``g``; differentiating it once more w.r.t. ``g`` along ``v`` gives
``(J^T)^T v = J v``. So: make ``g = zeros_like(y)`` require grad, compute
``gi = grad(y, x, g, create_graph=True)`` and then ``grad(gi, g, v)``. The value of ``g`` never
matters (the map is linear), which is why zeros are used.

NOTE [ vectorized backward ]
torch vmaps ``autograd.grad`` over a batch of ``grad_outputs``. torchlike's engine runs every
node's backward as a jax function, so ``jax.vmap`` over a function that wraps the batched
cotangent in a Tensor and calls ``autograd.grad`` traces the same backward walk once with a
batched cotangent. The graph cannot be recorded through vmap (its values are tracers), so with
``create_graph=True`` the vectorized paths fall back to one ``autograd.grad`` per basis vector;
the results are the same.
"""
import jax.numpy as jnp
import numpy as np

from .. import _x64
from . import grad as _grad
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _tensor_cls():
    from .._tensor import Tensor
    return Tensor


def _zeros_like(t, requires_grad=False):
    from .._creation import zeros_like
    return zeros_like(t, requires_grad=requires_grad)


def _zeros(shape, dtype):
    from .._creation import zeros
    return zeros(tuple(shape), dtype=dtype)


def _stack(tensors):
    from .._ops.shape import stack
    return stack(tensors, 0)


# --- argument handling (PyTorch's helpers, same names and wording) ---------------------------

def _as_tuple(inp, arg_name=None, fn_name=None):
    """(was_tuple, tuple of Tensors); checks every element is a Tensor when names are given."""
    if arg_name is None and fn_name is None:
        return inp if isinstance(inp, tuple) else tuple(inp) if isinstance(inp, list) else (inp,)
    Tensor = _tensor_cls()
    is_tuple = isinstance(inp, tuple)
    if not is_tuple:
        inp = (inp,)
    for i, el in enumerate(inp):
        if not isinstance(el, Tensor):
            where = (f"the value at index {i} has type {type(el)}" if is_tuple
                     else f"the given {arg_name} has type {type(el)}")
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but {where}.")
    return is_tuple, inp


def _tuple_postprocess(res, to_unpack):
    """Undo ``_as_tuple`` (one flag) or both levels of a nested result (a pair of flags)."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph, need_graph):
    """Fresh Tensor objects for the inputs: a differentiable view when the caller wants a graph
    back to them, else a detached leaf (so captured copies of the inputs are told apart)."""
    return tuple(inp.view_as(inp) if create_graph and inp.requires_grad
                 else inp.detach().requires_grad_(need_graph) for inp in inputs)


def _grad_postprocess(inputs, create_graph):
    """Detach results unless the caller asked for a graph (nested tuples allowed)."""
    if isinstance(inputs[0], _tensor_cls()):
        return inputs if create_graph else tuple(inp.detach() for inp in inputs)
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got "
                               f"{len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but "
                               f"got {el_v.size()}.")


def _check_requires_grad(inputs, input_type, strict):
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if inp.requires_grad:
            continue
        if input_type == "hessian":
            raise RuntimeError(
                f"The hessian of the user-provided function with respect to input {i} is "
                "independent of the input. This is not allowed in strict mode. You should "
                "ensure that your function is thrice differentiable and that the hessian "
                "depends on the inputs.")
        if input_type == "jacobian":
            raise RuntimeError(
                "While computing the hessian, found that the jacobian of the user-provided "
                f"function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).")
        if input_type == "grad_inputs":
            raise RuntimeError(
                f"The gradient with respect to input {i} is independent of the inputs of the "
                "user-provided function. This is not allowed in strict mode.")
        raise RuntimeError(
            f"Output {i} of the user-provided function does not require gradients. The outputs "
            "must be computed in a differentiable manner from the input when running in "
            "strict mode.")


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None,
                   is_grads_batched=False):
    """``autograd.grad`` that skips outputs which are None or do not require grad (and returns
    all-None when none is left) and never complains about unused inputs."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    outs, gouts = zip(*pairs)
    return _grad(list(outs), list(inputs), list(gouts), allow_unused=True,
                 create_graph=create_graph, retain_graph=retain_graph,
                 is_grads_batched=is_grads_batched)


_STRICT_NONE = {
    "back": "The output of the user-provided function is independent of input {i}. This is "
            "not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
                   "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry "
                         "{i} in the grad_jacobian. This is not allowed in strict mode as it "
                         "prevents from using the double backward trick to replace forward "
                         "mode AD.",
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    """Replace missing gradients by zeros shaped like ``refs`` (or raise in strict mode)."""
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_STRICT_NONE[stage].format(i=i))
            g = _zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               "create_graph=True.")
        res.append(g)
    return tuple(res)


def _prepare(fn_name, func, inputs, v, create_graph, strict, v_like):
    """Shared front half of vjp/jvp/vhp/hvp, in PyTorch's order: tuple-ize and preprocess the
    inputs, check ``v`` against the inputs (``v_like="inputs"``) before running ``func`` or
    against its outputs (``v_like="outputs"``) after, and check the outputs."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
    if v_like == "inputs":
        v = _prepare_v(fn_name, v, inputs, is_inputs_tuple, create_graph, "input to the "
                       "user-provided function is a single Tensor with a single element.")
    outputs = func(*inputs)
    is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                          fn_name)
    _check_requires_grad(outputs, "outputs", strict=strict)
    if v_like == "outputs":
        v = _prepare_v(fn_name, v, outputs, is_outputs_tuple, create_graph, "user-provided "
                       "function returns a single Tensor with a single element.")
    return is_inputs_tuple, inputs, v, is_outputs_tuple, outputs


def _prepare_v(fn_name, v, refs, is_refs_tuple, create_graph, none_ok_when):
    if v is None:
        if len(refs) != 1 or refs[0].nelement() != 1:
            raise RuntimeError(f"The vector v can only be None if the {none_ok_when}")
        return None
    _, v = _as_tuple(v, "v", fn_name)
    v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
    _validate_v(v, refs, is_refs_tuple)
    return v


def _check_scalar_output(fn_name, outputs, is_outputs_tuple):
    if is_outputs_tuple or not isinstance(outputs[0], _tensor_cls()):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                           "contain a single element")


def _double_back(outputs, inputs, strict):
    """First half of the double-backward trick: the zero cotangents ``g`` (requiring grad) and
    ``grad(outputs, inputs, g, create_graph=True)``, which is linear in ``g``."""
    grad_outputs = tuple(_zeros_like(out, requires_grad=True) for out in outputs)
    grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
    _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    return grad_outputs, grad_inputs


# --- public API ---------------------------------------------------------------------------

def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """Mirrors ``torch.autograd.functional.vjp``: ``v^T J`` of ``func`` at ``inputs``.

    Args:
        func: takes Tensor inputs and returns a Tensor or a tuple of Tensors.
        inputs: a Tensor or a tuple of Tensors.
        v: same shapes as the outputs; may be None when the output has a single element.
        create_graph: return results that are differentiable (else they are detached).
        strict: raise if an output does not depend on the inputs, instead of returning zeros.

    Returns:
        ``(func_output, vjp)``; ``vjp`` has the structure and shapes of ``inputs``.
    """
    with enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs = _prepare(
            "vjp", func, inputs, v, create_graph, strict, v_like="outputs")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "back")
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(result, create_graph), is_inputs_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """Mirrors ``torch.autograd.functional.jvp``: ``J v`` by the double-backward trick
    (NOTE [ double-backward trick ]).

    Args:
        func: takes Tensor inputs and returns a Tensor or a tuple of Tensors.
        inputs: a Tensor or a tuple of Tensors.
        v: same shapes as ``inputs``; may be None when the input has a single element.
        create_graph: return results that are differentiable (else they are detached).
        strict: raise if an output does not depend on the inputs, instead of returning zeros.

    Returns:
        ``(func_output, jvp)``; ``jvp`` has the structure and shapes of the outputs.
    """
    with enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs = _prepare(
            "jvp", func, inputs, v, create_graph, strict, v_like="inputs")
        grad_outputs, grad_inputs = _double_back(outputs, inputs, strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(result, create_graph), is_outputs_tuple))


def _standard_basis(tensors):
    """The identity of size ``sum(numels)`` split into one column block per tensor, each in that
    tensor's dtype: row ``k`` is the k-th unit vector of the stacked, flattened tensors.
    Built in numpy so that no jax kernel is compiled for it."""
    numels = [t.numel() for t in tensors]
    eye = np.eye(sum(numels))
    blocks, start = [], 0
    for t, n in zip(tensors, numels):
        blocks.append(eye[:, start:start + n].astype(t._value().dtype))
        start += n
    return blocks


def _as_cotangent(row, shape):
    """A numpy row as a Tensor of the given shape."""
    return _tensor_cls()._wrap(jnp.asarray(np.ascontiguousarray(row).reshape(shape)))


def _batched_grad(outputs, inputs, batch, shapes, retain_graph=None):
    """``autograd.grad(outputs, inputs, g)`` for every ``g`` along the leading axis of the
    batched cotangents (``batch[k]`` reshaped to ``shapes[k]``), in one vmapped backward
    (NOTE [ vectorized backward ]). Returns one jax array per input (None where unused)."""
    Tensor = _tensor_cls()
    gouts = tuple(Tensor._wrap(jnp.asarray(b).reshape((-1,) + tuple(shape)))
                  for b, shape in zip(batch, shapes))
    grads = _autograd_grad(outputs, inputs, gouts, retain_graph=retain_graph,
                           is_grads_batched=True)
    return tuple(None if g is None else g._value() for g in grads)


def _rows(outputs, inputs, batch, shapes, create_graph, vectorize):
    """Stack ``autograd.grad(outputs, inputs, b)`` over the rows ``b`` of ``batch`` (each block
    reshaped to ``shapes``): one Tensor per input, leading axis = number of rows, zeros where
    an input is unused."""
    Tensor = _tensor_cls()
    n = batch[0].shape[0]
    if vectorize and not create_graph:
        res = _batched_grad(outputs, inputs, batch, shapes)
        return [Tensor._wrap(r if r is not None else
                             jnp.asarray(np.zeros((n,) + tuple(inp.shape), inp._value().dtype)))
                for r, inp in zip(res, inputs)]
    rows = [[] for _ in inputs]
    for k in range(n):
        gouts = tuple(_as_cotangent(b[k], shape) for b, shape in zip(batch, shapes))
        grads = _autograd_grad(outputs, inputs, gouts, create_graph=create_graph,
                               retain_graph=True)
        for acc, g, inp in zip(rows, grads, inputs):
            acc.append(_zeros_like(inp) if g is None else g)
    return [_stack(r) if r else _zeros((0,) + tuple(inp.shape), inp.dtype)
            for r, inp in zip(rows, inputs)]


def _split_rows(stacked, sizes, shapes):
    """Cut a per-input stack of rows into one block per output, reshaped to out+inp shape."""
    blocks, start = [], 0
    for n, shape in zip(sizes, shapes):
        blocks.append(stacked[start:start + n].reshape(shape))
        start += n
    return blocks


def _jacfwd(func, inputs, create_graph, strict, vectorize):
    """Forward-mode jacobian: one ``J e_k`` column per input element by the double-backward
    trick, in one vmapped backward when ``vectorize`` (the dtype is the output's)."""
    if strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                           '`strategy="forward-mode"` are not supported together (yet). Please '
                           'either set `strict=False` or `strategy="reverse-mode"`.')
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "jacobian")
        grad_outputs, grad_inputs = _double_back(outputs, inputs, strict=False)
        # Columns of J for all inputs at once: the tangent basis over the stacked inputs.
        cols = _rows(grad_inputs, grad_outputs, _standard_basis(inputs),
                     [tuple(inp.shape) for inp in inputs], create_graph, vectorize)
    numels = [inp.numel() for inp in inputs]
    jac = []
    for col, out in zip(cols, outputs):   # col: (sum numels, *out.shape)
        col = col.reshape((col.shape[0], out.numel())).t()
        jac.append([j if create_graph else j.detach()
                    for j in _split_cols(col, numels, out, inputs)])
    # NOTE: lists, not tuples: torch's forward-mode jacobian returns lists too.
    return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def _split_cols(col, numels, out, inputs):
    start = 0
    for n, inp in zip(numels, inputs):
        yield col[:, start:start + n].reshape(out.shape + inp.shape)
        start += n


@_x64.scoped
def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """Mirrors ``torch.autograd.functional.jacobian``.

    Args:
        func: takes Tensor inputs and returns a Tensor or a tuple of Tensors.
        inputs: a Tensor or a tuple of Tensors.
        create_graph: return a differentiable jacobian (else it is detached).
        strict: raise if an output does not depend on an input, instead of returning zeros.
        vectorize: push the whole basis through one vmapped backward pass
            (NOTE [ vectorized backward ]); the values are the same.
        strategy: ``"reverse-mode"`` (one row per output element) or ``"forward-mode"`` (one
            column per input element, by the double-backward trick; unlike torch it also works
            with ``vectorize=False`` and ``create_graph=True``).

    Returns:
        A Tensor of shape ``out.shape + inp.shape`` for a single input and output; a tuple over
        inputs (or outputs) when one of them is a tuple; ``J[i][j]`` (output i, input j) when
        both are.
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                             'Hint: If your function has more outputs than inputs, '
                             '"forward-mode" tends to be more performant. Otherwise, prefer to '
                             'use "reverse-mode".')
    if strategy == "forward-mode":
        return _jacfwd(func, inputs, create_graph, strict, vectorize)
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "jacobian")
        _check_requires_grad(outputs, "outputs", strict=strict)
        if vectorize:
            if strict:
                raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                                   "`vectorized=True` are not supported together. Please "
                                   "either set `strict=False` or `vectorize=False`.")
            jac = _jacrev_vectorized(outputs, inputs, create_graph)
        else:
            jac = tuple(_jacrev_output(i, out, inputs, create_graph, strict)
                        for i, out in enumerate(outputs))
        jac = _grad_postprocess(jac, create_graph)
    return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def _jacrev_output(i, out, inputs, create_graph, strict):
    """The jacobian blocks of output ``i``: one ``autograd.grad`` per element of ``out``, with
    a unit cotangent (the same as differentiating ``out.reshape(-1)[j]``, which torch does,
    but one compiled backward serves every ``j``)."""
    rows = [[] for _ in inputs]
    basis = _standard_basis((out,))[0]
    for j in range(out.nelement()):
        e_j = _as_cotangent(basis[j], tuple(out.shape))
        vj = _autograd_grad((out,), inputs, (e_j,), retain_graph=True, create_graph=create_graph)
        for el_idx, (acc, g, inp) in enumerate(zip(rows, vj, inputs)):
            if g is None:
                if strict:
                    raise RuntimeError(f"Output {i} of the user-provided function is "
                                       f"independent of input {el_idx}. This is not allowed in "
                                       "strict mode.")
                g = _zeros_like(inp)
            elif strict and create_graph and not g.requires_grad:
                raise RuntimeError("The jacobian of the user-provided function is independent "
                                   f"of input {i}. This is not allowed in strict mode when "
                                   "create_graph=True.")
            acc.append(g)
    return tuple(_stack(acc).view(out.size() + inp.size()) if acc
                 else _zeros(out.size() + inp.size(), inp.dtype)
                 for acc, inp in zip(rows, inputs))


def _jacrev_vectorized(outputs, inputs, create_graph):
    """All reverse-mode rows at once over the standard basis of the stacked outputs."""
    numels = [out.numel() for out in outputs]
    per_input = _rows(outputs, inputs, _standard_basis(outputs),
                      [tuple(out.shape) for out in outputs], create_graph, vectorize=True)
    by_input = [_split_rows(rows, numels, [out.shape + inp.shape for out in outputs])
                for rows, inp in zip(per_input, inputs)]
    return tuple(zip(*by_input))   # [input][output] -> [output][input]


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """Mirrors ``torch.autograd.functional.hessian``: the jacobian of the (reverse-mode)
    jacobian of a scalar function.

    Args:
        func: takes Tensor inputs and returns a Tensor with a single element.
        inputs: a Tensor or a tuple of Tensors.
        create_graph: return a differentiable hessian (else it is detached).
        strict: raise if the hessian does not depend on an input, instead of returning zeros.
        vectorize: compute the outer jacobian with one vmapped backward pass.
        outer_jacobian_strategy: ``"reverse-mode"`` or ``"forward-mode"`` for the outer
            jacobian (forward mode works with or without ``vectorize``).

    Returns:
        A Tensor of shape ``inp.shape + inp.shape`` for a single input, else a tuple of tuples
        with ``H[i][j]`` of shape ``inputs[i].shape + inputs[j].shape``.
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output_function(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)
        if is_out_tuple or not isinstance(out, _tensor_cls()):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _scalar_fn_gradient(name, func, inputs, v, create_graph, strict):
    """What vhp and hvp share: run ``func``, check it is scalar, take its differentiable
    gradient (the vector ``v`` is then multiplied with its derivative)."""
    is_inputs_tuple, inputs, v, is_outputs_tuple, outputs = _prepare(
        name, func, inputs, v, create_graph, strict, v_like="inputs")
    _check_scalar_output(name, outputs, is_outputs_tuple)
    jac = _autograd_grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict=strict)
    return is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """Mirrors ``torch.autograd.functional.vhp``: ``v^T H`` of a scalar function.

    Args:
        func: takes Tensor inputs and returns a Tensor with a single element.
        inputs: a Tensor or a tuple of Tensors.
        v: same shapes as ``inputs``; may be None when the input has a single element.
        create_graph: return results that are differentiable (else they are detached).
        strict: raise if the result does not depend on an input, instead of returning zeros.

    Returns:
        ``(func_output, vhp)``; ``vhp`` has the structure and shapes of ``inputs``.
    """
    with enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac = _scalar_fn_gradient(
            "vhp", func, inputs, v, create_graph, strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(result, create_graph), is_inputs_tuple))


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """Mirrors ``torch.autograd.functional.hvp``: ``H v`` of a scalar function, by the
    double-backward trick applied to its gradient (slower than ``vhp``; equal to it when the
    function is twice continuously differentiable).

    Args:
        func: takes Tensor inputs and returns a Tensor with a single element.
        inputs: a Tensor or a tuple of Tensors.
        v: same shapes as ``inputs``; may be None when the input has a single element.
        create_graph: return results that are differentiable (else they are detached).
        strict: raise if the result does not depend on an input, instead of returning zeros.

    Returns:
        ``(func_output, hvp)``; ``hvp`` has the structure and shapes of ``inputs``.
    """
    with enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac = _scalar_fn_gradient(
            "hvp", func, inputs, v, create_graph, strict)
        grad_jac = tuple(_zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back_trick")
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(result, create_graph), is_inputs_tuple))
