"""`jax.scipy.stats.multivariate_normal`."""
import numpy as _np

from ... import lax
from ... import numpy as jnp
from ._dist import inexact_dtypes as inexact

__all__ = ["logpdf", "pdf"]


def logpdf(x, mean, cov, allow_singular=None):
    """log N(x; mean, cov) over the last axis; `cov` a scalar (isotropic) or
    an (n, n) matrix (batched alike), factored by Cholesky."""
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = (jnp.asarray(a) for a in inexact(x, mean, cov))
    log2pi = _np.log(2 * _np.pi)
    if not mean.shape:
        return -0.5 * jnp.square(x - mean) / cov - 0.5 * (log2pi + jnp.log(cov))
    n = mean.shape[-1]
    if not jnp.shape(cov):
        y = x - mean
        return -0.5 * jnp.einsum("...i,...i->...", y, y) / cov - n / 2 * (log2pi + jnp.log(cov))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    L = jnp.linalg.cholesky(cov)
    d = x - mean
    batch = jnp.broadcast_shapes(L.shape[:-2], d.shape[:-1])
    Lb = jnp.broadcast_to(L, batch + (n, n))
    db = jnp.broadcast_to(d, batch + (n,))
    from .. import linalg as _sla
    y = _sla.solve_triangular(Lb, db[..., None], lower=True)[..., 0]
    return (-0.5 * jnp.einsum("...i,...i->...", y, y) - n / 2 * log2pi
            - jnp.log(jnp.diagonal(L, axis1=-1, axis2=-2)).sum(-1))


def pdf(x, mean, cov):
    return lax.exp(logpdf(x, mean, cov))
