"""`jax.scipy.stats.nbinom`: failures before the n-th success."""
from ... import numpy as jnp
from ._dist import NEG_INF, gammaln, inexact, xlogy

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, p, loc=0):
    k, n, p, loc = inexact(k, n, p, loc)
    y = k - loc
    comb = gammaln(y + n) - gammaln(n) - gammaln(y + 1)
    return jnp.where(k < loc, NEG_INF, comb + xlogy(n, p) + xlogy(y, 1 - p))


def pmf(k, n, p, loc=0):
    return jnp.exp(logpmf(k, n, p, loc))
