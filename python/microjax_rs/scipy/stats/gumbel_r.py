"""`jax.scipy.stats.gumbel_r`: the right-skewed Gumbel distribution."""
from ... import numpy as jnp
from ._dist import NAN, inexact, xlogy

__all__ = ["logpdf", "pdf", "logcdf", "cdf", "ppf", "sf", "logsf"]


def logpdf(x, loc=0, scale=1):
    x, loc, scale = inexact(x, loc, scale)
    z = (x - loc) / scale
    return jnp.where(scale > 0, xlogy(-1, scale) - (z + jnp.exp(-z)), NAN)


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    x, loc, scale = inexact(x, loc, scale)
    z = (x - loc) / scale
    return jnp.where(scale > 0, -jnp.exp(-z), NAN)


def cdf(x, loc=0, scale=1):
    return jnp.exp(logcdf(x, loc, scale))


def ppf(p, loc=0, scale=1):
    p, loc, scale = inexact(p, loc, scale)
    ok = (p > 0) & (p < 1)
    return jnp.where(ok, loc - scale * jnp.log(xlogy(-1, p)), NAN)


def sf(x, loc=0, scale=1):
    x, loc, scale = inexact(x, loc, scale)
    neg_z = (loc - x) / scale
    return jnp.where(scale > 0, 1 - jnp.exp(-jnp.exp(neg_z)), NAN)


def logsf(x, loc=0, scale=1):
    x, loc, scale = inexact(x, loc, scale)
    from ...nn import log1mexp
    neg_z = (loc - x) / scale
    return jnp.where(scale > 0, log1mexp(jnp.exp(neg_z)), NAN)
