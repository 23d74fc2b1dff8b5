"""Parity tests: torchlike's autograd engine against real PyTorch (CPU): accumulation and graph
freeing, backward(), autograd.grad, create_graph.

Each case is a function of the library module ``T`` run with torch and with torchlike
(engine cases in parity.py); cases are grouped in spec tables (docs/architecture.md §7.5).
"""
import numpy as np
import pytest
import torch

from parity import M23, X3, both, both_again, cases, catch, leaf, raising, vals

# ------------------------------------------------------------------------------------------------
# Accumulation and graph freeing
# ------------------------------------------------------------------------------------------------


def accumulate_two_backward(T):
    x = leaf(T, X3)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    g1 = x.grad.clone()
    y.backward()
    return [g1, x.grad]


def accumulate_two_graphs(T):
    x = leaf(T, X3)
    (x * 2).sum().backward()
    (x.exp()).sum().backward()
    return x.grad


def accumulate_in_place_same_object(T):
    x = leaf(T, X3)
    (x * 2).sum().backward()
    g = x.grad
    (x * 3).sum().backward()
    return [g is x.grad, g]


def grad_reset_to_none(T):
    x = leaf(T, X3)
    (x * 2).sum().backward()
    x.grad = None
    (x * 3).sum().backward()
    return x.grad


def grad_zero_then_backward(T):
    x = leaf(T, X3)
    (x * 2).sum().backward()
    x.grad.zero_()
    (x * 3).sum().backward()
    return x.grad


def second_backward_error(T):
    x = leaf(T, X3)
    y = x.exp().sum()
    y.backward()
    return [x.grad, catch(y.backward)]


def second_backward_retained_then_freed(T):
    x = leaf(T, X3)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    return [x.grad, catch(y.backward)]


def second_backward_linear_ok(T):
    x = leaf(T, X3)
    y = (-x + 1).sum()   # nothing saved (x * 2 would save the 2, and the second backward raise)
    y.backward()
    y.backward()
    return x.grad


def second_backward_add_views_ok(T):
    x = leaf(T, M23)
    y = (x + x).t().reshape(-1).sum()
    y.backward()
    y.backward()
    return x.grad


def shared_subgraph_freed(T):
    x = leaf(T, X3)
    z = x.exp()
    z.sum().backward()
    return [x.grad, catch(lambda: (z * 2).sum().backward())]


def grad_twice_error(T):
    x = leaf(T, X3)
    y = (x.sin()).sum()
    g = T.autograd.grad(y, x)
    return [g, catch(lambda: T.autograd.grad(y, x))]


def diamond(T):
    x = leaf(T, X3)
    a = x * 2
    b = a.exp() + a.sin() * a
    b.sum().backward()
    return x.grad


def deep_chain(T):
    x = leaf(T, [1.0])
    y = x
    for _ in range(2000):
        y = y * 1.0001
    y.sum().backward()
    return x.grad


ACCUMULATE = [
    # fn, match (applies to every error the case returns)
    (accumulate_two_backward, None),
    (accumulate_two_graphs, None),
    (accumulate_in_place_same_object, None),
    (grad_reset_to_none, None),
    (grad_zero_then_backward, None),
    (second_backward_error, "^Trying to backward through the graph a second time"),
    (second_backward_retained_then_freed, "^Trying to backward through the graph a second time"),
    (second_backward_linear_ok, None),
    (second_backward_add_views_ok, None),
    (shared_subgraph_freed, "^Trying to backward through the graph a second time"),
    (grad_twice_error, "^Trying to backward through the graph a second time"),
    (diamond, None),
    (deep_chain, None),
]


@pytest.mark.parametrize("fn,match", cases(ACCUMULATE))
def test_accumulate_and_free(fn, match):
    both(fn, match=match, raises=getattr(fn, "raises", False))


# ------------------------------------------------------------------------------------------------
# backward(): gradient, inputs=, roots; and its errors
# ------------------------------------------------------------------------------------------------


def backward_inputs_leaf(T):
    x, w = leaf(T, X3), leaf(T, [0.5, 0.25, 2.0])
    (x * w).sum().backward(inputs=[x])
    return [x.grad, w.grad]


def backward_inputs_single_tensor(T):
    x, w = leaf(T, X3), leaf(T, [0.5, 0.25, 2.0])
    (x * w).sum().backward(inputs=w)
    return [x.grad, w.grad]


def backward_inputs_nonleaf(T):
    x = leaf(T, X3)
    y = x * 2
    (y * y).sum().backward(inputs=[y])
    return [y.grad, x.grad]


def backward_inputs_unused(T):
    x, u = leaf(T, X3), leaf(T, [1.0])
    (x * 2).sum().backward(inputs=[x, u])
    return [x.grad, u.grad]


@raising
def backward_inputs_empty(T):
    x = leaf(T, X3)
    return catch(lambda: (x * 2).sum().backward(inputs=[]))


def backward_gradient(T):
    x = leaf(T, M23)
    y = x.exp()
    y.backward(T.tensor([[1.0, 0.0, -1.0], [0.5, 2.0, 0.0]]))
    return x.grad


def backward_gradient_kw(T):
    x = leaf(T, X3)
    (x * x).backward(gradient=T.ones(3))
    return x.grad


def backward_gradient_other_dtype(T):
    x = leaf(T, X3)
    (x * 2).backward(T.ones(3, dtype=T.float64))
    return x.grad


def backward_leaf_itself(T):
    x = leaf(T, X3)
    x.backward(T.tensor([1.0, 2.0, 3.0]))
    return x.grad


def backward_scalar_leaf(T):
    x = leaf(T, 2.0)
    x.backward()
    return x.grad


@raising
def backward_non_scalar_error(T):
    x = leaf(T, X3)
    return catch(lambda: (x * 2).backward())


@raising
def backward_gradient_shape_error(T):
    x = leaf(T, X3)
    return catch(lambda: (x * 2).backward(T.ones(2)))


@raising
def backward_no_grad_error(T):
    return catch(lambda: T.ones(3).sum().backward())


@raising
def backward_int_output_error(T):
    x = leaf(T, X3)
    return catch(lambda: (x > 0).sum().backward())


def autograd_backward_multi_root(T):
    x = leaf(T, X3)
    a, b = x * 2, x.exp()
    T.autograd.backward([a, b], [T.ones(3), T.tensor([1.0, 0.0, 2.0])])
    return x.grad


def autograd_backward_scalar_roots(T):
    x = leaf(T, X3)
    T.autograd.backward([(x * 2).sum(), (x * x).sum()])
    return x.grad


def backward_float64(T):
    x = leaf(T, X3, T.float64)
    (x.sin() * x).sum().backward()
    return x.grad


def backward_mixed_dtype_leaves(T):
    x, w = leaf(T, X3), leaf(T, [0.5, 0.25, 2.0], T.float64)
    (x * w).sum().backward()
    return [x.grad, w.grad]


def backward_broadcast_grad_shapes(T):
    x, b = leaf(T, M23), leaf(T, [1.0, 2.0, 3.0])
    s = leaf(T, 2.0)
    ((x + b) * s).sum().backward()
    return [x.grad, b.grad, s.grad]


BACKWARD = [
    (backward_inputs_leaf, None),
    (backward_inputs_single_tensor, None),
    (backward_inputs_nonleaf, None),
    (backward_inputs_unused, None),
    (backward_inputs_empty, None),
    (backward_gradient, None),
    (backward_gradient_kw, None),
    (backward_gradient_other_dtype, None),
    (backward_leaf_itself, None),
    (backward_scalar_leaf, None),
    (backward_non_scalar_error, "grad can be implicitly created only for scalar outputs"),
    (backward_gradient_shape_error, "Mismatch in shape"),
    (backward_no_grad_error, "element 0 of tensors does not require grad and does not have a "
     "grad_fn"),
    (backward_int_output_error, "does not require grad"),
    (autograd_backward_multi_root, None),
    (autograd_backward_scalar_roots, None),
    (backward_float64, None),
    (backward_mixed_dtype_leaves, None),
    (backward_broadcast_grad_shapes, None),
]


@pytest.mark.parametrize("fn,match", cases(BACKWARD))
def test_backward(fn, match):
    both(fn, match=match, raises=getattr(fn, "raises", False))


# ------------------------------------------------------------------------------------------------
# autograd.grad
# ------------------------------------------------------------------------------------------------


def grad_basic(T):
    x = leaf(T, X3)
    g = T.autograd.grad((x * x).sum(), x)
    return [type(g).__name__, g, x.grad, g[0].requires_grad]


def grad_two_inputs(T):
    x, w = leaf(T, X3), leaf(T, [0.5, 0.25, 2.0])
    return T.autograd.grad((x * w.exp()).sum(), [x, w])


def grad_tuple_inputs(T):
    x, w = leaf(T, X3), leaf(T, [0.5, 0.25, 2.0])
    return T.autograd.grad([(x * w).sum()], (w, x))


def grad_nonleaf_input(T):
    x = leaf(T, X3)
    y = x * 2
    return T.autograd.grad((y.sin()).sum(), y)


def grad_self(T):
    x = leaf(T, X3)
    y = (x * 2).sum()
    return T.autograd.grad(y, y)


@raising
def grad_unused_error(T):
    x, u = leaf(T, X3), leaf(T, [1.0])
    return catch(lambda: T.autograd.grad((x * 2).sum(), [x, u]))


def grad_allow_unused(T):
    x, u = leaf(T, X3), leaf(T, [1.0])
    return T.autograd.grad((x * 2).sum(), [x, u], allow_unused=True)


def grad_materialize(T):
    x, u = leaf(T, X3), leaf(T, [1.0, 2.0])
    return T.autograd.grad((x * 2).sum(), [x, u], materialize_grads=True)


@raising
def grad_materialize_allow_unused_false(T):
    x, u = leaf(T, X3), leaf(T, [1.0])
    return catch(lambda: T.autograd.grad((x * 2).sum(), [x, u], allow_unused=False,
                                         materialize_grads=True))


@raising
def grad_input_no_grad_error(T):
    x = leaf(T, X3)
    return catch(lambda: T.autograd.grad((x * 2).sum(), [x, T.ones(3)]))


@raising
def grad_output_no_grad_error(T):
    x = leaf(T, X3)
    return catch(lambda: T.autograd.grad(T.ones(3).sum(), x))


@raising
def grad_non_scalar_error(T):
    x = leaf(T, X3)
    return catch(lambda: T.autograd.grad(x * 2, x))


def grad_outputs(T):
    x = leaf(T, X3)
    return T.autograd.grad(x * x, x, grad_outputs=T.tensor([1.0, -1.0, 2.0]))


@raising
def grad_outputs_shape_error(T):
    x = leaf(T, X3)
    return catch(lambda: T.autograd.grad(x * x, x, grad_outputs=T.ones(4)))


def grad_multi_outputs(T):
    x = leaf(T, X3)
    return T.autograd.grad([x * 2, x.exp()], x, grad_outputs=[T.ones(3), T.ones(3)])


def grad_retain_graph(T):
    x = leaf(T, X3)
    y = x.exp().sum()
    g1 = T.autograd.grad(y, x, retain_graph=True)
    g2 = T.autograd.grad(y, x)
    return [g1, g2]


def grad_does_not_touch_grad(T):
    x = leaf(T, X3)
    (x * 3).sum().backward()
    T.autograd.grad((x * 5).sum(), x)
    return x.grad


GRAD = [
    (grad_basic, None),
    (grad_two_inputs, None),
    (grad_tuple_inputs, None),
    (grad_nonleaf_input, None),
    (grad_self, None),
    (grad_unused_error, "appears to not have been used in the graph. Set allow_unused=True if "
     "this is the desired behavior"),
    (grad_allow_unused, None),
    (grad_materialize, None),
    (grad_materialize_allow_unused_false, "materialize_grads=True"),
    (grad_input_no_grad_error, "One of the differentiated Tensors does not require grad"),
    (grad_output_no_grad_error, "does not require grad"),
    (grad_non_scalar_error, "grad can be implicitly created only for scalar outputs"),
    (grad_outputs, None),
    (grad_outputs_shape_error, "Mismatch in shape"),
    (grad_multi_outputs, None),
    (grad_retain_graph, None),
    (grad_does_not_touch_grad, None),
]


@pytest.mark.parametrize("fn,match", cases(GRAD))
def test_autograd_grad(fn, match):
    both(fn, match=match, raises=getattr(fn, "raises", False))


# ------------------------------------------------------------------------------------------------
# create_graph: higher-order derivatives
# ------------------------------------------------------------------------------------------------


def cube_orders(T):
    x = leaf(T, X3)
    (g1,) = T.autograd.grad((x ** 3).sum(), x, create_graph=True)
    (g2,) = T.autograd.grad(g1.sum(), x, create_graph=True)
    (g3,) = T.autograd.grad(g2.sum(), x)
    return [vals(g1), vals(g2), vals(g3)]


def cube_first_grad_node(T):
    x = leaf(T, X3)
    (g1,) = T.autograd.grad((x ** 3).sum(), x, create_graph=True)
    # Node names of a graph built by create_graph differ by design: PyTorch's come from its
    # hand-written backward formulas (MulBackward0 here), torchlike's from the forward node
    # (PowBackward0Backward).  README: "Differences from PyTorch".
    return [g1.requires_grad, g1.is_leaf]


def sin_fourth_order(T):
    x = leaf(T, X3, T.float64)
    out = [x.sin()]
    for _ in range(4):
        (g,) = T.autograd.grad(out[-1].sum(), x, create_graph=True)
        out.append(g)
    return [vals(g) for g in out]


def backward_create_graph(T):
    x = leaf(T, X3)
    (x ** 3).sum().backward(create_graph=True)
    g = x.grad
    (gg,) = T.autograd.grad(g.sum(), x)
    return [vals(g), gg]


def backward_create_graph_twice(T):
    x = leaf(T, X3)
    y = (x ** 3).sum()
    y.backward(create_graph=True)
    y.backward(create_graph=True)
    return vals(x.grad)


def hvp(T):
    x = leaf(T, [0.5, -1.0, 2.0], T.float64)
    w = T.tensor([[1.0, 2.0, 0.0], [0.0, -1.0, 3.0], [1.0, 1.0, 1.0]], dtype=T.float64)
    v = T.tensor([1.0, 0.5, -2.0], dtype=T.float64)
    f = ((w @ x).tanh() ** 2).sum() + (x.exp() * x).sum()
    (g,) = T.autograd.grad(f, x, create_graph=True)
    (hv,) = T.autograd.grad((g * v).sum(), x)
    return [vals(g), hv]


def gradient_penalty(T):
    rng = np.random.default_rng(0)
    w1 = T.tensor(rng.standard_normal((4, 3)), dtype=T.float32, requires_grad=True)
    w2 = T.tensor(rng.standard_normal((1, 4)), dtype=T.float32, requires_grad=True)
    x = T.tensor(rng.standard_normal((5, 3)), dtype=T.float32, requires_grad=True)
    out = (w2 @ (w1 @ x.t()).tanh()).sigmoid().sum()
    (gx,) = T.autograd.grad(out, x, create_graph=True)
    penalty = ((gx * gx).sum(1).sqrt() - 1) ** 2
    penalty.mean().backward()
    return [w1.grad, w2.grad, x.grad]


def create_graph_relu_mm(T):
    rng = np.random.default_rng(1)
    w = T.tensor(rng.standard_normal((3, 3)), dtype=T.float64, requires_grad=True)
    x = T.tensor(rng.standard_normal((2, 3)), dtype=T.float64, requires_grad=True)
    y = (x @ w).relu().sum() + (x @ w).sigmoid().pow(2).sum()
    (gw,) = T.autograd.grad(y, w, create_graph=True)
    (gx,) = T.autograd.grad((gw ** 2).sum(), x)
    return [vals(gw), gx]


def create_graph_div_log(T):
    x = leaf(T, [0.5, 1.5, 3.0], T.float64)
    y = (x.log() / (x + 1) + x.sqrt() * x.cos()).sum()
    (g,) = T.autograd.grad(y, x, create_graph=True)
    (gg,) = T.autograd.grad(g.sum(), x)
    return [vals(g), gg]


def create_graph_views(T):
    x = leaf(T, M23, T.float64)
    y = (x.t()[1:] ** 3).reshape(-1).sum() + (x[:, 0] * x[:, 2]).sum()
    (g,) = T.autograd.grad(y, x, create_graph=True)
    (gg,) = T.autograd.grad((g * g).sum(), x)
    return [vals(g), gg]


def create_graph_false_result_detached(T):
    x = leaf(T, X3)
    (g,) = T.autograd.grad((x ** 3).sum(), x)
    return [g.requires_grad, g.grad_fn is None, catch(lambda: T.autograd.grad(g.sum(), x))]


CREATE_GRAPH = [
    (cube_orders, None),
    (cube_first_grad_node, None),
    (sin_fourth_order, None),
    (backward_create_graph, None),
    (backward_create_graph_twice, None),
    (hvp, None),
    (gradient_penalty, None),
    (create_graph_relu_mm, None),
    (create_graph_div_log, None),
    (create_graph_views, None),
    (create_graph_false_result_detached, None),
]


@pytest.mark.parametrize("fn,match", cases(CREATE_GRAPH))
def test_create_graph(fn, match):
    both(fn, match=match, rtol=1e-5, atol=1e-6, raises=getattr(fn, "raises", False))


# --- the same cases again, now that their graph shapes have been seen --------------------------


@pytest.mark.parametrize("fn,match", cases(ACCUMULATE + BACKWARD))
def test_cases_again_once_graph_shapes_repeat(fn, match):
    both_again(fn, match)
