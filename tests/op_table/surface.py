"""Operator-table records that complete the public surface: one record for every
public `numpy` / `numpy.linalg` / `lax` / `lax.linalg` / `nn` / `scipy.special` /
`scipy.linalg` callable that the other table modules do not cover
(tests/test_op_table_coverage.py fails on a missing one; `random` has its own
module).

`aliases(existing)` gives the aliases (`jnp.abs` of `jnp.absolute`, ...):
copies of the record of the function they alias, renamed so that they call
the alias itself.

Functions returning a tuple are reached through `adapt=_kth`, which takes a
static `k` and returns the k-th output; list-taking ones through
`adapt=_listed`.
"""
import dataclasses

import numpy as np

import microjax_rs.lax.linalg  # noqa: F401  (records resolve names on it)
import microjax_rs.scipy.linalg  # noqa: F401
from microjax_rs import lax

from ._record import ACCUM_TOL, DEFAULT_TOL, DTYPE, F32_F64, FI, TRANSCENDENTAL_TOL, UNARY_SHAPES, Case, OpErr
from ._record import OpRecord, _rand, canonical_out, case_triples, cases_from_shapes, default_int_out, no_args
from ._record import uniform

T = TRANSCENDENTAL_TOL
LINALG_TOL = {"float32": (2e-4, 2e-4), "float64": (1e-9, 1e-9)}


def _kth(fn):
    """`fn(...)[k]` with a static `k` keyword (tuple-returning functions)."""
    return lambda *xs, k=0, **kw: fn(*xs, **kw)[k]


def _listed(fn):
    """`fn([x, y, ...], **kw)` called with the arrays positionally."""
    return lambda *xs, **kw: fn(list(xs), **kw)


def _unary(name, ref, dtypes=F32_F64, maker=None, tol=T, **kw):
    return OpRecord(name=name, ref=ref, args_maker=maker or uniform(), dtypes=dtypes,
                    cases=cases_from_shapes([(s,) for s in UNARY_SHAPES]), tol=tol, **kw)


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
    "nn.swish": "nn.silu", "nn.normalize": "nn.standardize", "nn.tanh": "numpy.tanh",
    "numpy.linalg.matmul": "numpy.matmul", "numpy.linalg.tensordot": "numpy.tensordot",
}
# aliases of records whose function takes a list of arrays
LIST_ALIASES = {"numpy.concat": "numpy.concatenate", "numpy.row_stack": "numpy.vstack"}


def aliases(existing):
    """The alias records: copies of their targets in `existing`, renamed."""
    by_name = {rec.name: rec for rec in existing}
    out = []
    for new, old in ALIASES.items():
        rec = by_name[old]
        assert rec.path is None or not rec.path.startswith("_"), f"{old} goes through an adapter"
        out.append(dataclasses.replace(rec, name=new, path=None))
    for new, old in LIST_ALIASES.items():
        out.append(dataclasses.replace(by_name[old], name=new, path=None, adapt=_listed))
    return tuple(out)


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
             dtypes=("int32", "bool", "float32"), out_dtype=default_int_out, differentiable=False,
             cases=case_triples((((3, 4),), (), {"size": 6}), (((5,),), (), {"size": 5}),
                                (((3, 4),), (), {"size": 3, "fill_value": -1}))),
    OpRecord(name="numpy.flatnonzero", ref=_np_padded_nonzero(np.flatnonzero), args_maker=uniform(-1, 1),
             dtypes=("int32", "bool"), out_dtype=default_int_out, differentiable=False,
             cases=case_triples((((3, 4),), (), {"size": 6}), (((5,),), (), {"size": 5, "fill_value": 7}))),
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
             cases=case_triples((((5,),), (), {}), (((3, 4),), (), {"axis": 1}), (((3, 4),), (), {"axis": 0}))),
    OpRecord(name="numpy.cumulative_prod", ref=_np_cumulative(np.cumulative_prod), args_maker=uniform(-1.5, 1.5),
             dtypes=FI, tol=ACCUM_TOL, out_dtype=_sum_like,
             cases=case_triples((((5,),), (), {}), (((3, 4),), (), {"axis": 1}))),
    OpRecord(name="numpy.diagflat", ref=np.diagflat, args_maker=uniform(), dtypes=FI,
             cases=case_triples((((3,),), (), {}), (((2, 2),), (), {"k": 1}), (((3,),), (), {"k": -2}))),
    *(OpRecord(name=f"numpy.{n}", ref=_kth(getattr(np, n)), adapt=_kth, args_maker=uniform(), dtypes=FI,
               cases=case_triples((((4, 6, 2),), (2,), {"k": 0}), (((4, 6, 2),), (2,), {"k": 1})))
      for n in ("dsplit", "hsplit", "vsplit")),
    OpRecord(name="numpy.ediff1d", ref=np.ediff1d, args_maker=uniform(), dtypes=FI,
             cases=case_triples((((5,),), (), {}), (((3, 4),), (), {}))),
    OpRecord(name="numpy.empty_like", ref=np.zeros_like, args_maker=uniform(), dtypes=FI + ("bool",),
             differentiable=False, cases=case_triples((((3, 4),), (), {}), (((5,),), (), {"dtype": np.dtype("int32")}))),
    OpRecord(name="numpy.expand_dims", ref=np.expand_dims, args_maker=uniform(), dtypes=FI + ("bool",),
             cases=case_triples((((3, 4),), (0,), {}), (((3, 4),), ((0, 2),), {}), (((3,),), (-1,), {}),
                                (((),), (0,), {}))),
    OpRecord(name="numpy.fill_diagonal", ref=_np_fill_diagonal, args_maker=uniform(), dtypes=FI,
             cases=case_triples((((3, 3),), (2.0,), {"inplace": False}), (((3, 4),), (-1.0,), {"inplace": False}))),
    OpRecord(name="numpy.geomspace", ref=np.geomspace, args_maker=no_args, dtypes=F32_F64, tol=T,
             differentiable=False,
             cases=case_triples(((), (1.0, 100.0), {"num": 5, "dtype": DTYPE}),
                                ((), (2.0, 32.0), {"num": 4, "endpoint": False, "dtype": DTYPE}))),
    OpRecord(name="numpy.imag", ref=np.imag, args_maker=uniform(), dtypes=F32_F64,
             cases=cases_from_shapes([(s,) for s in UNARY_SHAPES])),
    OpRecord(name="numpy.indices", ref=np.indices, args_maker=no_args, dtypes=("int32", "float32"),
             differentiable=False,
             cases=case_triples(((), ((2, 3),), {"dtype": DTYPE}), ((), ((4,),), {"dtype": DTYPE}),
                                ((), ((2, 0),), {"dtype": DTYPE}))),
    OpRecord(name="numpy.matrix_transpose", ref=np.matrix_transpose, args_maker=uniform(), dtypes=FI,
             cases=cases_from_shapes([((3, 4),), ((2, 3, 4),)])),
    OpRecord(name="numpy.nanargmin", ref=np.nanargmin, args_maker=uniform(), dtypes=("float32",),
             out_dtype=default_int_out, differentiable=False,
             cases=case_triples((((3, 4),), (), {"axis": 1}), (((5,),), (), {}))),
    OpRecord(name="numpy.nancumprod", ref=np.nancumprod, args_maker=uniform(-1.5, 1.5), dtypes=F32_F64,
             tol=ACCUM_TOL, cases=case_triples((((3, 4),), (), {"axis": 1}), (((5,),), (), {}))),
    OpRecord(name="numpy.nanstd", ref=np.nanstd, args_maker=uniform(), dtypes=F32_F64, tol=ACCUM_TOL,
             cases=case_triples((((3, 4),), (), {}), (((3, 4),), (), {"axis": 0}), (((3, 4),), (), {"axis": 1, "ddof": 1}))),
    OpRecord(name="numpy.piecewise", ref=_piecewise(np.piecewise), adapt=_piecewise, args_maker=uniform(),
             dtypes=F32_F64, cases=cases_from_shapes([((5,),), ((3, 4),)])),
    OpRecord(name="numpy.ravel", ref=np.ravel, args_maker=uniform(), dtypes=FI + ("bool",),
             cases=cases_from_shapes([((3, 4),), ((),), ((2, 0),), ((2, 3, 4),)])),
    OpRecord(name="numpy.squeeze", ref=np.squeeze, args_maker=uniform(), dtypes=FI + ("bool",),
             cases=case_triples((((1, 3, 1),), (), {}), (((1, 3, 1),), (), {"axis": 2}), (((3, 1),), (), {"axis": (1,)}),
                                (((),), (), {}))),
    OpRecord(name="numpy.swapaxes", ref=np.swapaxes, args_maker=uniform(), dtypes=FI + ("bool",),
             cases=case_triples((((3, 4),), (0, 1), {}), (((2, 3, 4),), (0, -1), {}), (((2, 3, 4),), (1, 1), {}))),
    OpRecord(name="numpy.rollaxis", ref=np.rollaxis, args_maker=uniform(), dtypes=FI,
             cases=case_triples((((2, 3, 4),), (2,), {}), (((2, 3, 4),), (0, 2), {}), (((2, 3, 4),), (1, 3), {}))),
    *(OpRecord(name=f"numpy.{n}", ref=_np_unique_padded(k), adapt=(_kth if k else None), args_maker=_few_values,
               dtypes=("int32", "float32"), differentiable=False, out_dtype=(default_int_out if k else None),
               cases=case_triples((((9,),), (), {"size": 6, "fill_value": -1, **({"k": 1} if k else {})}),
                                  (((3, 4),), (), {"size": 3, "fill_value": 9, **({"k": 1} if k else {})})))
      for n, k in (("unique_values", 0), ("unique_counts", 1))),
    OpRecord(name="numpy.vander", ref=np.vander, out_dtype=canonical_out, args_maker=uniform(-2, 2), dtypes=FI, tol=ACCUM_TOL,
             cases=case_triples((((4,),), (), {}), (((3,),), (), {"N": 4, "increasing": True}), (((3,),), (2,), {}))),
    OpRecord(name="numpy.vecdot", ref=np.vecdot, args_maker=uniform(), dtypes=FI, tol=ACCUM_TOL,
             cases=case_triples((((3, 4), (3, 4)), (), {}), (((4,), (2, 4)), (), {}), (((3, 4), (3, 4)), (), {"axis": 0}))),
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
             cases=case_triples((((3, 4),), (), {}), (((2, 3, 3),), (), {"offset": 1}), (((4, 3),), (), {"offset": -1}))),
    OpRecord(name="numpy.linalg.matrix_norm", ref=np.linalg.matrix_norm, args_maker=_first_dominant,
             dtypes=F32_F64, tol=LINALG_TOL,
             cases=case_triples((((3, 4),), (), {}), (((2, 3, 3),), (), {"ord": 1}), (((3, 3),), (), {"ord": np.inf}),
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
             cases=case_triples((((3, 3),), (), {"compute_uv": False}), (((4, 2),), (), {"compute_uv": False}),
                                (((2, 3, 4),), (), {"compute_uv": False}))),
    OpRecord(name="numpy.linalg.trace", ref=np.linalg.trace, args_maker=uniform(), dtypes=FI, tol=ACCUM_TOL,
             out_dtype=_sum_like, cases=case_triples((((3, 3),), (), {}), (((2, 3, 4),), (), {"offset": 1}))),
    OpRecord(name="numpy.linalg.vecdot", ref=np.linalg.vecdot, args_maker=uniform(), dtypes=FI, tol=ACCUM_TOL,
             cases=case_triples((((3, 4), (3, 4)), (), {}), (((4,), (2, 4)), (), {}))),
    OpRecord(name="numpy.linalg.vector_norm", ref=np.linalg.vector_norm, args_maker=uniform(), dtypes=F32_F64,
             tol=ACCUM_TOL,
             cases=case_triples((((3, 4),), (), {}), (((3, 4),), (), {"axis": 1}), (((5,),), (), {"ord": 1}),
                                (((3, 4),), (), {"axis": 0, "ord": np.inf, "keepdims": True}), (((5,),), (), {"ord": 3}))),
    *(_not_implemented(n) for n in ("tensorinv", "tensorsolve")),
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
             cases=case_triples((((5,),), (), {}), (((3, 4),), (), {"axis": 1}), (((3, 4),), (), {"reverse": True}),
                                (((7,),), (), {"reverse": True}), (((0,),), (), {}))),
    OpRecord(name="lax.broadcast", ref=lambda x, sizes: np.broadcast_to(x, tuple(sizes) + x.shape).copy(),
             args_maker=uniform(), dtypes=FI + ("bool",),
             cases=case_triples((((3,),), ((2,),), {}), (((),), ((2, 3),), {}), (((3, 4),), ((),), {}))),
    OpRecord(name="lax.broadcast_to_rank", ref=lambda x, rank: x.reshape((1,) * (rank - x.ndim) + x.shape),
             args_maker=uniform(), dtypes=FI, cases=case_triples((((3,),), (3,), {}), (((2, 3),), (2,), {}))),
    OpRecord(name="lax.broadcasted_iota", ref=_np_broadcasted_iota, args_maker=no_args,
             dtypes=("int32", "float32"), differentiable=False,
             cases=case_triples(((), (DTYPE, (2, 3), 0), {}), ((), (DTYPE, (2, 3), 1), {}), ((), (DTYPE, (4,), 0), {}))),
    OpRecord(name="lax.dot", ref=np.dot, args_maker=uniform(-2, 2), dtypes=FI, tol=ACCUM_TOL,
             cases=cases_from_shapes([((4,), (4,)), ((3, 4), (4,)), ((3, 4), (4, 5)), ((4,), (4, 2))])),
    OpRecord(name="lax.dynamic_index_in_dim", ref=_np_dynamic_index, args_maker=uniform(), dtypes=FI,
             cases=case_triples((((3, 5),), (2,), {"axis": 1}), (((4,),), (-1,), {}),
                                (((3, 5),), (7,), {"axis": 0, "keepdims": False}))),
    OpRecord(name="lax.dynamic_update_index_in_dim", ref=_np_dynamic_update_in_dim, args_maker=uniform(),
             dtypes=FI, cases=case_triples((((3, 5), (1, 5)), (1, 0), {}), (((3, 5), (3, 1)), (9, 1), {}))),
    OpRecord(name="lax.dynamic_update_slice_in_dim", ref=_np_dynamic_update_in_dim, args_maker=uniform(),
             dtypes=FI, cases=case_triples((((3, 5), (3, 2)), (1, 1), {}), (((6,), (4,)), (4, 0), {}))),
    OpRecord(name="lax.expand_dims", ref=lambda x, dimensions: np.expand_dims(x, tuple(dimensions)),
             args_maker=uniform(), dtypes=FI + ("bool",),
             cases=case_triples((((3, 4),), ((0,),), {}), (((3, 4),), ((1, 3),), {}), (((),), ((0,),), {}))),
    OpRecord(name="lax.full", ref=lambda shape, fill_value, dtype: np.full(shape, fill_value, dtype),
             args_maker=no_args, dtypes=("float32", "int32", "bool"), differentiable=False,
             cases=case_triples(((), ((2, 3), 1), {"dtype": DTYPE}), ((), ((0,), 2), {"dtype": DTYPE}),
                                ((), ((), 1), {"dtype": DTYPE}))),
    OpRecord(name="lax.select", ref=np.where,
             args_maker=lambda rng, shapes, dt: [rng.integers(0, 2, size=tuple(shapes[0])).astype(bool)]
             + [_rand(rng, s, dt, -3, 3) for s in shapes[1:]],
             dtypes=FI + ("bool",), cases=cases_from_shapes([((5,), (5,), (5,)), ((), (3, 4), (3, 4))])),
    OpRecord(name="lax.linalg.lu_pivots_to_permutation", ref=_np_lu_pivots_to_permutation, args_maker=_pivots,
             dtypes=("int32",), differentiable=False,
             cases=case_triples((((3,),), (4,), {}), (((2, 4),), (5,), {}), (((0,),), (2,), {}))),
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

def _np_logmeanexp(x, axis=None, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    n = x.size if axis is None else x.shape[axis]
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True) / n) + m
    return out if keepdims else np.squeeze(out, axis=axis)


OTHER_RECORDS = (
    _unary("nn.mish", lambda x: x * np.tanh(np.logaddexp(0, x)), maker=uniform(-3, 3)),
    _unary("nn.squareplus", lambda x: (x + np.sqrt(x * x + 4)) / 2, maker=uniform(-3, 3)),
    _unary("nn.sparse_plus", lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)),
           maker=uniform(-2, 2), tol=DEFAULT_TOL),
    _unary("nn.sparse_sigmoid", lambda x: np.clip((x + 1) / 2, 0, 1), maker=uniform(-2, 2), tol=DEFAULT_TOL),
    _unary("nn.log1mexp", lambda x: np.log(-np.expm1(-x)), maker=uniform(0.1, 3)),
    OpRecord(name="nn.logmeanexp", ref=_np_logmeanexp, args_maker=uniform(), dtypes=F32_F64,
             cases=case_triples((((3, 4),), (), {}), (((3, 4),), (), {"axis": 1}),
                                (((3, 4),), (), {"axis": 0, "keepdims": True}), (((5,),), (), {})), tol=T),
    _unary("nn.hard_sigmoid", lambda x: _relu6(x + 3) / 6, maker=uniform(-5, 5), tol=DEFAULT_TOL),
    _unary("nn.hard_silu", lambda x: x * _relu6(x + 3) / 6, maker=uniform(-5, 5), tol=DEFAULT_TOL),
    _unary("nn.hard_swish", lambda x: x * _relu6(x + 3) / 6, maker=uniform(-5, 5), tol=DEFAULT_TOL),
    _unary("nn.identity", lambda x: x.copy(), dtypes=FI, tol=DEFAULT_TOL),
    _unary("scipy.special.log_expit", lambda x: -np.logaddexp(0, -x)),
    OpRecord(name="scipy.linalg.cho_factor", ref=lambda a, lower=False: (
        np.linalg.cholesky(a) if lower else _np_upper_cholesky(a)), adapt=_kth, args_maker=_spd, dtypes=F32_F64,
             tol=LINALG_TOL, cases=case_triples((((3, 3),), (), {}), (((3, 3),), (), {"lower": True}))),
    OpRecord(name="scipy.linalg.cholesky", ref=lambda a, lower=False: (
        np.linalg.cholesky(a) if lower else _np_upper_cholesky(a)), args_maker=_spd, dtypes=F32_F64,
             tol=LINALG_TOL, cases=case_triples((((3, 3),), (), {}), (((4, 4),), (), {"lower": True}))),
    OpRecord(name="scipy.linalg.det", ref=np.linalg.det, args_maker=_first_dominant, dtypes=F32_F64,
             tol=LINALG_TOL, cases=_SQ),
    OpRecord(name="scipy.linalg.inv", ref=np.linalg.inv, args_maker=_first_dominant, dtypes=F32_F64,
             tol=LINALG_TOL, cases=_SQ),
    OpRecord(name="scipy.linalg.solve", ref=np.linalg.solve, args_maker=_first_dominant, dtypes=F32_F64,
             tol=LINALG_TOL, cases=cases_from_shapes([((3, 3), (3,)), ((3, 3), (3, 2))])),
    OpRecord(name="scipy.linalg.eigh", ref=lambda a, eigvals_only: np.linalg.eigvalsh(a), args_maker=_spd,
             dtypes=F32_F64, tol=LINALG_TOL, cases=case_triples((((3, 3),), (), {"eigvals_only": True}))),
    OpRecord(name="scipy.linalg.qr", ref=lambda a, mode, k=0: np.linalg.qr(a, mode="reduced")[k], adapt=_kth,
             args_maker=_first_dominant, dtypes=F32_F64, tol=LINALG_TOL,
             cases=case_triples((((4, 3),), (), {"mode": "economic", "k": 1}), (((3, 3),), (), {"mode": "economic"}))),
    OpRecord(name="scipy.linalg.svd", ref=lambda a, compute_uv: np.linalg.svd(a, compute_uv=False),
             args_maker=_first_dominant, dtypes=F32_F64, tol=LINALG_TOL,
             cases=case_triples((((3, 3),), (), {"compute_uv": False}), (((4, 2),), (), {"compute_uv": False}))),
)


RECORDS = NUMPY_RECORDS + LINALG_RECORDS + LAX_RECORDS + OTHER_RECORDS
