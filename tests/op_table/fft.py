"""Operator-table records for Fourier transforms: `jax.lax.fft`, `jax.numpy.fft`
(against `numpy.fft`) and `jax.scipy.fft`'s DCTs (against `scipy.fft`).

Sizes include primes and other non-powers of two. Inputs are real
(float32/float64: the complex-input functions convert them) or complex
(complex64/complex128: real and imaginary parts uniform in [-1, 1]).
Tolerances follow the FFT's error growth: relative 1e-5 (complex64 /
float32) and 1e-12 (complex128 / float64), with an absolute floor for the
entries near zero of a sum of many terms. Gradients of real losses built on
these functions are checked against finite differences in tests/test_fft.py
(the table's grad hook needs a real float64 result).
"""
import numpy as np
import scipy.fft
import scipy.signal as sp_signal

import microjax_rs

from ._record import OpErr, OpRecord, case_triples, is_float, pick_output

REAL = ("float32", "float64")
COMPLEX = ("complex64", "complex128")
FFT_TOL = {
    "float32": (1e-5, 5e-5),
    "complex64": (1e-5, 5e-5),
    "float64": (1e-12, 1e-11),
    "complex128": (1e-12, 1e-11),
}


def _has_complex():
    return hasattr(microjax_rs.numpy, "complex64")


def signals(rng, shapes, dtype):
    """Uniform [-1, 1] parts; complex dtypes get an imaginary part too."""
    dt = np.dtype(dtype)
    out = []
    for s in shapes:
        re = rng.uniform(-1.0, 1.0, size=tuple(s))
        if dt.kind == "c":
            out.append((re + 1j * rng.uniform(-1.0, 1.0, size=tuple(s))).astype(dt))
        else:
            out.append(re.astype(dt))
    return out


def _wide(dt, x64):
    return x64 and np.dtype(dt) in (np.dtype("float64"), np.dtype("complex128"))


def complex_out(dt, x64):
    return np.dtype("complex128") if _wide(dt, x64) else np.dtype("complex64")


def real_out(dt, x64):
    return np.dtype("float64") if _wide(dt, x64) else np.dtype("float32")


def _in_dtypes(complex_input):
    return REAL + (COMPLEX if complex_input and _has_complex() else ())


def _rec(name, ref, cases, out, complex_input=True, errors=(), path=None):
    return OpRecord(name, ref, signals, _in_dtypes(complex_input), case_triples(*cases), tol=FFT_TOL,
                    out_dtype=out, path=path, errors=errors)


def _err(arrays, exc, match, *args, **kwargs):
    return OpErr(tuple(arrays), kwargs, exc, match, args=args)


_F = np.ones((4, 6), np.float32)

# One-axis transforms: sizes 1, primes, non-powers of two; n= crops and pads;
# another axis; each norm.
ONE_AXIS = (
    (((8,),), (), {}),
    (((7,),), (), {}),
    (((1,),), (), {}),
    (((3, 12),), (), {}),
    (((13, 5),), (), {"axis": 0}),
    (((2, 3, 10),), (), {"axis": 1}),
    (((9,),), (), {"n": 5}),
    (((6,),), (), {"n": 11}),
    (((4, 15),), (), {"norm": "ortho"}),
    (((4, 15),), (), {"norm": "forward"}),
    (((4, 15),), (), {"norm": "backward"}),
    (((97,),), (), {}),
)
# The inverse real transforms read a half spectrum: m entries make 2(m-1) samples.
HALF_AXIS = ONE_AXIS[:2] + ONE_AXIS[3:6] + (
    (((9,),), (), {"n": 16}),
    (((6,),), (), {"n": 7}),
    (((4, 15),), (), {"norm": "ortho"}),
    (((4, 15),), (), {"norm": "forward"}),
    (((50,),), (), {}),
)
TWO_AXES = (
    (((4, 6),), (), {}),
    (((5, 7),), (), {}),
    (((2, 3, 10),), (), {}),
    (((3, 5, 6),), (), {"axes": (0, 2)}),
    (((6, 4),), (), {"axes": (1, 0)}),
    (((5, 7),), (), {"s": (4, 9)}),
    (((6, 8),), (), {"norm": "ortho"}),
)
N_AXES = (
    (((4, 6),), (), {}),
    (((3, 5, 7),), (), {}),
    (((2, 3, 4, 5),), (), {}),
    (((2, 3, 2, 3, 2),), (), {}),
    (((3, 5, 6),), (), {"axes": (0, 2)}),
    (((3, 5, 6),), (), {"axes": (2,)}),
    (((5, 7),), (), {"s": (4, 9)}),
    (((4, 6, 5),), (), {"s": (3, 8), "axes": (2, 0)}),
    (((6, 8),), (), {"norm": "forward"}),
)

_BAD_AXES = _err([_F], ValueError, "does not support multiple axes", axis=(0, 1))
# hfft/ihfft read the axis length before checking the axis: JAX's IndexError.
_AXIS_INDEX = _err([_F], IndexError, "tuple index out of range", axis=2)
_BAD_NORM = _err([_F], ValueError, 'Invalid norm value bogus; should be "backward","ortho" or "forward".',
                 norm="bogus")
_BAD_N = _err([_F], ValueError, "Shape should be positive.", n=0)
_REPEATED = _err([_F], ValueError, "does not support repeated axes", axes=(1, 1))
_S_AXES = _err([_F], ValueError, "Shape and axes have different lengths.", s=(2, 3, 4), axes=(0, 1))
_TWO_ONLY = _err([_F], ValueError, "only supports 2 axes", axes=(0,))

RECORDS = (
    _rec("numpy.fft.fft", np.fft.fft, ONE_AXIS, complex_out, errors=(_BAD_AXES, _BAD_NORM, _BAD_N)),
    _rec("numpy.fft.ifft", np.fft.ifft, ONE_AXIS, complex_out, errors=(_BAD_NORM,)),
    _rec("numpy.fft.rfft", np.fft.rfft, ONE_AXIS, complex_out, complex_input=False,
         errors=(_BAD_AXES, _BAD_N)),
    _rec("numpy.fft.irfft", np.fft.irfft, HALF_AXIS, real_out, errors=(_BAD_NORM,)),
    _rec("numpy.fft.hfft", np.fft.hfft, HALF_AXIS, real_out, errors=(_BAD_AXES, _AXIS_INDEX)),
    _rec("numpy.fft.ihfft", np.fft.ihfft, ONE_AXIS, complex_out, complex_input=False,
         errors=(_BAD_AXES, _AXIS_INDEX)),
    _rec("numpy.fft.fft2", np.fft.fft2, TWO_AXES, complex_out, errors=(_TWO_ONLY, _REPEATED)),
    _rec("numpy.fft.ifft2", np.fft.ifft2, TWO_AXES, complex_out, errors=(_TWO_ONLY,)),
    _rec("numpy.fft.rfft2", np.fft.rfft2, TWO_AXES, complex_out, complex_input=False, errors=(_TWO_ONLY,)),
    _rec("numpy.fft.irfft2", np.fft.irfft2, TWO_AXES, real_out, errors=(_TWO_ONLY,)),
    _rec("numpy.fft.fftn", np.fft.fftn, N_AXES, complex_out, errors=(_REPEATED, _S_AXES)),
    _rec("numpy.fft.ifftn", np.fft.ifftn, N_AXES, complex_out, errors=(_S_AXES,)),
    _rec("numpy.fft.rfftn", np.fft.rfftn, N_AXES, complex_out, complex_input=False, errors=(_S_AXES,)),
    _rec("numpy.fft.irfftn", np.fft.irfftn, N_AXES, real_out, errors=(_S_AXES,)),
    OpRecord("numpy.fft.fftshift", np.fft.fftshift, signals, REAL,
             case_triples((((7,),), (), {}), (((4, 5),), (), {}), (((4, 5),), (), {"axes": 1}),
                          (((3, 4, 5),), (), {"axes": (0, 2)}))),
    OpRecord("numpy.fft.ifftshift", np.fft.ifftshift, signals, REAL,
             case_triples((((7,),), (), {}), (((4, 5),), (), {}), (((4, 5),), (), {"axes": 0}),
                          (((3, 4, 5),), (), {"axes": (2, 0)}))),
    OpRecord("numpy.fft.fftfreq", lambda n, d=1.0, **kw: np.fft.fftfreq(n, d), signals, ("float32",),
             case_triples(((), (8,), {}), ((), (7, 0.5), {}), ((), (1,), {}), ((), (10,), {"d": 0.1})),
             tol=FFT_TOL, out_dtype=lambda dt, x64: real_out("float64", x64),
             errors=(_err([], ValueError, "only takes an int", [4]),
                     _err([], ValueError, "only takes a single value", 4, [1.0]))),
    OpRecord("numpy.fft.rfftfreq", lambda n, d=1.0, **kw: np.fft.rfftfreq(n, d), signals, ("float32",),
             case_triples(((), (8,), {}), ((), (7, 0.5), {}), ((), (1,), {}), ((), (10,), {"d": 0.1})),
             tol=FFT_TOL, out_dtype=lambda dt, x64: real_out("float64", x64),
             errors=(_err([], ValueError, "only takes an int", [4]),)),
)


# ----------------------------------------------------------------- lax.fft


def _lax_ref(fft_type, lengths):
    """NumPy's n-dimensional transform of the trailing axes, as lax.fft computes it."""
    axes = tuple(range(-len(lengths), 0))

    def ref(x):
        if fft_type == "RFFT":
            return np.fft.rfftn(x, s=lengths, axes=axes)
        if fft_type == "IRFFT":
            return np.fft.irfftn(x, s=lengths, axes=axes)
        return (np.fft.fftn if fft_type == "FFT" else np.fft.ifftn)(x, axes=axes)

    return ref


def _lax_record(fft_type, shape, lengths, out, complex_input=True):
    ref = _lax_ref(fft_type, lengths)
    return OpRecord(f"lax.fft[{fft_type},{shape}]", lambda x, *a: ref(x), signals, _in_dtypes(complex_input),
                    case_triples(((shape,), (fft_type, lengths), {})), tol=FFT_TOL, out_dtype=out,
                    path="lax.fft")


LAX_RECORDS = (
    _lax_record("FFT", (3, 7), (7,), complex_out),
    _lax_record("FFT", (2, 6, 5), (6, 5), complex_out),
    _lax_record("IFFT", (4, 3, 5, 2), (3, 5, 2), complex_out),
    _lax_record("RFFT", (2, 9), (9,), complex_out, complex_input=False),
    _lax_record("RFFT", (3, 4, 10), (4, 10), complex_out, complex_input=False),
    _lax_record("IRFFT", (2, 5), (8,), real_out),
    _lax_record("IRFFT", (3, 4, 5), (4, 9), real_out),
)
LAX_ERRORS = OpRecord(
    "lax.fft", _lax_ref("FFT", (4,)), signals, REAL, (), errors=(
        _err([np.ones((2, 5), np.float32)], ValueError, "minor dimensions must be equal to fft_lengths", "FFT", (4,)),
        _err([np.ones((5,), np.float32)], ValueError, "must have at least as many input dimensions", "FFT", (1, 5)),
        _err([np.ones((2, 4), np.float32)], ValueError, "Unknown FFT type 'DFT'", "DFT", (4,)),
        _err([np.ones((2, 4), np.float32)], TypeError, "Unknown FFT type value '7'", 7, (4,)),
        _err([np.ones((2, 4), np.float32)], ValueError, "RFFT input shape (2, 4) minor dimensions must be equal to "
             "fft_lengths (5,)", "RFFT", (5,)),
    ))


# ----------------------------------------------------------------- jax.scipy.fft


def _dct_cases(*extra):
    return (
        (((8,),), (), {}),
        (((7,),), (), {}),
        (((3, 10),), (), {"norm": "ortho"}),
        (((5, 6),), (), {"axis": 0}),
        (((9,),), (), {"n": 6}),
        (((5,),), (), {"n": 11, "norm": "ortho"}),
    ) + extra


def _dctn_cases():
    return (
        (((4, 6),), (), {}),
        (((3, 5, 7),), (), {"norm": "ortho"}),
        (((3, 5, 6),), (), {"axes": (0, 2)}),
        (((6, 5),), (), {"s": (4, 8)}),
    )


_DCT_ERRORS = (_err([_F], NotImplementedError, "Only DCT type 2 is implemented.", type=3),
               _err([_F], ValueError, "norm='forward' is not implemented", norm="forward"))

SCIPY_RECORDS = (
    OpRecord("scipy.fft.dct", scipy.fft.dct, signals, REAL, case_triples(*_dct_cases()), tol=FFT_TOL,
             errors=_DCT_ERRORS),
    OpRecord("scipy.fft.idct", scipy.fft.idct, signals, REAL, case_triples(*_dct_cases()), tol=FFT_TOL,
             errors=_DCT_ERRORS),
    OpRecord("scipy.fft.dctn", scipy.fft.dctn, signals, REAL, case_triples(*_dctn_cases()), tol=FFT_TOL,
             errors=_DCT_ERRORS),
    OpRecord("scipy.fft.idctn", scipy.fft.idctn, signals, REAL, case_triples(*_dctn_cases()), tol=FFT_TOL,
             errors=_DCT_ERRORS),
)


# ----------------------------------------------------------------- jax.scipy.signal

SIGNAL_TOL = {"float32": (2e-4, 2e-5), "complex64": (2e-4, 2e-5), "float64": (1e-10, 1e-12),
              "complex128": (1e-10, 1e-12)}
_CONV = (
    (((8,), (3,)), (), {}),
    (((7,), (7,)), (), {"mode": "same"}),
    (((9,), (4,)), (), {"mode": "valid"}),
    (((3,), (9,)), (), {"mode": "valid"}),
    (((5, 7), (3, 2)), (), {}),
    (((6, 5), (2, 3)), (), {"mode": "same"}),
    (((4, 6), (4, 3)), (), {"axes": 1}),
    (((3, 5, 6), (2, 5, 3)), (), {"axes": (0, 2), "mode": "valid"}),
)
_SIG1 = (
    (((64,),), (), {"nperseg": 16}),
    (((3, 50),), (), {"nperseg": 12, "noverlap": 4}),
    (((40, 2),), (), {"nperseg": 10, "axis": 0}),
    (((60,),), (), {"nperseg": 16, "nfft": 20, "window": "hamming"}),
)
_SPECTRAL_KW = ({"scaling": "spectrum"}, {"average": "median"}, {"detrend": "linear"}, {"return_onesided": False})
_WELCH = _SIG1 + tuple((((48,),), (), {"nperseg": 16, **kw}) for kw in _SPECTRAL_KW)
_CSD = tuple(((shapes * 2), (), kw) for shapes, _, kw in _SIG1) + tuple(
    ((((48,), (48,))), (), {"nperseg": 16, **kw}) for kw in _SPECTRAL_KW)
_STFT = _SIG1 + ((((30,),), (), {"nperseg": 8, "boundary": None, "padded": False}),
                 (((33,),), (), {"nperseg": 8, "boundary": "even"}),
                 (((33,),), (), {"nperseg": 8, "boundary": "odd", "detrend": "constant"}))
_ISTFT = (
    (((9, 11),), (), {}),
    (((2, 9, 11),), (), {"nperseg": 16, "noverlap": 12}),
    (((11, 9),), (), {"time_axis": 0, "freq_axis": 1}),
    (((9, 11),), (), {"window": "hamming", "boundary": False}),
)

SIGNAL_RECORDS = (
    OpRecord("scipy.signal.fftconvolve", sp_signal.fftconvolve, signals, _in_dtypes(True), case_triples(*_CONV),
             tol=SIGNAL_TOL, errors=(_err([_F, _F], ValueError, "mode must be one of", mode="bad"),
                                     _err([_F, np.ones(3, np.float32)], ValueError, "same dimensionality"),
                                     _err([np.ones((3, 2), np.float32), np.ones((2, 3), np.float32)], ValueError,
                                          "For 'valid' mode, One input must be at least as large", mode="valid"))),
    OpRecord("scipy.signal.convolve[fft]", lambda a, b, mode="full", method="fft": sp_signal.convolve(a, b, mode, "fft"),
             signals, REAL, case_triples(*[(s, (), {**kw, "method": "fft"}) for s, _, kw in _CONV[:6]]),
             tol=SIGNAL_TOL, path="scipy.signal.convolve"),
    OpRecord("scipy.signal.stft", lambda x, **kw: sp_signal.stft(x, **kw)[2], signals, REAL, case_triples(*_STFT),
             tol=SIGNAL_TOL, out_dtype=complex_out, adapt=pick_output(2),
             errors=(_err([np.ones(20, np.float32)], ValueError, "noverlap must be less than nperseg", nperseg=8,
                          noverlap=8),
                     _err([np.ones(20, np.float32)], ValueError, "Unknown boundary option", boundary="bad"))),
    OpRecord("scipy.signal.istft", lambda z, **kw: sp_signal.istft(z, **kw)[1], signals, _in_dtypes(True),
             case_triples(*_ISTFT), tol=SIGNAL_TOL, out_dtype=real_out, adapt=pick_output(1),
             errors=(_err([np.ones(5, np.float32)], ValueError, "Input stft must be at least 2d!"),
                     _err([np.ones((5, 4), np.float32)], ValueError, "Must specify differing time and frequency axes",
                          time_axis=0, freq_axis=0))),
    OpRecord("scipy.signal.csd", lambda x, y, **kw: sp_signal.csd(x, y, **kw)[1], signals, REAL,
             case_triples(*_CSD), tol=SIGNAL_TOL, out_dtype=complex_out, adapt=pick_output(1),
             errors=(_err([_F, _F], ValueError, 'average must be "median" or "mean"', nperseg=4, average="mode"),)),
    OpRecord("scipy.signal.welch", lambda x, **kw: sp_signal.welch(x, **kw)[1], signals, REAL, case_triples(*_WELCH),
             tol=SIGNAL_TOL, adapt=pick_output(1),
             errors=(_err([_F], ValueError, "Unknown scaling", nperseg=4, scaling="bogus"),
                     _err([_F], ValueError, "nfft must be greater than or equal to nperseg", nperseg=4, nfft=2))),
)

RECORDS = RECORDS + LAX_RECORDS + (LAX_ERRORS,) + SCIPY_RECORDS + SIGNAL_RECORDS

assert all(is_float(np.dtype(d)) or np.dtype(d).kind == "c" for r in RECORDS for d in r.dtypes)
