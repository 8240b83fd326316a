"""vmap against per-example loops, with JAX's in_axes/out_axes semantics."""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import lax

rng = np.random.default_rng(0)


def loop(f, *xs):
    return np.stack([np.asarray(f(*a)) for a in zip(*xs)])


def test_vmap_elementwise_and_reductions_match_loop():
    f = lambda x, y: jnp.sum(jnp.tanh(x) * y, axis=0) + jnp.max(x)  # noqa: E731
    x = rng.standard_normal((5, 3, 4)).astype(np.float32)
    y = rng.standard_normal((5, 3, 4)).astype(np.float32)
    got = jax.vmap(f)(jnp.asarray(x), jnp.asarray(y))
    want = loop(lambda a, b: f(jnp.asarray(a), jnp.asarray(b)), x, y)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)


def test_in_axes_none_and_nonzero_and_out_axes():
    w = rng.standard_normal((4, 3)).astype(np.float32)
    xs = rng.standard_normal((4, 6)).astype(np.float32)  # batch on axis 1
    f = lambda w, x: jnp.dot(x, w)  # noqa: E731
    got = jax.vmap(f, in_axes=(None, 1), out_axes=1)(jnp.asarray(w), jnp.asarray(xs))
    want = np.stack([xs[:, i] @ w for i in range(6)], axis=1)
    assert got.shape == (3, 6)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)


def test_unbatched_values_stay_concrete_inside_vmap():
    seen = []

    def f(x, n):
        seen.append(type(n).__name__)
        k = int(jnp.sum(n))  # n is unmapped: concrete
        return x * k

    out = jax.vmap(f, in_axes=(0, None))(jnp.arange(3.0), jnp.asarray([1, 2]))
    np.testing.assert_array_equal(np.asarray(out), [0, 3, 6])
    assert seen == ["ArrayImpl"]


def test_unbatched_output_is_broadcast():
    out = jax.vmap(lambda x, y: (x * 2, y), in_axes=(0, None))(jnp.arange(3.0), jnp.asarray(5.0))
    np.testing.assert_array_equal(np.asarray(out[1]), [5, 5, 5])


def test_nested_vmap_matmul_and_jit():
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    b = rng.standard_normal((4, 5)).astype(np.float32)
    f = jax.vmap(jax.vmap(lambda r, m: jnp.dot(r, m), in_axes=(0, None)), in_axes=(0, None))
    got = f(jnp.asarray(a), jnp.asarray(b))
    np.testing.assert_allclose(np.asarray(got), a @ b, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jax.jit(f)(jnp.asarray(a), jnp.asarray(b))), a @ b, rtol=1e-5)
    g = jax.vmap(jax.jit(lambda r: jnp.sin(r) * 2.0))
    np.testing.assert_allclose(np.asarray(g(jnp.asarray(a))), np.sin(a) * 2, rtol=1e-6)


def test_per_example_gradients():
    w = jnp.asarray(rng.standard_normal(3).astype(np.float32))
    xs = rng.standard_normal((8, 3)).astype(np.float32)
    ys = rng.standard_normal(8).astype(np.float32)

    def loss(w, x, y):
        return (jnp.dot(x, w) - y) ** 2

    g = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(w, jnp.asarray(xs), jnp.asarray(ys))
    wn = np.asarray(w)
    want = 2 * (xs @ wn - ys)[:, None] * xs
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-5, atol=1e-6)
    gj = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))(w, jnp.asarray(xs), jnp.asarray(ys))
    np.testing.assert_allclose(np.asarray(gj), want, rtol=1e-5, atol=1e-6)


def test_pytree_in_axes_and_kwargs():
    d = {"a": jnp.ones((3, 2)), "b": jnp.arange(2.0)}
    out = jax.vmap(lambda d: d["a"] + d["b"], in_axes=({"a": 0, "b": None},))(d)
    np.testing.assert_array_equal(np.asarray(out), np.ones((3, 2)) + np.arange(2.0))
    out2 = jax.vmap(lambda x, *, y: x + y)(jnp.arange(3.0), y=jnp.arange(3.0))
    np.testing.assert_array_equal(np.asarray(out2), [0, 2, 4])


def test_batch_sizes_zero_and_one():
    f = lambda x: jnp.sin(x) * 2  # noqa: E731
    assert jax.vmap(f)(jnp.zeros((0, 3))).shape == (0, 3)
    np.testing.assert_allclose(np.asarray(jax.vmap(f)(jnp.ones((1, 3)))), np.sin(np.ones((1, 3))) * 2, rtol=1e-6)


def test_vmap_errors():
    with pytest.raises(ValueError, match="inconsistent sizes"):
        jax.vmap(lambda x, y: x + y)(jnp.ones(3), jnp.ones(4))
    with pytest.raises(ValueError, match="axis 2"):
        jax.vmap(lambda x: x, in_axes=2)(jnp.ones((3, 3)))
    with pytest.raises(ValueError, match="at least one non-None"):
        jax.vmap(lambda x: x, in_axes=None)(jnp.ones(3))
    with pytest.raises(ValueError):
        jax.vmap(lambda x, y: x, in_axes=(0, 0, 0))(jnp.ones(3), jnp.ones(3))
    with pytest.raises(ValueError, match="out_axes is None"):
        jax.vmap(lambda x: x, out_axes=None)(jnp.ones(3))


def test_vmap_of_custom_interpreter():
    from test_seeds import eval_jaxpr

    closed = jax.make_jaxpr(lambda x: jnp.exp(jnp.tanh(x)))(1.0)
    out = jax.vmap(lambda x: eval_jaxpr(closed.jaxpr, closed.literals, x)[0])(jnp.asarray([0.1, 0.2]))
    np.testing.assert_allclose(np.asarray(out), np.exp(np.tanh([0.1, 0.2])), rtol=1e-6)


def test_transformed_program_under_vmap_runs_unbatched_part_concretely():
    # The jvp program runs at the batch trace's level: its part that reads no
    # batched value (the primal sin(0.5)) runs eagerly and stays a concrete
    # array, so Python control flow on it works, as in JAX.
    from microjax_rs import core

    def f(t):
        y, dy = jax.jvp(jnp.sin, (jnp.float32(0.5),), (t,))
        assert not isinstance(y, core.Tracer)
        return dy if y > 0 else -dy

    ts = np.arange(4.0, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(jax.vmap(f)(jnp.asarray(ts))), np.cos(0.5) * ts, rtol=1e-6)


def test_transformed_program_under_vmap_with_collective_over_the_axis():
    # A program naming the vmapped axis is replayed whole under the trace.
    def f(x):
        return jax.grad(lambda y: jnp.sum(y * lax.psum(y, "i")))(x)

    x = jnp.asarray(rng.standard_normal((3, 2)).astype(np.float32))
    got = jax.vmap(f, axis_name="i")(x)
    # Per example L_i = y_i . S with S = psum(y): the direct term gives S and
    # psum's transpose (a psum of the cotangents y_j, as in JAX) another S.
    want = np.broadcast_to(2 * np.sum(np.asarray(x), axis=0), x.shape)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)


def test_vmap_of_jit_over_one_example_mixing_scalar_and_batched_values():
    # One example: the batched program mixes rank-0 values (arithmetic on the
    # unbatched scalars) and f32[1] values in one fused group; the second call
    # runs the compiled plan.
    def f(a, b, x):
        neg = x < 0
        aa = jnp.where(neg, b - a, a)
        return jnp.where(neg, jnp.exp(x) * aa * x, aa * x)

    a, b = np.float32(2.83), np.float32(0.65)
    g = jax.vmap(jax.jit(f), in_axes=(None, None, 0))
    for x in (np.array([-2.66], np.float32), np.array([1.5], np.float32), np.array([-2.66], np.float32)):
        want = np.array([f(a, b, x[0])])
        np.testing.assert_allclose(np.asarray(g(a, b, x)), want, rtol=1e-6)
