"""`jax_debug_nans` / `jax_debug_infs`: a NaN (Inf) result raises
`FloatingPointError` naming the primitive that produced it, eagerly, under
`jit` (the program is replayed equation by equation to find it, with the
user's line as a note), `grad` and `vmap`; with the options off nothing is
checked."""
import os
import subprocess
import sys

import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp


def log_of_shifted(x):
    y = jnp.log(x - 1.0)  # NaN where x < 1
    return y * 2.0


X = jnp.asarray([0.0, 2.0])


def test_eager_nan_names_the_primitive_and_the_line(debug_nans):
    with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in log") as e:
        log_of_shifted(X)
    assert any("test_debug_nans.py" in n and "log_of_shifted" in n for n in e.value.__notes__)


def test_jit_replays_to_find_the_primitive_and_its_line(debug_nans):
    with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in log") as e:
        jax.jit(log_of_shifted)(X)
    assert any("log_of_shifted" in n for n in e.value.__notes__)


def test_operators_and_nested_jit(debug_nans):
    with pytest.raises(FloatingPointError, match=r"encountered in mul"):
        (jnp.ones(2) / 0.0) * 0.0

    @jax.jit
    def outer(x):
        return jax.jit(lambda v: jnp.sqrt(v))(x - 5.0) + 1.0

    with pytest.raises(FloatingPointError, match="encountered in sqrt"):
        outer(X)


def test_grad_and_vmap(debug_nans):
    with pytest.raises(FloatingPointError, match="encountered in sqrt"):
        jax.grad(lambda x: jnp.sum(jnp.sqrt(x - 1.0)))(X)
    with pytest.raises(FloatingPointError, match="encountered in log"):
        jax.vmap(jnp.log)(jnp.asarray([-1.0, 2.0]))


def test_finite_results_pass_and_options_off_check_nothing(debug_nans):
    np.testing.assert_allclose(np.asarray(jax.jit(lambda x: jnp.exp(x) + 1.0)(X)), np.exp([0.0, 2.0]) + 1.0)
    np.testing.assert_allclose(np.asarray(jax.grad(lambda x: jnp.sum(x ** 2))(X)), [0.0, 4.0])
    # an Inf is not a NaN
    assert np.isinf(np.asarray(jnp.ones(1) / 0.0)).all()
    jax.config.update("jax_debug_nans", False)
    out = np.asarray(jax.jit(log_of_shifted)(X))
    assert np.isnan(out[0]) and out[1] == pytest.approx(0.0)


def test_debug_infs(debug_infs):
    with pytest.raises(FloatingPointError, match=r"\(inf\) encountered in div"):
        jnp.ones(2) / 0.0
    with pytest.raises(FloatingPointError, match=r"\(inf\) encountered in exp"):
        jax.jit(lambda x: jnp.exp(x * 1000.0))(X)
    # NaNs are not Infs
    assert np.isnan(np.asarray(jnp.zeros(1) / 0.0)).all()


def test_integer_results_are_not_checked(debug_nans):
    assert int(jnp.asarray(7) // 2) == 3


@pytest.mark.parametrize("var", ["JAX_DEBUG_NANS", "JAX_DEBUG_INFS"])
def test_environment_variables_turn_the_checks_on(var):
    code = ("import microjax_rs as jax, microjax_rs.numpy as jnp\n"
            "try:\n    jnp.log(jnp.asarray(-1.0)) if 'NANS' in {v!r} else jnp.asarray(1.0) / 0.0\n"
            "except FloatingPointError as e:\n    print('raised', e)\n").format(v=var)
    env = dict(os.environ, **{var: "1"})
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert "raised" in out.stdout, out.stderr
