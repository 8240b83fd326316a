"""`lax.fft` and `lax.FftType`: the `fft` primitive's wrapper. A transform
over the trailing `len(fft_lengths)` axes (one to three): `FFT`/`IFFT`
complex to complex (`IFFT` scaled by 1/prod(fft_lengths)), `RFFT` real to
the half spectrum, `IRFFT` half spectrum to real of `fft_lengths`."""
import enum

from .. import core, dtypes


class FftType(enum.IntEnum):
    """Which transform `lax.fft` computes (JAX's values)."""

    FFT = 0
    "Forward complex-to-complex FFT."
    IFFT = 1
    "Inverse complex-to-complex FFT."
    RFFT = 2
    "Forward real-to-complex FFT."
    IRFFT = 3
    "Inverse real-to-complex FFT."


_BY_NAME = {spelling: t for t in FftType for spelling in (t.name, t.name.lower())}


def _fft_type(fft_type):
    if isinstance(fft_type, FftType):
        return fft_type
    if isinstance(fft_type, str):
        if fft_type not in _BY_NAME:
            raise ValueError(f"Unknown FFT type '{fft_type}'")
        return _BY_NAME[fft_type]
    raise TypeError(f"Unknown FFT type value '{fft_type}'")


def _complex_name(name):
    """The complex dtype a transform of dtype `name` computes in."""
    if dtypes.is_complex_name(name):
        return name
    if name == "float64":
        return "complex128"
    if dtypes.is_float_name(name):
        return "complex64"
    return "complex128" if dtypes.default_float_name() == "float64" else "complex64"


def fft(x, fft_type, fft_lengths):
    """`jax.lax.fft(x, fft_type, fft_lengths)`: the `fft_type` transform over the
    trailing `len(fft_lengths)` axes. `RFFT` takes real input (integers become
    the default float), the others complex (real input is converted)."""
    from . import _arr, _aval, convert_element_type, fft_p

    typ = _fft_type(fft_type)
    x = _arr(x) if isinstance(x, (core.ArrayImpl, core.Tracer)) else core.to_array(x)
    name = _aval(x).dtype_name
    if typ == FftType.RFFT:
        if dtypes.is_complex_name(name):
            raise ValueError("only real valued inputs supported for rfft")
        target = name if dtypes.is_float_name(name) else dtypes.default_float_name()
    else:
        target = _complex_name(name)
    if target != name:
        x = convert_element_type(x, target)
    lengths = tuple(int(n) for n in fft_lengths)
    if not lengths:
        return x
    return fft_p.bind(x, fft_type=typ, fft_lengths=lengths)
