"""The special-matrix constructors of `jax.scipy.linalg` (toeplitz, hankel,
pascal, ...) and the real-valued decompositions / solvers built from the
`lax.linalg` primitives (`polar`, `eigh_tridiagonal`, `solve_sylvester`,
`expm_frechet`, `qr_multiply`)."""
import math

import numpy as _np

from .. import numpy as jnp
from ..dtypes import default_float_name, default_int_name
from ..lax import linalg as _ll
from .._src.numpy.util import _arr, _aval, _promote_dtypes, _promote_dtypes_inexact


def _last_index_table(vals, idx):
    """`vals[..., idx]` for a 2-D table of indices into the last axis."""
    idx = _np.asarray(idx, _np.int32)
    flat = jnp.take(vals, jnp.asarray(idx.reshape(-1)), axis=-1)
    return jnp.reshape(flat, tuple(_aval(vals).shape[:-1]) + idx.shape)


def toeplitz(c, r=None):
    """`T[i, j] = c[i - j]` below the diagonal, `r[j - i]` above (`r`
    defaults to `c`; `c[0]` is the diagonal). Leading axes batch."""
    c = jnp.asarray(c)
    if r is None:
        r = c
    c, r = _promote_dtypes(c, jnp.asarray(r))
    m, n = _aval(c).shape[-1], _aval(r).shape[-1]
    lead = jnp.broadcast_shapes(_aval(c).shape[:-1], _aval(r).shape[:-1])
    c = jnp.broadcast_to(c, lead + (m,))
    r = jnp.broadcast_to(r, lead + (n,))
    vals = jnp.concatenate([jnp.flip(r[..., 1:], -1), c], axis=-1)
    i, j = _np.ogrid[:m, :n]
    return _last_index_table(vals, (n - 1) + i - j)


def hankel(c, r=None):
    """`H[i, j] = c[i + j]` while `i + j < len(c)`, then `r[i + j - len(c) + 1]`
    (`r` defaults to zeros like `c`)."""
    c = jnp.asarray(c)
    if r is None:
        r = jnp.zeros_like(c)
    c, r = _promote_dtypes(c, jnp.asarray(r))
    m, n = _aval(c).shape[-1], _aval(r).shape[-1]
    lead = jnp.broadcast_shapes(_aval(c).shape[:-1], _aval(r).shape[:-1])
    c = jnp.broadcast_to(c, lead + (m,))
    r = jnp.broadcast_to(r, lead + (n,))
    vals = jnp.concatenate([c, r[..., 1:]], axis=-1)
    i, j = _np.ogrid[:m, :n]
    return _last_index_table(vals, i + j)


def circulant(c):
    """`C[i, j] = c[(i - j) mod n]`; leading axes batch."""
    c = jnp.asarray(c)
    n = _aval(c).shape[-1]
    i, j = _np.ogrid[:n, :n]
    return _last_index_table(c, (i - j) % n)


def companion(a):
    """The companion matrix of the polynomial with coefficients `a` (highest
    power first): first row `-a[1:] / a[0]`, ones on the subdiagonal."""
    (a,) = _promote_dtypes_inexact(jnp.asarray(a))
    shape = _aval(a).shape
    if len(shape) < 1 or shape[-1] < 2:
        raise ValueError(f"The length of `a` along the last axis must be at least 2; got shape {shape}.")
    n = shape[-1] - 1
    first = -a[..., 1:] / a[..., :1]
    sub = jnp.broadcast_to(jnp.eye(n - 1, n, dtype=_aval(a).dtype_name), shape[:-1] + (n - 1, n))
    return jnp.concatenate([first[..., None, :], sub], axis=-2)


def fiedler(a):
    """`F[i, j] = |a[i] - a[j]|` (the dtype of `a`)."""
    a = jnp.asarray(a)
    return jnp.abs(a[..., :, None] - a[..., None, :])


def fiedler_companion(a):
    """Fiedler's pentadiagonal companion matrix of the polynomial `a`
    (highest power first; normalized by `a[0]`)."""
    (a,) = _promote_dtypes_inexact(jnp.asarray(a))
    shape = _aval(a).shape
    if len(shape) < 1 or shape[-1] == 0:
        raise ValueError("fiedler_companion requires the last axis of 'a' to have nonzero length, but got an "
                         f"array of shape {shape}.")
    n = shape[-1] - 1
    dt = _aval(a).dtype_name
    if n < 1:
        return jnp.zeros(shape[:-1] + (0, 0), dtype=dt)
    a = a / a[..., :1]
    # one row / column table per term: (row, col, coefficient index or -1 for a constant one)
    ones = _np.zeros((n, n), bool)
    coef = _np.full((n, n), -1)
    coef[0, 0] = 1
    if n > 1:
        ones[1, 0] = True
    for i in range(0, n, 2):
        if i + 1 < n:
            coef[i, i + 1] = i + 2
        if i + 2 < n:
            ones[i, i + 2] = True
        if i >= 2:
            coef[i, i - 1] = i + 1
    for i in range(3, n, 2):
        ones[i, i - 2] = True
    padded = jnp.concatenate([a, jnp.zeros(shape[:-1] + (1,), dt)], axis=-1)
    vals = -_last_index_table(padded, _np.where(coef >= 0, coef, n + 1))
    return jnp.where(jnp.asarray(ones), jnp.ones((), dt), vals)


def convolution_matrix(a, n, mode="full"):
    """The matrix `T` with `T @ v == convolve(a, v, mode)` for `v` of length `n`."""
    n = int(n)
    if n <= 0:
        raise ValueError(f"n must be a positive integer; got {n}.")
    a = jnp.atleast_1d(jnp.asarray(a))
    shape = _aval(a).shape
    m = shape[-1]
    if m == 0:
        raise ValueError(f"len(a) must be at least 1; got shape {shape}.")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"mode must be one of 'full', 'valid', 'same'; got {mode!r}.")
    full_rows = m + n - 1
    rows = {"full": full_rows, "same": max(m, n), "valid": max(m, n) - min(m, n) + 1}[mode]
    start = {"full": 0, "same": (min(m, n) - 1) // 2, "valid": min(m, n) - 1}[mode]
    i, j = _np.ogrid[start:start + rows, :n]
    k = i - j
    padded = jnp.concatenate([a, jnp.zeros(shape[:-1] + (1,), _aval(a).dtype_name)], axis=-1)
    return _last_index_table(padded, _np.where((k >= 0) & (k < m), k, m))


def hadamard(n, dtype=int):
    """Sylvester's Hadamard matrix of order `n` (a power of two)."""
    n = int(n)
    if n < 1 or n & (n - 1):
        raise ValueError(f"n must be a positive power of 2; got {n}.")
    h = _np.ones((1, 1), _np.int64)
    while h.shape[0] < n:
        h = _np.block([[h, h], [h, -h]])
    name = default_int_name() if dtype is int else (default_float_name() if dtype is float else dtype)
    return jnp.asarray(h, dtype=name)


def helmert(n, full=False):
    """The Helmert matrix of order `n` (without its first row unless `full`)."""
    n = int(n)
    if n <= 0:
        raise ValueError(f"n must be a positive integer; got {n}.")
    h = _np.zeros((n, n))
    if n > 0:
        h[0] = 1.0 / math.sqrt(n)
    for i in range(1, n):
        d = math.sqrt(i * (i + 1))
        h[i, :i] = 1.0 / d
        h[i, i] = -i / d
    return jnp.asarray(h if full else h[1:], dtype=default_float_name())


def hilbert(n):
    """`H[i, j] = 1 / (i + j + 1)`."""
    i, j = _np.ogrid[:n, :n]
    return jnp.asarray(1.0 / (i + j + 1.0), dtype=default_float_name())


def invhilbert(n):
    """The exact inverse of `hilbert(n)` (from its closed form, in float)."""
    n = int(n)
    out = _np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            out[i, j] = float((-1) ** (i + j) * (i + j + 1) * math.comb(n + i, n - j - 1)
                              * math.comb(n + j, n - i - 1) * math.comb(i + j, i) ** 2)
    return jnp.asarray(out, dtype=default_float_name())


def _pascal_lower(n):
    return _np.array([[math.comb(i, j) for j in range(n)] for i in range(n)], dtype=object).reshape(n, n)


def _check_kind(kind):
    if kind is None:
        return "symmetric"
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"Expected kind to be one of: ['symmetric', 'lower', 'upper']; got {kind}")
    return kind


def pascal(n, kind=None):
    """The Pascal matrix: symmetric `C(i + j, i)`, lower `C(i, j)` or upper."""
    kind = _check_kind(kind)
    n = int(n)
    if kind == "symmetric":
        out = [[math.comb(i + j, i) for j in range(n)] for i in range(n)]
    else:
        out = _pascal_lower(n).tolist()
    out = _np.array(out, dtype=float).reshape(n, n)
    return jnp.asarray(out.T if kind == "upper" else out, dtype=default_float_name())


def invpascal(n, kind=None):
    """The exact inverse of `pascal(n, kind)`."""
    kind = _check_kind(kind)
    n = int(n)
    low = _np.array([[(-1) ** (i + j) * math.comb(i, j) for j in range(n)] for i in range(n)],
                    dtype=object).reshape(n, n)
    if kind == "lower":
        out = low
    elif kind == "upper":
        out = low.T
    else:
        out = low.T.dot(low) if n else low
    return jnp.asarray(_np.array(out, dtype=float).reshape(n, n), dtype=default_float_name())


def leslie(f, s):
    """The Leslie matrix: fecundities `f` in the first row, survival rates `s`
    on the subdiagonal."""
    f, s = _promote_dtypes(jnp.atleast_1d(jnp.asarray(f)), jnp.atleast_1d(jnp.asarray(s)))
    fs, ss = _aval(f).shape, _aval(s).shape
    if fs[-1] < 2:
        raise ValueError(f"The length of f along the last axis must be at least 2; got shape {fs}.")
    n = fs[-1]
    if ss[-1] != n - 1:
        raise ValueError("Incorrect lengths for f and s. The length of s along the last axis must be one less "
                         f"than the length of f; got f shape {fs} and s shape {ss}.")
    lead = jnp.broadcast_shapes(fs[:-1], ss[:-1])
    dt = _aval(f).dtype_name
    f = jnp.broadcast_to(f, lead + (n,))
    s = jnp.broadcast_to(s, lead + (n - 1,))
    sub = jnp.concatenate([s[..., :, None] * jnp.eye(n - 1, dtype=dt), jnp.zeros(lead + (n - 1, 1), dt)], -1)
    return jnp.concatenate([f[..., None, :], sub], axis=-2)


def block_diag(*arrs):
    """The block-diagonal matrix of arrays of at most two dimensions."""
    if not arrs:
        arrs = (jnp.zeros((1, 0)),)
    arrs = _promote_dtypes(*[jnp.asarray(a) for a in arrs])
    for i, a in enumerate(arrs):
        if _aval(a).ndim > 2:
            raise ValueError("Arguments to jax.scipy.linalg.block_diag must have at most 2 dimensions, "
                             f"got {a} at argument {i}.")
    mats = [jnp.atleast_2d(a) for a in arrs]
    total = sum(_aval(m).shape[1] for m in mats)
    rows, col = [], 0
    for m in mats:
        r, c = _aval(m).shape
        rows.append(jnp.pad(m, ((0, 0), (col, total - col - c))))
        col += c
    return jnp.concatenate(rows, axis=0)


def polar(a, side="right", *, method="qdwh", eps=None, max_iterations=None):
    """`(u, p)` with `a = u p` (side 'right') or `a = p u` ('left'), `u` with
    orthonormal columns/rows and `p` symmetric positive semidefinite. Both
    methods are computed from the SVD here (`lax.linalg.qdwh` does not exist
    in microjax_rs); the factors are the same up to rounding. As in JAX,
    'qdwh' (the default) takes `m >= n` with side 'right' and `m < n` with
    side 'left' only."""
    a = jnp.asarray(a)
    if _aval(a).ndim < 2:
        raise ValueError("The input `a` must be at least a 2-D array.")
    if side not in ("right", "left"):
        raise ValueError("The argument `side` must be either 'right' or 'left'.")
    if method not in ("qdwh", "svd"):
        raise ValueError(f"Unknown polar decomposition method {method}.")
    m, n = _aval(a).shape[-2:]
    if method == "qdwh" and not ((m >= n and side == "right") or (m < n and side == "left")):
        raise NotImplementedError("method='qdwh' only supports mxn matrices where m < n where side='right' and "
                                  f"m >= n side='left', got {(m, n)} with side={side!r}")
    (a,) = _promote_dtypes_inexact(a)
    u, s, vh = _ll.svd(a, full_matrices=False)
    unitary = jnp.matmul(u, vh)
    if side == "right":
        posdef = jnp.matmul(jnp.swapaxes(vh, -1, -2) * s[..., None, :], vh)
    else:
        posdef = jnp.matmul(u * s[..., None, :], jnp.swapaxes(u, -1, -2))
    return unitary, posdef


def _tridiagonal(d, e):
    n = _aval(d).shape[-1]
    dt = _aval(d).dtype_name
    off = jnp.zeros(_aval(d).shape[:-1] + (n, n), dt)
    if n > 1:
        sup = jnp.concatenate([e[..., :, None] * jnp.eye(n - 1, dtype=dt), jnp.zeros(_aval(e).shape[:-1]
                                                                                     + (n - 1, 1), dt)], -1)
        sup = jnp.concatenate([jnp.zeros(_aval(e).shape[:-1] + (1, n), dt), sup], -2)  # e[i] at (i+1, i)
        off = sup + jnp.swapaxes(sup, -1, -2)
    return d[..., :, None] * jnp.eye(n, dtype=dt) + off


def eigh_tridiagonal(d, e, *, eigvals_only=False, select="a", select_range=None, tol=None, key=None):
    """Eigenvalues (ascending; and eigenvectors unless `eigvals_only`) of the
    symmetric tridiagonal matrix with diagonal `d` and off-diagonal `e`.
    `select='i'` keeps the eigenvalues of indices `select_range[0]..[1]`."""
    d, e = _promote_dtypes_inexact(jnp.asarray(d), jnp.asarray(e))
    n = _aval(d).shape[-1]
    if _aval(e).shape[-1] != max(n - 1, 0):
        raise TypeError(f"e must have one fewer element than d; got {_aval(d).shape} and {_aval(e).shape}")
    if select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented")
    if select not in ("a", "i"):
        raise ValueError(f"Unknown select: {select!r}")
    v, w = _ll.eigh(_tridiagonal(d, e))
    if select == "i":
        lo, hi = int(select_range[0]), int(select_range[1])
        w, v = w[..., lo:hi + 1], v[..., :, lo:hi + 1]
    return w if eigvals_only else (w, v)


def solve_sylvester(A, B, C, *, method="schur", tol=1e-8):
    """`X` with `A X + X B = C` (real matrices), solved as the linear system
    `(A (x) I + I (x) Bᵀ) vec(X) = vec(C)`; `method` and `tol` are accepted
    for JAX's signature (no NaN result for a near-singular system here)."""
    A, B, C = _promote_dtypes_inexact(jnp.asarray(A), jnp.asarray(B), jnp.asarray(C))
    if _aval(C).ndim < 2:
        raise ValueError(f"Incompatible shapes for Sylvester equation:\nA: {_aval(A).shape}\n"
                         f"B: {_aval(B).shape}\nC: {_aval(C).shape}")
    m, n = _aval(C).shape[-2:]
    if _aval(A).shape[-2:] != (m, m) or _aval(B).shape[-2:] != (n, n):
        raise ValueError(f"Incompatible shapes for Sylvester equation:\nA: {_aval(A).shape}\n"
                         f"B: {_aval(B).shape}\nC: {_aval(C).shape}")
    dt = _aval(A).dtype_name
    lead = jnp.broadcast_shapes(_aval(A).shape[:-2], _aval(B).shape[:-2], _aval(C).shape[:-2])

    def kron(x, y):
        p, q = _aval(x).shape[-2:]
        r, s = _aval(y).shape[-2:]
        out = x[..., :, None, :, None] * y[..., None, :, None, :]
        return jnp.reshape(out, _aval(out).shape[:-4] + (p * r, q * s))

    K = kron(A, jnp.eye(n, dtype=dt)) + kron(jnp.eye(m, dtype=dt), jnp.swapaxes(B, -1, -2))
    K = jnp.broadcast_to(K, lead + (m * n, m * n))
    rhs = jnp.reshape(jnp.broadcast_to(C, lead + (m, n)), lead + (m * n, 1))
    return jnp.reshape(jnp.linalg.solve(K, rhs), lead + (m, n))


def expm_frechet(A, E, *, method=None, compute_expm=True):
    """The Fréchet derivative of `expm` at `A` in the direction `E` (a JVP of
    `expm`); `(expm(A), derivative)` unless `compute_expm=False`."""
    from .. import jvp
    from .linalg import expm

    A, E = jnp.asarray(A), jnp.asarray(E)
    sa, se = _aval(A).shape, _aval(E).shape
    if len(sa) < 2 or sa[-2] != sa[-1]:
        raise ValueError(f"expected A to be a (batched) square matrix, got A.shape={sa}")
    if len(se) < 2 or se[-2] != se[-1]:
        raise ValueError(f"expected E to be a (batched) square matrix, got E.shape={se}")
    if sa != se:
        raise ValueError(f"expected A and E to be the same shape, got A.shape={sa} E.shape={se}")
    A, E = _promote_dtypes_inexact(A, E)
    value, deriv = jvp(expm, (A,), (E,))
    return (value, deriv) if compute_expm else deriv


def qr_multiply(a, c, mode="right", pivoting=False, conjugate=False, overwrite_a=False, overwrite_c=False):
    """`(c @ Q, R)` ('right') or `(Q @ c, R)` ('left') with the economic QR of `a`."""
    if mode not in ("right", "left"):
        raise ValueError(f"mode must be 'right' or 'left', got {mode!r}")
    if pivoting:
        raise NotImplementedError("qr_multiply(pivoting=True) is not supported")
    a, c = _promote_dtypes_inexact(jnp.asarray(a), _arr(c))
    q, r = _ll.qr(a, full_matrices=False)
    out = jnp.matmul(c, q) if mode == "right" else jnp.matmul(q, c)
    return out, r
