"""`vmap` of `checkify`: a batched `Error` (one failure code per mapped
example). The failing indices, the messages' texts and which example
`throw` reports are recorded from JAX 0.10.2 (`err.get()`, `err.throw()`
of the same calls); the messages end with the check's source location here
where JAX's end with "(`check` failed)"."""
import re

import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import lax
from microjax_rs.experimental import checkify


def positive(x):
    checkify.check(x > 0, "neg {x}", x=x)
    return x * 2


def two_checks(x):
    checkify.check(x > 0, "first {x}", x=x)
    checkify.check(x < 10, "second {x}", x=x)
    return x


def lines(err):
    """`err.get()` as [(mapped index, message without the location)]."""
    text = err.get()
    if text is None:
        return None
    out = []
    for line in text.split("\n"):
        m = re.fullmatch(r"at mapped index ([0-9, ]+): (.*?)(?: \(`check` failed\))?", line)
        assert m, line
        out.append((m.group(1), m.group(2)))
    return out


X = jnp.array([1.0, -1.0, 2.0, -3.0])
# recorded from JAX 0.10.2: 'at mapped index 1: neg -1.0 ...\nat mapped index 3: neg -3.0 ...'
EXPECTED = [("1", "neg -1.0"), ("3", "neg -3.0")]


@pytest.mark.parametrize("wrap", [
    lambda f: jax.vmap(checkify.checkify(f)),
    lambda f: jax.jit(jax.vmap(checkify.checkify(f))),
    lambda f: jax.vmap(jax.jit(checkify.checkify(f))),
], ids=["vmap", "jit_vmap", "vmap_jit"])
def test_batched_error_reports_each_failing_example(wrap):
    err, out = wrap(positive)(X)
    np.testing.assert_array_equal(np.asarray(out), [2.0, -2.0, 4.0, -6.0])
    assert lines(err) == EXPECTED
    leaf, = jax.tree_util.tree_leaves(err)
    assert leaf.shape == (4,) and leaf.dtype == np.int32  # one code per example
    np.testing.assert_array_equal(np.asarray(leaf) != 0, [False, True, False, True])
    assert str(err) == f"Error({err.get()})"


def test_batched_error_throw_and_exception_as_jax():
    err, _ = jax.vmap(checkify.checkify(two_checks))(jnp.array([11.0, -1.0, 3.0]))
    assert lines(err) == [("0", "second 11.0"), ("1", "first -1.0")]
    # JAX 0.10.2 raises the last failing example's message, without its index
    with pytest.raises(checkify.JaxRuntimeError, match=r"^first -1\.0"):
        err.throw()
    with pytest.raises(checkify.JaxRuntimeError, match=r"^first -1\.0"):
        checkify.check_error(err)
    exc = err.get_exception()
    assert isinstance(exc, checkify.BatchedError) and isinstance(exc, checkify.JaxException)
    assert sorted(exc.error_mapping) == [(0,), (1,)]
    assert str(exc.error_mapping[(0,)]).startswith("second 11.0")


def test_batched_error_without_failure():
    err, out = jax.vmap(checkify.checkify(positive))(jnp.array([1.0, 2.0]))
    assert err.get() is None and err.get_exception() is None and str(err) == "Error(None)"
    err.throw()
    np.testing.assert_array_equal(np.asarray(out), [2.0, 4.0])


def test_nested_vmap_reports_index_tuples():
    f = jax.jit(jax.vmap(jax.vmap(checkify.checkify(two_checks))))
    err, _ = f(jnp.array([[1.0, 12.0], [-3.0, 4.0]]))
    # recorded from JAX 0.10.2
    assert lines(err) == [("0, 1", "second 12.0"), ("1, 0", "first -3.0")]
    assert np.asarray(jax.tree_util.tree_leaves(err)[0]).shape == (2, 2)


def test_unbatched_check_fails_for_every_example():
    def f(x, y):
        checkify.check(y > 0, "y bad {y}", y=y)
        return x + y
    err, _ = jax.vmap(checkify.checkify(f), in_axes=(0, None))(jnp.array([1.0, 2.0]), jnp.float32(-1.0))
    assert lines(err) == [("0", "y bad -1.0"), ("1", "y bad -1.0")]  # as JAX 0.10.2


def test_checks_in_scan_and_cond_bodies_under_vmap():
    def in_scan(x):
        def body(c, y):
            checkify.check(y > 0, "bad y {y}", y=y)
            return c + y, y
        return lax.scan(body, 0.0, x)[0]

    err, out = jax.vmap(checkify.checkify(in_scan))(jnp.array([[1.0, 2.0], [3.0, -4.0]]))
    assert lines(err) == [("1", "bad y -4.0")]  # as JAX 0.10.2
    np.testing.assert_array_equal(np.asarray(out), [3.0, -1.0])

    def in_cond(x):
        return lax.cond(x > 1, lambda x: (checkify.check(x < 2, "cond {x}", x=x), x)[1], lambda x: x, x)

    err, out = jax.vmap(checkify.checkify(in_cond))(jnp.array([1.0, 1.5, 3.0, 0.5]))
    assert lines(err) == [("2", "cond 3.0")]  # as JAX 0.10.2 (the untaken branch does not check)
    np.testing.assert_array_equal(np.asarray(out), [1.0, 1.5, 3.0, 0.5])


def test_checks_in_batched_while_body_hold_for_finished_examples():
    # (JAX 0.10.2 refuses checks in a batched while body.) The body runs
    # for the finished example too, with its final carry: no failure.
    def f(x):
        def body(c):
            checkify.check(c < 3, "c {c}", c=c)
            return c + x
        return lax.while_loop(lambda c: c < 3, body, 0.0)

    for g in (jax.vmap(checkify.checkify(f)), checkify.checkify(jax.vmap(f))):
        err, out = g(jnp.array([1.0, 0.5]))
        assert err.get() is None
        np.testing.assert_array_equal(np.asarray(out), [3.0, 3.0])

    def g(x):
        def body(c):
            checkify.check(c < 2, "too big {c}", c=c)
            return c + x
        return lax.while_loop(lambda c: c < 3, body, 0.0)

    err, _ = jax.vmap(checkify.checkify(g))(jnp.array([1.0, 0.5, 2.5]))
    assert lines(err) == [("0", "too big 2.0"), ("1", "too big 2.0"), ("2", "too big 2.5")]


def test_automatic_checks_under_vmap():
    # recorded from JAX 0.10.2
    err, _ = jax.vmap(checkify.checkify(lambda x: jnp.log(x) / x, errors=checkify.float_checks))(
        jnp.array([1.0, -1.0, 0.0]))
    assert err.get() == ("at mapped index 1: nan generated by primitive: log.\n"
                         "at mapped index 2: division by zero")
    err, _ = jax.vmap(checkify.checkify(lambda x, i: x[i], errors=checkify.index_checks),
                      in_axes=(None, 0))(jnp.arange(3.0), jnp.array([0, 5]))
    assert err.get() == ("at mapped index 1: out-of-bounds indexing for array of shape (3,): "
                         "index 5 is out of bounds for axis 0 with size 3. ")
    exc = err.get_exception()
    assert isinstance(exc, checkify.BatchedError)
    assert isinstance(exc.error_mapping[(1,)], checkify.OOBError)


def test_each_run_of_a_compiled_batched_program_reports_its_own_failures():
    f = jax.jit(jax.vmap(checkify.checkify(positive)))
    assert lines(f(X)[0]) == EXPECTED
    assert f(jnp.array([1.0, 2.0, 3.0, 4.0]))[0].get() is None
    assert lines(f(jnp.array([-5.0, 2.0, 3.0, 4.0]))[0]) == [("0", "neg -5.0")]


def test_grad_inside_batched_checkify():
    f = lambda x: (checkify.check(x > 0, "neg {x}", x=x), jnp.sin(x))[1]
    err, out = jax.vmap(checkify.checkify(jax.grad(f)))(jnp.array([1.0, -1.0]))
    assert lines(err) == [("1", "neg -1.0")]
    np.testing.assert_allclose(np.asarray(out), np.cos([1.0, -1.0]), rtol=1e-6)
    g = jax.vmap(jax.grad(lambda x: checkify.checkify(f)(x)[1]))  # the Error unused
    np.testing.assert_allclose(np.asarray(g(jnp.array([1.0, -1.0]))), np.cos([1.0, -1.0]), rtol=1e-6)


def test_jitted_check_in_a_staged_checkify_reports_to_each_call():
    @jax.jit
    def g(x):
        checkify.check(x > 0, "neg {x}", x=x)
        return x * 2

    # g's trace made outside a checkify is not reused inside one, nor the other way
    assert g(1.0) == 2.0
    e1 = jax.jit(checkify.checkify(lambda x: g(x) + 1))(-1.0)[0]
    e2 = jax.jit(checkify.checkify(lambda x: g(x) * 3))(-2.0)[0]
    assert e1.get().startswith("neg -1.0") and e2.get().startswith("neg -2.0")
    with pytest.raises(checkify.JaxRuntimeError, match="neg -4.0"):
        g(-4.0)
