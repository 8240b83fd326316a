"""`jax.scipy.stats.mode`, `rankdata` and `sem`."""
import math as _math
from typing import NamedTuple as _NamedTuple

import numpy as _np

from ... import lax
from ... import numpy as jnp
from ... import dtypes as _dt
from ._dist import inexact

__all__ = ["ModeResult", "mode", "rankdata", "sem"]


class ModeResult(_NamedTuple):
    mode: object
    count: object


def _check_nan_policy(nan_policy, name):
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of "
                         "{'propagate', 'omit', 'raise'}")
    if nan_policy == "omit":
        raise NotImplementedError(f"Logic for `nan_policy` of {nan_policy} is not implemented")
    if nan_policy == "raise":
        raise NotImplementedError(f"In order to best JIT compile `{name}`, we cannot know whether `x` contains "
                                  f"nans. Please check if nans exist in `x` outside of the `{name}` function.")


def _canon_axis(axis, ndim):
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def mode(a, axis=0, nan_policy="propagate", keepdims=False):
    """The most common value along `axis` (the smallest on ties) and its count."""
    from ... import vmap
    x = jnp.atleast_1d(jnp.asarray(a))
    _check_nan_policy(nan_policy, "mode")
    if axis is not None:
        axis = _canon_axis(axis, x.ndim)
    shape = x.shape
    if keepdims:
        out_shape = tuple(1 for _ in shape) if axis is None else tuple(1 if i == axis else s
                                                                        for i, s in enumerate(shape))
    else:
        out_shape = () if axis is None else tuple(s for i, s in enumerate(shape) if i != axis)
    if axis is None:
        axis = 0
        x = x.ravel()

    def one(col):
        if col.size == 0:
            f = _dt.default_float_name()
            return jnp.array(_np.nan, dtype=f), jnp.array(0, dtype=f)
        vals, counts = jnp.unique(col, return_counts=True, size=col.size)
        return vals[jnp.argmax(counts)], counts.max()

    x = jnp.moveaxis(x, axis, 0)
    x = x.reshape(x.shape[0], _math.prod(x.shape[1:]))
    vals, counts = vmap(one, in_axes=1)(x)
    return ModeResult(vals.reshape(out_shape), counts.reshape(out_shape))


_RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


def _rank1(a, method):
    out_dtype = _dt.default_float_name()
    n = a.size
    arr, sorter = lax.sort_key_val(a, jnp.arange(n))
    inv = jnp.zeros(n, sorter.dtype).at[sorter].set(jnp.arange(n, dtype=sorter.dtype))
    if method == "ordinal":
        ranks = (inv + 1).astype(out_dtype)
    else:
        obs = jnp.concatenate([jnp.array([True]), arr[1:] != arr[:-1]])
        dense = jnp.cumsum(obs)[inv]
        if method == "dense":
            ranks = dense.astype(out_dtype)
        else:
            count = jnp.nonzero(obs, size=n + 1, fill_value=n)[0].astype(out_dtype)
            if method == "max":
                ranks = count[dense]
            elif method == "min":
                ranks = count[dense - 1] + 1
            else:
                ranks = 0.5 * (count[dense] + count[dense - 1] + 1)
    return jnp.where(jnp.any(jnp.isnan(a)), jnp.full_like(ranks, _np.nan), ranks)


def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
    """Ranks from 1 of the data (flattened, or along `axis`); ties by `method`; all nan if a nan is present."""
    from ... import vmap
    a = jnp.asarray(a)
    _check_nan_policy(nan_policy, "rankdata")
    if method not in _RANK_METHODS:
        raise ValueError(f"unknown method '{method}'")
    if axis is not None:
        axis = _canon_axis(axis, a.ndim)
        moved = jnp.moveaxis(a, axis, -1)
        flat = moved.reshape(-1, moved.shape[-1])
        ranks = vmap(lambda r: _rank1(r, method))(flat)
        return jnp.moveaxis(ranks.reshape(moved.shape), -1, axis)
    return _rank1(jnp.ravel(a), method)


def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
    """The standard error of the mean: std(ddof) / sqrt(count)."""
    (b,) = inexact(a)
    if nan_policy == "propagate":
        size = b.size if axis is None else b.shape[axis]
        return b.std(axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(size).astype(b.dtype)
    if nan_policy == "omit":
        count = (~jnp.isnan(b)).sum(axis, keepdims=keepdims)
        return jnp.nanstd(b, axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(count).astype(b.dtype)
    raise ValueError(f"{nan_policy} is not supported")
