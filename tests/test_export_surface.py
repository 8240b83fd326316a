"""`jax.export` beyond export/serialize/call: VJPs serialized with
`vjp_order`, the `Exported` attributes JAX code reads, the module-level
constants, `symbolic_shape` (parsed; exporting with it raises, as there is
no shape polymorphism) and `DisabledSafetyCheck`."""
import pickle

import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import export


def f(x, y):
    return jnp.sin(x) * y, jnp.sum(x * x)


X = jnp.asarray(np.linspace(-1.0, 1.0, 4, dtype=np.float32))
Y = jnp.asarray(np.linspace(0.5, 2.0, 4, dtype=np.float32))


def test_vjp_of_an_export_matches_jax_vjp():
    exp = export.export(jax.jit(f))(X, Y)
    assert exp.has_vjp()
    ct = (jnp.ones(4), jnp.float32(2.0))
    got = exp.vjp().call(X, Y, *ct)
    _, pullback = jax.vjp(f, X, Y)
    want = pullback(ct)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
    # d/dx [sin(x) y] . 1 + d/dx [sum x^2] . 2 = cos(x) y + 4x
    np.testing.assert_allclose(np.asarray(got[0]), np.cos(np.asarray(X)) * np.asarray(Y) + 4 * np.asarray(X),
                               rtol=1e-6)


def test_serialize_with_vjp_order_keeps_vjps_after_deserialize():
    exp = export.export(jax.jit(f))(X, Y)
    plain = export.deserialize(exp.serialize())
    assert not plain.has_vjp()
    with pytest.raises(ValueError, match="No VJP is available"):
        plain.vjp()
    two = export.deserialize(exp.serialize(vjp_order=2))
    ct = (jnp.ones(4), jnp.float32(1.0))
    np.testing.assert_array_equal(np.asarray(two.vjp().call(X, Y, *ct)[1]),
                                  np.asarray(exp.vjp().call(X, Y, *ct)[1]))
    second = two.vjp().vjp()
    assert len(second.in_avals) == 2 + 2 + 2 and len(second.out_avals) == 4
    with pytest.raises(ValueError, match="No VJP is available"):
        second.vjp()
    with pytest.raises(ValueError):
        exp.serialize(vjp_order=-1)
    # pickling keeps the program (not the VJPs)
    assert pickle.loads(pickle.dumps(exp)).fun_name == "f"


def test_second_order_vjp_matches_finite_differences():
    jax.config.update("jax_enable_x64", True)
    try:
        def g(x):
            return jnp.sum(jnp.sin(x) ** 2)

        x = jnp.asarray(np.array([0.3, -0.7, 1.1]))
        exp = export.deserialize(export.export(jax.jit(g))(x).serialize(vjp_order=2))
        grad = lambda v: np.asarray(exp.vjp().call(v, jnp.float64(1.0))[0])  # noqa: E731
        np.testing.assert_allclose(grad(x), np.sin(2 * np.asarray(x)), rtol=1e-12)
        # the VJP of the VJP, with cotangent e_i on the gradient: row i of the Hessian
        h = exp.vjp().vjp()
        eps = 1e-6
        for i in range(3):
            e = np.zeros(3)
            e[i] = 1.0
            row = np.asarray(h.call(x, jnp.float64(1.0), jnp.asarray(e))[0])
            fd = (grad(x + eps * e) - grad(x - eps * e)) / (2 * eps)
            np.testing.assert_allclose(row, fd, rtol=1e-6, atol=1e-9)
    finally:
        jax.config.update("jax_enable_x64", False)


def test_exported_attributes_and_module_constants():
    exp = export.export(jax.jit(f))(X, Y)
    assert exp.platforms == ("cpu",) and exp.nr_devices == 1
    assert (export.minimum_supported_calling_convention_version <= exp.calling_convention_version
            <= export.maximum_supported_calling_convention_version)
    assert exp.in_shardings_hlo == (None, None) and exp.out_shardings_hlo == (None, None)
    assert exp.module_kept_var_idx == (0, 1)
    assert exp.ordered_effects == () and exp.unordered_effects == ()
    assert "sin" in exp.mlir_module()
    assert export.default_export_platform() == "cpu"
    checks = (export.DisabledSafetyCheck.platform(),)
    exp2 = export.export(jax.jit(f), disabled_checks=checks)(X, Y)
    assert exp2.disabled_safety_checks == checks
    assert export.deserialize(exp2.serialize()).disabled_safety_checks == checks


def test_export_needs_a_jitted_function():
    with pytest.raises(ValueError, match="must be the result of `jit`"):
        export.export(f)


def test_symbolic_shapes_parse_and_export_refuses_them():
    b, four = export.symbolic_shape("b, 4")
    assert four == 4 and repr(b) == "b"
    assert repr(export.symbolic_shape("(b, 2*n + 1)")[1]) == "2*n + 1"
    assert export.symbolic_shape("_, 3", like=(7, 3)) == (7, 3)
    with pytest.raises(ValueError, match="syntax error"):
        export.symbolic_shape("b, 4$")
    with pytest.raises(ValueError, match="like"):
        export.symbolic_shape("_, 3")
    spec = jax.ShapeDtypeStruct(export.symbolic_shape("b, 4"), np.float32)
    with pytest.raises(NotImplementedError, match="shape polymorphism"):
        export.export(jax.jit(lambda x: x * 2))(spec)
    specs = export.symbolic_args_specs((np.zeros((2, 3), np.float32),), "a, 3")
    assert repr(specs[0].shape[0]) == "a" and specs[0].shape[1] == 3
