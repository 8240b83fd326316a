"""`jax.scipy.stats.norm`: the normal distribution with `loc` and `scale`."""
import numpy as _np

from ... import lax
from ..._src.numpy.util import _arr, _promote_inexact
from .. import special as _special

_HALF_LOG_2PI = 0.5 * float(_np.log(2.0 * _np.pi))
_SQRT2 = float(_np.sqrt(2.0))


def _args(*xs):
    return _promote_inexact(*[_arr(x) for x in xs])


def logpdf(x, loc=0, scale=1):
    """log N(x; loc, scale**2)."""
    x, loc, scale = _args(x, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    return lax.sub(lax.neg(lax.add(lax.mul(0.5, lax.mul(z, z)), _HALF_LOG_2PI)), lax.log(scale))


def pdf(x, loc=0, scale=1):
    """N(x; loc, scale**2)."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """P(X <= x) = (1 + erf((x - loc) / (scale * sqrt 2))) / 2."""
    x, loc, scale = _args(x, loc, scale)
    z = lax.div(lax.sub(x, loc), lax.mul(scale, _SQRT2))
    return lax.mul(0.5, lax.add(1.0, _special.erf(z)))


def sf(x, loc=0, scale=1):
    """P(X > x) = cdf of the reflected point."""
    x, loc, scale = _args(x, loc, scale)
    return cdf(lax.sub(lax.mul(2.0, loc), x), loc, scale)


def ppf(q, loc=0, scale=1):
    """The inverse of `cdf`: loc + scale * sqrt 2 * erfinv(2 q - 1)."""
    q, loc, scale = _args(q, loc, scale)
    return lax.add(loc, lax.mul(lax.mul(scale, _SQRT2), _special.erfinv(lax.sub(lax.mul(2.0, q), 1.0))))


def isf(q, loc=0, scale=1):
    """The inverse of `sf`."""
    q, loc, scale = _args(q, loc, scale)
    return ppf(lax.sub(1.0, q), loc, scale)


__all__ = ["logpdf", "pdf", "cdf", "sf", "ppf", "isf"]
