"""Checks of random samples against their distribution, shared by the tests that draw.

Every bound is Z standard errors of the sample at hand: far from flaky (draws use fixed seeds
or large samples) yet tight enough at large n to see a rate or a scale a few percent off.
"""
import math

import numpy as np

Z = 6.0          # standard errors allowed


def check_moments(x, mean, var, mu4, what):
    """Sample mean and variance within Z standard errors (of a sample of x.size); the variance
    also allows for its second-order term (the squared error of the mean).  ``mu4`` is the
    distribution's fourth central moment."""
    x = np.asarray(x.numpy() if hasattr(x, "numpy") else x, np.float64).ravel()
    n = x.size
    assert abs(x.mean() - mean) <= Z * math.sqrt(var / n), (what, "mean", x.mean(), mean)
    var_tol = Z * math.sqrt((mu4 - var * var) / n) + Z * Z * var / n
    assert abs(x.var() - var) <= var_tol, (what, "var", x.var(), var)


def check_frequencies(freq, p, n, what):
    """Observed frequencies ``freq`` of events of probabilities ``p`` (arrays alike), each over
    ``n`` independent trials, within Z standard errors."""
    freq, p = np.asarray(freq, np.float64), np.asarray(p, np.float64)
    tol = Z * np.sqrt(p * (1 - p) / n) + 1e-12
    assert np.all(np.abs(freq - p) <= tol), (what, "frequencies", freq, p, tol)
