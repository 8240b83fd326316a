"""A small CNN trained with jit(value_and_grad) + SGD on synthetic images.

conv (3x3, SAME) -> relu -> 2x2 max-pool (lax.reduce_window) -> dense.
Class 0 images carry a horizontal bar, class 1 a vertical bar, both in
noise; the loss should fall within a few dozen steps.

    python examples/cnn.py [steps]
"""
import sys

import numpy as np

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import lax

SIZE, CHANNELS, CLASSES = 8, 4, 2


def make_data(n, seed=0):
    rng = np.random.default_rng(seed)
    x = 0.3 * rng.standard_normal((n, 1, SIZE, SIZE)).astype(np.float32)
    y = rng.integers(0, CLASSES, size=n)
    for i in range(n):
        k = rng.integers(1, SIZE - 1)
        if y[i] == 0:
            x[i, 0, k, :] += 1.0
        else:
            x[i, 0, :, k] += 1.0
    return jnp.asarray(x), jnp.asarray(np.eye(CLASSES, dtype=np.float32)[y])


def init_params(seed=1):
    rng = np.random.default_rng(seed)
    flat = CHANNELS * (SIZE // 2) * (SIZE // 2)
    return {
        "conv": jnp.asarray(0.3 * rng.standard_normal((CHANNELS, 1, 3, 3)).astype(np.float32)),
        "bias": jnp.zeros((CHANNELS,), jnp.float32),
        "dense": jnp.asarray(0.1 * rng.standard_normal((flat, CLASSES)).astype(np.float32)),
        "out_bias": jnp.zeros((CLASSES,), jnp.float32),
    }


def forward(params, x):
    h = lax.conv_general_dilated(x, params["conv"], (1, 1), "SAME",
                                 dimension_numbers=("NCHW", "OIHW", "NCHW"))
    h = jax.nn.relu(h + params["bias"][None, :, None, None])
    h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
    h = h.reshape(h.shape[0], -1)
    return h @ params["dense"] + params["out_bias"]


def loss_fn(params, x, y):
    logits = forward(params, x)
    return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(logits), axis=-1))


@jax.jit
def sgd_step(params, x, y, lr):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    new = jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)
    return new, loss


def train(steps=60, lr=0.5, seed=0):
    """Returns the loss of every step."""
    x, y = make_data(64, seed)
    params = init_params(seed + 1)
    losses = []
    for _ in range(steps):
        params, loss = sgd_step(params, x, y, lr)
        losses.append(float(loss))
    return losses


if __name__ == "__main__":
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    losses = train(steps)
    for i in range(0, steps, max(steps // 10, 1)):
        print(f"step {i:4d}  loss {losses[i]:.4f}")
    print(f"final     loss {losses[-1]:.4f}")
