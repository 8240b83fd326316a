"""Operator-table records that complete the public surface: one record for every
public `numpy` / `numpy.linalg` / `lax` / `lax.linalg` / `nn` / `scipy.special` /
`scipy.linalg` / `random` callable that the other table modules do not cover
(tests/test_op_table_coverage.py fails on a missing one).

`surface_records(existing)` is called by op_table.py once the other records
are assembled: aliases (`jnp.abs` of `jnp.absolute`, ...) copy the record of
the function they alias, renamed so that they call the alias itself.

Functions returning a tuple are reached through `adapt=_kth`, which takes a
static `k` and returns the k-th output; list-taking ones through
`adapt=_listed`. Random records take raw `uint32[2]` keys; draws with an
independent NumPy model (tests/test_random.py) compare bit for bit, the other
distributions are checked by shape, dtype and a statistics predicate
(`OpRecord.check`), and all of them by jit bitwise and vmap over keys.
"""
import dataclasses
import warnings

import numpy as np

import microjax_rs
import microjax_rs.lax.linalg  # noqa: F401  (records resolve names on it)
import microjax_rs.numpy as jnp
import microjax_rs.random  # noqa: F401
import microjax_rs.scipy.linalg  # noqa: F401
from microjax_rs import lax

from op_table import (
    ACCUM_TOL,
    BINARY_SHAPES,
    BROADCAST_SHAPES,
    DEFAULT_TOL,
    DTYPE,
    F32_F64,
    TRANSCENDENTAL_TOL,
    UNARY_SHAPES,
    Case,
    OpErr,
    OpRecord,
    _rand,
    canonicalize_dtype,
    cases_from_shapes,
    is_float,
    no_args,
    np_dtype,
    uniform,
    x64_enabled,
)

T = TRANSCENDENTAL_TOL
FI = ("float32", "float64", "int32")
LINALG_TOL = {"float32": (2e-4, 2e-4), "float64": (1e-9, 1e-9)}


def _cases(*items):
    return tuple(Case(tuple(s), tuple(a), dict(kw)) for s, a, kw in items)


def _kth(fn):
    """`fn(...)[k]` with a static `k` keyword (tuple-returning functions)."""
    return lambda *xs, k=0, **kw: fn(*xs, **kw)[k]


def _listed(fn):
    """`fn([x, y, ...], **kw)` called with the arrays positionally."""
    return lambda *xs, **kw: fn(list(xs), **kw)


def _unary(name, ref, dtypes=F32_F64, maker=None, tol=T, **kw):
    return OpRecord(name=name, ref=ref, args_maker=maker or uniform(), dtypes=dtypes,
                    cases=cases_from_shapes([(s,) for s in UNARY_SHAPES]), tol=tol, **kw)


def _same(dt, x64):
    return canonicalize_dtype(dt, x64)


# ----------------------------------------------------------------- aliases

# alias -> the record (by name) whose cases and reference it shares
ALIASES = {
    "numpy.abs": "numpy.absolute", "numpy.acos": "numpy.arccos", "numpy.acosh": "numpy.arccosh",
    "numpy.asin": "numpy.arcsin", "numpy.asinh": "numpy.arcsinh", "numpy.atan": "numpy.arctan",
    "numpy.atan2": "numpy.arctan2", "numpy.atanh": "numpy.arctanh", "numpy.alltrue": "numpy.all",
    "numpy.sometrue": "numpy.any", "numpy.amax": "numpy.max", "numpy.amin": "numpy.min",
    "numpy.around": "numpy.round[float]", "numpy.bitwise_invert": "numpy.invert",
    "numpy.bitwise_not": "numpy.invert", "numpy.conj": "numpy.conjugate", "numpy.mod": "numpy.remainder",
    "numpy.pow": "numpy.power", "numpy.product": "numpy.prod", "numpy.fix": "numpy.trunc",
    "numpy.degrees": "numpy.rad2deg", "numpy.radians": "numpy.deg2rad", "numpy.true_divide": "numpy.divide",
    "nn.swish": "nn.silu", "nn.normalize": "nn.standardize",
    "scipy.special.softmax": "nn.softmax", "scipy.special.log_softmax": "nn.log_softmax",
    "numpy.linalg.matmul": "numpy.matmul", "numpy.linalg.tensordot": "numpy.tensordot",
}
# aliases of records whose function takes a list of arrays
LIST_ALIASES = {"numpy.concat": "numpy.concatenate", "numpy.row_stack": "numpy.vstack"}


def _aliased(existing):
    by_name = {rec.name: rec for rec in existing}
    out = []
    for new, old in ALIASES.items():
        rec = by_name[old]
        assert rec.path is None or not rec.path.startswith("_"), f"{old} goes through an adapter"
        out.append(dataclasses.replace(rec, name=new, path=None))
    for new, old in LIST_ALIASES.items():
        out.append(dataclasses.replace(by_name[old], name=new, path=None, adapt=_listed))
    return out


# ----------------------------------------------------------------- jax.numpy


def _np_padded_nonzero(fn, fill=0):
    def ref(x, size, fill_value=None):
        idx = np.asarray(fn(x))[:size]
        pad = np.full((size - idx.shape[0],) + idx.shape[1:], fill if fill_value is None else fill_value, idx.dtype)
        return np.concatenate([idx, pad])

    return ref


def _np_unique_padded(k):
    def ref(x, size, fill_value, k=k):
        vals, counts = np.unique(x, return_counts=True)
        out = (vals, counts)[k][:size]
        fill = fill_value if k == 0 else 0
        return np.concatenate([out, np.full(size - out.shape[0], fill, out.dtype)])

    return ref


def _np_fill_diagonal(a, val, inplace=True):
    out = a.copy()
    np.fill_diagonal(out, val)
    return out


def _piecewise(fn):
    return lambda x: fn(x, [x < 0, x >= 1], [lambda v: -v, lambda v: v * 2, 0.5])


def _few_values(rng, shapes, dtype):
    return [rng.integers(0, 4, size=tuple(s)).astype(dtype) for s in shapes]


def _sum_like(dt, x64):
    dt = np.dtype(dt)
    if dt.kind in "biu":
        return np.dtype("int64" if x64 else "int32") if dt.kind != "u" else np.dtype("uint64" if x64 else "uint32")
    return np.dtype("float32") if (dt == np.float64 and not x64) else dt


def _int_out(dt, x64):
    return np.dtype("int64" if x64 else "int32")


def _float_out(dt, x64):
    return np.dtype("float64" if x64 and np.dtype(dt) == np.float64 else "float32")


def _np_cumulative(fn):
    return lambda x, axis=None: fn(x, axis=axis)


NUMPY_RECORDS = (
    OpRecord(name="numpy.greater", ref=np.greater, args_maker=uniform(), dtypes=FI, differentiable=False,
             cases=cases_from_shapes([((5,), (5,)), ((3, 4), (4,)), ((), (3,))])),
    OpRecord(name="numpy.less_equal", ref=np.less_equal, args_maker=uniform(), dtypes=FI, differentiable=False,
             cases=cases_from_shapes([((5,), (5,)), ((3, 4), (4,)), ((), (3,))])),
    OpRecord(name="numpy.argwhere", ref=_np_padded_nonzero(np.argwhere), args_maker=uniform(-1, 1),
             dtypes=("int32", "bool", "float32"), out_dtype=_int_out, differentiable=False,
             cases=_cases((((3, 4),), (), {"size": 6}), (((5,),), (), {"size": 5}),
                          (((3, 4),), (), {"size": 3, "fill_value": -1}))),
    OpRecord(name="numpy.flatnonzero", ref=_np_padded_nonzero(np.flatnonzero), args_maker=uniform(-1, 1),
             dtypes=("int32", "bool"), out_dtype=_int_out, differentiable=False,
             cases=_cases((((3, 4),), (), {"size": 6}), (((5,),), (), {"size": 5, "fill_value": 7}))),
    OpRecord(name="numpy.array_equiv", ref=np.array_equiv, args_maker=uniform(1.0, 1.0),
             dtypes=("float32", "int32"), differentiable=False,
             cases=cases_from_shapes([((3, 4), (4,)), ((3,), (4,)), ((2, 3), (2, 3))])),
    OpRecord(name="numpy.array_equiv[diff]", path="numpy.array_equiv", ref=np.array_equiv, args_maker=uniform(),
             dtypes=("float32",), differentiable=False, cases=cases_from_shapes([((3, 4), (4,))])),
    OpRecord(name="numpy.astype", ref=lambda x, dt: x.astype(dt), args_maker=uniform(-5, 5),
             dtypes=("float32", "int32", "bool"), upcast=False,
             cases=tuple(Case(((3, 4),), (np.dtype(t),)) for t in ("float32", "int32", "bool", "float16"))),
    OpRecord(name="numpy.copy", ref=np.copy, args_maker=uniform(), dtypes=FI + ("bool",),
             cases=cases_from_shapes([(s,) for s in UNARY_SHAPES])),
    OpRecord(name="numpy.cumulative_sum", ref=_np_cumulative(np.cumulative_sum), args_maker=uniform(),
             dtypes=FI, tol=ACCUM_TOL, out_dtype=_sum_like,
             cases=_cases((((5,),), (), {}), (((3, 4),), (), {"axis": 1}), (((3, 4),), (), {"axis": 0}))),
    OpRecord(name="numpy.cumulative_prod", ref=_np_cumulative(np.cumulative_prod), args_maker=uniform(-1.5, 1.5),
             dtypes=FI, tol=ACCUM_TOL, out_dtype=_sum_like,
             cases=_cases((((5,),), (), {}), (((3, 4),), (), {"axis": 1}))),
    OpRecord(name="numpy.diagflat", ref=np.diagflat, args_maker=uniform(), dtypes=FI,
             cases=_cases((((3,),), (), {}), (((2, 2),), (), {"k": 1}), (((3,),), (), {"k": -2}))),
    *(OpRecord(name=f"numpy.{n}", ref=_kth(getattr(np, n)), adapt=_kth, args_maker=uniform(), dtypes=FI,
               cases=_cases((((4, 6, 2),), (2,), {"k": 0}), (((4, 6, 2),), (2,), {"k": 1})))
      for n in ("dsplit", "hsplit", "vsplit")),
    OpRecord(name="numpy.ediff1d", ref=np.ediff1d, args_maker=uniform(), dtypes=FI,
             cases=_cases((((5,),), (), {}), (((3, 4),), (), {}))),
    OpRecord(name="numpy.empty_like", ref=np.zeros_like, args_maker=uniform(), dtypes=FI + ("bool",),
             differentiable=False, cases=_cases((((3, 4),), (), {}), (((5,),), (), {"dtype": np.dtype("int32")}))),
    OpRecord(name="numpy.expand_dims", ref=np.expand_dims, args_maker=uniform(), dtypes=FI + ("bool",),
             cases=_cases((((3, 4),), (0,), {}), (((3, 4),), ((0, 2),), {}), (((3,),), (-1,), {}),
                          (((),), (0,), {}))),
    OpRecord(name="numpy.fill_diagonal", ref=_np_fill_diagonal, args_maker=uniform(), dtypes=FI,
             cases=_cases((((3, 3),), (2.0,), {"inplace": False}), (((3, 4),), (-1.0,), {"inplace": False}))),
    OpRecord(name="numpy.geomspace", ref=np.geomspace, args_maker=no_args, dtypes=F32_F64, tol=T,
             differentiable=False,
             cases=_cases(((), (1.0, 100.0), {"num": 5, "dtype": DTYPE}),
                          ((), (2.0, 32.0), {"num": 4, "endpoint": False, "dtype": DTYPE}))),
    OpRecord(name="numpy.imag", ref=np.imag, args_maker=uniform(), dtypes=F32_F64,
             cases=cases_from_shapes([(s,) for s in UNARY_SHAPES])),
    OpRecord(name="numpy.indices", ref=np.indices, args_maker=no_args, dtypes=("int32", "float32"),
             differentiable=False,
             cases=_cases(((), ((2, 3),), {"dtype": DTYPE}), ((), ((4,),), {"dtype": DTYPE}),
                          ((), ((2, 0),), {"dtype": DTYPE}))),
    OpRecord(name="numpy.matrix_transpose", ref=np.matrix_transpose, args_maker=uniform(), dtypes=FI,
             cases=cases_from_shapes([((3, 4),), ((2, 3, 4),)])),
    OpRecord(name="numpy.nanargmin", ref=np.nanargmin, args_maker=uniform(), dtypes=("float32",),
             out_dtype=_int_out, differentiable=False,
             cases=_cases((((3, 4),), (), {"axis": 1}), (((5,),), (), {}))),
    OpRecord(name="numpy.nancumprod", ref=np.nancumprod, args_maker=uniform(-1.5, 1.5), dtypes=F32_F64,
             tol=ACCUM_TOL, cases=_cases((((3, 4),), (), {"axis": 1}), (((5,),), (), {}))),
    OpRecord(name="numpy.nanstd", ref=np.nanstd, args_maker=uniform(), dtypes=F32_F64, tol=ACCUM_TOL,
             cases=_cases((((3, 4),), (), {}), (((3, 4),), (), {"axis": 0}), (((3, 4),), (), {"axis": 1, "ddof": 1}))),
    OpRecord(name="numpy.piecewise", ref=_piecewise(np.piecewise), adapt=_piecewise, args_maker=uniform(),
             dtypes=F32_F64, cases=cases_from_shapes([((5,),), ((3, 4),)])),
    OpRecord(name="numpy.ravel", ref=np.ravel, args_maker=uniform(), dtypes=FI + ("bool",),
             cases=cases_from_shapes([((3, 4),), ((),), ((2, 0),), ((2, 3, 4),)])),
    OpRecord(name="numpy.squeeze", ref=np.squeeze, args_maker=uniform(), dtypes=FI + ("bool",),
             cases=_cases((((1, 3, 1),), (), {}), (((1, 3, 1),), (), {"axis": 2}), (((3, 1),), (), {"axis": (1,)}),
                          (((),), (), {}))),
    OpRecord(name="numpy.swapaxes", ref=np.swapaxes, args_maker=uniform(), dtypes=FI + ("bool",),
             cases=_cases((((3, 4),), (0, 1), {}), (((2, 3, 4),), (0, -1), {}), (((2, 3, 4),), (1, 1), {}))),
    OpRecord(name="numpy.rollaxis", ref=np.rollaxis, args_maker=uniform(), dtypes=FI,
             cases=_cases((((2, 3, 4),), (2,), {}), (((2, 3, 4),), (0, 2), {}), (((2, 3, 4),), (1, 3), {}))),
    *(OpRecord(name=f"numpy.{n}", ref=_np_unique_padded(k), adapt=(_kth if k else None), args_maker=_few_values,
               dtypes=("int32", "float32"), differentiable=False, out_dtype=(_int_out if k else None),
               cases=_cases((((9,),), (), {"size": 6, "fill_value": -1, **({"k": 1} if k else {})}),
                            (((3, 4),), (), {"size": 3, "fill_value": 9, **({"k": 1} if k else {})})))
      for n, k in (("unique_values", 0), ("unique_counts", 1))),
    OpRecord(name="numpy.vander", ref=np.vander, out_dtype=_same, args_maker=uniform(-2, 2), dtypes=FI, tol=ACCUM_TOL,
             cases=_cases((((4,),), (), {}), (((3,),), (), {"N": 4, "increasing": True}), (((3,),), (2,), {}))),
    OpRecord(name="numpy.vecdot", ref=np.vecdot, args_maker=uniform(), dtypes=FI, tol=ACCUM_TOL,
             cases=_cases((((3, 4), (3, 4)), (), {}), (((4,), (2, 4)), (), {}), (((3, 4), (3, 4)), (), {"axis": 0}))),
)


# ----------------------------------------------------------------- jax.numpy.linalg


def _first_dominant(rng, shapes, dtype):
    out = []
    for i, s in enumerate(shapes):
        x = rng.uniform(-1.0, 1.0, size=tuple(s))
        if i == 0 and len(s) >= 2:
            x = x + 3.0 * np.eye(s[-2], s[-1])
        out.append(x.astype(dtype))
    return out


def _not_implemented(name):
    return OpRecord(name=f"numpy.linalg.{name}", ref=None, args_maker=no_args, dtypes=(), cases=(),
                    errors=(OpErr((np.eye(2, dtype=np.float32),), {}, NotImplementedError,
                                  f"jnp.linalg.{name} is not supported"),))


LINALG_RECORDS = (
    OpRecord(name="numpy.linalg.cross", ref=np.linalg.cross, args_maker=uniform(), dtypes=F32_F64,
             cases=cases_from_shapes([((3,), (3,)), ((4, 3), (4, 3)), ((2, 3), (3,))])),
    OpRecord(name="numpy.linalg.diagonal", ref=np.linalg.diagonal, args_maker=uniform(), dtypes=FI,
             cases=_cases((((3, 4),), (), {}), (((2, 3, 3),), (), {"offset": 1}), (((4, 3),), (), {"offset": -1}))),
    OpRecord(name="numpy.linalg.matrix_norm", ref=np.linalg.matrix_norm, args_maker=_first_dominant,
             dtypes=F32_F64, tol=LINALG_TOL,
             cases=_cases((((3, 4),), (), {}), (((2, 3, 3),), (), {"ord": 1}), (((3, 3),), (), {"ord": np.inf}),
                          (((3, 4),), (), {"ord": "fro", "keepdims": True}))),
    OpRecord(name="numpy.linalg.matrix_transpose", ref=np.linalg.matrix_transpose, args_maker=uniform(),
             dtypes=FI, cases=cases_from_shapes([((3, 4),), ((2, 3, 4),)])),
    OpRecord(name="numpy.linalg.multi_dot", ref=lambda *xs: np.linalg.multi_dot(xs), adapt=_listed,
             args_maker=uniform(-1, 1), dtypes=F32_F64, tol=ACCUM_TOL,
             cases=cases_from_shapes([((3, 4), (4, 5)), ((4,), (4, 2), (2, 3)), ((2, 3), (3, 4), (4,))])),
    OpRecord(name="numpy.linalg.outer", ref=np.linalg.outer, args_maker=uniform(), dtypes=FI,
             cases=cases_from_shapes([((3,), (4,)), ((0,), (2,))])),
    OpRecord(name="numpy.linalg.svd", ref=lambda x, compute_uv: np.linalg.svd(x, compute_uv=compute_uv),
             args_maker=_first_dominant, dtypes=F32_F64, tol=LINALG_TOL,
             cases=_cases((((3, 3),), (), {"compute_uv": False}), (((4, 2),), (), {"compute_uv": False}),
                          (((2, 3, 4),), (), {"compute_uv": False}))),
    OpRecord(name="numpy.linalg.trace", ref=np.linalg.trace, args_maker=uniform(), dtypes=FI, tol=ACCUM_TOL,
             out_dtype=_sum_like, cases=_cases((((3, 3),), (), {}), (((2, 3, 4),), (), {"offset": 1}))),
    OpRecord(name="numpy.linalg.vecdot", ref=np.linalg.vecdot, args_maker=uniform(), dtypes=FI, tol=ACCUM_TOL,
             cases=_cases((((3, 4), (3, 4)), (), {}), (((4,), (2, 4)), (), {}))),
    OpRecord(name="numpy.linalg.vector_norm", ref=np.linalg.vector_norm, args_maker=uniform(), dtypes=F32_F64,
             tol=ACCUM_TOL,
             cases=_cases((((3, 4),), (), {}), (((3, 4),), (), {"axis": 1}), (((5,),), (), {"ord": 1}),
                          (((3, 4),), (), {"axis": 0, "ord": np.inf, "keepdims": True}), (((5,),), (), {"ord": 3}))),
    *(_not_implemented(n) for n in ("eig", "eigvals", "tensorinv", "tensorsolve")),
)


# ----------------------------------------------------------------- jax.lax


def _np_assoc_scan(x, reverse=False, axis=0):
    if reverse:
        return np.flip(np.cumsum(np.flip(x, axis), axis=axis, dtype=x.dtype), axis)
    return np.cumsum(x, axis=axis, dtype=x.dtype)


def _assoc_scan_add(fn):
    return lambda x, reverse=False, axis=0: fn(lax.add, x, reverse=reverse, axis=axis)


def _np_broadcasted_iota(dtype, shape, dimension):
    view = [1] * len(shape)
    view[dimension] = shape[dimension]
    return np.broadcast_to(np.arange(shape[dimension]).reshape(view), shape).astype(dtype)


def _clamp_start(i, d, n):
    i = i + d if i < 0 else i
    return min(max(i, 0), d - n)


def _np_dynamic_index(x, index, axis=0, keepdims=True):
    i = _clamp_start(index, x.shape[axis], 1)
    out = np.take(x, [i], axis=axis)
    return out if keepdims else np.squeeze(out, axis)


def _np_dynamic_update_in_dim(x, u, start, axis):
    s = _clamp_start(start, x.shape[axis], u.shape[axis])
    out = x.copy()
    idx = [slice(None)] * x.ndim
    idx[axis] = slice(s, s + u.shape[axis])
    out[tuple(idx)] = u
    return out


def _np_lu_pivots_to_permutation(pivots, permutation_size):
    lead = pivots.shape[:-1]
    flat = pivots.reshape(int(np.prod(lead)), pivots.shape[-1])
    out = np.tile(np.arange(permutation_size, dtype=np.int32), (flat.shape[0], 1))
    for row, piv in zip(out, flat):
        for i, p in enumerate(piv):
            row[[i, p]] = row[[p, i]]
    return out.reshape(lead + (permutation_size,))


def _pivots(rng, shapes, dtype):
    (s,) = shapes
    n = s[-1] + 1
    cols = [rng.integers(i, n, size=s[:-1]) for i in range(s[-1])]
    return [np.stack(cols, axis=-1).astype(np.int32) if cols else np.zeros(s, np.int32)]


LAX_RECORDS = (
    OpRecord(name="lax.associative_scan", ref=_np_assoc_scan, adapt=_assoc_scan_add, args_maker=uniform(),
             dtypes=FI, tol=ACCUM_TOL,
             cases=_cases((((5,),), (), {}), (((3, 4),), (), {"axis": 1}), (((3, 4),), (), {"reverse": True}),
                          (((7,),), (), {"reverse": True}), (((0,),), (), {}))),
    OpRecord(name="lax.broadcast", ref=lambda x, sizes: np.broadcast_to(x, tuple(sizes) + x.shape).copy(),
             args_maker=uniform(), dtypes=FI + ("bool",),
             cases=_cases((((3,),), ((2,),), {}), (((),), ((2, 3),), {}), (((3, 4),), ((),), {}))),
    OpRecord(name="lax.broadcast_to_rank", ref=lambda x, rank: x.reshape((1,) * (rank - x.ndim) + x.shape),
             args_maker=uniform(), dtypes=FI, cases=_cases((((3,),), (3,), {}), (((2, 3),), (2,), {}))),
    OpRecord(name="lax.broadcasted_iota", ref=_np_broadcasted_iota, args_maker=no_args,
             dtypes=("int32", "float32"), differentiable=False,
             cases=_cases(((), (DTYPE, (2, 3), 0), {}), ((), (DTYPE, (2, 3), 1), {}), ((), (DTYPE, (4,), 0), {}))),
    OpRecord(name="lax.dot", ref=np.dot, args_maker=uniform(-2, 2), dtypes=FI, tol=ACCUM_TOL,
             cases=cases_from_shapes([((4,), (4,)), ((3, 4), (4,)), ((3, 4), (4, 5)), ((4,), (4, 2))])),
    OpRecord(name="lax.dynamic_index_in_dim", ref=_np_dynamic_index, args_maker=uniform(), dtypes=FI,
             cases=_cases((((3, 5),), (2,), {"axis": 1}), (((4,),), (-1,), {}),
                          (((3, 5),), (7,), {"axis": 0, "keepdims": False}))),
    OpRecord(name="lax.dynamic_update_index_in_dim", ref=_np_dynamic_update_in_dim, args_maker=uniform(),
             dtypes=FI, cases=_cases((((3, 5), (1, 5)), (1, 0), {}), (((3, 5), (3, 1)), (9, 1), {}))),
    OpRecord(name="lax.dynamic_update_slice_in_dim", ref=_np_dynamic_update_in_dim, args_maker=uniform(),
             dtypes=FI, cases=_cases((((3, 5), (3, 2)), (1, 1), {}), (((6,), (4,)), (4, 0), {}))),
    OpRecord(name="lax.expand_dims", ref=lambda x, dimensions: np.expand_dims(x, tuple(dimensions)),
             args_maker=uniform(), dtypes=FI + ("bool",),
             cases=_cases((((3, 4),), ((0,),), {}), (((3, 4),), ((1, 3),), {}), (((),), ((0,),), {}))),
    OpRecord(name="lax.full", ref=lambda shape, fill_value, dtype: np.full(shape, fill_value, dtype),
             args_maker=no_args, dtypes=("float32", "int32", "bool"), differentiable=False,
             cases=_cases(((), ((2, 3), 1), {"dtype": DTYPE}), ((), ((0,), 2), {"dtype": DTYPE}),
                          ((), ((), 1), {"dtype": DTYPE}))),
    OpRecord(name="lax.select", ref=np.where,
             args_maker=lambda rng, shapes, dt: [rng.integers(0, 2, size=tuple(shapes[0])).astype(bool)]
             + [_rand(rng, s, dt, -3, 3) for s in shapes[1:]],
             dtypes=FI + ("bool",), cases=cases_from_shapes([((5,), (5,), (5,)), ((), (3, 4), (3, 4))])),
    OpRecord(name="lax.linalg.lu_pivots_to_permutation", ref=_np_lu_pivots_to_permutation, args_maker=_pivots,
             dtypes=("int32",), differentiable=False,
             cases=_cases((((3,),), (4,), {}), (((2, 4),), (5,), {}), (((0,),), (2,), {}))),
    OpRecord(name="lax.linalg.symmetrize", ref=lambda x: (x + np.swapaxes(x, -1, -2)) / 2, args_maker=uniform(),
             dtypes=F32_F64, cases=cases_from_shapes([((3, 3),), ((2, 4, 4),)])),
)


# ----------------------------------------------------------------- nn / scipy.special / scipy.linalg


def _relu6(x):
    return np.minimum(np.maximum(x, 0), 6)


def _np_upper_cholesky(a):
    return np.swapaxes(np.linalg.cholesky(a), -1, -2)


def _spd(rng, shapes, dtype):
    out = []
    for s in shapes:
        x = rng.uniform(-1.0, 1.0, size=tuple(s))
        out.append((x @ np.swapaxes(x, -1, -2) + s[-1] * np.eye(s[-1])).astype(dtype))
    return out


_SQ = cases_from_shapes([((3, 3),), ((1, 1),)])

OTHER_RECORDS = (
    _unary("nn.hard_sigmoid", lambda x: _relu6(x + 3) / 6, maker=uniform(-5, 5), tol=DEFAULT_TOL),
    _unary("nn.hard_silu", lambda x: x * _relu6(x + 3) / 6, maker=uniform(-5, 5), tol=DEFAULT_TOL),
    _unary("nn.hard_swish", lambda x: x * _relu6(x + 3) / 6, maker=uniform(-5, 5), tol=DEFAULT_TOL),
    _unary("nn.identity", lambda x: x.copy(), dtypes=FI, tol=DEFAULT_TOL),
    _unary("scipy.special.log_expit", lambda x: -np.logaddexp(0, -x)),
    OpRecord(name="scipy.linalg.cho_factor", ref=lambda a, lower=False: (
        np.linalg.cholesky(a) if lower else _np_upper_cholesky(a)), adapt=_kth, args_maker=_spd, dtypes=F32_F64,
             tol=LINALG_TOL, cases=_cases((((3, 3),), (), {}), (((3, 3),), (), {"lower": True}))),
    OpRecord(name="scipy.linalg.cholesky", ref=lambda a, lower=False: (
        np.linalg.cholesky(a) if lower else _np_upper_cholesky(a)), args_maker=_spd, dtypes=F32_F64,
             tol=LINALG_TOL, cases=_cases((((3, 3),), (), {}), (((4, 4),), (), {"lower": True}))),
    OpRecord(name="scipy.linalg.det", ref=np.linalg.det, args_maker=_first_dominant, dtypes=F32_F64,
             tol=LINALG_TOL, cases=_SQ),
    OpRecord(name="scipy.linalg.inv", ref=np.linalg.inv, args_maker=_first_dominant, dtypes=F32_F64,
             tol=LINALG_TOL, cases=_SQ),
    OpRecord(name="scipy.linalg.solve", ref=np.linalg.solve, args_maker=_first_dominant, dtypes=F32_F64,
             tol=LINALG_TOL, cases=cases_from_shapes([((3, 3), (3,)), ((3, 3), (3, 2))])),
    OpRecord(name="scipy.linalg.eigh", ref=lambda a, eigvals_only: np.linalg.eigvalsh(a), args_maker=_spd,
             dtypes=F32_F64, tol=LINALG_TOL, cases=_cases((((3, 3),), (), {"eigvals_only": True}))),
    OpRecord(name="scipy.linalg.qr", ref=lambda a, mode, k=0: np.linalg.qr(a, mode="reduced")[k], adapt=_kth,
             args_maker=_first_dominant, dtypes=F32_F64, tol=LINALG_TOL,
             cases=_cases((((4, 3),), (), {"mode": "economic", "k": 1}), (((3, 3),), (), {"mode": "economic"}))),
    OpRecord(name="scipy.linalg.svd", ref=lambda a, compute_uv: np.linalg.svd(a, compute_uv=False),
             args_maker=_first_dominant, dtypes=F32_F64, tol=LINALG_TOL,
             cases=_cases((((3, 3),), (), {"compute_uv": False}), (((4, 2),), (), {"compute_uv": False}))),
)


# ----------------------------------------------------------------- jax.random


def _np_random_model():
    import test_random as tr  # the NumPy model of JAX's Threefry draws

    return tr


def keys(rng, shapes, dtype):
    """Raw `uint32[..., 2]` keys (one per shape: the key's batch shape)."""
    return [rng.integers(0, 2**32, size=tuple(s) + (2,), dtype=np.uint64).astype(np.uint32) for s in shapes]


def seeds(rng, shapes, dtype):
    return [rng.integers(0, 10_000, size=tuple(s)).astype(np.int32) for s in shapes]


def key_and_counts(rng, shapes, dtype):
    return keys(rng, shapes[:1], dtype) + [rng.integers(0, 2**32, size=tuple(s), dtype=np.uint64).astype(np.uint32)
                                           for s in shapes[1:]]


def _stats(shape, dtype, predicate, wide=True):
    """(reference giving shape and dtype, check on the drawn values); default
    float / int draws are 64-bit under x64, as JAX."""
    return dict(ref=lambda *a, **kw: np.zeros(shape, dtype), check=predicate,
                out_dtype=lambda dt, x64: canonicalize_dtype(_WIDE.get(np.dtype(dtype), dtype) if wide else dtype, x64))


def _near(value, want, tol):
    assert abs(float(value) - want) < tol, f"statistic {float(value):.4f} not within {tol} of {want}"


def _moments(mean, std, tol=0.1, lo=-np.inf, hi=np.inf):
    def check(x):
        assert np.all((x >= lo) & (x <= hi)), f"draws outside [{lo}, {hi}]"
        _near(x.mean(), mean, tol)
        if std is not None:
            _near(x.std(), std, tol)

    return check


def _frequencies(probs, tol=0.04):
    def check(x):
        counts = np.bincount(np.asarray(x).ravel().astype(np.int64), minlength=len(probs))
        assert counts.size == len(probs), f"values outside [0, {len(probs)})"
        np.testing.assert_allclose(counts / x.size, probs, atol=tol)

    return check


def _is_permutation(n):
    def check(x):
        np.testing.assert_array_equal(np.sort(x), np.arange(n))

    return check


def _mvn_check(x):
    np.testing.assert_allclose(x.mean(axis=0), [1.0, -1.0], atol=0.1)
    np.testing.assert_allclose(np.cov(x.T), [[1.0, 0.5], [0.5, 2.0]], atol=0.2)


_WIDE = {np.dtype("float32"): np.dtype("float64"), np.dtype("int32"): np.dtype("int64")}
N = 4000
_KEY = ((),)  # one raw key argument


def _rand_rec(name, kwargs, shape, dtype, check, args=(), wide=True):
    return OpRecord(name=f"random.{name}", args_maker=keys, dtypes=("uint32",), differentiable=False,
                    cases=(Case(_KEY, tuple(args), dict(kwargs)),), **_stats(shape, dtype, check, wide))


def _typed(fn_name):
    """`random.key_data(random.<fn_name>(x))`: typed keys seen through their raw data."""
    return lambda fn: lambda x: microjax_rs.random.key_data(fn(x))


def _quietly(fn):
    """`fn` with its FutureWarning silenced (random.shuffle is deprecated, as in JAX)."""

    def call(*args, **kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            return fn(*args, **kwargs)

    return call


def _random_records():
    tr = _np_random_model()
    exact = dict(args_maker=keys, dtypes=("uint32",), differentiable=False, tol={})
    log_p = np.log(np.array([0.2, 0.3, 0.5], np.float32))
    return (
        OpRecord(name="random.bits", ref=lambda k, shape: (tr.np_bits64 if x64_enabled() else tr.np_bits32)(k, shape),
                 cases=_cases((_KEY, ((3, 4),), {}), (_KEY, ((5,),), {}), (_KEY, ((),), {})), **exact),
        OpRecord(name="random.split", ref=lambda k, num=2: tr.np_split(k, num),
                 cases=_cases((_KEY, (), {}), (_KEY, (5,), {}), (_KEY, (1,), {})), **exact),
        OpRecord(name="random.fold_in", ref=lambda k, d: tr.np_fold_in(k, d),
                 cases=_cases((_KEY, (7,), {}), (_KEY, (0,), {}), (_KEY, (123456,), {})), **exact),
        OpRecord(name="random.threefry_2x32", ref=lambda k, c: tr.np_hash_counts(k, c),
                 cases=_cases((((), (6,)), (), {}), (((), (5,)), (), {}), (((), (2, 3)), (), {})),
                 **{**exact, "args_maker": key_and_counts}),
        OpRecord(name="random.uniform",
                 ref=lambda k, shape: tr.np_uniform64(k, shape) if x64_enabled() else tr.np_uniform32(k, shape),
                 cases=_cases((_KEY, ((3, 4),), {}), (_KEY, ((7,),), {})), **exact),
        OpRecord(name="random.PRNGKey", ref=lambda s: np.array([0, s], np.uint32),
                 cases=_cases((((),), (), {})), **{**exact, "args_maker": seeds, "dtypes": ("int32",)}),
        OpRecord(name="random.key", ref=lambda s: np.array([0, s], np.uint32), adapt=_typed("key"),
                 cases=_cases((((),), (), {})), **{**exact, "args_maker": seeds, "dtypes": ("int32",)}),
        OpRecord(name="random.wrap_key_data", ref=lambda k: k.copy(), adapt=_typed("wrap_key_data"),
                 cases=_cases((_KEY, (), {}),), **exact),
        OpRecord(name="random.key_data", ref=lambda k: k.copy(),
                 adapt=lambda fn: lambda k: fn(microjax_rs.random.wrap_key_data(k)),
                 cases=_cases((_KEY, (), {}),), **exact),
        _rand_rec("normal", {"shape": (N,)}, (N,), np.float32, _moments(0.0, 1.0)),
        _rand_rec("gumbel", {"shape": (N,)}, (N,), np.float32, _moments(0.5772, 1.2825)),
        _rand_rec("exponential", {"shape": (N,)}, (N,), np.float32, _moments(1.0, 1.0, lo=0.0)),
        _rand_rec("truncated_normal", {"shape": (N,)}, (N,), np.float32, _moments(0.0, 0.5398, lo=-1.0, hi=1.0),
                  args=(-1.0, 1.0)),
        _rand_rec("bernoulli", {"p": 0.3, "shape": (N,)}, (N,), np.bool_, _moments(0.3, None, tol=0.04)),
        _rand_rec("randint", {"shape": (N,), "minval": 0, "maxval": 5}, (N,), np.int32,
                  _frequencies([0.2] * 5)),
        _rand_rec("categorical", {"logits": log_p, "shape": (N,)}, (N,), np.int32, _frequencies([0.2, 0.3, 0.5])),
        _rand_rec("choice", {"a": 4, "shape": (N,)}, (N,), np.int32, _frequencies([0.25] * 4)),
        _rand_rec("permutation", {"x": 10}, (10,), np.int32, _is_permutation(10)),
        dataclasses.replace(_rand_rec("shuffle", {"x": np.arange(10, dtype=np.int32)}, (10,), np.int32, _is_permutation(10),
                                      wide=False), adapt=_quietly),
        _rand_rec("multivariate_normal", {"mean": np.array([1.0, -1.0], np.float32),
                                          "cov": np.array([[1.0, 0.5], [0.5, 2.0]], np.float32), "shape": (N,)},
                  (N, 2), np.float32, _mvn_check, wide=False),  # the dtype of mean / cov, as JAX
    )


def surface_records(existing):
    """The records of this module; aliases copy their target from `existing`."""
    return tuple(_aliased(existing)) + NUMPY_RECORDS + LINALG_RECORDS + LAX_RECORDS + OTHER_RECORDS \
        + _random_records()


# ----------------------------------------------------------------- bad inputs


def _f32(*shape):
    return np.ones(shape, np.float32)


def _i32(*shape):
    return np.ones(shape, np.int32)


def _err(arrays, exc, match, **kwargs):
    return (OpErr(tuple(arrays), kwargs, exc, match),)


_AXIS2 = "axis 2 is out of bounds for array of dimension 2"
_KEY0 = np.zeros(2, np.uint32)

# record name -> bad inputs (called as the record calls its function)
ERRORS = {
    "lax.add": _err([_f32(3), _f32(4)], TypeError, "add: incompatible shapes for an elementwise op; got shapes (3,) and (4,)")
    + _err([_f32(3), _i32(3)], TypeError, "add: operands must have equal dtypes; got dtypes (float32, int32)"),
    "lax.mul": _err([_f32(2, 3), _f32(3, 2)], TypeError, "mul: incompatible shapes"),
    "lax.sin": _err([_i32(3)], TypeError, "sin: requires a floating operand; got dtypes (int32)"),
    "lax.reshape": _err([_f32(3, 4)], TypeError, "reshape must preserve the number of elements; got shapes (3, 4) and (5,)",
                        new_sizes=(5,)),
    "lax.transpose": _err([_f32(3, 4)], ValueError, "[0, 0] is not a permutation of the 2 axes", permutation=(0, 0)),
    "lax.dot_general": _err([_f32(3, 4), _f32(5, 6)], TypeError, "lhs axis 1 and rhs axis 0 differ in size",
                            dimension_numbers=(((1,), (0,)), ((), ()))),
    "lax.broadcast_in_dim": _err([_f32(3)], TypeError, "operand axis of size 3 cannot broadcast to output axis 1",
                                 shape=(2, 4), broadcast_dimensions=(1,)),
    "lax.reduce_sum": _err([_f32(3)], ValueError, "axis 1 out of range for rank 1", axes=(1,)),
    "lax.concatenate": _err([_f32(3, 2), _f32(4, 3)], TypeError, "operands must have equal shapes except along dimension 0",
                            dimension=0),
    "lax.squeeze": _err([_f32(3, 2)], ValueError, "cannot select an axis to squeeze out", dimensions=(0,)),
    "lax.select_n": _err([_f32(3), _f32(3), _f32(3)], TypeError, "predicate must be bool or int32"),
    "lax.pad": _err([_f32(5), np.float32(0)], TypeError, "needs one (lo, hi, interior) per operand axis",
                    padding_config=((1, 2, 0), (0, 0, 0))),
    "lax.cumsum": _err([_f32(3)], ValueError, "axis 2 out of range for rank 1", axis=2),
    "lax.rev": _err([_f32(5)], ValueError, "axis 1 out of range for rank 1", dimensions=(1,)),
    "lax.clamp": _err([_f32(2), _f32(3), _f32(3)], TypeError, "min and max must be scalars or have the shape of the operand"),
    "lax.shift_left": _err([_f32(3), _f32(3)], TypeError, "shift_left: unsupported operand dtype"),
    "lax.integer_pow": _err([_i32(3)], ValueError, "negative exponent -1 requires a floating operand", y=-1),
    "lax.argmax": _err([_f32(3)], ValueError, "axis 1 out of range for rank 1", axis=1, index_dtype=np.int32),
    "lax.dynamic_slice": (OpErr((_f32(5),), {}, TypeError, "slice_sizes must have one entry per operand axis",
                                args=((1,), (7,))),),
    "lax.full": (OpErr((), {}, TypeError, "not supported by microjax_rs", args=((2,), 1, "foo")),),
    "lax.linalg.cholesky": _err([_f32(3, 4)], ValueError, "cholesky requires square matrices"),
    "numpy.add": _err([_f32(3), _f32(4)], ValueError, "Incompatible shapes for broadcasting: (3,), (4,)"),
    "numpy.matmul": _err([_f32(3, 4), _f32(5, 6)], TypeError, "matmul: contracting dimensions differ: (3, 4) @ (5, 6)"),
    "numpy.dot": _err([_f32(3, 4), _f32(5, 6)], TypeError, "differ in size; got shapes (3, 4) and (5, 6)"),
    "numpy.reshape": (OpErr((_f32(3, 4),), {}, TypeError, "cannot reshape array of shape (3, 4) (size 12) into shape (5,)",
                            args=((5,),)),),
    "numpy.sum": _err([_f32(3, 4)], ValueError, _AXIS2, axis=2),
    "numpy.mean": _err([_f32(3, 4)], ValueError, "axis -3 is out of bounds for array of dimension 2", axis=-3),
    "numpy.argmax": _err([_f32(3, 4)], ValueError, _AXIS2, axis=2),
    "numpy.sort": _err([_f32(3, 4)], ValueError, "axis 3 is out of bounds for array of dimension 2", axis=3),
    "numpy.concatenate": _err([_f32(3, 2), _f32(4, 3)], TypeError, "Cannot concatenate arrays with shapes that differ"),
    "numpy.stack": _err([_f32(3), _f32(4)], ValueError, "All input arrays must have the same shape"),
    "numpy.where": _err([np.ones(3, bool), _f32(3), _f32(4)], ValueError, "Incompatible shapes for broadcasting"),
    "numpy.swapaxes": (OpErr((_f32(3, 4),), {}, ValueError, _AXIS2, args=(0, 2)),),
    "numpy.moveaxis": (OpErr((_f32(3, 4),), {}, ValueError, _AXIS2, args=(0, 2)),),
    "numpy.expand_dims": (OpErr((_f32(3, 4),), {}, ValueError, "axis 3 is out of bounds for array of dimension 3",
                                args=(3,)),),
    "numpy.squeeze": _err([_f32(3, 4)], ValueError, "cannot select an axis to squeeze out", axis=0),
    "numpy.broadcast_to": (OpErr((_f32(3),), {}, ValueError, "Incompatible shapes for broadcasting: (3,) and (4,)",
                                 args=((4,),)),),
    "numpy.split": (OpErr((_f32(5),), {}, ValueError, "array split does not result in an equal division",
                          args=(2,)),),
    "numpy.cross": _err([_f32(4), _f32(4)], ValueError, "Dimension must be either 2 or 3 for cross product"),
    "numpy.einsum": _err([_f32(3, 4), _f32(5, 6)], ValueError, "label 'j' has sizes 4 and 5", subscripts="ij,jk->ik"),
    "numpy.tensordot": _err([_f32(3, 4), _f32(5, 6)], TypeError, "shape mismatch along contracted axes", axes=1),
    "numpy.fill_diagonal": (OpErr((_f32(3, 3),), {}, NotImplementedError, "needs inplace=False", args=(1.0,)),),
    "numpy.argwhere": (OpErr((_f32(3),), {}, microjax_rs.errors.ConcretizationTypeError,
                             "the size argument must be given (and static)", modes=("jit",)),),
    "numpy.linalg.inv": _err([_f32(3, 4)], ValueError, "last 2 dimensions of the array must be square, got shape (3, 4)"),
    "numpy.linalg.solve": _err([_f32(3, 3), _f32(4)], ValueError, "incompatible shapes a (3, 3) and b (4,)"),
    "nn.softmax": _err([_f32(3, 4)], ValueError, _AXIS2, axis=2),
    "scipy.linalg.solve_triangular": _err([_f32(3, 3), _f32(4)], TypeError, "triangular_solve: a must be [..., m, m]"),
    "random.split": _err([np.ones(3, np.uint32)], TypeError, "expected key_data.shape to end with (2,); got shape=(3,)"),
    "random.normal": _err([_KEY0], ValueError, "dtype argument to `normal` must be a float dtype, got int32",
                          shape=(3,), dtype=np.int32),
    "random.uniform": _err([_KEY0], ValueError, "dtype argument to `uniform` must be a float dtype, got int32",
                           shape=(3,), dtype=np.int32),
    "random.randint": _err([_KEY0], TypeError, "randint only accepts integer dtypes, got float32",
                           shape=(3,), minval=0, maxval=5, dtype=np.float32),
}


# Bad inputs generated per family (checked like ERRORS): shape mismatches of
# elementwise binaries, integer operands of float-only lax functions, and an
# out-of-range `axis` for jnp functions that take one.
_BINARY = {c for c in BINARY_SHAPES}
_BROADCAST = set(BROADCAST_SHAPES)
_UNARY = {(s,) for s in UNARY_SHAPES}
# nn.glu indexes x.shape[axis] first: an IndexError, as JAX
_AXIS_ERROR_EXCLUDED = {"nn.glu"}


def _plain(rec):
    return bool(rec.dtypes) and bool(rec.cases) and not rec.cases[0].args and not rec.cases[0].kwargs


def _family_errors(rec):
    shapes = {c.shapes for c in rec.cases}
    dt = np_dtype(rec.dtypes[0]) if rec.dtypes else None
    if _plain(rec) and rec.dotted.startswith("lax.") and len(shapes) > 3 and shapes <= _BINARY:
        return _err([np.ones(3, dt), np.ones(4, dt)], TypeError, "incompatible shapes")
    if _plain(rec) and rec.name.startswith(("numpy.", "scipy.special.", "nn.")) and len(shapes) > 3 \
            and shapes <= _BROADCAST and all(len(s) == 2 for s in shapes):
        return _err([np.ones(3, dt), np.ones(4, dt)], ValueError, "Incompatible shapes for broadcasting")
    if _plain(rec) and rec.dotted.startswith("lax.") and shapes <= _UNARY \
            and all(is_float(np_dtype(d)) for d in rec.dtypes):
        return _err([_i32(3)], TypeError, "requires a floating operand")
    axis_cases = [c for c in rec.cases if "axis" in c.kwargs and len(c.shapes) == 1 and len(c.shapes[0]) == 2]
    if axis_cases and rec.path is None and rec.name.startswith(("numpy.", "nn.", "scipy.special.")) \
            and rec.name not in _AXIS_ERROR_EXCLUDED:
        case = axis_cases[0]
        return (OpErr((np.ones((3, 4), dt),), {**case.kwargs, "axis": 2}, ValueError, _AXIS2, args=case.args),)
    return ()


def with_errors(records):
    """`records` with their ERRORS entries and family errors attached."""
    unknown = set(ERRORS) - {rec.name for rec in records}
    assert not unknown, f"ERRORS names records that do not exist: {sorted(unknown)}"
    return tuple(dataclasses.replace(rec, errors=rec.errors + ERRORS.get(rec.name, ()) + _family_errors(rec))
                 for rec in records)
