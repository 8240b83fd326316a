"""The special functions of `jax.scipy.special` beyond the error and gamma
basics: incomplete gamma and beta, Bessel, zeta and polygamma, the normal
distribution's functions, exponential integrals, ... Each is built on lax
primitives (`igamma`, `regularized_incomplete_beta`, `bessel_i0e`, `zeta`,
...) and jnp; derivatives follow JAX's (custom JVP rules where JAX defines
one; a rule calls the undecorated implementation, so that it can be differentiated again).
Series and continued fractions are evaluated with a fixed number of
terms, enough for float64 on the function's range."""
import math as _math
from fractions import Fraction as _Fraction

import numpy as _np

from .. import lax
from .. import numpy as jnp
from ..api import jit
from ..custom_derivatives import custom_jvp
from .._src.numpy.util import _arr, _aval, _promote_inexact

__all__ = [
    "bernoulli", "beta", "betainc", "betaln", "boxcox", "boxcox1p", "comb", "dawsn", "erfcx", "exp1", "expi",
    "factorial", "gamma", "gammainc", "gammaincc", "gammasgn", "i0", "i1", "kl_div", "log_ndtr", "loggamma",
    "multigammaln", "ndtr", "ndtri", "poch", "polygamma", "rel_entr", "zeta", "spence", "expn",
    "sici", "fresnel", "owens_t", "bessel_jn", "hyp1f1", "hyp2f1",
]

_SQRT2 = _math.sqrt(2.0)
_SQRT_HALF = 0.5 * _math.sqrt(2.0)  # rounds as JAX's and SciPy's sqrt(1/2)
_LOG_SQRT_2PI = 0.5 * _math.log(2.0 * _math.pi)
_EULER = 0.57721566490153286061


def _inexact(*args):
    return _promote_inexact(*(_arr(a) for a in args))


def _on_inexact(impl, name, doc):
    """The public function `name(x)`: `x` promoted to an inexact array, then `impl(x)`
    (a custom_jvp-decorated implementation), compiled (see `_compiled`)."""
    def fn(x):
        (x,) = _inexact(x)
        return impl(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    # Under `jit`, as JAX defines its series-based special functions: their hundreds of
    # elementwise steps compile once per input shape and dtype instead of dispatching one by
    # one on every eager call, and `vmap`/`grad` of them transform one traced program.
    return jit(fn)


def _is_f64(x):
    return _np.dtype(_aval(x).dtype) == _np.float64


# ----------------------------------------------------------------- gamma and beta


def gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x)."""
    a, x = _inexact(a, x)
    return lax.igamma(a, x)


def gammaincc(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    a, x = _inexact(a, x)
    return lax.igammac(a, x)


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b); differentiable in x only (as JAX)."""
    a, b, x = _inexact(a, b, x)
    return lax.betainc(a, b, x)


def gammasgn(x):
    """The sign of Gamma(x): 1 for x > 0 (and +0), -1 for -0, alternating between the poles
    for x < 0, NaN at the poles (the non-positive integers) and for NaN."""
    (x,) = _inexact(x)
    fl = jnp.floor(x)
    between = jnp.where(jnp.remainder(fl, 2.0) == 0.0, 1.0, -1.0)
    neg = jnp.where(x == fl, _np.nan, between)
    out = jnp.where(x > 0, 1.0, jnp.where(x == 0, jnp.copysign(1.0, x), neg))
    return lax.stop_gradient(jnp.where(jnp.isnan(x), x, out))


def gamma(x):
    """The gamma function, as gammasgn(x) * exp(gammaln(x))."""
    (x,) = _inexact(x)
    return gammasgn(x) * jnp.exp(lax.lgamma(x))


def loggamma(x):
    """log Gamma(x) for real x > 0; NaN elsewhere (the real-valued case of JAX's loggamma)."""
    (x,) = _inexact(x)
    return jnp.where(x > 0, lax.lgamma(x), _np.nan)


def betaln(a, b):
    """log|B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b)."""
    a, b = _inexact(a, b)
    return lax.lgamma(a) + lax.lgamma(b) - lax.lgamma(a + b)


def beta(a, b):
    """The beta function B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b)."""
    a, b = _inexact(a, b)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * jnp.exp(betaln(a, b))


def factorial(n, exact=False):
    """n! = Gamma(n + 1) for n >= 0, and 0 for n < 0."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    (n,) = _inexact(n)
    return jnp.where(n < 0, 0.0, gamma(n + 1.0))


def comb(N, k, *, repetition=False):
    """The binomial coefficient C(N, k) through gammaln (0 where k < 0, N < 0 or k > N);
    with `repetition`, C(N + k - 1, k)."""
    N, k = _inexact(N, k)
    if repetition:
        return comb(N + k - 1.0, k)
    ok = (k >= 0) & (N >= 0) & (k <= N)
    safe_n = jnp.where(ok, N, 1.0)
    safe_k = jnp.where(ok, k, 0.0)
    val = jnp.exp(lax.lgamma(safe_n + 1.0) - lax.lgamma(safe_k + 1.0) - lax.lgamma(safe_n - safe_k + 1.0))
    return jnp.where(ok, val, 0.0)


def poch(z, m):
    """The Pochhammer symbol (rising factorial) Gamma(z + m) / Gamma(z); NaN where z is a
    non-positive integer (as JAX)."""
    z, m = _inexact(z, m)
    pole = (z <= 0) & (z == jnp.floor(z))
    sign = gammasgn(z + m) * gammasgn(z)
    val = sign * jnp.exp(lax.lgamma(z + m) - lax.lgamma(z))
    return jnp.where(m == 0, 1.0, jnp.where(pole, _np.nan, val))


def multigammaln(a, d):
    """The log of the multivariate gamma function of dimension `d` (a Python int)."""
    d = _concrete_int(d, "d")
    (a,) = _inexact(a)
    out = jnp.full(jnp.shape(a), d * (d - 1) / 4.0 * _math.log(_math.pi), dtype=a.dtype)
    for j in range(d):
        out = out + lax.lgamma(a - j / 2.0)
    return out


def _concrete_int(v, name):
    if isinstance(v, (bool, _np.bool_)) or not isinstance(v, (int, _np.integer)):
        try:
            f = float(v)
        except TypeError:
            raise TypeError(f"{name} must be a concrete integer, got {v!r}") from None
        if f != int(f):
            raise ValueError(f"{name} must be an integer, got {v!r}")
        v = int(f)
    return int(v)


def polygamma(n, x):
    """psi^(n)(x), the n-th derivative of digamma; `n` must have an integer dtype (JAX's
    ValueError otherwise). Differentiable in x."""
    n = _arr(n)
    nd = _np.dtype(_aval(n).dtype)
    if not _np.issubdtype(nd, _np.integer):
        raise ValueError(f"Argument `n` to polygamma must be of integer type. Got dtype {nd}.")
    (x,) = _inexact(x)
    n = lax.convert_element_type(n, x.dtype)
    n, x = _inexact(n, x)
    return lax.polygamma(n, x)


def _zeta_series(s, a):
    """Hurwitz zeta by Euler-Maclaurin summation written with jnp (N leading terms, the
    integral, and M Bernoulli corrections), used to differentiate zeta in both arguments."""
    big = _is_f64(a)
    n_terms = 16 if big else 8
    out = jnp.zeros_like(s)
    for k in range(n_terms):
        out = out + (a + k) ** -s
    an = a + n_terms
    out = out + an ** (1.0 - s) / (s - 1.0)
    t0 = an ** -s
    corr = jnp.full_like(s, 0.5)
    fac = jnp.ones_like(s)
    for j in range(n_terms):
        # (s)(s+1)...(s+2j) / an^(2j+1) * B_{2j+2} / (2j+2)!
        fac = fac * (s + 2 * j) / an
        b2 = float(_bernoulli_fractions(2 * j + 2)[2 * j + 2]) / _math.factorial(2 * j + 2)
        corr = corr + fac * b2
        fac = fac * (s + 2 * j + 1) / an
    return out + t0 * corr


@custom_jvp
def _zeta(x, q):
    return lax.zeta(x, q)


@_zeta.defjvp
def _zeta_jvp(primals, tangents):
    from .._grad import jvp
    return jvp(_zeta_series, primals, tangents)


def zeta(x, q=None):
    """The Hurwitz zeta function sum_n (n + q)^-x; the Riemann function (q=None) is not
    implemented, as in JAX. Derivatives in both arguments through Euler-Maclaurin summation."""
    if q is None:
        raise NotImplementedError("Riemann zeta function not implemented; pass q != None to compute "
                                  "the Hurwitz Zeta function.")
    x, q = _inexact(x, q)
    return _zeta(x, q)


def _bernoulli_fractions(n):
    """B_0 .. B_n as exact fractions (B_1 = -1/2)."""
    bs = [_Fraction(1)]
    for m in range(1, n + 1):
        acc = _Fraction(0)
        for k in range(m):
            acc += _math.comb(m + 1, k) * bs[k]
        bs.append(-acc / (m + 1))
    return bs


def bernoulli(n):
    """The Bernoulli numbers B_0 .. B_n (B_1 = -1/2) for a Python int n >= 0."""
    n = _concrete_int(n, "n")
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    return jnp.asarray([float(b) for b in _bernoulli_fractions(n)])


# ----------------------------------------------------------------- Bessel


def i0(x):
    """The modified Bessel function of order 0, exp(|x|) * i0e(x)."""
    (x,) = _inexact(x)
    return jnp.exp(jnp.abs(x)) * lax.bessel_i0e(x)


def i1(x):
    """The modified Bessel function of order 1, exp(|x|) * i1e(x)."""
    (x,) = _inexact(x)
    return jnp.exp(jnp.abs(x)) * lax.bessel_i1e(x)


# ----------------------------------------------------------------- entropies and transforms


def kl_div(p, q):
    """The elementwise Kullback-Leibler term p log(p/q) - p + q (q where p == 0 <= q, inf
    outside the domain)."""
    p, q = _inexact(p, q)
    both = (p > 0) & (q > 0)
    safe_p = jnp.where(both, p, 1.0)
    safe_q = jnp.where(both, q, 1.0)
    inside = safe_p * jnp.log(safe_p / safe_q) - safe_p + safe_q
    return jnp.where(both, inside, jnp.where((p == 0) & (q >= 0), q, _np.inf))


def rel_entr(p, q):
    """The elementwise relative entropy p log(p/q) (0 where p == 0 <= q, inf outside the
    domain)."""
    p, q = _inexact(p, q)
    both = (p > 0) & (q > 0)
    safe_p = jnp.where(both, p, 1.0)
    safe_q = jnp.where(both, q, 1.0)
    inside = safe_p * jnp.log(safe_p / safe_q)
    return jnp.where(both, inside, jnp.where((p == 0) & (q >= 0), 0.0, _np.inf))


def boxcox(x, lmbda):
    """The Box-Cox transform (x^lmbda - 1) / lmbda, log(x) at lmbda == 0."""
    x, lmbda = _inexact(x, lmbda)
    lx = jnp.log(x)
    safe_l = jnp.where(lmbda == 0, 1.0, lmbda)
    return jnp.where(lmbda == 0, lx, jnp.expm1(safe_l * lx) / safe_l)


def boxcox1p(x, lmbda):
    """The Box-Cox transform of 1 + x, log1p(x) at lmbda == 0."""
    x, lmbda = _inexact(x, lmbda)
    lx = jnp.log1p(x)
    safe_l = jnp.where(lmbda == 0, 1.0, lmbda)
    return jnp.where(lmbda == 0, lx, jnp.expm1(safe_l * lx) / safe_l)


# ----------------------------------------------------------------- the normal distribution


def ndtr(x):
    """The standard normal CDF, through erf near 0 and erfc in the tails."""
    (x,) = _inexact(x)
    z = x * _SQRT_HALF
    small = jnp.abs(z) < _SQRT_HALF
    tail = jnp.where(z > 0, 1.0 - 0.5 * lax.erfc(z), 0.5 * lax.erfc(-z))
    return jnp.where(small, 0.5 + 0.5 * lax.erf(z), tail)


def _log_ndtr_impl(x, series_order):
    lower = -20.0 if _is_f64(x) else -10.0
    xl = jnp.minimum(x, lower)
    x2 = xl * xl
    # log(1 + sum_n (-1)^n (2n-1)!! / x^(2n)), the asymptotic series of the lower tail
    series = jnp.ones_like(xl)
    term = jnp.ones_like(xl)
    for n in range(1, series_order + 1):
        term = term * (-(2 * n - 1)) / x2
        series = series + term
    lower_tail = -0.5 * x2 - jnp.log(-xl) - _LOG_SQRT_2PI + jnp.log(series)
    # log(ndtr(x)) below 0, log1p(-ndtr(-x)) above (no cancellation in 1 - ndtr(-x))
    xm = jnp.maximum(x, lower)
    middle = jnp.where(xm > 0, jnp.log1p(-ndtr(-jnp.abs(xm))), jnp.log(ndtr(jnp.minimum(xm, 0.0))))
    return jnp.where(x > lower, middle, lower_tail)


def log_ndtr(x, series_order=3):
    """log of the standard normal CDF, accurate in both tails: log1p(-ndtr(-x)) above 0 and an
    asymptotic series of `series_order` terms below -20 (-10 in float32)."""
    if not isinstance(series_order, int) or isinstance(series_order, bool):
        raise TypeError("series_order must be a Python integer.")
    if series_order < 0:
        raise ValueError("series_order must be non-negative.")
    if series_order > 30:
        raise ValueError("series_order must be <= 30.")
    (x,) = _inexact(x)
    return _log_ndtr(x, series_order)


def _log_ndtr_fn(x, series_order):
    return _log_ndtr_impl(x, series_order)


_log_ndtr = custom_jvp(_log_ndtr_fn, nondiff_argnums=(1,))


@_log_ndtr.defjvp
def _log_ndtr_jvp(series_order, primals, tangents):
    (x,), (t,) = primals, tangents
    y = _log_ndtr_impl(x, series_order)
    # d/dx log ndtr(x) = pdf(x) / ndtr(x), in logs
    return y, t * jnp.exp(-0.5 * x * x - _LOG_SQRT_2PI - y)


def _ndtri_lower(q):
    """ndtri on 0 < q <= 1/2: an erf_inv or tail start, refined by Newton steps on
    log_ndtr(x) = log(q) (log_ndtr is concave, so Newton converges from either side).
    The tail start takes over well before 2q - 1 rounds to -1 (sooner in float32)."""
    tiny = q < (1e-8 if _is_f64(q) else 1e-4)
    safe_tiny = jnp.where(tiny, q, 1e-10)
    t = -2.0 * jnp.log(safe_tiny)
    x_tail = -jnp.sqrt(t - jnp.log(t) - 2.0 * _LOG_SQRT_2PI)
    x_mid = _SQRT2 * lax.erf_inv(2.0 * jnp.where(tiny, 0.25, q) - 1.0)
    x = jnp.where(tiny, x_tail, x_mid)
    lq = jnp.log(q)
    for _ in range(4):
        ln = _log_ndtr_impl(x, 12)
        x = x - (ln - lq) * jnp.exp(ln + 0.5 * x * x + _LOG_SQRT_2PI)
    return x


def _ndtri_fn(p):
    upper = p > 0.5
    q = jnp.where(upper, 1.0 - p, p)
    inside = (q > 0) & (q <= 0.5)
    x = _ndtri_lower(jnp.where(inside, q, 0.25))
    x = jnp.where(upper, -x, x)
    edge = jnp.where(p == 0, -_np.inf, jnp.where(p == 1, _np.inf, _np.nan))
    return jnp.where((p > 0) & (p < 1), x, edge)


_ndtri = custom_jvp(_ndtri_fn)


@_ndtri.defjvp
def _ndtri_jvp(primals, tangents):
    (p,), (t,) = primals, tangents
    x = _ndtri_fn(p)
    # 1 / pdf(x)
    return x, t * jnp.exp(0.5 * x * x + _LOG_SQRT_2PI)


def ndtri(p):
    """The inverse of ndtr: -inf at 0, inf at 1, NaN outside [0, 1]."""
    (p,) = _inexact(p)
    return _ndtri(p)


# ----------------------------------------------------------------- erfcx, dawsn


def _erfcx_fn(x):
    # exp(x^2) erfc(x) below 2; above, the continued fraction
    # erfc(x) = exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))) evaluated backward.
    small = x < 2.0
    xs = jnp.where(small, x, 0.0)
    direct = jnp.exp(xs * xs) * lax.erfc(xs)
    xb = jnp.where(small, 2.0, x)
    xb = jnp.where(jnp.isinf(xb), 1e300 if _is_f64(x) else 1e30, xb)
    frac = xb
    for k in range(80, 0, -1):
        frac = xb + (k / 2.0) / frac
    cf = 1.0 / (_math.sqrt(_math.pi) * frac)
    return jnp.where(small, direct, cf)


_erfcx = custom_jvp(_erfcx_fn)


@_erfcx.defjvp
def _erfcx_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    y = _erfcx_fn(x)
    return y, t * (2.0 * x * y - 2.0 / _math.sqrt(_math.pi))


erfcx = _on_inexact(_erfcx, "erfcx", "The scaled complementary error function exp(x^2) erfc(x).")


def _dawsn_fn(x):
    # |x| <= 6.5: exp(-x^2) sum_n x^(2n+1) / (n! (2n+1)) (positive terms); beyond, the
    # asymptotic series 1/(2x) sum_n (2n-1)!! / (2x^2)^n.
    ax = jnp.abs(x)
    small = ax <= 6.5
    xs = jnp.where(small, ax, 0.0)
    x2 = xs * xs
    term = xs
    total = xs
    for n in range(1, 110):
        term = term * x2 / n
        total = total + term / (2 * n + 1)
    series = jnp.exp(-x2) * total
    xb = jnp.where(small, 7.0, ax)
    inv = 1.0 / (2.0 * xb * xb)
    asym = jnp.ones_like(xb)
    aterm = jnp.ones_like(xb)
    for n in range(1, 40):
        aterm = aterm * (2 * n - 1) * inv
        asym = asym + aterm
    asym = asym / (2.0 * xb)
    asym = jnp.where(jnp.isinf(xb), 0.0, asym)
    out = jnp.where(small, series, asym)
    return jnp.where(jnp.isnan(x), x, jnp.copysign(out, x))


_dawsn = custom_jvp(_dawsn_fn)


@_dawsn.defjvp
def _dawsn_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    y = _dawsn_fn(x)
    return y, t * (1.0 - 2.0 * x * y)


dawsn = _on_inexact(_dawsn, "dawsn", "Dawson's integral exp(-x^2) int_0^x exp(t^2) dt.")


# ----------------------------------------------------------------- exponential integrals


def _ei_power_sum(y, terms):
    """sum_{k=1}^{terms-1} y^k / (k k!), term by term: the power series of Ei (and, at
    y = -x, of E1) after its Euler-constant and log terms."""
    term = jnp.ones_like(y)
    total = jnp.zeros_like(y)
    for k in range(1, terms):
        term = term * y / k
        total = total + term / k
    return total


def _exp1_positive(x):
    """E1(x) for x > 0: its power series up to 1, a continued fraction beyond."""
    small = x <= 1.0
    xs = jnp.where(small, x, 0.5)
    series = -_EULER - jnp.log(xs) - _ei_power_sum(-xs, 30)
    xb = jnp.where(small, 2.0, x)
    xb = jnp.where(jnp.isinf(xb), 1e300 if _is_f64(x) else 1e30, xb)
    # E1(x) = exp(-x) / (x + 1 - 1/(x + 3 - 4/(x + 5 - 9/(x + 7 - ...)))), evaluated backward
    n = 120
    frac = xb + (2 * n + 1)
    for k in range(n, 0, -1):
        frac = xb + (2 * k - 1) - (k * k) / frac
    cf = jnp.exp(-xb) / frac
    return jnp.where(small, series, cf)


def _expi_positive(x):
    """Ei(x) for x > 0: its power series up to 40, the asymptotic series beyond."""
    small = x <= 40.0
    xs = jnp.where(small, x, 1.0)
    series = _EULER + jnp.log(xs) + _ei_power_sum(xs, 160)
    xb = jnp.where(small, 50.0, x)
    aterm = jnp.ones_like(xb)
    asym = jnp.ones_like(xb)
    for k in range(1, 40):
        aterm = aterm * k / xb
        asym = asym + aterm
    big = jnp.exp(xb) / xb * asym
    return jnp.where(small, series, big)


def _exp1_fn(x):
    pos = x > 0
    safe = jnp.where(pos, x, 1.0)
    val = _exp1_positive(safe)
    return jnp.where(pos & ~jnp.isinf(x), val, jnp.where(x == 0, _np.inf, _np.nan))


_exp1 = custom_jvp(_exp1_fn)


@_exp1.defjvp
def _exp1_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _exp1_fn(x), t * (-jnp.exp(-x) / x)


exp1 = _on_inexact(_exp1, "exp1", "The exponential integral E1(x) = int_x^inf exp(-t)/t dt for x > 0 (inf at 0, "
                   "NaN for x < 0 and, as JAX, at inf).")


def _expi_fn(x):
    pos = x > 0
    neg = x < 0
    ok = ~jnp.isinf(x) & ~jnp.isnan(x)
    val_pos = _expi_positive(jnp.where(pos, x, 1.0))
    val_neg = -_exp1_positive(jnp.where(neg, -x, 1.0))
    val = jnp.where(pos, val_pos, val_neg)
    return jnp.where(ok & (pos | neg), val, _np.nan)


_expi = custom_jvp(_expi_fn)


@_expi.defjvp
def _expi_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _expi_fn(x), t * (jnp.exp(x) / x)


expi = _on_inexact(_expi, "expi", "The exponential integral Ei(x) = -E1(-x) (principal value); NaN at 0 and at "
                   "+-inf, as JAX.")


# ----------------------------------------------------------------- dilogarithm, E_n


def _li2_series(w, terms=56):
    """sum_k w^k / k^2 for |w| <= 1/2."""
    total = jnp.zeros_like(w)
    power = jnp.ones_like(w)
    for k in range(1, terms):
        power = power * w
        total = total + power / (k * k)
    return total


def _li2_negative(w):
    """Li2(w) for -1 <= w <= 0: the series, or Landen's identity below -1/2."""
    landen = w < -0.5
    direct = _li2_series(jnp.where(landen, 0.0, w))
    wl = jnp.where(landen, w, -1.0)
    ln1 = jnp.log1p(-wl)
    via = -_li2_series(wl / (wl - 1.0)) - 0.5 * ln1 * ln1
    return jnp.where(landen, via, direct)


def spence(x):
    """Spence's function int_1^x log(t)/(1-t) dt = Li2(1 - x) for x >= 0 (NaN below)."""
    (x,) = _inexact(x)
    pi2_6 = _math.pi ** 2 / 6.0
    z = 1.0 - x
    # |z| <= 1/2: the series of Li2(z)
    a = _li2_series(jnp.where(jnp.abs(z) <= 0.5, z, 0.0))
    # 1/2 < z <= 1 (0 <= x < 1/2): reflection Li2(z) = pi^2/6 - ln z ln(1-z) - Li2(1-z)
    xb = jnp.where((x > 0) & (x < 0.5), x, 0.25)
    b = pi2_6 - jnp.log1p(-xb) * jnp.log(xb) - _li2_series(xb)
    # z < -1/2 (x > 3/2): Landen (z >= -1) or inversion Li2(z) = -pi^2/6 - ln^2(-z)/2 - Li2(1/z)
    zc = jnp.where(z < -0.5, z, -2.0)
    mid = _li2_negative(jnp.maximum(zc, -1.0))
    lnz = jnp.log(-zc)
    inv = -pi2_6 - 0.5 * lnz * lnz - _li2_negative(1.0 / jnp.minimum(zc, -1.0))
    c = jnp.where(zc >= -1.0, mid, inv)
    out = jnp.where(jnp.abs(z) <= 0.5, a, jnp.where(z > 0.5, b, c))
    out = jnp.where(x == 0, pi2_6, out)
    return jnp.where((x < 0) | jnp.isinf(x), _np.nan, out)


def _expn_fn(n, x):
    """E_n(x) for integer n >= 0 and x >= 0: n = 0 in closed form; a continued fraction for
    x > 1; the series for x <= 1 (n >= 1)."""
    nf = lax.convert_element_type(n, _aval(x).dtype)
    # x > 1: exp(-x) / (x + n - 1 n/(x + n + 2 - 2(n+1)/(x + n + 4 - ...))), backward
    big = x > 1.0
    xb = jnp.where(big, x, 2.0)
    xb = jnp.where(jnp.isinf(xb), 1e300 if _is_f64(x) else 1e30, xb)
    terms = 80
    frac = xb + nf + 2.0 * terms
    for i in range(terms, 0, -1):
        frac = xb + nf + 2.0 * (i - 1) - (i * (nf + i - 1.0)) / frac
    cf = jnp.exp(-xb) / frac
    # x <= 1, n >= 1: (-x)^(n-1)/(n-1)! (-ln x + psi(n)) - sum_{k != n-1} (-x)^k / ((k - n + 1) k!)
    xs = jnp.where(big | (x <= 0), 0.5, x)
    ns = jnp.maximum(nf, 1.0)
    total = jnp.zeros_like(xs)
    term = jnp.ones_like(xs)  # (-x)^k / k!
    lead = jnp.zeros_like(xs)
    for k in range(0, 60):
        if k > 0:
            term = term * (-xs) / k
        hit = ns - 1.0 == k
        denom = jnp.where(hit, 1.0, k - ns + 1.0)
        total = total - jnp.where(hit, 0.0, term / denom)
        lead = lead + jnp.where(hit, term, 0.0)
    series = total + lead * (-jnp.log(xs) + lax.digamma(ns))
    val = jnp.where(big, cf, series)
    at_zero = jnp.where(nf > 1.0, 1.0 / jnp.maximum(nf - 1.0, 1.0), _np.inf)
    zero_n = jnp.exp(-xb) / xb
    val = jnp.where(nf == 0, jnp.where(big, zero_n, jnp.exp(-xs) / xs), val)
    val = jnp.where(x == 0, at_zero, val)
    val = jnp.where(jnp.isinf(x) & (x > 0), 0.0, val)
    return jnp.where((nf < 0) | (x < 0) | jnp.isnan(x), _np.nan, val)


_expn = custom_jvp(_expn_fn)


@_expn.defjvp
def _expn_jvp(primals, tangents):
    (n, x), (_, t) = primals, tangents
    # d/dx E_n = -E_(n-1); for n = 0, d/dx exp(-x)/x = -exp(-x)(x + 1)/x^2
    d0 = -jnp.exp(-x) * (x + 1.0) / (x * x)
    return _expn_fn(n, x), t * jnp.where(n == 0, d0, -_expn_fn(jnp.maximum(n - 1, 0), x))


@jit  # see _on_inexact
def expn(n, x):
    """The generalized exponential integral E_n(x) = int_1^inf exp(-x t)/t^n dt for integer
    n >= 0 and x >= 0; differentiable in x."""
    n = _arr(n)
    (x,) = _inexact(x)
    shape = jnp.broadcast_shapes(jnp.shape(n), jnp.shape(x))
    n = jnp.broadcast_to(n, shape)
    x = jnp.broadcast_to(x, shape)
    return _expn(n, x)


# ----------------------------------------------------------------- sine/cosine and Fresnel integrals


def _complex_cf_tail(zr, zi, terms, step):
    """Backward evaluation of f = z + c_1/(z + c_2/(z + ...)) on complex z = zr + i zi, with
    `step(k, fr, fi) -> (fr, fi)` applying level k; returns (fr, fi)."""
    fr, fi = zr, zi
    for k in range(terms, 0, -1):
        fr, fi = step(k, fr, fi)
    return fr, fi


def _sici_fn(x):
    ax = jnp.abs(x)
    small = ax <= 4.0
    xs = jnp.where(small, ax, 1.0)
    x2 = xs * xs
    si = jnp.zeros_like(xs)
    ci = jnp.zeros_like(xs)
    term = xs  # (-1)^k x^(2k+1) / (2k+1)!
    for k in range(0, 30):
        if k > 0:
            term = -term * x2 / ((2 * k) * (2 * k + 1))
        si = si + term / (2 * k + 1)
    term = jnp.ones_like(xs)  # (-1)^k x^(2k) / (2k)!
    for k in range(1, 30):
        term = -term * x2 / ((2 * k - 1) * (2 * k))
        ci = ci + term / (2 * k)
    ci = ci + _EULER + jnp.log(xs)
    # |x| > 4: E1(ix) = -Ci(x) + i (Si(x) - pi/2), by its continued fraction
    # f = z + 1 - 1/(z + 3 - 4/(z + 5 - ...)), E1 = exp(-z)/f, evaluated backward.
    xb = jnp.where(small, 5.0, ax)
    xb = jnp.where(jnp.isinf(xb), 1e300 if _is_f64(x) else 1e30, xb)

    def step(k, fr, fi):
        den = fr * fr + fi * fi
        c = float(k * k)
        return (2 * k - 1) - c * fr / den, xb + c * fi / den

    fr, fi = _complex_cf_tail(jnp.full_like(xb, 81.0), xb, 40, step)
    den = fr * fr + fi * fi
    cs, sn = jnp.cos(xb), jnp.sin(xb)
    e_re = (cs * fr - sn * fi) / den
    e_im = -(sn * fr + cs * fi) / den
    si_big = _math.pi / 2 + e_im
    ci_big = -e_re
    si = jnp.where(small, si, si_big)
    ci = jnp.where(small, ci, ci_big)
    si = jnp.where(jnp.isinf(ax), _math.pi / 2, si)
    ci = jnp.where(jnp.isinf(ax), 0.0, jnp.where(ax == 0, -_np.inf, ci))
    si = jnp.where(ax == 0, 0.0, si)
    return jnp.copysign(si, x), ci


_sici = custom_jvp(_sici_fn)


@_sici.defjvp
def _sici_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    si, ci = _sici_fn(x)
    return (si, ci), (t * jnp.sinc(x / _math.pi), t * jnp.cos(x) / x)


sici = _on_inexact(_sici, "sici", "The sine and cosine integrals (Si(x), Ci(x)); Ci(-x) is the real part, "
                   "Ci(|x|).")


def _fresnel_fn(x):
    ax = jnp.abs(x)
    small = ax <= 2.0
    xs = jnp.where(small, ax, 1.0)
    t = (_math.pi / 2) * xs * xs
    t2 = t * t
    s_sum = jnp.zeros_like(xs)
    c_sum = jnp.zeros_like(xs)
    term = jnp.ones_like(xs)  # (-1)^k t^(2k) / (2k)!
    for k in range(0, 30):
        if k > 0:
            term = -term * t2 / ((2 * k - 1) * (2 * k))
        c_sum = c_sum + term / (4 * k + 1)
        s_sum = s_sum + term * t / ((2 * k + 1) * (4 * k + 3))
    c_small = xs * c_sum
    s_small = xs * s_sum
    # |x| > 2: C + iS = (1 + i)/2 (1 - erfc(z)), z = (1 - i) sqrt(pi) x / 2, with
    # erfc(z) = exp(-z^2)/sqrt(pi) / (z + (1/2)/(z + 1/(z + (3/2)/(z + ...)))) and exp(-z^2) = exp(i pi x^2 / 2).
    xb = jnp.where(small, 3.0, ax)
    xb = jnp.where(jnp.isinf(xb), 1e150 if _is_f64(x) else 1e18, xb)
    zr = _math.sqrt(_math.pi) / 2 * xb
    zi = -zr

    def step(k, fr, fi):
        den = fr * fr + fi * fi
        c = k / 2.0
        return zr + c * fr / den, zi - c * fi / den

    fr, fi = _complex_cf_tail(zr, zi, 80, step)
    den = fr * fr + fi * fi
    # 1/f / sqrt(pi)
    ir, ii = fr / den / _math.sqrt(_math.pi), -fi / den / _math.sqrt(_math.pi)
    ph = (_math.pi / 2) * xb * xb
    pc, ps = jnp.cos(ph), jnp.sin(ph)
    er = pc * ir - ps * ii  # erfc(z), real part
    ei = pc * ii + ps * ir
    wr, wi = 1.0 - er, -ei
    c_big = 0.5 * (wr - wi)
    s_big = 0.5 * (wr + wi)
    c_val = jnp.where(small, c_small, c_big)
    s_val = jnp.where(small, s_small, s_big)
    c_val = jnp.where(jnp.isinf(ax), 0.5, c_val)
    s_val = jnp.where(jnp.isinf(ax), 0.5, s_val)
    return jnp.copysign(s_val, x), jnp.copysign(c_val, x)


_fresnel = custom_jvp(_fresnel_fn)


@_fresnel.defjvp
def _fresnel_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    s_val, c_val = _fresnel_fn(x)
    arg = (_math.pi / 2) * x * x
    return (s_val, c_val), (t * jnp.sin(arg), t * jnp.cos(arg))


fresnel = _on_inexact(_fresnel, "fresnel",
                      "The Fresnel integrals (S(x), C(x)) = int_0^x (sin, cos)(pi t^2 / 2) dt.")


# ----------------------------------------------------------------- Owen's T, Bessel J, hypergeometric

_GL_NODES, _GL_WEIGHTS = _np.polynomial.legendre.leggauss(48)
# Python floats: weakly typed constants keep the operands' dtype.
_GL_U = [float(u) for u in (_GL_NODES + 1.0) / 2.0]
_GL_W = [float(w) for w in _GL_WEIGHTS / 2.0]


def _owens_t_small(h, a):
    """T(h, a) for |a| <= 1: a/(2 pi) int_0^1 exp(-h^2 (1 + a^2 u^2)/2) / (1 + a^2 u^2) du by
    48-point Gauss-Legendre."""
    total = jnp.zeros_like(h)
    for u, w in zip(_GL_U, _GL_W):
        q = 1.0 + a * a * (u * u)
        total = total + w * jnp.exp(-0.5 * h * h * q) / q
    return a / (2.0 * _math.pi) * total


def _owens_t_fn(h, a):
    h = jnp.abs(h)
    aa = jnp.abs(a)
    small = aa <= 1.0
    direct = _owens_t_small(h, jnp.where(small, aa, 0.5))
    # |a| > 1: T(h, a) = (ndtr(h) + ndtr(a h))/2 - ndtr(h) ndtr(a h) - T(a h, 1/a)  (h >= 0)
    ab = jnp.where(small, 2.0, aa)
    ah = ab * h
    ph, pah = ndtr(h), ndtr(ah)
    flipped = 0.5 * (ph + pah) - ph * pah - _owens_t_small(ah, 1.0 / ab)
    out = jnp.where(small, direct, flipped)
    return jnp.where(a < 0, -out, out)


_owens_t = custom_jvp(_owens_t_fn)


@_owens_t.defjvp
def _owens_t_jvp(primals, tangents):
    (h, a), (th, ta) = primals, tangents
    out = _owens_t_fn(h, a)
    d_h = -jnp.exp(-0.5 * h * h) * lax.erf(a * h / _SQRT2) / (2.0 * _math.sqrt(2.0 * _math.pi))
    d_a = jnp.exp(-0.5 * (a * a + 1.0) * h * h) / (2.0 * _math.pi * (a * a + 1.0))
    return out, d_h * th + d_a * ta


@jit  # see _on_inexact
def owens_t(h, a):
    """Owen's T function T(h, a) = 1/(2 pi) int_0^a exp(-h^2 (1 + x^2)/2) / (1 + x^2) dx."""
    h, a = _inexact(h, a)
    return _owens_t(h, a)


def bessel_jn(z, *, v, n_iter=50):
    """J_0(z) .. J_v(z) stacked on a new leading axis, by Miller's backward recurrence from
    order v + n_iter (normalized by J_0 + 2 sum_k J_2k = 1); accurate while |z| is small
    against n_iter."""
    v = _concrete_int(v, "v")
    n_iter = _concrete_int(n_iter, "n_iter")
    if v < 0:
        raise ValueError(f"v must be a non-negative integer, got {v}")
    (z,) = _inexact(z)
    zero = z == 0
    zs = jnp.where(zero, 1.0, z)
    start = v + n_iter + ((v + n_iter) % 2)
    big = 1e250 if _is_f64(z) else 1e30
    j_next = jnp.zeros_like(zs)
    j_cur = jnp.full_like(zs, 1e-30 if _is_f64(z) else 1e-10)
    norm = jnp.zeros_like(zs)
    kept = {}
    for k in range(start, 0, -1):
        if k <= v:
            kept[k] = j_cur
        if k % 2 == 0:
            norm = norm + 2.0 * j_cur
        j_prev = (2.0 * k / zs) * j_cur - j_next
        scale = jnp.where(jnp.abs(j_prev) > big, 1.0 / big, 1.0)
        j_next, j_cur = j_cur * scale, j_prev * scale
        norm = norm * scale
        kept = {i: val * scale for i, val in kept.items()}
    kept[0] = j_cur
    norm = norm + j_cur
    rows = []
    for i in range(v + 1):
        val = kept[i] / norm
        rows.append(jnp.where(zero, jnp.full_like(val, 1.0 if i == 0 else 0.0), val))
    return jnp.stack(rows)


@jit  # see _on_inexact
def hyp1f1(a, b, x):
    """Kummer's confluent hypergeometric function 1F1(a; b; x): its series (200 terms) for
    x >= 0 and, for x < 0, Kummer's transformation exp(x) 1F1(b - a; b; -x). Differentiable
    in a, b and x through the series."""
    a, b, x = _inexact(a, b, x)
    neg = x < 0
    aa = jnp.where(neg, b - a, a)
    xx = jnp.abs(x)
    term = jnp.ones_like(xx)
    total = jnp.ones_like(xx)
    for k in range(200):
        term = term * (aa + k) / (b + k) * xx / (k + 1)
        total = total + term
    return jnp.where(neg, jnp.exp(x) * total, total)


def _hyp2f1_series(a, b, c, x, terms=300):
    term = jnp.ones_like(x)
    total = jnp.ones_like(x)
    for k in range(terms):
        term = term * (a + k) * (b + k) / ((c + k) * (k + 1)) * x
        total = total + term
    return total


@jit  # see _on_inexact
def hyp2f1(a, b, c, x):
    """Gauss's hypergeometric function 2F1(a, b; c; x) for x < 1: the series for
    0 <= x <= 0.9 and, for x < 0, Pfaff's transformation (1 - x)^-a 2F1(a, c - b; c; x/(x - 1))."""
    a, b, c, x = _inexact(a, b, c, x)
    neg = x < 0
    w = jnp.where(neg, x / (x - 1.0), x)
    bb = jnp.where(neg, c - b, b)
    series = _hyp2f1_series(a, bb, c, jnp.where(w < 1.0, w, 0.0))
    out = jnp.where(neg, (1.0 - x) ** (-a) * series, series)
    return jnp.where(x >= 1.0, _np.nan, out)
