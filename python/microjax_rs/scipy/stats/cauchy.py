"""`jax.scipy.stats.cauchy`."""
from ... import numpy as jnp
from ._dist import PI, inexact, reflected_tails

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "isf", "ppf"]


def logpdf(x, loc=0, scale=1):
    x, loc, scale = inexact(x, loc, scale)
    z = (x - loc) / scale
    return -(jnp.log(PI * scale) + jnp.log1p(z * z))


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = inexact(x, loc, scale)
    return 0.5 + (1.0 / PI) * jnp.arctan((x - loc) / scale)


def logcdf(x, loc=0, scale=1):
    return jnp.log(cdf(x, loc, scale))


sf, logsf = reflected_tails(cdf, logcdf)


def isf(q, loc=0, scale=1):
    q, loc, scale = inexact(q, loc, scale)
    return jnp.tan(PI / 2 - PI * q) * scale + loc


def ppf(q, loc=0, scale=1):
    q, loc, scale = inexact(q, loc, scale)
    return jnp.tan(PI * q - PI / 2) * scale + loc
