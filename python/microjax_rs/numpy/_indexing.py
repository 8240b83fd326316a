"""Indexing (`x[idx]`, `x.at[idx].set/add/...`), built on lax.

Concrete arrays outside any trace index through NumPy (exact, fast; static
out-of-bounds indices raise IndexError). Under a trace (or with traced
indices) indexing lowers to lax: with only ints, slices, `None` and `...`,
static entries become static slices and a traced scalar index a clamped
`dynamic_slice` (as JAX); any integer-array index makes the whole selection
one `gather` (NumPy's advanced-index layout; out-of-bounds entries are
filled, JAX's default mode).

`.at[...]` updates are one scatter each: static indices through NumPy's flat
position map of the raveled array, traced ones through the advanced-index
layout; out-of-bounds updates are dropped by default, as JAX.
"""
import builtins

import numpy as np

from .. import core
from ..errors import NonConcreteBooleanIndexError


def _jnp():
    from .. import numpy as jnp

    return jnp


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


def getitem(x, idx):
    if type(x) is core.ArrayImpl and core.current_trace() is None and not _has_tracer(idx):
        idx = _concrete_index(idx)
        out = np.asarray(x)[idx]
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
                f"Use jnp.where or the `where=` argument of reductions instead.")
        if isinstance(it, (bool, np.bool_)):
            raise IndexError("boolean scalar indices are not supported")
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
        raise IndexError(f"Too many indices for array: {consumed} non-None/Ellipsis indices for dim {ndim}.")
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


def _getitem_lax(x, idx, mode=None, fill_value=None, indices_are_sorted=False, unique_indices=False):
    jnp = _jnp()
    x = jnp._arr(x)
    av = core.get_aval(x)
    items = _normalize(idx, av.ndim)
    if builtins.any(_is_advanced(it) for it in items) or mode is not None or fill_value is not None:
        return _gather_items(x, items, mode, fill_value, indices_are_sorted, unique_indices)
    d = 0
    for it in items:
        if it is None:
            x = jnp.expand_dims(x, d)
            d += 1
            continue
        n = core.get_aval(x).shape[d]
        if isinstance(it, slice):
            x = _apply_slice(x, d, it)
            d += 1
        elif _is_scalar_int(it) and not _is_traced(it) and type(it) is not core.ArrayImpl:
            i = _static_int_index(it, n, d)
            x = jnp.lax.squeeze(jnp._slice_axis(x, d, i, i + 1), (d,))
        elif _is_scalar_int(it):
            # A traced scalar: a clamped dynamic slice, as JAX (under vmap its
            # batching rule makes it one gather).
            x = jnp.lax.squeeze(jnp.lax.dynamic_slice_in_dim(x, _wrap_negative(it, n), 1, d), (d,))
        else:
            raise IndexError(
                f"only integers, slices (`:`), ellipsis (`...`), None and integer or boolean arrays are valid "
                f"indices; got {it!r}")
    return x


def _apply_slice(x, d, it):
    start, stop, step = (_static(v, "slice bound") for v in (it.start, it.stop, it.step))
    if step == 0:
        raise ValueError("slice step cannot be zero")
    return _jnp()._slice_axis(x, d, start, stop, 1 if step is None else step)


def _static_int_index(i, n, d):
    i = int(i)
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of bounds for axis {d} with size {n}")
    return i % n


def _index_dtype(sizes):
    return "int64" if builtins.any(n >= 2 ** 31 for n in sizes) else "int32"


def _index_array(it, n, d, check_static, normalize=True):
    """One advanced index (static or traced) as an integer array, negative
    entries counted from the end when `normalize` (as JAX's indexing)."""
    jnp = _jnp()
    if isinstance(it, np.ndarray) or (not _is_traced(it) and type(it) is not core.ArrayImpl):
        a = np.asarray(it)
        if not np.issubdtype(a.dtype, np.integer):
            raise IndexError(f"Indexer must have integer or boolean type, got indexer with type {a.dtype}")
        if check_static and a.size and (a.min() < -n or a.max() >= n):
            bad = a.min() if a.min() < -n else a.max()
            raise IndexError(f"index {bad} is out of bounds for axis {d} with size {n}")
        a = np.where(a < 0, a + n, a) if normalize else a
        return jnp.asarray(a.astype(np.int64 if n >= 2 ** 31 else np.int32))
    name = core.get_aval(it).dtype_name
    if not (name.startswith("int") or name.startswith("uint")):
        raise IndexError(f"Indexer must have integer or boolean type, got {core.get_aval(it).str_short()}")
    return _wrap_negative(it, n) if normalize else it


class _GatherPlan:
    """NumPy's advanced-indexing layout for items aligned with x's axes
    (unit-step slices and advanced indices): the index array (broadcast shape
    B plus the index vector axis), the advanced axes, and where B lands. A
    partial slice is a window whose static start is one more index vector
    component (its axis in `index_map`, not collapsed)."""

    def __init__(self, x, items, check_static, contiguous=None, normalize=True):
        jnp = _jnp()
        shape = core.get_aval(x).shape
        self.adv = [k for k, it in enumerate(items) if not isinstance(it, slice)]
        arrays = [_index_array(items[k], shape[k], k, check_static, normalize) for k in self.adv]
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
            a = jnp.lax.convert_element_type(a, name)
            dims = tuple(range(nb - len(sh), nb))
            cols.append(jnp.lax.broadcast_in_dim(a, self.batch + (1,), dims))
        self.index_map = list(self.adv)
        sizes = list(shape)
        for k, it in enumerate(items):
            if isinstance(it, slice) and it != slice(None):
                start, stop, step = it.indices(shape[k])
                if step != 1:
                    raise NotImplementedError("x.at[idx] with traced indices supports slices of step 1 only")
                sizes[k] = builtins.max(stop - start, 0)
                cols.append(jnp.lax.broadcast_in_dim(_jnp()._const(start, name), self.batch + (1,), ()))
                self.index_map.append(k)
        self.indices = cols[0] if len(cols) == 1 else jnp.lax.concatenate(cols, nb)
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
    jnp = _jnp()
    lax = jnp.lax
    aligned = []
    d = 0
    for it in items:
        if it is None:
            x = jnp.expand_dims(x, d)
            aligned.append(slice(None))
        elif isinstance(it, slice):
            x = _apply_slice(x, d, it)
            aligned.append(slice(None))
        else:
            aligned.append(it)
        d += 1
    if not builtins.any(not isinstance(it, slice) for it in aligned):
        return x
    plan = _GatherPlan(x, aligned, check_static=mode is None, normalize=normalize)
    if builtins.any(s > n for s, n in zip(plan.slice_sizes, x.shape)):
        # An advanced index into a size-0 axis (`zeros(0)[mask]`): no gather
        # fits, and an empty index selects nothing (as JAX, which skips the
        # gather for an empty result).
        if 0 in plan.batch:
            return jnp.zeros(_gather_result_shape(plan), x.dtype)
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
    jnp = _jnp()
    i = jnp._arr(i)
    return jnp.where(jnp.less(i, 0), jnp.add(i, n), i)


def take_traced(a, indices, axis, mode=None, fill_value=None, unique_indices=False,
                indices_are_sorted=False):
    """jnp.take with traced indices: one gather (`fill` by default, as JAX)."""
    jnp = _jnp()
    n = core.get_aval(a).shape[axis]
    idx = jnp._arr(indices)
    if mode == "wrap":
        idx, mode = jnp.remainder(idx, n), "promise_in_bounds"
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.take is not supported.")
    elif mode is None:
        mode = "fill"
    items = [slice(None)] * axis + [idx] + [slice(None)] * (core.get_aval(a).ndim - axis - 1)
    # As JAX: only `fill` counts negative indices from the end.
    return _gather_items(a, items, mode, fill_value, indices_are_sorted, unique_indices,
                         normalize=mode == "fill")


# -- x.at[idx] ------------------------------------------------------------------


class AtIndexer:
    def __init__(self, x):
        self.x = x

    def __getitem__(self, idx):
        return _AtRef(self.x, idx)


class _AtRef:
    """`x.at[idx]`: every update is one scatter (static indices through a
    flat position map, traced ones through NumPy's advanced-index layout);
    scatters drop out-of-bounds updates by default (mode `drop`), as JAX."""

    def __init__(self, x, idx):
        self.x, self.idx = x, idx

    def get(self, indices_are_sorted=False, unique_indices=False, mode=None, fill_value=None):
        if mode is None and fill_value is None:
            return getitem(self.x, self.idx)
        return _getitem_lax(self.x, self.idx, mode, fill_value, indices_are_sorted, unique_indices)

    def _scatter(self, name, values, indices_are_sorted, unique_indices, mode, x=None):
        return _update(self.x if x is None else x, self.idx, values, name, mode, indices_are_sorted,
                       unique_indices)

    def set(self, values, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._scatter("scatter", values, indices_are_sorted, unique_indices, mode)

    def add(self, values, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._scatter("scatter_add", values, indices_are_sorted, unique_indices, mode)

    def subtract(self, values, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._scatter("scatter_add", _jnp().negative(values), indices_are_sorted, unique_indices, mode)

    def multiply(self, values, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._scatter("scatter_mul", values, indices_are_sorted, unique_indices, mode)

    mul = multiply

    def divide(self, values, indices_are_sorted=False, unique_indices=False, mode=None):
        """`x / scatter_mul(ones, idx, values)`, as JAX."""
        jnp = _jnp()
        ones = jnp.ones_like(self.x)
        return jnp.divide(self.x, self._scatter("scatter_mul", values, indices_are_sorted, unique_indices,
                                                mode, x=ones))

    def power(self, values, indices_are_sorted=False, unique_indices=False, mode=None):
        """`x ** scatter_mul(ones, idx, values)`, as JAX."""
        jnp = _jnp()
        ones = jnp.ones_like(self.x)
        return jnp.power(self.x, self._scatter("scatter_mul", values, indices_are_sorted, unique_indices,
                                               mode, x=ones))

    def min(self, values, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._scatter("scatter_min", values, indices_are_sorted, unique_indices, mode)

    def max(self, values, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._scatter("scatter_max", values, indices_are_sorted, unique_indices, mode)

    def apply(self, func, indices_are_sorted=False, unique_indices=False, mode=None):
        """`func` applied at the indexed positions (once per position, as a
        gather + `func` + scatter of the results)."""
        got = self.get(indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                       mode="clip" if mode is None else mode)
        return self.set(func(got), indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                        mode=mode)


def _broadcast_values(vals, shape):
    vshape = core.get_aval(vals).shape
    try:
        np.broadcast_shapes(vshape, shape)
        if len(vshape) > len(shape) or np.broadcast_shapes(vshape, shape) != tuple(shape):
            raise ValueError
    except ValueError:
        raise ValueError(f"shape mismatch: value array of shape {vshape} could not be broadcast to "
                         f"indexing result of shape {tuple(shape)}") from None
    return _jnp().broadcast_to(vals, tuple(shape))


def _update(x, idx, values, name, mode=None, indices_are_sorted=False, unique_indices=False):
    jnp = _jnp()
    lax = jnp.lax
    x = jnp._arr(x)
    av = core.get_aval(x)
    vals = jnp._arr(values)
    if core.get_aval(vals).dtype_name != av.dtype_name:
        vals = lax.convert_element_type(vals, av.dtype_name)
    op = getattr(lax, name)
    if not _has_tracer(idx):
        # Static indices: NumPy itself gives the flat position of every
        # indexed element (all index kinds, exact bounds errors).
        pos = np.asarray(np.arange(av.size).reshape(av.shape)[_concrete_index(idx)])
        upd = jnp.reshape(_broadcast_values(vals, pos.shape), (pos.size,))
        flat = pos.reshape(-1, 1).astype(np.int64 if av.size >= 2 ** 31 else np.int32)
        unique = unique_indices or np.unique(flat).size == flat.size
        dnums = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                            scatter_dims_to_operand_dims=(0,))
        out = op(jnp.ravel(x), jnp.asarray(flat), upd, dnums, mode=mode, unique_indices=unique,
                 indices_are_sorted=indices_are_sorted or bool(np.all(np.diff(flat[:, 0]) > 0)))
        return lax.reshape(out, av.shape)
    items = _normalize(idx, av.ndim)
    kept = [it for it in items if it is not None]
    contiguous = _advanced_contiguous(items)
    plan = _GatherPlan(x, kept, check_static=mode is None, contiguous=contiguous)
    # x[idx]'s shape (None axes included), which values broadcast to.
    layout = _result_layout(items, av.shape, plan.batch, contiguous)
    full_shape = tuple(size for size, _ in layout)
    upd = jnp.reshape(_broadcast_values(vals, full_shape), tuple(size for size, new in layout if not new))
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
