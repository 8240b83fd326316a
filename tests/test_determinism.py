"""Determinism from Python (DESIGN.md "Determinism"): the same programs give
the same bits with 1 and 2 threads. The binding has no thread setting; the
executor's threads are rayon's global pool, sized by RAYON_NUM_THREADS when
the process starts, so each thread count runs in its own interpreter.
The Rust side (rust/core/tests/determinism.rs) covers 1, 2 and 4 threads
per program in one process."""
import hashlib
import os
import subprocess
import sys

SCRIPT = r"""
import hashlib, sys
import numpy as np
import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import lax

rng = np.random.default_rng(0)
f32 = lambda *s: rng.standard_normal(s).astype(np.float32)
w1, w2, x, y = f32(128, 256) * 0.1, f32(256, 16) * 0.1, f32(256, 128), f32(256, 16)

def loss(w1, w2, x, y):
    return jnp.sum((jnp.tanh(x @ w1) @ w2 - y) ** 2)

@jax.jit
def train_step(w1, w2, x, y):
    l, (g1, g2) = jax.value_and_grad(loss, argnums=(0, 1))(w1, w2, x, y)
    return l, w1 - 0.01 * g1, w2 - 0.01 * g2

big = f32(301, 1003)
elementwise = jax.jit(lambda v: jnp.tanh(v * 2 + 1) * jnp.sin(v) - jnp.exp(-v * v))
reductions = jax.jit(lambda v: (v.sum(), v.sum(0), v.max(1), jnp.mean(v * v), jnp.cumsum(v, 0)))
scan = jax.jit(lambda c, xs: lax.scan(lambda c, x: (jnp.sin(c) * x + c, c.sum()), c, xs))
conv = jax.jit(lambda a, k: lax.conv_general_dilated(a, k, (1, 1), "SAME"))

outs = []
for _ in range(2):  # twice: the first call interprets, the second runs compiled
    outs += train_step(w1, w2, x, y)
    outs.append(elementwise(big))
    outs += reductions(big)
    outs += jax.tree_util.tree_leaves(scan(f32(70000), f32(8, 70000)))
    outs.append(conv(f32(8, 16, 32, 32), f32(32, 16, 3, 3)))
h = hashlib.sha256()
for o in outs:
    h.update(np.ascontiguousarray(np.asarray(o)).tobytes())
print(h.hexdigest())
"""


def _digest(threads):
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads))
    r = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_programs_give_the_same_bits_with_one_and_two_threads():
    one, two = _digest(1), _digest(2)
    assert len(one) == len(hashlib.sha256().hexdigest())
    assert one == two
