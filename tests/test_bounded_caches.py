"""Every per-function, per-code-object and per-program cache is bounded
(`microjax_rs/_lru.py`): new shapes, new lambdas and new programs evict the
least recently used entries, values computed after an eviction are still
right, and `clear_caches` empties them all. Counts entries, never time or
memory."""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import _lru, core, debug


def test_lru_evicts_the_least_recently_used():
    c = _lru.LRU("test.lru", 3)
    for k in "abc":
        c[k] = k.upper()
    assert c.get("a") == "A"  # "a" is now the most recent: "b" goes next
    c["d"] = "D"
    assert "b" not in c and len(c) == 3
    assert [c.get(k) for k in "acd"] == ["A", "C", "D"]
    c["c"] = "C2"  # an overwrite refreshes too
    c["e"] = "E"
    assert "a" not in c and c.get("c") == "C2"
    assert c.get("missing", 7) == 7
    made = []
    assert _lru.cached(c, "f", lambda: made.append(1) or "F") == "F"
    assert _lru.cached(c, "f", lambda: made.append(1) or "G") == "F"
    assert made == [1]
    with pytest.raises(ValueError):
        _lru.LRU("test.empty", 0)


@pytest.fixture
def small_jit_cache():
    jax.clear_caches()
    jax.config.update("microjax_jit_cache_size", 32)
    yield 32
    jax.config.update("microjax_jit_cache_size", 4096)
    jax.clear_caches()


def test_jit_with_many_shapes_stays_at_the_bound(small_jit_cache):
    traces = []

    def f(x):
        traces.append(x.shape)
        return jnp.sin(x) * 2.0 + x.shape[0]

    jf = jax.jit(f)
    n = 4 * small_jit_cache
    for k in range(1, n + 1):
        jf(jnp.ones((k,), jnp.float32))
        assert debug.jit_cache_stats()["entries"] <= small_jit_cache
    assert debug.jit_cache_stats()["entries"] == small_jit_cache
    assert len(traces) == n
    # The first shape was evicted long ago: traced again, and still right.
    x = np.linspace(-1.0, 1.0, 1, dtype=np.float32)
    got = np.asarray(jf(jnp.asarray(x)))
    np.testing.assert_allclose(got, np.sin(x) * 2.0 + 1.0, rtol=1e-6)
    assert len(traces) == n + 1
    # The most recent shape is still cached: no new trace.
    x = np.linspace(-1.0, 1.0, n, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(jf(jnp.asarray(x))), np.sin(x) * 2.0 + n, rtol=1e-6)
    assert len(traces) == n + 1


def _fresh_function(i):
    """A function with its own code object (and file name) per `i`."""
    ns = {"jnp": jnp}
    src = f"def f{i}(x):\n    y = x * {float(i)}\n    return jnp.sin(y)\n"
    exec(compile(src, f"<generated {i}>", "exec"), ns)
    return ns[f"f{i}"]


@pytest.fixture
def small_code_caches(monkeypatch):
    for cache in (core._INTERNAL_CODE, core._SOURCE_TEXT):
        monkeypatch.setattr(cache, "maxsize", 16)
    yield 16
    jax.clear_caches()


def test_code_object_caches_stay_at_their_bound(small_code_caches):
    x = np.float32(0.5)
    for i in range(6 * small_code_caches):
        f = _fresh_function(i)
        jaxpr = jax.make_jaxpr(f)(x)
        assert len(core._INTERNAL_CODE) <= small_code_caches
        assert len(core._SOURCE_TEXT) <= small_code_caches
        # The source line of each equation is the generated function's.
        mul, sin = jaxpr.jaxpr.eqns
        assert mul.source_info.startswith(f"<generated {i}>:2 (f{i})"), mul.source_info
        assert sin.source_info.startswith(f"<generated {i}>:3 (f{i})"), sin.source_info
        np.testing.assert_allclose(np.asarray(jax.jit(f)(x)), np.sin(x * i), rtol=1e-6)
    assert len(core._SOURCE_TEXT) == small_code_caches
    # An evicted site (the first function's) is recomputed, not lost.
    first = _fresh_function(0)
    eqn = jax.make_jaxpr(first)(x).jaxpr.eqns[0]
    assert eqn.source_info.startswith("<generated 0>:2 (f0)")


def test_named_source_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(core._NAMED_SOURCE, "maxsize", 8)

    def f(x):
        for i in range(40):
            with jax.named_scope(f"scope{i}"):
                x = x + 1.0
        return x

    jaxpr = jax.make_jaxpr(f)(np.float32(1.0))
    assert len(core._NAMED_SOURCE) <= 8
    assert [e.name_stack for e in jaxpr.jaxpr.eqns] == [f"scope{i}" for i in range(40)]


def test_transform_caches_are_bounded_and_cleared():
    from microjax_rs.interpreters import ad

    jax.clear_caches()
    limit = ad._vjp_cache.maxsize
    for k in range(limit + 20):
        g = jax.grad(lambda x, k=k: jnp.sum(jnp.sin(x) * (k + 1)))
        x = np.linspace(0.0, 1.0, (k % 50) + 1, dtype=np.float32)
        np.testing.assert_allclose(np.asarray(g(x)), np.cos(x) * (k + 1), rtol=1e-5)
    for name, (n, m) in _lru.sizes().items():
        assert n <= m, name
    jax.clear_caches()
    assert all(n == 0 for n, _ in _lru.sizes().values()), _lru.sizes()
    assert len(core._SOURCE_TEXT) == 0 and len(core._INTERNAL_CODE) == 0
