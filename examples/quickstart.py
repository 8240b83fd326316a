"""microjax_rs quickstart: trace a function to a jaxpr, then jit and run it.

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


if __name__ == "__main__":
    main()
