"""Programs from the seed documents (../shared/seeds), with JAX's results.
The custom interpreters and the blog's `deriv` are those of examples/, so
these tests run the examples' code."""
import numpy as np

import microjax_rs as jax
import microjax_rs.numpy as jnp
from example_modules import load_example

_interpreter = load_example("custom_interpreter")
eval_jaxpr = _interpreter.eval_jaxpr
inverse = _interpreter.inverse
deriv = load_example("microjax_blog").deriv


def test_custom_interpreter_eval_jaxpr_matches_function():
    def f(x):
        return jnp.exp(jnp.tanh(x))

    closed = jax.make_jaxpr(f)(jnp.ones(5))
    out = eval_jaxpr(closed.jaxpr, closed.literals, jnp.ones(5))
    np.testing.assert_allclose(np.asarray(out[0]), np.exp(np.tanh(np.ones(5))), rtol=1e-6)


def test_eval_jaxpr_handles_pjit_and_consts_and_is_traceable():
    inner = jax.jit(lambda x: x * 3.0)

    def f(w, b, x):
        return jnp.dot(w, x) + b + jnp.ones(5), inner(x)

    args = (jnp.ones((5, 10)), jnp.ones(5), jnp.arange(10.0))
    closed = jax.make_jaxpr(f)(*args)
    out = eval_jaxpr(closed.jaxpr, closed.literals, *args)
    ref = f(*args)
    for a, b in zip(out, ref):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)
    # The interpreter can itself be jitted and staged.
    jitted = jax.jit(lambda *a: eval_jaxpr(closed.jaxpr, closed.literals, *a))
    for a, b in zip(jitted(*args), ref):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)
    staged = jax.make_jaxpr(lambda *a: eval_jaxpr(closed.jaxpr, closed.literals, *a))(*args)
    assert [e.primitive.name for e in staged.jaxpr.eqns] == [e.primitive.name for e in closed.jaxpr.eqns]


def test_inverse_interpreter_seed():
    def f(x):
        return jnp.exp(jnp.tanh(x))

    f_inv = inverse(f)
    assert jnp.allclose(f_inv(f(1.0)), 1.0)
    staged = jax.make_jaxpr(inverse(f))(f(1.0))
    names = [e.primitive.name for e in staged.jaxpr.eqns]
    assert names[0] == "log" and ("atanh" in names or "div" in names)
    np.testing.assert_allclose(np.asarray(jax.jit(inverse(f))(f(0.5))), 0.5, rtol=1e-5)


def test_foo_seed():
    def foo(x):
        return x + 1

    cj = jax.make_jaxpr(foo)(5)
    assert len(cj.jaxpr.invars) == 1 and len(cj.jaxpr.constvars) == 0
    assert cj.jaxpr.eqns[0].params == {}
    assert "add" in str(cj)


# -- the MicroJax blog's programs ----------------------------------------------

def test_blog_jvp_and_repeated_derivatives():
    y, y_dot = jax.jvp(lambda x: jnp.sin(x) + jnp.exp(x), (3.14,), (1.0,))
    np.testing.assert_allclose([float(y), float(y_dot)], [23.10545951163867, 22.103868126994644], rtol=1e-5)
    np.testing.assert_allclose(float(deriv(jnp.sin)(3.14)), -0.9999987317275395, rtol=1e-5)
    np.testing.assert_allclose(float(deriv(deriv(jnp.sin))(3.14)), -0.0015926529164865067, rtol=1e-3)
    f = lambda x: x * jnp.sin(x)  # noqa: E731
    xs = np.linspace(-5, 5, 11)
    d4 = [float(deriv(deriv(deriv(deriv(f))))(float(v))) for v in xs]
    # d⁴/dx⁴ x·sin x = x·sin x − 4·cos x
    np.testing.assert_allclose(d4, xs * np.sin(xs) - 4 * np.cos(xs), rtol=1e-3, atol=1e-3)


def test_blog_forward_on_backward_equals_backward_on_forward():
    f = lambda x: jnp.sin(x) + jnp.tanh(x) * jnp.exp(x)  # noqa: E731
    fob = float(deriv(jax.grad(f))(2.0))
    bof = float(jax.grad(deriv(f))(2.0))
    np.testing.assert_allclose([fob, bof], [6.251514736700764] * 2, rtol=1e-5)


def test_blog_pytree_inputs():
    def func(inputs):
        x, y = inputs
        return jnp.tanh(x) + y

    gx, gy = jax.grad(func)((6.0, 9.0))
    # float32: tanh(6) is within an ulp of 1 - 1.2e-5, so ~1e-3 relative is all f32 can give
    np.testing.assert_allclose([float(gx), float(gy)], [1 - np.tanh(6.0) ** 2, 1.0], rtol=2e-3)
    x = [1, (2, {"a": 3, "b": 4}, 5), [6, 7]]
    leaves, tree = jax.tree_util.tree_flatten(x)
    assert leaves == [1, 2, 3, 4, 5, 6, 7]
    assert jax.tree_util.tree_unflatten(tree, leaves) == x
