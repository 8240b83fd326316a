"""`jax.scipy.stats.pareto`."""
from ... import numpy as jnp
from ._dist import NAN, NEG_INF, inexact

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "logsf", "sf", "ppf"]


def logpdf(x, b, loc=0, scale=1):
    x, b, loc, scale = inexact(x, b, loc, scale)
    z = (x - loc) / scale
    return jnp.where(x < loc + scale, NEG_INF, -(jnp.log(scale / b) + (b + 1) * jnp.log(z)))


def pdf(x, b, loc=0, scale=1):
    return jnp.exp(logpdf(x, b, loc, scale))


def cdf(x, b, loc=0, scale=1):
    x, b, loc, scale = inexact(x, b, loc, scale)
    z = (x - loc) / scale
    return jnp.where(x < loc + scale, 0.0, 1 - jnp.power(z, -b)).astype(z.dtype)


def logcdf(x, b, loc=0, scale=1):
    x, b, loc, scale = inexact(x, b, loc, scale)
    z = (x - loc) / scale
    return jnp.where(x < loc + scale, NEG_INF, jnp.log1p(-jnp.power(z, -b)))


def logsf(x, b, loc=0, scale=1):
    x, b, loc, scale = inexact(x, b, loc, scale)
    z = (x - loc) / scale
    return jnp.where(x < loc + scale, 0.0, -(b * jnp.log(z))).astype(z.dtype)


def sf(x, b, loc=0, scale=1):
    return jnp.exp(logsf(x, b, loc, scale))


def ppf(q, b, loc=0, scale=1):
    q, b, loc, scale = inexact(q, b, loc, scale)
    val = loc + scale * jnp.power(1 - q, -(1 / b))
    return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), NAN, val)
