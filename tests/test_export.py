"""`microjax_rs.export`: export a jitted function, serialize, deserialize,
call (eagerly and under transforms), pickle, and run the bytes from Rust's
format checks (bad bytes raise ValueError, never crash)."""
import os
import pickle

import numpy as np

import rust_example
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import export, lax


def model(params, x):
    h = jnp.tanh(x @ params["w"] + params["b"])
    c, ys = lax.scan(lambda c, r: (c + jnp.sum(r), c), 0.0, h)
    return {"out": h * 2.0, "total": c, "running": ys}


PARAMS = {"w": np.arange(12.0, dtype=np.float32).reshape(3, 4) / 10, "b": np.ones(4, np.float32)}
X = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)


def test_round_trip_gives_the_same_results_and_avals():
    exp = export.export(jax.jit(model))(PARAMS, X)
    assert [a.shape for a in exp.in_avals] == [(4,), (3, 4), (2, 3)]
    assert exp.out_tree == jax.tree_util.tree_structure(model(PARAMS, X))
    data = exp.serialize()
    assert isinstance(data, bytes) and data[:7] == b"MJXPROG"
    back = export.deserialize(data)
    want = jax.jit(model)(PARAMS, X)  # the same program: bitwise equal
    for got in (exp.call(PARAMS, X), back.call(PARAMS, X)):
        for k in want:
            np.testing.assert_array_equal(np.asarray(got[k]), np.asarray(want[k]))
    assert back.in_tree == exp.in_tree and back.out_tree == exp.out_tree
    assert [a.shape for a in back.out_avals] == [a.shape for a in exp.out_avals]
    assert "Exported(model" in repr(back)


def test_exported_call_composes_with_transforms():
    f = lambda x: jnp.sum(jnp.sin(x) ** 2)
    exp = export.deserialize(export.export(jax.jit(f))(np.zeros(3, np.float32)).serialize())
    x = np.array([0.1, 0.5, -1.0], np.float32)
    g = jax.grad(exp.call)(x)
    np.testing.assert_allclose(np.asarray(g), np.sin(2 * x), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jax.jit(exp.call)(x)), np.asarray(f(x)), rtol=1e-6)
    xs = np.stack([x, -x])
    np.testing.assert_allclose(np.asarray(jax.vmap(exp.call)(xs)), [float(f(x)), float(f(-x))], rtol=1e-6)


def test_static_args_and_shape_dtype_structs():
    f = jax.jit(lambda x, n: x * n, static_argnums=1)
    exp = export.export(f)(jax.ShapeDtypeStruct((2,), jnp.float32), 3)
    np.testing.assert_allclose(np.asarray(exp.call(np.ones(2, np.float32))), [3.0, 3.0])


def test_errors():
    with pytest.raises(ValueError, match="must be the result of `jit`"):
        export.export(lambda x: x)(1.0)
    exp = export.export(jax.jit(lambda x: x + 1))(np.zeros(2, np.float32))
    with pytest.raises(ValueError, match="argument 0 has type f32\\[3\\]"):
        exp.call(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="same pytree structure"):
        exp.call(np.zeros(2, np.float32), 1.0)
    data = exp.serialize()
    with pytest.raises(ValueError, match="bad magic"):
        export.deserialize(b"XX" + data[2:])
    with pytest.raises(ValueError, match="version 1.7"):
        export.deserialize(data[:10] + bytes([7, 0]) + data[12:])
    with pytest.raises(ValueError):
        export.deserialize(data[: len(data) // 2])
    rng = np.random.RandomState(0)
    for _ in range(300):  # corrupted bytes are errors, never crashes
        b = bytearray(data)
        b[rng.randint(len(b))] ^= 1 << rng.randint(8)
        try:
            export.deserialize(bytes(b)).call(np.zeros(2, np.float32))
        except (ValueError, TypeError):
            pass


def test_pickling_arrays_jaxprs_and_exported():
    a = jnp.arange(6.0).reshape(2, 3)
    b = pickle.loads(pickle.dumps(a))
    assert b.dtype == a.dtype and b.shape == a.shape
    np.testing.assert_array_equal(np.asarray(b), np.asarray(a))
    cj = jax.make_jaxpr(lambda x: lax.fori_loop(0, 3, lambda i, c: c * x, x) + a)(a)
    cj2 = pickle.loads(pickle.dumps(cj))
    assert str(cj2) == str(cj)
    exp = export.export(jax.jit(lambda x: x * 2))(a)
    exp2 = pickle.loads(pickle.dumps(exp))
    np.testing.assert_array_equal(np.asarray(exp2.call(a)), np.asarray(a) * 2)


@pytest.mark.skipif(not rust_example.have_cargo(), reason="cargo not available")
def test_rust_example_runs_an_exported_program(tmp_path):
    f = jax.jit(lambda x, y: (jnp.tanh(x) @ y, lax.fori_loop(0, 4, lambda i, c: c * 2.0, x)))
    x = np.array([[0.5, -1.0]], np.float32)
    y = np.array([[1.0], [2.0]], np.float32)
    prog = tmp_path / "prog.mjx"
    prog.write_bytes(export.export(f)(x, y).serialize())
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    # The build `make test`'s cargo-test stage already made of the example.
    res = rust_example.run_exported([str(prog), str(tmp_path / "x.npy"), str(tmp_path / "y.npy")])
    assert res.returncode == 0, res.stderr
    want = np.tanh(x) @ y
    assert "output 0: f32[1,1]" in res.stdout
    assert f"{want[0, 0]:.4f}"[:5] in res.stdout
    assert "output 1: f32[1,2] = F32([8.0, -16.0])" in res.stdout


@jax.jit
def _module_level_jitted(x):
    return x * 3


def _plain(x):
    return x + 1


def test_jitted_functions_pickle_by_reference_or_by_value():
    g = pickle.loads(pickle.dumps(_module_level_jitted))
    assert g is _module_level_jitted
    h = pickle.loads(pickle.dumps(jax.jit(_plain)))
    np.testing.assert_allclose(np.asarray(h(jnp.ones(2))), [2.0, 2.0])
    s = pickle.loads(pickle.dumps(jax.jit(_scaled, static_argnums=1)))
    np.testing.assert_allclose(np.asarray(s(jnp.ones(2), 4)), [4.0, 4.0])
    assert s._impl.static_argnums == (1,)


def _scaled(x, n):
    return x * n


def _nested_jits(depth):
    f = lambda x: x + 1.0  # noqa: E731
    for _ in range(depth):
        f = jax.jit(lambda x, g=f: g(x) * 2.0)
    return f


def test_export_refuses_what_deserialize_refuses():
    x = np.float32(0.5)
    # Rank: 32 axes load; 33 are refused when exporting, as a ValueError.
    at_limit = jax.jit(lambda v: jnp.sum(jnp.reshape(v, (1,) * 32) * 3.0))
    loaded = export.deserialize(export.export(at_limit)(np.ones(1, np.float32)).serialize())
    assert float(loaded.call(np.full(1, 2.0, np.float32))) == 6.0
    over = jax.jit(lambda v: jnp.sum(jnp.reshape(v, (1,) * 33) * 3.0))
    with pytest.raises(ValueError, match="rank 33.*deserialize"):
        export.export(over)(np.ones(1, np.float32))
    # Nesting: 32 nested sub-programs load; 33 are refused.
    fine = export.export(jax.jit(_nested_jits(32)))(x)
    assert float(export.deserialize(fine.serialize()).call(x)) == 1.5 * 2.0 ** 32
    with pytest.raises(ValueError, match="nest.*deserialize"):
        export.export(jax.jit(_nested_jits(33)))(x)
