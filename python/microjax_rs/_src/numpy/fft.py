"""`jax.numpy.fft`: NumPy's FFT functions on the `fft` primitive
(`jax.lax.fft`), with JAX's conventions: `n=`/`s=` crop or zero-pad the
input along the transformed axes, `axes=` are moved to the end and back,
`norm=` is "backward" (default), "ortho" or "forward", and more than three
axes are transformed three (or two) at a time."""
import math
import operator

import numpy as _np

from ... import dtypes as _dt
from ... import lax
from ...lax._fft import FftType
from .lax_numpy import arange, asarray, moveaxis
from .manipulation import pad, roll
from .util import _arr, _aval

_NORMS = ("backward", "ortho", "forward")


def _norm_factor(func_name, norm, lengths):
    """The Python-float factor `norm` multiplies the unnormalized result by
    (None: no multiplication)."""
    if norm is None or norm == "backward":
        return None
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or "forward".')
    total = float(math.prod(lengths))
    inverse = func_name.startswith("i")
    if norm == "ortho":
        root = math.sqrt(total)
        return root if inverse else 1.0 / root
    return total if inverse else 1.0 / total


def _check_array(full_name, a):
    if isinstance(a, (list, tuple)) or a is None or isinstance(a, str):
        raise TypeError(f"{full_name} requires ndarray or scalar arguments, got {type(a).__name__} at position 0.")
    return _arr(a)


def _fft_core(func_name, fft_type, a, s, axes, norm):
    full_name = f"jax.numpy.fft.{func_name}"
    arr = _check_array(full_name, a)
    ndim = _aval(arr).ndim
    if s is not None:
        s = tuple(operator.index(x) for x in s)
        if any(x <= 0 for x in s):
            raise ValueError("Shape should be positive.")
    if s is not None and axes is not None and len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    given_axes = axes
    if axes is None:
        axes = tuple(range(ndim)) if s is None else tuple(range(ndim - len(s), ndim))
    else:
        axes = tuple(operator.index(x) for x in axes)
    if len(axes) != len(set(axes)):
        raise ValueError(f"{full_name} does not support repeated axes. Got axes {axes}.")
    if given_axes is not None:
        trailing = tuple(range(ndim - len(axes), ndim))
        arr = moveaxis(arr, axes, trailing)
        axes = trailing
    shape = list(_aval(arr).shape)
    if s is not None:
        target = list(shape)
        for axis, n in zip(axes, s):
            target[axis] = n
        if fft_type == FftType.IRFFT:
            target[-1] = target[-1] // 2 + 1
        arr = arr[tuple(slice(n) for n in target)]
        cropped = _aval(arr).shape
        if tuple(cropped) != tuple(target):
            arr = pad(arr, [(0, t - c) for t, c in zip(target, cropped)])
        lengths = list(s)
    elif fft_type == FftType.IRFFT:
        lengths = [shape[ax] for ax in axes[:-1]]
        if axes:
            lengths.append(max(0, 2 * (shape[axes[-1]] - 1)))
    else:
        lengths = [shape[ax] for ax in axes]
    out = _fft_nd(arr, fft_type, lengths)
    factor = _norm_factor(func_name, norm, lengths)
    if factor is not None:
        out = out * factor
    if given_axes is not None:
        out = moveaxis(out, axes, given_axes)
    return out


def _fft_nd(arr, fft_type, lengths):
    """The transform over the trailing `len(lengths)` axes; beyond three axes
    the last two or three go first (forward) or last (inverse) and the rest
    are complex transforms of the leading ones."""
    if len(lengths) <= 3:
        return lax.fft(arr, fft_type, tuple(lengths))
    ndim = _aval(arr).ndim
    k = len(lengths)
    tail = 2 if k == 4 else 3
    src = tuple(range(ndim - k, ndim - tail))
    dst = tuple(range(ndim - k + tail, ndim))
    if fft_type in (FftType.FFT, FftType.RFFT):
        arr = lax.fft(arr, fft_type, tuple(lengths[-tail:]))
        arr = moveaxis(arr, src, dst)
        arr = _fft_nd(arr, FftType.FFT, lengths[:-tail])
        return moveaxis(arr, dst, src)
    arr = moveaxis(arr, src, dst)
    arr = _fft_nd(arr, FftType.IFFT, lengths[:-tail])
    arr = moveaxis(arr, dst, src)
    return lax.fft(arr, fft_type, tuple(lengths[-tail:]))


def _single_axis(func_name, axis):
    if isinstance(axis, (list, tuple)):
        full_name = f"jax.numpy.fft.{func_name}"
        raise ValueError(f"{full_name} does not support multiple axes. Please use {full_name}n. Got axis = {axis!r}.")


def _one_axis(func_name, fft_type, a, n, axis, norm):
    _single_axis(func_name, axis)
    return _fft_core(func_name, fft_type, a, None if n is None else [n], None if axis is None else [axis], norm)


def _two_axes(func_name, fft_type, a, s, axes, norm):
    if len(axes) != 2:
        raise ValueError(f"jax.numpy.fft.{func_name} only supports 2 axes. Got axes = {axes!r}.")
    return _fft_core(func_name, fft_type, a, s, axes, norm)


def fft(a, n=None, axis=-1, norm=None):
    """One-dimensional discrete Fourier transform along `axis` (numpy.fft.fft)."""
    return _one_axis("fft", FftType.FFT, a, n, axis, norm)


def ifft(a, n=None, axis=-1, norm=None):
    """One-dimensional inverse discrete Fourier transform (numpy.fft.ifft)."""
    return _one_axis("ifft", FftType.IFFT, a, n, axis, norm)


def rfft(a, n=None, axis=-1, norm=None):
    """One-dimensional transform of real input: the `n//2 + 1` non-negative
    frequencies (numpy.fft.rfft)."""
    return _one_axis("rfft", FftType.RFFT, a, n, axis, norm)


def irfft(a, n=None, axis=-1, norm=None):
    """Inverse of `rfft`: `n` real samples (default `2*(m-1)`) from `m`
    non-negative frequencies (numpy.fft.irfft)."""
    return _one_axis("irfft", FftType.IRFFT, a, n, axis, norm)


def hfft(a, n=None, axis=-1, norm=None):
    """Transform of a Hermitian-symmetric signal given by its first half: a
    real spectrum (numpy.fft.hfft)."""
    from .ufuncs import conj

    conj_a = conj(_check_array("jax.numpy.fft.hfft", a))
    _single_axis("hfft", axis)
    nn = (_aval(conj_a).shape[axis] - 1) * 2 if n is None else n
    return _one_axis("hfft", FftType.IRFFT, conj_a, n, axis, norm) * nn


def ihfft(a, n=None, axis=-1, norm=None):
    """Inverse of `hfft`: the first half of the Hermitian spectrum of a real
    signal (numpy.fft.ihfft)."""
    from .ufuncs import conj

    _single_axis("ihfft", axis)
    arr = asarray(a)
    nn = _aval(arr).shape[axis] if n is None else n
    out = _one_axis("ihfft", FftType.RFFT, arr, n, axis, norm)
    return conj(out) * (1 / nn)


def fft2(a, s=None, axes=(-2, -1), norm=None):
    """Two-dimensional discrete Fourier transform (numpy.fft.fft2)."""
    return _two_axes("fft2", FftType.FFT, a, s, axes, norm)


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    """Two-dimensional inverse transform (numpy.fft.ifft2)."""
    return _two_axes("ifft2", FftType.IFFT, a, s, axes, norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    """Two-dimensional transform of real input (numpy.fft.rfft2)."""
    return _two_axes("rfft2", FftType.RFFT, a, s, axes, norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    """Inverse of `rfft2` (numpy.fft.irfft2)."""
    return _two_axes("irfft2", FftType.IRFFT, a, s, axes, norm)


def fftn(a, s=None, axes=None, norm=None):
    """N-dimensional discrete Fourier transform (numpy.fft.fftn)."""
    return _fft_core("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(a, s=None, axes=None, norm=None):
    """N-dimensional inverse transform (numpy.fft.ifftn)."""
    return _fft_core("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(a, s=None, axes=None, norm=None):
    """N-dimensional transform of real input, the last axis halved
    (numpy.fft.rfftn)."""
    return _fft_core("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(a, s=None, axes=None, norm=None):
    """Inverse of `rfftn` (numpy.fft.irfftn)."""
    return _fft_core("irfftn", FftType.IRFFT, a, s, axes, norm)


def _freq_args(name, n, d):
    if isinstance(n, (list, tuple)):
        raise ValueError(f"The n argument of jax.numpy.fft.{name} only takes an int. Got n = {list(n)}.")
    if isinstance(d, (list, tuple)):
        raise ValueError(f"The d argument of jax.numpy.fft.{name} only takes a single value. Got d = {list(d)}.")


def fftfreq(n, d=1.0, *, dtype=None, device=None):
    """Sample frequencies of an `n`-point transform with spacing `d`:
    `[0, 1, ..., n//2 - 1 (or (n-1)//2), -(n//2), ..., -1] / (d*n)`."""
    _freq_args("fftfreq", n, d)
    out_name = _dt.dtype_name(dtype) if dtype is not None else _dt.default_float_name()
    name = out_name if _dt.is_float_name(out_name) else _dt.default_float_name()
    i = arange(n, dtype=name)
    k = (i + n // 2) % n - n // 2
    result = k / asarray(d * n, dtype=name)
    return result if name == out_name else result.astype(out_name)


def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    """Sample frequencies of an `n`-point real transform: `[0, 1, ..., n//2] / (d*n)`."""
    _freq_args("rfftfreq", n, d)
    name = _dt.dtype_name(dtype) if dtype is not None else _dt.default_float_name()
    k = arange(0, n // 2 + 1, dtype=name)
    return k / asarray(d * n, dtype=name)


def _shifts(x, axes, sign):
    shape = _aval(x).shape
    if axes is None:
        axes = tuple(range(len(shape)))
        return [sign * (dim // 2) for dim in shape], axes
    if isinstance(axes, (int, _np.integer)):
        return sign * (shape[axes] // 2), axes
    return [sign * (shape[ax] // 2) for ax in axes], axes


def fftshift(x, axes=None):
    """Moves the zero frequency to the centre (numpy.fft.fftshift)."""
    x = _check_array("fftshift", x)
    shift, axes = _shifts(x, axes, 1)
    return roll(x, shift, axes)


def ifftshift(x, axes=None):
    """Inverse of `fftshift` (numpy.fft.ifftshift)."""
    x = _check_array("ifftshift", x)
    shift, axes = _shifts(x, axes, -1)
    return roll(x, shift, axes)
