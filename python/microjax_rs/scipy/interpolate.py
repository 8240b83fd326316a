"""`jax.scipy.interpolate`: `RegularGridInterpolator` (linear and nearest),
a pytree whose children are the grid, the values and the fill value."""
import itertools

from .. import numpy as jnp
from ..tree_util import register_pytree_node
from .._src.numpy.util import _aval, _promote_dtypes_inexact

_METHODS = ("linear", "nearest")


class RegularGridInterpolator:
    """Interpolation on a rectilinear grid `points` (one increasing 1-D array
    per axis) of `values`. Points outside the grid give `fill_value`
    (extrapolation when it is None); `bounds_error=True` is not supported
    (it cannot take effect under jit), as in JAX."""

    def __init__(self, points, values, method="linear", bounds_error=False, fill_value=float("nan")):
        if method not in _METHODS:
            raise ValueError(f"method {method!r} is not defined")
        self.method = method
        self.bounds_error = bounds_error
        if bounds_error:
            raise NotImplementedError("`bounds_error` takes no effect under JIT")
        values = jnp.asarray(values)
        if len(points) > _aval(values).ndim:
            raise ValueError(f"there are {len(points)} point arrays, but values has {_aval(values).ndim} "
                             "dimensions")
        (values,) = _promote_dtypes_inexact(values)
        if fill_value is not None:
            fill_value = jnp.asarray(fill_value)
            if not jnp.can_cast(_aval(fill_value).dtype_name, _aval(values).dtype_name, casting="same_kind"):
                raise ValueError("fill_value must be either 'None' or of a type compatible with values")
        self.fill_value = fill_value
        self.grid = tuple(jnp.asarray(p) for p in points)
        self.values = values

    def _locate(self, xi):
        indices, dists = [], []
        out = None
        for x, g in zip(xi, self.grid):
            n = _aval(g).shape[0]
            i = jnp.clip(jnp.searchsorted(g, x) - 1, 0, n - 2)
            indices.append(i)
            dists.append((x - g[i]) / (g[i + 1] - g[i]))
            outside = (x < g[0]) | (x > g[-1])
            out = outside if out is None else out | outside
        return indices, dists, out

    def __call__(self, xi, method=None):
        method = self.method if method is None else method
        if method not in _METHODS:
            raise ValueError(f"method {method!r} is not defined")
        ndim = len(self.grid)
        if isinstance(xi, tuple):
            xi = jnp.stack(jnp.broadcast_arrays(*[jnp.asarray(x) for x in xi]), axis=-1)
        xi = jnp.asarray(xi)
        if _aval(xi).ndim <= 1:
            xi = jnp.reshape(xi, (-1, ndim))
        shape = _aval(xi).shape
        if shape[-1] != ndim:
            raise ValueError(f"the requested sample points xi have dimension {shape[-1]}, but this "
                             f"RegularGridInterpolator has dimension {ndim}")
        flat = jnp.reshape(xi, (-1, ndim))
        indices, dists, outside = self._locate([flat[:, k] for k in range(ndim)])
        trailing = _aval(self.values).ndim - ndim
        if method == "linear":
            result = None
            for corner in itertools.product(*[[i, i + 1] for i in indices]):
                w = None
                for ci, i, t in zip(corner, indices, dists):
                    f = jnp.where(ci == i, 1 - t, t)
                    w = f if w is None else w * f
                term = self.values[tuple(corner)] * jnp.reshape(w, (-1,) + (1,) * trailing)
                result = term if result is None else result + term
        else:
            idx = tuple(jnp.where(t <= 0.5, i, i + 1) for i, t in zip(indices, dists))
            result = self.values[idx]
        if self.fill_value is not None:
            result = jnp.where(jnp.reshape(outside, (-1,) + (1,) * trailing), self.fill_value, result)
        return jnp.reshape(result, tuple(shape[:-1]) + tuple(_aval(self.values).shape[ndim:]))


def _flatten(obj):
    return (obj.grid, obj.values, obj.fill_value), (obj.method, obj.bounds_error)


def _unflatten(aux, children):
    obj = object.__new__(RegularGridInterpolator)
    obj.grid, obj.values, obj.fill_value = children
    obj.method, obj.bounds_error = aux
    return obj


register_pytree_node(RegularGridInterpolator, _flatten, _unflatten)

__all__ = ["RegularGridInterpolator"]
