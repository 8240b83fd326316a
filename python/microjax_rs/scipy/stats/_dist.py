"""Shared helpers of the `jax.scipy.stats` distributions."""
import numpy as _np

from ... import numpy as jnp
from ..._src.numpy.util import _arr, _promote_dtypes_inexact, _promote_inexact
from .. import special as _special


def inexact(*xs):
    """The arguments as arrays of one inexact dtype, ranks promoted (JAX's promote_args_inexact)."""
    return _promote_inexact(*[_arr(x) for x in xs])


def inexact_dtypes(*xs):
    """The arguments as arrays of one inexact dtype, shapes untouched (JAX's promote_dtypes_inexact)."""
    return _promote_dtypes_inexact(*[_arr(x) for x in xs])


def reflected_tails(cdf, logcdf):
    """`(sf, logsf)` of a distribution symmetric about `loc`: P(X > x) is the
    cdf (logcdf) at the point reflected through `loc`. (Their docstrings are
    written per distribution by the package.)"""
    def sf(x, loc=0, scale=1):
        x, loc, scale = inexact(x, loc, scale)
        return cdf(-x, -loc, scale)

    def logsf(x, loc=0, scale=1):
        x, loc, scale = inexact(x, loc, scale)
        return logcdf(-x, -loc, scale)

    return sf, logsf


def incomplete(name):
    """`jax.scipy.special.<name>` (the regularized incomplete gamma / beta functions)."""
    fn = getattr(_special, name, None)
    if fn is None:
        raise NotImplementedError(f"this distribution function needs jax.scipy.special.{name}, "
                                  "which this build of microjax_rs lacks")
    return fn


NAN = _np.nan
NEG_INF = -_np.inf
PI = _np.pi
xlogy = _special.xlogy
xlog1py = _special.xlog1py
gammaln = _special.gammaln
where = jnp.where
