"""Operator-table records for the rest of the `jax.numpy` array functions:
append / insert / delete and the other joining and reshaping helpers,
choose / compress / extract / place / put, triangle and diagonal indices,
`isin` and the 1-D set functions, the array-API `unique_*` functions,
histograms and `digitize`, `cov` / `corrcoef`, and the higher-order
`apply_along_axis` / `apply_over_axes` / `fromfunction`.

Calls that do not fit "arrays first, then static arguments" go through
`adapt` (the record keeps the function's public name): tuple results take a
static `k` (`_kth`), list-taking functions get their arrays positionally,
and index / mask arguments ride as static keyword arguments (concrete under
jit, as JAX requires them to be). Functions whose output shape depends on
the values are recorded with a static `size`, the form that works under jit;
the unsized eager forms, the index-trick objects and the exceptions live in
tests/test_jnp_extras.py.
"""
import numpy as np

from ._record import (
    ACCUM_TOL,
    DTYPE,
    F32_F64,
    FI,
    OpErr,
    OpRecord,
    _inexact_out,
    _rand,
    case_triples,
    default_int_out,
    no_args,
    uniform,
)

FIB = ("float32", "int32", "bool")
SET_DTYPES = ("int32", "float32")


def _f32(*shape):
    return np.ones(shape, np.float32)


def _err(arrays, exc, match, args=(), modes=("eager", "jit"), **kwargs):
    return OpErr(tuple(arrays), kwargs, exc, match, args=tuple(args), modes=modes)


# ----------------------------------------------------------------- arg makers


def few_values(n=5):
    """Integers in [0, n) in the dtype under test (sets with repeats)."""

    def make(rng, shapes, dtype):
        return [rng.integers(0, n, size=tuple(s)).astype(dtype) for s in shapes]

    return make


def indices_then(n_choices, lo=-3.0, hi=3.0):
    """An int32 index array in [0, n_choices) (out of range for mode tests:
    [-2, n_choices + 2)), then arrays of the dtype under test."""

    def make(rng, shapes, dtype):
        idx = rng.integers(-2, n_choices + 2, size=tuple(shapes[0])).astype(np.int32)
        return [idx] + [_rand(rng, s, dtype, lo, hi) for s in shapes[1:]]

    return make


def sorted_second(rng, shapes, dtype):
    """Values, then strictly increasing bins (digitize)."""
    x = _rand(rng, shapes[0], dtype, -4, 4)
    bins = np.unique(_rand(rng, (shapes[1][0] * 3,), dtype, -4, 4))[: shapes[1][0]]
    return [x, np.sort(bins).astype(dtype)]


def descending_second(rng, shapes, dtype):
    x, bins = sorted_second(rng, shapes, dtype)
    return [x, bins[::-1].copy()]


def positive_second(rng, shapes, dtype):
    return [_rand(rng, shapes[0], dtype, -3, 3), _rand(rng, shapes[1], dtype, 0.5, 2.0)]


# ----------------------------------------------------------------- adapters


def _kth(fn):
    """`fn(...)[k]` with a static `k` keyword (tuple-returning functions)."""
    return lambda *xs, k=0, **kw: fn(*xs, **kw)[k]


def _block2(fn):
    """`fn([[a, b], [c]])`: a 2 x 2 block layout with a full-width bottom row."""
    return lambda a, b, c: fn([[a, b], [c]])


def _np_block2(a, b, c):
    return np.block([[a, b], [c]])


def _cond_second(fn):
    """`fn(condition, a, ...)` with the array first and the (static) condition a keyword."""
    return lambda a, cond=None, **kw: fn(np.asarray(cond), a, **kw)


def _place(fn):
    return lambda a, vals, mask=None: fn(a, np.asarray(mask), vals, inplace=False)


def _np_place(a, vals, mask=None):
    out = a.copy()
    np.place(out, np.asarray(mask), vals)
    return out


def _put(fn):
    return lambda a, v, ind=None, mode=None: fn(a, np.asarray(ind), v, mode=mode, inplace=False)


def _np_put(a, v, ind=None, mode=None):
    out = a.copy()
    ind = np.asarray(ind)
    if mode is None:  # JAX: negatives wrap once, then indices clip into range (NumPy would raise)
        ind = np.clip(np.where(ind < 0, ind + a.size, ind), 0, a.size - 1)
    np.put(out, ind, v, mode=mode or "raise")
    return out


def _pad(v, size, fill):
    v = np.asarray(v)[:size]
    return np.concatenate([v, np.full(size - v.shape[0], fill, v.dtype)])


def _np_compress(a, cond=None, axis=None, size=None, fill_value=0):
    out = np.compress(np.asarray(cond), a, axis=axis)
    if size is None:
        return out
    ax = 0 if axis is None else axis
    out = np.moveaxis(out, ax, 0)[:size]
    pad = np.full((size - out.shape[0],) + out.shape[1:], fill_value, out.dtype)
    return np.moveaxis(np.concatenate([out, pad], 0), 0, ax)


def _np_extract(a, cond=None, size=None, fill_value=0):
    out = np.extract(np.asarray(cond), a)
    return out if size is None else _pad(out, size, fill_value)


def _np_tri_indices(upper):
    def ref(n, k=0, m=None, which=0):
        return (np.triu_indices if upper else np.tril_indices)(n, k, m)[which]

    return ref


def _np_from(fn):
    return lambda a, k=0, which=0: fn(a, k)[which]


def _np_mask_indices(n, k=0, func="triu", which=0, size=None):
    out = np.mask_indices(n, getattr(np, func), k)[which]
    return _pad(out, size, 0)


def _mask_indices(fn):
    import microjax_rs.numpy as jnp

    return lambda n, k=0, func="triu", which=0, size=None: fn(n, getattr(jnp, func), k, size=size)[which]


def _np_isin(a, b, invert=False):
    return np.isin(a, b, invert=invert)


def _smallest_or_zero(v):
    return v.min() if v.size else 0


def _np_setop(name):
    def ref(a, b, size=None, fill_value=None, **kw):
        out = getattr(np, name)(a, b, **kw)
        if name in ("union1d", "setdiff1d", "setxor1d", "intersect1d"):
            out = out.astype(np.result_type(a, b)) if name != "setdiff1d" else out.astype(a.dtype)
        if fill_value is None:
            fill = {"setdiff1d": 0, "union1d": _smallest_or_zero(out)}.get(name, _smallest_or_zero(out))
        else:
            fill = fill_value
        return _pad(out, size, fill)

    return ref


def _np_intersect_indices(a, b, size=None, fill_value=None, k=0):
    vals, i1, i2 = np.intersect1d(a, b, return_indices=True)
    fill = _smallest_or_zero(vals) if fill_value is None else fill_value
    return (_pad(vals, size, fill), _pad(i1, size, a.size), _pad(i2, size, b.size))[k]


def _np_unique_field(field):
    def ref(x, size=None, fill_value=None):
        vals, index, inverse, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
        fill = vals.min() if fill_value is None else fill_value
        return {
            "values": _pad(vals, size, fill),
            "indices": _pad(index, size, index[0]),
            "inverse_indices": inverse.reshape(x.shape),
            "counts": _pad(counts, size, 0),
        }[field]

    return ref


def _field(name):
    return lambda fn: (lambda *xs, **kw: getattr(fn(*xs, **kw), name))


def _np_hist(k):
    def ref(a, *w, bins=10, range=None, density=None):
        out = np.histogram(a, bins=bins, range=range, density=density, weights=w[0] if w else None)
        return out[k]

    return ref


def _np_hist2d(k):
    def ref(x, y, *w, bins=10, range=None, density=None):
        return np.histogram2d(x, y, bins=bins, range=range, density=density, weights=w[0] if w else None)[k]

    return ref


def _histdd_k(fn):
    def call(sample, *w, k=0, **kw):
        hist, edges = fn(sample, weights=w[0] if w else None, **kw)
        return hist if k == 0 else edges[k - 1]

    return call


def _np_histdd(sample, *w, k=0, **kw):
    hist, edges = np.histogramdd(sample, weights=w[0] if w else None, **kw)
    return hist if k == 0 else edges[k - 1]


def _int32_out(dt, x64):
    """JAX's digitize: int32 even with 64-bit types on."""
    return np.dtype("int32")


def _hist_counts_out(dt, x64):
    return _inexact_out(dt, x64)


def _histdd_out(weighted_or_density):
    def out(dt, x64):
        return _inexact_out(dt, x64) if weighted_or_density else default_int_out(dt, x64)

    return out


def _cov_aw(fn):
    return lambda m, aw, **kw: fn(m, aweights=aw, **kw)


def _np_cov_aw(m, aw, **kw):
    return np.cov(m, aweights=aw, **kw)


def _np_cov_y(m, y, **kw):
    return np.cov(m, y, **kw)


def _np_corr_y(m, y, **kw):
    return np.corrcoef(m, y, **kw)


def _by_name(fn, module_name="microjax_rs.numpy"):
    """`fn(func1d, ...)` with the callable named by a static `func` string."""
    import importlib

    mod = importlib.import_module(module_name)

    def call(x, axis=0, func="sum", **kw):
        return fn(getattr(mod, func), axis, x, **kw)

    return call


def _np_apply_along_axis(x, axis=0, func="sum", **kw):
    return np.apply_along_axis(getattr(np, func), axis, x, **kw)


def _apply_over(fn):
    import microjax_rs.numpy as jnp

    return lambda x, axes=(0,), func="sum": fn(getattr(jnp, func), x, list(axes))


def _np_apply_over(x, axes=(0,), func="sum"):
    return np.apply_over_axes(getattr(np, func), x, list(axes))


def _grid_fn(i, j):
    return i * 3 + j * j


def _fromfunction(fn):
    return lambda shape=(2, 3), dtype=float: fn(_grid_fn, shape, dtype=dtype)


def _np_fromfunction(shape=(2, 3), dtype=float):
    return np.fromfunction(_grid_fn, shape, dtype=dtype)


def _np_resize(a, new_shape):
    return np.resize(a, new_shape)


# ----------------------------------------------------------------- records

_MASK3 = np.array([True, False, True])
_MASK4 = np.array([True, False, False, True])
_MASK34 = np.array([[True, False, True, False], [False, False, True, True], [True, True, False, False]])

RECORDS = (
    # ---- joining, inserting, deleting, reshaping
    OpRecord(name="numpy.append", ref=np.append, args_maker=uniform(), dtypes=FIB,
             cases=case_triples((((3,), (2, 2)), (), {}), (((3, 4), (1, 4)), (), {"axis": 0}),
                                (((3, 4), (3, 2)), (), {"axis": -1}), (((), (0,)), (), {})),
             errors=(_err([_f32(3, 4), _f32(4)], TypeError, "", axis=0),)),
    OpRecord(name="numpy.insert", ref=lambda a, v, obj, axis=None: np.insert(a, obj, v, axis=axis),
             adapt=lambda fn: (lambda a, v, obj, axis=None: fn(a, obj, v, axis=axis)), args_maker=uniform(), dtypes=FIB,
             cases=case_triples((((6,), ()), (2,), {}), (((6,), (3,)), (np.array([1, 4, 4]),), {}),
                                (((3, 4), (3,)), (1,), {"axis": 1}), (((3, 4), (3, 1)), (1,), {"axis": 1}),
                                (((3, 4), (2, 4)), (np.array([0, 3]),), {"axis": 0}),
                                (((3, 4), ()), (slice(0, 4, 2),), {"axis": 1}), (((3, 4), ()), (-1,), {}))),
    OpRecord(name="numpy.delete", ref=np.delete, args_maker=uniform(), dtypes=FIB,
             cases=case_triples((((6,),), (np.array([0, 2, -1]),), {}), (((6,),), (1,), {}),
                                (((3, 4),), (slice(0, None, 2),), {"axis": 1}),
                                (((3, 4),), (np.array([True, False, True]),), {"axis": 0}),
                                (((3, 4),), (np.array([5, 5, 0]),), {})),
             errors=(_err([_f32(6)], ValueError, "out of bounds", args=(9,)),
                     _err([_f32(6)], TypeError, "delete requires ndarray or scalar arguments", args=([0, 1],)))),
    OpRecord(name="numpy.delete[assume_unique_indices]", path="numpy.delete", args_maker=uniform(), dtypes=FIB,
             ref=lambda a, obj, axis=None, assume_unique_indices=False: np.delete(a, obj, axis=axis),
             cases=case_triples((((6,),), (np.array([4, 1, -1]),), {"assume_unique_indices": True}),
                                (((3, 4),), (np.array([2, 0]),), {"axis": 1, "assume_unique_indices": True}))),
    OpRecord(name="numpy.block", ref=_np_block2, adapt=_block2, args_maker=uniform(), dtypes=FIB,
             cases=case_triples((((2, 2), (2, 1), (1, 3)), (), {}), (((2, 0), (2, 3), (4, 3)), (), {}))),
    OpRecord(name="numpy.unstack", ref=lambda x, axis=0, k=0: np.moveaxis(x, axis, 0)[k], adapt=_kth,
             args_maker=uniform(), dtypes=FIB,
             cases=case_triples((((3, 4),), (), {"k": 1}), (((3, 4),), (), {"axis": 1, "k": 3}),
                                (((2, 3, 4),), (), {"axis": -1, "k": 0})),
             errors=(_err([np.float32(1)], ValueError, ""),)),
    OpRecord(name="numpy.permute_dims", ref=lambda a, axes: np.transpose(a, axes), args_maker=uniform(), dtypes=FIB,
             cases=case_triples((((3, 4),), (), {"axes": (1, 0)}), (((2, 3, 4),), (), {"axes": (2, 0, 1)}))),
    OpRecord(name="numpy.resize", ref=_np_resize, args_maker=uniform(), dtypes=FIB,
             cases=case_triples((((3,),), ((2, 4),), {}), (((2, 3),), (4,), {}), (((5,),), (0,), {}),
                                (((0,),), (3,), {}, )),
             errors=(_err([_f32(3)], ValueError, "all elements of `new_shape` must be non-negative", args=(-1,)),)),
    # ---- choose, compress, extract, place, put
    OpRecord(name="numpy.choose", ref=lambda a, *c, mode="raise": np.choose(a, c, mode=mode),
             adapt=lambda fn: (lambda a, *c, mode="raise": fn(a, list(c), mode=mode)),
             args_maker=indices_then(3), dtypes=("float32", "int32"),
             cases=case_triples((((5,), (5,), (5,), (5,)), (), {"mode": "clip"}),
                                (((2, 4), (4,), (2, 4), ()), (), {"mode": "wrap"}))),
    OpRecord(name="numpy.compress", ref=_np_compress, adapt=_cond_second, args_maker=uniform(), dtypes=FIB,
             cases=case_triples((((3, 4),), (), {"cond": _MASK3, "axis": 0}),
                                (((3, 4),), (), {"cond": _MASK4, "axis": 1}),
                                (((3, 4),), (), {"cond": np.array([0, 1, 1]), "axis": None}),
                                (((3, 4),), (), {"cond": np.array([1, 0]), "axis": 1}),
                                (((3, 4),), (), {"cond": _MASK4, "axis": 1, "size": 3, "fill_value": 7}),
                                (((3, 4),), (), {"cond": _MASK3, "axis": 0, "size": 1})),
             errors=(_err([_f32(3, 4)], ValueError, "condition must be a 1D array", cond=np.ones((1, 2), bool)),
                     _err([_f32(3, 4)], ValueError, "condition contains entries that are out of bounds",
                          cond=np.ones(5, bool), axis=0))),
    OpRecord(name="numpy.extract", ref=_np_extract, adapt=_cond_second, args_maker=uniform(), dtypes=FIB,
             cases=case_triples((((3, 4),), (), {"cond": _MASK34}),
                                (((3, 4),), (), {"cond": _MASK34, "size": 8, "fill_value": -1}),
                                (((3, 4),), (), {"cond": _MASK34, "size": 2}))),
    OpRecord(name="numpy.place", ref=_np_place, adapt=_place, args_maker=uniform(), dtypes=FIB,
             cases=case_triples((((3, 4), (2,)), (), {"mask": _MASK34}), (((3, 4), (9,)), (), {"mask": _MASK34}),
                                (((4,), (1,)), (), {"mask": _MASK4})),
             errors=(_err([_f32(3), _f32(0)], ValueError, "Cannot place values from an empty array",
                          mask=_MASK3),)),
    OpRecord(name="numpy.put", ref=_np_put, adapt=_put, args_maker=uniform(), dtypes=FIB,
             cases=case_triples((((6,), (2,)), (), {"ind": np.array([0, 7, -3])}),
                                (((6,), (3,)), (), {"ind": np.array([-9, 2, -1])}),
                                (((3, 4), (3,)), (), {"ind": np.array([[0, 7], [3, 11]])}),
                                (((6,), ()), (), {"ind": np.array([0, 9]), "mode": "clip"}),
                                (((6,), (3,)), (), {"ind": np.array([0, 7, -2]), "mode": "wrap"}))),
    OpRecord(name="numpy.ix_", ref=lambda *xs, k=0: np.ix_(*xs)[k], adapt=_kth, args_maker=few_values(4),
             dtypes=("int32", "uint8"), differentiable=False,
             cases=case_triples((((2,), (3,)), (), {"k": 0}), (((2,), (3,), (4,)), (), {"k": 2}), (((0,),), (), {}))),
    # ---- triangle, diagonal and mask indices (no array arguments but the `_from` forms)
    OpRecord(name="numpy.tril_indices", ref=_np_tri_indices(False), args_maker=no_args, dtypes=("int32",),
             adapt=lambda fn: (lambda n, k=0, m=None, which=0: fn(n, k, m)[which]), differentiable=False,
             cases=case_triples(((), (3,), {}), ((), (3, 1, 4), {"which": 1}), ((), (4, -1, 2), {"which": 0}),
                                ((), (0,), {}))),
    OpRecord(name="numpy.triu_indices", ref=_np_tri_indices(True), args_maker=no_args, dtypes=("int32",),
             adapt=lambda fn: (lambda n, k=0, m=None, which=0: fn(n, k, m)[which]), differentiable=False,
             cases=case_triples(((), (3,), {}), ((), (3, -1, 2), {"which": 1}), ((), (4, 2, 5), {"which": 0}))),
    OpRecord(name="numpy.tril_indices_from", ref=_np_from(np.tril_indices_from), args_maker=uniform(), dtypes=FIB,
             adapt=lambda fn: (lambda a, k=0, which=0: fn(a, k)[which]), differentiable=False,
             cases=case_triples((((3, 2),), (), {"k": 1}), (((3, 4),), (), {"which": 1}))),
    OpRecord(name="numpy.triu_indices_from", ref=_np_from(np.triu_indices_from), args_maker=uniform(), dtypes=FIB,
             adapt=lambda fn: (lambda a, k=0, which=0: fn(a, k)[which]), differentiable=False,
             cases=case_triples((((3, 2),), (), {"k": -1}), (((4, 4),), (), {"which": 1})),
             errors=(_err([_f32(3)], ValueError, "Only 2-D inputs are accepted"),)),
    OpRecord(name="numpy.diag_indices", ref=lambda n, ndim=2, which=0: np.diag_indices(n, ndim)[which],
             adapt=lambda fn: (lambda n, ndim=2, which=0: fn(n, ndim)[which]), args_maker=no_args,
             dtypes=("int32",), differentiable=False,
             cases=case_triples(((), (3,), {}), ((), (4, 3), {"which": 2}), ((), (0,), {}))),
    OpRecord(name="numpy.diag_indices_from", ref=lambda a, which=0: np.diag_indices_from(a)[which],
             adapt=lambda fn: (lambda a, which=0: fn(a)[which]), args_maker=uniform(), dtypes=FIB,
             differentiable=False, cases=case_triples((((3, 3),), (), {}), (((2, 2, 2),), (), {"which": 2})),
             errors=(_err([_f32(2, 3)], ValueError, "All dimensions of input must be of equal length"),
                     _err([_f32(2)], ValueError, "input array must be at least 2-d"))),
    OpRecord(name="numpy.mask_indices", ref=_np_mask_indices, adapt=_mask_indices, args_maker=no_args,
             dtypes=("int32",), differentiable=False,
             cases=case_triples(((), (3,), {"k": 1, "size": 3}), ((), (4,), {"func": "tril", "which": 1, "size": 12}),
                                ((), (3,), {"k": -1, "size": 5}))),
    # ---- isin and the 1-D set functions (static size: the jit form)
    OpRecord(name="numpy.isin", ref=_np_isin, args_maker=few_values(6), dtypes=SET_DTYPES + ("uint8",),
             differentiable=False,
             cases=case_triples((((8,), (5,)), (), {}), (((2, 4), (3, 2)), (), {"invert": True}),
                                (((), (5,)), (), {}), (((4,), (0,)), (), {}), (((4,), (0,)), (), {"invert": True})),
             errors=(_err([_f32(3), _f32(3)], ValueError, "method='foo' is not implemented", method="foo"),)),
    OpRecord(name="numpy.intersect1d", ref=_np_setop("intersect1d"), args_maker=few_values(), dtypes=SET_DTYPES,
             differentiable=False,
             cases=case_triples((((8,), (5,)), (), {"size": 4}), (((2, 4), (6,)), (), {"size": 6, "fill_value": -1}),
                                (((3,), (3,)), (), {"size": 2}), (((0,), (3,)), (), {"size": 2}))),
    OpRecord(name="numpy.intersect1d[return_indices]", path="numpy.intersect1d", ref=_np_intersect_indices,
             adapt=lambda fn: (lambda a, b, k=0, **kw: fn(a, b, return_indices=True, **kw)[k]),
             args_maker=few_values(), dtypes=SET_DTYPES, differentiable=False, out_dtype=None,
             cases=case_triples((((8,), (5,)), (), {"size": 4, "k": 0}), (((8,), (5,)), (), {"size": 4, "k": 1}),
                                (((8,), (5,)), (), {"size": 6, "fill_value": -1, "k": 2}))),
    OpRecord(name="numpy.setdiff1d", ref=_np_setop("setdiff1d"), args_maker=few_values(), dtypes=SET_DTYPES,
             differentiable=False,
             cases=case_triples((((8,), (5,)), (), {"size": 5}), (((2, 4), (2,)), (), {"size": 3, "fill_value": -2}),
                                (((0,), (3,)), (), {"size": 2}), (((6,), (0,)), (), {"size": 6}))),
    OpRecord(name="numpy.setxor1d", ref=_np_setop("setxor1d"), args_maker=few_values(), dtypes=SET_DTYPES,
             differentiable=False,
             cases=case_triples((((8,), (5,)), (), {"size": 6}), (((2, 4), (3,)), (), {"size": 4, "fill_value": 9}),
                                (((3,), (3,)), (), {"size": 2}))),
    OpRecord(name="numpy.union1d", ref=_np_setop("union1d"), args_maker=few_values(8), dtypes=SET_DTYPES,
             differentiable=False,
             cases=case_triples((((8,), (5,)), (), {"size": 10}), (((2, 4), (3,)), (), {"size": 3, "fill_value": -1}))),
    *(OpRecord(name=f"numpy.unique_all[{field}]", path="numpy.unique_all", ref=_np_unique_field(field),
               adapt=_field(field), args_maker=few_values(), dtypes=SET_DTYPES, differentiable=False,
               out_dtype=None if field == "values" else default_int_out,
               cases=case_triples((((9,),), (), {"size": 6, "fill_value": -1}), (((3, 4),), (), {"size": 3})))
      for field in ("values", "indices", "inverse_indices", "counts")),
    *(OpRecord(name=f"numpy.unique_inverse[{field}]", path="numpy.unique_inverse", ref=_np_unique_field(field),
               adapt=_field(field), args_maker=few_values(), dtypes=SET_DTYPES, differentiable=False,
               out_dtype=None if field == "values" else default_int_out,
               cases=case_triples((((9,),), (), {"size": 7, "fill_value": 0}), (((2, 3),), (), {"size": 2})))
      for field in ("values", "inverse_indices")),
    # ---- histograms and binning (reference in the input dtype: bin membership at the edges)
    OpRecord(name="numpy.histogram", ref=_np_hist(0), adapt=_kth, args_maker=uniform(), dtypes=("float32", "int32"),
             out_dtype=_hist_counts_out, upcast=False, tol=ACCUM_TOL,
             cases=case_triples((((20,),), (), {"bins": 4}), (((4, 5),), (), {"bins": 3, "range": (-1.0, 2.0)}),
                                (((20,),), (), {"bins": 5, "density": True}),
                                (((12,),), (), {"bins": np.array([-3.0, -1.0, 0.5, 3.0])})),
             errors=(_err([_f32(6)], ValueError, "weights should have the same shape as a.", weights=_f32(3)),)),
    OpRecord(name="numpy.histogram[edges]", path="numpy.histogram", ref=_np_hist(1),
             adapt=lambda fn: (lambda *xs, **kw: fn(*xs, **kw)[1]), args_maker=uniform(),
             dtypes=("float32", "int32"), out_dtype=_inexact_out, upcast=False, tol=ACCUM_TOL,
             cases=case_triples((((20,),), (), {"bins": 4}), (((4, 5),), (), {"bins": 3, "range": (-1.0, 2.0)}))),
    OpRecord(name="numpy.histogram[weights]", path="numpy.histogram", ref=_np_hist(0),
             adapt=lambda fn: (lambda a, w, **kw: fn(a, weights=w, **kw)[0]), args_maker=positive_second,
             dtypes=F32_F64, upcast=False, tol=ACCUM_TOL, out_dtype=_inexact_out,
             cases=case_triples((((20,), (20,)), (), {"bins": 4}), (((3, 4), (3, 4)), (), {"bins": 3, "density": True}))),
    OpRecord(name="numpy.histogram_bin_edges", ref=lambda a, bins=10, range=None: np.histogram_bin_edges(a, bins, range),
             args_maker=uniform(), dtypes=("float32", "int32"), out_dtype=_inexact_out, upcast=False, tol=ACCUM_TOL,
             cases=case_triples((((20,),), (), {"bins": 4}), (((4, 5),), (), {"bins": 3, "range": (-1.0, 2.0)}),
                                (((6,),), (), {"bins": np.array([0.0, 1.0, 2.5])}))),
    *(OpRecord(name=f"numpy.histogram2d[{k}]", path="numpy.histogram2d", ref=_np_hist2d(k),
               adapt=(lambda k: lambda fn: (lambda x, y, *w, **kw: fn(x, y, weights=w[0] if w else None, **kw)[k]))(k),
               args_maker=uniform(), dtypes=F32_F64, upcast=False, tol=ACCUM_TOL, differentiable=False,
               out_dtype=(_histdd_out(False) if k == 0 else _inexact_out),
               cases=case_triples((((20,), (20,)), (), {"bins": 3}), (((20,), (20,)), (), {"bins": [2, 4]}),
                                  (((20,), (20,)), (), {"bins": 2, "range": [(-1.0, 1.0), (-2.0, 3.0)]})))
      for k in range(3)),
    OpRecord(name="numpy.histogram2d[weighted]", path="numpy.histogram2d", ref=_np_hist2d(0),
             adapt=lambda fn: (lambda x, y, w, **kw: fn(x, y, weights=w, **kw)[0]), args_maker=uniform(),
             dtypes=F32_F64, upcast=False, tol=ACCUM_TOL, out_dtype=_inexact_out,
             cases=case_triples((((20,), (20,), (20,)), (), {"bins": 3}),
                                (((20,), (20,), (20,)), (), {"bins": 2, "density": True}))),
    *(OpRecord(name=f"numpy.histogramdd[{k}]", path="numpy.histogramdd", ref=_np_histdd, adapt=_histdd_k,
               args_maker=uniform(), dtypes=F32_F64, upcast=False, tol=ACCUM_TOL, differentiable=False,
               out_dtype=(_histdd_out(False) if k == 0 else _inexact_out),
               cases=case_triples((((20, 3),), (), {"bins": 2, "k": k}), (((20, 3),), (), {"bins": [2, 3, 1], "k": k})))
      for k in range(2)),
    OpRecord(name="numpy.histogramdd[density]", path="numpy.histogramdd", ref=_np_histdd, adapt=_histdd_k,
             args_maker=uniform(), dtypes=F32_F64, upcast=False, tol=ACCUM_TOL, out_dtype=_inexact_out,
             cases=case_triples((((20, 2), (20,)), (), {"bins": 3}), (((20, 3),), (), {"bins": 2, "density": True})),
             errors=(_err([_f32(6, 2)], ValueError, "should be a bin for each dimension.", bins=[2, 2, 2]),
                     _err([_f32(6, 2), _f32(3)], ValueError, "should have one weight for each sample."))),
    OpRecord(name="numpy.digitize", ref=np.digitize, args_maker=sorted_second, dtypes=("float32", "int32"),
             differentiable=False, out_dtype=_int32_out,
             cases=case_triples((((10,), (4,)), (), {}), (((3, 4), (5,)), (), {"right": True}), (((6,), (0,)), (), {}))),
    OpRecord(name="numpy.digitize[decreasing]", path="numpy.digitize", ref=np.digitize, args_maker=descending_second,
             dtypes=("float32", "int32"), differentiable=False, out_dtype=_int32_out,
             cases=case_triples((((10,), (4,)), (), {}), (((10,), (4,)), (), {"right": True})),
             errors=(_err([_f32(3), _f32(2, 2)], ValueError, "digitize: bins must be a 1-dimensional array"),)),
    # ---- covariance and correlation
    OpRecord(name="numpy.cov", ref=np.cov, args_maker=uniform(), dtypes=FI, tol=ACCUM_TOL, out_dtype=_inexact_out,
             cases=case_triples((((3, 5),), (), {}), (((5,),), (), {}), (((5, 3),), (), {"rowvar": False}),
                                (((3, 5),), (), {"bias": True}), (((3, 5),), (), {"ddof": 2}),
                                (((3, 5),), (), {"fweights": np.array([1, 2, 1, 3, 1])}),
                                (((3, 5),), (), {"fweights": np.array([1, 2, 1, 3, 1]), "ddof": 0})),
             errors=(_err([_f32(2, 2, 2)], ValueError, "m has more than 2 dimensions"),
                     _err([_f32(3, 4)], TypeError, "fweights must be integer.", fweights=np.ones(4, np.float32)),
                     _err([_f32(3, 4)], RuntimeError, "incompatible numbers of samples and fweights",
                          fweights=np.ones(3, np.int32)),
                     _err([_f32(3, 4)], RuntimeError, "cannot handle multidimensional fweights",
                          fweights=np.ones((2, 2), np.int32)))),
    OpRecord(name="numpy.cov[y]", path="numpy.cov", ref=_np_cov_y, args_maker=uniform(), dtypes=F32_F64,
             tol=ACCUM_TOL, out_dtype=_inexact_out,
             cases=case_triples((((5,), (5,)), (), {}), (((2, 5), (3, 5)), (), {}), (((5, 2), (5, 2)), (), {"rowvar": False}))),
    OpRecord(name="numpy.cov[aweights]", path="numpy.cov", ref=_np_cov_aw, adapt=_cov_aw, args_maker=positive_second,
             dtypes=F32_F64, tol=ACCUM_TOL, out_dtype=_inexact_out,
             cases=case_triples((((3, 5), (5,)), (), {}), (((3, 5), (5,)), (), {"ddof": 0}),
                                (((3, 5), (5,)), (), {"fweights": np.array([1, 2, 1, 3, 1])}),
                                (((3, 5), (5,)), (), {"fweights": np.array([1, 2, 1, 3, 1]), "ddof": 2}))),
    OpRecord(name="numpy.corrcoef", ref=np.corrcoef, args_maker=uniform(), dtypes=FI, tol=ACCUM_TOL,
             out_dtype=_inexact_out,
             cases=case_triples((((3, 5),), (), {}), (((5, 3),), (), {"rowvar": False}), (((5,),), (), {}))),
    OpRecord(name="numpy.corrcoef[y]", path="numpy.corrcoef", ref=_np_corr_y, args_maker=uniform(), dtypes=F32_F64,
             tol=ACCUM_TOL, out_dtype=_inexact_out,
             cases=case_triples((((5,), (5,)), (), {}), (((2, 5), (1, 5)), (), {}))),
    # ---- higher-order functions, with the callable named by a static string
    OpRecord(name="numpy.apply_along_axis", ref=_np_apply_along_axis, adapt=_by_name, args_maker=uniform(),
             dtypes=FI, tol=ACCUM_TOL,
             cases=case_triples((((3, 4),), (), {"axis": 1, "func": "diff"}), (((3, 4),), (), {"axis": 0, "func": "sum"}),
                                (((2, 3, 4),), (), {"axis": 1, "func": "cumsum"}),
                                (((3, 4),), (), {"axis": -1, "func": "diag"}))),
    OpRecord(name="numpy.apply_over_axes", ref=_np_apply_over, adapt=_apply_over, args_maker=uniform(), dtypes=FI,
             tol=ACCUM_TOL,
             cases=case_triples((((3, 4),), (), {"axes": (0, 1)}), (((2, 3, 4),), (), {"axes": (2,), "func": "max"}),
                                (((2, 3, 4),), (), {"axes": (0, 2), "func": "mean"}))),
    OpRecord(name="numpy.fromfunction", ref=_np_fromfunction, adapt=_fromfunction, args_maker=no_args,
             dtypes=("float32", "int32"), differentiable=False,
             cases=case_triples(((), (), {"shape": (2, 3), "dtype": DTYPE}), ((), (), {"shape": (4, 1), "dtype": DTYPE}))),
)
