"""Bessel and Airy functions of ``torchlike.special`` as pure jnp functions of one array.

NOTE [ bessel functions ]
jax has i0 / i1 but none of J0, J1, Y0, Y1, K0, K1 or Ai; these are computed here from their
classical expansions, each where it converges to full precision, in the input's dtype:

- J0, J1, Y0, Y1: the power series for x <= 2; Miller's backward recurrence on (2, 25] (run
  J_k down from k = 80, normalised by J_0 + 2 sum J_2k = 1, with Y from Neumann's series in the
  J_2k and J_2k+1); Hankel's asymptotic expansion (40 terms) above 25.  J0 is even, J1 odd, Y0
  and Y1 are NaN for x < 0 and -inf at 0.
- K0, K1 (and e^x K): the series in I0, I1 for x <= 1.5; above, the integral
  ``e^x K_nu(x) = int_0^inf exp(-x (cosh t - 1)) cosh(nu t) dt`` substituted
  ``u = sqrt(2x) sinh(t / 2)`` (a Gaussian in u) and summed by the trapezoidal rule, which
  converges geometrically for such integrands.
- Ai: ``Ai(x) = Im(w int_0^inf exp(-r^3/3 - x r w) dr) / pi`` (``w = e^{i pi/3}``, the
  integral along the ray where the integrand decays) by Gauss-Legendre quadrature on
  -8 < x < 2; ``Ai(x) = sqrt(x/3) K_{1/3}(2/3 x^{3/2}) / pi`` by the trapezoidal rule above;
  the oscillatory asymptotic expansion at or below -8.

Each agrees with mpmath to a few units of the last place in float64 on the tested ranges;
PyTorch's (Cephes-based) float64 kernels are off by up to ~1e-8 (relative) in parts of them
(J0 near x = 8, Ai near x = -3), which bounds how closely the two can agree.  PyTorch records no
derivative for any of them.
"""
import math

import jax
import jax.numpy as jnp
import numpy as np

_EULER = 0.57721566490153286061
_SERIES_TERMS = 24
_MILLER_START = 80
_HANKEL_TERMS = 40


def _series_jy(x):
    """J0, J1, Y0, Y1 from their power series (0 < x <= 2)."""
    q = -(x * x) / 4
    t0, t1 = jnp.ones_like(x), x / 2
    j0, j1, s0 = t0, t1, jnp.zeros_like(x)
    h, psi1, psi2 = 0.0, -_EULER, 1 - _EULER        # H_k, psi(k + 1), psi(k + 2)
    s1 = (psi1 + psi2) * t1
    for k in range(1, _SERIES_TERMS):
        t0 = t0 * q / (k * k)
        t1 = t1 * q / (k * (k + 1))
        h, psi1, psi2 = h + 1 / k, psi1 + 1 / k, psi2 + 1 / (k + 1)
        j0, j1 = j0 + t0, j1 + t1
        s0, s1 = s0 - h * t0, s1 + (psi1 + psi2) * t1
    log = jnp.log(x / 2)
    y0 = (2 / math.pi) * ((log + _EULER) * j0 + s0)
    y1 = -2 / (math.pi * x) + (2 / math.pi) * log * j1 - s1 / math.pi
    return j0, j1, y0, y1


def _miller_weights():
    """Per index m of J_m: its weight in the normalisation sum, in Neumann's series for Y0
    (sum_m (-1)^m J_2m / m) and in the series for Y1 (sum_m (-1)^m (J_2m-1 - J_2m+1) / m)."""
    n = _MILLER_START
    norm, y0, y1 = np.zeros(n), np.zeros(n), np.zeros(n)
    norm[0] = 1
    for m in range(1, n):
        if m % 2 == 0:
            norm[m] = 2
            y0[m] = (-1) ** (m // 2) / (m // 2)
        else:
            i = (m - 1) // 2        # m = 2i + 1 appears in term i (as J_2i+1) and i + 1 (J_2i+1)
            y1[m] = (-(-1) ** i / i if i else 0) + (-1) ** (i + 1) / (i + 1)
    return norm, y0, y1


_MILLER = _miller_weights()


def _miller_jy(x):
    """J0, J1, Y0, Y1 by Miller's backward recurrence (2 < x <= 25)."""
    big = 1e150 if x.dtype == jnp.float64 else 1e18
    norm, w0, w1 = (jnp.asarray(w, x.dtype) for w in _MILLER)
    zero = jnp.zeros_like(x)

    def step(i, carry):
        above, cur, s, t0, t1, j1 = carry       # J_{k+1}, J_k (unnormalised), the sums
        k = _MILLER_START - i
        new = (2 * k / x) * cur - above         # J_{k-1}
        m = k - 1
        s, t0, t1 = s + norm[m] * new, t0 + w0[m] * new, t1 + w1[m] * new
        j1 = jnp.where(m == 1, new, j1)
        scale = jnp.where(jnp.abs(new) > big, 1 / big, 1).astype(x.dtype)
        return cur * scale, new * scale, s * scale, t0 * scale, t1 * scale, j1 * scale

    init = (zero, zero + jnp.asarray(1e-30, x.dtype), zero, zero, zero, zero)
    _, j0, s, t0, t1, j1 = jax.lax.fori_loop(0, _MILLER_START, step, init)
    j0, j1 = j0 / s, j1 / s
    log = jnp.log(x / 2) + _EULER
    y0 = (2 / math.pi) * (log * j0 - 2 * t0 / s)
    y1 = -(2 / math.pi) * (j0 / x - log * j1 - t1 / s)
    return j0, j1, y0, y1


def _hankel_jy(x, n):
    """J_n, Y_n (n = 0, 1) from Hankel's asymptotic expansion (x > 25)."""
    mu = 4.0 * n * n
    p, q, term = jnp.zeros_like(x), jnp.zeros_like(x), jnp.ones_like(x)
    for k in range(_HANKEL_TERMS):
        if k:
            term = term * ((mu - (2 * k - 1) ** 2) / (8 * k)) / x
        sign = (-1) ** (k // 2)
        if k % 2:
            q = q + sign * term
        else:
            p = p + sign * term
    c, s = jnp.cos(x), jnp.sin(x)
    r = math.sqrt(0.5)                          # cos / sin of x - (n / 2 + 1 / 4) pi
    cos_chi, sin_chi = ((c + s) * r, (s - c) * r) if n == 0 else ((s - c) * r, -(s + c) * r)
    f = jnp.sqrt(2 / (math.pi * x))
    return f * (p * cos_chi - q * sin_chi), f * (p * sin_chi + q * cos_chi)


def _jy(x):
    """J0, J1, Y0, Y1 at x >= 0."""
    small, large = x <= 2, x > 25
    series = _series_jy(jnp.where(small, x, 1))
    miller = _miller_jy(jnp.where(small | large, 3, x))
    xl = jnp.where(large, x, 30)
    (hj0, hy0), (hj1, hy1) = _hankel_jy(xl, 0), _hankel_jy(xl, 1)
    return tuple(jnp.where(small, s, jnp.where(large, h, m))
                 for s, m, h in zip(series, miller, (hj0, hj1, hy0, hy1)))


def bessel_j0(x):
    return _jy(jnp.abs(x))[0]


def bessel_j1(x):
    j1 = _jy(jnp.abs(x))[1]
    return jnp.where(x < 0, -j1, j1)


def _y(x, n):
    y = _jy(jnp.where(x > 0, x, 1))[2 + n]
    return jnp.where(x == 0, -jnp.inf, jnp.where(x > 0, y, jnp.nan)).astype(x.dtype)


def bessel_y0(x):
    return _y(x, 0)


def bessel_y1(x):
    return _y(x, 1)


# --- K0, K1 -------------------------------------------------------------------------------------

def _series_k(x):
    """K0, K1 from their series in the I0, I1 terms (0 < x <= 1.5)."""
    q = x * x / 4
    t0, t1 = jnp.ones_like(x), x / 2
    i1, s0 = t1, jnp.zeros_like(x)
    i0 = t0
    h, psi1, psi2 = 0.0, -_EULER, 1 - _EULER
    s1 = (psi1 + psi2) * t1
    for k in range(1, _SERIES_TERMS):
        t0 = t0 * q / (k * k)
        t1 = t1 * q / (k * (k + 1))
        h, psi1, psi2 = h + 1 / k, psi1 + 1 / k, psi2 + 1 / (k + 1)
        i0, i1 = i0 + t0, i1 + t1
        s0, s1 = s0 + h * t0, s1 + (psi1 + psi2) * t1
    log = jnp.log(x / 2)
    return -(log + _EULER) * i0 + s0, 1 / x + log * i1 - s1 / 2


_STEP = 0.25
_NODES = np.arange(0, 6.5 + _STEP / 2, _STEP)     # exp(-u^2) < 1e-18 past the last
_WEIGHTS = np.where(_NODES == 0, 0.5, 1.0) * _STEP * np.exp(-_NODES ** 2)


def _scaled_k_integral(x, nu_of_t):
    """``e^x K_nu(x)`` by the trapezoidal rule in ``u = sqrt(2x) sinh(t / 2)`` (x > 1.5):
    ``sqrt(2 / x) int_0^inf exp(-u^2) cosh(nu t) / sqrt(1 + u^2 / (2x)) du``."""
    u, w = jnp.asarray(_NODES, x.dtype), jnp.asarray(_WEIGHTS, x.dtype)
    xx = x[..., None]
    stretch = jnp.sqrt(1 + u * u / (2 * xx))
    return jnp.sqrt(2 / x) * jnp.sum(w * nu_of_t(u, xx) / stretch, -1)


def _k(x, n, scaled):
    small = x <= 1.5
    xs = jnp.where(small & (x > 0), x, 1)
    k = _series_k(xs)[n]
    k = k * jnp.exp(xs) if scaled else k
    xl = jnp.where(small, 2, x)
    cosh = ((lambda u, xx: 1) if n == 0 else (lambda u, xx: 1 + u * u / xx))  # cosh t
    kl = _scaled_k_integral(xl, cosh)
    kl = kl if scaled else kl * jnp.exp(-xl)
    out = jnp.where(small, k, kl)
    return jnp.where(x == 0, jnp.inf, jnp.where(x < 0, jnp.nan, out)).astype(x.dtype)


def modified_bessel_k0(x):
    return _k(x, 0, False)


def modified_bessel_k1(x):
    return _k(x, 1, False)


def scaled_modified_bessel_k0(x):
    return _k(x, 0, True)


def scaled_modified_bessel_k1(x):
    return _k(x, 1, True)


# --- Ai -----------------------------------------------------------------------------------------

def _ray_rule():
    """Gauss-Legendre nodes and weights on [0, 8], four panels of 32."""
    t, w = np.polynomial.legendre.leggauss(32)
    edges = np.linspace(0, 8, 5)
    nodes = np.concatenate([(a + b) / 2 + (b - a) / 2 * t for a, b in zip(edges, edges[1:])])
    return nodes, np.concatenate([(b - a) / 2 * w for a, b in zip(edges, edges[1:])])


_RAY_NODES, _RAY_WEIGHTS = _ray_rule()


def _airy_ray(x):
    """Ai(x) = Im(w int_0^inf exp(-r^3 / 3 - x r w) dr) / pi, w = e^{i pi / 3}."""
    r, w = jnp.asarray(_RAY_NODES, x.dtype), jnp.asarray(_RAY_WEIGHTS, x.dtype)
    xx = x[..., None]
    phase = -xx * r * (math.sqrt(3) / 2)
    val = jnp.exp(-r ** 3 / 3 - xx * r / 2) * (math.sqrt(3) / 2 * jnp.cos(phase)
                                               + 0.5 * jnp.sin(phase))
    return jnp.sum(w * val, -1) / math.pi


def _airy_k(x):
    """Ai(x) = sqrt(x / 3) K_{1/3}(zeta) / pi, zeta = 2/3 x^{3/2} (x >= 2)."""
    zeta = 2 / 3 * x * jnp.sqrt(x)

    def cosh_third(u, z):   # cosh(t / 3), t = 2 asinh(u / sqrt(2 zeta))
        return jnp.cosh(2 / 3 * jnp.arcsinh(u / jnp.sqrt(2 * z)))
    return jnp.sqrt(x / 3) / math.pi * jnp.exp(-zeta) * _scaled_k_integral(zeta, cosh_third)


_AIRY_TERMS = 12


def _airy_coefficients():
    """u_k = (2k+1)(2k+3)...(6k-1) / (216^k k!) of the asymptotic expansion."""
    u = [1.0]
    for k in range(1, 2 * _AIRY_TERMS):
        u.append(u[-1] * (6 * k - 5) * (6 * k - 3) * (6 * k - 1) / ((2 * k - 1) * 216 * k))
    return u


_AIRY_U = _airy_coefficients()


def _airy_negative(x):
    """Ai(-z) ~ (sin(zeta + pi/4) P - cos(zeta + pi/4) Q) / (sqrt(pi) z^{1/4}) (x <= -8)."""
    z = -x
    zeta = 2 / 3 * z * jnp.sqrt(z)
    inv = 1 / zeta
    p, q, power = jnp.zeros_like(x), jnp.zeros_like(x), jnp.ones_like(x)
    for k, u in enumerate(_AIRY_U):
        sign = (-1) ** (k // 2)
        if k % 2:
            q = q + sign * u * power
        else:
            p = p + sign * u * power
        power = power * inv
    phase = zeta + math.pi / 4
    return (jnp.sin(phase) * p - jnp.cos(phase) * q) / (math.sqrt(math.pi) * jnp.sqrt(jnp.sqrt(z)))


def airy_ai(x):
    low, high = x <= -8, x >= 2
    # NOTE: the ray integral cancels terms up to ~e^(|x|^1.5 / 4) times the result for x < 0
    # (about 200 at x = -8): it runs in float64 for a float32 input.
    ray = _airy_ray(jnp.where(low | high, 0, x).astype(jnp.promote_types(x.dtype, jnp.float64)))
    out = jnp.where(low, _airy_negative(jnp.where(low, x, -9)),
                    jnp.where(high, _airy_k(jnp.where(high, x, 3)), ray.astype(x.dtype)))
    return jnp.where(jnp.isinf(x), jnp.nan, out).astype(x.dtype)


def spherical_bessel_j0(x):
    """sin(x) / x: 1 at 0, 0 at +-inf."""
    safe = jnp.where((x == 0) | jnp.isinf(x), 1, x)
    return jnp.where(x == 0, 1, jnp.where(jnp.isinf(x), 0, jnp.sin(safe) / safe)).astype(x.dtype)
