"""Operator-table records for sorting and selection: `lax.sort` (1-3
operands, 1-2 keys), `lax.sort_key_val`, `lax.top_k`,
`lax.bitcast_convert_type` (every width combination) and the jnp functions
built on them.

Functions returning several arrays are reached through adapters on
``microjax_rs._sort_table_adapters`` that pick output ``k``; the NumPy
references mirror them. NumPy's stable sort is the reference order: NaNs
last, -0.0 == 0.0, ties in input order.
"""
import types

import numpy as np

import microjax_rs
from microjax_rs import lax
import microjax_rs.numpy as jnp

from ._record import OpRecord, _rand, case_triples, default_int_out, is_float, np_dtype, uniform

F = ("float32", "float64")
SORT_DTYPES = ("float32", "float64", "float16", "int32", "int8", "uint8", "uint32", "bool")
EXACT = {}  # empty: every dtype compares exactly (tolerance (0, 0))


def _i32_out(dt, x64):
    return np.dtype("int32")


# ----------------------------------------------------------------- arg makers


def with_ties(lo=-2, hi=3):
    """Small integers (many ties) as the case dtype."""

    def make(rng, shapes, dtype):
        return [rng.integers(max(lo, 0) if dtype.kind == "u" else lo, hi, size=tuple(s)).astype(dtype)
                for s in shapes]

    return make


def sort_specials(rng, shapes, dtype):
    """Floats with NaN, +-inf, +-0.0 and ties mixed in; other dtypes: ties."""
    out = []
    for s in shapes:
        if not is_float(dtype):
            out.append(with_ties()(rng, [s], dtype)[0])
            continue
        pool = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -1.5, 2.0], dtype)
        out.append(rng.choice(pool, size=tuple(s)))
    return out


def ties_then_uniform(rng, shapes, dtype):
    """First operand with ties (so later keys and the order of ties matter)."""
    first = with_ties(-1, 2)(rng, shapes[:1], dtype)
    return first + [_rand(rng, s, dtype, -3.0, 3.0) for s in shapes[1:]]


# ----------------------------------------------------------------- references


def _np_sort_multi(*ops, dimension=-1, num_keys=1, k=0):
    """Output k of a stable lexicographic sort of `ops` by the first num_keys."""
    ops = [np.moveaxis(np.asarray(o), dimension, -1) for o in ops]
    shape = ops[0].shape
    flat = [o.reshape(-1, shape[-1]) if o.size else o.reshape(-1, shape[-1] if shape else 0) for o in ops]
    out = np.empty_like(flat[k])
    for r in range(flat[0].shape[0]):
        # np.lexsort: last key is primary, stable.
        perm = np.lexsort([f[r] for f in flat[:num_keys]][::-1])
        out[r] = flat[k][r][perm]
    return np.moveaxis(out.reshape(shape), -1, dimension)


def _np_desc_order(x, axis=-1):
    """Stable descending order (ties: lower index first; NaN first)."""
    xr = np.flip(x, axis)
    r = np.argsort(xr, axis=axis, kind="stable")
    return np.flip(x.shape[axis] - 1 - r, axis)


def _np_top_k(x, k, out=0, axis=-1):
    idx = np.moveaxis(_np_desc_order(x, axis), axis, -1)[..., :k]
    idx = np.moveaxis(idx, -1, axis)
    if out == 1:
        return idx.astype(np.int32)
    return np.take_along_axis(x, idx, axis)


def _np_bitcast(x, new_dtype):
    x = np.array(x, order="C")  # (ascontiguousarray would make a 0-d array 1-d)
    new = np_dtype(new_dtype)
    if new.itemsize < x.dtype.itemsize:
        return x.reshape(x.shape + (1,)).view(new)
    if new.itemsize > x.dtype.itemsize:
        return x.view(new).reshape(x.shape[:-1])
    return x.view(new)


def _np_unique_k(x, size, k=0, fill_value=None):
    vals, index, inverse, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    u = vals.size
    if k == 2:
        return inverse.reshape(x.shape)
    if k == 0:
        fill = vals[0] if fill_value is None else fill_value
        base, pad = vals, fill
    elif k == 1:
        base, pad = index, np.argsort(x.reshape(-1), kind="stable")[0]
    else:
        base, pad = counts, 0
    out = np.full(size, pad, base.dtype)
    out[:min(size, u)] = base[:size]
    return out


# ----------------------------------------------------------------- adapters


def _adapters():
    def sort_k(*ops, k=0, **kw):
        return lax.sort(tuple(ops), **kw)[k]

    def sort_key_val_k(keys, values, k=0, **kw):
        return lax.sort_key_val(keys, values, **kw)[k]

    def top_k_k(x, k, out=0, axis=-1):
        return lax.top_k(x, k, axis=axis)[out]

    def lexsort2(a, b, axis=-1):
        return jnp.lexsort((a, b), axis=axis)

    def searchsorted_sorter(a, v, side="left"):
        return jnp.searchsorted(a, v, side=side, sorter=jnp.argsort(a))

    def unique_k(x, size, k=0, fill_value=None):
        return jnp.unique(x, return_index=True, return_inverse=True, return_counts=True, size=size,
                          fill_value=fill_value)[k]

    return types.SimpleNamespace(**{k: v for k, v in locals().items() if callable(v)})


microjax_rs._sort_table_adapters = _adapters()


def _np_lexsort2(a, b, axis=-1):
    return np.lexsort((a, b), axis=axis)


def _np_searchsorted_sorter(a, v, side="left"):
    return np.searchsorted(a, v, side=side, sorter=np.argsort(a, kind="stable"))


# ----------------------------------------------------------------- records

_SORT1 = case_triples(
    (((5,),), (), {}), (((3, 4),), (), {"dimension": 0}), (((3, 4),), (), {}),
    (((2, 3, 4),), (), {"dimension": 1}), (((0,),), (), {}), (((4, 0),), (), {"dimension": 0}),
)

RECORDS = (
    OpRecord(name="lax.sort", ref=lambda x, dimension=-1: np.sort(x, axis=dimension, kind="stable"),
             args_maker=uniform(), dtypes=SORT_DTYPES, cases=_SORT1, tol=EXACT),
    OpRecord(name="lax.sort[specials]", path="lax.sort",
             ref=lambda x, dimension=-1: np.sort(x, axis=dimension, kind="stable"),
             args_maker=sort_specials, dtypes=("float32", "float16", "int32"),
             cases=case_triples((((9,),), (), {}), (((4, 6),), (), {"dimension": 0}), (((4, 6),), (), {})),
             tol=EXACT, differentiable=False),
    OpRecord(name="lax.sort[multi]", path="_sort_table_adapters.sort_k", ref=_np_sort_multi,
             args_maker=uniform(), dtypes=("float32", "float64", "int32"),
             cases=case_triples(
                 (((6,), (6,)), (), {"k": 1}), (((6,), (6,)), (), {"k": 0}),
                 (((3, 4), (3, 4)), (), {"k": 1, "dimension": 0}),
                 (((3, 4), (3, 4), (3, 4)), (), {"k": 2, "num_keys": 2}),
                 (((3, 4), (3, 4), (3, 4)), (), {"k": 1, "num_keys": 2, "dimension": 0}),
             ), tol=EXACT),
    OpRecord(name="lax.sort[multi,ties]", path="_sort_table_adapters.sort_k", ref=_np_sort_multi,
             args_maker=ties_then_uniform, dtypes=("float32", "int32", "uint8", "bool"),
             cases=case_triples(
                 (((8,), (8,)), (), {"k": 1}),
                 (((8,), (8,), (8,)), (), {"k": 2, "num_keys": 2}),
                 (((8,), (8,), (8,)), (), {"k": 1, "num_keys": 2}),
                 (((4, 5), (4, 5)), (), {"k": 1, "dimension": 0}),
                 (((4, 5), (4, 5), (4, 5)), (), {"k": 2, "num_keys": 1, "dimension": 1}),
             ), tol=EXACT, differentiable=False),
    OpRecord(name="lax.sort_key_val", path="_sort_table_adapters.sort_key_val_k",
             ref=lambda keys, values, k=0, dimension=-1: _np_sort_multi(keys, values, dimension=dimension, k=k),
             args_maker=uniform(), dtypes=("float32", "int32"),
             cases=case_triples((((7,), (7,)), (), {"k": 1}), (((3, 4), (3, 4)), (), {"k": 1, "dimension": 0}),
                                (((3, 4), (3, 4)), (), {"k": 0})),
             tol=EXACT),
    OpRecord(name="lax.top_k", path="_sort_table_adapters.top_k_k", ref=_np_top_k, args_maker=uniform(),
             dtypes=("float32", "float64", "int32", "uint8", "float16"),
             cases=case_triples((((6,),), (3,), {}), (((3, 5),), (2,), {}), (((2, 3, 4),), (4,), {}),
                                (((3, 4),), (0,), {}), (((4, 3),), (2,), {"axis": 0}),
                                (((2, 5, 3),), (3,), {"axis": 1, "out": 1})),
             tol=EXACT),
    OpRecord(name="lax.top_k[indices]", path="_sort_table_adapters.top_k_k", ref=_np_top_k,
             args_maker=with_ties(), dtypes=("float32", "int32", "int8"),
             cases=case_triples((((8,),), (4,), {"out": 1}), (((3, 6),), (6,), {"out": 1}),
                                (((3, 6),), (2,), {"out": 0})),
             tol=EXACT, out_dtype=None, differentiable=False),
    OpRecord(name="lax.top_k[specials]", path="_sort_table_adapters.top_k_k", ref=_np_top_k,
             args_maker=sort_specials, dtypes=("float32",),
             cases=case_triples((((9,),), (5,), {"out": 1}), (((9,),), (9,), {"out": 0})),
             tol=EXACT, differentiable=False),
    OpRecord(name="lax.bitcast_convert_type[32]", path="lax.bitcast_convert_type", ref=_np_bitcast,
             args_maker=uniform(-1000, 1000), dtypes=("float32", "int32", "uint32"), upcast=False,
             cases=case_triples((((3,),), ("uint8",), {}), (((2, 3),), ("int16",), {}), (((4,),), ("float32",), {}),
                                (((),), ("int32",), {}), (((2,),), ("float16",), {}), (((0,),), ("uint16",), {})),
             tol=EXACT, differentiable=False),
    OpRecord(name="lax.bitcast_convert_type[8]", path="lax.bitcast_convert_type", ref=_np_bitcast,
             args_maker=uniform(0, 100), dtypes=("uint8", "int8"), upcast=False,
             cases=case_triples((((3, 4),), ("float32",), {}), (((2, 2),), ("int16",), {}), (((4,),), ("uint32",), {}),
                                (((5,),), ("int8",), {}), (((2,),), ("bfloat16",), {})),
             tol=EXACT, differentiable=False),
    OpRecord(name="lax.bitcast_convert_type[16]", path="lax.bitcast_convert_type", ref=_np_bitcast,
             args_maker=uniform(-50, 50), dtypes=("float16", "int16", "uint16", "bfloat16"), upcast=False,
             cases=case_triples((((3,),), ("uint8",), {}), (((3, 2),), ("float32",), {}), (((3,),), ("int16",), {}),
                                (((2, 2),), ("uint32",), {})),
             tol=EXACT, differentiable=False),
    OpRecord(name="lax.bitcast_convert_type[64]", path="lax.bitcast_convert_type", ref=_np_bitcast,
             args_maker=uniform(-1000, 1000), dtypes=("float64", "int64", "uint64"), upcast=False,
             cases=case_triples((((3,),), ("uint32",), {}), (((2,),), ("uint8",), {}), (((2,),), ("float32",), {})),
             tol=EXACT, differentiable=False),
    # -- jax.numpy
    OpRecord(name="numpy.sort[specials]", path="numpy.sort",
             ref=lambda x, axis=-1: np.sort(x, axis=axis, kind="stable"),
             args_maker=sort_specials, dtypes=("float32", "float64"),
             cases=case_triples((((9,),), (), {}), (((4, 5),), (), {"axis": 0}), (((3, 4),), (), {"axis": None})),
             tol=EXACT, differentiable=False),
    OpRecord(name="numpy.sort[descending]", path="numpy.sort",
             ref=lambda x, axis=-1, descending=True: np.flip(np.sort(x, axis=axis), axis),
             args_maker=uniform(), dtypes=("float32", "float64", "int32"),
             cases=case_triples((((6,),), (), {"descending": True}), (((3, 4),), (), {"axis": 0, "descending": True})),
             tol=EXACT),
    OpRecord(name="numpy.argsort[descending]", path="numpy.argsort",
             ref=lambda x, axis=-1, descending=True: _np_desc_order(x, axis),
             args_maker=with_ties(), dtypes=("float32", "int32", "uint8"),
             cases=case_triples((((8,),), (), {"descending": True}), (((3, 6),), (), {"axis": 0, "descending": True})),
             out_dtype=default_int_out),
    OpRecord(name="numpy.lexsort", path="_sort_table_adapters.lexsort2", ref=_np_lexsort2,
             args_maker=with_ties(), dtypes=("float32", "int32", "bool"),
             cases=case_triples((((8,), (8,)), (), {}), (((3, 5), (3, 5)), (), {}), (((3, 5), (3, 5)), (), {"axis": 0})),
             out_dtype=default_int_out),
    OpRecord(name="numpy.searchsorted[sorter]", path="_sort_table_adapters.searchsorted_sorter",
             ref=_np_searchsorted_sorter, args_maker=with_ties(), dtypes=("float32", "int32"),
             cases=case_triples((((7,), (4,)), (), {}), (((7,), (2, 3)), (), {"side": "right"})),
             out_dtype=default_int_out),
    OpRecord(name="numpy.unique[size]", path="_sort_table_adapters.unique_k", ref=_np_unique_k,
             args_maker=with_ties(), dtypes=("float32", "int32", "uint8", "bool"),
             cases=case_triples((((9,),), (5,), {"k": 0}), (((3, 4),), (7,), {"k": 0, "fill_value": 9}),
                                (((9,),), (3,), {"k": 1}), (((3, 4),), (6,), {"k": 2}), (((9,),), (7,), {"k": 3}),
                                (((9,),), (2,), {"k": 3})),
             out_dtype=None, differentiable=False),
    OpRecord(name="numpy.unique[grad]", path="_sort_table_adapters.unique_k", ref=_np_unique_k,
             args_maker=uniform(), dtypes=F, cases=case_triples((((6,),), (6,), {"k": 0}), (((2, 3),), (8,), {"k": 0}))),
    OpRecord(name="numpy.nanmedian", ref=np.nanmedian, args_maker=uniform(), dtypes=F,
             cases=case_triples((((5,),), (), {}), (((3, 4),), (), {"axis": 1}), (((3, 4),), (), {"axis": 0}))),
    OpRecord(name="numpy.nanquantile[nan]", path="numpy.nanquantile", ref=np.nanquantile,
             args_maker=lambda rng, shapes, dtype: [_with_nan_rows(rng, s, dtype) for s in shapes],
             dtypes=F, cases=case_triples((((4, 5),), (0.3,), {"axis": 1}),
                                          (((4, 5),), (np.array([0.0, 0.5, 1.0]),), {"axis": 1}),
                                          (((4, 5),), (0.5,), {"axis": 1, "method": "lower"})),
             differentiable=False),
    OpRecord(name="numpy.nanpercentile", ref=np.nanpercentile, args_maker=uniform(), dtypes=F,
             cases=case_triples((((7,),), (30.0,), {}),)),
    OpRecord(name="numpy.partition", ref=lambda a, kth, axis=-1: np.sort(a, axis=axis), args_maker=with_ties(),
             dtypes=("float32", "int32"), cases=case_triples((((7,),), (3,), {}), (((3, 5),), (1,), {"axis": 0})),
             differentiable=False),
    OpRecord(name="numpy.argpartition", ref=lambda a, kth, axis=-1: np.argsort(a, axis=axis, kind="stable"),
             args_maker=with_ties(), dtypes=("float32", "int32"),
             cases=case_triples((((7,),), (3,), {}), (((3, 5),), (-1,), {"axis": 1})), out_dtype=default_int_out),
)


def _with_nan_rows(rng, shape, dtype):
    """Uniform values with a NaN in every row (all-NaN rows: tests/test_sort.py)."""
    a = _rand(rng, shape, dtype, -3.0, 3.0).astype(dtype)
    a[..., 1] = np.nan
    return a
