"""`jax.scipy.stats.vonmises` of concentration kappa (nan for kappa <= 0)."""
import numpy as _np

from ... import numpy as jnp
from ._dist import NAN, inexact
from ..special import i0e

__all__ = ["logpdf", "pdf"]


def logpdf(x, kappa):
    x, kappa = inexact(x, kappa)
    return jnp.where(kappa > 0, kappa * (jnp.cos(x) - 1) - jnp.log(2 * _np.pi * i0e(kappa)), NAN)


def pdf(x, kappa):
    return jnp.exp(logpdf(x, kappa))
