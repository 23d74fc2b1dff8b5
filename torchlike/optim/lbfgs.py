"""Mirrors ``torch.optim.LBFGS``.

NOTE [ LBFGS scalars ]
L-BFGS decides on the host when to stop and how far to step, so its step is a Python loop, not
one update program.  The vector maths runs on one flat array holding every parameter (complex
ones as (real, imag) pairs).  To give PyTorch's numbers, every scalar keeps the type it has in
PyTorch: a quantity PyTorch holds as a 0-d tensor (a dot product, ``t`` after interpolation,
``H_diag``, ``ro``) is a numpy scalar of the parameters' dtype here, and one it holds as a
Python number (the loss, ``lr``, the first bracket point ``0``) stays a Python number.  numpy
rounds float32 and float64 arithmetic as IEEE does (as PyTorch's kernels do) and casts a Python
number mixed with one of its scalars to the scalar's dtype (as PyTorch does with a 0-d tensor),
so float32 runs round like PyTorch's; what differs is the summation order inside dot products
and the model's own losses and gradients, by an ulp or so, which near convergence can tip a
stopping test or a line search the other way.  Scalar arithmetic neither warns nor raises on
overflow or 0/0 (``np.errstate``), as tensors' does not; the closure runs with the caller's
settings.

The vector maths runs in seven programs, each one stage's work (``_flatten``, ``_moved``,
``_pair``, ``_slope``, ``_scaled`` and the two loops' steps): each jax.numpy call on a concrete
array is a program of its own to compile, and a step written with them compiled about 35 (0.7 s
of scripts/bench_programs.py's 3.6 s curve fit).  A scalar a program takes is first cast to the
vector's dtype, as PyTorch casts a number multiplying a tensor, so that a Python ``lr`` and a
float32 ``t`` share one program.
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from .. import _precision, _x64
from .._quick import quick_program
from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad, no_grad
from .optimizer import Optimizer
from .sgd import check_lr

__all__ = ["LBFGS"]


def _host(*arrays):
    """0-d arrays as numpy scalars (NOTE [ LBFGS scalars ]), fetched together."""
    out = tuple(np.asarray(a)[()] for a in jax.device_get(arrays))
    return out if len(out) > 1 else out[0]


def _like(scalar, vector):
    """``scalar`` cast to ``vector``'s dtype, as PyTorch casts a number multiplying a tensor."""
    return np.asarray(scalar, vector.dtype)


@functools.partial(quick_program, static_argnames="missing")
def _flatten(grads, missing):
    """The gradients as one flat vector (zeros for a ``None``, whose (shape, dtype) ``missing``
    gives; complex ones as (real, imag) pairs), and its largest and summed absolute values."""
    flat = []
    for g, m in zip(grads, missing):
        if g is None:
            g = jnp.zeros(*m)
        if jnp.iscomplexobj(g):
            g = jnp.stack([g.real, g.imag], axis=-1)
        flat.append(g.reshape(-1))
    flat = jnp.concatenate(flat) if len(flat) > 1 else flat[0]
    return flat, jnp.max(jnp.abs(flat)), jnp.sum(jnp.abs(flat))


@quick_program
def _moved(values, step, update):
    """Each parameter's value plus ``step`` times its slice of the flat ``update``."""
    out, offset = [], 0
    for value in values:
        if jnp.iscomplexobj(value):
            n = 2 * value.size
            u = update[offset:offset + n].reshape(value.shape + (2,))
            new = jax.lax.complex(value.real + step * u[..., 0], value.imag + step * u[..., 1])
        else:
            n = value.size
            new = value + step * update[offset:offset + n].reshape(value.shape)
        out.append(new.astype(value.dtype))
        offset += n
    return out


@quick_program
def _scaled(v, c):
    return v * c


@functools.partial(quick_program, static_argnames="precision")
def _slope(g, d, precision):
    return jnp.dot(g, d, precision=precision), jnp.max(jnp.abs(d))


def _along(g, d):
    """The slope ``g . d`` along the direction ``d`` and ``max |d|``, as host scalars."""
    return _host(*_slope(g, d, precision=_precision.matmul()))


@functools.partial(quick_program, static_argnames="precision")
def _pair(flat_grad, prev_flat_grad, d, t, precision):
    """The curvature pair ``y = g - g_prev``, ``s = t d`` with ``y . s`` and ``y . y``."""
    y = flat_grad - prev_flat_grad
    s = d * t
    return y, s, jnp.dot(y, s, precision=precision), jnp.dot(y, y, precision=precision)


@functools.partial(quick_program, static_argnames="precision")
def _backward_pass(q, s, y, rho, precision):
    """One step of the first L-BFGS loop: ``al = rho s.q``, ``q -= al y``."""
    al = jnp.dot(s, q, precision=precision) * rho
    return al, q - al * y


@functools.partial(quick_program, static_argnames="precision")
def _forward_pass(r, s, y, rho, al, precision):
    """One step of the second L-BFGS loop: ``be = rho y.r``, ``r += (al - be) s``."""
    be = jnp.dot(y, r, precision=precision) * rho
    return r + (al - be) * s


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """Minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2, clamped to
    ``bounds`` (default: the interval between x1 and x2); the bounds' midpoint when the cubic
    has no real minimiser (Nocedal & Wright, eq. 3.59)."""
    if bounds is not None:
        lo, hi = bounds
    else:
        lo, hi = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            x = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            x = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(x, lo), hi)
    return (lo + hi) / 2.0


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """Line search for a step ``t`` along ``d`` meeting the strong Wolfe conditions (Nocedal &
    Wright, Algorithms 3.5 and 3.6): bracket, then zoom with safeguarded cubic interpolation.

    Returns ``(f_new, g_new, t, evaluations)``; ``obj_func(x, t, d)`` gives ``(f, flat_grad)``
    at ``x + t d``.
    """
    f_new, g_new = obj_func(x, t, d)
    evals = 1
    gtd_new, d_norm = _along(g_new, d)

    # bracketing phase: grow t until an interval must contain an acceptable point
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new], [gtd_prev, gtd_new]
            break
        # extrapolate: the cubic's minimiser, kept within [t + 0.01 (t - t_prev), 10 t]
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        t_prev, t = t, _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                                          bounds=(min_step, max_step))
        f_prev, g_prev, gtd_prev = f_new, g_new, gtd_new
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = _along(g_new, d)[0]
        ls_iter += 1

    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # zoom phase: shrink the bracket until its low point satisfies the conditions
    insuf_progress = False
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0],
                               bracket[1], bracket_f[1], bracket_gtd[1])
        # a trial too close to an end of the bracket makes little progress: after two such
        # trials in a row (or one outside the bracket), move it 10% of the width inside
        b_max, b_min = max(bracket), min(bracket)
        eps = 0.1 * (b_max - b_min)
        if min(b_max - t, t - b_min) < eps:
            if insuf_progress or t >= b_max or t <= b_min:
                t = b_max - eps if abs(t - b_max) < abs(t - b_min) else b_min + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False

        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = _along(g_new, d)[0]
        ls_iter += 1

        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low]:
            # not a sufficient decrease, or not below the low end: t is the new high end
            bracket[high], bracket_f[high] = t, f_new
            bracket_g[high], bracket_gtd[high] = g_new, gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
                bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
            bracket[low], bracket_f[low] = t, f_new
            bracket_g[low], bracket_gtd[low] = g_new, gtd_new

    return bracket_f[low], bracket_g[low], bracket[low], evals


def _array(v):
    """A state value as the step works on it (NOTE [ LBFGS scalars ])."""
    if isinstance(v, Tensor):
        return _host(v._value()) if v.ndim == 0 else v._value()
    if isinstance(v, list):
        return [_array(x) for x in v]
    return v


def _tensor(v):
    """A step value as the state keeps it: arrays as Tensors, as PyTorch keeps tensors."""
    if isinstance(v, jax.Array):
        return Tensor._wrap(v)
    if isinstance(v, np.generic):
        return Tensor._wrap(jax.device_put(v))
    if isinstance(v, list):
        return [_tensor(x) for x in v]
    return v


class LBFGS(Optimizer):
    r"""Mirrors ``torch.optim.LBFGS``: limited-memory BFGS (Nocedal, 1980; after Schmidt's
    minFunc), optionally with a strong-Wolfe line search.

    Each ``step(closure)`` runs up to ``max_iter`` iterations of

    .. math::
        d_k = -H_k \nabla f(x_k), \qquad x_{k+1} = x_k + t_k d_k

    where :math:`H_k` is the inverse-Hessian estimate built by the two-loop recursion from the
    last ``history_size`` pairs :math:`s_i = x_{i+1} - x_i`, :math:`y_i = \nabla f(x_{i+1}) -
    \nabla f(x_i)` (a pair is kept only when :math:`y_i^\top s_i > 10^{-10}`) and scaled by
    :math:`H_0 = s^\top y / y^\top y`.  The step :math:`t_k` is ``lr`` (the first iteration uses
    :math:`\min(1, 1/\|g\|_1)\,\mathrm{lr}`), or is found by a strong-Wolfe line search.  The
    loop stops early when the largest gradient entry is at most ``tolerance_grad``, when the
    step or the loss changes by less than ``tolerance_change``, or after ``max_eval`` closure
    evaluations.

    All parameters form one group; the state lives in ``state[params[0]]`` (``func_evals``,
    ``n_iter``, ``d``, ``t``, ``old_dirs``, ``old_stps``, ``ro``, ``H_diag``,
    ``prev_flat_grad``, ``prev_loss``, ``al``), so ``state_dict()`` has PyTorch's layout.

    Args:
        params: the parameters (one group only).
        lr: learning rate (default 1).
        max_iter: iterations per ``step`` (default 20).
        max_eval: closure evaluations per ``step`` (default ``max_iter * 5 // 4``).
        tolerance_grad: stop when ``max |grad| <= tolerance_grad`` (default 1e-7).
        tolerance_change: stop when the loss or the step changes less (default 1e-9).
        history_size: number of (s, y) pairs kept (default 100).
        line_search_fn: ``None`` or ``'strong_wolfe'``.

    Example::

        >>> opt = torchlike.optim.LBFGS(model.parameters(), line_search_fn="strong_wolfe")
        >>> def closure():
        ...     opt.zero_grad()
        ...     loss = loss_fn(model(x), y)
        ...     loss.backward()
        ...     return loss
        >>> opt.step(closure)
    """

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval,
                    "tolerance_grad": tolerance_grad, "tolerance_change": tolerance_change,
                    "history_size": history_size, "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        self._numel_cache = None

    def _numel(self):
        if self._numel_cache is None:
            self._numel_cache = sum(2 * p.numel() if p.is_complex() else p.numel()
                                    for p in self._params)
        return self._numel_cache

    def _gather_flat_grad(self):
        """The flat gradient and its largest absolute entry (a host scalar); its absolute sum
        (a 0-d array) third."""
        grads = tuple(None if p.grad is None else p.grad._value() for p in self._params)
        missing = tuple((p.shape, p._value().dtype) if g is None else None
                        for p, g in zip(self._params, grads))
        flat, max_abs, abs_sum = _flatten(grads, missing)
        return flat, _host(max_abs), abs_sum

    def _add_grad(self, step_size, update):
        """``params += step_size * update`` (``update`` flat, as from ``_gather_flat_grad``)."""
        values = [p._value() for p in self._params]
        for p, new in zip(self._params, _moved(values, _like(step_size, update), update)):
            p._write(new)

    def _directional_evaluate(self, closure, x, t, d):
        """Loss and flat gradient at ``x + t d``; the parameters are put back to ``x``."""
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()[0]
        for p, value in zip(self._params, x):
            p._write(value)
        return loss, flat_grad

    @_x64.scoped
    def step(self, closure):
        """Mirrors ``LBFGS.step``: up to ``max_iter`` L-BFGS iterations.

        Args:
            closure: re-evaluates the model (zero the gradients, compute the loss, call
                ``backward``) and returns the loss; it is called with grad enabled.

        Returns:
            The loss the first call of ``closure`` returned.
        """
        errstate = np.geterr()   # the closure's (NOTE [ LBFGS scalars ])
        with no_grad(), np.errstate(all="ignore"):
            return self._step(closure, errstate)

    def _step(self, closure, errstate):
        if len(self.param_groups) != 1:
            raise AssertionError(
                f"Expected exactly one param_group, but got {len(self.param_groups)}")

        def evaluate():
            with enable_grad(), np.errstate(**errstate):
                return closure()

        group = self.param_groups[0]
        lr = group["lr"]
        if isinstance(lr, Tensor):
            lr = _host(lr._value().reshape(()))
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = evaluate()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad, g_max, g_sum = self._gather_flat_grad()
        if g_max <= tolerance_grad:
            return orig_loss

        d, t = _array(state.get("d")), _array(state.get("t"))
        old_dirs, old_stps = _array(state.get("old_dirs")), _array(state.get("old_stps"))
        ro, H_diag = _array(state.get("ro")), _array(state.get("H_diag"))
        prev_flat_grad, prev_loss = _array(state.get("prev_flat_grad")), state.get("prev_loss")
        al = _array(state.get("al"))

        opt_cond = False
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1

            # --- direction: steepest descent first, then the two-loop recursion
            if state["n_iter"] == 1:
                d = _scaled(flat_grad, _like(-1, flat_grad))
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y, s, ys, yy = _pair(flat_grad, prev_flat_grad, d, _like(t, d),
                                     precision=_precision.matmul())
                ys = _host(ys)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / _host(yy)
                if al is None:
                    al = [None] * history_size
                    state["al"] = al
                q = _scaled(flat_grad, _like(-1, flat_grad))
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i], q = _backward_pass(q, old_stps[i], old_dirs[i], ro[i],
                                              precision=_precision.matmul())
                d = _scaled(q, _like(H_diag, q))
                for i in range(len(old_dirs)):
                    d = _forward_pass(d, old_stps[i], old_dirs[i], ro[i], al[i],
                                      precision=_precision.matmul())

            prev_flat_grad = flat_grad
            prev_loss = loss

            # --- step length
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / _host(g_sum)) * lr
            else:
                t = lr
            gtd, d_max = _along(flat_grad, d)
            if gtd > -tolerance_change:
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = [p._value() for p in self._params]
                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    lambda x, t, d: self._directional_evaluate(evaluate, x, t, d),
                    x_init, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = _along(d, flat_grad)[1] <= tolerance_grad   # max |flat_grad|
            else:
                self._add_grad(t, d)
                if n_iter != max_iter:
                    # the last iteration's loss is not needed (PyTorch skips it too: in a
                    # stochastic setting it would be a wasted evaluation)
                    loss = float(evaluate())
                    flat_grad, g_max, g_sum = self._gather_flat_grad()
                    opt_cond = g_max <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            # --- stopping tests
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            # max |d t| (rounding is monotonic, so it is max |d| times |t| rounded once)
            if d_max * abs(_like(t, d)) <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state.update({"d": _tensor(d), "t": _tensor(t), "old_dirs": _tensor(old_dirs),
                      "old_stps": _tensor(old_stps), "ro": _tensor(ro),
                      "H_diag": _tensor(H_diag), "prev_flat_grad": _tensor(prev_flat_grad),
                      "prev_loss": prev_loss})
        if al is not None:
            state["al"] = _tensor(al)
        return orig_loss
