"""Finite-difference checks of analytical gradients (mirrors torch.autograd.gradcheck).

The numerical Jacobian comes from central differences: each input element (or, in fast mode,
each input along a random direction ``u``) is perturbed in place through ``.data`` by ``±eps``,
exactly as PyTorch does, so the function sees the same Tensor objects and closures see the
perturbation too. The analytical Jacobian comes from ``autograd.grad`` one row at a time, run
twice to check the backward is deterministic. Jacobians are compared as float64 numpy arrays
laid out as PyTorch lays them out: ``(input numel, output numel)``.

Forward-mode checks (``check_forward_ad``, ``check_fwd_over_rev``) use the double-backward trick
of ``autograd.functional.jvp`` (torchlike has no separate forward-mode AD), so they need a
backward that is itself differentiable. Batched checks vmap the backward with ``jax.vmap``
(NOTE [ vectorized backward ] in functional.py). Complex inputs and outputs are not supported.
"""
import warnings

import numpy as np

from .. import _x64
from .._dtype import float64
from . import functional as _F
from . import grad as _grad
from .grad_mode import enable_grad

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """Error raised by :func:`gradcheck` and :func:`gradgradcheck`."""


FAILED_NONDET_MSG = """\n
NOTE: If your op relies on non-deterministic operations, this failure might be expected:
call gradcheck/gradgradcheck with `nondet_tol=<tol>` as a keyword argument.
"""

FAILED_BATCHED_GRAD_MSG = """
gradcheck or gradgradcheck failed while testing batched gradient computation.
To compute batched grads (e.g., jacobians, hessians), torchlike vmaps the backward pass with
jax.vmap, so every backward formula must accept batched (traced) gradients. If this is not
needed, call gradcheck/gradgradcheck with `check_batched_grad=False`.
""".strip()

FAILED_BATCHED_GRAD_MSG_FWD_AD = """
gradcheck failed while testing batched gradient computation with forward-mode AD.
This test is enabled when `check_batched_forward_grad=True`; if it is not needed, call
gradcheck with `check_batched_forward_grad=False`.
""".strip()

FAST_FAIL_SLOW_OK_MSG = """
Fast gradcheck failed but element-wise differences are small. This means that the
test might've passed in slow_mode! Call gradcheck/gradgradcheck with `fast_mode=False`.
""".strip()


# --- small helpers ---------------------------------------------------------------------------

def _Tensor():
    from .._tensor import Tensor
    return Tensor


def _as_tuple(x):
    return x if isinstance(x, tuple) else tuple(x) if isinstance(x, list) else (x,)


def _is_float(x):
    return isinstance(x, _Tensor()) and (x.dtype.is_floating_point or x.dtype.is_complex)


def _diff_inputs(inputs):
    """Indices of the inputs gradcheck differentiates: Tensors with requires_grad."""
    Tensor = _Tensor()
    return [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]


def _differentiable_outputs(x):
    return tuple(o for o in _as_tuple(x) if o.requires_grad)


def _np(t):
    """A float64 numpy copy of a Tensor's values."""
    return np.asarray(t.detach(), dtype=np.float64)


def _show(a):
    """Print a numpy jacobian the way PyTorch prints one (as a float64 Tensor)."""
    from .._creation import tensor
    return tensor(np.asarray(a, dtype=np.float64))


def _wrap(arr, like):
    """A Tensor holding numpy ``arr`` in ``like``'s dtype and shape."""
    import jax.numpy as jnp
    arr = np.asarray(arr, dtype=like._value().dtype).reshape(tuple(like.shape))
    return _Tensor()._wrap(jnp.asarray(arr))


def _zeros_like(t):
    from .._creation import zeros_like
    return zeros_like(t)


def _unit(like, k):
    e = np.zeros(like.numel())
    e[k] = 1.0
    return _wrap(e, like)


def _allclose(a, b, rtol, atol):
    return bool(np.allclose(a, b, rtol=rtol, atol=atol))


def _notallclose_msg(analytical, numerical, output_idx, input_idx, forward=False):
    mode = "computed with forward mode " if forward else ""
    return (f"Jacobian {mode}mismatch for output {output_idx:d} with respect to input "
            f"{input_idx:d},\nnumerical:{_show(numerical)}\nanalytical:{_show(analytical)}\n")


# --- input checks ------------------------------------------------------------------------------

def _check_inputs(tupled_inputs):
    any_input_requiring_grad = False
    for idx in _diff_inputs(tupled_inputs):
        inp = tupled_inputs[idx]
        if inp.dtype.is_complex:
            raise ValueError(f"gradcheck: input {idx} is complex ({inp.dtype}); torchlike's "
                             "gradcheck supports real floating-point inputs only.")
        if inp.dtype is not float64:
            warnings.warn(f"Input #{idx} requires gradient and is not a double precision "
                          "floating point or complex. This check will likely fail if all the "
                          "inputs are not of double precision floating point or complex. ",
                          stacklevel=3)
        if not all(st > 0 or sz <= 1 for st, sz in zip(inp.stride(), inp.size())):
            raise RuntimeError(f"The {idx}th input has a dimension with stride 0. gradcheck "
                               "only supports inputs that are non-overlapping to be able to "
                               "compute the numerical gradients correctly. You should call "
                               ".contiguous on the input before passing it to gradcheck.")
        any_input_requiring_grad = True
    if not any_input_requiring_grad:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of them have requires_grad=True.")


def _check_outputs(func_out):
    for i, o in enumerate(_as_tuple(func_out)):
        if not isinstance(o, _Tensor()):
            raise TypeError(f"gradcheck: the function must return Tensors, but output {i} has "
                            f"type {type(o).__name__}")
        if o.dtype.is_complex:
            raise ValueError(f"gradcheck: output {i} is complex ({o.dtype}); torchlike's "
                             "gradcheck supports real floating-point outputs only.")


# --- numerical side ----------------------------------------------------------------------------

def _eval(func, inputs):
    """float64 copies of the floating outputs of ``func(*inputs)`` (None for other outputs),
    plus their shapes and dtypes for the neighbourhood check."""
    outs = _as_tuple(func(*inputs))
    return [(_np(o) if _is_float(o) else None, tuple(o.shape), o.dtype) for o in outs]


def _central_difference(func, inputs, x, delta, eps, idx=None):
    """``(f(x + delta) - f(x - delta)) / (2 eps)`` per output, flattened, perturbing ``x`` in
    place through ``.data`` and restoring it afterwards."""
    data = x.data
    orig = _np(x).reshape(-1)
    try:
        data.copy_(_wrap(orig - delta, x))
        outa = _eval(func, inputs)
        data.copy_(_wrap(orig + delta, x))
        outb = _eval(func, inputs)
    finally:
        data.copy_(_wrap(orig, x))
    on_index = f"on index {idx} " if idx is not None else ""
    res = []
    for (a, sa, da), (b, sb, db) in zip(outa, outb):
        if sa != sb:
            raise AssertionError(f"Expected `func` to return outputs with the same shape when "
                                 f"inputs are perturbed {on_index}by {eps}, but got: shapes "
                                 f"{sa} and {sb}.")
        if da != db:
            raise AssertionError(f"Expected `func` to return outputs with the same dtype when "
                                 f"inputs are perturbed {on_index}by {eps}, but got: dtypes "
                                 f"{da} and {db}.")
        res.append(None if a is None else ((b - a) / (2 * eps)).reshape(-1))
    return res


def _numerical_jacobian(func, inputs, func_out, eps):
    """``J[i][o]`` of shape (numel of diff input i, numel of output o), for every output."""
    outs = _as_tuple(func_out)
    jacobians = []
    for i in _diff_inputs(inputs):
        x = inputs[i]
        jac = [np.zeros((x.numel(), o.numel())) for o in outs]
        for k in range(x.numel()):
            delta = np.zeros(x.numel())
            delta[k] = eps
            idx = tuple(int(c) for c in np.unravel_index(k, tuple(x.shape)))
            for o, col in enumerate(_central_difference(func, inputs, x, delta, eps, idx)):
                if col is not None:
                    jac[o][k] = col
        jacobians.append(jac)
    return jacobians


# --- analytical side (reverse mode) --------------------------------------------------------------

def _vjp_rows(output, diff, grad_outputs):
    """``autograd.grad(output, diff, g)`` for each ``g``: rows[input] = list of grads/None."""
    rows = [[] for _ in diff]
    for g in grad_outputs:
        grads = _grad(output, diff, g, retain_graph=True, allow_unused=True)
        for acc, gi in zip(rows, grads):
            acc.append(None if gi is None else gi.detach())
    return rows


def _stack_rows(rows, diff, check_grad_dtypes):
    """Stack grads into (input numel, number of rows) float64 arrays and check sizes/dtypes."""
    jacobians, sizes_ok, types_ok = [], True, True
    for inp, r in zip(diff, rows):
        jac = np.zeros((inp.numel(), len(r)))
        for j, g in enumerate(r):
            if g is None:
                continue
            if g.shape != inp.shape:
                sizes_ok = False
                continue
            if g.dtype != inp.dtype:
                types_ok = False
            jac[:, j] = _np(g).reshape(-1)
        jacobians.append(jac)
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    return jacobians


def _analytical_jacobian(inputs, output, nondet_tol, check_grad_dtypes, grad_outputs=None):
    """Per diff input, ``(input numel, len(grad_outputs))``: the rows ``g^T J`` (all unit
    vectors by default, i.e. the full jacobian), computed twice to check determinism."""
    diff = [inputs[i] for i in _diff_inputs(inputs)]
    if grad_outputs is None:
        grad_outputs = [_unit(output, j) for j in range(output.numel())]
    jac1 = _stack_rows(_vjp_rows(output, diff, grad_outputs), diff, check_grad_dtypes)
    jac2 = _stack_rows(_vjp_rows(output, diff, grad_outputs), diff, check_grad_dtypes)
    for a, b in zip(jac1, jac2):
        if a.size and np.abs(a - b).max() > nondet_tol:
            raise GradcheckError(
                "Backward is not reentrant, i.e., running backward with same input and "
                "grad_output multiple times gives different values, although analytical "
                "gradient matches numerical gradient."
                f"The tolerance for nondeterminism was {nondet_tol}." + FAILED_NONDET_MSG)
    return jac1


# --- analytical side (forward mode, by the double-backward trick) --------------------------------

def _forward_setup(func, inputs):
    """Detached copies of the diff inputs, ``func``'s outputs on them, the zero cotangents and
    ``grad(outputs, inputs, cotangents, create_graph=True)`` (NOTE [ double-backward trick ])."""
    new_inputs = list(inputs)
    diff_idx = _diff_inputs(inputs)
    for i in diff_idx:
        new_inputs[i] = inputs[i].detach().requires_grad_()
    diff = [new_inputs[i] for i in diff_idx]
    with enable_grad():
        outs = _as_tuple(func(*new_inputs))
        grad_outputs, grad_inputs = _F._double_back(outs, diff, strict=False)
    return outs, grad_outputs, grad_inputs


def _forward_jvps(outs, grad_outputs, grad_input, tangents):
    """``J t`` for each tangent of one input, flattened per output: [tangent][output]."""
    res = []
    for t in tangents:
        with enable_grad():
            grads = _F._autograd_grad((grad_input,), grad_outputs, (t,), retain_graph=True)
        res.append([np.zeros(o.numel()) if g is None else _np(g).reshape(-1)
                    for g, o in zip(grads, outs)])
    return res


def _forward_jacobian(func, inputs):
    """``J[i][o]`` (input numel, output numel) for every diff input and output, one column
    per input element."""
    outs, gouts, gins = _forward_setup(func, inputs)
    diff = [inputs[i] for i in _diff_inputs(inputs)]
    jacobians = []
    for inp, gin in zip(diff, gins):
        cols = _forward_jvps(outs, gouts, gin, [_unit(inp, k) for k in range(inp.numel())])
        jacobians.append([np.stack([c[o] for c in cols]) if cols
                          else np.zeros((0, out.numel())) for o, out in enumerate(outs)])
    return jacobians


# --- slow and fast comparisons --------------------------------------------------------------------

def _slow_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                    nondet_tol, use_forward_ad=False):
    func_out = _as_tuple(func_out)
    numerical = _numerical_jacobian(func, inputs, func_out, eps)
    if not outputs:
        for per_input in numerical:
            if any(np.any(j != 0) for j in per_input):
                raise GradcheckError("Numerical gradient for function expected to be zero")
        return True
    keep = [k for k, o in enumerate(func_out) if o.requires_grad]
    if use_forward_ad:
        analytical = _forward_jacobian(func, inputs)
        for j, (a_in, n_in) in enumerate(zip(analytical, numerical)):
            for i, k in enumerate(keep):
                if not _allclose(a_in[k], n_in[k], rtol, atol):
                    raise GradcheckError(_notallclose_msg(a_in[k], n_in[k], i, j, forward=True))
        return True
    for i, (k, o) in enumerate(zip(keep, outputs)):
        analytical = _analytical_jacobian(inputs, o, nondet_tol, check_grad_dtypes)
        for j, (a, n_in) in enumerate(zip(analytical, numerical)):
            if not _allclose(a, n_in[k], rtol, atol):
                raise GradcheckError(_notallclose_msg(a, n_in[k], i, j))
    return True


def _random_unit(rng, t):
    """A random non-negative direction with ``t``'s numel, normalised (PyTorch's choice)."""
    v = rng.random(t.numel())
    return v / np.linalg.norm(v) if v.size else v


def _fast_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                    nondet_tol, use_forward_ad=False):
    """Compare ``v^T (J u)`` (numerical) with ``(v^T J) u`` (analytical) for random ``u, v``
    (with forward AD: ``J u`` with ``J u``); recompute in slow mode for the error message."""
    func_out = _as_tuple(func_out)
    rng = np.random.default_rng(0)
    diff_idx = _diff_inputs(inputs)
    all_u = [_random_unit(rng, inputs[i]) for i in diff_idx]
    all_v = None if use_forward_ad else [_random_unit(rng, o) for o in outputs]
    # numerical J u: [input][output], every output
    ju = [_central_difference(func, inputs, inputs[i], u * eps, eps)
          for i, u in zip(diff_idx, all_u)]
    if not outputs:
        for per_input in ju:
            if any(c is not None and c.size and np.abs(c).max() > nondet_tol for c in per_input):
                raise GradcheckError("Numerical gradient for function expected to be zero")
        return True
    keep = [k for k, o in enumerate(func_out) if o.requires_grad]
    if use_forward_ad:
        outs, gouts, gins = _forward_setup(func, inputs)
        analytical = [_forward_jvps(outs, gouts, gin, [_wrap(u, inputs[i])])[0]
                      for i, u, gin in zip(diff_idx, all_u, gins)]
    else:   # v^T J per output: [output][input] of shape (input numel,)
        vj = [[a[:, 0] for a in _analytical_jacobian(inputs, o, nondet_tol, check_grad_dtypes,
                                                     [_wrap(v, o)])]
              for o, v in zip(outputs, all_v)]
    for j, u in enumerate(all_u):
        for i, k in enumerate(keep):
            if use_forward_ad:
                a, n = analytical[j][k], ju[j][k]
                tol = atol * float(u.sum())
            else:
                v = all_v[i]
                a, n = vj[i][j] @ u, v @ ju[j][k]
                tol = atol * float(u.sum()) * float(v.sum())
            if not _allclose(a, n, rtol, tol):
                raise GradcheckError(
                    _notallclose_msg(a, n, i, j, forward=use_forward_ad)
                    + _slow_mode_error(func, inputs, func_out, j, i, k, rtol, atol, eps,
                                       use_forward_ad))
    return True


def _slow_mode_error(func, inputs, func_out, input_idx, output_idx, out_pos, rtol, atol, eps,
                     use_forward_ad):
    numerical = _numerical_jacobian(func, inputs, func_out, eps)[input_idx][out_pos]
    if use_forward_ad:
        analytical = _forward_jacobian(func, inputs)[input_idx][out_pos]
    else:
        output = _differentiable_outputs(func_out)[output_idx]
        analytical = _analytical_jacobian(inputs, output, float("inf"), False)[input_idx]
    max_diff = np.abs(numerical - analytical).max() if numerical.size else 0.0
    msg = ("\nThe above quantities relating the numerical and analytical jacobians are computed "
           "\nin fast mode. Below, we recompute numerical and analytical jacobians in slow "
           f"mode:\n\nNumerical:\n {_show(numerical)}\nAnalytical:\n{_show(analytical)}\n\n"
           f"The max per-element difference (slow mode) is: {max_diff}.\n")
    if _allclose(analytical, numerical, rtol, atol):
        msg += FAST_FAIL_SLOW_OK_MSG
    return msg


# --- extra backward checks -----------------------------------------------------------------

def _batched_msg(output_idx, input_idx, res, exp, forward=False):
    return (f"For output {output_idx} and input {input_idx}:\n\n"
            f"{FAILED_BATCHED_GRAD_MSG_FWD_AD if forward else FAILED_BATCHED_GRAD_MSG}\n\n"
            f"Got:\n{_show(res)}\n\nExpected:\n{_show(exp)}")


def _test_batched_grad(inputs, output, output_idx):
    """vmapped ``autograd.grad`` over two random cotangents == two separate calls."""
    diff = [inputs[i] for i in _diff_inputs(inputs)]
    rng = np.random.default_rng(1)
    gos = [rng.standard_normal(output.numel()) for _ in range(2)]
    expected = [[np.zeros(d.numel()) if r is None else _np(r).reshape(-1) for r, d in
                 zip(_grad(output, diff, _wrap(g, output), retain_graph=True,
                           allow_unused=True), diff)] for g in gos]
    import jax.numpy as jnp
    batch = jnp.asarray(np.stack(gos), dtype=output._value().dtype)
    try:
        result = _F._batched_grad([output], diff, [batch], [tuple(output.shape)],
                                  retain_graph=True)
    except Exception as ex:
        raise GradcheckError(f"While computing batched gradients, got: {ex}\n\n"
                             f"{FAILED_BATCHED_GRAD_MSG}") from ex
    for input_idx, (res, d) in enumerate(zip(result, diff)):
        res = np.zeros((2, d.numel())) if res is None else np.asarray(res, np.float64)
        exp = np.stack([e[input_idx] for e in expected])
        if not _allclose(res.reshape(2, -1), exp, 1e-5, 1e-8):
            raise GradcheckError(_batched_msg(output_idx, input_idx, res, exp))
    return True


def _test_batched_grad_forward_ad(func, inputs):
    """vmapped forward-mode products over two random tangents == two separate ones."""
    import jax.numpy as jnp
    outs, gouts, gins = _forward_setup(func, inputs)
    rng = np.random.default_rng(2)
    for j, i in enumerate(_diff_inputs(inputs)):
        inp = inputs[i]
        tangents = [rng.standard_normal(inp.numel()) for _ in range(2)]
        expected = _forward_jvps(outs, gouts, gins[j], [_wrap(t, inp) for t in tangents])
        batch = jnp.asarray(np.stack(tangents), dtype=inp._value().dtype)
        try:
            with enable_grad():
                result = _F._batched_grad([gins[j]], gouts, [batch], [tuple(inp.shape)],
                                          retain_graph=True)
        except Exception as ex:
            raise GradcheckError(f"While computing batched gradients, got: {ex}\n\n"
                                 f"{FAILED_BATCHED_GRAD_MSG_FWD_AD}") from ex
        for o, (res, out) in enumerate(zip(result, outs)):
            res = (np.zeros((2, out.numel())) if res is None
                   else np.asarray(res, np.float64).reshape(2, -1))
            exp = np.stack([e[o] for e in expected])
            if not _allclose(res, exp, 1e-5, 1e-8):
                raise GradcheckError(_batched_msg(j, j, res, exp, forward=True))
    return True


def _test_backward_mul_by_grad_output(outputs, inputs, masked):
    diff = [inputs[i] for i in _diff_inputs(inputs)]
    if not diff:
        raise GradcheckError("no Tensors requiring grad found in input")
    grads = _grad(list(outputs), diff, [_zeros_like(o) for o in outputs], allow_unused=True)
    for gi, di in zip(grads, diff):
        if gi is None:
            continue
        g = _np(gi)
        if (not np.allclose(g, 0.0)) if masked else bool(np.any(g != 0)):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype != di.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi.device != di.device:
            raise GradcheckError("grad is incorrect device")
        if gi.size() != di.size():
            raise GradcheckError("grad is incorrect size")
    return True


def _test_undefined_backward_mode(func, outputs, inputs):
    """Backward must cope with outputs that receive no gradient: first every output gets a zero
    gradient, then (with several outputs) each output in turn is left out of the backward pass
    so its node sees no gradient for it; the input grads must be None or zero."""
    diff = [inputs[i] for i in _diff_inputs(inputs)]
    if not diff:
        raise GradcheckError("no Tensors requiring grad found in input")

    def warn_bc_breaking():
        warnings.warn("Backwards compatibility: New undefined gradient support checking feature "
                      "is enabled by default, but it may break existing callers of this "
                      "function. If this is true for you, you can call this function with "
                      '"check_undefined_grad=False" to disable the feature', stacklevel=4)

    def check(outs):
        try:
            grads = _grad(list(outs), diff, [_zeros_like(o) for o in outs], allow_unused=True)
        except RuntimeError as e:
            warn_bc_breaking()
            raise GradcheckError('Expected backward function to handle undefined output grads. '
                                 'Please look at "Notes about undefined output gradients" in '
                                 '"tools/autograd/derivatives.yaml"') from e
        for gi in grads:
            if gi is not None and bool(np.any(_np(gi) != 0)):
                warn_bc_breaking()
                raise GradcheckError(
                    "Expected all input grads to be undefined or zero when all output grads "
                    'are undefined or zero. Please look at "Notes about undefined output '
                    'gradients" in "tools/autograd/derivatives.yaml"')

    check(_differentiable_outputs(func(*inputs)))
    if len(outputs) > 1:
        for undef in range(len(outputs)):
            outs = _differentiable_outputs(func(*inputs))
            check([o for k, o in enumerate(outs) if k != undef])
    return True


# --- public API ----------------------------------------------------------------------------------

def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    """Mirrors ``torch.autograd.gradcheck``: compare gradients from ``autograd.grad`` with
    central finite differences, w.r.t. the inputs that require grad (use float64 inputs).

    Args:
        func: takes Tensor inputs and returns a Tensor or a tuple of Tensors.
        inputs: a Tensor or a tuple of Tensors (and other values passed through).
        eps: finite-difference step. atol, rtol: ``allclose`` tolerances.
        raise_exception: raise :class:`GradcheckError` on failure (else return False).
        nondet_tol: how far two identical backward passes may differ.
        check_undefined_grad: check that backward copes with outputs receiving no gradient.
        check_grad_dtypes: check that each gradient has its input's dtype.
        check_batched_grad: check a vmapped backward against separate ones.
        check_batched_forward_grad: the same for forward-mode products.
        check_forward_ad: check ``J v`` (double-backward trick) against finite differences.
        check_backward_ad: check ``v^T J`` from ``autograd.grad`` against finite differences.
        fast_mode: compare one random projection ``v^T J u`` instead of the whole jacobian.
        masked: sparse semantics in torch; torchlike tensors are dense, where it only makes
            the "backward multiplied by grad_output" check use ``allclose``.

    Returns:
        True if every check passes.

    Example:
        >>> x = torchlike.randn(3, dtype=torchlike.float64, requires_grad=True)
        >>> gradcheck(torchlike.sin, (x,))
        True
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad "
                             "to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be "
                             "True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires "
                             "check_forward_ad to be True")
    try:
        with _x64.on():
            return _gradcheck_helper(func, inputs, eps, atol, rtol, nondet_tol,
                                     check_undefined_grad, check_grad_dtypes, check_batched_grad,
                                     check_batched_forward_grad, check_forward_ad,
                                     check_backward_ad, fast_mode, masked)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _gradcheck_helper(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
                      check_grad_dtypes, check_batched_grad, check_batched_forward_grad,
                      check_forward_ad, check_backward_ad, fast_mode, masked):
    tupled_inputs = _as_tuple(inputs)
    _check_inputs(tupled_inputs)
    func_out = func(*tupled_inputs)
    _check_outputs(func_out)
    outputs = _differentiable_outputs(func_out)
    check = _fast_gradcheck if fast_mode else _slow_gradcheck
    args = (func, func_out, tupled_inputs, outputs, eps, rtol, atol, check_grad_dtypes,
            nondet_tol)
    if check_backward_ad:
        check(*args)
    if check_forward_ad:
        check(*args, use_forward_ad=True)
    if check_batched_forward_grad:
        _test_batched_grad_forward_ad(func, tupled_inputs)
    if not check_backward_ad:
        return True
    if check_batched_grad:
        for i, o in enumerate(outputs):
            _test_batched_grad(tupled_inputs, o, i)
    _test_backward_mul_by_grad_output(outputs, tupled_inputs, masked)
    if check_undefined_grad:
        _test_undefined_backward_mode(func, outputs, tupled_inputs)
    return True


@_x64.scoped
def _random_grad_output(x, rng, noncontiguous):
    """Uniform [-1, 1) values shaped like ``x`` that require grad (PyTorch's make_tensor);
    with ``noncontiguous`` a strided view into a buffer twice as wide."""
    import jax.numpy as jnp
    dtype = x._value().dtype if _is_float(x) else jnp.float64
    shape = tuple(x.shape)
    if not noncontiguous or x.numel() <= 1:
        vals = rng.uniform(-1, 1, shape)
        return _Tensor()._wrap(jnp.asarray(vals, dtype)).requires_grad_()
    wide = shape[:-1] + (shape[-1] * 2,)
    buf = _Tensor()._wrap(jnp.asarray(rng.uniform(-1, 1, wide), dtype))
    view = buf[(slice(None),) * (len(shape) - 1) + (slice(None, None, 2),)]
    return view.requires_grad_()


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """Mirrors ``torch.autograd.gradgradcheck``: gradcheck of the map
    ``(inputs, grad_outputs) -> autograd.grad(func(inputs), inputs, grad_outputs,
    create_graph=True)``, i.e. of second derivatives.

    Args:
        func, inputs, eps, atol, rtol, raise_exception, nondet_tol, check_undefined_grad,
        check_grad_dtypes, check_batched_grad, fast_mode, masked: as in :func:`gradcheck`.
        grad_outputs: cotangents for the outputs; random ones in [-1, 1) when None.
        gen_non_contig_grad_outputs: make the random cotangents non-contiguous views.
        check_fwd_over_rev: check the second derivatives with forward-mode products.
        check_rev_over_rev: check them with reverse mode (backward of backward).

    Returns:
        True if every check passes.
    """
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev "
                             "to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev to "
                             "be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_batched_grad=True requires check_rev_over_rev to be "
                             "True")
    tupled_inputs = _as_tuple(inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(3)
        outputs = _differentiable_outputs(func(*tupled_inputs))
        tupled_grad_outputs = tuple(_random_grad_output(x, rng, gen_non_contig_grad_outputs)
                                    for x in outputs)
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)
    num_outputs = len(tupled_grad_outputs)
    Tensor = _Tensor()
    diff_input_args_indices = {i for i, x in enumerate(tupled_inputs)
                               if isinstance(x, Tensor) and x.requires_grad}
    diff_grad_output_indices = {i for i, x in enumerate(tupled_grad_outputs) if x.requires_grad}

    def new_func(*args):
        input_args = tuple(x.requires_grad_() if i in diff_input_args_indices else x
                           for i, x in enumerate(args[:-num_outputs]))
        outputs = _differentiable_outputs(func(*input_args))
        grad_outputs = tuple(x.requires_grad_() if i in diff_grad_output_indices else x
                             for i, x in enumerate(args[-num_outputs:]))
        diff_input_args = tuple(x for i, x in enumerate(input_args)
                                if i in diff_input_args_indices)
        grad_inputs = _grad(outputs, diff_input_args, grad_outputs, create_graph=True,
                            allow_unused=True)
        return tuple(g for g in grad_inputs if g is not None)

    return gradcheck(new_func, tupled_inputs + tupled_grad_outputs, eps=eps, atol=atol,
                     rtol=rtol, raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     fast_mode=fast_mode, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev, masked=masked)
