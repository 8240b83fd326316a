"""`jax.ad` (the markers of `vjp_fn.with_refs`: which cotangents a VJP
computes) and `jax.memory.Space` (memory spaces), against JAX 0.10.2."""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp


def _f(x, y):
    return jnp.sin(x) * y


def test_with_refs_skips_unwanted_cotangents():
    _, vjp_fn = jax.vjp(_f, 1.0, 2.0)
    dx, dy = vjp_fn.with_refs(jax.ad.GradValue(), jax.ad.DontWant())(1.0)
    # recorded from JAX 0.10.2: (Array(1.0806046, float32), DidntWant())
    np.testing.assert_allclose(dx, 1.0806046, rtol=1e-6)
    assert dy == jax.ad.DidntWant()
    both = vjp_fn.with_refs(jax.ad.GradValue(), jax.ad.GradValue())(1.0)
    np.testing.assert_allclose(both, vjp_fn(1.0), rtol=1e-7)
    np.testing.assert_allclose(both[1], np.sin(1.0), rtol=1e-6)


def test_with_refs_on_pytrees():
    def g(p):
        return jnp.sum(p["a"] * p["b"])
    p = {"a": np.arange(3.0), "b": np.ones(3)}
    _, vjp_fn = jax.vjp(g, p)
    (out,) = vjp_fn.with_refs({"a": jax.ad.DontWant(), "b": jax.ad.GradValue()})(1.0)
    assert out["a"] == jax.ad.DidntWant()
    np.testing.assert_allclose(out["b"], np.arange(3.0))


def test_marker_pytree_structure():
    # recorded from JAX 0.10.2: DidntWant and GradRef are pytree nodes without leaves
    assert jax.tree_util.tree_leaves(jax.ad.DidntWant()) == []
    assert jax.tree_util.tree_leaves(jax.ad.GradRef()) == []
    assert jax.tree_util.tree_leaves(jax.ad.GradValue()) == [jax.ad.GradValue()]
    assert repr(jax.ad.DontWant()) == "DontWant()"


def test_with_refs_rejects_bad_markers():
    _, vjp_fn = jax.vjp(_f, 1.0, 2.0)
    with pytest.raises(TypeError):
        vjp_fn.with_refs(jax.ad.GradValue())(1.0)
    with pytest.raises(TypeError):
        vjp_fn.with_refs(jax.ad.GradValue(), 3.0)(1.0)


def test_memory_space():
    assert [s.name for s in jax.memory.Space] == ["Device", "Host", "Any"]
    assert repr(jax.memory.Space.Host) == "MemorySpace.Host"
    assert jax.memory.Space.Device.value == 1 and jax.memory.Space.Any.value == 3
    assert jax.typeof(jnp.ones(3)).memory_space is jax.memory.Space.Device
    assert jax.memory.Space["Host"] is jax.memory.Space.Host
