"""`jax.scipy.ndimage`: `map_coordinates` (orders 0 and 1)."""
import functools
import itertools
import operator

from .. import lax
from .. import numpy as jnp
from .._src.numpy.util import _aval


def _mirror(index, size):
    # triangle wave of period 2 (size - 1): ... 1 0 1 2 .. size-1 size-2 ...
    if size == 1:
        return jnp.zeros_like(index)
    s = size - 1
    return jnp.abs(jnp.remainder(index + s, 2 * s) - s)


def _reflect(index, size):
    # the mirror of the half-integer grid: ... 1 0 0 1 .. size-1 size-1 size-2 ...
    return jnp.floor_divide(_mirror(2 * index + 1, 2 * size + 1) - 1, 2)


_FIXERS = {
    "constant": lambda index, size: index,
    "nearest": lambda index, size: jnp.clip(index, 0, size - 1),
    "wrap": lambda index, size: jnp.remainder(index, size),
    "mirror": _mirror,
    "reflect": _reflect,
}


def _round(a):
    return a if jnp.issubdtype(_aval(a).dtype_name, jnp.integer) else lax.round(a)


def map_coordinates(input, coordinates, order, mode="constant", cval=0.0):
    """`input` sampled at `coordinates` (one array per axis) by nearest
    (`order=0`, halves rounded away from zero) or linear (`order=1`)
    interpolation. Modes: 'constant' (SciPy's 'grid-constant'), 'nearest',
    'wrap' (SciPy's 'grid-wrap'), 'mirror', 'reflect'."""
    arr = jnp.asarray(input)
    coords = [jnp.asarray(c) for c in coordinates]
    dt = _aval(arr).dtype_name
    cval = jnp.asarray(cval, dtype=dt)
    shape = _aval(arr).shape
    if len(coords) != len(shape):
        raise ValueError("coordinates must be a sequence of length input.ndim, but "
                         f"{len(coords)} != {len(shape)}")
    fixer = _FIXERS.get(mode)
    if fixer is None:
        raise NotImplementedError(f"jax.scipy.ndimage.map_coordinates does not yet support mode {mode}. "
                                  f"Currently supported modes are {set(_FIXERS)}.")
    if order not in (0, 1):
        raise NotImplementedError("jax.scipy.ndimage.map_coordinates currently requires order<=1")
    per_axis = []
    for c, size in zip(coords, shape):
        if order == 0:
            nodes = [(jnp.astype(_round(c), "int32"), None)]
        else:
            lower = jnp.floor(c)
            w_hi = c - lower
            idx = jnp.astype(lower, "int32")
            nodes = [(idx, 1 - w_hi), (idx + 1, w_hi)]
        per_axis.append([(fixer(i, size), (i >= 0) & (i < size) if mode == "constant" else None, w)
                         for i, w in nodes])
    total = None
    for combo in itertools.product(*per_axis):
        idxs = tuple(i for i, _, _ in combo)
        value = arr[idxs]
        valids = [v for _, v, _ in combo if v is not None]
        if valids:
            value = jnp.where(functools.reduce(operator.and_, valids), value, cval)
        weights = [w for _, _, w in combo if w is not None]
        if weights:
            value = functools.reduce(operator.mul, weights) * value
        total = value if total is None else total + value
    if jnp.issubdtype(dt, jnp.integer):
        total = _round(total)
    return jnp.astype(total, dt)


__all__ = ["map_coordinates"]
