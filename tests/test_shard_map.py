"""`jax.shard_map` on one process: values against NumPy and values recorded
from JAX 0.10.2 (4 CPU devices), jit against eager, grad against finite
differences, vmap against a loop, and JAX's exceptions."""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs.experimental.shard_map import shard_map as old_shard_map
from microjax_rs.sharding import Mesh, PartitionSpec as P


@pytest.fixture(autouse=True)
def four_devices():
    jax.config.update("jax_num_cpu_devices", 4)
    yield
    jax.config.update("jax_num_cpu_devices", -1)


def mesh1():
    return Mesh(np.array(jax.devices("cpu")), ("x",))


def mesh2():
    return Mesh(np.array(jax.devices("cpu")).reshape(2, 2), ("x", "y"))


def test_blocks_and_concatenation():
    f = jax.shard_map(lambda a: a * 2 + jax.lax.axis_index("x"), mesh=mesh1(), in_specs=P("x"),
                      out_specs=P("x"))
    np.testing.assert_array_equal(f(jnp.arange(8.0)), np.arange(8.0) * 2 + np.repeat(np.arange(4), 2))


# Recorded from JAX 0.10.2 with 4 CPU devices.
def test_two_axis_mesh_layouts_match_jax():
    x = jnp.arange(32.0).reshape(4, 8)

    def tag(a):
        return a + 100 * jax.lax.axis_index("x") + 10 * jax.lax.axis_index("y")

    got = jax.shard_map(tag, mesh=mesh2(), in_specs=P("x", "y"), out_specs=P("x", "y"))(x)
    np.testing.assert_array_equal(got[:, 4], [14, 22, 130, 138])
    np.testing.assert_array_equal(got[2, :4], [116, 117, 118, 119])
    got = jax.shard_map(tag, mesh=mesh2(), in_specs=P(("x", "y")), out_specs=P(("x", "y")))(x)
    np.testing.assert_array_equal(got[:, 0], [0, 18, 116, 134])
    got = jax.shard_map(tag, mesh=mesh2(), in_specs=P(("y", "x")), out_specs=P(("y", "x")))(x)
    np.testing.assert_array_equal(got[:, 0], [0, 108, 26, 134])


def test_collectives_match_jax():
    m = mesh1()
    x = jnp.arange(8.0)
    np.testing.assert_array_equal(
        jax.shard_map(lambda a: jax.lax.psum(a, "x"), mesh=m, in_specs=P("x"), out_specs=P())(x),
        [12.0, 16.0])
    np.testing.assert_array_equal(
        jax.shard_map(lambda a: jax.lax.ppermute(a, "x", [(0, 1), (1, 2), (2, 3), (3, 0)]), mesh=m,
                      in_specs=P("x"), out_specs=P("x"))(x),
        [6, 7, 0, 1, 2, 3, 4, 5])
    np.testing.assert_array_equal(
        jax.shard_map(lambda a: jax.lax.psum_scatter(a, "x", tiled=True), mesh=m, in_specs=P(),
                      out_specs=P("x"))(x),
        4 * np.arange(8.0))
    v = jnp.array([3.0, 1, 4, 1, 5, 9, 2, 6])
    np.testing.assert_array_equal(
        jax.shard_map(lambda a: jax.lax.pmax(a, "x"), mesh=m, in_specs=P("x"), out_specs=P())(v),
        [5.0, 9.0])
    y = jnp.arange(32.0).reshape(4, 8)
    got = jax.jit(jax.shard_map(lambda a: jax.lax.psum(a, "y"), mesh=mesh2(), in_specs=P("x", "y"),
                                out_specs=P("x")))(y)
    np.testing.assert_array_equal(got, np.asarray(y).reshape(4, 2, 4).sum(1))


def test_replicated_arguments_and_outputs():
    m = mesh1()
    got = jax.shard_map(lambda a, b: a * b, mesh=m, in_specs=(P("x"), P()), out_specs=P("x"))(
        jnp.arange(8.0), 3.0)
    np.testing.assert_array_equal(got, 3 * np.arange(8.0))
    # check_vma=False: an output declared replicated is position 0's.
    got = jax.shard_map(lambda a: a, mesh=m, in_specs=P("x"), out_specs=P(), check_vma=False)(
        jnp.arange(8.0))
    np.testing.assert_array_equal(got, [0.0, 1.0])
    x = jnp.arange(32.0).reshape(4, 8)
    got = jax.shard_map(lambda a: a, mesh=mesh2(), in_specs=P("x"), out_specs=P(None, "x"),
                        check_vma=False)(x)
    np.testing.assert_array_equal(got, np.concatenate([np.asarray(x)[:2], np.asarray(x)[2:]], 1))


def test_jit_matches_eager_and_mesh_context():
    m = mesh2()

    def f(a, b):
        return jax.lax.pmean(jnp.sin(a) * b, ("x", "y")), jax.lax.all_gather(a.sum(), "y")

    sm = jax.shard_map(f, mesh=m, in_specs=(P("x", "y"), P()), out_specs=(P(), P("x")))
    x = jnp.linspace(-1.0, 1.0, 32).reshape(4, 8)
    eager = sm(x, 2.0)
    jitted = jax.jit(sm)(x, 2.0)
    for a, b in zip(eager, jitted):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    blocks = np.asarray(x).reshape(2, 2, 2, 4).transpose(0, 2, 1, 3)
    np.testing.assert_allclose(eager[0], (np.sin(blocks) * 2).mean((0, 1)), rtol=1e-6)
    with jax.set_mesh(m):
        ctx = jax.shard_map(f, in_specs=(P("x", "y"), P()), out_specs=(P(), P("x")))(x, 2.0)
    np.testing.assert_allclose(ctx[0], eager[0])
    with jax.sharding.use_mesh(m):
        assert jax.sharding.get_mesh() is m
    assert jax.sharding.get_mesh() is None


def test_grad_against_finite_differences():
    jax.config.update("jax_enable_x64", True)
    try:
        m = mesh1()

        def loss(w, x):
            def body(w, xb):
                return jax.lax.psum(jnp.sum(jnp.tanh(xb * w) ** 2), "x")
            return jax.shard_map(body, mesh=m, in_specs=(P(), P("x")), out_specs=P())(w, x)

        w = jnp.array([0.3, -0.7], dtype=jnp.float64)
        x = jnp.linspace(-1, 1, 16, dtype=jnp.float64).reshape(8, 2)
        g = jax.grad(loss, argnums=(0, 1))(w, x)
        eps = 1e-6
        for k in range(2):
            e = np.zeros(2)
            e[k] = eps
            fd = (loss(w + e, x) - loss(w - e, x)) / (2 * eps)
            np.testing.assert_allclose(g[0][k], fd, rtol=1e-6)
        ex = np.zeros((8, 2))
        ex[5, 1] = eps
        fd = (loss(w, x + ex) - loss(w, x - ex)) / (2 * eps)
        np.testing.assert_allclose(g[1][5, 1], fd, rtol=1e-6)
        # Second order: the Hessian of the weight's loss against differences of the gradient.
        h = jax.hessian(loss)(w, x)
        e = np.array([eps, 0.0])
        fd = (jax.grad(loss)(w + e, x) - jax.grad(loss)(w - e, x)) / (2 * eps)
        np.testing.assert_allclose(h[:, 0], fd, rtol=1e-5)
    finally:
        jax.config.update("jax_enable_x64", False)


def test_grad_through_psum_times_block():
    # L = sum_b sum_k S_k a_bk with S = psum(a): dL/da_bk = 2 S_k.
    m = mesh1()
    a = jnp.arange(8.0)
    g = jax.grad(lambda a: jax.shard_map(lambda a: jax.lax.psum(a, "x") * a, mesh=m,
                                         in_specs=P("x"), out_specs=P("x"))(a).sum())(a)
    np.testing.assert_allclose(g, np.tile(2 * np.asarray(a).reshape(4, 2).sum(0), 4))
    # Recorded from JAX 0.10.2: an invariant output concatenated over the axis.
    got = jax.shard_map(lambda a: jax.lax.psum(a, "x"), mesh=m, in_specs=P("x"), out_specs=P("x"))(a)
    np.testing.assert_array_equal(got, [12.0, 16.0] * 4)


def test_vmap_matches_a_loop():
    m = mesh2()
    sm = jax.shard_map(lambda a: jax.lax.psum(a * a, ("x", "y")), mesh=m, in_specs=P("x", "y"),
                       out_specs=P())
    xs = jnp.arange(64.0).reshape(2, 4, 8)
    got = jax.vmap(sm)(xs)
    want = np.stack([np.asarray(sm(xs[i])) for i in range(2)])
    np.testing.assert_allclose(got, want)


def test_experimental_spelling_and_decorator():
    m = mesh1()
    f = old_shard_map(lambda a: jax.lax.psum(a, "x"), m, P("x"), P())
    np.testing.assert_array_equal(f(jnp.arange(8.0)), [12.0, 16.0])

    @jax.shard_map(mesh=m, in_specs=P("x"), out_specs=P("x"))
    def double(a):
        return a * 2

    np.testing.assert_array_equal(double(jnp.arange(4.0)), [0.0, 2.0, 4.0, 6.0])


def test_errors_are_jaxs():
    m = mesh1()
    x = jnp.arange(8.0)
    with pytest.raises(ValueError, match="require replication"):
        jax.shard_map(lambda a: a * 2, mesh=m, in_specs=P("x"), out_specs=P())(x)
    with pytest.raises(ValueError, match="not evenly divisible"):
        jax.shard_map(lambda a: a, mesh=m, in_specs=P("x"), out_specs=P("x"))(jnp.arange(6.0))
    with pytest.raises(ValueError, match="must refer to an axis marked as manual"):
        jax.shard_map(lambda a: a, mesh=m, in_specs=P("y"), out_specs=P("x"))(x)
    with pytest.raises(ValueError, match="prefix"):
        jax.shard_map(lambda a: a, mesh=m, in_specs=(P("x"),), out_specs=P("x"))(x, x)
    with pytest.raises(ValueError, match="no longer than"):
        jax.shard_map(lambda a: jax.lax.psum(a.sum(), "x"), mesh=m, in_specs=P("x"),
                      out_specs=P("x"))(x)
    with pytest.raises(ValueError, match="requires a mesh"):
        jax.shard_map(lambda a: a, in_specs=P(), out_specs=P())(x)
    with pytest.raises(TypeError, match="callable"):
        jax.shard_map(3, mesh=m, in_specs=P(), out_specs=P())
    with pytest.raises(NameError, match="unbound axis name"):
        jax.shard_map(lambda a: jax.lax.psum(a, "z"), mesh=m, in_specs=P("x"), out_specs=P())(x)


def test_one_process_distributed_api():
    assert jax.process_count() == 1 and jax.process_index() == 0
    assert jax.process_indices() == [0]
    cpus = jax.devices("cpu")
    assert jax.local_devices(backend="cpu") == cpus and len(cpus) == 4
    assert [d.process_index for d in cpus] == [0, 0, 0, 0]
    from microjax_rs.experimental import multihost_utils
    from microjax_rs.sharding import NamedSharding
    m = mesh1()
    a = jax.make_array_from_process_local_data(NamedSharding(m, P("x")), np.arange(8.0))
    np.testing.assert_array_equal(a, np.arange(8.0))
    b = jax.make_array_from_callback((8,), NamedSharding(m, P("x")), lambda idx: np.arange(8.0)[idx])
    np.testing.assert_array_equal(b, np.arange(8.0))
    np.testing.assert_array_equal(multihost_utils.process_allgather(a), [np.arange(8.0)])
    np.testing.assert_array_equal(multihost_utils.broadcast_one_to_all(a), np.arange(8.0))
    multihost_utils.sync_global_devices("one")
    multihost_utils.assert_equal(a)
    with pytest.raises(ValueError, match="global_shape"):
        jax.make_array_from_process_local_data(NamedSharding(m, P("x")), np.arange(8.0), (16,))
    assert not jax.distributed.is_initialized()
    with pytest.raises(RuntimeError, match="launcher"):
        jax.distributed.initialize(num_processes=2, process_id=0, cluster_detection_method="deactivate")
    jax.distributed.initialize(cluster_detection_method="deactivate")
    try:
        assert jax.distributed.is_initialized() and jax.process_count() == 1
        with pytest.raises(RuntimeError, match="only be called once"):
            jax.distributed.initialize()
    finally:
        jax.distributed.shutdown()
    assert not jax.distributed.is_initialized()
