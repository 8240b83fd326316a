"""Differentiation API against analytic derivatives and finite differences."""
import numpy as np
import pytest
from fd import num_grad

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import core, lax
from microjax_rs.errors import ConcretizationTypeError


def test_seed_polynomial_first_and_second_derivative():
    f = lambda x: 3 * x**3 + 2 * x**2 + 2 * x  # noqa: E731
    assert float(jax.grad(f)(2.0)) == 46.0
    assert float(jax.grad(jax.grad(f))(2.0)) == 40.0


def test_grad_matches_analytic():
    f = lambda x: jnp.sin(x) * jnp.exp(x) + jnp.tanh(x)  # noqa: E731
    x = 0.7
    want = np.cos(x) * np.exp(x) + np.sin(x) * np.exp(x) + 1 - np.tanh(x) ** 2
    np.testing.assert_allclose(float(jax.grad(f)(x)), want, rtol=1e-6)


def test_fourth_derivative_of_sin():
    d4 = jax.grad(jax.grad(jax.grad(jax.grad(jnp.sin))))
    np.testing.assert_allclose(float(d4(0.3)), np.sin(0.3), rtol=1e-5)


def test_grad_against_finite_differences_float64(x64):
    rng = np.random.default_rng(1)
    w = rng.standard_normal((4, 3))

    def loss(x):
        h = jnp.tanh(jnp.dot(x, w))
        return jnp.sum(jnp.exp(-h * h) + jnp.maximum(h, 0.1) * jnp.sqrt(x[0] ** 2 + 1.0) if False else
                       jnp.exp(-h * h) + jnp.maximum(h, 0.1))

    x = rng.standard_normal((2, 4))
    g = jax.grad(loss)(jnp.asarray(x))
    assert g.dtype == np.float64
    np.testing.assert_allclose(np.asarray(g), num_grad(lambda v: loss(jnp.asarray(v)), x), rtol=1e-6, atol=1e-8)
    # second order: grad of a directional derivative
    v = rng.standard_normal((2, 4))
    hv = jax.grad(lambda y: jnp.sum(jax.grad(loss)(y) * v))(jnp.asarray(x))
    fd = num_grad(lambda y: np.sum(np.asarray(jax.grad(loss)(jnp.asarray(y))) * v), x, eps=1e-5)
    np.testing.assert_allclose(np.asarray(hv), fd, rtol=1e-4, atol=1e-6)


def test_value_and_grad_of_linear_layer_params_dict():
    params = {"w": jnp.asarray(np.arange(6.0).reshape(3, 2)), "b": jnp.asarray([0.5, -0.5])}
    x = jnp.asarray(np.ones((4, 3)))

    def loss(p, x):
        y = x @ p["w"] + p["b"]
        return jnp.sum(y * y)

    val, g = jax.value_and_grad(loss)(params, x)
    y = np.ones((4, 3)) @ np.arange(6.0).reshape(3, 2) + [0.5, -0.5]
    np.testing.assert_allclose(float(val), np.sum(y * y), rtol=1e-6)
    assert set(g) == {"w", "b"}
    np.testing.assert_allclose(np.asarray(g["w"]), np.ones((4, 3)).T @ (2 * y), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(g["b"]), (2 * y).sum(0), rtol=1e-6)


def test_argnums_and_has_aux():
    f = lambda x, y: (x * y**2, {"aux": x})  # noqa: E731
    (gx, gy), aux = jax.grad(f, argnums=(0, 1), has_aux=True)(2.0, 3.0)
    assert float(gx) == 9.0 and float(gy) == 12.0
    assert float(aux["aux"]) == 2.0
    assert not isinstance(aux["aux"], core.Tracer)


def test_jvp_vjp_linearize_agree():
    def f(x):
        return jnp.sin(x) * x

    x = jnp.asarray([0.1, 0.2, 0.3])
    t = jnp.asarray([1.0, -1.0, 0.5])
    y, yt = jax.jvp(f, (x,), (t,))
    np.testing.assert_allclose(np.asarray(y), np.sin([0.1, 0.2, 0.3]) * [0.1, 0.2, 0.3], rtol=1e-6)
    deriv = np.cos([0.1, 0.2, 0.3]) * [0.1, 0.2, 0.3] + np.sin([0.1, 0.2, 0.3])
    np.testing.assert_allclose(np.asarray(yt), deriv * np.asarray(t), rtol=1e-6)
    y2, f_jvp = jax.linearize(f, x)
    np.testing.assert_allclose(np.asarray(f_jvp(t)), np.asarray(yt), rtol=1e-6)
    y3, pullback = jax.vjp(f, x)
    (ct,) = pullback(jnp.ones(3))
    np.testing.assert_allclose(np.asarray(ct), deriv, rtol=1e-6)


def test_jacobians_and_hessian():
    def f(x):
        return jnp.tanh(x) * jnp.sum(x * x)

    x = jnp.asarray([0.3, -0.2, 0.5])
    jf = np.asarray(jax.jacfwd(f)(x))
    jr = np.asarray(jax.jacrev(f)(x))
    xn = np.array([0.3, -0.2, 0.5])
    want = np.diag(1 - np.tanh(xn) ** 2) * np.sum(xn * xn) + np.outer(np.tanh(xn), 2 * xn)
    np.testing.assert_allclose(jf, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jr, want, rtol=1e-5, atol=1e-6)
    g = lambda x: jnp.sum(jnp.tanh(x) ** 3)  # noqa: E731
    h = np.asarray(jax.hessian(g)(x))
    t = np.tanh(xn)
    d2 = 6 * t * (1 - t**2) ** 2 - 6 * t**3 * (1 - t**2)
    np.testing.assert_allclose(h, np.diag(d2), rtol=1e-5, atol=1e-6)
    # forward-on-backward equals backward-on-forward
    np.testing.assert_allclose(np.asarray(jax.jacfwd(jax.jacrev(g))(x)),
                               np.asarray(jax.jacrev(jax.jacfwd(g))(x)), rtol=1e-5, atol=1e-6)


def test_composition_with_jit():
    f = lambda x: jnp.sum(jnp.sin(x) ** 2)  # noqa: E731
    x = jnp.asarray([0.1, 0.5, 1.0])
    want = np.sin(2 * np.array([0.1, 0.5, 1.0]))
    np.testing.assert_allclose(np.asarray(jax.jit(jax.grad(f))(x)), want, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jax.grad(jax.jit(f))(x)), want, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jax.jit(jax.grad(jax.jit(f)))(x)), want, rtol=1e-5)
    cj = jax.make_jaxpr(jax.grad(f))(x)
    assert "cos" in str(cj) or "sin" in str(cj)


def test_python_control_flow_under_grad():
    def f(x):
        if x > 0:
            return x * x
        return -x

    assert float(jax.grad(f)(3.0)) == 6.0
    assert float(jax.grad(f)(-3.0)) == -1.0

    def g(x):
        n = int(x)  # concretizes the known value under grad
        return x * n

    assert float(jax.grad(g)(3.5)) == 3.0

    with pytest.raises(ConcretizationTypeError):
        jax.grad(lambda x: float(x) * x)(1.0)
    with pytest.raises(ConcretizationTypeError):
        jax.jit(jax.grad(f))(3.0)


def test_known_values_computed_once_per_equation(monkeypatch):
    calls = [0]
    orig = core.eval_primitive

    def counting(prim, args, params):
        calls[0] += 1
        return orig(prim, args, params)

    monkeypatch.setattr(core, "eval_primitive", counting)

    def f(x, n):
        for _ in range(n):
            x = jnp.sin(x)
            if x > 10.0:  # concretizes every step
                x = x * 2
        return x

    def count(fn, n):
        calls[0] = 0
        fn(0.5, n)
        return calls[0]

    g1 = jax.grad(f)
    c_small, c_big = count(g1, 100), count(g1, 1000)
    assert c_big <= 11 * c_small  # linear, not quadratic
    g2 = jax.grad(jax.grad(f))
    c2_small, c2_big = count(g2, 50), count(g2, 500)
    assert c2_big <= 11 * c2_small


def test_errors():
    with pytest.raises(TypeError, match="scalar-output"):
        jax.grad(lambda x: x * 2)(jnp.ones(3))
    with pytest.raises(TypeError, match="input dtype that is a sub-dtype of np.inexact"):
        jax.grad(lambda x: x * 2.0)(3)
    with pytest.raises(TypeError, match="pair"):
        jax.grad(lambda x: x, has_aux=True)(1.0)
    with pytest.raises(TypeError, match="positional arguments"):
        jax.grad(lambda x: x, argnums=2)(1.0)


def test_grad_of_custom_interpreter():
    from test_seeds import eval_jaxpr

    def f(x):
        return jnp.exp(jnp.tanh(x))

    closed = jax.make_jaxpr(f)(1.0)
    g = jax.grad(lambda x: eval_jaxpr(closed.jaxpr, closed.literals, x)[0])(0.4)
    want = np.exp(np.tanh(0.4)) * (1 - np.tanh(0.4) ** 2)
    np.testing.assert_allclose(float(g), want, rtol=1e-6)


def test_grad_through_nested_jit_pjit():
    inner = jax.jit(lambda x: jnp.sin(x) * x)
    g = jax.grad(lambda x: jnp.sum(inner(x)))(jnp.asarray([0.2, 0.4]))
    xn = np.array([0.2, 0.4])
    np.testing.assert_allclose(np.asarray(g), np.cos(xn) * xn + np.sin(xn), rtol=1e-6)


def test_linear_transpose_matches_matrix_transpose():
    m = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    f = lambda x: jnp.asarray(m) @ x * 2.0  # noqa: E731
    ft = jax.linear_transpose(f, jax.ShapeDtypeStruct((3,), jnp.float32))
    (ct,) = ft(jnp.asarray([1.0, -2.0]))
    np.testing.assert_allclose(np.asarray(ct), m.T @ np.array([1.0, -2.0]) * 2.0)
    with pytest.raises(TypeError, match="does not match"):
        ft(jnp.ones(3))
    with pytest.raises(TypeError):
        jax.linear_transpose(lambda x: jnp.sin(x), jnp.ones(3))(jnp.ones(3))


def test_checkpoint_keeps_values_and_gradients():
    f = lambda x: jnp.sum(jnp.sin(x) ** 2)  # noqa: E731
    x = jnp.asarray([0.3, 0.6])
    np.testing.assert_allclose(np.asarray(jax.grad(jax.checkpoint(f))(x)), np.asarray(jax.grad(f)(x)))
    saving = jax.checkpoint(f, policy=lambda prim, *avals, **params: True)  # a function policy
    np.testing.assert_allclose(np.asarray(jax.grad(saving)(x)), np.asarray(jax.grad(f)(x)))
    with pytest.raises(TypeError, match="callable"):
        jax.checkpoint(f, policy=3)


def test_checkpoint_recomputes_instead_of_saving(x64):
    def f(x):
        return jnp.sin(jnp.sin(jnp.sin(x)))

    g_plain = jax.make_jaxpr(jax.grad(f))(0.5)
    g_remat = jax.make_jaxpr(jax.grad(jax.checkpoint(f)))(0.5)
    # the backward pass evaluates sin again inside a `checkpoint` equation
    assert str(g_remat).count("sin ") > str(g_plain).count("sin ")
    assert any(e.primitive.name == "checkpoint" for e in g_remat.eqns)
    for x in [0.5, -1.3]:
        assert float(jax.grad(jax.checkpoint(f))(x)) == pytest.approx(float(num_grad(lambda y: np.sin(np.sin(np.sin(y))), x)), rel=1e-6)
        assert float(jax.grad(jax.grad(jax.checkpoint(f)))(x)) == pytest.approx(float(jax.grad(jax.grad(f))(x)), rel=1e-10)
    # composes with jit, vmap, scan (the classic remat-per-step pattern) and closures
    w = jnp.asarray([0.5, -0.25])
    step = jax.checkpoint(lambda c, x: (jnp.tanh(c * w + x), None))
    loss = lambda xs: jnp.sum(jax.lax.scan(step, jnp.zeros(2), xs)[0])
    loss_plain = lambda xs: jnp.sum(jax.lax.scan(lambda c, x: (jnp.tanh(c * w + x), None), jnp.zeros(2), xs)[0])
    xs = jnp.asarray(np.random.RandomState(0).normal(size=(4, 2)))
    np.testing.assert_allclose(np.asarray(jax.jit(jax.grad(loss))(xs)), np.asarray(jax.grad(loss_plain)(xs)), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(jax.checkpoint(f)))(jnp.asarray([0.1, 0.2]))),
                               [float(jax.grad(f)(0.1)), float(jax.grad(f)(0.2))], rtol=1e-12)
    assert float(jax.checkpoint(f)(0.5)) == pytest.approx(np.sin(np.sin(np.sin(0.5))))


def test_transform_cache_shared_across_literal_values():
    from microjax_rs.interpreters import ad

    from microjax_rs import _core

    _core.value_and_grad_cache_clear()  # eager grad: the Rust-side cache
    for t in (1.5, 2.5, 3.5):
        assert float(jax.grad(lambda x: jnp.sin(x) * t)(0.0)) == t
    assert _core.value_and_grad_cache_size() == 1
    ad._vg_cache.clear()  # grad under a trace: the Python-side cache
    for t in (1.5, 2.5, 3.5):
        assert float(jax.jit(jax.grad(lambda x: jnp.sin(x) * t))(0.0)) == t
    assert len(ad._vg_cache) == 1
    ad._vjp_cache.clear()
    for t in (1.5, 2.5, 3.5):
        assert float(jax.vjp(lambda x: jnp.sin(x) * t, 0.0)[1](1.0)[0]) == t
    assert len(ad._vjp_cache) == 1


def test_inner_program_under_grad_keeps_unperturbed_part_concrete():
    # The inner value_and_grad program runs at the outer grad's level: the
    # output reading no perturbed value (d/db = sin(2)) is concrete there, and
    # bool() of a perturbed output evaluates the spliced program's known value.
    c = 2.0

    def g(x):
        v, dv = jax.value_and_grad(lambda a, b: jnp.sin(a) * b, argnums=1)(c, x)
        assert not isinstance(dv, core.Tracer)
        return v * dv if v > 0 else -v * dv

    s2 = np.sin(2.0) ** 2
    assert float(jax.grad(g)(1.5)) == pytest.approx(s2, rel=1e-6)
    assert float(jax.grad(g)(-1.5)) == pytest.approx(-s2, rel=1e-6)
    np.testing.assert_allclose(float(jax.grad(jax.grad(g))(1.5)), 0.0, atol=1e-6)


def test_jacobian_basis_cache_survives_a_deleted_result_and_jit():
    f = lambda x: x * 1.0  # noqa: E731
    x = jnp.arange(3.0)
    j1 = jax.jacfwd(f)(x)
    np.testing.assert_array_equal(np.asarray(j1), np.eye(3))
    j1.delete()
    np.testing.assert_array_equal(np.asarray(jax.jacfwd(lambda x: x)(x)), np.eye(3))
    np.testing.assert_array_equal(np.asarray(jax.jacrev(f)(x)), np.eye(3))
    # Under jit the identity rows are staged (iota), not captured as a constant.
    text = str(jax.make_jaxpr(jax.jacfwd(f))(x))
    assert "iota" in text
    np.testing.assert_array_equal(np.asarray(jax.jit(jax.jacfwd(f))(x)), np.eye(3))


def test_integer_outputs_of_an_inner_program_under_grad_are_concrete():
    # vmap's batched program runs at grad's level: its int outputs (argmax)
    # are values, not perturbed tracers, exactly as a bool/int equation bound
    # under grad; a literal output of the spliced part is handled too.
    def f(x):
        idx = jax.vmap(jnp.argmax)(x * 2.0)
        assert not isinstance(idx, core.Tracer)
        rows = np.asarray(idx)  # a value, so NumPy conversion works
        return jnp.sum(x[np.arange(x.shape[0]), rows] ** 2)

    x = np.array([[1.0, 3.0, 2.0], [4.0, 0.0, 1.0]], dtype=np.float32)
    g = np.asarray(jax.grad(f)(jnp.asarray(x)))
    want = np.zeros_like(x)
    want[0, 1], want[1, 0] = 6.0, 8.0
    np.testing.assert_allclose(g, want)


def test_inner_program_passing_an_input_through_under_grad():
    # The jvp program returns its inputs unchanged; spliced into grad's
    # trace, the tangent output is the variable of `x * 1.0`, which keeps its
    # own record (bool() of it evaluates that record, not the splice).
    def g(x):
        y, ty = jax.jvp(lambda a: a, (x,), (x * 1.0,))
        return y * ty if ty > 0 else -y

    assert float(jax.grad(g)(2.0)) == 4.0
    assert float(jax.grad(g)(-2.0)) == -1.0


def _native_and_python_programs(f, x):
    """The program eager grad records for `f` natively and through Python."""
    from microjax_rs.interpreters import ad

    flat = lambda ts: ([f(ts[0])], None)  # noqa: E731
    _, native, *_ = ad.trace_ad(flat, [x], "f", private=True)
    _, python, *_ = ad.trace_ad(flat, [x], "f", private=False)
    return str(core.ClosedJaxpr(native)), str(core.ClosedJaxpr(python))


_VEC = np.array([0.5, 1.5, 2.5], dtype=np.float32)


@pytest.mark.parametrize("f,x", [
    (lambda x: jnp.sin(x) * jnp.exp(x) + jnp.tanh(x), 0.5),
    (lambda x: (x - jnp.cos(x)) / (x * x + 1.0), 1.5),
    (lambda x: 2.0 * x - x / 3.0 + jnp.log(x) * jnp.sqrt(x), 2.5),
    (lambda x: jnp.sum(jnp.abs(-x) * x[None, :] + x), _VEC),  # broadcasting: Python path
    (lambda x: jnp.sum(x * x[::-1] - jnp.tanh(x) / x), _VEC),
])
def test_native_staging_records_the_python_program(f, x):
    # Eager grad stages float arithmetic in Rust (tracer.rs); the program
    # must be the one the Python path stages, equation for equation.
    x = jnp.asarray(x, dtype=jnp.float32)
    native, python = _native_and_python_programs(f, x)
    assert native == python
    np.testing.assert_allclose(np.asarray(jax.grad(f)(x)), np.asarray(jax.jit(jax.grad(f))(x)),
                               rtol=1e-6)


def test_native_staging_keeps_known_values_for_control_flow():
    # Records made by the native path give known values to bool().
    def f(x):
        y = jnp.sin(x) * x
        return y * 3.0 if y > 0.2 else y - x

    for x, want in ((1.0, 3 * (np.cos(1.0) + np.sin(1.0))), (0.1, 0.1 * np.cos(0.1) + np.sin(0.1) - 1)):
        assert float(jax.grad(f)(x)) == pytest.approx(want, rel=1e-5)


def test_eager_grad_leaves_no_tracer_alive():
    # A tracer refers to its trace and the trace's records to its tracers:
    # the collector must see both edges, or every grad call leaks its trace.
    import gc
    import weakref

    seen = []

    def f(x):
        y = jnp.sin(x) * x
        seen.append(weakref.ref(y))
        return y

    g = jax.grad(f)
    for _ in range(3):
        g(1.0)
    gc.collect()
    assert seen and all(r() is None for r in seen)


def test_eager_grad_in_threads_matches_one_thread():
    # The native staging contexts are per thread.
    from concurrent.futures import ThreadPoolExecutor

    f = jax.grad(lambda x: jnp.sin(x) * jnp.exp(x) + jnp.tanh(x) * x)
    xs = [0.1 * i for i in range(40)]
    want = [float(f(x)) for x in xs]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda x: float(f(x)), xs))
    assert got == want


def test_value_and_grad_cache_tells_programs_apart():
    # The eager grad cache keys programs with float literals' values left
    # out: programs differing in anything else must not share an entry.
    from microjax_rs import _core

    _core.value_and_grad_cache_clear()
    cases = [
        (lambda x: jnp.sin(x) * 2.0, 2 * np.cos(0.3)),
        (lambda x: jnp.cos(x) * 2.0, -2 * np.sin(0.3)),
        (lambda x: 2.0 * jnp.sin(x), 2 * np.cos(0.3)),
        (lambda x: jnp.sin(x) * jnp.float32(2.0) + x, 2 * np.cos(0.3) + 1),
        (lambda x: x ** 2, 0.6),
        (lambda x: x ** 3, 3 * 0.09),  # integer exponents stay in the key
    ]
    for f, want in cases:
        assert float(jax.grad(f)(0.3)) == pytest.approx(want, rel=1e-5)
    for f, want in cases:  # again, from the cache
        assert float(jax.grad(f)(0.3)) == pytest.approx(want, rel=1e-5)


def test_grad_function_fast_path_matches_python_path():
    # grad/value_and_grad with an int argnums run eager calls on one float
    # array in Rust (grad.rs); every other call takes the Python path.
    from microjax_rs import _grad

    def f(a, x, s=1.0):
        return jnp.sin(x) * a + jnp.exp(x) * s

    g, vg = jax.grad(f, argnums=1), jax.value_and_grad(f, argnums=-1)
    assert type(g).__name__ == "GradFunction" and g.__name__ == "f" and g.__wrapped__ is f
    a, x = jnp.float32(2.0), jnp.float32(0.7)
    want = 2.0 * np.cos(0.7) + np.exp(0.7)
    assert float(g(a, x)) == pytest.approx(want, rel=1e-6)
    v, d = vg(a, x)
    assert float(v) == pytest.approx(2.0 * np.sin(0.7) + np.exp(0.7), rel=1e-6)
    assert float(d) == pytest.approx(want, rel=1e-6)
    # Python scalars, kwargs, and a jit around it take the Python path.
    assert float(g(2.0, 0.7)) == pytest.approx(want, rel=1e-6)
    assert float(g(a, x, s=3.0)) == pytest.approx(2.0 * np.cos(0.7) + 3 * np.exp(0.7), rel=1e-6)
    assert float(jax.jit(g)(a, x)) == pytest.approx(want, rel=1e-6)
    # The fast path's output is the Python path's, dtype and weak type too.
    slow = _grad.value_and_grad(f, argnums=(1,))  # tuple argnums: Python only
    (sv, (sd,)), (fv, fd) = slow(a, x), vg(a, x)
    assert (sv.dtype, sv.weak_type, float(sv)) == (fv.dtype, fv.weak_type, float(fv))
    assert (sd.dtype, sd.weak_type, float(sd)) == (fd.dtype, fd.weak_type, float(fd))
    # Constant outputs and outputs that do not depend on x.
    assert float(jax.grad(lambda x: 3.0)(x)) == 0.0
    assert float(jax.grad(lambda x: a * 2.0)(x)) == 0.0


def test_grad_function_errors_leave_no_trace_behind():
    x = jnp.ones(3, dtype=jnp.float32)
    with pytest.raises(TypeError, match="Gradient only defined for scalar-output functions. "
                                        r"Output had shape: \(3,\)"):
        jax.grad(lambda x: jnp.sin(x))(x)
    with pytest.raises(TypeError, match="grad requires real-valued outputs"):
        jax.grad(lambda x: jnp.sum(x).astype(jnp.int32))(x)

    def boom(x):
        jnp.sin(x) * x
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        jax.grad(boom)(jnp.float32(1.0))
    assert core._state.stack == [] and core._core.trace_depth() == 0
    assert float(jax.grad(lambda x: x * x)(jnp.float32(3.0))) == 6.0
    with pytest.raises(TypeError, match="argnums"):
        jax.grad(lambda x: x, argnums=2)(jnp.float32(1.0))
