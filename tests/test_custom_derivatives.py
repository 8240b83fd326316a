"""custom_jvp / custom_vjp with JAX's semantics (examples from JAX's docs)."""
from functools import partial

import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from custom_rule_examples import sin_times_vjp_rules


@jax.custom_jvp
def log1pexp(x):
    return jnp.log(1.0 + jnp.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return log1pexp(x), t * (1.0 - 1.0 / (1.0 + jnp.exp(x)))


def test_custom_jvp_rule_is_used_everywhere():
    assert float(jax.grad(log1pexp)(100.0)) == 1.0  # the naive derivative is nan here
    assert float(jax.jit(jax.grad(log1pexp))(100.0)) == 1.0
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(log1pexp))(jnp.asarray([0.0, 2.0, 100.0]))),
                               [0.5, 1 - 1 / (1 + np.exp(2.0)), 1.0], rtol=1e-6)
    y, t = jax.jvp(log1pexp, (3.0,), (2.0,))
    np.testing.assert_allclose(float(t), 2 * (1 - 1 / (1 + np.exp(3.0))), rtol=1e-6)
    # second order differentiates the rule itself
    s = 1 / (1 + np.exp(-0.5))
    np.testing.assert_allclose(float(jax.grad(jax.grad(log1pexp))(0.5)), s * (1 - s), rtol=1e-5)
    # plain evaluation runs the function
    np.testing.assert_allclose(float(log1pexp(1.0)), np.log1p(np.exp(1.0)), rtol=1e-6)
    cj = jax.make_jaxpr(log1pexp)(1.0)
    assert [e.primitive.name for e in cj.jaxpr.eqns] == ["custom_jvp_call"]


def test_custom_jvp_rule_with_python_control_flow_on_primals():
    @jax.custom_jvp
    def f(x):
        return x

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        if x > 0:
            return f(x), 2.0 * t
        return f(x), 3.0 * t

    assert float(jax.grad(f)(1.0)) == 2.0
    assert float(jax.grad(f)(-1.0)) == 3.0


def test_custom_jvp_defjvps_and_nondiff_argnums():
    @jax.custom_jvp
    def f(x, y):
        return jnp.sin(x) * y

    f.defjvps(lambda x_dot, primal_out, x, y: jnp.cos(x) * x_dot * y,
              lambda y_dot, primal_out, x, y: jnp.sin(x) * y_dot)
    gx, gy = jax.grad(f, argnums=(0, 1))(2.0, 3.0)
    np.testing.assert_allclose([float(gx), float(gy)], [np.cos(2.0) * 3.0, np.sin(2.0)], rtol=1e-6)

    @partial(jax.custom_jvp, nondiff_argnums=(0,))
    def app(g, x):
        return g(x)

    @app.defjvp
    def app_jvp(g, primals, tangents):
        (x,), (t,) = primals, tangents
        return app(g, x), 7.0 * t

    assert float(jax.grad(lambda x: app(jnp.sin, x))(1.0)) == 7.0


@partial(jax.custom_vjp, nondiff_argnums=(0, 1))
def clip_gradient(lo, hi, x):
    return x


def clip_fwd(lo, hi, x):
    return x, None


def clip_bwd(lo, hi, res, g):
    return (jnp.minimum(jnp.maximum(g, lo), hi),)


clip_gradient.defvjp(clip_fwd, clip_bwd)


def test_custom_vjp_clip_gradient():
    f = lambda x: clip_gradient(-0.75, 0.75, jnp.sin(x))  # noqa: E731
    np.testing.assert_allclose(float(jax.grad(f)(2.0)), np.cos(2.0) * 0.75, rtol=1e-6)
    np.testing.assert_allclose(float(jax.jit(jax.grad(f))(2.0)), np.cos(2.0) * 0.75, rtol=1e-6)
    np.testing.assert_allclose(float(f(2.0)), np.sin(2.0), rtol=1e-6)
    g = jax.vmap(jax.grad(lambda x: clip_gradient(-1.0, 1.0, 3.0 * x)))(jnp.asarray([0.1, 0.2]))
    np.testing.assert_allclose(np.asarray(g), [3.0, 3.0])  # cotangent 1 is inside the clip range


def test_custom_vjp_residuals_and_forward_mode_error():
    @jax.custom_vjp
    def f(x, y):
        return jnp.sin(x) * y

    f.defvjp(*sin_times_vjp_rules(f))
    gx, gy = jax.grad(f, argnums=(0, 1))(2.0, 3.0)
    np.testing.assert_allclose([float(gx), float(gy)], [np.cos(2.0) * 3.0, np.sin(2.0)], rtol=1e-6)
    with pytest.raises(TypeError, match="forward-mode autodiff"):
        jax.jvp(lambda x: f(x, 3.0), (2.0,), (1.0,))


def test_custom_vjp_bwd_structure_error():
    @jax.custom_vjp
    def f(x):
        return x * 2.0

    f.defvjp(lambda x: (f(x), None), lambda res, g: (g, g))
    with pytest.raises(TypeError, match="same container"):
        jax.grad(f)(1.0)


def test_custom_vjp_closing_over_perturbed_value_errors():
    def outer(y):
        @jax.custom_vjp
        def f(x):
            return x * y

        f.defvjp(lambda x: (f(x), None), lambda res, g: (g,))
        return f(2.0)

    with pytest.raises(Exception, match="closure_convert|closes over"):
        jax.grad(outer)(1.0)


def test_missing_rule_errors():
    @jax.custom_jvp
    def f(x):
        return x

    with pytest.raises(AttributeError, match="No JVP defined"):
        f(1.0)


def test_closure_convert_hoists_perturbed_values_into_a_custom_vjp():
    @partial(jax.custom_vjp, nondiff_argnums=(0,))
    def apply(f, x, *consts):
        return f(x, *consts)

    def apply_fwd(f, x, *consts):
        return apply(f, x, *consts), (x, consts)

    def apply_bwd(f, res, g):
        x, consts = res
        _, pull = jax.vjp(f, x, *consts)
        return pull(g)

    apply.defvjp(apply_fwd, apply_bwd)

    def outer(y):
        h = lambda x: jnp.sin(x) * y  # noqa: E731  (closes over the differentiated y)
        converted, consts = jax.closure_convert(h, 1.0)
        # only values of enclosing transformations are hoisted (as JAX)
        assert len(consts) == (1 if isinstance(y, jax.core.Tracer) else 0)
        return apply(converted, 2.0, *consts)

    np.testing.assert_allclose(float(jax.grad(outer)(3.0)), np.sin(2.0), rtol=1e-6)
    np.testing.assert_allclose(float(outer(3.0)), np.sin(2.0) * 3.0, rtol=1e-6)


def test_custom_gradient():
    @jax.custom_gradient
    def f(x):
        return x * x, lambda g: (10.0 * g,)

    assert float(jax.grad(f)(3.0)) == 10.0
    assert float(f(3.0)) == 9.0


def test_linear_call_forward_transpose_and_transforms():
    from fd import num_grad
    from microjax_rs.custom_derivatives import linear_call

    # y = A @ x with a hand-written transpose that counts its calls.
    A = jnp.asarray([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]])
    calls = []

    def f(a, x):
        return a @ x

    def f_t(a, ct):
        calls.append(1)
        return a.T @ ct

    x = jnp.asarray([0.3, -0.2, 1.0])
    y = linear_call(f, f_t, A, x)
    np.testing.assert_allclose(np.asarray(y), np.asarray(A) @ np.asarray(x), rtol=1e-6)
    assert "linear_call" in str(jax.make_jaxpr(lambda x: linear_call(f, f_t, A, x))(x))
    # reverse mode uses the transpose; forward mode applies f to tangents
    loss = lambda x: jnp.sum(jnp.sin(linear_call(f, f_t, A, x)))
    g = jax.grad(loss)(x)
    np.testing.assert_allclose(np.asarray(g), np.asarray(A).T @ np.cos(np.asarray(A) @ np.asarray(x)), rtol=1e-5)
    assert calls, "the transpose rule was not used"
    _, t = jax.jvp(lambda x: linear_call(f, f_t, A, x), (x,), (jnp.ones(3),))
    np.testing.assert_allclose(np.asarray(t), np.asarray(A) @ np.ones(3), rtol=1e-6)
    # linear_transpose gives f_t; transposing twice gives f back
    ft = jax.linear_transpose(lambda x: linear_call(f, f_t, A, x), x)
    ct = jnp.asarray([1.0, -2.0])
    np.testing.assert_allclose(np.asarray(ft(ct)[0]), np.asarray(A).T @ np.asarray(ct), rtol=1e-6)
    ftt = jax.linear_transpose(lambda c: ft(c)[0], ct)
    np.testing.assert_allclose(np.asarray(ftt(x)[0]), np.asarray(A) @ np.asarray(x), rtol=1e-6)
    # jit and vmap over the linear argument
    xs = jnp.stack([x, 2 * x])
    np.testing.assert_allclose(np.asarray(jax.jit(jax.vmap(lambda v: linear_call(f, f_t, A, v)))(xs)),
                               np.asarray(xs) @ np.asarray(A).T, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(loss))(xs)[1]),
                               np.asarray(jax.grad(loss)(2 * x)), rtol=1e-5)
    # a transpose of the wrong type is rejected
    with pytest.raises(TypeError, match="fun_transpose"):
        linear_call(f, lambda a, ct: ct, A, x)
