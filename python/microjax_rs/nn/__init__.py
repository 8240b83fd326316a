"""`jax.nn`: activations and friends, built on lax/jnp."""
import math as _math

import numpy as _np

from ..config import config as _config

from .. import core, lax
from .. import numpy as jnp
from .. import dtypes as _dt
from .._src.numpy.util import _arr, _aval, _promote_inexact
from ..scipy.special import logsumexp as _logsumexp


def _inexact(x):
    (x,) = _promote_inexact(_arr(x))
    return x


def relu(x):
    """Rectified linear unit ``max(x, 0)``, elementwise; NaN propagates.

    Its derivative at 0 is 0, as JAX's custom JVP (the tangent passes only where x > 0).

    Example:
      >>> import microjax_rs as jax
      >>> import microjax_rs.numpy as jnp
      >>> jax.nn.relu(jnp.array([-1.0, 0.0, 2.0]))
      Array([0., 0., 2.], dtype=float32)
      >>> print(jax.grad(jax.nn.relu)(0.0))
      0.0
    """
    x = _arr(x)
    zero = jnp.zeros_like(x)
    # NaN propagates as in max(x, 0); the tangent flows only through the x > 0 branch.
    return jnp.where(lax.gt(x, zero), x, jnp.where(lax.ne(x, x), x, zero))


def relu6(x):
    """min(max(x, 0), 6); its derivative at 0 and at 6 is 0 (as JAX's custom JVP)."""
    x = _arr(x)
    zero, six = jnp.zeros_like(x), jnp.full_like(x, 6)
    inside = jnp.logical_and(lax.gt(x, zero), lax.lt(x, six))
    outside = jnp.where(lax.ge(x, six), six, jnp.where(lax.ne(x, x), x, zero))
    out = jnp.where(inside, x, outside)
    return out if _dt.is_float_name(_aval(out).dtype_name) else out.astype(_dt.default_float_name())


def sigmoid(x):
    """Logistic sigmoid ``1 / (1 + exp(-x))``, elementwise (integers are promoted to float).

    Example:
      >>> import microjax_rs as jax
      >>> print(jax.nn.sigmoid(0.0))
      0.5
    """
    return lax.logistic(_inexact(x))


def log_sigmoid(x):
    """Log of the logistic sigmoid, ``-softplus(-x)``, elementwise; stable for large ``|x|``."""
    x = _inexact(x)
    return jnp.negative(softplus(jnp.negative(x)))


def softplus(x):
    """log(1 + exp(x)) (JAX's `logaddexp(x, 0)`): x + log1p(exp(-x)) for x > 0,
    log1p(exp(x)) otherwise, each branch smooth so that the derivatives at 0
    are JAX's (1/2, then 1/4)."""
    x = _inexact(x)
    pos = lax.gt(x, 0.0)
    xp = jnp.where(pos, x, 0.0)
    xn = jnp.where(pos, 0.0, x)
    return jnp.where(pos, jnp.add(xp, jnp.log1p(jnp.exp(jnp.negative(xp)))), jnp.log1p(jnp.exp(xn)))


def soft_sign(x):
    """x / (|x| + 1), with |x| differentiated as JAX's abs (slope 1 at 0)."""
    x = _inexact(x)
    mag = jnp.where(lax.ge(x, 0.0), x, jnp.negative(x))
    return lax.div(x, lax.add(mag, 1.0))


def silu(x):
    """SiLU (swish) activation ``x * sigmoid(x)``, elementwise. Also exported as ``jax.nn.swish``."""
    x = _inexact(x)
    return lax.mul(x, lax.logistic(x))


swish = silu


def hard_sigmoid(x):
    """Piecewise-linear sigmoid ``relu6(x + 3) / 6``, elementwise."""
    return lax.div(relu6(lax.add(_inexact(x), 3.0)), 6.0)


def hard_silu(x):
    """Hard SiLU ``x * hard_sigmoid(x)``, elementwise. Also exported as ``jax.nn.hard_swish``."""
    x = _inexact(x)
    return lax.mul(x, hard_sigmoid(x))


hard_swish = hard_silu


def hard_tanh(x):
    """-1 below -1, 1 above 1, x between (derivative 1 at the ends, the input dtype kept)."""
    x = _arr(x)
    return jnp.where(lax.gt(x, jnp.full_like(x, 1)), jnp.full_like(x, 1),
                     jnp.where(lax.lt(x, jnp.full_like(x, -1)), jnp.full_like(x, -1), x))


def gelu(x, approximate=True):
    """GELU activation ``x * Phi(x)`` (Phi the standard normal CDF), elementwise.

    ``approximate=True`` (the default, as in JAX) uses the tanh approximation
    ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x**3)))``; ``False`` the exact erf form.
    """
    x = _inexact(x)
    if approximate:
        c = _math.sqrt(2.0 / _math.pi)
        inner = lax.mul(c, lax.add(x, lax.mul(0.044715, lax.integer_pow(x, 3))))
        return lax.mul(lax.mul(0.5, x), lax.add(1.0, lax.tanh(inner)))
    return lax.mul(lax.mul(0.5, x), lax.add(1.0, lax.erf(lax.mul(x, 1.0 / _math.sqrt(2.0)))))


def elu(x, alpha=1.0):
    """ELU activation: ``x`` for ``x > 0``, ``alpha * (exp(x) - 1)`` otherwise, elementwise."""
    x = _inexact(x)
    safe = jnp.where(lax.gt(x, 0.0), 0.0, x)
    return jnp.where(lax.gt(x, 0.0), x, lax.mul(alpha, jnp.expm1(safe)))


def celu(x, alpha=1.0):
    """max(x, 0) + alpha * expm1(min(x, 0) / alpha)."""
    x = _inexact(x)
    return jnp.add(jnp.maximum(x, 0.0), jnp.multiply(alpha, jnp.expm1(jnp.divide(jnp.minimum(x, 0.0), alpha))))


def selu(x):
    """SELU activation: ``scale * elu(x, alpha)`` with the self-normalizing constants
    alpha ~ 1.6733 and scale ~ 1.0507.
    """
    alpha = 1.6732632423543772848170429916717
    scale = 1.0507009873554804934193349852946
    return lax.mul(scale, elu(x, alpha))


def leaky_relu(x, negative_slope=0.01):
    """Leaky ReLU: ``x`` for ``x >= 0``, ``negative_slope * x`` otherwise, elementwise."""
    x = _inexact(x)
    return jnp.where(lax.ge(x, 0.0), x, lax.mul(negative_slope, x))


def glu(x, axis=-1):
    """Gated linear unit: ``x`` is split in two halves ``a, b`` along ``axis`` (whose size must be
    even, else ValueError) and ``a * sigmoid(b)`` is returned.
    """
    x = _arr(x)
    n = _aval(x).shape[axis]
    if n % 2:
        raise ValueError("axis size must be divisible by 2")
    a, b = jnp.split(x, 2, axis=axis)
    return lax.mul(a, sigmoid(b))


def _shifted_exp(x, axis, where):
    """`(x - max, exp(x - max))` over `axis`, masked out of `where` (the max
    constant under differentiation; 0 where there is no finite max)."""
    x = _inexact(x)
    if where is not None:
        x = jnp.where(where, x, -_np.inf)
    m = jnp.max(x, axis=axis, keepdims=True, initial=-_np.inf)
    m = lax.stop_gradient(jnp.where(jnp.isfinite(m), m, 0.0))
    shifted = jnp.subtract(x, m)
    e = jnp.exp(shifted)
    if where is not None:
        e = jnp.where(where, e, 0.0)
    return shifted, e


def softmax(x, axis=-1, where=None, initial=None):
    """Softmax over ``axis``: ``exp(x) / sum(exp(x))``, computed after subtracting the maximum.

    Args:
      x: the logits.
      axis: the axis or axes to normalize over (default the last).
      where: optional boolean mask; masked-out entries get probability 0.
      initial: accepted for JAX compatibility and ignored.

    Example:
      >>> import microjax_rs as jax
      >>> import microjax_rs.numpy as jnp
      >>> jax.nn.softmax(jnp.array([0.0, 0.0, 0.0, 0.0]))
      Array([0.25, 0.25, 0.25, 0.25], dtype=float32)
    """
    if where is None and _config.read("jax_softmax_custom_jvp"):
        return _softmax_with_rule(x, axis)
    _, e = _shifted_exp(x, axis, where)
    return jnp.divide(e, jnp.sum(e, axis=axis, keepdims=True))


def _softmax_value(x, axis):
    _, e = _shifted_exp(x, axis, None)
    return jnp.divide(e, jnp.sum(e, axis=axis, keepdims=True))


def _softmax_with_rule(x, axis):
    """Softmax differentiated by its JVP rule `y * (t - sum(y * t))`
    (`jax_softmax_custom_jvp`), not through its implementation."""
    from ..custom_derivatives import custom_jvp

    axis = axis if isinstance(axis, int) or axis is None else tuple(axis)

    @custom_jvp
    def _softmax(z):
        return _softmax_value(z, axis)

    @_softmax.defjvp
    def _softmax_jvp(primals, tangents):
        (z,), (t,) = primals, tangents
        y = _softmax_value(z, axis)
        return y, y * (t - jnp.sum(y * t, axis=axis, keepdims=True))

    return _softmax(_inexact(x))


def log_softmax(x, axis=-1, where=None, initial=None):
    """Log of the softmax over ``axis``: ``x - logsumexp(x)``, computed stably.
    ``where`` masks entries out (they get -inf); ``initial`` is accepted and ignored.
    """
    shifted, e = _shifted_exp(x, axis, where)
    out = jnp.subtract(shifted, jnp.log(jnp.sum(e, axis=axis, keepdims=True)))
    if where is not None:
        out = jnp.where(where, out, -_np.inf)
    return out


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """``log(sum(b * exp(a)))`` over ``axis``, computed stably; the same function as
    ``jax.scipy.special.logsumexp`` (see there for ``b``, ``return_sign`` and ``where``).
    """
    return _logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign, where=where)


def one_hot(x, num_classes, *, dtype=None, axis=-1):
    """One-hot encoding of the integer array ``x``: a new axis of size ``num_classes`` (placed at
    ``axis``) that is 1 at the class index and 0 elsewhere; out-of-range values give all zeros.

    Args:
      x: class indices.
      num_classes: the size of the new axis (a Python int).
      dtype: the result dtype (default: the default float dtype).
      axis: where the new axis goes.

    Example:
      >>> import microjax_rs as jax
      >>> import microjax_rs.numpy as jnp
      >>> jax.nn.one_hot(jnp.array([0, 2]), 3)
      Array([[1., 0., 0.],
             [0., 0., 1.]], dtype=float32)
    """
    x = jnp.asarray(x)  # as JAX: lists are accepted here
    if isinstance(num_classes, core.Tracer):
        raise core.ConcretizationTypeError(
            f"Abstract tracer value encountered where concrete value is expected: traced array with shape "
            f"{num_classes.aval.str_short()}\nThe error arose in jax.nn.one_hot argument `num_classes`.")
    num_classes = int(num_classes)
    av = _aval(x)
    out_nd = av.ndim + 1
    axis = axis % out_nd
    shape = av.shape[:axis] + (num_classes,) + av.shape[axis:]
    dims = tuple(i for i in range(out_nd) if i != axis)
    xb = lax.broadcast_in_dim(x, shape, dims)
    name = av.dtype_name
    if not _dt.is_int_name(name):
        cls = lax.broadcasted_iota(name if _dt.is_float_name(name) else "int32", shape, axis)
        if name == "bool":
            xb = lax.convert_element_type(xb, "int32")
    else:
        cls = lax.broadcasted_iota(name, shape, axis)
    hit = lax.eq(xb, cls)
    return lax.convert_element_type(hit, _dt.default_float_name() if dtype is None else dtype)


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *, algorithm="fast"):
    """(x - mean) / sqrt(variance + epsilon) over `axis`; the variance as
    mean(x**2) - mean(x)**2 clipped at 0 ("fast") or mean((x - mean)**2) ("stable")."""
    if algorithm not in ("fast", "stable"):
        raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    x = _inexact(x)
    if mean is None:
        mean = jnp.mean(x, axis=axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = jnp.mean(jnp.square(jnp.subtract(x, mean)), axis=axis, keepdims=True, where=where)
        else:
            variance = jnp.clip(jnp.subtract(jnp.mean(jnp.square(x), axis=axis, keepdims=True, where=where),
                                             jnp.square(mean)), 0)
    return jnp.multiply(jnp.subtract(x, mean), lax.rsqrt(jnp.add(variance, epsilon)))


normalize = standardize


def identity(x):
    """The identity activation: ``x`` as an array, unchanged."""
    return _arr(x)




def tanh(x):
    """Hyperbolic tangent activation, elementwise (the same function as ``jnp.tanh``).
    """
    return jnp.tanh(x)


def mish(x):
    """x * tanh(softplus(x))."""
    x = _inexact(x)
    return jnp.multiply(x, jnp.tanh(softplus(x)))


def squareplus(x, b=4):
    """(x + sqrt(x**2 + b)) / 2."""
    x = _inexact(x)
    return jnp.divide(jnp.add(x, jnp.sqrt(jnp.add(jnp.square(x), b))), 2)


def sparse_plus(x):
    """0 for x <= -1, x for x >= 1, (x + 1)**2 / 4 between."""
    x = _inexact(x)
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, jnp.square(x + 1.0) / 4))


def sparse_sigmoid(x):
    """The derivative of `sparse_plus`: clip((x + 1) / 2, 0, 1)."""
    x = _inexact(x)
    return jnp.multiply(0.5, jnp.clip(jnp.add(x, 1.0), 0.0, 2.0))


def log1mexp(x):
    """log(1 - exp(-x)) for x > 0, through expm1 below log 2 and log1p above."""
    x = _inexact(x)
    c = _math.log(2.0)
    return jnp.where(x < c, jnp.log(jnp.negative(jnp.expm1(jnp.negative(x)))),
                     jnp.log1p(jnp.negative(jnp.exp(jnp.negative(x)))))


def logmeanexp(x, axis=None, where=None, keepdims=False):
    """log(mean(exp(x))) over `axis`, stably (`logsumexp` minus log of the count)."""
    x = _inexact(x)
    lse = _logsumexp(x, axis=axis, keepdims=keepdims, where=where)
    if where is None:
        shape = _aval(x).shape
        axes = range(len(shape)) if axis is None else ((axis,) if isinstance(axis, int) else axis)
        count = _math.prod(shape[a] for a in axes)
        return jnp.subtract(lse, _math.log(count) if count else -_math.inf)
    count = jnp.sum(jnp.broadcast_to(where, _aval(x).shape), axis=axis, keepdims=keepdims)
    return jnp.subtract(lse, jnp.log(count.astype(lse.dtype)))


from ._attention import dot_product_attention  # noqa: E402,F401
from . import initializers  # noqa: E402,F401
