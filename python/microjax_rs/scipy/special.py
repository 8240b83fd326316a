"""`jax.scipy.special`, built on lax primitives."""
import numpy as _np

from .. import lax
from .. import numpy as jnp
from .._src.numpy.reductions import _reduce_axes
from .._src.numpy.ufuncs import _to_bool
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
    (x,) = _promote_inexact(_arr(x))
    return lax.logistic(x)


def logit(x):
    (x,) = _promote_inexact(_arr(x))
    return lax.log(lax.div(x, lax.sub(1.0, x)))


def log_expit(x):
    (x,) = _promote_inexact(_arr(x))
    return jnp.negative(jnp.logaddexp(jnp.negative(x), 0.0))


def xlogy(x, y):
    x, y = _promote_inexact(_arr(x), _arr(y))
    safe_y = jnp.where(lax.eq(x, 0.0), 1.0, y)
    return jnp.where(lax.eq(x, 0.0), 0.0, lax.mul(x, lax.log(safe_y)))


def xlog1py(x, y):
    x, y = _promote_inexact(_arr(x), _arr(y))
    safe_y = jnp.where(lax.eq(x, 0.0), 0.0, y)
    return jnp.where(lax.eq(x, 0.0), 0.0, lax.mul(x, jnp.log1p(safe_y)))


def entr(x):
    (x,) = _promote_inexact(_arr(x))
    safe = jnp.where(lax.gt(x, 0.0), x, 1.0)
    return jnp.where(lax.lt(x, 0.0), -_np.inf,
                     jnp.where(lax.eq(x, 0.0), 0.0, lax.neg(lax.mul(x, lax.log(safe)))))


def _lax_inexact(lax_fn, name):
    def fn(x):
        (x,) = _promote_inexact(_arr(x))
        return lax_fn(x)
    fn.__name__ = name
    return fn


erf = _lax_inexact(lax.erf, "erf")
erfinv = _lax_inexact(lax.erf_inv, "erfinv")
gammaln = _lax_inexact(lax.lgamma, "gammaln")
digamma = _lax_inexact(lax.digamma, "digamma")


def erfc(x):
    (x,) = _promote_inexact(_arr(x))
    return lax.sub(1.0, erf(x))


def softmax(x, axis=-1):
    from .. import nn
    return nn.softmax(x, axis=axis)


def log_softmax(x, axis=-1):
    from .. import nn
    return nn.log_softmax(x, axis=axis)
