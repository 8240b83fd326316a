"""`jax.scipy.stats.chi2` (cdf / sf through `jax.scipy.special.gammainc` / `gammaincc`)."""
import numpy as _np

from ... import numpy as jnp
from ._dist import NEG_INF, gammaln, incomplete, inexact

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = inexact(x, df, loc, scale)
    y = (x - loc) / scale
    half = df / 2
    kernel = (half - 1) * jnp.log(y) - y / 2
    norm = -(gammaln(half) + _np.log(2.0) * df / 2)
    return jnp.where(x < loc, NEG_INF, norm - jnp.log(scale) + kernel)


def pdf(x, df, loc=0, scale=1):
    return jnp.exp(logpdf(x, df, loc, scale))


def cdf(x, df, loc=0, scale=1):
    x, df, loc, scale = inexact(x, df, loc, scale)
    return incomplete("gammainc")(df / 2, jnp.clip((x - loc) / (scale * 2), 0, _np.inf))


def logcdf(x, df, loc=0, scale=1):
    return jnp.log(cdf(x, df, loc, scale))


def sf(x, df, loc=0, scale=1):
    x, df, loc, scale = inexact(x, df, loc, scale)
    return incomplete("gammaincc")(df / 2, jnp.clip((x - loc) / (scale * 2), 0, _np.inf))


def logsf(x, df, loc=0, scale=1):
    return jnp.log(sf(x, df, loc, scale))
