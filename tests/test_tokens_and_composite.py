"""`lax.create_token`, `lax.after_all`, `lax.dce_sink` and `lax.composite`
against JAX 0.10.2's behaviour (equations, values under jit/grad/vmap, errors)."""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import lax
from microjax_rs.extend.core import AbstractToken, Token


def _eqn_names(closed):
    return [e.primitive.name for e in closed.eqns]


# ---------------------------------------------------------------- tokens


def test_tokens_eagerly():
    t = lax.create_token()
    assert isinstance(t, Token) and isinstance(lax.create_token(1.0), Token)
    assert isinstance(lax.after_all(), Token)
    assert isinstance(lax.after_all(t, lax.create_token()), Token)
    assert t.aval == AbstractToken() and t.aval.str_short() == "Tok"
    assert t.block_until_ready() is t


def test_token_equations_as_jax():
    # recorded from JAX 0.10.2: create_token takes no operand (its argument is
    # ignored), after_all takes the tokens
    closed = jax.make_jaxpr(lambda x: lax.after_all(lax.create_token(x), lax.create_token()))(1.0)
    assert _eqn_names(closed) == ["create_token", "create_token", "after_all"]
    assert [len(e.invars) for e in closed.eqns] == [0, 0, 2]
    assert closed.eqns[2].invars == closed.eqns[0].outvars + closed.eqns[1].outvars


def test_tokens_pass_through_jit():
    def f(x, t):
        return x * 2, lax.after_all(t, lax.create_token(x))

    out, tok = jax.jit(f)(1.5, lax.create_token())
    assert float(out) == 3.0 and isinstance(tok, Token)
    assert _eqn_names(jax.make_jaxpr(f)(1.0, lax.create_token())) == ["mul", "create_token", "after_all"]


def test_tokens_under_grad_and_vmap():
    # recorded from JAX 0.10.2: a token is no differentiable value, the rest is unchanged
    assert float(jax.grad(lambda x: lax.create_token(x) and x * 3.0)(1.0)) == 3.0
    np.testing.assert_array_equal(jax.vmap(lambda x: (lax.create_token(x), x + 1)[1])(jnp.ones(3)), [2.0] * 3)


@pytest.mark.parametrize("bad", [1.0, jnp.ones(2), None])
def test_after_all_rejects_non_tokens(bad):
    with pytest.raises(TypeError, match="Arguments to after_all must be tokens"):
        lax.after_all(lax.create_token(), bad)


def test_token_primitive_objects():
    assert lax.create_token_p.name == "create_token" and not lax.create_token_p.multiple_results
    assert lax.after_all_p.name == "after_all" and not lax.after_all_p.multiple_results
    assert lax.dce_sink_p.name == "dce_sink" and lax.dce_sink_p.multiple_results


# ---------------------------------------------------------------- dce_sink


def test_dce_sink_keeps_an_unused_value():
    # recorded from JAX 0.10.2:
    # { lambda ; a:f32[]. let b:f32[] = mul a 2.0:f32[]; dce_sink[prevent_mlir_dce=False] b in () }
    closed = jax.make_jaxpr(lambda x: lax.dce_sink(x * 2))(1.0)
    assert _eqn_names(closed) == ["mul", "dce_sink"]
    assert closed.eqns[1].params == {"prevent_mlir_dce": False} and closed.eqns[1].outvars == []
    assert closed.jaxpr.outvars == []
    # one equation per leaf
    closed = jax.make_jaxpr(lambda x: (lax.dce_sink((x * 2, {"a": x + 1}), prevent_mlir_dce=True), x)[1])(1.0)
    assert _eqn_names(closed) == ["mul", "add", "dce_sink", "dce_sink"]
    assert closed.eqns[3].params == {"prevent_mlir_dce": True}


def test_dce_sink_values_and_transforms():
    assert lax.dce_sink(jnp.ones(3)) is None
    assert jax.jit(lambda x: lax.dce_sink(x))(1.0) is None
    # recorded from JAX 0.10.2: grad of (dce_sink(x), x * 3)[1] is 3.0
    assert float(jax.grad(lambda x: (lax.dce_sink(x), x * 3.0)[1])(1.0)) == 3.0
    np.testing.assert_array_equal(jax.vmap(lambda x: (lax.dce_sink(x), x * 3.0)[1])(jnp.ones(3)), [3.0] * 3)
    assert float(jax.jit(lambda x: (lax.dce_sink(jnp.sin(x)), x + 1)[1])(1.0)) == 2.0


# ---------------------------------------------------------------- composite


def _my_tangent(x, y, *, scale=1.0):
    return jnp.sin(x) * y * scale


tangent = lax.composite(_my_tangent, name="my.tangent", version=2)


def test_composite_is_one_equation_with_jax_params():
    closed = jax.make_jaxpr(tangent)(1.0, 2.0)
    assert _eqn_names(closed) == ["composite"]
    params = closed.eqns[0].params
    assert sorted(params) == ["attributes", "jaxpr", "name", "version"]
    assert params["name"] == "my.tangent" and params["version"] == 2 and params["attributes"] == ()
    assert _eqn_names(params["jaxpr"]) == ["sin", "mul", "mul"]
    # keyword arguments are static attributes: (name, leaves, treedef), as JAX
    params = jax.make_jaxpr(lambda x, y: tangent(x, y, scale=3.0))(1.0, 2.0).eqns[0].params
    (key, leaves, tree), = params["attributes"]
    assert key == "scale" and leaves == (3.0,) and tree == jax.tree_util.tree_structure(3.0)


def test_composite_values_eager_and_jit():
    want = np.sin(np.float32(1.0)) * 2.0
    np.testing.assert_allclose(tangent(1.0, 2.0), want, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(tangent)(1.0, 2.0), want, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(lambda x, y: tangent(x, y, scale=3.0))(1.0, 2.0), 3 * want, rtol=1e-6)
    x = np.linspace(-1, 1, 5).astype(np.float32)
    np.testing.assert_allclose(tangent(x, x), np.sin(x) * x, rtol=1e-6)
    # under jit the composite equation sits inside the jitted program, as JAX
    inner = jax.make_jaxpr(jax.jit(tangent))(1.0, 2.0).eqns[0].params["jaxpr"]
    assert _eqn_names(inner) == ["composite"]


def test_composite_pytrees_and_closures():
    pair = lax.composite(lambda x: (x, {"double": x * 2}), name="pair")
    a, b = pair(jnp.float32(1.5))
    assert float(a) == 1.5 and float(b["double"]) == 3.0
    assert len(jax.make_jaxpr(pair)(1.0).eqns[0].outvars) == 2
    c = jnp.arange(3.0)
    shifted = lax.composite(lambda x: x + c, name="shift")
    np.testing.assert_array_equal(jax.jit(shifted)(jnp.ones(3)), [1.0, 2.0, 3.0])
    # a traced value the decomposition closes over becomes an operand
    assert float(jax.jit(lambda y: lax.composite(lambda x: x * y, name="scaled")(y))(2.0)) == 4.0


def test_composite_has_no_jvp_or_batching_rule_as_jax():
    # recorded from JAX 0.10.2
    with pytest.raises(ValueError, match="JVP rule for composite not implemented"):
        jax.grad(tangent)(1.0, 2.0)
    with pytest.raises(ValueError, match="JVP rule for composite not implemented"):
        jax.jvp(tangent, (1.0, 2.0), (1.0, 1.0))
    with pytest.raises(NotImplementedError, match="Batching rule for 'composite' not implemented"):
        jax.vmap(tangent)(jnp.arange(3.0), jnp.ones(3))
    # a stop_gradient'ed composite is fine under grad
    assert float(jax.grad(lambda x: lax.stop_gradient(tangent(x, 1.0)) + x)(1.0)) == 1.0
