"""Covariance and correlation: `cov` (row/column variables, `bias` / `ddof`,
frequency and analytic weights) and `corrcoef`."""
import numpy as _np

from ... import lax
from .indexing import diagonal
from .lax_numpy import asarray, atleast_2d, concatenate, full, squeeze, transpose
from .reductions import average, sum as _sum
from .tensor_contractions import dot
from .ufuncs import absolute, clip, conj, divide, multiply, real, sqrt, subtract
from .util import _arr, _aval, _is_int, _promote_dtypes_inexact


def _check_weights(w, n, kind):
    w = _arr(w)
    if _aval(w).ndim > 1:
        raise RuntimeError(f"cannot handle multidimensional {kind}")
    if _aval(w).shape[0] != n:
        raise RuntimeError(f"incompatible numbers of samples and {kind}")
    return w


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, dtype=None):
    """Covariance matrix of the variables in the rows of `m` (columns when
    `rowvar=False`), optionally with those of `y`; divides by N - ddof (ddof
    default 1, 0 with `bias`), with integer frequency weights `fweights` and
    analytic weights `aweights`. Scalars come back for one variable."""
    m = _arr(m)
    if y is not None:
        y = _arr(y)
        m, y = _promote_dtypes_inexact(m, y)
        if _aval(y).ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    else:
        (m,) = _promote_dtypes_inexact(m)
    if _aval(m).ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if dtype is not None and not _np.issubdtype(_np.dtype(dtype), _np.inexact):
        raise ValueError(f"cov: dtype must be a subclass of float or complex; got dtype={dtype}")
    x = atleast_2d(m)
    if not rowvar and _aval(m).ndim != 1:
        x = transpose(x)
    if _aval(x).shape[0] == 0:
        return asarray(_np.zeros((0, 0), _aval(x).dtype_name))
    if y is not None:
        yy = atleast_2d(y)
        if not rowvar and _aval(yy).shape[0] != 1:
            yy = transpose(yy)
        x = concatenate([x, yy], axis=0)
    k, n = _aval(x).shape
    if n == 0:
        return full(() if k == 1 else (k, k), _np.nan, _aval(x).dtype_name)
    if ddof is None:
        ddof = 1 if not bias else 0
    w = None
    if fweights is not None:
        f = _check_weights(fweights, n, "fweights")
        if not _is_int(f):
            raise TypeError("fweights must be integer.")
        w = absolute(f)
    aw = None
    if aweights is not None:
        aw = absolute(_check_weights(aweights, n, "aweights"))
        w = aw if w is None else multiply(w, aw)
    if dtype is not None:
        x = x.astype(dtype)
        w = None if w is None else w.astype(dtype)
    if w is None:
        avg = average(x, axis=1)
        fact = n - ddof
    else:
        avg, w_sum = average(x, axis=1, weights=w, returned=True)
        w_sum = w_sum[0]
        if ddof == 0:
            fact = w_sum
        elif aweights is None:
            fact = w_sum - ddof
        else:
            fact = w_sum - ddof * divide(_sum(multiply(w, aw)), w_sum)
    xc = subtract(x, lax.expand_dims(avg, (1,)))
    xt = transpose(xc) if w is None else transpose(multiply(xc, w))
    c = divide(dot(xc, conj(xt)), fact)
    return squeeze(c)


def corrcoef(x, y=None, rowvar=True, dtype=None):
    """Pearson correlation coefficients: `cov` normalized by the standard
    deviations, clipped to [-1, 1]."""
    c = cov(x, y, rowvar, dtype=dtype)
    if _aval(c).ndim == 0:
        return divide(c, c)
    d = diagonal(c)
    sd = sqrt(real(d))
    c = divide(c, lax.expand_dims(sd, (1,)))
    c = divide(c, lax.expand_dims(sd, (0,)))
    if _aval(c).dtype_name.startswith("complex"):
        from .ufuncs import imag
        return clip(real(c), -1, 1) + 1j * clip(imag(c), -1, 1)
    return clip(c, -1, 1)
