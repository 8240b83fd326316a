"""`jax.scipy.stats.wrapcauchy` on [0, 2 pi] with 0 < c < 1."""
import numpy as _np

from ... import numpy as jnp
from ._dist import NAN, NEG_INF, inexact

__all__ = ["logpdf", "pdf"]


def logpdf(x, c):
    x, c = inexact(x, c)
    inside = (x >= 0) & (x <= 2 * _np.pi)
    val = jnp.log(1 - c * c) - jnp.log(2 * _np.pi) - jnp.log(1 + c * c - 2 * c * jnp.cos(x))
    return jnp.where((c > 0) & (c < 1), jnp.where(inside, val, NEG_INF), NAN)


def pdf(x, c):
    return jnp.exp(logpdf(x, c))
