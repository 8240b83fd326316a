"""Program-level names of JAX 0.10.2: `checkify.debug_check` / `init_error`,
`ad_checkpoint.Saveable` / `Recompute` / `Offloadable`,
`custom_derivatives.custom_vjp_primal_tree_values` / `remat_opt_p`,
`stages.CompilerOptions` and the debug effects of jaxprs
(`debug.DebugEffect` / `OrderedDebugEffect`); behaviour recorded from JAX."""
import typing

import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import ad_checkpoint as A
from microjax_rs import custom_derivatives as C
from microjax_rs import export
from microjax_rs.ad_checkpoint import checkpoint_name
from microjax_rs.experimental import checkify


# ---------------------------------------------------------------- checkify


def _positive_double(x):
    checkify.debug_check(x > 0, "x must be positive {}", x)
    return x * 2


def test_debug_check_is_a_no_op_outside_checkify():
    # recorded from JAX 0.10.2: -2.0 -2.0, and grad/vmap run unchecked
    assert float(_positive_double(jnp.float32(-1.0))) == -2.0
    assert float(jax.jit(_positive_double)(-1.0)) == -2.0
    assert float(jax.grad(_positive_double)(-1.0)) == 2.0
    np.testing.assert_array_equal(jax.vmap(_positive_double)(jnp.array([1.0, -1.0])), [2.0, -2.0])
    assert checkify.debug_check(False, "outside") is None


def test_debug_check_reports_under_checkify():
    err, out = checkify.checkify(_positive_double)(jnp.float32(-1.0))
    assert err.get().startswith("x must be positive -1.0") and float(out) == -2.0
    with pytest.raises(checkify.JaxRuntimeError, match="x must be positive -1.0"):
        err.throw()
    err, out = checkify.checkify(jax.jit(_positive_double))(1.0)
    assert err.get() is None and float(out) == 2.0
    err, _ = checkify.checkify(jax.jit(_positive_double))(-3.0)
    assert err.get().startswith("x must be positive -3.0")
    err, _ = jax.vmap(checkify.checkify(_positive_double))(jnp.array([1.0, -1.0]))
    assert err.get().startswith("at mapped index 1: x must be positive -1.0")
    err, _ = checkify.checkify(jax.grad(_positive_double))(jnp.float32(-1.0))
    assert err.get().startswith("x must be positive -1.0")


def test_debug_check_errors_as_jax():
    with pytest.raises(TypeError, match=r"debug_check takes a scalar pred as argument, got \[ True\]"):
        checkify.debug_check(jnp.array([True]), "m")
    with pytest.raises(TypeError, match="Formatting arguments to checkify.check need to be PyTrees of arrays"):
        checkify.debug_check(True, "m {}", 1.0)


def test_init_error_is_the_empty_error():
    e = checkify.init_error
    assert isinstance(e, checkify.Error) and str(e) == "Error(None)"
    assert e.get() is None and e.get_exception() is None and e.throw() is None


# ---------------------------------------------------------------- checkpoint policy answers


def test_policy_answer_types():
    assert repr(A.Saveable) == "Saveable" and repr(A.Recompute) == "Recompute"
    o = A.Offloadable("device", "pinned_host")
    assert (o.src, o.dst) == ("device", "pinned_host") and isinstance(o, tuple)
    assert o == A.Offloadable("device", "pinned_host") and hash(o) == hash(A.Offloadable("device", "pinned_host"))
    assert repr(o) == "Offloadable(src='device', dst='pinned_host')"
    for answer, saved in ((True, True), (False, False), (np.bool_(True), True), (A.Saveable, True),
                          (A.Recompute, False), (o, True)):
        assert A._decision(answer) is saved
    with pytest.raises(TypeError, match="Value returned by a remat policy should be a bool or "
                                        "`ad_checkpoint.Recompute`, `ad_checkpoint.Saveable` or "
                                        "`ad_checkpoint.Offloadable\\(...\\)`. Got bad of type <class 'str'>."):
        A._decision("bad")


def test_offloading_policy_answers_as_jax():
    # recorded from JAX 0.10.2: Saveable, Offloadable(src='device', dst='pinned_host'), Recompute
    pol = jax.checkpoint_policies.save_and_offload_only_these_names(
        names_which_can_be_saved=["a"], names_which_can_be_offloaded=["b"], offload_src="device",
        offload_dst="pinned_host")
    name_p = jax.core.Primitive("name")
    assert pol(name_p, name="a") is A.Saveable
    assert pol(name_p, name="b") == A.Offloadable("device", "pinned_host")
    assert pol(name_p, name="c") is A.Recompute
    both = jax.checkpoint_policies.save_from_both_policies(pol, jax.checkpoint_policies.dots_saveable)
    assert both(name_p, name="b") is True and both(name_p, name="c") is False

    def f(x):
        h = checkpoint_name(jnp.sin(x), "a")
        return jnp.sin(checkpoint_name(jnp.cos(h), "b"))
    np.testing.assert_allclose(jax.grad(jax.checkpoint(f, policy=pol))(1.0), jax.grad(f)(1.0), rtol=1e-6)


# ---------------------------------------------------------------- custom_derivatives


def test_custom_vjp_primal_tree_values():
    seen = []

    @jax.custom_vjp
    def g(x):
        return x * 2

    def fwd(x):
        seen.append(x)
        v = C.custom_vjp_primal_tree_values(x)
        return v * 2, None
    g.defvjp(fwd, lambda res, ct: (ct * 2,), symbolic_zeros=True)
    assert float(jax.grad(g)(1.0)) == 2.0
    assert type(seen[0]) is C.CustomVJPPrimal
    tree = {"a": C.CustomVJPPrimal(1.0, True), "b": [C.CustomVJPPrimal(2.0, False)]}
    assert C.custom_vjp_primal_tree_values(tree) == {"a": 1.0, "b": [2.0]}
    with pytest.raises(TypeError, match="unexpected leaf type <class 'int'>"):
        C.custom_vjp_primal_tree_values({"a": 1})


def test_remat_opt_primitive():
    fwd = jax.make_jaxpr(lambda x: (jnp.cos(x), jnp.sin(x)))(1.0)

    def run(x):
        return C.remat_opt_p.bind(x, num_consts=0, num_res=1, fwd_jaxpr=fwd, fun_jaxpr_thunk=None)
    assert C.remat_opt_p.name == "remat_opt" and C.remat_opt_p.multiple_results
    res, out = run(1.0)
    np.testing.assert_allclose([res, out], [np.cos(1.0), np.sin(1.0)], rtol=1e-6)
    np.testing.assert_allclose(jax.jit(run)(1.0), [np.cos(1.0), np.sin(1.0)], rtol=1e-6)
    closed = jax.make_jaxpr(run)(1.0)
    assert [e.primitive.name for e in closed.eqns] == ["remat_opt"]
    assert closed.eqns[0].params["num_res"] == 1
    np.testing.assert_allclose(jax.grad(lambda x: run(x)[1])(1.0), np.cos(1.0), rtol=1e-6)
    xs = np.arange(3, dtype=np.float32)
    np.testing.assert_allclose(jax.vmap(run)(xs)[1], np.sin(xs), rtol=1e-6)


# ---------------------------------------------------------------- stages


def test_compiler_options_type():
    # recorded from JAX 0.10.2: dict[str, typing.Union[str, bool]]
    assert jax.stages.CompilerOptions == dict[str, typing.Union[str, bool]]
    lowered = jax.jit(lambda x: x + 1).lower(1.0)
    options: jax.stages.CompilerOptions = {"xla_gpu_autotune_level": "0"}
    assert float(lowered.compile(options)(1.0)) == 2.0


# ---------------------------------------------------------------- debug effects


def test_debug_effects_on_jaxprs():
    closed = jax.make_jaxpr(lambda x: (jax.debug.print("x {}", x), x)[1])(1.0)
    (effect,) = closed.effects
    assert isinstance(effect, jax.debug.DebugEffect) and not isinstance(effect, jax.debug.OrderedDebugEffect)
    assert closed.eqns[0].effects == {effect}
    closed = jax.make_jaxpr(lambda x: (jax.debug.print("x {}", x, ordered=True), x)[1])(1.0)
    (effect,) = closed.effects
    assert isinstance(effect, jax.debug.OrderedDebugEffect)
    closed = jax.make_jaxpr(lambda x: (jax.debug.callback(print, x), x)[1])(1.0)
    assert {type(e) for e in closed.effects} == {jax.debug.DebugEffect}
    # effects of equations holding jaxprs come from inside them
    closed = jax.make_jaxpr(jax.vmap(lambda x: (jax.debug.callback(print, x), x)[1]))(jnp.ones(2))
    assert {type(e) for e in closed.effects} == {jax.debug.DebugEffect}
    closed = jax.make_jaxpr(jax.jit(lambda x: (jax.debug.print("{}", x, ordered=True), x)[1]))(1.0)
    assert {type(e) for e in closed.effects} == {jax.debug.OrderedDebugEffect}
    assert not jax.make_jaxpr(lambda x: x + 1)(1.0).effects


def test_exported_effects_split_ordered():
    def f(x):
        jax.debug.print("{}", x, ordered=True)
        jax.debug.print("plain")
        return x
    exp = export.export(jax.jit(f))(1.0)
    assert [type(e) for e in exp.ordered_effects] == [jax.debug.OrderedDebugEffect]
    assert [type(e) for e in exp.unordered_effects] == [jax.debug.DebugEffect]
