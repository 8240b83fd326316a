"""`jax.scipy.stats.betabinom`."""
from ... import numpy as jnp
from ._dist import NAN, NEG_INF, inexact
from ..special import betaln

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, a, b, loc=0):
    k, n, a, b, loc = inexact(k, n, a, b, loc)
    y = jnp.floor(k) - loc
    combiln = -(jnp.log1p(n) + betaln(n - y + 1, y + 1))
    log_probs = combiln + betaln(y + a, n - y + b) - betaln(a, b)
    log_probs = jnp.where((y == 0) & (n == 0), 0.0, log_probs)
    log_probs = jnp.where((y < -loc) | (y > n) | (y + a <= 0), NEG_INF, log_probs)
    return jnp.where((n < 0) | (a <= 0) | (b <= 0), NAN, log_probs)


def pmf(k, n, a, b, loc=0):
    return jnp.exp(logpmf(k, n, a, b, loc))
