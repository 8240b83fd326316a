"""`jax.scipy.integrate`: `trapezoid`."""
from .. import numpy as jnp
from .._src.numpy.util import _aval, _promote_dtypes_inexact


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The trapezoidal rule along `axis`: sample spacing from `x` (1-D, or
    the shape of `y`) or the constant `dx`."""
    if x is None:
        (y,) = _promote_dtypes_inexact(jnp.asarray(y))
        y = jnp.moveaxis(y, axis, -1)
        d = jnp.asarray(dx)
    else:
        y, x = _promote_dtypes_inexact(jnp.asarray(y), jnp.asarray(x))
        y = jnp.moveaxis(y, axis, -1)
        if _aval(x).ndim == 1:
            d = jnp.diff(x)
        else:
            d = jnp.diff(jnp.moveaxis(x, axis, -1), axis=-1)
    return 0.5 * jnp.sum(d * (y[..., 1:] + y[..., :-1]), axis=-1)


__all__ = ["trapezoid"]
