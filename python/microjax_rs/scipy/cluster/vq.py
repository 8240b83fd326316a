"""`jax.scipy.cluster.vq`: vector quantization against a code book."""
from ... import numpy as jnp
from ..._src.numpy.util import _aval, _promote_dtypes_inexact


def vq(obs, code_book, check_finite=True):
    """`(codes, dists)`: the index of the nearest code (Euclidean) for every
    observation and the distance to it. `obs` is `(M,)` or `(M, N)`,
    `code_book` `(K,)` or `(K, N)` of the same rank."""
    obs, code_book = _promote_dtypes_inexact(jnp.asarray(obs), jnp.asarray(code_book))
    if _aval(obs).ndim != _aval(code_book).ndim:
        raise ValueError("Observation and code_book should have the same rank")
    if _aval(obs).ndim == 1:
        obs, code_book = obs[:, None], code_book[:, None]
    if _aval(obs).ndim != 2:
        raise ValueError("ndim different than 1 or 2 are not supported")
    diff = obs[:, None, :] - code_book[None, :, :]
    dist = jnp.sqrt(jnp.sum(diff * diff, axis=-1))
    codes = jnp.argmin(dist, axis=-1)
    return codes, jnp.min(dist, axis=-1)


__all__ = ["vq"]
