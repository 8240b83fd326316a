"""JAX's option contexts: `jax.enable_x64`, `jax.experimental.disable_x64`,
`jax.default_matmul_precision`, `jax.log_compiles` (also as decorators)."""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs.experimental import disable_x64, enable_x64


def test_enable_x64_scopes_64_bit_types():
    assert jnp.asarray(1.0).dtype == np.float32
    with jax.enable_x64():
        assert jnp.asarray(1.0).dtype == np.float64
        assert jnp.arange(3).dtype == np.int64
        with disable_x64():
            assert jnp.asarray(1.0).dtype == np.float32
        assert jax.config.jax_enable_x64
    assert not jax.config.jax_enable_x64
    assert jnp.asarray(1.0).dtype == np.float32
    assert enable_x64 is jax.enable_x64


def test_enable_x64_restores_after_an_error_and_decorates():
    with pytest.raises(ZeroDivisionError):
        with jax.enable_x64():
            1 / 0
    assert not jax.config.jax_enable_x64

    @jax.enable_x64()
    def f():
        return jnp.zeros(2).dtype

    assert f() == np.float64 and not jax.config.jax_enable_x64


def test_jit_traces_again_inside_enable_x64():
    f = jax.jit(lambda x: x * 2)
    assert f(1.0).dtype == np.float32
    with jax.enable_x64():
        assert f(1.0).dtype == np.float64
    assert f(1.0).dtype == np.float32


def test_default_matmul_precision_sets_and_restores_the_option():
    a = jnp.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    with jax.default_matmul_precision("float32"):
        assert jax.config.jax_default_matmul_precision == "float32"
        np.testing.assert_allclose(np.asarray(a @ a.T), np.asarray(a) @ np.asarray(a).T)
    assert jax.config.jax_default_matmul_precision is None
    with pytest.raises(ValueError, match="invalid value"):
        jax.default_matmul_precision("float33")


def test_log_compiles_logs_new_traces(caplog):
    with caplog.at_level("WARNING", logger="jax._src.dispatch"):
        with jax.log_compiles():
            jax.jit(lambda x: x - 3.0)(jnp.ones(4))
    assert any("Compiling" in r.getMessage() for r in caplog.records)
    assert not jax.config.jax_log_compiles


def test_debug_nans_and_infs_contexts():
    import microjax_rs as jax
    import microjax_rs.numpy as jnp
    with jax.debug_nans(True):
        assert jax.config.jax_debug_nans
        with pytest.raises(FloatingPointError):
            jnp.log(jnp.asarray(-1.0))
    assert not jax.config.jax_debug_nans
    assert bool(jnp.isnan(jnp.log(jnp.asarray(-1.0))))

    @jax.debug_infs(True)
    def f(x):
        return 1.0 / x

    with pytest.raises(FloatingPointError):
        f(jnp.asarray(0.0))
    assert not jax.config.jax_debug_infs
