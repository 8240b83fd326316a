"""A typed program against microjax_rs's public API: an MLP whose parameters
are a pytree, trained with a jit-compiled grad step, evaluated with vmap,
rolled out with lax.scan, plus the other transforms and control flow.

`tests/test_typing.py` type-checks this file with `mypy --strict` (it must
pass) and runs `main()` (the numbers it checks are real)."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import lax
from microjax_rs.typing import ArrayLike, DTypeLike

Params = list[tuple[jax.Array, jax.Array]]


def init_mlp(key: jax.Array, sizes: list[int], dtype: DTypeLike = jnp.float32) -> Params:
    params: Params = []
    keys = jax.random.split(key, len(sizes) - 1)
    for k, (n_in, n_out) in zip(keys, zip(sizes[:-1], sizes[1:])):
        w = jax.random.normal(k, (n_in, n_out), dtype) / jnp.sqrt(float(n_in))
        params.append((w, jnp.zeros((n_out,), dtype)))
    return params


def mlp(params: Params, x: ArrayLike) -> jax.Array:
    h = jnp.asarray(x)
    for w, b in params[:-1]:
        h = jax.nn.relu(h @ w + b)
    w, b = params[-1]
    return (h @ w + b)[..., 0]


def loss(params: Params, x: jax.Array, y: jax.Array) -> jax.Array:
    return jnp.mean((mlp(params, x) - y) ** 2)


@jax.jit
def train_step(params: Params, x: jax.Array, y: jax.Array) -> tuple[Params, jax.Array]:
    value, grads = jax.value_and_grad(loss)(params, x, y)
    new: Params = jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)
    return new, value


class Stats(NamedTuple):
    total: jax.Array
    steps: int


def running_sum(xs: jax.Array) -> tuple[jax.Array, jax.Array]:
    def step(carry: jax.Array, x: jax.Array) -> tuple[jax.Array, jax.Array]:
        carry = carry + x
        return carry, carry * 2.0

    return lax.scan(step, jnp.zeros(()), xs)


@jax.custom_jvp
def softplus(x: jax.Array) -> jax.Array:
    return jnp.log1p(jnp.exp(x))


@softplus.defjvp
def softplus_jvp(primals: tuple[jax.Array], tangents: tuple[jax.Array]) -> tuple[jax.Array, jax.Array]:
    (x,), (t,) = primals, tangents
    return softplus(x), jax.nn.sigmoid(x) * t


def control_flow(x: jax.Array) -> jax.Array:
    y = lax.cond(x.sum() > 0, lambda v: v * 2.0, lambda v: -v, x)
    z = lax.fori_loop(0, 3, lambda i, v: v + i, y)

    def below(s: Stats) -> jax.Array:
        return s.total < 100.0

    def body(s: Stats) -> Stats:
        return Stats(s.total * 2.0 + 1.0, s.steps + 1)

    final = lax.while_loop(below, body, Stats(jnp.sum(z), 0))
    return final.total


def main() -> dict[str, float]:
    key = jax.random.key(0)
    k_params, k_x = jax.random.split(key)
    params = init_mlp(k_params, [3, 16, 1])
    x = jax.random.normal(k_x, (64, 3))
    y = jnp.sin(x[:, 0]) + 0.5 * x[:, 1]
    first = float(loss(params, x, y))
    for _ in range(50):
        params, _value = train_step(params, x, y)
    last = float(loss(params, x, y))

    per_example = jax.vmap(mlp, in_axes=(None, 0))(params, x)
    batched = mlp(params, x)
    leaves, treedef = jax.tree_util.tree_flatten(params)
    rebuilt: Params = jax.tree_util.tree_unflatten(treedef, leaves)

    carry, ys = running_sum(jnp.arange(4.0))
    tangent_out: jax.Array = jax.jvp(softplus, (jnp.asarray(0.0),), (jnp.asarray(1.0),))[1]
    hess: jax.Array = jax.hessian(lambda v: jnp.sum(v ** 3))(jnp.ones(2))
    remat_grad: jax.Array = jax.grad(jax.checkpoint(lambda v: jnp.sum(jnp.tanh(v))))(jnp.zeros(3))
    jac: jax.Array = jax.jacrev(lambda v: v * 2.0)(jnp.ones(2))
    out, pullback = jax.vjp(jnp.sin, jnp.zeros(2))
    (cot,) = pullback(jnp.ones_like(out))

    return {
        "first_loss": first,
        "last_loss": last,
        "vmap_err": float(jnp.max(jnp.abs(per_example - batched))),
        "rebuilt_err": float(jnp.abs(rebuilt[0][0] - params[0][0]).max()),
        "scan_carry": float(carry),
        "scan_last": float(ys[-1]),
        "softplus_tangent": float(tangent_out),
        "hessian_00": float(hess[0, 0]),
        "remat_grad_sum": float(remat_grad.sum()),
        "jac_trace": float(jnp.trace(jac)),
        "vjp_sum": float(np.asarray(cot).sum()),
        "while_total": float(control_flow(jnp.ones(2))),
        "num_leaves": float(len(leaves)),
    }


if __name__ == "__main__":
    print(main())
