"""Transformations called from threads other than the main one, and from
several threads at once: each thread has its own trace state (as in JAX),
so a `grad`, `vmap` or `jit` in one thread never sees another's traces."""
import threading

import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp


def _in_thread(fn):
    out, err = [], []

    def run():
        try:
            out.append(fn())
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller
            err.append(e)

    t = threading.Thread(target=run)
    t.start()
    t.join(120)
    if err:
        raise err[0]
    return out[0]


def _f(x):
    return jnp.sum(jnp.tanh(x) * jnp.sin(x))


def _df(x):
    return (1 - np.tanh(x) ** 2) * np.sin(x) + np.tanh(x) * np.cos(x)


CASES = {
    "grad": (lambda x: jax.grad(_f)(x), lambda x: _df(x)),
    "value_and_grad": (lambda x: jax.value_and_grad(_f)(x)[1], lambda x: _df(x)),
    "jit_grad": (lambda x: jax.jit(jax.grad(_f))(x), lambda x: _df(x)),
    "vmap_grad": (lambda x: jax.vmap(jax.grad(lambda v: jnp.tanh(v) * jnp.sin(v)))(x), lambda x: _df(x)),
    "jvp": (lambda x: jax.jvp(_f, (x,), (jnp.ones_like(x),))[1], lambda x: _df(x).sum()),
    "vjp": (lambda x: jax.vjp(_f, x)[1](jnp.float64(1.0).astype(x.dtype))[0], lambda x: _df(x)),
    "grad_of_grad": (lambda x: jax.vmap(jax.grad(jax.grad(jnp.sin)))(x), lambda x: -np.sin(x)),
    "scan_grad": (
        lambda x: jax.grad(lambda v: jax.lax.scan(lambda c, e: (c + jnp.sin(e), None), 0.0, v)[0])(x),
        lambda x: np.cos(x)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_transform_in_a_thread_matches_numpy(name):
    fn, want = CASES[name]
    x = np.linspace(-1.5, 2.0, 7)
    got = _in_thread(lambda: np.asarray(fn(jnp.asarray(x, jnp.float32))))
    np.testing.assert_allclose(got, want(x), rtol=2e-5, atol=1e-6)


def test_many_threads_differentiate_at_once():
    # Four threads, each differentiating its own function repeatedly while
    # the others trace: every result is its own thread's derivative.
    x = np.linspace(-1.0, 1.0, 5)
    results, errors = {}, []
    start = threading.Barrier(4)

    def work(k):
        try:
            start.wait()
            got = []
            for i in range(40):
                g = jax.grad(lambda v, c=float(k + 1): jnp.sum(jnp.sin(c * v)))(jnp.asarray(x, jnp.float32))
                got.append(np.asarray(g))
                if i % 10 == 0:
                    got.append(np.asarray(jax.jit(jax.vmap(jax.grad(lambda v, c=float(k + 1): jnp.sin(c * v))))(
                        jnp.asarray(x, jnp.float32))))
            results[k] = got
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not errors, errors[0]
    for k, got in results.items():
        want = (k + 1) * np.cos((k + 1) * x)
        assert len(got) == 44
        for g in got:
            np.testing.assert_allclose(g, want, rtol=2e-5, atol=1e-6)
