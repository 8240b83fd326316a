"""Special functions the distributions need, built on jnp (private to
`jax.scipy.stats`): an erfc accurate in the tails (through a Chebyshev
expansion of the scaled erfcx), ndtr, log_ndtr, ndtri, betaln and i0e.

The Chebyshev coefficients were fitted here (numpy.polynomial.chebyshev.
chebinterpolate at Chebyshev points) to float64 references; relative error
below 2e-14 over the ranges used.
"""
import numpy as _np

from ... import numpy as jnp
from ..._src.numpy.util import _arr, _promote_inexact

# (z + 2) * erfcx(z) for z >= 0.5, in u = 2 (t - t0) / (1 - t0) - 1 with t = (z - 2) / (z + 2), t0 = -0.6.
_ERFCX = (
    0.973994979318676, -0.48202889723521325, 0.0783431603960387,
    -0.005640402632517844, -0.0006380051760285366, 0.00015524916589255305,
    7.809517806265214e-06, -4.21300201079332e-06, -2.3438312284343645e-07,
    1.2917225946588024e-07, 1.3095856529986848e-08, -4.03529418174186e-09,
    -7.964800652867748e-10, 9.952264741324425e-11, 4.4279365563353815e-11,
    3.469297627435634e-13, -2.051844696078573e-12, -2.89205756092842e-13,
    6.388080047839294e-14, 2.4603774822177012e-14, 5.913881455932762e-16,
    -9.510916583625517e-16, -1.6147930775690135e-15, 6.0797207336613685e-16,
    -1.557340291322683e-15,
)

# i0e(x) for 0 <= x <= 8, in u = x / 4 - 1.
_I0E_SMALL = (
    0.33839763720473803, -0.30468267234319846, 0.17162090152220877,
    -0.09490109704804764, 0.04930528423967064, -0.023737414805899408,
    0.010546460394594876, -0.004324309995050468, 0.0016394756169411967,
    -0.0005763755745384343, 0.0001885028850955909, -5.754195010053464e-05,
    1.644844807023829e-05, -4.416738358049356e-06, 1.1173875384421088e-06,
    -2.670793848534297e-07, 6.046994943995063e-08, -1.3000249368593088e-08,
    2.6598225798894472e-09, -5.189785950004778e-10, 9.675666802879311e-11,
    -1.726722706789711e-11, 2.953692443231193e-12, -4.846420424951627e-13,
    7.541999144665056e-14, -1.0667673214347109e-14, 3.389483483415176e-16,
    7.188881883331643e-16, -1.1895076808183577e-15,
)

# sqrt(x) * i0e(x) for x > 8, in u = 16 / x - 1.
_I0E_LARGE = (
    0.4022452055070544, 0.003369116478255687, 6.889758346916968e-05,
    2.8913705208207556e-06, 2.0489185888897462e-07, 2.2666689898539943e-08,
    3.396231958957049e-09, 4.940602488748447e-10, 1.1889117824856503e-11,
    -3.149918048700871e-11, -1.3215939091335238e-11, -1.7941692468632443e-12,
    7.176628209293219e-13, 3.85282287050014e-13, 1.4939481351627572e-14,
    -4.149406324904292e-14, -1.0065819988799251e-14, 3.805529060991987e-15,
    9.02642146391978e-16, -3.598272654205242e-16, -1.4362764873047449e-15,
    1.6628801204261526e-17, -9.099419230547619e-16, -2.1826791303634906e-17,
    -9.438774577980478e-16, 3.2340997021324477e-18, -1.020191843660216e-15,
    -9.009715083124911e-18, -7.322160838717281e-16,
)


def _cheb(coeffs, u):
    """Clenshaw evaluation of sum c_k T_k(u)."""
    b1 = jnp.zeros_like(u)
    b2 = jnp.zeros_like(u)
    two_u = 2 * u
    for c in coeffs[:0:-1]:
        b1, b2 = two_u * b1 - b2 + c, b1
    return u * b1 - b2 + coeffs[0]


def _inexact(*xs):
    return _promote_inexact(*[_arr(x) for x in xs])


def erfc(x):
    """1 - erf(x), accurate where it is small (x large)."""
    (x,) = _inexact(x)
    z = jnp.abs(x)
    big = z >= 0.5
    zs = jnp.where(big, z, 1.0)
    t = (zs - 2.0) / (zs + 2.0)
    u = (t + 0.6) / 0.8 - 1.0
    tail = jnp.exp(-zs * zs) * _cheb(_ERFCX, u) / (zs + 2.0)
    from .. import special
    small = 1.0 - special.erf(jnp.where(big, 0.0, x))
    pos = jnp.where(big, tail, small)
    return jnp.where(big & (x < 0), 2.0 - tail, pos)


def ndtr(x):
    """The standard normal CDF."""
    (x,) = _inexact(x)
    return 0.5 * erfc(-x * _np.sqrt(0.5))


def log_ndtr(x):
    """log of the standard normal CDF, stable in both tails (an asymptotic
    series below -20 in float64 / -10 in float32)."""
    (x,) = _inexact(x)
    is64 = jnp.dtype(x.dtype) == jnp.dtype("float64")
    lower, upper = (-20.0, 8.0) if is64 else (-10.0, 5.0)
    mid = jnp.log(ndtr(jnp.maximum(x, lower)))
    hi = -ndtr(-x)
    xl = jnp.minimum(x, lower)
    x2 = xl * xl
    # log(1 + sum_{n=1..3} (-1)^n (2n-1)!! / x^(2n))
    series = 1.0 - 1.0 / x2 + 3.0 / (x2 * x2) - 15.0 / (x2 * x2 * x2)
    asym = -0.5 * x2 - jnp.log(-xl) - 0.5 * _np.log(2 * _np.pi) + jnp.log(series)
    return jnp.where(x > upper, hi, jnp.where(x > lower, mid, asym))


def ndtri(q):
    """The inverse of ndtr: a rational first guess (Abramowitz & Stegun 26.2.23,
    error below 5e-4) in the lower half, refined by Newton steps on log_ndtr,
    and reflected for q > 1/2."""
    (q,) = _inexact(q)
    upper = q > 0.5
    p = jnp.where(upper, 1.0 - q, q)
    p_safe = jnp.clip(p, jnp.finfo(p.dtype).tiny, 0.5)
    t = jnp.sqrt(-2.0 * jnp.log(p_safe))
    z = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) / (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308))))
    log_p = jnp.log(p_safe)
    half_log_2pi = 0.5 * _np.log(2 * _np.pi)
    for _ in range(3):
        lc = log_ndtr(z)
        z = z - (lc - log_p) * jnp.exp(lc + 0.5 * z * z + half_log_2pi)
    z = jnp.where(p == 0.5, 0.0, z)
    z = jnp.where(upper, -z, z)
    z = jnp.where(q == 0, -_np.inf, jnp.where(q == 1, _np.inf, z))
    return jnp.where((q < 0) | (q > 1) | jnp.isnan(q), _np.nan, z)


def betaln(a, b):
    """log|B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b)."""
    a, b = _inexact(a, b)
    from .. import special
    return special.gammaln(a) + special.gammaln(b) - special.gammaln(a + b)


def i0e(x):
    """The exponentially scaled modified Bessel function of order 0, exp(-|x|) I0(x)."""
    (x,) = _inexact(x)
    z = jnp.abs(x)
    small = z <= 8.0
    zs = jnp.where(small, z, 0.0)
    zl = jnp.where(small, 8.0, z)
    return jnp.where(small, _cheb(_I0E_SMALL, zs / 4.0 - 1.0),
                     _cheb(_I0E_LARGE, 16.0 / zl - 1.0) / jnp.sqrt(zl))
