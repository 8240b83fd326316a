"""Window functions (jnp.bartlett, blackman, hamming, hanning, kaiser):
length-M tapers in the default float dtype, symmetric as NumPy's."""
import operator

import numpy as _np

from ... import core, dtypes as _dt
from ...core import Tracer
from .lax_numpy import arange, asarray, ones
from .ufuncs import _where, abs as _abs, cos, i0, sqrt
from .util import _promote_dtypes_inexact


def _length(M, name):
    if isinstance(M, Tracer):
        raise core.ConcretizationTypeError(f"M argument of jnp.{name}: the window length must be concrete")
    try:
        M = operator.index(M)
    except TypeError:
        M = int(M)
    if M < 0:
        raise TypeError(f"broadcast_in_dim shape must have every element be nonnegative, got ({M},).")
    return M


def _positions(M):
    """n = 0 .. M-1 in the default float dtype."""
    return arange(M, dtype=_dt.default_float_name())


def _cosine_sum(M, name, coeffs):
    M = _length(M, name)
    if M <= 1:
        return ones((max(M, 0),), _dt.default_float_name())
    n = _positions(M)
    out = n * 0.0 + coeffs[0]
    for k, c in enumerate(coeffs[1:], start=1):
        out = out + c * cos(2.0 * k * _np.pi * n / (M - 1))
    return out


def hamming(M):
    """The Hamming window 0.54 - 0.46 cos(2 pi n / (M-1))."""
    return _cosine_sum(M, "hamming", (0.54, -0.46))


def hanning(M):
    """The Hann window 0.5 - 0.5 cos(2 pi n / (M-1))."""
    return _cosine_sum(M, "hanning", (0.5, -0.5))


def blackman(M):
    """The Blackman window 0.42 - 0.5 cos(2 pi n/(M-1)) + 0.08 cos(4 pi n/(M-1))."""
    return _cosine_sum(M, "blackman", (0.42, -0.5, 0.08))


def bartlett(M):
    """The Bartlett (triangular) window."""
    M = _length(M, "bartlett")
    if M <= 1:
        return ones((max(M, 0),), _dt.default_float_name())
    n = _positions(M)
    half = (M - 1) / 2.0
    return 1.0 - _abs(n - half) / half


def kaiser(M, beta):
    """The Kaiser window i0(beta sqrt(1 - (2n/(M-1) - 1)^2)) / i0(beta)."""
    M = _length(M, "kaiser")
    if M <= 1:
        return ones((max(M, 0),), _dt.default_float_name())
    (b,) = _promote_dtypes_inexact(asarray(beta))
    n = _positions(M)
    ratio = 2.0 * n / (M - 1) - 1.0
    inside = 1.0 - ratio * ratio
    return i0(b * sqrt(_where(inside > 0, inside, 0.0))) / i0(b)
