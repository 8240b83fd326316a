"""Data-parallel training of a small MLP with `shard_map` and `pmean` of gradients.

Run it on one process or under an MPI launcher:

    python examples/data_parallel.py
    mpirun -np 4 python examples/data_parallel.py

Every process holds its slice of each global batch (`make_array_from_process_local_data`);
the parameters are replicated. Each step computes the gradient of the process's
slice, averages the gradients over the `data` axis (`lax.pmean`, an MPI
collective between processes) and applies SGD. With `--check`, the final
parameters are compared with plain training on the whole batch in one process
(the run fails if they differ by more than float32 rounding), and the gradient
of a loss computed inside `shard_map` and differentiated outside it is compared
too."""
import argparse
import hashlib
import json

import numpy as np

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs.sharding import Mesh, NamedSharding, PartitionSpec as P


def init_params(rng, sizes):
    return [(rng.standard_normal((m, n)).astype(np.float32) / np.sqrt(m),
             np.zeros(n, np.float32)) for m, n in zip(sizes[:-1], sizes[1:])]


def loss_fn(params, x, y):
    h = x
    for w, b in params[:-1]:
        h = jnp.tanh(h @ w + b)
    w, b = params[-1]
    logits = h @ w + b
    return jnp.mean(jnp.sum((logits - y) ** 2, axis=-1))


def sgd(params, grads, lr):
    return jax.tree.map(lambda p, g: p - lr * g, params, grads)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--batch", type=int, default=64, help="global batch size")
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()

    jax.distributed.initialize()
    nproc, pid = jax.process_count(), jax.process_index()
    mesh = Mesh(np.array(jax.devices()), ("data",))
    ndev = mesh.size
    if args.batch % ndev:
        raise SystemExit(f"the global batch {args.batch} must split over {ndev} devices")

    rng = np.random.default_rng(0)
    params = init_params(rng, [16, 32, 4])
    xs = rng.standard_normal((args.steps, args.batch, 16)).astype(np.float32)
    ys = rng.standard_normal((args.steps, args.batch, 4)).astype(np.float32)
    per_proc = args.batch // nproc
    mine = slice(pid * per_proc, (pid + 1) * per_proc)
    batch_sharding = NamedSharding(mesh, P("data"))

    def local_step(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        grads = jax.lax.pmean(grads, "data")
        return sgd(params, grads, args.lr), jax.lax.pmean(loss, "data")

    step = jax.jit(jax.shard_map(local_step, mesh=mesh, in_specs=(P(), P("data"), P("data")),
                                 out_specs=(P(), P())))
    p = params
    losses = []
    for t in range(args.steps):
        x = jax.make_array_from_process_local_data(batch_sharding, xs[t, mine])
        y = jax.make_array_from_process_local_data(batch_sharding, ys[t, mine])
        p, loss = step(p, x, y)
        losses.append(float(loss))

    report = {"processes": nproc, "devices": ndev, "first_loss": losses[0], "last_loss": losses[-1],
              # The parameters' bits, to compare runs.
              "params_sha256": hashlib.sha256(b"".join(
                  np.asarray(leaf).tobytes() for leaf in jax.tree.leaves(p))).hexdigest()}
    if args.check:
        # The same training on the whole batch in this process, without shard_map.
        ref = params
        for t in range(args.steps):
            ref = sgd(ref, jax.grad(loss_fn)(ref, xs[t], ys[t]), args.lr)
        diffs = [float(np.max(np.abs(np.asarray(a) - np.asarray(b))))
                 for a, b in zip(jax.tree.leaves(p), jax.tree.leaves(ref))]
        report["max_abs_diff"] = max(diffs)
        # A loss computed inside shard_map, differentiated outside it.
        global_loss = jax.shard_map(lambda q, x, y: jax.lax.pmean(loss_fn(q, x, y), "data"),
                                    mesh=mesh, in_specs=(P(), P("data"), P("data")), out_specs=P())
        x = jax.make_array_from_process_local_data(batch_sharding, xs[0, mine])
        y = jax.make_array_from_process_local_data(batch_sharding, ys[0, mine])
        g = jax.jit(jax.grad(global_loss))(params, x, y)
        g_ref = jax.grad(loss_fn)(params, xs[0], ys[0])
        report["grad_max_abs_diff"] = max(
            float(np.max(np.abs(np.asarray(a) - np.asarray(b))))
            for a, b in zip(jax.tree.leaves(g), jax.tree.leaves(g_ref)))
        ok = report["max_abs_diff"] < 1e-5 and report["grad_max_abs_diff"] < 1e-5
        report["ok"] = ok
    if pid == 0:
        print(json.dumps(report))
    jax.distributed.shutdown()
    if args.check and not report["ok"]:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
