"""Polynomials as coefficient arrays, highest power first (NumPy's legacy
`np.poly*` API): construction from roots, arithmetic, derivatives and
integrals, evaluation, least-squares fitting and roots (companion-matrix
eigenvalues)."""
import operator

import numpy as _np

from ... import core
from ...core import Tracer
from .lax_numpy import asarray, concatenate, full, ones, reshape, stack, zeros
from .linalg import eigvals, lstsq
from .reductions import sum as _sum
from .tensor_contractions import convolve
from .ufuncs import _where, sqrt
from .util import _arr, _aval, _promote_dtypes, _promote_dtypes_inexact


def _one_d(name, *arrays):
    for a in arrays:
        if _aval(a).ndim != 1:
            raise ValueError(f"jnp.{name} needs one-dimensional coefficient arrays, got shape {_aval(a).shape}")


def _static_int(value, what):
    if isinstance(value, Tracer):
        raise core.ConcretizationTypeError(f"{what} must be a concrete integer")
    return operator.index(value)


def poly(seq_of_zeros):
    """Coefficients of the monic polynomial with the given roots (jnp.poly);
    a matrix's characteristic polynomial needs complex eigenvalues and is
    not supported."""
    (a,) = _promote_dtypes_inexact(_arr(seq_of_zeros))
    av = _aval(a)
    if av.ndim == 2 and av.shape[0] == av.shape[1] and av.shape[0] != 0:
        raise NotImplementedError("jnp.poly of a matrix needs complex eigenvalues, which microjax_rs lacks")
    if av.ndim != 1 and not (av.ndim == 2 and av.shape[0] == 0):
        raise ValueError("Input must be 1d or non-empty square 2d array.")
    n = av.shape[0] if av.ndim == 1 else 0
    coeffs = ones((1,), av.dtype_name)
    for k in range(n):
        root = reshape(a[k], (1,))
        coeffs = convolve(coeffs, concatenate([ones((1,), av.dtype_name), -root]))
    return coeffs if n else reshape(coeffs, ())


def _align(a1, a2):
    """Both coefficient arrays left-padded with zeros to one length."""
    n1, n2 = _aval(a1).shape[0], _aval(a2).shape[0]
    if n1 < n2:
        a1 = concatenate([zeros((n2 - n1,), _aval(a1).dtype_name), a1])
    elif n2 < n1:
        a2 = concatenate([zeros((n1 - n2,), _aval(a2).dtype_name), a2])
    return a1, a2


def polyadd(a1, a2):
    """Sum of two polynomials (jnp.polyadd); integer coefficients stay integer."""
    a1, a2 = _promote_dtypes(_arr(a1), _arr(a2))
    _one_d("polyadd", a1, a2)
    a1, a2 = _align(a1, a2)
    return a1 + a2


def polysub(a1, a2):
    """Difference of two polynomials (jnp.polysub)."""
    a1, a2 = _promote_dtypes(_arr(a1), _arr(a2))
    _one_d("polysub", a1, a2)
    a1, a2 = _align(a1, a2)
    return a1 - a2


def _trim_leading(a):
    """`a` without its leading zeros (needs concrete values)."""
    if isinstance(a, Tracer):
        raise core.ConcretizationTypeError("trim_leading_zeros=True needs concrete coefficients")
    vals = _np.asarray(a)
    nz = _np.flatnonzero(vals)
    return a[int(nz[0]):] if nz.size else a[:0]


def polymul(a1, a2, *, trim_leading_zeros=False):
    """Product of two polynomials (jnp.polymul): their full convolution."""
    a1, a2 = _promote_dtypes_inexact(_arr(a1), _arr(a2))
    _one_d("polymul", a1, a2)
    if trim_leading_zeros and (_aval(a1).shape[0] > 1 or _aval(a2).shape[0] > 1):
        a1, a2 = _trim_leading(a1), _trim_leading(a2)
    if _aval(a1).shape[0] == 0:
        a1 = zeros((1,), _aval(a2).dtype_name)
    if _aval(a2).shape[0] == 0:
        a2 = zeros((1,), _aval(a1).dtype_name)
    return convolve(a1, a2, mode="full")


def polydiv(u, v, *, trim_leading_zeros=False):
    """(quotient, remainder) of polynomial division (jnp.polydiv). The
    remainder keeps u's length unless `trim_leading_zeros` drops its
    leading (near-)zeros, as np.polydiv does."""
    u, v = _promote_dtypes_inexact(_arr(u), _arr(v))
    _one_d("polydiv", u, v)
    m, n = _aval(u).shape[0] - 1, _aval(v).shape[0] - 1
    name = _aval(u).dtype_name
    scale = 1.0 / v[0]
    q = []
    rem = u
    for k in range(0, m - n + 1):
        d = scale * rem[k]
        q.append(d)
        update = concatenate([zeros((k,), name), -d * v, zeros((m - n - k,), name)])
        rem = rem + update
    quot = stack(q) if q else zeros((1,), name)
    if trim_leading_zeros:
        if isinstance(rem, Tracer):
            raise core.ConcretizationTypeError("trim_leading_zeros=True needs concrete coefficients")
        tol = float(_np.sqrt(_np.finfo(_np.dtype(name)).eps))
        vals = _np.abs(_np.asarray(rem))
        big = _np.flatnonzero(~(vals <= tol))  # nan stays
        rem = rem[int(big[0]):] if big.size else rem[:0]
    return quot, rem


def polyder(p, m=1):
    """The m-th derivative of a polynomial (jnp.polyder)."""
    m = _static_int(m, "'m' argument of jnp.polyder")
    (p,) = _promote_dtypes_inexact(_arr(p))
    _one_d("polyder", p)
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    if m == 0:
        return p
    n = _aval(p).shape[0]
    if m >= n:
        return zeros((0,), _aval(p).dtype_name)
    # Coefficient of x^j (j = n-1-i) picks up j (j-1) ... (j-m+1).
    factors = _np.ones(n - m)
    for i in range(n - m):
        j = n - 1 - i
        factors[i] = _np.prod(_np.arange(j - m + 1, j + 1, dtype=_np.float64))
    return p[: n - m] * asarray(factors, dtype=_aval(p).dtype_name)


def polyint(p, m=1, k=None):
    """The m-th antiderivative of a polynomial (jnp.polyint); `k` gives the
    integration constants (a scalar, or one per integration, the first for
    the innermost)."""
    m = _static_int(m, "'m' argument of jnp.polyint")
    k = 0 if k is None else k
    p, k = _promote_dtypes_inexact(_arr(p), _arr(k))
    _one_d("polyint", p)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    k = reshape(k, (-1,)) if _aval(k).ndim <= 1 else k
    if _aval(k).ndim != 1 or _aval(k).shape[0] not in (1, m) and not (m == 0):
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    if m == 0:
        return p
    if _aval(k).shape[0] == 1:
        k = full((m,), k[0], _aval(p).dtype_name)
    name = _aval(p).dtype_name
    for i in range(m):
        n = _aval(p).shape[0]
        divisors = asarray(_np.arange(n, 0, -1, dtype=_np.float64), dtype=name)
        p = concatenate([p / divisors, reshape(k[i], (1,))])
    return p


def polyval(p, x, *, unroll=16):
    """Evaluates the polynomial with coefficients `p` at `x` by Horner's rule
    (jnp.polyval); `unroll` is accepted for JAX compatibility."""
    del unroll
    p, x = _promote_dtypes(_arr(p), _arr(x))
    _one_d("polyval", p)
    n = _aval(p).shape[0]
    y = zeros(_aval(x).shape, _aval(x).dtype_name)
    for i in range(n):
        y = y * x + p[i]
    return y


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """Least-squares polynomial fit of degree `deg` (jnp.polyfit): the
    coefficients, or with `full` (coefficients, residuals, rank, singular
    values, rcond), or with `cov` (coefficients, covariance)."""
    x, y = _arr(x), _arr(y)
    deg = _static_int(deg, "'deg' argument of jnp.polyfit")
    order = deg + 1
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if _aval(x).ndim != 1:
        raise TypeError("expected 1D vector for x")
    if _aval(x).size == 0:
        raise TypeError("expected non-empty vector for x")
    if _aval(y).ndim < 1 or _aval(y).ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if _aval(x).shape[0] != _aval(y).shape[0]:
        raise TypeError("expected x and y to have same length")
    if not _aval(x).dtype_name.startswith(("float", "bfloat")):
        raise ValueError(f"data type {_np.dtype(_aval(x).dtype_name).type} not inexact")
    x, y = _promote_dtypes_inexact(x, y)
    name = _aval(x).dtype_name
    n = _aval(x).shape[0]
    if rcond is None:
        rcond = n * float(_np.finfo(_np.dtype(name)).eps)
    # Vandermonde matrix, highest power first.
    lhs = stack([x ** (deg - i) for i in range(order)], axis=1) if order > 1 else ones((n, 1), name)
    if order > 1:
        lhs = lhs.astype(name)
    rhs = y
    if w is not None:
        (w,) = _promote_dtypes_inexact(_arr(w))
        if _aval(w).ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if _aval(w).shape[0] != n:
            raise TypeError("expected w and y to have the same length")
        lhs = lhs * w[:, None]
        rhs = rhs * (w if _aval(rhs).ndim == 1 else w[:, None])
    # Scale the columns to unit norm for conditioning.
    scale = sqrt(_sum(lhs * lhs, axis=0))
    scale = _where(scale == 0, 1.0, scale)
    lhs = lhs / scale
    c, resids, rank, s = lstsq(lhs, rhs, rcond)
    c = (c.T / scale).T
    if full:
        return c, resids, rank, s, asarray(rcond, dtype=name)
    if cov:
        Vbase = _inv_gram(lhs)
        Vbase = Vbase / (scale[:, None] * scale[None, :])
        if cov == "unscaled":
            fac = 1
        else:
            if n <= order:
                raise ValueError("the number of data points must exceed order to scale the covariance matrix")
            fac = resids / (n - order)
        if _aval(y).ndim == 1:
            fac = reshape(fac, ()) if _aval(asarray(fac)).ndim else fac
            return c, Vbase * fac
        return c, Vbase[:, :, None] * fac
    return c


def _inv_gram(lhs):
    from .linalg import inv
    return inv(lhs.T @ lhs)



def _complex_name(name):
    return "complex128" if name in ("float64", "complex128") else "complex64"


def _roots_no_zeros(p):
    """The eigenvalues of the companion matrix of `p` (``p[0] != 0``)."""
    from ... import lax
    n = _aval(p).shape[0]
    if n < 2:
        return zeros((0,), dtype=_complex_name(_aval(p).dtype_name))
    first = reshape(-p[1:] / p[0], (1, n - 1))
    rest = _eye_below(n - 1, _aval(p).dtype_name)
    return eigvals(lax.concatenate([first, rest], 0))


def _eye_below(k, dtype):
    """The rows 1.. of the `k x k` companion matrix: ones on the subdiagonal."""
    return asarray(_np.eye(k - 1, k), dtype=dtype) if k > 1 else zeros((0, k), dtype=dtype)


def roots(p, *, strip_zeros=True):
    """The roots of the polynomial with coefficients ``p`` (highest power first),
    as the eigenvalues of its companion matrix, complex (jnp.roots).

    With ``strip_zeros`` (the default) leading zero coefficients are dropped
    (``p`` must be concrete); with ``strip_zeros=False`` the result keeps
    ``len(p) - 1`` entries, NaN for the roots the leading zeros remove (works
    under ``jit``).
    """
    from .indexing import take
    from .lax_numpy import arange
    from .reductions import argmin
    from .sorting import argsort
    from .reductions import all as _all
    from .ufuncs import equal
    (p,) = _promote_dtypes_inexact(_arr(p))
    if _aval(p).ndim == 0:
        p = reshape(p, (1,))
    if _aval(p).ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    n = _aval(p).shape[0]
    if n < 2:
        return zeros((0,), dtype=_complex_name(_aval(p).dtype_name))
    is_zero = equal(p, 0)
    lead = _where(_all(is_zero), n, argmin(is_zero))
    if strip_zeros:
        if isinstance(lead, Tracer):
            raise core.ConcretizationTypeError(
                "The error occurred in the jnp.roots() function. To use this within a JIT-compiled context, "
                "pass strip_zeros=False, but be aware that leading zeros will result in some returned roots "
                "being set to NaN.")
        return _roots_no_zeros(p[int(lead):])
    p = _where(lead == n, asarray(1.0, dtype=_aval(p).dtype_name), p)
    rolled = take(p, (arange(n) + lead) % n)  # the leading zeros moved to the end
    r = _roots_no_zeros(rolled)
    r = take(r, argsort(equal(r, 0), stable=True))  # zero roots last
    nan = asarray(complex(_np.nan, _np.nan), dtype=_aval(r).dtype_name)
    return _where(arange(n - 1) < n - 1 - lead, r, nan)
