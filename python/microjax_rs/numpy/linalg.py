"""`jax.numpy.linalg`: norms, products, and the decompositions built on the
`jax.lax.linalg` primitives (cholesky, qr, eigh, svd, LU-based solve / inv /
det / slogdet, SVD-based pinv / lstsq / matrix_rank, eig / eigvals). The tensor
solvers raise NotImplementedError.

This module only re-exports; the implementation is `microjax_rs._src.numpy.linalg`."""
from .. import lax  # noqa: F401  (a name this namespace has always exposed)
from .._src.numpy.linalg import (  # noqa: F401
    EighResult, QRResult, SVDResult, SlogdetResult, cholesky, cross, det, diagonal, eig, eigh,
    eigvals, eigvalsh, inv, lstsq, matmul, matrix_norm, matrix_power, matrix_rank, matrix_transpose,
    multi_dot, norm, outer, pinv, qr, slogdet, solve, svd, svdvals, tensordot, tensorinv,
    tensorsolve, trace, vecdot, vector_norm,
)
from .._src.numpy.linalg import cond  # noqa: F401,E402
