"""Set operations: `unique` (with `return_index`/`inverse`/`counts`, and a
static `size` under `jit`), `unique_values`, `unique_counts`."""
from ... import core, dtypes as _dt, lax
from ...core import Tracer
from .lax_numpy import full, ravel, zeros
from .reductions import cumsum
from .sorting import _sort_key_eq, where
from .util import _arr, _aval, _canon_axis, _const, _not, _static_int


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


def unique_values(x, *, size=None, fill_value=None):
    return unique(x, size=size, fill_value=fill_value)


def unique_counts(x, *, size=None, fill_value=None):
    return unique(x, return_counts=True, size=size, fill_value=fill_value)
