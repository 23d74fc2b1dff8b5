"""Gamma draws and PyTorch's reparameterized gradients of gamma and Dirichlet samples, as pure
jnp functions (``torch._standard_gamma_grad`` and ``torch._dirichlet_grad``; the ops are in
sampling.py)."""
import jax
import jax.numpy as jnp
import numpy as np

# NOTE [ reparameterized gamma gradients ]
# A gamma sample x ~ Gamma(alpha) moves with alpha along the quantile: dx/dalpha =
# -(d/dalpha cdf(x; alpha)) / pdf(x; alpha) at the sample drawn (implicit reparameterization).
# PyTorch evaluates that derivative with fixed approximations (ATen's standard_gamma_grad_one:
# a Taylor series for small x, a Rice saddle-point expansion for large alpha, else a bivariate
# rational fit; and dirichlet_grad_one for the Beta marginals of a Dirichlet sample).  jax's own
# gamma gradient is exact to rounding and differs from PyTorch's by up to ~1e-3 relative, so the
# same approximations are written here (``gamma_grad``, ``dirichlet_grad``) and the sample's
# gradient uses them: the same values as ``torch._standard_gamma_grad`` / ``torch._dirichlet_grad``.

def _in_float64(fn):
    """``fn`` computed in float64 when 64-bit types are on (PyTorch's CPU kernels accumulate
    these approximations in double), its result in the first argument's dtype."""
    def wrapped(*args):
        dtype = args[0].dtype
        wide = jax.dtypes.canonicalize_dtype(jnp.float64)
        return fn(*(a.astype(wide) for a in args)).astype(dtype)
    return wrapped


def _f32(v):
    """A C float literal (``0.8f``) as the double it compares as."""
    return float(np.float32(v))


def _poly(v, coefs):
    """coefs[0] + v * (coefs[1] + v * (...)), Horner's rule."""
    result = coefs[-1]
    for c in reversed(coefs[:-1]):
        result = c + v * result
    return result


_GAMMA_UV = np.array([
    [0.16009398, -0.094634809, 0.025146376, -0.0030648343,
     1, 0.32668115, 0.10406089, 0.0014179084],
    [0.53487893, 0.1298071, 0.065735949, -0.0015649758,
     0.16639465, 0.020070113, -0.0035938915, -0.00058392623],
    [0.040121004, -0.0065914022, -0.0026286047, -0.0013441777,
     0.017050642, -0.0021309326, 0.00085092367, -1.5247877e-07]])


@_in_float64
def gamma_grad(alpha, x):
    """d x / d alpha for a standard gamma sample ``x`` (NOTE [ reparameterized gamma
    gradients ])."""
    # a Taylor series of the incomplete gamma function for small x
    numer, denom = jnp.ones_like(x), alpha
    s1, s2 = 1 / alpha, 1 / (alpha * alpha)
    for i in range(1, 6):
        numer = numer * (-x / i)
        denom = denom + 1
        s1, s2 = s1 + numer / denom, s2 + numer / (denom * denom)
    pow_xa = x ** alpha
    pdf = x ** (alpha - 1) * jnp.exp(-x)
    cdf_alpha = (jnp.log(x) - jax.scipy.special.digamma(alpha)) * pow_xa * s1 - pow_xa * s2
    small = -cdf_alpha / pdf
    small = jnp.where(jnp.isnan(small), 0, small)
    # a Rice saddle-point expansion for large alpha (a polynomial near the mode)
    near = (_f32(0.9) * alpha <= x) & (x <= _f32(1.1) * alpha)
    mode = ((1 + 24 * alpha * (1 + 12 * alpha))
            * (1440 * alpha * alpha + 6 * x * (53 - 120 * x) - 65 * x * x / alpha
               + alpha * (107 + 3600 * x)) / (1244160 * alpha ** 4))
    root = jnp.sqrt(8 * alpha)
    t2 = root / (alpha - x)
    t3 = (x - alpha - alpha * jnp.log(x / alpha)) ** -1.5
    t1 = (jnp.log(x / alpha) * jnp.where(x < alpha, t2 - t3, t2 + t3)
          - jnp.sqrt(2 / alpha) * (alpha + x) / ((alpha - x) * (alpha - x)))
    stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
    large = jnp.where(near, mode, -stirling * x * t1 / root)
    # a bivariate rational approximation in u = log(x / alpha), v = log(alpha)
    u, v = jnp.log(x / alpha), jnp.log(alpha)
    c = [_poly(u, list(_GAMMA_UV[:, i].astype(x.dtype))) for i in range(8)]
    rational = jnp.exp(_poly(v, c[:4]) / _poly(v, c[4:]))
    return jnp.where(x < _f32(0.8), small, jnp.where(alpha > _f32(8.0), large, rational))


def _beta_grad_alpha_small(x, alpha, beta):
    digamma = jax.scipy.special.digamma
    factor = digamma(alpha) - digamma(alpha + beta) - jnp.log(x)
    numer = jnp.ones_like(x)
    series = numer / alpha * (factor + 1 / alpha)
    for i in range(1, 11):
        numer = numer * ((i - beta) * x / i)
        series = series + numer / (alpha + i) * (factor + 1 / (alpha + i))
    result = x * (1 - x) ** -beta * series
    return jnp.where(jnp.isnan(result), 0, result)


def _beta_grad_beta_small(x, alpha, beta):
    digamma = jax.scipy.special.digamma
    factor = digamma(alpha + beta) - digamma(beta)
    numer, betas, dbetas = jnp.ones_like(x), jnp.ones_like(x), jnp.zeros_like(x)
    series = factor / alpha
    for i in range(1, 9):
        numer = numer * (-x / i)
        dbetas = dbetas * (beta - i) + betas
        betas = betas * (beta - i)
        series = series + numer / (alpha + i) * (dbetas + factor * betas)
    result = -(1 - x) ** (1 - beta) * series
    return jnp.where(jnp.isnan(result), 0, result)


def _beta_grad_alpha_mid(x, alpha, beta):
    total = alpha + beta
    mean = alpha / total
    std = jnp.sqrt(alpha * beta / (total + 1)) / total
    a2, b2 = alpha * alpha, beta * beta
    poly = 47 * x * b2 * b2 + alpha * (
        (43 + 20 * (16 + 27 * beta) * x) * b2 * beta + alpha * (
            3 * (59 + 180 * beta - 90 * x) * b2 + alpha * (
                (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (
                    8 * (1 - x) * (135 * beta - 11)))))
    near = (((1 + 12 * alpha) * (1 + 12 * beta) / (total * total)) / (1 - x) * poly
            / (12960 * a2 * alpha * b2 * (1 + 12 * total)))
    prefactor = -x / jnp.sqrt(2 * alpha * beta / total)
    stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * a2)) * (1 + 1 / (12 * beta) + 1 / (288 * b2))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    axbx = alpha * (x - 1) + beta * x
    term1 = ((2 * a2 * (x - 1) + alpha * beta * (x - 1) - x * b2)
             / (jnp.sqrt(2 * alpha / beta) * total ** 1.5 * axbx * axbx))
    term2 = 0.5 * jnp.log(alpha / (total * x))
    term3 = jnp.sqrt(8 * alpha * beta / total) / axbx
    term4 = (beta * jnp.log(beta / (total * (1 - x)))
             + alpha * jnp.log(alpha / (total * x))) ** -1.5
    far = stirling * prefactor * (term1 + term2 * (term3 + jnp.where(x < mean, term4, -term4)))
    return jnp.where((mean - 0.1 * std <= x) & (x <= mean + 0.1 * std), near, far)


_DIRICHLET_C = np.array([
    [[[1.003668233, -0.01061107488, -0.0657888334, 0.01201642863],
      [0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033],
      [-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013]],
     [[0.221950385, -0.3187676331, 0.01799915743, 0.01074823814],
      [-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057],
      [0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05]],
     [[-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565],
      [0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181],
      [0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05]]],
    [[[1, -0.02924021934, -0.04438342661, 0.007285809825],
      [0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521],
      [-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149]],
     [[0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273],
      [0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956],
      [-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05]],
     [[0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05],
      [0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05],
      [-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06]]]])


@_in_float64
def dirichlet_grad(x, alpha, total):
    """The scaled reparameterized gradient -(d/dalpha cdf(x; alpha, total - alpha)) / pdf / (1-x)
    of a Beta(alpha, total - alpha) sample ``x`` (NOTE [ reparameterized gamma gradients ])."""
    x, alpha, total = jnp.broadcast_arrays(x, alpha, total)
    beta = total - alpha
    boundary = total * x * (1 - x)
    u = jnp.log(x)
    a = jnp.log(alpha) - u
    b = jnp.log(total) - a
    p = q = jnp.zeros_like(x)
    for i, pu in enumerate((1, u, u * u)):
        for j, pa in enumerate((1, a, a * a)):
            p = p + pu * pa * _poly(b, list(_DIRICHLET_C[0, i, j].astype(x.dtype)))
            q = q + pu * pa * _poly(b, list(_DIRICHLET_C[1, i, j].astype(x.dtype)))
    digamma = jax.scipy.special.digamma
    rational = p / q * (x * (digamma(total) - digamma(alpha)) / beta)
    return jnp.where((x <= 0.5) & (boundary < 2.5), _beta_grad_alpha_small(x, alpha, beta),
                     jnp.where((x >= 0.5) & (boundary < 0.75),
                               -_beta_grad_beta_small(1 - x, beta, alpha),
                               jnp.where((alpha > 6) & (beta > 6),
                                         _beta_grad_alpha_mid(x, alpha, beta), rational)))


def log_standard_gamma(key, alpha, dtype):
    """log of a standard gamma draw per element of ``alpha`` (> 0), in ``dtype``.

    Marsaglia & Tsang's rejection sampler ("A simple method for generating gamma variables",
    2000), every element proposing in each round of one loop until all have accepted; below
    alpha = 1 a draw of alpha + 1 times U ** (1 / alpha), in log space so that small
    concentrations keep their (tiny) values.  Written out rather than ``jax.random.gamma``, whose
    per-element loops take several times longer to compile (each new shape is a compile in
    eager mode)."""
    boost = alpha < 1
    a = jnp.where(boost, alpha + 1, alpha)
    d = a - 1 / 3
    c = 1 / jnp.sqrt(9 * d)
    tiny = jnp.finfo(dtype).tiny

    def body(state):
        i, log_x, done = state
        u = jax.random.uniform(jax.random.fold_in(key, i), (3,) + a.shape, dtype, minval=tiny)
        z = jnp.sqrt(-2 * jnp.log(u[0])) * jnp.cos(2 * jnp.pi * u[1])   # Box-Muller
        v = (1 + c * z) ** 3
        log_v = jnp.log(jnp.where(v > 0, v, 1))
        accept = (v > 0) & (jnp.log(u[2]) < 0.5 * z * z + d - d * v + d * log_v)
        log_x = jnp.where(~done & accept, jnp.log(d) + log_v, log_x)
        return i + 1, log_x, done | accept

    start = (jnp.uint32(1), jnp.zeros(a.shape, dtype), jnp.zeros(a.shape, bool))
    # (each round accepts with probability > 0.95: the bound only guards against a bad alpha)
    _, log_x, _ = jax.lax.while_loop(lambda s: ~jnp.all(s[2]) & (s[0] < 1000), body, start)
    log_u = jnp.log(jax.random.uniform(jax.random.fold_in(key, 0), a.shape, dtype, minval=tiny))
    return jnp.where(boost, log_x + log_u / alpha, log_x)
