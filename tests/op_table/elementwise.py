"""Records of the elementwise operators: lax arithmetic and comparisons, the
transcendental and special functions, bitwise and shift operators,
`select_n`, `clamp`, `convert_element_type`, and the elementwise jnp basics
(`sin`, `exp`, `tanh`, `where`, `maximum`).
"""
import math

import numpy as np

from ._record import BINARY_SHAPES, BITWISE, BROADCAST_SHAPES, DEFAULT_TOL, F, F32_F64, INTS, NUM, TRANSCENDENTAL_TOL
from ._record import UNARY_SHAPES, Case, OpRecord, _inexact_out, _rand, cases_from_shapes, full_int_range, is_float
from ._record import nonzero, nonzero_second, positive, pred_and_cases, uniform, with_specials

# ----------------------------------------------------------------- references


def _lax_div(a, b):
    if is_float(a.dtype):
        return a / b
    # C-style division: truncate toward zero.
    q = np.abs(a) // np.abs(b)
    return (q * np.sign(a) * np.sign(b)).astype(a.dtype)


def _logistic(x):
    return 1.0 / (1.0 + np.exp(-x))


def _integer_pow(x, y):
    if y >= 0:
        return (x**y).astype(x.dtype)
    return (1 / (x ** (-y))).astype(x.dtype)


def _select_n(pred, *cases):
    pred = np.asarray(pred)
    idx = pred.astype(np.int64)
    return np.choose(idx, np.broadcast_arrays(*cases)) if pred.ndim else cases[int(idx)].copy()


def _round_ref(x, rounding_method=0):
    if rounding_method == 0:
        return (np.sign(x) * np.floor(np.abs(x) + 0.5)).astype(x.dtype)
    return np.round(x)


_erf_vec = np.vectorize(math.erf, otypes=[np.float64])
_lgamma_vec = np.vectorize(math.lgamma, otypes=[np.float64])


def _erf_ref(x):
    return _erf_vec(x).astype(x.dtype)


def _lgamma_ref(x):
    return _lgamma_vec(x).astype(x.dtype)


def _erf_inv_ref(y):
    """Newton's method on erf (|y| < 1)."""
    y64 = np.asarray(y, np.float64)
    x = np.zeros_like(y64)
    for _ in range(60):
        f = _erf_vec(x) - y64
        x = x - f / (2.0 / np.sqrt(np.pi) * np.exp(-x * x))
    return x.astype(np.asarray(y).dtype)


def _digamma_scalar(x):
    acc = 0.0
    if x < 0.5:
        acc -= np.pi / np.tan(np.pi * x)
        x = 1.0 - x
    while x < 20.0:
        acc -= 1.0 / x
        x += 1.0
    # asymptotic series: Bernoulli numbers B2..B12
    b = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730)
    s = sum(bk / (2 * (k + 1)) * x ** (-2 * (k + 1)) for k, bk in enumerate(b))
    return acc + math.log(x) - 0.5 / x - s


def _digamma_ref(x):
    return np.vectorize(_digamma_scalar, otypes=[np.float64])(x).astype(np.asarray(x).dtype)


def _polygamma_scalar(m, x):
    m = float(m)
    if m != int(m) or m < 0:
        return np.nan
    if m == 0:
        return _digamma_scalar(x)
    s = m + 1
    n = 40
    total = sum((x + k) ** -s for k in range(n))
    a = x + n
    # Euler-Maclaurin tail of sum_{k>=n} (x+k)^-s
    total += a ** (1 - s) / (s - 1) + 0.5 * a ** -s + s / 12 * a ** (-s - 1)
    total -= s * (s + 1) * (s + 2) / 720 * a ** (-s - 3)
    return (-1) ** (int(m) + 1) * math.factorial(int(m)) * total


def _polygamma_ref(m, x):
    return np.vectorize(_polygamma_scalar, otypes=[np.float64])(m, x).astype(np.asarray(x).dtype)


def _bits(dt):
    return np.dtype(dt).itemsize * 8


def _shift_amount(x, y):
    """Shift amounts read as unsigned (as XLA): negative ones are over-wide."""
    return y.astype(x.dtype).view(np.dtype(f"u{x.dtype.itemsize}")).astype(np.uint64)


def _shift_left(x, y):
    s = _shift_amount(x, y)
    u = x.view(np.dtype(f"u{x.dtype.itemsize}")).astype(np.uint64)
    out = (u << np.minimum(s, 63)) & np.uint64((1 << _bits(x.dtype)) - 1)
    out = np.where(s >= _bits(x.dtype), 0, out)
    return out.astype(np.dtype(f"u{x.dtype.itemsize}")).view(x.dtype)


def _shift_right_logical(x, y):
    s = _shift_amount(x, y)
    u = x.view(np.dtype(f"u{x.dtype.itemsize}")).astype(np.uint64)
    out = np.where(s >= _bits(x.dtype), 0, u >> np.minimum(s, 63))
    return out.astype(np.dtype(f"u{x.dtype.itemsize}")).view(x.dtype)


def _shift_right_arithmetic(x, y):
    s = _shift_amount(x, y)
    sx = x.view(np.dtype(f"i{x.dtype.itemsize}")).astype(np.int64)
    out = sx >> np.minimum(s, _bits(x.dtype) - 1).astype(np.int64)
    return out.astype(np.dtype(f"i{x.dtype.itemsize}")).view(x.dtype)


def _popcount(x):
    u = x.view(np.dtype(f"u{x.dtype.itemsize}")).astype(np.uint64)
    out = np.zeros(u.shape, np.uint64)
    for b in range(_bits(x.dtype)):
        out += (u >> np.uint64(b)) & np.uint64(1)
    return out.astype(x.dtype)


def _clz(x):
    u = x.view(np.dtype(f"u{x.dtype.itemsize}")).astype(np.uint64)
    n = _bits(x.dtype)
    out = np.full(u.shape, n, np.int64)
    for b in range(n):
        out = np.where((u >> np.uint64(b)) & np.uint64(1) == 1, n - 1 - b, out)
    return out.astype(x.dtype)


def _clamp(lo, x, hi):
    return np.minimum(np.maximum(x, lo), hi)


# ----------------------------------------------------------------- arg makers


def clamp_args(rng, shapes, dtype):
    lo, x, hi = shapes
    return [_rand(rng, lo, dtype, -2, 0), _rand(rng, x, dtype, -3, 3), _rand(rng, hi, dtype, 0, 2)]


def polygamma_args(rng, shapes, dtype):
    m = rng.integers(0, 4, size=tuple(shapes[0])).astype(dtype)
    return [m, _rand(rng, shapes[1], dtype, 0.3, 4.0)]


def shift_args(rng, shapes, dtype):
    x = _rand(rng, shapes[0], dtype, -100, 100)
    bits = np.dtype(dtype).itemsize * 8
    lo = -2 if np.dtype(dtype).kind == "i" else 0
    y = rng.integers(lo, bits + 3, size=tuple(shapes[1]), endpoint=True).astype(dtype)
    return [x, y]


# ----------------------------------------------------------------- records


def _unary(full_name, ref, maker, dtypes, tol, **kw):
    return OpRecord(
        name=full_name,
        ref=ref,
        args_maker=maker or uniform(),
        dtypes=dtypes,
        cases=cases_from_shapes([(s,) for s in UNARY_SHAPES]),
        tol=tol,
        **kw,
    )


def _unary_lax(name, ref, maker=None, dtypes=F, tol=TRANSCENDENTAL_TOL, **kw):
    return _unary(f"lax.{name}", ref, maker, dtypes, tol, **kw)


def _binary_lax(name, ref, maker=None, dtypes=NUM, **kw):
    return OpRecord(
        name=f"lax.{name}",
        ref=ref,
        args_maker=maker or uniform(),
        dtypes=dtypes,
        cases=cases_from_shapes(BINARY_SHAPES),
        **kw,
    )


def _unary_jnp(name, ref, maker=None, dtypes=("float32", "float64", "float16", "int32"), **kw):
    return _unary(f"numpy.{name}", ref, maker, dtypes, TRANSCENDENTAL_TOL, out_dtype=_inexact_out, **kw)


RECORDS: tuple = (
    # ---- lax: elementwise binary (equal dtypes; equal shapes or rank-0)
    _binary_lax("add", np.add),
    _binary_lax("sub", np.subtract),
    _binary_lax("mul", np.multiply),
    _binary_lax("div", _lax_div, maker=nonzero_second(), dtypes=NUM),
    _binary_lax("max", np.maximum, dtypes=NUM + ("bool",)),
    _binary_lax("min", np.minimum, dtypes=NUM + ("bool",)),
    _binary_lax("pow", np.power, maker=positive(0.5, 2.0), dtypes=F, tol=TRANSCENDENTAL_TOL),
    # ---- lax: comparisons -> bool
    _binary_lax("eq", np.equal, dtypes=NUM + ("bool",), differentiable=False),
    _binary_lax("ne", np.not_equal, dtypes=NUM + ("bool",), differentiable=False),
    _binary_lax("lt", np.less, differentiable=False),
    _binary_lax("le", np.less_equal, differentiable=False),
    _binary_lax("gt", np.greater, differentiable=False),
    _binary_lax("ge", np.greater_equal, differentiable=False),
    # ---- lax: elementwise unary
    _unary_lax("neg", np.negative, dtypes=NUM, tol=DEFAULT_TOL),
    _unary_lax("exp", np.exp),
    _unary_lax("log", np.log, maker=positive()),
    _unary_lax("sin", np.sin),
    _unary_lax("cos", np.cos),
    _unary_lax("tanh", np.tanh),
    _unary_lax("logistic", _logistic, maker=uniform(-6.0, 6.0)),
    _unary_lax("sqrt", np.sqrt, maker=positive(0.0, 9.0)),
    _unary_lax("abs", np.abs, dtypes=NUM, tol=DEFAULT_TOL),
    _unary_lax("sign", np.sign, dtypes=NUM, tol=DEFAULT_TOL, differentiable=False),
    OpRecord(
        name="lax.integer_pow",
        ref=_integer_pow,
        args_maker=uniform(-2.0, 2.0),
        dtypes=NUM,
        cases=cases_from_shapes([(s,) for s in UNARY_SHAPES], y=2)
        + cases_from_shapes([((5,),), ((3, 4),)], y=3)
        + cases_from_shapes([((3, 4),)], y=0)
        + cases_from_shapes([((3, 4),)], y=1),
    ),
    OpRecord(
        name="lax.integer_pow[neg]",
        path="lax.integer_pow",
        ref=_integer_pow,
        args_maker=nonzero(0.5, 2.0),
        dtypes=F,
        cases=cases_from_shapes([((5,),), ((3, 4),)], y=-2),
        tol=TRANSCENDENTAL_TOL,
    ),
    # ---- lax.stop_gradient: identity on values (its zero derivative is checked in the AD tests)
    _unary_lax("stop_gradient", lambda x: x.copy(), dtypes=NUM + ("bool",), tol=DEFAULT_TOL,
               differentiable=False),
    # ---- ad_checkpoint.checkpoint_name: the `name` primitive, identity on values and derivatives
    OpRecord(
        name="ad_checkpoint.checkpoint_name",
        ref=lambda x, name: x.copy(),
        args_maker=uniform(),
        dtypes=NUM,
        cases=cases_from_shapes([(s,) for s in UNARY_SHAPES], name="hidden"),
        tol=DEFAULT_TOL,
    ),
    # ---- lax: rounding, transcendental and special functions
    _unary_lax("floor", np.floor, tol=DEFAULT_TOL),
    _unary_lax("ceil", np.ceil, tol=DEFAULT_TOL),
    OpRecord(
        name="lax.round",
        ref=_round_ref,
        args_maker=uniform(-4.0, 4.0),
        dtypes=F,
        cases=cases_from_shapes([(s,) for s in UNARY_SHAPES])
        + cases_from_shapes([((5,),), ((3, 4),)], rounding_method=0)
        + cases_from_shapes([((5,),), ((3, 4),)], rounding_method=1),
    ),
    OpRecord(
        name="lax.round[halves]",
        path="lax.round",
        ref=_round_ref,
        args_maker=lambda rng, shapes, dtype: [np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5], dtype)],
        dtypes=F,
        cases=cases_from_shapes([((7,),)], rounding_method=0) + cases_from_shapes([((7,),)], rounding_method=1),
        differentiable=False,  # finite differences straddle the jumps at the halfway points
    ),
    _unary_lax("is_finite", np.isfinite, maker=with_specials(), differentiable=False, tol=DEFAULT_TOL),
    _unary_lax("exp2", np.exp2),
    _unary_lax("log1p", np.log1p, maker=uniform(-0.9, 3.0)),
    _unary_lax("expm1", np.expm1),
    _unary_lax("tan", np.tan, maker=uniform(-1.2, 1.2)),
    _unary_lax("asin", np.arcsin, maker=uniform(-0.95, 0.95)),
    _unary_lax("acos", np.arccos, maker=uniform(-0.95, 0.95)),
    _unary_lax("atan", np.arctan),
    _unary_lax("sinh", np.sinh),
    _unary_lax("cosh", np.cosh),
    _unary_lax("asinh", np.arcsinh),
    _unary_lax("acosh", np.arccosh, maker=uniform(1.05, 4.0)),
    _unary_lax("atanh", np.arctanh, maker=uniform(-0.95, 0.95)),
    _unary_lax("rsqrt", lambda x: 1.0 / np.sqrt(x), maker=positive(0.1, 4.0)),
    _unary_lax("cbrt", np.cbrt, maker=nonzero(0.25, 3.0)),
    _unary_lax("erf", _erf_ref),
    _unary_lax("erf_inv", _erf_inv_ref, maker=uniform(-0.95, 0.95)),
    _unary_lax("lgamma", _lgamma_ref, maker=positive(0.2, 5.0)),
    _unary_lax("digamma", _digamma_ref, maker=positive(0.2, 5.0)),
    _unary_lax("digamma[neg]", _digamma_ref, maker=uniform(-2.8, -2.2), path="lax.digamma"),
    _unary_lax("square", np.square, dtypes=NUM, tol=DEFAULT_TOL),
    # ---- lax: bit counting and bitwise not (integer / bool)
    _unary_lax("bitwise_not", np.invert, maker=full_int_range, dtypes=BITWISE, differentiable=False),
    _unary_lax("population_count", _popcount, maker=full_int_range, dtypes=INTS, differentiable=False),
    _unary_lax("clz", _clz, maker=full_int_range, dtypes=INTS, differentiable=False),
    # ---- lax: remainder, atan2, nextafter, polygamma, bitwise and shift operators, clamp
    _binary_lax("rem", np.fmod, maker=nonzero_second(), dtypes=NUM),
    OpRecord(
        name="lax.rem[int_edge]",
        path="lax.rem",
        ref=lambda x, y: np.where(y == 0, x, np.fmod(x, np.where(y == 0, 1, y))).astype(x.dtype),
        args_maker=lambda rng, shapes, dtype: [
            np.array([7, -7, 7, -7, 5, -5, np.iinfo(dtype).min], dtype),
            np.array([2, 2, -2, -2, 0, 0, -1], dtype),
        ],
        dtypes=("int32", "int8"),
        cases=cases_from_shapes([((7,), (7,))]),
        differentiable=False,
    ),
    _binary_lax("atan2", np.arctan2, dtypes=F, tol=TRANSCENDENTAL_TOL),
    _binary_lax("nextafter", np.nextafter, dtypes=("float32", "float64", "float16"), upcast=False,
                differentiable=False),
    _binary_lax("polygamma", _polygamma_ref, maker=polygamma_args, dtypes=F32_F64,
                tol=TRANSCENDENTAL_TOL, differentiable=False),
    _binary_lax("bitwise_and", np.bitwise_and, maker=full_int_range, dtypes=BITWISE, differentiable=False),
    _binary_lax("bitwise_or", np.bitwise_or, maker=full_int_range, dtypes=BITWISE, differentiable=False),
    _binary_lax("bitwise_xor", np.bitwise_xor, maker=full_int_range, dtypes=BITWISE, differentiable=False),
    _binary_lax("shift_left", _shift_left, maker=shift_args, dtypes=INTS, differentiable=False),
    _binary_lax("shift_right_logical", _shift_right_logical, maker=shift_args, dtypes=INTS,
                differentiable=False),
    _binary_lax("shift_right_arithmetic", _shift_right_arithmetic, maker=shift_args, dtypes=INTS,
                differentiable=False),
    OpRecord(
        name="lax.clamp",
        ref=_clamp,
        args_maker=clamp_args,
        dtypes=NUM,
        cases=cases_from_shapes([((), (), ()), ((), (3, 4), ()), ((3, 4), (3, 4), (3, 4)),
                                 ((), (5,), (5,)), ((5,), (5,), ()), ((), (0,), ())]),
    ),
    # ---- lax: select / conversion
    OpRecord(
        name="lax.select_n",
        ref=_select_n,
        args_maker=pred_and_cases(2),
        dtypes=NUM + ("bool",),
        cases=cases_from_shapes([((), (), ()), ((5,), (5,), (5,)), ((3, 4), (3, 4), (3, 4)), ((), (3, 4), (3, 4)), ((0,), (0,), (0,))]),
    ),
    OpRecord(
        name="lax.select_n[3]",
        path="lax.select_n",
        ref=_select_n,
        args_maker=pred_and_cases(3),
        dtypes=("float32", "int32"),
        cases=cases_from_shapes([((5,), (5,), (5,), (5,)), ((3, 4), (3, 4), (3, 4), (3, 4))]),
    ),
    OpRecord(
        name="lax.convert_element_type",
        ref=lambda x, new_dtype: x.astype(new_dtype),
        args_maker=uniform(-5.0, 5.0),
        dtypes=("float32", "int32", "bool", "float16", "float64"),
        cases=tuple(
            Case((s,), (), {"new_dtype": np.dtype(t)})
            for s in UNARY_SHAPES
            for t in ("float32", "int32", "bool", "float16")
        ),
        upcast=False,
        notes="float -> int truncates toward zero (inputs stay in range)",
    ),
    # ---- jax.numpy
    _unary_jnp("sin", np.sin),
    _unary_jnp("exp", np.exp),
    _unary_jnp("tanh", np.tanh),
    OpRecord(
        name="numpy.where",
        ref=np.where,
        args_maker=pred_and_cases(2),
        dtypes=("float32", "float64", "int32", "bool"),
        cases=cases_from_shapes(
            [((5,), (5,), (5,)), ((3, 4), (3, 4), (3, 4)), ((3, 4), (), (3, 4)), ((3, 1), (1, 4), (3, 4)), ((), (), ())]
        ),
    ),
    OpRecord(
        name="numpy.maximum",
        ref=np.maximum,
        args_maker=uniform(),
        dtypes=NUM + ("bool",),
        cases=cases_from_shapes(BROADCAST_SHAPES),
    ),
)
