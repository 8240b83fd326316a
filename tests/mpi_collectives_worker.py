"""Run under an MPI launcher by tests/test_distributed.py: checks collectives
between processes against NumPy on the whole (global) data, which every
process can compute. Prints "ok <rank>" when every check passed. With a third
argument "gpu", every process has one stand-in GPU (tests/fake_gpu.py) as its
default device: the same checks run through the GPU routing (global device
list, each process's programs on its own GPU)."""
import os
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
    gpu = len(sys.argv) > 3 and sys.argv[3] == "gpu"
    runs = []
    if gpu:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import fake_gpu
        fake_gpu.install(setattr, runs)
        assert local == 1, "the stand-in GPU is one device per process"
    else:
        jax.config.update("jax_num_cpu_devices", local)
    jax.distributed.initialize()
    nproc, r = jax.process_count(), jax.process_index()
    if gpu:
        # Every process's GPU, process-major; each process addresses its own
        # as CUDA device 0.
        assert [(d.platform, d.id, d.process_index) for d in jax.devices()] == \
            [("gpu", p, p) for p in range(nproc)], jax.devices()
        assert [d.local_hardware_id for d in jax.devices()] == [0] * nproc
        assert jax.local_devices() == [jax.devices()[r]]
        assert jax.device_put(jnp.ones(2)).device == jax.devices()[r]
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

    # all_to_all across processes (through the gather): device j gets block j of every device.
    aa = np.arange(3.0 * n * n).reshape(n * n, 3)
    out = sm(lambda a: jax.lax.all_to_all(a, "x", 0, 0, tiled=True), P("x"), P("x"))(aa)
    close(multihost_utils.process_allgather(out), aa.reshape(n, n, 3).transpose(1, 0, 2).reshape(n * n, 3),
          "all_to_all tiled")
    ab = np.arange(2.0 * n * n).reshape(n, n, 2)  # device i holds ab[i]: [n, 2]
    out = sm(lambda a: jax.lax.all_to_all(a[0], "x", 0, 0)[None], P("x"), P("x"))(ab)
    close(multihost_utils.process_allgather(out), ab.transpose(1, 0, 2), "all_to_all")
    aag = jax.make_array_from_process_local_data(shard, aa[r * local * n:(r + 1) * local * n])
    ga2 = jax.grad(lambda a: sm(lambda a: jax.lax.psum((jax.lax.all_to_all(a, "x", 0, 0, tiled=True) ** 2)
                                                       .sum(), "x"), P("x"), P())(a))(aag)
    close(multihost_utils.process_allgather(ga2), 2 * aa, "grad of all_to_all")

    # Forward mode through collectives between processes.
    t = np.linspace(-1.0, 1.0, full.size).reshape(full.shape)
    tb = t.reshape(n, 2, 2)
    y, dy = jax.jvp(sm(lambda a: jax.lax.psum(a * a, "x"), P("x"), P()), (full,), (t,))
    close(y, (blocks ** 2).sum(0), "jvp psum primal")
    close(dy, (2 * blocks * tb).sum(0), "jvp psum tangent")
    _, dy = jax.jvp(sm(lambda a: jax.lax.pmax(a, "x"), P("x"), P()), (full,), (t,))
    close(dy, tb[-1], "jvp pmax tangent")
    _, dy = jax.jvp(sm(lambda a: jax.lax.all_gather(a, "x", tiled=True), P("x"), P()), (full,), (t,))
    close(dy, t, "jvp all_gather tangent")
    # Second order: forward over reverse (a Hessian-vector product).
    h = lambda w: sm(lambda w, a: jax.lax.psum(jnp.sum((a * w) ** 2), "x"), (P(), P("x")), P())(w, full)
    _, hv = jax.jvp(jax.grad(h), (w,), (v,))
    close(hv, 2 * (full ** 2).sum(0) * np.asarray(v), "Hessian-vector product")

    # Inside loops and conditionals, compiled: the collective is the core's
    # primitive in the loop body (no host callback).
    def scanned(w, a):
        return jax.lax.psum(jax.lax.scan(lambda c, _: (c * w, None), a, None, length=3)[0].sum(), "x")

    fs = jax.jit(sm(lambda a: jax.lax.scan(lambda c, _: (jax.lax.pmean(c * 1.5, "x"), None), a, None,
                                            length=3)[0], P("x"), P("x")))
    text = str(jax.make_jaxpr(fs)(full))
    assert "process_allreduce" in text and "callback" not in text, text
    close(multihost_utils.process_allgather(fs(full)), np.tile(blocks.mean(0) * 1.5 ** 3, (n, 1)),
          "pmean inside scan")
    gs = jax.jit(jax.grad(lambda w: sm(scanned, (P(), P("x")), P())(w, full)))(w)
    close(gs, 3 * np.asarray(w) ** 2 * full.sum(0), "grad through scan with psum")
    fw = jax.jit(sm(lambda a: jax.lax.while_loop(lambda c: jax.lax.psum(c.sum(), "x") < 500.0,
                                                 lambda c: c * 2.0, a), P("x"), P("x")))
    want, k = full.copy(), 0
    while want.sum() < 500.0:
        want, k = want * 2.0, k + 1
    close(multihost_utils.process_allgather(fw(full)), want, "psum in a while_loop's condition")
    fc = jax.jit(sm(lambda a: jax.lax.cond(jax.lax.psum(a.sum(), "x") > 0, lambda a: jax.lax.psum(a, "x"),
                                           lambda a: -jax.lax.psum(a, "x"), a), P("x"), P()))
    close(fc(full), blocks.sum(0), "psum in a cond branch")
    # vmap inside the body: the batch dim passes through the collective.
    close(sm(lambda a: jax.vmap(lambda row: jax.lax.psum(row, "x"))(a), P("x"), P())(g), blocks.sum(0),
          "vmap inside shard_map")
    # Element types: integers exact, bfloat16 through float32, booleans, complex.
    close(sm(lambda a: jax.lax.psum(a, "x"), P("x"), P())(full.astype(np.int32)),
          blocks.astype(np.int32).sum(0), "psum int32")
    got = sm(lambda a: jax.lax.psum(a, "x"), P("x"), P())(jnp.asarray(full, jnp.bfloat16))
    assert got.dtype == jnp.bfloat16
    close(np.asarray(got, np.float32), blocks.sum(0), "psum bfloat16")
    got = sm(lambda a: jax.lax.all_gather(a > 5, "x", tiled=True), P("x"), P())(full)
    assert got.dtype == jnp.bool_ and (np.asarray(got) == (full > 5)).all(), got
    got = sm(lambda a: jax.lax.psum(a, "x"), P("x"), P())(full * (1 + 2j))
    close(got, blocks.sum(0) * (1 + 2j), "psum complex")

    # pmap across processes: each process maps its own devices; collectives span all of them.
    gp = np.arange(3.0 * n).reshape(n, 3)
    lp = gp[r * local:(r + 1) * local]
    close(jax.pmap(lambda v: jax.lax.psum(v, "i"), axis_name="i")(lp), np.tile(gp.sum(0), (local, 1)),
          "pmap psum")
    close(jax.pmap(lambda v: jax.lax.all_gather(v, "i"), axis_name="i")(lp), np.tile(gp, (local, 1, 1)),
          "pmap all_gather")
    close(jax.pmap(lambda v: jax.lax.axis_index("i"), axis_name="i")(lp), np.arange(r * local, (r + 1) * local),
          "pmap axis_index")
    close(jax.pmap(lambda v: v / jax.lax.psum(v, "i"), axis_name="i")(lp), lp / gp.sum(0), "pmap normalize")
    wp = jnp.array([0.5, -1.0, 2.0])
    gwp = jax.grad(lambda w: jax.pmap(lambda w, x: jax.lax.psum(((x * w) ** 2).sum(), "i"), in_axes=(None, 0),
                                      axis_name="i")(w, lp).sum())(wp)
    close(gwp, n * (2 * lp ** 2 * np.asarray(wp)).sum(0), "grad through pmap with psum")

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

    if gpu:
        ran = [str(c) for c in runs]
        assert any("process_allreduce" in t for t in ran), "no collective ran on the stand-in GPU"
    jax.distributed.shutdown()
    print(f"ok {r}", flush=True)


if __name__ == "__main__":
    main()
