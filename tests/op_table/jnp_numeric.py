"""Operator-table records for the numeric corners of `jax.numpy`: integer
and float-decomposition functions (gcd, lcm, frexp, nextafter, spacing,
bitwise_count, ...), i0, polynomials, window functions, gradient /
trapezoid / unwrap, bit packing, matvec / vecmat, `linalg.cond`, the
methods of the `jnp.ufunc` objects (`jnp.add.reduce`, ...), and the extra
modes and keywords of pad, ravel / reshape (order='F'), repeat, interp,
cumulative_sum / cumulative_prod, ldexp and nan_to_num.

Functions returning tuples or lists are recorded once per element
(`name[i]`, an `adapt` picking element i)."""
import numpy as np

from ._record import (
    ACCUM_TOL,
    DEFAULT_TOL,
    F32_F64,
    FI,
    TRANSCENDENTAL_TOL,
    UNARY_SHAPES,
    OpErr,
    OpRecord,
    _inexact_out,
    _rand,
    case_triples,
    cases_from_shapes,
    no_args,
    nonzero,
    pick_output,
    uniform,
    with_specials,
)

INTS = ("int32", "int8", "uint8", "int16")
# Least squares, condition numbers: float32 results carry the conditioning.
LSTSQ_TOL = {"float32": (2e-3, 2e-3), "float64": (1e-9, 1e-9)}


def _const_dtype(name):
    return lambda dt, x64: np.dtype(name)


def _default_float(dt, x64):
    return np.dtype("float64") if x64 else np.dtype("float32")


def _err(arrays, exc, match, *args, **kwargs):
    return OpErr(tuple(arrays), kwargs, exc, match, args=tuple(args))


def _f32(*shape):
    return np.ones(shape, np.float32)


def _i32(*shape):
    return np.ones(shape, np.int32)


# ----------------------------------------------------------------- arg makers


def _ints(lo, hi):
    """Integer arrays in [lo, hi] whatever the dtype under test (unsigned: from 0)."""
    def make(rng, shapes, dtype):
        dt = np.dtype(dtype)
        low = max(lo, 0) if np.issubdtype(dt, np.unsignedinteger) else lo
        return [rng.integers(low, hi, size=tuple(s), endpoint=True).astype(dt) for s in shapes]
    return make


def _shift_args(rng, shapes, dtype):
    dt = np.dtype(dtype)
    bits = dt.itemsize * 8
    a = _rand(rng, shapes[0], dt, -100, 100)
    b = rng.integers(0, bits - 1, size=tuple(shapes[1])).astype(dt)
    return [a, b]


def _ldexp_args(rng, shapes, dtype):
    return [_rand(rng, shapes[0], np.dtype(dtype), -3, 3),
            rng.integers(-40, 40, size=tuple(shapes[1])).astype(np.int32)]


def _away_from_half_integers(rng, shapes, dtype):
    """Values in [-3, 3] away from odd multiples of 0.5 (frexp's exponent steps at powers of two)."""
    out = []
    for s in shapes:
        a = _rand(rng, s, np.dtype(dtype), 0.55, 0.95) * rng.choice([-1, 1, 2, -2, 4], size=tuple(s))
        out.append(a.astype(dtype))
    return out


def _poly_divisor(rng, shapes, dtype):
    """(u, v) with v's leading coefficient away from 0."""
    u = _rand(rng, shapes[0], np.dtype(dtype), -3, 3)
    v = _rand(rng, shapes[1], np.dtype(dtype), -3, 3)
    v[0] = np.asarray(1.5 if rng.integers(0, 2) else -2, dtype=dtype)
    return [u, v]


def _distinct_sorted(rng, shapes, dtype):
    """Sample points: x sorted with gaps, then y uniform (and weights positive)."""
    n = shapes[0][0]
    x = (np.cumsum(rng.uniform(0.3, 1.0, size=n)) - n / 3).astype(dtype)
    rest = [_rand(rng, s, np.dtype(dtype), -2, 2) for s in shapes[1:2]]
    extra = [_rand(rng, s, np.dtype(dtype), 0.5, 2.0) for s in shapes[2:]]
    return [x] + rest + extra


def _interp_args(rng, shapes, dtype):
    x = _rand(rng, shapes[0], np.dtype(dtype), -400, 400)
    xp = _rand(rng, shapes[1], np.dtype(dtype), -400, 400)
    fp = _rand(rng, shapes[2], np.dtype(dtype), -3, 3)
    return [x, xp, fp]


def _phases(rng, shapes, dtype):
    """Cumulative steps of up to ~5 (jumps over pi and 2 pi) for unwrap."""
    dt = np.dtype(dtype)
    out = []
    for s in shapes:
        steps = rng.uniform(-5, 5, size=tuple(s))
        out.append(np.round(np.cumsum(steps, axis=-1) if len(s) else steps, 1).astype(dt))
    return out


def _bits(rng, shapes, dtype):
    dt = np.dtype(dtype)
    if dt == np.dtype(bool):
        return [rng.integers(0, 2, size=tuple(s)).astype(bool) for s in shapes]
    return [rng.integers(0, 3, size=tuple(s)).astype(dt) for s in shapes]


def _bytes(rng, shapes, dtype):
    return [rng.integers(0, 256, size=tuple(s)).astype(np.uint8) for s in shapes]


def _well_conditioned(rng, shapes, dtype):
    out = []
    for s in shapes:
        a = rng.uniform(-1, 1, size=tuple(s))
        n = s[-1]
        a = a + 3 * np.eye(s[-2], n)
        out.append(a.astype(dtype))
    return out


# ----------------------------------------------------------------- references


def _polydiv_ref(i):
    def ref(u, v):
        q, r = np.polydiv(u, v)
        if i == 0:
            return q
        r = np.concatenate([np.zeros(len(u) - len(r), r.dtype), r]) if len(r) < len(u) else r
        return r
    return ref


def _gradient_ref(i=None, **kw):
    def ref(f, *spacing):
        out = np.gradient(f, *spacing, **kw)
        return out[i] if i is not None else out
    return ref


def _repeat_one(a):
    return np.repeat(a, np.array([2]), axis=1)


# ----------------------------------------------------------------- records


def _u(name, ref, dtypes=FI, shapes=UNARY_SHAPES, maker=None, tol=DEFAULT_TOL, out_dtype=None, **kw):
    return OpRecord(name=name, ref=ref, args_maker=maker or uniform(), dtypes=dtypes,
                    cases=cases_from_shapes([(s,) for s in shapes]), tol=tol, out_dtype=out_dtype, **kw)


_PAIRS = (((5,), (5,)), ((3, 4), (4,)), ((2, 1), (1, 3)))

ELEMENTWISE = (
    _u("numpy.fabs", np.fabs, maker=nonzero(), out_dtype=_inexact_out),
    OpRecord(name="numpy.gcd", ref=np.gcd, args_maker=_ints(-30, 30), dtypes=INTS, cases=cases_from_shapes(_PAIRS),
             differentiable=False,
             errors=(_err([_f32(3), _f32(3)], ValueError, "Arguments to jax.numpy.gcd must be integers."),)),
    OpRecord(name="numpy.lcm", ref=np.lcm, args_maker=_ints(-11, 11), dtypes=("int32", "int16"),
             cases=cases_from_shapes(_PAIRS), differentiable=False,
             errors=(_err([_f32(3), _i32(3)], ValueError, "Arguments to jax.numpy.lcm must be integers."),)),
    OpRecord(name="numpy.frexp[0]", path="numpy.frexp", adapt=pick_output(0), ref=lambda x: np.frexp(x)[0],
             args_maker=_away_from_half_integers, dtypes=("float32", "float64", "float16"),
             cases=cases_from_shapes([(s,) for s in UNARY_SHAPES]), upcast=False),
    OpRecord(name="numpy.frexp[0,int]", path="numpy.frexp", adapt=pick_output(0), ref=lambda x: np.frexp(x)[0],
             args_maker=_ints(-100, 100), dtypes=("int32",), out_dtype=_inexact_out,
             cases=cases_from_shapes([((7,),)]), differentiable=False),
    OpRecord(name="numpy.frexp[1]", path="numpy.frexp", adapt=pick_output(1), ref=lambda x: np.frexp(x)[1],
             args_maker=with_specials(), dtypes=F32_F64, out_dtype=_const_dtype("int32"), upcast=False,
             cases=cases_from_shapes([(s,) for s in UNARY_SHAPES]), differentiable=False),
    OpRecord(name="numpy.nextafter", ref=np.nextafter, args_maker=uniform(), dtypes=F32_F64, upcast=False,
             cases=cases_from_shapes(_PAIRS), tol={"float32": (0, 0), "float64": (0, 0)}, differentiable=False),
    _u("numpy.spacing", np.spacing, dtypes=F32_F64, maker=with_specials(-1e4, 1e4), upcast=False,
       tol={"float32": (0, 0), "float64": (0, 0)}, differentiable=False),
    _u("numpy.bitwise_count", np.bitwise_count, dtypes=INTS + ("bool",), maker=_ints(-200, 200),
       out_dtype=_const_dtype("uint8"), differentiable=False,
       errors=(_err([_f32(3)], TypeError, "population_count does not accept dtype float32"),)),
    OpRecord(name="numpy.bitwise_left_shift", ref=np.left_shift, args_maker=_shift_args, dtypes=("int32", "uint8"),
             cases=cases_from_shapes(_PAIRS), differentiable=False),
    OpRecord(name="numpy.bitwise_right_shift", ref=np.right_shift, args_maker=_shift_args, dtypes=("int32", "int8"),
             cases=cases_from_shapes(_PAIRS), differentiable=False),
    _u("numpy.i0", np.i0, dtypes=("float32", "float64", "int32"), maker=uniform(-20, 20), out_dtype=_inexact_out,
       tol=TRANSCENDENTAL_TOL),
    _u("numpy.iscomplex", np.iscomplex, dtypes=FI + ("bool",), out_dtype=_const_dtype("bool"), differentiable=False),
    _u("numpy.isreal", np.isreal, dtypes=FI + ("bool",), out_dtype=_const_dtype("bool"), differentiable=False),
    OpRecord(name="numpy.ldexp[wide exponents]", path="numpy.ldexp", ref=np.ldexp, args_maker=_ldexp_args,
             dtypes=("float32", "float64", "float16"),
             cases=cases_from_shapes(_PAIRS), upcast=False,
             errors=(_err([_f32(3), _f32(3)], ValueError, "ldexp not supported for input types"),)),
    OpRecord(name="numpy.nan_to_num[kwargs]", path="numpy.nan_to_num", ref=np.nan_to_num,
             args_maker=with_specials(), dtypes=FI, cases=case_triples(
                 (((3, 4),), (), {"nan": -1.0, "posinf": 9.0, "neginf": -9.0}),
                 (((6,),), (True, 5.0), {"posinf": 7.0, "neginf": -7.0}),
                 (((6,),), (), {"copy": False, "neginf": 0.0, "posinf": 3.0}))),
)


def _c(*items):
    return case_triples(*items)


POLYNOMIALS = (
    OpRecord(name="numpy.poly", ref=np.poly, args_maker=uniform(), dtypes=FI, out_dtype=_inexact_out,
             cases=_c((((0,),), (), {}), (((1,),), (), {}), (((4,),), (), {})),
             errors=(_err([_f32(2, 3)], ValueError, "Input must be 1d or non-empty square 2d array."),)),
    OpRecord(name="numpy.polyadd", ref=np.polyadd, args_maker=uniform(), dtypes=FI,
             cases=cases_from_shapes([((3,), (5,)), ((4,), (2,)), ((1,), (1,))])),
    OpRecord(name="numpy.polysub", ref=np.polysub, args_maker=uniform(), dtypes=FI,
             cases=cases_from_shapes([((3,), (5,)), ((4,), (2,))])),
    # np.polymul trims leading zeros (through poly1d), JAX does not: the full convolution.
    OpRecord(name="numpy.polymul", ref=np.convolve, args_maker=uniform(), dtypes=FI, out_dtype=_inexact_out,
             cases=cases_from_shapes([((3,), (5,)), ((1,), (2,))])),
    OpRecord(name="numpy.polydiv[0]", path="numpy.polydiv", adapt=pick_output(0), ref=_polydiv_ref(0),
             args_maker=_poly_divisor, dtypes=F32_F64, tol=ACCUM_TOL,
             cases=cases_from_shapes([((5,), (2,)), ((4,), (3,)), ((3,), (3,))])),
    OpRecord(name="numpy.polydiv[1]", path="numpy.polydiv", adapt=pick_output(1), ref=_polydiv_ref(1),
             args_maker=_poly_divisor, dtypes=F32_F64, tol={"float32": (1e-4, 1e-4), "float64": (1e-11, 1e-11)},
             cases=cases_from_shapes([((5,), (2,)), ((4,), (3,))])),
    OpRecord(name="numpy.polyder", ref=np.polyder, args_maker=uniform(), dtypes=FI, out_dtype=_inexact_out,
             cases=_c((((5,),), (), {}), (((5,),), (2,), {}), (((3,),), (0,), {}), (((2,),), (3,), {})),
             errors=(_err([_f32(3)], ValueError, "Order of derivative must be positive", -1),)),
    OpRecord(name="numpy.polyint", ref=np.polyint, args_maker=uniform(), dtypes=FI, out_dtype=_inexact_out,
             cases=_c((((4,),), (), {}), (((4,),), (2,), {}), (((3,),), (2,), {"k": 1.5}),
                      (((3,),), (0,), {})),
             errors=(_err([_f32(3)], ValueError, "Order of integral must be positive", -1),)),
    OpRecord(name="numpy.polyint[k_array]", path="numpy.polyint", ref=lambda p, k, m: np.polyint(p, m, k),
             args_maker=uniform(),
             dtypes=F32_F64, cases=_c((((4,), (2,)), (2,), {})),
             adapt=lambda fn: (lambda p, k, m: fn(p, m, k))),
    OpRecord(name="numpy.polyval", ref=np.polyval, args_maker=uniform(-1.5, 1.5), dtypes=FI, tol=ACCUM_TOL,
             cases=cases_from_shapes([((4,), (3, 5)), ((1,), (2,)), ((3,), ())])),
    OpRecord(name="numpy.polyfit", ref=np.polyfit, args_maker=_distinct_sorted, dtypes=F32_F64, tol=LSTSQ_TOL,
             cases=_c((((8,), (8,)), (2,), {}), (((6,), (6, 3)), (1,), {}), (((5,), (5,)), (0,), {})),
             errors=(_err([_f32(3), _f32(3)], ValueError, "expected deg >= 0", -1),
                     _err([_f32(2, 2), _f32(2)], TypeError, "expected 1D vector for x", 1),
                     _err([_i32(3), _f32(3)], ValueError, "not inexact", 1))),
    OpRecord(name="numpy.polyfit[w]", path="numpy.polyfit", args_maker=_distinct_sorted, dtypes=F32_F64,
             tol=LSTSQ_TOL, ref=lambda x, y, w, deg: np.polyfit(x, y, deg, w=w),
             adapt=lambda fn: (lambda x, y, w, deg: fn(x, y, deg, w=w)),
             cases=_c((((7,), (7,), (7,)), (2,), {}))),
    OpRecord(name="numpy.polyfit[full=1]", path="numpy.polyfit", args_maker=_distinct_sorted, dtypes=F32_F64,
             tol=LSTSQ_TOL, ref=lambda x, y, deg: np.polyfit(x, y, deg, full=True)[1],
             adapt=lambda fn: (lambda x, y, deg: fn(x, y, deg, full=True)[1]),
             cases=_c((((8,), (8,)), (2,), {}))),
    OpRecord(name="numpy.polyfit[full=3]", path="numpy.polyfit", args_maker=_distinct_sorted, dtypes=F32_F64,
             tol=LSTSQ_TOL, ref=lambda x, y, deg: np.polyfit(x, y, deg, full=True)[3],
             adapt=lambda fn: (lambda x, y, deg: fn(x, y, deg, full=True)[3]),
             cases=_c((((8,), (8,)), (2,), {}))),
    OpRecord(name="numpy.polyfit[cov]", path="numpy.polyfit", args_maker=_distinct_sorted, dtypes=F32_F64,
             tol=LSTSQ_TOL, ref=lambda x, y, deg: np.polyfit(x, y, deg, cov=True)[1],
             adapt=lambda fn: (lambda x, y, deg: fn(x, y, deg, cov=True)[1]),
             cases=_c((((8,), (8,)), (2,), {}), (((8,), (8, 2)), (1,), {}))),
)


def _window(name, extra=()):
    ref = getattr(np, name)
    cases = _c(*[((), (m,) + tuple(extra), {}) for m in (0, 1, 2, 7, 8)])
    return OpRecord(name=f"numpy.{name}", ref=ref, args_maker=no_args, dtypes=("float32",),
                    out_dtype=_default_float, cases=cases, tol=TRANSCENDENTAL_TOL, differentiable=False,
                    errors=(_err([], TypeError, "must have every element be nonnegative", -1, *extra),))


WINDOWS = tuple(_window(n) for n in ("bartlett", "blackman", "hamming", "hanning")) + (_window("kaiser", (2.5,)),)

CALCULUS = (
    OpRecord(name="numpy.trapezoid", ref=np.trapezoid, args_maker=uniform(), dtypes=FI, out_dtype=_inexact_out,
             tol=ACCUM_TOL,
             cases=_c((((5,),), (), {}), (((3, 4),), (), {"axis": 0}), (((3, 4),), (), {"dx": 0.5}),
                      (((1,),), (), {}))),
    OpRecord(name="numpy.trapezoid[x]", path="numpy.trapezoid", ref=np.trapezoid, args_maker=uniform(),
             dtypes=F32_F64, tol=ACCUM_TOL,
             cases=_c((((5,), (5,)), (), {}), (((3, 4), (4,)), (), {}), (((3, 4), (3, 4)), (), {"axis": 0}))),
    OpRecord(name="numpy.gradient", ref=np.gradient, args_maker=uniform(), dtypes=FI, out_dtype=_inexact_out,
             cases=_c((((5,),), (), {}), (((2,),), (), {}), (((5,),), (2.0,), {}), (((3, 4),), (), {"axis": 1}),
                      (((3, 4),), (), {"axis": -2}), (((3, 4),), (0.5,), {"axis": (0,)})),
             errors=(_err([_f32(1)], ValueError, "at least 2 elements are required"),
                     _err([_f32(3, 4)], TypeError, "Invalid number of spacing arguments 3", 1.0, 2.0, 3.0),
                     _err([_f32(5)], NotImplementedError, "edge_order", edge_order=1))),
    OpRecord(name="numpy.gradient[coords]", path="numpy.gradient", ref=lambda x, f: np.gradient(f, x),
             args_maker=_distinct_sorted,
             dtypes=F32_F64, tol=ACCUM_TOL, adapt=lambda fn: (lambda x, f: fn(f, x)),
             cases=cases_from_shapes([((6,), (6,)), ((3,), (3,))])),
    OpRecord(name="numpy.gradient[0]", path="numpy.gradient", ref=_gradient_ref(0), adapt=pick_output(0),
             args_maker=uniform(), dtypes=F32_F64, cases=_c((((3, 4),), (), {}), (((3, 4),), (2.0, 3.0), {}))),
    OpRecord(name="numpy.gradient[1]", path="numpy.gradient", ref=_gradient_ref(1), adapt=pick_output(1),
             args_maker=uniform(), dtypes=F32_F64, cases=_c((((3, 4, 2),), (), {}), (((3, 4),), (2.0, 3.0), {}))),
    OpRecord(name="numpy.unwrap", ref=np.unwrap, args_maker=_phases, dtypes=F32_F64, tol=ACCUM_TOL,
             cases=_c((((9,),), (), {}), (((3, 8),), (), {"axis": 0}), (((3, 8),), (), {"discont": 4.0}),
                      (((10,),), (), {"period": 3.0}), (((0,),), (), {}))),
    OpRecord(name="numpy.unwrap[int]", path="numpy.unwrap", ref=np.unwrap, args_maker=_ints(-20, 20),
             dtypes=("int32",), out_dtype=_inexact_out, differentiable=False,
             cases=_c((((9,),), (), {}),)),
    OpRecord(name="numpy.unwrap[int period]", path="numpy.unwrap", ref=np.unwrap, args_maker=_ints(-20, 20),
             dtypes=("int32",), differentiable=False,
             cases=_c((((9,),), (), {"period": 6}), (((9,),), (), {"period": 7}))),
)

BITS = (
    OpRecord(name="numpy.packbits", ref=np.packbits, args_maker=_bits, dtypes=("uint8", "bool", "int32"),
             out_dtype=_const_dtype("uint8"), differentiable=False,
             cases=_c((((13,),), (), {}), (((3, 10),), (), {"axis": 1}),
                      (((9, 2),), (), {"axis": 0, "bitorder": "little"}), (((2, 3),), (), {}), (((0,),), (), {})),
             errors=(_err([_f32(3)], TypeError, "Expected an input array of integer or boolean data type"),
                     _err([_i32(3)], ValueError, "'order' must be either 'little' or 'big'", bitorder="x"))),
    OpRecord(name="numpy.unpackbits", ref=np.unpackbits, args_maker=_bytes, dtypes=("uint8",),
             out_dtype=_const_dtype("uint8"), differentiable=False,
             cases=_c((((3,),), (), {}), (((2, 3),), (), {"axis": 1}), (((2, 3),), (), {"axis": 0, "count": 5}),
                      (((4,),), (), {"count": -3}), (((2,),), (), {"count": 20}),
                      (((3,),), (), {"bitorder": "little"})),
             errors=(_err([_i32(3)], TypeError, "Expected an input array of unsigned byte data type"),)),
)

PRODUCTS = (
    OpRecord(name="numpy.matvec", ref=np.matvec, args_maker=uniform(), dtypes=FI, tol=ACCUM_TOL,
             cases=cases_from_shapes([((3, 4), (4,)), ((2, 3, 4), (4,)), ((3, 4), (2, 4)), ((0, 2), (2,))]),
             errors=(_err([_f32(2, 3), _f32(2)], ValueError, "inconsistent size for core dimension"),)),
    OpRecord(name="numpy.vecmat", ref=np.vecmat, args_maker=uniform(), dtypes=FI, tol=ACCUM_TOL,
             cases=cases_from_shapes([((3,), (3, 4)), ((2, 3), (3, 4)), ((3,), (2, 3, 4))]),
             errors=(_err([_f32(3), _f32(2, 3)], ValueError, "inconsistent size for core dimension"),)),
    OpRecord(name="numpy.linalg.cond", ref=np.linalg.cond, args_maker=_well_conditioned, dtypes=F32_F64,
             tol=LSTSQ_TOL,
             cases=_c((((3, 3),), (), {}), (((2, 3, 3),), (), {}), (((3, 3),), (1,), {}), (((3, 3),), (-2,), {}),
                      (((3, 3),), (np.inf,), {}), (((3, 3),), ("fro",), {}), (((3, 4),), (2,), {})),
             errors=(_err([_f32(3)], ValueError, "input array must be at least 2D"),
                     _err([_f32(2, 3)], ValueError, "array must be square", 1))),
)


def _ufunc_method(path, ref, maker=None, dtypes=FI, tol=DEFAULT_TOL, cases=(), **kw):
    return OpRecord(name=path, ref=ref, args_maker=maker or uniform(), dtypes=dtypes, tol=tol, cases=cases, **kw)


UFUNC_METHODS = (
    _ufunc_method("numpy.add.reduce", np.add.reduce, tol=ACCUM_TOL,
                  cases=_c((((3, 4),), (), {}), (((3, 4),), (), {"axis": 1, "keepdims": True}),
                           (((3, 4),), (), {"axis": None, "initial": 2.0}))),
    _ufunc_method("numpy.multiply.accumulate", np.multiply.accumulate, maker=uniform(0.5, 1.5), tol=ACCUM_TOL,
                  cases=_c((((5,),), (), {}), (((3, 4),), (), {"axis": 1}))),
    _ufunc_method("numpy.subtract.reduce", np.subtract.reduce, tol=ACCUM_TOL,
                  cases=_c((((4, 3),), (), {}), (((4, 3),), (), {"axis": 1, "keepdims": True}))),
    _ufunc_method("numpy.subtract.accumulate", np.subtract.accumulate, tol=ACCUM_TOL,
                  cases=_c((((4, 3),), (), {}), (((4, 3),), (), {"axis": -1}))),
    _ufunc_method("numpy.maximum.reduce", np.maximum.reduce, cases=_c((((4, 3),), (), {"axis": 1}),)),
    _ufunc_method("numpy.logaddexp.reduce", np.logaddexp.reduce, dtypes=F32_F64, tol=TRANSCENDENTAL_TOL,
                  cases=_c((((4, 3),), (), {}), (((4, 3),), (), {"axis": None}))),
    _ufunc_method("numpy.bitwise_or.reduce", np.bitwise_or.reduce, maker=_ints(0, 64), dtypes=("int32", "uint8"),
                  differentiable=False, cases=_c((((5, 3),), (), {}), (((5, 3),), (), {"axis": 1}))),
    _ufunc_method("numpy.add.outer", np.add.outer, cases=cases_from_shapes([((3,), (4,)), ((2, 2), (3,))])),
    _ufunc_method("numpy.subtract.outer", np.subtract.outer, cases=cases_from_shapes([((3,), (4,))])),
    _ufunc_method("numpy.add.reduceat", np.add.reduceat, tol=ACCUM_TOL,
                  cases=_c((((8,),), ([0, 4, 1, 5],), {}), (((3, 6),), ([0, 2, 5],), {"axis": 1}))),
    _ufunc_method("numpy.maximum.reduceat", np.maximum.reduceat,
                  cases=_c((((8,),), ([0, 3, 6],), {}),)),
)


def _np_at(ufunc, idx, *b):
    def ref(a, *vals):
        out = a.copy()
        ufunc.at(out, idx, *vals)
        return out
    return ref


def _jnp_at(idx):
    # JAX takes index arrays, not lists (a list raises TypeError, as for x[list]).
    idx = np.asarray(idx) if isinstance(idx, list) else idx

    def adapt(fn):
        return lambda a, *vals: fn(a, idx, *vals, inplace=False)
    return adapt


def _at(method, idx, shapes, dtypes=FI):
    np_ufunc = getattr(np, method.split(".")[1])
    return OpRecord(name=f"{method}[{idx!r}]", path=method, ref=_np_at(np_ufunc, idx), adapt=_jnp_at(idx),
                    args_maker=uniform(), dtypes=dtypes, cases=cases_from_shapes([shapes]))


UFUNC_AT = (
    _at("numpy.add.at", [0, 2, 0], ((5,), (3,))),
    # unique indices: scatter-mul has no update gradient for repeated ones (as JAX)
    _at("numpy.multiply.at", [1, 4, 3], ((5,), (3,))),
    _at("numpy.subtract.at", 1, ((3, 4), (4,))),
    _at("numpy.maximum.at", [0, 0, 2], ((4,), (3,))),
    _at("numpy.negative.at", [0, 0, 2], ((4,),)),
)


def _pad(mode, pad_width, **kw):
    return (((3, 4),), (pad_width,), dict(mode=mode, **kw))


PAD = (
    OpRecord(name="numpy.pad[stat modes]", path="numpy.pad", ref=np.pad, args_maker=uniform(-5, 5), dtypes=FI,
             cases=_c(_pad("maximum", 2), _pad("minimum", ((1, 2), (3, 0)), stat_length=2),
                      _pad("mean", ((1, 2), (3, 0))), _pad("mean", 2, stat_length=((1, 2), (3, 2))),
                      _pad("median", ((2, 1), (0, 3))), _pad("median", 1, stat_length=2)),
             errors=(_err([_f32(5)], ValueError, "stat_length of 0 yields no value for padding", 2,
                          mode="mean", stat_length=0),
                     _err([_f32(5)], ValueError, "unsupported keyword arguments for mode 'constant'", 2,
                          mode="constant", stat_length=2),
                     _err([_f32(5)], NotImplementedError, "Unimplemented padding mode 'bogus'", 2, mode="bogus"))),
    OpRecord(name="numpy.pad[linear_ramp]", path="numpy.pad", ref=np.pad, args_maker=uniform(-5, 5), dtypes=FI,
             tol=ACCUM_TOL,
             cases=_c(_pad("linear_ramp", ((2, 3), (1, 4))), _pad("linear_ramp", 3, end_values=(-3, 20)),
                      _pad("linear_ramp", ((1, 0), (2, 5)), end_values=((1, 2), (3, 4))))),
    OpRecord(name="numpy.pad[odd reflection]", path="numpy.pad", ref=np.pad, args_maker=uniform(-5, 5), dtypes=FI,
             cases=_c(_pad("reflect", ((2, 3), (1, 2)), reflect_type="odd"),
                      _pad("symmetric", ((2, 3), (1, 2)), reflect_type="odd"),
                      _pad("reflect", ((5, 7), (9, 6)), reflect_type="odd"),
                      _pad("symmetric", ((5, 7), (9, 6)), reflect_type="odd"),
                      _pad("symmetric", ((4, 0), (10, 4)), reflect_type="even"))),
)


def _ravel_f(a):
    return np.ravel(a, order="F")


STRUCTURAL = (
    OpRecord(name="numpy.ravel[order=F]", path="numpy.ravel", ref=np.ravel, args_maker=uniform(), dtypes=FI,
             cases=_c((((3, 4),), ("F",), {}), (((2, 3, 2),), (), {"order": "F"}))),
    OpRecord(name="numpy.reshape[order=F]", path="numpy.reshape", ref=np.reshape, args_maker=uniform(), dtypes=FI,
             cases=_c((((3, 4),), ((2, 6),), {"order": "F"}), (((2, 3, 2),), ((3, -1),), {"order": "F"})),
             errors=(_err([_f32(3, 4)], NotImplementedError, "order=A is not implemented", (2, 6), order="A"),
                     _err([_f32(3, 4)], ValueError, "Unexpected value for 'order' argument", (2, 6), order="X"))),
    OpRecord(name="numpy.repeat[one count]", path="numpy.repeat", ref=_repeat_one, args_maker=uniform(), dtypes=FI,
             adapt=lambda fn: (lambda a: fn(a, np.array([2]), axis=1)), cases=cases_from_shapes([((3, 4),)])),
    OpRecord(name="numpy.cumulative_sum[include_initial]", path="numpy.cumulative_sum", ref=np.cumulative_sum,
             args_maker=uniform(), dtypes=FI + ("bool",), tol=ACCUM_TOL,
             cases=_c((((5,),), (), {"include_initial": True}), (((3, 4),), (), {"axis": 1, "include_initial": True}),
                      (((3, 4),), (), {"axis": 0}), (((0,),), (), {"include_initial": True}))),
    OpRecord(name="numpy.cumulative_prod[include_initial]", path="numpy.cumulative_prod", ref=np.cumulative_prod,
             args_maker=uniform(0.5, 1.5), dtypes=("float32", "float64"), tol=ACCUM_TOL,
             cases=_c((((5,),), (), {"include_initial": True}), (((3, 4),), (), {"axis": 0, "include_initial": True}))),
    OpRecord(name="numpy.interp[period]", path="numpy.interp", ref=np.interp, args_maker=_interp_args,
             dtypes=F32_F64, tol={"float32": (1e-4, 1e-4), "float64": (1e-10, 1e-10)},
             cases=_c((((7,), (5,), (5,)), (), {"period": 360.0}), (((4, 3), (6,), (6,)), (), {"period": 90.0}))),
)

RECORDS = ELEMENTWISE + POLYNOMIALS + WINDOWS + CALCULUS + BITS + PRODUCTS + UFUNC_METHODS + UFUNC_AT + PAD + STRUCTURAL
