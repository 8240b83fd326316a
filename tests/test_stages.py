"""`jax.stages`: jit(f).trace / .lower / .compile, as JAX's ahead-of-time
API (https://docs.jax.dev/en/latest/aot.html)."""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import lax


def f(x, y):
    return 2 * x + y


def test_lower_compile_call_matches_jax_docs_example():
    lowered = jax.jit(f).lower(3, 4)
    text = lowered.as_text()
    assert "mul" in text and "add" in text
    compiled = lowered.compile()
    # Recorded from JAX's documentation: XLA counts two flops for 2 * x + y.
    assert compiled.cost_analysis()["flops"] == 2.0
    out = compiled(3, 4)
    assert int(out) == 10
    assert out.dtype == np.int32 and out.weak_type


def test_lower_from_shape_dtype_structs():
    i32 = jax.ShapeDtypeStruct((), jnp.dtype("int32"))
    out = jax.jit(f).lower(i32, i32).compile()(3, 4)
    assert int(out) == 10 and out.dtype == np.int32


def test_call_with_other_types_raises_jax_type_error():
    i32 = jax.ShapeDtypeStruct((), jnp.dtype("int32"))
    compiled = jax.jit(f).lower(i32, i32).compile()
    with pytest.raises(TypeError) as e:
        compiled(jnp.arange(3), jnp.arange(3))
    assert str(e.value) == (
        "Argument types differ from the types for which this computation was compiled. "
        "The mismatches are:\n"
        "Argument 'x' compiled with int32[] and called with int32[3]\n"
        "Argument 'y' compiled with int32[] and called with int32[3]")
    with pytest.raises(TypeError, match=r"Argument 'x' compiled with int32\[\] and called with float32\[\]"):
        compiled(jnp.float32(72.0), 4)


def test_nested_argument_names_follow_the_pytree_path():
    def loss(params, x):
        return params["w"] * x + params["b"]

    p = {"w": jnp.ones(3), "b": jnp.zeros(3)}
    compiled = jax.jit(loss).lower(p, jnp.ones(3)).compile()
    with pytest.raises(TypeError, match=r"Argument 'params\['w'\]' compiled with float32\[3\] and called with float32\[4\]"):
        compiled({"w": jnp.ones(4), "b": jnp.zeros(3)}, jnp.ones(3))
    with pytest.raises(TypeError, match="input pytree"):
        compiled({"w": jnp.ones(3)}, jnp.ones(3))


def test_static_arguments_are_baked_into_the_program():
    lowered = jax.jit(f, static_argnums=0).lower(7, 8)
    # 2 * 7 is folded into one constant when the plan is built.
    assert "14" in lowered.compile().as_text()
    assert int(lowered.compile()(5)) == 19
    with pytest.raises(TypeError, match="input pytree"):
        lowered.compile()(7, 5)
    assert int(jax.jit(f, static_argnums=0).lower(10, jax.ShapeDtypeStruct((), np.int32)).compile()(5)) == 25


def test_static_argnames_and_keyword_arguments():
    def scale(x, *, k, shift):
        return x * k + shift

    compiled = jax.jit(scale, static_argnames="k").lower(jnp.ones(3), k=3.0, shift=jnp.ones(3)).compile()
    np.testing.assert_allclose(compiled(jnp.arange(3.0), shift=jnp.ones(3)), np.arange(3.0) * 3 + 1)


@pytest.mark.parametrize("transform", [jax.vmap, jax.grad, jax.jit])
def test_compiled_functions_are_not_transformed(transform):
    def g(x):
        return (x @ jnp.ones(2)).sum()

    z = jnp.arange(6.0).reshape(3, 2)
    g_aot = jax.jit(g).lower(z).compile()
    arg = jnp.arange(24.0).reshape(4, 3, 2) if transform is jax.vmap else z
    with pytest.raises(TypeError, match="Cannot apply JAX transformations to a function lowered and compiled"):
        transform(g_aot)(arg)


def test_compiled_matches_jit_and_eager_on_a_pytree_program():
    def mlp(params, x):
        h = jnp.tanh(x @ params["w1"] + params["b1"])
        return {"out": h @ params["w2"], "norm": jnp.sum(h * h)}

    rng = np.random.default_rng(0)
    params = {"w1": jnp.asarray(rng.standard_normal((5, 8)), jnp.float32), "b1": jnp.zeros(8),
              "w2": jnp.asarray(rng.standard_normal((8, 2)), jnp.float32)}
    x = jnp.asarray(rng.standard_normal((4, 5)), jnp.float32)
    compiled = jax.jit(mlp).lower(params, x).compile()
    got, want_jit, want_eager = compiled(params, x), jax.jit(mlp)(params, x), mlp(params, x)
    for k in ("out", "norm"):
        np.testing.assert_array_equal(np.asarray(got[k]), np.asarray(want_jit[k]))
        np.testing.assert_allclose(np.asarray(got[k]), np.asarray(want_eager[k]), rtol=1e-5)


def test_trace_gives_jaxpr_out_info_and_args_info():
    def g(x, y):
        return jnp.sin(x) * y, x.sum()

    x, y = jnp.ones((2, 3)), jnp.ones((2, 3))
    traced = jax.jit(g, donate_argnums=1).trace(x, y)
    assert str(traced.jaxpr) == str(jax.make_jaxpr(g)(x, y))
    a, b = traced.out_info
    assert (a.shape, a.dtype, b.shape) == ((2, 3), np.float32, ())
    (ix, iy), kw = traced.args_info
    assert kw == {} and (ix.donated, iy.donated) == (False, True)
    assert ix.shape == (2, 3) and ix.dtype == np.float32
    assert traced.fun_name == "g"
    assert traced.lower().compile()(x, y)[1] == 6.0


def test_eval_shape_of_a_jitted_function():
    out = jax.jit(lambda x: jnp.zeros((x.shape[0], 2)) + x[:, None]).eval_shape(jnp.ones(5))
    assert out.shape == (5, 2) and out.dtype == np.float32


def test_lower_reuses_the_trace_of_a_call():
    traces = []

    def h(x):
        traces.append(1)
        return x + 1

    jh = jax.jit(h)
    jh(jnp.ones(3))
    jh.lower(jnp.ones(3)).compile()
    jh.trace(jnp.ones(3))
    assert len(traces) == 1
    jh.lower(jnp.ones(4))
    assert len(traces) == 2


def test_wrapped_is_the_type_of_jitted_functions():
    assert isinstance(jax.jit(f), jax.stages.Wrapped)
    assert not isinstance(f, jax.stages.Wrapped)


def test_cost_analysis_counts_dot_flops_transcendentals_and_scan_length():
    m, k, n = 8, 16, 4
    c = jax.jit(lambda a, b: jnp.tanh(a @ b)).lower(jnp.ones((m, k)), jnp.ones((k, n))).compile()
    cost = c.cost_analysis()
    assert cost["flops"] == 2 * m * k * n
    assert cost["transcendentals"] == m * n
    # dot reads a and b and writes c; tanh reads c and writes its result.
    assert cost["bytes accessed"] == 4 * (m * k + k * n + m * n) + 4 * (2 * m * n)

    def loop(x):
        return lax.scan(lambda c, _: (c * 2.0 + 1.0, None), x, None, length=10)[0]

    scan_cost = jax.jit(loop).lower(jnp.ones(6)).compile().cost_analysis()
    assert scan_cost["flops"] == 10 * 2 * 6

    def branch(p, x):
        return lax.cond(p, lambda v: jnp.exp(v) * v, lambda v: v, x)

    cond_cost = jax.jit(branch).lower(True, jnp.ones(7)).compile().cost_analysis()
    assert (cond_cost["flops"], cond_cost["transcendentals"]) == (7, 7)


def test_memory_analysis_bounds_the_measured_peak():
    def g(a, b):
        return jnp.tanh(a @ b).sum()

    a, b = jnp.ones((8, 16)), jnp.ones((16, 4))
    stats = jax.jit(g).lower(a, b).compile().memory_analysis()
    assert stats.argument_size_in_bytes == a.nbytes + b.nbytes
    assert stats.output_size_in_bytes == 4
    assert stats.temp_size_in_bytes >= 8 * 4 * 4
    measured = jax.debug.plan_stats(g, a, b)["peak_bytes"]
    assert stats.peak_memory_in_bytes >= measured > 0


def test_formats_and_unsupported_options():
    compiled = jax.jit(f).lower(jnp.ones((2, 3)), jnp.ones((2, 3))).compile()
    (fx, fy), kw = compiled.input_formats
    assert fx.layout.major_to_minor == (0, 1) and kw == {}
    assert compiled.output_formats.layout.major_to_minor == (0, 1)
    assert isinstance(compiled.runtime_executable(), jax._core.CompiledProgram)
    with pytest.raises(NotImplementedError):
        jax.jit(f).lower(1, 2).compile(compiler_options={"xla_foo": True})
    with pytest.raises(NotImplementedError):
        jax.jit(f).trace(1, 2).lower(lowering_platforms=("tpu",))


def test_shape_dtype_struct_like():
    # recorded from JAX 0.10.2
    sds = jax.ShapeDtypeStruct.like
    assert sds(jnp.ones((2, 3))) == jax.ShapeDtypeStruct((2, 3), np.float32)
    assert repr(sds(jax.ShapeDtypeStruct((2,), jnp.int32, weak_type=True))) == \
        "ShapeDtypeStruct(shape=(2,), dtype=int32, weak_type=True)"
    assert repr(sds(1.0)) == "ShapeDtypeStruct(shape=(), dtype=float32, weak_type=True)"
    assert repr(sds(np.ones(3))) == "ShapeDtypeStruct(shape=(3,), dtype=float32)"
    seen = []
    jax.jit(lambda x: seen.append(sds(x)) or x)(jnp.ones(2, jnp.int32))
    assert seen == [jax.ShapeDtypeStruct((2,), np.int32)]
    with pytest.raises(TypeError):
        sds("not an array")
