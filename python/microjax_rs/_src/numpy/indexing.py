"""Indexing (`x[idx]`, `x.at[idx].set/add/...`) and the selection functions
built on it (`take`, `take_along_axis`, `diagonal`, `select`, ...), on lax.

Concrete arrays outside any trace index through NumPy (exact, fast) while
every index is in range. Otherwise indexing lowers to lax: with only ints,
slices, `None` and `...`, in-range static entries become static slices and a
traced or out-of-range scalar index a `dynamic_slice` (which clamps it, as
JAX); any integer-array index makes the whole selection one `gather`
(NumPy's advanced-index layout) with mode PROMISE_IN_BOUNDS, which clamps, as
JAX's `x[idx]`. Out-of-bounds handling is always the primitive's: indices
reach it as written (negative ones counted from the end once), never clamped
or bounds-checked here.

`.at[...]` updates are one scatter each: in-range static indices through
NumPy's flat position map of the raveled array, others through the
advanced-index layout; out-of-bounds updates are dropped by default (mode
FILL_OR_DROP), as JAX. `take` and `take_along_axis` gather with mode `fill`
by default (NaN, the integer minimum, ...), as JAX.
"""
import builtins
import enum

import numpy as np

from ... import core, dtypes as _dt, lax
from ...config import config
from ...core import ArrayImpl, Tracer
from ...errors import NonConcreteBooleanIndexError
from ..indexing import Slice as _Slice
from .lax_numpy import (_ravel_unless_axis, asarray, astype, broadcast_to, expand_dims, full_like, moveaxis, ones_like,
                        ravel, reshape, zeros, zeros_like)
from .ufuncs import _where, add, clip, divide, less, multiply, negative, power, remainder
from .ufuncs import divmod as _divmod
from .util import _and, _arr, _aval, _canon_axis, _const, _is_bool, _promote_dtypes, _shape_tuple


# -- static selection along an axis --------------------------------------------

# `_take_static(x, axis, idx)` = x[..., idx, ...] for a static list of valid
# indices: a concatenation of contiguous runs (slice/rev) when there are few
# runs, else one gather.

def _runs(idx):
    """Splits idx into maximal runs of step +1 or -1: (start, stop, step)."""
    runs = []
    i, n = 0, len(idx)
    while i < n:
        j = i + 1
        step = 1
        if j < n and idx[j] - idx[i] in (1, -1):
            step = idx[j] - idx[i]
            while j < n and idx[j] - idx[j - 1] == step:
                j += 1
        runs.append((idx[i], idx[j - 1], step))
        i = j
    return runs


def _slice_prim(x, axis, lo, hi):
    av = _aval(x)
    start = [0] * av.ndim
    limit = list(av.shape)
    start[axis], limit[axis] = lo, hi
    if lo == 0 and hi == av.shape[axis]:
        return x
    return lax.slice(x, start, limit)


def _take_static(x, axis, idx):
    av = _aval(x)
    n = av.shape[axis]
    idx = [int(i) for i in idx]
    if idx == list(range(n)):
        return x
    if not idx:
        shape = list(av.shape)
        shape[axis] = 0
        return lax.broadcast_in_dim(_const(0, av.dtype_name), tuple(shape), ())
    runs = _runs(idx)
    if len(runs) <= 8:
        pieces = []
        for first, last, step in runs:
            lo, hi = (first, last + 1) if step == 1 else (last, first + 1)
            p = _slice_prim(x, axis, lo, hi)
            if step == -1:
                p = lax.rev(p, (axis,))
            pieces.append(p)
        return pieces[0] if len(pieces) == 1 else lax.concatenate(pieces, axis)
    return _take_gather(x, axis, idx)


def _take_gather(x, axis, idx):
    """x[..., idx, ...] for a static list of valid indices: one gather."""
    return _take_dynamic(x, axis, asarray(np.asarray(idx, dtype=np.int32)))


def _take_dynamic(x, axis, idx):
    """x[..., idx, ...] for an integer array `idx` clamped into range: one gather."""
    x = _arr(x)
    idx = _arr(idx)
    name = _aval(idx).dtype_name if _dt.is_int_name(_aval(idx).dtype_name) else "int32"
    n = _aval(x).shape[axis]
    idx = lax.convert_element_type(idx, name)
    idx = lax.max(lax.min(idx, _const(builtins.max(n - 1, 0), name)), _const(0, name))
    ndim = _aval(x).ndim
    items = [slice(None)] * axis + [idx] + [slice(None)] * (ndim - axis - 1)
    return _gather_items(x, items, "clip", None, False, False)


def _slice_axis(x, axis, start, stop, step=1):
    n = _aval(x).shape[axis]
    idx = list(range(n))[slice(start, stop, step)]
    if step == 1:
        if not idx:
            return _take_static(x, axis, [])
        return _slice_prim(x, axis, idx[0], idx[-1] + 1)
    if step != 1 and idx:
        try:
            av = _aval(x)
            if step > 0:
                s = [0] * av.ndim
                lim = list(av.shape)
                strides = [1] * av.ndim
                s[axis], lim[axis], strides[axis] = idx[0], idx[-1] + 1, step
                return lax.slice(x, s, lim, strides)
        except TypeError:
            pass
    return _take_static(x, axis, idx)


# -- x[idx] --------------------------------------------------------------------

def _is_traced(v):
    return isinstance(v, core.Tracer)


def _is_dynamic(v):
    """Tracers and jax Arrays of integers: indices that follow JAX's
    out-of-bounds modes (eager and jit agree) rather than NumPy's errors."""
    if _is_traced(v):
        return True
    return type(v) is core.ArrayImpl and core.get_aval(v).dtype_name != "bool"


def _has_tracer(idx):
    items = idx if isinstance(idx, tuple) else (idx,)
    return builtins.any(_is_dynamic(i) for i in items)


def _float_indexer_error(idx):
    """JAX's TypeError for a float (or complex) indexer, or None."""
    items = idx if isinstance(idx, tuple) else (idx,)
    for pos, it in enumerate(items):
        if type(it) is float:
            dtype = np.dtype(np.float64)
        elif hasattr(it, "dtype") and not isinstance(it, (slice, type(None))):
            dtype = np.dtype(it.dtype)
        else:
            continue
        if dtype.kind in "fc" or dtype.name == "bfloat16":
            return TypeError(f"Indexer must have integer or boolean type, got indexer with type {dtype.name} "
                             f"at position {pos}, indexer value {it}")
    return None


def _list_index_error(seq=()):
    """JAX's TypeError for a list used as an index: it suggests `arr[tuple(seq)]`
    when the list holds entries only a tuple index can (sequences, non-scalar
    arrays, slices, None, `...`), else `arr[array(seq)]`."""
    as_tuple = builtins.any(it is None or it is Ellipsis or isinstance(it, (slice, list, tuple))
                            or np.ndim(it) > 0 for it in seq)
    fix = "tuple" if as_tuple else "array"
    return TypeError("Using a non-tuple sequence for multidimensional indexing is not allowed; use "
                     f"`arr[{fix}(seq)]` instead of `arr[seq]`.")


def _reraise_unless_out_of_bounds(idx, e):
    """NumPy's IndexError `e` on a static index: JAX's error for a float indexer, `e` itself
    unless it is an out-of-bounds index (which the gather / scatter primitives handle)."""
    err = _float_indexer_error(idx)
    if err is not None:
        raise err from None
    for it in idx if isinstance(idx, tuple) else (idx,):
        if isinstance(it, str):
            raise TypeError(f"JAX does not support string indexing; got idx={it!r}") from None
    if str(e).startswith("too many indices for array:"):
        raise IndexError("Too many indices:" + str(e)[len("too many indices for array:"):]) from None
    if "out of bounds" not in str(e):
        raise e


def _index_count(it):
    """How many axes of x the index entry `it` consumes (None and `...` aside)."""
    if isinstance(it, (np.ndarray, core.ArrayImpl)) and np.dtype(it.dtype) == np.bool_:
        return it.ndim
    return 1


def _apply_dslices(x, idx):
    """(x, idx) with every `Slice` entry (`jax.ds`) applied to x along its
    axis and replaced by `:` in idx; (x, idx) unchanged when there is none."""
    items = idx if isinstance(idx, tuple) else (idx,)
    if not builtins.any(isinstance(it, _Slice) for it in items):
        return x, idx
    x = _arr(x)
    ndim = _aval(x).ndim
    consumed = builtins.sum(_index_count(it) for it in items if it is not None and it is not Ellipsis)
    axis, out = 0, []
    for it in items:
        if it is Ellipsis:
            axis += builtins.max(ndim - consumed, 0)
        elif isinstance(it, _Slice):
            if axis >= ndim:
                raise IndexError(f"Too many indices: array is {ndim}-dimensional, but {consumed} were indexed")
            x = _dslice_axis(x, axis, it)
            it = slice(None)
        if it is not None and it is not Ellipsis:
            axis += _index_count(it)
        out.append(it)
    return x, tuple(out)


def _dslice_axis(x, axis, s):
    """x[..., s, ...] along `axis` for a `Slice`: a dynamic slice (the start,
    counted from the end once if negative, is clamped so the window fits) or,
    with a stride, a gather of `start + stride * arange(size)` clamped into range."""
    if s.is_dynamic_size:
        raise TypeError(f"jax.ds: the size of a slice must be static, got {s.size!r}")
    n = _aval(x).shape[axis]
    start = s.start
    if s.is_dynamic_start:
        start = _wrap_negative(start, n)
        name = _aval(start).dtype_name
    else:
        start = int(start)
        start = start + n if start < 0 else start
        name = _index_dtype([n, builtins.abs(start)])
        start = _const(start, name)
    if s.stride == 1:
        if s.size > n:
            raise TypeError(f"slice size {s.size} is larger than the axis size {n}")
        zero = _const(0, name)
        starts = [start if k == axis else zero for k in range(_aval(x).ndim)]
        sizes = tuple(s.size if k == axis else m for k, m in enumerate(_aval(x).shape))
        return lax.dynamic_slice_p.bind(x, *starts, slice_sizes=sizes)
    steps = lax.convert_element_type(asarray(np.arange(s.size) * s.stride), name)
    return _take_dynamic(x, axis, add(start, steps))


def _check_static_bounds(shape, idx, normalize=True):
    """IndexError for a static integer index out of bounds (index arrays are
    not checked), as JAX with `jax_check_static_indices` on; without
    `normalize` a negative index is out of bounds too."""
    items = idx if isinstance(idx, tuple) else (idx,)
    used = [it for it in items if it is not None and it is not Ellipsis]
    if builtins.sum(_index_count(it) for it in used) > len(shape):
        return  # the general path raises JAX's too-many-indices error
    axis = 0
    for k, it in enumerate(items):
        if it is None:
            continue
        if it is Ellipsis:
            later = [j for j in items[k + 1:] if j is not None and j is not Ellipsis]
            axis = len(shape) - builtins.sum(_index_count(j) for j in later)
            continue
        if isinstance(it, (int, np.integer)) and not isinstance(it, (bool, np.bool_)):
            n = shape[axis]
            if not (-n if normalize else 0) <= int(it) < n:
                raise IndexError(f"index {int(it)} out of bounds for axis {axis} with size {n} "
                                 f"(normalize_indices={normalize})")
        axis += _index_count(it)


def getitem(x, idx):
    if type(idx) is list:  # as JAX: a list is not a tuple of indices (nor an index array)
        raise _list_index_error(idx)
    if config.read("jax_check_static_indices"):
        _check_static_bounds(_aval(x).shape, idx)
    x, idx = _apply_dslices(x, idx)
    if type(x) is core.ArrayImpl and core.current_trace() is None and not _has_tracer(idx):
        try:
            out = np.asarray(x)[_concrete_index(idx)]
        except IndexError as e:
            _reraise_unless_out_of_bounds(idx, e)
            # A static out-of-bounds index: clamped by the primitive, as JAX.
            return _getitem_lax(x, idx)
        return core.to_array(np.asarray(out), weak_type=x.weak_type)
    return _getitem_lax(x, idx)


def _concrete_index(idx):
    if isinstance(idx, tuple):
        return tuple(_concrete_index(i) for i in idx)
    if type(idx) is core.ArrayImpl:
        return np.asarray(idx)
    if isinstance(idx, list):
        return np.asarray(idx)
    return idx


def _is_scalar_int(v):
    if isinstance(v, (bool, np.bool_)):
        return False
    if isinstance(v, (int, np.integer)):
        return True
    if type(v) is core.ArrayImpl or _is_traced(v):
        av = core.get_aval(v)
        return av.ndim == 0 and (av.dtype_name.startswith("int") or av.dtype_name.startswith("uint"))
    return False


def _normalize(idx, ndim):
    """idx as a list of entries with Ellipsis expanded; bool masks become int arrays."""
    items = list(idx) if isinstance(idx, tuple) else [idx]
    out = []
    for it in items:
        if isinstance(it, list):
            it = np.asarray(it)
        if type(it) is core.ArrayImpl and core.get_aval(it).dtype_name == "bool":
            it = np.asarray(it)
        if _is_traced(it) and it.aval.dtype_name == "bool":
            raise NonConcreteBooleanIndexError(
                f"Array boolean indices must be concrete; got {it.aval.str_short()}. "
                f"Use where or the `where=` argument of reductions instead.")
        if isinstance(it, (bool, np.bool_)):
            raise IndexError("boolean scalar indices are not supported")
        if isinstance(it, str):
            raise TypeError(f"JAX does not support string indexing; got idx={it!r}")
        out.append(it)
    consumed = 0
    for it in out:
        if it is None or it is Ellipsis:
            continue
        if isinstance(it, np.ndarray) and it.dtype == bool:
            consumed += it.ndim
        else:
            consumed += 1
    if consumed > ndim:
        raise IndexError(f"Too many indices: array is {ndim}-dimensional, but {consumed} were indexed")
    n_ell = builtins.sum(1 for it in out if it is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if n_ell:
        # by identity: `list.index` would compare arrays with `==`
        k = next(i for i, it in enumerate(out) if it is Ellipsis)
        out = out[:k] + [slice(None)] * (ndim - consumed) + out[k + 1:]
    else:
        out = out + [slice(None)] * (ndim - consumed)
    # Boolean masks -> integer index arrays (one per masked dimension).
    res = []
    for it in out:
        if isinstance(it, np.ndarray) and it.dtype == bool:
            res.extend(np.nonzero(it))
        else:
            res.append(it)
    return res


def _is_advanced(it):
    if isinstance(it, np.ndarray):
        return True
    return _is_dynamic(it) and core.get_aval(it).ndim > 0


def _getitem_lax(x, idx, mode=None, fill_value=None, indices_are_sorted=False, unique_indices=False,
                 normalize=True):
    x, idx = _apply_dslices(x, idx)
    x = _arr(x)
    av = core.get_aval(x)
    items = _normalize(idx, av.ndim)
    _check_empty_axes(items, av.shape)
    basic_mode = mode is None or mode == "promise_in_bounds"
    if builtins.any(_is_advanced(it) for it in items) or not basic_mode or not normalize:
        # `x[idx]` gathers with PROMISE_IN_BOUNDS (clamped here, as JAX on
        # CPU); a fill value counts only with mode 'fill'. Without
        # `normalize` negative indices reach the gather as written.
        return _gather_items(x, items, "promise_in_bounds" if mode is None else mode, fill_value,
                             indices_are_sorted, unique_indices, normalize=normalize)
    d = 0
    for it in items:
        if it is None:
            x = expand_dims(x, d)
            d += 1
            continue
        n = core.get_aval(x).shape[d]
        if isinstance(it, slice):
            x = _apply_slice(x, d, it)
            d += 1
        elif _is_scalar_int(it) and not _is_traced(it) and type(it) is not core.ArrayImpl:
            i = int(it)
            i = i + n if i < 0 else i
            if 0 <= i < n:
                x = lax.squeeze(_slice_axis(x, d, i, i + 1), (d,))
            else:
                # Out of bounds: the raw index goes to dynamic_slice, which
                # clamps it (as JAX; nothing is clamped here).
                x = _index_in_dim(x, _const(i, _index_dtype([n, builtins.abs(i)])), d)
        elif _is_scalar_int(it):
            # A traced scalar: a clamped dynamic slice, as JAX (under vmap its
            # batching rule makes it one gather).
            x = _index_in_dim(x, _wrap_negative(it, n), d)
        else:
            err = _float_indexer_error(it)
            if err is not None:
                raise err
            raise IndexError(
                f"only integers, slices (`:`), ellipsis (`...`), None and integer or boolean arrays are valid "
                f"indices; got {it!r}")
    return x


def _check_empty_axes(items, shape):
    """JAX's IndexError for a scalar integer index into an axis of size 0
    (no element to select or clamp to); `items` aligned with the axes but None."""
    axis = 0
    for it in items:
        if it is None:
            continue
        if shape[axis] == 0 and not isinstance(it, slice) and np.ndim(it) == 0 and _is_scalar_int(it):
            raise IndexError(f"index is out of bounds for axis {axis} with size 0")
        axis += 1


def _index_in_dim(x, i, d):
    """x[..., i, ...] along axis `d` for a scalar index already counted from
    the end once: `dynamic_slice` bound directly (lax.dynamic_slice would
    count a still-negative index from the end again), which clamps it."""
    shape = core.get_aval(x).shape
    zero = _const(0, core.get_aval(i).dtype_name)
    starts = [i if k == d else zero for k in range(len(shape))]
    sizes = tuple(1 if k == d else n for k, n in enumerate(shape))
    return lax.squeeze(lax.dynamic_slice_p.bind(x, *starts, slice_sizes=sizes), (d,))


def _apply_slice(x, d, it):
    start, stop, step = (_static(v, "slice bound") for v in (it.start, it.stop, it.step))
    if step == 0:
        raise ValueError("slice step cannot be zero")
    return _slice_axis(x, d, start, stop, 1 if step is None else step)


def _index_dtype(sizes):
    return "int64" if builtins.any(n >= 2 ** 31 for n in sizes) else "int32"


def _index_array(it, n, d, normalize=True):
    """One advanced index (static or traced) as an integer array, negative
    entries counted from the end when `normalize` (as JAX's indexing)."""
    if isinstance(it, np.ndarray) or (not _is_traced(it) and type(it) is not core.ArrayImpl):
        a = np.asarray(it)
        if not np.issubdtype(a.dtype, np.integer):
            raise TypeError(f"Indexer must have integer or boolean type, got indexer with type {a.dtype}")
        a = np.where(a < 0, a + n, a) if normalize else a
        return asarray(a.astype(np.int64 if n >= 2 ** 31 else np.int32))
    name = core.get_aval(it).dtype_name
    if not (name.startswith("int") or name.startswith("uint")):
        raise TypeError(f"Indexer must have integer or boolean type, got {core.get_aval(it).str_short()}")
    return _wrap_negative(it, n) if normalize else it


class _GatherPlan:
    """NumPy's advanced-indexing layout for items aligned with x's axes
    (unit-step slices and advanced indices): the index array (broadcast shape
    B plus the index vector axis), the advanced axes, and where B lands. A
    partial slice is a window whose static start is one more index vector
    component (its axis in `index_map`, not collapsed)."""

    def __init__(self, x, items, contiguous=None, normalize=True):
        shape = core.get_aval(x).shape
        self.adv = [k for k, it in enumerate(items) if not isinstance(it, slice)]
        arrays = [_index_array(items[k], shape[k], k, normalize) for k in self.adv]
        shapes = [core.get_aval(a).shape for a in arrays]
        try:
            self.batch = tuple(np.broadcast_shapes(*shapes))
        except ValueError:
            raise IndexError("shape mismatch: indexing arrays could not be broadcast together with shapes "
                             + " ".join(str(s) for s in shapes)) from None
        name = _index_dtype([shape[k] for k in self.adv])
        nb = len(self.batch)
        cols = []
        for a, sh in zip(arrays, shapes):
            a = lax.convert_element_type(a, name)
            dims = tuple(range(nb - len(sh), nb))
            cols.append(lax.broadcast_in_dim(a, self.batch + (1,), dims))
        self.index_map = list(self.adv)
        sizes = list(shape)
        for k, it in enumerate(items):
            if isinstance(it, slice) and it != slice(None):
                start, stop, step = it.indices(shape[k])
                if step != 1:
                    raise NotImplementedError("x.at[idx] with traced indices supports slices of step 1 only")
                sizes[k] = builtins.max(stop - start, 0)
                cols.append(lax.broadcast_in_dim(_const(start, name), self.batch + (1,), ()))
                self.index_map.append(k)
        self.indices = cols[0] if len(cols) == 1 else lax.concatenate(cols, nb)
        if contiguous is None:
            contiguous = self.adv == list(range(self.adv[0], self.adv[-1] + 1))
        self.window = [k for k in range(len(shape)) if k not in self.adv]
        first = self.adv[0] if contiguous else 0
        self.offset_dims = tuple(j if j < first else j + nb for j in range(len(self.window)))
        self.slice_sizes = tuple(1 if k in self.adv else sizes[k] for k in range(len(shape)))


def _gather_items(x, items, mode, fill_value, indices_are_sorted, unique_indices, normalize=True):
    """x[items] as one gather: static slices and None are applied to x first
    (they only select), then every advanced index (ints and arrays) becomes a
    component of the index vector."""
    aligned = []
    d = 0
    for it in items:
        if it is None:
            x = expand_dims(x, d)
            aligned.append(slice(None))
        elif isinstance(it, slice):
            x = _apply_slice(x, d, it)
            aligned.append(slice(None))
        else:
            aligned.append(it)
        d += 1
    if not builtins.any(not isinstance(it, slice) for it in aligned):
        return x
    plan = _GatherPlan(x, aligned, normalize=normalize)
    if builtins.any(s > n for s, n in zip(plan.slice_sizes, x.shape)):
        # An advanced index into a size-0 axis (`zeros(0)[mask]`): no gather
        # fits, and an empty index selects nothing (as JAX, which skips the
        # gather for an empty result).
        if 0 in plan.batch:
            return zeros(_gather_result_shape(plan), x.dtype)
    dnums = lax.GatherDimensionNumbers(
        offset_dims=plan.offset_dims, collapsed_slice_dims=tuple(plan.adv),
        start_index_map=tuple(plan.index_map))
    return lax.gather(x, plan.indices, dnums, plan.slice_sizes, mode=mode, fill_value=fill_value,
                      indices_are_sorted=indices_are_sorted, unique_indices=unique_indices)


def _gather_result_shape(plan):
    """The shape `x[items]` has: the index batch, with the window sizes at
    the offset dims."""
    out = [None] * (len(plan.batch) + len(plan.window))
    for j, k in zip(plan.offset_dims, plan.window):
        out[j] = plan.slice_sizes[k]
    batch = iter(plan.batch)
    return tuple(next(batch) if s is None else s for s in out)


def _static(v, what):
    if v is None:
        return None
    if _is_traced(v):
        raise IndexError(
            f"Array slice indices must have static start/stop/step to be used with NumPy indexing syntax; "
            f"got a traced {what}. Use lax.dynamic_slice instead.")
    return int(v)


def _wrap_negative(i, n):
    i = _arr(i)
    return _where(less(i, 0), add(i, n), i)


def take_traced(a, indices, axis, mode=None, fill_value=None, unique_indices=False,
                indices_are_sorted=False):
    """take with traced indices: one gather (`fill` by default, as JAX)."""
    n = core.get_aval(a).shape[axis]
    idx = _arr(indices)
    if mode == "wrap":
        idx, mode = remainder(idx, n), "promise_in_bounds"
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to take is not supported.")
    elif mode is None:
        mode = "fill"
    items = [slice(None)] * axis + [idx] + [slice(None)] * (core.get_aval(a).ndim - axis - 1)
    # As JAX: only `fill` counts negative indices from the end.
    return _gather_items(a, items, mode, fill_value, indices_are_sorted, unique_indices,
                         normalize=mode == "fill")


# -- rewriting_take: x[idx] with JAX's keywords -----------------------------------


class IndexingStrategy(enum.Enum):
    """How `rewriting_take` lowers an index (JAX's internal enum): AUTO picks
    per index; STATIC_SLICE accepts only static ints and slices and
    DYNAMIC_SLICE only unit-step slices. microjax_rs checks those limits, then
    lowers every strategy the same way (the values agree)."""
    AUTO = "auto"
    GATHER = "gather"
    SCATTER = "scatter"
    STATIC_SLICE = "static_slice"
    DYNAMIC_SLICE = "dynamic_slice"


def _check_strategy(arr, idx, strategy, mode, normalize):
    items = idx if isinstance(idx, tuple) else (idx,)
    name = strategy.value
    shape = core.get_aval(arr).shape
    used = [it for it in items if it is not None and it is not Ellipsis]
    if len(used) > len(shape):
        raise IndexError(f"Too many indices: array is {len(shape)}-dimensional, but {len(used)} were indexed")
    if mode not in (None, "clip", "promise_in_bounds"):
        raise ValueError(f"{name} requires mode='promise_in_bounds' or mode='clip'")
    for pos, it in enumerate(items):
        if it is None or it is Ellipsis:
            continue
        if strategy is IndexingStrategy.DYNAMIC_SLICE:
            if isinstance(it, slice):
                if it.step not in (None, 1, -1):
                    raise TypeError(f"dynamic_slice: only unit steps supported in slice. Got {it} at position {pos}")
            elif not _is_scalar_int(it) and not isinstance(it, _Slice):
                raise TypeError(f"dynamic_slice: only scalar indices allowed. Got index of type {type(it)} at "
                                f"position {pos}")
        elif not (isinstance(it, slice)
                  or (isinstance(it, (int, np.integer)) and not isinstance(it, (bool, np.bool_)))):
            raise TypeError(f"static_slice: indices must be static scalars or slices. Got index of type "
                            f"{type(it)} at position {pos}")
    if mode != "clip" and strategy is IndexingStrategy.STATIC_SLICE:
        _check_static_bounds(shape, idx, normalize)


def rewriting_take(arr, idx, *, indices_are_sorted=False, unique_indices=False, mode=None, fill_value=None,
                   normalize_indices=True, out_sharding=None, strategy=IndexingStrategy.AUTO):
    """`arr[idx]` with the keywords of JAX's internal indexing function: the
    gather `mode` and `fill_value`, `normalize_indices=False` (negative
    indices are out of bounds rather than counted from the end), and an
    `IndexingStrategy` whose input limits are checked (static slicing: static
    ints and slices only; out-of-bounds ints raise IndexError unless
    mode='clip'; dynamic slicing: unit steps only)."""
    _no_sharding(out_sharding)
    if type(idx) is list:
        raise _list_index_error(idx)
    if strategy in (IndexingStrategy.STATIC_SLICE, IndexingStrategy.DYNAMIC_SLICE):
        _check_strategy(arr, idx, strategy, mode, normalize_indices)
    if mode is None and normalize_indices:
        return getitem(arr, idx)
    return _getitem_lax(arr, idx, mode, fill_value, indices_are_sorted, unique_indices,
                        normalize=normalize_indices)


# -- x.at[idx] ------------------------------------------------------------------


class AtIndexer:
    def __init__(self, x):
        self.x = x

    def __getitem__(self, idx):
        if type(idx) is list:
            raise _list_index_error(idx)
        return _AtRef(self.x, idx)


def _scatter_method(name, prim, values_of=None, onto_ones=None, doc=None):
    """The `x.at[idx].<name>(values, ...)` method scattering with `prim`: `values_of`
    maps the values first; with `onto_ones` the scatter goes into `ones_like(x)`
    and the method returns `onto_ones(x, scattered)`."""

    def method(self, values, indices_are_sorted=False, unique_indices=False, mode=None, out_sharding=None,
               wrap_negative_indices=True):
        if values_of is not None:
            values = values_of(values)
        if onto_ones is None:
            return self._scatter(prim, values, indices_are_sorted, unique_indices, mode, wrap_negative_indices,
                                 out_sharding)
        scattered = self._scatter(prim, values, indices_are_sorted, unique_indices, mode, wrap_negative_indices,
                                  out_sharding, x=ones_like(self.x))
        return onto_ones(self.x, scattered)

    method.__name__ = name
    method.__qualname__ = f"_AtRef.{name}"
    method.__doc__ = doc
    return method


class _AtRef:
    """`x.at[idx]`: every update is one scatter (static indices through a
    flat position map, traced ones through NumPy's advanced-index layout);
    scatters drop out-of-bounds updates by default (mode `drop`), as JAX.
    Every method takes JAX's keywords `indices_are_sorted`, `unique_indices`,
    `mode` and `wrap_negative_indices` (False: a negative index is out of
    bounds, handled by `mode`, rather than counted from the end);
    `out_sharding` is accepted and must be None (one device)."""

    def __init__(self, x, idx):
        self.x, self.idx = x, idx

    def get(self, indices_are_sorted=False, unique_indices=False, mode=None, fill_value=None,
            out_sharding=None, wrap_negative_indices=True):
        _no_sharding(out_sharding)
        if mode is None and wrap_negative_indices:
            # x[idx] (a fill value counts only with mode 'fill', as JAX)
            return getitem(self.x, self.idx)
        return _getitem_lax(self.x, self.idx, mode, fill_value, indices_are_sorted, unique_indices,
                            normalize=wrap_negative_indices)

    def _scatter(self, name, values, indices_are_sorted, unique_indices, mode, wrap_negative_indices,
                 out_sharding, x=None):
        _no_sharding(out_sharding)
        return _update(self.x if x is None else x, self.idx, values, name, mode, indices_are_sorted,
                       unique_indices, normalize=wrap_negative_indices)

    set = _scatter_method("set", "scatter")
    add = _scatter_method("add", "scatter_add")
    subtract = _scatter_method("subtract", "scatter_add", values_of=negative)
    multiply = _scatter_method("multiply", "scatter_mul")
    mul = multiply
    divide = _scatter_method("divide", "scatter_mul", onto_ones=divide,
                             doc="`x / scatter_mul(ones, idx, values)`, as JAX.")
    power = _scatter_method("power", "scatter_mul", onto_ones=power,
                            doc="`x ** scatter_mul(ones, idx, values)`, as JAX.")
    min = _scatter_method("min", "scatter_min")
    max = _scatter_method("max", "scatter_max")

    def apply(self, func, indices_are_sorted=False, unique_indices=False, mode=None, out_sharding=None,
              wrap_negative_indices=True):
        """`func` (elementwise) applied at the indexed positions, once per
        occurrence of a position among the indices (as NumPy's `ufunc.at`
        and JAX's scatter-apply); out-of-bounds indices follow `mode` (dropped
        by default). Like JAX, it has no derivative rule."""
        x = _arr(self.x)
        name = _aval(x).dtype_name
        counts = _update(zeros(_aval(x).shape, "int32"), self.idx, 1, "scatter_add", mode, indices_are_sorted,
                         unique_indices, normalize=wrap_negative_indices)
        _no_sharding(out_sharding)

        def step(j, y):
            out = func(y)
            if _aval(out).dtype_name != name:
                out = lax.convert_element_type(out, name)
            return _where(lax.gt(counts, j), out, y)

        if type(counts) is core.ArrayImpl:  # concrete: as many steps as the most repeated position
            for j in range(int(np.max(np.asarray(counts), initial=0))):
                x = step(_const(j, "int32"), x)
            return x
        top = lax.reduce_max(ravel(counts), (0,)) if _aval(counts).size else _const(0, "int32")
        _, x = lax.while_loop(lambda c: lax.lt(c[0], top), lambda c: (add(c[0], 1), step(c[0], c[1])),
                              (_const(0, "int32"), x))
        return x


def _no_sharding(out_sharding):
    if out_sharding is not None:
        raise NotImplementedError("out_sharding: microjax_rs runs on one device and takes no sharding")


def _broadcast_values(vals, shape):
    vshape = core.get_aval(vals).shape
    try:
        np.broadcast_shapes(vshape, shape)
        if len(vshape) > len(shape) or np.broadcast_shapes(vshape, shape) != tuple(shape):
            raise ValueError
    except ValueError:
        raise ValueError(f"shape mismatch: value array of shape {vshape} could not be broadcast to "
                         f"indexing result of shape {tuple(shape)}") from None
    return broadcast_to(vals, tuple(shape))


def _update(x, idx, values, name, mode=None, indices_are_sorted=False, unique_indices=False, normalize=True):
    x = _arr(x)
    av = core.get_aval(x)
    try:
        vals = _arr(values)
    except OverflowError:
        # A Python int beyond the default integer type that the target's
        # dtype holds (2**32 - 1 into uint32) is taken in that dtype, as JAX.
        if type(values) is not int or not _dt.is_int_name(av.dtype_name):
            raise
        info = np.iinfo(_dt.np_dtype(av.dtype_name))
        if not info.min <= values <= info.max:
            raise
        vals = asarray(values, dtype=av.dtype_name)
    if core.get_aval(vals).dtype_name != av.dtype_name:
        vals = lax.convert_element_type(vals, av.dtype_name)
    op = getattr(lax, name)
    pos = None
    if not _has_tracer(idx) and normalize:
        # Static indices: NumPy itself gives the flat position of every
        # indexed element (all index kinds); an out-of-bounds one goes to the
        # scatter below, whose mode drops (or clamps) it.
        try:
            pos = np.asarray(np.arange(av.size).reshape(av.shape)[_concrete_index(idx)])
        except IndexError as e:
            _reraise_unless_out_of_bounds(idx, e)
    if pos is not None:
        upd = reshape(_broadcast_values(vals, pos.shape), (pos.size,))
        flat = pos.reshape(-1, 1).astype(np.int64 if av.size >= 2 ** 31 else np.int32)
        unique = unique_indices or np.unique(flat).size == flat.size
        dnums = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                            scatter_dims_to_operand_dims=(0,))
        out = op(ravel(x), asarray(flat), upd, dnums, mode=mode, unique_indices=unique,
                 indices_are_sorted=indices_are_sorted or bool(np.all(np.diff(flat[:, 0]) > 0)))
        return lax.reshape(out, av.shape)
    items = _normalize(idx, av.ndim)
    kept = [it for it in items if it is not None]
    if pos is None and normalize and not _has_tracer(idx) and builtins.all(
            isinstance(it, (slice, int, np.integer)) for it in kept):
        # Static scalar indices (out of bounds: NumPy refused them) name one
        # position each: unique, as JAX marks them.
        unique_indices = True
    contiguous = _advanced_contiguous(items)
    plan = _GatherPlan(x, kept, contiguous=contiguous, normalize=normalize)
    # x[idx]'s shape (None axes included), which values broadcast to.
    layout = _result_layout(items, av.shape, plan.batch, contiguous)
    full_shape = tuple(size for size, _ in layout)
    upd = reshape(_broadcast_values(vals, full_shape), tuple(size for size, new in layout if not new))
    dnums = lax.ScatterDimensionNumbers(update_window_dims=plan.offset_dims,
                                        inserted_window_dims=tuple(plan.adv),
                                        scatter_dims_to_operand_dims=tuple(plan.index_map))
    return op(x, plan.indices, upd, dnums, mode=mode, unique_indices=unique_indices,
              indices_are_sorted=indices_are_sorted)


def _advanced_contiguous(items):
    """NumPy's rule: advanced indices separated by a slice or None put the
    broadcast axes first."""
    adv = [k for k, it in enumerate(items) if it is not None and not isinstance(it, slice)]
    return not adv or adv == list(range(adv[0], adv[-1] + 1))


def _result_layout(items, shape, batch, contiguous):
    """(size, inserted by None) per axis of x[items], items aligned with x's
    axes except for None."""
    out = [] if contiguous else [(b, False) for b in batch]
    axis = 0
    placed = not contiguous
    for it in items:
        if it is None:
            out.append((1, True))
            continue
        if isinstance(it, slice):
            out.append((len(range(*it.indices(shape[axis]))), False))
        elif not placed:
            out.extend((b, False) for b in batch)
            placed = True
        axis += 1
    return out


# -- take, diagonals, select ---------------------------------------------------

def diagonal(a, offset=0, axis1=0, axis2=1):
    """The ``offset``-th diagonal of the matrices formed by ``axis1`` and ``axis2`` of ``a``; the
    diagonal becomes the last axis of the result.
    """
    a = _arr(a)
    av = _aval(a)
    if av.ndim < 2:
        raise ValueError("diagonal requires an array of at least two dimensions.")
    a1, a2 = _canon_axis(axis1, av.ndim), _canon_axis(axis2, av.ndim)
    if a1 == a2:
        raise ValueError("axis1 and axis2 must not be equal")
    x = moveaxis(a, (a1, a2), (-2, -1))
    s = _aval(x).shape
    n, m = s[-2], s[-1]
    k = int(offset)
    L = builtins.max(0, builtins.min(n, m - k) if k >= 0 else builtins.min(n + k, m))
    if L == 0:
        return zeros(s[:-2] + (0,), av.dtype_name)
    # Row i of the masked matrix keeps element (i, i + k): a row selection then a masked reduce.
    rows = list(range(0, L)) if k >= 0 else list(range(-k, -k + L))
    x = _take_static(x, len(s) - 2, rows)
    cols = [r + k for r in rows]
    return _take_diag_cols(x, cols)


def _take_diag_cols(x, cols):
    """out[..., i] = x[..., i, cols[i]] (static cols)."""
    s = _aval(x).shape
    L, m = s[-2], s[-1]
    mask = np.zeros((L, m), bool)
    mask[np.arange(L), cols] = True
    mb = lax.broadcast_in_dim(core.to_array(mask), s, (len(s) - 2, len(s) - 1))
    if _is_bool(x):
        return lax.reduce_max(_and(mb, x), (len(s) - 1,))
    return lax.reduce_sum(lax.select_n(mb, zeros_like(x), x), (len(s) - 1,))


def diag(v, k=0):
    """The ``k``-th diagonal of a 2-D ``v`` as a 1-D array, or, for a 1-D ``v``, a 2-D array with
    ``v`` on its ``k``-th diagonal and zeros elsewhere.
    """
    v = _arr(v)
    av = _aval(v)
    if av.ndim == 2:
        return diagonal(v, offset=k)
    if av.ndim != 1:
        raise ValueError("diag input must be 1d or 2d")
    n = av.shape[0]
    N = n + builtins.abs(int(k))
    k = int(k)
    if n == 0:
        return zeros((N, N), av.dtype_name)
    # out[i, j] = v[i] where j = i + k (k >= 0), v[j] where i = j - k (k < 0).
    if k >= 0:
        idx = [builtins.min(i, n - 1) for i in range(N)]
        vb = lax.broadcast_in_dim(_take_static(v, 0, idx), (N, N), (0,))
    else:
        idx = [builtins.min(j, n - 1) for j in range(N)]
        vb = lax.broadcast_in_dim(_take_static(v, 0, idx), (N, N), (1,))
    mask = lax.eq(lax.add(lax.broadcasted_iota("int32", (N, N), 0), _const(k, "int32")),
                  lax.broadcasted_iota("int32", (N, N), 1))
    return lax.select_n(mask, zeros_like(vb), vb)


def diagflat(v, k=0):
    """A 2-D array with the flattened ``v`` on its ``k``-th diagonal and zeros elsewhere."""
    return diag(ravel(_arr(v)), k)


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """``a`` (2-D) with its main diagonal set to ``val`` (cast to ``a``'s dtype).

    Arrays are immutable, so ``inplace=False`` is required (the default ``inplace=True`` raises
    NotImplementedError, as in JAX); the filled copy is returned.
    """
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, so jnp.fill_diagonal needs inplace=False")
    a = _arr(a)
    av = _aval(a)
    if av.ndim != 2:
        raise ValueError("fill_diagonal: only 2D arrays are supported")
    mask = lax.eq(lax.broadcasted_iota("int32", av.shape, 0), lax.broadcasted_iota("int32", av.shape, 1))
    # val takes the array's dtype (a Python float must not promote an int array)
    return _where(mask, astype(val, av.dtype_name), a)


def take(a, indices, axis=None, out=None, mode=None, unique_indices=False, indices_are_sorted=False,
         fill_value=None):
    """Elements of ``a`` at ``indices`` along ``axis`` (of the flattened array when ``axis`` is None).

    Args:
      a: the source array.
      indices: integer indices (any shape; the result takes their shape in place of ``axis``).
      axis: the axis to index.
      out: must be None.
      mode: out-of-bounds handling: ``None``/``'fill'`` (default) returns ``fill_value``,
        ``'clip'`` clamps, ``'wrap'`` wraps around; negative indices count from the end.
      unique_indices, indices_are_sorted: hints for the gather; accepted and passed along.
      fill_value: the out-of-bounds value (default NaN for floats, the integer minimum for
        signed ints, the maximum for unsigned, True for bool).

    Example:
      >>> import microjax_rs.numpy as jnp
      >>> jnp.take(jnp.array([10, 20, 30]), jnp.array([2, 0]))
      Array([30, 10], dtype=int32)
    """
    a, av, axis = _ravel_unless_axis(a, axis)
    if isinstance(indices, Tracer):
        return take_traced(a, indices, axis, mode, fill_value, unique_indices, indices_are_sorted)
    idx = np.asarray(indices)
    n = av.shape[axis]
    if n and np.issubdtype(idx.dtype, np.integer):
        # One gather whose mode handles out-of-bounds indices (as JAX).
        return take_traced(a, idx, axis, mode, fill_value, unique_indices, indices_are_sorted)
    if mode == "clip":
        flat = np.clip(idx, 0, n - 1)
    elif mode == "wrap":
        flat = idx % n
    else:
        flat = np.where(idx < 0, idx + n, idx)
    flat_r = np.clip(flat.ravel(), 0, builtins.max(n - 1, 0))
    out = _take_static(a, axis, flat_r.tolist())
    if mode in (None, "fill"):
        oob = ((flat < 0) | (flat >= n)).ravel()
        if oob.any():
            fill = fill_value
            if fill is None:
                name = av.dtype_name
                fill = np.nan if _dt.is_float_name(name) else (
                    True if name == "bool" else int(np.iinfo(np.dtype(name)).min if name.startswith("int")
                                                    else np.iinfo(np.dtype(name)).max))
            shape = _aval(out).shape
            m = lax.broadcast_in_dim(core.to_array(oob), shape, (axis,))
            out = lax.select_n(m, out, broadcast_to(_const(fill, av.dtype_name), shape))
    new_shape = av.shape[:axis] + idx.shape + av.shape[axis + 1:]
    return lax.reshape(out, new_shape)


def _along_axis_items(arr, indices, axis, name):
    """Advanced indices selecting `indices` along `axis` and every other axis
    elementwise (index and array broadcast against each other off `axis`)."""
    arr, indices = _arr(arr), _arr(indices)
    av, iv = _aval(arr), _aval(indices)
    if not _dt.is_int_name(iv.dtype_name):
        raise TypeError(f"{name} indices must be of integer type, got {iv.dtype_name}")
    if av.ndim != iv.ndim:
        raise ValueError(f"indices and arr must have the same number of dimensions; "
                         f"{iv.ndim} vs. {av.ndim}")
    axis = _canon_axis(axis, av.ndim)
    shape = []
    for d, (n, m) in enumerate(zip(av.shape, iv.shape)):
        if d == axis:
            shape.append(m)
        elif n == m or n == 1 or m == 1:
            shape.append(builtins.max(n, m) if n and m else 0)
        else:
            raise ValueError(f"{name}: arr shape {av.shape} and indices shape {iv.shape} do not broadcast "
                             f"off axis {axis}")
    arr_shape = tuple(av.shape[axis] if d == axis else s for d, s in enumerate(shape))
    arr = broadcast_to(arr, arr_shape)
    indices = broadcast_to(indices, tuple(shape))
    items = []
    for d in range(av.ndim):
        if d == axis:
            items.append(indices)
        else:
            r = [1] * av.ndim
            r[d] = shape[d]
            items.append(np.arange(shape[d], dtype=np.int32).reshape(r))
    return arr, items


def take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None, *, wrap_negative_indices=None):
    """`arr` at `indices` along `axis` (one gather; out-of-bounds indices
    `fill` by default, as JAX). Negative indices count from the end when
    `wrap_negative_indices` is True (by default: unless mode is
    'promise_in_bounds'); else they are out of bounds, handled by `mode`."""
    if axis is None:
        arr, axis = ravel(arr), 0
        indices = ravel(indices)
    # As JAX: by default negative indices wrap, except under mode 'promise_in_bounds'.
    wrap = mode != "promise_in_bounds" if wrap_negative_indices is None else bool(wrap_negative_indices)
    if mode == "one_hot":
        return _take_along_axis_one_hot(arr, indices, axis, wrap)
    arr, items = _along_axis_items(arr, indices, axis, "take_along_axis")
    return _gather_items(arr, items, "fill" if mode is None else mode, fill_value, False, False, normalize=wrap)


def _take_along_axis_one_hot(arr, indices, axis, wrap=True):
    """take_along_axis with mode='one_hot', as JAX: each result is the sum
    over the axis of `arr` times a one-hot row of the (negative-wrapped)
    index, so an out-of-bounds index gives 0 and a NaN anywhere in the row
    gives NaN."""
    _along_axis_items(arr, indices, axis, "take_along_axis")  # the argument checks
    arr, indices = _arr(arr), _arr(indices)
    axis = _canon_axis(axis, _aval(arr).ndim)
    n = _aval(arr).shape[axis]
    x = expand_dims(moveaxis(arr, axis, -1), -2)  # (..., 1, n)
    idx = moveaxis(indices, axis, -1)
    idx = _wrap_negative(idx, n) if wrap else idx
    name = _aval(idx).dtype_name
    hot_shape = _aval(idx).shape + (n,)
    hot = lax.eq(lax.broadcast_in_dim(idx, hot_shape, tuple(range(len(hot_shape) - 1))),
                 lax.broadcasted_iota(name, hot_shape, len(hot_shape) - 1))  # (..., m, n)
    shape = tuple(np.broadcast_shapes(_aval(x).shape, hot_shape))
    x, hot = broadcast_to(x, shape), broadcast_to(hot, shape)
    if _aval(arr).dtype_name == "bool":
        out = lax.reduce_or(lax.bitwise_and(x, hot), (len(shape) - 1,))
    else:
        out = lax.reduce_sum(lax.mul(x, lax.convert_element_type(hot, _aval(arr).dtype_name)), (len(shape) - 1,))
    return moveaxis(out, -1, axis)


def put_along_axis(arr, indices, values, axis, inplace=True, mode=None):
    """`arr` with `values` written at `indices` along `axis` (one scatter).
    JAX arrays are immutable: `inplace=False` is required, as in JAX."""
    if inplace:
        raise ValueError("jax.numpy.put_along_axis cannot modify arrays in-place; pass inplace=False")
    if axis is None:
        shape = _aval(_arr(arr)).shape
        out = put_along_axis(ravel(arr), ravel(indices), ravel(values), 0, inplace=False, mode=mode)
        return reshape(out, shape)
    arr = _arr(arr)
    _, items = _along_axis_items(arr, indices, axis, "put_along_axis")
    return _update(arr, tuple(items), values, "scatter", mode)


def select(condlist, choicelist, default=0):
    """Elementwise choice among ``choicelist``: the value of the first ``choicelist[i]`` whose
    ``condlist[i]`` is true, else ``default``. Conditions and choices broadcast together.
    """
    if len(condlist) != len(choicelist):
        raise ValueError(f"condlist must have length equal to choicelist ({len(condlist)} vs {len(choicelist)})")
    if not condlist:
        raise ValueError("condlist must be non-empty")
    out = default
    for c, v in reversed(list(zip(condlist, choicelist))):
        c = _arr(c)
        if not _is_bool(c):
            raise TypeError(f"condlist entries must be boolean, got {_aval(c).dtype_name}")
        out = _where(c, v, out)
    return _arr(out)


def piecewise(x, condlist, funclist, *args, **kw):
    """A piecewise function of ``x``: where ``condlist[i]`` holds, the result is ``funclist[i]``
    applied to ``x`` (or the constant ``funclist[i]``); an extra last entry of ``funclist`` is
    the value where no condition holds. ``args``/``kw`` are passed to the functions.
    Every function is evaluated on the whole of ``x`` and the results are selected.
    """
    x = _arr(x)
    if isinstance(condlist, (ArrayImpl, Tracer)) and _aval(condlist).ndim == _aval(x).ndim:
        condlist = [condlist]
    condlist = list(condlist)
    n = len(condlist)
    if len(funclist) == n + 1:
        otherwise = funclist[-1]
        funclist = funclist[:-1]
    elif len(funclist) == n:
        otherwise = 0
    else:
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are expected")

    def val(f):
        return f(x, *args, **kw) if callable(f) else full_like(x, f)

    out = val(otherwise)
    for c, f in zip(condlist, funclist):
        out = _where(c, val(f), out)
    return astype(out, _aval(x).dtype_name)


def unravel_index(indices, shape):
    """The per-axis indices, as a tuple of arrays, of the flat (row-major) ``indices`` into an
    array of ``shape``. Negative indices count from the end; out-of-range ones are clamped
    (to the last position above the range, the first below it), as in JAX. The sizes in
    ``shape`` may be traced.
    """
    idx = _arr(indices)
    try:
        dims = list(shape)
    except TypeError:
        dims = [shape]
    if builtins.any(np.ndim(d) != 0 for d in dims):
        raise ValueError("unravel_index: shape should be a scalar or 1D sequence.")
    # Peel the axes off from the last: floor division keeps a negative index
    # counted from the end, leaving -1 in the final quotient.
    out = [None] * len(dims)
    rest = idx
    for k in reversed(range(len(dims))):
        rest, out[k] = _divmod(rest, dims[k])
    above = lax.gt(rest, _const(0, _aval(rest).dtype_name))
    if _aval(idx).dtype_name.startswith("uint"):
        return tuple(_where(above, d - 1, o) for d, o in zip(dims, out))
    below = lax.lt(rest, _const(-1, _aval(rest).dtype_name))
    return tuple(_where(above, d - 1, _where(below, 0, o)) for d, o in zip(dims, out))


def ravel_multi_index(multi_index, dims, mode="raise", order="C", *, dtype=None):
    """Flat indices into an array of shape ``dims`` from a tuple of per-axis index arrays
    ``multi_index`` (row-major for ``order='C'``, column-major for ``'F'``). ``mode``:
    ``'raise'`` checks the (concrete) indices, ``'clip'`` / ``'wrap'`` bring out-of-range ones
    into range, ``'ignore'`` leaves them. The result has ``dtype`` (default: the promoted
    dtype of the indices).
    """
    if mode not in ("raise", "wrap", "clip", "ignore"):
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', 'clip', or 'ignore'.")
    dims = _shape_tuple(dims)
    if len(multi_index) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
    parts = _promote_dtypes(*[_arr(m) for m in multi_index])
    name = _dt.canonical_name(_dt.dtype_name(dtype)) if dtype is not None else (
        _aval(parts[0]).dtype_name if parts else _dt.default_int_name())
    if mode == "raise":
        if builtins.any(isinstance(p, Tracer) for p in parts):
            raise core.ConcretizationTypeError(
                "The error occurred because ravel_multi_index was jit-compiled with mode='raise'. "
                "Use mode='wrap' or mode='clip' instead.")
        for p, n in zip(parts, dims):
            v = np.asarray(p)
            if np.any((v < 0) | (v >= n)):
                raise ValueError("invalid entry in coordinates array")
    if order not in ("C", "F"):
        raise ValueError(f"invalid order={order!r}. Expected 'C' or 'F'")
    out = None
    stride = 1
    pairs = list(zip(parts, dims))
    for p, n in (reversed(pairs) if order == "C" else pairs):
        if mode == "clip":
            p = clip(p, 0, n - 1)
        elif mode == "wrap":
            p = remainder(p, n)
        term = multiply(lax.convert_element_type(p, name), stride)
        out = term if out is None else add(out, term)
        stride *= n
    return out


# -- choose, compress, extract, place, put --------------------------------------

def choose(a, choices, out=None, mode="raise"):
    """`choices[a[i]][i]` for every position of the broadcast shape. `mode`:
    'raise' (needs a concrete `a`; out-of-range is a ValueError), 'wrap' or 'clip'."""
    from .lax_numpy import broadcast_arrays, stack
    from .util import _promote_dtypes
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    a = _arr(a)
    if isinstance(choices, (list, tuple)):
        choices = [_arr(c) for c in choices]
    else:
        choices = list(_arr(choices))
    n = len(choices)
    choices = list(_promote_dtypes(*choices)) if n > 1 else choices
    if mode == "raise":
        if isinstance(a, Tracer):
            raise core.ConcretizationTypeError(
                "jnp.choose: mode='raise' needs a concrete index array (under jit use mode='wrap' or 'clip')")
        av = np.asarray(a)
        if av.size and (av.min() < 0 or av.max() >= n):
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        a = remainder(a, n)
    else:
        a = clip(a, 0, n - 1)
    *choices, a = broadcast_arrays(*choices, a)
    stacked = stack(choices, 0)
    idx = lax.expand_dims(astype(a, "int32"), (0,))
    return lax.squeeze(take_along_axis(stacked, idx, 0), (0,))


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """The slices of `a` along `axis` (flattened when None) where the 1-D
    `condition` is true. The condition must be concrete unless a static
    `size` is given (then results are padded with `fill_value`)."""
    from .lax_numpy import arange, ravel
    from .sorting import nonzero
    from ...errors import TracerBoolConversionError
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    x = _arr(a)
    if axis is None:
        x, axis = ravel(x), 0
    axis = _canon_axis(axis, _aval(x).ndim)
    n = _aval(x).shape[axis]
    if not isinstance(condition, Tracer):
        # Concrete condition: NumPy does the bookkeeping (also inside jit).
        c = np.asarray(condition).astype(bool)
        if c.ndim != 1:
            raise ValueError("condition must be a 1D array")
        if c.shape[0] > n:
            if c[n:].any():
                raise ValueError("condition contains entries that are out of bounds")
            c = c[:n]
        if size is None:
            return _take_static(x, axis, np.flatnonzero(c).tolist())
        cond = asarray(np.concatenate([c, np.zeros(n - c.shape[0], bool)]))
    else:
        cond = condition
        if _aval(cond).ndim != 1:
            raise ValueError("condition must be a 1D array")
        cond = astype(cond, "bool")
        m = _aval(cond).shape[0]
        if m > n:
            raise TracerBoolConversionError(
                "jnp.compress: a traced condition longer than the axis cannot be checked")
        if m < n:
            cond = lax.pad(cond, _const(False, "bool"), ((0, n - m, 0),))
        if size is None:
            raise TracerBoolConversionError(
                "jnp.compress: the condition must be concrete (it determines the output shape); "
                "pass a static size= to use it under jit")
    size = int(size)
    (idx,) = nonzero(cond, size=size, fill_value=0)
    res = take(x, idx, axis=axis)
    count = lax.reduce_sum(astype(cond, "int32"), (0,))
    valid = lax.lt(astype(arange(size), "int32"), count)
    shape = [1] * _aval(res).ndim
    shape[axis] = size
    valid = lax.reshape(valid, tuple(shape))
    return _where(valid, res, astype(asarray(fill_value), _aval(res).dtype_name))


def extract(condition, arr, *, size=None, fill_value=0):
    """The elements of `arr` (flattened) where `condition` (flattened) is true;
    `compress(ravel(condition), ravel(arr), size=..., fill_value=...)`."""
    from .lax_numpy import ravel
    cond = ravel(condition) if isinstance(condition, Tracer) else np.ravel(np.asarray(condition))
    return compress(cond, ravel(_arr(arr)), size=size, fill_value=fill_value)


def place(arr, mask, vals, *, inplace=True):
    """`arr` with the positions where `mask` is true set to `vals` in turn
    (repeated cyclically). Only `inplace=False` is supported (arrays are immutable)."""
    from .lax_numpy import arange, ravel
    from .sorting import nonzero
    if inplace:
        raise ValueError(
            "jax.numpy.place cannot modify arrays in-place, because JAX arrays are immutable. "
            "Pass inplace=False to instead return an updated array.")
    x = _arr(arr)
    shape = _aval(x).shape
    flat = ravel(x)
    m = ravel(astype(_arr(mask), "bool"))
    v = ravel(_arr(vals))
    nv = _aval(v).shape[0]
    if nv == 0:
        raise ValueError("Cannot place values from an empty array")
    n = _aval(flat).shape[0]
    if _aval(m).shape[0] != n:
        raise ValueError("place: mask and data must be the same size")
    (idx,) = nonzero(m, size=n, fill_value=n)
    v = take(v, remainder(arange(n), nv), axis=0)
    out = flat.at[idx].set(v, mode="drop")
    return reshape(out, shape)


def put(a, ind, v, mode=None, *, inplace=True):
    """`a` with the flat positions `ind` set to `v` (repeated cyclically).
    `mode`: None (negative indices wrap once, then all are clipped into
    range), 'clip' or 'wrap'; only `inplace=False` is supported."""
    from .lax_numpy import ravel
    if inplace:
        raise ValueError(
            "jax.numpy.put cannot modify arrays in-place, because JAX arrays are immutable. "
            "Pass inplace=False to instead return an updated array.")
    x = _arr(a)
    shape = _aval(x).shape
    idx = ravel(_arr(ind))
    vals = ravel(_arr(v))
    size = _aval(x).size if hasattr(_aval(x), "size") else int(np.prod(shape))
    ni, nv = _aval(idx).shape[0], _aval(vals).shape[0]
    if mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.put is not supported.")
    if mode not in (None, "clip", "wrap"):
        raise ValueError(f"mode should be one of 'wrap' or 'clip'; got mode={mode!r}")
    if not size or not ni or not nv:
        return x
    from .lax_numpy import arange
    vals = take(vals, remainder(arange(ni), nv), axis=0)
    flat = ravel(x)
    if mode == "clip":
        idx = clip(idx, 0, size - 1)
        out = flat.at[idx].set(vals)
    elif mode == "wrap":
        idx = remainder(idx, size)
        out = flat.at[idx].set(vals)
    else:
        # JAX: negative indices wrap once, then every index is clipped into range.
        idx = clip(_where(less(idx, 0), add(idx, size), idx), 0, size - 1)
        out = flat.at[idx].set(vals)
    return reshape(out, shape)
