"""DLPack exchange with NumPy (and PyTorch when installed): `Array.__dlpack__`
/ `__dlpack_device__`, `jnp.from_dlpack`, `jax.dlpack`. Behaviour as JAX
0.10.2's (recorded: NumPy's `from_dlpack` of a JAX array is read-only; a
float64 NumPy array imported with x64 off becomes float32)."""
import gc

import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]


def test_export_to_numpy_shares_memory_read_only():
    x = jnp.arange(12.0).reshape(3, 4)
    assert x.__dlpack_device__() == (1, 0)
    y = np.from_dlpack(x)
    np.testing.assert_array_equal(y, np.arange(12.0).reshape(3, 4))
    assert not y.flags.writeable
    assert np.shares_memory(y, np.asarray(x))
    x.delete()
    del x
    gc.collect()
    np.testing.assert_array_equal(y, np.arange(12.0).reshape(3, 4))  # the capsule kept the memory
    c = np.from_dlpack(jnp.arange(3.0), copy=True)  # a copy the consumer may write
    c[0] = 5.0
    np.testing.assert_array_equal(c, [5.0, 1.0, 2.0])


def test_capsules_legacy_and_versioned_freed_once():
    x = jnp.arange(3.0)
    assert "dltensor" in repr(x.__dlpack__()) and "versioned" not in repr(x.__dlpack__())
    assert "dltensor_versioned" in repr(x.__dlpack__(max_version=(1, 0)))
    for _ in range(200):  # unconsumed capsules are freed by their destructor
        x.__dlpack__()
        x.__dlpack__(max_version=(1, 0))
    gc.collect()
    np.testing.assert_array_equal(np.from_dlpack(x), [0.0, 1.0, 2.0])
    with pytest.raises(BufferError):
        x.__dlpack__(dl_device=(2, 0))


@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip_every_dtype(dtype):
    with jax.enable_x64(True):
        src = (np.arange(6) % 2 == 0) if dtype == "bool" else np.arange(6).astype(dtype)
        src = src.reshape(2, 3)
        a = jnp.from_dlpack(src)
        assert a.dtype == np.dtype(dtype) and a.shape == (2, 3)
        np.testing.assert_array_equal(np.asarray(a), src)
        back = np.from_dlpack(a)
        assert back.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(back, src)
    assert jax.dlpack.is_supported_dtype(np.dtype(dtype))


def test_import_from_numpy_shares_and_survives_the_producer():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    j = jnp.from_dlpack(a)
    a[0, 0] = 100.0  # shared memory, as JAX (writing the producer is not supported)
    assert float(j[0, 0]) == 100.0
    del a
    gc.collect()
    np.testing.assert_array_equal(np.asarray(j), [[100.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda v: v * 2)(j)), [[200.0, 2.0, 4.0], [6.0, 8.0, 10.0]])
    np.testing.assert_array_equal(np.asarray(jax.grad(lambda v: jnp.sum(v ** 2))(j)), 2 * np.asarray(j))


def test_import_copies_where_it_must():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = jnp.from_dlpack(a.T)  # not row-major: copied
    np.testing.assert_array_equal(np.asarray(t), a.T)
    a[0, 0] = -1.0
    assert float(t[0, 0]) == 0.0
    c = jnp.from_dlpack(a, copy=True)
    a[0, 1] = -2.0
    assert float(c[0, 1]) == 1.0
    f64 = jnp.from_dlpack(np.arange(3.0))  # x64 off: float32, as JAX
    assert f64.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(f64), [0.0, 1.0, 2.0])
    assert jnp.from_dlpack(np.zeros((0, 3), np.float32)).shape == (0, 3)
    assert np.from_dlpack(jnp.ones((2, 0))).shape == (2, 0)
    x = jnp.arange(3.0)
    assert jnp.from_dlpack(x) is x


def test_bad_inputs():
    with pytest.raises(TypeError, match="__dlpack__"):
        jnp.from_dlpack([1, 2, 3])
    assert not jax.dlpack.is_supported_dtype(jax.dtypes.float0)
    with pytest.raises(AttributeError):  # as JAX: typed key arrays have no __dlpack__
        np.from_dlpack(jax.random.key(0))


def test_torch_exchange():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed (comparison environment only)")
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    j = jnp.from_dlpack(t)
    np.testing.assert_array_equal(np.asarray(j), t.numpy())
    back = torch.from_dlpack(jnp.arange(4.0))
    assert back.tolist() == [0.0, 1.0, 2.0, 3.0]
