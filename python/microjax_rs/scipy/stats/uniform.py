"""`jax.scipy.stats.uniform` on [loc, loc + scale]."""
from ... import numpy as jnp
from ._dist import NAN, NEG_INF, inexact

__all__ = ["logpdf", "pdf", "cdf", "ppf"]


def logpdf(x, loc=0, scale=1):
    x, loc, scale = inexact(x, loc, scale)
    return jnp.where((x > loc + scale) | (x < loc), NEG_INF, -jnp.log(scale))


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = inexact(x, loc, scale)
    inside = (x >= loc) & (x <= loc + scale)
    return jnp.where(x < loc, 0.0, jnp.where(x > loc + scale, 1.0,
                                              jnp.where(inside, (x - loc) / scale, 0.0))).astype(x.dtype)


def ppf(q, loc=0, scale=1):
    q, loc, scale = inexact(q, loc, scale)
    return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), NAN, loc + scale * q)
