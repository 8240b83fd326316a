"""Run under an MPI launcher by tests/test_distributed.py: checks collectives
between processes against NumPy on the whole (global) data, which every
process can compute. Prints "ok <rank>" when every check passed."""
import sys

import numpy as np

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs.experimental import multihost_utils
from microjax_rs.sharding import Mesh, NamedSharding, PartitionSpec as P


def close(a, b, what):
    a = np.asarray(a)
    b = np.asarray(b)
    if a.shape != b.shape or not np.allclose(a, b, rtol=1e-5, atol=1e-6):
        raise AssertionError(f"{what}: got {a}, want {b}")


def main():
    # argv: the process count, then the CPU devices of each process.
    local = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    jax.config.update("jax_num_cpu_devices", local)
    jax.distributed.initialize()
    nproc, r = jax.process_count(), jax.process_index()
    assert nproc == int(sys.argv[1]), (nproc, sys.argv)
    assert [d.process_index for d in jax.local_devices()] == [r] * local
    n = nproc * local  # devices in the run
    assert len(jax.devices()) == n and jax.device_count() == n and jax.local_device_count() == local
    mesh = Mesh(np.array(jax.devices()), ("x",))
    full = np.arange(4.0 * n).reshape(2 * n, 2)  # every process knows the global value
    shard = NamedSharding(mesh, P("x"))
    mine = slice(2 * r * local, 2 * (r + 1) * local)
    g = jax.make_array_from_process_local_data(shard, full[mine])
    assert g.shape == full.shape and not g.is_fully_addressable
    close(multihost_utils.process_allgather(g), full, "process_allgather of a global array")

    def sm(f, ins, out):
        return jax.shard_map(f, mesh=mesh, in_specs=ins, out_specs=out)

    blocks = full.reshape(n, 2, 2)
    close(sm(lambda a: jax.lax.psum(a, "x"), P("x"), P())(g), blocks.sum(0), "psum")
    close(jax.jit(sm(lambda a: jax.lax.pmean(a, "x"), P("x"), P()))(g), blocks.mean(0), "jit pmean")
    close(sm(lambda a: jax.lax.pmax(a, "x"), P("x"), P())(g), blocks.max(0), "pmax")
    close(sm(lambda a: jax.lax.pmin(a, "x"), P("x"), P())(g), blocks.min(0), "pmin")
    close(sm(lambda a: jax.lax.all_gather(a, "x", tiled=True), P("x"), P())(g), full, "all_gather")
    close(sm(lambda a: jax.lax.all_gather(a, "x"), P("x"), P())(g), blocks, "all_gather stacked")
    close(sm(lambda a: jnp.full((1,), jax.lax.axis_index("x")), P("x"), P("x"))(full).addressable_data(0),
          np.arange(r * local, (r + 1) * local), "axis_index")
    assert sm(lambda a: jnp.zeros(()) + jax.lax.axis_size("x"), P("x"), P())(g) == n
    perm = [(i, (i + 1) % n) for i in range(n)]
    out = sm(lambda a: jax.lax.ppermute(a, "x", perm), P("x"), P("x"))(g)
    close(multihost_utils.process_allgather(out), np.roll(blocks, 1, 0).reshape(full.shape), "ppermute")
    out = sm(lambda a: jax.lax.psum_scatter(a, "x", tiled=True), P(), P("x"))(full)
    close(multihost_utils.process_allgather(out), n * full, "psum_scatter")
    # A whole array passed by every process is split like a global one.
    close(sm(lambda a: jax.lax.psum(a, "x"), P("x"), P())(full), blocks.sum(0), "psum of a whole array")

    # Derivatives: a loss inside shard_map, gradients outside, against NumPy.
    def loss(w, a):
        return sm(lambda w, a: jax.lax.psum(jnp.sum((a * w) ** 2), "x"), (P(), P("x")), P())(w, a)

    w = jnp.array([0.5, -1.5])
    gw, ga = jax.jit(jax.grad(loss, argnums=(0, 1)))(w, g)
    close(gw, (2 * full ** 2 * np.asarray(w)).sum(0), "grad of a replicated weight")
    close(multihost_utils.process_allgather(ga), 2 * full * np.asarray(w) ** 2, "grad of a global array")
    v = jnp.array([3.0, 1.0])
    gmax = jax.grad(lambda v: sm(lambda v, a: jax.lax.pmax(a * v, "x").sum(), (P(), P("x")), P())(v, g))(v)
    close(gmax, full[-2:].sum(0), "grad of pmax")  # the last block holds every maximum
    # vmap outside shard_map.
    out = jax.vmap(sm(lambda a: jax.lax.psum(a, "x"), P("x"), P()))(jnp.stack([full, 2 * full]))
    close(out, np.stack([blocks.sum(0), 2 * blocks.sum(0)]), "vmap of shard_map")

    # multihost_utils on process-local data.
    close(multihost_utils.process_allgather(jnp.array([r])), np.arange(nproc)[:, None], "allgather stacked")
    close(multihost_utils.process_allgather(jnp.array([r, r]), tiled=True),
          np.repeat(np.arange(nproc), 2), "allgather tiled")
    close(multihost_utils.broadcast_one_to_all(jnp.array(10.0 + r)), 10.0, "broadcast_one_to_all")
    multihost_utils.sync_global_devices("checks")
    multihost_utils.assert_equal(jnp.arange(3))
    try:
        multihost_utils.assert_equal(jnp.array([r]))
    except AssertionError:
        pass
    else:
        raise AssertionError("assert_equal accepted different values")

    if n == 4 and local in (1, 2):
        # A 2x2 mesh: 'x' and 'y' both span processes.
        m2 = Mesh(np.array(jax.devices()).reshape(2, 2), ("x", "y"))
        x2 = np.arange(32.0).reshape(4, 8)
        got = jax.shard_map(lambda a: jax.lax.psum(a, "y"), mesh=m2, in_specs=P("x", "y"),
                            out_specs=P("x"))(x2)
        close(multihost_utils.process_allgather(got), x2.reshape(4, 2, 4).sum(1), "psum over y of 2x2")
        got = jax.shard_map(lambda a: jax.lax.psum(a, ("x", "y")), mesh=m2, in_specs=P("x", "y"),
                            out_specs=P())(x2)
        close(got, x2.reshape(2, 2, 2, 4).sum((0, 2)), "psum over x and y of 2x2")

    # Mismatched collectives: every process raises instead of hanging or corrupting.
    jax.config.update("microjax_collective_checks", True)
    shape = (2,) if r == 0 else (3,)
    try:
        sm(lambda a: jax.lax.psum(a, "x"), P(), P())(jnp.ones(shape))
    except RuntimeError as e:
        assert "mismatched collectives" in str(e), e
    else:
        raise AssertionError("a mismatched psum was not detected")
    jax.config.update("microjax_collective_checks", False)

    jax.distributed.shutdown()
    print(f"ok {r}", flush=True)


if __name__ == "__main__":
    main()
