"""`jax.scipy.sparse.linalg`: the Krylov solvers `cg`, `bicgstab` and
`gmres` with JAX's signatures. `A` (and the preconditioner `M`) is a matrix
or a linear function; `b` and `x0` may be pytrees of arrays. Each returns
`(x, None)`.

The iterations are `lax.while_loop`s inside `lax.custom_linear_solve`, as in
JAX: the solvers run eagerly, under `jit` and `vmap`, and are differentiated
implicitly (the derivative of `A⁻¹ b` is another solve; the iterations are
never differentiated), in forward and reverse mode."""
from ... import lax
from ... import numpy as jnp
from ...flatten_util import ravel_pytree
from ...tree_util import tree_leaves, tree_map, tree_structure
from ..._src.numpy.util import _aval


def _identity(x):
    return x


def _as_operator(A, what):
    if A is None:
        return _identity
    if callable(A):
        return A
    A = jnp.asarray(A)
    if _aval(A).ndim != 2:
        raise ValueError(f"{what} must be a function or a 2-D matrix, got shape {_aval(A).shape}")
    return lambda x: jnp.matmul(A, x, precision=lax.Precision.HIGHEST)


def _flat_problem(A, b, x0, M, name):
    """The problem on flat vectors: `(matvec, precond, b, x0, unravel)`."""
    if x0 is None:
        x0 = tree_map(lambda x: jnp.zeros_like(jnp.asarray(x)), b)
    if tree_structure(x0) != tree_structure(b):
        raise ValueError(f"x0 and b must have matching tree structure: {tree_structure(x0)} vs "
                         f"{tree_structure(b)}")
    for xl, bl in zip(tree_leaves(x0), tree_leaves(b)):
        if jnp.shape(xl) != jnp.shape(bl):
            raise ValueError(f"arrays in x0 and b must have matching shapes: {jnp.shape(xl)} vs "
                             f"{jnp.shape(bl)}")
    A = _as_operator(A, "A")
    M = _as_operator(M, "M")
    b_flat, unravel = ravel_pytree(b)
    x_flat, _ = ravel_pytree(x0)
    x_flat = x_flat.astype(b_flat.dtype)

    def flat(op):
        return lambda v: ravel_pytree(op(unravel(v)))[0].astype(b_flat.dtype)

    return flat(A), flat(M), b_flat, x_flat, unravel


def _krylov_solve(A, b, x0, M, name, iterate, symmetric=False):
    """`(x, None)` solving `A x = b` (pytrees) by `iterate(matvec, precond, rhs, x0)` on
    flat vectors, under `lax.custom_linear_solve` (its transpose: the same iteration,
    or `A` itself where `symmetric`)."""
    matvec, precond, b, x0, unravel = _flat_problem(A, b, x0, M, name)

    def solve(mv, rhs):
        return iterate(mv, precond, rhs, x0)

    transpose = {"symmetric": True} if symmetric else {"transpose_solve": solve}
    return unravel(lax.custom_linear_solve(matvec, b, solve, **transpose)), None


def _dot(a, b):
    return jnp.sum(a * b)


def _thresholds(b, tol, atol, maxiter):
    bs = _dot(b, b)
    atol2 = jnp.maximum(jnp.square(tol) * bs, jnp.square(atol))
    if maxiter is None:
        maxiter = 10 * int(_aval(b).shape[0])
    return atol2, maxiter


def cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Conjugate gradients for symmetric positive definite `A`: stops once
    `||b - A x|| <= max(tol * ||b||, atol)` or after `maxiter` iterations
    (default `10 * size(b)`)."""
    return _krylov_solve(A, b, x0, M, "cg", lambda mv, pc, rhs, x0: _cg_iterations(
        mv, pc, rhs, x0, tol, atol, maxiter), symmetric=True)


def _cg_iterations(matvec, precond, b, x0, tol, atol, maxiter):
    atol2, maxiter = _thresholds(b, tol, atol, maxiter)
    r0 = b - matvec(x0)
    z0 = precond(r0)
    state = (x0, r0, z0, z0, _dot(r0, z0), jnp.asarray(0, "int32"))

    def cond(s):
        _, r, _, _, _, k = s
        return (_dot(r, r) > atol2) & (k < maxiter)

    def body(s):
        x, r, z, p, gamma, k = s
        ap = matvec(p)
        alpha = gamma / _dot(p, ap)
        x = x + alpha * p
        r = r - alpha * ap
        z = precond(r)
        gamma_new = _dot(r, z)
        p = z + (gamma_new / gamma) * p
        return x, r, z, p, gamma_new, k + 1

    return lax.while_loop(cond, body, state)[0]


def bicgstab(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """BiCGSTAB for general square `A`, with the stopping rule of `cg`; a
    breakdown (`rho` or `omega` zero) ends the iteration."""
    return _krylov_solve(A, b, x0, M, "bicgstab", lambda mv, pc, rhs, x0: _bicgstab_iterations(
        mv, pc, rhs, x0, tol, atol, maxiter))


def _bicgstab_iterations(matvec, precond, b, x0, tol, atol, maxiter):
    atol2, maxiter = _thresholds(b, tol, atol, maxiter)
    r0 = b - matvec(x0)
    one = jnp.ones((), _aval(b).dtype_name)
    zero = jnp.zeros_like(r0)
    # state: x, r, rhat, p, v, rho, alpha, omega, k (k < 0: breakdown)
    state = (x0, r0, r0, zero, zero, one, one, one, jnp.asarray(0, "int32"))

    def cond(s):
        r, k = s[1], s[-1]
        return (_dot(r, r) > atol2) & (k < maxiter) & (k >= 0)

    def body(s):
        x, r, rhat, p, v, rho, alpha, omega, k = s
        rho_new = _dot(rhat, r)
        beta = (rho_new / rho) * (alpha / omega)
        p = r + beta * (p - omega * v)
        phat = precond(p)
        v = matvec(phat)
        alpha = rho_new / _dot(rhat, v)
        s_vec = r - alpha * v
        shat = precond(s_vec)
        t = matvec(shat)
        omega_new = _dot(t, s_vec) / _dot(t, t)
        x_new = x + alpha * phat + omega_new * shat
        r_new = s_vec - omega_new * t
        # an s already small enough: stop after the half step
        half_done = _dot(s_vec, s_vec) <= atol2
        x_new = jnp.where(half_done, x + alpha * phat, x_new)
        r_new = jnp.where(half_done, s_vec, r_new)
        broke = (rho_new == 0) | (omega_new == 0)
        k_new = jnp.where(broke & ~half_done, -10, k + 1)
        return x_new, r_new, rhat, p, v, rho_new, alpha, omega_new, k_new

    return lax.while_loop(cond, body, state)[0]


def gmres(A, b, x0=None, *, tol=1e-5, atol=0.0, restart=20, maxiter=None, M=None, solve_method="batched"):
    """Restarted GMRES with left preconditioning by `M`: Arnoldi with
    re-orthogonalized Gram-Schmidt over `restart` vectors, then the
    least-squares problem on the Hessenberg matrix; stops once the
    preconditioned residual `||M (b - A x)||` meets `max(tol * ||b||, atol)`
    (as JAX) or after `maxiter` restarts (default `10 * size(b)`).
    `solve_method` ('batched' or 'incremental') only selects the order of
    the same arithmetic in JAX; both give this method's iterates here."""
    if solve_method not in ("incremental", "batched"):
        raise ValueError(f"invalid solve_method {solve_method!r}, must be either 'incremental' or "
                         "'batched'")
    return _krylov_solve(A, b, x0, M, "gmres", lambda mv, pc, rhs, x0: _gmres_iterations(
        mv, pc, rhs, x0, tol, atol, restart, maxiter))


def _gmres_iterations(matvec, precond, b, x0, tol, atol, restart, maxiter):
    n = int(_aval(b).shape[0])
    restart = max(1, min(int(restart), n))
    if maxiter is None:
        maxiter = 10 * n
    dt = _aval(b).dtype_name
    atol_ = jnp.maximum(tol * jnp.sqrt(_dot(b, b)), atol)

    def residual(x):
        r = precond(b - matvec(x))
        return r, jnp.sqrt(_dot(r, r))

    r0, rn0 = residual(x0)

    def cond(s):
        _, _, rn, k = s
        return (rn > atol_) & (k < maxiter)

    def body(s):
        x, r, rn, k = s
        safe = jnp.where(rn > 0, rn, 1.0)
        V = jnp.zeros((restart + 1, n), dt).at[0].set(r / safe)
        H = jnp.zeros((restart + 1, restart), dt)

        def arnoldi(j, vh):
            V, H = vh
            w = precond(matvec(V[j]))
            mask = (jnp.arange(restart + 1) <= j).astype(dt)
            h = jnp.matmul(V, w) * mask
            w = w - jnp.matmul(h, V)
            h2 = jnp.matmul(V, w) * mask  # second Gram-Schmidt pass
            w = w - jnp.matmul(h2, V)
            h = h + h2
            norm = jnp.sqrt(_dot(w, w))
            h = h.at[j + 1].set(norm)
            V = V.at[j + 1].set(jnp.where(norm > 0, w / jnp.where(norm > 0, norm, 1.0), 0.0))
            H = H.at[:, j].set(h)
            return V, H

        V, H = lax.fori_loop(0, restart, arnoldi, (V, H))
        rhs = jnp.zeros((restart + 1,), dt).at[0].set(rn)
        y = jnp.linalg.lstsq(H, rhs)[0]
        x = x + jnp.matmul(y, V[:restart])
        r, rn = residual(x)
        return x, r, rn, k + 1

    return lax.while_loop(cond, body, (x0, r0, rn0, jnp.asarray(0, "int32")))[0]


__all__ = ["cg", "gmres", "bicgstab"]
