"""`jax.test_util.check_grads` / `check_vjp` on complex functions: the
cotangent projection uses JAX's convention (the pullback of conj(c),
conjugated, against Re<t, .>), so correct complex derivatives pass and a
wrong one fails."""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs.test_util import check_grads, check_vjp

Z = (np.random.RandomState(0).rand(3, 4) + 1j * np.random.RandomState(1).rand(3, 4) + 1).astype(np.complex64)


@pytest.mark.parametrize("f", [jnp.sin, jnp.exp, jnp.log, jnp.sqrt, jnp.tanh, jnp.abs, lambda z: z * z,
                               lambda z: jnp.real(z * jnp.conj(z)), lambda z: jnp.sum(z * jnp.conj(z))],
                         ids=["sin", "exp", "log", "sqrt", "tanh", "abs", "square", "abs2", "sum_abs2"])
def test_complex_derivatives_pass(f):
    check_grads(f, (Z,), 1, ["fwd", "rev"], 0.1, 0.1)


def test_a_wrong_complex_vjp_fails():
    def wrong_vjp(z):
        out, pullback = jax.vjp(jnp.sin, z)
        return out, lambda c: tuple(jnp.conj(g) for g in pullback(c))  # conjugated by mistake

    with pytest.raises(AssertionError, match="cotangent projection"):
        check_vjp(jnp.sin, wrong_vjp, (Z,), atol=0.1, rtol=0.1)


def test_real_functions_unchanged():
    check_grads(lambda v: jnp.sin(v) * v, (np.float32(0.7),), 2, ["fwd", "rev"])
