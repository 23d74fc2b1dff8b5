"""The orthogonal polynomials of ``torchlike.special`` as pure jnp functions of ``(x, n)``.

NOTE [ orthogonal polynomials ]
PyTorch evaluates ``p_n(x)`` elementwise: the degree ``n`` (a tensor or a number) is first
converted to the computation dtype and then truncated to an integer (2.7 is 2, -0.5 is 0, NaN is
negative); a negative degree gives 0.  Degrees 0 and 1 are the closed forms, the endpoints of
the orthogonality interval are closed forms too, Chebyshev polynomials of a high enough degree
inside (-1, 1) use their trigonometric form (``T_n(cos t) = cos(n t)``; above degree 6 for T and
the shifted T, U and V, above 8 for U, V and W, above 4 for the shifted W, as PyTorch's kernels
switch), and everything else runs the three-term recurrence up to ``n``.  The recurrence here runs up to the largest degree of the
batch, keeping each element's value at its own degree.  None of them is differentiable in
PyTorch: their results never require grad.
"""
import jax
import jax.numpy as jnp


def _degree(n, dtype):
    """The integer degree PyTorch evaluates: the truncation of ``n`` (NaN counts as -1)."""
    n = jnp.asarray(n, dtype)
    return jnp.where(jnp.isnan(n), -1, jnp.trunc(jnp.where(jnp.isnan(n), 0, n))).astype(jnp.int64)


def _recurrence(x, n, p1, step):
    """``p_n(x)`` from ``p_0 = 1``, ``p_1`` and ``p_{k+1} = step(k, x, p_{k-1}, p_k)``; 0 for a
    negative ``n``."""
    x, n = jnp.broadcast_arrays(x, n)
    one = jnp.ones_like(x)
    init = jnp.where(n == 0, one, jnp.where(n == 1, p1, jnp.zeros_like(x)))

    def body(carry):
        k, prev, cur, out = carry
        nxt = step(k.astype(x.dtype), x, prev, cur)
        return k + 1, cur, nxt, jnp.where(n == k + 1, nxt, out)

    top = jnp.max(n, initial=1)
    return jax.lax.while_loop(lambda c: c[0] < top, body,
                              (jnp.asarray(1, jnp.int64), one, p1 * one, init))[3]


def _chebyshev_step(k, x, prev, cur):
    return 2 * x * cur - prev


# kind: (p_1(y), value at y = 1, value at y = -1, trigonometric form in theta = acos(y))
_CHEBYSHEV = {
    "t": (lambda y: y, lambda n: 1,
          lambda n: jnp.where(n % 2 == 0, 1, -1),
          lambda t, n: jnp.cos(n * t)),
    "u": (lambda y: 2 * y, lambda n: n + 1,
          lambda n: jnp.where(n % 2 == 0, n + 1, -(n + 1)),
          lambda t, n: jnp.sin((n + 1) * t) / jnp.sin(t)),
    "v": (lambda y: 2 * y - 1, lambda n: 1,
          lambda n: jnp.where(n % 2 == 0, 2 * n + 1, -(2 * n + 1)),
          lambda t, n: jnp.cos((n + 0.5) * t) / jnp.cos(t / 2)),
    "w": (lambda y: 2 * y + 1, lambda n: 2 * n + 1,
          lambda n: jnp.where(n % 2 == 0, 1, -1),
          lambda t, n: jnp.sin((n + 0.5) * t) / jnp.sin(t / 2)),
}


_TRIG_ABOVE = {("t", False): 6, ("u", False): 8, ("v", False): 8, ("w", False): 8,
               ("t", True): 6, ("u", True): 6, ("v", True): 6, ("w", True): 4}


def chebyshev(kind, shifted):
    """The Chebyshev polynomial of the first ('t'), second ('u'), third ('v') or fourth ('w')
    kind, of ``2x - 1`` when ``shifted``: a function ``(x, n)``."""
    p1, at_one, at_minus_one, trig = _CHEBYSHEV[kind]

    def fn(x, n):
        n = _degree(n, x.dtype)
        y = 2 * x - 1 if shifted else x
        rec = _recurrence(y, n, p1(y), _chebyshev_step)
        inside = (n > _TRIG_ABOVE[kind, shifted]) & (jnp.abs(y) < 1)
        theta = jnp.arccos(jnp.where(inside, y, 0))
        nf = n.astype(x.dtype)
        out = jnp.where(inside, trig(theta, nf), rec)
        out = jnp.where(y == 1, at_one(nf), jnp.where(y == -1, at_minus_one(nf), out))
        return jnp.where(n < 0, 0, out).astype(x.dtype)
    return fn


def _endpoint_fn(p1, step, special=None):
    def fn(x, n):
        n = _degree(n, x.dtype)
        out = _recurrence(x, n, p1(x), step)
        if special is not None:
            out = special(x, n, out)
        return jnp.where(n < 0, 0, out).astype(x.dtype)
    return fn


# H_{k+1} = 2x H_k - 2k H_{k-1};  He_{k+1} = x He_k - k He_{k-1}
hermite_h = _endpoint_fn(lambda x: 2 * x, lambda k, x, p, q: 2 * x * q - 2 * k * p)
hermite_he = _endpoint_fn(lambda x: x, lambda k, x, p, q: x * q - k * p)
# (k + 1) L_{k+1} = (2k + 1 - x) L_k - k L_{k-1};  L_n(0) = 1
laguerre_l = _endpoint_fn(
    lambda x: 1 - x, lambda k, x, p, q: ((2 * k + 1 - x) * q - k * p) / (k + 1),
    lambda x, n, out: jnp.where((x == 0) & (n >= 0), 1, out))
# (k + 1) P_{k+1} = (2k + 1) x P_k - k P_{k-1};  P_n(1) = 1, P_n(-1) = (-1)^n
legendre_p = _endpoint_fn(
    lambda x: x, lambda k, x, p, q: ((2 * k + 1) * x * q - k * p) / (k + 1),
    lambda x, n, out: jnp.where(jnp.abs(x) == 1,
                                jnp.where((x > 0) | (n % 2 == 0), 1, -1), out))
