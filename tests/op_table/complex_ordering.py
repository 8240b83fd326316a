"""Records of ordering on complex values and of the remaining functions JAX
defines on complex operands.

JAX orders complex numbers lexicographically (real parts, then imaginary
parts): `jnp.less`/`less_equal`/`greater`/`greater_equal`, `lax.max`/`min`
(and `jnp.maximum`/`minimum`, `jnp.max`/`min`, `lax.reduce_max`/`reduce_min`,
`lax.cummax`/`cummin`) and the sorts (`jnp.sort`, `argsort`, `lax.sort`,
`jnp.sort_complex`, `searchsorted`). NumPy orders them the same way, so
NumPy is the reference where no NaN is involved (NaN handling, where JAX and
NumPy differ, is checked against recorded JAX values in
tests/test_complex_ordering.py). `lax.lt`/`le`/`gt`/`ge`, `argmax`/`argmin`
and the functions JAX leaves undefined on complex values raise JAX's
exceptions (the records below with `cases=()`).

The inputs draw real parts from a few integers, so that equal real parts
(where the imaginary parts decide) are common.
"""
import numpy as np

from ._record import DTYPE, Case, OpErr, OpRecord, cases_from_shapes, uniform

C = ("complex64", "complex128")
_C1 = np.array([1 + 2j, -3 + 0.5j], np.complex64)
TOL = {"complex64": (2e-6, 2e-6), "complex128": (1e-13, 1e-13), "float32": (2e-6, 1e-6),
       "float64": (1e-13, 1e-14)}
ACCUM = {"complex64": (2e-5, 2e-5), "complex128": (1e-12, 1e-12), "float32": (1e-5, 1e-5),
         "float64": (1e-12, 1e-12)}


def tied(rng, shapes, dt):
    """Complex arrays whose real parts come from {-1, 0, 1} (ties are common)
    and whose imaginary parts are uniform in [-2, 2]; real dtypes get the
    real parts plus a uniform fraction."""
    out = []
    for s in shapes:
        re = rng.integers(-1, 2, size=s).astype(np.float64)
        im = rng.uniform(-2.0, 2.0, size=s)
        out.append((re + 1j * im).astype(dt) if np.dtype(dt).kind == "c" else (re + im / 4).astype(dt))
    return out


def _sorted_and_values(rng, shapes, dt):
    a, v = tied(rng, shapes, dt)
    return [np.sort(a), v]


def _rec(path, ref, cases, maker=tied, dtypes=C, tol=TOL, **kw):
    return OpRecord(name=f"{path}[complex-order]", path=path, ref=ref, args_maker=maker, dtypes=dtypes,
                    cases=cases, tol=tol, **kw)


def _errs(path, exc, match, arrays=(_C1,), args=(), kwargs=None, name=None):
    """A record of a bad complex input only (JAX's exception and message)."""
    return OpRecord(name=name or f"{path}[complex-error]", path=path, ref=None, args_maker=uniform(), dtypes=C,
                    cases=(), errors=(OpErr(tuple(arrays), kwargs or {}, exc, match, args=tuple(args)),))


_PAIRS = cases_from_shapes([((6,), (6,)), ((3, 4), (3, 4)), ((3, 4), (4,))])
_SAME_PAIRS = cases_from_shapes([((6,), (6,)), ((3, 4), (3, 4))])
_ONE = cases_from_shapes([((7,),), ((3, 4),)])


def _axes_ref(fn):
    def ref(x, axes):
        return fn(x, axis=tuple(axes))

    return ref


def _lax_sort_ref(x, dimension=-1):
    return np.sort(x, axis=dimension, kind="stable")


def _cum(fn):
    def ref(x, axis=0, reverse=False):
        if reverse:
            return np.flip(fn.accumulate(np.flip(x, axis), axis=axis), axis)
        return fn.accumulate(x, axis=axis)

    return ref


def _sort_complex_ref(a):
    a = np.asarray(a)
    wide = a.dtype in (np.float64, np.int64, np.complex128)
    return np.sort(a, axis=-1).astype(np.complex128 if wide else np.complex64)


def _sort_complex_out(dt, x64):
    wide = np.dtype(dt) in (np.float64, np.int64, np.complex128) and x64
    return np.dtype(np.complex128 if wide else np.complex64)


def _clamp_ref(lo, x, hi):
    """JAX's clamp of complex values (XLA on the CPU): by the real parts only,
    `lo` where `lo.re >= x.re`, then `hi` where that value's real part is not
    `<= hi.re`."""
    v = np.where(lo.real >= x.real, lo, x)
    return np.where(v.real <= hi.real, v, hi)


def _clamp_maker(rng, shapes, dt):
    (x,) = tied(rng, [shapes[1]], dt)
    return [np.asarray(-0.5 + 0.25j, dt), x, np.asarray(0.5 - 1j, dt)]


def _logaddexp_ref(a, b):
    """`log(exp(a) + exp(b))` with the imaginary part in [-pi, pi] (JAX's wrap)."""
    out = np.log(np.exp(a.astype(np.complex128)) + np.exp(b.astype(np.complex128)))
    return out.astype(a.dtype)


def _conv_ref(lhs, rhs):
    """NCH / OIH valid 1-d correlation (lax.conv_general_dilated's default layout)."""
    n, c, h = lhs.shape
    o, _, k = rhs.shape
    out = np.zeros((n, o, h - k + 1), lhs.dtype)
    for i in range(h - k + 1):
        out[:, :, i] = np.einsum("nck,ock->no", lhs[:, :, i:i + k], rhs)
    return out


def _reduce_window_sum_ref(x):
    return x[:-1] + x[1:]


RECORDS = (
    # ---- ordering comparisons (jnp) and lax.max / lax.min
    *(_rec(f"numpy.{fn.__name__}", fn, _PAIRS, differentiable=False)
      for fn in (np.less, np.less_equal, np.greater, np.greater_equal)),
    *(_rec(f"numpy.{fn.__name__}", fn, _PAIRS) for fn in (np.maximum, np.minimum, np.fmax, np.fmin)),
    _rec("lax.max", np.maximum, _SAME_PAIRS),
    _rec("lax.min", np.minimum, _SAME_PAIRS),
    # ---- reductions and scans
    _rec("numpy.max", np.max, _ONE + cases_from_shapes([((3, 4),)], axis=1)),
    _rec("numpy.min", np.min, _ONE + cases_from_shapes([((3, 4),)], axis=0)),
    _rec("numpy.nanmax", np.nanmax, _ONE),
    _rec("numpy.nanmin", np.nanmin, _ONE),
    _rec("numpy.ptp", np.ptp, cases_from_shapes([((3, 4),)], axis=1)),
    _rec("lax.reduce_max", _axes_ref(np.max), (Case(((3, 4),), ((0,),)), Case(((2, 3, 4),), ((0, 2),)))),
    _rec("lax.reduce_min", _axes_ref(np.min), (Case(((3, 4),), ((1,),)), Case(((2, 3, 4),), ((0, 1, 2),)))),
    _rec("lax.cummax", _cum(np.maximum), cases_from_shapes([((3, 4),)], axis=1)
         + cases_from_shapes([((5,),)], axis=0, reverse=True)),
    _rec("lax.cummin", _cum(np.minimum), cases_from_shapes([((3, 4),)], axis=0)),
    # ---- sorting and searching
    _rec("numpy.sort", lambda a, axis=-1: np.sort(a, axis=axis, kind="stable"),
         _ONE + cases_from_shapes([((3, 4),)], axis=0) + cases_from_shapes([((4, 3),)], axis=None)),
    _rec("numpy.argsort", lambda a, axis=-1: np.argsort(a, axis=axis, kind="stable"),
         _ONE + cases_from_shapes([((3, 4),)], axis=0), differentiable=False),
    _rec("lax.sort", _lax_sort_ref, _ONE + cases_from_shapes([((3, 4),)], dimension=0)),
    _rec("numpy.sort_complex", _sort_complex_ref, _ONE,
         dtypes=C + ("float32", "float64", "int32"), out_dtype=_sort_complex_out),
    _rec("numpy.searchsorted", np.searchsorted, cases_from_shapes([((8,), (5,))])
         + cases_from_shapes([((8,), (5,))], side="right"), maker=_sorted_and_values, differentiable=False),
    # ---- the other functions JAX defines on complex operands
    _rec("lax.clamp", _clamp_ref, cases_from_shapes([((), (7,), ())], ), maker=_clamp_maker, differentiable=False),
    _rec("numpy.round", np.round, _ONE + cases_from_shapes([((5,),)], 1),
         maker=uniform(-3.0, 3.0)),
    _rec("numpy.logaddexp", _logaddexp_ref, cases_from_shapes([((6,), (6,))]), maker=uniform(-2.0, 2.0),
         tol={"complex64": (1e-5, 1e-5), "complex128": (1e-12, 1e-12)}),
    _rec("numpy.nan_to_num", np.nan_to_num, cases_from_shapes([((5,),)]) + cases_from_shapes(
        [((5,),)], nan=1.0, posinf=2.0, neginf=-2.0), differentiable=False, upcast=False,
        maker=lambda rng, shapes, dt: [np.array([complex(np.nan, 1), complex(np.inf, 0), complex(1, -np.inf),
                                                 complex(np.nan, np.nan), 3 + 4j], dt)]),
    _rec("numpy.nansum", np.nansum, cases_from_shapes([((5,),)]), differentiable=False,
         maker=lambda rng, shapes, dt: [np.array([complex(np.nan, 1), 2 + 0j, complex(1, -2),
                                                 complex(0, np.nan), 3 + 4j], dt)]),
    _rec("numpy.linspace", np.linspace, (Case((), (0j, 1 + 2j, 5), {}), Case((), (1j, 3 + 0j, 4),
                                                                              {"endpoint": False})),
         dtypes=("complex64",), differentiable=False),
    _rec("numpy.geomspace", np.geomspace, (Case((), (1 + 0j, 1j, 3), {}), Case((), (2 + 1j, -1 + 1j, 4), {})),
         dtypes=("complex64",), differentiable=False, tol=ACCUM),
    _rec("lax.iota", lambda dtype, n: np.arange(n).astype(dtype), (Case((), (DTYPE, 4), {}),),
         differentiable=False),
    _rec("lax.conv_general_dilated", _conv_ref, cases_from_shapes([((2, 3, 7), (4, 3, 3))]),
         maker=uniform(-1.0, 1.0), tol=ACCUM,
         adapt=lambda f: (lambda lhs, rhs: f(lhs, rhs, (1,), "VALID"))),
    _rec("numpy.convolve", np.convolve, cases_from_shapes([((7,), (3,))]) + cases_from_shapes(
        [((7,), (3,))], mode="same"), maker=uniform(-1.0, 1.0), tol=ACCUM),
    _rec("lax.reduce_window", _reduce_window_sum_ref, cases_from_shapes([((6,),)]), maker=uniform(-1.0, 1.0),
         adapt=lambda f: (lambda x: f(x, np.zeros((), x.dtype), _lax_add(), (2,), (1,), "VALID"))),
    # ---- JAX's exceptions on complex operands
    _errs("lax.argmax", TypeError, "does not accept dtype complex64", args=(0, np.int32)),
    _errs("numpy.argmax", TypeError, "does not accept dtype complex64"),
    _errs("numpy.argmin", TypeError, "does not accept dtype complex64"),
    _errs("numpy.nanargmax", TypeError, "does not accept dtype complex64"),
    _errs("lax.top_k", ValueError, "top_k is not compatible with complex inputs", args=(1,)),
    _errs("numpy.clip", ValueError, "Complex values have no ordering", args=(0, 1)),
    _errs("numpy.median", ValueError, "quantile does not support complex input"),
    _errs("numpy.quantile", ValueError, "quantile does not support complex input", args=(0.5,)),
    _errs("numpy.partition", NotImplementedError, "jnp.partition for complex dtype is not implemented", args=(1,)),
    _errs("numpy.argpartition", NotImplementedError, "jnp.argpartition for complex dtype", args=(1,)),
    _errs("numpy.interp", ValueError, "complex x values not supported",
          arrays=(_C1, np.array([0.0, 1.0]), np.array([0.0, 1.0]))),
    _errs("numpy.floor", TypeError, "floor does not accept dtype complex64"),
    _errs("numpy.ceil", TypeError, "ceil does not accept dtype complex64"),
    _errs("numpy.trunc", TypeError, "does not accept dtype complex64"),
    _errs("numpy.modf", TypeError, "does not accept dtype complex64"),
    _errs("numpy.floor_divide", TypeError, "floor_divide does not support complex-valued inputs", args=(2,)),
    _errs("numpy.remainder", TypeError, "rem does not accept dtype complex64", args=(2,)),
    _errs("numpy.fmod", TypeError, "rem does not accept dtype complex64", args=(2,)),
    _errs("numpy.copysign", TypeError, "copysign does not support complex-valued inputs", arrays=(_C1, _C1)),
    _errs("numpy.frexp", TypeError, "frexp does not support complex-valued inputs"),
    _errs("numpy.isposinf", ValueError, "isposinf/isneginf are not well defined for complex types"),
    _errs("numpy.isneginf", ValueError, "isposinf/isneginf are not well defined for complex types"),
    _errs("numpy.signbit", ValueError, "signbit is not well defined for complex64"),
    _errs("numpy.hypot", ValueError, "jnp.hypot is not well defined for complex-valued inputs",
          arrays=(_C1, _C1)),
    _errs("numpy.ldexp", ValueError, "ldexp not supported for input types", args=(2,)),
    _errs("numpy.spacing", ValueError, "jnp.spacing is not defined for complex inputs"),
    _errs("numpy.i0", ValueError, "Unsupported input type to jax.numpy.i0: complex64"),
)


def _lax_add():
    """`microjax_rs.lax.add` (resolved at call time: the table imports no microjax_rs)."""
    from microjax_rs import lax

    return lax.add
