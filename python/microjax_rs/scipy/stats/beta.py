"""`jax.scipy.stats.beta` (cdf / sf through `jax.scipy.special.betainc`)."""
from ... import numpy as jnp
from ._dist import NAN, NEG_INF, incomplete, inexact, xlog1py, xlogy
from ..special import betaln

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def logpdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = inexact(x, a, b, loc, scale)
    y = (x - loc) / scale
    log_probs = -betaln(a, b) + xlogy(a - 1, y) + xlog1py(b - 1, -y) - jnp.log(scale)
    out = jnp.where((x > loc + scale) | (x < loc), NEG_INF, log_probs)
    return jnp.where((a <= 0) | (b <= 0) | (scale <= 0), NAN, out)


def pdf(x, a, b, loc=0, scale=1):
    return jnp.exp(logpdf(x, a, b, loc, scale))


def cdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = inexact(x, a, b, loc, scale)
    return incomplete("betainc")(a, b, jnp.clip((x - loc) / scale, 0, 1))


def logcdf(x, a, b, loc=0, scale=1):
    return jnp.log(cdf(x, a, b, loc, scale))


def sf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = inexact(x, a, b, loc, scale)
    return incomplete("betainc")(b, a, 1 - jnp.clip((x - loc) / scale, 0, 1))


def logsf(x, a, b, loc=0, scale=1):
    return jnp.log(sf(x, a, b, loc, scale))
