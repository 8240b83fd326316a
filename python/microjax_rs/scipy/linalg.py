"""`jax.scipy.linalg`: triangular solves, Cholesky and LU factor/solve pairs,
`expm`, and SciPy-flavoured aliases of the `jnp.linalg` decompositions."""
import numpy as _np

from .. import lax
from .. import numpy as jnp
from ..lax import linalg as _ll
from ..numpy import linalg as _jl
from .._src.numpy import linalg as _jl_impl
from .._src.numpy.util import _arr, _aval, _promote_dtypes_inexact


def _trans_flags(trans):
    if trans in (0, "N"):
        return False, False
    if trans in (1, "T"):
        return True, False
    if trans in (2, "C"):
        return True, True
    raise ValueError(f"Invalid 'trans' value {trans!r}")


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, debug=None,
                     check_finite=True):
    """Solves `op(a) x = b` for triangular `a`; `b` of shape `[..., n]` or `[..., n, k]`."""
    transpose_a, conjugate_a = _trans_flags(trans)
    a = _jl_impl._matrices(a, "solve_triangular", square=True)
    a, b = _promote_dtypes_inexact(a, _arr(b))
    vector = _aval(b).ndim == 1
    if vector:
        b = jnp.expand_dims(b, -1)
    out = _ll.triangular_solve(a, b, left_side=True, lower=lower, transpose_a=transpose_a,
                               conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    return jnp.squeeze(out, -1) if vector else out


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """The Cholesky factor (upper unless `lower`); NaNs for a non-PD `a`."""
    return _jl.cholesky(a, upper=not lower)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """Cholesky factorization of the symmetric positive-definite ``a``, in the form ``cho_solve``
    takes: ``(c, lower)``, with ``c`` the lower (``lower=True``) or upper triangular factor.
    The other triangle of ``c`` is zero here (SciPy leaves it unspecified); ``overwrite_a`` and
    ``check_finite`` are ignored.
    """
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """Solves `a x = b` given `cho_factor(a)`."""
    c, lower = c_and_lower
    c = _jl_impl._matrices(c, "cho_solve", square=True)
    c, b = _promote_dtypes_inexact(c, _arr(b))
    vector = _aval(b).ndim == _aval(c).ndim - 1
    if vector:
        b = jnp.expand_dims(b, -1)
    # a = L Lᵀ (lower) or Uᵀ U: two triangular solves.
    y = _ll.triangular_solve(c, b, left_side=True, lower=lower, transpose_a=not lower)
    x = _ll.triangular_solve(c, y, left_side=True, lower=lower, transpose_a=lower)
    return jnp.squeeze(x, -1) if vector else x


def lu(a, permute_l=False, overwrite_a=False, check_finite=True):
    """`(p, l, u)` with `a = p @ l @ u`, or `(p @ l, u)` when `permute_l`."""
    a = _jl_impl._matrices(a, "lu")
    lu_, _, perm = _ll.lu(a)
    m, n = _aval(a).shape[-2:]
    k = min(m, n)
    dtype = _aval(a).dtype_name
    p = jnp.swapaxes(jnp.astype(jnp.equal(jnp.expand_dims(perm, -1), jnp.arange(m, dtype="int32")), dtype),
                     -1, -2)
    l = jnp.tril(lu_[..., :, :k], -1) + jnp.eye(m, k, dtype=dtype)
    u = jnp.triu(lu_[..., :k, :])
    if permute_l:
        return jnp.matmul(p, l), u
    return p, l, u


def lu_factor(a, overwrite_a=False, check_finite=True):
    """`(lu, piv)`: LAPACK's packed factors and int32 row swaps."""
    a = _jl_impl._matrices(a, "lu_factor")
    lu_, piv, _ = _ll.lu(a)
    return lu_, piv


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """Solves `op(a) x = b` given `lu_factor(a)`."""
    lu_, piv = lu_and_piv
    lu_ = _jl_impl._matrices(lu_, "lu_solve", square=True)
    lu_, b = _promote_dtypes_inexact(lu_, _arr(b))
    transpose_a, _ = _trans_flags(trans)
    m = _aval(lu_).shape[-1]
    perm = _ll.lu_pivots_to_permutation(piv, m)
    vector = _aval(b).ndim == _aval(lu_).ndim - 1
    if vector:
        b = jnp.expand_dims(b, -1)
    if not transpose_a:
        x = _jl_impl._lu_solve_factored(lu_, perm, b)
    else:
        # aᵀ = Uᵀ Lᵀ P: x = Pᵀ L⁻ᵀ U⁻ᵀ b
        y = _ll.triangular_solve(lu_, b, left_side=True, lower=False, transpose_a=True)
        z = _ll.triangular_solve(lu_, y, left_side=True, lower=True, transpose_a=True, unit_diagonal=True)
        onehot = jnp.astype(jnp.equal(jnp.expand_dims(perm, -1), jnp.arange(m, dtype="int32")),
                            _aval(z).dtype_name)
        x = jnp.matmul(jnp.swapaxes(onehot, -1, -2), z)
    return jnp.squeeze(x, -1) if vector else x


# Padé(13) coefficients and the 1-norm bound under which it is accurate
# (Higham 2005, "The scaling and squaring method for the matrix exponential
# revisited").
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
           40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def expm(A, *, upper_triangular=False, max_squarings=16):
    """Matrix exponential by scaling and squaring with a degree-13 Padé
    approximant. The number of squarings `s` is computed from the 1-norm;
    `max_squarings` squarings are always staged, the ones past `s` selected
    away, so the function is traceable and differentiable."""
    A = _jl_impl._matrices(A, "expm", square=True)
    dtype = _aval(A).dtype_name
    n = _aval(A).shape[-1]
    norm1 = jnp.max(jnp.sum(jnp.abs(A), axis=-2), axis=-1)
    ratio = lax.stop_gradient(norm1) / _THETA13
    s = jnp.clip(jnp.ceil(jnp.log2(jnp.maximum(ratio, 1e-30))), 0, max_squarings)
    s = jnp.where(jnp.isfinite(s), s, 0.0)
    scale = jnp.exp2(-s)[..., None, None]
    X = A * scale
    eye = jnp.broadcast_to(jnp.eye(n, dtype=dtype), _aval(A).shape)
    b = _PADE13
    X2 = jnp.matmul(X, X)
    X4 = jnp.matmul(X2, X2)
    X6 = jnp.matmul(X4, X2)
    U_in = jnp.matmul(X6, b[13] * X6 + b[11] * X4 + b[9] * X2) + b[7] * X6 + b[5] * X4 + b[3] * X2 + b[1] * eye
    U = jnp.matmul(X, U_in)
    V = jnp.matmul(X6, b[12] * X6 + b[10] * X4 + b[8] * X2) + b[6] * X6 + b[4] * X4 + b[2] * X2 + b[0] * eye
    R = _jl.solve(V - U, V + U)
    for i in range(int(max_squarings)):
        R = jnp.where((s > i)[..., None, None], jnp.matmul(R, R), R)
    return R


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, debug=False, check_finite=True,
          assume_a="gen"):
    """Solution ``x`` of ``a @ x = b`` for square ``a``.

    ``assume_a='pos'`` solves through a Cholesky factorization (``a`` symmetric positive definite,
    read from the ``lower`` triangle); every other value uses LU with partial pivoting. The
    ``overwrite_*``, ``debug`` and ``check_finite`` flags are accepted and ignored (as in JAX).
    """
    if assume_a == "pos":
        return cho_solve(cho_factor(a, lower=lower), b)
    return _jl.solve(a, b)


def inv(a, overwrite_a=False, check_finite=True):
    """Inverse of the square matrix ``a`` (``overwrite_a`` and ``check_finite`` are accepted and ignored)."""
    return _jl.inv(a)


def det(a, overwrite_a=False, check_finite=True):
    """Determinant of the square matrix ``a`` (``overwrite_a`` and ``check_finite`` are accepted and ignored)."""
    return _jl.det(a)


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """QR decomposition ``a = Q @ R`` in SciPy's conventions.

    ``mode``: ``'full'`` (square Q, the default), ``'economic'`` (K = min(M, N) columns) or ``'r'``
    (returns the 1-tuple ``(R,)``). Returns ``(Q, R)`` otherwise. ``pivoting=True`` raises
    NotImplementedError; ``lwork``, ``overwrite_a`` and ``check_finite`` are ignored.
    """
    if pivoting:
        raise NotImplementedError("qr(pivoting=True) is not supported")
    if mode not in ("full", "r", "economic"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    q, r = _ll.qr(_jl_impl._matrices(a, "qr"), full_matrices=(mode == "full"))
    return (r,) if mode == "r" else (q, r)


def eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False, turbo=True,
         eigvals=None, type=1, check_finite=True):
    """Eigenvalues (ascending) and eigenvectors (columns) of the symmetric matrix ``a``, read from
    its ``lower`` (default) or upper triangle.

    Returns ``(w, v)``, or ``w`` alone with ``eigvals_only=True``. The generalized problem
    (``b=``) and ``eigvals=`` raise NotImplementedError; the other flags are ignored.
    """
    if b is not None or eigvals is not None:
        raise NotImplementedError("eigh with b= or eigvals= is not supported")
    v, w = _ll.eigh(_jl_impl._matrices(a, "eigh", square=True), lower=lower)
    return w if eigvals_only else (w, v)


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
        lapack_driver="gesdd"):
    """Singular value decomposition ``a = U @ diag(s) @ Vh``: returns ``(U, s, Vh)`` (square U and Vh
    when ``full_matrices``), or ``s`` alone when ``compute_uv`` is false. ``lapack_driver`` and the
    ``overwrite_a`` / ``check_finite`` flags are ignored.
    """
    return _jl.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def hessenberg(a, *, calc_q=False, overwrite_a=False, check_finite=True):
    """Upper Hessenberg form ``H`` of square matrices ``a`` (``a = Q H Qᴴ``), from
    LAPACK ``gehrd``'s reflectors; with ``calc_q`` returns ``(H, Q)``. The
    ``overwrite_a`` / ``check_finite`` flags are ignored.
    """
    (a,) = _promote_dtypes_inexact(_arr(a))
    packed, taus = _ll.hessenberg(a)
    h = jnp.triu(packed, -1)
    if not calc_q:
        return h
    return h, _hessenberg_q(packed, taus)


def _hessenberg_q(packed, taus):
    """``Q = H_0 ... H_{n-2}``, ``H_i = I - taus[i] v_i v_iᴴ`` with ``v_i`` zero
    above row ``i + 1``, one there, and ``packed[..., i + 2:, i]`` below."""
    shape = _aval(packed).shape
    n = shape[-1]
    dtype = _aval(packed).dtype_name
    q = jnp.broadcast_to(jnp.eye(n, dtype=dtype), shape)
    rows = jnp.arange(n)
    for i in reversed(range(n - 1)):
        col = packed[..., :, i]
        v = jnp.where(rows == i + 1, jnp.ones((), dtype), jnp.where(rows > i + 1, col, 0))
        vh_q = jnp.einsum("...i,...ij->...j", jnp.conj(v), q)
        q = q - taus[..., i, None, None] * v[..., :, None] * vh_q[..., None, :]
    return q


from ._linalg_schur import funm, rsf2csf, schur, sqrtm  # noqa: E402
from ._linalg_special import (  # noqa: E402
    block_diag, circulant, companion, convolution_matrix, eigh_tridiagonal, expm_frechet, fiedler,
    fiedler_companion, hadamard, hankel, helmert, hilbert, invhilbert, invpascal, leslie, pascal, polar,
    qr_multiply, solve_sylvester, toeplitz)

__all__ = ["solve_triangular", "cholesky", "cho_factor", "cho_solve", "lu", "lu_factor", "lu_solve", "expm",
           "solve", "inv", "det", "qr", "eigh", "svd", "hessenberg", "schur", "rsf2csf", "sqrtm", "funm",
           "block_diag", "circulant", "companion", "convolution_matrix", "eigh_tridiagonal", "expm_frechet",
           "fiedler", "fiedler_companion", "hadamard", "hankel", "helmert", "hilbert", "invhilbert", "invpascal",
           "leslie", "pascal", "polar", "qr_multiply", "solve_sylvester", "toeplitz"]
del _np
