"""The executor's memory and compile machinery seen from Python: the
structural compile cache the un-jitted transforms run through (tiering,
literal lifting, config epoch, LRU bound), the host buffer pool (bitwise
identical results, bounded) and `jit` buffer donation (values, deletion,
JAX's errors and warning, jit against eager, under grad and vmap)."""
import warnings

import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import debug
from microjax_rs.config import config


@pytest.fixture
def fresh_cache():
    debug.compile_cache_clear()
    yield
    config.update("microjax_compile_cache_size", 512)
    debug.compile_cache_clear()


def _f(x):
    return jnp.sum(jnp.tanh(x) ** 3 + jnp.sin(x) * 2.0)


X = np.linspace(-1.0, 1.0, 50).astype(np.float32)


def test_cache_first_call_interpreted_second_compiled(fresh_cache):
    g = jax.grad(_f)
    first = np.asarray(g(X))
    s1 = debug.compile_cache_stats()
    assert s1["compiles"] == 0 and s1["compiled_runs"] == 0
    assert s1["misses"] >= 1 and s1["interpreted_runs"] == s1["misses"]
    second = np.asarray(g(X))
    s2 = debug.compile_cache_stats()
    assert s2["misses"] == s1["misses"]
    assert s2["compiles"] == s1["misses"] and s2["compiled_runs"] == s1["misses"]
    third = np.asarray(g(X))
    s3 = debug.compile_cache_stats()
    assert s3["compiles"] == s2["compiles"]
    assert s3["compiled_runs"] == 2 * s2["compiled_runs"]
    # The compiled plan computes what the interpreter did, bit for bit.
    np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(first, third)
    # Against the derivative written out.
    t = np.tanh(X.astype(np.float64))
    want = 3 * t ** 2 * (1 - t ** 2) + 2 * np.cos(X.astype(np.float64))
    np.testing.assert_allclose(first, want, rtol=1e-5, atol=1e-6)


def test_cache_a_literal_change_does_not_recompile(fresh_cache):
    def loss(x, c):
        return jnp.sum(jnp.sin(x) * c)

    outs = []
    for i, c in enumerate([0.5, 1.5, 2.5, 3.5]):
        outs.append(np.asarray(jax.grad(lambda x: loss(x, c))(X)))
        if i == 0:
            first = debug.compile_cache_stats()
    s = debug.compile_cache_stats()
    # Float literals are lifted into arguments: one program, compiled once.
    assert s["misses"] == first["misses"]
    assert s["compiles"] == first["misses"]
    for c, o in zip([0.5, 1.5, 2.5, 3.5], outs):
        np.testing.assert_allclose(o, np.cos(X) * c, rtol=1e-6)


def test_cache_config_epoch_change_misses(fresh_cache):
    g = jax.grad(_f)
    g(X)
    g(X)
    before = debug.compile_cache_stats()
    config.update("jax_default_matmul_precision", None)  # bumps the epoch
    g(X)
    after = debug.compile_cache_stats()
    assert after["misses"] > before["misses"]
    assert after["compiles"] == before["compiles"]


def test_cache_is_lru_bounded_and_size_configurable(fresh_cache):
    config.update("microjax_compile_cache_size", 2)
    for k in range(5):
        jax.grad(lambda x, k=k: jnp.sum(x ** (k + 2)))(X)
    s = debug.compile_cache_stats()
    assert s["capacity"] == 2 and s["entries"] <= 2 and s["evictions"] >= 3
    config.update("microjax_compile_cache_size", 0)
    debug.compile_cache_clear()
    np.testing.assert_allclose(np.asarray(jax.grad(_f)(X)), np.asarray(jax.grad(_f)(X)))
    s = debug.compile_cache_stats()
    assert s["entries"] == 0 and s["compiles"] == 0 and s["interpreted_runs"] >= 2
    with pytest.raises(ValueError, match="microjax_compile_cache_size"):
        config.update("microjax_compile_cache_size", -1)
    with pytest.raises(TypeError, match="microjax_compile_cache_size"):
        config.update("microjax_compile_cache_size", 1.5)


def test_cache_serves_vmap_of_grad_and_hessian(fresh_cache):
    xs = np.stack([X, X * 0.5, -X])
    per = jax.vmap(jax.grad(_f))
    a, b = np.asarray(per(xs)), np.asarray(per(xs))
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(a, np.stack([np.asarray(jax.grad(_f)(r)) for r in xs]), rtol=1e-6)
    h = jax.hessian(_f)
    np.testing.assert_array_equal(np.asarray(h(X[:5])), np.asarray(h(X[:5])))
    assert debug.compile_cache_stats()["compiles"] >= 1


# --- host buffer pool -------------------------------------------------------

N = 1 << 19  # 2 MiB of f32: above the pool's minimum


def _chain(x):
    return jnp.tanh(x * 2.0 + 1.0) * jnp.sin(x) - jnp.exp(-x * x)


def test_pool_results_bitwise_equal_with_and_without():
    x = jnp.asarray(np.random.default_rng(0).standard_normal(N).astype(np.float32))
    f = jax.jit(_chain)
    config.update("microjax_buffer_pool_bytes", 0)
    try:
        want = [np.asarray(f(x)) for _ in range(3)]
        assert debug.buffer_pool_stats()["held_bytes"] == 0
    finally:
        config.update("microjax_buffer_pool_bytes", 256 << 20)
    debug.buffer_pool_clear()
    # Copies (np.array): a NumPy view would keep each result's buffer from the pool.
    got = [np.array(f(x)) for _ in range(4)]
    for g in got:
        np.testing.assert_array_equal(g, want[0])
    assert debug.buffer_pool_stats()["hits"] >= 1
    # Through grad and vmap too.
    loss = lambda v: jnp.sum(_chain(v))  # noqa: E731
    g_pool = np.asarray(jax.jit(jax.grad(loss))(x))
    config.update("microjax_buffer_pool_bytes", 0)
    try:
        g_plain = np.asarray(jax.jit(jax.grad(loss))(x))
    finally:
        config.update("microjax_buffer_pool_bytes", 256 << 20)
    np.testing.assert_array_equal(g_pool, g_plain)


def test_pool_results_bitwise_equal_under_vmap():
    xs = jnp.asarray(np.random.default_rng(1).standard_normal((4, N)).astype(np.float32))
    f = jax.jit(jax.vmap(_chain))
    debug.buffer_pool_clear()
    got = [np.array(f(xs)) for _ in range(3)]  # copies: results go back to the pool
    assert debug.buffer_pool_stats()["hits"] >= 1
    config.update("microjax_buffer_pool_bytes", 0)
    try:
        plain = np.asarray(f(xs))
    finally:
        config.update("microjax_buffer_pool_bytes", 256 << 20)
    per_row = np.stack([np.asarray(jax.jit(_chain)(r)) for r in xs])
    for g in got:
        np.testing.assert_array_equal(g, plain)
        np.testing.assert_array_equal(g, per_row)


def test_pool_is_bounded():
    config.update("microjax_buffer_pool_bytes", 3 * N * 4)
    try:
        debug.buffer_pool_clear()
        arrays = [jax.jit(_chain)(jnp.full((N,), float(i))) for i in range(8)]
        del arrays
        s = debug.buffer_pool_stats()
        assert s["held_bytes"] <= 3 * N * 4 and s["held_buffers"] <= 3
        with pytest.raises(ValueError, match="microjax_buffer_pool_bytes"):
            config.update("microjax_buffer_pool_bytes", -1)
    finally:
        config.update("microjax_buffer_pool_bytes", 256 << 20)


# --- donation ---------------------------------------------------------------

def test_donated_array_is_deleted_and_values_match_eager():
    def step(p, g):
        return p - 0.1 * g

    p = jnp.arange(4.0)
    g = jnp.ones(4)
    want = np.asarray(step(p, g))
    f = jax.jit(step, donate_argnums=0)
    out = f(p, g)
    np.testing.assert_array_equal(np.asarray(out), want)
    assert p.is_deleted() and not g.is_deleted()
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=float32\[4\]"):
        np.asarray(p)
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        print(p)
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        p + 1
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        jnp.sin(p)
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        f(p, g)
    # Shape and dtype stay readable, as in JAX.
    assert p.shape == (4,) and p.dtype == np.float32
    # Repeated calls donate each new array (and never the Rust fast path).
    for _ in range(3):
        new = f(out, g)
        assert out.is_deleted()
        out = new
    np.testing.assert_allclose(np.asarray(out), want - 0.3, rtol=1e-6)


def test_donate_argnames_and_pytrees():
    def step(params, lr):
        return {k: v * lr for k, v in params.items()}

    params = {"w": jnp.ones((2, 3)), "b": jnp.zeros(3)}
    out = jax.jit(step, donate_argnames="params")(params, 0.5)
    assert params["w"].is_deleted() and params["b"].is_deleted()
    np.testing.assert_array_equal(np.asarray(out["w"]), np.full((2, 3), 0.5, np.float32))


def test_unusable_donation_warns_and_keeps_the_array():
    x = jnp.ones((2, 3))
    y = jnp.ones((1, 3))
    with pytest.warns(UserWarning, match=r"Some donated buffers were not usable: ShapedArray\(float32\[1,3\]\)"):
        out = jax.jit(lambda a, b: a + b, donate_argnums=(0, 1))(x, y)
    assert x.is_deleted() and not y.is_deleted()
    np.testing.assert_array_equal(np.asarray(out), np.full((2, 3), 2.0, np.float32))
    np.asarray(y)


def test_donating_non_arrays_and_tracers_is_ignored():
    f = jax.jit(lambda a, b: a * b, donate_argnums=(0, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(np.asarray(f(2.0, np.float32(3.0))), np.float32(6.0))
    x = jnp.arange(3.0)
    # Under grad and vmap the arguments are tracers: nothing is donated.
    g = jax.grad(lambda v: jnp.sum(f(v, v)))(x)
    np.testing.assert_array_equal(np.asarray(g), 2 * np.arange(3.0, dtype=np.float32))
    v = jax.vmap(f)(x, x)
    np.testing.assert_array_equal(np.asarray(v), np.arange(3.0, dtype=np.float32) ** 2)
    assert not x.is_deleted()


def test_delete_and_is_deleted():
    x = jnp.arange(3)
    assert not x.is_deleted()
    x.delete()
    assert x.is_deleted()
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=int32\[3\]"):
        x.tolist()
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        x[0]
