"""`jax.scipy.stats.gennorm`: the generalized normal distribution of shape beta."""
from ... import numpy as jnp
from ._dist import gammaln, incomplete, inexact

__all__ = ["logpdf", "pdf", "cdf"]


def logpdf(x, beta):
    x, beta = inexact(x, beta)
    return jnp.log(0.5 * beta) - gammaln(1 / beta) - jnp.abs(x) ** beta


def pdf(x, beta):
    return jnp.exp(logpdf(x, beta))


def cdf(x, beta):
    x, beta = inexact(x, beta)
    return 0.5 * (1 + jnp.sign(x) * incomplete("gammainc")(1 / beta, jnp.abs(x) ** beta))
