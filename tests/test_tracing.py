"""make_jaxpr, jit, eval_shape and tracing errors, checked against NumPy and
against JAX's documented behaviour."""
import re

import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import core, lax
from microjax_rs.errors import (
    ConcretizationTypeError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)


def prims_of(closed):
    return [e.primitive.name for e in closed.jaxpr.eqns]


# -- make_jaxpr ------------------------------------------------------------------

def test_make_jaxpr_python_scalar_arg_is_weak_int():
    cj = jax.make_jaxpr(lambda x: x + 1)(5)
    (a,) = cj.jaxpr.invars
    assert a.aval == core.ShapedArray((), "int32", True)
    (eqn,) = cj.jaxpr.eqns
    assert eqn.primitive is lax.add_p
    assert isinstance(eqn.invars[1], core.Literal) and eqn.invars[1].val == 1
    assert re.search(r"add a 1:i32\[\]", str(cj))


def test_make_jaxpr_bar_seed_structure():
    def bar(w, b, x):
        return jnp.dot(w, x) + b + jnp.ones(5), x

    cj = jax.make_jaxpr(bar)(jnp.ones((5, 10)), jnp.ones(5), jnp.ones(10))
    j = cj.jaxpr
    assert len(j.invars) == 3 and len(j.outvars) == 2
    assert prims_of(cj) == ["dot_general", "add", "add"]
    assert j.outvars[1] is j.invars[2]
    # jnp.ones(5) is a concrete array closed over: a constvar
    assert len(j.constvars) == 1 and len(cj.consts) == 1
    np.testing.assert_array_equal(np.asarray(cj.consts[0]), np.ones(5, np.float32))
    dg = j.eqns[0]
    assert dg.params["dimension_numbers"] == (((1,), (0,)), ((), ()))
    assert [v.aval.shape for v in dg.outvars] == [(5,)]


def test_make_jaxpr_vars_are_stable_hashable_objects():
    cj = jax.make_jaxpr(lambda x: jnp.exp(jnp.tanh(x)))(jnp.ones(5))
    j = cj.jaxpr
    assert j.eqns[0].outvars[0] is j.eqns[1].invars[0]
    env = {j.invars[0]: 1}
    assert env[j.invars[0]] == 1
    assert prims_of(cj) == ["tanh", "exp"]
    assert j.eqns[0].primitive is lax.tanh_p


def test_make_jaxpr_weak_literal_keeps_array_dtype():
    cj = jax.make_jaxpr(lambda x: x * 2.0)(jnp.ones(3, dtype=jnp.float32))
    (eqn,) = cj.jaxpr.eqns
    lit = eqn.invars[1]
    # As JAX: the weak scalar is converted to the promoted (non-weak) dtype.
    assert lit.aval.dtype == np.float32 and lit.val == 2.0
    assert cj.out_avals[0] == core.ShapedArray((3,), "float32", False)


def test_make_jaxpr_static_argnums():
    def f(x, n):
        for _ in range(n):
            x = jnp.sin(x)
        return x

    cj = jax.make_jaxpr(f, static_argnums=1)(1.0, 3)
    assert prims_of(cj) == ["sin"] * 3


def test_make_jaxpr_return_shape_and_pytrees():
    def f(d):
        return {"s": jnp.sum(d["a"]), "t": (d["b"], d["a"] * 2)}

    cj, shapes = jax.make_jaxpr(f, return_shape=True)({"a": jnp.ones((2, 3)), "b": jnp.zeros(4)})
    assert shapes["s"].shape == () and shapes["t"][0].shape == (4,)
    assert len(cj.jaxpr.invars) == 2


def test_nested_jit_binds_pjit():
    inner = jax.jit(lambda x: jnp.sin(x) * 2.0)
    cj = jax.make_jaxpr(lambda x: inner(x) + 1.0)(jnp.ones(3))
    assert prims_of(cj) == ["pjit", "add"]
    sub = cj.jaxpr.eqns[0].params["jaxpr"]
    assert isinstance(sub, core.ClosedJaxpr)
    assert prims_of(sub) == ["sin", "mul"]
    assert "pjit" in str(cj)


def test_eval_shape():
    out = jax.eval_shape(lambda x, y: (x @ y, jnp.sum(x)), jax.ShapeDtypeStruct((2, 3), jnp.float32),
                         jnp.ones((3, 4)))
    assert out[0].shape == (2, 4) and out[0].dtype == np.float32
    assert out[1].shape == ()


# -- jit --------------------------------------------------------------------------

def test_jit_matches_eager_and_numpy():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 64)).astype(np.float32)
    w = rng.standard_normal((64, 64)).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)

    def f(x, w, b):
        return jnp.tanh(x @ w + b)

    jx, jw, jb = map(jnp.asarray, (x, w, b))
    eager = f(jx, jw, jb)
    jf = jax.jit(f)
    out1 = jf(jx, jw, jb)
    out2 = jf(jx, jw, jb)  # fast path
    np.testing.assert_allclose(np.asarray(eager), np.tanh(x @ w + b), rtol=2e-5, atol=2e-5)
    np.testing.assert_array_equal(np.asarray(out1), np.asarray(eager))
    np.testing.assert_array_equal(np.asarray(out2), np.asarray(eager))
    assert out2.dtype == np.float32 and out2.shape == (32, 64)


def test_jit_retraces_on_new_shape_and_dtype_only():
    traces = []

    @jax.jit
    def f(x):
        traces.append(x.shape)
        return x * 2

    f(jnp.ones(3))
    f(jnp.ones(3) + 1)
    assert len(traces) == 1
    f(jnp.ones(4))
    assert len(traces) == 2
    f(jnp.ones(4, dtype=jnp.int32))
    assert len(traces) == 3
    np.testing.assert_array_equal(np.asarray(f(jnp.arange(4))), np.arange(4) * 2)


def test_jit_weak_type_is_part_of_signature():
    traces = []

    @jax.jit
    def f(x):
        traces.append(1)
        return x + 1

    a = f(2.0)
    assert a.weak_type and a.dtype == np.float32
    b = f(jnp.float32(2.0))
    assert not b.weak_type
    assert len(traces) == 2


def test_jit_static_argnums_and_argnames():
    traces = []

    def f(x, n, *, mode="add"):
        traces.append((n, mode))
        return x + n if mode == "add" else x * n

    jf = jax.jit(f, static_argnums=1, static_argnames="mode")
    np.testing.assert_array_equal(np.asarray(jf(jnp.ones(2), 3)), [4, 4])
    np.testing.assert_array_equal(np.asarray(jf(jnp.ones(2), 3, mode="mul")), [3, 3])
    jf(jnp.ones(2), 3)
    assert traces == [(3, "add"), (3, "mul")]
    jn = jax.jit(f, static_argnames=("n",))
    np.testing.assert_array_equal(np.asarray(jn(jnp.ones(2), 5)), [6, 6])


def test_jit_unhashable_static_arg_is_a_clear_error():
    jf = jax.jit(lambda x, cfg: x, static_argnums=1)
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        jf(jnp.ones(2), [1, 2])


def test_jit_pytrees_in_and_out():
    @jax.jit
    def f(params, x):
        return {"y": params["w"] * x + params["b"], "n": (x, None)}

    out = f({"w": jnp.ones(3), "b": jnp.zeros(3)}, jnp.arange(3.0))
    np.testing.assert_array_equal(np.asarray(out["y"]), [0, 1, 2])
    assert out["n"][1] is None


def test_jit_fast_path_output_structures():
    f1 = jax.jit(lambda a, b, c: (a, b, c))
    x, y, z = jnp.ones(2), jnp.zeros(3), jnp.arange(4)
    for _ in range(3):
        out = f1(x, y, z)
        assert isinstance(out, tuple) and len(out) == 3
        np.testing.assert_array_equal(np.asarray(out[2]), np.arange(4))
    f2 = jax.jit(lambda a: [a, {"k": a * 2}])
    for _ in range(3):
        out = f2(x)
        assert isinstance(out, list) and isinstance(out[1], dict)
        np.testing.assert_array_equal(np.asarray(out[1]["k"]), [2, 2])


def test_jit_on_method_and_decorator_with_options():
    import functools

    class Model:
        def __init__(self, scale):
            self.scale = scale

        def __hash__(self):
            return hash(self.scale)

        def __eq__(self, other):
            return isinstance(other, Model) and other.scale == self.scale

        @functools.partial(jax.jit, static_argnums=0)
        def apply(self, x):
            return x * self.scale

        def plain(self, x):
            return x + self.scale

    m = Model(3.0)
    np.testing.assert_array_equal(np.asarray(m.apply(jnp.ones(2))), [3, 3])
    np.testing.assert_array_equal(np.asarray(Model(2.0).apply(jnp.ones(2))), [2, 2])
    np.testing.assert_array_equal(np.asarray(jax.jit(m.plain)(jnp.ones(2))), [4, 4])
    # self that is not a pytree nor static is rejected, as in JAX
    with pytest.raises(TypeError, match="not a valid JAX type"):
        jax.jit(Model.plain)(m, jnp.ones(2))

    @jax.jit(static_argnums=(1,))
    def g(x, k):
        return x * k

    np.testing.assert_array_equal(np.asarray(g(jnp.ones(2), 4)), [4, 4])
    assert g.__name__ == "g"


def test_jit_closure_over_concrete_array():
    c = jnp.arange(3.0)
    f = jax.jit(lambda x: x + c)
    np.testing.assert_array_equal(np.asarray(f(jnp.ones(3))), [1, 2, 3])


def test_disable_jit_runs_python():
    seen = []

    @jax.jit
    def f(x):
        seen.append(type(x).__name__)
        return x

    with jax.disable_jit():
        f(jnp.ones(2))
    assert seen == ["ArrayImpl"]


def test_jit_x64_switch_changes_signature():
    f = jax.jit(lambda x: x * 2)
    assert f(1.0).dtype == np.float32
    jax.config.update("jax_enable_x64", True)
    try:
        assert f(1.0).dtype == np.float64
        assert jnp.ones(2).dtype == np.float64
    finally:
        jax.config.update("jax_enable_x64", False)
    assert f(1.0).dtype == np.float32


# -- errors ------------------------------------------------------------------------

def test_python_branch_on_traced_value_raises_concretization_error():
    def f(x):
        if x > 0:  # the user's line
            return x
        return -x

    with pytest.raises(ConcretizationTypeError) as ei:
        jax.jit(f)(1.0)
    assert isinstance(ei.value, TracerBoolConversionError)
    assert isinstance(ei.value, TypeError)
    msg = str(ei.value)
    assert "`f`" in msg and "test_tracing.py" in msg


def test_other_conversions_raise():
    with pytest.raises(TracerIntegerConversionError):
        jax.make_jaxpr(lambda x: int(x))(1)
    with pytest.raises(ConcretizationTypeError):
        jax.make_jaxpr(lambda x: float(x))(1.0)
    with pytest.raises(TracerArrayConversionError):
        jax.make_jaxpr(lambda x: np.asarray(x))(1.0)
    with pytest.raises(ConcretizationTypeError):
        jax.jit(lambda x: x.item())(1.0)


def test_leaked_tracer_raises_unexpected_tracer_error():
    leaked = []

    @jax.jit
    def f(x):
        leaked.append(x)
        return x

    f(jnp.ones(2))
    with pytest.raises(UnexpectedTracerError):
        jnp.sin(leaked[0])
    with pytest.raises(UnexpectedTracerError):
        jax.jit(lambda y: y + leaked[0])(jnp.ones(2))


def test_shape_errors_name_primitive_and_shapes():
    with pytest.raises(TypeError, match=r"add.*\(3,\).*\(4,\)"):
        lax.add(jnp.ones(3), jnp.ones(4))
    with pytest.raises(TypeError, match=r"dot_general"):
        jax.jit(lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ()))))(jnp.ones((2, 3)), jnp.ones((4, 5)))
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        jnp.ones(3) + jnp.ones((2, 4))


def test_tracer_isinstance_array_and_unhashable():
    seen = []
    jax.make_jaxpr(lambda x: seen.append(isinstance(x, jax.Array)) or x)(1.0)
    assert seen == [True]
    assert isinstance(jnp.ones(2), jax.Array)
    with pytest.raises(TypeError, match="unhashable"):
        hash(jnp.ones(2))


def test_invalid_argument_type():
    with pytest.raises(TypeError, match="not a valid JAX type"):
        jax.jit(lambda x: x)("hello")


def test_jit_outputs_with_none_and_empty_containers_hit_the_fast_path_twice():
    import microjax_rs as jax
    import microjax_rs.numpy as jnp

    f = jax.jit(lambda x: (x, (), None, [x], {"a": ()}))
    for _ in range(3):
        out = f(jnp.ones(2))
        assert out[1] == () and out[2] is None and out[4] == {"a": ()}
        assert float(out[3][0][0]) == 1.0
