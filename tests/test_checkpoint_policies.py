"""`jax.checkpoint(policy=...)`, `jax.checkpoint_policies`, `checkpoint_name`
and `print_saved_residuals`: the policy decides exactly which values reverse
mode saves (counted on the residuals), derivatives are unchanged."""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs.ad_checkpoint import (Offloadable, Recompute, Saveable, checkpoint_name,
                                       print_saved_residuals, saved_residuals)

P = jax.checkpoint_policies
RNG = np.random.default_rng(0)
W1 = jnp.asarray(RNG.standard_normal((4, 5)) * 0.5)
W2 = jnp.asarray(RNG.standard_normal((5, 3)) * 0.5)


def mlp(x):
    h = jnp.sin(x @ W1)
    h = checkpoint_name(h, "hidden")
    return jnp.sum(jnp.tanh(h @ W2) ** 2)


X = jnp.asarray(RNG.standard_normal(4))


def residual_kinds(f, *args):
    return sorted(desc.split(" from ")[0] for _, desc in saved_residuals(f, *args))


pytestmark = pytest.mark.usefixtures("x64")  # every test in 64-bit mode (conftest.py)


def x64_data():
    return jnp.asarray(np.asarray(X, np.float64))


def test_nothing_saveable_saves_only_the_inputs():
    for policy in (None, P.nothing_saveable):
        assert residual_kinds(jax.checkpoint(mlp, policy=policy), X) == ["from the argument x"]


def test_dots_saveable_saves_the_products():
    kinds = residual_kinds(jax.checkpoint(mlp, policy=P.dots_saveable), X)
    assert kinds == ["output of dot_general", "output of dot_general"]
    assert P.checkpoint_dots is P.dots_saveable


def test_save_only_these_names_saves_the_named_value_and_what_recomputation_needs():
    kinds = residual_kinds(jax.checkpoint(mlp, policy=P.save_only_these_names("hidden")), X)
    assert kinds == ["from the argument x", "named 'hidden'"]
    # A name the function does not use saves nothing but the input.
    kinds = residual_kinds(jax.checkpoint(mlp, policy=P.save_only_these_names("other")), X)
    assert kinds == ["from the argument x"]


def test_save_any_names_but_these_and_anything_except():
    kinds = residual_kinds(jax.checkpoint(mlp, policy=P.save_any_names_but_these("other")), X)
    assert kinds == ["from the argument x", "named 'hidden'"]
    kinds = residual_kinds(jax.checkpoint(mlp, policy=P.save_any_names_but_these("hidden")), X)
    assert kinds == ["from the argument x"]
    everything = residual_kinds(jax.checkpoint(mlp, policy=P.save_anything_except_these_names("other")), X)
    assert everything == residual_kinds(mlp, X)


def test_everything_saveable_saves_what_no_checkpoint_saves():
    assert residual_kinds(jax.checkpoint(mlp, policy=P.everything_saveable), X) == residual_kinds(mlp, X)


def test_save_from_both_policies_is_the_union():
    def f(x):
        h = checkpoint_name(jnp.sin(x @ W1), "hidden")
        return jnp.sum(jnp.tanh(h @ W2)) * jnp.sum(h)

    dots, names = P.dots_saveable, P.save_only_these_names("hidden")
    assert residual_kinds(jax.checkpoint(f, policy=dots), X) == ["output of dot_general"] * 2
    assert residual_kinds(jax.checkpoint(f, policy=names), X) == ["from the argument x", "named 'hidden'"]
    both = residual_kinds(jax.checkpoint(f, policy=P.save_from_both_policies(dots, names)), X)
    assert both == ["named 'hidden'", "output of dot_general", "output of dot_general"]


def test_dots_with_no_batch_dims_skips_batched_products():
    a = jnp.asarray(RNG.standard_normal((2, 3, 4)))
    w = jnp.asarray(RNG.standard_normal((3, 3)))

    def f(a, b):
        batched = jnp.einsum("bij,bjk->bik", a, b)  # batch dimension b
        plain = jnp.sin(batched) @ w  # no batch dimension
        return jnp.sum(jnp.sin(plain))

    kinds = residual_kinds(jax.checkpoint(f, policy=P.dots_with_no_batch_dims_saveable), a, a.transpose(0, 2, 1))
    assert kinds.count("output of dot_general") == 1
    assert residual_kinds(jax.checkpoint(f, policy=P.dots_saveable), a, a.transpose(0, 2, 1)).count(
        "output of dot_general") == 2
    assert P.offload_dot_with_no_batch_dims("device", "pinned_host") is P.dots_with_no_batch_dims_saveable


def test_offloading_names_policy_saves_both_lists():
    pol = P.save_and_offload_only_these_names(names_which_can_be_saved=["hidden"],
                                              names_which_can_be_offloaded=["out"],
                                              offload_src="device", offload_dst="pinned_host")

    def f(x):
        h = checkpoint_name(jnp.sin(x @ W1), "hidden")
        o = checkpoint_name(jnp.cos(h @ W2), "out")
        return jnp.sum(jnp.sin(o))

    # cos(o)' reads o, sin(h @ W2) is recomputed from h, cos(x @ W1) from x
    assert residual_kinds(jax.checkpoint(f, policy=pol), X) == [
        "from the argument x", "named 'hidden'", "named 'out'"]


ALL_POLICIES = [None, P.nothing_saveable, P.everything_saveable, P.dots_saveable,
                P.dots_with_no_batch_dims_saveable, P.save_only_these_names("hidden"),
                P.save_any_names_but_these("x"),
                P.save_from_both_policies(P.dots_saveable, P.save_only_these_names("hidden"))]


@pytest.mark.parametrize("policy", ALL_POLICIES, ids=lambda p: getattr(p, "__name__", "default"))
def test_gradients_are_unchanged_and_match_finite_differences(policy):
    x = x64_data()
    g = jax.checkpoint(mlp, policy=policy)
    want = np.asarray(jax.grad(mlp)(x))
    np.testing.assert_allclose(np.asarray(jax.grad(g)(x)), want, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jax.jit(jax.grad(g))(x)), want, rtol=1e-12)
    eps, fd = 1e-6, []
    for i in range(4):
        e = np.zeros(4)
        e[i] = eps
        fd.append((float(mlp(x + e)) - float(mlp(x - e))) / (2 * eps))
    np.testing.assert_allclose(want, fd, rtol=1e-6, atol=1e-9)
    # second order: the hessian through the checkpointed function
    np.testing.assert_allclose(np.asarray(jax.hessian(g)(x)), np.asarray(jax.hessian(mlp)(x)), rtol=1e-10)


def test_vmap_of_grad_with_a_policy_matches_a_loop():
    xs = jnp.asarray(RNG.standard_normal((3, 4)))
    g = jax.grad(jax.checkpoint(mlp, policy=P.dots_saveable))
    batched = np.asarray(jax.vmap(g)(xs))
    for i in range(3):
        np.testing.assert_allclose(batched[i], np.asarray(jax.grad(mlp)(xs[i])), rtol=1e-12)


def test_checkpoint_name_is_the_identity_under_every_transform():
    x = x64_data()

    def f(x):
        return checkpoint_name(jnp.sin(x), "s")

    np.testing.assert_array_equal(np.asarray(f(x)), np.sin(np.asarray(x)))
    np.testing.assert_array_equal(np.asarray(jax.jit(f)(x)), np.sin(np.asarray(x)))
    np.testing.assert_allclose(np.asarray(jax.grad(lambda v: f(v).sum())(x)), np.cos(np.asarray(x)))
    np.testing.assert_array_equal(np.asarray(jax.vmap(f)(x)), np.sin(np.asarray(x)))
    tree = checkpoint_name({"a": x, "b": (x, x)}, "t")
    assert set(tree) == {"a", "b"} and len(tree["b"]) == 2
    assert "name[name=s]" in str(jax.make_jaxpr(f)(x))
    with pytest.raises(TypeError):
        checkpoint_name(x, 3)


def test_policies_are_callable_with_jax_signature():
    class Prim:
        def __init__(self, name):
            self.name = name

    dot = Prim("dot_general")
    assert P.dots_saveable(dot, dimension_numbers=(((1,), (0,)), ((), ())))
    assert not P.dots_with_no_batch_dims_saveable(dot, dimension_numbers=(((2,), (1,)), ((0,), (0,))))
    assert not P.nothing_saveable(dot) and P.everything_saveable(Prim("sin"))
    assert P.save_only_these_names("a")(Prim("name"), name="a")
    assert not P.save_only_these_names("a")(Prim("name"), name="b")


# Policies written as Python functions, with JAX's signature. The residuals
# are those JAX 0.10.2 lists for the same policies (JAX also lists the two
# closed-over weight matrices "from a constant").
FUNCTION_POLICIES = {
    "sin": (lambda prim, *avals, **params: prim is jax.lax.sin_p,
            ["from the argument x", "output of sin"]),
    "second_dot_by_aval": (
        lambda prim, *avals, **params: Saveable if prim is jax.lax.dot_general_p
        and avals[1].shape == (5, 3) else Recompute,
        ["from the argument x", "output of dot_general"]),
    "offloaded_sin": (
        lambda prim, *avals, **params: Offloadable("device", "pinned_host")
        if prim is jax.lax.sin_p else False,
        ["from the argument x", "output of sin"]),
    "nothing": (lambda prim, *avals, **params: False, ["from the argument x"]),
}


@pytest.mark.parametrize("name", sorted(FUNCTION_POLICIES))
def test_python_function_policies_save_what_they_select(name):
    policy, kinds = FUNCTION_POLICIES[name]
    f = jax.checkpoint(mlp, policy=policy)
    assert residual_kinds(f, X) == kinds


@pytest.mark.parametrize("name", sorted(FUNCTION_POLICIES))
def test_python_function_policies_keep_the_gradient(name):
    policy, _ = FUNCTION_POLICIES[name]
    f = jax.checkpoint(mlp, policy=policy)
    x = x64_data()
    want = np.asarray(jax.grad(mlp)(x))
    np.testing.assert_allclose(np.asarray(jax.grad(f)(x)), want, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jax.jit(jax.grad(f))(x)), want, rtol=1e-12)
    xs = jnp.stack([x, 2 * x])
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(f))(xs)),
                               np.stack([np.asarray(jax.grad(mlp)(r)) for r in xs]), rtol=1e-12)
    eps = 1e-6
    fd = [(float(mlp(x + eps * e)) - float(mlp(x - eps * e))) / (2 * eps) for e in np.eye(4)]
    np.testing.assert_allclose(np.asarray(jax.grad(f)(x)), fd, rtol=1e-6, atol=1e-9)


def test_python_function_policy_sees_each_equation_with_jax_signature():
    seen = []

    def policy(prim, *avals, **params):
        seen.append((prim.name, tuple(tuple(a.shape) for a in avals), sorted(params)))
        return False

    jax.grad(jax.checkpoint(mlp, policy=policy))(X)
    assert ("sin", ((5,),), []) in seen
    assert ("dot_general", ((4,), (4, 5)), ["dimension_numbers", "precision",
                                            "preferred_element_type"]) in seen
    assert ("name", ((5,),), ["name"]) in seen


def test_python_function_policy_answers_are_checked():
    # JAX's TypeError for an answer that is not a bool / Saveable / Recompute / Offloadable.
    with pytest.raises(TypeError, match="Value returned by a remat policy should be a bool"):
        jax.grad(jax.checkpoint(mlp, policy=lambda *a, **k: 3))(X)
    with pytest.raises(TypeError, match="callable"):
        jax.checkpoint(mlp, policy="dots_saveable")


def test_print_saved_residuals_prints_one_line_per_residual(capsys):
    print_saved_residuals(jax.checkpoint(mlp, policy=P.dots_saveable), X)
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2 and all(line.startswith("f32[") and "output of dot_general" in line for line in lines)


def test_policy_is_printed_and_round_trips():
    jaxpr = jax.make_jaxpr(jax.checkpoint(mlp, policy=P.save_only_these_names("hidden")))(X)
    assert "save_only_these_names" in str(jaxpr)


def test_residuals_are_described_through_nested_calls():
    # jit(checkpoint(f)): the residual is the argument, seen through the pjit and the checkpoint
    f = jax.jit(jax.checkpoint(lambda x: jnp.sum(jnp.sin(x) ** 2)))
    assert [d for _, d in saved_residuals(f, X)] == ["from the argument x"]
