"""`jax.lax` functions composed from other primitives: `reciprocal`,
`full_like`, `empty`, `broadcast_like`, `collapse`, `batch_matmul`,
`index_take`, `tile`, `split`, `stack`, `unstack`, `scatter_sub`,
`scatter_apply`, `ragged_dot`, `ragged_dot_general`, `dtype` and
`shape_as_value`.

JAX binds its own primitives for `split`, `stack`, `tile` and `unstack`;
here they lower to slices, reshapes and concatenations (same values,
same derivatives)."""
from typing import NamedTuple, Sequence

import numpy as np

from .. import core, dtypes


def _lax():
    from .. import lax

    return lax


def _shape(x):
    return tuple(core.get_aval(x).shape)


def _dtype_name(x):
    return core.get_aval(x).dtype_name


def reciprocal(x):
    """`1 / x` elementwise (jax.lax.reciprocal); integers raise TypeError as in JAX."""
    lax = _lax()
    x = lax._arr(x)
    if type(x) in (bool, int, float):
        x = core.to_array(x, np.dtype("float32") if isinstance(x, float) else None, weak_type=True)
    aval = core.get_aval(x)
    if not dtypes.is_float_name(aval.dtype_name):
        raise TypeError(f"Integers cannot be raised to negative powers, got "
                        f"integer_pow({aval.dtype_name}{list(aval.shape)}, -1)")
    return lax.integer_pow(x, -1)


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    """An array of `fill_value` with `x`'s shape and dtype (or `shape`/`dtype`);
    keeps `x`'s weak type when `dtype` is not given."""
    lax = _lax()
    aval = core.get_aval(x)
    shape = aval.shape if shape is None else tuple(int(d) for d in shape)
    name = aval.dtype_name if dtype is None else dtypes.canonical_name(dtypes.dtype_name(dtype))
    weak = aval.weak_type and dtype is None
    fill = lax._convert_keep_weak(lax._arr(fill_value) if not isinstance(fill_value, (bool, int, float))
                                  else core.to_array(fill_value), name, weak)
    if core.get_aval(fill).ndim != 0:
        raise TypeError(f"full_like: fill_value must be a scalar, got shape {core.get_aval(fill).shape}")
    return lax.broadcast(fill, shape) if shape else fill


def empty(shape, dtype, *, out_sharding=None):
    """An array of `shape` and `dtype`; its contents are zeros (as JAX's)."""
    return _lax().full(shape, 0, dtype)


def broadcast_like(arr, like_arr):
    """`arr` broadcast (NumPy rules, trailing axes aligned) to `like_arr`'s shape."""
    lax = _lax()
    arr = lax._arr(arr)
    a, like = core.get_aval(arr), core.get_aval(like_arr)
    shape = like.shape
    bad = a.ndim > len(shape) or any(
        d not in (1, t) for d, t in zip(a.shape, shape[len(shape) - a.ndim:]))
    if bad:
        raise ValueError(f"Incompatible types for broadcasting: input type={a.dtype_name}"
                         f"{list(a.shape)} and requested type={a.dtype_name}{list(shape)}")
    lead = len(shape) - a.ndim
    keep = [i for i, (d, t) in enumerate(zip(a.shape, shape[lead:])) if d == t]
    squeezed = lax.reshape(arr, [a.shape[i] for i in keep])
    return lax.broadcast_in_dim(squeezed, shape, [lead + i for i in keep])


def collapse(operand, start_dimension, stop_dimension=None):
    """Merges the axes `start_dimension:stop_dimension` (Python slice bounds) into one."""
    lax = _lax()
    shape = _shape(operand)
    lo, hi, _ = slice(start_dimension, stop_dimension).indices(len(shape))
    if lo > hi:
        raise ValueError(f"Invalid dimension range passed to collapse: {shape}[{start_dimension}:{stop_dimension}]")
    size = int(np.prod(shape[lo:hi], dtype=np.int64))
    return lax.reshape(operand, shape[:lo] + (size,) + shape[hi:])


def batch_matmul(lhs, rhs, precision=None):
    """Matrix products over matching leading batch axes: `[..., m, k] @ [..., k, n]`."""
    lax = _lax()
    la, ra = core.get_aval(lhs), core.get_aval(rhs)
    if min(la.ndim, ra.ndim) < 2:
        raise ValueError(f"Arguments to batch_matmul must be at least 2D, got {la.ndim}, {ra.ndim}")
    if la.ndim != ra.ndim:
        raise ValueError(f"Arguments to batch_matmul must have same ndim, got {la.ndim}, {ra.ndim}")
    batch = tuple(range(la.ndim - 2))
    return lax.dot_general(lhs, rhs, (((la.ndim - 1,), (ra.ndim - 2,)), (batch, batch)), precision=precision)


def index_take(src, idxs, axes):
    """`src[idxs[0], idxs[1], ...]` along `axes` (indices wrap modulo the axis size);
    the indexed axes become one leading axis."""
    lax = _lax()
    src = lax._arr(src)
    shape = _shape(src)
    axes = tuple(int(a) for a in axes)
    idxs = [lax._arr(i) for i in idxs]
    if len(idxs) != len(axes):
        raise ValueError(f"index_take: got {len(idxs)} index arrays for {len(axes)} axes")
    cols = []
    for i, ax in zip(idxs, axes):
        n = lax._weak_like(shape[ax], i)
        cols.append(lax.expand_dims(lax.rem(lax.add(lax.rem(i, n), n), n), (1,)))
    indices = lax.concatenate(cols, 1)
    offset = tuple(d for d in range(len(shape)) if d not in axes)
    dnums = lax.GatherDimensionNumbers(
        offset_dims=tuple(range(1, 1 + len(offset))), collapsed_slice_dims=tuple(sorted(axes)),
        start_index_map=axes)
    sizes = tuple(1 if d in axes else shape[d] for d in range(len(shape)))
    return lax.gather(src, indices, dnums, sizes, mode="clip")


def tile(operand, reps):
    """`operand` repeated `reps[i]` times along axis `i` (one rep per axis)."""
    lax = _lax()
    operand = lax._arr(operand)
    shape = _shape(operand)
    reps = tuple(int(r) for r in reps)
    if len(reps) != len(shape):
        raise TypeError(f"reps length must be equal to the ndim of x, got len(reps)={len(reps)} "
                        f"and x.ndim={len(shape)}.")
    if any(r < 0 for r in reps):
        raise ValueError(f"reps must be nonnegative, got {reps}")
    inter = tuple(x for r, d in zip(reps, shape) for x in (r, d))
    bdims = tuple(range(1, 2 * len(shape), 2))
    out = lax.broadcast_in_dim(operand, inter, bdims)
    return lax.reshape(out, tuple(r * d for r, d in zip(reps, shape)))


def split(operand, sizes, axis=0):
    """Pieces of `sizes[i]` along `axis` (the sizes sum to that axis' length)."""
    lax = _lax()
    operand = lax._arr(operand)
    shape = _shape(operand)
    axis = lax._canon_axis(axis, len(shape))
    sizes = [int(s) for s in sizes]
    if any(s < 0 for s in sizes):
        raise ValueError(f"Sizes passed to split must be nonnegative, got {sizes}")
    if sum(sizes) != shape[axis]:
        raise ValueError(f"Sum of sizes {sum(sizes)} must be equal to dimension {axis} of the operand "
                         f"shape {list(shape)}")
    out, start = [], 0
    for s in sizes:
        out.append(lax.slice_in_dim(operand, start, start + s, axis=axis))
        start += s
    return out


def stack(operands, axis=0):
    """Joins equal-shaped, equal-dtype `operands` along a new `axis`."""
    lax = _lax()
    operands = [lax._arr(o) for o in operands]
    if not operands:
        raise IndexError("list index out of range")
    shapes = [_shape(o) for o in operands]
    if len(set(shapes)) != 1:
        raise ValueError("All input arrays must have the same shape. Got "
                         + ", ".join(str(s) for s in shapes) + ".")
    names = [_dtype_name(o) for o in operands]
    if len(set(names)) != 1:
        raise TypeError(f"lax.stack requires arguments to have the same dtypes, got {', '.join(names)}.")
    ndim = len(shapes[0]) + 1
    if not -ndim <= int(axis) < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    axis = int(axis) % ndim
    return lax.concatenate([lax.expand_dims(o, (axis,)) for o in operands], axis)


def unstack(x, axis=0):
    """The slices of `x` along `axis`, as a tuple (the axis removed)."""
    lax = _lax()
    x = lax._arr(x)
    shape = _shape(x)
    axis = lax._canon_axis(axis, len(shape))
    return tuple(lax.index_in_dim(x, i, axis, keepdims=False) for i in range(shape[axis]))


def scatter_sub(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
                unique_indices=False, mode=None):
    """XLA's scatter subtracting the updates (`scatter_add` of `-updates`)."""
    lax = _lax()
    operand = lax._arr(operand)
    if type(updates) in (bool, int, float):
        updates = lax._weak_like(updates, operand)
    return lax.scatter_add(operand, scatter_indices, lax.neg(lax._arr(updates)), dimension_numbers,
                           indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode)


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(),
                  indices_are_sorted=False, unique_indices=False, mode=None):
    """Applies the elementwise `func` to the entries of `operand` the scatter
    windows (of `update_shape`) reach; an entry reached `c` times gets `func`
    applied `c` times, as XLA's sequential scatter does."""
    lax = _lax()
    operand = lax._arr(operand)
    counts = lax.scatter_add(
        lax.full(_shape(operand), 0, np.int32), scatter_indices,
        lax.full(tuple(int(d) for d in update_shape), 1, np.int32), dimension_numbers,
        indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode)
    most = lax.reduce_max(counts, tuple(range(len(_shape(counts)))))

    def body(k, x):
        return lax.select(lax.gt(counts, k), func(x), x)

    return lax.fori_loop(np.int32(0), most, body, operand)


def dtype(x):
    """The NumPy dtype of a value or dtype-like `x` (Python scalars: the default
    type of their kind)."""
    if isinstance(x, (bool, int, float, complex)):
        return dtypes.np_dtype(dtypes.canonical_name(core.get_aval(x).dtype_name))
    if isinstance(x, (str, type, np.dtype)):
        return np.dtype(x) if not isinstance(x, str) or x != "bfloat16" else dtypes.np_dtype("bfloat16")
    if hasattr(x, "dtype"):
        return np.dtype(x.dtype)
    return dtypes.np_dtype(core.get_aval(x).dtype_name)


def shape_as_value(shape):
    """A static shape as an int32 array (JAX's helper for shape polymorphism)."""
    return np.asarray([int(d) for d in shape], dtype=np.int32)


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None, group_offset=None,
               out_sharding=None):
    """Grouped matrix product: `lhs[m, k]`'s rows come in consecutive groups of
    `group_sizes[g]` rows, group `g` multiplied by `rhs[g, k, n]`; rows past the
    last group give zeros."""
    lax = _lax()
    lhs, rhs, group_sizes = lax._arr(lhs), lax._arr(rhs), lax._arr(group_sizes)
    if group_offset is not None:
        raise NotImplementedError("ragged_dot: group_offset is not supported")
    ls, rs, gs = _shape(lhs), _shape(rhs), _shape(group_sizes)
    if len(ls) != 2 or len(rs) != 3 or len(gs) != 1:
        raise TypeError(f"ragged_dot expects lhs [m, k], rhs [g, k, n] and group_sizes [g], got shapes "
                        f"{ls}, {rs} and {gs}")
    if gs[0] != rs[0]:
        raise TypeError(f"expected rhs group dimension size to be {gs[0]}, got {rs[0]}.")
    prods = lax.dot_general(lhs, rhs, (((1,), (1,)), ((), ())), precision=precision,
                            preferred_element_type=preferred_element_type)  # [m, g, n]
    sizes = lax.convert_element_type(group_sizes, np.int32)
    ends = lax.cumsum(sizes, 0)
    starts = lax.sub(ends, sizes)
    rows = lax.broadcasted_iota(np.int32, (ls[0], gs[0]), 0)
    inside = lax.bitwise_and(lax.ge(rows, lax.broadcast(starts, (ls[0],))),
                             lax.lt(rows, lax.broadcast(ends, (ls[0],))))
    mask = lax.broadcast_in_dim(inside, _shape(prods), (0, 1))
    zero = lax.full(_shape(prods), 0, core.get_aval(prods).dtype_name)
    return lax.reduce_sum(lax.select(mask, prods, zero), (1,))


class RaggedDotDimensionNumbers(NamedTuple):
    """`ragged_dot_general`'s dimension numbers: `dot_dimension_numbers`
    (as `dot_general`'s, counting every axis of `rhs`), the one ragged axis of
    `lhs`, and the group axis of `rhs` (none when the ragged axis is a
    contracting or batch axis)."""

    dot_dimension_numbers: tuple
    lhs_ragged_dimensions: Sequence[int]
    rhs_group_dimensions: Sequence[int]


def _group_masks(lhs, axis, group_sizes):
    """One bool mask per group, shaped like `lhs`: the positions along `axis`
    in that group's consecutive run."""
    lax = _lax()
    shape = _shape(lhs)
    sizes = lax.convert_element_type(group_sizes, np.int32)
    ends = lax.cumsum(sizes, 0)
    starts = lax.sub(ends, sizes)
    pos = lax.broadcasted_iota(np.int32, shape, axis)
    masks = []
    for g in range(_shape(group_sizes)[0]):
        lo = lax.broadcast(lax.index_in_dim(starts, g, keepdims=False), shape)
        hi = lax.broadcast(lax.index_in_dim(ends, g, keepdims=False), shape)
        masks.append(lax.bitwise_and(lax.ge(pos, lo), lax.lt(pos, hi)))
    return masks


def ragged_dot_general(lhs, rhs, group_sizes, ragged_dot_dimension_numbers, precision=None,
                       preferred_element_type=None, group_offset=None, out_sharding=None):
    """`dot_general` with one ragged axis of `lhs` split into consecutive groups
    of `group_sizes` (a 1-d array): a non-contracting ragged axis multiplies
    group `g` by `rhs`'s slice `g` along its group axis; a contracting one gives
    one product per group (a new leading axis); a batch one is a plain
    `dot_general`."""
    lax = _lax()
    lhs, rhs, group_sizes = lax._arr(lhs), lax._arr(rhs), lax._arr(group_sizes)
    if group_offset is not None:
        raise NotImplementedError("ragged_dot_general: group_offset is not supported")
    if len(_shape(group_sizes)) != 1:
        raise NotImplementedError("ragged_dot_general: only 1-d group_sizes are supported")
    dn = RaggedDotDimensionNumbers(*ragged_dot_dimension_numbers)
    (lc, rc), (lb, rb) = dn.dot_dimension_numbers
    lc, rc, lb, rb = (tuple(int(a) for a in x) for x in (lc, rc, lb, rb))
    ragged = [int(a) for a in dn.lhs_ragged_dimensions]
    group = [int(a) for a in dn.rhs_group_dimensions]
    if len(ragged) != 1:
        raise TypeError(f"ragged_dot_general requires exactly one lhs ragged dimension, got {ragged}")
    r = ragged[0]
    out_dtype = preferred_element_type
    if r in lb:
        return lax.dot_general(lhs, rhs, ((lc, rc), (lb, rb)), precision=precision,
                               preferred_element_type=out_dtype)
    masks = _group_masks(lhs, r, group_sizes)
    zero = lax.full_like(lhs, 0)
    if r in lc:
        if group:
            raise TypeError("ragged_dot_general: a contracting ragged dimension takes no rhs group dimension")
        outs = [lax.dot_general(lax.select(m, lhs, zero), rhs, ((lc, rc), (lb, rb)), precision=precision,
                                preferred_element_type=out_dtype) for m in masks]
        return lax.stack(outs, 0)
    if len(group) != 1:
        raise TypeError("ragged_dot_general: a non-contracting ragged dimension needs one rhs group dimension")
    gdim = group[0]
    if _shape(rhs)[gdim] != len(masks):
        raise TypeError(f"expected rhs group dimension size to be {len(masks)}, got {_shape(rhs)[gdim]}.")
    shift = lambda axes: tuple(a - 1 if a > gdim else a for a in axes)  # noqa: E731
    total = None
    for g, m in enumerate(masks):
        rhs_g = lax.index_in_dim(rhs, g, axis=gdim, keepdims=False)
        part = lax.dot_general(lax.select(m, lhs, zero), rhs_g, ((lc, shift(rc)), (lb, shift(rb))),
                               precision=precision, preferred_element_type=out_dtype)
        total = part if total is None else lax.add(total, part)
    return total
