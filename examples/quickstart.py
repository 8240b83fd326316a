"""microjax_rs quickstart: trace a function to a jaxpr, jit it, and train a
small model with grad.

    make run        # builds the extension and runs this file
"""
import numpy as np

import microjax_rs as jax
import microjax_rs.numpy as jnp


def layer(x, w, b):
    return jnp.tanh(x @ w + b)


def main():
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.standard_normal((4, 3)).astype(np.float32))
    w = jnp.asarray(rng.standard_normal((3, 2)).astype(np.float32))
    b = jnp.asarray(np.array([0.5, -0.5], np.float32))

    # 1. What the function does, as a jaxpr.
    print("make_jaxpr(lambda x: sin(x) * 2.0 + x):")
    print(jax.make_jaxpr(lambda x: jnp.sin(x) * 2.0 + x)(jnp.ones(3)))
    print()
    print("make_jaxpr(layer):")
    print(jax.make_jaxpr(layer)(x, w, b))
    print()

    # 2. Compile it with jit and run it; compare with NumPy.
    fast_layer = jax.jit(layer)
    y = fast_layer(x, w, b)
    expected = np.tanh(np.asarray(x) @ np.asarray(w) + np.asarray(b))
    print("jit(layer)(x, w, b) =")
    print(np.asarray(y))
    print(f"shape={y.shape} dtype={y.dtype}")
    np.testing.assert_allclose(np.asarray(y), expected, rtol=1e-5, atol=1e-6)
    print("matches NumPy: yes")

    # 3. Static arguments select the trace; each value compiles once.
    power = jax.jit(lambda x, n: x**n, static_argnums=1)
    print("jit(x**n, static n=3)(2.0) =", power(jnp.float32(2.0), 3))
    print()

    # 4. Train a two-layer network on a toy regression with jit(value_and_grad).
    train_small_model(rng)


def train_small_model(rng):
    xs = rng.uniform(-2, 2, size=(128, 1)).astype(np.float32)
    ys = np.sin(xs) + 0.05 * rng.standard_normal(xs.shape).astype(np.float32)
    params = {
        "w1": jnp.asarray(rng.standard_normal((1, 32)).astype(np.float32)),
        "b1": jnp.zeros(32),
        "w2": jnp.asarray((rng.standard_normal((32, 1)) / np.sqrt(32)).astype(np.float32)),
        "b2": jnp.zeros(1),
    }

    def loss(p, x, y):
        h = jnp.tanh(x @ p["w1"] + p["b1"])
        pred = h @ p["w2"] + p["b2"]
        return jnp.mean((pred - y) ** 2)

    @jax.jit
    def step(p, x, y):
        value, g = jax.value_and_grad(loss)(p, x, y)
        new = jax.tree.map(lambda w, gw: w - 0.1 * gw, p, g)
        return new, value

    x, y = jnp.asarray(xs), jnp.asarray(ys)
    first = None
    for i in range(300):
        params, value = step(params, x, y)
        if first is None:
            first = float(value)
        if i % 100 == 0:
            print(f"step {i:3d}  loss {float(value):.4f}")
    print(f"loss {first:.4f} -> {float(value):.4f} after 300 jitted steps")
    assert float(value) < 0.5 * first


if __name__ == "__main__":
    main()
