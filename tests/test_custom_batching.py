"""jax.custom_batching (custom_vmap, sequential_vmap) with JAX 0.10.2's
semantics: the rule runs wherever vmap meets the function (eagerly, under
jit, through jit, nested maps, forward mode); reverse mode of the function
itself raises JAX's ValueError. Values are checked against NumPy; messages
and exception types were recorded from JAX 0.10.2."""
import io
from contextlib import redirect_stdout

import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs.custom_batching import custom_vmap, sequential_vmap
from custom_rule_examples import sin_times_vjp_rules

# recorded from JAX 0.10.2 (jax.grad / jax.vjp / jax.linearize of a custom_vmap function)
LINEARIZE_MESSAGE = ("Linearization failed to produce known values for all output primals. This is typically "
                     "caused by attempting to differentiate a function uses an operation that does not support "
                     "reverse-mode autodiff.")


def _sin_plus():
    """f(x, y) = sin(x) + y, whose rule computes cos(xs) * ys instead (so the
    rule's use is visible in the values), recording its calls."""
    calls = []

    @custom_vmap
    def f(x, y):
        return jnp.sin(x) + y

    @f.def_vmap
    def rule(axis_size, in_batched, xs, ys):
        calls.append((axis_size, list(in_batched)))
        return jnp.cos(xs) * ys, any(in_batched)

    return f, calls


X = np.array([0.0, 1.0, 2.0], np.float32)
Y = np.array([2.0, 2.0, 2.0], np.float32)


def test_eager_and_jit_call_compute_the_function():
    f, calls = _sin_plus()
    np.testing.assert_allclose(float(f(1.0, 2.0)), np.sin(1.0) + 2.0, rtol=1e-6)
    np.testing.assert_allclose(float(jax.jit(f)(1.0, 2.0)), np.sin(1.0) + 2.0, rtol=1e-6)
    assert calls == []


def test_vmap_runs_the_rule_with_axis_size_and_in_batched():
    f, calls = _sin_plus()
    np.testing.assert_allclose(np.asarray(jax.vmap(f)(X, Y)), np.cos(X) * Y, rtol=1e-6)
    assert calls == [(3, [True, True])]
    np.testing.assert_allclose(np.asarray(jax.vmap(f, (0, None))(X, 2.0)), np.cos(X) * 2.0, rtol=1e-6)
    assert calls[-1] == (3, [True, False])


def test_rule_gets_the_mapped_axis_in_front():
    f, calls = _sin_plus()
    xs = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(np.asarray(jax.vmap(f, in_axes=(1, None))(xs, 1.0)), np.cos(xs.T), rtol=1e-6)
    assert calls == [(3, [True, False])]


@pytest.mark.parametrize("wrap", ["jit_of_vmap", "vmap_of_jit"])
def test_rule_runs_through_jit(wrap):
    f, calls = _sin_plus()
    g = jax.jit(jax.vmap(f)) if wrap == "jit_of_vmap" else jax.vmap(jax.jit(f))
    np.testing.assert_allclose(np.asarray(g(X, Y)), np.cos(X) * Y, rtol=1e-6)
    assert calls and calls[0][0] == 3


def test_nested_vmap_batches_what_the_inner_rule_computed():
    f, calls = _sin_plus()
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    b = np.full((2, 3), 3.0, np.float32)
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.vmap(f))(a, b)), np.cos(a) * b, rtol=1e-6)
    assert calls and calls[0] == (3, [True, True])


def test_jvp_of_the_function_and_vmap_of_jvp_use_the_rule_tangents():
    f, _ = _sin_plus()
    y, t = jax.jvp(f, (1.0, 2.0), (1.0, 0.0))
    np.testing.assert_allclose([float(y), float(t)], [np.sin(1.0) + 2.0, np.cos(1.0)], rtol=1e-6)
    y, t = jax.jit(lambda a, b: jax.jvp(f, (a, b), (1.0, 0.0)))(1.0, 2.0)
    np.testing.assert_allclose([float(y), float(t)], [np.sin(1.0) + 2.0, np.cos(1.0)], rtol=1e-6)
    # the tangent of the rule's cos(x) * y along x is -sin(x) * y (recorded from JAX 0.10.2 too)
    ys, ts = jax.vmap(lambda x, y: jax.jvp(f, (x, y), (jnp.ones_like(x), jnp.zeros_like(y))))(X, Y)
    np.testing.assert_allclose(np.asarray(ys), np.cos(X) * Y, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ts), -np.sin(X) * Y, rtol=1e-6, atol=1e-7)
    ys, ts = jax.jvp(jax.vmap(f), (X, Y), (np.ones(3, np.float32), np.zeros(3, np.float32)))
    np.testing.assert_allclose(np.asarray(ts), -np.sin(X) * Y, rtol=1e-6, atol=1e-7)


def test_grad_of_vmap_differentiates_the_rule():
    f, _ = _sin_plus()
    g = jax.grad(lambda x: jax.vmap(f)(x, Y).sum())(X)
    np.testing.assert_allclose(np.asarray(g), -np.sin(X) * Y, rtol=1e-6, atol=1e-7)
    g = jax.jit(jax.grad(lambda x: jax.vmap(f)(x, Y).sum()))(X)
    np.testing.assert_allclose(np.asarray(g), -np.sin(X) * Y, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("case", ["grad", "jit_grad", "vmap_grad", "vjp", "value_and_grad"])
def test_reverse_mode_of_the_function_raises_as_jax(case):
    f, _ = _sin_plus()
    run = {
        "grad": lambda: jax.grad(f)(1.0, 2.0),
        "jit_grad": lambda: jax.jit(jax.grad(f))(1.0, 2.0),
        "vmap_grad": lambda: jax.vmap(jax.grad(f))(X, Y),
        "vjp": lambda: jax.vjp(f, 1.0, 2.0),
        "value_and_grad": lambda: jax.value_and_grad(f)(1.0, 2.0),
    }[case]
    with pytest.raises(ValueError) as e:
        run()
    assert str(e.value) == LINEARIZE_MESSAGE


def test_custom_vjp_outside_custom_vmap_gives_both_rules():
    # JAX's docstring example: the custom_vjp wraps the custom_vmap function
    # and forwards def_vmap to it. Values recorded from JAX 0.10.2.
    @jax.custom_vjp
    @custom_vmap
    def f(x, y):
        return jnp.sin(x) * y

    @f.def_vmap
    def f_vmap_rule(axis_size, in_batched, xs, ys):
        return jnp.cos(xs) * ys, True

    f.defvjp(*sin_times_vjp_rules(f))
    np.testing.assert_allclose(np.asarray(jax.vmap(f)(jnp.zeros(3), jnp.ones(3))), [1.0, 1.0, 1.0])
    assert float(jax.grad(f)(jnp.zeros(()), jnp.ones(()))) == 1.0
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(f))(jnp.zeros(3), jnp.ones(3))), [1.0, 1.0, 1.0])


def _identity_with_rule(rule):
    """The identity as a custom_vmap function batched by `rule`."""
    g = custom_vmap(lambda x: x)
    g.def_vmap(rule)
    return g


def test_unbatched_output_is_broadcast_by_vmap():
    def first_only(axis_size, in_batched, xs):
        return xs[0], False

    np.testing.assert_allclose(np.asarray(jax.vmap(_identity_with_rule(first_only))(X)), [0.0, 0.0, 0.0])


def test_pytree_arguments_and_outputs():
    seen = []

    @custom_vmap
    def h(d):
        return {"s": d["a"] * d["b"]}

    @h.def_vmap
    def h_rule(axis_size, in_batched, d):
        seen.append(in_batched)
        return {"s": d["a"] + d["b"]}, {"s": True}

    out = jax.vmap(h)({"a": X, "b": X})
    np.testing.assert_allclose(np.asarray(out["s"]), X + X)
    out = jax.vmap(h, ({"a": 0, "b": None},))({"a": X, "b": 2.0})
    np.testing.assert_allclose(np.asarray(out["s"]), X + 2.0)
    assert seen == [[{"a": True, "b": True}], [{"a": True, "b": False}]]
    np.testing.assert_allclose(float(h({"a": 2.0, "b": 3.0})["s"]), 6.0)


def test_keyword_arguments_resolve_to_positions():
    f, _ = _sin_plus()
    np.testing.assert_allclose(float(f(1.0, y=2.0)), np.sin(1.0) + 2.0, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.vmap(lambda a: f(x=a, y=1.0))(X)), np.cos(X), rtol=1e-6)


def test_make_jaxpr_stages_one_custom_vmap_call():
    f, _ = _sin_plus()
    assert "custom_vmap_call" in str(jax.make_jaxpr(f)(1.0, 2.0))
    text = str(jax.make_jaxpr(jax.vmap(f))(X, Y))
    assert "cos" in text and "custom_vmap_call" not in text and "sin" not in text


# ------------------------------------------------------------ errors (recorded from JAX 0.10.2)


def test_missing_rule_raises_attribute_error():
    g = custom_vmap(lambda x: x)
    with pytest.raises(AttributeError, match="No batching rule defined for custom_vmap function <lambda> "
                                             "using def_vmap."):
        g(1.0)


def test_arguments_that_do_not_bind_raise_type_error():
    f, _ = _sin_plus()
    with pytest.raises(TypeError) as e:
        f(1.0, 2.0, 3.0)
    assert str(e.value) == ("The input arguments to the custom_vmap-decorated function f could not be resolved "
                            "to positional-only arguments. Binding failed with the error:\n"
                            "too many positional arguments")


def test_rule_output_and_spec_structures_must_match():
    def bad(axis_size, in_batched, xs):
        return (xs, xs), True

    with pytest.raises(ValueError) as e:
        jax.vmap(_identity_with_rule(bad))(X)
    assert str(e.value) == ("structure of output value and output batching specification returned by custom "
                            "vmap rule (bad) do not match.\nOutput values: PyTreeDef((*, *))\n"
                            "Batching spec: PyTreeDef(*)")

    def other(axis_size, in_batched, xs):
        return [xs], [True]

    with pytest.raises(ValueError) as e:
        jax.vmap(_identity_with_rule(other))(X)
    assert str(e.value) == ("structure of output returned by custom vmap rule (other) does not match that of "
                            "original custom-vmapped function.\nOriginal output: PyTreeDef(*)\n"
                            "Rule output: PyTreeDef([*])")


def test_rule_output_of_the_wrong_shape_raises_value_error():
    def wrong(axis_size, in_batched, xs):
        return xs[0], True  # claims to be batched but lost the axis

    with pytest.raises(ValueError, match="marked batched"):
        jax.vmap(_identity_with_rule(wrong))(X)


# ------------------------------------------------------------ sequential_vmap


def _printing_step():
    @sequential_vmap
    def step(x, y):
        jax.debug.print("{}", x)
        return x * y + 1

    return step


def test_sequential_vmap_loops_over_the_batch():
    step = _printing_step()
    out = io.StringIO()
    with redirect_stdout(out):
        res = jax.vmap(step)(X, Y)
    np.testing.assert_allclose(np.asarray(res), X * Y + 1)
    assert out.getvalue().split() == ["0.0", "1.0", "2.0"]  # one call per member, in order
    np.testing.assert_allclose(float(step(2.0, 3.0)), 7.0)


def test_an_effectful_body_is_kept_by_jit_when_its_result_is_unused():
    # The call's equation carries its body's effect (as JAX's custom_vmap_call
    # does): jit keeps it although nothing uses its result.
    step = _printing_step()

    @jax.jit
    def f(x, y):
        step(x, y)
        return x

    out = io.StringIO()
    with redirect_stdout(out):
        np.testing.assert_allclose(float(f(2.0, 3.0)), 2.0)
    assert out.getvalue().split() == ["2.0"]
    jaxpr = jax.make_jaxpr(lambda x, y: step(x, y))(2.0, 3.0)
    assert jaxpr.eqns[0].primitive.name == "custom_vmap_call" and jaxpr.eqns[0].effects


def test_sequential_vmap_shares_unbatched_arguments_and_nests():
    step = _printing_step()
    with redirect_stdout(io.StringIO()):
        np.testing.assert_allclose(np.asarray(jax.vmap(step, (0, None))(X, 3.0)), X * 3.0 + 1)
        np.testing.assert_allclose(np.asarray(jax.jit(jax.vmap(step))(X, Y)), X * Y + 1)
        a = np.arange(4.0, dtype=np.float32).reshape(2, 2)
        np.testing.assert_allclose(np.asarray(jax.vmap(jax.vmap(step))(a, a)), a * a + 1)
        # forward mode through the loop works; reverse mode meets the function
        # inside the loop body and raises, as in JAX 0.10.2
        _, t = jax.jvp(jax.vmap(step), (X, Y), (np.ones(3, np.float32), np.zeros(3, np.float32)))
        np.testing.assert_allclose(np.asarray(t), Y)
        with pytest.raises(ValueError, match="Linearization failed"):
            jax.grad(lambda x: jax.vmap(step)(x, Y).sum())(X)


def test_sequential_vmap_of_a_function_with_no_batched_form():
    # a host callback that only handles one example: sequential_vmap loops it
    def host(v):
        assert np.ndim(v) == 0
        return np.float32(v * 10)

    @sequential_vmap
    def scale(x):
        return jax.pure_callback(host, jax.ShapeDtypeStruct((), jnp.float32), x)

    np.testing.assert_allclose(np.asarray(jax.vmap(scale)(X)), X * 10)
