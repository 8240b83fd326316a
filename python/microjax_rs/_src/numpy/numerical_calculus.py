"""Numerical calculus on sampled values: `gradient` (central differences),
`trapezoid` (the trapezoidal rule) and `unwrap` (phase unwrapping)."""
import builtins

import numpy as _np

from ... import dtypes as _dt, lax
from .lax_numpy import asarray, concatenate, moveaxis, reshape
from .reductions import cumsum, diff, sum as _sum
from .ufuncs import _where, abs as _abs, remainder
from .util import _arr, _aval, _canon_axis, _promote_dtypes, _promote_dtypes_inexact


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral of `y` along `axis` by the trapezoidal rule, as NumPy: with
    sample points `x` (1-D along the axis, or broadcasting with `y`) or a
    spacing `dx` (a scalar, or an array broadcasting with `y` less one
    sample along the axis)."""
    if x is None:
        (y,) = _promote_dtypes_inexact(_arr(y))
        d = asarray(dx)
    else:
        y, x = _promote_dtypes_inexact(_arr(y), _arr(x))
    ndim = _aval(y).ndim
    axis_c = _canon_axis(axis, ndim)
    if x is not None:
        if _aval(x).ndim == 1:
            d = diff(x)
            d = reshape(d, tuple(_aval(d).shape[0] if k == axis_c else 1 for k in range(ndim)))
        else:
            d = diff(x, axis=axis)
    n = _aval(y).shape[axis_c]
    upper = lax.slice_in_dim(y, 1, n, axis=axis_c)
    lower = lax.slice_in_dim(y, 0, builtins.max(n - 1, 0), axis=axis_c)
    return _sum(d * (upper + lower) / 2.0, axis=axis_c)


def _axis_gradient(f, axis, spacing):
    """d f / d(axis) with second-order central differences inside and
    one-sided first-order differences at the two ends."""
    n = _aval(f).shape[axis]
    if n < 2:
        raise ValueError("Shape of array too small to calculate a numerical gradient, "
                         "at least 2 elements are required.")
    f = moveaxis(f, axis, -1)
    if _aval(spacing).ndim == 0:
        h = spacing
        inner = (f[..., 2:] - f[..., :-2]) / (2.0 * h)
        first = (f[..., 1:2] - f[..., 0:1]) / h
        last = (f[..., -1:] - f[..., -2:-1]) / h
    else:
        if _aval(spacing).shape != (n,):
            raise ValueError("when 1d, distances must match the length of the corresponding dimension")
        dx = diff(spacing)
        dx1, dx2 = dx[:-1], dx[1:]
        a = -dx2 / (dx1 * (dx1 + dx2))
        b = (dx2 - dx1) / (dx1 * dx2)
        c = dx1 / (dx2 * (dx1 + dx2))
        inner = a * f[..., :-2] + b * f[..., 1:-1] + c * f[..., 2:]
        first = (f[..., 1:2] - f[..., 0:1]) / dx[0]
        last = (f[..., -1:] - f[..., -2:-1]) / dx[-1]
    out = concatenate([first, inner, last], axis=-1)
    return moveaxis(out, -1, axis)


def gradient(f, *varargs, axis=None, edge_order=None):
    """The gradient of sampled values (np.gradient): one array per axis of
    `axis` (a list when several), from unit spacing, one spacing (a scalar
    or the sample coordinates) for every axis, or one per axis."""
    if edge_order is not None:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not supported.")
    (f,) = _promote_dtypes_inexact(_arr(f))
    nd = _aval(f).ndim
    if axis is None:
        axes = tuple(range(nd))
    elif isinstance(axis, (tuple, list)):
        axes = tuple(_canon_axis(a, nd) for a in axis)
    else:
        axes = (_canon_axis(axis, nd),)
    if len(varargs) == 0:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1:
        spacings = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise TypeError(f"Invalid number of spacing arguments {len(varargs)} for axis={axis}")
    name = _aval(f).dtype_name
    out = []
    for ax, h in zip(axes, spacings):
        h = asarray(h)
        if not _dt.is_float_name(_aval(h).dtype_name):
            h = h.astype(name)
        out.append(_axis_gradient(f, ax, h))
    return out[0] if len(axes) == 1 else out


def unwrap(p, discont=None, axis=-1, period=2 * _np.pi):
    """Unwraps `p` along `axis` (np.unwrap): jumps larger than `discont`
    (default period/2) are replaced by their value modulo `period`."""
    p = _arr(p)
    nd = _aval(p).ndim
    axis = _canon_axis(axis, nd)
    p, per = _promote_dtypes(p, _arr(period))
    name = _aval(p).dtype_name
    integral = not _dt.is_float_name(name)
    if not integral:
        (p,) = _promote_dtypes_inexact(p)
        per = asarray(per).astype(_aval(p).dtype_name)
    dd = diff(p, axis=axis)
    if discont is None:
        discont = per / 2
    if integral:
        high = per // 2
        ambiguous = remainder(per, 2) == 0
    else:
        high = per / 2
        ambiguous = True
    low = -high
    ddmod = remainder(dd - low, per) + low
    fix = (ddmod == low) & (dd > 0)
    if ambiguous is not True:
        fix = fix & ambiguous
    ddmod = _where(fix, high, ddmod)
    correct = _where(_abs(dd) < discont, 0, ddmod - dd)
    head = moveaxis(p, axis, 0)[:1]
    tail = moveaxis(p, axis, 0)[1:] + cumsum(moveaxis(correct, axis, 0), axis=0).astype(_aval(p).dtype_name)
    return moveaxis(concatenate([head, tail], axis=0), 0, axis)
