"""`jax.scipy.stats.gumbel_l`: the left-skewed Gumbel distribution."""
from ... import numpy as jnp
from ._dist import NAN, inexact, xlog1py, xlogy

__all__ = ["logpdf", "pdf", "logcdf", "cdf", "ppf", "sf", "logsf"]


def logpdf(x, loc=0, scale=1):
    x, loc, scale = inexact(x, loc, scale)
    z = (x - loc) / scale
    return jnp.where(scale > 0, xlogy(-1, scale) + (z - jnp.exp(z)), NAN)


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    x, loc, scale = inexact(x, loc, scale)
    z = (x - loc) / scale
    return jnp.where(scale > 0, jnp.log(-jnp.expm1(-jnp.exp(z))), NAN)


def cdf(x, loc=0, scale=1):
    return jnp.exp(logcdf(x, loc, scale))


def ppf(p, loc=0, scale=1):
    p, loc, scale = inexact(p, loc, scale)
    ok = (p > 0) & (p < 1)
    return jnp.where(ok, loc + scale * jnp.log(xlog1py(-1, -p)), NAN)


def logsf(x, loc=0, scale=1):
    x, loc, scale = inexact(x, loc, scale)
    z = (x - loc) / scale
    return jnp.where(scale > 0, -jnp.exp(z), NAN)


def sf(x, loc=0, scale=1):
    return jnp.exp(logsf(x, loc, scale))
