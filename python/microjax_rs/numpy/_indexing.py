"""Indexing (`x[idx]`, `x.at[idx].set/add/...`), built on lax.

Concrete arrays outside any trace index through NumPy (exact, fast). Under a
trace (or with traced indices) indexing lowers to lax: static ints and
slices become static slices (`_slice_axis`), `None` adds an axis, a traced
scalar index becomes a dynamic slice (or a one-hot selection until that
primitive exists), and one advanced (array) index becomes a static or
dynamic take along its axis. Several adjacent advanced indices are merged
into one flat index. Out-of-range traced indices are clamped, as in JAX.

`.at[...]` with static indices lowers every update to exact selects over the
flattened array (duplicates in `add`/`multiply`/`min`/`max` accumulate
layer by layer); traced indices there need the scatter primitive.
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


def _has_tracer(idx):
    items = idx if isinstance(idx, tuple) else (idx,)
    return builtins.any(_is_traced(i) for i in items)


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
        if type(it) is core.ArrayImpl and not (core.get_aval(it).ndim == 0 and _is_scalar_int(it)):
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
        k = out.index(Ellipsis)
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
    return _is_traced(it) and it.aval.ndim > 0


def _getitem_lax(x, idx):
    jnp = _jnp()
    x = jnp._arr(x)
    av = core.get_aval(x)
    items = _normalize(idx, av.ndim)
    adv = [k for k, it in enumerate(items) if _is_advanced(it)]
    if len(adv) > 1:
        if adv != list(range(adv[0], adv[-1] + 1)):
            if builtins.all(isinstance(items[k], np.ndarray) for k in adv):
                return _getitem_positions(x, idx)
            raise NotImplementedError("non-adjacent traced advanced indices are not supported")
        x, items = _merge_advanced(x, items, adv)
    d = 0
    for it in items:
        if it is None:
            x = jnp.expand_dims(x, d)
            d += 1
            continue
        n = core.get_aval(x).shape[d]
        if isinstance(it, slice):
            start, stop, step = (_static(v, "slice bound") for v in (it.start, it.stop, it.step))
            if step == 0:
                raise ValueError("slice step cannot be zero")
            x = jnp._slice_axis(x, d, start, stop, 1 if step is None else step)
            d += 1
        elif _is_scalar_int(it) and not _is_traced(it) and type(it) is not core.ArrayImpl:
            i = int(it)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {d} with size {n}")
            i %= n
            x = jnp.lax.squeeze(jnp._slice_axis(x, d, i, i + 1), (d,))
        elif _is_scalar_int(it):
            i = _wrap_negative(it, n)
            if jnp._has("dynamic_slice") and not _under_vmap():
                x = jnp.lax.squeeze(jnp.lax.dynamic_slice_in_dim(x, i, 1, d), (d,))
            else:
                x = jnp._take_dynamic(x, d, i)
        elif isinstance(it, np.ndarray):
            if not np.issubdtype(it.dtype, np.integer):
                raise IndexError(f"Indexer must have integer or boolean type, got indexer with type {it.dtype}")
            if it.size and (it.min() < -n or it.max() >= n):
                raise IndexError(f"index is out of bounds for axis {d} with size {n}")
            flat = np.where(it < 0, it + n, it).ravel()
            t = jnp._take_static(x, d, flat.tolist())
            sh = core.get_aval(t).shape
            x = jnp.lax.reshape(t, sh[:d] + it.shape + sh[d + 1:])
            d += it.ndim
        elif _is_traced(it):
            if not (it.aval.dtype_name.startswith("int") or it.aval.dtype_name.startswith("uint")):
                raise IndexError(f"Indexer must have integer or boolean type, got {it.aval.str_short()}")
            x = jnp._take_dynamic(x, d, _wrap_negative(it, n))
            d += it.aval.ndim
        else:
            raise IndexError(
                f"only integers, slices (`:`), ellipsis (`...`), None and integer or boolean arrays are valid "
                f"indices; got {it!r}")
    return x


def _under_vmap():
    """Whether a vmap trace is active: dynamic_slice has no rule for batched
    start indices yet (it needs gather), so traced scalar indices then use the
    one-hot selection."""
    from ..interpreters.batching import BatchTrace

    return builtins.any(isinstance(t, BatchTrace) for t in core._state.stack)


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


def _merge_advanced(x, items, adv):
    """Adjacent advanced indices on dims adv[0]..adv[-1]: one flat index on the merged dim."""
    jnp = _jnp()
    # Position of the first advanced dim in x (None entries before it add no x dims).
    d0 = builtins.sum(1 for it in items[:adv[0]] if it is not None)
    shape = core.get_aval(x).shape
    sizes = [shape[d0 + j] for j in range(len(adv))]
    total = int(np.prod(sizes)) if sizes else 1
    x = jnp.lax.reshape(x, shape[:d0] + (total,) + shape[d0 + len(adv):])
    idxs = [items[k] for k in adv]
    if builtins.all(isinstance(i, np.ndarray) for i in idxs):
        for i, n in zip(idxs, sizes):
            if i.size and (i.min() < -n or i.max() >= n):
                raise IndexError(f"index is out of bounds for an axis with size {n}")
        b = np.broadcast_arrays(*[np.where(i < 0, i + n, i) for i, n in zip(idxs, sizes)])
        flat = np.ravel_multi_index(tuple(b), sizes) if b[0].size else np.zeros(b[0].shape, np.int64)
    else:
        parts = [_wrap_negative(jnp.asarray(i) if isinstance(i, np.ndarray) else i, n) for i, n in zip(idxs, sizes)]
        parts = [jnp.clip(p, 0, n - 1) for p, n in zip(parts, sizes)]
        parts = jnp.broadcast_arrays(*parts)
        flat = None
        stride = 1
        for p, n in zip(reversed(parts), reversed(sizes)):
            term = jnp.multiply(p, stride)
            flat = term if flat is None else jnp.add(flat, term)
            stride *= n
    new_items = items[:adv[0]] + [flat] + items[adv[-1] + 1:]
    return x, new_items


def _getitem_positions(x, idx):
    """Static NumPy indexing of any kind through a static map of flat positions."""
    jnp = _jnp()
    av = core.get_aval(x)
    pos = np.arange(av.size).reshape(av.shape)[_concrete_index(idx)]
    flat = jnp.ravel(x)
    out = jnp._take_static(flat, 0, np.asarray(pos).ravel().tolist())
    return jnp.lax.reshape(out, np.shape(pos))


def take_traced(a, indices, axis, mode=None):
    jnp = _jnp()
    n = core.get_aval(a).shape[axis]
    idx = jnp._arr(indices)
    if mode == "wrap":
        idx = jnp.remainder(idx, n)
    elif mode in (None, "fill"):
        valid = jnp.logical_and(jnp.greater_equal(idx, -n), jnp.less(idx, n))
        out = jnp._take_dynamic(a, axis, _wrap_negative(idx, n))
        name = core.get_aval(a).dtype_name
        if jnp._dt.is_float_name(name):
            fill = np.nan
        elif name == "bool":
            fill = True
        else:
            info = np.iinfo(np.dtype(name))
            fill = int(info.min) if name.startswith("int") else int(info.max)
        oshape = core.get_aval(out).shape
        ish = core.get_aval(idx).shape
        vb = jnp.lax.broadcast_in_dim(valid, oshape, tuple(range(axis, axis + len(ish))))
        return jnp.where(vb, out, jnp._const(fill, name))
    else:
        idx = _wrap_negative(idx, n)
    return jnp._take_dynamic(a, axis, idx)


# -- x.at[idx] ------------------------------------------------------------------


class AtIndexer:
    def __init__(self, x):
        self.x = x

    def __getitem__(self, idx):
        return _AtRef(self.x, idx)


class _AtRef:
    def __init__(self, x, idx):
        self.x, self.idx = x, idx

    def get(self, indices_are_sorted=False, unique_indices=False, mode=None, fill_value=None):
        return getitem(self.x, self.idx)

    def set(self, values, indices_are_sorted=False, unique_indices=False, mode=None):
        return _update(self.x, self.idx, values, "set")

    def add(self, values, indices_are_sorted=False, unique_indices=False, mode=None):
        return _update(self.x, self.idx, values, "add")

    def subtract(self, values, indices_are_sorted=False, unique_indices=False, mode=None):
        return _update(self.x, self.idx, _jnp().negative(values), "add")

    def multiply(self, values, indices_are_sorted=False, unique_indices=False, mode=None):
        return _update(self.x, self.idx, values, "mul")

    mul = multiply

    def divide(self, values, indices_are_sorted=False, unique_indices=False, mode=None):
        jnp = _jnp()
        return _update(self.x, self.idx, jnp.divide(1, values), "mul") if jnp._is_float(self.x) else \
            _update(self.x, self.idx, values, "div")

    def power(self, values, indices_are_sorted=False, unique_indices=False, mode=None):
        return _update(self.x, self.idx, values, "pow")

    def min(self, values, indices_are_sorted=False, unique_indices=False, mode=None):
        return _update(self.x, self.idx, values, "min")

    def max(self, values, indices_are_sorted=False, unique_indices=False, mode=None):
        return _update(self.x, self.idx, values, "max")


def _update(x, idx, values, op):
    jnp = _jnp()
    x = jnp._arr(x)
    if _has_tracer(idx):
        raise NotImplementedError(
            "x.at[idx] with traced indices needs the scatter primitive; use jnp.where with a mask "
            "(or static indices) instead")
    av = core.get_aval(x)
    name = av.dtype_name
    pos = np.arange(av.size).reshape(av.shape)[_concrete_index(idx)]
    pos = np.asarray(pos)
    vals = jnp._arr(values)
    if core.get_aval(vals).dtype_name != name:
        vals = jnp.lax.convert_element_type(vals, name)
    vshape = core.get_aval(vals).shape
    try:
        np.broadcast_shapes(vshape, pos.shape)
    except ValueError:
        raise ValueError(f"shape mismatch: value array of shape {vshape} could not be broadcast to "
                         f"indexing result of shape {pos.shape}") from None
    flat_x = jnp.ravel(x)
    pflat = pos.ravel()
    scalar = vshape == () or int(np.prod(vshape)) == 1
    if scalar:
        v = jnp.reshape(vals, ())
        vflat = None
    else:
        vflat = jnp.ravel(jnp.broadcast_to(vals, pos.shape))
    # Layers of unique positions: occurrence c of each position goes to layer c.
    order = np.argsort(pflat, kind="stable")
    sorted_p = pflat[order]
    occ = np.zeros(pflat.size, np.int64)
    if pflat.size:
        starts = np.r_[True, sorted_p[1:] != sorted_p[:-1]]
        grp = np.cumsum(starts) - 1
        first = np.flatnonzero(starts)
        occ[order] = np.arange(pflat.size) - first[grp]
    out = flat_x
    n = av.size
    for layer in range(int(occ.max()) + 1 if pflat.size else 0):
        ks = np.flatnonzero(occ == layer)
        ps = pflat[ks]
        mask = np.zeros(n, bool)
        mask[ps] = True
        if scalar:
            upd = jnp.lax.broadcast_in_dim(v, (n,), ())
        else:
            src = np.zeros(n, np.int64)
            src[ps] = ks
            # Unmasked positions copy their left neighbour's source (long runs, fewer slices).
            filled = np.maximum.accumulate(np.where(mask, np.arange(n), -1))
            src = np.where(filled >= 0, src[np.maximum(filled, 0)], src[ps[0]] if ps.size else 0)
            upd = jnp._take_static(vflat, 0, src.tolist())
        m = jnp.lax.broadcast_in_dim(core.to_array(mask), (n,), (0,))
        if op == "set":
            new = upd
        elif op == "add":
            new = jnp.add(out, upd)
        elif op == "mul":
            new = jnp.multiply(out, upd)
        elif op == "div":
            new = jnp.lax.div(out, upd)
        elif op == "pow":
            new = jnp.power(out, upd)
        elif op == "min":
            new = jnp.minimum(out, upd)
        else:
            new = jnp.maximum(out, upd)
        new = jnp.lax.convert_element_type(new, name) if core.get_aval(new).dtype_name != name else new
        out = jnp.lax.select_n(m, out, new)
    return jnp.lax.reshape(out, av.shape)
