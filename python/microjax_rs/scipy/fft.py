"""`jax.scipy.fft`: the type-2 discrete cosine transform and its inverse
(`dct`, `idct`, `dctn`, `idctn`), with SciPy's "backward" (default) and
"ortho" normalizations, computed through one complex FFT of the
even/odd-interleaved signal (Makhoul's algorithm). As in JAX, only type 2
is provided; complex input is transformed part by part."""
import operator

import numpy as _np

from .. import dtypes as _dt
from .. import lax
from .. import numpy as jnp
from .._src.numpy.util import _aval, _canon_axis, _promote_dtypes_inexact


def _check(name, x, type, norm):
    if isinstance(x, (list, tuple)) or x is None or isinstance(x, str):
        raise TypeError(f"{name} requires ndarray or scalar arguments, got {x.__class__.__name__} at position 0.")
    if type != 2:
        raise NotImplementedError("Only DCT type 2 is implemented.")
    if norm is not None and norm not in ("backward", "ortho"):
        raise ValueError(f"jax.scipy.fft.{name}: norm={norm!r} is not implemented")
    return jnp.asarray(x)


def _resize(x, n, axis):
    """`x` cropped or zero-padded to `n` entries along `axis`."""
    size = _aval(x).shape[axis]
    if n is None or n == size:
        return x
    if n < size:
        return lax.slice_in_dim(x, 0, n, axis=axis)
    widths = [(0, 0)] * _aval(x).ndim
    widths[axis] = (0, n - size)
    return jnp.pad(x, widths)


def _along(values, axis, ndim, name):
    """A 1-d NumPy `values` as a constant of dtype `name` shaped to broadcast
    along `axis`."""
    shape = [1] * ndim
    shape[axis] = len(values)
    return jnp.asarray(_np.asarray(values).reshape(shape), dtype=name)


def _ortho_scale(n):
    """SciPy's "ortho" factors of the DCT-II coefficients: sqrt(1/(4n)) for
    the first, sqrt(1/(2n)) for the others."""
    s = _np.full(n, _np.sqrt(1.0 / (2 * n)))
    s[:1] = _np.sqrt(1.0 / (4 * n))
    return s


def _interleave(x, axis):
    """Even entries in order, then odd entries reversed."""
    even = lax.slice_in_dim(x, 0, None, 2, axis=axis)
    odd = lax.rev(lax.slice_in_dim(x, 1, None, 2, axis=axis), (axis,))
    return lax.concatenate([even, odd], axis)


def _deinterleave(v, axis):
    """Inverse of `_interleave`."""
    n = _aval(v).shape[axis]
    first = lax.slice_in_dim(v, 0, (n + 1) // 2, axis=axis)
    second = lax.rev(lax.slice_in_dim(v, (n + 1) // 2, n, axis=axis), (axis,))
    idx = _np.empty(n, dtype=_np.int64)
    idx[0::2] = _np.arange((n + 1) // 2)
    idx[1::2] = (n + 1) // 2 + _np.arange(n // 2)
    return jnp.take(lax.concatenate([first, second], axis), jnp.asarray(idx), axis=axis)


def _dct_real(x, axis, norm):
    """DCT-II of real `x` along `axis`: `X_k = 2 Re(V_k e^{-iπk/2n})`, `V`
    the FFT of the interleaved signal."""
    (x,) = _promote_dtypes_inexact(x)
    name = _aval(x).dtype_name
    ndim = _aval(x).ndim
    n = _aval(x).shape[axis]
    spectrum = jnp.fft.fft(_interleave(x, axis), axis=axis)
    theta = _np.pi * _np.arange(n) / (2 * n)
    c, s = _along(_np.cos(theta), axis, ndim, name), _along(_np.sin(theta), axis, ndim, name)
    out = 2 * (jnp.real(spectrum) * c + jnp.imag(spectrum) * s)
    if norm == "ortho":
        out = out * _along(_ortho_scale(n), axis, ndim, name)
    return out


def _idct_real(x, axis, norm):
    """Inverse of `_dct_real`: `V_k = (X_k - i X_{n-k}) e^{iπk/2n} / 2`,
    the interleaved signal the real part of `ifft(V)`."""
    (x,) = _promote_dtypes_inexact(x)
    name = _aval(x).dtype_name
    ndim = _aval(x).ndim
    n = _aval(x).shape[axis]
    if norm == "ortho":
        x = x / _along(_ortho_scale(n), axis, ndim, name)
    # X_{n-k} for k = 1..n-1, and 0 for k = 0.
    mirrored = lax.rev(lax.slice_in_dim(x, 1, n, axis=axis), (axis,))
    widths = [(0, 0)] * ndim
    widths[axis] = (1, 0)
    mirrored = jnp.pad(mirrored, widths)
    theta = _np.pi * _np.arange(n) / (2 * n)
    c, s = _along(_np.cos(theta), axis, ndim, name), _along(_np.sin(theta), axis, ndim, name)
    re = (x * c + mirrored * s) / 2
    im = (x * s - mirrored * c) / 2
    v = jnp.real(jnp.fft.ifft(lax.complex(re, im), axis=axis))
    return _deinterleave(v, axis)


def _by_parts(f, x, *args):
    if _dt.is_complex_name(_aval(x).dtype_name):
        return lax.complex(f(jnp.real(x), *args), f(jnp.imag(x), *args))
    return f(x, *args)


def dct(x, type=2, n=None, axis=-1, norm=None):
    """Type-2 discrete cosine transform along `axis` (scipy.fft.dct):
    `y_k = 2 sum_j x_j cos(pi k (2j + 1) / (2n))`, "ortho" scaling it to an
    orthonormal transform; `n` crops or zero-pads the input."""
    x = _check("dct", x, type, norm)
    axis = _canon_axis(axis, _aval(x).ndim)
    return _by_parts(_dct_real, _resize(x, n, axis), axis, norm)


def idct(x, type=2, n=None, axis=-1, norm=None):
    """Inverse of the type-2 DCT along `axis` (scipy.fft.idct)."""
    x = _check("idct", x, type, norm)
    axis = _canon_axis(axis, _aval(x).ndim)
    return _by_parts(_idct_real, _resize(x, n, axis), axis, norm)


def _axes_and_sizes(x, s, axes):
    ndim = _aval(x).ndim
    if s is not None:
        try:
            s = list(s)
        except TypeError:
            s = [operator.index(s)]
        if len(s) > ndim:
            raise ValueError(f"s must have at most x.ndim ({ndim}) elements, got {len(s)}")
    if axes is None:
        axes = tuple(range(ndim - len(s), ndim)) if s is not None else tuple(range(ndim))
    else:
        axes = tuple(_canon_axis(a, ndim) for a in axes)
        if len(set(axes)) != len(axes):
            raise ValueError(f"repeated axis in axes {axes}")
    sizes = list(s) if s is not None else [None] * len(axes)
    return list(zip(axes, sizes))


def dctn(x, type=2, s=None, axes=None, norm=None):
    """Multidimensional type-2 DCT over `axes` (all by default; scipy.fft.dctn)."""
    x = _check("dctn", x, type, norm)
    for axis, n in _axes_and_sizes(x, s, axes):
        x = _by_parts(_dct_real, _resize(x, n, axis), axis, norm)
    return x


def idctn(x, type=2, s=None, axes=None, norm=None):
    """Inverse of `dctn` (scipy.fft.idctn)."""
    x = _check("idctn", x, type, norm)
    for axis, n in _axes_and_sizes(x, s, axes):
        x = _by_parts(_idct_real, _resize(x, n, axis), axis, norm)
    return x
