"""`jax.scipy.stats.expon`."""
from ... import numpy as jnp
from ._dist import NAN, NEG_INF, inexact

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def logpdf(x, loc=0, scale=1):
    x, loc, scale = inexact(x, loc, scale)
    return jnp.where(x < loc, NEG_INF, -((x - loc) / scale + jnp.log(scale)))


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = inexact(x, loc, scale)
    neg = (loc - x) / scale
    return jnp.where(x < loc, jnp.zeros_like(neg), -jnp.expm1(neg))


def logsf(x, loc=0, scale=1):
    x, loc, scale = inexact(x, loc, scale)
    neg = (loc - x) / scale
    return jnp.where(x < loc, jnp.zeros_like(neg), neg)


def sf(x, loc=0, scale=1):
    return jnp.exp(logsf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    return jnp.log1p(-sf(x, loc, scale))


def ppf(q, loc=0, scale=1):
    q, loc, scale = inexact(q, loc, scale)
    return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), NAN, loc - scale * jnp.log1p(-q))
