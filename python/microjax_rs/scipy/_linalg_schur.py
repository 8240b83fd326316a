"""The Schur-based functions of `jax.scipy.linalg`: `schur`, `rsf2csf`,
`sqrtm` and `funm`, on `lax.linalg.schur` (the real Schur form of a real
matrix, or the complex Schur form). The triangular recurrences (Björck–Hammarling
square root, Parlett's recurrence of Golub & Van Loan's algorithm 11.1.1) run
as Python loops over the static matrix size."""
import numpy as _np

from .. import lax
from .. import numpy as jnp
from ..lax import linalg as _ll
from .._src.numpy.util import _arr, _aval, _promote_dtypes_inexact


def _complex_name(name):
    return "complex128" if name in ("float64", "complex128") else "complex64"


def _is_complex(x):
    return _aval(x).dtype_name.startswith("complex")


def schur(a, output="real"):
    """Schur decomposition ``a = Z T Zᴴ``: ``(T, Z)``. ``output='complex'`` (or a
    complex ``a``) gives the complex form, ``T`` upper triangular and ``Z``
    unitary; ``output='real'`` of a real ``a`` the real Schur form, ``T``
    quasi-upper-triangular (a standardized 2x2 block per conjugate eigenvalue
    pair, as LAPACK's ``gees``) and ``Z`` orthogonal. An integer ``a`` is a
    TypeError with ``output='real'`` as in JAX."""
    if output not in ("real", "complex"):
        raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got output={output!r}.")
    a = _arr(a)
    if output == "complex":
        (a,) = _promote_dtypes_inexact(a)
        if not _is_complex(a):
            a = lax.convert_element_type(a, _complex_name(_aval(a).dtype_name))
    t, z = _ll.schur(a)
    return t, z


def _givens_step(t, z, m, n, eps):
    """The rotation of rows / columns m-1, m that triangularizes the 2x2 block
    ending at ``t[m, m]`` (applied where its subdiagonal entry is not negligible)."""
    block = t[m - 1:m + 1, m - 1:m + 1]
    e = jnp.linalg.eigvals(block)
    # LAPACK's order: of a conjugate pair, the eigenvalue with positive imaginary part
    mu0 = jnp.where(jnp.imag(e[0]) >= jnp.imag(e[1]), e[0], e[1]) - t[m, m]
    r = jnp.sqrt(jnp.abs(mu0) ** 2 + jnp.abs(t[m, m - 1]) ** 2).astype(t.dtype)
    c = mu0 / r
    s = t[m, m - 1] / r
    g = jnp.stack([jnp.stack([jnp.conj(c), s]), jnp.stack([-s, c])])
    cols = jnp.arange(n) >= m - 1
    rows2 = t[m - 1:m + 1]
    t_new = t.at[m - 1:m + 1].set(jnp.where(cols, g @ jnp.where(cols, rows2, 0), rows2))
    row_mask = (jnp.arange(n) < m + 1)[:, None]
    cols2 = t_new[:, m - 1:m + 1]
    gh = jnp.conj(g).T
    t_new = t_new.at[:, m - 1:m + 1].set(jnp.where(row_mask, jnp.where(row_mask, cols2, 0) @ gh, cols2))
    z_new = z.at[:, m - 1:m + 1].set(z[:, m - 1:m + 1] @ gh)
    keep = jnp.abs(t[m, m - 1]) > eps * (jnp.abs(t[m - 1, m - 1]) + jnp.abs(t[m, m]))
    t = jnp.where(keep, t_new, t)
    z = jnp.where(keep, z_new, z)
    return t.at[m, m - 1].set(0), z


def _rsf2csf_2d(t, z):
    n = _aval(t).shape[-1]
    eps = float(jnp.finfo(_aval(t).dtype_name).eps)
    for m in range(n - 1, 0, -1):
        t, z = _givens_step(t, z, m, n, eps)
    return t, z


def rsf2csf(T, Z, check_finite=True):
    """The complex Schur form ``(T, Z)`` of a real Schur form ``(T, Z)``
    (``scipy.linalg.rsf2csf``): Givens rotations triangularize each 2x2 block."""
    t, z = _arr(T), _arr(Z)
    ts, zs = _aval(t).shape, _aval(z).shape
    if len(ts) < 2 or ts[-1] != ts[-2]:
        raise ValueError("Input 'T' must be square.")
    if len(zs) < 2 or zs[-1] != zs[-2]:
        raise ValueError("Input 'Z' must be square.")
    if ts[-1] != zs[-1]:
        raise ValueError(f"Input array shapes must match: Z: {tuple(zs)} vs. T: {tuple(ts)}")
    t, z = _promote_dtypes_inexact(t, z)
    name = _complex_name(_aval(t).dtype_name)
    t, z = (lax.convert_element_type(x, name) for x in (t, z))
    return jnp.vectorize(_rsf2csf_2d, signature="(n,n),(n,n)->(n,n),(n,n)")(t, z)


def _sqrtm_triu(t):
    n = _aval(t).shape[-1]
    d = jnp.sqrt(jnp.diagonal(t))
    u = jnp.diag(d)
    for j in range(n):
        for i in range(j - 1, -1, -1):
            s = jnp.sum(u[i, i + 1:j] * u[i + 1:j, j])
            val = jnp.where(t[i, j] == s, 0, (t[i, j] - s) / (d[i] + d[j]))
            u = u.at[i, j].set(val)
    return u


def sqrtm(A, blocksize=1):
    """The principal square root of the square matrix ``A`` (complex result), from
    its complex Schur form (Björck & Hammarling)."""
    if blocksize > 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    a = _arr(A)
    if _aval(a).ndim != 2 or _aval(a).shape[0] != _aval(a).shape[1]:
        raise ValueError("The input to schur must be a square matrix. Got shape "
                         f"{tuple(_aval(a).shape)}.")
    t, z = schur(a, output="complex")
    return z @ _sqrtm_triu(t) @ jnp.conj(z).T


def _parlett(f, t):
    """Golub & Van Loan's algorithm 11.1.1 on upper triangular ``t``; returns
    ``(F, smallest |t[j, j] - t[i, i]|)``."""
    n = _aval(t).shape[-1]
    minden = jnp.abs(t[0, 0])
    for p in range(1, n):
        for i in range(n - p):
            j = i + p
            s = t[i, j] * (f[j, j] - f[i, i])
            if j > i + 1:
                s = s + jnp.sum(t[i, i + 1:j] * f[i + 1:j, j]) - jnp.sum(f[i, i + 1:j] * t[i + 1:j, j])
            den = t[j, j] - t[i, i]
            s = jnp.where(den != 0, s / jnp.where(den != 0, den, 1), s)
            f = f.at[i, j].set(s)
            minden = jnp.minimum(minden, jnp.abs(den))
    return f, minden


def funm(A, func, disp=True):
    """The matrix function ``func(A)`` of the square matrix ``A`` (complex result)
    by Parlett's recurrence on the complex Schur form; ``func`` is applied to the
    eigenvalues. With ``disp=False`` returns ``(F, errest)``."""
    a = _arr(A)
    if _aval(a).ndim != 2 or _aval(a).shape[0] != _aval(a).shape[1]:
        raise ValueError("expected square array_like input")
    t, z = schur(a, output="complex")
    f = jnp.diag(func(jnp.diagonal(t))).astype(_aval(t).dtype_name)
    f, minden = _parlett(f, t)
    f = z @ f @ jnp.conj(z).T
    if disp:
        return f
    tol = float(_np.finfo(_np.float32 if _aval(t).dtype_name == "complex64" else _np.float64).eps)
    minden = jnp.where(minden == 0.0, tol, minden)
    err = jnp.where(jnp.any(jnp.isinf(f)), _np.inf,
                    jnp.minimum(1, jnp.maximum(tol, (tol / minden) * jnp.linalg.norm(jnp.triu(t, 1), 1))))
    return f, err
