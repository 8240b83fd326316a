"""The higher-order and non-array parts of the extra `jax.lax` surface:
`custom_root` and `custom_linear_solve` (values, forward and reverse
derivatives against finite differences and implicit-function formulas, jit,
vmap, JAX's errors), `scatter_apply`, `platform_dependent`, `axis_size`, the
precision forms (`Precision`, strings, pairs, `DotAlgorithm`,
`DotAlgorithmPreset`) and the static shape helpers (values recorded from JAX
0.10.2)."""
import numpy as np
import pytest
from fd import num_grad

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import lax


# -- custom_root ------------------------------------------------------------------


def _newton(f, x0):
    def step(_, x):
        return x - f(x) / jax.grad(f)(x)

    return lax.fori_loop(0, 30, step, x0)


def _scalar_tangent_solve(g, y):
    return y / g(1.0)


def _sqrt_root(a):
    return lax.custom_root(lambda x: x ** 2 - a, 1.0, _newton, _scalar_tangent_solve)


def test_custom_root_value_and_implicit_derivatives():
    assert np.isclose(float(_sqrt_root(2.0)), np.sqrt(2.0), rtol=1e-6)
    # d sqrt(a) / da = 1 / (2 sqrt(a)), from the root equation, not the Newton steps
    for a in (2.0, 3.0, 9.0):
        want = 0.5 / np.sqrt(a)
        assert np.isclose(float(jax.grad(_sqrt_root)(a)), want, rtol=1e-5)
        assert np.isclose(float(jax.jit(jax.grad(_sqrt_root))(a)), want, rtol=1e-5)
        _, t = jax.jvp(_sqrt_root, (a,), (1.0,))
        assert np.isclose(float(t), want, rtol=1e-5)


def test_custom_root_vmap_matches_loop():
    a = jnp.array([1.0, 4.0, 9.0, 2.5])
    np.testing.assert_allclose(np.asarray(jax.vmap(_sqrt_root)(a)), np.sqrt(np.asarray(a)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(_sqrt_root))(a)), 0.5 / np.sqrt(np.asarray(a)),
                               rtol=1e-5)


def test_custom_root_vector_against_finite_differences():
    # root of f(x) = A x - b: x = A^-1 b; derivatives through A and b
    def solve_newton(f, x0):
        jac = jax.jacfwd(f)(x0)
        return x0 - jnp.linalg.solve(jac, f(x0))

    def tangent_solve(g, y):
        return jnp.linalg.solve(jax.jacfwd(g)(y), y)

    def root(params):
        a, b = params[:4].reshape(2, 2), params[4:]
        return lax.custom_root(lambda x: a @ x - b, jnp.zeros(2), solve_newton, tangent_solve)

    p = np.array([3.0, 1.0, 0.5, 2.0, 1.0, -1.0], np.float64)
    with jax.enable_x64(True):
        np.testing.assert_allclose(np.asarray(root(jnp.asarray(p))),
                                   np.linalg.solve(p[:4].reshape(2, 2), p[4:]), rtol=1e-10)
        g = jax.grad(lambda q: jnp.sum(root(q) ** 2))(jnp.asarray(p))
        want = num_grad(lambda q: float(np.sum(np.linalg.solve(q[:4].reshape(2, 2), q[4:]) ** 2)), p)
        np.testing.assert_allclose(np.asarray(g), want, rtol=1e-6, atol=1e-8)


def test_custom_root_has_aux_and_structure_error():
    def solve_aux(f, x0):
        return _newton(f, x0), jnp.int32(30)

    x, aux = lax.custom_root(lambda x: x ** 2 - 4.0, 1.0, solve_aux, _scalar_tangent_solve, has_aux=True)
    assert np.isclose(float(x), 2.0) and int(aux) == 30
    with pytest.raises(TypeError, match="same structure"):
        lax.custom_root(lambda x: (x, x), 1.0, _newton, _scalar_tangent_solve)


# -- custom_linear_solve ---------------------------------------------------------

_A = np.array([[4.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 2.0]])   # symmetric positive definite
_B = np.array([[4.0, 1.0, 0.0], [2.0, 3.0, 1.0], [0.0, 1.0, 2.0]])   # not symmetric
_b = np.array([1.0, 2.0, 3.0])


def _linear(m, b, symmetric=False):
    def solve(_, r):
        return jnp.linalg.solve(m, r)

    def transpose_solve(_, r):
        return jnp.linalg.solve(m.T, r)

    return lax.custom_linear_solve(lambda x: m @ x, b, solve, None if symmetric else transpose_solve,
                                   symmetric=symmetric)


def _cg(matvec, b):
    """Three conjugate-gradient steps (exact for a 3x3 SPD system); a while
    loop, which reverse mode could not differentiate through."""
    def body(c):
        x, r, p, k = c
        ap = matvec(p)
        alpha = (r @ r) / (p @ ap)
        x, r_new = x + alpha * p, r - alpha * ap
        return x, r_new, r_new + ((r_new @ r_new) / (r @ r)) * p, k + 1

    x, *_ = lax.while_loop(lambda c: c[3] < 3, body, (jnp.zeros_like(b), b, b, 0))
    return x


def test_custom_linear_solve_values_and_gradients():
    with jax.enable_x64(True):
        m, b = jnp.asarray(_B), jnp.asarray(_b)
        np.testing.assert_allclose(np.asarray(_linear(m, b)), np.linalg.solve(_B, _b), rtol=1e-12)
        for f_np, argnum in ((lambda q: np.sum(np.linalg.solve(q.reshape(3, 3), _b) ** 3), 0),
                             (lambda q: np.sum(np.linalg.solve(_B, q) ** 3), 1)):
            def f(mm, bb):
                return jnp.sum(_linear(mm, bb) ** 3)

            g = jax.grad(f, argnums=argnum)(m, b)
            x0 = (_B.reshape(-1) if argnum == 0 else _b)
            np.testing.assert_allclose(np.asarray(g).reshape(-1), num_grad(f_np, x0), rtol=1e-6, atol=1e-9)
            gj = jax.jit(jax.grad(f, argnums=argnum))(m, b)
            np.testing.assert_allclose(np.asarray(gj), np.asarray(g), rtol=1e-12)
        # forward mode: dx/db = A^-1
        np.testing.assert_allclose(np.asarray(jax.jacfwd(lambda bb: _linear(m, bb))(b)), np.linalg.inv(_B),
                                   rtol=1e-10, atol=1e-12)


def test_custom_linear_solve_symmetric_solver_not_differentiated():
    # the solver is a while loop: reverse mode runs through the implicit rule only
    with jax.enable_x64(True):
        def f(q):
            m = q.reshape(3, 3)
            m = (m + m.T) / 2
            return jnp.sum(lax.custom_linear_solve(lambda x: m @ x, jnp.asarray(_b), _cg, symmetric=True) ** 2)

        def f_np(q):
            m = q.reshape(3, 3)
            return np.sum(np.linalg.solve((m + m.T) / 2, _b) ** 2)

        g = jax.grad(f)(jnp.asarray(_A.reshape(-1)))
        np.testing.assert_allclose(np.asarray(g), num_grad(f_np, _A.reshape(-1)), rtol=1e-5, atol=1e-8)


def test_custom_linear_solve_vmap_aux_and_errors():
    m = jnp.asarray(_B, jnp.float32)
    bs = np.stack([_b, 2 * _b, -_b]).astype(np.float32)
    got = jax.vmap(lambda bb: _linear(m, bb))(jnp.asarray(bs))
    np.testing.assert_allclose(np.asarray(got), np.linalg.solve(_B, bs.T).T, rtol=1e-5, atol=1e-6)
    x, aux = lax.custom_linear_solve(lambda v: m @ v, jnp.asarray(_b, jnp.float32),
                                     lambda mv, r: (jnp.linalg.solve(m, r), jnp.sum(r)), has_aux=True)
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(_B, _b), rtol=1e-5, atol=1e-6)
    assert float(aux) == 6.0
    # JAX 0.10.2: reverse mode without transpose_solve (and not symmetric) is a TypeError
    with pytest.raises(TypeError, match="transpose_solve required for backwards mode"):
        jax.grad(lambda bb: jnp.sum(lax.custom_linear_solve(
            lambda v: m @ v, bb, lambda mv, r: jnp.linalg.solve(m, r))))(jnp.asarray(_b, jnp.float32))


# -- scatter_apply, platform_dependent, axis_size ---------------------------------


def test_scatter_apply_applies_once_per_hit():
    dn = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))
    x = jnp.arange(5.0)
    f = lambda v: v * 10 + 1  # noqa: E731
    # recorded from JAX 0.10.2: index 3 is hit twice, so f runs twice there
    got = lax.scatter_apply(x, jnp.array([[1], [3], [3]]), f, dn, update_shape=(3,))
    np.testing.assert_array_equal(np.asarray(got), [0.0, 11.0, 2.0, 311.0, 4.0])
    dropped = lax.scatter_apply(x, jnp.array([[1], [7]]), f, dn, update_shape=(2,))
    np.testing.assert_array_equal(np.asarray(dropped), [0.0, 11.0, 2.0, 3.0, 4.0])
    clipped = lax.scatter_apply(x, jnp.array([[1], [7]]), f, dn, update_shape=(2,), mode="clip")
    np.testing.assert_array_equal(np.asarray(clipped), [0.0, 11.0, 2.0, 3.0, 41.0])
    jitted = jax.jit(lambda x: lax.scatter_apply(x, jnp.array([[1], [3], [3]]), f, dn, update_shape=(3,)))(x)
    np.testing.assert_array_equal(np.asarray(jitted), np.asarray(got))


def test_platform_dependent_picks_the_default_backend_branch():
    x = jnp.ones(3)
    want = 2.0 if jax.default_backend() == "cpu" else 4.0  # "gpu": the cuda branch
    np.testing.assert_array_equal(np.asarray(lax.platform_dependent(
        x, cpu=lambda v: v * 2, cuda=lambda v: v * 4, default=lambda v: v * 3)), [want] * 3)
    np.testing.assert_array_equal(np.asarray(lax.platform_dependent(x, tpu=lambda v: v * 2,
                                                                     default=lambda v: v * 3)), [3.0] * 3)
    assert float(jax.grad(lambda v: lax.platform_dependent(v, cpu=jnp.sin, cuda=jnp.sin,
                                                           default=jnp.cos))(1.0)) == pytest.approx(np.cos(1.0))
    with pytest.raises(ValueError, match="Use 'cuda' or 'rocm' for lax.platform_dependent."):
        lax.platform_dependent(x, gpu=lambda v: v, default=lambda v: v)
    with pytest.raises(NotImplementedError):
        lax.platform_dependent(x, tpu=lambda v: v)


def test_axis_size():
    got = jax.vmap(lambda v: v * lax.axis_size("i"), axis_name="i")(jnp.ones(5))
    np.testing.assert_array_equal(np.asarray(got), [5.0] * 5)
    inner = jax.vmap(jax.vmap(lambda v: v * lax.axis_size(("i", "j")), axis_name="j"), axis_name="i")
    np.testing.assert_array_equal(np.asarray(inner(jnp.ones((2, 3)))), np.full((2, 3), 6.0))
    with pytest.raises(NameError, match="unbound axis name: i"):
        lax.axis_size("i")


# -- precision ----------------------------------------------------------------------


@pytest.mark.parametrize("precision", [
    None, "highest", "float32", "bfloat16", "tensorfloat32", "fastest", "high", "default", "bfloat16_3x",
    lax.Precision.HIGH, ("highest", "default"), (lax.Precision.HIGH, lax.Precision.DEFAULT),
    lax.DotAlgorithmPreset.F32_F32_F32, lax.DotAlgorithmPreset.DEFAULT, "F32_F32_F32",
    lax.DotAlgorithm(np.float32, np.float32, np.float32),
])
def test_precision_forms_are_accepted_everywhere(precision):
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    want = x @ x.T
    np.testing.assert_allclose(np.asarray(lax.dot(x, x.T, precision=precision)), want)
    np.testing.assert_allclose(np.asarray(lax.dot_general(x, x, (((1,), (1,)), ((), ())), precision=precision)), want)
    np.testing.assert_allclose(np.asarray(jnp.dot(x, x.T, precision=precision)), want)
    np.testing.assert_allclose(np.asarray(jnp.matmul(x, x.T, precision=precision)), want)
    np.testing.assert_allclose(np.asarray(jnp.einsum("ij,kj->ik", x, x, precision=precision)), want)
    np.testing.assert_allclose(np.asarray(jax.jit(lambda a: lax.batch_matmul(a[None], a.T[None],
                                                                              precision=precision))(x))[0], want)
    img = x.reshape(1, 1, 2, 3)
    out = lax.conv_general_dilated(img, np.ones((1, 1, 1, 1), np.float32), (1, 1), "VALID", precision=precision)
    np.testing.assert_allclose(np.asarray(out), img)


@pytest.mark.parametrize("precision", ["bogus", 3, ("a",), (None, None), (lax.Precision.HIGH, "highest")])
def test_bad_precision_is_a_value_error(precision):
    x = np.ones((2, 2), np.float32)
    for f in (lambda: lax.dot(x, x, precision=precision), lambda: jnp.dot(x, x, precision=precision),
              lambda: lax.conv(x[None, None], x[None, None], (1, 1), "SAME", precision=precision)):
        with pytest.raises(ValueError, match="Precision argument must be one of"):
            f()


def test_precision_enums():
    assert lax.Precision("highest") is lax.Precision.HIGHEST and str(lax.Precision.HIGH) == "HIGH"
    assert lax.Precision("bfloat16_3x") is lax.Precision.HIGH
    with pytest.raises(ValueError):
        lax.Precision("bogus")
    # recorded from JAX 0.10.2
    assert [(m.name, m.value) for m in lax.DotAlgorithmPreset][:3] == [
        ("DEFAULT", 1), ("ANY_F8_ANY_F8_F32", 2), ("ANY_F8_ANY_F8_F32_FAST_ACCUM", 3)]
    assert len(lax.DotAlgorithmPreset) == 16 and lax.DotAlgorithmPreset.F64_F64_F64.value == 16
    assert lax.DotAlgorithmPreset.F32_F32_F32.supported_lhs_types == (np.float32,)
    assert lax.DotAlgorithmPreset.F16_F16_F32.accumulation_type is np.float32
    assert lax.DotAlgorithmPreset.DEFAULT.supported_lhs_types is None
    assert str(lax.DotAlgorithmPreset.BF16_BF16_F32) == "BF16_BF16_F32"
    alg = lax.DotAlgorithm(np.float32, np.float32, np.float32)
    assert alg.lhs_component_count == 1 and alg.allow_imprecise_accumulation is False


# -- static helpers (values recorded from JAX 0.10.2) ------------------------------


def test_conv_shape_helpers_match_jax():
    assert lax.conv_shape_tuple((2, 3, 9, 9), (4, 3, 3, 2), (2, 1), "SAME") == (2, 4, 5, 9)
    assert lax.conv_shape_tuple((2, 3, 9, 9), (4, 3, 3, 2), (2, 1), [(1, 0), (0, 2)], 1) == (2, 4, 4, 10)
    assert lax.conv_general_shape_tuple((2, 9, 8, 3), (3, 2, 3, 4), (1, 2), "VALID",
                                        ("NHWC", "HWIO", "NHWC")) == (2, 7, 4, 4)
    nhwc = ("NHWC", "HWIO", "NHWC")
    assert lax.conv_transpose_shape_tuple((2, 9, 8, 3), (3, 2, 3, 4), (2, 2), "SAME", nhwc) == (2, 18, 16, 4)
    assert lax.conv_transpose_shape_tuple((2, 9, 8, 3), (3, 2, 3, 4), (2, 3), "VALID",
                                          ("NHWC", "HWIO", "NCHW")) == (2, 4, 19, 24)
    assert lax.conv_transpose_shape_tuple((2, 9, 8, 3), (3, 2, 3, 4), (2, 3), [(1, 2), (0, 1)], nhwc) == \
        (2, 18, 22, 4)
    assert lax.conv_general_permutations(nhwc) == ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    assert lax.conv_general_permutations(("NCHW", "OIHW", "NHWC")) == ((0, 1, 2, 3), (0, 1, 2, 3), (0, 3, 1, 2))
    assert lax.reduce_window_shape_tuple((5, 7), (2, 3), (1, 2), [(0, 1), (1, 1)]) == (5, 4)
    assert lax.reduce_window_shape_tuple((5, 7), (2, 3), (2, 2), [(0, 1), (1, 1)], (2, 1), (1, 2)) == (5, 3)
    with pytest.raises(TypeError, match="Wrong number of explicit pads for convolution"):
        lax.conv_shape_tuple((2, 3, 9, 9), (4, 3, 3, 2), (1, 1), [(0, 0)])
    # the helpers agree with the shapes the operations produce
    x = np.ones((2, 9, 8, 3), np.float32)
    k = np.ones((3, 2, 3, 4), np.float32)
    assert lax.conv_transpose(x, k, (2, 2), "SAME").shape == (2, 18, 16, 4)


def test_conv_transpose_with_kernel_transpose_matches_recorded_jax():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 5, 6, 3)).astype(np.float32)
    rng.normal(size=(3, 2, 3, 4))
    kk = rng.normal(size=(3, 2, 4, 3)).astype(np.float32)
    out = np.asarray(lax.conv_transpose(x, kk, (2, 1), "SAME", transpose_kernel=True))
    # recorded from JAX 0.10.2 (same inputs): sum and sum of squares
    assert out.shape == (2, 10, 6, 4)
    assert np.isclose(out.sum(), -79.26235961914062, rtol=1e-5)
    assert np.isclose((out ** 2).sum(), 4056.321044921875, rtol=1e-5)


def test_dtype_and_shape_as_value():
    assert lax.dtype(1.0) == np.float32 and lax.dtype(np.int8(1)) == np.int8
    assert lax.dtype(jnp.ones(2, jnp.int32)) == np.int32 and lax.dtype("float32") == np.float32
    v = lax.shape_as_value((2, 3))
    assert v.dtype == np.int32 and v.tolist() == [2, 3]


# -- primitives: reduce_precision, mulhi, reduce_xor, optimization_barrier --------


def test_reduce_precision_matches_recorded_jax():
    x = np.array([1.0, 1.0000001, 3.14159, -2.7e-20, 6.5e4, 1e38, -1e38, np.inf, -np.inf, np.nan, 0.0, -0.0,
                  1e-45, 65519.0, 65520.0, 1.5, 2.5, 1.00390625, 1.01171875], np.float32)
    # recorded from JAX 0.10.2
    want = {
        (5, 10): [1.0, 1.0, 3.140625, -0.0, 64992.0, np.inf, -np.inf, np.inf, -np.inf, np.nan, 0.0, -0.0, 0.0,
                  65504.0, np.inf, 1.5, 2.5, 1.00390625, 1.01171875],
        (4, 3): [1.0, 1.0, 3.25, -0.0, np.inf, np.inf, -np.inf, np.inf, -np.inf, np.nan, 0.0, -0.0, 0.0, np.inf,
                 np.inf, 1.5, 2.5, 1.0, 1.0],
        (8, 0): [1.0, 1.0, 4.0, -2.710505431213761e-20, 65536.0, 8.507059173023462e+37, -8.507059173023462e+37,
                 np.inf, -np.inf, np.nan, 0.0, -0.0, 0.0, 65536.0, 65536.0, 2.0, 2.0, 1.0, 1.0],
        (1, 0): [0.0, 0.0, np.inf, -0.0, np.inf, np.inf, -np.inf, np.inf, -np.inf, np.nan, 0.0, -0.0, 0.0,
                 np.inf, np.inf, np.inf, np.inf, 0.0, 0.0],
    }
    for (e, m), w in want.items():
        got = np.asarray(lax.reduce_precision(x, e, m))
        np.testing.assert_array_equal(got, np.asarray(w, np.float32), err_msg=f"({e}, {m})")
        assert np.array_equal(np.signbit(got), np.signbit(np.asarray(w, np.float32)))
        np.testing.assert_array_equal(np.asarray(jax.jit(lambda v: lax.reduce_precision(v, e, m))(x)), got)
    for dt in (jnp.float16, jnp.bfloat16):
        with np.errstate(over="ignore"):  # 1e38 overflows float16 to inf
            narrow = x.astype(dt)
        got = np.asarray(lax.reduce_precision(narrow, 4, 3)).astype(np.float32)
        np.testing.assert_array_equal(got, np.asarray(want[(4, 3)], np.float32))


def test_reduce_precision_derivative_is_rounded_as_jax():
    # JAX treats reduce_precision as linear: tangents and cotangents are rounded too
    f = lambda v: lax.reduce_precision(v * 1.1, 4, 3)  # noqa: E731
    assert float(jax.grad(f)(1.3)) == pytest.approx(1.1)  # recorded from JAX 0.10.2
    _, t = jax.jvp(lambda v: lax.reduce_precision(v, 4, 3), (1.3,), (1.1,))
    assert float(t) == 1.125
    text = str(jax.make_jaxpr(lambda v: lax.reduce_precision(v, 4, 3))(1.0))
    assert "reduce_precision[exponent_bits=4 mantissa_bits=3]" in text


def test_mulhi_and_reduce_xor_match_recorded_jax():
    got = lax.mulhi(np.array([-5, 7, 2 ** 30, -2 ** 31], np.int32), np.array([3, 2 ** 31 - 1, 8, -2 ** 31], np.int32))
    np.testing.assert_array_equal(np.asarray(got), [-1, 3, 2, 1073741824])
    got = lax.mulhi(np.array([5, 2 ** 32 - 1], np.uint32), np.array([2 ** 31, 2 ** 32 - 1], np.uint32))
    np.testing.assert_array_equal(np.asarray(got), [2, 4294967294])
    np.testing.assert_array_equal(np.asarray(lax.mulhi(np.array([255, 17], np.uint8), np.array([255, 16], np.uint8))),
                                  [254, 1])
    np.testing.assert_array_equal(np.asarray(lax.mulhi(np.array([-128, 17], np.int8), np.array([-128, 16], np.int8))),
                                  [64, 1])
    np.testing.assert_array_equal(np.asarray(lax.reduce_xor(np.array([[1, 2, 4], [7, 7, 0]], np.int32), (1,))), [7, 0])
    assert bool(lax.reduce_xor(np.array([True, True, False]), (0,))) is False
    with pytest.raises(TypeError):
        lax.reduce_xor(np.ones(3, np.float32), (0,))


def test_optimization_barrier_is_the_identity_on_a_tree():
    x = jnp.ones(2)
    a, b = lax.optimization_barrier((x, 3))
    np.testing.assert_array_equal(np.asarray(a), [1.0, 1.0])
    assert int(b) == 3
    jaxpr = jax.make_jaxpr(lambda v: lax.optimization_barrier((v, v * 2)))(1.0)
    assert [e.primitive.name for e in jaxpr.eqns] == ["mul", "optimization_barrier"]
    g = jax.grad(lambda v: lax.optimization_barrier((v, v * 2))[1].sum())(x)
    np.testing.assert_array_equal(np.asarray(g), [2.0, 2.0])
    got = jax.vmap(lambda v: lax.optimization_barrier({"k": v * 3})["k"])(jnp.arange(3.0))
    np.testing.assert_array_equal(np.asarray(got), [0.0, 3.0, 6.0])
    _, t = jax.jvp(lambda v: lax.optimization_barrier([v, jnp.sin(v)])[1], (0.0,), (2.0,))
    assert float(t) == 2.0


# -- lax.reduce / reduce_window with Python computations (values recorded from JAX 0.10.2)


def test_reduce_with_python_computations():
    x = jnp.arange(12.0).reshape(3, 4) - 5
    np.testing.assert_array_equal(np.asarray(lax.reduce(x, 0.0, lax.add, (0,))), [-3.0, 0.0, 3.0, 6.0])
    np.testing.assert_array_equal(np.asarray(lax.reduce(x, 1.0, lambda a, b: a * b, (1,))), [120.0, 0.0, 360.0])
    assert float(lax.reduce(x, -np.inf, lax.max, (0, 1))) == 6.0
    np.testing.assert_array_equal(np.asarray(lax.reduce(x, 0.0, lambda a, b: a + b * b, (1,))), [54.0, 6.0, 86.0])
    s, c = lax.reduce((x, jnp.ones((3, 4), jnp.int32)), (0.0, 0), lambda a, b: (a[0] + b[0], a[1] + b[1]), (0,))
    np.testing.assert_array_equal(np.asarray(s), [-3.0, 0.0, 3.0, 6.0])
    np.testing.assert_array_equal(np.asarray(c), [3, 3, 3, 3])
    g = jax.grad(lambda v: lax.reduce(v, 0.0, lambda a, b: a + jnp.sin(b), (1,)).sum())(x)
    np.testing.assert_allclose(np.asarray(g), np.cos(np.asarray(x)), rtol=1e-6)
    got = jax.jit(lambda v: lax.reduce(v, 0.0, lambda a, b: jnp.maximum(a, b * 2), (0,)))(x)
    np.testing.assert_array_equal(np.asarray(got), [6.0, 8.0, 10.0, 12.0])
    assert int(lax.reduce(jnp.array([1, 2, 4, 7], jnp.int32), 0, lax.bitwise_xor, (0,))) == 0
    assert "reduce_xor" in str(jax.make_jaxpr(lambda v: lax.reduce(v, 0, lax.bitwise_xor, (0,)))(
        jnp.array([1, 2], jnp.int32)))
    with pytest.raises(ValueError, match="same tree structure"):
        lax.reduce(x, (0.0, 0.0), lax.add, (0,))


def test_reduce_window_with_python_computations():
    x = jnp.arange(12.0).reshape(3, 4) - 5
    got = lax.reduce_window(x, 0.0, lambda a, b: a + b * b, (2, 2), (1, 1), "VALID")
    np.testing.assert_array_equal(np.asarray(got), [[42.0, 26.0, 18.0], [26.0, 42.0, 66.0]])
    got = lax.reduce_window(x, 1.0, lax.mul, (2, 3), (1, 2), "SAME")
    np.testing.assert_array_equal(np.asarray(got), [[0.0, 12.0], [0.0, 60.0], [60.0, 30.0]])
    got = lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 1), [(1, 0), (0, 1)], (2, 1), (1, 2))
    np.testing.assert_array_equal(np.asarray(got), [[-8.0, -6.0, -3.0], [-8.0, -6.0, -3.0], [0.0, 2.0, 1.0],
                                                    [0.0, 2.0, 1.0], [8.0, 10.0, 5.0]])


# -- rng_bit_generator (bits recorded from JAX 0.10.2 on the CPU) -------------------


def test_rng_bit_generator_philox_matches_recorded_jax():
    k = np.array([1, 2, 3, 4], np.uint32)
    want = [512747620, 1298009047, 1267190206, 761827841, 1383286907, 1639995030, 2756207988, 2154813423]
    for shape in [(6,), (2, 3), (3, 2), (4,), (2, 2, 2), (5,)]:
        for alg in (lax.RandomAlgorithm.RNG_DEFAULT, lax.RandomAlgorithm.RNG_PHILOX):
            new_key, bits = lax.rng_bit_generator(k, shape, algorithm=alg)
            n = int(np.prod(shape))
            assert bits.shape == shape and bits.dtype == np.uint32
            np.testing.assert_array_equal(np.asarray(bits).ravel(), want[:n])
            np.testing.assert_array_equal(np.asarray(new_key), [1, 2, 3 + -(-n // 4), 4])
    # the 64-bit counter carries into its high word
    new_key, bits = lax.rng_bit_generator(np.array([1, 2, 0xFFFFFFFF, 4], np.uint32), (6,))
    np.testing.assert_array_equal(np.asarray(new_key), [1, 2, 1, 5])
    np.testing.assert_array_equal(np.asarray(bits), [2160442090, 646515821, 2332489852, 1920049738, 1192871431,
                                                     4231507064])
    jitted = jax.jit(lambda key: lax.rng_bit_generator(key, (2, 3)))(k)
    np.testing.assert_array_equal(np.asarray(jitted[1]).ravel(), want[:6])
    key0, bits0 = lax.rng_bit_generator(k, (0,))
    assert bits0.shape == (0,) and np.asarray(key0).tolist() == [1, 2, 3, 4]


def test_rng_bit_generator_threefry_matches_recorded_jax():
    k = np.array([1, 2, 3, 4], np.uint32)
    new_key, bits = lax.rng_bit_generator(k, (6,), algorithm=lax.RandomAlgorithm.RNG_THREE_FRY)
    np.testing.assert_array_equal(np.asarray(bits), [1576285164, 2249660814, 740599976, 2425682526, 2436392515,
                                                     1497962777])
    np.testing.assert_array_equal(np.asarray(new_key), [1, 2, 6, 4])
    new_key, bits = lax.rng_bit_generator(k, (3,), algorithm=lax.RandomAlgorithm.RNG_THREE_FRY)
    np.testing.assert_array_equal(np.asarray(bits), [1576285164, 2249660814, 740599976])
    np.testing.assert_array_equal(np.asarray(new_key), [1, 2, 5, 4])
    new_key, bits = lax.rng_bit_generator(np.array([1, 2, 0xFFFFFFFF, 4], np.uint32), (6,),
                                          algorithm=lax.RandomAlgorithm.RNG_THREE_FRY)
    np.testing.assert_array_equal(np.asarray(new_key), [1, 2, 2, 5])
    np.testing.assert_array_equal(np.asarray(bits), [1659226264, 1696293625, 2593290630, 1369596596, 1606051822,
                                                     2624171580])


def test_rng_bit_generator_bad_inputs():
    with pytest.raises(TypeError, match="unsupported dtype int32"):
        lax.rng_bit_generator(np.arange(4, dtype=np.uint32), (3,), dtype=np.int32)
    with pytest.raises(TypeError, match="uint32"):
        lax.rng_bit_generator(np.arange(2, dtype=np.uint32), (3,))
    assert [int(a) for a in lax.RandomAlgorithm] == [0, 1, 2]


# -- lax.linalg enums ------------------------------------------------------------------


def test_linalg_algorithm_enums_match_jax():
    from microjax_rs.lax import linalg

    assert [(m.name, m.value) for m in linalg.EighImplementation] == [("QR", "qr"), ("JACOBI", "jacobi"),
                                                                       ("QDWH", "qdwh")]
    assert [m.value for m in linalg.SvdAlgorithm] == ["default", "QR", "Jacobi", "polar", "divide_and_conquer"]
    x = np.array([[2.0, 1.0], [1.0, 3.0]], np.float32)
    v, w = linalg.eigh(x, implementation=linalg.EighImplementation.QR)
    np.testing.assert_allclose(np.asarray(w), np.linalg.eigvalsh(x), rtol=1e-6)
    s = linalg.svd(x, compute_uv=False, algorithm=linalg.SvdAlgorithm.QR)
    np.testing.assert_allclose(np.asarray(s), np.linalg.svd(x, compute_uv=False), rtol=1e-6)


def test_transcendentals_accept_accuracy():
    # JAX 0.10.2: accuracy= is AccuracyMode or Tolerance; other values raise NotImplementedError.
    x = jnp.asarray([0.5, 1.5], jnp.float32)
    for name in ("exp", "log", "sin", "cos", "tan", "tanh", "logistic", "sqrt", "rsqrt", "cbrt", "exp2",
                 "log1p", "expm1"):
        f = getattr(lax, name)
        for acc in (lax.AccuracyMode.HIGHEST, lax.AccuracyMode.DEFAULT, lax.Tolerance(atol=1e-5, rtol=1e-5, ulps=2)):
            np.testing.assert_array_equal(np.asarray(f(x, accuracy=acc)), np.asarray(f(x)))
        with pytest.raises(NotImplementedError, match="Accuracy foo not supported"):
            f(x, accuracy="foo")
    g = jax.grad(lambda v: lax.sin(v, accuracy=lax.AccuracyMode.HIGHEST))(0.0)
    assert float(g) == 1.0
    np.testing.assert_array_equal(
        np.asarray(jax.jit(jax.vmap(lambda v: lax.exp(v, accuracy=lax.AccuracyMode.HIGHEST)))(x)),
        np.asarray(lax.exp(x)))
    with pytest.raises(ValueError, match="Tolerances must be non-negative"):
        lax.Tolerance(atol=-1.0)
