"""`jax.scipy.stats.truncnorm`: the normal distribution truncated to [a, b] (standardized bounds)."""
from ... import numpy as jnp
from . import norm as _norm
from ._dist import NAN, NEG_INF, inexact
from ..special import log_ndtr, ndtr

__all__ = ["logpdf", "pdf", "logsf", "sf", "logcdf", "cdf"]


def _log_diff(x, y):
    """log(exp(x) - exp(y)) for x >= y."""
    return x + jnp.log(-jnp.expm1(y - x))


def _log_gauss_mass(a, b):
    """log of the standard normal mass of [a, b], from the tail that keeps precision."""
    a, b = jnp.broadcast_arrays(jnp.asarray(a), jnp.asarray(b))
    left = b <= 0
    right = a > 0
    central = ~(left | right)
    a_tail = jnp.where(right, -b, a)
    b_tail = jnp.where(right, -a, b)
    tail = _log_diff(log_ndtr(b_tail), log_ndtr(a_tail))
    centre = jnp.log1p(-ndtr(a) - ndtr(-b))
    return jnp.where(central, centre, tail)


def logpdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = inexact(x, a, b, loc, scale)
    val = _norm.logpdf(x, loc, scale) - _log_gauss_mass(a, b)
    z = (x - loc) / scale
    val = jnp.where((z < a) | (z > b), NEG_INF, val)
    return jnp.where(a >= b, NAN, val)


def pdf(x, a, b, loc=0, scale=1):
    return jnp.exp(logpdf(x, a, b, loc, scale))


def logcdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = inexact(x, a, b, loc, scale)
    x, a, b = jnp.broadcast_arrays(x, a, b)
    x = (x - loc) / scale
    mass = _log_gauss_mass(a, b)
    lcdf = _log_gauss_mass(a, x) - mass
    lsf = _log_gauss_mass(x, b) - mass
    out = jnp.where(x >= b, 0.0, jnp.where(x <= a, NEG_INF, jnp.where(
        lcdf > -0.1, jnp.log1p(-jnp.exp(lsf)), jnp.where(x > a, lcdf, 0.0)))).astype(x.dtype)
    return jnp.where(a >= b, NAN, out)


def cdf(x, a, b, loc=0, scale=1):
    return jnp.exp(logcdf(x, a, b, loc, scale))


def logsf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = inexact(x, a, b, loc, scale)
    return logcdf(-x, -b, -a, -loc, scale)


def sf(x, a, b, loc=0, scale=1):
    return jnp.exp(logsf(x, a, b, loc, scale))
