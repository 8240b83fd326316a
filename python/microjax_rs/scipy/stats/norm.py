"""`jax.scipy.stats.norm`: the normal distribution with `loc` and `scale`."""
import numpy as _np

from ... import numpy as jnp
from ._dist import inexact, reflected_tails
from ..special import log_ndtr, ndtr, ndtri

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


def logpdf(x, loc=0, scale=1):
    """log N(x; loc, scale**2)."""
    x, loc, scale = inexact(x, loc, scale)
    s2 = jnp.square(scale)
    return (jnp.log(2 * _np.pi * s2) + jnp.square(x - loc) / s2) / -2


def pdf(x, loc=0, scale=1):
    """N(x; loc, scale**2)."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """P(X <= x), accurate in the lower tail."""
    x, loc, scale = inexact(x, loc, scale)
    return ndtr((x - loc) / scale)


def logcdf(x, loc=0, scale=1):
    """log P(X <= x), stable far into the lower tail."""
    x, loc, scale = inexact(x, loc, scale)
    return log_ndtr((x - loc) / scale)


sf, logsf = reflected_tails(cdf, logcdf)


def ppf(q, loc=0, scale=1):
    """The inverse of `cdf`."""
    q, loc, scale = inexact(q, loc, scale)
    return ndtri(q) * scale + loc


def isf(q, loc=0, scale=1):
    """The inverse of `sf`."""
    q, loc, scale = inexact(q, loc, scale)
    return ppf(1 - q, loc, scale)
