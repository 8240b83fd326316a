"""Exports a few small programs from Python as fuzz seeds:
`.venv/bin/python rust/core/fuzz/make_corpus.py rust/core/fuzz/corpus`
(the Rust-built seeds come from `fuzz_program --make-corpus`)."""
import sys
import numpy as np
import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import export, lax

out = sys.argv[1]
f32 = lambda *s: np.linspace(-1, 1, int(np.prod(s)), dtype=np.float32).reshape(s)


def mlp_grad(w, x):
    return jax.grad(lambda w: jnp.sum(jnp.tanh(x @ w) ** 2))(w)


def control(x, n):
    y = lax.cond(x.sum() > 0, jnp.sin, jnp.cos, x)
    z = lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 1.5), (0, y))[1]
    return lax.fori_loop(0, 3, lambda i, c: c + i, z)


def indexing(x, i):
    return x[i, 1:3].at[0].add(2.0), jnp.sort(x, axis=1), jnp.argmax(x, axis=0)


def conv_linalg(a, k, m):
    c = lax.conv_general_dilated(a, k, (1, 1), "SAME")
    s = m @ m.T + 3 * jnp.eye(3)
    return c, jnp.linalg.cholesky(s), jnp.linalg.solve(s, m), lax.reduce_window(a, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")


progs = {
    "py_mlp_grad": (mlp_grad, (f32(4, 3), f32(2, 4))),
    "py_control": (control, (f32(3), np.int32(4))),
    "py_indexing": (indexing, (f32(3, 4), np.array([2, 0], np.int32))),
    "py_conv_linalg": (conv_linalg, (f32(1, 2, 4, 4), f32(3, 2, 3, 3), f32(3, 3))),
}
for name, (f, args) in progs.items():
    blob = export.export(jax.jit(f))(*args).serialize()
    open(f"{out}/{name}.mjx", "wb").write(blob)
    print(name, len(blob))
