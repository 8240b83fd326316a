"""`jax.scipy.stats.poisson` (cdf through `jax.scipy.special.gammaincc`)."""
import numpy as _np

from ... import numpy as jnp
from .. import special as _special
from ._dist import NEG_INF, gammaln, incomplete, inexact, xlogy

__all__ = ["logpmf", "pmf", "cdf", "entropy"]


def logpmf(k, mu, loc=0):
    k, mu, loc = inexact(k, mu, loc)
    x = k - loc
    log_probs = xlogy(x, mu) - gammaln(x + 1) - mu
    return jnp.where((x < 0) | (jnp.round(k) != k), NEG_INF, log_probs)


def pmf(k, mu, loc=0):
    return jnp.exp(logpmf(k, mu, loc))


def cdf(k, mu, loc=0):
    k, mu, loc = inexact(k, mu, loc)
    x = k - loc
    p = incomplete("gammaincc")(jnp.floor(1 + x), mu)
    return jnp.where(x < 0, 0.0, p).astype(p.dtype)


def _entropy_sum(mu, max_k, upper):
    """-sum p log p over k < min(max_k, upper(mu))."""
    k = jnp.arange(max_k, dtype=mu.dtype)[:, None]
    probs = pmf(k, mu, 0)
    probs = jnp.where(k < jnp.ceil(upper)[None, :], probs, 0.0)
    return jnp.sum(_special.entr(probs), axis=0)


def entropy(mu, loc=0):
    """The entropy: a direct sum for mu < 100, the asymptotic expansion above."""
    mu, loc = inexact(mu, loc)
    shape = jnp.broadcast_shapes(mu.shape, loc.shape)
    flat = jnp.ravel(mu)
    small = _entropy_sum(flat, 35, flat + 20)
    medium = _entropy_sum(flat, 250, flat + 10 * jnp.sqrt(flat) + 20)
    large = 0.5 * jnp.log(2 * _np.pi * _np.e * flat) - 1.0 / (12 * flat)
    out = jnp.where(flat == 0, 0.0, jnp.where(flat < 10, small, jnp.where(flat < 100, medium, large)))
    return jnp.broadcast_to(jnp.reshape(out.astype(flat.dtype), mu.shape), shape)
