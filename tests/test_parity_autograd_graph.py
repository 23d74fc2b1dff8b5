"""Parity tests: torchlike's autograd engine against real PyTorch (CPU): hooks, grad modes,
grad_fn objects and the graph's structure.

Each case is a function of the library module ``T`` run with torch and with torchlike
(engine cases in parity.py); cases are grouped in spec tables (docs/architecture.md §7.5).
"""
import numpy as np
import pytest
import torch

import torchlike as tl
from parity import M23, X3, both, both_again, cases, catch, gname, leaf, raising, vals

# ------------------------------------------------------------------------------------------------
# Hooks
# ------------------------------------------------------------------------------------------------


def hook_leaf_observe(T):
    x = leaf(T, X3)
    seen = []
    x.register_hook(lambda g: seen.append(g.clone()))
    (x * x).sum().backward()
    return [seen, x.grad]


def hook_leaf_replace(T):
    x = leaf(T, X3)
    x.register_hook(lambda g: g * 2)
    (x * x).sum().backward()
    return x.grad


def hook_leaf_order(T):
    x = leaf(T, X3)
    calls = []
    x.register_hook(lambda g: calls.append(("first", g.clone())) or g + 1)
    x.register_hook(lambda g: calls.append(("second", g.clone())) or g * 10)
    (x * 3).sum().backward()
    return [calls, x.grad]


def hook_leaf_accumulates_after_hook(T):
    x = leaf(T, X3)
    x.register_hook(lambda g: g * 0.5)
    (x * 2).sum().backward()
    (x * 4).sum().backward()
    return x.grad


def hook_nonleaf_replace(T):
    x = leaf(T, X3)
    y = x * 2
    y.register_hook(lambda g: g * 3)
    (y * y).sum().backward()
    return x.grad


def hook_nonleaf_called_once_with_sum(T):
    x = leaf(T, X3)
    y = x * 2
    seen = []
    y.register_hook(lambda g: seen.append(g.clone()))
    (y * y + y).sum().backward()
    return [seen, x.grad]


def retain_grad_then_hook(T):
    x = leaf(T, X3)
    y = x * 2
    y.retain_grad()
    y.register_hook(lambda g: g * 3)
    y.sum().backward()
    return [y.grad, x.grad, y.retains_grad]


def hook_then_retain_grad(T):
    x = leaf(T, X3)
    y = x * 2
    y.register_hook(lambda g: g * 3)
    y.retain_grad()
    y.sum().backward()
    return [y.grad, x.grad]


def retain_grad_accumulates(T):
    x = leaf(T, X3)
    y = x * 2
    y.retain_grad()
    z = (y * y).sum()
    z.backward(retain_graph=True)
    g1 = y.grad.clone()
    z.backward()
    return [g1, y.grad, x.grad]


def retain_grad_flags(T):
    x = leaf(T, X3)
    y = x * 2
    before = y.retains_grad
    y.retain_grad()
    x.retain_grad()
    return [before, y.retains_grad, x.retains_grad, y.grad]


def nonleaf_grad_is_none(T):
    x = leaf(T, X3)
    y = x * 2
    y.sum().backward()
    return [y.grad, x.grad]


def hook_handle_remove(T):
    x = leaf(T, X3)
    calls = []
    h = x.register_hook(lambda g: calls.append(1) or g * 100)
    h.remove()
    (x * 2).sum().backward()
    return [calls, x.grad]


def hook_remove_one_of_two(T):
    x = leaf(T, X3)
    y = x * 1
    calls = []
    h1 = y.register_hook(lambda g: calls.append("a") or g * 2)
    y.register_hook(lambda g: calls.append("b") or g * 3)
    h1.remove()
    y.sum().backward()
    return [calls, x.grad]


def hook_in_autograd_grad(T):
    x = leaf(T, X3)
    x.register_hook(lambda g: g * 10)
    return T.autograd.grad((x * 2).sum(), x)


def hook_nonleaf_in_autograd_grad(T):
    x = leaf(T, X3)
    y = x.sin()
    y.register_hook(lambda g: g * 10)
    return T.autograd.grad(y.sum(), [x, y])


@raising
def hook_on_no_grad_tensor(T):
    return catch(lambda: T.ones(3).register_hook(lambda g: g))


@raising
def hook_wrong_shape(T):
    x = leaf(T, X3)
    x.register_hook(lambda g: g.sum())
    return catch(lambda: (x * 2).sum().backward())


def node_hook(T):
    x, w = leaf(T, X3), leaf(T, [0.5, 0.25, 2.0])
    y = x * w
    seen = []

    def hook(grad_inputs, grad_outputs):
        seen.append((len(grad_inputs), len(grad_outputs), grad_outputs[0].clone()))
        return (grad_inputs[0] * 2, grad_inputs[1])

    y.grad_fn.register_hook(hook)
    y.sum().backward()
    return [seen, x.grad, w.grad]


def node_prehook(T):
    x = leaf(T, X3)
    y = x.exp()
    seen = []

    def prehook(grad_outputs):
        seen.append(grad_outputs[0].clone())
        return (grad_outputs[0] * 3,)

    y.grad_fn.register_prehook(prehook)
    y.sum().backward()
    return [seen, x.grad]


def node_hook_remove(T):
    x = leaf(T, X3)
    y = x.exp()
    calls = []
    h = y.grad_fn.register_prehook(lambda go: calls.append(1) or (go[0] * 3,))
    h2 = y.grad_fn.register_hook(lambda gi, go: calls.append(2) or (gi[0] * 3,))
    h.remove()
    h2.remove()
    y.sum().backward()
    return [calls, x.grad]


def hook_order_tensor_vs_node(T):
    x = leaf(T, X3)
    y = x * 2
    calls = []
    y.grad_fn.register_prehook(lambda go: calls.append("node_pre") or None)
    y.grad_fn.register_hook(lambda gi, go: calls.append("node_post") or None)
    y.register_hook(lambda g: calls.append("tensor") or None)
    x.register_hook(lambda g: calls.append("leaf") or None)
    y.sum().backward()
    return calls


def accumulate_grad_node_hooks(T):
    x = leaf(T, X3)
    y = x * 2
    acc = y.grad_fn.next_functions[0][0]
    calls = []
    acc.register_prehook(lambda go: calls.append(("pre", go[0].clone())) or None)
    acc.register_hook(lambda gi, go: calls.append(("post", len(gi))) or None)
    y.sum().backward()
    return [type(acc).__name__, calls, x.grad]


def post_accumulate_grad_hook(T):
    x = leaf(T, X3)
    seen = []
    x.register_post_accumulate_grad_hook(lambda p: seen.append((p is x, p.grad.clone())))
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    return seen


HOOKS = [
    (hook_leaf_observe, None),
    (hook_leaf_replace, None),
    (hook_leaf_order, None),
    (hook_leaf_accumulates_after_hook, None),
    (hook_nonleaf_replace, None),
    (hook_nonleaf_called_once_with_sum, None),
    (retain_grad_then_hook, None),
    (hook_then_retain_grad, None),
    (retain_grad_accumulates, None),
    (retain_grad_flags, None),
    (nonleaf_grad_is_none, None),
    (hook_handle_remove, None),
    (hook_remove_one_of_two, None),
    (hook_in_autograd_grad, None),
    (hook_nonleaf_in_autograd_grad, None),
    (hook_on_no_grad_tensor, "cannot register a hook on a tensor that doesn't require gradient"),
    (hook_wrong_shape, None),
    (node_hook, None),
    (node_prehook, None),
    (node_hook_remove, None),
    (hook_order_tensor_vs_node, None),
    (accumulate_grad_node_hooks, None),
    (post_accumulate_grad_hook, None),
]


@pytest.mark.parametrize("fn,match", cases(HOOKS))
def test_hooks(fn, match):
    both(fn, match=match, raises=getattr(fn, "raises", False))


# ------------------------------------------------------------------------------------------------
# Grad modes
# ------------------------------------------------------------------------------------------------


def no_grad_context(T):
    x = leaf(T, X3)
    with T.no_grad():
        y = x * 2
        inside = T.is_grad_enabled()
    return [y, y.requires_grad, y.grad_fn is None, y.is_leaf, inside, T.is_grad_enabled()]


def no_grad_decorator(T):
    x = leaf(T, X3)

    @T.no_grad()
    def f(a):
        return a * 2, T.is_grad_enabled()
    y, inside = f(x)
    return [y, inside, f.__name__, T.is_grad_enabled()]


def no_grad_bare_decorator(T):
    x = leaf(T, X3)

    @T.no_grad
    def f(a):
        return a * 2
    return f(x)


def enable_grad_inside_no_grad(T):
    x = leaf(T, X3)
    with T.no_grad():
        with T.enable_grad():
            y = x * 2
            inner = T.is_grad_enabled()
        z = x * 2
    return [y, z, inner]


def enable_grad_decorator(T):
    x = leaf(T, X3)

    @T.enable_grad()
    def f(a):
        return a * 2
    with T.no_grad():
        y = f(x)
    return y


def set_grad_enabled_function(T):
    x = leaf(T, X3)
    T.set_grad_enabled(False)
    try:
        y = x * 2
        state = T.is_grad_enabled()
    finally:
        T.set_grad_enabled(True)
    return [y, state, T.is_grad_enabled()]


def set_grad_enabled_context(T):
    x = leaf(T, X3)
    with T.set_grad_enabled(False):
        y = x * 2
        with T.set_grad_enabled(True):
            z = x * 2
    return [y, z, T.is_grad_enabled()]


def set_grad_enabled_decorator(T):
    x = leaf(T, X3)

    @T.set_grad_enabled(False)
    def f(a):
        return a * 2
    return [f(x), T.is_grad_enabled()]


def autograd_namespace_modes(T):
    x = leaf(T, X3)
    with T.autograd.no_grad():
        y = x * 2
    with T.autograd.set_grad_enabled(False):
        z = x * 2
    with T.autograd.no_grad(), T.autograd.enable_grad():
        w = x * 2
    return [y, z, w]


def no_grad_restores_on_exception(T):
    try:
        with T.no_grad():
            raise KeyError("boom")
    except KeyError:
        pass
    return T.is_grad_enabled()


def inference_mode(T):
    x = leaf(T, X3)
    with T.inference_mode():
        y = x * 2
        state = (T.is_grad_enabled(), T.is_inference_mode_enabled())
    return [y, state, T.is_inference_mode_enabled()]


def inference_mode_false(T):
    x = leaf(T, X3)
    with T.inference_mode(False):
        y = x * 2
    return [y, T.is_inference_mode_enabled()]


def inference_mode_decorator(T):
    @T.inference_mode()
    def f(a):
        return a * 2
    return f(leaf(T, X3))


@raising
def no_grad_then_backward_error(T):
    x = leaf(T, X3)
    with T.no_grad():
        y = (x * 2).sum()
    return catch(y.backward)


def no_grad_leaf_ops_mix(T):
    x = leaf(T, X3)
    with T.no_grad():
        c = x * 2
    y = (x * c).sum()
    y.backward()
    return [x.grad, c.requires_grad]


GRAD_MODES = [
    (no_grad_context, None),
    (no_grad_decorator, None),
    (no_grad_bare_decorator, None),
    (enable_grad_inside_no_grad, None),
    (enable_grad_decorator, None),
    (set_grad_enabled_function, None),
    (set_grad_enabled_context, None),
    (set_grad_enabled_decorator, None),
    (autograd_namespace_modes, None),
    (no_grad_restores_on_exception, None),
    (inference_mode, None),
    (inference_mode_false, None),
    (inference_mode_decorator, None),
    (no_grad_then_backward_error, "does not require grad"),
    (no_grad_leaf_ops_mix, None),
]


@pytest.mark.parametrize("fn,match", cases(GRAD_MODES))
def test_grad_modes(fn, match):
    try:
        both(fn, match=match, raises=getattr(fn, "raises", False))
    finally:
        torch.set_grad_enabled(True)
        tl.set_grad_enabled(True)


# ------------------------------------------------------------------------------------------------
# grad_fn objects and graph structure
# ------------------------------------------------------------------------------------------------


def walk(node, depth=0, out=None):
    """(depth, class name, input index) for every edge below ``node``, depth first."""
    out = [] if out is None else out
    for n, i in node.next_functions:
        out.append((depth, type(n).__name__, i))
        if n is not None:
            walk(n, depth + 1, out)
    return out


def graph_walk(T):
    x, w, b = leaf(T, M23), leaf(T, [[0.5], [1.0], [-1.0]]), leaf(T, [0.1])
    y = ((x @ w + b).tanh() * 2).sum()
    return [gname(y), walk(y.grad_fn)]


def graph_walk_views(T):
    x = leaf(T, M23)
    y = x.t()[1].unsqueeze(0).expand(3, 2).reshape(-1).mean()
    return [gname(y), walk(y.grad_fn)]


def graph_no_grad_input(T):
    x = leaf(T, X3)
    y = x * T.ones(3) + T.ones(3)
    return [gname(y), walk(y.grad_fn)]


def accumulate_grad_variable(T):
    x = leaf(T, X3)
    acc = (x * 2).grad_fn.next_functions[0][0]
    return [type(acc).__name__, acc.variable is x, acc.next_functions]


def accumulate_grad_shared(T):
    x = leaf(T, X3)
    a, b = x * 2, x * 3
    return a.grad_fn.next_functions[0][0] is b.grad_fn.next_functions[0][0]


def grad_fn_identity_and_name(T):
    x = leaf(T, X3)
    y = x.exp()
    return [y.grad_fn is y.grad_fn, y.grad_fn.name(), x.grad_fn, x.detach().grad_fn]


def grad_fn_multi_output_index(T):
    x = leaf(T, M23)
    y = x * 2
    z = T.cat([y, x.exp(), y])
    return walk(z.grad_fn)


def next_functions_int_index(T):
    x = leaf(T, X3)
    a = T.stack([x, x * 2])
    return [walk(a.grad_fn)]


W23 = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]]


def linear_folded_graph(T):
    """F.linear's weight.t() runs inside its addmm / mm (NOTE [ folded views ] in
    torchlike/_dispatch.py): the graph, the gradients and a second derivative are PyTorch's."""
    F = T.nn.functional
    w, b = leaf(T, W23), leaf(T, [0.1, -0.2])
    x2, x3 = leaf(T, M23), leaf(T, [M23, [[0.0, 1.0, -1.0], [2.0, 0.5, 1.0]]])
    outs = [F.linear(x2, w, b), F.linear(x3, w, b), F.linear(x2, w), F.linear(x3, w),
            F.linear(T.tensor(M23), w, b)]
    walks = [[gname(o), walk(o.grad_fn)] for o in outs]
    loss = sum((o * o).sum() for o in outs)
    gw, gx = T.autograd.grad(loss, [w, x3], create_graph=True)
    second = T.autograd.grad((gw * gw).sum() + gx.sum(), [w, b])
    return [walks, gw, gx, second]


def linear_folded_weight_written(T):
    """The version check of a weight written in place after the forward names the saved view
    as PyTorch does: AsStridedBackward0 where the weight requires grad, nothing where not."""
    messages = []
    for weight_grad in (True, False):
        lin = T.nn.Linear(3, 2)
        lin.weight.requires_grad_(weight_grad)
        for x in (leaf(T, M23), leaf(T, [M23, M23])):
            out = lin(x)
            with T.no_grad():
                lin.weight.add_(1)
            try:
                out.sum().backward()
            except RuntimeError as e:
                messages.append(str(e))
    return messages


def linear_folded_input_written(T):
    """The same for an N-d input written in place after the forward: its flattening view(-1,
    in), folded into the addmm, is what PyTorch saved for the weight's gradient."""
    messages = []
    for input_grad in (True, False):
        lin = T.nn.Linear(3, 2)
        x = T.tensor([M23, M23], requires_grad=input_grad)
        out = lin(x)
        with T.no_grad():
            x.mul_(2)
        try:
            out.sum().backward()
        except RuntimeError as e:
            messages.append(str(e))
    return messages


def linear_output_view(T):
    """An N-d input's output view(*rows, out) runs inside the addmm too (NOTE [ folded views ]):
    the output is a view of the addmm's result (made when read), writes go through either, and
    a second backward over the kept graph gives the gradients again."""
    F = T.nn.functional
    w, b = leaf(T, W23), leaf(T, [0.1, -0.2])
    x = leaf(T, [M23, [[0.0, 1.0, -1.0], [2.0, 0.5, 1.0]]])
    out = F.linear(x, w, b)
    facts = [gname(out), gname(out._base), out._base.shape, vals(out._base)]
    written = F.linear(x, w, b)
    written.mul_(3)   # through the view: the base's node becomes CopySlices
    facts += [gname(written), gname(written._base), vals(written._base)]
    read = F.linear(x, w, b)
    with T.no_grad():
        read._base.add_(1)   # through the base: the view reads it
    facts += [vals(read), read._version]
    loss = (out * out).sum() + written.sum()
    loss.backward(retain_graph=True)
    facts += [vals(w.grad), vals(x.grad)]
    loss.backward()
    return facts + [vals(w.grad), vals(x.grad), vals(b.grad)]


def linear_folded_hooks(T):
    """The walk runs a linear layer's addmm through its folded views (NOTE [ backward through
    folded views ] in torchlike/autograd/engine.py), or node by node where a hook, retain_grad
    or a capture asks for what passes them: a hook on a 3-D output, a node hook on the
    weight's TBackward0, a retained output, autograd.grad of the input, one weight in two
    layers, a kept graph's second backward; the gradients and what each hook saw are
    PyTorch's."""
    F = T.nn.functional
    seen = []
    w, b = leaf(T, W23), leaf(T, [0.1, -0.2])
    x = leaf(T, [M23, [[0.0, 1.0, -1.0], [2.0, 0.5, 1.0]]])
    hooked = F.linear(x, w, b)
    hooked.register_hook(lambda g: seen.append(vals(g)))
    node_hooked = F.linear(x, w)
    t_node = node_hooked.grad_fn.next_functions[0][0].next_functions[1][0]
    t_node.register_hook(lambda gi, go: seen.append([gname(node_hooked), vals(gi[0]),
                                                     vals(go[0])]))
    retained = F.linear(x[0], w, b)
    retained.retain_grad()
    plain = F.linear(x, w, b) + F.linear(x * 2, w)
    loss = (hooked * hooked).sum() + node_hooked.sum() + (retained * 3).sum() + \
        (plain * plain).sum()
    gx, = T.autograd.grad(loss, [x], retain_graph=True)
    loss.backward(retain_graph=True)
    first = [vals(w.grad), vals(b.grad), vals(x.grad), vals(retained.grad)]
    loss.backward()
    return [seen, vals(gx), first, vals(w.grad), vals(b.grad), vals(x.grad)]


def linear_chains_hooks(T):
    """The walk runs the backward of views, a reshape, a clone and an expand inside the node
    above them (NOTE [ backward through linear ops ] in torchlike/autograd/engine.py), or
    node by node where a hook, retain_grad, a capture or a second reader asks for what passes
    them: heads split by view and transpose, a clone, an expand, a permute; a hooked view, a
    retained one, a view read twice, autograd.grad of a transposed view and of a reshape, a kept
    graph's second backward; the gradients and what each hook saw are PyTorch's."""
    seen = []
    x = leaf(T, [[M23, [[0.0, 1.0, -1.0], [2.0, 0.5, 1.0]]]] * 2)   # (2, 2, 2, 3)
    w = leaf(T, W23)
    q = x.view(2, 2, 6).transpose(1, 2)                    # (2, 6, 2)
    att = (q @ q.transpose(1, 2)) * 0.25                   # (2, 6, 6)
    hooked = x.permute(0, 2, 1, 3)
    hooked.register_hook(lambda g: seen.append(vals(g)))
    retained = x.clone().view(4, 2, 3)
    retained.retain_grad()
    twice = x.expand(3, 2, 2, 2, 3)
    captured = x.reshape(4, 6)
    ctx = (att @ q).reshape(2, 12) * 0.5
    loss = (ctx * ctx).sum() + (hooked * hooked).sum() + (retained @ w.t()).pow(2).sum() + \
        (twice * twice).sum() + twice.sum() + (captured * 3).sum()
    gq, gc = T.autograd.grad(loss, [q, captured], retain_graph=True)
    loss.backward(retain_graph=True)
    first = [vals(x.grad), vals(w.grad), vals(retained.grad)]
    loss.backward()
    return [seen, vals(gq), vals(gc), first, vals(x.grad), vals(w.grad)]


GRAPH = [
    (linear_folded_graph, None),
    (linear_chains_hooks, None),
    (linear_folded_hooks, None),
    (linear_output_view, None),
    (linear_folded_weight_written, None),
    (linear_folded_input_written, None),
    (graph_walk, None),
    (graph_walk_views, None),
    (graph_no_grad_input, None),
    (accumulate_grad_variable, None),
    (accumulate_grad_shared, None),
    (grad_fn_identity_and_name, None),
    (grad_fn_multi_output_index, None),
    (next_functions_int_index, None),
]


@pytest.mark.parametrize("fn,match", cases(GRAPH))
def test_graph(fn, match):
    both(fn, match=match, raises=getattr(fn, "raises", False))


# --- the same cases again, now that their graph shapes have been seen --------------------------


@pytest.mark.parametrize("fn,match", cases(HOOKS + GRAD_MODES + GRAPH))
def test_cases_again_once_graph_shapes_repeat(fn, match):
    both_again(fn, match)


def test_linear_output_view_runs_inside_the_addmm():
    """Recorded, an N-d F.linear runs one op, as under no_grad (NOTE [ folded views ] in
    torchlike/_dispatch.py): its input's and output's views run inside the addmm, and the
    base's array is made only when something reads it."""
    lin = tl.nn.Linear(3, 2)
    x = tl.randn(4, 5, 3, requires_grad=True)
    with tl.autograd.profiler.profile() as prof:
        out = lin(x)
    assert [e.name for e in prof.function_events] == ["aten::addmm"]
    base = out._base
    assert "_arr" not in vars(base)
    assert base.shape == (20, 2) and "_arr" in vars(base)
    assert tl.equal(base, out.detach().reshape(20, 2))


def _walked(monkeypatch):
    """The op nodes the walk runs from now on, as (name, through its folded views, the names
    of the linear ops it runs below its operands or None), with the fused backward off."""
    from torchlike.autograd import fused, graph
    monkeypatch.setattr(fused, "enabled", False)
    ran = []
    apply = graph.OpNode.apply

    def spy(node, grads, create_graph, through=False, chains=None):
        ran.append((node.name(), through, chains and
                    tuple(step[0].name for steps in chains for step in steps or ())))
        return apply(node, grads, create_graph, through, chains)
    monkeypatch.setattr(graph.OpNode, "apply", spy)
    return ran


def test_backward_runs_through_folded_views(monkeypatch):
    """A linear layer's backward, walked node by node, runs its addmm through its folded views:
    neither TBackward0 nor the two ViewBackward0 around an N-d input's addmm run a program
    (NOTE [ backward through folded views ] in torchlike/autograd/engine.py); with a hook on
    the output, its view's node runs, and the addmm's node takes the weight's transpose and the
    input's view on in its own program (NOTE [ backward through linear ops ]); the gradients are
    the same either way."""
    ran = _walked(monkeypatch)
    grads = []
    for hook in (False, True):
        lin = tl.nn.Linear(3, 2)
        with tl.no_grad():
            lin.weight.copy_(tl.tensor(W23))
            lin.bias.copy_(tl.tensor([0.1, -0.2]))
        x = tl.tensor([M23, M23], requires_grad=True)
        out = lin(x)
        if hook:
            out.register_hook(lambda g: g)
        ran.clear()
        (out * out).sum().backward()
        grads.append([x.grad, lin.weight.grad, lin.bias.grad])
        names = [name for name, _, _ in ran]
        if hook:
            assert names.count("ViewBackward0") == 1 and "TBackward0" not in names
            assert ("AddmmBackward0", False, ("view", "t")) in ran
        else:
            assert ("AddmmBackward0", True, None) in ran
            assert "ViewBackward0" not in names and "TBackward0" not in names
    for a, b in zip(*grads):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)


def test_backward_runs_through_linear_ops(monkeypatch):
    """Walked node by node, the backward of an attention's head split (view, transpose), a
    clone and an expand runs inside the node above each: none of their nodes runs a program of
    its own (NOTE [ backward through linear ops ] in torchlike/autograd/engine.py), unless a
    hook, retain_grad or a second reader needs it; the gradients are those of the walk that
    runs every node."""
    from torchlike.autograd import engine
    ran = _walked(monkeypatch)

    def step(hook):
        x = tl.tensor(np.arange(48, dtype=np.float32).reshape(2, 4, 6) / 48, requires_grad=True)
        c = tl.tensor(np.linspace(-1, 1, 96, dtype=np.float32).reshape(2, 2, 4, 6))
        h = x.view(2, 4, 2, 3).transpose(1, 2)   # (2, 2, 4, 3): heads
        if hook:
            h.register_hook(lambda g: g)
        k = x.clone().expand(2, 2, 4, 6)
        loss = (h.softmax(-1) * c[..., :3]).sum() + (k * c).sum()
        ran.clear()
        loss.backward()
        return x.grad, [name for name, _, _ in ran], {(name, chain) for name, _, chain in ran}
    grad, names, ran_ = step(False)
    assert not {"TransposeBackward0", "ViewBackward0", "CloneBackward0", "ExpandBackward0",
                "SumBackward0"} & set(names)
    assert {("SoftmaxBackward0", ("transpose", "view")), ("MulBackward0", ("expand", "clone")),
            ("AddBackward0", ("sum", "sum"))} <= ran_
    hooked_grad, hooked_names, _ = step(True)   # (the heads' node runs: its hook sees its grad)
    assert {"TransposeBackward0", "ViewBackward0"} <= set(hooked_names)
    monkeypatch.setattr(engine, "linear_chains", lambda *args: None)
    plain_grad, plain_names, _ = step(False)
    assert {"TransposeBackward0", "ViewBackward0", "CloneBackward0", "ExpandBackward0"} <= \
        set(plain_names)
    for g in (hooked_grad, plain_grad):
        np.testing.assert_allclose(grad.numpy(), g.numpy(), rtol=1e-6)
