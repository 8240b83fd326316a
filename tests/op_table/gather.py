"""Operator-table records for the gather/scatter family: `lax.gather`, the
`lax.scatter*` functions, and jnp indexing / `x.at[...]` / `take` /
`take_along_axis` / `put_along_axis` with index *array arguments* (traced
under jit, batched under vmap).

The NumPy references below are loops written from XLA's definition of the
operations (index vector = last axis of the indices), independent of the
kernels.
"""
import itertools
import types

import numpy as np

import microjax_rs
import microjax_rs.numpy as jnp
from microjax_rs import lax

from ._record import Case, OpRecord, _rand

SLICE_DTYPES = ("float32", "float64", "float16", "int32", "uint8", "bool")
ARITH_DTYPES = ("float32", "float64", "int32", "uint8")

CLIP, FILL, PROMISE = "clip", "fill", "promise_in_bounds"


# ----------------------------------------------------------------- references


def _default_fill(dtype):
    dtype = np.dtype(dtype)
    if dtype == bool:
        return True
    if np.issubdtype(dtype, np.signedinteger):
        return np.iinfo(dtype).min
    if np.issubdtype(dtype, np.unsignedinteger):
        return np.iinfo(dtype).max
    return np.nan


def _starts(x_shape, idx, g, index_map, extent, clamp):
    """Start per operand axis for indices batch position g (None: out of bounds)."""
    start = [0] * len(x_shape)
    for j, a in enumerate(index_map):
        s = int(idx[tuple(g) + (j,)])
        hi = x_shape[a] - extent[a]
        if clamp:
            s = min(max(s, 0), hi)
        elif s < 0 or s > hi:
            return None
        start[a] = s
    return start


def gather_ref(x, idx, dimension_numbers, slice_sizes, mode=None, fill_value=None):
    offset, collapsed, index_map, obatch, ibatch = (tuple(dimension_numbers) + ((), ()))[:5]
    batch_shape = idx.shape[:-1]
    window = [a for a in range(x.ndim) if a not in collapsed and a not in obatch]
    rank = len(batch_shape) + len(offset)
    sizes, bsh = iter(slice_sizes[a] for a in window), iter(batch_shape)
    out_shape = tuple(next(sizes) if o in offset else next(bsh) for o in range(rank))
    out = np.empty(out_shape, x.dtype)
    fill = _default_fill(x.dtype) if fill_value is None else fill_value
    for pos in itertools.product(*map(range, out_shape)):
        g = [pos[o] for o in range(rank) if o not in offset]
        start = _starts(x.shape, idx, g, index_map, slice_sizes, clamp=mode in (CLIP, PROMISE))
        if start is None:
            out[pos] = fill
            continue
        for ob, ib in zip(obatch, ibatch):
            start[ob] = g[ib]
        for a, o in zip(window, offset):
            start[a] += pos[o]
        out[pos] = x[tuple(start)]
    return out


def _combine(op, a, b):
    if op == "set":
        return b
    if a.dtype == bool:
        return (a | b) if op in ("add", "max") else (a & b)
    if op == "add":
        return a + b
    if op == "mul":
        return a * b
    return min(a, b) if op == "min" else max(a, b)


def scatter_ref(op):
    def ref(x, idx, u, dimension_numbers, mode=None, **_):
        window_dims, inserted, index_map, obatch, ibatch = (tuple(dimension_numbers) + ((), ()))[:5]
        window = [a for a in range(x.ndim) if a not in inserted and a not in obatch]
        extent = [1] * x.ndim
        for a, w in zip(window, window_dims):
            extent[a] = u.shape[w]
        out = np.array(x, copy=True)
        with np.errstate(over="ignore"):
            for pos in itertools.product(*map(range, u.shape)):
                g = [pos[d] for d in range(u.ndim) if d not in window_dims]
                start = _starts(x.shape, idx, g, index_map, extent, clamp=mode == CLIP)
                if start is None:
                    continue
                for ob, ib in zip(obatch, ibatch):
                    start[ob] = g[ib]
                for a, w in zip(window, window_dims):
                    start[a] += pos[w]
                t = tuple(start)
                out[t] = _combine(op, out[t], u[pos])
        return out

    return ref


# ----------------------------------------------------------------- arg makers


def operands_then_indices(n_operands, bounds, lo=-3.0, hi=3.0):
    """`n_operands` arrays of the case dtype, then int32 index arrays whose
    last-axis component j lies in bounds[j] (inclusive; beyond the operand to
    exercise the modes)."""

    def make(rng, shapes, dtype):
        arrays = [_rand(rng, s, dtype, lo, hi) for s in shapes[:n_operands]]
        for s in shapes[n_operands:]:
            cols = [rng.integers(b0, b1, size=tuple(s[:-1]) + (1,), endpoint=True) for b0, b1 in bounds]
            arrays.append(np.concatenate(cols, axis=-1).astype(np.int32).reshape(s))
        return arrays

    return make


def array_then_index(bound_lo, bound_hi):
    """A value array of the case dtype, then int32 index arrays in
    [bound_lo, bound_hi]."""

    def make(rng, shapes, dtype):
        out = [_rand(rng, shapes[0], dtype, -3.0, 3.0)]
        for s in shapes[1:]:
            out.append(rng.integers(bound_lo, bound_hi, size=tuple(s), endpoint=True).astype(np.int32))
        return out

    return make


def value_index_update(bound_lo, bound_hi):
    """x, int32 indices, then updates (case dtype)."""

    def make(rng, shapes, dtype):
        x = _rand(rng, shapes[0], dtype, -3.0, 3.0)
        i = rng.integers(bound_lo, bound_hi, size=tuple(shapes[1]), endpoint=True).astype(np.int32)
        u = _rand(rng, shapes[2], dtype, -3.0, 3.0)
        return [x, i, u]

    return make


# ----------------------------------------------------------------- records

GD = lax.GatherDimensionNumbers
SD = lax.ScatterDimensionNumbers

# (operand shape, indices shape, index bounds, dimension numbers, slice sizes, modes)
_GATHER_CASES = (
    # rows of a matrix (x[idx])
    ((4, 3), (5, 1), [(0, 3)], GD((1,), (0,), (0,)), (1, 3), (None, CLIP)),
    # rows, out of bounds both sides
    ((4, 3), (5, 1), [(-2, 6)], GD((1,), (0,), (0,)), (1, 3), (None, CLIP, PROMISE)),
    # 2-d windows at 2-d starts
    ((4, 5), (3, 2), [(-1, 4), (0, 5)], GD((1, 2), (), (0, 1)), (2, 3), (None, CLIP)),
    # elements x[i, j] with a 2-d batch of indices
    ((3, 4), (2, 3, 2), [(0, 2), (0, 3)], GD((), (0, 1), (0, 1)), (1, 1), (None,)),
    # columns: window before the batch axis, index map to axis 1
    ((3, 4), (2, 1), [(0, 3)], GD((0,), (1,), (1,)), (3, 1), (None,)),
    # batching dims: y[b, i] = x[b, idx[b, i]]
    ((2, 5), (2, 3, 1), [(0, 4)], GD((), (1,), (1,), (0,), (0,)), (1, 1), (None, CLIP)),
)


def _gather_records():
    cases = []
    for xs, ishape, bounds, dn, sizes, modes in _GATHER_CASES:
        for mode in modes:
            kw = {"dimension_numbers": dn, "slice_sizes": sizes}
            if mode is not None:
                kw["mode"] = mode
            cases.append((xs, ishape, bounds, kw))
    recs = []
    for k, (xs, ishape, bounds, kw) in enumerate(cases):
        # promise_in_bounds with out-of-bounds indices: no correct gradient (as JAX).
        recs.append(OpRecord(
            name=f"lax.gather[{k}]", path="lax.gather", ref=gather_ref,
            args_maker=operands_then_indices(1, bounds), dtypes=SLICE_DTYPES,
            differentiable=kw.get("mode") != PROMISE, cases=(Case((xs, ishape), (), kw),)))
    recs.append(OpRecord(
        name="lax.gather[fill_value]", path="lax.gather", ref=gather_ref,
        args_maker=operands_then_indices(1, [(-2, 6)]), dtypes=("float32", "int32"),
        cases=(Case(((4, 3), (5, 1)), (), {"dimension_numbers": GD((1,), (0,), (0,)), "slice_sizes": (1, 3),
                                           "fill_value": 7}),)))
    return tuple(recs)


# (operand, indices, updates shapes, index bounds, dims, modes)
_SCATTER_CASES = (
    # x.at[idx].op(u) on a vector, repeated and out-of-bounds indices
    ((5,), (6, 1), (6,), [(-2, 6)], SD((), (0,), (0,)), (None, CLIP, PROMISE)),
    # row updates of a matrix
    ((4, 3), (3, 1), (3, 3), [(0, 3)], SD((1,), (0,), (0,)), (None, CLIP)),
    # 2-d windows at 2-d starts
    ((4, 5), (2, 2), (2, 2, 2), [(-1, 4), (0, 4)], SD((1, 2), (), (0, 1)), (None, CLIP)),
    # batching dims: x[b, idx[b, i]] op= u[b, i]
    ((2, 5), (2, 3, 1), (2, 3), [(0, 4)], SD((), (1,), (1,), (0,), (0,)), (None,)),
)


def _operand_indices_updates(bounds):
    def make(rng, shapes, dtype):
        x = _rand(rng, shapes[0], dtype, -3.0, 3.0)
        cols = [rng.integers(b0, b1, size=tuple(shapes[1][:-1]) + (1,), endpoint=True) for b0, b1 in bounds]
        i = np.concatenate(cols, axis=-1).astype(np.int32).reshape(shapes[1])
        u = _rand(rng, shapes[2], dtype, -3.0, 3.0)
        return [x, i, u]

    return make


def _scatter_records():
    recs = []
    for fname, op, dtypes in (("scatter", "set", SLICE_DTYPES), ("scatter_add", "add", ARITH_DTYPES + ("bool",)),
                              ("scatter_min", "min", ARITH_DTYPES), ("scatter_max", "max", ARITH_DTYPES)):
        k = 0
        for xs, ishape, ushape, bounds, dn, modes in _SCATTER_CASES:
            for mode in modes:
                kw = {"dimension_numbers": dn}
                if mode is not None:
                    kw["mode"] = mode
                recs.append(OpRecord(
                    name=f"lax.{fname}[{k}]", path=f"lax.{fname}", ref=scatter_ref(op),
                    args_maker=_operand_indices_updates(bounds), dtypes=dtypes,
                    differentiable=mode != PROMISE, cases=(Case((xs, ishape, ushape), (), kw),)))
                k += 1
    # scatter-mul: repeated indices (values only; the updates gradient needs
    # unique indices, as JAX) and unique indices (differentiable).
    recs.append(OpRecord(
        name="lax.scatter_mul[repeated]", path="lax.scatter_mul", ref=scatter_ref("mul"),
        args_maker=_operand_indices_updates([(-1, 5)]), dtypes=("float32", "int32"), differentiable=False,
        cases=(Case(((5,), (6, 1), (6,)), (), {"dimension_numbers": SD((), (0,), (0,))}),)))
    recs.append(OpRecord(
        name="lax.scatter_mul[unique]", path="lax.scatter_mul", ref=lambda x, i, u, **kw: scatter_ref("mul")(x, i, u, **kw),
        args_maker=_unique_scatter_args(5), dtypes=("float32", "float64", "int32"),
        cases=(Case(((5,), (3, 1), (3,)), (), {"dimension_numbers": SD((), (0,), (0,)),
                                               "unique_indices": True}),)))
    recs.append(OpRecord(
        name="lax.scatter[unique]", path="lax.scatter", ref=lambda x, i, u, **kw: scatter_ref("set")(x, i, u, **kw),
        args_maker=_unique_scatter_args(5), dtypes=("float32", "float64"),
        cases=(Case(((5,), (3, 1), (3,)), (), {"dimension_numbers": SD((), (0,), (0,)),
                                               "unique_indices": True}),)))
    return tuple(recs)


def _unique_scatter_args(n):
    def make(rng, shapes, dtype):
        x = _rand(rng, shapes[0], dtype, -3.0, 3.0)
        i = rng.permutation(n)[: shapes[1][0]].astype(np.int32).reshape(shapes[1])
        u = _rand(rng, shapes[2], dtype, -3.0, 3.0)
        return [x, i, u]

    return make


# ----------------------------------------------------------------- jnp indexing


def _jnp_adapters():
    def getitem_traced(x, *idx, where=None):
        """x[...] with index arrays as arguments; `where` places them among static entries."""
        return jnp.asarray(x)[_place(tuple(jnp.asarray(i) for i in idx), where)]

    def at_op(x, i, v, op="set", where=None, **kw):
        return getattr(jnp.asarray(x).at[_place((jnp.asarray(i),), where)], op)(v, **kw)

    def at_get(x, i, where=None, **kw):
        return jnp.asarray(x).at[_place((jnp.asarray(i),), where)].get(**kw)

    def take(a, i, axis=None, mode=None, fill_value=None):
        return jnp.take(a, jnp.asarray(i), axis=axis, mode=mode, fill_value=fill_value)

    def take_along_axis(a, i, axis, mode=None):
        return jnp.take_along_axis(a, i, axis, mode=mode)

    def put_along_axis(a, i, v, axis):
        return jnp.put_along_axis(a, i, v, axis, inplace=False)

    return types.SimpleNamespace(**{k: v for k, v in locals().items() if callable(v)})


def _place(arrays, where):
    """The index tuple: `where` is a tuple of static entries with "I" marking
    where the index arrays go (in order); None means the arrays alone."""
    if where is None:
        return arrays[0] if len(arrays) == 1 else tuple(arrays)
    it = iter(arrays)
    return tuple(next(it) if w == "I" else w for w in where)


microjax_rs._gather_table_adapters = _jnp_adapters()


def _np_getitem(x, *idx, where=None):
    """NumPy's x[...] with JAX's rule for out-of-bounds index arrays: counted
    from the end once, then clamped into range (`x[i]` gathers with
    PROMISE_IN_BOUNDS, which clamps on CPU; JAX 0.10.2)."""
    items = _place(idx, where)
    items = items if isinstance(items, tuple) else (items,)
    ell = [k for k, e in enumerate(items) if e is Ellipsis]
    if ell:
        k = ell[0]
        n_axes = sum(1 for e in items if e is not None and e is not Ellipsis)
        items = items[:k] + (slice(None),) * (x.ndim - n_axes) + items[k + 1:]
    fixed, axis = [], 0
    for e in items:
        if isinstance(e, np.ndarray):
            n = x.shape[axis]
            e = np.clip(np.where(e < 0, e + n, e), 0, n - 1)
        fixed.append(e)
        if e is not None:
            axis += 1
    return np.array(x[tuple(fixed)])


def _np_at_op(x, i, v, op="set", where=None, mode=None, **_):
    idx = _place((i,), where)
    idx = idx if isinstance(idx, tuple) else (idx,)
    out = np.array(x, copy=True)
    # Drop out-of-bounds entries (JAX's default `drop` mode), then NumPy ufunc.at.
    axis, keep = 0, None
    arrays_pos = []
    for k, e in enumerate(idx):
        if isinstance(e, np.ndarray):
            n = x.shape[axis]
            ok = (e >= -n) & (e < n)
            keep = ok if keep is None else keep & ok
            arrays_pos.append(k)
        if e is not None:
            axis += 1
    (k,) = arrays_pos
    e = idx[k]
    safe = idx[:k] + (np.where(keep, e, 0),) + idx[k + 1:]
    vb = np.broadcast_to(v, np.shape(x[safe]))
    lead = sum(1 for d in idx[:k] if d is not None and not isinstance(d, np.ndarray))
    sel = (slice(None),) * lead + (keep,)
    idx = idx[:k] + (e[keep],) + idx[k + 1:]
    vb = vb[sel]
    if op == "set":
        out[idx] = vb
    else:
        {"add": np.add, "multiply": np.multiply, "min": np.minimum, "max": np.maximum}[op].at(out, idx, vb)
    return out


def _np_take(a, i, axis=None, mode=None, fill_value=None):
    if axis is None:
        a, axis = a.ravel(), 0
    n = a.shape[axis]
    if mode == "clip":  # no negative indexing in clip mode (NumPy and JAX)
        return np.take(a, np.clip(i, 0, n - 1), axis=axis)
    if mode == "wrap":
        return np.take(a, i % n, axis=axis)
    oob = (i < -n) | (i >= n)
    out = np.take(a, np.where(oob, 0, i), axis=axis)
    fill = _default_fill(a.dtype) if fill_value is None else fill_value
    m = oob.reshape((1,) * axis + oob.shape + (1,) * (a.ndim - axis - 1))
    return np.where(m, np.asarray(fill).astype(a.dtype), out)


def _np_take_along_axis(a, i, axis, mode=None):
    n = a.shape[axis]
    oob = (i < -n) | (i >= n)
    out = np.take_along_axis(a, np.where(oob, 0, np.where(i < 0, i + n, i)), axis)
    return np.where(oob, _default_fill(a.dtype), out)


def _np_put_along_axis(a, i, v, axis):
    out = np.array(a, copy=True)
    np.put_along_axis(out, i, v, axis)
    return out


GA = "_gather_table_adapters."
_FB = ("float32", "float64", "int32", "bool")


def _jnp_records():
    gi = [
        # (x shape, index shapes, index bounds, where)
        ((5,), [(3,)], (-5, 4), None),                          # x[i]
        ((5,), [(2, 3)], (-9, 7), None),                        # out of bounds: clamped
        ((4, 3), [(2,)], (0, 3), None),                         # rows
        ((4, 3), [(2,)], (0, 2), (slice(None), "I")),           # x[:, i]
        ((4, 5), [(2,), (2,)], (0, 3), ("I", "I")),             # x[i, j]
        ((4, 5), [(2, 1), (3,)], (0, 3), ("I", "I")),           # broadcast i, j
        ((3, 4, 5), [(2,), (2,)], (0, 2), ("I", slice(None), "I")),  # separated: to the front
        ((3, 4, 5), [(2,)], (0, 3), (1, slice(1, 3), "I")),     # static int + slice + array
        ((3, 4), [(2,)], (0, 2), (None, "I", slice(None, None, -1))),
        ((3, 4, 5), [(2,)], (-3, 2), (Ellipsis, "I")),
    ]
    recs = []
    for k, (xs, ishapes, (lo, hi), where) in enumerate(gi):
        recs.append(OpRecord(
            name=f"numpy.getitem[traced {k}]", path=GA + "getitem_traced", ref=_np_getitem,
            args_maker=array_then_index(lo, hi), dtypes=_FB if k != 1 else ("float32", "int32"),
            # out-of-bounds entries read a clamped element, but the gather's
            # transpose (PROMISE_IN_BOUNDS) drops their cotangent, as JAX:
            # finite differences do not apply
            differentiable=k != 1,
            cases=(Case((xs,) + tuple(ishapes), (), {"where": where}),)))
    # .at[...] with traced indices (repeated and out-of-bounds ones)
    for op, dtypes in (("set", ("float32", "int32")), ("add", ("float32", "float64", "int32")),
                       ("min", ("float32", "int32")), ("max", ("float32",)), ("multiply", ("int32",))):
        recs.append(OpRecord(
            name=f"numpy.at_{op}[traced]", path=GA + "at_op", ref=_np_at_op,
            args_maker=value_index_update(-6, 5), dtypes=dtypes, differentiable=op != "multiply",
            cases=(Case(((5,), (6,), (6,)), (), {"op": op}),
                   Case(((4, 3), (2,), (2, 3)), (), {"op": op}),
                   Case(((4, 3), (2,), ()), (), {"op": op, "where": (slice(None), "I")}))))
    recs += [
        OpRecord(name="numpy.at_get[traced,clip]", path=GA + "at_get",
                 ref=lambda x, i, mode=None: np.take(x, np.clip(np.where(i < 0, i + x.shape[0], i), 0,
                                                                 x.shape[0] - 1), axis=0),
                 args_maker=array_then_index(-7, 6), dtypes=("float32", "int32"),
                 cases=(Case(((5, 2), (4,)), (), {"mode": "clip"}),)),
        OpRecord(name="numpy.take[traced]", path=GA + "take", ref=_np_take,
                 args_maker=array_then_index(-6, 5), dtypes=("float32", "int32"),
                 cases=(Case(((4, 3), (5,)), (), {"axis": 1}), Case(((4, 3), (2, 2)), (), {"axis": 0}),
                        Case(((4, 3), (5,)), (), {"axis": 1, "mode": "clip"}),
                        Case(((4, 3), (5,)), (), {"axis": 0, "mode": "wrap"}),
                        Case(((6,), (5,)), (), {"fill_value": -1.0}))),
        OpRecord(name="numpy.take_along_axis", path=GA + "take_along_axis", ref=_np_take_along_axis,
                 args_maker=array_then_index(-5, 4), dtypes=("float32", "int32"),
                 cases=(Case(((3, 4), (3, 2)), (), {"axis": 1}), Case(((3, 4), (2, 4)), (), {"axis": 0}),
                        Case(((3, 4), (1, 4)), (), {"axis": 0}))),
        OpRecord(name="numpy.take_along_axis[in bounds]", path=GA + "take_along_axis", ref=_np_take_along_axis,
                 args_maker=array_then_index(-3, 2), dtypes=("float32", "int32"),
                 cases=(Case(((3, 4), (3, 5)), (), {"axis": 1}), Case(((3, 4), (2, 1)), (), {"axis": 0}))),
        OpRecord(name="numpy.put_along_axis", path=GA + "put_along_axis", ref=_np_put_along_axis,
                 args_maker=_put_along_args, dtypes=("float32", "int32"),
                 cases=(Case(((3, 4), (3, 1), (3, 1)), (), {"axis": 1}),)),
    ]
    return tuple(recs)


def _put_along_args(rng, shapes, dtype):
    a = _rand(rng, shapes[0], dtype, -3.0, 3.0)
    i = rng.integers(0, shapes[0][1], size=tuple(shapes[1])).astype(np.int32)
    v = _rand(rng, shapes[2], dtype, -3.0, 3.0)
    return [a, i, v]


RECORDS = _gather_records() + _scatter_records() + _jnp_records()
