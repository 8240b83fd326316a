"""Argument forms of jnp functions that JAX accepts: array shifts in `roll`,
axis tuples in `size`, NumPy-array shapes, `ravel_multi_index` with
`order='F'` / `dtype=`, `take_along_axis` with `wrap_negative_indices` and
a default axis, `trapezoid` with an array `dx`, `delete` with an index
array of any shape, `bincount` of booleans and `argsort(dtype=)`. Expected
values are NumPy's or recorded from JAX 0.10.2."""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import errors


@pytest.mark.parametrize("shift, axis", [(np.array(1), None), (np.array(-2), 1), (np.array([1, 2]), (0, 1)),
                                         (jnp.array(2), 0), (np.array([1, 2]), 1)])
def test_roll_with_array_shifts(shift, axis):
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(np.asarray(jnp.roll(x, shift, axis=axis)), np.roll(x, np.asarray(shift), axis=axis))


def test_size_along_axes():
    a = jnp.zeros((2, 3, 4))
    assert jnp.size(a, (0, 2)) == 8 and jnp.size(a, np.int64(1)) == 3 and jnp.size(a, ()) == 1
    for axis in [(0, 0), (1, -2)]:
        with pytest.raises(ValueError, match="repeated axis"):
            jnp.size(a, axis)


def test_shapes_given_as_numpy_arrays():
    assert jnp.zeros(np.array((4, 5, 6), dtype=np.int32)).shape == (4, 5, 6)
    assert jnp.ones(np.array(4, dtype=np.int32)).shape == (4,)
    assert jnp.zeros(np.array([2, 3])).shape == (2, 3)


def test_ravel_multi_index_order_dtype_and_modes():
    idx = jnp.array([0, 1], jnp.int8)
    out = jnp.ravel_multi_index((idx, idx), (2, 3), mode="ignore")
    assert out.dtype == np.int8 and not out.weak_type
    np.testing.assert_array_equal(np.asarray(out), [0, 4])
    assert jnp.ravel_multi_index((idx, idx), (2, 3), mode="clip", dtype=jnp.int32).dtype == np.int32
    a, b = np.array([0, 1, -1]), np.array([2, 1, 4])
    for mode in ("wrap", "clip"):
        for order in ("C", "F"):
            np.testing.assert_array_equal(np.asarray(jnp.ravel_multi_index((a, b), (2, 3), mode=mode, order=order)),
                                          np.ravel_multi_index((a, b), (2, 3), mode=mode, order=order))
    f = jax.jit(lambda a, b: jnp.ravel_multi_index((a, b), (2, 3), mode="wrap", order="F"))
    np.testing.assert_array_equal(np.asarray(f(a, b)), np.ravel_multi_index((a, b), (2, 3), mode="wrap", order="F"))
    with pytest.raises(ValueError, match="invalid entry in coordinates array"):
        jnp.ravel_multi_index((a, b), (2, 3))
    with pytest.raises(errors.ConcretizationTypeError, match="jit-compiled with mode='raise'"):
        jax.jit(lambda a, b: jnp.ravel_multi_index((a, b), (2, 3)))(a, b)
    with pytest.raises(ValueError, match="invalid mode='bogus'"):
        jnp.ravel_multi_index((a, b), (2, 3), mode="bogus")
    with pytest.raises(ValueError, match="invalid order='X'"):
        jnp.ravel_multi_index((np.array([0]), np.array([1])), (2, 3), order="X")


# take_along_axis(arange(5.), [-1, 0, 4, 7, -7], axis=0, mode=..., wrap_negative_indices=...),
# recorded from JAX 0.10.2 (by default 'promise_in_bounds' does not wrap)
NAN = np.nan
TAKE = {
    (None, None): [4, 0, 4, NAN, NAN], (None, False): [NAN, 0, 4, NAN, NAN],
    ("clip", None): [4, 0, 4, 4, 0], ("clip", False): [0, 0, 4, 4, 0],
    ("promise_in_bounds", None): [0, 0, 4, 4, 0], ("promise_in_bounds", True): [4, 0, 4, 4, 0],
    ("fill", True): [4, 0, 4, NAN, NAN], ("one_hot", False): [0, 0, 4, 0, 0],
}


@pytest.mark.parametrize("mode, wrap", sorted(TAKE, key=str))
def test_take_along_axis_wrap_negative_indices(mode, wrap):
    x, i = jnp.arange(5.0), jnp.array([-1, 0, 4, 7, -7])
    out = jnp.take_along_axis(x, i, axis=0, mode=mode, wrap_negative_indices=wrap)
    np.testing.assert_array_equal(np.asarray(out), TAKE[mode, wrap])
    jitted = jax.jit(lambda x, i: jnp.take_along_axis(x, i, axis=0, mode=mode, wrap_negative_indices=wrap))
    np.testing.assert_array_equal(np.asarray(jitted(x, i)), TAKE[mode, wrap])


def test_take_along_axis_default_axis_is_last():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    i = np.array([[2], [0]])
    np.testing.assert_array_equal(np.asarray(jnp.take_along_axis(x, i)), np.take_along_axis(x, i, axis=-1))


TRAPEZOID_X = [((10,), None, 1.0, -1), ((3, 10), None, 2.0, -1), ((3, 10), None, 3.0, 0), ((10, 3), (10,), 1.0, -2),
               ((3, 10), (10,), 1.0, -1), ((3, 10), (3, 10), 1.0, -1), ((2, 3, 10), (3, 10), 1.0, -2)]
TRAPEZOID_DX = [((2, 3, 4, 10), (2, 3, 4, 1), -1), ((2, 3), (3,), 0), ((3, 4, 5), (4, 5), 0), ((3, 4, 5), (3, 5), 1),
                ((3, 4, 5), (5,), 1), ((2, 3, 4, 5), (2, 4, 5), 1), ((2, 3, 4, 5), (2, 1, 3, 5), 2),
                ((3, 4, 5), (2, 4, 5), 0), ((3, 4, 5), (3, 3, 5), 1)]


@pytest.mark.parametrize("yshape, xshape, dx, axis", TRAPEZOID_X)
def test_trapezoid_with_sample_points(yshape, xshape, dx, axis):
    rng = np.random.RandomState(0)
    y = rng.randn(*yshape).astype(np.float32)
    x = None if xshape is None else rng.randn(*xshape).astype(np.float32)
    np.testing.assert_allclose(np.asarray(jnp.trapezoid(y, x, dx=dx, axis=axis)), np.trapezoid(y, x, dx=dx, axis=axis),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("yshape, dxshape, axis", TRAPEZOID_DX)
def test_trapezoid_with_an_array_dx(yshape, dxshape, axis):
    rng = np.random.RandomState(1)
    y = rng.randn(*yshape).astype(np.float32)
    d = rng.randn(*dxshape).astype(np.float32)
    expected = np.trapezoid(y, dx=d, axis=axis)
    np.testing.assert_allclose(np.asarray(jnp.trapezoid(y, dx=d, axis=axis)), expected, rtol=1e-5, atol=1e-5)
    jitted = jax.jit(lambda y, d: jnp.trapezoid(y, dx=d, axis=axis))
    np.testing.assert_allclose(np.asarray(jitted(y, d)), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_delete_unique_indices_of_any_shape(axis):
    x = np.arange(24.0, dtype=np.float32).reshape(4, 6)
    idx = np.array([[0, 3], [2, 1]])
    np.testing.assert_array_equal(np.asarray(jnp.delete(x, idx, axis=axis, assume_unique_indices=True)),
                                  np.delete(x, idx, axis=axis))
    f = jax.jit(lambda x, i: jnp.delete(x, i, axis=axis, assume_unique_indices=True))
    np.testing.assert_array_equal(np.asarray(f(x, idx)), np.delete(x, idx, axis=axis))


def test_bincount_of_booleans():
    np.testing.assert_array_equal(np.asarray(jnp.bincount(jnp.array([True, False, True]))), [1, 2])
    np.testing.assert_array_equal(np.asarray(jnp.bincount(jnp.array([True, True]), length=3)), [0, 2, 0])


def test_argsort_dtype():
    out = jnp.argsort(jnp.array([3, 1, 2]), dtype=jnp.int16)
    assert out.dtype == np.int16
    np.testing.assert_array_equal(np.asarray(out), [1, 2, 0])
    out = jnp.argsort(jnp.array([3.0, 1, 2]), descending=True, dtype=jnp.uint8)
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(np.asarray(out), [0, 2, 1])
    out = jnp.argsort(jnp.array([3.0, 1.0]), dtype=jnp.float32)  # as JAX 0.10.2: any dtype
    assert out.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(out), [1, 0])


def test_boolean_cumulative_sums_and_products():
    x = jnp.array([True, False, True])
    # recorded from JAX 0.10.2: bool accumulates as a running OR / AND, booleans otherwise count as ints
    np.testing.assert_array_equal(np.asarray(jnp.cumsum(x)), [1, 1, 2])
    assert jnp.cumsum(x).dtype == np.int32
    out = jnp.cumsum(x, dtype=bool)
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(np.asarray(out), [True, True, True])
    np.testing.assert_array_equal(np.asarray(jnp.cumprod(x, dtype=bool)), [True, False, False])
    np.testing.assert_array_equal(np.asarray(jnp.cumulative_prod(x, dtype=bool)), [True, False, False])
    np.testing.assert_array_equal(np.asarray(jnp.cumsum(jnp.array([1, -1, 0]), dtype=bool)), [True, True, True])
    np.testing.assert_array_equal(np.asarray(jnp.cumprod(jnp.array([2, 0, 3]), dtype=bool)), [True, False, False])
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda x: jnp.cumsum(x, dtype=bool))(x)), [True, True, True])


def test_isscalar_of_zero_dimensional_numpy_arrays():
    # recorded from JAX 0.10.2
    values = [False, 1, 1.0, np.int32(5), np.array(16), None, [1], slice(4), (), np.array([0]), jnp.array(3),
              jnp.zeros(2), "a", 1j, np.array("a"), np.float32(2)]
    expected = [True, True, True, True, True, False, False, False, False, False, True, False, True, True, True, True]
    assert [jnp.isscalar(v) for v in values] == expected


def test_unravel_index_clamps_and_takes_traced_sizes():
    idx = np.array([[-5, 0, 3], [7, 11, 20]], np.int32)
    # recorded from JAX 0.10.2: negative indices count from the end, others clamp
    expected = ([[1, 0, 0], [1, 2, 2]], [[3, 0, 3], [3, 3, 3]])
    for out in (jnp.unravel_index(idx, (3, 4)), jax.jit(jnp.unravel_index)(idx, (3, 4))):
        np.testing.assert_array_equal(np.asarray(out[0]), expected[0])
        np.testing.assert_array_equal(np.asarray(out[1]), expected[1])
    out = jnp.unravel_index(jnp.array([0, 5, 255, 7], jnp.uint8), (2, 3))
    assert out[0].dtype == np.uint8
    np.testing.assert_array_equal(np.asarray(out[0]), [0, 1, 1, 1])
    np.testing.assert_array_equal(np.asarray(out[1]), [0, 2, 2, 2])
    np.testing.assert_array_equal(np.asarray(jnp.unravel_index(jnp.array(3), 5)[0]), 3)
    with pytest.raises(ValueError, match="shape should be a scalar or 1D sequence"):
        jnp.unravel_index(1, ((2, 3),))
