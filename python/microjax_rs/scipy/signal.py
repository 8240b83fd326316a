"""`jax.scipy.signal`: N-d convolution and correlation (`convolve`,
`correlate`, `convolve2d`, `correlate2d`; direct, or through FFTs with
`method='fft'`), `detrend`, and the FFT-based `fftconvolve`, `stft`,
`istft`, `csd` and `welch` (`scipy/_spectral.py`)."""
import numpy as _np

from .. import lax
from .. import numpy as jnp
from .._src.numpy.util import _aval, _promote_dtypes_inexact

_MODES = ("full", "same", "valid")


def _convolve_nd(in1, in2, mode, precision):
    if mode not in _MODES:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    in1, in2 = jnp.asarray(in1), jnp.asarray(in2)
    s1, s2 = _aval(in1).shape, _aval(in2).shape
    if len(s1) != len(s2):
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if _np.prod(s1) == 0 or _np.prod(s2) == 0:
        raise ValueError(f"zero-size arrays not supported in convolutions, got shapes {s1} and {s2}.")
    in1, in2 = _promote_dtypes_inexact(in1, in2)
    no_swap = all(a >= b for a, b in zip(s1, s2))
    swap = all(a <= b for a, b in zip(s1, s2))
    if not (no_swap or swap):
        raise ValueError("One input must be smaller than the other in every dimension.")
    big, small = (in2, in1) if swap and not no_swap else (in1, in2)
    bs, ss = _aval(big).shape, _aval(small).shape
    nd = len(bs)
    if nd == 0:
        return big * small
    # the full convolution: the flipped kernel slid over the zero-padded signal
    kernel = jnp.flip(small)
    full = lax.conv_general_dilated(big[None, None], kernel[None, None], (1,) * nd,
                                    [(k - 1, k - 1) for k in ss], precision=precision)[0, 0]
    if mode == "full":
        return full
    if mode == "same":
        starts = [(b - 1) // 2 for b in s2]
        sizes = list(s1)
    else:
        starts = [k - 1 for k in ss]
        sizes = [b - k + 1 for b, k in zip(bs, ss)]
    return lax.slice(full, starts, [a + n for a, n in zip(starts, sizes)])


def convolve(in1, in2, mode="full", method="auto", precision=None):
    """The N-d convolution of `in1` and `in2` (`mode` 'full', 'same' — the
    shape of `in1` — or 'valid'); `method` 'direct' or 'auto'."""
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    if method not in ("auto", "direct"):
        raise ValueError(f"Got method={method!r}; expected 'auto', 'fft', or 'direct'.")
    return _convolve_nd(in1, in2, mode, precision)


def correlate(in1, in2, mode="full", method="auto", precision=None):
    """The N-d cross-correlation: `convolve(in1, flip(in2))` (real inputs)."""
    return convolve(in1, jnp.flip(jnp.asarray(in2)), mode, method=method, precision=precision)


def _check_2d(name, in1, in2, boundary, fillvalue):
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{name}() only supports boundary='fill', fillvalue=0")
    if jnp.ndim(in1) != 2 or jnp.ndim(in2) != 2:
        raise ValueError(f"{name}() only supports 2-dimensional inputs.")


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """2-d convolution (only `boundary='fill'` with `fillvalue=0`, as JAX)."""
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return _convolve_nd(in1, in2, mode, precision)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """2-d cross-correlation (only `boundary='fill'` with `fillvalue=0`)."""
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    in1, in2 = jnp.asarray(in1), jnp.asarray(in2)
    s1, s2 = _aval(in1).shape, _aval(in2).shape
    swap = all(a <= b for a, b in zip(s1, s2))
    same_shape = tuple(s1) == tuple(s2)
    # SciPy's correlate2d anchors 'same' (and a swapped 'valid' / 'full')
    # differently from correlate(): flip the first input, convolve, flip back.
    if swap and ((mode == "valid" and not same_shape) or mode == "full"):
        return _convolve_nd(jnp.flip(in2), in1, mode, precision)
    return jnp.flip(_convolve_nd(jnp.flip(in1), in2, mode, precision))


def detrend(data, axis=-1, type="linear", bp=0, overwrite_data=None):
    """Removes the mean (`type='constant'`) or a least-squares line per
    segment between the breakpoints `bp` (`'linear'`) along `axis`."""
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ("constant", "linear"):
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    (x,) = _promote_dtypes_inexact(jnp.asarray(data))
    if type == "constant":
        return x - jnp.mean(x, axis=axis, keepdims=True)
    n = _aval(x).shape[axis]
    bps = _np.sort(_np.unique(_np.r_[0, bp, n]))
    if bps[0] < 0 or bps[-1] > n:
        raise ValueError("Breakpoints must be non-negative and less than length of data along given axis.")
    x = jnp.moveaxis(x, axis, 0)
    dt = _aval(x).dtype_name
    pieces = []
    for lo, hi in zip(bps[:-1], bps[1:]):
        npts = int(hi - lo)
        seg = x[int(lo):int(hi)]
        # least-squares line through the segment, centred for conditioning
        t = _np.arange(1, npts + 1, dtype=_np.float64) / npts
        tc = t - t.mean()
        denom = float((tc * tc).sum())
        tcol = jnp.asarray(tc.reshape((npts,) + (1,) * (_aval(seg).ndim - 1)), dtype=dt)
        mean = jnp.mean(seg, axis=0, keepdims=True)
        slope = jnp.sum(tcol * seg, axis=0, keepdims=True) / denom if denom > 0 else 0.0 * mean
        pieces.append(seg - mean - slope * tcol)
    x = jnp.concatenate(pieces, axis=0) if pieces else x
    return jnp.moveaxis(x, 0, axis)


from ._spectral import csd, fftconvolve, istft, stft, welch  # noqa: E402

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "csd", "detrend", "fftconvolve", "istft", "stft",
           "welch"]
