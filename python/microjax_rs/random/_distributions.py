"""The distributions of `jax.random` built on its uniform / normal draws:
closed-form transforms (cauchy, laplace, pareto, ...), the gamma family
(Marsaglia-Tsang rejection per element, with the implicit reparameterization
gradient), and the integer rejection samplers (poisson, binomial).

Each follows JAX's algorithm and JAX's key consumption (the same splits, in the
same order and shapes), so the draws for a key match JAX's: bit for bit where
only integer and exact float arithmetic is involved, to a few ulp through
transcendental functions, and per element (the rare rejection decided by the
last ulp of a logarithm aside) for the rejection samplers.
"""
import math

import numpy as np

from .. import core, dtypes, lax
from .. import numpy as jnp
from ..custom_derivatives import custom_jvp
from . import _prng as _r

__all__ = [
    "ball", "beta", "binomial", "cauchy", "chisquare", "clone", "dirichlet",
    "double_sided_maxwell", "f", "gamma", "generalized_normal", "geometric", "key_dtype",
    "laplace", "loggamma", "logistic", "lognormal", "maxwell", "multinomial", "orthogonal",
    "pareto", "poisson", "rayleigh", "t", "triangular", "wald", "weibull_min", "random_gamma_p",
]


# ----------------------------------------------------------------------------
# Shared argument handling


def _dtype(name, dtype, kind="float"):
    dname = dtypes.canonical_name(dtypes.dtype_name(float if dtype is None else dtype)) \
        if kind == "float" else dtypes.canonical_name(dtypes.dtype_name(int if dtype is None else dtype))
    ok = dtypes.is_float_name(dname) if kind == "float" else dtypes.is_int_name(dname)
    if not ok:
        raise ValueError(f"dtype argument to `{name}` must be a{'n int' if kind == 'int' else ' float'}"
                         f" dtype, got {dname}")
    return dname


def _broadcast_shape(name, shape, *args):
    """The draw shape: `shape`, or the broadcast of the parameters' shapes."""
    arg_shapes = [tuple(jnp.shape(a)) for a in args]
    if shape is None:
        return tuple(np.broadcast_shapes(*arg_shapes)) if arg_shapes else ()
    shape = _r._canonical_shape(shape)
    _r._check_shape(name, shape, *arg_shapes)
    return shape


def _draw_setup(name, key, dtype, shape, *params):
    """The key data, the float dtype name and the shape (given, or broadcast from
    `params`) of the draw `name`."""
    data, _ = _r._check_prng_key(name, key)
    return data, _dtype(name, dtype), _broadcast_shape(name, shape, *params)


def _as(x, dname):
    return lax.convert_element_type(jnp.asarray(x) if not isinstance(x, (int, float)) else x, dname)


def _const(value, dname):
    return jnp.asarray(value, dname)


def _inexact(x):
    """`x` as an array of a float dtype (ints and bools promoted to the default float)."""
    x = jnp.asarray(x)
    if not dtypes.is_float_name(core.get_aval(x).dtype_name):
        x = x.astype(dtypes.default_float_name())
    return x


def key_dtype(impl=None):
    """The dtype of typed keys of `impl` (a name of `prngs`; None: the
    default, `key<fry>` for Threefry-2x32)."""
    return _r.KeyDType(_r._resolve_impl(impl))


def clone(key):
    """A copy of `key` (keys are immutable values: the same key data, as an
    array of the same kind, raw or typed)."""
    data, raw = _r._check_prng_key("clone", key, allow_batched=True)
    return _r._return_keys(raw, data)


# ----------------------------------------------------------------------------
# Closed-form transforms of uniform / normal draws


def cauchy(key, shape=(), dtype=None):
    """Standard Cauchy floats: `tan(pi * (u - 1/2))`."""
    data, _ = _r._check_prng_key("cauchy", key)
    dname = _dtype("cauchy", dtype)
    shape = _r._canonical_shape(shape)
    u = _r._uniform(data, shape, dname, _const(np.finfo(dname).eps, dname), 1.0)
    return lax.tan(lax.mul(_const(np.pi, dname), lax.sub(u, _const(0.5, dname))))


def laplace(key, shape=(), dtype=None):
    """Standard Laplace floats: `sign(u) * log1p(-|u|)`, `u` uniform in (-1, 1)."""
    data, _ = _r._check_prng_key("laplace", key)
    dname = _dtype("laplace", dtype)
    shape = _r._canonical_shape(shape)
    lo = -1.0 + float(np.finfo(dtypes.np_dtype(dname)).epsneg)
    u = _r._uniform(data, shape, dname, _const(lo, dname), 1.0)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


def logistic(key, shape=(), dtype=None):
    """Standard logistic floats: `log(u) - log1p(-u)`."""
    data, _ = _r._check_prng_key("logistic", key)
    dname = _dtype("logistic", dtype)
    shape = _r._canonical_shape(shape)
    u = _r._uniform(data, shape, dname, _const(np.finfo(dtypes.np_dtype(dname)).tiny, dname), 1.0)
    return lax.sub(lax.log(u), lax.log1p(lax.neg(u)))


def lognormal(key, sigma=np.float32(1), shape=None, dtype=None):
    """`exp(sigma * z)`, `z` standard normal."""
    data, dname, shape = _draw_setup("lognormal", key, dtype, shape, sigma)
    return lax.exp(_r._normal(data, shape, dname) * _as(sigma, dname))


def maxwell(key, shape=(), dtype=None):
    """Maxwell floats: the norm of three standard normals."""
    data, _ = _r._check_prng_key("maxwell", key)
    dname = _dtype("maxwell", dtype)
    shape = _r._canonical_shape(shape)
    return _maxwell(data, shape, dname)


def _maxwell(data, shape, dname):
    z = _r._normal(data, (*shape, 3), dname)
    return jnp.linalg.norm(z, axis=-1)


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Double-sided Maxwell floats: a random sign times a Maxwell draw, scaled
    and shifted; the parameters' shape is appended to `shape`."""
    data, _ = _r._check_prng_key("double_sided_maxwell", key)
    dname = _dtype("double_sided_maxwell", dtype)
    shape = _r._canonical_shape(shape)
    params_shape = tuple(np.broadcast_shapes(jnp.shape(loc), jnp.shape(scale)))
    if not shape:
        shape = params_shape
    shape = shape + params_shape
    k_maxwell, k_sign = _r._split2(data)
    rvs = _maxwell(k_maxwell, shape, dname)
    sign = _rademacher(k_sign, shape, dname)
    return sign * rvs * _as(scale, dname) + _as(loc, dname)


def pareto(key, b, shape=None, dtype=None):
    """Pareto floats of shape `b`: `exp(e / b)`, `e` standard exponential."""
    data, dname, shape = _draw_setup("pareto", key, dtype, shape, b)
    e = _exponential(data, shape, dname)
    return lax.exp(e / _as(b, dname))


def _exponential(data, shape, dname):
    u = _r._uniform(data, shape, dname, 0.0, 1.0)
    return lax.neg(lax.log1p(lax.neg(u)))


def rayleigh(key, scale, shape=None, dtype=None):
    """Rayleigh floats: `scale * sqrt(-2 log u)`."""
    data, dname, shape = _draw_setup("rayleigh", key, dtype, shape, scale)
    u = _r._uniform(data, shape, dname, 0.0, 1.0)
    scale = jnp.broadcast_to(_as(scale, dname), shape)
    return lax.mul(scale, lax.sqrt(lax.mul(lax.log(u), _const(-2, dname))))


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull floats: `(-log1p(-u)) ** (1 / concentration) * scale`."""
    data, _ = _r._check_prng_key("weibull_min", key)
    dname = _dtype("weibull_min", dtype)
    shape = _r._canonical_shape(shape)
    u = _r._uniform(data, shape, dname, 0.0, 1.0)
    return jnp.power(-jnp.log1p(-u), 1.0 / _as(concentration, dname)) * _as(scale, dname)


def triangular(key, left, mode, right, shape=None, dtype=None):
    """Triangular floats on [left, right] with peak at `mode` (inverse CDF)."""
    data, dname, shape = _draw_setup("triangular", key, dtype, shape, left, mode, right)
    left, mode, right = (jnp.broadcast_to(_as(v, dname), shape) for v in (left, mode, right))
    fc = (mode - left) / (right - left)
    u = _r._uniform(data, shape, dname, 0.0, 1.0)
    out1 = left + lax.sqrt(u * (right - left) * (mode - left))
    out2 = right - lax.sqrt((1 - u) * (right - left) * (right - mode))
    return lax.select(u < fc, out1, out2)


def wald(key, mean, shape=None, dtype=None):
    """Wald (inverse Gaussian, unit shape) floats by Michael-Schucany-Haas."""
    data, dname, shape = _draw_setup("wald", key, dtype, shape, mean)
    k1, k2 = _r._split2(data)
    mean = jnp.broadcast_to(_as(mean, dname), shape)
    v = _r._normal(k1, shape, dname)
    z = _r._uniform(k2, shape, dname, 0.0, 1.0)
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mean_sq = lax.integer_pow(mean, 2)
    sqrt_term = lax.sqrt(4 * mean * y + mean_sq * y_sq)
    x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
    return lax.select(lax.le(z, mean / (mean + x)), x, mean_sq / x)


def geometric(key, p, shape=None, dtype=None):
    """Geometric integers (trials to the first success, from 1):
    `floor(log u / log1p(-p)) + 1`."""
    data, _ = _r._check_prng_key("geometric", key)
    dname = _dtype("geometric", dtype, kind="int")
    shape = _broadcast_shape("geometric", shape, p)
    p = _inexact(p)
    pname = core.get_aval(p).dtype_name
    u = _r._uniform(data, shape, pname, 0.0, 1.0)
    u = jnp.where(u == 0, _const(1, pname), u)
    log_q = jnp.broadcast_to(lax.log1p(lax.neg(p)), shape)
    g = lax.floor(lax.div(lax.log(u), log_q)) + 1
    return g.astype(dname)


def orthogonal(key, n, shape=(), dtype=None, m=None):
    """Haar-distributed `n x m` matrices with orthonormal columns (or rows):
    the QR factor of a normal matrix, its columns' signs fixed by R's diagonal."""
    shape = _r._canonical_shape(shape)
    data, _ = _r._check_prng_key("orthogonal", key)
    dname = _dtype("orthogonal", dtype)
    n = _concrete_index(n, "orthogonal")
    m = n if m is None else _concrete_index(m, "orthogonal")
    z = _r._normal(data, (*shape, max(n, m), min(n, m)), dname)
    q, r = jnp.linalg.qr(z)
    d = jnp.diagonal(r, axis1=-2, axis2=-1)
    x = q * jnp.expand_dims(jnp.sign(d), -2)
    return jnp.swapaxes(x, -1, -2) if n < m else x


def _concrete_index(v, name):
    if isinstance(v, core.Tracer):
        raise _r.ConcretizationTypeError(
            f"Abstract tracer value encountered where concrete value is expected. "
            f"The error occurred in jax.random.{name}()")
    return int(np.asarray(v).item()) if not isinstance(v, int) else v


def generalized_normal(key, p, shape=(), dtype=None):
    """Generalized normal floats of power `p`: a random sign times `g ** (1/p)`,
    `g` gamma of shape `1/p`."""
    shape = _r._canonical_shape(shape)
    data, _ = _r._check_prng_key("generalized_normal", key)
    dname = _dtype("generalized_normal", dtype)
    return _generalized_normal(data, p, shape, dname)


def _generalized_normal(data, p, shape, dname):
    keys = _r._split_data(data, (2,))
    g = _gamma(keys[0], 1 / _as(p, dname), shape, dname)
    sign = _rademacher(keys[1], shape, dname)
    return sign * g ** (1 / _as(p, dname))


def _rademacher(data, shape, dname):
    # jax.random.rademacher(key, shape, dtype): bernoulli(0.5) of the default
    # float width, then 2 * b - 1 in `dname`.
    b = _r._uniform(data, shape, dtypes.default_float_name(), 0.0, 1.0) < 0.5
    b = b.astype(dname)
    return (2 * b - 1).astype(dname)


def ball(key, d, p=2, shape=(), dtype=None):
    """Points uniform in the unit `p`-norm ball of dimension `d`."""
    shape = _r._canonical_shape(shape)
    data, _ = _r._check_prng_key("ball", key)
    dname = _dtype("ball", dtype)
    d = _concrete_index(d, "ball")
    k1, k2 = _r._split2(data)
    g = _generalized_normal(k1, p, (*shape, d), dname)
    e = _exponential(k2, shape, dname)
    p = _as(p, dname)
    return g / (((jnp.abs(g) ** p).sum(-1) + e) ** (1 / p))[..., None]


# ----------------------------------------------------------------------------
# The gamma family


def _gamma_one(data, alpha, log_space):
    """One Gamma(alpha) draw (alpha a scalar) by Marsaglia and Tsang's
    rejection method; alpha < 1 is boosted to alpha + 1 and scaled back by
    `u ** (1 / alpha)`."""
    dname = core.get_aval(alpha).dtype_name
    zero, one, minus_one = _const(0, dname), _const(1, dname), _const(-1, dname)
    third, half, squeeze = _const(1.0 / 3.0, dname), _const(0.5, dname), _const(0.0331, dname)
    boost_mask = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = lax.select(boost_mask, alpha, lax.add(alpha, one))
    d = lax.sub(alpha, third)
    c = lax.div(third, lax.sqrt(d))

    def rejected(state):
        _, x2, v, u = state
        squeeze_fail = lax.ge(u, lax.sub(one, lax.mul(squeeze, lax.mul(x2, x2))))
        log_fail = lax.ge(lax.log(u), lax.add(lax.mul(x2, half),
                                              lax.mul(d, lax.add(lax.sub(one, v), lax.log(v)))))
        return lax.bitwise_and(squeeze_fail, log_fail)

    def propose(state):
        def next_normal(kxv):
            k, sub = _r._split2(kxv[0])
            x = _r._normal(sub, (), dname)
            return k, x, lax.add(one, lax.mul(x, c))

        keys = _r._split_data(state[0], (3,))
        k, x_key, u_key = keys[0], keys[1], keys[2]
        _, x, v = lax.while_loop(lambda kxv: lax.le(kxv[2], zero), next_normal,
                                 (x_key, zero, minus_one))
        u = _r._uniform(u_key, (), dname, 0.0, 1.0)
        return k, lax.mul(x, x), lax.mul(lax.mul(v, v), v), u

    data, sub = _r._split2(data)
    _, _, v, _ = lax.while_loop(rejected, propose, (data, zero, one, _const(2, dname)))
    if log_space:
        log_u = lax.neg(_exponential(sub, (), dname))
        log_boost = lax.select(lax.bitwise_or(boost_mask, log_u == zero), zero,
                               lax.mul(log_u, lax.div(one, alpha_orig)))
        return lax.add(lax.add(lax.log(d), lax.log(v)), log_boost)
    u = lax.sub(one, _r._uniform(sub, (), dname, 0.0, 1.0))
    boost = lax.select(boost_mask, one, lax.pow(u, lax.div(one, alpha_orig)))
    return lax.mul(lax.mul(d, v), boost)


def _gamma_draws(data, a, log_space):
    """Gamma draws of every element of `a`, each with its own key of
    `split(key, a.size)`."""
    from .._vmap import vmap

    shape = tuple(jnp.shape(a))
    size = math.prod(shape)
    if size == 0:
        return jnp.zeros(shape, core.get_aval(a).dtype_name)
    keys = _r._split_data(data, (size,))
    draws = vmap(lambda k, al: _gamma_one(k, al, log_space))(keys, jnp.reshape(a, (size,)))
    return jnp.reshape(draws, shape)


def _gamma_sample_grad(x, a, log_space):
    """d(sample)/d(alpha) at a fixed CDF value (implicit reparameterization);
    in log space d(log sample)/d(alpha)."""
    if log_space:
        x = lax.exp(x)
        dname = core.get_aval(x).dtype_name
        x = jnp.where(x == 0, _const(np.finfo(dtypes.np_dtype(dname)).tiny, dname), x)
        return lax.random_gamma_grad(a, x) / x
    return lax.random_gamma_grad(a, x)


def _gamma(data, a, shape, dname, log_space=False):
    a = jnp.broadcast_to(lax.convert_element_type(a, dname), shape)

    @custom_jvp
    def draw(alpha):
        return _gamma_draws(data, alpha, log_space)

    @draw.defjvp
    def draw_jvp(primals, tangents):
        (alpha,), (dalpha,) = primals, tangents
        x = draw(alpha)
        return x, lax.mul(dalpha, _gamma_sample_grad(lax.stop_gradient(x), alpha, log_space))

    return draw(a)


def gamma(key, a, shape=None, dtype=None):
    """Gamma(a) floats (unit scale); differentiable in `a` by implicit
    reparameterization."""
    data, dname, shape = _draw_setup("gamma", key, dtype, shape, a)
    return _gamma(data, a, shape, dname)


def loggamma(key, a, shape=None, dtype=None):
    """log of Gamma(a) floats, drawn in log space (accurate for small `a`)."""
    data, _ = _r._check_prng_key("loggamma", key)
    dname = _dtype("gamma", dtype)
    shape = _broadcast_shape("gamma", shape, a)
    return _gamma(data, a, shape, dname, log_space=True)


random_gamma_p = core.Primitive("random_gamma")


@random_gamma_p.def_impl
def _random_gamma_impl(key, a, *, log_space=False):
    """`random_gamma_p.bind(keys, a, log_space=...)`: one gamma draw per element
    of `a`; `keys` (typed or raw) cover the leading axes of `a`, and each key
    is split over the rest, as JAX's primitive."""
    from .._vmap import vmap

    keys, _ = _r._check_prng_key("random_gamma", key, allow_batched=True)
    a = jnp.asarray(a)
    lead = keys.ndim
    if lead == 0:
        return _gamma_draws(keys, a, log_space)
    flat_keys = keys.reshape(-1)
    rest = tuple(jnp.shape(a))[lead:]
    flat_a = jnp.reshape(a, (-1, *rest))
    draws = vmap(lambda k, al: _gamma_draws(k, al, log_space))(flat_keys, flat_a)
    return jnp.reshape(draws, jnp.shape(a))


@random_gamma_p.def_abstract_eval
def _random_gamma_abstract_eval(key, a, *, log_space=False):
    return core.ShapedArray(a.shape, a.dtype)


def _random_gamma_batch(batched_args, batch_dims, *, log_space=False):
    """Batch axes to the front of both operands (a key axis then covers it)."""
    key, a = batched_args
    kdim, adim = batch_dims
    size = next(jnp.shape(x)[d] for x, d in zip(batched_args, batch_dims) if d is not None)
    key = jnp.moveaxis(key, kdim, 0) if kdim is not None else \
        jnp.broadcast_to(key, (size, *jnp.shape(key)))
    a = jnp.moveaxis(a, adim, 0) if adim is not None else jnp.broadcast_to(a, (size, *jnp.shape(a)))
    return random_gamma_p.bind(key, a, log_space=log_space), 0


def _random_gamma_jvp(primals, tangents, *, log_space=False):
    key, a = primals
    _, da = tangents
    x = random_gamma_p.bind(key, a, log_space=log_space)
    if type(da).__name__ == "Zero":
        return x, jnp.zeros_like(x)
    return x, lax.mul(da, _gamma_sample_grad(x, a, log_space))


def _register_gamma_rules():
    from ..interpreters import ad, batching

    batching.primitive_batchers[random_gamma_p] = _random_gamma_batch
    ad.primitive_jvps[random_gamma_p] = _random_gamma_jvp


_register_gamma_rules()


def beta(key, a, b, shape=None, dtype=None):
    """Beta(a, b) floats from two log-gamma draws (split keys)."""
    data, dname, shape = _draw_setup("beta", key, dtype, shape, a, b)
    a, b = _as(a, dname), _as(b, dname)
    key_a, key_b = _r._split2(data)
    a, b = jnp.broadcast_to(a, shape), jnp.broadcast_to(b, shape)
    log_ga = _gamma(key_a, a, shape, dname, log_space=True)
    log_gb = _gamma(key_b, b, shape, dname, log_space=True)
    log_max = lax.max(log_ga, log_gb)
    ga, gb = jnp.exp(log_ga - log_max), jnp.exp(log_gb - log_max)
    return ga / (ga + gb)


def dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet(alpha) vectors (the last axis of `alpha`): a softmax of
    log-gamma draws."""
    from .. import nn

    data, _ = _r._check_prng_key("dirichlet", key)
    dname = _dtype("dirichlet", dtype)
    alpha = jnp.asarray(alpha)
    if jnp.ndim(alpha) < 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {jnp.ndim(alpha)}")
    ashape = tuple(jnp.shape(alpha))
    if shape is None:
        shape = ashape[:-1]
    else:
        shape = _r._canonical_shape(shape)
        _r._check_shape("dirichlet", shape, ashape[:-1])
    alpha = lax.convert_element_type(alpha, dname)
    log_g = _gamma(data, alpha, shape + ashape[-1:], dname, log_space=True)
    return nn.softmax(log_g, -1)


def t(key, df, shape=None, dtype=None):
    """Student's t floats: `z * sqrt(df / 2 / g)`, g ~ Gamma(df / 2)."""
    data, dname, shape = _draw_setup("t", key, dtype, shape, df)
    df = _as(df, dname)
    key_n, key_g = _r._split2(data)
    n = _r._normal(key_n, shape, dname)
    half_df = lax.div(df, _const(2, dname))
    g = _gamma(key_g, half_df, shape, dname)
    return n * jnp.sqrt(half_df / g)


def chisquare(key, df, shape=None, dtype=None):
    """Chi-square floats: `2 * exp(loggamma(df / 2))`."""
    data, dname, shape = _draw_setup("chisquare", key, dtype, shape, df)
    return _chisquare(data, df, shape, dname)


def _chisquare(data, df, shape, dname):
    half_df = lax.div(_as(df, dname), _const(2, dname))
    log_g = _gamma(data, half_df, shape, dname, log_space=True)
    return lax.mul(jnp.exp(log_g), _const(2, dname))


def f(key, dfnum, dfden, shape=None, dtype=None):
    """F floats: the ratio of two scaled chi-square draws."""
    data, dname, shape = _draw_setup("f", key, dtype, shape, dfnum, dfden)
    dfnum, dfden = _as(dfnum, dname), _as(dfden, dname)
    key_dfd, key_dfn = _r._split2(data)
    num = lax.div(_chisquare(key_dfn, dfnum, shape, dname), dfnum)
    den = lax.div(_chisquare(key_dfd, dfden, shape, dname), dfden)
    return lax.div(num, den)


# ----------------------------------------------------------------------------
# Integer rejection samplers


def _poisson_knuth(data, lam, shape, dname):
    def body(carry):
        i, k, rng, log_prod = carry
        rng, sub = _r._split2(rng)
        k = lax.select(log_prod > -lam, k + 1, k)
        u = _r._uniform(sub, shape, "float32", 0.0, 1.0)
        return i + 1, k, rng, log_prod + jnp.log(u)

    def cond(carry):
        return jnp.any(carry[3] > -lam)

    k0 = jnp.zeros(shape, dname)
    k = lax.while_loop(cond, body, (0, k0, data, jnp.zeros(shape, "float32")))[1]
    return (k - 1).astype(dname)


def _poisson_rejection(data, lam, shape, dname):
    # Hörmann's transformed rejection with squeeze (PTRS).
    log_lam = lax.log(lam)
    b = 0.931 + 2.53 * lax.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body(carry):
        i, k_out, accepted, rng = carry
        keys = _r._split_data(rng, (3,))
        rng, k0, k1 = keys[0], keys[1], keys[2]
        u = _r._uniform(k0, shape, "float32", 0.0, 1.0) - 0.5
        v = _r._uniform(k1, shape, "float32", 0.0, 1.0)
        u_shifted = 0.5 - abs(u)
        k = lax.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = lax.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        tt = -lam + k * log_lam - lax.lgamma(k + 1)
        accept1 = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0) | (u_shifted < 0.013) & (v > u_shifted)
        accept = accept1 | ~reject & (s <= tt)
        return i + 1, lax.select(accept, k, k_out), accepted | accept, rng

    def cond(carry):
        return jnp.any(~carry[2])

    k0 = jnp.full(shape, -1, "float32")
    k = lax.while_loop(cond, body, (0, k0, jnp.zeros(shape, bool), data))[1]
    return k.astype(dname)


def poisson(key, lam, shape=None, dtype=None):
    """Poisson(lam) integers: Knuth's product of uniforms for lam < 10, the
    PTRS rejection sampler above (both loops over the whole array)."""
    data, _ = _r._check_prng_key("poisson", key)
    dname = _dtype("poisson", dtype, kind="int")
    if data._impl.name != "threefry2x32":
        raise NotImplementedError("`poisson` is only implemented for the threefry2x32 RNG, "
                                  f"not {data._impl.name}")
    shape = tuple(jnp.shape(lam)) if shape is None else _r._canonical_shape(shape)
    lam = lax.convert_element_type(jnp.broadcast_to(jnp.asarray(lam), shape), "float32")
    use_knuth = jnp.isnan(lam) | (lam < 10)
    lam_knuth = lax.select(use_knuth, lam, jnp.zeros_like(lam))
    lam_rej = lax.select(use_knuth, jnp.full_like(lam, 100000.0), lam)
    result = lax.select(use_knuth, _poisson_knuth(data, lam_knuth, shape, dname),
                        _poisson_rejection(data, lam_rej, shape, dname))
    return lax.select(lam == 0, jnp.zeros_like(result), result)


_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.010411265261972, 0.00925546218271273,
                  0.00833056343336287)


def _stirling_tail(k):
    """log(k!) minus its Stirling approximation: tabled for k <= 9."""
    dname = core.get_aval(k).dtype_name
    table = jnp.asarray(np.array(_STIRLING_TAIL), dname)
    small = k <= 9
    kc = lax.clamp(_const(0.0, dname), k, _const(9.0, dname))
    kp1sq = (kc + 1) * (kc + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (kc + 1)
    return lax.select(small, table[jnp.asarray(jnp.floor(kc), "int32")], approx)


def _binomial_inversion(data, count, prob, shape, dname):
    log1mp = jnp.log1p(-prob)
    pname = core.get_aval(prob).dtype_name

    def body(carry):
        i, num_geom, geom_sum, rng = carry
        sub, rng = _r._split2(rng)
        num_geom = lax.select(geom_sum <= count, num_geom + 1, num_geom)
        u = _r._uniform(sub, shape, pname, 0.0, 1.0)
        geom_sum = geom_sum + jnp.ceil(jnp.log(u) / log1mp)
        return i + 1, num_geom, geom_sum, rng

    def cond(carry):
        return jnp.any(carry[2] <= count)

    zeros = jnp.zeros(shape, pname)
    k = lax.while_loop(cond, body, (0, zeros, zeros, data))[1]
    return (k - 1).astype(dname)


def _btrs(data, count, prob, shape, dname):
    # Hörmann's transformed rejection for binomials (BTRS).
    pname = core.get_aval(prob).dtype_name
    stddev = jnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = jnp.floor((count + 1) * prob)

    def body(carry):
        i, k_out, accepted, rng = carry
        keys = _r._split_data(rng, (3,))
        rng, k0, k1 = keys[0], keys[1], keys[2]
        u = _r._uniform(k0, shape, pname, 0.0, 1.0)
        v = _r._uniform(k1, shape, pname, 0.0, 1.0)
        u = u - 0.5
        us = 0.5 - jnp.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = jnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = jnp.log(v * alpha / (a / (us * us) + b))
        ub = ((m + 0.5) * jnp.log((m + 1) / (r * (count - m + 1)))
              + (count + 1) * jnp.log((count - m + 1) / (count - k + 1))
              + (k + 0.5) * jnp.log(r * (count - k + 1) / (k + 1))
              + _stirling_tail(m) + _stirling_tail(count - m)
              - _stirling_tail(k) - _stirling_tail(count - k))
        accept = accept1 | ~reject & (v <= ub)
        return i + 1, lax.select(accept, k, k_out), accepted | accept, rng

    def cond(carry):
        return jnp.any(~carry[2])

    k0 = jnp.full(shape, -1, pname)
    return lax.while_loop(cond, body, (0, k0, jnp.zeros(shape, bool), data))[1].astype(dname)


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial(n, p) counts as floats: geometric inversion when n * min(p, 1-p)
    <= 10, BTRS rejection otherwise (drawn for min(p, 1-p) and reflected)."""
    data, _ = _r._check_prng_key("binomial", key)
    dname = _dtype("binomial", dtype)
    shape = None if shape is None else _r._canonical_shape(shape)
    return _binomial(data, n, p, shape, dname)


def _binomial(data, count, prob, shape, dname):
    if shape is None:
        shape = tuple(np.broadcast_shapes(jnp.shape(count), jnp.shape(prob)))
    else:
        _r._check_shape("binomial", shape, jnp.shape(count), jnp.shape(prob))
    prob = _inexact(prob)
    pname = core.get_aval(prob).dtype_name
    count = jnp.broadcast_to(lax.convert_element_type(jnp.asarray(count), pname), shape)
    prob = jnp.broadcast_to(prob, shape)
    p_lt_half = prob < 0.5
    q = lax.select(p_lt_half, prob, 1.0 - prob)
    count_nan_or_neg = jnp.isnan(count) | (count < 0.0)
    count_inf = jnp.isinf(count)
    q_is_nan = jnp.isnan(q)
    q_l_0 = q < 0.0
    q = lax.select(q_is_nan | q_l_0, jnp.full_like(q, 0.01), q)
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    count = jnp.floor(count)
    count_inv = lax.select(use_inversion, count, jnp.zeros_like(count))
    count_btrs = lax.select(use_inversion, jnp.full_like(count, 10000.0), count)
    q_btrs = lax.select(use_inversion, jnp.full_like(q, 0.5), q)
    samples = lax.select(use_inversion, _binomial_inversion(data, count_inv, q, shape, dname),
                         _btrs(data, count_btrs, q_btrs, shape, dname))
    invalid = q_l_0 | q_is_nan | count_nan_or_neg
    samples = lax.select(invalid, jnp.full_like(samples, np.nan), samples)
    samples = lax.select(count_inf & ~invalid, jnp.full_like(samples, np.inf), samples)
    return lax.select(p_lt_half | count_nan_or_neg | q_is_nan | count_inf, samples,
                      count.astype(dname) - samples)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Multinomial(n, p) counts (the last axis of `p`), as a chain of binomial
    draws over the categories (one key each)."""
    data, _ = _r._check_prng_key("multinomial", key)
    n, p, name = _r._as_common_float(n, p)
    dname = dtypes.canonical_name(dtypes.dtype_name(float if dtype is None else dtype))
    shape = tuple(jnp.shape(p)) if shape is None else _r._canonical_shape(shape)
    n = jnp.broadcast_to(n, shape[:-1])
    p = jnp.moveaxis(jnp.broadcast_to(p, shape), -1, 0)
    remaining = jnp.flip(jnp.cumsum(jnp.flip(p, 0), 0), 0)
    ratios = p / jnp.where(remaining == 0, _const(1, name), remaining)
    keys = _r._split_data(data, (jnp.shape(ratios)[0],))

    def step(remainder, ratio_key):
        ratio, k = ratio_key
        count = _binomial(k, remainder, jnp.clip(ratio, 0, 1), None, name)
        return remainder - count, count

    _, counts = lax.scan(step, n, (ratios, keys), unroll=unroll)
    return jnp.moveaxis(counts, 0, -1).astype(dname)
