"""`jax.scipy.stats.bernoulli`."""
from ... import numpy as jnp
from ._dist import NAN, NEG_INF, inexact, xlog1py, xlogy

__all__ = ["logpmf", "pmf", "cdf", "ppf"]


def logpmf(k, p, loc=0):
    """log P(X = k): log p at k - loc = 1, log(1 - p) at 0, -inf elsewhere."""
    k, p, loc = inexact(k, p, loc)
    x = k - loc
    log_probs = xlogy(x, p) + xlog1py(1 - x, -p)
    return jnp.where((x < 0) | (x > 1), NEG_INF, log_probs)


def pmf(k, p, loc=0):
    return jnp.exp(logpmf(k, p, loc))


def cdf(k, p):
    """P(X <= k); nan for p outside [0, 1]."""
    k, p = inexact(k, p)
    bad = jnp.isnan(k) | jnp.isnan(p) | (p < 0) | (p > 1)
    return jnp.where(bad, NAN, jnp.where(k < 0, 0.0, jnp.where(k < 1, 1 - p, 1.0)).astype(k.dtype))


def ppf(q, p):
    """The smallest k with cdf(k) >= q."""
    q, p = inexact(q, p)
    bad = jnp.isnan(q) | jnp.isnan(p) | (p < 0) | (p > 1) | (q < 0) | (q > 1)
    return jnp.where(bad, NAN, jnp.where(q <= 1 - p, 0.0, 1.0).astype(q.dtype))
