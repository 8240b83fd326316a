"""Histograms and binning: `histogram_bin_edges`, `histogram`,
`histogram2d`, `histogramdd` and `digitize` (counts by scatter-add, so they
work under jit when the number of bins is static)."""
import builtins
import math

from ... import core, lax
from ...core import Tracer
from .array_creation import linspace
from .indexing import ravel_multi_index
from .lax_numpy import asarray, astype, ones_like, ravel, reshape, stack, zeros, zeros_like
from .reductions import diff, max as _max, min as _min, sum as _sum
from .sorting import bincount, searchsorted
from .ufuncs import _where, divide, equal
from .util import _arr, _aval, _promote_dtypes_inexact


def _arraylike(fn, v, pos):
    if isinstance(v, (str, list, tuple)):
        raise TypeError(f"{fn} requires ndarray or scalar arguments, got {type(v)} at position {pos}.")


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """The bin edges `histogram` uses: `bins` itself when it is 1-D, else
    `bins + 1` evenly spaced edges over `range` (default [min, max]; widened
    by 0.5 each way when it is empty). `bins` (an int) must be static."""
    del weights
    if isinstance(bins, str):
        raise NotImplementedError("string values for `bins` not implemented.")
    _arraylike("histogram_bin_edges", bins, 1)
    arr = _arr(a)
    (probe,) = _promote_dtypes_inexact(arr)
    dtype = _aval(probe).dtype_name
    if _aval(asarray(bins)).ndim == 1:
        return asarray(bins, dtype=dtype)
    if isinstance(bins, Tracer):
        raise core.ConcretizationTypeError(
            "jnp.histogram_bin_edges: the bins argument must be a concrete integer (it sets the output shape)")
    nbins = int(bins)
    if range is None:
        lo, hi = _min(arr), _max(arr)
    else:
        r = asarray(range, dtype=dtype)
        if _aval(r).shape != (2,):
            raise ValueError(f"`range` must be either None or a sequence of scalars, got {range}")
        lo, hi = r[0], r[1]
    lo, hi = asarray(lo, dtype=dtype), asarray(hi, dtype=dtype)
    same = equal(lo, hi)
    lo2 = _where(same, lo - 0.5, lo)
    hi2 = _where(same, hi + 0.5, hi)
    return linspace(lo2, hi2, nbins + 1, dtype=dtype)


def histogram(a, bins=10, range=None, weights=None, density=None):
    """`(counts, bin_edges)` of the flattened `a` (NumPy's bins: half-open
    except the last, which includes its right edge). Counts are floating
    (the weights' dtype, default ones); `density` normalizes to unit area."""
    a = _arr(a)
    _arraylike("histogram", bins, 1)
    if weights is None:
        (a,) = _promote_dtypes_inexact(a)
        w = ones_like(a)
    else:
        w = _arr(weights)
        if _aval(w).shape != _aval(a).shape:
            raise ValueError("weights should have the same shape as a.")
        a, w = _promote_dtypes_inexact(a, w)
    edges = histogram_bin_edges(a, bins, range)
    ne = _aval(edges).shape[0]
    x, w = ravel(a), ravel(w)
    idx = searchsorted(edges, x, side="right")
    idx = _where(equal(x, edges[-1]), ne - 1, idx)
    counts = zeros((ne,), _aval(w).dtype_name).at[idx].add(w, mode="drop")
    counts = lax.slice(counts, (1,), (ne,)) if ne else counts
    if density:
        counts = divide(divide(counts, diff(edges)), _sum(counts))
    return counts, edges


def histogramdd(sample, bins=10, range=None, weights=None, density=None):
    """`(hist, [edges per dimension])` of `N` points in `D` dimensions (`sample`
    of shape (N, D)); `bins` one spec for all dimensions or one per dimension.
    Counts are integers unless weighted or `density`."""
    s = _arr(sample)
    if weights is None:
        (s,) = _promote_dtypes_inexact(s)
        w = None
    else:
        w = _arr(weights)
        if _aval(w).shape != _aval(s).shape[:1]:
            raise ValueError("should have one weight for each sample.")
        s, w = _promote_dtypes_inexact(s, w)
    shape = _aval(s).shape
    if len(shape) != 2:
        raise ValueError(f"histogramdd: sample must be 2-dimensional (N, D); got shape {shape}")
    n, d = shape
    if range is not None and (len(range) != d or builtins.any(
            r is not None and len(r) != 2 for r in range)):
        raise ValueError(f"For sample.shape={(n, d)}, range must be a sequence of {d} pairs or Nones; "
                         f"got range={range}")
    try:
        per_dim = list(bins)
    except TypeError:
        per_dim = [bins] * d
    else:
        if len(per_dim) != d:
            raise ValueError("should be a bin for each dimension.")
    idxs, edges = [], []
    for i in builtins.range(d):
        col = s[:, i]
        e = histogram_bin_edges(col, per_dim[i], None if range is None else range[i])
        k = searchsorted(e, col, side="right")
        k = _where(equal(col, e[-1]), k - 1, k)
        idxs.append(k)
        edges.append(e)
    nbins = tuple(_aval(e).shape[0] + 1 for e in edges)
    flat = ravel_multi_index(tuple(idxs), nbins, mode="clip")
    hist = bincount(flat, w, length=math.prod(nbins))
    hist = reshape(hist, nbins)
    hist = hist[(slice(1, -1),) * d]
    if density:
        hist = hist.astype(_aval(s).dtype_name)
        hist = divide(hist, _sum(hist))
        for i, e in enumerate(edges):
            width = diff(e)
            bshape = [1] * d
            bshape[i] = _aval(width).shape[0]
            hist = divide(hist, reshape(width, tuple(bshape)))
    return hist, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):
    """`(hist, x_edges, y_edges)`: `histogramdd` of the points (x[i], y[i])."""
    x, y = _arr(x), _arr(y)
    try:
        nb = len(bins)
    except TypeError:
        nb = 1
    if nb not in (1, 2):
        e = asarray(bins)
        bins = [e, e]
    hist, edges = histogramdd(stack([x, y], axis=1), bins, range, weights, density)
    return hist, edges[0], edges[1]


def digitize(x, bins, right=False, *, method=None):
    """The index of the bin of each `x` for monotonic 1-D `bins` (increasing
    or decreasing), like NumPy's `digitize`."""
    x, b = _arr(x), _arr(bins)
    if isinstance(right, Tracer):
        raise core.ConcretizationTypeError("jnp.digitize: the right argument must be concrete")
    if _aval(b).ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins}")
    nb = _aval(b).shape[0]
    if nb == 0:
        return zeros_like(x, dtype="int32")
    side = "left" if right else "right"
    kw = {} if method is None else {"method": method}
    rev = lax.rev(b, (0,))
    inc = searchsorted(b, x, side=side, **kw)
    dec = nb - searchsorted(rev, x, side=side, **kw)
    # JAX's digitize is int32 whatever the default integer type.
    return astype(_where(b[-1] >= b[0], inc, dec), "int32")
