"""Eager arrays: operators, promotion, conversions, repr."""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp


def test_operators_broadcast_and_promote_like_jax():
    a = jnp.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    b = jnp.asarray(np.array([1, 2, 3], dtype=np.int32))
    out = a + b
    assert out.dtype == np.float32 and out.shape == (2, 3)
    np.testing.assert_array_equal(np.asarray(out), np.arange(6).reshape(2, 3) + [1, 2, 3])
    assert (b * 2).dtype == np.int32
    assert (b + 1.5).dtype == np.float32 and (b + 1.5).weak_type
    assert (a * 2.0).dtype == np.float32 and not (a * 2.0).weak_type
    assert (b / 2).dtype == np.float32
    np.testing.assert_array_equal(np.asarray(b > 1), [False, True, True])
    np.testing.assert_array_equal(np.asarray(-b), [-1, -2, -3])
    np.testing.assert_array_equal(np.asarray(2 - b), [1, 0, -1])
    np.testing.assert_array_equal(np.asarray(b ** 2), [1, 4, 9])


def test_numpy_operand_and_reflected():
    a = jnp.ones(3)
    out = np.arange(3, dtype=np.float32) + a
    assert isinstance(out, jax.Array)
    np.testing.assert_array_equal(np.asarray(out), [1, 2, 3])


_NUMPY_OPERANDS = [
    np.arange(6, dtype=np.float32).reshape(2, 3),
    np.arange(6, dtype=np.float64).reshape(2, 3) / 7,  # float32 without x64
    np.arange(6, dtype=">f4").reshape(2, 3),  # big-endian
    np.asfortranarray(np.arange(6, dtype=np.int32).reshape(2, 3)),
    np.arange(12, dtype=np.int8).reshape(2, 6)[:, ::2],  # strided view
    np.array([[True, False, True]] * 2),
    np.arange(6, dtype=np.uint8).reshape(2, 3),
    np.arange(6, dtype=np.float16).reshape(2, 3),
    (np.arange(6) + 1j).astype(np.complex64).reshape(2, 3),
]


@pytest.mark.parametrize("x", _NUMPY_OPERANDS, ids=lambda x: f"{x.dtype.str}{'F' if x.flags.f_contiguous and not x.flags.c_contiguous else ''}")
@pytest.mark.parametrize("other", [None, 2, 1.5, "i8", "f4"])
def test_numpy_operands_convert_as_arrays_of_their_dtype(x, other):
    """A NumPy operand of a jnp function or an operator is an array of its
    canonical dtype (not weak): the same value, dtype and weak type as the
    same operand converted first, on every entry point (jnp binary and
    unary functions, operators in both orders)."""
    y = {None: x, "i8": np.array([1, -2, 3], np.int8), "f4": np.array([0.5, 2, -1], np.float32)}.get(other, other)
    xa, ya = jnp.asarray(x), (jnp.asarray(y) if isinstance(y, np.ndarray) else y)
    assert not xa.weak_type and xa.dtype == jax.dtypes.canonicalize_dtype(x.dtype)
    pairs = [(jnp.add(x, y), jnp.add(xa, ya)), (jnp.multiply(y, x), jnp.multiply(ya, xa)),
             (jnp.maximum(x, y), jnp.maximum(xa, ya))]
    if x.dtype.kind != "c":
        pairs += [(jnp.sin(x), jnp.sin(xa)), (jnp.less(x, y), jnp.less(xa, ya))]
    if x.dtype != np.bool_:
        pairs += [(xa - y, xa - ya), (y - xa, ya - xa), (jnp.negative(x), jnp.negative(xa))]
    if isinstance(y, np.ndarray):
        pairs += [(ya * x, ya * xa), (x * ya, xa * ya)]
    for got, want in pairs:
        assert isinstance(got, jax.Array)
        assert (got.dtype, got.weak_type, got.shape) == (want.dtype, want.weak_type, want.shape)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_numpy_operand_under_a_trace_and_in_a_debug_mode():
    """Under jit and with the NaN check on, NumPy operands keep their meaning."""
    x = np.array([1.0, -2.0, 4.0], np.float64)
    f = jax.jit(lambda a: jnp.add(a, x) * x)
    np.testing.assert_allclose(np.asarray(f(jnp.ones(3))), (1 + x) * x)
    assert f(jnp.ones(3)).dtype == np.float32
    with jax.debug_nans(True):
        np.testing.assert_allclose(np.asarray(jnp.add(x, x)), 2 * x)
        with pytest.raises(FloatingPointError):
            jnp.log(np.array([-1.0], np.float32))


@pytest.mark.parametrize("shapes", [((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)),
                                    ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)), ((1, 4), (4, 1))])
@pytest.mark.parametrize("dtypes", [("float32", "float32"), ("complex64", "complex64"),
                                    ("int32", "int32"), ("float32", "int8"), ("float16", "float32"),
                                    ("float32", "complex64")])
def test_matmul_operator_matches_jnp_matmul_and_numpy(shapes, dtypes):
    """`x @ y` and `y.__rmatmul__(x)` on concrete arrays (the Rust fast
    path for one float/complex dtype of rank 1 or 2, the jnp function for
    the rest) give jnp.matmul's dtype, weak type, shape and values."""
    rng = np.random.default_rng(0)
    a = rng.integers(-3, 4, shapes[0]).astype(dtypes[0])
    b = rng.integers(-3, 4, shapes[1]).astype(dtypes[1])
    x, y = jnp.asarray(a), jnp.asarray(b)
    want = jnp.matmul(x, y)
    for got in (x @ y, y.__rmatmul__(x), x @ b, a @ y):
        assert isinstance(got, jax.Array)
        assert (got.dtype, got.weak_type, got.shape) == (want.dtype, want.weak_type, want.shape)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(want), a @ b, rtol=1e-3)


@pytest.mark.parametrize("fn", ["maximum", "minimum"])
@pytest.mark.parametrize("pair", [("float32", "float32"), ("float32", "int32"), ("int8", "uint8"),
                                  ("bool", "bool"), ("complex64", "float32"), ("float16", 0),
                                  ("int32", 2.5), ("float32", -1), ("uint8", True)])
def test_maximum_minimum_fast_path_matches_the_jnp_path(fn, pair):
    """jnp.maximum/minimum of concrete operands (computed by the binding)
    give what the jnp path gives (promotion, weak type, broadcasting, NaN),
    with the array first or second."""
    rng = np.random.default_rng(1)
    a = rng.integers(-3, 4, (2, 3)).astype(pair[0])
    if np.issubdtype(a.dtype, np.floating):
        a[0, 0] = np.nan
    if isinstance(pair[1], str):
        b = rng.integers(-3, 4, (3,)).astype(pair[1])
        other = jnp.asarray(b)
    else:
        other = b = pair[1]
    x = jnp.asarray(a)
    f = getattr(jnp, fn)
    for got, want in ((f(x, other), f._slow(x, other)), (f(other, x), f._slow(other, x)),
                      (f(a, b), f._slow(x, other))):
        assert (got.dtype, got.weak_type, got.shape) == (want.dtype, want.weak_type, want.shape)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    ref = getattr(np, fn)(a, b)
    np.testing.assert_array_equal(np.asarray(f(x, other)).astype(ref.dtype), ref)


def test_maximum_fast_path_leaves_errors_and_traces_to_jnp():
    x = jnp.ones((2, 3))
    with pytest.raises(TypeError, match="max"):
        jnp.maximum(x, jnp.ones((2, 4)))
    with pytest.raises(ValueError, match="Incompatible shapes"):
        jnp.maximum(x, jnp.ones((4,)))
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda v: jnp.maximum(v, 0.5))(x)), np.ones((2, 3)))
    g = jax.grad(lambda v: jnp.sum(jnp.maximum(v, 0.0)))(jnp.array([-1.0, 2.0]))
    np.testing.assert_array_equal(np.asarray(g), [0.0, 1.0])


def test_matmul_operator_errors_are_jnp_matmul_s():
    x = jnp.ones((3, 4))
    with pytest.raises(TypeError, match="contracting dimensions differ"):
        x @ jnp.ones((5, 2))
    for scalar in (jnp.float32(2), 2.0):
        with pytest.raises(ValueError, match="rank-0"):
            x @ scalar


def test_integer_wraparound():
    x = jnp.asarray(np.array([2**31 - 1], dtype=np.int32))
    np.testing.assert_array_equal(np.asarray(x + 1), [-(2**31)])


def test_conversions_and_repr():
    x = jnp.asarray([1.0, 2.0, 3.0])
    assert repr(x) == "Array([1., 2., 3.], dtype=float32)"
    assert repr(jnp.asarray(2.0)) == "Array(2., dtype=float32, weak_type=True)"
    assert float(jnp.sum(x)) == 6.0
    assert int(jnp.asarray(3)) == 3
    assert jnp.asarray(3).item() == 3
    assert bool(jnp.asarray(True))
    with pytest.raises(TypeError):
        len(jnp.asarray(1.0))
    assert len(x) == 3
    assert x.block_until_ready() is x
    np.testing.assert_array_equal(x.astype(jnp.int32), [1, 2, 3])
    assert x.astype(jnp.int32).dtype == np.int32
    with pytest.raises(TypeError):
        x[0] = 1


def test_numpy_subset_values():
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    jx = jnp.asarray(x)
    np.testing.assert_allclose(np.asarray(jnp.sin(jx)), np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jnp.exp(jx)), np.exp(x), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jnp.tanh(jx)), np.tanh(x), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(np.asarray(jnp.sum(jx, axis=1)), x.sum(1), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jnp.sum(jx, axis=0, keepdims=True)), x.sum(0, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jx.T), x.T)
    np.testing.assert_allclose(np.asarray(jnp.reshape(jx, (4, 3))), x.reshape(4, 3))
    np.testing.assert_allclose(np.asarray(jx.reshape(2, -1)), x.reshape(2, -1))
    np.testing.assert_allclose(np.asarray(jnp.transpose(jx)), x.T)
    np.testing.assert_allclose(np.asarray(jnp.maximum(jx, 0.0)), np.maximum(x, 0))
    np.testing.assert_allclose(np.asarray(jnp.where(jx > 0, jx, -jx)), np.abs(x))
    np.testing.assert_allclose(np.asarray(jnp.dot(jx, jx.T)), x @ x.T, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jx @ jx.T), x @ x.T, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jnp.matmul(jnp.ones((2, 3, 4)), jx.T)), np.ones((2, 3, 4)) @ x.T, rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(jnp.arange(5)), np.arange(5))
    assert jnp.arange(5).dtype == np.int32
    assert jnp.arange(0.0, 1.0, 0.25).dtype == np.float32
    assert jnp.zeros((2, 3)).dtype == np.float32
    np.testing.assert_array_equal(np.asarray(jnp.ones((2,), dtype=jnp.int32)), [1, 1])
    np.testing.assert_allclose(np.asarray(jnp.mean(jx)), x.mean(), atol=1e-6)
    np.testing.assert_allclose(np.asarray(jnp.max(jx, axis=1)), x.max(1))


def test_sum_of_bool_and_small_ints_is_int32():
    assert jnp.sum(jnp.asarray([True, False, True])).dtype == np.int32
    assert int(jnp.sum(jnp.asarray([True, False, True]))) == 2


def test_complex_arrays_convert_both_ways():
    z = np.array([1 + 2j, -0.5j], dtype=np.complex64)
    a = jnp.asarray(z)
    assert a.dtype == np.complex64
    np.testing.assert_array_equal(np.asarray(a), z)
    with pytest.raises(TypeError, match="complex256"):
        jnp.asarray(np.ones(2, dtype=np.clongdouble))


def test_float64_canonicalized_without_x64():
    assert jnp.asarray(np.ones(2)).dtype == np.float32
    assert jnp.asarray(np.ones(2, dtype=np.int64)).dtype == np.int32


def test_plan_stats_reports_fusion_and_peak_memory():
    import microjax_rs as jax
    import microjax_rs.numpy as jnp

    x = jnp.asarray(np.linspace(-2, 2, 10_000, dtype=np.float32))
    st = jax.debug.plan_stats(lambda x: jnp.tanh(x * 2 + 1) * jnp.sin(x) - jnp.exp(-x * x), x)
    assert st["fusion_groups"] == 1 and st["fused_eqns"] == st["eqns_simplified"] == 9
    assert st["steps"] == 1
    assert st["typed_groups"] == 1
    assert st["arg_bytes"] == st["out_bytes"] == 40_000
    # The input and the output are the only arrays alive at once.
    assert st["peak_bytes"] == 80_000
    # CSE: the same product twice is computed once.
    st2 = jax.debug.plan_stats(lambda x: jnp.sin(x * 3) + jnp.sin(x * 3), x)
    assert st2["eqns"] == 5 and st2["eqns_simplified"] == 3
    # A group mixing dtypes (a comparison feeding a select) takes the
    # generic pass, with the same results as eager evaluation.
    relu_grad = lambda x: jnp.where(x > 0, x * 2.0, 0.0)
    st3 = jax.debug.plan_stats(relu_grad, x)
    assert st3["fusion_groups"] == 1 and st3["typed_groups"] == 0
    np.testing.assert_array_equal(np.asarray(jax.jit(relu_grad)(x)), np.asarray(relu_grad(x)))
    # Comparisons that only their conversion to float reads (the masks of
    # max's derivative, with ties at 0) stay in the typed pass, with eager's
    # bits under jit.
    xz = jnp.concatenate([x, jnp.zeros(8, jnp.float32)])
    relu_vjp = jax.grad(lambda x: jnp.sum(jnp.maximum(x, 0.0) * x))
    st4 = jax.debug.plan_stats(relu_vjp, xz)
    assert st4["fusion_groups"] == st4["typed_groups"] == 1
    np.testing.assert_array_equal(np.asarray(jax.jit(relu_vjp)(xz)), np.asarray(relu_vjp(xz)))


def test_fused_groups_of_different_sizes_in_turn_match_numpy():
    # Typed fused groups take their chunk buffers from per-thread scratch
    # that passes from group to group and program to program: groups with
    # more slots and broadcast inputs than the one before, and fewer, run
    # in turn, each call on new values, and must give NumPy's results.
    rng = np.random.default_rng(3)
    hess = jax.jit(jax.hessian(lambda x: jnp.sum(jnp.tanh(x) ** 3)))

    def outer_mix(x, y):
        a = x[:, None] * y[None, :] + jnp.sin(y)[None, :]
        b = (a @ a.T) * 0.01
        return jnp.cos(b) * x[None, :] - jnp.tanh(b) * x[:, None] + 2.0

    mix = jax.jit(outer_mix)
    small = jax.jit(lambda v: v * 3.0 + 1.0)

    # Broadcast inputs of periods 50, 200 and 200 (chunks of a multiple of
    # 200 reuse their gathered chunk); 80,000 elements are split over the
    # threads, the second span starting mid-period.
    def periods(a, b, c, full):
        return (a[None, None, :] * b[None, :, :] + c[None, :, None]) * full - jnp.sin(b)[None]

    per = jax.jit(periods)
    for rows in (50, 400):
        a, b = rng.standard_normal(50), rng.standard_normal((4, 50))
        c, full = rng.standard_normal(4), rng.standard_normal((rows, 4, 50))
        args = [v.astype(np.float32) for v in (a, b, c, full)]
        want = (a[None, None, :] * b[None] + c[None, :, None]) * full - np.sin(b)[None]
        for _ in range(2):
            np.testing.assert_allclose(np.asarray(per(*args)), want, rtol=1e-4, atol=1e-4)
    for _ in range(3):
        x = rng.uniform(-1, 1, 100).astype(np.float32)
        y = rng.uniform(-1, 1, 100).astype(np.float32)
        t = np.tanh(x.astype(np.float64))
        want_h = np.diag((6 * t - 12 * t**3) * (1 - t**2))
        for f, args, want, tol in (
            (hess, (x,), want_h, 2e-4),
            (small, (y,), y * 3.0 + 1.0, 1e-6),
            (mix, (x, y), None, 1e-4),
        ):
            if want is None:
                a = x[:, None].astype(np.float64) * y[None, :] + np.sin(y)[None, :]
                b = (a @ a.T) * 0.01
                want = np.cos(b) * x[None, :] - np.tanh(b) * x[:, None] + 2.0
            np.testing.assert_allclose(np.asarray(f(*args)), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["exp", "tanh", "sin", "log"])
def test_large_unary_operands_split_over_threads_match_numpy_in_every_transform(name, dtype, x64):
    # 3 * 2^16 + 77 elements: above the size whose vector-math pass is split
    # over the kernel threads, not a multiple of the split's chunks.
    rng = np.random.default_rng(7)
    x = rng.uniform(0.25, 3.0, 3 * 65536 + 77).astype(dtype)
    f, ref = getattr(jnp, name), getattr(np, name)
    tol = dict(rtol=2e-6, atol=0) if dtype == np.float32 else dict(rtol=1e-14, atol=0)
    want = ref(x)
    np.testing.assert_allclose(np.asarray(f(x)), want, **tol)
    np.testing.assert_allclose(np.asarray(jax.jit(f)(x)), want, **tol)
    rows = x[: (x.size // 7) * 7].reshape(7, -1)
    np.testing.assert_allclose(np.asarray(jax.vmap(f)(rows)), ref(rows), **tol)
    # The derivative's own large unary ops (exp: exp; tanh: 1 - tanh^2;
    # sin: cos; log: 1/x) against their closed forms.
    d = {"exp": np.exp(x), "tanh": 1 - np.tanh(x) ** 2, "sin": np.cos(x), "log": 1 / x}[name]
    g = jax.grad(lambda v: jnp.sum(f(v)))(x)
    gtol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=0)
    np.testing.assert_allclose(np.asarray(g), d, **gtol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_small_kernel_products_into_pooled_outputs_match_numpy(dtype, x64):
    # Products on the small kernels (register-blocked, matrix-vector) take
    # their output from the host buffer pool without zeroing it: each is
    # computed right after an array of NaNs of the output's size was freed
    # (the pool hands that memory back), and must match NumPy everywhere,
    # the columns after the last full vector block included (n = 70).
    from microjax_rs import lax

    rng = np.random.default_rng(5)
    tol = dict(rtol=2e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)

    def after_nans(shape, f, *args):
        nans = jnp.full(shape, np.nan, dtype)
        np.asarray(nans)
        del nans
        return np.asarray(f(*args))

    for n in (256, 70):
        xs = rng.standard_normal((1024, n)).astype(dtype)
        ys = rng.standard_normal(1024).astype(dtype)
        w = rng.standard_normal(n).astype(dtype) / 8
        loss = lambda w, x, y: 0.5 * (jnp.dot(x, w) - y) ** 2
        per_example = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))
        want = (xs @ w - ys)[:, None] * xs
        for f in (per_example, jax.jit(per_example)):
            np.testing.assert_allclose(after_nans((1024, n), f, w, xs, ys), want, **tol)
        # A batched outer product (batch 1024 of 1x1 @ 1xn) and a short
        # wide product (16x4 @ 4x4096) on the register kernel.
        outer = lambda a, b: lax.dot_general(a, b, (((), ()), ((0,), (0,))))
        got = after_nans((1024, n), outer, ys, xs)
        np.testing.assert_allclose(got, ys[:, None] * xs, **tol)
        small = rng.standard_normal((16, 4)).astype(dtype)
        big = rng.standard_normal((4, 4096)).astype(dtype)
        got = after_nans((16, 4096), jax.jit(jnp.matmul), small, big)
        np.testing.assert_allclose(got, small @ big, **tol)
    # Matrix-vector products of any size on the row-dot kernel, split over
    # threads by rows (one matrix) or whole matrices (a batch).
    mv_tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-11)
    a = rng.standard_normal((2000, 300)).astype(dtype)
    x = rng.standard_normal(300).astype(dtype)
    for f in (jnp.matmul, jax.jit(jnp.matmul)):
        np.testing.assert_allclose(after_nans((2000,), f, a, x), a @ x, **mv_tol)
    ab = rng.standard_normal((3, 400, 200)).astype(dtype)
    xb = rng.standard_normal((3, 200)).astype(dtype)
    bmv = jax.jit(lambda a, x: jnp.einsum("bij,bj->bi", a, x))
    want = np.einsum("bij,bj->bi", ab, xb)
    np.testing.assert_allclose(after_nans((3, 400), bmv, ab, xb), want, **mv_tol)
