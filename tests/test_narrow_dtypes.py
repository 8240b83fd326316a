"""JAX's narrow dtypes (int2/int4/uint2/uint4 and the 8- and 4-bit floats of
ml_dtypes) as names: `jnp.int4` exists and compares with its NumPy dtype, the
dtype queries answer for it (bit width, canonical dtype), and making an array
of one raises TypeError (microjax_rs does not compute with them)."""
import ml_dtypes
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import dtypes
from microjax_rs._src import dtypes as src_dtypes

NARROW = ["int1", "int2", "int4", "uint1", "uint2", "uint4", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz",
          "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu"]

# Bit widths recorded from JAX 0.10.2 (`dtypes.itemsize_bits`).
BITS = {"int1": 1, "uint1": 1, "int2": 2, "uint2": 2, "int4": 4, "uint4": 4, "float4_e2m1fn": 4, "float6_e2m3fn": 6,
        "float6_e3m2fn": 6}


@pytest.mark.parametrize("name", NARROW)
def test_the_name_is_the_ml_dtypes_dtype(name):
    scalar_type = getattr(jnp, name)
    assert repr(scalar_type) == name
    assert scalar_type.dtype == np.dtype(getattr(ml_dtypes, name))
    assert np.dtype(getattr(ml_dtypes, name)) == scalar_type.dtype


@pytest.mark.parametrize("name", NARROW)
def test_dtype_queries_answer(name):
    dt = np.dtype(getattr(ml_dtypes, name))
    assert dtypes.itemsize_bits(getattr(jnp, name)) == BITS.get(name, 8)
    assert dtypes.itemsize_bits(dt) == BITS.get(name, 8)
    # As JAX: a narrow dtype is its own canonical dtype, with or without x64.
    assert src_dtypes.canonicalize_dtype(getattr(jnp, name)) == dt


@pytest.mark.parametrize("name", NARROW)
def test_making_an_array_raises_type_error(name):
    scalar_type = getattr(jnp, name)
    with pytest.raises(TypeError, match=f"dtype '{name}' is not supported by microjax_rs"):
        scalar_type(1)
    with pytest.raises(TypeError, match="not supported"):
        jnp.zeros(3, dtype=scalar_type)
    with pytest.raises(TypeError, match="not supported"):
        jnp.asarray(np.zeros(3, dtype=getattr(ml_dtypes, name)))
    with pytest.raises(TypeError, match="not supported"):
        jax.jit(lambda x: x.astype(scalar_type))(jnp.ones(3))


def test_other_dtypes_keep_their_bit_widths():
    assert dtypes.itemsize_bits(jnp.int8) == 8
    assert dtypes.itemsize_bits(np.float64) == 64
    assert dtypes.itemsize_bits("bfloat16") == 16


def test_scalar_types_equal_numpy_types():
    # as JAX 0.10.2: jnp.float16 == np.float16 (both ways), so `dt in [jnp.float16]` holds for NumPy's
    # type; different types stay unequal and strings never match
    assert jnp.float16 == np.float16 and np.float16 == jnp.float16
    assert np.float16 in [jnp.float16, jnp.bfloat16]
    assert not (jnp.float32 != np.float32)
    assert jnp.float32 == np.dtype("float32")
    assert jnp.float32 != jnp.float64
    assert not (jnp.float32 == "float32")
    assert hash(jnp.int8) == hash(np.int8)
    assert {np.float32: 1}.get(jnp.float32) == 1
    assert jnp.int4 == np.dtype(ml_dtypes.int4)
