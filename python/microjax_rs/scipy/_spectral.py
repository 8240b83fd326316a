"""The FFT-based functions of `jax.scipy.signal`: `fftconvolve`, `stft`,
`istft`, `csd` and `welch`, with SciPy's (and JAX's) conventions: segments
of `nperseg` samples every `nperseg - noverlap`, a window given by name
(periodic "hann" (default), "hamming", "blackman", "bartlett", "boxcar") or
as an array, "density"/"spectrum" scaling, one- or two-sided spectra, and
the "mean"/"median" averages of `csd`/`welch`."""
import math
import warnings

import numpy as _np

from .. import dtypes as _dt
from .. import lax
from .. import numpy as jnp
from .._src.numpy.util import _aval, _canon_axis, _promote_dtypes_inexact


def _periodic_window(name, n):
    """SciPy's `get_window(name, n)` (periodic: the symmetric window of
    length n + 1 without its last sample) for the supported names."""
    if n == 1:
        return _np.ones(1)
    k = 2 * _np.pi * _np.arange(n) / n
    if name in ("hann", "hanning"):
        return 0.5 - 0.5 * _np.cos(k)
    if name in ("hamming", "hamm"):
        return 0.54 - 0.46 * _np.cos(k)
    if name in ("blackman", "black"):
        return 0.42 - 0.5 * _np.cos(k) + 0.08 * _np.cos(2 * k)
    if name in ("bartlett", "bart", "brt"):
        return 1.0 - _np.abs(2.0 * _np.arange(n) / n - 1.0)
    if name in ("boxcar", "box", "ones", "rect", "rectangular"):
        return _np.ones(n)
    raise ValueError(f"Unknown window type {name!r}: microjax_rs supports 'hann', 'hamming', 'blackman', "
                     "'bartlett' and 'boxcar' (or pass the window as an array).")


def _window(window, nperseg, length, dtype_name):
    """The window as an array of `dtype_name`, and the segment length."""
    if isinstance(window, (str, tuple)):
        name = window[0] if isinstance(window, tuple) else window
        n = length if nperseg is None else int(nperseg)
        if n > length:
            warnings.warn(f"nperseg={n} is greater than input_length={length}, using nperseg={length}")
            n = length
        return jnp.asarray(_periodic_window(name, n), dtype=dtype_name), n
    win = jnp.asarray(window, dtype=dtype_name)
    n = _aval(win).size if nperseg is None else int(nperseg)
    if _aval(win).ndim != 1:
        raise ValueError("window must be 1-D")
    if length < _aval(win).size:
        raise ValueError("window is longer than input signal")
    if n != _aval(win).size:
        raise ValueError("value specified for nperseg is different from length of window")
    return win, n


def _segments(x, nperseg, step):
    """`x[..., L]` as overlapping segments `[..., nseg, nperseg]`."""
    length = _aval(x).shape[-1]
    starts = _np.arange(0, length - nperseg + 1, step)
    return x[..., starts[:, None] + _np.arange(nperseg)[None, :]]


def _pad_last(x, before, after, mode="constant"):
    widths = [(0, 0)] * (_aval(x).ndim - 1) + [(before, after)]
    return jnp.pad(x, widths, mode=mode)


def _odd_extension(x, n):
    if n < 1:
        return x
    if n > _aval(x).shape[-1] - 1:
        raise ValueError(f"The extension length n ({n}) is too big. "
                         f"It must not exceed x.shape[axis]-1, which is {_aval(x).shape[-1] - 1}.")
    first, last = x[..., :1], x[..., -1:]
    left = jnp.flip(x[..., 1:n + 1], axis=-1)
    right = jnp.flip(x[..., -(n + 1):-1], axis=-1)
    return jnp.concatenate([2 * first - left, x, 2 * last - right], axis=-1)


_BOUNDARIES = {
    "even": lambda x, n: _pad_last(x, n, n, "reflect"),
    "odd": _odd_extension,
    "constant": lambda x, n: _pad_last(x, n, n, "edge"),
    "zeros": lambda x, n: _pad_last(x, n, n),
    None: lambda x, n: x,
}


def _detrender(detrend):
    from .signal import detrend as _detrend

    if isinstance(detrend, str):
        return lambda d: _detrend(d, axis=-1, type=detrend)
    if callable(detrend):
        return detrend
    if not detrend:
        return lambda d: d
    raise ValueError(f"Unsupported detrend type: {detrend}")


def _spectrum(x, win, detrend, nperseg, step, nfft, twosided):
    """The windowed transforms of the detrended segments of `x[..., L]`."""
    segs = detrend(_segments(x, nperseg, step))
    segs = segs * win
    if twosided:
        return jnp.fft.fft(segs, n=nfft)
    return jnp.fft.rfft(jnp.real(segs) if _dt.is_complex_name(_aval(segs).dtype_name) else segs, n=nfft)


def _spectral(x, y, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, axis, mode,
              boundary=None, padded=False):
    """`(freqs, times, result)` of SciPy's `_spectral_helper` for `mode`
    "psd" (cross spectral density when `y` is given) or "stft"."""
    if boundary not in _BOUNDARIES:
        raise ValueError(f"Unknown boundary option '{boundary}', must be one of: {list(_BOUNDARIES)}")
    x = jnp.asarray(x)
    axis = _canon_axis(axis, _aval(x).ndim)
    if y is None:
        (x,) = _promote_dtypes_inexact(x)
    else:
        x, y = _promote_dtypes_inexact(x, jnp.asarray(y))
        if _aval(x).ndim != _aval(y).ndim:
            raise ValueError(f"two-arguments must have the same rank ({_aval(x).ndim} vs {_aval(y).ndim}).")
    name = _aval(x).dtype_name
    complex_name = name if _dt.is_complex_name(name) else ("complex128" if name == "float64" else "complex64")
    real_name = "float64" if complex_name == "complex128" else "float32"
    if nperseg is not None and int(nperseg) < 1:
        raise ValueError("nperseg must be a positive integer")
    win, nperseg = _window(window, nperseg, _aval(x).shape[axis], name)
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    nfft = nperseg if nfft is None else int(nfft)
    if nfft < nperseg:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    step = nperseg - noverlap
    x = jnp.moveaxis(x, axis, -1)
    if y is not None:
        y = jnp.moveaxis(y, axis, -1)
        lx, ly = _aval(x).shape[-1], _aval(y).shape[-1]
        x, y = (_pad_last(x, 0, ly - lx), y) if lx < ly else (x, _pad_last(y, 0, lx - ly))
    extend = _BOUNDARIES[boundary]
    x = extend(x, nperseg // 2)
    y = None if y is None else extend(y, nperseg // 2)
    if padded:
        extra = (-(_aval(x).shape[-1] - nperseg) % step) % nperseg
        x = _pad_last(x, 0, extra)
        y = None if y is None else _pad_last(y, 0, extra)
    if scaling == "density":
        scale = 1.0 / (fs * jnp.sum(win * win))
    elif scaling == "spectrum":
        scale = 1.0 / jnp.sum(win) ** 2
    else:
        raise ValueError(f"Unknown scaling: {scaling}")
    if mode == "stft":
        scale = jnp.sqrt(scale)
    twosided = not return_onesided
    if return_onesided and (_dt.is_complex_name(name)):
        warnings.warn("Input data is complex, switching to return_onesided=False")
        twosided = True
    freqs = (jnp.fft.fftfreq if twosided else jnp.fft.rfftfreq)(nfft, 1 / fs, dtype=real_name)
    det = _detrender(detrend)
    result = _spectrum(x, win, det, nperseg, step, nfft, twosided)
    if y is not None:
        result = jnp.conj(result) * _spectrum(y, win, det, nperseg, step, nfft, twosided)
    elif mode == "psd":
        result = jnp.conj(result) * result
    result = result * scale
    if not twosided and mode == "psd":
        weights = _np.full(_aval(result).shape[-1], 2.0)
        weights[0] = 1.0
        if nfft % 2 == 0:
            weights[-1] = 1.0
        result = result * jnp.asarray(weights, dtype=real_name)
    length = _aval(x).shape[-1]
    times = _np.arange(nperseg / 2, length - nperseg / 2 + 1, step) / fs
    if boundary is not None:
        times = times - (nperseg / 2) / fs
    result = result.astype(complex_name)
    if y is None and mode != "stft":
        result = jnp.real(result)
    # [..., segments, frequencies] -> frequencies at `axis`, segments last
    result = jnp.moveaxis(result, -1, axis)
    return freqs, jnp.asarray(times, dtype=real_name), result


def fftconvolve(in1, in2, mode="full", axes=None):
    """N-d convolution through FFTs (scipy.signal.fftconvolve): `mode` 'full',
    'same' (the shape of `in1`) or 'valid'; `axes` the convolved axes (the
    others must match and are mapped)."""
    for a in (in1, in2):
        if isinstance(a, (list, tuple)) or a is None or isinstance(a, str):
            raise TypeError(f"fftconvolve requires ndarray or scalar arguments, got {a.__class__.__name__}.")
    in1, in2 = _promote_dtypes_inexact(jnp.asarray(in1), jnp.asarray(in2))
    ndim = _aval(in1).ndim
    if ndim != _aval(in2).ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode not in ("same", "full", "valid"):
        raise ValueError("mode must be one of ['same', 'full', 'valid']")
    if axes is None:
        return _fftconvolve_all(in1, in2, mode)
    axes = (axes,) if isinstance(axes, int) else tuple(axes)
    axes = tuple(_canon_axis(a, ndim) for a in axes)
    mapped = sorted(set(range(ndim)) - set(axes))
    s1, s2 = _aval(in1).shape, _aval(in2).shape
    if any(s1[i] != s2[i] for i in mapped):
        raise ValueError(f"mapped axes must have same shape; got in1.shape={s1} in2.shape={s2} axes={axes}")
    from .. import vmap

    f = lambda a, b: _fftconvolve_all(a, b, mode)  # noqa: E731
    for ax in reversed(mapped):
        f = vmap(f, in_axes=ax, out_axes=ax)
    return f(in1, in2)


def _fftconvolve_all(in1, in2, mode):
    s1, s2 = _aval(in1).shape, _aval(in2).shape
    full = tuple(a + b - 1 for a, b in zip(s1, s2))
    if mode == "valid":
        no_swap = all(a >= b for a, b in zip(s1, s2))
        swap = all(a <= b for a, b in zip(s1, s2))
        if not (no_swap or swap):
            raise ValueError("For 'valid' mode, One input must be at least as large as the other in every dimension.")
        if swap:
            in1, in2, s1, s2 = in2, in1, s2, s1
    if all(a == 1 or b == 1 for a, b in zip(s1, s2)):
        conv = in1 * in2
    elif _dt.is_complex_name(_aval(in1).dtype_name):
        conv = jnp.fft.ifftn(jnp.fft.fftn(in1, full) * jnp.fft.fftn(in2, full), full)
    else:
        conv = jnp.fft.irfftn(jnp.fft.rfftn(in1, full) * jnp.fft.rfftn(in2, full), full)
    out = {"full": full, "same": s1, "valid": tuple(a - b + 1 for a, b in zip(s1, s2))}[mode]
    starts = [(f - o) // 2 for f, o in zip(full, out)]
    return lax.slice(conv, starts, [a + o for a, o in zip(starts, out)])


def stft(x, fs=1.0, window="hann", nperseg=256, noverlap=None, nfft=None, detrend=False, return_onesided=True,
         boundary="zeros", padded=True, axis=-1):
    """Short-time Fourier transform (scipy.signal.stft): `(freqs, times, Zxx)`
    with "spectrum" scaling."""
    return _spectral(x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, "spectrum", axis,
                     "stft", boundary, padded)


def _median_bias(n):
    """The bias of the median of `n` periodograms relative to their mean."""
    k = 2.0 * _np.arange(1, (n - 1) // 2 + 1)
    return 1.0 + float(_np.sum(1.0 / (k + 1) - 1.0 / k))


def csd(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None, detrend="constant",
        return_onesided=True, scaling="density", axis=-1, average="mean"):
    """Cross power spectral density by Welch's method (scipy.signal.csd):
    `(freqs, Pxy)`."""
    freqs, _, pxy = _spectral(x, y, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, axis,
                              "psd")
    if y is not None and not _dt.is_complex_name(_aval(pxy).dtype_name):
        pxy = lax.complex(pxy, jnp.zeros_like(pxy))
    shape = _aval(pxy).shape
    if len(shape) >= 2 and math.prod(shape) > 0:
        if shape[-1] > 1:
            if average == "median":
                bias = _median_bias(shape[-1])
                if _dt.is_complex_name(_aval(pxy).dtype_name):
                    pxy = lax.complex(jnp.median(jnp.real(pxy), axis=-1), jnp.median(jnp.imag(pxy), axis=-1))
                else:
                    pxy = jnp.median(pxy, axis=-1)
                pxy = pxy / bias
            elif average == "mean":
                pxy = jnp.mean(pxy, axis=-1)
            else:
                raise ValueError(f'average must be "median" or "mean", got {average}')
        else:
            pxy = jnp.reshape(pxy, shape[:-1])
    return freqs, pxy


def welch(x, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None, detrend="constant",
          return_onesided=True, scaling="density", axis=-1, average="mean"):
    """Power spectral density by Welch's method (scipy.signal.welch): `(freqs, Pxx)`."""
    freqs, pxx = csd(x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, axis, average)
    return freqs, jnp.real(pxx) if _dt.is_complex_name(_aval(pxx).dtype_name) else pxx


def _overlap_add(frames, step):
    """Sums `frames[..., nseg, nperseg]` placed every `step` samples."""
    *batch, nseg, nperseg = _aval(frames).shape
    length = step * (nseg - 1) + nperseg
    idx = (_np.arange(nseg)[:, None] * step + _np.arange(nperseg)[None, :]).reshape(-1)
    flat = jnp.reshape(frames, tuple(batch) + (nseg * nperseg,))
    return jnp.zeros(tuple(batch) + (length,), _aval(frames).dtype_name).at[..., idx].add(flat)


def istft(Zxx, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None, input_onesided=True, boundary=True,
          time_axis=-1, freq_axis=-2):
    """Inverse short-time Fourier transform (scipy.signal.istft): `(times, x)`
    by weighted overlap-add."""
    z = jnp.asarray(Zxx)
    ndim = _aval(z).ndim
    if ndim < 2:
        raise ValueError("Input stft must be at least 2d!")
    freq_axis, time_axis = _canon_axis(freq_axis, ndim), _canon_axis(time_axis, ndim)
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    nfreq = _aval(z).shape[freq_axis]
    n_default = 2 * (nfreq - 1) if input_onesided else nfreq
    nperseg = int(nperseg or n_default)
    if nperseg < 1:
        raise ValueError("nperseg must be a positive integer")
    if nfft is None:
        nfft = n_default + (1 if input_onesided and nperseg == n_default + 1 else 0)
    nfft = int(nfft)
    if nfft < nperseg:
        raise ValueError(f"FFT length ({nfft}) must be longer than nperseg ({nperseg}).")
    noverlap = int(noverlap or nperseg // 2)
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    step = nperseg - noverlap
    outer = tuple(i for i in range(ndim) if i not in (time_axis, freq_axis))
    z = jnp.transpose(z, outer + (time_axis, freq_axis))
    frames = (jnp.fft.irfft if input_onesided else jnp.fft.ifft)(z, n=nfft, axis=-1)[..., :nperseg]
    real_name = _aval(frames).dtype_name if not _dt.is_complex_name(_aval(frames).dtype_name) else (
        "float64" if _aval(frames).dtype_name == "complex128" else "float32")
    if isinstance(window, (str, tuple)):
        win = jnp.asarray(_periodic_window(window[0] if isinstance(window, tuple) else window, nperseg),
                          dtype=real_name)
    else:
        win = jnp.asarray(window)
        if _aval(win).ndim != 1:
            raise ValueError("window must be 1-D")
        if _aval(win).shape[0] != nperseg:
            raise ValueError(f"window must have length of {nperseg}")
    frames = frames * jnp.sum(win)
    x = _overlap_add(frames * win, step)
    nseg = _aval(frames).shape[-2]
    norm = _overlap_add(jnp.broadcast_to(win * win, (nseg, nperseg)), step)
    if boundary:
        x = x[..., nperseg // 2:-(nperseg // 2)]
        norm = norm[..., nperseg // 2:-(nperseg // 2)]
    x = x / jnp.where(norm > 1e-10, norm, 1.0)
    if _aval(x).ndim > 1 and time_axis != ndim - 1:
        x = jnp.moveaxis(x, -1, time_axis - 1 if freq_axis < time_axis else time_axis)
    times = jnp.arange(_aval(x).shape[-1], dtype=real_name) / fs
    return times, x
