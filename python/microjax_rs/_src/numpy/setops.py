"""Set operations: `unique` (with `return_index`/`inverse`/`counts`, and a
static `size` under `jit`), the array-API `unique_values` / `unique_counts` /
`unique_inverse` / `unique_all` (named-tuple results, NaNs never equal),
`isin` and the 1-D set functions `intersect1d`, `setdiff1d`, `setxor1d`,
`union1d` (a static `size` / `fill_value` for a fixed output length)."""
from typing import NamedTuple

from ... import core, dtypes as _dt, lax
from ...core import Tracer
from .lax_numpy import full, ravel, zeros
from .reductions import cumsum
from .sorting import _sort_key_eq, where
from .util import _and, _arr, _aval, _canon_axis, _const, _not, _promote_dtypes, _static_int


def _pad_to(x, size, value):
    """x[:size] of a 1-D array, padded with `value` up to `size`."""
    n = _aval(x).shape[0]
    if size <= n:
        return lax.slice(x, (0,), (size,))
    fill = lax.convert_element_type(_arr(value), _aval(x).dtype_name)
    return lax.pad(x, fill, ((0, size - n, 0),))


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True, size=None, fill_value=None, sorted=True):
    """Sorted unique values (flattened). Under `jit`, `size` must be given
    (static); results are then padded to `size` (values with `fill_value`,
    default the smallest value; indices with the first one; counts with 0)."""
    ar = _arr(ar)
    if axis is not None:
        if _aval(ar).ndim != 1:
            raise NotImplementedError("jnp.unique: axis is only supported for 1-D inputs")
        _canon_axis(axis, 1)
    x = ravel(ar)
    n = _aval(x).shape[0]
    idx_name = _dt.default_int_name()
    if size is None and isinstance(ar, Tracer):
        raise core.ConcretizationTypeError(
            "jnp.unique: the size argument must be given (and static) when the input is traced, "
            "because the output shape depends on the values")
    iota = lax.iota(idx_name, n)
    xs, perm = lax.sort((x, iota), num_keys=1)
    if n:
        prev = lax.slice(xs, (0,), (n - 1,))
        cur = lax.slice(xs, (1,), (n,))
        new_ = _not(_sort_key_eq(cur, prev, equal_nan))
        is_new = lax.concatenate([lax.reshape(_const(True, "bool"), (1,)), new_], 0)
    else:
        is_new = zeros((0,), "bool")
    num = lax.reduce_sum(lax.convert_element_type(is_new, idx_name), (0,))
    if size is None:
        size = int(num)
    size = _static_int(size, "unique", "size")
    # First elements of each run to the front, in order (stable sort on a 0/1 key).
    rank_key = lax.convert_element_type(_not(is_new), "int32")
    _, firsts, first_perm, first_pos = lax.sort((rank_key, xs, perm, iota), num_keys=1)
    k = lax.iota(idx_name, size)
    valid = lax.lt(k, num)
    if n == 0:
        if fill_value is None:
            raise ValueError("jnp.unique: fill_value is required for an empty input with size")
        values = full((size,), fill_value, _aval(x).dtype_name)
    else:
        fill = (lax.reshape(lax.slice(xs, (0,), (1,)), ()) if fill_value is None
                else full((), fill_value, _aval(x).dtype_name))
        values = where(valid, _pad_to(firsts, size, 0), fill)
    out = [values]
    if return_index:
        first = lax.reshape(lax.slice(perm, (0,), (1,)), ()) if n else _const(0, idx_name)
        out.append(where(valid, _pad_to(first_perm, size, 0), first))
    if return_inverse:
        group = lax.sub(cumsum(lax.convert_element_type(is_new, idx_name)), _const(1, idx_name))
        _, inv = lax.sort((perm, group), num_keys=1)
        out.append(lax.reshape(inv, _aval(ar).shape) if axis is None else inv)
    if return_counts:
        # count[k] = start of run k+1 (n after the last run) - start of run k.
        starts1 = _pad_to(first_pos, size + 1, n)
        starts = lax.slice(starts1, (0,), (size,))
        nxt = lax.slice(starts1, (1,), (size + 1,))
        nxt = where(lax.lt(lax.add(k, _const(1, idx_name)), num), nxt, _const(n, idx_name))
        out.append(where(valid, lax.sub(nxt, starts), _const(0, idx_name)))
    return out[0] if len(out) == 1 else tuple(out)


class _UniqueAllResult(NamedTuple):
    values: object
    indices: object
    inverse_indices: object
    counts: object


class _UniqueCountsResult(NamedTuple):
    values: object
    counts: object


class _UniqueInverseResult(NamedTuple):
    values: object
    inverse_indices: object


def unique_values(x, /, *, size=None, fill_value=None):
    """Sorted unique values of `x` (flattened); NaNs are all distinct."""
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)


def unique_counts(x, /, *, size=None, fill_value=None):
    """`(values, counts)` of the unique values of `x`, as a named tuple."""
    return _UniqueCountsResult(*unique(x, return_counts=True, equal_nan=False, size=size,
                                       fill_value=fill_value))


def unique_inverse(x, /, *, size=None, fill_value=None):
    """`(values, inverse_indices)`: the unique values and, for every element
    of `x` (in `x`'s shape), the index of its value."""
    return _UniqueInverseResult(*unique(x, return_inverse=True, equal_nan=False, size=size,
                                        fill_value=fill_value))


def unique_all(x, /, *, size=None, fill_value=None):
    """`(values, indices, inverse_indices, counts)` of the unique values of
    `x` (indices: first occurrence), as a named tuple."""
    return _UniqueAllResult(*unique(x, return_index=True, return_inverse=True, return_counts=True,
                                    equal_nan=False, size=size, fill_value=fill_value))


# -- isin and the 1-D set functions --------------------------------------------------

_ISIN_METHODS = ("auto", "compare_all", "binary_search", "sort")


def _member(a, b):
    """For each element of 1-D `a`: whether it equals (==) some element of 1-D `b`."""
    a, b = _promote_dtypes(a, b)
    na, nb = _aval(a).shape[0], _aval(b).shape[0]
    if nb == 0 or na == 0:
        return zeros((na,), "bool")
    eq = lax.eq(lax.broadcast_in_dim(a, (na, nb), (0,)), lax.broadcast_in_dim(b, (na, nb), (1,)))
    return lax.reduce_or(eq, (1,))


def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
    """Whether each element of `element` is in `test_elements` (by ==, so NaN
    is never found), in `element`'s shape; `invert` negates."""
    if method not in _ISIN_METHODS:
        raise ValueError(f"{method=} is not implemented; options are 'compare_all', 'binary_search', "
                         "'sort', and 'auto'")
    el, te = _promote_dtypes(_arr(element), _arr(test_elements))
    shape = _aval(el).shape
    found = _member(ravel(el), ravel(te))
    if invert:
        found = _not(found)
    return lax.reshape(found, shape)


def _set_inputs(fn, ar1, ar2, size, promote=True):
    a1, a2 = ravel(_arr(ar1)), ravel(_arr(ar2))
    if promote:
        a1, a2 = _promote_dtypes(a1, a2)
    if size is None and (isinstance(a1, Tracer) or isinstance(a2, Tracer)):
        raise core.ConcretizationTypeError(
            f"jnp.{fn}: the size argument must be given (and static) when the inputs are traced, "
            "because the output shape depends on the values")
    if size is not None:
        size = _static_int(size, fn, "size")
    return a1, a2, size


def _sorted_firsts(x, assume_unique):
    """`x` sorted (stable), the original index of each sorted entry, and a mask
    of the first entry of each run of equal values (NaNs equal)."""
    n = _aval(x).shape[0]
    idx_name = _dt.default_int_name()
    xs, perm = lax.sort((x, lax.iota(idx_name, n)), num_keys=1)
    if assume_unique or n == 0:
        return xs, perm, full((n,), True, "bool")
    new_ = _not(_sort_key_eq(lax.slice(xs, (1,), (n,)), lax.slice(xs, (0,), (n - 1,)), True))
    return xs, perm, lax.concatenate([lax.reshape(_const(True, "bool"), (1,)), new_], 0)


def _compact(mask, *arrays):
    """The entries of `arrays` where `mask` holds moved to the front (order
    kept), and how many there are."""
    key = lax.convert_element_type(_not(mask), "int32")
    out = lax.sort((key,) + tuple(arrays), num_keys=1)[1:]
    count = lax.reduce_sum(lax.convert_element_type(mask, _dt.default_int_name()), (0,))
    return out, count


def _finish(vals, count, size, fill):
    """`vals[:count]` (eager, no size) or `vals` cut / padded to `size` with `fill`."""
    if size is None:
        return lax.slice(vals, (0,), (int(count),))
    n = _aval(vals).shape[0]
    valid = lax.lt(lax.iota(_aval(count).dtype_name, size), count)
    padded = _pad_to(vals, size, 0) if n else zeros((size,), _aval(vals).dtype_name)
    return where(valid, padded, fill)


def _smallest_or_zero(vals, count):
    """JAX's default fill of intersect1d / setxor1d: the smallest result, 0 when there is none."""
    n = _aval(vals).shape[0]
    dt = _aval(vals).dtype_name
    if n == 0:
        return _const(0, dt)
    return where(lax.gt(count, _const(0, _aval(count).dtype_name)),
                 lax.reshape(lax.slice(vals, (0,), (1,)), ()), _const(0, dt))


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted unique values of `ar1` not in `ar2` (in `ar1`'s order when
    `assume_unique`). With a static `size`, padded with `fill_value` (default 0)."""
    a1, a2, size = _set_inputs("setdiff1d", ar1, ar2, size, promote=False)
    dt = _aval(a1).dtype_name
    fill = full((), 0 if fill_value is None else fill_value, dt)
    if assume_unique:
        vals, keep = a1, _not(_member(a1, a2))
    else:
        vals, _, firsts = _sorted_firsts(a1, False)
        keep = _and(firsts, _not(_member(vals, a2)))
    (vals,), count = _compact(keep, vals)
    return _finish(vals, count, size, fill)


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """The sorted unique values of both arrays (`unique` of their concatenation)."""
    a1, a2, size = _set_inputs("union1d", ar1, ar2, size)
    return unique(lax.concatenate([a1, a2], 0), size=size, fill_value=fill_value)


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted unique values in exactly one of the arrays. With a static
    `size`, padded with `fill_value` (default: the smallest result, else 0)."""
    a1, a2, size = _set_inputs("setxor1d", ar1, ar2, size)
    v1, _, f1 = _sorted_firsts(a1, assume_unique)
    v2, _, f2 = _sorted_firsts(a2, assume_unique)
    keep = lax.concatenate([_and(f1, _not(_member(v1, a2))), _and(f2, _not(_member(v2, a1)))], 0)
    vals = lax.concatenate([v1, v2], 0)
    key = lax.convert_element_type(_not(keep), "int32")
    _, vals = lax.sort((key, vals), num_keys=2)
    count = lax.reduce_sum(lax.convert_element_type(keep, _dt.default_int_name()), (0,))
    fill = _smallest_or_zero(vals, count) if fill_value is None else full((), fill_value, _aval(vals).dtype_name)
    return _finish(vals, count, size, fill)


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None, fill_value=None):
    """The sorted unique values in both arrays; with `return_indices`, also the
    index of each in `ar1` and in `ar2` (first occurrence). With a static
    `size`, values are padded with `fill_value` (default: the smallest result,
    else 0) and indices with the array lengths."""
    a1, a2, size = _set_inputs("intersect1d", ar1, ar2, size)
    n1, n2 = _aval(a1).shape[0], _aval(a2).shape[0]
    idx_name = _dt.default_int_name()
    v1, p1, f1 = _sorted_firsts(a1, assume_unique)
    keep = _and(f1, _member(v1, a2))
    (vals, i1), count = _compact(keep, v1, p1)
    fill = _smallest_or_zero(vals, count) if fill_value is None else full((), fill_value, _aval(vals).dtype_name)
    out = _finish(vals, count, size, fill)
    if not return_indices:
        return out
    i1 = _finish(i1, count, size, _const(n1, idx_name))
    m = _aval(i1).shape[0]
    if n2 == 0 or m == 0:
        i2 = full((m,), n2, idx_name)
    else:
        hit = lax.eq(lax.broadcast_in_dim(_finish(vals, count, size, fill), (m, n2), (0,)),
                     lax.broadcast_in_dim(a2, (m, n2), (1,)))
        i2 = lax.argmax(lax.convert_element_type(hit, "int32"), 1, idx_name)
        if size is not None:
            valid = lax.lt(lax.iota(idx_name, m), count)
            i2 = where(valid, i2, _const(n2, idx_name))
    return out, i1, i2
