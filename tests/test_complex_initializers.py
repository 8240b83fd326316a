"""Complex dtypes in `random.normal` and the variance-scaling initializers
(glorot / lecun / he ...): the draws equal JAX's (values recorded from JAX
0.10.2 with PRNGKey(0), rounded to 5 decimals), and their second moments
are the requested variance."""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp

NORMAL = [0.70995 - 1.72708j, -0.64088 - 1.43944j, -0.52904 + 0.14534j]
VARIANCE_SCALING = {
    "truncated_normal": [[0.87785 + 0.04026j, 0.2922 + 0.03858j, -0.29065 - 0.1632j],
                         [-0.15232 + 0.17985j, 0.0511 + 0.29875j, 0.53953 + 0.50213j]],
    "normal": [[0.44901 - 1.0923j, -0.40533 - 0.91038j, -0.33459 + 0.09192j],
               [-0.52385 - 0.15811j, -0.38963 - 0.34077j, 0.26334 - 0.52706j]],
    "uniform": [[0.82002 + 0.03761j, 0.37869 + 0.05j, -0.37172 - 0.20872j],
                [-0.20085 + 0.23715j, 0.06605 + 0.38612j, 0.55634 + 0.51778j]],
}


def test_complex_normal_as_jax():
    out = jax.random.normal(jax.random.PRNGKey(0), (3,), jnp.complex64)
    assert out.dtype == np.complex64
    np.testing.assert_allclose(np.asarray(out), NORMAL, atol=2e-5)


@pytest.mark.parametrize("distribution", sorted(VARIANCE_SCALING))
def test_complex_variance_scaling_as_jax(distribution):
    init = jax.nn.initializers.variance_scaling(1.0, "fan_avg", distribution)
    out = init(jax.random.PRNGKey(0), (2, 3), jnp.complex64)
    assert out.dtype == np.complex64 and out.shape == (2, 3)
    np.testing.assert_allclose(np.asarray(out), VARIANCE_SCALING[distribution], atol=2e-5)


@pytest.mark.parametrize("distribution", ["truncated_normal", "normal", "uniform"])
def test_complex_variance_scaling_has_the_requested_variance(distribution):
    init = jax.nn.initializers.variance_scaling(2.0, "fan_in", distribution)
    out = np.asarray(init(jax.random.PRNGKey(1), (400, 500), jnp.complex64))
    np.testing.assert_allclose(np.mean(np.abs(out) ** 2), 2.0 / 400, rtol=0.02)
    assert abs(np.mean(out)) < 0.01


@pytest.mark.parametrize("name", ["glorot_uniform", "glorot_normal", "lecun_uniform", "lecun_normal", "he_uniform",
                                  "he_normal"])
def test_named_initializers_take_complex_dtypes(name):
    out = getattr(jax.nn.initializers, name)()(jax.random.PRNGKey(0), (4, 5), jnp.complex64)
    assert out.dtype == np.complex64 and out.shape == (4, 5)
    assert np.all(np.isfinite(np.asarray(out)))
