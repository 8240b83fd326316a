"""`jax.test_util`: numerical checks of derivatives against finite differences."""
import functools

import numpy as np

from . import numpy as jnp
from ._grad import jvp as _jvp, vjp as _vjp
from .tree_util import tree_leaves, tree_map, tree_structure

EPS = 1e-4

_DEFAULT_GRADIENT_TOLERANCE = {
    np.dtype(np.float16): 1e-1,
    np.dtype(np.float32): 2e-2,
    np.dtype(np.float64): 1e-5,
    np.dtype(np.complex64): 1e-2,
    np.dtype(np.complex128): 1e-5,
}


def _dtype(x):
    return np.dtype(getattr(x, "dtype", None) or np.asarray(x).dtype)


def _tolerance(dtype, tol):
    if tol is None:
        return _DEFAULT_GRADIENT_TOLERANCE.get(np.dtype(dtype), 0)
    if isinstance(tol, dict):
        return tol.get(np.dtype(dtype), _DEFAULT_GRADIENT_TOLERANCE.get(np.dtype(dtype), 0))
    return tol


def _check_close(xs, ys, atol=None, rtol=None, err_msg=""):
    if tree_structure(xs) != tree_structure(ys):
        raise AssertionError(f"tree structures differ: {tree_structure(xs)} vs {tree_structure(ys)} {err_msg}")
    for x, y in zip(tree_leaves(xs), tree_leaves(ys)):
        dtype = np.promote_types(_dtype(x), _dtype(y))
        np.testing.assert_allclose(
            np.asarray(x, dtype=np.float64 if dtype.kind == "f" else dtype),
            np.asarray(y, dtype=np.float64 if dtype.kind == "f" else dtype),
            atol=max(_tolerance(_dtype(x), atol), _tolerance(_dtype(y), atol)),
            rtol=max(_tolerance(_dtype(x), rtol), _tolerance(_dtype(y), rtol)),
            err_msg=err_msg)


def _rand_like(rng, x):
    shape, dtype = np.shape(x), _dtype(x)
    r = np.asarray(rng.randn(*shape), dtype)
    if dtype.kind == "c":
        r = r + 1j * np.asarray(rng.randn(*shape), dtype)
    if isinstance(x, (bool, int, float, complex)):
        return r.item()
    return jnp.asarray(r)


def _add(xs, ys, scale):
    return tree_map(lambda x, y: jnp.add(x, jnp.multiply(scale, y).astype(jnp.result_type(x))), xs, ys)


def numerical_jvp(f, primals, tangents, eps=EPS):
    """Central difference (f(x + eps t) - f(x - eps t)) / (2 eps)."""
    f_pos = f(*_add(primals, tangents, eps))
    f_neg = f(*_add(primals, tangents, -eps))
    return tree_map(lambda a, b: jnp.multiply(jnp.subtract(a, b), 0.5 / eps), f_pos, f_neg)


def _wide(x):
    """`x` as a float64 (or, if complex, complex128) NumPy array."""
    x = np.asarray(x)
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


def _inner_prod(xs, ys):
    """Re <x, y> = Re sum(conj(x) * y) over the leaves (the real inner
    product of complex values seen as pairs of reals)."""
    return sum(float(np.real(np.vdot(_wide(x), _wide(y)))) for x, y in zip(tree_leaves(xs), tree_leaves(ys)))


def check_jvp(f, f_jvp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
    """`f_jvp(args, tangents)` agrees with `f` and with finite differences."""
    rng = np.random.RandomState(0)
    tangent = tree_map(functools.partial(_rand_like, rng), args)
    v_out, t_out = f_jvp(args, tangent)
    v_expected = f(*args)
    t_expected = numerical_jvp(f, args, tangent, eps=eps)
    _check_close(v_out, v_expected, atol=atol, rtol=rtol, err_msg=f"{err_msg} primal" if err_msg else "primal")
    _check_close(t_out, t_expected, atol=atol, rtol=rtol, err_msg=f"{err_msg} tangent" if err_msg else "tangent")


def check_vjp(f, f_vjp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
    """`f_vjp(*args) -> (out, vjp_fun)` agrees with `f`, and <t, vjp(c)> with
    <jvp_numerical(t), c> for random t, c."""
    rng = np.random.RandomState(0)
    v_out, vjpfun = f_vjp(*args)
    v_expected = f(*args)
    _check_close(v_out, v_expected, atol=atol, rtol=rtol, err_msg=f"{err_msg} primal" if err_msg else "primal")
    tangent = tree_map(functools.partial(_rand_like, rng), args)
    tangent_out = numerical_jvp(f, args, tangent, eps=eps)
    cotangent = tree_map(functools.partial(_rand_like, rng), v_out)
    # For complex values the pullback of conj(c), conjugated, pairs with the
    # tangent as the numerical directional derivative pairs with c (JAX's
    # convention; for real values the conjugations change nothing).
    cotangent_out = tree_map(jnp.conj, vjpfun(tree_map(jnp.conj, cotangent)))
    ip = _inner_prod(tangent, cotangent_out)
    ip_expected = _inner_prod(tangent_out, cotangent)
    dtype = _dtype(tree_leaves(v_out)[0]) if tree_leaves(v_out) else np.dtype(np.float32)
    np.testing.assert_allclose(ip, ip_expected, atol=_tolerance(dtype, atol), rtol=_tolerance(dtype, rtol),
                               err_msg=f"{err_msg} cotangent projection" if err_msg else "cotangent projection")


def check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None, eps=None):
    """Check `f`'s derivatives up to `order` in forward (`jvp`) and/or reverse
    (`vjp`) mode against finite differences; raises AssertionError on a mismatch."""
    args = tuple(args)
    eps = eps or EPS

    def _check(f, args, order, err_msg=""):
        if "fwd" in modes:
            msg = f"JVP of {err_msg}" if err_msg else "JVP"
            check_jvp(f, functools.partial(_jvp, f), args, atol, rtol, eps, err_msg=msg)
            if order > 1:
                _check(functools.partial(_jvp, f), (args, args), order - 1, msg)
        if "rev" in modes:
            msg = f"VJP of {err_msg}" if err_msg else "VJP"
            check_vjp(f, functools.partial(_vjp, f), args, atol, rtol, eps, err_msg=msg)
            if order > 1:
                def f_vjp(*args):
                    out, vjp_fun = _vjp(f, *args)
                    return vjp_fun(out)
                _check(f_vjp, args, order - 1, msg)

    _check(f, args, order)


__all__ = ["check_grads", "check_jvp", "check_vjp"]
