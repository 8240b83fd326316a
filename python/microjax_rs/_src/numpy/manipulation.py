"""Array manipulation that selects elements: splitting (`split`,
`array_split`, ...), `repeat`, `roll` and `pad`."""
import builtins

import numpy as _np

from ..key_arrays import keys_through as _keys_through
from ... import core, lax
from ...core import ArrayImpl, Tracer
from .indexing import _slice_axis, _take_static
from .lax_numpy import _ravel_unless_axis, astype, broadcast_to, concatenate, ravel, reshape
from .ufuncs import add, multiply, remainder, subtract
from ...dtypes import x64_enabled as _x64
from .util import _arr, _aval, _canon_axis, _concat, _const


# -- splitting -----------------------------------------------------------------

def _split(ary, indices_or_sections, axis, strict):
    a = _arr(ary)
    av = _aval(a)
    axis = _canon_axis(axis, av.ndim)
    n = av.shape[axis]
    if isinstance(indices_or_sections, (int, _np.integer)):
        k = int(indices_or_sections)
        if k <= 0:
            raise ValueError("number sections must be larger than 0.")
        if strict and n % k:
            raise ValueError("array split does not result in an equal division")
        q, r = builtins.divmod(n, k)
        sizes = [q + 1] * r + [q] * (k - r)
        bounds = _np.cumsum([0] + sizes).tolist()
    else:
        pts = [int(i) for i in indices_or_sections]
        bounds = [0] + pts + [n]
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        lo = builtins.min(builtins.max(lo if lo >= 0 else lo + n, 0), n)
        hi = builtins.min(builtins.max(hi if hi >= 0 else hi + n, 0), n)
        out.append(_slice_axis(a, axis, lo, builtins.max(lo, hi)))
    return out


def split(ary, indices_or_sections, axis=0):
    """Split ``ary`` along ``axis`` into a list of sub-arrays.

    Args:
      ary: the array.
      indices_or_sections: an int N (N equal parts; the axis length must divide evenly) or a
        sequence of split points.
      axis: the axis to split.
    """
    return _split(ary, indices_or_sections, axis, strict=True)


def array_split(ary, indices_or_sections, axis=0):
    """Split ``ary`` along ``axis`` like ``split``, but an int N need not divide the axis evenly
    (the first parts get one element more).
    """
    return _split(ary, indices_or_sections, axis, strict=False)


def hsplit(ary, indices_or_sections):
    """Split ``ary`` horizontally: along axis 1 (axis 0 for 1-D arrays); see ``split``."""
    a = _arr(ary)
    return split(a, indices_or_sections, axis=0 if _aval(a).ndim == 1 else 1)


def vsplit(ary, indices_or_sections):
    """Split ``ary`` vertically, along axis 0; see ``split``."""
    return split(ary, indices_or_sections, axis=0)


def dsplit(ary, indices_or_sections):
    """Split ``ary`` along its third axis; see ``split``."""
    return split(ary, indices_or_sections, axis=2)


# -- repeating and rolling -----------------------------------------------------

def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    """Each element of ``a`` repeated ``repeats`` times along ``axis`` (of the flattened array when
    ``axis`` is None).

    Args:
      a: the array.
      repeats: an int, or one count per element along ``axis``.
      axis: the axis to repeat along.
      total_repeat_length: the result's length along ``axis``; required when ``repeats`` is
        traced (the counts set the output shape), as in JAX.
    """
    a, av, axis = _ravel_unless_axis(a, axis)
    n = av.shape[axis]
    if isinstance(repeats, Tracer):
        if total_repeat_length is None:
            raise core.ConcretizationTypeError(
                "jnp.repeat requires concrete repeats (they determine the output shape) "
                "unless total_repeat_length is given")
        return _repeat_traced(a, av, axis, repeats, total_repeat_length)
    reps = _np.asarray(repeats)
    if reps.shape == (1,):  # one count for every element, as a scalar (NumPy broadcasting)
        reps = reps.reshape(())
    if reps.ndim == 0:
        r = int(reps)
        if r < 0:
            raise ValueError("repeats may not contain negative values")
        shape = av.shape[:axis + 1] + (r,) + av.shape[axis + 1:]
        dims = tuple(range(axis + 1)) + tuple(range(axis + 2, av.ndim + 1))
        b = lax.broadcast_in_dim(a, shape, dims)
        out = lax.reshape(b, av.shape[:axis] + (n * r,) + av.shape[axis + 1:])
    else:
        if reps.shape != (n,):
            raise ValueError(f"repeats has shape {reps.shape}, expected ({n},) or a scalar")
        idx = _np.repeat(_np.arange(n), reps)
        out = _take_static(a, axis, idx.tolist())
    if total_repeat_length is not None:
        m = _aval(out).shape[axis]
        if m >= total_repeat_length:
            out = _slice_axis(out, axis, 0, total_repeat_length)
        else:
            # Pad with the last element by a broadcast (no Python list of
            # total_repeat_length indices: an absurd length is a budget error).
            last = _slice_axis(out, axis, m - 1, m)
            out = concatenate([out, repeat(last, total_repeat_length - m, axis=axis)], axis=axis)
    return out


def _repeat_traced(a, av, axis, repeats, total):
    """repeat with traced counts and a static output length: output position
    j takes element searchsorted(cumsum(repeats), j, 'right') (the last one
    past the end)."""
    from .lax_numpy import arange
    from .reductions import cumsum
    from .sorting import searchsorted
    from .indexing import take
    n = av.shape[axis]
    reps = _arr(repeats)
    if _aval(reps).shape in ((), (1,)):
        reps = broadcast_to(reshape(reps, ()), (n,))
    elif _aval(reps).shape != (n,):
        raise ValueError(f"repeats has shape {_aval(reps).shape}, expected ({n},) or a scalar")
    ends = cumsum(reps)
    idx = searchsorted(ends, arange(total, dtype=_aval(ends).dtype_name), side="right")
    idx = lax.min(idx, _const(n - 1, _aval(idx).dtype_name))
    return take(a, idx, axis=axis)


def roll(a, shift, axis=None):
    """``a`` with its elements shifted cyclically by ``shift`` along ``axis`` (an int or tuple;
    the flattened array when None). Elements shifted past the end come back at the start.
    """
    a = _arr(a)
    if isinstance(shift, Tracer):
        return _roll_dynamic(a, shift, axis)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), _aval(a).shape)
    shifts = (shift,) if _np.ndim(shift) == 0 else tuple(_np.asarray(shift).ravel())
    axes = (axis,) if _np.ndim(axis) == 0 else tuple(axis)
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    if len(axes) == 1 and len(shifts) > 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences of the same length")
    nd = _aval(a).ndim
    for s, ax in zip(shifts, axes):
        ax = _canon_axis(ax, nd)
        n = _aval(a).shape[ax]
        if n == 0:
            continue
        s = int(s) % n
        if s:
            a = _take_static(a, ax, [(i - s) % n for i in range(n)])
    return a


def _roll_dynamic(a, shift, axis):
    """roll with run-time shifts: a window of the array concatenated with itself."""
    if axis is None:
        return reshape(_roll_dynamic(ravel(a), shift, 0), _aval(a).shape)
    shift = _arr(shift)
    axes = (axis,) if isinstance(axis, (int, _np.integer)) else tuple(axis)
    shifts = shift if _aval(shift).ndim else broadcast_to(shift, (len(axes),)) if len(axes) > 1 else shift
    nd = _aval(a).ndim
    for i, ax in enumerate(axes):
        ax = _canon_axis(ax, nd)
        n = _aval(a).shape[ax]
        if n == 0:
            continue
        s = shifts if _aval(shifts).ndim == 0 else lax.squeeze(_slice_axis(shifts, 0, i, i + 1), (0,))
        s = lax.convert_element_type(s, "int32")
        n_c = _const(n, "int32")
        start = lax.sub(n_c, remainder(s, n_c))
        start = remainder(start, n_c)
        doubled = _concat([a, a], ax)
        starts = [_const(0, "int32")] * nd
        starts[ax] = start
        sizes = list(_aval(a).shape)
        a = lax.dynamic_slice(doubled, starts, sizes)
    return a


# -- padding -------------------------------------------------------------------

def _pad_index(i, n, mode, reflect_type="even"):
    """Source index of padded position i (i may be outside [0, n))."""
    if mode == "edge":
        return builtins.min(builtins.max(i, 0), n - 1)
    if mode == "wrap":
        return i % n
    if mode == "reflect":
        if n == 1:
            return 0
        period = 2 * (n - 1)
        j = i % period
        return j if j < n else period - j
    if mode == "symmetric":
        period = 2 * n
        j = i % period
        return j if j < n else period - 1 - j
    raise ValueError(mode)


_PAD_KWARGS = {
    "constant": {"constant_values"}, "edge": set(), "wrap": set(), "empty": set(),
    "linear_ramp": {"end_values"}, "reflect": {"reflect_type"}, "symmetric": {"reflect_type"},
    "maximum": {"stat_length"}, "minimum": {"stat_length"}, "mean": {"stat_length"}, "median": {"stat_length"},
}


def _pair_per_axis(value, nd, name, as_int=False):
    """A NumPy pad argument (scalar, pair, or one pair per axis) as an (nd, 2) list of lists."""
    if isinstance(value, (ArrayImpl, Tracer)):
        value = _np.asarray(value) if isinstance(value, ArrayImpl) else value
    if isinstance(value, Tracer):
        if _aval(value).ndim == 0:
            return [[value, value] for _ in range(nd)]
        raise TypeError(f"jnp.pad: {name} must be a scalar or static")
    arr = _np.asarray(value, dtype=object)
    try:
        arr = _np.broadcast_to(arr, (nd, 2))
    except ValueError:
        raise ValueError(f"jnp.pad: {name} has an invalid shape for an array of rank {nd}") from None
    return [[(int(v) if as_int and v is not None else v) for v in row] for row in arr.tolist()]


def _axes_to_pad(shape, pw, nd):
    """(axis, width before, width after, length) of each axis that `pw` pads
    (padding an axis leaves the others' lengths as they are)."""
    for ax in range(nd):
        lo, hi = int(pw[ax, 0]), int(pw[ax, 1])
        if lo == 0 and hi == 0:
            continue
        n = shape[ax]
        if n == 0:
            raise ValueError(f"can't extend empty axis {ax} using modes other than 'constant' or 'empty'")
        yield ax, lo, hi, n


def _pad_sides(a, pw, nd, piece):
    """`a` padded axis by axis with `piece(a, ax, side, w, n)`, the block of
    width `w` for `side` 0 (before) or 1 (after) of axis `ax` (length `n`)."""
    for ax, lo, hi, n in _axes_to_pad(_aval(a).shape, pw, nd):
        before = piece(a, ax, 0, lo, n) if lo else None
        after = piece(a, ax, 1, hi, n) if hi else None
        a = _concat([p for p in (before, a, after) if p is not None], ax)
    return a


def _pad_stat(a, pw, nd, mode, stat_length):
    from .reductions import max as _max, mean as _mean, min as _min
    from .sorting import median as _median
    from .ufuncs import round as _round
    lengths = _pair_per_axis(stat_length, nd, "stat_length", as_int=True)
    name = _aval(a).dtype_name
    integral = not name.startswith(("float", "bfloat"))

    def piece(a, ax, side, w, n):
        length = lengths[ax][side]
        length = n if length is None else builtins.min(builtins.max(length, 0), n)
        if length == 0:
            raise ValueError("stat_length of 0 yields no value for padding")
        region = _slice_axis(a, ax, 0, length) if side == 0 else _slice_axis(a, ax, n - length, n)
        if mode == "maximum":
            stat = _max(region, axis=ax, keepdims=True)
        elif mode == "minimum":
            stat = _min(region, axis=ax, keepdims=True)
        else:
            stat = (_mean if mode == "mean" else _median)(region, axis=ax, keepdims=True)
            stat = astype(_round(stat), name) if integral else astype(stat, name)
        shape = list(_aval(a).shape)
        shape[ax] = w
        return broadcast_to(stat, tuple(shape))

    return _pad_sides(a, pw, nd, piece)


def _pad_linear_ramp(a, pw, nd, end_values):
    from .lax_numpy import arange
    ends = _pair_per_axis(end_values, nd, "end_values")
    name = _aval(a).dtype_name
    integral = not name.startswith(("float", "bfloat"))
    ftype = "float64" if name == "float64" or (integral and _x64()) else (name if not integral else "float32")

    def piece(a, ax, side, w, n):
        edge = _slice_axis(a, ax, 0, 1) if side == 0 else _slice_axis(a, ax, n - 1, n)
        edge_f = astype(edge, ftype)
        end = ends[ax][side]
        end_f = astype(end, ftype) if isinstance(end, (ArrayImpl, Tracer)) else _const(float(end), ftype)
        # NumPy's linspace(end, edge, w, endpoint=False): end + (edge - end) * k / w.
        shape = [1] * nd
        shape[ax] = w
        steps = reshape(lax.div(astype(arange(w), ftype), _const(float(w), ftype)), tuple(shape))
        ramp = add(end_f, multiply(subtract(edge_f, end_f), steps))
        if side == 1:
            ramp = _take_static(ramp, ax, list(range(w - 1, -1, -1)))
        if integral:
            ramp = lax.floor(ramp)
        return astype(ramp, name)

    return _pad_sides(a, pw, nd, piece)


def _pad_reflect_odd(a, pw, nd, mode):
    """reflect / symmetric with reflect_type='odd': NumPy's chunked
    reflection, each chunk mirrored through the current edge value."""
    include_edge = mode == "symmetric"
    for ax, lo, hi, n in _axes_to_pad(_aval(a).shape, pw, nd):
        if n == 1 and not include_edge:
            a = _take_static(a, ax, [0] * (lo + 1 + hi))
            continue
        while lo > 0 or hi > 0:
            length = _aval(a).shape[ax]
            if include_edge:
                old = length // n * n
                offset = 1
            else:
                old = (length - 1) // (n - 1) * (n - 1)
                offset = 0
            if lo > 0:
                k = builtins.min(old, lo)
                chunk = _take_static(a, ax, list(range(k - offset, -offset, -1)))
                chunk = subtract(multiply(_broadcast_slice(a, ax, 0, k), 2), chunk)
                a = _concat([chunk, a], ax)
                lo -= k
                length += k
            if hi > 0:
                k = builtins.min(old, hi)
                first = length - 2 + offset
                chunk = _take_static(a, ax, list(range(first, first - k, -1)))
                chunk = subtract(multiply(_broadcast_slice(a, ax, length - 1, k), 2), chunk)
                a = _concat([a, chunk], ax)
                hi -= k
    return a


def _broadcast_slice(a, ax, i, k):
    """a's slice at index i of axis ax, repeated k times along that axis."""
    return _take_static(a, ax, [i] * k)


def _pad_callable(a, pw, nd, func, kwargs):
    from .lax_numpy import moveaxis
    from .vectorize import vectorize
    a = pad(a, pw, mode="constant")
    for ax in range(nd):
        width = (int(pw[ax, 0]), int(pw[ax, 1]))
        along = vectorize(lambda v, ax=ax, width=width: _arr(func(v, width, ax, kwargs)), signature="(n)->(n)")
        a = moveaxis(along(moveaxis(a, ax, -1)), -1, ax)
    return a


def pad(array, pad_width, mode="constant", **kwargs):
    """``array`` padded with ``pad_width`` values before and after each axis.

    Args:
      array: the array.
      pad_width: an int, a ``(before, after)`` pair, or one pair per axis.
      mode: NumPy's padding modes: ``'constant'`` (``constant_values=``), ``'edge'``, ``'wrap'``,
        ``'reflect'`` and ``'symmetric'`` (with ``reflect_type=``), ``'linear_ramp'``
        (``end_values=``), ``'maximum'``, ``'minimum'``, ``'mean'``, ``'median'`` (with
        ``stat_length=``), ``'empty'``, or a callable applied to each 1-D slice.
      kwargs: the options of the mode, as in NumPy.
    """
    a = _arr(array)
    av = _aval(a)
    nd = av.ndim
    pw = _np.asarray(pad_width, dtype=_np.int64) if not callable(pad_width) else None
    if isinstance(pad_width, Tracer) or pw is None:
        raise TypeError("jnp.pad: pad_width must be static")
    pw = _np.broadcast_to(pw, (nd, 2)) if pw.size in (1, 2) or pw.shape == (nd, 2) else None
    if pw is None:
        raise ValueError(f"jnp.pad: pad_width has an invalid shape for an array of rank {nd}")
    if (pw < 0).any():
        raise ValueError("index can't contain negative values")
    if callable(mode):
        return _pad_callable(a, pw, nd, mode, kwargs)
    mode = mode if isinstance(mode, str) else str(mode)
    if mode not in _PAD_KWARGS:
        raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad.")
    unsupported = set(kwargs) - _PAD_KWARGS[mode]
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    if mode in ("maximum", "minimum", "mean", "median"):
        return _pad_stat(a, pw, nd, mode, kwargs.get("stat_length"))
    if mode == "linear_ramp":
        return _pad_linear_ramp(a, pw, nd, kwargs.get("end_values", 0))
    if mode in ("reflect", "symmetric"):
        reflect_type = kwargs.get("reflect_type", "even")
        if reflect_type not in ("even", "odd"):
            raise ValueError(f"reflect_type must be 'even' or 'odd', got {reflect_type!r}")
        if reflect_type == "odd":
            return _pad_reflect_odd(a, pw, nd, mode)
    if mode == "empty":
        mode, kwargs = "constant", {}
    if mode == "constant":
        cv = kwargs.get("constant_values", 0)
        cvs = _np.broadcast_to(_np.asarray(cv) if not isinstance(cv, (ArrayImpl, Tracer)) else 0, (nd, 2))
        traced_cv = isinstance(cv, (ArrayImpl, Tracer)) and _aval(cv).ndim == 0
        name = _aval(a).dtype_name
        for ax in range(nd):
            for side in (0, 1):
                w = int(pw[ax, side])
                if w == 0:
                    continue
                fill = astype(cv, name) if traced_cv else _const(cvs[ax, side].item(), name)
                config = [(0, 0, 0)] * nd
                config[ax] = (w, 0, 0) if side == 0 else (0, w, 0)
                a = lax.pad(a, fill, config)
        return a
    if mode in ("edge", "wrap", "reflect", "symmetric"):
        for ax in range(nd):
            lo, hi = int(pw[ax, 0]), int(pw[ax, 1])
            if lo == 0 and hi == 0:
                continue
            n = _aval(a).shape[ax]
            if n == 0:
                raise ValueError(f"can't extend empty axis {ax} using modes other than 'constant' or 'empty'")
            idx = [_pad_index(i - lo, n, mode) for i in range(lo + n + hi)]
            a = _take_static(a, ax, idx)
        return a
    raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad.")


# -- append, insert, delete ------------------------------------------------------

def _obj_check(fn, obj, pos):
    if isinstance(obj, (list, tuple)):
        raise TypeError(f"{fn} requires ndarray or scalar arguments, got {type(obj)} at position {pos}.")


@_keys_through
def append(arr, values, axis=None):
    """`values` joined to the end of `arr` (both flattened when `axis` is None)."""
    arr, values = _arr(arr), _arr(values)
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis)


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """`arr` without the entries `obj` (index, index array, bool mask or slice)
    along `axis` (flattened when None). `obj` must be concrete unless
    `assume_unique_indices=True` (then a traced integer array works under jit)."""
    from .sorting import searchsorted
    from .indexing import take
    _obj_check("delete", obj, 1)
    a = _arr(arr)
    if axis is None:
        a, axis = ravel(a), 0
    axis = _canon_axis(axis, _aval(a).ndim)
    n = _aval(a).shape[axis]
    if isinstance(obj, slice):
        drop = set(range(n)[obj])
        return _take_static(a, axis, [i for i in range(n) if i not in drop])
    if assume_unique_indices:
        idx = ravel(_arr(obj))  # as NumPy: any shape of indices, flattened
        idx = astype(idx, "int32")
        idx = lax.select_n(lax.lt(idx, _const(0, "int32")), idx, lax.add(idx, _const(n, "int32")))
        m = _aval(idx).shape[0]
        idx = lax.sort(idx)
        shifted = lax.sub(idx, lax.iota("int32", m))
        k = lax.iota("int32", n - m)
        src = lax.add(k, astype(searchsorted(shifted, k, side="right"), "int32"))
        return take(a, src, axis=axis)
    if isinstance(obj, Tracer):
        raise core.ConcretizationTypeError(
            "jnp.delete: the 'obj' argument must be concrete (it determines the output shape); "
            "pass a static value, or assume_unique_indices=True for a traced index array")
    o = _np.asarray(obj)
    if o.dtype == bool:
        if o.shape != (n,):
            raise ValueError(f"boolean array argument obj to delete must be one dimensional and match "
                             f"the axis length of {n}")
        return _take_static(a, axis, [i for i in range(n) if not o[i]])
    if not _np.issubdtype(o.dtype, _np.integer):
        raise ValueError(f"np.delete(arr, obj): got obj.dtype={o.dtype}; must be integer or bool.")
    drop = set()
    for i in o.reshape(-1).tolist():
        if not -n <= i < n:
            raise ValueError(f"index {i} is out of bounds for axis {axis} with size {n}")
        drop.add(i % n)
    return _take_static(a, axis, [i for i in range(n) if i not in drop])


def insert(arr, obj, values, axis=None):
    """`values` inserted before the indices `obj` along `axis` (flattened when
    None); indices are clipped to [0, n] after wrapping negatives, and may be
    traced. `values` are cast to `arr`'s dtype."""
    from .sorting import argsort
    from .lax_numpy import moveaxis, zeros
    _obj_check("insert", obj, 1)
    a = _arr(arr)
    if axis is None:
        a, axis = ravel(a), 0
    nd = _aval(a).ndim
    axis = _canon_axis(axis, nd)
    n = _aval(a).shape[axis]
    dt = _aval(a).dtype_name
    if isinstance(obj, slice):
        idx = _arr(_np.arange(n, dtype=_np.int32)[obj])
    else:
        idx = _arr(obj)
        if not (_aval(idx).dtype_name.startswith(("int", "uint")) or _aval(idx).dtype_name == "bool"):
            raise ValueError(f"jnp.insert(): index array must be integer typed; got {obj}")
    idx = astype(idx, "int32")
    vals = astype(_arr(values), dt)
    vnd = _aval(vals).ndim
    if vnd < nd:
        vals = lax.reshape(vals, (1,) * (nd - vnd) + _aval(vals).shape)
    if _aval(idx).ndim == 0:
        vals = moveaxis(vals, 0, axis)
        m = _aval(vals).shape[axis]
        idx = lax.broadcast_in_dim(idx, (m,), ())
    else:
        if _aval(idx).ndim != 1:
            raise ValueError("index array argument obj to insert must be one dimensional or scalar")
        m = _aval(idx).shape[0]
    shape = list(_aval(a).shape)
    shape[axis] = m
    vals = broadcast_to(vals, tuple(shape))
    idx = lax.select_n(lax.lt(idx, _const(0, "int32")), idx, lax.add(idx, _const(n, "int32")))
    idx = lax.clamp(_const(0, "int32"), idx, _const(n, "int32"))
    order = astype(argsort(idx), "int32")
    # new value j goes to idx[j] + (its rank among the inserted values, stable)
    rank = lax.sort((order, lax.iota("int32", m)), num_keys=1)[1]
    new_pos = lax.add(idx, rank)
    # old entry i moves right by the number of inserted indices <= i
    cmp = lax.le(lax.broadcast_in_dim(idx, (n, m), (1,)), lax.broadcasted_iota("int32", (n, m), 0))
    old_pos = lax.add(lax.iota("int32", n), lax.reduce_sum(astype(cmp, "int32"), (1,)))
    out_shape = list(_aval(a).shape)
    out_shape[axis] = n + m
    out = moveaxis(zeros(tuple(out_shape), dt), axis, 0)
    out = out.at[old_pos].set(moveaxis(a, axis, 0), unique_indices=True)
    out = out.at[new_pos].set(moveaxis(vals, axis, 0), unique_indices=True)
    return moveaxis(out, 0, axis)


# -- block, unstack, permute_dims, resize, trim_zeros ---------------------------

def _block_depths(x, path=0):
    if isinstance(x, tuple):
        raise ValueError(f"jax.numpy.block does not allow tuples, got {x}")
    if isinstance(x, list):
        if not x:
            raise ValueError("jax.numpy.block does not allow empty list arguments")
        out = []
        for e in x:
            out.extend(_block_depths(e, path + 1))
        return out
    return [(path, _aval(_arr(x)).ndim)]


def block(arrays):
    """An array assembled from nested lists of blocks (NumPy's `block`): the
    innermost lists join along the last axis, the next along the one before."""
    if not isinstance(arrays, (list, tuple)):
        return _arr(arrays)
    info = _block_depths(arrays)
    depths = {d for d, _ in info}
    if len(depths) != 1:
        raise ValueError("Mismatched list depths in jax.numpy.block")
    depth = depths.pop()
    ndim = builtins.max([depth] + [k for _, k in info])

    def build(x, level):
        if isinstance(x, list):
            return concatenate([build(e, level + 1) for e in x], level - depth)
        x = _arr(x)
        shape = _aval(x).shape
        return lax.reshape(x, (1,) * (ndim - len(shape)) + tuple(shape))

    return build(arrays, 0)


def unstack(x, /, *, axis=0):
    """The slices of `x` along `axis`, as a tuple."""
    x = _arr(x)
    nd = _aval(x).ndim
    if nd == 0:
        raise ValueError("Unstack requires arrays with rank > 0, however a scalar array was passed.")
    axis = _canon_axis(axis, nd)
    return tuple(lax.squeeze(_slice_axis(x, axis, i, i + 1), (axis,)) for i in range(_aval(x).shape[axis]))


def permute_dims(a, /, axes):
    """`transpose(a, axes)` (the array API name)."""
    from .lax_numpy import transpose
    return transpose(a, axes)


def resize(a, new_shape):
    """`a` (flattened) repeated cyclically to fill `new_shape`; zeros when `a` is empty."""
    from .lax_numpy import tile, zeros
    if isinstance(new_shape, (int, _np.integer)):
        new_shape = (int(new_shape),)
    new_shape = tuple(int(d) for d in new_shape)
    if builtins.any(d < 0 for d in new_shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    x = ravel(_arr(a))
    size = 1
    for d in new_shape:
        size *= d
    n = _aval(x).shape[0]
    if n == 0 or size == 0:
        return zeros(new_shape, _aval(x).dtype_name)
    reps = -(-size // n)
    return reshape(lax.slice(tile(x, reps), (0,), (size,)), new_shape)


def trim_zeros(filt, trim="fb", axis=None):
    """`filt` without its leading ('f') / trailing ('b') all-zero slices along
    `axis` (default every axis). The input must be concrete (not traced)."""
    x = _arr(filt)
    if isinstance(x, Tracer):
        raise core.ConcretizationTypeError(
            "jnp.trim_zeros: the filt argument must be concrete (it determines the output shape)")
    nd = _aval(x).ndim
    if axis is None:
        axes = set(range(nd))
    elif isinstance(axis, (list, tuple)):
        axes = {_canon_axis(ax, nd) for ax in axis}
    else:
        axes = {_canon_axis(axis, nd)}
    t = trim.lower()
    if not axes or ("f" not in t and "b" not in t):
        return x
    nz = _np.asarray(x) != 0
    for ax in range(nd):
        if ax not in axes:
            continue
        mask = nz.any(axis=tuple(i for i in range(nd) if i != ax)) if nd > 1 else nz
        size = mask.shape[0]
        if not mask.any():
            lo = hi = 0
        else:
            lo = int(mask.argmax()) if "f" in t else 0
            hi = size - int(mask[::-1].argmax()) if "b" in t else size
        x = _slice_axis(x, ax, lo, hi)
    return x
