"""`jax.scipy.stats.binom`."""
from ... import numpy as jnp
from ._dist import NEG_INF, gammaln, inexact, xlog1py, xlogy

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, p, loc=0):
    k, n, p, loc = inexact(k, n, p, loc)
    y = k - loc
    comb = gammaln(n + 1) - (gammaln(y + 1) + gammaln(n - y + 1))
    linear = xlogy(y, p) + xlog1py(n - y, -p)
    log_probs = jnp.where(((y == 0) & (n == 0)) | (linear == 0), 0.0, comb + linear)
    return jnp.where((k >= loc) & (k < loc + n + 1), log_probs, NEG_INF)


def pmf(k, n, p, loc=0):
    return jnp.exp(logpmf(k, n, p, loc))
