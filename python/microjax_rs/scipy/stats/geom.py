"""`jax.scipy.stats.geom`: trials up to the first success, k >= 1."""
from ... import numpy as jnp
from ._dist import NEG_INF, inexact, xlog1py

__all__ = ["logpmf", "pmf"]


def logpmf(k, p, loc=0):
    k, p, loc = inexact(k, p, loc)
    x = k - loc
    return jnp.where(x <= 0, NEG_INF, xlog1py(x - 1, -p) + jnp.log(p))


def pmf(k, p, loc=0):
    return jnp.exp(logpmf(k, p, loc))
