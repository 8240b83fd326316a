"""`jax.lax.linalg`: wrappers of the linear-algebra primitives (`cholesky`,
`triangular_solve`, `lu`, `qr`, `eigh`, `svd`) with JAX's signatures and
output conventions. Every operand is a stack of matrices `[..., m, n]` of
float32 or float64."""
import numpy as _np

from . import (_P, _arr, _aval, add, mul, transpose, expand_dims, squeeze, broadcasted_iota, eq,
               select_n, convert_element_type, gather, GatherDimensionNumbers)

cholesky_p = _P["cholesky"]
triangular_solve_p = _P["triangular_solve"]
lu_p = _P["lu"]
qr_p = _P["qr"]
eigh_p = _P["eigh"]
svd_p = _P["svd"]


def _matrix(x, name, square=False):
    x = _arr(x)
    av = _aval(x)
    if av.ndim < 2 or (square and av.shape[-1] != av.shape[-2]):
        what = "square matrices" if square else "matrices"
        raise ValueError(f"{name} requires {what} in its last two dimensions "
                         f"(shape [..., {'n, n' if square else 'm, n'}]), got shape {av.shape}")
    if av.dtype_name not in ("float32", "float64"):
        raise TypeError(f"{name} requires a float32 or float64 operand, got {av.dtype_name}")
    return x, av


def _swap_last(x):
    nd = _aval(x).ndim
    perm = list(range(nd))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return transpose(x, perm)


def symmetrize(x):
    """`(x + xᵀ) / 2` over the last two dimensions."""
    return mul(add(x, _swap_last(x)), 0.5)


def cholesky(x, *, symmetrize_input=True):
    """Lower Cholesky factor; NaNs where `x` is not positive definite."""
    x, _ = _matrix(x, "cholesky", square=True)
    if symmetrize_input:
        x = symmetrize(x)
    return cholesky_p.bind(x)


def triangular_solve(a, b, *, left_side=False, lower=False, transpose_a=False, conjugate_a=False,
                     unit_diagonal=False):
    """Solves `op(a) x = b` (left_side) or `x op(a) = b` for triangular `a`;
    `b` may be a stack of vectors when it has one dimension fewer than `a`."""
    a, av = _matrix(a, "triangular_solve", square=True)
    b = _arr(b)
    bv = _aval(b)
    singleton = bv.ndim == av.ndim - 1
    if singleton:
        b = expand_dims(b, (bv.ndim if left_side else bv.ndim - 1,))
    out = triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower),
                                  transpose_a=bool(transpose_a), conjugate_a=bool(conjugate_a),
                                  unit_diagonal=bool(unit_diagonal))
    if singleton:
        out = squeeze(out, (av.ndim - 1,) if left_side else (av.ndim - 2,))
    return out


def lu(x):
    """`(lu, pivots, permutation)`: `x[..., permutation, :] = L @ U` with the
    unit lower `L` and upper `U` packed in `lu`; int32 pivots (LAPACK's row
    swaps) and permutation."""
    x, _ = _matrix(x, "lu")
    lu_, pivots, perm = lu_p.bind(x)
    return lu_, pivots, perm


def lu_pivots_to_permutation(pivots, permutation_size):
    """The permutation that LAPACK's sequential row swaps `pivots` produce."""
    pivots = _arr(pivots)
    pv = _aval(pivots)
    k = pv.shape[-1]
    m = int(permutation_size)
    lead = tuple(pv.shape[:-1])
    shape = lead + (m,)
    nd = len(shape)
    perm = broadcasted_iota("int32", shape, nd - 1)
    pivots = convert_element_type(pivots, "int32")
    iota = broadcasted_iota("int32", shape, nd - 1)
    for i in range(k):
        j = _slice_last(pivots, i)                      # [...]
        jb = _bcast_last(j, shape)
        pi = _bcast_last(_slice_last(perm, i), shape)
        pj = _take_last(perm, j, shape)
        perm = select_n(eq(iota, i), select_n(eq(iota, jb), perm, pi), pj)
    return perm


def _slice_last(x, i):
    from . import slice_in_dim
    av = _aval(x)
    return squeeze(slice_in_dim(x, i, i + 1, axis=av.ndim - 1), (av.ndim - 1,))


def _bcast_last(x, shape):
    from . import broadcast_in_dim
    return broadcast_in_dim(x, shape, tuple(range(len(shape) - 1)))


def _take_last(x, idx, shape):
    """`x[..., idx]` for a per-row index `idx[...]`, broadcast to `shape`."""
    nd = len(shape)
    lead = tuple(range(nd - 1))
    dnums = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(nd - 1,), start_index_map=(nd - 1,),
                                   operand_batching_dims=lead, start_indices_batching_dims=lead)
    got = gather(x, expand_dims(idx, (nd - 1,)), dnums, (1,) * nd, mode="clip")
    return _bcast_last(got, shape)


def qr(x, *, pivoting=False, full_matrices=True, use_magma=None):
    """`(q, r)` with `x = q @ r`; `full_matrices=False` gives the reduced factors."""
    if pivoting:
        raise NotImplementedError("qr(pivoting=True) is not supported")
    x, _ = _matrix(x, "qr")
    q, r = qr_p.bind(x, full_matrices=bool(full_matrices))
    return q, r


def eigh(x, *, lower=True, symmetrize_input=True, sort_eigenvalues=True, subset_by_index=None,
         implementation=None):
    """`(v, w)`: eigenvectors in the columns of `v`, eigenvalues `w` ascending."""
    if subset_by_index is not None:
        raise NotImplementedError("eigh(subset_by_index=...) is not supported")
    x, _ = _matrix(x, "eigh", square=True)
    if symmetrize_input:
        x = symmetrize(x)
    v, w = eigh_p.bind(x, lower=bool(lower), sort_eigenvalues=bool(sort_eigenvalues))
    return v, w


def svd(x, *, full_matrices=True, compute_uv=True, subset_by_index=None, algorithm=None):
    """`(u, s, vh)` with singular values descending, or `s` alone."""
    if subset_by_index is not None:
        raise NotImplementedError("svd(subset_by_index=...) is not supported")
    x, _ = _matrix(x, "svd")
    outs = svd_p.bind(x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv))
    if not compute_uv:
        return outs[0]
    s, u, vt = outs
    return u, s, vt


from ._linalg_structured import (  # noqa: E402
    EighImplementation, SvdAlgorithm, cholesky_update, householder_product, ormqr, qdwh, symmetric_product,
    tridiagonal, tridiagonal_solve,
)

__all__ = ["EighImplementation", "SvdAlgorithm", "cholesky_update", "householder_product", "ormqr", "qdwh",
           "symmetric_product", "tridiagonal", "tridiagonal_solve",
           "cholesky", "triangular_solve", "lu", "lu_pivots_to_permutation", "qr", "eigh", "svd",
           "symmetrize", "cholesky_p", "triangular_solve_p", "lu_p", "qr_p", "eigh_p", "svd_p"]
del _np
