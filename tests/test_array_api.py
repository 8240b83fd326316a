"""The Python array API standard's entry points: `Array.__array_namespace__`,
`jnp.__array_api_version__` and the inspection object of
`jnp.__array_namespace_info__()`, against what JAX 0.10.2 returns and raises.
The standard's own test suite is run by tools/array_api_tests.sh (figures in
docs/COMPATIBILITY.md)."""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp

# JAX 0.10.2's inspection answers with x64 off: kind -> dtype names.
JAX_DTYPES_32 = {
    None: {"bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float32", "complex64"},
    "bool": {"bool"},
    "signed integer": {"int8", "int16", "int32"},
    "unsigned integer": {"uint8", "uint16", "uint32"},
    "integral": {"int8", "int16", "int32", "uint8", "uint16", "uint32"},
    "real floating": {"float32"},
    "complex floating": {"complex64"},
    "numeric": {"int8", "int16", "int32", "uint8", "uint16", "uint32", "float32", "complex64"},
    ("real floating", "complex floating"): {"float32", "complex64"},
}
X64_EXTRA = {"int64", "uint64", "float64", "complex128"}


def test_version():
    assert jnp.__array_api_version__ == "2024.12"


@pytest.mark.parametrize("api_version", [None, "2024.12"])
def test_namespace_of_an_array(api_version):
    x = jnp.arange(3.0)
    assert x.__array_namespace__(api_version=api_version) is jnp
    assert x.__array_namespace__() is jnp


def test_namespace_of_a_tracer():
    seen = []

    def f(x):
        seen.append(x.__array_namespace__())
        xp = x.__array_namespace__()
        return xp.sin(x)

    out = jax.jit(f)(jnp.ones(2))
    np.testing.assert_allclose(np.asarray(out), np.sin(np.ones(2, np.float32)), rtol=1e-6)
    assert seen == [jnp]
    assert jax.grad(lambda x: x.__array_namespace__().sum(x * x))(jnp.ones(3)).shape == (3,)


@pytest.mark.parametrize("api_version", ["2023.12", "2021.12", "2025.12", "latest"])
def test_unknown_version_is_a_value_error(api_version):
    # JAX: ValueError "api_version='2023.12' is not available; available versions are: ['2024.12']"
    with pytest.raises(ValueError, match=r"api_version='[^']*' is not available; available versions are: \['2024.12'\]"):
        jnp.ones(2).__array_namespace__(api_version=api_version)


def test_api_version_is_keyword_only():
    with pytest.raises(TypeError):
        jnp.ones(2).__array_namespace__("2024.12")


def test_capabilities():
    info = jnp.__array_namespace_info__()
    assert info.capabilities() == {"boolean indexing": False, "data-dependent shapes": False, "max dimensions": 64}


def test_default_device_and_devices():
    info = jnp.__array_namespace_info__()
    assert info.default_device() is None
    devices = info.devices()
    assert devices[0] is None
    assert all(d in devices for d in jax.devices())


def test_default_dtypes():
    out = jnp.__array_namespace_info__().default_dtypes()
    assert out == {"real floating": np.dtype("float32"), "complex floating": np.dtype("complex64"),
                   "integral": np.dtype("int32"), "indexing": np.dtype("int32")}
    assert jnp.__array_namespace_info__().default_dtypes(device=jax.devices()[0]) == out


def test_default_dtypes_x64(x64):
    out = jnp.__array_namespace_info__().default_dtypes()
    assert out == {"real floating": np.dtype("float64"), "complex floating": np.dtype("complex128"),
                   "integral": np.dtype("int64"), "indexing": np.dtype("int64")}


@pytest.mark.parametrize("kind", list(JAX_DTYPES_32), ids=str)
def test_dtypes(kind):
    out = jnp.__array_namespace_info__().dtypes(kind=kind)
    assert set(out) == JAX_DTYPES_32[kind]
    assert all(out[name] == np.dtype(name) and isinstance(out[name], np.dtype) for name in out)


@pytest.mark.parametrize("kind", [None, "numeric", "integral", "real floating"], ids=str)
def test_dtypes_x64(x64, kind):
    out = jnp.__array_namespace_info__().dtypes(kind=kind)
    expected = {n for n in JAX_DTYPES_32[kind] | X64_EXTRA if jnp.isdtype(np.dtype(n), kind or ("numeric", "bool"))}
    assert set(out) == expected


def test_dtypes_unknown_kind_is_a_key_error():
    info = jnp.__array_namespace_info__()
    with pytest.raises(KeyError):
        info.dtypes(kind="float")
    with pytest.raises(KeyError):
        info.dtypes(kind=("bool", "strings"))


# ---------------------------------------------------------------- semantics the standard's suite checks


def test_signbit_of_signed_nans_and_zeros():
    x = np.array([-np.nan, np.nan, -0.0, 0.0, -np.inf, 1.0], np.float32)
    np.testing.assert_array_equal(np.asarray(jnp.signbit(x)), np.signbit(x))
    np.testing.assert_array_equal(np.asarray(jax.jit(jnp.signbit)(x)), np.signbit(x))


@pytest.mark.parametrize("fn", [jnp.vecdot, jnp.linalg.vecdot])
def test_vecdot_conjugates_the_first_operand(fn):
    x1 = np.array([1j, 2j, 3j], np.complex64)
    x2 = np.array([1, 2j, 3], np.complex64)
    np.testing.assert_allclose(np.asarray(fn(x1, x2)), np.vecdot(x1, x2))
    assert complex(fn(x1, x2)) == 4 - 10j


def test_expand_dims_out_of_range_is_value_and_index_error():
    # JAX raises ValueError; the array API asks for IndexError: NumPy's AxisError is both.
    for axis in (3, -4):
        with pytest.raises(ValueError, match="out of bounds"):
            jnp.expand_dims(jnp.ones((2, 3)), axis)
        with pytest.raises(IndexError):
            jnp.expand_dims(jnp.ones((2, 3)), axis)
    assert jnp.expand_dims(jnp.ones((2, 3)), -3).shape == (1, 2, 3)


def test_reshape_takes_shape_and_copy():
    x = jnp.arange(6.0)
    np.testing.assert_array_equal(np.asarray(jnp.reshape(x, shape=(2, 3), copy=True)), np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(np.asarray(jnp.reshape(x, (3, 2), "F")), np.arange(6.0).reshape((3, 2), order="F"))
    with pytest.raises(TypeError):
        jnp.reshape(x)


def test_pinv_rtol_per_matrix_and_empty_stacks():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 3)).astype(np.float32)
    rtol = np.array([1e-3, 0.9], np.float32)
    expected = np.stack([np.linalg.pinv(a[i], rtol=rtol[i]) for i in range(2)])
    np.testing.assert_allclose(np.asarray(jnp.linalg.pinv(a, rtol=rtol)), expected, rtol=1e-4, atol=1e-4)
    assert jnp.linalg.pinv(jnp.ones((0, 2, 3)), rtol=jnp.array(0.1)).shape == (0, 3, 2)


# Infinite parts: C99 Annex G's values (the standard's special cases), which Python's cmath
# follows; cmath raises where C99 signals "invalid" (those are skipped). Inputs with a zero
# part are left out (on the branch cuts the signs of zeros follow JAX, not C99: see the
# complex kernels), and so are results with a NaN part (the standard and C99 differ on
# some, e.g. tanh(+0 + NaN j) is +0 + NaN j in the standard); the suite checks those.
_SPECIAL_PARTS = [0.0, -0.0, 1.5, -1.5, np.inf, -np.inf, np.nan]
_CMATH = ("sqrt", "sinh", "cosh", "tanh", "tan", "asin", "asinh", "acos", "acosh", "atanh")


def _same_special(out, ref):
    """Equal parts (infinities with their signs), NaN where the reference is NaN."""
    for a, b in ((out.real, ref.real), (out.imag, ref.imag)):
        if np.isnan(b):
            if not np.isnan(a):
                return False
        elif not (a == b or np.isclose(a, b, rtol=1e-6, atol=1e-6)):
            return False
    return True


@pytest.mark.parametrize("name", _CMATH)
def test_complex_special_values_follow_c99(name):
    import cmath
    zs = [complex(x, y) for x in _SPECIAL_PARTS for y in _SPECIAL_PARTS]
    out = np.asarray(getattr(jnp, name)(np.array(zs, np.complex128 if jax.config.x64_enabled else np.complex64)))
    bad = []
    for z, o in zip(zs, out):
        if z.real == 0 or z.imag == 0:
            continue
        try:
            ref = getattr(cmath, name)(z)
        except ValueError:
            continue
        if np.isnan(ref.real) or np.isnan(ref.imag):
            continue
        if not _same_special(complex(o), ref):
            bad.append((z, complex(o), ref))
    assert not bad, bad


@pytest.mark.parametrize("name, z", [("asin", 1 + 3126j), ("asin", 1 + 2731j), ("asinh", 3126 + 1j),
                                     ("asinh", -1e30 + 5e29j), ("tan", 1 + 45j), ("tan", 1 - 500j),
                                     ("tanh", 45 + 1j), ("tanh", -400 + 2j), ("asin", -0.3 + 1e-4j),
                                     ("asinh", 1e-6 + 2e-6j)])
def test_complex64_large_and_small_arguments(name, z):
    ref = getattr(np, {"asin": "arcsin", "asinh": "arcsinh"}.get(name, name))(np.complex128(z))
    out = complex(getattr(jnp, name)(np.complex64(z)))
    np.testing.assert_allclose(out, ref, rtol=1e-5)
