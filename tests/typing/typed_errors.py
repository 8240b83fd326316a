"""Wrong uses of microjax_rs's API that the stubs make mypy reject.

Each line marked `# error: <code>` must get exactly that mypy error;
`tests/test_typing.py` checks that mypy reports them and nothing else."""
from __future__ import annotations

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import lax


def f(x: jax.Array) -> jax.Array:
    return jnp.sin(x)


total = jnp.sum(jnp.ones(3))
total.foo  # error: attr-defined
jnp.sin("not an array")  # error: arg-type
f("text")  # error: arg-type
shape: tuple[int, ...] = total.dtype  # error: assignment
name: str = jnp.zeros(3)  # error: assignment
jax.jit(f)(jnp.ones(1), 2)  # error: call-arg
lax.fori_loop(0, 3, lambda i, c: c + 1, "start")  # error: operator
jax.random.normal(jax.random.key(0), (2,), dtype="float32").no_such_method()  # error: attr-defined
