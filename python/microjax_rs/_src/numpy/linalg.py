"""`jax.numpy.linalg`: norms, products, and the decompositions built on the
`jax.lax.linalg` primitives (cholesky, qr, eigh, svd, LU-based solve / inv /
det / slogdet, SVD-based pinv / lstsq / matrix_rank, `eig` / `eigvals`), on
float and complex matrices. The tensor solvers raise NotImplementedError."""
from typing import NamedTuple as _NamedTuple

import numpy as _np

from ... import dtypes as _dt, lax
from ...lax import linalg as lax_linalg
from .indexing import diagonal as _diagonal, take_along_axis as _take_along_axis
from .lax_numpy import (arange, asarray, astype as _astype, broadcast_shapes, broadcast_to, expand_dims, eye,
                        matrix_transpose as _mT, moveaxis, ravel, squeeze, zeros)
from .reductions import any as _any, count_nonzero as _count_nonzero, max as _max, min as _min, prod, sum as _sum
from .scalar_types import finfo
from .sorting import where
from .tensor_contractions import (cross as _cross, matmul as _matmul, outer as _outer, tensordot as _tensordot,
                                  vecdot as _vecdot)
from .ufuncs import (abs as _abs, equal, greater, greater_equal, log, not_equal, power as _power, remainder,
                     sign as _sign, sqrt as _sqrt)
from .util import _arr, _aval, _canon_axis, _promote_dtypes_inexact, _promote_inexact


def _adjoint(x):
    """The conjugate transpose of the matrices in the last two axes (the transpose for real ``x``)."""
    xt = _mT(x)
    return lax.conj(xt) if _dt.is_complex_name(_aval(x).dtype_name) else xt


def _abs_squared(x):
    """`|x|^2` elementwise: `x * x`, or `real(x * conj(x))` for complex `x`."""
    if _dt.is_complex_name(_aval(x).dtype_name):
        return lax.real(lax.mul(x, lax.conj(x)))
    return lax.mul(x, x)


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector or matrix norm of ``x``.

    Args:
      x: the array (integers are promoted to float).
      ord: the norm: for vectors None/2 (Euclidean), 1, inf, -inf, 0 (count of nonzeros) or any
        real p; for matrices None/'fro' (Frobenius), 1, -1, inf, -inf, 2, -2 (largest/smallest
        singular value) or 'nuc' (nuclear).
      axis: None (the whole array: Frobenius/2-norm of the flattened values when ``ord`` is None),
        an int (vector norms) or a pair of ints (matrix norms).
      keepdims: if true, reduced axes stay as size-1 axes.

    Example:
      >>> import microjax_rs.numpy as jnp
      >>> jnp.linalg.norm(jnp.array([3.0, 4.0]))
      Array(5., dtype=float32)
    """
    (x,) = _promote_inexact(_arr(x))
    av = _aval(x)
    if axis is None:
        if ord is None:
            axes = tuple(range(av.ndim))
            return _sqrt(_sum(_abs_squared(x), axis=axes, keepdims=keepdims))
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
            return _sqrt(_sum(_abs_squared(x), axis=axes, keepdims=keepdims))
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
            return _sqrt(_sum(_abs_squared(x), axis=axes, keepdims=keepdims))
        if ord in (1, -1, _np.inf, -_np.inf):
            # 1: max over columns of the column sums; inf: max over rows of the row sums.
            s_ax, m_ax = (r, c) if ord in (1, -1) else (c, r)
            s = _sum(_abs(x), axis=s_ax, keepdims=keepdims)
            red = _max if ord in (1, _np.inf) else _min
            return red(s, axis=m_ax - 1 if (not keepdims and m_ax > s_ax) else m_ax, keepdims=keepdims)
        if ord in (2, -2, "nuc"):
            y = moveaxis(x, (r, c), (-2, -1))
            sv = svd(y, compute_uv=False)
            out = _sum(sv, axis=-1) if ord == "nuc" else (_max if ord == 2 else _min)(sv, axis=-1)
            if keepdims:
                out = expand_dims(expand_dims(out, min(r, c)), max(r, c))
            return out
        raise ValueError(f"Invalid norm order '{ord}' for matrices.")
    raise ValueError("Improper number of dimensions to norm.")


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """Vector norm of ``x`` of order ``ord`` over ``axis`` (the flattened array when None); see ``norm``."""
    x = _arr(x)
    if axis is None:
        out = norm(ravel(x), ord=ord)
        if keepdims:
            out = lax.reshape(out, (1,) * _aval(x).ndim)
        return out
    return norm(x, ord=ord, axis=axis, keepdims=keepdims)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """Matrix norm of order ``ord`` (default Frobenius) of the matrices in the last two axes of ``x``."""
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def trace(x, /, *, offset=0, dtype=None):
    """Sum of the ``offset``-th diagonal of the matrices in the last two axes of ``x``."""
    return _sum(_diagonal(x, offset=offset, axis1=-2, axis2=-1), axis=-1, dtype=dtype)


def diagonal(x, /, *, offset=0):
    """The ``offset``-th diagonal of the matrices in the last two axes of ``x``."""
    return _diagonal(x, offset=offset, axis1=-2, axis2=-1)


matmul = _matmul
tensordot = _tensordot
vecdot = _vecdot
matrix_transpose = _mT
outer = _outer
cross = _cross


def _missing(name):
    def fn(*args, **kwargs):
        raise NotImplementedError(f"jnp.linalg.{name} is not supported by microjax_rs")
    fn.__name__ = name
    fn.__doc__ = (f"``numpy.linalg.{name}``: not supported by microjax_rs (JAX computes it on the CPU);\n"
                  "calling it raises NotImplementedError.")
    return fn


for _n in ("tensorinv", "tensorsolve"):
    globals()[_n] = _missing(_n)
del _n


# -- decompositions and what is built on them ---------------------------------

class QRResult(_NamedTuple):
    Q: object
    R: object


class EigResult(_NamedTuple):
    eigenvalues: object
    eigenvectors: object


class EighResult(_NamedTuple):
    eigenvalues: object
    eigenvectors: object


class SVDResult(_NamedTuple):
    U: object
    S: object
    Vh: object


class SlogdetResult(_NamedTuple):
    sign: object
    logabsdet: object


def _matrices(a, name, square=False):
    """`a` as a float stack of matrices (ValueError naming the shape otherwise)."""
    (a,) = _promote_inexact(_arr(a))
    shape = _aval(a).shape
    if len(shape) < 2:
        raise ValueError(f"{name}: input must be at least 2-dimensional (a matrix), got shape {shape}")
    if square and shape[-1] != shape[-2]:
        raise ValueError(f"{name}: last 2 dimensions of the array must be square, got shape {shape}")
    return a


def _eye_like(a, n=None):
    av = _aval(a)
    n = av.shape[-1] if n is None else n
    return broadcast_to(eye(n, dtype=av.dtype_name), tuple(av.shape[:-2]) + (n, n))


def cholesky(a, *, upper=False, symmetrize_input=True):
    """Cholesky factor of the symmetric positive-definite matrices ``a`` (last two axes): lower
    triangular ``L`` with ``a = L @ L.T``, or the upper ``L.T`` when ``upper`` is true.
    A matrix that is not positive definite gives NaNs (no exception), as in JAX.
    ``symmetrize_input`` averages ``a`` with its transpose first (also for the derivative).
    """
    a = _matrices(a, "cholesky", square=True)
    lo = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
    return _mT(lo) if upper else lo


def qr(a, mode="reduced"):
    """QR decomposition of the matrices ``a``: ``Q`` with orthonormal columns and upper
    triangular ``R``, ``a = Q @ R``.

    ``mode``: ``'reduced'`` (K = min(M, N) columns), ``'complete'`` (square Q) or ``'r'``
    (R only); ``'raw'`` raises NotImplementedError. Returns a ``QRResult(Q, R)`` named tuple.
    """
    a = _matrices(a, "qr")
    if mode not in ("reduced", "complete", "r", "raw"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    if mode == "raw":
        raise NotImplementedError("qr(mode='raw') is not supported")
    q, r = lax_linalg.qr(a, full_matrices=(mode == "complete"))
    if mode == "r":
        return r
    return QRResult(q, r)


def eigh(a, UPLO=None, symmetrize_input=True):
    """Eigenvalues (ascending) and eigenvectors of the symmetric (Hermitian) matrices ``a``.

    ``UPLO`` picks the triangle read (``'L'`` default, ``'U'``); ``symmetrize_input``
    averages ``a`` with its transpose first. Returns ``EighResult(eigenvalues, eigenvectors)``
    with the eigenvectors as columns.
    """
    if UPLO not in (None, "L", "U"):
        raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {UPLO}")
    a = _matrices(a, "eigh", square=True)
    v, w = lax_linalg.eigh(a, lower=(UPLO != "U"), symmetrize_input=symmetrize_input)
    return EighResult(w, v)


def eig(a):
    """Eigenvalues and right eigenvectors of general square matrices ``a``, as
    ``EigResult(eigenvalues, eigenvectors)`` (complex; eigenvectors in the columns,
    unit 2-norm with the largest component real, as LAPACK's ``geev``). The order
    of the eigenvalues is the solver's. Not differentiable (JAX raises
    NotImplementedError for eigenvector derivatives).
    """
    a = _matrices(a, "eig", square=True)
    w, v = lax_linalg.eig(a, compute_left_eigenvectors=False)
    return EigResult(w, v)


def eigvals(a):
    """Eigenvalues (complex) of general square matrices ``a``; differentiable
    (``dw = diag(V⁻¹ dA V)``, as JAX)."""
    a = _matrices(a, "eigvals", square=True)
    return lax_linalg.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0]


def eigvalsh(a, UPLO="L"):
    """Eigenvalues (ascending) of the symmetric matrices ``a``; see ``eigh``."""
    return eigh(a, UPLO=UPLO).eigenvalues


def svd(a, full_matrices=True, compute_uv=True, hermitian=False, subset_by_index=None):
    """Singular value decomposition ``a = U @ diag(S) @ Vh`` of the matrices ``a``.

    Args:
      a: the matrices (last two axes).
      full_matrices: square U and Vh (True) or the reduced K = min(M, N) factors.
      compute_uv: if false, return only the singular values.
      hermitian: accepted; the general algorithm is used.
      subset_by_index: must be None (a subset raises NotImplementedError; JAX supports it).

    Returns:
      ``SVDResult(U, S, Vh)`` with ``S`` descending, or ``S`` alone.
    """
    a = _matrices(a, "svd")
    out = lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv,
                            subset_by_index=subset_by_index)
    if not compute_uv:
        return out
    return SVDResult(*out)


def svdvals(x, /):
    """Singular values of the matrices ``x``, in descending order."""
    return svd(x, compute_uv=False)


def _lu_parts(a):
    """(diagonal of U, sign of the permutation) of the LU factorization."""
    lu, pivots, _ = lax_linalg.lu(a)
    k = _aval(pivots).shape[-1]
    swaps = _sum(_astype(not_equal(pivots, arange(k, dtype="int32")), "int32"), axis=-1)
    parity = remainder(swaps, 2)
    dtype = _aval(a).dtype_name
    perm_sign = _astype(1 - 2 * parity, dtype)
    return _diagonal(lu, axis1=-2, axis2=-1), perm_sign


def det(a):
    """Determinant of the square matrices ``a``, from an LU factorization."""
    a = _matrices(a, "det", square=True)
    d, sign = _lu_parts(a)
    return sign * prod(d, axis=-1)


def slogdet(a, *, method=None):
    """Sign and natural log of the absolute determinant of the square matrices ``a``, as
    ``SlogdetResult(sign, logabsdet)``; stable where ``det`` would overflow. ``method`` is accepted.
    """
    if method not in (None, "lu"):
        raise ValueError(f"Unknown slogdet method '{method}'. Supported methods are 'lu' (`None`).")
    a = _matrices(a, "slogdet", square=True)
    d, psign = _lu_parts(a)
    s = psign * prod(_sign(d), axis=-1)  # complex: d / |d|, the phase
    return SlogdetResult(s, _sum(log(_abs(d)), axis=-1))


def _permute_rows(perm, b):
    """`b[..., perm, :]`: one gather by the permutation (it differentiates
    and batches as a gather)."""
    return _take_along_axis(b, expand_dims(perm, -1), axis=-2, mode="promise_in_bounds")


def _lu_solve_factored(lu, perm, b):
    pb = _permute_rows(perm, b)
    y = lax_linalg.triangular_solve(lu, pb, left_side=True, lower=True, unit_diagonal=True)
    return lax_linalg.triangular_solve(lu, y, left_side=True, lower=False)


def _broadcast_batch(a, b, vector):
    sa, sb = _aval(a).shape, _aval(b).shape
    tail_b = sb[-1:] if vector else sb[-2:]
    lead = broadcast_shapes(sa[:-2], sb[:len(sb) - len(tail_b)])
    return broadcast_to(a, tuple(lead) + tuple(sa[-2:])), broadcast_to(b, tuple(lead) + tuple(tail_b))


def solve(a, b):
    """Solution ``x`` of the linear system ``a @ x = b`` for square ``a`` (LU with partial pivoting).

    ``b`` is a vector (``a.shape[:-1]``) or a matrix of right-hand sides; batch axes broadcast.

    Example:
      >>> import microjax_rs.numpy as jnp
      >>> a = jnp.array([[2.0, 0.0], [0.0, 4.0]])
      >>> jnp.linalg.solve(a, jnp.array([2.0, 2.0]))
      Array([1. , 0.5], dtype=float32)
    """
    a = _matrices(a, "solve", square=True)
    (a, b) = _promote_dtypes_inexact(a, _arr(b))
    sa, sb = _aval(a).shape, _aval(b).shape
    vector = len(sb) == 1  # (N,): one right-hand side; otherwise (..., N, M), as JAX
    if len(sb) == 0 or sb[-1 if vector else -2] != sa[-1]:
        raise ValueError(f"solve: incompatible shapes a {sa} and b {sb}")
    a, b = _broadcast_batch(a, b, vector)
    if vector:
        b = expand_dims(b, -1)
    lu, _, perm = lax_linalg.lu(a)
    x = _lu_solve_factored(lu, perm, b)
    return squeeze(x, -1) if vector else x


def inv(a):
    """Inverse of the square matrices ``a`` (solving ``a @ x = I``). A singular matrix gives
    infinities or NaNs rather than an exception, as in JAX.
    """
    a = _matrices(a, "inv", square=True)
    return solve(a, _eye_like(a))


def pinv(a, rtol=None, hermitian=False, *, rcond=None):
    """Moore-Penrose pseudo-inverse of the matrices ``a``, from the SVD; singular values at most
    ``rtol`` times the largest are treated as zero (default ``10 * max(M, N) * eps``; ``rcond``
    is the older name). ``hermitian`` is accepted.
    """
    a = _matrices(a, "pinv")
    m, n = _aval(a).shape[-2:]
    if rcond is not None:
        rtol = rcond
    if rtol is None:
        rtol = 10.0 * max(m, n) * float(finfo(_aval(a).dtype_name).eps)
    if 0 in _aval(a).shape:
        return zeros(tuple(_aval(a).shape[:-2]) + (n, m), dtype=_aval(a).dtype_name)
    u, s, vt = svd(a, full_matrices=False)
    # rtol broadcasts against the stack's batch shape, one cutoff per matrix.
    cutoff = expand_dims(_max(s, axis=-1) * rtol, -1)
    keep = greater(s, cutoff)
    s_inv = where(keep, 1.0 / where(keep, s, 1.0), 0.0)
    return _matmul(_adjoint(vt) * expand_dims(s_inv, -2), _adjoint(u))


def lstsq(a, b, rcond=None, *, numpy_resid=False):
    """Least-squares solution of ``a @ x = b`` for a 2-D ``a``, via the SVD.

    Args:
      a: an (M, N) matrix.
      b: an (M,) vector or (M, K) matrix.
      rcond: relative cutoff for small singular values (default ``eps * max(M, N)``).
      numpy_resid: if true, return NumPy's residuals (empty when rank < N or M <= N).

    Returns:
      ``(x, residuals, rank, singular_values)``.
    """
    (a, b) = _promote_dtypes_inexact(_arr(a), _arr(b))
    sa, sb = _aval(a).shape, _aval(b).shape
    if len(sa) != 2:
        raise ValueError(f"{len(sa)}-dimensional array given. Array must be two-dimensional")
    if len(sb) not in (1, 2):
        raise ValueError(f"{len(sb)}-dimensional array given. Array must be one or two-dimensional")
    m, n = sa
    if sb[0] != m:
        raise ValueError(f"Leading dimensions of input arrays must match: a {sa}, b {sb}")
    b_vector = len(sb) == 1
    if b_vector:
        b = expand_dims(b, -1)
    if rcond is None:
        rcond = float(finfo(_aval(a).dtype_name).eps) * max(n, m)
    u, s, vt = svd(a, full_matrices=False)
    mask = greater_equal(s, s[0] * rcond) if min(m, n) else s > 0
    rank = _sum(_astype(mask, "int32"))
    s_inv = expand_dims(where(mask, 1.0 / where(mask, s, 1.0), 0.0), -1)
    x = _matmul(_adjoint(vt), s_inv * _matmul(_adjoint(u), b))
    if numpy_resid and (int(rank) < n or m <= n):
        resid = asarray([], dtype=_aval(s).dtype_name)
    else:
        r = b - _matmul(a, x)
        resid = _sum(_abs_squared(r), axis=0)
    if b_vector:
        x = ravel(x)
        if not (numpy_resid and (int(rank) < n or m <= n)):
            resid = ravel(resid)
    return x, resid, rank, s


def matrix_rank(M, rtol=None, *, tol=None):
    """Rank of the matrices ``M``: the number of singular values above ``tol`` (default:
    ``rtol`` times the largest, ``rtol`` defaulting to ``eps * max(M, N)``).
    """
    M = _arr(M)
    if _aval(M).ndim < 2:
        return _astype(_any_nonzero(M), "int32")
    s = svd(M, compute_uv=False)
    if tol is None:
        if rtol is None:
            m, n = _aval(M).shape[-2:]
            rtol = float(finfo(_aval(s).dtype_name).eps) * max(m, n)
        tol = expand_dims(_max(s, axis=-1), -1) * rtol
    return _sum(_astype(greater(s, tol), "int32"), axis=-1)


def _any_nonzero(x):
    return _any(not_equal(x, 0))


def multi_dot(arrays, *, precision=None):
    """The product of the matrices in ``arrays`` (at least two), multiplied left to right."""
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError("Expecting at least two arrays.")
    out = arrays[0]
    for a in arrays[1:]:
        out = _matmul(out, a)
    return out


def matrix_power(a, n):
    """The square matrices ``a`` raised to the integer power ``n`` (by repeated squaring; negative
    ``n`` inverts first, ``n = 0`` gives the identity).
    """
    a = _arr(a)
    av = _aval(a)
    if av.ndim < 2 or av.shape[-1] != av.shape[-2]:
        raise ValueError(f"matrix_power requires square matrices, got shape {av.shape}")
    n = int(n)
    if n < 0:
        a = inv(a)
        n = -n
    result = broadcast_to(eye(av.shape[-1], dtype=av.dtype_name), av.shape)
    base = a
    while n:
        if n & 1:
            result = _matmul(result, base)
        n >>= 1
        if n:
            base = _matmul(base, base)
    return result


def cond(x, p=None):
    """The condition number of (a stack of) matrices in the norm `p`
    (jnp.linalg.cond): the singular-value ratio for None / 2 / -2 (any
    shape), norm(x, p) * norm(inv(x), p) for the others (square only);
    inf where the result is nan but x has no nan."""
    (a,) = _promote_dtypes_inexact(_arr(x))
    shape = _aval(a).shape
    if len(shape) < 2:
        raise ValueError(f"jnp.linalg.cond: input array must be at least 2D; got arr.shape={shape}")
    if p is None or (not isinstance(p, str) and p in (2, -2)):
        s = svdvals(a)
        r = s[..., -1] / s[..., 0] if (p is not None and p == -2) else s[..., 0] / s[..., -1]
    else:
        if shape[-2] != shape[-1]:
            raise ValueError(f"jnp.linalg.cond: for p={p!r}, array must be square; got arr.shape={shape}")
        r = norm(a, ord=p, axis=(-2, -1)) * norm(inv(a), ord=p, axis=(-2, -1))
    has_nan = _any(not_equal(a, a), axis=(-2, -1))
    return where(not_equal(r, r) & ~has_nan, _np.inf, r)
