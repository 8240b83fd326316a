"""Host callbacks: `pure_callback`, `io_callback`, `debug.print` /
`debug.callback` — eager, under `jit`, `vmap` (each `vmap_method`), `grad`,
inside `scan`/`while` bodies (in order, every iteration), errors, and the
foreign-function `custom_vjp` pattern of the tutorial."""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import export, lax
from microjax_rs.experimental import io_callback


def np_sin(x):
    return np.sin(x).astype(x.dtype)


def test_pure_callback_eager_jit_and_results_checked():
    x = jnp.arange(4.0)
    f = lambda x: jax.pure_callback(np_sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
    np.testing.assert_allclose(np.asarray(f(x)), np.sin(np.arange(4.0)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.jit(f)(x)), np.sin(np.arange(4.0)), rtol=1e-6)
    assert "pure_callback" in str(jax.make_jaxpr(f)(x))
    bad = lambda x: jax.pure_callback(lambda v: v.astype(np.float64), jax.ShapeDtypeStruct(x.shape, x.dtype), x)
    with pytest.raises(TypeError, match="incorrect output dtype"):
        jax.jit(bad)(x)


def test_callback_exception_propagates_unchanged():
    class Boom(Exception):
        pass

    def cb(x):
        raise Boom("from the host")

    f = jax.jit(lambda x: jax.pure_callback(cb, jax.ShapeDtypeStruct((), jnp.float32), x))
    with pytest.raises(Boom, match="from the host"):
        f(1.0)


@pytest.mark.parametrize("method", ["sequential", "expand_dims", "broadcast_all"])
def test_pure_callback_vmap_methods(method):
    calls = []

    def cb(x, y):
        calls.append(x.shape)
        return (x * 2 + y).astype(np.float32)

    def f(x, y):
        shape = jnp.broadcast_shapes(x.shape, y.shape)
        return jax.pure_callback(cb, jax.ShapeDtypeStruct(shape, jnp.float32), x, y, vmap_method=method)

    xs = jnp.arange(6.0).reshape(3, 2)
    y = jnp.ones(2)
    got = jax.vmap(f, in_axes=(0, None))(xs, y)
    np.testing.assert_allclose(np.asarray(got), np.asarray(xs) * 2 + 1)
    if method == "sequential":
        assert calls == [(2,), (2,), (2,)]
    else:
        assert calls == [(3, 2)]


def test_pure_callback_vmap_needs_a_method_and_is_not_differentiable():
    f = lambda x: jax.pure_callback(np_sin, jax.ShapeDtypeStruct((), jnp.float32), x)
    with pytest.raises(TypeError, match="vmap_method"):
        jax.vmap(f)(jnp.ones(3))
    with pytest.raises(ValueError, match="Pure callbacks do not support JVP"):
        jax.grad(f)(1.0)


def test_foreign_function_with_custom_vjp():
    @jax.custom_vjp
    def host_sin(x):
        return jax.pure_callback(np_sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x, vmap_method="sequential")

    def fwd(x):
        return host_sin(x), x

    def bwd(x, g):
        return (g * jax.pure_callback(lambda v: np.cos(v).astype(v.dtype),
                                      jax.ShapeDtypeStruct(x.shape, x.dtype), x, vmap_method="sequential"),)

    host_sin.defvjp(fwd, bwd)
    x = jnp.asarray([0.1, 0.7, -1.2])
    np.testing.assert_allclose(np.asarray(jax.grad(lambda x: jnp.sum(host_sin(x)))(x)), np.cos(np.asarray(x)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.jit(jax.vmap(jax.grad(lambda v: host_sin(v))))(x)),
                               np.cos(np.asarray(x)), rtol=1e-6)


def test_debug_print_eager_jit_vmap_grad_and_loops(capsys):
    def f(x):
        jax.debug.print("x = {}", x)
        return x * 2

    f(jnp.float32(1.5))
    assert capsys.readouterr().out == "x = 1.5\n"
    jax.jit(f)(jnp.float32(2.5))
    assert capsys.readouterr().out == "x = 2.5\n"
    jax.vmap(f)(jnp.asarray([1.0, 2.0]))
    assert capsys.readouterr().out == "x = 1.0\nx = 2.0\n"
    assert float(jax.grad(f)(3.0)) == 2.0
    assert capsys.readouterr().out == "x = 3.0\n"

    def body(c, x):
        jax.debug.print("step {i}: c={c}", i=x, c=c)
        return c + x, None

    jax.jit(lambda xs: lax.scan(body, 0, xs))(jnp.arange(3))
    assert capsys.readouterr().out == "step 0: c=0\nstep 1: c=0\nstep 2: c=1\n"

    def wbody(c):
        jax.debug.print("i={}", c)
        return c + 1

    lax.while_loop(lambda c: c < 2, wbody, 0)
    assert capsys.readouterr().out == "i=0\ni=1\n"


def test_debug_callback_is_never_removed_and_keeps_order():
    seen = []

    def f(x):
        jax.debug.callback(lambda v: seen.append(("a", float(v))), x)
        y = x + 1
        jax.debug.callback(lambda v: seen.append(("b", float(v))), y)
        return x  # y is otherwise unused: DCE must keep the callbacks

    jax.jit(f)(1.0)
    assert seen == [("a", 1.0), ("b", 2.0)]


def test_io_callback_ordered_and_export_refuses_callbacks():
    log = []

    def record(x):
        log.append(float(x))
        return np.float32(len(log))

    f = jax.jit(lambda x: io_callback(record, jax.ShapeDtypeStruct((), jnp.float32), x, ordered=True))
    assert float(f(3.0)) == 1.0 and float(f(4.0)) == 2.0
    assert log == [3.0, 4.0]
    with pytest.raises(TypeError, match="cannot be exported"):
        export.export(f)(1.0).serialize()


def test_callbacks_in_a_jvp_program_run_under_vmap():
    # A transformed program with ordered effects run under a mode trace is
    # replayed equation by equation (not split by partial evaluation): the
    # callback on the unbatched value runs once, the batched one per example.
    seen = []

    def f(c, t):
        def g(x):
            jax.debug.callback(lambda v: seen.append(("first", float(v))), c)
            jax.debug.callback(lambda v: seen.append(("second", np.asarray(v).shape)), x)
            return jnp.sin(x) * c

        return jax.jvp(g, (t,), (t,))[1]

    out = jax.vmap(f, in_axes=(None, 0))(2.0, jnp.asarray([0.0, 1.0]))
    np.testing.assert_allclose(np.asarray(out), 2.0 * np.cos([0.0, 1.0]) * [0.0, 1.0], rtol=1e-6)
    # The unbatched callback runs once, the batched one once per example.
    assert [k for k, _ in seen] == ["first", "second", "second"]


def test_custom_vjp_holding_an_io_callback_is_kept_and_batches():
    """A custom_vjp whose function and rule call an io_callback carries its
    effect: it runs once per call under jit and vmap (never dropped), and its
    rule gives the gradient."""
    calls = []

    def host(a):
        calls.append(np.asarray(a).shape)
        return np.asarray(a) * 3

    def triple(v):
        return io_callback(host, jax.ShapeDtypeStruct(v.shape, v.dtype), v)

    f = jax.custom_vjp(triple)
    f.defvjp(lambda v: (triple(v), None), lambda _, ct: (triple(ct),))
    x = jnp.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(jax.jit(jax.vmap(f))(x), 3 * np.arange(6.0).reshape(2, 3))
    assert calls == [(3,), (3,)]
    jax.jit(lambda v: (f(v), 0)[1])(x[0])  # result unused: still called
    assert len(calls) == 3
    np.testing.assert_allclose(jax.jit(jax.grad(lambda v: f(v).sum()))(x[0]), [3.0, 3.0, 3.0])
