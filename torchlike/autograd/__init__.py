"""torchlike.autograd: backward / grad over the graph torchlike records (mirrors torch.autograd)."""
from .. import _x64
from .._tensor import Tensor, aval_of
from . import graph
from .anomaly_mode import detect_anomaly as detect_anomaly
from .anomaly_mode import set_detect_anomaly as set_detect_anomaly
from .engine import _seed, run_backward
from .function import Function as Function
from .function import once_differentiable as once_differentiable
from .grad_mode import enable_grad as enable_grad
from .grad_mode import inference_mode as inference_mode
from .grad_mode import is_grad_enabled as is_grad_enabled
from .grad_mode import no_grad as no_grad
from .grad_mode import set_grad_enabled as set_grad_enabled
from .variable import Variable as Variable

__all__ = ["backward", "grad", "Function", "once_differentiable", "no_grad", "enable_grad",
           "set_grad_enabled", "inference_mode", "is_grad_enabled", "detect_anomaly",
           "set_detect_anomaly", "functional", "gradcheck", "gradgradcheck", "graph", "Variable"]


def _tensors(x):
    if x is None:
        return []
    if isinstance(x, Tensor):
        return [x]
    return list(x)


@_x64.scoped
def _root_grads(outputs, grad_outputs, create_graph, is_grads_batched=False):
    """The gradient to start from at each output (PyTorch's _make_grads)."""
    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            if not out.requires_grad:   # _roots raises for it, as PyTorch's engine does
                grads.append(None)
                continue
            if out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not out.dtype.is_floating_point:
                raise RuntimeError(f"grad can be implicitly created only for real scalar "
                                   f"outputs but got {out.dtype}")
            arr = out._lazy or out._value()   # a pending loss runs with its backward
            shape = aval_of(arr).shape
            g = _seed(arr) if not shape else _seed(arr).reshape(shape)
            grads.append(Tensor._wrap(g) if create_graph else g)
            continue
        if not isinstance(g, Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got "
                            f"{type(g).__name__}")
        if g.shape != out.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} "
                               f"and output[{i}] has a shape of {out.shape}.")
        if g.dtype.is_complex != out.dtype.is_complex:
            raise RuntimeError(f"For complex Tensors, both grad_output and output are required "
                               f"to have the same dtype. Mismatch in dtype: grad_output[{i}] has "
                               f"a dtype of {g.dtype} and output[{i}] has a dtype of "
                               f"{out.dtype}.")
        if g.dtype is not out.dtype:   # PyTorch casts the gradient to the output's dtype
            g = g.to(out.dtype)
        grads.append(g if create_graph else g._value())
    return grads


def _check_count(outputs, root_grads):
    """PyTorch pairs outputs and gradients as zip does (extra gradients are ignored), then
    requires one per output."""
    if len(root_grads) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(root_grads)} gradients")


def _roots(outputs):
    edges = []
    for i, out in enumerate(outputs):
        if not out.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have "
                               "a grad_fn")
        edges.append(out._edge())
    return edges


def _batched_capture(outs, ins, gouts, retain_graph, create_graph):
    """autograd.grad for each row of the batched grad_outputs (their leading dim).  Without
    create_graph this is one backward under ``jax.vmap`` (the engine runs on tracers); a graph
    cannot be recorded through vmap, so with create_graph each row runs on its own."""
    import jax
    from .._ops.shape import stack
    if any(g is None for g in gouts):
        raise RuntimeError("If `is_grads_batched=True`, we interpret the first dimension of each "
                           "grad_output as the batch dimension. The sizes of the remaining "
                           "dimensions are expected to match the shape of corresponding output,"
                           " but a grad_output is None")
    n = gouts[0].shape[0]
    if create_graph:
        rows = [run_backward(_roots(outs), _root_grads(outs, [g[i] for g in gouts], True),
                             True, True, capture=[t._edge() for t in ins]) for i in range(n)]
        return [None if rows[0][k] is None else stack([r[k] for r in rows])
                for k in range(len(ins))]

    def one(*gs):
        caps = run_backward(_roots(outs), _root_grads(outs, [Tensor._wrap(g) for g in gs], False),
                            True, False, capture=[t._edge() for t in ins])
        return tuple(None if c is None else (c._value() if isinstance(c, Tensor) else c)
                     for c in caps)
    return list(jax.vmap(one)(*[g._value() for g in gouts]))


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Mirrors ``torch.autograd.backward``: accumulate d(tensors)/d(leaf) into each leaf's
    ``.grad`` (or only into ``inputs`` when given)."""
    outputs = _tensors(tensors)
    grads = _tensors(grad_tensors if grad_tensors is not None else grad_variables)
    if not grads:
        grads = [None] * len(outputs)
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None and not _tensors(inputs):
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    inputs = _tensors(inputs)
    if create_graph:
        import warnings
        warnings.warn("Using backward() with create_graph=True will create a reference cycle "
                      "between the parameter and its gradient which can cause a memory leak. We "
                      "recommend using autograd.grad when creating the graph to avoid this. If "
                      "you have to use this function, make sure to reset the .grad fields of your "
                      "parameters to None after use to break the cycle and avoid the leak.",
                      UserWarning, stacklevel=3)
    root_grads = _root_grads(outputs, grads, create_graph)
    _check_count(outputs, root_grads)
    roots = _roots(outputs)
    if not inputs:
        run_backward(roots, root_grads, retain_graph, create_graph)
        return
    leaves = [t for t in inputs if t.grad_fn is None]
    for t in inputs:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    non_leaves = [t for t in inputs if t.grad_fn is not None]
    exec_targets = [t._edge()[0] for t in leaves]
    capture = [t._edge() for t in non_leaves]
    captured = run_backward(roots, root_grads, retain_graph, create_graph, capture=capture,
                            exec_targets=exec_targets)
    for t, g in zip(non_leaves, captured):
        if g is None:
            continue
        g = g if isinstance(g, Tensor) else Tensor._wrap(g)
        t._grad = (g if create_graph else g.detach()) if t._grad is None else t._grad + g


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Mirrors ``torch.autograd.grad``: the gradients of ``outputs`` w.r.t. ``inputs``, returned
    as a tuple (nothing is accumulated into ``.grad``)."""
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outs = _tensors(outputs)
    ins = _tensors(inputs)
    gouts = _tensors(grad_outputs) or [None] * len(outs)
    if retain_graph is None:
        retain_graph = create_graph
    root_grads = None if is_grads_batched else _root_grads(outs, gouts, create_graph)
    _check_count(outs, gouts[:len(outs)] if is_grads_batched else root_grads)
    roots = _roots(outs)
    for t in ins:
        if not isinstance(t, Tensor):
            raise RuntimeError(f"all inputs have to be Tensors or GradientEdges, but got "
                               f"{type(t).__name__}")
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    if is_grads_batched:
        captured = _batched_capture(outs, ins, gouts, retain_graph, create_graph)
    else:
        captured = run_backward(roots, root_grads, retain_graph, create_graph,
                                capture=[t._edge() for t in ins])
    result = []
    for i, (t, g) in enumerate(zip(ins, captured)):
        if g is None:
            if materialize_grads:
                from .._creation import zeros_like
                g = zeros_like(t)
            elif not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have "
                                   "been used in the graph. Set allow_unused=True if this is "
                                   "the desired behavior.")
        elif not isinstance(g, Tensor):
            g = Tensor._wrap(g)
        result.append(g)
    return tuple(result)


from . import functional  # noqa: E402  (functional builds on grad above)
from .gradcheck import gradcheck as gradcheck  # noqa: E402
from .gradcheck import gradgradcheck as gradgradcheck  # noqa: E402
