"""Operator-table records for the array functions of the smaller `jax.scipy`
modules: the special matrices and extra solvers of `scipy.linalg`,
`scipy.signal` (direct convolutions, `detrend`), `scipy.integrate.trapezoid`,
`scipy.ndimage.map_coordinates` and `scipy.cluster.vq.vq`, checked against
SciPy (a test-only reference). Functions returning several arrays are
reached through adapters on ``microjax_rs._scipy_misc_table_adapters``.
"""
import types

import numpy as np
import scipy.cluster.vq as sp_vq
import scipy.integrate as sp_integrate
import scipy.linalg as spl
import scipy.ndimage as sp_ndimage
import scipy.signal as sp_signal

import microjax_rs
import microjax_rs.scipy.cluster.vq as jvq
import microjax_rs.scipy.linalg as jsl
import microjax_rs.scipy.ndimage as jnd

from ._record import (OpErr, OpRecord, _inexact_out, canonical_out, case_triples, default_float, default_int_out, no_args,
                      uniform)
from .linalg import LINALG_TOL, dominant, first_dominant, small_norm

F = ("float32", "float64")
ACC = {"float32": (2e-5, 2e-5), "float64": (1e-12, 1e-12)}
EXACT = {}


def _f32(*shape):
    return np.ones(shape, np.float32)


def _float_out(dt, x64):
    return default_float(x64)


def _err(arrays, exc, match, *args, **kwargs):
    return OpErr(tuple(arrays), kwargs, exc, match, args=tuple(args))


# ----------------------------------------------------------------- adapters


def _adapters():
    def polar_k(a, k=0, side="right", method="svd"):
        return jsl.polar(a, side, method=method)[k]

    def eigvals_tridiagonal(d, e):
        return jsl.eigh_tridiagonal(d, e, eigvals_only=True)

    def expm_frechet_deriv(a, e):
        return jsl.expm_frechet(a, e, compute_expm=False)

    def expm_frechet_value(a, e):
        return jsl.expm_frechet(a, e)[0]

    def qr_multiply_k(a, c, k=0, mode="right"):
        return jsl.qr_multiply(a, c, mode=mode)[k]

    def map_coordinates_2d(img, c0, c1, order=1, mode="constant", cval=0.0):
        return jnd.map_coordinates(img, [c0, c1], order, mode=mode, cval=cval)

    def vq_k(obs, code_book, k=0):
        return jvq.vq(obs, code_book)[k]

    return types.SimpleNamespace(**{k: v for k, v in locals().items() if callable(v)})


microjax_rs._scipy_misc_table_adapters = _adapters()
_A = "_scipy_misc_table_adapters."

# ----------------------------------------------------------------- references

_SCIPY_MODES = {"constant": "grid-constant", "wrap": "grid-wrap"}


def _np_map_coordinates(img, c0, c1, order=1, mode="constant", cval=0.0):
    return sp_ndimage.map_coordinates(img, np.stack([c0, c1]), order=order, mode=_SCIPY_MODES.get(mode, mode),
                                      cval=cval)


def _np_polar(a, k=0, side="right", method="svd"):
    return spl.polar(a, side)[k]


def _np_qr_multiply(a, c, k=0, mode="right"):
    q, r = np.linalg.qr(a)
    return ((c @ q) if mode == "right" else (q @ c), r)[k]


def _np_vq(obs, code_book, k=0):
    codes, dist = sp_vq.vq(obs, code_book, check_finite=False)
    return (codes, dist)[k]


def _coords(size_lo, size_hi):
    """An image, then two coordinate arrays reaching past its edges."""

    def make(rng, shapes, dtype):
        img = rng.uniform(-1, 1, size=tuple(shapes[0])).astype(dtype)
        h, w = shapes[0]
        c0 = rng.uniform(size_lo, h - 1 + size_hi, size=tuple(shapes[1]))
        c1 = rng.uniform(size_lo, w - 1 + size_hi, size=tuple(shapes[2]))
        # keep clear of integer and half-integer points (the kinks of the interpolants)
        c0 = np.round(c0 * 2) / 2 + 0.13
        c1 = np.round(c1 * 2) / 2 + 0.29
        return [img, c0.astype(dtype), c1.astype(dtype)]

    return make


def _sorted_x(rng, shapes, dtype):
    y = rng.uniform(-1, 1, size=tuple(shapes[0])).astype(dtype)
    x = np.sort(rng.uniform(0, 3, size=tuple(shapes[1])), axis=-1).astype(dtype)
    return [y, x]


def _sylvester(rng, shapes, dtype):
    """A and B with eigenvalues near +3 (so A + B is far from singular), C uniform."""
    return dominant(rng, shapes[:2], dtype) + [rng.uniform(-1, 1, size=tuple(shapes[2])).astype(dtype)]


def _leading_nonzero(rng, shapes, dtype):
    out = []
    for s in shapes:
        a = rng.uniform(-1, 1, size=tuple(s))
        a[..., 0] = rng.uniform(1, 2, size=a[..., 0].shape)
        out.append(a.astype(dtype))
    return out


_MODES = ("full", "same", "valid")
SIG = ("float32", "int32")
_CONV_CASES = case_triples(*[(((5,), (3,)), (m,), {}) for m in _MODES], (((3,), (5,)), ("same",), {}),
                           (((3,), (5,)), ("valid",), {}), (((4,), (4,)), (), {}),
                           (((4, 5), (2, 3)), ("same",), {}), (((2, 3, 2), (1, 2, 2)), ("full",), {}))
_CONV2D_CASES = case_triples(*[(((4, 5), (2, 3)), (m,), {}) for m in _MODES],
                             *[(((2, 3), (4, 5)), (m,), {}) for m in _MODES], (((3, 3), (3, 3)), ("valid",), {}))

RECORDS = (
    # -- jax.scipy.linalg: special matrices
    OpRecord(name="scipy.linalg.toeplitz", ref=spl.toeplitz, args_maker=uniform(), dtypes=("float32", "int32"),
             cases=case_triples((((3,), (4,)), (), {}), (((4,),), (), {}), (((1,), (3,)), (), {}))),
    OpRecord(name="scipy.linalg.hankel", ref=spl.hankel, args_maker=uniform(), dtypes=("float32", "int32"),
             cases=case_triples((((3,), (4,)), (), {}), (((4,),), (), {}), (((3,), (2,)), (), {}))),
    OpRecord(name="scipy.linalg.circulant", ref=spl.circulant, args_maker=uniform(), dtypes=("float32", "int32"),
             cases=case_triples((((4,),), (), {}), (((1,),), (), {}))),
    OpRecord(name="scipy.linalg.companion", ref=spl.companion, args_maker=_leading_nonzero, dtypes=F,
             tol=ACC, cases=case_triples((((4,),), (), {}), (((2,),), (), {})),
             errors=(_err([_f32(1)], ValueError, "must be at least 2"),)),
    OpRecord(name="scipy.linalg.fiedler", ref=spl.fiedler, args_maker=uniform(), dtypes=("float32", "int32"),
             out_dtype=canonical_out,
             cases=case_triples((((4,),), (), {}), (((1,),), (), {}))),
    OpRecord(name="scipy.linalg.fiedler_companion", ref=spl.fiedler_companion, args_maker=_leading_nonzero,
             dtypes=F, tol=ACC, cases=case_triples((((2,),), (), {}), (((4,),), (), {}), (((7,),), (), {})),
             errors=(_err([_f32(0)], ValueError, "requires the last axis of 'a' to have nonzero length"),)),
    OpRecord(name="scipy.linalg.convolution_matrix", ref=spl.convolution_matrix, args_maker=uniform(),
             dtypes=("float32", "int32"),
             cases=case_triples((((3,),), (5,), {}), (((3,),), (4, "same"), {}), (((4,),), (2, "same"), {}),
                                (((3,),), (2, "valid"), {}), (((2,),), (5, "valid"), {})),
             errors=(_err([_f32(3)], ValueError, "mode must be one of 'full', 'valid', 'same'; got 'bad'.", 4,
                          "bad"),
                     _err([_f32(3)], ValueError, "n must be a positive integer; got 0.", 0),
                     _err([_f32(0)], ValueError, "len(a) must be at least 1", 2))),
    OpRecord(name="scipy.linalg.leslie", ref=spl.leslie, args_maker=uniform(0, 1), dtypes=F,
             cases=case_triples((((3,), (2,)), (), {}), (((2,), (1,)), (), {})),
             errors=(_err([_f32(3), _f32(3)], ValueError, "must be one less than the length of f"),
                     _err([_f32(1), _f32(0)], ValueError, "The length of f along the last axis must be at least 2"))),
    OpRecord(name="scipy.linalg.block_diag", ref=spl.block_diag, args_maker=uniform(), dtypes=("float32", "int32"),
             cases=case_triples((((2, 2), (1, 3), ()), (), {}), (((3,), (2, 1)), (), {}), (((2, 2),), (), {})),
             errors=(_err([_f32(2, 2, 2)], ValueError, "must have at most 2 dimensions"),)),
    OpRecord(name="scipy.linalg.hadamard", ref=spl.hadamard, args_maker=no_args, dtypes=("int32",),
             differentiable=False, cases=case_triples(((), (4,), {}), ((), (1,), {}), ((), (8,), {})),
             errors=(OpErr((), {}, ValueError, "n must be a positive power of 2", args=(3,)),)),
    OpRecord(name="scipy.linalg.helmert", ref=spl.helmert, args_maker=no_args, dtypes=("float32",),
             out_dtype=_float_out, differentiable=False,
             cases=case_triples(((), (4,), {}), ((), (4, True), {}), ((), (1,), {})),
             errors=(OpErr((), {}, ValueError, "n must be a positive integer; got 0.", args=(0,)),)),
    OpRecord(name="scipy.linalg.hilbert", ref=spl.hilbert, args_maker=no_args, dtypes=("float32",),
             out_dtype=_float_out, differentiable=False, cases=case_triples(((), (4,), {}), ((), (1,), {}))),
    OpRecord(name="scipy.linalg.invhilbert", ref=spl.invhilbert, args_maker=no_args, dtypes=("float32",),
             out_dtype=_float_out, differentiable=False, cases=case_triples(((), (5,), {}), ((), (1,), {}))),
    OpRecord(name="scipy.linalg.pascal", ref=lambda n, kind="symmetric": spl.pascal(n, kind).astype(np.float64),
             args_maker=no_args, dtypes=("float32",), out_dtype=_float_out, differentiable=False,
             cases=case_triples(((), (5,), {}), ((), (5, "lower"), {}), ((), (4, "upper"), {})),
             errors=(OpErr((), {}, ValueError, "Expected kind to be one of: ['symmetric', 'lower', 'upper']; got diag",
                           args=(3, "diag")),)),
    OpRecord(name="scipy.linalg.invpascal",
             ref=lambda n, kind="symmetric": spl.invpascal(n, kind).astype(np.float64), args_maker=no_args,
             dtypes=("float32",), out_dtype=_float_out, differentiable=False,
             cases=case_triples(((), (5,), {}), ((), (5, "lower"), {}), ((), (4, "upper"), {}))),
    # -- jax.scipy.linalg: decompositions and solvers
    OpRecord(name="scipy.linalg.polar", path=_A + "polar_k", ref=_np_polar, args_maker=dominant, dtypes=F,
             tol=LINALG_TOL,
             cases=case_triples((((3, 3),), (), {"k": 0}), (((3, 3),), (), {"k": 1}),
                                (((4, 3),), (), {"k": 0}), (((4, 3),), (), {"k": 1}),
                                (((3, 3),), (), {"k": 1, "side": "left"}), (((3, 3),), (), {"method": "qdwh"}),
                                (((2, 3),), (), {"k": 1, "side": "left", "method": "qdwh"})),
             errors=(_err([_f32(3, 3)], NotImplementedError, "method='qdwh' only supports", side="left",
                          method="qdwh"),
                     _err([_f32(3, 3)], ValueError, "Unknown polar decomposition method", method="eig"),
                     _err([_f32(3, 3)], ValueError, "must be either 'right' or 'left'", side="up"))),
    OpRecord(name="scipy.linalg.eigh_tridiagonal", path=_A + "eigvals_tridiagonal",
             ref=lambda d, e: spl.eigh_tridiagonal(d, e, eigvals_only=True), args_maker=uniform(-2, 2), dtypes=F,
             tol=LINALG_TOL, cases=case_triples((((4,), (3,)), (), {}), (((2,), (1,)), (), {})),
             errors=(_err([_f32(3), _f32(3)], TypeError, "e must have one fewer element than d"),)),
    OpRecord(name="scipy.linalg.solve_sylvester", ref=spl.solve_sylvester, args_maker=_sylvester, dtypes=F,
             tol=LINALG_TOL,
             cases=case_triples((((3, 3), (2, 2), (3, 2)), (), {}), (((2, 2), (2, 2), (2, 2)), (), {})),
             errors=(_err([_f32(3, 3), _f32(2, 2), _f32(2, 3)], ValueError,
                          "Incompatible shapes for Sylvester equation"),)),
    OpRecord(name="scipy.linalg.expm_frechet", path=_A + "expm_frechet_deriv",
             ref=lambda a, e: spl.expm_frechet(a, e, compute_expm=False), args_maker=small_norm, dtypes=F,
             out_dtype=canonical_out,
             tol={"float32": (2e-4, 2e-4), "float64": (1e-10, 1e-10)},
             cases=case_triples((((3, 3), (3, 3)), (), {}),),
             errors=(_err([_f32(3, 3), _f32(2, 2)], ValueError, "expected A and E to be the same shape"),)),
    OpRecord(name="scipy.linalg.expm_frechet[expm]", path=_A + "expm_frechet_value",
             ref=lambda a, e: spl.expm(a), args_maker=small_norm, dtypes=F,
             tol={"float32": (1e-4, 1e-4), "float64": (1e-10, 1e-10)},
             cases=case_triples((((3, 3), (3, 3)), (), {}),)),
    OpRecord(name="scipy.linalg.qr_multiply", path=_A + "qr_multiply_k", ref=_np_qr_multiply,
             args_maker=first_dominant, dtypes=F, tol=LINALG_TOL,
             cases=case_triples((((4, 3), (2, 4)), (), {}), (((4, 3), (3, 2)), (), {"mode": "left"}),
                                (((3, 3), (3,)), (), {}), (((4, 3), (2, 4)), (), {"k": 1}))),
    # -- jax.scipy.signal
    OpRecord(name="scipy.signal.convolve", ref=lambda a, b, mode="full": sp_signal.convolve(a, b, mode, "direct"),
             args_maker=uniform(-1, 1), dtypes=SIG, tol=ACC, out_dtype=_inexact_out, cases=_CONV_CASES,
             errors=(_err([_f32(3), _f32(2)], ValueError, "mode must be one of", "bad"),
                     _err([_f32(3), _f32(2, 2)], ValueError, "must have the same number of dimensions"),
                     _err([_f32(3, 2), _f32(2, 3)], ValueError, "One input must be smaller than the other"))),
    OpRecord(name="scipy.signal.correlate",
             ref=lambda a, b, mode="full": sp_signal.correlate(a, b, mode, "direct"), args_maker=uniform(-1, 1),
             dtypes=SIG, tol=ACC, out_dtype=_inexact_out, cases=_CONV_CASES,
             errors=(_err([_f32(3), _f32(2)], ValueError, "expected 'auto', 'fft', or 'direct'",
                          method="spectral"),)),
    OpRecord(name="scipy.signal.convolve2d", ref=sp_signal.convolve2d, args_maker=uniform(-1, 1), dtypes=SIG,
             tol=ACC, out_dtype=_inexact_out, cases=_CONV2D_CASES,
             errors=(_err([_f32(3, 3), _f32(2, 2)], NotImplementedError, "only supports boundary='fill'",
                          boundary="wrap"),
                     _err([_f32(3), _f32(2)], ValueError, "only supports 2-dimensional inputs"))),
    OpRecord(name="scipy.signal.correlate2d", ref=sp_signal.correlate2d, args_maker=uniform(-1, 1), dtypes=SIG,
             tol=ACC, out_dtype=_inexact_out, cases=_CONV2D_CASES,
             errors=(_err([_f32(3, 3), _f32(2, 2)], NotImplementedError, "fillvalue=0", fillvalue=1.0),)),
    OpRecord(name="scipy.signal.detrend", ref=sp_signal.detrend, args_maker=uniform(-1, 1), dtypes=SIG,
             tol=ACC, out_dtype=_inexact_out,
             cases=case_triples((((3, 8),), (), {}), (((8, 3),), (), {"axis": 0}), (((3, 8),), (), {"bp": [3, 5]}),
                                (((3, 8),), (), {"type": "constant"}), (((6,),), (), {"bp": 2})),
             errors=(_err([_f32(5)], ValueError, "Trend type must be 'linear' or 'constant'", type="quad"),
                     _err([_f32(5)], ValueError, "Breakpoints must be non-negative", bp=7))),
    # -- jax.scipy.integrate / ndimage / cluster
    OpRecord(name="scipy.integrate.trapezoid", ref=sp_integrate.trapezoid, args_maker=uniform(-1, 1),
             dtypes=SIG, tol=ACC, out_dtype=_inexact_out,
             cases=case_triples((((3, 6),), (), {}), (((6, 3),), (), {"dx": 0.5, "axis": 0}), (((1,),), (), {}))),
    OpRecord(name="scipy.integrate.trapezoid[x]", path="scipy.integrate.trapezoid", ref=sp_integrate.trapezoid,
             args_maker=_sorted_x, dtypes=F, tol=ACC,
             cases=case_triples((((3, 6), (6,)), (), {}), (((3, 6), (3, 6)), (), {}),
                                (((6, 3), (6, 3)), (), {"axis": 0}))),
    OpRecord(name="scipy.ndimage.map_coordinates", path=_A + "map_coordinates_2d", ref=_np_map_coordinates,
             args_maker=_coords(-2.0, 2.0), dtypes=F, tol=ACC,
             cases=case_triples(*[(((4, 5), (7,), (7,)), (), {"order": o, "mode": m})
                                  for o in (0, 1) for m in ("constant", "nearest", "wrap", "mirror", "reflect")],
                                (((4, 5), (2, 3), (2, 3)), (), {"order": 1, "cval": 0.5})),
             errors=(_err([_f32(4, 5), _f32(3), _f32(3)], NotImplementedError, "currently requires order<=1",
                          order=3),
                     _err([_f32(4, 5), _f32(3), _f32(3)], NotImplementedError, "does not yet support mode",
                          mode="grid-wrap"))),
    OpRecord(name="scipy.cluster.vq.vq", path=_A + "vq_k", ref=_np_vq, args_maker=uniform(-1, 1), dtypes=F,
             tol=ACC, cases=case_triples((((6, 3), (4, 3)), (), {"k": 1}), (((5,), (3,)), (), {"k": 1}))),
    OpRecord(name="scipy.cluster.vq.vq[codes]", path=_A + "vq_k", ref=_np_vq, args_maker=uniform(-1, 1),
             dtypes=F, tol=EXACT, out_dtype=default_int_out, differentiable=False,
             cases=case_triples((((6, 3), (4, 3)), (), {}), (((5,), (3,)), (), {})),
             errors=(_err([_f32(6, 3), _f32(3)], ValueError, "should have the same rank"),)),
)
