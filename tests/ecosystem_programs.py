"""Programs using optax, chex and equinox, run by tests/test_ecosystem.py in a
subprocess: `python ecosystem_programs.py NAME --microjax` runs program NAME on
microjax_rs through `microjax_rs.install_as_jax()`; without `--microjax` it
runs on whatever `jax` is installed (how the recorded values in
test_ecosystem.py were produced, with JAX 0.10.2 on CPU). Prints one JSON
object of results. float32 throughout, deterministic NumPy data."""
import json
import sys

import numpy as np


def _data(n=32, d=4, classes=3, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.randn(n, d).astype(np.float32)
    w = rng.randn(d, classes).astype(np.float32)
    y = np.argmax(x @ w + 0.1 * rng.randn(n, classes), axis=1)
    return x, y.astype(np.int32), classes


def optax_loop():
    """adamw + clip_by_global_norm + warmup-cosine schedule on softmax
    cross-entropy, chained, jitted, 20 steps."""
    import jax
    import jax.numpy as jnp
    import optax

    x, y, classes = _data()
    rng = np.random.RandomState(1)
    params = {
        "w1": jnp.asarray(0.3 * rng.randn(4, 8).astype(np.float32)),
        "b1": jnp.zeros(8, jnp.float32),
        "w2": jnp.asarray(0.3 * rng.randn(8, classes).astype(np.float32)),
        "b2": jnp.zeros(classes, jnp.float32),
    }
    schedule = optax.warmup_cosine_decay_schedule(
        init_value=0.0, peak_value=0.05, warmup_steps=5, decay_steps=20, end_value=0.005)
    opt = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(schedule, weight_decay=1e-2))
    state = opt.init(params)
    labels = jax.nn.one_hot(jnp.asarray(y), classes)

    def loss_fn(p):
        h = jnp.tanh(jnp.asarray(x) @ p["w1"] + p["b1"])
        logits = h @ p["w2"] + p["b2"]
        return optax.softmax_cross_entropy(logits, labels).mean()

    @jax.jit
    def step(p, s):
        loss, g = jax.value_and_grad(loss_fn)(p)
        updates, s = opt.update(g, s, p)
        return optax.apply_updates(p, updates), s, loss

    losses = []
    for _ in range(20):
        params, state, loss = step(params, state)
        losses.append(float(loss))
    lrs = [float(schedule(i)) for i in (0, 3, 5, 10, 19)]
    return {
        "losses": losses,
        "final_loss": float(loss_fn(params)),
        "lrs": lrs,
        "params": {k: np.asarray(v).ravel().tolist() for k, v in sorted(params.items())},
        "global_norm": float(optax.global_norm(params)),
    }


def chex_checks():
    """chex assertions and a chex.dataclass under tree.map, jit and grad."""
    import chex
    import jax
    import jax.numpy as jnp

    out = {}
    a = jnp.ones((2, 3), jnp.float32)
    chex.assert_shape(a, (2, 3))
    chex.assert_rank(a, 2)
    chex.assert_type(a, jnp.float32)
    chex.assert_equal_shape([a, jnp.zeros((2, 3))])
    chex.assert_trees_all_close({"a": a}, {"a": a + 1e-7})
    chex.assert_trees_all_equal_shapes({"a": a}, {"a": 2 * a})
    chex.assert_tree_all_finite({"a": a})
    failures = []
    for name, fn in [
        ("assert_shape", lambda: chex.assert_shape(a, (3, 2))),
        ("assert_type", lambda: chex.assert_type(a, jnp.int32)),
        ("assert_rank", lambda: chex.assert_rank(a, 3)),
        ("assert_trees_all_close", lambda: chex.assert_trees_all_close({"a": a}, {"a": a + 1.0})),
        ("assert_tree_all_finite", lambda: chex.assert_tree_all_finite({"a": a / 0.0})),
    ]:
        try:
            fn()
        except AssertionError:
            failures.append(name)
    out["failures"] = failures

    @chex.dataclass
    class Params:
        w: chex.Array
        b: chex.Array

    p = Params(w=jnp.asarray([[1.0, 2.0], [3.0, 4.0]], jnp.float32), b=jnp.asarray([0.5, -0.5], jnp.float32))
    doubled = jax.tree.map(lambda t: 2 * t, p)
    out["doubled_w"] = np.asarray(doubled.w).ravel().tolist()
    out["leaves"] = len(jax.tree.leaves(p))
    xs = jnp.asarray([[1.0, -1.0], [0.5, 2.0]], jnp.float32)

    def loss(q):
        return jnp.sum(jnp.tanh(xs @ q.w + q.b) ** 2)

    g = jax.jit(jax.grad(loss))(p)
    chex.assert_trees_all_equal_shapes(g, p)
    out["grad_is_params"] = type(g).__name__
    out["grad_w"] = np.asarray(g.w).ravel().tolist()
    out["grad_b"] = np.asarray(g.b).ravel().tolist()
    replaced = p.replace(b=jnp.zeros(2, jnp.float32))
    out["replaced_b"] = np.asarray(replaced.b).tolist()

    @jax.jit
    def traced_shape_check(t):
        chex.assert_shape(t, (2, 2))  # static assertions work under jit
        return t * 3

    out["traced"] = np.asarray(traced_shape_check(xs)).ravel().tolist()
    return out


def equinox_mlp():
    """An equinox.nn.MLP trained with filter_jit + filter_value_and_grad."""
    import equinox as eqx
    import jax
    import jax.numpy as jnp

    x, y, classes = _data(seed=2)
    model = eqx.nn.MLP(in_size=4, out_size=classes, width_size=8, depth=2,
                       activation=jax.nn.relu, key=jax.random.PRNGKey(0))
    init_leaves = [np.asarray(leaf).ravel().tolist()
                   for leaf in jax.tree.leaves(eqx.filter(model, eqx.is_array))]
    xs, ys = jnp.asarray(x), jnp.asarray(y)

    @eqx.filter_value_and_grad
    def loss_fn(m, xb, yb):
        logits = jax.vmap(m)(xb)
        logp = jax.nn.log_softmax(logits, axis=-1)
        return -jnp.mean(jnp.take_along_axis(logp, yb[:, None], axis=1))

    @eqx.filter_jit
    def step(m, xb, yb):
        loss, grads = loss_fn(m, xb, yb)
        m = eqx.apply_updates(m, jax.tree.map(lambda g: -0.1 * g, grads))
        return m, loss

    losses = []
    for _ in range(10):
        model, loss = step(model, xs, ys)
        losses.append(float(loss))
    leaves = [np.asarray(leaf).ravel().tolist()
              for leaf in jax.tree.leaves(eqx.filter(model, eqx.is_array))]
    return {"init_leaves": init_leaves, "losses": losses, "final_leaves": leaves,
            "prediction": np.asarray(model(xs[0])).tolist()}


PROGRAMS = {"optax_loop": optax_loop, "chex_checks": chex_checks, "equinox_mlp": equinox_mlp}

if __name__ == "__main__":
    name = sys.argv[1]
    if "--microjax" in sys.argv[2:]:
        import microjax_rs
        microjax_rs.install_as_jax()
    print(json.dumps(PROGRAMS[name]()))
