"""`jax.experimental.ode.odeint`: adaptive Dormand–Prince (RK5(4)) integration
of `dy/dt = func(y, t, *args)` with dense output at the requested times, and
a reverse-mode derivative by the adjoint method (the augmented system
integrated backwards in time), so `grad` works through it.

Step-size control follows JAX: Hairer–Nørsett–Wanner's initial step, the RMS
of the error estimate relative to `atol + rtol * max(|y0|, |y1|)`, the step
factor `0.9 * ratio**(-1/5)` clipped to [0.2, 10] (no shrinking after an
accepted step), `hmax` as the largest step and `mxstep` steps at most per
output interval. Output values come from the 4th-order polynomial fitted to
each accepted step."""
import functools
import operator

import numpy as _np

from .. import lax
from .. import numpy as jnp
from ..custom_derivatives import closure_convert, custom_vjp
from ..flatten_util import ravel_pytree
from ..tree_util import tree_leaves, tree_map

# The Dormand–Prince tableau: stage times, stage weights (rows), the 5th-order
# solution weights, the difference of the 5th- and 4th-order weights, and the
# weights of the midpoint value used for dense output.
_NODES = (1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0)
_A = ((1 / 5,),
      (3 / 40, 9 / 40),
      (44 / 45, -56 / 15, 32 / 9),
      (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
      (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
      (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84))
_B5 = (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0.0)
_B_ERR = (35 / 384 - 1951 / 21600, 0.0, 500 / 1113 - 22642 / 50085, 125 / 192 - 451 / 720,
          -2187 / 6784 + 12231 / 42400, 11 / 84 - 649 / 6300, -1.0 / 60.0)
_B_MID = (6025192743 / 30085553152 / 2, 0.0, 51252292925 / 65400821598 / 2, -2691868925 / 45128329728 / 2,
          187940372067 / 1594534317056 / 2, -1776094331 / 19743644256 / 2, 11237099 / 235043384 / 2)


def _combine(weights, ks, dtype):
    """sum_i w_i k_i as one matrix-vector product (the weights as an array)."""
    w = jnp.asarray(_np.asarray(weights, _np.float64), dtype=dtype)
    return jnp.matmul(w, jnp.stack(ks), precision=lax.Precision.HIGHEST)


def _rk_step(f, y, fy, t, h):
    """One Dormand–Prince step: (y1, f(y1), error estimate, stage slopes)."""
    dt = y.dtype
    hy = h.astype(dt)
    ks = [fy]
    for node, row in zip(_NODES, _A):
        yi = y + hy * _combine(row, ks, dt)
        ks.append(f(yi, t + h * node))
    y1 = y + hy * _combine(_B5, ks, dt)
    err = hy * _combine(_B_ERR, ks, dt)
    return y1, ks[-1], err, ks


def _dense_coefficients(y0, y1, ks, h):
    """The quartic through y0, the step's midpoint value and y1 with the end
    slopes (coefficients highest power first, in the step's unit time)."""
    dt = y0.dtype
    hy = h.astype(dt)
    y_mid = y0 + hy * _combine(_B_MID, ks, dt)
    d0, d1 = hy * ks[0], hy * ks[-1]
    a = -2.0 * d0 + 2.0 * d1 - 8.0 * y0 - 8.0 * y1 + 16.0 * y_mid
    b = 5.0 * d0 - 3.0 * d1 + 18.0 * y0 + 14.0 * y1 - 32.0 * y_mid
    c = -4.0 * d0 + d1 - 11.0 * y0 - 5.0 * y1 + 16.0 * y_mid
    return jnp.stack([a, b, c, d0, y0])


def _horner(coeffs, x):
    out = coeffs[0]
    for i in range(1, 5):
        out = out * x + coeffs[i]
    return out


def _initial_step(f, t0, y0, rtol, atol, f0):
    """Hairer, Nørsett & Wanner, Solving ODEs I, Sec. II.4 (order 4)."""
    dt = y0.dtype
    scale = (atol + jnp.abs(y0) * rtol).astype(dt)
    d0 = jnp.linalg.norm(y0 / scale)
    d1 = jnp.linalg.norm(f0 / scale)
    h0 = jnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
    f1 = f(y0 + h0.astype(dt) * f0, t0 + h0)
    d2 = jnp.linalg.norm((f1 - f0) / scale) / h0
    h1 = jnp.where((d1 <= 1e-15) & (d2 <= 1e-15), jnp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / jnp.maximum(d1, d2)) ** (1.0 / 5.0))
    return jnp.minimum(100.0 * h0, h1)


def _error_ratio(err, rtol, atol, y0, y1):
    tol = (atol + rtol * jnp.maximum(jnp.abs(y0), jnp.abs(y1))).astype(err.dtype)
    return jnp.sqrt(jnp.mean(jnp.square(err / tol)))


def _next_step(h, ratio):
    shrink_floor = jnp.where(ratio < 1, 1.0, 0.2)
    factor = jnp.minimum(10.0, jnp.maximum(ratio ** (-1.0 / 5.0) * 0.9, shrink_floor))
    return jnp.where(ratio == 0, h * 10.0, h * factor)


def _integrate(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    """The forward solve on a flat state: values at every time of `ts`."""

    def f(y, t):
        return func(y, t, *args)

    def advance(carry, target):
        def keep_going(state):
            i, _, _, t, h, _, _ = state
            return (t < target) & (i < mxstep) & (h > 0)

        def step(state):
            i, y, fy, t, h, t_prev, coeffs = state
            y1, f1, err, ks = _rk_step(f, y, fy, t, h)
            ratio = _error_ratio(err, rtol, atol, y, y1)
            new_coeffs = _dense_coefficients(y, y1, ks, h)
            h_next = jnp.clip(_next_step(h, ratio), 0.0, hmax)
            accept = ratio <= 1.0
            pick = functools.partial(jnp.where, accept)
            return (i + 1, pick(y1, y), pick(f1, fy), pick(t + h, t), h_next, pick(t, t_prev),
                    pick(new_coeffs, coeffs))

        state = lax.while_loop(keep_going, step, (jnp.asarray(0, "int32"),) + tuple(carry))
        _, y, fy, t, h, t_prev, coeffs = state
        s = (target - t_prev) / (t - t_prev)
        return (y, fy, t, h, t_prev, coeffs), _horner(coeffs, s.astype(coeffs.dtype))

    f0 = f(y0, ts[0])
    h0 = jnp.clip(_initial_step(f, ts[0], y0, rtol, atol, f0), 0.0, hmax)
    coeffs = jnp.stack([y0] * 5)
    _, ys = lax.scan(advance, (y0, f0, ts[0], h0, ts[0], coeffs), ts[1:])
    return jnp.concatenate([y0[None], ys])


_odeint_core = custom_vjp(_integrate, nondiff_argnums=(0, 1, 2, 3, 4))


def _odeint_fwd(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    ys = _odeint_core(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _odeint_bwd(func, rtol, atol, mxstep, hmax, res, g):
    """The adjoint method: between consecutive output times, integrate
    (y, a = dL/dy, dL/dt0, dL/dargs) backwards (in negated time), adding the
    cotangent of each output on arrival; dL/dt_i = f(y_i, t_i) . g_i."""
    from .. import vjp

    ys, ts, args = res

    def augmented(state, minus_t, *args):
        y, a = state[0], state[1]
        ydot, pullback = vjp(func, y, -minus_t, *args)
        return (-ydot, *pullback(a))

    def back(carry, i):
        a, t0_bar, args_bar = carry
        t_bar = jnp.dot(func(ys[i], ts[i], *args), g[i])
        t0_bar = t0_bar - t_bar
        span = jnp.stack([-ts[i], -ts[i - 1]])
        _, a, t0_bar, args_bar = odeint(augmented, (ys[i], a, t0_bar, args_bar), span, *args, rtol=rtol,
                                        atol=atol, mxstep=mxstep, hmax=hmax)
        a, t0_bar, args_bar = tree_map(operator.itemgetter(1), (a, t0_bar, args_bar))
        return (a + g[i - 1], t0_bar, args_bar), t_bar

    n = ts.shape[0]
    init = (g[-1], jnp.zeros((), ts.dtype), tree_map(jnp.zeros_like, args))
    (a, t0_bar, args_bar), ts_bars = lax.scan(back, init, jnp.arange(n - 1, 0, -1))
    ts_bar = jnp.concatenate([jnp.reshape(t0_bar, (1,)), jnp.flip(ts_bars, 0)])
    return (a, ts_bar, *args_bar)


_odeint_core.defvjp(_odeint_fwd, _odeint_bwd)


def odeint(func, y0, t, *args, rtol=1.4e-8, atol=1.4e-8, mxstep=_np.inf, hmax=_np.inf):
    """Solves `dy/dt = func(y, t, *args)` from `y0` at `t[0]`, returning the
    solution at every time of the strictly increasing float array `t`: a
    pytree like `y0` with a new leading axis of length `len(t)`. `rtol` /
    `atol`: local error tolerances; `mxstep`: the most steps per output
    interval; `hmax`: the largest step. Differentiable (adjoint method) in
    `y0`, `t` and `args`."""
    from ..core import get_aval

    for arg in tree_leaves(args):
        if not hasattr(arg, "dtype") and not isinstance(arg, (bool, int, float, complex)):
            raise TypeError(f"The contents of odeint *args must be arrays or scalars, but got {arg}.")
    t = jnp.asarray(t)
    if not jnp.issubdtype(get_aval(t).dtype_name, jnp.floating):
        raise TypeError(f"t must be an array of floats, but got {t}.")
    converted, consts = closure_convert(func, y0, t[0], *args)
    return _run(converted, rtol, atol, mxstep, hmax, y0, t, *args, *consts)


def _run_impl(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    from .. import vmap

    flat0, unravel = ravel_pytree(y0)

    def flat_func(y, t, *args):
        return ravel_pytree(func(unravel(y), t, *args))[0]

    ys = _odeint_core(flat_func, rtol, atol, mxstep, hmax, flat0, ts, *args)
    return vmap(unravel)(ys)


def _run(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    from .. import jit

    key = (func, rtol, atol, mxstep, hmax)
    return jit(_run_impl, static_argnums=(0, 1, 2, 3, 4))(*key, y0, ts, *args)


__all__ = ["odeint"]
