"""Parity tests: torchlike's autograd engine against real PyTorch (CPU): autograd.Function and
anomaly mode.

Each case is a function of the library module ``T`` run with torch and with torchlike
(engine cases in parity.py); cases are grouped in spec tables (docs/architecture.md §7.5).
"""
import math
import warnings

import pytest
import torch

import torchlike as tl
from parity import VERSION_ERR, X3, both, both_again, cases, catch, leaf, next_names, raising, vals

# ------------------------------------------------------------------------------------------------
# autograd.Function
# ------------------------------------------------------------------------------------------------


def functions(T):
    """The custom Functions used below, defined against library ``T``."""
    F = T.autograd.Function

    class Exp(F):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    class Cube(F):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2

    class MulConst(F):
        @staticmethod
        def forward(ctx, x, k):
            ctx.k = k
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None

    class Needs(F):
        @staticmethod
        def forward(ctx, a, b):
            ctx.seen = [tuple(ctx.needs_input_grad)]
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            Needs.log.append(tuple(ctx.needs_input_grad))
            ga = g * b if ctx.needs_input_grad[0] else None
            gb = g * a if ctx.needs_input_grad[1] else None
            return ga, gb

    Needs.log = []

    class SortLike(F):
        @staticmethod
        def forward(ctx, x):
            idx = T.tensor([2, 0, 1])
            out = x[idx]
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(idx)
            return out, idx

        @staticmethod
        def backward(ctx, g, g_idx):
            (idx,) = ctx.saved_tensors
            r = T.zeros(3)
            r[idx] = g
            return r

    class AddOneInplace(F):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    class TwoOut(F):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            TwoOut.log.append((g1 is None, g2 is None))
            r = 0
            if g1 is not None:
                r = r + g1 * 2
            if g2 is not None:
                r = r + g2 * 3
            return r

    TwoOut.log = []

    class TwoOutNoMaterialize(TwoOut):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

    class Once(F):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        @T.autograd.function.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    class NoneGrad(F):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, g):
            return g, None

    class WrongCount(F):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, g):
            return (g,)

    class WrongShape(F):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g[:2]

    class NanBack(F):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * math.nan

    class SetupCtx(F):
        @staticmethod
        def forward(x, k):
            return x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.k = inputs[1]

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None

    return {c.__name__: c for c in (Exp, Cube, MulConst, Needs, SortLike, AddOneInplace, TwoOut,
                                    TwoOutNoMaterialize, Once, NoneGrad, WrongCount, WrongShape,
                                    NanBack, SetupCtx)}


def fn_exp(T):
    x = leaf(T, X3)
    y = functions(T)["Exp"].apply(x)
    r = [y, type(y.grad_fn).__name__, next_names(y.grad_fn), y.is_leaf]
    y.sum().backward()
    return r + [x.grad]


def fn_exp_in_graph(T):
    x = leaf(T, X3)
    y = functions(T)["Exp"].apply(x * 2).sin().sum()
    y.backward()
    return x.grad


@raising
def fn_exp_saved_output_modified(T):
    x = leaf(T, X3)
    y = functions(T)["Exp"].apply(x)
    y.mul_(2)
    return catch(lambda: y.sum().backward())


@raising
def fn_saved_input_modified(T):
    x = leaf(T, X3)
    a = x * 1
    y = functions(T)["Cube"].apply(a)
    a.add_(1)
    return catch(lambda: y.sum().backward())


@raising
def fn_second_backward_error(T):
    x = leaf(T, X3)
    y = functions(T)["Exp"].apply(x).sum()
    y.backward()
    return catch(y.backward)


def fn_non_tensor_arg(T):
    x = leaf(T, X3)
    y = functions(T)["MulConst"].apply(x, 3.0)
    y.sum().backward()
    return [y, x.grad]


def fn_needs_input_grad(T):
    fs = functions(T)
    a, b = leaf(T, X3), T.tensor([2.0, 3.0, 4.0])
    y = fs["Needs"].apply(a, b)
    fwd = y.grad_fn.seen if hasattr(y.grad_fn, "seen") else None
    y.sum().backward()
    return [fwd, fs["Needs"].log, a.grad, b.grad]


def fn_no_input_requires_grad(T):
    y = functions(T)["Exp"].apply(T.tensor(X3))
    return [y, y.requires_grad, y.grad_fn is None]


def fn_under_no_grad(T):
    x = leaf(T, X3)
    with T.no_grad():
        y = functions(T)["Exp"].apply(x)
    return [y.requires_grad, y.grad_fn is None]


def fn_mark_non_differentiable(T):
    x = leaf(T, X3)
    out, idx = functions(T)["SortLike"].apply(x)
    r = [out, idx, out.requires_grad, idx.requires_grad]
    (out * T.tensor([1.0, 10.0, 100.0])).sum().backward()
    return r + [x.grad]


def fn_mark_dirty(T):
    x = leaf(T, X3)
    a = x * 1
    out = functions(T)["AddOneInplace"].apply(a)
    r = [out is a, out, a._version, type(a.grad_fn).__name__]
    (out * out).sum().backward()
    return r + [x.grad]


@raising
def fn_mark_dirty_on_leaf_error(T):
    x = leaf(T, X3)
    return catch(lambda: functions(T)["AddOneInplace"].apply(x))


def fn_materialize_default(T):
    fs = functions(T)
    x = leaf(T, X3)
    a, b = fs["TwoOut"].apply(x)
    a.sum().backward()
    return [fs["TwoOut"].log, x.grad]


def fn_materialize_false(T):
    fs = functions(T)
    x = leaf(T, X3)
    a, b = fs["TwoOutNoMaterialize"].apply(x)
    a.sum().backward()
    return [fs["TwoOut"].log, x.grad]


def fn_once_differentiable_first_order(T):
    x = leaf(T, X3)
    y = functions(T)["Once"].apply(x)
    y.sum().backward()
    return x.grad


def fn_once_differentiable_double_error(T):
    x = leaf(T, X3)
    y = functions(T)["Once"].apply(x)
    (g,) = T.autograd.grad(y.sum(), x, create_graph=True)
    return [vals(g), catch(lambda: g.sum().backward())]


def fn_once_differentiable_double_error_grad_output(T):
    x = leaf(T, X3)
    v = leaf(T, [1.0, 1.0, 1.0])
    y = functions(T)["Once"].apply(x)
    (g,) = T.autograd.grad(y, x, grad_outputs=v, create_graph=True)
    return [vals(g), catch(lambda: g.sum().backward())]


def fn_create_graph(T):
    x = leaf(T, X3)
    y = functions(T)["Cube"].apply(x)
    (g,) = T.autograd.grad(y.sum(), x, create_graph=True)
    (gg,) = T.autograd.grad(g.sum(), x)
    return [vals(g), gg]


def fn_none_grad(T):
    a, b = leaf(T, X3), leaf(T, [1.0, 1.0, 1.0])
    functions(T)["NoneGrad"].apply(a, b).sum().backward()
    return [a.grad, b.grad]


@raising
def fn_wrong_count(T):
    a, b = leaf(T, X3), leaf(T, [1.0, 1.0, 1.0])
    y = functions(T)["WrongCount"].apply(a, b)
    return catch(lambda: y.sum().backward())


@raising
def fn_wrong_shape(T):
    a = leaf(T, X3)
    y = functions(T)["WrongShape"].apply(a)
    return catch(lambda: y.sum().backward())


def fn_setup_context(T):
    x = leaf(T, X3)
    y = functions(T)["SetupCtx"].apply(x, 4.0)
    y.sum().backward()
    return [y, x.grad]


@raising
def fn_call_forward_directly_error(T):
    return catch(lambda: functions(T)["Exp"]()(T.ones(2)))


FUNCTION = [
    (fn_exp, None),
    (fn_exp_in_graph, None),
    (fn_exp_saved_output_modified, VERSION_ERR),
    (fn_saved_input_modified, VERSION_ERR),
    (fn_second_backward_error, "^Trying to backward through the graph a second time"),
    (fn_non_tensor_arg, None),
    (fn_needs_input_grad, None),
    (fn_no_input_requires_grad, None),
    (fn_under_no_grad, None),
    (fn_mark_non_differentiable, None),
    (fn_mark_dirty, None),
    (fn_mark_dirty_on_leaf_error, "a leaf Variable that requires grad"),
    (fn_materialize_default, None),
    (fn_materialize_false, None),
    (fn_once_differentiable_first_order, None),
    (fn_once_differentiable_double_error, "does not require grad"),
    (fn_once_differentiable_double_error_grad_output, "trying to differentiate twice a function "
     "that was marked with @once_differentiable"),
    (fn_create_graph, None),
    (fn_none_grad, None),
    (fn_wrong_count, "returned an incorrect number of gradients \\(expected 2, got 1\\)"),
    (fn_wrong_shape, "returned an invalid gradient at index 0 - got \\[2\\] but expected shape "
     "compatible with \\[3\\]"),
    (fn_setup_context, None),
    (fn_call_forward_directly_error, None),
]


@pytest.mark.parametrize("fn,match", cases(FUNCTION))
def test_function(fn, match):
    both(fn, match=match, raises=getattr(fn, "raises", False))


# ------------------------------------------------------------------------------------------------
# Anomaly mode
# ------------------------------------------------------------------------------------------------


@raising
def anomaly_nan_in_backward(T):
    x = leaf(T, [0.0, 1.0])
    with T.autograd.detect_anomaly():
        y = (x.sqrt() * 0).sum()
        return catch(y.backward)


@raising
def anomaly_set_function(T):
    x = leaf(T, [0.0, 1.0])
    T.autograd.set_detect_anomaly(True)
    try:
        y = (x.sqrt() * 0).sum()
        return catch(y.backward)
    finally:
        T.autograd.set_detect_anomaly(False)


@raising
def anomaly_custom_function(T):
    x = leaf(T, X3)
    with T.autograd.detect_anomaly():
        y = functions(T)["NanBack"].apply(x).sum()
        return catch(y.backward)


def anomaly_off_nan_propagates(T):
    x = leaf(T, [0.0, 1.0])
    (x.sqrt() * 0).sum().backward()
    return x.grad


def anomaly_check_nan_false(T):
    x = leaf(T, [0.0, 1.0])
    with T.autograd.detect_anomaly(check_nan=False):
        (x.sqrt() * 0).sum().backward()
    return x.grad


def anomaly_clean_graph(T):
    x = leaf(T, X3)
    with T.autograd.detect_anomaly():
        (x.exp() * x).sum().backward()
    return x.grad


def anomaly_flags(T):
    before = T.is_anomaly_enabled()
    with T.autograd.detect_anomaly():
        inside = T.is_anomaly_enabled()
    T.autograd.set_detect_anomaly(True)
    on = T.is_anomaly_enabled()
    T.autograd.set_detect_anomaly(False)
    return [before, inside, on, T.is_anomaly_enabled()]


def anomaly_set_as_context(T):
    x = leaf(T, [0.0, 1.0])
    with T.autograd.set_detect_anomaly(True):
        inside = catch(lambda: (x.sqrt() * 0).sum().backward())
    (x.sqrt() * 0).sum().backward()
    return [inside, x.grad]


ANOMALY = [
    (anomaly_nan_in_backward, "Function 'SqrtBackward0' returned nan values in its 0th output"),
    (anomaly_set_function, "Function 'SqrtBackward0' returned nan values in its 0th output"),
    (anomaly_custom_function, "Function 'NanBackBackward' returned nan values in its 0th output"),
    (anomaly_off_nan_propagates, None),
    (anomaly_check_nan_false, None),
    (anomaly_clean_graph, None),
    (anomaly_flags, None),
    (anomaly_set_as_context, "Function 'SqrtBackward0' returned nan values in its 0th output"),
]


@pytest.mark.parametrize("fn,match", cases(ANOMALY))
def test_anomaly(fn, match):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # anomaly mode warns on enable and on error
            both(fn, match=match, raises=getattr(fn, "raises", False))
    finally:
        torch.autograd.set_detect_anomaly(False)
        tl.autograd.set_detect_anomaly(False)


# --- the same cases again, now that their graph shapes have been seen --------------------------


@pytest.mark.parametrize("fn,match", cases(FUNCTION))
def test_cases_again_once_graph_shapes_repeat(fn, match):
    both_again(fn, match)
