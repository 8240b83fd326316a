"""Sorting, searching and counting (`sort`, `argsort`, `lexsort`,
`partition`, `searchsorted`, `nonzero`, `where`, `bincount`), order
statistics (`quantile`, `percentile`, `median` and their NaN-ignoring forms)
and `interp`.

Sorting is built on the `sort` primitive (one `sort` equation per jnp.sort,
as JAX): floats in JAX's order (-0.0 == 0.0, NaNs last), stable."""
import builtins

import numpy as _np

from ..key_arrays import keys_through as _keys_through
from ... import core, dtypes as _dt, lax
from ...core import Tracer
from .indexing import _take_dynamic, _take_static, take_along_axis
from .lax_numpy import full_like, ravel, reshape, stack, zeros, zeros_like
from .reductions import all, any, cumsum
from .ufuncs import _to_bool, _where, ceil, clip, floor, isnan, round
from .util import (_SCALARS, _and, _arr, _aval, _axes_arg, _canon_axis, _const, _is_bool, _is_float, _is_int, _not,
                   _or, _promote_dtypes, _promote_dtypes_inexact, _promote_inexact, _static_int)


# -- sorting -------------------------------------------------------------------

def _is_complex(a):
    return _dt.is_complex_name(_aval(a).dtype_name)


def _sort_key_lt(a, b):
    """a < b with NaN greater than everything (the sort order), elementwise;
    complex values lexicographically (real parts, then imaginary parts)."""
    if _is_complex(a):
        ar, br = lax.real(a), lax.real(b)
        on_imag = _and(_sort_key_eq(ar, br), _sort_key_lt(lax.imag(a), lax.imag(b)))
        return _or(_sort_key_lt(ar, br), on_imag)
    if not _is_float(a):
        if _is_bool(a):
            return _and(_not(a), b)
        return lax.lt(a, b)
    a_nan, b_nan = lax.ne(a, a), lax.ne(b, b)
    return _or(lax.lt(a, b), _and(_not(a_nan), b_nan))


def _sort_key_eq(a, b, equal_nan=True):
    if not _is_float(a) or not equal_nan:
        return lax.eq(a, b)
    return _or(lax.eq(a, b), _and(lax.ne(a, a), lax.ne(b, b)))


def _sort_axis(a, axis):
    """(array, canonical axis) with axis=None meaning the flattened array."""
    a = _arr(a)
    if axis is None:
        return ravel(a), 0
    av = _aval(a)
    if av.ndim == 0:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension 0")
    return a, _canon_axis(axis, av.ndim)


def _check_sort_args(fn, kind, order):
    if order is not None:
        raise ValueError(f"'order' argument to {fn} is not supported.")
    del kind  # JAX ignores it (the sort is always stable here).


def sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    """A sorted copy of ``a`` along ``axis`` (the flattened array when None).

    Args:
      a: the array; NaNs sort to the end.
      axis: the axis to sort (default the last).
      kind, order: NumPy options; ``kind`` is ignored and ``order`` must be None.
      stable: keep equal elements in order (always true here).
      descending: sort in descending order.

    Example:
      >>> import microjax_rs.numpy as jnp
      >>> jnp.sort(jnp.array([3, 1, 2]))
      Array([1, 2, 3], dtype=int32)
    """
    _check_sort_args("sort", kind, order)
    a, axis = _sort_axis(a, axis)
    out = lax.sort(a, dimension=axis, is_stable=bool(stable))
    return lax.rev(out, (axis,)) if descending else out


def sort_complex(a):
    """``a`` sorted along its last axis, as a complex array (complex128 for 64-bit inputs,
    complex64 for narrower ones, canonicalized for the x64 flag; jnp.sort_complex).
    Complex values sort lexicographically: real parts, then imaginary parts, NaNs last."""
    a = _arr(a)
    if _aval(a).ndim == 0:
        raise ValueError("axis -1 is out of bounds for array of dimension 0")
    out = lax.sort(a, dimension=_aval(a).ndim - 1)
    name = _aval(out).dtype_name
    if not _is_complex(out):
        wide = name in ("int64", "uint64", "float64")
        name = _dt.canonical_name("complex128" if wide else "complex64")
    return lax.convert_element_type(out, name)


def argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False, dtype=None):
    """The indices that sort ``a`` along ``axis`` (the flattened array when None), in ``dtype``
    (default: the default int dtype). ``stable`` keeps equal elements in input order, ``descending`` reverses the order
    (stably); ``kind`` is ignored and ``order`` must be None.
    """
    _check_sort_args("argsort", kind, order)
    a, axis = _sort_axis(a, axis)
    av = _aval(a)
    idx_name = _dt.default_int_name()
    if descending:
        # Stable descending order: ascending on the reversed axis, mapped back.
        a = lax.rev(a, (axis,))
    iota = lax.broadcasted_iota(idx_name, av.shape, axis)
    _, out = lax.sort((a, iota), dimension=axis, is_stable=bool(stable), num_keys=1)
    if descending:
        out = lax.rev(lax.sub(_const(av.shape[axis] - 1, idx_name), out), (axis,))
    return out if dtype is None else lax.convert_element_type(out, dtype)


def lexsort(keys, axis=-1):
    """Indices that sort by the last key, then the one before, ...; stable."""
    keys = [_arr(k) for k in (keys if isinstance(keys, (tuple, list)) else list(keys))]
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    shapes = {_aval(k).shape for k in keys}
    if len(shapes) != 1:
        raise ValueError("all keys need to be the same shape")
    shape = shapes.pop()
    if not shape:
        raise TypeError("Cannot lexsort 0-d arrays")
    axis = _canon_axis(axis, len(shape))
    iota = lax.broadcasted_iota(_dt.default_int_name(), shape, axis)
    return lax.sort((*keys[::-1], iota), dimension=axis, num_keys=len(keys))[-1]


def _check_kth(kth, n, fn):
    kth = _static_int(kth, fn, "kth")
    if not -n <= kth < n:
        raise ValueError(f"kth(={kth}) out of bounds ({n})")
    return kth


def _no_complex_partition(a, fn):
    if _is_complex(a):
        raise NotImplementedError(f"jnp.{fn} for complex dtype is not implemented.")


def partition(a, kth, axis=-1):
    """``a`` rearranged along ``axis`` so that the element at position ``kth`` is the one a sort
    would put there, with no larger element before it and no smaller after it.

    Here the result is the fully sorted array, which satisfies that for every ``kth``.
    Complex arrays raise NotImplementedError, as in JAX.
    """
    a, axis = _sort_axis(a, axis)
    _no_complex_partition(a, "partition")
    _check_kth(kth, _aval(a).shape[axis], "partition")
    return sort(a, axis=axis)


def argpartition(a, kth, axis=-1):
    """Indices that partition ``a`` along ``axis`` around position ``kth``: the element at ``kth`` is
    where it would be sorted, smaller ones before and larger after. Here the indices are a full
    stable ``argsort``, which satisfies that. Complex arrays raise NotImplementedError, as in JAX.
    """
    a, axis = _sort_axis(a, axis)
    _no_complex_partition(a, "argpartition")
    _check_kth(kth, _aval(a).shape[axis], "argpartition")
    return argsort(a, axis=axis)


# -- searching and counting ----------------------------------------------------

def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    """Insertion indices by compare-and-count (every `method` gives the same
    result; the sort order is the one of `sort`: NaNs last)."""
    if side not in ("left", "right"):
        raise ValueError(f"{side!r} is an invalid value for keyword 'side'")
    if method not in ("scan", "scan_unrolled", "sort", "compare_all"):
        raise ValueError(f"invalid argument method={method!r}, expected one of "
                         "('scan', 'scan_unrolled', 'sort', 'compare_all')")
    a = _arr(a)
    v = _arr(v)
    if _aval(a).ndim != 1:
        raise ValueError("a should be 1-dimensional")
    if sorter is not None:
        # a[sorter] without a gather: sort (sorter, a) by sorter is the inverse
        # permutation; sorting (inverse, a) by it applies sorter.
        sorter = _arr(sorter)
        n_ = _aval(a).shape[0]
        iota = lax.iota(_aval(sorter).dtype_name, n_)
        _, inv = lax.sort((sorter, iota), num_keys=1)
        _, a = lax.sort((inv, a), num_keys=1)
    a, v = _promote_dtypes(a, v)
    n = _aval(a).shape[0]
    vs = _aval(v).shape
    full_ = vs + (n,)
    ab = lax.broadcast_in_dim(a, full_, (len(vs),))
    vb = lax.broadcast_in_dim(v, full_, tuple(range(len(vs))))
    before = _sort_key_lt(ab, vb) if side == "left" else _not(_sort_key_lt(vb, ab))
    return lax.reduce_sum(lax.convert_element_type(before, _dt.default_int_name()), (len(vs),))


def nonzero(a, *, size=None, fill_value=None):
    """Indices of nonzero elements. Without `size` the input must be concrete
    (the output shape depends on the values); with `size` the first `size`
    indices are returned, padded with `fill_value` (default 0)."""
    a = _arr(a)
    av = _aval(a)
    if av.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use jnp.atleast_1d(scalar) instead.")
    if size is None:
        if isinstance(a, Tracer):
            raise core.ConcretizationTypeError(
                "jnp.nonzero: the size argument must be given (and static) when the input is traced, "
                "because the output shape depends on the values")
        return tuple(core.to_array(i.astype(_dt.np_dtype(_dt.default_int_name())))
                     for i in _np.nonzero(_np.asarray(a)))
    size = _static_int(size, "nonzero", "size")
    idx_name = _dt.default_int_name()
    mask = ravel(_to_bool(a))
    n = av.size
    pos = lax.sub(cumsum(lax.convert_element_type(mask, idx_name)), _const(1, idx_name))
    # slot[k] = the j with mask[j] and pos[j] == k (one-hot over (size, n)).
    hit = _and(lax.broadcast_in_dim(mask, (size, n), (1,)),
               lax.eq(lax.broadcast_in_dim(pos, (size, n), (1,)), lax.broadcasted_iota(idx_name, (size, n), 0)))
    js = lax.broadcasted_iota(idx_name, (size, n), 1)
    flat = lax.reduce_sum(lax.select_n(hit, zeros((size, n), idx_name), js), (1,))
    found = lax.reduce_max(hit, (1,)) if n else zeros((size,), "bool")
    out = []
    rem_ = flat
    strides = [int(_np.prod(av.shape[i + 1:])) for i in range(av.ndim)]
    fills = fill_value if isinstance(fill_value, (tuple, list)) else (fill_value,) * av.ndim
    for d, st in enumerate(strides):
        q = lax.div(rem_, _const(st, idx_name))
        rem_ = lax.sub(rem_, lax.mul(q, _const(st, idx_name)))
        fv = 0 if fills[d] is None else fills[d]
        out.append(where(found, q, _const(fv, idx_name) if type(fv) in _SCALARS else fv))
    return tuple(out)


def flatnonzero(a, *, size=None, fill_value=None):
    """The indices of the nonzero elements of the flattened ``a``. Under ``jit`` give ``size``
    (padding with ``fill_value``, default 0), as the result's length depends on the values.
    """
    return nonzero(ravel(_arr(a)), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    """The indices of the nonzero elements of ``a``, one row per element, shape ``(N, a.ndim)``.
    Under ``jit`` give ``size`` (the number of rows; missing rows are ``fill_value``, default 0).
    """
    a = _arr(a)
    if _aval(a).ndim == 0:
        a = reshape(a, (1,))
        res = nonzero(a, size=size, fill_value=fill_value)
        return reshape(res[0], (-1, 0))
    return stack(nonzero(a, size=size, fill_value=fill_value), axis=1)


@_keys_through
def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """Elementwise choice: ``x`` where ``condition`` is true, else ``y``.

    Args:
      condition: a boolean (or truthy) array.
      x, y: arrays or scalars, broadcast with ``condition``; their dtypes are promoted.
      size, fill_value: for the one-argument form only, as in ``nonzero``.

    With ``condition`` alone it returns ``nonzero(condition)``: give ``size`` to use it under ``jit``.

    Example:
      >>> import microjax_rs.numpy as jnp
      >>> x = jnp.array([-1.0, 2.0, -3.0])
      >>> jnp.where(x > 0, x, 0.0)
      Array([0., 2., 0.], dtype=float32)
    """
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError("Either both or neither of the x and y arguments should be provided to jax.numpy.where")
    return _where(condition, x, y)


def bincount(x, weights=None, minlength=0, *, length=None):
    """Number of occurrences of each non-negative integer value in the 1-D integer array ``x``
    (negative values count in bin 0, as in JAX), or the sum of ``weights`` per value.

    Args:
      x: a 1-D integer array.
      weights: optional weights of ``x``'s shape.
      minlength: the least number of bins.
      length: the number of bins; required (and static) when ``x`` is traced.
    """
    x = _arr(x)
    if _aval(x).dtype_name == "bool":  # as JAX: booleans count as 0 and 1
        x = lax.convert_element_type(x, _dt.default_int_name())
    if not _is_int(x):
        raise TypeError(f"bincount: x must be of integer type, got {_aval(x).dtype_name}")
    if _aval(x).ndim != 1:
        raise ValueError("bincount: x must be one-dimensional")
    if length is None:
        if isinstance(x, Tracer):
            raise core.ConcretizationTypeError(
                "jnp.bincount: the length argument must be given (and static) when x is traced")
        xv = _np.asarray(x)
        length = builtins.max(int(minlength), int(xv.max()) + 1 if xv.size else 0)
    length = _static_int(length, "bincount", "length")
    n = _aval(x).shape[0]
    if not _aval(x).dtype_name.startswith("uint"):
        # JAX counts negative values in bin 0.
        x = lax.max(x, _const(0, _aval(x).dtype_name))
    hit = lax.eq(lax.broadcast_in_dim(x, (length, n), (1,)),
                 lax.broadcasted_iota(_aval(x).dtype_name, (length, n), 0))
    if weights is None:
        return lax.reduce_sum(lax.convert_element_type(hit, _dt.default_int_name()), (1,))
    w = _arr(weights)
    wb = lax.broadcast_in_dim(w, (length, n), (1,))
    return lax.reduce_sum(lax.select_n(hit, zeros_like(wb), wb), (1,))

# -- order statistics ----------------------------------------------------------

def _rows_last(a, axis):
    """`a` with the reduced `axis` (None, int or tuple) merged into one last axis;
    returns (rows, kept shape with reduced axes as 1, reduced axes)."""
    a = _arr(a)
    if axis is None:
        axes = tuple(range(_aval(a).ndim))
    else:
        axes = _axes_arg(axis, _aval(a).ndim)
    av = _aval(a)
    keep = [i for i in range(av.ndim) if i not in axes]
    x = lax.transpose(a, keep + list(axes))
    n = 1
    for i in axes:
        n *= av.shape[i]
    x = lax.reshape(x, tuple(av.shape[i] for i in keep) + (n,))
    return x, axes


_QUANTILE_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


def _weights_like(a, weights, axis):
    """`weights` broadcast to `a`'s shape: the same shape, or (with `axis`)
    the shape of the reduced axes, as JAX accepts."""
    av = _aval(a)
    w = lax.convert_element_type(_arr(weights), av.dtype_name)
    wv = _aval(w)
    if wv.shape == av.shape:
        return w
    if axis is None:
        raise ValueError("Weights shape must match 'a' shape when axis is None.")
    axes = _axes_arg(axis, av.ndim)
    reduced = tuple(av.shape[i] for i in axes)
    if wv.shape != reduced:
        raise ValueError(f"Weights shape {wv.shape} must match reduction axes {reduced}")
    order = sorted(range(len(axes)), key=lambda i: axes[i])
    return lax.broadcast_in_dim(lax.transpose(w, tuple(order)), av.shape, tuple(sorted(axes)))


def _weighted_quantile(a, q, w, axis, keepdims, ignore_nan):
    """The inverted-CDF quantile with weights (NumPy's `method='inverted_cdf'`):
    per slice, the smallest value whose cumulative share of the weight
    reaches `q`. NaN in a slice (or a negative weight) gives NaN; with
    `ignore_nan` NaN values are skipped instead."""
    av = _aval(a)
    x, axes = _rows_last(a, axis)
    wx, _ = _rows_last(w, axis)
    n = _aval(x).shape[-1]
    nan = isnan(x)
    if ignore_nan:
        wx = _where(nan, _const(0, av.dtype_name), wx)
    order = argsort(x, axis=-1)
    xs = take_along_axis(x, order, axis=-1)
    ws = take_along_axis(wx, order, axis=-1)
    cdf = cumsum(ws, axis=-1)
    lead = _aval(xs).shape[:-1]
    total = lax.reduce_sum(ws, (len(lead),))
    qs = _aval(q).shape
    nl = len(lead)
    full_ = lead + qs + (n,)
    cdf_b = lax.broadcast_in_dim(cdf, full_, tuple(range(nl)) + (len(full_) - 1,))
    target = lax.mul(lax.broadcast_in_dim(q, full_, tuple(range(nl, nl + len(qs)))),
                     lax.broadcast_in_dim(total, full_, tuple(range(nl))))
    # The first position whose cumulative weight reaches the target.
    below = lax.convert_element_type(lax.lt(cdf_b, target), av.dtype_name)
    idx = lax.min(lax.reduce_sum(below, (len(full_) - 1,)), _const(n - 1, av.dtype_name))
    out = _select_rank(xs, idx)
    out = lax.transpose(out, tuple(range(nl, nl + len(qs))) + tuple(range(nl)))
    if keepdims:
        out = lax.reshape(out, qs + tuple(1 if i in axes else d for i, d in enumerate(av.shape)))
    bad = any(lax.lt(w, _const(0, av.dtype_name)), axis=axis, keepdims=keepdims)
    bad = _or(bad, all(isnan(a), axis=axis, keepdims=keepdims) if ignore_nan
              else any(isnan(a), axis=axis, keepdims=keepdims))
    return where(bad, _np.nan, out)


def _quantile(a, q, axis, method, keepdims, name, ignore_nan=False, weights=None):
    if method not in _QUANTILE_METHODS:
        raise ValueError("method can only be 'linear', 'lower', 'higher', 'midpoint', 'nearest' or 'inverted_cdf'")
    if weights is not None and method != "inverted_cdf":
        raise NotImplementedError(f"{method} doesn't support weights. Only method 'inverted_cdf' supports weights.")
    if _is_complex(_arr(a)):
        raise ValueError("quantile does not support complex input, as the operation is poorly defined.")
    a, q = _promote_dtypes_inexact(_arr(a), _arr(q))
    if method == "inverted_cdf":
        w = _weights_like(a, weights, axis) if weights is not None else full_like(a, 1)
        if _aval(a).size == 0:
            raise ValueError(f"{name} of an empty array")
        return _weighted_quantile(a, q, w, axis, keepdims, ignore_nan)
    av = _aval(a)
    x, axes = _rows_last(a, axis)
    n = _aval(x).shape[-1]
    if n == 0:
        raise ValueError(f"{name} of an empty array")
    xs = sort(x, axis=-1)          # NaNs last
    lead = _aval(xs).shape[:-1]
    qs = _aval(q).shape
    fname = _aval(xs).dtype_name
    if ignore_nan:
        # Per row: positions among the non-NaN values, which sort first.
        count = lax.reduce_sum(lax.convert_element_type(_not(isnan(xs)), fname), (len(lead),))
        last = lax.broadcast_in_dim(lax.sub(count, _const(1, fname)), lead + qs, tuple(range(len(lead))))
        qb = lax.broadcast_in_dim(q, lead + qs, tuple(range(len(lead), len(lead) + len(qs))))
        pos = lax.mul(qb, last)
    else:
        pos = lax.broadcast_in_dim(lax.mul(q, float(n - 1)), lead + qs,
                                   tuple(range(len(lead), len(lead) + len(qs))))
    if method in ("linear", "lower", "midpoint"):
        lo = floor(pos)
    elif method == "higher":
        lo = ceil(pos)
    else:
        lo = round(pos)
    lo = lax.max(lo, _const(0, fname))
    hi = lax.min(lax.add(lo, _const(1, fname)), _const(n - 1, fname))
    if ignore_nan:
        hi = lax.min(hi, lax.max(last, _const(0, fname)))
    v_lo = _select_rank(xs, lo)
    v_hi = _select_rank(xs, hi)
    if method == "linear":
        out = lax.add(v_lo, lax.mul(lax.sub(v_hi, v_lo), lax.sub(pos, lo)))
    elif method == "midpoint":
        mid = lax.mul(lax.add(v_lo, v_hi), _const(0.5, fname))
        out = lax.select_n(lax.eq(lax.sub(pos, lo), _const(0, fname)), mid, v_lo)
    else:
        out = v_lo
    # NumPy puts the q dimensions first.
    nl = len(lead)
    out = lax.transpose(out, tuple(range(nl, nl + len(qs))) + tuple(range(nl)))
    if keepdims:
        shape = qs + tuple(1 if i in axes else d for i, d in enumerate(av.shape))
        out = lax.reshape(out, shape)
    if ignore_nan:
        # All-NaN slices give NaN (NumPy warns and returns NaN).
        empty = all(isnan(a), axis=axis, keepdims=keepdims)
        return where(empty, _np.nan, out)
    # NaN anywhere in a slice gives NaN (as NumPy).
    has_nan = any(isnan(a), axis=axis, keepdims=keepdims)
    return where(has_nan, _np.nan, out)


def _select_rank(xs, r):
    """xs[..., r[..., *qs]] for float ranks `r` of shape lead + qs (exact
    one-hot selection along the last axis of `xs`, shape lead + (n,))."""
    lead = _aval(xs).shape[:-1]
    n = _aval(xs).shape[-1]
    rs = _aval(r).shape
    full_ = rs + (n,)
    ri = lax.convert_element_type(r, "int32")
    rb = lax.broadcast_in_dim(ri, full_, tuple(range(len(rs))))
    hit = lax.eq(rb, lax.broadcasted_iota("int32", full_, len(rs)))
    xb = lax.broadcast_in_dim(xs, full_, tuple(range(len(lead))) + (len(full_) - 1,))
    return lax.reduce_sum(lax.select_n(hit, zeros_like(xb), xb), (len(full_) - 1,))


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
             weights=None, interpolation=None):
    """The `q`-th quantiles along `axis` (NumPy's methods 'linear', 'lower',
    'higher', 'midpoint', 'nearest', and 'inverted_cdf', the one taking
    `weights`)."""
    return _quantile(a, q, axis, interpolation or method, keepdims, "quantile", weights=weights)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                weights=None, interpolation=None):
    """`quantile` ignoring NaNs."""
    return _quantile(a, q, axis, interpolation or method, keepdims, "nanquantile", ignore_nan=True,
                     weights=weights)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
               weights=None, interpolation=None):
    """`quantile` with `q` in percent."""
    (q,) = _promote_inexact(_arr(q))
    return quantile(a, lax.div(q, 100.0), axis=axis, method=interpolation or method, keepdims=keepdims,
                    weights=weights)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                  weights=None, interpolation=None):
    """`nanquantile` with `q` in percent."""
    (q,) = _promote_inexact(_arr(q))
    return nanquantile(a, lax.div(q, 100.0), axis=axis, method=interpolation or method, keepdims=keepdims,
                       weights=weights)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median of ``a`` over ``axis`` (all elements when None); the mean of the two middle values for
    even counts. ``out`` must be None; ``overwrite_input`` is ignored; ``keepdims`` as in ``mean``.
    """
    return quantile(a, 0.5, axis=axis, keepdims=keepdims, method="midpoint")


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median of ``a`` over ``axis``, ignoring NaN (NaN for an all-NaN slice)."""
    return nanquantile(a, 0.5, axis=axis, keepdims=keepdims, method="midpoint")


# -- interpolation -------------------------------------------------------------

def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation (jnp.interp); `left` / `right` may be
    'extrapolate'; with `period`, x and xp are taken modulo the period
    (`left` / `right` are then ignored)."""
    for name, v in (("left", left), ("right", right)):
        if isinstance(v, str) and v != "extrapolate":
            raise ValueError(f"{name}={v!r} is not permitted; {name} must be an array-like or 'extrapolate'")
    if _is_complex(_arr(x)) or _is_complex(_arr(xp)):
        raise ValueError("jnp.interp: complex x values not supported.")
    x, xp, fp = _promote_dtypes_inexact(_arr(x), _arr(xp), _arr(fp))
    if _aval(xp).ndim != 1 or _aval(fp).ndim != 1 or _aval(xp).shape != _aval(fp).shape:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    if period is not None:
        from .ufuncs import abs as _abs, remainder
        from .lax_numpy import concatenate
        per = _abs(lax.convert_element_type(_arr(period), _aval(x).dtype_name))
        x = remainder(x, per)
        xp = remainder(xp, per)
        order = argsort(xp)
        xp, fp = _take_dynamic(xp, 0, order), _take_dynamic(fp, 0, order)
        # One period's wrap-around on each side.
        m = _aval(xp).shape[0]
        xp = concatenate([lax.sub(_take_static(xp, 0, [m - 1]), per), xp, lax.add(_take_static(xp, 0, [0]), per)])
        fp = concatenate([_take_static(fp, 0, [m - 1]), fp, _take_static(fp, 0, [0])])
        left = right = None
    n = _aval(xp).shape[0]
    i = clip(searchsorted(xp, x, side="right"), 1, n - 1)
    i = lax.convert_element_type(i, "int32")
    im1 = lax.sub(i, _const(1, "int32"))
    x0, x1 = _take_dynamic(xp, 0, im1), _take_dynamic(xp, 0, i)
    f0, f1 = _take_dynamic(fp, 0, im1), _take_dynamic(fp, 0, i)
    dx = lax.sub(x1, x0)
    safe_dx = where(lax.eq(dx, 0.0), 1.0, dx)
    t = lax.div(lax.sub(x, x0), safe_dx)
    out = where(lax.eq(dx, 0.0), f1, lax.add(f0, lax.mul(t, lax.sub(f1, f0))))
    left_x = isinstance(left, str)
    right_x = isinstance(right, str)
    if left_x or right_x:
        # The end segments' lines continue past the ends.
        def at(arr, i):
            return lax.reshape(_take_static(arr, 0, [builtins.max(i, 0)]), ())

        x0, x1, f0, f1 = at(xp, 0), at(xp, 1 if n > 1 else 0), at(fp, 0), at(fp, 1 if n > 1 else 0)
        y0, y1, g0, g1 = at(xp, n - 2), at(xp, n - 1), at(fp, n - 2), at(fp, n - 1)
        if left_x:
            left = lax.add(f0, lax.mul(lax.sub(x, x0), lax.div(lax.sub(f1, f0), lax.sub(x1, x0))))
        if right_x:
            right = lax.add(g1, lax.mul(lax.sub(x, y1), lax.div(lax.sub(g1, g0), lax.sub(y1, y0))))
    first, last = _take_static(fp, 0, [0]), _take_static(fp, 0, [n - 1])
    lo = lax.reshape(first, ()) if left is None else left
    hi = lax.reshape(last, ()) if right is None else right
    xp0 = lax.reshape(_take_static(xp, 0, [0]), ())
    xpn = lax.reshape(_take_static(xp, 0, [n - 1]), ())
    out = where(lax.lt(x, xp0), lo, out)
    return where(lax.gt(x, xpn), hi, out)
