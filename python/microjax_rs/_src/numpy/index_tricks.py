"""Index helpers: the index-trick objects `r_`, `c_`, `s_`, `index_exp`,
`mgrid`, `ogrid`, `ix_`, and the index arrays of triangles and diagonals
(`tril_indices`, `triu_indices`, ..., `diag_indices`, `mask_indices`)."""
import builtins

import numpy as _np

from ... import core, dtypes as _dt, lax
from ...core import Tracer
from .array_creation import linspace
from .lax_numpy import arange, array, asarray, concatenate, meshgrid, ones, reshape, stack, transpose
from .util import _arr, _aval


# -- s_, index_exp ----------------------------------------------------------------

class IndexExpression:
    """`s_[...]` / `index_exp[...]`: the index expression itself (a tuple
    always for `index_exp`)."""

    def __init__(self, maketuple):
        self.maketuple = maketuple

    def __getitem__(self, item):
        if self.maketuple and not isinstance(item, tuple):
            return (item,)
        return item


s_ = IndexExpression(maketuple=False)
index_exp = IndexExpression(maketuple=True)


# -- mgrid, ogrid -------------------------------------------------------------------

def _static_scalar(v, what):
    if isinstance(v, Tracer):
        raise core.ConcretizationTypeError(f"{what}: slice bounds must be concrete, not traced")
    return v


def _grid_axis(s, what):
    """The 1-D values of one slice of mgrid/ogrid/r_ (complex step: number of points)."""
    start = 0 if s.start is None else _static_scalar(s.start, what)
    stop = _static_scalar(s.stop, what)
    step = 1 if s.step is None else _static_scalar(s.step, what)
    if isinstance(step, complex) or _np.iscomplexobj(step):
        return linspace(start, stop, int(abs(step)), endpoint=True)
    return arange(start, stop, step)


def _grid_1d_values(key, what):
    if not isinstance(key, tuple):
        key = (key,)
    return [_grid_axis(k, what) for k in key]


class _Grid:
    """`mgrid[...]` / `ogrid[...]`: a mesh grid (ij indexing) from slices; a
    complex step `nj` means `n` points with the end point included."""

    def __init__(self, name, sparse, empty):
        self._name, self._sparse, self._empty = name, sparse, empty

    def __getitem__(self, key):
        if not isinstance(key, (slice, tuple)):
            raise TypeError(f"'{type(key).__name__}' object is not iterable")
        if isinstance(key, slice):
            return _grid_axis(key, self._name)
        if key == ():
            return self._empty()
        xs = _promote_all(_grid_1d_values(key, self._name))
        grids = meshgrid(*xs, indexing="ij", sparse=self._sparse)
        return grids if self._sparse else stack(grids, 0)


class _Mgrid(_Grid):
    """`mgrid[...]`: a dense mesh grid (ij indexing) from slices; a complex
    step `nj` means `n` points with the end point included."""

    def __init__(self):
        super().__init__("jnp.mgrid", False, lambda: arange(0))


class _Ogrid(_Grid):
    """`ogrid[...]`: an open (sparse) mesh grid, a list of broadcastable arrays."""

    def __init__(self):
        super().__init__("jnp.ogrid", True, list)


def _promote_all(xs):
    from .util import _promote_dtypes
    return list(_promote_dtypes(*xs)) if len(xs) > 1 else xs


mgrid = _Mgrid()
ogrid = _Ogrid()


# -- r_, c_ -----------------------------------------------------------------------

class _AxisConcat:
    """Base of `r_` / `c_`: concatenation of arrays, scalars and slices
    (slices become ranges; a complex step means a number of points), with
    NumPy's leading string directive: 'r' / 'c' (a row / column matrix),
    or 'axis[,ndmin[,trans1d]]'."""

    axis = 0
    ndmin = 1
    trans1d = -1
    op_name = "r_"

    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        axis, ndmin, trans1d, matrix = self.axis, self.ndmin, self.trans1d, None
        items = list(key)
        if items and isinstance(items[0], str):
            directive = items.pop(0)
            if directive in ("r", "c"):
                matrix = directive
            else:
                try:
                    parts = [int(p) for p in directive.split(",")]
                except ValueError:
                    raise ValueError(f"could not understand directive {directive!r}") from None
                if len(parts) > 3:
                    raise ValueError(f"could not understand directive {directive!r}")
                axis = parts[0]
                if len(parts) > 1:
                    ndmin = parts[1]
                if len(parts) > 2:
                    trans1d = parts[2]
        if not items:
            raise IndexError("tuple index out of range")
        arrays = []
        for it in items:
            if isinstance(it, str):
                raise ValueError("string directive must be placed at the beginning")
            if isinstance(it, slice):
                x = _grid_axis(it, f"jnp.{self.op_name}")
                item_ndim = 0
            else:
                x = array(it, copy=False)
                item_ndim = _aval(x).ndim
            x = self._ndmin(x, ndmin, trans1d, item_ndim)
            arrays.append(x)
        out = concatenate(arrays, axis=axis)
        if matrix is not None and _aval(out).ndim == 1:
            out = reshape(out, (1, -1) if matrix == "r" else (-1, 1))
        return out

    @staticmethod
    def _ndmin(x, ndmin, trans1d, item_ndim):
        x = array(x, copy=False, ndmin=ndmin)
        if trans1d != -1 and ndmin - item_ndim > 0:
            # JAX's rule: the axes rotate left so the original ones start at trans1d.
            shifts = ndmin - builtins.abs(ndmin + trans1d + 1) % ndmin
            axes = list(range(ndmin))
            x = transpose(x, axes[shifts:] + axes[:shifts])
        return x


class RClass(_AxisConcat):
    """`r_[...]`: concatenation along the first axis."""


class CClass(_AxisConcat):
    """`c_[...]`: concatenation along the last axis, 1-D inputs as columns."""

    axis = -1
    ndmin = 2
    trans1d = 0
    op_name = "c_"


r_ = RClass()
c_ = CClass()


# -- ix_ ---------------------------------------------------------------------------

def ix_(*args):
    """Open-mesh index arrays from 1-D integer sequences: `x[ix_(rows, cols)]`
    selects the cross product."""
    out = []
    n = len(args)
    for i, a in enumerate(args):
        if isinstance(a, (list, tuple)):
            raise TypeError(f"ix requires ndarray or scalar arguments, got {type(a)} at position {i}.")
        a = _arr(a)
        av = _aval(a)
        if av.ndim != 1:
            raise ValueError(f"Arguments to jax.numpy.ix_ must be 1-dimensional, got shape {av.shape}")
        if av.dtype_name == "bool":
            raise NotImplementedError("Boolean arguments to jax.numpy.ix_ are not implemented")
        shape = [1] * n
        shape[i] = av.shape[0]
        out.append(lax.reshape(a, tuple(shape)))
    return tuple(out)


# -- triangle and diagonal indices ---------------------------------------------------

def _concrete_dim(v, what):
    if isinstance(v, Tracer):
        raise core.ConcretizationTypeError(f"jnp: the {what} must be a concrete integer, not traced")
    return int(v)


def _tri_indices(n, k, m, upper, fn):
    n = _concrete_dim(n, f"n argument of jnp.{fn}")
    k = _concrete_dim(k, f"k argument of jnp.{fn}")
    m = n if m is None else _concrete_dim(m, f"m argument of jnp.{fn}")
    i, j = _np.indices((n, m))
    keep = (j - i >= k) if upper else (j - i <= k)
    name = _dt.default_int_name()
    return asarray(i[keep].astype(name)), asarray(j[keep].astype(name))


def tril_indices(n, k=0, m=None):
    """Row and column indices of the lower triangle (on and below diagonal `k`)
    of an (n, m) array."""
    return _tri_indices(n, k, m, False, "tril_indices")


def triu_indices(n, k=0, m=None):
    """Row and column indices of the upper triangle (on and above diagonal `k`)
    of an (n, m) array."""
    return _tri_indices(n, k, m, True, "triu_indices")


def _shape_2d(arr):
    shape = _np.shape(arr) if not hasattr(arr, "shape") else tuple(arr.shape)
    if len(shape) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return shape


def tril_indices_from(arr, k=0):
    """`tril_indices` for the shape of the 2-D `arr`."""
    n, m = _shape_2d(arr)
    return tril_indices(n, k, m)


def triu_indices_from(arr, k=0):
    """`triu_indices` for the shape of the 2-D `arr`."""
    n, m = _shape_2d(arr)
    return triu_indices(n, k, m)


def diag_indices(n, ndim=2):
    """`ndim` copies of `arange(n)`: the indices of the main diagonal."""
    n = _concrete_dim(n, "n argument of jnp.diag_indices")
    ndim = _concrete_dim(ndim, "ndim argument of jnp.diag_indices")
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
    return (lax.iota(_dt.default_int_name(), n),) * ndim


def diag_indices_from(arr):
    """`diag_indices` for an array whose axes all have one length."""
    shape = tuple(_aval(_arr(arr)).shape)
    if len(shape) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(shape[0], len(shape))


def mask_indices(n, mask_func, k=0, *, size=None):
    """Indices where `mask_func(ones((n, n)), k)` is nonzero (e.g. `jnp.triu`).
    Under jit `size` must be given (padded with zeros)."""
    from .sorting import nonzero
    a = ones((n, n), _dt.default_int_name())
    return nonzero(mask_func(a, k), size=size)
