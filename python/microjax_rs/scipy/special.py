"""`jax.scipy.special`, built on lax primitives."""
import numpy as _np

from .. import lax
from .. import numpy as jnp
from ..custom_derivatives import custom_jvp as _custom_jvp
from .._src.numpy.reductions import _reduce_axes
from .._src.numpy.ufuncs import _lax_inexact, _to_bool
from .._src.numpy.util import _arr, _aval, _promote_inexact


def _stop_gradient(x):
    return lax.stop_gradient(x)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """log(sum(b * exp(a))) computed stably: shifted by the (gradient-stopped) max."""
    if b is not None:
        a, b = _promote_inexact(_arr(a), _arr(b))
        if _aval(b).shape != _aval(a).shape:
            shape = jnp.broadcast_shapes(_aval(a).shape, _aval(b).shape)
            a, b = jnp.broadcast_to(a, shape), jnp.broadcast_to(b, shape)
    else:
        (a,) = _promote_inexact(_arr(a))
    av = _aval(a)
    axes = _reduce_axes(av, axis)
    if where is not None:
        w = _to_bool(where)
        a = jnp.where(w, a, -_np.inf)
    amax = jnp.max(a, axis=axes, keepdims=True, initial=-_np.inf) if av.size else \
        jnp.full(tuple(1 if i in axes else d for i, d in enumerate(av.shape)), -_np.inf, av.dtype)
    amax = _stop_gradient(jnp.where(jnp.isfinite(amax), amax, 0.0))
    e = jnp.exp(jnp.subtract(a, amax))
    if b is not None:
        e = jnp.multiply(b, e)
    s = jnp.sum(e, axis=axes, keepdims=True)
    if return_sign:
        sign = jnp.sign(s)
        s = jnp.abs(s)
    out = jnp.add(jnp.log(s), amax)
    if not keepdims:
        out = lax.squeeze(out, axes)
        if return_sign:
            sign = lax.squeeze(sign, axes)
    if return_sign:
        return out, sign
    return out


def expit(x):
    """Logistic sigmoid ``1 / (1 + exp(-x))``, elementwise (integers are promoted to float).

    Example:
      >>> import microjax_rs.numpy as jnp
      >>> from microjax_rs.scipy.special import expit
      >>> expit(jnp.array([0.0]))
      Array([0.5], dtype=float32)
    """
    (x,) = _promote_inexact(_arr(x))
    return lax.logistic(x)


def logit(x):
    """Log-odds ``log(x / (1 - x))``, the inverse of ``expit``, elementwise (-inf at 0, inf at 1,
    NaN outside [0, 1]).
    """
    (x,) = _promote_inexact(_arr(x))
    return lax.log(lax.div(x, lax.sub(1.0, x)))


def log_expit(x):
    """Log of the logistic sigmoid, ``-log(1 + exp(-x))``, elementwise; stable for large ``|x|``."""
    (x,) = _promote_inexact(_arr(x))
    return jnp.negative(jnp.logaddexp(jnp.negative(x), 0.0))


def _xlogy_impl(x, y):
    safe_y = jnp.where(lax.eq(x, 0.0), 1.0, y)
    out = jnp.where(lax.eq(x, 0.0), 0.0, lax.mul(x, lax.log(safe_y)))
    return jnp.where(jnp.isnan(y), y, out)


def _xlog1py_impl(x, y):
    safe_y = jnp.where(lax.eq(x, 0.0), 0.0, y)
    out = jnp.where(lax.eq(x, 0.0), 0.0, lax.mul(x, jnp.log1p(safe_y)))
    return jnp.where(jnp.isnan(y), y, out)


_xlogy = _custom_jvp(_xlogy_impl)
_xlog1py = _custom_jvp(_xlog1py_impl)


@_xlogy.defjvp
def _xlogy_jvp(primals, tangents):
    # JAX's rule d/dx = log(y), d/dy = x / y, except that d/dy is 0 (not 0/0) at x == y == 0
    (x, y), (tx, ty) = primals, tangents
    safe_y = jnp.where(lax.eq(x, 0.0), 1.0, y)
    return _xlogy_impl(x, y), tx * lax.log(y) + ty * x / safe_y


@_xlog1py.defjvp
def _xlog1py_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    safe_y = jnp.where(lax.eq(x, 0.0), 0.0, y)
    return _xlog1py_impl(x, y), tx * jnp.log1p(y) + ty * x / (1.0 + safe_y)


def xlogy(x, y):
    """x * log(y), 0 where x == 0 (NaN where y is NaN). Derivatives as JAX's rule (log(y) in x,
    x / y in y), with 0 in y at x == y == 0 where JAX's rule gives 0/0."""
    x, y = _promote_inexact(_arr(x), _arr(y))
    return _xlogy(x, y)


def xlog1py(x, y):
    """x * log1p(y), 0 where x == 0 (NaN where y is NaN). Derivatives as JAX's rule, with 0 in y
    at x == 0, y == -1 where JAX's rule gives 0/0."""
    x, y = _promote_inexact(_arr(x), _arr(y))
    return _xlog1py(x, y)


def entr(x):
    """-x log(x) for x > 0, -0.0 at 0 (as JAX), -inf for x < 0."""
    (x,) = _promote_inexact(_arr(x))
    safe = jnp.where(lax.gt(x, 0.0), x, 1.0)
    xlogx = jnp.where(lax.eq(x, 0.0), 0.0, lax.mul(x, lax.log(safe)))
    return jnp.where(lax.lt(x, 0.0), -_np.inf, lax.neg(xlogx))


erf, erfinv, gammaln, digamma, erfc, i0e, i1e = (
    _lax_inexact(fn, name, doc, keyword=True) for fn, name, doc in (
        (lax.erf, "erf", "The error function (jax.scipy.special.erf)."),
        (lax.erf_inv, "erfinv", "The inverse of the error function on [-1, 1]."),
        (lax.lgamma, "gammaln", "log|Gamma(x)|."),
        (lax.digamma, "digamma", "The digamma function: the derivative of log Gamma."),
        (lax.erfc, "erfc", "The complementary error function 1 - erf(x), without cancellation for large x."),
        (lax.bessel_i0e, "i0e", "exp(-|x|) I0(x): the exponentially scaled modified Bessel function of order 0."),
        (lax.bessel_i1e, "i1e", "exp(-|x|) I1(x): the exponentially scaled modified Bessel function of order 1."),
    ))


def softmax(x, /, *, axis=None):
    """exp(x) / sum(exp(x)) over `axis` (all axes by default, as JAX's scipy version)."""
    from .. import nn
    return nn.softmax(x, axis=axis)


def log_softmax(x, /, *, axis=None):
    """x - logsumexp(x) over `axis` (all axes by default, as JAX's scipy version)."""
    from .. import nn
    return nn.log_softmax(x, axis=axis)


from ._special_functions import *  # noqa: E402,F401,F403  (the rest of jax.scipy.special)
