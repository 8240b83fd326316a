"""The gather/scatter family beyond the operator table: what programs
indexing lowers to (one gather / one scatter, also under vmap), gradients with
repeated indices, JAX's default modes, the params round trip through
`eqn.params`, and errors. Values, jit, FD gradients and vmap of every record
are in tests/op_table/gather.py."""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import lax


def _prims(jaxpr):
    return [e.primitive.name for e in jaxpr.eqns]


def test_traced_array_index_is_one_gather():
    x = jnp.arange(12.0).reshape(3, 4)
    j = jax.make_jaxpr(lambda x, i: x[i, 1:3])(x, jnp.array([0, 2]))
    assert _prims(j.jaxpr).count("gather") == 1


def test_vmap_of_indexing_is_one_gather_and_matches_a_loop():
    xs = np.arange(15.0, dtype=np.float32).reshape(3, 5)
    idx = np.array([4, 0, 2], np.int32)
    f = lambda x, i: x[i]  # noqa: E731
    got = jax.vmap(f)(xs, idx)
    np.testing.assert_array_equal(np.asarray(got), np.stack([xs[k, idx[k]] for k in range(3)]))
    prims = _prims(jax.make_jaxpr(jax.vmap(f))(xs, idx).jaxpr)
    assert prims.count("gather") == 1 and "select_n" not in prims[prims.index("gather"):], prims
    # Array indices under vmap, operand unbatched.
    ii = np.array([[0, 1], [3, 3], [4, 0]], np.int32)
    got = jax.vmap(lambda i: jnp.asarray(xs[0])[i])(ii)
    np.testing.assert_array_equal(np.asarray(got), xs[0][ii])


def test_grad_with_repeated_indices_accumulates():
    idx = jnp.array([0, 2, 2, 2, 1])
    g = jax.grad(lambda x: (x[idx] * jnp.arange(1.0, 6.0)).sum())(jnp.zeros(4))
    np.testing.assert_allclose(np.asarray(g), [1.0, 5.0, 9.0, 0.0])
    g = jax.jit(jax.grad(lambda x, i: x[i].sum()))(jnp.zeros(3), jnp.array([1, 1, 0]))
    np.testing.assert_allclose(np.asarray(g), [1.0, 2.0, 0.0])


def test_at_add_under_jit_is_one_scatter_add_and_drops_out_of_bounds():
    f = jax.jit(lambda x, i: x.at[i].add(1.0))
    out = f(jnp.zeros(4), jnp.array([1, 1, 3, 9, -1]))
    np.testing.assert_allclose(np.asarray(out), [0.0, 2.0, 0.0, 2.0])
    prims = _prims(jax.make_jaxpr(lambda x, i: x.at[i].add(1.0))(jnp.zeros(4), jnp.array([1])).jaxpr)
    assert prims.count("scatter-add") == 1


def test_default_modes_follow_jax():
    x = jnp.arange(4.0)
    i = jnp.array([1, 7, -9])
    # x[i] gathers with PROMISE_IN_BOUNDS: clamped (recorded from JAX 0.10.2)
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda x, i: x[i])(x, i)), [1.0, 3.0, 0.0])
    np.testing.assert_array_equal(np.asarray(x.at[i].get(mode="clip")), [1.0, 3.0, 0.0])
    # a fill value counts only with mode 'fill'
    np.testing.assert_array_equal(np.asarray(x.at[i].get(fill_value=-1.0)), [1.0, 3.0, 0.0])
    np.testing.assert_array_equal(np.asarray(x.at[i].get(mode="fill", fill_value=-1.0)), [1.0, -1.0, -1.0])
    np.testing.assert_array_equal(np.asarray(x.at[i].set(9.0, mode="clip")), [9.0, 9.0, 2.0, 9.0])
    # A traced scalar index alone is a clamped dynamic_slice (as JAX).
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda x, k: x[k])(x, 7)), 3.0)
    # Static out-of-bounds indices clamp too (JAX 0.10.2).
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda x: x[np.array([0, 4])])(x)), [0.0, 3.0])


def test_separated_advanced_indices_move_to_the_front():
    x = np.arange(60.0, dtype=np.float32).reshape(3, 4, 5)
    i, j = np.array([0, 2]), np.array([1, 4])
    got = jax.jit(lambda x, i, j: x[i, :, j])(x, i, j)
    np.testing.assert_array_equal(np.asarray(got), x[i, :, j])
    got = jax.jit(lambda x, i: x[1, 1:3, i])(x, j)
    np.testing.assert_array_equal(np.asarray(got), x[1, 1:3, j])
    got = jax.jit(lambda x, i: x.at[i, :, i].add(1.0))(x, i)
    want = x.copy()
    np.add.at(want, (i, slice(None), i), 1.0)
    np.testing.assert_array_equal(np.asarray(got), want)


def test_scatter_set_gradient_follows_the_winning_update():
    # Repeated index 1: the last update wins, so only its gradient is 1.
    f = lambda x, u: x.at[jnp.array([1, 1, 3])].set(u).sum()  # noqa: E731
    gx, gu = jax.grad(f, argnums=(0, 1))(jnp.ones(4), jnp.ones(3))
    np.testing.assert_allclose(np.asarray(gx), [1.0, 0.0, 1.0, 0.0])
    np.testing.assert_allclose(np.asarray(gu), [0.0, 1.0, 1.0])


def test_params_round_trip_through_bind():
    x = jnp.arange(6.0).reshape(2, 3)
    closed = jax.make_jaxpr(lambda x, i: x.at[i].max(2.0)[i])(x, jnp.array([1, 0]))
    views = {"gather": lax.GatherDimensionNumbers, "scatter-max": lax.ScatterDimensionNumbers}
    for eqn in closed.jaxpr.eqns:
        if eqn.primitive.name in views:
            assert isinstance(eqn.params["dimension_numbers"], views[eqn.primitive.name])
            # as JAX 0.10.2: x[i] gathers PROMISE_IN_BOUNDS, .at[i].max scatters FILL_OR_DROP
            want = "PROMISE_IN_BOUNDS" if eqn.primitive.name == "gather" else "FILL_OR_DROP"
            assert eqn.params["mode"] is getattr(lax.GatherScatterMode, want)
    (gather_eqn,) = [e for e in closed.jaxpr.eqns if e.primitive.name == "gather"]
    out = lax.gather_p.bind(x, jnp.array([[1], [0]]), **gather_eqn.params)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(x)[[1, 0]])


def test_lax_scatter_functions_and_primitives():
    x = jnp.zeros(3)
    i = jnp.array([[0], [0], [2]])
    u = jnp.array([1.0, 2.0, 3.0])
    dn = lax.ScatterDimensionNumbers((), (0,), (0,))
    np.testing.assert_array_equal(np.asarray(lax.scatter_add(x, i, u, dn)), [3.0, 0.0, 3.0])
    np.testing.assert_array_equal(np.asarray(lax.scatter_mul(jnp.ones(3), i, u, dn)), [2.0, 1.0, 3.0])
    np.testing.assert_array_equal(np.asarray(lax.scatter_min(x, i, u, dn)), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(np.asarray(lax.scatter_max(x, i, u, dn)), [2.0, 0.0, 3.0])
    np.testing.assert_array_equal(np.asarray(lax.scatter(x, i, u, dn)), [2.0, 0.0, 3.0])
    assert lax.scatter_add_p.name == "scatter-add" and lax.gather_p.name == "gather"
    assert lax.GatherScatterMode.from_any("drop") is lax.GatherScatterMode.FILL_OR_DROP


def test_errors_name_shapes_and_modes():
    x = jnp.zeros((3, 4))
    dn = lax.GatherDimensionNumbers((1,), (0,), (0,))
    with pytest.raises(TypeError, match=r"gather.*\(3, 4\) and \(2, 2\)"):
        lax.gather(x, jnp.zeros((2, 2), jnp.int32), dn, (1, 4))
    with pytest.raises(TypeError, match="integer dtype"):
        lax.gather(x, jnp.zeros((2, 1)), dn, (1, 4))
    with pytest.raises(ValueError, match="Unknown gather mode"):
        lax.gather(x, jnp.zeros((2, 1), jnp.int32), dn, (1, 4), mode="wrap")
    with pytest.raises(NotImplementedError, match="unique_indices"):
        jax.grad(lambda u: jnp.ones(3).at[jnp.array([0, 0])].multiply(u).sum())(jnp.ones(2))


def test_at_with_traced_indices_and_unit_step_slices():
    x = np.arange(20.0, dtype=np.float32).reshape(4, 5)
    i = np.array([2, 0, 2], np.int32)
    v = np.arange(9.0, dtype=np.float32).reshape(3, 3)
    got = jax.jit(lambda x, i, v: x.at[i, 1:4].add(v))(x, i, v)
    want = x.copy()
    np.add.at(want, (i, slice(1, 4)), v)
    np.testing.assert_array_equal(np.asarray(got), want)
    got = jax.jit(lambda x, i: x.at[1:3, i].set(-1.0))(x, i)
    want = x.copy()
    want[1:3, i] = -1.0
    np.testing.assert_array_equal(np.asarray(got), want)
    g = jax.grad(lambda v: jnp.asarray(x).at[jnp.asarray(i), 1:4].add(v).sum())(v)
    np.testing.assert_array_equal(np.asarray(g), np.ones((3, 3)))
    with pytest.raises(NotImplementedError, match="step 1"):
        jax.jit(lambda x, i: x.at[i, ::2].set(0.0))(x, i)
