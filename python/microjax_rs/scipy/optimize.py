"""`jax.scipy.optimize.minimize` with `method='BFGS'`: quasi-Newton steps
along `-H g` with an inverse-Hessian BFGS update, each step's length from a
strong-Wolfe line search (bracketing, then zooming by safeguarded cubic /
quadratic interpolation, with JAX's failure thresholds). Everything is a `lax.while_loop`, so `minimize` runs under
`jit` and `vmap`."""
from typing import Any, NamedTuple

import numpy as _np

from .. import lax
from .. import numpy as jnp
from .._src.numpy.util import _aval


class OptimizeResults(NamedTuple):
    """The result of `minimize`.

    x: the solution; success: whether the gradient norm fell below `gtol`
    without a line-search failure; status: 0 converged, 1 maximum number of
    BFGS iterations, 3 zoom failed, 5 maximum line-search iterations, -1
    undefined; fun / jac: the value and gradient at `x`; hess_inv: the final
    inverse-Hessian estimate; nfev / njev: function and gradient evaluations;
    nit: iterations."""
    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


_C1, _C2 = 1e-4, 0.9


def _cubic_min(a, fa, da, b, fb, c, fc):
    """Minimizer of the cubic through (a, fa) with slope da, (b, fb), (c, fc)."""
    db, dc = b - a, c - a
    denom = (db * dc) ** 2 * (db - dc)
    r1 = fb - fa - da * db
    r2 = fc - fa - da * dc
    A = (dc ** 2 * r1 - db ** 2 * r2) / denom
    B = (-(dc ** 3) * r1 + db ** 3 * r2) / denom
    return a + (-B + jnp.sqrt(B * B - 3.0 * A * da)) / (3.0 * A)


def _quad_min(a, fa, da, b, fb):
    """Minimizer of the quadratic through (a, fa) with slope da and (b, fb)."""
    db = b - a
    B = (fb - fa - da * db) / (db * db)
    return a - da / (2.0 * B)


def _zoom(phi, armijo_fails, curvature_ok, lo, f_lo, d_lo, hi, f_hi, g0, skip):
    """Nocedal & Wright's zoom (Algorithm 3.6): shrink [lo, hi] by cubic,
    else quadratic, else bisection steps (interpolants kept 20% / 10% of the
    interval away from its ends) until a point meets the strong Wolfe
    conditions. As in JAX, the search fails once `hi - lo` (signed) is at
    most 1e-5 (1e-10 in 64-bit) or after 30 steps; an unsuccessful search
    leaves step 1."""
    dt = _aval(f_lo).dtype_name
    small = 1e-10 if _np.dtype(dt).itemsize >= 8 else 1e-5
    # (j, done, failed, lo, f_lo, d_lo, hi, f_hi, rec, f_rec, a*, f*, g*, nfev)
    init = (jnp.asarray(0, "int32"), jnp.asarray(False), jnp.asarray(False), lo, f_lo, d_lo, hi, f_hi,
            (lo + hi) / 2, (f_lo + f_hi) / 2, jnp.ones((), dt), f_lo, g0, jnp.asarray(0, "int32"))

    def cond(z):
        return (~z[1]) & (~z[2]) & (~skip)

    def body(z):
        j, done, failed, lo, f_lo, d_lo, hi, f_hi, rec, f_rec, a_star, f_star, g_star, nfev = z
        width = hi - lo
        left, right = jnp.minimum(lo, hi), jnp.maximum(lo, hi)
        failed = failed | (width <= small)
        a_c = _cubic_min(lo, f_lo, d_lo, hi, f_hi, rec, f_rec)
        use_c = (j > 0) & (a_c > left + 0.2 * width) & (a_c < right - 0.2 * width)
        a_q = _quad_min(lo, f_lo, d_lo, hi, f_hi)
        use_q = ~use_c & (a_q > left + 0.1 * width) & (a_q < right - 0.1 * width)
        a_j = jnp.where(use_c, a_c, jnp.where(use_q, a_q, (lo + hi) / 2))
        f_j, g_j, d_j = phi(a_j)
        hi_to_j = armijo_fails(a_j, f_j) | (f_j >= f_lo)
        hit = curvature_ok(d_j) & ~hi_to_j
        hi_to_lo = (d_j * width >= 0) & ~hi_to_j & ~hit
        lo_to_j = ~hi_to_j & ~hit
        # the new interval and the point remembered for the next cubic
        n_rec = jnp.where(hi_to_j | hi_to_lo, hi, jnp.where(lo_to_j, lo, rec))
        n_frec = jnp.where(hi_to_j | hi_to_lo, f_hi, jnp.where(lo_to_j, f_lo, f_rec))
        n_hi = jnp.where(hi_to_j, a_j, jnp.where(hi_to_lo, lo, hi))
        n_fhi = jnp.where(hi_to_j, f_j, jnp.where(hi_to_lo, f_lo, f_hi))
        n_lo = jnp.where(lo_to_j, a_j, lo)
        n_flo = jnp.where(lo_to_j, f_j, f_lo)
        n_dlo = jnp.where(lo_to_j, d_j, d_lo)
        a_star = jnp.where(hit, a_j, a_star)
        f_star = jnp.where(hit, f_j, f_star)
        g_star = jnp.where(hit, g_j, g_star)
        failed = failed | (j + 1 >= 30)
        return (j + 1, done | hit, failed, n_lo, n_flo, n_dlo, n_hi, n_fhi, n_rec, n_frec, a_star, f_star,
                g_star, nfev + 1)

    z = lax.while_loop(cond, body, init)
    return z[10], z[11], z[12], z[2], z[13]


def _line_search(value_and_grad, xk, pk, f0, g0, old_old_fval, maxiter):
    """A step length with f(x + a p) <= f0 + c1 a f0'(0) and |f'(a)| <= c2
    |f'(0)| (strong Wolfe; Nocedal & Wright's Algorithm 3.5, doubling the
    trial step). Returns (a, f, g, failed, status, nfev)."""
    dt = _aval(xk).dtype_name
    dphi0 = jnp.dot(g0, pk, precision=lax.Precision.HIGHEST)
    start = 1.01 * 2 * (f0 - old_old_fval) / dphi0
    start = jnp.where(start > 1, 1.0, start).astype(dt)

    def phi(a):
        f, g = value_and_grad(xk + a * pk)
        return f, g, jnp.dot(g, pk, precision=lax.Precision.HIGHEST)

    def armijo_fails(a, f):
        return f > f0 + _C1 * a * dphi0

    def curvature_ok(d):
        return jnp.abs(d) <= -_C2 * dphi0

    zero = jnp.zeros((), dt)
    # (i, done, failed, a_prev, f_prev, d_prev, a*, f*, g*, nfev)
    init = (jnp.asarray(1, "int32"), jnp.asarray(False), jnp.asarray(False), zero, f0, dphi0, zero, f0, g0,
            jnp.asarray(0, "int32"))

    def cond(s):
        return (~s[1]) & (s[0] <= maxiter) & (~s[2])

    def body(s):
        i, done, failed, a_prev, f_prev, d_prev, a_star, f_star, g_star, nfev = s
        a_i = jnp.where(i == 1, start, 2 * a_prev)
        f_i, g_i, d_i = phi(a_i)
        zoom1 = armijo_fails(a_i, f_i) | ((f_i >= f_prev) & (i > 1))
        take_i = curvature_ok(d_i) & ~zoom1
        zoom2 = (d_i >= 0) & ~zoom1 & ~take_i
        lo = jnp.where(zoom1, a_prev, a_i)
        f_lo = jnp.where(zoom1, f_prev, f_i)
        d_lo = jnp.where(zoom1, d_prev, d_i)
        hi = jnp.where(zoom1, a_i, a_prev)
        f_hi = jnp.where(zoom1, f_i, f_prev)
        za, zf, zg, zfailed, zn = _zoom(phi, armijo_fails, curvature_ok, lo, f_lo, d_lo, hi, f_hi, g0,
                                        ~(zoom1 | zoom2))
        zoomed = zoom1 | zoom2
        a_star = jnp.where(zoomed, za, jnp.where(take_i, a_i, a_star))
        f_star = jnp.where(zoomed, zf, jnp.where(take_i, f_i, f_star))
        g_star = jnp.where(zoomed, zg, jnp.where(take_i, g_i, g_star))
        return (i + 1, done | zoomed | take_i, failed | (zoomed & zfailed), a_i, f_i, d_i, a_star, f_star,
                g_star, nfev + 1 + zn)

    i, done, failed, _, _, _, a_star, f_star, g_star, nfev = lax.while_loop(cond, body, init)
    status = jnp.where(failed, 1, jnp.where(i > maxiter, 3, 0)).astype("int32")
    if _np.dtype(dt).itemsize < 8:
        # keep tiny steps from stalling the iteration in single precision
        a_star = jnp.where(jnp.abs(a_star) < 1e-8, jnp.sign(a_star) * 1e-8, a_star)
    return a_star, f_star, g_star, failed | ~done, status, nfev


def _minimize_bfgs(fun, x0, maxiter=None, norm=_np.inf, gtol=1e-5, line_search_maxiter=10):
    from .. import value_and_grad

    vg = value_and_grad(fun)
    if maxiter is None:
        maxiter = _np.size(x0) * 200
    d = _aval(x0).shape[0]
    dt = _aval(x0).dtype_name
    f0, g0 = vg(x0)
    i32 = "int32"
    # x, f, g, H, old_old_fval, k, nfev, ngev, converged, failed, ls_status
    state = (x0, f0, g0, jnp.eye(d, dtype=dt), f0 + jnp.linalg.norm(g0) / 2, jnp.asarray(0, i32),
             jnp.asarray(1, i32), jnp.asarray(1, i32), jnp.linalg.norm(g0, ord=norm) < gtol,
             jnp.asarray(False), jnp.asarray(0, i32))

    def cond(s):
        return (~s[8]) & (~s[9]) & (s[5] < maxiter)

    def body(s):
        x, f, g, H, old_old, k, nfev, ngev, _, _, _ = s
        p = -jnp.matmul(H, g, precision=lax.Precision.HIGHEST)
        a, f_new, g_new, failed, ls_status, ls_nfev = _line_search(vg, x, p, f, g, old_old,
                                                                   line_search_maxiter)
        step = a * p
        y = g_new - g
        rho = 1.0 / jnp.dot(y, step)
        w = jnp.eye(d, dtype=dt) - rho * step[:, None] * y[None, :]
        H_new = jnp.matmul(jnp.matmul(w, H), w.T) + rho * step[:, None] * step[None, :]
        H_new = jnp.where(jnp.isfinite(rho), H_new, H)
        converged = jnp.linalg.norm(g_new, ord=norm) < gtol
        return (x + step, f_new, g_new, H_new, f, k + 1, nfev + ls_nfev, ngev + ls_nfev, converged, failed,
                ls_status)

    x, f, g, H, _, k, nfev, ngev, converged, failed, ls_status = lax.while_loop(cond, body, state)
    status = jnp.where(converged, 0, jnp.where(k == maxiter, 1, jnp.where(failed, 2 + ls_status, -1)))
    return OptimizeResults(x=x, success=converged & ~failed, status=status.astype(i32), fun=f, jac=g,
                           hess_inv=H, nfev=nfev, njev=ngev, nit=k)


def minimize(fun, x0, args=(), *, method, tol=None, options=None):
    """Minimizes `fun(x, *args)` over the 1-D array `x` from `x0`.
    `method='BFGS'`; `options`: `maxiter` (default `200 * size(x0)`),
    `norm` (of the gradient, default inf), `gtol` (default 1e-5),
    `line_search_maxiter` (default 10). `tol` is accepted and unused, as
    in JAX. Returns an `OptimizeResults`."""
    if options is None:
        options = {}
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to jax.scipy.optimize.minimize must be a tuple, got {args}")
    if method.lower() == "bfgs":
        return _minimize_bfgs(lambda x: fun(x, *args), jnp.asarray(x0), **options)
    raise ValueError(f"Method {method} not recognized")


__all__ = ["minimize", "OptimizeResults"]
