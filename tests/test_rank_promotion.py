"""`jax_numpy_rank_promotion` = 'raise' / 'warn' (JAX's option, also the
`jax.numpy_rank_promotion` context): jnp's binary functions and the array
operators refuse (ValueError) or warn about (UserWarning) broadcasting
operands of different nonzero ranks, eagerly, under `jit` and `grad`, and
under `vmap` without counting the mapped axis. Texts recorded from JAX
0.10.2."""
import operator
import warnings

import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp

DOC = "https://docs.jax.dev/en/latest/rank_promotion_warning.html"
A, B = np.ones(3, np.float32), np.ones((2, 3), np.float32)


def _raise_text(name):
    return (f"Operands could not be broadcast together for {name} on shapes (3,) (2, 3) and with "
            f"the config option jax_numpy_rank_promotion='raise'. For more information, see {DOC}.")


@pytest.fixture
def mode():
    def set_mode(value):
        jax.config.update("jax_numpy_rank_promotion", value)

    yield set_mode
    jax.config.update("jax_numpy_rank_promotion", "allow")


# (function, the name JAX's message gives), recorded from JAX 0.10.2.
CASES = [
    (operator.add, "add"), (operator.sub, "subtract"), (operator.mul, "multiply"),
    (operator.truediv, "true_divide"), (operator.floordiv, "floor_divide"),
    (operator.mod, "remainder"), (operator.pow, "power"), (operator.lt, "less"),
    (operator.eq, "equal"), (operator.ne, "not_equal"), (jnp.arctan2, "arctan2"),
    (jnp.logaddexp, "logaddexp"), (jnp.hypot, "hypot"), (jnp.minimum, "minimum"),
    (jnp.maximum, "maximum"), (jnp.divide, "true_divide"), (jnp.copysign, "copysign"),
    (jnp.nextafter, "nextafter"), (jnp.float_power, "float_power"), (jnp.fmax, "greater"),
    (jnp.fmin, "less"), (jnp.fmod, "fmod"), (jnp.isclose, "isclose"),
]


@pytest.mark.parametrize("fn,name", CASES, ids=[n for _, n in CASES])
def test_raise_names_the_function_eagerly_and_under_jit(mode, fn, name):
    mode("raise")
    with pytest.raises(ValueError) as e:
        fn(jnp.asarray(A), jnp.asarray(B))
    assert str(e.value) == _raise_text(name)
    with pytest.raises(ValueError) as e:
        jax.jit(fn)(A, B)
    assert str(e.value) == _raise_text(name)


def test_raise_allows_equal_ranks_scalars_and_lax(mode):
    mode("raise")
    a, b = jnp.asarray(A), jnp.asarray(B)
    np.testing.assert_allclose(np.asarray(jnp.ones((1, 3)) + b), np.full((2, 3), 2.0))
    np.testing.assert_allclose(np.asarray(a + 1.0), np.full(3, 2.0))
    np.testing.assert_allclose(np.asarray(a * jnp.float32(2)), np.full(3, 2.0))
    np.testing.assert_allclose(np.asarray(jax.lax.add(a, a)), np.full(3, 2.0))
    # jnp.where is no binary ufunc: JAX 0.10.2 broadcasts it regardless.
    assert jnp.where(True, a, b).shape == (2, 3)


def test_raise_under_vmap_does_not_count_the_mapped_axis(mode):
    mode("raise")
    mul = lambda x, y: x * y  # noqa: E731
    out = jax.vmap(mul)(jnp.ones((4, 3)), jnp.ones((4, 3)))
    assert out.shape == (4, 3)
    assert jax.vmap(mul, in_axes=(0, None))(jnp.ones((4, 3)), jnp.ones(3)).shape == (4, 3)
    with pytest.raises(ValueError) as e:
        jax.vmap(mul, in_axes=(0, None))(jnp.ones((4, 3)), B)
    assert str(e.value) == _raise_text("multiply")


def test_raise_under_grad(mode):
    mode("raise")
    b = jnp.asarray(B)
    with pytest.raises(ValueError) as e:
        jax.grad(lambda x: (x * b).sum())(jnp.asarray(A))
    assert str(e.value) == _raise_text("multiply")


def test_warn_gives_jax_user_warning_and_broadcasts(mode):
    mode("warn")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = jnp.asarray(A) + jnp.asarray(B)
        jax.jit(jnp.multiply)(A, B)
    np.testing.assert_allclose(np.asarray(out), np.full((2, 3), 2.0))
    assert [w.category for w in caught] == [UserWarning, UserWarning]
    assert str(caught[0].message) == (
        "Following NumPy automatic rank promotion for add on shapes (3,) (2, 3). Set the "
        "jax_numpy_rank_promotion config option to 'allow' to disable this warning; for more "
        f"information, see {DOC}.")
    assert "for multiply on shapes" in str(caught[1].message)


def test_context_sets_and_restores_and_bad_values_raise():
    with jax.numpy_rank_promotion("raise"):
        assert jax.config.jax_numpy_rank_promotion == "raise"
        with pytest.raises(ValueError, match="jax_numpy_rank_promotion='raise'"):
            jnp.asarray(A) - jnp.asarray(B)
    assert jax.config.jax_numpy_rank_promotion == "allow"
    assert (jnp.asarray(A) - jnp.asarray(B)).shape == (2, 3)

    @jax.numpy_rank_promotion("raise")
    def f(x, y):
        return x + y

    with pytest.raises(ValueError):
        f(jnp.asarray(A), jnp.asarray(B))
    with pytest.raises(ValueError):
        jax.config.update("jax_numpy_rank_promotion", "bogus")
    with pytest.raises(ValueError):
        jax.numpy_rank_promotion("bogus")
