"""`jax.scipy.stats.logistic`."""
from ... import numpy as jnp
from .. import special as _special
from ._dist import inexact

__all__ = ["logpdf", "pdf", "ppf", "sf", "isf", "cdf"]


def logpdf(x, loc=0, scale=1):
    x, loc, scale = inexact(x, loc, scale)
    half = (x - loc) / scale / 2
    return -2 * jnp.logaddexp(half, -half) - jnp.log(scale)


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def ppf(x, loc=0, scale=1):
    x, loc, scale = inexact(x, loc, scale)
    return _special.logit(x) * scale + loc


def sf(x, loc=0, scale=1):
    x, loc, scale = inexact(x, loc, scale)
    return _special.expit(-(x - loc) / scale)


def isf(x, loc=0, scale=1):
    x, loc, scale = inexact(x, loc, scale)
    return -_special.logit(x) * scale + loc


def cdf(x, loc=0, scale=1):
    x, loc, scale = inexact(x, loc, scale)
    return _special.expit((x - loc) / scale)
