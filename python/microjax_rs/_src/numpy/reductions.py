"""Reductions (`sum`, `max`, `mean`, `var`, ... with `axis`, `keepdims`,
`where`, `initial`), their NaN-ignoring and arg- forms, cumulative sums and
products, differences, `trace`, and whole-array comparisons (`allclose`,
`array_equal`)."""
import builtins
import inspect as _inspect

import numpy as _np

from ... import dtypes as _dt, lax
from ..tables import HALF_FLOAT_NAMES
from .indexing import _slice_axis, diagonal
from .lax_numpy import _ravel_unless_axis, asarray, broadcast_to, concatenate, full, ravel
from .ufuncs import _to_bool, _where, divide, equal, isclose, isnan, multiply, not_equal, sqrt, subtract
from .util import (_SCALARS, _and, _arr, _aval, _broadcast_shapes, _broadcast_to_shape, _canon_axis, _const, _is_bool,
                   _is_float, _keepdims, _name, _not, _or, _promote, _promote_dtypes, _promote_dtypes_inexact,
                   _reduce_axes, _upcast_f16)


# -- reductions ----------------------------------------------------------------
# The shared descriptions of the reductions' parameters, in the order their
# docstrings list them (None: only with a description of the function's own).
_ARGS = {
    "a": "the input array.",
    "axis": "the axis or tuple of axes to reduce; None (default) reduces all axes.",
    "dtype": "the accumulation and result dtype (default: see below).",
    "out": "must be None.",
    "ddof": "the delta degrees of freedom.",
    "initial": "a scalar combined into every reduction (required for empty reductions of max/min).",
    "where": "a boolean mask of the elements to include.",
    "promote_integers": None,
    "mean": "a precomputed mean.",
    "keepdims": "if true, reduced axes stay as size-1 axes.",
}


def _doc(summary, note="", **texts):
    """Decorator giving a reduction its docstring: `summary`, an Args section of the
    function's parameters described in `_ARGS` (`texts` overrides a description), and
    `note`."""

    def set_doc(fn):
        params = _inspect.signature(fn).parameters
        args = [f"  {p}: {t}" for p, t in {**_ARGS, **texts}.items() if p in params and t]
        fn.__doc__ = "\n\n".join([summary, "Args:\n" + "\n".join(args)] + ([note] if note else []))
        return fn

    return set_doc


def _reduce_prep(a, axis, where_):
    (a,) = _promote(a)
    av = _aval(a)
    axes = _reduce_axes(av, axis)
    if where_ is not None:
        where_ = _to_bool(where_)
        _broadcast_shapes(_aval(where_).shape, av.shape)
        if _aval(where_).shape != av.shape:
            where_ = _broadcast_to_shape(where_, av.shape)
    return a, av, axes, where_


def _check_where(where, fname):
    """JAX accepts a `where=` mask of bools only (Python bool or bool array)."""
    if where is None or type(where) is bool:
        return
    dtype = getattr(where, "dtype", None)
    if dtype is None:
        dtype = _np.asarray(where).dtype
    if _np.dtype(dtype) != _np.bool_:
        raise ValueError(f"jnp.{fname}: where must be None or a boolean array; "
                         f"got where.dtype={_np.dtype(dtype)!r}.")


def _finish(res, av, axes, keepdims):
    return _keepdims(res, av, axes) if keepdims else res


def _sum_dtype(name):
    if name == "bool" or _dt.is_int_name(name):
        # As JAX: integer sums accumulate in the default (u)int width.
        target = ("uint64" if _dt.x64_enabled() else "uint32") if name.startswith("uint") \
            else _dt.default_int_name()
        if name == "bool" or _np.dtype(name).itemsize < _np.dtype(target).itemsize:
            return target
    return name


def _accumulation_operand(a, name, dtype, promote_integers, bool_as_int=False):
    """`a` (of dtype `name`) in the dtype a sum or product accumulates in: `dtype` if
    given, else the promoted integer type (`promote_integers`), else bool as the
    default int (`bool_as_int`), else its own."""
    if dtype is not None:
        return lax.convert_element_type(a, dtype)
    if promote_integers:
        target = _sum_dtype(name)
        return a if target == name else lax.convert_element_type(a, target)
    if bool_as_int and name == "bool":
        return lax.convert_element_type(a, _dt.default_int_name())
    return a


def _bool_reduction(kind, a, axis, keepdims, initial, where):
    """any, and sum with dtype=bool (kind 'or') / all, and prod with dtype=bool
    (kind 'and'): logical reductions of the truth values, as JAX."""
    a, av, axes, w = _reduce_prep(a, axis, where)
    b = _to_bool(a)
    if w is not None:
        b = _and(b, w) if kind == "or" else _or(b, _not(w))
    res = lax.reduce_or(b, axes) if kind == "or" else lax.reduce_and(b, axes)
    if initial is not None:
        res = (_or if kind == "or" else _and)(res, _initial(initial, res))
    return _finish(res, av, axes, keepdims)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None, promote_integers=True):
    """Sum of the elements of ``a`` over the given axes.

    Args:
      a: the input array.
      axis: the axis or tuple of axes to reduce; None (default) reduces all axes.
      dtype: the accumulation and result dtype (default: see below).
      out: must be None.
      initial: a scalar added to every result.
      where: a boolean mask of the elements to include.
      promote_integers: if true (default), small integer and boolean inputs accumulate in
        the default int (or uint) dtype, as in JAX.
      keepdims: if true, reduced axes stay as size-1 axes.

    Float16/bfloat16 inputs accumulate in float32 and are cast back unless ``dtype`` is given;
    ``dtype=bool`` gives a logical or.

    Example:
      >>> import microjax_rs.numpy as jnp
      >>> x = jnp.array([[1, 2], [3, 4]])
      >>> jnp.sum(x)
      Array(10, dtype=int32)
      >>> jnp.sum(x, axis=0)
      Array([4, 6], dtype=int32)
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.sum is not supported.")
    _check_where(where, "sum")
    if dtype is not None and _name(dtype) == "bool":
        return _bool_reduction("or", a, axis, keepdims, initial, where)
    a, av, axes, w = _reduce_prep(a, axis, where)
    a = _accumulation_operand(a, av.dtype_name, dtype, promote_integers, bool_as_int=True)
    a, out_name = _upcast_half(a, dtype)
    if w is not None:
        a = _where_zero(w, a)
    res = lax.reduce_sum(a, axes)
    if initial is not None:
        res = lax.add(res, _initial(initial, res))
    return _finish(_downcast(res, out_name), av, axes, keepdims)


def _upcast_half(a, dtype):
    """As JAX, a sum or product of float16/bfloat16 without an explicit
    `dtype` accumulates in float32: `(a in its computation dtype, the result
    dtype name to cast back to or None)`."""
    name = _aval(a).dtype_name
    if dtype is None and name in HALF_FLOAT_NAMES:
        return lax.convert_element_type(a, "float32"), name
    return a, None


def _downcast(res, name):
    return res if name is None else lax.convert_element_type(res, name)


def _initial(initial, like):
    """`initial=` converted to the reduction's dtype (as JAX)."""
    name = _aval(like).dtype_name
    if type(initial) in _SCALARS:
        return _const(initial, name)
    shape = _np.shape(initial)
    if shape != ():
        raise ValueError(f"initial value must be a scalar. Got array of shape {shape}")
    return lax.convert_element_type(_arr(initial), name)


def _where_zero(w, a):
    """_where(w, a, 0) in a's dtype."""
    return _where(w, a, 0)


def _identity_for(name, kind):
    """The identity of max (kind='max') or min (kind='min') for a dtype."""
    if name == "bool":
        return kind == "min"
    if _dt.is_float_name(name) or _dt.is_complex_name(name):
        return -_np.inf if kind == "max" else _np.inf
    info = _np.iinfo(_np.dtype(name))
    return int(info.min) if kind == "max" else int(info.max)


def _minmax(kind, a, axis, keepdims, initial, where):
    _check_where(where, kind)
    a, av, axes, w = _reduce_prep(a, axis, where)
    if w is not None and initial is None:
        raise ValueError(f"reduction operation {kind} does not have an identity, so to use a "
                         f"where mask one has to specify 'initial'")
    if initial is None and av.size == 0 and builtins.any(av.shape[i] == 0 for i in axes):
        raise ValueError(f"zero-size array to reduction operation {kind} which has no identity")
    if w is not None:
        a = _where(w, a, _const(_identity_for(av.dtype_name, kind), av.dtype_name))
    res = lax.reduce_max(a, axes) if kind == "max" else lax.reduce_min(a, axes)
    if initial is not None:
        res = (lax.max if kind == "max" else lax.min)(res, _initial(initial, res))
    return _finish(res, av, axes, keepdims)


@_doc("Maximum of the elements of ``a`` over the given axes (NaN propagates).", note="Also exported as ``jnp.amax``.")
def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    return _minmax("max", a, axis, keepdims, initial, where)


@_doc("Minimum of the elements of ``a`` over the given axes (NaN propagates).", note="Also exported as ``jnp.amin``.")
def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    return _minmax("min", a, axis, keepdims, initial, where)


amax, amin = max, min


@_doc("Range (maximum minus minimum) of the elements of ``a`` over the given axes.")
def ptp(a, axis=None, out=None, keepdims=False):
    return subtract(max(a, axis=axis, keepdims=keepdims), min(a, axis=axis, keepdims=keepdims))


@_doc("Product of the elements of ``a`` over the given axes.",
      note="``dtype=bool`` gives a logical and. Also exported as ``jnp.product``.",
      initial="a scalar multiplied into every result.",
      promote_integers="if true (default), small integer inputs accumulate in the default int dtype.")
def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None, promote_integers=True):
    _check_where(where, "prod")
    if dtype is not None and _name(dtype) == "bool":
        return _bool_reduction("and", a, axis, keepdims, initial, where)
    a, av, axes, w = _reduce_prep(a, axis, where)
    a = _accumulation_operand(a, av.dtype_name, dtype, promote_integers)
    a, out_name = _upcast_half(a, dtype)
    if w is not None:
        a = _where(w, a, _const(1, _aval(a).dtype_name))
    res = lax.reduce_prod(a, axes)
    if initial is not None:
        res = lax.mul(res, _initial(initial, res))
    return _finish(_downcast(res, out_name), av, axes, keepdims)


product = prod


@_doc("Whether any element of ``a`` over the given axes is true (nonzero); a boolean array.",
      note="Also exported as ``jnp.sometrue``.")
def any(a, axis=None, out=None, keepdims=False, *, where=None):
    _check_where(where, "any")
    return _bool_reduction("or", a, axis, keepdims, None, where)


@_doc("Whether every element of ``a`` over the given axes is true (nonzero); a boolean array.",
      note="Also exported as ``jnp.alltrue``.")
def all(a, axis=None, out=None, keepdims=False, *, where=None):
    _check_where(where, "all")
    return _bool_reduction("and", a, axis, keepdims, None, where)


alltrue, sometrue = all, any


@_doc("Number of nonzero elements of ``a`` over the given axes (default int dtype).")
def count_nonzero(a, axis=None, keepdims=False):
    return sum(_to_bool(_arr(a)), axis=axis, keepdims=keepdims, dtype=_dt.default_int_name())


def _count(av, axes, w, dtype_name):
    if w is None:
        n = 1
        for i in axes:
            n *= av.shape[i]
        return _const(n, dtype_name)
    return lax.reduce_sum(lax.convert_element_type(w, dtype_name), axes)


def _moment_prep(a, axis, dtype, where, upcast_explicit=True):
    """`_reduce_prep` for mean and var: `(x, aval, axes, where mask, result dtype name,
    computation dtype name)`; the result dtype is `dtype`, else `a`'s float dtype or the
    default float, and `x` is `a` in the computation dtype (float32 for half
    floats; with an explicit `dtype` only if `upcast_explicit`, as JAX's var)."""
    a, av, axes, w = _reduce_prep(a, axis, where)
    if dtype is None:
        name = av.dtype_name if _dt.is_inexact_name(av.dtype_name) else _dt.default_float_name()
    else:
        name = _name(dtype)
    comp = _upcast_f16(name) if dtype is None or upcast_explicit else name
    x = lax.convert_element_type(a, comp) if av.dtype_name != comp else a
    return x, av, axes, w, name, comp


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """Arithmetic mean of the elements of ``a`` over the given axes.

    Args:
      a: the input array.
      axis: the axis or tuple of axes to reduce; None (default) reduces all axes.
      dtype: the accumulation and result dtype (default: see below).
      out: must be None.
      where: a boolean mask of the elements to include.
      keepdims: if true, reduced axes stay as size-1 axes.

    Integer inputs give the default float dtype; float16/bfloat16 accumulate in float32.

    Example:
      >>> import microjax_rs.numpy as jnp
      >>> jnp.mean(jnp.array([1.0, 2.0, 4.0, 5.0]))
      Array(3., dtype=float32)
    """
    _check_where(where, "mean")
    x, av, axes, w, name, comp = _moment_prep(a, axis, dtype, where, upcast_explicit=False)
    if w is not None:
        x = _where_zero(w, x)
    s = lax.reduce_sum(x, axes)
    res = lax.div(s, _count(av, axes, w, comp))
    res = lax.convert_element_type(res, name) if comp != name else res
    return _finish(res, av, axes, keepdims)


# What the docstrings of var and std add to `_ARGS`.
_MOMENT_DOC = dict(note="The result is NaN where ``ddof >= N``.",
                   ddof="the delta degrees of freedom (``correction`` is the Array API name for it).")


@_doc("Variance of the elements of ``a`` over the given axes: ``sum((a - mean)**2) / (N - ddof)``.",
      mean="a precomputed mean (with ``keepdims=True`` shape) to use.", **_MOMENT_DOC)
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None, correction=None):
    if correction is not None:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    _check_where(where, "var")
    x, av, axes, w, name, comp = _moment_prep(a, axis, dtype, where)
    n = _count(av, axes, w, comp)
    # Complex data: the variance of the moduli, in the parts' dtype (as JAX).
    rcomp = _dt.real_dtype_name(comp)
    if rcomp != comp and dtype is None:
        name = rcomp
    keep_shape = tuple(1 if i in axes else d for i, d in enumerate(av.shape))
    if mean is None:
        xs = _where_zero(w, x) if w is not None else x
        mu = lax.reshape(lax.div(lax.reduce_sum(xs, axes), n), keep_shape)
    else:
        # A precomputed mean (NumPy 2's `mean=`), shaped as with keepdims=True.
        mu = lax.convert_element_type(_arr(mean), comp)
        if _aval(mu).ndim != len(keep_shape):
            raise TypeError(f"var: mean= must have the shape of the mean with keepdims=True, {keep_shape}; "
                            f"got {_aval(mu).shape}")
    centered = lax.sub(x, _broadcast_to_shape(mu, av.shape))
    if rcomp != comp:
        sq = lax.real(lax.mul(centered, lax.conj(centered)))
        n = _count(av, axes, w, rcomp)
    else:
        sq = lax.mul(centered, centered)
    if w is not None:
        sq = _where_zero(w, sq)
    dof = lax.sub(n, float(ddof))
    # As JAX: no degrees of freedom left (ddof >= count) gives NaN.
    res = _where(lax.le(dof, _const(0, rcomp)), _const(_np.nan, rcomp), lax.div(lax.reduce_sum(sq, axes), dof))
    res = lax.convert_element_type(res, name) if rcomp != name else res
    return _finish(res, av, axes, keepdims)


@_doc("Standard deviation (square root of ``var``) of the elements of ``a`` over the given axes.",
      mean="a precomputed mean to use.", **_MOMENT_DOC)
def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None, correction=None):
    _check_where(where, "std")
    return sqrt(var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where, mean=mean,
                    correction=correction))


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """Weighted average of ``a`` over ``axis``.

    Args:
      a: the input array.
      axis: the axis or axes to average over (None: all).
      weights: optional weights, of ``a``'s shape or 1-D along a single ``axis`` (N-D weights with a
        tuple ``axis`` are broadcast along those axes).
      returned: if true, also return the sum of the weights.
      keepdims: if true, reduced axes stay as size-1 axes.

    Returns:
      The average, or ``(average, sum_of_weights)`` when ``returned`` is true.
    """
    if weights is None:
        avg = mean(a, axis=axis, keepdims=keepdims)
        av = _aval(_arr(a))
        axes = _reduce_axes(av, axis)
        n = 1
        for i in axes:
            n *= av.shape[i]
        wsum = full(_aval(avg).shape, n, _aval(avg).dtype)
    else:
        a, w = _promote_dtypes_inexact(_arr(a), _arr(weights))
        av, wv = _aval(a), _aval(w)
        if wv.shape != av.shape:
            if axis is None:
                raise ValueError("Axis must be specified when shapes of a and weights differ.")
            if isinstance(axis, (tuple, list)) and wv.ndim == len(axis) and wv.ndim > 1:
                # N-D weights: weights.shape == tuple(a.shape[ax] for ax in axis) (NumPy 2).
                axes_t = tuple(_canon_axis(ax, av.ndim) for ax in axis)
                if wv.shape != tuple(av.shape[ax] for ax in axes_t):
                    raise ValueError("Shape of weights must be consistent with shape of a along specified axis.")
                order = tuple(sorted(range(len(axes_t)), key=lambda i: axes_t[i]))
                w = lax.broadcast_in_dim(lax.transpose(w, order), av.shape, tuple(sorted(axes_t)))
                wv = _aval(w)
        if wv.shape != av.shape:
            if wv.ndim != 1:
                raise TypeError("1D weights expected when shapes of a and weights differ.")
            ax = _canon_axis(axis, av.ndim)
            if wv.shape[0] != av.shape[ax]:
                raise ValueError("Length of weights not compatible with specified axis.")
            w = lax.broadcast_in_dim(w, av.shape, (ax,))
        wsum = sum(w, axis=axis, keepdims=keepdims)
        avg = divide(sum(multiply(a, w), axis=axis, keepdims=keepdims), wsum)
    if returned:
        if _aval(wsum).shape != _aval(avg).shape:
            wsum = broadcast_to(wsum, _aval(avg).shape)
        return avg, wsum
    return avg


def _is_inexact(x):
    """Floating or complex (the dtypes that hold NaN)."""
    return _dt.is_inexact_name(_aval(x).dtype_name)


def _nan_as(a, fill, where, name):
    """`a` with its NaNs replaced by `fill` (the identity of the reduction `name`)."""
    _check_where(where, name)
    a = _arr(a)
    return _where(isnan(a), fill, a) if _is_inexact(a) else a


@_doc("Sum over the given axes, treating NaN as zero.")
def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    a = _nan_as(a, 0.0, where, "nansum")
    return sum(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)


@_doc("Product over the given axes, treating NaN as one.")
def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    a = _nan_as(a, 1.0, where, "nanprod")
    return prod(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)


def _nan_extremum(reduce, nan_fill, a, axis, keepdims, initial, where):
    """`reduce` (max or min) skipping NaNs (`nan_fill` stands in for them); NaN where all are NaN."""
    a = _arr(a)
    if not _is_inexact(a):
        return reduce(a, axis=axis, keepdims=keepdims, initial=initial, where=where)
    res = reduce(_where(isnan(a), nan_fill, a), axis=axis, keepdims=keepdims, initial=initial, where=where)
    if initial is not None:  # as JAX and NumPy: all-NaN slices give `initial`
        return res
    all_nan = all(isnan(a), axis=axis, keepdims=keepdims)
    return _where(all_nan, _np.nan, res)


@_doc("Maximum over the given axes, ignoring NaN (NaN for an all-NaN slice, or ``initial`` if given).")
def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _check_where(where, "nanmax")
    return _nan_extremum(max, -_np.inf, a, axis, keepdims, initial, where)


@_doc("Minimum over the given axes, ignoring NaN (NaN for an all-NaN slice, or ``initial`` if given).")
def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _check_where(where, "nanmin")
    return _nan_extremum(min, _np.inf, a, axis, keepdims, initial, where)


def _not_nan(a, where):
    """Where `a` is not NaN (and `where` holds, if given)."""
    ok = _not(isnan(a))
    if where is not None:
        ok = _and(ok, _to_bool(where))
    return ok


@_doc("Mean over the given axes of the elements that are not NaN.")
def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    _check_where(where, "nanmean")
    a = _arr(a)
    if not _is_inexact(a):
        return mean(a, axis=axis, dtype=dtype, keepdims=keepdims, where=where)
    return mean(a, axis=axis, dtype=dtype, keepdims=keepdims, where=_not_nan(a, where))


@_doc("Variance over the given axes of the elements that are not NaN.")
def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None):
    _check_where(where, "nanvar")
    a = _arr(a)
    if not _is_inexact(a):
        return var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where, mean=mean)
    ok = _not_nan(a, where)
    return var(_where(ok, a, 0.0), axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=ok, mean=mean)


@_doc("Standard deviation over the given axes of the elements that are not NaN.")
def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None):
    _check_where(where, "nanstd")
    return sqrt(nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where, mean=mean))


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Sum of the ``offset``-th diagonal of the matrices in ``a`` (taken over ``axis1`` and
    ``axis2``); ``dtype`` sets the accumulation dtype and ``out`` must be None.
    """
    return sum(diagonal(a, offset=offset, axis1=axis1, axis2=axis2), axis=-1, dtype=dtype)


# -- index of the extreme ------------------------------------------------------

def _arg_reduce(kind, a, axis, keepdims):
    a = _arr(a)
    av = _aval(a)
    if axis is None:
        if keepdims:
            res = _arg_reduce(kind, ravel(a), 0, False)
            return lax.reshape(res, (1,) * av.ndim)
        a = ravel(a)
        av = _aval(a)
        axis = 0
    ax = _canon_axis(axis, av.ndim)
    if av.shape[ax] == 0:
        raise ValueError(f"attempt to get {kind} of an empty sequence")
    idx_name = _dt.default_int_name()
    res = getattr(lax, kind)(a, ax, _dt.np_dtype(idx_name))
    return _finish(res, av, (ax,), keepdims)


def argmax(a, axis=None, out=None, keepdims=None):
    """Index of the largest element of ``a`` along ``axis`` (of the flattened array when ``axis``
    is None); the first one on ties, and the first NaN if there is one.

    Returns an array of the default int dtype; ``keepdims`` keeps the reduced axis as size 1.
    """
    return _arg_reduce("argmax", a, axis, bool(keepdims))


def argmin(a, axis=None, out=None, keepdims=None):
    """Index of the smallest element of ``a`` along ``axis`` (of the flattened array when ``axis``
    is None); the first one on ties, and the first NaN if there is one.

    Returns an array of the default int dtype; ``keepdims`` keeps the reduced axis as size 1.
    """
    return _arg_reduce("argmin", a, axis, bool(keepdims))


def nanargmax(a, axis=None, out=None, keepdims=None):
    """Index of the largest element of ``a`` along ``axis``, ignoring NaN.

    Differs from JAX: an all-NaN slice gives index 0 here (JAX gives -1).
    """
    a = _arr(a)
    if not _is_float(a):
        return argmax(a, axis=axis, keepdims=keepdims)
    return argmax(_where(isnan(a), -_np.inf, a), axis=axis, keepdims=keepdims)


def nanargmin(a, axis=None, out=None, keepdims=None):
    """Index of the smallest element of ``a`` along ``axis``, ignoring NaN.

    Differs from JAX: an all-NaN slice gives index 0 here (JAX gives -1).
    """
    a = _arr(a)
    if not _is_float(a):
        return argmin(a, axis=axis, keepdims=keepdims)
    return argmin(_where(isnan(a), _np.inf, a), axis=axis, keepdims=keepdims)


# -- whole-array comparisons ---------------------------------------------------

def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element of ``a`` is close to the matching one of ``b``:
    ``|a - b| <= atol + rtol * |b|`` (see ``isclose``). Returns a boolean scalar array.
    """
    return all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def array_equal(a1, a2, equal_nan=False):
    """Whether ``a1`` and ``a2`` have the same shape and elements (NaNs count as equal when
    ``equal_nan`` is true). Returns a boolean scalar array.
    """
    a1, a2 = _arr(a1), _arr(a2)
    if _aval(a1).shape != _aval(a2).shape:
        return asarray(False)
    a1, a2 = _promote_dtypes(a1, a2)
    eq = lax.eq(a1, a2)
    if equal_nan and _is_float(a1):
        eq = _or(eq, _and(isnan(a1), isnan(a2)))
    return all(eq)


def array_equiv(a1, a2):
    """Whether ``a1`` and ``a2`` broadcast to one shape and are equal elementwise. Returns a
    boolean scalar array.
    """
    a1, a2 = _arr(a1), _arr(a2)
    try:
        _broadcast_shapes(_aval(a1).shape, _aval(a2).shape)
    except ValueError:
        return asarray(False)
    return all(equal(a1, a2))


# -- cumulative sums and products, differences ---------------------------------

def _cumulative(kind, a, axis, dtype):
    a, av, axis = _ravel_unless_axis(a, axis)
    name = av.dtype_name
    target = _name(dtype) if dtype is not None else _sum_dtype(name)
    if target == "bool":
        # as JAX: a boolean cumulative sum is a running OR, a product a running AND
        counted = _cumulative(kind, lax.convert_element_type(a, "bool"), axis, _dt.default_int_name())
        return lax.convert_element_type(counted, "bool")
    if target != name:
        a = lax.convert_element_type(a, target)
    if av.shape[axis] == 0:
        return a
    return getattr(lax, kind)(a, axis=axis, reverse=False)


def cumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum of ``a`` along ``axis`` (of the flattened array when ``axis`` is None).

    Args:
      a: the input array.
      axis: the axis to accumulate along.
      dtype: the accumulation dtype (small integers and booleans use the default int dtype).
      out: must be None.

    Example:
      >>> import microjax_rs.numpy as jnp
      >>> jnp.cumsum(jnp.array([1, 2, 3, 4]))
      Array([ 1,  3,  6, 10], dtype=int32)
    """
    return _cumulative("cumsum", a, axis, dtype)


def cumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product of ``a`` along ``axis`` (of the flattened array when ``axis`` is None).
    ``dtype`` sets the accumulation dtype; ``out`` must be None.
    """
    return _cumulative("cumprod", a, axis, dtype)


def _cumulative_api(kind, what, x, axis, dtype, include_initial):
    a = _arr(x)
    av = _aval(a)
    if av.ndim == 0:
        raise ValueError(f"The input must be non-scalar to take a cumulative {what}, however a scalar value "
                         "or scalar array was given.")
    if axis is None:
        if av.ndim > 1:
            raise ValueError(f"The input array has rank {av.ndim}, however axis was not set to an explicit "
                             "value. The axis argument is only optional for one-dimensional arrays.")
        axis = 0
    axis = _canon_axis(axis, av.ndim)
    out = _cumulative(kind, a, axis, dtype)
    if include_initial:
        shape = list(_aval(out).shape)
        shape[axis] = 1
        init = lax.full(tuple(shape), 0 if kind == "cumsum" else 1, _aval(out).dtype_name)
        out = lax.concatenate([init, out], axis)
    return out


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative sum along `axis` (optional only for 1-D input); `include_initial` prepends 0."""
    return _cumulative_api("cumsum", "sum", x, axis, dtype, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative product along `axis` (optional only for 1-D input); `include_initial` prepends 1."""
    return _cumulative_api("cumprod", "product", x, axis, dtype, include_initial)


def nancumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum of ``a`` along ``axis``, treating NaN as zero."""
    a = _arr(a)
    if _is_inexact(a):
        a = _where(isnan(a), 0.0, a)
    return cumsum(a, axis=axis, dtype=dtype)


def nancumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product of ``a`` along ``axis``, treating NaN as one."""
    a = _arr(a)
    if _is_inexact(a):
        a = _where(isnan(a), 1.0, a)
    return cumprod(a, axis=axis, dtype=dtype)


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The ``n``-th discrete difference of ``a`` along ``axis`` (``a[1:] - a[:-1]``, applied ``n`` times).

    Args:
      a: the input array.
      n: how many times to difference.
      axis: the axis (default the last).
      prepend, append: values joined to ``a`` along ``axis`` before differencing.
    """
    a = _arr(a)
    av = _aval(a)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if n == 0:
        return a
    axis = _canon_axis(axis, av.ndim)
    if prepend is not None or append is not None:
        parts = []
        for p in (prepend, a, append):
            if p is None:
                continue
            p = _arr(p)
            if _aval(p).ndim == 0:
                shape = list(av.shape)
                shape[axis] = 1
                p = broadcast_to(p, tuple(shape))
            parts.append(p)
        a = concatenate(parts, axis=axis)
    for _ in range(n):
        m = _aval(a).shape[axis]
        if m == 0:
            break
        hi = _slice_axis(a, axis, 1, m)
        lo = _slice_axis(a, axis, 0, m - 1)
        a = not_equal(hi, lo) if _is_bool(a) else subtract(hi, lo)
    return a


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences between consecutive elements of the flattened ``ary``, with optional
    ``to_begin`` / ``to_end`` values joined at the ends.
    """
    a = ravel(_arr(ary))
    out = diff(a)
    parts = []
    if to_begin is not None:
        parts.append(ravel(_arr(to_begin)))
    parts.append(out)
    if to_end is not None:
        parts.append(ravel(_arr(to_end)))
    return concatenate(parts) if len(parts) > 1 else out
