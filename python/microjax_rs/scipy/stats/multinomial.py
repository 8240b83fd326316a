"""`jax.scipy.stats.multinomial`: counts x (integers, last axis) of n draws with probabilities p."""
import numpy as _np

from ... import numpy as jnp
from ._dist import NEG_INF, gammaln, inexact, xlogy

__all__ = ["logpmf", "pmf"]


def logpmf(x, n, p):
    (p,) = inexact(p)
    x, n = jnp.asarray(x), jnp.asarray(n)
    if not (jnp.issubdtype(x.dtype, _np.integer) and jnp.issubdtype(n.dtype, _np.integer)):
        raise ValueError(f"x and n must be of integer type; got x.dtype={x.dtype}, n.dtype={n.dtype}")
    x = x.astype(p.dtype)
    n = n.astype(p.dtype)
    logprobs = gammaln(n + 1) + jnp.sum(xlogy(x, p) - gammaln(x + 1), axis=-1)
    return jnp.where(jnp.equal(jnp.sum(x), n), logprobs, NEG_INF)


def pmf(x, n, p):
    return jnp.exp(logpmf(x, n, p))
