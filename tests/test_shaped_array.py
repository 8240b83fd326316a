"""`core.ShapedArray` (the Rust aval class) against JAX's API, and the
dtype facts the Python side reads from Rust's dtype table."""
import pickle

import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import core
from microjax_rs._src import tables

# What these tests check does not depend on the default device (conftest.py).
pytestmark = pytest.mark.device_independent


def test_shaped_array_api_matches_jax():
    # Values recorded from JAX 0.10.2 (jax.core.ShapedArray).
    a = core.ShapedArray((2, 3), jnp.float32)
    assert a.shape == (2, 3) and a.dtype == np.dtype("float32") and a.weak_type is False
    assert (a.ndim, a.size) == (2, 6)
    assert repr(a) == "ShapedArray(float32[2,3])" and str(a) == "float32[2,3]"
    w = a.update(weak_type=True)
    assert repr(w) == "ShapedArray(float32[2,3], weak_type=True)" and str(w) == "~float32[2,3]"
    assert a.str_short() == "f32[2,3]" and a.str_short(short_dtypes=False) == "float32[2,3]"
    assert a == core.ShapedArray([2, 3], "float32") and hash(a) == hash(core.ShapedArray((2, 3), "float32"))
    assert a != w and a != core.ShapedArray((3, 2), "float32") and a != "f32[2,3]"
    assert a.update(shape=(4,), dtype="int32") == core.ShapedArray((4,), np.int32)
    assert w.strip_weak_type() == a
    assert a.to_tangent_aval() is a
    assert core.ShapedArray((3,), "int32").to_tangent_aval() == core.ShapedArray((3,), "float0")
    assert pickle.loads(pickle.dumps(w)) == w
    assert core.ShapedArray.from_record(a.record()) == a
    assert len(a.sharding.spec) == 2


def test_tracer_avals_are_shared_shaped_arrays():
    seen = []

    def f(x):
        y = jnp.sin(x) * 2.0
        seen.extend([x.aval, y.aval])
        return jnp.sum(y)

    jax.grad(f)(jnp.ones(3, jnp.float32))
    assert all(type(a) is core.ShapedArray for a in seen)
    assert seen[0] is seen[1] and seen[0] == core.ShapedArray((3,), "float32")
    assert core.get_aval(jnp.ones(3, jnp.float32)) is seen[0]


def test_float_bits_come_from_the_dtype_table():
    from microjax_rs.random import _prng

    # (bits, explicit mantissa bits), as np.finfo has them.
    assert _prng._FLOAT_BITS == {"float16": (16, 10), "bfloat16": (16, 7), "float32": (32, 23),
                                 "float64": (64, 52)}
    for name in ("float16", "float32", "float64"):
        assert tables.MANTISSA_BITS[name] == np.finfo(name).nmant
    assert _prng._UINT == {8: "uint8", 16: "uint16", 32: "uint32", 64: "uint64"}


@pytest.mark.parametrize("x", [0.7, np.float32(0.7), "array"])
def test_grad_one_path_for_every_argument_form(x):
    # A Python float, a NumPy scalar (flattened by the pytree hook) and an
    # array give the same value and gradient through the one grad path.
    x = jnp.asarray(np.float32(0.7)) if isinstance(x, str) else x
    f = lambda x: jnp.sin(x) * jnp.exp(x) + jnp.tanh(x)
    v, g = jax.value_and_grad(f)(x)
    want = np.cos(0.7) * np.exp(0.7) + np.sin(0.7) * np.exp(0.7) + 1 - np.tanh(0.7) ** 2
    assert float(v) == pytest.approx(np.sin(0.7) * np.exp(0.7) + np.tanh(0.7), rel=1e-6)
    assert float(g) == pytest.approx(want, rel=1e-6)
    (v2, aux), g2 = jax.value_and_grad(lambda x: (f(x), 3), has_aux=True)(x)
    assert (float(v2), aux, float(g2)) == (float(v), 3, float(g))
    assert float(jax.grad(jax.grad(f))(x)) == pytest.approx(
        float(jax.grad(lambda y: jax.grad(f)(y))(x)), rel=1e-6)
