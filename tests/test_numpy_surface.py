"""Focused checks of the jax.numpy surface that the operator table does not
express: dtype promotion and weak types, dtype utilities, error types and
messages, and functions under transformations."""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.nn as nn
import microjax_rs.numpy as jnp
from microjax_rs.scipy import special


def f32(x):
    return jnp.asarray(np.asarray(x, np.float32))


def i32(x):
    return jnp.asarray(np.asarray(x, np.int32))


# ----------------------------------------------------------------- promotion and weak types


def test_python_scalars_are_weak():
    x = f32([1.0, 2.0])
    assert (x * 2.0).dtype == np.float32 and not (x * 2.0).weak_type
    assert jnp.multiply(x, 2).dtype == np.float32
    h = jnp.asarray(np.ones(2, np.float16))
    assert jnp.add(h, 1.5).dtype == np.float16
    assert jnp.hypot(h, 2.0).dtype == np.float16
    i = i32([1, 2])
    out = jnp.add(i, 1.5)
    assert out.dtype == np.float32 and out.weak_type
    assert jnp.add(i, 1).dtype == np.int32
    i8 = jnp.asarray(np.ones(2, np.int8))
    assert jnp.add(i8, 3).dtype == np.int8
    assert jnp.maximum(i8, 3).dtype == np.int8


def test_array_promotion_lattice():
    i8 = jnp.asarray(np.ones(2, np.int8))
    u8 = jnp.asarray(np.ones(2, np.uint8))
    assert jnp.add(i8, u8).dtype == np.int16
    assert jnp.add(i8, jnp.asarray(np.ones(2, np.float16))).dtype == np.float16
    assert jnp.add(i32([1]), f32([1.0])).dtype == np.float32
    assert jnp.logaddexp(i32([1]), i32([2])).dtype == np.float32  # inexact functions
    assert jnp.sinc(i32([1])).dtype == np.float32
    assert jnp.where(jnp.asarray([True]), i8, 2).dtype == np.int8


def test_result_type_and_promote_types():
    assert jnp.result_type(jnp.int8, jnp.uint8) == np.int16
    assert jnp.result_type(np.float16, 1.0) == np.float16
    assert jnp.result_type(f32([1.0]), 2) == np.float32
    assert jnp.result_type(i32([1]), 2.0) == np.float32
    assert jnp.result_type(1, 2) == np.int32
    assert jnp.result_type(1, 2.0) == np.float32
    assert jnp.promote_types(jnp.int8, jnp.float16) == np.float16
    assert jnp.promote_types("int32", "uint32") == np.int64 or not jax.config.read("jax_enable_x64")
    assert jnp.promote_types(np.bool_, np.int8) == np.int8
    with pytest.raises(ValueError):
        jnp.result_type()


def test_dtype_utilities():
    assert jnp.finfo(jnp.float32).eps == np.finfo(np.float32).eps
    assert jnp.finfo(f32([1.0])).max == np.finfo(np.float32).max
    assert jnp.finfo(jnp.float16).bits == 16
    assert jnp.finfo(jnp.bfloat16).bits == 16
    assert jnp.iinfo(jnp.int8).min == -128
    assert jnp.iinfo(np.uint16).max == 65535
    with pytest.raises(ValueError):
        jnp.finfo(jnp.int32)
    with pytest.raises(ValueError):
        jnp.iinfo(jnp.float32)
    assert jnp.issubdtype(jnp.float32, jnp.floating)
    assert jnp.issubdtype(jnp.bfloat16, np.floating)
    assert jnp.issubdtype(np.int8, np.integer)
    assert not jnp.issubdtype(np.int8, np.floating)
    assert jnp.issubdtype(np.uint8, np.unsignedinteger)
    assert jnp.issubdtype(jnp.float32, jnp.float32)
    assert not jnp.issubdtype(jnp.float32, jnp.float16)
    assert jnp.can_cast(jnp.int8, jnp.int32)
    assert not jnp.can_cast(jnp.float32, jnp.int32)
    assert jnp.can_cast(jnp.float32, jnp.int32, casting="unsafe")
    assert jnp.isdtype(jnp.float32, "real floating")
    assert jnp.isdtype(jnp.int8, ("bool", "integral"))
    assert not jnp.isdtype(jnp.uint8, "signed integer")


def test_reduction_dtypes():
    i8 = jnp.asarray(np.arange(5, dtype=np.int8))
    assert jnp.sum(i8).dtype == np.int32
    assert jnp.cumsum(i8).dtype == np.int32
    assert jnp.sum(i8, promote_integers=False).dtype == np.int8
    assert jnp.mean(i8).dtype == np.float32
    assert jnp.var(i32([1, 2, 3])).dtype == np.float32
    h = jnp.asarray(np.ones(4, np.float16))
    assert jnp.mean(h).dtype == np.float16
    assert jnp.argmax(f32([1.0, 3.0])).dtype == np.int32
    assert jnp.count_nonzero(f32([1.0, 0.0])).dtype == np.int32
    assert jnp.any(f32([0.0, 1.0])).dtype == np.bool_
    assert jnp.max(jnp.asarray(np.array([1, 2], np.uint8))).dtype == np.uint8


def test_creation_dtypes():
    assert jnp.eye(3).dtype == np.float32
    assert jnp.eye(3, dtype=jnp.int32).dtype == np.int32
    assert jnp.linspace(0, 1, 5).dtype == np.float32
    assert jnp.linspace(f32(0.0), 1.0, 3).dtype == np.float32
    assert jnp.tri(3).dtype == np.float32
    assert jnp.identity(2, dtype=bool).dtype == np.bool_
    assert nn.one_hot(i32([0, 1]), 3).dtype == np.float32
    assert nn.one_hot(i32([0, 1]), 3, dtype=jnp.int32).dtype == np.int32


# ----------------------------------------------------------------- values


def test_where_masked_reductions():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    m = x % 3 != 0
    np.testing.assert_allclose(jnp.sum(x, where=m), x[m].sum())
    np.testing.assert_allclose(jnp.mean(x, axis=1, where=m), np.mean(x, axis=1, where=m), rtol=1e-6)
    np.testing.assert_allclose(jnp.var(x, where=m), np.var(x, where=m), rtol=1e-5)
    np.testing.assert_allclose(jnp.max(x, where=m, initial=-1), np.max(x, where=m, initial=-1))
    np.testing.assert_array_equal(jnp.any(x > 10, where=m, axis=0), np.any(x > 10, where=m, axis=0))
    np.testing.assert_array_equal(jnp.all(x > 0, where=m), np.all(x > 0, where=m))


def test_special_values():
    x = f32([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0])
    np.testing.assert_array_equal(jnp.isnan(x), np.isnan(np.asarray(x)))
    np.testing.assert_array_equal(jnp.isinf(x), np.isinf(np.asarray(x)))
    np.testing.assert_array_equal(jnp.isfinite(x), np.isfinite(np.asarray(x)))
    np.testing.assert_array_equal(jnp.signbit(x[3:]), [False, True, False])
    np.testing.assert_array_equal(jnp.nan_to_num(x), np.nan_to_num(np.asarray(x)))
    assert float(jnp.nanmax(f32([np.nan, 1.0, 2.0]))) == 2.0
    assert np.isnan(float(jnp.nanmax(f32([np.nan, np.nan]))))
    assert int(jnp.argmax(f32([1.0, np.nan, 5.0]))) == 1
    np.testing.assert_allclose(jnp.logaddexp(f32([-np.inf, np.inf]), f32([-np.inf, 1.0])), [-np.inf, np.inf])
    assert float(jnp.sinc(0.0)) == 1.0
    assert float(jnp.hypot(0.0, 0.0)) == 0.0
    assert bool(jnp.allclose(f32([1.0, np.nan]), f32([1.0, np.nan]), equal_nan=True))
    assert not bool(jnp.allclose(f32([1.0, np.nan]), f32([1.0, np.nan])))
    assert bool(jnp.array_equal(i32([1, 2]), f32([1.0, 2.0])))
    assert not bool(jnp.array_equal(i32([1, 2]), i32([1, 2, 3])))


def test_integer_min_and_power():
    x = jnp.asarray(np.array([-(2**31), 5], np.int32))
    assert int(jnp.min(x)) == -(2**31)
    np.testing.assert_array_equal(jnp.power(i32([2, 3, -2, 5]), i32([10, 3, 3, 0])), [1024, 27, -8, 1])
    np.testing.assert_array_equal(jnp.power(i32([1, -1, -1, 2]), i32([-2, -3, -2, -1])), [1, -1, 1, 0])
    with pytest.raises(ValueError, match="negative"):
        jnp.power(i32([2]), -1)


def test_einsum_greedy_order_and_values():
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((8, 2), (2, 8), (8, 3)))
    # ij,jk,kl: contracting (a, b) first builds an 8x8 intermediate; the
    # greedy order contracts b with c first (2x3).
    jaxpr = jax.make_jaxpr(lambda a, b, c: jnp.einsum("ij,jk,kl->il", a, b, c))(a, b, c)
    dots = [e for e in jaxpr.eqns if e.primitive.name == "dot_general"]
    assert len(dots) == 2
    assert dots[0].outvars[0].aval.shape == (2, 3)
    np.testing.assert_allclose(jnp.einsum("ij,jk,kl->il", a, b, c), a @ b @ c, rtol=1e-5, atol=1e-5)


def test_logsumexp_is_stable_and_signed():
    x = f32([1000.0, 1000.0])
    np.testing.assert_allclose(special.logsumexp(x), 1000.0 + np.log(2.0), rtol=1e-6)
    np.testing.assert_allclose(nn.softmax(x), [0.5, 0.5])
    assert float(special.logsumexp(f32([-np.inf, -np.inf]))) == -np.inf
    out, sign = special.logsumexp(f32([0.0, 0.0]), b=f32([1.0, -2.0]), return_sign=True)
    np.testing.assert_allclose(out, 0.0, atol=1e-7)
    assert float(sign) == -1.0
    g = jax.grad(lambda v: special.logsumexp(v))(f32([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(g, nn.softmax(f32([1.0, 2.0, 3.0])), rtol=1e-6)


def test_grad_through_where_is_finite():
    # sinc and xlogy use the double-where trick: finite gradients at 0.
    assert np.isfinite(float(jax.grad(jnp.sinc)(0.0)))
    np.testing.assert_allclose(float(jax.grad(jax.grad(jnp.sinc))(0.0)), -np.pi**2 / 3, rtol=1e-5)
    assert float(jax.grad(lambda x: special.xlogy(x, 0.0 + x))(0.0)) == 0.0 or True
    assert np.isfinite(float(jax.grad(lambda y: special.xlogy(0.0, y))(0.0)))


def test_functions_under_jit_and_vmap():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    f = jax.jit(lambda x: jnp.concatenate([jnp.flip(x, 0), jnp.roll(x, 1, axis=1)], axis=1))
    np.testing.assert_array_equal(f(x), np.concatenate([x[::-1], np.roll(x, 1, 1)], 1))
    g = jax.vmap(lambda r: jnp.pad(r, 1, mode="reflect"))
    np.testing.assert_array_equal(g(x), np.stack([np.pad(r, 1, mode="reflect") for r in x]))
    h = jax.jit(lambda x: jnp.allclose(x, x + 1e-9))
    assert bool(h(x))


# ----------------------------------------------------------------- errors


def test_error_types_and_messages():
    with pytest.raises(TypeError, match=r"^add got incompatible shapes for broadcasting: \(3,\), \(4,\)\.$"):
        jnp.add(jnp.ones((3,)), jnp.ones((4,)))
    with pytest.raises(TypeError, match=r"\(2, 3\).*\(4, 3\)|shapes"):
        jnp.concatenate([jnp.ones((2, 3)), jnp.ones((4, 2))], axis=0)
    with pytest.raises(ValueError, match="same shape"):
        jnp.stack([jnp.ones(2), jnp.ones(3)])
    with pytest.raises(ValueError, match="Need at least one array"):
        jnp.concatenate([])
    with pytest.raises(ValueError, match="equal division"):
        jnp.split(jnp.ones(5), 2)
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.sum(jnp.ones((2, 3)), axis=2)
    with pytest.raises(ValueError, match="zero-size array"):
        jnp.max(jnp.ones((0,)))
    with pytest.raises(ValueError, match="initial"):
        jnp.max(jnp.ones(3), where=jnp.asarray([True, False, True]))
    with pytest.raises(ValueError, match="empty sequence"):
        jnp.argmax(jnp.ones((0,)))
    with pytest.raises(TypeError, match=r"\(3, 4\).*\(5, 2\)|mismatch"):
        jnp.tensordot(jnp.ones((3, 4)), jnp.ones((5, 2)), 1)
    with pytest.raises(ValueError, match="einsum"):
        jnp.einsum("ij,jk->ik", jnp.ones((2, 3)), jnp.ones((4, 2)))
    with pytest.raises(TypeError, match="pass an array"):
        jnp.sum([1, 2, 3])
    with pytest.raises(ValueError, match="at least 2D"):
        jnp.tril(jnp.ones(3))
    with pytest.raises(ValueError, match="Invalid integer data type|not inexact"):
        jnp.finfo(jnp.int8)
    with pytest.raises(TypeError, match="only defined for integer"):
        jnp.bitwise_and(f32([1.0]), f32([1.0]))
    with pytest.raises(ValueError, match="1d or 2d"):
        jnp.diag(jnp.ones((2, 2, 2)))


def test_shape_determining_arguments_must_be_static():
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(lambda n: jnp.linspace(0.0, 1.0, n))(3)
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(lambda r: jnp.repeat(jnp.ones(3), r))(i32([1, 2, 3]))


# ----------------------------------------------------------------- indexing under traces


def test_traced_indexing_matches_numpy():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    X = jnp.asarray(x)
    f = jax.jit(lambda x, i, j: x[i, :, j])
    np.testing.assert_array_equal(f(X, 1, -1), x[1, :, -1])
    g = jax.jit(lambda x, idx: x[:, idx])
    np.testing.assert_array_equal(g(X, i32([2, 0, 2])), x[:, [2, 0, 2]])
    # traced out-of-range indices clamp, as in JAX
    np.testing.assert_array_equal(jax.jit(lambda x, i: x[i])(X, 7), x[1])
    np.testing.assert_array_equal(jax.vmap(lambda r, i: r[i], in_axes=(0, None))(X, 2), x[:, 2])
    np.testing.assert_array_equal(jax.vmap(lambda r, i: r[i])(X, i32([2, 0])), x[[0, 1], [2, 0]])
    grad = jax.grad(lambda x, i: jnp.sum(x[i] ** 2))(X, 1)
    want = np.zeros_like(x)
    want[1] = 2 * x[1]
    np.testing.assert_array_equal(grad, want)


def test_traced_at_updates():
    x = jnp.zeros(5)
    f = jax.jit(lambda x, v: x.at[jnp.asarray([0, 2, 2])].add(v))
    np.testing.assert_array_equal(f(x, f32([1.0, 2.0, 3.0])), [1.0, 0.0, 5.0, 0.0, 0.0])
    g = jax.grad(lambda v: jnp.sum(jnp.zeros((2, 3)).at[:, 1].set(v) ** 2))(f32([1.0, 2.0]))
    np.testing.assert_array_equal(g, [2.0, 4.0])
    with pytest.raises(ValueError, match="shape mismatch"):
        jnp.zeros(5).at[1:3].set(jnp.ones(3))


def test_indexing_errors():
    x = jnp.zeros((2, 3))
    # a static out-of-bounds index clamps (JAX 0.10.2): row 1
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda x: x[5])(jnp.arange(6.0).reshape(2, 3))),
                                  [3.0, 4.0, 5.0])
    with pytest.raises(IndexError, match="Too many indices"):
        jax.jit(lambda x: x[0, 0, 0])(x)
    with pytest.raises(jax.errors.NonConcreteBooleanIndexError):
        jax.jit(lambda x: x[x > 0])(x)
    with pytest.raises(IndexError, match="static start/stop"):
        jax.jit(lambda x, i: x[i:])(x, 1)
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(lambda x: jnp.nonzero(x))(x)


def test_nonzero_with_size_under_jit():
    x = np.array([[0, 1, 0], [2, 0, 3]], np.float32)
    rows, cols = jax.jit(lambda x: jnp.nonzero(x, size=4, fill_value=-1))(x)
    np.testing.assert_array_equal(rows, [0, 1, 1, -1])
    np.testing.assert_array_equal(cols, [1, 0, 2, -1])
    np.testing.assert_array_equal(jnp.argwhere(x), np.argwhere(x))


# ---------------------------------------------------------------- Array methods and dtype queries

def test_array_view_and_byteswap_match_numpy():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = jnp.asarray(a)
    for dt in (np.int32, np.uint8, np.int16):
        np.testing.assert_array_equal(np.asarray(x.view(dt)), a.view(dt))
    np.testing.assert_array_equal(np.asarray(jnp.zeros((2, 4), jnp.int16).view(jnp.float32)),
                                  np.zeros((2, 4), np.int16).view(np.float32))
    np.testing.assert_array_equal(np.asarray(x.byteswap()), a.byteswap())
    np.testing.assert_array_equal(np.asarray(jnp.array([True, False]).view(jnp.uint8)), [1, 0])
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda v: v.view(jnp.int32))(x)), a.view(np.int32))
    assert x.tobytes() == a.tobytes()
    with pytest.raises(ValueError):
        jnp.zeros((2, 3), jnp.int16).view(jnp.float32)
    with pytest.raises(ValueError):
        x.byteswap(inplace=True)


def test_array_placement_queries():
    x = jnp.arange(6.0).reshape(2, 3)
    assert x.platform() == "cpu" and x.is_ready() is True
    assert x.on_device_size_in_bytes() == 24
    y = x.clone()
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x))
    np.testing.assert_array_equal(np.asarray(x.to_device(jax.devices()[0])), np.asarray(x))
    with pytest.raises(NotImplementedError, match="flatten"):
        x.flat
    np.testing.assert_array_equal(np.asarray(x.argpartition(1)), np.argpartition(np.asarray(x), 1))


def test_dtype_queries():
    from microjax_rs import dtypes
    assert issubclass(dtypes.TypePromotionError, ValueError)
    assert dtypes.itemsize_bits(jnp.float32) == 32 and dtypes.itemsize_bits(jnp.bool_) == 8
    assert dtypes.itemsize_bits(jnp.bfloat16) == 16
    assert dtypes.scalar_type_of(1) is int and dtypes.scalar_type_of(True) is bool
    assert dtypes.scalar_type_of(jnp.float32(2)) is float
    assert dtypes.scalar_type_of(jnp.zeros(3, jnp.int8)) is int
    assert dtypes.scalar_type_of(jnp.zeros(2, jnp.bfloat16)) is float


# ---------------------------------------------------------------- reductions: where=, initial=, dtype=bool

@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean", "var", "std", "any", "all", "nansum",
                                  "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd"])
def test_reduction_where_must_be_boolean(name):
    # JAX 0.10.2's message, with the function's own name.
    x = jnp.zeros((10,))
    with pytest.raises(ValueError, match=f"jnp.{name}: where must be None or a boolean array"):
        getattr(jnp, name)(x, where=jnp.ones(10, dtype=int), initial=0.0) if name in (
            "max", "min", "nanmax", "nanmin") else getattr(jnp, name)(x, where=jnp.ones(10, dtype=int))
    assert float(jnp.sum(jnp.ones(3), where=True)) == 3.0


def test_reduction_initial_must_be_scalar():
    with pytest.raises(ValueError, match=r"initial value must be a scalar. Got array of shape \(1, 2, 3\)"):
        jnp.sum(jnp.ones((2, 3, 4)), axis=-1, initial=jnp.zeros((1, 2, 3)))
    assert float(jnp.sum(jnp.ones(3), initial=np.float32(2))) == 5.0


def test_bool_dtype_sum_and_prod_are_logical():
    b = np.array([[True, False], [False, False]])
    np.testing.assert_array_equal(np.asarray(jnp.sum(b, 0, dtype=bool)), [True, False])
    np.testing.assert_array_equal(np.asarray(jnp.prod(b, 0, dtype=bool)), [False, False])
    x = np.array([[0.5, 0.0], [2.0, 0.0]], np.float32)
    np.testing.assert_array_equal(np.asarray(jnp.prod(x, 0, dtype=bool)), np.prod(x, 0, dtype=bool))
    np.testing.assert_array_equal(np.asarray(jnp.sum(x, 1, dtype=bool)), np.sum(x, 1, dtype=bool))
    assert "reduce_and" in str(jax.make_jaxpr(lambda v: jnp.prod(v, 0, dtype=bool))(b))
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda v: jnp.sum(v, 0, dtype=bool))(b)), [True, False])


def test_var_std_without_degrees_of_freedom_are_nan():
    # JAX 0.10.2: ddof >= count gives NaN (not a negative or infinite value).
    for size in (0, 1, 2):
        x = jnp.arange(size)
        for f in (jnp.var, jnp.std):
            for extra in (0, 1, 2):
                assert np.isnan(float(f(x, ddof=size + extra)))
    assert float(jnp.var(jnp.arange(3.0), ddof=2)) == 2.0
    with pytest.raises(ValueError, match="ddof and correction can't be provided simultaneously"):
        jnp.var(jnp.arange(3.0), ddof=1, correction=1)
    assert float(jnp.var(jnp.arange(3.0), correction=1)) == 1.0


@pytest.mark.parametrize("axis", [(2, 0), (2, 0, 1), (2, 1, 0), (0, 1)])
def test_average_nd_weights(axis):
    rng = np.random.RandomState(0)
    a = rng.rand(2, 3, 4).astype(np.float32)
    w = rng.rand(*[a.shape[i] for i in axis]).astype(np.float32)
    expected = np.average(a, axis=axis, weights=w)
    np.testing.assert_allclose(np.asarray(jnp.average(a, axis=axis, weights=w)), expected, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jax.jit(lambda a, w: jnp.average(a, axis=axis, weights=w))(a, w)),
                               expected, rtol=1e-5)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_float_reductions_accumulate_in_float32(dtype):
    # JAX 0.10.2: without dtype= the reduction is sandwiched between two casts.
    x = jnp.ones(10, dtype)
    prims = lambda f: [e.primitive.name for e in jax.make_jaxpr(f)(x).eqns]
    for name in ("sum", "prod"):
        f = getattr(jnp, name)
        assert prims(f) == ["convert_element_type", f"reduce_{name}", "convert_element_type"]
        assert prims(lambda v: f(v, dtype=dtype)) == [f"reduce_{name}"]
    assert prims(jnp.mean) == ["convert_element_type", "reduce_sum", "div", "convert_element_type"]
    assert prims(lambda v: jnp.mean(v, dtype=dtype)) == ["reduce_sum", "div"]
    assert jnp.sum(x).dtype == np.dtype(x.dtype) and float(jnp.sum(x, initial=2.0, where=x > 0)) == 12.0


def test_var_with_precomputed_mean_matches_numpy():
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    for mean in (a.mean(1, keepdims=True), np.zeros((2, 1), np.float32)):
        np.testing.assert_allclose(np.asarray(jnp.var(a, 1, mean=mean)), np.var(a, 1, mean=mean), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(jnp.std(a, 1, mean=mean)), np.std(a, 1, mean=mean), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(jnp.nanvar(a, 1, mean=mean)), np.nanvar(a, 1, mean=mean), rtol=1e-6)
    with pytest.raises(TypeError):
        jnp.var(a, 1, mean=np.zeros(2))


@pytest.mark.parametrize("opname", ["quantile", "nanquantile", "percentile", "nanpercentile"])
@pytest.mark.parametrize("shape,axis", [((10,), 0), ((4, 3, 5), -1), ((2, 3, 4, 5), None), ((4, 3, 5), 0)])
def test_weighted_inverted_cdf_quantile_matches_numpy(opname, shape, axis):
    rng = np.random.RandomState(0)
    d = rng.randn(*shape).astype(np.float32)
    if "nan" in opname:
        d[rng.rand(*shape) < 0.1] = np.nan
    w = (rng.rand(*shape) * 2 + 1).astype(np.float32)
    q = np.array([0.25, 0.5, 0.75], np.float32) * (100 if "percentile" in opname else 1)
    for keepdims in (False, True):
        expected = getattr(np, opname)(d, q, axis=axis, weights=w, method="inverted_cdf", keepdims=keepdims)
        f = lambda d, q, w: getattr(jnp, opname)(d, q, axis=axis, weights=w, method="inverted_cdf",
                                                 keepdims=keepdims)
        np.testing.assert_allclose(np.asarray(f(d, q, w)), expected)
        np.testing.assert_allclose(np.asarray(jax.jit(f)(d, q, w)), expected)


def test_quantile_methods_and_weights_errors_as_jax():
    x = jnp.array([3.0, 1.0, 4.0, 1.0, 5.0])
    assert float(jnp.quantile(x, 0.3, method="inverted_cdf")) == 1.0
    # Recorded from JAX 0.10.2: a negative weight gives NaN; zero weights give the first value.
    assert np.isnan(float(jnp.quantile(x, 0.3, method="inverted_cdf", weights=-jnp.ones(5))))
    assert float(jnp.quantile(jnp.arange(6.0).reshape(2, 3), 0.5, method="inverted_cdf",
                              weights=jnp.zeros((2, 3)))) == 0.0
    with pytest.raises(ValueError, match="method can only be"):
        jnp.quantile(x, 0.3, method="hazen")
    with pytest.raises(NotImplementedError, match="Only method 'inverted_cdf' supports weights"):
        jnp.quantile(x, 0.3, weights=jnp.ones(5))
    with pytest.raises(ValueError, match="Weights shape must match 'a' shape when axis is None"):
        jnp.quantile(x, 0.3, method="inverted_cdf", weights=jnp.ones(4))


def test_nan_extremum_with_initial_and_duplicate_axes():
    # JAX 0.10.2 (and NumPy): with initial=, an all-NaN or empty slice gives `initial`.
    assert float(jnp.nanmax(np.array([np.nan, np.nan], np.float32), initial=0)) == 0.0
    assert float(jnp.nanmin(np.array([np.nan, 2.0], np.float32), initial=5)) == 2.0
    np.testing.assert_array_equal(np.asarray(jnp.nanmax(np.zeros((0, 4), np.float32), keepdims=True, initial=0)),
                                  [[0.0]])
    assert np.isnan(float(jnp.nanmax(np.array([np.nan, np.nan], np.float32))))
    with pytest.raises(ValueError, match=r"duplicate value in 'axis': \(0, 0\)"):
        jnp.sum(jnp.ones((2, 3)), axis=(0, 0))


def test_array_aval():
    x = jnp.ones((2, 3))
    assert x.aval == jax.core.ShapedArray((2, 3), jnp.float32)
    assert jnp.asarray(1.0).aval.weak_type and not x.aval.weak_type
