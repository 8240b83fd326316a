"""The `device=` keyword of the jnp creation functions (a Device or a
Sharding, as `jax.device_put`), `eye` / `tri` with a traced diagonal
offset, `take_along_axis(mode='one_hot')`, the item size of tracers, and the
JAX-path internals JAX's tests import (`_convert_element_type`,
`make_single_device_sharding`, `dtypes.dtype`). Values are NumPy's or
recorded from JAX 0.10.2."""
import os

import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs._src import dtypes as src_dtypes
from microjax_rs._src.lax import lax as lax_internal
from microjax_rs._src.sharding_impls import make_single_device_sharding
from microjax_rs.sharding import SingleDeviceSharding

CREATORS = {
    "zeros": lambda device: jnp.zeros((2, 3), jnp.int32, device=device),
    "ones": lambda device: jnp.ones(3, device=device),
    "empty": lambda device: jnp.empty((2,), device=device),
    "full": lambda device: jnp.full((2,), 7, device=device),
    "zeros_like": lambda device: jnp.zeros_like(jnp.ones(2), device=device),
    "ones_like": lambda device: jnp.ones_like(jnp.ones(2), device=device),
    "full_like": lambda device: jnp.full_like(jnp.ones(2), 3, device=device),
    "empty_like": lambda device: jnp.empty_like(jnp.ones(2), device=device),
    "arange": lambda device: jnp.arange(5, device=device),
    "eye": lambda device: jnp.eye(5, 6, device=device),
    "linspace": lambda device: jnp.linspace(5, 6, 7, device=device),
    "linspace_retstep": lambda device: jnp.linspace(5, 6, 7, retstep=True, device=device)[0],
    "array": lambda device: jnp.array([1, 2, 3], device=device),
    "asarray": lambda device: jnp.asarray([1.0, 2.0], device=device),
}


@pytest.mark.parametrize("name", sorted(CREATORS))
def test_device_keyword_places_the_result(name):
    device = jax.devices()[-1]
    made = CREATORS[name]
    out = made(device)
    assert out.devices() == {device}
    np.testing.assert_array_equal(np.asarray(out), np.asarray(made(None)))
    sharding = make_single_device_sharding(device)
    assert made(sharding).sharding == sharding


def test_device_keyword_inside_jit():
    device = jax.devices()[0]
    out = jax.jit(lambda x: jnp.zeros_like(x, device=device) + jnp.full_like(x, 2, device=device))(jnp.ones(2))
    np.testing.assert_array_equal(np.asarray(out), [2, 2])


@pytest.mark.skipif(os.environ.get("MICROJAX_FAKE_GPU", "").strip() in ("1", "true", "yes", "on"),
                    reason="checks the default placement on the CPU; a stand-in GPU is the default device")
def test_make_single_device_sharding_as_jax():
    device = jax.devices()[0]
    sharding = make_single_device_sharding(device)
    # as JAX 0.10.2: the sharding of a default-placed array, memory kind 'device'
    assert sharding == SingleDeviceSharding(device, memory_kind="device")
    assert jnp.zeros(3).sharding == sharding


@pytest.mark.parametrize("k", [-4, -1, 0, 2, 3])
def test_eye_and_tri_with_a_traced_k(k):
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda k: jnp.eye(4, 3, k=k))(k)),
                                  np.eye(4, 3, k=k, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda k: jnp.tri(3, 4, k=k, dtype=jnp.int32))(k)),
                                  np.tri(3, 4, k=k, dtype=np.int32))


def test_diagonal_offsets_beyond_int32():
    # recorded from JAX 0.10.2: eye gives zeros, tri raises OverflowError (x64 off)
    np.testing.assert_array_equal(np.asarray(jnp.eye(3, k=2**33)), np.zeros((3, 3)))
    np.testing.assert_array_equal(np.asarray(jnp.eye(3, k=-2**33)), np.zeros((3, 3)))
    with pytest.raises(OverflowError):
        jnp.tri(3, k=2**33)


def test_take_along_axis_one_hot():
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    i = np.array([[[0], [3], [-1]]])
    out = jnp.take_along_axis(jnp.asarray(x), jnp.asarray(i), axis=2, mode="one_hot")
    np.testing.assert_array_equal(np.asarray(out), np.take_along_axis(x, np.broadcast_to(i, (2, 3, 1)), axis=2))
    # recorded from JAX 0.10.2: an out-of-bounds index gives 0; a NaN in the row spreads
    xn = jnp.array([[1.0, np.nan, 3.0], [4, 5, 6]])
    idx = jnp.array([[0, 2, -1, 5, -7]] * 2)
    got = np.asarray(jnp.take_along_axis(xn, idx, axis=1, mode="one_hot"))
    assert np.isnan(got[0]).all()
    np.testing.assert_array_equal(got[1], [4, 6, 6, 0, 0])
    np.testing.assert_array_equal(
        np.asarray(jnp.take_along_axis(jnp.array([[True, False]]), jnp.array([[1, 0, 1]]), axis=1, mode="one_hot")),
        [[False, True, False]])
    f = jax.jit(lambda x, i: jnp.take_along_axis(x, i, axis=0, mode="one_hot"))
    np.testing.assert_array_equal(np.asarray(f(jnp.arange(5.0), jnp.array([4, 0]))), [4, 0])


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.uint16, np.bool_])
def test_tracers_have_itemsize_and_nbytes(dtype):
    x = np.zeros((2, 3), dtype)
    assert jax.jit(lambda a: a.itemsize + 0 * a.sum())(x).item() == np.dtype(dtype).itemsize
    seen = {}

    def f(a):
        seen["itemsize"], seen["nbytes"] = a.itemsize, a.nbytes
        return a

    jax.jit(f)(x)
    assert seen == {"itemsize": x.itemsize, "nbytes": x.nbytes}


def test_convert_element_type_with_weak_type():
    out = lax_internal._convert_element_type(jnp.arange(3), jnp.float32, weak_type=True)
    assert out.dtype == np.float32 and out.weak_type
    np.testing.assert_array_equal(np.asarray(out), [0, 1, 2])
    out = lax_internal._convert_element_type(2, float, weak_type=False)
    assert out.dtype == np.float32 and not out.weak_type
    traced = jax.jit(lambda x: lax_internal._convert_element_type(x, weak_type=True))(jnp.ones(2, jnp.int32))
    assert traced.dtype == np.int32 and traced.weak_type


def test_src_dtypes_dtype():
    assert src_dtypes.dtype(1) == np.int64  # as JAX: before canonicalization
    assert src_dtypes.dtype(1.0, canonicalize=True) == np.float32
    assert src_dtypes.dtype(jnp.zeros(2, jnp.int8)) == np.int8
    assert src_dtypes.dtype("bfloat16") == jnp.bfloat16.dtype
    assert src_dtypes.python_scalar_types_to_dtypes[complex] == np.complex128


def test_astype_none_is_the_default_float():
    # as JAX 0.10.2 (NumPy's astype(None) is float64, canonicalized)
    for x in (jnp.arange(3), jnp.array([True]), jnp.arange(2.0)):
        assert jnp.astype(x, None).dtype == np.float32
        assert x.astype(None).dtype == np.float32
    np.testing.assert_array_equal(np.asarray(jnp.astype(jnp.arange(3), None)), [0.0, 1.0, 2.0])
    assert jnp.astype(jnp.arange(3), jnp.float32, device=jax.devices()[0]).devices() == {jax.devices()[0]}
    assert src_dtypes._weak_types == [int, float, complex]
