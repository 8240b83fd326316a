"""`jax.lax.linalg`: wrappers of the linear-algebra primitives (`cholesky`,
`triangular_solve`, `lu`, `qr`, `eigh`, `svd`) with JAX's signatures and
output conventions. Every operand is a stack of matrices `[..., m, n]` of
float32, float64, complex64 or complex128 (`eigh` and `svd` return real
eigenvalues / singular values for complex operands, as JAX)."""
import enum as _enum

import numpy as _np

from . import (_P, _arr, _aval, add, mul, transpose, expand_dims, squeeze, broadcasted_iota, eq,
               select_n, convert_element_type, gather, GatherDimensionNumbers)

cholesky_p = _P["cholesky"]
triangular_solve_p = _P["triangular_solve"]
lu_p = _P["lu"]
qr_p = _P["qr"]
eigh_p = _P["eigh"]
svd_p = _P["svd"]
eig_p = _P["eig"]
hessenberg_p = _P["hessenberg"]
schur_p = _P["schur"]


def _matrix(x, name, square=False):
    x = _arr(x)
    av = _aval(x)
    if av.ndim < 2 or (square and av.shape[-1] != av.shape[-2]):
        what = "square matrices" if square else "matrices"
        raise ValueError(f"{name} requires {what} in its last two dimensions "
                         f"(shape [..., {'n, n' if square else 'm, n'}]), got shape {av.shape}")
    if av.dtype_name not in ("float32", "float64", "complex64", "complex128"):
        raise TypeError(f"{name} requires a float32, float64, complex64 or complex128 operand, "
                        f"got {av.dtype_name}")
    return x, av


def _swap_last(x):
    nd = _aval(x).ndim
    perm = list(range(nd))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return transpose(x, perm)


def _adjoint(x):
    """The conjugate transpose over the last two dimensions (the transpose for real `x`)."""
    from . import conj
    xt = _swap_last(x)
    return conj(xt) if _aval(x).dtype_name.startswith("complex") else xt


def symmetrize(x):
    """`(x + xᴴ) / 2` over the last two dimensions (`xᵀ` for real `x`)."""
    return mul(add(x, _adjoint(x)), 0.5)


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
    if m < k:
        raise ValueError(f"Output permutation size {m} has to exceed the trailing dimension of the pivots. "
                         f"Got pivots size {k}")
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


class EigImplementation(_enum.Enum):
    """Which `eig` implementation runs (JAX's enum; microjax_rs always computes on the CPU)."""
    LAPACK = "lapack"
    MAGMA = "magma"
    CUSOLVER = "cusolver"


def _square_inexact(x, name, shape_msg):
    x = _arr(x)
    av = _aval(x)
    if av.ndim < 2 or av.shape[-1] != av.shape[-2]:
        raise ValueError(shape_msg.format(shape=tuple(av.shape)))
    if av.dtype_name not in ("float32", "float64", "complex64", "complex128"):
        raise TypeError(f"{name} does not accept dtype {av.dtype_name} at position 0. Accepted dtypes at "
                        "position 0 are subtypes of floating, complexfloating.")
    return x


def eig(x, *, compute_left_eigenvectors=True, compute_right_eigenvectors=True, enable_eigvec_derivs=False,
        implementation=None, use_magma=None):
    """Eigendecomposition of general square matrices: ``[w, vl, vr]`` (the
    eigenvectors present as requested), complex for any input.

    Eigenvectors are the columns of ``vl`` / ``vr``, normalized as LAPACK's
    ``geev`` (unit 2-norm, largest component real). The eigenvalue order is
    the solver's own (compare as sets). Differentiable in the eigenvalues when
    no eigenvectors are computed; eigenvector derivatives raise
    NotImplementedError (``enable_eigvec_derivs`` is accepted but not
    supported). ``implementation`` / ``use_magma`` are accepted and ignored
    (the CPU computes it).
    """
    x = _square_inexact(x, "eig", "The input to eig must be a square matrix. Got shape {shape}.")
    outs = eig_p.bind(x, compute_left_eigenvectors=bool(compute_left_eigenvectors),
                      compute_right_eigenvectors=bool(compute_right_eigenvectors),
                      enable_eigvec_derivs=bool(enable_eigvec_derivs), implementation=None)
    return list(outs)


def hessenberg(a):
    """Reduction of square matrices to upper Hessenberg form, LAPACK ``gehrd``'s
    layout: ``(a_out, taus)`` with the Hessenberg matrix on and above the first
    subdiagonal of ``a_out``, the Householder vectors below it, and their ``n - 1``
    scales ``taus`` (``Q = H_0 ... H_{n-2}``, ``H_i = I - taus[i] v_i v_iᴴ``)."""
    a = _square_inexact(a, "hessenberg",
                        "Argument to Hessenberg reduction must have shape [..., n, n], got shape {shape}")
    out, taus = hessenberg_p.bind(a)
    return out, taus


def schur(x, *, compute_schur_vectors=True, sort_eig_vals=False, select_callable=None):
    """Schur decomposition of square matrices: ``(t, vs)`` with ``x = vs t vsᴴ``
    (``(t,)`` without ``compute_schur_vectors``). A complex ``x`` gives an upper
    triangular ``t`` and unitary ``vs``; a real ``x`` its real Schur form as
    LAPACK's ``gees``: ``t`` quasi-upper-triangular with a standardized 2x2 block
    (equal diagonal entries, off-diagonal entries of opposite signs) for each
    conjugate eigenvalue pair, ``vs`` orthogonal. The eigenvalue order along the
    diagonal is the QR iteration's own, as LAPACK's. ``sort_eig_vals`` raises
    NotImplementedError as JAX's CPU path does; ``select_callable`` is ignored
    without it (as in JAX).
    """
    x = _square_inexact(x, "schur", "The input to schur must be a square matrix. Got shape {shape}.")
    if sort_eig_vals:
        raise NotImplementedError("The sort feature of LAPACK's gees routine is not implemented.")
    outs = schur_p.bind(x, compute_schur_vectors=bool(compute_schur_vectors), select_callable=None,
                        sort_eig_vals=False)
    return tuple(outs)


from ._linalg_structured import (  # noqa: E402
    EighImplementation, SvdAlgorithm, cholesky_update, householder_product, ormqr, qdwh, symmetric_product,
    tridiagonal, tridiagonal_solve,
)
from ._composite import composite_primitive as _composite  # noqa: E402

# JAX's primitive objects of the structured routines, each computing the
# function above (see `_composite`), with the rules JAX registers: all batch
# except cholesky_update; only tridiagonal_solve differentiates.
cholesky_update_p = _composite("cholesky_update", cholesky_update, differentiable=False, batchable=False)
householder_product_p = _composite("householder_product", householder_product, differentiable=False)
lu_pivots_to_permutation_p = _composite("lu_pivots_to_permutation", lu_pivots_to_permutation,
                                        differentiable=False)
ormqr_p = _composite("ormqr", ormqr, differentiable=False)
symmetric_product_p = _composite("symmetric_product", symmetric_product, differentiable=False)
tridiagonal_p = _composite("tridiagonal", lambda a, *, lower=True: list(tridiagonal(a, lower=lower)),
                           multiple_results=True, differentiable=False)
tridiagonal_solve_p = _composite("tridiagonal_solve", tridiagonal_solve)

__all__ = ["EigImplementation", "eig", "eig_p", "hessenberg", "hessenberg_p", "schur", "schur_p", "EighImplementation", "SvdAlgorithm", "cholesky_update", "householder_product", "ormqr", "qdwh",
           "symmetric_product", "tridiagonal", "tridiagonal_solve",
           "cholesky", "triangular_solve", "lu", "lu_pivots_to_permutation", "qr", "eigh", "svd",
           "symmetrize", "cholesky_p", "triangular_solve_p", "lu_p", "qr_p", "eigh_p", "svd_p",
           "cholesky_update_p", "householder_product_p", "lu_pivots_to_permutation_p", "ormqr_p",
           "symmetric_product_p", "tridiagonal_p", "tridiagonal_solve_p"]
del _np
