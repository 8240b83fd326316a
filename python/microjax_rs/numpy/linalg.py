"""`jax.numpy.linalg`: norms and the products built on dot_general.
Decompositions (solve, inv, cholesky, svd, eigh, ...) need primitives the
core does not have yet and raise NotImplementedError."""
import numpy as _np

from .. import lax
from . import (_arr, _aval, _canon_axis, _promote_inexact, abs as _abs, max as _max, min as _min,
               sqrt as _sqrt, sum as _sum, power as _power, matmul as _matmul,
               tensordot as _tensordot, vecdot as _vecdot, matrix_transpose as _mT, outer as _outer,
               cross as _cross, count_nonzero as _count_nonzero, astype as _astype, diagonal as _diagonal)


def norm(x, ord=None, axis=None, keepdims=False):
    (x,) = _promote_inexact(_arr(x))
    av = _aval(x)
    if axis is None:
        if ord is None:
            axes = tuple(range(av.ndim))
            return _sqrt(_sum(lax.mul(x, x), axis=axes, keepdims=keepdims))
        if av.ndim == 1:
            axis = (0,)
        elif av.ndim == 2:
            axis = (0, 1)
        else:
            raise ValueError("Improper number of dimensions to norm.")
    axes = (axis,) if isinstance(axis, (int, _np.integer)) else tuple(axis)
    axes = tuple(_canon_axis(a, av.ndim) for a in axes)
    if len(axes) == 1:
        if ord is None or ord == 2:
            return _sqrt(_sum(lax.mul(x, x), axis=axes, keepdims=keepdims))
        if ord == _np.inf:
            return _max(_abs(x), axis=axes, keepdims=keepdims)
        if ord == -_np.inf:
            return _min(_abs(x), axis=axes, keepdims=keepdims)
        if ord == 0:
            return _astype(_count_nonzero(x, axis=axes, keepdims=keepdims), av.dtype_name)
        if ord == 1:
            return _sum(_abs(x), axis=axes, keepdims=keepdims)
        if isinstance(ord, str):
            raise ValueError(f"Invalid order '{ord}' for vector norm.")
        p = float(ord)
        return _power(_sum(_power(_abs(x), p), axis=axes, keepdims=keepdims), 1.0 / p)
    if len(axes) == 2:
        r, c = axes
        if r == c:
            raise ValueError("Duplicate axes given.")
        if ord in (None, "fro", "f"):
            return _sqrt(_sum(lax.mul(x, x), axis=axes, keepdims=keepdims))
        if ord in (1, -1, _np.inf, -_np.inf):
            # 1: max over columns of the column sums; inf: max over rows of the row sums.
            s_ax, m_ax = (r, c) if ord in (1, -1) else (c, r)
            s = _sum(_abs(x), axis=s_ax, keepdims=True)
            red = _max if ord in (1, _np.inf) else _min
            out = red(s, axis=m_ax, keepdims=True)
            if not keepdims:
                out = lax.squeeze(out, tuple(sorted(axes)))
            return out
        raise NotImplementedError(f"matrix norm ord={ord!r} needs an SVD, which is not supported yet")
    raise ValueError("Improper number of dimensions to norm.")


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    x = _arr(x)
    if axis is None:
        from . import ravel
        out = norm(ravel(x), ord=ord)
        if keepdims:
            out = lax.reshape(out, (1,) * _aval(x).ndim)
        return out
    return norm(x, ord=ord, axis=axis, keepdims=keepdims)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def trace(x, /, *, offset=0, dtype=None):
    return _sum(_diagonal(x, offset=offset, axis1=-2, axis2=-1), axis=-1, dtype=dtype)


def diagonal(x, /, *, offset=0):
    return _diagonal(x, offset=offset, axis1=-2, axis2=-1)


matmul = _matmul
tensordot = _tensordot
vecdot = _vecdot
matrix_transpose = _mT
outer = _outer
cross = _cross


def _missing(name):
    def fn(*args, **kwargs):
        raise NotImplementedError(f"jnp.linalg.{name} needs decomposition primitives that microjax_rs "
                                  f"does not have yet")
    fn.__name__ = name
    return fn


for _n in ("inv", "solve", "det", "slogdet", "cholesky", "qr", "svd", "eigh", "eig", "eigvalsh",
           "pinv", "lstsq", "matrix_rank", "svdvals", "tensorinv", "tensorsolve"):
    globals()[_n] = _missing(_n)
del _n


def multi_dot(arrays, *, precision=None):
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError("Expecting at least two arrays.")
    out = arrays[0]
    for a in arrays[1:]:
        out = _matmul(out, a)
    return out


def matrix_power(a, n):
    from . import eye, broadcast_to
    a = _arr(a)
    av = _aval(a)
    if av.ndim < 2 or av.shape[-1] != av.shape[-2]:
        raise ValueError(f"matrix_power requires square matrices, got shape {av.shape}")
    n = int(n)
    if n < 0:
        raise NotImplementedError("matrix_power with a negative exponent needs inv")
    result = broadcast_to(eye(av.shape[-1], dtype=av.dtype_name), av.shape)
    base = a
    while n:
        if n & 1:
            result = _matmul(result, base)
        n >>= 1
        if n:
            base = _matmul(base, base)
    return result
