"""`jax.scipy.stats.t`: Student's t distribution."""
import numpy as _np

from ... import numpy as jnp
from ._dist import gammaln, inexact

__all__ = ["logpdf", "pdf"]


def logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = inexact(x, df, loc, scale)
    z = (x - loc) / scale
    half = df / 2
    half_plus = half + 0.5
    norm = gammaln(half) + jnp.log(scale * scale * _np.pi * df) / 2 - gammaln(half_plus)
    return -(norm + half_plus * jnp.log1p(z * z / df))


def pdf(x, df, loc=0, scale=1):
    return jnp.exp(logpdf(x, df, loc, scale))
