"""jax.ops segment reductions: values against a NumPy loop, JAX 0.10.2's
identities for empty segments and dropped ids, gradients against finite
differences, vmap against a loop, jit against eager, bad input."""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import ops
from fd import num_grad

REDUCE = {"sum": (np.add, 0.0), "prod": (np.multiply, 1.0), "max": (np.maximum, -np.inf),
          "min": (np.minimum, np.inf)}


def _reference(kind, data, ids, n):
    op, identity = REDUCE[kind]
    out = np.full((n,) + data.shape[1:], identity, data.dtype)
    for row, i in zip(data, ids):
        if 0 <= i < n:
            out[i] = op(out[i], row)
    return out


@pytest.mark.parametrize("kind", sorted(REDUCE))
def test_values_against_loop(kind):
    rng = np.random.RandomState(0)
    data = rng.randn(7, 3).astype(np.float32)
    ids = np.array([0, 2, 2, 5, -1, 0, 3], np.int32)
    f = getattr(ops, f"segment_{kind}")
    np.testing.assert_allclose(np.asarray(f(data, ids, 4)), _reference(kind, data, ids, 4), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.jit(f, static_argnums=2)(data, ids, 4)),
                               _reference(kind, data, ids, 4), rtol=1e-6)
    batched = jax.vmap(lambda d: f(d, ids, 4))(np.stack([data, 2 * data]))
    for b, d in zip(batched, [data, 2 * data]):
        np.testing.assert_allclose(np.asarray(b), _reference(kind, d, ids, 4), rtol=1e-6)


def test_recorded_jax_values():
    # Recorded from JAX 0.10.2.
    assert np.asarray(ops.segment_sum(jnp.arange(5), jnp.array([0, 1, 1, 3, 3]))).tolist() == [0, 3, 0, 7]
    assert np.asarray(ops.segment_max(jnp.arange(5), jnp.array([0, 1, 1, 3, 3]), 5)).tolist() == [
        0, 2, -2147483648, 4, -2147483648]
    g = jax.grad(lambda d: ops.segment_max(d, jnp.array([0, 0, 1]), 2).sum())(jnp.array([1.0, 1.0, 3.0]))
    np.testing.assert_allclose(np.asarray(g), [0.5, 0.5, 1.0])


@pytest.mark.parametrize("kind", ["sum", "max"])
def test_gradient_against_finite_differences(kind):
    with jax.enable_x64():
        data = np.random.RandomState(1).randn(5, 2)
        ids = np.array([0, 1, 1, 2, 0])
        f = lambda d: jnp.sum(jnp.sin(getattr(ops, f"segment_{kind}")(d, ids, 3)))
        np.testing.assert_allclose(np.asarray(jax.grad(f)(data)), num_grad(f, data), rtol=1e-6, atol=1e-8)


def test_prod_gradient_raises_as_jax():
    # JAX 0.10.2: scatter-multiply gradients need unique indices.
    with pytest.raises(NotImplementedError):
        jax.grad(lambda d: ops.segment_prod(d, jnp.array([0, 1, 1]), 2).sum())(jnp.ones(3))


def test_bad_input():
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(lambda d, i: ops.segment_sum(d, i))(jnp.ones(3), jnp.array([0, 1, 1]))
    with pytest.raises(TypeError):
        ops.segment_sum(jnp.ones(3), jnp.array([0.0, 1.0, 1.0]), 2)
    with pytest.raises(ValueError):
        ops.segment_sum(jnp.ones(3), jnp.array([0, 1]), 2)
