"""`jax.scipy.stats.gamma` (cdf / sf through `jax.scipy.special.gammainc` / `gammaincc`)."""
import numpy as _np

from ... import numpy as jnp
from ._dist import NEG_INF, gammaln, incomplete, inexact, xlogy

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def logpdf(x, a, loc=0, scale=1):
    x, a, loc, scale = inexact(x, a, loc, scale)
    ok = x >= loc
    y = jnp.where(ok, (x - loc) / scale, 1.0)
    log_probs = xlogy(a - 1, y) - y - (gammaln(a) + jnp.log(scale))
    return jnp.where(ok, log_probs, NEG_INF)


def pdf(x, a, loc=0, scale=1):
    return jnp.exp(logpdf(x, a, loc, scale))


def cdf(x, a, loc=0, scale=1):
    x, a, loc, scale = inexact(x, a, loc, scale)
    return incomplete("gammainc")(a, jnp.clip((x - loc) / scale, 0, _np.inf))


def logcdf(x, a, loc=0, scale=1):
    return jnp.log(cdf(x, a, loc, scale))


def sf(x, a, loc=0, scale=1):
    x, a, loc, scale = inexact(x, a, loc, scale)
    y = (x - loc) / scale
    return jnp.where(y < 0, 1, incomplete("gammaincc")(a, y)).astype(y.dtype)


def logsf(x, a, loc=0, scale=1):
    return jnp.log(sf(x, a, loc, scale))
