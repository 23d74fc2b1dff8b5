"""torchlike.autograd.gradcheck / gradgradcheck: every differentiable core op passes in float64,
wrong backward formulas are caught, and errors and warnings read as PyTorch's do.

The op table is also run through torch.autograd.gradcheck on the same values, so a row that
passes only because of a bad table entry (a kink, a non-differentiable point) would show up.
"""
import re
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl
from torch.autograd.gradcheck import GradcheckError as TorchGradcheckError
from torchlike.autograd.gradcheck import GradcheckError

RNG = np.random.default_rng(0)
# Values away from the kinks of abs/relu/clamp and with distinct entries for maximum/minimum.
A = np.array([[0.7, -1.3, 0.4], [-0.6, 1.1, -0.9]])
B = np.array([[-0.2, 0.5, 1.2], [0.8, -1.0, 0.3]])
POS = np.array([[0.7, 1.3, 0.4], [0.6, 1.1, 0.9]])
SQ = RNG.standard_normal((3, 2))
BAT = RNG.standard_normal((2, 2, 3))
BAT2 = RNG.standard_normal((2, 3, 2))

# name -> (function written with methods/module functions of `L`, input arrays)
OPS = {
    "add": (lambda L, a, b: a + b, (A, B)),
    "add_scalar_broadcast": (lambda L, a, b: a + b[0] + 2.0, (A, B)),
    "sub": (lambda L, a, b: a - b, (A, B)),
    "mul": (lambda L, a, b: a * b, (A, B)),
    "div": (lambda L, a, b: a / b, (A, POS)),
    "fmod": (lambda L, a, b: L.fmod(a * 2.5, b + 0.13), (A, POS)),   # away from jumps
    "pow": (lambda L, a, b: a ** b, (POS, B)),
    "pow_scalar": (lambda L, a: a ** 3, (A,)),
    "neg": (lambda L, a: -a, (A,)),
    "abs": (lambda L, a: a.abs(), (A,)),
    "exp": (lambda L, a: a.exp(), (A,)),
    "log": (lambda L, a: a.log(), (POS,)),
    "sqrt": (lambda L, a: a.sqrt(), (POS,)),
    "sin": (lambda L, a: L.sin(a), (A,)),
    "cos": (lambda L, a: L.cos(a), (A,)),
    "tanh": (lambda L, a: a.tanh(), (A,)),
    "sigmoid": (lambda L, a: a.sigmoid(), (A,)),
    "relu": (lambda L, a: L.relu(a), (A,)),
    "sum": (lambda L, a: a.sum(), (A,)),
    "sum_dim": (lambda L, a: a.sum(1, keepdim=True), (A,)),
    "mean": (lambda L, a: a.mean(0), (A,)),
    "matmul": (lambda L, a, s: a @ s, (A, SQ)),
    "mm": (lambda L, a, s: L.mm(a, s), (A, SQ)),
    "bmm": (lambda L, a, b: L.bmm(a, b), (BAT, BAT2)),
    "view": (lambda L, a: a.view(3, 2) * 2, (A,)),
    "reshape": (lambda L, a: a.reshape(-1), (A,)),
    "transpose": (lambda L, a: a.transpose(0, 1), (A,)),
    "permute": (lambda L, a: a.permute(2, 0, 1), (BAT,)),
    "unsqueeze": (lambda L, a: a.unsqueeze(1), (A,)),
    "squeeze": (lambda L, a: a[:1].squeeze(0), (A,)),
    "expand": (lambda L, a: a[:, :1].expand(2, 3), (A,)),
    "flatten": (lambda L, a: a.flatten(), (BAT,)),
    "index": (lambda L, a: a[1, 1:] * a[0, 0], (A,)),
    "cat": (lambda L, a, b: L.cat([a, b], 1), (A, B)),
    "stack": (lambda L, a, b: L.stack([a, b], 0), (A, B)),
    "clone": (lambda L, a: a.clone(), (A,)),
    "where": (lambda L, a, b: L.where(a > 0, a, b), (A, B)),
    "clamp": (lambda L, a: a.clamp(-1.0, 1.0), (A,)),
    "maximum": (lambda L, a, b: L.maximum(a, b), (A, B)),
    "minimum": (lambda L, a, b: L.minimum(a, b), (A, B)),
    "composite_mlp": (lambda L, a, s: ((a @ s).tanh() * 2).sigmoid().mean(), (A, SQ)),
    "rsub_rdiv": (lambda L, a: 2.0 - 3.0 / a, (POS,)),
    "advanced_index": (lambda L, a: a[L.tensor([1, 0, 1])][:, L.tensor([2, 0])], (A,)),
    "mask_index": (lambda L, a: a[a > 0], (A,)),
    "setitem": (lambda L, a, b: _setitem(a, b), (A, B)),
    "clamp_tensor": (lambda L, a, b: a.clamp(min=b, max=b + 1.0), (A, B)),
}


def _setitem(a, b):
    u = a * 1.0
    u[0] = b[1]                    # basic index: CopySlices
    u[:, [0, 2]] += b[:, :2] * b[:, 1:]  # advanced read-modify-write: IndexPutBackward0
    return u


def tl_inputs(arrays):
    return tuple(tl.tensor(x, dtype=tl.float64, requires_grad=True) for x in arrays)


def torch_inputs(arrays):
    return tuple(torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in arrays)


@pytest.mark.parametrize("name", OPS)
def test_gradcheck_passes_on_core_ops(name):
    fn, arrays = OPS[name]
    assert torch.autograd.gradcheck(lambda *xs: fn(torch, *xs), torch_inputs(arrays))
    assert tl.autograd.gradcheck(lambda *xs: fn(tl, *xs), tl_inputs(arrays))


SECOND_ORDER = ["mul", "div", "pow", "log", "sigmoid", "cat", "composite_mlp"]


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_gradgradcheck_passes(name):
    fn, arrays = OPS[name]
    assert tl.autograd.gradgradcheck(lambda *xs: fn(tl, *xs), tl_inputs(arrays))


def test_modes_and_options_pass_on_a_correct_function():
    fn = lambda a, b: (a.sin() * b, a.sum())  # noqa: E731
    inputs = tl_inputs((A, B))
    gc = tl.autograd.gradcheck
    assert gc(fn, inputs, fast_mode=True)
    assert gc(fn, inputs, check_forward_ad=True, check_batched_grad=True,
              check_batched_forward_grad=True)
    assert gc(fn, inputs, check_forward_ad=True, check_backward_ad=False, fast_mode=True)
    assert gc(fn, inputs, check_grad_dtypes=True, masked=True, nondet_tol=1e-12)
    assert tl.autograd.gradgradcheck(fn, inputs, gen_non_contig_grad_outputs=True,
                                     check_fwd_over_rev=True, check_batched_grad=True)
    assert tl.autograd.gradgradcheck(fn, inputs, fast_mode=True)


def test_non_tensor_inputs_non_contiguous_inputs_and_integer_outputs():
    a = tl.tensor(A.T.copy(), dtype=tl.float64).t().requires_grad_()   # a transposed view
    assert not a.is_contiguous()
    fn = lambda a, k, s: (a * k + s.sum(), (a > 0).long())  # noqa: E731
    s = tl.tensor(SQ, dtype=tl.float64, requires_grad=True)
    assert tl.autograd.gradcheck(fn, (a, 3.0, s))
    tl.autograd.gradcheck(lambda a: (a * 2, a.sum()), (a,), check_batched_grad=True)


def test_no_differentiable_output_expects_zero_numerical_gradient():
    x = tl_inputs((A,))
    assert tl.autograd.gradcheck(lambda a: (a > 0).long(), x)
    assert tl.autograd.gradcheck(lambda a: (a > 0).long(), x, fast_mode=True)


# --- detecting wrong gradients -----------------------------------------------------------------

def make_functions(L):
    """Custom Functions with a wrong first derivative, a wrong second derivative, a backward
    that ignores grad_output and a non-deterministic backward, for torch and torchlike."""

    class WrongExp(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.exp()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x.exp() * 1.1

    class WrongCubeGradGrad(L.autograd.Function):
        """d/dx x**3 = 3 x**2 is right, but it is written so that its own derivative is 0."""
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x.detach() ** 2

    class IgnoresGradOutput(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):   # right for every non-zero g, but not linear in g
            return g * 2 if float(g.abs().sum()) > 0 else g + 1

    class Noisy(L.autograd.Function):
        calls = [0]

        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            Noisy.calls[0] += 1
            return g * (2 + 1e-7 * Noisy.calls[0])

    return WrongExp, WrongCubeGradGrad, IgnoresGradOutput, Noisy


TL_FN = make_functions(tl)
TORCH_FN = make_functions(torch)


def first_line(err):
    return str(err).split("\n")[0]


@pytest.mark.parametrize("fast_mode", [False, True])
def test_wrong_backward_is_detected_like_torch(fast_mode):
    with pytest.raises(TorchGradcheckError) as t_err:
        torch.autograd.gradcheck(TORCH_FN[0].apply, torch_inputs((A,)), fast_mode=fast_mode)
    with pytest.raises(GradcheckError) as l_err:
        tl.autograd.gradcheck(TL_FN[0].apply, tl_inputs((A,)), fast_mode=fast_mode)
    assert isinstance(l_err.value, RuntimeError)
    assert first_line(l_err.value) == first_line(t_err.value)
    # the same quantities, shown the same way (a number in fast mode, a tensor in slow mode)
    shown = r"\n(numerical|analytical):(tensor\()?"
    assert re.findall(shown, str(l_err.value)) == re.findall(shown, str(t_err.value))
    assert tl.autograd.gradcheck(TL_FN[0].apply, tl_inputs((A,)), fast_mode=fast_mode,
                                 raise_exception=False) is False


def test_wrong_jacobian_values_are_those_of_torch():
    (t_x,), (l_x,) = torch_inputs((A[0],)), tl_inputs((A[0],))
    t_msg = str(pytest.raises(TorchGradcheckError,
                              torch.autograd.gradcheck, TORCH_FN[0].apply, (t_x,)).value)
    l_msg = str(pytest.raises(GradcheckError, tl.autograd.gradcheck, TL_FN[0].apply,
                              (l_x,)).value)
    assert l_msg == t_msg


def test_forward_ad_check_catches_wrong_formula():
    with pytest.raises(GradcheckError, match="Jacobian computed with forward mode mismatch for "
                                             "output 0 with respect to input 0"):
        tl.autograd.gradcheck(TL_FN[0].apply, tl_inputs((A,)), check_forward_ad=True,
                              check_backward_ad=False)


def test_gradgradcheck_catches_wrong_second_derivative_like_torch():
    assert tl.autograd.gradcheck(TL_FN[1].apply, tl_inputs((A,)))
    with pytest.raises(TorchGradcheckError) as t_err:
        torch.autograd.gradgradcheck(TORCH_FN[1].apply, torch_inputs((A,)))
    with pytest.raises(GradcheckError) as l_err:
        tl.autograd.gradgradcheck(TL_FN[1].apply, tl_inputs((A,)))
    assert first_line(l_err.value) == first_line(t_err.value)
    assert not tl.autograd.gradgradcheck(TL_FN[1].apply, tl_inputs((A,)), raise_exception=False)


def test_backward_not_multiplied_by_grad_output():
    err = pytest.raises(GradcheckError, tl.autograd.gradcheck, TL_FN[2].apply,
                        tl_inputs((A,))).value
    t_err = pytest.raises(TorchGradcheckError, torch.autograd.gradcheck,
                          TORCH_FN[2].apply, torch_inputs((A,))).value
    assert str(err) == str(t_err) == "backward not multiplied by grad_output"


def test_nondeterministic_backward_is_reported():
    with pytest.raises(GradcheckError, match="Backward is not reentrant"):
        tl.autograd.gradcheck(TL_FN[3].apply, tl_inputs((A,)))
    assert tl.autograd.gradcheck(TL_FN[3].apply, tl_inputs((A,)), nondet_tol=1e-3)


def test_undefined_output_grads_of_a_multi_output_function():
    class Split(tl.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin(), x.exp()

        @staticmethod
        def backward(ctx, ga, gb):
            (x,) = ctx.saved_tensors
            return ga * x.cos() + gb * x.exp()

    assert tl.autograd.gradcheck(Split.apply, tl_inputs((A,)))


def test_tolerances_are_honoured():
    x = tl_inputs((A,))
    assert tl.autograd.gradcheck(TL_FN[0].apply, x, atol=10.0, check_undefined_grad=False)
    assert not tl.autograd.gradcheck(TL_FN[0].apply, x, rtol=0.05, raise_exception=False)


# --- argument checking -------------------------------------------------------------------------

def _error(call):
    try:
        call()
    except Exception as e:  # noqa: BLE001  (type and message are compared)
        return type(e), str(e)
    return None


ARG_CASES = {
    "no_input_requires_grad": lambda L, x: L.autograd.gradcheck(L.sin, (x.detach(),)),
    "stride_0_input": lambda L, x: L.autograd.gradcheck(
        L.sin, (x.detach()[:1].expand(3, 3).requires_grad_(),)),
    "neither_mode": lambda L, x: L.autograd.gradcheck(L.sin, (x,), check_backward_ad=False),
    "batched_without_backward": lambda L, x: L.autograd.gradcheck(
        L.sin, (x,), check_batched_grad=True, check_backward_ad=False, check_forward_ad=True),
    "batched_forward_without_forward": lambda L, x: L.autograd.gradcheck(
        L.sin, (x,), check_batched_forward_grad=True),
    "gradgrad_neither_mode": lambda L, x: L.autograd.gradgradcheck(
        L.sin, (x,), check_rev_over_rev=False),
    "gradgrad_undefined_without_rev": lambda L, x: L.autograd.gradgradcheck(
        L.sin, (x,), check_rev_over_rev=False, check_fwd_over_rev=True),
}


@pytest.mark.parametrize("case", ARG_CASES)
def test_argument_errors_match_torch(case):
    (t_x,), (l_x,) = torch_inputs((A,)), tl_inputs((A,))
    expected = _error(lambda: ARG_CASES[case](torch, t_x))
    assert expected is not None
    assert _error(lambda: ARG_CASES[case](tl, l_x)) == expected


def test_single_precision_input_warns_like_torch():
    x = tl.tensor(A, dtype=tl.float32, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tl.autograd.gradcheck(lambda a: a * 2, (x,), eps=1e-3, atol=1e-2,
                              raise_exception=False)
    messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert any(m.startswith("Input #0 requires gradient and is not a double precision floating "
                            "point or complex.") for m in messages)


def test_complex_inputs_are_rejected_clearly():
    x = tl.tensor(A, dtype=tl.float64, requires_grad=True)
    with pytest.raises(ValueError, match="complex"):
        tl.autograd.gradcheck(lambda a: a.to(tl.complex128), (x,))
