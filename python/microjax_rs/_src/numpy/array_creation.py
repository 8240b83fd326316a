"""Evenly spaced values: `linspace`, `logspace`, `geomspace`."""
from ... import dtypes as _dt, lax
from .lax_numpy import astype, broadcast_to, expand_dims, moveaxis
from .ufuncs import float_power, floor, log10, multiply
from .util import (_arr, _aval, _broadcast_shapes, _canon_axis, _name, _nan_const, _placed, _promote_inexact,
                   _static_int, _upcast_f16)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    """``num`` evenly spaced values from ``start`` to ``stop`` (included unless ``endpoint`` is false).

    Args:
      start, stop: scalars or arrays (arrays give one sequence per element along ``axis``).
      num: the number of values.
      endpoint: whether ``stop`` is the last value.
      retstep: also return the spacing.
      dtype: the result dtype (default: the default float dtype).
      axis: where the new axis goes for array bounds.
      device: optional Device or Sharding to place the result on.

    Example:
      >>> import microjax_rs.numpy as jnp
      >>> jnp.linspace(0.0, 1.0, 5)
      Array([0.  , 0.25, 0.5 , 0.75, 1.  ], dtype=float32)
    """
    if device is not None:
        return _placed(linspace(start, stop, num, endpoint, retstep, dtype, axis), device)
    num = _static_int(num, "linspace", "num")
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    s, e = _promote_inexact(_arr(start), _arr(stop))
    out_name = _name(dtype) if dtype is not None else _aval(s).dtype_name
    cplx = _dt.is_complex_name(out_name)
    inexact_out = cplx or _dt.is_float_name(out_name)
    if cplx:
        comp = out_name
    else:
        comp = _upcast_f16(_aval(s).dtype_name) if inexact_out else _dt.default_float_name()
    s = lax.convert_element_type(s, comp)
    e = lax.convert_element_type(e, comp)
    bshape = _broadcast_shapes(_aval(s).shape, _aval(e).shape)
    s, e = broadcast_to(s, bshape), broadcast_to(e, bshape)
    div = (num - 1) if endpoint else num
    delta = lax.sub(e, s)
    out_shape = (num,) + bshape
    it = lax.broadcasted_iota(_dt.real_dtype_name(comp), out_shape, 0)
    itc = lax.convert_element_type(it, comp) if cplx else it
    sb = lax.broadcast_in_dim(s, out_shape, tuple(range(1, len(out_shape))))
    db = lax.broadcast_in_dim(delta, out_shape, tuple(range(1, len(out_shape))))
    if div > 0:
        step = lax.div(db, float(div))
        out = lax.add(lax.mul(itc, step), sb)
        if endpoint and num > 1:
            eb = lax.broadcast_in_dim(e, out_shape, tuple(range(1, len(out_shape))))
            last = lax.eq(it, float(num - 1))
            out = lax.select_n(last, out, eb)
    else:
        step = lax.mul(db, _nan_const(comp))
        out = lax.add(lax.mul(itc, db), sb)
    axis = _canon_axis(axis, len(out_shape))
    if axis:
        out = moveaxis(out, 0, axis)
    if inexact_out:
        out = lax.convert_element_type(out, out_name)
    else:
        out = lax.convert_element_type(floor(out), out_name)
    if retstep:
        step_name = out_name if inexact_out else comp
        return out, lax.convert_element_type(lax.div(delta, float(div)) if div > 0
                                             else lax.mul(delta, _nan_const(comp)), step_name)
    return out


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``num`` values spaced evenly on a log scale: ``base ** linspace(start, stop, num)``."""
    y = linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    name = _aval(y).dtype_name if dtype is None else _name(dtype)
    b = _arr(base)
    y, b = _promote_inexact(y, b)
    out = float_power(b, y)
    return astype(out, name) if _aval(out).dtype_name != name else out


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """``num`` values in geometric progression from ``start`` to ``stop`` (both nonzero; real ones
    of one sign, complex ones along the logarithmic spiral from ``start``)."""
    s, e = _promote_inexact(_arr(start), _arr(stop))
    sign = lax.sign(s)
    ls, le = log10(lax.div(s, sign)), log10(lax.div(e, sign))
    out = logspace(ls, le, num=num, endpoint=endpoint, base=10.0, dtype=None, axis=axis)
    out = multiply(out, expand_dims(sign, axis) if _aval(sign).ndim else sign)
    return astype(out, dtype) if dtype is not None else out
