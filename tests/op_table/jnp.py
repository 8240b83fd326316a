"""Operator-table records for the `jax.numpy` / `jax.nn` / `jax.scipy.special`
surface beyond the basic records of the other families.

Functions that take a list of arrays or return a list (concatenate, split,
einsum, meshgrid, ...) are reached through small adapters registered on
``microjax_rs._jnp_table_adapters``, so the table can call them with array
arguments first like every other record.
"""
import math
import types

import numpy as np

import microjax_rs
import microjax_rs.nn  # noqa: F401  (records resolve names on it)
import microjax_rs.numpy as jnp
import microjax_rs.scipy.special  # noqa: F401

from ._record import ACCUM_TOL, BROADCAST_SHAPES, DEFAULT_TOL, DTYPE, F32_F64, FI, TRANSCENDENTAL_TOL, UNARY_SHAPES
from ._record import Case, OpRecord, _inexact_out, _rand, canonical_out, canonicalize_dtype, cases_from_shapes
from ._record import default_int_out, is_float, no_args, nonzero, nonzero_second, positive, uniform

FI16 = ("float32", "float64", "float16", "int32")
FB = ("float32", "float64", "int32", "bool")
INTS = ("int32", "int8", "uint8", "int16", "uint32")


# ----------------------------------------------------------------- arg makers


def _with_some(values, base):
    """`base`'s float arrays (default: uniform) with `len(values)` random entries replaced by `values`."""
    base = base or uniform()

    def make(rng, shapes, dtype):
        out = base(rng, shapes, dtype)
        if not is_float(dtype):
            return out
        res = []
        for a in out:
            a = np.array(a)
            if a.size >= len(values):
                flat = a.reshape(-1)
                pos = rng.permutation(a.size)[:len(values)]
                flat[pos] = np.array(values).astype(dtype)
            res.append(a)
        return res

    return make


def with_specials(base=None):
    """`base`'s arrays with some entries replaced by nan, inf and -inf (floats)."""
    return _with_some([np.nan, np.inf, -np.inf], base)


def some_nans(base=None):
    return _with_some([np.nan, np.nan], base)


def int_power_args(rng, shapes, dtype):
    """A base (floats: positive) and an exponent (ints: non-negative)."""
    if is_float(dtype):
        return [_rand(rng, shapes[0], dtype, 0.5, 2.0), _rand(rng, shapes[1], dtype, -2.0, 2.0)]
    return [_rand(rng, shapes[0], dtype, -3, 3), _rand(rng, shapes[1], dtype, 0, 4)]


def mask_second(base=None):
    """The first argument from `base`, the second a bool mask (where=)."""
    base = base or uniform()

    def make(rng, shapes, dtype):
        (a,) = base(rng, shapes[:1], dtype)
        return [a, rng.integers(0, 2, size=tuple(shapes[1])).astype(bool)]

    return make


def labels(n):
    def make(rng, shapes, dtype):
        return [rng.integers(0, n, size=tuple(s)).astype(dtype) for s in shapes]

    return make


def weights_second(rng, shapes, dtype):
    return [_rand(rng, shapes[0], dtype, -3, 3), _rand(rng, shapes[1], dtype, 0.5, 2.0)]


# ----------------------------------------------------------------- adapters


def _module_adapters(m):
    """The adapters whose `jax.numpy` and NumPy forms differ only in the module `m`."""
    def concatenate(*arrays, axis=0):
        return m.concatenate(arrays, axis=axis)

    def stack(*arrays, axis=0):
        return m.stack(arrays, axis=axis)

    def hstack(*arrays):
        return m.hstack(arrays)

    def vstack(*arrays):
        return m.vstack(arrays)

    def dstack(*arrays):
        return m.dstack(arrays)

    def column_stack(*arrays):
        return m.column_stack(arrays)

    def split(x, sections, axis=0, k=0):
        return m.split(x, sections, axis=axis)[k]

    def array_split(x, sections, axis=0, k=0):
        return m.array_split(x, sections, axis=axis)[k]

    def einsum(*operands, subscripts):
        return m.einsum(subscripts, *operands)

    def meshgrid(*xs, k=0, indexing="xy"):
        return m.meshgrid(*xs, indexing=indexing)[k]

    def broadcast_arrays(*xs, k=0):
        return m.broadcast_arrays(*xs)[k]

    def linspace_arr(start, stop, num=5, endpoint=True, axis=0):
        return m.linspace(start, stop, num=num, endpoint=endpoint, axis=axis)

    def average_returned(a, w, axis=None, k=0):
        return m.average(a, axis=axis, weights=w, returned=True)[k]

    def divmod_k(a, b, k=0):
        return m.divmod(a, b)[k]

    def select2(c1, c2, a, b, default=0):
        return m.select([c1 > 0, c2 > 0], [a, b], default)

    def modf_k(x, k=0):
        return m.modf(x)[k]

    def unravel_k(i, shape, k=0):
        return m.unravel_index(i, shape)[k]

    return {k: v for k, v in locals().items() if callable(v)}


def _adapters():
    def sum_where(a, m, **kw):
        return jnp.sum(a, where=m, **kw)

    def mean_where(a, m, **kw):
        return jnp.mean(a, where=m, **kw)

    def max_where(a, m, **kw):
        return jnp.max(a, where=m, **kw)

    def min_where(a, m, **kw):
        return jnp.min(a, where=m, **kw)

    def average(a, w, **kw):
        return jnp.average(a, weights=w, **kw)

    def getitem(x, idx):
        return jnp.asarray(x)[idx]

    def at_set(x, v, idx):
        return jnp.asarray(x).at[idx].set(v)

    def at_add(x, v, idx):
        return jnp.asarray(x).at[idx].add(v)

    def at_max(x, v, idx):
        return jnp.asarray(x).at[idx].max(v)

    def nonzero_k(x, size, k=0, fill_value=None):
        return jnp.nonzero(x, size=size, fill_value=fill_value)[k]

    def interp(x, fp, xp=None):
        return jnp.interp(x, jnp.asarray(np.asarray(xp), dtype=fp.dtype), fp)

    def ravel_multi(i, j, dims):
        # mode 'clip' (in-range indices: the same values as the default 'raise',
        # which, as in JAX, needs concrete indices and so has no jit / vmap form)
        return jnp.ravel_multi_index((i, j), dims, mode="clip")

    own = {k: v for k, v in locals().items() if callable(v)}
    return types.SimpleNamespace(**_module_adapters(jnp), **own)


microjax_rs._jnp_table_adapters = _adapters()


def _np_adapters():
    def getitem(x, idx):
        return x[idx]

    def at_set(x, v, idx):
        x = x.copy()
        x[idx] = v
        return x

    def at_add(x, v, idx):
        x = x.copy()
        np.add.at(x, idx, v)
        return x

    def at_max(x, v, idx):
        x = x.copy()
        np.maximum.at(x, idx, v)
        return x

    def interp(x, fp, xp=None):
        return np.interp(x, np.asarray(xp, np.asarray(fp).dtype), fp).astype(np.asarray(fp).dtype)

    def nonzero_k(x, size, k=0, fill_value=None):
        idx = np.nonzero(x)[k][:size]
        fill = 0 if fill_value is None else fill_value
        return np.concatenate([idx, np.full(size - idx.size, fill, idx.dtype)])

    own = {k: v for k, v in locals().items() if callable(v)}
    return types.SimpleNamespace(**_module_adapters(np), **own)


NPA = _np_adapters()


# ----------------------------------------------------------------- references


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _softplus(x):
    return np.logaddexp(x, 0.0)


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _log_softmax(x, axis=-1):
    s = x - x.max(axis=axis, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))


def _logsumexp(x, axis=None, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


def _one_hot(x, num_classes, axis=-1):
    out = (np.expand_dims(x, axis) == np.expand_dims(np.arange(num_classes), tuple(
        i for i in range(x.ndim + 1) if i != axis % (x.ndim + 1)))).astype(np.float32)
    return out


def _standardize(x, axis=-1):
    m = x.mean(axis=axis, keepdims=True)
    v = (x * x).mean(axis=axis, keepdims=True) - m * m
    return (x - m) / np.sqrt(v + 1e-5)


def _elu(x, alpha=1.0):
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


def _selu(x):
    return 1.0507009873554804934193349852946 * _elu(x, 1.6732632423543772848170429916717)


def _celu(x, alpha=1.0):
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0) / alpha))


def _glu(x, axis=-1):
    a, b = np.split(x, 2, axis=axis)
    return a * _sigmoid(b)


def _xlogy(x, y):
    return np.where(x == 0, 0.0, x * np.log(np.where(x == 0, 1.0, y)))


def _xlog1py(x, y):
    return np.where(x == 0, 0.0, x * np.log1p(np.where(x == 0, 0.0, y)))


def _entr(x):
    return np.where(x > 0, -x * np.log(np.where(x > 0, x, 1.0)), np.where(x == 0, 0.0, -np.inf))


def _norm(x, ord=None, axis=None, keepdims=False):
    return np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)


def _cumsum_ref(x, axis=None):
    return np.cumsum(x, axis=axis, dtype=np.result_type(x.dtype, np.int32) if not is_float(x.dtype) else x.dtype)


def _heaviside(x1, x2):
    return np.heaviside(x1, x2)


def _sinc(x):
    return np.sinc(x)


def _sum_like(dt, x64):
    dt = np.dtype(dt)
    if dt == np.bool_ or (np.issubdtype(dt, np.integer) and dt.itemsize < (8 if x64 else 4)):
        if np.issubdtype(dt, np.unsignedinteger):
            return np.dtype("uint64" if x64 else "uint32")
        return default_int_out(dt, x64)
    return canonicalize_dtype(dt, x64)


def _float_like(dt, x64):
    return _inexact_out(dt, x64)


# ----------------------------------------------------------------- record helpers


def _u(name, ref, maker=None, dtypes=FI16, tol=TRANSCENDENTAL_TOL, out_dtype=_inexact_out, shapes=UNARY_SHAPES,
       path=None, **kw):
    return OpRecord(name=name, ref=ref, args_maker=maker or uniform(), dtypes=dtypes,
                    cases=cases_from_shapes([(s,) for s in shapes]), tol=tol, out_dtype=out_dtype,
                    path=path, **kw)


def _b(name, ref, maker=None, dtypes=FI, tol=DEFAULT_TOL, out_dtype=None, shapes=BROADCAST_SHAPES, **kw):
    return OpRecord(name=name, ref=ref, args_maker=maker or uniform(), dtypes=dtypes,
                    cases=cases_from_shapes(shapes), tol=tol, out_dtype=out_dtype, **kw)


def _cases(*items):
    """Case shorthand: (shapes, kwargs) pairs or (shapes, args, kwargs) triples."""
    out = []
    for it in items:
        if len(it) == 2:
            out.append(Case(tuple(it[0]), (), dict(it[1])))
        else:
            out.append(Case(tuple(it[0]), tuple(it[1]), dict(it[2])))
    return tuple(out)


REDUCE_CASES = _cases(
    (((3, 4),), {}),
    (((3, 4),), {"axis": 0}),
    (((3, 4),), {"axis": 1}),
    (((3, 4),), {"axis": -1, "keepdims": True}),
    (((2, 3, 4),), {"axis": (0, 2)}),
    (((5,),), {}),
    (((),), {}),
)
NONEMPTY_REDUCE_CASES = REDUCE_CASES
EMPTY_OK_CASES = REDUCE_CASES + _cases((((0,),), {}), (((0, 3),), {"axis": 0}))

T = TRANSCENDENTAL_TOL

_BASIC_RECORDS = (
    # ---- elementwise unary, inexact results
    _u("numpy.exp2", np.exp2),
    _u("numpy.expm1", np.expm1, maker=uniform(-2, 2)),
    _u("numpy.log1p", np.log1p, maker=positive(0.0, 4.0)),
    _u("numpy.log2", np.log2, maker=positive(0.1, 8.0), dtypes=("float32", "float64", "int32")),
    _u("numpy.log10", np.log10, maker=positive(0.1, 8.0), dtypes=("float32", "float64", "int32")),
    _u("numpy.tan", np.tan, maker=uniform(-1.2, 1.2), dtypes=F32_F64),
    _u("numpy.sinh", np.sinh, maker=uniform(-2, 2), dtypes=F32_F64),
    _u("numpy.cosh", np.cosh, maker=uniform(-2, 2), dtypes=F32_F64),
    _u("numpy.arcsinh", np.arcsinh, maker=uniform(-2, 2), dtypes=F32_F64),
    _u("numpy.arccosh", np.arccosh, maker=positive(1.2, 4.0), dtypes=F32_F64),
    _u("numpy.arctanh", np.arctanh, maker=uniform(-0.8, 0.8), dtypes=F32_F64),
    _u("numpy.cbrt", np.cbrt, maker=nonzero(0.2, 8.0), dtypes=("float32", "float64", "int32")),
    _u("numpy.reciprocal", np.reciprocal, maker=nonzero(0.3, 3.0), dtypes=F32_F64, tol=DEFAULT_TOL),
    _u("numpy.deg2rad", np.deg2rad, dtypes=FI, tol=DEFAULT_TOL),
    _u("numpy.rad2deg", np.rad2deg, dtypes=FI, tol=DEFAULT_TOL),
    _u("numpy.sinc", _sinc, dtypes=F32_F64),
    _u("numpy.sqrt", np.sqrt, maker=positive(0.1, 9.0)),
    _u("numpy.log", np.log, maker=positive()),
    _u("numpy.cos", np.cos),
    # ---- elementwise unary, same dtype
    _u("numpy.negative", np.negative, dtypes=FI16 + ("int8",), out_dtype=None, tol=DEFAULT_TOL),
    _u("numpy.absolute", np.absolute, dtypes=FI16 + ("int8",), out_dtype=None, tol=DEFAULT_TOL),
    _u("numpy.sign", np.sign, dtypes=FI16, out_dtype=None, tol=DEFAULT_TOL, differentiable=False),
    _u("numpy.square", np.square, dtypes=FI16, out_dtype=None, tol=DEFAULT_TOL),
    _u("numpy.positive", np.positive, dtypes=FI, out_dtype=None, tol=DEFAULT_TOL),
    _u("numpy.isnan", np.isnan, maker=with_specials(), dtypes=("float32", "float16", "int32"), out_dtype=None),
    _u("numpy.isinf", np.isinf, maker=with_specials(), dtypes=("float32", "float16", "int32"), out_dtype=None),
    _u("numpy.isfinite", np.isfinite, maker=with_specials(), dtypes=("float32", "float16", "int32"),
       out_dtype=None),
    _u("numpy.isposinf", np.isposinf, maker=with_specials(), dtypes=("float32",), out_dtype=None),
    _u("numpy.isneginf", np.isneginf, maker=with_specials(), dtypes=("float32",), out_dtype=None),
    _u("numpy.signbit", np.signbit, dtypes=("float32", "int32"), out_dtype=None),
    _u("numpy.signbit[signed zeros and NaNs]", np.signbit, path="numpy.signbit",
       maker=_with_some([np.nan, -np.nan, 0.0, -0.0], None), dtypes=("float32", "float64", "float16"), out_dtype=None),
    _u("numpy.nan_to_num", np.nan_to_num, maker=with_specials(), dtypes=("float32", "float64", "int32"),
       out_dtype=None, tol=DEFAULT_TOL, upcast=False, differentiable=False,
       notes="finite differences cannot cross the huge replacement values; see nan_to_num[finite]"),
    _u("numpy.nan_to_num[finite]", np.nan_to_num, path="numpy.nan_to_num", dtypes=("float32",), out_dtype=None,
       tol=DEFAULT_TOL),
    _u("numpy.logical_not", np.logical_not, dtypes=("bool", "int32", "float32"), out_dtype=None),
    _u("numpy.invert", np.invert, dtypes=("bool", "int32", "int8", "uint8"), out_dtype=None),
    _u("numpy.conjugate", np.conjugate, dtypes=FI, out_dtype=None, tol=DEFAULT_TOL),
    _u("numpy.real", np.real, dtypes=FI, out_dtype=None, tol=DEFAULT_TOL),
    OpRecord(
        name="numpy.clip",
        ref=np.clip,
        args_maker=uniform(),
        dtypes=FI,
        cases=_cases(
            (((3, 4),), (-1.0, 1.5), {}),
            (((5,),), (), {"min": -1}),
            (((5,),), (), {"max": 2}),
            (((),), (0, 1), {}),
        ),
    ),
    OpRecord(
        name="numpy.clip[arrays]",
        path="numpy.clip",
        ref=lambda x, lo, hi: np.clip(x, lo, hi),
        args_maker=lambda rng, shapes, dt: [_rand(rng, shapes[0], dt, -3, 3), _rand(rng, shapes[1], dt, -3, -1),
                                            _rand(rng, shapes[2], dt, 1, 3)],
        dtypes=("float32", "int32"),
        cases=cases_from_shapes([((3, 4), (4,), (3, 1)), ((5,), (), ())]),
    ),
    OpRecord(
        name="numpy.round",
        ref=np.round,
        args_maker=uniform(),
        dtypes=("int32",),
        cases=_cases((((3, 4),), {})),
        differentiable=False,
        notes="float rounding arrives with lax.round",
    ),
    # ---- elementwise binary
    _b("numpy.subtract", np.subtract, dtypes=FI16),
    _b("numpy.multiply", np.multiply, dtypes=FI16 + ("bool",)),
    _b("numpy.add", np.add, dtypes=FI16 + ("uint8",)),
    _b("numpy.divide", np.divide, maker=nonzero_second(), dtypes=FI, out_dtype=_inexact_out),
    _b("numpy.minimum", np.minimum, dtypes=FI16 + ("bool",)),
    _b("numpy.hypot", np.hypot, dtypes=FI, out_dtype=_inexact_out),
    _b("numpy.logaddexp", np.logaddexp, dtypes=FI, out_dtype=_inexact_out, tol=T),
    _b("numpy.logaddexp2", np.logaddexp2, dtypes=F32_F64, out_dtype=_inexact_out, tol=T),
    _b("numpy.heaviside", _heaviside, dtypes=F32_F64, out_dtype=_inexact_out),
    _b("numpy.fmax", np.fmax, maker=some_nans(), dtypes=FI),
    _b("numpy.fmin", np.fmin, maker=some_nans(), dtypes=FI),
    _b("numpy.float_power", np.float_power, maker=positive(0.5, 2.0), dtypes=F32_F64,
       out_dtype=canonical_out, tol=T),
    _b("numpy.power", np.power, maker=int_power_args, dtypes=("float32", "float64", "int32", "int8"), tol=T),
    _b("numpy.copysign", np.copysign, maker=nonzero(), dtypes=F32_F64),
    _b("numpy.floor_divide", np.floor_divide, maker=nonzero_second(), dtypes=("int32", "int8", "uint8"),
       differentiable=False),
    _b("numpy.remainder", np.remainder, maker=nonzero_second(), dtypes=("int32", "int8", "uint8")),
    _b("numpy.fmod", np.fmod, maker=nonzero_second(), dtypes=("int32", "int8")),
    OpRecord(
        name="numpy.divmod[1]",
        path="_jnp_table_adapters.divmod_k",
        ref=NPA.divmod_k,
        args_maker=nonzero_second(),
        dtypes=("int32",),
        cases=cases_from_shapes([((5,), (5,)), ((3, 4), (4,))], k=1),
    ),
    _b("numpy.equal", np.equal, dtypes=FB, differentiable=False),
    _b("numpy.not_equal", np.not_equal, dtypes=FB, differentiable=False),
    _b("numpy.less", np.less, dtypes=FI, differentiable=False),
    _b("numpy.greater_equal", np.greater_equal, dtypes=FI, differentiable=False),
    _b("numpy.logical_and", np.logical_and, dtypes=("bool", "int32", "float32")),
    _b("numpy.logical_or", np.logical_or, dtypes=("bool", "int32", "float32")),
    _b("numpy.logical_xor", np.logical_xor, dtypes=("bool", "int32", "float32")),
    _b("numpy.bitwise_and[bool]", np.bitwise_and, dtypes=("bool",), path="numpy.bitwise_and"),
    _b("numpy.bitwise_or[bool]", np.bitwise_or, dtypes=("bool",), path="numpy.bitwise_or"),
    _b("numpy.bitwise_xor[bool]", np.bitwise_xor, dtypes=("bool",), path="numpy.bitwise_xor"),
    _b("numpy.isclose", np.isclose, maker=with_specials(), dtypes=("float32", "int32"), differentiable=False),
    OpRecord(
        name="numpy.isclose[near]",
        path="numpy.isclose",
        ref=np.isclose,
        args_maker=lambda rng, shapes, dt: (lambda a: [a, (a * (1 + rng.choice([0, 1e-6, 1e-3], size=a.shape))
                                                          ).astype(dt)])(_rand(rng, shapes[0], dt, -3, 3)),
        dtypes=("float32", "float64"),
        cases=cases_from_shapes([((20,), (20,)), ((3, 4), (3, 4))])
        + cases_from_shapes([((20,), (20,))], rtol=1e-2, atol=0.0),
        differentiable=False,
    ),
    OpRecord(
        name="numpy.allclose",
        ref=np.allclose,
        args_maker=with_specials(),
        dtypes=("float32",),
        cases=cases_from_shapes([((5,), (5,)), ((3, 4), (4,))]) + cases_from_shapes([((5,), (5,))], equal_nan=True),
        differentiable=False,
    ),
    OpRecord(
        name="numpy.allclose[same]",
        path="numpy.allclose",
        ref=np.allclose,
        args_maker=lambda rng, shapes, dt: [np.arange(6, dtype=dt).reshape(shapes[0])] * 2,
        dtypes=("float32", "int32"),
        cases=cases_from_shapes([((2, 3), (2, 3))]),
        differentiable=False,
    ),
    OpRecord(
        name="numpy.array_equal",
        ref=np.array_equal,
        args_maker=lambda rng, shapes, dt: [np.ones(shapes[0], dt), np.ones(shapes[1], dt)],
        dtypes=("float32", "int32", "bool"),
        cases=cases_from_shapes([((5,), (5,)), ((3, 4), (3, 4)), ((3,), (4,))]),
        differentiable=False,
    ),
    OpRecord(
        name="numpy.array_equal[diff]",
        path="numpy.array_equal",
        ref=np.array_equal,
        args_maker=uniform(),
        dtypes=("float32", "int32"),
        cases=cases_from_shapes([((5,), (5,))]),
        differentiable=False,
    ),
    # ---- reductions
    OpRecord(name="numpy.sum[where]", path="_jnp_table_adapters.sum_where", ref=lambda x, m, **kw: np.sum(x, where=m, **kw),
             args_maker=mask_second(), dtypes=("float32", "float64", "int32"),
             cases=_cases((((3, 4), (3, 4)), {}), (((3, 4), (3, 4)), {"axis": 0}), (((3, 4), (4,)), {"axis": 1})),
             tol=ACCUM_TOL, out_dtype=_sum_like),
    OpRecord(name="numpy.sum[kw]", path="numpy.sum", ref=np.sum, args_maker=uniform(),
             dtypes=("float32", "int8", "uint8"),
             cases=_cases((((3, 4),), {"initial": 2}), (((3, 4),), {"axis": 1, "dtype": np.dtype("float32")})),
             tol=ACCUM_TOL, out_dtype=None),
    OpRecord(name="numpy.mean", ref=np.mean, args_maker=uniform(), dtypes=FI16, cases=EMPTY_OK_CASES[:-2],
             tol=ACCUM_TOL, out_dtype=_float_like),
    OpRecord(name="numpy.mean[where]", path="_jnp_table_adapters.mean_where", ref=lambda x, m, **kw: np.mean(x, where=m, **kw),
             args_maker=lambda rng, shapes, dt: [_rand(rng, shapes[0], dt, -3, 3),
                                                 np.arange(np.prod(shapes[1])).reshape(shapes[1]) % 3 != 1],
             dtypes=("float32", "float64"), cases=_cases((((3, 4), (3, 4)), {"axis": 1}), (((3, 4), (4,)), {})),
             tol=ACCUM_TOL, out_dtype=_float_like),
    OpRecord(name="numpy.var", ref=np.var, args_maker=uniform(), dtypes=FI,
             cases=REDUCE_CASES[:6] + _cases((((3, 4),), {"axis": 0, "ddof": 1})),
             tol=ACCUM_TOL, out_dtype=_float_like),
    OpRecord(name="numpy.std", ref=np.std, args_maker=uniform(), dtypes=FI,
             cases=REDUCE_CASES[:6] + _cases((((3, 4),), {"axis": 1, "ddof": 1})),
             tol=ACCUM_TOL, out_dtype=_float_like),
    OpRecord(name="numpy.max", ref=np.max, args_maker=uniform(), dtypes=FI16 + ("bool", "uint8"),
             cases=REDUCE_CASES + _cases((((3, 4),), {"axis": 0, "initial": 1})), out_dtype=None),
    OpRecord(name="numpy.min", ref=np.min, args_maker=uniform(), dtypes=FI16 + ("bool", "uint8", "int8"),
             cases=REDUCE_CASES + _cases((((3, 4),), {"axis": 1, "initial": 2})), out_dtype=None),
    OpRecord(name="numpy.max[where]", path="_jnp_table_adapters.max_where", ref=lambda x, m, **kw: np.max(x, where=m, **kw),
             args_maker=mask_second(), dtypes=("float32", "int32"),
             cases=_cases((((3, 4), (3, 4)), {"axis": 1, "initial": -2}), (((3, 4), (4,)), {"initial": 0}))),
    OpRecord(name="numpy.min[where]", path="_jnp_table_adapters.min_where", ref=lambda x, m, **kw: np.min(x, where=m, **kw),
             args_maker=mask_second(), dtypes=("float32", "int32"),
             cases=_cases((((3, 4), (3, 4)), {"axis": 0, "initial": 2}),)),
    OpRecord(name="numpy.ptp", ref=np.ptp, args_maker=uniform(), dtypes=FI,
             cases=REDUCE_CASES[:5], out_dtype=None),
    OpRecord(name="numpy.argmax", ref=np.argmax, args_maker=some_nans(), dtypes=FI16 + ("uint8", "bool"),
             cases=_cases((((3, 4),), {}), (((3, 4),), {"axis": 0}), (((3, 4),), {"axis": -1}),
                          (((2, 3, 4),), {"axis": 1, "keepdims": True}), (((5,),), {}), (((),), {})),
             out_dtype=default_int_out, differentiable=False),
    OpRecord(name="numpy.argmin", ref=np.argmin, args_maker=uniform(), dtypes=FI16 + ("int8",),
             cases=_cases((((3, 4),), {}), (((3, 4),), {"axis": 0}), (((3, 4),), {"axis": 1, "keepdims": True}),
                          (((5,),), {})),
             out_dtype=default_int_out, differentiable=False),
    OpRecord(name="numpy.argmax[ties]", path="numpy.argmax", ref=np.argmax,
             args_maker=uniform(-1, 1), dtypes=("int32", "int8"),
             cases=_cases((((4, 6),), {"axis": 1}), (((4, 6),), {"axis": 0})), out_dtype=default_int_out),
    OpRecord(name="numpy.any", ref=np.any, args_maker=uniform(-1, 1), dtypes=("bool", "int32", "float32"),
             cases=EMPTY_OK_CASES, out_dtype=None),
    OpRecord(name="numpy.all", ref=np.all, args_maker=uniform(0, 2), dtypes=("bool", "int32", "float32"),
             cases=EMPTY_OK_CASES, out_dtype=None),
    OpRecord(name="numpy.count_nonzero", ref=np.count_nonzero, args_maker=uniform(-1, 1),
             dtypes=("bool", "int32", "float32"),
             cases=_cases((((3, 4),), {}), (((3, 4),), {"axis": 0}), (((3, 4),), {"axis": 1, "keepdims": True})),
             out_dtype=default_int_out),
    OpRecord(name="numpy.average", path="_jnp_table_adapters.average", ref=lambda a, w, **kw: np.average(a, weights=w, **kw),
             args_maker=weights_second, dtypes=("float32", "float64"),
             cases=_cases((((3, 4), (3, 4)), {}), (((3, 4), (3, 4)), {"axis": 0}), (((3, 4), (4,)), {"axis": 1}),
                          (((3, 4), (3,)), {"axis": 0, "keepdims": True})),
             tol=ACCUM_TOL),
    OpRecord(name="numpy.average[noweights]", path="numpy.average", ref=np.average, args_maker=uniform(),
             dtypes=("float32", "int32"), cases=_cases((((3, 4),), {}), (((3, 4),), {"axis": 1})),
             tol=ACCUM_TOL, out_dtype=_float_like),
    OpRecord(name="numpy.average[returned]", path="_jnp_table_adapters.average_returned",
             ref=NPA.average_returned, args_maker=weights_second, dtypes=("float32",),
             cases=_cases((((3, 4), (4,)), {"axis": 1, "k": 0}), (((3, 4), (4,)), {"axis": 1, "k": 1})),
             tol=ACCUM_TOL),
    OpRecord(name="numpy.nansum", ref=np.nansum, args_maker=some_nans(), dtypes=FI, cases=REDUCE_CASES[:5],
             tol=ACCUM_TOL, out_dtype=_sum_like),
    OpRecord(name="numpy.nanmean", ref=np.nanmean, args_maker=some_nans(), dtypes=F32_F64,
             cases=REDUCE_CASES[:5], tol=ACCUM_TOL),
    OpRecord(name="numpy.nanmax", ref=np.nanmax, args_maker=some_nans(), dtypes=FI, cases=REDUCE_CASES[:5]),
    OpRecord(name="numpy.nanmin", ref=np.nanmin, args_maker=some_nans(), dtypes=FI, cases=REDUCE_CASES[:5]),
    OpRecord(name="numpy.nanvar", ref=np.nanvar, args_maker=some_nans(), dtypes=F32_F64,
             cases=REDUCE_CASES[:4], tol=ACCUM_TOL),
    OpRecord(name="numpy.nanargmax", ref=np.nanargmax, args_maker=some_nans(), dtypes=("float32",),
             cases=_cases((((3, 4),), {"axis": 1}), (((5,),), {})), out_dtype=default_int_out),
    OpRecord(name="numpy.cumsum", ref=np.cumsum, args_maker=uniform(), dtypes=FI + ("int8", "bool"),
             cases=_cases((((3, 4),), {}), (((3, 4),), {"axis": 0}), (((3, 4),), {"axis": 1}), (((5,),), {}),
                          (((0,),), {}), (((2, 3, 4),), {"axis": -2})),
             tol=ACCUM_TOL, out_dtype=_sum_like),
    OpRecord(name="numpy.nancumsum", ref=np.nancumsum, args_maker=some_nans(), dtypes=("float32",),
             cases=_cases((((3, 4),), {"axis": 1}),), tol=ACCUM_TOL),
    OpRecord(name="numpy.diff", ref=np.diff, args_maker=uniform(), dtypes=FI + ("bool",),
             cases=_cases((((5,),), {}), (((3, 4),), {"axis": 0}), (((3, 4),), {"n": 2}), (((3, 4),), {"n": 0}),
                          (((1,),), {}))),
    OpRecord(name="numpy.trace", ref=np.trace, args_maker=uniform(), dtypes=FI,
             cases=_cases((((3, 3),), {}), (((3, 4),), {"offset": 1}), (((4, 3),), {"offset": -1}),
                          (((2, 3, 3),), {"axis1": 1, "axis2": 2})),
             tol=ACCUM_TOL, out_dtype=_sum_like),
    # ---- creation
    OpRecord(name="numpy.linspace", ref=np.linspace, args_maker=no_args, dtypes=("float32", "float64"),
             cases=_cases(((), (0.0, 1.0), {"num": 5, "dtype": DTYPE}), ((), (-2.0, 3.0, 7), {"dtype": DTYPE}),
                          ((), (0.0, 1.0), {"num": 4, "endpoint": False, "dtype": DTYPE}),
                          ((), (1.0, 1.0, 1), {"dtype": DTYPE}), ((), (0, 10, 0), {"dtype": DTYPE}),
                          ((), (0.0, 10.0), {"num": 11})),
             differentiable=False),
    OpRecord(name="numpy.linspace[arrays]", path="_jnp_table_adapters.linspace_arr", ref=NPA.linspace_arr,
             args_maker=uniform(), dtypes=("float32", "float64"),
             cases=_cases((((), ()), {"num": 5}), (((3,), (3,)), {"num": 4}), (((2,), ()), {"num": 3, "axis": 1}),
                          (((), ()), {"num": 4, "endpoint": False}))),
    OpRecord(name="numpy.logspace", ref=np.logspace, args_maker=no_args, dtypes=("float32", "float64"),
             cases=_cases(((), (0.0, 2.0), {"num": 5, "dtype": DTYPE}), ((), (0.0, 3.0, 4), {"base": 2.0})),
             tol=T, differentiable=False),
    OpRecord(name="numpy.eye", ref=np.eye, args_maker=no_args, dtypes=("float32", "int32", "bool"),
             cases=_cases(((), (3,), {"dtype": DTYPE}), ((), (3, 4), {"dtype": DTYPE}),
                          ((), (4, 3), {"k": -1, "dtype": DTYPE}), ((), (3,), {"k": 2, "dtype": DTYPE}),
                          ((), (0,), {"dtype": DTYPE}), ((), (2,), {})),
             differentiable=False),
    OpRecord(name="numpy.identity", ref=np.identity, args_maker=no_args, dtypes=("float32", "int32"),
             cases=_cases(((), (3,), {"dtype": DTYPE}), ((), (1,), {})), differentiable=False),
    OpRecord(name="numpy.tri", ref=np.tri, args_maker=no_args, dtypes=("float32", "int32"),
             cases=_cases(((), (3,), {"dtype": DTYPE}), ((), (3, 4, 1), {"dtype": DTYPE}),
                          ((), (4, 3), {"k": -1, "dtype": DTYPE})),
             differentiable=False),
    OpRecord(name="numpy.meshgrid", path="_jnp_table_adapters.meshgrid", ref=NPA.meshgrid,
             args_maker=uniform(), dtypes=("float32", "int32"),
             cases=_cases((((3,), (4,)), {"k": 0}), (((3,), (4,)), {"k": 1}),
                          (((3,), (4,)), {"k": 0, "indexing": "ij"}), (((2,), (3,), (4,)), {"k": 2}))),
    OpRecord(name="numpy.full", ref=np.full, args_maker=no_args, dtypes=("float32", "int32", "bool"),
             cases=_cases(((), ((2, 3), 1), {"dtype": DTYPE}), ((), (3, 0), {"dtype": DTYPE})),
             differentiable=False),
    OpRecord(name="numpy.full_like", ref=np.full_like, args_maker=uniform(), dtypes=("float32", "int32"),
             cases=_cases((((3, 4),), (2,), {}),)),
    OpRecord(name="numpy.zeros_like", ref=np.zeros_like, args_maker=uniform(), dtypes=FB,
             cases=_cases((((3, 4),), {}), (((),), {}))),
    OpRecord(name="numpy.ones_like", ref=np.ones_like, args_maker=uniform(), dtypes=FB,
             cases=_cases((((3, 4),), {}), (((5,),), {"dtype": np.dtype("int32")}))),
    OpRecord(name="numpy.empty", ref=np.zeros, args_maker=no_args, dtypes=("float32",),
             cases=_cases(((), ((2, 3),), {}),), differentiable=False),
    # ---- shape manipulation
    OpRecord(name="numpy.moveaxis", ref=np.moveaxis, args_maker=uniform(), dtypes=("float32", "int32"),
             cases=_cases((((2, 3, 4),), (0, -1), {}), (((2, 3, 4),), ((0, 1), (2, 0)), {}),
                          (((3, 4),), (1, 0), {}))),
    OpRecord(name="numpy.broadcast_to", ref=np.broadcast_to, args_maker=uniform(), dtypes=FB,
             cases=_cases((((3,),), ((2, 3),), {}), (((),), ((2, 2),), {}), (((3, 1),), ((2, 3, 4),), {}))),
    OpRecord(name="numpy.broadcast_arrays", path="_jnp_table_adapters.broadcast_arrays", ref=NPA.broadcast_arrays,
             args_maker=uniform(), dtypes=("float32",),
             cases=_cases((((3, 1), (4,)), {"k": 0}), (((3, 1), (4,)), {"k": 1}))),
    OpRecord(name="numpy.atleast_1d", ref=np.atleast_1d, args_maker=uniform(), dtypes=("float32",),
             cases=cases_from_shapes([((),), ((3,),), ((2, 3),)])),
    OpRecord(name="numpy.atleast_2d", ref=np.atleast_2d, args_maker=uniform(), dtypes=("float32",),
             cases=cases_from_shapes([((),), ((3,),), ((2, 3),)])),
    OpRecord(name="numpy.atleast_3d", ref=np.atleast_3d, args_maker=uniform(), dtypes=("float32",),
             cases=cases_from_shapes([((),), ((3,),), ((2, 3),), ((2, 3, 4),)])),
    OpRecord(name="numpy.flip", ref=np.flip, args_maker=uniform(), dtypes=FB,
             cases=_cases((((5,),), {}), (((3, 4),), {"axis": 0}), (((3, 4),), {"axis": 1}), (((3, 4),), {}),
                          (((2, 3, 4),), {"axis": (0, 2)}), (((0,),), {}))),
    OpRecord(name="numpy.fliplr", ref=np.fliplr, args_maker=uniform(), dtypes=("float32",),
             cases=cases_from_shapes([((3, 4),)])),
    OpRecord(name="numpy.flipud", ref=np.flipud, args_maker=uniform(), dtypes=("float32",),
             cases=cases_from_shapes([((3, 4),), ((5,),)])),
    OpRecord(name="numpy.rot90", ref=np.rot90, args_maker=uniform(), dtypes=("float32",),
             cases=_cases((((3, 4),), {}), (((3, 4),), {"k": 2}), (((3, 4),), {"k": 3}),
                          (((2, 3, 4),), {"axes": (1, 2)}))),
    OpRecord(name="numpy.concatenate", path="_jnp_table_adapters.concatenate", ref=NPA.concatenate,
             args_maker=uniform(), dtypes=FB,
             cases=_cases((((3,), (4,)), {}), (((2, 3), (4, 3)), {}), (((3, 2), (3, 1), (3, 4)), {"axis": 1}),
                          (((2, 3), (0, 3)), {}), (((5,),), {}), (((2, 3), (2, 3)), {"axis": -1}))),
    OpRecord(name="numpy.stack", path="_jnp_table_adapters.stack", ref=NPA.stack, args_maker=uniform(),
             dtypes=("float32", "int32"),
             cases=_cases((((3,), (3,)), {}), (((3,), (3,), (3,)), {"axis": 1}), (((2, 3), (2, 3)), {"axis": -1}),
                          (((), ()), {}))),
    OpRecord(name="numpy.hstack", path="_jnp_table_adapters.hstack", ref=NPA.hstack, args_maker=uniform(),
             dtypes=("float32",), cases=cases_from_shapes([((3,), (2,)), ((2, 3), (2, 1)), ((), ())])),
    OpRecord(name="numpy.vstack", path="_jnp_table_adapters.vstack", ref=NPA.vstack, args_maker=uniform(),
             dtypes=("float32",), cases=cases_from_shapes([((3,), (3,)), ((2, 3), (1, 3))])),
    OpRecord(name="numpy.dstack", path="_jnp_table_adapters.dstack", ref=NPA.dstack, args_maker=uniform(),
             dtypes=("float32",), cases=cases_from_shapes([((3,), (3,)), ((2, 3), (2, 3))])),
    OpRecord(name="numpy.column_stack", path="_jnp_table_adapters.column_stack", ref=NPA.column_stack,
             args_maker=uniform(), dtypes=("float32",), cases=cases_from_shapes([((3,), (3,)), ((3, 2), (3,))])),
    OpRecord(name="numpy.split", path="_jnp_table_adapters.split", ref=NPA.split, args_maker=uniform(),
             dtypes=("float32", "int32"),
             cases=_cases((((6,),), (3,), {"k": 1}), (((4, 6),), (2,), {"axis": 1, "k": 1}),
                          (((6,),), ([1, 4],), {"k": 2}), (((6, 2),), ([2, 2],), {"k": 1}))),
    OpRecord(name="numpy.array_split", path="_jnp_table_adapters.array_split", ref=NPA.array_split,
             args_maker=uniform(), dtypes=("float32",),
             cases=_cases((((7,),), (3,), {"k": 0}), (((7,),), (3,), {"k": 2}))),
    OpRecord(name="numpy.tile", ref=np.tile, args_maker=uniform(), dtypes=FB,
             cases=_cases((((3,),), (2,), {}), (((2, 3),), ((2, 1),), {}), (((3,),), ((2, 2),), {}),
                          (((),), (3,), {}), (((2, 3),), (0,), {}))),
    OpRecord(name="numpy.repeat", ref=np.repeat, args_maker=uniform(), dtypes=FB,
             cases=_cases((((3,),), (2,), {}), (((2, 3),), (2,), {"axis": 1}), (((2, 3),), (3,), {}),
                          (((3,),), ([1, 0, 2],), {}), (((2, 3),), ([2, 1],), {"axis": 0}))),
    OpRecord(name="numpy.roll", ref=np.roll, args_maker=uniform(), dtypes=FB,
             cases=_cases((((5,),), (2,), {}), (((3, 4),), (-1,), {"axis": 1}), (((3, 4),), (5,), {}),
                          (((3, 4),), ((1, 2),), {"axis": (0, 1)}), (((3, 4),), (0,), {"axis": 0}))),
    OpRecord(name="numpy.pad", ref=np.pad, args_maker=uniform(), dtypes=FI,
             cases=_cases((((3,),), (2,), {}), (((3, 4),), (((1, 0), (0, 2)),), {"constant_values": 7}),
                          (((3, 4),), (1,), {"mode": "edge"}), (((3, 4),), (((2, 1), (3, 0)),), {"mode": "reflect"}),
                          (((3, 4),), (2,), {"mode": "symmetric"}), (((3, 4),), (((1, 5), (0, 1)),), {"mode": "wrap"}),
                          (((0, 2),), (1,), {}))),
    OpRecord(name="numpy.tril", ref=np.tril, args_maker=uniform(), dtypes=FB,
             cases=_cases((((3, 4),), {}), (((4, 3),), {"k": 1}), (((2, 3, 3),), {"k": -1}))),
    OpRecord(name="numpy.triu", ref=np.triu, args_maker=uniform(), dtypes=FB,
             cases=_cases((((3, 4),), {}), (((4, 3),), {"k": -1}), (((2, 3, 3),), {"k": 2}))),
    OpRecord(name="numpy.diag", ref=np.diag, args_maker=uniform(), dtypes=FB,
             cases=_cases((((3,),), {}), (((3,),), {"k": 1}), (((3,),), {"k": -2}), (((3, 4),), {}),
                          (((3, 4),), {"k": 1}), (((4, 3),), {"k": -2}), (((0,),), {}))),
    OpRecord(name="numpy.diagonal", ref=np.diagonal, args_maker=uniform(), dtypes=FB,
             cases=_cases((((3, 4),), {}), (((3, 4),), {"offset": 2}), (((2, 3, 4),), {"axis1": 1, "axis2": 2}),
                          (((2, 3, 4),), {"offset": -1, "axis1": 2, "axis2": 0}), (((3, 4),), {"offset": 5}))),
    OpRecord(name="numpy.take", ref=np.take, args_maker=uniform(), dtypes=FB,
             cases=_cases((((5,),), ([0, 3, 3, 1],), {}), (((3, 4),), ([2, 0],), {"axis": 1}),
                          (((3, 4),), ([[0, 1], [2, 2]],), {"axis": 0}), (((3, 4),), ([-1, 5],), {"mode": "clip"}),
                          (((3, 4),), ([-1, 5],), {"mode": "wrap", "axis": 1}))),
    # ---- linear algebra
    OpRecord(name="numpy.tensordot", ref=np.tensordot, args_maker=uniform(-2, 2), dtypes=FI,
             cases=_cases((((3, 4), (4, 5)), (1,), {}), (((2, 3, 4), (3, 4, 5)), (), {}),
                          (((3, 4), (5, 3)), ((0, 1),), {}), (((2, 3, 4), (4, 2)), (((0, 2), (1, 0)),), {}),
                          (((3,), (4,)), (0,), {})),
             tol=ACCUM_TOL),
    OpRecord(name="numpy.einsum", path="_jnp_table_adapters.einsum", ref=NPA.einsum, args_maker=uniform(-2, 2),
             dtypes=FI,
             cases=_cases((((3, 4), (4, 5)), {"subscripts": "ij,jk->ik"}),
                          (((3, 4), (4, 5), (5, 2)), {"subscripts": "ij,jk,kl->il"}),
                          (((3, 4),), {"subscripts": "ij->ji"}), (((3, 3),), {"subscripts": "ii->i"}),
                          (((3, 3),), {"subscripts": "ii"}), (((3, 4),), {"subscripts": "ij->"}),
                          (((3, 4), (3, 4)), {"subscripts": "ij,ij->i"}), (((3,), (4,)), {"subscripts": "i,j"}),
                          (((2, 3, 4), (2, 4, 5)), {"subscripts": "bij,bjk->bik"}),
                          (((2, 3, 4), (4, 5)), {"subscripts": "...j,jk->...k"}),
                          (((3, 4), (4,), (4, 2), (2,)), {"subscripts": "ij,j,jk,k->i"}),
                          (((2, 3), (3, 2)), {"subscripts": "ij,ji"})),
             tol=ACCUM_TOL),
    OpRecord(name="numpy.kron", ref=np.kron, args_maker=uniform(), dtypes=FI,
             cases=cases_from_shapes([((2, 3), (3, 2)), ((3,), (2,)), ((2, 2), (3,)), ((), (3,))])),
    OpRecord(name="numpy.outer", ref=np.outer, args_maker=uniform(), dtypes=FI,
             cases=cases_from_shapes([((3,), (4,)), ((2, 2), (3,))])),
    OpRecord(name="numpy.inner", ref=np.inner, args_maker=uniform(), dtypes=FI,
             cases=cases_from_shapes([((4,), (4,)), ((3, 4), (2, 4)), ((), (3,))]), tol=ACCUM_TOL),
    OpRecord(name="numpy.vdot", ref=np.vdot, args_maker=uniform(), dtypes=FI,
             cases=cases_from_shapes([((4,), (4,)), ((2, 3), (3, 2))]), tol=ACCUM_TOL),
    OpRecord(name="numpy.cross", ref=np.cross, args_maker=uniform(), dtypes=("float32", "float64"),
             cases=cases_from_shapes([((3,), (3,)), ((4, 3), (4, 3)), ((2, 3), (3,))])),
    OpRecord(name="numpy.linalg.norm", ref=_norm, args_maker=uniform(), dtypes=F32_F64,
             cases=_cases((((5,),), {}), (((5,),), {"ord": 1}), (((5,),), {"ord": np.inf}),
                          (((5,),), {"ord": -np.inf}), (((5,),), {"ord": 3}), (((3, 4),), {}),
                          (((3, 4),), {"ord": "fro"}), (((3, 4),), {"ord": 1}), (((3, 4),), {"ord": np.inf}),
                          (((3, 4),), {"axis": 1}), (((2, 3, 4),), {"axis": (1, 2), "keepdims": True}),
                          (((3, 4),), {"ord": -1}), (((3, 4),), {"axis": 0, "ord": 2})),
             tol=ACCUM_TOL),
    OpRecord(name="numpy.linalg.matrix_power", ref=np.linalg.matrix_power, args_maker=uniform(-1, 1),
             dtypes=("float32", "float64", "int32"),
             cases=_cases((((3, 3),), (0,), {}), (((3, 3),), (1,), {}), (((3, 3),), (5,), {}),
                          (((2, 3, 3),), (2,), {})),
             tol=ACCUM_TOL),
    # ---- jax.nn
    _u("nn.relu", lambda x: np.maximum(x, 0), dtypes=FI, out_dtype=None, tol=DEFAULT_TOL),
    _u("nn.relu6", lambda x: np.minimum(np.maximum(x, 0), 6), maker=uniform(-3, 9), dtypes=("float32", "float64"),
       out_dtype=None, tol=DEFAULT_TOL),
    _u("nn.sigmoid", _sigmoid, dtypes=FI),
    _u("nn.softplus", _softplus, dtypes=F32_F64),
    _u("nn.log_sigmoid", lambda x: -_softplus(-x), dtypes=F32_F64),
    _u("nn.silu", lambda x: x * _sigmoid(x), dtypes=F32_F64),
    _u("nn.gelu", _gelu_tanh, dtypes=F32_F64),
    _u("nn.elu", _elu, dtypes=F32_F64),
    _u("nn.celu", _celu, dtypes=F32_F64),
    _u("nn.selu", _selu, dtypes=F32_F64),
    _u("nn.leaky_relu", lambda x: np.where(x >= 0, x, 0.01 * x), dtypes=F32_F64, tol=DEFAULT_TOL),
    _u("nn.hard_tanh", lambda x: np.clip(x, -1, 1), dtypes=F32_F64, tol=DEFAULT_TOL),
    _u("nn.soft_sign", lambda x: x / (np.abs(x) + 1), dtypes=F32_F64, tol=DEFAULT_TOL),
    OpRecord(name="nn.softmax", ref=_softmax, args_maker=uniform(), dtypes=F32_F64,
             cases=_cases((((3, 4),), {}), (((3, 4),), {"axis": 0}), (((5,),), {}), (((2, 3, 4),), {"axis": 1})),
             tol=T),
    OpRecord(name="nn.log_softmax", ref=_log_softmax, args_maker=uniform(), dtypes=F32_F64,
             cases=_cases((((3, 4),), {}), (((3, 4),), {"axis": 0}), (((5,),), {})), tol=T),
    OpRecord(name="nn.logsumexp", ref=_logsumexp, args_maker=uniform(), dtypes=F32_F64,
             cases=_cases((((3, 4),), {}), (((3, 4),), {"axis": 1}), (((3, 4),), {"axis": 0, "keepdims": True}),
                          (((5,),), {})), tol=T),
    OpRecord(name="nn.glu", ref=_glu, args_maker=uniform(), dtypes=F32_F64,
             cases=_cases((((3, 4),), {}), (((4, 3),), {"axis": 0})), tol=T),
    OpRecord(name="nn.standardize", ref=_standardize, args_maker=uniform(), dtypes=F32_F64,
             cases=_cases((((3, 4),), {}), (((3, 4),), {"axis": 0})), tol=ACCUM_TOL),
    OpRecord(name="nn.one_hot", ref=_one_hot, args_maker=labels(4), dtypes=("int32", "int8", "uint8"),
             cases=_cases((((5,),), (4,), {}), (((2, 3),), (4,), {}), (((5,),), (3,), {"axis": 0}), (((),), (4,), {})),
             out_dtype=lambda dt, x64: np.dtype("float64" if x64 else "float32")),
    # ---- jax.scipy.special
    OpRecord(name="scipy.special.logsumexp", ref=_logsumexp, args_maker=uniform(), dtypes=("float32", "float64",
                                                                                           "int32"),
             cases=_cases((((3, 4),), {}), (((3, 4),), {"axis": 1}), (((),), {})), tol=T,
             out_dtype=_inexact_out),
    _u("scipy.special.expit", _sigmoid, dtypes=FI),
    _u("scipy.special.logit", lambda p: np.log(p / (1 - p)), maker=uniform(0.05, 0.95), dtypes=F32_F64),
    _b("scipy.special.xlogy", _xlogy, maker=positive(0.1, 3.0), dtypes=F32_F64, out_dtype=_inexact_out, tol=T),
    _b("scipy.special.xlog1py", _xlog1py, maker=positive(0.1, 3.0), dtypes=F32_F64, out_dtype=_inexact_out,
       tol=T),
    _u("scipy.special.entr", _entr, maker=positive(0.1, 3.0), dtypes=F32_F64),
)


# ----------------------------------------------------------------- rounding, integer operators, special functions


def _erfinv_ref(y):
    """Inverse of math.erf by Newton iterations in float64."""
    y = np.asarray(y, np.float64)
    x = np.zeros_like(y)
    erf = np.vectorize(math.erf, otypes=[np.float64])
    for _ in range(60):
        x = x - (erf(x) - y) / (2 / np.sqrt(np.pi) * np.exp(-x * x))
    return x


def _digamma_ref(x):
    x = np.asarray(x, np.float64).copy()
    acc = np.zeros_like(x)
    while np.any(x < 14):
        small = x < 14
        acc = acc - np.where(small, 1 / x, 0)
        x = np.where(small, x + 1, x)
    x2 = 1 / (x * x)
    return acc + np.log(x) - 0.5 / x - x2 * (1 / 12 - x2 * (1 / 120 - x2 * (1 / 252 - x2 * (1 / 240 - x2 / 132))))


_erf_ref = np.vectorize(math.erf, otypes=[np.float64])
_lgamma_ref = np.vectorize(math.lgamma, otypes=[np.float64])


def _gelu_exact(x):
    return 0.5 * x * (1 + _erf_ref(x / np.sqrt(2)))


def _round_half_even_away_safe(rng, shapes, dtype):
    """Values away from the .5 ties (NumPy rounds ties to even, as JAX)."""
    out = []
    for s in shapes:
        a = _rand(rng, s, dtype, -4, 4)
        if is_float(dtype):
            frac = np.abs(a - np.trunc(a))
            a = np.where(np.abs(frac - 0.5) < 0.02, a + 0.1, a).astype(dtype)
        out.append(a)
    return out


def _halves(rng, shapes, dtype):
    return [(rng.integers(-8, 8, size=tuple(s)) / 2).astype(dtype) for s in shapes]


def _shift_args(rng, shapes, dtype):
    bits = np.dtype(dtype).itemsize * 8
    return [_rand(rng, shapes[0], dtype, -100, 100), _rand(rng, shapes[1], dtype, 0, bits - 1)]


_ROUNDING_AND_SPECIAL_RECORDS = (
    _u("numpy.floor", np.floor, maker=_round_half_even_away_safe, dtypes=FI16, out_dtype=None, tol=DEFAULT_TOL,
       differentiable=False),
    _u("numpy.ceil", np.ceil, maker=_round_half_even_away_safe, dtypes=FI16, out_dtype=None, tol=DEFAULT_TOL,
       differentiable=False),
    _u("numpy.trunc", np.trunc, maker=_round_half_even_away_safe, dtypes=FI, out_dtype=None, tol=DEFAULT_TOL,
       differentiable=False),
    _u("numpy.rint", np.rint, maker=_round_half_even_away_safe, dtypes=FI, out_dtype=None, tol=DEFAULT_TOL,
       differentiable=False),
    _u("numpy.round[float]", np.round, path="numpy.round", maker=_round_half_even_away_safe, dtypes=FI16,
       out_dtype=None, tol=DEFAULT_TOL, differentiable=False),
    _u("numpy.round[ties]", np.round, path="numpy.round", maker=_halves, dtypes=("float32", "float64"),
       out_dtype=None, tol=DEFAULT_TOL, differentiable=False),
    OpRecord(name="numpy.round[decimals]", path="numpy.round", ref=np.round, args_maker=uniform(), dtypes=F32_F64,
             cases=_cases((((3, 4),), {"decimals": 2}),), tol=DEFAULT_TOL, differentiable=False),
    _u("numpy.arctan", np.arctan, dtypes=FI16),
    _u("numpy.arcsin", np.arcsin, maker=uniform(-0.9, 0.9), dtypes=F32_F64),
    _u("numpy.arccos", np.arccos, maker=uniform(-0.9, 0.9), dtypes=F32_F64),
    _b("numpy.arctan2", np.arctan2, maker=nonzero(), dtypes=FI, out_dtype=_inexact_out, tol=T),
    _b("numpy.floor_divide[float]", np.floor_divide, path="numpy.floor_divide", maker=nonzero_second(),
       dtypes=F32_F64, differentiable=False),
    _b("numpy.remainder[float]", np.remainder, path="numpy.remainder", maker=nonzero_second(), dtypes=F32_F64),
    _b("numpy.fmod[float]", np.fmod, path="numpy.fmod", maker=nonzero_second(), dtypes=F32_F64),
    _b("numpy.bitwise_and", np.bitwise_and, dtypes=INTS),
    _b("numpy.bitwise_or", np.bitwise_or, dtypes=INTS),
    _b("numpy.bitwise_xor", np.bitwise_xor, dtypes=INTS),
    _b("numpy.left_shift", np.left_shift, maker=_shift_args, dtypes=("int32", "uint8", "int8")),
    _b("numpy.right_shift", np.right_shift, maker=_shift_args, dtypes=("int32", "uint8", "int8")),
    OpRecord(name="numpy.prod", ref=np.prod, args_maker=uniform(-1.5, 1.5), dtypes=FI + ("int8", "bool"),
             cases=EMPTY_OK_CASES, tol=ACCUM_TOL, out_dtype=_sum_like),
    OpRecord(name="numpy.nanprod", ref=np.nanprod, args_maker=some_nans(uniform(-1.5, 1.5)), dtypes=F32_F64,
             cases=REDUCE_CASES[:5], tol=ACCUM_TOL),
    OpRecord(name="numpy.cumprod", ref=np.cumprod, args_maker=uniform(-1.5, 1.5), dtypes=FI + ("int8",),
             cases=_cases((((3, 4),), {}), (((3, 4),), {"axis": 0}), (((3, 4),), {"axis": 1}), (((0,),), {})),
             tol=ACCUM_TOL, out_dtype=_sum_like),
    OpRecord(name="nn.gelu[exact]", path="nn.gelu", ref=lambda x, approximate: _gelu_exact(x), args_maker=uniform(),
             dtypes=F32_F64, cases=cases_from_shapes([(s,) for s in UNARY_SHAPES], approximate=False), tol=T,
             out_dtype=canonical_out),
    _u("scipy.special.erf", _erf_ref, dtypes=FI),
    _u("scipy.special.erfc", lambda x: 1 - _erf_ref(x), dtypes=F32_F64),
    _u("scipy.special.erfinv", _erfinv_ref, maker=uniform(-0.9, 0.9), dtypes=F32_F64),
    _u("scipy.special.gammaln", _lgamma_ref, maker=positive(0.2, 6.0), dtypes=F32_F64),
    _u("scipy.special.digamma", _digamma_ref, maker=positive(0.3, 6.0), dtypes=F32_F64),
)


# ----------------------------------------------------------------- indexing

_IDX = np.array([2, 0, 2])
_INDEXING_RECORDS = (
    OpRecord(name="numpy.getitem", path="_jnp_table_adapters.getitem", ref=NPA.getitem, args_maker=uniform(),
             dtypes=FB + ("float16",),
             cases=tuple(Case(((2, 3, 4),), (), {"idx": i}) for i in (
                 0, -1, (1, 2), (slice(None), 1), (Ellipsis, slice(None, None, -2)), (None, 1, slice(1, 3)),
                 (slice(None), [2, 0]), (slice(None), [0, 2], [1, 3]), ([1, 0], slice(None), [0, 3]),
                 (slice(None, None, -1), slice(-2, 0, -1)), np.array([True, False]), (slice(None), _IDX),
                 (1, Ellipsis, None), (slice(5, None),)))),
    OpRecord(name="numpy.at_set", path="_jnp_table_adapters.at_set", ref=NPA.at_set, args_maker=uniform(),
             dtypes=("float32", "int32"),
             cases=(Case(((3, 4), ()), (), {"idx": (0, 1)}), Case(((3, 4), (4,)), (), {"idx": 1}),
                    Case(((3, 4), (3, 2)), (), {"idx": (slice(None), slice(1, 3))}),
                    Case(((3, 4), (2,)), (), {"idx": ([0, 2], [3, 1])}))),
    OpRecord(name="numpy.at_add", path="_jnp_table_adapters.at_add", ref=NPA.at_add, args_maker=uniform(),
             dtypes=("float32", "int32"),
             cases=(Case(((5,), (4,)), (), {"idx": ([0, 2, 2, 4],)}), Case(((3, 4), ()), (), {"idx": (slice(None), 0)}),
                    Case(((3, 4), (3,)), (), {"idx": (slice(None), [1, 1, 1])}))),
    OpRecord(name="numpy.at_max", path="_jnp_table_adapters.at_max", ref=NPA.at_max, args_maker=uniform(),
             dtypes=("float32", "int32"),
             cases=(Case(((5,), (3,)), (), {"idx": ([0, 0, 3],)}),)),
    OpRecord(name="numpy.nonzero[size]", path="_jnp_table_adapters.nonzero_k", ref=NPA.nonzero_k,
             args_maker=uniform(-1, 1), dtypes=("int32", "bool"),
             cases=_cases((((6,),), {"size": 4}), (((3, 4),), {"size": 8, "k": 1}),
                          (((3, 4),), {"size": 3, "k": 0, "fill_value": -1})),
             out_dtype=default_int_out),
)


# ----------------------------------------------------------------- sorting and order statistics


def _with_ties(rng, shapes, dtype):
    """Small integers (many ties) as `dtype`; floats also get a NaN."""
    out = []
    for s in shapes:
        a = rng.integers(-3, 3, size=tuple(s)).astype(dtype)
        if is_float(dtype) and a.size >= 4:
            a.reshape(-1)[rng.integers(0, a.size)] = np.nan
        out.append(a)
    return out


def _sorted_first(rng, shapes, dtype):
    a = np.sort(_rand(rng, shapes[0], dtype, -3, 3))
    return [a, _rand(rng, shapes[1], dtype, -4, 4)]


_SORTING_RECORDS = (
    OpRecord(name="numpy.sort", ref=np.sort, args_maker=uniform(), dtypes=FI16 + ("bool", "uint8"),
             cases=_cases((((5,),), {}), (((3, 4),), {}), (((3, 4),), {"axis": 0}), (((2, 3, 4),), {"axis": 1}),
                          (((3, 4),), {"axis": None}), (((0,),), {}))),
    OpRecord(name="numpy.sort[ties]", path="numpy.sort", ref=np.sort, args_maker=_with_ties,
             dtypes=("float32", "int32"), cases=_cases((((3, 6),), {}), (((6,),), {})), differentiable=False),
    OpRecord(name="numpy.argsort", ref=lambda x, **kw: np.argsort(x, kind="stable", **kw), args_maker=_with_ties,
             dtypes=("float32", "int32", "bool"),
             cases=_cases((((6,),), {}), (((3, 6),), {}), (((3, 6),), {"axis": 0}), (((3, 4),), {"axis": None})),
             out_dtype=default_int_out),
    OpRecord(name="numpy.median", ref=np.median, args_maker=uniform(), dtypes=FI,
             cases=_cases((((5,),), {}), (((4,),), {}), (((3, 4),), {"axis": 1}), (((3, 4),), {"axis": 0}),
                          (((2, 3, 4),), {"axis": (0, 2), "keepdims": True})),
             out_dtype=_float_like),
    OpRecord(name="numpy.median[nan]", path="numpy.median", ref=np.median, args_maker=some_nans(),
             dtypes=("float32",), cases=_cases((((3, 4),), {"axis": 1}),), differentiable=False),
    OpRecord(name="numpy.quantile", ref=np.quantile, args_maker=uniform(), dtypes=F32_F64,
             cases=_cases((((7,),), (0.3,), {}), (((3, 5),), (np.array([0.1, 0.5, 1.0]),), {"axis": 1}),
                          (((3, 5),), (0.25,), {"axis": 0, "method": "lower"}),
                          (((3, 5),), (0.25,), {"axis": 0, "method": "higher"}),
                          (((3, 5),), (0.6,), {"method": "nearest"}),
                          (((3, 5),), (0.4,), {"axis": 1, "method": "midpoint", "keepdims": True}))),
    OpRecord(name="numpy.percentile", ref=np.percentile, args_maker=uniform(), dtypes=F32_F64,
             cases=_cases((((7,),), (30.0,), {}), (((3, 5),), (np.array([10.0, 90.0]),), {"axis": 1}))),
    OpRecord(name="numpy.searchsorted", ref=np.searchsorted, args_maker=_sorted_first,
             dtypes=("float32", "int32"),
             cases=_cases((((6,), (4,)), {}), (((6,), (2, 3)), {"side": "right"}), (((6,), ()), {})),
             out_dtype=default_int_out),
)


# ----------------------------------------------------------------- selection, interpolation, counting


def _indices_in(n):
    def make(rng, shapes, dtype):
        return [rng.integers(0, n, size=tuple(s)).astype(dtype) for s in shapes]
    return make


_SELECTION_AND_COUNTING_RECORDS = (
    OpRecord(name="numpy.select", path="_jnp_table_adapters.select2", ref=NPA.select2, args_maker=uniform(),
             dtypes=("float32", "int32"),
             cases=_cases((((5,), (5,), (5,), (5,)), {}), (((3, 4), (4,), (3, 1), ()), {"default": -1}))),
    OpRecord(name="numpy.interp", path="_jnp_table_adapters.interp", ref=NPA.interp, args_maker=uniform(-1, 6),
             dtypes=F32_F64,
             cases=_cases((((9,), (4,)), {"xp": (0.0, 1.0, 3.0, 5.0)}), (((2, 3), (3,)), {"xp": (-0.5, 2.0, 2.5)}))),
    OpRecord(name="numpy.convolve", ref=np.convolve, args_maker=uniform(), dtypes=FI, out_dtype=_inexact_out,
             cases=_cases((((5,), (3,)), {}), (((3,), (5,)), {"mode": "same"}), (((6,), (3,)), {"mode": "valid"}),
                          (((1,), (4,)), {})),
             tol=ACCUM_TOL),
    OpRecord(name="numpy.correlate", ref=np.correlate, args_maker=uniform(), dtypes=F32_F64,
             cases=_cases((((5,), (3,)), {}), (((5,), (3,)), {"mode": "full"}), (((4,), (4,)), {"mode": "same"})),
             tol=ACCUM_TOL),
    OpRecord(name="numpy.bincount", ref=lambda x, length: np.bincount(x, minlength=length)[:length],
             args_maker=_indices_in(5), dtypes=("int32", "uint8"),
             cases=_cases((((8,),), {"length": 5}), (((8,),), {"length": 7}), (((0,),), {"length": 3})),
             out_dtype=default_int_out),
    OpRecord(name="numpy.modf", path="_jnp_table_adapters.modf_k", ref=NPA.modf_k, args_maker=uniform(),
             dtypes=F32_F64, cases=_cases((((5,),), {"k": 0}), (((3, 4),), {"k": 1}))),
    OpRecord(name="numpy.ldexp", ref=np.ldexp,
             args_maker=lambda rng, shapes, dt: [_rand(rng, shapes[0], dt, -3, 3),
                                                 rng.integers(-4, 5, size=tuple(shapes[1])).astype(np.int32)],
             dtypes=F32_F64, cases=cases_from_shapes([((5,), (5,)), ((3, 4), (4,))])),
    OpRecord(name="numpy.unravel_index", path="_jnp_table_adapters.unravel_k", ref=NPA.unravel_k,
             args_maker=_indices_in(12), dtypes=("int32",),
             cases=_cases((((5,),), {"shape": (3, 4), "k": 0}), (((5,),), {"shape": (3, 4), "k": 1}),
                          (((2, 2),), {"shape": (2, 3, 2), "k": 2})),
             out_dtype=canonical_out),
    OpRecord(name="numpy.ravel_multi_index", ref=lambda i, j, dims: np.ravel_multi_index((i, j), dims),
             path="_jnp_table_adapters.ravel_multi", args_maker=_indices_in(3), dtypes=("int32",),
             cases=_cases((((5,), (5,)), {"dims": (3, 4)}),), out_dtype=canonical_out),
)


RECORDS = (_BASIC_RECORDS + _ROUNDING_AND_SPECIAL_RECORDS + _INDEXING_RECORDS + _SORTING_RECORDS
           + _SELECTION_AND_COUNTING_RECORDS)
